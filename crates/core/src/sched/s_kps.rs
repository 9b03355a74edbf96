//! S-KPS: WF2Q+ approximated with stratified, interleaved timer wheels
//! (Karsten's SI-WF2Q, "Simple KPS"; refs. 8 and 9 of the QFQ paper, compared
//! with QFQ in the QFQ paper §2, §5, §6 and §7).
//!
//! # What is reconstructed
//!
//! Karsten's papers (INFOCOM 2006, IEEE/ACM ToN 2010) could not be obtained
//! here; this module is rebuilt from what the QFQ paper states about S-KPS:
//! * it implements the WF2Q+ policy with rounded timestamps and flows
//!   statically grouped into *strata* by `L_k/φ_k`, like QFQ (§2, §5);
//! * its timestamp errors are `S − Ŝ ≤ 4σ_i` and `F̂ − F ≤ 2σ_i` (§5), so its
//!   B-WFI is QFQ's plus `3σ_i` and its T-WFI QFQ's plus `3σ_i/R`;
//! * it keeps flows in two *Interleaved Stratified Timer Wheels* (ISTW)
//!   containers — one holding flows waiting to become eligible, one holding
//!   eligible flows — and during the service of each packet moves a number
//!   of entries proportional to the packet length between them (§2);
//! * its cost is 2–3.5 times QFQ's and flat in the number of flows (§7).
//!
//! The concrete choices below (odd-multiple grids, 64-slot wheels, the scan
//! over non-empty strata) are ours, not Karsten's; the errors they give,
//! `S − Ŝ < 2σ_i` and `F̂ − F < 2σ_i`, are within the ones the QFQ paper states,
//! so its bounds apply.
//!
//! # The algorithm
//!
//! * **Strata.** Flow k of weight `w_k` and maximum length `L_k` belongs to
//!   stratum `i = ⌈log2(L_k · 2^FRAC_BITS / w_k)⌉`, whose slot size is
//!   `σ_i = 2^i` virtual-time units, so `F − S ≤ σ_i` for every packet.
//! * **Interleaving.** Stratum `i` only uses the *odd* multiples of `σ_i` as
//!   timestamps. An odd multiple of `2^i` is never an odd multiple of `2^j`
//!   for `j ≠ i`, so the grids of all strata interleave on one time axis
//!   without collisions: two rounded timestamps of different strata are
//!   never equal, and ordering across strata needs no tie-break. The
//!   rounded start `Ŝ` is the largest odd multiple of `σ_i` not above `S`,
//!   the rounded finish `F̂` the smallest odd multiple not below `F`:
//!   `0 ≤ S − Ŝ < 2σ_i`, `0 ≤ F̂ − F < 2σ_i`.
//! * **Two containers** of one timer wheel per stratum each: *pending*
//!   (not yet eligible, keyed by `Ŝ`) and *eligible* (keyed by `F̂`). A wheel
//!   has [`WHEEL_SLOTS`] buckets `2σ_i` wide — exactly one grid point each —
//!   FIFO lists of flows, plus a 64-bit occupancy word; its front bucket is
//!   one `trailing_zeros`. A `u64` per container marks the non-empty strata.
//! * **Enqueue** of a newly backlogged flow: `S = max(V, F_prev)`,
//!   `F = S + l/φ` (Eq. 2 of the QFQ paper); filed in the eligible wheel of its
//!   stratum at `F̂` if `Ŝ ≤ V`, else in the pending wheel at `Ŝ`.
//! * **Dequeue**: if nothing is eligible, `V` jumps to the smallest pending
//!   `Ŝ` (Eq. 3 with rounded starts: work conservation). Serve the head flow
//!   of the front bucket with the smallest `F̂` over the non-empty eligible
//!   strata; advance `V` by `l/Σφ`; re-file the flow with `S = F`; then
//!   *release*: every pending front bucket whose `Ŝ` the clock has reached
//!   moves, flow by flow, to the eligible wheel of its stratum. The buckets
//!   released per packet are those whose grid point `V` crossed, a number
//!   proportional to the packet length — the ISTW hand moving groups "in
//!   parallel with the transmission" (each flow is moved at most once per
//!   packet it sends, so the moves are O(1) amortized per packet).
//!   Finding the smallest `F̂` scans the
//!   non-empty eligible strata (at most [`NUM_STRATA`], typically a few):
//!   the one place where this reconstruction may do more work than
//!   Karsten's hand, which a software scheduler cannot run in parallel.
//!
//! # Arithmetic, constants and limits
//!
//! * Virtual times are `u64` in units of `2^-FRAC_BITS` byte per unit
//!   weight ([`FRAC_BITS`] = 24, the exact schedulers' fixed point, as
//!   WF2Q+'s), compared wrap-safely. `l/φ_k` is
//!   `l · 2^24 / w_k`, the `V` increment `l · 2^24 / W` with `W` the sum of
//!   the weights of all configured flows (as in [`crate::Wf2qPlus`]), each
//!   truncated by less than one unit.
//! * Strata are indexed by `log2 σ_i`: with the default [`Limits`] (weights
//!   and lengths up to 2^16), `L·2^24/w` lies in `2^8..=2^40`, so strata
//!   `8..=40` of [`NUM_STRATA`] = 57 are used and a stratum set fits a `u64`.
//!   Limits above [`Limits::DEFAULT`] are reduced to it (as QFQ does), so
//!   such flows are rejected with a typed error.
//! * Wheels: [`WHEEL_SLOTS`] = 64 buckets of `2σ_i`, i.e. a window of
//!   `128σ_i` above the front entry. Backlogged timestamps stay within a few
//!   slots of `V` (the GBT property, the QFQ paper §4.1.2) unless a flow has both
//!   a large share and packets much smaller than the largest ones, as for
//!   QFQ's 64 buckets. An entry beyond the window is filed in the last
//!   bucket (the flow can only gain), one below a full window in the front
//!   bucket; [`SKps::slot_clamps`] counts both, and the bounds are exact
//!   when it is 0.
//! * Idle flows: a flow going idle records its finish time as a 128-bit
//!   time (the wrap count of `V` on top), so `max(V, F_prev)` is exact
//!   however long it stayed idle (see [`crate::vtime`]).
//!
//! # Guarantees (the QFQ paper §5)
//!
//! For flow k in stratum i, `L` the largest packet, `R` the link rate:
//! B-WFI `= 6φ_kσ_i + 2φ_kL` (QFQ's Eq. 8 plus `3φ_kσ_i`), T-WFI
//! `= (6σ_i + 2L)/R` (QFQ's Eq. 12 plus `3σ_i/R`), σ_i in bytes as returned
//! by [`SKps::slot_size_bytes`] (`L_k/φ_k ≤ σ_i < 2L_k/φ_k`). In the notation
//! of the QFQ+ paper App. A the timestamp error is `ΔS = 6σ_i ≤ 12 L_k/φ_k`.
//!
//! Reconfiguring a backlogged flow re-files its head packet in its new
//! stratum with the same virtual start; removing one unlinks it (O(1):
//! buckets are doubly linked).

