//! `fairway bench-pq`: fill-drain throughput of the integer priority queues
//! (the Eiffel paper §5.2, Figs. 12–14); the logic lives in
//! `fairway_eval::pq_bench`.

use super::error::CliError;
use super::flag::FlagError;
use clap::Args;
use fairway_core::pq::approx_gradient::MAX_ALPHA;
use fairway_eval::chart::{write_svg, ChartError, ChartSpec, Series};
use fairway_eval::pq_bench::{
    add_ideal_shares, check_sweep, fill_drain_ranks, run_fill_drain, FillDrainConfig,
    FillDrainResult, PqBenchError, QueueKind,
};

/// Arguments of `fairway bench-pq`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  fairway bench-pq\n  fairway bench-pq --queues approx --per-bucket 1 \
                        --occupancy 10,30,50,70,90,100\n  fairway bench-pq --rounds 5\n  fairway bench-pq --json --chart pq.svg"
)]
pub struct BenchPqArgs {
    /// Queues, comma separated: cffs, hffs, gradient, approx, bucket-heap,
    /// binary-heap, timing-wheel; and `ideal`, the yardstick (one pre-sized
    /// array per bucket, no queue), which adds column `of_ideal`: each
    /// queue's Mpps over ideal's in the same sweep.
    #[arg(
        long,
        default_value = "cffs,hffs,gradient,approx,bucket-heap,binary-heap,timing-wheel,ideal"
    )]
    pub queues: String,
    /// Bucket counts (priority levels), comma separated, each at least 2;
    /// with --per-bucket and --occupancy at most 2^32−1 elements, within a
    /// quarter of this machine's memory.
    #[arg(long, default_value = "5000,10000")]
    pub buckets: String,
    /// Elements per occupied bucket, comma separated.
    #[arg(long, default_value = "1,4,16,64")]
    pub per_bucket: String,
    /// Percent of buckets occupied (1..=100), comma separated.
    #[arg(long, default_value = "100")]
    pub occupancy: String,
    /// α of the approximate gradient queue (f(i) = i/α).
    #[arg(long, default_value_t = 16)]
    pub alpha: u32,
    /// Elements per timed batch (fill-drain repeated until reached).
    #[arg(long, default_value_t = 50_000, value_name = "N", value_parser = super::units::count_u64)]
    pub min_ops: u64,
    /// Timed batches per configuration; the best is reported.
    #[arg(long, default_value_t = 15, value_name = "N", value_parser = super::units::count_u32)]
    pub batches: u32,
    /// Rounds of the whole sweep: each configuration reports its best
    /// round and, in column `worst`, its worst. On a machine whose speed
    /// drifts (a shared VM), rounds spread over a minute or more catch its
    /// undisturbed speed in every configuration. At most 1000.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = super::units::count_u32)]
    pub rounds: u32,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// One JSON object per configuration instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write an SVG chart (Mpps against elements per bucket) here.
    #[arg(long, value_name = "PATH.svg")]
    pub chart: Option<String>,
    /// Write the rank sequence of every configuration here instead of
    /// measuring (for `scripts/vs-eiffel.py`, whose C harness replays it).
    #[arg(long, value_name = "PATH", hide = true)]
    pub dump_ranks: Option<String>,
}

