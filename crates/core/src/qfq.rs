//! Quick Fair Queueing (Checconi, Rizzo, Valente; seed 003 §4, seed 004 §3.1).
//!
//! # The algorithm
//!
//! QFQ implements the WF2Q+ policy — serve, among the *eligible* flows
//! (virtual start `S ≤ V`), the one with the smallest virtual finish time
//! `F` — in O(1) time, by approximating the timestamps:
//!
//! 1. **Flow grouping** (§4.1.1). Flow k with maximum packet length `L_k`
//!    and weight `φ_k` belongs to group `i = ⌈log2(L_k/φ_k)⌉`; the group's
//!    *slot size* `σ_i = 2^i` satisfies `L_k/φ_k ≤ σ_i`, so `F - S ≤ σ_i`.
//! 2. **Timestamp rounding** (§4.1.2). Exact `S`/`F` (Eq. 2 of seed 003) are
//!    kept per flow, but scheduling uses `Ŝ = ⌊S/σ_i⌋σ_i`, `F̂ = Ŝ + 2σ_i`.
//!    Within a group the possible `Ŝ` values lie in a window of a few slots
//!    (Theorem 5: `2 + ⌈L/σ_i⌉`), so flows are bucket-sorted: a ring of
//!    [`NUM_SLOTS`] FIFO lists plus a 64-bit occupancy word; the first
//!    non-empty bucket is one `trailing_zeros`. The group timestamps are
//!    `S_i = min Ŝ` (the front bucket) and `F_i = S_i + 2σ_i` (Eq. 6).
//! 3. **Group sets** (§4.1.3). Every backlogged group is in exactly one of
//!    ER, EB, IR, IB (Eligible/Ineligible × Ready/Blocked), each a `u64`
//!    bitmap indexed by group. A group is *eligible* iff `S_i ≤ V`; it is
//!    *blocked* iff some ER group with a higher index has a smaller finish
//!    time. ER is sorted by `F_i` along the group index (Theorem 6), so the
//!    next packet is the head packet of the head flow of the front bucket of
//!    the lowest group in ER: two `trailing_zeros`.
//!
//! Enqueue (Fig. 4): a newly backlogged flow gets `S = max(V, F)`,
//! `F = S + l/φ`; if its group was idle, or the new `Ŝ` is below `S_i`
//! (the group was then ineligible and its bucket ring is rotated back), the
//! group timestamps and state are recomputed (`compute_group_state`: one
//! `trailing_zeros` on ER above the group). **Lemma 4 corner case**
//! (Eq. 29): when a flow becomes backlogged while `V` has overtaken the
//! finish time `F_b` of the lowest ER group `b` above its group, its start
//! is shifted back to `F_b` (not below the group's current start) instead
//! of `V`. This keeps EB sorted and Lemma 4's `S_h ≤ F_b` true for every
//! group `h` that `b` blocks, which Theorem 8 (`unblock_groups`) relies on;
//! the flow can only gain, by less than one maximum packet since
//! `V ≤ F_b + L` (Theorem 4). Two deviations from the letter of Eq. 29,
//! both found by the debug invariant checker (a group wrongly unblocked):
//! (a) Eq. 29 keeps the flow's own previous finish time when
//! `F_b < F ≤ V` (`max(min(V, F_b), F)`); we use `F_b` as Linux does;
//! (b) Eq. 29 is stated for an *idle* group only; we also apply it when the
//! group already holds flows, otherwise a flow filed at `V` in a
//! back-shifted group lifts the group's start above `F_b` as soon as the
//! older flows leave.
//!
//! Dequeue (Fig. 5): serve the head flow of the first ER group, advance `V`
//! by `l/Σφ`, re-file the flow with `S = F`, recompute the group's front
//! bucket; if `F_i` grew or the group emptied, `unblock_groups` moves the
//! lower-index groups it blocked from EB/IB to ER/IR (Theorem 8); finally
//! `make_eligible` moves, in one mask operation, every ineligible group
//! whose slot boundary `V` crossed (highest flipped bit of `V`, found with
//! `leading_zeros` of `old_V ^ V`), after bumping `V` to the smallest
//! ineligible `S_i` if nothing was eligible (Eq. 3, work conservation).
//! No operation loops over flows or groups.
//!
//! # Fixed-point arithmetic, constants and limits
//!
//! Virtual times are `u64` in units of `2^-FRAC_BITS` byte per unit weight
//! ([`FRAC_BITS`] = 30, [`ONE_FP`] = 2^30), compared wrap-safely.
//! * Per flow, `inv_w = ⌈ONE_FP / w⌉` (`u32`), so `F = S + len · inv_w` needs
//!   no division. Rounding *up* means each flow is charged as if its weight
//!   were `w' = ONE_FP/inv_w ≤ w` (relative error `< w·2^-30 ≤ 2^-14`).
//! * `V` advances by `len · ONE_FP / W` per dequeued byte, computed as
//!   `(len · iwsum) >> 16` with `iwsum = ⌊2^46 / W⌋` precomputed when the
//!   weight set changes. **W is the actual sum of the weights of all
//!   configured flows** (as Linux QFQ+, unlike Linux QFQ's constant
//!   `QFQ_MAX_WSUM`). Rounding `iwsum` down makes `V` run slightly slow, i.e.
//!   as with a total weight `W' ≥ W` (relative error `< W·2^-46 ≤ 2^-22`).
//!   Hence `Σ w'/W' ≤ 1` holds exactly and every guarantee of seed 003 §5
//!   holds with **`φ_k = w_k / W`** up to these relative errors; because the
//!   actual `W` is used, `φ_k` is the flow's real share of the link (with a
//!   constant maximum sum, `φ_k = w_k / W_max` would be much smaller and the
//!   bounds correspondingly looser). [`Qfq::weight_denominator`] returns `W`.
//! * Slot sizes: group `i` has `σ_i = 2^(MIN_SLOT_SHIFT + i)` units, with
//!   [`MIN_SLOT_SHIFT`] = 14 = `FRAC_BITS − log2(MAX_WEIGHT)` (the smallest
//!   possible `L·inv_w`, a 1-byte flow of weight 2^16). The group of a flow
//!   is `⌈log2(L·inv_w)⌉ − MIN_SLOT_SHIFT` (0 for smaller values).
//!   In bytes of link service, `σ_i = 2^(MIN_SLOT_SHIFT+i) · W / 2^30`, and
//!   `L_k/φ_k ≤ σ_i < 2·L_k/φ_k`.
//! * Limits ([`QFQ_LIMITS`]): weights `1..=`[`MAX_WEIGHT`] (2^16), packet
//!   lengths `1..=`[`MAX_PACKET_LEN`] (2^16 B, TSO/GSO), weight sum
//!   `≤`[`MAX_WEIGHT_SUM`] (2^24). Then `L·inv_w ≤ 2^46` and, for the QFQ+
//!   aggregates of up to [`MAX_AGGREGATE_FLOWS`] flows, `< 2^47`: groups
//!   `0..`[`NUM_GROUPS`] (34), so each set fits in a `u64`. A per-flow
//!   timestamp step is at most 2^52 units, far from the 2^63 wrap horizon.
//!   Configurations outside these ranges get a typed [`ConfigError`].
//! * Buckets: [`NUM_SLOTS`] = 64 per group. Theorem 5 bounds the occupied
//!   window by `2 + ⌈L_V/σ_i⌉` slots, `L_V` the largest V-advance of one
//!   packet (`L_max·ONE_FP/W`); this is ≤ 62 unless a flow has both a large
//!   share and packets much smaller than the largest ones
//!   (`φ_k · L_max/L_k > 60`). In that rare case an insertion beyond slot 62
//!   shifts the flow's timestamps back to slot 62 (as Linux does); the flow
//!   only gains, the others keep the guarantees they would have had had it
//!   arrived earlier. [`Qfq::slot_clamps`] counts these events; the bounds
//!   below are exact when it is 0.
//!
//! # Guarantees (seed 003 §5, seed 000 §6)
//!
//! For flow k in group i, with `L` the largest packet and `R` the link rate:
//! B-WFI `= 3φ_kσ_i + 2φ_kL` (Eq. 8), T-WFI `= (3σ_i + 2L)/R` (Eq. 12),
//! σ_i in bytes as above ([`Qfq::slot_size_bytes`]). In the notation of seed
//! 000 App. A the timestamp-error terms are `ΔS⁻ ≤ σ_i ≤ 2L_k/φ_k` and
//! `ΔS⁺ ≤ 2σ_i ≤ 4L_k/φ_k` ([`DELTA_S_MINUS_FACTOR`],
//! [`DELTA_S_PLUS_FACTOR`], in units of `L_k/φ_k`).
//!
//! Reconfiguring or removing a backlogged flow deactivates it (O(1): bucket
//! lists are doubly linked) and, for a reconfiguration, re-activates its
//! head packet in the new group as a newly backlogged flow whose previous
//! finish time is capped to V (a finish time earned in another group can
//! break Lemma 4 in the new one; the debug checker found such a case). The
//! reconfigured flow may thus gain up to one old slot of service.

