//! The cost harness: nanoseconds per enqueue/dequeue pair, measured the way
//! the QFQ paper §7.1 and the QFQ+ paper §8 measure it.
//!
//! A controller ([`driver`]) drives a scheduler with a programmable sequence
//! of requests ([`pattern`]), taking packet buffers from a pre-allocated free
//! list and returning them after the dequeue (payloads are never touched).
//! The total time over millions of pairs, divided by the number of pairs,
//! includes packet generation and disposal; the same loop over the `none`
//! baseline (a plain FIFO list without the scheduler API) measures that
//! part, and `ns_per_pair_net` subtracts it (the QFQ paper Table 4, "NONE").
//!
//! Every (subject, repeat) is timed separately with `Instant` around
//! [`driver::Driver::measured_region`], repeats of different subjects are
//! interleaved so that machine noise hits them alike, and each subject
//! reports min/median/max over the repeats. Hardware counters
//! ([`counters`]) are read around the same region where the kernel allows.
//!
//! [`sweep`] runs the scaling experiments (the QFQ paper Fig. 10, the QFQ+ paper
//! Fig. 2) and [`chart`] draws them.

/// The charts moved to [`crate::chart`], shared by every measurement.
pub use crate::chart;
pub mod counters;
pub mod driver;
mod error;
pub mod plan;
pub mod sweep;
pub mod target;

pub use crate::traffic::pattern;
/// The cost harness's name for [`Pattern`](crate::traffic::Pattern).
pub use crate::traffic::Pattern as CostPattern;
pub use crate::traffic::{parse_patterns, Thresholds, PER_FLOW_CAP};
pub use counters::{CounterError, CounterValues, PerfCounters};
pub use driver::{Driver, DriverStats};
pub use error::CostError;
pub use plan::Plan;
pub use target::{BenchPacket, CostTarget, NoneTarget, SchedTarget};

use crate::workload::FlowSet;
use fairway_core::registry::{parse_list, SchedVisitor};
use fairway_core::{Capacity, FlowConfig, FlowId, Limits, SchedKind, SchedSpec, Scheduler};
use serde::Serialize;
use std::fmt;
use std::time::{Duration, Instant};

/// What is measured: the `none` baseline or a scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// The plain FIFO list without the scheduler API.
    None,
    /// A scheduler built from its registry spec.
    Sched(SchedSpec),
}

impl Subject {
    /// The `none` baseline, then every registry scheduler with its default
    /// parameters.
    pub fn all() -> Vec<Subject> {
        let mut v = vec![Subject::None];
        v.extend(
            SchedKind::ALL
                .iter()
                .map(|&k| Subject::Sched(SchedSpec::new(k))),
        );
        v
    }

    /// The subjects of a `--sched` list such as `none,drr,qfq+:m=4`: `none`
    /// is the baseline, every other piece a registry spec (parameters of
    /// one spec continue after a comma). `None`: every registry scheduler
    /// with its default parameters, without the baseline.
    pub fn parse_list(text: Option<&str>) -> Result<Vec<Subject>, CostError> {
        let Some(text) = text else {
            return Ok(SchedKind::ALL
                .iter()
                .map(|&k| Subject::Sched(SchedSpec::new(k)))
                .collect());
        };
        let mut out = Vec::new();
        let mut rest = Vec::new();
        for piece in text.split(',') {
            if piece.trim() == "none" {
                out.push(Subject::None);
            } else {
                rest.push(piece);
            }
        }
        if !rest.is_empty() {
            let specs = parse_list(&rest.join(","))?;
            out.extend(specs.into_iter().map(Subject::Sched));
        }
        if out.is_empty() {
            return Err(CostError::NoScheduler);
        }
        for (i, s) in out.iter().enumerate() {
            if out[..i].contains(s) {
                return Err(CostError::DuplicateSubject(s.label()));
            }
        }
        Ok(out)
    }

    /// The label tables and JSON use (`none`, `drr`, `qfq+:m=4`, …).
    pub fn label(&self) -> String {
        match self {
            Subject::None => "none".into(),
            Subject::Sched(s) => s.to_string(),
        }
    }
}

