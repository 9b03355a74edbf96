//! The rate semantics of [`super::tree`] with a simulated clock: each
//! circuit's max held, mins guaranteed under overload, the excess shared
//! by weight, ceilings of inner nodes.

use super::test_plan::{checked, circuit, node, plan};
use super::tree::Tree;
use crate::plan::{Dir, Plan};

const MBIT: u64 = 1_000_000;
const FRAME: u32 = 1000;
const STEP_NS: u64 = 50_000;

/// Offers each leaf `offered[leaf]` bit/s in 1000-byte frames over four
/// flows for `secs` simulated seconds, dequeuing everything the tree
/// lets out at every 50 µs step; the bit/s each leaf got after the first
/// second (bursts and CoDel's start left out).
fn run(p: Plan, offered: &[u64], secs: u64) -> Vec<u64> {
    let c = checked(p);
    let mut t: Tree<u32> = Tree::new(&c, Dir::Download, 0).unwrap();
    assert_eq!(t.leaves(), offered.len());
    let mut credit = vec![0u128; offered.len()];
    let mut sent = vec![0u64; offered.len()];
    let mut seq = 0u32;
    let mut now = 0;
    let warm = 1_000_000_000;
    let end = secs * 1_000_000_000;
    while now < end {
        now += STEP_NS;
        for (leaf, &rate) in offered.iter().enumerate() {
            credit[leaf] += u128::from(rate) * u128::from(STEP_NS);
            let cost = u128::from(FRAME) * 8 * 1_000_000_000;
            while credit[leaf] >= cost {
                credit[leaf] -= cost;
                seq = seq.wrapping_add(1);
                let hash = (seq % 4).wrapping_mul(0x4000_0000);
                t.enqueue(leaf as u32, hash, FRAME, now).unwrap();
            }
        }
        while let Some((leaf, len)) = t.dequeue(now, &mut |_, _| {}) {
            if now > warm {
                sent[leaf as usize] += u64::from(len) * 8;
            }
        }
    }
    let window = secs - 1;
    sent.iter().map(|b| b / window).collect()
}

fn within(got: u64, want: u64, tolerance_pct: u64) -> bool {
    got.abs_diff(want) * 100 <= want * tolerance_pct
}

#[test]
fn each_circuits_max_is_held_within_one_percent() {
    let mut p = plan(1000 * MBIT);
    circuit(&mut p, "a", None, None, 10 * MBIT, None);
    circuit(&mut p, "b", None, Some(5 * MBIT), 37 * MBIT, None);
    circuit(&mut p, "c", None, None, 3 * MBIT, None);
    let got = run(p, &[30 * MBIT, 100 * MBIT, 3 * MBIT / 2], 6);
    assert!(within(got[0], 10 * MBIT, 1), "{got:?}");
    assert!(within(got[1], 37 * MBIT, 1), "{got:?}");
    // Under its max, c gets what it offers.
    assert!(within(got[2], 3 * MBIT / 2, 1), "{got:?}");
}

#[test]
fn the_link_rate_is_the_roots_ceiling() {
    let mut p = plan(50 * MBIT);
    circuit(&mut p, "a", None, None, 50 * MBIT, Some(1));
    circuit(&mut p, "b", None, None, 50 * MBIT, Some(1));
    let got = run(p, &[80 * MBIT, 80 * MBIT], 4);
    assert!(within(got[0] + got[1], 50 * MBIT, 1), "{got:?}");
    assert!(within(got[0], 25 * MBIT, 5), "{got:?}");
}

#[test]
fn mins_are_guaranteed_under_overload_and_the_excess_shared_equally() {
    // Mins 20 + 10 + 0 of 100: the excess 70 in equal thirds (explicit
    // equal weights).
    let mut p = plan(100 * MBIT);
    circuit(&mut p, "a", None, Some(20 * MBIT), 100 * MBIT, Some(1));
    circuit(&mut p, "b", None, Some(10 * MBIT), 100 * MBIT, Some(1));
    circuit(&mut p, "c", None, None, 100 * MBIT, Some(1));
    let got = run(p, &[200 * MBIT, 200 * MBIT, 200 * MBIT], 6);
    let third = 70 * MBIT / 3;
    assert!(within(got[0], 20 * MBIT + third, 5), "{got:?}");
    assert!(within(got[1], 10 * MBIT + third, 5), "{got:?}");
    assert!(within(got[2], third, 5), "{got:?}");
    assert!(got[0] >= 20 * MBIT && got[1] >= 10 * MBIT, "{got:?}");
}