use crate::error::{ConfigError, EnqueueError};
use crate::flow::{FlowConfig, FlowId, Limits};
use crate::flow_queues::FlowQueues;
use crate::scheduler::{Capacity, Dequeued, Scheduler};
use crate::vtime::{Era, VirtualClock};
use crate::Packet;
use alloc::vec::Vec;

/// Fractional bits of QFQ virtual times.
pub const FRAC_BITS: u32 = 30;
/// One unit of `len/weight` (1 byte at weight 1) in fixed point.
pub const ONE_FP: u64 = 1 << FRAC_BITS;
/// Largest weight QFQ accepts.
pub const MAX_WEIGHT: u32 = 1 << 16;
/// Largest packet length (bytes) QFQ accepts.
pub const MAX_PACKET_LEN: u32 = 1 << 16;
/// Largest sum of weights QFQ accepts.
pub const MAX_WEIGHT_SUM: u64 = 1 << 24;
/// `log2` of the slot size of group 0, in virtual-time units.
pub const MIN_SLOT_SHIFT: u32 = FRAC_BITS - 16;
/// Number of groups (indices `0..NUM_GROUPS`).
pub const NUM_GROUPS: usize = 34;
/// Buckets per group (one bit each in a `u64`).
pub const NUM_SLOTS: u32 = 64;
/// Largest aggregate size (M) of QFQ+ / WF2Q++.
pub const MAX_AGGREGATE_FLOWS: u32 = 64;
/// `ΔS⁻ ≤ DELTA_S_MINUS_FACTOR · L_k/φ_k` for QFQ (seed 000 §6).
pub const DELTA_S_MINUS_FACTOR: u32 = 2;
/// `ΔS⁺ ≤ DELTA_S_PLUS_FACTOR · L_k/φ_k` for QFQ (seed 000 §6).
pub const DELTA_S_PLUS_FACTOR: u32 = 4;
/// The ranges QFQ supports (see the module doc).
pub const QFQ_LIMITS: Limits = Limits {
    max_weight: MAX_WEIGHT,
    max_packet_len: MAX_PACKET_LEN,
    max_weight_sum: MAX_WEIGHT_SUM,
};

