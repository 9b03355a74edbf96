//! A reload's change to a running [`Tree`], in place: [`TreeEdit::new`]
//! (off the loop) compares the running plan with the new one, arranged
//! so that what stays keeps its slot ([`super::slots`]), and allocates
//! everything the change needs; [`Tree::edit`] (in the loop's pause)
//! applies it, touching only what changed:
//!
//! - a removed circuit's frames are drained (to be counted as removed),
//!   it leaves its ancestors' busy counts and heaps, its node is freed;
//! - a new node or circuit gets a free (or appended) tree node, full
//!   buckets (max, and min if it has one), and its queue, allocated off
//!   the loop;
//! - a node or circuit with other rates keeps what its buckets hold at
//!   the new rates (at most the new burst; a debt stays a debt); a min
//!   bucket that comes starts full, one that goes is dropped;
//! - a moved node or circuit (its whole subtree, frames and all) leaves
//!   its old parent's busy counts and joins the new parent's; a busy one
//!   with a min goes last in the guarantees' round robin;
//! - a parent whose children (which, or in which slots) or their
//!   weights ([`crate::share`]) change *keeps* its scheduler while its
//!   policy and its children's room ([`room`]) stay: the pause edits
//!   only the slots that change ([`SlotOp`]: a flow added, removed or
//!   reweighted). A slot's tokens stay with the slot: the running child
//!   that leaves a slot lets go of its place first (not counted
//!   eligible, no token), and the child that takes it holds a token
//!   exactly when the slot's flow does (so a child shifted into a gap
//!   takes over the removed child's turn: one token at most, as a flow
//!   that turned eligible). O(changed slots · log) per kept parent;
//! - a *regrouped* parent (its policy or its children's room changes,
//!   or a new node): its scheduler is built off the loop for its new
//!   children (their weights, its spec) with its heaps, sized for its
//!   room. In the pause, before anything moves, every regrouped or
//!   removed parent lets go of its children (out of its heaps, not
//!   counted eligible, no token: its old scheduler and its tokens go,
//!   to be dropped off the loop) and takes its new scheduler; once every
//!   move is done it takes its children's list (their slots) and each
//!   eligible child gets one token in slot order: a child starts level
//!   with its siblings, as if it had just turned eligible (a registry
//!   scheduler's flow that comes back from idle: no credit, no debt).
//!   Its list of children is prepared too: the pause sets the slots of
//!   the children that move in, come or shift, so each regrouped parent
//!   costs O((those + its eligible children) · log), not O(its
//!   children). A parent whose children and their weights stay keeps
//!   its scheduler and its children's tokens; where one of its children
//!   stays but takes another slot number of `inner` or `leaves` (the
//!   rearrangement fills a removed item's slot from the tail), the pause
//!   renames that child's entry in its list (O(such children));
//! - a circuit whose queue limit changed keeps its queue (its frames,
//!   their flows' order, CoDel's state, its counters); room for the new
//!   limit, allocated off the loop (allocated, not written: cheap),
//!   waits in the leaf, and the queue takes it and the new limit
//!   ([`FqCodel::relimit`]) when it is empty: at the circuit's next
//!   frame if it is idle, else once it has emptied (frames are never
//!   copied between rooms). The pause touches no queue for this.
//!
//! Moves and additions are applied in order of depth in the new plan, so
//! each joins a parent whose own path is already the new plan's (a node
//! moved under its former child cannot make a cycle on the way).
//! O((changes + eligible children of regrouped parents) · depth · log), plus
//! the frames of removed circuits. Nothing is allocated in the pause but
//! the tree's own vectors when it grows past its largest size so far
//! (a tree node appended); a kept scheduler's flows are edited in room
//! sized when it was built ([`NodeSched::edit`]).

use super::sched::{group_weights, groups, kid_id, scheduler, spec_of};
use super::{leaf_cfg, queue, specs, Leaf, Node, Spec, Tree, NIL, STAND_IN};
use crate::datapath::bucket::Bucket;
use crate::datapath::heap::Heap;
use crate::datapath::node_sched::{room, NodeSched, SlotOp};
use crate::datapath::slots::Rearrange;
use crate::plan::Dir;
use crate::validate::Checked;
use fairway_core::aqm::{AqmConfigError, FqCodel, Room};
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
    added: bool,
    moved: bool,
}

