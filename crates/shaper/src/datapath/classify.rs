//! Classification: a frame's circuit, in one direction.
//!
//! In order, the first that claims the frame wins:
//! 1. the plan's rules, in the order written (a rule's prefix or MAC
//!    matches the source or the destination, as the plan says);
//! 2. the devices' prefixes, by the subscriber's address: the
//!    destination for download, the source for upload;
//! 3. the devices' MACs, the same way (destination MAC for download,
//!    source MAC for upload);
//! 4. the default class, if the plan has one; otherwise the frame passes
//!    unshaped, as the plan says of frames nothing claims.
//!
//! Frames that are not IP (ARP, LLDP, …) pass unshaped and are counted
//! as such: ARP must not wait behind bulk traffic, and such frames carry
//! no address to classify by. They are not charged to the link's rate
//! either (a few per second).
//!
//! The check guarantees that prefixes of different circuits are disjoint,
//! so the longest matching prefix is simply the only circuit whose
//! prefixes contain the address: the table merges each circuit's
//! prefixes into disjoint address ranges, sorted, and a lookup is one
//! binary search (IPv4 addresses are kept IPv4-mapped in the same table).
//! Nothing is allocated per frame.

use super::headers::{mapped, Headers};
use crate::plan::{Dir, Match};
use crate::validate::Checked;
use ipnet::IpNet;

/// Where a frame goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A circuit's queues (its index in the plan).
    Circuit(u32),
    /// The default class's queues.
    Default,
    /// Forwarded at once, unshaped: not IP.
    NotIp,
    /// Forwarded at once, unshaped: nothing claims it and the plan has no
    /// default class.
    Unclaimed,
}

/// Disjoint address ranges, sorted, each a circuit's.
struct Ranges(Vec<(u128, u128, u32)>);

impl Ranges {
    fn new(mut v: Vec<(u128, u128, u32)>) -> Self {
        v.sort_unstable();
        let mut merged: Vec<(u128, u128, u32)> = Vec::with_capacity(v.len());
        for (lo, hi, c) in v {
            match merged.last_mut() {
                // Overlaps are within one circuit (the check refuses
                // others): merge.
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi, c)),
            }
        }
        Ranges(merged)
    }

    fn find(&self, addr: u128) -> Option<u32> {
        let i = self.0.partition_point(|r| r.0 <= addr);
        let r = self.0.get(i.checked_sub(1)?)?;
        (addr <= r.1).then_some(r.2)
    }
}

/// A prefix as an address range in the mapped space.
fn range(net: &IpNet) -> (u128, u128) {
    match net {
        IpNet::V4(n) => (
            mapped(&n.network().octets()),
            mapped(&n.broadcast().octets()),
        ),
        IpNet::V6(n) => (u128::from(n.network()), u128::from(n.broadcast())),
    }
}

struct Rule {
    m: Match,
    prefix: Option<(u128, u128)>,
    circuit: u32,
}

impl Rule {
    fn matches(&self, h: &Headers) -> bool {
        let m = &self.m;
        let in_prefix = |a: u128| self.prefix.is_some_and(|(lo, hi)| lo <= a && a <= hi);
        (self.prefix.is_none() || in_prefix(h.src) || in_prefix(h.dst))
            && m.mac
                .is_none_or(|mac| mac.0 == h.src_mac || mac.0 == h.dst_mac)
            && m.vlan.is_none_or(|v| h.vlan == Some(v))
            && m.protocol.is_none_or(|p| p == h.protocol)
            && m.dscp.is_none_or(|d| d == h.dscp)
            && m.src_ports
                .is_none_or(|r| (r.lo..=r.hi).contains(&h.src_port))
            && m.dst_ports
                .is_none_or(|r| (r.lo..=r.hi).contains(&h.dst_port))
    }
}

/// The classifier of one direction.
pub struct Classifier {
    dir: Dir,
    rules: Vec<Rule>,
    ranges: Ranges,
    macs: Vec<([u8; 6], u32)>,
    default: bool,
}

impl Classifier {
    /// The classifier of `dir` for a checked plan.
    pub fn new(checked: &Checked, dir: Dir) -> Self {
        let plan = &checked.plan;
        let rules = plan
            .rules
            .iter()
            .zip(&checked.rule_circuit)
            .map(|(r, &c)| Rule {
                prefix: r.matches.prefix.as_ref().map(range),
                m: r.matches.clone(),
                circuit: c as u32,
            })
            .collect();
        let mut nets = Vec::new();
        let mut macs = Vec::new();
        for (d, &c) in plan.devices.iter().zip(&checked.device_circuit) {
            for p in &d.prefixes {
                let (lo, hi) = range(&p.net);
                nets.push((lo, hi, c as u32));
            }
            if let Some(m) = d.mac {
                macs.push((m.0, c as u32));
            }
        }
        macs.sort_unstable();
        macs.dedup();
        Classifier {
            dir,
            rules,
            ranges: Ranges::new(nets),
            macs,
            default: plan.default_class.is_some(),
        }
    }

