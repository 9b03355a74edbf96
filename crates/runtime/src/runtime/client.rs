//! A client of the runtime (the PSPAT paper §3, Fig. 3): `submit` into its
//! queue plus `kick_arbiter`, and `drain`, at most every Δ_C, of what the
//! arbiter granted. [`Client::split`] separates the two halves.

use super::config::{ArbiterMode, RuntimeConfig};
use super::error::{SubmitError, SubmitErrorKind};
use crate::accounts::ClientLedger;
use crate::backend::Backend;
use crate::clock::MonotonicClock;
use crate::mailbox::{ClientQueue, QueueDrainer, QueuePusher};
use crate::wakeup::{KickMode, Wakeup};
use fairway_core::Packet;
use std::sync::Arc;

/// Per-client counters. At any time
/// `offered = accepted + rejected_full + rejected_invalid`,
/// `accepted = granted + queued`, where `queued` = accepted, not yet granted
/// (as last seen by the client), and
/// `granted ≥ transmitted + send_failed` (the rest: granted, not drained).
/// The runtime keeps the same counts where they outlive the client
/// ([`ArbiterHandle::accounts`](crate::ArbiterHandle::accounts)).
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

/// How a client's `kick` reaches the arbiter.
pub(super) enum Kicker {
    /// A busy-polling arbiter needs no kick.
    None,
    Notify(Arc<Wakeup>),
    ClientScan(Arc<Wakeup>, u64),
}

impl Kicker {
    /// The kick `cfg` asks for, through `wake`.
    pub(super) fn new(cfg: &RuntimeConfig, wake: &Arc<Wakeup>) -> Self {
        match (cfg.mode, cfg.kick) {
            (ArbiterMode::BusyPoll, _) => Kicker::None,
            (ArbiterMode::Sleep, KickMode::Notify) => Kicker::Notify(wake.clone()),
            (ArbiterMode::Sleep, KickMode::ClientScan { run_for_ns }) => {
                Kicker::ClientScan(wake.clone(), run_for_ns)
            }
        }
    }
}

/// A client: submits packets of its flow and transmits them once granted.
/// Dropping it tells the arbiter to reclaim its share. [`Client::split`]
/// separates the submitting half from the draining half, so that a
/// dispatcher thread can transmit for one or more clients (the PSPAT paper §3:
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
    /// Client `index` on `queue`; `ledger` is where the runtime keeps its
    /// counts.
    pub(super) fn new(
        queue: ClientQueue<P>,
        kicker: Kicker,
        clock: &MonotonicClock,
        max_len: u32,
        delta_c_ns: u64,
        index: usize,
        ledger: Arc<ClientLedger>,
    ) -> Self {
        let (push, drain) = queue.split();
        Client {
            submit: ClientSubmitter {
                push,
                kicker,
                clock: clock.clone(),
                max_len,
                stats: ClientStats::default(),
                index,
                ledger: ledger.clone(),
            },
            drain: ClientDrainer {
                drain,
                clock: clock.clone(),
                delta_c_ns,
                next_check_ns: 0,
                stats: ClientStats::default(),
                index,
                ledger,
            },
        }
    }

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
    /// reads the clock does not pay for a second read (on a virtual
    /// machine a clock read can cost as much as handling a whole packet).
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
