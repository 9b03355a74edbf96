//! A real-time emulated disk (the BFQ thesis App. C, GemDisk's timing-only mode
//! C.3.1): threads submit requests to a device thread, which schedules them
//! with any [`DiskScheduler`] and completes each one when the [`DiskModel`]
//! says the real drive would have, on the wall clock. Synchronous
//! applications built on it really wait, so deceptive idleness and device
//! idling happen for real.
//!
//! Time is nanoseconds since the device started ([`EmulatedDisk::now`]).
//! The device keeps a logical clock (the latest arrival stamp, modelled
//! completion or idling deadline it has handled), handles those events in
//! the order of their instants and starts each request at that clock, so
//! its schedule is exactly what the simulator computes from the same
//! arrival stamps; the wall clock only decides when a completion is
//! delivered.
//! The device thread sleeps until the next completion or idling deadline
//! (or a submission), and spins for the last [`SPIN_NS`] so completions
//! are delivered within a few microseconds of their modelled instant. Each
//! [`Completion`] carries both the modelled instants and the instant it was
//! delivered, so an application can measure the emulation error
//! (`fairway-lab`'s App. C.5.1 validation).

use crate::model::DiskModel;
use crate::request::{AddError, Nanos, Request};
use crate::scheduler::{DiskScheduler, Dispatch};
use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Busy-wait this long before a deadline instead of sleeping (the kernel's
/// timer slack is ~50 µs).
pub const SPIN_NS: Nanos = 200_000;

/// A completed (or refused) request.
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    /// The request, with the caller's tag.
    pub req: Request,
    /// When the device received it.
    pub arrived: Nanos,
    /// When the disk started serving it (modelled).
    pub started: Nanos,
    /// When the disk finished it (modelled): `started` + service time.
    pub completed: Nanos,
    /// When the device thread delivered this completion (wall clock).
    pub delivered: Nanos,
    /// The scheduler refused it (then only `req` and `arrived` matter).
    pub refused: Option<AddError>,
}

enum Cmd {
    Submit(Request, Sender<Completion>),
    Shutdown,
}

/// Handle to submit requests; cheap to clone, one per application thread.
#[derive(Clone)]
pub struct Submitter {
    tx: Sender<Cmd>,
    epoch: Instant,
}

impl Submitter {
    /// Submits `req`; the completion arrives on the returned channel.
    pub fn submit(&self, req: Request) -> Receiver<Completion> {
        let (tx, rx) = mpsc::channel();
        // A stopped device drops `tx`: the receiver then reports
        // disconnection, the request is not silently lost.
        let _ = self.tx.send(Cmd::Submit(req, tx));
        rx
    }

    /// Submits `req` and waits for its completion (a synchronous read).
    pub fn io(&self, req: Request) -> Option<Completion> {
        self.submit(req).recv().ok()
    }

    /// Nanoseconds since the device started.
    pub fn now(&self) -> Nanos {
        self.epoch.elapsed().as_nanos() as Nanos
    }
}

/// What the device thread did.
#[derive(Debug, Default)]
pub struct DeviceReport {
    /// Requests completed.
    pub completed: u64,
    /// Requests refused by the scheduler.
    pub refused: u64,
    /// Requests still queued at shutdown, handed back.
    pub unserved: Vec<Request>,
    /// Largest delivery lateness (delivered − completed), ns.
    pub max_late: Nanos,
}

/// The emulated device.
pub struct EmulatedDisk {
    submitter: Submitter,
    thread: Option<JoinHandle<DeviceReport>>,
}

