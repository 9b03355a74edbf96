//! Disk parameter files: TOML text to a checked [`DiskModel`], every
//! refusal located at the line and column (1-based) of the value it is
//! about, so that a mistake on line 40 of a drive description says so.
//!
//! The text is read into a mirror of [`DiskParams`] whose values keep
//! their places in the file; [`DiskModel::checked`] then makes the same
//! checks as [`DiskModel::new`] and names the field it refuses, which is
//! turned back into its place here. A float that is not a number (`nan`,
//! `inf`, which TOML allows) is outside every range and refused the same
//! way.

use super::{DiskModel, DiskParams, Field, Zone};
use crate::request::DiskConfigError;
use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// Why a disk parameter file was refused, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFileError {
    /// 1-based line of the offending text.
    pub line: usize,
    /// 1-based column (in characters) of the offending text.
    pub column: usize,
    /// What is wrong.
    pub kind: ModelFileErrorKind,
}

/// What is wrong in a disk parameter file.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelFileErrorKind {
    /// Not TOML, a field missing, unknown or of the wrong type (the TOML
    /// parser's message).
    Syntax(String),
    /// A value outside its range, or values that contradict each other.
    Value(DiskConfigError),
}

impl fmt::Display for ModelFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.line, self.column)?;
        match &self.kind {
            ModelFileErrorKind::Syntax(m) => f.write_str(m),
            ModelFileErrorKind::Value(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ModelFileError {}

/// [`Zone`] with the places of its values.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ZoneText {
    cylinders: Spanned<u32>,
    sectors_per_track: Spanned<u32>,
}

/// [`DiskParams`] with the places of its values.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParamsText {
    name: String,
    rpm: Spanned<u32>,
    heads: Spanned<u32>,
    track_to_track_ms: Spanned<f64>,
    average_seek_ms: Spanned<f64>,
    full_stroke_ms: Spanned<f64>,
    head_switch_ms: Spanned<f64>,
    command_overhead_ms: Spanned<f64>,
    bus_mb_per_s: Spanned<f64>,
    readahead_sectors: Spanned<u32>,
    zones: Spanned<Vec<ZoneText>>,
}

impl ParamsText {
    /// The values, without their places.
    fn params(&self) -> DiskParams {
        DiskParams {
            name: self.name.clone(),
            rpm: *self.rpm.get_ref(),
            heads: *self.heads.get_ref(),
            track_to_track_ms: *self.track_to_track_ms.get_ref(),
            average_seek_ms: *self.average_seek_ms.get_ref(),
            full_stroke_ms: *self.full_stroke_ms.get_ref(),
            head_switch_ms: *self.head_switch_ms.get_ref(),
            command_overhead_ms: *self.command_overhead_ms.get_ref(),
            bus_mb_per_s: *self.bus_mb_per_s.get_ref(),
            readahead_sectors: *self.readahead_sectors.get_ref(),
            zones: self
                .zones
                .get_ref()
                .iter()
                .map(|z| Zone {
                    cylinders: *z.cylinders.get_ref(),
                    sectors_per_track: *z.sectors_per_track.get_ref(),
                })
                .collect(),
        }
    }

