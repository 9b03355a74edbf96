//! The QFQ paper §6 (Fig. 8, Tables 2–3) on a `--quick`-sized run: the paper's
//! orderings of the end-to-end delays hold (DRR ≫ QFQ ≈ S-KPS > WF2Q+ for
//! f0; QFQ ≈ S-KPS ≈ WF2Q+ for f1), and the check can fail.

use fairway_core::s_kps::SKps;
use fairway_eval::netsim::fig8::{claims, run_fig8, Fig8Params};
use fairway_eval::netsim::{SchedChoice, SchedFactory};
use std::sync::Arc;

fn s_kps() -> SchedChoice {
    let factory: SchedFactory = Arc::new(|cap| Box::new(SKps::new(cap)));
    SchedChoice::custom("s-kps", factory)
}

fn four() -> Vec<SchedChoice> {
    vec![
        SchedChoice::parse("drr:quantum=250").unwrap(),
        SchedChoice::parse("qfq").unwrap(),
        s_kps(),
        SchedChoice::parse("wf2q+").unwrap(),
    ]
}

#[test]
fn the_papers_orderings_hold_on_a_quick_run() {
    let rows = run_fig8(&four(), &Fig8Params::quick(), &mut |_, _| {}).unwrap();
    for r in &rows {
        eprintln!(
            "{:6} f0 {:7.2} ± {:6.2} max {:7.2} | f1 {:7.2} ± {:6.2} max {:7.2} | drops {}",
            r.sched,
            r.f0.mean_delay_ms,
            r.f0.std_delay_ms,
            r.f0.max_delay_ms,
            r.f1.mean_delay_ms,
            r.f1.std_delay_ms,
            r.f1.max_delay_ms,
            r.dropped
        );
        assert!(r.f0.received > 100 && r.f1.received > 1000, "{}", r.sched);
        assert_eq!(r.f0.dropped + r.f1.dropped, 0, "{}", r.sched);
    }
    let c = claims(&rows);
    assert_eq!(c.len(), 7);
    for claim in &c {
        eprintln!(
            "{} {}",
            if claim.holds { "PASS" } else { "FAIL" },
            claim.claim
        );
    }
    assert!(c.iter().all(|c| c.holds), "{c:#?}");
}

/// The check can fail: with FIFO in the place of WF2Q+, f0 no longer has
/// the smallest delays, and the claims that QFQ and S-KPS are above the
/// optimum are reported as failing.
#[test]
fn the_ordering_check_can_fail() {
    let mut choices = four();
    choices[3] = SchedChoice::parse("fifo").unwrap();
    let mut rows = run_fig8(&choices, &Fig8Params::quick(), &mut |_, _| {}).unwrap();
    rows[3].sched = "wf2q+".into();
    assert!(claims(&rows).iter().any(|c| !c.holds));
}
