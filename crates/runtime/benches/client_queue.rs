//! The client queue (the PSPAT paper §3.2.2 mailbox) against `rtrb`, in one run.
//!
//! Workload: the PSPAT round trip for one client. The client submits a
//! packet length, the consumer ("arbiter", on the other core) detects it,
//! grants it, and the client drains the grant. Three designs:
//! * `mailbox`: this crate's `ClientQueue`/`QueueReader`;
//! * `rtrb+counter`: rtrb carries submits, grants come back through a
//!   padded counter (the mailbox's `head`): only the submit ring differs;
//! * `rtrb+rtrb`: a second rtrb ring carries the grants back.
//!
//! Run: `cargo bench -p fairway-runtime --bench client_queue`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use crossbeam_utils::CachePadded;
use fairway_runtime::affinity::pin_current_thread;
use fairway_runtime::client_queue;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const QUEUE: usize = 1023;
const BURST: usize = 64;

fn pin(cpu: usize) {
    let _ = pin_current_thread(cpu);
}

fn mailbox(iters: u64) -> Duration {
    let (mut client, mut arbiter) = client_queue::<u32>(QUEUE);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            pin(0);
            while !stop.load(Ordering::Relaxed) {
                let n = arbiter.poll(|_len| {});
                for _ in 0..n {
                    arbiter.grant_one();
                }
                if n > 0 {
                    arbiter.publish();
                }
            }
        });
        pin(1);
        let start = Instant::now();
        let (mut sent, mut done) = (0u64, 0u64);
        while done < iters {
            let room = (QUEUE - client.len()).min(BURST) as u64;
            for _ in 0..room.min(iters - sent) {
                let _ = client.try_push(60, 0u32);
                sent += 1;
            }
            done += client.drain_to(client.grant_index(), |p| {
                std::hint::black_box(p);
            }) as u64;
        }
        let t = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        t
    })
}

fn rtrb_counter(iters: u64) -> Duration {
    let (mut tx, mut rx) = rtrb::RingBuffer::<u32>::new(QUEUE);
    let head = CachePadded::new(AtomicUsize::new(0));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            pin(0);
            let mut granted = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let mut n = 0;
                while let Ok(len) = rx.pop() {
                    std::hint::black_box(len);
                    n += 1;
                }
                if n > 0 {
                    granted += n;
                    head.store(granted, Ordering::Release);
                }
            }
        });
        pin(1);
        let start = Instant::now();
        let (mut sent, mut done) = (0u64, 0u64);
        let mut payloads = std::collections::VecDeque::with_capacity(QUEUE);
        while done < iters {
            let room = (QUEUE - payloads.len()).min(BURST) as u64;
            for _ in 0..room.min(iters - sent) {
                payloads.push_back(0u32);
                let _ = tx.push(60);
                sent += 1;
            }
            let h = head.load(Ordering::Acquire) as u64;
            while done < h {
                std::hint::black_box(payloads.pop_front());
                done += 1;
            }
        }
        let t = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        t
    })
}

fn rtrb_rtrb(iters: u64) -> Duration {
    let (mut tx, mut rx) = rtrb::RingBuffer::<u32>::new(QUEUE);
    let (mut gtx, mut grx) = rtrb::RingBuffer::<()>::new(QUEUE);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            pin(0);
            while !stop.load(Ordering::Relaxed) {
                while let Ok(len) = rx.pop() {
                    std::hint::black_box(len);
                    // Capacity equals the submit ring's: never full.
                    let _ = gtx.push(());
                }
            }
        });
        pin(1);
        let start = Instant::now();
        let (mut sent, mut done) = (0u64, 0u64);
        let mut payloads = std::collections::VecDeque::with_capacity(QUEUE);
        while done < iters {
            let room = (QUEUE - payloads.len()).min(BURST) as u64;
            for _ in 0..room.min(iters - sent) {
                payloads.push_back(0u32);
                let _ = tx.push(60);
                sent += 1;
            }
            while grx.pop().is_ok() {
                std::hint::black_box(payloads.pop_front());
                done += 1;
            }
        }
        let t = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        t
    })
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("client_queue_round_trip");
    g.throughput(Throughput::Elements(1));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("mailbox", |b| b.iter_custom(mailbox));
    g.bench_function("rtrb+counter", |b| b.iter_custom(rtrb_counter));
    g.bench_function("rtrb+rtrb", |b| b.iter_custom(rtrb_rtrb));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
