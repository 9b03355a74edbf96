//! The `fairway arbiter-bench` measurement: decisions per second with a
//! no-op transmit (the PSPAT paper §5.4, Fig. 7) and the submit→grant→transmit
//! latency distribution (§5.5, Figs. 8–10), with the arbiter on one core
//! and the clients on another.
//!
//! Each client thread submits fixed-size packets for its own flow, either
//! as fast as its queue allows or paced at a share of `load × rate`, and
//! drains its grants into a back-end that records, for every packet, the
//! time from submit to the drain that transmitted it (the grant is seen
//! and the packet handed to the null back-end in the same step) in an HDR
//! histogram. Every packet is measured (no sampling), but the clock shared
//! with the arbiter is read only once per client loop iteration: that one
//! value decides the Δ_C check, timestamps the packets drained in this
//! iteration (their transmit time) and stamps the packets submitted in it.
//! A TSC read on a VM costs as much as a whole scheduling decision, so
//! reading it per packet would dominate the client loop. The error is
//! below one loop iteration (tens of ns at light load). Packets of one
//! burst share their stamp, so they are recorded as one run (`record_n`)
//! rather than one histogram update each.
//!
//! The arbiter runs the concrete scheduler type the spec names (through the
//! registry's [`SchedVisitor`]), not a `Box<dyn Scheduler>`, so its scan
//! inlines the scheduler's enqueue/dequeue (see `spawn_arbiter`).

use fairway_core::registry::SchedVisitor;
use fairway_core::{Capacity, Limits, Packet, SchedSpec, Scheduler};
use fairway_eval::chart::{write_svg, ChartError, ChartSpec, Series};
use fairway_runtime::affinity::{available_cpus, pin_current_thread, set_realtime_priority};
use fairway_runtime::backend::Backend;
use fairway_runtime::runtime::{
    ArbiterHandle, ArbiterMode, Client, ClientConfig, ClientStats, RuntimeBuilder, RuntimeConfig,
    RuntimeError,
};
use fairway_runtime::wakeup::KickMode;
use fairway_runtime::{ArbiterStats, MonotonicClock};
use hdrhistogram::errors::{AdditionError, CreationError};
use hdrhistogram::Histogram;
use limits::why_suffix;
use std::path::Path;
use std::time::Duration;

pub mod limits;

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Client threads (one flow each, equal weights).
    pub clients: usize,
    /// The scheduler.
    pub sched: SchedSpec,
    /// Emulated link rate, bits/s.
    pub rate_bps: u64,
    /// Packet size, bytes.
    pub pkt_size: u32,
    /// Measurement time.
    pub duration: Duration,
    /// Offered load as a fraction of the link rate, split evenly over the
    /// clients; `None`: every client sends as fast as it can.
    pub load: Option<f64>,
    /// Busy-poll or sleeping arbiter.
    pub mode: ArbiterMode,
    /// Kick variant (sleeping arbiter only).
    pub kick: KickMode,
    /// Δ_A.
    pub delta_a: Duration,
    /// Δ_C.
    pub delta_c: Duration,
    /// Minimum awake time of a sleeping arbiter.
    pub min_awake: Duration,
    /// Client queue length.
    pub queue_len: usize,
    /// Pin the arbiter to CPU 0 and the clients to the other CPUs.
    pub pin: bool,
    /// Run the arbiter and the client threads under `SCHED_FIFO` at this
    /// priority (see [`fairway_runtime::set_realtime_priority`]), so other processes
    /// on the machine cannot preempt them. Clients get it only when each
    /// has a CPU of its own (real-time threads do not time-share).
    pub realtime: Option<u8>,
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self {
            clients: 1,
            sched: SchedSpec::new(fairway_core::SchedKind::Drr),
            rate_bps: 1_000_000_000_000,
            pkt_size: 60,
            duration: Duration::from_secs(2),
            load: None,
            mode: ArbiterMode::BusyPoll,
            kick: KickMode::Notify,
            delta_a: Duration::from_nanos(500),
            delta_c: Duration::from_nanos(500),
            min_awake: Duration::from_micros(20),
            queue_len: 1023,
            pin: true,
            realtime: None,
        }
    }
}

