//! Service-guarantee metrics (the QFQ+ paper §4) and their analytical bounds.
//!
//! * **T-WFI** of flow i, Eq. (1): `max_p [t_c − (t_a + B_i(t_a)/(φ_i R))]`.
//! * **B-WFI** of flow i, Eq. (5): `max_[t1,t2] { min[φ_i W(t1,t2), B_i(t1,t2)] − W_i(t1,t2) }`
//!   with `B_i(t1, t2)` the backlog at `t1` plus the arrivals in the open
//!   interval `(t1, t2)`, over the intervals that Theorem 4 of the QFQ+ paper covers:
//!   the flow continuously backlogged at the link over `[t1, t2]`, and, if
//!   `t1` precedes the dequeue `t̂` of the packet on the wire at `t2`,
//!   continuously backlogged *in the scheduler* from `t1` up to just before
//!   that dequeue (App. A.5, A.6, Lemma 7). Tracked online by
//!   [`crate::link_sim`]; [`bwfi_brute_force`] states the definition in
//!   full and checks it over every interval of a trace.
//! * **Delay versus GPS**: `t_c − t_c^GPS` per packet, with the GPS completion
//!   from [`crate::fluid::FluidReference`] fed the same arrivals.
//!
//! Here φ_i = w_i / Σw over all flows of the set (Σφ = 1, the QFQ+ paper §4). Times
//! are in byte-times (R = 1); *packet service time* of flow i (Definition 1)
//! is `L_i / φ_i` byte-times, with L_i the flow's maximum packet length.

use crate::fluid::{Arrival, FluidReference};
use crate::link_sim::{PacketRecord, SimOutput};
use serde::Serialize;

/// Per-flow results of one run. Times in byte-times, sizes in bytes.
#[derive(Clone, Debug, Serialize)]
pub struct FlowStats {
    /// Flow index.
    pub flow: u32,
    /// Weight.
    pub weight: u32,
    /// Maximum packet length.
    pub max_len: u32,
    /// Normalized weight w / Σw.
    pub phi: f64,
    /// Packets transmitted.
    pub packets: u64,
    /// T-WFI (byte-times; can be negative if every packet was early).
    pub twfi: f64,
    /// B-WFI (bytes).
    pub bwfi: f64,
    /// Largest `t_c − t_c^GPS` (byte-times).
    pub max_delay_vs_gps: f64,
}

impl FlowStats {
    /// Packet service time `L_i/φ_i` (byte-times, Definition 1).
    pub fn packet_service_time(&self) -> f64 {
        self.max_len as f64 / self.phi
    }
}

/// Per-flow T-WFI, B-WFI and delay versus GPS of a simulation.
pub fn flow_stats(out: &SimOutput, flows: &[(u32, u32)]) -> Vec<FlowStats> {
    let wsum: u64 = flows.iter().map(|f| f.0 as u64).sum();
    let weights: Vec<u32> = flows.iter().map(|f| f.0).collect();
    let arrivals: Vec<Arrival> = out
        .records
        .iter()
        .map(|r| Arrival {
            time: r.arrival as f64,
            flow: r.flow,
            len: r.len,
        })
        .collect();
    let gps = FluidReference::new(&weights).completion_times(&arrivals);
    let mut stats: Vec<FlowStats> = flows
        .iter()
        .enumerate()
        .map(|(i, &(w, l))| FlowStats {
            flow: i as u32,
            weight: w,
            max_len: l,
            phi: w as f64 / wsum as f64,
            packets: 0,
            twfi: f64::NEG_INFINITY,
            bwfi: out.bwfi.get(i).copied().unwrap_or(0.0),
            max_delay_vs_gps: f64::NEG_INFINITY,
        })
        .collect();
    for (r, g) in out.records.iter().zip(&gps) {
        let s = &mut stats[r.flow as usize];
        s.packets += 1;
        let ideal = r.arrival as f64 + r.backlog_after_arrival as f64 / s.phi;
        s.twfi = s.twfi.max(r.completion as f64 - ideal);
        s.max_delay_vs_gps = s.max_delay_vs_gps.max(r.completion as f64 - g);
    }
    for s in &mut stats {
        if s.packets == 0 {
            s.twfi = 0.0;
            s.max_delay_vs_gps = 0.0;
        }
    }
    stats
}

