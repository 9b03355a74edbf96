//! An embeddable I/O scheduler: a storage engine (a database, an object
//! store, a userspace block service) schedules its own reads and writes
//! with BFQ — or any disk scheduler of the [`crate::catalogue`] — and
//! issues them on io_uring, `O_DIRECT` by default, with at most
//! `max_in_flight` on the device, so the device's own scheduler can be
//! `none`. The user guide is `docs/io-scheduler.md`.
//!
//! ```no_run
//! use fairway_disk::engine::{AlignedBuf, ClientOptions, Engine, EngineConfig, IoRequest, TargetOptions};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let data = engine.open("/var/lib/db/data.0", TargetOptions::default())?;
//! let query = engine.add_client(ClientOptions::weight(2))?;
//! let compaction = engine.add_client(ClientOptions::weight(1))?;
//! engine.submit(IoRequest::read(query, data, 0, AlignedBuf::new(16384)?))?;
//! engine.submit(IoRequest::read(compaction, data, 1 << 20, AlignedBuf::new(131072)?))?;
//! let mut done = Vec::new();
//! while engine.wait(&mut done, None) > 0 {}
//! for c in &done {
//!     println!("{} at {}: {:?} in {:?}", c.client, c.offset, c.result, c.latency);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Threading model
//!
//! Each [`Engine`] runs one device thread. By default
//! ([`Submission::DeviceThread`]) it owns the scheduler and the ring;
//! application threads call the engine (`&self`, so an `Arc<Engine>` is
//! shared among them) and the calls reach the device thread through a
//! channel. A caller-driven loop (`run_once`) was rejected because BFQ's
//! decisions depend on time: device idling waits T_wait for a synchronous
//! client's next request and gives up at that deadline, T_max ends a slow
//! client's turn, and arrivals must be time-stamped when they happen.
//! Driven by the caller, all of these would depend on how often the
//! application happens to call in, and an application blocked elsewhere
//! would stall every other client's I/O. The device thread blocks on the
//! channel when nothing is in flight and on the ring when something is;
//! a command sent while it sleeps on the ring rings the ring's doorbell (an
//! eventfd the ring polls), so it wakes only for work, never to poll. It
//! costs one thread per device.
//!
//! With [`Submission::Inline`] the submitting thread runs the scheduler
//! and issues what it dispatches itself, under a short lock, and whichever
//! thread is in the engine reaps and delivers completions: no thread
//! hand-off on the way in, none on the way out when a transfer completes
//! while a submitter is inside. The device thread stays for what needs a
//! thread when no submitter is there: the idling deadline, transfers left
//! in flight, and the other commands (see `inline.rs`).
//!
//! # Requests and completions
//!
//! [`Engine::submit`] checks a request completely (client, target,
//! alignment, length, capacity) and either refuses it with a
//! [`SubmitError`] that hands its buffer back, or accepts it: then exactly
//! one [`Completion`] follows, successful or carrying an [`IoError`]
//! (device error, short transfer, cancelled by the client's removal, or
//! the engine's shutdown). Completions are collected with [`Engine::poll`]
//! / [`Engine::wait`], or handed to a callback ([`Engine::with_callback`]),
//! or resolve a future per request ([`Engine::submit_future`]).

mod buf;
mod client;
mod config;
mod deliver;
mod device;
mod error;
mod future;
mod group;
mod huge_bufs;
mod inline;
mod mapping;
mod request;
pub(crate) mod ring;
mod shared;
mod target;
pub(crate) mod wait;

pub use buf::{AlignedBuf, BUF_ALIGN, MAX_BUF_LEN, MAX_LARGE_BUF_LEN};
pub use client::{ClientId, ClientOptions, ClientStats, GroupId, IoClass, Rate};
pub use config::{
    EngineConfig, Submission, DEFAULT_MAX_REQUEST, MAX_CLIENTS, MAX_IN_FLIGHT, MAX_QUEUED,
    MAX_REQUEST_LIMIT,
};
pub use error::{EngineError, IoError, SubmitError, SubmitErrorKind};
pub use future::IoFuture;
pub use group::GroupOptions;
pub use huge_bufs::{huge_page_bufs, MAX_HUGE_BUFS, MAX_HUGE_BYTES};
pub use mapping::HUGE_PAGE;
pub use request::{Completion, IoRequest, RequestId};
pub use target::{TargetId, TargetOptions};

