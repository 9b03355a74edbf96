//! `fairway udp-bench`: the PSPAT paper's UDP experiments (§5.4 Fig. 6, §5.5 Figs.
//! 8–10, the §4 Eq. (1) check) with real packets, `none` / `tc` (HTB) /
//! `fairway` / `fairway-dispatch` measured in one run on a namespace
//! testbed the command creates and removes. Linux, root.

use super::error::CliError;
use super::flag::FlagError;
use clap::{Args, ValueEnum};
use std::fmt;
use std::time::Duration;

/// Arguments of `fairway udp-bench`.
#[derive(Args, Debug)]
pub struct UdpBenchArgs {
    /// Experiments to run, comma-separated: throughput, latency, sweep,
    /// transports (throughput of udp / af-packet / af-packet-ring in one
    /// run), or all (the first three). Example: `--experiments throughput,latency`
    #[arg(long, default_value = "all")]
    pub experiments: String,
    /// Client counts of the throughput experiment, each 1..=256 (each
    /// client takes two sockets, and a process may open 1024 files);
    /// default 1,2,4,8,16 (`--quick`: 1,4). Example: `--clients 1,2,4,8`
    #[arg(long)]
    pub clients: Option<String>,
    /// Seconds of sending per trial, in [0.05, 60] (the delivered rate is
    /// counted in 50 ms slices); default 0.7 (`--quick`: 0.3). With
    /// real-time priority, keep the trial and its 0.1 s start lead under
    /// 0.95 s (the kernel stops real-time threads for up to 50 ms once they
    /// used 0.95 s of a second; the busy-polling arbiter is real-time from
    /// its start to the end of the trial). The whole run (trials × seconds
    /// and the pauses) may plan at most 24 h. Example: `--seconds 0.7`
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Pause before each trial but the first, ms, 0..=60000: lets each
    /// CPU's real-time budget recover so no trial is throttled (default
    /// 1100; `--quick`: 0). Example: `--cooldown-ms 1100`
    #[arg(long)]
    pub cooldown_ms: Option<u64>,
    /// Trials per throughput point and configuration (median kept), 1..=20;
    /// default 3 (`--quick`: 1). Example: `--repeat 3`
    #[arg(long)]
    pub repeat: Option<u32>,
    /// Trials per sweep point and configuration (median p98 kept), 1..=20;
    /// default 3 (`--quick`: 1). Example: `--sweep-repeat 3`
    #[arg(long)]
    pub sweep_repeat: Option<u32>,
    /// Rounds of the target-alone latency trials (every configuration once
    /// per round; the added median is the median of the per-round
    /// differences), 1..=20; default 5 (`--quick`: 1).
    /// Example: `--latency-repeat 5`
    #[arg(long)]
    pub latency_repeat: Option<u32>,
    /// Configurations to measure, comma-separated, in this order within
    /// each repeat: none, tc, fairway, fairway-dispatch, or all.
    /// Example: `--modes tc,fairway`
    #[arg(long, default_value = "all")]
    pub modes: String,
    /// What becomes of the packets of flows nobody reads at the receiving
    /// end: `sockets` (a full UDP socket drops them after the IP and UDP
    /// receive path, which a veth runs on the sending CPU) or
    /// `ingress-drop` (an eBPF classifier drops them where they enter the
    /// receiving device; the watched target still reaches its socket).
    /// Both count every drop. Example: `--receive sockets`
    #[arg(long, value_enum, default_value_t = Receive::IngressDrop)]
    pub receive: Receive,
    /// Raw frames only: in none, fairway and fairway-dispatch, frames go
    /// straight to the driver (PACKET_QDISC_BYPASS), as the arbiter hands
    /// granted packets to the device in the PSPAT paper; tc always goes
    /// through its qdisc.
    #[arg(long)]
    pub qdisc_bypass: bool,
    /// Let idle CPUs halt during the latency and sweep experiments. By
    /// default a SCHED_IDLE thread spins on every CPU there, so that a
    /// halted (virtual) CPU's wake-up, up to milliseconds in a VM, is not
    /// counted as the target's delay; it never runs while a measured
    /// thread of its CPU can.
    #[arg(long)]
    pub no_idle_spin: bool,
    /// Flat-out clients next to the target in the latency experiments,
    /// 0..=255 (with the target at most 256 clients). Example: `--interferers 4`
    #[arg(long, default_value_t = 4)]
    pub interferers: usize,
    /// The target client's rate, packets/s, 1..=1M (PSPAT paper: 4000).
    /// Example: `--target-pps 4000`
    #[arg(long, default_value_t = 4000, value_parser = super::units::packet_rate)]
    pub target_pps: u64,
    /// The target's weight, 1..=65536 (the scheduler's largest); the others
    /// have 1 (PSPAT paper: 50). With tc, each interferer's HTB class, its
    /// share of the link, must come to at least 8 bit/s.
    /// Example: `--target-weight 50`
    #[arg(long, default_value_t = 50)]
    pub target_weight: u32,
    /// Link rate of the latency experiments, packets/s of 60 bytes,
    /// 100..=2083333333 (1 Tbit/s). Example: `--link-pps 200000`
    #[arg(long, default_value_t = 200_000, value_parser = super::units::packet_rate)]
    pub link_pps: u64,
    /// Link rates of the sweep, packets/s (K, M, G, T multipliers allowed),
    /// each as --link-pps; default 50k,100k,200k,400k,800k,1600k
    /// (`--quick`: 50k,400k). Example: `--rates 50k,100k,200k,400k,800k`
    #[arg(long)]
    pub rates: Option<String>,
    /// The arbiter's scheduler (registry spec). Example: `--sched qfq`
    #[arg(long, default_value = "drr")]
    pub sched: String,
    /// Δ_A = Δ_C of the throughput experiment, ns, 0..=1000000000 (§5.2:
    /// 1000). Example: `--delta-ns 1000`
    #[arg(long, default_value_t = 1000)]
    pub delta_ns: u64,
    /// Δ_A = Δ_C of the latency experiments, ns, 0..=1000000000 (§5.5:
    /// 500). Example: `--latency-delta-ns 500`
    #[arg(long, default_value_t = 500)]
    pub latency_delta_ns: u64,
    /// Datagrams per sendmmsg call, 1..=1024. Example: `--batch 32`
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// How clients send: `udp` (one UDP socket each, sendmmsg), `af-packet`
    /// (raw Ethernet frames with sendmmsg, PSPAT paper Fig. 7's netmap
    /// analogue) or `af-packet-ring` (raw frames through a TPACKET_V2 TX
    /// ring; --batch at most 256). Example: `--transport af-packet`
    #[arg(long, value_enum, default_value_t = TransportArg::Udp)]
    pub transport: TransportArg,
    /// Client queue length (fairway), 1..1048576; the clients of a trial
    /// hold at most 16777216 packets in all (clients × queue length: each
    /// takes a ring slot and a scheduler slot). Example: `--queue-len 511`
    #[arg(long, default_value_t = 511)]
    pub queue_len: usize,
    /// CPU of the arbiter (and receiver); `none` to leave unpinned. Example: `--arbiter-cpu 0`
    #[arg(long, default_value = "0")]
    pub arbiter_cpu: String,
    /// CPU of every client; `none` to leave unpinned. Example: `--client-cpu 1`
    #[arg(long, default_value = "1")]
    pub client_cpu: String,
    /// Real-time priority P, 1..=98, or `none`: the arbiter runs SCHED_FIFO
    /// and the flat-out clients SCHED_RR at P, the target client and the
    /// receiver (they sleep between packets) SCHED_FIFO at P + 1.
    /// Example: `--rt-priority 10`
    #[arg(long, default_value = "10", value_parser = parse_rt_priority)]
    pub rt_priority: RtPriority,
    /// Packets per client per trial, at most, 1..=2^64−1.
    /// Example: `--max-packets 50000000`
    #[arg(long, default_value_t = 50_000_000)]
    pub max_packets: u64,
    /// A short run for CI: clients 1,4; 0.3 s; 1 repeat (sweep and
    /// target-alone rounds too); rates 50k,400k; no pause between trials.
    /// These are defaults: a flag given with --quick is used as given.
    #[arg(long)]
    pub quick: bool,
    /// Print the report as JSON (no progress bar, no table).
    #[arg(long)]
    pub json: bool,
    /// Write throughput.csv, latency.csv and sweep.csv into this directory
    /// (made after the run if missing; its parent must exist).
    /// Example: `--csv out/`
    #[arg(long)]
    pub csv: Option<String>,
    /// Write SVG charts `<PREFIX>-throughput.svg`, `-latency.svg`,
    /// `-sweep.svg`; the prefix's directory must exist.
    /// Example: `--chart docs/img/udp`
    #[arg(long)]
    pub chart: Option<String>,
}

