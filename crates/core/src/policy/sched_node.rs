//! fairway's schedulers (any [`crate::registry`] spec: FIFO, DRR, QFQ,
//! QFQ+, S-KPS, WF2Q+, WF2Q++, with their parameters) as the transaction
//! of a tree node (the Eiffel paper §3.2: "scheduling transactions"; hierarchical
//! QFQ+ with a rate limit on an internal node composes them with the shared
//! shaper).
//!
//! Each child of the node is one flow of the scheduler (flow id = the
//! child's slot). A backlogged, eligible child holds one token in the
//! scheduler; serving the token serves the packet the child sends next.
//! The tree peeks the token on the way down and removes it on the way up
//! *after* queueing the child's next token if the child is still eligible
//! and backlogged, so the scheduler sees a continuously backlogged flow, as
//! it would on its own: DRR keeps the deficit of a flow that stays
//! backlogged, WF2Q+ and QFQ chain `S = F` instead of restarting the flow
//! at `max(V, F)`. (Removing first and re-queueing would make every child
//! a newly backlogged flow after every packet: DRR would forget deficits
//! and serve one packet per child per round whatever the weights.)
//!
//! ## Charging the service actually delivered
//! The schedulers need a length when a token enters (WF2Q+ and QFQ compute
//! the finish tag `F = S + L/w` then; DRR compares `L` with the deficit), but
//! the packet that leaves when the token is served is chosen later, by the
//! child's own transaction at dequeue time. The two differ whenever the
//! child's head changes while it waits: a higher-ranked arrival below a
//! pFabric/EDF child, a grandchild released by the shaper into a child
//! node, a nested scheduler admitting a new flow. Charging the announced
//! length would let such a child send 1500-byte packets while paying for
//! 64-byte ones (the test `sched_node_charges_delivered_length` shows the
//! share going 20:1 instead of 1:1).
//!
//! So the tree keeps, per child, the carry `d = Σ delivered − Σ tokens`
//! (bytes) and announces `L_tok = clamp(L_head + d, 1, max_len)` on entry;
//! serving a token of `L_tok` bytes that delivered `L` bytes sets
//! `d ← d + L − L_tok`. Unclamped, this leaves `d = L − L_head`; clamped,
//! `d` moves towards 0; so `|d| < max_len` at all times, and the service
//! the scheduler has charged a child differs from what the child received
//! by less than one maximum-length packet, for every child at every
//! moment. A scheduler's fairness bound (in bytes) therefore grows by at
//! most one `max_len` per child, and the long-run shares are exact: the
//! scheduler's decisions use the best length known when the child
//! entered, its accounting uses the bytes that actually left. For a FIFO
//! child (a flow) the head never changes while it waits, `d` stays 0 and
//! the scheduler behaves exactly as on its own.

use crate::registry::SchedSpec;
use crate::{Capacity, ConfigError, FlowConfig, FlowId, Limits, Scheduler};
use alloc::boxed::Box;

/// A scheduler over a node's children.
pub(crate) struct SchedNode {
    s: Box<dyn Scheduler<u32> + Send>,
}

impl SchedNode {
    /// The scheduler `spec` names, with its parameters, for `children`
    /// children (one token each).
    pub(crate) fn new(spec: &SchedSpec, children: u32) -> Self {
        // A child holds two tokens for a moment: its next one is queued
        // before the served one leaves (see the module doc).
        let cap = Capacity::new(children.max(1), children.max(1).saturating_mul(2));
        Self {
            s: spec.build(cap, Limits::DEFAULT),
        }
    }

    /// Configures child `slot` with `weight`.
    pub(crate) fn add_child(
        &mut self,
        slot: u32,
        weight: u32,
        max_len: u32,
    ) -> Result<(), ConfigError> {
        self.s
            .add_flow(FlowId(slot), FlowConfig::new(weight, max_len))
    }

    /// Queues child `slot`'s token of `len` bytes.
    pub(crate) fn push(&mut self, slot: u32, len: u32) -> bool {
        self.s.enqueue(FlowId(slot), len).is_ok()
    }

    /// Serves the next token: the child's slot and the token's length.
    pub(crate) fn pop(&mut self) -> Option<(u32, u32)> {
        self.s.dequeue().map(|d| (d.flow.0, d.packet))
    }

    /// The child and token length [`pop`](Self::pop) serves next.
    pub(crate) fn peek_token(&mut self) -> Option<(u32, u32)> {
        self.s.peek().map(|(f, &len)| (f.0, len))
    }

    /// The child whose token is served next.
    pub(crate) fn peek(&mut self) -> Option<u32> {
        self.s.peek().map(|(f, _)| f.0)
    }

    /// No token queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.s.is_empty()
    }
}
