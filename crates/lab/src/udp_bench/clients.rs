//! The client threads of a trial. Each client has its own socket (the PSPAT paper
//! §5.2) and sends either flat out or paced:
//!
//! * a flat-out client hands over batches stamped with the current time,
//!   as fast as its socket or client queue takes them ([`flat_out`]);
//! * a paced client (the *target*) hands over packet i at t0 + i/rate,
//!   stamped with that due time ([`Pacing`], [`paced`]).
//!
//! What "hand over" means is the client's [`Role`]: send it on the socket
//! (`none`, `tc`: [`DirectClient`]), submit it and transmit what the
//! arbiter granted itself (`fairway`: [`FairwayClient`], `drain()` with the
//! sender as back-end), or only submit it (`fairway-dispatch`:
//! [`SubmittingClient`]; the arbiter thread transmits). The two loops are
//! written once, for every role.
//!
//! Every loop is bounded by `seconds` and by `max_packets_per_flow`, and
//! stops on Ctrl-C; the grace period after the deadline (fairway clients
//! transmitting what was granted) is bounded too.

use super::sender::Sender;
use super::spec::{ClientClock, FlowSpec};
use super::start::{wait_until, StartGate};
use fairway_runtime::net::{interrupted, monotonic_ns, Datagram, SendCounters};
use fairway_runtime::{Client, ClientDrainer, ClientSubmitter};
use hdrhistogram::Histogram;

/// How long a paced client may go on after the deadline sending packets
/// that fell due before it (catching up after a stall), ns.
pub const CATCH_UP_NS: u64 = 250_000_000;
/// How long fairway clients (and the dispatcher) keep transmitting granted
/// packets after the deadline, at most, ns.
pub(super) const GRACE_NS: u64 = 500_000_000;
/// How long a flat-out client waits for the arbiter or the dispatcher
/// before yielding its CPU to the next client, ns.
const YIELD_AFTER_NS: u64 = 20_000;

/// What one client did.
pub(super) struct ClientOutcome {
    /// Packets handed to the socket or accepted into the client queue.
    pub(super) offered: u64,
    pub(super) counters: SendCounters,
    pub(super) delays: Option<Histogram<u64>>,
    pub(super) call_delays: Option<Histogram<u64>>,
    pub(super) left_queued: u64,
    /// A paced fairway or fairway-dispatch client (the target): the
    /// longest time its thread did not run while it had work, ns: see
    /// [`TargetResult::stall_ns`](super::result::TargetResult::stall_ns).
    pub(super) stall_ns: u64,
}

impl ClientOutcome {
    /// The outcome of a client that transmitted through `sender` itself.
    pub(super) fn sent_by(
        sender: &mut Sender,
        offered: u64,
        left_queued: u64,
        stall_ns: u64,
    ) -> Self {
        Self {
            offered,
            counters: sender.finish(),
            delays: sender.delays().cloned(),
            call_delays: sender.call_delays().cloned(),
            left_queued,
            stall_ns,
        }
    }
}

/// What every client of a trial shares, and its own flow.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClientParams {
    /// Its flow index (the datagrams' flow, its start under a staggered
    /// clock).
    pub(super) flow: u16,
    /// Flat out or paced.
    pub(super) spec: FlowSpec,
    /// Packets per batch, flat out.
    pub(super) batch: usize,
    /// Packets at most.
    pub(super) max: u64,
    /// Sending time, s.
    pub(super) seconds: f64,
    /// When its sending time starts.
    pub(super) clock: ClientClock,
}

/// Runs one client from the shared start to the end of its sending time
/// (and, for a fairway client, its grace period).
pub(super) fn run_client<R: Role>(
    mut role: R,
    p: &ClientParams,
    start: &StartGate,
) -> ClientOutcome {
    let t0 = start.start(p.clock, p.flow);
    let (offered, stall_ns) = match p.spec.pace_pps {
        None => {
            let deadline = t0 + (p.seconds * 1e9) as u64;
            (flat_out(&mut role, p.flow, p.batch, p.max, deadline), 0)
        }
        Some(pps) => paced(&mut role, p.flow, &Pacing::new(t0, pps, p.seconds, p.max)),
    };
    role.finish(offered, stall_ns)
}

