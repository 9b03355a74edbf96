//! One measurement: one configuration (`none`, `tc`, `fairway` or
//! `fairway-dispatch`), one set of clients, on a testbed of its own (so
//! every kernel counter starts from zero and nothing of a previous run is
//! still queued).
//!
//! Threads: each client is a thread with its own socket
//! (`clients.rs`); in `fairway` the arbiter grants and the clients
//! transmit, in `fairway-dispatch` the arbiter thread transmits too
//! (`dispatcher.rs`). The receiver is a thread reading the watched
//! flows, and a sampler thread counts what crosses the link
//! ([`super::sampler`]).
//!
//! Timing: all clients share one start instant t0 and one deadline
//! t0 + `seconds` ([`ClientClock::Shared`](super::ClientClock::Shared)).
//! After the deadline the trial waits, for a bounded time, for fairway's
//! granted packets to leave and the qdisc to empty, then reads every
//! counter back and removes the testbed.

use super::clients::{
    run_client, ClientOutcome, ClientParams, DirectClient, FairwayClient, SubmittingClient,
    GRACE_NS,
};
use super::dispatcher::{Lane, SenderDispatch};
use super::error::TrialError;
use super::lock::TrialLock;
use super::result::{cdf_points, FlowResult, KernelCounts, Percentiles, TargetResult, TrialResult};
use super::sampler::{sample_link, LinkWindow};
use super::sender::{open_senders, Sender, SenderSetup};
use super::spec::{FlowSpec, Mode, Placement, ReceivePath, TrialSpec};
use super::start::StartGate;
use crate::testbed::{is_root, HtbClass, KernelDrops, Testbed, TestbedError, RECEIVER_IP};
use fairway_runtime::net::{
    interrupted, monotonic_ns, set_round_robin_priority, Datagram, Receiver, ReceiverReport,
    ReceiverSockets, FRAME_LEN,
};
use fairway_runtime::{
    affinity::pin_current_thread, set_realtime_priority, ArbiterHandle, ArbiterMode, ArbiterStats,
    Client, ClientConfig, ClientSubmitter, DispatchingHandle, RuntimeBuilder, RuntimeConfig,
    ScanGapWindow,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// First receiver port; flow i uses `BASE_PORT + i`.
pub const BASE_PORT: u16 = 40_000;
/// How long to wait for the qdisc to empty after the clients stopped.
const QUIESCE_MAX: Duration = Duration::from_secs(2);

/// Runs one trial on a fresh testbed, which is removed before returning.
/// Trials of all processes on the machine run one at a time
/// ([`TRIAL_LOCK_PATH`](super::lock::TRIAL_LOCK_PATH)).
pub fn run_trial(spec: &TrialSpec) -> Result<TrialResult, TrialError> {
    let n = spec.flows.len();
    if n == 0 || n > 4096 {
        return Err(TrialError::ClientCount(n));
    }
    spec.validate()?;
    if let Some(p) = spec.placement.rt_priority {
        if p == 0 || p > super::config::MAX_RT_PRIORITY {
            return Err(TrialError::RtPriority(p));
        }
    }
    if !is_root() {
        return Err(TestbedError::NeedsRoot.into());
    }
    let _lock = TrialLock::acquire()?;
    let tb = Testbed::create()?;
    let watched = prepare_testbed(&tb, spec)?;
    let before = tb.kernel_drops()?;
    let sockets = tb
        .in_receiver_ns(|| ReceiverSockets::bind(RECEIVER_IP, BASE_PORT, n, None))?
        .map_err(TrialError::ReceiverSockets)?;
    let addrs: Vec<_> = (0..n).map(|i| sockets.addr(i)).collect();
    let setup = SenderSetup {
        transport: spec.transport,
        batch: spec.batch,
        htb: spec.mode == Mode::Tc,
        bypass: spec.qdisc_bypass && spec.mode != Mode::Tc,
    };
    let mut senders = open_senders(&tb, &setup, &addrs)?.map_err(TrialError::SenderSockets)?;
    for &w in &watched {
        if let Some(s) = senders.get_mut(w) {
            s.record_delays();
        }
    }
    // One above the others' priority; `run_trial` refused one with none
    // above it.
    let high = spec.placement.rt_priority.and_then(|x| x.checked_add(1));
    let receiver = Receiver::spawn(sockets, watched.clone(), spec.placement.receiver_cpu, high)
        .map_err(TrialError::Receiver)?;

    // Opened before the arbiter starts: the busy-polling arbiter's
    // real-time time on its CPU counts from its spawn (see
    // `RT_COOLDOWN_MS`), so nothing slow may come between it and t0.
    let mut counters = tb.sender_device_counters()?;
    let scheduling = start_scheduling(spec, senders)?;
    // The arbiter's round gaps, counted from t0 until the clients are done.
    let scan_gaps = scheduling.scan_gap_window();
    let start = StartGate::new(n + 1);
    let (mut outcomes, window) = std::thread::scope(|s| {
        let sampler = std::thread::Builder::new()
            .name("rate-sampler".into())
            .spawn_scoped(s, || {
                pin_and_prioritise(spec.placement.receiver_cpu, high);
                sample_link(&mut counters, &start, spec.seconds, scan_gaps.as_ref())
            })
            .map_err(|source| TrialError::Spawn {
                what: "sampler thread",
                source,
            })?;
        let outcomes = run_clients(s, spec, scheduling.roles, &start, high);
        let window = sampler
            .join()
            .map_err(|_| TrialError::Panicked("sampler thread"))?
            .map_err(TrialError::LinkCounters);
        Ok::<_, TrialError>((outcomes?, window?))
    })?;
    let arbiter_scan_gap_ns = scan_gaps.map(|w| w.take());
    let arbiter_stats = stop_scheduling(
        scheduling.arbiter,
        scheduling.dispatching,
        &scheduling.drained,
        &mut outcomes,
    )?;
    quiesce(&tb)?;
    let report = receiver.finish().map_err(TrialError::Receiver)?;
    let kernel = tb.kernel_drops()?.since(&before);
    drop(tb);
    Ok(trial_result(
        spec,
        &outcomes,
        &report,
        &kernel,
        &window,
        &watched,
        arbiter_stats.map(|a| a.decisions),
        arbiter_scan_gap_ns,
    ))
}

/// Installs `tc`'s HTB and the ingress drop the trial asks for; returns the
/// watched flows.
fn prepare_testbed(tb: &Testbed, spec: &TrialSpec) -> Result<Vec<usize>, TrialError> {
    if spec.mode == Mode::Tc {
        let classes: Vec<HtbClass> = spec
            .flows
            .iter()
            .map(|f| HtbClass { weight: f.weight })
            .collect();
        tb.set_htb(&classes, spec.link_bps(), FRAME_LEN)?;
    }
    let watched: Vec<usize> = (0..spec.flows.len())
        .filter(|&i| spec.flows[i].watched)
        .collect();
    if spec.receive == ReceivePath::IngressDrop {
        if watched.len() > 1 {
            return Err(TrialError::IngressDropWatched(watched.len()));
        }
        let keep = watched.first().map(|&w| BASE_PORT + w as u16);
        tb.drop_at_ingress(keep)?;
    }
    Ok(watched)
}

/// What a client thread runs.
enum ClientThread {
    /// Sends directly (`none`, `tc`).
    Direct(Sender),
    /// Submits and transmits its own grants (`fairway`).
    Fairway(Box<(Client<Datagram>, Sender)>),
    /// Only submits (`fairway-dispatch`).
    Submit(ClientSubmitter<Datagram>),
}

/// Who schedules the trial's packets, and what each client thread gets: its
/// sender (direct), its client and sender (`fairway`), or only its
/// submitting half (`fairway-dispatch`, whose senders go to the arbiter
/// thread with the draining halves).
struct Scheduling {
    roles: Vec<ClientThread>,
    arbiter: Option<ArbiterHandle>,
    dispatching: Option<DispatchingHandle<SenderDispatch>>,
    /// Packets the dispatcher drained, per client.
    drained: Arc<[AtomicU64]>,
}

impl Scheduling {
    fn scan_gap_window(&self) -> Option<ScanGapWindow> {
        self.arbiter
            .as_ref()
            .map(ArbiterHandle::scan_gap_window)
            .or_else(|| self.dispatching.as_ref().map(|d| d.scan_gap_window()))
    }
}

/// Starts the arbiter the trial's configuration has (none for `none` and
/// `tc`) and hands out the senders.
fn start_scheduling(spec: &TrialSpec, mut senders: Vec<Sender>) -> Result<Scheduling, TrialError> {
    let n = spec.flows.len();
    let drained: Arc<[AtomicU64]> = (0..n).map(|_| AtomicU64::new(0)).collect();
    if !spec.mode.uses_arbiter() {
        return Ok(Scheduling {
            roles: senders.into_iter().map(ClientThread::Direct).collect(),
            arbiter: None,
            dispatching: None,
            drained,
        });
    }
    let p = spec.placement;
    let cfg = RuntimeConfig {
        rate_bps: spec.link_bps(),
        delta_a: Duration::from_nanos(spec.delta_a_ns),
        delta_c: Duration::from_nanos(spec.delta_c_ns),
        mode: ArbiterMode::BusyPoll,
        arbiter_cpu: p.arbiter_cpu,
        realtime_priority: p.rt_priority,
        ..RuntimeConfig::default()
    };
    let mut b = RuntimeBuilder::new(cfg)?;
    let mut clients = Vec::with_capacity(n);
    for f in &spec.flows {
        clients.push(b.add_client::<Datagram>(ClientConfig {
            weight: f.weight,
            max_len: FRAME_LEN,
            queue_len: spec.queue_len,
        })?);
    }
    let sched = spec.sched.clone();
    let make = move |c, l| sched.build::<u32>(c, l);
    let mut roles = Vec::with_capacity(n);
    if spec.mode == Mode::FairwayDispatch {
        let mut lanes = Vec::with_capacity(n);
        for (c, sender) in clients.into_iter().zip(senders.drain(..)) {
            let (sub, drainer) = c.split();
            roles.push(ClientThread::Submit(sub));
            lanes.push(Lane { drainer, sender });
        }
        let d = SenderDispatch::new(lanes, drained.clone());
        Ok(Scheduling {
            roles,
            arbiter: None,
            dispatching: Some(b.spawn_dispatching(make, d)?),
            drained,
        })
    } else {
        roles.extend(
            clients
                .into_iter()
                .zip(senders.drain(..))
                .map(|(c, s)| ClientThread::Fairway(Box::new((c, s)))),
        );
        Ok(Scheduling {
            roles,
            arbiter: Some(b.spawn(make)?),
            dispatching: None,
            drained,
        })
    }
}

/// Pins the calling thread to `cpu` and raises it to `SCHED_FIFO` at
/// `priority`, where given. Best effort: without the capability the run
/// is only noisier.
fn pin_and_prioritise(cpu: Option<usize>, priority: Option<u8>) {
    if let Some(c) = cpu {
        let _ = pin_current_thread(c);
    }
    if let Some(h) = priority {
        let _ = set_realtime_priority(h);
    }
}

/// Runs every client on a thread of its own in `scope`, from the shared
/// start to its end; returns what each did, in client order.
fn run_clients<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    spec: &'scope TrialSpec,
    roles: Vec<ClientThread>,
    start: &'scope StartGate,
    high: Option<u8>,
) -> Result<Vec<ClientOutcome>, TrialError> {
    let handles: Vec<_> = roles
        .into_iter()
        .enumerate()
        .map(|(i, role)| {
            let params = ClientParams {
                flow: i as u16,
                spec: spec.flows[i],
                batch: spec.batch,
                max: spec.max_packets_per_flow,
                seconds: spec.seconds,
                clock: spec.clock,
            };
            std::thread::Builder::new()
                .name(format!("client-{i}"))
                .spawn_scoped(scope, move || {
                    set_client_scheduling(spec.placement, params.spec, high);
                    match role {
                        ClientThread::Direct(sender) => {
                            run_client(DirectClient::new(sender, params.batch), &params, start)
                        }
                        ClientThread::Fairway(cs) => {
                            let (c, sender) = *cs;
                            run_client(FairwayClient::new(c, sender), &params, start)
                        }
                        ClientThread::Submit(sub) => {
                            run_client(SubmittingClient(sub), &params, start)
                        }
                    }
                })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| {
            h.map_err(|source| TrialError::Spawn {
                what: "client thread",
                source,
            })?
            .join()
            .map_err(|_| TrialError::Panicked("client thread"))
        })
        .collect()
}

/// Pins a client thread and sets its real-time policy ([`Placement`]):
/// the paced target `SCHED_FIFO` at `high`, flat-out clients `SCHED_RR`
/// so that those sharing a CPU take turns. Best effort, as
/// [`pin_and_prioritise`].
fn set_client_scheduling(p: Placement, f: FlowSpec, high: Option<u8>) {
    if let Some(c) = p.client_cpu {
        let _ = pin_current_thread(c);
    }
    match (p.rt_priority, f.pace_pps) {
        (Some(_), Some(_)) => {
            if let Some(h) = high {
                let _ = set_realtime_priority(h);
            }
        }
        (Some(prio), None) => {
            let _ = set_round_robin_priority(prio);
        }
        _ => {}
    }
}

/// Stops the arbiter once the clients are done; the dispatcher first gets a
/// bounded time to transmit what is still granted, and its lanes' counters
/// become the submitting clients' outcomes. Returns the arbiter's counters.
fn stop_scheduling(
    arbiter: Option<ArbiterHandle>,
    dispatching: Option<DispatchingHandle<SenderDispatch>>,
    drained: &[AtomicU64],
    outcomes: &mut [ClientOutcome],
) -> Result<Option<ArbiterStats>, TrialError> {
    let mut arbiter_stats = match arbiter {
        Some(a) => Some(a.stop()?),
        None => None,
    };
    if let Some(h) = dispatching {
        let grace_end = monotonic_ns() + GRACE_NS;
        let behind = |outcomes: &[ClientOutcome]| {
            outcomes
                .iter()
                .zip(drained)
                .any(|(o, d)| d.load(Ordering::Relaxed) < o.offered)
        };
        while behind(outcomes) && monotonic_ns() < grace_end && !interrupted() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (stats, d) = h.stop()?;
        arbiter_stats = Some(stats);
        let d = d.ok_or(TrialError::Panicked("the arbiter (dispatcher) thread"))?;
        for ((o, lane), drained) in outcomes.iter_mut().zip(d.into_lanes()).zip(drained) {
            let mut sender = lane.sender;
            let accepted = o.offered;
            let left = accepted - drained.load(Ordering::Relaxed).min(accepted);
            *o = ClientOutcome::sent_by(&mut sender, accepted, left, o.stall_ns);
        }
    }
    Ok(arbiter_stats)
}

/// Lets the qdisc empty (bounded) and the last packets arrive.
fn quiesce(tb: &Testbed) -> Result<(), TrialError> {
    let t_quiesce = Instant::now();
    while t_quiesce.elapsed() < QUIESCE_MAX {
        if tb.kernel_drops()?.qdisc_backlog == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(20));
    Ok(())
}

/// The trial's result from what the clients, the receiver, the kernel and
/// the link sampler counted.
#[allow(clippy::too_many_arguments)]
fn trial_result(
    spec: &TrialSpec,
    outcomes: &[ClientOutcome],
    report: &ReceiverReport,
    k: &KernelDrops,
    window: &LinkWindow,
    watched: &[usize],
    decisions: Option<u64>,
    arbiter_scan_gap_ns: Option<u64>,
) -> TrialResult {
    let flows: Vec<FlowResult> = outcomes
        .iter()
        .zip(&report.flows)
        .zip(&spec.flows)
        .map(|((o, r), f)| FlowResult {
            weight: f.weight,
            offered: o.offered,
            sent: o.counters.sent,
            refused: o.counters.refused,
            calls: o.counters.calls,
            received: r.received,
            socket_drops: r.socket_drops,
            left_queued: o.left_queued,
        })
        .collect();
    let sent: u64 = flows.iter().map(|f| f.sent).sum();
    let received: u64 = flows.iter().map(|f| f.received).sum();
    let socket_drops: u64 = flows.iter().map(|f| f.socket_drops).sum();
    let counted = socket_drops + k.outside_sockets();
    TrialResult {
        mode: spec.mode,
        clients: spec.flows.len(),
        link_pps: spec.link_pps,
        seconds: spec.seconds,
        flows,
        kernel: KernelCounts {
            qdisc: k.qdisc,
            ingress: k.ingress,
            veth: k.veth_tx + k.veth_rx,
            udp_other: k.udp_no_ports + k.udp_other_errors,
            udp_rcvbuf_errors: k.udp_rcvbuf_errors,
        },
        sent,
        received,
        counted_drops: counted,
        unaccounted: sent as i64 - received as i64 - counted as i64,
        tx_pps: sent as f64 / spec.seconds,
        delivered_pps: window.pps(),
        window_seconds: window.seconds,
        slice_pps: window.slice_pps.clone(),
        target: watched
            .first()
            .map(|&t| target_result(spec, t, &outcomes[t], report)),
        decisions,
        arbiter_scan_gap_ns,
    }
}

/// The watched target `t`'s view: its rate, one-way delays and scheduling
/// delays.
fn target_result(
    spec: &TrialSpec,
    t: usize,
    outcome: &ClientOutcome,
    report: &ReceiverReport,
) -> TargetResult {
    let offered = spec.flows[t].pace_pps.unwrap_or(0) as f64;
    let rx = &report.flows[t];
    let received_pps = rx.received as f64 / spec.seconds;
    let (latency, cdf) = match &rx.delays {
        Some(h) => (Percentiles::of(h), cdf_points(h, 200)),
        None => (Percentiles::default(), Vec::new()),
    };
    let of = |h: &Option<_>| h.as_ref().map(Percentiles::of).unwrap_or_default();
    TargetResult {
        flow: t,
        offered_pps: offered,
        received_pps,
        rate_ratio: if offered > 0.0 {
            received_pps / offered
        } else {
            0.0
        },
        latency,
        app_latency: of(&rx.app_delays),
        cdf,
        sched_delay: of(&outcome.delays),
        call_delay: of(&outcome.call_delays),
        sched_delay_hist: outcome.delays.clone(),
        stall_ns: outcome.stall_ns,
    }
}
