//! The catalogue of disk schedulers: one entry per scheduler of this crate
//! ([`DiskSchedInfo`]: name, summary, parameters with their ranges), a
//! textual spec grammar (`bfq`, `cfq:slice_ms=20`,
//! `scan-edf:delta_ms=640,t_wait_ms=0`) and the one place a spec becomes a
//! scheduler ([`DiskSchedSpec::build`]). It mirrors the packet schedulers'
//! catalogue, `fairway_core::registry`, and reuses its [`ParamInfo`].
//!
//! A [`DiskSchedSpec`] is a typed value: experiments, the thesis' tables
//! and the command line identify a configuration by it (`spec == want`,
//! `matches!(spec, DiskSchedSpec::Bfq { .. })`), never by its printed
//! label.
//!
//! Grammar: `NAME[:KEY=VALUE[,KEY=VALUE...]]`, values are integers and must
//! lie in the parameter's range; a parameter not given takes the default
//! the catalogue lists (the configuration of the BFQ thesis' §2.4
//! bandwidth-distribution and web-server tables). Anything else is a
//! [`DiskSpecError`] naming the parameter and its range. Every scheduler
//! takes requests of at most [`DEFAULT_L_MAX`] sectors (128 KiB, Linux's
//! default, §2.4); the number of applications is the experiment's.
//!
//! Adding a scheduler means one [`DiskSchedKind`] variant, listed in
//! [`DiskSchedKind::ALL`], its entry in [`DiskSchedKind::info`] and its
//! [`DiskSchedKind::default_spec`], one [`DiskSchedSpec`] variant with its
//! kind, its fields in [`DiskSchedSpec::params`] and `DiskSchedSpec::set`,
//! its label and its constructor in [`DiskSchedSpec::build`] (the steps:
//! `docs/architecture.md`).
//!
//! # Examples
//!
//! ```
//! use fairway_disk::catalogue::{DiskSchedKind, DiskSchedSpec};
//!
//! let spec = DiskSchedSpec::parse("bfq:b_max=8192").unwrap();
//! assert_eq!(spec, DiskSchedSpec::bfq(8192));
//! assert_eq!(spec.kind(), DiskSchedKind::Bfq);
//! assert_eq!(spec.label(), "BFQ 8192 sect");
//! assert_eq!(spec.to_string(), "bfq:b_max=8192");
//! // Out of range: refused with the allowed range, never clamped.
//! let err = DiskSchedSpec::parse("yfq:batch=0").unwrap_err();
//! assert_eq!(err.to_string(), "parameter batch=0 of yfq is outside 1..=4096");
//!
//! let sched = spec.build(4).unwrap();
//! assert_eq!(sched.name(), "bfq");
//! ```

use crate::baseline::{Anticipatory, CLook, Cfq, ScanEdf, Yfq};
use crate::bfq::{
    Bfq, BfqConfig, TimeBudget, DEFAULT_L_MAX, DEFAULT_T_FIFO, DEFAULT_T_WAIT, DEFAULT_WARM_DEPTH,
    MAX_BUDGET_LIMIT, MAX_WARM_DEPTH,
};
use crate::request::{DiskConfigError, Nanos, MS};
use crate::scheduler::DiskScheduler;
pub use fairway_core::registry::ParamInfo;
use std::fmt;

/// The disk schedulers this crate provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiskSchedKind {
    /// BFQ, budget fair queueing ([`Bfq`]).
    Bfq,
    /// CFQ-like time-slice round robin ([`Cfq`]).
    Cfq,
    /// C-LOOK ([`CLook`]).
    CLook,
    /// Anticipatory scheduling ([`Anticipatory`]).
    As,
    /// SCAN-EDF ([`ScanEdf`]).
    ScanEdf,
    /// YFQ ([`Yfq`]).
    Yfq,
}

/// The catalogue entry of one disk scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskSchedInfo {
    /// Which scheduler.
    pub kind: DiskSchedKind,
    /// The spec name, also what [`DiskScheduler::name`] returns.
    pub name: &'static str,
    /// One line saying what it is, with the section of the BFQ thesis it
    /// follows.
    pub summary: &'static str,
    /// The parameters the spec accepts.
    pub params: &'static [ParamInfo],
}

const MS_PER_S: u64 = 1_000;

/// Idling for an application's next synchronous request; the same key and
/// range for every scheduler that idles.
const fn t_wait(help: &'static str) -> ParamInfo {
    ParamInfo {
        key: "t_wait_ms",
        help,
        min: 0,
        max: MS_PER_S,
        default: Some(DEFAULT_T_WAIT / MS),
    }
}

