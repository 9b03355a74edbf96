//! Text tables, CSV files and SVG charts of a [`Report`].

use super::config::SWEPT;
use super::error::ReportError;
use super::experiments::Report;
use super::result::TrialResult;
use super::spec::{Mode, Transport};
use fairway_eval::cost::chart::{write_svg, ChartSpec, Series};
use std::fmt::Write as _;
use std::path::Path;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn color(m: Mode) -> usize {
    match m {
        Mode::None => 7,
        Mode::Tc => 1,
        Mode::Fairway => 0,
        Mode::FairwayDispatch => 2,
    }
}

fn latency_rows(out: &mut String, title: &str, runs: &[TrialResult]) {
    let _ = writeln!(out, "\n{title}");
    let _ = writeln!(
        out,
        "{:<16} {:>8} {:>8} {:>8} {:>8} {:>9} {:>10} {:>9} {:>11} {:>11}",
        "config",
        "p50 µs",
        "p90 µs",
        "p98 µs",
        "p99 µs",
        "max µs",
        "target pps",
        "rate",
        "accounted",
        "call p50 µs"
    );
    for r in runs {
        let Some(t) = &r.target else { continue };
        let _ = writeln!(
            out,
            "{:<16} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>10.0} {:>9.3} {:>11} {:>11}",
            r.mode.name(),
            t.latency.p50,
            t.latency.p90,
            t.latency.p98,
            t.latency.p99,
            t.latency.max,
            t.received_pps,
            t.rate_ratio,
            if r.accounting_holds() { "yes" } else { "NO" },
            if t.call_delay.count > 0 {
                format!("{:.2}", t.call_delay.p50)
            } else {
                "-".into()
            }
        );
    }
}

/// The target-alone p50s of every round, and their per-round differences
/// from `none`.
fn light_rounds(out: &mut String, r: &Report) {
    if r.light_rounds.iter().all(|l| l.p50.len() < 2) {
        return;
    }
    let _ = writeln!(
        out,
        "target alone, p50 µs of every round (due -> sendmmsg call p50 in brackets; the table shows the round with the median p50):"
    );
    for l in &r.light_rounds {
        let runs: Vec<String> = l
            .p50
            .iter()
            .zip(&l.call_p50)
            .map(|(p, c)| format!("{p:.1} [{c:.2}]"))
            .collect();
        let _ = writeln!(out, "  {:<16} {}", l.mode.name(), runs.join("  "));
    }
}

/// `lo–hi` with two decimals, or `-`.
fn range(r: Option<(f64, f64)>) -> String {
    r.map_or("-".into(), |(a, b)| format!("{a:.2} to {b:.2}"))
}

/// The report as text tables.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    header(&mut out, r);
    throughput_table(&mut out, r);
    ratio_table(&mut out, r);
    transport_table(&mut out, r);
    latency_tables(&mut out, r);
    bound_lines(&mut out, r);
    sweep_table(&mut out, r);
    target_lines(&mut out, r);
    let legend = legend(&out);
    out.push_str(&legend);
    out
}

/// The run's parameters: transport, receive path, CPUs, scheduler, trial length.
fn header(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "PSPAT paper §5.4-5.5 with real packets ({}{}, receive path {}{}): {} CPUs, scheduler {}, {} s per trial, {} ms between trials, sched_rt_runtime_us {}",
        r.transport.name(),
        if r.qdisc_bypass { ", qdisc bypass" } else { "" },
        r.receive.name(),
        if r.idle_spin {
            ", idle CPUs spin in latency runs"
        } else {
            ""
        },
        r.cpus,
        r.sched,
        r.seconds,
        r.cooldown_ms,
        r.rt_runtime_us.map_or("unknown".into(), |v| v.to_string())
    );
}

