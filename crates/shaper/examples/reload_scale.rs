//! A reload at 10,000 circuits, timed: the change of the shaper's
//! benchmark (1000 rate changes, 500 circuits added, 500 removed, 100
//! moved to another node) applied to an engine with 1000 busy circuits
//! and frames queued, and the cost of picking the next frame among them.
//!
//! `cargo run --release -p fairway-shaper --example reload_scale`
//!
//! Prints the check, the preparation (off the loop in the shaper), the
//! pause (the swap, during which the loop does not serve) and the time
//! per frame sent. Times are of this machine and run, not asserted.

use fairway_shaper::datapath::engine::Engine;
use fairway_shaper::datapath::reload::{prepare, show_ns};
use fairway_shaper::loc::Loc;
use fairway_shaper::plan::{default_scheduler, Dir};
use fairway_shaper::plan::{Bandwidth, Circuit, Device, Interfaces, Node, Plan, Prefix, Rates};
use fairway_shaper::validate::check;
use std::time::Instant;

const MBIT: u64 = 1_000_000;
const CIRCUITS: u32 = 10_000;
const NODES: u32 = 100;

fn at() -> Loc {
    Loc {
        file: std::sync::Arc::from("generated"),
        line: None,
        col: None,
    }
}

fn rates(min: Option<u64>, max: u64) -> Rates {
    let b = Bandwidth { min, max };
    Rates {
        download: b,
        upload: b,
    }
}

fn addr(k: u32) -> [u8; 4] {
    [10, (k >> 16) as u8, (k >> 8) as u8, k as u8]
}

fn add_circuit(p: &mut Plan, k: u32, max: u64) {
    let id = format!("c{k}");
    p.circuits.push(Circuit {
        id: id.clone(),
        name: id.clone(),
        parent: Some(format!("ap{}", k % NODES)),
        rates: rates(Some(MBIT), max),
        weight: None,
        at: at(),
    });
    let a = addr(k);
    p.devices.push(Device {
        id: format!("d{k}"),
        name: id.clone(),
        circuit: id,
        mac: None,
        prefixes: vec![Prefix {
            net: format!("{}.{}.{}.{}/32", a[0], a[1], a[2], a[3])
                .parse()
                .expect("a /32"),
            at: at(),
        }],
        at: at(),
    });
}

fn plan() -> Plan {
    let mut p = Plan {
        interfaces: Some(Interfaces {
            internet: "a".into(),
            subscribers: "b".into(),
            download: 100_000 * MBIT,
            upload: 100_000 * MBIT,
            io: Default::default(),
            at: at(),
        }),
        ..Plan::default()
    };
    for n in 0..NODES {
        p.nodes.push(Node {
            name: format!("ap{n}"),
            parent: None,
            rates: rates(None, 1000 * MBIT),
            weight: None,
            scheduler: default_scheduler(),
            at: at(),
        });
    }
    for k in 0..CIRCUITS {
        add_circuit(&mut p, k, 10 * MBIT);
    }
    p
}

/// 1000 rate changes, 500 adds, 500 removals, 100 moves.
fn changed(p: &Plan) -> Plan {
    let mut q = p.clone();
    let gone = |id: &str| id[1..].parse::<u32>().is_ok_and(|k| k < 500);
    q.circuits.retain(|c| !gone(&c.id));
    q.devices.retain(|d| !gone(&d.circuit));
    for c in q.circuits.iter_mut().take(1000) {
        c.rates = rates(Some(MBIT), 20 * MBIT);
    }
    for c in q.circuits.iter_mut().skip(1000).take(100) {
        let k: u32 = c.id[1..].parse().expect("c<number>");
        c.parent = Some(format!("ap{}", (k + 1) % NODES));
    }
    for k in CIRCUITS..CIRCUITS + 500 {
        add_circuit(&mut q, k, 10 * MBIT);
    }
    q
}

/// An Ethernet + IPv4 + UDP frame of 1000 bytes to `dst`.
fn frame(dst: [u8; 4], sport: u16) -> Vec<u8> {
    let mut f = vec![0u8; 1000];
    f[12] = 0x08;
    f[14] = 0x45;
    f[23] = 17;
    f[26..30].copy_from_slice(&[8, 8, 8, 8]);
    f[30..34].copy_from_slice(&dst);
    f[34..36].copy_from_slice(&sport.to_be_bytes());
    f[36..38].copy_from_slice(&80u16.to_be_bytes());
    f
}

/// This thread's CPU time, ns: on a shared machine the wall clock also
/// counts the time other processes ran.
fn cpu_ns() -> u64 {
    // SAFETY: all-zero is a valid timespec; clock_gettime writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn main() {
    let p = plan();
    let running = check(p.clone()).unwrap_or_else(|e| panic!("{}", e[0]));
    let mut e = Engine::new(&running, 0).expect("the engine");
    // A tenth of the circuits busy, 16 frames each: 13 go at once (the
    // max bucket's burst, 10 ms at 10 Mbit/s, and a debt), 3 stay queued.
    let busy: Vec<u32> = (0..CIRCUITS).step_by(10).collect();
    for &k in &busy {
        for s in 0..16 {
            let f = frame(addr(k), s);
            e.receive(Dir::Download, 0, |b| {
                b[..f.len()].copy_from_slice(&f);
                Some(f.len())
            });
        }
    }
    // Each pick is among all busy circuits.
    let (t, c) = (Instant::now(), cpu_ns());
    let mut sent = 0u32;
    while let Some(out) = e.next(0) {
        e.sent(out, true);
        sent += 1;
    }
    let per_frame = t.elapsed().as_nanos() / u128::from(sent.max(1));
    let cpu_per_frame = (cpu_ns() - c) / u64::from(sent.max(1));
    println!(
        "{} busy circuits: {sent} frames picked at {per_frame} ns each ({cpu_per_frame} ns of CPU)",
        busy.len()
    );
    let queued = e.report().total().1.packets;

    let (t0, c0) = (Instant::now(), cpu_ns());
    let next = check(changed(&p)).unwrap_or_else(|e| panic!("{}", e[0]));
    let checked_ns = t0.elapsed().as_nanos() as u64;
    let t1 = Instant::now();
    let prepared = prepare(e.plan(), next, 1).expect("prepared");
    let prepared_ns = t1.elapsed().as_nanos() as u64;
    let (t2, c2) = (Instant::now(), cpu_ns());
    let applied = e.apply(prepared, 1).expect("applied");
    let pause_ns = t2.elapsed().as_nanos() as u64;
    let pause_cpu_ns = cpu_ns() - c2;
    let total_ns = t0.elapsed().as_nanos() as u64;
    let total_cpu_ns = cpu_ns() - c0;
    println!(
        "{CIRCUITS} circuits, {queued} frames queued: {}",
        applied.diff
    );
    println!(
        "check {}, prepare {}, pause {} ({} of CPU); applied in {} ({} of CPU); {} queued frames of removed circuits dropped",
        show_ns(checked_ns),
        show_ns(prepared_ns),
        show_ns(pause_ns),
        show_ns(pause_cpu_ns),
        show_ns(total_ns),
        show_ns(total_cpu_ns),
        applied.dropped.packets
    );
    let t3 = Instant::now();
    drop(applied.retired);
    println!(
        "old state freed in {}",
        show_ns(t3.elapsed().as_nanos() as u64)
    );
}
