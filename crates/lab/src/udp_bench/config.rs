//! The parameters of a real-packet run: which experiments, the clients,
//! rates and Δs, the transport, where the threads run (the PSPAT paper §5.2–§5.5,
//! with the paper's values as the CLI's defaults), each checked against its
//! range.

use super::error::ConfigError;
use super::spec::{ClientClock, FlowSpec, Mode, Placement, ReceivePath, Transport, TrialSpec};
use fairway_core::SchedSpec;
use fairway_runtime::net::FRAME_LEN;

/// Which experiments to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Experiment {
    /// Throughput versus clients (Fig. 6).
    pub throughput: bool,
    /// Target latency alone and under load (Figs. 8, 10) + Eq. (1).
    pub latency: bool,
    /// p98 versus link rate (Fig. 9).
    pub sweep: bool,
    /// Throughput of each transport (UDP `sendmmsg`, `AF_PACKET`
    /// `sendmmsg`, `AF_PACKET` TX ring) in each configuration, interleaved
    /// in one run.
    pub transports: bool,
}

/// The run's parameters.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Client counts for the throughput experiment.
    pub clients: Vec<usize>,
    /// Seconds per trial.
    pub seconds: f64,
    /// Trials per throughput point and configuration (the median is kept).
    pub repeat: usize,
    /// Trials per sweep point and configuration (the median p98 is kept).
    pub sweep_repeat: usize,
    /// Rounds of the target-alone latency trials, every configuration
    /// once per round in `modes` order; the added median is the median of
    /// the per-round differences.
    pub latency_repeat: usize,
    /// The configurations to measure, in this order within each repeat.
    pub modes: Vec<Mode>,
    /// What becomes of the unread flows' packets at the receiving end.
    pub receive: ReceivePath,
    /// Raw frames skip the qdisc in every configuration but `tc`
    /// ([`TrialSpec::qdisc_bypass`]).
    pub qdisc_bypass: bool,
    /// Keep every CPU out of its idle halt during the latency and sweep
    /// experiments ([`fairway_runtime::net::IdleSpinners`]).
    pub idle_spin: bool,
    /// Interfering (flat-out) clients next to the target.
    pub interferers: usize,
    /// The target's rate, packets/s (the PSPAT paper: 4000).
    pub target_pps: u64,
    /// The target's weight (the PSPAT paper: 50; the others have 1).
    pub target_weight: u32,
    /// Link rate of the loaded latency experiment, packets/s.
    pub link_pps: u64,
    /// Link rates of the sweep, packets/s.
    pub rates: Vec<u64>,
    /// The arbiter's scheduler.
    pub sched: SchedSpec,
    /// Δ_A and Δ_C of the throughput experiment, ns (§5.2: 1000).
    pub delta_throughput_ns: u64,
    /// Δ_A and Δ_C of the latency experiments, ns (§5.5: 500).
    pub delta_latency_ns: u64,
    /// Datagrams per `sendmmsg`.
    pub batch: usize,
    /// UDP sockets or raw `AF_PACKET` frames.
    pub transport: Transport,
    /// Client queue length.
    pub queue_len: usize,
    /// Thread placement.
    pub placement: Placement,
    /// Which experiments.
    pub experiments: Experiment,
    /// Packets per client at most, per trial.
    pub max_packets_per_flow: u64,
    /// Pause before each trial but the first, ms ([`RT_COOLDOWN_MS`]).
    pub cooldown_ms: u64,
}

/// The pause between trials that keeps every trial clear of the kernel's
/// real-time throttling, ms.
///
/// Linux lets real-time threads use `sched_rt_runtime_us` (950 000) of
/// every `sched_rt_period_us` (1 000 000) on each CPU, and charges what a
/// CPU used past one period boundary to the next only down to zero
/// (`rt_time −= runtime` per period). A trial keeps a CPU busy at
/// real-time priority for its whole length (the busy-polling arbiter, the
/// flat-out clients); two trials back to back use more than 0.95 s of some
/// 1 s period and that CPU is stopped for the rest of the period — a 50 ms
/// pause of every real-time thread on it, the target's too. After 1.1 s
/// without real-time load the budget is whole again, so a trial whose
/// real-time span stays under 0.95 s is never throttled. That span is
/// longer than `seconds`: the arbiter busy-polls from its spawn, through
/// the 0.1 s start lead, to the end of the trial (a paced target may catch
/// up for a while past the deadline), and the receiver and the rate
/// sampler share its CPU: the default `seconds` is 0.7 to keep that span
/// well inside the budget.
pub const RT_COOLDOWN_MS: u64 = 1_100;

