//! The three experiments of the PSPAT paper §5.4–§5.5 and the Eq. (1) check, with
//! the three configurations measured back to back for each point (the
//! machine is noisy; ratios are taken within one run).

use super::bound::{self, BoundCheck, BoundInput};
use super::config::BenchConfig;
use super::error::{BenchError, TrialError};
use super::result::{Percentiles, TrialResult};
use super::spec::{FlowSpec, Mode, ReceivePath, Transport, TrialSpec};
use super::trial::run_trial;
use fairway_runtime::net::{interrupted, IdleSpinners, FRAME_LEN};
use serde::Serialize;

/// One throughput point: the median of the repeats.
#[derive(Clone, Debug, Serialize)]
pub struct ThroughputPoint {
    /// Configuration.
    pub mode: Mode,
    /// Clients.
    pub clients: usize,
    /// Median packets/s the kernel accepted from the clients.
    pub tx_pps: f64,
    /// Median packets/s that crossed the link (the throughput).
    pub delivered_pps: f64,
    /// delivered pps of every repeat, in run order.
    pub runs: Vec<f64>,
    /// Each repeat's rate in 50 ms slices of its window, packets/s.
    pub slice_pps: Vec<Vec<f64>>,
    /// Packets per `sendmmsg` call (all repeats together).
    pub packets_per_call: f64,
    /// The rate in the machine's fast regime: the 90th percentile of the
    /// 50 ms slices of every repeat ([`FAST_QUANTILE`]).
    pub fast_pps: f64,
    /// Accounting held in every repeat.
    pub accounting_ok: bool,
}

/// Which quantile of a configuration's 50 ms rate slices (all repeats
/// pooled) is its fast-regime rate ([`ThroughputPoint::fast_pps`]).
///
/// On the shared 2-vCPU VM the packet path's speed switches between a few
/// discrete levels about 1.4× apart on time scales of 0.1–1 s, in every
/// configuration alike (one client too, and with CPU 0 held by a
/// real-time thread), while a register-only loop keeps its speed: other
/// work on the host only ever slows a slice down. A high quantile of the
/// slices is the rate in the fastest level each configuration visited —
/// the analogue of the minimum time of repeated micro-benchmark runs —
/// and its ratios vary far less from run to run than per-repeat ratios,
/// which pair trials that may have run in different levels.
pub const FAST_QUANTILE: f64 = 0.9;

/// The [`FAST_QUANTILE`] of `slices` (nearest rank), 0 if none.
pub fn fast_rate(slices: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = slices.collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((FAST_QUANTILE * v.len() as f64) as usize).min(v.len() - 1);
    v[i]
}

/// A throughput ratio of two configurations at one client count, taken
/// per repeat (the two trials of one repeat run back to back, seconds
/// apart, so a slow drift of the machine's speed cancels out).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PairedRatio {
    /// Clients.
    pub clients: usize,
    /// The configuration on top.
    pub num: Mode,
    /// The configuration below.
    pub den: Mode,
    /// Median of the per-repeat ratios.
    pub median: f64,
    /// Smallest per-repeat ratio.
    pub min: f64,
    /// Largest per-repeat ratio.
    pub max: f64,
    /// Every per-repeat ratio, in run order.
    pub runs: Vec<f64>,
    /// The ratio of the two fast-regime rates ([`ThroughputPoint::fast_pps`]).
    pub fast: f64,
}

/// One transport-comparison point: the median of the repeats.
#[derive(Clone, Debug, Serialize)]
pub struct TransportPoint {
    /// How the clients sent.
    pub transport: Transport,
    /// Configuration.
    pub mode: Mode,
    /// Clients.
    pub clients: usize,
    /// Median packets/s across the link.
    pub delivered_pps: f64,
    /// Accounting held in every repeat.
    pub accounting_ok: bool,
}

