//! The random draws of the traffic controller ([`super::controller`]): which
//! non-full flow a `bursty` burst goes to and how long it is (the QFQ+ paper §8:
//! `1..=16·w` packets for a flow of weight `w`), and the coin of the random
//! phase switch (the QFQ+ paper §8.3).
//!
//! Two sources, chosen at compile time by the controller's user:
//! * [`StdRng`] with `rand`'s uniform sampling, for the guarantee
//!   experiment: its seeded figures depend on the exact sequence, and the
//!   per-packet size draws of the link simulation share the generator;
//! * [`SplitMix64`], for the cost harness, whose draws are part of every
//!   timed figure: one multiply-xorshift step per *burst*, both numbers
//!   taken from its two halves by a multiply-shift (no division, no
//!   rejection loop).

use rand::rngs::StdRng;
use rand::Rng;

/// The random draws of the controller.
pub trait Draws {
    /// A bursty enqueue: an index `i` into `not_full` (which is not empty),
    /// its flow `f = not_full[i]` and a burst size in `1..=16·w_f`, where
    /// `w_f = weights[f]` is at least 1.
    fn bursty(&mut self, not_full: &[u32], weights: &[u32]) -> (usize, u32, u64);
    /// True with probability `p` (in `[0, 1]`).
    fn coin(&mut self, p: f64) -> bool;
}

impl Draws for StdRng {
    #[inline]
    fn bursty(&mut self, not_full: &[u32], weights: &[u32]) -> (usize, u32, u64) {
        let i = self.random_range(0..not_full.len());
        let f = not_full[i];
        let w = weights[f as usize];
        (i, f, self.random_range(1..=16 * u64::from(w)))
    }

    fn coin(&mut self, p: f64) -> bool {
        self.random_bool(p)
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): one add and two multiply-xorshift
/// rounds per 64 bits, deterministic for a seed and good enough to pick
/// flows and burst sizes.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `x * range / 2^32`: a value in `0..range` from 32 random bits (Lemire's
/// multiply-shift; the bias, below `range / 2^32`, is irrelevant here).
#[inline(always)]
fn scale(x: u32, range: u64) -> u64 {
    (u64::from(x) * range) >> 32
}

impl Draws for SplitMix64 {
    /// Both numbers from one step: the low half picks the flow, the high
    /// half the burst.
    #[inline(always)]
    fn bursty(&mut self, not_full: &[u32], weights: &[u32]) -> (usize, u32, u64) {
        let r = self.next_u64();
        let i = scale(r as u32, not_full.len() as u64) as usize;
        let f = not_full[i];
        let w = u64::from(weights[f as usize]);
        (i, f, 1 + scale((r >> 32) as u32, 16 * w))
    }

    /// 53 random bits against `p · 2^53`.
    fn coin(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64) < p * (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Both sources stay in range: the index inside `not_full`, the burst
    /// in `1..=16·w`, and the burst reaches both ends.
    #[test]
    fn bursty_draws_stay_in_range() {
        let not_full = [3u32, 0, 2];
        let weights = [1u32, 9, 2, 4];
        let mut sm = SplitMix64(5);
        let mut std = StdRng::seed_from_u64(5);
        let (mut lo, mut hi) = (u64::MAX, 0);
        for _ in 0..20_000 {
            for (i, f, b) in [
                sm.bursty(&not_full, &weights),
                std.bursty(&not_full, &weights),
            ] {
                assert_eq!(not_full[i], f);
                let max = 16 * u64::from(weights[f as usize]);
                assert!((1..=max).contains(&b), "burst {b} of flow {f}");
                if f == 3 {
                    lo = lo.min(b);
                    hi = hi.max(b);
                }
            }
        }
        assert_eq!((lo, hi), (1, 64));
    }

    #[test]
    fn coins_follow_their_probability() {
        let mut sm = SplitMix64(9);
        let heads = (0..10_000).filter(|_| sm.coin(0.25)).count();
        assert!((2_300..2_700).contains(&heads), "{heads}");
        assert!(!(0..1000).any(|_| sm.coin(0.0)));
        assert!((0..1000).all(|_| sm.coin(1.0)));
    }
}
