//! Flow identifiers, per-flow configuration and the validated ranges.
//!
//! Weights are integers (as in Linux and FreeBSD): a flow's share of the link
//! is `weight / Σ weights` over all configured flows (the QFQ+ paper §8).

use crate::error::ConfigError;
pub use crate::flow_id::FlowId;

/// Configuration of one flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowConfig {
    /// Integer weight, `limits.max_weight >= weight >= 1`.
    pub weight: u32,
    /// Largest packet (bytes) the flow may enqueue, `1..=limits.max_packet_len`.
    pub max_len: u32,
}

impl FlowConfig {
    /// A flow of the given weight and maximum packet length (bytes).
    pub const fn new(weight: u32, max_len: u32) -> Self {
        Self { weight, max_len }
    }
}

/// The ranges a scheduler accepts; anything outside is a typed error.
///
/// The defaults are the ranges in which every scheduler of this crate is
/// exact (see each module's doc for its arithmetic):
/// weights `1..=65536`, packets `1..=65536` bytes (64 KiB, a TSO/GSO segment),
/// weight sum `<= 2^24`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted weight.
    pub max_weight: u32,
    /// Largest accepted `max_len`, in bytes.
    pub max_packet_len: u32,
    /// Largest accepted sum of the weights of all configured flows.
    pub max_weight_sum: u64,
}

impl Limits {
    /// The default limits (see the type doc).
    pub const DEFAULT: Limits = Limits {
        max_weight: 1 << 16,
        max_packet_len: 1 << 16,
        max_weight_sum: 1 << 24,
    };

    /// The ranges both `self` and `other` accept: a scheduler combines the
    /// caller's limits with its own this way.
    pub const fn intersect(self, other: Limits) -> Limits {
        const fn min32(a: u32, b: u32) -> u32 {
            if a < b {
                a
            } else {
                b
            }
        }
        Limits {
            max_weight: min32(self.max_weight, other.max_weight),
            max_packet_len: min32(self.max_packet_len, other.max_packet_len),
            max_weight_sum: if self.max_weight_sum < other.max_weight_sum {
                self.max_weight_sum
            } else {
                other.max_weight_sum
            },
        }
    }
}

impl Limits {
    /// `Ok` if every field of `self` is at most the same field of
    /// `allowed`; otherwise the error a flow at `self`'s maximum would get
    /// from a scheduler with limits `allowed`, naming the value and the
    /// largest accepted. Constructors that reject instead of intersecting
    /// use this.
    pub const fn check_within(self, allowed: Limits) -> Result<(), ConfigError> {
        if self.max_weight > allowed.max_weight {
            return Err(ConfigError::InvalidWeight {
                weight: self.max_weight,
                max: allowed.max_weight,
            });
        }
        if self.max_packet_len > allowed.max_packet_len {
            return Err(ConfigError::InvalidMaxLen {
                max_len: self.max_packet_len,
                max: allowed.max_packet_len,
            });
        }
        if self.max_weight_sum > allowed.max_weight_sum {
            return Err(ConfigError::WeightSumOverflow {
                sum: self.max_weight_sum,
                max: allowed.max_weight_sum,
            });
        }
        Ok(())
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}
