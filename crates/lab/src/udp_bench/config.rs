//! The parameters of a real-packet run: which experiments, the clients,
//! rates and Δs, the transport, where the threads run (the PSPAT paper §5.2–§5.5,
//! with the paper's values as the CLI's defaults), each checked against its
//! range.

use super::error::ConfigError;
use super::spec::{ClientClock, FlowSpec, Mode, Placement, ReceivePath, Transport, TrialSpec};
use fairway_core::{Limits, SchedSpec};
use fairway_runtime::mailbox::MAX_QUEUE_LEN;
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

/// Shortest trial, s: the delivered rate is counted in slices of 50 ms
/// (`sampler.rs`), and a shorter trial has not one.
pub const MIN_SECONDS: f64 = 0.05;
/// Longest trial, s.
pub const MAX_SECONDS: f64 = 60.0;
/// Most clients in one trial (a throughput count, or the target and its
/// interferers): each takes two sockets, a sender's and a receiver's, and
/// a process may open 1024 files by default (`ulimit -n`).
pub const MAX_CLIENTS: usize = 256;
/// Largest Δ_A = Δ_C, ns (1 s): Δ is how often the arbiter scans and the
/// clients read their grants, and a trial lasts at most a minute.
pub const MAX_DELTA_NS: u64 = 1_000_000_000;
/// Most packets the client queues of one trial hold together (clients ×
/// `--queue-len`): each takes a slot in its client's ring and in the
/// scheduler, tens of bytes, so this keeps a trial's queues near 1 GiB.
pub const MAX_QUEUED_PACKETS: u64 = 1 << 24;
/// Longest run the parameters may plan, s (24 h): trials × `--seconds`
/// plus the pauses between them. Every trial holds the machine's CPUs at
/// real-time priority and the machine-wide trial lock; a longer campaign
/// is several runs.
pub const MAX_RUN_SECONDS: f64 = 24.0 * 3600.0;
/// Slowest HTB class, bit/s: HTB keeps rates in bytes/s, so a class of
/// less than 8 bit/s would get none.
pub const MIN_HTB_CLASS_BPS: u64 = 8;
/// Largest `--rt-priority`: the target client and the receiver run one
/// above it, and 99 is the highest real-time priority.
pub const MAX_RT_PRIORITY: u8 = 98;