use crate::request::{Direction, SECTOR_BYTES};
use crate::scheduler::{AppSpec, MAX_WEIGHT};
use deliver::Deliverer;
use device::{Core, Device, TARGET_SHIFT};
use future::FutureSlot;
use inline::Inline;
use shared::{ClientSlot, Cmd, Pending, Route, Shared, SlotState, TargetSlot};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use target::Target;

/// Most targets open at once: each gets 2^44 scheduler sectors.
pub const MAX_TARGETS: u32 = 1 << 20;
/// Largest byte offset a request may reach (2^53 bytes = 8 PiB): a
/// target's range of scheduler sectors, 2^44 sectors of 512 bytes.
pub const MAX_OFFSET: u64 = (1 << TARGET_SHIFT) * SECTOR_BYTES;

/// A completion callback, run on the device thread (see
/// [`Engine::with_callback`]).
pub type Callback = Box<dyn FnMut(Completion) + Send>;

/// The embeddable scheduler: one per device (see the module doc).
pub struct Engine {
    shared: Arc<Shared>,
    config: EngineConfig,
    groups: std::sync::Mutex<group::GroupIds>,
    thread: Option<JoinHandle<()>>,
    /// The inline side ([`Submission::Inline`]), or `None`.
    inline: Option<Inline>,
}

impl Engine {
    /// Validates `config`, builds the scheduler, creates the ring and
    /// starts the device thread. Completions go to [`Engine::poll`] /
    /// [`Engine::wait`].
    pub fn new(config: EngineConfig) -> Result<Self, EngineError> {
        Self::start(config, None)
    }

    /// As [`Engine::new`], but every completion not awaited through a
    /// future is passed to `callback`, on the device thread (with
    /// [`Submission::Inline`]: on whichever thread delivers it, possibly
    /// inside a [`Engine::submit`] call, one thread at a time, in the order
    /// the requests finished): it must be short (the thread running it issues nothing
    /// meanwhile), may call [`Engine::submit`], and must not call the
    /// engine's blocking methods ([`Engine::add_client`],
    /// [`Engine::remove_client`], [`Engine::wait`], [`Engine::shutdown`]),
    /// which wait for the device thread.
    pub fn with_callback(
        config: EngineConfig,
        callback: impl FnMut(Completion) + Send + 'static,
    ) -> Result<Self, EngineError> {
        Self::start(config, Some(Box::new(callback)))
    }

    fn start(config: EngineConfig, callback: Option<Callback>) -> Result<Self, EngineError> {
        config.validate()?;
        let l_max = config.max_request / SECTOR_BYTES as u32;
        let sched = config
            .scheduler
            .build_with_l_max(config.max_clients, l_max)?;
        let ring = ring::Ring::new(config.max_in_flight, true).map_err(EngineError::Unavailable)?;
        let bell = ring.doorbell().ok_or_else(|| {
            EngineError::Unavailable(std::io::Error::other("the ring has no doorbell"))
        })?;
        let ring_fd = ring.fd();
        let (tx, rx) = mpsc::channel();
        let waiters = match config.submission {
            Submission::Inline => Some(ring::Doorbell::new().map_err(EngineError::Unavailable)?),
            Submission::DeviceThread => None,
        };
        let shared = Arc::new(Shared::new(tx, Some(bell.clone()), waiters));
        let core = Core::new(sched, ring, shared.clone(), config.max_in_flight as usize);
        let epoch = core.epoch;
        let core = Arc::new(Mutex::new(core));
        let deliverer = Arc::new(Deliverer::new(shared.clone(), callback));
        let spawn = std::thread::Builder::new().name("fairway-engine".into());
        let (thread, inline) = match config.submission {
            Submission::DeviceThread => {
                let device = Device { core, deliverer };
                (spawn.spawn(move || device.run(rx)), None)
            }
            Submission::Inline => {
                let inline = Inline {
                    core,
                    deliverer,
                    bell,
                    ring_fd,
                    epoch,
                };
                let thread_side = inline.clone();
                (spawn.spawn(move || thread_side.run(rx)), Some(inline))
            }
        };
        let thread = thread.map_err(EngineError::Unavailable)?;
        Ok(Self {
            shared,
            config,
            groups: Default::default(),
            thread: Some(thread),
            inline,
        })
    }

