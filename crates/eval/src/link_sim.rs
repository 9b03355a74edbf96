//! Discrete-event simulation of a scheduler feeding a constant-rate link
//! through a FIFO transmit queue (the QFQ+ paper §4 and App. A.4, Fig. A.9 B).
//!
//! Packets arrive from the [`Controller`] (closed loop: enqueue phases at
//! the current instant, dequeue phases driven by the link). The transmit
//! queue holds `queue_pkts` packets besides the one on the wire; whenever it
//! has room the scheduler is asked for the next packet. Time is in
//! *byte-times* (the link sends one byte per unit), so results do not depend
//! on the link rate; reports convert to seconds with `rate_bps`.
//!
//! Along the run it records, for every packet, its arrival, the flow's
//! backlog right after the arrival (bytes not yet transmitted, including the
//! packets in the transmit queue and the untransmitted part of the one on the
//! wire) and its completion; and for every flow its B-WFI (the QFQ+ paper Eq. (5)),
//! tracked online as explained in [`crate::metrics`].
//!
//! The B-WFI intervals are those Theorem 4 of the QFQ+ paper covers. Its proof
//! (App. A.6, Eq. (A.9)) bounds the service of `[t1, t2]` by the service
//! the *scheduler* gave over `[t1, t̂]`, `t̂` the dequeue of the oldest
//! packet in the transmit queue or on the wire at `t2`, and Lemma 7 bounds
//! that only while the flow is continuously backlogged in the scheduler
//! (App. A.5); for `t1 >= t̂` the bound holds trivially. A flow whose
//! packets wait in the transmit queue while its scheduler queue is empty is
//! idle for the scheduler, which restamps it `S = max(V, F)` on its next
//! packet (Eq. (A.2)), forgetting any lag; intervals across that restamp
//! are outside the theorem, and over them the lag can exceed its bound.
//! So for a `t2` whose packet on the wire was dequeued at `t̂`: if the flow
//! was backlogged in the scheduler just before that dequeue, `t1` ranges
//! from the start of that scheduler-backlogged period; otherwise
//! `t1 >= t̂`.
//!
//! With `f(t) = φ_i W(t) − W_i(t)` and `h(t2) = Arr_i(t2⁻) − W_i(t2)`, the
//! value of `[t1, t2]` is `min(f(t2) − f(t1), h(t2))`. Both grow while
//! other flows send and fall while flow i sends, and the `t1` range only
//! shrinks when `t̂` passes an instant at which the flow was idle in the
//! scheduler, so the maximum is reached at one of three kinds of `t2`,
//! each evaluated when it happens:
//! 1. the start of an own transmission (`t2⁻`, `t̂` the dequeue of the
//!    packet that just left the wire);
//! 2. the end of an own transmission (`t2⁻`, `t̂` its own dequeue): `h`
//!    may have grown by arrivals while it was sent;
//! 3. the end of another flow's packet that was dequeued while flow i was
//!    idle in the scheduler, when flow i refilled before that end with its
//!    own packets still on the link: the next own start admits only `t1`
//!    from the refill on. These packets are in the transmit queue at the
//!    refill, so at most `queue_pkts + 1` per refill.
//!
//! `min f(t1)` over a scheduler-backlogged period is kept per period,
//! updated at own completions; over `[t̂, t2]` it is recomputed from the
//! last `queue_pkts + 2` transmissions, which cover it.
//! [`crate::metrics::bwfi_brute_force`] computes the same maximum over
//! every interval of the trace, as an oracle.

use crate::limits::{try_vec, MemoryError};
use crate::traffic::{Controller, ControllerConfig, ControllerError};
use crate::workload::{FlowSet, PacketSizes};
use fairway_core::{ConfigError, FlowConfig, FlowId, Packet, Scheduler};
use std::collections::{HashMap, VecDeque};
use std::fmt;

/// The packet type of simulations: a length and the index of its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimPacket {
    /// Length in bytes.
    pub len: u32,
    /// Index into [`SimOutput::records`].
    pub id: u32,
}

impl Packet for SimPacket {
    #[inline]
    fn len(&self) -> u32 {
        self.len
    }
}

