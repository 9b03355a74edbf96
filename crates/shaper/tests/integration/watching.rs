//! Watching a running shaper without interfaces: the control socket end
//! to end with a stand-in for the data path, the socket file's life
//! (busy, stale, not a socket, removed on exit), the Prometheus
//! exposition read back line by line, the metrics endpoint over HTTP,
//! and (slow tier) a snapshot and a scrape of 10,000 circuits timed.

use fairway_shaper::control::client::{ask, ClientError};
use fairway_shaper::control::protocol::{Request, Response};
use fairway_shaper::control::server::{answer, Server, ServerError};
use fairway_shaper::control::Shaper;
use fairway_shaper::datapath::reload_request::ReloadAnswer;
use fairway_shaper::datapath::snapshot::{ClassStats, Delay, DirStats, Kind, Snapshot};
use fairway_shaper::datapath::stats::Count;
use fairway_shaper::metrics::{render, MetricsServer};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A stand-in for the data path: a fixed snapshot and reload answer.
struct Fake {
    snapshot: Arc<Snapshot>,
    reload: Option<ReloadAnswer>,
}

impl Shaper for Fake {
    fn snapshot(&self, _: Duration) -> Option<Arc<Snapshot>> {
        Some(self.snapshot.clone())
    }
    fn reload(&self, _: Duration) -> Option<ReloadAnswer> {
        self.reload.clone()
    }
}

fn count(packets: u64, bytes: u64) -> Count {
    Count { packets, bytes }
}

/// A node with one circuit; the circuit's id needs escaping.
fn sample() -> Snapshot {
    let mut d = DirStats {
        received: count(12, 12_000),
        sent: count(10, 10_000),
        backlog: count(1, 1000),
        collisions: 3,
        rate_bps: 80_000,
        delay: Delay {
            samples: 10,
            p50_us: 1003,
            p90_us: 2007,
            p99_us: 5021,
            max_us: 7000,
        },
        ..DirStats::default()
    };
    d.drops.codel = count(1, 1000);
    let circuit = ClassStats {
        kind: Kind::Circuit,
        id: "c\"1".into(),
        name: "Alice".into(),
        parent: Some("site".into()),
        download: d,
        upload: DirStats::default(),
    };
    let node = ClassStats {
        kind: Kind::Node,
        id: "site".into(),
        name: "site".into(),
        parent: None,
        ..circuit.clone()
    };
    Snapshot {
        uptime_ms: 12_345,
        rate_window_ms: 1000,
        delay_window_ms: 10_000,
        classes: vec![node, circuit],
    }
}

fn socket(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fw-watch-{}-{name}.sock", std::process::id()))
}

fn fake(reload: Option<ReloadAnswer>) -> Arc<dyn Shaper> {
    Arc::new(Fake {
        snapshot: Arc::new(sample()),
        reload,
    })
}

const T: Duration = Duration::from_secs(10);

#[test]
fn stats_and_reload_over_the_socket() {
    let path = socket("proto");
    let answer = ReloadAnswer {
        ok: true,
        text: "2 circuits changed".into(),
    };
    let server = Server::start(&path, fake(Some(answer))).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o660);
    let r = ask(&path, &Request::Stats, T).unwrap();
    assert!(r.ok, "{r:?}");
    assert_eq!(r.stats.unwrap(), sample());
    let r = ask(&path, &Request::Reload { timeout_ms: None }, T).unwrap();
    let reply = r.reload.unwrap();
    assert!(reply.applied);
    assert_eq!(reply.text, "2 circuits changed");
    let r = ask(
        &path,
        &Request::Reload {
            timeout_ms: Some(0),
        },
        T,
    )
    .unwrap();
    assert!(!r.ok);
    assert!(r.error.unwrap().contains("timeout_ms 0 is out of range"));
    drop(server);
    assert!(!path.exists(), "the socket file is removed on exit");
    assert!(matches!(
        ask(&path, &Request::Stats, T),
        Err(ClientError::NoShaper { .. })
    ));
}

