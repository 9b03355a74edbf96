//! The scheduler's side of the engine ([`Core`]: the scheduler, the ring,
//! the requests it holds, those in flight) and the device thread that
//! drives it when requests reach it through a channel
//! ([`super::Submission::DeviceThread`]): the thread takes the
//! application's commands, asks the scheduler what to issue whenever fewer
//! than `max_in_flight` transfers are in flight (counting 128 KiB of a
//! transfer as one), issues it on io_uring — a request the scheduler
//! dispatches in pieces as one transfer per piece, completed once after
//! its last ([`crate::split`]) — and
//! delivers each completion (queue, callback or future). [`super::inline`]
//! drives the same core from the submitting threads.
//!
//! The core only collects what finished ([`Core::done`]); its holder
//! delivers once it lets the core go ([`super::deliver`]).
//!
//! With nothing in flight the device thread blocks on the channel (until the scheduler's
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

use super::deliver::{Deliverer, Finished};
use super::error::IoError;
use super::ring::Ring;
use super::shared::{Cmd, Pending, Shared};
use super::wait::{receive, Wait};
use crate::request::{AddErrorKind, AppId, Nanos, Request, SECTOR_BYTES};
use crate::scheduler::{DiskScheduler, Dispatch};
use crate::split::{Assembly, Failed, Piece};
use std::collections::{HashMap, VecDeque};
use std::os::unix::io::AsRawFd;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
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

/// The size `max_in_flight` counts transfers in: 128 KiB, the largest
/// request of an engine at the default `max_request`.
pub(crate) const UNIT_BYTES: u32 = super::config::DEFAULT_MAX_REQUEST;

/// What a transfer of `len` bytes counts against `max_in_flight`: one per
/// [`UNIT_BYTES`] started. Every transfer of an engine at the default
/// `max_request` counts one; a 1 MiB one counts 8, so the bytes a request
/// arriving after a quiet spell may find on the device stay
/// `max_in_flight` × 128 KiB whatever the transfers' size.
fn units(len: u32) -> usize {
    len.div_ceil(UNIT_BYTES) as usize
}

/// A transfer on the ring: one piece of request `id` (the whole request
/// when the scheduler dispatched it whole).
struct InFlight {
    /// The piece as the scheduler dispatched it.
    req: Request,
    id: u64,
    piece: Piece,
}

/// A request the scheduler has dispatched (some or all of it): it
/// completes once, when its last piece does ([`crate::split`]).
struct Issued {
    pending: Pending,
    asm: Assembly<IoError>,
}

/// The scheduler and what it holds; one thread at a time drives it.
pub(crate) struct Core {
    pub(crate) sched: Box<dyn DiskScheduler + Send>,
    pub(crate) ring: Ring,
    pub(crate) shared: Arc<Shared>,
    pub(crate) max_in_flight: usize,
    pub(crate) epoch: Instant,
    /// Requests the scheduler holds, by id.
    pub(crate) waiting: HashMap<u64, Pending>,
    /// Per client slot: synchronous requests behind the one it has in the
    /// scheduler, in submission order.
    pub(crate) held: HashMap<u32, VecDeque<Pending>>,
    /// Per client slot: the id of its synchronous request in the scheduler.
    pub(crate) sync_in_sched: HashMap<u32, u64>,
    /// Transfers on the ring, by their ring tag.
    in_flight: HashMap<u64, InFlight>,
    /// What they count against `max_in_flight`: a transfer counts one per
    /// [`UNIT_BYTES`] started (see [`units`]).
    units: usize,
    /// The next ring tag (a request dispatched in pieces has a transfer,
    /// and a tag, per piece).
    next_tag: u64,
    /// Requests dispatched, some or all of their pieces, by id.
    issued: HashMap<u64, Issued>,
    /// The completions of one reap (kept to reuse its memory).
    reaped: Vec<(u64, i32)>,
    /// Finished requests, for the core's holder to deliver once it has let
    /// the core go.
    pub(crate) done: Vec<Finished>,
    /// Answers to send once `done` has been delivered (a removal returns
    /// after its cancelled requests are delivered).
    pub(crate) after_delivery: Vec<Sender<()>>,
    /// The scheduler's idling deadline, from the last dispatch.
    pub(crate) wake: Option<Nanos>,
    /// Passes in a row (inline submission) whose transfers all completed
    /// within them; the idle engine thread watches the ring below
    /// [`super::inline::WITHIN`].
    pub(crate) within: u32,
    /// Completions reaped by the inline side, in all.
    pub(crate) reaped_total: u64,
    /// Of those, reaped by threads in `Engine::wait`.
    pub(crate) waits_reaped: u64,
    /// Threads in an inline engine's `Engine::wait` watching the ring
    /// (the engine thread then need not).
    pub(crate) ring_watchers: u32,
    /// What the engine thread sleeps for (inline submission).
    pub(crate) sleeper: super::inline::Sleeper,
}

