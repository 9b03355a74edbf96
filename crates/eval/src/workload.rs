//! Flow sets and packet sizes (the QFQ+ paper §8).
//!
//! A flow set is a list of `WEIGHTxCOUNT[@MAXLEN]` groups, e.g.
//! `1x500,2x250,8x125` (500 flows of weight 1, 250 of weight 2, 125 of
//! weight 8). Flow ids are assigned in order, starting at 0. Named presets
//! reproduce the paper's flow sets.

use rand::Rng;
use serde::Serialize;
use std::fmt;

/// Default maximum packet length of a flow (bytes): an Ethernet MTU.
pub const DEFAULT_MAX_LEN: u32 = 1500;

/// Most flows a flow set may hold (all groups together): 2^22.
pub const MAX_FLOWS: u32 = 1 << 22;

/// A number of a flow group or a size distribution that is not a whole
/// number in `1..=max`: which of "not a number", "zero", "too large" it
/// is, naming the field (`WEIGHT`, `COUNT`, `MAXLEN`, `MIN`) and the range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field.
    pub what: &'static str,
    /// The text given.
    pub text: String,
    /// The field's largest value.
    pub max: u32,
    /// What is wrong with it.
    pub problem: FieldProblem,
}

/// What is wrong with a [`FieldError`]'s text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldProblem {
    /// Not only digits (`negative`: it starts with `-`).
    NotWhole {
        /// It starts with `-`.
        negative: bool,
    },
    /// Zero.
    Zero,
    /// Above the maximum.
    TooLarge,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let FieldError {
            what, text, max, ..
        } = self;
        let range = format!("{what} must be in 1..={max}");
        match self.problem {
            FieldProblem::NotWhole { negative } => {
                let sign = if negative { "negative; " } else { "" };
                write!(f, "{what} `{text}` is {sign}not a whole number ({range})")
            }
            FieldProblem::Zero => write!(f, "{what} is 0 ({range})"),
            FieldProblem::TooLarge => write!(f, "{what} {text} is too large ({range})"),
        }
    }
}

/// One number of a flow group: a whole number in `1..=max`.
fn field(text: &str, what: &'static str, max: u32) -> Result<u32, FieldError> {
    let error = |problem| FieldError {
        what,
        text: text.to_string(),
        max,
        problem,
    };
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        let negative = text.starts_with('-');
        return Err(error(FieldProblem::NotWhole { negative }));
    }
    // Only digits: parsing fails only by overflow.
    match text.parse::<u64>() {
        Ok(0) => Err(error(FieldProblem::Zero)),
        Ok(v) if v <= u64::from(max) => Ok(v as u32),
        _ => Err(error(FieldProblem::TooLarge)),
    }
}

/// A group of identical flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FlowGroup {
    /// Weight of each flow.
    pub weight: u32,
    /// Number of flows.
    pub count: u32,
    /// Maximum packet length of each flow (bytes).
    pub max_len: u32,
}

/// A set of flows: the input of every experiment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlowSet {
    /// The name it was given (a preset name or the spec text).
    pub name: String,
    /// The groups, in flow-id order.
    pub groups: Vec<FlowGroup>,
}

/// The presets of the QFQ+ paper §8 (and §6 for `1k-highw`).
pub const PRESETS: &[(&str, &str, &str)] = &[
    ("1k-w1", "1x1000", "1000 flows, all weight 1"),
    (
        "1k-wmix",
        "1x500,2x250,8x125",
        "500 + 250 + 125 flows of weights 1, 2, 8",
    ),
    ("32k-w1", "1x32768", "32768 flows, all weight 1"),
    (
        "32k-wmix",
        "1x16384,2x8192,8x4096",
        "16k + 8k + 4k flows of weights 1, 2, 8",
    ),
    (
        "1k-highw",
        "333x1,1x999",
        "one flow with 1/4 of the link (weight 333) and 999 of weight 1",
    ),
];

/// A flow-set spec (or a packet-size distribution) that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowSetError {
    /// A `WEIGHTxCOUNT[@MAXLEN]` group that does not parse.
    BadGroup {
        /// The group's text.
        group: String,
        /// Why.
        why: GroupProblem,
    },
    /// A flow set named twice in a list of flow sets.
    DuplicatePreset(String),
    /// A list of several flow sets where one is expected.
    NotOneSet {
        /// The sets in the list.
        sets: usize,
    },
    /// More than [`MAX_FLOWS`] flows in all.
    TooManyFlows {
        /// The flows the groups add up to.
        total: u64,
    },
    /// `uniform:MIN` with `MIN` above the smallest `MAXLEN` of the flow
    /// set: that flow could not draw a length in `MIN..=MAXLEN`.
    MinAboveMaxLen {
        /// `MIN`.
        min: u32,
        /// The smallest `MAXLEN` of the flow set.
        max_len: u32,
    },
    /// A packet-size distribution that does not parse.
    BadSizes {
        /// The text given.
        text: String,
        /// The bad `MIN` of `uniform:MIN`; `None`: neither form.
        why: Option<FieldError>,
    },
}

