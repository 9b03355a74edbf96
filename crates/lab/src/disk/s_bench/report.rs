//! What `s-bench` reports: for each workload case (a row of S's table)
//! and each scheduler (a column), the replayed start-up time and the
//! greedy workers' aggregate throughput (over S's whole iteration loop,
//! as S reports it, and during the replays only), with the CPU time per
//! request; and the targets, checked against the figures.

use super::load::DeviceLoad;
use super::workers::SeqReads;
use serde::Serialize;

/// One scheduler's figures in one case.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// `none`, `mq-deadline`, `kyber`, `bfq` (the kernel's) or
    /// `fairway-bfq`.
    pub scheduler: String,
    /// Mean start-up time of the replays that finished, seconds (`None`
    /// if every replay hit the time limit).
    pub startup_s: Option<f64>,
    /// Each replay's time, seconds (a timed-out one at the limit).
    pub startup_runs_s: Vec<f64>,
    /// Replays stopped at the time limit.
    pub timed_out: u32,
    /// The hypervisor's passes of free page reports during each replay,
    /// which pause a virtual disk ([`super::page_reporting`]); empty on a
    /// machine without free page reporting.
    pub host_reports_runs: Vec<u64>,
    /// The greedy workers' aggregate MB/s (read and written) over S's
    /// iteration loop, pauses and replays, as S's `iostat` samples cover
    /// it (0 idle).
    pub throughput_mb_s: f64,
    /// The greedy workers' aggregate MB/s during the replays only (0
    /// idle).
    pub startup_throughput_mb_s: f64,
    /// Requests completed over the measured phase (workers and replay).
    pub requests: u64,
    /// CPU microseconds per request (see `cpu_source`).
    pub cpu_us_per_request: Option<f64>,
    /// Where the CPU time comes from: `engine thread` (measured) or
    /// `process system time` (the kernel's, an approximation).
    pub cpu_source: &'static str,
    /// The whole process's CPU time (user and system, every thread:
    /// workers, replay, engine) per request, the same clock on both sides.
    pub process_cpu_us_per_request: Option<f64>,
    /// The device's load while the workers ran alone (the warm-up).
    pub device_load: Option<DeviceLoad>,
}

/// What fairway's sequential readers kept outstanding in a case, and
/// where it came from.
#[derive(Clone, Debug, Serialize)]
pub struct ReaderShape {
    /// Direct reads outstanding per reader.
    pub depth: u32,
    /// Bytes per read.
    pub bytes: u32,
    /// Whether the measured mean read was above the engine's largest
    /// request: then `bytes` is that largest request and `depth` keeps the
    /// measured bytes in flight per reader.
    pub split: bool,
    /// The measurement it follows: the kernel's `none` column of the case,
    /// or a run of the readers alone under `none` when that column is not
    /// in the table.
    pub measured_in: &'static str,
    /// The measured load it follows.
    pub load: DeviceLoad,
}

/// One workload case: a row.
#[derive(Clone, Debug, Serialize)]
pub struct CaseRow {
    /// `idle`, `5r-seq`, `10r-seq`, `5r5w-seq`, `10r-rand`.
    pub case: String,
    /// Greedy readers.
    pub readers: u32,
    /// Greedy writers.
    pub writers: u32,
    /// `seq` or `rand`.
    pub pattern: &'static str,
    /// One per scheduler, in [`SReport::schedulers`] order.
    pub cells: Vec<Cell>,
    /// fairway's sequential readers' depth and size when measured.
    pub fairway_readers: Option<ReaderShape>,
}

/// A target of the issue, checked.
#[derive(Clone, Debug, Serialize)]
pub struct TargetCheck {
    /// What is compared.
    pub name: String,
    /// The measured ratio.
    pub ratio: Option<f64>,
    /// For the throughput target, the same ratio during the replays only
    /// (reported beside it; the target uses S's measure, `ratio`).
    pub ratio_during_startup: Option<f64>,
    /// The limit (`ratio <= limit`, or `>=` for throughput).
    pub limit: f64,
    /// Whether it holds.
    pub met: bool,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct SReport {
    /// The replayed trace's name.
    pub trace: String,
    /// Its requests.
    pub trace_requests: usize,
    /// Its processes.
    pub trace_threads: usize,
    /// The image (and loop device) size, MiB.
    pub image_mib: u64,
    /// Each greedy worker's region, MiB.
    pub region_mib: u64,
    /// Replays per case and scheduler.
    pub reps: u32,
    /// Seconds the workers ran before the first replay.
    pub warmup_s: f64,
    /// S's loop: seconds before the cache is dropped, between the drop
    /// and the replay, and after a replay shorter than 2 s.
    pub pause_before_s: f64,
    /// See `pause_before_s`.
    pub pause_settle_s: f64,
    /// See `pause_before_s`.
    pub pause_after_s: f64,
    /// fairway's engine: transfers in flight at once.
    pub in_flight: u32,
    /// fairway's engine: its largest request, bytes.
    pub max_request: u32,
    /// Where both sides' direct-I/O buffers live.
    pub buffers: super::buffers::Buffers,
    /// How the sequential readers read (`buffered`: S's readers on the
    /// kernel's side, the measured shape on fairway's; `batch`: the
    /// `--reader-depth` override).
    pub reads: SeqReads,
    /// fairway's engine: `device-thread` or `inline` submission.
    pub submission: &'static str,
    /// Whether the threads ran under `SCHED_RR`.
    pub realtime: bool,
    /// What the run did about the virtual machine's free page reporting
    /// (`absent`, `paused for the run`, `left on (why)`).
    pub page_reporting: String,
    /// fairway's BFQ spec.
    pub fairway_spec: String,
    /// The columns.
    pub schedulers: Vec<String>,
    /// The rows.
    pub cases: Vec<CaseRow>,
    /// The targets.
    pub targets: Vec<TargetCheck>,
}

impl SReport {
    /// The cell of `case` and `scheduler`.
    pub fn cell(&self, case: &str, scheduler: &str) -> Option<&Cell> {
        self.cases
            .iter()
            .find(|c| c.case == case)?
            .cells
            .iter()
            .find(|c| c.scheduler == scheduler)
    }

