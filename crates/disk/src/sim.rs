//! Deterministic discrete-event simulation of applications, a
//! [`DiskScheduler`] and a [`DiskModel`] (the BFQ thesis App. C: GemDisk's
//! timing-only emulation, here in virtual time).
//!
//! One request is in service at a time (no command queueing in the drive,
//! as in the thesis' experiments). Whenever the disk is free the scheduler
//! is asked for the next request; an [`Dispatch::Idle`] answer with a
//! deadline schedules a wake-up, so idling costs virtual time, not
//! wall-clock time. Events at the same instant are processed in the order
//! they were scheduled (a sequence number breaks ties), so a run is a pure
//! function of its inputs and seed.

use crate::model::{DiskModel, ServiceTime};
use crate::request::{Nanos, Request};
use crate::scheduler::{DiskScheduler, Dispatch};
use crate::workload::{App, Io};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happened, for observers (metrics, guarantee checks).
#[derive(Clone, Copy, Debug)]
pub enum SimEvent {
    /// An application issued `req` at `t` (accepted by the scheduler).
    Issue {
        /// Time.
        t: Nanos,
        /// The request.
        req: Request,
    },
    /// The scheduler dispatched `req` at `t`; the disk needs `service`.
    Dispatch {
        /// Time.
        t: Nanos,
        /// The request.
        req: Request,
        /// Its service time.
        service: ServiceTime,
    },
    /// `req` completed at `t`.
    Complete {
        /// Time.
        t: Nanos,
        /// The request.
        req: Request,
    },
    /// The scheduler answered `Idle` at `t` (deadline if any).
    Idle {
        /// Time.
        t: Nanos,
        /// Deadline.
        until: Option<Nanos>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Arrival(u32, u64),
    Complete,
    SchedWake,
    AppWake(u32),
}

/// Totals of a run.
#[derive(Clone, Debug, Default)]
pub struct SimTotals {
    /// Simulated time at the end.
    pub end: Nanos,
    /// Requests completed.
    pub completed: u64,
    /// Sectors completed per application.
    pub sectors: Vec<u64>,
    /// Requests refused by the scheduler (handed back; counted, never lost
    /// silently).
    pub refused: u64,
    /// Time the disk spent serving.
    pub busy: Nanos,
}

/// A simulation.
pub struct Simulation<S> {
    /// The scheduler.
    pub sched: S,
    /// The disk.
    pub disk: DiskModel,
    /// The applications (index = `AppId`).
    pub apps: Vec<App>,
    events: BinaryHeap<Reverse<(Nanos, u64, Ev)>>,
    pending: Vec<Option<Request>>,
    free_slots: Vec<u64>,
    seq: u64,
    now: Nanos,
    in_service: Option<Request>,
    wake_at: Option<Nanos>,
    totals: SimTotals,
}

impl<S: DiskScheduler> Simulation<S> {
    /// A simulation of `apps` on `disk` under `sched` (apps must already be
    /// admitted to `sched` with ids `0..apps.len()`).
    pub fn new(sched: S, disk: DiskModel, apps: Vec<App>) -> Self {
        let n = apps.len();
        let mut sim = Self {
            sched,
            disk,
            apps,
            events: BinaryHeap::new(),
            pending: Vec::new(),
            free_slots: Vec::new(),
            seq: 0,
            now: 0,
            in_service: None,
            wake_at: None,
            totals: SimTotals {
                sectors: vec![0; n],
                ..SimTotals::default()
            },
        };
        for i in 0..n as u32 {
            sim.push(0, Ev::AppWake(i));
        }
        sim
    }

    fn push(&mut self, t: Nanos, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    /// Current simulated time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Totals so far.
    pub fn totals(&self) -> &SimTotals {
        &self.totals
    }

    fn apply_io(&mut self, app: u32, io: Io) {
        for (t, req) in io.issued {
            let slot = match self.free_slots.pop() {
                Some(s) => {
                    self.pending[s as usize] = Some(req);
                    s
                }
                None => {
                    self.pending.push(Some(req));
                    self.pending.len() as u64 - 1
                }
            };
            self.push(t.max(self.now), Ev::Arrival(app, slot));
        }
        if let Some(t) = io.wake {
            self.push(t.max(self.now), Ev::AppWake(app));
        }
    }

    /// Runs until `end` (simulated ns) or until every application is done
    /// and the disk is idle; `observe` sees every event.
    pub fn run(&mut self, end: Nanos, observe: &mut dyn FnMut(&SimEvent)) -> &SimTotals {
        while let Some(&Reverse((t, _, ev))) = self.events.peek() {
            if t > end {
                break;
            }
            self.events.pop();
            self.now = t;
            match ev {
                Ev::Arrival(app, slot) => {
                    let Some(req) = self.pending[slot as usize].take() else {
                        continue;
                    };
                    self.free_slots.push(slot);
                    match self.sched.add_request(t, req) {
                        Ok(()) => {
                            let mut r = req;
                            r.arrival = t;
                            observe(&SimEvent::Issue { t, req: r });
                        }
                        Err(e) => {
                            // Handed back: the application gets it as failed.
                            self.totals.refused += 1;
                            let mut io = Io::new(t);
                            self.apps[app as usize].on_complete(t, &e.request, &mut io);
                            self.apply_io(app, io);
                        }
                    }
                }
                Ev::Complete => {
                    if let Some(req) = self.in_service.take() {
                        self.totals.completed += 1;
                        self.totals.sectors[req.app.index()] += u64::from(req.len);
                        self.sched.complete(t, &req);
                        observe(&SimEvent::Complete { t, req });
                        let a = req.app.0;
                        let mut io = Io::new(t);
                        if let Some(app) = self.apps.get_mut(a as usize) {
                            app.on_complete(t, &req, &mut io);
                        }
                        self.apply_io(a, io);
                    }
                }
                Ev::SchedWake => {
                    if self.wake_at == Some(t) {
                        self.wake_at = None;
                    }
                }
                Ev::AppWake(a) => {
                    let mut io = Io::new(t);
                    self.apps[a as usize].on_wake(t, &mut io);
                    self.apply_io(a, io);
                }
            }
            // Process every event of this instant before dispatching.
            if self.events.peek().is_some_and(|e| e.0 .0 == t) {
                continue;
            }
            if self.in_service.is_none() {
                self.dispatch(observe);
            }
        }
        self.totals.end = self.now;
        &self.totals
    }

    fn dispatch(&mut self, observe: &mut dyn FnMut(&SimEvent)) {
        let t = self.now;
        match self.sched.dispatch(t) {
            Dispatch::Serve(req) => {
                let service = self.disk.serve(t, &req);
                let total = service.total().max(1);
                self.totals.busy += total;
                self.in_service = Some(req);
                observe(&SimEvent::Dispatch { t, req, service });
                self.push(t + total, Ev::Complete);
            }
            Dispatch::Idle(until) => {
                observe(&SimEvent::Idle { t, until });
                if let Some(u) = until {
                    if self.wake_at != Some(u) {
                        self.wake_at = Some(u);
                        self.push(u.max(t + 1), Ev::SchedWake);
                    }
                }
            }
            Dispatch::Empty => {}
        }
    }
}
