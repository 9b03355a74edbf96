//! The bench's phases, the same traffic through each side.

use super::plan::{self, Plan, CHANGE, DELAY, FORWARD};
use super::report::{ChangeRow, DelayRow, ForwardRow, Maybe, RateRow, ScrapeRow, Side};
use super::shaper::{self, Shaper};
use super::topology::{Topology, OUT_DEV};
use super::traffic::{self, Flow, Timing, SMALL_PAYLOAD};
use super::{BenchError, Config, Phase};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// Payload of a 1514-byte frame.
pub const BULK_PAYLOAD: usize = 1472;
/// The metrics endpoint's address inside the middle namespace.
const METRICS_ADDR: &str = "127.0.0.1:9464";
/// Flows kept running through changed circuits during the change, each
/// kind (rate changed, moved), and their rate (a fifth of their max: no
/// drop is expected from the rate, only from the change).
const CHANGE_FLOWS: usize = 10;
const CHANGE_FLOW_BPS: u64 = 2_000_000;
/// Why a row has no value: its phase was not asked for.
pub const NOT_RUN: &str = "not in --phases";
/// The sparse flow's per-datagram trace of each side, in the work
/// directory.
pub const KERNEL_TRACE: &str = "sparse-trace-kernel.csv";
/// See [`KERNEL_TRACE`].
pub const FAIRWAY_TRACE: &str = "sparse-trace-fairway.csv";
/// What the shaper printed, its exit table last, in the work directory.
pub const SHAPER_LOG: &str = "shaper.log";

fn timing(quick: bool, seconds: u64) -> Timing {
    let secs = if quick {
        seconds.div_ceil(2).max(2)
    } else {
        seconds
    };
    Timing {
        seconds: Duration::from_secs(secs),
        warmup: Duration::from_secs(1),
    }
}

fn check_interrupt() -> Result<(), BenchError> {
    if super::interrupted() {
        return Err(BenchError::Interrupted);
    }
    Ok(())
}

/// The flows of the rate phase: the capped circuit at twice its max, the
/// two sharing circuits at more than their node's max each.
pub fn rate_flows(plan: &Plan) -> Vec<(usize, Flow, String, f64)> {
    let cap = &plan.circuits[plan::CAP];
    let [a, b] = plan::SHARE.map(|i| &plan.circuits[i]);
    let excess = plan::SHARED_NODE_MAX - a.min - b.min;
    let wsum = (a.weight + b.weight) as u64;
    let share = |c: &plan::Circuit| c.min + excess * c.weight as u64 / wsum;
    let mbit = |x: u64| x as f64 / 1e6;
    vec![
        (
            cap.index,
            Flow::at_bps(cap.addr(), BULK_PAYLOAD, 2 * cap.max),
            "max held".into(),
            mbit(cap.max),
        ),
        (
            a.index,
            Flow::at_bps(a.addr(), BULK_PAYLOAD, 80_000_000),
            format!("min {} + excess, weight {}", mbit(a.min), a.weight),
            mbit(share(a)),
        ),
        (
            b.index,
            Flow::at_bps(b.addr(), BULK_PAYLOAD, 80_000_000),
            format!("min {} + excess, weight {}", mbit(b.min), b.weight),
            mbit(share(b)),
        ),
    ]
}

/// The flows of the high-rate phase: the 100 Mbit/s and the 1 Gbit/s
/// circuits, each offered 1.5 × its max in 1514-byte frames.
pub fn high_rate_flows(plan: &Plan) -> Vec<(usize, Flow, String, f64)> {
    [plan::DELAY, plan::GIGABIT]
        .iter()
        .filter_map(|&i| plan.circuit(i))
        .map(|c| {
            (
                c.index,
                Flow::at_bps(c.addr(), BULK_PAYLOAD, c.max * 3 / 2),
                "max held".to_string(),
                c.max as f64 / 1e6,
            )
        })
        .collect()
}

/// Each max held at 100 Mbit/s and 1 Gbit/s, over 10 s (5 s with
/// `quick`), one circuit at a time so neither takes the other's sender.
pub fn high_rates(topo: &Topology, plan: &Plan, quick: bool) -> Result<Vec<RateRow>, BenchError> {
    let mut rows = Vec::new();
    for (i, flow, check, expected) in high_rate_flows(plan) {
        check_interrupt()?;
        let t = timing(quick, 10);
        let out = traffic::run(topo, &[flow], t, false, || ())?;
        rows.push(rate_row(
            (i, &flow, check, expected),
            &out.flows[0],
            out.receiver_drops,
            t,
        ));
    }
    Ok(rows)
}

