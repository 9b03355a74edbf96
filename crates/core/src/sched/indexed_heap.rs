//! A 4-ary min-heap of flow ids keyed by virtual time, with O(log N) removal
//! of any flow: each flow's position in the heap is tracked.
//!
//! Keys are compared wrap-safely (see [`crate::sched::vtime`]); ties are broken by
//! flow id so schedules are deterministic (the order is total, so the
//! minimum does not depend on the heap's shape).
//!
//! Layout and algorithm are chosen for WF2Q+'s pattern, where every packet
//! pops the minimum of one heap and pushes a *large* key into the other:
//! * 4 children per node halve the depth of a binary heap. The entries
//!   (16 bytes: key and flow) are stored in 64-byte aligned blocks of four
//!   with the root in the last lane of block 0, so the children of entry
//!   `i` are exactly block `i + 1`: one cache line, one bounds check, and
//!   no load split across two lines;
//! * `pop` moves the hole left by the minimum down to a leaf along the
//!   smallest children and only then sifts the last entry up from there
//!   (Floyd's bottom-up variant, also used by dummynet's heap): the last
//!   entry is usually large and stays near the leaf, so the comparisons
//!   against it at every level are skipped;
//! * a comparison is a compare and a subtract-with-borrow (the flow ids'
//!   borrow taken from the keys' difference), and the smallest of four
//!   children is picked by value with conditional moves, so a level of the
//!   descent is one load of the block and two dependent compare-selects.
//!
//! docs/bench.md compares it with a binary heap (WF2Q+ cost per packet).

use crate::sched::vtime::VirtualTime;
use alloc::vec::Vec;

const ABSENT: u32 = u32::MAX;
/// Children per node (the entries of one block).
const D: usize = 4;
/// Where entry 0 (the root) is stored: the last lane of block 0, so that
/// the children of entry `i` (entries `4i + 1 ..= 4i + 4`) fill block `i + 1`.
const OFFSET: usize = D - 1;

type Entry = (VirtualTime, u32);

/// Four entries on one 64-byte cache line: the children of one node.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([Entry; D]);

/// Filler of the lanes past the end of the heap (never read as an entry).
const UNUSED: Entry = (0, ABSENT);

/// Min-heap of `(key, flow)` with a position index per flow.
pub struct IndexedHeap {
    /// Entry `i` is lane `(i + OFFSET) % D` of block `(i + OFFSET) / D`;
    /// entries `0..len` are the heap, allocated once for every flow id.
    blocks: Vec<Block>,
    len: usize,
    pos: Vec<u32>,
}

/// `a < b` in the heap's order: the key first, wrap-safe, then the flow id.
///
/// The keys' wrapping difference minus the borrow of the flow ids'
/// difference, read as signed: negative exactly when `a.0 < b.0`
/// (wrap-safe), or when the keys are equal and `a.1 < b.1`. (A difference of
/// `i64::MIN`, two keys `2^63` apart, is outside the range in which
/// wrap-safe comparisons are defined.) Compiles to a compare and a
/// subtract-with-borrow, no branch: the heap's comparisons are unpredictable.
#[inline(always)]
fn less(a: Entry, b: Entry) -> bool {
    let borrow = u64::from(a.1 < b.1);
    (a.0.wrapping_sub(b.0).wrapping_sub(borrow) as i64) < 0
}

/// Lane (0..4) and value of the smallest entry of a block: two pairs,
/// then their winners (an 8-ary heap, two lines per block, executes more
/// instructions and is no faster).
#[inline(always)]
fn min_of_block(c: &[Entry; D]) -> (usize, Entry) {
    let [c0, c1, c2, c3] = *c;
    let (i01, e01) = if less(c1, c0) { (1, c1) } else { (0, c0) };
    let (i23, e23) = if less(c3, c2) { (3, c3) } else { (2, c2) };
    if less(e23, e01) {
        (i23, e23)
    } else {
        (i01, e01)
    }
}