const BFQ: DiskSchedInfo = DiskSchedInfo {
    kind: DiskSchedKind::Bfq,
    name: "bfq",
    summary: "BFQ (BFQ thesis §2.1): exclusive budgets of sectors scheduled by B-WF2Q+, device idling, T_max; budgets start at and grow by B_max/8 (§2.2.3's simplified interface)",
    params: &[
        ParamInfo {
            key: "b_max",
            help: "B_max, the largest budget, sectors (at least L_max = 256)",
            min: DEFAULT_L_MAX as u64,
            max: MAX_BUDGET_LIMIT as u64,
            default: Some(4096),
        },
        t_wait("T_wait, idling for the active application's next request, ms (0: none)"),
        ParamInfo {
            key: "t_fifo_ms",
            help: "T_FIFO, age after which a queue's oldest request goes first, ms",
            min: 0,
            max: 60 * MS_PER_S,
            default: Some(DEFAULT_T_FIFO / MS),
        },
        ParamInfo {
            key: "t_max_ms",
            help: "T_max, the time budget, ms (0: none; default: 4/3 of the time B_max takes at the measured rate)",
            min: 0,
            max: 60 * MS_PER_S,
            default: None,
        },
        ParamInfo {
            key: "low_latency",
            help: "weight raising (the kernel's low_latency): an application issuing after 2 s idle gets 30 times its weight for 3..25 s (1: on, 0: off)",
            min: 0,
            max: 1,
            default: Some(1),
        },
        ParamInfo {
            key: "inject",
            help: "I/O injection: other applications' requests served while the active one idles, at most an adaptive 1..8 in flight (1: on, 0: off)",
            min: 0,
            max: 1,
            default: Some(0),
        },
        ParamInfo {
            key: "warm_depth",
            help: "the adaptive device bound's small end: while a raised application is warm, the others keep at most this many requests in flight together",
            min: 1,
            max: MAX_WARM_DEPTH as u64,
            default: Some(DEFAULT_WARM_DEPTH as u64),
        },
    ],
};

const CFQ: DiskSchedInfo = DiskSchedInfo {
    kind: DiskSchedKind::Cfq,
    name: "cfq",
    summary: "CFQ-like round robin of exclusive time slices scaled by the weight, served in C-LOOK order (BFQ thesis §2.3.3)",
    params: &[
        ParamInfo {
            key: "slice_ms",
            help: "T_slice, the time slice at weight 1, ms",
            min: 1,
            max: 60 * MS_PER_S,
            default: Some(100),
        },
        ParamInfo {
            key: "slice_idle_ms",
            help: "idling for the active application's next request, ms (Linux CFQ's slice_idle; 0: none)",
            min: 0,
            max: MS_PER_S,
            default: Some(8),
        },
    ],
};

const C_LOOK: DiskSchedInfo = DiskSchedInfo {
    kind: DiskSchedKind::CLook,
    name: "c-look",
    summary: "C-LOOK over all requests, work-conserving (BFQ thesis §2.1)",
    params: &[],
};

const AS: DiskSchedInfo = DiskSchedInfo {
    kind: DiskSchedKind::As,
    name: "as",
    summary: "anticipatory scheduling (Iyer and Druschel): C-LOOK plus waiting for the last application's next nearby request, fairness policies off (BFQ thesis §2.4)",
    params: &[t_wait(
        "T_wait, anticipation of the same application's next request, ms (0: none)",
    )],
};

const SCAN_EDF: DiskSchedInfo = DiskSchedInfo {
    kind: DiskSchedKind::ScanEdf,
    name: "scan-edf",
    summary: "SCAN-EDF with per-application deadlines rounded up to a granularity, ties in C-LOOK order (BFQ thesis §2.3.1)",
    params: &[
        ParamInfo {
            key: "deadline_ms",
            help: "relative deadline at weight 1, ms (divided by the weight)",
            min: 1,
            max: 60 * MS_PER_S,
            default: Some(20),
        },
        ParamInfo {
            key: "delta_ms",
            help: "Δ, the deadline granularity, ms",
            min: 1,
            max: 60 * MS_PER_S,
            default: Some(80),
        },
        t_wait("T_wait, idling after an application's last queued request, ms (0: none)"),
    ],
};

const YFQ: DiskSchedInfo = DiskSchedInfo {
    kind: DiskSchedKind::Yfq,
    name: "yfq",
    summary: "YFQ (Bruno et al.): start-time fair queueing of estimated service times, dispatched in batches served in C-LOOK order (BFQ thesis §2.3.2)",
    params: &[
        ParamInfo {
            key: "batch",
            help: "BT_size, requests per batch",
            min: 1,
            max: 4096,
            default: Some(4),
        },
        t_wait("T_wait, idling after an application's last queued request, ms (0: none)"),
    ],
};

