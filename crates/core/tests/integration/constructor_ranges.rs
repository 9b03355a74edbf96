//! Constructor parameters at the edge of their range and one past it:
//! SCHED+'s `M` and the `Limits` handed to QFQ and SCHED+ are used exactly
//! as given or rejected with a typed error naming the value and the range;
//! where a constructor intersects limits (documented), the limits in effect
//! are visible through `limits()`.

use fairway_core::qfq::{Qfq, QFQ_LIMITS};
use fairway_core::sched_plus::{QfqPlus, Wf2qPlusPlus};
use fairway_core::*;

const CAP: Capacity = Capacity::new(4, 8);

#[test]
fn aggregate_size_is_used_as_given_or_rejected() {
    for m in [1, 64] {
        let size = AggregateSize::new(m).unwrap();
        let s = QfqPlus::<u32>::with_options(CAP, Limits::DEFAULT, size);
        assert_eq!(s.max_aggregate_size(), m);
        let s = Wf2qPlusPlus::<u32>::with_options(CAP, Limits::DEFAULT, size);
        assert_eq!(s.max_aggregate_size(), m);
        let s = QfqPlus::<u32>::try_with_options(CAP, Limits::DEFAULT, m).unwrap();
        assert_eq!(s.max_aggregate_size(), m);
    }
    for m in [0, 65] {
        let want = ConfigError::InvalidParameter("aggregate size m must be in 1..=64");
        assert_eq!(AggregateSize::new(m), Err(want.clone()));
        let err = QfqPlus::<u32>::try_with_options(CAP, Limits::DEFAULT, m).err();
        assert_eq!(err, Some(want.clone()));
        let err = Wf2qPlusPlus::<u32>::try_with_options(CAP, Limits::DEFAULT, m).err();
        assert_eq!(err, Some(want));
    }
}

/// `QFQ_LIMITS` with one field one past its maximum, and the error naming it.
fn one_past() -> [(Limits, ConfigError); 3] {
    let l = QFQ_LIMITS;
    [
        (
            Limits {
                max_weight: l.max_weight + 1,
                ..l
            },
            ConfigError::InvalidWeight {
                weight: l.max_weight + 1,
                max: l.max_weight,
            },
        ),
        (
            Limits {
                max_packet_len: l.max_packet_len + 1,
                ..l
            },
            ConfigError::InvalidMaxLen {
                max_len: l.max_packet_len + 1,
                max: l.max_packet_len,
            },
        ),
        (
            Limits {
                max_weight_sum: l.max_weight_sum + 1,
                ..l
            },
            ConfigError::WeightSumOverflow {
                sum: l.max_weight_sum + 1,
                max: l.max_weight_sum,
            },
        ),
    ]
}

#[test]
fn limits_at_the_algorithms_own_are_kept_one_past_is_rejected() {
    assert_eq!(
        Limits::DEFAULT,
        QFQ_LIMITS,
        "every default caller stays valid"
    );
    let q = Qfq::<u32>::try_with_limits(CAP, QFQ_LIMITS).unwrap();
    assert_eq!(q.limits(), QFQ_LIMITS);
    let s = QfqPlus::<u32>::try_with_options(CAP, QFQ_LIMITS, 8).unwrap();
    assert_eq!(s.limits(), QFQ_LIMITS);
    let s = Wf2qPlusPlus::<u32>::try_with_options(CAP, QFQ_LIMITS, 8).unwrap();
    assert_eq!(s.limits(), QFQ_LIMITS);
    for (limits, want) in one_past() {
        assert_eq!(
            Qfq::<u32>::try_with_limits(CAP, limits).err(),
            Some(want.clone())
        );
        let err = QfqPlus::<u32>::try_with_options(CAP, limits, 8).err();
        assert_eq!(err, Some(want.clone()));
        let err = Wf2qPlusPlus::<u32>::try_with_options(CAP, limits, 8).err();
        assert_eq!(err, Some(want));
    }
}

#[test]
fn intersecting_constructors_show_the_limits_in_effect() {
    // Narrower limits are used exactly; wider ones are intersected, as the
    // constructors document, and the result is what `limits()` reports and
    // what add_flow enforces.
    let narrow = Limits {
        max_weight: 10,
        max_packet_len: 1500,
        max_weight_sum: 100,
    };
    assert_eq!(Qfq::<u32>::with_limits(CAP, narrow).limits(), narrow);
    let size = AggregateSize::DEFAULT;
    assert_eq!(
        QfqPlus::<u32>::with_options(CAP, narrow, size).limits(),
        narrow
    );
    for (wide, _) in one_past() {
        let mut q = Qfq::<u32>::with_limits(CAP, wide);
        assert_eq!(q.limits(), QFQ_LIMITS);
        let too_heavy = FlowConfig::new(QFQ_LIMITS.max_weight + 1, 1500);
        assert!(matches!(
            q.add_flow(FlowId(0), too_heavy),
            Err(ConfigError::InvalidWeight { max, .. }) if max == QFQ_LIMITS.max_weight
        ));
        assert_eq!(
            QfqPlus::<u32>::with_options(CAP, wide, size).limits(),
            QFQ_LIMITS
        );
    }
}