/// One experiment: a flow set and a pattern.
#[derive(Clone, Debug)]
pub struct CostSetup {
    /// The flows (weights and packet lengths; packets are always `max_len`).
    pub flows: FlowSet,
    /// The request pattern.
    pub pattern: CostPattern,
    /// Pairs run once, untimed, after construction (caches, branch
    /// predictors and the schedulers' internal state warm up).
    pub warmup_pairs: u64,
    /// Seed of the `bursty` pattern.
    pub seed: u64,
}

impl CostSetup {
    /// A setup warming up with `warmup_pairs` pairs.
    pub fn new(flows: FlowSet, pattern: CostPattern, warmup_pairs: u64) -> Self {
        Self {
            flows,
            pattern,
            warmup_pairs,
            seed: 1,
        }
    }

    /// Thresholds of the pattern for this flow set.
    pub fn thresholds(&self) -> Thresholds {
        self.pattern.thresholds(self.flows.len() as u32)
    }

    /// The capacity every subject is built with: room for `high` packets.
    pub fn capacity(&self) -> Capacity {
        let th = self.thresholds();
        Capacity::new(
            self.flows.len() as u32,
            th.high.min(u64::from(u32::MAX - 1)) as u32,
        )
    }
}

/// One timed run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSample {
    /// Enqueue/dequeue pairs in the measured region.
    pub pairs: u64,
    /// Wall-clock time of the region.
    pub elapsed: Duration,
    /// Hardware counts over the region, if counters are open.
    pub counters: Option<CounterValues>,
}

impl RunSample {
    /// Nanoseconds per pair.
    pub fn ns_per_pair(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1e9 / self.pairs.max(1) as f64
    }
}

/// A subject ready to be timed: the controller plus its target, both
/// concretely typed inside; only this outer call is dynamic.
pub trait CostRunner {
    /// The subject's label.
    fn label(&self) -> &str;
    /// Times at least `pairs` pairs (whole enqueue+dequeue cycles).
    fn run(&mut self, pairs: u64, counters: Option<&mut PerfCounters>) -> RunSample;
    /// The controller's counters.
    fn stats(&self) -> DriverStats;
    /// Packets queued in the target.
    fn queued(&self) -> u64;
    /// Packets queued in one flow of the target (`None` for `none`).
    fn flow_queued(&self, flow: u32) -> Option<u64>;
    /// Runs one enqueue phase and returns the backlog (for tests).
    fn enqueue_phase(&mut self) -> u64;
    /// Runs one dequeue phase and returns the backlog (for tests).
    fn dequeue_phase(&mut self) -> u64;
    /// Dequeues everything left (outside any measurement).
    fn drain(&mut self);
}

struct Runner<T> {
    label: String,
    target: T,
    driver: Driver,
}

impl<T: CostTarget> CostRunner for Runner<T> {
    fn label(&self) -> &str {
        &self.label
    }

    fn run(&mut self, pairs: u64, counters: Option<&mut PerfCounters>) -> RunSample {
        let (pairs, elapsed, counters) = match counters {
            Some(c) => {
                let started = c.start().is_ok();
                let t0 = Instant::now();
                let pairs = self.driver.measured_region(&mut self.target, pairs);
                let elapsed = t0.elapsed();
                let values = if started { c.stop().ok() } else { None };
                (pairs, elapsed, values)
            }
            None => {
                let t0 = Instant::now();
                let pairs = self.driver.measured_region(&mut self.target, pairs);
                (pairs, t0.elapsed(), None)
            }
        };
        RunSample {
            pairs,
            elapsed,
            counters,
        }
    }

    fn stats(&self) -> DriverStats {
        self.driver.stats()
    }

    fn queued(&self) -> u64 {
        self.target.queued()
    }

    fn flow_queued(&self, flow: u32) -> Option<u64> {
        self.target.flow_queued(flow)
    }

    fn enqueue_phase(&mut self) -> u64 {
        self.driver.enqueue_phase(&mut self.target);
        self.target.queued()
    }