/// The system parameters the analytical bounds depend on (the QFQ+ paper Table 1).
#[derive(Clone, Copy, Debug)]
pub struct BoundContext {
    /// `L`: the largest packet of any flow (bytes).
    pub max_len: f64,
    /// `Q`: transmit-queue size in bytes plus `L` (App. A.4: ΔW = Q).
    pub q: f64,
}

impl BoundContext {
    /// For a transmit queue of `queue_pkts` packets besides the one on the wire.
    pub fn new(max_len: u32, queue_pkts: u32) -> Self {
        let l = max_len as f64;
        Self {
            max_len: l,
            q: (queue_pkts as f64 + 1.0) * l,
        }
    }
}

/// Analytical T-WFI and B-WFI bounds of one flow (byte-times, bytes).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Bounds {
    /// T-WFI bound.
    pub twfi: f64,
    /// B-WFI bound.
    pub bwfi: f64,
}

/// Bounds of a SCHED from the WF2Q+ family (the QFQ+ paper Eqs. (2) and (6)) for a
/// flow of normalized weight `phi` and max length `len`, with timestamp error
/// `ΔS = delta_s` (0 for exact WF2Q+; `6·L_i/φ_i` for QFQ, the QFQ+ paper §6).
pub fn sched_bounds(ctx: BoundContext, phi: f64, len: f64, delta_s: f64) -> Bounds {
    Bounds {
        twfi: len / phi + delta_s + ctx.q + ctx.max_len - len,
        bwfi: phi * ctx.q + phi * delta_s + (1.0 - phi) * len + ctx.max_len,
    }
}

/// Bounds of SCHED+ (the QFQ+ paper Theorem 1, Eq. (3), and Theorem 2, Eq. (7))
/// for a flow in an aggregate of `m` flows, aggregates of at most `big_m`
/// flows. `delta_s` is SCHED's timestamp error for the aggregate.
pub fn sched_plus_bounds(
    ctx: BoundContext,
    phi: f64,
    len: f64,
    delta_s: f64,
    m: f64,
    big_m: f64,
) -> Bounds {
    Bounds {
        twfi: (5.0 - 1.0 / m) * len / phi + delta_s + ctx.q + big_m * ctx.max_len - m * len,
        bwfi: phi * ctx.q
            + phi * delta_s
            + (5.0 - 1.0 / m - m * phi) * len
            + big_m / m * ctx.max_len,
    }
}

/// Which intervals `[t1, t2]` a B-WFI is the maximum over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BwfiIntervals {
    /// Every interval in which the flow is continuously backlogged at the
    /// link (Eq. (5) read literally, ignoring the transmit queue).
    LinkBacklogged,
    /// The intervals that Theorem 4 of the QFQ+ paper covers (see [`bwfi_brute_force`]).
    TheoremFour,
}

/// An interval attaining a flow's B-WFI, from [`bwfi_brute_force`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BwfiWitness {
    /// The B-WFI (bytes); 0 if the flow never sent.
    pub bwfi: f64,
    /// Start of the interval (byte-times).
    pub t1: u64,
    /// End of the interval (byte-times).
    pub t2: u64,
    /// `t2` is approached from below (`t2⁻`, the packet on the wire ends at `t2`).
    pub t2_before: bool,
    /// Record index of the packet on the wire at `t2` (its dequeue is `t̂`).
    pub on_wire: usize,
}

