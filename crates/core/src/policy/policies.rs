//! The policies of the Eiffel paper §5.1 (and its extended version's hClock) as
//! ready-made trees. Each returns a [`TreeSpec`]; flows are numbered in the
//! order given. Ranks the caller passes to
//! [`PolicyTree::enqueue`](super::PolicyTree::enqueue) (the "packet
//! annotator" of Fig. 1) are named in each function's doc.

use super::queue::{QueueKind, QueueSpec};
use super::spec::{ChildParams, FlowRank, FlowSpec, NodeSpec, Transaction, TreeSpec};
use crate::registry::{SchedKind, SchedSpec};
use alloc::vec;
use alloc::vec::Vec;

/// Largest packet the ready-made trees accept (bytes).
pub const MAX_LEN: u32 = 1500;

/// A cFFS of `buckets` buckets (both halves) of `granularity` rank units.
fn cffs(buckets: u32, granularity: u64) -> QueueSpec {
    QueueSpec::new(QueueKind::Cffs, buckets, granularity)
}

/// Fair-queueing queue: a cFFS of 2 × 4096 buckets of 2^15 STFQ units. A
/// byte at weight 1 is 2^16 units, so the half window (2^27 units) exceeds
/// the largest step, a 1500-byte packet at weight 1 (≈ 2^26.6 units).
fn fq_queue() -> QueueSpec {
    cffs(8192, 1 << 15)
}

fn flows(parent: u32, params: impl IntoIterator<Item = ChildParams>) -> Vec<FlowSpec> {
    params
        .into_iter()
        .map(|params| FlowSpec { parent, params })
        .collect()
}

fn root(transaction: Transaction, queue: QueueSpec, rate: Option<u64>) -> NodeSpec {
    NodeSpec {
        parent: None,
        transaction,
        queue,
        params: ChildParams {
            rate,
            ..ChildParams::default()
        },
    }
}

fn tree(nodes: Vec<NodeSpec>, flows: Vec<FlowSpec>, max_packets: u32) -> TreeSpec {
    TreeSpec {
        nodes,
        flows,
        shaper: TreeSpec::DEFAULT_SHAPER,
        max_packets,
        max_packet_len: MAX_LEN,
    }
}

/// Strict priority: flow `i` has priority `priorities[i]` (lower first,
/// `< levels`), FIFO within a level; an FFS queue of `levels` buckets.
pub fn strict_priority(priorities: &[u64], levels: u32, max_packets: u32) -> TreeSpec {
    let kind = if levels <= 1024 {
        QueueKind::Ffs
    } else {
        QueueKind::Hffs
    };
    tree(
        vec![root(
            Transaction::StrictPriority,
            QueueSpec::new(kind, levels, 1),
            None,
        )],
        flows(
            0,
            priorities.iter().map(|&priority| ChildParams {
                priority,
                ..ChildParams::default()
            }),
        ),
        max_packets,
    )
}

/// Start-time fair queueing over flows of the given weights.
pub fn stfq(weights: &[u32], max_packets: u32) -> TreeSpec {
    tree(
        vec![root(Transaction::Stfq, fq_queue(), None)],
        flows(
            0,
            weights.iter().map(|&weight| ChildParams {
                weight,
                ..ChildParams::default()
            }),
        ),
        max_packets,
    )
}

/// Two-level hierarchical fair queueing: class `c` has weight
/// `classes[c].0` at the root and flows of weights `classes[c].1`; flows are
/// numbered class by class. STFQ at both levels.
pub fn hpfq(classes: &[(u32, Vec<u32>)], max_packets: u32) -> TreeSpec {
    let mut nodes = vec![root(Transaction::Stfq, fq_queue(), None)];
    let mut fl = Vec::new();
    for (c, (w, ws)) in classes.iter().enumerate() {
        nodes.push(NodeSpec {
            parent: Some(0),
            transaction: Transaction::Stfq,
            queue: fq_queue(),
            params: ChildParams {
                weight: *w,
                ..ChildParams::default()
            },
        });
        fl.extend(flows(
            c as u32 + 1,
            ws.iter().map(|&weight| ChildParams {
                weight,
                ..ChildParams::default()
            }),
        ));
    }
    tree(nodes, fl, max_packets)
}

/// Hierarchical QFQ+: classes under a QFQ+ root, flows under QFQ+ classes,
/// class `limited` rate-limited to `limit` bytes/s (the headline composition
/// of existing schedulers with the shared shaper).
pub fn hier_qfq_plus(
    classes: &[(u32, Vec<u32>)],
    limited: Option<(u32, u64)>,
    max_packets: u32,
) -> TreeSpec {
    let q = QueueSpec::new(QueueKind::BinaryHeap, 1, 1);
    let qfq_plus = || Transaction::Scheduler(SchedSpec::new(SchedKind::QfqPlus));
    let mut nodes = vec![root(qfq_plus(), q, None)];
    let mut fl = Vec::new();
    for (c, (w, ws)) in classes.iter().enumerate() {
        let rate = limited.and_then(|(lc, r)| (lc as usize == c).then_some(r));
        nodes.push(NodeSpec {
            parent: Some(0),
            transaction: qfq_plus(),
            queue: q,
            params: ChildParams {
                weight: *w,
                rate,
                ..ChildParams::default()
            },
        });
        fl.extend(flows(
            c as u32 + 1,
            ws.iter().map(|&weight| ChildParams {
                weight,
                ..ChildParams::default()
            }),
        ));
    }
    tree(nodes, fl, max_packets)
}