/// One sweep point.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    /// Configuration.
    pub mode: Mode,
    /// Configured link rate, packets/s.
    pub rate_pps: u64,
    /// Aggregate packets/s sent.
    pub tx_pps: f64,
    /// Aggregate packets/s that got past the qdisc and the veth.
    pub delivered_pps: f64,
    /// The target's latency (the repeat with the median p98).
    pub target: Percentiles,
    /// The target's p98 in every repeat, µs, in run order.
    pub p98_runs: Vec<f64>,
    /// The target's received rate / offered rate (lowest of the repeats).
    pub target_rate_ratio: f64,
    /// The configuration delivered less than 90 % of the link rate
    /// (median of the repeats): overloaded.
    pub overloaded: bool,
    /// Accounting held.
    pub accounting_ok: bool,
}

/// The targets as ratios from this run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Targets {
    /// min over client counts of fairway / none throughput, each the median
    /// of the per-repeat ratios (target ≥ 0.9).
    pub fairway_over_none_min: Option<f64>,
    /// fairway / tc throughput at the largest client count, median of the
    /// per-repeat ratios (target ≥ 1.3).
    pub fairway_over_tc_at_max_clients: Option<f64>,
    /// The smallest and largest per-repeat fairway / tc ratio there.
    pub fairway_over_tc_range: Option<(f64, f64)>,
    /// fairway / tc of the fast-regime rates at the largest client count.
    pub fairway_over_tc_fast: Option<f64>,
    /// min over client counts of fairway / none of the fast-regime rates.
    pub fairway_over_none_fast_min: Option<f64>,
    /// The same two ratios for `fairway-dispatch`.
    pub dispatch_over_none_min: Option<f64>,
    /// fairway-dispatch / tc at the largest client count.
    pub dispatch_over_tc_at_max_clients: Option<f64>,
    /// fairway's light-load median − none's, µs (target ≤ 2): the median
    /// over the rounds of the target-alone trials of the difference within
    /// each round.
    pub added_median_us: Option<f64>,
    /// The smallest and largest per-round difference.
    pub added_median_range: Option<(f64, f64)>,
    /// The part of `added_median_us` spent before the `sendmmsg` call
    /// (scan, grant and poll of the grant index): the same median of
    /// per-round differences of the due → `sendmmsg` call medians.
    pub added_call_median_us: Option<f64>,
    /// fairway-dispatch's light-load median − none's, µs (as
    /// `added_median_us`).
    pub dispatch_added_median_us: Option<f64>,
    /// The smallest and largest per-round difference.
    pub dispatch_added_median_range: Option<(f64, f64)>,
    /// tc's light-load median − none's, µs (the PSPAT paper: 0.3..0.6).
    pub tc_added_median_us: Option<f64>,
    /// The smallest and largest per-round difference.
    pub tc_added_median_range: Option<(f64, f64)>,
    /// The target's received/offered rate under load in fairway (target
    /// 1 ± 0.02).
    pub fairway_target_rate_ratio: Option<f64>,
    /// The same in fairway-dispatch.
    pub dispatch_target_rate_ratio: Option<f64>,
    /// The same in tc (reported).
    pub tc_target_rate_ratio: Option<f64>,
    /// The same in none (reported).
    pub none_target_rate_ratio: Option<f64>,
    /// The lowest swept rate at which tc is overloaded.
    pub tc_overload_pps: Option<u64>,
    /// The lowest swept rate at which fairway is overloaded.
    pub fairway_overload_pps: Option<u64>,
    /// The lowest swept rate at which fairway-dispatch is overloaded.
    pub dispatch_overload_pps: Option<u64>,
    /// At every swept rate ≥ tc's overload threshold, fairway's p98 < tc's.
    pub fairway_p98_below_tc_above_threshold: Option<bool>,
    /// The same for fairway-dispatch.
    pub dispatch_p98_below_tc_above_threshold: Option<bool>,
    /// Every trial accounted for every packet.
    pub accounting_ok: bool,
}