    /// Checks the targets: under 10 sequential readers, fairway's BFQ's
    /// start-up at most 1.5 × its idle one and at most 1/5 of `none`'s
    /// and `mq-deadline`'s; its readers' throughput at least 0.9 × the
    /// kernel BFQ's.
    pub fn check_targets(&mut self) {
        let start = |case, s| self.cell(case, s).and_then(|c| c.startup_s);
        let thr = |s| self.cell("10r-seq", s).map(|c| c.throughput_mb_s);
        let during = |s| self.cell("10r-seq", s).map(|c| c.startup_throughput_mb_s);
        let f = start("10r-seq", "fairway-bfq");
        let ratio = |a: Option<f64>, b: Option<f64>| Some(a? / b?);
        let mut t = vec![(
            "fairway-bfq start-up, 10r-seq / idle".to_string(),
            ratio(f, start("idle", "fairway-bfq")),
            None,
            1.5,
            false,
        )];
        for k in ["none", "mq-deadline"] {
            // A kernel replay that timed out took longer than the limit.
            let other = start("10r-seq", k).or_else(|| {
                self.cell("10r-seq", k)
                    .and_then(|c| c.startup_runs_s.iter().copied().reduce(f64::max))
            });
            t.push((
                format!("fairway-bfq / {k} start-up, 10r-seq"),
                ratio(f, other),
                None,
                0.2,
                false,
            ));
        }
        t.push((
            "fairway-bfq / kernel bfq readers' MB/s, 10r-seq".into(),
            ratio(thr("fairway-bfq"), thr("bfq")),
            ratio(during("fairway-bfq"), during("bfq")),
            0.9,
            true,
        ));
        self.targets = t
            .into_iter()
            .map(
                |(name, ratio, ratio_during_startup, limit, at_least)| TargetCheck {
                    met: ratio.is_some_and(|r| if at_least { r >= limit } else { r <= limit }),
                    name,
                    ratio,
                    ratio_during_startup,
                    limit,
                },
            )
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(scheduler: &str, startup: f64, loop_mb: f64, during_mb: f64) -> Cell {
        Cell {
            scheduler: scheduler.into(),
            startup_s: Some(startup),
            startup_runs_s: vec![startup],
            timed_out: 0,
            host_reports_runs: Vec::new(),
            throughput_mb_s: loop_mb,
            startup_throughput_mb_s: during_mb,
            requests: 1,
            cpu_us_per_request: None,
            cpu_source: "test",
            process_cpu_us_per_request: None,
            device_load: None,
        }
    }

    fn row(case: &str, cells: Vec<Cell>) -> CaseRow {
        CaseRow {
            case: case.into(),
            readers: 10,
            writers: 0,
            pattern: "seq",
            cells,
            fairway_readers: None,
        }
    }

    #[test]
    fn the_throughput_target_uses_s_measure_and_shows_the_start_up_one_beside() {
        let mut r = SReport {
            trace: "t".into(),
            trace_requests: 1,
            trace_threads: 1,
            image_mib: 1,
            region_mib: 16,
            reps: 1,
            warmup_s: 1.0,
            pause_before_s: 4.0,
            pause_settle_s: 0.2,
            pause_after_s: 2.0,
            in_flight: 64,
            max_request: 1 << 20,
            buffers: crate::disk::s_bench::buffers::Buffers::Huge,
            reads: SeqReads::Buffered,
            submission: "device-thread",
            realtime: false,
            page_reporting: "absent".into(),
            fairway_spec: "bfq".into(),
            schedulers: vec!["none".into(), "bfq".into(), "fairway-bfq".into()],
            cases: vec![
                row(
                    "idle",
                    vec![
                        cell("none", 0.1, 0.0, 0.0),
                        cell("bfq", 0.1, 0.0, 0.0),
                        cell("fairway-bfq", 0.1, 0.0, 0.0),
                    ],
                ),
                row(
                    "10r-seq",
                    vec![
                        cell("none", 2.0, 1000.0, 1000.0),
                        // Over S's loop the kernel's BFQ gives 1000 MB/s,
                        // during the start-up 200; fairway's 950 and 100.
                        cell("bfq", 0.2, 1000.0, 200.0),
                        cell("fairway-bfq", 0.14, 950.0, 100.0),
                    ],
                ),
            ],
            targets: Vec::new(),
        };
        r.check_targets();
        let thr = &r.targets[3];
        assert!(thr.name.contains("MB/s"), "{thr:?}");
        assert!((thr.ratio.unwrap() - 0.95).abs() < 1e-9, "{thr:?}");
        assert!(thr.met, "{thr:?}");
        assert!(
            (thr.ratio_during_startup.unwrap() - 0.5).abs() < 1e-9,
            "{thr:?}"
        );
        let start = &r.targets[0];
        assert!((start.ratio.unwrap() - 1.4).abs() < 1e-9, "{start:?}");
        assert!(start.ratio_during_startup.is_none(), "{start:?}");
    }
}
