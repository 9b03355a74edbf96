//! Every scheduler: nothing lost (each accepted request is dispatched
//! exactly once and completed, or handed back by `drain`/`remove_app`),
//! typed errors for bad configuration and bad requests.

use fairway_disk::catalogue::{DiskSchedKind, DiskSchedSpec};
use fairway_disk::model::DiskModel;
use fairway_disk::sim::{SimEvent, Simulation};
use fairway_disk::workload::{App, RandomReader};
use fairway_disk::{
    AddErrorKind, AppId, AppSpec, Bfq, BfqConfig, DiskConfigError, DiskScheduler, Dispatch,
    Request, TimeBudget, MS,
};
use proptest::prelude::*;
use std::collections::HashMap;

/// Every scheduler of the catalogue at its defaults, then a few
/// non-default parameters.
fn all() -> Vec<DiskSchedSpec> {
    let mut specs: Vec<DiskSchedSpec> = DiskSchedKind::ALL
        .iter()
        .map(|k| k.default_spec())
        .collect();
    specs.extend([
        DiskSchedSpec::bfq(1024),
        DiskSchedSpec::cfq(20),
        DiskSchedSpec::scan_edf(40, 4),
    ]);
    specs
}

proptest! {
    // PROPTEST_CASES (the slow tier's long runs, scripts/test-slow) overrides the fast tier's default.
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12), ..ProptestConfig::default() })]

    #[test]
    fn every_request_is_served_once_and_nothing_is_lost(
        n in 1usize..=6,
        depths in prop::collection::vec(1u32..=4, 6),
        seed in any::<u64>(),
    ) {
        let disk = DiskModel::dtla_307030();
        for spec in all() {
            let mut sched = spec.build(8).unwrap();
            let mut apps = Vec::new();
            for (i, &depth) in depths.iter().enumerate().take(n) {
                sched.add_app(AppId(i as u32), AppSpec::weight(i as u32 + 1)).unwrap();
                let lo = disk.capacity() / 8 * i as u64;
                let mut r = RandomReader::new(AppId(i as u32), lo, lo + (1 << 20), (1, 256), 3 * MS, depth, 0.5, seed + i as u64);
                r.remaining = 40;
                apps.push(App::Random(r));
            }
            let mut sim = Simulation::new(sched, disk.clone(), apps);
            let mut state: HashMap<u64, u8> = HashMap::new();
            let mut bad = 0;
            let mut issued = 0;
            sim.run(u64::MAX, &mut |ev| match ev {
                SimEvent::Issue { req, .. } => {
                    issued += 1;
                    // Requests are copies: identify them by (app, sector, arrival).
                    let k = (req.app.0 as u64) << 48 ^ req.sector ^ req.arrival.rotate_left(17);
                    let _ = state.insert(k, 0);
                }
                SimEvent::Dispatch { req, .. } => {
                    let k = (req.app.0 as u64) << 48 ^ req.sector ^ req.arrival.rotate_left(17);
                    match state.get_mut(&k) {
                        Some(s) if *s == 0 => *s = 1,
                        _ => bad += 1,
                    }
                }
                _ => {}
            });
            prop_assert_eq!(bad, 0, "{}", spec.label());
            prop_assert_eq!(issued, 40 * n, "{}", spec.label());
            prop_assert_eq!(sim.totals().completed as usize, issued, "{}", spec.label());
            prop_assert!(state.values().all(|&s| s == 1), "{}", spec.label());
            prop_assert_eq!(sim.sched.queued(), 0);
        }
    }
}

#[test]
fn drain_and_remove_hand_back_queued_requests() {
    for spec in all() {
        let mut s = spec.build(4).unwrap();
        s.add_app(AppId(0), AppSpec::weight(1)).unwrap();
        s.add_app(AppId(1), AppSpec::weight(1)).unwrap();
        for k in 0..5 {
            s.add_request(0, Request::read(AppId(0), k * 1000, 8))
                .unwrap();
            s.add_request(0, Request::read(AppId(1), k * 1000 + 1, 8))
                .unwrap();
        }
        let Dispatch::Serve(first) = s.dispatch(0) else {
            panic!("{}", spec.label())
        };
        let back = s.remove_app(AppId(1)).unwrap();
        let rest = s.drain();
        assert_eq!(back.len() + rest.len() + 1, 10, "{}", spec.label());
        assert!(back.iter().all(|r| r.app == AppId(1)));
        assert_eq!(s.queued(), 0, "{}", spec.label());
        let _ = first;
    }
}

