//! The Prometheus endpoint of a running shaper (`--metrics ADDR`): the
//! statistics of [`crate::datapath::snapshot`] in the OpenMetrics text
//! exposition (which Prometheus reads), served at `/metrics` over HTTP.
//!
//! # Metrics
//!
//! Every series has the labels `direction` (`download`, `upload`),
//! `kind` (`node`, `circuit`, `default`, `unshaped`) and `class` (a
//! node's name, a circuit's id, `default`, `unshaped`):
//!
//! | name | type | what |
//! |---|---|---|
//! | `fairway_shape_received_bytes_total`, `…_received_packets_total` | counter | frames received |
//! | `fairway_shape_sent_bytes_total`, `…_sent_packets_total` | counter | frames sent on |
//! | `fairway_shape_dropped_packets_total` (label `reason`) | counter | drops: `codel`, `overflow`, `too_large`, `no_slot`, `send_failed` |
//! | `fairway_shape_flow_collisions_total` | counter | frames queued in an FQ-CoDel flow bucket busy with another flow |
//! | `fairway_shape_backlog_packets`, `…_backlog_bytes` | gauge | queued now |
//! | `fairway_shape_rate_bits_per_second` | gauge | sent over the last complete second |
//! | `fairway_shape_delay_seconds` (label `quantile`: 0.5, 0.9, 0.99, 1) | gauge | queueing delay over the last complete 10 s window |
//!
//! and `fairway_shape_uptime_seconds`. The delays are gauges with a
//! `quantile` label, as a summary's would be (the encoding crate has no
//! summary type).
//!
//! Three kinds of series are left out while they say nothing, which keeps
//! a scrape of 10,000 circuits to about half the text: a drop reason's
//! series and a class's collisions appear once there was one (as a labelled
//! counter of a client library appears on its first increment; read a
//! missing one as 0), and a class's delay quantiles only for a window in
//! which it sent a frame (no frame, no delay to tell).
//!
//! # The HTTP side
//!
//! A few lines over `std::net::TcpListener`, one connection at a time:
//! a scrape is one `GET /metrics` every few seconds from a known
//! collector, so a server crate (and an async runtime) would add much for
//! nothing. Requests are read with a timeout and a size limit.

use crate::control::Shaper;
use crate::datapath::snapshot::{ClassStats, DirStats, Snapshot};
use crate::plan::Dir;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The exposition's content type (OpenMetrics text).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// How long a scrape waits for the data path's statistics.
pub const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(5);
/// A client's request head is read within this time.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request head, bytes.
pub const MAX_HEAD_BYTES: u64 = 8192;

#[derive(Debug)]
struct Collect(Arc<Snapshot>);

type Field = fn(&DirStats) -> u64;

/// Counters and gauges of one `u64` field each.
const COUNTERS: [(&str, &str, Field); 4] = [
    (
        "fairway_shape_received_bytes",
        "Bytes received (Ethernet header and payload).",
        |d| d.received.bytes,
    ),
    ("fairway_shape_received_packets", "Frames received.", |d| {
        d.received.packets
    }),
    ("fairway_shape_sent_bytes", "Bytes sent on.", |d| {
        d.sent.bytes
    }),
    ("fairway_shape_sent_packets", "Frames sent on.", |d| {
        d.sent.packets
    }),
];
const GAUGES: [(&str, &str, Field); 3] = [
    ("fairway_shape_backlog_packets", "Frames queued now.", |d| {
        d.backlog.packets
    }),
    ("fairway_shape_backlog_bytes", "Bytes queued now.", |d| {
        d.backlog.bytes
    }),
    (
        "fairway_shape_rate_bits_per_second",
        "Bits sent per second over the last complete second.",
        |d| d.rate_bps,
    ),
];