#[test]
fn one_connection_carries_several_requests_and_bad_lines_get_an_error() {
    let path = socket("lines");
    let _server = Server::start(&path, fake(None)).unwrap();
    let mut s = std::os::unix::net::UnixStream::connect(&path).unwrap();
    s.write_all(b"{\"verb\":\"stats\"}\nnonsense\n{\"verb\":\"reload\",\"timeout_ms\":1}\n")
        .unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let lines: Vec<Response> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].ok && lines[0].stats.is_some());
    assert!(!lines[1].ok && lines[1].error.as_ref().unwrap().contains("not a request"));
    // The stand-in never answers a reload: the wait ends in an error.
    assert!(
        !lines[2].ok
            && lines[2]
                .error
                .as_ref()
                .unwrap()
                .contains("no reload finished")
    );
}

#[test]
fn a_refused_reload_is_a_served_request_saying_so() {
    let mut out = Vec::new();
    let refused = ReloadAnswer {
        ok: false,
        text: "shaper.toml:3:1: unknown parent".into(),
    };
    answer("{\"verb\":\"reload\"}", &*fake(Some(refused)), &mut out).unwrap();
    let r: Response = serde_json::from_slice(&out).unwrap();
    assert!(r.ok);
    let reply = r.reload.unwrap();
    assert!(!reply.applied && reply.text.contains("unknown parent"));
}

#[test]
fn a_live_socket_is_refused_a_stale_one_replaced_a_file_kept() {
    let path = socket("life");
    let first = Server::start(&path, fake(None)).unwrap();
    let second = Server::start(&path, fake(None));
    assert!(matches!(second, Err(ServerError::Busy(_))), "{second:?}");
    assert!(
        ask(&path, &Request::Stats, T).is_ok(),
        "the first still answers"
    );
    drop(first);
    // A stale socket: bound, its listener gone, the file left behind.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let again = Server::start(&path, fake(None)).unwrap();
    assert!(ask(&path, &Request::Stats, T).is_ok());
    drop(again);
    std::fs::write(&path, "not a socket").unwrap();
    let e = Server::start(&path, fake(None)).unwrap_err();
    assert!(matches!(e, ServerError::NotASocket(_)), "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "not a socket");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn the_server_creates_its_directory_and_removes_it() {
    let dir = std::env::temp_dir().join(format!("fw-watch-{}-dir", std::process::id()));
    let path = dir.join("shape.sock");
    let server = Server::start(&path, fake(None)).unwrap();
    assert!(path.exists());
    drop(server);
    assert!(!dir.exists());
}

/// The exposition's samples: `name{labels}` to value; every sample's
/// family declared by a `# TYPE` line before it; `# EOF` last.
fn parse(text: &str) -> HashMap<String, f64> {
    let mut types = HashMap::new();
    let mut samples = HashMap::new();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last(), Some(&"# EOF"));
    for l in &lines[..lines.len() - 1] {
        if let Some(t) = l.strip_prefix("# TYPE ") {
            let (name, kind) = t.split_once(' ').unwrap();
            types.insert(name.to_string(), kind.to_string());
            continue;
        }
        if l.starts_with('#') {
            continue;
        }
        let (series, value) = l.rsplit_once(' ').unwrap();
        let name = series.split('{').next().unwrap();
        let family = match name.strip_suffix("_total") {
            Some(f) if types.get(f).is_some_and(|k| k == "counter") => f,
            _ => name,
        };
        assert!(types.contains_key(family), "no # TYPE for {l}");
        assert!(name.starts_with("fairway_shape_"), "{l}");
        samples.insert(series.to_string(), value.parse::<f64>().unwrap());
    }
    samples
}

