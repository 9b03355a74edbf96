//! A reload's change to a running [`Tree`], in place: [`TreeEdit::new`]
//! (off the loop) compares the running plan with the new one, arranged
//! so that what stays keeps its slot ([`super::slots`]), and allocates
//! everything the change needs; [`Tree::edit`] (in the loop's pause)
//! applies it, touching only what changed:
//!
//! - a removed circuit's frames are drained (to be counted as removed),
//!   it leaves its ancestors' busy counts and heaps, its node is freed;
//! - a new node or circuit gets a free (or appended) tree node, full
//!   buckets, and its queue, allocated off the loop;
//! - a node or circuit with other rates keeps what its buckets hold at
//!   the new rates (at most the new burst; a debt stays a debt), one
//!   with another weight weighs anew from its next frame;
//! - a moved node or circuit (its whole subtree, frames and all) leaves
//!   its old parent's heaps and busy counts and joins the new parent's,
//!   starting level with its new siblings (its pass at the parent's
//!   virtual time, a guaranteed leaf last in the round robin);
//! - a circuit whose queue limit changed gets its new queue at once if
//!   it is empty, else once its running queue empties (frames are never
//!   moved between queues: that would lose their flows' order and
//!   CoDel's state).
//!
//! Moves and additions are applied in order of depth in the new plan, so
//! each joins a parent whose own path is already the new plan's (a node
//! moved under its former child cannot make a cycle on the way).
//! O(changes · depth · log), plus the frames of removed circuits.

use super::{queue, specs, weights, Leaf, Node, Tree, LEAF_BUCKETS, NIL, STAND_IN};
use crate::datapath::bucket::Bucket;
use crate::datapath::heap::Heap;
use crate::datapath::slots::Rearrange;
use crate::plan::Dir;
use crate::validate::Checked;
use fairway_core::aqm::{AqmConfigError, FqCodel, FqCodelConfig};
use fairway_core::Packet;

/// A node or circuit that is new or changed.
#[derive(Clone, Copy, Debug)]
struct Item {
    /// Its slot (a node's or a leaf's).
    slot: u32,
    leaf: bool,
    /// Its parent's node slot + 1 (0: the root).
    parent: u32,
    max: u64,
    min: Option<u64>,
    weight: u64,
    added: bool,
    moved: bool,
}

/// One direction's change, prepared off the loop.
pub struct TreeEdit<P> {
    /// The link's new rate, if it changed.
    link: Option<u64>,
    /// The leaves' slots (circuits, then the default class).
    pub leaves: Rearrange,
    /// The plan nodes' slots.
    pub nodes: Rearrange,
    /// New and changed nodes and leaves, by depth in the new plan.
    items: Vec<Item>,
    /// Queues for the new leaves and for those whose limit changed.
    queues: Vec<(u32, Box<FqCodel<P>>)>,
    /// Stand-ins for [`Rearrange::apply`] (boxed, as the leaves hold
    /// their queues: the pause moves pointers, not queues).
    #[allow(clippy::vec_box)]
    stand_ins: Vec<Box<FqCodel<P>>>,
    /// What leaves the tree: dropped away from the loop.
    retired_leaves: Vec<Leaf<P>>,
    #[allow(clippy::vec_box)]
    retired_queues: Vec<Box<FqCodel<P>>>,
}

fn leaf_cfg(max: u64) -> FqCodelConfig {
    FqCodelConfig {
        buckets: LEAF_BUCKETS,
        limit: super::leaf_limit(max),
        ..FqCodelConfig::RFC8290
    }
}

