//! The QFQ engine over abstract entities `0..n`: the group sets, bucket
//! rings and virtual clock of the QFQ paper §4 (see the [module doc](super) for the
//! derivation). Flows are its entities in [`Qfq`](super::Qfq), aggregates in
//! QFQ+ ([`QfqAggregates`](crate::sched::sched_plus::QfqAggregates)).

use super::*;
use crate::sched::vtime::{Era, VirtualClock};
use alloc::vec::Vec;

/// Per-entity (flow or aggregate) state: exact timestamps and bucket links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ent {
    pub(super) s: u64,
    pub(super) f: u64,
    /// While queued, the previous entity in its bucket list. While idle the
    /// links are unused, and `prev` holds the era of `f` on the virtual
    /// clock instead (see [`QfqCore::went_idle`]): the entity stays 32
    /// bytes, two to a cache line.
    pub(super) prev: u32,
    pub(super) next: u32,
    pub(super) inv_w: u32,
    pub(super) group: u8,
    pub(super) queued: bool,
}

const ENT0: Ent = Ent {
    s: 0,
    f: 0,
    prev: NIL,
    next: NIL,
    inv_w: 0,
    group: 0,
    queued: false,
};

/// One group: timestamps and a ring of bucket lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Group {
    pub(super) s: u64,
    pub(super) f: u64,
    /// Bit j set iff bucket `(front + j) % NUM_SLOTS` is non-empty; bit 0
    /// is set whenever the group is backlogged.
    pub(super) full: u64,
    pub(super) front: u32,
    pub(super) head: [u32; NUM_SLOTS as usize],
    pub(super) tail: [u32; NUM_SLOTS as usize],
}

/// Unit tests: which fast path [`QfqCore`] breaks on purpose.
#[cfg(test)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Broken {
    Nothing,
    /// `requeue_head`'s same-bucket rotation is skipped.
    Rotation,
    /// The turn end's successor path leaves the successor's `prev` link
    /// pointing at the aggregate that left.
    SuccessorLink,
    /// The turn end's successor path returns the aggregate just served.
    Successor,
}

/// The QFQ machinery over abstract entities `0..n` (flows for [`Qfq`],
/// aggregates for [`QfqAggregates`]).
#[derive(Clone)]
pub(crate) struct QfqCore {
    pub(super) ent: Vec<Ent>,
    /// Groups `0..NUM_GROUPS` (the rest unused), indexed `g & GROUP_MASK`.
    pub(super) groups: alloc::boxed::Box<[Group; GROUP_SLOTS]>,
    pub(super) sets: [u64; 4],
    /// The system virtual time V, counting its wraps (see [`crate::sched::vtime`]).
    pub(super) clock: VirtualClock,
    /// V at the last eligibility update: groups in IR/IB have `S > old_v`.
    pub(super) old_v: u64,
    pub(super) iwsum: u64,
    pub(super) weight_sum: u64,
    pub(super) clamps: u64,
    /// Debug builds: check every fast path of `served_head` against the
    /// general path run on a copy (see [`Qfq::verify_fast_paths`]).
    #[cfg(debug_assertions)]
    pub(super) verify_fast_paths: bool,
    /// Unit tests: a deliberately broken fast path, to show that the
    /// differential check catches it (see [`Broken`]).
    #[cfg(test)]
    pub(crate) broken: Broken,
    /// Unit tests: how often each `requeue_head` fast path ran (same
    /// bucket, alone in the group, re-filed ahead) and the turn end's
    /// successor path ([`Self::end_turn`]), so that a test can show its
    /// workload takes each of them.
    #[cfg(test)]
    pub(crate) fast_path_hits: [u64; 4],
}

