//! Slots: the running data path indexes its nodes and circuits by their
//! place in the running plan (queues, counters, statistics, names), so
//! a reload that renumbered them would have to move everything. Instead
//! the new plan is *arranged* before anything is built from it
//! ([`arrange`]): a node or circuit that stays keeps its index, a new
//! one takes the index of one that went (or comes after the others),
//! and only when fewer come than go do the last ones move down into the
//! gaps. A vector indexed by slot then follows the change with
//! [`Rearrange::apply`], which touches only the slots that change.
//!
//! A consequence an operator sees: after a reload the statistics list
//! the circuits (and nodes) in slot order, not in the file's order.

use crate::diff::Diff;
use crate::validate::Checked;

/// How a vector indexed by slot becomes the new plan's: the slots that
/// change, nothing about the ones that stay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rearrange {
    /// Length before.
    pub old_len: usize,
    /// Length after.
    pub new_len: usize,
    /// `(old slot, new slot)` of the items that stay at another slot.
    pub moves: Vec<(u32, u32)>,
    /// The new slots of the new items, ascending.
    pub adds: Vec<u32>,
    /// The old slots of the items that go, ascending.
    pub removed: Vec<u32>,
}

impl Rearrange {
    /// From each new slot's old slot (`None`: a new item) and the old
    /// length.
    pub fn of(from: &[Option<u32>], old_len: usize) -> Self {
        let mut kept = vec![false; old_len];
        let mut moves = Vec::new();
        let mut adds = Vec::new();
        for (s, f) in from.iter().enumerate() {
            match *f {
                Some(o) => {
                    if let Some(k) = kept.get_mut(o as usize) {
                        *k = true;
                    }
                    if o as usize != s {
                        moves.push((o, s as u32));
                    }
                }
                None => adds.push(s as u32),
            }
        }
        let removed = (0..old_len)
            .filter(|&o| !kept[o])
            .map(|o| o as u32)
            .collect();
        Rearrange {
            old_len,
            new_len: from.len(),
            moves,
            adds,
            removed,
        }
    }

    /// Nothing changes.
    pub fn is_identity(&self) -> bool {
        self.old_len == self.new_len && self.moves.is_empty() && self.adds.is_empty()
    }

    /// How many times [`Self::apply`] calls its `fresh`.
    pub fn fresh_count(&self) -> usize {
        let below = self.adds.iter().filter(|&&s| (s as usize) < self.old_len);
        self.moves.len() + self.new_len.saturating_sub(self.old_len) + below.count()
    }

    /// Turns `a` (`old_len` long, indexed by old slot) into the vector
    /// indexed by new slot: the items that stay where they are are not
    /// touched; `fresh(Some(slot))` gives a new item's entry,
    /// `fresh(None)` a stand-in that leaves again before the end; every
    /// entry that leaves `a` (those of the removed items and the
    /// stand-ins) goes to `retire`. O(changes).
    pub fn apply<T>(
        &self,
        a: &mut Vec<T>,
        mut fresh: impl FnMut(Option<u32>) -> T,
        mut retire: impl FnMut(T),
    ) {
        // As [`arrange`] makes them, every move goes from past the new
        // end into a gap before it, so no move's target is another's
        // source: each goes straight to its place, nothing parked (and
        // nothing allocated).
        let end = self.new_len as u32;
        if self.moves.iter().all(|&(o, s)| o >= end && s < end) {
            for &(o, s) in &self.moves {
                if let Some(x) = a.get_mut(o as usize) {
                    let x = std::mem::replace(x, fresh(None));
                    retire(std::mem::replace(&mut a[s as usize], x));
                }
            }
            self.resize_and_add(a, &mut fresh, &mut retire);
            return;
        }
        let mut parked = Vec::with_capacity(self.moves.len());
        for &(o, _) in &self.moves {
            if let Some(x) = a.get_mut(o as usize) {
                parked.push(std::mem::replace(x, fresh(None)));
            }
        }
        self.resize_and_add(a, &mut fresh, &mut retire);
        for (&(_, s), x) in self.moves.iter().zip(parked) {
            retire(std::mem::replace(&mut a[s as usize], x));
        }
    }

