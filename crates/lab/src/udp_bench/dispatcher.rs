//! The dispatcher of the `fairway-dispatch` configuration: every client's
//! draining half and socket, driven by the arbiter thread after each scan
//! (the PSPAT paper §3: `drain()` called "by other threads ... on explicit
//! notifications from the arbiter"; see [`fairway_runtime::dispatch`]).
//!
//! The clients then only copy packets into their client queues; a granted
//! packet leaves within one arbiter loop of its grant, whichever client
//! thread happens to hold the client CPU.

use super::sender::Sender;
use fairway_runtime::net::Datagram;
use fairway_runtime::{ClientDrainer, Dispatch};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One client's draining half and the socket its packets leave on.
pub(super) struct Lane {
    pub(super) drainer: ClientDrainer<Datagram>,
    pub(super) sender: Sender,
}

/// Packets a lane may transmit per dispatcher turn.
///
/// When the configured link rate exceeds what the arbiter thread can
/// transmit (the sweep's overload points), grants pile up in the lanes. A
/// turn that emptied every lane would make a packet granted to the target
/// wait behind every interferer's backlog of grants (up to a full client
/// queue each, milliseconds); with at most `QUOTA` packets per lane per
/// turn it waits at most (lanes − 1) × `QUOTA` transmissions. 8 keeps a
/// `sendmmsg` call worth making (its fixed cost over 8 datagrams).
pub(super) const QUOTA: usize = 8;

/// Visits every lane in turn, transmitting at most [`QUOTA`] granted
/// packets of each with one `sendmmsg`.
pub(super) struct SenderDispatch {
    lanes: Vec<Lane>,
    /// Packets drained per lane, for the trial to see when every accepted
    /// packet has left.
    drained: Arc<[AtomicU64]>,
}

impl SenderDispatch {
    pub(super) fn new(lanes: Vec<Lane>, drained: Arc<[AtomicU64]>) -> Self {
        Self { lanes, drained }
    }

    /// The lanes, in client order (their senders hold the counters).
    pub(super) fn into_lanes(self) -> Vec<Lane> {
        self.lanes
    }
}

impl Dispatch for SenderDispatch {
    fn dispatch(&mut self) -> usize {
        let mut total = 0;
        for (lane, drained) in self.lanes.iter_mut().zip(self.drained.iter()) {
            // Δ_C does not apply: the grant index is the arbiter thread's
            // own, so reading it costs no cache miss.
            let n = lane.drainer.drain_at_most(QUOTA, &mut lane.sender);
            if n > 0 {
                drained.fetch_add(n as u64, Ordering::Relaxed);
                total += n;
            }
        }
        total
    }
}
