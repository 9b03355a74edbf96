//! dmClock's reservation and limit for a *group* as a whole
//! ([`crate::DiskScheduler::set_group_rates`]), with the meaning they have
//! for an application ([`super::qos`]), applied to the sum of its members'
//! service:
//!
//! * **Tags.** A group has its own R and L tags. Every request of any
//!   application below it (its members and its child groups' members),
//!   whatever chose it (B-WF2Q+, injection, a reservation phase), moves
//!   them as one of its own would, so the group's rate is the sum of its
//!   members'. The group becomes backlogged when one of its members does
//!   while none of the others has anything queued or in service: idle time
//!   earns it no credit.
//! * **Reservation.** In the reservation phase, a group whose R tag is due
//!   competes with the reserved applications by that tag; when it wins,
//!   one request of one of its members (not the active application, within
//!   its own and its groups' limits) is served. The members share the
//!   group's reserved service by weight, as they share its weighted share:
//!   start-time fair queueing within the group, each member's tag moving
//!   by its sectors divided by its share of the group (its weight over its
//!   busy siblings', level by level down from the group), a member that
//!   was idle starting from the group's virtual time (idle time earns no
//!   credit). That member's sectors are deducted from its next budgets as
//!   any reservation-phase service is, so the group, charged what its
//!   member is charged, gets `max(reservation, weighted share)`, not their
//!   sum.
//! * **Limit.** While a group's L tag is in the future, every application
//!   below it counts as over its limit: it is parked out of B-WF2Q+, an
//!   active one ends its turn, none is served in a reservation phase, and
//!   `dispatch` names the instant the tag is reached. A member's own
//!   reservation therefore yields to its group's limit.
//!
//! Cost: walking up an application's groups (at most
//! [`crate::hier::MAX_DEPTH`]) per dispatch while any group has rates;
//! O(applications) when a member of a rated group becomes backlogged and
//! when a group's reservation falls due.

use super::Bfq;
use crate::dmclock::{validate, DmTags, Rate};
use crate::hier::ROOT;
use crate::request::{DiskConfigError, Nanos};

impl Bfq {
    /// [`crate::DiskScheduler::set_group_rates`] for BFQ: the tags start at
    /// the latest instant a call passed in.
    pub(super) fn set_rates_of_group(
        &mut self,
        group: u32,
        reservation: Option<Rate>,
        limit: Option<Rate>,
    ) -> Result<(), DiskConfigError> {
        if group == ROOT {
            return Err(DiskConfigError::Inconsistent {
                rule: "the root group has no reservation or limit (give them to a group)",
            });
        }
        self.check_group(group)?;
        validate(reservation, limit)?;
        let mut dm = DmTags::new(reservation, limit);
        dm.backlogged(self.clock);
        self.groups[group as usize].dm = dm;
        self.reserved_groups.retain(|&g| g != group);
        self.limited_groups.retain(|&g| g != group);
        if reservation.is_some() {
            self.reserved_groups.push(group);
        }
        if limit.is_some() {
            self.limited_groups.push(group);
        }
        Ok(())
    }

    /// The groups `app` is in, innermost first, the root excluded.
    fn groups_of(&self, app: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.apps[app as usize].group;
        std::iter::successors(Some(first), move |&g| Some(self.groups[g as usize].parent))
            .take_while(|&g| g != ROOT)
    }

    /// Whether some group has a reservation or a limit.
    fn any_group_rates(&self) -> bool {
        !self.reserved_groups.is_empty() || !self.limited_groups.is_empty()
    }

    /// Whether the limits of `app`'s groups let it be served at `now`.
    pub(super) fn groups_allow(&self, app: u32, now: Nanos) -> bool {
        self.limited_groups.is_empty()
            || self
                .groups_of(app)
                .all(|g| self.groups[g as usize].dm.allows(now))
    }

    /// The first instant `app`'s own limit and its groups' let it be
    /// served (`None`: no limit applies).
    pub(super) fn allowed_at(&self, app: u32) -> Option<Nanos> {
        let own = self.apps[app as usize].dm.allowed_at();
        if self.limited_groups.is_empty() {
            return own;
        }
        self.groups_of(app)
            .filter_map(|g| self.groups[g as usize].dm.allowed_at())
            .chain(own)
            .max()
    }

    /// One request of `app`, `sectors` long, dispatched at `now`: its tags
    /// and its rated groups' move.
    pub(super) fn charge_tags(&mut self, app: u32, sectors: u32, now: Nanos) {
        self.apps[app as usize].dm.dispatched(sectors, now);
        if !self.any_group_rates() {
            return;
        }
        let mut g = self.apps[app as usize].group;
        while g != ROOT {
            self.groups[g as usize].dm.dispatched(sectors, now);
            g = self.groups[g as usize].parent;
        }
    }

    /// `app` becomes backlogged at `now` after having had nothing queued
    /// or in service; so does each of its rated groups none of whose other
    /// members has anything queued or in service.
    pub(super) fn note_backlogged(&mut self, app: u32, now: Nanos) {
        self.apps[app as usize].dm.backlogged(now);
        if !self.any_group_rates() {
            return;
        }
        let idle: Vec<u32> = self
            .groups_of(app)
            .filter(|&g| {
                let dm = &self.groups[g as usize].dm;
                (dm.reserved() || dm.limited()) && !self.group_busy(g, app)
            })
            .collect();
        for g in idle {
            self.groups[g as usize].dm.backlogged(now);
        }
    }