    /// Where `field`'s value is.
    fn span(&self, field: Field) -> Range<usize> {
        let zone = |i: usize| self.zones.get_ref().get(i);
        match field {
            Field::Rpm => self.rpm.span(),
            Field::Heads => self.heads.span(),
            Field::TrackToTrack => self.track_to_track_ms.span(),
            Field::AverageSeek => self.average_seek_ms.span(),
            Field::FullStroke => self.full_stroke_ms.span(),
            Field::HeadSwitch => self.head_switch_ms.span(),
            Field::CommandOverhead => self.command_overhead_ms.span(),
            Field::Bus => self.bus_mb_per_s.span(),
            Field::Readahead => self.readahead_sectors.span(),
            Field::Zones => self.zones.span(),
            Field::ZoneCylinders(i) => zone(i).map_or(self.zones.span(), |z| z.cylinders.span()),
            Field::ZoneSectorsPerTrack(i) => {
                zone(i).map_or(self.zones.span(), |z| z.sectors_per_track.span())
            }
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn located(text: &str, span: Range<usize>, kind: ModelFileErrorKind) -> ModelFileError {
    let (line, column) = line_col(text, span.start);
    ModelFileError { line, column, kind }
}

/// The disk `text` describes, every value checked (see the module doc).
pub(super) fn parse(text: &str) -> Result<DiskModel, ModelFileError> {
    let raw: ParamsText = toml::from_str(text).map_err(|e| {
        // The parser's message alone, on one line: the place is ours.
        let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        located(
            text,
            e.span().unwrap_or(0..0),
            ModelFileErrorKind::Syntax(message),
        )
    })?;
    DiskModel::checked(raw.params())
        .map_err(|(field, e)| located(text, raw.span(field), ModelFileErrorKind::Value(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DTLA_307030_TOML;

    /// The preset with the line starting `key =` replaced by `line`.
    fn preset_with(key: &str, line: &str) -> String {
        let mut found = false;
        let text: Vec<&str> = DTLA_307030_TOML
            .lines()
            .map(|l| {
                if l.starts_with(&format!("{key} =")) {
                    found = true;
                    line
                } else {
                    l
                }
            })
            .collect();
        assert!(found, "{key}");
        text.join("\n") + "\n"
    }

    /// The 1-based line of the preset that starts with `prefix`, and the
    /// column after it.
    fn line_of(text: &str, prefix: &str) -> (usize, usize) {
        let i = text.lines().position(|l| l.starts_with(prefix)).unwrap();
        (i + 1, prefix.chars().count() + 1)
    }

    fn error(text: &str) -> ModelFileError {
        DiskModel::from_toml(text).unwrap_err()
    }

    #[test]
    fn the_preset_parses_to_the_built_in_drive() {
        let m = DiskModel::from_toml(DTLA_307030_TOML).unwrap();
        assert_eq!(m.params(), DiskModel::dtla_307030().params());
    }

    #[test]
    fn nan_inf_and_negative_floats_are_refused_at_their_line_and_column() {
        for (key, value) in [
            ("track_to_track_ms", "nan"),
            ("average_seek_ms", "+nan"),
            ("full_stroke_ms", "inf"),
            ("head_switch_ms", "-inf"),
            ("command_overhead_ms", "-0.5"),
            ("bus_mb_per_s", "nan"),
            ("bus_mb_per_s", "0"),
        ] {
            let prefix = format!("{key} = ");
            let text = preset_with(key, &format!("{prefix}{value}"));
            let e = error(&text);
            assert_eq!(
                (e.line, e.column),
                line_of(&text, &prefix),
                "{key} = {value}: {e}"
            );
            assert!(
                matches!(
                    &e.kind,
                    ModelFileErrorKind::Value(DiskConfigError::OutOfRange { name, .. }) if *name == key
                ),
                "{key} = {value}: {e}"
            );
        }
    }

    #[test]
    fn a_bad_zone_late_in_the_file_is_refused_at_its_line() {
        // The last zone's sectors per track, near the end of the file.
        let mut text = DTLA_307030_TOML.trim_end().to_string();
        assert!(text.ends_with("sectors_per_track = 436"));
        text.truncate(text.len() - "436".len());
        text.push_str("0\n");
        let e = error(&text);
        let last = text.lines().count();
        assert_eq!((e.line, e.column), (last, 21), "{e}");
        assert_eq!(
            e.to_string(),
            format!("{last}:21: zones.sectors_per_track = 0 is out of range (allowed: 1..=10000)")
        );
    }

    #[test]
    fn inconsistent_seek_times_point_at_the_average_seek() {
        let prefix = "average_seek_ms = ";
        let text = preset_with("average_seek_ms", &format!("{prefix}20.0"));
        let e = error(&text);
        assert_eq!((e.line, e.column), line_of(&text, prefix));
        assert!(matches!(
            e.kind,
            ModelFileErrorKind::Value(DiskConfigError::Inconsistent { .. })
        ));
    }

    #[test]
    fn syntax_and_type_errors_are_one_line_with_their_place() {
        let rpm = |v: &str| preset_with("rpm", &format!("rpm = {v}"));
        let rpm_line = line_of(&rpm("1"), "rpm = ").0;
        let heads = preset_with("heads", "heads = -4");
        let heads_line = line_of(&heads, "heads = ").0;
        for (text, line, what) in [
            ("rpm = 7200\nbogus = 1\n".to_string(), 2, "unknown field"),
            ("name = \"x\"\nrpm = \n".to_string(), 2, ""),
            (rpm("7200.5"), rpm_line, "u32"),
            (rpm("99999999999"), rpm_line, ""),
            (heads, heads_line, ""),
        ] {
            let e = error(&text);
            assert!(matches!(e.kind, ModelFileErrorKind::Syntax(_)), "{e}");
            let shown = e.to_string();
            assert_eq!(shown.lines().count(), 1, "{shown}");
            assert!(shown.contains(what), "{shown}");
            assert_eq!(e.line, line, "{shown}");
        }
    }

    #[test]
    fn zones_must_exist_and_span_two_cylinders() {
        let head: String = DTLA_307030_TOML
            .lines()
            .take_while(|l| !l.starts_with("[[zones]]"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = format!("{head}\nzones = []\n");
        let e = error(&text);
        assert_eq!((e.line, e.column), line_of(&text, "zones = "), "{e}");
        let text = format!("{head}\n[[zones]]\ncylinders = 1\nsectors_per_track = 100\n");
        let e = error(&text);
        assert_eq!((e.line, e.column), line_of(&text, "cylinders = "), "{e}");
        assert!(e.to_string().contains("at least 2 cylinders"), "{e}");
    }

    #[test]
    fn line_and_column_count_characters_not_bytes() {
        assert_eq!(line_col("a\nbé = x", 6), (2, 4));
        assert_eq!(line_col("", 10), (1, 1));
        // Inside a multi-byte character: its start.
        assert_eq!(line_col("é", 1), (1, 1));
    }
}
