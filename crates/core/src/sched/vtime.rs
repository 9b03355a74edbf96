//! Fixed-point virtual time with wrap-safe comparisons.
//!
//! Virtual times are `u64` counting `2^-FRAC_BITS` units of "bytes per unit
//! weight". A flow of weight `w` advances its finish time by
//! `len * 2^FRAC_BITS / w` per packet; the system virtual time of WF2Q+
//! advances by `len * 2^FRAC_BITS / W` (W = sum of weights).
//!
//! Values are compared through their wrapping difference read as `i64`, so
//! they may wrap around `u64` freely as long as any two values compared are
//! within `2^63` units of each other. With the default limits (packets up to
//! 2^16 bytes, weights >= 1) one packet spans at most `2^40` units (`2^46`
//! with QFQ's 30 fractional bits), so the timestamps of *backlogged* flows
//! always lie within a few packets of the system virtual time `V`.
//!
//! # Idle flows and the wrap
//!
//! An *idle* flow keeps the finish time `F` of its last packet, and when it
//! becomes backlogged again its start is `max(V, F)`. Meanwhile `V` may have
//! advanced arbitrarily far: at 10 Gbit/s of 64 KiB packets between two
//! equal-weight flows, `V` runs through half of the 64-bit range in minutes
//! (24 fractional bits) or seconds (30 bits), after which a wrap-safe
//! comparison reads the stale `F` as far in the *future* and the returning
//! flow would wait for `V` to catch up with it, i.e. starve. No threshold on
//! `F - V` can tell the two apart, so [`VirtualClock`] counts the wraps of
//! `V`: a flow going idle records the [`era`](VirtualClock::era) of its `F`
//! (the wrap count of `F` read as a 128-bit time), and
//! [`is_ahead`](VirtualClock::is_ahead) compares the two 128-bit times
//! exactly, however long the flow stayed idle. The cost is one add-with-carry
//! per advance of `V` and one `u64` per flow, touched only when it goes idle
//! or comes back.

/// A virtual time (see the module doc).
pub type VirtualTime = u64;

/// Fractional bits of the virtual times of the schedulers that divide
/// exactly (WF2Q+, WF2Q++, S-KPS, and fairway-disk's B-WF2Q+ on this
/// clock): one byte at weight 1 is `2^24` units.
///
/// [`vt_len`] divides `len · 2^24` by the weight, so a virtual length is
/// exact to one unit whatever the bits; 24 of them keep one packet within
/// `2^40` units (lengths and weights up to `2^16`), far from the `2^63`
/// horizon of the wrap-safe comparisons. QFQ uses 30
/// ([`QFQ_FRAC_BITS`](crate::sched::qfq::QFQ_FRAC_BITS)) because it does
/// not divide per packet: it multiplies by a per-flow inverse weight
/// rounded up, whose relative error the extra bits keep below `2^-14`.
pub const FRAC_BITS: u32 = 24;

/// `a > b`, wrap-safe.
#[inline]
pub fn vt_gt(a: VirtualTime, b: VirtualTime) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

/// `a >= b`, wrap-safe.
#[inline]
pub fn vt_ge(a: VirtualTime, b: VirtualTime) -> bool {
    (a.wrapping_sub(b) as i64) >= 0
}

/// The later of two virtual times, wrap-safe.
#[inline]
pub fn vt_max(a: VirtualTime, b: VirtualTime) -> VirtualTime {
    if vt_ge(a, b) {
        a
    } else {
        b
    }
}

/// Virtual length of a `len`-byte packet at weight `weight`: `len * 2^FRAC_BITS / weight`
/// (`weight` 0 is read as 1). Exact to one unit for `len <= 2^32`, `weight >= 1`.
///
/// A power-of-two weight (weight 1, the default, and a sum of weights
/// such as N flows of weight 1 when N is a power of two) divides by a
/// shift, the same quotient without the 64-bit divide (the schedulers
/// call this on every dequeue); other weights divide.
#[inline]
pub fn vt_len(len: u32, weight: u64) -> VirtualTime {
    let x = u64::from(len) << FRAC_BITS;
    let w = weight.max(1);
    if w.is_power_of_two() {
        x >> w.trailing_zeros()
    } else {
        x / w
    }
}