    fn dequeue_phase(&mut self) -> u64 {
        self.driver.dequeue_phase(&mut self.target);
        self.target.queued()
    }

    fn drain(&mut self) {
        self.driver.drain(&mut self.target);
    }
}

fn finish<T: CostTarget + 'static>(
    label: String,
    target: T,
    setup: &CostSetup,
) -> Result<Box<dyn CostRunner>, CostError> {
    let flows = setup.flows.flows();
    let driver = match Driver::new(setup.thresholds(), &flows, setup.seed) {
        Ok(d) => d,
        Err(error) => {
            return Err(CostError::Controller {
                subject: label,
                error,
            })
        }
    };
    let mut r = Runner {
        label,
        target,
        driver,
    };
    if setup.warmup_pairs > 0 {
        r.driver.measured_region(&mut r.target, setup.warmup_pairs);
    }
    Ok(Box::new(r))
}

struct BuildRunner<'a> {
    label: String,
    setup: &'a CostSetup,
}

impl SchedVisitor<BenchPacket> for BuildRunner<'_> {
    type Output = Result<Box<dyn CostRunner>, CostError>;

    fn visit<S, F>(self, make: F) -> Self::Output
    where
        S: Scheduler<BenchPacket> + Send + 'static,
        F: FnOnce(Capacity, Limits) -> S + Send + 'static,
    {
        let mut sched = make(self.setup.capacity(), Limits::DEFAULT);
        for (i, (weight, max_len)) in self.setup.flows.flows().into_iter().enumerate() {
            sched
                .add_flow(FlowId(i as u32), FlowConfig::new(weight, max_len))
                .map_err(|error| CostError::Flow {
                    subject: self.label.clone(),
                    flow: i,
                    error,
                })?;
        }
        finish(self.label, SchedTarget(sched), self.setup)
    }
}

/// Builds and warms up a runner for `subject` on `setup`.
pub fn build_runner(
    subject: &Subject,
    setup: &CostSetup,
) -> Result<Box<dyn CostRunner>, CostError> {
    if setup.flows.is_empty() {
        return Err(CostError::EmptyFlowSet);
    }
    let cap = setup.capacity();
    match subject {
        Subject::None => finish(
            "none".into(),
            NoneTarget::new(cap.max_packets as usize),
            setup,
        ),
        Subject::Sched(spec) => spec.visit(BuildRunner {
            label: spec.to_string(),
            setup,
        }),
    }
}

/// min / median / max of some values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// Smallest.
    pub min: f64,
    /// Median (mean of the two middle values for an even count).
    pub median: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zero when empty).
    pub fn of(values: &[f64]) -> Spread {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            min: v[0],
            median,
            max: v[n - 1],
        }
    }
}

/// The measurement of one (subject, flow set, pattern), as `--json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostReport {
    /// Scheduler label (`none` for the baseline).
    pub sched: String,
    /// Flow-set name.
    pub flows: String,
    /// Number of flows.
    pub n_flows: usize,
    /// Pattern name.
    pub pattern: String,
    /// Pairs per repeat (median).
    pub pairs: u64,
    /// Number of repeats.
    pub repeat: usize,
    /// Median ns per enqueue/dequeue pair, harness included.
    pub ns_per_pair: f64,
    /// Fastest repeat.
    pub ns_per_pair_min: f64,
    /// Slowest repeat.
    pub ns_per_pair_max: f64,
    /// `ns_per_pair` minus the `none` baseline's median (0 for `none`).
    pub ns_per_pair_net: f64,
    /// The `none` baseline's median measured in the same run.
    pub none_ns_per_pair: Option<f64>,
    /// Instructions per pair (median), where counters work.
    pub instructions_per_pair: Option<f64>,
    /// Cache misses per pair (median), where counters work.
    pub cache_misses_per_pair: Option<f64>,
    /// `available`, or `unavailable: <reason>`.
    pub counters: String,
    /// ns per pair of every repeat, in the order they ran.
    pub ns_per_pair_runs: Vec<f64>,
    /// How much slower the later repeats ran than the earlier ones, against
    /// the `none` baseline's own change in the same rounds ([`drift`]);
    /// `None` with fewer than [`DRIFT_MIN_REPEATS`] repeats (and for `none`).
    pub drift: Option<f64>,
}