/// B-WFI of `flow` (normalized weight `phi`) by brute force over the trace
/// of a simulation: every interval, no online bookkeeping. Quadratic in the
/// packets; an oracle for the online value of [`crate::link_sim`].
///
/// Definitions (the QFQ+ paper §4.2 and App. A; times in byte-times, R = 1):
/// * `W(t)`, `W_i(t)`: bytes the link sent by `t`, of all flows and of flow i
///   (continuous: the packet on the wire counts with its sent part).
/// * `Arr_i(t)`: bytes of flow i arrived at or before `t`; `B_i(t1) =
///   Arr_i(t1) − W_i(t1)` and `A_i(t1, t2)` the arrivals in the open
///   interval `(t1, t2)`, so `B_i(t1, t2) = B_i(t1) + A_i(t1, t2)`.
/// * B-WFI = `max_[t1,t2] { min[φ_i W(t1,t2), B_i(t1,t2)] − W_i(t1,t2) }`
///   (Eq. (5)), over intervals in which flow i is continuously backlogged
///   at the link (owns bytes not yet sent; a last byte sent at the instant a
///   new packet arrives ends one backlogged period and starts another).
/// * For [`BwfiIntervals::TheoremFour`], also: let `t̂` be the dequeue of the
///   packet on the wire at `t2` (the oldest packet in the transmit queue or
///   on the wire, App. A.6). Then either `t1` is at or after `t̂`, or flow i
///   has a packet in the *scheduler* in every state from `t1` up to just
///   before that dequeue (App. A.5: Lemma 7 bounds `W̄_i(t1, t̂)` only over
///   intervals in which the flow is continuously backlogged in the
///   scheduler). States are ordered by the enqueue/dequeue positions of the
///   records, so an empty scheduler queue refilled at the same instant
///   counts as a break; of the states at instant `t1` the latest is taken.
///
/// `W`, `W_i` and `Arr_i` are piecewise linear or stepwise with integer
/// breakpoints at arrivals, dequeues, starts and ends of transmissions, so
/// `t1` ranges over those instants and `t2` over the starts (`q` on the
/// wire from `t2`) and ends (`t2⁻`) of every transmission `q`.
pub fn bwfi_brute_force(
    out: &SimOutput,
    flow: u32,
    phi: f64,
    intervals: BwfiIntervals,
) -> BwfiWitness {
    let tr = FlowTrace::new(&out.records, flow);
    let recs = tr.recs;
    let mut best = BwfiWitness {
        bwfi: 0.0,
        t1: 0,
        t2: 0,
        t2_before: false,
        on_wire: 0,
    };
    for &q in &tr.tx {
        let r = &recs[q];
        // The earliest t1 the theorem allows for this t̂: the states after
        // the last empty one before the dequeue of q are allowed, the first
        // of them produced by the event right after that empty state.
        let theorem_lo = tr.events[tr.last_empty[r.dequeue_event as usize]].1;
        for (t2, before) in [(r.start, false), (r.completion, true)] {
            let Some(&(a, _)) = tr.periods.iter().find(|&&(a, c)| {
                if before {
                    a < t2 && t2 <= c
                } else {
                    a <= t2 && t2 < c
                }
            }) else {
                continue;
            };
            let lo = match intervals {
                BwfiIntervals::LinkBacklogged => a,
                BwfiIntervals::TheoremFour => a.max(theorem_lo),
            };
            let (w2, wi2) = (tr.sent_by_all(t2), tr.sent_by_own(t2));
            let arrived_before_t2 = tr.arrived(t2, true);
            let from = tr.times.partition_point(|&t| t < lo);
            for (k, &t1) in tr.times.iter().enumerate().skip(from) {
                if t1 > t2 || (before && t1 == t2) {
                    break;
                }
                let (w1, wi1, arr1) = tr.at[k];
                let backlog1 = arr1 - wi1;
                let later = if t2 > t1 {
                    arrived_before_t2.saturating_sub(arr1)
                } else {
                    0
                };
                let v =
                    (phi * (w2 - w1) as f64).min((backlog1 + later) as f64) - (wi2 - wi1) as f64;
                if v > best.bwfi {
                    best = BwfiWitness {
                        bwfi: v,
                        t1,
                        t2,
                        t2_before: before,
                        on_wire: q,
                    };
                }
            }
        }
    }
    best
}

/// One flow's view of a simulation trace, precomputed for
/// [`bwfi_brute_force`]: the transmissions, the flow's arrivals, its
/// backlogged periods at the link, its scheduler queue's empty states, and
/// the candidate instants for `t1` with `W`, `W_i` and `Arr_i` there.
struct FlowTrace<'a> {
    recs: &'a [PacketRecord],
    /// Transmissions in order, with prefix sums of bytes: all flows, flow i.
    tx: Vec<usize>,
    tx_sum: Vec<u64>,
    own: Vec<usize>,
    own_sum: Vec<u64>,
    /// Flow i's arrivals: `(instant, bytes arrived up to it)`.
    arrivals: Vec<(u64, u64)>,
    /// Backlogged periods at the link: [first arrival, last completion].
    periods: Vec<(u64, u64)>,
    /// Scheduler events in order: `(position, instant, ±1 for flow i)`.
    events: Vec<(u64, u64, i64)>,
    /// `last_empty[d]`: the last state at or before state d (d events
    /// done) with flow i's scheduler queue empty.
    last_empty: Vec<usize>,
    /// Candidate instants for t1, and `(W, W_i, Arr_i)` at each.
    times: Vec<u64>,
    at: Vec<(u64, u64, u64)>,
}

