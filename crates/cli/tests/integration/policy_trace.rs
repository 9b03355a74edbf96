//! `fairway policy run --trace`: the shipped trace replays whole (every
//! arrival departs once, bytes conserved, times in order, each flow FIFO),
//! a strict-priority replay equals a brute-force model, bad lines are
//! refused at file:line, generated-workload flags conflict with it; and a
//! generated workload covers every policy flow by default, saying so when
//! `--flows` leaves some idle.

use std::collections::VecDeque;
use std::process::{Command, Output};

fn fairway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str, text: &str) -> String {
    let path = format!("{}/{name}", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&path, text).expect("write the scratch file");
    path
}

/// Data rows of a CSV file (header and `#` comments dropped), split.
fn rows(path: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).expect("read the CSV");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split(',').map(|f| f.trim().to_string()).collect())
        .collect()
}

/// Replays `trace` through `policy`; the departure rows.
fn replay(policy: &str, trace: &str, out_name: &str) -> Vec<Vec<String>> {
    let out = scratch(out_name, "");
    let o = fairway(&[
        "policy",
        "run",
        policy,
        "--trace",
        trace,
        "--departures",
        &out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let header = std::fs::read_to_string(&out).unwrap();
    assert!(header.starts_with("time,flow,len,queueing_delay\n"));
    rows(&out)
}

#[test]
fn shipped_trace_departs_every_arrival_once_in_order() {
    let trace = repo("examples/traces/hpfq-small.csv");
    let arr = rows(&trace);
    let dep = replay(&repo("examples/policies/hpfq.toml"), &trace, "hpfq-dep.csv");
    assert!(arr.len() >= 24, "a few dozen packets: {}", arr.len());
    assert_eq!(dep.len(), arr.len());
    let bytes = |r: &[Vec<String>]| r.iter().map(|x| x[2].parse::<u64>().unwrap()).sum::<u64>();
    assert_eq!(bytes(&dep), bytes(&arr));
    let times: Vec<u64> = dep.iter().map(|d| d[0].parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // Each flow is FIFO: its departures minus their delays are its
    // arrivals, in order, with the same lengths.
    for flow in ["flow0#0", "flow0#1", "b-small", "b-large"] {
        let a: Vec<(u64, &str)> = (arr.iter().filter(|r| r[1] == flow))
            .map(|r| (r[0].parse().unwrap(), r[2].as_str()))
            .collect();
        let d: Vec<(u64, &str)> = (dep.iter().filter(|r| r[1] == flow))
            .map(|r| {
                let t: u64 = r[0].parse().unwrap();
                (t - r[3].parse::<u64>().unwrap(), r[2].as_str())
            })
            .collect();
        assert!(!a.is_empty(), "{flow} has arrivals");
        assert_eq!(a, d, "{flow}");
    }
}

/// At every instant the link is free, the highest-priority head goes: the
/// example's flows have priorities 0, 1, 2, 7 in file order.
#[test]
fn strict_priority_replay_equals_the_model() {
    let names = ["control", "voice", "video", "bulk"];
    let mut text = String::from("time,flow,len\n");
    let mut arr = Vec::new();
    let (mut t, mut x) = (0u64, 12345u64);
    for _ in 0..200 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        t += (x >> 33) % 30_000;
        let (f, len) = (((x >> 20) % 4) as usize, 64 + (x >> 40) % 1437);
        text += &format!("{t},{},{len}\n", names[f]);
        arr.push((t, f, len));
    }
    let trace = scratch("sp-trace.csv", &text);
    let dep = replay(
        &repo("examples/policies/strict-priority.toml"),
        &trace,
        "sp-dep.csv",
    );
    // 100 Mbit/s: 80 ns a byte.
    let mut q = vec![VecDeque::new(); 4];
    let (mut now, mut i, mut want) = (0u64, 0, Vec::new());
    loop {
        while i < arr.len() && arr[i].0 <= now {
            q[arr[i].1].push_back(arr[i]);
            i += 1;
        }
        if let Some(f) = (0..4).find(|&f| !q[f].is_empty()) {
            let (at, _, len) = q[f].pop_front().unwrap();
            want.push(vec![
                now.to_string(),
                names[f].to_string(),
                len.to_string(),
                (now - at).to_string(),
            ]);
            now += len * 80;
        } else if i < arr.len() {
            now = arr[i].0;
        } else {
            break;
        }
    }
    assert_eq!(dep, want);
}

/// Fails with exit `code` and one stderr line containing `want`.
fn refused(args: &[&str], code: i32, want: &str) {
    let o = fairway(args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(want), "{args:?}: {stderr}");
}

#[test]
fn bad_traces_are_refused_at_their_line() {
    let p = repo("examples/policies/hpfq.toml");
    let cases = [
        (
            "time,flow,len\n5,b-small,100\n\n4,b-small,100\n",
            ":4: time 4 before",
        ),
        (
            "time,flow,len\n5,nope,100\n",
            ":2: flow \"nope\" is not a flow",
        ),
        (
            "time,flow,len\n5,b-small,1501\n",
            ":2: len \"1501\" outside 1..=1500",
        ),
        ("time,flow,len\n5us,b-small,100\n", ":2: time \"5us\""),
        ("time,flow,len\n5,b-small\n", ":2: 2 fields"),
        ("time,len,flow\n", ":1: header"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let t = scratch(&format!("bad-trace-{i}.csv"), text);
        refused(
            &["policy", "run", &p, "--trace", &t],
            1,
            &format!("{t}{want}"),
        );
    }
    let t = repo("examples/traces/hpfq-small.csv");
    for flag in [
        ["--flows", "1x2"],
        ["--load", "0.5"],
        ["--backlog", "2"],
        ["--sizes", "fixed"],
        ["--seed", "1"],
        ["--duration-ms", "10"],
    ] {
        refused(
            &["policy", "run", &p, "--trace", &t, flag[0], flag[1]],
            2,
            "cannot be used with",
        );
    }
}

/// pFabric's example has 64 mice: by default each gets traffic (an open
/// load: greedy sources under pFabric starve all but the shortest
/// messages by design); with `--flows 1x4` a warning names how many get
/// none.
#[test]
fn default_flows_cover_every_policy_flow() {
    let p = repo("examples/policies/pfabric.toml");
    let o = fairway(&["policy", "run", &p, "--load", "0.5", "--json"]);
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 64);
    for f in flows {
        assert!(f["packets"].as_u64().unwrap() > 0, "{f}");
    }
    let o = fairway(&["policy", "run", &p, "--duration-ms", "20", "--flows", "1x4"]);
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("fairway: warning: 60 of 64 policy flows get no traffic"),
        "{stderr}"
    );
}

/// One Ethernet/IPv4/UDP record of a little-endian microsecond capture.
fn pcap_record(out: &mut Vec<u8>, usec: u32, dst_port: u16, wire_len: u32) {
    let mut frame = vec![0u8; 12];
    frame.extend_from_slice(&[0x08, 0x00]); // IPv4
    let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0];
    ip.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    frame.extend_from_slice(&ip);
    frame.extend_from_slice(&40000u16.to_be_bytes());
    frame.extend_from_slice(&dst_port.to_be_bytes());
    frame.extend_from_slice(&[0, 8, 0, 0]);
    for v in [
        usec / 1_000_000 + 100,
        usec % 1_000_000,
        frame.len() as u32,
        wire_len,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&frame);
}