/// The wrap count of a timestamp, modulo 2^32 (see [`VirtualClock::era`]).
pub type Era = u32;

/// The system virtual time `V` together with the number of times it has
/// wrapped around `u64`, so that timestamps recorded long ago can be compared
/// with it exactly (see the module doc).
///
/// ```
/// use fairway_core::vtime::VirtualClock;
///
/// let mut v = VirtualClock::default();
/// v.advance(100);
/// // A flow goes idle with finish time 150, 50 units ahead of V.
/// let finish = 150;
/// let era = v.era(finish);
/// assert!(v.is_ahead(finish, era));
/// // V runs once around the whole 64-bit range: 150 is now far behind,
/// // although `vt_gt(150, V)` alone would say it is ahead.
/// v.advance(u64::MAX);
/// v.advance(1);
/// assert_eq!(v.now(), 100);
/// assert!(!v.is_ahead(finish, era));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VirtualClock {
    now: VirtualTime,
    wraps: u64,
}

impl VirtualClock {
    /// A clock reading `now`, never wrapped.
    pub const fn at(now: VirtualTime) -> Self {
        Self { now, wraps: 0 }
    }

    /// The current virtual time.
    #[inline(always)]
    pub fn now(&self) -> VirtualTime {
        self.now
    }

    /// How many times `V` has wrapped around `u64`.
    #[inline]
    pub fn wraps(&self) -> u64 {
        self.wraps
    }

    /// Advances `V` by `delta` units (any `delta`: a wrap is counted).
    #[inline(always)]
    pub fn advance(&mut self, delta: u64) {
        let (now, wrapped) = self.now.overflowing_add(delta);
        self.now = now;
        self.wraps += u64::from(wrapped);
    }

    /// Moves `V` forward to `t` if `t` is ahead of it (wrap-safe: `t` must be
    /// within `2^63` units of `V`, as the timestamps of backlogged flows are).
    #[inline(always)]
    pub fn advance_to(&mut self, t: VirtualTime) {
        if vt_gt(t, self.now) {
            self.advance(t.wrapping_sub(self.now));
        }
    }

    /// The era of timestamp `t`, which must lie within `2^63` units of `V`
    /// (the finish time of a flow that is going idle): the wrap count of
    /// `t` read as a wider time, to be passed back to
    /// [`is_ahead`](Self::is_ahead) later. Branch-free: `t` as a signed
    /// offset from `V`, added to `V` in 128 bits.
    #[inline]
    pub fn era(&self, t: VirtualTime) -> Era {
        let offset = t.wrapping_sub(self.now) as i64 as i128 as u128;
        (self.wide().wrapping_add(offset) >> 64) as Era
    }

    /// Whether timestamp `t` of era `era` (see [`era`](Self::era)) is
    /// strictly after `V`, exactly, however far `V` has advanced since —
    /// up to `2^31` wraps of `V` (eras are 32 bits, compared wrap-safely),
    /// which takes 97 years at 100 Gbit/s at the fastest clock in the
    /// crate (QFQ's, 30 fractional bits, total weight 1).
    #[inline]
    pub fn is_ahead(&self, t: VirtualTime, era: Era) -> bool {
        let then = (u128::from(era) << 64) | u128::from(t);
        // The 96-bit difference, sign-extended from bit 95.
        ((then.wrapping_sub(self.wide()) << 32) as i128) > 0
    }

    /// `V` with the low 32 bits of its wrap count on top (96 bits).
    #[inline(always)]
    fn wide(&self) -> u128 {
        (u128::from(self.wraps as Era) << 64) | u128::from(self.now)
    }

