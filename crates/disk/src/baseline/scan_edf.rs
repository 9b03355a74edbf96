//! SCAN-EDF as extended in the BFQ thesis §2.3.1: each application i has a
//! relative deadline D_i (here `base_deadline / w_i`, so a larger weight
//! gets earlier deadlines); a request's absolute deadline is
//! `D_i + max(a, d_prev_i)` (a bandwidth server), rounded up to the next
//! multiple of the granularity Δ; the earliest rounded deadline is served,
//! requests sharing it in C-LOOK order. With `t_wait > 0` the disk idles
//! after an application's last queued request completes, until its next
//! request arrives or T_wait elapses (the thesis' deceptive-idleness fix).

use super::table::AppTable;
use crate::request::{AddError, AppId, DiskConfigError, Nanos, Request};
use crate::scheduler::{AppSpec, DiskScheduler, Dispatch};
use std::collections::BTreeMap;

/// SCAN-EDF.
pub struct ScanEdf {
    table: AppTable,
    last_deadline: Vec<Nanos>,
    counts: Vec<u32>,
    reqs: BTreeMap<(Nanos, u64, u64), Request>,
    seq: u64,
    head: u64,
    base_deadline: Nanos,
    delta: Nanos,
    t_wait: Nanos,
    anticipating: Option<(AppId, Nanos)>,
}

impl ScanEdf {
    /// Relative deadline `base_deadline` ns at weight 1, granularity `delta`
    /// ns (≥ 1; 0 is refused, not raised), idling `t_wait` ns.
    pub fn new(
        max_apps: u32,
        l_max: u32,
        base_deadline: Nanos,
        delta: Nanos,
        t_wait: Nanos,
    ) -> Result<Self, DiskConfigError> {
        if delta == 0 {
            return Err(DiskConfigError::OutOfRange {
                name: "delta",
                value: 0.0,
                allowed: "1.. ns",
            });
        }
        Ok(Self {
            table: AppTable::new(max_apps, l_max),
            last_deadline: vec![0; max_apps as usize],
            counts: vec![0; max_apps as usize],
            reqs: BTreeMap::new(),
            seq: 0,
            head: 0,
            base_deadline,
            delta,
            t_wait,
            anticipating: None,
        })
    }
}

impl DiskScheduler for ScanEdf {
    fn name(&self) -> &'static str {
        "scan-edf"
    }
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError> {
        self.table.add(app, spec)?;
        self.last_deadline[app.index()] = 0;
        Ok(())
    }
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError> {
        self.table.remove(app)?;
        let keys: Vec<_> = self
            .reqs
            .iter()
            .filter(|(_, r)| r.app == app)
            .map(|(k, _)| *k)
            .collect();
        self.counts[app.index()] = 0;
        Ok(keys.iter().filter_map(|k| self.reqs.remove(k)).collect())
    }
    fn add_request(&mut self, now: Nanos, mut req: Request) -> Result<(), AddError> {
        // The requests live outside the table's queues: give it the count
        // its capacity check needs.
        self.table.queued = self.queued();
        self.table
            .check(&req)
            .map_err(|kind| AddError { kind, request: req })?;
        req.arrival = now;
        let i = req.app.index();
        let w = self.table.get(req.app).map_or(1, |e| e.weight);
        let d = (self.base_deadline / u64::from(w)).max(1) + now.max(self.last_deadline[i]);
        self.last_deadline[i] = d;
        let rounded = d.div_ceil(self.delta) * self.delta;
        self.seq += 1;
        self.reqs.insert((rounded, req.sector, self.seq), req);
        self.counts[i] += 1;
        if self.anticipating.is_some_and(|(a, _)| a == req.app) {
            self.anticipating = None;
        }
        Ok(())
    }
    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        if let Some((_, until)) = self.anticipating {
            if now < until {
                return Dispatch::Idle(Some(until));
            }
            self.anticipating = None;
        }
        let Some((&(dl, _, _), _)) = self.reqs.iter().next() else {
            return Dispatch::Empty;
        };
        let key = self
            .reqs
            .range((dl, self.head, 0)..=(dl, u64::MAX, u64::MAX))
            .next()
            .or_else(|| self.reqs.range((dl, 0, 0)..).next())
            .map(|(k, _)| *k);
        let Some(r) = key.and_then(|k| self.reqs.remove(&k)) else {
            return Dispatch::Empty;
        };
        self.counts[r.app.index()] -= 1;
        self.head = r.end();
        Dispatch::Serve(r)
    }
    fn complete(&mut self, now: Nanos, req: &Request) {
        if self.t_wait > 0 && self.counts[req.app.index()] == 0 && !self.reqs.is_empty() {
            self.anticipating = Some((req.app, now + self.t_wait));
        }
    }
    fn queued(&self) -> usize {
        self.reqs.len()
    }
    fn drain(&mut self) -> Vec<Request> {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.anticipating = None;
        std::mem::take(&mut self.reqs).into_values().collect()
    }
}
