//! Unit tests of the cost harness: conservation, thresholds, the baseline,
//! the reports and the sweep outputs. Small flow sets keep them fast.

use super::sweep::{sweep_flows, to_csv, write_flows_outputs};
use super::*;
use fairway_core::SchedKind;

fn subjects() -> Vec<Subject> {
    Subject::all()
}

fn setup(flows: &str, pattern: CostPattern) -> CostSetup {
    CostSetup::new(FlowSet::parse(flows).unwrap(), pattern, 0)
}

#[test]
fn every_pattern_dequeues_what_it_enqueues() {
    for &pattern in CostPattern::ALL {
        for subject in subjects() {
            let s = setup("1x7,2x5,8x3", pattern);
            let mut r = build_runner(&subject, &s).unwrap();
            let sample = r.run(3000, None);
            assert!(sample.pairs >= 3000, "{pattern} {}", r.label());
            r.drain();
            let st = r.stats();
            assert_eq!(st.enqueued, st.dequeued, "{pattern} {}", r.label());
            assert_eq!(
                (st.refused, st.underruns),
                (0, 0),
                "{pattern} {}",
                r.label()
            );
            assert_eq!(r.queued(), 0);
        }
    }
}

/// The measured region counts dequeues once per run, from the backlog it
/// started and ended with: after runs that start with packets queued
/// (`full` and `alternate` keep `low > 0`), the counters still say exactly
/// what the target holds.
#[test]
fn counters_match_the_target_across_runs() {
    for &pattern in CostPattern::ALL {
        for subject in [
            Subject::None,
            Subject::Sched(SchedSpec::new(SchedKind::Drr)),
        ] {
            let s = setup("1x5,2x3", pattern);
            let mut r = build_runner(&subject, &s).unwrap();
            for run in 0..4 {
                r.run(500 + 37 * run, None);
                let st = r.stats();
                assert_eq!(
                    st.enqueued - st.dequeued,
                    r.queued(),
                    "{pattern} {} run {run}",
                    r.label()
                );
            }
            assert!(r.queued() > 0 || s.thresholds().low == 0, "{pattern}");
        }
    }
}

#[test]
fn backlog_stays_within_the_pattern_thresholds() {
    for &pattern in CostPattern::ALL {
        for subject in subjects() {
            let s = setup("1x6,2x4,8x2", pattern);
            let th = s.thresholds();
            let mut r = build_runner(&subject, &s).unwrap();
            for cycle in 0..20 {
                let high = r.enqueue_phase();
                assert_eq!(high, th.high, "{pattern} {} cycle {cycle}", r.label());
                for f in 0..12 {
                    if let Some(q) = r.flow_queued(f) {
                        assert!(q <= u64::from(th.per_flow_cap), "{pattern} flow {f}: {q}");
                    }
                }
                let low = r.dequeue_phase();
                assert_eq!(low, th.low, "{pattern} {} cycle {cycle}", r.label());
            }
            assert_eq!(r.stats().max_backlog, th.high);
        }
    }
}

#[test]
fn least_backlogged_tracking_matches_the_scheduler() {
    let s = setup("1x9,8x3", CostPattern::Full);
    let spec = SchedSpec::new(SchedKind::Drr);
    let flows = s.flows.flows();
    let mut sched = SchedTarget(fairway_core::Drr::<BenchPacket>::new(s.capacity()));
    for (i, (w, l)) in flows.iter().enumerate() {
        sched
            .0
            .add_flow(FlowId(i as u32), FlowConfig::new(*w, *l))
            .unwrap();
    }
    let mut d = Driver::new(s.thresholds(), &flows, 1).unwrap();
    for _ in 0..10 {
        d.enqueue_phase(&mut sched);
        d.dequeue_phase(&mut sched);
        for f in 0..flows.len() as u32 {
            assert_eq!(
                d.tracked_backlog(f).map(u64::from),
                sched.flow_queued(f),
                "{spec} flow {f}"
            );
        }
    }
}

#[test]
fn smooth_fills_every_flow_to_the_cap_and_alternate_toggles_by_one() {
    let s = setup("1x5,2x5", CostPattern::Smooth);
    let mut r = build_runner(&Subject::Sched(SchedSpec::new(SchedKind::Fifo)), &s).unwrap();
    r.enqueue_phase();
    for f in 0..10 {
        assert_eq!(r.flow_queued(f), Some(u64::from(PER_FLOW_CAP)));
    }
    let s = setup("1x64", CostPattern::Alternate);
    let mut r = build_runner(&Subject::Sched(SchedSpec::new(SchedKind::Drr)), &s).unwrap();
    assert_eq!(r.enqueue_phase(), 65);
    for _ in 0..100 {
        assert_eq!(r.dequeue_phase(), 64);
        assert_eq!(r.enqueue_phase(), 65);
        assert!((0..64).all(|f| r.flow_queued(f).unwrap() <= 2));
    }
}

