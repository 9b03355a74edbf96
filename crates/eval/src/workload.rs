//! Flow sets and packet sizes (seed 000 §8).
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

/// One number of a flow group: a whole number in `1..=max`. Says which
/// of "not a number", "zero", "too large" it is, naming the range.
fn field(text: &str, what: &str, max: u32) -> Result<u32, String> {
    let range = format!("{what} must be in 1..={max}");
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        let sign = if text.starts_with('-') {
            "negative; "
        } else {
            ""
        };
        return Err(format!(
            "{what} `{text}` is {sign}not a whole number ({range})"
        ));
    }
    // Only digits: parsing fails only by overflow.
    match text.parse::<u64>() {
        Ok(0) => Err(format!("{what} is 0 ({range})")),
        Ok(v) if v <= u64::from(max) => Ok(v as u32),
        _ => Err(format!("{what} {text} is too large ({range})")),
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

/// The presets of seed 000 §8 (and §6 for `1k-highw`).
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

/// A flow-set spec that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSetError(pub String);

impl fmt::Display for FlowSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlowSetError {}

impl FlowSet {
    /// A list of flow sets: `1k-w1,32k-wmix` (only presets, comma
    /// separated) is two sets; anything else is one spec, whose groups are
    /// comma separated too (`1x500,2x250`).
    pub fn parse_list(text: &str) -> Result<Vec<FlowSet>, FlowSetError> {
        let pieces: Vec<&str> = text.split(',').map(str::trim).collect();
        if pieces.len() > 1
            && pieces
                .iter()
                .all(|p| PRESETS.iter().any(|(n, _, _)| n == p))
        {
            pieces.iter().map(|p| FlowSet::parse(p)).collect()
        } else {
            Ok(vec![FlowSet::parse(text)?])
        }
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
        let presets: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        let bad = |g: &str, why: &str| {
            FlowSetError(format!(
                "bad flow group '{g}': {why} (expected WEIGHTxCOUNT[@MAXLEN], e.g. 1x500,8x125@9000, or a preset: {})",
                presets.join(", ")
            ))
        };
        let mut groups = Vec::new();
        for g in text.split(',').map(str::trim) {
            if g.is_empty() {
                return Err(bad(g, "empty group"));
            }
            if presets.contains(&g) {
                return Err(bad(
                    g,
                    "a preset names a whole flow set; it cannot be combined with groups",
                ));
            }
            let (wc, max_len) = match g.split_once('@') {
                Some((wc, l)) => (wc, field(l, "MAXLEN", u32::MAX).map_err(|w| bad(g, &w))?),
                None => (g, DEFAULT_MAX_LEN),
            };
            let (w, c) = wc
                .split_once(['x', 'X'])
                .ok_or_else(|| bad(g, "missing 'x'"))?;
            let weight = field(w, "WEIGHT", u32::MAX).map_err(|w| bad(g, &w))?;
            let count = field(c, "COUNT", MAX_FLOWS).map_err(|w| bad(g, &w))?;
            groups.push(FlowGroup {
                weight,
                count,
                max_len,
            });
        }
        let total: u64 = groups.iter().map(|g| g.count as u64).sum();
        if total > u64::from(MAX_FLOWS) {
            return Err(FlowSetError(format!(
                "{total} flows in all: too many (at most {MAX_FLOWS})"
            )));
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

    /// Largest maximum packet length.
    pub fn max_len(&self) -> u32 {
        self.groups.iter().map(|g| g.max_len).max().unwrap_or(0)
    }
}

/// How packet lengths are drawn, per flow, from `1..=max_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PacketSizes {
    /// Every packet is `max_len` bytes.
    Fixed,
    /// Uniform in `min..=max_len` (min clamped to max_len).
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
                .map_err(|why| FlowSetError(format!("bad size distribution '{text}': {why}"))),
            _ => Err(FlowSetError(format!(
                "bad size distribution '{text}' (expected fixed or uniform:MIN)"
            ))),
        }
    }

    /// Draws one length for a flow whose maximum is `max_len`.
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
        assert_eq!(
            PacketSizes::parse("uniform:64").unwrap(),
            PacketSizes::Uniform { min: 64 }
        );
    }

    #[test]
    fn over_large_numbers_say_too_large_and_name_the_range() {
        let e = FlowSet::parse("1x99999999999").unwrap_err().0;
        assert!(e.contains("COUNT 99999999999 is too large"), "{e}");
        assert!(e.contains("1..=4194304"), "{e}");
        let e = FlowSet::parse("99999999999x1").unwrap_err().0;
        assert!(
            e.contains("WEIGHT 99999999999 is too large (WEIGHT must be in 1..=4294967295)"),
            "{e}"
        );
        let e = FlowSet::parse("1x5@99999999999").unwrap_err().0;
        assert!(e.contains("MAXLEN 99999999999 is too large"), "{e}");
        let e = FlowSet::parse("1x0").unwrap_err().0;
        assert!(e.contains("COUNT is 0"), "{e}");
        let e = FlowSet::parse("1x-3").unwrap_err().0;
        assert!(e.contains("negative"), "{e}");
        let e = FlowSet::parse("1xabc").unwrap_err().0;
        assert!(e.contains("not a whole number"), "{e}");
        // Within u32 but over the flow limit, alone or summed.
        let e = FlowSet::parse("1x4194305").unwrap_err().0;
        assert!(e.contains("too large"), "{e}");
        let e = FlowSet::parse("1x4194304,1x1").unwrap_err().0;
        assert!(
            e.contains("4194305 flows in all: too many (at most 4194304)"),
            "{e}"
        );
        // Lists of presets, and a preset mixed into groups.
        let e = FlowSet::parse_list("1k-w1,1x99999999999").unwrap_err().0;
        assert!(e.contains("cannot be combined"), "{e}");
        let e = FlowSet::parse_list("1x1,1x99999999999").unwrap_err().0;
        assert!(e.contains("too large"), "{e}");
        assert_eq!(FlowSet::parse_list("1k-w1,32k-w1").unwrap().len(), 2);
        let e = PacketSizes::parse("uniform:99999999999").unwrap_err().0;
        assert!(
            e.contains("MIN 99999999999 is too large (MIN must be in 1..=4294967295)"),
            "{e}"
        );
    }
}