use crate::sched::vtime::FRAC_BITS;
use crate::{
    Backlog, Capacity, ConfigError, Dequeued, EnqueueError, FlowConfig, FlowId, FlowQueues, Limits,
    Packet, Scheduler,
};
use alloc::vec::Vec;

/// Number of strata; stratum `i` has slot size `σ_i = 2^i` units. The
/// largest, 56, keeps `key >> (i + 1)` modulo [`WHEEL_SLOTS`] consistent
/// across the wrap of `u64`; the default limits use at most 40.
pub const NUM_STRATA: usize = 57;
/// Buckets per timer wheel (one bit each in a `u64`).
pub const WHEEL_SLOTS: u32 = 64;
/// `ΔS = DELTA_S_FACTOR · L_k/φ_k` bounds the timestamp error of S-KPS in
/// the QFQ+ paper's notation (`6σ_i`, `σ_i < 2L_k/φ_k`); QFQ's is 6.
pub const DELTA_S_FACTOR: u32 = 12;
/// The start-time part of [`DELTA_S_FACTOR`] (`Ŝ ≥ S − ΔS⁻`): a start time
/// is rounded down by less than `2σ_i < 4L_k/φ_k`.
pub const DELTA_S_MINUS_FACTOR: u32 = 4;
/// The finish-time part of [`DELTA_S_FACTOR`] (`F̂ ≤ S + ΔS⁺`): the rounded
/// start's error plus the finish rounding, `< 4σ_i < 8L_k/φ_k`.
pub const DELTA_S_PLUS_FACTOR: u32 = DELTA_S_FACTOR - DELTA_S_MINUS_FACTOR;