    /// The configuration the engine runs with.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Opens `path` as a target.
    pub fn open(
        &self,
        path: impl AsRef<std::path::Path>,
        options: TargetOptions,
    ) -> Result<TargetId, EngineError> {
        options.validate()?;
        let path = path.as_ref();
        let file = target::open(path, &options).map_err(|source| EngineError::Open {
            path: path.display().to_string(),
            source,
        })?;
        self.register_file(file, options)
    }

    /// Registers a file the caller opened; `options` must say how
    /// (`direct`: opened with `O_DIRECT`, `write`: opened for writing).
    pub fn register_file(
        &self,
        file: std::fs::File,
        options: TargetOptions,
    ) -> Result<TargetId, EngineError> {
        options.validate()?;
        let nonrot = target::nonrotational(&file);
        let mut st = self.shared.lock();
        if st.tx.is_none() {
            return Err(EngineError::Stopped);
        }
        let slot = match st.targets.iter().position(|t| t.target.is_none()) {
            Some(i) => i,
            None if st.targets.len() < MAX_TARGETS as usize => {
                st.targets.push(TargetSlot {
                    generation: 0,
                    target: None,
                });
                st.targets.len() - 1
            }
            None => return Err(EngineError::TooManyTargets { max: MAX_TARGETS }),
        };
        let t = &mut st.targets[slot];
        t.generation = t.generation.wrapping_add(1);
        let id = TargetId {
            slot: slot as u32,
            generation: t.generation,
        };
        t.target = Some(Arc::new(Target {
            id,
            file,
            options,
            nonrot,
        }));
        st.update_nonrot();
        Ok(id)
    }

    /// Closes a target: no new request is accepted for it; those already
    /// accepted complete (the file stays open until the last one has).
    pub fn close(&self, target: TargetId) -> Result<(), EngineError> {
        let mut st = self.shared.lock();
        if st.target(target).is_none() {
            return Err(EngineError::UnknownTarget(target));
        }
        st.targets[target.slot as usize].target = None;
        st.update_nonrot();
        Ok(())
    }

    /// Registers a client. Waits for the device thread (the scheduler
    /// checks the weight sum).
    pub fn add_client(&self, options: ClientOptions) -> Result<ClientId, EngineError> {
        if !(1..=MAX_WEIGHT).contains(&options.weight) {
            return Err(EngineError::OutOfRange {
                name: "weight",
                value: u64::from(options.weight),
                allowed: "1..=65536",
            });
        }
        let (reply, answer) = mpsc::channel();
        let id = {
            let mut st = self.shared.lock();
            let slot = self.free_client_slot(&mut st)?;
            let s = &mut st.clients[slot];
            s.generation = s.generation.wrapping_add(1);
            s.state = SlotState::Registering;
            s.stats = ClientStats::default();
            let id = ClientId {
                slot: slot as u32,
                generation: s.generation,
            };
            let spec = AppSpec::weight(options.weight)
                .with_class(options.class)
                .in_group(options.group.map_or(0, |g| g.0))
                .with_rates(options.reservation, options.limit);
            let cmd = Cmd::AddClient {
                slot: id.slot,
                spec,
                reply,
            };
            if st.send(cmd).is_err() {
                st.clients[slot].state = SlotState::Free;
                return Err(EngineError::Stopped);
            }
            id
        };
        let result = answer.recv().map_err(|_| EngineError::Stopped);
        let mut st = self.shared.lock();
        let s = &mut st.clients[id.slot as usize];
        match result {
            Ok(Ok(())) => {
                s.state = SlotState::Active;
                Ok(id)
            }
            Ok(Err(e)) => {
                s.state = SlotState::Free;
                Err(EngineError::Scheduler(e))
            }
            Err(e) => Err(e),
        }
    }

    /// A never-used slot while there are fewer than `max_clients`, else a
    /// removed client's with nothing outstanding (or a failed
    /// registration's).
    fn free_client_slot(&self, st: &mut shared::State) -> Result<usize, EngineError> {
        if st.clients.len() < self.config.max_clients as usize {
            st.clients.push(ClientSlot {
                generation: 0,
                state: SlotState::Free,
                stats: ClientStats::default(),
            });
            return Ok(st.clients.len() - 1);
        }
        st.clients
            .iter()
            .position(|s| {
                s.state == SlotState::Free
                    || (s.state == SlotState::Removed && s.stats.outstanding() == 0)
            })
            .ok_or(EngineError::TooManyClients {
                max: self.config.max_clients,
            })
    }

