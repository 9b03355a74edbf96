//! The network model and its discrete-event engine.
//!
//! A [`Network`] is a set of named nodes, directed links ([`LinkSpec`]:
//! bandwidth, propagation delay) and flows ([`FlowSpec`]: a node path, a
//! weight and maximum packet length for the schedulers, a [`Source`]).
//! Every link has an output queue at its sending node, run by a scheduler
//! built from a [`SchedChoice`]: a registry spec (`drr`, `qfq`, `wf2q+`,
//! ...) or a caller-supplied factory (for schedulers outside the registry).
//! Each flow is configured in the scheduler of every link it crosses.
//!
//! Events, in time order (ties in creation order, so runs are
//! deterministic for a seed): a source emits a packet into the queue of its
//! first link; a link that finishes a transmission hands the packet to the
//! far end after the propagation delay and asks its scheduler for the next
//! one; a packet reaching the last node of its path is recorded with its
//! end-to-end delay (arrival at the sink minus creation at the source).

use super::error::NetsimError;
use crate::limits::check_memory;
use fairway_core::{Capacity, FlowConfig, FlowId, Limits, Packet, SchedSpec, Scheduler};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::sync::Arc;

/// Bytes per packet a link's scheduler is built to hold (its slot, an
/// estimate; schedulers may allocate their slots up front, about 12 bytes
/// each).
const BYTES_PER_QUEUED_PACKET: u128 = 16;

/// The packet type of the network simulator: a length and the index of
/// its metadata (flow, hop, creation time) in the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetPacket {
    /// Length in bytes.
    pub len: u32,
    /// Engine-internal packet index.
    pub id: u32,
}

impl Packet for NetPacket {
    #[inline]
    fn len(&self) -> u32 {
        self.len
    }
}

/// Builds one output-queue scheduler for a given capacity.
pub type SchedFactory = Arc<dyn Fn(Capacity) -> Box<dyn Scheduler<NetPacket> + Send> + Send + Sync>;

/// Which scheduler runs the output queues.
#[derive(Clone)]
pub enum SchedChoice {
    /// A registry spec, built with default limits.
    Spec(SchedSpec),
    /// A caller-supplied factory, with the name to report.
    Custom {
        /// Name in reports.
        name: String,
        /// Builds one scheduler per output queue.
        factory: SchedFactory,
    },
}

impl SchedChoice {
    /// Parses a registry spec such as `drr` or `qfq+:m=4`.
    pub fn parse(text: &str) -> Result<Self, NetsimError> {
        Ok(SchedChoice::Spec(SchedSpec::parse(text)?))
    }

    /// A scheduler outside the registry.
    pub fn custom(name: &str, factory: SchedFactory) -> Self {
        SchedChoice::Custom {
            name: name.to_string(),
            factory,
        }
    }

    /// The name in reports.
    pub fn name(&self) -> String {
        match self {
            SchedChoice::Spec(s) => s.to_string(),
            SchedChoice::Custom { name, .. } => name.clone(),
        }
    }

    fn build(&self, cap: Capacity) -> Box<dyn Scheduler<NetPacket> + Send> {
        match self {
            SchedChoice::Spec(s) => s.build::<NetPacket>(cap, Limits::DEFAULT),
            SchedChoice::Custom { factory, .. } => factory(cap),
        }
    }
}

impl fmt::Debug for SchedChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SchedChoice({})", self.name())
    }
}

/// A directed link and its output queue.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    /// Sending node.
    pub from: usize,
    /// Receiving node.
    pub to: usize,
    /// Bandwidth, bit/s (≥ 1).
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
}

/// How a flow generates packets.
#[derive(Clone, Debug)]
pub enum Source {
    /// Constant bit rate: one `packet_len` packet every `8·len/rate` s.
    Cbr {
        /// Rate, bit/s (≥ 1).
        rate_bps: u64,
        /// Packet length, bytes.
        packet_len: u32,
    },
    /// Always backlogged: keeps `window` packets queued at its first link,
    /// emitting a new one each time one leaves that queue.
    Greedy {
        /// Packet length, bytes.
        packet_len: u32,
        /// Packets kept queued (≥ 1).
        window: u32,
    },
    /// Pareto on/off (ns-2's `POO_Traffic`): bursts at `peak_rate_bps`
    /// during on periods; on and off durations Pareto-distributed with the
    /// given means and shape `alpha` (> 1).
    ParetoOnOff {
        /// Rate during on periods, bit/s (≥ 1).
        peak_rate_bps: u64,
        /// Packet length, bytes.
        packet_len: u32,
        /// Mean on time, ns.
        mean_on_ns: u64,
        /// Mean off time, ns.
        mean_off_ns: u64,
        /// Pareto shape.
        alpha: f64,
    },
}