/// Throughput against clients, every configuration (Fig. 6).
fn throughput_table(out: &mut String, r: &Report) {
    if !r.throughput.is_empty() {
        let _ = writeln!(
            out,
            "\nthroughput, 60-byte packets (Mpps across the link, median; Fig. 6)"
        );
        let _ = writeln!(
            out,
            "{:>7} {:>9} {:>9} {:>9} {:>9} {:>13} {:>11} {:>10} {:>8} {:>9}",
            "clients",
            "none",
            "tc",
            "fairway",
            "fw-disp",
            "fairway/none",
            "fairway/tc",
            "disp/none",
            "disp/tc",
            "accounted"
        );
        let mut ns: Vec<usize> = r.throughput.iter().map(|p| p.clients).collect();
        ns.dedup();
        for n in ns {
            let get = |m: Mode| r.throughput.iter().find(|p| p.clients == n && p.mode == m);
            let v = |m: Mode| get(m).map(|p| p.delivered_pps);
            let ok = r
                .modes
                .iter()
                .all(|&m| get(m).is_some_and(|p| p.accounting_ok));
            let d = Mode::FairwayDispatch;
            let _ = writeln!(
                out,
                "{:>7} {:>9} {:>9} {:>9} {:>9} {:>13} {:>11} {:>10} {:>8} {:>9}",
                n,
                opt(v(Mode::None).map(|x| x / 1e6), 3),
                opt(v(Mode::Tc).map(|x| x / 1e6), 3),
                opt(v(Mode::Fairway).map(|x| x / 1e6), 3),
                opt(v(d).map(|x| x / 1e6), 3),
                opt(v(Mode::Fairway).zip(v(Mode::None)).map(|(f, n)| f / n), 2),
                opt(v(Mode::Fairway).zip(v(Mode::Tc)).map(|(f, t)| f / t), 2),
                opt(v(d).zip(v(Mode::None)).map(|(f, n)| f / n), 2),
                opt(v(d).zip(v(Mode::Tc)).map(|(f, t)| f / t), 2),
                if ok { "yes" } else { "NO" }
            );
        }
    }
}

/// The per-repeat throughput ratios.
fn ratio_table(out: &mut String, r: &Report) {
    if !r.ratios.is_empty() {
        let _ = writeln!(
            out,
            "\nthroughput ratios per repeat (trials of one repeat run back to back): median [min-max] / ratio of the fast-regime rates (p90 of 50 ms slices)"
        );
        let _ = writeln!(
            out,
            "{:>7} {:>26} {:>26} {:>26} {:>26}",
            "clients", "fairway/none", "fairway/tc", "disp/none", "disp/tc"
        );
        let mut ns: Vec<usize> = r.ratios.iter().map(|p| p.clients).collect();
        ns.dedup();
        for n in ns {
            let cell = |num: Mode, den: Mode| {
                r.ratios
                    .iter()
                    .find(|p| p.clients == n && p.num == num && p.den == den)
                    .map_or("-".into(), |p| {
                        format!(
                            "{:.2} [{:.2}-{:.2}] / {:.2}",
                            p.median, p.min, p.max, p.fast
                        )
                    })
            };
            let d = Mode::FairwayDispatch;
            let _ = writeln!(
                out,
                "{:>7} {:>26} {:>26} {:>26} {:>26}",
                n,
                cell(Mode::Fairway, Mode::None),
                cell(Mode::Fairway, Mode::Tc),
                cell(d, Mode::None),
                cell(d, Mode::Tc)
            );
        }
    }
}

/// Throughput per transport.
fn transport_table(out: &mut String, r: &Report) {
    if !r.transports.is_empty() {
        let _ = writeln!(
            out,
            "\nthroughput per transport (Mpps across the link, median)"
        );
        let _ = writeln!(
            out,
            "{:>7} {:<16} {:>9} {:>10} {:>15} {:>12} {:>9}",
            "clients", "config", "udp", "af-packet", "af-packet-ring", "ring/mmsg", "accounted"
        );
        let mut ns: Vec<usize> = r.transports.iter().map(|p| p.clients).collect();
        ns.dedup();
        for n in ns {
            for &m in &r.modes {
                let get = |t: Transport| {
                    r.transports
                        .iter()
                        .find(|p| p.clients == n && p.mode == m && p.transport == t)
                };
                let v = |t: Transport| get(t).map(|p| p.delivered_pps);
                let ok = Transport::ALL
                    .iter()
                    .all(|&t| get(t).is_some_and(|p| p.accounting_ok));
                let _ = writeln!(
                    out,
                    "{:>7} {:<16} {:>9} {:>10} {:>15} {:>12} {:>9}",
                    n,
                    m.name(),
                    opt(v(Transport::Udp).map(|x| x / 1e6), 3),
                    opt(v(Transport::AfPacket).map(|x| x / 1e6), 3),
                    opt(v(Transport::AfPacketRing).map(|x| x / 1e6), 3),
                    opt(
                        v(Transport::AfPacketRing)
                            .zip(v(Transport::AfPacket))
                            .map(|(a, b)| a / b),
                        2
                    ),
                    if ok { "yes" } else { "NO" }
                );
            }
        }
    }
}

