//! SCHED+'s index of its *non-full* aggregates by `(weight, L)` (the QFQ+
//! paper's rule that a new flow joins an aggregate of flows of its own
//! weight and maximum length with room left, or starts one), sized once
//! for the scheduler's capacity so that adding and removing flows at run
//! time allocates nothing.
//!
//! Per key, the aggregates form a list that behaves exactly as a `Vec`
//! of aggregate ids would: [`NonFull::push`] appends, [`NonFull::last`]
//! is the last appended, and [`NonFull::remove`] is `swap_remove` (the
//! last one takes the removed one's place). Keeping that order keeps
//! which aggregate a flow joins, and so every schedule, unchanged.
//!
//! The lists are intrusive (a previous and a next id per aggregate), and
//! the keys sit in an open-addressing table with linear probing and
//! backward-shift deletion (no tombstones, so it never needs a rebuild).
//! There are at most as many keys as aggregates, and the table has at
//! least twice as many slots, so probes stay short: O(1) expected per
//! operation, against O(log keys) and an allocation per new key for a
//! `BTreeMap` of `Vec`s.

use alloc::vec;
use alloc::vec::Vec;

const NIL: u32 = u32::MAX;

/// An aggregate's neighbours in its key's list.
#[derive(Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
    listed: bool,
}

const UNLISTED: Link = Link {
    prev: NIL,
    next: NIL,
    listed: false,
};

/// A table slot: a key and its list's ends; `first == NIL`: empty.
#[derive(Clone, Copy)]
struct Slot {
    key: (u32, u32),
    first: u32,
    last: u32,
}

const FREE: Slot = Slot {
    key: (0, 0),
    first: NIL,
    last: NIL,
};

/// The non-full aggregates of up to `n` aggregates (ids `0..n`).
pub(super) struct NonFull {
    links: Vec<Link>,
    slots: Vec<Slot>,
    /// `slots.len() - 1` (a power of two less one).
    mask: usize,
}

impl NonFull {
    /// Room for aggregates `0..n`.
    pub(super) fn new(n: u32) -> Self {
        let slots = (2 * n as usize).max(2).next_power_of_two();
        NonFull {
            links: vec![UNLISTED; n as usize],
            slots: vec![FREE; slots],
            mask: slots - 1,
        }
    }

