//! BFQ's groups: declaring and forgetting them, and checking an
//! application's group, for the hierarchical B-WF2Q+ of [`crate::hier`].
//!
//! A group is declared with its parent, which must already exist, and
//! never changes parent, so the hierarchy cannot form a cycle; a group
//! naming itself as its parent is refused as one.

use super::Bfq;
use crate::dmclock::DmTags;
use crate::hier::{HierWf2q, MAX_DEPTH, MAX_GROUPS, MAX_TREE_SLOTS, ROOT};
use crate::request::{check_range, DiskConfigError};
use crate::scheduler::{MAX_WEIGHT, MAX_WEIGHT_SUM};

/// One group's declaration.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct GroupState {
    pub(super) configured: bool,
    pub(super) parent: u32,
    pub(super) weight: u32,
    /// Applications and groups declared in it.
    pub(super) members: u32,
    /// 0 for the root, 1 for its children, ...
    pub(super) depth: u32,
    /// dmClock reservation, limit and tags of the group as a whole
    /// ([`super::group_rates`]).
    pub(super) dm: DmTags,
    /// Virtual time of its reservation phases: the start tag of the
    /// member last served in one ([`super::group_rates`]).
    pub(super) res_vtime: u128,
}

impl GroupState {
    /// The table of groups with only the root declared.
    pub(super) fn root() -> Vec<GroupState> {
        let mut v = vec![GroupState::default(); MAX_GROUPS as usize + 1];
        v[ROOT as usize].configured = true;
        v
    }
}

impl Bfq {
    /// `group` is declared.
    pub(super) fn check_group(&self, group: u32) -> Result<(), DiskConfigError> {
        match self.groups.get(group as usize) {
            Some(g) if g.configured => Ok(()),
            _ => Err(DiskConfigError::UnknownGroup(group)),
        }
    }

    /// [`crate::DiskScheduler::add_group`] for BFQ.
    pub(super) fn declare_group(
        &mut self,
        group: u32,
        parent: u32,
        weight: u32,
    ) -> Result<(), DiskConfigError> {
        check_range("group", group, 1, MAX_GROUPS, "1..=1024")?;
        if self.groups[group as usize].configured {
            return Err(DiskConfigError::GroupExists(group));
        }
        if parent == group {
            return Err(DiskConfigError::Inconsistent {
                rule: "a group cannot be its own parent (a cycle)",
            });
        }
        self.check_group(parent)?;
        let depth = self.groups[parent as usize].depth + 1;
        check_range("group depth", depth, 1, MAX_DEPTH, "1..=8")?;
        check_range("group weight", weight, 1, MAX_WEIGHT, "1..=65536")?;
        let sum = self.base_weight_sum + u64::from(weight);
        if sum > MAX_WEIGHT_SUM {
            return Err(DiskConfigError::WeightSumTooLarge {
                sum,
                max: MAX_WEIGHT_SUM,
            });
        }
        let declared = self.groups.iter().filter(|g| g.configured).count() as u64;
        let slots = (declared + 1) * HierWf2q::tree_slots(self.cfg.max_apps);
        if slots > MAX_TREE_SLOTS {
            return Err(DiskConfigError::OutOfRange {
                name: "groups",
                value: declared as f64,
                allowed: "(groups + 1) * (max-apps + 1025) <= 2^24: each group's tree keeps a slot per possible member",
            });
        }
        self.base_weight_sum = sum;
        self.weight_sum += u64::from(weight);
        for e in &mut self.engines {
            e.add_group(group, parent, weight);
        }
        self.groups[parent as usize].members += 1;
        self.groups[group as usize] = GroupState {
            configured: true,
            parent,
            weight,
            members: 0,
            depth,
            dm: DmTags::default(),
            res_vtime: 0,
        };
        Ok(())
    }

    /// [`crate::DiskScheduler::remove_group`] for BFQ: only an empty group.
    pub(super) fn forget_group(&mut self, group: u32) -> Result<(), DiskConfigError> {
        if group == ROOT {
            return Err(DiskConfigError::Inconsistent {
                rule: "the root group cannot be removed",
            });
        }
        self.check_group(group)?;
        let g = self.groups[group as usize];
        if g.members > 0 {
            return Err(DiskConfigError::GroupNotEmpty(group));
        }
        for e in &mut self.engines {
            e.remove_group(group);
        }
        self.base_weight_sum -= u64::from(g.weight);
        self.weight_sum -= u64::from(g.weight);
        self.groups[g.parent as usize].members -= 1;
        self.groups[group as usize] = GroupState::default();
        self.reserved_groups.retain(|&r| r != group);
        self.limited_groups.retain(|&r| r != group);
        Ok(())
    }
}
