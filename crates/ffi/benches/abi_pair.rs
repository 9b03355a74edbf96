//! Cost of a dequeue + enqueue pair through the C ABI, against the same
//! workload in Rust, in one run (the machine is noisy: only ratios measured
//! side by side mean anything).
//!
//! Workload (identical in all three columns): `FLOWS` flows of weights
//! 1..4, each holding 4 packets of 64..1500 bytes; each step dequeues the
//! next packet and enqueues it again on its flow. Columns:
//! * **C → ABI**: `examples/c/bench_pairs.c`, compiled with the C compiler
//!   the `cc` crate finds at `-O2` and linked with this profile's static
//!   library, timed inside the C program; its single enqueue and dequeue
//!   are the header's inline calls;
//! * **Rust → ABI**: the exported `extern "C"` functions called from Rust,
//!   through function pointers the optimiser cannot see through, so that
//!   they are called and not inlined into the loop (the bench links the
//!   crate as an rlib): what a language that cannot use the header's
//!   inline C functions gets;
//! * **Rust**: the scheduler built from the same spec by the registry
//!   (`SchedSpec::build` → `Box<dyn Scheduler>`), called directly: what a
//!   Rust program that picks the scheduler from a spec string writes, and
//!   the baseline of the target;
//! * **Rust concrete**: the scheduler's concrete type, from the registry's
//!   `SchedVisitor`, with the loop compiled for it (no indirect call): what
//!   a Rust program that fixes the scheduler at compile time gets.
//!
//! The target is C → ABI ≤ 1.1 × Rust. Each column is timed in CPU time
//! of its thread (on Linux; wall-clock time elsewhere), so that the time
//! it spends descheduled on a shared machine is not counted. Rounds
//! alternate between the columns so that drifts of the machine hit them
//! alike; the medians are printed, and the median and range of the
//! per-round ratio C → ABI / Rust (each round's two columns run
//! back to back).
//!
//! Reported separately, the batch calls: `BATCH` packets dequeued with one
//! `fairway_sched_dequeue_batch` and put back with one
//! `fairway_sched_enqueue_batch` (**Rust → ABI batch**), against the same
//! batches in Rust (**Rust batch**: `BATCH` dequeues into an array, then
//! `BATCH` enqueues, on the same `Box<dyn Scheduler>`).
//!
//! ```text
//! cargo bench -p fairway-ffi --bench abi_pair              # 15 rounds
//! cargo bench -p fairway-ffi --bench abi_pair -- --quick   # 3 rounds
//! cargo bench -p fairway-ffi --bench abi_pair -- --flows 64 --specs drr,qfq
//! ```
//!
//! Instructions instead of time (exact on a noisy machine): `--column
//! rust|rust-concrete|abi|rust-batch|abi-batch` runs one column once (no
//! warm-up), for one spec, and callgrind counts it; the difference between
//! two pair counts is the cost of the extra pairs, setup excluded.
//! `--c-exe` builds the C program and prints its path, to count it the
//! same way (`bench_pairs SPEC 1000 PAIRS 1` runs one round, no warm-up).
//! `crates/ffi/scripts/abi-instructions.sh` does all of it and prints the
//! table.

#[path = "../tests/integration/c_build.rs"]
mod c_build;

use fairway_core::registry::SchedVisitor;
use fairway_core::{Capacity, FlowConfig, FlowId, Limits, Packet, SchedSpec, Scheduler};
use fairway_ffi::*;
use std::ffi::{c_void, CString};
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::process::Command;
use std::ptr::null_mut;

const BACKLOG: u32 = 4;

fn packet_len(i: u64) -> u32 {
    64 + ((i.wrapping_mul(2654435761) & 0xffff_ffff) % 1437) as u32
}

/// The packet the ABI queues: a pointer kept as an integer plus a length.
#[derive(Clone, Copy)]
struct Pkt {
    data: usize,
    len: u32,
}

impl Packet for Pkt {
    #[inline]
    fn len(&self) -> u32 {
        self.len
    }
}

/// Calls `run` with `pairs / 4` pairs to warm up (unless `warm` is false,
/// as under callgrind), then times it with `pairs`: ns per pair.
fn timed(warm: bool, pairs: u64, mut run: impl FnMut(u64)) -> f64 {
    if warm {
        run(pairs / 4);
    }
    let t0 = thread_time_ns();
    run(pairs);
    (thread_time_ns() - t0) as f64 / pairs as f64
}