/// The link behind the scheduler.
#[derive(Clone, Copy, Debug)]
pub struct LinkConfig {
    /// Packets the transmit queue holds besides the one on the wire
    /// (1 in the QFQ+ paper §8.3, i.e. `Q_pkts = 2`).
    pub queue_pkts: u32,
}

/// What happened to one packet. Times in byte-times.
#[derive(Clone, Copy, Debug, Default)]
pub struct PacketRecord {
    /// Flow index.
    pub flow: u32,
    /// Length (bytes).
    pub len: u32,
    /// Arrival time.
    pub arrival: u64,
    /// Flow backlog right after the arrival, `B_i(t_a)` (bytes).
    pub backlog_after_arrival: u64,
    /// Position of the enqueue among all scheduler enqueues and dequeues
    /// (0, 1, 2 … in the order they happened, several may share an instant).
    pub enqueue_event: u64,
    /// Position of the dequeue in the same order.
    pub dequeue_event: u64,
    /// Dequeue time (into the transmit queue, or straight onto the wire).
    pub dequeue: u64,
    /// Start of transmission.
    pub start: u64,
    /// End of transmission, `t_c`.
    pub completion: u64,
}

/// Result of a simulation.
#[derive(Debug)]
pub struct SimOutput {
    /// One record per transmitted packet, in arrival order.
    pub records: Vec<PacketRecord>,
    /// B-WFI of each flow (bytes), measured online.
    pub bwfi: Vec<f64>,
    /// Enqueues the scheduler refused (should be 0 with enough capacity).
    pub refused: u64,
    /// Simulated duration (byte-times).
    pub duration: u64,
}

/// A period during which a flow is continuously backlogged in the scheduler.
struct SchedEpoch {
    /// Index of the first dequeue after the flow's queue became non-empty.
    start_seq: u64,
    /// Index of the dequeue that emptied it (`u64::MAX` while open).
    end_seq: u64,
    /// `min f(t1)` over `t1` from the period's start (see [`crate::metrics`]).
    min_lag: f64,
}

struct FlowState {
    phi: f64,
    /// Packets of the flow in the scheduler.
    queued: u32,
    /// Recent scheduler-backlogged periods, oldest first.
    epochs: VecDeque<SchedEpoch>,
    max_len: u32,
    arrived: u64,
    completed: u64,
    /// Bytes that arrived at exactly `arrival_instant` (excluded from
    /// `B_i(t1, t2)` when t2 is that instant: arrivals in the open interval).
    arrival_instant: u64,
    arrived_at_instant: u64,
    bwfi: f64,
}

/// A finished transmission (byte-times).
struct Transmission {
    flow: u32,
    start: u64,
    len: u64,
}

/// `max_{t1 in [t_hat, t2]} f(t2) − f(t1)` for `flow`, `f(t) = φ W(t) − W_i(t)`,
/// when the link was busy over `[t_hat, t2]` with (the tail of) `recent`.
/// `f` falls only while the flow sends, so `t1` is `t_hat` or the end of
/// one of its transmissions.
fn rise_since(t_hat: u64, t2: u64, flow: u32, phi: f64, recent: &VecDeque<Transmission>) -> f64 {
    let own_sent_after = |t1: u64| -> u64 {
        recent
            .iter()
            .filter(|r| r.flow == flow)
            .map(|r| (r.start + r.len).saturating_sub(r.start.max(t1)))
            .sum()
    };
    let rise = |t1: u64| phi * (t2 - t1) as f64 - own_sent_after(t1) as f64;
    recent
        .iter()
        .filter(|r| r.flow == flow && r.start + r.len >= t_hat)
        .map(|r| rise(r.start + r.len))
        .fold(rise(t_hat), f64::max)
}