/// A parent whose children, their weights or its policy change: its new
/// scheduler and heaps, built off the loop with room for its new
/// children; after the pause, what the tree held before.
struct Regroup {
    /// The parent in the new plan: its node slot + 1 (0: the root).
    parent: u32,
    /// Its node slot + 1 in the running plan, if it was there.
    old: Option<u32>,
    /// Its depth in the new plan (the root's is 0).
    depth: u32,
    /// Its children by slot, as the tree lists them ([`Tree::kid`]).
    list: Vec<u32>,
    /// The children at another slot than before (moved in, added, or
    /// shifted), with their new slot.
    reslot: Vec<(u32, u32)>,
    /// The tree nodes of its children it let go of in the pause (room
    /// for all its running children).
    reset: Vec<u32>,
    sched: Option<NodeSched>,
    pending: Heap,
    guaranteed: Heap,
    /// A parent that keeps its scheduler ([`Kept`]); `sched` and the
    /// heaps are then unused.
    kept: Option<Kept>,
}

/// What a parent that keeps its scheduler changes in it: its policy is
/// the same and its children's room ([`room`]) too.
struct Kept {
    /// The flows that come, go or are reweighted, removals first.
    ops: Vec<SlotOp>,
    /// Its running slots whose child changes (or that go): each one's
    /// child lets go of its place in the pause, before anything moves.
    vacate: Vec<u32>,
    /// Its new slots whose child changes (or that come): each one's new
    /// child takes the slot's tokens.
    handover: Vec<u32>,
}

/// A parent lets go of its children's tokens by serving them from its
/// old scheduler while they are fewer than its children over this, else
/// by reading its list of children: a token served costs the scheduler's
/// dequeue (its bookkeeping and a few cache lines), a child read two
/// lookups and a flag.
const SCAN_PER_TOKEN: u64 = 16;

/// What a removed inner node held, kept to be dropped off the loop.
type Retired = (Option<NodeSched>, Vec<u32>, Heap, Heap);

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
    /// Parents to regroup, deepest first.
    regroups: Vec<Regroup>,
    /// List entries of the other parents to name their child anew.
    relabels: Vec<Relabel>,
    /// Per new plan parent (node slot + 1, 0: the root), its index in
    /// `regroups` (`NIL`: none).
    by_parent: Vec<u32>,
    /// Queues for the new leaves.
    queues: Vec<(u32, Box<FqCodel<P>>)>,
    /// Room for the new limit of the leaves whose limit changed.
    rooms: Vec<(u32, Room<P>)>,
    /// The rooms still waiting that the new ones overtake (sized before
    /// the pause: one per leaf at most).
    retired_rooms: Vec<Room<P>>,
    /// Stand-ins for [`Rearrange::apply`] (boxed, as the leaves hold
    /// their queues: the pause moves pointers, not queues).
    #[allow(clippy::vec_box)]
    stand_ins: Vec<Box<FqCodel<P>>>,
    /// What leaves the tree: dropped away from the loop.
    retired_leaves: Vec<Leaf<P>>,
    #[allow(clippy::vec_box)]
    retired_queues: Vec<Box<FqCodel<P>>>,
    retired_groups: Vec<Retired>,
    /// The tree nodes of the removed plan nodes, found in the pause.
    gone: Vec<u32>,
}

/// A list entry of a parent that is not regrouped whose child stays
/// but at another slot of `inner` or `leaves` (the rearrangement fills
/// the gaps of removed items from the tail): (parent node slot + 1, the
/// child's place in the list, its new entry).
type Relabel = (u32, u32, u32);

