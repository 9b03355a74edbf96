//! CFQ-like time-slice round robin (the BFQ thesis §2.3.3): each backlogged
//! application in turn gets exclusive access for a time slice
//! `T_slice · w_i` (from its first dispatch), its requests served in C-LOOK
//! order; when its queue empties the disk idles up to `slice_idle` for its
//! next request (CFQ's own T_wait). Service is charged in *time*, so two
//! sequential readers in different zones get different bandwidths.

use super::table::AppTable;
use crate::request::{AddError, AppId, DiskConfigError, Nanos, Request};
use crate::scheduler::{AppSpec, DiskScheduler, Dispatch};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct Active {
    app: AppId,
    slice_end: Option<Nanos>,
    idle_until: Option<Option<Nanos>>,
}

/// CFQ-like scheduler.
pub struct Cfq {
    table: AppTable,
    rr: VecDeque<AppId>,
    active: Option<Active>,
    head: u64,
    slice: Nanos,
    slice_idle: Nanos,
}

impl Cfq {
    /// Slices of `slice` ns per unit weight, idling `slice_idle` ns.
    pub fn new(max_apps: u32, l_max: u32, slice: Nanos, slice_idle: Nanos) -> Self {
        Self {
            table: AppTable::new(max_apps, l_max),
            rr: VecDeque::new(),
            active: None,
            head: 0,
            slice,
            slice_idle,
        }
    }
}

impl DiskScheduler for Cfq {
    fn name(&self) -> &'static str {
        "cfq"
    }
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError> {
        self.table.add(app, spec)
    }
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError> {
        let reqs = self.table.remove(app)?;
        self.rr.retain(|a| *a != app);
        if self.active.is_some_and(|a| a.app == app) {
            self.active = None;
        }
        Ok(reqs)
    }
    fn add_request(&mut self, now: Nanos, mut req: Request) -> Result<(), AddError> {
        self.table
            .check(&req)
            .map_err(|kind| AddError { kind, request: req })?;
        req.arrival = now;
        let e = self.table.get_mut(req.app).expect("checked");
        let was_empty = e.queue.is_empty();
        e.queue.push(req);
        self.table.queued += 1;
        match &mut self.active {
            Some(a) if a.app == req.app => a.idle_until = None,
            _ if was_empty => self.rr.push_back(req.app),
            _ => {}
        }
        Ok(())
    }
    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        loop {
            if let Some(a) = self.active {
                match a.idle_until {
                    Some(None) => return Dispatch::Idle(None),
                    Some(Some(t)) if now < t => return Dispatch::Idle(Some(t)),
                    Some(Some(_)) => {
                        self.active = None;
                        continue;
                    }
                    None => {}
                }
                if a.slice_end.is_some_and(|end| now >= end) {
                    self.active = None;
                    if self.table.get(a.app).is_some_and(|e| !e.queue.is_empty()) {
                        self.rr.push_back(a.app);
                    }
                    continue;
                }
                let head = self.head;
                let weight = self.table.get(a.app).map_or(1, |e| e.weight);
                let Some(e) = self.table.get_mut(a.app) else {
                    self.active = None;
                    continue;
                };
                let Some(r) = e.queue.pop_next(head, now, None) else {
                    self.active = None;
                    continue;
                };
                let empty = e.queue.is_empty();
                self.table.queued -= 1;
                self.head = r.end();
                let slice = self.slice * u64::from(weight);
                if let Some(a) = &mut self.active {
                    a.slice_end.get_or_insert(now + slice);
                    if empty {
                        a.idle_until = Some(None);
                    }
                }
                return Dispatch::Serve(r);
            }
            let Some(app) = self.rr.pop_front() else {
                return Dispatch::Empty;
            };
            self.active = Some(Active {
                app,
                slice_end: None,
                idle_until: None,
            });
        }
    }
    fn complete(&mut self, now: Nanos, req: &Request) {
        let idle = self.slice_idle;
        if let Some(a) = &mut self.active {
            if a.app == req.app && a.idle_until == Some(None) {
                let slice_left = a.slice_end.is_none_or(|e| now < e);
                a.idle_until = Some(Some(if slice_left { now + idle } else { now }));
            }
        }
    }
    fn queued(&self) -> usize {
        self.table.queued
    }
    fn drain(&mut self) -> Vec<Request> {
        self.rr.clear();
        self.active = None;
        self.table.drain()
    }
}
