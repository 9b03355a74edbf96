//! FQ-CoDel ([`fairway_core::aqm::FqCodel`]) against the brute-force
//! RFC 8290 model of `aqm_models.rs` (per-bucket `VecDeque`s, DRR over
//! `VecDeque` new/old lists, a scan of every bucket for the fattest) on
//! random traces: few buckets (so flows collide), small limits (so the
//! fattest-flow drop runs) and CoDel parameters of a few nanoseconds (so
//! CoDel drops). Every enqueue must drop the same packet for the limit and
//! every dequeue must send and drop the same packets; a mutation test shows
//! that models without the new-flow list, or without the pass of an emptied
//! new flow through the old list, are caught. With `ways > 1` the model's
//! map from tag to bucket per set must put every packet in the same bucket
//! (compared bucket by bucket after every operation) and count the same
//! collisions; models that ignore `ways`, re-tag on a collision or scan a
//! set from its start are caught. The traces also change the limit of the
//! running queue ([`FqCodel::relimit`]), above and below what it holds:
//! the queue must go on as the model does with its new limit, or, a busy
//! queue whose limit rises past its room, refuse it and keep its own.

use crate::aqm_models::{FqModel, Variant};
use crate::common::Pkt;
use fairway_core::aqm::fq_codel::{MAX_BUCKETS, MAX_LIMIT, MAX_QUANTUM, MAX_WAYS, MIN_QUANTUM};
use fairway_core::aqm::{AqmConfigError, CodelParams, FqCodel, FqCodelConfig};
use fairway_core::EnqueueErrorKind;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

#[derive(Clone, Debug)]
enum Op {
    /// Advance the clock by `gap` ns, enqueue `len` bytes of flow `flow`.
    Enqueue { gap: u64, flow: usize, len: u32 },
    /// Advance the clock by `gap` ns, then dequeue.
    Dequeue { gap: u64 },
    /// Change the packet limit.
    Relimit { limit: u32 },
}

#[derive(Clone, Debug)]
struct Trace {
    cfg: FqCodelConfig,
    /// The flow hashes (the caller's 5-tuple hashes).
    hashes: Vec<u32>,
    ops: Vec<Op>,
}

/// `relimit`: with changes of the limit too (then about one operation
/// in eleven).
fn ops(flows: usize, relimit: bool) -> impl Strategy<Value = Vec<Op>> {
    let phase = (1u32..10, 5usize..60, 0u64..40, 1u32..3000).prop_flat_map(
        move |(enq_weight, n, max_gap, max_len)| {
            let enqueue = (0..=max_gap, 0..flows, 1..=max_len)
                .prop_map(|(gap, flow, len)| Op::Enqueue { gap, flow, len });
            let dequeue = (0..=max_gap).prop_map(|gap| Op::Dequeue { gap });
            if relimit {
                let op = prop_oneof![
                    enq_weight => enqueue,
                    10 - enq_weight => dequeue,
                    1 => (1u32..40).prop_map(|limit| Op::Relimit { limit }),
                ];
                prop::collection::vec(op, n).boxed()
            } else {
                let op = prop_oneof![
                    enq_weight => enqueue,
                    10 - enq_weight => dequeue,
                ];
                prop::collection::vec(op, n).boxed()
            }
        },
    );
    prop::collection::vec(phase, 1..8).prop_map(|phases| phases.concat())
}

/// Random traces over few buckets (so that flows collide): with plain
/// hashing (`ways = 1`), or set-associative with 2, 4 or 8 ways and 1..=8
/// sets.
fn trace(set_associative: bool) -> BoxedStrategy<Trace> {
    trace_with(set_associative, false)
}

