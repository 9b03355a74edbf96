//! `[[flow]]` tables as the tree's flows: a table with `count = k` is `k`
//! identical flows (named `NAME#0`, `NAME#1`, …), each with its packet
//! annotator ([`RankSource`], the Eiffel paper Fig. 1).

use crate::child::child_params;
use crate::error::{Locator, PolicyFileError};
use crate::node::NodeIndex;
use crate::schema::FileToml;
use fairway_core::policy::FlowSpec;
use std::ops::Range;

/// Most flows one `[[flow]]` table may expand to.
const MAX_COUNT: u32 = 1 << 22;

/// How the packets of a flow are ranked (the packet annotator of Fig. 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankSource {
    /// Rank 0 (the node's transaction does not look at packet ranks).
    None,
    /// Arrival time + this many ns (EDF deadline, LSTF slack).
    Deadline(u64),
    /// Bytes left in the current message of this size (pFabric).
    Remaining(u64),
}

/// The flows of a file, expanded, in order.
#[derive(Default)]
pub(crate) struct Flows {
    /// The tree's flows.
    pub(crate) specs: Vec<FlowSpec>,
    /// Their names.
    pub(crate) names: Vec<String>,
    /// Their annotators.
    pub(crate) ranks: Vec<RankSource>,
    /// The span of each one's table, for errors of the whole tree.
    pub(crate) spans: Vec<Range<usize>>,
}

/// Every flow of `f`. Per table, errors come in the order: parent, count,
/// annotator, then what it gives its parent.
pub(crate) fn expand_flows(
    f: &FileToml,
    index: &NodeIndex,
    at: &Locator,
) -> Result<Flows, PolicyFileError> {
    let mut out = Flows::default();
    for (i, fl) in f.flows.iter().enumerate() {
        let r = fl.get_ref();
        let parent = index.parent_of(&r.parent, at)?;
        let count = r.count.as_ref().map_or(1, |c| *c.get_ref());
        if count == 0 || count > MAX_COUNT {
            let span = r.count.as_ref().map_or(fl.span(), |c| c.span());
            return Err(at.error(span, format!("count {count} outside 1..={MAX_COUNT}")));
        }
        let rank = match (&r.deadline_us, &r.message_bytes) {
            (Some(d), None) => match d.get_ref().checked_mul(1000) {
                Some(ns) => RankSource::Deadline(ns),
                None => {
                    let max = u64::MAX / 1000;
                    let m = format!("deadline_us {} outside 0..={max}", d.get_ref());
                    return Err(at.error(d.span(), m));
                }
            },
            (None, Some(m)) if *m.get_ref() > 0 => RankSource::Remaining(*m.get_ref()),
            (None, Some(m)) => return Err(at.error(m.span(), "message_bytes must be >= 1")),
            (None, None) => RankSource::None,
            (Some(d), Some(_)) => {
                return Err(at.error(d.span(), "set deadline_us or message_bytes, not both"))
            }
        };
        let params = child_params(&r.child(), at)?;
        let base = r.name.clone().unwrap_or_else(|| format!("flow{i}"));
        for k in 0..count {
            out.specs.push(FlowSpec { parent, params });
            out.names.push(if count == 1 {
                base.clone()
            } else {
                format!("{base}#{k}")
            });
            out.ranks.push(rank);
            out.spans.push(fl.span());
        }
    }
    Ok(out)
}
