//! Watching a real shaper: namespaces sender — shaper — receiver (as in
//! `shape_datapath`, names prefixed `fwst`), UDP at three times a
//! circuit's max for 12 s; while it runs, `fairway shape stats --json`
//! over the control socket shows the circuit at its max with delays and
//! drops, and the metrics endpoint serves its counters; a second shaper
//! on the same socket is refused; SIGTERM removes the socket. Slow tier:
//! root, iproute2.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MAX_BPS: u64 = 10_000_000;
const PAYLOAD: usize = 1000;
const FRAME: u64 = PAYLOAD as u64 + 42;

struct Netns(Vec<String>);

impl Drop for Netns {
    fn drop(&mut self) {
        for n in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn ip(args: &str) {
    let ok = Command::new("ip")
        .args(args.split_whitespace())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "ip {args}");
}

fn enter(name: &str) {
    let f = std::fs::File::open(format!("/var/run/netns/{name}")).expect("namespace file");
    // SAFETY: a valid namespace descriptor; affects this thread only.
    let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "setns {name}");
}

fn build(tag: &str) -> Netns {
    let (s, x, r) = (
        format!("fwst-s{tag}"),
        format!("fwst-x{tag}"),
        format!("fwst-r{tag}"),
    );
    let ns = Netns(vec![s.clone(), x.clone(), r.clone()]);
    for n in &ns.0 {
        ip(&format!("netns add {n}"));
    }
    ip(&format!(
        "link add fwst-s{tag} netns {s} type veth peer name fwst-in netns {x}"
    ));
    ip(&format!(
        "link add fwst-r{tag} netns {r} type veth peer name fwst-out netns {x}"
    ));
    ip(&format!("-n {s} addr add 10.78.0.1/24 dev fwst-s{tag}"));
    ip(&format!("-n {r} addr add 10.78.0.2/24 dev fwst-r{tag}"));
    for (n, l) in [(&s, format!("fwst-s{tag}")), (&r, format!("fwst-r{tag}"))] {
        ip(&format!("-n {n} link set {l} up"));
    }
    for l in ["fwst-in", "fwst-out", "lo"] {
        ip(&format!("-n {x} link set {l} up"));
    }
    ns
}

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

/// Sends datagrams at `bps` for `secs` (UDP checksums off, as in
/// `shape_datapath`).
fn sender(ns: String, bps: u64, secs: u64) {
    enter(&ns);
    let sock = UdpSocket::bind("10.78.0.1:0").expect("bind sender");
    let one: libc::c_int = 1;
    // SAFETY: a live socket and a c_int option of the size passed.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_NO_CHECK,
            (&one as *const libc::c_int).cast(),
            4,
        )
    };
    let payload = [0x5au8; PAYLOAD];
    let _ = sock.send_to(&payload, "10.78.0.2:9000");
    std::thread::sleep(Duration::from_millis(300));
    let gap = Duration::from_nanos(FRAME * 8 * 1_000_000_000 / bps);
    let start = Instant::now();
    let mut next = start;
    while start.elapsed() < Duration::from_secs(secs) {
        while Instant::now() >= next {
            let _ = sock.send_to(&payload, "10.78.0.2:9000");
            next += gap;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

fn fairway(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
#[ignore = "slow tier: root, namespaces, 13 s of traffic"]
fn a_running_shaper_is_watched_over_its_socket_and_metrics() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root || Command::new("ip").arg("-V").output().is_err() {
        println!("a_running_shaper_is_watched_over_its_socket_and_metrics: skipped, needs root");
        return;
    }
    let tag = (std::process::id() % 100_000).to_string();
    let ns = build(&tag);
    let dir = std::env::temp_dir();
    let config = dir.join(format!("fwst-{tag}.toml"));
    std::fs::write(&config, CONFIG).unwrap();
    let socket = dir.join(format!("fwst-{tag}.sock"));
    let sock = socket.to_str().unwrap();
    let exec = |extra: &[&str]| {
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &ns.0[1],
            env!("CARGO_BIN_EXE_fairway"),
            "shape",
            "--config",
        ])
        .arg(&config)
        .args(["--control", sock])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        c
    };
    let mut shaper = Child(exec(&["--metrics", "127.0.0.1:0"]).spawn().unwrap());
    let mut out = BufReader::new(shaper.0.stdout.take().unwrap());
    let (mut first, mut second) = (String::new(), String::new());
    out.read_line(&mut first).unwrap();
    out.read_line(&mut second).unwrap();
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
    let other = exec(&[]).output().unwrap();
    let err = String::from_utf8_lossy(&other.stderr);
    assert_eq!(other.status.code(), Some(1), "{err}");
    assert!(err.contains("another shaper is running"), "{err}");
    assert!(socket.exists());
    let tx = {
        let ns = ns.0[0].clone();
        std::thread::spawn(move || sender(ns, 3 * MAX_BPS, 13))
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
        let (ns, addr) = (ns.0[1].clone(), metrics.clone());
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
    // SAFETY: the shaper's pid; SIGTERM asks it to stop.
    unsafe { libc::kill(shaper.0.id() as i32, libc::SIGTERM) };
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let status = shaper.0.wait().unwrap();
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