/// What is wrong with a flow group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupProblem {
    /// Nothing between two commas.
    Empty,
    /// A preset among groups.
    Preset,
    /// No `x` between weight and count.
    MissingX,
    /// A number out of its range.
    Field(FieldError),
}

impl fmt::Display for GroupProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupProblem::Empty => write!(f, "empty group"),
            GroupProblem::Preset => write!(
                f,
                "a preset names a whole flow set; it cannot be combined with groups (separate flow sets with `;`)"
            ),
            GroupProblem::MissingX => write!(f, "missing 'x'"),
            GroupProblem::Field(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for FlowSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowSetError::BadGroup { group, why } => {
                let presets: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
                write!(
                    f,
                    "bad flow group '{group}': {why} (expected WEIGHTxCOUNT[@MAXLEN], e.g. 1x500,8x125@9000, or a preset: {})",
                    presets.join(", ")
                )
            }
            FlowSetError::DuplicatePreset(p) => {
                write!(f, "--flows: {p} is named twice (each flow set runs once)")
            }
            FlowSetError::NotOneSet { sets } => write!(
                f,
                "--flows: {sets} flow sets given, this command runs one (`;` or a list of presets separates sets; `,` separates the groups of one set)"
            ),
            FlowSetError::TooManyFlows { total } => {
                write!(f, "{total} flows in all: too many (at most {MAX_FLOWS})")
            }
            FlowSetError::MinAboveMaxLen { min, max_len } => write!(
                f,
                "--sizes uniform:{min}: MIN must be in 1..={max_len}, the smallest MAXLEN of the flow set"
            ),
            FlowSetError::BadSizes {
                text,
                why: Some(why),
            } => write!(f, "bad size distribution '{text}': {why}"),
            FlowSetError::BadSizes { text, why: None } => write!(
                f,
                "bad size distribution '{text}' (expected fixed or uniform:MIN)"
            ),
        }
    }
}

impl std::error::Error for FlowSetError {}

/// Whether `name` is one of the [`PRESETS`].
fn is_preset(name: &str) -> bool {
    PRESETS.iter().any(|(n, _, _)| *n == name)
}

impl FlowSet {
    /// A list of flow sets, the one grammar of every `--flows`: flow sets
    /// are separated by `;`; within a set, `WEIGHTxCOUNT[@MAXLEN]` groups
    /// are separated by `,` (`1x64,1x4096` is ONE set of 4160 flows,
    /// `1x64;1x4096` two sets). A preset names a whole set, so a `,` list
    /// of presets is a list of sets (`1k-w1,32k-w1` = `1k-w1;32k-w1`); a
    /// preset among groups is refused. Each set at most once.
    pub fn parse_list(text: &str) -> Result<Vec<FlowSet>, FlowSetError> {
        let mut sets: Vec<FlowSet> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for piece in text.split(';').map(str::trim) {
            let names: Vec<&str> = piece.split(',').map(str::trim).collect();
            let specs: Vec<&str> = if names.iter().all(|n| is_preset(n)) {
                names
            } else {
                vec![piece]
            };
            for spec in specs {
                let set = FlowSet::parse(spec)?;
                let key = spec.split_whitespace().collect::<String>();
                if seen.contains(&key) {
                    return Err(FlowSetError::DuplicatePreset(spec.to_string()));
                }
                seen.push(key);
                sets.push(set);
            }
        }
        Ok(sets)
    }

    /// One flow set: [`FlowSet::parse_list`] holding exactly one, so that a
    /// command that runs a single set reads `--flows` with the same grammar
    /// and refuses a list rather than merging it.
    pub fn parse_one(text: &str) -> Result<FlowSet, FlowSetError> {
        let mut sets = Self::parse_list(text)?;
        if sets.len() != 1 {
            return Err(FlowSetError::NotOneSet { sets: sets.len() });
        }
        Ok(sets.remove(0))
    }

    /// Parses a preset name or a `WEIGHTxCOUNT[@MAXLEN],...` list.
    pub fn parse(text: &str) -> Result<FlowSet, FlowSetError> {
        let text = text.trim();
        if let Some((name, spec, _)) = PRESETS.iter().find(|(n, _, _)| *n == text) {
            let mut set = Self::parse_groups(spec)?;
            set.name = name.to_string();
            return Ok(set);
        }
        Self::parse_groups(text)
    }