impl CostReport {
    /// True if [`Self::drift`] is above [`DRIFT_LIMIT`]: the repeats got
    /// slower as the subject kept running, so the median depends on how
    /// long it ran.
    pub fn drifting(&self) -> bool {
        self.drift.is_some_and(|d| d > DRIFT_LIMIT)
    }
}

/// Fewest repeats [`drift`] is computed from (two per half).
pub const DRIFT_MIN_REPEATS: usize = 4;

/// A drift above this is reported: noise moves a whole round (every subject
/// alike, the baseline included), and the ratio to the baseline's change
/// cancels most of that, so stationary subjects stay below this even on a
/// noisy machine while a subject that keeps slowing down goes well above
/// (the figures are in docs/bench.md, "Drift").
pub const DRIFT_LIMIT: f64 = 1.5;

/// Drift of a subject's repeats: (median of its later half / median of its
/// earlier half) divided by the same ratio of the `none` baseline's repeats
/// in the same rounds. About 1 for a stationary subject; above 1 when each
/// repeat starts from the state the previous one left and that state costs
/// more and more (for example when a scheduler's service order scatters
/// the queues' memory over many cycles of the pattern). `None` with fewer
/// than [`DRIFT_MIN_REPEATS`] repeats or unequal series.
pub fn drift(runs: &[f64], baseline: &[f64]) -> Option<f64> {
    if runs.len() < DRIFT_MIN_REPEATS || runs.len() != baseline.len() {
        return None;
    }
    let half = runs.len() / 2;
    let ratio = |v: &[f64]| {
        let early = Spread::of(&v[..half]).median;
        let late = Spread::of(&v[v.len() - half..]).median;
        (early > 0.0).then(|| late / early)
    };
    Some(ratio(runs)? / ratio(baseline)?)
}

/// Progress of [`measure`]: runs done out of runs planned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Timed runs finished.
    pub done: usize,
    /// Timed runs planned.
    pub total: usize,
}

/// Options of [`measure`].
#[derive(Clone, Debug)]
pub struct MeasureOptions {
    /// Pairs per timed run.
    pub pairs: u64,
    /// Timed runs per subject.
    pub repeat: usize,
    /// Try to read hardware counters.
    pub counters: bool,
}