impl EmulatedDisk {
    /// Starts the device thread with `sched` and `disk`.
    pub fn start<S: DiskScheduler + Send + 'static>(sched: S, disk: DiskModel) -> Self {
        let (tx, rx) = mpsc::channel();
        let epoch = Instant::now();
        let thread = std::thread::Builder::new()
            .name("fairway-disk".into())
            .spawn(move || device(sched, disk, rx, epoch))
            .expect("spawn the device thread");
        Self {
            submitter: Submitter { tx, epoch },
            thread: Some(thread),
        }
    }

    /// A handle to submit requests.
    pub fn submitter(&self) -> Submitter {
        self.submitter.clone()
    }

    /// Nanoseconds since the device started.
    pub fn now(&self) -> Nanos {
        self.submitter.now()
    }

    /// Stops the device after the request in service; queued requests are
    /// handed back in the report.
    pub fn shutdown(mut self) -> DeviceReport {
        self.stop()
    }

    fn stop(&mut self) -> DeviceReport {
        let _ = self.submitter.tx.send(Cmd::Shutdown);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for EmulatedDisk {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}

struct InService {
    req: Request,
    started: Nanos,
    completed: Nanos,
}

/// The device thread's state.
struct Device<S> {
    sched: S,
    disk: DiskModel,
    epoch: Instant,
    report: DeviceReport,
    /// Device tag -> (reply, caller's tag, arrival stamp).
    waiting: HashMap<u64, (Sender<Completion>, u64, Nanos)>,
    next_tag: u64,
    busy: Option<InService>,
    wake: Option<Nanos>,
    /// The device's logical time: the latest instant handed to the
    /// scheduler (an arrival's stamp, a modelled completion, an idling
    /// deadline). Events are handled in the order of their instants, so
    /// the schedule is a pure function of the arrival stamps: a
    /// back-to-back request starts exactly when the previous one completed.
    clock: Nanos,
}

impl<S: DiskScheduler> Device<S> {
    fn now(&self) -> Nanos {
        self.epoch.elapsed().as_nanos() as Nanos
    }

    /// Handles every completion and idling deadline up to `upto`, in time
    /// order, dispatching whenever the disk is free.
    fn advance(&mut self, upto: Nanos) {
        loop {
            if let Some(s) = self.busy.as_ref().filter(|s| s.completed <= upto) {
                let (req, started, completed) = (s.req, s.started, s.completed);
                self.busy = None;
                self.clock = self.clock.max(completed);
                self.sched.complete(completed, &req);
                if let Some((reply, tag, arrived)) = self.waiting.remove(&req.tag) {
                    let delivered = self.now();
                    self.report.max_late = self
                        .report
                        .max_late
                        .max(delivered.saturating_sub(completed));
                    self.report.completed += 1;
                    let _ = reply.send(Completion {
                        req: req.with_tag(tag),
                        arrived,
                        started,
                        completed,
                        delivered,
                        refused: None,
                    });
                }
            }
            if self.busy.is_some() {
                return;
            }
            if let Some(w) = self.wake.filter(|&w| w <= upto) {
                self.clock = self.clock.max(w);
                self.wake = None;
            }
            let t = self.clock;
            match self.sched.dispatch(t) {
                Dispatch::Serve(req) => {
                    let st = self.disk.serve(t, &req);
                    self.busy = Some(InService {
                        req,
                        started: t,
                        completed: t + st.total(),
                    });
                }
                Dispatch::Idle(Some(w)) if w <= upto => self.wake = Some(w),
                Dispatch::Idle(until) => {
                    self.wake = until;
                    return;
                }
                Dispatch::Empty => {
                    self.wake = None;
                    return;
                }
            }
        }
    }

    fn submit(&mut self, req: Request, reply: Sender<Completion>) {
        let t = self.now().max(self.clock);
        // Whatever completes before this arrival happens first.
        self.advance(t);
        self.clock = self.clock.max(t);
        let tag = self.next_tag;
        self.next_tag += 1;
        match self.sched.add_request(t, req.with_tag(tag)) {
            Ok(()) => {
                self.waiting.insert(tag, (reply, req.tag, t));
                self.advance(t);
            }
            Err(e) => {
                self.report.refused += 1;
                let _ = reply.send(Completion {
                    req,
                    arrived: t,
                    started: t,
                    completed: t,
                    delivered: t,
                    refused: Some(AddError { request: req, ..e }),
                });
            }
        }
    }
}

fn device<S: DiskScheduler>(
    sched: S,
    disk: DiskModel,
    rx: Receiver<Cmd>,
    epoch: Instant,
) -> DeviceReport {
    let mut d = Device {
        sched,
        disk,
        epoch,
        report: DeviceReport::default(),
        waiting: HashMap::new(),
        next_tag: 0,
        busy: None,
        wake: None,
        clock: 0,
    };
    let mut stopping = false;
    loop {
        let t = d.now();
        d.advance(t);
        if stopping && d.busy.is_none() {
            break;
        }
        let deadline = d.busy.as_ref().map(|s| s.completed).or(d.wake);
        let t = d.now();
        let cmd = match deadline {
            Some(x) if x <= t => continue,
            Some(x) if x - t <= SPIN_NS => match rx.try_recv() {
                Ok(c) => Some(c),
                Err(mpsc::TryRecvError::Empty) => {
                    std::hint::spin_loop();
                    continue;
                }
                Err(mpsc::TryRecvError::Disconnected) => Some(Cmd::Shutdown),
            },
            Some(x) => match rx.recv_timeout(Duration::from_nanos(x - t - SPIN_NS)) {
                Ok(c) => Some(c),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => Some(Cmd::Shutdown),
            },
            None if stopping => break,
            None => Some(rx.recv().unwrap_or(Cmd::Shutdown)),
        };
        match cmd {
            Some(Cmd::Submit(req, reply)) if !stopping => d.submit(req, reply),
            Some(Cmd::Submit(req, reply)) => {
                // After shutdown: refused, handed back at once.
                let t = d.now();
                let _ = reply.send(Completion {
                    req,
                    arrived: t,
                    started: t,
                    completed: t,
                    delivered: t,
                    refused: Some(AddError {
                        kind: crate::request::AddErrorKind::Full { capacity: 0 },
                        request: req,
                    }),
                });
            }
            Some(Cmd::Shutdown) => stopping = true,
            None => {}
        }
    }
    let waiting = &mut d.waiting;
    d.report.unserved = d
        .sched
        .drain()
        .into_iter()
        .map(|r| {
            let tag = waiting.remove(&r.tag).map_or(r.tag, |w| w.1);
            r.with_tag(tag)
        })
        .collect();
    d.report
}