/// [`trace`], with changes of the limit if `relimit`.
fn trace_with(set_associative: bool, relimit: bool) -> BoxedStrategy<Trace> {
    let codel = (1u64..200, 1u64..8, 1u32..3000).prop_map(|(t, k, mtu)| CodelParams {
        target_ns: t,
        interval_ns: t * k,
        mtu,
    });
    let cfg = if set_associative {
        (codel, MIN_QUANTUM..3000, 1u32..9, 1u32..4, 1u32..40)
            .prop_map(|(codel, quantum, sets, log_ways, limit)| FqCodelConfig {
                codel,
                quantum,
                buckets: sets << log_ways,
                ways: 1 << log_ways,
                limit,
            })
            .boxed()
    } else {
        (codel, MIN_QUANTUM..3000, 1u32..9, 1u32..40)
            .prop_map(|(codel, quantum, buckets, limit)| FqCodelConfig {
                codel,
                quantum,
                buckets,
                ways: 1,
                limit,
            })
            .boxed()
    };
    (cfg, prop::collection::vec(any::<u32>(), 1..10))
        .prop_flat_map(move |(cfg, hashes)| {
            let n = hashes.len();
            ops(n, relimit).prop_map(move |ops| Trace {
                cfg,
                hashes: hashes.clone(),
                ops,
            })
        })
        .boxed()
}

#[derive(Default)]
struct Run {
    mismatch: Option<String>,
    codel_drops: u64,
    overflow_drops: u64,
    collisions: u64,
    /// Limit changes to below the packets then queued.
    lowered_below_backlog: u64,
    /// Limit changes refused (a busy queue's limit rising past its room).
    refused: u64,
}

fn run(t: &Trace, variant: Variant) -> Run {
    let mut q: FqCodel<Pkt> = FqCodel::new(t.cfg).expect("valid configuration");
    let mut m = FqModel::new(&t.cfg, variant);
    let mut now = 1_000_000;
    let mut out = Run::default();
    for (i, op) in t.ops.iter().enumerate() {
        match *op {
            Op::Enqueue { gap, flow, len } => {
                now += gap;
                let hash = t.hashes[flow];
                let pkt = Pkt { id: i as u32, len };
                let got = q.enqueue(hash, pkt, now).expect("valid packet");
                let want = m.enqueue(hash, pkt, now);
                if got != want {
                    out.mismatch = Some(format!(
                        "op {i}: overflow drop {got:?}, the model drops {want:?}"
                    ));
                    return out;
                }
            }
            Op::Relimit { limit } => {
                let (queued, was) = (q.backlog().packets, q.config().limit);
                let room = FqCodel::room_for(limit).expect("a limit in range");
                let taken = match q.relimit(room) {
                    Ok(_) => {
                        m.set_limit(limit as usize);
                        out.lowered_below_backlog += u64::from(queued > u64::from(limit));
                        limit
                    }
                    // Only a busy queue whose limit rises past its room
                    // refuses (the caller tries again once it is empty).
                    Err(_) if queued > 0 && limit > was => {
                        out.refused += 1;
                        was
                    }
                    Err(_) => {
                        out.mismatch = Some(format!("op {i}: limit {limit} refused"));
                        return out;
                    }
                };
                if q.config().limit != taken {
                    out.mismatch = Some(format!("op {i}: limit {} not {taken}", q.config().limit));
                    return out;
                }
            }
            Op::Dequeue { gap } => {
                now += gap;
                let mut got_drops = Vec::new();
                let got = q.dequeue_with(now, |p| got_drops.push(p));
                let mut want_drops = Vec::new();
                let want = m.dequeue(now, &mut want_drops);
                if (got, &got_drops) != (want, &want_drops) {
                    out.mismatch = Some(format!(
                        "op {i} at {now} ns: sent {got:?} dropped {got_drops:?}, \
                         the model sends {want:?} drops {want_drops:?}"
                    ));
                    return out;
                }
            }
        }
        let queued: usize = m.flows.iter().map(|f| f.queue.len()).sum();
        if q.backlog().packets != queued as u64 {
            out.mismatch = Some(format!(
                "op {i}: {:?} queued, the model {queued}",
                q.backlog()
            ));
            return out;
        }
        for (b, f) in m.flows.iter().enumerate() {
            let got = q.bucket_backlog(b as u32).map(|k| k.packets);
            if got != Some(f.queue.len() as u64) {
                out.mismatch = Some(format!(
                    "op {i}: bucket {b} holds {got:?} packets, the model {}",
                    f.queue.len()
                ));
                return out;
            }
        }
        if q.collisions() != m.collisions {
            out.mismatch = Some(format!(
                "op {i}: {} collisions, the model {}",
                q.collisions(),
                m.collisions
            ));
            return out;
        }
    }
    out.collisions = q.collisions();
    out.codel_drops = q.drops().codel_packets;
    out.overflow_drops = q.drops().overflow_packets;
    out
}

