//! The bench's circuits, written both ways: as a fairway shaper file and
//! as an HTB tree built by `tc -batch`, plus the configuration change the
//! two are timed on.
//!
//! Six circuits carry traffic; the others only make the tree as large as
//! an operator's (`--circuits`), a hundred per node, as LibreQoS hangs
//! subscribers under access points:
//!
//! | index | role | parent | min | max | weight |
//! |---|---|---|---|---|---|
//! | 0 | max held | root | 1 Mbit/s | 20 Mbit/s | 1 |
//! | 1 | share, weight 1 | node `shared` (max 60 Mbit/s) | 20 Mbit/s | 60 Mbit/s | 1 |
//! | 2 | share, weight 3 | node `shared` | 5 Mbit/s | 60 Mbit/s | 3 |
//! | 3 | sparse beside bulk | root | 10 Mbit/s | 100 Mbit/s | 1 |
//! | 4 | forwarding | root | 100 Mbit/s | the link | 1 |
//! | 5 | max held at 1 Gbit/s | root | 100 Mbit/s | 1 Gbit/s | 1 |
//! | 6.. | idle | node `n<k>` (max 1 Gbit/s) | 100 kbit/s | 10 Mbit/s | 1 |
//!
//! Circuit `i` owns address 10.78.0.0 + i + 1 (download: the destination).
//! HTB finds it by a u32 filter in a 256-bucket hash table keyed on the
//! address's last byte (this kernel has no flower or matchall classifier;
//! a flat list of 10,000 u32 filters would be walked per packet), as
//! LibreQoS's fallback without XDP does.

use std::fmt::Write as _;
use std::net::Ipv4Addr;

/// The link's rate, both ways (a veth has none of its own).
pub const LINK_BPS: u64 = 10_000_000_000;
/// Circuits that carry traffic (indices 0..ACTIVE).
pub const ACTIVE: usize = 6;
/// Circuit index of the one whose max is checked.
pub const CAP: usize = 0;
/// Circuit indices of the two that share their node's excess.
pub const SHARE: [usize; 2] = [1, 2];
/// Circuit index of the sparse and bulk flows.
pub const DELAY: usize = 3;
/// Circuit index of the forwarding measurement.
pub const FORWARD: usize = 4;
/// Circuit index of the max held at 1 Gbit/s.
pub const GIGABIT: usize = 5;
/// The max of the node holding [`SHARE`].
pub const SHARED_NODE_MAX: u64 = 60_000_000;
/// Idle circuits per node.
pub const PER_NODE: usize = 100;
/// The change: rate changes, moves to another node, removals, additions.
pub const CHANGE: ChangeSize = ChangeSize {
    rates: 1000,
    moves: 100,
    removals: 500,
    adds: 500,
};
/// The first address; circuit `i` has `BASE + i + 1`.
pub const BASE: Ipv4Addr = Ipv4Addr::new(10, 78, 0, 0);
/// HTB leaves: a pfifo as long as veth's transmit queue.
pub const PFIFO_LIMIT: u32 = 1000;
/// Bytes of the largest frame (1500-byte IP packet): HTB's quantum unit.
const MTU_FRAME: u64 = 1514;

/// How many circuits the change touches, each kind.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct ChangeSize {
    /// Rate changes (max 10 → 20 Mbit/s).
    pub rates: usize,
    /// Moves to another node.
    pub moves: usize,
    /// Circuits removed.
    pub removals: usize,
    /// Circuits added.
    pub adds: usize,
}

/// A node (only under the root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Name.
    pub name: String,
    /// Max (ceiling), bit/s.
    pub max: u64,
}

/// A circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circuit {
    /// Its index: id `c<index>`, address and HTB class follow from it.
    pub index: usize,
    /// Parent node (index into the nodes), `None`: the root.
    pub node: Option<usize>,
    /// Guarantee, bit/s.
    pub min: u64,
    /// Ceiling, bit/s.
    pub max: u64,
    /// Share of the excess.
    pub weight: u32,
}

impl Circuit {
    /// The subscriber's address.
    pub fn addr(&self) -> Ipv4Addr {
        address(self.index)
    }

    fn minor(&self) -> u32 {
        0x1000 + self.index as u32
    }

    /// The u32 filter's handle: table 2, bucket = last byte, node = the
    /// rest of the offset + 1 (0 is not a node).
    fn filter_handle(&self) -> String {
        let off = self.index as u32 + 1;
        format!("2:{:x}:{:x}", off & 0xff, (off >> 8) + 1)
    }
}

/// Circuit `index`'s address.
pub fn address(index: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(BASE) + index as u32 + 1)
}

/// The tree: nodes and circuits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Node 0 is `shared`, the others hold idle circuits.
    pub nodes: Vec<Node>,
    /// Circuits in index order (after a change: in no particular order).
    pub circuits: Vec<Circuit>,
}