impl Source {
    fn packet_len(&self) -> u32 {
        match *self {
            Source::Cbr { packet_len, .. }
            | Source::Greedy { packet_len, .. }
            | Source::ParetoOnOff { packet_len, .. } => packet_len,
        }
    }
}

/// One flow.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// Name in reports.
    pub name: String,
    /// Nodes from source to sink (≥ 2, consecutive nodes joined by a link).
    pub path: Vec<usize>,
    /// Scheduler weight.
    pub weight: u32,
    /// Scheduler maximum packet length (≥ the source's packet length).
    pub max_len: u32,
    /// Traffic.
    pub source: Source,
    /// First emission, ns.
    pub start_ns: u64,
}

/// A network to simulate.
#[derive(Clone, Debug, Default)]
pub struct Network {
    /// Node names.
    pub nodes: Vec<String>,
    /// Directed links.
    pub links: Vec<LinkSpec>,
    /// Flows.
    pub flows: Vec<FlowSpec>,
    /// Packets each output queue holds per flow; more are dropped.
    pub per_flow_buffer: u32,
}

/// End-to-end results of one flow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowReport {
    /// Flow name.
    pub name: String,
    /// Packets received within the measured interval.
    pub received: u64,
    /// Packets dropped at any queue (whole run).
    pub dropped: u64,
    /// Mean end-to-end delay, ms.
    pub mean_delay_ms: f64,
    /// Standard deviation of the delay, ms.
    pub std_delay_ms: f64,
    /// Largest delay, ms.
    pub max_delay_ms: f64,
    /// Smallest delay, ms.
    pub min_delay_ms: f64,
    #[serde(skip)]
    sum_ns: f64,
    #[serde(skip)]
    sum_sq_ns: f64,
}

impl FlowReport {
    fn record(&mut self, delay_ns: u64) {
        let d = delay_ns as f64;
        if self.received == 0 || d / 1e6 < self.min_delay_ms {
            self.min_delay_ms = d / 1e6;
        }
        self.received += 1;
        self.sum_ns += d;
        self.sum_sq_ns += d * d;
        self.max_delay_ms = self.max_delay_ms.max(d / 1e6);
    }

    fn finish(&mut self) {
        if self.received > 0 {
            let n = self.received as f64;
            let mean = self.sum_ns / n;
            let var = (self.sum_sq_ns / n - mean * mean).max(0.0);
            self.mean_delay_ms = mean / 1e6;
            self.std_delay_ms = var.sqrt() / 1e6;
        }
    }

    /// Pools another run of the same flow into this one.
    pub fn merge(&mut self, other: &FlowReport) {
        if other.received > 0 && (self.received == 0 || other.min_delay_ms < self.min_delay_ms) {
            self.min_delay_ms = other.min_delay_ms;
        }
        self.received += other.received;
        self.dropped += other.dropped;
        self.sum_ns += other.sum_ns;
        self.sum_sq_ns += other.sum_sq_ns;
        self.max_delay_ms = self.max_delay_ms.max(other.max_delay_ms);
        self.finish();
    }
}

/// Results of one run.
#[derive(Clone, Debug, Serialize)]
pub struct NetReport {
    /// Scheduler name.
    pub sched: String,
    /// Per flow, in [`Network::flows`] order.
    pub flows: Vec<FlowReport>,
    /// Events processed.
    pub events: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Flow emits its next packet.
    Emit(u32),
    /// Link finished transmitting.
    TxDone(u32),
    /// Packet reaches the far end of a link.
    Arrive(u32, u32),
}

#[derive(Clone, Copy, Debug, Default)]
struct PacketMeta {
    flow: u32,
    hop: u32,
    created: u64,
}

struct Port {
    sched: Box<dyn Scheduler<NetPacket> + Send>,
    on_wire: Option<NetPacket>,
}

