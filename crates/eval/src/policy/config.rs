//! Policy files: a scheduling tree in TOML (seed 002 §3.2, §4 "Policy
//! Creation"), parsed with `serde` + `toml`, checked by
//! [`PolicyTree::build`](fairway_core::policy::PolicyTree::build), every
//! error reported as `file:line:column: message`.
//!
//! ```toml
//! max_packets = 4096          # packets queued at once (pre-allocated)
//! max_packet_len = 1500       # bytes
//!
//! [shaper]                    # the one shared shaper (times in ns)
//! queue = "cffs"
//! buckets = 20000
//! granularity = 100000        # 100 µs per bucket
//!
//! [[node]]
//! name = "root"
//! policy = "stfq"             # see POLICIES
//! rate = "20 Mbit/s"          # pacing of the whole output
//!
//! [[node]]
//! name = "B"
//! parent = "root"
//! policy = "stfq"
//! weight = 7
//! rate = "10 Mbit/s"          # limit on an internal node
//!
//! [[flow]]
//! parent = "root"
//! weight = 3
//!
//! [[flow]]
//! parent = "B"
//! count = 2                   # two identical flows
//! rate = "7 Mbit/s"
//! ```
//!
//! Every node may set `queue = { kind, buckets, granularity }` (defaults per
//! policy, see [`default_queue`]). Flows may set the packet annotator:
//! `deadline_us` (EDF / LSTF: rank = arrival + deadline) or `message_bytes`
//! (pFabric: rank = bytes left in the flow's current message). Workload
//! flow `k` maps to policy flow `k mod flows`. This module is the one place
//! that reads policy files; other front ends reuse [`parse`] / [`load`].

use fairway_core::policy::{
    BuildError, ChildParams, FlowRank, FlowSpec, NodeSpec, PolicyTree, QueueKind, QueueSpec,
    SchedChoice, Transaction, TreeSpec,
};
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// The node policies a file can name.
pub const POLICIES: &[(&str, &str)] = &[
    ("strict-priority", "children by `priority`, lowest first"),
    ("stfq", "start-time fair queueing by `weight`"),
    (
        "pfabric",
        "flows by the minimum rank of their packets (Fig. 10)",
    ),
    ("edf", "children by their front packet's rank (deadline)"),
    ("lstf", "as edf, rank = arrival + slack"),
    (
        "hclock",
        "`reservation`, `rate` (limit) and `weight` (share)",
    ),
    ("drr", "fairway's DRR over the children"),
    ("qfq", "fairway's QFQ"),
    ("qfq+", "fairway's QFQ+"),
    ("wf2q+", "fairway's WF2Q+"),
];

/// An error at a place in a policy file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file name as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ConfigError {}

/// How the packets of a flow are ranked (the packet annotator of Fig. 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankSource {
    /// Rank 0 (the node's transaction does not look at packet ranks).
    None,
    /// Arrival time + this many ns (EDF deadline, LSTF slack).
    Deadline(u64),
    /// Bytes left in the current message of this size (pFabric).
    Remaining(u64),
}