/// Everything measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// CPUs available.
    pub cpus: usize,
    /// The scheduler in the arbiter.
    pub sched: String,
    /// How clients sent.
    pub transport: Transport,
    /// Seconds per trial.
    pub seconds: f64,
    /// Pause between trials, ms.
    pub cooldown_ms: u64,
    /// `sched_rt_runtime_us` during the run (`-1`: no throttling).
    pub rt_runtime_us: Option<i64>,
    /// What became of the unread flows' packets.
    pub receive: ReceivePath,
    /// Raw frames skipped the qdisc in every configuration but `tc`.
    pub qdisc_bypass: bool,
    /// Idle CPUs spun during the latency and sweep experiments.
    pub idle_spin: bool,
    /// The configurations measured.
    pub modes: Vec<Mode>,
    /// Throughput points.
    pub throughput: Vec<ThroughputPoint>,
    /// Per-repeat throughput ratios: fairway and fairway-dispatch over
    /// none and over tc, at every client count.
    pub ratios: Vec<PairedRatio>,
    /// Target alone, one trial per configuration (Fig. 8): of its rounds,
    /// the one with the median p50.
    pub light: Vec<TrialResult>,
    /// Target alone, every round: per configuration the p50s.
    pub light_rounds: Vec<LightRounds>,
    /// Target with interferers at `link_pps` (Fig. 10).
    pub loaded: Vec<TrialResult>,
    /// Link rate of the loaded runs.
    pub link_pps: u64,
    /// p98 versus rate (Fig. 9).
    pub sweep: Vec<SweepPoint>,
    /// Throughput per transport.
    pub transports: Vec<TransportPoint>,
    /// Eq. (1) on fairway's loaded run.
    pub bound: Option<BoundCheck>,
    /// Eq. (1) on fairway-dispatch's loaded run.
    pub bound_dispatch: Option<BoundCheck>,
    /// Eq. (1) on fairway's loaded run with the Δs that run actually had.
    pub bound_observed: Option<ObservedBound>,
    /// The same for fairway-dispatch.
    pub bound_dispatch_observed: Option<ObservedBound>,
    /// The targets as ratios.
    pub targets: Targets,
}

/// The target-alone trials of one configuration, round by round.
#[derive(Clone, Debug, Serialize)]
pub struct LightRounds {
    /// The configuration.
    pub mode: Mode,
    /// The target's one-way delay p50 in each round, µs, in run order.
    pub p50: Vec<f64>,
    /// Its due → `sendmmsg` call p50 in each round, µs (0 where not
    /// recorded: raw-frame transports).
    pub call_p50: Vec<f64>,
}

/// `Some((median, range))` as two options.
fn split(x: Option<(f64, (f64, f64))>) -> (Option<f64>, Option<(f64, f64)>) {
    (x.map(|(m, _)| m), x.map(|(_, r)| r))
}

/// The median and the range of the per-round differences `a[i] − b[i]`.
fn paired_differences(a: &[f64], b: &[f64]) -> Option<(f64, (f64, f64))> {
    let mut d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    if d.is_empty() {
        return None;
    }
    let m = median(&mut d);
    Some((m, (d[0], d[d.len() - 1])))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

/// The Eq. (1) check for a fairway trial with a watched target (flow 0),
/// using the bound of `kind` (pass the arbiter's own scheduler; a test
/// passes DRR's bound for a FIFO run to show the check failing).
pub fn bound_check(
    trial: &TrialResult,
    kind: fairway_core::SchedKind,
    delta_a_ns: u64,
    delta_c_ns: u64,
    link_pps: u64,
) -> Option<BoundCheck> {
    let t = trial.target.as_ref()?;
    let input = BoundInput {
        kind,
        weights: trial.flows.iter().map(|f| f.weight).collect(),
        target: t.flow,
        max_len: FRAME_LEN,
        link_bps: link_pps as f64 * FRAME_LEN as f64 * 8.0,
        delta_a_ns,
        delta_c_ns,
    };
    bound::check(&input, t.sched_delay_hist.as_ref()?)
}

/// Eq. (1) with the Δs a run actually had (the PSPAT paper §4: "for the arbiter
/// there is little we can do other than accept an increase of the T-WFI
/// ... due to a larger Δ_A"; a client late for its Δ_C likewise).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ObservedBound {
    /// Δ_A as configured plus the arbiter's longest gap between two
    /// rounds, µs.
    pub delta_a_us: f64,
    /// Δ_C as configured plus the target thread's longest stall, µs.
    pub delta_c_us: f64,
    /// The check with those.
    pub check: BoundCheck,
}

