//! One measurement: one configuration (`none`, `tc` or `fairway`), one set
//! of clients, on a testbed of its own (so every kernel counter starts from
//! zero and nothing of a previous run is still queued).
//!
//! Threads: each client is a thread with its own UDP socket (seed 001
//! §5.2); in `fairway` it submits to its client queue and transmits what
//! the arbiter granted itself (`drain()` with the [`UdpSender`] back-end).
//! The receiver is a thread reading the watched flows. A flat-out client
//! sends batches stamped with the current time; a paced client (the
//! *target*) sends packet i at t0 + i/rate, stamped when actually sent or
//! submitted.
//!
//! Every loop is bounded by `seconds` and by `max_packets_per_flow`, and
//! stops on Ctrl-C; the grace period after the deadline (fairway clients
//! transmitting what was granted, the qdisc emptying) is bounded too.
//!
//! Timing: all clients share one start instant t0 and one deadline
//! t0 + `seconds` ([`ClientClock::Shared`]). Rates are counted where the
//! packets cross the link: a sampler thread reads the sender veth's
//! `tx_packets` (frames that left the qdisc and reached the peer) at
//! t0 + [`WARMUP_FRACTION`]·`seconds` and at the deadline, so
//! [`TrialResult::delivered_pps`] does not depend on when each client
//! happened to run. (Timing each client from its own first run, with the
//! rate taken as packets sent / `seconds`, overstated every rate: flat-out
//! clients sharing one CPU round-robin under `SCHED_RR` start a 100 ms time
//! slice apart, so a "1 s" trial of 5 clients lasted 1.3 s and HTB seemed
//! to pass 1.3× its rate. [`ClientClock::Staggered`] keeps that timing, with
//! the stagger made explicit, for the test that shows the rate check
//! failing with it.)

use super::dispatcher::{Lane, SenderDispatch};
use crate::testbed::RECEIVER_IP;
use crate::testbed::{HtbClass, KernelDrops, Testbed};
use crate::testbed::{RECEIVER_MAC, SENDER_IP, SENDER_MAC};
use fairway_core::SchedSpec;
use fairway_runtime::net::{
    interrupted, monotonic_ns, Datagram, Receiver, ReceiverSockets, SendCounters, UdpSender,
    FRAME_LEN,
};
use fairway_runtime::net::{FrameAddrs, PacketSender, RingSender, SendDelays};
use fairway_runtime::{
    ArbiterMode, Backend, ClientConfig, ClientSubmitter, RuntimeBuilder, RuntimeConfig,
};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Barrier;
use std::time::Duration;

/// First receiver port; flow i uses `BASE_PORT + i`.
pub const BASE_PORT: u16 = 40_000;
/// HTB's link rate when the link should never be the bottleneck, bits/s.
pub const UNLIMITED_TC_BPS: u64 = 100_000_000_000;
/// fairway's emulated link rate when it should never be the bottleneck.
pub const UNLIMITED_FAIRWAY_BPS: u64 = 1_000_000_000_000;
/// How long fairway clients keep transmitting granted packets after the
/// deadline, at most.
const GRACE_NS: u64 = 500_000_000;
/// How long a paced client may go on after the deadline sending packets
/// that fell due before it (catching up after a stall), ns.
pub const CATCH_UP_NS: u64 = 250_000_000;
/// The length of the slices of [`TrialResult::slice_pps`], ns.
const SLICE_NS: u64 = 50_000_000;
/// How long to wait for the qdisc to empty after the clients stopped.
const QUIESCE_MAX: Duration = Duration::from_secs(2);
/// How long a flat-out fairway client waits for a grant before yielding
/// its CPU to the next client, ns.
const YIELD_AFTER_NS: u64 = 20_000;
/// How long a socket send may block on a full socket buffer.
const SEND_TIMEOUT: Duration = Duration::from_millis(100);
/// The share of the trial left out at its start when counting the
/// delivered rate (sockets and queues filling, clients first scheduled).
pub const WARMUP_FRACTION: f64 = 0.1;
/// How far after the last thread is ready the shared start t0 lies, ns
/// (time for every waiting thread to be woken before t0, and for the
/// start-up transient of a fresh trial to pass: with 5 ms, the first
/// packet of the target in every `fairway` trial waited ~48 ms for its
/// grant, seen once the target's latency counted from its due time; with
/// 100 ms no trial showed it).
const START_LEAD_NS: u64 = 100_000_000;

/// When each client's sending time starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientClock {
    /// All clients start at one instant t0 and stop at t0 + `seconds`.
    Shared,
    /// Client `i` starts `i · step_ns` after t0 and stops `seconds` later,
    /// so the trial lasts longer than `seconds`: what happened when each
    /// client timed itself from its first run and flat-out clients sharing
    /// one CPU under `SCHED_RR` started a time slice apart. Wrong for
    /// rates; kept, with the stagger made explicit (how far apart real
    /// clients start depends on the machine's load), to show the rate
    /// check failing with it.
    Staggered {
        /// Delay between consecutive clients' starts, ns.
        step_ns: u64,
    },
}

/// Brings the clients and the sampler to one start instant.
struct StartGate {
    ready: Barrier,
    set: Barrier,
    t0: std::sync::atomic::AtomicU64,
}

