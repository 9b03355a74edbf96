//! A snapshot of a running shaper's statistics: every node, circuit, the
//! default class and the unshaped frames, both directions. The loop
//! copies the numbers on request ([`raw`]: counters, backlogs and each
//! class's last window, no histogram, no name) and hands them to the
//! thread that asked, which puts the names to them and sums the nodes
//! ([`assemble`]) and serialises the result: JSON for `fairway shape
//! stats --json`, the Prometheus exposition for dashboards.
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
    /// Frames queued in an FQ-CoDel flow bucket busy with another flow
    /// (two flows then share a queue), since the start.
    #[serde(default)]
    pub collisions: u64,
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
        self.collisions += o.collisions;
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
            collisions: c.collisions,
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

/// The names and places of every row, fixed for a plan: built once and
/// shared, so that the loop copies only numbers ([`Raw`]) and the thread
/// that asked puts names to them ([`assemble`]).
#[derive(Clone, Debug)]
pub struct Layout {
    /// `(kind, id, name, parent)` of the nodes, then the leaves in the
    /// engine's order (circuits, the default class), then the unshaped
    /// frames.
    pub rows: Vec<(Kind, String, String, Option<String>)>,
    /// How many nodes come first.
    pub nodes: usize,
    /// Each leaf's parent node (the unshaped frames: none).
    pub leaf_parent: Vec<Option<usize>>,
    /// Each node's parent node.
    pub node_parent: Vec<Option<usize>>,
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
        let mut leaf_parent = c.circuit_parent.clone();
        if p.default_class.is_some() {
            let up = parent(c.default_parent);
            rows.push((Kind::Default, "default".into(), "default".into(), up));
            leaf_parent.push(c.default_parent);
        }
        rows.push((Kind::Unshaped, "unshaped".into(), "unshaped".into(), None));
        leaf_parent.push(None);
        Layout {
            rows,
            nodes: p.nodes.len(),
            leaf_parent,
            node_parent: c.node_parent.clone(),
        }
    }
}

/// What the loop copies for a snapshot: numbers only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Raw {
    /// Time since the shaper started, ms.
    pub uptime_ms: u64,
    /// Every leaf (the unshaped frames last), download and upload.
    pub leaves: Vec<[DirStats; 2]>,
    /// Every node's delays, download and upload.
    pub nodes: Vec<[Delay; 2]>,
}

/// One direction of the engine as the loop reads it.
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