/// Why a simulation could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The scheduler refused a flow of the flow set.
    AddFlow {
        /// The scheduler's name.
        sched: &'static str,
        /// The flow's index.
        flow: usize,
        /// Why.
        error: ConfigError,
    },
    /// The system refused memory for the run's records.
    Memory(MemoryError),
    /// The controller refused its configuration.
    Controller(ControllerError),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::AddFlow { sched, flow, error } => {
                write!(f, "{sched}: cannot add flow {flow}: {error}")
            }
            SimError::Memory(e) => e.fmt(f),
            SimError::Controller(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SimError {}

/// Runs `packets` packets of the flow set through `sched` (which must be
/// empty and have room for the flows) and the link.
pub fn simulate(
    sched: &mut dyn Scheduler<SimPacket>,
    flows: &FlowSet,
    controller: ControllerConfig,
    sizes: PacketSizes,
    link: LinkConfig,
    packets: u64,
    seed: u64,
) -> Result<SimOutput, SimError> {
    let cfgs = flows.flows();
    for (i, &(w, l)) in cfgs.iter().enumerate() {
        sched
            .add_flow(FlowId(i as u32), FlowConfig::new(w, l))
            .map_err(|error| SimError::AddFlow {
                sched: sched.name(),
                flow: i,
                error,
            })?;
    }
    let weights: Vec<u32> = cfgs.iter().map(|c| c.0).collect();
    let mut ctl = Controller::try_new(controller, &weights, seed).map_err(SimError::Controller)?;
    let mut sim = Sim::new(sched, flows, link, packets)?;
    let mut budget = packets;
    let mut want_enqueue = true;
    loop {
        if want_enqueue && budget > 0 {
            let before = budget;
            let sent_now = sim.on_wire_now();
            ctl.fill(&mut budget, |flow, rng| {
                let len = sizes.draw(rng, sim.st[flow as usize].max_len);
                sim.arrive(flow, len, sent_now)
            });
            if budget == before && sim.wire.is_none() && sim.sched.is_empty() {
                break; // nothing generated and nothing left: avoid spinning
            }
        }
        want_enqueue = sim.keep_link_busy(&mut ctl);
        if want_enqueue && budget > 0 {
            continue; // the controller enqueues at this same instant
        }
        let Some((p, start)) = sim.wire.take() else {
            if budget == 0 {
                break;
            }
            want_enqueue = true;
            continue;
        };
        sim.complete(p, start);
    }
    Ok(sim.finish())
}

/// The state of a run: the scheduler, the transmit queue and the wire, the
/// records, and what the online B-WFI needs (see the module doc).
struct Sim<'a> {
    sched: &'a mut dyn Scheduler<SimPacket>,
    link: LinkConfig,
    st: Vec<FlowState>,
    records: Vec<PacketRecord>,
    fifo: VecDeque<SimPacket>,
    wire: Option<(SimPacket, u64)>,
    t: u64,
    completed_total: u64,
    refused: u64,
    /// Dequeue index of every packet, the dequeues so far, and the packet
    /// that left the wire last with the instant it did.
    deq_seq: Vec<u64>,
    dequeued: u64,
    last_done: Option<(u32, u64)>,
    /// Enqueues and dequeues so far, for the records' event positions.
    sched_events: u64,
    /// The last transmissions: those overlapping [t̂, t2] are at most the
    /// transmit queue plus the packet on the wire at t̂.
    recent_len: usize,
    recent: VecDeque<Transmission>,
    /// Packets on the link whose end is a B-WFI instant for other flows.
    watchers: HashMap<u32, Vec<u32>>,
}

impl<'a> Sim<'a> {
    fn new(
        sched: &'a mut dyn Scheduler<SimPacket>,
        flows: &FlowSet,
        link: LinkConfig,
        packets: u64,
    ) -> Result<Self, SimError> {
        let wsum = flows.weight_sum() as f64;
        let st = flows
            .flows()
            .iter()
            .map(|&(w, l)| FlowState {
                phi: w as f64 / wsum,
                queued: 0,
                epochs: VecDeque::new(),
                max_len: l,
                arrived: 0,
                completed: 0,
                arrival_instant: u64::MAX,
                arrived_at_instant: 0,
                bwfi: 0.0,
            })
            .collect();
        let recent_len = link.queue_pkts as usize + 2;
        // Sized by the user's --packets and --queue: a refused allocation is
        // an error, not an abort.
        let what = || format!("{packets} packet records");
        let n = usize::try_from(packets).unwrap_or(usize::MAX);
        let records = try_vec(what, n).map_err(SimError::Memory)?;
        let deq_seq = try_vec(what, n).map_err(SimError::Memory)?;
        let queue = || format!("a transmit queue of {} packets", link.queue_pkts);
        let fifo = VecDeque::from(try_vec(queue, recent_len).map_err(SimError::Memory)?);
        let recent = VecDeque::from(try_vec(queue, recent_len).map_err(SimError::Memory)?);
        Ok(Sim {
            sched,
            link,
            st,
            records,
            fifo,
            wire: None,
            t: 0,
            completed_total: 0,
            refused: 0,
            deq_seq,
            dequeued: 0,
            last_done: None,
            sched_events: 0,
            recent_len,
            recent,
            watchers: HashMap::new(),
        })
    }

