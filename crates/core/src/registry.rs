//! The catalogue of schedulers: one descriptor per algorithm ([`SchedInfo`]:
//! name, parameters with their ranges, the guarantee it proves and its
//! timestamp-error factors), textual specs (`drr`, `wf2q+`,
//! `drr:quantum=1500`) and the one place a spec becomes a scheduler, either
//! boxed ([`SchedSpec::build`]) or statically typed through a
//! [`SchedVisitor`] ([`SchedSpec::visit`], for benchmarks that must not pay
//! for dynamic dispatch).
//!
//! Adding a scheduler means one [`SchedKind`] variant, listed in
//! [`SchedKind::ALL`], its [`SchedInfo`] in [`SchedKind::info`] and its
//! constructor in [`SchedSpec::visit`]; the CLI, the C ABI, policy-tree
//! scheduler nodes, the runtime benchmark, the cost harness, the guarantee
//! checks and the tests that iterate over the catalogue follow (the steps:
//! `docs/architecture.md`).
//!
//! Grammar: `NAME[:KEY=VALUE[,KEY=VALUE...]]`, values are integers and must
//! lie in the parameter's range ([`ParamInfo`]); anything else is a
//! [`SpecError`] naming the parameter and its range.
//!
//! # Examples
//!
//! ```
//! use fairway_core::registry::{Guarantee, SchedSpec};
//! use fairway_core::{Capacity, FlowConfig, FlowId, Limits};
//!
//! let spec = SchedSpec::parse("qfq+:m=4").unwrap();
//! assert_eq!(spec.param("m"), Some(4));
//! assert!(matches!(spec.kind.info().guarantee, Guarantee::Aggregate(_)));
//! // Out of range: rejected with the allowed range, never clamped.
//! let err = SchedSpec::parse("qfq+:m=65").unwrap_err();
//! assert_eq!(err.to_string(), "parameter m=65 of qfq+ is outside 1..=64");
//!
//! let mut s = spec.build::<u32>(Capacity::new(16, 256), Limits::DEFAULT);
//! s.add_flow(FlowId(3), FlowConfig::new(2, 1500)).unwrap();
//! s.enqueue(FlowId(3), 1000).unwrap();
//! assert_eq!(s.dequeue().map(|d| d.packet), Some(1000));
//! ```

use crate::flow::Limits;
use crate::sched::sched_plus::{
    AggregateSize, QfqPlus, Wf2qPlusPlus, DEFAULT_M, MAX_AGGREGATE_FLOWS,
};
use crate::sched::{qfq, s_kps, wf2q_plus, Capacity, Drr, Fifo, Qfq, SKps, Scheduler, Wf2qPlus};
use crate::Packet;
use alloc::boxed::Box;
use alloc::format;
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
    /// S-KPS (WF2Q+ over stratified interleaved timer wheels).
    SKps,
    /// Exact WF2Q+.
    Wf2qPlus,
    /// WF2Q++ (SCHED+ over WF2Q+).
    Wf2qPlusPlus,
}

/// A numeric parameter of a spec (`NAME:KEY=VALUE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key.
    pub key: &'static str,
    /// What it sets, with its unit.
    pub help: &'static str,
    /// Smallest accepted value.
    pub min: u64,
    /// Largest accepted value.
    pub max: u64,
    /// The value when not given; `None` when it is derived from the flows
    /// (the help says how).
    pub default: Option<u64>,
}

/// Timestamp-error terms of a fair-queueing scheduler in units of `L_k/φ_k`
/// (flow k's maximum packet length over its share), as defined in the QFQ+
/// paper App. A (Eq. A.4): `Ŝ ≥ S − ΔS⁻` and `F̂ ≤ S + ΔS⁺`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimestampErrors {
    /// `ΔS⁻ / (L_k/φ_k)`.
    pub minus: u32,
    /// `ΔS⁺ / (L_k/φ_k)`.
    pub plus: u32,
}

impl TimestampErrors {
    /// `ΔS / (L_k/φ_k)`: `ΔS⁻ + ΔS⁺` in units of `L_k/φ_k`.
    pub fn delta_s_factor(self) -> u32 {
        self.minus + self.plus
    }