const NIL: u32 = u32::MAX;
const SLOT_MASK: u64 = WHEEL_SLOTS as u64 - 1;

/// Where a flow is filed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Idle,
    Pending,
    Eligible,
}

#[derive(Clone, Copy, Debug)]
struct FlowState {
    start: u64,
    finish: u64,
    /// Finish time as a 128-bit time (wrap count on top), kept while idle.
    idle_finish: u128,
    weight: u32,
    stratum: u8,
    place: Place,
    bucket: u8,
    next: u32,
    prev: u32,
}

const IDLE_FLOW: FlowState = FlowState {
    start: 0,
    finish: 0,
    idle_finish: 0,
    weight: 1,
    stratum: 0,
    place: Place::Idle,
    bucket: 0,
    next: NIL,
    prev: NIL,
};

/// One timer wheel: [`WHEEL_SLOTS`] FIFO buckets, `2σ` wide, starting at
/// the grid point `base`; bit `k` of `occ` marks bucket `base + k·2σ`.
#[derive(Clone)]
struct Wheel {
    base: u64,
    occ: u64,
    head: [u32; WHEEL_SLOTS as usize],
    tail: [u32; WHEEL_SLOTS as usize],
}

impl Wheel {
    const EMPTY: Wheel = Wheel {
        base: 0,
        occ: 0,
        head: [NIL; WHEEL_SLOTS as usize],
        tail: [NIL; WHEEL_SLOTS as usize],
    };

    /// Bucket index of offset `off` from the front, for stratum `shift`.
    #[inline(always)]
    fn index(&self, shift: u32, off: u64) -> usize {
        (((self.base >> (shift + 1)).wrapping_add(off)) & SLOT_MASK) as usize
    }

    /// Appends flow `f` at grid point `key`; returns true if the key was
    /// outside the window and the flow was filed at its edge.
    #[inline]
    fn insert(&mut self, shift: u32, key: u64, f: u32, flows: &mut [FlowState]) -> bool {
        let mut clamped = false;
        let off = if self.occ == 0 {
            self.base = key;
            0
        } else {
            // Both are odd multiples of σ: the difference is a multiple of 2σ.
            let d = (key.wrapping_sub(self.base) as i64) >> (shift + 1);
            if d >= WHEEL_SLOTS as i64 {
                clamped = true;
                SLOT_MASK
            } else if d >= 0 {
                d as u64
            } else if d.unsigned_abs() <= u64::from(self.occ.leading_zeros()) {
                // Room to rotate the window back.
                self.occ <<= d.unsigned_abs();
                self.base = key;
                0
            } else {
                clamped = true;
                0
            }
        };
        let idx = self.index(shift, off);
        self.occ |= 1 << off;
        let t = self.tail[idx];
        let st = &mut flows[f as usize];
        st.prev = t;
        st.next = NIL;
        st.bucket = idx as u8;
        if t == NIL {
            self.head[idx] = f;
        } else {
            flows[t as usize].next = f;
        }
        self.tail[idx] = f;
        clamped
    }

    /// Unlinks flow `f`; moves the front if its bucket emptied.
    #[inline]
    fn remove(&mut self, shift: u32, f: u32, flows: &mut [FlowState]) {
        let st = flows[f as usize];
        let idx = st.bucket as usize;
        if st.prev == NIL {
            self.head[idx] = st.next;
        } else {
            flows[st.prev as usize].next = st.next;
        }
        if st.next == NIL {
            self.tail[idx] = st.prev;
        } else {
            flows[st.next as usize].prev = st.prev;
        }
        if self.head[idx] == NIL {
            let front = (self.base >> (shift + 1)) & SLOT_MASK;
            let off = (idx as u64).wrapping_sub(front) & SLOT_MASK;
            self.occ &= !(1u64 << off);
            if off == 0 && self.occ != 0 {
                let skip = self.occ.trailing_zeros();
                self.occ >>= skip;
                self.base = self.base.wrapping_add(u64::from(skip) << (shift + 1));
            }
        }
    }

