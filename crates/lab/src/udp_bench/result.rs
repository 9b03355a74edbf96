//! What one trial measured: per client, for the watched target, and the
//! kernel's counters along the path, with the check that every packet is
//! accounted for.

use super::spec::Mode;
use hdrhistogram::Histogram;
use serde::Serialize;

/// Latency percentiles, µs.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 98th percentile (the PSPAT paper Fig. 9).
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
    /// t0 + [`WARMUP_FRACTION`](super::sampler::WARMUP_FRACTION)·seconds
    /// and the deadline t0 + seconds.
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

/// Serializable copy of [`KernelDrops`](crate::testbed::KernelDrops).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct KernelCounts {
    /// Root qdisc drops.
    pub qdisc: u64,
    /// Drops at the receiver's ingress
    /// ([`ReceivePath::IngressDrop`](super::spec::ReceivePath::IngressDrop)).
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
