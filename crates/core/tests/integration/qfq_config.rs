//! QFQ / QFQ+ / WF2Q++ configuration ranges, the registry entries, the
//! 1k-highw flow set of the QFQ+ paper §8.3, and aggregate management.

use crate::common::*;
use fairway_core::qfq::{self, Qfq};
use fairway_core::registry::SchedKind;
use fairway_core::sched_plus::{QfqPlus, Wf2qPlusPlus};
use fairway_core::*;

fn all_new(cap: Capacity) -> Vec<Box<dyn Scheduler<u32>>> {
    vec![
        Box::new(Qfq::<u32>::new(cap)),
        Box::new(QfqPlus::<u32>::new(cap)),
        Box::new(Wf2qPlusPlus::<u32>::new(cap)),
    ]
}

#[test]
fn ranges_are_enforced_with_typed_errors() {
    for mut s in all_new(Capacity::new(4, 16)) {
        let name = s.name();
        for (w, l) in [(1, 64), (1024, 9000), (1 << 16, 1 << 16)] {
            s.add_flow(FlowId(0), FlowConfig::new(w, l)).unwrap();
            s.remove_flow(FlowId(0)).unwrap();
        }
        assert!(
            matches!(
                s.add_flow(FlowId(0), FlowConfig::new((1 << 16) + 1, 1500)),
                Err(ConfigError::InvalidWeight { max: 65536, .. })
            ),
            "{name}"
        );
        assert!(matches!(
            s.add_flow(FlowId(0), FlowConfig::new(1, (1 << 16) + 1)),
            Err(ConfigError::InvalidMaxLen { max: 65536, .. })
        ));
    }
    // Weight sum: at most 2^24.
    let mut s = Qfq::<u32>::new(Capacity::new(300, 16));
    for f in 0..256 {
        s.add_flow(FlowId(f), FlowConfig::new(1 << 16, 1500))
            .unwrap();
    }
    assert!(matches!(
        s.add_flow(FlowId(256), FlowConfig::new(1, 1500)),
        Err(ConfigError::WeightSumOverflow { max: 16777216, .. })
    ));
    assert!(QfqPlus::<u32>::try_with_options(Capacity::new(4, 4), Limits::DEFAULT, 0).is_err());
    assert!(QfqPlus::<u32>::try_with_options(Capacity::new(4, 4), Limits::DEFAULT, 65).is_err());
    assert!(QfqPlus::<u32>::try_with_options(Capacity::new(4, 4), Limits::DEFAULT, 64).is_ok());
}

