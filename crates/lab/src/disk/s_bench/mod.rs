//! The S benchmark suite's start-up latency method (Paolo Valente's S,
//! `comm_startup_lat`) on this machine, in one run: the recorded start-up
//! I/O of an application is replayed while greedy sequential or random
//! readers and writers keep the device busy, under the kernel's
//! schedulers (`none`, `mq-deadline`, `kyber`, `bfq`) and under fairway's
//! BFQ in the embeddable engine ([`fairway_disk::engine`], the kernel at
//! `none`); the start-up time and the workers' throughput (over S's
//! iteration loop, as S measures it, and during the replays only) are
//! reported per case and scheduler, as S's tables do, with each side's
//! CPU time per request.
//!
//! Linux and root only: the storage is a loop device over an image file in
//! `/var/tmp` with direct I/O to the file ([`device`]), removed on every
//! exit path.
//!
//! * [`trace`]: the start-up trace formats (S's and fairway's) and the
//!   synthetic trace; [`mod@replay`]: the replay, as S's replayer does it;
//! * [`workers`]: the greedy readers and writers; [`port`]: the path of
//!   each thread's I/O, [`kernel`] (system calls, [`aio`]) or [`engine`];
//! * [`mod@measure`]: one case under one scheduler; [`load`]: the load the
//!   workers put on the device; [`cpu`]: CPU per request;
//!   [`page_reporting`]: a virtual machine's pauses of its disk, stopped
//!   for the run;
//!   [`report`]: the table's data and the targets.

pub mod aio;
pub mod buffers;
pub mod cpu;
pub mod device;
pub mod engine;
pub mod kernel;
pub mod load;
pub mod measure;
pub mod page_reporting;
pub mod port;
pub mod replay;
pub mod report;
pub mod trace;
pub mod workers;

pub use measure::{Case, CASES};
pub use report::{CaseRow, Cell, ReaderShape, SReport, TargetCheck};
pub use trace::{Trace, TraceError};

pub use super::kernel_bfq::FAIRWAY_BFQ;

/// fairway's BFQ in the engine by default: [`FAIRWAY_BFQ`] (T_max as the
/// kernel's `timeout_sync`) with I/O injection, which the kernel's BFQ
/// always does: while BFQ idles for the application's process that has
/// just been served, the greedy workers' requests keep the device busy
/// (the application's processes hand control to each other, so that
/// idling is often for a process whose turn has passed); and the adaptive
/// device bound's small end at [`S_BENCH_WARM_DEPTH`].
pub const S_BENCH_BFQ: DiskSchedSpec = match FAIRWAY_BFQ {
    DiskSchedSpec::Bfq {
        b_max,
        t_wait_ms,
        t_fifo_ms,
        t_max_ms,
        low_latency,
        ..
    } => DiskSchedSpec::Bfq {
        b_max,
        t_wait_ms,
        t_fifo_ms,
        t_max_ms,
        low_latency,
        inject: true,
        warm_depth: S_BENCH_WARM_DEPTH,
    },
    spec => spec,
};

/// The greedy readers' requests in flight while the application starts
/// (BFQ's `warm_depth`): BFQ's default, as the kernel's BFQ is measured
/// with its defaults. S's throughput figure covers its whole iteration
/// loop, in which the application runs a small part of the time, so a
/// larger value buys the readers little of that figure and costs the
/// application's every request a longer wait; `--spec
/// bfq:…,warm_depth=N` chooses another.
pub const S_BENCH_WARM_DEPTH: u32 = fairway_disk::bfq::DEFAULT_WARM_DEPTH;
use device::{Image, LoopDev};
use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::engine::{EngineError, Submission, DEFAULT_MAX_REQUEST, MAX_REQUEST_LIMIT};
use measure::{app_bytes, measure, Plan, Probe, MAX_WORKERS};
pub use measure::{Pauses, QUICK_LOOP, S_LOOP};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use workers::SeqReads;