/// Rates under overload.
pub fn rates(topo: &Topology, plan: &Plan, quick: bool) -> Result<Vec<RateRow>, BenchError> {
    check_interrupt()?;
    let spec = rate_flows(plan);
    let flows: Vec<Flow> = spec.iter().map(|s| s.1).collect();
    let t = timing(quick, 5);
    let out = traffic::run(topo, &flows, t, false, || ())?;
    Ok(spec
        .iter()
        .zip(&out.flows)
        .map(|((i, flow, check, expected), st)| {
            rate_row(
                (*i, flow, check.clone(), *expected),
                st,
                out.receiver_drops,
                t,
            )
        })
        .collect())
}

/// One circuit's row: circuit, flow, what is checked and the rate
/// expected, Mbit/s; what the traffic measured.
fn rate_row(
    (i, flow, check, expected): (usize, &Flow, String, f64),
    st: &traffic::FlowStats,
    receiver_drops: u64,
    t: Timing,
) -> RateRow {
    let measured = st.bps(flow, t.window()) / 1e6;
    let mbit = |datagrams: u64| {
        datagrams as f64 * flow.frame() as f64 * 8.0 / t.window().as_secs_f64() / 1e6
    };
    RateRow {
        circuit: format!("c{i}"),
        check,
        offered_mbit: flow.pps * flow.frame() as f64 * 8.0 / 1e6,
        sent_mbit: mbit(st.sent_in_window),
        send_failed: st.send_failed,
        receiver_drops,
        expected_mbit: expected,
        measured_mbit: measured,
        error_pct: (measured - expected) / expected * 100.0,
    }
}

/// The flows of the delay phase: bulk at 1.5 × the circuit's max, and 50
/// small datagrams a second, both to the same circuit.
pub fn delay_flows(plan: &Plan) -> [Flow; 2] {
    let c = &plan.circuits[DELAY];
    [
        Flow::at_bps(c.addr(), BULK_PAYLOAD, c.max * 3 / 2),
        Flow {
            dst: c.addr(),
            payload: SMALL_PAYLOAD,
            pps: 50.0,
        },
    ]
}

/// A sparse flow's delay beside a bulk flow in one circuit; with
/// `trace`, each sparse datagram's times are written there as CSV.
pub fn delay(
    topo: &Topology,
    plan: &Plan,
    quick: bool,
    trace: Option<&Path>,
) -> Result<DelayRow, BenchError> {
    check_interrupt()?;
    let flows = delay_flows(plan);
    let t = timing(quick, 5);
    let out = traffic::run(topo, &flows, t, false, || ())?;
    let (bulk, sparse) = (&out.flows[0], &out.flows[1]);
    if let Some(path) = trace {
        write_trace(path, &sparse.trace)?;
    }
    let ms = |h: &hdrhistogram::Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    Ok(DelayRow {
        sparse_p50_ms: ms(&sparse.delay_us, 0.5),
        sparse_p99_ms: ms(&sparse.delay_us, 0.99),
        sparse_max_ms: sparse.delay_us.max() as f64 / 1000.0,
        sparse_read_p99_ms: ms(&sparse.read_delay_us, 0.99),
        sparse_lost: sparse.sent.saturating_sub(sparse.received),
        sparse_sent: sparse.sent,
        bulk_p50_ms: ms(&bulk.delay_us, 0.5),
        bulk_mbit: bulk.bps(&flows[0], t.window()) / 1e6,
    })
}

/// One line per datagram: sequence number, send time, kernel arrival
/// stamp and reading time (µs since the run's start; the stamp empty if
/// the socket gave none), the delay to each (µs).
pub fn trace_csv(trace: &[traffic::Arrival]) -> String {
    let mut s = String::from("seq,sent_us,kernel_us,read_us,delay_us,read_delay_us\n");
    for a in trace {
        let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
        let _ = writeln!(
            s,
            "{},{},{},{},{},{}",
            a.seq,
            us(a.sent_ns),
            a.kernel_ns.map_or(String::new(), us),
            us(a.read_ns),
            us(a.delay_ns()),
            us(a.read_ns.saturating_sub(a.sent_ns)),
        );
    }
    s
}

fn write_trace(path: &Path, trace: &[traffic::Arrival]) -> Result<(), BenchError> {
    std::fs::write(path, trace_csv(trace)).map_err(|error| BenchError::File {
        path: path.to_path_buf(),
        error,
    })
}

