//! `fairway policy run`: a policy tree feeding one constant-rate link,
//! driven by a flow-set workload (the `WEIGHTxCOUNT[@MAXLEN]` syntax of
//! `bench` and `guarantees`), and what every node and flow got.
//!
//! Workload flow `k` sends into policy flow `k mod flows`. With `load = 0`
//! every workload flow is greedy: it keeps `backlog` packets queued, so
//! shares and limits are visible. With `0 < load`, flow `k` offers
//! `load · link · weight_k / Σ weights` with exponential gaps (seeded).
//! Packet ranks come from the policy file's annotators (`deadline_us`,
//! `message_bytes`).
//!
//! Reported per node and flow: packets, bytes, throughput, share of the
//! link's bytes, sojourn-time percentiles, and for every rate limit the
//! departures at which the limit was exceeded over some window (the check
//! of `fairway_core::policy::tree`: bytes after the first departure of a
//! window and before the last ≤ rate · window), in O(1) per departure.

use super::run_check::MAX_RUN_PACKETS;
use crate::workload::{FlowSet, PacketSizes};
use fairway_core::policy::{tx_ns, BuildError, PolicyEnqueueErrorKind, PolicyTree};
use fairway_core::Packet;
use fairway_policy_file::{PolicyFile, RankSource};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

/// The experiment.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Workload flows.
    pub flows: FlowSet,
    /// Packet lengths.
    pub sizes: PacketSizes,
    /// Link rate, bytes/s.
    pub link: u64,
    /// Simulated time, ns.
    pub duration_ns: u64,
    /// Offered load as a fraction of the link; 0 = greedy sources.
    pub load: f64,
    /// Packets each greedy source keeps queued (`load` 0), `1..=`
    /// the policy's `max_packets` / workload flows.
    pub backlog: u64,
    /// RNG seed.
    pub seed: u64,
}

/// What one node or flow got.
#[derive(Clone, Debug, Serialize)]
pub struct EntityReport {
    /// Its name in the policy file.
    pub name: String,
    /// Packets sent.
    pub packets: u64,
    /// Bytes sent.
    pub bytes: u64,
    /// Throughput over the run, bit/s.
    pub throughput_bps: f64,
    /// Fraction of all bytes the link sent.
    pub share: f64,
    /// Sojourn time percentiles (enqueue to departure), µs.
    pub delay_p50_us: f64,
    /// 99th percentile, µs.
    pub delay_p99_us: f64,
    /// Maximum, µs.
    pub delay_max_us: f64,
    /// Its rate limit, bytes/s.
    pub rate_limit: Option<u64>,
    /// Departures at which the limit was exceeded over some window.
    pub limit_violations: u64,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Link rate, bytes/s.
    pub link: u64,
    /// Simulated ns.
    pub duration_ns: u64,
    /// Packets offered.
    pub offered: u64,
    /// Packets refused: rank outside a queue's horizon (or decreasing).
    pub refused_rank: u64,
    /// Packets refused: every slot in use.
    pub refused_full: u64,
    /// Internal ranks that missed a window (must be 0).
    pub internal_misses: u64,
    /// Packets still queued at the end.
    pub left_queued: u64,
    /// Per node.
    pub nodes: Vec<EntityReport>,
    /// Per flow.
    pub flows: Vec<EntityReport>,
}

/// A packet of the simulation: its length and its workload flow.
struct Pkt {
    len: u32,
    src: u32,
}

impl Packet for Pkt {
    fn len(&self) -> u32 {
        self.len
    }
}

/// Incremental rate-limit check (see the module doc): with `B` the bytes
/// sent before departure `k` and `t_k` its time, the limit holds iff
/// `B_j - r·t_j ≤ B_{i+1} - r·t_i` for all `i < j`; keep the minimum of the
/// right side (scaled by 10^9 to stay in integers).
#[derive(Clone, Copy)]
struct LimitCheck {
    rate: u64,
    bytes: i128,
    best: Option<i128>,
    violations: u64,
}

impl LimitCheck {
    fn on_departure(&mut self, t: u64, len: u32) {
        let r = i128::from(self.rate);
        let lhs = self.bytes * 1_000_000_000 - r * i128::from(t);
        if self.best.is_some_and(|b| lhs > b) {
            self.violations += 1;
        }
        self.bytes += i128::from(len);
        let rhs = self.bytes * 1_000_000_000 - r * i128::from(t);
        self.best = Some(self.best.map_or(rhs, |b| b.min(rhs)));
    }
}