/// The parents of `new` whose group differs from the running one (other
/// children or slots, weights or scheduler) and the new ones, each with
/// its scheduler and heaps for its new children, deepest first; and the
/// entries of the other parents' lists that must name their child anew.
fn regroups(
    (old, os): (&Checked, &[Spec]),
    (new, ns): (&Checked, &[Spec]),
    node_from: &[Option<u32>],
    leaf_from: &[Option<u32>],
) -> (Vec<Regroup>, Vec<Relabel>) {
    let (on, nn) = (old.plan.nodes.len(), new.plan.nodes.len());
    let (og, ng) = (groups(os), groups(ns));
    // Each running child's (parent, slot), by its list entry.
    let mut was_at = crate::fast_hash::Map::default();
    for (p, g) in og.iter().enumerate() {
        for (slot, &c) in g.iter().enumerate() {
            was_at.insert(kid_id(c, on), (p as u32, slot as u32));
        }
    }
    let mut out = Vec::new();
    let mut relabels = Vec::new();
    // The root and the plan's nodes (leaves have no children).
    for (p, kids) in ng.iter().enumerate().take(nn + 1) {
        let weights = group_weights(ns, kids);
        let spec = spec_of(ns, p);
        let from = match p {
            0 => Some(0),
            p => node_from[p - 1].map(|o| o + 1),
        };
        let list: Vec<u32> = kids.iter().map(|&c| kid_id(c, nn)).collect();
        // Each child's entry in the running plan's lists.
        let before = |id: u32| {
            let (from, s) = if id & super::LEAF_KID != 0 {
                (leaf_from, id & !super::LEAF_KID)
            } else {
                (node_from, id)
            };
            from[s as usize].map(|f| f | (id & super::LEAF_KID))
        };
        let same = from.is_some_and(|o| {
            let was = &og[o as usize];
            was.len() == list.len()
                && list
                    .iter()
                    .zip(was)
                    .all(|(&id, &c)| before(id) == Some(kid_id(c, on)))
                && group_weights(os, was) == weights
                && spec_of(os, o as usize) == spec
        });
        if same {
            // The same children in the same places; an entry naming a
            // child whose slot was filled from the tail names it anew.
            let was = &og[from.unwrap_or(0) as usize];
            for (k, (&id, &c)) in list.iter().zip(was).enumerate() {
                if id != kid_id(c, on) {
                    relabels.push((p as u32, k as u32, id));
                }
            }
            continue;
        }
        let reslot = list
            .iter()
            .enumerate()
            .map(|(slot, &id)| (id, slot as u32))
            .filter(|&(id, slot)| {
                let at = before(id).and_then(|b| was_at.get(&b).copied());
                from.is_none_or(|o| at != Some((o, slot)))
            })
            .collect();
        let k = list.len();
        let kept = from.and_then(|o| {
            let was = &og[o as usize];
            let keeps =
                spec.is_some() && spec_of(os, o as usize) == spec && room(was.len()) == room(k);
            let old_ids: Vec<u32> = was.iter().map(|&c| kid_id(c, on)).collect();
            // A shifted child costs a kept scheduler its let-go and
            // hand-over; a regrouped one pays for it too (its slot set,
            // its heap key fixed) and re-tokens every eligible child:
            // keeping is never the costlier pause.
            keeps.then(|| kept(&old_ids, &group_weights(os, was), &list, &weights, before))
        });
        let reset = match &kept {
            Some(kp) => kp.vacate.len(),
            None => from.map_or(0, |o| og[o as usize].len()),
        };
        // A kept parent's scheduler and heaps are its own.
        let (sched, heap) = match kept {
            Some(_) => (None, 0),
            None => (spec.map(|s| scheduler(&s, &weights)), room(k) as usize),
        };
        out.push(Regroup {
            parent: p as u32,
            old: from,
            depth: match p {
                0 => 0,
                p => new.node_depth[p - 1] as u32 + 1,
            },
            list,
            reslot,
            reset: Vec::with_capacity(reset),
            sched,
            pending: Heap::with_capacity(heap),
            guaranteed: Heap::with_capacity(heap),
            kept,
        });
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.depth));
    (out, relabels)
}