/// [`bound_check`] with Δ_A + the arbiter's longest scan gap and Δ_C +
/// the target thread's longest stall ([`TrialResult::arbiter_scan_gap_ns`],
/// [`super::result::TargetResult::stall_ns`]): whether the delays stay
/// within Eq. (1) once the bound accounts for the time the arbiter's or
/// the target's CPU was taken from it (a higher-priority thread, the host
/// of a virtual machine). `None` where [`bound_check`] is, or when the
/// trial had no arbiter.
pub fn observed_bound_check(
    trial: &TrialResult,
    kind: fairway_core::SchedKind,
    delta_a_ns: u64,
    delta_c_ns: u64,
    link_pps: u64,
) -> Option<ObservedBound> {
    let gap_a = trial.arbiter_scan_gap_ns?;
    let stall_c = trial.target.as_ref()?.stall_ns;
    let (a, c) = (
        delta_a_ns.saturating_add(gap_a),
        delta_c_ns.saturating_add(stall_c),
    );
    Some(ObservedBound {
        delta_a_us: a as f64 / 1e3,
        delta_c_us: c as f64 / 1e3,
        check: bound_check(trial, kind, a, c, link_pps)?,
    })
}

/// Runs the selected experiments; `progress(done, total, label)` after
/// each trial. Stops early (with an error) on Ctrl-C.
pub fn run(
    cfg: &BenchConfig,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<Report, BenchError> {
    cfg.validate()?;
    let mut trials = Trials {
        cfg,
        total: cfg.trials(),
        done: 0,
        progress,
        all_accounted: true,
    };
    let mut report = empty_report(cfg);
    if cfg.experiments.throughput {
        throughput(&mut trials, &mut report)?;
    }
    // The latency experiments measure delays of a client and a receiver
    // that sleep; without the spinners a halted vCPU's wake-up would be
    // counted. Not during throughput trials: a spinner shares its core
    // with a busy hyperthread sibling.
    let spinners = if cfg.idle_spin && (cfg.experiments.latency || cfg.experiments.sweep) {
        let cpus: Vec<usize> = (0..report.cpus).collect();
        Some(IdleSpinners::start(&cpus).map_err(BenchError::IdleSpinners)?)
    } else {
        None
    };
    if cfg.experiments.latency {
        latency(&mut trials, &mut report)?;
    }
    if cfg.experiments.sweep {
        sweep(&mut trials, &mut report)?;
    }
    drop(spinners);
    if cfg.experiments.transports {
        transports(&mut trials, &mut report)?;
    }
    report.targets.accounting_ok = trials.all_accounted;
    Ok(report)
}

/// Runs the trials of one run in turn, with the pause between them, and
/// counts them for the progress callback.
struct Trials<'a> {
    cfg: &'a BenchConfig,
    total: usize,
    done: usize,
    progress: &'a mut dyn FnMut(usize, usize, &str),
    /// Every trial so far accounted for every packet.
    all_accounted: bool,
}

impl Trials<'_> {
    /// Runs one trial (`label` for the progress callback).
    fn run(&mut self, label: String, spec: TrialSpec) -> Result<TrialResult, TrialError> {
        if interrupted() {
            return Err(TrialError::Interrupted);
        }
        if self.done > 0 {
            pause(self.cfg.cooldown_ms)?;
        }
        let r = run_trial(&spec)?;
        // A trial cut short by a signal measured nothing worth reporting.
        if interrupted() {
            return Err(TrialError::Interrupted);
        }
        self.done += 1;
        (self.progress)(self.done, self.total, &label);
        self.all_accounted &= r.accounting_holds();
        Ok(r)
    }
}

/// The pause between trials, `ms` long, cut short by SIGINT or SIGTERM.
fn pause(ms: u64) -> Result<(), TrialError> {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    loop {
        if interrupted() {
            return Err(TrialError::Interrupted);
        }
        let left = end.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(20)));
    }
}