impl IndexedHeap {
    /// An empty heap for flow ids `0..max_flows`.
    pub fn new(max_flows: u32) -> Self {
        let blocks = (max_flows as usize + OFFSET).div_ceil(D).max(1);
        Self {
            blocks: alloc::vec![Block([UNUSED; D]); blocks],
            len: 0,
            pos: alloc::vec![ABSENT; max_flows as usize],
        }
    }

    /// Number of flows in the heap.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True if `flow` is in the heap.
    pub fn contains(&self, flow: u32) -> bool {
        self.pos.get(flow as usize).is_some_and(|&p| p != ABSENT)
    }

    /// The minimum `(key, flow)`.
    #[inline]
    pub fn peek(&self) -> Option<(VirtualTime, u32)> {
        if self.len == 0 {
            return None;
        }
        self.blocks.first().map(|b| b.0[OFFSET])
    }

    /// Entry `i` (which must be below the allocated capacity).
    #[inline(always)]
    fn get(&self, i: usize) -> Entry {
        let p = i + OFFSET;
        self.blocks[p / D].0[p % D]
    }

    /// Inserts `flow` (which must not be present) with `key`. Panics if
    /// the heap already holds `max_flows` entries.
    #[inline]
    pub fn push(&mut self, key: VirtualTime, flow: u32) {
        debug_assert!(!self.contains(flow));
        // Each flow id below `max_flows` is in the heap at most once, so
        // entry `len` is allocated (indexing checks it in any case).
        let i = self.len;
        self.len += 1;
        sift_up(&mut self.blocks, &mut self.pos, i, (key, flow));
    }

    /// Removes and returns the minimum.
    #[inline]
    pub fn pop(&mut self) -> Option<(VirtualTime, u32)> {
        let top = self.peek()?;
        set_pos(&mut self.pos, top.1, ABSENT);
        self.len -= 1;
        let n = self.len;
        if n > 0 {
            let hole = hole_to_leaf(&mut self.blocks, &mut self.pos, n);
            // The descent moved entries below `n` only.
            let last = self.get(n);
            sift_up(&mut self.blocks, &mut self.pos, hole, last);
        }
        Some(top)
    }

    /// Gives the minimum's flow a new key (it stays in the heap): one
    /// sift-down instead of a `pop` and a `push`.
    #[inline(always)]
    pub(crate) fn replace_top(&mut self, key: VirtualTime) {
        match self.len {
            0 => {}
            // A lone entry has no child to sift past: rewrite its key in
            // place (its position is unchanged), with no call. This is
            // WF2Q+'s every dequeue when one flow is backlogged.
            1 => {
                if let Some(b) = self.blocks.first_mut() {
                    b.0[OFFSET].0 = key;
                }
            }
            _ => self.replace_top_sift(key),
        }
    }

    /// [`Self::replace_top`] in a heap of two or more: out of line.
    #[inline(never)]
    fn replace_top_sift(&mut self, key: VirtualTime) {
        let flow = self.get(0).1;
        self.sift_down(0, (key, flow));
    }

    /// Removes `flow` if present; returns its key.
    pub fn remove(&mut self, flow: u32) -> Option<VirtualTime> {
        let p = *self.pos.get(flow as usize)?;
        if p == ABSENT {
            return None;
        }
        let p = p as usize;
        let key = self.get(p).0;
        set_pos(&mut self.pos, flow, ABSENT);
        self.len -= 1;
        let n = self.len;
        if p < n {
            // The last entry fills the hole and moves whichever way it must.
            let last = self.get(n);
            if p > 0 && less(last, self.get((p - 1) / D)) {
                sift_up(&mut self.blocks, &mut self.pos, p, last);
            } else {
                self.sift_down(p, last);
            }
        }
        Some(key)
    }

    /// Places `item` in the hole at `i`, moving it down while a child is
    /// smaller.
    #[inline]
    fn sift_down(&mut self, mut i: usize, item: Entry) {
        let n = self.len;
        loop {
            let first = D * i + 1;
            if first >= n {
                break;
            }
            let (c, e) = if first + D <= n {
                let (k, e) = min_of_block(&self.blocks[i + 1].0);
                (first + k, e)
            } else {
                min_of_partial(&self.blocks[i + 1].0[..n - first], first)
            };
            if !less(e, item) {
                break;
            }
            place(&mut self.blocks, &mut self.pos, i, e);
            i = c;
        }
        place(&mut self.blocks, &mut self.pos, i, item);
    }
}