impl<P: Packet> TreeEdit<P> {
    /// The change of direction `dir` from `old` (the running plan) to
    /// `new` (arranged by slot): `node_from` and `leaf_from` give each
    /// new slot's old one.
    pub fn new(
        old: &Checked,
        new: &Checked,
        node_from: &[Option<u32>],
        leaf_from: &[Option<u32>],
        dir: Dir,
    ) -> Result<Self, AqmConfigError> {
        let (os, ns) = (specs(old, dir), specs(new, dir));
        let (ow, nw) = (weights(&os), weights(&ns));
        let (on, nn) = (old.plan.nodes.len(), new.plan.nodes.len());
        let leaves = Rearrange::of(leaf_from, os.len() - on);
        let nodes = Rearrange::of(node_from, on);
        // An old spec parent (tree index of a fresh build) of a new one.
        let old_parent = |p: u32| match p {
            0 => Some(0),
            p => node_from[p as usize - 1].map(|o| o + 1),
        };
        let depth = |p: u32| match p {
            0 => 0,
            p => new.node_depth[p as usize - 1],
        };
        let mut items = Vec::new();
        let mut queues = Vec::new();
        let mut keyed = Vec::new();
        for (i, s) in ns.iter().enumerate() {
            let leaf = s.leaf;
            let slot = if leaf { i - nn } else { i } as u32;
            let from = if leaf { leaf_from } else { node_from }[slot as usize];
            let b = s.rates.get(dir);
            let min = if leaf { b.min.filter(|&m| m > 0) } else { None };
            let mut item = Item {
                slot,
                leaf,
                parent: s.parent,
                max: b.max,
                min,
                weight: nw[i],
                added: from.is_none(),
                moved: false,
            };
            if let Some(o) = from {
                let oi = if leaf { o as usize + on } else { o as usize };
                let was = &os[oi];
                let ob = was.rates.get(dir);
                let omin = if leaf {
                    ob.min.filter(|&m| m > 0)
                } else {
                    None
                };
                item.moved = old_parent(s.parent) != Some(was.parent);
                let same = ob.max == b.max && omin == min && ow[oi] == nw[i];
                if same && !item.moved {
                    continue;
                }
                if leaf && super::leaf_limit(ob.max) != super::leaf_limit(b.max) {
                    queues.push((slot, queue(leaf_cfg(b.max))?));
                }
            } else if leaf {
                queues.push((slot, queue(leaf_cfg(b.max))?));
            }
            keyed.push((depth(s.parent), items.len()));
            items.push(item);
        }
        keyed.sort_by_key(|k| k.0);
        let items = keyed.into_iter().map(|(_, k)| items[k]).collect();
        let stand_ins = (0..leaves.fresh_count())
            .map(|_| queue(STAND_IN))
            .collect::<Result<_, _>>()?;
        let link = |c: &Checked| {
            c.plan.interfaces.as_ref().map_or(u64::MAX, |i| match dir {
                Dir::Download => i.download,
                Dir::Upload => i.upload,
            })
        };
        let retire = leaves.fresh_count() + leaves.removed.len();
        Ok(TreeEdit {
            link: (link(old) != link(new)).then(|| link(new)),
            retired_leaves: Vec::with_capacity(retire),
            retired_queues: Vec::with_capacity(queues.len() + 1),
            leaves,
            nodes,
            items,
            queues,
            stand_ins,
        })
    }

    /// Nothing to do in the pause.
    pub fn is_empty(&self) -> bool {
        self.link.is_none()
            && self.leaves.is_identity()
            && self.nodes.is_identity()
            && self.items.is_empty()
            && self.queues.is_empty()
    }
}

impl<P: Packet> Tree<P> {
    /// Applies `e` at `now_ns` (see the module doc); the frames of the
    /// removed leaves go to `removed` with their (old) leaf. What leaves
    /// the tree stays in `e`, to be dropped off the loop.
    pub fn edit(&mut self, e: &mut TreeEdit<P>, now_ns: u64, mut removed: impl FnMut(u32, P)) {
        for &o in &e.leaves.removed {
            let ln = self.leaves[o as usize].node;
            // Only a busy leaf has frames: an idle one's queue is not
            // touched (the pause stays O(changes), not O(queues read)).
            if self.nodes[ln as usize].busy > 0 {
                self.drain(o, now_ns, |p| removed(o, p));
                self.deactivate(o);
            }
            self.release(ln);
        }
        let mut gone = Vec::with_capacity(e.nodes.removed.len());
        let keep = |t: u32| {
            if t != NIL {
                gone.push(t);
            }
        };
        e.nodes.apply(&mut self.inner, |_| NIL, keep);
        let TreeEdit {
            stand_ins,
            retired_leaves,
            leaves,
            ..
        } = &mut *e;
        leaves.apply(
            &mut self.leaves,
            |_| Leaf {
                node: NIL,
                fq: stand_ins.pop().unwrap_or_else(|| Box::new(stand_in())),
                pending: None,
            },
            |l| retired_leaves.push(l),
        );
        for &(_, s) in &e.leaves.moves {
            let n = self.leaves[s as usize].node;
            if n != NIL {
                self.nodes[n as usize].leaf = s;
            }
        }
        for (slot, q) in e.queues.drain(..) {
            let l = &mut self.leaves[slot as usize];
            let idle = l.node == NIL || self.nodes[l.node as usize].busy == 0;
            let old = if idle {
                std::mem::replace(&mut l.fq, q)
            } else {
                match l.pending.replace(q) {
                    Some(p) => p,
                    None => continue,
                }
            };
            e.retired_queues.push(old);
        }
        for k in 0..e.items.len() {
            let it = e.items[k];
            let parent = match it.parent {
                0 => 0,
                p => self.inner[p as usize - 1],
            };
            if it.added {
                self.add(it, parent, now_ns);
            } else {
                self.change(it, parent, now_ns);
            }
        }
        for t in gone {
            self.release(t);
        }
        if let Some(rate) = e.link {
            let mut b = Bucket::new(rate, now_ns);
            b.carry(&self.nodes[0].max, now_ns);
            self.nodes[0].max = b;
            self.reopen(0, now_ns);
        }
    }

    /// Frees tree node `t` (idle, without children): out of its
    /// parent's heaps and the timers.
    fn release(&mut self, t: u32) {
        let p = self.nodes[t as usize].parent;
        if p != NIL {
            self.excess[p as usize].remove(t, &mut self.xpos);
            self.guaranteed[p as usize].remove(t, &mut self.gpos);
        }
        self.max_timers.remove(t, &mut self.mpos);
        self.min_timers.remove(t, &mut self.npos);
        let node = &mut self.nodes[t as usize];
        node.parent = NIL;
        node.leaf = NIL;
        node.busy = 0;
        self.free.push(t);
    }