fn parse_list(flag: &'static str, s: &str) -> Result<Vec<u32>, FlagError> {
    let values = s
        .split(',')
        .map(|x| {
            // The shared count grammar: "too large (at most …)", not a
            // parser's own wording.
            super::units::count_u32(x).map_err(|e| FlagError::Invalid {
                flag,
                error: e.into(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    no_duplicates(flag, &values)?;
    Ok(values)
}

/// A value listed twice would run its configurations twice.
fn no_duplicates<T: PartialEq + std::fmt::Display>(
    flag: &'static str,
    values: &[T],
) -> Result<(), FlagError> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(FlagError::Duplicate {
                flag,
                text: v.to_string(),
            });
        }
    }
    Ok(())
}

fn print_table(
    results: &[FillDrainResult],
    rounds: bool,
) -> Result<(), crate::cmd::stdout::StdoutError> {
    let worst_header = if rounds { " worst" } else { "" };
    let ideal = results.iter().any(|r| r.of_ideal.is_some());
    let ideal_header = if ideal { " of_ideal" } else { "" };
    crate::outln!(
        "{:<13} {:>7} {:>10} {:>9} {:>9} {:>8}{}{} {:>9} {:>6} {:>6} {:>8}",
        "queue",
        "buckets",
        "per_bucket",
        "occupancy",
        "elements",
        "Mpps",
        worst_header,
        ideal_header,
        "ns/elem",
        "fill",
        "drain",
        "errors"
    );
    for r in results {
        let errors = r
            .error_rate
            .map_or(String::from("-"), |e| format!("{:.2}%", e * 100.0));
        let worst = match r.mpps_worst_round {
            Some(w) if rounds => format!(" {w:>5.1}"),
            _ => String::new(),
        };
        let of_ideal = match r.of_ideal {
            Some(x) => format!(" {x:>8.2}"),
            None if ideal => format!(" {:>8}", "-"),
            None => String::new(),
        };
        crate::outln!(
            "{:<13} {:>7} {:>10} {:>8}% {:>9} {:>8.1}{}{} {:>9.1} {:>6.1} {:>6.1} {:>8}",
            r.queue,
            r.buckets,
            r.per_bucket,
            r.occupancy,
            r.elements,
            r.mpps,
            worst,
            of_ideal,
            r.ns_per_element,
            r.fill_ns_per_element,
            r.drain_ns_per_element,
            errors
        );
    }
    Ok(())
}

/// One line per measured (queue, buckets, occupancy), `ideal` included
/// as a dashed reference: Mpps against elements per bucket. Each line its
/// own colour and marker index, so equal queues at other bucket counts
/// stay apart.
fn chart_series(results: &[FillDrainResult]) -> Vec<Series> {
    let mut series: Vec<((&str, u32, u32), Series)> = Vec::new();
    for r in results {
        let key = (r.queue, r.buckets, r.occupancy);
        let point = (f64::from(r.per_bucket), r.mpps);
        if let Some((_, s)) = series.iter_mut().find(|(k, _)| *k == key) {
            s.points.push(point);
            continue;
        }
        let n = series.len();
        series.push((
            key,
            Series {
                name: format!(
                    "{} {} buckets, {}% occupied",
                    r.queue, r.buckets, r.occupancy
                ),
                points: vec![point],
                dashed: r.queue == QueueKind::Ideal.name(),
                color: n,
            },
        ));
    }
    let mut out: Vec<Series> = series.into_iter().map(|(_, s)| s).collect();
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

fn write_chart(path: &std::path::Path, results: &[FillDrainResult]) -> Result<(), ChartError> {
    let spec = ChartSpec {
        title: "fill-drain throughput of the priority queues (Eiffel paper Fig. 12)".into(),
        x_label: "elements per occupied bucket (log scale)".into(),
        y_label: "million elements/s (insert + extract)".into(),
        log_x: true,
        log_y: false,
    };
    write_svg(path, &spec, &chart_series(results))
}

/// `--dump-ranks`: per configuration (in sweep order), a line `buckets
/// per_bucket occupancy elements`, then a line of the ranks in insertion
/// order, exactly as the benchmark draws them; sizes the benchmark refuses
/// are refused.
fn dump_ranks(
    path: &str,
    buckets: &[u32],
    per_bucket: &[u32],
    occupancy: &[u32],
    seed: u64,
) -> Result<(), CliError> {
    use std::fmt::Write as _;
    let mut text = String::new();
    for &b in buckets {
        for &occ in occupancy {
            for &k in per_bucket {
                FillDrainConfig {
                    queue: QueueKind::Cffs,
                    buckets: b,
                    per_bucket: k,
                    occupancy: occ,
                    alpha: 1,
                    seed,
                    min_ops: 1,
                    batches: 1,
                }
                .check()?;
                let ranks = fill_drain_ranks(b, k, occ, seed).map_err(PqBenchError::Memory)?;
                let line: Vec<String> = ranks.iter().map(u64::to_string).collect();
                let _ = writeln!(text, "{b} {k} {occ} {}\n{}", ranks.len(), line.join(" "));
            }
        }
    }
    std::fs::write(path, text).map_err(|error| CliError::Write {
        path: path.into(),
        error,
    })
}

/// Runs every combination of the listed parameters.
pub fn run(args: BenchPqArgs) -> Result<(), CliError> {
    let queues = args
        .queues
        .split(',')
        .map(|q| QueueKind::parse(q.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<&str> = queues.iter().map(|q| q.name()).collect();
    no_duplicates("--queues", &names)?;
    if queues.contains(&QueueKind::Approx) && !(1..=MAX_ALPHA).contains(&args.alpha) {
        return Err(FlagError::ValueOutOfRange {
            flag: "--alpha",
            value: args.alpha.to_string(),
            range: format!("1..={MAX_ALPHA}"),
        }
        .into());
    }
    if let Some(path) = &args.chart {
        super::outputs::check_chart_file("--chart", std::path::Path::new(path))?;
    }
    let buckets = parse_list("--buckets", &args.buckets)?;
    let per_bucket = parse_list("--per-bucket", &args.per_bucket)?;
    let occupancy = parse_list("--occupancy", &args.occupancy)?;
    let mut configs = Vec::new();
    for &b in &buckets {
        for &occ in &occupancy {
            for &k in &per_bucket {
                for &queue in &queues {
                    configs.push(FillDrainConfig {
                        queue,
                        buckets: b,
                        per_bucket: k,
                        occupancy: occ,
                        alpha: args.alpha,
                        seed: args.seed,
                        min_ops: args.min_ops,
                        batches: args.batches,
                    });
                }
            }
        }
    }
    let rounds = args.rounds;
    // Every size, the memory of the largest and the inserts of the whole
    // sweep, before the first queue is built.
    check_sweep(&configs, rounds)?;
    if let Some(path) = &args.dump_ranks {
        return dump_ranks(path, &buckets, &per_bucket, &occupancy, args.seed);
    }
    let mut results: Vec<FillDrainResult> = Vec::with_capacity(configs.len());
    let total = configs.len() as u64 * u64::from(rounds);
    let mut bar = super::progress::Progress::counted(total, "runs", args.json);
    for round in 0..rounds {
        for (i, cfg) in configs.iter().enumerate() {
            bar.set(
                u64::from(round) * configs.len() as u64 + i as u64,
                &format!(
                    "round {}/{rounds}: {} {} buckets x{}",
                    round + 1,
                    cfg.queue.name(),
                    cfg.buckets,
                    cfg.per_bucket
                ),
            );
            let r = run_fill_drain(cfg)?;
            if round == 0 {
                results.push(r);
            } else {
                results[i] = results[i].clone().merge_round(r);
            }
        }
    }
    bar.finish();
    add_ideal_shares(&mut results);
    if args.json {
        for r in &results {
            super::json::print_line(r)?;
        }
    } else {
        print_table(&results, rounds > 1)?;
    }
    if let Some(path) = args.chart {
        write_chart(std::path::Path::new(&path), &results)?;
        if !args.json {
            crate::outln!("chart written to {path}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(queue: &'static str, buckets: u32, per_bucket: u32, mpps: f64) -> FillDrainResult {
        FillDrainResult {
            queue,
            buckets,
            per_bucket,
            occupancy: 100,
            mpps,
            ..run_fill_drain(&FillDrainConfig {
                queue: QueueKind::parse("cffs").unwrap(),
                buckets: 16,
                per_bucket: 1,
                occupancy: 100,
                alpha: 16,
                seed: 1,
                min_ops: 16,
                batches: 1,
            })
            .unwrap()
        }
    }

    /// `--dump-ranks` writes the benchmark's own rank sequence per
    /// configuration (what `scripts/vs-eiffel.py` replays), and refuses a
    /// configuration the benchmark refuses.
    #[test]
    fn dumped_ranks_are_the_benchmarks() {
        let dir = std::env::temp_dir().join(format!("fairway-pq-dump-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ranks.txt");
        let p = path.to_str().unwrap();
        dump_ranks(p, &[300, 40], &[2], &[50], 7).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        for (i, b) in [300u32, 40].into_iter().enumerate() {
            let expected = fill_drain_ranks(b, 2, 50, 7).unwrap();
            assert_eq!(lines[2 * i], format!("{b} 2 50 {}", expected.len()));
            let got: Vec<u64> = lines[2 * i + 1]
                .split(' ')
                .map(|r| r.parse().unwrap())
                .collect();
            assert_eq!(got, expected);
        }
        assert!(dump_ranks(p, &[1], &[1], &[50], 7).is_err(), "one bucket");
        assert!(dump_ranks(p, &[10], &[1], &[101], 7).is_err(), "101 %");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn every_measured_line_is_plotted_ideal_dashed() {
        let results = vec![
            result("cffs", 5000, 1, 50.0),
            result("cffs", 5000, 4, 60.0),
            result("cffs", 10000, 1, 45.0),
            result("ideal", 5000, 1, 90.0),
            result("ideal", 5000, 4, 95.0),
        ];
        let s = chart_series(&results);
        assert_eq!(s.len(), 3, "{s:?}");
        assert_eq!(s[0].points, vec![(1.0, 50.0), (4.0, 60.0)]);
        assert!(s[2].dashed && s[2].name.starts_with("ideal"));
        assert!(!s[0].dashed && s[0].color != s[1].color);
        let dir = std::env::temp_dir().join(format!("fairway-pq-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pq.svg");
        write_chart(&path, &results).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("ideal 5000 buckets"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
