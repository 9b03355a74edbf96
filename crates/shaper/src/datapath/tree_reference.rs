//! The shaping tree's selection as a linear scan: the reference the
//! property tests hold [`super::tree`] to. Same rules, same data, no
//! heaps, no timers, no eligibility flags: a dequeue scans every node
//! and leaf under its min whose subtree can send (eligibility computed
//! afresh from the buckets and queues) and serves the least recently
//! served one; otherwise, from the root down, each node's registry
//! scheduler (built here from the spec directly) is given a token for
//! every eligible child without one (in slot order), its stale head
//! tokens are dropped, and its head child is next.
//!
//! It models a tree as built, not a reload: the reload's rules (what a
//! circuit that stays keeps; a changed queue limit taken by the kept
//! queue once it is empty, its frames never copied) are the real tree's
//! edit's, tested against a tree built afresh in `tree_edit_tests`.

#![allow(dead_code)]

use super::bucket::Bucket;
use super::node_sched::{FIRST_TOKEN, TOKEN_MAX};
use crate::plan::{Dir, Rates};
use crate::share::{weights, Kid};
use crate::validate::Checked;
use fairway_core::aqm::{AqmConfigError, FqCodel, FqCodelConfig};
use fairway_core::{
    Backlog, Capacity, EnqueueError, FlowConfig, FlowId, Limits, Packet, SchedSpec, Scheduler,
};

/// "None" in index fields.
const NIL: u32 = u32::MAX;
/// FQ-CoDel buckets per circuit: a subscriber has tens of flows, not
/// thousands; 64 keeps a circuit's queues at about 6 KiB plus its packet
/// slots.
const LEAF_BUCKETS: u32 = 64;
/// Their associativity: 8 sets of 8 buckets, as CAKE's, so that two flows
/// of a circuit share a bucket only when more than 8 flows with packets
/// queued hash into one set (a sparse flow whose home is a bulk flow's
/// bucket takes another one and keeps FQ-CoDel's sparse-flow priority).
const LEAF_WAYS: u32 = 8;
/// A circuit holds up to this much time of frames at its max rate
/// (at least [`MIN_LEAF_LIMIT`] frames), so its FQ-CoDel overflows only
/// when CoDel (target 5 ms) cannot keep the queue short.
const LEAF_QUEUE_NS: u64 = 100_000_000;
/// The smallest packet limit of a circuit.
const MIN_LEAF_LIMIT: u32 = 64;
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
    /// Its guarantee.
    min: Option<Bucket>,
    /// Children with backlog below them (capacity: all children).
    active: Vec<u32>,
    /// Position in the parent's `active`; `NIL`: not active.
    pos: u32,
    /// The leaf's index, `NIL` for inner nodes.
    leaf: u32,
    /// When last served from its guarantee (or activated).
    gseq: u64,
    /// Its children by slot (inner nodes).
    kids: Vec<u32>,
    /// Its slot in its parent's scheduler.
    slot: u32,
    /// It holds a token there.
    token: bool,
    /// Its last frame's length.
    last: u32,
    /// Its children's scheduler (inner nodes).
    sched: Option<Box<dyn Scheduler<u32> + Send>>,
}

struct Leaf<P> {
    node: u32,
    fq: FqCodel<P>,
}

/// One direction's tree; leaves `0..circuits` are the circuits, leaf
/// `circuits` the default class (if the plan has one).
pub struct Tree<P> {
    nodes: Vec<Node>,
    leaves: Vec<Leaf<P>>,
    gclock: u64,
    now: u64,
}