/// Latency percentiles, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Percentiles {
    /// Packets measured.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// The scheduler spec.
    pub sched: String,
    /// Client threads.
    pub clients: usize,
    /// Measured time, s.
    pub seconds: f64,
    /// Packets granted and transmitted within the measured time, per second.
    pub decisions_per_sec: f64,
    /// `submit` calls.
    pub submitted: u64,
    /// Accepted into a client queue.
    pub accepted: u64,
    /// Granted by the arbiter (whole run, including the final drain).
    pub granted: u64,
    /// Refused (queue full).
    pub rejected: u64,
    /// Accepted, never granted by the end of the run.
    pub still_queued: u64,
    /// Submit → transmit latency.
    pub latency: Percentiles,
    /// Latency histogram, for CDFs: (upper bound ns, cumulative fraction).
    pub cdf: Vec<(u64, f64)>,
    /// The arbiter's counters.
    pub arbiter: ArbiterStats,
}

/// The benchmark's packet: a length and its submit time.
#[derive(Clone, Copy, Debug)]
pub struct StampedPacket {
    len: u32,
    submitted_ns: u64,
}

impl Packet for StampedPacket {
    #[inline]
    fn len(&self) -> u32 {
        self.len
    }
}

/// Records each packet's submit→transmit time; otherwise a null back-end.
/// Consecutive packets with the same stamp (one submit burst) drained in
/// the same `drain` have the same latency: they are counted as a run and
/// recorded once, at the end of the run or in `flush`.
struct LatencyBackend {
    now_ns: u64,
    hist: Histogram<u64>,
    transmitted_in_window: u64,
    in_window: bool,
    run_stamp: u64,
    run_len: u64,
}

impl LatencyBackend {
    #[inline]
    fn record_run(&mut self) {
        if self.run_len > 0 {
            let lat = self.now_ns.saturating_sub(self.run_stamp).max(1);
            self.hist.saturating_record_n(lat, self.run_len);
            if self.in_window {
                self.transmitted_in_window += self.run_len;
            }
            self.run_len = 0;
        }
    }
}

impl Backend<StampedPacket> for LatencyBackend {
    #[inline]
    fn transmit(&mut self, p: StampedPacket) {
        if p.submitted_ns != self.run_stamp {
            self.record_run();
            self.run_stamp = p.submitted_ns;
        }
        self.run_len += 1;
    }

    #[inline]
    fn flush(&mut self) {
        self.record_run();
    }
}

struct ClientResult {
    hist: Histogram<u64>,
    transmitted_in_window: u64,
    stats: ClientStats,
}