impl DiskSchedKind {
    /// Every kind, in the order the thesis' tables list them.
    pub const ALL: &'static [DiskSchedKind] = &[
        DiskSchedKind::Bfq,
        DiskSchedKind::ScanEdf,
        DiskSchedKind::Yfq,
        DiskSchedKind::Cfq,
        DiskSchedKind::CLook,
        DiskSchedKind::As,
    ];

    /// The catalogue entry.
    pub const fn info(self) -> &'static DiskSchedInfo {
        match self {
            DiskSchedKind::Bfq => &BFQ,
            DiskSchedKind::Cfq => &CFQ,
            DiskSchedKind::CLook => &C_LOOK,
            DiskSchedKind::As => &AS,
            DiskSchedKind::ScanEdf => &SCAN_EDF,
            DiskSchedKind::Yfq => &YFQ,
        }
    }

    /// The spec name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Looks a kind up by its spec name.
    pub fn from_name(name: &str) -> Option<DiskSchedKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The spec with every parameter at its default.
    pub const fn default_spec(self) -> DiskSchedSpec {
        match self {
            DiskSchedKind::Bfq => DiskSchedSpec::bfq(4096),
            DiskSchedKind::Cfq => DiskSchedSpec::cfq(100),
            DiskSchedKind::CLook => DiskSchedSpec::CLook,
            DiskSchedKind::As => DiskSchedSpec::anticipatory(),
            DiskSchedKind::ScanEdf => DiskSchedSpec::scan_edf(80, DEFAULT_T_WAIT / MS),
            DiskSchedKind::Yfq => DiskSchedSpec::yfq(4, DEFAULT_T_WAIT / MS),
        }
    }
}

/// A disk scheduler and its parameters: the typed identity of a
/// configuration (see the module doc).
///
/// [`DiskSchedSpec::parse`] checks every value against the catalogue's
/// range; a spec written in code is checked by [`DiskSchedSpec::check`],
/// which [`DiskSchedSpec::build`] calls, so no scheduler is ever built
/// from a value outside its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiskSchedSpec {
    /// BFQ through the simplified interface (§2.2.3).
    Bfq {
        /// B_max, sectors.
        b_max: u32,
        /// T_wait, ms.
        t_wait_ms: u64,
        /// T_FIFO, ms.
        t_fifo_ms: u64,
        /// T_max, ms (0: none); `None`: 4/3 of the time B_max takes at the
        /// measured rate.
        t_max_ms: Option<u64>,
        /// Low-latency weight raising ([`BfqConfig::low_latency`]).
        low_latency: bool,
        /// I/O injection while idling ([`BfqConfig::inject`]).
        inject: bool,
        /// Requests in flight of the applications that are not raised
        /// while a raised one is warm ([`BfqConfig::warm_depth`]).
        warm_depth: u32,
    },
    /// CFQ-like time slices.
    Cfq {
        /// T_slice at weight 1, ms.
        slice_ms: u64,
        /// Idling for the active application, ms.
        slice_idle_ms: u64,
    },
    /// C-LOOK.
    CLook,
    /// Anticipatory.
    As {
        /// Anticipation, ms.
        t_wait_ms: u64,
    },
    /// SCAN-EDF.
    ScanEdf {
        /// Relative deadline at weight 1, ms.
        deadline_ms: u64,
        /// Δ, the deadline granularity, ms.
        delta_ms: u64,
        /// T_wait, ms.
        t_wait_ms: u64,
    },
    /// YFQ.
    Yfq {
        /// BT_size, requests per batch.
        batch: u32,
        /// T_wait, ms.
        t_wait_ms: u64,
    },
}

/// A spec that could not be parsed, or a scheduler that refused its
/// configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum DiskSpecError {
    /// No disk scheduler has this name.
    UnknownScheduler(String),
    /// A parameter the scheduler does not take, or not `key=integer`.
    BadParameter {
        /// The scheduler.
        sched: &'static str,
        /// The offending text.
        param: String,
    },
    /// A parameter given twice in one spec: neither value is taken over the
    /// other.
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
    /// The scheduler refused the configuration it was built with (e.g. the
    /// number of applications).
    Refused(DiskConfigError),
}