    /// The head flow of the front bucket.
    #[inline(always)]
    fn front(&self, shift: u32) -> Option<u32> {
        if self.occ == 0 {
            None
        } else {
            Some(self.head[self.index(shift, 0)])
        }
    }
}

/// `a > b`, wrap-safe.
#[inline(always)]
fn vt_gt(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

/// Virtual length of `len` bytes at weight `weight`.
#[inline(always)]
fn vt_len(len: u32, weight: u64) -> u64 {
    (u64::from(len) << FRAC_BITS) / weight.max(1)
}

/// Largest odd multiple of `2^shift` not above `t` (modulo 2^64).
#[inline(always)]
fn round_start(t: u64, shift: u32) -> u64 {
    let sigma = 1u64 << shift;
    (t.wrapping_sub(sigma) & !(2 * sigma - 1)).wrapping_add(sigma)
}

/// Smallest odd multiple of `2^shift` not below `t` (modulo 2^64).
#[inline(always)]
fn round_finish(t: u64, shift: u32) -> u64 {
    let sigma = 1u64 << shift;
    (t.wrapping_add(3 * sigma - 1) & !(2 * sigma - 1)).wrapping_sub(sigma)
}

/// The stratum of a flow: `⌈log2(max_len · 2^FRAC_BITS / weight)⌉`.
#[inline]
pub fn stratum_of(cfg: FlowConfig) -> u32 {
    let units = vt_len(cfg.max_len, u64::from(cfg.weight)).max(1);
    let ceil_log = 64 - (units - 1).leading_zeros();
    ceil_log.min(NUM_STRATA as u32 - 1)
}

/// S-KPS (see the module doc).
pub struct SKps<P> {
    queues: FlowQueues<P>,
    flows: Vec<FlowState>,
    pending: Vec<Wheel>,
    eligible: Vec<Wheel>,
    /// Strata with a non-empty pending / eligible wheel.
    pending_mask: u64,
    eligible_mask: u64,
    v: u64,
    wraps: u64,
    clamps: u64,
}

impl<P: Packet> SKps<P> {
    /// S-KPS with default limits.
    pub fn new(cap: Capacity) -> Self {
        Self::with_limits(cap, Limits::DEFAULT)
    }

    /// S-KPS with explicit limits, intersected with [`Limits::DEFAULT`]
    /// (the range in which the arithmetic is exact).
    pub fn with_limits(cap: Capacity, limits: Limits) -> Self {
        let d = Limits::DEFAULT;
        let limits = Limits {
            max_weight: limits.max_weight.min(d.max_weight),
            max_packet_len: limits.max_packet_len.min(d.max_packet_len),
            max_weight_sum: limits.max_weight_sum.min(d.max_weight_sum),
        };
        let queues = FlowQueues::new(cap, limits);
        let n = queues.max_flows() as usize;
        Self {
            queues,
            flows: alloc::vec![IDLE_FLOW; n],
            pending: alloc::vec![Wheel::EMPTY; NUM_STRATA],
            eligible: alloc::vec![Wheel::EMPTY; NUM_STRATA],
            pending_mask: 0,
            eligible_mask: 0,
            v: 0,
            wraps: 0,
            clamps: 0,
        }
    }

    /// The system virtual time (fixed point, [`FRAC_BITS`]).
    pub fn virtual_time(&self) -> u64 {
        self.v
    }

    /// A flow's exact virtual (start, finish) times.
    pub fn flow_times(&self, id: FlowId) -> Option<(u64, u64)> {
        self.queues.config(id)?;
        let st = &self.flows[id.index()];
        Some((st.start, st.finish))
    }

    /// The stratum `i` of a flow (`σ_i = 2^i` units).
    pub fn stratum(&self, id: FlowId) -> Option<u32> {
        self.queues.config(id)?;
        Some(u32::from(self.flows[id.index()].stratum))
    }

    /// The slot size `σ_i` of a flow's stratum in bytes of link service at
    /// the current weight sum: `2^i · W / 2^FRAC_BITS`.
    pub fn slot_size_bytes(&self, id: FlowId) -> Option<f64> {
        let i = self.stratum(id)?;
        Some((1u64 << i) as f64 * self.queues.weight_sum() as f64 / (1u64 << FRAC_BITS) as f64)
    }

    /// Entries filed at the edge of a wheel's window (see the module doc);
    /// the bounds are exact while this is 0.
    pub fn slot_clamps(&self) -> u64 {
        self.clamps
    }

    /// `V` as a 128-bit time: wrap count on top.
    #[inline(always)]
    fn wide_now(&self) -> u128 {
        (u128::from(self.wraps) << 64) | u128::from(self.v)
    }

    /// Timestamp `t` (within 2^63 of `V`) as a 128-bit time.
    #[inline(always)]
    fn wide(&self, t: u64) -> u128 {
        let offset = t.wrapping_sub(self.v) as i64 as i128 as u128;
        self.wide_now().wrapping_add(offset)
    }

    #[inline(always)]
    fn advance(&mut self, delta: u64) {
        let (v, wrapped) = self.v.overflowing_add(delta);
        self.v = v;
        self.wraps += u64::from(wrapped);
    }

    /// Files flow `f` (timestamps set) in the pending or eligible wheel.
    #[inline]
    fn file(&mut self, f: u32) {
        let st = self.flows[f as usize];
        let shift = u32::from(st.stratum);
        let s_hat = round_start(st.start, shift);
        let clamped = if vt_gt(s_hat, self.v) {
            self.flows[f as usize].place = Place::Pending;
            self.pending_mask |= 1 << shift;
            self.pending[shift as usize].insert(shift, s_hat, f, &mut self.flows)
        } else {
            self.flows[f as usize].place = Place::Eligible;
            self.eligible_mask |= 1 << shift;
            let f_hat = round_finish(st.finish, shift);
            self.eligible[shift as usize].insert(shift, f_hat, f, &mut self.flows)
        };
        self.clamps += u64::from(clamped);
    }

    /// Unlinks flow `f` from whichever wheel holds it.
    fn unfile(&mut self, f: u32) {
        let st = self.flows[f as usize];
        let shift = u32::from(st.stratum);
        match st.place {
            Place::Idle => {}
            Place::Pending => {
                let w = &mut self.pending[shift as usize];
                w.remove(shift, f, &mut self.flows);
                if w.occ == 0 {
                    self.pending_mask &= !(1 << shift);
                }
            }
            Place::Eligible => {
                let w = &mut self.eligible[shift as usize];
                w.remove(shift, f, &mut self.flows);
                if w.occ == 0 {
                    self.eligible_mask &= !(1 << shift);
                }
            }
        }
        self.flows[f as usize].place = Place::Idle;
    }

    /// A flow becomes backlogged with a head packet of `len` bytes:
    /// `S = max(V, F_prev)`, exact across wraps.
    fn activate(&mut self, f: u32, len: u32) {
        let st = &self.flows[f as usize];
        let start = if st.idle_finish > self.wide_now() {
            st.finish
        } else {
            self.v
        };
        let finish = start.wrapping_add(vt_len(len, u64::from(st.weight)));
        let st = &mut self.flows[f as usize];
        st.start = start;
        st.finish = finish;
        self.file(f);
    }

    /// Moves to the eligible wheels every pending front bucket whose `Ŝ`
    /// the clock has reached.
    #[inline]
    fn release(&mut self) {
        let mut strata = self.pending_mask;
        while strata != 0 {
            let shift = strata.trailing_zeros();
            strata &= strata - 1;
            loop {
                let w = &self.pending[shift as usize];
                if w.occ == 0 || vt_gt(w.base, self.v) {
                    break;
                }
                let Some(f) = w.front(shift) else { break };
                self.pending[shift as usize].remove(shift, f, &mut self.flows);
                let fin = round_finish(self.flows[f as usize].finish, shift);
                self.flows[f as usize].place = Place::Eligible;
                self.eligible_mask |= 1 << shift;
                let clamped = self.eligible[shift as usize].insert(shift, fin, f, &mut self.flows);
                self.clamps += u64::from(clamped);
            }
            if self.pending[shift as usize].occ == 0 {
                self.pending_mask &= !(1 << shift);
            }
        }
    }

    /// The eligible stratum with the smallest front `F̂`, after bringing `V`
    /// up to the smallest pending `Ŝ` if nothing is eligible.
    #[inline]
    fn select(&mut self) -> Option<u32> {
        if self.eligible_mask == 0 {
            if self.pending_mask == 0 {
                return None;
            }
            let mut strata = self.pending_mask;
            let mut min: Option<u64> = None;
            while strata != 0 {
                let shift = strata.trailing_zeros();
                strata &= strata - 1;
                let b = self.pending[shift as usize].base;
                if min.is_none_or(|m| vt_gt(m, b)) {
                    min = Some(b);
                }
            }
            if let Some(m) = min {
                if vt_gt(m, self.v) {
                    self.advance(m.wrapping_sub(self.v));
                }
            }
            self.release();
        }
        let mut strata = self.eligible_mask;
        let mut best: Option<(u64, u32)> = None;
        while strata != 0 {
            let shift = strata.trailing_zeros();
            strata &= strata - 1;
            let b = self.eligible[shift as usize].base;
            if best.is_none_or(|(m, _)| vt_gt(m, b)) {
                best = Some((b, shift));
            }
        }
        best.map(|(_, shift)| shift)
    }

    /// Checks the bookkeeping: every backlogged flow is filed exactly once,
    /// in the wheel of its stratum, pending iff `Ŝ > V` at filing time is
    /// still true or not yet released, eligible entries have `Ŝ ≤ V`; the
    /// stratum masks match the wheels; the wheel occupancy words match
    /// their buckets. For tests.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        let mut filed = alloc::vec![0u32; self.flows.len()];
        for (container, wheels, mask) in [
            (Place::Pending, &self.pending, self.pending_mask),
            (Place::Eligible, &self.eligible, self.eligible_mask),
        ] {
            for (shift, w) in wheels.iter().enumerate() {
                if (mask >> shift) & 1 != u64::from(w.occ != 0) {
                    return Err("stratum mask disagrees with its wheel");
                }
                for off in 0..u64::from(WHEEL_SLOTS) {
                    let idx = w.index(shift as u32, off);
                    let occupied = (w.occ >> off) & 1 == 1;
                    if occupied != (w.head[idx] != NIL) {
                        return Err("occupancy word disagrees with a bucket");
                    }
                    let mut f = w.head[idx];
                    let mut prev = NIL;
                    while f != NIL {
                        let st = &self.flows[f as usize];
                        if st.place != container || usize::from(st.stratum) != shift {
                            return Err("flow filed in the wrong wheel");
                        }
                        if st.prev != prev || usize::from(st.bucket) != idx {
                            return Err("broken bucket links");
                        }
                        if container == Place::Eligible
                            && vt_gt(round_start(st.start, shift as u32), self.v)
                        {
                            return Err("ineligible flow in an eligible wheel");
                        }
                        filed[f as usize] += 1;
                        prev = f;
                        f = st.next;
                    }
                    if w.tail[idx] != prev {
                        return Err("broken bucket tail");
                    }
                }
            }
        }
        for (i, n) in filed.iter().enumerate() {
            let backlogged = self.queues.is_backlogged(FlowId(i as u32));
            if *n != u32::from(backlogged) {
                return Err("a flow is filed once iff it is backlogged");
            }
        }
        Ok(())
    }
}