/// A generated capture replays: packets to ports 5001/5002 are the
/// mapped flows, with their wire lengths and times relative to the first
/// record; an ARP frame and another port are counted and skipped.
#[test]
fn pcap_capture_replays_through_the_map() {
    let mut cap = Vec::new();
    // Global header: magic, version 2.4, zone, sigfigs, snaplen, Ethernet.
    for v in [0xa1b2c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
        cap.extend_from_slice(&v.to_le_bytes());
    }
    let sent = [
        (0u32, 5001u16, 1000u32),
        (5, 5002, 1500),
        (7, 5001, 64),
        (300, 5002, 576),
    ];
    for &(t, port, len) in &sent {
        pcap_record(&mut cap, t, port, len);
    }
    pcap_record(&mut cap, 301, 9999, 100);
    // ARP: no ports.
    cap.extend_from_slice(&[100, 0, 0, 0, 0x2e, 1, 0, 0, 14, 0, 0, 0, 60, 0, 0, 0]);
    cap.extend_from_slice(&[0; 12]);
    cap.extend_from_slice(&[0x08, 0x06]);
    let path = format!("{}/gen.pcap", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&path, &cap).unwrap();
    let out = scratch("pcap-dep.csv", "");
    let p = repo("examples/policies/hpfq.toml");
    let o = fairway(&[
        "policy",
        "run",
        &p,
        "--pcap",
        &path,
        "--map",
        "5001=b-small,5002=b-large",
        "--departures",
        &out,
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 packets of the capture match no --map entry"),
        "{stderr}"
    );
    let dep = rows(&out);
    assert_eq!(dep.len(), 4);
    let mut got: Vec<(u64, String, u32)> = dep
        .iter()
        .map(|d| {
            let t: u64 = d[0].parse::<u64>().unwrap() - d[3].parse::<u64>().unwrap();
            (t, d[1].clone(), d[2].parse().unwrap())
        })
        .collect();
    got.sort();
    let want: Vec<(u64, String, u32)> = sent
        .iter()
        .map(|&(t, port, len)| {
            let f = if port == 5001 { "b-small" } else { "b-large" };
            (u64::from(t) * 1000, f.to_string(), len)
        })
        .collect();
    assert_eq!(got, want);
    refused(
        &["policy", "run", &p, "--pcap", &path, "--map", "5001=nope"],
        1,
        "--map",
    );
}
