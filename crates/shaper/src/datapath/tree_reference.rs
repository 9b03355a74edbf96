//! The shaping tree's selection as a linear scan: the reference the
//! property tests hold [`super::tree`] to. Same rules, same data, no
//! heaps: a dequeue scans the backlogged guaranteed leaves (the least
//! recently served one under its min whose path allows goes first) and,
//! per level, the active children in (pass, index) order.

#![allow(dead_code)]

use super::bucket::Bucket;
use crate::plan::{Dir, Rates};
use crate::validate::Checked;
use fairway_core::aqm::{AqmConfigError, FqCodel, FqCodelConfig};
use fairway_core::{Backlog, EnqueueError, Packet};

/// "None" in index fields.
const NIL: u32 = u32::MAX;
/// The pass scale: one byte at weight 1 advances a pass by 2⁴⁰.
const STRIDE: u128 = 1 << 40;
/// FQ-CoDel buckets per circuit: a subscriber has tens of flows, not
/// thousands; 64 keeps a circuit's queues at about 6 KiB plus its packet
/// slots.
const LEAF_BUCKETS: u32 = 64;
/// A circuit holds up to this much time of frames at its max rate
/// (at least [`MIN_LEAF_LIMIT`] frames), so its FQ-CoDel overflows only
/// when CoDel (target 5 ms) cannot keep the queue short.
const LEAF_QUEUE_NS: u64 = 100_000_000;
/// The smallest packet limit of a circuit.
const MIN_LEAF_LIMIT: u32 = 64;
/// The queue a leaf holds until it takes over a running one: the
/// smallest FQ-CoDel (within its ranges, so its construction cannot fail).
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
    /// Children with backlog below them (capacity: all children).
    active: Vec<u32>,
    /// Position in the parent's `active`; `NIL`: not active.
    pos: u32,
    /// The leaf's index, `NIL` for inner nodes.
    leaf: u32,
    /// Only while a reload activates: the pass is the one this node had
    /// while active under the same parent.
    carried: bool,
}

struct Leaf<P> {
    node: u32,
    fq: FqCodel<P>,
    /// After a reload that changed the circuit's queue limit while it
    /// held frames: the queue of the new limit, swapped in when `fq`
    /// empties (frames are never moved between queues: that would lose
    /// their flows' order and CoDel's state).
    pending: Option<FqCodel<P>>,
    /// Position in the guaranteed list; `NIL`: not in it.
    gpos: u32,
    /// When last served from its guarantee (or activated).
    gseq: u64,
}

/// One direction's tree; leaves `0..circuits` are the circuits, leaf
/// `circuits` the default class (if the plan has one).
pub struct Tree<P> {
    nodes: Vec<Node>,
    leaves: Vec<Leaf<P>>,
    /// Backlogged leaves with a guarantee.
    guaranteed: Vec<u32>,
    rr: usize,
    gclock: u64,
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

impl<P: Packet> Tree<P> {
    /// The tree of direction `dir` of a checked plan, its buckets full as
    /// of `now_ns`. The root's rate is the link's (unlimited without
    /// `[interfaces]`).
    pub fn new(c: &Checked, dir: Dir, now_ns: u64) -> Result<Self, AqmConfigError> {
        Self::build(c, dir, now_ns, |_| None)
    }

