//! The traffic patterns of the test environment and their thresholds: the
//! one pattern list and grammar of both the cost harness ([`crate::cost`])
//! and the guarantee experiment ([`crate::guarantees`]), both driven by
//! [`super::controller`].
//!
//! * the QFQ paper §7.1: `small` / `large` (bursts of 5N / 30N packets, then the
//!   scheduler is drained completely) and `full` (total backlog kept between
//!   3N and 30N), where N is the number of flows;
//! * the QFQ+ paper §8: `smooth` (round-robin fill, each flow oscillating between 0
//!   and 30 packets) and `bursty` (bursts of 1..=16·w packets to random
//!   flows, same oscillation);
//! * `alternate`, the FreeBSD dummynet harness configuration the C
//!   reference figures were taken with: every packet goes to the flow with
//!   the smallest backlog and the total backlog is held between N and N+1,
//!   so enqueues and dequeues alternate one by one.

use serde::Serialize;
use std::fmt;

/// Largest backlog of one flow, in packets (the QFQ+ paper §8: flows oscillate
/// between 0 and 30 packets; dummynet's harness has 30 backlog levels).
pub const PER_FLOW_CAP: u32 = 30;

/// The enqueue/dequeue pattern driven by a controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Bursts of 5N packets to the least backlogged flows, then drain.
    Small,
    /// Bursts of 30N packets to the least backlogged flows, then drain.
    Large,
    /// Backlog between 3N and 30N, refills go to the least backlogged flows.
    Full,
    /// Round-robin fill of every flow up to 30 packets, then drain.
    Smooth,
    /// Random bursts of 1..=16·w packets to random non-full flows up to 30
    /// packets each, then drain.
    Bursty,
    /// dummynet's harness: backlog between N and N+1, least backlogged flow.
    Alternate,
}

/// How the enqueue phase chooses the flow of the next packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowPick {
    /// Flows 0, 1, …, N−1, 0, … (no per-packet bookkeeping at all).
    Cyclic,
    /// The flow with the smallest backlog, ties first-come first-served
    /// (backlog-level lists with a bitmask, as dummynet's controller).
    Least,
    /// A random non-full flow, a random burst of 1..=16·w packets.
    Bursty,
}

/// The thresholds of a pattern for N flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// The dequeue phase stops at this total backlog.
    pub low: u64,
    /// The enqueue phase stops at this total backlog.
    pub high: u64,
    /// Largest backlog of one flow.
    pub per_flow_cap: u32,
    /// Flow choice of the enqueue phase.
    pub pick: FlowPick,
}

impl Pattern {
    /// Every pattern, in the order tables list them.
    pub const ALL: &'static [Pattern] = &[
        Pattern::Small,
        Pattern::Large,
        Pattern::Full,
        Pattern::Smooth,
        Pattern::Bursty,
        Pattern::Alternate,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Small => "small",
            Pattern::Large => "large",
            Pattern::Full => "full",
            Pattern::Smooth => "smooth",
            Pattern::Bursty => "bursty",
            Pattern::Alternate => "alternate",
        }
    }

    /// Parses a command-line name.
    pub fn parse(text: &str) -> Option<Pattern> {
        let text = text.trim().to_ascii_lowercase();
        Self::ALL.iter().copied().find(|p| p.name() == text)
    }

    /// How the enqueue phase chooses flows.
    pub fn pick(self) -> FlowPick {
        match self {
            Pattern::Small | Pattern::Large | Pattern::Full | Pattern::Alternate => FlowPick::Least,
            Pattern::Smooth => FlowPick::Cyclic,
            Pattern::Bursty => FlowPick::Bursty,
        }
    }

    /// The thresholds for `n` flows.
    pub fn thresholds(self, n: u32) -> Thresholds {
        let n = u64::from(n.max(1));
        let cap = PER_FLOW_CAP;
        let (low, high) = match self {
            Pattern::Small => (0, 5 * n),
            Pattern::Large => (0, 30 * n),
            Pattern::Full => (3 * n, 30 * n),
            Pattern::Smooth | Pattern::Bursty => (0, u64::from(cap) * n),
            Pattern::Alternate => (n, n + 1),
        };
        Thresholds {
            low,
            high,
            per_flow_cap: cap,
            pick: self.pick(),
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A pattern list that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternError {
    /// A name that is no pattern.
    Unknown(String),
    /// The list names no pattern.
    Empty,
    /// An empty entry between commas.
    EmptyEntry,
    /// A pattern named twice.
    Duplicate(Pattern),
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Unknown(piece) => {
                let names: Vec<&str> = Pattern::ALL.iter().map(|p| p.name()).collect();
                write!(
                    f,
                    "--pattern: unknown pattern '{piece}' (known: {})",
                    names.join(", ")
                )
            }
            PatternError::Empty => write!(f, "--pattern: no pattern given"),
            PatternError::EmptyEntry => write!(f, "--pattern: an empty entry between commas"),
            PatternError::Duplicate(p) => {
                write!(f, "--pattern: {p} is named twice (each pattern runs once)")
            }
        }
    }
}

impl std::error::Error for PatternError {}

/// Parses a comma-separated list of patterns, each named once.
pub fn parse_patterns(text: &str) -> Result<Vec<Pattern>, PatternError> {
    if text.trim().is_empty() {
        return Err(PatternError::Empty);
    }
    let mut out = Vec::new();
    for piece in text.split(',').map(str::trim) {
        if piece.is_empty() {
            return Err(PatternError::EmptyEntry);
        }
        let p = Pattern::parse(piece).ok_or_else(|| PatternError::Unknown(piece.to_string()))?;
        if out.contains(&p) {
            return Err(PatternError::Duplicate(p));
        }
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_thresholds_follow_the_papers() {
        for &p in Pattern::ALL {
            assert_eq!(Pattern::parse(p.name()), Some(p));
        }
        assert_eq!(Pattern::Small.thresholds(10).high, 50);
        assert_eq!(Pattern::Large.thresholds(10).high, 300);
        let full = Pattern::Full.thresholds(10);
        assert_eq!((full.low, full.high), (30, 300));
        let alt = Pattern::Alternate.thresholds(64);
        assert_eq!((alt.low, alt.high), (64, 65));
        assert!(parse_patterns("smooth,nope").is_err());
        assert_eq!(parse_patterns("smooth, bursty").unwrap().len(), 2);
        let e = parse_patterns("smooth, bursty,smooth").unwrap_err();
        assert_eq!(e, PatternError::Duplicate(Pattern::Smooth));
        assert_eq!(parse_patterns("smooth,"), Err(PatternError::EmptyEntry));
        assert_eq!(parse_patterns(" "), Err(PatternError::Empty));
    }
}
