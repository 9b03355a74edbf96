//! Single-thread cost of the arbiter's do_scan and of the clock (no
//! cross-core traffic): a lower bound for `arbiter-bench`.
//! Run: `cargo run --release -p fairway-runtime --example arbiter_micro`.
//!
//! `arbiter_micro scan drr|qfq [MAX_LEN [CLIENTS]]` runs only the
//! one-thread client + `do_scan` loop (concrete scheduler, 10^6 packets of
//! 60 B, the flows' max_len 60 B as in `arbiter-bench`, or MAX_LEN; one
//! client, or CLIENTS), for instruction counts:
//! `valgrind --tool=callgrind target/release/examples/arbiter_micro scan drr`
//! (instructions per packet = total / 10^6, setup included, < 1 %).
//! With `IRREGULAR=1` each client pushes a pseudo-random 1..=2·(64/CLIENTS)
//! packets per round instead of exactly 64/CLIENTS: the flow mix the
//! scheduler sees then changes from round to round, as with real client
//! threads, which the data-dependent branches of QFQ's dequeue pay for.

use fairway_core::{Capacity, Drr, FlowConfig, FlowId, Limits, Qfq, SchedSpec, Scheduler};
use fairway_runtime::{client_queue, Arbiter, EmulatedLink, MonotonicClock};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("scan") {
        let n = 1_000_000;
        let max_len = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(60);
        let clients = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(1u32);
        let cap = Capacity::new(clients, 1023 * clients);
        match args.get(2).map(String::as_str) {
            Some("qfq") => concrete(
                "qfq",
                Qfq::<u32>::with_limits(cap, Limits::default()),
                n,
                max_len,
                clients,
            ),
            _ => concrete(
                "drr",
                Drr::<u32>::with_options(cap, Limits::default(), None),
                n,
                max_len,
                clients,
            ),
        }
        return;
    }
    let clock = MonotonicClock::new();
    let n = 10_000_000u64;
    let t = Instant::now();
    let mut x = 0;
    for _ in 0..n {
        x ^= clock.now_ns();
    }
    println!(
        "clock read: {:.1} ns ({x})",
        t.elapsed().as_nanos() as f64 / n as f64
    );

    let (mut client, mut reader) = client_queue::<u32>(1023);
    let t = Instant::now();
    let mut moved = 0u64;
    while moved < n {
        for _ in 0..64 {
            let _ = client.try_push(60, 0);
        }
        let k = reader.poll(|_| {});
        for _ in 0..k {
            reader.grant_one();
        }
        reader.publish();
        moved += client.drain_to(client.grant_index(), |_| {}) as u64;
    }
    println!(
        "queue push+poll+grant+drain, one thread: {:.1} ns/packet",
        t.elapsed().as_nanos() as f64 / moved as f64
    );

    for name in ["fifo", "drr", "wf2q+", "qfq"] {
        let Ok(spec) = SchedSpec::parse(name) else {
            continue;
        };
        let mut sched = spec.build::<u32>(Capacity::new(1, 1023), Limits::default());
        sched.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
        let (mut client, reader) = client_queue::<u32>(1023);
        let link = EmulatedLink::new(u64::MAX / 2).unwrap();
        let mut arb = Arbiter::new(sched, vec![reader], link, 0);
        let t = Instant::now();
        let mut moved = 0u64;
        let mut now = 1;
        while moved < n {
            for _ in 0..64 {
                let _ = client.try_push(60, 0);
            }
            now += 1000;
            arb.do_scan(now);
            moved += client.drain_to(client.grant_index(), |_| {}) as u64;
        }
        println!(
            "{name}: client push+drain and do_scan, one thread: {:.1} ns/packet",
            t.elapsed().as_nanos() as f64 / moved as f64
        );
    }

    // The scheduler alone (concrete type, no runtime): enqueue a batch of 64
    // then dequeue it, as do_scan does. The floor for a decision.
    fn sched_only<S: Scheduler<u32>>(name: &str, mut sched: S, n: u64) {
        sched.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
        let t = Instant::now();
        let mut moved = 0u64;
        while moved < n {
            for _ in 0..64 {
                let _ = sched.enqueue(FlowId(0), 60);
            }
            while let Some(d) = sched.dequeue() {
                std::hint::black_box(d.packet);
                moved += 1;
            }
        }
        println!(
            "{name} (concrete), enqueue+dequeue only: {:.1} ns/packet",
            t.elapsed().as_nanos() as f64 / moved as f64
        );
    }
    let cap = Capacity::new(1, 1023);
    sched_only(
        "drr",
        Drr::<u32>::with_options(cap, Limits::default(), None),
        n,
    );
    sched_only("qfq", Qfq::<u32>::with_limits(cap, Limits::default()), n);

    concrete(
        "drr",
        Drr::<u32>::with_options(cap, Limits::default(), None),
        n,
        60,
        1,
    );
    concrete(
        "qfq",
        Qfq::<u32>::with_limits(cap, Limits::default()),
        n,
        60,
        1,
    );
}

// The full do_scan path with the concrete scheduler (as arbiter-bench
// runs it for drr/qfq/fifo), `clients` equal flows sharing 64-packet rounds.
fn concrete<S: Scheduler<u32>>(name: &str, mut sched: S, n: u64, max_len: u32, clients: u32) {
    let mut queues = Vec::new();
    let mut readers = Vec::new();
    for i in 0..clients {
        sched
            .add_flow(FlowId(i), FlowConfig::new(1, max_len))
            .unwrap();
        let (c, r) = client_queue::<u32>(1023);
        queues.push(c);
        readers.push(r);
    }
    let link = EmulatedLink::new(u64::MAX / 2).unwrap();
    let mut arb = Arbiter::new(Box::new(sched), readers, link, 0);
    let t = Instant::now();
    let mut moved = 0u64;
    let mut now = 1;
    let per_client = (64 / clients).max(1);
    let irregular = std::env::var("IRREGULAR").as_deref() == Ok("1");
    let mut x: u64 = 0x9E3779B97F4A7C15;
    while moved < n {
        for client in queues.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = if irregular {
                1 + (x % (2 * per_client as u64)) as u32
            } else {
                per_client
            };
            for _ in 0..k {
                let _ = client.try_push(60, 0);
            }
        }
        now += 1000;
        arb.do_scan(now);
        for client in queues.iter_mut() {
            moved += client.drain_to(client.grant_index(), |_| {}) as u64;
        }
    }
    println!(
        "{name} (concrete, max_len {max_len}, {clients} client(s)): client push+drain and do_scan, one thread: {:.1} ns/packet",
        t.elapsed().as_nanos() as f64 / moved as f64
    );
}