    /// The class of an IP frame's headers (`None`: not IP).
    pub fn classify(&self, h: Option<&Headers>) -> Class {
        let Some(h) = h else { return Class::NotIp };
        if let Some(r) = self.rules.iter().find(|r| r.matches(h)) {
            return Class::Circuit(r.circuit);
        }
        let (addr, mac) = match self.dir {
            Dir::Download => (h.dst, h.dst_mac),
            Dir::Upload => (h.src, h.src_mac),
        };
        if let Some(c) = self.ranges.find(addr) {
            return Class::Circuit(c);
        }
        if let Ok(i) = self.macs.binary_search_by(|(m, _)| m.cmp(&mac)) {
            return Class::Circuit(self.macs[i].1);
        }
        if self.default {
            Class::Default
        } else {
            Class::Unclaimed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::headers::parse;
    use super::super::headers::tests::{tcp6, udp4};
    use super::*;
    use crate::loc::Loc;
    use crate::plan::{Bandwidth, Circuit, DefaultClass, Device, Plan, Prefix, Rates, Rule};

    fn at() -> Loc {
        Loc {
            file: std::sync::Arc::from("t"),
            line: None,
            col: None,
        }
    }

    fn rates() -> Rates {
        let b = Bandwidth {
            min: None,
            max: 1_000_000,
        };
        Rates {
            download: b,
            upload: b,
        }
    }

    fn plan(default: bool) -> Checked {
        let circuit = |id: &str| Circuit {
            id: id.into(),
            name: id.into(),
            parent: None,
            rates: rates(),
            weight: None,
            at: at(),
        };
        let device = |id: &str, c: &str, nets: &[&str], mac: Option<[u8; 6]>| Device {
            id: id.into(),
            name: id.into(),
            circuit: c.into(),
            mac: mac.map(crate::mac::Mac),
            prefixes: nets
                .iter()
                .map(|n| Prefix {
                    net: n.parse().unwrap(),
                    at: at(),
                })
                .collect(),
            at: at(),
        };
        let plan = Plan {
            circuits: vec![circuit("a"), circuit("b"), circuit("voice")],
            devices: vec![
                // Nested prefixes of one circuit, and a /32 inside a
                // neighbour's range boundary.
                device("a1", "a", &["10.0.0.0/16", "10.0.1.0/24"], None),
                device("b1", "b", &["10.1.0.7/32", "2001:db8::/48"], None),
                device("b2", "b", &[], Some([2, 0, 0, 0, 0, 9])),
            ],
            rules: vec![Rule {
                matches: Match {
                    protocol: Some(17),
                    dst_ports: Some(crate::plan::PortRange { lo: 5060, hi: 5061 }),
                    vlan: Some(7),
                    ..Match::default()
                },
                circuit: "voice".into(),
                at: at(),
            }],
            default_class: default.then(|| DefaultClass {
                parent: None,
                rates: rates(),
                at: at(),
            }),
            ..Plan::default()
        };
        crate::validate::check(plan).unwrap()
    }

    fn class(c: &Classifier, frame: &[u8]) -> Class {
        c.classify(parse(frame).as_ref())
    }

    #[test]
    fn longest_prefix_by_the_subscribers_address() {
        let checked = plan(true);
        let down = Classifier::new(&checked, Dir::Download);
        let up = Classifier::new(&checked, Dir::Upload);
        let f = udp4([8, 8, 8, 8], [10, 0, 1, 5], 1, 2, None);
        assert_eq!(class(&down, &f), Class::Circuit(0));
        assert_eq!(class(&up, &f), Class::Default);
        let f = udp4([10, 1, 0, 7], [8, 8, 8, 8], 1, 2, None);
        assert_eq!(class(&up, &f), Class::Circuit(1));
        let f = udp4([10, 1, 0, 8], [8, 8, 8, 8], 1, 2, None);
        assert_eq!(class(&up, &f), Class::Default);
        let f = udp4([8, 8, 8, 8], [10, 0, 255, 255], 1, 2, None);
        assert_eq!(class(&down, &f), Class::Circuit(0));
        let f = udp4([8, 8, 8, 8], [10, 1, 0, 0], 1, 2, None);
        assert_eq!(class(&down, &f), Class::Default);
    }

    #[test]
    fn ipv6_prefixes_and_macs() {
        let checked = plan(false);
        let down = Classifier::new(&checked, Dir::Download);
        let inside = (0x2001_0db8u128 << 96) | 5;
        assert_eq!(class(&down, &tcp6(1, inside, 1, 2)), Class::Circuit(1));
        assert_eq!(
            class(&down, &tcp6(1, 0x2001_0db9 << 96, 1, 2)),
            Class::Unclaimed
        );
        // The test frames' destination MAC is 02:00:00:00:00:02; b2's
        // MAC is another, then made the destination.
        let mut f = udp4([8, 8, 8, 8], [192, 0, 2, 1], 1, 2, None);
        assert_eq!(class(&down, &f), Class::Unclaimed);
        f[5] = 9;
        assert_eq!(class(&down, &f), Class::Circuit(1));
    }

    #[test]
    fn rules_first_with_the_vlan_tag() {
        let checked = plan(true);
        let down = Classifier::new(&checked, Dir::Download);
        let tagged = udp4([8, 8, 8, 8], [10, 0, 1, 5], 1, 5061, Some(7));
        assert_eq!(class(&down, &tagged), Class::Circuit(2));
        let other_tag = udp4([8, 8, 8, 8], [10, 0, 1, 5], 1, 5061, Some(8));
        assert_eq!(class(&down, &other_tag), Class::Circuit(0));
        let untagged = udp4([8, 8, 8, 8], [10, 0, 1, 5], 1, 5061, None);
        assert_eq!(class(&down, &untagged), Class::Circuit(0));
        let mut arp = vec![0xff; 12];
        arp.extend_from_slice(&[0x08, 0x06, 0, 0]);
        assert_eq!(class(&down, &arp), Class::NotIp);
    }
}
