//! The shaping tree of one direction: the plan's hierarchy with two
//! rates per circuit, HTB-like, and FQ-CoDel inside every circuit.
//!
//! # Rate semantics
//!
//! The root is the link (its rate is the interface's rate in this
//! direction); below it the plan's nodes; the leaves are the circuits and
//! the default class. Every node and leaf has a *max* token bucket (its
//! ceiling); every node or leaf with a min above 0 also has a *min*
//! bucket ([`super::bucket`]: exact integers, bits × 10⁹ per ns).
//!
//! - **Ceiling.** A leaf may send only while its own max bucket and the
//!   max buckets of all its ancestors up to the root allow. Every frame
//!   sent is charged to all of them.
//! - **Guarantee first.** A node or leaf is *under its min* while its min
//!   bucket allows. At each dequeue, among the nodes and leaves under
//!   their min that have a sendable leaf below (backlogged, every max
//!   bucket on the way allows) and whose ancestors' max buckets allow,
//!   the one served from its guarantee least recently (or backlogged
//!   longest ago) is served first: a leaf sends a frame, a node sends the
//!   frame its own scheduler picks below it (as for the excess). That
//!   node or leaf *lends* the frame (as in HTB): the frame is charged to
//!   its min bucket and to the min buckets of its ancestors, not to those
//!   below it. So a node's min is guaranteed to its subtree as a whole,
//!   and the guaranteed frames of its descendants count towards it.
//! - **Excess by the node's scheduler.** Otherwise the capacity left is
//!   shared hierarchically from the root down: each inner node's
//!   scheduler (the plan's `policy`, any spec of fairway-core's registry,
//!   QFQ+ by default; the root's is QFQ+) chooses among its *eligible*
//!   children (backlogged below, max bucket allows), with the children's
//!   weights ([`crate::share`]). Excess frames charge no min bucket.
//!
//! So a backlogged circuit gets at least its min (the check makes the
//! mins fit in every parent), a node's subtree at least the node's min,
//! each its share of the rest by its parent's scheduler, and never more
//! than its max or any ancestor's max.
//!
//! # The schedulers ([`super::node_sched`])
//!
//! Each inner node owns a registry scheduler whose flows are its
//! children. An eligible child holds one token whose length is the
//! length of the child's last frame; serving the node peeks the token at
//! the head, descends into that child, and on the way up queues the
//! child's next token (if it is still eligible) before the served one
//! leaves, so a child that stays eligible is one continuously backlogged
//! flow to the scheduler. The scheduler's accounting of a child differs
//! from the bytes the child sent by less than one frame.
//!
//! A child that turns ineligible while its token waits (a guaranteed
//! frame took its bucket into debt or emptied it; a reload changed its
//! buckets) keeps the token: removing a flow's packet from a registry scheduler is not
//! possible without allocating. The token is *stale*; it is dropped when
//! it reaches the head (the child is skipped), or becomes valid again if
//! the child turns eligible first. A stale token dropped costs its child
//! at most one token (one frame, at most [`super::node_sched::TOKEN_MAX`]
//! bytes) of service each time the child turns ineligible outside its own
//! service, the same a flow that goes idle loses to fair queueing. A child
//! that turns eligible without a token gets one at the next descent
//! through its parent (in slot order).
//!
//! A reload edits the tree in place ([`TreeEdit`]): a parent whose
//! children or their weights change keeps its scheduler and edits only
//! the changed children's flows in it (a slot's token stays with the
//! slot, for the child that takes it); a parent whose policy changes,
//! or whose children outgrow or shrink its scheduler's room, gets a new
//! scheduler, built off the loop, and its eligible children a token
//! each in it (in slot order, as if they had just turned eligible).
//!
//! Why not the policy tree of fairway-core: its nodes share a link by
//! reservation, limit and weight with the rate given by the caller's send
//! clock; the shaper needs per-node ceilings and guarantees at every
//! level of a deep tree and a per-circuit FQ-CoDel, which the two token
//! buckets per node express directly.
//!
//! Costs: O(depth · (log children + the scheduler's cost)) per frame
//! (amortized: each stale token is dropped once, paid for by the event
//! that made it stale), whatever the number of busy circuits, and
//! nothing allocated per frame (every heap and scheduler is sized at
//! build, or by the reload that made it). Each node keeps a heap ([`super::heap`]) of its children with
//! a guaranteed node or leaf below, by the least recently served one,
//! and a heap of its eligible children without a token, by slot. A
//! bucket charged into debt takes its node out of its parent's choices
//! and sets a timer at the exact time it allows again; timers that are
//! due are handled at the start of each dequeue. So the selection is the
//! linear scan's (`tree_reference.rs`, in the tests), found by
//! descending from the root along heap tops and scheduler heads.

