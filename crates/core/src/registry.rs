//! Textual scheduler specs (`drr`, `wf2q+`, `drr:quantum=1500`) and a factory
//! building any scheduler behind `Box<dyn Scheduler<P>>`, for the CLI and the
//! evaluation harness.
//!
//! Grammar: `NAME[:KEY=VALUE[,KEY=VALUE...]]`. Parameters:
//! * `drr:quantum=BYTES` — fixed DRR quantum unit (default: largest max_len).
//! * `qfq+:m=M`, `wf2q++:m=M` — aggregate size M of the SCHED+ schemes,
//!   `1..=64` (default 8; values outside are clamped).

use crate::flow::Limits;
use crate::sched::drr::Drr;
use crate::sched::fifo::Fifo;
use crate::sched::qfq::Qfq;
use crate::sched::sched_plus::{QfqPlus, Wf2qPlusPlus, DEFAULT_M};
use crate::sched::scheduler::{Capacity, Scheduler};
use crate::sched::wf2q_plus::Wf2qPlus;
use crate::Packet;
use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

/// The scheduling algorithms this crate provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedKind {
    /// First come, first served.
    Fifo,
    /// Deficit Round Robin.
    Drr,
    /// Quick Fair Queueing.
    Qfq,
    /// QFQ+ (SCHED+ over QFQ).
    QfqPlus,
    /// Exact WF2Q+.
    Wf2qPlus,
    /// WF2Q++ (SCHED+ over WF2Q+).
    Wf2qPlusPlus,
}

impl SchedKind {
    /// Every kind, in the order tables list them.
    pub const ALL: &'static [SchedKind] = &[
        SchedKind::Fifo,
        SchedKind::Drr,
        SchedKind::Qfq,
        SchedKind::QfqPlus,
        SchedKind::Wf2qPlus,
        SchedKind::Wf2qPlusPlus,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SchedKind::Fifo => "fifo",
            SchedKind::Drr => "drr",
            SchedKind::Qfq => "qfq",
            SchedKind::QfqPlus => "qfq+",
            SchedKind::Wf2qPlus => "wf2q+",
            SchedKind::Wf2qPlusPlus => "wf2q++",
        }
    }

    /// Looks a kind up by its command-line name.
    pub fn from_name(name: &str) -> Option<SchedKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// A scheduler kind plus its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedSpec {
    /// Which algorithm.
    pub kind: SchedKind,
    /// `key=value` parameters, validated by [`SchedSpec::parse`].
    pub params: Vec<(String, u64)>,
}

/// A spec that could not be parsed or built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// No scheduler has this name.
    UnknownScheduler(String),
    /// A parameter the scheduler does not take, or not `key=integer`.
    BadParameter {
        /// The scheduler.
        sched: &'static str,
        /// The offending text.
        param: String,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::UnknownScheduler(n) => {
                let names: Vec<&str> = SchedKind::ALL.iter().map(|k| k.name()).collect();
                write!(f, "unknown scheduler '{n}' (known: {})", names.join(", "))
            }
            SpecError::BadParameter { sched, param } => {
                write!(f, "bad parameter '{param}' for scheduler {sched}")
            }
        }
    }
}

fn accepted_params(kind: SchedKind) -> &'static [&'static str] {
    match kind {
        SchedKind::Drr => &["quantum"],
        SchedKind::QfqPlus | SchedKind::Wf2qPlusPlus => &["m"],
        _ => &[],
    }
}

impl SchedSpec {
    /// A spec with no parameters.
    pub fn new(kind: SchedKind) -> Self {
        Self {
            kind,
            params: Vec::new(),
        }
    }

    /// Parses `NAME[:KEY=VALUE,...]`.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let text = text.trim();
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = SchedKind::from_name(&name.to_ascii_lowercase())
            .ok_or_else(|| SpecError::UnknownScheduler(name.to_string()))?;
        let mut params = Vec::new();
        for p in rest.split(',').filter(|p| !p.is_empty()) {
            let bad = || SpecError::BadParameter {
                sched: kind.name(),
                param: p.to_string(),
            };
            let (k, v) = p.split_once('=').ok_or_else(bad)?;
            if !accepted_params(kind).contains(&k) {
                return Err(bad());
            }
            let v: u64 = v.parse().map_err(|_| bad())?;
            params.push((k.to_string(), v));
        }
        Ok(Self { kind, params })
    }

    /// The value of parameter `key`, if given.
    pub fn param(&self, key: &str) -> Option<u64> {
        self.params.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    /// The SCHED+ aggregate size `m` (default 8), clamped to `1..=64`.
    pub fn aggregate_size(&self) -> u32 {
        self.param("m").unwrap_or(DEFAULT_M as u64).clamp(1, 64) as u32
    }

    /// Builds the scheduler.
    pub fn build<P: Packet + Send + 'static>(
        &self,
        cap: Capacity,
        limits: Limits,
    ) -> Box<dyn Scheduler<P> + Send> {
        match self.kind {
            SchedKind::Fifo => Box::new(Fifo::with_limits(cap, limits)),
            SchedKind::Drr => {
                let unit = self.param("quantum").map(|q| q.min(u32::MAX as u64) as u32);
                Box::new(Drr::with_options(cap, limits, unit))
            }
            SchedKind::Qfq => Box::new(Qfq::with_limits(cap, limits)),
            SchedKind::QfqPlus => {
                Box::new(QfqPlus::with_options(cap, limits, self.aggregate_size()))
            }
            SchedKind::Wf2qPlus => Box::new(Wf2qPlus::with_limits(cap, limits)),
            SchedKind::Wf2qPlusPlus => Box::new(Wf2qPlusPlus::with_options(
                cap,
                limits,
                self.aggregate_size(),
            )),
        }
    }
}

impl fmt::Display for SchedSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

/// Parses a comma-separated list of specs, where parameters of one spec are
/// separated by `,` too: `drr,qfq+:m=4,wf2q+` — a piece containing `=` but no
/// `:` belongs to the previous spec.
pub fn parse_list(text: &str) -> Result<Vec<SchedSpec>, SpecError> {
    let mut groups: Vec<String> = Vec::new();
    for piece in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match groups.last_mut() {
            Some(last) if piece.contains('=') && !piece.contains(':') => {
                last.push(',');
                last.push_str(piece);
            }
            _ => groups.push(piece.to_string()),
        }
    }
    groups.iter().map(|g| SchedSpec::parse(g)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_parameters() {
        let s = SchedSpec::parse("drr:quantum=1500").unwrap();
        assert_eq!(s.kind, SchedKind::Drr);
        assert_eq!(s.param("quantum"), Some(1500));
        assert_eq!(s.to_string(), "drr:quantum=1500");
        assert!(matches!(
            SchedSpec::parse("nope"),
            Err(SpecError::UnknownScheduler(_))
        ));
        assert!(matches!(
            SchedSpec::parse("drr:m=4"),
            Err(SpecError::BadParameter { .. })
        ));
        assert!(matches!(
            SchedSpec::parse("drr:quantum=x"),
            Err(SpecError::BadParameter { .. })
        ));
    }

    #[test]
    fn parses_lists_with_parameters() {
        let l = parse_list("fifo, drr:quantum=100,wf2q+").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[1].param("quantum"), Some(100));
    }
}
