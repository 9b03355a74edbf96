//! Cost of BFQ per request: nanoseconds per `add_request` + `dispatch`
//! (+ `complete`) with N backlogged applications, in the worst case for
//! B-WF2Q+: budgets of one request (B_max = L_max), so every request
//! deactivates its application and re-inserts it in the heaps (one
//! O(log N) insertion and one extraction per request). C-LOOK over the
//! same requests is measured in the same run as the baseline.

use crate::baseline::{CLook, MAX_QUEUED};
use crate::bfq::{Bfq, BfqConfig, TimeBudget};
use crate::request::{AddError, AppId, DiskConfigError, Nanos, Request};
use crate::scheduler::{AppSpec, DiskScheduler, Dispatch};
use serde::Serialize;
use std::fmt;
use std::time::Instant;

/// Most backlogged applications, 2^19: each keeps two requests queued,
/// and C-LOOK holds at most [`MAX_QUEUED`] = 2^20.
pub const MAX_APPS: u32 = (MAX_QUEUED / 2) as u32;
/// Most timed pairs per round (2^30).
pub const MAX_PAIRS: u64 = 1 << 30;
/// Most rounds.
pub const MAX_ROUNDS: u32 = 1000;
/// Most timed pairs per scheduler in one [`sweep`]: pairs × rounds ×
/// application counts, 2^31 (at 0.1 to 1 µs a pair, minutes to an hour).
pub const MAX_TOTAL_PAIRS: u64 = 1 << 31;

/// A benchmark size outside its range; nothing was allocated or timed.
#[derive(Clone, Debug, PartialEq)]
pub enum CostError {
    /// An application count outside `1..=MAX_APPS`.
    Apps(u32),
    /// No application count.
    NoCounts,
    /// Pairs per round outside `1..=MAX_PAIRS`.
    Pairs(u64),
    /// Rounds outside `1..=MAX_ROUNDS`.
    Rounds(u32),
    /// Pairs × rounds × counts above [`MAX_TOTAL_PAIRS`].
    Total {
        /// Pairs per round.
        pairs: u64,
        /// Rounds.
        rounds: u32,
        /// Application counts.
        counts: usize,
    },
    /// A scheduler refused the configuration (not expected within the
    /// ranges above).
    Config(DiskConfigError),
    /// A scheduler refused a request (not expected within the ranges
    /// above).
    Request(AddError),
    /// A scheduler with every application backlogged dispatched nothing.
    Stalled {
        /// The scheduler.
        sched: &'static str,
    },
}

impl fmt::Display for CostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Apps(n) => write!(
                f,
                "application count {n} is outside 1..={MAX_APPS} (two requests each, at most {MAX_QUEUED} queued)"
            ),
            Self::NoCounts => write!(f, "no application count given"),
            Self::Pairs(n) => write!(f, "pairs per round {n} is outside 1..={MAX_PAIRS}"),
            Self::Rounds(n) => write!(f, "rounds {n} is outside 1..={MAX_ROUNDS}"),
            Self::Total {
                pairs,
                rounds,
                counts,
            } => write!(
                f,
                "{pairs} pairs x {rounds} rounds x {counts} application counts is above {MAX_TOTAL_PAIRS} timed pairs per scheduler (minutes to an hour of timing)"
            ),
            Self::Config(e) => write!(f, "{e}"),
            Self::Request(e) => write!(f, "{e}"),
            Self::Stalled { sched } => write!(f, "{sched} dispatched nothing while backlogged"),
        }
    }
}

impl std::error::Error for CostError {}

impl From<DiskConfigError> for CostError {
    fn from(e: DiskConfigError) -> Self {
        Self::Config(e)
    }
}

/// Checks a sweep's sizes against the limits above, before anything is
/// allocated.
pub fn check(app_counts: &[u32], pairs: u64, rounds: u32) -> Result<(), CostError> {
    if app_counts.is_empty() {
        return Err(CostError::NoCounts);
    }
    if let Some(&n) = app_counts.iter().find(|&&n| !(1..=MAX_APPS).contains(&n)) {
        return Err(CostError::Apps(n));
    }
    if !(1..=MAX_PAIRS).contains(&pairs) {
        return Err(CostError::Pairs(pairs));
    }
    if !(1..=MAX_ROUNDS).contains(&rounds) {
        return Err(CostError::Rounds(rounds));
    }
    let total = pairs
        .checked_mul(u64::from(rounds))
        .and_then(|t| t.checked_mul(app_counts.len() as u64));
    if total.is_none_or(|t| t > MAX_TOTAL_PAIRS) {
        return Err(CostError::Total {
            pairs,
            rounds,
            counts: app_counts.len(),
        });
    }
    Ok(())
}