    /// Removes a client: nothing more is accepted from it, its requests
    /// not yet dispatched complete with [`IoError::Cancelled`] (before this
    /// returns), those in flight complete normally. Returns its statistics
    /// at that point; [`Engine::client_stats`] keeps reporting them (in
    /// flight ones included) until its slot is reused.
    pub fn remove_client(&self, client: ClientId) -> Result<ClientStats, EngineError> {
        let (reply, answer) = mpsc::channel();
        {
            let mut st = self.shared.lock();
            match st.client(client) {
                Some(s) if s.state == SlotState::Active => s.state = SlotState::Removed,
                _ => return Err(EngineError::UnknownClient(client)),
            }
            let cmd = Cmd::RemoveClient {
                slot: client.slot,
                reply,
            };
            let _ = st.send(cmd);
        }
        // A stopped engine answers every request itself.
        let _ = answer.recv();
        self.client_stats(client)
    }

    /// A client's statistics (also after its removal, until its slot is
    /// reused).
    pub fn client_stats(&self, client: ClientId) -> Result<ClientStats, EngineError> {
        let mut st = self.shared.lock();
        st.client(client)
            .map(|s| s.stats)
            .ok_or(EngineError::UnknownClient(client))
    }

    /// Submits a request; its completion goes to the queue (or callback).
    pub fn submit(&self, req: IoRequest) -> Result<RequestId, SubmitError> {
        self.enqueue(req, Route::Queue)
    }

    /// Submits a request whose completion resolves the returned future
    /// instead of going to the queue.
    pub fn submit_future(&self, req: IoRequest) -> Result<IoFuture, SubmitError> {
        let slot = Arc::new(FutureSlot::default());
        self.enqueue(req, Route::Future(slot.clone()))?;
        Ok(IoFuture { slot })
    }

    fn enqueue(&self, req: IoRequest, route: Route) -> Result<RequestId, SubmitError> {
        if let Some(inline) = &self.inline {
            return inline.submit(|st| {
                let p = self.admit(st, req, route)?;
                count_accepted(st, &p);
                Ok(p)
            });
        }
        let mut st = self.shared.lock();
        let p = self.admit(&mut st, req, route)?;
        let id = p.id;
        let (queued, client) = (matches!(p.route, Route::Queue), p.req.client);
        if let Err(Cmd::Submit(p)) = st.send(Cmd::Submit(p)) {
            return Err(SubmitError {
                kind: SubmitErrorKind::Stopped,
                buf: p.req.buf,
            });
        }
        st.next_id += 1;
        st.outstanding += 1;
        st.queue_pending += u64::from(queued);
        if let Some(s) = st.client(client) {
            s.stats.submitted += 1;
        }
        Ok(RequestId(id))
    }

    /// Checks `req` (counting a refusal); the accepted request, with the
    /// next id (not yet counted as outstanding).
    fn admit(
        &self,
        st: &mut shared::State,
        req: IoRequest,
        route: Route,
    ) -> Result<Pending, SubmitError> {
        let refuse = |kind, req: IoRequest| Err(SubmitError { kind, buf: req.buf });
        if st.tx.is_none() {
            return refuse(SubmitErrorKind::Stopped, req);
        }
        if !st
            .client(req.client)
            .is_some_and(|s| s.state == SlotState::Active)
        {
            return refuse(SubmitErrorKind::UnknownClient(req.client), req);
        }
        let checked = match st.target(req.target) {
            None => Err(SubmitErrorKind::UnknownTarget(req.target)),
            Some(t) => check_request(&req, t, self.config.max_request).map(|()| t.clone()),
        };
        let checked = checked.and_then(|t| {
            if st.outstanding >= self.config.max_queued {
                Err(SubmitErrorKind::QueueFull {
                    limit: self.config.max_queued,
                })
            } else {
                Ok(t)
            }
        });
        match checked {
            Ok(target) => Ok(Pending {
                id: st.next_id,
                req,
                target,
                route,
                submitted: Instant::now(),
                dispatched: None,
            }),
            Err(kind) => {
                if let Some(s) = st.client(req.client) {
                    s.stats.refused += 1;
                }
                refuse(kind, req)
            }
        }
    }

