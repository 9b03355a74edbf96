//! Where in the file a [`BuildError`] of the whole tree points: the table
//! of the node or flow it names (the shaper's for its horizon, the sizes
//! for a size out of range, the file's start for the root count), and the
//! node's name where the message gives only its index.

use crate::schema::FileToml;
use fairway_core::policy::BuildError;
use std::ops::Range;

/// The span `e` points at, and text to append to its message.
/// `flow_spans` holds each expanded flow's table span.
pub(crate) fn locate(
    e: &BuildError,
    f: &FileToml,
    flow_spans: &[Range<usize>],
) -> (Range<usize>, String) {
    let node_span = |i: u32| f.nodes.get(i as usize).map_or(0..0, |n| n.span());
    let span = match e {
        BuildError::UnknownNode {
            what: "flow",
            index,
            ..
        }
        | BuildError::RateZero {
            what: "flow",
            index,
        }
        | BuildError::InvalidWeight {
            what: "flow",
            index,
            ..
        } => flow_spans.get(*index as usize).cloned().unwrap_or(0..0),
        BuildError::UnknownNode { index, .. }
        | BuildError::RateZero { index, .. }
        | BuildError::InvalidWeight { index, .. } => node_span(*index),
        BuildError::Cycle { node }
        | BuildError::Queue { node, .. }
        | BuildError::NeedsFixedRange { node }
        | BuildError::BadChild { node, .. }
        | BuildError::Scheduler { node, .. } => node_span(*node),
        BuildError::HorizonTooShort { node, .. } if *node == u32::MAX => {
            f.shaper.as_ref().map_or(0..0, |s| s.span())
        }
        BuildError::HorizonTooShort { node, .. } => node_span(*node),
        BuildError::InvalidParameter(_) => f
            .max_packets
            .as_ref()
            .map(|m| m.span())
            .or(f.max_packet_len.as_ref().map(|m| m.span()))
            .unwrap_or(0..0),
        BuildError::Empty | BuildError::RootCount(_) => 0..0,
    };
    let named = |i: u32| {
        f.nodes.get(i as usize).map_or_else(String::new, |n| {
            format!(" ({:?})", n.get_ref().name.get_ref())
        })
    };
    let extra = match e {
        BuildError::Cycle { node } | BuildError::BadChild { node, .. } => named(*node),
        _ => String::new(),
    };
    (span, extra)
}