/// Extra fractional bits of the inverse weight sum.
const IWSUM_EXTRA: u32 = 16;
/// Last bucket a new entry may be filed in: one spare slot for a rotation.
const MAX_INSERT_SLOT: u64 = NUM_SLOTS as u64 - 2;
const SLOT_MASK: u32 = NUM_SLOTS - 1;
/// Length of the group array: a power of two `≥ NUM_GROUPS`, so that group
/// indices masked with [`GROUP_MASK`] need no bounds check.
const GROUP_SLOTS: usize = 64;
const GROUP_MASK: usize = GROUP_SLOTS - 1;
const NIL: u32 = u32::MAX;

// Set indices: bit 0 = ineligible, bit 1 = blocked.
const ER: usize = 0;
const IR: usize = 1;
const EB: usize = 2;
const IB: usize = 3;

/// Intersection of the caller's limits with [`QFQ_LIMITS`].
pub fn clamp_limits(l: Limits) -> Limits {
    Limits {
        max_weight: l.max_weight.min(MAX_WEIGHT),
        max_packet_len: l.max_packet_len.min(MAX_PACKET_LEN),
        max_weight_sum: l.max_weight_sum.min(MAX_WEIGHT_SUM),
    }
}

/// `⌈ONE_FP / w⌉`, the per-byte virtual-time step of weight `w` (`w ≥ 1`).
#[inline]
pub fn inv_weight(w: u64) -> u32 {
    let w = w.max(1);
    ONE_FP.div_ceil(w) as u32
}

