//! Typed errors. Nothing in this crate panics on user input, and an enqueue
//! that fails returns the packet inside [`EnqueueError`].

use crate::flow_id::FlowId;
use core::fmt;

/// Why a flow could not be added, removed or reconfigured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `FlowId::RESERVED` was used.
    ReservedFlowId,
    /// The id is not below the scheduler's `max_flows`.
    FlowIdOutOfRange {
        /// The offending id.
        flow: FlowId,
        /// The scheduler's capacity.
        max_flows: u32,
    },
    /// `add_flow` on an id that is already configured.
    FlowExists(FlowId),
    /// The id names no configured flow.
    UnknownFlow(FlowId),
    /// Weight outside `1..=max`.
    InvalidWeight {
        /// The rejected weight.
        weight: u32,
        /// Largest accepted weight.
        max: u32,
    },
    /// Maximum packet length outside `1..=max`.
    InvalidMaxLen {
        /// The rejected length.
        max_len: u32,
        /// Largest accepted length.
        max: u32,
    },
    /// The sum of all weights would exceed what the arithmetic supports.
    WeightSumOverflow {
        /// The sum the change would produce.
        sum: u64,
        /// Largest accepted sum.
        max: u64,
    },
    /// Reconfiguring would make a queued packet longer than the new maximum.
    QueuedPacketTooLong {
        /// The flow being reconfigured.
        flow: FlowId,
        /// Longest packet currently queued.
        queued_len: u32,
        /// The requested new maximum.
        new_max_len: u32,
    },
    /// A scheduler-specific parameter is out of range.
    InvalidParameter(&'static str),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::ReservedFlowId => write!(f, "flow id {} is reserved", u32::MAX),
            ConfigError::FlowIdOutOfRange { flow, max_flows } => {
                write!(f, "flow id {flow} out of range (scheduler holds {max_flows} flows)")
            }
            ConfigError::FlowExists(id) => write!(f, "flow {id} already exists"),
            ConfigError::UnknownFlow(id) => write!(f, "unknown flow {id}"),
            ConfigError::InvalidWeight { weight, max } => {
                write!(f, "weight {weight} out of range 1..={max}")
            }
            ConfigError::InvalidMaxLen { max_len, max } => {
                write!(f, "max packet length {max_len} out of range 1..={max} bytes")
            }
            ConfigError::WeightSumOverflow { sum, max } => {
                write!(f, "sum of weights {sum} would exceed the supported {max}")
            }
            ConfigError::QueuedPacketTooLong { flow, queued_len, new_max_len } => write!(
                f,
                "flow {flow} holds a {queued_len}-byte packet, longer than the new max {new_max_len}"
            ),
            ConfigError::InvalidParameter(what) => write!(f, "invalid parameter: {what}"),
        }
    }
}

/// Why an enqueue failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueErrorKind {
    /// `FlowId::RESERVED` was used.
    ReservedFlowId,
    /// The id names no configured flow (never added, or removed).
    UnknownFlow(FlowId),
    /// The packet is longer than the flow's declared `max_len`.
    PacketTooLong {
        /// Length of the rejected packet.
        len: u32,
        /// The flow's maximum.
        max_len: u32,
    },
    /// Zero-length packets are not schedulable.
    EmptyPacket,
    /// Every packet slot is in use (the scheduler's `max_packets`): an
    /// overload drop the caller must count.
    Full {
        /// The scheduler's packet capacity.
        capacity: u32,
    },
}

/// A failed enqueue: the reason plus the packet, handed back untouched.
#[derive(Debug, PartialEq, Eq)]
pub struct EnqueueError<P> {
    /// Why it failed.
    pub kind: EnqueueErrorKind,
    /// The packet, returned to the caller.
    pub packet: P,
}

impl<P> EnqueueError<P> {
    /// Takes the packet back.
    pub fn into_packet(self) -> P {
        self.packet
    }
}

impl fmt::Display for EnqueueErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnqueueErrorKind::ReservedFlowId => write!(f, "flow id {} is reserved", u32::MAX),
            EnqueueErrorKind::UnknownFlow(id) => write!(f, "unknown flow {id}"),
            EnqueueErrorKind::PacketTooLong { len, max_len } => {
                write!(
                    f,
                    "packet of {len} bytes exceeds the flow's max of {max_len}"
                )
            }
            EnqueueErrorKind::EmptyPacket => write!(f, "zero-length packet"),
            EnqueueErrorKind::Full { capacity } => {
                write!(f, "scheduler full ({capacity} packets queued)")
            }
        }
    }
}

impl<P> fmt::Display for EnqueueError<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}