#[test]
fn a_min_holds_against_a_heavy_weight() {
    let mut p = plan(100 * MBIT);
    circuit(&mut p, "a", None, Some(30 * MBIT), 100 * MBIT, Some(1));
    circuit(&mut p, "b", None, None, 100 * MBIT, Some(1000));
    let got = run(p, &[200 * MBIT, 200 * MBIT], 6);
    // 30 guaranteed plus 70/1001 of the excess.
    assert!(within(got[0], 30 * MBIT + 70 * MBIT / 1001, 2), "{got:?}");
}

#[test]
fn weights_share_the_excess_within_five_percent() {
    let mut p = plan(100 * MBIT);
    circuit(&mut p, "a", None, None, 100 * MBIT, Some(1));
    circuit(&mut p, "b", None, None, 100 * MBIT, Some(3));
    circuit(&mut p, "c", None, None, 100 * MBIT, Some(4));
    let got = run(p, &[150 * MBIT, 150 * MBIT, 150 * MBIT], 6);
    assert!(within(got[0], 12_500_000, 5), "{got:?}");
    assert!(within(got[1], 37_500_000, 5), "{got:?}");
    assert!(within(got[2], 50 * MBIT, 5), "{got:?}");
}

#[test]
fn without_weights_the_excess_goes_by_guarantee() {
    let mut p = plan(90 * MBIT);
    circuit(&mut p, "a", None, Some(10 * MBIT), 90 * MBIT, None);
    circuit(&mut p, "b", None, Some(20 * MBIT), 90 * MBIT, None);
    let got = run(p, &[150 * MBIT, 150 * MBIT], 6);
    // 10 + 60/3 and 20 + 2·60/3.
    assert!(within(got[0], 30 * MBIT, 5), "{got:?}");
    assert!(within(got[1], 60 * MBIT, 5), "{got:?}");
}

#[test]
fn an_inner_nodes_max_caps_its_subtree_and_the_rest_goes_elsewhere() {
    let mut p = plan(100 * MBIT);
    node(&mut p, "site", None, 40 * MBIT, Some(1));
    circuit(&mut p, "a", Some("site"), None, 40 * MBIT, Some(1));
    circuit(&mut p, "b", Some("site"), None, 40 * MBIT, Some(1));
    circuit(&mut p, "c", None, None, 100 * MBIT, Some(1));
    let got = run(p, &[100 * MBIT, 100 * MBIT, 100 * MBIT], 6);
    assert!(within(got[0] + got[1], 40 * MBIT, 1), "{got:?}");
    assert!(within(got[0], 20 * MBIT, 5), "{got:?}");
    assert!(within(got[2], 60 * MBIT, 2), "{got:?}");
}

#[test]
fn an_idle_circuit_earns_no_credit() {
    // b idle for the first half: when it starts, a and b share at once
    // (b's pass starts at the virtual time, not at 0).
    // Under a WF2Q+ node: a flow backlogged anew starts at the virtual
    // time (QFQ+'s round robin inside an aggregate has a 9022-byte quantum).
    let mut p = plan(20 * MBIT);
    node(&mut p, "n", None, 20 * MBIT, None);
    p.nodes[0].scheduler = fairway_core::SchedSpec::parse("wf2q+").unwrap();
    circuit(&mut p, "a", Some("n"), None, 20 * MBIT, Some(1));
    circuit(&mut p, "b", Some("n"), None, 20 * MBIT, Some(1));
    let c = checked(p);
    let mut t: Tree<u32> = Tree::new(&c, Dir::Download, 0).unwrap();
    let mut now = 0;
    for _ in 0..2000 {
        now += 1_000_000;
        t.enqueue(0, 1, FRAME, now).unwrap();
        t.enqueue(0, 2, FRAME, now).unwrap();
        t.enqueue(0, 3, FRAME, now).unwrap();
        while t.dequeue(now, &mut |_, _| {}).is_some() {}
    }
    let mut sent = [0u64; 2];
    for _ in 0..50 {
        now += 1_000_000;
        for leaf in 0..2 {
            for h in 0..3 {
                t.enqueue(leaf, h, FRAME, now).unwrap();
            }
        }
        while let Some((leaf, len)) = t.dequeue(now, &mut |_, _| {}) {
            sent[leaf as usize] += u64::from(len);
        }
    }
    assert!(
        sent[0].abs_diff(sent[1]) <= 2 * u64::from(FRAME),
        "{sent:?}"
    );
}