/// Group index for a slot requirement of `units` (= `L · inv_w`):
/// `⌈log2 units⌉ − MIN_SLOT_SHIFT`, clamped to `0..NUM_GROUPS`.
#[inline]
pub fn group_index(units: u64) -> usize {
    let ceil_log = if units <= 1 {
        0
    } else {
        64 - (units - 1).leading_zeros()
    };
    (ceil_log.saturating_sub(MIN_SLOT_SHIFT) as usize).min(NUM_GROUPS - 1)
}

/// Slot shift of group `g`.
#[inline]
pub const fn slot_shift(g: usize) -> u32 {
    MIN_SLOT_SHIFT + g as u32
}

#[inline]
fn gt(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

#[inline]
fn round_down(t: u64, shift: u32) -> u64 {
    t & !((1u64 << shift) - 1)
}

/// Groups with index `> i`.
#[inline]
fn above(i: usize) -> u64 {
    !((2u64 << i) - 1)
}

/// Groups with index `< i`.
#[inline]
fn below(i: usize) -> u64 {
    (1u64 << i) - 1
}

/// Per-entity (flow or aggregate) state: exact timestamps and bucket links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ent {
    s: u64,
    f: u64,
    /// While queued, the previous entity in its bucket list. While idle the
    /// links are unused, and `prev` holds the era of `f` on the virtual
    /// clock instead (see [`QfqCore::went_idle`]): the entity stays 32
    /// bytes, two to a cache line.
    prev: u32,
    next: u32,
    inv_w: u32,
    group: u8,
    queued: bool,
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
struct Group {
    s: u64,
    f: u64,
    /// Bit j set iff bucket `(front + j) % NUM_SLOTS` is non-empty; bit 0
    /// is set whenever the group is backlogged.
    full: u64,
    front: u32,
    head: [u32; NUM_SLOTS as usize],
    tail: [u32; NUM_SLOTS as usize],
}

/// The QFQ machinery over abstract entities `0..n` (flows for [`Qfq`],
/// aggregates for [`QfqAggregates`]).
#[derive(Clone)]
pub(crate) struct QfqCore {
    ent: Vec<Ent>,
    /// Groups `0..NUM_GROUPS` (the rest unused), indexed `g & GROUP_MASK`.
    groups: alloc::boxed::Box<[Group; GROUP_SLOTS]>,
    sets: [u64; 4],
    /// The system virtual time V, counting its wraps (see [`crate::vtime`]).
    clock: VirtualClock,
    /// V at the last eligibility update: groups in IR/IB have `S > old_v`.
    old_v: u64,
    iwsum: u64,
    weight_sum: u64,
    clamps: u64,
    /// Debug builds: check every fast path of `served_head` against the
    /// general path run on a copy (see [`Qfq::verify_fast_paths`]).
    #[cfg(debug_assertions)]
    verify_fast_paths: bool,
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

    pub(crate) fn set_weight_sum(&mut self, w: u64) {
        self.weight_sum = w;
        self.iwsum = (1u64 << (FRAC_BITS + IWSUM_EXTRA))
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
    /// smallest ineligible group start (IR ∪ IB is sorted by S).
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
    /// exactly, by its era (see [`crate::vtime`]): a finish time left behind
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
        } else if self.sets.iter().all(|&x| x == 0) && gt(rs, self.clock.now()) {
            // Idle system: jump V forward so the group is eligible.
            self.clock.advance_to(rs);
            self.old_v = rs;
        }
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
        Some(grp.head[grp.front as usize] as usize)
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
    /// is in ER): it stays in ER, and V jumps to its new start if that is
    /// ahead (Eq. 3), which the general route computes by filing it in IR
    /// and moving it back in `make_eligible`. This happens on every packet
    /// of a flow served alone while other configured flows are idle: `V`
    /// then advances at `w/W` of the flow's rate, so its start outruns V.
    #[inline(always)]
    fn moved_forward(&mut self, g: usize, bit: u64, was_er: bool, old_f: u64) {
        if self.sets == [bit, 0, 0, 0] {
            self.clock.advance_to(self.groups[g].s);
            self.old_v = self.clock.now();
            return;
        }
        self.reclassify(g, bit, was_er, old_f);
        self.update_eligible();
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
        let g = self.ent[e].group as usize & GROUP_MASK;
        let front = self.groups[g].front as usize;
        if let Some(vl) = next {
            // Common case: the new start `S = F` still rounds down to the
            // front slot (a packet shorter than the slot, which is ≥ σ).
            // The entity moves to the tail of the same bucket, the front
            // bucket stays non-empty, so the group's S_g, F_g and set are
            // unchanged: the unlink/insert/refresh of the general path
            // would leave them as they are.
            let ent = self.ent[e];
            let shift = slot_shift(g);
            let rs = round_down(ent.f, shift);
            let gs = self.groups[g].s;
            if rs == gs {
                self.advance_v(u64::from(len));
                self.bucket_rotate(g, front, e);
                let ent = &mut self.ent[e];
                ent.s = ent.f;
                ent.f = ent.s.wrapping_add(vl);
                self.update_eligible();
                return;
            }
            // Alone in its group (alone in the front bucket, no other bucket
            // used) and still within the ring: the group moves with it. This
            // is what unlink + re-file + refresh_group compute, without the
            // list and bitmap round trip.
            let slot = rs.wrapping_sub(gs) >> shift;
            if ent.prev == NIL
                && ent.next == NIL
                && self.groups[g].full == 1
                && slot <= MAX_INSERT_SLOT
            {
                self.advance_v(u64::from(len));
                let bit = 1u64 << g;
                let was_er = self.sets[ER] & bit != 0;
                let grp = &mut self.groups[g];
                let old_f = grp.f;
                let to = ((front as u32 + slot as u32) & SLOT_MASK) as usize;
                grp.head[front] = NIL;
                grp.tail[front] = NIL;
                grp.head[to] = e as u32;
                grp.tail[to] = e as u32;
                grp.front = to as u32;
                grp.s = rs;
                grp.f = rs.wrapping_add(2u64 << shift);
                let ent = &mut self.ent[e];
                ent.s = ent.f;
                ent.f = ent.s.wrapping_add(vl);
                self.moved_forward(g, bit, was_er, old_f);
                return;
            }
            // Sharing its group, re-filed `slot` (≥ 1) buckets ahead within
            // the ring: the general path with the slot computed once, and
            // the group refreshed only if the front bucket emptied (else
            // refresh_group finds bucket 0 non-empty and changes nothing).
            if slot <= MAX_INSERT_SLOT {
                self.advance_v(u64::from(len));
                let emptied = self.list_unlink(g, front, e);
                let ent = &mut self.ent[e];
                ent.s = ent.f;
                ent.f = ent.s.wrapping_add(vl);
                let to = ((front as u32 + slot as u32) & SLOT_MASK) as usize;
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
                    return;
                }
                self.update_eligible();
                return;
            }
        }
        self.served_head_general(e, len, next);
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
        self.update_eligible();
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
    /// (`service · inv_w`): `F = S + service_vt`. It is re-filed with
    /// `S = F`, `F = S + requeue_vt` if `requeue_vt` is given, else it goes
    /// idle; then the group is refreshed as after a QFQ dequeue.
    pub(crate) fn release(&mut self, e: usize, service_vt: u64, requeue_vt: Option<u64>) {
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
        self.update_eligible();
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
        self.update_eligible();
    }

    /// Backlogged groups as `(index, set, S, F)` with set 0..4 = ER, IR,
    /// EB, IB, and V.
    #[cfg(any(test, debug_assertions))]
    pub(crate) fn dump(&self) -> (u64, Vec<(usize, usize, u64, u64)>) {
        let mut out = Vec::new();
        for g in 0..NUM_GROUPS {
            for (k, set) in self.sets.iter().enumerate() {
                if set & (1u64 << g) != 0 {
                    out.push((g, k, self.groups[g].s, self.groups[g].f));
                }
            }
        }
        (self.clock.now(), out)
    }

    /// The debug invariant checker (seed 003 §4.1.3); see
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
                if gt(grp.s, self.old_v.wrapping_add(1u64 << shift)) {
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

/// Quick Fair Queueing over flows (see the module doc).
pub struct Qfq<P> {
    queues: FlowQueues<P>,
    core: QfqCore,
}

impl<P: Packet> Qfq<P> {
    /// QFQ with its own limits ([`QFQ_LIMITS`]).
    pub fn new(cap: Capacity) -> Self {
        Self::with_limits(cap, QFQ_LIMITS)
    }

    /// QFQ accepting the intersection of `limits` and [`QFQ_LIMITS`].
    pub fn with_limits(cap: Capacity, limits: Limits) -> Self {
        Self {
            queues: FlowQueues::new(cap, clamp_limits(limits)),
            core: QfqCore::new(cap.max_flows),
        }
    }

    /// `W`, the sum of the weights of the configured flows: flow k's share
    /// (the φ_k of every bound) is `w_k / W`.
    pub fn weight_denominator(&self) -> u64 {
        self.queues.weight_sum()
    }

    /// The group index `i` of a flow.
    pub fn group_of(&self, id: FlowId) -> Option<usize> {
        self.queues.config(id)?;
        Some(self.core.ent[id.index()].group as usize)
    }

    /// The slot size `σ_i` of a flow's group expressed in bytes of link
    /// service (`2^(MIN_SLOT_SHIFT+i) · W / 2^30`), the σ of seed 003 §5:
    /// T-WFI ≤ `(3σ_i + 2L)/R`, B-WFI ≤ `φ_k(3σ_i + 2L)`.
    pub fn slot_size_bytes(&self, id: FlowId) -> Option<f64> {
        let g = self.group_of(id)?;
        Some((1u64 << slot_shift(g)) as f64 * self.queues.weight_sum() as f64 / ONE_FP as f64)
    }

    /// The system virtual time (fixed point, [`FRAC_BITS`]).
    pub fn virtual_time(&self) -> u64 {
        self.core.clock.now()
    }

    /// How many times a timestamp had to be shifted back to fit the bucket
    /// ring (0 in the configurations where the bounds are exact).
    pub fn slot_clamps(&self) -> u64 {
        self.core.clamps
    }

    /// Checks the invariants of seed 003 §4.1.3 and the bookkeeping: sets
    /// disjoint and equal to the backlogged groups, ER and EB sorted by F,
    /// IR ∪ IB sorted by S and F, eligibility (`S ≤ V` iff in ER ∪ EB),
    /// the GBT bound `S_i ≤ V + σ_i` for ineligible groups, exact
    /// Ready/Blocked membership, bucket contents, and that exactly the
    /// backlogged flows are scheduled.
    /// Debug view of the groups: V and `(index, set, S, F)`, set 0..4 =
    /// ER, IR, EB, IB.
    #[cfg(any(test, debug_assertions))]
    #[doc(hidden)]
    pub fn debug_groups(&self) -> (u64, Vec<(usize, usize, u64, u64)>) {
        self.core.dump()
    }

    /// Debug builds: from now on, run the general dequeue path on a copy of
    /// the state at every dequeue and panic if a fast path left a different
    /// state (a differential test of the fast paths; slow). No-op in
    /// release builds.
    #[doc(hidden)]
    pub fn verify_fast_paths(&mut self, on: bool) {
        #[cfg(debug_assertions)]
        {
            self.core.verify_fast_paths = on;
        }
        #[cfg(not(debug_assertions))]
        let _ = on;
    }

    #[cfg(any(test, debug_assertions))]
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        self.core.check()?;
        for i in 0..self.queues.max_flows() {
            if self.queues.is_backlogged(FlowId(i)) != self.core.is_queued(i as usize) {
                return Err("a flow is scheduled iff it is backlogged");
            }
        }
        Ok(())
    }

    fn activate(&mut self, i: usize, head_len: u32) {
        let s = self.core.start_time(i);
        let f = s.wrapping_add(u64::from(head_len) * u64::from(self.core.inv_w(i)));
        self.core.schedule(i, s, f);
    }

    fn set_params(&mut self, i: usize, cfg: FlowConfig, fresh: bool) {
        let inv_w = inv_weight(u64::from(cfg.weight));
        let g = group_index(u64::from(cfg.max_len) * u64::from(inv_w));
        self.core.configure(i, inv_w, g, fresh);
    }
}

impl<P: Packet> Scheduler<P> for Qfq<P> {
    fn name(&self) -> &'static str {
        "qfq"
    }

    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.queues.add_flow(id, cfg)?;
        self.set_params(id.index(), cfg, true);
        self.core.set_weight_sum(self.queues.weight_sum());
        Ok(())
    }

    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError> {
        let pkts = self.queues.remove_flow(id)?;
        self.core.deactivate(id.index());
        self.core.set_weight_sum(self.queues.weight_sum());
        Ok(pkts)
    }

    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        let old = self.queues.reconfigure(id, cfg)?;
        self.core.set_weight_sum(self.queues.weight_sum());
        if old == cfg {
            return Ok(());
        }
        let i = id.index();
        self.core.deactivate(i);
        self.core.forget_future_finish(i);
        self.set_params(i, cfg, false);
        if let Some(len) = self.queues.head_len(id) {
            self.activate(i, len);
        }
        Ok(())
    }

    // Forced inline: called once per packet from a caller's loop (the
    // arbiter's scan), where a call costs ~15 instructions per packet.
    #[inline(always)]
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>> {
        let len = packet.len();
        if self.queues.push(id, packet)? {
            self.activate(id.index(), len);
        }
        Ok(())
    }

    // Forced inline, as DRR's: called once per packet from a caller's loop
    // (the arbiter's), where the call's register saves and the returned
    // struct cost ~20 instructions per decision.
    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        let e = self.core.peek()?;
        let flow = FlowId(e as u32);
        let (packet, next_len) = self.queues.pop_with_next_len(flow)?;
        let next = next_len.map(|l| u64::from(l) * u64::from(self.core.inv_w(e)));
        self.core.served_head(e, packet.len(), next);
        Some(Dequeued { flow, packet })
    }

    fn warp_idle_clock(&mut self, delta: u64) -> bool {
        if !self.is_empty() {
            return false;
        }
        self.core.warp_idle_clock(delta);
        true
    }

    fn peek(&mut self) -> Option<(FlowId, &P)> {
        let e = self.core.peek()?;
        let flow = FlowId(e as u32);
        self.queues.head(flow).map(|p| (flow, p))
    }

    fn queues(&self) -> &FlowQueues<P> {
        &self.queues
    }
}