/// The kernel's schedulers compared, in the table's column order.
pub const KERNEL_SCHEDULERS: [&str; 4] = ["none", "mq-deadline", "kyber", "bfq"];
/// The name of the engine's device thread.
const ENGINE_THREAD: &str = "fairway-engine";
/// fairway's column.
pub const FAIRWAY: &str = "fairway-bfq";
/// Range of [`SBenchConfig::region_mib`].
pub const REGION_MIB: (u64, u64) = (16, 4096);
/// Range of [`SBenchConfig::reps`].
pub const REPS: (u32, u32) = (1, 100);
/// Range of the warm-up, seconds.
pub const WARMUP_S: (u64, u64) = (0, 600);
/// Range of a replay's time limit, seconds.
pub const MAX_STARTUP_S: (u64, u64) = (1, 600);

/// Why `s-bench` did not produce its table.
#[derive(Debug, Error)]
pub enum SBenchError {
    /// Not root.
    #[error("skipped, needs root")]
    NeedsRoot,
    /// A tool is missing.
    #[error("skipped, needs {0}")]
    Missing(&'static str),
    /// The kernel offers no such scheduler for loop devices.
    #[error("skipped, the loop device offers no `{0}` scheduler")]
    NoScheduler(String),
    /// io_uring is unavailable.
    #[error("skipped, io_uring unavailable: {0}")]
    NoUring(String),
    /// The image would not fit.
    #[error("the image needs {need_mib} MiB and /var/tmp has {free_mib} MiB free")]
    NoSpace {
        /// Size of the image.
        need_mib: u64,
        /// Free space.
        free_mib: u64,
    },
    /// A configuration value outside its range.
    #[error("{name} = {value} is out of range (allowed: {allowed})")]
    OutOfRange {
        /// The value's name.
        name: &'static str,
        /// The value.
        value: u64,
        /// The range.
        allowed: String,
    },
    /// A name that is not one of the list.
    #[error("unknown {what} `{name}`")]
    Unknown {
        /// What it names.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// The start-up trace.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
    /// A system call or a file.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: String,
        /// Why.
        source: std::io::Error,
    },
    /// A command (`losetup`) failed.
    #[error("{0}")]
    Command(String),
    /// The engine refused something.
    #[error("fairway engine: {0}")]
    Engine(#[from] EngineError),
    /// A request of the engine failed.
    #[error("fairway engine request: {0}")]
    Submit(String),
    /// A thread panicked.
    #[error("a {0} thread panicked")]
    Panicked(&'static str),
}

impl SBenchError {
    /// Whether the measurement could not run here (as opposed to failing).
    pub fn is_skip(&self) -> bool {
        matches!(
            self,
            Self::NeedsRoot | Self::Missing(_) | Self::NoScheduler(_) | Self::NoUring(_)
        )
    }
}

/// True once Ctrl-C was pressed (after the CLI installed its handler).
pub fn interrupted() -> bool {
    fairway_runtime::net::interrupted()
}

/// How the run is made.
#[derive(Clone, Debug)]
pub struct SBenchConfig {
    /// The rows: a subset of [`CASES`], in this order.
    pub cases: Vec<Case>,
    /// The columns: names of [`KERNEL_SCHEDULERS`] and [`FAIRWAY`].
    pub schedulers: Vec<String>,
    /// Run the benchmark's threads under `SCHED_RR` (priority 1), so that
    /// other load on the machine delays them less.
    pub realtime: bool,
    /// Leave the virtual machine's free page reporting on during the run
    /// (by default it is paused: [`page_reporting::Pause`]).
    pub keep_page_reporting: bool,
    /// Each greedy worker's region, MiB, `16..=4096`.
    pub region_mib: u64,
    /// Replays per case and scheduler, `1..=100`.
    pub reps: u32,
    /// Seconds the workers run before the first replay, `0..=600`.
    pub warmup_s: u64,
    /// S's iteration loop around each replay ([`measure::S_LOOP`], or
    /// [`measure::QUICK_LOOP`]).
    pub pauses: Pauses,
    /// A replay's time limit, seconds, `1..=600`.
    pub max_startup_s: u64,
    /// The engine's transfers in flight, `1..=256`.
    pub in_flight: u32,
    /// The engine's largest request, bytes
    /// ([`fairway_disk::engine::EngineConfig::max_request`]): fairway's
    /// sequential readers read at most this much at a time.
    pub max_request: u32,
    /// `None`: S's sequential readers (4 KiB reads through the page cache
    /// on the kernel's side; on fairway's, the depth and size they were
    /// measured to put on the device). `Some(n)`, `1..=MAX_READER_DEPTH`:
    /// batches of `n` direct 128 KiB reads on both sides (1: one
    /// synchronous read after another).
    pub reader_depth: Option<u32>,
    /// How fairway's engine submits: from its device thread, or inline in
    /// the submitting threads.
    pub submission: Submission,
    /// fairway's scheduler in the engine (default [`S_BENCH_BFQ`]).
    pub spec: DiskSchedSpec,
    /// Where both sides' direct-I/O buffers live ([`buffers`]).
    pub buffers: buffers::Buffers,
}

fn check(name: &'static str, value: u64, (lo, hi): (u64, u64)) -> Result<(), SBenchError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(SBenchError::OutOfRange {
            name,
            value,
            allowed: format!("{lo}..={hi}"),
        })
    }
}

