//! Live reload of the [`Engine`] in simulated time: an unchanged plan
//! changes nothing, random changes while frames are queued lose nothing
//! uncounted and reorder nothing, refusals change nothing, 10,000
//! circuits reload.

use super::engine::{Engine, Out, POOL_SLOTS};
use super::headers::tests::udp4;
use super::reload::{load_and_prepare, prepare, ReloadError};
use super::stats::Report;
use super::test_plan::{at, checked, circuit, node, plan, rates, rng};
use crate::plan::{Device, Dir, Plan, Prefix};
use crate::validate::Checked;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

const MBIT: u64 = 1_000_000;

/// Circuit `k`'s subscriber address.
fn addr(k: u32) -> [u8; 4] {
    [10, (k >> 16) as u8, (k >> 8) as u8, k as u8]
}

/// Adds circuit `c{k}` under `parent` with a device for its address.
fn add(p: &mut Plan, k: u32, parent: Option<&str>, min: Option<u64>, max: u64, w: Option<u32>) {
    let id = format!("c{k}");
    circuit(p, &id, parent, min, max, w);
    let a = addr(k);
    p.devices.push(Device {
        id: format!("d{k}"),
        name: id.clone(),
        circuit: id,
        mac: None,
        prefixes: vec![Prefix {
            net: format!("{}.{}.{}.{}/32", a[0], a[1], a[2], a[3])
                .parse()
                .unwrap(),
            at: at(),
        }],
        at: at(),
    });
}

/// Two nodes, `n` circuits alternating between them, some guaranteed,
/// some weighted.
fn base(n: u32) -> Plan {
    let mut p = plan(100 * MBIT);
    node(&mut p, "n0", None, 50 * MBIT, None);
    node(&mut p, "n1", None, 40 * MBIT, Some(2));
    for k in 0..n {
        let parent = ["n0", "n1"][k as usize % 2];
        let min = (k % 3 == 0).then_some(200_000);
        add(
            &mut p,
            k,
            Some(parent),
            min,
            (1 + u64::from(k % 5)) * MBIT,
            (k % 4 == 1).then_some(3),
        );
    }
    p
}

/// A frame of circuit `k`'s flow `flow` (its source port), `len` bytes,
/// carrying `seq`, in direction `dir` (the subscriber's address is the
/// destination of download, the source of upload).
fn frame(dir: Dir, k: u32, flow: u16, len: usize, seq: u32) -> Vec<u8> {
    let mut f = match dir {
        Dir::Download => udp4([8, 8, 8, 8], addr(k), flow, 80, None),
        Dir::Upload => udp4(addr(k), [8, 8, 8, 8], flow, 80, None),
    };
    f.resize(len.max(64), 0);
    f[42..46].copy_from_slice(&seq.to_be_bytes());
    f
}

fn rx(e: &mut Engine, dir: Dir, now: u64, f: &[u8]) {
    assert!(e.receive(dir, now, |buf| {
        buf[..f.len()].copy_from_slice(f);
        Some(f.len())
    }));
}

/// Sends everything that may go at `now`: (direction, subscriber's
/// address, flow, seq) of each.
fn drain(e: &mut Engine, now: u64) -> Sent {
    let mut out = Vec::new();
    while let Some(o @ Out { dir, .. }) = e.next(now) {
        let b = e.frame(o.frame);
        let at = if dir == Dir::Download { 30 } else { 26 };
        let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        let flow = u16::from_be_bytes([b[34], b[35]]);
        let seq = u32::from_be_bytes([b[42], b[43], b[44], b[45]]);
        out.push((dir, a, flow, seq));
        e.sent(o, true);
    }
    out
}

/// Received = sent + dropped + queued for every row; the pool's free
/// slots and the queued frames are all the slots.
fn balanced(e: &Engine) -> Report {
    let r = e.report();
    for row in &r.rows {
        assert!(row.balanced(), "{row:?}");
    }
    let (_, queued) = r.total();
    assert_eq!(e.pool.free() as u64 + queued.packets, u64::from(POOL_SLOTS));
    r
}

fn reload(e: &mut Engine, new: Checked, now: u64) -> super::reload::Applied {
    let p = prepare(e.plan(), new, now).unwrap();
    e.apply(p, now).unwrap()
}