/// CPU time of the calling thread in ns (`CLOCK_THREAD_CPUTIME_ID`, as the
/// C program measures): on a shared machine, the time the thread spends
/// descheduled while others run is not counted.
#[cfg(target_os = "linux")]
fn thread_time_ns() -> u128 {
    use std::os::raw::{c_int, c_long};
    #[repr(C)]
    struct Timespec {
        tv_sec: c_long,
        tv_nsec: c_long,
    }
    extern "C" {
        fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    }
    const CLOCK_THREAD_CPUTIME_ID: c_int = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a writable timespec.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

/// Elsewhere, wall-clock time.
#[cfg(not(target_os = "linux"))]
fn thread_time_ns() -> u128 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos()
}

fn rust_direct(spec: &str, flows: u32, pairs: u64, warm: bool) -> f64 {
    let spec = SchedSpec::parse(spec).expect("spec");
    let mut s: Box<dyn Scheduler<Pkt> + Send> =
        spec.build(Capacity::new(flows, flows * BACKLOG), Limits::DEFAULT);
    let mut id = 0u64;
    for f in 0..flows {
        s.add_flow(FlowId(f), FlowConfig::new(1 + f % 4, 1500))
            .expect("flow");
        for _ in 0..BACKLOG {
            let p = Pkt {
                data: id as usize + 1,
                len: packet_len(id),
            };
            s.enqueue(FlowId(f), p).map_err(|_| "enqueue").unwrap();
            id += 1;
        }
    }
    let mut checksum = 0u64;
    let mut run = |n: u64| {
        for _ in 0..n {
            let d = s.dequeue().expect("backlogged");
            checksum += u64::from(d.flow.0) + d.packet.data as u64;
            if s.enqueue(d.flow, d.packet).is_err() {
                panic!("re-enqueue failed");
            }
        }
    };
    let ns = timed(warm, pairs, &mut run);
    black_box(checksum);
    ns
}

/// The scheduler's concrete type from the registry's visitor, and the
/// whole column compiled for it.
struct Concrete {
    flows: u32,
    pairs: u64,
    warm: bool,
}

impl SchedVisitor<Pkt> for Concrete {
    type Output = f64;

    fn visit<S, F>(self, make: F) -> f64
    where
        S: Scheduler<Pkt> + Send + 'static,
        F: FnOnce(Capacity, Limits) -> S + Send + 'static,
    {
        let Concrete { flows, pairs, warm } = self;
        let mut s = make(Capacity::new(flows, flows * BACKLOG), Limits::DEFAULT);
        let mut id = 0u64;
        for f in 0..flows {
            s.add_flow(FlowId(f), FlowConfig::new(1 + f % 4, 1500))
                .expect("flow");
            for _ in 0..BACKLOG {
                let p = Pkt {
                    data: id as usize + 1,
                    len: packet_len(id),
                };
                s.enqueue(FlowId(f), p).map_err(|_| "enqueue").unwrap();
                id += 1;
            }
        }
        let mut checksum = 0u64;
        let mut run = |n: u64| {
            for _ in 0..n {
                let d = s.dequeue().expect("backlogged");
                checksum += u64::from(d.flow.0) + d.packet.data as u64;
                if s.enqueue(d.flow, d.packet).is_err() {
                    panic!("re-enqueue failed");
                }
            }
        };
        let ns = timed(warm, pairs, &mut run);
        black_box(checksum);
        ns
    }
}

fn rust_concrete(spec: &str, flows: u32, pairs: u64, warm: bool) -> f64 {
    let spec = SchedSpec::parse(spec).expect("spec");
    spec.visit(Concrete { flows, pairs, warm })
}

type EnqueueFn =
    unsafe extern "C" fn(*mut FairwayScheduler, u32, *mut c_void, usize) -> FairwayStatus;
type DequeueFn = unsafe extern "C" fn(*mut FairwayScheduler, *mut FairwayPacket) -> FairwayStatus;

