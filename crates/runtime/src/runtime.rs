//! Putting it together (seed 001 §3, Fig. 2): a builder that creates one
//! [`Client`] per client queue, then starts the arbiter thread; the
//! [`Client`] API (`submit` + `kick_arbiter`, `drain` at most every Δ_C);
//! and the handle that stops the arbiter.

use crate::accounts::{ClientLedger, RuntimeAccounts};
use crate::affinity::MAX_RT_PRIORITY;
use crate::arbiter::{Arbiter, ArbiterParts, ArbiterStats, ScanGapWindow, ScanResult};
use crate::backend::Backend;
use crate::clock::MonotonicClock;
use crate::dispatch::{Dispatch, DispatchingHandle};
use crate::link::{EmulatedLink, MIN_RATE_BPS};
use crate::mailbox::{
    client_queue, ClientQueue, QueueDrainer, QueuePusher, QueueReader, MAX_QUEUE_LEN,
};
use crate::wakeup::{ClientScanTarget, KickMode, LockedCore, ScanCore, Wakeup};
use fairway_core::{Capacity, ConfigError, FlowConfig, FlowId, Limits, Packet, Scheduler};
use std::fmt;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Whether the arbiter may sleep (§3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArbiterMode {
    /// Spin on `do_scan` forever: lowest latency, one core always busy.
    BusyPoll,
    /// Sleep until `link_idle` when the link is busy, block when all queues
    /// are empty (Fig. 4); clients kick it as `RuntimeConfig::kick` says.
    Sleep,
}

/// Runtime parameters.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeConfig {
    /// Emulated link rate, bits/s (B of §3).
    pub rate_bps: u64,
    /// Δ_A: the arbiter scans the client queues at most this often.
    pub delta_a: Duration,
    /// Δ_C: a client reads the grant index at most this often in `drain`.
    pub delta_c: Duration,
    /// Busy-poll or sleep.
    pub mode: ArbiterMode,
    /// How clients wake a sleeping arbiter.
    pub kick: KickMode,
    /// Minimum time the arbiter stays awake after a wake-up (§3.1: 20..50 µs).
    pub min_awake: Duration,
    /// CPU to pin the arbiter thread to, if any.
    pub arbiter_cpu: Option<usize>,
    /// Run the arbiter thread under `SCHED_FIFO` at this priority (1..=99),
    /// so other processes cannot preempt it; `None`: normal scheduling.
    /// Needs `CAP_SYS_NICE`; see [`crate::set_realtime_priority`].
    pub realtime_priority: Option<u8>,
}

impl Default for RuntimeConfig {
    /// 10 Gbit/s, Δ_A = Δ_C = 1 µs (§5.2), busy-polling, notify kicks,
    /// 20 µs minimum awake time.
    fn default() -> Self {
        Self {
            rate_bps: 10_000_000_000,
            delta_a: Duration::from_micros(1),
            delta_c: Duration::from_micros(1),
            mode: ArbiterMode::BusyPoll,
            kick: KickMode::Notify,
            min_awake: Duration::from_micros(20),
            arbiter_cpu: None,
            realtime_priority: None,
        }
    }
}

/// One client: its scheduler flow and its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// The flow's weight in the scheduler.
    pub weight: u32,
    /// Largest packet the client submits, bytes.
    pub max_len: u32,
    /// Packets the client queue holds (rounded up to a power of two minus one).
    pub queue_len: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            weight: 1,
            max_len: 1514,
            queue_len: 1023,
        }
    }
}

/// Errors building or running the runtime.
#[derive(Debug)]
pub enum RuntimeError {
    /// Link rate below [`MIN_RATE_BPS`].
    RateTooLow(u64),
    /// `queue_len` outside `1..MAX_QUEUE_LEN`.
    BadQueueLen(usize),
    /// The scheduler refused a client's flow configuration.
    Flow {
        /// The client (= flow) index.
        client: usize,
        /// Why.
        error: ConfigError,
    },
    /// More clients than flow ids.
    TooManyClients,
    /// `KickMode::ClientScan` lets clients run the scheduler, so it must be
    /// `Send`: use [`RuntimeBuilder::spawn_send`].
    ClientScanNeedsSendScheduler,
    /// The arbiter thread could not be started, or panicked.
    Thread(String),
    /// Pinning a thread failed.
    Affinity(std::io::Error),
    /// `realtime_priority` outside 1..=99.
    BadPriority(u8),
    /// The arbiter thread could not get its real-time priority.
    Realtime(std::io::Error),
    /// A duration (`parameter`: `delta_a`, `delta_c` or `min_awake`) above
    /// [`MAX_DURATION_NS`] (`2^64 − 1` ns, about 584 years), the range the
    /// runtime's nanosecond clock counts.
    DurationTooLong {
        /// Which field of [`RuntimeConfig`].
        parameter: &'static str,
        /// The value given, in nanoseconds.
        nanos: u128,
    },
    /// Adding this client would make the clients' queues hold more than
    /// [`MAX_TOTAL_QUEUE_LEN`] packets in all, more than the scheduler
    /// behind them can hold (so it could no longer promise never to refuse
    /// a packet). The client was not added.
    TotalQueueLenTooLarge {
        /// The total the client would make, in packets.
        total: u64,
    },
    /// [`ArbiterHandle::pause`] with the client-scan kick: the clients may
    /// run the stopped arbiter's scheduler themselves, so it cannot be
    /// handed to another one.
    PauseNeedsNotifyKick,
}

/// Largest `delta_a`, `delta_c` and `min_awake`, in nanoseconds.
pub const MAX_DURATION_NS: u64 = u64::MAX;

