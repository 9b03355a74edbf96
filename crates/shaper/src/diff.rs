//! The difference between two checked plans: what a live reload changes.
//!
//! Names are the keys: a node is the same node in both plans if it has
//! the same name, a circuit if it has the same id, a device if it has the
//! same id. Each is then added, removed, moved (another parent), changed
//! (rates, weight, or a node's scheduler), or unchanged; a node or
//! circuit both moved and changed counts in both lists. Rules are
//! compared as a whole, in order and without their place in the file
//! (moving a rule down a line is no change); the default class and the
//! link as one item each. The indices that map each new node and circuit
//! to the old one are what the data path moves queues by.

use crate::fast_hash::Map;
use crate::on_two::on_two;
use crate::plan::{Circuit, Node, Plan, Rule};
use crate::validate::{Checked, Parent};
use std::fmt;

/// What changed in one kind of item (nodes, circuits or devices), by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// In the new plan only.
    pub added: Vec<String>,
    /// In the old plan only.
    pub removed: Vec<String>,
    /// In both, under another parent (a device: of another circuit).
    pub moved: Vec<String>,
    /// In both, with other rates or weight (a node: or scheduler; a
    /// device: other addresses, MAC or name).
    pub changed: Vec<String>,
}

impl Changes {
    /// True if nothing was added, removed, moved or changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.moved.is_empty()
            && self.changed.is_empty()
    }
}

/// What happened to the default class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultChange {
    /// Same parent and rates, or absent from both.
    Same,
    /// Only the new plan has one.
    Added,
    /// Only the old plan has one (unclaimed frames then pass unshaped).
    Removed,
    /// Another parent or other rates.
    Changed,
}

/// The difference between an old and a new checked plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// Inner nodes.
    pub nodes: Changes,
    /// Circuits.
    pub circuits: Changes,
    /// Devices.
    pub devices: Changes,
    /// The rules differ (another count, order, match or circuit).
    pub rules_changed: bool,
    /// The default class.
    pub default_class: DefaultChange,
    /// The link's rates differ.
    pub link_changed: bool,
    /// The interfaces' names or frame I/O differ (or one plan has
    /// `[interfaces]` and the other not): a running shaper cannot follow
    /// that, its sockets are open.
    pub interfaces_changed: bool,
    /// For each circuit of the new plan, its index in the old one.
    pub circuit_from: Vec<Option<usize>>,
    /// For each node of the new plan, its index in the old one.
    pub node_from: Vec<Option<usize>>,
}

impl Diff {
    /// True if the plans shape alike (devices, rules and all).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
            && self.circuits.is_empty()
            && self.devices.is_empty()
            && !self.rules_changed
            && self.default_class == DefaultChange::Same
            && !self.link_changed
            && !self.interfaces_changed
    }
}

/// A parent's name (`None`: the root).
fn parent_name(c: &Checked, p: Parent) -> Option<&str> {
    p.map(|i| c.plan.nodes[i].name.as_str())
}

/// Compares items keyed by name: `same_place` and `same_settings` are
/// asked of each pair (old index, new index). Keys are unique in each
/// plan (the check sees to it).
///
/// A reload usually keeps most items in their order, so each new item
/// is first looked for right after the old item the previous one
/// matched; only where that fails are the old keys indexed (once) and
/// looked up.
fn compare<'a>(
    old: &[&'a str],
    new: impl Iterator<Item = &'a str>,
    same_place: impl Fn(usize, usize) -> bool,
    same_settings: impl Fn(usize, usize) -> bool,
) -> (Changes, Vec<Option<usize>>) {
    let mut old_index: Option<Map<&str, usize>> = None;
    let mut matched = vec![false; old.len()];
    let mut next = 0;
    let mut ch = Changes::default();
    let mut from = Vec::new();
    for (n, key) in new.enumerate() {
        let o = if old.get(next) == Some(&key) {
            Some(next)
        } else {
            let index = old_index
                .get_or_insert_with(|| old.iter().enumerate().map(|(i, &k)| (k, i)).collect());
            index.get(key).copied()
        };
        from.push(o);
        match o {
            None => ch.added.push(key.to_string()),
            Some(o) => {
                matched[o] = true;
                next = o + 1;
                if !same_place(o, n) {
                    ch.moved.push(key.to_string());
                }
                if !same_settings(o, n) {
                    ch.changed.push(key.to_string());
                }
            }
        }
    }
    ch.removed = old
        .iter()
        .zip(&matched)
        .filter(|(_, &m)| !m)
        .map(|(k, _)| k.to_string())
        .collect();
    (ch, from)
}

