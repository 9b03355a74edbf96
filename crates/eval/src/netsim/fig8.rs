//! The simulation of the QFQ paper §6: topology of Fig. 8, end-to-end delays of
//! flows f0 and f1 (Table 2: average ± standard deviation; Table 3:
//! maximum) under DRR, QFQ, S-KPS and WF2Q+.
//!
//! # What the paper fixes
//!
//! Links R0–R1 and R1–R2: 10 Mbit/s, 10 ms; all others 100 Mbit/s, 1 ms.
//! f0: CBR 32 kbit/s S0 → K0; f1 and a twin: CBR 512 kbit/s S1 → K1; 50 CBR
//! flows of 160 kbit/s S2 → K2; two best-effort flows S3 → K3 and S4 → K4,
//! Pareto on/off, mean on and off 100 ms, shape 1.5, mean rate 2 Mbit/s.
//! 20 s simulated, the first 5 s discarded. Every router runs the same
//! scheduler.
//!
//! # What we chose (the paper leaves it open)
//!
//! * **Where S3/K3 and S4/K4 attach** (the text of the QFQ paper does not say):
//!   S0, S1, S2, S3 on R0; S4 on R1; K0, K1, K2, K4 on R2; K3 on R1. So each
//!   10 Mbit/s link carries f0, f1, its twin, the 50 CBR flows and one
//!   best-effort flow, which saturates it.
//! * **Packet sizes** ([`Fig8Params`]): CBR flows 50 B, best-effort flows
//!   1000 B. Each flow's maximum length (used by the schedulers' grouping)
//!   is its packet size. 50 B is read off Table 2: WF2Q+ gives f0 about
//!   12 ms above the 22 ms of propagation, about one packet service time
//!   `L/(φ_0 R)` of a 50 B packet (12.5 ms); with 200 B packets the f0
//!   delays of QFQ and S-KPS are far above the paper's, the
//!   ordering still holds except that DRR is no longer twice QFQ.
//! * **Weights**: proportional to the reserved rates, in units of 32 kbit/s:
//!   f0 1, f1 and twin 16, each 160 kbit/s flow 5, each best-effort flow 29
//!   (the unreserved 928 kbit/s of a 10 Mbit/s link); 312 in total per
//!   bottleneck, i.e. `φ_k` = reserved rate / 10 Mbit/s.
//! * **Pareto peak rate** 4 Mbit/s: with equal mean on and off times the
//!   mean rate is then the paper's 2 Mbit/s.
//! * **Buffers**: 256 packets per flow per output queue, drop-tail per flow
//!   (per-flow queueing routers), drops counted.
//! * **DRR**: `drr:quantum=250`, ns-2's default quantum of 250 B, here
//!   multiplied by the flow's weight (fairway's DRR is weighted; ns-2's
//!   gives every flow one quantum, which would starve f1). With the
//!   default unit (the largest maximum length, 1000 B) a round lasts 250 ms
//!   and f0/f1 overflow their buffers.
//! * **Phases**: each CBR flow starts at a random instant within its first
//!   period (seeded), so the 53 CBR flows are not synchronised.
//! * **Runs**: delays are pooled over `seeds` runs (default 3).

use super::error::{NetsimError, MAX_SIMULATED_S};
use super::network::{FlowReport, FlowSpec, NetReport, Network, SchedChoice, Source};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Parameters of the Fig. 8 run.
#[derive(Clone, Debug)]
pub struct Fig8Params {
    /// Simulated time, s.
    pub duration_s: f64,
    /// Discarded start, s.
    pub warmup_s: f64,
    /// Runs with seeds `seed..seed+seeds`, pooled.
    pub seeds: u64,
    /// First seed.
    pub seed: u64,
    /// Packet length of the CBR flows, bytes.
    pub cbr_len: u32,
    /// Packet length of the best-effort flows, bytes.
    pub best_effort_len: u32,
    /// Packets per flow per output queue.
    pub per_flow_buffer: u32,
}

impl Fig8Params {
    /// The paper's durations and our choices (module doc).
    pub fn paper() -> Self {
        Self {
            duration_s: 20.0,
            warmup_s: 5.0,
            seeds: 3,
            seed: 1,
            cbr_len: 50,
            best_effort_len: 1000,
            per_flow_buffer: 256,
        }
    }

    /// A reduced run for CI: 8 s simulated, 2 s discarded, one seed.
    pub fn quick() -> Self {
        Self {
            duration_s: 8.0,
            warmup_s: 2.0,
            seeds: 1,
            ..Self::paper()
        }
    }
}

/// The QFQ paper's numbers for one scheduler (ms).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PaperRow {
    /// Scheduler as named in the paper.
    pub sched: &'static str,
    /// f0 mean, std, max.
    pub f0: (f64, f64, f64),
    /// f1 mean, std, max.
    pub f1: (f64, f64, f64),
}