/// One measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Cost {
    /// Scheduler.
    pub sched: String,
    /// Backlogged applications.
    pub apps: u32,
    /// Timed add+dispatch pairs.
    pub pairs: u64,
    /// Nanoseconds per pair (best of the rounds).
    pub ns_per_pair: f64,
}

/// BFQ in the worst case for its heaps (see the module doc), for `apps`
/// applications in `1..=`[`MAX_APPS`].
pub fn worst_case_bfq(apps: u32) -> Result<Bfq, DiskConfigError> {
    let cfg = BfqConfig {
        max_budget: 256,
        default_budget: 256,
        budget_step: 256,
        t_wait: 0,
        t_fifo: 60_000_000_000,
        t_max: TimeBudget::Off,
        l_max: 256,
        max_apps: apps,
        // Two requests per application.
        max_queued: 2 * MAX_APPS as usize,
        // The thesis' algorithm: the applications never idle for long, so
        // raising would not start anyway.
        low_latency: false,
        inject: false,
        warm_depth: crate::bfq::DEFAULT_WARM_DEPTH,
    };
    Bfq::new(cfg)
}

/// Times `pairs` add+dispatch(+complete) pairs on `sched` with `apps`
/// applications kept backlogged (2 requests each); best of `rounds`.
/// The sizes are checked as [`check`] does.
pub fn measure<S: DiskScheduler>(
    mut sched: S,
    apps: u32,
    pairs: u64,
    rounds: u32,
) -> Result<Cost, CostError> {
    check(&[apps], pairs, rounds)?;
    for i in 0..apps {
        sched.add_app(AppId(i), AppSpec::weight(1 + i % 4))?;
    }
    let mut now: Nanos = 0;
    let mut pos = vec![0u64; apps as usize];
    let add = |s: &mut S, app: u32, now: Nanos, pos: &mut [u64]| {
        let p = &mut pos[app as usize];
        let sector = u64::from(app) * (1 << 24) + *p;
        *p += 256;
        s.add_request(now, Request::read(AppId(app), sector, 256))
            .map_err(CostError::Request)
    };
    for i in 0..apps {
        add(&mut sched, i, now, &mut pos)?;
        add(&mut sched, i, now, &mut pos)?;
    }
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t0 = Instant::now();
        for _ in 0..pairs {
            now += 1000;
            let Dispatch::Serve(r) = sched.dispatch(now) else {
                return Err(CostError::Stalled {
                    sched: sched.name(),
                });
            };
            sched.complete(now, &r);
            add(&mut sched, r.app.0, now, &mut pos)?;
        }
        best = best.min(t0.elapsed().as_nanos() as f64 / pairs as f64);
    }
    Ok(Cost {
        sched: sched.name().into(),
        apps,
        pairs,
        ns_per_pair: best,
    })
}

/// BFQ (worst case) and C-LOOK at each application count, after
/// [`check`].
pub fn sweep(app_counts: &[u32], pairs: u64, rounds: u32) -> Result<Vec<Cost>, CostError> {
    check(app_counts, pairs, rounds)?;
    let mut out = Vec::new();
    for &n in app_counts {
        out.push(measure(worst_case_bfq(n)?, n, pairs, rounds)?);
        out.push(measure(CLook::new(n, 256), n, pairs, rounds)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_loop_keeps_every_application_backlogged() {
        let c = measure(worst_case_bfq(10).unwrap(), 10, 1000, 1).unwrap();
        assert_eq!(c.apps, 10);
        assert!(c.ns_per_pair > 0.0);
    }

    #[test]
    fn sizes_are_checked_at_each_limit_before_anything_runs() {
        assert_eq!(check(&[MAX_APPS], 1, 1), Ok(()));
        assert_eq!(
            check(&[MAX_APPS + 1], 1, 1),
            Err(CostError::Apps(MAX_APPS + 1))
        );
        assert_eq!(check(&[1, 0], 1, 1), Err(CostError::Apps(0)));
        assert_eq!(check(&[], 1, 1), Err(CostError::NoCounts));
        assert_eq!(check(&[1], 0, 1), Err(CostError::Pairs(0)));
        assert_eq!(
            check(&[1], MAX_PAIRS + 1, 1),
            Err(CostError::Pairs(MAX_PAIRS + 1))
        );
        assert_eq!(check(&[1], 1, 0), Err(CostError::Rounds(0)));
        assert_eq!(
            check(&[1], 1, MAX_ROUNDS + 1),
            Err(CostError::Rounds(MAX_ROUNDS + 1))
        );
        assert_eq!(check(&[1, 2], MAX_TOTAL_PAIRS / 2, 1), Ok(()));
        assert!(matches!(
            check(&[1, 2], MAX_TOTAL_PAIRS / 2, 2),
            Err(CostError::Total { counts: 2, .. })
        ));
        assert!(matches!(
            measure(CLook::new(1, 256), 1, 0, 1),
            Err(CostError::Pairs(0))
        ));
    }
}