/// The changes of a parent that keeps its scheduler, from its running
/// children (`was`, list entries of the running plan) and their weights
/// to its new ones (`list`, entries of the new plan); `before` gives a
/// new entry's running one. O(children), off the loop.
fn kept(
    was: &[u32],
    old_w: &[u32],
    list: &[u32],
    new_w: &[u32],
    before: impl Fn(u32) -> Option<u32>,
) -> Kept {
    let (o, n) = (was.len(), list.len());
    let same = |k: usize| k < o && k < n && before(list[k]) == Some(was[k]);
    // Removals, then the weights that fall, then those that rise and the
    // flows that come: the weights' sum never exceeds the new one's on
    // the way (the check keeps that one within the scheduler's limit).
    let mut ops: Vec<SlotOp> = (n..o).map(|k| SlotOp::Remove(k as u32)).collect();
    let falls = |k: usize| k < o && new_w[k] < old_w[k];
    for k in (0..n).filter(|&k| falls(k)) {
        ops.push(SlotOp::Reweight(k as u32, new_w[k]));
    }
    for k in (0..n).filter(|&k| !falls(k)) {
        if k >= o {
            ops.push(SlotOp::Add(k as u32, new_w[k]));
        } else if old_w[k] != new_w[k] {
            ops.push(SlotOp::Reweight(k as u32, new_w[k]));
        }
    }
    Kept {
        ops,
        vacate: (0..o).filter(|&k| !same(k)).map(|k| k as u32).collect(),
        handover: (0..n).filter(|&k| !same(k)).map(|k| k as u32).collect(),
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
        let mut rooms = Vec::new();
        let mut keyed = Vec::new();
        for (i, s) in ns.iter().enumerate() {
            let leaf = s.leaf;
            let slot = if leaf { i - nn } else { i } as u32;
            let from = if leaf { leaf_from } else { node_from }[slot as usize];
            let b = s.rates.get(dir);
            let min = b.min.filter(|&m| m > 0);
            let mut item = Item {
                slot,
                leaf,
                parent: s.parent,
                max: b.max,
                min,
                added: from.is_none(),
                moved: false,
            };
            if let Some(o) = from {
                let oi = if leaf { o as usize + on } else { o as usize };
                let was = &os[oi];
                let ob = was.rates.get(dir);
                let omin = ob.min.filter(|&m| m > 0);
                item.moved = old_parent(s.parent) != Some(was.parent);
                let same = ob.max == b.max && omin == min;
                if same && !item.moved {
                    continue;
                }
                let limit = super::leaf_limit(b.max);
                if leaf && super::leaf_limit(ob.max) != limit {
                    rooms.push((slot, FqCodel::room_for(limit)?));
                }
            } else if leaf {
                queues.push((slot, queue(leaf_cfg(b.max))?));
            }
            keyed.push((depth(s.parent), items.len()));
            items.push(item);
        }
        keyed.sort_by_key(|k| k.0);
        let items = keyed.into_iter().map(|(_, k)| items[k]).collect();
        let (regroups, relabels) = regroups((old, &os), (new, &ns), node_from, leaf_from);
        let mut by_parent = vec![NIL; nn + 1];
        for (k, r) in regroups.iter().enumerate() {
            by_parent[r.parent as usize] = k as u32;
        }
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
            retired_rooms: Vec::with_capacity(rooms.len()),
            retired_groups: Vec::with_capacity(nodes.removed.len()),
            gone: Vec::with_capacity(nodes.removed.len()),
            leaves,
            nodes,
            items,
            regroups,
            relabels,
            by_parent,
            queues,
            rooms,
            stand_ins,
        })
    }

    /// The parents that take a new scheduler (the others keep theirs).
    pub fn regrouped(&self) -> usize {
        self.regroups.iter().filter(|r| r.kept.is_none()).count()
    }

    /// Of the parents that keep their schedulers: the flows added,
    /// removed or reweighted, and the slots whose child changes.
    pub fn kept_work(&self) -> (usize, usize) {
        let kept = self.regroups.iter().filter_map(|r| r.kept.as_ref());
        kept.fold((0, 0), |(o, v), k| (o + k.ops.len(), v + k.vacate.len()))
    }

    /// Nothing to do in the pause.
    pub fn is_empty(&self) -> bool {
        self.link.is_none()
            && self.leaves.is_identity()
            && self.nodes.is_identity()
            && self.items.is_empty()
            && self.regroups.is_empty()
            && self.relabels.is_empty()
            && self.queues.is_empty()
            && self.rooms.is_empty()
    }
}

