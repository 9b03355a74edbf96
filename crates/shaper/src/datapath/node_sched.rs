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
    spec: SchedSpec,
    weights: Box<[u32]>,
}

impl NodeSched {
    /// The scheduler `spec` names over children of `weights` (slot `i`
    /// weighs `weights[i]`). Refused (by the scheduler's own check) if a
    /// weight or their sum is outside what it takes; the plan's check
    /// refuses such plans first ([`crate::share`]).
    pub fn new(spec: &SchedSpec, weights: &[u32]) -> Result<Self, ConfigError> {
        let k = u32::try_from(weights.len()).unwrap_or(u32::MAX).max(1);
        // A child holds two tokens for a moment: its next one is queued
        // before the served one leaves.
        let mut s = spec.build(Capacity::new(k, k.saturating_mul(2)), Limits::DEFAULT);
        for (slot, &w) in weights.iter().enumerate() {
            s.add_flow(FlowId(slot as u32), FlowConfig::new(w, TOKEN_MAX))?;
        }
        Ok(NodeSched {
            s,
            spec: spec.clone(),
            weights: weights.into(),
        })
    }

    /// True if `other` is the same scheduler over children of the same
    /// weights: a reload may then carry its state over.
    pub fn same_as(&self, other: &NodeSched) -> bool {
        self.spec == other.spec && self.weights == other.weights
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

    /// The tokens the child in `slot` holds (for the tests' checks).
    #[cfg(test)]
    pub fn tokens(&self, slot: u32) -> u64 {
        self.s.flow_backlog(FlowId(slot)).map_or(0, |b| b.packets)
    }

    /// The number of children it serves (for the tests' checks).
    #[cfg(test)]
    pub fn children(&self) -> usize {
        self.weights.len()
    }

    /// Its spec (for the tests' checks).
    #[cfg(test)]
    pub fn spec(&self) -> &SchedSpec {
        &self.spec
    }
}
