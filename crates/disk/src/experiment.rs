//! The experiments of seed 004 §2.4, run on the simulator: sequential
//! readers (aggregate throughput vs B_max, Fig. 5 and its table), weighted
//! bandwidth distribution (1:2, 1:2:10), the web-server-like workload and
//! the streaming workload.
//!
//! The disk is split into 30 equal slices, slice 0 outermost (fastest), as
//! in the thesis. Each run is deterministic for a given seed.

use crate::baseline::{Anticipatory, CLook, Cfq, ScanEdf, Yfq};
use crate::bfq::{Bfq, BfqConfig, DEFAULT_L_MAX};
use crate::model::DiskModel;
use crate::readahead::ReadAhead;
use crate::request::{AppId, DiskConfigError, Nanos, MS, SECTOR_BYTES};
use crate::scheduler::{AppSpec, DiskScheduler};
use crate::sim::Simulation;
use crate::workload::{App, OnOffReader, SeqReader, Streamer, WebProcess};
use serde::Serialize;
use std::cell::Cell;
use std::rc::Rc;

/// Number of disk slices (§2.4).
pub const SLICES: u64 = 30;
/// Fewest chunks due in the loss window before the loss rate counts.
pub const MIN_CHUNKS: u64 = 100;
/// One second in ns.
pub const SEC: Nanos = 1_000_000_000;

/// A scheduler and its configuration parameter, as in the thesis' tables.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum SchedSpec {
    /// BFQ, simplified interface with B_max sectors.
    Bfq {
        /// B_max, sectors.
        b_max: u32,
    },
    /// CFQ-like with T_slice ms (idling 8 ms, Linux CFQ's slice_idle).
    Cfq {
        /// T_slice, ms.
        slice_ms: u64,
    },
    /// C-LOOK.
    CLook,
    /// Anticipatory, T_wait 4 ms.
    As,
    /// SCAN-EDF, 20 ms deadlines, granularity Δ ms.
    ScanEdf {
        /// Δ, ms.
        delta_ms: u64,
        /// T_wait, ms.
        t_wait_ms: u64,
    },
    /// YFQ with batches of `batch` requests.
    Yfq {
        /// BT_size.
        batch: usize,
        /// T_wait, ms.
        t_wait_ms: u64,
    },
}

impl SchedSpec {
    /// Builds the scheduler for application ids `0..max_apps`.
    pub fn build(&self, max_apps: u32) -> Result<Box<dyn DiskScheduler>, DiskConfigError> {
        let l = DEFAULT_L_MAX;
        Ok(match *self {
            SchedSpec::Bfq { b_max } => {
                let cfg = BfqConfig {
                    max_apps,
                    ..BfqConfig::simplified(b_max)?
                };
                Box::new(Bfq::new(cfg)?)
            }
            SchedSpec::Cfq { slice_ms } => Box::new(Cfq::new(max_apps, l, slice_ms * MS, 8 * MS)),
            SchedSpec::CLook => Box::new(CLook::new(max_apps, l)),
            SchedSpec::As => Box::new(Anticipatory::new(max_apps, l, 4 * MS)),
            SchedSpec::ScanEdf {
                delta_ms,
                t_wait_ms,
            } => Box::new(ScanEdf::new(
                max_apps,
                l,
                20 * MS,
                delta_ms * MS,
                t_wait_ms * MS,
            )),
            SchedSpec::Yfq { batch, t_wait_ms } => {
                Box::new(Yfq::new(max_apps, l, batch, t_wait_ms * MS))
            }
        })
    }

    /// Name and parameter, e.g. `BFQ 4096 sect`.
    pub fn label(&self) -> String {
        match *self {
            SchedSpec::Bfq { b_max } => format!("BFQ {b_max} sect"),
            SchedSpec::Cfq { slice_ms } => format!("CFQ {slice_ms} ms"),
            SchedSpec::CLook => "C-LOOK".into(),
            SchedSpec::As => "AS".into(),
            SchedSpec::ScanEdf {
                delta_ms,
                t_wait_ms,
            } => format!("SCAN-EDF Δ {delta_ms} ms, T_wait {t_wait_ms} ms"),
            SchedSpec::Yfq { batch, t_wait_ms } => {
                format!("YFQ {batch} reqs, T_wait {t_wait_ms} ms")
            }
        }
    }
}

fn mb_per_s(sectors: u64, t: Nanos) -> f64 {
    if t == 0 {
        return 0.0;
    }
    (sectors * SECTOR_BYTES) as f64 / 1e6 / (t as f64 / 1e9)
}