/// Any configuration in range, any times (backwards, near `u64::MAX`), any
/// hashes, lengths in and out of range: never a panic, and every packet
/// accepted is sent, dropped for a counted reason, or still queued.
#[derive(Clone, Debug)]
enum RawOp {
    Enqueue { now: u64, hash: u32, len: u32 },
    Dequeue { now: u64 },
}

fn raw_time() -> impl Strategy<Value = u64> {
    prop_oneof![any::<u64>(), u64::MAX - 1000..=u64::MAX, 0u64..1000]
}

fn raw_trace() -> impl Strategy<Value = (FqCodelConfig, Vec<RawOp>)> {
    let codel = (1u64..=60_000_000_000, 1u32..=65536).prop_flat_map(|(interval_ns, mtu)| {
        (1..=interval_ns).prop_map(move |target_ns| CodelParams {
            target_ns,
            interval_ns,
            mtu,
        })
    });
    let cfg = (
        codel,
        MIN_QUANTUM..=MAX_QUANTUM,
        1u32..64,
        0u32..7,
        1u32..64,
    )
        .prop_map(|(codel, quantum, buckets, log_ways, limit)| FqCodelConfig {
            codel,
            quantum,
            buckets,
            ways: 1 << log_ways.min(buckets.trailing_zeros()),
            limit,
        });
    let op = prop_oneof![
        (raw_time(), any::<u32>(), 0u32..70_000).prop_map(|(now, hash, len)| RawOp::Enqueue {
            now,
            hash,
            len
        }),
        raw_time().prop_map(|now| RawOp::Dequeue { now }),
    ];
    (cfg, prop::collection::vec(op, 0..300))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn no_input_panics_and_every_packet_is_accounted_for((cfg, ops) in raw_trace()) {
        let mut q: FqCodel<Pkt> = FqCodel::new(cfg).expect("in range");
        let (mut accepted, mut sent, mut codel, mut overflow) = (0u64, 0u64, 0u64, 0u64);
        let mut dropped_bytes = 0u64;
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                RawOp::Enqueue { now, hash, len } => {
                    let pkt = Pkt { id: i as u32, len };
                    match q.enqueue(hash, pkt, now) {
                        Ok(victim) => {
                            accepted += 1;
                            if let Some(v) = victim {
                                overflow += 1;
                                dropped_bytes += u64::from(v.len);
                            }
                        }
                        Err(e) => {
                            prop_assert_eq!(e.packet, pkt);
                            prop_assert!(len == 0 || len > 65536);
                        }
                    }
                }
                RawOp::Dequeue { now } => {
                    sent += u64::from(q.dequeue_with(now, |p| {
                        codel += 1;
                        dropped_bytes += u64::from(p.len);
                    }).is_some());
                }
            }
            prop_assert!(q.backlog().packets <= u64::from(cfg.limit));
        }
        let d = q.drops();
        prop_assert_eq!((d.codel_packets, d.overflow_packets), (codel, overflow));
        prop_assert_eq!(d.codel_bytes + d.overflow_bytes, dropped_bytes);
        prop_assert_eq!(accepted, sent + codel + overflow + q.backlog().packets);
        // Draining far in the future sends or drops everything left.
        while q.dequeue_with(u64::MAX, |_| codel += 1).is_some() {
            sent += 1;
        }
        prop_assert!(q.is_empty());
        prop_assert_eq!(accepted, sent + codel + overflow);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn fq_codel_sends_and_drops_exactly_as_the_rfc_model(t in trace(false)) {
        let r = run(&t, Variant::Rfc);
        prop_assert!(r.mismatch.is_none(), "{}", r.mismatch.unwrap_or_default());
    }

    #[test]
    fn fq_codel_whose_limit_changes_follows_the_model(t in trace_with(true, true)) {
        let r = run(&t, Variant::Rfc);
        prop_assert!(r.mismatch.is_none(), "{}", r.mismatch.unwrap_or_default());
    }

    #[test]
    fn set_associative_fq_codel_picks_the_buckets_of_the_tag_map_model(t in trace(true)) {
        let r = run(&t, Variant::Rfc);
        prop_assert!(r.mismatch.is_none(), "{}", r.mismatch.unwrap_or_default());
    }
}

