//! The arbiter's decision loop body, `do_scan()` of the PSPAT paper Fig. 3.
//!
//! One call: (1) at most every Δ_A, scan every client queue and enqueue the
//! new packets into the scheduler (§3.2.1, §3.3); (2) while the emulated
//! link is idle (`link_idle < now`), dequeue, grant the packet to its client
//! and advance `link_idle` by its transmission time; (3) publish the new
//! grant indices, once per client per call.
//!
//! Budget carry-over (§4.1): the last packet granted in a round may end
//! after `now`; `link_idle` keeps that excess, so the next round grants that
//! much less and the extra traffic never accumulates. When the scheduler
//! runs dry, `link_idle = now`: idle time is not saved up as credit.
//!
//! The scheduler sees a packet as its length (`u32` implements `Packet`):
//! payloads stay with their client (see [`crate::mailbox`]). Client `i` is
//! flow `FlowId(i)`; since a flow is FIFO, granting "the next packet of flow
//! i" is granting the oldest ungranted packet of queue i, as in Fig. 3.

use crate::accounts::ClientLedger;
use crate::link::EmulatedLink;
use crate::mailbox::QueueReader;
use fairway_core::{FlowId, Scheduler};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Largest batch of lengths read from one client queue before enqueueing
/// them (4 KiB of `u32`s: stays in L1).
const MAX_BATCH: usize = 1024;

/// What `do_scan` left behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanResult {
    /// The scheduler is empty: nothing to do until a client submits.
    NoTraffic,
    /// Packets wait for the link, which is busy until `link_idle`.
    MoreTraffic,
}

/// Counters kept by the arbiter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArbiterStats {
    /// Scheduling decisions (packets granted).
    pub decisions: u64,
    /// Packets taken from client queues into the scheduler.
    pub enqueued: u64,
    /// Rounds in which the client queues were scanned.
    pub scans: u64,
    /// Packets of departed clients dropped, never granted: those in the
    /// scheduler and those still unread in their queues.
    pub reclaimed: u64,
    /// Times the arbiter was restarted ([`crate::PausedRuntime`]).
    pub restarts: u64,
    /// Packets handed from the previous scheduler to the new one at a
    /// restart, each flow's in its order.
    pub requeued: u64,
    /// Packets the scheduler refused (cannot happen when clients validate
    /// lengths, as [`crate::Client`] does); granted unscheduled to keep the
    /// queue in order.
    pub enqueue_errors: u64,
    /// Times the arbiter blocked waiting for a kick (§3.1, empty queues).
    pub blocks: u64,
    /// Times the arbiter slept until `link_idle` (§3.1, busy link).
    pub timed_sleeps: u64,
    /// `do_scan` rounds run by clients (second `kick_arbiter` variant).
    pub client_scans: u64,
    /// The longest time between two consecutive `do_scan` rounds, ns, not
    /// counting the arbiter's own sleeps and blocks. Queues are read at
    /// most Δ_A after they were last read *plus* this gap, so Δ_A + this is
    /// the Δ_A the run actually had (the PSPAT paper §4: an arbiter that misses its
    /// deadline adds to the T-WFI). A gap far above the loop's own time
    /// means the CPU was taken from the arbiter: a higher-priority thread,
    /// real-time throttling, or the host of a virtual machine.
    pub longest_scan_gap_ns: u64,
}

pub(crate) struct ClientSlot {
    pub(crate) reader: QueueReader,
    pub(crate) live: bool,
    dirty: bool,
    /// Packets granted so far (the running total published to the ledger).
    granted: u64,
    /// Packets reclaimed when the client departed.
    reclaimed: u64,
}

impl ClientSlot {
    pub(crate) fn new(reader: QueueReader) -> Self {
        Self {
            reader,
            live: true,
            dirty: false,
            granted: 0,
            reclaimed: 0,
        }
    }
}

/// What a stopped arbiter hands to the next one (a restart, possibly with
/// another scheduler): the client queues' arbiter ends with their cursors,
/// each client's packets taken but not granted (`backlog[i]`, in order), the
/// link, the counters and the clients' ledgers.
pub(crate) struct ArbiterParts {
    pub(crate) clients: Vec<ClientSlot>,
    pub(crate) backlog: Vec<Vec<u32>>,
    pub(crate) link: EmulatedLink,
    pub(crate) stats: ArbiterStats,
    pub(crate) ledgers: Vec<Arc<ClientLedger>>,
    /// The longest round gap since the owner last took it (ns), shared
    /// with every [`ScanGapWindow`].
    pub(crate) round_gap: Arc<AtomicU64>,
    /// Taken from a stopped arbiter (a restart), not fresh.
    pub(crate) resumed: bool,
}

