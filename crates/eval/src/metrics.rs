//! Service-guarantee metrics (seed 000 §4) and their analytical bounds.
//!
//! * **T-WFI** of flow i, Eq. (1): `max_p [t_c − (t_a + B_i(t_a)/(φ_i R))]`.
//! * **B-WFI** of flow i, Eq. (5): `max_[t1,t2] { min[φ_i W(t1,t2), B_i(t1,t2)] − W_i(t1,t2) }`
//!   over intervals in which the flow is continuously backlogged. With
//!   `f(t) = φ_i W(t) − W_i(t)` this is `max_t2 min(f(t2) − min_{t1<=t2} f(t1),
//!   Arr_i(t2⁻) − W_i(t2))`; f only falls while flow i transmits, so the link
//!   simulation evaluates it exactly at the start and end of the flow's own
//!   transmissions. The `t1` allowed for a `t2` are those of seed 000
//!   Theorem 4 (the flow backlogged in the scheduler up to the dequeue of
//!   the packet on the wire, App. A.5 and A.9), see [`crate::link_sim`].
//! * **Delay versus GPS**: `t_c − t_c^GPS` per packet, with the GPS completion
//!   from [`crate::fluid::FluidReference`] fed the same arrivals.
//!
//! Here φ_i = w_i / Σw over all flows of the set (Σφ = 1, seed 000 §4). Times
//! are in byte-times (R = 1); *packet service time* of flow i (Definition 1)
//! is `L_i / φ_i` byte-times, with L_i the flow's maximum packet length.

use crate::fluid::{Arrival, FluidReference};
use crate::link_sim::SimOutput;
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

/// The system parameters the analytical bounds depend on (seed 000 Table 1).
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

/// Bounds of a SCHED from the WF2Q+ family (seed 000 Eqs. (2) and (6)) for a
/// flow of normalized weight `phi` and max length `len`, with timestamp error
/// `ΔS = delta_s` (0 for exact WF2Q+; `6·L_i/φ_i` for QFQ, seed 000 §6).
pub fn sched_bounds(ctx: BoundContext, phi: f64, len: f64, delta_s: f64) -> Bounds {
    Bounds {
        twfi: len / phi + delta_s + ctx.q + ctx.max_len - len,
        bwfi: phi * ctx.q + phi * delta_s + (1.0 - phi) * len + ctx.max_len,
    }
}

/// Bounds of SCHED+ (seed 000 Theorem 1, Eq. (3), and Theorem 2, Eq. (7))
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