/// A child of the tree, as the plan gives it.
struct Spec {
    parent: u32,
    rates: Rates,
    weight: Option<u32>,
    guarantee: u64,
    leaf: bool,
    scheduler: Option<SchedSpec>,
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
        scheduler: Some(n.scheduler.clone()),
    });
    let circuits = plan.circuits.iter().enumerate().map(|(i, k)| Spec {
        parent: parent(c.circuit_parent[i]),
        rates: k.rates,
        weight: k.weight,
        guarantee: k.rates.get(dir).min.unwrap_or(0),
        leaf: true,
        scheduler: None,
    });
    let default = plan.default_class.iter().map(|k| Spec {
        parent: parent(c.default_parent),
        rates: k.rates,
        weight: None,
        guarantee: k.rates.get(dir).min.unwrap_or(0),
        leaf: true,
        scheduler: None,
    });
    nodes.chain(circuits).chain(default).collect()
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
        let node = |parent: u32, max: u64, min: Option<u64>, leaf: u32| Node {
            parent,
            max: Bucket::new(max, now_ns),
            min: min.filter(|&m| m > 0).map(|m| Bucket::new(m, now_ns)),
            active: Vec::new(),
            pos: NIL,
            leaf,
            gseq: 0,
            kids: Vec::new(),
            slot: 0,
            token: false,
            last: FIRST_TOKEN,
            sched: None,
        };
        let mut nodes = Vec::with_capacity(n);
        nodes.push(node(NIL, link, None, NIL));
        let mut leaves = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let b = s.rates.get(dir);
            let leaf = if s.leaf { leaves.len() as u32 } else { NIL };
            nodes.push(node(s.parent, b.max, b.min, leaf));
            let slot = nodes[s.parent as usize].kids.len() as u32;
            nodes[i + 1].slot = slot;
            nodes[s.parent as usize].kids.push(i as u32 + 1);
            if s.leaf {
                let limit = leaf_limit(b.max);
                let cfg = FqCodelConfig {
                    buckets: LEAF_BUCKETS,
                    ways: LEAF_WAYS,
                    limit,
                    ..FqCodelConfig::RFC8290
                };
                leaves.push(Leaf {
                    node: i as u32 + 1,
                    fq: FqCodel::new(cfg)?,
                });
            }
        }
        // Each inner node's scheduler over its children, weighed by the
        // plan's rule; the root's is the default.
        for p in 0..n {
            let spec = match p {
                0 => crate::plan::default_scheduler(),
                _ => match &specs[p - 1].scheduler {
                    Some(s) => s.clone(),
                    None => continue,
                },
            };
            let group: Vec<Kid> = nodes[p]
                .kids
                .iter()
                .map(|&c| Kid {
                    weight: specs[c as usize - 1].weight,
                    guarantee: specs[c as usize - 1].guarantee,
                })
                .collect();
            let w = weights(&group).expect("checked");
            let k = (w.len() as u32).max(1);
            let mut s = spec.build::<u32>(Capacity::new(k, 2 * k), Limits::DEFAULT);
            for (slot, &w) in w.iter().enumerate() {
                s.add_flow(FlowId(slot as u32), FlowConfig::new(w, TOKEN_MAX))
                    .expect("weights in range");
            }
            nodes[p].active = Vec::with_capacity(w.len());
            nodes[p].sched = Some(s);
        }
        Ok(Tree {
            nodes,
            leaves,
            gclock: 0,
            now: now_ns,
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

    /// Activates `leaf` and its inactive ancestors; each with a
    /// guarantee goes last in the round robin (the leaf first).
    fn activate(&mut self, leaf: u32) {
        let mut n = self.leaves[leaf as usize].node as usize;
        if self.nodes[n].min.is_some() {
            self.nodes[n].gseq = self.gclock;
            self.gclock += 1;
        }
        while n != 0 && self.nodes[n].pos == NIL {
            let p = self.nodes[n].parent as usize;
            let pos = self.nodes[p].active.len() as u32;
            self.nodes[n].pos = pos;
            self.nodes[p].active.push(n as u32);
            if p != 0 && self.nodes[p].pos == NIL && self.nodes[p].min.is_some() {
                self.nodes[p].gseq = self.gclock;
                self.gclock += 1;
            }
            n = p;
        }
    }

    fn deactivate(&mut self, leaf: u32) {
        let mut n = self.leaves[leaf as usize].node as usize;
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
    fn path_allows(&mut self, mut n: usize) -> bool {
        let now = self.now;
        loop {
            if !self.nodes[n].max.allows(now) {
                return false;
            }
            if n == 0 {
                return true;
            }
            n = self.nodes[n].parent as usize;
        }
    }

    /// True if `n` could send now, its ancestors aside: its max allows
    /// and it has frames (a leaf) or an eligible child.
    fn eligible(&mut self, n: usize) -> bool {
        if !self.nodes[n].max.allows(self.now) {
            return false;
        }
        if self.nodes[n].leaf != NIL {
            return !self.leaves[self.nodes[n].leaf as usize].fq.is_empty();
        }
        (0..self.nodes[n].kids.len()).any(|i| self.eligible(self.nodes[n].kids[i] as usize))
    }

    /// The node or leaf under its min, eligible, whose ancestors allow,
    /// served from its guarantee least recently.
    fn pick_guaranteed(&mut self) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for n in 1..self.nodes.len() {
            let now = self.now;
            let under = self.nodes[n].min.as_mut().is_some_and(|m| m.allows(now));
            let p = self.nodes[n].parent as usize;
            if under && self.eligible(n) && self.path_allows(p) {
                let k = (self.nodes[n].gseq, n);
                if best.is_none_or(|b| k < b) {
                    best = Some(k);
                }
            }
        }
        best.map(|b| b.1)
    }

    /// The leaf below `n` its schedulers choose (tokens peeked only).
    fn pick(&mut self, mut n: usize) -> Option<u32> {
        loop {
            if self.nodes[n].leaf != NIL {
                return Some(self.nodes[n].leaf);
            }
            for i in 0..self.nodes[n].kids.len() {
                let c = self.nodes[n].kids[i] as usize;
                if !self.nodes[c].token && self.eligible(c) {
                    let (slot, last) = (self.nodes[c].slot, self.nodes[c].last);
                    let s = self.nodes[n].sched.as_mut()?;
                    let ok = s.enqueue(FlowId(slot), last.clamp(1, TOKEN_MAX)).is_ok();
                    self.nodes[c].token = ok;
                }
            }
            n = loop {
                let slot = self.nodes[n].sched.as_mut()?.peek()?.0 .0;
                let c = self.nodes[n].kids[slot as usize] as usize;
                if self.eligible(c) {
                    break c;
                }
                self.nodes[n].sched.as_mut()?.dequeue();
                self.nodes[c].token = false;
            };
        }
    }

    fn charge(&mut self, leaf: u32, len: u32, lender: Option<usize>) {
        let ln = self.leaves[leaf as usize].node as usize;
        if let Some(g) = lender {
            self.nodes[g].gseq = self.gclock;
            self.gclock += 1;
        }
        let mut lending = false;
        let mut n = ln;
        loop {
            lending |= lender == Some(n);
            let node = &mut self.nodes[n];
            node.max.charge(len);
            if let Some(m) = node.min.as_mut().filter(|_| lending) {
                m.charge(len);
            }
            if node.parent == NIL {
                break;
            }
            n = node.parent as usize;
        }
        // The tokens, from the leaf up to where the choice started.
        let from = lender.unwrap_or(0);
        let mut c = ln;
        while c != from {
            let p = self.nodes[c].parent as usize;
            self.nodes[c].last = len;
            let keep = self.eligible(c);
            let slot = FlowId(self.nodes[c].slot);
            let s = self.nodes[p].sched.as_mut().expect("inner");
            let ok = keep && s.enqueue(slot, len.clamp(1, TOKEN_MAX)).is_ok();
            s.dequeue();
            self.nodes[c].token = ok;
            c = p;
        }
    }

    /// The next frame to send at `now_ns` and its leaf; frames CoDel
    /// drops on the way go to `on_drop` with their leaf. `None`: nothing
    /// may be sent now ([`Self::ready_at`] says when).
    pub fn dequeue(&mut self, now_ns: u64, on_drop: &mut impl FnMut(u32, P)) -> Option<(u32, P)> {
        self.now = now_ns;
        loop {
            // Nothing queued: nothing is chosen (no stale token dropped).
            if self.nodes[0].active.is_empty() || !self.nodes[0].max.allows(now_ns) {
                return None;
            }
            let lender = self.pick_guaranteed();
            let leaf = self.pick(lender.unwrap_or(0))?;
            let l = &mut self.leaves[leaf as usize];
            let p = l.fq.dequeue_with(now_ns, |p| on_drop(leaf, p));
            if l.fq.is_empty() {
                self.deactivate(leaf);
            }
            if let Some(p) = p {
                self.charge(leaf, p.len(), lender);
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
