//! The check behind `fairway shape --check`: every rule a plan must meet
//! before it can shape, each violation one [`ConfigError`] at the line
//! that causes it, all of them collected.
//!
//! - counts within [`crate::limits`]; names of nodes, ids of circuits and
//!   of devices unique;
//! - every parent a node, no cycle among nodes, no node deeper than
//!   [`MAX_DEPTH`]; every circuit a device or rule names defined;
//! - per direction, `min <= max` of every node, circuit and default class;
//! - a child's max at most its parent's max (the link's rate for the
//!   root's children, when `[interfaces]` gives it); LibreQoS lowers such
//!   a max silently, fairway refuses it;
//! - the guarantees below a parent fit in it: the mins of its children
//!   (a node without a min counts the sum of its own children's) sum to
//!   at most the parent's min if it has one, else its max (the link's
//!   rate for the root). The min when given, because a parent cannot
//!   pass on more than it is guaranteed itself; the max otherwise,
//!   because that is all it can ever send;
//! - the weights by which a parent's children share its excess fit its
//!   scheduler ([`crate::share`]);
//! - devices of different circuits have disjoint prefixes and distinct
//!   MACs, so that every address and MAC classifies into one circuit.
//!   Rules may overlap anything: they are tried first, in order.

use crate::error::{ConfigError, Problem};
use crate::fast_hash::{map_with_capacity, Map};
use crate::limits::{MAX_CIRCUITS, MAX_DEPTH, MAX_DEVICES, MAX_NODES, MAX_RULES};
use crate::loc::Loc;
use crate::on_two::on_two;
use crate::plan::{Dir, Plan, Rates};
use ipnet::IpNet;

/// A child's parent: the root (the link) or a node's index.
pub type Parent = Option<usize>;

/// A plan that passed the check, its names resolved to indices.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The plan.
    pub plan: Plan,
    /// Each node's parent.
    pub node_parent: Vec<Parent>,
    /// Each node's depth (the root's children are at 1).
    pub node_depth: Vec<usize>,
    /// Each circuit's parent.
    pub circuit_parent: Vec<Parent>,
    /// Each device's circuit.
    pub device_circuit: Vec<usize>,
    /// Each rule's circuit.
    pub rule_circuit: Vec<usize>,
    /// The default class's parent.
    pub default_parent: Parent,
    /// Each node's guarantee per direction (download, upload): its min,
    /// or the sum of its children's.
    pub node_min: Vec<[u64; 2]>,
}