/// Largest total length of all client queues, in packets: the scheduler's
/// [`Capacity::max_packets`] is a `u32`.
pub const MAX_TOTAL_QUEUE_LEN: u64 = u32::MAX as u64;

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::RateTooLow(r) => {
                write!(f, "link rate {r} bit/s is below the minimum {MIN_RATE_BPS}")
            }
            RuntimeError::BadQueueLen(n) => {
                write!(f, "queue length {n} outside 1..{MAX_QUEUE_LEN}")
            }
            RuntimeError::Flow { client, error } => write!(f, "client {client}: {error}"),
            RuntimeError::TooManyClients => write!(f, "too many clients"),
            RuntimeError::ClientScanNeedsSendScheduler => write!(
                f,
                "the client-scan kick needs a Send scheduler (RuntimeBuilder::spawn_send)"
            ),
            RuntimeError::Thread(m) => write!(f, "arbiter thread: {m}"),
            RuntimeError::Affinity(e) => write!(f, "cannot pin thread: {e}"),
            RuntimeError::BadPriority(p) => {
                write!(f, "real-time priority {p} outside 1..={MAX_RT_PRIORITY}")
            }
            RuntimeError::Realtime(e) => write!(
                f,
                "cannot give the arbiter real-time priority: {e} (needs CAP_SYS_NICE, e.g. root)"
            ),
            RuntimeError::DurationTooLong { parameter, nanos } => write!(
                f,
                "{parameter} of {nanos} ns is outside 0..={MAX_DURATION_NS} ns"
            ),
            RuntimeError::TotalQueueLenTooLarge { total } => write!(
                f,
                "total client queue length {total} packets is outside 0..={MAX_TOTAL_QUEUE_LEN}"
            ),
            RuntimeError::PauseNeedsNotifyKick => write!(
                f,
                "an arbiter started with the client-scan kick cannot be paused or restarted"
            ),
        }
    }
}

impl std::error::Error for RuntimeError {}

/// Why a submit failed; the packet is handed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitErrorKind {
    /// The client queue is full (backpressure): drain, then retry.
    Full,
    /// Zero-length packet (0 marks an empty slot).
    EmptyPacket,
    /// Longer than the client's `max_len`.
    TooLong {
        /// The packet's length.
        len: u32,
        /// The client's maximum.
        max_len: u32,
    },
}

/// A refused submit: why, and the packet, untouched.
#[derive(Debug, PartialEq, Eq)]
pub struct SubmitError<P> {
    /// Why.
    pub kind: SubmitErrorKind,
    /// The packet, back to the caller.
    pub packet: P,
}

impl<P> fmt::Display for SubmitError<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SubmitErrorKind::Full => write!(f, "client queue full"),
            SubmitErrorKind::EmptyPacket => write!(f, "zero-length packet"),
            SubmitErrorKind::TooLong { len, max_len } => {
                write!(
                    f,
                    "packet of {len} bytes exceeds the client's max {max_len}"
                )
            }
        }
    }
}

/// Per-client counters. At any time
/// `offered = accepted + rejected_full + rejected_invalid`,
/// `accepted = granted + queued`, where `queued` = accepted, not yet granted
/// (as last seen by the client), and
/// `granted ≥ transmitted + send_failed` (the rest: granted, not drained).
/// The runtime keeps the same counts where they outlive the client
/// ([`ArbiterHandle::accounts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Every `submit` call.
    pub offered: u64,
    /// Submits that entered the queue.
    pub accepted: u64,
    /// Refused because the queue was full.
    pub rejected_full: u64,
    /// Refused because of a bad length.
    pub rejected_invalid: u64,
    /// Grants seen by the client.
    pub granted: u64,
    /// Packets the back-end sent.
    pub transmitted: u64,
    /// Granted packets the back-end failed to send
    /// ([`Backend::try_transmit`] returned an error): dropped, counted.
    pub send_failed: u64,
    /// Accepted, not yet granted (as last seen).
    pub queued: u64,
}

enum Kicker {
    None,
    Notify(Arc<Wakeup>),
    ClientScan(Arc<Wakeup>, u64),
}

/// A client: submits packets of its flow and transmits them once granted.
/// Dropping it tells the arbiter to reclaim its share. [`Client::split`]
/// separates the submitting half from the draining half, so that a
/// dispatcher thread can transmit for one or more clients (seed 001 §3:
/// "clients or dispatcher threads").
/// # Examples
///
/// ```
/// use fairway_core::Drr;
/// use fairway_runtime::{ClientConfig, CountingBackend, RuntimeBuilder, RuntimeConfig};
///
/// let mut b = RuntimeBuilder::new(RuntimeConfig::default()).unwrap();
/// let cfg = ClientConfig { queue_len: 4, ..ClientConfig::default() };
/// let mut client = b.add_client::<u32>(cfg).unwrap();
/// let arbiter = b.spawn_send(|cap, lim| Box::new(Drr::<u32>::with_options(cap, lim, None))).unwrap();
/// // Submit hands a packet to the arbiter; a full queue hands it back.
/// let mut accepted = 0;
/// for len in [100, 200, 300, 400, 500, 600] {
///     match client.submit(len) {
///         Ok(()) => accepted += 1,
///         Err(e) => assert_eq!(e.packet, len),
///     }
/// }
/// // Drain transmits, through a back-end, what the arbiter granted.
/// let mut tx = CountingBackend::default();
/// while tx.packets < accepted {
///     client.drain_now(&mut tx);
/// }
/// arbiter.stop().unwrap();
/// ```
pub struct Client<P> {
    submit: ClientSubmitter<P>,
    drain: ClientDrainer<P>,
}

/// The submitting half of a [`Client`].
pub struct ClientSubmitter<P> {
    push: QueuePusher<P>,
    kicker: Kicker,
    clock: MonotonicClock,
    max_len: u32,
    stats: ClientStats,
    index: usize,
    ledger: Arc<ClientLedger>,
}

/// The draining half of a [`Client`]: what a dispatcher thread holds.
pub struct ClientDrainer<P> {
    drain: QueueDrainer<P>,
    clock: MonotonicClock,
    delta_c_ns: u64,
    next_check_ns: u64,
    stats: ClientStats,
    index: usize,
    ledger: Arc<ClientLedger>,
}

impl<P: Packet> Client<P> {
    /// This client's index (= its scheduler flow id).
    pub fn index(&self) -> usize {
        self.submit.index
    }