/// A checked policy file.
#[derive(Clone, Debug)]
pub struct PolicyConfig {
    /// The tree, ready for [`PolicyTree::build`].
    pub spec: TreeSpec,
    /// Node names, by index.
    pub node_names: Vec<String>,
    /// Flow names, by index.
    pub flow_names: Vec<String>,
    /// Each flow's rank annotator.
    pub ranks: Vec<RankSource>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    max_packets: Option<Spanned<u32>>,
    max_packet_len: Option<Spanned<u32>>,
    shaper: Option<Spanned<ShaperToml>>,
    #[serde(default, rename = "node")]
    nodes: Vec<Spanned<NodeToml>>,
    #[serde(default, rename = "flow")]
    flows: Vec<Spanned<FlowToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShaperToml {
    queue: Spanned<String>,
    buckets: u32,
    granularity: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueueToml {
    kind: Spanned<String>,
    buckets: u32,
    granularity: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeToml {
    name: Spanned<String>,
    parent: Option<Spanned<String>>,
    policy: Spanned<String>,
    queue: Option<Spanned<QueueToml>>,
    reservation_queue: Option<Spanned<QueueToml>>,
    weight: Option<u32>,
    priority: Option<u64>,
    rate: Option<Spanned<String>>,
    reservation: Option<Spanned<String>>,
}

/// The fields a node or flow gives its parent.
struct ChildToml<'a> {
    weight: Option<u32>,
    priority: Option<u64>,
    rate: &'a Option<Spanned<String>>,
    reservation: &'a Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlowToml {
    name: Option<String>,
    parent: Spanned<String>,
    count: Option<Spanned<u32>>,
    deadline_us: Option<Spanned<u64>>,
    message_bytes: Option<Spanned<u64>>,
    weight: Option<u32>,
    priority: Option<u64>,
    rate: Option<Spanned<String>>,
    reservation: Option<Spanned<String>>,
}

/// The default queue of each policy.
pub fn default_queue(policy: &str) -> QueueSpec {
    match policy {
        "strict-priority" => QueueSpec::new(QueueKind::Ffs, 64, 1),
        // Half window 2^12 · 2^15 = 2^27 > 1500 · 2^16 (a packet at weight 1).
        "stfq" | "hclock" => QueueSpec::new(QueueKind::Cffs, 8192, 1 << 15),
        // Remaining sizes up to 64 MiB at 1 KiB granularity.
        "pfabric" => QueueSpec::new(QueueKind::Hffs, 65_536, 1024),
        // Deadlines with mixed slack are not monotone: a tighter packet can
        // arrive below a cFFS window that has rotated past `now`, and would
        // be refused; the heap holds any rank. (cFFS is right when every
        // flow has the same deadline offset.)
        _ => QueueSpec::new(QueueKind::BinaryHeap, 1, 1),
    }
}

/// Parses a rate: an integer with optional fraction and a unit (`bit/s`,
/// `kbit/s`, `Mbit/s`, `Gbit/s`, `B/s`, `kB/s`, `MB/s`, `GB/s`; no unit:
/// bytes/s), to exact bytes/s. A rate that is not a whole number of
/// bytes/s is an error, never rounded.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(format!(
            "rate {text:?}: expected a number and a unit, e.g. \"10 Mbit/s\""
        ));
    }
    let digits = format!("{int}{frac}");
    let mant: u128 = digits
        .parse()
        .map_err(|_| format!("rate {text:?}: not a number"))?;
    let (mul, div): (u128, u128) = match unit.trim() {
        "" | "B/s" => (1, 1),
        "kB/s" => (1_000, 1),
        "MB/s" => (1_000_000, 1),
        "GB/s" => (1_000_000_000, 1),
        "bit/s" | "bps" => (1, 8),
        "kbit/s" | "kbps" => (1_000, 8),
        "Mbit/s" | "Mbps" => (1_000_000, 8),
        "Gbit/s" | "Gbps" => (1_000_000_000, 8),
        u => {
            return Err(format!(
                "rate {text:?}: unknown unit {u:?} (bit/s, kbit/s, Mbit/s, Gbit/s, B/s, kB/s, MB/s, GB/s)"
            ))
        }
    };
    let den = div * 10u128.pow(frac.len() as u32);
    let num = mant * mul;
    if !num.is_multiple_of(den) {
        return Err(format!("rate {text:?} is not a whole number of bytes/s"));
    }
    let v = num / den;
    if v == 0 || v > 1 << 40 {
        return Err(format!("rate {text:?} outside 1 B/s ..= 2^40 B/s"));
    }
    Ok(v as u64)
}

/// Reads and checks a policy file.
pub fn load(path: &str) -> Result<PolicyConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_string(),
        line: 0,
        column: 0,
        message: format!("cannot read: {e}"),
    })?;
    parse(&text, path)
}