impl Core {
    pub(crate) fn new(
        sched: Box<dyn DiskScheduler + Send>,
        ring: Ring,
        shared: Arc<Shared>,
        max_in_flight: usize,
    ) -> Self {
        Self {
            sched,
            ring,
            shared,
            max_in_flight,
            epoch: Instant::now(),
            waiting: HashMap::new(),
            held: HashMap::new(),
            sync_in_sched: HashMap::new(),
            in_flight: HashMap::new(),
            units: 0,
            next_tag: 0,
            issued: HashMap::new(),
            reaped: Vec::new(),
            done: Vec::new(),
            after_delivery: Vec::new(),
            wake: None,
            within: 0,
            reaped_total: 0,
            waits_reaped: 0,
            ring_watchers: 0,
            sleeper: Default::default(),
        }
    }

    pub(crate) fn now(&self) -> Nanos {
        self.epoch.elapsed().as_nanos() as Nanos
    }

    /// Transfers in flight.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Transfers in flight that no thread in `Engine::wait` watches for
    /// (all of them, or none while one watches the ring).
    pub(crate) fn unwatched(&self) -> usize {
        if self.ring_watchers > 0 {
            0
        } else {
            self.in_flight.len()
        }
    }

    /// `p` finished with `result`: delivered by the core's holder later.
    fn finish(&mut self, p: Pending, result: Result<(), IoError>) {
        self.done.push((p, result));
    }

