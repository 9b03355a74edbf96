//! The shaping tree of one direction: the plan's hierarchy with two
//! rates per circuit, HTB-like, and FQ-CoDel inside every circuit.
//!
//! # Rate semantics
//!
//! The root is the link (its rate is the interface's rate in this
//! direction); below it the plan's nodes; the leaves are the circuits and
//! the default class. Every node and leaf has a *max* token bucket (its
//! ceiling); a leaf with a guarantee also has a *min* bucket
//! ([`super::bucket`]: exact integers, bits × 10⁹ per ns).
//!
//! - **Ceiling.** A leaf may send only while its own max bucket and the
//!   max buckets of all its ancestors up to the root allow. Every frame
//!   sent is charged to all of them.
//! - **Guarantee first.** At each dequeue, the backlogged leaves whose
//!   min bucket allows (they are under their guarantee) and whose path
//!   allows are served first, round robin, a frame each: the one served
//!   least recently (or backlogged longest ago) goes first. Only these
//!   sends are charged to the min bucket.
//! - **Excess by weight.** Otherwise the capacity left is shared by
//!   weight, hierarchically: from the root down, among the children with
//!   backlog whose max bucket allows, the one with the smallest virtual
//!   pass (stride scheduling, the virtual-time discipline of WFQ without
//!   eligibility times) is chosen; a frame of `L` bytes advances its pass
//!   by `L · 2⁴⁰ / weight`, the remainder carried, so shares are exact
//!   over time. A child that becomes backlogged starts at its parent's
//!   current virtual time, so idleness earns no credit. Only excess sends
//!   advance passes.
//!
//! So a backlogged circuit gets at least its min (the check makes the
//! mins fit in every parent), its share of the rest by weight, and never
//! more than its max or any ancestor's max. A node's own min is not a
//! bucket: its subtree is guaranteed through its circuits' mins, and the
//! node's min weighs its share of the excess when no sibling has a
//! weight.
//!
//! Weights: a child's `weight` if every sibling group member has one or
//! some do (those without count 1); if no sibling has a weight, each
//! child's guarantee in bit/s (at least 1), "in proportion to the
//! guarantee" as the plan says.
//!
//! Why not the policy tree's hClock nodes of fairway-core: those share a
//! link by reservation, limit and weight per flow of a single scheduler
//! level, with the rate given by the caller's send clock; the shaper needs
//! per-node ceilings at every level of a deep tree and a per-circuit
//! FQ-CoDel, which the two token buckets per node express directly.
//! A node's `policy` (its children's scheduler in the plan) is not used
//! here yet: children share by weight as above.
//!
//! Costs: O(depth · log children) per frame, whatever the number of
//! busy circuits, and nothing allocated per frame (every heap is sized
//! at build). Each node keeps two heaps ([`super::heap`]) of its
//! *eligible* children, those whose max bucket allows and that have an
//! eligible leaf below: one by (pass, index) for the excess, one by the
//! least recently served guaranteed leaf below for the guarantees. A
//! bucket charged into debt takes its node out of its parent's heaps
//! and sets a timer at the exact time it allows again; timers that are
//! due are handled at the start of each dequeue. So the selection is the
//! linear scan's (`tree_reference.rs`, in the tests), found by
//! descending from the root along heap tops.

use super::bucket::Bucket;
use super::heap::Heap;
use crate::plan::{Dir, Rates};
use crate::validate::Checked;
use fairway_core::aqm::{AqmConfigError, FqCodel, FqCodelConfig};
use fairway_core::{Backlog, EnqueueError, Packet};

/// "None" in index fields.
const NIL: u32 = super::heap::NIL;
/// The pass scale: one byte at weight 1 advances a pass by 2⁴⁰.
const STRIDE: u128 = 1 << 40;
/// FQ-CoDel buckets per circuit: a subscriber has tens of flows, not
/// thousands; 64 keeps a circuit's queues at about 6 KiB plus its packet
/// slots.
pub const LEAF_BUCKETS: u32 = 64;
/// A circuit holds up to this much time of frames at its max rate
/// (at least [`MIN_LEAF_LIMIT`] frames), so its FQ-CoDel overflows only
/// when CoDel (target 5 ms) cannot keep the queue short.
pub const LEAF_QUEUE_NS: u64 = 100_000_000;
/// The smallest packet limit of a circuit.
pub const MIN_LEAF_LIMIT: u32 = 64;
/// The queue that holds a leaf's place for a moment during a reload's
/// edit ([`TreeEdit`]): the smallest FQ-CoDel (within its ranges, so its
/// construction cannot fail).
const STAND_IN: FqCodelConfig = FqCodelConfig {
    buckets: 1,
    limit: 1,
    ..FqCodelConfig::RFC8290
};

