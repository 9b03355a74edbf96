//! The PSPAT paper reproduced, where the machine allows it: real UDP
//! packets through two network namespaces ([`crate::udp_bench`], the
//! library behind `fairway udp-bench`), no scheduler, the kernel's HTB and
//! fairway's arbiter measured back to back.
//!
//! * **Figs. 6–7, throughput against clients** (60-byte packets): the
//!   paper's arbiter "keeps the throughput close to the no-scheduler case"
//!   while TC loses about 30 %. Claims: fairway ≥ 0.9 × none at every
//!   client count, and fairway > TC at the most clients.
//! * **Fig. 9, the target's 98th-percentile latency against the link
//!   rate** (a 4 kpps target of weight 50 next to flat-out clients): TC's
//!   overload threshold (0.2–1.1 Mpps in the paper) is far below the
//!   arbiter's (> 15 Mpps). Claims: fairway's threshold is not below TC's
//!   (a configuration is overloaded when it delivers < 90 % of the link
//!   rate), and above TC's threshold fairway's p98 is lower.
//!
//! All of these are *timing* claims ([`Claim::timing`]): measured and
//! listed, never failing CI, since other load on a shared machine moves
//! them. They need root (network namespaces) and the `ip` tool; without
//! them, or with `--no-net`, every claim is listed as skipped with the
//! reason ([`skipped_sections`]).

use super::error::ReproduceError;
use super::options::RunOptions;
use super::paper::Paper;
use super::progress::Ticker;
use super::report::{ChartFile, ChartLine, Claim, Figure, Section};

/// The ids of the claims, in report order, whether run or skipped.
pub const CLAIM_IDS: [&str; 4] = [
    "pspat/fig6-7/fairway-near-none",
    "pspat/fig6-7/fairway-above-tc",
    "pspat/fig9/threshold-not-below-tc",
    "pspat/fig9/p98-below-tc-above-threshold",
];

/// The claims as the paper states them (what a skipped run lists).
const CLAIM_TEXT: [&str; 4] = [
    "Figs. 6-7: fairway's throughput >= 0.9 x no scheduler's at every client count",
    "Figs. 6-7: fairway's throughput above TC's at the most clients",
    "Fig. 9: fairway's overload threshold not below TC's",
    "Fig. 9: fairway's p98 latency below TC's at every rate from TC's overload threshold",
];

const FIG67: &str = "Figs. 6-7: throughput against clients, 60-byte UDP packets";
const FIG9: &str = "Fig. 9: target's p98 latency against the link rate";