/// Tables 2 and 3 of the QFQ paper.
pub const PAPER: [PaperRow; 4] = [
    PaperRow {
        sched: "DRR",
        f0: (134.87, 34.28, 216.99),
        f1: (126.32, 30.64, 206.40),
    },
    PaperRow {
        sched: "QFQ",
        f0: (43.16, 5.60, 47.56),
        f1: (22.76, 0.61, 23.33),
    },
    PaperRow {
        sched: "S-KPS",
        f0: (46.28, 5.42, 59.91),
        f1: (22.59, 0.60, 23.34),
    },
    PaperRow {
        sched: "WF2Q+",
        f0: (34.39, 0.35, 35.2),
        f1: (22.59, 0.61, 23.33),
    },
];

/// Our result for one scheduler, beside the paper's.
#[derive(Clone, Debug, Serialize)]
pub struct Fig8Row {
    /// Scheduler name.
    pub sched: String,
    /// f0, pooled over the seeds.
    pub f0: FlowReport,
    /// f1, pooled over the seeds.
    pub f1: FlowReport,
    /// Packets dropped over all flows and seeds (best-effort excess).
    pub dropped: u64,
    /// The paper's row, if the scheduler is one of its four.
    pub paper: Option<PaperRow>,
}

/// A claim of the paper checked on our rows.
#[derive(Clone, Debug, Serialize)]
pub struct Claim {
    /// What is claimed.
    pub claim: String,
    /// Whether it holds.
    pub holds: bool,
}

/// Index of f0 and f1 in [`fig8_network`]'s flows.
pub const F0: usize = 0;
/// See [`F0`].
pub const F1: usize = 1;

/// The network of Fig. 8 with our choices (module doc), CBR phases drawn
/// from `seed`.
pub fn fig8_network(p: &Fig8Params, seed: u64) -> Network {
    const MS: u64 = 1_000_000;
    let mut net = Network::new(p.per_flow_buffer);
    let s: Vec<usize> = (0..5).map(|i| net.add_node(&format!("S{i}"))).collect();
    let k: Vec<usize> = (0..5).map(|i| net.add_node(&format!("K{i}"))).collect();
    let r: Vec<usize> = (0..3).map(|i| net.add_node(&format!("R{i}"))).collect();
    let (fast, slow) = (100_000_000, 10_000_000);
    for &src in &s[..4] {
        net.add_link(src, r[0], fast, MS);
    }
    net.add_link(s[4], r[1], fast, MS);
    net.add_link(r[0], r[1], slow, 10 * MS);
    net.add_link(r[1], r[2], slow, 10 * MS);
    for &i in &[0usize, 1, 2, 4] {
        net.add_link(r[2], k[i], fast, MS);
    }
    net.add_link(r[1], k[3], fast, MS);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x05ee_df18);
    let mut cbr = |name: String, path: Vec<usize>, kbps: u64, len: u32| {
        let rate = kbps * 1000;
        let period = u64::from(len) * 8 * 1_000_000_000 / rate;
        FlowSpec {
            name,
            path,
            weight: (kbps / 32) as u32,
            max_len: len,
            source: Source::Cbr {
                rate_bps: rate,
                packet_len: len,
            },
            start_ns: rng.random_range(0..period),
        }
    };
    let main = vec![s[0], r[0], r[1], r[2], k[0]];
    net.add_flow(cbr("f0".into(), main, 32, p.cbr_len));
    let f1_path = vec![s[1], r[0], r[1], r[2], k[1]];
    net.add_flow(cbr("f1".into(), f1_path.clone(), 512, p.cbr_len));
    net.add_flow(cbr("f1-twin".into(), f1_path, 512, p.cbr_len));
    for i in 0..50 {
        let path = vec![s[2], r[0], r[1], r[2], k[2]];
        net.add_flow(cbr(format!("cbr{i}"), path, 160, p.cbr_len));
    }
    let be = |name: &str, path: Vec<usize>| FlowSpec {
        name: name.into(),
        path,
        weight: 29,
        max_len: p.best_effort_len,
        source: Source::ParetoOnOff {
            peak_rate_bps: 4_000_000,
            packet_len: p.best_effort_len,
            mean_on_ns: 100 * MS,
            mean_off_ns: 100 * MS,
            alpha: 1.5,
        },
        start_ns: 0,
    };
    net.add_flow(be("be3", vec![s[3], r[0], r[1], k[3]]));
    net.add_flow(be("be4", vec![s[4], r[1], r[2], k[4]]));
    net
}

/// The paper's row for a scheduler name (`drr`, `qfq`, `s-kps`, `wf2q+`).
pub fn paper_row(name: &str) -> Option<PaperRow> {
    let base = name.split(':').next().unwrap_or(name);
    let key = match base {
        "drr" => "DRR",
        "qfq" => "QFQ",
        "s-kps" => "S-KPS",
        "wf2q+" => "WF2Q+",
        _ => return None,
    };
    PAPER.iter().copied().find(|r| r.sched == key)
}

