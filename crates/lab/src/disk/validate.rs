//! Validation of the emulated device the way the BFQ thesis' App. C.5.1 validates
//! GemDisk: replay a synthetic trace through the real-time device and
//! compare every request's response time with the simulator's for the
//! same trace ("emulation error").
//!
//! The traces are C.5's: 500 requests (configurable), sizes uniform in
//! 4..=256 sectors (2–128 KiB; C.5 goes to 130 KiB, above this crate's
//! L_max of 256 sectors), inter-arrival times uniform in `0..=max_gap`;
//! *random* (every position uniform) or *mixed* (probability 0.3 local —
//! within 500 sectors of the previous request's end —, 0.2 sequential,
//! 0.5 random). Requests are served first come, first served (BFQ with one
//! application, T_FIFO = 0 and no idling), as DiskSim's default queue
//! would.
//!
//! Three figures per request:
//! * **injection delay**: when the device received it minus its trace time
//!   (the replay thread's lateness — C.5.1 names this the main error source);
//! * **device error**: the device's modelled completion minus the
//!   simulator's, both computed from the device's arrival stamps (0 unless
//!   the device's logic differs from the simulator's);
//! * **emulation error**: the response time seen by the replaying thread
//!   (delivery minus trace time) minus the simulator's response time for the
//!   trace's arrival times.

use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::emulator::{Completion, EmulatedDisk, SPIN_NS};
use fairway_disk::model::DiskModel;
use fairway_disk::{AppId, AppSpec, DiskScheduler, Nanos, Request, MS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::time::{Duration, Instant};

/// Trace pattern (App. C.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TraceKind {
    /// Every position uniform over the disk.
    Random,
    /// 0.3 local, 0.2 sequential, 0.5 random.
    Mixed,
}

/// One trace entry: `req` issued at `at` ns.
#[derive(Clone, Copy, Debug)]
pub struct TraceEntry {
    /// Issue time.
    pub at: Nanos,
    /// The request (its tag is its index).
    pub req: Request,
}

/// A synthetic trace (see the module doc).
pub fn synthetic_trace(
    kind: TraceKind,
    n: usize,
    max_gap: Nanos,
    capacity: u64,
    seed: u64,
) -> Vec<TraceEntry> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut t = 0;
    let mut last_end = 0u64;
    (0..n)
        .map(|i| {
            t += rng.random_range(0..=max_gap);
            let len: u32 = rng.random_range(4..=256);
            let room = capacity - u64::from(len);
            let p: f64 = rng.random();
            let sector = match kind {
                TraceKind::Mixed if p < 0.3 => (last_end + rng.random_range(0..=500)).min(room),
                TraceKind::Mixed if p < 0.5 => last_end.min(room),
                _ => rng.random_range(0..room),
            };
            last_end = sector + u64::from(len);
            TraceEntry {
                at: t,
                req: Request::read(AppId(0), sector, len).with_tag(i as u64),
            }
        })
        .collect()
}

/// First come, first served, as the catalogue writes it: BFQ with no
/// idling, no T_FIFO and no T_max, whose one application's budget
/// (2^20 sectors) outlasts any trace.
pub const FCFS: DiskSchedSpec = DiskSchedSpec::Bfq {
    b_max: 1 << 20,
    t_wait_ms: 0,
    t_fifo_ms: 0,
    t_max_ms: Some(0),
    // The default; one application has nobody to be raised above.
    low_latency: true,
    inject: false,
    warm_depth: fairway_disk::bfq::DEFAULT_WARM_DEPTH,
};

/// The first-come-first-served scheduler used for replays ([`FCFS`]) with
/// its one application admitted.
pub fn fcfs() -> Box<dyn DiskScheduler + Send> {
    let mut b = FCFS
        .build(1)
        .expect("FCFS is within the catalogue's ranges");
    b.add_app(AppId(0), AppSpec::weight(1))
        .expect("one application");
    b
}

/// Completion times of `arrivals` (time, request) served first come,
/// first served on `disk` in virtual time.
pub fn simulate_fcfs(disk: &DiskModel, arrivals: &[(Nanos, Request)]) -> Vec<Nanos> {
    let mut d = disk.clone();
    let mut free_at = 0;
    arrivals
        .iter()
        .map(|&(at, req)| {
            let start = at.max(free_at);
            free_at = start + d.serve(start, &req).total();
            free_at
        })
        .collect()
}

/// How long `trace` takes on `disk` served first come, first served, ns:
/// the simulated completion of its last request, about the real time a
/// replay ([`validate`]) takes.
pub fn replay_time(trace: &[TraceEntry], disk: &DiskModel) -> Nanos {
    let arrivals: Vec<(Nanos, Request)> = trace.iter().map(|e| (e.at, e.req)).collect();
    simulate_fcfs(disk, &arrivals).last().copied().unwrap_or(0)
}