#[test]
fn registry_builds_the_new_schedulers() {
    let names: Vec<&str> = SchedKind::ALL.iter().map(|k| k.name()).collect();
    for name in ["qfq", "qfq+", "wf2q+", "wf2q++"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let l = registry::parse_list("qfq,qfq+:m=4,wf2q++:m=2,wf2q+").unwrap();
    assert_eq!(l[1].param("m"), Some(4));
    assert!(SchedSpec::parse("qfq:m=4").is_err());
    for spec in l {
        let s = spec.build::<u32>(Capacity::new(8, 8), Limits::DEFAULT);
        assert_eq!(s.name(), spec.kind.name());
    }
}

/// Index computation: `⌈log2(L·⌈2^30/w⌉)⌉ − 14`.
#[test]
fn group_index_follows_the_paper() {
    assert_eq!(qfq::group_index(1 << 14), 0);
    assert_eq!(qfq::group_index((1 << 14) + 1), 1);
    assert_eq!(qfq::group_index(1), 0);
    assert_eq!(qfq::group_index(1500 << 30), 41 - 14); // 1500 < 2^11
    assert_eq!(qfq::group_index(1024 << 30), 40 - 14); // exact power of two
    assert_eq!(qfq::group_index(65536u64 << 30), qfq::NUM_GROUPS - 2);
    let mut s = Qfq::<u32>::new(Capacity::new(2, 2));
    s.add_flow(FlowId(0), FlowConfig::new(333, 1500)).unwrap();
    s.add_flow(FlowId(1), FlowConfig::new(1, 1500)).unwrap();
    // L/φ = 1500·W/333 bytes ≤ σ < 2·L/φ.
    let w = s.weight_denominator() as f64;
    let sigma = s.slot_size_bytes(FlowId(0)).unwrap();
    let l_over_phi = 1500.0 * w / 333.0;
    assert!(l_over_phi <= sigma * (1.0 + 1e-6) && sigma < 2.0 * l_over_phi);
}

/// 1k-highw (the QFQ+ paper §8.3): one flow of weight 333 and 999 of weight
/// 1, 1500-byte packets, everyone backlogged. Over the first 4000 packets
/// the heavy flow must get its 25% share up to its B-WFI (QFQ:
/// `φ(3σ + 2L) < 6.5L`; QFQ+ adds the QFQ+ paper Eq. 8's
/// `(4 − …)L + (M/m − 1)L`).
#[test]
fn one_k_highw_gets_its_share() {
    let cap = Capacity::new(1000, 30_000);
    let build: Vec<(Box<dyn Scheduler<u32>>, u64)> = vec![
        (Box::new(Qfq::<u32>::new(cap)), 7),
        (Box::new(QfqPlus::<u32>::new(cap)), 18),
        (Box::new(Wf2qPlusPlus::<u32>::new(cap)), 18),
    ];
    for (mut s, slack) in build {
        s.add_flow(FlowId(0), FlowConfig::new(333, 1500)).unwrap();
        for f in 1..1000 {
            s.add_flow(FlowId(f), FlowConfig::new(1, 1500)).unwrap();
        }
        for _ in 0..20 {
            for f in 0..1000 {
                s.enqueue(FlowId(f), 1500).unwrap();
            }
        }
        for _ in 0..1000 {
            s.enqueue(FlowId(0), 1500).unwrap();
        }
        let mut heavy = 0u64;
        for n in 1..=4000u64 {
            if s.dequeue().unwrap().flow == FlowId(0) {
                heavy += 1;
            }
            let fair = n * 333 / 1332;
            assert!(
                heavy + slack >= fair,
                "{}: {heavy} < {fair} after {n}",
                s.name()
            );
        }
    }
}

/// Aggregates are created, filled, emptied and destroyed as flows come and
/// go, also while backlogged.
#[test]
fn aggregates_follow_flow_churn() {
    let mut s = QfqPlus::<u32>::with_options(
        Capacity::new(20, 100),
        Limits::DEFAULT,
        AggregateSize::new(4).unwrap(),
    );
    for f in 0..10 {
        s.add_flow(FlowId(f), FlowConfig::new(2, 1500)).unwrap();
        s.enqueue(FlowId(f), 1000).unwrap();
    }
    assert_eq!(s.num_aggregates(), 3);
    assert_eq!(s.aggregate_size(FlowId(0)), Some(4));
    assert_eq!(s.aggregate_size(FlowId(9)), Some(2));
    s.invariants().unwrap();
    s.dequeue().unwrap();
    for f in 0..4 {
        s.reconfigure_flow(FlowId(f), FlowConfig::new(5, 1500))
            .unwrap();
        s.invariants().unwrap();
    }
    assert_eq!(s.aggregate_size(FlowId(0)), Some(4));
    for f in 4..10 {
        s.remove_flow(FlowId(f)).unwrap();
        s.invariants().unwrap();
    }
    assert_eq!(s.num_aggregates(), 1);
    let mut n = 0;
    while s.dequeue().is_some() {
        s.invariants().unwrap();
        n += 1;
    }
    assert_eq!(n, 3, "one packet was dequeued before, six were removed");
    assert_eq!(s.slot_clamps(), 0);
}

/// Rough per-pair cost, for a quick look only (`--ignored --release`).
#[test]
#[ignore = "benchmark: rough per-pair cost, run with --release"]
fn cost_sketch() {
    use std::time::Instant;
    for flows in [1000u32, 32768] {
        let cap = Capacity::new(flows, flows * 4);
        let mut v: Vec<Box<dyn Scheduler<u32>>> = vec![
            Box::new(fairway_core::Drr::new(cap)),
            Box::new(Qfq::<u32>::new(cap)),
            Box::new(QfqPlus::<u32>::new(cap)),
        ];
        for s in v.iter_mut() {
            for f in 0..flows {
                let w = [1, 2, 8][(f % 3) as usize];
                s.add_flow(FlowId(f), FlowConfig::new(w, 1700)).unwrap();
                for _ in 0..3 {
                    s.enqueue(FlowId(f), 1700).unwrap();
                }
            }
            let pairs = 5_000_000u64;
            let t = Instant::now();
            for _ in 0..pairs {
                let d = s.dequeue().unwrap();
                s.enqueue(d.flow, d.packet).unwrap();
            }
            let ns = t.elapsed().as_nanos() as f64 / pairs as f64;
            println!("{flows} flows {}: {ns:.1} ns/pair", s.name());
        }
    }
}