    /// The clock shared with the arbiter (for timestamps).
    pub fn clock(&self) -> &MonotonicClock {
        &self.submit.clock
    }

    /// Submits one packet and kicks the arbiter if needed (Fig. 3 `submit`).
    #[inline]
    pub fn submit(&mut self, packet: P) -> Result<(), SubmitError<P>> {
        self.submit.submit(packet)
    }

    /// Submits without kicking: call [`Client::kick`] after a burst.
    #[inline]
    pub fn submit_quiet(&mut self, packet: P) -> Result<(), SubmitError<P>> {
        self.submit.submit_quiet(packet)
    }

    /// `kick_arbiter()` of Fig. 4, in the configured variant; a no-op when
    /// the arbiter busy-polls.
    #[inline]
    pub fn kick(&self) {
        self.submit.kick()
    }

    /// Transmits the granted packets through `backend`, reading the grant
    /// index at most once every Δ_C. Returns the packets transmitted.
    #[inline]
    pub fn drain<B: Backend<P>>(&mut self, backend: &mut B) -> usize {
        self.drain.drain(backend)
    }

    /// [`Client::drain`] with the time supplied by the caller (a value of
    /// [`Client::clock`] it has just read), so a client loop that already
    /// reads the clock does not pay for a second read (a TSC read costs
    /// 20–25 ns on a VM, as much as a whole packet).
    #[inline]
    pub fn drain_at<B: Backend<P>>(&mut self, now_ns: u64, backend: &mut B) -> usize {
        self.drain.drain_at(now_ns, backend)
    }

    /// [`Client::drain`] ignoring Δ_C.
    #[inline]
    pub fn drain_now<B: Backend<P>>(&mut self, backend: &mut B) -> usize {
        self.drain.drain_now(backend)
    }

    /// Packets submitted and not yet transmitted.
    pub fn in_flight(&self) -> usize {
        self.submit
            .push
            .pushed()
            .wrapping_sub(self.drain.drain.drained())
    }

    /// Packets `submit` would accept right now.
    pub fn room(&self) -> usize {
        self.submit.push.capacity() - self.in_flight()
    }

    /// The counters, with the grant index read now.
    pub fn stats(&self) -> ClientStats {
        let (a, b) = (self.submit.stats(), self.drain.stats());
        let mut s = ClientStats {
            granted: b.granted,
            transmitted: b.transmitted,
            send_failed: b.send_failed,
            ..a
        };
        s.queued = s.accepted - s.granted;
        s
    }

    /// The two halves: submit on one thread, drain (transmit) on another,
    /// e.g. a dispatcher thread serving several clients. The arbiter
    /// reclaims the client once both halves are dropped.
    pub fn split(self) -> (ClientSubmitter<P>, ClientDrainer<P>) {
        (self.submit, self.drain)
    }
}

impl<P: Packet> ClientSubmitter<P> {
    /// This client's index (= its scheduler flow id).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The clock shared with the arbiter (for timestamps).
    pub fn clock(&self) -> &MonotonicClock {
        &self.clock
    }

    /// Submits one packet and kicks the arbiter if needed (Fig. 3 `submit`).
    #[inline]
    pub fn submit(&mut self, packet: P) -> Result<(), SubmitError<P>> {
        self.submit_quiet(packet)?;
        self.kick();
        Ok(())
    }

    /// Submits without kicking: call [`ClientSubmitter::kick`] after a burst.
    #[inline]
    pub fn submit_quiet(&mut self, packet: P) -> Result<(), SubmitError<P>> {
        self.stats.offered += 1;
        // Published before the packet can reach the arbiter, so the
        // runtime's accounts never see it granted before it is offered.
        ClientLedger::set(&self.ledger.submit.offered, self.stats.offered);
        let len = packet.len();
        let kind = if len == 0 {
            SubmitErrorKind::EmptyPacket
        } else if len > self.max_len {
            SubmitErrorKind::TooLong {
                len,
                max_len: self.max_len,
            }
        } else {
            match self.push.try_push(len, packet) {
                Ok(()) => {
                    self.stats.accepted += 1;
                    return Ok(());
                }
                Err(packet) => {
                    self.stats.rejected_full += 1;
                    self.publish_rejected();
                    return Err(SubmitError {
                        kind: SubmitErrorKind::Full,
                        packet,
                    });
                }
            }
        };
        self.stats.rejected_invalid += 1;
        self.publish_rejected();
        Err(SubmitError { kind, packet })
    }

    fn publish_rejected(&self) {
        let rejected = self.stats.rejected_full + self.stats.rejected_invalid;
        ClientLedger::set(&self.ledger.submit.rejected, rejected);
    }

    /// `kick_arbiter()` of Fig. 4, in the configured variant; a no-op when
    /// the arbiter busy-polls.
    #[inline]
    pub fn kick(&self) {
        match &self.kicker {
            Kicker::None => {}
            Kicker::Notify(w) => w.kick_notify(),
            Kicker::ClientScan(w, run_for) => match w.scan_target.get() {
                Some(t) => t.kick_and_scan(w, *run_for),
                None => w.kick_notify(),
            },
        }
    }

    /// Packets `submit` would accept right now (reads the drain half's
    /// progress).
    pub fn room(&mut self) -> usize {
        self.push.room()
    }

    /// The submit-side counters (`offered`, `accepted`, `rejected_*`).
    pub fn stats(&self) -> ClientStats {
        self.stats
    }
}

impl<P: Packet> ClientDrainer<P> {
    /// The client's index (= its scheduler flow id).
    pub fn index(&self) -> usize {
        self.index
    }

    /// Transmits the granted packets through `backend`, reading the grant
    /// index at most once every Δ_C. Returns the packets transmitted.
    #[inline]
    pub fn drain<B: Backend<P>>(&mut self, backend: &mut B) -> usize {
        if self.delta_c_ns == 0 {
            return self.drain_now(backend);
        }
        let now = self.clock.now_ns();
        self.drain_at(now, backend)
    }