/// Offers circuits `0..n` frames in both directions for `steps` steps
/// of 200 µs from `start`.
fn offer(
    e: &mut Engine,
    n: u32,
    start: u64,
    steps: u32,
    seq: &mut u32,
) -> Vec<(Dir, [u8; 4], u16, u32)> {
    let mut out = Vec::new();
    for s in 0..steps {
        let now = start + u64::from(s) * 200_000;
        for k in 0..n {
            *seq += 1;
            let dir = if k % 2 == 0 {
                Dir::Download
            } else {
                Dir::Upload
            };
            rx(
                e,
                dir,
                now,
                &frame(
                    dir,
                    k,
                    (*seq % 3) as u16,
                    600 + (k as usize * 37) % 900,
                    *seq,
                ),
            );
        }
        out.extend(drain(e, now));
    }
    out
}

type Sent = Vec<(Dir, [u8; 4], u16, u32)>;

/// The same frames sent in the same order (the first difference shown).
fn same(a: Sent, b: Sent) {
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
        panic!("frame {i} differs: {:?} against {:?}", a[i], b[i]);
    }
    assert_eq!(a.len(), b.len());
}

#[test]
fn reloading_an_unchanged_plan_changes_nothing() {
    let c = checked(base(12));
    let (mut a, mut b) = (Engine::new(&c, 0).unwrap(), Engine::new(&c, 0).unwrap());
    let (mut sa, mut sb) = (0, 0);
    same(
        offer(&mut a, 12, 0, 50, &mut sa),
        offer(&mut b, 12, 0, 50, &mut sb),
    );
    let queued = b.report().total().1.packets;
    assert!(
        queued > 100,
        "frames must be queued at the reload: {queued}"
    );
    let applied = reload(&mut b, c.clone(), 10_000_000);
    assert!(applied.diff.is_empty());
    assert_eq!(applied.dropped.packets, 0);
    assert_eq!(a.report(), b.report());
    let start = 10_000_000;
    same(
        offer(&mut a, 12, start, 200, &mut sa),
        offer(&mut b, 12, start, 200, &mut sb),
    );
    assert_eq!(a.report(), balanced(&b));
}

/// The plan after a random change: circuits removed, added, moved to
/// the other node, rates and weights changed.
fn mutate(p: &Plan, seed: u64, next_id: &mut u32) -> Plan {
    let mut rnd = rng(seed);
    let mut q = p.clone();
    let ids: Vec<String> = q.circuits.iter().map(|c| c.id.clone()).collect();
    for id in ids {
        match rnd(8) {
            0 => {
                q.circuits.retain(|c| c.id != id);
                q.devices.retain(|d| d.circuit != id);
            }
            1 => {
                let c = q.circuits.iter_mut().find(|c| c.id == id).unwrap();
                let other = if c.parent.as_deref() == Some("n0") {
                    "n1"
                } else {
                    "n0"
                };
                c.parent = Some(other.into());
            }
            2 => {
                let c = q.circuits.iter_mut().find(|c| c.id == id).unwrap();
                c.rates = rates(c.rates.download.min, (1 + rnd(9)) * MBIT);
                c.weight = Some(1 + rnd(5) as u32);
            }
            _ => {}
        }
    }
    for _ in 0..rnd(4) {
        let k = *next_id;
        *next_id += 1;
        let parent = ["n0", "n1"][rnd(2) as usize];
        add(&mut q, k, Some(parent), None, (1 + rnd(4)) * MBIT, None);
    }
    q
}

#[derive(Clone, Debug)]
enum Op {
    /// A frame for circuit (index modulo the ids used so far), flow, len.
    Rx(u32, u16, usize),
    /// Time passes (µs), what may go is sent.
    Tick(u32),
    /// A reload with a random change.
    Reload(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u32..64, 0u16..3, 60usize..1500).prop_map(|(k, f, l)| Op::Rx(k, f, l)),
        3 => (0u32..3000).prop_map(Op::Tick),
        1 => any::<u64>().prop_map(Op::Reload),
    ]
}

