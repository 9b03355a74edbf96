//! Trace replay (`fairway policy run --trace … --departures …`, the
//! library's `replay`) against a brute-force PIFO-tree model, departure
//! by departure, for the trees the PIFO-tree artifacts feed traces
//! through: WFQ (one STFQ node), HPFQ (STFQ over STFQ), strict priority
//! (over WFQ classes too) and round robin (equal priorities: a child
//! served goes to the back). The departure file is what the tree must
//! produce; this is the check.
//!
//! The model is written from the documented semantics
//! (docs/policies.md, "Exact semantics worth knowing"), not from the
//! tree's code: every node holds a list of `(bucket, arrival order,
//! child)` and serves the smallest by a linear scan; a child is in its
//! parent's list exactly while it has packets below it. STFQ: a child
//! inserted into its parent gets start tag `S = max(V, F)`; when it is
//! served a packet of `len` bytes, `F = S + len·2^16/weight` and
//! `V = max(V, S)`; its rank is `S >> stfq_rank_shift(max_len)`. Strict
//! priority: the rank is the child's priority. A rank `r` goes to bucket
//! `r / granularity`, equal buckets in insertion order. The link sends
//! one packet at a time at its rate; arrivals up to now enter before the
//! link picks. Deliberately broken models (weights ignored, a virtual
//! time that never moves) are shown to disagree with the replay on the
//! same traces, so the comparison can fail.

use fairway_core::policy::{stfq_rank_shift, tx_ns, Transaction, TreeSpec};
use fairway_eval::policy::trace::{replay, Arrival, Departure};
use fairway_policy_file::{parse, PolicyFile};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

/// 100 Mbit/s.
const LINK: u64 = 12_500_000;

/// A way the model is broken on purpose, to show the check can fail.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Every weight taken as 1.
    IgnoreWeights,
    /// `V` never moves: a child that was idle comes back at its old tags.
    FrozenVirtualTime,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stfq,
    Priority,
}

/// The brute-force PIFO tree: entities `0..nodes` are nodes, then flows.
struct Model {
    nodes: usize,
    parent: Vec<Option<usize>>,
    weight: Vec<u64>,
    priority: Vec<u64>,
    kind: Vec<Kind>,
    granularity: Vec<u64>,
    shift: u32,
    /// Per node: `(bucket, insertion number, child)`.
    pifo: Vec<Vec<(u64, u64, usize)>>,
    start: Vec<u64>,
    finish: Vec<u64>,
    vtime: Vec<u64>,
    /// Packets below each entity.
    backlog: Vec<usize>,
    /// Per flow: arrival indices.
    packets: Vec<VecDeque<usize>>,
    inserted: u64,
    fault: Fault,
}

impl Model {
    fn new(spec: &TreeSpec, fault: Fault) -> Self {
        let nodes = spec.nodes.len();
        let all = nodes + spec.flows.len();
        let kind = spec
            .nodes
            .iter()
            .map(|n| match n.transaction {
                Transaction::Stfq => Kind::Stfq,
                Transaction::StrictPriority => Kind::Priority,
                ref t => panic!("the model has no {t:?}"),
            })
            .collect();
        let params: Vec<_> = spec
            .nodes
            .iter()
            .map(|n| (n.parent.map(|p| p as usize), n.params))
            .chain(
                spec.flows
                    .iter()
                    .map(|f| (Some(f.parent as usize), f.params)),
            )
            .collect();
        Self {
            nodes,
            parent: params.iter().map(|p| p.0).collect(),
            weight: params.iter().map(|p| u64::from(p.1.weight)).collect(),
            priority: params.iter().map(|p| p.1.priority).collect(),
            kind,
            granularity: spec.nodes.iter().map(|n| n.queue.granularity).collect(),
            shift: stfq_rank_shift(spec.max_packet_len),
            pifo: vec![Vec::new(); nodes],
            start: vec![0; all],
            finish: vec![0; all],
            vtime: vec![0; nodes],
            backlog: vec![0; all],
            packets: vec![VecDeque::new(); spec.flows.len()],
            inserted: 0,
            fault,
        }
    }

    fn weight(&self, e: usize) -> u64 {
        match self.fault {
            Fault::IgnoreWeights => 1,
            _ => self.weight[e],
        }
    }

    /// Puts `e` into its parent's list with the rank the parent gives it.
    fn insert(&mut self, e: usize) {
        let p = self.parent[e].expect("the root has no parent");
        let rank = match self.kind[p] {
            Kind::Stfq => {
                self.start[e] = self.vtime[p].max(self.finish[e]);
                self.start[e] >> self.shift
            }
            Kind::Priority => self.priority[e],
        };
        self.pifo[p].push((rank / self.granularity[p], self.inserted, e));
        self.inserted += 1;
    }