impl SBenchConfig {
    /// Checks every value's range.
    pub fn validate(&self) -> Result<(), SBenchError> {
        if let Some(s) = self
            .schedulers
            .iter()
            .find(|s| !KERNEL_SCHEDULERS.contains(&s.as_str()) && *s != FAIRWAY)
        {
            return Err(SBenchError::Unknown {
                what: "scheduler",
                name: s.clone(),
            });
        }
        check("cases", self.cases.len() as u64, (1, CASES.len() as u64))?;
        check(
            "schedulers",
            self.schedulers.len() as u64,
            (1, KERNEL_SCHEDULERS.len() as u64 + 1),
        )?;
        check("region_mib", self.region_mib, REGION_MIB)?;
        check(
            "reps",
            u64::from(self.reps),
            (u64::from(REPS.0), u64::from(REPS.1)),
        )?;
        check("warmup_s", self.warmup_s, WARMUP_S)?;
        check("max_startup_s", self.max_startup_s, MAX_STARTUP_S)?;
        check("in_flight", u64::from(self.in_flight), (1, 256))?;
        let (lo, hi) = (DEFAULT_MAX_REQUEST, MAX_REQUEST_LIMIT);
        if !(lo..=hi).contains(&self.max_request) || !self.max_request.is_multiple_of(4096) {
            return Err(SBenchError::OutOfRange {
                name: "max_request",
                value: u64::from(self.max_request),
                allowed: format!("{lo}..={hi} bytes, a multiple of 4096"),
            });
        }
        match self.reader_depth {
            None => Ok(()),
            Some(d) => check(
                "reader_depth",
                u64::from(d),
                (1, u64::from(workers::MAX_READER_DEPTH)),
            ),
        }
    }

    /// The image's size for `trace`, MiB.
    pub fn image_mib(&self, trace: &Trace) -> u64 {
        (app_bytes(trace) >> 20) + MAX_WORKERS * self.region_mib
    }
}

fn free_mib(dir: &str) -> Option<u64> {
    let c = std::ffi::CString::new(dir).ok()?;
    // SAFETY: statvfs fills the zeroed struct; `c` is a valid C string.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0)
        .then(|| (s.f_bavail as u64 * s.f_frsize as u64) >> 20)
}