/// Each circuit's queued frames, by name.
fn queued(r: &Report) -> HashMap<(String, &'static str), u64> {
    r.rows
        .iter()
        .map(|row| ((row.class.clone(), row.dir.name()), row.queued.packets))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Frames are received, sent and reloaded at random: every frame is
    /// sent, dropped with a reason or queued, every flow's frames leave in
    /// order, a circuit that stays (moved or not) keeps its queued frames
    /// and counters, a removed one's are counted as removed.
    #[test]
    fn random_reloads_lose_nothing_uncounted_and_reorder_nothing(ops in proptest::collection::vec(op(), 1..300)) {
        let mut p = base(16);
        let mut next_id = 16;
        let mut e = Engine::new(&checked(p.clone()), 0).unwrap();
        let (mut now, mut seq) = (0u64, 0u32);
        let mut last: HashMap<(&str, [u8; 4], u16), u32> = HashMap::new();
        for o in ops {
            match o {
                Op::Rx(k, flow, len) => {
                    seq += 1;
                    let k = k % next_id;
                    let dir = if seq % 2 == 0 { Dir::Download } else { Dir::Upload };
                    rx(&mut e, dir, now, &frame(dir, k, flow, len, seq));
                }
                Op::Tick(us) => {
                    now += u64::from(us) * 1000;
                    for (dir, a, flow, s) in drain(&mut e, now) {
                        let prev = last.insert((dir.name(), a, flow), s);
                        prop_assert!(prev.is_none_or(|p| p < s), "flow {a:?}/{flow}: {prev:?} then {s}");
                    }
                }
                Op::Reload(seed) => {
                    let before = balanced(&e);
                    let q = mutate(&p, seed, &mut next_id);
                    let applied = reload(&mut e, checked(q.clone()), now);
                    let after = balanced(&e);
                    let (b, a) = (queued(&before), queued(&after));
                    let mut lost = 0;
                    for ((class, dir), n) in &b {
                        if let Some(id) = class.strip_prefix("circuit ") {
                            if q.circuits.iter().any(|c| c.id == id) {
                                prop_assert_eq!(a.get(&(class.clone(), dir)), Some(n), "{}", class);
                            } else {
                                lost += n;
                            }
                        }
                    }
                    prop_assert_eq!(applied.dropped.packets, lost);
                    let removed = |r: &Report| r.total().0.removed.packets;
                    prop_assert_eq!(removed(&after), removed(&before) + lost);
                    prop_assert_eq!(before.total().0.received, after.total().0.received);
                    p = q;
                }
            }
            balanced(&e);
        }
    }
}

#[test]
fn a_plan_with_other_interfaces_is_refused_and_nothing_changes() {
    let c = checked(base(4));
    let mut e = Engine::new(&c, 0).unwrap();
    let mut seq = 0;
    offer(&mut e, 4, 0, 20, &mut seq);
    let before = e.report();
    let mut p = base(4);
    p.interfaces.as_mut().unwrap().subscribers = "other".into();
    let refused = prepare(e.plan(), checked(p), 0);
    assert!(matches!(refused, Err(ReloadError::Interfaces)));
    // A prepared plan whose base no longer runs is refused too.
    let first = prepare(e.plan(), checked(base(5)), 0).unwrap();
    let second = prepare(e.plan(), checked(base(6)), 0).unwrap();
    e.apply(second, 0).unwrap();
    let mid = e.report();
    assert!(e.apply(first, 0).is_err());
    assert_eq!(e.report(), mid);
    assert_eq!(before.total().0.received, mid.total().0.received);
}