/// The target's latency alone (Fig. 8) and under load (Fig. 10).
fn latency_tables(out: &mut String, r: &Report) {
    if !r.light.is_empty() {
        latency_rows(
            out,
            "target client alone, one-way latency (Fig. 8)",
            &r.light,
        );
        let _ = writeln!(
            out,
            "(call p50: due -> send call started (sendmmsg, or the TX ring's kick), the time before the system call; p50 minus it is the kernel's send path up to the receive timestamp)"
        );
        light_rounds(out, r);
        let title = format!(
            "target (4 kpps-style pacing, high weight) + interferers flat out, link {} pps (Fig. 10)",
            r.link_pps
        );
        latency_rows(out, &title, &r.loaded);
    }
}

/// The Eq. (1) checks on the loaded targets.
fn bound_lines(out: &mut String, r: &Report) {
    for (name, b, observed) in [
        ("fairway", &r.bound, &r.bound_observed),
        (
            "fairway-dispatch",
            &r.bound_dispatch,
            &r.bound_dispatch_observed,
        ),
    ] {
        let Some(b) = b else { continue };
        let _ = writeln!(
            out,
            "\nEq. (1) on {name}'s target: bound {:.1} µs (scheduler {:.1} µs), worst due->send {:.1} µs, p99.9 {:.1} µs, margin {:.1} µs, {} of {} over: {}",
            b.bound_us, b.twfi_scheduler_us, b.worst_us, b.p999_us, b.margin_us, b.over_bound, b.packets,
            if b.holds { "holds" } else { "VIOLATED" }
        );
        if let Some(o) = observed {
            let c = &o.check;
            let _ = writeln!(
                out,
                "  with the Δs the run had (Δ_A + the arbiter's longest round gap = {:.1} µs, Δ_C + the target's longest stall = {:.1} µs): bound {:.1} µs, margin {:.1} µs, {} over: {}",
                o.delta_a_us, o.delta_c_us, c.bound_us, c.margin_us, c.over_bound,
                if c.holds { "holds" } else { "VIOLATED" }
            );
        }
    }
}

/// The target's p98 against the link rate (Fig. 9).
fn sweep_table(out: &mut String, r: &Report) {
    if !r.sweep.is_empty() {
        let _ = writeln!(out, "\ntarget p98 latency versus link rate (Fig. 9)");
        let _ = writeln!(
            out,
            "{:>10} {:>10} {:>10} {:>12} {:>11} {:>11} {:>11} {:>9} {:>9} {:>9}",
            "rate pps",
            "tc p98 µs",
            "fw p98 µs",
            "disp p98 µs",
            "tc deliv/s",
            "fw deliv/s",
            "dp deliv/s",
            "tc rate",
            "fw rate",
            "dp rate"
        );
        let mut rates: Vec<u64> = r.sweep.iter().map(|p| p.rate_pps).collect();
        rates.dedup();
        for rate in rates {
            let g = |m: Mode| r.sweep.iter().find(|p| p.rate_pps == rate && p.mode == m);
            let mark = |m: Mode| g(m).map_or("", |p| if p.overloaded { "*" } else { "" });
            let d = Mode::FairwayDispatch;
            let _ = writeln!(
                out,
                "{:>10} {:>10} {:>10} {:>12} {:>10}{:1} {:>10}{:1} {:>10}{:1} {:>9} {:>9} {:>9}",
                rate,
                opt(g(Mode::Tc).map(|p| p.target.p98), 1),
                opt(g(Mode::Fairway).map(|p| p.target.p98), 1),
                opt(g(d).map(|p| p.target.p98), 1),
                opt(g(Mode::Tc).map(|p| p.delivered_pps), 0),
                mark(Mode::Tc),
                opt(g(Mode::Fairway).map(|p| p.delivered_pps), 0),
                mark(Mode::Fairway),
                opt(g(d).map(|p| p.delivered_pps), 0),
                mark(d),
                opt(g(Mode::Tc).map(|p| p.target_rate_ratio), 3),
                opt(g(Mode::Fairway).map(|p| p.target_rate_ratio), 3),
                opt(g(d).map(|p| p.target_rate_ratio), 3),
            );
        }
        let _ = writeln!(
            out,
            "(median of the repeats; * = delivered < 90 % of the link rate: overloaded)"
        );
        if r.sweep.iter().any(|p| p.p98_runs.len() > 1) {
            let _ = writeln!(out, "p98 of every repeat, µs:");
            for p in &r.sweep {
                let runs: Vec<String> = p.p98_runs.iter().map(|x| format!("{x:.1}")).collect();
                let _ = writeln!(
                    out,
                    "  {:>9} pps {:<16} {}",
                    p.rate_pps,
                    p.mode.name(),
                    runs.join(" ")
                );
            }
        }
    }
}