/// Why a run could not start.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// The policy's tree did not build.
    Policy(BuildError),
    /// A parameter outside its range (see [`super::run_check`]).
    OutOfRange {
        /// The parameter, as [`RunConfig`] names it.
        param: &'static str,
        /// The value given.
        value: String,
        /// The allowed range.
        range: String,
        /// Why the range is what it is.
        why: &'static str,
    },
    /// An offered load outside `0..=10` (fraction of the link), NaN or
    /// infinite.
    LoadOutOfRange(f64),
    /// The link could send more packets in the run than
    /// [`MAX_RUN_PACKETS`].
    TooManyPackets {
        /// Packets the link could send (times the load above 1).
        packets: u128,
        /// The run's duration, ns.
        duration_ns: u64,
        /// The link, bytes/s.
        link: u64,
        /// The smallest packet, bytes.
        min_len: u32,
    },
    /// A trace replay (`--trace`): its file, line and reason.
    Trace(super::trace_csv::TraceFileError),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Policy(e) => write!(f, "policy: {e}"),
            RunError::OutOfRange {
                param,
                value,
                range,
                why,
            } => write!(f, "{param} {value} outside {range} ({why})"),
            RunError::Trace(e) => e.fmt(f),
            RunError::LoadOutOfRange(load) => {
                write!(f, "load {load} outside 0..=10 (fraction of the link)")
            }
            RunError::TooManyPackets {
                packets,
                duration_ns,
                link,
                min_len,
            } => write!(
                f,
                "duration {duration_ns} ns at link {link} B/s with {min_len}-byte packets can send \
                 {packets} packets: at most {MAX_RUN_PACKETS} per run (each keeps its sojourn \
                 time, 8 bytes, for the percentiles); shorten the duration"
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// What one node or flow has sent so far.
#[derive(Default)]
struct Acc {
    packets: u64,
    bytes: u64,
    limit: Option<LimitCheck>,
}

impl Acc {
    /// Nothing sent yet; the limit check of `rate`, if any.
    fn new(rate: Option<u64>) -> Self {
        Self {
            limit: rate.map(|rate| LimitCheck {
                rate,
                bytes: 0,
                best: None,
                violations: 0,
            }),
            ..Self::default()
        }
    }

    /// A packet of `len` bytes left at `now`.
    fn on_departure(&mut self, now: u64, len: u32) {
        self.packets += 1;
        self.bytes += u64::from(len);
        if let Some(l) = &mut self.limit {
            l.on_departure(now, len);
        }
    }

    /// What it got over `secs` seconds of a link that sent `total_bytes`,
    /// its packets' sojourn times `delays` sorted.
    fn report(
        &self,
        name: &str,
        limit: Option<u64>,
        secs: f64,
        total_bytes: u64,
        delays: &[u64],
    ) -> EntityReport {
        let pct = |p: f64| -> f64 {
            if delays.is_empty() {
                return 0.0;
            }
            let i = ((delays.len() as f64 - 1.0) * p).round() as usize;
            delays[i] as f64 / 1000.0
        };
        EntityReport {
            name: name.to_string(),
            packets: self.packets,
            bytes: self.bytes,
            throughput_bps: self.bytes as f64 * 8.0 / secs,
            share: if total_bytes == 0 {
                0.0
            } else {
                self.bytes as f64 / total_bytes as f64
            },
            delay_p50_us: pct(0.5),
            delay_p99_us: pct(0.99),
            delay_max_us: pct(1.0),
            rate_limit: limit,
            limit_violations: self.limit.map_or(0, |l| l.violations),
        }
    }
}

/// One run in progress: the tree, the sources, the link and the
/// accounting.
struct Sim<'a> {
    policy: &'a PolicyFile,
    cfg: &'a RunConfig,
    tree: PolicyTree<Pkt>,
    /// Workload flows: (weight, max length).
    w: Vec<(u32, u32)>,
    /// Sum of the workload weights.
    wsum: u64,
    rng: StdRng,
    /// Ancestors of each policy flow (node indices; at most
    /// `MAX_ANCESTOR_PAIRS` in all, checked).
    anc: Vec<Vec<u32>>,
    /// The rate-limited ancestors of each policy flow: the only ones a
    /// departure updates (packets and bytes of every node are the tree's
    /// own counters), so a packet's accounting is not linear in its depth.
    limited_anc: Vec<Vec<u32>>,
    nodes: Vec<Acc>,
    flows: Vec<Acc>,
    /// Sojourn times of each policy flow's packets; a node's are the union
    /// of its flows', put together only for the report.
    delays: Vec<Vec<u64>>,
    /// Per workload flow: bytes left in its current message (pFabric).
    remaining: Vec<u64>,
    offered: u64,
    refused_rank: u64,
    refused_full: u64,
    /// Next arrival of each non-greedy source: (time, workload flow).
    arrivals: BinaryHeap<Reverse<(u64, u32)>>,
    now: u64,
    link_free: u64,
    total_bytes: u64,
}