    fn home(&self, key: (u32, u32)) -> usize {
        let k = (u64::from(key.0) << 32) | u64::from(key.1);
        // Fibonacci hashing: the top bits of the product are well mixed.
        let h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32) as usize & self.mask
    }

    /// The slot holding `key`, or the free slot where it would go.
    fn find(&self, key: (u32, u32)) -> usize {
        let mut i = self.home(key);
        while self.slots[i].first != NIL && self.slots[i].key != key {
            i = (i + 1) & self.mask;
        }
        i
    }

    /// The aggregate of `key` appended last, if any.
    pub(super) fn last(&self, key: (u32, u32)) -> Option<u32> {
        let s = self.slots[self.find(key)];
        (s.first != NIL).then_some(s.last)
    }

    /// Appends aggregate `a` (not listed) to `key`'s list.
    pub(super) fn push(&mut self, key: (u32, u32), a: u32) {
        debug_assert!(!self.links[a as usize].listed);
        let i = self.find(key);
        let s = &mut self.slots[i];
        if s.first == NIL {
            *s = Slot {
                key,
                first: a,
                last: a,
            };
            self.links[a as usize] = Link {
                prev: NIL,
                next: NIL,
                listed: true,
            };
            return;
        }
        let tail = s.last;
        s.last = a;
        self.links[tail as usize].next = a;
        self.links[a as usize] = Link {
            prev: tail,
            next: NIL,
            listed: true,
        };
    }

    /// Takes aggregate `a` out of `key`'s list as `Vec::swap_remove`
    /// would (the last one moves into its place); nothing if `a` is not
    /// listed.
    pub(super) fn remove(&mut self, key: (u32, u32), a: u32) {
        if !self.links[a as usize].listed {
            return;
        }
        let i = self.find(key);
        let tail = self.slots[i].last;
        // The tail leaves the end of the list.
        let before_tail = self.links[tail as usize].prev;
        self.links[tail as usize] = UNLISTED;
        if before_tail == NIL {
            // `a` was the only one.
            self.slots[i] = FREE;
            self.close_gap(i);
            return;
        }
        self.links[before_tail as usize].next = NIL;
        self.slots[i].last = before_tail;
        if tail == a {
            return;
        }
        // The tail takes `a`'s place.
        let Link { prev, next, .. } = self.links[a as usize];
        self.links[a as usize] = UNLISTED;
        self.links[tail as usize] = Link {
            prev,
            next,
            listed: true,
        };
        match prev {
            NIL => self.slots[i].first = tail,
            p => self.links[p as usize].next = tail,
        }
        match next {
            NIL => self.slots[i].last = tail,
            n => self.links[n as usize].prev = tail,
        }
    }

    /// Backward-shift deletion: moves the entries after the freed slot `i`
    /// that probed past it back, so that no search stops early.
    fn close_gap(&mut self, mut i: usize) {
        let mut j = (i + 1) & self.mask;
        while self.slots[j].first != NIL {
            let home = self.home(self.slots[j].key);
            // `j`'s entry may move to `i` if its home is not in (i, j].
            let dist_home = j.wrapping_sub(home) & self.mask;
            let dist_gap = j.wrapping_sub(i) & self.mask;
            if dist_home >= dist_gap {
                self.slots[i] = self.slots[j];
                self.slots[j] = FREE;
                i = j;
            }
            j = (j + 1) & self.mask;
        }
    }

    /// `key`'s list, first to last (for the invariants' check and tests).
    #[cfg(test)]
    pub(super) fn list(&self, key: (u32, u32)) -> Vec<u32> {
        let mut out = Vec::new();
        let s = self.slots[self.find(key)];
        let mut a = s.first;
        while a != NIL {
            out.push(a);
            a = self.links[a as usize].next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::NonFull;
    use alloc::collections::BTreeMap;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// The reference: what SCHED+ kept before, a map of `Vec`s.
    #[derive(Default)]
    struct Model(BTreeMap<(u32, u32), Vec<u32>>);

    impl Model {
        fn push(&mut self, key: (u32, u32), a: u32) {
            self.0.entry(key).or_default().push(a);
        }
        fn remove(&mut self, key: (u32, u32), a: u32) {
            if let Some(v) = self.0.get_mut(&key) {
                if let Some(pos) = v.iter().position(|&x| x == a) {
                    v.swap_remove(pos);
                }
                if v.is_empty() {
                    self.0.remove(&key);
                }
            }
        }
    }

    proptest! {
        /// Random pushes and removals over few keys (so that they collide
        /// in a small table) give the lists, in order, and the last of each
        /// key that the map of `Vec`s gives.
        #[test]
        fn behaves_as_a_map_of_vecs(ops in prop::collection::vec((any::<bool>(), 0u32..12, 0u32..12), 1..400)) {
            let n = 12;
            let mut t = NonFull::new(n);
            let mut m = Model::default();
            // Each aggregate has one key for life while listed.
            let mut key_of: Vec<Option<(u32, u32)>> = alloc::vec![None; n as usize];
            for (push, a, k) in ops {
                // Keys that hash near each other: equal weights, few lengths.
                let key = (k % 4 + 1, 64 * (k / 4) + 64);
                match (push, key_of[a as usize]) {
                    (true, None) => {
                        t.push(key, a);
                        m.push(key, a);
                        key_of[a as usize] = Some(key);
                    }
                    (false, Some(key)) => {
                        t.remove(key, a);
                        m.remove(key, a);
                        key_of[a as usize] = None;
                    }
                    // Removing one not listed changes nothing.
                    (false, None) => t.remove(key, a),
                    (true, Some(_)) => {}
                }
                for k in 0..12u32 {
                    let key = (k % 4 + 1, 64 * (k / 4) + 64);
                    let want = m.0.get(&key).cloned().unwrap_or_default();
                    prop_assert_eq!(t.list(key), want.clone());
                    prop_assert_eq!(t.last(key), want.last().copied());
                }
            }
        }
    }

    #[test]
    fn keys_of_one_home_are_found_after_any_of_them_goes() {
        let n = 4;
        let probe = NonFull::new(n);
        // Four keys whose probes start at one slot: a chain the deletion
        // must close up behind each removed key.
        let home = probe.home((1, 1500));
        let keys: Vec<(u32, u32)> = (1..100_000)
            .map(|w| (w, 1500))
            .filter(|&k| probe.home(k) == home)
            .take(4)
            .collect();
        assert_eq!(keys.len(), 4);
        for gone in 0..4 {
            let mut t = NonFull::new(n);
            for (a, &k) in keys.iter().enumerate() {
                t.push(k, a as u32);
            }
            t.remove(keys[gone], gone as u32);
            for (a, &k) in keys.iter().enumerate() {
                let want = (a != gone).then_some(a as u32);
                assert_eq!(t.last(k), want, "key {a} after key {gone} went");
            }
        }
    }

    #[test]
    fn a_full_table_of_distinct_keys_keeps_finding_each() {
        let n = 64;
        let mut t = NonFull::new(n);
        for a in 0..n {
            t.push((a * 7 + 1, 1500), a);
        }
        for a in (0..n).step_by(2) {
            t.remove((a * 7 + 1, 1500), a);
        }
        for a in 0..n {
            let want = (a % 2 == 1).then_some(a);
            assert_eq!(t.last((a * 7 + 1, 1500)), want, "aggregate {a}");
        }
    }
}
