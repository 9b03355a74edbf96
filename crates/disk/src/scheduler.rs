//! The [`DiskScheduler`] trait every disk scheduler of this crate implements
//! (the BFQ thesis §2.1, Fig. 1: the disk asks `dispatch()` for the next
//! request whenever it is free; applications call `add_request()`).
//!
//! Time is passed in by the caller on every call and schedulers never read a
//! clock: the same scheduler runs unchanged in the discrete-event simulator
//! (virtual time) and against a real device (monotonic time). Idling is
//! expressed by [`Dispatch::Idle`]: the caller must call `dispatch` again at
//! the returned instant, or earlier when a request arrives or completes.

pub use crate::dmclock::Rate;
use crate::request::{AddError, AppId, DiskConfigError, Nanos, Request};

/// An application's I/O priority class, as the kernel's (`ioprio`): a
/// class is served only when no application of a higher class has a
/// request waiting, and weights share the device within a class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IoClass {
    /// Real time: always first.
    Rt,
    /// Best effort (the default).
    #[default]
    Be,
    /// Idle: only once the device has had no real-time or best-effort work
    /// for a grace period ([`crate::bfq::IDLE_GRACE`]).
    Idle,
}

impl IoClass {
    /// 0 for RT, 1 for BE, 2 for IDLE: lower is served first.
    pub fn index(self) -> usize {
        match self {
            IoClass::Rt => 0,
            IoClass::Be => 1,
            IoClass::Idle => 2,
        }
    }
}

/// Per-application parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppSpec {
    /// Weight w_i; the share is φ_i = w_i / Σ w (the thesis normalises the
    /// weights by their sum). `1..=65536`.
    pub weight: u32,
    /// Maximum budget B_i,max in sectors (BFQ); `None` = the system-wide B_max.
    pub max_budget: Option<u32>,
    /// Priority class (BFQ only; the other schedulers refuse any class but
    /// best effort rather than ignore it).
    pub class: IoClass,
    /// The group the application belongs to ([`DiskScheduler::add_group`];
    /// 0, the default, is the root). BFQ only.
    pub group: u32,
    /// dmClock reservation: a minimum rate ([`crate::dmclock`]). BFQ only.
    pub reservation: Option<Rate>,
    /// dmClock limit: a maximum rate. BFQ only.
    pub limit: Option<Rate>,
}

impl AppSpec {
    /// Weight `weight`, system-wide maximum budget, best effort.
    pub fn weight(weight: u32) -> Self {
        Self {
            weight,
            max_budget: None,
            class: IoClass::Be,
            group: 0,
            reservation: None,
            limit: None,
        }
    }

    /// The same spec in class `class`.
    pub fn with_class(self, class: IoClass) -> Self {
        Self { class, ..self }
    }

    /// The same spec in group `group`.
    pub fn in_group(self, group: u32) -> Self {
        Self { group, ..self }
    }

    /// The same spec with a dmClock reservation and limit.
    pub fn with_rates(self, reservation: Option<Rate>, limit: Option<Rate>) -> Self {
        Self {
            reservation,
            limit,
            ..self
        }
    }

    /// Refuses what only BFQ provides (a class other than best effort, a
    /// group, a reservation or a limit), for the other schedulers, rather
    /// than ignore it.
    pub fn best_effort_only(&self) -> Result<(), DiskConfigError> {
        let rule = if self.class != IoClass::Be {
            "priority classes other than best effort need the bfq scheduler"
        } else if self.group != 0 {
            "groups need the bfq scheduler"
        } else if self.reservation.is_some() || self.limit.is_some() {
            "reservations and limits need the bfq scheduler"
        } else {
            return Ok(());
        };
        Err(DiskConfigError::Inconsistent { rule })
    }
}

impl Default for AppSpec {
    fn default() -> Self {
        Self::weight(1)
    }
}

/// Largest accepted weight.
pub const MAX_WEIGHT: u32 = 1 << 16;
/// Largest accepted sum of weights (keeps `sectors * 2^24 / weight` and the
/// system virtual time exact in 64 bits, as in `fairway-core`).
pub const MAX_WEIGHT_SUM: u64 = 1 << 24;

