//! [`SendDelays`]: how long each packet waited between its submission and
//! the system call that handed it to the kernel, and until that call
//! returned. The PSPAT paper Eq. (1) bounds the second (the scheduling delay of
//! §4, with the transmission's own cost in it); the first splits off what
//! the packet spent before its system call, i.e. in its scheduler.
//!
//! Every sender ([`UdpSender`](super::UdpSender),
//! [`PacketSender`](super::PacketSender), [`RingSender`](super::RingSender))
//! records through this one type, so the Eq. (1) check reads the same
//! quantity whichever way the packets leave.

use super::datagram::Datagram;
use hdrhistogram::Histogram;

/// Largest delay recorded, ns (a minute: a trial lasts at most that long).
const MAX_DELAY_NS: u64 = 60_000_000_000;

/// The two histograms, ns, 3 significant digits.
#[derive(Clone, Debug)]
pub struct SendDelays {
    /// Submit → the send call returned.
    done: Histogram<u64>,
    /// Submit → the send call started.
    call: Histogram<u64>,
}

impl SendDelays {
    /// Empty histograms for 1 ns … 60 s.
    pub fn new() -> Self {
        // The bounds are constants that `new_with_bounds` accepts (low ≥ 1,
        // high ≥ 2·low, 3 digits); `expect` documents that, it cannot fire.
        let h = Histogram::new_with_bounds(1, MAX_DELAY_NS, 3)
            .expect("constant histogram bounds are valid");
        Self {
            done: h.clone(),
            call: h,
        }
    }

    /// Records that a send call starts at `now_ns` for packets submitted at
    /// `submits` (ns of `CLOCK_MONOTONIC`).
    #[inline]
    pub fn call_starts(&mut self, now_ns: u64, submits: impl IntoIterator<Item = u64>) {
        record(&mut self.call, now_ns, submits);
    }

    /// Records that the send call that took packets submitted at `submits`
    /// returned at `now_ns`.
    #[inline]
    pub fn call_returned(&mut self, now_ns: u64, submits: impl IntoIterator<Item = u64>) {
        record(&mut self.done, now_ns, submits);
    }

    /// [`Self::call_starts`] for datagrams.
    #[inline]
    pub fn datagrams_call_starts(&mut self, now_ns: u64, datagrams: &[Datagram]) {
        self.call_starts(now_ns, datagrams.iter().map(Datagram::submit_ns));
    }

    /// [`Self::call_returned`] for datagrams.
    #[inline]
    pub fn datagrams_call_returned(&mut self, now_ns: u64, datagrams: &[Datagram]) {
        self.call_returned(now_ns, datagrams.iter().map(Datagram::submit_ns));
    }

    /// Submit → send call returned, ns.
    pub fn done(&self) -> &Histogram<u64> {
        &self.done
    }

    /// Submit → send call started, ns.
    pub fn call(&self) -> &Histogram<u64> {
        &self.call
    }
}

impl Default for SendDelays {
    fn default() -> Self {
        Self::new()
    }
}

/// Records `now − submit` for each submit, at least 1 ns (a packet sent
/// in the nanosecond it was submitted), saturating past the histogram's
/// top.
fn record(h: &mut Histogram<u64>, now_ns: u64, submits: impl IntoIterator<Item = u64>) {
    for s in submits {
        h.saturating_record(now_ns.saturating_sub(s).max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_the_wait_before_and_through_the_call() {
        let mut d = SendDelays::new();
        let sent = [Datagram::new(0, 0, 1_000), Datagram::new(0, 1, 3_000)];
        d.datagrams_call_starts(5_000, &sent);
        d.datagrams_call_returned(9_000, &sent);
        assert_eq!(d.call().len(), 2);
        assert_eq!(d.done().len(), 2);
        assert_eq!(d.call().max(), d.call().highest_equivalent(4_000));
        assert_eq!(d.call().min(), d.call().lowest_equivalent(2_000));
        assert_eq!(d.done().max(), d.done().highest_equivalent(8_000));
        // A packet stamped after "now" (another CPU's clock read later)
        // counts as 1 ns, not as a wrapped huge delay.
        d.call_starts(10, [20]);
        assert_eq!(d.call().min(), 1);
    }
}