/// Per-flow source state.
#[derive(Clone, Copy, Debug, Default)]
struct SourceState {
    /// Packets left in the current Pareto burst.
    burst_left: u64,
}

struct Engine<'a> {
    net: &'a Network,
    paths: Vec<Vec<u32>>,
    ports: Vec<Port>,
    meta: Vec<PacketMeta>,
    free_ids: Vec<u32>,
    events: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    now: u64,
    warmup_ns: u64,
    reports: Vec<FlowReport>,
    sources: Vec<SourceState>,
    rng: StdRng,
}

/// `⌈8·len·10^9 / rate⌉` ns.
fn tx_ns(len: u32, rate_bps: u64) -> u64 {
    (u128::from(len) * 8 * 1_000_000_000).div_ceil(u128::from(rate_bps)) as u64
}

/// A Pareto sample of mean `mean` and shape `alpha` (> 1).
fn pareto(rng: &mut StdRng, mean: f64, alpha: f64) -> f64 {
    let scale = mean * (alpha - 1.0) / alpha;
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    scale / u.powf(1.0 / alpha)
}

impl Network {
    /// An empty network whose queues hold `per_flow_buffer` packets per flow.
    pub fn new(per_flow_buffer: u32) -> Self {
        Self {
            per_flow_buffer,
            ..Self::default()
        }
    }

    /// Adds a node; returns its index.
    pub fn add_node(&mut self, name: &str) -> usize {
        self.nodes.push(name.to_string());
        self.nodes.len() - 1
    }

    /// Adds a directed link.
    pub fn add_link(&mut self, from: usize, to: usize, rate_bps: u64, delay_ns: u64) {
        self.links.push(LinkSpec {
            from,
            to,
            rate_bps,
            delay_ns,
        });
    }

    /// Adds a flow; returns its index.
    pub fn add_flow(&mut self, flow: FlowSpec) -> usize {
        self.flows.push(flow);
        self.flows.len() - 1
    }

    /// Checks the parameters and resolves every flow's path into links.
    fn resolve(&self) -> Result<Vec<Vec<u32>>, NetsimError> {
        if self.per_flow_buffer == 0 {
            return Err(NetsimError::NoBuffer);
        }
        for (link, l) in self.links.iter().enumerate() {
            if l.from >= self.nodes.len() || l.to >= self.nodes.len() {
                return Err(NetsimError::UnknownNode { link });
            }
            if l.rate_bps == 0 {
                return Err(NetsimError::LinkRate { link });
            }
        }
        self.flows
            .iter()
            .map(|f| {
                let flow = || f.name.clone();
                if f.path.len() < 2 {
                    return Err(NetsimError::ShortPath { flow: flow() });
                }
                let len = f.source.packet_len();
                if len == 0 || len > f.max_len {
                    return Err(NetsimError::PacketLen {
                        flow: flow(),
                        len,
                        max_len: f.max_len,
                    });
                }
                match f.source {
                    Source::Cbr { rate_bps: 0, .. }
                    | Source::ParetoOnOff {
                        peak_rate_bps: 0, ..
                    } => return Err(NetsimError::FlowRate { flow: flow() }),
                    Source::Greedy { window: 0, .. } => {
                        return Err(NetsimError::Window { flow: flow() })
                    }
                    Source::ParetoOnOff { alpha, .. } if alpha.is_nan() || alpha <= 1.0 => {
                        return Err(NetsimError::ParetoShape { flow: flow() })
                    }
                    _ => {}
                }
                f.path
                    .windows(2)
                    .map(|w| {
                        self.links
                            .iter()
                            .position(|l| l.from == w[0] && l.to == w[1])
                            .map(|i| i as u32)
                            .ok_or_else(|| {
                                let node = |n: usize| self.nodes.get(n).map_or("?", |s| s);
                                NetsimError::NoLink {
                                    flow: flow(),
                                    from: node(w[0]).to_string(),
                                    to: node(w[1]).to_string(),
                                }
                            })
                    })
                    .collect()
            })
            .collect()
    }

