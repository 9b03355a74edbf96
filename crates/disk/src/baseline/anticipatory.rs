//! Anticipatory scheduling (AS, Iyer & Druschel 2001) as run in the BFQ thesis
//! §2.4: C-LOOK plus anticipation with every fairness policy off. After a
//! request of application a completes and a has nothing queued, the disk
//! waits up to T_wait for a's next request. A request of a that is *close*
//! to the head (at most [`CLOSE_SECTORS`] ahead: AS anticipates only
//! when it expects a short seek) is served before anything else, whether
//! it arrived during the wait or was already queued; otherwise C-LOOK
//! goes on.

use super::table::AppTable;
use crate::request::{AddError, AppId, DiskConfigError, Nanos, Request};
use crate::scheduler::{AppSpec, DiskScheduler, Dispatch};

/// How far ahead of the head a request counts as close (1 MiB).
pub const CLOSE_SECTORS: u64 = 2048;

/// AS.
pub struct Anticipatory {
    table: AppTable,
    head: u64,
    t_wait: Nanos,
    /// The application anticipated, and until when.
    anticipating: Option<(AppId, Nanos)>,
    /// The application served last (preferred while it has requests).
    last: Option<AppId>,
}

impl Anticipatory {
    /// AS with anticipation window `t_wait` ns.
    pub fn new(max_apps: u32, l_max: u32, t_wait: Nanos) -> Self {
        Self {
            table: AppTable::new(max_apps, l_max),
            head: 0,
            t_wait,
            anticipating: None,
            last: None,
        }
    }
}

impl DiskScheduler for Anticipatory {
    fn name(&self) -> &'static str {
        "as"
    }
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError> {
        self.table.add(app, spec)
    }
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError> {
        if self.last == Some(app) {
            self.last = None;
            self.anticipating = None;
        }
        self.table.remove(app)
    }
    fn add_request(&mut self, now: Nanos, mut req: Request) -> Result<(), AddError> {
        self.table
            .check(&req)
            .map_err(|kind| AddError { kind, request: req })?;
        req.arrival = now;
        if let Some(e) = self.table.get_mut(req.app) {
            e.queue.push(req);
        }
        self.table.queued += 1;
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
        let head = self.head;
        let preferred = self.last.filter(|a| {
            self.table.get(*a).is_some_and(|e| {
                e.queue
                    .peek_next(head, now, None)
                    .is_some_and(|r| r.sector >= head && r.sector - head <= CLOSE_SECTORS)
            })
        });
        let Some(app) = preferred.or_else(|| self.table.clook_app(self.head)) else {
            return Dispatch::Empty;
        };
        let Some(r) = self
            .table
            .get_mut(app)
            .and_then(|e| e.queue.pop_next(head, now, None))
        else {
            return Dispatch::Empty;
        };
        self.table.queued -= 1;
        self.head = r.end();
        self.last = Some(app);
        Dispatch::Serve(r)
    }
    fn complete(&mut self, now: Nanos, req: &Request) {
        let empty = self.table.get(req.app).is_some_and(|e| e.queue.is_empty());
        if empty && self.t_wait > 0 && self.table.queued > 0 {
            self.anticipating = Some((req.app, now + self.t_wait));
        }
    }
    fn queued(&self) -> usize {
        self.table.queued
    }
    fn drain(&mut self) -> Vec<Request> {
        self.anticipating = None;
        self.table.drain()
    }
}
