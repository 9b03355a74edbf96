//! The tables of a policy file as serde reads them: every field the format
//! knows, each value with its span where an error may point at it;
//! unknown fields are refused.

use serde::Deserialize;
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
    pub(crate) buckets: u32,
    pub(crate) granularity: u64,
}

/// A node's `queue` or `reservation_queue`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueueToml {
    pub(crate) kind: Spanned<String>,
    pub(crate) buckets: u32,
    pub(crate) granularity: u64,
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
    pub(crate) weight: Option<u32>,
    pub(crate) priority: Option<u64>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) reservation: Option<Spanned<String>>,
}

/// `[[flow]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlowToml {
    pub(crate) name: Option<String>,
    pub(crate) parent: Spanned<String>,
    pub(crate) count: Option<Spanned<u32>>,
    pub(crate) deadline_us: Option<Spanned<u64>>,
    pub(crate) message_bytes: Option<Spanned<u64>>,
    pub(crate) weight: Option<u32>,
    pub(crate) priority: Option<u64>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) reservation: Option<Spanned<String>>,
}

/// The fields a node or flow gives its parent.
pub(crate) struct ChildToml<'a> {
    pub(crate) weight: Option<u32>,
    pub(crate) priority: Option<u64>,
    pub(crate) rate: &'a Option<Spanned<String>>,
    pub(crate) reservation: &'a Option<Spanned<String>>,
}

impl NodeToml {
    /// What the node gives its parent.
    pub(crate) fn child(&self) -> ChildToml<'_> {
        ChildToml {
            weight: self.weight,
            priority: self.priority,
            rate: &self.rate,
            reservation: &self.reservation,
        }
    }
}

impl FlowToml {
    /// What the flow gives its parent.
    pub(crate) fn child(&self) -> ChildToml<'_> {
        ChildToml {
            weight: self.weight,
            priority: self.priority,
            rate: &self.rate,
            reservation: &self.reservation,
        }
    }
}
