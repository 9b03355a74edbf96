//! Watching a real shaper: namespaces sender — shaper — receiver (as in
//! `shape_datapath`, names prefixed `fwst`), UDP at three times a
//! circuit's max for 12 s; while it runs, `fairway shape stats --json`
//! over the control socket shows the circuit at its max with delays and
//! drops, and the metrics endpoint serves its counters; a second shaper
//! on the same socket is refused; SIGTERM removes the socket. Slow tier:
//! root, iproute2.

use super::shape_netns::{enter, root_or_skip, send_udp, Netns, Shaper};
use std::io::{Read, Write};
use std::process::Command;
use std::time::Duration;

const MAX_BPS: u64 = 10_000_000;
const PAYLOAD: usize = 1000;

const CONFIG: &str = r#"
[interfaces]
internet = "fwst-in"
subscribers = "fwst-out"
rate = { download = "100mbit", upload = "100mbit" }

[[circuit]]
id = "sub1"
name = "Subscriber 1"
rate = { download = "10mbit", upload = "10mbit" }

[[device]]
id = "sub1-cpe"
circuit = "sub1"
ipv4 = ["10.78.0.2"]
"#;

fn fairway(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
#[ignore = "slow tier: root, namespaces, 13 s of traffic"]
fn a_running_shaper_is_watched_over_its_socket_and_metrics() {
    if !root_or_skip("a_running_shaper_is_watched_over_its_socket_and_metrics") {
        return;
    }
    let tag = std::process::id();
    let ns = Netns::build("fwst", None, Some("10.78.0"));
    let dir = std::env::temp_dir();
    let config = dir.join(format!("fwst-{tag}.toml"));
    std::fs::write(&config, CONFIG).unwrap();
    let socket = dir.join(format!("fwst-{tag}.sock"));
    let sock = socket.to_str().unwrap();
    let mut shaper = Shaper::start(
        ns.middle(),
        &config,
        &["--control", sock, "--metrics", "127.0.0.1:0"],
    );
    let (first, second) = (shaper.line(), shaper.line());
    assert!(first.contains("shaping fwst-in -> fwst-out"), "{first}");
    assert!(
        second.contains(&format!("control socket {sock}")),
        "{second}"
    );
    let metrics = second
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("{second}"))
        .to_string();
    // A second shaper on the same socket is refused, and the first keeps it.
    let other = Command::new("ip")
        .args(["netns", "exec", ns.middle(), env!("CARGO_BIN_EXE_fairway")])
        .args(["shape", "--config"])
        .arg(&config)
        .args(["--control", sock])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&other.stderr);
    assert_eq!(other.status.code(), Some(1), "{err}");
    assert!(err.contains("another shaper is running"), "{err}");
    assert!(socket.exists());
    let tx = {
        let ns = ns.sender().to_string();
        std::thread::spawn(move || {
            send_udp(&ns, "10.78.0.1", "10.78.0.2:9000", PAYLOAD, 3 * MAX_BPS, 13)
        })
    };
    // After 11.5 s of overload the last complete 10 s window has some.
    std::thread::sleep(Duration::from_millis(11_800));
    let stats = fairway(&["shape", "stats", "--json", "--socket", sock]);
    assert!(
        stats.status.success(),
        "{}",
        String::from_utf8_lossy(&stats.stderr)
    );
    let snap: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    let text = fairway(&["shape", "stats", "--socket", sock]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    let page = {
        let (ns, addr) = (ns.middle().to_string(), metrics.clone());
        std::thread::spawn(move || {
            enter(&ns);
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
            let mut page = String::new();
            s.read_to_string(&mut page).unwrap();
            page
        })
        .join()
        .unwrap()
    };
    tx.join().unwrap();
    let (status, rest, _) = shaper.stop();
    let _ = std::fs::remove_file(&config);
    println!("{text}{rest}");
    assert!(status.success(), "{status}");
    assert!(!socket.exists(), "the socket is removed at the stop");
    let sub1 = snap["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "sub1")
        .unwrap();
    let d = &sub1["download"];
    let rate = d["rate_bps"].as_u64().unwrap() as f64;
    println!("sub1 download: rate {rate} bit/s, delay {}", d["delay"]);
    assert!(
        (rate - MAX_BPS as f64).abs() <= 0.05 * MAX_BPS as f64,
        "{rate}"
    );
    let delay = &d["delay"];
    assert!(delay["samples"].as_u64().unwrap() > 0, "{delay}");
    // Held by CoDel (5 ms target) within the 100 ms queue.
    assert!(delay["p50_us"].as_u64().unwrap() <= 150_000, "{delay}");
    let drops = &d["drops"];
    let dropped = drops["codel"]["packets"].as_u64().unwrap()
        + drops["overflow"]["packets"].as_u64().unwrap();
    assert!(dropped > 0, "{drops}");
    assert!(
        text.contains("circuit sub1 \"Subscriber 1\" parent root download"),
        "{text}"
    );
    let line = page
        .lines()
        .find(|l| l.starts_with("fairway_shape_sent_bytes_total{direction=\"download\",kind=\"circuit\",class=\"sub1\"}"))
        .unwrap_or_else(|| panic!("{page}"));
    let sent: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(sent > 0.0, "{line}");
}