#[test]
fn bad_requests_come_back_typed() {
    for spec in all() {
        let mut s = spec.build(4).unwrap();
        s.add_app(AppId(0), AppSpec::weight(1)).unwrap();
        let e = s.add_request(0, Request::read(AppId(3), 0, 8)).unwrap_err();
        assert_eq!(e.kind, AddErrorKind::UnknownApp);
        assert_eq!(e.request.app, AppId(3));
        let e = s.add_request(0, Request::read(AppId(0), 0, 0)).unwrap_err();
        assert_eq!(e.kind, AddErrorKind::ZeroLength);
        let e = s
            .add_request(0, Request::read(AppId(0), 0, 257))
            .unwrap_err();
        assert_eq!(e.kind, AddErrorKind::TooLong { len: 257, max: 256 });
        assert_eq!(
            s.add_app(AppId(9), AppSpec::weight(1)),
            Err(DiskConfigError::AppIdTooLarge {
                app: AppId(9),
                max_apps: 4
            })
        );
        assert_eq!(
            s.add_app(AppId(0), AppSpec::weight(1)),
            Err(DiskConfigError::AppExists(AppId(0)))
        );
        assert!(matches!(
            s.add_app(AppId(1), AppSpec::weight(0)),
            Err(DiskConfigError::OutOfRange { name: "weight", .. })
        ));
        assert_eq!(s.queued(), 0);
    }
}

#[test]
fn bfq_configuration_errors_name_the_parameter() {
    let named = |r: Result<BfqConfig, DiskConfigError>| match r {
        Err(DiskConfigError::OutOfRange { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    assert_eq!(named(BfqConfig::simplified(0)), "max-budget");
    assert_eq!(named(BfqConfig::simplified(100)), "max-budget");
    assert_eq!(named(BfqConfig::boost_level(1.5, 60_000)), "boost-level");
    let ok = BfqConfig::simplified(4096).unwrap();
    for (cfg, name) in [
        (
            BfqConfig {
                budget_step: 0,
                ..ok
            },
            "budget-step",
        ),
        (
            BfqConfig {
                default_budget: 0,
                ..ok
            },
            "default-budget",
        ),
        (
            BfqConfig {
                default_budget: 5000,
                ..ok
            },
            "default-budget",
        ),
        (
            BfqConfig {
                t_max: TimeBudget::Fixed(0),
                ..ok
            },
            "t-max",
        ),
        (
            BfqConfig {
                t_wait: 2_000_000_000,
                ..ok
            },
            "t-wait",
        ),
    ] {
        assert_eq!(named(cfg.validate().map(|_| cfg)), name);
        assert!(Bfq::new(cfg).is_err());
    }
    // Boost level 0 gives B_max = L_max, level 1 the sectors of 200 ms.
    assert_eq!(BfqConfig::boost_level(0.0, 70_000).unwrap().max_budget, 256);
    assert_eq!(
        BfqConfig::boost_level(1.0, 70_000).unwrap().max_budget,
        14_000
    );
    // The admissible total weight.
    let mut b = Bfq::new(BfqConfig {
        max_apps: 400,
        ..ok
    })
    .unwrap();
    for i in 0..256 {
        b.add_app(AppId(i), AppSpec::weight(65536)).unwrap();
    }
    assert!(matches!(
        b.add_app(AppId(300), AppSpec::weight(1)),
        Err(DiskConfigError::WeightSumTooLarge { .. })
    ));
    assert!(matches!(
        b.add_app(
            AppId(301),
            AppSpec {
                max_budget: Some(8),
                ..AppSpec::weight(1)
            }
        ),
        Err(DiskConfigError::OutOfRange {
            name: "app-max-budget",
            ..
        })
    ));
    assert_eq!(
        b.remove_app(AppId(399)),
        Err(DiskConfigError::UnknownApp(AppId(399)))
    );
}

/// The baselines' constructors refuse a zero granularity or batch instead
/// of raising it to 1.
#[test]
fn baseline_constructors_refuse_zero_instead_of_raising_it() {
    use fairway_disk::baseline::{ScanEdf, Yfq};
    assert!(matches!(
        ScanEdf::new(2, 256, 20 * MS, 0, 0),
        Err(DiskConfigError::OutOfRange { name: "delta", .. })
    ));
    assert!(ScanEdf::new(2, 256, 20 * MS, 1, 0).is_ok());
    assert!(matches!(
        Yfq::new(2, 256, 0, 0),
        Err(DiskConfigError::OutOfRange { name: "batch", .. })
    ));
    assert!(Yfq::new(2, 256, 1, 0).is_ok());
}