/// Checks what the run needs: root, `losetup`, the space for the image.
fn preflight(config: &SBenchConfig, trace: &Trace) -> Result<(), SBenchError> {
    config.validate()?;
    if !device::is_root() {
        return Err(SBenchError::NeedsRoot);
    }
    if !device::has("losetup") {
        return Err(SBenchError::Missing("losetup"));
    }
    let need_mib = config.image_mib(trace);
    let free_mib = free_mib("/var/tmp").unwrap_or(0);
    // Keep 1 GiB for everyone else.
    if need_mib + 1024 > free_mib {
        return Err(SBenchError::NoSpace { need_mib, free_mib });
    }
    Ok(())
}

/// Runs every case under every scheduler; `step(done, total, what)` is
/// called before each cell.
pub fn run(
    config: &SBenchConfig,
    trace: Trace,
    step: &mut dyn FnMut(usize, usize, &str),
) -> Result<SReport, SBenchError> {
    preflight(config, &trace)?;
    let reporting = page_reporting::Pause::start(config.keep_page_reporting);
    let image = Image::create(config.image_mib(&trace) << 20)?;
    let dev = LoopDev::attach(&image)?;
    let offered = dev.schedulers();
    let wanted = config
        .schedulers
        .iter()
        .map(|s| if s == FAIRWAY { "none" } else { s.as_str() });
    if let Some(s) = wanted.into_iter().find(|s| !offered.iter().any(|o| o == s)) {
        return Err(SBenchError::NoScheduler(s.to_string()));
    }
    if config.realtime {
        // Threads inherit the policy: the workers, the replay and the
        // engine's device thread all run under it.
        fairway_runtime::net::set_round_robin_priority(1).map_err(|e| SBenchError::Io {
            what: "SCHED_RR".into(),
            source: e,
        })?;
    }
    let plan = Plan {
        app_bytes: app_bytes(&trace),
        region: config.region_mib << 20,
        reps: config.reps,
        warmup: Duration::from_secs(config.warmup_s),
        pauses: config.pauses,
        max_startup: Duration::from_secs(config.max_startup_s),
        seed: 0x5eed,
        reads: match config.reader_depth {
            None => SeqReads::Buffered,
            Some(depth) => SeqReads::Batch { depth },
        },
    };
    let trace = Arc::new(trace);
    let schedulers = config.schedulers.clone();
    let total = config.cases.len() * schedulers.len();
    let mut cases = Vec::new();
    for (ci, case) in config.cases.iter().enumerate() {
        let mut cells: Vec<Cell> = Vec::new();
        let mut shape = None;
        for (si, s) in schedulers.iter().enumerate() {
            step(
                ci * schedulers.len() + si,
                total,
                &format!("{} under {s}", case.name),
            );
            let mut plan = plan;
            if s == FAIRWAY && plan.reads == SeqReads::Buffered {
                let measured = cells.iter().find(|c| c.scheduler == "none");
                shape = reader_shape(&dev, case, &plan, &trace, measured, config)?;
                plan.reads =
                    shape
                        .as_ref()
                        .map_or(SeqReads::Batch { depth: 1 }, |r| SeqReads::Pipelined {
                            depth: r.depth,
                            bytes: r.bytes,
                        });
            }
            cells.push(cell(&dev, s, case, &plan, &trace, config)?);
        }
        cases.push(CaseRow {
            case: case.name.into(),
            readers: case.readers,
            writers: case.writers,
            pattern: if case.rand { "rand" } else { "seq" },
            cells,
            fairway_readers: shape,
        });
    }
    step(total, total, "done");
    let mut report = SReport {
        trace: trace.name.clone(),
        trace_requests: trace.requests.len(),
        trace_threads: trace.threads.len(),
        image_mib: config.image_mib(&trace),
        region_mib: config.region_mib,
        reps: config.reps,
        warmup_s: config.warmup_s as f64,
        pause_before_s: config.pauses.before.as_secs_f64(),
        pause_settle_s: config.pauses.settle.as_secs_f64(),
        pause_after_s: config.pauses.after.as_secs_f64(),
        in_flight: config.in_flight,
        max_request: config.max_request,
        buffers: config.buffers,
        reads: plan.reads,
        submission: match config.submission {
            Submission::Inline => "inline",
            _ => "device-thread",
        },
        realtime: config.realtime,
        page_reporting: reporting.state.to_string(),
        fairway_spec: config.spec.to_string(),
        schedulers,
        cases,
        targets: Vec::new(),
    };
    report.check_targets();
    drop(dev);
    drop(image);
    drop(reporting);
    Ok(report)
}