    fn parse_groups(text: &str) -> Result<FlowSet, FlowSetError> {
        let bad = |g: &str, why: GroupProblem| FlowSetError::BadGroup {
            group: g.to_string(),
            why,
        };
        let mut groups = Vec::new();
        for g in text.split(',').map(str::trim) {
            let bad_field = |e: FieldError| bad(g, GroupProblem::Field(e));
            if g.is_empty() {
                return Err(bad(g, GroupProblem::Empty));
            }
            if PRESETS.iter().any(|p| p.0 == g) {
                return Err(bad(g, GroupProblem::Preset));
            }
            let (wc, max_len) = match g.split_once('@') {
                Some((wc, l)) => (wc, field(l, "MAXLEN", u32::MAX).map_err(bad_field)?),
                None => (g, DEFAULT_MAX_LEN),
            };
            let (w, c) = wc
                .split_once(['x', 'X'])
                .ok_or_else(|| bad(g, GroupProblem::MissingX))?;
            let weight = field(w, "WEIGHT", u32::MAX).map_err(bad_field)?;
            let count = field(c, "COUNT", MAX_FLOWS).map_err(bad_field)?;
            groups.push(FlowGroup {
                weight,
                count,
                max_len,
            });
        }
        let total: u64 = groups.iter().map(|g| g.count as u64).sum();
        if total > u64::from(MAX_FLOWS) {
            return Err(FlowSetError::TooManyFlows { total });
        }
        Ok(FlowSet {
            name: text.to_string(),
            groups,
        })
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        self.groups.iter().map(|g| g.count as usize).sum()
    }

    /// True if there are no flows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(weight, max_len)` of every flow, indexed by flow id.
    pub fn flows(&self) -> Vec<(u32, u32)> {
        let mut v = Vec::with_capacity(self.len());
        for g in &self.groups {
            v.extend(std::iter::repeat_n((g.weight, g.max_len), g.count as usize));
        }
        v
    }

    /// Sum of all weights.
    pub fn weight_sum(&self) -> u64 {
        self.groups
            .iter()
            .map(|g| g.weight as u64 * g.count as u64)
            .sum()
    }

    /// Largest maximum packet length (0 for an empty set).
    pub fn max_len(&self) -> u32 {
        self.groups.iter().map(|g| g.max_len).max().unwrap_or(0)
    }

    /// Smallest maximum packet length (0 for an empty set).
    pub fn min_max_len(&self) -> u32 {
        self.groups.iter().map(|g| g.max_len).min().unwrap_or(0)
    }
}

/// How packet lengths are drawn, per flow, from `1..=max_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PacketSizes {
    /// Every packet is `max_len` bytes.
    Fixed,
    /// Uniform in `min..=max_len`; [`PacketSizes::check_for`] refuses a
    /// `min` above a flow's `max_len`.
    Uniform {
        /// Smallest length.
        min: u32,
    },
}

impl PacketSizes {
    /// Parses `fixed` or `uniform:MIN`.
    pub fn parse(text: &str) -> Result<Self, FlowSetError> {
        match text.split_once(':') {
            None if text == "fixed" => Ok(PacketSizes::Fixed),
            Some(("uniform", m)) => field(m, "MIN", u32::MAX)
                .map(|min| PacketSizes::Uniform { min })
                .map_err(|why| FlowSetError::BadSizes {
                    text: text.to_string(),
                    why: Some(why),
                }),
            _ => Err(FlowSetError::BadSizes {
                text: text.to_string(),
                why: None,
            }),
        }
    }

