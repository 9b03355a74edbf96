//! Fill-drain driver for deterministic profiling of the integer priority
//! queues under valgrind (callgrind instruction counts, cachegrind simulated
//! misses), where a wall-clock benchmark on a shared machine is too noisy.
//!
//! Runs the workload of `fairway bench-pq` (`pq_bench::fill_drain_ranks`:
//! a random share of `N` buckets, `per_bucket` elements each, ranks in random
//! order, handles `0..n` in insertion order, cFFS ranks offset to the window
//! the previous drain left) `reps` times on one queue. Fill and drain are
//! separate non-inlined functions, so a profile splits them:
//!
//! ```text
//! cargo build --release -p fairway-eval --example pq_fill_drain
//! valgrind --tool=callgrind target/release/examples/pq_fill_drain cffs 10000 1 100 3
//! callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep -E '::(fill|drain) '
//! ```
//!
//! Arguments: `queue` (cffs, hffs, gradient, approx with α = 16, bucket-heap), `buckets`,
//! `per_bucket`, `occupancy` (percent), `reps` (measured repetitions, after
//! one warm-up whose functions are `warm_up_fill` / `warm_up_drain` in the
//! profile). Prints the element count
//! and a checksum. (The workload's ideal structure, one pre-sized `Vec` per
//! bucket, is timed by `fairway bench-pq --queues ideal`.)

use fairway_core::pq::{
    ApproxGradientQueue, BucketHeap, CircularFfsQueue, GradientQueue, HierarchicalFfsQueue,
    IntegerPriorityQueue,
};
use fairway_eval::pq_bench::fill_drain_ranks;
use std::hint::black_box;

#[inline(always)]
fn fill_body<Q: IntegerPriorityQueue>(q: &mut Q, ranks: &[u64], base: u64) {
    for (h, &rank) in ranks.iter().enumerate() {
        q.insert(h as u32, base + rank).expect("insert");
    }
}

#[inline(always)]
fn drain_body<Q: IntegerPriorityQueue>(q: &mut Q) -> u64 {
    let mut checksum = 0u64;
    while let Some((h, rank)) = q.extract_min() {
        checksum = checksum.wrapping_add(rank ^ u64::from(h));
    }
    checksum
}

#[inline(never)]
fn fill<Q: IntegerPriorityQueue>(q: &mut Q, ranks: &[u64], base: u64) {
    fill_body(q, ranks, base);
}

#[inline(never)]
fn drain<Q: IntegerPriorityQueue>(q: &mut Q) -> u64 {
    drain_body(q)
}

/// The warm-up repetition (page faults, cold caches): the code of [`fill`]
/// and [`drain`] under other names, so a profile can leave it out. (The
/// `black_box` keeps the linker from folding identical functions.)
#[inline(never)]
fn warm_up_fill<Q: IntegerPriorityQueue>(q: &mut Q, ranks: &[u64], base: u64) {
    fill_body(q, ranks, black_box(base));
}

#[inline(never)]
fn warm_up_drain<Q: IntegerPriorityQueue>(q: &mut Q) -> u64 {
    black_box(drain_body(q))
}

fn run<Q: IntegerPriorityQueue>(mut q: Q, ranks: &[u64], reps: u32, origin: fn(&Q) -> u64) -> u64 {
    let base = origin(&q);
    warm_up_fill(&mut q, ranks, base);
    let mut checksum = warm_up_drain(&mut q);
    for _ in 0..reps {
        let base = origin(&q);
        fill(&mut q, ranks, base);
        checksum = checksum.wrapping_add(drain(&mut q));
    }
    black_box(checksum)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: u32| -> u32 {
        args.get(i)
            .map(|s| s.parse().expect("numeric argument"))
            .unwrap_or(default)
    };
    let queue = args.get(1).map_or("cffs", String::as_str);
    let (buckets, per_bucket, occupancy, reps) =
        (arg(2, 10_000), arg(3, 1), arg(4, 100), arg(5, 3));
    let ranks = fill_drain_ranks(buckets, per_bucket, occupancy, 1).expect("memory for the ranks");
    let n = ranks.len() as u32;
    let checksum = match queue {
        "cffs" => {
            let q = CircularFfsQueue::new(buckets.div_ceil(2), n).expect("queue");
            run(q, &ranks, reps, CircularFfsQueue::window_start)
        }
        "hffs" => {
            let q = HierarchicalFfsQueue::new(0, buckets, n).expect("queue");
            run(q, &ranks, reps, |_| 0)
        }
        "gradient" => {
            let q = GradientQueue::new(0, buckets, n).expect("queue");
            run(q, &ranks, reps, |_| 0)
        }
        "approx" => {
            let q = ApproxGradientQueue::new(0, buckets, 16, n).expect("queue");
            run(q, &ranks, reps, |_| 0)
        }
        "bucket-heap" => {
            let q = BucketHeap::new(0, buckets, n).expect("queue");
            run(q, &ranks, reps, |_| 0)
        }
        other => panic!("unknown queue {other}"),
    };
    println!("elements {} reps {reps} checksum {checksum}", n);
}
