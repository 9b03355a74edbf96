//! The service-guarantee experiment of the QFQ+ paper §8.3: run a scheduler in the
//! link simulation, measure per-flow T-WFI, B-WFI and delay versus GPS, and
//! compare with the analytical bounds.

use crate::limits::{check_memory, product, MemoryError};
use crate::link_sim::{simulate, LinkConfig, SimError, SimOutput, SimPacket};
use crate::metrics::{
    flow_stats, sched_bounds, sched_plus_bounds, BoundContext, Bounds, FlowStats,
};
use crate::traffic::{ControllerConfig, Pattern};
use crate::workload::{FlowSet, FlowSetError, PacketSizes};
use fairway_core::registry::Guarantee;
use fairway_core::{Capacity, Limits, SchedSpec};
use serde::Serialize;
use std::fmt;

/// Parameters of one guarantee experiment.
#[derive(Clone, Debug)]
pub struct GuaranteeOptions {
    /// The flows.
    pub flows: FlowSet,
    /// Arrival pattern of the controller.
    pub pattern: Pattern,
    /// Packet lengths.
    pub sizes: PacketSizes,
    /// Transmit-queue size in packets besides the one on the wire.
    pub queue_pkts: u32,
    /// Packets to send in total.
    pub packets: u64,
    /// Random seed (workload and controller).
    pub seed: u64,
    /// Link rate, only to express times in seconds.
    pub rate_bps: u64,
    /// Probability of switching to the enqueue phase when a flow empties.
    pub switch_prob: f64,
}

impl GuaranteeOptions {
    /// The QFQ+ paper §8.3 defaults for a flow set.
    pub fn paper(flows: FlowSet) -> Self {
        let n = flows.len() as u64;
        Self {
            flows,
            pattern: Pattern::Smooth,
            sizes: PacketSizes::Fixed,
            queue_pkts: 1,
            packets: (60 * n).clamp(20_000, 2_000_000),
            seed: 1,
            rate_bps: 10_000_000_000,
            switch_prob: 0.5,
        }
    }
}

/// Bytes a run needs per packet sent: its record, its dequeue index, its
/// arrival and fluid completion, with room for the vectors' growth (an
/// estimate; about 90 bytes are in use at the end of a run).
const BYTES_PER_PACKET: u128 = 256;
/// Bytes per flow: its state in the simulation, the controller, the fluid
/// reference and the scheduler (an estimate with room to spare: with the
/// packets the scheduler is built for, about 600 are in use).
const BYTES_PER_FLOW: u128 = 512;
/// Bytes per packet the scheduler is built to hold (an estimate).
const BYTES_PER_SLOT: u128 = 16;
/// Bytes per transmit-queue slot: the queue and the recent transmissions
/// the B-WFI tracking keeps.
const BYTES_PER_QUEUE_SLOT: u128 = 32;

impl GuaranteeOptions {
    /// `Ok` if the options are in range and a run fits the memory limit
    /// ([`crate::limits`]); checked before anything is allocated.
    pub fn check(&self) -> Result<(), GuaranteeError> {
        let range = |param, value: String, range: &str| GuaranteeError::OutOfRange {
            param,
            value,
            range: range.to_string(),
        };
        if self.packets == 0 || self.packets > u64::from(u32::MAX) {
            // Packet records are indexed by u32 in the scheduler's packets.
            return Err(range(
                "--packets",
                self.packets.to_string(),
                "1..=4294967295 (packets are numbered by 32-bit ids)",
            ));
        }
        if !(0.0..=1.0).contains(&self.switch_prob) {
            return Err(range(
                "--switch-prob",
                self.switch_prob.to_string(),
                "[0, 1] (a probability)",
            ));
        }
        if self.rate_bps == 0 {
            return Err(range("--rate", "0".into(), "1.. bit/s"));
        }
        self.sizes.check_for(&self.flows)?;
        let n = self.flows.len() as u128;
        let ctl = ControllerConfig::paper(self.pattern, self.flows.len());
        let needed = [
            product(&[u128::from(self.packets), BYTES_PER_PACKET]),
            product(&[n, BYTES_PER_FLOW]),
            product(&[u128::from(ctl.high) + 16, BYTES_PER_SLOT]),
            product(&[u128::from(self.queue_pkts) + 2, BYTES_PER_QUEUE_SLOT]),
        ]
        .into_iter()
        .try_fold(0u128, |acc, x| acc.checked_add(x?));
        check_memory(
            || {
                format!(
                    "--packets {} with {} flows (--flows {}) and --queue {}",
                    self.packets, n, self.flows.name, self.queue_pkts
                )
            },
            needed,
        )?;
        Ok(())
    }
}

