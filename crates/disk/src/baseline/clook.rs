//! C-LOOK (the BFQ thesis §2.1: ascending positions from the head, starting
//! over from the lowest when every request is behind it), work-conserving.

use super::table::AppTable;
use crate::queue::RequestQueue;
use crate::request::{AddError, AppId, DiskConfigError, Nanos, Request};
use crate::scheduler::{AppSpec, DiskScheduler, Dispatch};

/// C-LOOK over all requests.
pub struct CLook {
    table: AppTable,
    all: RequestQueue,
    head: u64,
}

impl CLook {
    /// C-LOOK for ids `0..max_apps`, requests up to `l_max` sectors.
    pub fn new(max_apps: u32, l_max: u32) -> Self {
        Self {
            table: AppTable::new(max_apps, l_max),
            all: RequestQueue::new(),
            head: 0,
        }
    }
}

impl DiskScheduler for CLook {
    fn name(&self) -> &'static str {
        "c-look"
    }
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError> {
        self.table.add(app, spec)
    }
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError> {
        self.table.remove(app)?;
        let (mine, rest): (Vec<_>, Vec<_>) =
            self.all.drain().into_iter().partition(|r| r.app == app);
        for r in rest {
            self.all.push(r);
        }
        Ok(mine)
    }
    fn add_request(&mut self, now: Nanos, mut req: Request) -> Result<(), AddError> {
        // The requests live outside the table's queues: give it the count
        // its capacity check needs.
        self.table.queued = self.queued();
        self.table
            .check(&req)
            .map_err(|kind| AddError { kind, request: req })?;
        req.arrival = now;
        self.all.push(req);
        Ok(())
    }
    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        match self.all.pop_next(self.head, now, None) {
            Some(r) => {
                self.head = r.end();
                Dispatch::Serve(r)
            }
            None => Dispatch::Empty,
        }
    }
    fn complete(&mut self, _now: Nanos, _req: &Request) {}
    fn queued(&self) -> usize {
        self.all.len()
    }
    fn drain(&mut self) -> Vec<Request> {
        self.all.drain()
    }
}