impl StartGate {
    fn new(threads: usize) -> Self {
        Self {
            ready: Barrier::new(threads),
            set: Barrier::new(threads),
            t0: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Waits until every thread is ready; the last to arrive sets t0 a
    /// little ahead while the others sleep in the second barrier (a
    /// real-time thread spinning for it could starve the leader on a
    /// shared CPU). Returns t0 (ns of `CLOCK_MONOTONIC`) without waiting
    /// for it.
    fn t0(&self) -> u64 {
        use std::sync::atomic::Ordering;
        if self.ready.wait().is_leader() {
            self.t0
                .store(monotonic_ns() + START_LEAD_NS, Ordering::Release);
        }
        self.set.wait();
        self.t0.load(Ordering::Acquire)
    }

    /// [`StartGate::t0`], then sleeps until client `flow`'s start (t0
    /// under [`ClientClock::Shared`]) and returns it.
    fn start(&self, clock: ClientClock, flow: u16) -> u64 {
        let t0 = self.t0();
        let at = match clock {
            ClientClock::Shared => t0,
            ClientClock::Staggered { step_ns } => t0 + u64::from(flow) * step_ns,
        };
        sleep_until(at);
        at
    }
}

/// Sleeps (then spins the last few µs) until `due`, ns.
fn sleep_until(due: u64) {
    while monotonic_ns() < due {
        wait_until(due);
    }
}

/// Who schedules the clients' packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Clients send directly; the veth has no qdisc (`noqueue`).
    None,
    /// Clients send directly; HTB on the egress device, one class each.
    Tc,
    /// Clients submit to the arbiter and transmit what it granted.
    Fairway,
    /// Clients only submit; the arbiter thread transmits every granted
    /// packet right after granting it (the dispatcher of seed 001 §3,
    /// [`fairway_runtime::dispatch`]).
    #[serde(rename = "fairway-dispatch")]
    FairwayDispatch,
}

impl Mode {
    /// All four, in table order.
    pub const ALL: [Mode; 4] = [Mode::None, Mode::Tc, Mode::Fairway, Mode::FairwayDispatch];

    /// The name used in tables, CSV and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Tc => "tc",
            Mode::Fairway => "fairway",
            Mode::FairwayDispatch => "fairway-dispatch",
        }
    }

    /// The arbiter schedules (`fairway`, `fairway-dispatch`).
    pub fn uses_arbiter(self) -> bool {
        matches!(self, Mode::Fairway | Mode::FairwayDispatch)
    }
}

/// How clients put packets on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// One UDP socket per client ([`UdpSender`]).
    Udp,
    /// One raw `AF_PACKET` socket per client writing whole frames with
    /// `sendmmsg` ([`PacketSender`]; seed 001 Fig. 7's netmap analogue).
    AfPacket,
    /// The same frames through a `TPACKET_V2` transmit ring per client
    /// ([`RingSender`]).
    AfPacketRing,
}

impl Transport {
    /// All of them, in table order.
    pub const ALL: [Transport; 3] = [Transport::Udp, Transport::AfPacket, Transport::AfPacketRing];

    /// The name used on the command line, in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::AfPacket => "af-packet",
            Transport::AfPacketRing => "af-packet-ring",
        }
    }
}

/// What becomes of the packets of flows nobody reads when they reach the
/// receiving end of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReceivePath {
    /// Every flow has a bound UDP socket; the unread ones fill up and the
    /// kernel drops (and counts) the rest at the socket, after the IP and
    /// UDP receive path. On a veth that path runs on the *sending* CPU.
    Sockets,
    /// Datagrams of unread flows are dropped (and counted) by a `clsact`
    /// eBPF classifier where they enter the receiving device, before the
    /// IP and UDP receive path ([`crate::testbed::ingress`]); the
    /// watched flow still reaches its socket.
    IngressDrop,
}

impl ReceivePath {
    /// The name used on the command line, in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            ReceivePath::Sockets => "sockets",
            ReceivePath::IngressDrop => "ingress-drop",
        }
    }
}

/// A client's socket, any kind.
pub(super) enum Sender {
    Udp(UdpSender),
    Packet(PacketSender),
    Ring(RingSender),
}

impl Sender {
    pub(super) fn send_now(&mut self, d: &[Datagram]) {
        match self {
            Sender::Udp(s) => s.send_now(d),
            Sender::Packet(s) => s.send_now(d),
            Sender::Ring(s) => s.send_now(d),
        }
    }
    /// The final counters (the ring first waits for the kernel to take its
    /// last frames).
    pub(super) fn finish(&mut self) -> SendCounters {
        match self {
            Sender::Udp(s) => s.counters(),
            Sender::Packet(s) => s.counters(),
            Sender::Ring(s) => s.finish(),
        }
    }
    /// Records the submit → send delays from now on, whichever socket.
    pub(super) fn record_delays(&mut self) {
        match self {
            Sender::Udp(s) => s.record_delays(),
            Sender::Packet(s) => s.record_delays(),
            Sender::Ring(s) => s.record_delays(),
        }
    }
    fn send_delays(&self) -> Option<&SendDelays> {
        match self {
            Sender::Udp(s) => s.delays(),
            Sender::Packet(s) => s.delays(),
            Sender::Ring(s) => s.delays(),
        }
    }
    /// Submit → send call returned, ns, if recorded.
    pub(super) fn delays(&self) -> Option<&Histogram<u64>> {
        self.send_delays().map(SendDelays::done)
    }
    /// Submit → send call started, ns, if recorded.
    pub(super) fn call_delays(&self) -> Option<&Histogram<u64>> {
        self.send_delays().map(SendDelays::call)
    }
}

impl Backend<Datagram> for Sender {
    #[inline]
    fn transmit(&mut self, p: Datagram) {
        match self {
            Sender::Udp(s) => s.transmit(p),
            Sender::Packet(s) => s.transmit(p),
            Sender::Ring(s) => s.transmit(p),
        }
    }
    fn flush(&mut self) {
        match self {
            Sender::Udp(s) => s.flush(),
            Sender::Packet(s) => s.flush(),
            Sender::Ring(s) => s.flush(),
        }
    }
}

/// One client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Its weight (HTB class share / scheduler flow weight).
    pub weight: u32,
    /// Packets per second, or `None` to send as fast as possible.
    pub pace_pps: Option<u64>,
    /// Read by the receiver during the run, one-way delays recorded.
    pub watched: bool,
}

/// Where threads run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The arbiter's CPU.
    pub arbiter_cpu: Option<usize>,
    /// The clients' CPU (all of them).
    pub client_cpu: Option<usize>,
    /// The receiver's CPU.
    pub receiver_cpu: Option<usize>,
    /// Real-time priority P of the benchmark's threads, so that other
    /// processes on the machine cannot take their CPUs: flat-out clients
    /// `SCHED_RR` at P (they share their CPU in turns), the arbiter
    /// `SCHED_FIFO` at P, the target client and the receiver `SCHED_FIFO`
    /// at P + 1 (they sleep between packets and must run as soon as they
    /// wake). `None`: ordinary scheduling.
    pub rt_priority: Option<u8>,
}