/// The report before any experiment ran.
fn empty_report(cfg: &BenchConfig) -> Report {
    Report {
        cpus: fairway_runtime::affinity::available_cpus(),
        sched: cfg.sched.to_string(),
        transport: cfg.transport,
        seconds: cfg.seconds,
        cooldown_ms: cfg.cooldown_ms,
        rt_runtime_us: fairway_runtime::rt_throttle_runtime_us(),
        receive: cfg.receive,
        qdisc_bypass: cfg.qdisc_bypass,
        idle_spin: cfg.idle_spin,
        modes: cfg.modes.clone(),
        throughput: Vec::new(),
        ratios: Vec::new(),
        light: Vec::new(),
        light_rounds: Vec::new(),
        loaded: Vec::new(),
        link_pps: cfg.link_pps,
        sweep: Vec::new(),
        transports: Vec::new(),
        bound: None,
        bound_dispatch: None,
        bound_observed: None,
        bound_dispatch_observed: None,
        targets: Targets {
            accounting_ok: true,
            ..Targets::default()
        },
    }
}

/// `n` flat-out clients of weight 1, none watched.
fn flat_out_flows(n: usize) -> Vec<FlowSpec> {
    vec![
        FlowSpec {
            weight: 1,
            pace_pps: None,
            watched: false
        };
        n
    ]
}

/// Throughput against the number of clients (Fig. 6): every configuration
/// once per repeat, the paired ratios and the targets.
fn throughput(t: &mut Trials, report: &mut Report) -> Result<(), TrialError> {
    let cfg = t.cfg;
    let modes = &cfg.modes;
    for &n in &cfg.clients {
        let mut runs: Vec<Vec<TrialResult>> = vec![Vec::new(); modes.len()];
        for _ in 0..cfg.repeat {
            for (m, &mode) in modes.iter().enumerate() {
                let spec = cfg.spec(mode, flat_out_flows(n), None, cfg.delta_throughput_ns);
                runs[m].push(t.run(format!("throughput {n} clients {}", mode.name()), spec)?);
            }
        }
        for (m, &mode) in modes.iter().enumerate() {
            report.throughput.push(throughput_point(mode, n, &runs[m]));
        }
        report.ratios.extend(paired_ratios(n, modes, &runs));
    }
    throughput_targets(cfg, report);
    Ok(())
}

/// One configuration's throughput at `n` clients from its repeats.
fn throughput_point(mode: Mode, n: usize, runs: &[TrialResult]) -> ThroughputPoint {
    let mut tx: Vec<f64> = runs.iter().map(|r| r.tx_pps).collect();
    let mut dl: Vec<f64> = runs.iter().map(|r| r.delivered_pps).collect();
    let all = dl.clone();
    ThroughputPoint {
        mode,
        clients: n,
        tx_pps: median(&mut tx),
        delivered_pps: median(&mut dl),
        runs: all,
        slice_pps: runs.iter().map(|r| r.slice_pps.clone()).collect(),
        fast_pps: fast_rate(runs.iter().flat_map(|r| r.slice_pps.iter().copied())),
        packets_per_call: {
            let f = runs.iter().flat_map(|r| &r.flows);
            let (sent, calls) = f.fold((0u64, 0u64), |(s, c), f| (s + f.sent, c + f.calls));
            sent as f64 / calls.max(1) as f64
        },
        accounting_ok: runs.iter().all(TrialResult::accounting_holds),
    }
}

/// fairway and fairway-dispatch over none and over tc at `n` clients, per
/// repeat (`runs[m]`: the repeats of `modes[m]`).
fn paired_ratios(n: usize, modes: &[Mode], runs: &[Vec<TrialResult>]) -> Vec<PairedRatio> {
    let pairs = [
        (Mode::Fairway, Mode::None),
        (Mode::Fairway, Mode::Tc),
        (Mode::FairwayDispatch, Mode::None),
        (Mode::FairwayDispatch, Mode::Tc),
    ];
    let at = |x: Mode| modes.iter().position(|&m| m == x);
    let fast = |x: usize| fast_rate(runs[x].iter().flat_map(|r| r.slice_pps.iter().copied()));
    let mut ratios = Vec::new();
    for (num, den) in pairs {
        let (Some(a), Some(b)) = (at(num), at(den)) else {
            continue;
        };
        let per: Vec<f64> = runs[a]
            .iter()
            .zip(&runs[b])
            .map(|(x, y)| x.delivered_pps / y.delivered_pps.max(1.0))
            .collect();
        let mut sorted = per.clone();
        let med = median(&mut sorted);
        ratios.push(PairedRatio {
            clients: n,
            num,
            den,
            median: med,
            min: sorted.first().copied().unwrap_or(0.0),
            max: sorted.last().copied().unwrap_or(0.0),
            runs: per,
            fast: fast(a) / fast(b).max(1.0),
        });
    }
    ratios
}