/// QFQ scheduling aggregates of flows: the SCHED of QFQ+
/// ([`crate::sched_plus::QfqPlus`]). An aggregate of `m` flows of weight `w`
/// and max length `L` is an entity of weight `m·w` whose "packet" is its
/// budget `m·L`; its group is that of one of its flows, computed with
/// enough slack (`L·M` extra units) that `m·L·⌈2^30/(m·w)⌉ ≤ σ_i` for every
/// `m ≤ M`.
pub struct QfqAggregates {
    core: QfqCore,
    budget: Vec<u64>,
    max_members: u32,
}

impl QfqAggregates {
    /// Debug view of the groups, as [`Qfq::debug_groups`].
    #[cfg(any(test, debug_assertions))]
    #[doc(hidden)]
    pub fn debug_groups(&self) -> (u64, Vec<(usize, usize, u64, u64)>) {
        self.core.dump()
    }
}

impl crate::sched_plus::AggregateScheduler for QfqAggregates {
    const NAME: &'static str = "qfq+";
    const DELTA_S_MINUS_FACTOR: u32 = DELTA_S_MINUS_FACTOR;
    const DELTA_S_PLUS_FACTOR: u32 = DELTA_S_PLUS_FACTOR;

    fn new(max_aggregates: u32, max_members: u32) -> Self {
        Self {
            core: QfqCore::new(max_aggregates),
            budget: alloc::vec![0; max_aggregates as usize],
            max_members,
        }
    }