fn node_settings(a: &Node, b: &Node) -> bool {
    a.rates == b.rates && a.weight == b.weight && a.scheduler == b.scheduler
}

fn circuit_settings(a: &Circuit, b: &Circuit) -> bool {
    a.rates == b.rates && a.weight == b.weight
}

/// Rules alike, their places in the file aside.
fn same_rules(a: &Plan, b: &Plan) -> bool {
    let key = |r: &Rule| (r.matches.clone(), r.circuit.clone());
    a.rules.len() == b.rules.len() && a.rules.iter().zip(&b.rules).all(|(x, y)| key(x) == key(y))
}

/// The difference from `old` to `new`.
pub fn diff(old: &Checked, new: &Checked) -> Diff {
    let (op, np) = (&old.plan, &new.plan);
    // The devices (the most) and the rules on a second thread, the nodes
    // and circuits here.
    let ((nodes, node_from, circuits, circuit_from), (devices, rules_changed)) = on_two(
        || {
            let (nodes, node_from) = compare(
                &op.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
                np.nodes.iter().map(|n| n.name.as_str()),
                |o, n| parent_name(old, old.node_parent[o]) == parent_name(new, new.node_parent[n]),
                |o, n| node_settings(&op.nodes[o], &np.nodes[n]),
            );
            let (circuits, circuit_from) = compare(
                &op.circuits
                    .iter()
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>(),
                np.circuits.iter().map(|c| c.id.as_str()),
                |o, n| {
                    parent_name(old, old.circuit_parent[o])
                        == parent_name(new, new.circuit_parent[n])
                },
                |o, n| circuit_settings(&op.circuits[o], &np.circuits[n]),
            );
            (nodes, node_from, circuits, circuit_from)
        },
        || {
            let (devices, _) = compare(
                &op.devices.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
                np.devices.iter().map(|d| d.id.as_str()),
                |o, n| op.devices[o].circuit == np.devices[n].circuit,
                |o, n| {
                    let (a, b) = (&op.devices[o], &np.devices[n]);
                    let same_nets = a.prefixes.len() == b.prefixes.len()
                        && a.prefixes
                            .iter()
                            .zip(&b.prefixes)
                            .all(|(x, y)| x.net == y.net);
                    a.name == b.name && a.mac == b.mac && same_nets
                },
            );
            (devices, !same_rules(op, np))
        },
    );
    let default_class = match (&op.default_class, &np.default_class) {
        (None, None) => DefaultChange::Same,
        (None, Some(_)) => DefaultChange::Added,
        (Some(_), None) => DefaultChange::Removed,
        (Some(a), Some(b)) => {
            let same = a.rates == b.rates
                && parent_name(old, old.default_parent) == parent_name(new, new.default_parent);
            if same {
                DefaultChange::Same
            } else {
                DefaultChange::Changed
            }
        }
    };
    let (link_changed, interfaces_changed) = match (&op.interfaces, &np.interfaces) {
        (Some(a), Some(b)) => (
            (a.download, a.upload) != (b.download, b.upload),
            (&a.internet, &a.subscribers, a.io) != (&b.internet, &b.subscribers, b.io),
        ),
        (None, None) => (false, false),
        _ => (true, true),
    };
    Diff {
        nodes,
        circuits,
        devices,
        rules_changed,
        default_class,
        link_changed,
        interfaces_changed,
        circuit_from,
        node_from,
    }
}

