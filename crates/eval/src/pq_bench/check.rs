//! The sizes of a fill-drain configuration and of a whole sweep, checked
//! before anything is allocated: each value in its range, the elements
//! within the queues' `u32` handles, the memory within the limit and the
//! planned inserts within [`MAX_WORK`].

use super::{FillDrainConfig, PqBenchError};
use crate::limits::{check_memory, product, MAX_WORK};

/// Bytes per bucket: the workload's shuffled bucket list and the queues'
/// per-bucket state (an estimate; about 70 are in use).
const BYTES_PER_BUCKET: u128 = 128;
/// Bytes per element: its rank, the queue's element state and the
/// yardstick's slot (an estimate; 20 to 40 are in use).
const BYTES_PER_ELEMENT: u128 = 64;

impl FillDrainConfig {
    /// Occupied buckets: `occupancy`% of `buckets`, rounded to the nearest.
    pub fn occupied(&self) -> u64 {
        (u64::from(self.buckets) * u64::from(self.occupancy) + 50) / 100
    }

    /// Elements of one fill: occupied buckets × `per_bucket`.
    pub fn elements(&self) -> u64 {
        self.occupied() * u64::from(self.per_bucket)
    }

    /// `Ok` if every value is in its range and one fill-drain fits the
    /// memory limit.
    pub fn check(&self) -> Result<(), PqBenchError> {
        let range = |param, value: u64, range: &str| {
            Err(PqBenchError::OutOfRange {
                param,
                value,
                range: range.to_string(),
            })
        };
        if self.buckets < 2 {
            return range("--buckets", self.buckets.into(), "2..=4294967295");
        }
        if self.per_bucket == 0 {
            return range("--per-bucket", 0, "1..=4294967295");
        }
        if !(1..=100).contains(&self.occupancy) {
            return range("--occupancy", self.occupancy.into(), "1..=100 (percent)");
        }
        if self.min_ops == 0 {
            return range("--min-ops", 0, "1..");
        }
        if self.batches == 0 {
            return range("--batches", 0, "1..=4294967295");
        }
        if self.occupied() == 0 {
            return Err(PqBenchError::NoBucketOccupied {
                buckets: self.buckets,
                occupancy: self.occupancy,
            });
        }
        if self.elements() > u64::from(u32::MAX) {
            return Err(PqBenchError::TooManyElements {
                elements: self.elements(),
            });
        }
        let needed = product(&[u128::from(self.buckets), BYTES_PER_BUCKET]).and_then(|b| {
            b.checked_add(product(&[u128::from(self.elements()), BYTES_PER_ELEMENT])?)
        });
        check_memory(
            || {
                format!(
                    "--buckets {} with --per-bucket {} at --occupancy {} ({} elements)",
                    self.buckets,
                    self.per_bucket,
                    self.occupancy,
                    self.elements()
                )
            },
            needed,
        )
        .map_err(PqBenchError::Memory)
    }
}

/// Most rounds of a sweep: rounds spread one sweep over minutes so that a
/// shared machine's drifting speed shows; a thousand rounds of the default
/// sweep already take hours.
pub const MAX_ROUNDS: u32 = 1000;

/// Inserts a sweep plans at most: each round, each configuration fills at
/// least `max(min_ops, elements)` elements for its first batch (later
/// batches stop after a quarter second).
pub fn planned_inserts(configs: &[FillDrainConfig], rounds: u32) -> Option<u128> {
    let per_round = configs.iter().try_fold(0u128, |acc, c| {
        acc.checked_add(u128::from(c.min_ops.max(c.elements())))
    })?;
    product(&[per_round, u128::from(rounds)])
}

/// `Ok` if every configuration is in range ([`FillDrainConfig::check`]),
/// `rounds` is in `1..=`[`MAX_ROUNDS`] and the sweep plans at most [`MAX_WORK`]
/// inserts.
pub fn check_sweep(configs: &[FillDrainConfig], rounds: u32) -> Result<(), PqBenchError> {
    if !(1..=MAX_ROUNDS).contains(&rounds) {
        return Err(PqBenchError::OutOfRange {
            param: "--rounds",
            value: rounds.into(),
            range: format!(
                "1..={MAX_ROUNDS} (rounds spread one sweep over minutes; more repeat it for hours)"
            ),
        });
    }
    for c in configs {
        c.check()?;
    }
    match planned_inserts(configs, rounds) {
        Some(t) if t <= u128::from(MAX_WORK) => Ok(()),
        total => Err(PqBenchError::TooMuchWork {
            configs: configs.len(),
            rounds,
            total,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::QueueKind;
    use super::*;

    fn cfg(buckets: u32, per_bucket: u32, occupancy: u32, min_ops: u64) -> FillDrainConfig {
        FillDrainConfig {
            queue: QueueKind::Cffs,
            buckets,
            per_bucket,
            occupancy,
            alpha: 16,
            seed: 1,
            min_ops,
            batches: 1,
        }
    }

    #[test]
    fn each_value_at_its_limit_and_one_past_it() {
        assert!(cfg(2, 1, 100, 1).check().is_ok());
        let e = cfg(1, 1, 100, 1).check().unwrap_err().to_string();
        assert_eq!(e, "--buckets 1 must be in 2..=4294967295");
        let e = cfg(16, 1, 101, 1).check().unwrap_err().to_string();
        assert_eq!(e, "--occupancy 101 must be in 1..=100 (percent)");
        let e = cfg(16, 0, 100, 1).check().unwrap_err().to_string();
        assert!(e.starts_with("--per-bucket 0"), "{e}");
        let e = cfg(16, 1, 100, 0).check().unwrap_err().to_string();
        assert!(e.starts_with("--min-ops 0"), "{e}");
        // 1% of 49 buckets rounds to none; of 50, to one.
        assert!(cfg(49, 1, 1, 1).check().is_err());
        assert!(cfg(50, 1, 1, 1).check().is_ok());
        let e = cfg(2, u32::MAX, 100, 1).check().unwrap_err().to_string();
        assert!(e.contains("8589934590 elements"), "{e}");
        let e = cfg(u32::MAX, 1, 100, 1).check().unwrap_err().to_string();
        assert!(e.contains("the limit is"), "{e}");
    }

    #[test]
    fn sweeps_beyond_the_work_limit_are_refused() {
        let c = [cfg(16, 1, 100, 1 << 30)];
        assert!(check_sweep(&c, 1000).is_ok());
        let e = check_sweep(&c, 1001).unwrap_err().to_string();
        assert!(e.starts_with("--rounds 1001 must be in 1..=1000"), "{e}");
        assert!(check_sweep(&c, 0).is_err());
        let c = [cfg(16, 1, 100, 1 << 31)];
        assert!(check_sweep(&c, 512).is_ok());
        let e = check_sweep(&c, 513).unwrap_err().to_string();
        assert!(e.contains("the limit is 1099511627776"), "{e}");
    }
}