/// Checks `plan`; all its problems, or the plan with its names resolved.
pub fn check(plan: Plan) -> Result<Checked, Vec<ConfigError>> {
    let mut errors = Vec::new();
    // The devices' names (the most) on a second thread; their problems
    // follow the circuits', as when checked in turn.
    let ((nodes, circuits), device_errors) = on_two(
        || {
            counts(&plan, &mut errors);
            let nodes = unique(
                plan.nodes.iter().map(|n| (&n.name, &n.at)),
                "node",
                &mut errors,
            );
            let circuits = unique(
                plan.circuits.iter().map(|c| (&c.id, &c.at)),
                "circuit",
                &mut errors,
            );
            (nodes, circuits)
        },
        || {
            let mut e = Vec::new();
            unique(
                plan.devices.iter().map(|d| (&d.id, &d.at)),
                "device",
                &mut e,
            );
            e
        },
    );
    errors.extend(device_errors);
    // `of` names the child (`circuit "c1"`), built only for a problem:
    // most of 10,000 circuits have none.
    let mut resolve = |of: Of<'_>, parent: &Option<String>, at: &Loc| match parent {
        None => Some(None),
        Some(p) => match nodes.get(p.as_str()) {
            Some(&i) => Some(Some(i)),
            None if plan.left_out.contains(p) => None,
            None => {
                let problem = Problem::UnknownParent {
                    of: of.to_string(),
                    parent: p.clone(),
                };
                errors.push(ConfigError::new(at.clone(), problem));
                None
            }
        },
    };
    let node_parent: Vec<Option<Parent>> = plan
        .nodes
        .iter()
        .map(|n| resolve(Of("node", Some(&n.name)), &n.parent, &n.at))
        .collect();
    let circuit_parent: Vec<Option<Parent>> = plan
        .circuits
        .iter()
        .map(|c| resolve(Of("circuit", Some(&c.id)), &c.parent, &c.at))
        .collect();
    let default_parent = plan
        .default_class
        .as_ref()
        .map(|d| resolve(Of("default_class", None), &d.parent, &d.at));
    let mut find = |of: Of<'_>, id: &str, at: &Loc| {
        let i = circuits.get(id).copied();
        if i.is_none() && !plan.left_out.iter().any(|l| l == id) {
            let problem = Problem::UnknownCircuit {
                of: of.to_string(),
                circuit: id.to_string(),
            };
            errors.push(ConfigError::new(at.clone(), problem));
        }
        i
    };
    let device_circuit: Vec<Option<usize>> = plan
        .devices
        .iter()
        .map(|d| find(Of("device", Some(&d.id)), &d.circuit, &d.at))
        .collect();
    let rule_circuit: Vec<Option<usize>> = plan
        .rules
        .iter()
        .map(|r| find(Of("rule", None), &r.circuit, &r.at))
        .collect();
    min_below_max(&plan, &mut errors);
    let flat: Vec<Parent> = node_parent.iter().map(|p| p.flatten()).collect();
    let before = errors.len();
    let node_depth = depths(&plan, &flat, &mut errors);
    let cyclic = errors[before..]
        .iter()
        .any(|e| matches!(*e.problem, Problem::Cycle(_)));
    let tree = Tree {
        node_parent: &node_parent,
        circuit_parent: &circuit_parent,
        default_parent,
        depth: &node_depth,
    };
    // The addresses on a second thread, their problems before the sums'.
    let ((node_min, rate_errors), address_errors) = on_two(
        || {
            let mut e = Vec::new();
            // Sums need a tree: not where nodes form a cycle.
            let node_min = if cyclic {
                Vec::new()
            } else {
                tree_rates(&plan, &tree, &mut e)
            };
            (node_min, e)
        },
        || {
            let mut e = Vec::new();
            addresses(&plan, &device_circuit, &mut e);
            e
        },
    );
    errors.extend(address_errors);
    errors.extend(rate_errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let resolved = |v: Vec<Option<Parent>>| v.into_iter().map(Option::flatten).collect();
    Ok(Checked {
        node_parent: flat,
        node_depth,
        circuit_parent: resolved(circuit_parent),
        device_circuit: device_circuit
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect(),
        rule_circuit: rule_circuit
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect(),
        default_parent: default_parent.flatten().flatten(),
        node_min,
        plan,
    })
}

/// What a problem is about: a kind and its name (`circuit "c1"`) or the
/// kind alone (`default_class`), written out only for a problem.
#[derive(Clone, Copy)]
struct Of<'a>(&'static str, Option<&'a str>);

impl std::fmt::Display for Of<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(name) => write!(f, "{} {name:?}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// Parents as resolved: `None` where a name did not resolve (that child
/// is left out of the sums; its error is already reported).
struct Tree<'a> {
    node_parent: &'a [Option<Parent>],
    circuit_parent: &'a [Option<Parent>],
    /// Outer: a default class exists; inner: its parent resolved.
    default_parent: Option<Option<Parent>>,
    depth: &'a [usize],
}