/// Measures every subject on `setup`: builds (and warms up) all runners,
/// then times `repeat` rounds, each running every subject once. The `none`
/// baseline is always measured (first) so that net costs come from the same
/// run; it is reported only if `subjects` contains it. `opts.pairs` and
/// `opts.repeat` must be at least 1 and the whole run within the limits
/// of [`plan`]; the run is refused before anything is built otherwise.
/// `counters`: the
/// open hardware counters, or why there are none (any error; the reports
/// carry its message).
pub fn measure(
    subjects: &[Subject],
    setup: &CostSetup,
    opts: &MeasureOptions,
    counters: &mut Result<PerfCounters, impl fmt::Display>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<CostReport>, CostError> {
    let mut all = measure_many(
        subjects,
        std::slice::from_ref(setup),
        opts,
        counters,
        progress,
    )?;
    Ok(all.pop().unwrap_or_default())
}

/// [`measure`] over several setups (a sweep), each round running every
/// subject of every setup once: a stretch of machine noise then hits one
/// repeat of many points instead of all repeats of one point, so the
/// fastest repeat of each point is a clean one. One report list per setup.
pub fn measure_many(
    subjects: &[Subject],
    setups: &[CostSetup],
    opts: &MeasureOptions,
    counters: &mut Result<PerfCounters, impl fmt::Display>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<Vec<CostReport>>, CostError> {
    let mut all = vec![Subject::None];
    all.extend(subjects.iter().filter(|s| **s != Subject::None).cloned());
    Plan {
        pairs: opts.pairs,
        repeat: opts.repeat as u64,
        warmup: setups.iter().map(|s| s.warmup_pairs).max().unwrap_or(0),
        subjects: all.len() as u64,
        setups: setups.len() as u64,
    }
    .check()?;
    plan::check_memory_of(setups, all.len(), opts)?;
    let mut runners = setups
        .iter()
        .map(|setup| {
            all.iter()
                .map(|s| build_runner(s, setup))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let repeat = opts.repeat;
    let mut samples: Vec<Vec<Vec<RunSample>>> =
        vec![vec![Vec::with_capacity(repeat); all.len()]; setups.len()];
    let total = repeat * setups.len() * all.len();
    let mut done = 0;
    for _ in 0..repeat {
        for (rs, ss) in runners.iter_mut().zip(samples.iter_mut()) {
            for (r, s) in rs.iter_mut().zip(ss.iter_mut()) {
                let c = if opts.counters {
                    counters.as_mut().ok()
                } else {
                    None
                };
                s.push(r.run(opts.pairs, c));
                done += 1;
                progress(Progress { done, total });
            }
        }
    }
    for r in runners.iter().flatten() {
        let st = r.stats();
        if st.refused > 0 || st.underruns > 0 {
            return Err(CostError::LostTrack {
                subject: r.label().to_string(),
                refused: st.refused,
                underruns: st.underruns,
            });
        }
    }
    let counters_note = match (opts.counters, &*counters) {
        (false, _) => "disabled".to_string(),
        (true, Ok(_)) => "available".to_string(),
        (true, Err(e)) => format!("unavailable: {e}"),
    };
    Ok(setups
        .iter()
        .zip(&samples)
        .map(|(setup, s)| reports(subjects, &all, setup, s, repeat, &counters_note))
        .collect())
}

/// Turns one setup's samples into reports (`all[0]` is the baseline).
fn reports(
    subjects: &[Subject],
    all: &[Subject],
    setup: &CostSetup,
    samples: &[Vec<RunSample>],
    repeat: usize,
    counters_note: &str,
) -> Vec<CostReport> {
    let spread =
        |s: &[RunSample]| Spread::of(&s.iter().map(RunSample::ns_per_pair).collect::<Vec<_>>());
    let none_median = spread(&samples[0]).median;
    let runs = |s: &[RunSample]| s.iter().map(RunSample::ns_per_pair).collect::<Vec<_>>();
    let none_runs = runs(&samples[0]);
    let per_pair = |s: &[RunSample], f: fn(&CounterValues) -> u64| -> Option<f64> {
        let v: Vec<f64> = s
            .iter()
            .map(|x| x.counters.map(|c| f(&c) as f64 / x.pairs.max(1) as f64))
            .collect::<Option<Vec<_>>>()?;
        (!v.is_empty()).then(|| Spread::of(&v).median)
    };
    let mut out = Vec::new();
    for (i, (subject, s)) in all.iter().zip(samples).enumerate() {
        if i == 0 && !subjects.contains(&Subject::None) {
            continue;
        }
        let sp = spread(s);
        let mut pairs: Vec<u64> = s.iter().map(|x| x.pairs).collect();
        pairs.sort_unstable();
        out.push(CostReport {
            sched: subject.label(),
            flows: setup.flows.name.clone(),
            n_flows: setup.flows.len(),
            pattern: setup.pattern.name().into(),
            pairs: pairs[pairs.len() / 2],
            repeat,
            ns_per_pair: sp.median,
            ns_per_pair_min: sp.min,
            ns_per_pair_max: sp.max,
            ns_per_pair_net: if i == 0 { 0.0 } else { sp.median - none_median },
            none_ns_per_pair: Some(none_median),
            instructions_per_pair: per_pair(s, |c| c.instructions),
            cache_misses_per_pair: per_pair(s, |c| c.cache_misses),
            counters: counters_note.to_string(),
            ns_per_pair_runs: runs(s),
            drift: if i == 0 {
                None
            } else {
                drift(&runs(s), &none_runs)
            },
        });
    }
    out
}

#[cfg(test)]
mod tests;