    fn limits() -> Limits {
        QFQ_LIMITS
    }

    fn init_aggregate(&mut self, a: u32, weight: u32, max_len: u32) {
        let per_flow = u64::from(max_len) * u64::from(inv_weight(u64::from(weight)));
        let g = group_index(per_flow + u64::from(max_len) * u64::from(self.max_members));
        self.core.configure(a as usize, 0, g, true);
    }

    fn set_members(&mut self, a: u32, m: u32, weight: u32, max_len: u32) {
        let inv_w = inv_weight(u64::from(weight) * u64::from(m.max(1)));
        let e = a as usize;
        self.core.ent[e].inv_w = inv_w;
        self.budget[e] = u64::from(m) * u64::from(max_len);
    }

    fn set_weight_sum(&mut self, w: u64) {
        self.core.set_weight_sum(w);
    }

    fn activate(&mut self, a: u32) {
        let e = a as usize;
        let s = self.core.start_time(e);
        let f = s.wrapping_add(self.budget[e] * u64::from(self.core.inv_w(e)));
        self.core.schedule(e, s, f);
    }

    fn deactivate(&mut self, a: u32) {
        self.core.deactivate(a as usize);
    }

    fn select(&mut self) -> Option<u32> {
        self.core.select().map(|e| e as u32)
    }

    #[inline]
    fn release(&mut self, a: u32, service: u64, backlogged: bool) {
        let e = a as usize;
        let inv_w = u64::from(self.core.inv_w(e));
        let service = service.min(self.budget[e]);
        let requeue = backlogged.then(|| self.budget[e] * inv_w);
        self.core.release(e, service * inv_w, requeue);
    }

    fn end_turn(&mut self, a: u32, service: u64, uncharged: u32, backlogged: bool) -> Option<u32> {
        self.core.charge(uncharged);
        self.release(a, service, backlogged);
        // `release` ends with the eligibility update `select` would do.
        self.core.peek().map(|e| e as u32)
    }

    #[inline]
    fn charge(&mut self, len: u32) {
        self.core.charge(len);
    }

    fn slot_clamps(&self) -> u64 {
        self.core.clamps
    }

    fn warp_idle_clock(&mut self, delta: u64) {
        self.core.warp_idle_clock(delta);
    }

    #[cfg(any(test, debug_assertions))]
    fn check(&self) -> Result<(), &'static str> {
        self.core.check()
    }
}