#[test]
fn a_file_with_problems_is_refused_with_them() {
    let dir = std::env::temp_dir().join(format!("fairway-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, "[[circuit]]\nid = \"a\"\nmax = \"10qbit\"\n").unwrap();
    let c = Arc::new(checked(base(2)));
    let r = load_and_prepare(&crate::load::Source::ShaperFile(path), &c, 0);
    std::fs::remove_dir_all(&dir).unwrap();
    match r {
        Err(e @ ReloadError::Config(_)) => assert!(e.to_string().contains("bad.toml"), "{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a file with problems must be refused"),
    }
}

#[test]
fn a_moved_circuit_keeps_its_frames_order_and_tokens() {
    let mut p = base(4);
    let c = checked(p.clone());
    let mut e = Engine::new(&c, 0).unwrap();
    // 30 frames of 1000 bytes to circuit 0 (max 1 Mbit/s): 3 leave at
    // once (the burst), the rest wait.
    for s in 0..30 {
        rx(
            &mut e,
            Dir::Download,
            0,
            &frame(Dir::Download, 0, (s % 2) as u16, 1000, s),
        );
    }
    let first = drain(&mut e, 0);
    assert_eq!(first.len(), 4);
    p.circuits[0].parent = Some("n1".into());
    p.circuits[0].rates = rates(Some(200_000), 2 * MBIT);
    let applied = reload(&mut e, checked(p), 0);
    assert_eq!(applied.diff.circuits.moved, ["c0"]);
    assert_eq!(applied.diff.circuits.changed, ["c0"]);
    // Its debt carried: nothing more at the same instant.
    assert!(drain(&mut e, 0).is_empty());
    let mut rest = Vec::new();
    for ms in 1..=1000 {
        rest.extend(drain(&mut e, ms * 1_000_000));
    }
    let seqs: Vec<u32> = first.iter().chain(&rest).map(|f| f.3).collect();
    assert_eq!(seqs.len(), 30);
    for flow in 0..2 {
        let mine: Vec<u32> = seqs.iter().copied().filter(|s| s % 2 == flow).collect();
        assert!(mine.windows(2).all(|w| w[0] < w[1]), "{mine:?}");
    }
    balanced(&e);
}

#[test]
fn ten_thousand_circuits_reload() {
    let n = 10_000;
    let mut p = plan(100_000 * MBIT);
    node(&mut p, "n0", None, 50_000 * MBIT, None);
    node(&mut p, "n1", None, 50_000 * MBIT, None);
    for k in 0..n {
        add(
            &mut p,
            k,
            Some(["n0", "n1"][k as usize % 2]),
            Some(MBIT),
            10 * MBIT,
            None,
        );
    }
    let mut e = Engine::new(&checked(p.clone()), 0).unwrap();
    for k in (0..n).step_by(7) {
        for s in 0..4 {
            rx(
                &mut e,
                Dir::Download,
                0,
                &frame(Dir::Download, k, 0, 1500, s),
            );
        }
    }
    let q = big_change(&p, n);
    let applied = reload(&mut e, checked(q), 0);
    let c = &applied.diff.circuits;
    assert_eq!(
        (c.added.len(), c.removed.len(), c.moved.len()),
        (500, 500, 100)
    );
    assert_eq!(c.changed.len(), 1000);
    // Circuits 0..500 went, every seventh with 4 frames.
    assert_eq!(
        applied.dropped.packets,
        4 * (0..500).step_by(7).count() as u64
    );
    balanced(&e);
}

/// The change of the 10,000-circuit test: 1000 rate changes, 500 adds,
/// 500 removals, 100 moves.
fn big_change(p: &Plan, n: u32) -> Plan {
    let mut q = p.clone();
    q.circuits
        .retain(|c| c.id[1..].parse::<u32>().unwrap() >= 500);
    q.devices
        .retain(|d| d.circuit[1..].parse::<u32>().unwrap() >= 500);
    for c in q.circuits.iter_mut().take(1000) {
        c.rates = rates(Some(MBIT), 20 * MBIT);
    }
    for c in q.circuits.iter_mut().skip(1000).take(100) {
        let other = if c.parent.as_deref() == Some("n0") {
            "n1"
        } else {
            "n0"
        };
        c.parent = Some(other.into());
    }
    for k in n..n + 500 {
        add(&mut q, k, Some("n0"), Some(MBIT), 10 * MBIT, None);
    }
    q
}

#[test]
fn a_plan_whose_queues_do_not_fit_is_refused_before_allocating() {
    use super::engine::{EngineError, MAX_QUEUE_BYTES};
    let e = Engine::new(&checked(base(2)), 0).unwrap();
    // At 2^43 bit/s a circuit's queue limit is FQ-CoDel's 2^24 packets:
    // four such circuits pass 4 GiB.
    let top = 1u64 << 43;
    let mut p = plan(top);
    for k in 0..4 {
        add(&mut p, k, None, None, top, None);
    }
    match prepare(e.plan(), checked(p), 0) {
        Err(ReloadError::Engine(EngineError::Memory { bytes })) => assert!(bytes > MAX_QUEUE_BYTES),
        Err(err) => panic!("{err}"),
        Ok(_) => panic!("queues above the limit must be refused"),
    }
}

#[test]
fn a_reload_keeps_the_statistics_of_what_stays() {
    let mut p = base(4);
    let mut e = Engine::new(&checked(p.clone()), 0).unwrap();
    for s in 0..4 {
        rx(
            &mut e,
            Dir::Download,
            0,
            &frame(Dir::Download, 1, 0, 1000, s),
        );
    }
    assert_eq!(drain(&mut e, 0).len(), 4);
    // The rate is the bits of the last complete window: read in the next.
    let later = super::watch::RATE_WINDOW_NS + 1;
    let before = e.watch.leaves[0][1].rate(later);
    assert_eq!(before, 4 * 1000 * 8);
    // Circuit c0 goes: c1 keeps its slot (leaf 1) and its rate window,
    // c3 moves down into the gap (leaf 0).
    p.circuits.remove(0);
    p.devices.retain(|d| d.circuit != "c0");
    let applied = reload(&mut e, checked(p), 0);
    assert_eq!(applied.diff.circuits.removed, ["c0"]);
    let ids: Vec<&str> = e
        .plan()
        .plan
        .circuits
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["c3", "c1", "c2"]);
    assert_eq!(e.watch.leaves[0][1].rate(later), before);
    assert_eq!(e.watch.leaves[0][0].rate(later), 0);
    assert_eq!(e.watch.leaves[0].len(), e.layout.leaf_parent.len());
}