/// A leaf's FQ-CoDel packet limit for a max rate.
pub fn leaf_limit(max_bps: u64) -> u32 {
    let bits = u128::from(max_bps) * u128::from(LEAF_QUEUE_NS) / 1_000_000_000;
    let frames = bits.div_ceil(8 * 1514);
    let cap = u128::from(fairway_core::aqm::fq_codel::MAX_LIMIT);
    (frames.min(cap) as u32).max(MIN_LEAF_LIMIT)
}

struct Node {
    parent: u32,
    max: Bucket,
    /// A leaf's guarantee.
    min: Option<Bucket>,
    weight: u64,
    pass: u128,
    rem: u64,
    /// Virtual time of its children: the pass of the last one served.
    vtime: u128,
    /// Backlogged leaves below (a leaf: 1 while it has frames).
    busy: u32,
    /// The max bucket allows (false: a timer waits for it).
    open: bool,
    /// A leaf's min bucket allows (false: a timer waits for it).
    min_open: bool,
    /// A leaf's: when last served from its guarantee (or backlogged).
    gseq: u64,
    /// The leaf's index, `NIL` for inner nodes.
    leaf: u32,
    /// Only while a reload activates: the pass (and a leaf's `gseq`) is
    /// the one this node had while busy under the same parent.
    carried: bool,
}

struct Leaf<P> {
    node: u32,
    /// Boxed, so that a reload moves a pointer, not the queue's state.
    fq: Box<FqCodel<P>>,
    /// After a reload that changed the circuit's queue limit while it
    /// held frames: the queue of the new limit, swapped in when `fq`
    /// empties (frames are never moved between queues: that would lose
    /// their flows' order and CoDel's state).
    pending: Option<Box<FqCodel<P>>>,
}

/// One direction's tree; leaves `0..circuits` are the circuits, leaf
/// `circuits` the default class (if the plan has one).
pub struct Tree<P> {
    nodes: Vec<Node>,
    leaves: Vec<Leaf<P>>,
    /// Per node, its eligible children by (pass, index).
    excess: Vec<Heap>,
    /// Per node, its children with an eligible guaranteed leaf below, by
    /// that leaf's `gseq`.
    guaranteed: Vec<Heap>,
    /// Each node's position in its parent's heaps.
    xpos: Vec<u32>,
    gpos: Vec<u32>,
    /// Nodes whose max bucket is in debt, by when it allows again.
    max_timers: Heap,
    mpos: Vec<u32>,
    /// Leaves' nodes whose min bucket is in debt, likewise.
    min_timers: Heap,
    npos: Vec<u32>,
    /// The next `gseq`.
    gclock: u64,
    /// Each plan node's tree node (a fresh tree: node `i` is `i + 1`;
    /// reloads keep them, see [`edit`]).
    inner: Vec<u32>,
    /// Tree nodes freed by reloads, for the next ones to reuse.
    free: Vec<u32>,
}

#[path = "tree_edit.rs"]
mod edit;
pub use edit::TreeEdit;

fn queue<P: Packet>(cfg: FqCodelConfig) -> Result<Box<FqCodel<P>>, AqmConfigError> {
    FqCodel::new(cfg).map(Box::new)
}

/// A child of the tree, as the plan gives it.
struct Spec {
    parent: u32,
    rates: Rates,
    weight: Option<u32>,
    guarantee: u64,
    leaf: bool,
}

