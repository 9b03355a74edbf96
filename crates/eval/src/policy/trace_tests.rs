//! [`super::replay`] against small independent models whose exact
//! departure order is known: FCFS (sort by arrival) and strict priority
//! (at each instant the link is free, the highest-priority head).

use super::{replay, Arrival, Departure, TraceError};
use fairway_core::policy::tx_ns;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

const LINK: u64 = 12_500_000; // 100 Mbit/s

/// A bursty trace over `flows` flows: distinct, non-decreasing times
/// (ties would leave FCFS order to the tree's tie-break).
fn trace(seed: u64, n: usize, flows: u32) -> Vec<Arrival> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            // Mostly back-to-back bursts faster than the link, some idle gaps.
            t += if rng.random_range(0..8) == 0 {
                rng.random_range(50_000..200_000)
            } else {
                rng.random_range(1..20_000)
            };
            Arrival {
                time_ns: t,
                flow: rng.random_range(0..flows),
                len: rng.random_range(64..=1500),
            }
        })
        .collect()
}

/// The model link: whenever free, sends the packet `pick` chooses among
/// the flows' heads (arrival index per queued packet).
fn model(
    arr: &[Arrival],
    flows: usize,
    pick: impl Fn(&[VecDeque<usize>]) -> usize,
) -> Vec<Departure> {
    let mut q = vec![VecDeque::new(); flows];
    let (mut now, mut i, mut out) = (0u64, 0usize, Vec::new());
    loop {
        while i < arr.len() && arr[i].time_ns <= now {
            q[arr[i].flow as usize].push_back(i);
            i += 1;
        }
        if q.iter().any(|f| !f.is_empty()) {
            let f = pick(&q);
            let a = arr[q[f].pop_front().unwrap()];
            out.push(Departure {
                time_ns: now,
                flow: a.flow,
                len: a.len,
                queueing_delay_ns: now - a.time_ns,
            });
            now += tx_ns(a.len, LINK);
        } else if i < arr.len() {
            now = arr[i].time_ns;
        } else {
            return out;
        }
    }
}

fn policy(text: &str) -> fairway_policy_file::PolicyFile {
    fairway_policy_file::parse(text, "t.toml").unwrap()
}

fn replayed(p: &fairway_policy_file::PolicyFile, arr: &[Arrival]) -> Vec<Departure> {
    let mut out = Vec::new();
    let s = replay(p, LINK, arr.iter().copied(), |d| out.push(d)).unwrap();
    assert_eq!(
        (s.offered, s.departed),
        (arr.len() as u64, arr.len() as u64)
    );
    assert_eq!(s.bytes_in, s.bytes_out);
    out
}

/// An EDF root with one deadline for every flow is FCFS.
#[test]
fn fcfs_matches_sort_by_arrival() {
    let p = policy(
        "[[node]]\nname = \"root\"\npolicy = \"edf\"\n[[flow]]\nparent = \"root\"\ncount = 4\ndeadline_us = 100\n",
    );
    for seed in 0..4 {
        let arr = trace(seed, 400, 4);
        let want = model(&arr, 4, |q| {
            (0..q.len())
                .filter(|&f| !q[f].is_empty())
                .min_by_key(|&f| q[f][0])
                .unwrap()
        });
        assert_eq!(replayed(&p, &arr), want, "seed {seed}");
    }
}

#[test]
fn strict_priority_matches_highest_priority_head() {
    let p = policy(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/policies/strict-priority.toml"
        ))
        .unwrap(),
    );
    // Flows in file order have priorities 0, 1, 2, 7: the first non-empty.
    for seed in 0..4 {
        let arr = trace(seed, 400, 4);
        let want = model(&arr, 4, |q| {
            (0..q.len()).find(|&f| !q[f].is_empty()).unwrap()
        });
        let got = replayed(&p, &arr);
        assert_eq!(got, want, "seed {seed}");
        // Not FCFS: the model can tell the two apart on this trace.
        let fcfs = model(&arr, 4, |q| {
            (0..q.len())
                .filter(|&f| !q[f].is_empty())
                .min_by_key(|&f| q[f][0])
                .unwrap()
        });
        assert_ne!(got, fcfs, "seed {seed}");
    }
}

#[test]
fn bad_arrivals_are_refused_with_their_index() {
    let p = policy("[[node]]\nname = \"r\"\npolicy = \"stfq\"\n[[flow]]\nparent = \"r\"\n");
    let a = |time_ns, flow, len| Arrival { time_ns, flow, len };
    let run = |arr: Vec<Arrival>| replay(&p, LINK, arr, |_| {}).unwrap_err();
    assert_eq!(
        run(vec![a(5, 0, 100), a(4, 0, 100)]),
        TraceError::Unordered {
            index: 1,
            time_ns: 4,
            previous_ns: 5
        }
    );
    assert_eq!(
        run(vec![a(0, 1, 100)]),
        TraceError::Flow {
            index: 0,
            flow: 1,
            flows: 1
        }
    );
    let max = p.spec.max_packet_len;
    assert_eq!(
        run(vec![a(0, 0, 100), a(0, 0, max + 1)]),
        TraceError::Len {
            index: 1,
            len: max + 1,
            max
        }
    );
    assert_eq!(
        run(vec![a(0, 0, 0)]),
        TraceError::Len {
            index: 0,
            len: 0,
            max
        }
    );
    assert_eq!(
        replay(&p, 0, vec![], |_| {}).unwrap_err(),
        TraceError::Link(0)
    );
}

/// A tree full of packets refuses the rest, counted with the first index.
#[test]
fn refused_packets_are_counted() {
    let mut p = policy("[[node]]\nname = \"r\"\npolicy = \"stfq\"\n[[flow]]\nparent = \"r\"\n");
    p.spec.max_packets = 4;
    let arr: Vec<Arrival> = (0..10)
        .map(|_| Arrival {
            time_ns: 0,
            flow: 0,
            len: 1000,
        })
        .collect();
    let mut n = 0;
    let s = replay(&p, LINK, arr, |_| n += 1).unwrap();
    // At time 0 the ten arrive before the link sends any: four fit.
    assert_eq!((s.offered, s.departed, s.refused_full, n), (10, 4, 6, 4));
    assert_eq!(s.first_refused, Some(4));
}