/// Checks a policy file's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<PolicyConfig, ConfigError> {
    let at = |span: Range<usize>, message: String| {
        let (line, column) = line_col(text, span.start);
        ConfigError {
            file: file.to_string(),
            line,
            column,
            message,
        }
    };
    let f: FileToml = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        at(span, e.message().to_string())
    })?;
    if f.nodes.is_empty() {
        return Err(at(
            0..0,
            "no [[node]]: a policy needs at least a root".into(),
        ));
    }
    let mut index: HashMap<&str, u32> = HashMap::new();
    for (i, n) in f.nodes.iter().enumerate() {
        let name = n.get_ref().name.get_ref().as_str();
        if index.insert(name, i as u32).is_some() {
            return Err(at(
                n.get_ref().name.span(),
                format!("node {name:?} defined twice"),
            ));
        }
    }
    let parent_of = |p: &Spanned<String>| -> Result<u32, ConfigError> {
        index.get(p.get_ref().as_str()).copied().ok_or_else(|| {
            at(
                p.span(),
                format!("unknown node {:?} (nodes: {})", p.get_ref(), names(&index)),
            )
        })
    };
    let child = |c: &ChildToml| -> Result<ChildParams, ConfigError> {
        let rate = |r: &Option<Spanned<String>>| -> Result<Option<u64>, ConfigError> {
            r.as_ref()
                .map(|s| parse_rate(s.get_ref()).map_err(|m| at(s.span(), m)))
                .transpose()
        };
        Ok(ChildParams {
            weight: c.weight.unwrap_or(1),
            priority: c.priority.unwrap_or(0),
            rate: rate(c.rate)?,
            reservation: rate(c.reservation)?,
        })
    };
    let queue = |q: &Spanned<QueueToml>| -> Result<QueueSpec, ConfigError> {
        let r = q.get_ref();
        let kind = QueueKind::parse(r.kind.get_ref()).ok_or_else(|| {
            at(
                r.kind.span(),
                format!(
                    "unknown queue {:?} (one of: {})",
                    r.kind.get_ref(),
                    QueueKind::ALL.map(|(n, _)| n).join(", ")
                ),
            )
        })?;
        Ok(QueueSpec::new(kind, r.buckets, r.granularity))
    };
    let mut nodes = Vec::new();
    for n in &f.nodes {
        let r = n.get_ref();
        let policy = r.policy.get_ref().as_str();
        let transaction = match policy {
            "strict-priority" => Transaction::StrictPriority,
            "stfq" => Transaction::Stfq,
            "pfabric" => Transaction::PacketRank(FlowRank::Min),
            "edf" | "lstf" => Transaction::PacketRank(FlowRank::Front),
            "hclock" => Transaction::HClock {
                reservation_queue: match &r.reservation_queue {
                    Some(q) => queue(q)?,
                    None => QueueSpec::new(QueueKind::Cffs, 20_000, 100_000),
                },
            },
            s => match SchedChoice::parse(s) {
                Some(c) => Transaction::Scheduler(c),
                None => {
                    return Err(at(
                        r.policy.span(),
                        format!(
                            "unknown policy {s:?} (one of: {})",
                            POLICIES.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
                        ),
                    ))
                }
            },
        };
        nodes.push(NodeSpec {
            parent: r.parent.as_ref().map(parent_of).transpose()?,
            transaction,
            queue: match &r.queue {
                Some(q) => queue(q)?,
                None => default_queue(policy),
            },
            params: child(&ChildToml {
                weight: r.weight,
                priority: r.priority,
                rate: &r.rate,
                reservation: &r.reservation,
            })?,
        });
    }
    let mut flows = Vec::new();
    let mut flow_names = Vec::new();
    let mut ranks = Vec::new();
    // The span of each expanded flow's table, for build errors.
    let mut flow_spans = Vec::new();
    for (i, fl) in f.flows.iter().enumerate() {
        let r = fl.get_ref();
        let parent = parent_of(&r.parent)?;
        let count = r.count.as_ref().map_or(1, |c| *c.get_ref());
        if count == 0 || count > 1 << 22 {
            let span = r.count.as_ref().map_or(fl.span(), |c| c.span());
            return Err(at(span, format!("count {count} outside 1..=4194304")));
        }
        let rank = match (&r.deadline_us, &r.message_bytes) {
            (Some(d), None) => RankSource::Deadline(d.get_ref().saturating_mul(1000)),
            (None, Some(m)) if *m.get_ref() > 0 => RankSource::Remaining(*m.get_ref()),
            (None, Some(m)) => return Err(at(m.span(), "message_bytes must be >= 1".into())),
            (None, None) => RankSource::None,
            (Some(d), Some(_)) => {
                return Err(at(
                    d.span(),
                    "set deadline_us or message_bytes, not both".into(),
                ))
            }
        };
        let params = child(&ChildToml {
            weight: r.weight,
            priority: r.priority,
            rate: &r.rate,
            reservation: &r.reservation,
        })?;
        let base = r.name.clone().unwrap_or_else(|| format!("flow{i}"));
        for k in 0..count {
            flows.push(FlowSpec { parent, params });
            flow_names.push(if count == 1 {
                base.clone()
            } else {
                format!("{base}#{k}")
            });
            ranks.push(rank);
            flow_spans.push(fl.span());
        }
    }
    if flows.is_empty() {
        return Err(at(0..0, "no [[flow]]: packets need a leaf to enter".into()));
    }
    let shaper = match &f.shaper {
        Some(s) => {
            let r = s.get_ref();
            let kind = QueueKind::parse(r.queue.get_ref()).ok_or_else(|| {
                at(
                    r.queue.span(),
                    format!("unknown queue {:?}", r.queue.get_ref()),
                )
            })?;
            QueueSpec::new(kind, r.buckets, r.granularity)
        }
        None => TreeSpec::DEFAULT_SHAPER,
    };
    let spec = TreeSpec {
        nodes,
        flows,
        shaper,
        max_packets: f.max_packets.as_ref().map_or(65_536, |m| *m.get_ref()),
        max_packet_len: f.max_packet_len.as_ref().map_or(1500, |m| *m.get_ref()),
    };
    // Build once to check everything, and point at what is wrong.
    if let Err(e) = PolicyTree::<u32>::build(&spec) {
        let node_span = |i: u32| f.nodes.get(i as usize).map_or(0..0, |n| n.span());
        let span = match &e {
            BuildError::UnknownNode {
                what: "flow",
                index,
                ..
            }
            | BuildError::RateZero {
                what: "flow",
                index,
            }
            | BuildError::InvalidWeight {
                what: "flow",
                index,
                ..
            } => flow_spans.get(*index as usize).cloned().unwrap_or(0..0),
            BuildError::UnknownNode { index, .. }
            | BuildError::RateZero { index, .. }
            | BuildError::InvalidWeight { index, .. } => node_span(*index),
            BuildError::Cycle { node }
            | BuildError::Queue { node, .. }
            | BuildError::NeedsFixedRange { node }
            | BuildError::BadChild { node, .. }
            | BuildError::Scheduler { node, .. } => node_span(*node),
            BuildError::HorizonTooShort { node, .. } if *node == u32::MAX => {
                f.shaper.as_ref().map_or(0..0, |s| s.span())
            }
            BuildError::HorizonTooShort { node, .. } => node_span(*node),
            BuildError::InvalidParameter(_) => f
                .max_packets
                .as_ref()
                .map(|m| m.span())
                .or(f.max_packet_len.as_ref().map(|m| m.span()))
                .unwrap_or(0..0),
            BuildError::Empty | BuildError::RootCount(_) => 0..0,
        };
        let named = |i: u32| {
            f.nodes.get(i as usize).map_or_else(String::new, |n| {
                format!(" ({:?})", n.get_ref().name.get_ref())
            })
        };
        let extra = match &e {
            BuildError::Cycle { node } | BuildError::BadChild { node, .. } => named(*node),
            _ => String::new(),
        };
        return Err(at(span, format!("{e}{extra}")));
    }
    Ok(PolicyConfig {
        node_names: f
            .nodes
            .iter()
            .map(|n| n.get_ref().name.get_ref().clone())
            .collect(),
        spec,
        flow_names,
        ranks,
    })
}