    /// The flow of the packet on the wire and the bytes of it sent so far.
    fn on_wire_now(&self) -> Option<(u32, u64)> {
        self.wire
            .map(|(p, start)| (self.records[p.id as usize].flow, self.t - start))
    }

    /// A packet of `len` bytes of `flow` arrives now; `sent_now` is
    /// [`Sim::on_wire_now`]. Returns whether the scheduler took it.
    fn arrive(&mut self, flow: u32, len: u32, sent_now: Option<(u32, u64)>) -> bool {
        let in_flight = match sent_now {
            Some((f, sent)) if f == flow => sent,
            _ => 0,
        };
        let id = self.records.len() as u32;
        let pkt = SimPacket { len, id };
        if let Err(e) = self.sched.enqueue(FlowId(flow), pkt) {
            self.refused += 1;
            let _ = e.into_packet();
            return false;
        }
        if self.st[flow as usize].queued == 0 {
            let s = &mut self.st[flow as usize];
            let w_now = (self.completed_total + sent_now.map_or(0, |x| x.1)) as f64;
            s.epochs.push_back(SchedEpoch {
                start_seq: self.dequeued,
                end_seq: u64::MAX,
                min_lag: s.phi * w_now - (s.completed + in_flight) as f64,
            });
            self.watch_link_after_refill(flow);
        }
        let t = self.t;
        let s = &mut self.st[flow as usize];
        s.queued += 1;
        self.deq_seq.push(u64::MAX);
        s.arrived += len as u64;
        if s.arrival_instant != t {
            s.arrival_instant = t;
            s.arrived_at_instant = 0;
        }
        s.arrived_at_instant += len as u64;
        self.records.push(PacketRecord {
            flow,
            len,
            arrival: t,
            backlog_after_arrival: s.arrived - s.completed - in_flight,
            enqueue_event: self.sched_events,
            ..Default::default()
        });
        self.sched_events += 1;
        true
    }

    /// `flow` refilled while packets of it wait on the link: the packets
    /// behind its last one were dequeued while it was idle in the
    /// scheduler, so each end of theirs is a t2⁻ whose t̂ admits only
    /// t1 >= t̂ (a range the next own start's does not contain).
    fn watch_link_after_refill(&mut self, flow: u32) {
        let queued_on_link = self
            .wire
            .iter()
            .map(|w| w.0)
            .chain(self.fifo.iter().copied());
        let last_own = queued_on_link
            .clone()
            .enumerate()
            .filter(|(_, q)| self.records[q.id as usize].flow == flow)
            .map(|(k, _)| k)
            .last();
        if let Some(k) = last_own {
            for q in queued_on_link.skip(k + 1) {
                self.watchers.entry(q.id).or_default().push(flow);
            }
        }
    }

    /// Keeps the wire busy and the transmit queue full; returns whether
    /// the controller wants an enqueue phase now.
    fn keep_link_busy(&mut self, ctl: &mut Controller) -> bool {
        let mut want_enqueue = false;
        loop {
            if self.wire.is_none() {
                if let Some(p) = self.fifo.pop_front() {
                    self.start_transmission(p);
                    continue;
                }
            }
            let room = self.wire.is_none() || self.fifo.len() < self.link.queue_pkts as usize;
            if !room {
                break;
            }
            match self.sched.dequeue() {
                Some(d) => {
                    self.deq_seq[d.packet.id as usize] = self.dequeued;
                    let rec = &mut self.records[d.packet.id as usize];
                    rec.dequeue = self.t;
                    rec.dequeue_event = self.sched_events;
                    self.sched_events += 1;
                    let s = &mut self.st[d.flow.0 as usize];
                    s.queued -= 1;
                    if s.queued == 0 {
                        if let Some(e) = s.epochs.back_mut() {
                            e.end_seq = self.dequeued;
                        }
                    }
                    self.dequeued += 1;
                    want_enqueue |= ctl.on_dequeue(d.flow.0);
                    self.fifo.push_back(d.packet);
                }
                None => break,
            }
        }
        want_enqueue
    }

