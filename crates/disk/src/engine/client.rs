//! Clients: the parties whose requests the scheduler shares the device
//! among (a tenant, a query, a compaction job, the write-ahead log). Each is
//! registered with a weight; its share of the device is its weight over
//! the sum of the weights of the clients with requests waiting (the BFQ
//! thesis §2.1: φ_i = w_i / Σw, in sectors transferred).
//!
//! A [`ClientId`] names a slot and its generation: after a client is
//! removed its id stays invalid, even once the slot is reused.

pub use crate::scheduler::{IoClass, Rate};
use std::fmt;
use std::time::Duration;

/// A registered client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client {}.{}", self.slot, self.generation)
    }
}

/// A group of clients ([`super::Engine::add_group`]): its clients and child
/// groups share its share of the device by their weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupId(pub u32);

/// How a client is registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientOptions {
    /// Weight, `1..=65536`; the sum over the registered clients at most
    /// 2^24 ([`crate::MAX_WEIGHT_SUM`]). Default 1.
    pub weight: u32,
    /// Group the client belongs to (`None`: the root). Its weight then
    /// shares its group's share with the group's other members (BFQ only).
    pub group: Option<GroupId>,
    /// dmClock reservation: the rate the client gets at least while it has
    /// requests waiting, requests or bytes per second (BFQ only).
    pub reservation: Option<Rate>,
    /// dmClock limit: the rate it never exceeds, even on an idle device
    /// (BFQ only). At least the reservation, in the same unit.
    pub limit: Option<Rate>,
    /// Priority class: real-time clients are served before best-effort
    /// ones, idle-class clients only once the device has had no other work
    /// for 200 ms (BFQ; the other schedulers refuse any class but best
    /// effort). Default best effort.
    pub class: IoClass,
}

impl ClientOptions {
    /// Weight `weight`, no group, best effort.
    pub fn weight(weight: u32) -> Self {
        Self {
            weight,
            group: None,
            class: IoClass::Be,
            reservation: None,
            limit: None,
        }
    }

    /// The same options in priority class `class`.
    pub fn with_class(self, class: IoClass) -> Self {
        Self { class, ..self }
    }

    /// The same options in group `group`.
    pub fn in_group(self, group: GroupId) -> Self {
        Self {
            group: Some(group),
            ..self
        }
    }

    /// The same options with a reservation.
    pub fn with_reservation(self, rate: Rate) -> Self {
        Self {
            reservation: Some(rate),
            ..self
        }
    }

    /// The same options with a limit.
    pub fn with_limit(self, rate: Rate) -> Self {
        Self {
            limit: Some(rate),
            ..self
        }
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self::weight(1)
    }
}

/// What happened to a client's requests. Every accepted request ends in
/// exactly one of `completed`, `failed` and `cancelled`; a refused one is
/// counted in `refused` only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Requests accepted by [`super::Engine::submit`].
    pub submitted: u64,
    /// Requests refused at submission (its client known; the queue full,
    /// unaligned, ...).
    pub refused: u64,
    /// Accepted requests handed to the device (in flight or finished).
    pub dispatched: u64,
    /// Requests transferred in full.
    pub completed: u64,
    /// Requests the device failed (I/O error, short transfer).
    pub failed: u64,
    /// Requests never dispatched: the client was removed or the engine
    /// shut down.
    pub cancelled: u64,
    /// Bytes transferred by completed requests.
    pub bytes: u64,
    /// Sum of the latencies (submission to completion) of completed
    /// requests, ns.
    pub latency_sum_ns: u64,
    /// Largest latency of a completed request, ns.
    pub latency_max_ns: u64,
}

impl ClientStats {
    /// Accepted requests not finished yet (queued or in flight).
    pub fn outstanding(&self) -> u64 {
        self.submitted - self.completed - self.failed - self.cancelled
    }

    /// Mean latency of the completed requests (`None` before the first).
    pub fn mean_latency(&self) -> Option<Duration> {
        (self.completed > 0).then(|| Duration::from_nanos(self.latency_sum_ns / self.completed))
    }

    /// Largest latency of a completed request.
    pub fn max_latency(&self) -> Duration {
        Duration::from_nanos(self.latency_max_ns)
    }
}