    /// [`ClientDrainer::drain`] with the time supplied by the caller.
    #[inline]
    pub fn drain_at<B: Backend<P>>(&mut self, now_ns: u64, backend: &mut B) -> usize {
        if self.delta_c_ns > 0 {
            if now_ns < self.next_check_ns {
                return 0;
            }
            self.next_check_ns = now_ns + self.delta_c_ns;
        }
        self.drain_now(backend)
    }

    /// [`ClientDrainer::drain`] ignoring Δ_C.
    #[inline]
    pub fn drain_now<B: Backend<P>>(&mut self, backend: &mut B) -> usize {
        let head = self.drain.grant_index();
        self.drain_until(head, backend)
    }

    /// [`ClientDrainer::drain_now`] transmitting at most `max` packets (the
    /// oldest granted), leaving the rest granted for the next call: a
    /// dispatcher serving several clients bounds each one's turn so that
    /// one client's backlog of grants cannot delay the others' by more
    /// than `max` packets each.
    #[inline]
    pub fn drain_at_most<B: Backend<P>>(&mut self, max: usize, backend: &mut B) -> usize {
        let head = self.drain.grant_index();
        let head = if self.drain.granted_since(head) > max {
            self.drain.drained().wrapping_add(max)
        } else {
            head
        };
        self.drain_until(head, backend)
    }

    #[inline]
    fn drain_until<B: Backend<P>>(&mut self, head: usize, backend: &mut B) -> usize {
        let mut failed = 0u64;
        let n = self.drain.drain_to(head, |p| {
            if backend.try_transmit(p).is_err() {
                failed += 1;
            }
        });
        if n > 0 {
            backend.flush();
            self.stats.granted += n as u64;
            self.stats.transmitted += n as u64 - failed;
            ClientLedger::set(&self.ledger.drain.transmitted, self.stats.transmitted);
            if failed > 0 {
                self.stats.send_failed += failed;
                ClientLedger::set(&self.ledger.drain.send_failed, self.stats.send_failed);
            }
        }
        n
    }

    /// The drain-side counters (`granted`, counting grants not yet drained
    /// as of now, and `transmitted`).
    pub fn stats(&self) -> ClientStats {
        let mut s = self.stats;
        s.granted += self.drain.granted_since(self.drain.grant_index()) as u64;
        s
    }
}

/// The arbiter plus its clock: what the sleep/kick protocol drives.
pub(crate) struct ClockedArbiter<S: ?Sized> {
    clock: MonotonicClock,
    /// When the previous round ran, ns; 0 after a sleep or a block, whose
    /// length is the arbiter's choice and not a missed Δ_A.
    last_scan_ns: u64,
    arbiter: Arbiter<S>,
}

impl<S: Scheduler<u32> + ?Sized> ScanCore for ClockedArbiter<S> {
    #[inline]
    fn scan(&mut self, forced: bool) -> ScanResult {
        if forced {
            self.arbiter.force_scan();
        }
        let now = self.clock.now_ns();
        if self.last_scan_ns != 0 {
            self.arbiter
                .record_round_gap(now.saturating_sub(self.last_scan_ns));
        }
        self.last_scan_ns = now;
        self.arbiter.do_scan(now)
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }
    fn link_idle_ns(&self) -> u64 {
        self.arbiter.link_idle_ns()
    }
    fn count_sleep(&mut self, blocked: bool) {
        self.last_scan_ns = 0;
        if blocked {
            self.arbiter.stats.blocks += 1;
        } else {
            self.arbiter.stats.timed_sleeps += 1;
        }
    }
    fn count_client_scan(&mut self) {
        self.arbiter.stats.client_scans += 1;
    }
}

impl<S: Scheduler<u32> + Send + ?Sized> ClientScanTarget for LockedCore<ClockedArbiter<S>> {
    fn kick_and_scan(&self, wake: &Wakeup, run_for_ns: u64) {
        wake.kick_client_scan(self, run_for_ns);
    }
}

/// Builds a runtime: add clients, then start the arbiter.
/// # Examples
///
/// ```
/// use fairway_core::Qfq;
/// use fairway_runtime::{ClientConfig, CountingBackend, RuntimeBuilder, RuntimeConfig};
///
/// let mut b = RuntimeBuilder::new(RuntimeConfig::default()).unwrap();
/// // One client (flow) of weight 4 and one of weight 1.
/// let heavy = ClientConfig { weight: 4, ..ClientConfig::default() };
/// let mut c0 = b.add_client::<u32>(heavy).unwrap();
/// let mut c1 = b.add_client::<u32>(ClientConfig::default()).unwrap();
/// // The scheduler is built for the capacity the clients need.
/// let arbiter = b.spawn_send(|cap, lim| Box::new(Qfq::<u32>::with_limits(cap, lim))).unwrap();
/// c0.submit(1000).unwrap();
/// c1.submit(500).unwrap();
/// let (mut tx0, mut tx1) = (CountingBackend::default(), CountingBackend::default());
/// while tx0.packets + tx1.packets < 2 {
///     c0.drain_now(&mut tx0);
///     c1.drain_now(&mut tx1);
/// }
/// assert_eq!((tx0.bytes, tx1.bytes), (1000, 500));
/// let stats = arbiter.stop().unwrap();
/// assert_eq!(stats.decisions, 2);
/// ```
pub struct RuntimeBuilder {
    cfg: RuntimeConfig,
    link: EmulatedLink,
    wake: Arc<Wakeup>,
    clock: MonotonicClock,
    readers: Vec<QueueReader>,
    flows: Vec<FlowConfig>,
    ledgers: Vec<Arc<ClientLedger>>,
    max_packets: u64,
}