fn part(f: &mut fmt::Formatter<'_>, what: &str, c: &Changes, first: &mut bool) -> fmt::Result {
    let mut items = Vec::new();
    for (n, verb) in [
        (c.added.len(), "added"),
        (c.removed.len(), "removed"),
        (c.moved.len(), "moved"),
        (c.changed.len(), "changed"),
    ] {
        if n > 0 {
            items.push(format!("{n} {verb}"));
        }
    }
    if items.is_empty() {
        return Ok(());
    }
    let sep = if *first { "" } else { "; " };
    *first = false;
    write!(f, "{sep}{what}: {}", items.join(", "))
}

impl fmt::Display for Diff {
    /// One line: `circuits: 3 added, 1 removed; nodes: 2 changed; rules
    /// changed`, or `no change`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        part(f, "circuits", &self.circuits, &mut first)?;
        part(f, "nodes", &self.nodes, &mut first)?;
        part(f, "devices", &self.devices, &mut first)?;
        let mut flag = |f: &mut fmt::Formatter<'_>, on: bool, text: &str| {
            if on {
                let sep = if first { "" } else { "; " };
                first = false;
                write!(f, "{sep}{text}")
            } else {
                Ok(())
            }
        };
        flag(f, self.rules_changed, "rules changed")?;
        let default = match self.default_class {
            DefaultChange::Same => None,
            DefaultChange::Added => Some("default class added"),
            DefaultChange::Removed => Some("default class removed"),
            DefaultChange::Changed => Some("default class changed"),
        };
        flag(f, default.is_some(), default.unwrap_or(""))?;
        flag(f, self.link_changed, "link rates changed")?;
        flag(f, self.interfaces_changed, "interfaces changed")?;
        if first {
            write!(f, "no change")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datapath::test_plan::{checked, circuit, node, plan, rates};
    use proptest::prelude::*;

    /// [`compare`] as a plain lookup of every key in maps of both sides.
    fn reference(old: &[&str], new: &[&str]) -> (Changes, Vec<Option<usize>>) {
        let old_index: std::collections::HashMap<&str, usize> =
            old.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let mut ch = Changes::default();
        let from: Vec<Option<usize>> = new.iter().map(|k| old_index.get(k).copied()).collect();
        for (n, (k, o)) in new.iter().zip(&from).enumerate() {
            match o {
                None => ch.added.push(k.to_string()),
                Some(o) => {
                    if (o + n) % 3 == 0 {
                        ch.moved.push(k.to_string());
                    }
                    if (o * n) % 5 == 1 {
                        ch.changed.push(k.to_string());
                    }
                }
            }
        }
        ch.removed = old
            .iter()
            .filter(|k| !new.contains(k))
            .map(|k| k.to_string())
            .collect();
        (ch, from)
    }

    proptest! {
        /// Old keys: a subset of 0..40 in some order; new: some of them
        /// kept (in runs, shuffled or not) and new ones put in.
        #[test]
        fn compare_finds_every_key_as_a_lookup_does(
            old in proptest::sample::subsequence((0..40u32).collect::<Vec<_>>(), 0..40)
                .prop_shuffle(),
            keep in proptest::collection::vec(any::<bool>(), 40),
            added in proptest::sample::subsequence((40..60u32).collect::<Vec<_>>(), 0..10),
            swaps in proptest::collection::vec((0usize..60, 0usize..60), 0..4),
        ) {
            let mut new: Vec<u32> = old.iter().zip(&keep).filter(|(_, &k)| k).map(|(&o, _)| o).collect();
            for (i, a) in added.into_iter().enumerate() {
                let at = (i * 7) % (new.len() + 1);
                new.insert(at, a);
            }
            for (a, b) in swaps {
                if !new.is_empty() {
                    let n = new.len();
                    new.swap(a % n, b % n);
                }
            }
            let names = |v: &[u32]| v.iter().map(|k| format!("k{k}")).collect::<Vec<_>>();
            let (old_names, new_names) = (names(&old), names(&new));
            let old_keys: Vec<&str> = old_names.iter().map(String::as_str).collect();
            let new_keys: Vec<&str> = new_names.iter().map(String::as_str).collect();
            let got = compare(
                &old_keys,
                new_keys.iter().copied(),
                |o, n| (o + n) % 3 != 0,
                |o, n| (o * n) % 5 != 1,
            );
            prop_assert_eq!(got, reference(&old_keys, &new_keys));
        }
    }

    fn base() -> Plan {
        let mut p = plan(100_000_000);
        node(&mut p, "n1", None, 50_000_000, None);
        node(&mut p, "n2", None, 50_000_000, None);
        circuit(&mut p, "a", Some("n1"), Some(1_000_000), 10_000_000, None);
        circuit(&mut p, "b", Some("n1"), None, 10_000_000, None);
        circuit(&mut p, "c", Some("n2"), None, 10_000_000, Some(3));
        p
    }

    #[test]
    fn a_plan_against_itself_is_no_change() {
        let c = checked(base());
        let d = diff(&c, &c);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(d.to_string(), "no change");
        assert_eq!(d.circuit_from, vec![Some(0), Some(1), Some(2)]);
        assert_eq!(d.node_from, vec![Some(0), Some(1)]);
    }

    #[test]
    fn adds_removes_moves_and_changes_are_found_by_name() {
        let old = checked(base());
        let mut p = base();
        p.circuits.retain(|c| c.id != "b");
        p.circuits[0].parent = Some("n2".into()); // a moved
        p.circuits[1].rates = rates(None, 20_000_000); // c changed
        p.circuits[1].weight = Some(3);
        circuit(&mut p, "d", None, None, 5_000_000, None);
        p.nodes.swap(0, 1);
        p.nodes[0].weight = Some(2); // n2 changed
        let new = checked(p);
        let d = diff(&old, &new);
        assert_eq!(d.circuits.added, ["d"]);
        assert_eq!(d.circuits.removed, ["b"]);
        assert_eq!(d.circuits.moved, ["a"]);
        assert_eq!(d.circuits.changed, ["c"]);
        assert_eq!(d.nodes.changed, ["n2"]);
        assert!(d.nodes.added.is_empty() && d.nodes.removed.is_empty());
        assert_eq!(d.circuit_from, vec![Some(0), Some(2), None]);
        assert_eq!(d.node_from, vec![Some(1), Some(0)]);
        assert_eq!(
            d.to_string(),
            "circuits: 1 added, 1 removed, 1 moved, 1 changed; nodes: 1 changed"
        );
        assert!(!d.rules_changed && !d.link_changed && !d.interfaces_changed);
    }

    #[test]
    fn a_rule_that_only_moved_in_the_file_is_no_change() {
        use crate::plan::{Match, Rule};
        let rule = |line| Rule {
            matches: Match {
                protocol: Some(17),
                ..Match::default()
            },
            circuit: "a".into(),
            at: crate::loc::Loc {
                file: std::sync::Arc::from("f"),
                line: Some(line),
                col: None,
            },
        };
        let mut p = base();
        p.rules.push(rule(3));
        let old = checked(p.clone());
        p.rules[0] = rule(9);
        assert!(!diff(&old, &checked(p.clone())).rules_changed);
        p.rules[0].matches.protocol = Some(6);
        assert!(diff(&old, &checked(p)).rules_changed);
    }

    #[test]
    fn the_default_class_and_the_link_are_compared() {
        use crate::plan::DefaultClass;
        let old = checked(base());
        let mut p = base();
        p.default_class = Some(DefaultClass {
            parent: None,
            rates: rates(None, 1_000_000),
            at: crate::datapath::test_plan::at(),
        });
        let d = diff(&old, &checked(p.clone()));
        assert_eq!(d.default_class, DefaultChange::Added);
        let with = checked(p.clone());
        p.default_class.as_mut().unwrap().parent = Some("n1".into());
        assert_eq!(
            diff(&with, &checked(p.clone())).default_class,
            DefaultChange::Changed
        );
        p.interfaces.as_mut().unwrap().download = 200_000_000;
        let d = diff(&with, &checked(p.clone()));
        assert!(d.link_changed && !d.interfaces_changed);
        p.interfaces.as_mut().unwrap().internet = "other".into();
        assert!(diff(&with, &checked(p)).interfaces_changed);
    }
}
