//! A `[[node]]` table as a [`NodeSpec`]: its `policy` (one of the tree's
//! own transactions, [`TREE_POLICIES`], or any scheduler spec of
//! [`fairway_core::registry`], parsed and range-checked there), its queue
//! (given, or the policy's [`default_queue`]), its parent by name and what
//! it gives that parent.

use crate::child::child_params;
use crate::error::{Locator, PolicyFileError};
use crate::schema::{FileToml, NodeToml, QueueToml};
use fairway_core::policy::{FlowRank, NodeSpec, QueueKind, QueueSpec, Transaction, TreeSpec};
use fairway_core::registry::{SchedKind, SchedSpec, SpecError};
use std::collections::HashMap;
use std::ops::Range;
use toml::Spanned;

/// The tree's own transactions a node's `policy` can name, with what each
/// orders its children by. Any scheduler spec of the registry is accepted
/// too.
pub const TREE_POLICIES: &[(&str, &str)] = &[
    ("strict-priority", "children by `priority`, lowest first"),
    ("stfq", "start-time fair queueing by `weight`"),
    (
        "pfabric",
        "flows by the minimum rank of their packets (Fig. 10)",
    ),
    ("edf", "children by their front packet's rank (deadline)"),
    ("lstf", "as edf, rank = arrival + slack"),
    (
        "hclock",
        "`reservation`, `rate` (limit) and `weight` (share)",
    ),
];

/// The default queue of each policy.
pub fn default_queue(policy: &str) -> QueueSpec {
    match policy {
        "strict-priority" => QueueSpec::new(QueueKind::Ffs, 64, 1),
        // Half window 2^12 · 2^15 = 2^27 > 1500 · 2^16 (a packet at weight 1).
        "stfq" | "hclock" => QueueSpec::new(QueueKind::Cffs, 8192, 1 << 15),
        // Remaining sizes up to 64 MiB at 1 KiB granularity.
        "pfabric" => QueueSpec::new(QueueKind::Hffs, 65_536, 1024),
        // Deadlines with mixed slack are not monotone: a tighter packet can
        // arrive below a cFFS window that has rotated past `now`, and would
        // be refused; the heap holds any rank. (cFFS is right when every
        // flow has the same deadline offset.) Scheduler nodes use no queue.
        _ => QueueSpec::new(QueueKind::BinaryHeap, 1, 1),
    }
}

/// hClock's reservation queue when the node gives none: reservation tags
/// are times in ns, as the shaper's ranks are, so the shaper's default
/// queue (cFFS, 2 × 10 000 buckets of 100 µs).
const DEFAULT_RESERVATION_QUEUE: QueueSpec = TreeSpec::DEFAULT_SHAPER;

/// Node indices by name, in file order.
pub(crate) struct NodeIndex<'a> {
    by_name: HashMap<&'a str, u32>,
}

impl<'a> NodeIndex<'a> {
    /// Every node's index; a name given twice points at its second use.
    pub(crate) fn new(f: &'a FileToml, at: &Locator) -> Result<Self, PolicyFileError> {
        let mut by_name = HashMap::new();
        for (i, n) in f.nodes.iter().enumerate() {
            let name = n.get_ref().name.get_ref().as_str();
            if by_name.insert(name, i as u32).is_some() {
                return Err(at.error(
                    n.get_ref().name.span(),
                    format!("node {name:?} defined twice"),
                ));
            }
        }
        Ok(Self { by_name })
    }

    /// The index of the node `p` names.
    pub(crate) fn parent_of(
        &self,
        p: &Spanned<String>,
        at: &Locator,
    ) -> Result<u32, PolicyFileError> {
        self.by_name
            .get(p.get_ref().as_str())
            .copied()
            .ok_or_else(|| {
                at.error(
                    p.span(),
                    format!("unknown node {:?} (nodes: {})", p.get_ref(), self.names()),
                )
            })
    }

    /// The names, in file order.
    fn names(&self) -> String {
        let mut v: Vec<_> = self.by_name.iter().map(|(k, &i)| (i, *k)).collect();
        v.sort();
        v.into_iter().map(|(_, k)| k).collect::<Vec<_>>().join(", ")
    }
}

/// The node `r` describes. Errors come in the order of its fields'
/// meaning: policy (and reservation queue), parent, queue, then what it
/// gives its parent.
pub(crate) fn node_spec(
    r: &NodeToml,
    index: &NodeIndex,
    at: &Locator,
) -> Result<NodeSpec, PolicyFileError> {
    let policy = r.policy.get_ref().as_str();
    let transaction = transaction(r, at)?;
    Ok(NodeSpec {
        parent: r
            .parent
            .as_ref()
            .map(|p| index.parent_of(p, at))
            .transpose()?,
        transaction,
        queue: match &r.queue {
            Some(q) => queue_spec(q, at)?,
            None => default_queue(policy),
        },
        params: child_params(&r.child(), at)?,
    })
}

/// The transaction `r.policy` names.
fn transaction(r: &NodeToml, at: &Locator) -> Result<Transaction, PolicyFileError> {
    Ok(match r.policy.get_ref().as_str() {
        "strict-priority" => Transaction::StrictPriority,
        "stfq" => Transaction::Stfq,
        "pfabric" => Transaction::PacketRank(FlowRank::Min),
        "edf" | "lstf" => Transaction::PacketRank(FlowRank::Front),
        "hclock" => Transaction::HClock {
            reservation_queue: match &r.reservation_queue {
                Some(q) => queue_spec(q, at)?,
                None => DEFAULT_RESERVATION_QUEUE,
            },
        },
        s => Transaction::Scheduler(scheduler(s, r.policy.span(), at)?),
    })
}

/// A scheduler spec of the registry, located at `span`; the registry's own
/// message for a bad parameter, every policy name for an unknown one.
fn scheduler(s: &str, span: Range<usize>, at: &Locator) -> Result<SchedSpec, PolicyFileError> {
    match SchedSpec::parse(s) {
        Ok(spec) => Ok(spec),
        Err(SpecError::UnknownScheduler(_)) => {
            let name = s.split_once(':').map_or(s, |(n, _)| n);
            if TREE_POLICIES.iter().any(|p| p.0 == name) {
                return Err(at.error(span, format!("policy {name:?} takes no parameters")));
            }
            let names: Vec<&str> = TREE_POLICIES
                .iter()
                .map(|p| p.0)
                .chain(SchedKind::ALL.iter().map(|k| k.name()))
                .collect();
            Err(at.error(
                span,
                format!("unknown policy {s:?} (one of: {})", names.join(", ")),
            ))
        }
        Err(e) => Err(at.error(span, e.to_string())),
    }
}

/// A node's `queue` or `reservation_queue`.
fn queue_spec(q: &Spanned<QueueToml>, at: &Locator) -> Result<QueueSpec, PolicyFileError> {
    let r = q.get_ref();
    let kind = QueueKind::parse(r.kind.get_ref()).ok_or_else(|| {
        at.error(
            r.kind.span(),
            format!(
                "unknown queue {:?} (one of: {})",
                r.kind.get_ref(),
                QueueKind::ALL.map(|(n, _)| n).join(", ")
            ),
        )
    })?;
    Ok(QueueSpec::new(kind, r.buckets, r.granularity))
}