impl<P: Packet> Tree<P> {
    /// Applies `e` at `now_ns` (see the module doc); the frames of the
    /// removed leaves go to `removed` with their (old) leaf. What leaves
    /// the tree stays in `e`, to be dropped off the loop.
    pub fn edit(&mut self, e: &mut TreeEdit<P>, now_ns: u64, mut removed: impl FnMut(u32, P)) {
        self.detach_all(e);
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
        let gone = &mut e.gone;
        gone.clear();
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
        for &(p, k, id) in &e.relabels {
            let t = self.tree_node(p) as usize;
            self.kids[t][k as usize] = id;
        }
        for (slot, q) in e.queues.drain(..) {
            let old = std::mem::replace(&mut self.leaves[slot as usize].fq, q);
            e.retired_queues.push(old);
        }
        for (slot, room) in e.rooms.drain(..) {
            // The queue is not touched here (one cache miss fewer per
            // circuit): it takes the room when empty. A room still
            // waiting from an earlier reload is overtaken.
            if let Some(waiting) = self.leaves[slot as usize].pending.replace(room) {
                e.retired_rooms.push(waiting);
            }
        }
        for k in 0..e.items.len() {
            let it = e.items[k];
            let parent = self.tree_node(it.parent);
            if it.added {
                self.add(it, parent, now_ns, e);
            } else {
                self.change(it, parent, now_ns);
            }
        }
        for k in 0..e.gone.len() {
            self.release(e.gone[k]);
        }
        for r in &mut e.regroups {
            self.attach(r);
        }
        if let Some(rate) = e.link {
            let mut b = Bucket::new(rate, now_ns);
            b.carry(&self.nodes[0].max, now_ns);
            self.nodes[0].max = b;
            self.reopen(0, now_ns);
        }
    }

    /// The tree node of a plan parent (node slot + 1, 0: the root), as
    /// `inner` says.
    fn tree_node(&self, parent: u32) -> u32 {
        match parent {
            0 => 0,
            p => self.inner[p as usize - 1],
        }
    }

    /// Before anything moves: every running parent that is regrouped or
    /// removed lets go of its children (out of its heaps and scheduler,
    /// not counted eligible, no token); a regrouped one takes its new
    /// scheduler and heaps, so that its children join them as the edit
    /// goes (their slots are set at [`Self::attach`]), a removed one
    /// gives its own to `e`.
    fn detach_all(&mut self, e: &mut TreeEdit<P>) {
        for r in &mut e.regroups {
            let Some(o) = r.old else { continue };
            let t = self.tree_node(o) as usize;
            if let Some(kp) = &r.kept {
                self.vacate(t, &kp.vacate, &mut r.reset);
                continue;
            }
            self.let_go(t, &mut r.reset);
            std::mem::swap(&mut self.scheds[t], &mut r.sched);
            std::mem::swap(&mut self.pending[t], &mut r.pending);
            std::mem::swap(&mut self.guaranteed[t], &mut r.guaranteed);
        }
        for &o in &e.nodes.removed {
            let t = self.inner[o as usize] as usize;
            // Its children are removed or moved: each move finds them a
            // place.
            self.let_go(t, &mut Vec::new());
            e.retired_groups.push((
                self.scheds[t].take(),
                std::mem::take(&mut self.kids[t]),
                std::mem::take(&mut self.pending[t]),
                std::mem::take(&mut self.guaranteed[t]),
            ));
        }
    }

    /// The children in slots `slots` of kept parent `t` let go of their
    /// places (not counted eligible, out of its heap of those waiting, no
    /// token: the slot's tokens stay with the slot) and go to `reset`.
    fn vacate(&mut self, t: usize, slots: &[u32], reset: &mut Vec<u32>) {
        for &k in slots {
            let c = self.kid(self.kids[t][k as usize]);
            let n = &mut self.nodes[c];
            if n.counted {
                n.counted = false;
                self.nodes[t].elig -= 1;
            }
            self.nodes[c].token = false;
            self.pending[t].remove(c as u32, &mut self.ppos);
            reset.push(c as u32);
        }
    }