fn specs(c: &Checked, dir: Dir) -> Vec<Spec> {
    let d = match dir {
        Dir::Download => 0,
        Dir::Upload => 1,
    };
    let parent = |p: Option<usize>| p.map_or(0, |i| i as u32 + 1);
    let plan = &c.plan;
    let nodes = plan.nodes.iter().enumerate().map(|(i, n)| Spec {
        parent: parent(c.node_parent[i]),
        rates: n.rates,
        weight: n.weight,
        guarantee: c.node_min.get(i).map_or(0, |m| m[d]),
        leaf: false,
    });
    let circuits = plan.circuits.iter().enumerate().map(|(i, k)| Spec {
        parent: parent(c.circuit_parent[i]),
        rates: k.rates,
        weight: k.weight,
        guarantee: k.rates.get(dir).min.unwrap_or(0),
        leaf: true,
    });
    let default = plan.default_class.iter().map(|k| Spec {
        parent: parent(c.default_parent),
        rates: k.rates,
        weight: None,
        guarantee: k.rates.get(dir).min.unwrap_or(0),
        leaf: true,
    });
    nodes.chain(circuits).chain(default).collect()
}

/// Each spec's weight among its siblings: its `weight` if any sibling
/// has one (those without count 1), else its guarantee in bit/s (at
/// least 1).
fn weights(specs: &[Spec]) -> Vec<u64> {
    let mut any_weight = vec![false; specs.len() + 1];
    for s in specs {
        any_weight[s.parent as usize] |= s.weight.is_some();
    }
    let weight = |s: &Spec| match s.weight {
        Some(w) => u64::from(w),
        None if any_weight[s.parent as usize] => 1,
        None => s.guarantee.max(1),
    };
    specs.iter().map(weight).collect()
}

