//! The emulated link of the PSPAT paper §3 (`link_idle` in Fig. 3): the time at
//! which a link of rate B becomes free, advanced by `len · 8 / B` per granted
//! packet.
//!
//! Time is in nanoseconds. The per-byte transmission time is precomputed as
//! a 32.32 fixed-point number and `link_idle` is kept with 32 fractional
//! bits, so the hot path is one multiply and one add, no division, and no
//! rounding error accumulates over millions of packets.

/// Smallest accepted link rate, bits/s.
pub const MIN_RATE_BPS: u64 = 1_000;

/// A link of a fixed rate that is busy until `idle_at_ns()`.
#[derive(Clone, Debug)]
pub struct EmulatedLink {
    rate_bps: u64,
    /// ns per byte, 32.32 fixed point: `8e9 · 2^32 / rate`.
    ns_per_byte_q32: u64,
    /// When the link is free again, in ns · 2^32.
    idle_at_q32: u128,
}

impl EmulatedLink {
    /// A link of `rate_bps` bits per second, idle at time 0. `None` if the
    /// rate is below [`MIN_RATE_BPS`].
    pub fn new(rate_bps: u64) -> Option<Self> {
        if rate_bps < MIN_RATE_BPS {
            return None;
        }
        // Rounded up, so the emulated link is never faster than the rate;
        // ≤ 8e9 · 2^32 / 1000 < 2^64.
        let ns_per_byte_q32 = (8_000_000_000u128 << 32).div_ceil(rate_bps as u128) as u64;
        Some(Self {
            rate_bps,
            ns_per_byte_q32,
            idle_at_q32: 0,
        })
    }

    /// The rate, bits/s.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// The time (ns) at which the link is free.
    #[inline]
    pub fn idle_at_ns(&self) -> u64 {
        (self.idle_at_q32 >> 32) as u64
    }

    /// True when a new packet may start at `now_ns` (`link_idle < now`).
    #[inline]
    pub fn is_idle(&self, now_ns: u64) -> bool {
        self.idle_at_ns() < now_ns
    }

    /// Occupies the link for one packet of `len` bytes.
    #[inline]
    pub fn transmit(&mut self, len: u32) {
        self.idle_at_q32 += len as u128 * self.ns_per_byte_q32 as u128;
    }

    /// Nothing to send at `now_ns`: the idle time does not accumulate as
    /// credit (Fig. 3 `link_idle = now`).
    #[inline]
    pub fn set_idle_at(&mut self, now_ns: u64) {
        self.idle_at_q32 = (now_ns as u128) << 32;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_is_len_times_8_over_rate_without_drift() {
        let mut l = EmulatedLink::new(10_000_000_000).unwrap(); // 10 Gbit/s
        l.set_idle_at(1_000);
        l.transmit(1500); // 1.2 us
        assert_eq!(l.idle_at_ns(), 2_200);
        // 1e6 packets of 64 B at 10 Gbit/s = 51.2 ms, exact to the ns.
        let mut l = EmulatedLink::new(10_000_000_000).unwrap();
        for _ in 0..1_000_000 {
            l.transmit(64);
        }
        let got = l.idle_at_ns() as i64;
        assert!((got - 51_200_000).abs() <= 1, "{got}");
        assert!(l.is_idle(51_200_001) && !l.is_idle(51_199_000));
        assert!(EmulatedLink::new(999).is_none());
    }
}