    /// Simulates `duration_ns`; delays are recorded for packets received
    /// after `warmup_ns`. `progress` is called with the fraction of
    /// simulated time done, about a hundred times.
    pub fn run(
        &self,
        sched: &SchedChoice,
        duration_ns: u64,
        warmup_ns: u64,
        seed: u64,
        progress: &mut dyn FnMut(f64),
    ) -> Result<NetReport, NetsimError> {
        let paths = self.resolve()?;
        let n = self.flows.len() as u32;
        // Every link's queue: `per_flow_buffer` packets per flow crossing
        // it (a link no flow crosses gets a never-used one-packet queue),
        // exact or refused, and all of them within the memory limit before
        // the first scheduler is built.
        let mut queues = Vec::with_capacity(self.links.len());
        for li in 0..self.links.len() {
            let users: Vec<usize> = (0..self.flows.len())
                .filter(|&f| paths[f].contains(&(li as u32)))
                .collect();
            let packets = u32::try_from(users.len().max(1))
                .ok()
                .and_then(|u| self.per_flow_buffer.checked_mul(u))
                .ok_or(NetsimError::QueueTooLong {
                    link: li,
                    per_flow: self.per_flow_buffer,
                    flows: users.len(),
                })?;
            queues.push((users, packets));
        }
        let slots: u128 = queues.iter().map(|q| u128::from(q.1)).sum();
        check_memory(
            || {
                format!(
                    "--buffer {} over {} link queues",
                    self.per_flow_buffer,
                    queues.len()
                )
            },
            slots.checked_mul(BYTES_PER_QUEUED_PACKET),
        )
        .map_err(NetsimError::Memory)?;
        let mut ports = Vec::with_capacity(self.links.len());
        for (li, (users, packets)) in queues.into_iter().enumerate() {
            let cap = Capacity::new(n.max(1), packets);
            let mut s = sched.build(cap);
            for &f in &users {
                let fl = &self.flows[f];
                s.add_flow(FlowId(f as u32), FlowConfig::new(fl.weight, fl.max_len))
                    .map_err(|error| NetsimError::AddFlow {
                        flow: fl.name.clone(),
                        link: li,
                        error,
                    })?;
            }
            ports.push(Port {
                sched: s,
                on_wire: None,
            });
        }
        let mut e = Engine {
            net: self,
            paths,
            ports,
            meta: Vec::new(),
            free_ids: Vec::new(),
            events: BinaryHeap::new(),
            seq: 0,
            now: 0,
            warmup_ns,
            reports: self
                .flows
                .iter()
                .map(|f| FlowReport {
                    name: f.name.clone(),
                    ..FlowReport::default()
                })
                .collect(),
            sources: vec![SourceState::default(); self.flows.len()],
            rng: StdRng::seed_from_u64(seed),
        };
        for (f, fl) in self.flows.iter().enumerate() {
            match fl.source {
                Source::Greedy { window, .. } => {
                    for _ in 0..window {
                        e.push(fl.start_ns, Event::Emit(f as u32));
                    }
                }
                _ => e.push(fl.start_ns, Event::Emit(f as u32)),
            }
        }
        let step = (duration_ns / 100).max(1);
        let mut next_report = step;
        let mut count = 0u64;
        while let Some(Reverse((t, _, ev))) = e.events.pop() {
            if t > duration_ns {
                break;
            }
            e.now = t;
            count += 1;
            while t >= next_report {
                progress(next_report as f64 / duration_ns as f64);
                next_report += step;
            }
            match ev {
                Event::Emit(f) => e.emit(f),
                Event::TxDone(l) => e.tx_done(l),
                Event::Arrive(l, id) => e.arrive(l, id),
            }
        }
        progress(1.0);
        for r in &mut e.reports {
            r.finish();
        }
        Ok(NetReport {
            sched: sched.name(),
            flows: e.reports,
            events: count,
        })
    }
}

