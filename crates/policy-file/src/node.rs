//! A `[[node]]` table as a [`NodeSpec`]: its `policy` (one of the tree's
//! own transactions, [`TREE_POLICIES`], or any scheduler spec of
//! [`fairway_core::registry`], parsed and range-checked there), its queue
//! (given, or the policy's [`default_queue`]), its parent by name and what
//! it gives that parent.

use crate::child::child_params;
use crate::error::{Locator, PolicyFileError};
use crate::queue::{queue_spec, QueueFields};
use crate::schema::{FileToml, NodeToml, QueueToml};
use fairway_core::policy::{FlowRank, NodeSpec, QueueKind, QueueSpec, Transaction, TreeSpec};
use fairway_core::registry::{SchedKind, SchedSpec, SpecError};
use std::collections::HashMap;
use std::ops::Range;
use toml::Spanned;

/// One of the tree's own transactions a node's `policy` can name: its
/// entry in [`TREE_POLICIES`], everything the file format knows about it.
pub struct TreePolicy {
    /// The name a node's `policy` gives.
    pub name: &'static str,
    /// What it orders the node's children by.
    pub orders_by: &'static str,
    /// The node's queue when the file gives none.
    pub default_queue: QueueSpec,
    /// The node's transaction, from the rest of its table (hClock reads
    /// its `reservation_queue`).
    transaction: fn(&NodeToml, &Locator) -> Result<Transaction, PolicyFileError>,
}

/// The tree's own transactions a node's `policy` can name, in the order
/// error messages list them. Any scheduler spec of the registry is
/// accepted too.
pub const TREE_POLICIES: &[TreePolicy] = &[
    TreePolicy {
        name: "strict-priority",
        orders_by: "children by `priority`, lowest first",
        default_queue: QueueSpec::new(QueueKind::Ffs, 64, 1),
        transaction: |_, _| Ok(Transaction::StrictPriority),
    },
    TreePolicy {
        name: "stfq",
        orders_by: "start-time fair queueing by `weight`",
        default_queue: FAIR_QUEUEING_QUEUE,
        transaction: |_, _| Ok(Transaction::Stfq),
    },
    TreePolicy {
        name: "pfabric",
        orders_by: "flows by the minimum rank of their packets (Fig. 10)",
        // Remaining sizes up to 64 MiB at 1 KiB granularity.
        default_queue: QueueSpec::new(QueueKind::Hffs, 65_536, 1024),
        transaction: |_, _| Ok(Transaction::PacketRank(FlowRank::Min)),
    },
    TreePolicy {
        name: "edf",
        orders_by: "children by their front packet's rank (deadline)",
        default_queue: DEADLINE_QUEUE,
        transaction: |_, _| Ok(Transaction::PacketRank(FlowRank::Front)),
    },
    TreePolicy {
        name: "lstf",
        orders_by: "as edf, rank = arrival + slack",
        default_queue: DEADLINE_QUEUE,
        transaction: |_, _| Ok(Transaction::PacketRank(FlowRank::Front)),
    },
    TreePolicy {
        name: "hclock",
        orders_by: "`reservation`, `rate` (limit) and `weight` (share)",
        default_queue: FAIR_QUEUEING_QUEUE,
        transaction: hclock,
    },
];

/// STFQ's and hClock's share tags: half window 2^12 · 2^15 = 2^27 >
/// 1500 · 2^16 (a packet at weight 1).
const FAIR_QUEUEING_QUEUE: QueueSpec = QueueSpec::new(QueueKind::Cffs, 8192, 1 << 15);

/// Deadlines with mixed slack are not monotone: a tighter packet can
/// arrive below a cFFS window that has rotated past `now`, and would be
/// refused; the heap holds any rank. (cFFS is right when every flow has
/// the same deadline offset.)
const DEADLINE_QUEUE: QueueSpec = QueueSpec::new(QueueKind::BinaryHeap, 1, 1);

/// The queue of a scheduler node when the file gives none: unused, the
/// scheduler holds the children.
const SCHEDULER_NODE_QUEUE: QueueSpec = QueueSpec::new(QueueKind::BinaryHeap, 1, 1);

/// The entry of the tree policy `name`, if it is one.
fn tree_policy(name: &str) -> Option<&'static TreePolicy> {
    TREE_POLICIES.iter().find(|p| p.name == name)
}

/// The default queue of each policy.
pub fn default_queue(policy: &str) -> QueueSpec {
    tree_policy(policy).map_or(SCHEDULER_NODE_QUEUE, |p| p.default_queue)
}

