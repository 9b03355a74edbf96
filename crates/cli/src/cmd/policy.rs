//! `fairway policy`: Eiffel's programmable policies (the Eiffel paper §3.2,
//! §5.1). `check` validates a policy file, `run` drives it with a flow-set
//! workload, `bench` measures the §5.1 use cases. Policy files are read by
//! `fairway_policy_file`; runs and benchmarks live in
//! `fairway_eval::policy`.

use super::common::{parse_flows, Table};
use super::error::CliError;
use super::flag::FlagError;
use clap::{Args, Subcommand};
use fairway_eval::policy::run::{run as run_policy, RunConfig, RunError};
use fairway_eval::policy::trace::TraceSummary;
use fairway_eval::policy::trace_csv::replay_csv;
use fairway_eval::policy::trace_pcap::{replay_pcap, Classify};
use fairway_eval::workload::PacketSizes;

/// Arguments of `fairway policy`.
#[derive(Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    pub command: PolicyCommand,
}

/// The `policy` subcommands.
#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Validate a policy file; errors say file:line:column.
    #[command(after_help = "Example:\n  fairway policy check examples/policies/fig6.toml")]
    Check {
        /// The policy file (TOML), e.g. examples/policies/fig6.toml.
        file: String,
    },
    /// Drive a policy with a workload on one link; per-node throughput,
    /// shares, delays and rate-limit violations.
    Run(RunArgs),
    /// The Eiffel paper §5.1 benchmarks (pFabric, pacing, hClock, approximate
    /// queue), CSV + SVG.
    Bench(super::policy_bench::BenchArgs),
}

/// Arguments of `fairway policy run`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  fairway policy run examples/policies/fig6.toml --flows 1x3 --link 100Mbit/s\n  \
fairway policy run examples/policies/pfabric.toml --flows 1x64 --load 0.8 --json"
)]
pub struct RunArgs {
    /// The policy file (TOML), e.g. examples/policies/hclock.toml.
    pub file: String,
    /// Workload flows, `WEIGHTxCOUNT[@MAXLEN]` groups or a preset, e.g.
    /// `1x3` or `1x500,2x250`; workload flow k feeds policy flow k mod N.
    /// Default: one per policy flow (`1xN`).
    #[arg(long, conflicts_with_all = ["trace", "pcap"])]
    pub flows: Option<String>,
    /// Packet sizes: `fixed` (each flow's MAXLEN) or `uniform:MIN`.
    #[arg(long, default_value = "fixed", conflicts_with_all = ["trace", "pcap"])]
    pub sizes: String,
    /// Replay the arrivals of this CSV file instead of a generated
    /// workload: header `time,flow,len`, time in integer ns
    /// (non-decreasing), flow a flow name of the policy, len bytes.
    /// Example: --trace examples/traces/hpfq-small.csv
    #[arg(long, value_name = "ARRIVALS.csv", conflicts_with = "pcap")]
    pub trace: Option<std::path::PathBuf>,
    /// Replay a classic pcap capture (Ethernet, IPv4/IPv6, TCP/UDP) like
    /// --trace; flows by --classify and --map; unmatched packets are
    /// counted and skipped. Example: --pcap cap.pcap --map 5001=a,5002=b
    #[arg(long, value_name = "FILE.pcap", requires = "map")]
    pub pcap: Option<std::path::PathBuf>,
    /// With --pcap: the header field that picks a packet's flow.
    #[arg(long, value_enum, default_value = "dst-port", requires = "pcap")]
    pub classify: ClassifyArg,
    /// With --pcap: PORT=FLOW pairs, comma-separated, FLOW a flow name of
    /// the policy, e.g. 5001=a,5002=b.
    #[arg(long, requires = "pcap")]
    pub map: Option<String>,
    /// With --trace: write every departure to this CSV file,
    /// `time,flow,len,queueing_delay` (ns, name, bytes, ns).
    #[arg(long, value_name = "OUT.csv")]
    pub departures: Option<std::path::PathBuf>,
    /// Link rate in bit/s with K, M, G, T as tc writes it, or in bytes
    /// with `B/s`; a bare number is bit/s. It must come to whole bytes/s.
    /// Example: --link 100mbit, --link 10G, --link 12.5MB/s
    #[arg(long, default_value = "100Mbit/s", value_parser = super::units::byte_rate)]
    pub link: u64,
    /// Simulated time in ms, e.g. 1000.
    #[arg(long, default_value_t = 1000, conflicts_with_all = ["trace", "pcap"])]
    pub duration_ms: u64,
    /// Offered load as a fraction of the link (0 = greedy sources), e.g. 0.8.
    #[arg(long, default_value_t = 0.0, conflicts_with_all = ["trace", "pcap"])]
    pub load: f64,
    /// Packets each greedy source keeps queued (with --load 0), e.g. 16;
    /// all of them must fit the policy's max_packets.
    #[arg(long, default_value_t = 16, conflicts_with_all = ["trace", "pcap"])]
    pub backlog: u64,
    /// Workload seed, e.g. 7.
    #[arg(long, default_value_t = 1, conflicts_with_all = ["trace", "pcap"])]
    pub seed: u64,
    /// JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// `--classify`: the header field that picks a packet's flow.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ClassifyArg {
    /// TCP/UDP destination port.
    DstPort,
    /// TCP/UDP source port.
    SrcPort,
}