    /// [`Self::apply`]'s step after the moves left their places: `a`
    /// cut or grown to the new length, the new items put in.
    fn resize_and_add<T>(
        &self,
        a: &mut Vec<T>,
        fresh: &mut impl FnMut(Option<u32>) -> T,
        retire: &mut impl FnMut(T),
    ) {
        if self.new_len < a.len() {
            for x in a.drain(self.new_len..) {
                retire(x);
            }
        } else {
            a.reserve(self.new_len - a.len());
            for s in a.len()..self.new_len {
                let add = self.adds.binary_search(&(s as u32)).is_ok();
                a.push(fresh(add.then_some(s as u32)));
            }
        }
        for &s in &self.adds {
            if (s as usize) < self.old_len {
                retire(std::mem::replace(&mut a[s as usize], fresh(Some(s))));
            }
        }
    }
}

/// Each new item's slot: an item that stays keeps its old index if it
/// is within the new length; the others (new ones, and those that stay
/// beyond the new length) fill the free slots in order.
fn slots(from: &[Option<usize>]) -> Vec<usize> {
    let n = from.len();
    let mut taken = vec![false; n];
    let mut slot = vec![usize::MAX; n];
    for (i, f) in from.iter().enumerate() {
        if let Some(o) = *f {
            if o < n {
                slot[i] = o;
                taken[o] = true;
            }
        }
    }
    let mut free = (0..n).filter(|&s| !taken[s]);
    for s in slot.iter_mut().filter(|s| **s == usize::MAX) {
        // As many free slots as items without one.
        *s = free.next().unwrap_or(usize::MAX);
    }
    slot
}

/// Puts item `i` of `v` at `slot[i]`: in place, each cycle of the
/// permutation followed by swaps (the plan's circuits are large, and
/// moving each once beats building the vector again). `slot` is a
/// permutation of `0..v.len()` ([`slots`] of a plan's `from`);
/// anything else is left to [`place_by_copy`].
fn place<T>(mut v: Vec<T>, slot: &[usize]) -> Vec<T> {
    let n = v.len();
    let mut hit = vec![false; n];
    let permutation = slot.len() == n
        && slot
            .iter()
            .all(|&s| s < n && !std::mem::replace(&mut hit[s], true));
    if !permutation {
        return place_by_copy(v, slot);
    }
    let mut to = slot.to_vec();
    for i in 0..n {
        // The item at `i` goes to `to[i]`; the one it displaces comes to `i`.
        while to[i] != i {
            let j = to[i];
            v.swap(i, j);
            to.swap(i, j);
        }
    }
    v
}

/// [`place`] by building the vector again: an item whose slot is out of
/// range is dropped, and of items given the same slot the last stays.
fn place_by_copy<T>(v: Vec<T>, slot: &[usize]) -> Vec<T> {
    let mut out: Vec<Option<T>> = (0..v.len()).map(|_| None).collect();
    for (i, x) in v.into_iter().enumerate() {
        if let Some(o) = slot.get(i).and_then(|&s| out.get_mut(s)) {
            *o = Some(x);
        }
    }
    out.into_iter().flatten().collect()
}

