//! Pinned service order: every scheduler in the registry, driven by a long
//! fixed pseudo-random sequence of operations (enqueues of valid and invalid
//! packets, dequeues, peeks, flows added, removed and reconfigured while
//! backlogged, a full packet store), must produce exactly the trace it
//! produced when the hashes below were recorded.
//!
//! Why: a change made only for speed (the packet store's slot layout, a
//! scheduler's fast path) must not change which packet leaves when. The
//! oracles in the other tests check properties (FIFO per flow, fairness
//! bounds, agreement with exact WF2Q+); this checks identity with the code
//! as it was, over far more operations than a property test runs. The
//! trace is an FNV-1a hash of every outcome: the (flow, length, sequence
//! number) of each dequeued and peeked packet, each error's kind, each
//! removed flow's packets and the backlog counters at intervals.
//!
//! Recording new hashes is right only when a change is meant to alter the
//! service order; say so in the commit. The quick run (200 000 operations
//! per scheduler and flow set) runs in CI; `cargo test -p fairway-core
//! --release --test integration service_order_hash:: -- --ignored` runs 4 000 000.

use fairway_core::registry::SchedKind;
use fairway_core::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pkt {
    seq: u64,
    len: u32,
}
impl Packet for Pkt {
    fn len(&self) -> u32 {
        self.len
    }
}