    /// Puts `p` on the idle wire: its start is a B-WFI instant of its flow
    /// (the lag can only have grown since the last own completion, the
    /// QFQ+ paper Eq. (5)).
    fn start_transmission(&mut self, p: SimPacket) {
        let t = self.t;
        self.records[p.id as usize].start = t;
        let flow = self.records[p.id as usize].flow;
        let s = &mut self.st[flow as usize];
        let lag = s.phi * self.completed_total as f64 - s.completed as f64;
        let pending = s.arrived
            - s.completed
            - if s.arrival_instant == t {
                s.arrived_at_instant
            } else {
                0
            };
        // t̂ of t2⁻: the dequeue of the packet that just left the wire, or
        // of this one if the wire was idle.
        let (n, t_hat) = match self.last_done {
            Some((q, done)) if done == t => {
                (self.deq_seq[q as usize], self.records[q as usize].dequeue)
            }
            _ => (self.deq_seq[p.id as usize], t),
        };
        while s.epochs.front().is_some_and(|e| e.end_seq < n) {
            s.epochs.pop_front();
        }
        let rise = match s.epochs.front() {
            // Backlogged in the scheduler just before t̂: t1 from the start
            // of that backlogged period.
            Some(e) if e.start_seq <= n => lag - e.min_lag,
            // Idle in the scheduler just before t̂: t1 >= t̂.
            _ => rise_since(t_hat, t, flow, s.phi, &self.recent),
        };
        s.bwfi = s.bwfi.max(rise.min(pending as f64));
        self.wire = Some((p, t));
    }

    /// `p`, on the wire since `start`, is sent: its end is a B-WFI instant
    /// of its flow and of the flows watching it.
    fn complete(&mut self, p: SimPacket, start: u64) {
        let t = start + p.len as u64;
        self.t = t;
        self.completed_total += p.len as u64;
        let rec = &mut self.records[p.id as usize];
        rec.completion = t;
        let flow = rec.flow;
        let s = &mut self.st[flow as usize];
        s.completed += p.len as u64;
        let lag = s.phi * self.completed_total as f64 - s.completed as f64;
        for e in s.epochs.iter_mut() {
            e.min_lag = e.min_lag.min(lag);
        }
        self.last_done = Some((p.id, t));
        if self.recent.len() == self.recent_len {
            self.recent.pop_front();
        }
        self.recent.push_back(Transmission {
            flow,
            start,
            len: p.len as u64,
        });
        // t2 = t⁻ with t̂ the dequeue of p. For p's flow, backlogged in the
        // scheduler just before it (p was there): t1 from that period's
        // start. Arrivals at t come after this point.
        let n = self.deq_seq[p.id as usize];
        if let Some(e) = s.epochs.iter().find(|e| e.start_seq <= n && n <= e.end_seq) {
            let pending = (s.arrived - s.completed) as f64;
            s.bwfi = s.bwfi.max((lag - e.min_lag).min(pending));
        }
        // For the flows watching p (idle in the scheduler just before its
        // dequeue, refilled since): t1 >= t̂.
        if let Some(flows) = self.watchers.remove(&p.id) {
            let t_hat = self.records[p.id as usize].dequeue;
            for f in flows {
                let s = &mut self.st[f as usize];
                let pending = (s.arrived - s.completed) as f64;
                let rise = rise_since(t_hat, t, f, s.phi, &self.recent);
                s.bwfi = s.bwfi.max(rise.min(pending));
            }
        }
    }

    fn finish(self) -> SimOutput {
        SimOutput {
            bwfi: self.st.iter().map(|s| s.bwfi).collect(),
            records: self.records,
            refused: self.refused,
            duration: self.t,
        }
    }
}
