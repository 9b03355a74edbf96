//! How a node or flow is treated by its parent, from its table: `weight`
//! (default 1, `1..=65536`), `priority` (default 0), `rate` and
//! `reservation` (none unless given; one string, see [`parse_rate`](crate::parse_rate)).
//! Whether the parent reads each of them is checked once the tree is
//! known ([`crate::fields`]).

use crate::error::{Locator, PolicyFileError};
use crate::rate_field::{policy_rate, RateField};
use crate::schema::ChildToml;
use fairway_core::policy::tree::MAX_WEIGHT;
use fairway_core::policy::ChildParams;
use toml::Spanned;

/// The parameters `c` gives its parent; a bad value points at itself.
pub(crate) fn child_params(c: &ChildToml, at: &Locator) -> Result<ChildParams, PolicyFileError> {
    let rate = |field: &str, r: Option<&Spanned<RateField>>| {
        r.map(|v| policy_rate(field, v, at)).transpose()
    };
    let weight = match c.weight {
        Some(w) if *w.get_ref() == 0 || *w.get_ref() > MAX_WEIGHT => {
            return Err(at.error(
                w.span(),
                format!("weight {} outside 1..={MAX_WEIGHT}", w.get_ref()),
            ))
        }
        Some(w) => *w.get_ref(),
        None => 1,
    };
    Ok(ChildParams {
        weight,
        priority: c.priority.map_or(0, |p| *p.get_ref()),
        rate: rate("rate", c.rate)?,
        reservation: rate("reservation", c.reservation)?,
    })
}