fn fixed_traces(n: usize, set_associative: bool) -> Vec<Trace> {
    fixed_traces_with(n, set_associative, false)
}

fn fixed_traces_with(n: usize, set_associative: bool, relimit: bool) -> Vec<Trace> {
    let mut runner = TestRunner::deterministic();
    let strategy = trace_with(set_associative, relimit);
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).expect("a trace").current())
        .collect()
}

#[test]
fn the_traces_drop_for_both_reasons_and_each_wrong_model_is_caught() {
    let traces = fixed_traces(200, false);
    let runs: Vec<Run> = traces.iter().map(|t| run(t, Variant::Rfc)).collect();
    assert!(runs.iter().all(|r| r.mismatch.is_none()));
    let codel = runs.iter().filter(|r| r.codel_drops > 0).count();
    let overflow = runs.iter().filter(|r| r.overflow_drops > 0).count();
    assert!(codel >= 40, "only {codel} of 200 traces have CoDel drops");
    assert!(
        overflow >= 40,
        "only {overflow} of 200 traces have overflow drops"
    );
    for variant in [
        Variant::NoNewList,
        Variant::NoOldPass,
        Variant::StrictAboveTime,
    ] {
        let caught = traces
            .iter()
            .filter(|t| run(t, variant).mismatch.is_some())
            .count();
        assert!(caught > 0, "{variant:?} passes all 200 traces");
    }
}

/// Traces that change the limit of the running queue follow the model,
/// and among them some lower it below what the queue holds and some
/// raise it past the room of a queue holding packets (refused).
#[test]
fn traces_that_change_the_limit_lower_it_below_the_backlog_and_have_raises_refused() {
    let traces = fixed_traces_with(200, true, true);
    let runs: Vec<Run> = traces.iter().map(|t| run(t, Variant::Rfc)).collect();
    let wrong: Vec<&String> = runs.iter().filter_map(|r| r.mismatch.as_ref()).collect();
    assert!(wrong.is_empty(), "{wrong:?}");
    let lowered = runs.iter().filter(|r| r.lowered_below_backlog > 0).count();
    assert!(
        lowered >= 20,
        "only {lowered} of 200 traces lower the limit below the backlog"
    );
    let refused = runs.iter().filter(|r| r.refused > 0).count();
    assert!(refused >= 20, "only {refused} of 200 traces refuse a limit");
}

#[test]
fn set_associative_traces_collide_and_each_wrong_bucket_choice_is_caught() {
    let traces = fixed_traces(200, true);
    let runs: Vec<Run> = traces.iter().map(|t| run(t, Variant::Rfc)).collect();
    assert!(runs.iter().all(|r| r.mismatch.is_none()));
    let collided = runs.iter().filter(|r| r.collisions > 0).count();
    assert!(collided >= 20, "only {collided} of 200 traces collide");
    for variant in [
        Variant::WaysIgnored,
        Variant::RetagOnCollision,
        Variant::ScanFromSetStart,
    ] {
        let caught = traces
            .iter()
            .filter(|t| run(t, variant).mismatch.is_some())
            .count();
        assert!(caught > 0, "{variant:?} passes all 200 traces");
    }
}

#[test]
fn an_overflow_drops_the_head_of_the_fattest_bucket() {
    let cfg = FqCodelConfig {
        limit: 3,
        ..FqCodelConfig::RFC8290
    };
    let mut q: FqCodel<Pkt> = FqCodel::new(cfg).unwrap();
    let (a, b) = (0x1000_0000, 0xF000_0000);
    assert_eq!(q.enqueue(a, Pkt { id: 0, len: 100 }, 0), Ok(None));
    assert_eq!(q.enqueue(b, Pkt { id: 1, len: 1000 }, 0), Ok(None));
    assert_eq!(q.enqueue(a, Pkt { id: 2, len: 100 }, 0), Ok(None));
    // Over the limit: bucket b holds 1000 bytes, a 300 after this packet.
    assert_eq!(
        q.enqueue(a, Pkt { id: 3, len: 100 }, 0),
        Ok(Some(Pkt { id: 1, len: 1000 }))
    );
    assert_eq!(q.drops().overflow_packets, 1);
    assert_eq!(q.drops().overflow_bytes, 1000);
    assert_eq!(q.backlog().packets, 3);
    // Now a is the fattest: its head goes, even for a packet of b.
    assert_eq!(
        q.enqueue(b, Pkt { id: 4, len: 50 }, 0),
        Ok(Some(Pkt { id: 0, len: 100 }))
    );
}