/// Why the benchmark could not run, or its chart not be written.
#[derive(Debug, thiserror::Error)]
pub enum ArbiterBenchError {
    /// A parameter outside its range: the command-line flag that sets it,
    /// the value, the range and why the range ends where it does.
    #[error("{flag} {value} outside {range}{}", why_suffix(.why.as_deref()))]
    OutOfRange {
        /// The flag (`--clients`).
        flag: &'static str,
        /// The value given.
        value: String,
        /// The accepted range.
        range: String,
        /// Why, where the range is not obvious.
        why: Option<String>,
    },
    /// The client queues would hold too many packets together.
    #[error(
        "--clients {clients} × --queue-len {queue_len} = {total} queued packets, over the \
         {max} the queues may hold together (each packet takes a slot in its client's ring and \
         in the scheduler)"
    )]
    QueuedPackets {
        /// Client threads.
        clients: usize,
        /// Their queue length.
        queue_len: usize,
        /// The product.
        total: u64,
        /// The limit.
        max: u64,
    },
    /// A paced load whose per-client gap cannot be kept or measures
    /// nothing.
    #[error(
        "--load {} with --rate, --pkt-size and --clients paces each client at one packet \
         every {gap_ns:.3e} ns, outside 1..={window_ns} ns (more often than once a ns cannot \
         be paced; less often than once per --seconds measures nothing)",
        limits::shown(*.load)
    )]
    LoadGap {
        /// The load given.
        load: f64,
        /// The gap it gives, ns.
        gap_ns: f64,
        /// The measurement window, ns.
        window_ns: u128,
    },
    /// The runtime could not be built, started or stopped.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A latency histogram could not be created.
    #[error(transparent)]
    Histogram(#[from] CreationError),
    /// The clients' histograms could not be merged.
    #[error(transparent)]
    HistogramMerge(#[from] AdditionError),
    /// A client thread was refused its real-time priority.
    #[error("client {client}: cannot get real-time priority {priority}: {source}")]
    RealtimePriority {
        /// The client.
        client: usize,
        /// The priority asked for.
        priority: u8,
        /// Why.
        source: std::io::Error,
    },
    /// A client thread panicked.
    #[error("client thread panicked")]
    ClientPanicked,
    /// A client thread could not be started.
    #[error("cannot start a client thread: {0}")]
    Spawn(std::io::Error),
    /// The latency chart could not be drawn or written.
    #[error(transparent)]
    Chart(#[from] ChartError),
}

/// How far behind its schedule a paced client may fall before it skips
/// sends rather than catching up (well above one loop iteration).
const CATCH_UP_NS: f64 = 10_000.0;

fn new_hist() -> Result<Histogram<u64>, ArbiterBenchError> {
    Ok(Histogram::new_with_bounds(1, 60_000_000_000, 3)?)
}

/// Runs the benchmark, once [`BenchConfig::validate`] accepted `cfg`.
pub fn run(cfg: &BenchConfig) -> Result<BenchReport, ArbiterBenchError> {
    cfg.validate()?;
    let cpus = available_cpus();
    let pin = cfg.pin && cpus >= 2;
    let (builder, clients) = build_runtime(cfg, pin)?;
    let clock = builder.clock().clone();
    let spec = cfg.sched.clone();
    let arbiter =
        if matches!(cfg.kick, KickMode::ClientScan { .. }) && cfg.mode == ArbiterMode::Sleep {
            spawn_send_by_kind(builder, &spec)?
        } else {
            spawn_arbiter(builder, spec)?
        };
    let plan = ClientPlan::new(cfg, &clock, pin, cpus);
    let results: Vec<Result<ClientResult, ArbiterBenchError>> = std::thread::scope(|s| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, client)| {
                let (clock, plan) = (clock.clone(), &plan);
                std::thread::Builder::new()
                    .name(format!("client-{i}"))
                    .spawn_scoped(s, move || run_client(i, client, &clock, plan))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(ArbiterBenchError::ClientPanicked)),
                Err(e) => Err(ArbiterBenchError::Spawn(e)),
            })
            .collect()
    });
    let arbiter_stats = arbiter.stop()?;
    summarise(cfg, results, arbiter_stats)
}

/// The runtime the configuration asks for, with one client per flow (equal
/// weights); the arbiter is not started yet.
fn build_runtime(
    cfg: &BenchConfig,
    pin: bool,
) -> Result<(RuntimeBuilder, Vec<Client<StampedPacket>>), ArbiterBenchError> {
    let rt = RuntimeConfig {
        rate_bps: cfg.rate_bps,
        delta_a: cfg.delta_a,
        delta_c: cfg.delta_c,
        mode: cfg.mode,
        kick: cfg.kick,
        min_awake: cfg.min_awake,
        arbiter_cpu: pin.then_some(0),
        realtime_priority: cfg.realtime,
    };
    let mut builder = RuntimeBuilder::new(rt)?;
    let mut clients = Vec::with_capacity(cfg.clients);
    for _ in 0..cfg.clients {
        clients.push(builder.add_client::<StampedPacket>(ClientConfig {
            weight: 1,
            max_len: cfg.pkt_size,
            queue_len: cfg.queue_len,
        })?);
    }
    Ok((builder, clients))
}