    /// `Ok` if every flow of `flows` can draw a length: `uniform:MIN`
    /// needs `MIN` at most the smallest `MAXLEN`.
    pub fn check_for(&self, flows: &FlowSet) -> Result<(), FlowSetError> {
        match *self {
            PacketSizes::Uniform { min } if min > flows.min_max_len() => {
                Err(FlowSetError::MinAboveMaxLen {
                    min,
                    max_len: flows.min_max_len(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Draws one length for a flow whose maximum is `max_len`, which
    /// [`PacketSizes::check_for`] has checked against `min` (an unchecked
    /// `min` above it draws `max_len`, never panics).
    pub fn draw<R: Rng>(&self, rng: &mut R, max_len: u32) -> u32 {
        match *self {
            PacketSizes::Fixed => max_len,
            PacketSizes::Uniform { min } => rng.random_range(min.min(max_len)..=max_len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_groups_and_presets() {
        let s = FlowSet::parse("1x500,2x250,8x125@9000").unwrap();
        assert_eq!(s.len(), 875);
        assert_eq!(
            s.groups[2],
            FlowGroup {
                weight: 8,
                count: 125,
                max_len: 9000
            }
        );
        assert_eq!(s.weight_sum(), 500 + 500 + 1000);
        let h = FlowSet::parse("1k-highw").unwrap();
        assert_eq!(h.len(), 1000);
        assert_eq!(h.flows()[0], (333, 1500));
        // the high-weight flow gets a quarter of the link
        assert_eq!(h.weight_sum(), 4 * 333);
        for (name, _, _) in PRESETS {
            assert!(FlowSet::parse(name).is_ok());
        }
    }

    #[test]
    fn rejects_malformed_specs() {
        for bad in [
            "", "1x", "x5", "0x5", "1x0", "1x5@", "1x5@0", "ax5", "1-5", "1x5,,2x3",
        ] {
            assert!(FlowSet::parse(bad).is_err(), "{bad}");
        }
        assert!(PacketSizes::parse("uniform:0").is_err());
        let set = FlowSet::parse("1x2@9000,1x2@1500").unwrap();
        let sizes = |m| PacketSizes::Uniform { min: m };
        assert!(sizes(1500).check_for(&set).is_ok());
        let e = sizes(1501).check_for(&set).unwrap_err().to_string();
        assert!(e.contains("MIN must be in 1..=1500"), "{e}");
        assert_eq!(
            PacketSizes::parse("uniform:64").unwrap(),
            PacketSizes::Uniform { min: 64 }
        );
    }

    #[test]
    fn over_large_numbers_say_too_large_and_name_the_range() {
        let e = FlowSet::parse("1x99999999999").unwrap_err().to_string();
        assert!(e.contains("COUNT 99999999999 is too large"), "{e}");
        assert!(e.contains("1..=4194304"), "{e}");
        let e = FlowSet::parse("99999999999x1").unwrap_err().to_string();
        assert!(
            e.contains("WEIGHT 99999999999 is too large (WEIGHT must be in 1..=4294967295)"),
            "{e}"
        );
        let e = FlowSet::parse("1x5@99999999999").unwrap_err().to_string();
        assert!(e.contains("MAXLEN 99999999999 is too large"), "{e}");
        let e = FlowSet::parse("1x0").unwrap_err().to_string();
        assert!(e.contains("COUNT is 0"), "{e}");
        let e = FlowSet::parse("1x-3").unwrap_err().to_string();
        assert!(e.contains("negative"), "{e}");
        let e = FlowSet::parse("1xabc").unwrap_err().to_string();
        assert!(e.contains("not a whole number"), "{e}");
        // Within u32 but over the flow limit, alone or summed.
        let e = FlowSet::parse("1x4194305").unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
        let e = FlowSet::parse("1x4194304,1x1").unwrap_err().to_string();
        assert!(
            e.contains("4194305 flows in all: too many (at most 4194304)"),
            "{e}"
        );
        // Lists of presets, and a preset mixed into groups.
        let e = FlowSet::parse_list("1k-w1,1x99999999999")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot be combined"), "{e}");
        let e = FlowSet::parse_list("1x1,1x99999999999")
            .unwrap_err()
            .to_string();
        assert!(e.contains("too large"), "{e}");
        assert_eq!(FlowSet::parse_list("1k-w1,32k-w1").unwrap().len(), 2);
        // `,` joins groups into one set, `;` separates sets.
        let one = FlowSet::parse_list("1x64,1x4096").unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].len(), 64 + 4096);
        let two = FlowSet::parse_list("1x64; 1x4096").unwrap();
        assert_eq!(two.iter().map(FlowSet::len).collect::<Vec<_>>(), [64, 4096]);
        let mixed = FlowSet::parse_list("1k-w1;2x10,1x5;32k-w1,1k-wmix").unwrap();
        assert_eq!(mixed.len(), 4);
        assert_eq!(mixed[1].len(), 15);
        assert!(FlowSet::parse_list("1x64;1x64").is_err(), "a set twice");
        assert!(FlowSet::parse_list("1x64;").is_err(), "an empty set");
        assert_eq!(
            FlowSet::parse_one("1x64;1x4096").unwrap_err(),
            FlowSetError::NotOneSet { sets: 2 }
        );
        assert_eq!(FlowSet::parse_one("1x64,1x4096").unwrap().len(), 4160);
        let e = FlowSet::parse_list("1k-w1,32k-w1,1k-w1").unwrap_err();
        assert_eq!(e, FlowSetError::DuplicatePreset("1k-w1".into()));
        let e = PacketSizes::parse("uniform:99999999999")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("MIN 99999999999 is too large (MIN must be in 1..=4294967295)"),
            "{e}"
        );
    }
}