/// `--receive`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Receive {
    /// Unread flows end at their full UDP sockets.
    Sockets,
    /// Unread flows are dropped at the receiving device's ingress.
    IngressDrop,
}

/// `--transport`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// One UDP socket per client, sendmmsg.
    Udp,
    /// Raw Ethernet frames, sendmmsg.
    AfPacket,
    /// Raw Ethernet frames through a TPACKET_V2 TX ring.
    AfPacketRing,
}

/// `--rt-priority`: 1..=99, or `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtPriority(Option<u8>);

/// A `--rt-priority` that is neither 1..=99 nor `none` (clap prints it
/// after the flag).
#[derive(Debug)]
pub struct RtPriorityError(String);

impl fmt::Display for RtPriorityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} outside 1..=99 (or `none`)", self.0)
    }
}

impl std::error::Error for RtPriorityError {}

fn parse_rt_priority(text: &str) -> Result<RtPriority, RtPriorityError> {
    match text {
        "none" => Ok(RtPriority(None)),
        p => match p.parse::<u8>() {
            Ok(v) if (1..=99).contains(&v) => Ok(RtPriority(Some(v))),
            _ => Err(RtPriorityError(p.to_string())),
        },
    }
}

fn parse_cpu(text: &str, flag: &'static str) -> Result<Option<usize>, FlagError> {
    if text == "none" {
        return Ok(None);
    }
    let cpu: usize = text.parse().map_err(|_| FlagError::ValueExpected {
        flag,
        value: text.to_string(),
        expected: "a CPU index or `none`",
    })?;
    let n = fairway_runtime::affinity::available_cpus();
    if cpu >= n {
        return Err(FlagError::ValueOutside {
            flag,
            value: cpu.to_string(),
            range: format!("0..{n}"),
        });
    }
    Ok(Some(cpu))
}