/// What every client thread of a run shares.
struct ClientPlan {
    /// The measurement window, ns of the runtime's clock.
    start: u64,
    end: u64,
    /// Per-client gap between packets when paced, ns (f64: pacing only).
    gap_ns: Option<f64>,
    pkt_size: u32,
    clients: usize,
    /// Pin client `i` to CPU 1 + i mod (cpus − 1).
    pin: bool,
    cpus: usize,
    /// The clients' real-time priority, if they get one.
    realtime: Option<u8>,
}

impl ClientPlan {
    fn new(cfg: &BenchConfig, clock: &MonotonicClock, pin: bool, cpus: usize) -> Self {
        // `validate` checked that the gap is in 1 ns..=the window.
        let gap_ns = cfg.load.map(|load| cfg.gap_ns(load));
        let start = clock.now_ns() + 20_000_000; // let every thread get going
        Self {
            start,
            end: start + cfg.duration.as_nanos() as u64,
            gap_ns,
            pkt_size: cfg.pkt_size,
            clients: cfg.clients,
            pin,
            cpus,
            // SCHED_FIFO threads of equal priority do not time-share a
            // CPU: a spinning client would starve the others on its CPU
            // until the kernel's real-time throttle. So clients get
            // real-time priority only when each has a CPU of its own; the
            // arbiter always does.
            realtime: cfg.realtime.filter(|_| cfg.clients < cpus),
        }
    }
}

/// One client thread: from the plan's start to its end, drains its grants
/// into the latency back-end and submits, flat out or paced; then collects
/// what is still in flight (bounded wait).
fn run_client(
    i: usize,
    mut client: Client<StampedPacket>,
    clock: &MonotonicClock,
    plan: &ClientPlan,
) -> Result<ClientResult, ArbiterBenchError> {
    if plan.pin {
        let _ = pin_current_thread(1 + i % (plan.cpus - 1));
    }
    if let Some(priority) = plan.realtime {
        set_realtime_priority(priority).map_err(|source| ArbiterBenchError::RealtimePriority {
            client: i,
            priority,
            source,
        })?;
    }
    let mut be = LatencyBackend {
        now_ns: 0,
        hist: new_hist()?,
        transmitted_in_window: 0,
        in_window: false,
        run_stamp: u64::MAX,
        run_len: 0,
    };
    while clock.now_ns() < plan.start {
        std::hint::spin_loop();
    }
    // Stagger paced clients so they do not send in lockstep.
    let mut pacer = plan.gap_ns.map(|gap| Pacer {
        gap,
        next_send: plan.start as f64 + gap * i as f64 / plan.clients as f64,
    });
    loop {
        // The one clock read of this iteration (module doc).
        let now = clock.now_ns();
        if now >= plan.end {
            break;
        }
        be.in_window = true;
        // Drain first, then submit: packets drained here were submitted
        // in an earlier iteration, so their latency is `now - stamp` with
        // no second read.
        be.now_ns = now;
        let drained = client.drain_at(now, &mut be);
        let p = StampedPacket {
            len: plan.pkt_size,
            submitted_ns: now,
        };
        match &mut pacer {
            None => submit_burst(&mut client, p, drained),
            Some(pacer) => pacer.submit_if_due(&mut client, p),
        }
    }
    // Collect what is still in flight (bounded wait).
    be.in_window = false;
    let give_up = plan.end + 200_000_000;
    while client.in_flight() > 0 && clock.now_ns() < give_up {
        be.now_ns = clock.now_ns();
        client.drain_now(&mut be);
    }
    Ok(ClientResult {
        hist: be.hist,
        transmitted_in_window: be.transmitted_in_window,
        stats: client.stats(),
    })
}

