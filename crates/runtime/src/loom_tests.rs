//! loom models of the client-queue protocol (the PSPAT paper §3.2.2) and of
//! the sleep/kick protocol (§3.1, Fig. 4), run on the shipped code. Kept
//! small (one client, ≤ 3 packets, ≤ 3 threads, bounded preemptions) so
//! that CI (`.ci/run`) can run them on every change:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p fairway-runtime --lib loom
//! ```
//!
//! A lost wake-up shows as a client spinning forever on a grant that never
//! comes, which loom reports as exceeding its branch limit; a lost,
//! duplicated or reordered packet fails an assertion.

use crate::arbiter::ScanResult;
use crate::mailbox::{client_queue, QueueReader};
use crate::sync::Arc;
use crate::wakeup::{LockedCore, ScanCore, Wakeup};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

#[test]
fn loom_queue_delivers_every_packet_once_in_order() {
    model(|| {
        // One usable slot: every push after the first needs a drain, so the
        // ring wraps and slots are reused (the separator argument).
        let (mut client, mut arbiter) = client_queue::<u32>(1);
        let consumer = loom::thread::spawn(move || {
            let mut seen = Vec::new();
            while seen.len() < 3 {
                let n = arbiter.poll(|len| seen.push(len));
                for _ in 0..n {
                    arbiter.grant_one();
                }
                if n > 0 {
                    arbiter.publish();
                } else {
                    loom::thread::yield_now();
                }
            }
            seen
        });
        let mut sent = 0u32;
        let mut out = Vec::new();
        while out.len() < 3 {
            if sent < 3 && client.try_push(sent + 1, sent + 100).is_ok() {
                sent += 1;
                continue;
            }
            let n = client.drain_to(client.grant_index(), |p| out.push(p));
            if n == 0 {
                loom::thread::yield_now();
            }
        }
        assert_eq!(out, [100, 101, 102]);
        assert_eq!(consumer.join().unwrap(), [1, 2, 3]);
    });
}

/// A split client queue: the client pushes (and, standing in for the
/// arbiter, grants what it pushed) on one thread while a dispatcher drains
/// on another. One usable slot, so every push after the first needs the
/// dispatcher's progress (`drained`, published across threads) and the
/// ring wraps. (The client/arbiter side of the protocol is the model
/// above; this one checks the push/drain split.)
#[test]
fn loom_split_queue_dispatcher_drains_every_packet_once_in_order() {
    model(|| {
        let (queue, mut arbiter) = client_queue::<u32>(1);
        let (mut push, mut drain) = queue.split();
        let dispatcher = loom::thread::spawn(move || {
            let mut out = Vec::new();
            while out.len() < 3 {
                if drain.drain_to(drain.grant_index(), |p| out.push(p)) == 0 {
                    loom::thread::yield_now();
                }
            }
            out
        });
        let mut sent = 0u32;
        while sent < 3 {
            if push.try_push(sent + 1, sent + 100).is_ok() {
                sent += 1;
                let n = arbiter.poll(|_| {});
                for _ in 0..n {
                    arbiter.grant_one();
                }
                arbiter.publish();
            } else {
                loom::thread::yield_now();
            }
        }
        assert_eq!(dispatcher.join().unwrap(), [100, 101, 102]);
    });
}

/// An arbiter core that grants whatever it finds (an infinitely fast link).
struct GrantAll {
    reader: QueueReader,
}

impl ScanCore for GrantAll {
    fn scan(&mut self, _forced: bool) -> ScanResult {
        let n = self.reader.poll(|_| {});
        for _ in 0..n {
            self.reader.grant_one();
        }
        if n > 0 {
            self.reader.publish();
        }
        ScanResult::NoTraffic
    }
    fn now_ns(&self) -> u64 {
        0
    }
    fn link_idle_ns(&self) -> u64 {
        0
    }
    fn count_sleep(&mut self, _blocked: bool) {}
    fn count_client_scan(&mut self) {}
}

fn sleeping_arbiter_serves_a_kicked_packet(client_scan: bool) {
    model(move || {
        let (mut client, reader) = client_queue::<u32>(1);
        let wake = Arc::new(Wakeup::new());
        let core = Arc::new(LockedCore::new(GrantAll { reader }));
        let (w, c) = (wake.clone(), core.clone());
        let arbiter = loom::thread::spawn(move || w.run_sleeping(&c, 0));
        client.try_push(60, 7).unwrap();
        if client_scan {
            wake.kick_client_scan(&core, 0);
        } else {
            wake.kick_notify();
        }
        let mut out = Vec::new();
        while out.is_empty() {
            if client.drain_to(client.grant_index(), |p| out.push(p)) == 0 {
                loom::thread::yield_now();
            }
        }
        assert_eq!(out, [7]);
        wake.request_stop();
        arbiter.join().unwrap();
    });
}

#[test]
fn loom_notify_kick_never_loses_a_wakeup() {
    sleeping_arbiter_serves_a_kicked_packet(false);
}

#[test]
fn loom_client_scan_kick_never_loses_a_wakeup() {
    sleeping_arbiter_serves_a_kicked_packet(true);
}
