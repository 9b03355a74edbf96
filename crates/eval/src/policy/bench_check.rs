//! The ranges of a [`BenchConfig`], checked before
//! [`run_all`](super::bench::run_all) builds anything: each value is used
//! as given or refused with a [`BenchConfigError`] naming it and its range.

use super::bench::BenchConfig;
use std::fmt;

/// Most pFabric flows of one sweep point: the tree allocates an entity and
/// eight packet slots per flow, about 2 GiB at this size.
pub const MAX_PFABRIC_FLOWS: u32 = 4_000_000;
/// Most paced flows: one tree entity, four packet slots and the shaper
/// baselines' state per flow.
pub const MAX_PACING_FLOWS: u32 = 1_000_000;

/// A [`BenchConfig`] field outside its range.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchConfigError {
    /// The field.
    pub field: &'static str,
    /// The value given.
    pub value: String,
    /// The allowed range, and why.
    pub range: &'static str,
}

impl fmt::Display for BenchConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} outside {}", self.field, self.value, self.range)
    }
}

impl std::error::Error for BenchConfigError {}

impl BenchConfig {
    /// Checks every field's range (see the module doc).
    pub fn check(&self) -> Result<(), BenchConfigError> {
        let err = |field, value: String, range| {
            Err(BenchConfigError {
                field,
                value,
                range,
            })
        };
        let counts = [
            (
                &self.pfabric_flows,
                "pfabric_flows",
                MAX_PFABRIC_FLOWS,
                "1..=4000000 (each flow is a tree entity and 8 packet slots)",
            ),
            (
                &self.hclock_children,
                "hclock_children",
                MAX_PACING_FLOWS,
                "1..=1000000 (each child is a tree entity and 4 packet slots)",
            ),
        ];
        for (list, field, max, range) in counts {
            if let Some(&n) = list.iter().find(|&&n| n == 0 || n > max) {
                return err(field, n.to_string(), range);
            }
        }
        if self.pacing_flows == 0 || self.pacing_flows > MAX_PACING_FLOWS {
            return err(
                "pacing_flows",
                self.pacing_flows.to_string(),
                "1..=1000000 (each flow is a tree entity and 4 packet slots)",
            );
        }
        if !(self.target_mpps.is_finite() && self.target_mpps > 0.0) {
            return err("target_mpps", self.target_mpps.to_string(), "finite > 0");
        }
        if !(self.pacing_secs.is_finite() && self.pacing_secs > 0.0 && self.pacing_secs <= 3600.0) {
            return err(
                "pacing_secs",
                self.pacing_secs.to_string(),
                "finite, > 0 and <= 3600 s of simulated pacing",
            );
        }
        if self.fct_flows == 0 {
            return err("fct_flows", "0".into(), "1..");
        }
        if self.batches == 0 {
            return err("batches", "0".into(), "1..");
        }
        if self.ops == 0 {
            return err("ops", "0".into(), "1..");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_field_is_refused_one_past_its_range() {
        assert!(BenchConfig::quick().check().is_ok());
        assert!(BenchConfig::full().check().is_ok());
        type Case = (&'static str, fn(&mut BenchConfig));
        let cases: [Case; 8] = [
            ("pfabric_flows 4000001 outside", |c| {
                c.pfabric_flows = vec![4_000_001]
            }),
            ("pfabric_flows 0 outside", |c| c.pfabric_flows = vec![1, 0]),
            ("pacing_flows 0 outside", |c| c.pacing_flows = 0),
            ("pacing_flows 1000001 outside", |c| {
                c.pacing_flows = 1_000_001
            }),
            ("target_mpps NaN outside", |c| c.target_mpps = f64::NAN),
            ("pacing_secs inf outside", |c| c.pacing_secs = f64::INFINITY),
            ("batches 0 outside", |c| c.batches = 0),
            ("ops 0 outside", |c| c.ops = 0),
        ];
        for (want, set) in cases {
            let mut c = BenchConfig::quick();
            set(&mut c);
            let e = c.check().unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
        let mut c = BenchConfig::quick();
        c.pfabric_flows = vec![MAX_PFABRIC_FLOWS];
        c.pacing_flows = MAX_PACING_FLOWS;
        assert!(c.check().is_ok());
    }
}