/// Result of a sequential-readers run.
#[derive(Clone, Debug, Serialize)]
pub struct SeqResult {
    /// Scheduler.
    pub sched: String,
    /// Weights.
    pub weights: Vec<u32>,
    /// Aggregate throughput: all files' bytes over the time the last one
    /// finished, MB/s.
    pub aggregate_mb_s: f64,
    /// Per-reader throughput: its file's bytes over the time it finished
    /// (all start at 0), MB/s.
    pub per_app_mb_s: Vec<f64>,
    /// Simulated seconds.
    pub sim_seconds: f64,
}

/// `weights.len()` sequential readers of files placed in slices at the
/// maximum distance from each other, each with the kernel read-ahead
/// `readahead` ([`ReadAhead::NONE`]: strictly synchronous); the file of
/// reader i is `w_i / max w · file_mb` MB, so with exact shares all finish
/// together (as in §2.4).
pub fn seq_readers(
    spec: SchedSpec,
    weights: &[u32],
    file_mb: u64,
    readahead: ReadAhead,
    disk: &DiskModel,
) -> Result<SeqResult, DiskConfigError> {
    let n = weights.len() as u64;
    let mut sched = spec.build(n as u32)?;
    let slice = disk.capacity() / SLICES;
    let wmax = u64::from(*weights.iter().max().unwrap_or(&1));
    let mut apps = Vec::new();
    for (i, &w) in weights.iter().enumerate() {
        let id = AppId(i as u32);
        sched.add_app(id, AppSpec::weight(w))?;
        let s = if n > 1 {
            i as u64 * (SLICES - 1) / (n - 1)
        } else {
            0
        };
        let len = file_mb * 1_000_000 / SECTOR_BYTES * u64::from(w) / wmax;
        apps.push(App::Seq(
            SeqReader::new(id, s * slice, len.min(slice)).with_readahead(readahead),
        ));
    }
    let lens: Vec<u64> = apps
        .iter()
        .map(|a| match a {
            App::Seq(s) => s.len,
            _ => 0,
        })
        .collect();
    let mut sim = Simulation::new(sched, disk.clone(), apps);
    sim.run(Nanos::MAX, &mut |_| {});
    let finish: Vec<Nanos> = sim
        .apps
        .iter()
        .map(|a| match a {
            App::Seq(s) => s.finished.unwrap_or(sim.now()),
            _ => sim.now(),
        })
        .collect();
    let end = finish.iter().copied().max().unwrap_or(0);
    Ok(SeqResult {
        sched: spec.label(),
        weights: weights.to_vec(),
        aggregate_mb_s: mb_per_s(lens.iter().sum(), end),
        per_app_mb_s: lens
            .iter()
            .zip(&finish)
            .map(|(&l, &t)| mb_per_s(l, t))
            .collect(),
        sim_seconds: end as f64 / 1e9,
    })
}

/// Result of a web-server run.
#[derive(Clone, Debug, Serialize)]
pub struct WebResult {
    /// Scheduler.
    pub sched: String,
    /// Mean completion time of small files, s.
    pub small_file_s: f64,
    /// Small files read.
    pub small_files: usize,
    /// Mean bandwidth of large-file reads, MB/s.
    pub large_file_mb_s: f64,
    /// Large files read.
    pub large_files: usize,
    /// Mean aggregate throughput, MB/s.
    pub aggregate_mb_s: f64,
    /// Simulated seconds.
    pub sim_seconds: f64,
}