/// Percentiles of a set of values, µs.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Summary {
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Smallest.
    pub min_us: f64,
    /// Largest.
    pub max_us: f64,
}

impl Summary {
    /// Summary of `v` (ns, may be negative).
    pub fn of(v: &[i64]) -> Self {
        if v.is_empty() {
            return Self::default();
        }
        let mut s = v.to_vec();
        s.sort_unstable();
        let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
        Self {
            mean_us: s.iter().map(|&x| x as f64).sum::<f64>() / s.len() as f64 / 1e3,
            p50_us: at(0.5),
            p90_us: at(0.9),
            p99_us: at(0.99),
            min_us: s[0] as f64 / 1e3,
            max_us: s[s.len() - 1] as f64 / 1e3,
        }
    }
}

/// Result of a validation run.
#[derive(Clone, Debug, Serialize)]
pub struct Validation {
    /// Trace kind.
    pub kind: TraceKind,
    /// Requests.
    pub requests: usize,
    /// Mean simulated response time, ms.
    pub mean_response_ms: f64,
    /// Injection delay.
    pub injection: Summary,
    /// Device error (modelled completion vs simulator, same arrivals).
    pub device: Summary,
    /// Emulation error (response time seen by the replayer vs simulator).
    pub emulation: Summary,
    /// Requests refused or lost (must be 0).
    pub missing: usize,
    /// Completions delivered before their modelled completion (must be 0).
    pub early: usize,
}

/// Sleeps until `epoch + t`, spinning for the last [`SPIN_NS`].
fn sleep_until(epoch: Instant, t: Nanos) {
    loop {
        let now = epoch.elapsed().as_nanos() as Nanos;
        if now >= t {
            return;
        }
        if t - now > SPIN_NS {
            std::thread::sleep(Duration::from_nanos(t - now - SPIN_NS));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Replays `trace` through the real-time device and compares with the
/// simulator (see the module doc). Takes about as long as the trace.
pub fn validate(kind: TraceKind, trace: &[TraceEntry], disk: &DiskModel) -> Validation {
    let dev = EmulatedDisk::start(fcfs(), disk.clone());
    let sub = dev.submitter();
    // Trace time 0 = 1 ms after the device started.
    let base = sub.now() + MS;
    let epoch = Instant::now() - Duration::from_nanos(sub.now());
    let rxs: Vec<_> = trace
        .iter()
        .map(|e| {
            sleep_until(epoch, base + e.at);
            sub.submit(e.req)
        })
        .collect();
    let mut done: Vec<Option<Completion>> = rxs.into_iter().map(|rx| rx.recv().ok()).collect();
    drop(dev.shutdown());
    let missing = done
        .iter()
        .filter(|c| c.is_none_or(|c| c.refused.is_some()))
        .count();
    done.retain(|c| c.is_some_and(|c| c.refused.is_none()));
    let done: Vec<Completion> = done.into_iter().flatten().collect();
    // Device arrivals in the order the device received them.
    let mut by_arrival: Vec<&Completion> = done.iter().collect();
    by_arrival.sort_by_key(|c| (c.arrived, c.req.tag));
    let resim = simulate_fcfs(
        disk,
        &by_arrival
            .iter()
            .map(|c| (c.arrived, c.req))
            .collect::<Vec<_>>(),
    );
    let device: Vec<i64> = by_arrival
        .iter()
        .zip(&resim)
        .map(|(c, &r)| c.completed as i64 - r as i64)
        .collect();
    // The disk's rotation is tied to absolute time: simulate at the
    // device's clock (trace time + base).
    let sim = simulate_fcfs(
        disk,
        &trace
            .iter()
            .map(|e| (base + e.at, e.req))
            .collect::<Vec<_>>(),
    );
    let mut injection = Vec::new();
    let mut emulation = Vec::new();
    let mut response = 0.0;
    let mut early = 0;
    for c in &done {
        let i = c.req.tag as usize;
        let at = base + trace[i].at;
        injection.push(c.arrived as i64 - at as i64);
        let sim_resp = sim[i] - at;
        early += usize::from(c.delivered < c.completed);
        response += sim_resp as f64;
        emulation.push((c.delivered - at) as i64 - sim_resp as i64);
    }
    Validation {
        kind,
        requests: trace.len(),
        mean_response_ms: response / done.len().max(1) as f64 / 1e6,
        injection: Summary::of(&injection),
        device: Summary::of(&device),
        emulation: Summary::of(&emulation),
        missing,
        early,
    }
}
