//! `fairway arbiter-bench`: decisions per second and submit→grant→transmit
//! latency of the PSPAT runtime (the PSPAT paper §5.4, §5.5). Thin: parses the
//! arguments, calls `fairway_lab::arbiter_bench::run`, prints.

use super::error::CliError;
use super::flag::FlagError;
use super::progress::Progress;
use clap::{Args, ValueEnum};
use fairway_core::SchedSpec;
use fairway_lab::arbiter_bench::{self as bench, BenchConfig, BenchReport};
use fairway_runtime::{rt_throttle_runtime_us, ArbiterMode, KickMode};
use std::time::Duration;

/// How the arbiter waits for work.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ModeArg {
    /// Spin on do_scan (one core always busy).
    Busy,
    /// Sleep when idle; clients kick it (PSPAT paper §3.1).
    Sleep,
}

/// How clients wake a sleeping arbiter (PSPAT paper Fig. 4).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum KickArg {
    /// Only notify the arbiter.
    Notify,
    /// Run the scheduler in the client while the arbiter sleeps.
    Scan,
}

/// Arguments of `fairway arbiter-bench`.
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  fairway arbiter-bench --clients 4 --sched drr\n  \
    fairway arbiter-bench --rate 10G --load 0.01 --pkt-size 64      # light-load latency\n  \
    fairway arbiter-bench --rate 10G --load 0.01 --mode sleep --json\n  \
    fairway arbiter-bench --rate 10G --load 0.01 --chart latency.svg   # CDF of the three variants\n  \
    sudo fairway arbiter-bench --rate 10G --load 0.01 --realtime 10  # SCHED_FIFO: no preemption by other processes\n  \
    (a busy SCHED_FIFO arbiter is also stopped ~50 ms per second unless\n   \
    /proc/sys/kernel/sched_rt_runtime_us is -1)"
)]
pub struct ArbiterBenchArgs {
    /// Client threads, one flow each: at most 64 per CPU they run on (all
    /// CPUs but the arbiter's when pinned; every client busy-polls, and
    /// more would each run too rarely to measure anything), 1024 in all
    /// (a 220 KB latency histogram each).
    #[arg(long, default_value_t = 1)]
    pub clients: usize,
    /// Scheduler spec (anything `fairway` schedulers accept, e.g. drr, wf2q+).
    #[arg(long, default_value = "drr")]
    pub sched: String,
    /// Emulated link rate in bit/s, at least 1000, suffixes K, M, G, T or tc
    /// units (10gbit) (default: 1T, faster than any client). Example: --rate 10G
    #[arg(long, default_value = "1T")]
    pub rate: String,
    /// Packet size, bytes, 1..=65536 (the scheduler's largest packet).
    #[arg(long, default_value_t = 60)]
    pub pkt_size: u32,
    /// Measurement time, seconds, in [0.001, 3600].
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Offered load as a fraction of the link rate (e.g. 0.01), positive;
    /// each client's share must come to one packet every 1 ns to
    /// --seconds; default: clients send flat out.
    #[arg(long)]
    pub load: Option<f64>,
    /// Arbiter mode.
    #[arg(long, value_enum, default_value_t = ModeArg::Busy)]
    pub mode: ModeArg,
    /// Kick variant for the sleeping arbiter (only with --mode sleep;
    /// default: notify). Example: --mode sleep --kick scan
    #[arg(long, value_enum)]
    pub kick: Option<KickArg>,
    /// Δ_A, ns, 0..=1000000000: the arbiter scans client queues at most this often.
    #[arg(long, default_value_t = 500)]
    pub delta_a_ns: u64,
    /// Δ_C, ns, 0..=1000000000: clients read their grants at most this often.
    #[arg(long, default_value_t = 500)]
    pub delta_c_ns: u64,
    /// Minimum awake time of the sleeping arbiter, µs, 0..=1000000.
    #[arg(long, default_value_t = 20)]
    pub min_awake_us: u64,
    /// Client queue length, packets, 1..1048576; all clients' queues hold
    /// at most 16777216 packets together (each takes a ring slot and a
    /// scheduler slot).
    #[arg(long, default_value_t = 1023)]
    pub queue_len: usize,
    /// Do not pin the arbiter and clients to CPUs.
    #[arg(long)]
    pub no_pin: bool,
    /// Run the arbiter and client threads under SCHED_FIFO at this priority
    /// (1-99), so other processes cannot preempt them (clients only if each
    /// has its own CPU: real-time threads do not time-share); needs root or
    /// CAP_SYS_NICE. Linux still pauses real-time threads for up to 50 ms
    /// a second (sched_rt_runtime_us), which shows in the max latency.
    #[arg(long, value_name = "PRIO", value_parser = clap::value_parser!(u8).range(1..=99))]
    pub realtime: Option<u8>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also run the other arbiter variants (busy; sleep + notify kick;
    /// sleep + client-scan kick) with the same load and write their latency
    /// CDFs to this SVG file (PSPAT paper Fig. 9).
    #[arg(long, value_name = "PATH.svg")]
    pub chart: Option<std::path::PathBuf>,
}

/// Parses `--rate` with the shared grammar (`10G`, `10gbit`, `1.5M`).
fn parse_rate(text: &str) -> Result<u64, FlagError> {
    super::units::bit_rate(text).map_err(|e| FlagError::Invalid {
        flag: "--rate",
        error: e.into(),
    })
}

/// Runs the benchmark and prints the result.
pub fn run(args: ArbiterBenchArgs) -> Result<(), CliError> {
    let sched = SchedSpec::parse(&args.sched)?;
    if args.kick.is_some() && matches!(args.mode, ModeArg::Busy) {
        return Err(FlagError::OnlyWith {
            flag: "--kick",
            condition: "with --mode sleep",
            why: "a busy arbiter is never kicked",
        }
        .into());
    }
    if let Some(path) = &args.chart {
        super::outputs::check_chart_file("--chart", path)?;
    }
    // Checked here because `Duration::from_secs_f64` takes no NaN, negative
    // or huge value; the rest is `BenchConfig::validate`'s.
    let (min, max) = (bench::limits::MIN_SECONDS, bench::limits::MAX_SECONDS);
    if !(min..=max).contains(&args.seconds) {
        return Err(FlagError::ValueOutside {
            flag: "--seconds",
            value: bench::limits::shown(args.seconds),
            range: format!("[{min}, {max}]"),
        }
        .into());
    }
    let cfg = BenchConfig {
        clients: args.clients,
        sched,
        rate_bps: parse_rate(&args.rate)?,
        pkt_size: args.pkt_size,
        duration: Duration::from_secs_f64(args.seconds),
        load: args.load,
        mode: arbiter_mode(args.mode),
        kick: kick_mode(args.kick.unwrap_or(KickArg::Notify)),
        delta_a: Duration::from_nanos(args.delta_a_ns),
        delta_c: Duration::from_nanos(args.delta_c_ns),
        min_awake: Duration::from_micros(args.min_awake_us),
        queue_len: args.queue_len,
        pin: !args.no_pin,
        realtime: args.realtime,
    };
    cfg.validate()?;
    let Some(path) = args.chart.clone() else {
        let bar = Progress::spinner(
            &format!("measuring {} s (then draining)", args.seconds),
            args.json,
        );
        let r = bench::run(&cfg);
        bar.finish();
        report(&args, cfg.rate_bps, &r?)?;
        return Ok(());
    };
    let variants = [
        (ModeArg::Busy, KickArg::Notify, "busy-polling arbiter"),
        (
            ModeArg::Sleep,
            KickArg::Notify,
            "sleeping arbiter, notify kick",
        ),
        (
            ModeArg::Sleep,
            KickArg::Scan,
            "sleeping arbiter, client-scan kick",
        ),
    ];
    let mut runs = Vec::new();
    let mut bar = Progress::counted(variants.len() as u64, "variants", args.json).ticking();
    for (i, (mode, kick, name)) in variants.into_iter().enumerate() {
        bar.set(i as u64, &format!("{name}, {} s", args.seconds));
        let a = ArbiterBenchArgs {
            mode,
            kick: Some(kick),
            chart: None,
            ..args.clone()
        };
        let c = BenchConfig {
            mode: arbiter_mode(mode),
            kick: kick_mode(kick),
            ..cfg.clone()
        };
        let r = bench::run(&c)?;
        bar.suspend(|| report(&a, cfg.rate_bps, &r))?;
        runs.push((name.to_string(), r));
    }
    bar.finish();
    let title = format!(
        "submit -> transmit latency, {} client(s), {}, {} B at {}{}",
        args.clients,
        args.sched,
        args.pkt_size,
        args.rate,
        args.load.map_or(String::new(), |l| format!(" x {l}"))
    );
    bench::write_latency_chart(&path, &title, &runs)?;
    crate::errln!("wrote {}", path.display());
    Ok(())
}

fn arbiter_mode(m: ModeArg) -> ArbiterMode {
    match m {
        ModeArg::Busy => ArbiterMode::BusyPoll,
        ModeArg::Sleep => ArbiterMode::Sleep,
    }
}

fn kick_mode(k: KickArg) -> KickMode {
    match k {
        KickArg::Notify => KickMode::Notify,
        KickArg::Scan => KickMode::ClientScan { run_for_ns: 2_000 },
    }
}

fn report(args: &ArbiterBenchArgs, rate_bps: u64, r: &BenchReport) -> Result<(), CliError> {
    if args.json {
        super::json::print_line(&to_json(args, rate_bps, r))
    } else {
        Ok(print_human(args, r)?)
    }
}

fn to_json(args: &ArbiterBenchArgs, rate_bps: u64, r: &BenchReport) -> serde_json::Value {
    serde_json::json!({
        "sched": r.sched,
        "clients": r.clients,
        "rate_bps": rate_bps,
        "pkt_size": args.pkt_size,
        "load": args.load,
        "mode": format!("{:?}", args.mode).to_lowercase(),
        "kick": format!("{:?}", args.kick.unwrap_or(KickArg::Notify)).to_lowercase(),
        "realtime_priority": args.realtime,
        "rt_throttle_runtime_us": rt_throttle_runtime_us(),
        "seconds": r.seconds,
        "decisions_per_sec": r.decisions_per_sec,
        "latency_ns_p50": r.latency.p50,
        "latency_ns_p90": r.latency.p90,
        "latency_ns_p99": r.latency.p99,
        "latency_ns_p999": r.latency.p999,
        "latency_ns_max": r.latency.max,
        "latency_samples": r.latency.count,
        "submitted": r.submitted,
        "accepted": r.accepted,
        "granted": r.granted,
        "rejected": r.rejected,
        "still_queued": r.still_queued,
        "arbiter_decisions": r.arbiter.decisions,
        "arbiter_scans": r.arbiter.scans,
        "arbiter_blocks": r.arbiter.blocks,
        "arbiter_client_scans": r.arbiter.client_scans,
    })
}

fn print_human(
    args: &ArbiterBenchArgs,
    r: &BenchReport,
) -> Result<(), crate::cmd::stdout::StdoutError> {
    crate::outln!(
        "arbiter-bench: {} client(s), {}, link {} bit/s, {} B packets, {:?} arbiter, {:.1} s",
        r.clients,
        r.sched,
        args.rate,
        args.pkt_size,
        args.mode,
        r.seconds
    );
    crate::outln!("  decisions/s        {:>12.2} M", r.decisions_per_sec / 1e6);
    crate::outln!(
        "  latency submit->grant->transmit (ns): p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  ({} packets)",
        r.latency.p50, r.latency.p90, r.latency.p99, r.latency.p999, r.latency.max, r.latency.count
    );
    crate::outln!(
        "  submitted {} = granted {} + rejected {} + still queued {}",
        r.submitted,
        r.granted,
        r.rejected,
        r.still_queued
    );
    crate::outln!(
        "  arbiter: {} decisions, {} scans, {} blocks, {} client-run scans",
        r.arbiter.decisions,
        r.arbiter.scans,
        r.arbiter.blocks,
        r.arbiter.client_scans
    );
    if let (Some(_), Some(us)) = (args.realtime, rt_throttle_runtime_us()) {
        if us >= 0 {
            crate::errln!(
                "note: real-time throttling is on (sched_rt_runtime_us = {us}): a busy real-time \
                 arbiter is stopped for the rest of each period once it used {us} µs, and packets \
                 wait meanwhile; `echo -1 > /proc/sys/kernel/sched_rt_runtime_us` (root) for \
                 latency measurements"
            );
        }
    }
    Ok(())
}