impl<P: Packet> Tree<P> {
    /// The tree of direction `dir` of a checked plan, its buckets full as
    /// of `now_ns`. The root's rate is the link's (unlimited without
    /// `[interfaces]`).
    pub fn new(c: &Checked, dir: Dir, now_ns: u64) -> Result<Self, AqmConfigError> {
        let link = c.plan.interfaces.as_ref().map_or(u64::MAX, |i| match dir {
            Dir::Download => i.download,
            Dir::Upload => i.upload,
        });
        let specs = specs(c, dir);
        let n = specs.len() + 1;
        let mut kids = vec![0usize; n];
        for s in &specs {
            kids[s.parent as usize] += 1;
        }
        let weights = weights(&specs);
        let node = |parent: u32, max: u64, min: Option<u64>, weight: u64, leaf: u32| Node {
            parent,
            max: Bucket::new(max, now_ns),
            min: min.map(|m| Bucket::new(m, now_ns)),
            weight,
            pass: 0,
            rem: 0,
            vtime: 0,
            busy: 0,
            open: true,
            min_open: true,
            gseq: 0,
            leaf,
            carried: false,
        };
        let mut nodes = Vec::with_capacity(n);
        nodes.push(node(NIL, link, None, 1, NIL));
        let mut leaves = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let weight = weights[i];
            let b = s.rates.get(dir);
            let leaf = if s.leaf { leaves.len() as u32 } else { NIL };
            let min = if s.leaf {
                b.min.filter(|&m| m > 0)
            } else {
                None
            };
            nodes.push(node(s.parent, b.max, min, weight, leaf));
            if s.leaf {
                let limit = leaf_limit(b.max);
                let cfg = FqCodelConfig {
                    buckets: LEAF_BUCKETS,
                    limit,
                    ..FqCodelConfig::RFC8290
                };
                // Within FQ-CoDel's ranges by construction (64 buckets, a
                // limit of 64..=2^24); its error is passed on all the same.
                leaves.push(Leaf {
                    node: i as u32 + 1,
                    fq: queue(cfg)?,
                    pending: None,
                });
            }
        }
        let heaps = || kids.iter().map(|&k| Heap::with_capacity(k)).collect();
        Ok(Tree {
            excess: heaps(),
            guaranteed: heaps(),
            xpos: vec![NIL; n],
            gpos: vec![NIL; n],
            max_timers: Heap::with_capacity(n),
            mpos: vec![NIL; n],
            min_timers: Heap::with_capacity(leaves.len()),
            npos: vec![NIL; n],
            gclock: 0,
            inner: (1..=c.plan.nodes.len() as u32).collect(),
            free: Vec::new(),
            nodes,
            leaves,
        })
    }

    /// Number of leaves.
    pub fn leaves(&self) -> usize {
        self.leaves.len()
    }

    /// A leaf's backlog.
    pub fn backlog(&self, leaf: u32) -> Backlog {
        self.leaves[leaf as usize].fq.backlog()
    }

    /// A leaf's FQ-CoDel drops so far.
    pub fn drops(&self, leaf: u32) -> fairway_core::aqm::DropCounts {
        self.leaves[leaf as usize].fq.drops()
    }

    /// Queues `p` in `leaf`. `Ok(Some(victim))`: FQ-CoDel's overflow drop
    /// (maybe `p` itself); `Err`: `p` refused (its length).
    pub fn enqueue(
        &mut self,
        leaf: u32,
        hash: u32,
        p: P,
        now_ns: u64,
    ) -> Result<Option<P>, EnqueueError<P>> {
        let l = &mut self.leaves[leaf as usize];
        let victim = l.fq.enqueue(hash, p, now_ns)?;
        if !l.fq.is_empty() && self.nodes[l.node as usize].busy == 0 {
            self.activate(leaf);
        }
        Ok(victim)
    }

    /// `leaf` has frames again: it and every ancestor that was idle
    /// become busy; a node that becomes busy starts at its parent's
    /// virtual time (idleness earns no credit), a guaranteed leaf goes
    /// last in the round robin; unless `carried` by a reload.
    fn activate(&mut self, leaf: u32) {
        let ln = self.leaves[leaf as usize].node as usize;
        let node = &mut self.nodes[ln];
        if node.min.is_some() && !node.carried {
            node.gseq = self.gclock;
            self.gclock += 1;
        }
        let mut n = ln;
        loop {
            let was = self.nodes[n].busy;
            self.nodes[n].busy += 1;
            if n == 0 {
                break;
            }
            let p = self.nodes[n].parent as usize;
            let vtime = self.nodes[p].vtime;
            let node = &mut self.nodes[n];
            if was == 0 && !node.carried {
                node.pass = node.pass.max(vtime);
            }
            n = p;
        }
        self.refresh(ln);
    }

    /// `leaf` has no frames left.
    fn deactivate(&mut self, leaf: u32) {
        let ln = self.leaves[leaf as usize].node as usize;
        let mut n = ln;
        loop {
            self.nodes[n].busy -= 1;
            if n == 0 {
                break;
            }
            n = self.nodes[n].parent as usize;
        }
        self.refresh(ln);
    }

    /// Brings `n`'s place in its parent's heaps up to date, and so on up
    /// to the root.
    fn refresh(&mut self, mut n: usize) {
        while n != 0 {
            let node = &self.nodes[n];
            let p = node.parent as usize;
            let leaf = node.leaf != NIL;
            let excess = node.open && node.busy > 0 && (leaf || !self.excess[n].is_empty());
            let (guaranteed, gkey) = if leaf {
                let g = node.open && node.busy > 0 && node.min.is_some() && node.min_open;
                (g, u128::from(node.gseq))
            } else {
                let top = self.guaranteed[n].top();
                (node.open && top.is_some(), top.map_or(0, |t| t.0))
            };
            let pass = node.pass;
            if excess {
                self.excess[p].set(n as u32, pass, &mut self.xpos);
            } else {
                self.excess[p].remove(n as u32, &mut self.xpos);
            }
            if guaranteed {
                self.guaranteed[p].set(n as u32, gkey, &mut self.gpos);
            } else {
                self.guaranteed[p].remove(n as u32, &mut self.gpos);
            }
            n = p;
        }
    }

    /// Opens the buckets whose time has come.
    fn fire(&mut self, now_ns: u64) {
        while let Some((at, n)) = self.max_timers.top() {
            if at > u128::from(now_ns) {
                break;
            }
            self.max_timers.pop(&mut self.mpos);
            let node = &mut self.nodes[n as usize];
            node.open = node.max.allows(now_ns);
            if !node.open {
                let at = u128::from(node.max.ready_at());
                self.max_timers.set(n, at, &mut self.mpos);
            }
            self.refresh(n as usize);
        }
        while let Some((at, n)) = self.min_timers.top() {
            if at > u128::from(now_ns) {
                break;
            }
            self.min_timers.pop(&mut self.npos);
            let node = &mut self.nodes[n as usize];
            let min = node.min.as_mut();
            node.min_open = min.is_none_or(|m| m.allows(now_ns));
            if !node.min_open {
                let at = u128::from(node.min.map_or(0, |m| m.ready_at()));
                self.min_timers.set(n, at, &mut self.npos);
            }
            self.refresh(n as usize);
        }
    }

    /// The leaf at the end of the path of heap tops from the root.
    fn descend(heaps: &[Heap], nodes: &[Node]) -> Option<u32> {
        let mut n = 0usize;
        loop {
            if nodes[n].leaf != NIL {
                return Some(nodes[n].leaf);
            }
            n = heaps[n].top()?.1 as usize;
        }
    }

    /// Charges a frame of `len` sent by `leaf` at `now_ns` (`excess`:
    /// from the excess, else from its guarantee) to its buckets and its
    /// ancestors'; closes each bucket taken into debt until it allows
    /// again.
    fn charge(&mut self, leaf: u32, len: u32, excess: bool, now_ns: u64) {
        let ln = self.leaves[leaf as usize].node as usize;
        if !excess {
            let node = &mut self.nodes[ln];
            node.gseq = self.gclock;
            self.gclock += 1;
            if let Some(m) = node.min.as_mut() {
                m.refill(now_ns);
                m.charge(len);
                if !m.allows(now_ns) {
                    node.min_open = false;
                    let at = u128::from(m.ready_at());
                    self.min_timers.set(ln as u32, at, &mut self.npos);
                }
            }
        }
        let mut n = ln;
        loop {
            let parent = self.nodes[n].parent;
            let node = &mut self.nodes[n];
            node.max.refill(now_ns);
            node.max.charge(len);
            if !node.max.allows(now_ns) {
                node.open = false;
                let at = u128::from(node.max.ready_at());
                self.max_timers.set(n as u32, at, &mut self.mpos);
            }
            if parent == NIL {
                break;
            }
            if excess {
                let served = node.pass;
                let w = node.weight;
                let step = u128::from(len) * STRIDE;
                node.pass += step / u128::from(w);
                node.rem += (step % u128::from(w)) as u64;
                if node.rem >= w {
                    node.rem -= w;
                    node.pass += 1;
                }
                self.nodes[parent as usize].vtime = served;
            }
            n = parent as usize;
        }
        self.refresh(ln);
    }

    /// The next frame to send at `now_ns` and its leaf; frames CoDel
    /// drops on the way go to `on_drop` with their leaf. `None`: nothing
    /// may be sent now ([`Self::ready_at`] says when to look again).
    pub fn dequeue(&mut self, now_ns: u64, on_drop: &mut impl FnMut(u32, P)) -> Option<(u32, P)> {
        self.fire(now_ns);
        loop {
            if self.nodes[0].busy == 0 || !self.nodes[0].open {
                return None;
            }
            let (leaf, excess) = match Self::descend(&self.guaranteed, &self.nodes) {
                Some(l) => (l, false),
                None => (Self::descend(&self.excess, &self.nodes)?, true),
            };
            let l = &mut self.leaves[leaf as usize];
            let p = l.fq.dequeue_with(now_ns, |p| on_drop(leaf, p));
            if l.fq.is_empty() {
                if let Some(fresh) = l.pending.take() {
                    l.fq = fresh;
                }
                self.deactivate(leaf);
            }
            if let Some(p) = p {
                self.charge(leaf, p.len(), excess, now_ns);
                return Some((leaf, p));
            }
        }
    }

    /// When to look again for a frame to send (`None`: nothing queued):
    /// the earliest time a bucket in debt allows again. Nothing may be
    /// sendable then still (another bucket on its path may be in debt),
    /// but nothing becomes sendable before.
    pub fn ready_at(&self) -> Option<u64> {
        if self.nodes[0].busy == 0 {
            return None;
        }
        let at = self.max_timers.top().map_or(0, |t| t.0);
        Some(u64::try_from(at).unwrap_or(u64::MAX))
    }

    /// Takes every frame out of `leaf` (a removed one), in order, to
    /// `on`.
    pub fn drain(&mut self, leaf: u32, now_ns: u64, mut on: impl FnMut(P)) {
        let fq = &mut self.leaves[leaf as usize].fq;
        while let Some(p) = fq.dequeue_with(now_ns, &mut on) {
            on(p);
        }
    }
}