/// Why the real-packet experiments cannot run here, or `None` if they can.
pub fn unavailable(opts: &RunOptions) -> Option<String> {
    if opts.no_net {
        return Some("--no-net given".into());
    }
    #[cfg(target_os = "linux")]
    {
        if !crate::testbed::is_root() {
            return Some("needs root (network namespaces)".into());
        }
        if !crate::testbed::ingress::AVAILABLE {
            // The receivers drop the unread flows at ingress.
            return Some(fairway_bpf::NOT_BUILT.into());
        }
        let ip = std::process::Command::new("ip")
            .args(["netns", "list"])
            .output();
        if !matches!(ip, Ok(o) if o.status.success()) {
            return Some("needs `ip netns` (iproute2)".into());
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    Some("needs Linux (network namespaces, sendmmsg)".into())
}

/// Progress steps of [`run`]: one per trial, or one if skipped.
pub fn steps(opts: &RunOptions) -> u64 {
    #[cfg(target_os = "linux")]
    if unavailable(opts).is_none() {
        return config(opts.quick).trials() as u64;
    }
    let _ = opts;
    1
}

/// Both sections with every claim skipped for `reason`, so that the
/// report says visibly what was not checked and why.
pub fn skipped_sections(reason: &str) -> Vec<Section> {
    let section = |title: &str, ids: std::ops::Range<usize>| Section {
        paper: Paper::Pspat,
        title: format!("{title} (skipped: {reason})"),
        command: "fairway udp-bench --quick".into(),
        figures: Vec::new(),
        claims: ids
            .map(|i| Claim::skipped(CLAIM_IDS[i], CLAIM_TEXT[i], true, reason))
            .collect(),
        charts: Vec::new(),
        seconds: 0.0,
    };
    vec![section(FIG67, 0..2), section(FIG9, 2..4)]
}

/// Runs the experiments, or lists their claims as skipped.
pub fn run(opts: &RunOptions, t: &mut Ticker) -> Result<Vec<Section>, ReproduceError> {
    if let Some(reason) = unavailable(opts) {
        t.step(&format!("PSPAT paper: skipped ({reason})"));
        return Ok(skipped_sections(&reason));
    }
    #[cfg(target_os = "linux")]
    {
        measured(opts.quick, t)
    }
    #[cfg(not(target_os = "linux"))]
    unreachable!("unavailable() is Some off Linux")
}

#[cfg(target_os = "linux")]
use crate::udp_bench::{BenchConfig, Mode, Report as UdpReport};

/// The run: `fairway udp-bench`'s defaults (DRR arbiter, Δ 1000 / 500 ns,
/// target 4 kpps of weight 50 against 4 flat-out clients), throughput and
/// sweep only; `quick` as `udp-bench --quick` with a sweep that reaches
/// past TC's threshold on a small machine.
#[cfg(target_os = "linux")]
pub fn config(quick: bool) -> BenchConfig {
    use crate::udp_bench::{Experiment, Placement, Transport};
    let cpus = fairway_runtime::affinity::available_cpus();
    BenchConfig {
        clients: if quick { vec![1, 4] } else { vec![1, 2, 4, 8] },
        seconds: if quick { 0.3 } else { 0.7 },
        repeat: if quick { 1 } else { 3 },
        sweep_repeat: 1,
        latency_repeat: 1,
        modes: Mode::ALL.to_vec(),
        receive: crate::udp_bench::ReceivePath::IngressDrop,
        qdisc_bypass: false,
        idle_spin: true,
        interferers: 4,
        target_pps: 4000,
        target_weight: 50,
        link_pps: 200_000,
        rates: if quick {
            vec![200_000, 1_600_000]
        } else {
            vec![50_000, 100_000, 200_000, 400_000, 800_000, 1_600_000]
        },
        sched: fairway_core::SchedSpec::parse("drr").expect("drr is a registry name"),
        delta_throughput_ns: 1000,
        delta_latency_ns: 500,
        batch: 32,
        transport: Transport::Udp,
        queue_len: 511,
        placement: Placement {
            arbiter_cpu: Some(0),
            client_cpu: (cpus > 1).then_some(1),
            receiver_cpu: Some(0),
            rt_priority: Some(10),
        },
        experiments: Experiment {
            throughput: true,
            latency: false,
            sweep: true,
            transports: false,
        },
        max_packets_per_flow: 50_000_000,
        cooldown_ms: if quick {
            0
        } else {
            crate::udp_bench::RT_COOLDOWN_MS
        },
    }
}

#[cfg(target_os = "linux")]
fn measured(quick: bool, t: &mut Ticker) -> Result<Vec<Section>, ReproduceError> {
    let cfg = config(quick);
    let start = std::time::Instant::now();
    let r = crate::udp_bench::run(&cfg, &mut |_, _, label| t.step(label))?;
    let seconds = start.elapsed().as_secs_f64();
    let mut s = sections(&cfg, &r);
    // One run measures both; split its time evenly.
    for sec in &mut s {
        sec.seconds = seconds / 2.0;
    }
    Ok(s)
}

/// The claims on a udp-bench report (throughput and sweep).
#[cfg(target_os = "linux")]
pub fn claims(r: &UdpReport) -> Vec<Claim> {
    let tg = &r.targets;
    let fmt = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
    let th = |v: Option<u64>| v.map_or("not reached".into(), |v| format!("{v} pps"));
    // Not overloaded in the sweep = a threshold above every swept rate.
    let key = |v: Option<u64>| v.unwrap_or(u64::MAX);
    vec![
        Claim::timing(
            CLAIM_IDS[0],
            format!(
                "{}: min ratio {} (paper: \"close to the no-scheduler case\")",
                CLAIM_TEXT[0],
                fmt(tg.fairway_over_none_min)
            ),
            tg.fairway_over_none_min.is_some_and(|v| v >= 0.9),
        ),
        Claim::timing(
            CLAIM_IDS[1],
            format!(
                "{}: ratio {} (paper: TC loses about 30 % up to 4 clients)",
                CLAIM_TEXT[1],
                fmt(tg.fairway_over_tc_at_max_clients)
            ),
            tg.fairway_over_tc_at_max_clients.is_some_and(|v| v > 1.0),
        ),
        Claim::timing(
            CLAIM_IDS[2],
            format!(
                "{}: fairway {}, TC {} (paper: TC 0.2-1.1 Mpps, the arbiter > 15 Mpps)",
                CLAIM_TEXT[2],
                th(tg.fairway_overload_pps),
                th(tg.tc_overload_pps)
            ),
            !r.sweep.is_empty() && key(tg.fairway_overload_pps) >= key(tg.tc_overload_pps),
        ),
        Claim::timing(
            CLAIM_IDS[3],
            match tg.tc_overload_pps {
                Some(pps) => {
                    let p98 = |m: Mode, rate: u64| {
                        r.sweep
                            .iter()
                            .find(|p| p.mode == m && p.rate_pps == rate)
                            .map_or("-".into(), |p| format!("{:.1}", p.target.p98))
                    };
                    let mut rates: Vec<u64> = r
                        .sweep
                        .iter()
                        .map(|p| p.rate_pps)
                        .filter(|&x| x >= pps)
                        .collect();
                    rates.dedup();
                    let list: Vec<String> = rates
                        .iter()
                        .map(|&x| {
                            format!(
                                "{x} pps: {} against {} µs",
                                p98(Mode::Fairway, x),
                                p98(Mode::Tc, x)
                            )
                        })
                        .collect();
                    format!(
                        "{} ({}; paper: five times lower)",
                        CLAIM_TEXT[3],
                        list.join(", ")
                    )
                }
                None => format!(
                    "{}: TC not overloaded in the swept rates, nothing to compare",
                    CLAIM_TEXT[3]
                ),
            },
            // Vacuous when TC never overloads in the sweep: nothing contradicts it.
            tg.fairway_p98_below_tc_above_threshold.unwrap_or(true) && !r.sweep.is_empty(),
        ),
    ]
}

#[cfg(target_os = "linux")]
fn sections(cfg: &BenchConfig, r: &UdpReport) -> Vec<Section> {
    let claims = claims(r);
    let mut tput_figs = Vec::new();
    let mut tput_lines = Vec::new();
    for (k, mode) in Mode::ALL.into_iter().enumerate() {
        let pts: Vec<(f64, f64)> = r
            .throughput
            .iter()
            .filter(|p| p.mode == mode)
            .map(|p| (p.clients as f64, p.tx_pps / 1e6))
            .collect();
        for &(n, mpps) in &pts {
            let paper = match mode {
                Mode::None => "4.5 at 7-20 clients",
                Mode::Tc => "~0.7 x none up to 4 clients",
                Mode::Fairway | Mode::FairwayDispatch => "close to none",
            };
            tput_figs.push(Figure::vs_text(
                format!("{}, {n} clients", mode.name()),
                "Mpps",
                paper,
                mpps,
            ));
        }
        tput_lines.push(ChartLine {
            name: mode.name().into(),
            points: pts,
            dashed: false,
            color: k,
        });
    }
    if let Some(v) = r.targets.fairway_over_none_min {
        tput_figs.push(Figure::vs_text("fairway / none, min", "ratio", "~1", v));
    }
    if let Some(v) = r.targets.fairway_over_tc_at_max_clients {
        tput_figs.push(Figure::vs_text(
            "fairway / TC, most clients",
            "ratio",
            "> 1",
            v,
        ));
    }
    let mut sweep_figs = Vec::new();
    let mut sweep_lines = Vec::new();
    for (k, mode) in [Mode::Tc, Mode::Fairway].into_iter().enumerate() {
        let pts: Vec<(f64, f64)> = r
            .sweep
            .iter()
            .filter(|p| p.mode == mode)
            .map(|p| (p.rate_pps as f64, p.target.p98))
            .collect();
        for p in r.sweep.iter().filter(|p| p.mode == mode) {
            sweep_figs.push(Figure::vs_text(
                format!(
                    "{} p98, {} pps{}",
                    mode.name(),
                    p.rate_pps,
                    if p.overloaded { " (overloaded)" } else { "" }
                ),
                "µs",
                "machine-specific",
                p.target.p98,
            ));
        }
        sweep_lines.push(ChartLine {
            name: mode.name().into(),
            points: pts,
            dashed: false,
            color: k + 1,
        });
    }
    let clients: Vec<String> = cfg.clients.iter().map(usize::to_string).collect();
    let rates: Vec<String> = cfg.rates.iter().map(u64::to_string).collect();
    let mut claims = claims.into_iter();
    vec![
        Section {
            paper: Paper::Pspat,
            title: format!(
                "{FIG67}, {} s per trial, median of {}, {} CPUs",
                cfg.seconds, cfg.repeat, r.cpus
            ),
            command: format!(
                "fairway udp-bench --experiments throughput --clients {} --seconds {} --repeat {}",
                clients.join(","),
                cfg.seconds,
                cfg.repeat
            ),
            figures: tput_figs,
            claims: claims.by_ref().take(2).collect(),
            charts: vec![ChartFile {
                file: "pspat-fig6-7-throughput.svg".into(),
                title: "PSPAT paper Figs. 6-7: packets sent against clients (UDP, 60 bytes)".into(),
                x_label: "clients".into(),
                y_label: "Mpps".into(),
                log_x: false,
                log_y: false,
                lines: tput_lines,
            }],
            seconds: 0.0,
        },
        Section {
            paper: Paper::Pspat,
            title: format!(
                "{FIG9}, {} flat-out clients, {} s per trial",
                cfg.interferers, cfg.seconds
            ),
            command: format!(
                "fairway udp-bench --experiments sweep --rates {} --seconds {}",
                rates.join(","),
                cfg.seconds
            ),
            figures: sweep_figs,
            claims: claims.collect(),
            charts: vec![ChartFile {
                file: "pspat-fig9-p98-vs-rate.svg".into(),
                title: "PSPAT paper Fig. 9: target's p98 latency against the link rate".into(),
                x_label: "link rate [pps]".into(),
                y_label: "p98 latency [µs]".into(),
                log_x: true,
                log_y: true,
                lines: sweep_lines,
            }],
            seconds: 0.0,
        },
    ]
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::udp_bench::experiments::{SweepPoint, Targets, ThroughputPoint};
    use crate::udp_bench::Percentiles;

    fn report(none: f64, tc: f64, fw: f64, tc_p98: f64, fw_p98: f64) -> UdpReport {
        let tp = |mode, pps| ThroughputPoint {
            mode,
            clients: 4,
            tx_pps: pps,
            delivered_pps: pps,
            runs: vec![pps],
            slice_pps: vec![vec![pps]],
            packets_per_call: 32.0,
            fast_pps: pps,
            accounting_ok: true,
        };
        let sp = |mode, p98, overloaded| SweepPoint {
            mode,
            rate_pps: 1_600_000,
            tx_pps: 1.0,
            delivered_pps: 1.0,
            target: Percentiles {
                p98,
                ..Percentiles::default()
            },
            p98_runs: vec![p98],
            target_rate_ratio: 1.0,
            overloaded,
            accounting_ok: true,
        };
        UdpReport {
            cpus: 2,
            sched: "drr".into(),
            transport: crate::udp_bench::Transport::Udp,
            seconds: 0.3,
            cooldown_ms: 0,
            rt_runtime_us: None,
            receive: crate::udp_bench::ReceivePath::Sockets,
            qdisc_bypass: false,
            idle_spin: true,
            modes: Mode::ALL.to_vec(),
            ratios: Vec::new(),
            throughput: vec![
                tp(Mode::None, none),
                tp(Mode::Tc, tc),
                tp(Mode::Fairway, fw),
            ],
            light: Vec::new(),
            light_rounds: Vec::new(),
            loaded: Vec::new(),
            transports: Vec::new(),
            link_pps: 200_000,
            sweep: vec![sp(Mode::Tc, tc_p98, true), sp(Mode::Fairway, fw_p98, false)],
            bound: None,
            bound_dispatch: None,
            bound_observed: None,
            bound_dispatch_observed: None,
            targets: Targets {
                fairway_over_none_min: Some(fw / none),
                fairway_over_tc_at_max_clients: Some(fw / tc),
                tc_overload_pps: Some(1_600_000),
                fairway_overload_pps: None,
                fairway_p98_below_tc_above_threshold: Some(fw_p98 < tc_p98),
                accounting_ok: true,
                ..Targets::default()
            },
        }
    }

    #[test]
    fn claims_hold_on_the_papers_shape_and_fail_on_a_fabricated_bad_run() {
        let good = claims(&report(0.78, 0.64, 0.76, 50.0, 6.0));
        assert_eq!(
            good.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            CLAIM_IDS
        );
        assert!(good.iter().all(|c| c.holds && c.timing), "{good:?}");
        // The arbiter at half the no-scheduler rate, below TC, slower under load.
        let mut bad = report(0.78, 0.64, 0.39, 50.0, 80.0);
        bad.targets.fairway_overload_pps = Some(200_000);
        let c = claims(&bad);
        assert!(c.iter().all(|c| !c.holds), "{c:?}");
    }

    #[test]
    fn skipped_claims_are_listed_with_their_reason() {
        let s = skipped_sections("needs root (network namespaces)");
        let c: Vec<&Claim> = s.iter().flat_map(|s| &s.claims).collect();
        assert_eq!(c.len(), CLAIM_IDS.len());
        assert!(c.iter().all(|c| !c.holds
            && !c.failed()
            && c.skipped.as_deref() == Some("needs root (network namespaces)")));
        let opts = RunOptions {
            quick: true,
            no_net: true,
        };
        assert_eq!(unavailable(&opts).as_deref(), Some("--no-net given"));
        assert_eq!(steps(&opts), 1);
    }
}