fn counts(plan: &Plan, errors: &mut Vec<ConfigError>) {
    let limits = [
        (
            "nodes",
            plan.nodes.len(),
            MAX_NODES,
            plan.nodes.get(MAX_NODES).map(|n| &n.at),
        ),
        (
            "circuits",
            plan.circuits.len(),
            MAX_CIRCUITS,
            plan.circuits.get(MAX_CIRCUITS).map(|c| &c.at),
        ),
        (
            "devices",
            plan.devices.len(),
            MAX_DEVICES,
            plan.devices.get(MAX_DEVICES).map(|d| &d.at),
        ),
        (
            "rules",
            plan.rules.len(),
            MAX_RULES,
            plan.rules.get(MAX_RULES).map(|r| &r.at),
        ),
    ];
    for (what, n, limit, at) in limits {
        if let (true, Some(at)) = (n > limit, at) {
            errors.push(ConfigError::new(
                at.clone(),
                Problem::TooMany { what, limit },
            ));
        }
    }
}

/// Names to indices; a [`Problem::Duplicate`] for each name seen before.
fn unique<'p>(
    items: impl Iterator<Item = (&'p String, &'p Loc)>,
    what: &'static str,
    errors: &mut Vec<ConfigError>,
) -> Map<&'p str, usize> {
    // Sized once for the items (already held): no rehash on the way.
    let n = items.size_hint().0;
    let mut seen: Map<&str, usize> = map_with_capacity(n);
    let mut first: Vec<&Loc> = Vec::with_capacity(n);
    for (i, (name, at)) in items.enumerate() {
        first.push(at);
        if let Some(&j) = seen.get(name.as_str()) {
            let problem = Problem::Duplicate {
                what,
                name: name.clone(),
                first: first[j].clone(),
            };
            errors.push(ConfigError::new(at.clone(), problem));
        } else {
            seen.insert(name, i);
        }
    }
    seen
}

fn min_below_max(plan: &Plan, errors: &mut Vec<ConfigError>) {
    let nodes = plan
        .nodes
        .iter()
        .map(|n| (Of("node", Some(&n.name)), &n.rates, &n.at));
    let circuits = plan
        .circuits
        .iter()
        .map(|c| (Of("circuit", Some(&c.id)), &c.rates, &c.at));
    let default = plan
        .default_class
        .iter()
        .map(|d| (Of("default_class", None), &d.rates, &d.at));
    for (of, rates, at) in nodes.chain(circuits).chain(default) {
        for dir in Dir::BOTH {
            let b = rates.get(dir);
            if let Some(min) = b.min.filter(|&m| m > b.max) {
                let problem = Problem::MinAboveMax {
                    of: of.to_string(),
                    dir: dir.name(),
                    min,
                    max: b.max,
                };
                errors.push(ConfigError::new(at.clone(), problem));
            }
        }
    }
}

/// Each node's depth; a [`Problem::Cycle`] for each cycle (once, at its
/// first node in the file), [`Problem::TooDeep`] past [`MAX_DEPTH`].
fn depths(plan: &Plan, parent: &[Parent], errors: &mut Vec<ConfigError>) -> Vec<usize> {
    const UNKNOWN: usize = 0;
    const VISITING: usize = usize::MAX;
    let mut depth = vec![UNKNOWN; parent.len()];
    for start in 0..parent.len() {
        let mut path = Vec::new();
        let mut at = Some(start);
        // Walk up to a node whose depth is known (or the root).
        while let Some(i) = at {
            if depth[i] != UNKNOWN {
                break;
            }
            depth[i] = VISITING;
            path.push(i);
            at = parent[i];
            if let Some(j) = at.filter(|&j| depth[j] == VISITING) {
                let from = path.iter().position(|&k| k == j).unwrap_or(0);
                let mut names: Vec<String> = path[from..]
                    .iter()
                    .map(|&k| plan.nodes[k].name.clone())
                    .collect();
                names.push(plan.nodes[j].name.clone());
                let first = path[from..].iter().copied().min().unwrap_or(j);
                errors.push(ConfigError::new(
                    plan.nodes[first].at.clone(),
                    Problem::Cycle(names),
                ));
                for &k in &path[from..] {
                    depth[k] = 1; // cut the cycle: a depth, so the walk ends
                }
                path.truncate(from);
                break;
            }
        }
        let mut d = at.map_or(0, |i| depth[i]);
        for &i in path.iter().rev() {
            d += 1;
            depth[i] = d;
            if d == MAX_DEPTH + 1 {
                let problem = Problem::TooDeep {
                    node: plan.nodes[i].name.clone(),
                    depth: d,
                };
                errors.push(ConfigError::new(plan.nodes[i].at.clone(), problem));
            }
        }
    }
    depth
}