impl RuntimeBuilder {
    /// Validates the configuration.
    pub fn new(cfg: RuntimeConfig) -> Result<Self, RuntimeError> {
        if let Some(p) = cfg.realtime_priority {
            if p == 0 || p > MAX_RT_PRIORITY {
                return Err(RuntimeError::BadPriority(p));
            }
        }
        for (parameter, d) in [
            ("delta_a", cfg.delta_a),
            ("delta_c", cfg.delta_c),
            ("min_awake", cfg.min_awake),
        ] {
            if d.as_nanos() > u128::from(MAX_DURATION_NS) {
                return Err(RuntimeError::DurationTooLong {
                    parameter,
                    nanos: d.as_nanos(),
                });
            }
        }
        let link = EmulatedLink::new(cfg.rate_bps).ok_or(RuntimeError::RateTooLow(cfg.rate_bps))?;
        Ok(Self {
            link,
            wake: Arc::new(Wakeup::new()),
            clock: MonotonicClock::new(),
            readers: Vec::new(),
            flows: Vec::new(),
            ledgers: Vec::new(),
            max_packets: 0,
            cfg,
        })
    }

    /// Adds a client: flow `FlowId(i)` for the i-th call.
    pub fn add_client<P: Packet>(&mut self, c: ClientConfig) -> Result<Client<P>, RuntimeError> {
        if c.queue_len == 0 || c.queue_len >= MAX_QUEUE_LEN {
            return Err(RuntimeError::BadQueueLen(c.queue_len));
        }
        let index = self.readers.len();
        if index >= u32::MAX as usize - 1 {
            return Err(RuntimeError::TooManyClients);
        }
        let (queue, reader) = client_queue(c.queue_len);
        let total = self.max_packets + reader_capacity(&queue);
        if total > MAX_TOTAL_QUEUE_LEN {
            return Err(RuntimeError::TotalQueueLenTooLarge { total });
        }
        self.max_packets = total;
        self.readers.push(reader);
        self.flows.push(FlowConfig::new(c.weight, c.max_len));
        let ledger = Arc::new(ClientLedger::default());
        self.ledgers.push(ledger.clone());
        let kicker = match (self.cfg.mode, self.cfg.kick) {
            (ArbiterMode::BusyPoll, _) => Kicker::None,
            (ArbiterMode::Sleep, KickMode::Notify) => Kicker::Notify(self.wake.clone()),
            (ArbiterMode::Sleep, KickMode::ClientScan { run_for_ns }) => {
                Kicker::ClientScan(self.wake.clone(), run_for_ns)
            }
        };
        let (push, drain) = queue.split();
        Ok(Client {
            submit: ClientSubmitter {
                push,
                kicker,
                clock: self.clock.clone(),
                max_len: c.max_len,
                stats: ClientStats::default(),
                index,
                ledger: ledger.clone(),
            },
            drain: ClientDrainer {
                drain,
                clock: self.clock.clone(),
                delta_c_ns: nanos(self.cfg.delta_c),
                next_check_ns: 0,
                stats: ClientStats::default(),
                index,
                ledger,
            },
        })
    }

    /// The scheduler capacity the arbiter needs: one flow per client, and
    /// room for every client queue at once (so the scheduler never refuses).
    /// Exact: [`Self::add_client`] refuses a client that would take the
    /// total past [`MAX_TOTAL_QUEUE_LEN`], and the client count stays below
    /// `u32::MAX - 1`.
    pub fn capacity(&self) -> Capacity {
        Capacity::new(self.readers.len() as u32, self.max_packets as u32)
    }

    /// The clock clients and arbiter share.
    pub fn clock(&self) -> &MonotonicClock {
        &self.clock
    }

    /// Starts the arbiter thread; `make_scheduler` runs on that thread, so
    /// the scheduler need not be `Send` (e.g. `SchedSpec::build`). Not
    /// available with `KickMode::ClientScan` in `Sleep` mode.
    pub fn spawn<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, RuntimeError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
    {
        self.into_start().spawn(make_scheduler).map_err(|(e, _)| e)
    }

    /// Starts the arbiter thread, as [`RuntimeBuilder::spawn`], and makes
    /// it the dispatcher too: it calls `dispatch` after every scan
    /// (seed 001 §3; see [`crate::dispatch`]). `dispatch` usually owns the
    /// clients' [`ClientDrainer`]s; [`DispatchingHandle::stop`] hands it
    /// back.
    pub fn spawn_dispatching<S, F, D>(
        self,
        make_scheduler: F,
        dispatch: D,
    ) -> Result<DispatchingHandle<D>, RuntimeError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
        D: Dispatch + 'static,
    {
        let (tx, back) = std::sync::mpsc::channel();
        let arbiter = self
            .into_start()
            .spawn_with(make_scheduler, dispatch, Some(tx))
            .map_err(|(e, _)| e)?;
        Ok(DispatchingHandle { arbiter, back })
    }

    /// Starts the arbiter thread with a `Send` scheduler built here; every
    /// mode and kick variant is available.
    pub fn spawn_send<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, RuntimeError>
    where
        S: Scheduler<u32> + Send + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S>,
    {
        self.into_start()
            .spawn_send(make_scheduler)
            .map_err(|(e, _)| e)
    }

    fn into_start(self) -> Start {
        let cap = self.capacity();
        Start {
            cfg: self.cfg,
            wake: self.wake,
            clock: self.clock,
            flows: self.flows,
            cap,
            parts: ArbiterParts::fresh(self.readers, self.link, self.ledgers),
        }
    }
}

/// `d` in nanoseconds; [`RuntimeBuilder::new`] checked that it fits in a
/// `u64` ([`MAX_DURATION_NS`]), so nothing is truncated.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(MAX_DURATION_NS)
}

fn reader_capacity<P>(q: &ClientQueue<P>) -> u64 {
    q.capacity() as u64
}

/// Everything an arbiter thread starts from: a new runtime's, or a paused
/// one's (then `parts` carries the client queues' cursors and backlog).
struct Start {
    cfg: RuntimeConfig,
    wake: Arc<Wakeup>,
    clock: MonotonicClock,
    flows: Vec<FlowConfig>,
    cap: Capacity,
    parts: ArbiterParts,
}

