//! [`vt_len`](crate::sched::vtime::vt_len) by a precomputed reciprocal:
//! the same value, bit for bit, with a multiply instead of a 64-bit divide.
//!
//! WF2Q+ divides by a flow's weight (its finish time, `F = S + l·2^24/w`)
//! and by the sum of the weights (the advance of `V`) on every dequeue; the
//! divisors change only when flows are configured. A 64-bit `div` takes tens
//! of cycles on the machines fairway is measured on, a multiply three or
//! four. dummynet's WF2Q+ multiplies by a fixed-point inverse `2^k/w`
//! (`inv_w`) and accepts the truncation; this module picks the inverse so
//! that the result is the *exact* quotient, so the exact WF2Q+ stays exact.
//!
//! # Derivation (Granlund & Montgomery, "Division by invariant integers
//! using multiplication", PLDI 1994, Theorem 4.2)
//!
//! The dividend is `n = len · 2^FRAC_BITS` with `len < 2^32`, so
//! `n < 2^N` with `N = 32 + FRAC_BITS = 56` bits. For a divisor `d ≥ 1` let
//! `ℓ = ⌈log₂ d⌉` (0 for `d = 1`), `k = N + ℓ` and `m = ⌈2^k / d⌉`. Write
//! `m·d = 2^k + e` with `0 ≤ e < d ≤ 2^ℓ = 2^(k−N)`. Then
//!
//! `n·m / 2^k = n/d + n·e / (d·2^k)`, and `n·e / (d·2^k) < 2^N · 2^(k−N) / (d·2^k) = 1/d`.
//!
//! `n/d = q + r/d` with `r ≤ d − 1`, so `n·m/2^k < q + (r+1)/d ≤ q + 1`:
//! `⌊n·m / 2^k⌋ = q = ⌊n/d⌋` for every `n < 2^N`.
//!
//! Sizes: `m ≤ 2^k/d + 1 < 2^(N+ℓ)/2^(ℓ−1) + 1`, so `m < 2^57 + 1` fits a
//! `u64`; `n·m < 2^113` fits a `u128`; `k ≤ N + 64 = 120 < 128`. The hot
//! path is one 64×64→128-bit multiply and a 128-bit shift.

use crate::sched::vtime::{VirtualTime, FRAC_BITS};

/// Bits of the dividend `len · 2^FRAC_BITS` (`len` is a `u32`).
const DIVIDEND_BITS: u32 = 32 + FRAC_BITS;
const _: () = assert!(
    DIVIDEND_BITS + 64 < 128,
    "k = N + ⌈log₂ d⌉ must stay below 128"
);

/// The exact reciprocal of a weight (or a sum of weights) for
/// [`vt_len`](Self::vt_len).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VtDivisor {
    /// `⌈2^shift / d⌉`.
    mul: u64,
    /// `DIVIDEND_BITS + ⌈log₂ d⌉`.
    shift: u32,
}

impl VtDivisor {
    /// The reciprocal of `weight`; 0 is taken as 1, as
    /// [`vt_len`](crate::sched::vtime::vt_len) does.
    pub const fn new(weight: u64) -> Self {
        let d = if weight == 0 { 1 } else { weight };
        let ceil_log2 = 64 - (d - 1).leading_zeros();
        let shift = DIVIDEND_BITS + ceil_log2;
        let mul = ((1u128 << shift) - 1) / d as u128 + 1;
        Self {
            mul: mul as u64,
            shift,
        }
    }

    /// `len · 2^FRAC_BITS / weight`, truncated: equal to
    /// [`vt_len`](crate::sched::vtime::vt_len)`(len, weight)` for every
    /// `len` and `weight` (module doc).
    #[inline(always)]
    pub fn vt_len(self, len: u32) -> VirtualTime {
        let n = u128::from(len) << FRAC_BITS;
        ((n * u128::from(self.mul)) >> self.shift) as VirtualTime
    }
}

impl Default for VtDivisor {
    /// The reciprocal of 1.
    fn default() -> Self {
        Self::new(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::vtime::vt_len;
    use proptest::prelude::*;

    /// Divisors at the edges of the derivation: 1, powers of two and their
    /// neighbours (where `ℓ` changes), and the largest.
    fn edge_divisors() -> impl Iterator<Item = u64> {
        (0..64)
            .flat_map(|b| {
                let p = 1u64 << b;
                [p.wrapping_sub(1), p, p.wrapping_add(1)]
            })
            .chain([3, 7, 1000, 1_000_003, u32::MAX as u64, u64::MAX, 0])
    }

    /// Dividends at the edges: 0, 1, the largest, and around multiples of
    /// the divisor (where the quotient steps).
    fn edge_lens(d: u64) -> impl Iterator<Item = u32> {
        let near = |x: u64| [x.saturating_sub(1), x, x.saturating_add(1)];
        let step = (d >> FRAC_BITS).clamp(1, u32::MAX as u64);
        [0u64, 1, 1500, u32::MAX as u64 - 1, u32::MAX as u64]
            .into_iter()
            .chain(near(step))
            .chain(near(step.saturating_mul(1000)))
            .filter(|&x| x <= u32::MAX as u64)
            .map(|x| x as u32)
    }

    #[test]
    fn equals_the_division_at_the_edges() {
        for d in edge_divisors() {
            let r = VtDivisor::new(d);
            for len in edge_lens(d) {
                assert_eq!(r.vt_len(len), vt_len(len, d), "len {len}, weight {d}");
            }
        }
    }

    proptest! {
        #[test]
        fn equals_the_division(len in any::<u32>(), d in any::<u64>(), small in 1u64..100_000) {
            prop_assert_eq!(VtDivisor::new(d).vt_len(len), vt_len(len, d));
            prop_assert_eq!(VtDivisor::new(small).vt_len(len), vt_len(len, small));
        }
    }

    /// The check can fail: dummynet's inverse (`len · ⌊2^32/w⌋ >> 8` for 24
    /// fractional bits, a 32-bit fixed-point `inv_w`) is not the quotient,
    /// and the comparison above sees it.
    #[test]
    fn an_inexact_inverse_is_caught() {
        let inexact = |len: u32, w: u64| {
            ((u128::from(len) * u128::from((1u64 << 32) / w)) >> (32 - FRAC_BITS)) as u64
        };
        let wrong = edge_divisors()
            .filter(|&d| d > 0 && d < (1 << 32))
            .flat_map(|d| edge_lens(d).map(move |len| (len, d)))
            .filter(|&(len, d)| inexact(len, d) != vt_len(len, d))
            .count();
        assert!(wrong > 0);
    }
}