impl Plan {
    /// The bench's tree with `circuits` circuits (at least [`ACTIVE`]).
    pub fn bench(circuits: usize) -> Plan {
        let idle = circuits.saturating_sub(ACTIVE);
        let idle_nodes = idle.div_ceil(PER_NODE).max(1);
        let mut nodes = vec![Node {
            name: "shared".into(),
            max: SHARED_NODE_MAX,
        }];
        nodes.extend((0..idle_nodes).map(|k| Node {
            name: format!("n{k}"),
            max: 1_000_000_000,
        }));
        let c = |index, node, min, max, weight| Circuit {
            index,
            node,
            min,
            max,
            weight,
        };
        let mut list = vec![
            c(CAP, None, 1_000_000, 20_000_000, 1),
            c(SHARE[0], Some(0), 20_000_000, SHARED_NODE_MAX, 1),
            c(SHARE[1], Some(0), 5_000_000, SHARED_NODE_MAX, 3),
            c(DELAY, None, 10_000_000, 100_000_000, 1),
            c(FORWARD, None, 100_000_000, LINK_BPS, 1),
            c(GIGABIT, None, 100_000_000, 1_000_000_000, 1),
        ];
        list.truncate(circuits);
        list.extend((ACTIVE..circuits).map(idle_circuit));
        Plan {
            nodes,
            circuits: list,
        }
    }

    /// The circuit of index `index`, if present.
    pub fn circuit(&self, index: usize) -> Option<&Circuit> {
        self.circuits.iter().find(|c| c.index == index)
    }

    /// This tree after the change of [`CHANGE`]: idle circuits
    /// `ACTIVE..+rates` get a max of 20 Mbit/s, the next `moves` move to
    /// the next node, the last `removals` go, `adds` new ones come.
    /// Needs `ACTIVE + rates + moves + removals` circuits.
    pub fn changed(&self) -> Plan {
        let n = self.circuits.len();
        let idle_nodes = self.nodes.len() - 1;
        let mut next = self.clone();
        next.circuits.truncate(n - CHANGE.removals);
        for c in &mut next.circuits {
            let i = c.index;
            if (ACTIVE..ACTIVE + CHANGE.rates).contains(&i) {
                c.max = 20_000_000;
            } else if (ACTIVE + CHANGE.rates..ACTIVE + CHANGE.rates + CHANGE.moves).contains(&i) {
                let k = c.node.map_or(1, |k| k - 1);
                c.node = Some(1 + (k + 1) % idle_nodes);
            }
        }
        next.circuits.extend((n..n + CHANGE.adds).map(|i| Circuit {
            node: Some(1 + (i - ACTIVE) / PER_NODE % idle_nodes),
            ..idle_circuit(i)
        }));
        next
    }

    /// The shaper file: interfaces `internet` → `subscribers` (download).
    pub fn shaper_toml(&self, internet: &str, subscribers: &str) -> String {
        let both = |r: u64| format!("{{ download = \"{r}bit\", upload = \"{r}bit\" }}");
        let mut s = format!(
            "# Generated by fairway shape bench.\n[interfaces]\ninternet = \"{internet}\"\n\
             subscribers = \"{subscribers}\"\nrate = {}\n",
            both(LINK_BPS)
        );
        for n in &self.nodes {
            let _ = write!(
                s,
                "\n[[node]]\nname = \"{}\"\nrate = {}\n",
                n.name,
                both(n.max)
            );
        }
        for c in &self.circuits {
            let _ = write!(s, "\n[[circuit]]\nid = \"c{}\"\n", c.index);
            if let Some(k) = c.node {
                let _ = writeln!(s, "parent = \"{}\"", self.nodes[k].name);
            }
            let _ = write!(
                s,
                "rate = {}\nreservation = {}\nweight = {}\n\n[[device]]\nid = \"d{}\"\n\
                 circuit = \"c{}\"\nipv4 = [\"{}\"]\n",
                both(c.max),
                both(c.min),
                c.weight,
                c.index,
                c.index,
                c.addr()
            );
        }
        s
    }

    /// The `tc -batch` script that builds this tree on `dev` from nothing.
    pub fn htb_setup(&self, dev: &str) -> String {
        let mut s = format!(
            "qdisc add dev {dev} root handle 1: htb default 0\n\
             class add dev {dev} parent 1: classid 1:1 htb rate {LINK_BPS}bit ceil {LINK_BPS}bit quantum {MTU_FRAME}\n"
        );
        for k in 0..self.nodes.len() {
            let _ = writeln!(s, "{}", self.node_class("add", dev, k));
        }
        let _ = write!(
            s,
            "filter add dev {dev} parent 1: prio 1 handle 2: protocol ip u32 divisor 256\n\
             filter add dev {dev} parent 1: prio 1 protocol ip u32 ht 800:: match ip dst {BASE}/16 \
             hashkey mask 0x000000ff at 16 link 2:\n"
        );
        for c in &self.circuits {
            self.add_circuit(&mut s, dev, c);
        }
        s
    }