/// What the arbiter thread hands back when it ends: its counters, and the
/// parts a restart continues from (`None` only if they could not be taken
/// back, see [`ArbiterHandle::pause`]).
struct Stopped {
    stats: ArbiterStats,
    parts: Option<ArbiterParts>,
}

/// What a failed start hands back: the error, and the start (so a failed
/// restart loses nothing) unless the thread lost it.
type StartError = (RuntimeError, Option<Box<Start>>);

/// What [`ArbiterHandle`] keeps to pause and restart the arbiter.
struct Kept {
    cfg: RuntimeConfig,
    clock: MonotonicClock,
    flows: Vec<FlowConfig>,
    cap: Capacity,
    ledgers: Vec<Arc<ClientLedger>>,
    round_gap: ScanGapWindow,
}

impl Start {
    fn kept(&self) -> Kept {
        Kept {
            cfg: self.cfg,
            clock: self.clock.clone(),
            flows: self.flows.clone(),
            cap: self.cap,
            ledgers: self.parts.ledgers.clone(),
            round_gap: ScanGapWindow(self.parts.round_gap.clone()),
        }
    }

    fn spawn<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, StartError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
    {
        self.spawn_with(make_scheduler, (), None)
    }

    /// [`Start::spawn`] with a dispatcher the arbiter thread calls after
    /// every scan, sent back through `back` when the thread ends.
    fn spawn_with<S, F, D>(
        self,
        make_scheduler: F,
        mut dispatch: D,
        back: Option<std::sync::mpsc::Sender<D>>,
    ) -> Result<ArbiterHandle, StartError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
        D: Dispatch + 'static,
    {
        if self.cfg.mode == ArbiterMode::Sleep
            && matches!(self.cfg.kick, KickMode::ClientScan { .. })
        {
            return Err((
                RuntimeError::ClientScanNeedsSendScheduler,
                Some(Box::new(self)),
            ));
        }
        let kept = self.kept();
        let Start {
            cfg,
            wake,
            clock,
            flows,
            cap,
            parts,
        } = self;
        wake.clear_stop();
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), RuntimeError>>();
        let wake2 = wake.clone();
        let thread = std::thread::Builder::new()
            .name("fairway-arbiter".into())
            .spawn(move || {
                let failed = |parts: ArbiterParts| Stopped {
                    stats: parts.stats,
                    parts: Some(parts),
                };
                if let Err(e) = realtime(&cfg) {
                    let _ = tx.send(Err(e));
                    return failed(parts);
                }
                // A panicking constructor must not take the client queues
                // with it: they go back to the caller with the error.
                let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    make_scheduler(cap, Limits::default())
                }));
                let Ok(sched) = made else {
                    let _ = tx.send(Err(RuntimeError::Thread(
                        "the scheduler constructor panicked".into(),
                    )));
                    return failed(parts);
                };
                let core = match prepare(&cfg, sched, flows, parts, clock) {
                    Ok(c) => c,
                    Err(failure) => {
                        let (e, parts) = *failure;
                        let _ = tx.send(Err(e));
                        return failed(parts);
                    }
                };
                let _ = tx.send(Ok(()));
                run_arbiter_shared(&cfg, &wake2, &core, &mut dispatch);
                if let Some(back) = back {
                    let _ = back.send(dispatch);
                }
                let parts = core.into_inner().arbiter.into_parts();
                Stopped {
                    stats: parts.stats,
                    parts: Some(parts),
                }
            });
        match thread {
            Ok(thread) => finish_spawn(rx, thread, wake, kept),
            Err(e) => Err((RuntimeError::Thread(e.to_string()), None)),
        }
    }

    fn spawn_send<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, StartError>
    where
        S: Scheduler<u32> + Send + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S>,
    {
        let kept = self.kept();
        let Start {
            cfg,
            wake,
            clock,
            flows,
            cap,
            parts,
        } = self;
        let sched = make_scheduler(cap, Limits::default());
        let core = match prepare(&cfg, sched, flows.clone(), parts, clock.clone()) {
            Ok(c) => Arc::new(c),
            Err(failure) => {
                let (e, parts) = *failure;
                let start = Start {
                    cfg,
                    wake,
                    clock,
                    flows,
                    cap,
                    parts,
                };
                return Err((e, Some(Box::new(start))));
            }
        };
        if cfg.mode == ArbiterMode::Sleep && matches!(cfg.kick, KickMode::ClientScan { .. }) {
            let target: Arc<dyn ClientScanTarget> = core.clone();
            let _ = wake.scan_target.set(target);
        }
        wake.clear_stop();
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), RuntimeError>>();
        let wake2 = wake.clone();
        let thread = std::thread::Builder::new()
            .name("fairway-arbiter".into())
            .spawn(move || {
                if let Err(e) = realtime(&cfg) {
                    let _ = tx.send(Err(e));
                    return finish_shared(core);
                }
                let _ = tx.send(Ok(()));
                run_arbiter_shared(&cfg, &wake2, &core, &mut ());
                finish_shared(core)
            });
        match thread {
            Ok(thread) => finish_spawn(rx, thread, wake, kept),
            Err(e) => Err((RuntimeError::Thread(e.to_string()), None)),
        }
    }
}

/// The end of a `spawn_send` arbiter thread: the parts come back unless the
/// clients still share the core (client-scan kick).
fn finish_shared<S: Scheduler<u32> + ?Sized>(core: Arc<LockedCore<ClockedArbiter<S>>>) -> Stopped {
    match Arc::try_unwrap(core) {
        Ok(core) => {
            let parts = core.into_inner().arbiter.into_parts();
            Stopped {
                stats: parts.stats,
                parts: Some(parts),
            }
        }
        Err(core) => {
            core.lock();
            let stats = core.with(|c| c.arbiter.stats());
            core.unlock();
            Stopped { stats, parts: None }
        }
    }
}