/// Everything one trial needs.
#[derive(Clone, Debug)]
pub struct TrialSpec {
    /// The configuration.
    pub mode: Mode,
    /// The clients.
    pub flows: Vec<FlowSpec>,
    /// Link rate in packets/s of [`FRAME_LEN`] bytes; `None`: not a
    /// bottleneck.
    pub link_pps: Option<u64>,
    /// Sending time, seconds.
    pub seconds: f64,
    /// At most this many packets per client.
    pub max_packets_per_flow: u64,
    /// The arbiter's scheduler (`fairway`).
    pub sched: SchedSpec,
    /// Δ_A, ns.
    pub delta_a_ns: u64,
    /// Δ_C, ns.
    pub delta_c_ns: u64,
    /// Datagrams per `sendmmsg`.
    pub batch: usize,
    /// UDP sockets or raw frames.
    pub transport: Transport,
    /// Client queue length (`fairway`).
    pub queue_len: usize,
    /// Thread placement.
    pub placement: Placement,
    /// When each client's `seconds` start ([`ClientClock::Shared`]).
    pub clock: ClientClock,
    /// What becomes of the unread flows' packets at the receiving end.
    pub receive: ReceivePath,
    /// Raw-frame transports only: in every configuration but `tc`, frames
    /// go straight to the driver (`PACKET_QDISC_BYPASS`), as the arbiter
    /// hands granted packets to the device in seed 001 §3; `tc` always
    /// goes through its qdisc. Ignored with UDP sockets.
    pub qdisc_bypass: bool,
}

impl TrialSpec {
    /// The link rate in bits/s this trial configures for `mode`.
    pub fn link_bps(&self) -> u64 {
        match (self.link_pps, self.mode) {
            (Some(p), _) => p * FRAME_LEN as u64 * 8,
            (None, Mode::Fairway | Mode::FairwayDispatch) => UNLIMITED_FAIRWAY_BPS,
            (None, _) => UNLIMITED_TC_BPS,
        }
    }
}

/// Latency percentiles, µs.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 98th percentile (seed 001 Fig. 9).
    pub p98: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
}

impl Percentiles {
    /// From a histogram in ns.
    pub fn of(h: &Histogram<u64>) -> Self {
        let q = |x: f64| h.value_at_quantile(x) as f64 / 1e3;
        Self {
            count: h.len(),
            p50: q(0.5),
            p90: q(0.9),
            p98: q(0.98),
            p99: q(0.99),
            p999: q(0.999),
            max: h.max() as f64 / 1e3,
        }
    }
}

/// (latency µs, cumulative fraction) points of a histogram in ns.
pub fn cdf_points(h: &Histogram<u64>, points: usize) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    (0..=points)
        .map(|i| {
            let q = i as f64 / points as f64;
            (h.value_at_quantile(q) as f64 / 1e3, q)
        })
        .collect()
}

/// What one client did and what became of its packets.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowResult {
    /// Weight.
    pub weight: u32,
    /// Packets the client handed to its scheduler (`none`/`tc`: the
    /// socket; fairway: accepted into its client queue) = sent + refused +
    /// left_queued.
    pub offered: u64,
    /// Datagrams the kernel accepted from this client.
    pub sent: u64,
    /// Datagrams the kernel refused (not sent).
    pub refused: u64,
    /// Read by the receiver.
    pub received: u64,
    /// Dropped at the receiving socket (counted by the kernel).
    pub socket_drops: u64,
    /// `sendmmsg` calls made.
    pub calls: u64,
    /// fairway: submitted but still queued (never granted) when the grace
    /// period ended; never sent.
    pub left_queued: u64,
}

/// The target (watched, paced) client's view.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TargetResult {
    /// Its flow index.
    pub flow: usize,
    /// The rate it asked for, packets/s.
    pub offered_pps: f64,
    /// Packets received per second of the run.
    pub received_pps: f64,
    /// received_pps / offered_pps.
    pub rate_ratio: f64,
    /// One-way delay, submit → the kernel received it at the far end of the
    /// veth (`SO_TIMESTAMPNS`), µs.
    pub latency: Percentiles,
    /// Submit → read by the receiver thread, µs (adds its wake-up).
    pub app_latency: Percentiles,
    /// The same as a CDF: (µs, fraction).
    pub cdf: Vec<(f64, f64)>,
    /// Submit → send (the send call returned: `sendmmsg`, or the TX ring's
    /// kick after which the frame's slot is seen taken), µs: the
    /// scheduling delay.
    pub sched_delay: Percentiles,
    /// Submit → send call started, µs: the time spent before the system
    /// call (in `fairway`, waiting for the scan, the grant and the poll of
    /// the grant index); `latency` minus this is the kernel's send path up
    /// to the receive timestamp.
    pub call_delay: Percentiles,
    /// The largest submit → send delay, ns (for the Eq. (1) check).
    #[serde(skip)]
    pub sched_delay_hist: Option<Histogram<u64>>,
    /// fairway and fairway-dispatch: the longest time the target's thread
    /// did not run while it had work, ns: how late after a due time it
    /// submitted, and (fairway) the longest turn of its loop while a
    /// packet waited for its grant or was being sent. Δ_C plus this is the
    /// Δ_C the run actually had.
    pub stall_ns: u64,
}

