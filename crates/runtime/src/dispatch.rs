//! The dispatcher run by the arbiter thread (the PSPAT paper §3).
//!
//! The PSPAT paper splits a scheduler into queues, an arbiter and a *dispatcher*
//! that hands the selected packets to the NIC. PSPAT leaves dispatching to
//! the clients (each calls `drain()` for its own grants), but `drain()` "can
//! be called opportunistically by each client, or by other threads that run
//! periodically or on explicit notifications from the arbiter". This module
//! is the second choice in its simplest form: the arbiter thread itself
//! calls a [`Dispatch`] right after every `do_scan()`, so a granted packet
//! is transmitted within one arbiter loop of its grant, whether or not its
//! client's thread has a CPU at that moment.
//!
//! Why: on a machine with fewer cores than clients, a granted packet of a
//! client that shares a CPU with flat-out senders waits until that client
//! is scheduled again before it reaches the wire; with the arbiter
//! dispatching, it does not. The price is the PSPAT paper's: the arbiter now pays
//! for every transmission (10–20× a scheduling decision), so its loop, and
//! Δ_A, grow with the traffic.
//!
//! A [`Dispatch`] typically owns the clients' [`ClientDrainer`] halves
//! (from [`Client::split`]) and their back-ends; it comes back from
//! [`DispatchingHandle::stop`] so its counters can be read.
//!
//! [`ClientDrainer`]: crate::ClientDrainer
//! [`Client::split`]: crate::Client::split
//! [`DispatchingHandle::stop`]: crate::DispatchingHandle::stop

/// Work the arbiter thread does after every scan: transmitting what was
/// granted.
pub trait Dispatch: Send {
    /// Transmits granted packets; returns how many (0 lets a busy-polling
    /// arbiter with no traffic pause between scans).
    fn dispatch(&mut self) -> usize;
}

/// No dispatcher: the clients transmit their own grants.
impl Dispatch for () {
    #[inline]
    fn dispatch(&mut self) -> usize {
        0
    }
}