    fn enqueue(&mut self, flow: usize, index: usize) {
        self.packets[flow].push_back(index);
        let mut e = Some(self.nodes + flow);
        let mut joining = true;
        while let Some(x) = e {
            // Only the entities that were empty join their parent.
            let was_empty = self.backlog[x] == 0;
            self.backlog[x] += 1;
            if joining && was_empty && self.parent[x].is_some() {
                self.insert(x);
            } else {
                joining = false;
            }
            e = self.parent[x];
        }
    }

    /// The arrival index of the packet the link sends next.
    fn dequeue(&mut self, arrivals: &[Arrival]) -> Option<usize> {
        let root = (0..self.nodes).find(|&n| self.parent[n].is_none())?;
        if self.backlog[root] == 0 {
            return None;
        }
        let mut path = Vec::new();
        let mut n = root;
        loop {
            let list = &mut self.pifo[n];
            let i = (0..list.len()).min_by_key(|&i| (list[i].0, list[i].1))?;
            let (_, _, c) = list.remove(i);
            path.push((n, c));
            if c >= self.nodes {
                break;
            }
            n = c;
        }
        let flow = path.last()?.1 - self.nodes;
        let index = self.packets[flow].pop_front()?;
        let len = u64::from(arrivals[index].len);
        for &(p, c) in path.iter().rev() {
            self.backlog[c] -= 1;
            if self.kind[p] == Kind::Stfq {
                self.finish[c] = self.start[c] + len * 65_536 / self.weight(c);
                if self.fault != Fault::FrozenVirtualTime {
                    self.vtime[p] = self.vtime[p].max(self.start[c]);
                }
            }
            if self.backlog[c] > 0 {
                self.insert(c);
            }
        }
        self.backlog[root] -= 1;
        Some(index)
    }
}

/// The model's departures on a link of [`LINK`].
fn model(spec: &TreeSpec, arrivals: &[Arrival], fault: Fault) -> Vec<Departure> {
    let mut m = Model::new(spec, fault);
    let (mut now, mut next, mut out) = (0u64, 0usize, Vec::new());
    loop {
        while next < arrivals.len() && arrivals[next].time_ns <= now {
            m.enqueue(arrivals[next].flow as usize, next);
            next += 1;
        }
        if let Some(i) = m.dequeue(arrivals) {
            let a = arrivals[i];
            out.push(Departure {
                time_ns: now,
                flow: a.flow,
                len: a.len,
                queueing_delay_ns: now - a.time_ns,
            });
            now += tx_ns(a.len, LINK);
        } else if next < arrivals.len() {
            now = arrivals[next].time_ns;
        } else {
            return out;
        }
    }
}

fn replayed(p: &PolicyFile, arrivals: &[Arrival]) -> Vec<Departure> {
    let mut out = Vec::new();
    let s = replay(p, LINK, arrivals.iter().copied(), |d| out.push(d)).unwrap();
    assert_eq!(
        (s.offered, s.departed),
        (arrivals.len() as u64, arrivals.len() as u64)
    );
    out
}

/// Bursts faster than the link with idle gaps between them (so that
/// flows go idle and come back, where STFQ's virtual time matters).
fn trace(seed: u64, n: usize, flows: u32, len: Option<u32>) -> Vec<Arrival> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            t += if rng.random_range(0..10) == 0 {
                rng.random_range(100_000..400_000)
            } else {
                rng.random_range(0..30_000)
            };
            Arrival {
                time_ns: t,
                flow: rng.random_range(0..flows),
                len: len.unwrap_or_else(|| rng.random_range(64..=1500)),
            }
        })
        .collect()
}