/// hClock's transaction, over the node's `reservation_queue`.
fn hclock(r: &NodeToml, at: &Locator) -> Result<Transaction, PolicyFileError> {
    Ok(Transaction::HClock {
        reservation_queue: match &r.reservation_queue {
            Some(q) => queue_spec(&node_queue("reservation_queue", q), at)?,
            None => DEFAULT_RESERVATION_QUEUE,
        },
    })
}

/// hClock's reservation queue when the node gives none: reservation tags
/// are times in ns, as the shaper's ranks are, so the shaper's default
/// queue (cFFS, 2 × 10 000 buckets of 100 µs).
const DEFAULT_RESERVATION_QUEUE: QueueSpec = TreeSpec::DEFAULT_SHAPER;

/// A node's `queue` or `reservation_queue` table as queue fields.
pub(crate) fn node_queue<'a>(what: &'static str, q: &'a Spanned<QueueToml>) -> QueueFields<'a> {
    let r = q.get_ref();
    QueueFields {
        what,
        span: q.span(),
        kind: &r.kind,
        buckets: r.buckets.as_ref(),
        granularity: &r.granularity,
    }
}

/// Node indices by name, in file order.
pub(crate) struct NodeIndex<'a> {
    by_name: HashMap<&'a str, u32>,
}

impl<'a> NodeIndex<'a> {
    /// Every node's index; a name given twice points at its second use
    /// and names the line of the first.
    pub(crate) fn new(f: &'a FileToml, at: &Locator) -> Result<Self, PolicyFileError> {
        let mut by_name = HashMap::new();
        for (i, n) in f.nodes.iter().enumerate() {
            let name = n.get_ref().name.get_ref().as_str();
            if let Some(first) = by_name.insert(name, i as u32) {
                let line = at.line(f.nodes[first as usize].get_ref().name.span());
                return Err(at.error(
                    n.get_ref().name.span(),
                    format!("node {name:?} defined twice (first on line {line}): node names must differ"),
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
/// gives its parent (whose use is checked once the whole tree is known).
/// A `reservation_queue` on a node that is not hClock, or a `queue` on a
/// scheduler node (the scheduler holds the children), would be ignored
/// and is refused.
pub(crate) fn node_spec(
    r: &NodeToml,
    index: &NodeIndex,
    at: &Locator,
) -> Result<NodeSpec, PolicyFileError> {
    let policy = r.policy.get_ref().as_str();
    let transaction = transaction(r, at)?;
    let name = r.name.get_ref();
    if let (Some(q), false) = (
        &r.reservation_queue,
        matches!(transaction, Transaction::HClock { .. }),
    ) {
        return Err(at.error(
            q.span(),
            format!("`reservation_queue` of node {name:?} is ignored: only an hclock node has one, and its policy is {policy}"),
        ));
    }
    let queue = match (&r.queue, &transaction) {
        (Some(q), Transaction::Scheduler(_)) => {
            return Err(at.error(
                q.span(),
                format!(
                "`queue` of node {name:?} is ignored: the scheduler {policy} holds its children"
            ),
            ))
        }
        (Some(q), _) => queue_spec(&node_queue("queue", q), at)?,
        (None, _) => default_queue(policy),
    };
    Ok(NodeSpec {
        parent: r
            .parent
            .as_ref()
            .map(|p| index.parent_of(p, at))
            .transpose()?,
        transaction,
        queue,
        params: child_params(&r.child(), at)?,
    })
}

/// The transaction `r.policy` names: a tree policy's, or a scheduler
/// node's.
fn transaction(r: &NodeToml, at: &Locator) -> Result<Transaction, PolicyFileError> {
    let policy = r.policy.get_ref().as_str();
    match tree_policy(policy) {
        Some(p) => (p.transaction)(r, at),
        None => Ok(Transaction::Scheduler(scheduler(
            policy,
            r.policy.span(),
            at,
        )?)),
    }
}

/// A scheduler spec of the registry, located at `span`; the registry's own
/// message for a bad parameter, every policy name for an unknown one.
fn scheduler(s: &str, span: Range<usize>, at: &Locator) -> Result<SchedSpec, PolicyFileError> {
    match SchedSpec::parse(s) {
        Ok(spec) => Ok(spec),
        Err(SpecError::UnknownScheduler(_)) => {
            let name = s.split_once(':').map_or(s, |(n, _)| n);
            if tree_policy(name).is_some() {
                return Err(at.error(span, format!("policy {name:?} takes no parameters")));
            }
            let names: Vec<&str> = TREE_POLICIES
                .iter()
                .map(|p| p.name)
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