impl<P: Packet> Scheduler<P> for SKps<P> {
    fn name(&self) -> &'static str {
        "s-kps"
    }

    fn add_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        self.queues.add_flow(id, cfg)?;
        let now = self.wide_now();
        self.flows[id.index()] = FlowState {
            start: self.v,
            finish: self.v,
            idle_finish: now,
            weight: cfg.weight,
            stratum: stratum_of(cfg) as u8,
            ..IDLE_FLOW
        };
        Ok(())
    }

    fn remove_flow(&mut self, id: FlowId) -> Result<Vec<P>, ConfigError> {
        let pkts = self.queues.remove_flow(id)?;
        self.unfile(id.0);
        Ok(pkts)
    }

    fn reconfigure_flow(&mut self, id: FlowId, cfg: FlowConfig) -> Result<(), ConfigError> {
        let old = self.queues.reconfigure(id, cfg)?;
        if old == cfg {
            return Ok(());
        }
        let f = id.0;
        let backlogged = self.flows[f as usize].place != Place::Idle;
        self.unfile(f);
        let start = self.flows[f as usize].start;
        let wide_start = self.wide(start);
        let st = &mut self.flows[f as usize];
        st.weight = cfg.weight;
        st.stratum = stratum_of(cfg) as u8;
        if backlogged {
            // The head packet keeps its virtual start, re-stamped with the
            // new weight in the new stratum.
            st.finish = start;
            st.idle_finish = wide_start;
            if let Some(len) = self.queues.head_len(id) {
                let st = &mut self.flows[f as usize];
                st.finish = start.wrapping_add(vt_len(len, u64::from(cfg.weight)));
                self.file(f);
            }
        }
        Ok(())
    }

    // Forced inline, as DRR's: code compiled for the concrete type (the C
    // ABI's typed fast path, a caller's monomorphised loop) otherwise pays a
    // call frame and a result returned through memory on every packet.
    #[inline(always)]
    fn enqueue(&mut self, id: FlowId, packet: P) -> Result<(), EnqueueError<P>> {
        let len = packet.len();
        if self.queues.push(id, packet)? {
            self.activate(id.0, len);
        }
        Ok(())
    }

    #[inline(always)]
    fn dequeue(&mut self) -> Option<Dequeued<P>> {
        let shift = self.select()?;
        let f = self.eligible[shift as usize].front(shift)?;
        self.unfile(f);
        let flow = FlowId(f);
        let (packet, next_len) = self.queues.pop_with_next_len(flow)?;
        self.advance(vt_len(packet.len(), self.queues.weight_sum()));
        match next_len {
            Some(len) => {
                let st = &mut self.flows[f as usize];
                st.start = st.finish;
                st.finish = st.start.wrapping_add(vt_len(len, u64::from(st.weight)));
                self.file(f);
            }
            None => {
                let fin = self.flows[f as usize].finish;
                self.flows[f as usize].idle_finish = self.wide(fin);
            }
        }
        self.release();
        Some(Dequeued { flow, packet })
    }

    fn peek(&mut self) -> Option<(FlowId, &P)> {
        let shift = self.select()?;
        let f = self.eligible[shift as usize].front(shift)?;
        self.queues.head(FlowId(f)).map(|p| (FlowId(f), p))
    }

    fn backlog(&self) -> Backlog {
        self.queues.total()
    }

    fn flow_backlog(&self, id: FlowId) -> Option<Backlog> {
        self.queues.flow_backlog(id)
    }

    fn flow_config(&self, id: FlowId) -> Option<FlowConfig> {
        self.queues.config(id)
    }

    fn warp_idle_clock(&mut self, delta: u64) -> bool {
        if !self.is_empty() {
            return false;
        }
        self.advance(delta);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_lands_on_the_interleaved_grid() {
        for shift in [0u32, 3, 10] {
            let sigma = 1u64 << shift;
            for t in 0..(40 * sigma) {
                let s = round_start(t.wrapping_add(sigma), shift);
                let f = round_finish(t, shift);
                // Odd multiples of σ.
                assert_eq!((s >> shift) & 1, 1);
                assert_eq!((f >> shift) & 1, 1);
                let ts = t.wrapping_add(sigma);
                assert!(s <= ts && ts - s < 2 * sigma, "t={t} s={s}");
                assert!(f >= t && f - t < 2 * sigma, "t={t} f={f}");
            }
        }
        // Across the u64 wrap.
        assert_eq!(round_start(2, 2), u64::MAX - 3);
        assert_eq!(round_finish(u64::MAX - 1, 2), 4);
    }

    #[test]
    fn strata_follow_l_over_phi() {
        assert_eq!(stratum_of(FlowConfig::new(1, 1)), 24);
        assert_eq!(stratum_of(FlowConfig::new(1, 1500)), 24 + 11);
        assert_eq!(stratum_of(FlowConfig::new(1 << 16, 1)), 8);
        assert_eq!(stratum_of(FlowConfig::new(1, 1 << 16)), 40);
    }
}
