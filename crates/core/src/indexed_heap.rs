//! A binary min-heap of flow ids keyed by virtual time, with O(log N) removal
//! of any flow: each flow's position in the heap is tracked.
//!
//! Keys are compared wrap-safely (see [`crate::vtime`]); ties are broken by
//! flow id so schedules are deterministic.

use crate::vtime::VirtualTime;
use alloc::vec::Vec;

const ABSENT: u32 = u32::MAX;

/// Min-heap of `(key, flow)` with a position index per flow.
pub struct IndexedHeap {
    heap: Vec<(VirtualTime, u32)>,
    pos: Vec<u32>,
}

#[inline]
fn less(a: (VirtualTime, u32), b: (VirtualTime, u32)) -> bool {
    let d = a.0.wrapping_sub(b.0) as i64;
    d < 0 || (d == 0 && a.1 < b.1)
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
    pub fn push(&mut self, key: VirtualTime, flow: u32) {
        debug_assert!(!self.contains(flow));
        let i = self.heap.len();
        self.heap.push((key, flow));
        self.pos[flow as usize] = i as u32;
        self.sift_up(i);
    }

    /// Removes and returns the minimum.
    pub fn pop(&mut self) -> Option<(VirtualTime, u32)> {
        let top = *self.heap.first()?;
        self.remove_at(0);
        Some(top)
    }

    /// Removes `flow` if present; returns its key.
    pub fn remove(&mut self, flow: u32) -> Option<VirtualTime> {
        let p = *self.pos.get(flow as usize)?;
        if p == ABSENT {
            return None;
        }
        let key = self.heap[p as usize].0;
        self.remove_at(p as usize);
        Some(key)
    }

    fn remove_at(&mut self, i: usize) {
        let last = self.heap.len() - 1;
        let flow = self.heap[i].1;
        self.heap.swap(i, last);
        self.heap.pop();
        self.pos[flow as usize] = ABSENT;
        if i < self.heap.len() {
            self.pos[self.heap[i].1 as usize] = i as u32;
            self.sift_down(i);
            self.sift_up(i);
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        let item = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if !less(item, self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            self.pos[self.heap[i].1 as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = item;
        self.pos[item.1 as usize] = i as u32;
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let item = self.heap[i];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && less(self.heap[r], self.heap[l]) {
                r
            } else {
                l
            };
            if !less(self.heap[c], item) {
                break;
            }
            self.heap[i] = self.heap[c];
            self.pos[self.heap[i].1 as usize] = i as u32;
            i = c;
        }
        self.heap[i] = item;
        self.pos[item.1 as usize] = i as u32;
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
    }
}