/// The throughput targets from the paired ratios.
fn throughput_targets(cfg: &BenchConfig, report: &mut Report) {
    let ratios = &report.ratios;
    let ratio = |num: Mode, den: Mode, n: usize| {
        ratios
            .iter()
            .find(|r| r.num == num && r.den == den && r.clients == n)
    };
    let over_none_min = |m: Mode| {
        cfg.clients
            .iter()
            .filter_map(|&n| Some(ratio(m, Mode::None, n)?.median))
            .min_by(|a, b| a.total_cmp(b))
    };
    let nmax = cfg.clients.iter().copied().max().unwrap_or(1);
    let over_tc = |m: Mode| ratio(m, Mode::Tc, nmax).map(|r| r.median);
    let t = &mut report.targets;
    t.fairway_over_none_min = over_none_min(Mode::Fairway);
    t.fairway_over_tc_at_max_clients = over_tc(Mode::Fairway);
    t.fairway_over_tc_range = ratio(Mode::Fairway, Mode::Tc, nmax).map(|r| (r.min, r.max));
    t.fairway_over_tc_fast = ratio(Mode::Fairway, Mode::Tc, nmax).map(|r| r.fast);
    t.fairway_over_none_fast_min = cfg
        .clients
        .iter()
        .filter_map(|&n| Some(ratio(Mode::Fairway, Mode::None, n)?.fast))
        .min_by(|a, b| a.total_cmp(b));
    t.dispatch_over_none_min = over_none_min(Mode::FairwayDispatch);
    t.dispatch_over_tc_at_max_clients = over_tc(Mode::FairwayDispatch);
}

/// The target's latency alone (Fig. 8) and under load (Fig. 10), and the
/// Eq. (1) checks on the loaded runs.
fn latency(t: &mut Trials, report: &mut Report) -> Result<(), TrialError> {
    let cfg = t.cfg;
    let d = cfg.delta_latency_ns;
    latency_alone(t, report)?;
    for &mode in &cfg.modes {
        let spec = cfg.spec(
            mode,
            cfg.target_flows(cfg.interferers),
            Some(cfg.link_pps),
            d,
        );
        report
            .loaded
            .push(t.run(format!("latency loaded {}", mode.name()), spec)?);
    }
    latency_targets(report);
    let loaded = |m: Mode| report.loaded.iter().find(|r| r.mode == m);
    let kind = cfg.sched.kind;
    if let Some(f) = loaded(Mode::Fairway) {
        report.bound = bound_check(f, kind, d, d, cfg.link_pps);
        report.bound_observed = observed_bound_check(f, kind, d, d, cfg.link_pps);
    }
    if let Some(f) = loaded(Mode::FairwayDispatch) {
        report.bound_dispatch = bound_check(f, kind, d, d, cfg.link_pps);
        report.bound_dispatch_observed = observed_bound_check(f, kind, d, d, cfg.link_pps);
    }
    Ok(())
}

/// The target alone: every configuration once per round, so the machine's
/// drift between speed regimes (the kernel's send path alone moves its
/// median by microseconds from one trial to the next) shows in the spread
/// of the rounds and cancels in the per-round differences.
fn latency_alone(t: &mut Trials, report: &mut Report) -> Result<(), TrialError> {
    let cfg = t.cfg;
    let mut rounds: Vec<Vec<TrialResult>> = vec![Vec::new(); cfg.modes.len()];
    for _ in 0..cfg.latency_repeat {
        for (m, &mode) in cfg.modes.iter().enumerate() {
            let spec = cfg.spec(
                mode,
                cfg.target_flows(0),
                Some(cfg.link_pps),
                cfg.delta_latency_ns,
            );
            rounds[m].push(t.run(format!("latency alone {}", mode.name()), spec)?);
        }
    }
    let p50 = |r: &TrialResult| r.target.as_ref().map_or(0.0, |t| t.latency.p50);
    for (m, runs) in rounds.into_iter().enumerate() {
        report.light_rounds.push(LightRounds {
            mode: cfg.modes[m],
            p50: runs.iter().map(p50).collect(),
            call_p50: runs
                .iter()
                .map(|r| r.target.as_ref().map_or(0.0, |t| t.call_delay.p50))
                .collect(),
        });
        let mut by_p50: Vec<TrialResult> = runs;
        by_p50.sort_by(|a, b| p50(a).total_cmp(&p50(b)));
        let mid = by_p50.len() / 2;
        report.light.push(by_p50.swap_remove(mid));
    }
    Ok(())
}