/// Forwarding flat out, 64-byte (60 + FCS) and 1514-byte frames, through
/// the forwarding circuit (max: the link); `shaper_cpu` reads the
/// shaper's CPU time (zero for the kernel's side).
pub fn forwarding(
    topo: &Topology,
    plan: &Plan,
    quick: bool,
    shaper_cpu: &dyn Fn() -> Duration,
) -> Result<Vec<ForwardRow>, BenchError> {
    let dst = plan.circuits[FORWARD].addr();
    let mut rows = Vec::new();
    for payload in [SMALL_PAYLOAD, BULK_PAYLOAD] {
        check_interrupt()?;
        let flow = Flow {
            dst,
            payload,
            pps: 0.0,
        };
        let t = timing(quick, 4);
        let cpu0 = shaper_cpu();
        let out = traffic::run(topo, &[flow], t, true, || ())?;
        let secs = t.seconds.as_secs_f64();
        let frames = out.device_frames.unwrap_or(0) as f64 / t.window().as_secs_f64();
        rows.push(ForwardRow {
            frame_bytes: flow.frame(),
            mpps: frames / 1e6,
            gbit: frames * flow.frame() as f64 * 8.0 / 1e9,
            sender_cores: out.sender_cpu.as_secs_f64() / secs,
            shaper_cores: shaper_cpu().saturating_sub(cpu0).as_secs_f64() / secs,
            receiver_cores: out.receiver_cpu.as_secs_f64() / secs,
        });
    }
    Ok(rows)
}

/// Flows through circuits the change touches: rate-changed and moved.
pub fn change_flows() -> Vec<Flow> {
    let first_moved = plan::ACTIVE + CHANGE.rates;
    (plan::ACTIVE..plan::ACTIVE + CHANGE_FLOWS)
        .chain(first_moved..first_moved + CHANGE_FLOWS)
        .map(|i| Flow::at_bps(plan::address(i), BULK_PAYLOAD, CHANGE_FLOW_BPS))
        .collect()
}

/// Runs the change flows, applying `apply` once they flow; the row.
fn change_under_traffic(
    topo: &Topology,
    quick: bool,
    apply: impl FnOnce() -> Result<(String, Duration, Option<String>), BenchError>,
) -> Result<(ChangeRow, u64), BenchError> {
    check_interrupt()?;
    let flows = change_flows();
    let direct0 = topo.htb_direct_packets().unwrap_or(0);
    let out = traffic::run(topo, &flows, timing(quick, 4), false, apply)?;
    let (how, took, report) = out.action?;
    let sent: u64 = out.flows.iter().map(|f| f.sent).sum();
    let received: u64 = out.flows.iter().map(|f| f.received).sum();
    let row = ChangeRow {
        how,
        apply_ms: took.as_secs_f64() * 1e3,
        sent,
        lost: sent.saturating_sub(received),
        reordered: out.flows.iter().map(|f| f.reordered).sum(),
        unshaped: None,
        report,
    };
    Ok((row, direct0))
}

/// What the phases with traffic measured on one side.
type TrafficRows = (Vec<RateRow>, Maybe<DelayRow>, Vec<ForwardRow>);

