//! fairway's existing schedulers (DRR, QFQ, QFQ+, WF2Q+) as the transaction
//! of a tree node (seed 002 §3.2: "scheduling transactions"; hierarchical
//! QFQ+ with a rate limit on an internal node composes them with the shared
//! shaper).
//!
//! Each child of the node is one flow of the scheduler (flow id = the
//! child's slot). A backlogged, eligible child holds exactly one token in the
//! scheduler whose length is the length of the packet the child will send
//! next; serving the token serves that packet, and the child re-enters with
//! a new token if it still has an eligible backlog. A token's length is read
//! when the child enters, so a child whose next packet changes while it
//! waits (a higher-ranked arrival below it) is charged the announced length:
//! exact for FIFO children, which is what the schedulers' guarantees assume.

use super::spec::SchedChoice;
use crate::{Capacity, ConfigError, Drr, FlowConfig, FlowId, Qfq, QfqPlus, Scheduler, Wf2qPlus};
use alloc::boxed::Box;

/// A scheduler over a node's children.
pub(crate) struct SchedNode {
    s: Box<dyn Scheduler<u32>>,
}

impl SchedNode {
    /// A scheduler of `choice` for `children` children (one token each).
    pub(crate) fn new(choice: SchedChoice, children: u32) -> Self {
        let cap = Capacity::new(children.max(1), children.max(1));
        let s: Box<dyn Scheduler<u32>> = match choice {
            SchedChoice::Drr => Box::new(Drr::new(cap)),
            SchedChoice::Qfq => Box::new(Qfq::new(cap)),
            SchedChoice::QfqPlus => Box::new(QfqPlus::new(cap)),
            SchedChoice::Wf2qPlus => Box::new(Wf2qPlus::new(cap)),
        };
        Self { s }
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

    /// Serves the next token.
    pub(crate) fn pop(&mut self) -> Option<u32> {
        self.s.dequeue().map(|d| d.flow.0)
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
