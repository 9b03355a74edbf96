//! One cell of S's table: one workload case under one scheduler. The
//! greedy workers start, run through a warm-up (S waits for the kernel
//! BFQ's weight raising of new processes to end before it measures), then
//! the start-up trace is replayed `reps` times in S's iteration loop
//! ([`Pauses`]), the workers running throughout. The workers' bytes are
//! counted twice: over the whole loop, as S's `iostat` samples do, and
//! during the replays only. The device's load is sampled during the
//! warm-up (the workers alone, [`super::load`]), and the requests of the
//! measured phase are the device's own count of what it completed.

use super::load::{stat, Sampler};
use super::page_reporting;
use super::port::{Counters, Op, Port, Ports};
use super::replay::{replay, APP_REGION};
use super::report::Cell;
use super::trace::Trace;
use super::workers::{spawn, Region, SeqReads, WorkerKind};
use super::SBenchError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A workload case: a row of S's table.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// Its name in the report.
    pub name: &'static str,
    /// Greedy readers.
    pub readers: u32,
    /// Greedy writers.
    pub writers: u32,
    /// Random (else sequential) readers.
    pub rand: bool,
}

/// The cases S's published start-up tables have.
pub const CASES: [Case; 5] = [
    Case {
        name: "idle",
        readers: 0,
        writers: 0,
        rand: false,
    },
    Case {
        name: "5r-seq",
        readers: 5,
        writers: 0,
        rand: false,
    },
    Case {
        name: "10r-seq",
        readers: 10,
        writers: 0,
        rand: false,
    },
    Case {
        name: "5r5w-seq",
        readers: 5,
        writers: 5,
        rand: false,
    },
    Case {
        name: "10r-rand",
        readers: 10,
        writers: 0,
        rand: true,
    },
];

/// Most greedy workers of a case: each gets its own region.
pub const MAX_WORKERS: u64 = 10;

/// How each cell is measured.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Bytes of the application's regions (before the workers').
    pub app_bytes: u64,
    /// Bytes of each worker's region.
    pub region: u64,
    /// Replays.
    pub reps: u32,
    /// Workers alone before the first replay.
    pub warmup: Duration,
    /// S's iteration loop around each replay.
    pub pauses: Pauses,
    /// A replay's time limit.
    pub max_startup: Duration,
    /// Seed of the random offsets.
    pub seed: u64,
    /// How the sequential readers read.
    pub reads: SeqReads,
}

/// S's iteration loop (`comm_startup_lat/comm_startup_lat.sh`, the
/// iterations of its `invoke_commands`): before each start-up,
/// `sleep $SLEEPTIME_ITER` (3 s) and `sleep 1`; the caches dropped
/// (`echo 3 > /proc/sys/vm/drop_caches`); `time sleep 0.2`; the command;
/// then `sleep 2` when the start-up took less than 2 s. S's `iostat` runs
/// over the whole loop, so its throughput covers these pauses too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pauses {
    /// Before the page cache is dropped (S: 3 s + 1 s).
    pub before: Duration,
    /// After the drop, before the replay (S: 0.2 s).
    pub settle: Duration,
    /// After a replay shorter than [`Pauses::short`] (S: 2 s).
    pub after: Duration,
    /// What counts as a short replay (S: 2 s).
    pub short: Duration,
}

/// S's loop, as `comm_startup_lat.sh` runs it.
pub const S_LOOP: Pauses = Pauses {
    before: Duration::from_secs(4),
    settle: Duration::from_millis(200),
    after: Duration::from_secs(2),
    short: Duration::from_secs(2),
};

/// `--quick`'s shorter loop: the pauses of S's loop cut to 1 s, 0.2 s and
/// 0.5 s (the application's clients are still idle for at least BFQ's
/// `WR_MIN_IDLE` and 0.2 s before each replay: the loop waits for that).
pub const QUICK_LOOP: Pauses = Pauses {
    before: Duration::from_secs(1),
    settle: Duration::from_millis(200),
    after: Duration::from_millis(500),
    short: Duration::from_secs(2),
};