/// Disjoint prefixes and distinct MACs between circuits.
fn addresses(plan: &Plan, circuit: &[Option<usize>], errors: &mut Vec<ConfigError>) {
    let mut macs: Map<_, (usize, &Loc)> = Map::default();
    let mut nets: Vec<(IpNet, usize, &Loc)> = Vec::new();
    for (d, c) in plan.devices.iter().zip(circuit) {
        let Some(c) = *c else { continue };
        nets.extend(d.prefixes.iter().map(|p| (p.net, c, &p.at)));
        if let Some(mac) = d.mac {
            match macs.get(&mac) {
                Some(&(other, other_at)) if other != c => {
                    let problem = Problem::MacReused {
                        mac: mac.to_string(),
                        circuit: plan.circuits[c].id.clone(),
                        other_circuit: plan.circuits[other].id.clone(),
                        other_at: other_at.clone(),
                    };
                    errors.push(ConfigError::new(d.at.clone(), problem));
                }
                Some(_) => {}
                None => {
                    macs.insert(mac, (c, &d.at));
                }
            }
        }
    }
    // Sorted by first address, widest first: a prefix overlaps an earlier
    // one only if one of those still open contains it.
    nets.sort_by_key(|(n, _, _)| (matches!(n, IpNet::V6(_)), n.network(), n.prefix_len()));
    let mut open: Vec<(IpNet, usize, &Loc)> = Vec::new();
    for (net, c, at) in nets {
        while open.last().is_some_and(|(o, _, _)| !o.contains(&net)) {
            open.pop();
        }
        if let Some(&(other, oc, other_at)) = open.iter().rev().find(|(_, oc, _)| *oc != c) {
            let problem = Problem::Overlap {
                prefix: net.to_string(),
                circuit: plan.circuits[c].id.clone(),
                other: other.to_string(),
                other_circuit: plan.circuits[oc].id.clone(),
                other_at: other_at.clone(),
            };
            errors.push(ConfigError::new(at.clone(), problem));
        }
        open.push((net, c, at));
    }
}

