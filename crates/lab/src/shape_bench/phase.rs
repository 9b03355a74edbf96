//! The bench's phases, and the set of them a run measures (`--phases`):
//! one phase alone is a short run when only its figures are wanted, e.g.
//! the sparse flow's delay over several runs. Both sides always run the
//! same phases.

use serde::Serialize;
use std::fmt;

/// One phase of the bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Rates under overload (max held, min and weighted excess, 100
    /// Mbit/s and 1 Gbit/s).
    Rates,
    /// A sparse flow's delay beside a bulk flow in one circuit.
    Delay,
    /// Forwarding flat out at 64-byte and 1514-byte frames.
    Forwarding,
    /// Reading every circuit's statistics.
    Statistics,
    /// The configuration change under traffic.
    Change,
}

impl Phase {
    /// Every phase, in the order a run measures them.
    pub const ALL: [Phase; 5] = [
        Phase::Rates,
        Phase::Delay,
        Phase::Forwarding,
        Phase::Statistics,
        Phase::Change,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Rates => "rates",
            Phase::Delay => "delay",
            Phase::Forwarding => "forwarding",
            Phase::Statistics => "statistics",
            Phase::Change => "change",
        }
    }

    /// The phase called `name`, if any.
    pub fn from_name(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Every name, comma-separated (for errors and help).
    pub fn names() -> String {
        Phase::ALL.map(Phase::name).join(",")
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The phases a run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phases([bool; 5]);

impl Phases {
    /// Every phase.
    pub const ALL: Phases = Phases([true; 5]);

    /// The phases of `list`; a phase named twice is measured once.
    pub fn of(list: &[Phase]) -> Phases {
        let mut on = [false; 5];
        for p in list {
            on[*p as usize] = true;
        }
        Phases(on)
    }

    /// Whether `p` is measured.
    pub fn has(&self, p: Phase) -> bool {
        self.0[p as usize]
    }

    /// The phases measured, in order.
    pub fn list(&self) -> Vec<Phase> {
        Phase::ALL.into_iter().filter(|p| self.has(*p)).collect()
    }
}

impl Serialize for Phases {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.list().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_none() {
        for p in Phase::ALL {
            assert_eq!(Phase::from_name(p.name()), Some(p));
        }
        assert_eq!(Phase::from_name("sparse"), None);
        assert_eq!(Phase::names(), "rates,delay,forwarding,statistics,change");
    }

    #[test]
    fn a_set_keeps_the_run_order() {
        let p = Phases::of(&[Phase::Change, Phase::Delay, Phase::Delay]);
        assert_eq!(p.list(), [Phase::Delay, Phase::Change]);
        assert!(!p.has(Phase::Rates));
        assert_eq!(Phases::ALL.list(), Phase::ALL);
    }
}