    /// As [`Self::new`], for a reload: a leaf for which `old_limit(leaf)`
    /// gives the packet limit of the running queue it will take over
    /// ([`Self::take_over`]) gets an empty one-packet stand-in, and, if
    /// its own limit differs, its new queue waiting; so everything a
    /// reload allocates is allocated here, before the swap.
    pub fn build(
        c: &Checked,
        dir: Dir,
        now_ns: u64,
        old_limit: impl Fn(u32) -> Option<u32>,
    ) -> Result<Self, AqmConfigError> {
        let link = c.plan.interfaces.as_ref().map_or(u64::MAX, |i| match dir {
            Dir::Download => i.download,
            Dir::Upload => i.upload,
        });
        let specs = specs(c, dir);
        let n = specs.len() + 1;
        let mut kids = vec![0usize; n];
        let mut any_weight = vec![false; n];
        for s in &specs {
            let p = s.parent as usize;
            kids[p] += 1;
            any_weight[p] |= s.weight.is_some();
        }
        let node =
            |parent: u32, max: u64, min: Option<u64>, weight: u64, kids: usize, leaf: u32| Node {
                parent,
                max: Bucket::new(max, now_ns),
                min: min.map(|m| Bucket::new(m, now_ns)),
                weight,
                pass: 0,
                rem: 0,
                vtime: 0,
                active: Vec::with_capacity(kids),
                pos: NIL,
                leaf,
                carried: false,
            };
        let mut nodes = Vec::with_capacity(n);
        nodes.push(node(NIL, link, None, 1, kids[0], NIL));
        let mut leaves = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let p = s.parent as usize;
            let weight = match s.weight {
                Some(w) => u64::from(w),
                None if any_weight[p] => 1,
                None => s.guarantee.max(1),
            };
            let b = s.rates.get(dir);
            let leaf = if s.leaf { leaves.len() as u32 } else { NIL };
            let min = if s.leaf {
                b.min.filter(|&m| m > 0)
            } else {
                None
            };
            nodes.push(node(s.parent, b.max, min, weight, kids[i + 1], leaf));
            if s.leaf {
                let limit = leaf_limit(b.max);
                let cfg = FqCodelConfig {
                    buckets: LEAF_BUCKETS,
                    limit,
                    ..FqCodelConfig::RFC8290
                };
                // Within FQ-CoDel's ranges by construction (64 buckets, a
                // limit of 64..=2^24); its error is passed on all the same.
                let (fq, pending) = match old_limit(leaves.len() as u32) {
                    None => (FqCodel::new(cfg)?, None),
                    Some(l) if l == limit => (FqCodel::new(STAND_IN)?, None),
                    Some(_) => (FqCodel::new(STAND_IN)?, Some(FqCodel::new(cfg)?)),
                };
                leaves.push(Leaf {
                    node: i as u32 + 1,
                    fq,
                    pending,
                    gpos: NIL,
                    gseq: 0,
                });
            }
        }
        let guaranteed = Vec::with_capacity(leaves.len());
        Ok(Tree {
            nodes,
            leaves,
            guaranteed,
            rr: 0,
            gclock: 0,
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
        if !l.fq.is_empty() && self.nodes[l.node as usize].pos == NIL {
            self.activate(leaf);
        }
        Ok(victim)
    }

    /// Activates `leaf` and its inactive ancestors; a node that becomes
    /// active starts at its parent's virtual time, unless `carried` (its
    /// pass is the one it had while active in a tree this one took over).
    fn activate(&mut self, leaf: u32) {
        let l = &mut self.leaves[leaf as usize];
        let mut n = l.node as usize;
        if self.nodes[n].min.is_some() {
            l.gpos = self.guaranteed.len() as u32;
            l.gseq = self.gclock;
            self.gclock += 1;
            self.guaranteed.push(leaf);
        }
        while n != 0 && self.nodes[n].pos == NIL {
            let p = self.nodes[n].parent as usize;
            let vtime = self.nodes[p].vtime;
            let pos = self.nodes[p].active.len() as u32;
            let node = &mut self.nodes[n];
            if !node.carried {
                node.pass = node.pass.max(vtime);
            }
            node.pos = pos;
            self.nodes[p].active.push(n as u32);
            n = p;
        }
    }

    fn deactivate(&mut self, leaf: u32) {
        let l = &mut self.leaves[leaf as usize];
        let gpos = std::mem::replace(&mut l.gpos, NIL);
        let mut n = l.node as usize;
        if gpos != NIL {
            self.guaranteed.swap_remove(gpos as usize);
            if let Some(&moved) = self.guaranteed.get(gpos as usize) {
                self.leaves[moved as usize].gpos = gpos;
            }
        }
        while n != 0 {
            let p = self.nodes[n].parent as usize;
            let pos = std::mem::replace(&mut self.nodes[n].pos, NIL) as usize;
            self.nodes[p].active.swap_remove(pos);
            if let Some(&moved) = self.nodes[p].active.get(pos) {
                self.nodes[moved as usize].pos = pos as u32;
            }
            if !self.nodes[p].active.is_empty() {
                break;
            }
            n = p;
        }
    }

    /// True if `n`'s max bucket and all its ancestors' allow at `now`.
    fn path_allows(&mut self, mut n: usize, now_ns: u64) -> bool {
        loop {
            if !self.nodes[n].max.allows(now_ns) {
                return false;
            }
            if n == 0 {
                return true;
            }
            n = self.nodes[n].parent as usize;
        }
    }

    fn pick_guaranteed(&mut self, now_ns: u64) -> Option<u32> {
        let mut best: Option<(u64, u32)> = None;
        for i in 0..self.guaranteed.len() {
            let leaf = self.guaranteed[i];
            let n = self.leaves[leaf as usize].node as usize;
            let under_min = self.nodes[n].min.as_mut().is_some_and(|m| m.allows(now_ns));
            if under_min && self.path_allows(n, now_ns) {
                let k = (self.leaves[leaf as usize].gseq, leaf);
                if best.is_none_or(|b| k < b) {
                    best = Some(k);
                }
            }
        }
        best.map(|b| b.1)
    }

    /// The leaf below `n` (whose max allows) the excess goes to.
    fn pick_excess(&mut self, n: usize, now_ns: u64) -> Option<u32> {
        if self.nodes[n].leaf != NIL {
            return Some(self.nodes[n].leaf);
        }
        // Children by (pass, index), each tried once.
        let mut after: Option<(u128, u32)> = None;
        loop {
            let next = self.nodes[n]
                .active
                .iter()
                .map(|&c| (self.nodes[c as usize].pass, c))
                .filter(|&k| after.is_none_or(|a| k > a))
                .min()?;
            after = Some(next);
            let c = next.1 as usize;
            if self.nodes[c].max.allows(now_ns) {
                if let Some(leaf) = self.pick_excess(c, now_ns) {
                    return Some(leaf);
                }
            }
        }
    }

    fn charge(&mut self, leaf: u32, len: u32, excess: bool) {
        let mut n = self.leaves[leaf as usize].node as usize;
        if !excess {
            self.leaves[leaf as usize].gseq = self.gclock;
            self.gclock += 1;
            if let Some(m) = self.nodes[n].min.as_mut() {
                m.charge(len);
            }
        }
        loop {
            let parent = self.nodes[n].parent;
            let node = &mut self.nodes[n];
            node.max.charge(len);
            if parent == NIL {
                return;
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
    }

    /// The next frame to send at `now_ns` and its leaf; frames CoDel
    /// drops on the way go to `on_drop` with their leaf. `None`: nothing
    /// may be sent now ([`Self::ready_at`] says when).
    pub fn dequeue(&mut self, now_ns: u64, on_drop: &mut impl FnMut(u32, P)) -> Option<(u32, P)> {
        loop {
            let (leaf, excess) = match self.pick_guaranteed(now_ns) {
                Some(l) => (l, false),
                None if self.nodes[0].max.allows(now_ns) => (self.pick_excess(0, now_ns)?, true),
                None => return None,
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
                self.charge(leaf, p.len(), excess);
                return Some((leaf, p));
            }
        }
    }

    /// The earliest time a backlogged leaf's path allows again (`None`:
    /// nothing queued).
    pub fn ready_at(&self) -> Option<u64> {
        if self.nodes[0].active.is_empty() {
            return None;
        }
        Some(self.earliest(0))
    }

    fn earliest(&self, n: usize) -> u64 {
        let node = &self.nodes[n];
        let own = node.max.ready_at();
        if node.leaf != NIL {
            return own;
        }
        let below = node
            .active
            .iter()
            .map(|&c| self.earliest(c as usize))
            .min()
            .unwrap_or(u64::MAX);
        own.max(below)
    }
}