    /// `t`'s children leave its heaps and scheduler's choices: an
    /// eligible child waits for a token or holds one, so those waiting
    /// and the token holders are all the children to reset. The holders
    /// are found by serving the old scheduler's tokens (O(tokens · log))
    /// or, when tokens are many for the children ([`SCAN_PER_TOKEN`]),
    /// by reading the list of children (O(children)).
    /// The eligible ones go to `reset` (it has room for every child; a
    /// removed node's children need no record).
    fn let_go(&mut self, t: usize, reset: &mut Vec<u32>) {
        let mut record = |c: u32| {
            if reset.len() < reset.capacity() {
                reset.push(c);
            }
        };
        while let Some((_, c)) = self.pending[t].pop(&mut self.ppos) {
            self.nodes[c as usize].counted = false;
            record(c);
        }
        if let Some(mut s) = self.scheds[t].take() {
            if s.held().saturating_mul(SCAN_PER_TOKEN) < self.kids[t].len() as u64 {
                while let Some(slot) = s.pop() {
                    // A spare's token has no child.
                    let Some(&id) = self.kids[t].get(slot as usize) else {
                        continue;
                    };
                    let c = self.kid(id);
                    (self.nodes[c].counted, self.nodes[c].token) = (false, false);
                    record(c as u32);
                }
            } else {
                // Many tokens: reading the list is cheaper than serving
                // them; the old scheduler keeps them and goes as it is.
                for k in 0..self.kids[t].len() {
                    let c = self.kid(self.kids[t][k]);
                    let n = &mut self.nodes[c];
                    if n.token {
                        (n.counted, n.token) = (false, false);
                        record(c as u32);
                    }
                }
            }
            self.scheds[t] = Some(s);
        }
        self.guaranteed[t].clear(&mut self.gpos);
        self.nodes[t].elig = 0;
    }

    /// After the edit: regrouped parent `r` takes its children's list,
    /// those at another slot than before take theirs, the busy ones it
    /// let go of that stay find their place again, and its eligible
    /// children get their tokens in its new scheduler (in slot order);
    /// O((children moved, added or shifted + eligible children) · log),
    /// plus its path to the root.
    fn attach(&mut self, r: &mut Regroup) {
        let t = self.tree_node(r.parent) as usize;
        std::mem::swap(&mut self.kids[t], &mut r.list);
        if let (Some(kp), Some(s)) = (&r.kept, self.scheds[t].as_mut()) {
            let children = self.kids[t].len() as u32;
            for &op in &kp.ops {
                let done = s.edit(op, children);
                debug_assert!(done, "the check refuses weights a scheduler cannot take");
            }
            s.trim(children);
        }
        for k in 0..r.reslot.len() {
            let (id, slot) = r.reslot[k];
            let c = self.kid(id);
            self.nodes[c].slot = slot;
            // A child that joined the heap under its former slot.
            if self.ppos[c] != NIL {
                self.pending[t].set(c as u32, u128::from(slot), &mut self.ppos);
            }
        }
        if let Some(kp) = &r.kept {
            self.handover(t, &kp.handover);
        }
        for k in 0..r.reset.len() {
            let c = r.reset[k] as usize;
            // One that moved, or was removed, has its place elsewhere.
            if self.nodes[c].parent as usize != t {
                continue;
            }
            self.refresh_one(c);
            if self.ppos[c] != NIL {
                let slot = self.nodes[c].slot;
                self.pending[t].set(c as u32, u128::from(slot), &mut self.ppos);
            }
        }
        if let Some(s) = self.scheds[t].as_mut() {
            while let Some((_, c)) = self.pending[t].pop(&mut self.ppos) {
                let child = &mut self.nodes[c as usize];
                child.token = s.push(child.slot, child.last);
            }
        }
        self.refresh(t);
    }

    /// Kept parent `t`'s new child in each of `slots` holds a token
    /// exactly when the slot's flow does, and waits for one in its heap
    /// exactly when it is counted eligible without one.
    fn handover(&mut self, t: usize, slots: &[u32]) {
        let Some(s) = self.scheds[t].as_ref() else {
            return;
        };
        for &k in slots {
            let c = self.kid(self.kids[t][k as usize]);
            let token = s.tokens(k) > 0;
            let n = &mut self.nodes[c];
            n.token = token;
            if n.counted && !token {
                self.pending[t].set(c as u32, u128::from(k), &mut self.ppos);
            } else {
                self.pending[t].remove(c as u32, &mut self.ppos);
            }
        }
    }

