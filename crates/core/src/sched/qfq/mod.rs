//! Quick Fair Queueing (Checconi, Rizzo, Valente; the QFQ paper §4, the BFQ thesis §3.1).
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
//! 2. **Timestamp rounding** (§4.1.2). Exact `S`/`F` (Eq. 2 of the QFQ paper) are
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
//! `leading_zeros` of `old_V ^ V`). The work-conserving jump of Eq. 3 —
//! `V` bumped to the smallest ineligible `S_i` when nothing is eligible,
//! followed by `make_eligible` — is taken when the next packet is
//! *selected* (dequeue or peek), not at the end of the dequeue (Fig. 5,
//! lines 39-46) nor on an enqueue into an empty scheduler (Fig. 4, lines
//! 24-25). A flow whose last packet was just dequeued still owns a packet
//! not completely transmitted, so it is in `B(t)` of Eq. 3 (the QFQ paper §3)
//! until the link asks for the next one; jumping earlier stamped a flow
//! refilled in that window `S = V` past its own finish time, i.e. it lost
//! its lead at every refill (with no transmit queue, a weight-90 flow of
//! 193-byte packets let a weight-1 flow of 2318-byte packets send one
//! packet per 30 of its own, and exceeded its B-WFI bound). Exact WF2Q+
//! jumps at selection as well. Between operations ER may thus be empty
//! while groups are backlogged; the GBT bound `S_i ≤ V + σ_i` then holds
//! for the `V` the next selection uses.
//! No operation loops over flows or groups.
//!
//! # Fixed-point arithmetic, constants and limits
//!
//! Virtual times are `u64` in units of `2^-QFQ_FRAC_BITS` byte per unit
//! weight ([`QFQ_FRAC_BITS`] = 30, [`ONE_FP`] = 2^30), compared wrap-safely.
//! * Per flow, `inv_w = ⌈ONE_FP / w⌉` (`u32`), so `F = S + len · inv_w` needs
//!   no division. Rounding *up* means each flow is charged as if its weight
//!   were `w' = ONE_FP/inv_w ≤ w` (relative error `< w·2^-30 ≤ 2^-14`).
//! * `V` advances by `len · ONE_FP / W` per dequeued byte, computed as
//!   `(len · iwsum) >> 16` with `iwsum = ⌊2^46 / W⌋` precomputed when the
//!   weight set changes. **W is the actual sum of the weights of all
//!   configured flows** (as Linux QFQ+, unlike Linux QFQ's constant
//!   `QFQ_MAX_WSUM`). Rounding `iwsum` down makes `V` run slightly slow, i.e.
//!   as with a total weight `W' ≥ W` (relative error `< W·2^-46 ≤ 2^-22`).
//!   Hence `Σ w'/W' ≤ 1` holds exactly and every guarantee of the QFQ paper §5
//!   holds with **`φ_k = w_k / W`** up to these relative errors; because the
//!   actual `W` is used, `φ_k` is the flow's real share of the link (with a
//!   constant maximum sum, `φ_k = w_k / W_max` would be much smaller and the
//!   bounds correspondingly looser). [`Qfq::weight_denominator`] returns `W`.
//! * Slot sizes: group `i` has `σ_i = 2^(MIN_SLOT_SHIFT + i)` units, with
//!   [`MIN_SLOT_SHIFT`] = 14 = `QFQ_FRAC_BITS − log2(MAX_WEIGHT)` (the smallest
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
//!   Configurations outside these ranges get a typed [`ConfigError`](crate::ConfigError).
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
//! # Guarantees (the QFQ paper §5, the QFQ+ paper §6)
//!
//! For flow k in group i, with `L` the largest packet and `R` the link rate:
//! B-WFI `= 3φ_kσ_i + 2φ_kL` (Eq. 8), T-WFI `= (3σ_i + 2L)/R` (Eq. 12),
//! σ_i in bytes as above ([`Qfq::slot_size_bytes`]). In the notation of the
//! QFQ+ paper App. A the timestamp-error terms are `ΔS⁻ ≤ σ_i ≤ 2L_k/φ_k` and
//! `ΔS⁺ ≤ 2σ_i ≤ 4L_k/φ_k` ([`DELTA_S_MINUS_FACTOR`],
//! [`DELTA_S_PLUS_FACTOR`], in units of `L_k/φ_k`).
//!
//! Reconfiguring or removing a backlogged flow deactivates it (O(1): bucket
//! lists are doubly linked) and, for a reconfiguration, re-activates its
//! head packet in the new group as a newly backlogged flow whose previous
//! finish time is capped to V (a finish time earned in another group can
//! break Lemma 4 in the new one; the debug checker found such a case). The
//! reconfigured flow may thus gain up to one old slot of service.

mod engine;
mod flows;
mod invariants;

#[cfg(test)]
pub(crate) use engine::Broken;
pub(crate) use engine::QfqCore;
pub use flows::Qfq;

use crate::flow::Limits;

/// Fractional bits of QFQ (and QFQ+) virtual times: one byte at weight 1
/// is `2^30` units.
///
/// More than the exact schedulers' [`FRAC_BITS`](crate::sched::vtime::FRAC_BITS)
/// (24) because QFQ never divides per packet: a flow's finish time grows by
/// `len · inv_w` with `inv_w = ⌈2^30 / w⌉` rounded up, and 30 bits keep that
/// rounding below a relative `2^-14` for weights up to `2^16` while
/// `inv_w` still fits a `u32` (see the module doc).
pub const QFQ_FRAC_BITS: u32 = 30;
/// One unit of `len/weight` (1 byte at weight 1) in fixed point.
pub const ONE_FP: u64 = 1 << QFQ_FRAC_BITS;
/// Largest weight QFQ accepts.
pub const MAX_WEIGHT: u32 = 1 << 16;
/// Largest packet length (bytes) QFQ accepts.
pub const MAX_PACKET_LEN: u32 = 1 << 16;
/// Largest sum of weights QFQ accepts.
pub const MAX_WEIGHT_SUM: u64 = 1 << 24;
/// `log2` of the slot size of group 0, in virtual-time units.
pub const MIN_SLOT_SHIFT: u32 = QFQ_FRAC_BITS - 16;
/// Number of groups (indices `0..NUM_GROUPS`).
pub const NUM_GROUPS: usize = 34;
/// Buckets per group (one bit each in a `u64`).
pub const NUM_SLOTS: u32 = 64;
/// Largest aggregate size (M) of QFQ+ / WF2Q++.
pub const MAX_AGGREGATE_FLOWS: u32 = 64;
/// `ΔS⁻ ≤ DELTA_S_MINUS_FACTOR · L_k/φ_k` for QFQ (the QFQ+ paper §6).
pub const DELTA_S_MINUS_FACTOR: u32 = 2;
/// `ΔS⁺ ≤ DELTA_S_PLUS_FACTOR · L_k/φ_k` for QFQ (the QFQ+ paper §6).
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
/// [`SLOT_MASK`] for indexing: a bucket index masked with it needs no
/// bounds check.
const SLOT_INDEX_MASK: usize = SLOT_MASK as usize;
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
    l.intersect(QFQ_LIMITS)
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