impl BenchConfig {
    /// Checks every parameter, then the totals derived from several; the
    /// error names the parameter and its allowed range (and why, where the
    /// range is not obvious).
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_counts()?;
        self.validate_rates()?;
        self.validate_totals()
    }

    /// The lengths, counts and times.
    fn validate_counts(&self) -> Result<(), ConfigError> {
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&self.seconds) {
            return out_of_range(
                "--seconds",
                crate::arbiter_bench::limits::shown(self.seconds),
                format!("[{MIN_SECONDS}, {MAX_SECONDS}]"),
                Some("the delivered rate is counted in 50 ms slices"),
            );
        }
        if self.clients.is_empty() {
            return Err(ConfigError::EmptyList {
                option: "--clients",
            });
        }
        for &c in &self.clients {
            if c == 0 || c > MAX_CLIENTS {
                return out_of_range("--clients", c, clients_range(), Some(CLIENTS_WHY));
            }
        }
        if self.interferers >= MAX_CLIENTS {
            return out_of_range(
                "--interferers",
                self.interferers,
                format!("0..={}", MAX_CLIENTS - 1),
                Some("the target and its interferers are at most 256 clients, two sockets each"),
            );
        }
        for (option, v) in [
            ("--repeat", self.repeat),
            ("--sweep-repeat", self.sweep_repeat),
            ("--latency-repeat", self.latency_repeat),
        ] {
            if v == 0 || v > 20 {
                return out_of_range(option, v, "1..=20".into(), None);
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
        if self.target_weight == 0 || self.target_weight > Limits::DEFAULT.max_weight {
            return out_of_range(
                "--target-weight",
                self.target_weight,
                format!("1..={}", Limits::DEFAULT.max_weight),
                Some("the scheduler's largest weight"),
            );
        }
        for (option, d) in [
            ("--delta-ns", self.delta_throughput_ns),
            ("--latency-delta-ns", self.delta_latency_ns),
        ] {
            if d > MAX_DELTA_NS {
                return out_of_range(
                    option,
                    d,
                    format!("0..={MAX_DELTA_NS}"),
                    Some("a scan interval of at most 1 s, in trials of at most 60 s"),
                );
            }
        }
        if self.batch == 0 || self.batch > 1024 {
            return out_of_range("--batch", self.batch, "1..=1024".into(), None);
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
            return out_of_range("--cooldown-ms", self.cooldown_ms, "0..=60000".into(), None);
        }
        if self.queue_len == 0 || self.queue_len >= MAX_QUEUE_LEN {
            return out_of_range(
                "--queue-len",
                self.queue_len,
                format!("1..{MAX_QUEUE_LEN}"),
                None,
            );
        }
        if self.max_packets_per_flow == 0 {
            return out_of_range(
                "--max-packets",
                0,
                format!("1..={}", u64::MAX),
                Some("a client with no packet to send measures nothing"),
            );
        }
        if let Some(p) = self.placement.rt_priority {
            if p == 0 || p > MAX_RT_PRIORITY {
                return out_of_range(
                    "--rt-priority",
                    p,
                    format!("1..={MAX_RT_PRIORITY}"),
                    Some("the target client and the receiver run one above it, at most 99"),
                );
            }
        }
        Ok(())
    }

    /// The target's rate and the link rates.
    fn validate_rates(&self) -> Result<(), ConfigError> {
        if self.target_pps == 0 || self.target_pps > 1_000_000 {
            return out_of_range("--target-pps", self.target_pps, "1..=1000000".into(), None);
        }
        if self.rates.is_empty() {
            return Err(ConfigError::EmptyList { option: "--rates" });
        }
        let max_pps = MAX_LINK_BPS / (FRAME_LEN as u64 * 8);
        let rates = self.rates.iter().map(|&r| ("--rates", r));
        for (option, r) in std::iter::once(("--link-pps", self.link_pps)).chain(rates) {
            if !(MIN_LINK_PPS..=max_pps).contains(&r) {
                return Err(ConfigError::LinkRate {
                    option,
                    pps: r,
                    min: MIN_LINK_PPS,
                    max: max_pps,
                });
            }
        }
        Ok(())
    }

    /// The totals derived from several parameters: the queues of a trial,
    /// the slowest HTB class, the run's planned time.
    fn validate_totals(&self) -> Result<(), ConfigError> {
        let most_clients = self
            .clients
            .iter()
            .copied()
            .chain([self.interferers + 1])
            .max()
            .unwrap_or(1);
        let queued = most_clients as u64 * self.queue_len as u64;
        if queued > MAX_QUEUED_PACKETS {
            return Err(ConfigError::QueuedPackets {
                clients: most_clients,
                queue_len: self.queue_len,
                total: queued,
                max: MAX_QUEUED_PACKETS,
            });
        }
        if self.modes.contains(&Mode::Tc) {
            let shaped = self
                .experiments
                .latency
                .then_some(("--link-pps", self.link_pps));
            let swept = self.rates.iter().map(|&r| ("--rates", r));
            let swept = swept.filter(|_| self.experiments.sweep);
            let weights = u64::from(self.target_weight) + self.interferers as u64;
            for (option, pps) in shaped.into_iter().chain(swept) {
                // An interferer's share of the link: weight 1 of the sum.
                let share = pps * u64::from(FRAME_LEN) * 8 / weights;
                if share < MIN_HTB_CLASS_BPS {
                    return Err(ConfigError::HtbClassTooSlow {
                        option,
                        pps,
                        share,
                        min: MIN_HTB_CLASS_BPS,
                    });
                }
            }
        }
        let trials = self.trials();
        let planned = trials as f64 * self.seconds
            + trials.saturating_sub(1) as f64 * self.cooldown_ms as f64 / 1000.0;
        if planned > MAX_RUN_SECONDS {
            return Err(ConfigError::RunTooLong {
                trials,
                seconds: self.seconds,
                cooldown_ms: self.cooldown_ms,
                hours: planned / 3600.0,
                max_hours: MAX_RUN_SECONDS / 3600.0,
            });
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

/// Slowest link rate, packets/s.
pub const MIN_LINK_PPS: u64 = 100;
/// Fastest emulated link, bit/s (1 Tbit/s).
const MAX_LINK_BPS: u64 = 1_000_000_000_000;
/// Why `--clients` stops at [`MAX_CLIENTS`].
const CLIENTS_WHY: &str = "each client takes two sockets, and a process may open 1024 files";

fn clients_range() -> String {
    format!("1..={MAX_CLIENTS}")
}

/// A [`ConfigError::OutOfRange`].
pub(super) fn out_of_range(
    option: &'static str,
    value: impl std::fmt::Display,
    range: String,
    why: Option<&'static str>,
) -> Result<(), ConfigError> {
    Err(ConfigError::OutOfRange {
        option,
        value: value.to_string(),
        range,
        why,
    })
}