    /// `ΔS = ΔS⁻ + ΔS⁺` for a flow of maximum length `len` bytes and share
    /// `phi`, in bytes (the `ΔS^k` of the QFQ+ paper Eqs. 2, 3, 6, 7).
    pub fn delta_s(self, len: f64, phi: f64) -> f64 {
        f64::from(self.delta_s_factor()) * len / phi
    }
}

/// The worst-case service guarantee a scheduler proves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guarantee {
    /// No per-flow worst-case bound is claimed (FIFO, DRR).
    None,
    /// A fair-queueing scheduler of flows: T-WFI and B-WFI of the QFQ+ paper
    /// Eqs. (2) and (6) with these timestamp errors.
    Flow(TimestampErrors),
    /// SCHED+ over a scheduler with these timestamp errors: the QFQ+ paper
    /// Theorems 1 and 2 (Eqs. 3 and 7), with the aggregate size `m` of the
    /// spec.
    Aggregate(TimestampErrors),
}

/// The catalogue entry of one algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedInfo {
    /// Which algorithm.
    pub kind: SchedKind,
    /// The command-line name.
    pub name: &'static str,
    /// One line saying what it is, with the paper it follows.
    pub summary: &'static str,
    /// The parameters the spec accepts.
    pub params: &'static [ParamInfo],
    /// What it guarantees.
    pub guarantee: Guarantee,
    /// Whether it divides the link among backlogged flows in proportion
    /// to their weights (every scheduler but FIFO, which serves in
    /// arrival order): the tests of weighted shares run on exactly these.
    pub shares_by_weight: bool,
}

/// The SCHED+ aggregate size parameter.
const PARAM_M: ParamInfo = ParamInfo {
    key: "m",
    help: "aggregate size M: flows of equal weight and max length grouped per aggregate",
    min: 1,
    max: MAX_AGGREGATE_FLOWS as u64,
    default: Some(DEFAULT_M as u64),
};

const FIFO: SchedInfo = SchedInfo {
    kind: SchedKind::Fifo,
    name: "fifo",
    summary: "first come, first served over all flows; the cost baseline",
    params: &[],
    guarantee: Guarantee::None,
    shares_by_weight: false,
};

const DRR: SchedInfo = SchedInfo {
    kind: SchedKind::Drr,
    name: "drr",
    summary: "Deficit Round Robin (Shreedhar and Varghese): O(1), fair in the long run only",
    params: &[ParamInfo {
        key: "quantum",
        help:
            "quantum unit in bytes, times the flow's weight (default: largest max_len of the flows)",
        min: 1,
        max: u32::MAX as u64,
        default: None,
    }],
    guarantee: Guarantee::None,
    shares_by_weight: true,
};

const QFQ: SchedInfo = SchedInfo {
    kind: SchedKind::Qfq,
    name: "qfq",
    summary: "Quick Fair Queueing (Checconi, Rizzo, Valente): O(1) approximate WF2Q+",
    params: &[],
    guarantee: Guarantee::Flow(TimestampErrors {
        minus: qfq::DELTA_S_MINUS_FACTOR,
        plus: qfq::DELTA_S_PLUS_FACTOR,
    }),
    shares_by_weight: true,
};

const QFQ_PLUS: SchedInfo = SchedInfo {
    kind: SchedKind::QfqPlus,
    name: "qfq+",
    summary: "QFQ+: the SCHED+ scheme over QFQ (Checconi, Rizzo, Valente), fewer scheduler runs per packet",
    params: &[PARAM_M],
    guarantee: Guarantee::Aggregate(TimestampErrors {
        minus: QfqPlus::<u32>::timestamp_error_factors().0,
        plus: QfqPlus::<u32>::timestamp_error_factors().1,
    }),
    shares_by_weight: true,
};

const S_KPS: SchedInfo = SchedInfo {
    kind: SchedKind::SKps,
    name: "s-kps",
    summary: "S-KPS (Karsten's stratified interleaved timer wheels, reconstructed from the QFQ paper): O(1) approximate WF2Q+",
    params: &[],
    guarantee: Guarantee::Flow(TimestampErrors {
        minus: s_kps::DELTA_S_MINUS_FACTOR,
        plus: s_kps::DELTA_S_PLUS_FACTOR,
    }),
    shares_by_weight: true,
};