/// Adds the live clients' flows to `sched` and builds the arbiter from
/// `parts`; on a refused flow, hands `parts` back untouched.
fn prepare<S: Scheduler<u32> + ?Sized>(
    cfg: &RuntimeConfig,
    mut sched: Box<S>,
    flows: Vec<FlowConfig>,
    mut parts: ArbiterParts,
    clock: MonotonicClock,
) -> Result<LockedCore<ClockedArbiter<S>>, Box<(RuntimeError, ArbiterParts)>> {
    for (i, f) in flows.into_iter().enumerate() {
        if !parts.clients[i].live {
            continue; // departed: its share was reclaimed
        }
        if let Err(error) = sched.add_flow(FlowId(i as u32), f) {
            return Err(Box::new((RuntimeError::Flow { client: i, error }, parts)));
        }
    }
    // Start idle now, not at the epoch (or the pause): no catch-up burst.
    parts.link.set_idle_at(clock.now_ns());
    let arbiter = Arbiter::from_parts(sched, parts, nanos(cfg.delta_a));
    Ok(LockedCore::new(ClockedArbiter {
        clock,
        last_scan_ns: 0,
        arbiter,
    }))
}

/// Gives the calling (arbiter) thread the configured real-time priority.
fn realtime(cfg: &RuntimeConfig) -> Result<(), RuntimeError> {
    match cfg.realtime_priority {
        Some(p) => crate::affinity::set_realtime_priority(p).map_err(RuntimeError::Realtime),
        None => Ok(()),
    }
}

fn pin(cfg: &RuntimeConfig) {
    if let Some(cpu) = cfg.arbiter_cpu {
        // Best effort: an unpinned arbiter still works, only noisier.
        let _ = crate::affinity::pin_current_thread(cpu);
    }
}

fn run_arbiter_shared<S: Scheduler<u32> + ?Sized, D: Dispatch>(
    cfg: &RuntimeConfig,
    wake: &Wakeup,
    core: &LockedCore<ClockedArbiter<S>>,
    dispatch: &mut D,
) {
    pin(cfg);
    match cfg.mode {
        ArbiterMode::BusyPoll => wake.run_busy_dispatching(core, dispatch),
        ArbiterMode::Sleep => wake.run_sleeping_dispatching(core, nanos(cfg.min_awake), dispatch),
    }
}

fn finish_spawn(
    rx: std::sync::mpsc::Receiver<Result<(), RuntimeError>>,
    thread: JoinHandle<Stopped>,
    wake: Arc<Wakeup>,
    kept: Kept,
) -> Result<ArbiterHandle, StartError> {
    match rx.recv() {
        Ok(Ok(())) => Ok(ArbiterHandle {
            thread: Some(thread),
            wake,
            kept: Box::new(kept),
        }),
        Ok(Err(e)) => {
            let start = thread.join().ok().and_then(|s| s.parts).map(|parts| {
                Box::new(Start {
                    cfg: kept.cfg,
                    wake,
                    clock: kept.clock,
                    flows: kept.flows,
                    cap: kept.cap,
                    parts,
                })
            });
            Err((e, start))
        }
        Err(_) => Err((
            RuntimeError::Thread("arbiter thread exited during start-up".into()),
            None,
        )),
    }
}

/// The running arbiter thread. Dropping it stops the thread.
pub struct ArbiterHandle {
    thread: Option<JoinHandle<Stopped>>,
    wake: Arc<Wakeup>,
    kept: Box<Kept>,
}

impl ArbiterHandle {
    /// Stops the arbiter and returns its counters.
    pub fn stop(mut self) -> Result<ArbiterStats, RuntimeError> {
        self.wake.request_stop();
        match self.thread.take() {
            Some(t) => t
                .join()
                .map(|s| s.stats)
                .map_err(|_| RuntimeError::Thread("arbiter thread panicked".into())),
            None => Ok(ArbiterStats::default()),
        }
    }

    /// A window onto the arbiter's round gaps (also across restarts).
    pub fn scan_gap_window(&self) -> ScanGapWindow {
        self.kept.round_gap.clone()
    }

    /// Where every client's packets are, now: submitted, rejected, granted,
    /// queued, reclaimed, transmitted, failed to send. Counts of clients
    /// whose threads have ended stay here.
    pub fn accounts(&self) -> RuntimeAccounts {
        RuntimeAccounts::read(&self.kept.ledgers)
    }

    /// Stops the arbiter but keeps the client queues: the scheduler's
    /// backlog is taken back, each client's in its order, and
    /// [`PausedRuntime::spawn`] starts a new arbiter, with any scheduler,
    /// that continues from it. The clients keep running meanwhile (their
    /// submits queue up until the queue is full).
    ///
    /// Refused ([`RuntimeError::PauseNeedsNotifyKick`]), with the arbiter
    /// left running and handed back, for a sleeping arbiter with the
    /// client-scan kick: its clients may run the scheduler themselves.
    pub fn pause(mut self) -> Result<PausedRuntime, (RuntimeError, ArbiterHandle)> {
        let cfg = self.kept.cfg;
        if cfg.mode == ArbiterMode::Sleep && matches!(cfg.kick, KickMode::ClientScan { .. }) {
            return Err((RuntimeError::PauseNeedsNotifyKick, self));
        }
        self.wake.request_stop();
        let Some(thread) = self.thread.take() else {
            return Err((RuntimeError::Thread("arbiter already stopped".into()), self));
        };
        match thread.join() {
            Ok(Stopped {
                parts: Some(parts), ..
            }) => {
                let k = &self.kept;
                Ok(PausedRuntime {
                    start: Box::new(Start {
                        cfg: k.cfg,
                        wake: self.wake.clone(),
                        clock: k.clock.clone(),
                        flows: k.flows.clone(),
                        cap: k.cap,
                        parts,
                    }),
                })
            }
            Ok(Stopped { parts: None, .. }) => Err((RuntimeError::PauseNeedsNotifyKick, self)),
            Err(_) => Err((RuntimeError::Thread("arbiter thread panicked".into()), self)),
        }
    }
}

impl fmt::Debug for ArbiterHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArbiterHandle")
            .field("running", &self.thread.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for ArbiterHandle {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.wake.request_stop();
            let _ = t.join();
        }
    }
}