/// What the disk should do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Serve this request now.
    Serve(Request),
    /// Keep the disk idle although requests may be queued (device idling /
    /// anticipation). `Some(t)`: call `dispatch` again at `t` at the latest;
    /// `None`: until the request in service completes.
    Idle(Option<Nanos>),
    /// Nothing queued.
    Empty,
}

/// A disk request scheduler.
pub trait DiskScheduler {
    /// Short name (`bfq`, `cfq`, ...).
    fn name(&self) -> &'static str;
    /// Admits an application.
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError>;
    /// Declares group `group` (`1..=1024`) with weight `weight` under
    /// `parent` (0: the root): its members share its parent's share by
    /// their weights. Only BFQ has groups; the others refuse.
    fn add_group(&mut self, group: u32, parent: u32, weight: u32) -> Result<(), DiskConfigError> {
        let _ = (group, parent, weight);
        Err(DiskConfigError::Inconsistent {
            rule: "groups need the bfq scheduler",
        })
    }
    /// Removes an empty group.
    fn remove_group(&mut self, group: u32) -> Result<(), DiskConfigError> {
        Err(DiskConfigError::UnknownGroup(group))
    }
    /// Gives declared group `group` a dmClock reservation and limit for
    /// the group as a whole (`None`: none; both `None` removes them). Only
    /// BFQ has groups; the others refuse.
    fn set_group_rates(
        &mut self,
        group: u32,
        reservation: Option<Rate>,
        limit: Option<Rate>,
    ) -> Result<(), DiskConfigError> {
        let _ = (group, reservation, limit);
        Err(DiskConfigError::Inconsistent {
            rule: "groups need the bfq scheduler",
        })
    }
    /// Removes an application, handing back its queued requests.
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError>;
    /// Queues a request issued at `now` (its `arrival` is set to `now`).
    fn add_request(&mut self, now: Nanos, req: Request) -> Result<(), AddError>;
    /// The next request for the (free) disk at `now`.
    fn dispatch(&mut self, now: Nanos) -> Dispatch;
    /// The disk completed `req` at `now`.
    fn complete(&mut self, now: Nanos, req: &Request);
    /// Requests queued (not yet dispatched).
    fn queued(&self) -> usize;
    /// Removes and returns every queued request (nothing is lost on shutdown).
    fn drain(&mut self) -> Vec<Request>;
    /// Tells the scheduler whether the device is non-rotational (no seek
    /// cost). BFQ stops idling for seeky applications there; the others
    /// ignore it.
    fn set_nonrotational(&mut self, _nonrot: bool) {}
}

impl<T: DiskScheduler + ?Sized> DiskScheduler for Box<T> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError> {
        (**self).add_app(app, spec)
    }
    fn add_group(&mut self, group: u32, parent: u32, weight: u32) -> Result<(), DiskConfigError> {
        (**self).add_group(group, parent, weight)
    }
    fn remove_group(&mut self, group: u32) -> Result<(), DiskConfigError> {
        (**self).remove_group(group)
    }
    fn set_group_rates(
        &mut self,
        group: u32,
        reservation: Option<Rate>,
        limit: Option<Rate>,
    ) -> Result<(), DiskConfigError> {
        (**self).set_group_rates(group, reservation, limit)
    }
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError> {
        (**self).remove_app(app)
    }
    fn add_request(&mut self, now: Nanos, req: Request) -> Result<(), AddError> {
        (**self).add_request(now, req)
    }
    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        (**self).dispatch(now)
    }
    fn complete(&mut self, now: Nanos, req: &Request) {
        (**self).complete(now, req)
    }
    fn queued(&self) -> usize {
        (**self).queued()
    }
    fn drain(&mut self) -> Vec<Request> {
        (**self).drain()
    }
    fn set_nonrotational(&mut self, nonrot: bool) {
        (**self).set_nonrotational(nonrot)
    }
}
