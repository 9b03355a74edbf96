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

use super::config::{PolicyConfig, RankSource};
use crate::workload::{FlowSet, PacketSizes};
use fairway_core::policy::{tx_ns, PolicyEnqueueErrorKind, PolicyTree};
use fairway_core::Packet;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    /// Packets each greedy source keeps queued.
    pub backlog: u32,
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

#[derive(Default)]
struct Acc {
    packets: u64,
    bytes: u64,
    delays: Vec<u64>,
    limit: Option<LimitCheck>,
}

/// Runs `cfg` through the tree of `policy`.
pub fn run(policy: &PolicyConfig, cfg: &RunConfig) -> Result<RunReport, String> {
    let mut tree: PolicyTree<Pkt> =
        PolicyTree::build(&policy.spec).map_err(|e| format!("policy: {e}"))?;
    if cfg.link == 0 {
        return Err("link rate must be >= 1 byte/s".into());
    }
    if !(0.0..=10.0).contains(&cfg.load) {
        return Err(format!(
            "load {} outside 0..=10 (fraction of the link)",
            cfg.load
        ));
    }
    let nf = policy.spec.flows.len() as u32;
    let w: Vec<(u32, u32)> = cfg.flows.flows();
    let max_len = policy.spec.max_packet_len;
    let wsum: u64 = w.iter().map(|f| u64::from(f.0)).sum();
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    // Ancestors of each flow (node indices), for per-node accounting.
    let mut anc: Vec<Vec<usize>> = Vec::with_capacity(nf as usize);
    for f in &policy.spec.flows {
        let mut v = vec![f.parent as usize];
        while let Some(p) = policy.spec.nodes[*v.last().unwrap_or(&0)].parent {
            v.push(p as usize);
        }
        anc.push(v);
    }
    let mk = |rate: Option<u64>| Acc {
        limit: rate.map(|rate| LimitCheck {
            rate,
            bytes: 0,
            best: None,
            violations: 0,
        }),
        ..Acc::default()
    };
    let mut nodes: Vec<Acc> = policy
        .spec
        .nodes
        .iter()
        .map(|n| mk(n.params.rate))
        .collect();
    let mut flows: Vec<Acc> = policy
        .spec
        .flows
        .iter()
        .map(|f| mk(f.params.rate))
        .collect();
    let mut remaining: Vec<u64> = vec![0; w.len()];
    let (mut offered, mut refused_rank, mut refused_full) = (0u64, 0u64, 0u64);
    let mut offer = |tree: &mut PolicyTree<Pkt>, rng: &mut StdRng, now: u64, src: u32| {
        let (_, ml) = w[src as usize];
        let len = cfg.sizes.draw(rng, ml.min(max_len));
        let pf = src % nf;
        let rank = match policy.ranks[pf as usize] {
            RankSource::None => 0,
            RankSource::Deadline(d) => now.saturating_add(d),
            RankSource::Remaining(m) => {
                let r = &mut remaining[src as usize];
                if *r == 0 {
                    *r = m;
                }
                let rank = *r;
                *r = r.saturating_sub(u64::from(len));
                rank
            }
        };
        offered += 1;
        match tree.enqueue(now, pf, Pkt { len, src }, rank) {
            Ok(()) => true,
            Err(e) => {
                match e.kind {
                    PolicyEnqueueErrorKind::Full { .. } => refused_full += 1,
                    _ => refused_rank += 1,
                }
                false
            }
        }
    };
    let greedy = cfg.load == 0.0;
    let mut arrivals: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let gap = |rng: &mut StdRng, k: usize| -> u64 {
        let rate = cfg.load * cfg.link as f64 * f64::from(w[k].0) / wsum as f64;
        let mean_ns = f64::from(w[k].1.min(max_len)) * 1e9 / rate.max(1e-9);
        let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
        (-u.ln() * mean_ns) as u64 + 1
    };
    for k in 0..w.len() {
        if greedy {
            for _ in 0..cfg.backlog.max(1) {
                offer(&mut tree, &mut rng, 0, k as u32);
            }
        } else {
            let t = gap(&mut rng, k);
            arrivals.push(Reverse((t, k as u32)));
        }
    }
    let mut now = 0u64;
    let mut link_free = 0u64;
    let mut total_bytes = 0u64;
    while now < cfg.duration_ns {
        while let Some(&Reverse((t, k))) = arrivals.peek() {
            if t > now {
                break;
            }
            arrivals.pop();
            offer(&mut tree, &mut rng, t, k);
            let g = gap(&mut rng, k as usize);
            arrivals.push(Reverse((t + g, k)));
        }
        if now >= link_free {
            if let Some(s) = tree.dequeue(now) {
                let len = s.packet.len;
                let delay = now - s.enqueued_at;
                total_bytes += u64::from(len);
                let f = s.flow as usize;
                for a in std::iter::once(&mut flows[f]).chain(
                    nodes
                        .iter_mut()
                        .enumerate()
                        .filter(|(i, _)| anc[f].contains(i))
                        .map(|(_, a)| a),
                ) {
                    a.packets += 1;
                    a.bytes += u64::from(len);
                    a.delays.push(delay);
                    if let Some(l) = &mut a.limit {
                        l.on_departure(now, len);
                    }
                }
                link_free = now + tx_ns(len, cfg.link);
                if greedy {
                    offer(&mut tree, &mut rng, now, s.packet.src);
                }
            }
        }
        // Next event: a link slot, a shaper release or an arrival.
        let mut next = u64::MAX;
        if link_free > now {
            next = link_free;
        } else if let Some(t) = tree.next_eligible(now) {
            if t > now {
                next = t;
            } else {
                next = now;
            }
        }
        if let Some(&Reverse((t, _))) = arrivals.peek() {
            next = next.min(t);
        }
        if next == u64::MAX {
            break;
        }
        now = if next == now { now + 1 } else { next };
    }
    let secs = cfg.duration_ns as f64 / 1e9;
    let report = |name: &str, a: &mut Acc, limit: Option<u64>| {
        a.delays.sort_unstable();
        let pct = |p: f64| -> f64 {
            if a.delays.is_empty() {
                return 0.0;
            }
            let i = ((a.delays.len() as f64 - 1.0) * p).round() as usize;
            a.delays[i] as f64 / 1000.0
        };
        EntityReport {
            name: name.to_string(),
            packets: a.packets,
            bytes: a.bytes,
            throughput_bps: a.bytes as f64 * 8.0 / secs,
            share: if total_bytes == 0 {
                0.0
            } else {
                a.bytes as f64 / total_bytes as f64
            },
            delay_p50_us: pct(0.5),
            delay_p99_us: pct(0.99),
            delay_max_us: pct(1.0),
            rate_limit: limit,
            limit_violations: a.limit.map_or(0, |l| l.violations),
        }
    };
    let st = tree.stats();
    Ok(RunReport {
        link: cfg.link,
        duration_ns: cfg.duration_ns,
        offered,
        refused_rank,
        refused_full,
        internal_misses: st.internal_misses,
        left_queued: u64::from(tree.len()),
        nodes: nodes
            .iter_mut()
            .enumerate()
            .map(|(i, a)| report(&policy.node_names[i], a, policy.spec.nodes[i].params.rate))
            .collect(),
        flows: flows
            .iter_mut()
            .enumerate()
            .map(|(i, a)| report(&policy.flow_names[i], a, policy.spec.flows[i].params.rate))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::config;

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
        let p = config::parse(text, "t.toml").unwrap();
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