    /// Takes an accepted request: a synchronous one waits behind its
    /// client's synchronous request already in the scheduler, if any.
    pub(crate) fn accept(&mut self, p: Pending) {
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
                self.finish(p, Err(IoError::Cancelled));
            }
            Err(e) => self.finish(p, Err(IoError::Refused(e.kind))),
        }
    }

    /// Issues the dispatched `req` (a request, or a piece of one); once
    /// all of the request is dispatched, its client's next synchronous
    /// request joins the scheduler (so a client's synchronous requests
    /// leave the scheduler in order, each whole before the next).
    fn start(&mut self, req: Request) {
        let id = req.tag;
        if let Some(mut p) = self.waiting.remove(&id) {
            p.dispatched = Some(Instant::now());
            if let Some(s) = self.shared.lock().client(p.req.client) {
                s.stats.dispatched += 1;
            }
            let asm = Assembly::new(p.req.offset, p.req.len);
            self.issued.insert(id, Issued { pending: p, asm });
        }
        let Some(is) = self.issued.get_mut(&id) else {
            // Not ours (cannot happen): tell the scheduler it is done.
            self.sched.complete(self.now(), &req);
            return;
        };
        let base = u64::from(is.pending.target.id.slot) << TARGET_SHIFT;
        let piece = is.asm.piece(req.sector - base, req.len);
        let slot = is.pending.req.client.slot;
        let next_sync = is.asm.all_dispatched()
            && is.pending.req.sync
            && self.sync_in_sched.get(&slot) == Some(&id);
        let fd = is.pending.target.file.as_raw_fd();
        let dir = is.pending.req.dir;
        let ptr = is.pending.req.buf.as_mut_ptr();
        if next_sync {
            self.sync_in_sched.remove(&slot);
            let next = self.held.get_mut(&slot).and_then(|q| q.pop_front());
            if let Some(n) = next {
                self.schedule(n);
            }
        }
        let Some(piece) = piece else {
            // Its request failed already: the piece is not issued.
            self.sched.complete(self.now(), &req);
            self.finish_if_done(id);
            return;
        };
        let tag = self.next_tag;
        self.next_tag += 1;
        // SAFETY: the piece lies within the buffer (`Assembly::piece`),
        // whose heap block and the target's file are owned by the request,
        // which stays in `issued` (moving it does not move the heap block)
        // until its last piece in flight is reaped; the core drains every
        // transfer before the engine stops.
        let pushed = unsafe {
            let at = ptr.add(piece.buf_offset as usize);
            self.ring.push(fd, dir, at, piece.len, piece.offset, tag)
        };
        match pushed {
            Ok(()) => {
                self.units += units(piece.len);
                self.in_flight.insert(tag, InFlight { req, id, piece });
            }
            Err(e) => {
                self.sched.complete(self.now(), &req);
                if let Some(is) = self.issued.get_mut(&id) {
                    is.asm.not_issued(IoError::Os(e));
                }
                self.finish_if_done(id);
            }
        }
    }

    /// Request `id` completes if every piece of it is dispatched and none
    /// is in flight.
    fn finish_if_done(&mut self, id: u64) {
        if !self.issued.get(&id).is_some_and(|is| is.asm.finished()) {
            return;
        }
        let Some(is) = self.issued.remove(&id) else {
            return;
        };
        let result = match is.asm.result() {
            Ok(_) => Ok(()),
            Err(Failed::Error(e)) => Err(e),
            Err(Failed::Short { transferred, len }) => Err(IoError::Short { transferred, len }),
        };
        self.finish(is.pending, result);
    }

    /// Takes every completion the kernel has posted; how many.
    pub(crate) fn reap(&mut self) -> usize {
        let mut reaped = std::mem::take(&mut self.reaped);
        self.ring.reap(&mut reaped);
        let n = reaped.len();
        for (tag, res) in reaped.drain(..) {
            let Some(f) = self.in_flight.remove(&tag) else {
                continue;
            };
            self.units -= units(f.piece.len);
            self.sched.complete(self.now(), &f.req);
            if let Some(is) = self.issued.get_mut(&f.id) {
                let result = if res < 0 {
                    Err(IoError::Os(std::io::Error::from_raw_os_error(-res)))
                } else {
                    Ok(res as u32)
                };
                is.asm.complete(&f.piece, result);
            }
            self.finish_if_done(f.id);
        }
        self.reaped = reaped;
        n
    }

    /// The scheduler gave back `queued` undispatched: whole requests
    /// (returned) and the rests of requests dispatched in part, which
    /// fail with `why` once their pieces in flight complete.
    fn give_back(&mut self, queued: &[Request], why: fn() -> IoError) -> Vec<Pending> {
        let mut whole = Vec::new();
        for r in queued {
            if let Some(p) = self.waiting.remove(&r.tag) {
                whole.push(p);
            } else if let Some(is) = self.issued.get_mut(&r.tag) {
                is.asm.abandon(why());
                self.finish_if_done(r.tag);
            }
        }
        whole
    }

    /// Removes a client from the scheduler: its queued and held requests
    /// complete as cancelled; those in flight complete normally.
    fn remove_client(&mut self, slot: u32) {
        let queued = self.sched.remove_app(AppId(slot)).unwrap_or_default();
        self.sync_in_sched.remove(&slot);
        let mut cancelled = self.give_back(&queued, || IoError::Cancelled);
        cancelled.extend(self.held.remove(&slot).unwrap_or_default());
        cancelled.sort_by_key(|p| p.id);
        for p in cancelled {
            self.finish(p, Err(IoError::Cancelled));
        }
    }

    /// Runs one command (a shutdown is the driver's).
    pub(crate) fn command(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::Shutdown => {}
            Cmd::Submit(p) => self.accept(p),
            Cmd::AddClient { slot, spec, reply } => {
                let _ = reply.send(self.sched.add_app(AppId(slot), spec));
            }
            Cmd::RemoveClient { slot, reply } => {
                self.remove_client(slot);
                self.after_delivery.push(reply);
            }
            Cmd::NonRotational(nonrot) => self.sched.set_nonrotational(nonrot),
            Cmd::Configure(f) => f(self.sched.as_mut()),
        }
    }

    /// Runs the commands in `cmds` up to a shutdown, if there is one:
    /// then `true`, the shutdown and what follows it left in `cmds` for
    /// [`Core::stop`].
    pub(crate) fn commands(&mut self, cmds: &mut Vec<Cmd>) -> bool {
        let stop = cmds.iter().position(|c| matches!(c, Cmd::Shutdown));
        for cmd in cmds.drain(..stop.unwrap_or(cmds.len())) {
            self.command(cmd);
        }
        stop.is_some()
    }

    /// Fills the ring up to `max_in_flight` (the transfers pushed, not yet
    /// submitted); sets [`Core::wake`] to the scheduler's idling deadline,
    /// if it asked to idle. How many it started.
    pub(crate) fn dispatch(&mut self) -> usize {
        let mut started = 0;
        self.wake = None;
        while self.units < self.max_in_flight {
            match self.sched.dispatch(self.now()) {
                Dispatch::Serve(req) => {
                    self.start(req);
                    started += 1;
                }
                Dispatch::Idle(until) => {
                    self.wake = until;
                    break;
                }
                Dispatch::Empty => break,
            }
        }
        started
    }

    /// Answers everything: transfers in flight complete, then whatever is
    /// queued, held or still in the channel is answered as shut down.
    pub(crate) fn stop(&mut self, rx: &Receiver<Cmd>, unread: Vec<Cmd>) {
        // Nothing more is accepted from here on.
        self.shared.lock().tx = None;
        while !self.in_flight.is_empty() {
            if self.ring.submit_and_wait(1, None).is_err() {
                // A failed ring may still own the buffers: keep (leak) them
                // rather than free memory the kernel might write to.
                let lost: Vec<InFlight> = self.in_flight.drain().map(|(_, f)| f).collect();
                for f in lost {
                    let Some(mut is) = self.issued.remove(&f.id) else {
                        continue;
                    };
                    let placeholder = super::buf::AlignedBuf::placeholder();
                    std::mem::forget(std::mem::replace(&mut is.pending.req.buf, placeholder));
                    let e =
                        std::io::Error::other("io_uring failed: the transfer's outcome is unknown");
                    self.finish(is.pending, Err(IoError::Os(e)));
                }
                break;
            }
            self.reap();
        }
        let drained = self.sched.drain();
        let mut rest = self.give_back(&drained, || IoError::ShutDown);
        // Nothing is left in flight: whatever was dispatched in part ends.
        let parts: Vec<u64> = self.issued.keys().copied().collect();
        for id in parts {
            if let Some(is) = self.issued.get_mut(&id) {
                is.asm.abandon(IoError::ShutDown);
            }
            self.finish_if_done(id);
        }
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
            self.finish(p, Err(IoError::ShutDown));
        }
    }
}

