//! The debug invariant checker of the QFQ engine (the QFQ paper §4.1.3), run by
//! the tests after every operation and by [`Qfq::check_invariants`](super::Qfq::check_invariants).

// The checker exists in test and debug builds only (release builds keep
// no trace of it), and so do its imports.
#[cfg(any(test, debug_assertions))]
use super::engine::Group;
use super::engine::QfqCore;
#[cfg(any(test, debug_assertions))]
use super::*;

impl QfqCore {
    /// The debug invariant checker (the QFQ paper §4.1.3); see
    /// [`Qfq::check_invariants`].
    #[cfg(any(test, debug_assertions))]
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        let s = &self.sets;
        if s[ER] & s[IR] != 0
            || s[ER] & s[EB] != 0
            || s[ER] & s[IB] != 0
            || s[IR] & s[EB] != 0
            || s[IR] & s[IB] != 0
            || s[EB] & s[IB] != 0
        {
            return Err("ER/EB/IR/IB are not disjoint");
        }
        let all = s[ER] | s[IR] | s[EB] | s[IB];
        let mut queued = 0usize;
        for g in 0..NUM_GROUPS {
            let grp = &self.groups[g];
            let shift = slot_shift(g);
            let in_set = all & (1u64 << g) != 0;
            if in_set != (grp.full != 0) {
                return Err("a group is in a set iff it is backlogged");
            }
            if grp.full == 0 {
                continue;
            }
            if grp.full & 1 == 0 {
                return Err("a backlogged group's front bucket is empty");
            }
            if grp.s & ((1u64 << shift) - 1) != 0 || grp.f != grp.s.wrapping_add(2u64 << shift) {
                return Err("group timestamps are not S = k·σ, F = S + 2σ");
            }
            for slot in 0..NUM_SLOTS {
                let idx = ((grp.front + slot) & SLOT_MASK) as usize;
                let occupied = grp.full & (1u64 << slot) != 0;
                if occupied != (grp.head[idx] != NIL) {
                    return Err("bucket bitmap disagrees with the bucket lists");
                }
                let mut e = grp.head[idx];
                let mut prev = NIL;
                while e != NIL {
                    let ent = &self.ent[e as usize];
                    if !ent.queued || ent.group as usize != g || ent.prev != prev {
                        return Err("bucket list links or flags are inconsistent");
                    }
                    let want = grp.s.wrapping_add(u64::from(slot) << shift);
                    if round_down(ent.s, shift) != want {
                        return Err("an entity is filed in the wrong bucket");
                    }
                    if gt(ent.f.wrapping_sub(ent.s), 1u64 << shift) {
                        return Err("F - S exceeds the group's slot size");
                    }
                    queued += 1;
                    prev = e;
                    e = ent.next;
                }
                if grp.tail[idx] != prev {
                    return Err("bucket tail pointer is wrong");
                }
            }
            let bit = 1u64 << g;
            let eligible = (s[ER] | s[EB]) & bit != 0;
            if eligible && gt(grp.s, self.clock.now()) {
                return Err("a group in ER/EB has S > V");
            }
            if !eligible {
                if !gt(grp.s, self.old_v) {
                    return Err("a group in IR/IB has S <= V");
                }
                // GBT holds for the V the next selection uses: with ER
                // empty, the Eq. (3) bump to the first ineligible start is
                // still due (it is taken at selection, see `update_eligible`).
                let inel = s[IR] | s[IB];
                let first = self.groups[inel.trailing_zeros() as usize & GROUP_MASK].s;
                let v_sel = if s[ER] == 0 && gt(first, self.old_v) {
                    first
                } else {
                    self.old_v
                };
                if gt(grp.s, v_sel.wrapping_add(1u64 << shift)) {
                    return Err("an ineligible group has S > V + σ (GBT)");
                }
            }
            let next = s[ER] & above(g);
            let blocked_now = next != 0
                && gt(
                    grp.f,
                    self.groups[next.trailing_zeros() as usize & GROUP_MASK].f,
                );
            let blocked = (s[EB] | s[IB]) & bit != 0;
            if blocked != blocked_now {
                return Err("Ready/Blocked membership disagrees with the definition");
            }
        }
        if queued != self.ent.iter().filter(|e| e.queued).count() {
            return Err("a queued entity is missing from the buckets");
        }
        let sorted = |set: u64, key: &dyn Fn(&Group) -> u64| {
            let mut prev: Option<u64> = None;
            let mut x = set;
            while x != 0 {
                let g = x.trailing_zeros() as usize;
                x &= x - 1;
                let k = key(&self.groups[g]);
                if let Some(p) = prev {
                    if gt(p, k) {
                        return false;
                    }
                }
                prev = Some(k);
            }
            true
        };
        if !sorted(s[ER], &|g| g.f) {
            return Err("ER is not sorted by F");
        }
        if !sorted(s[EB], &|g| g.f) {
            return Err("EB is not sorted by F");
        }
        if !sorted(s[IR] | s[IB], &|g| g.s) || !sorted(s[IR] | s[IB], &|g| g.f) {
            return Err("IR ∪ IB is not sorted by S and F");
        }
        Ok(())
    }
}