/// Runs `cfg` through the tree of `policy`.
pub fn run(policy: &PolicyFile, cfg: &RunConfig) -> Result<RunReport, RunError> {
    let mut sim = Sim::new(policy, cfg)?;
    sim.start_sources();
    while sim.now < cfg.duration_ns {
        sim.admit_arrivals();
        sim.serve_link();
        match sim.next_event() {
            Some(next) => sim.now = if next == sim.now { next + 1 } else { next },
            None => break,
        }
    }
    Ok(sim.report())
}

impl<'a> Sim<'a> {
    /// Checks `cfg` and builds the tree; nothing offered yet.
    fn new(policy: &'a PolicyFile, cfg: &'a RunConfig) -> Result<Self, RunError> {
        let tree: PolicyTree<Pkt> = PolicyTree::build(&policy.spec).map_err(RunError::Policy)?;
        super::run_check::check(policy, cfg)?;
        let w: Vec<(u32, u32)> = cfg.flows.flows();
        let anc = policy
            .spec
            .flows
            .iter()
            .map(|f| {
                let mut v = vec![f.parent];
                let mut n = f.parent;
                while let Some(p) = policy.spec.nodes[n as usize].parent {
                    v.push(p);
                    n = p;
                }
                v
            })
            .collect::<Vec<Vec<u32>>>();
        let limited_anc = (anc.iter())
            .map(|a| {
                let limited = |n: &&u32| policy.spec.nodes[**n as usize].params.rate.is_some();
                a.iter().filter(limited).copied().collect()
            })
            .collect();
        Ok(Self {
            policy,
            cfg,
            tree,
            limited_anc,
            delays: vec![Vec::new(); policy.spec.flows.len()],
            wsum: w.iter().map(|f| u64::from(f.0)).sum(),
            remaining: vec![0; w.len()],
            w,
            rng: StdRng::seed_from_u64(cfg.seed),
            anc,
            nodes: policy
                .spec
                .nodes
                .iter()
                .map(|n| Acc::new(n.params.rate))
                .collect(),
            flows: policy
                .spec
                .flows
                .iter()
                .map(|f| Acc::new(f.params.rate))
                .collect(),
            offered: 0,
            refused_rank: 0,
            refused_full: 0,
            arrivals: BinaryHeap::new(),
            now: 0,
            link_free: 0,
            total_bytes: 0,
        })
    }

    /// Every source is greedy (`load` 0).
    fn greedy(&self) -> bool {
        self.cfg.load == 0.0
    }

    /// Greedy sources queue their backlog; the others draw their first
    /// arrival.
    fn start_sources(&mut self) {
        for k in 0..self.w.len() {
            if self.greedy() {
                for _ in 0..self.cfg.backlog {
                    self.offer(0, k as u32);
                }
            } else {
                let t = self.gap(k);
                self.arrivals.push(Reverse((t, k as u32)));
            }
        }
    }

    /// Offers one packet of workload flow `src` at `now`, ranked by its
    /// policy flow's annotator.
    fn offer(&mut self, now: u64, src: u32) {
        // In range by `run_check`: MIN ≤ ml ≤ the policy's max_packet_len.
        let (_, ml) = self.w[src as usize];
        let len = self.cfg.sizes.draw(&mut self.rng, ml);
        let pf = src % self.policy.spec.flows.len() as u32;
        let rank = match self.policy.ranks[pf as usize] {
            RankSource::None => 0,
            RankSource::Deadline(d) => now.saturating_add(d),
            RankSource::Remaining(m) => {
                let r = &mut self.remaining[src as usize];
                if *r == 0 {
                    *r = m;
                }
                let rank = *r;
                *r = r.saturating_sub(u64::from(len));
                rank
            }
        };
        self.offered += 1;
        if let Err(e) = self.tree.enqueue(now, pf, Pkt { len, src }, rank) {
            match e.kind {
                PolicyEnqueueErrorKind::Full { .. } => self.refused_full += 1,
                _ => self.refused_rank += 1,
            }
        }
    }