/// Three circuits of weights 1, 3, 4 under one node of `spec`, all
/// overloaded: each gets its weight's share of the node's 80 Mbit/s.
fn shares_under(spec: &str) -> Vec<u64> {
    let mut p = plan(100 * MBIT);
    node(&mut p, "n", None, 80 * MBIT, Some(1));
    p.nodes[0].scheduler = fairway_core::SchedSpec::parse(spec).unwrap();
    circuit(&mut p, "a", Some("n"), None, 80 * MBIT, Some(1));
    circuit(&mut p, "b", Some("n"), None, 80 * MBIT, Some(3));
    circuit(&mut p, "c", Some("n"), None, 80 * MBIT, Some(4));
    run(p, &[100 * MBIT, 100 * MBIT, 100 * MBIT], 4)
}

#[test]
fn a_nodes_scheduler_shares_by_weight_qfq_plus_drr_wf2q_plus() {
    for spec in [
        "qfq+",
        "drr",
        "wf2q+",
        "drr:quantum=1514",
        "wf2q++",
        "qfq",
        "s-kps",
    ] {
        let got = shares_under(spec);
        assert!(within(got[0], 10 * MBIT, 5), "{spec}: {got:?}");
        assert!(within(got[1], 30 * MBIT, 5), "{spec}: {got:?}");
        assert!(within(got[2], 40 * MBIT, 5), "{spec}: {got:?}");
    }
    // FIFO serves the children in turn, a frame each: equal shares.
    let got = shares_under("fifo");
    assert!(within(got[0], got[2], 5), "fifo: {got:?}");
}

#[test]
fn a_nodes_min_is_guaranteed_under_overload_of_a_sibling_subtree() {
    // Node "g" guarantees 30 Mbit/s to its subtree (its circuits have no
    // min of their own); "h" weighs 100 times more and is overloaded.
    let mut p = plan(100 * MBIT);
    node(&mut p, "g", None, 100 * MBIT, Some(1));
    p.nodes[0].rates = super::test_plan::rates(Some(30 * MBIT), 100 * MBIT);
    node(&mut p, "h", None, 100 * MBIT, Some(100));
    circuit(&mut p, "a", Some("g"), None, 100 * MBIT, Some(1));
    circuit(&mut p, "b", Some("g"), None, 100 * MBIT, Some(1));
    circuit(&mut p, "c", Some("h"), None, 100 * MBIT, Some(1));
    let got = run(p, &[100 * MBIT, 100 * MBIT, 200 * MBIT], 6);
    // 30 guaranteed plus 70/101 of the excess, split evenly in g.
    let g = 30 * MBIT + 70 * MBIT / 101;
    assert!(within(got[0] + got[1], g, 2), "{got:?}");
    assert!(within(got[0], g / 2, 5), "{got:?}");
    assert!(within(got[2], 100 * MBIT - g, 2), "{got:?}");
}

/// A frame with an identity, to compare two trees' choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pk {
    len: u32,
    id: u32,
}

impl fairway_core::Packet for Pk {
    fn len(&self) -> u32 {
        self.len
    }
}