impl QfqCore {
    pub(crate) fn new(n: u32) -> Self {
        let g = Group {
            s: 0,
            f: 0,
            full: 0,
            front: 0,
            head: [NIL; NUM_SLOTS as usize],
            tail: [NIL; NUM_SLOTS as usize],
        };
        Self {
            ent: alloc::vec![ENT0; n as usize],
            groups: alloc::vec![g; GROUP_SLOTS]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| unreachable!()),
            sets: [0; 4],
            clock: VirtualClock::default(),
            old_v: 0,
            iwsum: 0,
            weight_sum: 0,
            clamps: 0,
            #[cfg(debug_assertions)]
            verify_fast_paths: false,
            #[cfg(test)]
            broken: Broken::Nothing,
            #[cfg(test)]
            fast_path_hits: [0; 4],
        }
    }

    /// The state `served_head` must leave identical on every path.
    #[cfg(debug_assertions)]
    fn same_state(&self, other: &Self) -> bool {
        self.ent == other.ent
            && self.groups == other.groups
            && self.sets == other.sets
            && (self.clock, self.old_v, self.clamps) == (other.clock, other.old_v, other.clamps)
    }

    /// How many timestamps were shifted back to fit the bucket ring.
    pub(crate) fn clamps(&self) -> u64 {
        self.clamps
    }

    /// Debug builds: check every fast path of `served_head` and `release`
    /// against the general path run on a copy (a differential test; slow).
    #[cfg(debug_assertions)]
    pub(crate) fn set_verify_fast_paths(&mut self, on: bool) {
        self.verify_fast_paths = on;
    }

    /// Sets a configured entity's per-byte virtual-time step (an
    /// aggregate's, when its membership changes).
    pub(crate) fn set_inv_w(&mut self, e: usize, inv_w: u32) {
        self.ent[e].inv_w = inv_w;
    }

    pub(crate) fn set_weight_sum(&mut self, w: u64) {
        self.weight_sum = w;
        self.iwsum = (1u64 << (QFQ_FRAC_BITS + IWSUM_EXTRA))
            .checked_div(w)
            .unwrap_or(0);
    }

    /// Sets an idle entity's weight inverse and group; timestamps start at V
    /// if `fresh`.
    pub(crate) fn configure(&mut self, e: usize, inv_w: u32, group: usize, fresh: bool) {
        let v = self.clock.now();
        let ent = &mut self.ent[e];
        ent.inv_w = inv_w;
        ent.group = group as u8;
        if fresh {
            ent.s = v;
            ent.f = v;
            self.went_idle(e);
        }
    }

    /// Drops the finish time of idle entity `e` if it is ahead of V (a
    /// reconfigured flow restarts as a newly backlogged one: its old `F` was
    /// earned in another group).
    pub(crate) fn forget_future_finish(&mut self, e: usize) {
        if self.clock.is_ahead(self.ent[e].f, self.idle_era(e)) {
            self.ent[e].f = self.clock.now();
            self.went_idle(e);
        }
    }

    /// Entity `e` is idle from now on, with finish time `ent[e].f`: its
    /// (unused) `prev` link records the era of `f`, so that its restart
    /// `max(V, F)` is exact after any idle time, also across wraps of V.
    #[inline]
    fn went_idle(&mut self, e: usize) {
        let ent = &mut self.ent[e];
        ent.prev = self.clock.era(ent.f);
    }

    /// The era of idle entity `e`'s finish time (see [`Self::went_idle`]).
    #[inline]
    fn idle_era(&self, e: usize) -> Era {
        self.ent[e].prev
    }

    /// Test hook: advances V by `delta` while no entity is scheduled.
    pub(crate) fn warp_idle_clock(&mut self, delta: u64) {
        debug_assert!(self.sets == [0; 4]);
        self.clock.advance(delta);
        self.old_v = self.clock.now();
    }

    #[inline]
    pub(crate) fn inv_w(&self, e: usize) -> u32 {
        self.ent[e].inv_w
    }

    /// [`Self::inv_w`], `None` if `e` is not an entity.
    #[inline]
    pub(crate) fn inv_w_checked(&self, e: usize) -> Option<u32> {
        self.ent.get(e).map(|ent| ent.inv_w)
    }

    #[cfg(any(test, debug_assertions))]
    pub(crate) fn is_queued(&self, e: usize) -> bool {
        self.ent[e].queued
    }

    #[inline]
    fn advance_v(&mut self, len: u64) {
        self.clock.advance((len * self.iwsum) >> IWSUM_EXTRA);
    }

    #[inline]
    fn move_groups(&mut self, mask: u64, src: usize, dst: usize) {
        self.sets[dst] |= self.sets[src] & mask;
        self.sets[src] &= !mask;
    }

    /// `compute_group_state` (Fig. 4).
    #[inline]
    fn calc_state(&self, g: usize) -> usize {
        let grp = &self.groups[g];
        let mut st = if gt(grp.s, self.clock.now()) { IR } else { ER };
        let next = self.sets[ER] & above(g);
        if next != 0
            && gt(
                grp.f,
                self.groups[next.trailing_zeros() as usize & GROUP_MASK].f,
            )
        {
            st |= EB;
        }
        st
    }

    /// `make_eligible` (Fig. 6): moves from IR/IB to ER/EB every group whose
    /// slot boundary V crossed since `old_v`.
    #[inline]
    fn make_eligible(&mut self) {
        let diff = (self.old_v ^ self.clock.now()) >> MIN_SLOT_SHIFT;
        self.old_v = self.clock.now();
        if diff != 0 {
            let pos = 64 - diff.leading_zeros();
            let mask = if pos >= 64 { !0 } else { (1u64 << pos) - 1 };
            self.move_groups(mask, IR, ER);
            self.move_groups(mask, IB, EB);
        }
    }

    /// Eq. (3) and `make_eligible`: if nothing is eligible, bump V to the
    /// smallest ineligible group start (IR ∪ IB is sorted by S). Called only
    /// when a packet is selected ([`first_er`](Self::first_er)), not at the
    /// end of a dequeue as in Fig. 5: until the link asks for the next
    /// packet, the flow just served still owns a packet not completely
    /// transmitted, so it is in `B(t)` of Eq. (3) (the QFQ paper §3) and V must
    /// not jump past it. A flow refilled meanwhile is then stamped
    /// `max(V, F)` with the V it was competing at, not a V raised to an
    /// ineligible group's start, which would forfeit its lead at every
    /// refill (exact WF2Q+ bumps at selection too).
    #[inline]
    fn update_eligible(&mut self) {
        let inel = self.sets[IR] | self.sets[IB];
        if inel != 0 {
            if self.sets[ER] == 0 {
                let s = self.groups[inel.trailing_zeros() as usize & GROUP_MASK].s;
                self.clock.advance_to(s);
            }
            self.make_eligible();
        } else {
            self.old_v = self.clock.now();
        }
    }

    /// After a dequeue advanced V: `make_eligible` for the groups V reached,
    /// without the Eq. (3) bump, which waits for the next selection (see
    /// [`update_eligible`](Self::update_eligible)).
    #[inline]
    fn after_service(&mut self) {
        if self.sets[IR] | self.sets[IB] != 0 {
            self.make_eligible();
        } else {
            self.old_v = self.clock.now();
        }
    }

    /// `unblock_groups` (Fig. 6, Theorem 8), generalised to a group that is
    /// not the lowest in ER (forced deactivation): after group `g` with old
    /// finish time `old_f` grew or emptied, the groups it blocked — those
    /// between the highest ER group below `g` and `g` — become ready unless
    /// the next ER group above `g` has a finish time `≤ old_f`.
    fn unblock_groups(&mut self, g: usize, old_f: u64) {
        // Nothing blocked (the usual case with few groups): nothing to move.
        if self.sets[EB] | self.sets[IB] == 0 {
            return;
        }
        let next = self.sets[ER] & above(g);
        if next != 0
            && !gt(
                self.groups[next.trailing_zeros() as usize & GROUP_MASK].f,
                old_f,
            )
        {
            return;
        }
        let lower_er = self.sets[ER] & below(g);
        let floor = if lower_er != 0 {
            let z = 63 - lower_er.leading_zeros() as usize;
            above(z)
        } else {
            !0
        };
        let mask = below(g) & floor;
        self.move_groups(mask, EB, ER);
        self.move_groups(mask, IB, IR);
    }

    /// Start time of a newly backlogged entity (Eq. 2 with the Eq. 29
    /// back-shift of Lemma 4).
    ///
    /// Whether the entity's finish time is still ahead of V is decided
    /// exactly, by its era (see [`crate::sched::vtime`]): a finish time left behind
    /// by V, however long ago, is ignored (`S = V`). A finish time beyond the GBT window `⌊V⌋_σ + σ` of the entity's group
    /// (possible only after a reconfiguration moved it to a smaller group)
    /// is capped to that bound, the canonical start of an ineligible group.
    pub(crate) fn start_time(&mut self, e: usize) -> u64 {
        self.sync_eligible();
        let ent = &self.ent[e];
        let g = ent.group as usize & GROUP_MASK;
        let shift = slot_shift(g);
        let f = ent.f;
        let v = self.clock.now();
        if self.clock.is_ahead(f, self.idle_era(e)) {
            let limit = round_down(v, shift).wrapping_add(1u64 << shift);
            return if gt(f, limit) { limit } else { f };
        }
        let next = self.sets[ER] & above(g);
        if next != 0 {
            let fb = self.groups[next.trailing_zeros() as usize & GROUP_MASK].f;
            if gt(v, fb) {
                // Lemma 4 back-shift: S = min(V, F_b) = F_b (see the module
                // doc), but not below the group's current start.
                let grp = &self.groups[g];
                return if grp.full != 0 && gt(grp.s, fb) {
                    grp.s
                } else {
                    fb
                };
            }
        }
        v
    }

    /// Brings the eligibility sets up to date with V (QFQ+ mode, where V
    /// advances while an aggregate is served outside the buckets).
    #[inline]
    fn sync_eligible(&mut self) {
        if self.clock.now() != self.old_v {
            if self.sets[IR] | self.sets[IB] != 0 {
                self.make_eligible();
            } else {
                self.old_v = self.clock.now();
            }
        }
    }

    #[inline(always)]
    fn list_append(&mut self, g: usize, idx: usize, e: usize) {
        let t = self.groups[g].tail[idx];
        self.ent[e].prev = t;
        self.ent[e].next = NIL;
        if t == NIL {
            self.groups[g].head[idx] = e as u32;
        } else {
            self.ent[t as usize].next = e as u32;
        }
        self.groups[g].tail[idx] = e as u32;
    }

    /// Unlinks `e` from bucket `idx`; returns true if the bucket emptied.
    #[inline(always)]
    fn list_unlink(&mut self, g: usize, idx: usize, e: usize) -> bool {
        let Ent { prev, next, .. } = self.ent[e];
        if prev == NIL {
            self.groups[g].head[idx] = next;
        } else {
            self.ent[prev as usize].next = next;
        }
        if next == NIL {
            self.groups[g].tail[idx] = prev;
        } else {
            self.ent[next as usize].prev = prev;
        }
        self.ent[e].prev = NIL;
        self.ent[e].next = NIL;
        self.groups[g].head[idx] == NIL
    }

    /// [`Self::list_unlink`] for `e`, the head of bucket `idx` (no
    /// predecessor); leaves `e`'s links to be overwritten by the caller.
    /// Returns true if the bucket emptied.
    #[inline(always)]
    fn unlink_head(&mut self, g: usize, idx: usize, e: usize) -> bool {
        let next = self.ent[e].next;
        self.groups[g].head[idx] = next;
        if next == NIL {
            self.groups[g].tail[idx] = NIL;
            return true;
        }
        self.ent[next as usize].prev = NIL;
        false
    }

    /// Moves `e`, the head of bucket `idx`, to its tail (nothing to do if
    /// it is alone there).
    #[inline(always)]
    fn bucket_rotate(&mut self, g: usize, idx: usize, e: usize) {
        let next = self.ent[e].next;
        if next == NIL {
            return;
        }
        let tail = self.groups[g].tail[idx];
        self.groups[g].head[idx] = next;
        self.ent[next as usize].prev = NIL;
        self.ent[tail as usize].next = e as u32;
        self.ent[e].prev = tail;
        self.ent[e].next = NIL;
        self.groups[g].tail[idx] = e as u32;
    }

    /// `bucket_insert`: files `e` (rounded start `rs ≥ S_g`) in its bucket.
    #[inline(always)]
    fn slot_insert(&mut self, e: usize, g: usize, rs: u64) {
        let shift = slot_shift(g);
        let gs = self.groups[g].s;
        let mut slot = rs.wrapping_sub(gs) >> shift;
        if slot > MAX_INSERT_SLOT {
            // Beyond the Theorem-5 window (see the module doc): shift back.
            let delta = rs.wrapping_sub(gs).wrapping_sub(MAX_INSERT_SLOT << shift);
            let ent = &mut self.ent[e];
            ent.s = ent.s.wrapping_sub(delta);
            ent.f = ent.f.wrapping_sub(delta);
            slot = MAX_INSERT_SLOT;
            self.clamps += 1;
        }
        let idx = ((self.groups[g].front + slot as u32) & SLOT_MASK) as usize;
        self.list_append(g, idx, e);
        self.groups[g].full |= 1u64 << slot;
        self.ent[e].queued = true;
    }

    /// Schedules entity `e` with exact timestamps `s`, `f` (enqueue lines
    /// 10–29 of Fig. 4; `qfq_schedule_agg` for aggregates).
    pub(crate) fn schedule(&mut self, e: usize, s: u64, f: u64) {
        self.sync_eligible();
        let g = self.ent[e].group as usize & GROUP_MASK;
        let shift = slot_shift(g);
        self.ent[e].s = s;
        self.ent[e].f = f;
        let mut rs = round_down(s, shift);
        let bit = 1u64 << g;
        let grp = &mut self.groups[g];
        if grp.full != 0 {
            if !gt(grp.s, rs) {
                self.slot_insert(e, g, rs);
                return;
            }
            // S_g decreases: the group was ineligible; rotate the ring back.
            let i = rs.wrapping_sub(grp.s).wrapping_neg() >> shift;
            if i >= u64::from(grp.full.leading_zeros()) {
                // Cannot happen under the GBT property (i == 1 and at most
                // 63 slots in use); keep the ring intact by filing the entry
                // in the front slot instead.
                let delta = grp.s.wrapping_sub(rs);
                self.ent[e].s = s.wrapping_add(delta);
                self.ent[e].f = f.wrapping_add(delta);
                self.clamps += 1;
                rs = grp.s;
                self.slot_insert(e, g, rs);
                return;
            }
            grp.full <<= i;
            grp.front = grp.front.wrapping_sub(i as u32) & SLOT_MASK;
        }
        // No Eq. (3) jump of V here even if nothing else is scheduled (Fig. 4
        // lines 24-25): the packet dequeued last may still be on the link,
        // its flow then still in B(t), and a flow arriving next must be
        // stamped at the V it competes at. The next selection jumps V
        // ([`update_eligible`](Self::update_eligible)).
        let grp = &mut self.groups[g];
        grp.s = rs;
        grp.f = rs.wrapping_add(2u64 << shift);
        for set in self.sets.iter_mut() {
            *set &= !bit;
        }
        let st = self.calc_state(g);
        self.sets[st] |= bit;
        self.slot_insert(e, g, rs);
    }

    /// Makes sure ER is non-empty if anything is scheduled; returns the
    /// lowest ER group.
    #[inline]
    fn first_er(&mut self) -> Option<usize> {
        if self.sets[ER] == 0 {
            self.update_eligible();
            if self.sets[ER] == 0 {
                return None;
            }
        }
        Some(self.sets[ER].trailing_zeros() as usize & GROUP_MASK)
    }

    /// The entity the next dequeue serves (head of the front bucket of the
    /// lowest ER group).
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<usize> {
        let g = self.first_er()?;
        let grp = &self.groups[g];
        Some(grp.head[grp.front as usize & SLOT_INDEX_MASK] as usize)
    }

    /// After an entity left group `g` (served or removed): advance the ring
    /// to the first non-empty bucket, update the group's timestamps and set
    /// (idle groups leave every set) and, if `g` was in ER, unblock the
    /// groups it was blocking (`old_f` = its finish time before).
    #[inline(always)]
    fn refresh_group(&mut self, g: usize, old_f: u64) {
        let bit = 1u64 << g;
        let was_er = self.sets[ER] & bit != 0;
        let grp = &mut self.groups[g];
        if grp.full == 0 {
            for set in self.sets.iter_mut() {
                *set &= !bit;
            }
        } else {
            if grp.full & 1 == 0 {
                self.advance_ring(g);
                self.reclassify(g, bit, was_er, old_f);
            }
            return;
        }
        if was_er {
            self.unblock_groups(g, old_f);
        }
    }

    /// Moves group `g`'s ring to its first non-empty bucket (the front one
    /// is empty, another is not) and re-times the group.
    #[inline(always)]
    fn advance_ring(&mut self, g: usize) {
        let grp = &mut self.groups[g];
        let i = grp.full.trailing_zeros();
        let shift = slot_shift(g);
        grp.front = (grp.front + i) & SLOT_MASK;
        grp.full >>= i;
        grp.s = grp.s.wrapping_add(u64::from(i) << shift);
        grp.f = grp.s.wrapping_add(2u64 << shift);
    }

    /// After a dequeue moved group `g` (bit `bit`) forward: files it in the
    /// set its new timestamps put it in, unblocks what it blocked and
    /// updates eligibility, as `reclassify` + `update_eligible` do.
    ///
    /// Shortcut when `g` is the only backlogged group (it was served, so it
    /// is in ER): it stays in ER if its new start is not ahead of V, else it
    /// goes to IR (nothing can block it) and the next selection bumps V to
    /// its start (Eq. 3), as the general route computes. This happens on every packet
    /// of a flow served alone while other configured flows are idle: `V`
    /// then advances at `w/W` of the flow's rate, so its start outruns V.
    #[inline(always)]
    fn moved_forward(&mut self, g: usize, bit: u64, was_er: bool, old_f: u64) {
        if self.sets == [bit, 0, 0, 0] {
            if gt(self.groups[g].s, self.clock.now()) {
                self.sets = [0, bit, 0, 0];
            }
            self.old_v = self.clock.now();
            return;
        }
        self.reclassify(g, bit, was_er, old_f);
        self.after_service();
    }

    /// Group `g` (bit `bit`) got new timestamps: file it in the set they
    /// put it in and, if it was in ER, unblock the groups it blocked.
    #[inline(always)]
    fn reclassify(&mut self, g: usize, bit: u64, was_er: bool, old_f: u64) {
        for set in self.sets.iter_mut() {
            *set &= !bit;
        }
        let st = self.calc_state(g);
        self.sets[st] |= bit;
        if was_er {
            self.unblock_groups(g, old_f);
        }
    }

    /// Dequeue of Fig. 5 for the head entity `e` of the first ER group (as
    /// returned by [`peek`](Self::peek)) after it sent `len` bytes; `next`
    /// is the virtual length (`len · inv_w`) of its new head packet, if any.
    #[inline(always)]
    pub(crate) fn served_head(&mut self, e: usize, len: u32, next: Option<u64>) {
        #[cfg(debug_assertions)]
        if self.verify_fast_paths {
            let mut general = self.clone();
            general.verify_fast_paths = false;
            general.served_head_general(e, len, next);
            self.served_head_fast(e, len, next);
            assert!(
                self.same_state(&general),
                "a served_head fast path diverged from the general path"
            );
            return;
        }
        self.served_head_fast(e, len, next);
    }

    /// `served_head` with its fast paths (the common cases of one packet
    /// served), falling back to [`Self::served_head_general`].
    #[inline(always)]
    fn served_head_fast(&mut self, e: usize, len: u32, next: Option<u64>) {
        if let Some(vl) = next {
            let new_s = self.ent[e].f;
            if self.requeue_head::<false>(e, new_s, vl, len) {
                return;
            }
        }
        self.served_head_general(e, len, next);
    }

    /// The fast paths shared by a QFQ dequeue and a QFQ+ turn end: `e`, the
    /// head of its group's front bucket, is charged `len` bytes of V and
    /// re-filed with exact timestamps `S = new_s ≥ S_e`, `F = S + vl`, in
    /// the common cases where this is cheaper than unlink + re-file +
    /// refresh; returns false, having changed nothing, in the others. Each
    /// case leaves the state the general path would (checked by the
    /// `verify_fast_paths` differential tests).
    ///
    /// `ALONE_OUT_OF_LINE`: the alone-in-its-group case is a call (QFQ+
    /// turn ends, where it is rare from a few aggregates up and the inlined
    /// case costs the common ones registers).
    #[inline(always)]
    fn requeue_head<const ALONE_OUT_OF_LINE: bool>(
        &mut self,
        e: usize,
        new_s: u64,
        vl: u64,
        len: u32,
    ) -> bool {
        let ent = self.ent[e];
        let g = ent.group as usize & GROUP_MASK;
        let front = self.groups[g].front as usize & SLOT_INDEX_MASK;
        // Common case: the new start `S` still rounds down to the front
        // slot (for a flow, a packet shorter than the slot, which is ≥ σ).
        // The entity moves to the tail of the same bucket (or stays, alone
        // there), the front bucket stays non-empty, so the group's S_g, F_g
        // and set are unchanged: the unlink/insert/refresh of the general
        // path would leave them as they are.
        let shift = slot_shift(g);
        let gs = self.groups[g].s;
        // `S_g` is a slot boundary, so the slot of `S` relative to the
        // front one is `(S - S_g) >> shift`, `round_down` not needed (a
        // start below `S_g`, impossible for the head, wraps to a huge slot
        // and takes the general path).
        let slot = new_s.wrapping_sub(gs) >> shift;
        if slot == 0 {
            self.advance_v(u64::from(len));
            #[cfg(test)]
            let rotate = self.broken != Broken::Rotation;
            #[cfg(not(test))]
            let rotate = true;
            if rotate {
                self.bucket_rotate(g, front, e);
            }
            #[cfg(test)]
            {
                self.fast_path_hits[0] += 1;
            }
            let ent = &mut self.ent[e];
            ent.s = new_s;
            ent.f = new_s.wrapping_add(vl);
            self.after_service();
            return true;
        }
        // Alone in its group (alone in the front bucket, no other bucket
        // used) and still within the ring: the group moves with it. This
        // is what unlink + re-file + refresh_group compute, without the
        // list and bitmap round trip.
        if slot > MAX_INSERT_SLOT {
            return false;
        }
        self.advance_v(u64::from(len));
        if ent.prev == NIL && ent.next == NIL && self.groups[g].full == 1 {
            let rs = gs.wrapping_add(slot << shift);
            if ALONE_OUT_OF_LINE {
                self.requeue_alone_out_of_line(e, new_s, vl, rs, slot);
            } else {
                self.requeue_alone(e, new_s, vl, rs, slot);
            }
            return true;
        }
        #[cfg(test)]
        {
            self.fast_path_hits[2] += 1;
        }
        // Sharing its group, re-filed `slot` (≥ 1) buckets ahead within
        // the ring: the general path with the slot computed once, and
        // the group refreshed only if the front bucket emptied (else
        // refresh_group finds bucket 0 non-empty and changes nothing).
        let emptied = self.unlink_head(g, front, e);
        let ent = &mut self.ent[e];
        ent.s = new_s;
        ent.f = new_s.wrapping_add(vl);
        let to = (front + slot as usize) & SLOT_INDEX_MASK;
        self.list_append(g, to, e);
        self.groups[g].full |= 1u64 << slot;
        if emptied {
            // The ring moves to the bucket `e` went to, or before.
            self.groups[g].full &= !1;
            let old_f = self.groups[g].f;
            let bit = 1u64 << g;
            let was_er = self.sets[ER] & bit != 0;
            self.advance_ring(g);
            self.moved_forward(g, bit, was_er, old_f);
            return true;
        }
        self.after_service();
        true
    }

    /// [`Self::requeue_head`]'s case of `e` alone in its group: the group
    /// moves with it to its new slot `slot` (`1..=MAX_INSERT_SLOT`), rounded
    /// start `rs`. This is what unlink + re-file + refresh_group compute,
    /// without the list and bitmap round trip. V is already charged.
    #[inline(always)]
    fn requeue_alone(&mut self, e: usize, new_s: u64, vl: u64, rs: u64, slot: u64) {
        let g = self.ent[e].group as usize & GROUP_MASK;
        let shift = slot_shift(g);
        let bit = 1u64 << g;
        let was_er = self.sets[ER] & bit != 0;
        let grp = &mut self.groups[g];
        let front = grp.front as usize & SLOT_INDEX_MASK;
        let old_f = grp.f;
        let to = (front + slot as usize) & SLOT_INDEX_MASK;
        grp.head[front] = NIL;
        grp.tail[front] = NIL;
        grp.head[to] = e as u32;
        grp.tail[to] = e as u32;
        grp.front = to as u32;
        grp.s = rs;
        grp.f = rs.wrapping_add(2u64 << shift);
        let ent = &mut self.ent[e];
        ent.s = new_s;
        ent.f = new_s.wrapping_add(vl);
        self.moved_forward(g, bit, was_er, old_f);
        #[cfg(test)]
        {
            self.fast_path_hits[1] += 1;
        }
    }

    /// [`Self::requeue_alone`], out of line.
    #[inline(never)]
    fn requeue_alone_out_of_line(&mut self, e: usize, new_s: u64, vl: u64, rs: u64, slot: u64) {
        self.requeue_alone(e, new_s, vl, rs, slot);
    }

    /// `served_head` without the fast paths: unlink, re-file, refresh.
    #[inline(always)]
    fn served_head_general(&mut self, e: usize, len: u32, next: Option<u64>) {
        let g = self.ent[e].group as usize & GROUP_MASK;
        let front = self.groups[g].front as usize;
        self.advance_v(u64::from(len));
        if self.list_unlink(g, front, e) {
            self.groups[g].full &= !1;
        }
        let ent = &mut self.ent[e];
        ent.s = ent.f;
        match next {
            Some(vl) => {
                ent.f = ent.s.wrapping_add(vl);
                let rs = round_down(ent.s, slot_shift(g));
                self.slot_insert(e, g, rs);
            }
            None => {
                ent.queued = false;
                self.went_idle(e);
            }
        }
        let old_f = self.groups[g].f;
        self.refresh_group(g, old_f);
        self.after_service();
    }

    /// QFQ+ selection: the head entity of the front bucket of the first ER
    /// group. Unlike Linux (which takes the in-service aggregate out of its
    /// group), the entity stays filed while it is served, exactly as a flow
    /// stays at the head of its bucket until its packet is dequeued in
    /// QFQ: its group keeps its timestamps, so groups becoming backlogged
    /// meanwhile are timestamped and blocked against it (Lemma 4), and
    /// rescheduling it cannot break the ordering of ER.
    pub(crate) fn select(&mut self) -> Option<usize> {
        self.sync_eligible();
        self.peek()
    }

    /// QFQ+: the in-service entity `e` (the head of its group's front
    /// bucket) received `service_vt` units of virtual service
    /// (`service · inv_w`): `F = S + service_vt`. V is charged `len` bytes
    /// (service not charged yet) first. It is re-filed with `S = F`,
    /// `F = S + requeue_vt` if `requeue_vt` is given, else it goes idle;
    /// then the group is refreshed as after a QFQ dequeue.
    #[inline(always)]
    pub(crate) fn release(&mut self, e: usize, service_vt: u64, requeue_vt: Option<u64>, len: u32) {
        #[cfg(debug_assertions)]
        if self.verify_fast_paths {
            let mut general = self.clone();
            general.verify_fast_paths = false;
            general.release_general(e, service_vt, requeue_vt, len);
            self.release_fast(e, service_vt, requeue_vt, len);
            assert!(
                self.same_state(&general),
                "a release fast path diverged from the general path"
            );
            return;
        }
        self.release_fast(e, service_vt, requeue_vt, len);
    }

    /// QFQ+ turn end where [`Self::try_end_turn`] declined: [`Self::release`]
    /// the in-service entity `e`, then [`Self::peek`] the next one.
    #[inline(always)]
    pub(crate) fn end_turn(
        &mut self,
        e: usize,
        service_vt: u64,
        requeue_vt: Option<u64>,
        len: u32,
    ) -> Option<usize> {
        self.release_out_of_line(e, service_vt, requeue_vt, len);
        self.peek()
    }

    /// [`Self::release`], out of line: the turn end's rare cases.
    #[inline(never)]
    fn release_out_of_line(
        &mut self,
        e: usize,
        service_vt: u64,
        requeue_vt: Option<u64>,
        len: u32,
    ) {
        self.release(e, service_vt, requeue_vt, len);
    }

    /// The fast path of [`Self::end_turn`], or `None`, with nothing
    /// changed, where it does not apply. It applies when `e` is re-filed
    /// (anywhere in the ring) and its successor in the front bucket stays
    /// there, so its group keeps its timestamps and its set; if that group
    /// is still the lowest ER group, the successor is the next entity,
    /// known without a lookup. No call on this path; the rest of the turn
    /// end is [`Self::end_turn`], its release out of line. Debug builds
    /// check it against the general path as [`Self::release`].
    #[inline(always)]
    pub(crate) fn try_end_turn(
        &mut self,
        e: usize,
        service_vt: u64,
        requeue_vt: Option<u64>,
        len: u32,
    ) -> Option<usize> {
        #[cfg(debug_assertions)]
        if self.verify_fast_paths {
            let mut general = self.clone();
            general.verify_fast_paths = false;
            general.release_general(e, service_vt, requeue_vt, len);
            let expected = general.peek();
            let next = self.try_end_turn_unchecked(e, service_vt, requeue_vt, len);
            if next.is_some() {
                assert!(
                    self.same_state(&general) && next == expected,
                    "a release fast path diverged from the general path"
                );
            }
            return next;
        }
        self.try_end_turn_unchecked(e, service_vt, requeue_vt, len)
    }

    /// [`Self::try_end_turn`] without the debug check.
    #[inline(always)]
    fn try_end_turn_unchecked(
        &mut self,
        e: usize,
        service_vt: u64,
        requeue_vt: Option<u64>,
        len: u32,
    ) -> Option<usize> {
        let vl = requeue_vt?;
        let &ent = self.ent.get(e)?;
        let g = ent.group as usize & GROUP_MASK;
        let new_s = ent.s.wrapping_add(service_vt);
        // As in `requeue_head`: `S_g` is a slot boundary, and a start
        // below it wraps to a huge slot (general path).
        let slot = new_s.wrapping_sub(self.groups[g].s) >> slot_shift(g);
        let next = ent.next;
        if next == NIL || slot > MAX_INSERT_SLOT {
            return None;
        }
        self.requeue_behind(e, g, new_s, vl, slot, len);
        if self.sets[ER].trailing_zeros() as usize == g {
            #[cfg(test)]
            if self.broken == Broken::Successor {
                return Some(e);
            }
            return Some(next as usize);
        }
        // `e` was just re-filed: something is scheduled.
        let next = self.peek();
        debug_assert!(next.is_some(), "nothing scheduled after a re-file");
        Some(next.unwrap_or(e))
    }

    /// [`Self::try_end_turn`]'s re-filing: `e`, the head of group `g`'s front
    /// bucket and not alone there, is charged `len` bytes of V and re-filed
    /// `slot` (`0..=MAX_INSERT_SLOT`) buckets ahead with `S = new_s`,
    /// `F = S + vl`. The front bucket keeps its new head, so the group's
    /// `S_g`, `F_g` and set are unchanged (what unlink + re-file +
    /// `refresh_group` compute); `slot` 0 is the move to the bucket's tail.
    #[inline(always)]
    fn requeue_behind(&mut self, e: usize, g: usize, new_s: u64, vl: u64, slot: u64, len: u32) {
        self.advance_v(u64::from(len));
        #[cfg(test)]
        {
            self.fast_path_hits[3] += 1;
        }
        let front = self.groups[g].front as usize & SLOT_INDEX_MASK;
        let to = (front + slot as usize) & SLOT_INDEX_MASK;
        // `e` has a successor, so the front bucket does not empty.
        self.unlink_head(g, front, e);
        #[cfg(test)]
        if self.broken == Broken::SuccessorLink {
            let next = self.groups[g].head[front];
            self.ent[next as usize].prev = e as u32;
        }
        let ent = &mut self.ent[e];
        ent.s = new_s;
        ent.f = new_s.wrapping_add(vl);
        self.list_append(g, to, e);
        self.groups[g].full |= 1u64 << slot;
        self.after_service();
    }

    /// `release` with the fast paths of [`Self::requeue_head`] for a
    /// backlogged entity, falling back to [`Self::release_general`].
    #[inline(always)]
    fn release_fast(&mut self, e: usize, service_vt: u64, requeue_vt: Option<u64>, len: u32) {
        if let Some(vl) = requeue_vt {
            let new_s = self.ent[e].s.wrapping_add(service_vt);
            if self.requeue_head::<true>(e, new_s, vl, len) {
                return;
            }
        }
        self.release_general(e, service_vt, requeue_vt, len);
    }

    /// `release` without the fast paths: unlink, re-file, refresh. Out of
    /// line: the fast paths' caller then needs fewer registers.
    #[cold]
    #[inline(never)]
    fn release_general(&mut self, e: usize, service_vt: u64, requeue_vt: Option<u64>, len: u32) {
        self.advance_v(u64::from(len));
        let g = self.ent[e].group as usize & GROUP_MASK;
        let front = self.groups[g].front as usize;
        debug_assert_eq!(self.groups[g].head[front], e as u32);
        if self.list_unlink(g, front, e) {
            self.groups[g].full &= !1;
        }
        let ent = &mut self.ent[e];
        ent.f = ent.s.wrapping_add(service_vt);
        match requeue_vt {
            Some(vl) => {
                ent.s = ent.f;
                ent.f = ent.s.wrapping_add(vl);
                let rs = round_down(ent.s, slot_shift(g));
                self.slot_insert(e, g, rs);
            }
            None => {
                ent.queued = false;
                self.went_idle(e);
            }
        }
        let old_f = self.groups[g].f;
        self.refresh_group(g, old_f);
        self.after_service();
    }

    /// V advance for `len` bytes served (QFQ+ mode; the flow mode does it in
    /// [`served_head`](Self::served_head)).
    #[inline]
    pub(crate) fn charge(&mut self, len: u32) {
        self.advance_v(u64::from(len));
    }

    /// Forcibly removes a scheduled entity (flow removal/reconfiguration).
    /// Its `F` is reset to `S`: the projected service never happened.
    pub(crate) fn deactivate(&mut self, e: usize) {
        if !self.ent[e].queued {
            return;
        }
        let g = self.ent[e].group as usize & GROUP_MASK;
        let shift = slot_shift(g);
        let rs = round_down(self.ent[e].s, shift);
        let off = (rs.wrapping_sub(self.groups[g].s) >> shift) as u32;
        let idx = ((self.groups[g].front + off) & SLOT_MASK) as usize;
        if self.list_unlink(g, idx, e) {
            self.groups[g].full &= !(1u64 << off);
        }
        let ent = &mut self.ent[e];
        ent.queued = false;
        ent.f = ent.s;
        self.went_idle(e);
        let old_f = self.groups[g].f;
        self.refresh_group(g, old_f);
        self.after_service();
    }
}