fn labels(c: &ClassStats, d: Dir) -> [(&'static str, &str); 3] {
    [
        ("direction", d.name()),
        ("kind", c.kind.name()),
        ("class", c.id.as_str()),
    ]
}

fn rows(s: &Snapshot) -> impl Iterator<Item = (&ClassStats, Dir, &DirStats)> {
    s.classes
        .iter()
        .flat_map(|c| Dir::BOTH.map(|d| (c, d, c.get(d))))
}

impl Collector for Collect {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let s = &*self.0;
        for (name, help, field) in COUNTERS {
            let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (c, d, x) in rows(s) {
                ConstCounter::new(field(x)).encode(m.encode_family(&labels(c, d))?)?;
            }
        }
        let name = "fairway_shape_dropped_packets";
        let help = "Frames dropped, by reason.";
        let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
        for (c, d, x) in rows(s) {
            let [a, b, k] = labels(c, d);
            for (reason, n) in x.drops.by_reason() {
                if n.packets == 0 {
                    continue;
                }
                let l = [a, b, k, ("reason", reason)];
                ConstCounter::new(n.packets).encode(m.encode_family(&l)?)?;
            }
        }
        let name = "fairway_shape_flow_collisions";
        let help = "Frames queued in an FQ-CoDel flow bucket busy with another flow.";
        let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
        for (c, d, x) in rows(s).filter(|(_, _, x)| x.collisions > 0) {
            ConstCounter::new(x.collisions).encode(m.encode_family(&labels(c, d))?)?;
        }
        for (name, help, field) in GAUGES {
            let mut m = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for (c, d, x) in rows(s) {
                ConstGauge::new(field(x)).encode(m.encode_family(&labels(c, d))?)?;
            }
        }
        let name = "fairway_shape_delay_seconds";
        let help = "Queueing delay of the frames sent in the last complete 10 s window, by quantile (1: the largest).";
        let mut m = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
        for (c, d, x) in rows(s) {
            let q = &x.delay;
            if q.samples == 0 {
                continue;
            }
            let [a, b, k] = labels(c, d);
            for (quantile, us) in [
                ("0.5", q.p50_us),
                ("0.9", q.p90_us),
                ("0.99", q.p99_us),
                ("1", q.max_us),
            ] {
                let l = [a, b, k, ("quantile", quantile)];
                ConstGauge::new(us as f64 / 1e6).encode(m.encode_family(&l)?)?;
            }
        }
        let name = "fairway_shape_uptime_seconds";
        let m = enc.encode_descriptor(
            name,
            "Time since the shaper started.",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(s.uptime_ms as f64 / 1e3).encode(m)?;
        Ok(())
    }
}

/// The exposition of a snapshot.
pub fn render(s: Arc<Snapshot>) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Collect(s)));
    let mut out = String::new();
    // Writing to a String cannot fail; the encoder's own errors are
    // formatting errors of values it was given (none here).
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

/// A listening metrics endpoint; dropping it stops it.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `addr`; scrapes are answered from `shaper`.
    pub fn start(addr: SocketAddr, shaper: Arc<dyn Shaper>) -> io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("fairway-metrics".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if flag.load(Ordering::Acquire) {
                        return;
                    }
                    if let Ok(c) = conn {
                        let _ = serve(c, shaper.as_ref());
                    }
                }
            })?;
        Ok(MetricsServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it listens (the port chosen when `addr` gave port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn respond(w: &mut TcpStream, status: &str, ctype: &str, body: &str) -> io::Result<()> {
    write!(
        w,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    w.write_all(body.as_bytes())?;
    w.flush()
}

fn serve(mut stream: TcpStream, shaper: &dyn Shaper) -> io::Result<()> {
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?.take(MAX_HEAD_BYTES));
    let mut first = String::new();
    reader.read_line(&mut first)?;
    // The rest of the head (headers) is read and ignored.
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let mut parts = first.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let text = "text/plain; charset=utf-8";
    if method != "GET" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            text,
            "GET /metrics\n",
        );
    }
    if target != "/metrics" && !target.starts_with("/metrics?") {
        return respond(
            &mut stream,
            "404 Not Found",
            text,
            "the metrics are at /metrics\n",
        );
    }
    match shaper.snapshot(SNAPSHOT_TIMEOUT) {
        Some(s) => respond(&mut stream, "200 OK", CONTENT_TYPE, &render(s)),
        None => respond(
            &mut stream,
            "503 Service Unavailable",
            text,
            "the data path did not answer in time\n",
        ),
    }
}
