//! The in-place edit of a running tree against random changes of nodes
//! and circuits (added, removed, moved, a node under its former child,
//! rates and weights, the default class, each node's policy and min, and
//! reloads that change only policies, weights and mins): the tree stays
//! consistent (busy counts, children's lists and slots, eligibility
//! counts, heaps, tokens in the schedulers, timers), every frame is
//! sent, dropped or drained as removed, each flow's frames leave in
//! order, and an edited idle tree serves exactly as a tree built fresh
//! from the new plan.

use super::TreeEdit;
use crate::datapath::slots::arrange;
use crate::datapath::test_plan::{at, checked, circuit, node, plan, rates, rng};
use crate::datapath::tree::Tree;
use crate::diff::{diff, DefaultChange};
use crate::plan::{DefaultClass, Dir, Plan};
use crate::validate::Checked;
use fairway_core::Packet;
use proptest::prelude::*;
use std::collections::HashMap;

const MBIT: u64 = 1_000_000;
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pk {
    len: u32,
    id: u32,
    flow: u32,
}

impl Packet for Pk {
    fn len(&self) -> u32 {
        self.len
    }
}

/// The schedulers a random node gets.
const SPECS: [&str; 6] = ["qfq+", "drr", "wf2q+", "fifo", "drr:quantum=1514", "qfq"];

/// A random plan from `seed` with node policies and node mins from
/// `node_seed` ([`with_policies`]).
fn random_plan(seed: u64, node_seed: u64) -> Plan {
    with_policies(structure(seed), node_seed)
}

/// Each node of `p` a random scheduler from `seed`, some circuits
/// another weight and, most of the time, each node a min (8, 2 or 0.5 Mbit/s by depth, so that they usually fit
/// in their parents'); the mins are left out if the check refuses them.
fn with_policies(mut p: Plan, seed: u64) -> Plan {
    let mut rnd = rng(seed);
    let names: Vec<(String, Option<String>)> = p
        .nodes
        .iter()
        .map(|n| (n.name.clone(), n.parent.clone()))
        .collect();
    let depth = |mut n: Option<String>| {
        let mut d = 0;
        while let Some(k) = n {
            n = names.iter().find(|m| m.0 == k).and_then(|m| m.1.clone());
            d += 1;
        }
        d
    };
    let mins: Vec<Option<u64>> = names
        .iter()
        .map(|n| {
            let d = depth(n.1.clone());
            (rnd(4) != 0 && d < 3).then(|| (8 * MBIT) >> (2 * d))
        })
        .collect();
    for (n, min) in p.nodes.iter_mut().zip(&mins) {
        n.scheduler =
            fairway_core::SchedSpec::parse(SPECS[rnd(SPECS.len() as u64) as usize]).unwrap();
        n.rates = rates(*min, n.rates.download.max);
    }
    // Some circuits weigh otherwise (or take their guarantee's weight).
    for k in &mut p.circuits {
        match rnd(6) {
            0 => k.weight = None,
            1 => k.weight = Some(2),
            _ => {}
        }
    }
    if crate::validate::check(p.clone()).is_err() {
        for n in &mut p.nodes {
            n.rates = rates(None, n.rates.download.max);
        }
    }
    p
}

/// A random hierarchy from `seed`: some of nodes `n0..n5` (each under a
/// node of lower random rank, or the root), some of circuits `c0..c15`
/// under them, rates and weights from small sets (so that some stay the
/// same), a default class half the time.
fn structure(seed: u64) -> Plan {
    let mut rnd = rng(seed);
    let mut p = plan([50, 80][rnd(2) as usize] * MBIT);
    let mut rank: Vec<(u64, usize)> = (0..6).map(|i| (rnd(100), i)).collect();
    rank.sort_unstable();
    let mut nodes: Vec<String> = Vec::new();
    let mut maxes: Vec<u64> = Vec::new();
    for &(_, i) in &rank {
        if rnd(4) == 0 {
            continue;
        }
        let (parent, cap) = match rnd(nodes.len() as u64 + 1) as usize {
            0 => (None, 40 * MBIT),
            k => (Some(nodes[k - 1].clone()), maxes[k - 1]),
        };
        // Within the parent's max, as the check wants.
        let max = cap - rnd(2) * 5 * MBIT;
        maxes.push(max);
        let weight = Some([1, 2][rnd(2) as usize]);
        node(&mut p, &format!("n{i}"), parent.as_deref(), max, weight);
        nodes.push(format!("n{i}"));
    }
    let pick = |r: u64| match r as usize % (nodes.len() + 1) {
        0 => None,
        k => Some(nodes[k - 1].clone()),
    };
    for k in 0..16 {
        if rnd(10) < 3 {
            continue;
        }
        let parent = pick(rnd(100));
        let max = [2, 5][rnd(2) as usize] * MBIT;
        let min = [None, Some(100_000)][rnd(2) as usize];
        // Weights of the same order: weights by guarantee (100 kbit/s
        // against 1) make a served light child's pass a jump in its
        // parent's virtual time, and then which of two ties goes first
        // decides a share for long (see the idle test below).
        let weight = Some([1, 3][rnd(2) as usize]);
        circuit(
            &mut p,
            &format!("c{k}"),
            parent.as_deref(),
            min,
            max,
            weight,
        );
    }
    if rnd(2) == 0 {
        p.default_class = Some(DefaultClass {
            parent: pick(rnd(100)),
            rates: rates(None, [1, 3][rnd(2) as usize] * MBIT),
            at: at(),
        });
    }
    p
}