/// The outcome for one scheduler (the JSON object of `fairway guarantees`).
#[derive(Clone, Debug, Serialize)]
pub struct GuaranteeReport {
    /// Scheduler spec.
    pub sched: String,
    /// Flow-set name.
    pub flows: String,
    /// Arrival pattern.
    pub pattern: Pattern,
    /// Transmit-queue size (packets besides the one on the wire).
    pub queue: u32,
    /// Packets transmitted.
    pub packets: u64,
    /// Seed.
    pub seed: u64,
    /// T-WFI of the highest-weight flows, in packet service times of such a flow.
    pub twfi_max_weight_flow: f64,
    /// The same in microseconds at `rate_bps`.
    pub twfi_max_weight_flow_us: f64,
    /// B-WFI of the highest-weight flows, in bytes.
    pub bwfi_max_weight_flow: f64,
    /// Largest delay versus GPS of the highest-weight flows, in their packet service times.
    pub gps_delay_max_weight_flow: f64,
    /// Analytical T-WFI bound for the highest-weight flows (packet service times), if known.
    pub twfi_bound_max_weight_flow: Option<f64>,
    /// Analytical B-WFI bound for the highest-weight flows (bytes), if known.
    pub bwfi_bound_max_weight_flow: Option<f64>,
    /// Largest T-WFI of any flow, each in its own packet service times.
    pub twfi_worst_flow: f64,
    /// Flows whose T-WFI or B-WFI exceeded its analytical bound.
    pub bound_violations: u64,
    /// Link rate used for the seconds above.
    pub rate_bps: u64,
}

/// Analytical bounds for a flow under `spec`, from the guarantee its
/// catalogue entry declares ([`SchedInfo::guarantee`]), or `None` where it
/// declares none (FIFO, DRR).
///
/// * A flow scheduler (WF2Q+, QFQ): the QFQ+ paper Eqs. (2) and (6) with
///   `ΔS = ΔS⁻ + ΔS⁺` from its timestamp-error factors (WF2Q+: `L/φ`,
///   QFQ: `2L/φ + 4L/φ`, the QFQ+ paper App. A and §6).
/// * SCHED+ (QFQ+, WF2Q++): Theorems 1 and 2 (Eqs. (3), (7)) with SCHED's
///   ΔS, maximized over the aggregate occupancy m = 1..=M, since a flow's
///   aggregate may hold any number of flows up to M during a run.
///
/// [`SchedInfo::guarantee`]: fairway_core::registry::SchedInfo::guarantee
pub fn bounds_for(spec: &SchedSpec, ctx: BoundContext, flow: &FlowStats) -> Option<Bounds> {
    let (phi, len) = (flow.phi, flow.max_len as f64);
    match spec.kind.info().guarantee {
        Guarantee::None => None,
        Guarantee::Flow(errors) => Some(sched_bounds(ctx, phi, len, errors.delta_s(len, phi))),
        Guarantee::Aggregate(errors) => {
            let delta_s = errors.delta_s(len, phi);
            let big_m = spec.aggregate_size();
            let worst = (1..=big_m)
                .map(|m| sched_plus_bounds(ctx, phi, len, delta_s, f64::from(m), f64::from(big_m)))
                .fold(
                    Bounds {
                        twfi: f64::NEG_INFINITY,
                        bwfi: f64::NEG_INFINITY,
                    },
                    |a, b| Bounds {
                        twfi: a.twfi.max(b.twfi),
                        bwfi: a.bwfi.max(b.bwfi),
                    },
                );
            Some(worst)
        }
    }
}

/// Why a guarantee experiment could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuaranteeError {
    /// An option outside its range.
    OutOfRange {
        /// The option (as the CLI names it).
        param: &'static str,
        /// The value given.
        value: String,
        /// Its range.
        range: String,
    },
    /// A packet-size distribution the flow set cannot draw from.
    Sizes(FlowSetError),
    /// The run would need more memory than its limit.
    Memory(MemoryError),
    /// The simulation could not start.
    Sim(SimError),
    /// The scheduler refused packets although it was built with room for
    /// every flow's backlog.
    Refused {
        /// The scheduler (its spec).
        sched: String,
        /// Packets refused.
        refused: u64,
    },
}

