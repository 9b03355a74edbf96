//! The weights by which a parent's children share its excess: the ones
//! the plan gives, or, where no sibling has one, in proportion to the
//! children's guarantees. One function, used by the check (which refuses
//! what a scheduler cannot take) and by the data path (which builds each
//! node's scheduler with exactly these weights).
//!
//! - Some sibling has a `weight`: each child its own, 1 for those
//!   without.
//! - No sibling has one: each child's guarantee in units of the greatest
//!   common divisor of the siblings' nonzero guarantees (exact
//!   proportions, no rounding); a child without a guarantee weighs one
//!   such unit; all weigh 1 if no sibling has a guarantee.
//!
//! The proportions are reduced by their gcd even though a reload may
//! then change every sibling's weight (a child whose guarantee shares a
//! smaller divisor with its siblings'): the smallest exact weights are
//! what the check can promise to fit a scheduler's limits, and such a
//! reload reweights each sibling's flow in place (O(siblings · log) in
//! its pause, the tokens kept), while the usual change (a circuit of a
//! plan whose rates are multiples of the same unit added or removed)
//! reweights none.
//!
//! A node's scheduler takes weights of at most [`MAX_WEIGHT`] each and
//! [`MAX_WEIGHT_SUM`] together (the range in which every scheduler of
//! fairway-core is exact); a group outside it is refused, never scaled.

use fairway_core::Limits;

/// The largest weight a scheduler takes.
pub const MAX_WEIGHT: u32 = Limits::DEFAULT.max_weight;
/// The largest sum of the weights of one parent's children.
pub const MAX_WEIGHT_SUM: u64 = Limits::DEFAULT.max_weight_sum;

/// A child as the rule sees it: its weight (if given) and its guarantee
/// (bit/s, 0 for none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kid {
    /// The plan's weight.
    pub weight: Option<u32>,
    /// Its guarantee in the direction, bit/s.
    pub guarantee: u64,
}

/// Weights a scheduler cannot take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// Given weights whose sum exceeds [`MAX_WEIGHT_SUM`].
    Sum {
        /// Their sum.
        sum: u64,
    },
    /// Guarantees whose proportions, in units of their gcd, need a
    /// weight above [`MAX_WEIGHT`] or a sum above [`MAX_WEIGHT_SUM`].
    Proportions {
        /// The unit, bit/s.
        unit: u64,
        /// The largest weight.
        largest: u64,
        /// Their sum.
        sum: u64,
    },
}

impl std::fmt::Display for ShareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            ShareError::Sum { sum } => write!(
                f,
                "the children's weights sum to {sum}; a node's scheduler takes at most \
                 {MAX_WEIGHT_SUM} (the range where its arithmetic is exact)"
            ),
            ShareError::Proportions { unit, largest, sum } => write!(
                f,
                "without weights the children share the excess in proportion to their \
                 guarantees: in units of {unit} bit/s (their gcd) the largest is {largest} \
                 and the sum {sum}, where a node's scheduler takes at most {MAX_WEIGHT} and \
                 {MAX_WEIGHT_SUM}; give the children weights"
            ),
        }
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The weights of one parent's children, in order.
pub fn weights(kids: &[Kid]) -> Result<Vec<u32>, ShareError> {
    if kids.iter().any(|k| k.weight.is_some()) {
        let w: Vec<u32> = kids.iter().map(|k| k.weight.unwrap_or(1)).collect();
        let sum = w.iter().map(|&x| u64::from(x)).sum::<u64>();
        if sum > MAX_WEIGHT_SUM || w.iter().any(|&x| x > MAX_WEIGHT) {
            return Err(ShareError::Sum { sum });
        }
        return Ok(w);
    }
    let unit = kids.iter().fold(0, |g, k| gcd(g, k.guarantee));
    if unit == 0 {
        return Ok(vec![1; kids.len()]);
    }
    let units: Vec<u64> = kids.iter().map(|k| (k.guarantee / unit).max(1)).collect();
    let largest = units.iter().copied().max().unwrap_or(1);
    let sum = units.iter().fold(0u64, |a, &b| a.saturating_add(b));
    if largest > u64::from(MAX_WEIGHT) || sum > MAX_WEIGHT_SUM {
        return Err(ShareError::Proportions { unit, largest, sum });
    }
    Ok(units.into_iter().map(|u| u as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(weight: Option<u32>, guarantee: u64) -> Kid {
        Kid { weight, guarantee }
    }

    #[test]
    fn given_weights_are_used_and_the_others_count_one() {
        let w = weights(&[k(Some(3), 0), k(None, 5_000_000), k(Some(7), 1)]);
        assert_eq!(w, Ok(vec![3, 1, 7]));
        let many = vec![k(Some(MAX_WEIGHT), 0); 257];
        assert_eq!(
            weights(&many),
            Err(ShareError::Sum {
                sum: 257 * u64::from(MAX_WEIGHT)
            })
        );
    }

    #[test]
    fn guarantees_give_exact_proportions_or_are_refused() {
        let w = weights(&[k(None, 20_000_000), k(None, 5_000_000), k(None, 0)]);
        assert_eq!(w, Ok(vec![4, 1, 1]));
        assert_eq!(weights(&[k(None, 0), k(None, 0)]), Ok(vec![1, 1]));
        // 1 Gbit/s next to 1 bit/s: 10^9 units.
        let e = weights(&[k(None, 1_000_000_000), k(None, 1)]).unwrap_err();
        assert!(matches!(
            e,
            ShareError::Proportions {
                unit: 1,
                largest: 1_000_000_000,
                ..
            }
        ));
        assert!(e.to_string().contains("give the children weights"), "{e}");
    }
}