    /// The start time of a flow becoming backlogged whose last finish time
    /// was `finish`, recorded in era `era`: `max(V, F)`, exact.
    #[inline]
    pub fn restart(&self, finish: VirtualTime, era: Era) -> VirtualTime {
        if self.is_ahead(finish, era) {
            finish
        } else {
            self.now
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_survive_wraparound() {
        let a = u64::MAX - 5;
        let b = a.wrapping_add(10);
        assert!(vt_gt(b, a));
        assert!(!vt_gt(a, b));
        assert!(vt_ge(a, a));
        assert_eq!(vt_max(a, b), b);
        assert_eq!(vt_max(b, a), b);
    }

    #[test]
    fn clock_eras_order_timestamps_across_any_number_of_wraps() {
        let mut v = VirtualClock::at(u64::MAX - 10);
        // Ahead of V, past the wrap point.
        let ahead = 5u64;
        let e_ahead = v.era(ahead);
        assert_eq!(e_ahead, 1);
        // Behind V, not wrapped.
        let behind = u64::MAX - 20;
        let e_behind = v.era(behind);
        assert_eq!(e_behind, 0);
        assert!(v.is_ahead(ahead, e_ahead));
        assert!(!v.is_ahead(behind, e_behind));
        assert_eq!(v.restart(ahead, e_ahead), ahead);
        assert_eq!(v.restart(behind, e_behind), v.now());
        v.advance_to(ahead);
        assert_eq!((v.now(), v.wraps()), (5, 1));
        assert!(!v.is_ahead(ahead, e_ahead));
        // Three quarters of a turn later a wrap-safe comparison reads the
        // stale value as ahead; the era does not.
        v.advance(3 << 62);
        assert!(vt_gt(behind, v.now()));
        assert!(!v.is_ahead(behind, e_behind));
        // Eras are compared modulo 2^32: across the wrap of the era itself,
        // a timestamp of the previous era is behind, one of the next ahead.
        let u = VirtualClock {
            now: 10,
            wraps: u64::from(u32::MAX),
        };
        assert!(!u.is_ahead(20, u.era(20).wrapping_sub(1)));
        assert!(u.is_ahead(5, u.era(5).wrapping_add(1)));
        assert_eq!(u.era(5), u32::MAX);
        assert_eq!(u.era(u64::MAX), u32::MAX - 1);
        // Behind V, before V's last wrap.
        let mut w = VirtualClock::at(3);
        w.advance(u64::MAX); // wraps once, now 2
        assert_eq!(w.era(u64::MAX - 1), 0);
        assert_eq!(w.era(1), 1);
    }

    #[test]
    fn virtual_length_is_exact_for_powers_of_two() {
        assert_eq!(vt_len(1500, 1), 1500 << FRAC_BITS);
        assert_eq!(vt_len(1500, 4), 375 << FRAC_BITS);
        assert_eq!(vt_len(1500, 0), 1500 << FRAC_BITS);
    }

    /// The shift taken for power-of-two weights gives the quotient of the
    /// division, for every power of two and lengths up to `u32::MAX`; other
    /// weights divide.
    #[test]
    fn virtual_length_is_the_quotient_for_every_weight() {
        let lens = [0u32, 1, 63, 64, 1499, 1500, 65_535, 65_536, u32::MAX];
        for len in lens {
            let x = u64::from(len) << FRAC_BITS;
            for k in 0..64 {
                let w = 1u64 << k;
                assert_eq!(vt_len(len, w), x / w, "len {len} weight 2^{k}");
                for w in [w + 1, w.wrapping_sub(1).max(1), w | 3, w.wrapping_mul(3)] {
                    assert_eq!(vt_len(len, w), x / w.max(1), "len {len} weight {w}");
                }
            }
            assert_eq!(vt_len(len, u64::MAX), x / u64::MAX);
        }
    }
}
