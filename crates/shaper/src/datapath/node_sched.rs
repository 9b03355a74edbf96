//! The scheduler of one inner node of the shaping tree (any spec of
//! fairway-core's registry: QFQ+ by default, DRR, WF2Q+, ...): it decides
//! which of the node's eligible children gets the node's excess next.
//!
//! Each child is one flow of the scheduler (flow id = the child's slot
//! among its siblings, weight from [`crate::share`]). An eligible child
//! holds one *token*, a "packet" whose length stands for the frame the
//! child sends next. As in the policy tree's scheduler nodes of
//! fairway-core, the tree peeks the token on the way down and, on the
//! way up, queues the child's next token *before* the served one leaves
//! when the child stays eligible, so the scheduler sees a continuously
//! backlogged flow: DRR keeps its deficit, WF2Q+ and QFQ chain `S = F`.
//!
//! The token's length is the length of the frame the child sent last
//! ([`FIRST_TOKEN`] before its first), since the frame a subtree sends
//! next is only known when it is chosen (FQ-CoDel may drop heads on the
//! way). Over any run of a child's tokens the scheduler's accounting is
//! the frames the child sent shifted by one: it differs from them by less
//! than one frame (at most [`TOKEN_MAX`] bytes), so every scheduler's
//! share bound widens by one frame per child and long-run shares are
//! exact.
//!
//! A scheduler has room for more children than it serves ([`room`]: the
//! power of two at or above twice their number), so that a reload whose
//! parent gains, loses or reweights children edits it in place
//! ([`NodeSched::edit`]) instead of building a new one. A flow (a slot)
//! keeps its tokens through such an edit: the child that takes the slot
//! takes them. A slot past the children's end that still holds a token
//! (the reload left it so, as removing a backlogged flow hands its
//! packets back in a new vector) stays configured, a *spare* whose token
//! is dropped when it reaches the head, and is reused by the next reload
//! that fills the slot.

use fairway_core::registry::SchedSpec;
use fairway_core::{Capacity, ConfigError, FlowConfig, FlowId, Limits, Scheduler};

/// The largest token, bytes: the longest frame of a 9000-byte (jumbo)
/// MTU with an Ethernet header and two VLAN tags. It is every child's
/// `max_len` in its parent's scheduler, which is also the quantum of
/// DRR's round robin (unless given) and of QFQ+'s and WF2Q++'s inside an
/// aggregate (children of equal weight): a child may send up to this many
/// bytes in a row. A longer frame's token is this long (the scheduler
/// counts it as this many bytes; the buckets count it whole).
pub const TOKEN_MAX: u32 = 9000 + 22;
/// A child's token before it has sent a frame: a full Ethernet frame.
pub const FIRST_TOKEN: u32 = 1514;

/// A node's scheduler over its children's tokens.
pub struct NodeSched {
    s: Box<dyn Scheduler<u32> + Send>,
    /// No flow is configured at or past this slot (the children's and
    /// the spares' are below).
    flows: u32,
    room: u32,
}

/// The flows a scheduler of `children` children has room for: the power
/// of two at or above twice their number (at least 2). A reload keeps a
/// parent's scheduler only while its children's room stays the same, so
/// a parent's room (and memory) is always between two and four times its
/// children, and the off-loop preparation knows it from the plans alone.
pub fn room(children: usize) -> u32 {
    let k = u32::try_from(children).unwrap_or(u32::MAX / 4).max(1);
    k.saturating_mul(2).next_power_of_two()
}

/// A change of one slot of a kept scheduler ([`NodeSched::edit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotOp {
    /// A slot past the old children's end: its flow comes (or a spare's
    /// is reused) with this weight.
    Add(u32, u32),
    /// A slot that stays: its flow's new weight.
    Reweight(u32, u32),
    /// A slot past the new children's end: its flow goes (or stays a
    /// spare while it holds a token).
    Remove(u32),
}

impl NodeSched {
    /// The scheduler `spec` names over children of `weights` (slot `i`
    /// weighs `weights[i]`). Refused (by the scheduler's own check) if a
    /// weight or their sum is outside what it takes; the plan's check
    /// refuses such plans first ([`crate::share`]).
    pub fn new(spec: &SchedSpec, weights: &[u32]) -> Result<Self, ConfigError> {
        let k = room(weights.len());
        // A child holds two tokens for a moment: its next one is queued
        // before the served one leaves.
        let mut s = spec.build(Capacity::new(k, k.saturating_mul(2)), Limits::DEFAULT);
        for (slot, &w) in weights.iter().enumerate() {
            s.add_flow(FlowId(slot as u32), FlowConfig::new(w, TOKEN_MAX))?;
        }
        Ok(NodeSched {
            s,
            flows: weights.len() as u32,
            room: k,
        })
    }

    /// Applies one slot's change in place (a reload's pause; the caller
    /// orders them: removals, weights that fall, then weights that rise
    /// and flows that come, so the sum stays within the new one's).
    /// Allocates nothing: every registry scheduler sizes its flow
    /// bookkeeping when it is built (DRR's count of maximum lengths has
    /// one entry here, every child's being [`TOKEN_MAX`]). A flow refused (only a spare's
    /// weight over the sum's limit) gets the spares removed and is tried
    /// again; false if it still is (a bug: the check refuses such
    /// weights). `children`: their number after the edit (the slots from
    /// there on are spares).
    pub fn edit(&mut self, op: SlotOp, children: u32) -> bool {
        let cfg = |w| FlowConfig::new(w, TOKEN_MAX);
        match op {
            SlotOp::Remove(k) => {
                // Only an empty flow goes: its packets' vector is then
                // empty, which allocates nothing ([`Self::trim`] counts
                // the slots left).
                if self.tokens(k) == 0 {
                    let _ = self.s.remove_flow(FlowId(k));
                }
                true
            }
            SlotOp::Reweight(k, w) | SlotOp::Add(k, w) => {
                let ok = |s: &mut Self| {
                    if s.s.flow_config(FlowId(k)).is_some() {
                        s.s.reconfigure_flow(FlowId(k), cfg(w)).is_ok()
                    } else {
                        s.s.add_flow(FlowId(k), cfg(w)).is_ok()
                    }
                };
                self.flows = self.flows.max(k + 1);
                ok(self) || (self.drop_spares(children) && ok(self))
            }
        }
    }