fn rust_abi(spec: &str, flows: u32, pairs: u64, warm: bool) -> f64 {
    // Called through pointers the optimiser cannot follow, so that the
    // exported functions are called as another language calls them, not
    // inlined into this loop (the bench links the crate as an rlib).
    let enqueue: EnqueueFn = black_box(fairway_sched_enqueue);
    let dequeue: DequeueFn = black_box(fairway_sched_dequeue);
    let cspec = CString::new(spec).unwrap();
    let mut s = null_mut();
    unsafe {
        let st = fairway_sched_create(
            cspec.as_ptr(),
            flows,
            flows * BACKLOG,
            &mut s,
            null_mut(),
            0,
        );
        assert_eq!(st, FairwayStatus::FairwayOk);
        let mut id = 0u64;
        for f in 0..flows {
            assert_eq!(
                fairway_sched_add_flow(s, f, 1 + f % 4, 1500),
                FairwayStatus::FairwayOk
            );
            for _ in 0..BACKLOG {
                let st =
                    fairway_sched_enqueue(s, f, (id + 1) as *mut c_void, packet_len(id) as usize);
                assert_eq!(st, FairwayStatus::FairwayOk);
                id += 1;
            }
        }
    }
    let mut checksum = 0u64;
    let mut run = |n: u64| {
        for _ in 0..n {
            // Left uninitialised, as the C program leaves it: dequeue
            // writes it when it returns FAIRWAY_OK.
            let mut p = MaybeUninit::<FairwayPacket>::uninit();
            let p = unsafe {
                if dequeue(s, p.as_mut_ptr()) != FairwayStatus::FairwayOk {
                    panic!("dequeue failed");
                }
                let p = p.assume_init();
                if enqueue(s, p.flow, p.data, p.len) != FairwayStatus::FairwayOk {
                    panic!("enqueue failed");
                }
                p
            };
            checksum += u64::from(p.flow);
        }
    };
    let ns = timed(warm, pairs, &mut run);
    black_box(checksum);
    unsafe { fairway_sched_destroy(s) };
    ns
}

/// Pairs in batches of this many packets.
const BATCH: usize = 32;

fn rust_direct_batch(spec: &str, flows: u32, pairs: u64, warm: bool) -> f64 {
    let spec = SchedSpec::parse(spec).expect("spec");
    let mut s: Box<dyn Scheduler<Pkt> + Send> =
        spec.build(Capacity::new(flows, flows * BACKLOG), Limits::DEFAULT);
    let mut id = 0u64;
    for f in 0..flows {
        s.add_flow(FlowId(f), FlowConfig::new(1 + f % 4, 1500))
            .expect("flow");
        for _ in 0..BACKLOG {
            let p = Pkt {
                data: id as usize + 1,
                len: packet_len(id),
            };
            s.enqueue(FlowId(f), p).map_err(|_| "enqueue").unwrap();
            id += 1;
        }
    }
    let mut checksum = 0u64;
    let mut buf = [(FlowId(0), Pkt { data: 0, len: 0 }); BATCH];
    let mut run = |n: u64| {
        for _ in 0..n / BATCH as u64 {
            for b in buf.iter_mut() {
                let d = s.dequeue().expect("backlogged");
                *b = (d.flow, d.packet);
            }
            for &(flow, p) in buf.iter() {
                checksum += u64::from(flow.0);
                if s.enqueue(flow, p).is_err() {
                    panic!("re-enqueue failed");
                }
            }
        }
    };
    let ns = timed(warm, pairs, &mut run);
    black_box(checksum);
    ns
}

type EnqueueBatchFn = unsafe extern "C" fn(
    *mut FairwayScheduler,
    *const FairwayPacket,
    usize,
    *mut usize,
) -> FairwayStatus;
type DequeueBatchFn = unsafe extern "C" fn(
    *mut FairwayScheduler,
    *mut FairwayPacket,
    usize,
    *mut usize,
) -> FairwayStatus;

fn rust_abi_batch(spec: &str, flows: u32, pairs: u64, warm: bool) -> f64 {
    // Not inlined, as from C (see `rust_abi`).
    let enqueue_batch: EnqueueBatchFn = black_box(fairway_sched_enqueue_batch);
    let dequeue_batch: DequeueBatchFn = black_box(fairway_sched_dequeue_batch);
    let cspec = CString::new(spec).unwrap();
    let mut s = null_mut();
    unsafe {
        let st = fairway_sched_create(
            cspec.as_ptr(),
            flows,
            flows * BACKLOG,
            &mut s,
            null_mut(),
            0,
        );
        assert_eq!(st, FairwayStatus::FairwayOk);
        let mut id = 0u64;
        for f in 0..flows {
            assert_eq!(
                fairway_sched_add_flow(s, f, 1 + f % 4, 1500),
                FairwayStatus::FairwayOk
            );
            for _ in 0..BACKLOG {
                let st =
                    fairway_sched_enqueue(s, f, (id + 1) as *mut c_void, packet_len(id) as usize);
                assert_eq!(st, FairwayStatus::FairwayOk);
                id += 1;
            }
        }
    }
    let mut checksum = 0u64;
    let empty = FairwayPacket {
        data: null_mut(),
        len: 0,
        flow: 0,
    };
    let mut buf = [empty; BATCH];
    let mut run = |n: u64| {
        for _ in 0..n / BATCH as u64 {
            let (mut got, mut put) = (0usize, 0usize);
            unsafe {
                if dequeue_batch(s, buf.as_mut_ptr(), BATCH, &mut got) != FairwayStatus::FairwayOk
                    || got != BATCH
                    || enqueue_batch(s, buf.as_ptr(), got, &mut put) != FairwayStatus::FairwayOk
                {
                    panic!("batch failed");
                }
            }
            checksum += buf.iter().map(|p| u64::from(p.flow)).sum::<u64>();
        }
    };
    let ns = timed(warm, pairs, &mut run);
    black_box(checksum);
    unsafe { fairway_sched_destroy(s) };
    ns
}