/// The loop's part of a snapshot at `now_ns` of a shaper started at
/// `start_ns`: counters, backlogs and each class's last window.
pub fn raw(watch: &Watch, sides: [SideView<'_>; 2], start_ns: u64, now_ns: u64) -> Raw {
    let n = watch.unshaped() + 1;
    let mut leaves = vec![[DirStats::default(); 2]; n];
    for (d, view) in sides.iter().enumerate() {
        for (l, c) in view.leaves.iter().enumerate() {
            leaves[l][d] = DirStats::of(c, (view.backlog)(l as u32));
        }
        leaves[n - 1][d] = DirStats::of(&view.unshaped, view.unshaped_backlog);
        for (l, row) in leaves.iter_mut().enumerate() {
            let class = &watch.leaves[d][l];
            row[d].rate_bps = class.rate(now_ns);
            row[d].delay = class.delays(now_ns).into();
        }
    }
    let nodes = (0..watch.nodes[0].len())
        .map(|i| [0, 1].map(|d| watch.nodes[d][i].delays(now_ns).into()))
        .collect();
    Raw {
        uptime_ms: now_ns.saturating_sub(start_ns) / 1_000_000,
        leaves,
        nodes,
    }
}

/// The snapshot of `raw`: names put to its numbers, every node's
/// counters, backlog and rate summed from the leaves below it.
pub fn assemble(layout: &Layout, raw: &Raw) -> Snapshot {
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
    for (l, both) in raw.leaves.iter().enumerate() {
        let row = &mut classes[layout.nodes + l];
        [row.download, row.upload] = *both;
        let mut up = layout.leaf_parent.get(l).copied().flatten();
        while let Some(n) = up {
            classes[n].download.add(&both[0]);
            classes[n].upload.add(&both[1]);
            up = layout.node_parent[n];
        }
    }
    for (n, [down, up]) in raw.nodes.iter().enumerate() {
        classes[n].download.delay = *down;
        classes[n].upload.delay = *up;
    }
    Snapshot {
        uptime_ms: raw.uptime_ms,
        rate_window_ms: RATE_WINDOW_NS / 1_000_000,
        delay_window_ms: DELAY_WINDOW_NS / 1_000_000,
        classes,
    }
}

#[cfg(test)]
mod tests {
    use super::super::engine::Engine;
    use super::super::headers::tests::udp4;
    use super::super::test_plan::{at, checked, circuit, node, plan};
    use super::*;
    use crate::plan::{Device, Prefix};

    fn device(p: &mut crate::plan::Plan, circuit: &str, ip: &str) {
        p.devices.push(Device {
            id: ip.into(),
            name: ip.into(),
            circuit: circuit.into(),
            mac: None,
            prefixes: vec![Prefix {
                net: ip.parse().unwrap(),
                at: at(),
            }],
            at: at(),
        });
    }

    /// Node `n` holds circuits `a` and `b` (10.0.0.2, 10.0.0.3); `c`
    /// (10.0.0.4) hangs from the root.
    fn engine() -> Engine {
        let mut p = plan(100_000_000);
        node(&mut p, "n", None, 50_000_000, None);
        circuit(&mut p, "a", Some("n"), None, 10_000_000, None);
        circuit(&mut p, "b", Some("n"), None, 10_000_000, None);
        circuit(&mut p, "c", None, None, 10_000_000, None);
        device(&mut p, "a", "10.0.0.2/32");
        device(&mut p, "b", "10.0.0.3/32");
        device(&mut p, "c", "10.0.0.4/32");
        Engine::new(&checked(p), 0).unwrap()
    }

    fn send(e: &mut Engine, dst: u8, len: usize, now: u64) {
        let mut f = udp4([8, 8, 8, 8], [10, 0, 0, dst], 1, 2, None);
        f.resize(len, 0);
        e.receive(Dir::Download, now, |b| {
            let n = f.len().min(b.len());
            b[..n].copy_from_slice(&f[..n]);
            Some(f.len())
        });
    }

    fn drain(e: &mut Engine, now: u64) {
        while let Some(o) = e.next(now) {
            e.sent(o, true);
        }
    }

    fn row<'a>(s: &'a Snapshot, id: &str) -> &'a ClassStats {
        s.classes.iter().find(|c| c.id == id).unwrap()
    }

    #[test]
    fn a_node_sums_its_circuits_and_the_counters_are_the_reports() {
        let mut e = engine();
        // In the first second: 10 frames of 1000 bytes to a, 5 to b, 2 to
        // c, all received at 0 and sent 1 ms later (the buckets' burst
        // lets them all go).
        for (dst, n) in [(2, 10), (3, 5), (4, 2)] {
            for _ in 0..n {
                send(&mut e, dst, 1000, 0);
            }
        }
        drain(&mut e, 1_000_000);
        // Queued, not sent: 3 frames to a at 1.5 s, looked at at once.
        let s = e.snapshot(RATE_WINDOW_NS + RATE_WINDOW_NS / 2);
        let (a, b, c, n) = (row(&s, "a"), row(&s, "b"), row(&s, "c"), row(&s, "n"));
        assert_eq!((a.kind, n.kind), (Kind::Circuit, Kind::Node));
        assert_eq!(a.parent.as_deref(), Some("n"));
        assert_eq!(c.parent, None);
        let sent = |x: &ClassStats| x.download.sent.packets;
        assert_eq!((sent(a), sent(b), sent(c), sent(n)), (10, 5, 2, 15));
        assert_eq!(n.download.sent.bytes, 15_000);
        // 10,000 bytes in the first second: 80 kbit/s; the node, 120.
        assert_eq!(a.download.rate_bps, 80_000);
        assert_eq!(n.download.rate_bps, 120_000);
        assert_eq!(n.upload, DirStats::default());
        // The delay window (10 s) has not ended: no percentiles yet.
        assert_eq!(a.download.delay.samples, 0);
        let later = e.snapshot(DELAY_WINDOW_NS + 1);
        let d = row(&later, "a").download.delay;
        // 1 ms, as the histogram tells it (within 1 %, rounded up).
        assert_eq!(d.samples, 10);
        assert!(
            (1000..=1010).contains(&d.p50_us) && d.max_us == d.p50_us,
            "{d:?}"
        );
        assert_eq!(row(&later, "n").download.delay.samples, 15);
        assert_eq!(row(&later, "a").download.rate_bps, 0);
        // Every counter is the exit report's.
        let report = e.report();
        for r in &report.rows {
            let id = r.class.strip_prefix("circuit ").unwrap();
            let x = row(&later, id).get(r.dir);
            assert_eq!((x.received, x.sent), (r.counters.received, r.counters.sent));
            assert_eq!(x.backlog, r.queued);
        }
    }

    #[test]
    fn backlog_and_drops_add_up_in_a_node() {
        let mut e = engine();
        for _ in 0..200 {
            send(&mut e, 2, 1500, 0);
            send(&mut e, 3, 1500, 0);
        }
        send(&mut e, 3, 3000, 0);
        let s = e.snapshot(0);
        let (a, b, n) = (row(&s, "a"), row(&s, "b"), row(&s, "n"));
        assert!(a.download.backlog.packets > 0);
        assert_eq!(b.download.drops.too_large.packets, 1);
        assert_eq!(
            n.download.backlog.packets,
            a.download.backlog.packets + b.download.backlog.packets
        );
        assert_eq!(
            n.download.drops.overflow.packets,
            a.download.drops.overflow.packets + b.download.drops.overflow.packets
        );
        assert!(n.download.drops.overflow.packets > 0);
        assert_eq!(n.download.drops.too_large.packets, 1);
        let u = row(&s, "unshaped");
        assert_eq!(u.kind, Kind::Unshaped);
    }

    #[test]
    fn flows_sharing_a_bucket_are_counted_per_circuit_and_summed_in_its_node() {
        let mut e = engine();
        // 65 flows queued at once in a circuit of 64 buckets: at least
        // one shares a bucket with another.
        for port in 0..65u16 {
            let f = udp4([8, 8, 8, 8], [10, 0, 0, 2], 1000 + port, 2, None);
            e.receive(Dir::Download, 0, |b| {
                b[..f.len()].copy_from_slice(&f);
                Some(f.len())
            });
        }
        send(&mut e, 3, 100, 0);
        let s = e.snapshot(0);
        let (a, b, n) = (row(&s, "a"), row(&s, "b"), row(&s, "n"));
        assert_eq!(a.download.backlog.packets, 65, "none dropped");
        assert!(a.download.collisions > 0, "{:?}", a.download);
        assert_eq!(b.download.collisions, 0);
        assert_eq!(n.download.collisions, a.download.collisions);
        assert_eq!(a.upload.collisions, 0);
    }

    #[test]
    fn the_snapshot_survives_json() {
        let mut e = engine();
        send(&mut e, 2, 500, 0);
        drain(&mut e, 2_000);
        let s = e.snapshot(DELAY_WINDOW_NS + 5);
        let text = serde_json::to_string(&s).unwrap();
        let back: Snapshot = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert!(text.contains("\"kind\":\"circuit\""), "{text}");
        assert_eq!(row(&back, "a").download.delay.p99_us, 2);
    }
}