/// The targets as ratios from this run: only those of the experiments
/// that ran (a line of an experiment not run would read as a result).
fn target_lines(out: &mut String, r: &Report) {
    let t = &r.targets;
    let _ = writeln!(out, "\ntargets (ratios from this run)");
    if !r.throughput.is_empty() {
        throughput_targets(out, t);
    }
    if !r.light.is_empty() {
        latency_targets(out, t);
    }
    if !r.sweep.is_empty() {
        let threshold = |p: Option<u64>| p.map_or("not reached".into(), |p| format!("{p} pps"));
        let _ = writeln!(
            out,
            "  overload threshold: tc {}, fairway {}, fairway-dispatch {}; p98 < tc p98 at every rate from tc's threshold: fairway {}, fairway-dispatch {}",
            threshold(t.tc_overload_pps),
            threshold(t.fairway_overload_pps),
            threshold(t.dispatch_overload_pps),
            t.fairway_p98_below_tc_above_threshold.map_or("-".into(), |b| b.to_string()),
            t.dispatch_p98_below_tc_above_threshold.map_or("-".into(), |b| b.to_string())
        );
    }
    let _ = writeln!(
        out,
        "  every packet accounted for (sent = received + counted drops): {}",
        t.accounting_ok
    );
    let held = |b: Option<&super::BoundCheck>| match b {
        Some(c) if c.holds => format!("holds (margin {:.1} µs)", c.margin_us),
        Some(c) => format!("VIOLATED ({} over)", c.over_bound),
        None => "-".into(),
    };
    if r.bound.is_some() || r.bound_dispatch.is_some() {
        let _ = writeln!(
            out,
            "  Eq. (1) for the loaded target, configured Δs / the Δs the run had: fairway {} / {}, fairway-dispatch {} / {}",
            held(r.bound.as_ref()),
            held(r.bound_observed.as_ref().map(|o| &o.check)),
            held(r.bound_dispatch.as_ref()),
            held(r.bound_dispatch_observed.as_ref().map(|o| &o.check))
        );
    }
}

/// The throughput experiment's target lines.
fn throughput_targets(out: &mut String, t: &super::Targets) {
    let _ = writeln!(
        out,
        "  fairway/none throughput, min over clients: {} (median of per-repeat ratios), {} (fast-regime rates) (target >= 0.9)",
        opt(t.fairway_over_none_min, 2),
        opt(t.fairway_over_none_fast_min, 2)
    );
    let _ = writeln!(
        out,
        "  fairway/tc throughput at the most clients: {} [{}] (median of per-repeat ratios), {} (fast-regime rates) (target >= 1.3)",
        opt(t.fairway_over_tc_at_max_clients, 2),
        t.fairway_over_tc_range
            .map_or("-".into(), |(a, b)| format!("{a:.2}-{b:.2}")),
        opt(t.fairway_over_tc_fast, 2)
    );
    let _ = writeln!(
        out,
        "  fairway-dispatch: /none min {}, /tc at the most clients {}",
        opt(t.dispatch_over_none_min, 2),
        opt(t.dispatch_over_tc_at_max_clients, 2)
    );
}

/// The latency experiment's target lines.
fn latency_targets(out: &mut String, t: &super::Targets) {
    let _ = writeln!(
        out,
        "  added median latency at light load (median [range] of per-round differences): fairway {} [{}] µs, of which {} µs before the sendmmsg call (target <= 2), fairway-dispatch {} [{}] µs, tc {} [{}] µs",
        opt(t.added_median_us, 2),
        range(t.added_median_range),
        opt(t.added_call_median_us, 2),
        opt(t.dispatch_added_median_us, 2),
        range(t.dispatch_added_median_range),
        opt(t.tc_added_median_us, 2),
        range(t.tc_added_median_range)
    );
    let _ = writeln!(
        out,
        "  target's rate under load, received/due: fairway {} (target 1 ± 0.02), fairway-dispatch {}, tc {}, none {}",
        opt(t.fairway_target_rate_ratio, 3),
        opt(t.dispatch_target_rate_ratio, 3),
        opt(t.tc_target_rate_ratio, 3),
        opt(t.none_target_rate_ratio, 3)
    );
}