/// Nodes added and removed, circuits removed so that the default class
/// moves to another index, its frames queued: the default class keeps
/// its frames and counters, the statistics follow, nothing is lost.
#[test]
fn the_default_class_and_nodes_follow_a_reload() {
    let mut p = base(6);
    node(&mut p, "n2", Some("n0"), 20 * MBIT, None);
    p.default_class = Some(crate::plan::DefaultClass {
        parent: Some("n2".into()),
        rates: rates(None, MBIT),
        at: at(),
    });
    let mut e = Engine::new(&checked(p.clone()), 0).unwrap();
    // Unclaimed frames (no device has 10.9.9.9) queue in the default
    // class beyond its 1 Mbit/s burst.
    for s in 0..40 {
        let mut f = udp4([8, 8, 8, 8], [10, 9, 9, 9], 1, 2, None);
        f.resize(1000, s as u8);
        rx(&mut e, Dir::Download, 0, &f);
    }
    drain(&mut e, 0);
    let before = balanced(&e);
    let row = |r: &Report| {
        let d = r.rows.iter().find(|r| r.class == "default").unwrap();
        (d.counters, d.queued)
    };
    let (counters, queued) = row(&before);
    assert!(
        queued.packets > 0,
        "frames must be queued in the default class"
    );
    // n1 goes (its circuits move to n0 or go), n3 comes under n2 and
    // takes the default class; two circuits go.
    let mut q = p.clone();
    q.nodes.retain(|n| n.name != "n1");
    node(&mut q, "n3", Some("n2"), 10 * MBIT, None);
    q.circuits.retain(|c| c.id != "c0" && c.id != "c1");
    q.devices.retain(|d| d.circuit != "c0" && d.circuit != "c1");
    for c in &mut q.circuits {
        c.parent = Some("n0".into());
    }
    if let Some(d) = q.default_class.as_mut() {
        d.parent = Some("n3".into());
    }
    let applied = reload(&mut e, checked(q), 1);
    assert_eq!(applied.diff.nodes.added, ["n3"]);
    assert_eq!(applied.diff.nodes.removed, ["n1"]);
    let after = balanced(&e);
    assert_eq!(row(&after), (counters, queued));
    let leaves = e.plan().plan.circuits.len() + 1;
    assert_eq!(e.sides[0].leaf.len(), leaves);
    assert_eq!(e.watch.leaves[0].len(), leaves + 1);
    assert_eq!(e.watch.nodes[1].len(), 3);
    assert_eq!(e.layout.rows.len(), 3 + leaves + 1);
    // The default class's frames still go (or CoDel drops them).
    for t in 1..=40u64 {
        drain(&mut e, t * 100_000_000);
    }
    let (end, left) = row(&balanced(&e));
    assert_eq!(left.packets, 0);
    let gone = |c: &super::stats::Counters| c.sent.packets + c.codel.packets;
    assert_eq!(gone(&end), gone(&counters) + queued.packets);
}
