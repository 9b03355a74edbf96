//! A snapshot of a running shaper's statistics: every node, circuit, the
//! default class and the unshaped frames, both directions. The loop
//! builds it on request ([`build`], a copy of counters and of each
//! class's last window, no histogram copied) and hands it to other
//! threads (the control socket, the metrics endpoint), which serialise
//! it: JSON for `fairway shape stats --json`, the Prometheus exposition
//! for dashboards.
//!
//! A node's counters and backlog are the sums of the circuits below it
//! (at any depth), its rate the sum of their rates (all windows are
//! aligned, so the sum is exact); its delays are measured on its own
//! (every frame sent from its subtree).

use super::stats::{Count, Counters};
use super::watch::{Quantiles, Watch, DELAY_WINDOW_NS, RATE_WINDOW_NS};
use crate::plan::Dir;
use crate::validate::Checked;
use serde::{Deserialize, Serialize};

/// What a row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A node of the plan (its subtree).
    Node,
    /// A circuit.
    Circuit,
    /// The default class.
    Default,
    /// Frames passed unshaped (not IP, or unclaimed without a default
    /// class).
    Unshaped,
}

impl Kind {
    /// `node`, `circuit`, `default`, `unshaped`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Node => "node",
            Kind::Circuit => "circuit",
            Kind::Default => "default",
            Kind::Unshaped => "unshaped",
        }
    }
}

/// Frames dropped, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drops {
    /// By CoDel.
    pub codel: Count,
    /// The circuit's queue was full.
    pub overflow: Count,
    /// Longer than a pool slot.
    pub too_large: Count,
    /// No free pool slot.
    pub no_slot: Count,
    /// The send failed.
    pub send_failed: Count,
}

impl Drops {
    /// Reason names as in the exit table and the metrics' `reason` label,
    /// with their counts.
    pub fn by_reason(&self) -> [(&'static str, Count); 5] {
        [
            ("codel", self.codel),
            ("overflow", self.overflow),
            ("too_large", self.too_large),
            ("no_slot", self.no_slot),
            ("send_failed", self.send_failed),
        ]
    }
}

/// Queueing delay over the last complete delay window, µs (all 0 when no
/// frame was sent in it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delay {
    /// Frames measured.
    pub samples: u64,
    /// Median, µs.
    pub p50_us: u64,
    /// 90th percentile, µs.
    pub p90_us: u64,
    /// 99th percentile, µs.
    pub p99_us: u64,
    /// Largest, µs.
    pub max_us: u64,
}

impl From<Quantiles> for Delay {
    fn from(q: Quantiles) -> Self {
        Delay {
            samples: q.samples,
            p50_us: q.p50,
            p90_us: q.p90,
            p99_us: q.p99,
            max_us: q.max,
        }
    }
}

/// One class in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirStats {
    /// Received.
    pub received: Count,
    /// Sent on.
    pub sent: Count,
    /// Dropped, by reason.
    pub drops: Drops,
    /// Queued now.
    pub backlog: Count,
    /// Bit/s sent over the last complete rate window.
    pub rate_bps: u64,
    /// Queueing delay of the frames sent in the last complete delay
    /// window.
    pub delay: Delay,
}

impl DirStats {
    fn add(&mut self, o: &DirStats) {
        let pairs = [
            (&mut self.received, o.received),
            (&mut self.sent, o.sent),
            (&mut self.drops.codel, o.drops.codel),
            (&mut self.drops.overflow, o.drops.overflow),
            (&mut self.drops.too_large, o.drops.too_large),
            (&mut self.drops.no_slot, o.drops.no_slot),
            (&mut self.drops.send_failed, o.drops.send_failed),
            (&mut self.backlog, o.backlog),
        ];
        for (sum, x) in pairs {
            sum.packets += x.packets;
            sum.bytes += x.bytes;
        }
        self.rate_bps += o.rate_bps;
    }

    fn of(c: &Counters, backlog: Count) -> Self {
        DirStats {
            received: c.received,
            sent: c.sent,
            drops: Drops {
                codel: c.codel,
                overflow: c.overflow,
                too_large: c.too_large,
                no_slot: c.no_slot,
                send_failed: c.send_failed,
            },
            backlog,
            ..DirStats::default()
        }
    }
}

/// One row: a node, circuit, the default class or the unshaped frames.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassStats {
    /// What it is.
    pub kind: Kind,
    /// A node's name, a circuit's id, `default` or `unshaped`.
    pub id: String,
    /// A circuit's name (its id for the others).
    pub name: String,
    /// Its parent node (`None`: the root).
    pub parent: Option<String>,
    /// Toward the subscribers.
    pub download: DirStats,
    /// Toward the Internet.
    pub upload: DirStats,
}