/// The web-server-like workload (§2.4): `procs` processes for `duration`.
pub fn web_server(
    spec: SchedSpec,
    procs: u32,
    duration: Nanos,
    disk: &DiskModel,
    seed: u64,
) -> Result<WebResult, DiskConfigError> {
    let mut sched = spec.build(procs)?;
    let cap = disk.capacity();
    let log = Rc::new(Cell::new(cap / 4));
    let mut apps = Vec::new();
    for i in 0..procs {
        sched.add_app(AppId(i), AppSpec::weight(1))?;
        let mut p = WebProcess::new(
            AppId(i),
            cap,
            log.clone(),
            seed.wrapping_add(u64::from(i) * 7919),
        );
        p.until = duration;
        apps.push(App::Web(p));
    }
    let mut sim = Simulation::new(sched, disk.clone(), apps);
    sim.run(duration, &mut |_| {});
    let (mut small, mut nsmall, mut large, mut nlarge) = (0.0, 0usize, 0.0, 0usize);
    for a in &sim.apps {
        if let App::Web(w) = a {
            small += w
                .small_latencies
                .iter()
                .map(|&t| t as f64 / 1e9)
                .sum::<f64>();
            nsmall += w.small_latencies.len();
            large += w
                .large_reads
                .iter()
                .map(|&(s, t)| mb_per_s(s, t))
                .sum::<f64>();
            nlarge += w.large_reads.len();
        }
    }
    let total: u64 = sim.totals().sectors.iter().sum();
    Ok(WebResult {
        sched: spec.label(),
        small_file_s: small / nsmall.max(1) as f64,
        small_files: nsmall,
        large_file_mb_s: large / nlarge.max(1) as f64,
        large_files: nlarge,
        aggregate_mb_s: mb_per_s(total, duration),
        sim_seconds: duration as f64 / 1e9,
    })
}

/// Result of a streaming run.
#[derive(Clone, Debug, Serialize)]
pub struct StreamResult {
    /// Scheduler.
    pub sched: String,
    /// Streams running when the loss rate reached the threshold (or at the end).
    pub streams: usize,
    /// Aggregate throughput over the last 5 s, MB/s.
    pub aggregate_mb_s: f64,
    /// Loss rate over the last window when the run ended.
    pub loss_rate: f64,
    /// Simulated seconds.
    pub sim_seconds: f64,
}

/// Streaming workload parameters.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StreamSetup {
    /// Movies available (one per slice).
    pub movies: usize,
    /// A new stream every this many ns.
    pub every: Nanos,
    /// ON/OFF readers.
    pub on_off: usize,
    /// Loss threshold (fraction).
    pub max_loss: f64,
    /// Read-ahead of the ON/OFF readers (greedy sequential file readers).
    pub readahead: ReadAhead,
}

impl StreamSetup {
    /// The thesis' setup: 30 movies, one every 15 s, 5 ON/OFF readers with
    /// Linux's read-ahead, 1 %.
    pub const THESIS: Self = Self {
        movies: 30,
        every: 15 * SEC,
        on_off: 5,
        max_loss: 0.01,
        readahead: ReadAhead::LINUX,
    };
}

/// The streaming workload (§2.4). Loss rate: lost chunks over chunks due in
/// the last `every` ns, checked every second once at least [`MIN_CHUNKS`]
/// are due in that window. A chunk is due at its nominal time plus the 1 s
/// playback buffer and counts as lost if it has not completed by then,
/// whether it completes later or not at all ([`Streamer::due_and_lost`]):
/// a starved stream's chunks are lost as they fall due.
pub fn streaming(
    spec: SchedSpec,
    setup: StreamSetup,
    disk: &DiskModel,
    seed: u64,
) -> Result<StreamResult, DiskConfigError> {
    let n = setup.movies + setup.on_off;
    let mut sched = spec.build(n as u32)?;
    let slice = disk.capacity() / SLICES;
    let mut apps = Vec::new();
    for k in 0..setup.movies {
        let id = AppId(k as u32);
        sched.add_app(id, AppSpec::weight(1))?;
        let s = (k as u64 % SLICES) * slice;
        apps.push(App::Stream(Streamer::new(
            id,
            s,
            slice / 2,
            k as u64 * setup.every,
        )));
    }
    for j in 0..setup.on_off {
        let id = AppId((setup.movies + j) as u32);
        sched.add_app(id, AppSpec::weight(1))?;
        let s = ((j as u64 * 6 + 3) % SLICES) * slice + slice / 2;
        apps.push(App::OnOff(
            OnOffReader::new(id, s, slice / 2, seed ^ (j as u64 + 1))
                .with_readahead(setup.readahead),
        ));
    }
    let mut sim = Simulation::new(sched, disk.clone(), apps);
    let end = setup.movies as u64 * setup.every + setup.every;
    let mut history: Vec<u64> = Vec::new();
    let mut t = 0;
    let mut loss = 0.0;
    let mut streams = setup.movies;
    while t < end {
        t += SEC;
        sim.run(t, &mut |_| {});
        history.push(sim.totals().sectors.iter().sum());
        let lo = t.saturating_sub(setup.every);
        let (mut due, mut lost) = (0u64, 0u64);
        for a in &sim.apps {
            if let App::Stream(s) = a {
                let (d, l) = s.due_and_lost(lo, t);
                due += d;
                lost += l;
            }
        }
        loss = if due > 0 {
            lost as f64 / due as f64
        } else {
            0.0
        };
        // A rate over fewer chunks than a window of one stream is noise.
        if due >= MIN_CHUNKS && loss >= setup.max_loss {
            streams = ((t / setup.every) as usize + 1).min(setup.movies);
            break;
        }
    }
    let k = history.len();
    let last5 = history[k - 1] - if k > 5 { history[k - 6] } else { 0 };
    Ok(StreamResult {
        sched: spec.label(),
        streams,
        aggregate_mb_s: mb_per_s(last5, 5 * SEC.min(t)),
        loss_rate: loss,
        sim_seconds: t as f64 / 1e9,
    })
}