fn names(index: &HashMap<&str, u32>) -> String {
    let mut v: Vec<_> = index.iter().map(|(k, &i)| (i, *k)).collect();
    v.sort();
    v.into_iter().map(|(_, k)| k).collect::<Vec<_>>().join(", ")
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG6: &str = r#"
[[node]]
name = "root"
policy = "stfq"
rate = "20 Mbit/s"

[[node]]
name = "B"
parent = "root"
policy = "stfq"
weight = 7
rate = "10 Mbit/s"

[[flow]]
parent = "root"
weight = 3

[[flow]]
parent = "B"

[[flow]]
parent = "B"
rate = "7 Mbit/s"
"#;

    #[test]
    fn parses_fig6() {
        let c = parse(FIG6, "fig6.toml").unwrap();
        assert_eq!(c.spec.nodes.len(), 2);
        assert_eq!(c.spec.flows.len(), 3);
        assert_eq!(c.spec.nodes[1].params.rate, Some(1_250_000));
        assert_eq!(c.spec.flows[2].params.rate, Some(875_000));
    }

    #[test]
    fn errors_point_at_line_and_column() {
        let bad = FIG6.replace("parent = \"B\"\nrate", "parent = \"C\"\nrate");
        let e = parse(&bad, "f.toml").unwrap_err();
        assert_eq!((e.line, e.column), (22, 10), "{e}");
        assert!(
            e.to_string()
                .starts_with("f.toml:22:10: unknown node \"C\""),
            "{e}"
        );
        let bad = FIG6.replace("\"7 Mbit/s\"", "\"7 Mbit\"");
        let e = parse(&bad, "f.toml").unwrap_err();
        assert_eq!(e.line, 23, "{e}");
        let bad = FIG6.replace("\"7 Mbit/s\"", "\"0 Mbit/s\"");
        assert!(parse(&bad, "f.toml")
            .unwrap_err()
            .message
            .contains("outside"));
        let bad = FIG6.replace("policy = \"stfq\"\nweight", "policy = \"fifo\"\nweight");
        let e = parse(&bad, "f.toml").unwrap_err();
        assert_eq!(e.line, 10, "{e}");
        // A cycle: root's parent is B.
        let bad = FIG6.replace("name = \"root\"\n", "name = \"root\"\nparent = \"B\"\n");
        let e = parse(&bad, "f.toml").unwrap_err();
        assert!(
            e.message.contains("root (node without parent)") || e.message.contains("cycle"),
            "{e}"
        );
        // Syntax errors keep toml's position.
        let e = parse("[[node]\n", "f.toml").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("[[node]]\nname = 1\n", "f.toml").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
    }

    /// Every shipped example parses and builds.
    #[test]
    fn shipped_examples_are_valid() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/policies");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                load(p.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert!(n >= 9, "{n} examples");
    }

    #[test]
    fn rates_are_exact_or_refused() {
        assert_eq!(parse_rate("10 Mbit/s"), Ok(1_250_000));
        assert_eq!(parse_rate("1.5Gbit/s"), Ok(187_500_000));
        assert_eq!(parse_rate("125000"), Ok(125_000));
        assert_eq!(parse_rate("2 MB/s"), Ok(2_000_000));
        assert!(parse_rate("1 bit/s").is_err());
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("10 furlongs").is_err());
    }
}