/// How a client hands over its packets; [`flat_out`] and [`paced`] drive it.
pub(super) trait Role {
    /// How the paced loop measures the thread's stalls.
    const STALLS: StallRule;

    /// Flat out: hands over up to `k` packets of `flow` from `seq` on, all
    /// stamped `now`. Returns how many it took and whether the turn did any
    /// work (false: it waits for the arbiter or the dispatcher).
    fn burst(&mut self, flow: u16, seq: u64, k: u64, now: u64) -> (u64, bool);

    /// Paced: hands over one packet; false when it was refused (a full
    /// client queue), to be retried at the next turn of the loop.
    fn offer(&mut self, d: Datagram) -> bool;

    /// Paced: polls for packets handed over earlier that still wait for
    /// this thread (a fairway client's, for their grant); true when there
    /// were some, so the turn went to them.
    fn poll_grants(&mut self) -> bool {
        false
    }

    /// The outcome, once the loop handed over `offered` packets and the
    /// thread's longest stall was `stall_ns`.
    fn finish(self, offered: u64, stall_ns: u64) -> ClientOutcome;
}

/// How a paced client's stalls are measured (see
/// [`TargetResult::stall_ns`](super::result::TargetResult::stall_ns)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StallRule {
    /// Not measured (`none`, `tc`: nothing runs between a due time and
    /// the send but the thread itself, which the latency shows).
    Unmeasured,
    /// How late after its due time each packet was submitted.
    Lateness,
    /// The longest turn of the loop while a packet waited to be submitted,
    /// for its grant or in a send call, and how late after a sleep the
    /// thread woke. Lateness after polling for the previous packet's grant
    /// is the scheduler's delay, not the thread's, so it is not counted.
    Turns,
}

/// The stall measurement of one paced loop.
struct StallMeter {
    rule: StallRule,
    max_ns: u64,
    /// When the previous turn with work started (a packet to submit or one
    /// waiting for its grant); `None` after a sleep until a due time.
    busy_turn: Option<u64>,
    /// This turn follows a sleep (or is the first).
    after_wait: bool,
}

impl StallMeter {
    fn new(rule: StallRule) -> Self {
        Self {
            rule,
            max_ns: 0,
            busy_turn: None,
            after_wait: true,
        }
    }

    /// A turn of the loop starts at `now`.
    fn turn(&mut self, now: u64) {
        if self.rule == StallRule::Turns {
            self.after_wait = self.busy_turn.is_none();
            if let Some(prev) = self.busy_turn.take() {
                // Includes the turn's own work (a poll, a send call).
                self.max_ns = self.max_ns.max(now - prev);
            }
        }
    }

    /// The turn that started at `now` had work.
    fn busy(&mut self, now: u64) {
        if self.rule == StallRule::Turns {
            self.busy_turn = Some(now);
        }
    }

    /// A packet due at `due` is handed over in the turn that started at
    /// `now`.
    fn handing_over(&mut self, now: u64, due: u64) {
        let counts = match self.rule {
            StallRule::Unmeasured => false,
            StallRule::Lateness => true,
            StallRule::Turns => self.after_wait,
        };
        if counts {
            self.max_ns = self.max_ns.max(now - due);
        }
    }
}

/// The open-loop schedule of a paced client (the target): packet i is due
/// at t0 + i/rate and is stamped with that due time, not with the time it
/// was actually sent or submitted. After a stall (its thread not scheduled,
/// e.g. a real-time throttling pause) the client catches up, sending what
/// fell due back to back, and each of those packets' one-way delay counts
/// from its due time: the stall shows in the latency instead of silently
/// thinning the offered load (coordinated omission). The client sends
/// every packet due before the deadline — `ceil(seconds × rate)`, capped
/// by `max` — taking at most [`CATCH_UP_NS`] past the deadline to do so.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pacing {
    t0: u64,
    period_ns: f64,
    due_total: u64,
    stop_at: u64,
}