/// The thesis' best aggregate throughput of 2 readers (MB/s) for the
/// configuration its table names (the row label and the parameter it
/// states); `None` for a configuration the table does not list.
pub fn thesis_throughput(spec: &SchedSpec) -> Option<f64> {
    let key = match *spec {
        SchedSpec::Bfq { b_max: 16384 } => "BFQ",
        SchedSpec::ScanEdf {
            delta_ms: 640,
            t_wait_ms: 0,
        } => "SCAN-EDF T_wait 0",
        SchedSpec::ScanEdf {
            delta_ms: 640,
            t_wait_ms: 4,
        } => "SCAN-EDF T_wait 4",
        SchedSpec::Yfq {
            batch: 16,
            t_wait_ms: 0,
        } => "YFQ T_wait 0",
        SchedSpec::Yfq {
            batch: 16,
            t_wait_ms: 4,
        } => "YFQ T_wait 4",
        SchedSpec::Cfq { slice_ms: 100 } => "CFQ",
        SchedSpec::CLook => "C-LOOK",
        SchedSpec::As => "AS",
        _ => return None,
    };
    crate::thesis::find(crate::thesis::THROUGHPUT_2_FILES, key, |r| r.0).map(|r| r.1)
}

/// The configurations of the thesis' throughput sweep (Fig. 5 and the
/// first table of §2.4); `quick` keeps one per scheduler family plus the
/// B_max sweep's ends.
pub fn throughput_specs(quick: bool) -> Vec<SchedSpec> {
    let mut v = Vec::new();
    let bmax: &[u32] = if quick {
        &[512, 4096, 16384]
    } else {
        &[512, 1024, 2048, 4096, 8192, 16384]
    };
    v.extend(bmax.iter().map(|&b_max| SchedSpec::Bfq { b_max }));
    let deltas: &[u64] = if quick {
        &[640]
    } else {
        &[20, 40, 80, 160, 320, 640]
    };
    for &t_wait_ms in &[0, 4] {
        v.extend(deltas.iter().map(|&delta_ms| SchedSpec::ScanEdf {
            delta_ms,
            t_wait_ms,
        }));
    }
    let batches: &[usize] = if quick { &[16] } else { &[4, 8, 16] };
    for &t_wait_ms in &[0, 4] {
        v.extend(
            batches
                .iter()
                .map(|&batch| SchedSpec::Yfq { batch, t_wait_ms }),
        );
    }
    v.extend([
        SchedSpec::Cfq { slice_ms: 100 },
        SchedSpec::CLook,
        SchedSpec::As,
    ]);
    v
}

/// The schedulers of the thesis' equal-share table and web-server table.
pub const SHARE_SPECS: [SchedSpec; 6] = [
    SchedSpec::Bfq { b_max: 4096 },
    SchedSpec::ScanEdf {
        delta_ms: 80,
        t_wait_ms: 4,
    },
    SchedSpec::Yfq {
        batch: 4,
        t_wait_ms: 4,
    },
    SchedSpec::Cfq { slice_ms: 100 },
    SchedSpec::CLook,
    SchedSpec::As,
];

/// The schedulers of the thesis' streaming table.
pub const STREAM_SPECS: [SchedSpec; 8] = [
    SchedSpec::Bfq { b_max: 4096 },
    SchedSpec::Bfq { b_max: 8192 },
    SchedSpec::Bfq { b_max: 16384 },
    SchedSpec::ScanEdf {
        delta_ms: 20,
        t_wait_ms: 4,
    },
    SchedSpec::Yfq {
        batch: 4,
        t_wait_ms: 4,
    },
    SchedSpec::Cfq { slice_ms: 20 },
    SchedSpec::CLook,
    SchedSpec::As,
];