use super::bucket::Bucket;
use super::heap::Heap;
use super::node_sched::{NodeSched, FIRST_TOKEN};
use crate::plan::{Dir, Rates};
use crate::validate::Checked;
use fairway_core::aqm::{AqmConfigError, FqCodel, FqCodelConfig, Room};
use fairway_core::{Backlog, EnqueueError, Packet};

#[path = "tree_sched.rs"]
mod sched;

/// "None" in index fields.
const NIL: u32 = super::heap::NIL;
/// In a parent's list of children: the child is the leaf of this slot
/// (without it: the plan node of this slot).
const LEAF_KID: u32 = 1 << 31;
/// FQ-CoDel buckets per circuit: a subscriber has tens of flows, not
/// thousands; 64 keeps a circuit's queues at about 6 KiB plus its packet
/// slots.
pub const LEAF_BUCKETS: u32 = 64;
/// Their associativity: 8 sets of 8 buckets, as CAKE's, so that two flows
/// of a circuit share a bucket only when more than 8 flows with packets
/// queued hash into one set (a sparse flow whose home is a bulk flow's
/// bucket takes another one and keeps FQ-CoDel's sparse-flow priority).
pub const LEAF_WAYS: u32 = 8;
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
    /// Its guarantee (a min above 0).
    min: Option<Bucket>,
    /// Its flow in its parent's scheduler.
    slot: u32,
    /// It holds a token in its parent's scheduler (maybe stale).
    token: bool,
    /// The length of its last frame: its next token's.
    last: u32,
    /// Its eligible children.
    elig: u32,
    /// It is eligible (backlogged below, max bucket allows, an eligible
    /// child if inner), so counted in its parent's `elig`.
    counted: bool,
    /// Backlogged leaves below (a leaf: 1 while it has frames).
    busy: u32,
    /// The max bucket allows (false: a timer waits for it).
    open: bool,
    /// The min bucket allows (false: a timer waits for it).
    min_open: bool,
    /// When last served from its guarantee (or backlogged).
    gseq: u64,
    /// The leaf's index, `NIL` for inner nodes.
    leaf: u32,
}

struct Leaf<P> {
    node: u32,
    /// Boxed, so that a reload moves a pointer, not the queue's state.
    fq: Box<FqCodel<P>>,
    /// After a reload that changed the circuit's queue limit: room for
    /// the new limit, which the queue takes when it is empty (its next
    /// frame finds it empty, or it empties): the pause only puts it here,
    /// touching no queue, and frames are never copied between rooms.
    pending: Option<Room<P>>,
}

impl<P: Packet> Leaf<P> {
    /// The waiting room and its limit taken, if the queue is empty.
    #[inline]
    fn take_room(&mut self) {
        if self.pending.is_some() && self.fq.is_empty() {
            if let Some(room) = self.pending.take() {
                // Empty, so taken at once; the old room is freed here, as
                // a frame's buffer would be (no allocation).
                if let Err(room) = self.fq.relimit(room) {
                    self.pending = Some(room);
                }
            }
        }
    }
}