impl ArbiterParts {
    /// A fresh start: no backlog, nothing counted yet.
    pub(crate) fn fresh(
        readers: Vec<QueueReader>,
        link: EmulatedLink,
        ledgers: Vec<Arc<ClientLedger>>,
    ) -> Self {
        Self {
            backlog: vec![Vec::new(); readers.len()],
            clients: readers.into_iter().map(ClientSlot::new).collect(),
            link,
            stats: ArbiterStats::default(),
            ledgers,
            round_gap: Arc::new(AtomicU64::new(0)),
            resumed: false,
        }
    }
}

/// A window onto the arbiter's round gaps, for measuring whether it kept
/// its Δ_A during an experiment: [`ScanGapWindow::take`] at the start of
/// the measurement, and again at its end. Cheap to clone and to send to
/// another thread; get one from [`crate::ArbiterHandle::scan_gap_window`].
///
/// # Examples
///
/// ```
/// use fairway_core::Drr;
/// use fairway_runtime::{ClientConfig, CountingBackend, RuntimeBuilder, RuntimeConfig};
///
/// let cfg = RuntimeConfig::default();
/// let mut b = RuntimeBuilder::new(cfg).unwrap();
/// let mut client = b.add_client::<u32>(ClientConfig::default()).unwrap();
/// let arbiter = b.spawn_send(|cap, lim| Box::new(Drr::<u32>::with_options(cap, lim, None))).unwrap();
/// let window = arbiter.scan_gap_window();
/// window.take(); // the measurement starts: forget what came before
/// client.submit(1500).unwrap();
/// let mut tx = CountingBackend::default();
/// while tx.packets < 1 {
///     client.drain_now(&mut tx);
/// }
/// // The Δ_A this arbiter kept meanwhile was at most Δ_A + the gap.
/// let kept_ns = cfg.delta_a.as_nanos() as u64 + window.take();
/// println!("queues read at most {kept_ns} ns apart");
/// arbiter.stop().unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct ScanGapWindow(pub(crate) Arc<AtomicU64>);

impl ScanGapWindow {
    /// The longest gap between two consecutive rounds of the arbiter since
    /// the previous `take` (or the arbiter's start), ns, and starts a new
    /// window. Δ_A + this bounds the interval at which the arbiter actually
    /// read its queues in that window (see
    /// [`ArbiterStats::longest_scan_gap_ns`], the whole run's longest).
    pub fn take(&self) -> u64 {
        self.0.swap(0, Ordering::Relaxed)
    }
}

/// The arbiter state: scheduler, client queue ends, emulated link.
pub struct Arbiter<S: ?Sized> {
    clients: Vec<ClientSlot>,
    /// Clients granted something in this round (to publish once each).
    dirty: Vec<u32>,
    /// Lengths read from one client queue, before they are enqueued
    /// ([`QueueReader::poll_into`]).
    batch: Vec<u32>,
    link: EmulatedLink,
    delta_a_ns: u64,
    next_scan_ns: u64,
    pub(crate) stats: ArbiterStats,
    /// See [`ArbiterParts::round_gap`].
    pub(crate) round_gap: Arc<AtomicU64>,
    /// Per client, shared with the client (empty when built by
    /// [`Arbiter::new`] alone).
    ledgers: Vec<Arc<ClientLedger>>,
    sched: Box<S>,
}

impl<S: Scheduler<u32> + ?Sized> Arbiter<S> {
    /// An arbiter over `readers[i]` = queue of flow `i` (flows already
    /// configured in `sched`).
    pub fn new(
        sched: Box<S>,
        readers: Vec<QueueReader>,
        link: EmulatedLink,
        delta_a_ns: u64,
    ) -> Self {
        Self::from_parts(
            sched,
            ArbiterParts::fresh(readers, link, Vec::new()),
            delta_a_ns,
        )
    }

    /// An arbiter continuing from `parts` (flows of the live clients already
    /// configured in `sched`): each client's backlog is enqueued again in
    /// its order, so per-flow order and the grant indices stay exact.
    pub(crate) fn from_parts(sched: Box<S>, parts: ArbiterParts, delta_a_ns: u64) -> Self {
        let n = parts.clients.len();
        let batch = parts
            .clients
            .iter()
            .map(|c| c.reader.capacity())
            .max()
            .unwrap_or(0)
            .min(MAX_BATCH);
        let mut a = Self {
            clients: parts.clients,
            dirty: Vec::with_capacity(n),
            batch: vec![0; batch],
            link: parts.link,
            delta_a_ns,
            next_scan_ns: 0,
            stats: parts.stats,
            ledgers: parts.ledgers,
            round_gap: parts.round_gap,
            sched,
        };
        if parts.resumed {
            a.stats.restarts += 1;
        }
        for (i, backlog) in parts.backlog.into_iter().enumerate() {
            for len in backlog {
                a.stats.requeued += 1;
                if a.sched.enqueue(FlowId(i as u32), len).is_err() {
                    // As in `scan_queues`: granted at once, counted.
                    a.stats.enqueue_errors += 1;
                    Self::grant(&mut a.clients[i], &mut a.dirty, i as u32);
                }
            }
        }
        a
    }

