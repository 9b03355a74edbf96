//! The device thread: owns the scheduler and the ring, takes the
//! application's commands from a channel, asks the scheduler what to issue
//! whenever fewer than `max_in_flight` transfers are in flight, issues it
//! on io_uring and delivers each completion (queue, callback or future).
//!
//! With nothing in flight it blocks on the channel (until the scheduler's
//! idling deadline, if any; [`super::wait`]); with transfers in flight it
//! sleeps on the ring until a completion, the idling deadline or a
//! command, which rings the ring's doorbell ([`super::ring::Doorbell`]).
//! Either way an arrival is taken, and time-stamped, when it happens
//! (BFQ's idling and back-shifted timestamps are computed from these
//! stamps), and the thread wakes only when there is something to do: no
//! periodic polling. Every command and completion already there is taken
//! in one pass, and the buffers of these passes are reused, so a busy
//! device allocates nothing per pass.

// Issuing a transfer is `unsafe` (see `Ring::push`); the one call below
// keeps its buffer and file in `in_flight` until the completion is reaped.
#![allow(unsafe_code)]

use super::client::ClientStats;
use super::error::IoError;
use super::request::{Completion, RequestId};
use super::ring::Ring;
use super::shared::{Cmd, Pending, Route, Shared};
use super::wait::{receive, Wait};
use super::Callback;
use crate::request::{AddErrorKind, AppId, Nanos, Request, SECTOR_BYTES};
use crate::scheduler::{DiskScheduler, Dispatch};
use std::collections::{HashMap, VecDeque};
use std::os::unix::io::AsRawFd;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Scheduler sectors per target: each target's offsets map to their own
/// range, `slot << TARGET_SHIFT` onwards.
pub(crate) const TARGET_SHIFT: u32 = 44;

/// The scheduler's view of a pending request: its sectors, its client as
/// the application.
pub(crate) fn sched_request(p: &Pending) -> Request {
    let first = p.req.offset / SECTOR_BYTES;
    let end = (p.req.offset + u64::from(p.req.len)).div_ceil(SECTOR_BYTES);
    Request {
        tag: p.id,
        app: AppId(p.req.client.slot),
        sector: (u64::from(p.target.id.slot) << TARGET_SHIFT) + first,
        len: (end - first) as u32,
        dir: p.req.dir,
        arrival: 0,
        sync: p.req.sync,
    }
}

struct InFlight {
    req: Request,
    pending: Pending,
}

pub(crate) struct Device {
    pub(crate) sched: Box<dyn DiskScheduler + Send>,
    pub(crate) ring: Ring,
    pub(crate) shared: Arc<Shared>,
    pub(crate) callback: Option<Callback>,
    pub(crate) max_in_flight: usize,
    pub(crate) epoch: Instant,
    /// Requests the scheduler holds, by id.
    pub(crate) waiting: HashMap<u64, Pending>,
    /// Per client slot: synchronous requests behind the one it has in the
    /// scheduler, in submission order.
    pub(crate) held: HashMap<u32, VecDeque<Pending>>,
    /// Per client slot: the id of its synchronous request in the scheduler.
    pub(crate) sync_in_sched: HashMap<u32, u64>,
    in_flight: HashMap<u64, InFlight>,
    /// The completions of one reap (kept to reuse its memory).
    reaped: Vec<(u64, i32)>,
}

impl Device {
    pub(crate) fn new(
        sched: Box<dyn DiskScheduler + Send>,
        ring: Ring,
        shared: Arc<Shared>,
        callback: Option<Callback>,
        max_in_flight: usize,
    ) -> Self {
        Self {
            sched,
            ring,
            shared,
            callback,
            max_in_flight,
            epoch: Instant::now(),
            waiting: HashMap::new(),
            held: HashMap::new(),
            sync_in_sched: HashMap::new(),
            in_flight: HashMap::new(),
            reaped: Vec::new(),
        }
    }

    fn now(&self) -> Nanos {
        self.epoch.elapsed().as_nanos() as Nanos
    }

    /// Finishes `p` with `result`: statistics, the outstanding count, then
    /// its completion to the queue, the callback or its future.
    fn deliver(&mut self, p: Pending, result: Result<(), IoError>) {
        let latency = p.submitted.elapsed();
        let Pending { id, req, route, .. } = p;
        let c = Completion {
            id: RequestId(id),
            user_data: req.user_data,
            client: req.client,
            target: req.target,
            offset: req.offset,
            len: req.len,
            dir: req.dir,
            sync: req.sync,
            result,
            buf: req.buf,
            latency,
        };
        let mut st = self.shared.lock();
        st.outstanding -= 1;
        if let Some(slot) = st.clients.get_mut(c.client.slot as usize) {
            if slot.generation == c.client.generation {
                count(&mut slot.stats, &c);
            }
        }
        match route {
            Route::Future(f) => {
                drop(st);
                f.complete(c);
            }
            Route::Queue => {
                st.queue_pending -= 1;
                match &mut self.callback {
                    Some(cb) => {
                        drop(st);
                        cb(c);
                    }
                    None => {
                        st.queue.push_back(c);
                        drop(st);
                        self.shared.cv.notify_all();
                    }
                }
            }
        }
    }