/// The device (`/dev/loopN`, for its counters) and the side's CPU clocks.
pub struct Probe<'a> {
    /// The block device.
    pub dev: &'a str,
    /// The side's CPU time (`source` names it).
    pub cpu: &'a dyn Fn() -> Option<Duration>,
    /// What `cpu` measures.
    pub source: &'static str,
}

/// The running workers; stopped and joined on drop, whatever happened.
struct Crew {
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<Result<(), SBenchError>>>,
}

impl Crew {
    fn finish(mut self) -> Result<(), SBenchError> {
        self.stop.store(true, Ordering::Relaxed);
        let mut first = Ok(());
        for h in self.handles.drain(..) {
            let r = h.join().unwrap_or(Err(SBenchError::Panicked("worker")));
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Sleeps `d`, returning early with the error of a worker that failed
    /// or at Ctrl-C.
    fn sleep(&mut self, d: Duration) -> Result<(), SBenchError> {
        let end = Instant::now() + d;
        while Instant::now() < end {
            if super::interrupted() {
                return Err(SBenchError::Interrupted);
            }
            if let Some(i) = self.handles.iter().position(|h| h.is_finished()) {
                let h = self.handles.swap_remove(i);
                return Err(h
                    .join()
                    .unwrap_or(Err(SBenchError::Panicked("worker")))
                    .err()
                    .unwrap_or(SBenchError::Panicked("worker stopped")));
            }
            std::thread::sleep(
                Duration::from_millis(20).min(end.saturating_duration_since(Instant::now())),
            );
        }
        Ok(())
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// Measures `case` on `ports`, reading the device's counters and the
/// side's CPU clock through `probe`.
pub fn measure<S: Ports>(
    ports: &S,
    case: &Case,
    plan: &Plan,
    trace: &Arc<Trace>,
    probe: &Probe<'_>,
    scheduler: &str,
) -> Result<Cell, SBenchError> {
    let counters = Arc::new(Counters::default());
    let mut apps = Vec::new();
    for _ in 0..plan.reps {
        apps.push(touched_app(ports, trace)?);
    }
    let touched = Instant::now();
    let mut crew = Crew {
        stop: Arc::default(),
        handles: Vec::new(),
    };
    for i in 0..case.readers + case.writers {
        let kind = match (i < case.readers, case.rand) {
            (false, _) => WorkerKind::SeqWriter,
            (true, true) => WorkerKind::RandReader,
            (true, false) => WorkerKind::SeqReader,
        };
        let region = Region {
            base: plan.app_bytes + u64::from(i) * plan.region,
            len: plan.region,
        };
        let h = spawn(
            kind,
            plan.reads,
            ports.port()?,
            region,
            plan.seed + u64::from(i),
            crew.stop.clone(),
            counters.clone(),
        )?;
        crew.handles.push(h);
    }
    let mut device_load = None;
    if !crew.handles.is_empty() {
        let sampler = Sampler::start(probe.dev);
        crew.sleep(plan.warmup)?;
        device_load = sampler.finish();
    }
    let cpu0 = (probe.cpu)();
    let all0 = super::cpu::process_total();
    let (_, r0) = counters.snapshot();
    let s0 = stat(probe.dev);
    // S's iostat starts here, after the workers' transitory.
    let (loop_b0, _) = counters.snapshot();
    let loop_t0 = Instant::now();
    let (mut bytes, mut secs, mut runs, mut timed_out) = (0u64, 0f64, Vec::new(), 0u32);
    let mut reports = Vec::new();
    for (rep, app) in (0..plan.reps).zip(apps) {
        crew.sleep(plan.pauses.before)?;
        drop_cache(probe.dev)?;
        crew.sleep(plan.pauses.settle)?;
        crew.sleep(APP_IDLE.saturating_sub(touched.elapsed()))?;
        let (b0, _) = counters.snapshot();
        let seed = plan.seed ^ (u64::from(rep) + 1).wrapping_mul(0x1234_5678_9abc);
        let reports0 = page_reporting::reports();
        let r = replay(trace, app, 0, seed, plan.max_startup, &counters)?;
        if let (Some(a), Some(b)) = (reports0, page_reporting::reports()) {
            reports.push(b.saturating_sub(a));
        }
        let (b1, _) = counters.snapshot();
        bytes += b1 - b0;
        secs += r.secs;
        runs.push(r.secs);
        timed_out += u32::from(r.timed_out);
        if r.secs < plan.pauses.short.as_secs_f64() {
            crew.sleep(plan.pauses.after)?;
        }
    }
    let (loop_b1, _) = counters.snapshot();
    let loop_secs = loop_t0.elapsed().as_secs_f64();
    let cpu1 = (probe.cpu)();
    let all1 = super::cpu::process_total();
    let (_, r1) = counters.snapshot();
    let s1 = stat(probe.dev);
    crew.finish()?;
    // What the device completed: the page cache turns S's readers' many
    // small reads into fewer large ones, and the CPU is per device request.
    let requests = match (s0, s1) {
        (Some(a), Some(b)) => (b.reads + b.writes).saturating_sub(a.reads + a.writes),
        _ => r1 - r0,
    };
    let per = |d: Duration| d.as_secs_f64() * 1e6 / requests as f64;
    let mean = runs.iter().sum::<f64>() / runs.len().max(1) as f64;
    Ok(Cell {
        scheduler: scheduler.to_string(),
        startup_s: (timed_out == 0 && !runs.is_empty()).then_some(mean),
        startup_runs_s: runs,
        timed_out,
        host_reports_runs: reports,
        throughput_mb_s: mb_s(loop_b1 - loop_b0, loop_secs),
        startup_throughput_mb_s: mb_s(bytes, secs),
        requests,
        cpu_us_per_request: match (cpu0, cpu1) {
            (Some(a), Some(b)) if requests > 0 => Some(per(b.saturating_sub(a))),
            _ => None,
        },
        cpu_source: probe.source,
        process_cpu_us_per_request: (requests > 0).then(|| per(all1.saturating_sub(all0))),
        device_load,
    })
}

/// `bytes` over `secs`, MB/s (10^6 bytes; 0 for no time).
fn mb_s(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 / secs / 1e6
    } else {
        0.0
    }
}

/// Drops the page cache of `dev`, as S drops every cache before each
/// start-up: the kernel's sequential readers lose what read-ahead had
/// fetched for them; fairway's, reading `O_DIRECT`, have nothing there.
fn drop_cache(dev: &str) -> Result<(), SBenchError> {
    let f = std::fs::File::open(dev).map_err(|e| SBenchError::Io {
        what: dev.to_string(),
        source: e,
    })?;
    super::kernel::drop_cache(&f, 0, 0)
}

/// How long the application's clients have been idle when a replay
/// starts, at least: BFQ's `WR_MIN_IDLE` and a margin.
const APP_IDLE: Duration = Duration::from_nanos(fairway_disk::bfq::WR_MIN_IDLE + 200_000_000);

/// One replay's ports, one per process of the trace, each having read
/// 4 KiB of its region. fairway's BFQ raises the weight of a client that
/// issues after `WR_MIN_IDLE` of idleness following a completion, and a
/// client that never completed anything does not count as idle; the
/// kernel's BFQ counts a new process as idle for long. Registering the
/// replay's clients early, touching the device once, and replaying at
/// least [`APP_IDLE`] later gives fairway's BFQ what the kernel's knows:
/// the application is a task starting after idleness. (The kernel ties a
/// queue to the issuing thread, so the touch, issued from this one, does
/// not change what it sees.)
fn touched_app<S: Ports>(ports: &S, trace: &Trace) -> Result<Vec<S::P>, SBenchError> {
    (0..trace.threads.len())
        .map(|i| {
            let mut p = ports.port()?;
            p.sync(Op::Read, i as u64 * APP_REGION, 4096)?;
            Ok(p)
        })
        .collect()
}

/// The application's regions: 20 MiB per process of the trace.
pub fn app_bytes(trace: &Trace) -> u64 {
    trace.threads.len() as u64 * APP_REGION
}
