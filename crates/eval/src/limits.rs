//! The limits every experiment checks its sizes against before it
//! allocates or starts measuring: memory (a quarter of this machine's) and
//! planned work (operations a command may plan at most).
//!
//! Sizes come from users (`--packets`, `--buckets`, `--repeat`, …) and
//! their products can exceed any machine. Each experiment estimates what a
//! run needs from its sizes and asks [`check_memory`] first, so the answer
//! is one line naming the sizes and the limit instead of an aborted
//! allocation; [`try_vec`] is the second line of defence at the
//! allocations a user's size decides.

use std::fmt;

/// Most operations (enqueue/dequeue pairs, element inserts, …) a command
/// may plan in all: 2^40, about a day of measuring at tens of nanoseconds
/// each. A larger plan is a typo, not a measurement, and would only end
/// when killed.
pub const MAX_WORK: u64 = 1 << 40;

/// Where the memory limit comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitSource {
    /// A quarter of `MemTotal` in `/proc/meminfo`.
    QuarterOfMachine,
    /// The machine's memory is unknown: a fixed 1 GiB.
    Unknown,
}

/// The memory one experiment may use, in bytes, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes.
    pub bytes: u64,
    /// Why this much.
    pub source: LimitSource,
}

impl MemoryLimit {
    /// A quarter of this machine's memory (`MemTotal`), or 1 GiB where it
    /// cannot be read. A quarter leaves room for the rest of the machine
    /// and for what the estimate of a run does not count.
    pub fn of_machine() -> Self {
        let total = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| mem_total_bytes(&s));
        match total {
            Some(t) => MemoryLimit {
                bytes: t / 4,
                source: LimitSource::QuarterOfMachine,
            },
            None => MemoryLimit {
                bytes: 1 << 30,
                source: LimitSource::Unknown,
            },
        }
    }
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line
        .trim_start_matches("MemTotal:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            LimitSource::QuarterOfMachine => write!(
                f,
                "{} bytes, a quarter of this machine's memory",
                self.bytes
            ),
            LimitSource::Unknown => {
                write!(f, "{} bytes (this machine's memory is unknown)", self.bytes)
            }
        }
    }
}

/// A run that would need more memory than its limit, or an allocation the
/// system refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryError {
    /// The sizes that decide it, as the user gave them
    /// (`--packets 4294967296 with 1000 flows`).
    pub what: String,
    /// Bytes needed (an estimate; `None`: beyond any count).
    pub needed: Option<u128>,
    /// The limit.
    pub limit: MemoryLimit,
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.needed {
            Some(n) => write!(f, "{} needs about {n} bytes", self.what)?,
            None => write!(f, "{} needs more bytes than can be counted", self.what)?,
        }
        write!(f, "; the limit is {}", self.limit)
    }
}

impl std::error::Error for MemoryError {}

/// `Ok` if `needed` bytes (`None`: an overflowed estimate) fit the limit
/// of this machine.
pub fn check_memory(
    what: impl FnOnce() -> String,
    needed: Option<u128>,
) -> Result<(), MemoryError> {
    let limit = MemoryLimit::of_machine();
    match needed {
        Some(n) if n <= u128::from(limit.bytes) => Ok(()),
        _ => Err(MemoryError {
            what: what(),
            needed,
            limit,
        }),
    }
}

/// A vector with room for `n` elements, or the error if the system
/// refuses the allocation.
pub fn try_vec<T>(what: impl FnOnce() -> String, n: usize) -> Result<Vec<T>, MemoryError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| MemoryError {
        what: what(),
        needed: (n as u128).checked_mul(std::mem::size_of::<T>() as u128),
        limit: MemoryLimit::of_machine(),
    })?;
    Ok(v)
}

/// `a × b × …` in `u128`, `None` on overflow.
pub fn product(factors: &[u128]) -> Option<u128> {
    factors.iter().try_fold(1u128, |acc, &f| acc.checked_mul(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_total_in_kib() {
        let m = "MemTotal:       24000000 kB\nMemFree: 1 kB\n";
        assert_eq!(mem_total_bytes(m), Some(24_000_000 * 1024));
        assert_eq!(mem_total_bytes("nothing"), None);
    }

    #[test]
    fn sizes_beyond_the_limit_are_refused_with_both_numbers() {
        let e = check_memory(|| "--packets 2^40".into(), Some(1 << 100)).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("--packets 2^40 needs about"), "{text}");
        assert!(text.contains("the limit is"), "{text}");
        assert!(check_memory(|| "x".into(), Some(1)).is_ok());
        assert!(check_memory(|| "x".into(), None).is_err());
        assert_eq!(product(&[2, 3, 4]), Some(24));
        assert_eq!(product(&[u128::MAX, 2]), None);
    }

    #[test]
    fn a_refused_reservation_is_an_error_not_an_abort() {
        let e = try_vec::<u64>(|| "huge".into(), usize::MAX / 2).unwrap_err();
        assert!(e.to_string().starts_with("huge needs"), "{e}");
    }
}