    /// A tree node for a new node or leaf.
    fn alloc(&mut self) -> u32 {
        if let Some(t) = self.free.pop() {
            return t;
        }
        let t = self.nodes.len() as u32;
        self.nodes.push(fresh(NIL, Bucket::new(0, 0), None, 1, NIL));
        self.excess.push(Heap::default());
        self.guaranteed.push(Heap::default());
        for pos in [
            &mut self.xpos,
            &mut self.gpos,
            &mut self.mpos,
            &mut self.npos,
        ] {
            pos.push(NIL);
        }
        t
    }

    fn add(&mut self, it: Item, parent: u32, now_ns: u64) {
        let t = self.alloc();
        let min = it.min.map(|m| Bucket::new(m, now_ns));
        let leaf = if it.leaf { it.slot } else { NIL };
        self.nodes[t as usize] = fresh(parent, Bucket::new(it.max, now_ns), min, it.weight, leaf);
        if it.leaf {
            self.leaves[it.slot as usize].node = t;
        } else {
            self.inner[it.slot as usize] = t;
        }
    }

    fn change(&mut self, it: Item, parent: u32, now_ns: u64) {
        let t = if it.leaf {
            self.leaves[it.slot as usize].node
        } else {
            self.inner[it.slot as usize]
        };
        let state = |n: &Node| (n.open, n.min_open, n.min.is_some());
        let was = state(&self.nodes[t as usize]);
        let node = &mut self.nodes[t as usize];
        let mut max = Bucket::new(it.max, now_ns);
        max.carry(&node.max, now_ns);
        node.max = max;
        node.min = it.min.map(|m| {
            let mut b = Bucket::new(m, now_ns);
            if let Some(was) = &node.min {
                b.carry(was, now_ns);
            }
            b
        });
        node.weight = it.weight;
        self.reopen(t, now_ns);
        // The heaps hold open, busy children by pass and turn: only a
        // move, a bucket that opened or closed, or a guarantee that came
        // or went changes them.
        if it.moved {
            self.relink(t, parent);
            self.refresh(t as usize);
        } else if was != state(&self.nodes[t as usize]) {
            self.refresh(t as usize);
        }
    }

    /// Sets `t`'s open flags from its buckets at `now_ns`, each closed
    /// one with its timer, each open one without.
    fn reopen(&mut self, t: u32, now_ns: u64) {
        let node = &mut self.nodes[t as usize];
        node.open = node.max.allows(now_ns);
        if node.open {
            self.max_timers.remove(t, &mut self.mpos);
        } else {
            let at = u128::from(node.max.ready_at());
            self.max_timers.set(t, at, &mut self.mpos);
        }
        node.min_open = node.min.as_mut().is_none_or(|m| m.allows(now_ns));
        match node.min {
            Some(m) if !node.min_open => {
                let at = u128::from(m.ready_at());
                self.min_timers.set(t, at, &mut self.npos);
            }
            _ => self.min_timers.remove(t, &mut self.npos),
        }
    }

    /// Moves `t` (with its subtree) under `parent`.
    fn relink(&mut self, t: u32, parent: u32) {
        let (old, busy) = (self.nodes[t as usize].parent, self.nodes[t as usize].busy);
        self.excess[old as usize].remove(t, &mut self.xpos);
        self.guaranteed[old as usize].remove(t, &mut self.gpos);
        self.add_busy(old, busy, false);
        self.refresh(old as usize);
        let vtime = self.nodes[parent as usize].vtime;
        let gclock = self.gclock;
        let node = &mut self.nodes[t as usize];
        node.parent = parent;
        (node.pass, node.rem) = (vtime, 0);
        if node.leaf != NIL && busy > 0 {
            node.gseq = gclock;
            self.gclock += 1;
        }
        self.add_busy(parent, busy, true);
    }

    /// Adds (or takes) `busy` to `n` and its ancestors.
    fn add_busy(&mut self, mut n: u32, busy: u32, more: bool) {
        if busy == 0 {
            return;
        }
        while n != NIL {
            let node = &mut self.nodes[n as usize];
            node.busy = if more {
                node.busy + busy
            } else {
                node.busy - busy
            };
            n = node.parent;
        }
    }
}

fn stand_in<P: Packet>() -> FqCodel<P> {
    // Within FQ-CoDel's ranges: one bucket, one packet.
    match FqCodel::new(STAND_IN) {
        Ok(q) => q,
        Err(_) => unreachable!("the stand-in's configuration is within FQ-CoDel's ranges"),
    }
}

/// A node as a fresh build makes it.
fn fresh(parent: u32, max: Bucket, min: Option<Bucket>, weight: u64, leaf: u32) -> Node {
    Node {
        parent,
        max,
        min,
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
    }
}

#[cfg(test)]
#[path = "tree_edit_tests.rs"]
mod tests;
