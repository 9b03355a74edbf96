//! Groups of clients: hierarchical shares, as the cgroup `io.weight` of
//! Linux's BFQ. A group has a weight and a parent (another group, or the
//! root); its clients and child groups share its share of the device by
//! their own weights. Only BFQ schedules groups; the other schedulers
//! refuse them.
//!
//! A group may also have a dmClock reservation and limit for the group as
//! a whole (BFQ only): its reservation is served in BFQ's reservation
//! phase to its members, deducted from their later budgets, and its limit
//! holds every member back while the group is at it
//! ([`crate::DiskScheduler::set_group_rates`]).
//!
//! The engine hands out the ids (`1..=1024`); a group is declared with its
//! parent already declared and never changes parent, so groups cannot form
//! a cycle. A group can be removed once nothing is in it.

use super::client::GroupId;
use super::error::EngineError;
use super::shared::Cmd;
use super::Engine;
use crate::hier::MAX_GROUPS;
use crate::request::DiskConfigError;
use crate::scheduler::{DiskScheduler, Rate, MAX_WEIGHT};
use std::sync::mpsc;

/// How a group is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupOptions {
    /// Weight in its parent, `1..=65536`; counted with the clients'
    /// weights in the sum of at most 2^24.
    pub weight: u32,
    /// Its parent (`None`: the root).
    pub parent: Option<GroupId>,
    /// dmClock reservation of the group as a whole: the rate its members
    /// get together at least while one of them has requests waiting (BFQ
    /// only). IOPS `1..=10^7` or bytes/s `512..=2^40`.
    pub reservation: Option<Rate>,
    /// dmClock limit of the group as a whole: the rate its members never
    /// exceed together (BFQ only). At least the reservation, in the same
    /// unit.
    pub limit: Option<Rate>,
}

impl GroupOptions {
    /// A group of weight `weight` under the root.
    pub fn weight(weight: u32) -> Self {
        Self {
            weight,
            parent: None,
            reservation: None,
            limit: None,
        }
    }

    /// The same group with a reservation.
    pub fn with_reservation(self, rate: Rate) -> Self {
        Self {
            reservation: Some(rate),
            ..self
        }
    }

    /// The same group with a limit.
    pub fn with_limit(self, rate: Rate) -> Self {
        Self {
            limit: Some(rate),
            ..self
        }
    }

    /// The same group under `parent`.
    pub fn in_group(self, parent: GroupId) -> Self {
        Self {
            parent: Some(parent),
            ..self
        }
    }
}

/// The group ids in use, so the engine can hand out free ones.
#[derive(Debug)]
pub(crate) struct GroupIds {
    used: Vec<bool>,
}

impl Default for GroupIds {
    fn default() -> Self {
        Self {
            used: vec![false; MAX_GROUPS as usize + 1],
        }
    }
}

type SchedFn = dyn FnOnce(&mut dyn DiskScheduler) -> Result<(), DiskConfigError> + Send;

impl Engine {
    /// Declares a group; waits for the device thread (the scheduler checks
    /// the parent, the depth and the sum of the weights).
    pub fn add_group(&self, options: GroupOptions) -> Result<GroupId, EngineError> {
        if !(1..=MAX_WEIGHT).contains(&options.weight) {
            return Err(EngineError::OutOfRange {
                name: "group weight",
                value: u64::from(options.weight),
                allowed: "1..=65536",
            });
        }
        let id = {
            let mut ids = self.group_ids();
            let Some(free) = ids.used.iter().skip(1).position(|u| !u) else {
                return Err(EngineError::TooManyGroups { max: MAX_GROUPS });
            };
            let id = free as u32 + 1;
            ids.used[id as usize] = true;
            id
        };
        let parent = options.parent.map_or(0, |p| p.0);
        let (weight, reservation, limit) = (options.weight, options.reservation, options.limit);
        let result = self.configure(Box::new(move |s| {
            s.add_group(id, parent, weight)?;
            if reservation.is_none() && limit.is_none() {
                return Ok(());
            }
            // Refused rates leave no group behind.
            s.set_group_rates(id, reservation, limit).inspect_err(|_| {
                let _ = s.remove_group(id);
            })
        }));
        if result.is_err() {
            self.group_ids().used[id as usize] = false;
        }
        result.map(|()| GroupId(id))
    }

    /// Removes an empty group (no client, no child group left in it).
    pub fn remove_group(&self, group: GroupId) -> Result<(), EngineError> {
        let g = group.0;
        self.configure(Box::new(move |s| s.remove_group(g)))?;
        self.group_ids().used[g as usize] = false;
        Ok(())
    }

    fn group_ids(&self) -> std::sync::MutexGuard<'_, GroupIds> {
        self.groups.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the scheduler, on the device thread, and waits for it.
    fn configure(&self, f: Box<SchedFn>) -> Result<(), EngineError> {
        let (reply, answer) = mpsc::channel();
        let cmd = Cmd::Configure(Box::new(move |s| {
            let _ = reply.send(f(s));
        }));
        let sent = match &self.shared.lock().tx {
            Some(tx) => tx.send(cmd).is_ok(),
            None => false,
        };
        if !sent {
            return Err(EngineError::Stopped);
        }
        match answer.recv() {
            Ok(r) => r.map_err(EngineError::Group),
            Err(_) => Err(EngineError::Stopped),
        }
    }
}