/// Guarantees (node mins derived bottom-up), maxes against parents, sums
/// of mins against parents.
fn tree_rates(plan: &Plan, tree: &Tree<'_>, errors: &mut Vec<ConfigError>) -> Vec<[u64; 2]> {
    let n = plan.nodes.len();
    // Children of each parent (index n: the root): nodes, then circuits,
    // then the default class, each with its rates.
    let mut kids: Vec<Vec<(Kid, &Rates)>> = vec![Vec::new(); n + 1];
    let slot = |p: Parent| p.unwrap_or(n);
    for (i, node) in plan.nodes.iter().enumerate() {
        if let Some(p) = tree.node_parent[i] {
            kids[slot(p)].push((Kid::Node(i), &node.rates));
        }
    }
    for (i, c) in plan.circuits.iter().enumerate() {
        if let Some(p) = tree.circuit_parent[i] {
            kids[slot(p)].push((Kid::Circuit(i), &c.rates));
        }
    }
    if let (Some(d), Some(Some(p))) = (&plan.default_class, tree.default_parent) {
        kids[slot(p)].push((Kid::Default, &d.rates));
    }
    // Deepest first, so each node's children know their guarantee.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(tree.depth[i]));
    let mut node_min = vec![[0u64; 2]; n];
    let link = plan.interfaces.as_ref().map(|i| [i.download, i.upload]);
    for parent in order.into_iter().map(Some).chain([None]) {
        let k = &kids[slot(parent)];
        for (d, dir) in Dir::BOTH.into_iter().enumerate() {
            let kid_min = |(kid, r): &(Kid, &Rates)| match kid {
                Kid::Node(i) => r.get(dir).min.unwrap_or(node_min[*i][d]),
                _ => r.get(dir).min.unwrap_or(0),
            };
            let mins: Vec<u64> = k.iter().map(kid_min).collect();
            let sum: u64 = mins.iter().fold(0u64, |a, &b| a.saturating_add(b));
            let (label, own, at) = match parent {
                Some(p) => {
                    let node = &plan.nodes[p];
                    // Without a min, the children's sum, at most the
                    // max (a sum above it is reported here, not again at
                    // every ancestor).
                    let b = node.rates.get(dir);
                    node_min[p][d] = b.min.unwrap_or(sum.min(b.max));
                    let b = node.rates.get(dir);
                    (
                        format!("node {:?}", node.name),
                        Some((b.min, b.max)),
                        node.at.clone(),
                    )
                }
                None => {
                    let at = plan.interfaces.as_ref().map(|i| i.at.clone());
                    (
                        "the link".to_string(),
                        link.map(|l| (None, l[d])),
                        at.unwrap_or_else(|| Loc {
                            file: std::sync::Arc::from(""),
                            line: None,
                            col: None,
                        }),
                    )
                }
            };
            shares(plan, k, &mins, dir, &label, &at, errors);
            let Some((min, max)) = own else { continue };
            for (kid, r) in k {
                let child_max = r.get(dir).max;
                if child_max > max {
                    let (of, kid_at) = describe(plan, *kid);
                    let problem = Problem::MaxAboveParent {
                        of,
                        dir: dir.name(),
                        max: child_max,
                        parent: label.clone(),
                        parent_max: max,
                    };
                    errors.push(ConfigError::new(kid_at, problem));
                }
            }
            let (bound, limit) = min.map_or(("max", max), |m| ("min", m));
            let guaranteed = mins.iter().filter(|&&m| m > 0).count();
            if sum > limit {
                let problem = Problem::MinsAboveParent {
                    parent: label.clone(),
                    dir: dir.name(),
                    sum,
                    children: guaranteed,
                    bound,
                    limit,
                };
                errors.push(ConfigError::new(at, problem));
            }
        }
    }
    node_min
}

/// Refuses children whose weights a node's scheduler cannot take
/// ([`crate::share`]).
fn shares(
    plan: &Plan,
    k: &[(Kid, &Rates)],
    mins: &[u64],
    dir: Dir,
    label: &str,
    at: &Loc,
    errors: &mut Vec<ConfigError>,
) {
    let group: Vec<crate::share::Kid> = k
        .iter()
        .zip(mins)
        .map(|((kid, _), &guarantee)| crate::share::Kid {
            weight: match *kid {
                Kid::Node(i) => plan.nodes[i].weight,
                Kid::Circuit(i) => plan.circuits[i].weight,
                Kid::Default => None,
            },
            guarantee,
        })
        .collect();
    if let Err(why) = crate::share::weights(&group) {
        let problem = Problem::Shares {
            parent: label.to_string(),
            dir: dir.name(),
            why,
        };
        errors.push(ConfigError::new(at.clone(), problem));
    }
}

/// A child of a parent.
#[derive(Clone, Copy)]
enum Kid {
    Node(usize),
    Circuit(usize),
    Default,
}

fn describe(plan: &Plan, kid: Kid) -> (String, Loc) {
    match kid {
        Kid::Node(i) => (
            format!("node {:?}", plan.nodes[i].name),
            plan.nodes[i].at.clone(),
        ),
        Kid::Circuit(i) => (
            format!("circuit {:?}", plan.circuits[i].id),
            plan.circuits[i].at.clone(),
        ),
        Kid::Default => {
            let at = plan.default_class.as_ref().map(|d| d.at.clone());
            (
                "default_class".into(),
                at.unwrap_or_else(|| Loc {
                    file: std::sync::Arc::from(""),
                    line: None,
                    col: None,
                }),
            )
        }
    }
}