/// The outcome of one trial.
#[derive(Clone, Debug, Serialize)]
pub struct TrialResult {
    /// The configuration.
    pub mode: Mode,
    /// Number of clients.
    pub clients: usize,
    /// Configured link rate, packets/s (`None`: unlimited).
    pub link_pps: Option<u64>,
    /// Sending time, s.
    pub seconds: f64,
    /// Per client.
    pub flows: Vec<FlowResult>,
    /// The kernel's counters along the path.
    pub kernel: KernelCounts,
    /// Σ sent.
    pub sent: u64,
    /// Σ received.
    pub received: u64,
    /// Σ drops counted by the kernel (sockets, qdisc, veth, UDP).
    pub counted_drops: u64,
    /// sent − received − counted drops: must be 0.
    pub unaccounted: i64,
    /// Σ sent / seconds.
    pub tx_pps: f64,
    /// Frames per second that crossed the link (left the egress qdisc and
    /// reached the far end of the veth), counted by the device between
    /// t0 + [`WARMUP_FRACTION`]·seconds and the deadline t0 + seconds.
    pub delivered_pps: f64,
    /// The length of that counting window, s.
    pub window_seconds: f64,
    /// The same rate in consecutive slices of that window (the last one
    /// may be shorter), packets/s: how steady it was.
    pub slice_pps: Vec<f64>,
    /// The target client, if one was watched.
    pub target: Option<TargetResult>,
    /// fairway: scheduling decisions made.
    pub decisions: Option<u64>,
    /// fairway: the arbiter's longest gap between two consecutive rounds
    /// from t0 until every client was done, ns
    /// ([`fairway_runtime::ScanGapWindow`]): Δ_A plus this is the Δ_A the
    /// run actually had.
    pub arbiter_scan_gap_ns: Option<u64>,
}

/// Serializable copy of [`KernelDrops`].
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct KernelCounts {
    /// Root qdisc drops.
    pub qdisc: u64,
    /// Drops at the receiver's ingress ([`ReceivePath::IngressDrop`]).
    pub ingress: u64,
    /// veth drops (sender tx + receiver rx).
    pub veth: u64,
    /// UDP drops outside the sockets (no port, other errors).
    pub udp_other: u64,
    /// UDP `RcvbufErrors`: must equal Σ socket drops.
    pub udp_rcvbuf_errors: u64,
}

impl TrialResult {
    /// sent = received + counted drops, the namespace's UDP counter
    /// agrees with the per-socket drop counters, and every client's
    /// offered packets = sent + refused + left queued.
    pub fn accounting_holds(&self) -> bool {
        let socket: u64 = self.flows.iter().map(|f| f.socket_drops).sum();
        self.unaccounted == 0
            && self.kernel.udp_rcvbuf_errors == socket
            && self
                .flows
                .iter()
                .all(|f| f.offered == f.sent + f.refused + f.left_queued)
    }
}

/// What a client thread runs.
enum Role {
    /// Sends directly (`none`, `tc`).
    Direct(Sender),
    /// Submits and transmits its own grants (`fairway`).
    Fairway(Box<(fairway_runtime::Client<Datagram>, Sender)>),
    /// Only submits (`fairway-dispatch`).
    Submit(ClientSubmitter<Datagram>),
}

struct ClientOutcome {
    /// Packets handed to the socket or accepted into the client queue.
    offered: u64,
    counters: SendCounters,
    delays: Option<Histogram<u64>>,
    call_delays: Option<Histogram<u64>>,
    left_queued: u64,
    /// A paced fairway client (the target): the longest time its thread
    /// did not run while it had work, ns: see [`TargetResult::stall_ns`].
    stall_ns: u64,
}

/// The open-loop schedule of a paced client (the target): packet i is due
/// at t0 + i/rate and is stamped with that due time, not with the time it
/// was actually sent or submitted. After a stall (its thread not scheduled,
/// e.g. a real-time throttling pause) the client catches up, sending what
/// fell due back to back, and each of those packets' one-way delay counts
/// from its due time: the stall shows in the latency instead of silently
/// thinning the offered load (coordinated omission). The client sends
/// every packet due before the deadline — `ceil(seconds × rate)`, capped
/// by `max` — taking at most [`CATCH_UP_NS`] past the deadline to do so.
#[derive(Clone, Copy, Debug)]
struct Pacing {
    t0: u64,
    period_ns: f64,
    due_total: u64,
    stop_at: u64,
}

impl Pacing {
    fn new(t0: u64, pps: u64, seconds: f64, max: u64) -> Self {
        let pps = pps.max(1) as f64;
        Self {
            t0,
            period_ns: 1e9 / pps,
            due_total: ((seconds * pps).ceil() as u64).min(max),
            stop_at: t0 + (seconds * 1e9) as u64 + CATCH_UP_NS,
        }
    }

    /// When packet `seq` is due, ns.
    fn due(&self, seq: u64) -> u64 {
        self.t0 + (seq as f64 * self.period_ns) as u64
    }

    /// Every packet due in the trial was sent, or the catch-up time is over.
    fn done(&self, seq: u64, now: u64) -> bool {
        seq >= self.due_total || now >= self.stop_at
    }
}

/// Waits until `due` (ns): sleeps when far, spins when close.
fn wait_until(due: u64) {
    let now = monotonic_ns();
    if due > now + 30_000 {
        std::thread::sleep(Duration::from_nanos(due - now - 20_000));
    } else {
        std::hint::spin_loop();
    }
}

#[allow(clippy::too_many_arguments)]
fn direct_client(
    mut sender: Sender,
    flow: u16,
    spec: FlowSpec,
    batch: usize,
    max: u64,
    start: &StartGate,
    clock: ClientClock,
    seconds: f64,
) -> ClientOutcome {
    let t0 = start.start(clock, flow);
    let deadline = t0 + (seconds * 1e9) as u64;
    let mut seq = 0u64;
    let mut buf = Vec::with_capacity(batch);
    match spec.pace_pps {
        None => {
            while seq < max && !interrupted() {
                let now = monotonic_ns();
                if now >= deadline {
                    break;
                }
                buf.clear();
                let k = (batch as u64).min(max - seq);
                buf.extend((0..k).map(|j| Datagram::new(flow, seq + j, now)));
                sender.send_now(&buf);
                seq += k;
            }
        }
        Some(pps) => {
            let pace = Pacing::new(t0, pps, seconds, max);
            while !interrupted() {
                let now = monotonic_ns();
                if pace.done(seq, now) {
                    break;
                }
                let due = pace.due(seq);
                if now >= due {
                    sender.send_now(&[Datagram::new(flow, seq, due)]);
                    seq += 1;
                } else {
                    wait_until(due);
                }
            }
        }
    }
    ClientOutcome {
        offered: seq,
        counters: sender.finish(),
        delays: sender.delays().cloned(),
        call_delays: sender.call_delays().cloned(),
        left_queued: 0,
        stall_ns: 0,
    }
}

