//! The real-packet experiments on small, short runs (Linux, root): every
//! configuration accounts for every packet, the testbed disappears, the
//! target client gets its rate under load with fairway, and the Eq. (1)
//! check fails when the scheduler cannot meet it (FIFO instead of DRR).
#![cfg(target_os = "linux")]

use fairway_core::{SchedKind, SchedSpec};
use fairway_lab::udp_bench::experiments::{bound_check, observed_bound_check};
use fairway_lab::udp_bench::*;

/// The trials pin real-time threads to the same CPUs: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn root_or_skip(name: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    if !fairway_lab::testbed::is_root() {
        println!("{name}: skipped, needs root");
        return None;
    }
    let tools = ["ip", "tc"]
        .iter()
        .all(|t| std::process::Command::new(t).arg("-V").output().is_ok());
    if !tools {
        println!("{name}: skipped, needs iproute2 (ip, tc)");
        return None;
    }
    Some(SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

fn placement() -> Placement {
    let two = fairway_runtime::affinity::available_cpus() >= 2;
    Placement {
        arbiter_cpu: two.then_some(0),
        client_cpu: two.then_some(1),
        receiver_cpu: two.then_some(0),
        rt_priority: Some(10),
    }
}

fn spec(mode: Mode, flows: Vec<FlowSpec>, link_pps: Option<u64>, sched: &str) -> TrialSpec {
    TrialSpec {
        mode,
        flows,
        link_pps,
        seconds: 0.3,
        max_packets_per_flow: 2_000_000,
        sched: SchedSpec::parse(sched).unwrap(),
        delta_a_ns: 500,
        delta_c_ns: 500,
        batch: 32,
        transport: Transport::Udp,
        queue_len: 511,
        placement: placement(),
        clock: ClientClock::Shared,
        receive: ReceivePath::Sockets,
        qdisc_bypass: false,
    }
}

fn flat(n: usize) -> Vec<FlowSpec> {
    vec![
        FlowSpec {
            weight: 1,
            pace_pps: None,
            watched: false
        };
        n
    ]
}

fn target_plus(interferers: usize) -> Vec<FlowSpec> {
    let mut f = vec![FlowSpec {
        weight: 50,
        pace_pps: Some(4000),
        watched: true,
    }];
    f.extend(flat(interferers));
    f
}

fn own_namespaces() -> usize {
    let prefix = format!("fwy{}x", std::process::id());
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .count()
        })
        .unwrap_or(0)
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn every_configuration_accounts_for_every_packet() {
    let Some(_serial) = root_or_skip("every_configuration_accounts_for_every_packet") else {
        return;
    };
    // Unlimited link (sockets overflow: socket drops) and a shaped one
    // (HTB and the arbiter hold packets back; HTB drops at its queues);
    // unread flows dropped at full sockets or at the receiver's ingress.
    let cases = [(None, flat(3)), (Some(20_000), target_plus(3))];
    for ((link, flows), receive) in cases
        .iter()
        .flat_map(|c| [(c, ReceivePath::Sockets), (c, ReceivePath::IngressDrop)])
    {
        let link = *link;
        for mode in Mode::ALL {
            let mut sp = spec(mode, flows.clone(), link, "drr");
            sp.receive = receive;
            let r = run_trial(&sp).unwrap();
            assert!(r.sent > 0, "{mode:?}: nothing sent");
            if receive == ReceivePath::IngressDrop {
                // Only the watched flow reaches a socket; the rest were
                // dropped, and counted, at the ingress hook.
                for (f, spec) in r.flows.iter().zip(flows.iter()) {
                    assert!(spec.watched || f.received + f.socket_drops == 0, "{mode:?}");
                }
                assert!(r.kernel.ingress > 0, "{mode:?}: {:?}", r.kernel);
            }
            assert!(
                r.accounting_holds(),
                "{mode:?} link {link:?}: sent {} received {} counted drops {} unaccounted {} kernel {:?}",
                r.sent,
                r.received,
                r.counted_drops,
                r.unaccounted,
                r.kernel
            );
            for f in &r.flows {
                assert!(f.received + f.socket_drops <= f.sent);
            }
        }
    }
    // Every trial removed its testbed.
    assert_eq!(own_namespaces(), 0);
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn raw_frames_through_af_packet_are_received_and_accounted_for() {
    let Some(_serial) = root_or_skip("raw_frames_through_af_packet_are_received_and_accounted_for")
    else {
        return;
    };
    for (mode, bypass) in Mode::ALL.into_iter().flat_map(|m| [(m, false), (m, true)]) {
        let mut s = spec(mode, target_plus(2), Some(50_000), "drr");
        s.transport = Transport::AfPacket;
        // Skips the qdisc in every mode but tc.
        s.qdisc_bypass = bypass;
        // All clients share one 0.6 s window; flat-out clients on one CPU
        // take 100 ms SCHED_RR turns, so each gets several.
        s.seconds = 0.6;
        let r = run_trial(&s).unwrap();
        assert!(r.accounting_holds(), "{mode:?}: {:?}", r.kernel);
        // The target's frames arrive as UDP datagrams with their payload.
        let t = r.target.as_ref().unwrap();
        assert!(t.rate_ratio > 0.9, "{mode:?}: {}", t.rate_ratio);
        // Raw frames record their send delays as UDP does (Eq. (1) reads
        // them): one per frame the target's socket sent, the call's start
        // before its return.
        assert_send_delays(mode, &r);
        // Every client that got the CPU had its frames received. Whether a
        // flat-out SCHED_RR client gets a turn inside the window is up to
        // the shared client CPU (on CI's 2 cores one did not, in `none`),
        // so a client that sent nothing is not a failure of the back-end;
        // the target and at least one flat-out client must have sent.
        assert!(
            r.flows.iter().all(|f| f.sent == 0 || f.received > 0)
                && r.flows.iter().filter(|f| f.sent > 0).count() >= 2,
            "{mode:?}: {:?}",
            r.flows
        );
    }
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn the_accounting_check_fails_on_a_lost_packet() {
    let Some(_serial) = root_or_skip("the_accounting_check_fails_on_a_lost_packet") else {
        return;
    };
    let mut r = run_trial(&spec(Mode::None, flat(1), None, "drr")).unwrap();
    assert!(r.accounting_holds());
    // One packet the receiver never saw and no counter explains.
    r.received -= 1;
    r.unaccounted += 1;
    assert!(!r.accounting_holds());
    r.received += 1;
    r.unaccounted -= 1;
    assert!(r.accounting_holds());
    // One packet a client offered that was neither sent, refused nor left
    // queued.
    r.flows[0].offered += 1;
    assert!(!r.accounting_holds());
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn the_dispatcher_transmits_every_accepted_packet_and_the_target_gets_its_rate() {
    let Some(_serial) =
        root_or_skip("the_dispatcher_transmits_every_accepted_packet_and_the_target_gets_its_rate")
    else {
        return;
    };
    let mut s = spec(Mode::FairwayDispatch, target_plus(3), Some(100_000), "drr");
    s.seconds = 0.5;
    let r = run_trial(&s).unwrap();
    assert!(
        r.accounting_holds(),
        "sent {} received {} drops {} flows {:?}",
        r.sent,
        r.received,
        r.counted_drops,
        r.flows
    );
    // The clients only submitted; every accepted packet left through the
    // arbiter thread within the grace period.
    for f in &r.flows {
        assert!(f.offered > 0 && f.left_queued == 0, "{f:?}");
        assert_eq!(f.offered, f.sent + f.refused, "{f:?}");
    }
    assert_eq!(r.decisions, Some(r.flows.iter().map(|f| f.offered).sum()));
    let t = r.target.as_ref().unwrap();
    assert!(
        (t.rate_ratio - 1.0).abs() <= 0.02,
        "target got {:.0} of {:.0} pps",
        t.received_pps,
        t.offered_pps
    );
    assert!(t.sched_delay.count > 0, "{t:?}");
    // Each packet's system call starts before it returns.
    assert_eq!(t.call_delay.count, t.sched_delay.count, "{t:?}");
    assert!(t.call_delay.p50 <= t.sched_delay.p50, "{t:?}");
    assert!(t.call_delay.max <= t.sched_delay.max, "{t:?}");
    assert!(r.delivered_pps > 0.8 * 100_000.0, "{}", r.delivered_pps);
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn fairway_gives_the_target_its_rate_under_load_within_eq_1() {
    let Some(_serial) = root_or_skip("fairway_gives_the_target_its_rate_under_load_within_eq_1")
    else {
        return;
    };
    let mut s = spec(Mode::Fairway, target_plus(3), Some(100_000), "drr");
    s.seconds = 0.5;
    let r = run_trial(&s).unwrap();
    assert!(r.accounting_holds());
    let t = r.target.as_ref().unwrap();
    assert!(
        (t.rate_ratio - 1.0).abs() <= 0.02,
        "target got {:.0} of {:.0} pps",
        t.received_pps,
        t.offered_pps
    );
    // The interferers were really backlogged: the link was busy.
    assert!(r.delivered_pps > 0.8 * 100_000.0, "{}", r.delivered_pps);
    let b = bound_check(&r, SchedKind::Drr, 500, 500, 100_000).unwrap();
    // Whether the measured lateness stays within Eq. (1) is a timing claim:
    // on CI's two shared cores, with other tests running beside this one,
    // the arbiter can be preempted for milliseconds. `fairway udp-bench`
    // reports the margin on a quiet machine; here the check must run over
    // the target's packets and produce a finite bound.
    assert!(b.packets > 0, "{b:?}");
    assert!(
        b.bound_us.is_finite() && b.bound_us > b.twfi_scheduler_us,
        "{b:?}"
    );
    if !b.holds {
        eprintln!(
            "note: Eq. (1) margin {:.1} us on this shared machine: {b:?}",
            b.margin_us
        );
    }
    // The same check with the Δs the run had: never below the configured
    // ones, so never a smaller bound; the arbiter ran rounds, and the
    // target's thread worked (its turns take time).
    let o = observed_bound_check(&r, SchedKind::Drr, 500, 500, 100_000).unwrap();
    assert!(r.arbiter_scan_gap_ns.unwrap() > 0, "{r:?}");
    assert!(t.stall_ns > 0, "{t:?}");
    assert!(o.delta_a_us >= 0.5 && o.delta_c_us >= 0.5, "{o:?}");
    assert!(o.check.bound_us >= b.bound_us, "{o:?} {b:?}");
    assert_eq!(o.check.worst_us, b.worst_us);
    if !o.check.holds {
        eprintln!("note: Eq. (1) with the observed Δs violated here: {o:?}");
    }
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn the_eq_1_check_fails_for_a_scheduler_that_ignores_weights() {
    let Some(_serial) = root_or_skip("the_eq_1_check_fails_for_a_scheduler_that_ignores_weights")
    else {
        return;
    };
    // FIFO serves the target behind every interferer's queued packets
    // (3 × 511 packets at 10 µs each), far beyond DRR's bound (~0.6 ms).
    // The pause lets the CPUs' real-time budget recover from the previous
    // test's trial (as `--cooldown-ms` does), so the arbiter is not
    // throttled for 50 ms in this one.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let r = run_trial(&spec(Mode::Fairway, target_plus(3), Some(100_000), "fifo")).unwrap();
    assert!(r.accounting_holds());
    let b = bound_check(&r, SchedKind::Drr, 500, 500, 100_000).unwrap();
    assert!(!b.holds && b.over_bound > 0, "{b:?}");
    // The check with the Δs the run had: with no gap and no stall it is
    // the configured check, so it fails the same way. (Whether FIFO's
    // few-ms wait also exceeds the widened bound depends on the stalls:
    // k = Δ_A·B/L makes that bound grow with their square, 8 ms for a
    // 0.4 ms gap here, so it is reported, not asserted.)
    let mut still = r.clone();
    still.arbiter_scan_gap_ns = Some(0);
    still.target.as_mut().unwrap().stall_ns = 0;
    let same = observed_bound_check(&still, SchedKind::Drr, 500, 500, 100_000).unwrap();
    assert_eq!(same.check, b, "{same:?}");
    let o = observed_bound_check(&r, SchedKind::Drr, 500, 500, 100_000).unwrap();
    assert!(o.check.bound_us >= b.bound_us, "{o:?}");
    eprintln!("note: FIFO against Eq. (1) with the Δs the run had: {o:?}");
}

/// The largest sent rate, as a multiple of HTB's configured rate, that
/// the shared-clock check accepts. Measured: 1.03-1.04x with the shared
/// clock, 1.6x with clients started 100 ms apart, so both tests keep a
/// margin.
const TX_RATE_CHECK: f64 = 1.08;

fn htb_rate_trial(clock: ClientClock) -> TrialResult {
    let mut s = spec(Mode::Tc, flat(4), Some(50_000), "drr");
    s.seconds = 0.5;
    s.clock = clock;
    run_trial(&s).unwrap()
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn htb_holds_the_link_to_its_configured_rate() {
    let Some(_serial) = root_or_skip("htb_holds_the_link_to_its_configured_rate") else {
        return;
    };
    // Four flat-out clients (together able to send several times 50 kpps)
    // through HTB at 50 kpps of 60-byte frames (24 Mbit/s). Counted where
    // the frames cross the link, in the trial's window, HTB passes the
    // configured rate: never more than 5 % above it (it shapes), and at
    // least 85 % of it (the clients keep it busy; the slack is for a
    // real-time throttling pause of 50 ms in the window).
    let r = htb_rate_trial(ClientClock::Shared);
    assert!(r.accounting_holds(), "{:?}", r.kernel);
    let ratio = r.delivered_pps / 50_000.0;
    eprintln!(
        "HTB at 50 kpps: {:.0} pps across the link ({ratio:.3}×), {:.0} pps sent",
        r.delivered_pps, r.tx_pps
    );
    assert!(
        (0.85..=1.05).contains(&ratio),
        "HTB at 50 kpps passed {:.0} pps ({ratio:.3}×) in {:.3} s",
        r.delivered_pps,
        r.window_seconds
    );
    // With one start and one deadline for every client, what the senders
    // got accepted per second agrees too (1.03-1.04x measured: what HTB
    // and the socket buffers still hold at the deadline).
    assert!(
        r.tx_pps <= TX_RATE_CHECK * 50_000.0,
        "tx {:.0} pps",
        r.tx_pps
    );
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn the_rate_check_fails_when_clients_start_apart() {
    let Some(_serial) = root_or_skip("the_rate_check_fails_when_clients_start_apart") else {
        return;
    };
    // Each client timed from its own start, the rate taken as packets
    // sent / seconds: four flat-out clients starting 100 ms apart (a
    // SCHED_RR time slice, as clients sharing one CPU did) keep HTB busy
    // for 0.8 s of a "0.5 s" trial, so HTB appears to pass over its rate,
    // and the check above must reject that.
    let r = htb_rate_trial(ClientClock::Staggered {
        step_ns: 100_000_000,
    });
    let old = r.tx_pps / 50_000.0;
    eprintln!(
        "staggered clocks: {:.0} pps sent / seconds ({old:.3}×), {:.0} pps across the link",
        r.tx_pps, r.delivered_pps
    );
    assert!(
        old > TX_RATE_CHECK,
        "staggered clocks: {:.0} pps sent / seconds ({old:.3}×) should overstate the rate",
        r.tx_pps
    );
}

#[test]
#[ignore = "slow tier: needs root and network namespaces"]
fn every_frame_of_the_tx_ring_reaches_the_receiver_or_a_counted_drop() {
    let Some(_serial) =
        root_or_skip("every_frame_of_the_tx_ring_reaches_the_receiver_or_a_counted_drop")
    else {
        return;
    };
    // A fixed number of frames per client (well within the trial's time),
    // so "every frame sent" is a count known in advance; more than the
    // ring's 256 slots, so slots are reused.
    let frames = 3_000;
    for mode in Mode::ALL {
        let mut s = spec(mode, flat(2), Some(100_000), "drr");
        s.transport = Transport::AfPacketRing;
        s.max_packets_per_flow = frames;
        s.seconds = 1.0;
        let r = run_trial(&s).unwrap();
        assert!(r.accounting_holds(), "{mode:?}: {:?}", r.kernel);
        for f in &r.flows {
            assert_eq!((f.sent, f.refused), (frames, 0), "{mode:?}: {f:?}");
            assert_eq!(f.received + f.socket_drops, frames, "{mode:?}: {f:?}");
        }
    }
    // A shaped run with the target paced: its frames arrive at its rate,
    // and through the ring too every frame's send delay is recorded.
    for mode in [Mode::Tc, Mode::Fairway] {
        let mut s = spec(mode, target_plus(2), Some(50_000), "drr");
        s.transport = Transport::AfPacketRing;
        let r = run_trial(&s).unwrap();
        assert!(r.accounting_holds(), "{:?}", r.kernel);
        assert!(r.target.as_ref().unwrap().rate_ratio > 0.9);
        assert_send_delays(mode, &r);
    }
}

/// The target's submit → send delays: one per frame its socket sent, and
/// the call's start is recorded before its return.
fn assert_send_delays(mode: Mode, r: &TrialResult) {
    let t = r.target.as_ref().unwrap();
    let sent = r.flows[t.flow].sent;
    let h = t.sched_delay_hist.as_ref().expect("send delays recorded");
    assert_eq!(h.len(), sent, "{mode:?}");
    assert!(
        t.call_delay.count == sent && t.call_delay.p50 <= t.sched_delay.p50,
        "{mode:?}: {:?} / {:?}",
        t.call_delay,
        t.sched_delay
    );
}

/// A trial spec made in code is checked like the command's flags, before
/// the lock, the testbed or a thread (so this needs no root): nothing is
/// raised to 1 or run with nothing to send.
#[test]
fn a_trial_spec_out_of_range_is_refused_before_anything_is_built() {
    let ok = spec(Mode::None, target_plus(1), None, "drr");
    assert!(ok.validate().is_ok());
    type Spoil = fn(&mut TrialSpec);
    let cases: [(&str, Spoil); 6] = [
        ("--target-pps 0", |s| s.flows[0].pace_pps = Some(0)),
        ("--target-weight 0", |s| s.flows[0].weight = 0),
        ("--seconds 0.01", |s| s.seconds = 0.01),
        ("--seconds NaN", |s| s.seconds = f64::NAN),
        ("--batch 0", |s| s.batch = 0),
        ("--max-packets 0", |s| s.max_packets_per_flow = 0),
    ];
    for (needle, spoil) in cases {
        let mut s = ok.clone();
        spoil(&mut s);
        let err = run_trial(&s).map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with(needle), "{needle}: {err}");
    }
    let mut s = ok.clone();
    s.placement.rt_priority = Some(99);
    let err = run_trial(&s).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("99 outside 1..=98"), "{err}");
}
