//! The flow identifier, on its own so that both the flow configuration
//! ([`crate::flow`]) and the errors that name a flow ([`crate::error`])
//! can use it without using each other.

/// Identifies a flow inside one scheduler. Ids are chosen by the caller in
/// `0..capacity.max_flows`; [`FlowId::RESERVED`] is never a valid flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

impl FlowId {
    /// Sentinel used internally for "no flow" in intrusive lists.
    pub const RESERVED: FlowId = FlowId(u32::MAX);

    /// The id as an index into per-flow arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl core::fmt::Display for FlowId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.0)
    }
}