    /// The `tc -batch` script that turns this tree into `next` on `dev`:
    /// `class change` for new rates; filter and class removed for removed
    /// circuits; and for a new parent removed and added again, since HTB
    /// cannot move a class (its queued packets go with it).
    pub fn htb_change(&self, next: &Plan, dev: &str) -> String {
        let mut s = String::new();
        // Node guarantees follow their circuits'.
        for k in 0..next.nodes.len() {
            if self.node_min(k) != next.node_min(k) {
                let _ = writeln!(s, "{}", next.node_class("change", dev, k));
            }
        }
        for c in &next.circuits {
            match self.circuit(c.index) {
                Some(old) if old.node != c.node => {
                    self.remove_circuit(&mut s, dev, old);
                    next.add_circuit(&mut s, dev, c);
                }
                Some(old) if old != c => {
                    let _ = writeln!(s, "{}", next.circuit_class("change", dev, c));
                }
                Some(_) => {}
                None => next.add_circuit(&mut s, dev, c),
            }
        }
        for old in &self.circuits {
            if next.circuit(old.index).is_none() {
                self.remove_circuit(&mut s, dev, old);
            }
        }
        s
    }

    fn node_min(&self, k: usize) -> u64 {
        let sum: u64 = self
            .circuits
            .iter()
            .filter(|c| c.node == Some(k))
            .map(|c| c.min)
            .sum();
        sum.max(8)
    }

    fn node_class(&self, verb: &str, dev: &str, k: usize) -> String {
        format!(
            "class {verb} dev {dev} parent 1:1 classid 1:{:x} htb rate {}bit ceil {}bit quantum {MTU_FRAME}",
            2 + k,
            self.node_min(k),
            self.nodes[k].max
        )
    }

    fn circuit_class(&self, verb: &str, dev: &str, c: &Circuit) -> String {
        let parent = c.node.map_or(1, |k| 2 + k);
        format!(
            "class {verb} dev {dev} parent 1:{parent:x} classid 1:{:x} htb rate {}bit ceil {}bit quantum {}",
            c.minor(),
            c.min,
            c.max,
            c.weight as u64 * MTU_FRAME
        )
    }

    fn add_circuit(&self, s: &mut String, dev: &str, c: &Circuit) {
        let _ = write!(
            s,
            "{}\nqdisc add dev {dev} parent 1:{:x} pfifo limit {PFIFO_LIMIT}\n\
             filter add dev {dev} parent 1: prio 1 handle {} protocol ip u32 ht 2:{:x}: \
             match ip dst {}/32 flowid 1:{:x}\n",
            self.circuit_class("add", dev, c),
            c.minor(),
            c.filter_handle(),
            (c.index + 1) & 0xff,
            c.addr(),
            c.minor()
        );
    }

    fn remove_circuit(&self, s: &mut String, dev: &str, c: &Circuit) {
        let _ = write!(
            s,
            "filter del dev {dev} parent 1: prio 1 handle {} protocol ip u32\n\
             class del dev {dev} classid 1:{:x}\n",
            c.filter_handle(),
            c.minor()
        );
    }
}

fn idle_circuit(i: usize) -> Circuit {
    Circuit {
        index: i,
        node: Some(1 + (i - ACTIVE) / PER_NODE),
        min: 100_000,
        max: 10_000_000,
        weight: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_touches_what_it_says() {
        let old = Plan::bench(3000);
        let new = old.changed();
        assert_eq!(new.circuits.len(), 3000);
        let script = old.htb_change(&new, "d");
        let count = |p: &str| script.lines().filter(|l| l.starts_with(p)).count();
        // Rate changes, plus nodes whose guarantee moved with the moves.
        assert!(count("class change") >= CHANGE.rates);
        assert_eq!(count("class del"), CHANGE.moves + CHANGE.removals);
        assert_eq!(count("class add"), CHANGE.moves + CHANGE.adds);
        assert_eq!(count("filter add"), CHANGE.moves + CHANGE.adds);
        assert_eq!(address(0), Ipv4Addr::new(10, 78, 0, 1));
        assert_eq!(old.circuits[0].filter_handle(), "2:1:1");
        assert_eq!(old.circuit(255).unwrap().filter_handle(), "2:0:2");
        let toml = old.shaper_toml("a", "b");
        assert!(toml.contains("id = \"c2999\""), "{}", &toml[..400]);
    }
}