fn parse_rate(text: &str) -> Result<u64, FlagError> {
    super::units::packet_rate(text).map_err(|e| FlagError::Invalid {
        flag: "--rates",
        error: e.into(),
    })
}

/// A repeat count as the library counts it: lossless, every `u32` is a
/// `usize` on the 32- and 64-bit targets this command builds for (the flag
/// is a `u32` to keep the arguments small).
fn widen(n: u32) -> usize {
    n as usize
}

/// The entries of a comma-separated list: an empty entry (`1,,2`, a
/// trailing comma) or an empty list is refused, not skipped.
fn parse_list<T>(
    flag: &'static str,
    text: &str,
    f: impl Fn(&str) -> Result<T, FlagError>,
) -> Result<Vec<T>, FlagError> {
    if text.trim().is_empty() {
        return Err(FlagError::Must {
            flag,
            be: "a non-empty comma-separated list",
        });
    }
    text.split(',')
        .map(|s| {
            if s.trim().is_empty() {
                Err(FlagError::ValueMust {
                    flag,
                    value: text.to_string(),
                    be: "a list without empty entries",
                })
            } else {
                f(s.trim())
            }
        })
        .collect()
}

#[cfg(target_os = "linux")]
fn config(args: &UdpBenchArgs) -> Result<fairway_lab::udp_bench::BenchConfig, CliError> {
    use fairway_lab::udp_bench::{
        BenchConfig, Experiment, Mode, Placement, ReceivePath, Transport,
    };
    let transport = match args.transport {
        TransportArg::Udp => Transport::Udp,
        TransportArg::AfPacket => Transport::AfPacket,
        TransportArg::AfPacketRing => Transport::AfPacketRing,
    };
    let mut exp = Experiment {
        throughput: false,
        latency: false,
        sweep: false,
        transports: false,
    };
    for e in args.experiments.split(',').map(str::trim) {
        match e {
            "all" => {
                exp = Experiment {
                    throughput: true,
                    latency: true,
                    sweep: true,
                    transports: exp.transports,
                }
            }
            "transports" => exp.transports = true,
            "throughput" => exp.throughput = true,
            "latency" => exp.latency = true,
            "sweep" => exp.sweep = true,
            other => {
                return Err(FlagError::UnknownEntry {
                    flag: "--experiments",
                    what: None,
                    text: other.to_string(),
                    choices: "throughput, latency, sweep, transports, all",
                }
                .into())
            }
        }
    }
    let sched = fairway_core::SchedSpec::parse(&args.sched).map_err(|e| FlagError::Invalid {
        flag: "--sched",
        error: e.into(),
    })?;
    let mut modes = Vec::new();
    for m in args.modes.split(',').map(str::trim) {
        match m {
            "all" => modes.extend(Mode::ALL),
            "none" => modes.push(Mode::None),
            "tc" => modes.push(Mode::Tc),
            "fairway" => modes.push(Mode::Fairway),
            "fairway-dispatch" => modes.push(Mode::FairwayDispatch),
            other => {
                return Err(FlagError::UnknownEntry {
                    flag: "--modes",
                    what: None,
                    text: other.to_string(),
                    choices: "none, tc, fairway, fairway-dispatch, all",
                }
                .into())
            }
        }
    }
    let receive = match args.receive {
        Receive::Sockets => ReceivePath::Sockets,
        Receive::IngressDrop => ReceivePath::IngressDrop,
    };
    if let Some(prefix) = &args.chart {
        super::outputs::check_prefix("--chart", prefix)?;
    }
    if let Some(dir) = &args.csv {
        super::outputs::check_dir_to_create("--csv", std::path::Path::new(dir))?;
    }
    let quick = args.quick;
    let default_clients = if quick { "1,4" } else { "1,2,4,8,16" };
    let clients = parse_list(
        "--clients",
        args.clients.as_deref().unwrap_or(default_clients),
        |s| {
            s.parse::<usize>().map_err(|_| FlagError::EntryNotANumber {
                flag: "--clients",
                text: s.to_string(),
            })
        },
    )?;
    let default_rates = if quick {
        "50k,400k"
    } else {
        "50k,100k,200k,400k,800k,1600k"
    };
    let rates = parse_list(
        "--rates",
        args.rates.as_deref().unwrap_or(default_rates),
        parse_rate,
    )?;
    let defaults = |normal, quick_run| if quick { quick_run } else { normal };
    let cooldown_ms = args.cooldown_ms.unwrap_or(if quick {
        0
    } else {
        fairway_lab::udp_bench::RT_COOLDOWN_MS
    });
    let rt_priority = args.rt_priority.0;
    let arbiter_cpu = parse_cpu(&args.arbiter_cpu, "--arbiter-cpu")?;
    let cfg = BenchConfig {
        clients,
        seconds: args.seconds.unwrap_or(if quick { 0.3 } else { 0.7 }),
        repeat: widen(args.repeat.unwrap_or(defaults(3, 1))),
        sweep_repeat: widen(args.sweep_repeat.unwrap_or(defaults(3, 1))),
        latency_repeat: widen(args.latency_repeat.unwrap_or(defaults(5, 1))),
        modes,
        receive,
        qdisc_bypass: args.qdisc_bypass,
        idle_spin: !args.no_idle_spin,
        interferers: args.interferers,
        target_pps: args.target_pps,
        target_weight: args.target_weight,
        link_pps: args.link_pps,
        rates,
        sched,
        delta_throughput_ns: args.delta_ns,
        delta_latency_ns: args.latency_delta_ns,
        batch: args.batch,
        transport,
        queue_len: args.queue_len,
        placement: Placement {
            arbiter_cpu,
            client_cpu: parse_cpu(&args.client_cpu, "--client-cpu")?,
            receiver_cpu: arbiter_cpu,
            rt_priority,
        },
        experiments: exp,
        max_packets_per_flow: args.max_packets,
        cooldown_ms,
    };
    cfg.validate()?;
    Ok(cfg)
}