    /// Takes an accepted request: a synchronous one waits behind its
    /// client's synchronous request already in the scheduler, if any.
    fn accept(&mut self, p: Pending) {
        let slot = p.req.client.slot;
        if p.req.sync && self.sync_in_sched.contains_key(&slot) {
            self.held.entry(slot).or_default().push_back(p);
        } else {
            self.schedule(p);
        }
    }

    /// Hands `p` to the scheduler.
    fn schedule(&mut self, p: Pending) {
        let r = sched_request(&p);
        match self.sched.add_request(self.now(), r) {
            Ok(()) => {
                if p.req.sync {
                    self.sync_in_sched.insert(p.req.client.slot, p.id);
                }
                self.waiting.insert(p.id, p);
            }
            // Submission checked the client, the length and the capacity
            // (`max_queued` is at most every scheduler's own bound), so an
            // unknown client means it was removed meanwhile; anything else
            // is still answered, never dropped.
            Err(e) if e.kind == AddErrorKind::UnknownApp => {
                self.deliver(p, Err(IoError::Cancelled));
            }
            Err(e) => self.deliver(p, Err(IoError::Refused(e.kind))),
        }
    }

    /// Issues the dispatched `req`; the client's next synchronous request
    /// joins the scheduler.
    fn start(&mut self, req: Request) {
        let Some(mut p) = self.waiting.remove(&req.tag) else {
            // Not ours (cannot happen): tell the scheduler it is done.
            self.sched.complete(self.now(), &req);
            return;
        };
        let slot = p.req.client.slot;
        if p.req.sync && self.sync_in_sched.get(&slot) == Some(&p.id) {
            self.sync_in_sched.remove(&slot);
            let next = self.held.get_mut(&slot).and_then(|q| q.pop_front());
            if let Some(n) = next {
                self.schedule(n);
            }
        }
        if let Some(s) = self.shared.lock().client(p.req.client) {
            s.stats.dispatched += 1;
        }
        let fd = p.target.file.as_raw_fd();
        let (dir, len, offset, id) = (p.req.dir, p.req.len, p.req.offset, p.id);
        let ptr = p.req.buf.as_mut_ptr();
        // SAFETY: the buffer's heap block and the target's file are owned
        // by `p`, which moves into `in_flight` (moving it does not move the
        // heap block) and leaves it only when the completion tagged `id` is
        // reaped; the device drains every transfer before it exits.
        let pushed = unsafe { self.ring.push(fd, dir, ptr, len, offset, id) };
        match pushed {
            Ok(()) => {
                self.in_flight.insert(id, InFlight { req, pending: p });
            }
            Err(e) => {
                self.sched.complete(self.now(), &req);
                self.deliver(p, Err(IoError::Os(e)));
            }
        }
    }

    /// Delivers every completion the kernel has posted.
    fn reap(&mut self) {
        let mut reaped = std::mem::take(&mut self.reaped);
        self.ring.reap(&mut reaped);
        for (id, res) in reaped.drain(..) {
            let Some(f) = self.in_flight.remove(&id) else {
                continue;
            };
            self.sched.complete(self.now(), &f.req);
            let len = f.pending.req.len;
            let result = if res < 0 {
                Err(IoError::Os(std::io::Error::from_raw_os_error(-res)))
            } else if res as u32 != len {
                Err(IoError::Short {
                    transferred: res as u32,
                    len,
                })
            } else {
                Ok(())
            };
            self.deliver(f.pending, result);
        }
        self.reaped = reaped;
    }

    /// Removes a client from the scheduler: its queued and held requests
    /// complete as cancelled; those in flight complete normally.
    fn remove_client(&mut self, slot: u32) {
        let queued = self.sched.remove_app(AppId(slot)).unwrap_or_default();
        self.sync_in_sched.remove(&slot);
        let mut cancelled: Vec<Pending> = queued
            .iter()
            .filter_map(|r| self.waiting.remove(&r.tag))
            .collect();
        cancelled.extend(self.held.remove(&slot).unwrap_or_default());
        cancelled.sort_by_key(|p| p.id);
        for p in cancelled {
            self.deliver(p, Err(IoError::Cancelled));
        }
    }