impl ClassStats {
    /// The stats of a direction.
    pub fn get(&self, d: Dir) -> &DirStats {
        match d {
            Dir::Download => &self.download,
            Dir::Upload => &self.upload,
        }
    }
}

/// The statistics of a running shaper at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Time since the shaper started, ms.
    pub uptime_ms: u64,
    /// The window the rates are measured over, ms.
    pub rate_window_ms: u64,
    /// The window the delay percentiles are measured over, ms.
    pub delay_window_ms: u64,
    /// Nodes (the plan's order), then circuits, the default class and
    /// the unshaped frames.
    pub classes: Vec<ClassStats>,
}

/// The names of every row, fixed for a plan: built once, so that a
/// snapshot only copies them.
#[derive(Clone, Debug)]
pub struct Layout {
    /// `(kind, id, name, parent)` of the nodes, then the leaves in the
    /// engine's order (circuits, the default class), then the unshaped
    /// frames.
    pub rows: Vec<(Kind, String, String, Option<String>)>,
    /// How many nodes come first.
    pub nodes: usize,
}

impl Layout {
    /// The rows of a plan.
    pub fn of(c: &Checked) -> Self {
        let p = &c.plan;
        let parent = |x: Option<usize>| x.map(|i| p.nodes[i].name.clone());
        let mut rows: Vec<_> = p
            .nodes
            .iter()
            .zip(&c.node_parent)
            .map(|(n, &up)| (Kind::Node, n.name.clone(), n.name.clone(), parent(up)))
            .collect();
        let circuits = p.circuits.iter().zip(&c.circuit_parent);
        rows.extend(
            circuits.map(|(k, &up)| (Kind::Circuit, k.id.clone(), k.name.clone(), parent(up))),
        );
        if p.default_class.is_some() {
            let up = parent(c.default_parent);
            rows.push((Kind::Default, "default".into(), "default".into(), up));
        }
        rows.push((Kind::Unshaped, "unshaped".into(), "unshaped".into(), None));
        Layout {
            rows,
            nodes: p.nodes.len(),
        }
    }
}

/// One direction of the engine as the snapshot reads it.
pub struct SideView<'a> {
    /// The leaves' counters (circuits, then the default class).
    pub leaves: &'a [Counters],
    /// A leaf's backlog.
    pub backlog: &'a dyn Fn(u32) -> Count,
    /// The unshaped frames' counters.
    pub unshaped: Counters,
    /// The unshaped frames still queued.
    pub unshaped_backlog: Count,
}

fn dir_mut(c: &mut ClassStats, d: usize) -> &mut DirStats {
    if d == 0 {
        &mut c.download
    } else {
        &mut c.upload
    }
}

/// The snapshot at `now_ns` of a shaper started at `start_ns`.
pub fn build(
    layout: &Layout,
    watch: &Watch,
    sides: [SideView<'_>; 2],
    start_ns: u64,
    now_ns: u64,
) -> Snapshot {
    let mut classes: Vec<ClassStats> = layout
        .rows
        .iter()
        .map(|(kind, id, name, parent)| ClassStats {
            kind: *kind,
            id: id.clone(),
            name: name.clone(),
            parent: parent.clone(),
            download: DirStats::default(),
            upload: DirStats::default(),
        })
        .collect();
    let first_leaf = layout.nodes;
    for (d, view) in sides.iter().enumerate() {
        let leaves = view
            .leaves
            .iter()
            .enumerate()
            .map(|(l, c)| (l, DirStats::of(c, (view.backlog)(l as u32))))
            .chain([(
                watch.unshaped(),
                DirStats::of(&view.unshaped, view.unshaped_backlog),
            )]);
        for (l, mut s) in leaves {
            s.rate_bps = watch.leaves[d][l].rate(now_ns);
            s.delay = watch.leaves[d][l].delays(now_ns).into();
            let mut up = watch.leaf_parent[l];
            while let Some(n) = up {
                dir_mut(&mut classes[n], d).add(&s);
                up = watch.node_parent[n];
            }
            *dir_mut(&mut classes[first_leaf + l], d) = s;
        }
        for (n, class) in watch.nodes[d].iter().enumerate() {
            dir_mut(&mut classes[n], d).delay = class.delays(now_ns).into();
        }
    }
    Snapshot {
        uptime_ms: now_ns.saturating_sub(start_ns) / 1_000_000,
        rate_window_ms: RATE_WINDOW_NS / 1_000_000,
        delay_window_ms: DELAY_WINDOW_NS / 1_000_000,
        classes,
    }
}
