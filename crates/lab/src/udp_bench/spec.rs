//! What one trial runs: the configuration (`none`, `tc`, `fairway`,
//! `fairway-dispatch`), the clients, the transport, where the threads run
//! and when the clients start (the PSPAT paper §5.2–§5.5).

use super::error::ConfigError;
use fairway_core::SchedSpec;
use fairway_runtime::net::FRAME_LEN;
use serde::Serialize;

/// HTB's link rate when the link should never be the bottleneck, bits/s.
pub const UNLIMITED_TC_BPS: u64 = 100_000_000_000;
/// fairway's emulated link rate when it should never be the bottleneck.
pub const UNLIMITED_FAIRWAY_BPS: u64 = 1_000_000_000_000;

/// When each client's sending time starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientClock {
    /// All clients start at one instant t0 and stop at t0 + `seconds`.
    Shared,
    /// Client `i` starts `i · step_ns` after t0 and stops `seconds` later,
    /// so the trial lasts longer than `seconds`, as when each client times
    /// itself from its first run and flat-out clients sharing one CPU
    /// under `SCHED_RR` start a time slice apart. Wrong for rates: only for
    /// the test that shows the rate check failing with it (cargo feature
    /// `test-support`).
    #[cfg(feature = "test-support")]
    Staggered {
        /// Delay between consecutive clients' starts, ns.
        step_ns: u64,
    },
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
    /// packet right after granting it (the dispatcher of the PSPAT paper §3,
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
    /// One UDP socket per client ([`UdpSender`](fairway_runtime::net::UdpSender)).
    Udp,
    /// One raw `AF_PACKET` socket per client writing whole frames with
    /// `sendmmsg` ([`PacketSender`](fairway_runtime::net::PacketSender);
    /// the analogue of the PSPAT paper's netmap path, Fig. 7).
    AfPacket,
    /// The same frames through a `TPACKET_V2` transmit ring per client
    /// ([`RingSender`](fairway_runtime::net::RingSender)).
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
    /// hands granted packets to the device in the PSPAT paper §3; `tc` always
    /// goes through its qdisc. Ignored with UDP sockets.
    pub qdisc_bypass: bool,
}

impl TrialSpec {
    /// Checks what [`BenchConfig::validate`](super::BenchConfig::validate)
    /// checks of one trial, for a spec made without a `BenchConfig`: the
    /// trial's length, each flow's rate and weight, the batch, the packet
    /// budget (errors name the command-line flag that sets each).
    pub fn validate(&self) -> Result<(), ConfigError> {
        use super::config::{out_of_range, MAX_SECONDS, MIN_SECONDS};
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&self.seconds) {
            let shown = crate::arbiter_bench::limits::shown(self.seconds);
            return out_of_range(
                "--seconds",
                shown,
                format!("[{MIN_SECONDS}, {MAX_SECONDS}]"),
                None,
            );
        }
        for f in &self.flows {
            if f.pace_pps == Some(0) {
                return out_of_range("--target-pps", 0, "1..=1000000".into(), None);
            }
            if f.weight == 0 {
                return out_of_range("--target-weight", 0, "1..=65536".into(), None);
            }
        }
        if self.batch == 0 || self.batch > 1024 {
            return out_of_range("--batch", self.batch, "1..=1024".into(), None);
        }
        if self.max_packets_per_flow == 0 {
            return out_of_range("--max-packets", 0, format!("1..={}", u64::MAX), None);
        }
        Ok(())
    }

    /// The link rate in bits/s this trial configures for `mode`.
    pub fn link_bps(&self) -> u64 {
        match (self.link_pps, self.mode) {
            (Some(p), _) => p * FRAME_LEN as u64 * 8,
            (None, Mode::Fairway | Mode::FairwayDispatch) => UNLIMITED_FAIRWAY_BPS,
            (None, _) => UNLIMITED_TC_BPS,
        }
    }
}