impl<'a> FlowTrace<'a> {
    fn new(recs: &'a [PacketRecord], flow: u32) -> Self {
        let mut tx: Vec<usize> = (0..recs.len()).collect();
        tx.sort_by_key(|&k| (recs[k].start, recs[k].completion));
        let own: Vec<usize> = tx
            .iter()
            .copied()
            .filter(|&k| recs[k].flow == flow)
            .collect();
        let prefix = |list: &[usize]| -> Vec<u64> {
            let mut acc = 0;
            let mut v = vec![0];
            for &k in list {
                acc += recs[k].len as u64;
                v.push(acc);
            }
            v
        };
        let (tx_sum, own_sum) = (prefix(&tx), prefix(&own));
        // Records are in arrival order.
        let arrivals: Vec<(u64, u64)> = {
            let mut acc = 0;
            recs.iter()
                .filter(|r| r.flow == flow)
                .map(|r| {
                    acc += r.len as u64;
                    (r.arrival, acc)
                })
                .collect()
        };
        let mut periods: Vec<(u64, u64)> = Vec::new();
        for r in recs.iter().filter(|r| r.flow == flow) {
            match periods.last_mut() {
                Some(p) if p.1 > r.arrival => p.1 = p.1.max(r.completion),
                _ => periods.push((r.arrival, r.completion)),
            }
        }
        let (events, last_empty) = scheduler_empty_states(recs, flow);
        let mut times: Vec<u64> = recs
            .iter()
            .flat_map(|r| [r.arrival, r.dequeue, r.start, r.completion])
            .collect();
        times.sort_unstable();
        times.dedup();
        let mut tr = FlowTrace {
            recs,
            tx,
            tx_sum,
            own,
            own_sum,
            arrivals,
            periods,
            events,
            last_empty,
            times,
            at: Vec::new(),
        };
        tr.at = tr
            .times
            .iter()
            .map(|&t| (tr.sent_by_all(t), tr.sent_by_own(t), tr.arrived(t, false)))
            .collect();
        tr
    }

    /// `W(t)`: bytes all flows sent by `t`.
    fn sent_by_all(&self, t: u64) -> u64 {
        sent_by(self.recs, &self.tx, &self.tx_sum, t)
    }

    /// `W_i(t)`: bytes flow i sent by `t`.
    fn sent_by_own(&self, t: u64) -> u64 {
        sent_by(self.recs, &self.own, &self.own_sum, t)
    }

    /// `Arr_i(t)` (`strictly_before`: `Arr_i(t⁻)`).
    fn arrived(&self, t: u64, strictly_before: bool) -> u64 {
        let n = self
            .arrivals
            .partition_point(|&(a, _)| if strictly_before { a < t } else { a <= t });
        if n == 0 {
            0
        } else {
            self.arrivals[n - 1].1
        }
    }
}

/// Bytes the transmissions `list` (in order, `sums` their prefix sums)
/// sent by `t`.
fn sent_by(recs: &[PacketRecord], list: &[usize], sums: &[u64], t: u64) -> u64 {
    let n = list.partition_point(|&k| recs[k].start <= t);
    if n == 0 {
        return 0;
    }
    let r = &recs[list[n - 1]];
    sums[n - 1] + (t - r.start).min(r.len as u64)
}

/// The scheduler events in order, `(position, instant, ±1 for flow i)`,
/// and for each state `d` (d events done) the last state at or before it
/// with flow i's scheduler queue empty.
fn scheduler_empty_states(recs: &[PacketRecord], flow: u32) -> (Vec<(u64, u64, i64)>, Vec<usize>) {
    let mut events: Vec<(u64, u64, i64)> = Vec::with_capacity(2 * recs.len());
    for r in recs {
        let mine = i64::from(r.flow == flow);
        events.push((r.enqueue_event, r.arrival, mine));
        events.push((r.dequeue_event, r.dequeue, -mine));
    }
    events.sort_unstable_by_key(|e| e.0);
    let mut last_empty = Vec::with_capacity(events.len() + 1);
    let mut queued = 0i64;
    let mut last = 0usize;
    for (j, e) in events.iter().enumerate() {
        last_empty.push(last);
        queued += e.2;
        if queued == 0 {
            last = j + 1;
        }
    }
    last_empty.push(last);
    (events, last_empty)
}