    /// Removes the spares (slots `children..`) whose tokens were served,
    /// so that the spares an edit leaves are those that hold a token:
    /// O(spares), and an empty flow's removal allocates nothing.
    pub fn trim(&mut self, children: u32) {
        for k in children..self.flows {
            if self.tokens(k) == 0 {
                let _ = self.s.remove_flow(FlowId(k));
            }
        }
        while self.flows > children && self.s.flow_config(FlowId(self.flows - 1)).is_none() {
            self.flows -= 1;
        }
    }

    /// Removes every spare (slots `children..`, their tokens too): the
    /// rare case of spares whose weights keep a new flow over the sum's
    /// limit.
    #[cold]
    fn drop_spares(&mut self, children: u32) -> bool {
        for j in children..self.flows {
            let _ = self.s.remove_flow(FlowId(j));
        }
        self.flows = self.flows.min(children);
        true
    }

    /// The flows it has room for ([`room`]).
    pub fn room(&self) -> u32 {
        self.room
    }

    /// Queues a token of `len` bytes for the child in `slot`; false if
    /// the scheduler refused it (only a bug: the capacity holds two per
    /// child, and a child holds at most one between dequeues).
    pub fn push(&mut self, slot: u32, len: u32) -> bool {
        self.s
            .enqueue(FlowId(slot), len.clamp(1, TOKEN_MAX))
            .is_ok()
    }

    /// The slot whose token is served next.
    pub fn peek(&mut self) -> Option<u32> {
        self.s.peek().map(|(f, _)| f.0)
    }

    /// The tokens it holds, all children together.
    pub fn held(&self) -> u64 {
        self.s.backlog().packets
    }

    /// Serves the next token: its slot.
    pub fn pop(&mut self) -> Option<u32> {
        self.s.dequeue().map(|d| d.flow.0)
    }

    /// The tokens slot `slot`'s flow holds.
    pub fn tokens(&self, slot: u32) -> u64 {
        self.s.flow_backlog(FlowId(slot)).map_or(0, |b| b.packets)
    }

    /// The weights of its configured slots (`None`: none in that slot),
    /// spares included (for the tests' checks).
    #[cfg(test)]
    pub fn weights(&self) -> Vec<Option<u32>> {
        (0..self.flows)
            .map(|k| self.s.flow_config(FlowId(k)).map(|c| c.weight))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::share::MAX_WEIGHT;

    fn drr(weights: &[u32]) -> NodeSched {
        NodeSched::new(&SchedSpec::parse("drr").unwrap(), weights).unwrap()
    }

    #[test]
    fn room_is_the_power_of_two_at_or_above_twice_the_children() {
        let rooms: Vec<u32> = [0, 1, 2, 3, 4, 5, 64, 65, 100].map(room).to_vec();
        assert_eq!(rooms, [2, 2, 4, 8, 8, 16, 128, 256, 256]);
        assert_eq!(drr(&[1; 5]).room(), 16);
    }

    #[test]
    fn a_slot_that_goes_with_a_token_stays_a_spare_until_it_is_served() {
        let mut s = drr(&[1, 2, 3]);
        assert!(s.push(2, 100));
        // Slot 1 is empty and goes; slot 2 holds a token and stays.
        assert!(s.edit(SlotOp::Remove(2), 1) && s.edit(SlotOp::Remove(1), 1));
        s.trim(1);
        assert_eq!(s.weights(), [Some(1), None, Some(3)]);
        assert_eq!(s.pop(), Some(2));
        s.trim(1);
        assert_eq!(s.weights(), [Some(1)]);
        // A slot that comes again reuses a spare's flow, token and all.
        assert!(s.push(0, 100));
        let mut t = drr(&[1, 1]);
        assert!(t.push(1, 100));
        assert!(t.edit(SlotOp::Remove(1), 1));
        assert!(t.edit(SlotOp::Add(1, 5), 2));
        assert_eq!((t.weights(), t.tokens(1)), (vec![Some(1), Some(5)], 1));
    }

    #[test]
    fn spares_over_the_weight_sum_give_way_to_a_heavier_child() {
        // 400 flows whose weights sum to just under the limit; the last
        // two, backlogged, go and stay spares; then the first child's
        // weight rises by more than the limit leaves: the spares go.
        let limit = crate::share::MAX_WEIGHT_SUM;
        let w = u32::try_from(limit / 400).unwrap();
        assert!(w <= MAX_WEIGHT && limit - 400 * u64::from(w) < 17);
        let mut s = drr(&vec![w; 400]);
        assert!(s.push(398, 100) && s.push(399, 100));
        assert!(s.edit(SlotOp::Remove(399), 398) && s.edit(SlotOp::Remove(398), 398));
        s.trim(398);
        assert_eq!((s.tokens(398), s.tokens(399)), (1, 1), "two spares");
        assert!(s.edit(SlotOp::Reweight(0, w + 17), 398));
        s.trim(398);
        let got = s.weights();
        assert_eq!((got.len(), got[0]), (398, Some(w + 17)));
    }
}
