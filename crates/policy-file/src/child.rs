//! How a node or flow is treated by its parent, from its table: `weight`
//! (default 1), `priority` (default 0), `rate` and `reservation` (none
//! unless given; see [`parse_rate`](crate::parse_rate)).

use crate::error::{Locator, PolicyFileError};
use crate::rate::parse_rate;
use crate::schema::ChildToml;
use fairway_core::policy::ChildParams;
use toml::Spanned;

/// The parameters `c` gives its parent; a bad rate points at its value.
pub(crate) fn child_params(c: &ChildToml, at: &Locator) -> Result<ChildParams, PolicyFileError> {
    let rate = |r: &Option<Spanned<String>>| -> Result<Option<u64>, PolicyFileError> {
        r.as_ref()
            .map(|s| parse_rate(s.get_ref()).map_err(|e| at.error(s.span(), e.to_string())))
            .transpose()
    };
    Ok(ChildParams {
        weight: c.weight.unwrap_or(1),
        priority: c.priority.unwrap_or(0),
        rate: rate(c.rate)?,
        reservation: rate(c.reservation)?,
    })
}