/// pFabric (the Eiffel paper Fig. 10) over `n` flows: rank = the packet's remaining
/// flow size (bytes, `< max_rank`), flows ranked by the minimum of their
/// packets' ranks, on enqueue and dequeue; queue: `queue`.
pub fn pfabric_with(n: u32, queue: QueueSpec, max_packets: u32) -> TreeSpec {
    tree(
        vec![root(Transaction::PacketRank(FlowRank::Min), queue, None)],
        flows(0, (0..n).map(|_| ChildParams::default())),
        max_packets,
    )
}

/// pFabric on a fixed-range hierarchical FFS of `buckets` buckets covering
/// remaining sizes `0..max_rank`.
pub fn pfabric(n: u32, max_rank: u64, buckets: u32) -> TreeSpec {
    let g = max_rank.div_ceil(u64::from(buckets.max(1))).max(1);
    pfabric_with(n, QueueSpec::new(QueueKind::Hffs, buckets, g), 1 << 16)
}

/// Earliest deadline first over `n` flows: rank = the packet's absolute
/// deadline in ns (non-decreasing within a flow), on a cFFS of `buckets`
/// buckets of `granularity_ns`.
pub fn edf(n: u32, buckets: u32, granularity_ns: u64, max_packets: u32) -> TreeSpec {
    tree(
        vec![root(
            Transaction::PacketRank(FlowRank::Front),
            cffs(buckets, granularity_ns),
            None,
        )],
        flows(0, (0..n).map(|_| ChildParams::default())),
        max_packets,
    )
}

/// Least slack time first (Mittal et al.): rank = arrival time + slack, the
/// latest time the packet can start and still meet its target (ns). The
/// tree is EDF's; only the annotator differs, and since every packet waits
/// in the same queue, ordering by `arrival + slack` is ordering by the slack
/// left at any instant.
pub fn lstf(n: u32, buckets: u32, granularity_ns: u64, max_packets: u32) -> TreeSpec {
    edf(n, buckets, granularity_ns, max_packets)
}

/// hClock: child `i` gets at least `children[i].0` bytes/s (reservation,
/// 0 = none), at most `children[i].1` (limit, 0 = none) and shares the rest
/// by weight `children[i].2`.
pub fn hclock(children: &[(u64, u64, u32)], max_packets: u32) -> TreeSpec {
    let res_q = cffs(20_000, 100_000);
    tree(
        vec![root(
            Transaction::HClock {
                reservation_queue: res_q,
            },
            fq_queue(),
            None,
        )],
        flows(
            0,
            children.iter().map(|&(r, l, weight)| ChildParams {
                weight,
                reservation: (r > 0).then_some(r),
                rate: (l > 0).then_some(l),
                ..ChildParams::default()
            }),
        ),
        max_packets,
    )
}

/// Per-flow pacing (the Eiffel paper §5.1.1, FQ/pacing): flow `i` is paced at
/// `rates[i]` bytes/s by the shared shaper; eligible flows leave in the
/// order they became eligible (one FIFO bucket at the root).
pub fn per_flow_pacing(rates: &[u64], max_packets: u32) -> TreeSpec {
    tree(
        vec![root(
            Transaction::StrictPriority,
            QueueSpec::new(QueueKind::Ffs, 1, 1),
            None,
        )],
        flows(
            0,
            rates.iter().map(|&r| ChildParams {
                rate: Some(r),
                ..ChildParams::default()
            }),
        ),
        max_packets,
    )
}

/// The Eiffel paper's Fig. 6: the root (paced at `pacing` bytes/s) shares between
/// flow 0 (weight 3) and node B (weight 7, limited to `b_limit`); B shares
/// between flow 1 and flow 2 (weight 1 each), flow 2 limited to
/// `leaf_limit`. All rate limits go through the one shaper.
pub fn fig6(pacing: u64, b_limit: u64, leaf_limit: u64, max_packets: u32) -> TreeSpec {
    let nodes = vec![
        root(Transaction::Stfq, fq_queue(), Some(pacing)),
        NodeSpec {
            parent: Some(0),
            transaction: Transaction::Stfq,
            queue: fq_queue(),
            params: ChildParams {
                weight: 7,
                rate: Some(b_limit),
                ..ChildParams::default()
            },
        },
    ];
    let fl = vec![
        FlowSpec {
            parent: 0,
            params: ChildParams {
                weight: 3,
                ..ChildParams::default()
            },
        },
        FlowSpec {
            parent: 1,
            params: ChildParams::default(),
        },
        FlowSpec {
            parent: 1,
            params: ChildParams {
                rate: Some(leaf_limit),
                ..ChildParams::default()
            },
        },
    ];
    tree(nodes, fl, max_packets)
}