/// The latency targets: the added medians and the target's rate ratios.
fn latency_targets(report: &mut Report) {
    let rounds = &report.light_rounds;
    let round = |m: Mode| rounds.iter().find(|l| l.mode == m);
    let added = |m: Mode| {
        round(m)
            .zip(round(Mode::None))
            .and_then(|(a, n)| paired_differences(&a.p50, &n.p50))
    };
    let loaded = &report.loaded;
    let ratio = |m: Mode| {
        loaded
            .iter()
            .find(|r| r.mode == m)
            .and_then(|r| r.target.as_ref())
            .map(|t| t.rate_ratio)
    };
    let t = &mut report.targets;
    (t.added_median_us, t.added_median_range) = split(added(Mode::Fairway));
    (t.dispatch_added_median_us, t.dispatch_added_median_range) =
        split(added(Mode::FairwayDispatch));
    (t.tc_added_median_us, t.tc_added_median_range) = split(added(Mode::Tc));
    t.added_call_median_us = round(Mode::Fairway)
        .zip(round(Mode::None))
        .and_then(|(a, n)| paired_differences(&a.call_p50, &n.call_p50))
        .map(|(m, _)| m);
    t.fairway_target_rate_ratio = ratio(Mode::Fairway);
    t.dispatch_target_rate_ratio = ratio(Mode::FairwayDispatch);
    t.tc_target_rate_ratio = ratio(Mode::Tc);
    t.none_target_rate_ratio = ratio(Mode::None);
}

/// The target's p98 against the link rate (Fig. 9) and each swept
/// configuration's overload threshold.
fn sweep(t: &mut Trials, report: &mut Report) -> Result<(), TrialError> {
    let cfg = t.cfg;
    let d = cfg.delta_latency_ns;
    let swept = cfg.swept();
    for &rate in &cfg.rates {
        // runs[mode]: the repeats, each round measuring every mode.
        let mut runs: Vec<Vec<TrialResult>> = vec![Vec::new(); swept.len()];
        for _ in 0..cfg.sweep_repeat {
            for (m, &mode) in swept.iter().enumerate() {
                let spec = cfg.spec(mode, cfg.target_flows(cfg.interferers), Some(rate), d);
                runs[m].push(t.run(format!("sweep {rate} pps {}", mode.name()), spec)?);
            }
        }
        for (m, &mode) in swept.iter().enumerate() {
            report.sweep.push(sweep_point(mode, rate, &runs[m]));
        }
    }
    sweep_targets(cfg, report);
    Ok(())
}

/// One configuration's sweep point at `rate` from its repeats.
fn sweep_point(mode: Mode, rate: u64, v: &[TrialResult]) -> SweepPoint {
    let p98 = |r: &TrialResult| r.target.as_ref().map_or(0.0, |t| t.latency.p98);
    let p98_runs: Vec<f64> = v.iter().map(p98).collect();
    // The repeat whose p98 is the median (its other percentiles are shown
    // with it).
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| p98(&v[a]).total_cmp(&p98(&v[b])));
    let mid = &v[order[order.len() / 2]];
    let mut tx: Vec<f64> = v.iter().map(|r| r.tx_pps).collect();
    let mut dl: Vec<f64> = v.iter().map(|r| r.delivered_pps).collect();
    let delivered = median(&mut dl);
    let rate_ratio = v
        .iter()
        .map(|r| r.target.as_ref().map_or(0.0, |t| t.rate_ratio))
        .fold(f64::INFINITY, f64::min);
    SweepPoint {
        mode,
        rate_pps: rate,
        tx_pps: median(&mut tx),
        delivered_pps: delivered,
        target: mid.target.clone().unwrap_or_default().latency,
        p98_runs,
        target_rate_ratio: rate_ratio,
        overloaded: delivered < 0.9 * rate as f64,
        accounting_ok: v.iter().all(TrialResult::accounting_holds),
    }
}