impl fmt::Display for GuaranteeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuaranteeError::OutOfRange {
                param,
                value,
                range,
            } => write!(f, "{param} {value} must be in {range}"),
            GuaranteeError::Sizes(e) => e.fmt(f),
            GuaranteeError::Memory(e) => e.fmt(f),
            GuaranteeError::Sim(e) => e.fmt(f),
            GuaranteeError::Refused { sched, refused } => {
                write!(f, "{sched}: scheduler refused {refused} packets")
            }
        }
    }
}

impl std::error::Error for GuaranteeError {}

impl From<FlowSetError> for GuaranteeError {
    fn from(e: FlowSetError) -> Self {
        GuaranteeError::Sizes(e)
    }
}

impl From<MemoryError> for GuaranteeError {
    fn from(e: MemoryError) -> Self {
        GuaranteeError::Memory(e)
    }
}

impl From<SimError> for GuaranteeError {
    fn from(e: SimError) -> Self {
        GuaranteeError::Sim(e)
    }
}

/// Runs one scheduler through the link simulation and returns its trace
/// (what [`run_guarantees`] measures; tests check the metrics on it).
pub fn simulate_guarantees(
    spec: &SchedSpec,
    opt: &GuaranteeOptions,
) -> Result<SimOutput, GuaranteeError> {
    opt.check()?;
    let flows = opt.flows.flows();
    let ctl = ControllerConfig {
        switch_prob: opt.switch_prob,
        ..ControllerConfig::paper(opt.pattern, flows.len())
    };
    let cap = Capacity::new(
        flows.len() as u32,
        (ctl.high + 16).min(u32::MAX as u64 - 2) as u32,
    );
    let mut sched = spec.build::<SimPacket>(cap, Limits::DEFAULT);
    let out = simulate(
        sched.as_mut(),
        &opt.flows,
        ctl,
        opt.sizes,
        LinkConfig {
            queue_pkts: opt.queue_pkts,
        },
        opt.packets,
        opt.seed,
    )?;
    if out.refused > 0 {
        return Err(GuaranteeError::Refused {
            sched: spec.to_string(),
            refused: out.refused,
        });
    }
    Ok(out)
}

/// Runs one scheduler; returns the report and the per-flow statistics.
pub fn run_guarantees(
    spec: &SchedSpec,
    opt: &GuaranteeOptions,
) -> Result<(GuaranteeReport, Vec<FlowStats>), GuaranteeError> {
    let out = simulate_guarantees(spec, opt)?;
    let flows = opt.flows.flows();
    let stats = flow_stats(&out, &flows);
    let ctx = BoundContext::new(opt.flows.max_len(), opt.queue_pkts);
    let max_w = flows.iter().map(|f| f.0).max().unwrap_or(1);
    let top: Vec<&FlowStats> = stats.iter().filter(|s| s.weight == max_w).collect();
    let pst = top.first().map_or(1.0, |s| s.packet_service_time());
    let fold =
        |f: &dyn Fn(&FlowStats) -> f64| top.iter().map(|s| f(s)).fold(f64::NEG_INFINITY, f64::max);
    let twfi = fold(&|s| s.twfi);
    let bound = top.first().and_then(|s| bounds_for(spec, ctx, s));
    let violations = stats
        .iter()
        .filter(|s| {
            bounds_for(spec, ctx, s)
                .is_some_and(|b| s.twfi > b.twfi * (1.0 + 1e-9) || s.bwfi > b.bwfi * (1.0 + 1e-9))
        })
        .count() as u64;
    let report = GuaranteeReport {
        sched: spec.to_string(),
        flows: opt.flows.name.clone(),
        pattern: opt.pattern,
        queue: opt.queue_pkts,
        packets: out.records.len() as u64,
        seed: opt.seed,
        twfi_max_weight_flow: twfi / pst,
        twfi_max_weight_flow_us: twfi * 8.0 / opt.rate_bps as f64 * 1e6,
        bwfi_max_weight_flow: fold(&|s| s.bwfi),
        gps_delay_max_weight_flow: fold(&|s| s.max_delay_vs_gps) / pst,
        twfi_bound_max_weight_flow: bound.map(|b| b.twfi / pst),
        bwfi_bound_max_weight_flow: bound.map(|b| b.bwfi),
        twfi_worst_flow: stats
            .iter()
            .map(|s| s.twfi / s.packet_service_time())
            .fold(f64::NEG_INFINITY, f64::max),
        bound_violations: violations,
        rate_bps: opt.rate_bps,
    };
    Ok((report, stats))
}