/// A flat-out client's turn: as many copies of `p` as its queue has room
/// for (at most 64), then one kick.
fn submit_burst(client: &mut Client<StampedPacket>, p: StampedPacket, drained: usize) {
    let burst = client.room().min(64);
    if burst == 0 && drained == 0 {
        // Queue full, nothing granted yet: a pause hint rather than a hot
        // spin, which on a hyperthread sibling of the arbiter's core (small
        // VMs) takes its issue slots.
        for _ in 0..8 {
            std::hint::spin_loop();
        }
    }
    for _ in 0..burst {
        if client.submit_quiet(p).is_err() {
            break;
        }
    }
    if burst > 0 {
        client.kick();
    }
}

/// A paced client's schedule: one packet every `gap` ns.
struct Pacer {
    gap: f64,
    next_send: f64,
}

impl Pacer {
    /// Submits `p` if it is due at `p.submitted_ns`. A client that lost its
    /// CPU (OS time slice, other load) skips the sends it missed instead of
    /// catching up back-to-back: such a burst, faster than the link, would
    /// measure queueing the OS created, not light load.
    fn submit_if_due(&mut self, client: &mut Client<StampedPacket>, p: StampedPacket) {
        let now = p.submitted_ns as f64;
        if now >= self.next_send {
            self.next_send = (self.next_send + self.gap).max(now - CATCH_UP_NS);
            // A refused packet is counted and dropped.
            let _ = client.submit(p);
        }
    }
}

/// The report from every client's histogram and counters.
fn summarise(
    cfg: &BenchConfig,
    results: Vec<Result<ClientResult, ArbiterBenchError>>,
    arbiter: ArbiterStats,
) -> Result<BenchReport, ArbiterBenchError> {
    let mut hist = new_hist()?;
    let (mut submitted, mut accepted, mut granted, mut rejected, mut queued, mut window) =
        (0, 0, 0, 0, 0, 0);
    for r in results {
        let r = r?;
        hist.add(&r.hist)?;
        submitted += r.stats.offered;
        accepted += r.stats.accepted;
        granted += r.stats.granted;
        rejected += r.stats.rejected_full + r.stats.rejected_invalid;
        queued += r.stats.queued;
        window += r.transmitted_in_window;
    }
    let seconds = cfg.duration.as_secs_f64();
    let q = |f: f64| hist.value_at_quantile(f);
    // 0.1 % steps, plus the far tail, so a CDF chart shows its shape.
    let mut cdf: Vec<(u64, f64)> = (0..=1000)
        .map(|i| i as f64 / 1000.0)
        .map(|f| (q(f), f))
        .collect();
    cdf.extend([0.9999, 0.99999, 1.0].map(|f| (q(f), f)));
    Ok(BenchReport {
        sched: cfg.sched.to_string(),
        clients: cfg.clients,
        seconds,
        decisions_per_sec: window as f64 / seconds,
        submitted,
        accepted,
        granted,
        rejected,
        still_queued: queued,
        latency: Percentiles {
            count: hist.len(),
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            max: hist.max(),
        },
        cdf,
        arbiter,
    })
}

/// Writes the submit→transmit latency distributions of `runs` (a label
/// and a report each) as one SVG chart: percent of packets against latency
/// on a log axis, the median in each legend entry.
pub fn write_latency_chart(
    path: &Path,
    title: &str,
    runs: &[(String, BenchReport)],
) -> Result<(), ArbiterBenchError> {
    let series = latency_series(runs.iter().map(|(name, r)| {
        (
            name.as_str(),
            r.latency.p50,
            r.latency.p99,
            r.cdf.as_slice(),
        )
    }));
    let spec = ChartSpec {
        title: title.to_string(),
        x_label: "latency (ns, log scale)".into(),
        y_label: "packets (%)".into(),
        log_x: true,
        log_y: false,
    };
    write_svg(path, &spec, &series).map_err(ArbiterBenchError::from)
}

