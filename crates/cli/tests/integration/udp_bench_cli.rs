//! `fairway udp-bench` and `fairway arbiter-bench` end to end: bad input is
//! one line and a non-zero exit before anything is built or started;
//! `--quick` runs the four configurations and accounts for every packet;
//! SIGTERM and SIGINT stop a run and leave no namespace or link behind
//! (Linux, root; skipped visibly otherwise).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn fairway(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway")
}

#[test]
fn bad_parameters_are_rejected_with_one_line_naming_them() {
    for (args, needle) in [
        (&["udp-bench", "--seconds", "0"][..], "--seconds"),
        (&["udp-bench", "--rates", "fast"][..], "--rates"),
        (&["udp-bench", "--batch", "0"][..], "--batch"),
        (
            &["udp-bench", "--cooldown-ms", "60001"][..],
            "--cooldown-ms",
        ),
        (
            &["udp-bench", "--transport", "carrier-pigeon"][..],
            "--transport",
        ),
        (
            &["udp-bench", "--experiments", "everything"][..],
            "--experiments",
        ),
        (
            &[
                "udp-bench",
                "--transport",
                "af-packet-ring",
                "--batch",
                "512",
            ][..],
            "--batch",
        ),
    ] {
        let out = fairway(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// Runs `args` as an unprivileged user (`nobody`, through `setpriv`) when
/// the tests run as root: a check that is missing then shows as the "needs
/// root" error instead of a real run starting.
fn fairway_unprivileged(args: &[&str]) -> Output {
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !is_root() || !setpriv {
        return fairway(args);
    }
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_fairway"))
        .args(args)
        .output()
        .expect("run fairway through setpriv")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Runs `args`, which must be refused before anything starts: exit status
/// `code`, nothing on stdout, exactly one line on stderr, which it returns.
fn refused(args: &[&str], code: i32) -> String {
    let out = fairway_unprivileged(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout {:?}", out.stdout);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

/// Each case would, if it were not refused, get as far as the root check
/// ([`refused`] runs it unprivileged): every one must be refused by its
/// own check, naming the flag, before anything starts.
#[test]
fn empty_lists_zero_budgets_and_oversized_counts_are_refused_before_anything_starts() {
    // 80 client counts × 20 repeats × 60 s: 26.7 h of trials.
    let many: Vec<String> = (1..=80).map(|c| c.to_string()).collect();
    let many = many.join(",");
    let short = ["udp-bench", "--quick", "--experiments"];
    for (extra, needle) in [
        (&["sweep", "--modes", "tc", "--rates", ""][..], "--rates"),
        (&["sweep", "--modes", "tc", "--rates", ","][..], "--rates"),
        (
            &["sweep", "--modes", "tc", "--rates", "50k,,400k"][..],
            "--rates",
        ),
        (
            &["throughput", "--modes", "none", "--clients", ""][..],
            "--clients",
        ),
        (
            &["throughput", "--modes", "none", "--clients", "1,"][..],
            "--clients",
        ),
        (
            &["latency", "--modes", "none", "--max-packets", "0"][..],
            "--max-packets",
        ),
        (
            &["throughput", "--clients", "50000"][..],
            "--clients 50000 outside 1..=256",
        ),
        (
            &["latency", "--interferers", "50000"][..],
            "--interferers 50000 outside 0..=255",
        ),
        (
            &["latency", "--target-weight", "70000"][..],
            "--target-weight 70000 outside 1..=65536",
        ),
        (
            &["latency", "--latency-delta-ns", "18446744073709551615"][..],
            "--latency-delta-ns",
        ),
        (
            &["latency", "--rt-priority", "99"][..],
            "--rt-priority 99 outside 1..=98",
        ),
        (
            &["throughput", "--clients", "256", "--queue-len", "1048575"][..],
            "queued packets",
        ),
        (
            &[
                "latency",
                "--modes",
                "tc",
                "--link-pps",
                "100",
                "--target-weight",
                "65536",
            ][..],
            "8 bit/s",
        ),
        (
            &[
                "throughput",
                "--modes",
                "none",
                "--clients",
                many.as_str(),
                "--repeat",
                "20",
                "--seconds",
                "60",
            ][..],
            "24 h",
        ),
        // --quick's 0.3 s is a default: the value given is checked, not replaced.
        (
            &["latency", "--modes", "none", "--seconds", "70"][..],
            "--seconds 70 outside",
        ),
        (
            &["latency", "--modes", "none", "--repeat", "21"][..],
            "--repeat 21 outside 1..=20",
        ),
        (
            &["sweep", "--modes", "tc", "--sweep-repeat", "0"][..],
            "--sweep-repeat 0",
        ),
        (
            &["latency", "--modes", "none", "--latency-repeat", "21"][..],
            "--latency-repeat 21",
        ),
        (
            &["latency", "--modes", "none", "--target-pps", "1000001"][..],
            "--target-pps",
        ),
        (
            &["latency", "--modes", "none", "--link-pps", "99"][..],
            "--link-pps 99 pps outside 100..=",
        ),
        (
            &["sweep", "--modes", "tc", "--rates", "50k,5T"][..],
            "--rates 5000000000000 pps",
        ),
        (
            &["throughput", "--modes", "none", "--delta-ns", "1000000001"][..],
            "--delta-ns",
        ),
        (
            &["latency", "--modes", "none", "--batch", "1025"][..],
            "--batch 1025",
        ),
        (
            &["latency", "--modes", "none", "--queue-len", "0"][..],
            "--queue-len 0 outside 1..1048576",
        ),
        (
            &["latency", "--modes", "none,none"][..],
            "`none` given twice",
        ),
        (
            &["latency", "--modes", "none", "--qdisc-bypass"][..],
            "--qdisc-bypass",
        ),
        (
            &["latency", "--modes", "none", "--client-cpu", "4096"][..],
            "--client-cpu 4096 outside 0..",
        ),
    ] {
        let args: Vec<&str> = short.iter().chain(extra).copied().collect();
        let err = refused(&args, 1);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("needs root"), "{args:?}: {err}");
    }
}

#[test]
fn nan_infinite_and_negative_floats_are_refused() {
    for value in ["nan", "NaN", "inf", "-inf", "-1", "0", "1e-300", "61"] {
        let flag = format!("--seconds={value}");
        let err = refused(&["udp-bench", "--quick", &flag], 1);
        assert!(
            err.contains("--seconds") && err.contains("[0.05, 60]"),
            "{value}: {err}"
        );
    }
    for value in ["nan", "inf", "-0.5", "0", "1e-300", "1e300"] {
        let flag = format!("--load={value}");
        let err = refused(&["arbiter-bench", "--seconds", "0.01", &flag], 1);
        assert!(err.contains("--load"), "{value}: {err}");
    }
    for value in ["nan", "inf", "-1", "1e-300", "3601"] {
        let flag = format!("--seconds={value}");
        let err = refused(&["arbiter-bench", &flag], 1);
        assert!(
            err.contains("--seconds") && err.contains("3600"),
            "{value}: {err}"
        );
    }
    // A value clap cannot read as a number at all is a usage error.
    let err = refused(&["udp-bench", "--seconds", "fast"], 2);
    assert!(err.contains("--seconds"), "{err}");
}

#[test]
fn arbiter_bench_refuses_tens_of_thousands_of_clients_before_starting_one() {
    let start = Instant::now();
    let err = refused(
        &["arbiter-bench", "--clients", "50000", "--seconds", "0.01"],
        1,
    );
    assert!(err.contains("--clients 50000 outside 1..="), "{err}");
    assert!(err.contains("per CPU"), "the limit says why: {err}");
    assert!(start.elapsed() < Duration::from_secs(5), "refused, not run");
    for (args, needle) in [
        (&["--clients", "0"][..], "--clients 0"),
        (&["--pkt-size", "0"][..], "--pkt-size 0 outside 1..=65536"),
        (&["--pkt-size", "100000"][..], "--pkt-size 100000"),
        (&["--queue-len", "0"][..], "--queue-len 0"),
        (&["--queue-len", "1048576"][..], "--queue-len 1048576"),
        (
            &["--min-awake-us", "18446744073709551615"][..],
            "--min-awake-us",
        ),
        (&["--delta-a-ns", "2000000000"][..], "--delta-a-ns"),
        (&["--rate", "999"][..], "--rate 999 bit/s"),
        (&["--delta-c-ns", "1000000001"][..], "--delta-c-ns"),
        (
            &["--clients", "64", "--queue-len", "1000000"][..],
            "queued packets",
        ),
        // 2 packets/s of the default 1 Tbit/s: none in 0.01 s.
        (&["--load", "0.000000001"][..], "--load"),
    ] {
        let all: Vec<&str> = ["arbiter-bench", "--seconds", "0.01"]
            .iter()
            .chain(args)
            .copied()
            .collect();
        let err = refused(&all, 1);
        assert!(err.contains(needle), "{all:?}: {err}");
    }
}

#[test]
fn a_chart_or_csv_directory_that_does_not_exist_is_refused_and_not_created() {
    let base = std::env::temp_dir().join(format!("fairway-udp-outputs-{}", std::process::id()));
    let missing = base.join("no").join("such");
    let prefix = missing.join("pfx");
    let err = refused(
        &[
            "udp-bench",
            "--quick",
            "--experiments",
            "latency",
            "--modes",
            "none",
            "--chart",
            &prefix.to_string_lossy(),
        ],
        1,
    );
    assert!(
        err.contains("--chart") && err.contains("does not exist"),
        "{err}"
    );
    let err = refused(
        &[
            "udp-bench",
            "--quick",
            "--experiments",
            "latency",
            "--modes",
            "none",
            "--csv",
            &missing.to_string_lossy(),
        ],
        1,
    );
    assert!(
        err.contains("--csv") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!base.exists(), "{} was created", base.display());
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn quick_latency_run_accounts_for_every_packet() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let tools = ["ip", "tc"]
        .iter()
        .all(|t| Command::new(t).arg("-V").output().is_ok());
    if !root || !tools {
        println!("quick_latency_run_accounts_for_every_packet: skipped, needs root and iproute2");
        return;
    }
    let out = fairway(&["udp-bench", "--quick", "--experiments", "latency", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(v["targets"]["accounting_ok"], true);
    assert_eq!(v["light"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["loaded"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["loaded"][3]["mode"], "fairway-dispatch");
}

/// True when the test may build namespaces: root, with iproute2.
fn root_with_iproute2() -> bool {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    root && ["ip", "tc"]
        .iter()
        .all(|t| Command::new(t).arg("-V").output().is_ok())
}

/// The output of `ip ARGS` (in the initial namespace).
fn ip(args: &[&str]) -> String {
    let out = Command::new("ip").args(args).output().expect("run ip");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The namespaces of process `pid`'s testbeds (`fwy<pid>x…`).
fn namespaces_of(pid: u32) -> Vec<String> {
    let own = format!("fwy{pid}x");
    ip(&["netns", "list"])
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&own))
        .map(str::to_string)
        .collect()
}

/// Starts a long udp-bench trial, waits until its namespaces exist, sends
/// `signal` (`TERM`, `INT`) and returns what the process printed and its
/// pid once it exited.
fn interrupt_a_run(signal: &str) -> (Output, u32) {
    let child = Command::new(env!("CARGO_BIN_EXE_fairway"))
        .args([
            "udp-bench",
            "--quick",
            "--experiments",
            "throughput",
            "--modes",
            "none",
            "--clients",
            "1",
            "--seconds",
            "20",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fairway");
    let pid = child.id();
    // Another process's trial may hold the machine-wide lock for a while.
    let give_up = Instant::now() + Duration::from_secs(180);
    while namespaces_of(pid).len() < 2 {
        assert!(Instant::now() < give_up, "no testbed of {pid} appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Into the trial: the senders are running.
    std::thread::sleep(Duration::from_millis(500));
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
    let waited = Instant::now();
    let out = child.wait_with_output().expect("wait for fairway");
    // The trial was to send for 20 s: the signal cut it short.
    assert!(
        waited.elapsed() < Duration::from_secs(15),
        "{:?}",
        waited.elapsed()
    );
    (out, pid)
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn sigterm_and_sigint_stop_a_run_and_remove_its_namespaces_and_links() {
    if !root_with_iproute2() {
        println!("sigterm_and_sigint_stop_a_run_and_remove_its_namespaces_and_links: skipped, needs root");
        return;
    }
    let veths_before = ip(&["-o", "link", "show", "type", "veth"]);
    for (signal, name) in [("TERM", "SIGTERM"), ("INT", "SIGINT")] {
        let (out, pid) = interrupt_a_run(signal);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: {err}");
        assert_eq!(
            lines[0],
            format!("fairway: error: udp-bench interrupted by {name}; its namespaces and links are removed"),
        );
        assert!(out.stdout.is_empty(), "{name}: no report of a cut run");
        assert_eq!(namespaces_of(pid), Vec::<String>::new(), "{name}");
        // The veth pair lived in the namespaces; nothing leaked into the
        // initial one.
        assert_eq!(
            ip(&["-o", "link", "show", "type", "veth"]),
            veths_before,
            "{name}"
        );
    }
}