/// Runs `fairway policy`.
pub fn run(args: PolicyArgs) -> Result<(), CliError> {
    match args.command {
        PolicyCommand::Check { file } => {
            let c = fairway_policy_file::load(&file)?;
            crate::outln!(
                "{file}: ok: {} nodes, {} flows, {} packet slots, shaper {} x {} ns",
                c.spec.nodes.len(),
                c.spec.flows.len(),
                c.spec.max_packets,
                c.spec.shaper.buckets,
                c.spec.shaper.granularity
            );
            Ok(())
        }
        PolicyCommand::Run(a) => run_cmd(a),
        PolicyCommand::Bench(a) => super::policy_bench::run(a),
    }
}

fn run_cmd(a: RunArgs) -> Result<(), CliError> {
    let policy = fairway_policy_file::load(&a.file)?;
    // The same ceiling as rates in policy files: transmission times stay
    // at least a few ns per packet, so the simulated clock advances.
    const MAX_LINK: u64 = 1 << 40;
    if a.link > MAX_LINK {
        return Err(FlagError::TooLarge {
            flag: "--link",
            value: format!("{} B/s", a.link),
            max: format!("{MAX_LINK} B/s, 8.8 Tbit/s"),
        }
        .into());
    }
    if a.departures.is_some() && a.trace.is_none() && a.pcap.is_none() {
        return Err(FlagError::Must {
            flag: "--departures",
            be: "given with --trace or --pcap (a generated run reports aggregates)",
        }
        .into());
    }
    if let Some(trace) = &a.trace {
        let s =
            replay_csv(&policy, a.link, trace, a.departures.as_deref()).map_err(RunError::Trace)?;
        return trace_report(&a, trace, s, 0);
    }
    if let Some(pcap) = &a.pcap {
        let map = parse_map(&policy, a.map.as_deref().unwrap_or_default())?;
        let c = match a.classify {
            ClassifyArg::DstPort => Classify::DstPort,
            ClassifyArg::SrcPort => Classify::SrcPort,
        };
        let s = replay_pcap(&policy, a.link, pcap, c, &map, a.departures.as_deref())
            .map_err(RunError::Trace)?;
        return trace_report(&a, pcap, s.replay, s.unclassified);
    }
    let n = policy.spec.flows.len();
    let flows = a.flows.clone().unwrap_or_else(|| format!("1x{n}"));
    let cfg = RunConfig {
        flows: parse_flows(&flows)?,
        sizes: PacketSizes::parse(&a.sizes).map_err(|e| FlagError::Invalid {
            flag: "--sizes",
            error: e.into(),
        })?,
        link: a.link,
        duration_ns: a
            .duration_ms
            .checked_mul(1_000_000)
            .filter(|&d| d > 0)
            .ok_or(FlagError::Must {
                flag: "--duration-ms",
                be: "1..=18446744073709 (the run counts u64 nanoseconds)",
            })?,
        load: a.load,
        backlog: a.backlog,
        seed: a.seed,
    };
    let bar = super::progress::Progress::spinner(
        &format!("simulating {} ms of the link", a.duration_ms),
        a.json,
    );
    let r = run_policy(&policy, &cfg);
    bar.finish();
    let r = r?;
    let fed = cfg.flows.flows().len();
    if fed < n {
        let idle = &policy.flow_names[fed..];
        let first: Vec<&str> = idle.iter().take(4).map(String::as_str).collect();
        let more = if idle.len() > first.len() {
            ", ..."
        } else {
            ""
        };
        crate::errln!(
            "fairway: warning: {} of {n} policy flows get no traffic (--flows {flows} has {fed} workload flows): {}{more}",
            idle.len(),
            first.join(", ")
        );
    }
    if a.json {
        super::json::print_pretty(&r)?;
        return Ok(());
    }
    crate::outln!(
        "{}: {} ms at {} bit/s; offered {} packets, refused {} (rank) + {} (full), {} left queued, internal misses {}",
        a.file,
        a.duration_ms,
        cfg.link * 8,
        r.offered,
        r.refused_rank,
        r.refused_full,
        r.left_queued,
        r.internal_misses
    );
    let table = |title: &str,
                 rows: &[fairway_eval::policy::run::EntityReport]|
     -> Result<(), crate::cmd::stdout::StdoutError> {
        crate::outln!("\n{title}");
        let mut t = Table::new(&[
            "name",
            "packets",
            "Mbit/s",
            "share",
            "p50_us",
            "p99_us",
            "max_us",
            "limit_Mbit/s",
            "violations",
        ]);
        for e in rows {
            t.row(vec![
                e.name.clone(),
                e.packets.to_string(),
                format!("{:.3}", e.throughput_bps / 1e6),
                format!("{:.4}", e.share),
                format!("{:.1}", e.delay_p50_us),
                format!("{:.1}", e.delay_p99_us),
                format!("{:.1}", e.delay_max_us),
                e.rate_limit
                    .map_or("-".into(), |l| format!("{:.3}", l as f64 * 8.0 / 1e6)),
                e.limit_violations.to_string(),
            ]);
        }
        t.print()
    };
    table("nodes", &r.nodes)?;
    if r.flows.len() <= 64 {
        table("flows", &r.flows)?;
    } else {
        crate::outln!("\n({} flows: use --json for each)", r.flows.len());
    }
    Ok(())
}