/// The phases with traffic (rates, the sparse flow's delay,
/// forwarding) that `cfg` names, on the side called `side` whose
/// sparse-flow trace goes to `trace` and whose forwarder's CPU time
/// `shaper_cpu` reads; the same measurement on both sides.
fn traffic_phases(
    (topo, plan, cfg): (&Topology, &Plan, &Config),
    side: &str,
    trace: &str,
    shaper_cpu: &dyn Fn() -> Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<TrafficRows, BenchError> {
    let on = |p| cfg.phases.has(p);
    let mut rates = Vec::new();
    if on(Phase::Rates) {
        progress(&format!("{side}: rates"));
        rates = self::rates(topo, plan, cfg.quick)?;
        rates.extend(high_rates(topo, plan, cfg.quick)?);
    }
    let delay = if on(Phase::Delay) {
        progress(&format!("{side}: sparse-flow delay"));
        let trace = cfg.work_dir.join(trace);
        Maybe::done(self::delay(topo, plan, cfg.quick, Some(&trace))?)
    } else {
        Maybe::na(NOT_RUN)
    };
    let mut forwarding = Vec::new();
    if on(Phase::Forwarding) {
        progress(&format!("{side}: forwarding"));
        forwarding = self::forwarding(topo, plan, cfg.quick, shaper_cpu)?;
    }
    Ok((rates, delay, forwarding))
}

/// The kernel's side: bridge, HTB by `tc -batch`, every phase.
pub fn kernel(
    topo: &Topology,
    plan: &Plan,
    cfg: &Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Side, BenchError> {
    progress("kernel HTB: building the tree");
    let setup = topo.kernel_side(&plan.htb_setup(OUT_DEV))?;
    let on = |p| cfg.phases.has(p);
    let (rates, delay, forwarding) = traffic_phases(
        (topo, plan, cfg),
        "kernel HTB",
        KERNEL_TRACE,
        &|| Duration::ZERO,
        progress,
    )?;
    let scrape = if on(Phase::Statistics) {
        progress("kernel HTB: statistics");
        let t0 = std::time::Instant::now();
        let text = topo.tc(&["-s", "class", "show", "dev", OUT_DEV])?;
        Maybe::done(ScrapeRow {
            how: "tc -s class show".into(),
            ms: t0.elapsed().as_secs_f64() * 1e3,
            bytes: text.len(),
        })
    } else {
        Maybe::na(NOT_RUN)
    };
    let change = if on(Phase::Change) {
        progress("kernel HTB: the change");
        let script = plan.htb_change(&plan.changed(), OUT_DEV);
        let lines = script.lines().count();
        let (mut row, direct0) = change_under_traffic(topo, cfg.quick, || {
            let took = topo.tc_batch(&script)?;
            Ok((format!("tc -batch, {lines} commands"), took, None))
        })?;
        row.unshaped = Some(topo.htb_direct_packets()?.saturating_sub(direct0));
        Maybe::done(row)
    } else {
        Maybe::na(NOT_RUN)
    };
    Ok(Side {
        name: "kernel HTB".into(),
        setup_ms: setup.as_secs_f64() * 1e3,
        rates,
        delay,
        forwarding,
        scrape,
        change,
    })
}

/// fairway's side: the generated shaper file, `fairway shape` in the
/// middle namespace, every phase.
pub fn fairway(
    topo: &Topology,
    plan: &Plan,
    cfg: &Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Side, BenchError> {
    progress("fairway: starting the shaper");
    std::fs::create_dir_all(&cfg.work_dir).map_err(|e| BenchError::File {
        path: cfg.work_dir.clone(),
        error: e,
    })?;
    let config = cfg.work_dir.join("shaper.toml");
    shaper::write_atomically(&config, &plan.shaper_toml(topology_in(), OUT_DEV))?;
    let metrics = shaper::supports(&cfg.shaper_exe, "--metrics");
    let mut extra: Vec<String> = Vec::new();
    if metrics {
        extra.extend(["--metrics".into(), METRICS_ADDR.into()]);
    }
    if let Some(p) = cfg.shaper_rt_priority {
        extra.extend(["--rt-priority".into(), p.to_string()]);
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let mut sh = Shaper::start(&cfg.shaper_exe, &topo.middle, &config, &extra)?;
    let on = |p| cfg.phases.has(p);
    let (rates, delay, forwarding) = traffic_phases(
        (topo, plan, cfg),
        "fairway",
        FAIRWAY_TRACE,
        &|| sh.cpu(),
        progress,
    )?;
    let scrape = if !on(Phase::Statistics) {
        Maybe::na(NOT_RUN)
    } else if metrics {
        progress("fairway: statistics");
        let (took, bytes) = shaper::scrape(&topo.middle, METRICS_ADDR)?;
        Maybe::done(ScrapeRow {
            how: format!("GET http://{METRICS_ADDR}/metrics"),
            ms: took.as_secs_f64() * 1e3,
            bytes,
        })
    } else {
        Maybe::na("this fairway has no `fairway shape --metrics` yet")
    };
    let change = if !on(Phase::Change) {
        Maybe::na(NOT_RUN)
    } else if sh.catches_sighup() {
        progress("fairway: the change");
        let text = plan.changed().shaper_toml(topology_in(), OUT_DEV);
        let (row, _) = change_under_traffic(topo, cfg.quick, || {
            shaper::write_atomically(&config, &text)?;
            match sh.reload() {
                Some((took, line)) => Ok(("SIGHUP".into(), took, Some(line))),
                None => Err(BenchError::Shaper(format!(
                    "no line mentioning the reload within {} s of SIGHUP",
                    shaper::RELOAD_TIMEOUT.as_secs()
                ))),
            }
        })?;
        Maybe::done(row)
    } else {
        Maybe::na("this fairway does not handle SIGHUP: live reload not built in")
    };
    let setup_ms = sh.started_in.as_secs_f64() * 1e3;
    let text = sh.stop()?;
    // The shaper's own account (its exit table: per circuit received,
    // sent, dropped by reason), kept to check the rates against.
    let log = cfg.work_dir.join(SHAPER_LOG);
    std::fs::write(&log, text).map_err(|e| BenchError::File {
        path: log,
        error: e,
    })?;
    Ok(Side {
        name: "fairway".into(),
        setup_ms,
        rates,
        delay,
        forwarding,
        scrape,
        change,
    })
}

fn topology_in() -> &'static str {
    super::topology::IN_DEV
}