    /// Exponential gap to source `k`'s next arrival (ns, at least 1).
    fn gap(&mut self, k: usize) -> u64 {
        let cfg = self.cfg;
        let rate = cfg.load * cfg.link as f64 * f64::from(self.w[k].0) / self.wsum as f64;
        let mean_ns = f64::from(self.w[k].1) * 1e9 / rate;
        let u: f64 = self.rng.random_range(f64::MIN_POSITIVE..1.0);
        // A gap beyond u64 (a vanishing load) is an arrival after any run
        // ends: saturating keeps it there instead of wrapping.
        ((-u.ln() * mean_ns) as u64).saturating_add(1)
    }

    /// Offers every arrival due by now, drawing each source's next.
    fn admit_arrivals(&mut self) {
        while let Some(&Reverse((t, k))) = self.arrivals.peek() {
            if t > self.now {
                break;
            }
            self.arrivals.pop();
            self.offer(t, k);
            let g = self.gap(k as usize);
            self.arrivals.push(Reverse((t.saturating_add(g), k)));
        }
    }

    /// When the link is free, sends the tree's next packet and accounts it
    /// to its flow and every ancestor; a greedy source refills.
    fn serve_link(&mut self) {
        let now = self.now;
        if now < self.link_free {
            return;
        }
        let Some(s) = self.tree.dequeue(now) else {
            return;
        };
        let len = s.packet.len;
        let delay = now - s.enqueued_at;
        self.total_bytes += u64::from(len);
        let f = s.flow as usize;
        self.flows[f].on_departure(now, len);
        self.delays[f].push(delay);
        for &a in &self.limited_anc[f] {
            self.nodes[a as usize].on_departure(now, len);
        }
        self.link_free = now + tx_ns(len, self.cfg.link);
        if self.greedy() {
            self.offer(now, s.packet.src);
        }
    }

    /// The next event: a link slot, a shaper release or an arrival.
    fn next_event(&self) -> Option<u64> {
        let now = self.now;
        let mut next = u64::MAX;
        if self.link_free > now {
            next = self.link_free;
        } else if let Some(t) = self.tree.next_eligible(now) {
            next = t.max(now);
        }
        if let Some(&Reverse((t, _))) = self.arrivals.peek() {
            next = next.min(t);
        }
        (next != u64::MAX).then_some(next)
    }