const WF2Q_PLUS: SchedInfo = SchedInfo {
    kind: SchedKind::Wf2qPlus,
    name: "wf2q+",
    summary:
        "exact WF2Q+ (Bennett and Zhang): O(log N), the reference the others are checked against",
    params: &[],
    guarantee: Guarantee::Flow(TimestampErrors {
        minus: wf2q_plus::DELTA_S_MINUS_FACTOR,
        plus: wf2q_plus::DELTA_S_PLUS_FACTOR,
    }),
    shares_by_weight: true,
};

const WF2Q_PLUS_PLUS: SchedInfo = SchedInfo {
    kind: SchedKind::Wf2qPlusPlus,
    name: "wf2q++",
    summary: "WF2Q++: the SCHED+ scheme over exact WF2Q+",
    params: &[PARAM_M],
    guarantee: Guarantee::Aggregate(TimestampErrors {
        minus: Wf2qPlusPlus::<u32>::timestamp_error_factors().0,
        plus: Wf2qPlusPlus::<u32>::timestamp_error_factors().1,
    }),
    shares_by_weight: true,
};

impl SchedKind {
    /// Every kind, in the order tables list them.
    pub const ALL: &'static [SchedKind] = &[
        SchedKind::Fifo,
        SchedKind::Drr,
        SchedKind::Qfq,
        SchedKind::QfqPlus,
        SchedKind::SKps,
        SchedKind::Wf2qPlus,
        SchedKind::Wf2qPlusPlus,
    ];

    /// The catalogue entry.
    pub const fn info(self) -> &'static SchedInfo {
        match self {
            SchedKind::Fifo => &FIFO,
            SchedKind::Drr => &DRR,
            SchedKind::Qfq => &QFQ,
            SchedKind::QfqPlus => &QFQ_PLUS,
            SchedKind::SKps => &S_KPS,
            SchedKind::Wf2qPlus => &WF2Q_PLUS,
            SchedKind::Wf2qPlusPlus => &WF2Q_PLUS_PLUS,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Looks a kind up by its command-line name.
    pub fn from_name(name: &str) -> Option<SchedKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// Receives the scheduler a spec names, statically typed, from
/// [`SchedSpec::visit`].
///
/// The visitor gets a constructor rather than a built scheduler, so it
/// chooses where the scheduler is built (a runtime builds it on its
/// arbiter thread, a benchmark right away).
///
/// # Examples
///
/// ```
/// use fairway_core::registry::{SchedSpec, SchedVisitor};
/// use fairway_core::{Capacity, Limits, Scheduler};
///
/// /// Reports the name of the concrete type's scheduler.
/// struct NameOf;
/// impl SchedVisitor<u32> for NameOf {
///     type Output = &'static str;
///     fn visit<S, F>(self, make: F) -> &'static str
///     where
///         S: Scheduler<u32> + Send + 'static,
///         F: FnOnce(Capacity, Limits) -> S + Send + 'static,
///     {
///         make(Capacity::new(4, 16), Limits::DEFAULT).name()
///     }
/// }
/// assert_eq!(SchedSpec::parse("wf2q++").unwrap().visit(NameOf), "wf2q++");
/// ```
pub trait SchedVisitor<P: Packet> {
    /// What the visit produces.
    type Output;
    /// Called once with the constructor of the scheduler the spec names.
    fn visit<S, F>(self, make: F) -> Self::Output
    where
        S: Scheduler<P> + Send + 'static,
        F: FnOnce(Capacity, Limits) -> S + Send + 'static;
}

/// A scheduler kind plus its parameters.
///
/// The parameters are private: a spec is made by [`SchedSpec::parse`],
/// [`SchedSpec::new`] or [`SchedSpec::with_param`], which all check every
/// value against its range, so [`SchedSpec::visit`] and
/// [`SchedSpec::build`] use each one exactly as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedSpec {
    /// Which algorithm.
    pub kind: SchedKind,
    /// `key=value` parameters, each a key of `kind`'s [`SchedInfo`], given
    /// once, in its range.
    params: Vec<(&'static str, u64)>,
}

/// A spec that could not be parsed.
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
    /// A parameter given twice in one spec (`qfq+:m=4,m=5`): neither value
    /// is taken over the other.
    DuplicateParameter {
        /// The scheduler.
        sched: &'static str,
        /// The parameter.
        key: &'static str,
    },
    /// A parameter outside its range.
    OutOfRange {
        /// The scheduler.
        sched: &'static str,
        /// The parameter.
        key: &'static str,
        /// The value given.
        value: u64,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
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
                let keys: Vec<&str> = SchedKind::from_name(sched)
                    .map(|k| k.info().params.iter().map(|p| p.key).collect())
                    .unwrap_or_default();
                if keys.is_empty() {
                    write!(f, "bad parameter '{param}': scheduler {sched} takes none")
                } else {
                    write!(
                        f,
                        "bad parameter '{param}' for scheduler {sched} (takes {}=INTEGER)",
                        keys.join("=INTEGER, ")
                    )
                }
            }
            SpecError::DuplicateParameter { sched, key } => {
                write!(f, "parameter `{key}` of `{sched}` given twice")
            }
            SpecError::OutOfRange {
                sched,
                key,
                value,
                min,
                max,
            } => write!(
                f,
                "parameter {key}={value} of {sched} is outside {min}..={max}"
            ),
        }
    }
}