/// The edit from `old` (running) to `new`, and `new` arranged.
fn edit(old: &Checked, new: Plan) -> (TreeEdit<Pk>, Checked) {
    let new = checked(new);
    let mut d = diff(old, &new);
    let new = arrange(new, &mut d);
    let node_from: Vec<Option<u32>> = d.node_from.iter().map(|o| o.map(|i| i as u32)).collect();
    let mut leaf_from: Vec<Option<u32>> =
        d.circuit_from.iter().map(|o| o.map(|i| i as u32)).collect();
    if new.plan.default_class.is_some() {
        let kept = matches!(
            d.default_class,
            DefaultChange::Same | DefaultChange::Changed
        );
        leaf_from.push(kept.then_some(old.plan.circuits.len() as u32));
    }
    let e = TreeEdit::new(old, &new, &node_from, &leaf_from, Dir::Download).unwrap();
    (e, new)
}

/// The tree's bookkeeping is what its leaves' queues say: every live
/// node's busy count is the backlogged leaves below it; each parent's
/// list of children is the live nodes under it, by slot, and its
/// scheduler serves that many; a node is counted eligible exactly when
/// it is, waits for a token in its parent's heap exactly when it is
/// eligible without one, holds a token in its parent's scheduler exactly
/// when its flag says so, and is in its parent's guarantees exactly when
/// it or a node below is under its min; a closed bucket has a timer.
fn consistent(t: &Tree<Pk>) {
    let n = t.nodes.len();
    let mut live = vec![false; n];
    live[0] = true;
    for &i in &t.inner {
        assert!(!live[i as usize], "tree node {i} used twice");
        live[i as usize] = true;
    }
    for (l, leaf) in t.leaves.iter().enumerate() {
        let i = leaf.node as usize;
        assert!(!live[i], "tree node {i} used twice");
        live[i] = true;
        assert_eq!(t.nodes[i].leaf, l as u32);
    }
    for &f in &t.free {
        assert!(!live[f as usize], "free node {f} in use");
    }
    let mut busy = vec![0u32; n];
    for leaf in &t.leaves {
        if leaf.fq.is_empty() {
            continue;
        }
        let mut i = leaf.node;
        for _ in 0..=n {
            assert!(live[i as usize], "dead node {i} on a leaf's path");
            busy[i as usize] += 1;
            i = t.nodes[i as usize].parent;
            if i == NIL {
                break;
            }
        }
        assert_eq!(i, NIL, "a leaf's path does not end at the root");
    }
    let mut members = vec![(0usize, 0usize, 0u32, 0usize); n];
    for i in 1..n {
        if !live[i] {
            assert_eq!((t.ppos[i], t.gpos[i]), (NIL, NIL), "a free node in a heap");
            continue;
        }
        let node = &t.nodes[i];
        let p = node.parent as usize;
        assert_eq!(node.busy, busy[i], "node {i}'s busy count");
        assert_eq!(
            t.kids[p].get(node.slot as usize).map(|&id| t.kid(id)),
            Some(i),
            "node {i} at its slot in its parent's list"
        );
        let leaf = node.leaf != NIL;
        let eligible = node.open && node.busy > 0 && (leaf || node.elig > 0);
        assert_eq!(node.counted, eligible, "node {i} counted eligible");
        assert_eq!(
            t.ppos[i] != NIL,
            eligible && !node.token,
            "node {i} waiting for a token"
        );
        let s = t.scheds[p].as_ref().expect("an inner node's scheduler");
        assert_eq!(
            s.tokens(node.slot),
            u64::from(node.token),
            "node {i}'s tokens in its parent's scheduler"
        );
        let own = eligible && node.min.is_some() && node.min_open;
        let guaranteed = node.open && (own || !t.guaranteed[i].is_empty());
        assert_eq!(
            t.gpos[i] != NIL,
            guaranteed,
            "node {i} in its parent's guarantees"
        );
        members[p].0 += usize::from(t.ppos[i] != NIL);
        members[p].1 += usize::from(guaranteed);
        members[p].2 += u32::from(eligible);
        members[p].3 += 1;
        if !node.open {
            assert_ne!(t.mpos[i], NIL, "node {i} closed without a timer");
        }
        if !node.min_open {
            assert_ne!(
                t.npos[i], NIL,
                "node {i} under its min closed without a timer"
            );
        }
    }
    for i in 0..n {
        if live[i] && t.nodes[i].leaf == NIL {
            let m = members[i];
            assert_eq!(
                (
                    t.pending[i].len(),
                    t.guaranteed[i].len(),
                    t.nodes[i].elig,
                    t.kids[i].len()
                ),
                m,
                "node {i}'s heaps, count and list hold other children"
            );
            let s = t.scheds[i].as_ref().expect("an inner node's scheduler");
            let w = s.weights();
            assert!(
                w.len() >= m.3 && w[..m.3].iter().all(Option::is_some),
                "node {i}'s scheduler serves its {} children: {w:?}",
                m.3
            );
            assert!(s.room() as usize >= m.3, "node {i}'s scheduler's room");
            assert!(
                t.pending[i].capacity() >= s.room() as usize,
                "node {i}'s heap has its scheduler's room"
            );
        }
    }
}