    /// What every node and flow got.
    fn report(mut self) -> RunReport {
        let secs = self.cfg.duration_ns as f64 / 1e9;
        let (policy, total) = (self.policy, self.total_bytes);
        let st = self.tree.stats();
        for d in &mut self.delays {
            d.sort_unstable();
        }
        // Each node's flows; a node with one flow below it (every node of
        // a chain) reports that flow's sorted sojourn times as they are.
        let mut below: Vec<Vec<u32>> = vec![Vec::new(); policy.spec.nodes.len()];
        for (f, anc) in self.anc.iter().enumerate() {
            for &a in anc {
                below[a as usize].push(f as u32);
            }
        }
        let mut merged = Vec::new();
        let nodes = (self.nodes.iter_mut().enumerate())
            .map(|(i, a)| {
                let served = self.tree.node_served(i as u32).unwrap_or_default();
                (a.packets, a.bytes) = (served.packets, served.bytes);
                let delays: &[u64] = match below[i].as_slice() {
                    [f] => &self.delays[*f as usize],
                    fs => {
                        merged.clear();
                        fs.iter()
                            .for_each(|&f| merged.extend_from_slice(&self.delays[f as usize]));
                        merged.sort_unstable();
                        &merged
                    }
                };
                let limit = policy.spec.nodes[i].params.rate;
                a.report(&policy.node_names[i], limit, secs, total, delays)
            })
            .collect();
        RunReport {
            link: self.cfg.link,
            duration_ns: self.cfg.duration_ns,
            offered: self.offered,
            refused_rank: self.refused_rank,
            refused_full: self.refused_full,
            internal_misses: st.internal_misses,
            left_queued: u64::from(self.tree.len()),
            nodes,
            flows: (self.flows.iter().enumerate())
                .map(|(i, a)| {
                    let limit = policy.spec.flows[i].params.rate;
                    a.report(&policy.flow_names[i], limit, secs, total, &self.delays[i])
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig6_run_keeps_limits_and_loses_nothing() {
        let text = r#"
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
        let p = fairway_policy_file::parse(text, "t.toml").unwrap();
        let cfg = RunConfig {
            flows: FlowSet::parse("1x3").unwrap(),
            sizes: PacketSizes::Fixed,
            link: 125_000_000,
            duration_ns: 1_000_000_000,
            load: 0.0,
            backlog: 8,
            seed: 1,
        };
        let r = run(&p, &cfg).unwrap();
        assert_eq!(r.internal_misses, 0);
        for n in r.nodes.iter().chain(&r.flows) {
            assert_eq!(n.limit_violations, 0, "{}", n.name);
        }
        // Root paced at 20 Mbit/s: B gets its 10 Mbit/s limit, flow 0 the rest.
        let root = r.nodes[0].throughput_bps;
        assert!((root - 20e6).abs() / 20e6 < 0.01, "root {root}");
        let b = r.nodes[1].throughput_bps;
        assert!((b - 10e6).abs() / 10e6 < 0.01, "B {b}");
        let sent: u64 = r.flows.iter().map(|f| f.packets).sum();
        assert_eq!(
            r.offered,
            sent + r.left_queued + r.refused_full + r.refused_rank
        );
    }

    /// Scheduler nodes named by parameterised registry specs run end to
    /// end: a `drr:quantum=3000` root shares 3:1 between a `qfq+:m=4`
    /// class of four flows and a fifth flow, the class's flows 1:1:1:1.
    #[test]
    fn parameterised_scheduler_nodes_share_by_weight() {
        let text = r#"
[[node]]
name = "root"
policy = "drr:quantum=3000"
[[node]]
name = "class"
parent = "root"
policy = "qfq+:m=4"
weight = 3
[[flow]]
parent = "class"
count = 4
[[flow]]
parent = "root"
"#;
        let p = fairway_policy_file::parse(text, "t.toml").unwrap();
        let cfg = RunConfig {
            flows: FlowSet::parse("1x5").unwrap(),
            sizes: PacketSizes::Fixed,
            link: 12_500_000,
            duration_ns: 1_000_000_000,
            load: 0.0,
            backlog: 8,
            seed: 1,
        };
        let r = run(&p, &cfg).unwrap();
        assert_eq!(r.internal_misses, 0);
        assert!(
            (r.nodes[1].share - 0.75).abs() < 0.01,
            "{}",
            r.nodes[1].share
        );
        for f in &r.flows[..4] {
            assert!((f.share - 0.1875).abs() < 0.01, "{}: {}", f.name, f.share);
        }
    }

    /// A run that cannot start says why, typed, with the CLI's message.
    #[test]
    fn bad_runs_are_typed_errors() {
        let text = "[[node]]\nname = \"r\"\npolicy = \"stfq\"\n[[flow]]\nparent = \"r\"\n";
        let p = fairway_policy_file::parse(text, "t.toml").unwrap();
        let cfg = RunConfig {
            flows: FlowSet::parse("1x2").unwrap(),
            sizes: PacketSizes::Fixed,
            link: 0,
            duration_ns: 1_000_000,
            load: 0.0,
            backlog: 1,
            seed: 1,
        };
        let e = run(&p, &cfg).unwrap_err();
        assert_eq!(
            e.to_string(),
            "link 0 B/s outside 1..=1099511627776 B/s (the policy tree's rate ceiling (8.8 Tbit/s))"
        );
        let e = run(
            &p,
            &RunConfig {
                link: 1,
                load: 11.0,
                ..cfg.clone()
            },
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "load 11 outside 0..=10 (fraction of the link)"
        );
        let mut broken = p.clone();
        broken.spec.max_packets = 0;
        let e = run(&broken, &RunConfig { link: 1, ..cfg }).unwrap_err();
        assert!(matches!(e, RunError::Policy(_)), "{e}");
        assert_eq!(
            e.to_string(),
            "policy: invalid parameter: max_packets must be 1..=2^26 (67108864): every slot is allocated up front, about 32 bytes plus the packet"
        );
    }

    #[test]
    fn limit_check_can_fail() {
        let mut l = LimitCheck {
            rate: 1000,
            bytes: 0,
            best: None,
            violations: 0,
        };
        // 1000-byte packets at 1000 B/s: one per second is fine...
        for k in 0..5 {
            l.on_departure(k * 1_000_000_000, 1000);
        }
        assert_eq!(l.violations, 0);
        // ...then 2000 bytes between departures 1.3 s apart is not.
        l.on_departure(5_100_000_000, 1000);
        l.on_departure(5_200_000_000, 1000);
        assert_eq!(l.violations, 0, "one packet of slack");
        l.on_departure(5_300_000_000, 1000);
        assert!(l.violations > 0);
    }
}