impl fmt::Display for DiskSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownScheduler(n) => {
                let names: Vec<&str> = DiskSchedKind::ALL.iter().map(|k| k.name()).collect();
                write!(
                    f,
                    "unknown disk scheduler '{n}' (known: {})",
                    names.join(", ")
                )
            }
            Self::BadParameter { sched, param } => {
                let keys: Vec<&str> = DiskSchedKind::from_name(sched)
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
            Self::DuplicateParameter { sched, key } => {
                write!(f, "parameter `{key}` of `{sched}` given twice")
            }
            Self::OutOfRange {
                sched,
                key,
                value,
                min,
                max,
            } => write!(
                f,
                "parameter {key}={value} of {sched} is outside {min}..={max}"
            ),
            Self::Refused(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DiskSpecError {}

impl From<DiskConfigError> for DiskSpecError {
    fn from(e: DiskConfigError) -> Self {
        Self::Refused(e)
    }
}

impl DiskSchedSpec {
    /// BFQ with B_max `b_max` sectors, everything else at the default.
    pub const fn bfq(b_max: u32) -> Self {
        Self::Bfq {
            b_max,
            t_wait_ms: DEFAULT_T_WAIT / MS,
            t_fifo_ms: DEFAULT_T_FIFO / MS,
            t_max_ms: None,
            low_latency: true,
            inject: false,
            warm_depth: DEFAULT_WARM_DEPTH,
        }
    }

    /// CFQ with time slices of `slice_ms` at weight 1, idling 8 ms.
    pub const fn cfq(slice_ms: u64) -> Self {
        Self::Cfq {
            slice_ms,
            slice_idle_ms: 8,
        }
    }

    /// Anticipatory scheduling with the default 4 ms anticipation.
    pub const fn anticipatory() -> Self {
        Self::As {
            t_wait_ms: DEFAULT_T_WAIT / MS,
        }
    }

    /// SCAN-EDF with granularity `delta_ms` and idling `t_wait_ms`, 20 ms
    /// deadlines.
    pub const fn scan_edf(delta_ms: u64, t_wait_ms: u64) -> Self {
        Self::ScanEdf {
            deadline_ms: 20,
            delta_ms,
            t_wait_ms,
        }
    }

    /// YFQ with batches of `batch` requests and idling `t_wait_ms`.
    pub const fn yfq(batch: u32, t_wait_ms: u64) -> Self {
        Self::Yfq { batch, t_wait_ms }
    }

    /// Which scheduler.
    pub const fn kind(&self) -> DiskSchedKind {
        match self {
            Self::Bfq { .. } => DiskSchedKind::Bfq,
            Self::Cfq { .. } => DiskSchedKind::Cfq,
            Self::CLook => DiskSchedKind::CLook,
            Self::As { .. } => DiskSchedKind::As,
            Self::ScanEdf { .. } => DiskSchedKind::ScanEdf,
            Self::Yfq { .. } => DiskSchedKind::Yfq,
        }
    }

    /// The catalogue entry of its scheduler.
    pub fn info(&self) -> &'static DiskSchedInfo {
        self.kind().info()
    }

    /// Every parameter that has a value, as `(key, value)` in the
    /// catalogue's order (a parameter derived at run time, BFQ's automatic
    /// T_max, is left out).
    pub fn params(&self) -> Vec<(&'static str, u64)> {
        match *self {
            Self::Bfq {
                b_max,
                t_wait_ms,
                t_fifo_ms,
                t_max_ms,
                low_latency,
                inject,
                warm_depth,
            } => {
                let mut v = vec![
                    ("b_max", u64::from(b_max)),
                    ("t_wait_ms", t_wait_ms),
                    ("t_fifo_ms", t_fifo_ms),
                ];
                v.extend(t_max_ms.map(|t| ("t_max_ms", t)));
                v.push(("low_latency", u64::from(low_latency)));
                v.push(("inject", u64::from(inject)));
                v.push(("warm_depth", u64::from(warm_depth)));
                v
            }
            Self::Cfq {
                slice_ms,
                slice_idle_ms,
            } => vec![("slice_ms", slice_ms), ("slice_idle_ms", slice_idle_ms)],
            Self::CLook => Vec::new(),
            Self::As { t_wait_ms } => vec![("t_wait_ms", t_wait_ms)],
            Self::ScanEdf {
                deadline_ms,
                delta_ms,
                t_wait_ms,
            } => vec![
                ("deadline_ms", deadline_ms),
                ("delta_ms", delta_ms),
                ("t_wait_ms", t_wait_ms),
            ],
            Self::Yfq { batch, t_wait_ms } => {
                vec![("batch", u64::from(batch)), ("t_wait_ms", t_wait_ms)]
            }
        }
    }

    /// Sets parameter `key` (already checked against its range, so the
    /// narrowing conversions cannot fail); `false` for a key this
    /// scheduler does not take.
    fn set(&mut self, key: &str, value: u64) -> bool {
        let narrow = |v: u64| u32::try_from(v).expect("checked against a range within u32");
        match (self, key) {
            (Self::Bfq { b_max, .. }, "b_max") => *b_max = narrow(value),
            (Self::Bfq { t_wait_ms, .. }, "t_wait_ms")
            | (Self::As { t_wait_ms }, "t_wait_ms")
            | (Self::ScanEdf { t_wait_ms, .. }, "t_wait_ms")
            | (Self::Yfq { t_wait_ms, .. }, "t_wait_ms") => *t_wait_ms = value,
            (Self::Bfq { t_fifo_ms, .. }, "t_fifo_ms") => *t_fifo_ms = value,
            (Self::Bfq { t_max_ms, .. }, "t_max_ms") => *t_max_ms = Some(value),
            (Self::Bfq { low_latency, .. }, "low_latency") => *low_latency = value == 1,
            (Self::Bfq { inject, .. }, "inject") => *inject = value == 1,
            (Self::Bfq { warm_depth, .. }, "warm_depth") => *warm_depth = narrow(value),
            (Self::Cfq { slice_ms, .. }, "slice_ms") => *slice_ms = value,
            (Self::Cfq { slice_idle_ms, .. }, "slice_idle_ms") => *slice_idle_ms = value,
            (Self::ScanEdf { deadline_ms, .. }, "deadline_ms") => *deadline_ms = value,
            (Self::ScanEdf { delta_ms, .. }, "delta_ms") => *delta_ms = value,
            (Self::Yfq { batch, .. }, "batch") => *batch = narrow(value),
            _ => return false,
        }
        true
    }

    /// `value` checked against the range of parameter `key`.
    fn checked(kind: DiskSchedKind, key: &str, value: u64) -> Result<(), DiskSpecError> {
        let info = kind.info();
        let p = info.params.iter().find(|p| p.key == key).ok_or_else(|| {
            DiskSpecError::BadParameter {
                sched: info.name,
                param: format!("{key}={value}"),
            }
        })?;
        if (p.min..=p.max).contains(&value) {
            Ok(())
        } else {
            Err(DiskSpecError::OutOfRange {
                sched: info.name,
                key: p.key,
                value,
                min: p.min,
                max: p.max,
            })
        }
    }

    /// Parses `NAME[:KEY=VALUE,...]`, checking every value against its
    /// range; parameters not given take the catalogue's defaults.
    pub fn parse(text: &str) -> Result<Self, DiskSpecError> {
        let text = text.trim();
        let (name, rest) = match text.split_once(':') {
            Some((name, rest)) => (name, Some(rest)),
            None => (text, None),
        };
        let kind = DiskSchedKind::from_name(&name.to_ascii_lowercase())
            .ok_or_else(|| DiskSpecError::UnknownScheduler(name.to_string()))?;
        let info = kind.info();
        let mut spec = kind.default_spec();
        let mut given: Vec<&'static str> = Vec::new();
        // After a `:`, every comma-separated entry is a parameter: an empty
        // one (`bfq:`, `bfq:b_max=8192,`) is refused, not skipped.
        for p in rest.into_iter().flat_map(|r| r.split(',')) {
            let bad = || DiskSpecError::BadParameter {
                sched: info.name,
                param: p.to_string(),
            };
            let (k, v) = p.split_once('=').ok_or_else(bad)?;
            let value: u64 = v.parse().map_err(|_| bad())?;
            let key = info.params.iter().find(|q| q.key == k).ok_or_else(bad)?.key;
            if given.contains(&key) {
                return Err(DiskSpecError::DuplicateParameter {
                    sched: info.name,
                    key,
                });
            }
            Self::checked(kind, key, value)?;
            spec.set(key, value);
            given.push(key);
        }
        Ok(spec)
    }

    /// Checks every parameter against its range in the catalogue: the
    /// check [`DiskSchedSpec::parse`] makes, for a spec written in code.
    pub fn check(&self) -> Result<(), DiskSpecError> {
        self.params()
            .into_iter()
            .try_for_each(|(key, value)| Self::checked(self.kind(), key, value))
    }

    /// Builds the scheduler for application ids `0..max_apps`, after
    /// [`DiskSchedSpec::check`]; every parameter is used exactly as given.
    pub fn build(&self, max_apps: u32) -> Result<Box<dyn DiskScheduler + Send>, DiskSpecError> {
        self.build_with_l_max(max_apps, DEFAULT_L_MAX)
    }

    /// [`DiskSchedSpec::build`] taking requests of up to `l_max` sectors
    /// (the engine's largest request) instead of [`DEFAULT_L_MAX`]. BFQ
    /// refuses an `l_max` above its B_max (a budget must fit the longest
    /// request).
    pub fn build_with_l_max(
        &self,
        max_apps: u32,
        l_max: u32,
    ) -> Result<Box<dyn DiskScheduler + Send>, DiskSpecError> {
        self.check()?;
        let l = l_max;
        let ms = |v: u64| -> Nanos { v * MS };
        Ok(match *self {
            Self::Bfq {
                b_max,
                t_wait_ms,
                t_fifo_ms,
                t_max_ms,
                low_latency,
                inject,
                warm_depth,
            } => {
                let cfg = BfqConfig {
                    max_apps,
                    low_latency,
                    inject,
                    warm_depth,
                    t_wait: ms(t_wait_ms),
                    t_fifo: ms(t_fifo_ms),
                    t_max: match t_max_ms {
                        None => TimeBudget::Auto,
                        Some(0) => TimeBudget::Off,
                        Some(t) => TimeBudget::Fixed(ms(t)),
                    },
                    l_max,
                    ..BfqConfig::simplified(b_max)?
                };
                Box::new(Bfq::new(cfg)?)
            }
            Self::Cfq {
                slice_ms,
                slice_idle_ms,
            } => Box::new(Cfq::new(max_apps, l, ms(slice_ms), ms(slice_idle_ms))),
            Self::CLook => Box::new(CLook::new(max_apps, l)),
            Self::As { t_wait_ms } => Box::new(Anticipatory::new(max_apps, l, ms(t_wait_ms))),
            Self::ScanEdf {
                deadline_ms,
                delta_ms,
                t_wait_ms,
            } => Box::new(ScanEdf::new(
                max_apps,
                l,
                ms(deadline_ms),
                ms(delta_ms),
                ms(t_wait_ms),
            )?),
            Self::Yfq { batch, t_wait_ms } => {
                Box::new(Yfq::new(max_apps, l, batch as usize, ms(t_wait_ms))?)
            }
        })
    }

    /// Name and parameters as the thesis' tables print them, e.g.
    /// `BFQ 4096 sect` or `SCAN-EDF Δ 80 ms, T_wait 4 ms`; a parameter
    /// the tables do not vary is named only when it is not the default.
    pub fn label(&self) -> String {
        let extra = self.non_default_extras();
        match *self {
            Self::Bfq { b_max, .. } => format!("BFQ {b_max} sect{extra}"),
            Self::Cfq { slice_ms, .. } => format!("CFQ {slice_ms} ms{extra}"),
            Self::CLook => "C-LOOK".into(),
            Self::As { .. } => format!("AS{extra}"),
            Self::ScanEdf {
                delta_ms,
                t_wait_ms,
                ..
            } => format!("SCAN-EDF Δ {delta_ms} ms, T_wait {t_wait_ms} ms{extra}"),
            Self::Yfq { batch, t_wait_ms } => {
                format!("YFQ {batch} reqs, T_wait {t_wait_ms} ms{extra}")
            }
        }
    }

    /// `, NAME VALUE ms` (`, NAME VALUE` for a parameter whose key does
    /// not end in `_ms`) for each parameter the label does not show
    /// otherwise and that differs from the default.
    fn non_default_extras(&self) -> String {
        let shown: &[&str] = match self.kind() {
            DiskSchedKind::Bfq => &["b_max"],
            DiskSchedKind::Cfq => &["slice_ms"],
            DiskSchedKind::ScanEdf => &["delta_ms", "t_wait_ms"],
            DiskSchedKind::Yfq => &["batch", "t_wait_ms"],
            DiskSchedKind::CLook | DiskSchedKind::As => &[],
        };
        let defaults = self.kind().default_spec().params();
        let mut out = String::new();
        for (key, value) in self.params() {
            if shown.contains(&key) || defaults.contains(&(key, value)) {
                continue;
            }
            let name = match key {
                "t_wait_ms" => "T_wait",
                "t_fifo_ms" => "T_FIFO",
                "t_max_ms" => "T_max",
                "slice_idle_ms" => "idle",
                "warm_depth" => "warm depth",
                "deadline_ms" => "deadline",
                other => other,
            };
            if key == "low_latency" {
                // Off is the only non-default value.
                out.push_str(", low latency off");
            } else if key == "inject" {
                // On is the only non-default value.
                out.push_str(", injection");
            } else if key == "t_max_ms" && value == 0 {
                out.push_str(&format!(", {name} off"));
            } else if key.ends_with("_ms") {
                out.push_str(&format!(", {name} {value} ms"));
            } else {
                // A count or a size: its unit is in the catalogue's help.
                out.push_str(&format!(", {name} {value}"));
            }
        }
        out
    }
}

/// The spec text: the name, then every parameter that differs from its
/// default (`bfq`, `cfq:slice_ms=20`); [`DiskSchedSpec::parse`] reads it
/// back to the same spec.
impl fmt::Display for DiskSchedSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().name())?;
        let defaults = self.kind().default_spec().params();
        let mut first = true;
        for (k, v) in self.params() {
            if defaults.contains(&(k, v)) {
                continue;
            }
            write!(f, "{}{k}={v}", if first { ':' } else { ',' })?;
            first = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_builds_the_scheduler_its_entry_names() {
        for &k in DiskSchedKind::ALL {
            let info = k.info();
            assert_eq!(info.kind, k);
            assert_eq!(DiskSchedKind::from_name(info.name), Some(k));
            let spec = k.default_spec();
            assert_eq!(spec.kind(), k);
            assert_eq!(spec.build(2).unwrap().name(), info.name);
            // Every default is in range, and the default spec carries it.
            for p in info.params {
                assert!(p.min <= p.max);
                if let Some(d) = p.default {
                    assert!((p.min..=p.max).contains(&d), "{}", p.key);
                    assert!(spec.params().contains(&(p.key, d)), "{}", p.key);
                }
            }
            // Every field is a catalogue parameter.
            for (key, _) in spec.params() {
                assert!(info.params.iter().any(|p| p.key == key), "{key}");
            }
            assert_eq!(spec.to_string(), info.name);
            assert_eq!(DiskSchedSpec::parse(info.name), Ok(spec));
        }
    }

    /// Every catalogue parameter of every scheduler is read from a spec
    /// (`set` knows its key): at both ends of its range, the parsed spec
    /// carries the value given.
    #[test]
    fn every_parameter_is_read_at_both_ends_of_its_range() {
        for &k in DiskSchedKind::ALL {
            for p in k.info().params {
                for v in [p.min, p.max] {
                    let text = format!("{}:{}={v}", k.name(), p.key);
                    let spec = DiskSchedSpec::parse(&text).unwrap();
                    assert!(spec.params().contains(&(p.key, v)), "{text}");
                }
            }
        }
    }

    #[test]
    fn parses_names_and_parameters_and_prints_them_back() {
        for (text, spec) in [
            ("bfq:b_max=16384", DiskSchedSpec::bfq(16384)),
            ("cfq:slice_ms=20", DiskSchedSpec::cfq(20)),
            (
                "scan-edf:delta_ms=640,t_wait_ms=0",
                DiskSchedSpec::scan_edf(640, 0),
            ),
            ("yfq:batch=16", DiskSchedSpec::yfq(16, 4)),
            ("c-look", DiskSchedSpec::CLook),
            ("as", DiskSchedSpec::anticipatory()),
        ] {
            assert_eq!(DiskSchedSpec::parse(text), Ok(spec), "{text}");
            assert_eq!(spec.to_string(), text);
        }
        let s = DiskSchedSpec::parse("BFQ:t_max_ms=0,t_wait_ms=2,t_fifo_ms=50").unwrap();
        assert_eq!(
            s,
            DiskSchedSpec::Bfq {
                b_max: 4096,
                t_wait_ms: 2,
                t_fifo_ms: 50,
                t_max_ms: Some(0),
                low_latency: true,
                inject: false,
                warm_depth: DEFAULT_WARM_DEPTH,
            }
        );
        assert_eq!(DiskSchedSpec::parse(&s.to_string()), Ok(s));
    }

    #[test]
    fn refuses_bad_specs_naming_the_parameter_and_its_range() {
        let known: Vec<&str> = DiskSchedKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(
            DiskSchedSpec::parse("nope").unwrap_err().to_string(),
            format!(
                "unknown disk scheduler 'nope' (known: {})",
                known.join(", ")
            )
        );
        let cases: [(&str, &str); 17] = [
            ("bfq:inject=2", "parameter inject=2 of bfq is outside 0..=1"),
            (
                "bfq:warm_depth=0",
                "parameter warm_depth=0 of bfq is outside 1..=256",
            ),
            (
                "bfq:warm_depth=257",
                "parameter warm_depth=257 of bfq is outside 1..=256",
            ),
            (
                "bfq:low_latency=2",
                "parameter low_latency=2 of bfq is outside 0..=1",
            ),
            (
                "bfq:b_max=255",
                "parameter b_max=255 of bfq is outside 256..=16777216",
            ),
            (
                "bfq:b_max=16777217",
                "parameter b_max=16777217 of bfq is outside 256..=16777216",
            ),
            (
                "cfq:slice_ms=0",
                "parameter slice_ms=0 of cfq is outside 1..=60000",
            ),
            (
                "as:t_wait_ms=1001",
                "parameter t_wait_ms=1001 of as is outside 0..=1000",
            ),
            (
                "scan-edf:delta_ms=0",
                "parameter delta_ms=0 of scan-edf is outside 1..=60000",
            ),
            (
                "yfq:batch=4097",
                "parameter batch=4097 of yfq is outside 1..=4096",
            ),
            (
                "c-look:b_max=4",
                "bad parameter 'b_max=4': scheduler c-look takes none",
            ),
            (
                "yfq:batch=4,batch=8",
                "parameter `batch` of `yfq` given twice",
            ),
            (
                "bfq:b_max=8192,",
                "bad parameter '' for scheduler bfq (takes b_max=INTEGER, t_wait_ms=INTEGER, t_fifo_ms=INTEGER, t_max_ms=INTEGER, low_latency=INTEGER, inject=INTEGER, warm_depth=INTEGER)",
            ),
            (
                "c-look:",
                "bad parameter '': scheduler c-look takes none",
            ),
            (
                "bfq:b_max=nan",
                "bad parameter 'b_max=nan' for scheduler bfq (takes b_max=INTEGER, t_wait_ms=INTEGER, t_fifo_ms=INTEGER, t_max_ms=INTEGER, low_latency=INTEGER, inject=INTEGER, warm_depth=INTEGER)",
            ),
            (
                "bfq:t_wait_ms=-1",
                "bad parameter 't_wait_ms=-1' for scheduler bfq (takes b_max=INTEGER, t_wait_ms=INTEGER, t_fifo_ms=INTEGER, t_max_ms=INTEGER, low_latency=INTEGER, inject=INTEGER, warm_depth=INTEGER)",
            ),
            (
                "bfq:t_fifo_ms=18446744073709551616",
                "bad parameter 't_fifo_ms=18446744073709551616' for scheduler bfq (takes b_max=INTEGER, t_wait_ms=INTEGER, t_fifo_ms=INTEGER, t_max_ms=INTEGER, low_latency=INTEGER, inject=INTEGER, warm_depth=INTEGER)",
            ),
        ];
        for (text, msg) in cases {
            assert_eq!(
                DiskSchedSpec::parse(text).unwrap_err().to_string(),
                msg,
                "{text}"
            );
        }
        assert_eq!(
            DiskSchedSpec::parse("cfq:slice=4").unwrap_err().to_string(),
            "bad parameter 'slice=4' for scheduler cfq (takes slice_ms=INTEGER, slice_idle_ms=INTEGER)"
        );
        assert!(matches!(
            DiskSchedSpec::parse("bfq:b_max=x"),
            Err(DiskSpecError::BadParameter { .. })
        ));
    }

    #[test]
    fn a_spec_written_in_code_is_checked_before_it_is_built() {
        for bad in [
            DiskSchedSpec::yfq(0, 4),
            DiskSchedSpec::scan_edf(0, 4),
            DiskSchedSpec::cfq(0),
            DiskSchedSpec::bfq(100),
        ] {
            assert!(
                matches!(bad.build(2), Err(DiskSpecError::OutOfRange { .. })),
                "{bad:?}"
            );
        }
        // The scheduler's own limits are reported as its refusal.
        assert!(matches!(
            DiskSchedSpec::bfq(4096).build(0),
            Err(DiskSpecError::Refused(_))
        ));
    }

    #[test]
    fn labels_are_the_thesis_table_rows_and_name_other_parameters() {
        for (spec, label) in [
            (DiskSchedSpec::bfq(4096), "BFQ 4096 sect"),
            (DiskSchedSpec::cfq(100), "CFQ 100 ms"),
            (DiskSchedSpec::CLook, "C-LOOK"),
            (DiskSchedSpec::anticipatory(), "AS"),
            (
                DiskSchedSpec::scan_edf(80, 4),
                "SCAN-EDF Δ 80 ms, T_wait 4 ms",
            ),
            (DiskSchedSpec::yfq(16, 0), "YFQ 16 reqs, T_wait 0 ms"),
        ] {
            assert_eq!(spec.label(), label);
        }
        let p = |t| DiskSchedSpec::parse(t).unwrap().label();
        assert_eq!(
            p("bfq:t_wait_ms=2,t_max_ms=0"),
            "BFQ 4096 sect, T_wait 2 ms, T_max off"
        );
        assert_eq!(
            p("bfq:t_fifo_ms=50,t_max_ms=125"),
            "BFQ 4096 sect, T_FIFO 50 ms, T_max 125 ms"
        );
        assert_eq!(p("bfq:low_latency=0"), "BFQ 4096 sect, low latency off");
        assert_eq!(p("bfq:inject=1"), "BFQ 4096 sect, injection");
        let off = DiskSchedSpec::parse("bfq:low_latency=0").unwrap();
        assert_eq!(off.to_string(), "bfq:low_latency=0");
        assert_eq!(DiskSchedSpec::parse(&off.to_string()), Ok(off));
        assert_eq!(
            DiskSchedSpec::parse("bfq:low_latency=1"),
            Ok(DiskSchedSpec::bfq(4096))
        );
        assert_eq!(p("cfq:slice_idle_ms=0"), "CFQ 100 ms, idle 0 ms");
        assert_eq!(p("as:t_wait_ms=0"), "AS, T_wait 0 ms");
        assert_eq!(
            p("scan-edf:deadline_ms=40"),
            "SCAN-EDF Δ 80 ms, T_wait 4 ms, deadline 40 ms"
        );
    }
}
