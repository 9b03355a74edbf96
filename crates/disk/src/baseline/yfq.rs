//! YFQ (Bruno et al. 1999) as implemented for the BFQ thesis §2.3.2: start-time
//! fair queueing per request, charging each request its *estimated service
//! time* expressed in sectors, `len + (sequential ? 0 : LATENCY_SECTORS)`;
//! requests leave in *batches* of BT_size (the smallest finish tags), each
//! batch served in C-LOOK order, the next batch formed only when the
//! previous one is dispatched. Optional T_wait idling as in SCAN-EDF.

use super::table::AppTable;
use crate::queue::RequestQueue;
use crate::request::{AddError, AppId, DiskConfigError, Nanos, Request};
use crate::scheduler::{AppSpec, DiskScheduler, Dispatch};
use std::collections::BTreeMap;

/// Estimated positioning cost of a non-sequential request, in sectors: an
/// average seek (8.5 ms) plus half a rotation (4.2 ms) at ~30 MB/s, i.e.
/// 12.7 ms · 30e6 B/s / 512 B ≈ 744 sectors. YFQ's heuristic needs some
/// such disk figure; this is the model drive's.
pub const LATENCY_SECTORS: u64 = 744;
/// Fixed-point scale of the tags (cost · 2^16 / weight).
const TAG_SHIFT: u32 = 16;

/// YFQ.
pub struct Yfq {
    table: AppTable,
    finish: Vec<u64>,
    last_end: Vec<u64>,
    counts: Vec<u32>,
    tags: BTreeMap<(u64, u64), (u64, Request)>,
    batch: RequestQueue,
    batch_size: usize,
    seq: u64,
    v: u64,
    head: u64,
    t_wait: Nanos,
    anticipating: Option<(AppId, Nanos)>,
}

impl Yfq {
    /// Batches of `batch_size` (≥ 1; 0 is refused, not raised) requests,
    /// idling `t_wait` ns.
    pub fn new(
        max_apps: u32,
        l_max: u32,
        batch_size: usize,
        t_wait: Nanos,
    ) -> Result<Self, DiskConfigError> {
        if batch_size == 0 {
            return Err(DiskConfigError::OutOfRange {
                name: "batch",
                value: 0.0,
                allowed: "1.. requests",
            });
        }
        Ok(Self {
            table: AppTable::new(max_apps, l_max),
            finish: vec![0; max_apps as usize],
            last_end: vec![u64::MAX; max_apps as usize],
            counts: vec![0; max_apps as usize],
            tags: BTreeMap::new(),
            batch: RequestQueue::new(),
            batch_size,
            seq: 0,
            v: 0,
            head: 0,
            t_wait,
            anticipating: None,
        })
    }
}

impl DiskScheduler for Yfq {
    fn name(&self) -> &'static str {
        "yfq"
    }
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError> {
        self.table.add(app, spec)?;
        self.finish[app.index()] = self.v;
        Ok(())
    }
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError> {
        self.table.remove(app)?;
        let keys: Vec<_> = self
            .tags
            .iter()
            .filter(|(_, (_, r))| r.app == app)
            .map(|(k, _)| *k)
            .collect();
        let mut out: Vec<Request> = keys
            .iter()
            .filter_map(|k| self.tags.remove(k))
            .map(|x| x.1)
            .collect();
        let (mine, rest): (Vec<_>, Vec<_>) =
            self.batch.drain().into_iter().partition(|r| r.app == app);
        rest.into_iter().for_each(|r| self.batch.push(r));
        out.extend(mine);
        self.counts[app.index()] = 0;
        Ok(out)
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
        let w = u64::from(self.table.get(req.app).map_or(1, |e| e.weight));
        let cost = u64::from(req.len)
            + if req.sector == self.last_end[i] {
                0
            } else {
                LATENCY_SECTORS
            };
        self.last_end[i] = req.end();
        let start = self.v.max(self.finish[i]);
        let finish = start + (cost << TAG_SHIFT) / w;
        self.finish[i] = finish;
        self.seq += 1;
        self.tags.insert((finish, self.seq), (start, req));
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
        if self.batch.is_empty() {
            for _ in 0..self.batch_size {
                let Some((_, (start, r))) = self.tags.pop_first() else {
                    break;
                };
                self.v = self.v.max(start);
                self.batch.push(r);
            }
        }
        let Some(r) = self.batch.pop_next(self.head, now, None) else {
            return Dispatch::Empty;
        };
        self.counts[r.app.index()] -= 1;
        self.head = r.end();
        Dispatch::Serve(r)
    }
    fn complete(&mut self, now: Nanos, req: &Request) {
        if self.t_wait > 0 && self.counts[req.app.index()] == 0 && self.queued() > 0 {
            self.anticipating = Some((req.app, now + self.t_wait));
        }
    }
    fn queued(&self) -> usize {
        self.tags.len() + self.batch.len()
    }
    fn drain(&mut self) -> Vec<Request> {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.anticipating = None;
        let mut out: Vec<Request> = std::mem::take(&mut self.tags)
            .into_values()
            .map(|x| x.1)
            .collect();
        out.extend(self.batch.drain());
        out
    }
}