/// Runs the command.
#[cfg(target_os = "linux")]
pub fn run(args: UdpBenchArgs) -> Result<(), CliError> {
    use fairway_lab::udp_bench::{report, run};
    let cfg = config(&args)?;
    let root_why = Some("CAP_NET_ADMIN, to create its network namespaces");
    if cfg.receive == fairway_lab::udp_bench::ReceivePath::IngressDrop {
        super::prereq::check_with_ebpf(
            "udp-bench",
            root_why,
            &super::prereq::IPROUTE2,
            Some("--receive ingress-drop, the default; --receive sockets needs none"),
        )?;
    } else {
        super::prereq::check("udp-bench", root_why, &super::prereq::IPROUTE2)?;
    }
    fairway_runtime::net::install_interrupt_handler().map_err(CliError::Interrupt)?;
    let total = cfg.trials() as u64;
    let bar = super::progress::bar(
        Some(total),
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} trials {msg}",
        args.json,
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let result = run(&cfg, &mut |done, _, label| {
        bar.set_position(done as u64);
        bar.set_message(label.to_string());
    });
    bar.finish_and_clear();
    // A signal makes the run stop at its next check, whatever it was
    // doing; its testbed is gone by now (`Drop`), whether the run then
    // returned an error or, past its last trial, a report.
    if let Some(signal) = fairway_runtime::net::interrupting_signal() {
        return Err(Interrupted {
            signal,
            left: fairway_lab::testbed::own_namespaces(),
        }
        .into());
    }
    let rep = result?;
    if let Some(dir) = &args.csv {
        report::write_csv(&rep, std::path::Path::new(dir))?;
    }
    let charts = match &args.chart {
        Some(prefix) => report::write_charts(&rep, prefix)?,
        None => Vec::new(),
    };
    if args.json {
        super::json::print_pretty(&rep)?;
    } else {
        crate::out!("{}", report::text(&rep));
        for c in charts {
            crate::outln!("chart: {c}");
        }
    }
    Ok(())
}

/// A run stopped by SIGINT or SIGTERM: which, and the namespaces it could
/// not remove (none, normally).
#[derive(Debug)]
pub struct Interrupted {
    /// `SIGINT` or `SIGTERM`.
    pub signal: &'static str,
    /// Namespaces of this process still there.
    pub left: Vec<String>,
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "udp-bench interrupted by {}", self.signal)?;
        if self.left.is_empty() {
            f.write_str("; its namespaces and links are removed")
        } else {
            write!(
                f,
                "; namespaces left behind: {} (remove with `ip netns del NAME`)",
                self.left.join(", ")
            )
        }
    }
}

/// Real packets need Linux (network namespaces, sendmmsg).
#[cfg(not(target_os = "linux"))]
pub fn run(_args: UdpBenchArgs) -> Result<(), CliError> {
    Err(CliError::CannotRun {
        command: "udp-bench",
        why: "needs Linux (network namespaces, sendmmsg)".into(),
    })
}