#[allow(clippy::too_many_arguments)]
fn fairway_client(
    client: fairway_runtime::Client<Datagram>,
    mut sender: Sender,
    flow: u16,
    spec: FlowSpec,
    batch: usize,
    max: u64,
    start: &StartGate,
    clock: ClientClock,
    seconds: f64,
) -> ClientOutcome {
    let (mut sub, mut drn) = client.split();
    let t0 = start.start(clock, flow);
    let deadline = t0 + (seconds * 1e9) as u64;
    let mut seq = 0u64;
    let mut accepted = 0u64;
    let mut transmitted = 0u64;
    let mut stall_ns = 0u64;
    match spec.pace_pps {
        None => {
            let mut waiting_since: Option<u64> = None;
            while seq < max && !interrupted() {
                let now = monotonic_ns();
                if now >= deadline {
                    break;
                }
                let room = (sub.room() as u64).min(batch as u64).min(max - seq);
                for _ in 0..room {
                    if sub.submit_quiet(Datagram::new(flow, seq, now)).is_err() {
                        break;
                    }
                    seq += 1;
                    accepted += 1;
                }
                if room > 0 {
                    sub.kick();
                }
                let n = drn.drain(&mut sender) as u64;
                transmitted += n;
                if room == 0 && n == 0 {
                    // Waiting for the arbiter. A grant normally comes within
                    // a few µs; past YIELD_AFTER_NS the grants are going to
                    // other clients, so let the next client of this CPU run
                    // (they share it round-robin).
                    let t = monotonic_ns();
                    let since = *waiting_since.get_or_insert(t);
                    if t - since > YIELD_AFTER_NS {
                        std::thread::yield_now();
                        waiting_since = None;
                    } else {
                        std::hint::spin_loop();
                    }
                } else {
                    waiting_since = None;
                }
            }
        }
        Some(pps) => {
            let pace = Pacing::new(t0, pps, seconds, max);
            // When the previous turn with work started: a packet to submit
            // or one waiting for its grant (None while sleeping until due).
            let mut busy_turn: Option<u64> = None;
            while !interrupted() {
                let now = monotonic_ns();
                let after_wait = busy_turn.is_none();
                if let Some(prev) = busy_turn {
                    // Includes the turn's own work (a poll, a send call).
                    stall_ns = stall_ns.max(now - prev);
                }
                busy_turn = None;
                if pace.done(seq, now) {
                    break;
                }
                if transmitted < accepted {
                    // Granted soon: poll the grant index every Δ_C.
                    transmitted += drn.drain(&mut sender) as u64;
                    busy_turn = Some(now);
                    continue;
                }
                let due = pace.due(seq);
                if now >= due {
                    if after_wait {
                        // Woken this late after the due time. (Late after
                        // polling for the previous packet's grant is the
                        // scheduler's delay, not the thread's.)
                        stall_ns = stall_ns.max(now - due);
                    }
                    // A refused submit (full queue) is retried at the next
                    // turn of the loop.
                    if sub.submit(Datagram::new(flow, seq, due)).is_ok() {
                        seq += 1;
                        accepted += 1;
                    }
                    busy_turn = Some(now);
                } else {
                    wait_until(due);
                }
            }
        }
    }
    // Transmit what is still granted, for a bounded time.
    let grace_end = monotonic_ns() + GRACE_NS;
    while transmitted < accepted && monotonic_ns() < grace_end && !interrupted() {
        let n = drn.drain_now(&mut sender) as u64;
        transmitted += n;
        if n == 0 {
            std::thread::yield_now();
        }
    }
    ClientOutcome {
        offered: accepted,
        counters: sender.finish(),
        delays: sender.delays().cloned(),
        call_delays: sender.call_delays().cloned(),
        left_queued: accepted - transmitted,
        stall_ns,
    }
}

/// A client that only submits (`fairway-dispatch`): the arbiter thread
/// transmits its granted packets. Returns the packets accepted and, paced,
/// how late after its due time it submitted at worst (ns).
#[allow(clippy::too_many_arguments)]
fn submitting_client(
    mut sub: ClientSubmitter<Datagram>,
    flow: u16,
    spec: FlowSpec,
    batch: usize,
    max: u64,
    start: &StartGate,
    clock: ClientClock,
    seconds: f64,
) -> (u64, u64) {
    let t0 = start.start(clock, flow);
    let deadline = t0 + (seconds * 1e9) as u64;
    let mut seq = 0u64;
    let mut stall_ns = 0u64;
    match spec.pace_pps {
        None => {
            let mut waiting_since: Option<u64> = None;
            while seq < max && !interrupted() {
                let now = monotonic_ns();
                if now >= deadline {
                    break;
                }
                let room = (sub.room() as u64).min(batch as u64).min(max - seq);
                let mut n = 0;
                for _ in 0..room {
                    if sub.submit_quiet(Datagram::new(flow, seq, now)).is_err() {
                        break;
                    }
                    seq += 1;
                    n += 1;
                }
                if n > 0 {
                    sub.kick();
                    waiting_since = None;
                } else {
                    // Queue full: the dispatcher is behind. As in
                    // `fairway_client`, past YIELD_AFTER_NS let the next
                    // client of this CPU run.
                    let since = *waiting_since.get_or_insert(now);
                    if now - since > YIELD_AFTER_NS {
                        std::thread::yield_now();
                        waiting_since = None;
                    } else {
                        std::hint::spin_loop();
                    }
                }
            }
        }
        Some(pps) => {
            let pace = Pacing::new(t0, pps, seconds, max);
            while !interrupted() {
                let now = monotonic_ns();
                if pace.done(seq, now) {
                    break;
                }
                let due = pace.due(seq);
                if now >= due {
                    stall_ns = stall_ns.max(now - due);
                    // A refused submit (full queue) is retried at the next
                    // turn of the loop.
                    if sub.submit(Datagram::new(flow, seq, due)).is_ok() {
                        seq += 1;
                    }
                } else {
                    wait_until(due);
                }
            }
        }
    }
    (seq, stall_ns)
}

