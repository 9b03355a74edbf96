//! `fairway shape stats` and `fairway shape reload` against a stand-in
//! shaper (the control socket's server with a fixed snapshot and reload
//! answer, no interfaces): the tc-like blocks, `--json`, `--watch` ended
//! by SIGINT, the reload's exit statuses, and one-line errors when no
//! shaper listens or a flag is out of range.

use fairway_shaper::control::server::Server;
use fairway_shaper::control::Shaper;
use fairway_shaper::datapath::reload_request::ReloadAnswer;
use fairway_shaper::datapath::snapshot::{ClassStats, Delay, DirStats, Kind, Snapshot};
use fairway_shaper::datapath::stats::Count;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

struct Fake(Option<ReloadAnswer>);

fn count(packets: u64, bytes: u64) -> Count {
    Count { packets, bytes }
}

fn sample() -> Snapshot {
    let mut d = DirStats {
        received: count(12, 12_000),
        sent: count(10, 10_000),
        backlog: count(1, 1000),
        collisions: 2,
        rate_bps: 8_000_000,
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
        id: "c1".into(),
        name: "Alice".into(),
        parent: Some("site".into()),
        download: d,
        upload: DirStats::default(),
    };
    let unshaped = ClassStats {
        kind: Kind::Unshaped,
        id: "unshaped".into(),
        name: "unshaped".into(),
        parent: None,
        download: DirStats::default(),
        upload: DirStats::default(),
    };
    Snapshot {
        uptime_ms: 12_345,
        rate_window_ms: 1000,
        delay_window_ms: 10_000,
        classes: vec![circuit, unshaped],
    }
}

impl Shaper for Fake {
    fn snapshot(&self, _: Duration) -> Option<Arc<Snapshot>> {
        Some(Arc::new(sample()))
    }
    fn reload(&self, _: Duration) -> Option<ReloadAnswer> {
        self.0.clone()
    }
}

fn socket(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fw-cli-{}-{name}.sock", std::process::id()))
}

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

fn one_line_error(out: &Output, has: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("fairway: error: ") && err.contains(has),
        "{err}"
    );
}

#[test]
fn stats_prints_a_block_per_class_and_direction() {
    let path = socket("stats");
    let _s = Server::start(&path, Arc::new(Fake(None))).unwrap();
    let out = fairway(&["shape", "stats", "--socket", path.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    let want = "\
uptime 12.3 s; rate over the last complete 1 s, delay over the last complete 10 s
circuit c1 \"Alice\" parent site download
 Sent 10000 bytes 10 pkt (dropped 1: codel 1) received 12000 bytes 12 pkt
 rate 8.00Mbit backlog 1000b 1p collisions 2
 delay p50 1.0ms p90 2.0ms p99 5.0ms max 7.0ms (10 pkt in the last 10 s)
circuit c1 \"Alice\" parent site upload
 Sent 0 bytes 0 pkt (dropped 0) received 0 bytes 0 pkt
 rate 0bit backlog 0b 0p collisions 0
 delay - (nothing sent in the last 10 s)
";
    assert_eq!(text, want);
}

#[test]
fn stats_json_is_the_snapshot() {
    let path = socket("json");
    let _s = Server::start(&path, Arc::new(Fake(None))).unwrap();
    let out = fairway(&[
        "shape",
        "stats",
        "--json",
        "--socket",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    let back: Snapshot = serde_json::from_str(&text).unwrap();
    assert_eq!(back, sample());
}

#[test]
fn watch_reprints_until_sigint() {
    let path = socket("watch");
    let _s = Server::start(&path, Arc::new(Fake(None))).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(["shape", "stats", "--json", "--watch", "0.1", "--socket"])
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = 0;
    while seen < 3 {
        let l = lines.next().unwrap().unwrap();
        if !l.is_empty() {
            serde_json::from_str::<Snapshot>(&l).unwrap();
            seen += 1;
        }
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "ends cleanly on SIGINT");
}

#[test]
fn reload_exits_0_when_applied_and_1_when_refused() {
    let path = socket("reload-ok");
    let answer = ReloadAnswer {
        ok: true,
        text: "3 rates changed".into(),
    };
    let s = Server::start(&path, Arc::new(Fake(Some(answer)))).unwrap();
    let out = fairway(&["shape", "reload", "--socket", path.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "3 rates changed\nreloaded: the new configuration runs\n"
    );
    drop(s);
    let refused = ReloadAnswer {
        ok: false,
        text: "shaper.toml:4:1: unknown parent \"x\"".into(),
    };
    let _s = Server::start(&path, Arc::new(Fake(Some(refused)))).unwrap();
    let out = fairway(&["shape", "reload", "--socket", path.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "shaper.toml:4:1: unknown parent \"x\"\n"
    );
    one_line_error(&out, "refused the new configuration");
}

#[test]
fn no_shaper_listening_is_one_line() {
    let path = socket("nobody");
    let p = path.to_str().unwrap();
    one_line_error(
        &fairway(&["shape", "stats", "--socket", p]),
        "no shaper listens on",
    );
    one_line_error(
        &fairway(&["shape", "reload", "--socket", p]),
        "no shaper listens on",
    );
}

#[test]
fn out_of_range_flags_are_one_line() {
    one_line_error(
        &fairway(&["shape", "stats", "--watch", "0"]),
        "--watch 0 must be in 0.1..=86400 (seconds)",
    );
    one_line_error(
        &fairway(&["shape", "reload", "--timeout", "601"]),
        "--timeout 601 must be in 1..=600 (seconds)",
    );
}