/// A leaf's name in plan `c`.
fn name(c: &Checked, leaf: u32) -> String {
    c.plan
        .circuits
        .get(leaf as usize)
        .map_or("default".into(), |k| k.id.clone())
}

/// Random frames through a tree edited by the plans `plan` makes from
/// `seeds` (a new hierarchy unless the third is true): the tree stays
/// consistent, no frame is lost uncounted or reordered within its flow.
fn edits(
    plan: impl Fn(u64, u64) -> Plan,
    seeds: &[(u64, u64, bool)],
    arrivals: &[(u16, u32, u32, u32)],
) -> Result<(), TestCaseError> {
    let mut c = checked(plan(seeds[0].0, seeds[0].1));
    let mut shape = seeds[0].0;
    let mut t: Tree<Pk> = Tree::new(&c, Dir::Download, 0).unwrap();
    let (mut now, mut id) = (0u64, 0u32);
    let mut fate: HashMap<u32, &str> = HashMap::new();
    let mut last: HashMap<(String, u32), u32> = HashMap::new();
    let chunk = arrivals.len() / seeds.len() + 1;
    for (k, part) in arrivals.chunks(chunk).enumerate() {
        if k > 0 {
            // A frame in every leaf, none sent yet: the edit meets
            // busy leaves with open buckets (in the heaps).
            now += 50_000_000;
            for leaf in 0..t.leaves() as u32 {
                id += 1;
                let p = Pk {
                    len: 100,
                    id,
                    flow: leaf * 4,
                };
                if let Ok(Some(v)) = t.enqueue(leaf, 0, p, now) {
                    fate.insert(v.id, "overflow");
                }
            }
            // Now and then the same hierarchy with other policies
            // and node mins.
            let (seed, nodes, same) = seeds[k];
            if !same {
                shape = seed;
            }
            let (mut e, next) = edit(&c, plan(shape, nodes));
            t.edit(&mut e, now, |_, p| {
                fate.insert(p.id, "removed");
            });
            consistent(&t);
            c = next;
        }
        for &(leaf, len, flow, gap_us) in part {
            now += u64::from(gap_us) * 1000;
            if t.leaves() == 0 {
                continue;
            }
            let leaf = u32::from(leaf) % t.leaves() as u32;
            id += 1;
            let p = Pk {
                len,
                id,
                flow: leaf * 4 + flow,
            };
            match t.enqueue(leaf, flow.wrapping_mul(0x4000_0000), p, now) {
                Ok(Some(v)) => {
                    fate.insert(v.id, "overflow");
                }
                Ok(None) => {}
                Err(e) => {
                    fate.insert(e.packet.id, "refused");
                }
            }
            let mut dropped = Vec::new();
            while let Some((l, p)) = t.dequeue(now, &mut |_, p| dropped.push(p)) {
                fate.insert(p.id, "sent");
                let key = (name(&c, l), p.flow);
                let prev = last.insert(key, p.id);
                prop_assert!(prev.is_none_or(|q| q < p.id), "flow reordered");
            }
            for p in dropped {
                fate.insert(p.id, "codel");
            }
        }
        consistent(&t);
    }
    // Everything left goes in the end.
    while let Some(at) = t.ready_at() {
        now = now.max(at) + 1_000_000;
        while let Some((_, p)) = t.dequeue(now, &mut |_, p| {
            fate.insert(p.id, "codel");
        }) {
            fate.insert(p.id, "sent");
        }
    }
    consistent(&t);
    prop_assert_eq!(fate.len() as u32, id, "every frame has a fate");
    Ok(())
}