/// splitmix64: a fixed, dependency-free generator, so the sequence of
/// operations never changes with a crate version.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (the bias of a modulo is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// FNV-1a, 64 bits, over the little-endian bytes of each value.
struct Trace(u64);
impl Trace {
    fn new() -> Self {
        Trace(0xcbf2_9ce4_8422_2325)
    }
    fn add(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// One flow set: how many flow ids and packet slots, and the lengths the
/// flows are configured with.
#[derive(Clone, Copy)]
struct Setup {
    flows: u32,
    packets: u32,
    seed: u64,
}

const SMALL: Setup = Setup {
    flows: 64,
    packets: 512,
    seed: 1,
};
const LARGE: Setup = Setup {
    flows: 2048,
    packets: 4096,
    seed: 2,
};

const MAX_LENS: [u32; 4] = [64, 576, 1500, 9000];

fn random_cfg(rng: &mut Rng) -> FlowConfig {
    // Weights spread over 1..=1024 with small ones most common, as QFQ's
    // groups need a spread of weight/length ratios to be exercised.
    let spread = 1 << rng.below(11);
    let weight = 1 + rng.below(spread) as u32;
    FlowConfig::new(weight, MAX_LENS[rng.below(4) as usize])
}

/// Runs `ops` random operations and returns the trace hash.
fn trace(kind: SchedKind, setup: Setup, ops: u64) -> u64 {
    let mut s = SchedSpec::new(kind)
        .build::<Pkt>(Capacity::new(setup.flows, setup.packets), Limits::DEFAULT);
    let mut rng = Rng(setup.seed);
    let mut t = Trace::new();
    let mut seq = 0u64;
    // Most flows exist from the start; the rest come and go.
    for f in 0..setup.flows {
        if rng.below(4) != 0 {
            let cfg = random_cfg(&mut rng);
            t.add(s.add_flow(FlowId(f), cfg).is_ok() as u64);
        }
    }
    // Bias enqueues to a "hot" subset so that some flows build long queues
    // and the store fills up now and then.
    let hot = (setup.flows / 8).max(1);
    for i in 0..ops {
        // Phases of 4096 operations alternately fill (70 % enqueue attempts,
        // many of them refused) and drain (35 %): the small set's backlog
        // averages ~200 packets and hits its full store ~5000 times, the
        // large set's averages ~330 packets over hundreds of flows.
        let enqueue_permille = if (i >> 12) % 2 == 0 { 700 } else { 350 };
        let r = rng.below(1000);
        match r {
            _ if r < enqueue_permille => {
                let f = if rng.below(2) == 0 {
                    rng.below(u64::from(hot)) as u32
                } else {
                    // Past the end too: unknown and out-of-range ids.
                    rng.below(u64::from(setup.flows) + 2) as u32
                };
                let max = s.flow_config(FlowId(f)).map_or(1500, |c| c.max_len);
                // Mostly valid lengths, some 0 and some one past the maximum.
                let len = match rng.below(64) {
                    0 => 0,
                    1 => max + 1,
                    _ => 1 + rng.below(u64::from(max)) as u32,
                };
                seq += 1;
                match s.enqueue(FlowId(f), Pkt { seq, len }) {
                    Ok(()) => t.add(1),
                    Err(e) => {
                        t.add(2);
                        t.add(e.packet.seq);
                        let (code, a, b) = match e.kind {
                            EnqueueErrorKind::UnknownFlow(f) => (3, f.0, 0),
                            EnqueueErrorKind::ReservedFlowId => (4, 0, 0),
                            EnqueueErrorKind::EmptyPacket => (5, 0, 0),
                            EnqueueErrorKind::PacketTooLong { len, max_len } => (6, len, max_len),
                            EnqueueErrorKind::Full { capacity } => (7, capacity, 0),
                        };
                        t.add(code);
                        t.add(u64::from(a) << 32 | u64::from(b));
                    }
                }
            }
            _ if r < 960 => match s.dequeue() {
                Some(d) => {
                    t.add(u64::from(d.flow.0));
                    t.add(u64::from(d.packet.len));
                    t.add(d.packet.seq);
                }
                None => t.add(9),
            },
            960..980 => match s.peek() {
                Some((f, p)) => {
                    t.add(u64::from(f.0) | 1 << 40);
                    t.add(p.seq);
                }
                None => t.add(10),
            },
            980..985 => {
                let f = rng.below(u64::from(setup.flows)) as u32;
                match s.remove_flow(FlowId(f)) {
                    Ok(pkts) => {
                        t.add(11);
                        for p in pkts {
                            t.add(p.seq);
                        }
                    }
                    Err(_) => t.add(12),
                }
            }
            985..995 => {
                let f = rng.below(u64::from(setup.flows)) as u32;
                let cfg = random_cfg(&mut rng);
                t.add(13 + s.add_flow(FlowId(f), cfg).is_ok() as u64);
            }
            _ => {
                let f = rng.below(u64::from(setup.flows)) as u32;
                let cfg = random_cfg(&mut rng);
                t.add(15 + s.reconfigure_flow(FlowId(f), cfg).is_ok() as u64);
            }
        }
        if i % 1024 == 0 {
            let b = s.backlog();
            t.add(b.packets);
            t.add(b.bytes);
        }
    }
    // Drain: the order of what is left counts too.
    while let Some(d) = s.dequeue() {
        t.add(u64::from(d.flow.0));
        t.add(d.packet.seq);
    }
    t.add(s.backlog().packets);
    t.0
}

/// (scheduler, small-set hash, large-set hash) for 200 000 operations,
/// recorded with the packet store and schedulers of commit b0ad0eb.
const QUICK: &[(&str, u64, u64)] = &[
    ("fifo", 0xb6ff9479efcd1507, 0x92cf4048d7de9928),
    ("drr", 0xd6220cc0aa91653b, 0xc91a39cebe8cd349),
    ("qfq", 0x768e1407f175b987, 0x800556f4264dc67a),
    ("qfq+", 0x1e8f673f2988fbd7, 0x7458987167c27a1a),
    ("s-kps", 0x850b426311f9d7fc, 0x6f5c8b92ec2cd574),
    ("wf2q+", 0x8b577971dc403ba3, 0xe77f187f2c189fec),
    ("wf2q++", 0xf550810e9be80572, 0xafd368dfd46e1d40),
];

/// The same for 4 000 000 operations.
const LONG: &[(&str, u64, u64)] = &[
    ("fifo", 0x7551f71c628509a8, 0x5c12e8603aa9366f),
    ("drr", 0x3e3f8f202ec6ab2a, 0xd60aa06611adec62),
    ("qfq", 0x4b23da1784de04fb, 0xe2720bfdf1ea3940),
    ("qfq+", 0x4d710fd400e3d4b4, 0xbe89ea216b465981),
    ("s-kps", 0x3d945cbfae26c90a, 0x5a73aa423e5fc14c),
    ("wf2q+", 0xb343c444dee4d5dc, 0x5e38e49e8352e276),
    ("wf2q++", 0x40fa784363daa819, 0x3382e605bd48e5b9),
];

fn check(ops: u64, pinned: &[(&str, u64, u64)]) {
    let mut got = Vec::new();
    for &kind in SchedKind::ALL {
        let small = trace(kind, SMALL, ops);
        let large = trace(kind, LARGE, ops);
        got.push((kind.name(), small, large));
    }
    let listing: String = got
        .iter()
        .map(|(n, a, b)| format!("    (\"{n}\", {a:#018x}, {b:#018x}),\n"))
        .collect();
    assert_eq!(
        got.len(),
        pinned.len(),
        "pinned hashes missing; got:\n{listing}"
    );
    for (g, p) in got.iter().zip(pinned) {
        assert_eq!(g, p, "service order changed; all hashes now:\n{listing}");
    }
}

#[test]
fn service_order_is_as_pinned() {
    check(200_000, QUICK);
}

#[test]
#[ignore = "slow tier: 4 000 000 operations per scheduler and flow set"]
fn service_order_is_as_pinned_long() {
    check(4_000_000, LONG);
}

/// The hash would catch a change of order: the schedulers differ from each
/// other on the same operations, and swapping two dequeues changes it.
#[test]
fn the_trace_tells_orders_apart() {
    let drr = trace(SchedKind::Drr, SMALL, 20_000);
    let fifo = trace(SchedKind::Fifo, SMALL, 20_000);
    let qfq = trace(SchedKind::Qfq, SMALL, 20_000);
    assert_ne!(drr, fifo);
    assert_ne!(drr, qfq);
    let mut a = Trace::new();
    let mut b = Trace::new();
    for (x, y) in [(1, 2), (2, 1)] {
        a.add(x);
        b.add(y);
    }
    a.add(3);
    b.add(3);
    assert_ne!(a.0, b.0, "two packets swapped give another hash");
}