#[inline(always)]
fn set_pos(pos: &mut [u32], flow: u32, i: u32) {
    if let Some(p) = pos.get_mut(flow as usize) {
        *p = i;
    }
}

/// Puts `e` at entry `i`, recording its position.
#[inline(always)]
fn place(blocks: &mut [Block], pos: &mut [u32], i: usize, e: Entry) {
    let p = i + OFFSET;
    blocks[p / D].0[p % D] = e;
    set_pos(pos, e.1, i as u32);
}

/// Index and value of the smallest of the children of a node that has
/// fewer than four (`c`, non-empty, starting at entry `first`).
#[inline(never)]
fn min_of_partial(c: &[Entry], first: usize) -> (usize, Entry) {
    let mut best = (first, c[0]);
    for (k, &e) in c.iter().enumerate().skip(1) {
        if less(e, best.1) {
            best = (first + k, e);
        }
    }
    best
}

/// Moves the hole at entry 0 of a heap of `n >= 1` entries down to a
/// leaf, pulling the smallest child up at every level; returns where the
/// hole ends.
#[inline(always)]
fn hole_to_leaf(blocks: &mut [Block], pos: &mut [u32], n: usize) -> usize {
    // Block `b >= 1` holds entries `D*b - OFFSET ..= D*b`: the blocks up to
    // `(n - 1) / D` hold heap entries only, so "entry `i` has all `D`
    // children" is "block `i + 1` is in `full`", one bounds check.
    let Some(full) = blocks.get_mut(..(n - 1) / D + 1) else {
        return 0;
    };
    // The hole: entry `i`, stored at lane `lane` of block `block`.
    let (mut i, mut block, mut lane) = (0, 0, OFFSET);
    while let Some(children) = full.get(i + 1) {
        let (k, e) = min_of_block(&children.0);
        // The child chosen leaves its hole in block i + 1.
        full[block].0[lane % D] = e;
        set_pos(pos, e.1, i as u32);
        (block, lane) = (i + 1, k);
        i = D * i + 1 + k;
    }
    let first = D * i + 1;
    if first < n {
        // Fewer than D children (once per pop at most): the child chosen
        // is a leaf.
        let (c, e) = min_of_partial(&blocks[i + 1].0[..n - first], first);
        place(blocks, pos, i, e);
        i = c;
    }
    i
}

