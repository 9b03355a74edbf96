//! Cost of BFQ per request: nanoseconds per `add_request` + `dispatch`
//! (+ `complete`) with N backlogged applications, in the worst case for
//! B-WF2Q+: budgets of one request (B_max = L_max), so every request
//! deactivates its application and re-inserts it in the heaps (one
//! O(log N) insertion and one extraction per request). C-LOOK over the
//! same requests is measured in the same run as the baseline.

use crate::baseline::CLook;
use crate::bfq::{Bfq, BfqConfig, TimeBudget};
use crate::request::{AppId, Nanos, Request};
use crate::scheduler::{AppSpec, DiskScheduler, Dispatch};
use serde::Serialize;
use std::time::Instant;

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

/// BFQ in the worst case for its heaps (see the module doc).
pub fn worst_case_bfq(apps: u32) -> Bfq {
    let cfg = BfqConfig {
        max_budget: 256,
        default_budget: 256,
        budget_step: 256,
        t_wait: 0,
        t_fifo: 60_000_000_000,
        t_max: TimeBudget::Off,
        l_max: 256,
        max_apps: apps,
        max_queued: 1 << 22,
    };
    Bfq::new(cfg).expect("valid configuration")
}

/// Times `pairs` add+dispatch(+complete) pairs on `sched` with `apps`
/// applications kept backlogged (2 requests each); best of `rounds`.
pub fn measure<S: DiskScheduler>(mut sched: S, apps: u32, pairs: u64, rounds: u32) -> Cost {
    for i in 0..apps {
        sched
            .add_app(AppId(i), AppSpec::weight(1 + i % 4))
            .expect("admissible");
    }
    let mut now: Nanos = 0;
    let mut pos = vec![0u64; apps as usize];
    let add = |s: &mut S, app: u32, now: Nanos, pos: &mut [u64]| {
        let p = &mut pos[app as usize];
        let sector = u64::from(app) * (1 << 24) + *p;
        *p += 256;
        s.add_request(now, Request::read(AppId(app), sector, 256))
            .expect("fits");
    };
    for i in 0..apps {
        add(&mut sched, i, now, &mut pos);
        add(&mut sched, i, now, &mut pos);
    }
    let mut best = f64::MAX;
    for _ in 0..rounds.max(1) {
        let t0 = Instant::now();
        for _ in 0..pairs {
            now += 1000;
            let Dispatch::Serve(r) = sched.dispatch(now) else {
                panic!("backlogged scheduler returned no request");
            };
            sched.complete(now, &r);
            add(&mut sched, r.app.0, now, &mut pos);
        }
        best = best.min(t0.elapsed().as_nanos() as f64 / pairs as f64);
    }
    Cost {
        sched: sched.name().into(),
        apps,
        pairs,
        ns_per_pair: best,
    }
}

/// BFQ (worst case) and C-LOOK at each application count.
pub fn sweep(app_counts: &[u32], pairs: u64, rounds: u32) -> Vec<Cost> {
    let mut out = Vec::new();
    for &n in app_counts {
        out.push(measure(worst_case_bfq(n), n, pairs, rounds));
        out.push(measure(CLook::new(n, 256), n, pairs, rounds));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_loop_keeps_every_application_backlogged() {
        let c = measure(worst_case_bfq(10), 10, 1000, 1);
        assert_eq!(c.apps, 10);
        assert!(c.ns_per_pair > 0.0);
    }
}