/// The overload thresholds and whether fairway's p98 stays below tc's
/// from tc's threshold on.
fn sweep_targets(cfg: &BenchConfig, report: &mut Report) {
    let sweep = &report.sweep;
    let threshold = |m: Mode| {
        sweep
            .iter()
            .filter(|p| p.mode == m && p.overloaded)
            .map(|p| p.rate_pps)
            .min()
    };
    let tc_overload = threshold(Mode::Tc);
    let below_tc = |m: Mode| {
        tc_overload.map(|th| {
            cfg.rates.iter().filter(|&&r| r >= th).all(|&r| {
                let p = |m: Mode| {
                    sweep
                        .iter()
                        .find(|p| p.mode == m && p.rate_pps == r)
                        .map(|p| p.target.p98)
                };
                matches!((p(m), p(Mode::Tc)), (Some(f), Some(t)) if f < t)
            })
        })
    };
    let t = &mut report.targets;
    t.tc_overload_pps = tc_overload;
    t.fairway_overload_pps = threshold(Mode::Fairway);
    t.dispatch_overload_pps = threshold(Mode::FairwayDispatch);
    t.fairway_p98_below_tc_above_threshold = below_tc(Mode::Fairway);
    t.dispatch_p98_below_tc_above_threshold = below_tc(Mode::FairwayDispatch);
}

/// Throughput of every transport in every configuration, interleaved.
fn transports(t: &mut Trials, report: &mut Report) -> Result<(), TrialError> {
    let cfg = t.cfg;
    for &n in &cfg.clients {
        // runs[mode][transport]
        let mut runs: Vec<Vec<Vec<TrialResult>>> =
            vec![vec![Vec::new(); Transport::ALL.len()]; cfg.modes.len()];
        for _ in 0..cfg.repeat {
            for (m, &mode) in cfg.modes.iter().enumerate() {
                for (k, &transport) in Transport::ALL.iter().enumerate() {
                    let mut spec = cfg.spec(mode, flat_out_flows(n), None, cfg.delta_throughput_ns);
                    spec.transport = transport;
                    let label = format!(
                        "transports {n} clients {} {}",
                        mode.name(),
                        transport.name()
                    );
                    runs[m][k].push(t.run(label, spec)?);
                }
            }
        }
        for (m, &mode) in cfg.modes.iter().enumerate() {
            for (k, &transport) in Transport::ALL.iter().enumerate() {
                let mut dl: Vec<f64> = runs[m][k].iter().map(|r| r.delivered_pps).collect();
                report.transports.push(TransportPoint {
                    transport,
                    mode,
                    clients: n,
                    delivered_pps: median(&mut dl),
                    accounting_ok: runs[m][k].iter().all(TrialResult::accounting_holds),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{fast_rate, paired_differences};

    #[test]
    fn the_added_median_is_the_median_of_per_round_differences() {
        // A slow round (every configuration 3 µs slower) moves both
        // configurations alike and cancels in its difference.
        let fairway = [7.0, 4.2, 8.1, 4.0, 4.3];
        let none = [5.5, 3.0, 6.8, 2.4, 3.1];
        let (m, (lo, hi)) = paired_differences(&fairway, &none).unwrap();
        assert!((m - 1.3).abs() < 1e-9, "{m}");
        assert!(
            (lo - 1.2).abs() < 1e-9 && (hi - 1.6).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert!(paired_differences(&[], &[]).is_none());
    }

    #[test]
    fn the_fast_rate_is_the_nearest_rank_90th_percentile() {
        let v = |n: u32| (1..=n).rev().map(f64::from);
        assert_eq!(fast_rate(v(10)), 10.0);
        assert_eq!(fast_rate(v(20)), 19.0);
        assert_eq!(fast_rate(v(98)), 89.0);
        assert_eq!(fast_rate(std::iter::empty()), 0.0);
        // One slow slice (a stall) among ten does not move it.
        let slow_run = std::iter::repeat_n(0.5, 9).chain([0.1]);
        assert_eq!(fast_rate(slow_run), 0.5);
    }
}
