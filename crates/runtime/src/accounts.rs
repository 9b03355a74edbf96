//! Packet accounting that outlives the clients: every packet a client
//! submits ends in exactly one of four states, and the runtime can say
//! which even after the client's thread panicked or exited.
//!
//! ```text
//! submitted = rejected + granted + queued + reclaimed
//! granted   = transmitted + send_failed + (granted, not yet drained)
//! ```
//!
//! * **rejected**: `submit` refused it (full queue or bad length) and handed
//!   it back to the caller;
//! * **granted**: the arbiter scheduled it on the emulated link (the PSPAT paper
//!   Fig. 3); the client then transmits it, or its back-end fails to
//!   (`send_failed`, counted and dropped: the link time was spent);
//! * **queued**: accepted, not yet granted (in the client queue or the
//!   scheduler);
//! * **reclaimed**: accepted, never granted, dropped because the client went
//!   away (the PSPAT paper §4.1 footnote 7: the arbiter reclaims a departed
//!   client's share, including what it had not even scanned yet).
//!
//! Each counter has one writer (the client's submit half, its drain half, or
//! the arbiter), on a cache line of its own, and is published with a
//! Release store of the writer's running total: no read-modify-write and no
//! line written by two threads. [`RuntimeAccounts`] reads them, so a test or
//! an operator can check the identity at any time; it is exact when the
//! runtime is quiet (e.g. after [`crate::ArbiterHandle::pause`]) and never
//! negative while it runs.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Written by the client's submit half.
#[derive(Default)]
pub(crate) struct SubmitSide {
    pub(crate) offered: AtomicU64,
    pub(crate) rejected: AtomicU64,
}

/// Written by the client's drain half.
#[derive(Default)]
pub(crate) struct DrainSide {
    pub(crate) transmitted: AtomicU64,
    pub(crate) send_failed: AtomicU64,
}

/// Written by the arbiter.
#[derive(Default)]
pub(crate) struct ArbiterSide {
    pub(crate) granted: AtomicU64,
    pub(crate) reclaimed: AtomicU64,
    pub(crate) departed: AtomicBool,
}

/// One client's counters, shared by its two halves and the arbiter.
#[derive(Default)]
pub(crate) struct ClientLedger {
    pub(crate) submit: CachePadded<SubmitSide>,
    pub(crate) drain: CachePadded<DrainSide>,
    pub(crate) arbiter: CachePadded<ArbiterSide>,
}

impl ClientLedger {
    /// Publishes a running total (single writer: a plain store suffices).
    #[inline]
    pub(crate) fn set(counter: &AtomicU64, value: u64) {
        counter.store(value, Ordering::Release);
    }

    /// A snapshot. The arbiter's counters are read first and the submit
    /// counters last: a packet is offered before it can be granted or
    /// reclaimed, so `queued` computed from them cannot go negative.
    fn snapshot(&self) -> PacketAccounts {
        let granted = self.arbiter.granted.load(Ordering::Acquire);
        let reclaimed = self.arbiter.reclaimed.load(Ordering::Acquire);
        let transmitted = self.drain.transmitted.load(Ordering::Acquire);
        let send_failed = self.drain.send_failed.load(Ordering::Acquire);
        let rejected = self.submit.rejected.load(Ordering::Acquire);
        let submitted = self.submit.offered.load(Ordering::Acquire);
        PacketAccounts {
            submitted,
            rejected,
            granted,
            queued: submitted
                .saturating_sub(rejected)
                .saturating_sub(granted)
                .saturating_sub(reclaimed),
            reclaimed,
            transmitted,
            send_failed,
        }
    }
}

/// Where the packets of one client (or of all of them) are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketAccounts {
    /// Every `submit` call.
    pub submitted: u64,
    /// Refused by `submit` and handed back (full queue, bad length).
    pub rejected: u64,
    /// Granted by the arbiter (transmitted, failed, or not drained yet).
    pub granted: u64,
    /// Accepted, not yet granted nor reclaimed:
    /// `submitted − rejected − granted − reclaimed`.
    pub queued: u64,
    /// Accepted, never granted, dropped because the client departed.
    pub reclaimed: u64,
    /// Granted and sent by the back-end.
    pub transmitted: u64,
    /// Granted, and the back-end failed to send it (dropped, counted).
    pub send_failed: u64,
}

impl PacketAccounts {
    /// Granted packets the client has not drained yet.
    pub fn undrained(&self) -> u64 {
        self.granted
            .saturating_sub(self.transmitted)
            .saturating_sub(self.send_failed)
    }

    fn add(&mut self, o: &PacketAccounts) {
        self.submitted += o.submitted;
        self.rejected += o.rejected;
        self.granted += o.granted;
        self.queued += o.queued;
        self.reclaimed += o.reclaimed;
        self.transmitted += o.transmitted;
        self.send_failed += o.send_failed;
    }
}

/// The runtime's packet accounts, one entry per client (= flow) index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeAccounts {
    /// Per client.
    pub clients: Vec<PacketAccounts>,
    /// Per client: the arbiter saw it depart and reclaimed its packets.
    pub departed: Vec<bool>,
}

impl RuntimeAccounts {
    pub(crate) fn read(ledgers: &[std::sync::Arc<ClientLedger>]) -> Self {
        Self {
            clients: ledgers.iter().map(|l| l.snapshot()).collect(),
            departed: ledgers
                .iter()
                .map(|l| l.arbiter.departed.load(Ordering::Acquire))
                .collect(),
        }
    }

    /// The sum over all clients.
    pub fn total(&self) -> PacketAccounts {
        let mut t = PacketAccounts::default();
        self.clients.iter().for_each(|c| t.add(c));
        t
    }
}