/// One direction's tree; leaves `0..circuits` are the circuits, leaf
/// `circuits` the default class (if the plan has one).
pub struct Tree<P> {
    nodes: Vec<Node>,
    leaves: Vec<Leaf<P>>,
    /// Per inner node, its children's scheduler.
    scheds: Vec<Option<NodeSched>>,
    /// Per inner node, its children by slot, each as its place in the
    /// plan: a node's slot, or a leaf's with [`LEAF_KID`] (so that a
    /// reload prepares the list of each parent whose children change off
    /// the loop and swaps it in; [`Self::kid`] finds the tree node).
    kids: Vec<Vec<u32>>,
    /// Per node, its eligible children without a token, by slot.
    pending: Vec<Heap>,
    /// Per node, its children with a guaranteed node or leaf below (or
    /// that are one), by the least `gseq` of those.
    guaranteed: Vec<Heap>,
    /// Each node's position in its parent's heaps.
    ppos: Vec<u32>,
    gpos: Vec<u32>,
    /// Nodes whose max bucket is in debt, by when it allows again.
    max_timers: Heap,
    mpos: Vec<u32>,
    /// Nodes whose min bucket is in debt, likewise.
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
    /// An inner node's children's scheduler.
    scheduler: Option<fairway_core::SchedSpec>,
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

impl Node {
    /// A node as a build makes it: buckets as given, not eligible, no
    /// token, idle.
    fn fresh(parent: u32, max: Bucket, min: Option<Bucket>, slot: u32, leaf: u32) -> Node {
        Node {
            parent,
            max,
            min,
            slot,
            token: false,
            last: FIRST_TOKEN,
            elig: 0,
            counted: false,
            busy: 0,
            open: true,
            min_open: true,
            gseq: 0,
            leaf,
        }
    }
}

/// A circuit's FQ-CoDel at max rate `max`: [`LEAF_BUCKETS`] buckets in
/// sets of [`LEAF_WAYS`], a limit of [`leaf_limit`] frames.
fn leaf_cfg(max: u64) -> FqCodelConfig {
    FqCodelConfig {
        buckets: LEAF_BUCKETS,
        ways: LEAF_WAYS,
        limit: leaf_limit(max),
        ..FqCodelConfig::RFC8290
    }
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
        let (kids, slots, scheds) = sched::layout(&specs);
        let node = |parent: u32, max: u64, min: Option<u64>, slot: u32, leaf: u32| {
            let min = min.filter(|&m| m > 0).map(|m| Bucket::new(m, now_ns));
            Node::fresh(parent, Bucket::new(max, now_ns), min, slot, leaf)
        };
        let mut nodes = Vec::with_capacity(n);
        nodes.push(node(NIL, link, None, 0, NIL));
        let mut leaves = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let b = s.rates.get(dir);
            let leaf = if s.leaf { leaves.len() as u32 } else { NIL };
            nodes.push(node(s.parent, b.max, b.min, slots[i + 1], leaf));
            if s.leaf {
                let cfg = leaf_cfg(b.max);
                // Within FQ-CoDel's ranges by construction (64 buckets in
                // sets of 8, a limit of 64..=2^24); its error is passed on all the same.
                leaves.push(Leaf {
                    node: i as u32 + 1,
                    fq: queue(cfg)?,
                    pending: None,
                });
            }
        }
        // An inner node's heaps have its scheduler's room, so a reload
        // that keeps the scheduler does not grow them in the pause.
        let room = |p: usize| {
            scheds[p]
                .as_ref()
                .map_or(0, |s: &NodeSched| s.room() as usize)
        };
        let heaps = || -> Vec<Heap> { (0..n).map(|p| Heap::with_capacity(room(p))).collect() };
        let (pending, guaranteed) = (heaps(), heaps());
        Ok(Tree {
            scheds,
            pending,
            guaranteed,
            kids,
            ppos: vec![NIL; n],
            gpos: vec![NIL; n],
            max_timers: Heap::with_capacity(n),
            mpos: vec![NIL; n],
            min_timers: Heap::with_capacity(n),
            npos: vec![NIL; n],
            gclock: 0,
            inner: (1..=c.plan.nodes.len() as u32).collect(),
            // Room for every node, so that a reload's pause frees
            // nodes without allocating.
            free: Vec::with_capacity(n),
            nodes,
            leaves,
        })
    }

    /// The tree node of a child in a parent's list ([`LEAF_KID`]).
    fn kid(&self, id: u32) -> usize {
        if id & LEAF_KID != 0 {
            self.leaves[(id & !LEAF_KID) as usize].node as usize
        } else {
            self.inner[id as usize] as usize
        }
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

    /// Frames queued in a bucket of `leaf`'s FQ-CoDel busy with another
    /// flow, since that queue was made (a reload that adds the circuit
    /// makes it; a queue limit change keeps it).
    pub fn collisions(&self, leaf: u32) -> u64 {
        self.leaves[leaf as usize].fq.collisions()
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
        l.take_room();
        let victim = l.fq.enqueue(hash, p, now_ns)?;
        if !l.fq.is_empty() && self.nodes[l.node as usize].busy == 0 {
            self.activate(leaf);
        }
        Ok(victim)
    }

    /// `leaf` has frames again: it and every ancestor that was idle
    /// become busy; each of them with a guarantee goes last in the round
    /// robin of guarantees (the leaf first).
    fn activate(&mut self, leaf: u32) {
        let ln = self.leaves[leaf as usize].node as usize;
        let mut n = ln;
        loop {
            let node = &mut self.nodes[n];
            node.busy += 1;
            if node.busy == 1 && node.min.is_some() {
                node.gseq = self.gclock;
                self.gclock += 1;
            }
            if n == 0 {
                break;
            }
            n = node.parent as usize;
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

    /// Brings `n`'s eligibility (its parent's count, its place among the
    /// children waiting for a token) and its place in its parent's heap
    /// of guarantees up to date, and so on up to the root.
    fn refresh(&mut self, mut n: usize) {
        while n != 0 {
            n = self.refresh_one(n);
        }
    }

    /// [`Self::refresh`]'s step: `n`'s place in its parent's choices;
    /// returns the parent.
    fn refresh_one(&mut self, n: usize) -> usize {
        let node = &self.nodes[n];
        let p = node.parent as usize;
        let eligible = node.open && node.busy > 0 && (node.leaf != NIL || node.elig > 0);
        let own = (eligible && node.min.is_some() && node.min_open).then_some(node.gseq);
        let below = self.guaranteed[n].top().map(|t| t.0 as u64);
        let gkey = match (own, below) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let gkey = gkey.filter(|_| node.open);
        let (token, slot, counted) = (node.token, node.slot, node.counted);
        if eligible != counted {
            self.nodes[n].counted = eligible;
            if eligible {
                self.nodes[p].elig += 1;
                if !token {
                    self.pending[p].set(n as u32, u128::from(slot), &mut self.ppos);
                }
            } else {
                self.nodes[p].elig -= 1;
                self.pending[p].remove(n as u32, &mut self.ppos);
            }
        }
        match gkey {
            Some(k) => self.guaranteed[p].set(n as u32, u128::from(k), &mut self.gpos),
            None => self.guaranteed[p].remove(n as u32, &mut self.gpos),
        }
        p
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

    /// The node or leaf to serve from its guarantee: the end of the path
    /// of heap tops from the root.
    fn lender(&self) -> Option<usize> {
        let mut n = 0usize;
        loop {
            let (key, c) = self.guaranteed[n].top()?;
            let node = &self.nodes[c as usize];
            let own = node.counted && node.min.is_some() && node.min_open;
            if own && u128::from(node.gseq) == key {
                return Some(c as usize);
            }
            n = c as usize;
        }
    }

    /// The leaf below `from` (eligible) its schedulers choose: at each
    /// node the children waiting for a token get one (in slot order),
    /// stale tokens at the head are dropped, the head's child is next.
    /// Tokens are only peeked: [`Self::pass_tokens`] serves them.
    fn descend(&mut self, from: usize) -> Option<u32> {
        let mut n = from;
        loop {
            if self.nodes[n].leaf != NIL {
                return Some(self.nodes[n].leaf);
            }
            let s = self.scheds[n].as_mut()?;
            while let Some((_, c)) = self.pending[n].pop(&mut self.ppos) {
                let child = &mut self.nodes[c as usize];
                child.token = s.push(child.slot, child.last);
            }
            n = loop {
                let slot = s.peek()?;
                // A spare's token (a reload left it past the children's
                // end) has no child: it is dropped as a stale one.
                let Some(&id) = self.kids[n].get(slot as usize) else {
                    s.pop();
                    continue;
                };
                let c = if id & LEAF_KID != 0 {
                    self.leaves[(id & !LEAF_KID) as usize].node as usize
                } else {
                    self.inner[id as usize] as usize
                };
                if self.nodes[c].counted {
                    break c;
                }
                s.pop();
                self.nodes[c].token = false;
            };
        }
    }

    /// After a frame of `len` bytes from `leaf` chosen by
    /// [`Self::descend`] from `from`: at each node on the way up to
    /// `from`, the child's next token is queued if it is still eligible,
    /// then the served one leaves.
    fn pass_tokens(&mut self, leaf: u32, len: u32, from: usize) {
        let mut c = self.leaves[leaf as usize].node as usize;
        while c != from {
            let p = self.nodes[c].parent as usize;
            let child = &mut self.nodes[c];
            child.last = len;
            let Some(s) = self.scheds[p].as_mut() else {
                return;
            };
            child.token = child.counted && s.push(child.slot, len);
            // The served token is the one peeked: only its own flow got
            // a packet since, which leaves every scheduler's choice as it was.
            let served = s.pop();
            debug_assert_eq!(served, Some(child.slot));
            c = p;
        }
    }

    /// Charges a frame of `len` sent by `leaf` at `now_ns` to its max
    /// buckets and its ancestors', and, if `lender` lent it from its
    /// guarantee, to the min buckets of the lender and its ancestors;
    /// closes each bucket taken into debt until it allows again.
    fn charge(&mut self, leaf: u32, len: u32, lender: Option<usize>, now_ns: u64) {
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
            node.max.refill(now_ns);
            node.max.charge(len);
            if !node.max.allows(now_ns) {
                node.open = false;
                let at = u128::from(node.max.ready_at());
                self.max_timers.set(n as u32, at, &mut self.mpos);
            }
            if let Some(m) = node.min.as_mut().filter(|_| lending) {
                m.refill(now_ns);
                m.charge(len);
                if !m.allows(now_ns) {
                    node.min_open = false;
                    let at = u128::from(m.ready_at());
                    self.min_timers.set(n as u32, at, &mut self.npos);
                }
            }
            if node.parent == NIL {
                break;
            }
            n = node.parent as usize;
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
            let lender = self.lender();
            let from = lender.unwrap_or(0);
            let leaf = self.descend(from)?;
            let l = &mut self.leaves[leaf as usize];
            let p = l.fq.dequeue_with(now_ns, |p| on_drop(leaf, p));
            if l.fq.is_empty() {
                l.take_room();
                self.deactivate(leaf);
            }
            if let Some(p) = p {
                self.charge(leaf, p.len(), lender, now_ns);
                self.pass_tokens(leaf, p.len(), from);
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
