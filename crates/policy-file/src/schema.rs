//! The tables of a policy file as serde reads them: every field the format
//! knows, each value with its span so that an error points at it; unknown
//! fields are refused.

use crate::rate_field::RateField;
use serde::Deserialize;
use std::ops::Range;
use toml::Spanned;

/// The whole file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileToml {
    pub(crate) max_packets: Option<Spanned<u32>>,
    pub(crate) max_packet_len: Option<Spanned<u32>>,
    pub(crate) shaper: Option<Spanned<ShaperToml>>,
    #[serde(default, rename = "node")]
    pub(crate) nodes: Vec<Spanned<NodeToml>>,
    #[serde(default, rename = "flow")]
    pub(crate) flows: Vec<Spanned<FlowToml>>,
}

/// `[shaper]`: the shared shaper's queue.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShaperToml {
    pub(crate) queue: Spanned<String>,
    pub(crate) buckets: Option<Spanned<u32>>,
    pub(crate) granularity: Spanned<u64>,
}

/// A node's `queue` or `reservation_queue`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueueToml {
    pub(crate) kind: Spanned<String>,
    pub(crate) buckets: Option<Spanned<u32>>,
    pub(crate) granularity: Spanned<u64>,
}

/// `[[node]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodeToml {
    pub(crate) name: Spanned<String>,
    pub(crate) parent: Option<Spanned<String>>,
    pub(crate) policy: Spanned<String>,
    pub(crate) queue: Option<Spanned<QueueToml>>,
    pub(crate) reservation_queue: Option<Spanned<QueueToml>>,
    pub(crate) weight: Option<Spanned<u32>>,
    pub(crate) priority: Option<Spanned<u64>>,
    pub(crate) rate: Option<Spanned<RateField>>,
    pub(crate) reservation: Option<Spanned<RateField>>,
}

/// `[[flow]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlowToml {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) parent: Spanned<String>,
    pub(crate) count: Option<Spanned<u32>>,
    pub(crate) deadline_us: Option<Spanned<u64>>,
    pub(crate) message_bytes: Option<Spanned<u64>>,
    pub(crate) weight: Option<Spanned<u32>>,
    pub(crate) priority: Option<Spanned<u64>>,
    pub(crate) rate: Option<Spanned<RateField>>,
    pub(crate) reservation: Option<Spanned<RateField>>,
}

/// The fields a node or flow gives its parent.
#[derive(Clone, Copy)]
pub(crate) struct ChildToml<'a> {
    pub(crate) weight: Option<&'a Spanned<u32>>,
    pub(crate) priority: Option<&'a Spanned<u64>>,
    pub(crate) rate: Option<&'a Spanned<RateField>>,
    pub(crate) reservation: Option<&'a Spanned<RateField>>,
}

impl NodeToml {
    /// What the node gives its parent.
    pub(crate) fn child(&self) -> ChildToml<'_> {
        ChildToml {
            weight: self.weight.as_ref(),
            priority: self.priority.as_ref(),
            rate: self.rate.as_ref(),
            reservation: self.reservation.as_ref(),
        }
    }
}

impl FlowToml {
    /// What the flow gives its parent.
    pub(crate) fn child(&self) -> ChildToml<'_> {
        ChildToml {
            weight: self.weight.as_ref(),
            priority: self.priority.as_ref(),
            rate: self.rate.as_ref(),
            reservation: self.reservation.as_ref(),
        }
    }
}

/// The span of an optional value, or `or` (its table) when it is absent.
pub(crate) fn span_or<T>(v: Option<&Spanned<T>>, or: Range<usize>) -> Range<usize> {
    v.map_or(or, Spanned::span)
}
