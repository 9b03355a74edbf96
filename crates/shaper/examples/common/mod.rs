//! What the scale examples share: the plan of 10,000 circuits under 100
//! nodes, the benchmark's change of it, frames, and a CPU clock.

#![allow(dead_code)]

pub mod files;

use fairway_shaper::loc::Loc;
use fairway_shaper::plan::default_scheduler;
use fairway_shaper::plan::{Bandwidth, Circuit, Device, Interfaces, Node, Plan, Prefix, Rates};

pub const MBIT: u64 = 1_000_000;
pub const CIRCUITS: u32 = 10_000;
pub const NODES: u32 = 100;

pub fn at() -> Loc {
    Loc {
        file: std::sync::Arc::from("generated"),
        line: None,
        col: None,
    }
}

pub fn rates(min: Option<u64>, max: u64) -> Rates {
    let b = Bandwidth { min, max };
    Rates {
        download: b,
        upload: b,
    }
}

pub fn addr(k: u32) -> [u8; 4] {
    [10, (k >> 16) as u8, (k >> 8) as u8, k as u8]
}

pub fn add_circuit(p: &mut Plan, k: u32, max: u64) {
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

pub fn plan() -> Plan {
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
pub fn changed(p: &Plan) -> Plan {
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
pub fn frame(dst: [u8; 4], sport: u16) -> Vec<u8> {
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
pub fn cpu_ns() -> u64 {
    // SAFETY: all-zero is a valid timespec; clock_gettime writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