#[test]
fn measure_reports_the_baseline_and_parses_as_json() {
    let s = setup("1k-w1", CostPattern::Smooth);
    let opts = MeasureOptions {
        pairs: 40_000,
        repeat: 3,
        counters: false,
    };
    let mut counters = Err("not opened in tests".to_string());
    let mut calls = 0;
    let subjects = [
        Subject::None,
        Subject::Sched(SchedSpec::new(SchedKind::Fifo)),
        Subject::Sched(SchedSpec::new(SchedKind::Drr)),
    ];
    let reports = measure(&subjects, &s, &opts, &mut counters, &mut |p| {
        calls += 1;
        assert!(p.done <= p.total);
    })
    .unwrap();
    assert_eq!(calls, 9);
    assert_eq!(reports.len(), 3);
    let none = &reports[0];
    assert_eq!(none.sched, "none");
    assert_eq!(none.ns_per_pair_net, 0.0);
    for r in &reports {
        assert!(r.ns_per_pair > 0.0 && r.ns_per_pair.is_finite());
        assert!(r.ns_per_pair_min <= r.ns_per_pair && r.ns_per_pair <= r.ns_per_pair_max);
        assert!(r.pairs >= 40_000);
        assert_eq!(r.none_ns_per_pair, Some(none.ns_per_pair));
        assert_eq!(r.counters, "disabled");
        let v: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(r).unwrap()).unwrap();
        for key in [
            "sched",
            "flows",
            "pattern",
            "ns_per_pair",
            "ns_per_pair_net",
        ] {
            assert!(v.get(key).is_some(), "{key}");
        }
        assert_eq!(v["flows"], "1k-w1");
        assert_eq!(v["pattern"], "smooth");
        assert_eq!(r.ns_per_pair_runs.len(), 3);
        // Three repeats are too few to split into halves.
        assert_eq!(r.drift, None);
        assert!(!r.drifting());
    }
    // Without `none` among the subjects it is still measured, not reported.
    let reports = measure(&subjects[1..2], &s, &opts, &mut counters, &mut |_| {}).unwrap();
    assert_eq!(reports.len(), 1);
    assert!(reports[0].none_ns_per_pair.is_some());
}

#[test]
fn drift_compares_later_repeats_with_earlier_ones_against_the_baseline() {
    let flat = [10.0, 11.0, 9.0, 10.0, 10.0, 11.0];
    // Stationary subject, stationary baseline.
    let d = drift(&[20.0, 21.0, 19.0, 20.0, 22.0, 20.0], &flat).unwrap();
    assert!((0.9..1.1).contains(&d), "{d}");
    // Each repeat slower than the last (the DRR 32k-wmix case): reported.
    let d = drift(&[20.0, 60.0, 120.0, 200.0, 260.0, 300.0], &flat).unwrap();
    assert!(d > DRIFT_LIMIT, "{d}");
    // The machine slowing down for the later rounds slows the baseline
    // alike: that cancels.
    let slow_later = [10.0, 10.0, 10.0, 20.0, 20.0, 20.0];
    let d = drift(&[20.0, 20.0, 20.0, 40.0, 41.0, 39.0], &slow_later).unwrap();
    assert!((0.9..1.1).contains(&d), "{d}");
    // Too few repeats, unequal series, a zero median: no figure.
    assert_eq!(drift(&[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]), None);
    assert_eq!(drift(&[1.0; 4], &[1.0; 5]), None);
    assert_eq!(drift(&[0.0, 0.0, 1.0, 1.0], &[1.0; 4]), None);
}

#[test]
fn spread_is_min_median_max() {
    let s = Spread::of(&[3.0, 1.0, 2.0]);
    assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
    assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
    assert_eq!(Spread::of(&[]), Spread::default());
}

#[test]
fn flow_sweep_writes_csv_and_svg() {
    let opts = MeasureOptions {
        pairs: 5_000,
        repeat: 1,
        counters: false,
    };
    let mut counters = Err("off".to_string());
    let subjects = [
        Subject::None,
        Subject::Sched(SchedSpec::new(SchedKind::Drr)),
    ];
    let rows = sweep_flows(
        &subjects,
        CostPattern::Smooth,
        &[1, 4, 16],
        &opts,
        &mut counters,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(rows.len(), 6);
    let csv = to_csv("flows", &rows);
    assert_eq!(csv.lines().count(), 7);
    assert!(csv.starts_with("series,flows,sched,"));
    let dir = std::env::temp_dir().join(format!("fairway-cost-test-{}", std::process::id()));
    let files = write_flows_outputs(&dir, CostPattern::Smooth, &rows, "test").unwrap();
    let svg = std::fs::read_to_string(&files[1]).unwrap();
    assert!(svg.contains("<svg") && svg.contains("drr"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn empty_or_invalid_setups_are_errors() {
    let s = setup("1x4", CostPattern::Smooth);
    // An aggregate size outside 1..=64 never reaches a runner.
    assert!(SchedSpec::parse("qfq+:m=0").is_err());
    assert!(build_runner(&Subject::Sched(SchedSpec::parse("qfq+:m=1").unwrap()), &s).is_ok());
    let heavy = setup("70000x1", CostPattern::Smooth);
    assert!(build_runner(&Subject::Sched(SchedSpec::new(SchedKind::Drr)), &heavy).is_err());
}

#[test]
fn parses_subjects_and_flow_set_lists() {
    let s = Subject::parse_list(Some("none,drr,qfq+:m=4")).unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(s[0], Subject::None);
    assert_eq!(s[2].label(), "qfq+:m=4");
    assert_eq!(
        Subject::parse_list(None).unwrap().len(),
        SchedKind::ALL.len()
    );
    assert!(Subject::parse_list(Some("nope")).is_err());
    assert!(Subject::parse_list(Some("")).is_err());
    assert_eq!(FlowSet::parse_list("1k-w1,32k-wmix").unwrap().len(), 2);
    assert_eq!(FlowSet::parse_list("1x500,2x250").unwrap().len(), 1);
    assert_eq!(FlowSet::parse_list("1x500,2x250").unwrap()[0].len(), 750);
}
