//! What a cost measurement plans, checked before any runner is built:
//! `--pairs` and `--repeat` of at least one, the pairs timed and warmed up
//! in all within [`MAX_WORK`], and the runners and samples within the
//! memory limit ([`crate::limits`]).

use super::{CostError, CostSetup, MeasureOptions, RunSample};
use crate::limits::{check_memory, product, MAX_WORK};

/// Bytes per flow of one runner: the scheduler's flow state and the
/// controller's (an estimate with room to spare).
const BYTES_PER_FLOW: u128 = 512;
/// Bytes per packet a runner is built to hold: the scheduler's slot, the
/// packet buffer and the `none` ring (an estimate).
const BYTES_PER_PACKET: u128 = 32;
/// Bytes per timed run: its sample and its entry in the report.
const BYTES_PER_RUN: u128 = std::mem::size_of::<RunSample>() as u128 + 16;

/// The size of a whole measurement: what `fairway bench` plans over all
/// its flow sets and patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Pairs per timed run (`--pairs`).
    pub pairs: u64,
    /// Timed runs per subject (`--repeat`).
    pub repeat: u64,
    /// Untimed pairs per subject and setup before the first timed run
    /// (`--warmup`; the largest if setups differ).
    pub warmup: u64,
    /// Subjects measured, the `none` baseline included.
    pub subjects: u64,
    /// Setups (flow sets × patterns, or sweep points).
    pub setups: u64,
}

impl Plan {
    /// Pairs run in all, `None` beyond `u128`.
    pub fn total_pairs(&self) -> Option<u128> {
        let per = product(&[u128::from(self.pairs), u128::from(self.repeat)])?
            .checked_add(u128::from(self.warmup))?;
        product(&[per, u128::from(self.subjects), u128::from(self.setups)])
    }

    /// `Ok` if every count is at least one and the pairs in all are at
    /// most [`MAX_WORK`].
    pub fn check(&self) -> Result<(), CostError> {
        if self.pairs == 0 {
            return Err(CostError::Zero { param: "--pairs" });
        }
        if self.repeat == 0 {
            return Err(CostError::Zero { param: "--repeat" });
        }
        match self.total_pairs() {
            Some(t) if t <= u128::from(MAX_WORK) => Ok(()),
            total => Err(CostError::TooMuchWork { plan: *self, total }),
        }
    }
}

/// `Ok` if [`measure_many`](super::measure_many)'s runners and samples fit
/// the memory limit.
pub(super) fn check_memory_of(
    setups: &[CostSetup],
    subjects: usize,
    opts: &MeasureOptions,
) -> Result<(), CostError> {
    let per_subject = setups.iter().try_fold(0u128, |acc, s| {
        let flows = product(&[s.flows.len() as u128, BYTES_PER_FLOW])?;
        let packets = product(&[u128::from(s.thresholds().high), BYTES_PER_PACKET])?;
        acc.checked_add(flows)?.checked_add(packets)
    });
    let runners = per_subject.and_then(|b| b.checked_mul(subjects as u128));
    let samples = product(&[
        opts.repeat as u128,
        subjects as u128,
        setups.len() as u128,
        BYTES_PER_RUN,
    ]);
    let needed = runners.and_then(|r| r.checked_add(samples?));
    let flows: Vec<String> = setups.iter().map(|s| s.flows.len().to_string()).collect();
    check_memory(
        || {
            format!(
                "{} flows (--flows) with {subjects} schedulers (the none baseline included) and --repeat {}",
                flows.join(", "),
                opts.repeat
            )
        },
        needed,
    )
    .map_err(CostError::Memory)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(pairs: u64, repeat: u64, warmup: u64) -> Plan {
        Plan {
            pairs,
            repeat,
            warmup,
            subjects: 2,
            setups: 1,
        }
    }

    #[test]
    fn zero_counts_and_plans_beyond_the_limit_are_refused() {
        assert!(plan(1, 1, 0).check().is_ok());
        let e = plan(0, 1, 0).check().unwrap_err().to_string();
        assert!(e.starts_with("--pairs must be at least 1"), "{e}");
        let e = plan(1, 0, 0).check().unwrap_err().to_string();
        assert!(e.starts_with("--repeat must be at least 1"), "{e}");
        // 2 subjects × 2^39 pairs is the limit exactly; one more is over.
        assert!(plan(1 << 39, 1, 0).check().is_ok());
        let e = plan(1 << 39, 1, 1).check().unwrap_err().to_string();
        assert!(e.contains("the limit is 1099511627776"), "{e}");
        let e = plan(u64::MAX, u64::MAX, u64::MAX).check().unwrap_err();
        assert!(e.to_string().contains("more than"), "{e}");
    }
}
