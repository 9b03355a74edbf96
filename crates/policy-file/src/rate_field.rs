//! A `rate` or `reservation` as any fairway file writes it: one string
//! (`rate = "10 Mbit/s"`: one link in one direction in a policy file,
//! both directions alike in the shaper file) or a table of directions
//! (`rate = { download = "100mbit", upload = "20mbit" }`, the shaper's
//! two links). Each command says which forms it takes: `fairway policy`
//! refuses the table (its tree serves one link), the shaper takes both.

use crate::error::{Locator, PolicyFileError};
use crate::rate::parse_rate;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use toml::Spanned;

/// The two directions' fields, as error messages list them.
pub const DIRECTIONS: &[&str] = &["download", "upload"];

/// A rate field as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateField {
    /// `"10 Mbit/s"`.
    One(String),
    /// `{ download = "…", upload = "…" }`, each direction optional here
    /// (a reservation may guarantee one direction only); each value with
    /// its span.
    PerDirection {
        /// Toward the subscribers.
        download: Option<Spanned<String>>,
        /// Toward the internet.
        upload: Option<Spanned<String>>,
    },
}

impl RateField {
    /// The one rate, if written as one string.
    pub fn one(&self) -> Option<&str> {
        match self {
            Self::One(s) => Some(s),
            Self::PerDirection { .. } => None,
        }
    }
}

/// A policy file's `field` (`rate`, `reservation`): one string, to exact
/// bytes/s; the table of directions is refused, since the tree serves one
/// link in one direction.
pub(crate) fn policy_rate(
    field: &str,
    v: &Spanned<RateField>,
    at: &Locator,
) -> Result<u64, PolicyFileError> {
    match v.get_ref() {
        RateField::One(s) => parse_rate(s).map_err(|e| at.error(v.span(), e.to_string())),
        RateField::PerDirection { .. } => Err(at.error(
            v.span(),
            format!("{field}: a {{ download, upload }} table is the shaper file's (two links); a policy tree serves one link in one direction: write one rate, e.g. {field} = \"10 Mbit/s\""),
        )),
    }
}

impl<'de> Deserialize<'de> for RateField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = RateField;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a rate string (\"10 Mbit/s\", \"100mbit\") or a table { download = \"…\", upload = \"…\" }")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RateField, E> {
        Ok(RateField::One(v.to_string()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RateField, A::Error> {
        let (mut download, mut upload) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            let slot = match key.as_str() {
                "download" => &mut download,
                "upload" => &mut upload,
                other => return Err(de::Error::unknown_field(other, DIRECTIONS)),
            };
            if slot.is_some() {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            *slot = Some(map.next_value::<Spanned<String>>()?);
        }
        Ok(RateField::PerDirection { download, upload })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct T {
        rate: Spanned<RateField>,
    }

    #[test]
    fn a_string_or_a_table_of_directions_with_spans() {
        let t: T = toml::from_str("rate = \"10 Mbit/s\"").unwrap();
        assert_eq!(t.rate.get_ref().one(), Some("10 Mbit/s"));
        assert_eq!(t.rate.span(), 7..18);
        let t: T = toml::from_str("rate = { upload = \"5mbit\" }").unwrap();
        let RateField::PerDirection { download, upload } = t.rate.get_ref() else {
            panic!("a table")
        };
        assert!(download.is_none());
        let up = upload.as_ref().unwrap();
        assert_eq!((up.get_ref().as_str(), up.span()), ("5mbit", 18..25));
        let e = toml::from_str::<T>("rate = { down = \"5mbit\" }")
            .err()
            .unwrap();
        assert!(
            e.message()
                .contains("unknown field `down`, expected `download` or `upload`"),
            "{e}"
        );
        assert!(toml::from_str::<T>("rate = 5").is_err());
    }
}