/// `Ok` if a run of `schedulers` schedulers with `p` can start: times in
/// order, at least one seed, the seeds within `u64`, and the simulated
/// seconds in all (`schedulers × seeds × duration`) at most
/// [`MAX_SIMULATED_S`]. [`run_fig8`] checks this first.
pub fn check_params(schedulers: usize, p: &Fig8Params) -> Result<(), NetsimError> {
    if !(p.duration_s > 0.0 && p.warmup_s >= 0.0 && p.warmup_s < p.duration_s) {
        return Err(NetsimError::Times {
            warmup_s: p.warmup_s,
            duration_s: p.duration_s,
        });
    }
    if p.seeds == 0 {
        return Err(NetsimError::NoSeeds);
    }
    if p.seed.checked_add(p.seeds - 1).is_none() {
        return Err(NetsimError::SeedOverflow {
            seed: p.seed,
            seeds: p.seeds,
        });
    }
    let simulated = schedulers as f64 * p.seeds as f64 * p.duration_s;
    if simulated.is_nan() || simulated > MAX_SIMULATED_S {
        return Err(NetsimError::TooLong {
            schedulers,
            seeds: p.seeds,
            duration_s: p.duration_s,
        });
    }
    Ok(())
}

/// Runs Fig. 8 for each scheduler; `progress(done, total)` counts runs
/// (fractions of a run included).
pub fn run_fig8(
    choices: &[SchedChoice],
    p: &Fig8Params,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<Vec<Fig8Row>, NetsimError> {
    check_params(choices.len(), p)?;
    let total = (choices.len() as u64 * p.seeds) as f64;
    let mut rows = Vec::new();
    for (ci, c) in choices.iter().enumerate() {
        let mut f0 = FlowReport::default();
        let mut f1 = FlowReport::default();
        let mut dropped = 0;
        for k in 0..p.seeds {
            let seed = p.seed + k;
            let net = fig8_network(p, seed);
            let done = (ci as u64 * p.seeds + k) as f64;
            let r: NetReport = net.run(
                c,
                (p.duration_s * 1e9) as u64,
                (p.warmup_s * 1e9) as u64,
                seed,
                &mut |x| progress(done + x, total),
            )?;
            f0.merge(&r.flows[F0]);
            f1.merge(&r.flows[F1]);
            dropped += r.flows.iter().map(|f| f.dropped).sum::<u64>();
        }
        f0.name = "f0".into();
        f1.name = "f1".into();
        rows.push(Fig8Row {
            sched: c.name(),
            f0,
            f1,
            dropped,
            paper: paper_row(&c.name()),
        });
    }
    Ok(rows)
}

/// The orderings the QFQ paper §6 reports, checked on `rows` (those among
/// `drr`, `qfq`, `s-kps`, `wf2q+` that are present):
/// * f0: DRR ≫ QFQ (more than twice), QFQ ≈ S-KPS (within 35 %), both >
///   WF2Q+ (average and maximum);
/// * f1: QFQ ≈ S-KPS ≈ WF2Q+ (averages within 10 %), DRR ≫ all three.
pub fn claims(rows: &[Fig8Row]) -> Vec<Claim> {
    let get = |n: &str| rows.iter().find(|r| r.sched.split(':').next() == Some(n));
    let mut out = Vec::new();
    let mut claim = |text: String, holds: bool| out.push(Claim { claim: text, holds });
    let near = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * a.min(b);
    if let (Some(d), Some(q)) = (get("drr"), get("qfq")) {
        claim(
            format!(
                "f0: DRR avg {:.2} ms > 2 x QFQ avg {:.2} ms",
                d.f0.mean_delay_ms, q.f0.mean_delay_ms
            ),
            d.f0.mean_delay_ms > 2.0 * q.f0.mean_delay_ms,
        );
        claim(
            format!(
                "f1: DRR avg {:.2} ms > 2 x QFQ avg {:.2} ms",
                d.f1.mean_delay_ms, q.f1.mean_delay_ms
            ),
            d.f1.mean_delay_ms > 2.0 * q.f1.mean_delay_ms,
        );
    }
    if let (Some(q), Some(k)) = (get("qfq"), get("s-kps")) {
        claim(
            format!(
                "f0: QFQ avg {:.2} ms ~ S-KPS avg {:.2} ms (within 35 %)",
                q.f0.mean_delay_ms, k.f0.mean_delay_ms
            ),
            near(q.f0.mean_delay_ms, k.f0.mean_delay_ms, 0.35),
        );
    }
    if let Some(w) = get("wf2q+") {
        for n in ["qfq", "s-kps"] {
            if let Some(a) = get(n) {
                claim(
                    format!(
                        "f0: {n} avg {:.2} / max {:.2} ms > WF2Q+ avg {:.2} / max {:.2} ms",
                        a.f0.mean_delay_ms,
                        a.f0.max_delay_ms,
                        w.f0.mean_delay_ms,
                        w.f0.max_delay_ms
                    ),
                    a.f0.mean_delay_ms > w.f0.mean_delay_ms
                        && a.f0.max_delay_ms > w.f0.max_delay_ms,
                );
                claim(
                    format!(
                        "f1: {n} avg {:.2} ms ~ WF2Q+ avg {:.2} ms (within 10 %)",
                        a.f1.mean_delay_ms, w.f1.mean_delay_ms
                    ),
                    near(a.f1.mean_delay_ms, w.f1.mean_delay_ms, 0.10),
                );
            }
        }
    }
    out
}