#[test]
fn the_exposition_reads_back() {
    let text = render(Arc::new(sample()));
    let m = parse(&text);
    let c = r#"direction="download",kind="circuit",class="c\"1""#;
    let get = |name: &str, extra: &str| {
        let key = format!("{name}{{{c}{extra}}}");
        *m.get(&key)
            .unwrap_or_else(|| panic!("{key} missing in\n{text}"))
    };
    assert_eq!(get("fairway_shape_sent_bytes_total", ""), 10_000.0);
    assert_eq!(get("fairway_shape_sent_packets_total", ""), 10.0);
    assert_eq!(get("fairway_shape_received_packets_total", ""), 12.0);
    assert_eq!(
        get("fairway_shape_dropped_packets_total", ",reason=\"codel\""),
        1.0
    );
    // A reason that dropped nothing, a window without frames: no series.
    let overflow = format!("fairway_shape_dropped_packets_total{{{c},reason=\"overflow\"}}");
    assert!(!m.contains_key(&overflow), "{text}");
    assert_eq!(get("fairway_shape_flow_collisions_total", ""), 3.0);
    let none = format!(
        "fairway_shape_flow_collisions_total{{{}}}",
        c.replace("download", "upload")
    );
    assert!(!m.contains_key(&none), "no collision, no series: {text}");
    assert_eq!(get("fairway_shape_backlog_bytes", ""), 1000.0);
    assert_eq!(get("fairway_shape_rate_bits_per_second", ""), 80_000.0);
    assert_eq!(
        get("fairway_shape_delay_seconds", ",quantile=\"0.99\""),
        0.005021
    );
    assert_eq!(get("fairway_shape_delay_seconds", ",quantile=\"1\""), 0.007);
    assert_eq!(m["fairway_shape_uptime_seconds"], 12.345);
    let up = r#"direction="upload",kind="circuit",class="c\"1""#;
    let quiet = format!("fairway_shape_delay_seconds{{{up},quantile=\"1\"}}");
    assert!(!m.contains_key(&quiet), "{text}");
    // 2 classes: downloads with 4 counters, 1 drop reason, collisions,
    // 3 gauges and 4 quantiles, uploads with 4 counters and 3 gauges; the
    // uptime.
    assert_eq!(m.len(), 2 * (13 + 7) + 1);
}

fn http(addr: std::net::SocketAddr, target: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn the_endpoint_serves_metrics_over_http() {
    let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), fake(None)).unwrap();
    let r = http(server.addr(), "/metrics");
    assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
    assert!(
        r.contains("Content-Type: application/openmetrics-text"),
        "{r}"
    );
    let body = r.split_once("\r\n\r\n").unwrap().1;
    assert_eq!(body, render(Arc::new(sample())));
    assert!(http(server.addr(), "/").starts_with("HTTP/1.1 404"));
}

/// A UDP frame to `dst`.
fn frame(dst: [u8; 4]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&486u16.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[8, 8, 8, 8]);
    ip[16..20].copy_from_slice(&dst);
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0, 1, 0, 2, 0, 0, 0, 0]);
    f.resize(500, 0);
    f
}

/// Wall and CPU time of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, (Duration, Duration)) {
    let (t, cpu) = (std::time::Instant::now(), thread_cpu());
    let x = f();
    (x, (t.elapsed(), thread_cpu() - cpu))
}

