//! A 4-ary min-heap of flow ids keyed by virtual time, with O(log N) removal
//! of any flow: each flow's position in the heap is tracked.
//!
//! Keys are compared wrap-safely (see [`crate::sched::vtime`]); ties are broken by
//! flow id so schedules are deterministic (the order is total, so the
//! minimum does not depend on the heap's shape).
//!
//! Layout and algorithm are chosen for WF2Q+'s pattern, where every packet
//! pops the minimum of one heap and pushes a *large* key into the other:
//! * 4 children per node halve the depth of a binary heap, and the four
//!   16-byte entries of a node's children share one 64-byte cache line;
//! * `pop` moves the hole left by the minimum down to a leaf along the
//!   smallest children and only then sifts the last entry up from there
//!   (Floyd's bottom-up variant, also used by dummynet's heap): the last
//!   entry is usually large and stays near the leaf, so the comparisons
//!   against it at every level are skipped.
//!
//! docs/bench.md compares it with a binary heap (WF2Q+ cost per packet).

use crate::sched::vtime::VirtualTime;
use alloc::vec::Vec;

const ABSENT: u32 = u32::MAX;
/// Children per node.
const D: usize = 4;

type Entry = (VirtualTime, u32);

/// Min-heap of `(key, flow)` with a position index per flow.
pub struct IndexedHeap {
    heap: Vec<Entry>,
    pos: Vec<u32>,
}

#[inline(always)]
fn less(a: Entry, b: Entry) -> bool {
    let d = a.0.wrapping_sub(b.0) as i64;
    // Non-short-circuit `|`/`&`: flags and no branch, the heap's
    // comparisons are unpredictable.
    (d < 0) | ((d == 0) & (a.1 < b.1))
}

/// Index (0..4) of the smallest of four entries.
#[inline(always)]
fn min_of_four(c: &[Entry; D]) -> usize {
    let a = if less(c[1], c[0]) { 1 } else { 0 };
    let b = if less(c[3], c[2]) { 3 } else { 2 };
    if less(c[b], c[a]) {
        b
    } else {
        a
    }
}

/// The child of `i` with the smallest entry in `h`, if `i` has children.
#[inline(always)]
fn min_child_of(h: &[Entry], i: usize) -> Option<usize> {
    let first = D * i + 1;
    if first >= h.len() {
        return None; // a leaf: the usual case at the bottom and in small heaps
    }
    if let Some(c) = h.get(first..first + D) {
        let c: &[Entry; D] = c.try_into().ok()?;
        return Some(first + min_of_four(c));
    }
    let rest = h.get(first..)?;
    let mut best = first;
    for (k, &e) in rest.iter().enumerate().skip(1) {
        if less(e, h[best]) {
            best = first + k;
        }
    }
    Some(best)
}

impl IndexedHeap {
    /// An empty heap for flow ids `0..max_flows`.
    pub fn new(max_flows: u32) -> Self {
        Self {
            heap: Vec::with_capacity(max_flows as usize),
            pos: alloc::vec![ABSENT; max_flows as usize],
        }
    }

    /// Number of flows in the heap.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// True if `flow` is in the heap.
    pub fn contains(&self, flow: u32) -> bool {
        self.pos.get(flow as usize).is_some_and(|&p| p != ABSENT)
    }

    /// The minimum `(key, flow)`.
    #[inline]
    pub fn peek(&self) -> Option<(VirtualTime, u32)> {
        self.heap.first().copied()
    }

    /// Inserts `flow` (which must not be present) with `key`.
    #[inline]
    pub fn push(&mut self, key: VirtualTime, flow: u32) {
        debug_assert!(!self.contains(flow));
        let i = self.heap.len();
        self.heap.push((key, flow));
        self.sift_up(i, (key, flow));
    }

    /// Removes and returns the minimum.
    #[inline]
    pub fn pop(&mut self) -> Option<(VirtualTime, u32)> {
        let top = *self.heap.first()?;
        self.set_pos(top.1, ABSENT);
        let last = self.heap.pop()?;
        if !self.heap.is_empty() {
            let hole = self.hole_to_leaf(0);
            self.sift_up(hole, last);
        }
        Some(top)
    }

    /// Gives the minimum's flow a new key (it stays in the heap): one
    /// sift-down instead of a `pop` and a `push`.
    #[inline]
    pub(crate) fn replace_top(&mut self, key: VirtualTime) {
        match self.heap.as_mut_slice() {
            [] => {}
            // A lone entry has no child to sift past: rewrite its key in
            // place (its position is unchanged), with no call. This is
            // WF2Q+'s every dequeue when one flow is backlogged.
            [only] => only.0 = key,
            [first, ..] => {
                let flow = first.1;
                self.sift_down(0, (key, flow));
            }
        }
    }

    /// Removes `flow` if present; returns its key.
    pub fn remove(&mut self, flow: u32) -> Option<VirtualTime> {
        let p = *self.pos.get(flow as usize)?;
        if p == ABSENT {
            return None;
        }
        let p = p as usize;
        let key = self.heap.get(p)?.0;
        self.set_pos(flow, ABSENT);
        let last = self.heap.pop()?;
        if p < self.heap.len() {
            // The last entry fills the hole and moves whichever way it must.
            if p > 0 && less(last, self.heap[(p - 1) / D]) {
                self.sift_up(p, last);
            } else {
                self.sift_down(p, last);
            }
        }
        Some(key)
    }

    #[inline(always)]
    fn set_pos(&mut self, flow: u32, i: u32) {
        if let Some(p) = self.pos.get_mut(flow as usize) {
            *p = i;
        }
    }

    /// Puts `e` at `i`, recording its position.
    #[inline(always)]
    fn place(&mut self, i: usize, e: Entry) {
        self.heap[i] = e;
        self.set_pos(e.1, i as u32);
    }

    /// The child of `i` with the smallest entry, if `i` has children.
    #[inline(always)]
    fn min_child(&self, i: usize) -> Option<usize> {
        min_child_of(&self.heap, i)
    }

    /// Moves the hole at `i` down to a leaf, pulling the smallest child up
    /// at every level; returns where the hole ends.
    #[inline(always)]
    fn hole_to_leaf(&mut self, mut i: usize) -> usize {
        // Local slices: the compiler keeps pointers and lengths in
        // registers across the stores.
        let heap = &mut self.heap[..];
        let pos = &mut self.pos[..];
        while let Some(c) = min_child_of(heap, i) {
            let e = heap[c];
            heap[i] = e;
            if let Some(p) = pos.get_mut(e.1 as usize) {
                *p = i as u32;
            }
            i = c;
        }
        i
    }

    /// Places `item` in the hole at `i`, moving it up while it is smaller
    /// than its parent.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, item: Entry) {
        let heap = &mut self.heap[..];
        let pos = &mut self.pos[..];
        while i > 0 {
            let parent = (i - 1) / D;
            let p = heap[parent];
            if !less(item, p) {
                break;
            }
            heap[i] = p;
            if let Some(q) = pos.get_mut(p.1 as usize) {
                *q = i as u32;
            }
            i = parent;
        }
        heap[i] = item;
        if let Some(q) = pos.get_mut(item.1 as usize) {
            *q = i as u32;
        }
    }

    /// Places `item` in the hole at `i`, moving it down while a child is
    /// smaller.
    #[inline]
    fn sift_down(&mut self, mut i: usize, item: Entry) {
        while let Some(c) = self.min_child(i) {
            let e = self.heap[c];
            if !less(e, item) {
                break;
            }
            self.place(i, e);
            i = c;
        }
        self.place(i, item);
    }
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