impl SchedSpec {
    /// A spec with no parameters (every parameter at its default).
    pub fn new(kind: SchedKind) -> Self {
        Self {
            kind,
            params: Vec::new(),
        }
    }

    /// Parses `NAME[:KEY=VALUE,...]`, checking every value against its
    /// range.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let text = text.trim();
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = SchedKind::from_name(&name.to_ascii_lowercase())
            .ok_or_else(|| SpecError::UnknownScheduler(name.to_string()))?;
        let mut spec = Self::new(kind);
        for p in rest.split(',').filter(|p| !p.is_empty()) {
            let bad = || SpecError::BadParameter {
                sched: kind.info().name,
                param: p.to_string(),
            };
            let (k, v) = p.split_once('=').ok_or_else(bad)?;
            let value: u64 = v.parse().map_err(|_| bad())?;
            spec = spec.with_param(k, value).map_err(|e| match e {
                SpecError::BadParameter { .. } => bad(),
                e => e,
            })?;
        }
        Ok(spec)
    }

    /// This spec with parameter `key` set to `value`: the checked way to
    /// build a spec in code. A key the scheduler does not take is
    /// [`SpecError::BadParameter`], a key already set is
    /// [`SpecError::DuplicateParameter`], a value outside the key's range
    /// ([`ParamInfo`]) is [`SpecError::OutOfRange`] naming the range.
    ///
    /// ```
    /// use fairway_core::registry::{SchedKind, SchedSpec, SpecError};
    /// let spec = SchedSpec::new(SchedKind::QfqPlus).with_param("m", 64).unwrap();
    /// assert_eq!(spec.aggregate_size(), 64);
    /// let err = SchedSpec::new(SchedKind::QfqPlus).with_param("m", 65).unwrap_err();
    /// assert!(matches!(err, SpecError::OutOfRange { key: "m", min: 1, max: 64, .. }));
    /// ```
    pub fn with_param(mut self, key: &str, value: u64) -> Result<Self, SpecError> {
        let info = self.kind.info();
        let param =
            info.params
                .iter()
                .find(|q| q.key == key)
                .ok_or_else(|| SpecError::BadParameter {
                    sched: info.name,
                    param: format!("{key}={value}"),
                })?;
        if self.param(key).is_some() {
            return Err(SpecError::DuplicateParameter {
                sched: info.name,
                key: param.key,
            });
        }
        if !(param.min..=param.max).contains(&value) {
            return Err(SpecError::OutOfRange {
                sched: info.name,
                key: param.key,
                value,
                min: param.min,
                max: param.max,
            });
        }
        self.params.push((param.key, value));
        Ok(self)
    }

    /// The parameters given, in order (each checked against its range).
    pub fn params(&self) -> &[(&'static str, u64)] {
        &self.params
    }

    /// The value of parameter `key`, if given.
    pub fn param(&self, key: &str) -> Option<u64> {
        self.params.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
    }

    /// The SCHED+ aggregate size `m`: the one given, or [`DEFAULT_M`].
    pub fn aggregate_size(&self) -> u32 {
        self.checked_aggregate_size().get()
    }

    /// `m` as the SCHED+ constructors take it. Every way of making a spec
    /// checked `m` against `1..=MAX_AGGREGATE_FLOWS`, so the conversions
    /// cannot fail.
    fn checked_aggregate_size(&self) -> AggregateSize {
        match self.param("m") {
            None => AggregateSize::DEFAULT,
            Some(m) => u32::try_from(m)
                .ok()
                .and_then(|m| AggregateSize::new(m).ok())
                .expect("m was checked against 1..=MAX_AGGREGATE_FLOWS when the spec was made"),
        }
    }

    /// Hands the constructor of the scheduler this spec names, with its
    /// parameters, to `visitor`: the one place a spec becomes a scheduler.
    /// Every parameter was checked when the spec was made
    /// ([`SchedSpec::parse`], [`SchedSpec::with_param`]) and is used
    /// exactly as given.
    pub fn visit<P: Packet + Send + 'static, V: SchedVisitor<P>>(&self, visitor: V) -> V::Output {
        let m = self.checked_aggregate_size();
        match self.kind {
            SchedKind::Fifo => visitor.visit(Fifo::<P>::with_limits),
            SchedKind::Drr => {
                let unit = self
                    .param("quantum")
                    .map(|q| u32::try_from(q).expect("quantum was checked against 1..=2^32-1"));
                visitor.visit(move |c, l| Drr::<P>::with_options(c, l, unit))
            }
            SchedKind::Qfq => visitor.visit(Qfq::<P>::with_limits),
            SchedKind::SKps => visitor.visit(SKps::<P>::with_limits),
            SchedKind::QfqPlus => visitor.visit(move |c, l| QfqPlus::<P>::with_options(c, l, m)),
            SchedKind::Wf2qPlus => visitor.visit(Wf2qPlus::<P>::with_limits),
            SchedKind::Wf2qPlusPlus => {
                visitor.visit(move |c, l| Wf2qPlusPlus::<P>::with_options(c, l, m))
            }
        }
    }

    /// Builds the scheduler behind a box, for callers that pick the
    /// algorithm at run time.
    ///
    /// # Examples
    ///
    /// ```
    /// use fairway_core::{Capacity, FlowConfig, FlowId, Limits, SchedSpec};
    ///
    /// let spec = SchedSpec::parse("drr:quantum=1500").unwrap();
    /// let mut s = spec.build::<u32>(Capacity::new(2, 8), Limits::DEFAULT);
    /// s.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
    /// s.enqueue(FlowId(0), 700).unwrap();
    /// assert_eq!(s.name(), "drr");
    /// assert_eq!(s.backlog().bytes, 700);
    /// ```
    pub fn build<P: Packet + Send + 'static>(
        &self,
        cap: Capacity,
        limits: Limits,
    ) -> Box<dyn Scheduler<P> + Send> {
        self.visit(Boxed { cap, limits })
    }
}

