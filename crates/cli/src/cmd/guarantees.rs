//! `fairway guarantees`: T-WFI / B-WFI of schedulers against the fluid
//! reference and the analytical bounds (the QFQ+ paper §8.3).

use super::common::{parse_flows, parse_scheds, Table};
use super::error::CliError;
use super::flag::FlagError;
use super::progress::Progress;
use clap::Args;
use fairway_eval::guarantees::{run_guarantees, GuaranteeOptions, GuaranteeReport};
use fairway_eval::traffic::Pattern;
use fairway_eval::workload::{FlowSet, PacketSizes};

/// Arguments of `fairway guarantees`.
#[derive(Args)]
#[command(
    after_help = "Example:\n  fairway guarantees --sched drr,wf2q+ --flows 1k-highw --queue 1 --json"
)]
pub struct GuaranteesArgs {
    /// Schedulers to compare, comma separated, with optional parameters
    /// (e.g. `drr,wf2q+` or `fifo,drr:quantum=1500`).
    #[arg(long, default_value = "fifo,drr,wf2q+")]
    pub sched: String,
    /// Flow sets, the grammar of every `--flows`: a preset (1k-w1,
    /// 1k-wmix, 32k-w1, 32k-wmix, 1k-highw) or `WEIGHTxCOUNT[@MAXLEN]`
    /// groups joined by `,` into one set (`1x500,8x125@9000`); several sets
    /// separated by `;` (`1x64;1x4096`) or a `,` list of presets
    /// (`1k-w1,32k-w1`), each measured in turn.
    #[arg(long, default_value = "1k-highw")]
    pub flows: String,
    /// Packets the transmit queue holds besides the one on the wire
    /// (1 as in QFQ+ paper §8.3, i.e. Q_pkts = 2).
    #[arg(long, default_value_t = 1)]
    pub queue: u32,
    /// Packets to send, 1..=2^32−1, within a quarter of this machine's
    /// memory (about 256 bytes each). Default: 60 per flow, at least
    /// 20000 and at most 2000000.
    #[arg(long, value_name = "N", value_parser = super::units::count_u64)]
    pub packets: Option<u64>,
    /// Enqueue pattern of the controller: smooth or bursty (QFQ+ paper §8.3),
    /// or small, large, full, alternate (the cost patterns). Example: --pattern bursty
    #[arg(long, default_value = "smooth")]
    pub pattern: String,
    /// Packet sizes: `fixed` (every packet is the flow's max) or `uniform:MIN`.
    #[arg(long, default_value = "fixed")]
    pub sizes: String,
    /// Probability of switching to the enqueue phase when a flow empties.
    #[arg(long, default_value_t = 0.5)]
    pub switch_prob: f64,
    /// Link rate in bit/s with K, M, G, T as tc writes it (only converts
    /// times to microseconds). Example: --rate 10G, --rate 100mbit
    #[arg(long, default_value_t = 10_000_000_000, value_parser = super::units::bit_rate)]
    pub rate: u64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// One JSON object per scheduler on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Builds the options shared by `guarantees` and `demo`, for one flow set.
pub fn options(args: &GuaranteesArgs, flows: FlowSet) -> Result<GuaranteeOptions, CliError> {
    let mut o = GuaranteeOptions::paper(flows);
    o.queue_pkts = args.queue;
    if let Some(p) = args.packets {
        if p == 0 {
            return Err(FlagError::Must {
                flag: "--packets",
                be: "positive",
            }
            .into());
        }
        o.packets = p;
    }
    o.pattern = Pattern::parse(&args.pattern).ok_or_else(|| {
        let names: Vec<&str> = Pattern::ALL.iter().map(|p| p.name()).collect();
        FlagError::UnknownName {
            flag: "--pattern",
            text: args.pattern.clone(),
            expected: names.join(", "),
        }
    })?;
    o.sizes = PacketSizes::parse(&args.sizes)?;
    if !(0.0..=1.0).contains(&args.switch_prob) {
        return Err(FlagError::NotAProbability {
            flag: "--switch-prob",
            value: args.switch_prob,
        }
        .into());
    }
    o.switch_prob = args.switch_prob;
    if args.rate == 0 {
        return Err(FlagError::Must {
            flag: "--rate",
            be: "positive",
        }
        .into());
    }
    o.rate_bps = args.rate;
    o.seed = args.seed;
    // Ranges and the memory a run needs, before anything is allocated.
    o.check()?;
    Ok(o)
}

/// Runs every scheduler on the one flow set of `--flows` and returns the
/// reports in order.
pub fn measure(args: &GuaranteesArgs) -> Result<Vec<GuaranteeReport>, CliError> {
    let o = options(args, parse_flows(&args.flows)?)?;
    measure_set(args, &o)
}

/// Runs every scheduler with the options of one flow set.
fn measure_set(
    args: &GuaranteesArgs,
    o: &GuaranteeOptions,
) -> Result<Vec<GuaranteeReport>, CliError> {
    let specs = parse_scheds(&args.sched)?;
    // One step per scheduler; with 32k flows or millions of packets a step
    // takes minutes, so the display ticks between steps.
    let mut bar = Progress::counted(specs.len() as u64, "schedulers", args.json).ticking();
    let mut reports = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        bar.set(
            i as u64,
            &format!("{s}: {} flows, {} packets", o.flows.len(), o.packets),
        );
        reports.push(run_guarantees(s, o)?.0);
    }
    bar.finish();
    Ok(reports)
}

/// Prints the reports as a table.
pub fn print_table(reports: &[GuaranteeReport]) -> Result<(), crate::cmd::stdout::StdoutError> {
    let Some(first) = reports.first() else {
        return Ok(());
    };
    crate::outln!(
        "flows {}, pattern {}, transmit queue {} pkt, {} packets, seed {}; T-WFI in packet service times of the highest-weight flow",
        first.flows, first.pattern, first.queue, first.packets, first.seed
    );
    let mut t = Table::new(&[
        "sched",
        "T-WFI",
        "bound",
        "T-WFI us",
        "B-WFI bytes",
        "bound",
        "vs GPS",
        "worst flow",
        "violations",
    ]);
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
    for r in reports {
        t.row(vec![
            r.sched.clone(),
            format!("{:.3}", r.twfi_max_weight_flow),
            opt(r.twfi_bound_max_weight_flow, 3),
            format!("{:.2}", r.twfi_max_weight_flow_us),
            format!("{:.0}", r.bwfi_max_weight_flow),
            opt(r.bwfi_bound_max_weight_flow, 0),
            format!("{:.3}", r.gps_delay_max_weight_flow),
            format!("{:.3}", r.twfi_worst_flow),
            r.bound_violations.to_string(),
        ]);
    }
    t.print()
}

/// Runs the measurement.
pub fn run(args: GuaranteesArgs) -> Result<(), CliError> {
    parse_scheds(&args.sched)?;
    // Every set's options (ranges, memory) are checked before the first runs.
    let all = FlowSet::parse_list(&args.flows)?
        .into_iter()
        .map(|set| options(&args, set))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, o) in all.iter().enumerate() {
        let reports = measure_set(&args, o)?;
        if args.json {
            for r in &reports {
                super::json::print_line(r)?;
            }
        } else {
            if i > 0 {
                crate::outln!();
            }
            print_table(&reports)?;
        }
    }
    Ok(())
}