/// A stopped arbiter whose clients still run: holds their queues, each
/// client's packets taken but not granted (in order), and the counters, so
/// that a new arbiter, with the same or another scheduler, continues where
/// it stopped: nothing lost, nothing granted twice, each flow's order kept.
/// Dropping it drops the queues' arbiter ends (as [`ArbiterHandle::stop`]).
///
/// ```
/// use fairway_core::{Drr, Qfq};
/// use fairway_runtime::*;
///
/// let mut b = RuntimeBuilder::new(RuntimeConfig { rate_bps: 1_000_000, ..Default::default() }).unwrap();
/// let mut client = b.add_client::<u32>(ClientConfig::default()).unwrap();
/// let arbiter = b.spawn_send(|c, l| Box::new(Drr::<u32>::with_options(c, l, None))).unwrap();
/// for _ in 0..10 { client.submit(1000).unwrap(); }   // 1 Mbit/s: 8 ms each
/// let paused = arbiter.pause().map_err(|(e, _)| e).unwrap();
/// let queued = paused.backlog(0).len();               // not granted yet
/// let arbiter = paused.spawn_send(|c, l| Box::new(Qfq::<u32>::with_limits(c, l))).map_err(|e| e.error).unwrap();
/// let a = arbiter.accounts().total();
/// assert_eq!(a.submitted, a.rejected + a.granted + a.queued + a.reclaimed);
/// assert!(queued <= 10);
/// ```
pub struct PausedRuntime {
    start: Box<Start>,
}

/// A restart that failed: why, and the paused runtime to try again with
/// (`None` only if the arbiter thread could not be started at all).
#[derive(Debug)]
pub struct RestartError {
    /// Why.
    pub error: RuntimeError,
    /// The runtime, unchanged.
    pub paused: Option<PausedRuntime>,
}

impl fmt::Display for RestartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "restarting the arbiter: {}", self.error)
    }
}

impl std::error::Error for RestartError {}

impl fmt::Debug for PausedRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PausedRuntime")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl PausedRuntime {
    /// The arbiter's counters so far.
    pub fn stats(&self) -> ArbiterStats {
        self.start.parts.stats
    }

    /// Where every client's packets are (see [`ArbiterHandle::accounts`]).
    pub fn accounts(&self) -> RuntimeAccounts {
        RuntimeAccounts::read(&self.start.parts.ledgers)
    }

    /// Client `i`'s packets taken from its queue but not granted, oldest
    /// first (their lengths): what the next arbiter enqueues first.
    pub fn backlog(&self, client: usize) -> &[u32] {
        self.start
            .parts
            .backlog
            .get(client)
            .map_or(&[], Vec::as_slice)
    }

    /// Starts a new arbiter thread, as [`RuntimeBuilder::spawn`], with the
    /// backlog enqueued first.
    pub fn spawn<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, RestartError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
    {
        self.start
            .spawn(make_scheduler)
            .map_err(|(error, start)| RestartError {
                error,
                paused: start.map(|start| PausedRuntime { start }),
            })
    }

    /// Starts a new arbiter thread, as [`RuntimeBuilder::spawn_send`], with
    /// the backlog enqueued first.
    pub fn spawn_send<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, RestartError>
    where
        S: Scheduler<u32> + Send + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S>,
    {
        self.start
            .spawn_send(make_scheduler)
            .map_err(|(error, start)| RestartError {
                error,
                paused: start.map(|start| PausedRuntime { start }),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_queue_len_at_the_limit_is_exact_one_past_is_refused() {
        let mut b = RuntimeBuilder::new(RuntimeConfig::default()).unwrap();
        let one = ClientConfig::default();
        let _first = b.add_client::<u32>(one).unwrap();
        let per_client = b.max_packets;
        // Pretend earlier clients already hold all but one client's worth.
        b.max_packets = MAX_TOTAL_QUEUE_LEN - per_client;
        let _second = b.add_client::<u32>(one).unwrap();
        assert_eq!(
            b.capacity().max_packets,
            u32::MAX,
            "at the limit: used as is"
        );
        let r = b.add_client::<u32>(one);
        let want = MAX_TOTAL_QUEUE_LEN + per_client;
        assert!(matches!(r, Err(RuntimeError::TotalQueueLenTooLarge { total }) if total == want));
        // The refused client changed nothing.
        assert_eq!(b.capacity(), Capacity::new(2, u32::MAX));
    }

    /// The longest scan gap counts a round the arbiter missed (its thread
    /// did not run) but not a sleep or a block it chose.
    #[test]
    fn the_longest_scan_gap_counts_missed_rounds_not_sleeps() {
        let sched = Box::new(fairway_core::Drr::<u32>::with_options(
            Capacity::new(1, 16),
            fairway_core::Limits::default(),
            None,
        ));
        let mut core = ClockedArbiter {
            clock: MonotonicClock::new(),
            last_scan_ns: 0,
            arbiter: Arbiter::new(sched, Vec::new(), EmulatedLink::new(1_000_000).unwrap(), 0),
        };
        let longest = |c: &ClockedArbiter<_>| c.arbiter.stats().longest_scan_gap_ns;
        core.scan(false);
        assert_eq!(longest(&core), 0, "one round: no gap yet");
        // The thread misses 30 ms of rounds (as if preempted).
        std::thread::sleep(std::time::Duration::from_millis(30));
        core.scan(false);
        let missed = longest(&core);
        assert!(missed >= 30_000_000, "{missed}");
        // The owner's window saw it, and starts anew once taken.
        let window = ScanGapWindow(core.arbiter.round_gap.clone());
        assert_eq!(window.take(), missed);
        core.scan(false);
        let now = window.take();
        assert!(now < missed, "{now}");
        // A longer block by choice is not a missed round.
        core.count_sleep(true);
        std::thread::sleep(std::time::Duration::from_millis(90));
        core.scan(false);
        core.scan(false);
        assert!(longest(&core) < 90_000_000, "{}", longest(&core));
        assert!(longest(&core) >= missed);
    }
}
