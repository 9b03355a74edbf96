//! An indexed binary min-heap of ids by key: the shaping tree's per-node
//! sets of eligible children and its timers. Every id is in at most one
//! heap of a family at a time; its position there is kept in a slice
//! shared by the family (`pos`, [`NIL`] when out), so removing an id or
//! changing its key is O(log n) without a search. Ties go to the smaller
//! id, so the order is a pure function of the (key, id) pairs.

/// "Not in a heap".
pub const NIL: u32 = u32::MAX;

/// A min-heap of `(key, id)`.
#[derive(Clone, Debug, Default)]
pub struct Heap {
    items: Vec<(u128, u32)>,
}

impl Heap {
    /// An empty heap with room for `n` ids (pushing more allocates), its
    /// memory written once so that the first pushes (in a reload's
    /// pause) take no page faults.
    pub fn with_capacity(n: usize) -> Self {
        let mut items = Vec::with_capacity(n);
        items.resize(n, (0, NIL));
        items.clear();
        Heap { items }
    }

    /// The smallest `(key, id)`.
    pub fn top(&self) -> Option<(u128, u32)> {
        self.items.first().copied()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Ids it holds without growing (for the tests' checks).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.items.capacity()
    }

    /// Puts `id` in with `key`, or moves it to `key` if it is in.
    pub fn set(&mut self, id: u32, key: u128, pos: &mut [u32]) {
        let at = pos[id as usize];
        if at == NIL {
            self.items.push((key, id));
            let i = self.items.len() - 1;
            pos[id as usize] = i as u32;
            self.up(i, pos);
        } else {
            let i = at as usize;
            let old = self.items[i].0;
            self.items[i].0 = key;
            if key < old {
                self.up(i, pos);
            } else {
                self.down(i, pos);
            }
        }
    }

    /// Takes `id` out (nothing if it is not in).
    pub fn remove(&mut self, id: u32, pos: &mut [u32]) {
        let at = std::mem::replace(&mut pos[id as usize], NIL);
        if at == NIL {
            return;
        }
        let i = at as usize;
        let last = self.items.len() - 1;
        self.items.swap(i, last);
        self.items.pop();
        if i < self.items.len() {
            pos[self.items[i].1 as usize] = i as u32;
            self.up(i, pos);
            self.down(i, pos);
        }
    }

    /// Takes every id out, keeping the memory.
    pub fn clear(&mut self, pos: &mut [u32]) {
        for &(_, id) in &self.items {
            pos[id as usize] = NIL;
        }
        self.items.clear();
    }

    /// Takes the smallest out.
    pub fn pop(&mut self, pos: &mut [u32]) -> Option<(u128, u32)> {
        let top = self.top()?;
        self.remove(top.1, pos);
        Some(top)
    }

    fn up(&mut self, mut i: usize, pos: &mut [u32]) {
        while i > 0 {
            let p = (i - 1) / 2;
            if self.items[p] <= self.items[i] {
                break;
            }
            self.swap(i, p, pos);
            i = p;
        }
    }

    fn down(&mut self, mut i: usize, pos: &mut [u32]) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < self.items.len() && self.items[l] < self.items[m] {
                m = l;
            }
            if r < self.items.len() && self.items[r] < self.items[m] {
                m = r;
            }
            if m == i {
                return;
            }
            self.swap(i, m, pos);
            i = m;
        }
    }

    fn swap(&mut self, a: usize, b: usize, pos: &mut [u32]) {
        self.items.swap(a, b);
        pos[self.items[a].1 as usize] = a as u32;
        pos[self.items[b].1 as usize] = b as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a sorted list: sets, removals and pops in any order.
        #[test]
        fn behaves_as_a_sorted_set(ops in proptest::collection::vec((0u32..16, 0u128..8, 0u8..3), 1..200)) {
            let mut h = Heap::default();
            let mut pos = vec![NIL; 16];
            let mut model: Vec<(u128, u32)> = Vec::new();
            for (id, key, what) in ops {
                match what {
                    0 => {
                        h.set(id, key, &mut pos);
                        model.retain(|e| e.1 != id);
                        model.push((key, id));
                    }
                    1 => {
                        h.remove(id, &mut pos);
                        model.retain(|e| e.1 != id);
                    }
                    _ => {
                        model.sort();
                        let want = (!model.is_empty()).then(|| model.remove(0));
                        prop_assert_eq!(h.pop(&mut pos), want);
                    }
                }
                model.sort();
                prop_assert_eq!(h.top(), model.first().copied());
                prop_assert_eq!(h.len(), model.len());
                for (i, e) in h.items.iter().enumerate() {
                    prop_assert_eq!(pos[e.1 as usize], i as u32);
                }
            }
        }
    }
}