/// `new` arranged against the running plan (`d`: their difference,
/// whose `node_from` and `circuit_from` are rearranged alike): the same
/// plan, every node and circuit at its slot, every index in it mapped.
pub fn arrange(new: Checked, d: &mut Diff) -> Checked {
    let ns = slots(&d.node_from);
    let cs = slots(&d.circuit_from);
    if ns.contains(&usize::MAX) || cs.contains(&usize::MAX) {
        return new;
    }
    let node = |p: Option<usize>| p.map(|i| ns[i]);
    let Checked {
        mut plan,
        node_parent,
        node_depth,
        circuit_parent,
        device_circuit,
        rule_circuit,
        default_parent,
        node_min,
    } = new;
    plan.nodes = place(std::mem::take(&mut plan.nodes), &ns);
    plan.circuits = place(std::mem::take(&mut plan.circuits), &cs);
    d.node_from = place(std::mem::take(&mut d.node_from), &ns);
    d.circuit_from = place(std::mem::take(&mut d.circuit_from), &cs);
    Checked {
        plan,
        node_parent: place(node_parent.into_iter().map(node).collect(), &ns),
        node_depth: place(node_depth, &ns),
        circuit_parent: place(circuit_parent.into_iter().map(node).collect(), &cs),
        device_circuit: device_circuit.into_iter().map(|c| cs[c]).collect(),
        rule_circuit: rule_circuit.into_iter().map(|c| cs[c]).collect(),
        default_parent: node(default_parent),
        node_min: place(node_min, &ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Moves that [`arrange`] does not make (two items trading places)
    /// go through the parked path.
    #[test]
    fn items_that_trade_places_are_parked() {
        let r = Rearrange::of(&[Some(1), Some(0), None], 2);
        let mut a = vec![10, 11];
        let mut retired = Vec::new();
        r.apply(
            &mut a,
            |s| s.map_or(-1, |s| 100 + i64::from(s)),
            |x| retired.push(x),
        );
        assert_eq!(a, [11, 10, 102]);
        assert!(retired.iter().all(|&x| x == -1), "{retired:?}");
    }

    proptest! {
        /// In place or by copy, an item ends at its slot.
        #[test]
        fn placed_in_place_as_by_copy(n in 0usize..60, seed: u64) {
            let mut slot: Vec<usize> = (0..n).collect();
            let mut rnd = crate::datapath::test_plan::rng(seed);
            for i in (1..n).rev() {
                slot.swap(i, rnd(i as u64 + 1) as usize);
            }
            let v: Vec<String> = (0..n).map(|i| format!("item {i}")).collect();
            let placed = place(v.clone(), &slot);
            prop_assert_eq!(&placed, &place_by_copy(v.clone(), &slot));
            for (i, x) in v.iter().enumerate() {
                prop_assert_eq!(&placed[slot[i]], x);
            }
        }
    }

    #[test]
    fn a_slot_list_that_is_no_permutation_is_placed_by_copy() {
        let v = vec!['a', 'b', 'c'];
        assert_eq!(place(v.clone(), &[1, 1, 0]), ['c', 'b']);
        assert_eq!(place(v.clone(), &[2, 9, 0]), ['c', 'a']);
        assert_eq!(place(v, &[0, 1]), ['a', 'b']);
    }

    proptest! {
        /// Applied to a vector of old slots' items, the rearrangement
        /// gives each new slot its old item or a new one, and retires
        /// exactly the removed items and the stand-ins.
        #[test]
        fn a_rearranged_vector_is_the_new_one(keep in proptest::collection::vec(any::<bool>(), 0..40), adds in 0usize..20, seed: u64) {
            let old: Vec<i64> = (0..keep.len() as i64).collect();
            let mut from: Vec<Option<usize>> = keep.iter().enumerate().filter(|(_, k)| **k).map(|(o, _)| Some(o)).collect();
            from.extend(std::iter::repeat_n(None, adds));
            // Shuffle the new order.
            let mut rnd = crate::datapath::test_plan::rng(seed);
            for i in (1..from.len()).rev() {
                from.swap(i, rnd(i as u64 + 1) as usize);
            }
            let slot = slots(&from);
            let by_slot = place(from.clone(), &slot);
            for (s, f) in by_slot.iter().enumerate() {
                if let Some(o) = f {
                    if *o < by_slot.len() {
                        prop_assert_eq!(*o, s, "an item that stays within the length keeps its slot");
                    }
                }
            }
            let r = Rearrange::of(&by_slot.iter().map(|f| f.map(|o| o as u32)).collect::<Vec<_>>(), old.len());
            let mut a = old.clone();
            let (mut fresh, mut retired) = (0, Vec::new());
            r.apply(&mut a, |add| { fresh += 1; add.map_or(-1, |s| 1000 + i64::from(s)) }, |x| retired.push(x));
            prop_assert_eq!(fresh, r.fresh_count());
            let want: Vec<i64> = by_slot.iter().enumerate().map(|(s, f)| f.map_or(1000 + s as i64, |o| o as i64)).collect();
            prop_assert_eq!(&a, &want);
            let mut gone: Vec<i64> = retired.into_iter().filter(|&x| x >= 0).collect();
            gone.sort_unstable();
            prop_assert_eq!(gone, r.removed.iter().map(|&o| i64::from(o)).collect::<Vec<_>>());
        }
    }
}