impl Engine<'_> {
    fn push(&mut self, t: u64, ev: Event) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    fn new_packet(&mut self, flow: u32) -> u32 {
        let m = PacketMeta {
            flow,
            hop: 0,
            created: self.now,
        };
        match self.free_ids.pop() {
            Some(id) => {
                self.meta[id as usize] = m;
                id
            }
            None => {
                self.meta.push(m);
                (self.meta.len() - 1) as u32
            }
        }
    }

    /// A source emits: the packet joins its first queue; the next emission
    /// is scheduled (greedy sources re-emit when a packet leaves instead).
    fn emit(&mut self, f: u32) {
        let fl = &self.net.flows[f as usize];
        let len = fl.source.packet_len();
        match fl.source {
            Source::Cbr { rate_bps, .. } => {
                let t = self.now + tx_ns(len, rate_bps);
                self.push(t, Event::Emit(f));
            }
            Source::ParetoOnOff {
                peak_rate_bps,
                mean_on_ns,
                mean_off_ns,
                alpha,
                ..
            } => {
                let gap = tx_ns(len, peak_rate_bps);
                let st = &mut self.sources[f as usize];
                if st.burst_left == 0 {
                    // Start of an on period: how many packets it carries.
                    let on = pareto(&mut self.rng, mean_on_ns as f64, alpha);
                    self.sources[f as usize].burst_left = ((on / gap as f64).round() as u64).max(1);
                }
                let st = &mut self.sources[f as usize];
                st.burst_left -= 1;
                let t = if st.burst_left > 0 {
                    self.now + gap
                } else {
                    let off = pareto(&mut self.rng, mean_off_ns as f64, alpha);
                    self.now + gap + off as u64
                };
                self.push(t, Event::Emit(f));
            }
            Source::Greedy { .. } => {}
        }
        let id = self.new_packet(f);
        let first = self.paths[f as usize][0];
        self.enqueue(first, id);
    }

    fn enqueue(&mut self, link: u32, id: u32) {
        let m = self.meta[id as usize];
        let len = self.net.flows[m.flow as usize].source.packet_len();
        let port = &mut self.ports[link as usize];
        let flow = FlowId(m.flow);
        let queued = port.sched.flow_backlog(flow).map_or(0, |b| b.packets);
        let accepted = queued < u64::from(self.net.per_flow_buffer)
            && port.sched.enqueue(flow, NetPacket { len, id }).is_ok();
        if !accepted {
            self.reports[m.flow as usize].dropped += 1;
            self.free_ids.push(id);
            return;
        }
        if port.on_wire.is_none() {
            self.start(link);
        }
    }

    fn start(&mut self, link: u32) {
        let port = &mut self.ports[link as usize];
        let Some(d) = port.sched.dequeue() else {
            return;
        };
        port.on_wire = Some(d.packet);
        let rate = self.net.links[link as usize].rate_bps;
        let t = self.now + tx_ns(d.packet.len, rate);
        self.push(t, Event::TxDone(link));
        let m = self.meta[d.packet.id as usize];
        if m.hop == 0 {
            if let Source::Greedy { .. } = self.net.flows[m.flow as usize].source {
                self.push(self.now, Event::Emit(m.flow));
            }
        }
    }

    fn tx_done(&mut self, link: u32) {
        if let Some(p) = self.ports[link as usize].on_wire.take() {
            let t = self.now + self.net.links[link as usize].delay_ns;
            self.push(t, Event::Arrive(link, p.id));
        }
        self.start(link);
    }

    fn arrive(&mut self, _link: u32, id: u32) {
        let m = &mut self.meta[id as usize];
        m.hop += 1;
        let (flow, hop, created) = (m.flow, m.hop, m.created);
        let path = &self.paths[flow as usize];
        if hop as usize >= path.len() {
            if self.now >= self.warmup_ns {
                self.reports[flow as usize].record(self.now - created);
            }
            self.free_ids.push(id);
        } else {
            let next = path[hop as usize];
            self.enqueue(next, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link queue of `per_flow_buffer × flows` packets beyond `u32` is
    /// refused, not cut to `2^32 − 1`; one beyond memory too.
    #[test]
    fn a_link_queue_beyond_u32_is_refused() {
        let run = |buffer: u32| {
            let mut net = Network::new(buffer);
            let a = net.add_node("a");
            let b = net.add_node("b");
            net.add_link(a, b, 10_000_000, 0);
            for i in 0..2 {
                net.add_flow(FlowSpec {
                    name: format!("f{i}"),
                    path: vec![a, b],
                    weight: 1,
                    max_len: 100,
                    source: Source::Cbr {
                        rate_bps: 8_000,
                        packet_len: 100,
                    },
                    start_ns: 0,
                });
            }
            net.run(
                &SchedChoice::parse("fifo").unwrap(),
                1_000_000,
                0,
                1,
                &mut |_| {},
            )
        };
        assert!(run(1000).is_ok());
        let e = run(u32::MAX / 2).unwrap_err();
        assert!(matches!(e, NetsimError::Memory(_)), "{e}");
        let e = run(u32::MAX / 2 + 1).unwrap_err();
        assert!(
            matches!(e, NetsimError::QueueTooLong { flows: 2, .. }),
            "{e}"
        );
    }

    /// One flow over two links: the delay is exactly transmission plus
    /// propagation on each.
    #[test]
    fn a_lone_packet_takes_transmission_plus_propagation() {
        let mut net = Network::new(8);
        let a = net.add_node("a");
        let b = net.add_node("b");
        let c = net.add_node("c");
        net.add_link(a, b, 100_000_000, 1_000_000);
        net.add_link(b, c, 10_000_000, 10_000_000);
        net.add_flow(FlowSpec {
            name: "f".into(),
            path: vec![a, b, c],
            weight: 1,
            max_len: 1000,
            source: Source::Cbr {
                rate_bps: 8_000,
                packet_len: 1000,
            },
            start_ns: 0,
        });
        let r = net
            .run(
                &SchedChoice::parse("fifo").unwrap(),
                3_000_000_000,
                0,
                1,
                &mut |_| {},
            )
            .unwrap();
        let f = &r.flows[0];
        // 1000 B: 80 µs at 100 Mbit/s, 800 µs at 10 Mbit/s, + 11 ms.
        assert_eq!(f.received, 3);
        assert!(
            (f.mean_delay_ms - 11.88).abs() < 1e-9,
            "{}",
            f.mean_delay_ms
        );
        assert!(f.std_delay_ms < 1e-6);
    }

    /// A greedy flow fills its link; per-flow buffers drop the excess of an
    /// overloaded CBR flow, counted.
    #[test]
    fn greedy_sources_saturate_and_drops_are_counted() {
        let mut net = Network::new(4);
        let a = net.add_node("a");
        let b = net.add_node("b");
        net.add_link(a, b, 1_000_000, 0);
        net.add_flow(FlowSpec {
            name: "greedy".into(),
            path: vec![a, b],
            weight: 1,
            max_len: 125,
            source: Source::Greedy {
                packet_len: 125,
                window: 2,
            },
            start_ns: 0,
        });
        net.add_flow(FlowSpec {
            name: "cbr".into(),
            path: vec![a, b],
            weight: 1,
            max_len: 125,
            source: Source::Cbr {
                rate_bps: 1_000_000,
                packet_len: 125,
            },
            start_ns: 0,
        });
        let r = net
            .run(
                &SchedChoice::parse("drr").unwrap(),
                1_000_000_000,
                0,
                1,
                &mut |_| {},
            )
            .unwrap();
        // 1000 packets/s of link capacity, shared equally.
        let total = r.flows[0].received + r.flows[1].received;
        assert!((997..=1000).contains(&total), "{total}");
        assert!((r.flows[0].received as i64 - 500).abs() <= 3);
        assert!(r.flows[1].dropped >= 490, "{}", r.flows[1].dropped);
    }

    #[test]
    fn bad_parameters_are_rejected_with_the_reason() {
        let mut net = Network::new(4);
        let a = net.add_node("a");
        let b = net.add_node("b");
        net.add_flow(FlowSpec {
            name: "f".into(),
            path: vec![a, b],
            weight: 1,
            max_len: 100,
            source: Source::Cbr {
                rate_bps: 1000,
                packet_len: 100,
            },
            start_ns: 0,
        });
        let fifo = SchedChoice::parse("fifo").unwrap();
        let err = net.run(&fifo, 1, 0, 1, &mut |_| {}).unwrap_err();
        assert_eq!(err.to_string(), "flow f: no link a -> b");
        net.add_link(a, b, 1000, 0);
        net.flows[0].max_len = 50;
        let err = net.run(&fifo, 1, 0, 1, &mut |_| {}).unwrap_err();
        assert_eq!(
            err,
            NetsimError::PacketLen {
                flow: "f".into(),
                len: 100,
                max_len: 50
            }
        );
        assert_eq!(
            err.to_string(),
            "flow f: packet length 100 must be in 1..=50"
        );
        assert!(SchedChoice::parse("nope").is_err());
    }
}