    /// Stops: takes every live client's packets back from the scheduler and
    /// reads the ones not yet scanned, so the next arbiter (see
    /// [`Self::from_parts`]) gets them all in order.
    pub(crate) fn into_parts(mut self) -> ArbiterParts {
        // Publish what this round granted, then drain the queues' unread
        // entries into the backlog after the scheduler's.
        self.publish();
        let mut backlog = Vec::with_capacity(self.clients.len());
        for (i, slot) in self.clients.iter_mut().enumerate() {
            let mut b = Vec::new();
            if slot.live {
                if let Ok(queued) = self.sched.remove_flow(FlowId(i as u32)) {
                    b = queued;
                }
                loop {
                    let n = slot.reader.poll_batched(&mut self.batch, |len| b.push(len));
                    self.stats.enqueued += n as u64;
                    if n == 0 {
                        break;
                    }
                }
            }
            backlog.push(b);
        }
        ArbiterParts {
            clients: self.clients,
            backlog,
            link: self.link,
            stats: self.stats,
            ledgers: self.ledgers,
            round_gap: self.round_gap,
            resumed: true,
        }
    }

    #[inline]
    fn grant(slot: &mut ClientSlot, dirty: &mut Vec<u32>, i: u32) {
        slot.reader.grant_one();
        slot.granted += 1;
        if !slot.dirty {
            slot.dirty = true;
            dirty.push(i);
        }
    }

    /// Publishes the grant indices of the clients granted something, once
    /// each, and their running totals to their ledgers.
    #[inline]
    fn publish(&mut self) {
        for &i in &self.dirty {
            let slot = &mut self.clients[i as usize];
            slot.dirty = false;
            slot.reader.publish();
            if let Some(l) = self.ledgers.get(i as usize) {
                ClientLedger::set(&l.arbiter.granted, slot.granted);
            }
        }
        self.dirty.clear();
    }

    /// Counts a gap of `gap_ns` between two rounds (see
    /// [`ArbiterStats::longest_scan_gap_ns`]).
    #[inline]
    pub(crate) fn record_round_gap(&mut self, gap_ns: u64) {
        let longest = &mut self.stats.longest_scan_gap_ns;
        *longest = (*longest).max(gap_ns);
        // A relaxed load of a line nobody else writes between two takes:
        // cheap on every round; the write only when the gap is a new
        // longest since the last take.
        if gap_ns > self.round_gap.load(Ordering::Relaxed) {
            self.round_gap.fetch_max(gap_ns, Ordering::Relaxed);
        }
    }

    /// The counters.
    pub fn stats(&self) -> ArbiterStats {
        self.stats
    }

    /// When the emulated link is free again (ns).
    pub fn link_idle_ns(&self) -> u64 {
        self.link.idle_at_ns()
    }

    /// The scheduler (for its counters).
    pub fn scheduler(&self) -> &S {
        &self.sched
    }

    /// Makes the next `do_scan` read the queues whatever Δ_A says: the
    /// double check before sleeping (§3.1) must not be skipped.
    #[inline]
    pub fn force_scan(&mut self) {
        self.next_scan_ns = 0;
    }

    /// One round of Fig. 3 `do_scan()` at time `now_ns`.
    #[inline]
    pub fn do_scan(&mut self, now_ns: u64) -> ScanResult {
        if now_ns >= self.next_scan_ns {
            self.next_scan_ns = now_ns.saturating_add(self.delta_a_ns);
            self.scan_queues();
        }
        let mut result = ScanResult::MoreTraffic;
        while self.link.is_idle(now_ns) {
            match self.sched.dequeue() {
                Some(d) => {
                    Self::grant(&mut self.clients[d.flow.index()], &mut self.dirty, d.flow.0);
                    self.link.transmit(d.packet);
                    self.stats.decisions += 1;
                }
                None => {
                    self.link.set_idle_at(now_ns);
                    result = ScanResult::NoTraffic;
                    break;
                }
            }
        }
        self.publish();
        if result == ScanResult::MoreTraffic && self.sched.is_empty() {
            // Link busy but nothing queued: only a submit creates work.
            result = ScanResult::NoTraffic;
        }
        result
    }