impl Pacing {
    fn new(t0: u64, pps: u64, seconds: f64, max: u64) -> Self {
        // At least 1: `TrialSpec::validate` refused 0.
        let pps = pps as f64;
        Self {
            t0,
            period_ns: 1e9 / pps,
            due_total: ((seconds * pps).ceil() as u64).min(max),
            stop_at: t0 + (seconds * 1e9) as u64 + CATCH_UP_NS,
        }
    }

    /// When packet `seq` is due, ns.
    fn due(&self, seq: u64) -> u64 {
        self.t0 + (seq as f64 * self.period_ns) as u64
    }

    /// Every packet due in the trial was sent, or the catch-up time is over.
    fn done(&self, seq: u64, now: u64) -> bool {
        seq >= self.due_total || now >= self.stop_at
    }
}

/// Waiting for the arbiter or the dispatcher in a flat-out loop: a grant
/// normally comes within a few µs; past [`YIELD_AFTER_NS`] the grants are
/// going to other clients, so the next client of this CPU may run (they
/// share it round-robin).
#[derive(Default)]
struct IdleWait {
    since: Option<u64>,
}

impl IdleWait {
    fn wait(&mut self) {
        let t = monotonic_ns();
        let since = *self.since.get_or_insert(t);
        if t - since > YIELD_AFTER_NS {
            std::thread::yield_now();
            self.since = None;
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Hands over batches of up to `batch` packets stamped with the current
/// time until `deadline` or `max` packets; returns the packets handed over.
fn flat_out<R: Role>(role: &mut R, flow: u16, batch: usize, max: u64, deadline: u64) -> u64 {
    let mut seq = 0u64;
    let mut idle = IdleWait::default();
    while seq < max && !interrupted() {
        let now = monotonic_ns();
        if now >= deadline {
            break;
        }
        let k = (batch as u64).min(max - seq);
        let (taken, worked) = role.burst(flow, seq, k, now);
        seq += taken;
        if worked {
            idle.since = None;
        } else {
            idle.wait();
        }
    }
    seq
}

/// Hands over every packet as it falls due ([`Pacing`]); returns the
/// packets handed over and the thread's longest stall, ns.
fn paced<R: Role>(role: &mut R, flow: u16, pace: &Pacing) -> (u64, u64) {
    let mut seq = 0u64;
    let mut stalls = StallMeter::new(R::STALLS);
    while !interrupted() {
        let now = monotonic_ns();
        stalls.turn(now);
        if pace.done(seq, now) {
            break;
        }
        if role.poll_grants() {
            stalls.busy(now);
            continue;
        }
        let due = pace.due(seq);
        if now >= due {
            stalls.handing_over(now, due);
            if role.offer(Datagram::new(flow, seq, due)) {
                seq += 1;
            }
            stalls.busy(now);
        } else {
            wait_until(due);
        }
    }
    (seq, stalls.max_ns)
}

/// Sends directly on its socket (`none`, `tc`).
pub(super) struct DirectClient {
    sender: Sender,
    buf: Vec<Datagram>,
}

impl DirectClient {
    pub(super) fn new(sender: Sender, batch: usize) -> Self {
        Self {
            sender,
            buf: Vec::with_capacity(batch),
        }
    }
}

impl Role for DirectClient {
    const STALLS: StallRule = StallRule::Unmeasured;

    fn burst(&mut self, flow: u16, seq: u64, k: u64, now: u64) -> (u64, bool) {
        self.buf.clear();
        self.buf
            .extend((0..k).map(|j| Datagram::new(flow, seq + j, now)));
        self.sender.send_now(&self.buf);
        (k, true)
    }

    fn offer(&mut self, d: Datagram) -> bool {
        self.sender.send_now(&[d]);
        true
    }

    fn finish(mut self, offered: u64, stall_ns: u64) -> ClientOutcome {
        ClientOutcome::sent_by(&mut self.sender, offered, 0, stall_ns)
    }
}

/// Submits to its client queue and transmits what the arbiter granted
/// itself (`fairway`).
pub(super) struct FairwayClient {
    submitter: ClientSubmitter<Datagram>,
    drainer: ClientDrainer<Datagram>,
    sender: Sender,
    accepted: u64,
    transmitted: u64,
}

impl FairwayClient {
    pub(super) fn new(client: Client<Datagram>, sender: Sender) -> Self {
        let (submitter, drainer) = client.split();
        Self {
            submitter,
            drainer,
            sender,
            accepted: 0,
            transmitted: 0,
        }
    }
}

impl Role for FairwayClient {
    const STALLS: StallRule = StallRule::Turns;

    fn burst(&mut self, flow: u16, seq: u64, k: u64, now: u64) -> (u64, bool) {
        let room = (self.submitter.room() as u64).min(k);
        let mut taken = 0;
        for j in 0..room {
            if self
                .submitter
                .submit_quiet(Datagram::new(flow, seq + j, now))
                .is_err()
            {
                break;
            }
            taken += 1;
        }
        self.accepted += taken;
        if room > 0 {
            self.submitter.kick();
        }
        let n = self.drainer.drain(&mut self.sender) as u64;
        self.transmitted += n;
        (taken, room > 0 || n > 0)
    }

    fn offer(&mut self, d: Datagram) -> bool {
        let ok = self.submitter.submit(d).is_ok();
        self.accepted += u64::from(ok);
        ok
    }

    fn poll_grants(&mut self) -> bool {
        if self.transmitted < self.accepted {
            // Granted soon: poll the grant index every Δ_C.
            self.transmitted += self.drainer.drain(&mut self.sender) as u64;
            true
        } else {
            false
        }
    }

    fn finish(mut self, _offered: u64, stall_ns: u64) -> ClientOutcome {
        // Transmit what is still granted, for a bounded time.
        let grace_end = monotonic_ns() + GRACE_NS;
        while self.transmitted < self.accepted && monotonic_ns() < grace_end && !interrupted() {
            let n = self.drainer.drain_now(&mut self.sender) as u64;
            self.transmitted += n;
            if n == 0 {
                std::thread::yield_now();
            }
        }
        let left = self.accepted - self.transmitted;
        ClientOutcome::sent_by(&mut self.sender, self.accepted, left, stall_ns)
    }
}

/// Only submits (`fairway-dispatch`): the arbiter thread transmits its
/// granted packets, so what it sent and left queued is filled in from the
/// dispatcher once that stopped.
pub(super) struct SubmittingClient(pub(super) ClientSubmitter<Datagram>);

impl Role for SubmittingClient {
    const STALLS: StallRule = StallRule::Lateness;

    fn burst(&mut self, flow: u16, seq: u64, k: u64, now: u64) -> (u64, bool) {
        let room = (self.0.room() as u64).min(k);
        let mut taken = 0;
        for j in 0..room {
            if self
                .0
                .submit_quiet(Datagram::new(flow, seq + j, now))
                .is_err()
            {
                break;
            }
            taken += 1;
        }
        if taken > 0 {
            self.0.kick();
        }
        // Nothing taken: the queue is full, the dispatcher is behind.
        (taken, taken > 0)
    }

    fn offer(&mut self, d: Datagram) -> bool {
        self.0.submit(d).is_ok()
    }

    fn finish(self, offered: u64, stall_ns: u64) -> ClientOutcome {
        ClientOutcome {
            offered,
            counters: SendCounters::default(),
            delays: None,
            call_delays: None,
            left_queued: offered,
            stall_ns,
        }
    }
}
