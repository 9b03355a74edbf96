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
//! 2^16 bytes, weights >= 1) one packet spans at most `2^40` units, leaving
//! more than 2^22 maximum-size packets of slack between compared values;
//! schedulers that can compare against a long-idle flow's stale timestamp
//! (WF2Q+) detect staleness separately.

/// A virtual time (see the module doc).
pub type VirtualTime = u64;

/// Fractional bits of a virtual time: one byte at weight 1 is `2^24` units.
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

/// Virtual length of a `len`-byte packet at weight `weight`: `len * 2^FRAC_BITS / weight`.
/// Exact to one unit for `len <= 2^32`, `weight >= 1`.
#[inline]
pub fn vt_len(len: u32, weight: u64) -> VirtualTime {
    ((len as u64) << FRAC_BITS) / weight.max(1)
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
    fn virtual_length_is_exact_for_powers_of_two() {
        assert_eq!(vt_len(1500, 1), 1500 << FRAC_BITS);
        assert_eq!(vt_len(1500, 4), 375 << FRAC_BITS);
    }
}