fn c_abi(exe: &std::path::Path, spec: &str, flows: u32, pairs: u64) -> f64 {
    // Round 0 warms up; round 1 is the measurement.
    let out = Command::new(exe)
        .args([spec, &flows.to_string(), &pairs.to_string(), "2"])
        .output()
        .expect("run bench_pairs");
    assert!(
        out.status.success(),
        "bench_pairs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().nth(1).expect("two rounds printed");
    line.rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .expect("ns_per_pair")
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let quick = args.iter().any(|a| a == "--quick");
    let rounds: usize = value("--rounds").map_or(if quick { 3 } else { 15 }, |v| {
        v.parse().expect("--rounds N")
    });
    let flows: u32 = value("--flows").map_or(1000, |v| v.parse().expect("--flows N"));
    let pairs: u64 = value("--pairs").map_or(if quick { 200_000 } else { 2_000_000 }, |v| {
        v.parse().expect("--pairs N")
    });
    let specs = value("--specs").unwrap_or_else(|| "drr,qfq,qfq+:m=8,wf2q+".to_string());
    let specs: Vec<&str> = specs.split(',').filter(|s| !s.is_empty()).collect();
    if let Some(column) = value("--column") {
        // One column, once, without warm-up: for callgrind.
        let f = match column.as_str() {
            "rust" => rust_direct,
            "rust-concrete" => rust_concrete,
            "abi" => rust_abi,
            "rust-batch" => rust_direct_batch,
            "abi-batch" => rust_abi_batch,
            other => {
                panic!("--column {other}: rust, rust-concrete, abi, rust-batch or abi-batch")
            }
        };
        for spec in specs {
            println!(
                "{spec} {column} {:.2} ns/pair",
                f(spec, flows, pairs, false)
            );
        }
        return;
    }

    let src = c_build::repo_root().join("examples/c/bench_pairs.c");
    let exe = match c_build::build_c_program(&src, "bench_pairs", &["-O2"]) {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("abi_pair: skipped, the C benchmark does not build: {e}");
            return;
        }
    };
    if args.iter().any(|a| a == "--c-exe") {
        println!("{}", exe.display());
        return;
    }
    println!(
        "dequeue+enqueue pair, {flows} flows x {BACKLOG} packets, {pairs} pairs per round, median of {rounds} rounds"
    );
    println!(
        "{:<12} {:>10} {:>12} {:>8} {:>13} {:>13} {:>23} {:>14} | {:>12} {:>10} {:>12}",
        "spec",
        "C->ABI ns",
        "Rust->ABI ns",
        "Rust ns",
        "concrete ns",
        "C->ABI / Rust",
        "per round: med (range)",
        "C->ABI / conc.",
        "ABI batch ns",
        "Rust batch",
        "batch / Rust"
    );
    for spec in specs {
        let (mut c, mut ra, mut rd) = (Vec::new(), Vec::new(), Vec::new());
        let (mut rc, mut ab, mut rb) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            c.push(c_abi(&exe, spec, flows, pairs));
            ra.push(rust_abi(spec, flows, pairs, true));
            rd.push(rust_direct(spec, flows, pairs, true));
            rc.push(rust_concrete(spec, flows, pairs, true));
            ab.push(rust_abi_batch(spec, flows, pairs, true));
            rb.push(rust_direct_batch(spec, flows, pairs, true));
        }
        let mut ratios: Vec<f64> = c.iter().zip(&rd).map(|(c, r)| c / r).collect();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(0.0, f64::max);
        let mid = median(&mut ratios);
        let (c, ra, rd, rc) = (
            median(&mut c),
            median(&mut ra),
            median(&mut rd),
            median(&mut rc),
        );
        let (ab, rb) = (median(&mut ab), median(&mut rb));
        println!(
            "{:<12} {:>10.2} {:>12.2} {:>8.2} {:>13.2} {:>13.3} {:>23} {:>14.3} | {:>12.2} {:>10.2} {:>12.3}",
            spec,
            c,
            ra,
            rd,
            rc,
            c / rd,
            format!("{mid:.3} ({lo:.3}-{hi:.3})"),
            c / rc,
            ab,
            rb,
            ab / rb
        );
    }
}
