//! Cost of S-KPS against QFQ, in the same run (the QFQ paper §7, Table 4: S-KPS
//! 419–603 ns against QFQ's 162–234 ns per enqueue/dequeue pair, a ratio of
//! about 2–3.5, flat in the number of flows).
//!
//! A benchmark, not a test: ignored by default. Run it with
//!
//! ```text
//! cargo test --release -p fairway-eval --test integration s_kps_cost:: -- --ignored --nocapture
//! ```
//!
//! Pattern ("full" of the QFQ paper §7.1): N flows of weight 1 and 1500-byte
//! packets, 4 packets queued per flow; each pair dequeues the next packet
//! and enqueues a new one on the flow just served, so the backlog stays at
//! 4N packets. Both schedulers are statically dispatched with `u32`
//! packets; the loop, packet generation included, is the same for both
//! (the paper's figures include its generator too). A last row mixes
//! weights as Table 4's last block. Runs alternate
//! QFQ / S-KPS five times per N; the median of each is reported.

use fairway_core::s_kps::SKps;
use fairway_core::{Capacity, FlowConfig, FlowId, Qfq, Scheduler};
use std::hint::black_box;
use std::time::Instant;

const PER_FLOW: u32 = 4;
const LEN: u32 = 1500;

fn fill<S: Scheduler<u32>>(s: &mut S, weights: &[u32]) {
    let n = weights.len() as u32;
    for (f, &w) in weights.iter().enumerate() {
        s.add_flow(FlowId(f as u32), FlowConfig::new(w, LEN))
            .unwrap();
    }
    for _ in 0..PER_FLOW {
        for f in 0..n {
            s.enqueue(FlowId(f), LEN).unwrap();
        }
    }
}

/// ns per enqueue/dequeue pair over `pairs` pairs.
fn ns_per_pair<S: Scheduler<u32>>(s: &mut S, pairs: u64) -> f64 {
    let t = Instant::now();
    for _ in 0..pairs {
        let d = s.dequeue().unwrap();
        s.enqueue(d.flow, black_box(d.packet)).unwrap();
    }
    t.elapsed().as_nanos() as f64 / pairs as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
#[ignore = "benchmark; see the file doc for the command"]
fn s_kps_costs_a_few_times_qfq() {
    println!("flows  QFQ ns/pair  S-KPS ns/pair  ratio  (paper: 162-234 vs 419-603, 2-3.5x)");
    let mut rows: Vec<(String, Vec<u32>)> = [1u32, 8, 64, 512, 4096, 32768]
        .iter()
        .map(|&n| (n.to_string(), vec![1; n as usize]))
        .collect();
    // Table 4's last block, scaled by 1/8: exponentially growing weights,
    // exponentially fewer flows (1:4k, 2:512, 4:256, 8:128, 128:2, 1k:1).
    let mix: Vec<u32> = [
        (1u32, 4096usize),
        (2, 512),
        (4, 256),
        (8, 128),
        (128, 2),
        (1024, 1),
    ]
    .iter()
    .flat_map(|&(w, c)| std::iter::repeat_n(w, c))
    .collect();
    rows.push(("mix".into(), mix));
    for (label, weights) in rows {
        let n = weights.len() as u32;
        let cap = Capacity::new(n, PER_FLOW * n + 1);
        let mut qfq: Qfq<u32> = Qfq::new(cap);
        let mut skps: SKps<u32> = SKps::new(cap);
        fill(&mut qfq, &weights);
        fill(&mut skps, &weights);
        let pairs = 2_000_000;
        // Warm-up: caches and the schedulers' steady state.
        ns_per_pair(&mut qfq, pairs / 4);
        ns_per_pair(&mut skps, pairs / 4);
        let (mut q, mut k) = (Vec::new(), Vec::new());
        for _ in 0..5 {
            q.push(ns_per_pair(&mut qfq, pairs));
            k.push(ns_per_pair(&mut skps, pairs));
        }
        let (q, k) = (median(q), median(k));
        println!("{label:>5}  {q:>11.1}  {k:>13.1}  {:>5.2}", k / q);
        assert_eq!(skps.slot_clamps(), 0);
    }
}