/// `p` with policy `spec` at every node.
fn one_policy(mut p: Plan, spec: &str) -> Plan {
    for n in &mut p.nodes {
        n.scheduler = fairway_core::SchedSpec::parse(spec).unwrap();
    }
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random plans, frames and edits: the tree stays consistent, no
    /// frame is lost uncounted or reordered within its flow.
    #[test]
    fn edits_keep_the_tree_consistent_and_lose_nothing(
        seeds in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<bool>()), 1..6),
        arrivals in proptest::collection::vec((any::<u16>(), 60u32..1514, 0u32..3, 0u32..300), 20..300),
    ) {
        edits(random_plan, &seeds, &arrivals)?;
    }

    /// The same with one policy for every node (each run its own), so
    /// that a parent keeps its scheduler whenever its children fit its
    /// room: children added, removed, moved in and out, reweighted and
    /// shifted into freed slots under a kept parent, and parents whose
    /// children outgrow (or shrink below) their room regrouped.
    #[test]
    fn edits_under_kept_parents_keep_the_tree_consistent(
        spec in 0..SPECS.len(),
        seeds in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<bool>()), 2..6),
        arrivals in proptest::collection::vec((any::<u16>(), 60u32..1514, 0u32..3, 0u32..300), 20..300),
    ) {
        let plan = |seed: u64, _: u64| one_policy(structure(seed), SPECS[spec]);
        edits(plan, &seeds, &arrivals)?;
    }

    /// An idle tree edited to a new plan (or to the same hierarchy with
    /// other policies and node mins), once its buckets have filled again,
    /// serves as a tree built fresh from that plan: each leaf's bytes
    /// under overload are the same (the edited tree's node numbers are
    /// not a fresh tree's, but no choice depends on them).
    #[test]
    fn an_edited_idle_tree_serves_as_a_fresh_one(a: (u64, u64), b: (u64, u64), same: bool) {
        let old = checked(random_plan(a.0, a.1));
        let mut t: Tree<Pk> = Tree::new(&old, Dir::Download, 0).unwrap();
        let start = 1_000_000_000;
        let (mut e, new) = edit(&old, random_plan(if same { a.0 } else { b.0 }, b.1));
        t.edit(&mut e, start / 2, |_, _| {});
        consistent(&t);
        let mut f: Tree<Pk> = Tree::new(&new, Dir::Download, start).unwrap();
        prop_assert_eq!(t.leaves(), f.leaves());
        // Each parent's scheduler (kept or new) weighs its children as
        // a fresh one does.
        let served = |tree: &Tree<Pk>, n: usize| {
            let s = tree.scheds[n].as_ref().expect("an inner node's scheduler");
            s.weights()[..tree.kids[n].len()].to_vec()
        };
        for (a, b) in std::iter::once((0, 0)).chain(t.inner.iter().zip(&f.inner).map(|(&a, &b)| (a, b))) {
            prop_assert_eq!(served(&t, a as usize), served(&f, b as usize), "weights by slot");
        }
        let mut got = [vec![0u64; t.leaves()], vec![0u64; t.leaves()]];
        let mut now = start;
        let mut id = 0;
        while now < start + 1_000_000_000 {
            now += 100_000;
            for leaf in 0..t.leaves() as u32 {
                // 12 Mbit/s offered to each leaf: above every max.
                for flow in 0..2 {
                    id += 1;
                    let p = Pk { len: 750, id, flow };
                    let _ = t.enqueue(leaf, flow, p, now);
                    let _ = f.enqueue(leaf, flow, p, now);
                }
            }
            for (k, tree) in [&mut t, &mut f].into_iter().enumerate() {
                while let Some((l, p)) = tree.dequeue(now, &mut |_, _| {}) {
                    got[k][l as usize] += u64::from(p.len);
                }
            }
        }
        prop_assert_eq!(&got[0], &got[1], "bytes per leaf, edited against fresh");
    }
}