    /// Whether an application below `group`, other than `except`, has
    /// something queued or in service.
    fn group_busy(&self, group: u32, except: u32) -> bool {
        self.apps.iter().enumerate().any(|(i, st)| {
            i as u32 != except
                && st.configured
                && (!st.queue.is_empty() || st.in_service > 0)
                && self.groups_of(i as u32).any(|g| g == group)
        })
    }

    /// The reserved group whose R tag is the earliest and due at `now`,
    /// with a member to serve for it: `(R tag, member, group)`. The member
    /// is the one with the smallest start tag in the group's reservation
    /// phases ([`Bfq::gres_start`]; the oldest queued request first on a
    /// tie), among those neither active nor held by a limit.
    pub(super) fn group_reservation(
        &self,
        now: Nanos,
        active: Option<u32>,
    ) -> Option<(u128, u32, u32)> {
        let mut best: Option<(u128, u32, u32)> = None;
        for &g in &self.reserved_groups {
            let dm = &self.groups[g as usize].dm;
            if dm.due_at().is_none_or(|t| t > now)
                || best.is_some_and(|(tag, _, _)| tag <= dm.r_tag())
            {
                continue;
            }
            let member = (0..self.apps.len() as u32)
                .filter(|&i| {
                    let st = &self.apps[i as usize];
                    st.configured
                        && Some(i) != active
                        && !st.queue.is_empty()
                        && self.groups_of(i).any(|h| h == g)
                        && !self.over_limit_at(i, now)
                })
                .min_by_key(|&i| {
                    let st = &self.apps[i as usize];
                    (self.gres_start(i, g), st.queue.oldest().map(|r| r.arrival))
                });
            if let Some(m) = member {
                best = Some((dm.r_tag(), m, g));
            }
        }
        best
    }

    /// `app`'s start tag in `group`'s reservation phases: its own, or the
    /// group's virtual time if later (it was idle, or new).
    fn gres_start(&self, app: u32, group: u32) -> u128 {
        self.apps[app as usize]
            .gres_tag
            .max(self.groups[group as usize].res_vtime)
    }

    /// `app` was served `sectors` in `group`'s reservation phase: the
    /// group's virtual time moves to its start tag, and its tag on by the
    /// sectors over its share of the group.
    pub(super) fn charge_group_share(&mut self, app: u32, group: u32, sectors: u32) {
        /// Tag units per sector at a share of 1.
        const SCALE: f64 = (1u64 << 20) as f64;
        let start = self.gres_start(app, group);
        let share = self.share_in_group(app, group).max(f64::MIN_POSITIVE);
        self.groups[group as usize].res_vtime = start;
        self.apps[app as usize].gres_tag = start + (f64::from(sectors) * SCALE / share) as u128;
    }

    /// `app`'s share of `group` now: at each level from `app` up to `group`,
    /// its (or its group's) weight over the weights of the busy members of
    /// the same group (queued or in service, itself included).
    fn share_in_group(&self, app: u32, group: u32) -> f64 {
        let busy_app = |i: usize| {
            let st = &self.apps[i];
            st.configured && (!st.queue.is_empty() || st.in_service > 0)
        };
        let (mut share, mut weight, mut parent) = (
            1.0,
            self.apps[app as usize].weight,
            self.apps[app as usize].group,
        );
        let mut node_group = None;
        loop {
            let apps: u64 = (0..self.apps.len())
                .filter(|&i| self.apps[i].group == parent && (busy_app(i) || i as u32 == app))
                .map(|i| u64::from(self.apps[i].weight))
                .sum();
            let groups: u64 = (0..self.groups.len() as u32)
                .filter(|&h| {
                    let st = &self.groups[h as usize];
                    h != ROOT
                        && st.configured
                        && st.parent == parent
                        && (Some(h) == node_group || self.group_busy(h, u32::MAX))
                })
                .map(|h| u64::from(self.groups[h as usize].weight))
                .sum();
            share *= f64::from(weight) / (apps + groups).max(1) as f64;
            if parent == group || parent == ROOT {
                return share;
            }
            weight = self.groups[parent as usize].weight;
            node_group = Some(parent);
            parent = self.groups[parent as usize].parent;
        }
    }

    /// The earliest instant after `now` at which a reserved group with a
    /// member waiting (not the active application) falls due, within the
    /// group's limits.
    pub(super) fn group_reservation_wake(&self, now: Nanos) -> Option<Nanos> {
        let active = self.active.map(|a| a.app);
        self.reserved_groups
            .iter()
            .filter_map(|&g| {
                let waiting = (0..self.apps.len() as u32).any(|i| {
                    let st = &self.apps[i as usize];
                    st.configured
                        && Some(i) != active
                        && !st.queue.is_empty()
                        && self.groups_of(i).any(|h| h == g)
                });
                if !waiting {
                    return None;
                }
                let dm = &self.groups[g as usize].dm;
                Some(dm.due_at()?.max(dm.allowed_at().unwrap_or(0)))
            })
            .filter(|&t| t > now)
            .min()
    }
}
