//! Application admission and request validation shared by the baselines.

use crate::queue::RequestQueue;
use crate::request::{check_range, AddErrorKind, AppId, DiskConfigError, Request};
use crate::scheduler::{AppSpec, MAX_WEIGHT, MAX_WEIGHT_SUM};

/// One admitted application.
#[derive(Debug, Default)]
pub(crate) struct Entry {
    pub weight: u32,
    pub queue: RequestQueue,
}

/// The admitted applications and their queues.
#[derive(Debug)]
pub(crate) struct AppTable {
    pub apps: Vec<Option<Entry>>,
    pub queued: usize,
    pub weight_sum: u64,
    pub l_max: u32,
    pub max_queued: usize,
}

impl AppTable {
    pub fn new(max_apps: u32, l_max: u32) -> Self {
        let mut apps = Vec::new();
        apps.resize_with(max_apps as usize, || None);
        Self {
            apps,
            queued: 0,
            weight_sum: 0,
            l_max,
            max_queued: super::MAX_QUEUED,
        }
    }

    pub fn add(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError> {
        spec.best_effort_only()?;
        let max_apps = self.apps.len() as u32;
        let slot = self
            .apps
            .get(app.index())
            .ok_or(DiskConfigError::AppIdTooLarge { app, max_apps })?;
        if slot.is_some() {
            return Err(DiskConfigError::AppExists(app));
        }
        check_range("weight", spec.weight, 1, MAX_WEIGHT, "1..=65536")?;
        let sum = self.weight_sum + u64::from(spec.weight);
        if sum > MAX_WEIGHT_SUM {
            return Err(DiskConfigError::WeightSumTooLarge {
                sum,
                max: MAX_WEIGHT_SUM,
            });
        }
        self.weight_sum = sum;
        self.apps[app.index()] = Some(Entry {
            weight: spec.weight,
            queue: RequestQueue::new(),
        });
        Ok(())
    }

    /// Removes the application; its queued requests are handed back (the
    /// caller removes them from any global structure too).
    pub fn remove(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError> {
        let e = self
            .apps
            .get_mut(app.index())
            .and_then(Option::take)
            .ok_or(DiskConfigError::UnknownApp(app))?;
        self.weight_sum -= u64::from(e.weight);
        let mut q = e.queue;
        let reqs = q.drain();
        self.queued -= reqs.len();
        Ok(reqs)
    }

    pub fn get(&self, app: AppId) -> Option<&Entry> {
        self.apps.get(app.index()).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, app: AppId) -> Option<&mut Entry> {
        self.apps.get_mut(app.index()).and_then(Option::as_mut)
    }

    pub fn check(&self, req: &Request) -> Result<(), AddErrorKind> {
        if self.get(req.app).is_none() {
            return Err(AddErrorKind::UnknownApp);
        }
        if req.len == 0 {
            return Err(AddErrorKind::ZeroLength);
        }
        if req.len > self.l_max {
            return Err(AddErrorKind::TooLong {
                len: req.len,
                max: self.l_max,
            });
        }
        if self.queued >= self.max_queued {
            return Err(AddErrorKind::Full {
                capacity: self.max_queued,
            });
        }
        Ok(())
    }

    pub fn drain(&mut self) -> Vec<Request> {
        let mut out = Vec::with_capacity(self.queued);
        for e in self.apps.iter_mut().flatten() {
            out.extend(e.queue.drain());
        }
        self.queued = 0;
        out
    }

    /// C-LOOK successor of `head` over all applications' queues (O(N log n)).
    pub fn clook_app(&self, head: u64) -> Option<AppId> {
        let mut best: Option<(bool, u64, u32)> = None;
        for (i, e) in self.apps.iter().enumerate() {
            let Some(e) = e else { continue };
            let Some(r) = e.queue.peek_next(head, 0, None) else {
                continue;
            };
            // Requests ahead of the head come first, then the wrapped ones.
            let key = (r.sector < head, r.sector, i as u32);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        best.map(|b| AppId(b.2))
    }
}