/// Each term the report above uses without defining it, with what it
/// means; only the terms that appear in `text`.
const LEGEND: [(&str, &str); 6] = [
    ("fw-disp", "fw-disp, disp: fairway-dispatch, packets sent by the arbiter thread itself"),
    ("Δ_A", "Δ_A: the longest the arbiter takes between two rounds (Eq. (1)'s arbiter term)"),
    ("Δ_C", "Δ_C: the longest a client takes to send a packet once granted (Eq. (1)'s client term)"),
    ("fast-regime", "fast-regime rate: the p90 of the delivered rate over the trial's 50 ms slices (the rate when the VM's CPU is not taken away)"),
    ("p98", "pNN: the NN-th percentile of the one-way latency (due time -> receive timestamp) of the target's packets"),
    ("Eq. (1)", "Eq. (1): the PSPAT paper's delay bound, the scheduler's T-WFI + Δ_A + (2 + k)·Δ_C"),
];

/// The legend: one line per term of [`LEGEND`] that `text` uses.
fn legend(text: &str) -> String {
    let lines: Vec<&str> = LEGEND
        .iter()
        .filter(|(term, _)| text.contains(term))
        .map(|(_, line)| *line)
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nlegend\n");
    for l in lines {
        out.push_str("  ");
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Writes `throughput.csv`, `latency.csv` (CDF points) and `sweep.csv` into
/// `dir`.
pub fn write_csv(r: &Report, dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let write = |name: &str, body: String| {
        let path = dir.join(name);
        std::fs::write(&path, body).map_err(|source| ReportError::Io { path, source })
    };
    let mut s = String::from("mode,clients,tx_pps,delivered_pps,fast_pps,accounting_ok\n");
    for p in &r.throughput {
        let _ = writeln!(
            s,
            "{},{},{:.0},{:.0},{:.0},{}",
            p.mode.name(),
            p.clients,
            p.tx_pps,
            p.delivered_pps,
            p.fast_pps,
            p.accounting_ok
        );
    }
    write("throughput.csv", s)?;
    let mut s = String::from("run,mode,latency_us,fraction\n");
    for (run, v) in [("alone", &r.light), ("loaded", &r.loaded)] {
        for t in v.iter() {
            if let Some(tg) = &t.target {
                for (x, q) in &tg.cdf {
                    let _ = writeln!(s, "{run},{},{x:.3},{q:.4}", t.mode.name());
                }
            }
        }
    }
    write("latency.csv", s)?;
    let mut s = String::from(
        "mode,rate_pps,tx_pps,delivered_pps,p50_us,p98_us,p99_us,target_rate_ratio,overloaded\n",
    );
    for p in &r.sweep {
        let _ = writeln!(
            s,
            "{},{},{:.0},{:.0},{:.3},{:.3},{:.3},{:.4},{}",
            p.mode.name(),
            p.rate_pps,
            p.tx_pps,
            p.delivered_pps,
            p.target.p50,
            p.target.p98,
            p.target.p99,
            p.target_rate_ratio,
            p.overloaded
        );
    }
    write("sweep.csv", s)
}

/// Writes the charts `<prefix>-throughput.svg`, `<prefix>-latency.svg` and
/// `<prefix>-sweep.svg` for the experiments that ran; returns the paths.
pub fn write_charts(r: &Report, prefix: &str) -> Result<Vec<String>, ReportError> {
    let mut written = Vec::new();
    if !r.throughput.is_empty() {
        let series: Vec<Series> = r
            .modes
            .iter()
            .map(|&m| Series {
                name: m.name().into(),
                points: r
                    .throughput
                    .iter()
                    .filter(|p| p.mode == m)
                    .map(|p| (p.clients as f64, p.delivered_pps / 1e6))
                    .collect(),
                dashed: false,
                color: color(m),
            })
            .collect();
        let path = format!("{prefix}-throughput.svg");
        write_svg(
            Path::new(&path),
            &ChartSpec {
                title: "UDP throughput, 60-byte packets (PSPAT paper Fig. 6)".into(),
                x_label: "clients".into(),
                y_label: "Mpps across the link".into(),
                log_x: false,
                log_y: false,
            },
            &series,
        )?;
        written.push(path);
    }
    if !r.light.is_empty() {
        let mut series = Vec::new();
        for (label, runs, dashed) in [("alone", &r.light, true), ("loaded", &r.loaded, false)] {
            for t in runs.iter() {
                if let Some(tg) = &t.target {
                    series.push(Series {
                        name: format!("{} {label}", t.mode.name()),
                        points: tg.cdf.iter().map(|&(x, q)| (x.max(0.01), q)).collect(),
                        dashed,
                        color: color(t.mode),
                    });
                }
            }
        }
        let path = format!("{prefix}-latency.svg");
        write_svg(
            Path::new(&path),
            &ChartSpec {
                title: format!(
                    "target one-way latency CDF, link {} pps (Figs. 8, 10)",
                    r.link_pps
                ),
                x_label: "latency [µs]".into(),
                y_label: "fraction".into(),
                log_x: true,
                log_y: false,
            },
            &series,
        )?;
        written.push(path);
    }
    if !r.sweep.is_empty() {
        let series: Vec<Series> = SWEPT
            .iter()
            .filter(|m| r.modes.contains(m))
            .map(|&m| Series {
                name: format!("{} p98", m.name()),
                points: r
                    .sweep
                    .iter()
                    .filter(|p| p.mode == m)
                    .map(|p| (p.rate_pps as f64, p.target.p98.max(0.01)))
                    .collect(),
                dashed: false,
                color: color(m),
            })
            .collect();
        let path = format!("{prefix}-sweep.svg");
        write_svg(
            Path::new(&path),
            &ChartSpec {
                title: "target p98 latency versus link rate (PSPAT paper Fig. 9)".into(),
                x_label: "link rate [pps]".into(),
                y_label: "p98 latency [µs]".into(),
                log_x: true,
                log_y: true,
            },
            &series,
        )?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::udp_bench::experiments::ThroughputPoint;
    use crate::udp_bench::{ReceivePath, Targets, Transport};

    /// A report of the throughput experiment alone.
    fn throughput_only() -> Report {
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
        Report {
            cpus: 2,
            sched: "drr".into(),
            transport: Transport::Udp,
            seconds: 0.3,
            cooldown_ms: 0,
            rt_runtime_us: None,
            receive: ReceivePath::Sockets,
            qdisc_bypass: false,
            idle_spin: false,
            modes: Mode::ALL.to_vec(),
            ratios: Vec::new(),
            throughput: Mode::ALL.iter().map(|&m| tp(m, 300_000.0)).collect(),
            light: Vec::new(),
            light_rounds: Vec::new(),
            loaded: Vec::new(),
            transports: Vec::new(),
            link_pps: 200_000,
            sweep: Vec::new(),
            bound: None,
            bound_dispatch: None,
            bound_observed: None,
            bound_dispatch_observed: None,
            targets: Targets {
                fairway_over_none_min: Some(1.0),
                accounting_ok: true,
                ..Targets::default()
            },
        }
    }

    #[test]
    fn only_the_experiments_that_ran_have_result_lines() {
        let text = text(&throughput_only());
        assert!(
            text.contains("fairway/none throughput, min over clients: 1.00"),
            "{text}"
        );
        for absent in [
            "overload threshold",
            "not reached",
            "added median latency",
            "under load",
        ] {
            assert!(!text.contains(absent), "{absent:?} printed:\n{text}");
        }
    }

    #[test]
    fn the_legend_explains_the_terms_the_report_uses() {
        let text = text(&throughput_only());
        let legend = text.split("\nlegend\n").nth(1).expect("a legend");
        assert!(
            legend.contains("fw-disp, disp: fairway-dispatch"),
            "{legend}"
        );
        // Terms of experiments that did not run are not explained.
        assert!(
            !legend.contains("Δ_A") && !legend.contains("pNN"),
            "{legend}"
        );
        let with_latency =
            super::legend("p98 ... Δ_A + ... Δ_C ... Eq. (1) ... p90 of 50 ms slices");
        for term in ["Δ_A:", "Δ_C:", "pNN:", "Eq. (1):"] {
            assert!(with_latency.contains(term), "{term}: {with_latency}");
        }
    }
}