fn example(name: &str) -> PolicyFile {
    let path = format!(
        "{}/../../examples/policies/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    fairway_policy_file::load(&path).unwrap()
}

/// One STFQ node over `weights.len()` flows, with `queue` (a TOML
/// inline table) or the default.
fn wfq(weights: &[u32], queue: Option<&str>) -> PolicyFile {
    let mut text = String::from("[[node]]\nname = \"root\"\npolicy = \"stfq\"\n");
    if let Some(q) = queue {
        text += &format!("queue = {q}\n");
    }
    for w in weights {
        text += &format!("[[flow]]\nparent = \"root\"\nweight = {w}\n");
    }
    parse(&text, "wfq.toml").unwrap()
}

/// Strict priority over two WFQ classes and a lone flow (the PIFO
/// paper's "strict over WFQ").
const STRICT_OVER_WFQ: &str = "[[node]]\nname = \"root\"\npolicy = \"strict-priority\"\n\
    [[node]]\nname = \"gold\"\nparent = \"root\"\npolicy = \"stfq\"\npriority = 1\n\
    [[node]]\nname = \"bronze\"\nparent = \"root\"\npolicy = \"stfq\"\npriority = 2\n\
    [[flow]]\nname = \"control\"\nparent = \"root\"\npriority = 0\n\
    [[flow]]\nname = \"g1\"\nparent = \"gold\"\nweight = 1\n\
    [[flow]]\nname = \"g3\"\nparent = \"gold\"\nweight = 3\n\
    [[flow]]\nname = \"b1\"\nparent = \"bronze\"\nweight = 2\n\
    [[flow]]\nname = \"b2\"\nparent = \"bronze\"\nweight = 5\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// WFQ: weights drawn, the default queue (cFFS, buckets of 2^15 tag
    /// units) and an exact heap.
    #[test]
    fn wfq_departures_are_the_model_s(
        seed in any::<u64>(),
        weights in prop::collection::vec(1u32..=16, 2..6),
        exact in any::<bool>(),
    ) {
        let q = exact.then_some("{ kind = \"binary-heap\", granularity = 1 }");
        let p = wfq(&weights, q);
        let arr = trace(seed, 300, weights.len() as u32, None);
        prop_assert_eq!(replayed(&p, &arr), model(&p.spec, &arr, Fault::None));
    }

    /// HPFQ: the shipped two-level example.
    #[test]
    fn hpfq_departures_are_the_model_s(seed in any::<u64>()) {
        let p = example("hpfq.toml");
        let arr = trace(seed, 300, p.spec.flows.len() as u32, None);
        prop_assert_eq!(replayed(&p, &arr), model(&p.spec, &arr, Fault::None));
    }

    /// Strict priority, alone (the shipped example) and over WFQ classes.
    #[test]
    fn strict_priority_departures_are_the_model_s(seed in any::<u64>()) {
        for p in [example("strict-priority.toml"), parse(STRICT_OVER_WFQ, "s.toml").unwrap()] {
            let arr = trace(seed, 300, p.spec.flows.len() as u32, None);
            prop_assert_eq!(replayed(&p, &arr), model(&p.spec, &arr, Fault::None));
        }
    }
}

/// Round robin: one priority for every child, so a child served goes
/// behind the others; checked against the model and against a literal
/// cycle over the backlogged flows.
#[test]
fn round_robin_departures_are_the_model_s_and_cycle() {
    let text = "[[node]]\nname = \"root\"\npolicy = \"strict-priority\"\n\
        [[flow]]\nparent = \"root\"\ncount = 4\n";
    let p = parse(text, "rr.toml").unwrap();
    for seed in 0..8 {
        let arr = trace(seed, 400, 4, None);
        let got = replayed(&p, &arr);
        assert_eq!(got, model(&p.spec, &arr, Fault::None), "seed {seed}");
        assert_eq!(got, cycle(&arr, 4), "seed {seed}");
    }
}

/// A literal round robin: flows join the back of the cycle when they
/// get a packet, and go to the back after each packet sent.
fn cycle(arrivals: &[Arrival], flows: usize) -> Vec<Departure> {
    let mut q = vec![VecDeque::new(); flows];
    let mut ring: VecDeque<usize> = VecDeque::new();
    let (mut now, mut next, mut out) = (0u64, 0usize, Vec::new());
    loop {
        while next < arrivals.len() && arrivals[next].time_ns <= now {
            let f = arrivals[next].flow as usize;
            if q[f].is_empty() {
                ring.push_back(f);
            }
            q[f].push_back(next);
            next += 1;
        }
        if let Some(f) = ring.pop_front() {
            let a = arrivals[q[f].pop_front().unwrap_or_default()];
            if !q[f].is_empty() {
                ring.push_back(f);
            }
            out.push(Departure {
                time_ns: now,
                flow: a.flow,
                len: a.len,
                queueing_delay_ns: now - a.time_ns,
            });
            now += tx_ns(a.len, LINK);
        } else if next < arrivals.len() {
            now = arrivals[next].time_ns;
        } else {
            return out;
        }
    }
}

/// The comparison can fail: a model that ignores weights, or whose
/// virtual time never moves, disagrees with the replay on these traces.
#[test]
fn broken_models_are_told_apart() {
    let p = wfq(
        &[1, 4, 9],
        Some("{ kind = \"binary-heap\", granularity = 1 }"),
    );
    let h = example("hpfq.toml");
    for seed in 0..4 {
        let arr = trace(seed, 300, 3, None);
        let got = replayed(&p, &arr);
        assert_eq!(got, model(&p.spec, &arr, Fault::None), "seed {seed}");
        assert_ne!(
            got,
            model(&p.spec, &arr, Fault::IgnoreWeights),
            "seed {seed}"
        );
        assert_ne!(
            got,
            model(&p.spec, &arr, Fault::FrozenVirtualTime),
            "seed {seed}"
        );
        let arr = trace(seed, 300, h.spec.flows.len() as u32, None);
        let got = replayed(&h, &arr);
        assert_ne!(
            got,
            model(&h.spec, &arr, Fault::IgnoreWeights),
            "seed {seed}"
        );
        assert_ne!(
            got,
            model(&h.spec, &arr, Fault::FrozenVirtualTime),
            "seed {seed}"
        );
    }
    // And a WFQ is not a round robin on the same trace.
    let arr = trace(9, 300, 3, Some(1000));
    assert_ne!(replayed(&p, &arr), cycle(&arr, 3));
}