/// Places `item` in the hole at entry `i`, moving it up while it is
/// smaller than its parent.
#[inline(always)]
fn sift_up(blocks: &mut [Block], pos: &mut [u32], mut i: usize, item: Entry) {
    while i > 0 {
        let parent = (i - 1) / D;
        let pp = parent + OFFSET;
        let p = blocks[pp / D].0[pp % D];
        if !less(item, p) {
            break;
        }
        place(blocks, pos, i, p);
        i = parent;
    }
    place(blocks, pos, i, item);
}
#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn behaves_like_a_sorted_set(ops in proptest::collection::vec((0u32..64, 0u64..1000, any::<bool>()), 1..300)) {
            let mut h = IndexedHeap::new(64);
            let mut model: alloc::collections::BTreeSet<(u64, u32)> = Default::default();
            let mut keys = [None::<u64>; 64];
            for (flow, key, pop) in ops {
                if pop {
                    let got = h.pop();
                    let want = model.iter().next().copied();
                    if let Some(w) = want { model.remove(&w); keys[w.1 as usize] = None; }
                    prop_assert_eq!(got, want);
                } else if let Some(k) = keys[flow as usize] {
                    prop_assert_eq!(h.remove(flow), Some(k));
                    model.remove(&(k, flow));
                    keys[flow as usize] = None;
                } else {
                    h.push(key, flow);
                    model.insert((key, flow));
                    keys[flow as usize] = Some(key);
                }
                prop_assert_eq!(h.len(), model.len());
            }
        }

        /// `replace_top` (one flow's key changed in place) against the
        /// model, from heaps of one entry (the in-place fast path) up.
        /// Shown to fail when the fast path skips the rewrite.
        #[test]
        fn replace_top_behaves_like_pop_and_push(
            keys in proptest::collection::vec(0u64..1000, 1..12),
            new_keys in proptest::collection::vec(0u64..1000, 1..40),
        ) {
            let mut h = IndexedHeap::new(16);
            let mut model: alloc::collections::BTreeSet<(u64, u32)> = Default::default();
            for (flow, &key) in keys.iter().enumerate() {
                h.push(key, flow as u32);
                model.insert((key, flow as u32));
            }
            for key in new_keys {
                let top = model.pop_first().unwrap();
                model.insert((key, top.1));
                h.replace_top(key);
                prop_assert_eq!(h.peek(), model.first().copied());
                prop_assert_eq!(h.len(), model.len());
            }
            // Every flow is still found at its position.
            for &(key, flow) in &model {
                prop_assert_eq!(h.remove(flow), Some(key));
            }
            prop_assert!(h.is_empty());
        }
    }

    /// Deep heaps (up to 2 000 entries: five full levels and a partial
    /// node) with keys that straddle the wrap of `u64` and tie often:
    /// every pop, removal and re-key against the sorted model, and every
    /// entry's recorded position checked after each operation.
    #[test]
    fn deep_heaps_with_wrapping_keys_match_the_model() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for &(flows, base) in &[(2000u32, u64::MAX - 3000), (7, 0), (300, 1 << 63)] {
            let mut h = IndexedHeap::new(flows);
            // The model orders by the key's offset from `base` (keys lie
            // within 2^62 of each other), then by flow id.
            let mut model: alloc::collections::BTreeSet<(u64, u32)> = Default::default();
            let mut keys = alloc::vec![None::<u64>; flows as usize];
            for step in 0..30_000u32 {
                let r = next();
                let flow = (r % u64::from(flows)) as u32;
                let off = (r >> 20) % 64 * 1000; // many ties
                match (r >> 12) % 4 {
                    0 | 1 => {
                        if keys[flow as usize].is_none() {
                            h.push(base.wrapping_add(off), flow);
                            model.insert((off, flow));
                            keys[flow as usize] = Some(off);
                        }
                    }
                    2 => {
                        let want = model.pop_first();
                        if let Some((k, f)) = want {
                            keys[f as usize] = None;
                            assert_eq!(h.pop(), Some((base.wrapping_add(k), f)));
                        } else {
                            assert_eq!(h.pop(), None);
                        }
                    }
                    _ => match keys[flow as usize] {
                        Some(k) if step % 2 == 0 => {
                            assert_eq!(h.remove(flow), Some(base.wrapping_add(k)));
                            model.remove(&(k, flow));
                            keys[flow as usize] = None;
                        }
                        _ => {
                            if let Some((_, f)) = model.pop_first() {
                                model.insert((off, f));
                                keys[f as usize] = Some(off);
                                h.replace_top(base.wrapping_add(off));
                            }
                        }
                    },
                }
                assert_eq!(h.len(), model.len());
                assert_eq!(
                    h.peek(),
                    model.first().map(|&(k, f)| (base.wrapping_add(k), f))
                );
                if step % 97 == 0 {
                    for i in 0..h.len() {
                        let (_, f) = h.get(i);
                        assert_eq!(h.pos[f as usize] as usize, i, "position of flow {f}");
                    }
                }
            }
        }
    }

    /// A lone entry (the in-place fast path of `replace_top`) takes its
    /// new key. Shown to fail when the fast path skips the rewrite.
    #[test]
    fn a_lone_entry_keeps_its_new_key() {
        let mut h = IndexedHeap::new(4);
        h.push(10, 2);
        h.replace_top(30);
        assert_eq!(h.peek(), Some((30, 2)));
        assert_eq!(h.remove(2), Some(30));
    }
}