/// The visitor behind [`SchedSpec::build`].
struct Boxed {
    cap: Capacity,
    limits: Limits,
}

impl<P: Packet> SchedVisitor<P> for Boxed {
    type Output = Box<dyn Scheduler<P> + Send>;

    fn visit<S, F>(self, make: F) -> Self::Output
    where
        S: Scheduler<P> + Send + 'static,
        F: FnOnce(Capacity, Limits) -> S + Send + 'static,
    {
        Box::new(make(self.cap, self.limits))
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
    fn a_parameter_given_twice_is_refused() {
        assert_eq!(
            SchedSpec::parse("qfq+:m=4,m=5"),
            Err(SpecError::DuplicateParameter {
                sched: "qfq+",
                key: "m"
            })
        );
        assert_eq!(
            parse_list("qfq+:m=4,qfq+:m=5").map(|l| l.len()),
            Ok(2),
            "two specs, one parameter each"
        );
    }

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
    fn rejects_out_of_range_parameters_naming_the_range() {
        for (text, key, min, max) in [
            ("qfq+:m=0", "m", 1, 64),
            ("wf2q++:m=65", "m", 1, 64),
            ("drr:quantum=0", "quantum", 1, u32::MAX as u64),
            ("drr:quantum=4294967296", "quantum", 1, u32::MAX as u64),
        ] {
            match SchedSpec::parse(text) {
                Err(SpecError::OutOfRange {
                    key: k,
                    min: lo,
                    max: hi,
                    ..
                }) => assert_eq!((k, lo, hi), (key, min, max), "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert_eq!(SchedSpec::parse("qfq+:m=64").unwrap().aggregate_size(), 64);
        assert_eq!(
            SchedSpec::parse("qfq+").unwrap().aggregate_size(),
            DEFAULT_M
        );
    }

    #[test]
    fn every_kind_builds_the_scheduler_its_entry_names() {
        for &k in SchedKind::ALL {
            let info = k.info();
            assert_eq!(info.kind, k);
            let s = SchedSpec::new(k).build::<u32>(Capacity::new(2, 2), Limits::DEFAULT);
            assert_eq!(s.name(), info.name);
            for p in info.params {
                assert!(p.min <= p.max && p.default.iter().all(|d| (p.min..=p.max).contains(d)));
            }
        }
    }

    /// A spec made in code goes through the same checks as a parsed one:
    /// each parameter at both ends of its range is taken and built exactly
    /// as given, one past either end is refused naming the range.
    #[test]
    fn a_spec_made_in_code_is_checked_at_each_limit_and_one_past_it() {
        let cap = Capacity::new(4, 64);
        for kind in [SchedKind::QfqPlus, SchedKind::Wf2qPlusPlus] {
            for m in [1, 64] {
                let spec = SchedSpec::new(kind).with_param("m", m).unwrap();
                assert_eq!(spec.aggregate_size() as u64, m);
                assert_eq!(spec.to_string(), format!("{}:m={m}", kind.name()));
                assert_eq!(spec.build::<u32>(cap, Limits::DEFAULT).name(), kind.name());
            }
            for m in [0, 65, u64::from(u32::MAX) + 1] {
                let err = SchedSpec::new(kind).with_param("m", m).unwrap_err();
                assert_eq!(
                    err,
                    SpecError::OutOfRange {
                        sched: kind.name(),
                        key: "m",
                        value: m,
                        min: 1,
                        max: 64
                    }
                );
            }
        }
        let max = u64::from(u32::MAX);
        for q in [1, max] {
            let spec = SchedSpec::new(SchedKind::Drr)
                .with_param("quantum", q)
                .unwrap();
            assert_eq!(spec.param("quantum"), Some(q));
            // Built with that quantum: a flow's 1-byte packets are served in
            // rounds of `q` bytes per unit of weight.
            let mut s = spec.build::<u32>(cap, Limits::DEFAULT);
            s.add_flow(crate::FlowId(0), crate::FlowConfig::new(1, 1))
                .unwrap();
            s.enqueue(crate::FlowId(0), 1).unwrap();
            assert_eq!(s.dequeue().map(|d| d.packet), Some(1));
        }
        for q in [0, max + 1, u64::MAX] {
            let err = SchedSpec::new(SchedKind::Drr)
                .with_param("quantum", q)
                .unwrap_err();
            assert!(
                matches!(err, SpecError::OutOfRange { key: "quantum", min: 1, max: m, value, .. } if m == max && value == q),
                "{err:?}"
            );
        }
        // A key the scheduler does not take, and one given twice.
        assert!(matches!(
            SchedSpec::new(SchedKind::Drr).with_param("m", 4),
            Err(SpecError::BadParameter { sched: "drr", .. })
        ));
        let twice = SchedSpec::new(SchedKind::QfqPlus)
            .with_param("m", 4)
            .unwrap();
        assert_eq!(
            twice.with_param("m", 4),
            Err(SpecError::DuplicateParameter {
                sched: "qfq+",
                key: "m"
            })
        );
    }

    #[test]
    fn parses_lists_with_parameters() {
        let l = parse_list("fifo, drr:quantum=100,wf2q+").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[1].param("quantum"), Some(100));
    }
}
