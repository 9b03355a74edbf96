//! The dispatcher run by the arbiter thread (seed 001 §3).
//!
//! Seed 001 splits a scheduler into queues, an arbiter and a *dispatcher*
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
//! dispatching, it does not. The price is seed 001's: the arbiter now pays
//! for every transmission (10–20× a scheduling decision), so its loop, and
//! Δ_A, grow with the traffic.
//!
//! A [`Dispatch`] typically owns the clients' [`ClientDrainer`] halves
//! (from [`Client::split`]) and their back-ends; it comes back from
//! [`DispatchingHandle::stop`] so its counters can be read.
//!
//! [`ClientDrainer`]: crate::ClientDrainer
//! [`Client::split`]: crate::Client::split

use crate::accounts::RuntimeAccounts;
use crate::arbiter::ArbiterStats;
use crate::runtime::{ArbiterHandle, RuntimeError};

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

/// An arbiter thread that also dispatches (from
/// [`crate::RuntimeBuilder::spawn_dispatching`]). Dropping it stops the
/// thread (and drops the dispatcher).
#[derive(Debug)]
pub struct DispatchingHandle<D> {
    pub(crate) arbiter: ArbiterHandle,
    pub(crate) back: std::sync::mpsc::Receiver<D>,
}

impl<D> DispatchingHandle<D> {
    /// See [`crate::ArbiterHandle::scan_gap_window`].
    pub fn scan_gap_window(&self) -> crate::ScanGapWindow {
        self.arbiter.scan_gap_window()
    }

    /// Stops the arbiter; returns its counters and the dispatcher (with
    /// whatever it counted). The dispatcher is `None` only if the arbiter
    /// thread panicked.
    pub fn stop(self) -> Result<(ArbiterStats, Option<D>), RuntimeError> {
        let stats = self.arbiter.stop()?;
        Ok((stats, self.back.try_recv().ok()))
    }

    /// Where every client's packets are, now (see
    /// [`ArbiterHandle::accounts`]).
    pub fn accounts(&self) -> RuntimeAccounts {
        self.arbiter.accounts()
    }
}

#[cfg(test)]
mod tests {
    use crate::*;
    use fairway_core::Drr;
    use std::time::{Duration, Instant};

    /// Every client's draining half, transmitting into one counter.
    struct Counting {
        drainers: Vec<ClientDrainer<u32>>,
        tx: CountingBackend,
    }

    impl Dispatch for Counting {
        fn dispatch(&mut self) -> usize {
            let tx = &mut self.tx;
            self.drainers.iter_mut().map(|d| d.drain_now(tx)).sum()
        }
    }

    const PER_CLIENT: u64 = 200;

    /// Three clients submit `PER_CLIENT` packets each and never drain; the
    /// arbiter thread runs `dispatch`. Returns the arbiter's decisions, the
    /// dispatcher (if handed back) and the final accounts.
    fn run<D: Dispatch + 'static>(
        mode: ArbiterMode,
        make: impl FnOnce(Vec<ClientDrainer<u32>>) -> D,
    ) -> (u64, Option<D>, PacketAccounts) {
        let cfg = RuntimeConfig {
            rate_bps: 1_000_000_000,
            mode,
            ..RuntimeConfig::default()
        };
        let mut b = RuntimeBuilder::new(cfg).unwrap();
        let mut subs = Vec::new();
        let mut drainers = Vec::new();
        for w in [1, 2, 5] {
            let c = b
                .add_client::<u32>(ClientConfig {
                    weight: w,
                    ..ClientConfig::default()
                })
                .unwrap();
            let (s, d) = c.split();
            subs.push(s);
            drainers.push(d);
        }
        let h = b
            .spawn_dispatching(
                |c, l| Box::new(Drr::<u32>::with_options(c, l, None)),
                make(drainers),
            )
            .unwrap();
        for s in &mut subs {
            for _ in 0..PER_CLIENT {
                s.submit(100).unwrap();
            }
        }
        let total = 3 * PER_CLIENT;
        let end = Instant::now() + Duration::from_secs(10);
        while h.accounts().total().granted < total && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Time for a dispatcher to drain the last grants.
        std::thread::sleep(Duration::from_millis(20));
        let accounts = h.accounts().total();
        let (stats, d) = h.stop().unwrap();
        (stats.decisions, d, accounts)
    }

    #[test]
    fn the_arbiter_thread_transmits_every_granted_packet() {
        for mode in [ArbiterMode::BusyPoll, ArbiterMode::Sleep] {
            let (decisions, d, a) = run(mode, |drainers| Counting {
                drainers,
                tx: CountingBackend::default(),
            });
            let d = d.expect("the dispatcher comes back");
            assert_eq!(decisions, 3 * PER_CLIENT, "{mode:?}");
            assert_eq!(d.tx.packets, 3 * PER_CLIENT, "{mode:?}");
            assert_eq!(d.tx.bytes, 3 * PER_CLIENT * 100, "{mode:?}");
            assert_eq!(a.transmitted, 3 * PER_CLIENT, "{mode:?}: {a:?}");
            assert_eq!(a.undrained(), 0, "{mode:?}: {a:?}");
        }
    }

    #[test]
    fn without_a_dispatcher_granted_packets_stay_undrained() {
        // The check above can fail: with `()` as the dispatcher nobody
        // drains, so every packet is granted and none transmitted.
        let (decisions, d, a) = run(ArbiterMode::BusyPoll, |_drainers| ());
        assert!(d.is_some());
        assert_eq!(decisions, 3 * PER_CLIENT);
        assert_eq!(a.transmitted, 0, "{a:?}");
        assert_eq!(a.undrained(), 3 * PER_CLIENT, "{a:?}");
    }
}