/// The depth and size of fairway's sequential readers in `case`: those
/// S's readers were measured to put on the device under the kernel's
/// `none` (the cell `measured`, or a run of the readers alone under
/// `none`); `None` when the case has no sequential readers.
fn reader_shape(
    dev: &LoopDev,
    case: &Case,
    plan: &Plan,
    trace: &Arc<Trace>,
    measured: Option<&Cell>,
    config: &SBenchConfig,
) -> Result<Option<ReaderShape>, SBenchError> {
    if case.rand || case.readers == 0 {
        return Ok(None);
    }
    let (load, measured_in) = match measured.and_then(|c| c.device_load) {
        Some(l) => (l, "none"),
        None => {
            let alone = Case {
                writers: 0,
                ..*case
            };
            let quiet = Plan { reps: 0, ..*plan };
            let c = cell(dev, "none", &alone, &quiet, trace, config)?;
            match c.device_load {
                Some(l) => (l, "readers alone under none"),
                None => {
                    return Err(SBenchError::Command(format!(
                    "the readers' load on {} could not be measured (its stat and inflight files)",
                    dev.dev
                )))
                }
            }
        }
    };
    let (depth, bytes, split) = load::reader_shape(&load, case.readers, config.max_request);
    if depth > workers::MAX_READER_DEPTH {
        return Err(SBenchError::OutOfRange {
            name: "measured reader depth (reads kept in flight by each reader)",
            value: u64::from(depth),
            allowed: format!(
                "1..={}: the engine's queue per reader; pass --reader-depth to choose one",
                workers::MAX_READER_DEPTH
            ),
        });
    }
    Ok(Some(ReaderShape {
        depth,
        bytes,
        split,
        measured_in,
        load,
    }))
}

/// One case under one scheduler, the device's page cache dropped first.
fn cell(
    dev: &LoopDev,
    scheduler: &str,
    case: &Case,
    plan: &Plan,
    trace: &Arc<Trace>,
    config: &SBenchConfig,
) -> Result<Cell, SBenchError> {
    dev.drop_cache()?;
    if scheduler == FAIRWAY {
        dev.set_scheduler("none")?;
        let ports = engine::EnginePorts::start(
            &dev.dev,
            config.spec,
            config.in_flight,
            config.max_request,
            config.submission,
            config.buffers,
        )?;
        // The device thread names itself once it runs: wait for that, so
        // the first reading of its clock finds it.
        let named = std::time::Instant::now();
        while cpu::thread_named(ENGINE_THREAD).is_none() && named.elapsed() < Duration::from_secs(1)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        let cpu = || cpu::thread_named(ENGINE_THREAD);
        let probe = Probe {
            dev: &dev.dev,
            cpu: &cpu,
            source: "engine thread",
        };
        let c = measure(&ports, case, plan, trace, &probe, scheduler);
        ports.shutdown();
        c
    } else {
        dev.set_scheduler(scheduler)?;
        let ports = kernel::KernelPorts {
            dev: dev.dev.clone(),
            buffers: config.buffers,
        };
        let cpu = || Some(cpu::process_system());
        let probe = Probe {
            dev: &dev.dev,
            cpu: &cpu,
            source: "process system time",
        };
        measure(&ports, case, plan, trace, &probe, scheduler)
    }
}