impl BenchConfig {
    /// Checks every parameter; the error names it and its allowed range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let out_of_range = |option, value: &dyn std::fmt::Display, range: &str| {
            Err(ConfigError::OutOfRange {
                option,
                value: value.to_string(),
                range: range.to_string(),
            })
        };
        if !(self.seconds > 0.0 && self.seconds <= 60.0) {
            return out_of_range("--seconds", &self.seconds, "(0, 60]");
        }
        if self.clients.is_empty() || self.clients.iter().any(|&c| c == 0 || c > 256) {
            return Err(ConfigError::ClientCount);
        }
        for (option, v) in [
            ("--repeat", self.repeat),
            ("--sweep-repeat", self.sweep_repeat),
            ("--latency-repeat", self.latency_repeat),
        ] {
            if v == 0 || v > 20 {
                return out_of_range(option, &v, "1..=20");
            }
        }
        if self.modes.is_empty() {
            return Err(ConfigError::NoModes);
        }
        for (i, m) in self.modes.iter().enumerate() {
            if self.modes[..i].contains(m) {
                return Err(ConfigError::ModeTwice(*m));
            }
        }
        if self.qdisc_bypass && self.transport == Transport::Udp && !self.experiments.transports {
            return Err(ConfigError::BypassNeedsRawFrames);
        }
        if self.interferers > 255 {
            return out_of_range("--interferers", &self.interferers, "0..=255");
        }
        if self.target_pps == 0 || self.target_pps > 1_000_000 {
            return out_of_range("--target-pps", &self.target_pps, "1..=1000000");
        }
        if self.target_weight == 0 {
            return Err(ConfigError::ZeroTargetWeight);
        }
        let max_pps = 1_000_000_000_000 / (FRAME_LEN as u64 * 8);
        for &r in std::iter::once(&self.link_pps).chain(&self.rates) {
            if r < 100 || r > max_pps {
                return Err(ConfigError::LinkRate {
                    pps: r,
                    max: max_pps,
                });
            }
        }
        if self.batch == 0 || self.batch > 1024 {
            return out_of_range("--batch", &self.batch, "1..=1024");
        }
        let ring = fairway_runtime::net::tx_ring::RING_FRAMES;
        if (self.transport == Transport::AfPacketRing || self.experiments.transports)
            && self.batch > ring
        {
            return Err(ConfigError::BatchOverRing {
                batch: self.batch,
                ring,
            });
        }
        if self.cooldown_ms > 60_000 {
            return out_of_range("--cooldown-ms", &self.cooldown_ms, "0..=60000");
        }
        if self.queue_len == 0 || self.queue_len >= 1 << 20 {
            return out_of_range("--queue-len", &self.queue_len, "1..1048576");
        }
        Ok(())
    }

    pub(super) fn spec(
        &self,
        mode: Mode,
        flows: Vec<FlowSpec>,
        link_pps: Option<u64>,
        delta: u64,
    ) -> TrialSpec {
        TrialSpec {
            mode,
            flows,
            link_pps,
            seconds: self.seconds,
            max_packets_per_flow: self.max_packets_per_flow,
            sched: self.sched.clone(),
            delta_a_ns: delta,
            delta_c_ns: delta,
            batch: self.batch,
            transport: self.transport,
            queue_len: self.queue_len,
            placement: self.placement,
            clock: ClientClock::Shared,
            receive: self.receive,
            qdisc_bypass: self.qdisc_bypass,
        }
    }

    /// The configured modes that the sweep measures (`none` has no link
    /// rate to configure), in [`SWEPT`] order.
    pub fn swept(&self) -> Vec<Mode> {
        SWEPT
            .iter()
            .copied()
            .filter(|m| self.modes.contains(m))
            .collect()
    }

    pub(super) fn target_flows(&self, interferers: usize) -> Vec<FlowSpec> {
        let mut f = vec![FlowSpec {
            weight: self.target_weight,
            pace_pps: Some(self.target_pps),
            watched: true,
        }];
        f.extend((0..interferers).map(|_| FlowSpec {
            weight: 1,
            pace_pps: None,
            watched: false,
        }));
        f
    }

    /// Number of trials `run` makes (for a progress bar).
    pub fn trials(&self) -> usize {
        let mut t = 0;
        let modes = self.modes.len();
        if self.experiments.throughput {
            t += self.clients.len() * modes * self.repeat;
        }
        if self.experiments.latency {
            t += (self.latency_repeat + 1) * modes;
        }
        if self.experiments.sweep {
            t += self.rates.len() * self.swept().len() * self.sweep_repeat;
        }
        if self.experiments.transports {
            t += self.clients.len() * modes * Transport::ALL.len() * self.repeat;
        }
        t
    }
}

/// The configurations of the p98-versus-rate sweep (`none` has no link
/// rate to configure).
pub const SWEPT: [Mode; 3] = [Mode::Tc, Mode::Fairway, Mode::FairwayDispatch];