    /// Frees tree node `t` (idle, without children): out of its
    /// parent's heaps and the timers.
    fn release(&mut self, t: u32) {
        let p = self.nodes[t as usize].parent;
        if p != NIL {
            if self.nodes[t as usize].counted {
                self.nodes[p as usize].elig -= 1;
            }
            self.pending[p as usize].remove(t, &mut self.ppos);
            self.guaranteed[p as usize].remove(t, &mut self.gpos);
        }
        self.max_timers.remove(t, &mut self.mpos);
        self.min_timers.remove(t, &mut self.npos);
        let node = &mut self.nodes[t as usize];
        node.parent = NIL;
        node.leaf = NIL;
        node.busy = 0;
        (node.counted, node.token) = (false, false);
        self.free.push(t);
    }

    /// A tree node for a new node or leaf.
    fn alloc(&mut self) -> u32 {
        if let Some(t) = self.free.pop() {
            return t;
        }
        let t = self.nodes.len() as u32;
        self.nodes
            .push(Node::fresh(NIL, Bucket::new(0, 0), None, 0, NIL));
        // The free list keeps room for every node (growing here, where
        // the tree grows anyway).
        self.free
            .reserve(self.nodes.len().saturating_sub(self.free.len()));
        self.scheds.push(None);
        self.kids.push(Vec::new());
        self.pending.push(Heap::default());
        self.guaranteed.push(Heap::default());
        for pos in [
            &mut self.ppos,
            &mut self.gpos,
            &mut self.mpos,
            &mut self.npos,
        ] {
            pos.push(NIL);
        }
        t
    }

    /// A new node or leaf under `parent`; a new node takes its scheduler
    /// and heaps from its regroup in `e`.
    fn add(&mut self, it: Item, parent: u32, now_ns: u64, e: &mut TreeEdit<P>) {
        let t = self.alloc();
        let min = it.min.map(|m| Bucket::new(m, now_ns));
        let leaf = if it.leaf { it.slot } else { NIL };
        self.nodes[t as usize] = Node::fresh(parent, Bucket::new(it.max, now_ns), min, 0, leaf);
        if it.leaf {
            self.leaves[it.slot as usize].node = t;
            return;
        }
        self.inner[it.slot as usize] = t;
        let k = e.by_parent[it.slot as usize + 1];
        if let Some(r) = e.regroups.get_mut(k as usize) {
            let t = t as usize;
            std::mem::swap(&mut self.scheds[t], &mut r.sched);
            std::mem::swap(&mut self.pending[t], &mut r.pending);
            std::mem::swap(&mut self.guaranteed[t], &mut r.guaranteed);
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
        self.reopen(t, now_ns);
        // The heaps hold eligible children and guarantees: only a move,
        // a bucket that opened or closed, or a guarantee that came or
        // went changes them.
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

    /// Moves `t` (with its subtree) under `parent`: it leaves its old
    /// parent's choices (it may be counted there again: a move of one of
    /// its own children refreshes it before it moves, and a kept parent
    /// keeps its count) without a token (the new parent's slot says
    /// whether it has one); a guaranteed one goes last in the
    /// guarantees' round robin.
    fn relink(&mut self, t: u32, parent: u32) {
        let (old, busy) = (self.nodes[t as usize].parent, self.nodes[t as usize].busy);
        let node = &mut self.nodes[t as usize];
        node.token = false;
        if std::mem::take(&mut node.counted) {
            self.nodes[old as usize].elig -= 1;
        }
        self.pending[old as usize].remove(t, &mut self.ppos);
        self.guaranteed[old as usize].remove(t, &mut self.gpos);
        self.add_busy(old, busy, false);
        self.refresh(old as usize);
        let gclock = self.gclock;
        let node = &mut self.nodes[t as usize];
        node.parent = parent;
        if node.min.is_some() && busy > 0 {
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

#[cfg(test)]
#[path = "tree_edit_tests.rs"]
mod tests;