fn testbed_err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The machine-wide lock every trial holds while it runs.
pub const TRIAL_LOCK_PATH: &str = "/run/fairway-udp-bench.lock";
/// How long a trial waits for another process's trial to end, at most.
const TRIAL_LOCK_WAIT: Duration = Duration::from_secs(120);

/// Holds [`TRIAL_LOCK_PATH`] (an advisory `flock`) until dropped.
///
/// Trials pin real-time threads to fixed CPUs; two processes running
/// trials at once (a benchmark and the root-run tests, say) would share
/// them, and a busy-polling arbiter at the same `SCHED_FIFO` priority as
/// another's never lets it run: a trial then delivers nothing. Every trial
/// of every process takes this lock first, so they run one at a time.
struct TrialLock(#[allow(dead_code)] std::fs::File);

impl TrialLock {
    fn acquire() -> Result<Self, String> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(TRIAL_LOCK_PATH)
            .map_err(|e| format!("{TRIAL_LOCK_PATH}: {e}"))?;
        let give_up = std::time::Instant::now() + TRIAL_LOCK_WAIT;
        loop {
            match f.try_lock() {
                Ok(()) => return Ok(Self(f)),
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < give_up => {
                    if interrupted() {
                        return Err("interrupted".into());
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(format!(
                    "another process held {TRIAL_LOCK_PATH} (a udp-bench trial) for more than {} s",
                    TRIAL_LOCK_WAIT.as_secs()
                ))
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(format!("{TRIAL_LOCK_PATH}: {e}"))
                }
            }
        }
    }
}

/// Runs one trial on a fresh testbed, which is removed before returning.
/// Trials of all processes on the machine run one at a time
/// ([`TRIAL_LOCK_PATH`]).
pub fn run_trial(spec: &TrialSpec) -> Result<TrialResult, String> {
    let n = spec.flows.len();
    if n == 0 || n > 4096 {
        return Err(format!("clients {n} outside 1..=4096"));
    }
    if !crate::testbed::is_root() {
        return Err(crate::testbed::TestbedError::NeedsRoot.to_string());
    }
    let _lock = TrialLock::acquire()?;
    let tb = Testbed::create().map_err(testbed_err)?;
    let link_bps = spec.link_bps();
    if spec.mode == Mode::Tc {
        let classes: Vec<HtbClass> = spec
            .flows
            .iter()
            .map(|f| HtbClass { weight: f.weight })
            .collect();
        tb.set_htb(&classes, link_bps, FRAME_LEN)
            .map_err(testbed_err)?;
    }
    let watched: Vec<usize> = (0..n).filter(|&i| spec.flows[i].watched).collect();
    if spec.receive == ReceivePath::IngressDrop {
        if watched.len() > 1 {
            return Err(format!(
                "receive path ingress-drop keeps one watched flow, not {}",
                watched.len()
            ));
        }
        let keep = watched.first().map(|&w| BASE_PORT + w as u16);
        tb.drop_at_ingress(keep).map_err(testbed_err)?;
    }
    let before = tb.kernel_drops().map_err(testbed_err)?;
    let sockets = tb
        .in_receiver_ns(|| ReceiverSockets::bind(RECEIVER_IP, BASE_PORT, n, None))
        .map_err(testbed_err)?
        .map_err(|e| format!("receiver sockets: {e}"))?;
    let addrs: Vec<_> = (0..n).map(|i| sockets.addr(i)).collect();
    let tc = spec.mode == Mode::Tc;
    let batch = spec.batch;
    let ifindex = match spec.transport {
        Transport::AfPacket | Transport::AfPacketRing => {
            Some(tb.sender_ifindex().map_err(testbed_err)?)
        }
        Transport::Udp => None,
    };
    let transport = spec.transport;
    let bypass = spec.qdisc_bypass && !tc;
    let mut senders: Vec<Sender> = tb
        .in_sender_ns(|| {
            addrs
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let prio = tc.then(|| Testbed::htb_priority(i));
                    let frame = FrameAddrs {
                        src_mac: SENDER_MAC,
                        dst_mac: RECEIVER_MAC,
                        src_ip: SENDER_IP,
                        dst_ip: RECEIVER_IP,
                        src_port: 30_000u16.wrapping_add(i as u16),
                        dst_port: a.port(),
                    };
                    match (transport, ifindex) {
                        (Transport::AfPacket, Some(ix)) => {
                            let mut s = PacketSender::open(ix, frame, batch, prio)?;
                            if bypass {
                                s.bypass_qdisc()?;
                            }
                            Ok(Sender::Packet(s))
                        }
                        (Transport::AfPacketRing, Some(ix)) => {
                            let mut s = RingSender::open(ix, frame, batch, prio, SEND_TIMEOUT)?;
                            if bypass {
                                s.bypass_qdisc()?;
                            }
                            Ok(Sender::Ring(s))
                        }
                        _ => UdpSender::connect(*a, batch, prio, SEND_TIMEOUT).map(Sender::Udp),
                    }
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(testbed_err)?
        .map_err(|e| format!("sender sockets: {e}"))?;
    for &w in &watched {
        if let Some(s) = senders.get_mut(w) {
            s.record_delays();
        }
    }
    let p = spec.placement;
    let high = p.rt_priority.map(|x| x.saturating_add(1).min(99));
    let receiver = Receiver::spawn(sockets, watched.clone(), p.receiver_cpu, high)
        .map_err(|e| format!("receiver: {e}"))?;

    // Opened before the arbiter starts: the busy-polling arbiter's
    // real-time time on its CPU counts from its spawn (see
    // `RT_COOLDOWN_MS`), so nothing slow may come between it and t0.
    let mut counters = tb.sender_device_counters().map_err(testbed_err)?;
    // What each client thread gets: its sender (direct), its client and
    // sender (fairway), or only its submitting half (fairway-dispatch,
    // whose senders go to the arbiter thread with the draining halves).
    let mut roles: Vec<Option<Role>> = Vec::with_capacity(n);
    let mut arbiter = None;
    let mut dispatching = None;
    let drained: Arc<[AtomicU64]> = (0..n).map(|_| AtomicU64::new(0)).collect();
    if !spec.mode.uses_arbiter() {
        roles.extend(senders.drain(..).map(|s| Some(Role::Direct(s))));
    } else {
        let mut clients = Vec::with_capacity(n);
        let cfg = RuntimeConfig {
            rate_bps: link_bps,
            delta_a: Duration::from_nanos(spec.delta_a_ns),
            delta_c: Duration::from_nanos(spec.delta_c_ns),
            mode: ArbiterMode::BusyPoll,
            arbiter_cpu: p.arbiter_cpu,
            realtime_priority: p.rt_priority,
            ..RuntimeConfig::default()
        };
        let mut b = RuntimeBuilder::new(cfg).map_err(|e| e.to_string())?;
        for f in &spec.flows {
            clients.push(
                b.add_client::<Datagram>(ClientConfig {
                    weight: f.weight,
                    max_len: FRAME_LEN,
                    queue_len: spec.queue_len,
                })
                .map_err(|e| e.to_string())?,
            );
        }
        let sched = spec.sched.clone();
        let make = move |c, l| sched.build::<u32>(c, l);
        if spec.mode == Mode::FairwayDispatch {
            let mut lanes = Vec::with_capacity(n);
            for (c, sender) in clients.into_iter().zip(senders.drain(..)) {
                let (sub, drainer) = c.split();
                roles.push(Some(Role::Submit(sub)));
                lanes.push(Lane { drainer, sender });
            }
            let d = SenderDispatch::new(lanes, drained.clone());
            dispatching = Some(b.spawn_dispatching(make, d).map_err(|e| e.to_string())?);
        } else {
            roles.extend(
                clients
                    .into_iter()
                    .zip(senders.drain(..))
                    .map(|(c, s)| Some(Role::Fairway(Box::new((c, s))))),
            );
            arbiter = Some(b.spawn(make).map_err(|e| e.to_string())?);
        }
    }

    // The arbiter's round gaps, counted from t0 until the clients are done.
    let gap_window = arbiter
        .as_ref()
        .map(|a| a.scan_gap_window())
        .or_else(|| dispatching.as_ref().map(|d| d.scan_gap_window()));
    let sampler_window = gap_window.clone();
    // The clients and the sampler.
    let start = StartGate::new(n + 1);
    let clock = spec.clock;
    let seconds = spec.seconds;
    let (outcomes, window) = std::thread::scope(|s| {
        let start = &start;
        let sampler = std::thread::Builder::new()
            .name("rate-sampler".into())
            .spawn_scoped(s, move || -> std::io::Result<(u64, f64, Vec<f64>)> {
                if let Some(c) = p.receiver_cpu {
                    let _ = fairway_runtime::affinity::pin_current_thread(c);
                }
                if let Some(h) = high {
                    let _ = fairway_runtime::set_realtime_priority(h);
                }
                let t0 = start.t0();
                if let Some(w) = &sampler_window {
                    sleep_until(t0);
                    w.take();
                }
                let span = (seconds * 1e9) as u64;
                // Each reading is timed by the midpoint of the read.
                let mut sample = |at: u64| -> std::io::Result<(u64, u64)> {
                    sleep_until(at);
                    let a = monotonic_ns();
                    let v = counters.read()?.tx_packets;
                    Ok((v, (a + monotonic_ns()) / 2))
                };
                let start_at = t0 + (span as f64 * WARMUP_FRACTION) as u64;
                let (c0, t_a) = sample(start_at)?;
                // Intermediate readings every SLICE_NS show how steady the
                // rate was within the window.
                let (mut c, mut t) = (c0, t_a);
                let mut slices = Vec::new();
                let mut at = start_at + SLICE_NS;
                while at + SLICE_NS / 2 < t0 + span {
                    let (c1, t1) = sample(at)?;
                    slices.push((c1 - c) as f64 * 1e9 / (t1 - t).max(1) as f64);
                    (c, t) = (c1, t1);
                    at += SLICE_NS;
                }
                let (c1, t_b) = sample(t0 + span)?;
                slices.push((c1 - c) as f64 * 1e9 / (t_b - t).max(1) as f64);
                Ok((c1 - c0, (t_b - t_a) as f64 / 1e9, slices))
            })
            .map_err(|e| format!("sampler thread: {e}"))?;
        let handles: Vec<_> = roles
            .iter_mut()
            .enumerate()
            .map(|(i, role)| {
                let f = spec.flows[i];
                let role = role.take();
                std::thread::Builder::new()
                    .name(format!("client-{i}"))
                    .spawn_scoped(s, move || {
                        if let Some(c) = p.client_cpu {
                            let _ = fairway_runtime::affinity::pin_current_thread(c);
                        }
                        // Best effort: without the capability the run is
                        // only noisier.
                        match (p.rt_priority, f.pace_pps) {
                            (Some(_), Some(_)) => {
                                let _ = fairway_runtime::set_realtime_priority(high.unwrap_or(99));
                            }
                            (Some(prio), None) => {
                                let _ = fairway_runtime::net::set_round_robin_priority(prio);
                            }
                            _ => {}
                        }
                        let (batch, max, secs) =
                            (spec.batch, spec.max_packets_per_flow, spec.seconds);
                        match role {
                            Some(Role::Fairway(cs)) => {
                                let (c, sender) = *cs;
                                fairway_client(
                                    c, sender, i as u16, f, batch, max, start, clock, secs,
                                )
                            }
                            Some(Role::Direct(sender)) => {
                                direct_client(sender, i as u16, f, batch, max, start, clock, secs)
                            }
                            Some(Role::Submit(sub)) => {
                                let (accepted, stall_ns) = submitting_client(
                                    sub, i as u16, f, batch, max, start, clock, secs,
                                );
                                // Sent and left queued are the dispatcher's,
                                // filled in once it stopped.
                                ClientOutcome {
                                    offered: accepted,
                                    counters: SendCounters::default(),
                                    delays: None,
                                    call_delays: None,
                                    left_queued: accepted,
                                    stall_ns,
                                }
                            }
                            None => ClientOutcome {
                                offered: 0,
                                counters: SendCounters::default(),
                                delays: None,
                                call_delays: None,
                                left_queued: 0,
                                stall_ns: 0,
                            },
                        }
                    })
            })
            .collect();
        let outcomes = handles
            .into_iter()
            .map(|h| {
                h.map_err(|e| format!("client thread: {e}"))?
                    .join()
                    .map_err(|_| "client thread panicked".to_string())
            })
            .collect::<Result<Vec<_>, String>>()?;
        let window = sampler
            .join()
            .map_err(|_| "sampler thread panicked".to_string())?
            .map_err(|e| format!("link counters: {e}"))?;
        Ok::<_, String>((outcomes, window))
    })?;
    let arbiter_scan_gap_ns = gap_window.map(|w| w.take());
    let mut outcomes = outcomes;
    let mut arbiter_stats = match arbiter {
        Some(a) => Some(a.stop().map_err(|e| e.to_string())?),
        None => None,
    };
    if let Some(h) = dispatching {
        // The dispatcher transmits what is still granted, for a bounded time.
        let grace_end = monotonic_ns() + GRACE_NS;
        let behind = || {
            outcomes
                .iter()
                .zip(drained.iter())
                .any(|(o, d)| d.load(Ordering::Relaxed) < o.offered)
        };
        while behind() && monotonic_ns() < grace_end && !interrupted() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (stats, d) = h.stop().map_err(|e| e.to_string())?;
        arbiter_stats = Some(stats);
        let d = d.ok_or("the arbiter (dispatcher) thread panicked")?;
        for ((o, lane), drained) in outcomes.iter_mut().zip(d.into_lanes()).zip(drained.iter()) {
            let mut sender = lane.sender;
            let accepted = o.offered;
            *o = ClientOutcome {
                stall_ns: o.stall_ns,
                offered: accepted,
                counters: sender.finish(),
                delays: sender.delays().cloned(),
                call_delays: sender.call_delays().cloned(),
                left_queued: accepted - drained.load(Ordering::Relaxed).min(accepted),
            };
        }
    }

    // Let the qdisc empty (bounded), then read everything back.
    let t_quiesce = std::time::Instant::now();
    while t_quiesce.elapsed() < QUIESCE_MAX {
        let k = tb.kernel_drops().map_err(testbed_err)?;
        if k.qdisc_backlog == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(20));
    let report = receiver.finish().map_err(|e| format!("receiver: {e}"))?;
    let k: KernelDrops = tb.kernel_drops().map_err(testbed_err)?.since(&before);
    drop(tb);

    let flows: Vec<FlowResult> = outcomes
        .iter()
        .zip(&report.flows)
        .zip(&spec.flows)
        .map(|((o, r), f)| FlowResult {
            weight: f.weight,
            offered: o.offered,
            sent: o.counters.sent,
            refused: o.counters.refused,
            calls: o.counters.calls,
            received: r.received,
            socket_drops: r.socket_drops,
            left_queued: o.left_queued,
        })
        .collect();
    let sent: u64 = flows.iter().map(|f| f.sent).sum();
    let received: u64 = flows.iter().map(|f| f.received).sum();
    let socket_drops: u64 = flows.iter().map(|f| f.socket_drops).sum();
    let outside = k.outside_sockets();
    let counted = socket_drops + outside;
    let target = watched.first().map(|&t| {
        let offered = spec.flows[t].pace_pps.unwrap_or(0) as f64;
        let rx = &report.flows[t];
        let received_pps = rx.received as f64 / spec.seconds;
        let (latency, cdf) = match &rx.delays {
            Some(h) => (Percentiles::of(h), cdf_points(h, 200)),
            None => (Percentiles::default(), Vec::new()),
        };
        let app_latency = rx
            .app_delays
            .as_ref()
            .map(Percentiles::of)
            .unwrap_or_default();
        let sched = outcomes[t].delays.clone();
        TargetResult {
            flow: t,
            offered_pps: offered,
            received_pps,
            rate_ratio: if offered > 0.0 {
                received_pps / offered
            } else {
                0.0
            },
            latency,
            app_latency,
            cdf,
            sched_delay: sched.as_ref().map(Percentiles::of).unwrap_or_default(),
            call_delay: outcomes[t]
                .call_delays
                .as_ref()
                .map(Percentiles::of)
                .unwrap_or_default(),
            sched_delay_hist: sched,
            stall_ns: outcomes[t].stall_ns,
        }
    });
    Ok(TrialResult {
        mode: spec.mode,
        clients: n,
        link_pps: spec.link_pps,
        seconds: spec.seconds,
        flows,
        kernel: KernelCounts {
            qdisc: k.qdisc,
            ingress: k.ingress,
            veth: k.veth_tx + k.veth_rx,
            udp_other: k.udp_no_ports + k.udp_other_errors,
            udp_rcvbuf_errors: k.udp_rcvbuf_errors,
        },
        sent,
        received,
        counted_drops: counted,
        unaccounted: sent as i64 - received as i64 - counted as i64,
        tx_pps: sent as f64 / spec.seconds,
        delivered_pps: if window.1 > 0.0 {
            window.0 as f64 / window.1
        } else {
            0.0
        },
        window_seconds: window.1,
        slice_pps: window.2,
        target,
        decisions: arbiter_stats.map(|a| a.decisions),
        arbiter_scan_gap_ns,
    })
}