/// This thread's CPU time: on a loaded machine, what a step costs apart
/// from waiting for a core.
fn thread_cpu() -> Duration {
    // SAFETY: all-zero is a valid timespec; clock_gettime writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[test]
#[ignore = "slow tier: builds an engine of 10,000 circuits (about 400 MB) and times its statistics"]
fn ten_thousand_circuits_snapshot_and_scrape_in_time() {
    use fairway_shaper::datapath::engine::Engine;
    use fairway_shaper::datapath::snapshot::assemble;
    use fairway_shaper::datapath::watch::{DELAY_WINDOW_NS, SWEEP_EVERY_NS, SWEEP_PER_TURN};
    use fairway_shaper::plan::Dir;
    use std::fmt::Write as _;
    let mut json = String::from("{\"Region\": {\"downloadBandwidthMbps\": 100000, \"uploadBandwidthMbps\": 100000, \"children\": {");
    for ap in 0..100 {
        let sep = if ap == 0 { "" } else { "," };
        write!(
            json,
            "{sep}\"AP_{ap}\": {{\"downloadBandwidthMbps\": 1000, \"uploadBandwidthMbps\": 500}}"
        )
        .unwrap();
    }
    json += "}}}";
    let mut csv = format!("{}\n", crate::support::HEADER);
    for c in 0..10_000u32 {
        let (hi, lo) = (c / 256, c % 256);
        writeln!(
            csv,
            "{c},Subscriber {c},{c},CPE,AP_{},,100.{hi}.{lo}.1,,1,0.5,10,2,",
            c % 100
        )
        .unwrap();
    }
    let ck = crate::support::libreqos("watch-scale", &csv, Some(&json)).unwrap();
    let mut e = Engine::new(&ck, 0).unwrap();
    // Five frames to every circuit, sent 1 ms later: every circuit and
    // node has delays to report.
    let mut sent = 0;
    for c in 0..10_000u32 {
        let f = frame([100, (c / 256) as u8, (c % 256) as u8, 1]);
        for _ in 0..5 {
            e.receive(Dir::Download, 0, |b| {
                b[..f.len()].copy_from_slice(&f);
                Some(f.len())
            });
        }
        while let Some(o) = e.next(1_000_000) {
            e.sent(o, true);
            sent += 1;
        }
    }
    assert_eq!(sent, 50_000);
    // Worst case for the loop: every window ended and none was rolled, so
    // the copy computes every class's percentiles.
    let end = DELAY_WINDOW_NS + 1;
    let (raw, worst) = timed(|| e.raw_stats(end));
    let (snap, assemble_t) = timed(|| Arc::new(assemble(e.layout(), &raw)));
    // The loop's sweep rolls them a turn at a time; then a copy is only
    // numbers.
    let classes: usize = 2 * (10_002 + 100);
    let turns: Vec<_> = (0..classes.div_ceil(SWEEP_PER_TURN) as u64)
        .map(|k| timed(|| e.sweep_stats(end + k * SWEEP_EVERY_NS)).1)
        .collect();
    let turn = turns.iter().max().unwrap();
    let after = end + turns.len() as u64 * SWEEP_EVERY_NS;
    let (steady, steady_t) = timed(|| e.raw_stats(after));
    assert_eq!(assemble(e.layout(), &steady).classes, snap.classes);
    let (text, render_t) = timed(|| render(snap.clone()));
    let (j, json_t) = timed(|| serde_json::to_string(&*snap).unwrap());
    assert!(j.len() > 1_000_000);
    eprintln!(
        "10,000 circuits, 100 nodes (wall/CPU): in the loop: copy {worst:?} with every window \
         to compute, {steady_t:?} after the sweep (its longest turn {turn:?}, {} turns); off the \
         loop: names and sums {assemble_t:?}, Prometheus render {render_t:?} ({} bytes, {} \
         lines), JSON {json_t:?}",
        turns.len(),
        text.len(),
        text.lines().count()
    );
    assert_eq!(snap.classes.len(), 10_000 + 100 + 1 + 1);
    let region = snap.classes.iter().find(|c| c.id == "Region").unwrap();
    assert_eq!(region.download.delay.samples, 50_000);
    // The targets (a scrape ≤ 200 ms; the loop not held for long) with
    // room for a loaded machine.
    // CPU time, which a loaded machine does not inflate.
    let scrape = steady_t.1 + assemble_t.1 + render_t.1;
    assert!(scrape < Duration::from_millis(500), "{scrape:?}");
    assert!(steady_t.1 < Duration::from_millis(50), "{steady_t:?}");
}