/// `--map PORT=FLOW,…`: ports to policy flow indices.
fn parse_map(
    policy: &fairway_policy_file::PolicyFile,
    text: &str,
) -> Result<Vec<(u16, u32)>, CliError> {
    let mut map: Vec<(u16, u32)> = Vec::new();
    for entry in text.split(',') {
        let bad = || FlagError::ValueOutOfRange {
            flag: "--map",
            value: entry.to_string(),
            range: "PORT=FLOW, PORT 0..=65535 once each, FLOW a flow name of the policy".into(),
        };
        let (port, flow) = entry.split_once('=').ok_or_else(bad)?;
        let port: u16 = port.trim().parse().map_err(|_| bad())?;
        let flow = (policy.flow_names.iter())
            .position(|n| n == flow.trim())
            .ok_or_else(bad)?;
        if map.iter().any(|m| m.0 == port) {
            return Err(bad().into());
        }
        map.push((port, flow as u32));
    }
    Ok(map)
}

/// A replay's totals (`--trace`, `--pcap`); departures went to
/// `--departures`.
fn trace_report(
    a: &RunArgs,
    trace: &std::path::Path,
    s: TraceSummary,
    unclassified: u64,
) -> Result<(), CliError> {
    if a.json {
        super::json::print_pretty(&serde_json::json!({
            "offered": s.offered,
            "departed": s.departed,
            "refused_full": s.refused_full,
            "refused_rank": s.refused_rank,
            "first_refused": s.first_refused,
            "bytes_in": s.bytes_in,
            "bytes_out": s.bytes_out,
            "unclassified": unclassified,
        }))?;
    } else {
        crate::outln!(
            "{}: replayed {} at {} bit/s: offered {} packets, departed {} ({} bytes), refused {} (rank) + {} (full)",
            a.file,
            trace.display(),
            a.link * 8,
            s.offered,
            s.departed,
            s.bytes_out,
            s.refused_rank,
            s.refused_full
        );
    }
    if unclassified > 0 {
        crate::errln!(
            "fairway: warning: {unclassified} packets of the capture match no --map entry (not TCP/UDP, or another port): skipped"
        );
    }
    if let Some(i) = s.first_refused {
        crate::errln!(
            "fairway: warning: the tree refused {} of {} arrivals (first: arrival {i}, 0-based after the header)",
            s.refused_full + s.refused_rank,
            s.offered
        );
    }
    Ok(())
}