/// Locks a core; a panic elsewhere while it was held leaves it consistent
/// enough to drain, so poisoning is ignored.
pub(crate) fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    core.lock().unwrap_or_else(|e| e.into_inner())
}

/// Posts what the core collected (and the answers waiting for it) to the
/// outbox, in the core's order ([`super::deliver`]); the caller flushes
/// it once it has let the core go.
pub(crate) fn post(core: &mut Core, deliverer: &Deliverer) {
    let mut done = std::mem::take(&mut core.done);
    let mut replies = std::mem::take(&mut core.after_delivery);
    deliverer.post(&mut done, &mut replies);
    core.done = done;
    core.after_delivery = replies;
}

/// Posts and delivers at once: for the device thread, the core's only
/// holder.
fn deliver(core: &mut Core, deliverer: &Deliverer) {
    post(core, deliverer);
    deliverer.flush();
}

/// The device thread of [`super::Submission::DeviceThread`]: the only
/// holder of the core, from its start to its end.
pub(crate) struct Device {
    pub(crate) core: Arc<Mutex<Core>>,
    pub(crate) deliverer: Arc<Deliverer>,
}

impl Device {
    /// The device thread's loop, until shutdown (or a failed ring); then
    /// every request is answered.
    pub(crate) fn run(self, rx: Receiver<Cmd>) {
        let mut core = lock(&self.core);
        let core = &mut *core;
        let mut cmds: Vec<Cmd> = Vec::new();
        loop {
            let busy = core.in_flight() > 0;
            let wait = Wait::for_commands(busy, core.wake, core.now(), core.sched.queued());
            receive(&rx, wait, &mut cmds, || Cmd::Shutdown);
            if core.commands(&mut cmds) {
                break;
            }
            core.reap();
            core.dispatch();
            deliver(core, &self.deliverer);
            if core.in_flight() > 0 {
                let wait = core
                    .wake
                    .map(|w| Duration::from_nanos(w.saturating_sub(core.now()).max(1)));
                let came = || match rx.try_recv() {
                    Ok(c) => {
                        cmds.push(c);
                        true
                    }
                    Err(_) => false,
                };
                if core.ring.sleep(wait, came).is_err() {
                    break;
                }
                core.reap();
                deliver(core, &self.deliverer);
            }
        }
        core.stop(&rx, cmds);
        deliver(core, &self.deliverer);
        self.deliverer.shutdown_notify();
    }
}