#[test]
fn bad_packets_come_back_and_change_nothing() {
    let mut q: FqCodel<Pkt> = FqCodel::new(FqCodelConfig::RFC8290).unwrap();
    let e = q.enqueue(7, Pkt { id: 1, len: 0 }, 0).unwrap_err();
    assert_eq!(
        (e.kind, e.packet),
        (EnqueueErrorKind::EmptyPacket, Pkt { id: 1, len: 0 })
    );
    let e = q.enqueue(7, Pkt { id: 2, len: 65537 }, 0).unwrap_err();
    assert_eq!(
        e.kind,
        EnqueueErrorKind::PacketTooLong {
            len: 65537,
            max_len: 65536
        }
    );
    assert_eq!(q.enqueue(7, Pkt { id: 3, len: 65536 }, 0), Ok(None));
    assert_eq!(q.backlog().packets, 1);
    assert_eq!(q.new_flow_count(), 1);
}

#[test]
fn every_parameter_is_refused_outside_its_range_and_accepted_at_its_ends() {
    let base = FqCodelConfig {
        limit: 16,
        ..FqCodelConfig::RFC8290
    };
    let check = |cfg: FqCodelConfig| FqCodel::<Pkt>::new(cfg).err();
    for quantum in [MIN_QUANTUM, MAX_QUANTUM] {
        assert_eq!(check(FqCodelConfig { quantum, ..base }), None);
    }
    for quantum in [0, MIN_QUANTUM - 1, MAX_QUANTUM + 1] {
        assert_eq!(
            check(FqCodelConfig { quantum, ..base }),
            Some(AqmConfigError::Quantum { quantum })
        );
    }
    for buckets in [1, MAX_BUCKETS] {
        assert_eq!(check(FqCodelConfig { buckets, ..base }), None);
    }
    for buckets in [0, MAX_BUCKETS + 1] {
        assert_eq!(
            check(FqCodelConfig { buckets, ..base }),
            Some(AqmConfigError::Buckets { buckets })
        );
    }
    for ways in [1, 2, 8, MAX_WAYS] {
        assert_eq!(check(FqCodelConfig { ways, ..base }), None);
    }
    let one = FqCodelConfig { buckets: 1, ..base };
    assert_eq!(check(FqCodelConfig { ways: 1, ..one }), None);
    for (ways, buckets) in [
        (0, 1024),
        (3, 1024),
        (2 * MAX_WAYS, 1024),
        (2, 1),
        (8, 12),
        (u32::MAX, 1024),
    ] {
        assert_eq!(
            check(FqCodelConfig {
                ways,
                buckets,
                ..base
            }),
            Some(AqmConfigError::Ways { ways, buckets })
        );
    }
    assert_eq!(
        check(FqCodelConfig {
            ways: 8,
            buckets: 12,
            ..base
        })
        .unwrap()
        .to_string(),
        "fq_codel ways 8 out of range: a power of two in 1..=64 that divides buckets (12) \
         (the scan of a set is per packet)"
    );
    assert_eq!(check(FqCodelConfig { limit: 1, ..base }), None);
    for limit in [0, MAX_LIMIT + 1, u32::MAX] {
        assert_eq!(
            check(FqCodelConfig { limit, ..base }),
            Some(AqmConfigError::Limit { limit })
        );
    }
    let codel = CodelParams {
        interval_ns: 0,
        ..CodelParams::RFC8289
    };
    assert_eq!(
        check(FqCodelConfig { codel, ..base }),
        Some(AqmConfigError::Interval { interval_ns: 0 })
    );
    let e = check(FqCodelConfig {
        quantum: 255,
        ..base
    })
    .unwrap();
    assert_eq!(
        e.to_string(),
        "fq_codel quantum 255 bytes out of range 256..=1048576 \
         (a smaller quantum costs one list rotation per quantum of a packet)"
    );
}