    /// Runs one command (a shutdown is [`Device::run`]'s).
    fn command(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::Shutdown => {}
            Cmd::Submit(p) => self.accept(p),
            Cmd::AddClient { slot, spec, reply } => {
                let _ = reply.send(self.sched.add_app(AppId(slot), spec));
            }
            Cmd::RemoveClient { slot, reply } => {
                self.remove_client(slot);
                let _ = reply.send(());
            }
            Cmd::NonRotational(nonrot) => self.sched.set_nonrotational(nonrot),
            Cmd::Configure(f) => f(self.sched.as_mut()),
        }
    }

    /// Fills the ring up to `max_in_flight`; the scheduler's idling
    /// deadline, if it asked to idle.
    fn dispatch(&mut self) -> Option<Nanos> {
        while self.in_flight.len() < self.max_in_flight {
            match self.sched.dispatch(self.now()) {
                Dispatch::Serve(req) => self.start(req),
                Dispatch::Idle(until) => return until,
                Dispatch::Empty => return None,
            }
        }
        None
    }

    /// The device thread's loop, until shutdown (or a failed ring); then
    /// every request is answered.
    pub(crate) fn run(mut self, rx: Receiver<Cmd>) {
        let mut wake: Option<Nanos> = None;
        let mut cmds: Vec<Cmd> = Vec::new();
        loop {
            let busy = !self.in_flight.is_empty();
            let wait = Wait::for_commands(busy, wake, self.now(), self.sched.queued());
            receive(&rx, wait, &mut cmds, || Cmd::Shutdown);
            if self.commands(&mut cmds) {
                break;
            }
            self.reap();
            wake = self.dispatch();
            if !self.in_flight.is_empty() {
                let wait = wake.map(|w| Duration::from_nanos(w.saturating_sub(self.now()).max(1)));
                let came = || match rx.try_recv() {
                    Ok(c) => {
                        cmds.push(c);
                        true
                    }
                    Err(_) => false,
                };
                if self.ring.sleep(wait, came).is_err() {
                    break;
                }
                self.reap();
            }
        }
        self.stop(&rx, cmds);
    }

    /// Runs the commands in `cmds` up to a shutdown, if there is one:
    /// then `true`, the shutdown and what follows it left in `cmds` for
    /// [`Device::stop`].
    fn commands(&mut self, cmds: &mut Vec<Cmd>) -> bool {
        let stop = cmds.iter().position(|c| matches!(c, Cmd::Shutdown));
        for cmd in cmds.drain(..stop.unwrap_or(cmds.len())) {
            self.command(cmd);
        }
        stop.is_some()
    }

    /// Answers everything: transfers in flight complete, then whatever is
    /// queued, held or still in the channel is answered as shut down.
    fn stop(mut self, rx: &Receiver<Cmd>, unread: Vec<Cmd>) {
        // Nothing more is accepted from here on.
        self.shared.lock().tx = None;
        while !self.in_flight.is_empty() {
            if self.ring.submit_and_wait(1, None).is_err() {
                // A failed ring may still own the buffers: keep (leak) them
                // rather than free memory the kernel might write to.
                let lost: Vec<InFlight> = self.in_flight.drain().map(|(_, f)| f).collect();
                for mut f in lost {
                    let placeholder = super::buf::AlignedBuf::placeholder();
                    std::mem::forget(std::mem::replace(&mut f.pending.req.buf, placeholder));
                    let e =
                        std::io::Error::other("io_uring failed: the transfer's outcome is unknown");
                    self.deliver(f.pending, Err(IoError::Os(e)));
                }
                break;
            }
            self.reap();
        }
        let mut rest: Vec<Pending> = self
            .sched
            .drain()
            .iter()
            .filter_map(|r| self.waiting.remove(&r.tag))
            .collect();
        rest.extend(self.held.drain().flat_map(|(_, q)| q));
        for cmd in unread.into_iter().chain(rx.try_iter()) {
            match cmd {
                Cmd::Submit(p) => rest.push(p),
                // Dropping a reply answers its caller: the engine stopped.
                Cmd::AddClient { .. }
                | Cmd::RemoveClient { .. }
                | Cmd::NonRotational(_)
                | Cmd::Configure(_)
                | Cmd::Shutdown => {}
            }
        }
        rest.sort_by_key(|p| p.id);
        for p in rest {
            self.deliver(p, Err(IoError::ShutDown));
        }
        self.shared.cv.notify_all();
    }
}

/// Adds a completion to its client's statistics.
fn count(s: &mut ClientStats, c: &Completion) {
    match &c.result {
        Ok(()) => {
            s.completed += 1;
            s.bytes += u64::from(c.len);
            let ns = c.latency.as_nanos().min(u128::from(u64::MAX)) as u64;
            s.latency_sum_ns = s.latency_sum_ns.saturating_add(ns);
            s.latency_max_ns = s.latency_max_ns.max(ns);
        }
        Err(IoError::Cancelled | IoError::ShutDown) => s.cancelled += 1,
        Err(_) => s.failed += 1,
    }
}