    /// Moves every queued completion into `out`; how many.
    pub fn poll(&self, out: &mut Vec<Completion>) -> usize {
        let mut st = self.shared.lock();
        let n = st.queue.len();
        out.extend(st.queue.drain(..));
        n
    }

    /// As [`Engine::poll`], but first waits until at least one completion
    /// is queued or `timeout` has passed (`None`: no limit). Returns 0 at
    /// once when no request routed to the queue is outstanding (so a loop
    /// `while engine.wait(..) > 0` ends when everything has completed).
    ///
    /// With [`Submission::Inline`] the waiting thread reaps the ring
    /// itself: it sleeps on the ring's completions (and on a completion
    /// another thread delivers to the queue), and a transfer that
    /// completes is reaped, scheduled after and delivered by it, without
    /// waking the engine's thread.
    pub fn wait(&self, out: &mut Vec<Completion>, timeout: Option<Duration>) -> usize {
        let deadline = timeout.map(|t| Instant::now() + t);
        if let Some(inline) = &self.inline {
            return inline.wait(out, deadline);
        }
        let mut st = self.shared.lock();
        loop {
            if !st.queue.is_empty() {
                let n = st.queue.len();
                out.extend(st.queue.drain(..));
                return n;
            }
            if st.queue_pending == 0 {
                return 0;
            }
            st = match deadline {
                None => self.shared.cv.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return 0;
                    }
                    let (g, _) = self
                        .shared
                        .cv
                        .wait_timeout(st, left)
                        .unwrap_or_else(|e| e.into_inner());
                    g
                }
            };
        }
    }

    /// Accepted requests not finished yet (queued or in flight). A request
    /// stops counting as its completion is queued, so when this reaches 0
    /// the last completions may still wait to be taken with
    /// [`Engine::poll`] or [`Engine::wait`].
    pub fn outstanding(&self) -> u32 {
        self.shared.lock().outstanding
    }

    /// Stops: transfers in flight complete (their buffers belong to the
    /// kernel until then, so this waits for them however long the device
    /// takes), requests not yet dispatched complete with
    /// [`IoError::ShutDown`]; returns every completion not yet taken from
    /// the queue.
    pub fn shutdown(mut self) -> Vec<Completion> {
        self.stop();
        let mut out = Vec::new();
        self.poll(&mut out);
        out
    }

    fn stop(&mut self) {
        let _ = self.shared.lock().send(Cmd::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Counts the accepted `p`: its id taken, outstanding, submitted.
fn count_accepted(st: &mut shared::State, p: &Pending) {
    st.next_id += 1;
    st.outstanding += 1;
    st.queue_pending += u64::from(matches!(p.route, Route::Queue));
    if let Some(s) = st.client(p.req.client) {
        s.stats.submitted += 1;
    }
}

/// Checks a request against its target; the kind of refusal.
fn check_request(req: &IoRequest, t: &Target, max_request: u32) -> Result<(), SubmitErrorKind> {
    if req.len == 0 {
        return Err(SubmitErrorKind::ZeroLength);
    }
    if req.len as usize > req.buf.len() {
        return Err(SubmitErrorKind::BufferTooSmall {
            len: req.len,
            buf: req.buf.len(),
        });
    }
    let end = req.offset.saturating_add(u64::from(req.len));
    if end > MAX_OFFSET {
        return Err(SubmitErrorKind::OffsetTooLarge { end });
    }
    let sectors = end.div_ceil(SECTOR_BYTES) - req.offset / SECTOR_BYTES;
    let l_max = max_request / SECTOR_BYTES as u32;
    if sectors > u64::from(l_max) {
        return Err(SubmitErrorKind::TooLong {
            sectors,
            max: l_max,
        });
    }
    if req.dir == Direction::Write && !t.options.write {
        return Err(SubmitErrorKind::ReadOnlyTarget(req.target));
    }
    if t.options.direct {
        let align = t.options.align;
        for (what, value) in [("offset", req.offset), ("length", u64::from(req.len))] {
            if value % u64::from(align) != 0 {
                return Err(SubmitErrorKind::Unaligned { what, value, align });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<Engine>();
        send_sync::<IoFuture>();
        send::<Completion>();
        send::<IoRequest>();
        send::<SubmitError>();
    }
}