/// The CDF lines of [`write_latency_chart`], in percent: one per run
/// `(name, p50 ns, p99 ns, cdf)`. Each run has its own colour and marker;
/// every sleeping-arbiter run after the first is dashed, so the sleeping
/// variants, whose curves often lie on each other, stay apart in the plot
/// and in the legend (also printed in grey).
pub fn latency_series<'a>(
    runs: impl Iterator<Item = (&'a str, u64, u64, &'a [(u64, f64)])>,
) -> Vec<Series> {
    let mut sleeping = 0;
    runs.enumerate()
        .map(|(i, (name, p50, p99, cdf))| {
            let is_sleeping = name.contains("sleep");
            sleeping += usize::from(is_sleeping);
            Series {
                name: format!("{name} (p50 {p50} ns, p99 {p99} ns)"),
                points: cdf
                    .iter()
                    .map(|&(ns, q)| (ns.max(1) as f64, q * 100.0))
                    .collect(),
                dashed: is_sleeping && sleeping > 1,
                color: i,
            }
        })
        .collect()
}

/// Starts the arbiter with the concrete scheduler type the spec names
/// ([`SpawnArbiter`]), so `Arbiter<S>` is monomorphized and the
/// scheduler's enqueue/dequeue inline into `do_scan` (no virtual call per
/// packet).
fn spawn_arbiter(builder: RuntimeBuilder, spec: SchedSpec) -> Result<ArbiterHandle, RuntimeError> {
    spec.visit(SpawnArbiter(builder))
}

/// Spawns the arbiter with the concrete scheduler type a spec names, built
/// on the arbiter thread: the scheduler is called through a `Box<S>` of a
/// sized type, not a `dyn Scheduler`, so its fast path inlines into the
/// arbiter loop.
struct SpawnArbiter(RuntimeBuilder);

impl SchedVisitor<u32> for SpawnArbiter {
    type Output = Result<ArbiterHandle, RuntimeError>;

    fn visit<S, F>(self, make: F) -> Self::Output
    where
        S: Scheduler<u32> + Send + 'static,
        F: FnOnce(Capacity, Limits) -> S + Send + 'static,
    {
        self.0.spawn(move |c, l| Box::new(make(c, l)))
    }
}

/// The client-scan kick runs the scheduler on client threads, so it needs a
/// `Send` scheduler: the registry builds `Box<dyn Scheduler + Send>`.
fn spawn_send_by_kind(
    builder: RuntimeBuilder,
    spec: &SchedSpec,
) -> Result<ArbiterHandle, RuntimeError> {
    let spec = spec.clone();
    builder.spawn_send(move |c, l| spec.build::<u32>(c, l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairway_eval::chart::{marker_of, y_axis};

    #[test]
    fn the_latency_chart_tells_the_sleeping_variants_apart_and_ends_at_100() {
        let cdf: Vec<(u64, f64)> = (0..=1000)
            .map(|i| (100 + i, f64::from(i as u32) / 1000.0))
            .collect();
        let names = [
            "busy-polling arbiter",
            "sleeping arbiter, notify kick",
            "sleeping arbiter, client-scan kick",
        ];
        let s = latency_series(names.iter().map(|n| (*n, 500, 900, cdf.as_slice())));
        assert_eq!(s.len(), 3);
        let style = |x: &Series| (x.dashed, marker_of(x), x.color);
        assert_ne!(style(&s[1]), style(&s[2]));
        assert_ne!(
            (s[1].dashed, marker_of(&s[1])),
            (s[2].dashed, marker_of(&s[2])),
            "not by colour alone"
        );
        for x in &s {
            assert_eq!(x.points.last().map(|p| p.1), Some(100.0), "{}", x.name);
        }
        let spec = ChartSpec {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            log_y: false,
        };
        let (log, lo, hi) = y_axis(&spec, &s).unwrap();
        assert_eq!((log, lo, hi), (false, 0.0, 100.0));
    }
}