    fn scan_queues(&mut self) {
        self.stats.scans += 1;
        let sched = &mut self.sched;
        let stats = &mut self.stats;
        for (i, slot) in self.clients.iter_mut().enumerate() {
            if !slot.live {
                continue;
            }
            let flow = FlowId(i as u32);
            if slot.reader.is_closed() {
                // §4.1 fn. 7: a departed client's grants are reclaimed, so
                // it holds no share of the link from now on. Its packets
                // not yet read are reclaimed too (the client stored them
                // before it closed the queue, so this read sees them all):
                // every packet it submitted is accounted for.
                slot.live = false;
                let mut dropped = match sched.remove_flow(flow) {
                    Ok(d) => d.len() as u64,
                    Err(_) => 0,
                };
                loop {
                    let n = slot.reader.poll_batched(&mut self.batch, |_| ());
                    if n == 0 {
                        break;
                    }
                    stats.enqueued += n as u64;
                    dropped += n as u64;
                }
                stats.reclaimed += dropped;
                slot.reclaimed += dropped;
                if let Some(l) = self.ledgers.get(i) {
                    ClientLedger::set(&l.arbiter.reclaimed, slot.reclaimed);
                    l.arbiter
                        .departed
                        .store(true, std::sync::atomic::Ordering::Release);
                }
                continue;
            }
            let reader = &mut slot.reader;
            let mut refused = 0;
            // At most one queue's worth per scan, so one busy client cannot
            // monopolise it.
            let n = reader.poll_batched(&mut self.batch, |len| {
                if sched.enqueue(flow, len).is_err() {
                    refused += 1;
                }
            });
            stats.enqueued += n as u64;
            // Keep the index accounting exact: a refused packet is granted
            // at once (it is still the oldest ungranted one only if nothing
            // else of this flow waits, which validation guarantees).
            for _ in 0..refused {
                stats.enqueue_errors += 1;
                Self::grant(slot, &mut self.dirty, i as u32);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::mailbox::client_queue;
    use fairway_core::{Capacity, Drr, FlowConfig, Limits};

    fn arbiter(rate: u64, delta_a: u64) -> (Arbiter<Drr<u32>>, crate::mailbox::ClientQueue<u32>) {
        let mut d = Drr::with_options(Capacity::new(1, 64), Limits::default(), None);
        d.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
        let (c, r) = client_queue::<u32>(63);
        (
            Arbiter::new(
                Box::new(d),
                vec![r],
                EmulatedLink::new(rate).unwrap(),
                delta_a,
            ),
            c,
        )
    }

    #[test]
    fn grants_follow_the_link_with_carry_over() {
        // 1 Gbit/s: a 1000-byte packet takes 8 us.
        let (mut a, mut c) = arbiter(1_000_000_000, 0);
        for _ in 0..10 {
            c.try_push(1000, 0).unwrap();
        }
        // t = 1 us: link idle since 0 -> one packet, busy until 8 us.
        assert_eq!(a.do_scan(1_000), ScanResult::MoreTraffic);
        assert_eq!((a.stats().decisions, a.link_idle_ns()), (1, 8_000));
        assert_eq!(c.granted_since(c.grant_index()), 1);
        // t = 8 us: still busy (link_idle < now is strict).
        a.do_scan(8_000);
        assert_eq!(a.stats().decisions, 1);
        // t = 20 us: packets starting at 8 and 16 us; the second ends at
        // 24 us, and that excess is carried over, not forgiven.
        a.do_scan(20_000);
        assert_eq!((a.stats().decisions, a.link_idle_ns()), (3, 24_000));
        assert_eq!(c.granted_since(c.grant_index()), 3);
        // Drained dry: idle time is not saved up as credit.
        a.do_scan(1_000_000);
        assert_eq!(a.stats().decisions, 10);
        assert_eq!(a.do_scan(2_000_000), ScanResult::NoTraffic);
        c.try_push(1000, 0).unwrap();
        a.do_scan(2_000_001);
        assert_eq!(a.link_idle_ns(), 2_008_000); // idle from the last scan, 2 ms
    }

    #[test]
    fn queues_are_read_at_most_every_delta_a() {
        let (mut a, mut c) = arbiter(1_000_000_000_000, 1_000);
        a.do_scan(10_000);
        c.try_push(100, 0).unwrap();
        a.do_scan(10_500); // within delta_a: not seen
        assert_eq!(a.stats().decisions, 0);
        a.do_scan(11_000);
        assert_eq!((a.stats().decisions, a.stats().scans), (1, 2));
        c.try_push(100, 0).unwrap();
        a.force_scan();
        a.do_scan(11_001);
        assert_eq!(a.stats().decisions, 2);
    }
}