/// A random plan: two nodes (the second under the first or the root),
/// circuits under the root or either node, with ceilings, some with a
/// guarantee, some with a weight.
fn random_plan(
    circuits: &[(u8, u8, u8, u8)],
    nested: bool,
    w0: Option<u32>,
    scheds: (usize, usize),
    node_mins: bool,
) -> Plan {
    const SPECS: [&str; 6] = ["qfq+", "drr", "wf2q+", "fifo", "drr:quantum=1514", "qfq"];
    let mut p = plan(100 * MBIT);
    node(&mut p, "n0", None, 60 * MBIT, w0);
    node(&mut p, "n1", nested.then_some("n0"), 30 * MBIT, Some(2));
    // Node mins small enough for the arrivals to take them into debt.
    for (n, (i, min)) in [(scheds.0, 4), (scheds.1, 2)].into_iter().enumerate() {
        p.nodes[n].scheduler = fairway_core::SchedSpec::parse(SPECS[i % SPECS.len()]).unwrap();
        if node_mins {
            let max = p.nodes[n].rates.download.max;
            p.nodes[n].rates = super::test_plan::rates(Some(min * MBIT), max);
        }
    }
    for (i, &(parent, max, min, weight)) in circuits.iter().enumerate() {
        let (parent, cap) = match parent % 3 {
            0 => (None, 100),
            1 => (Some("n0"), 60),
            _ => (Some("n1"), 30),
        };
        let max = (1 + u64::from(max) % cap) * MBIT / 4;
        // With node mins, at most 12 · 127.5 kbit/s: they fit in them.
        let unit = if node_mins { 500 } else { 20_000 };
        let min = (min % 3 == 0).then_some((u64::from(min) * unit).min(max));
        let weight = (weight % 3 == 0).then_some(1 + u32::from(weight % 7));
        circuit(&mut p, &format!("c{i}"), parent, min, max, weight);
    }
    p
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// The heap-driven selection picks exactly what the linear scan of
    /// the same rules picks (guarantees of nodes and circuits first,
    /// least recently served first; then the excess by each node's
    /// scheduler, random among the registry's, from the root down; ceilings
    /// everywhere), frame for frame, CoDel's drops included.
    #[test]
    fn the_heaps_choose_as_the_linear_scan(
        circuits in proptest::collection::vec((0u8..3, proptest::prelude::any::<u8>(), proptest::prelude::any::<u8>(), proptest::prelude::any::<u8>()), 1..12),
        nested: bool,
        w0 in proptest::option::of(1u32..5),
        scheds in (0usize..6, 0usize..6),
        node_mins: bool,
        arrivals in proptest::collection::vec((0usize..12, 60u32..1514, 0u32..4, 0u32..400), 1..600),
    ) {
        let c = checked(random_plan(&circuits, nested, w0, scheds, node_mins));
        let mut fast: Tree<Pk> = Tree::new(&c, Dir::Download, 0).unwrap();
        let mut slow: super::tree_reference::Tree<Pk> =
            super::tree_reference::Tree::new(&c, Dir::Download, 0).unwrap();
        let mut now = 0u64;
        let mut sent = 0;
        for (id, (leaf, len, flow, gap_us)) in arrivals.into_iter().enumerate() {
            now += u64::from(gap_us) * 1000;
            let leaf = (leaf % circuits.len()) as u32;
            let p = Pk { len, id: id as u32 };
            let hash = flow.wrapping_mul(0x4000_0000);
            let a = fast.enqueue(leaf, hash, p, now).map_err(|e| e.packet);
            let b = slow.enqueue(leaf, hash, p, now).map_err(|e| e.packet);
            proptest::prop_assert_eq!(a, b);
            loop {
                let (mut da, mut db) = (Vec::new(), Vec::new());
                let a = fast.dequeue(now, &mut |l, p| da.push((l, p)));
                let b = slow.dequeue(now, &mut |l, p| db.push((l, p)));
                proptest::prop_assert_eq!(a, b, "at {} ns after {} sent", now, sent);
                proptest::prop_assert_eq!(da, db);
                if a.is_none() {
                    break;
                }
                sent += 1;
            }
            // Nothing may go before the time the tree names.
            if let Some(t) = fast.ready_at() {
                proptest::prop_assert!(t > now);
            }
        }
        proptest::prop_assert!(sent > 0);
    }
}

/// A circuit's FQ-CoDel is set-associative (`LEAF_WAYS`): a sparse flow
/// whose home bucket is the bulk flow's takes another bucket of the set
/// and is sent next, not after the bulk flow's 18 queued frames (where
/// plain hashing of 64 buckets would put it).
#[test]
fn a_sparse_flow_hashing_to_the_bulk_flows_bucket_is_not_queued_behind_it() {
    let mut p = plan(1000 * MBIT);
    circuit(&mut p, "a", None, None, 100 * MBIT, None);
    let c = checked(p);
    let mut t: Tree<u32> = Tree::new(&c, Dir::Download, 0).unwrap();
    // Home bucket 4 of 64 for both (hash · 64 / 2^32).
    let (bulk, sparse) = (0x1000_0000, 0x1000_0001);
    for _ in 0..20 {
        t.enqueue(0, bulk, 1500, 0).unwrap();
    }
    // The next frame the circuit lets out, waiting for its rate.
    fn next(t: &mut Tree<u32>, now: &mut u64) -> u32 {
        loop {
            if let Some((_, len)) = t.dequeue(*now, &mut |_, _| panic!("no drop expected")) {
                return len;
            }
            *now += 100_000;
        }
    }
    let mut now = 0;
    assert_eq!(next(&mut t, &mut now), 1500);
    assert_eq!(next(&mut t, &mut now), 1500);
    t.enqueue(0, sparse, 100, now).unwrap();
    assert_eq!(next(&mut t, &mut now), 100);
}
