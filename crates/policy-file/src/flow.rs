//! `[[flow]]` tables as the tree's flows: a table with `count = k` is `k`
//! identical flows (named `NAME#0`, `NAME#1`, …; a table without `name`
//! is `flowI`, `I` its index among the tables), each with its packet
//! annotator ([`RankSource`], the Eiffel paper Fig. 1). The total over all
//! tables is checked against [`MAX_FLOWS`] before any flow is made, and no
//! two flows may share a name.

use crate::child::child_params;
use crate::error::{Locator, PolicyFileError};
use crate::limits::{FLOWS_WHY, MAX_FLOWS};
use crate::node::NodeIndex;
use crate::schema::{span_or, FileToml, FlowToml};
use fairway_core::policy::FlowSpec;
use std::collections::HashMap;
use toml::Spanned;

/// How the packets of a flow are ranked (the packet annotator of Fig. 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankSource {
    /// Rank 0 (the node's transaction does not look at packet ranks).
    None,
    /// Arrival time + this many ns (EDF deadline, LSTF slack).
    Deadline(u64),
    /// Bytes left in the current message of this size (pFabric).
    Remaining(u64),
}

/// The flows of a file, expanded, in order.
#[derive(Default)]
pub(crate) struct Flows {
    /// The tree's flows.
    pub(crate) specs: Vec<FlowSpec>,
    /// Their names.
    pub(crate) names: Vec<String>,
    /// Their annotators.
    pub(crate) ranks: Vec<RankSource>,
    /// Per table, the index of its first flow (tables are expanded in
    /// order), to find a flow's table for errors of the whole tree.
    pub(crate) starts: Vec<u32>,
}

impl Flows {
    /// The `[[flow]]` table flow `j` came from.
    pub(crate) fn table_of(&self, j: u32) -> usize {
        // `starts[0]` is 0, so at least one table starts at or before `j`.
        self.starts.partition_point(|&s| s <= j).saturating_sub(1)
    }
}

/// Every flow of `f`. Per table, errors come in the order: parent, count,
/// annotator, then what it gives its parent; then the total, then names.
pub(crate) fn expand_flows(
    f: &FileToml,
    index: &NodeIndex,
    at: &Locator,
) -> Result<Flows, PolicyFileError> {
    let mut counts = Vec::with_capacity(f.flows.len());
    let mut total: u64 = 0;
    for fl in &f.flows {
        let r = fl.get_ref();
        index.parent_of(&r.parent, at)?;
        let count = r.count.as_ref().map_or(1, |c| *c.get_ref());
        let span = span_or(r.count.as_ref(), fl.span());
        if count == 0 || count > MAX_FLOWS {
            return Err(at.error(span, format!("count {count} outside 1..={MAX_FLOWS}")));
        }
        total += u64::from(count);
        if total > u64::from(MAX_FLOWS) {
            return Err(at.error(
                span,
                format!("this table brings the file to {total} flows, past the limit of {MAX_FLOWS} over all [[flow]] tables: {FLOWS_WHY}"),
            ));
        }
        counts.push(count);
    }
    no_two_names(f, &counts, at)?;
    let mut out = Flows {
        specs: Vec::with_capacity(total as usize),
        names: Vec::with_capacity(total as usize),
        ranks: Vec::with_capacity(total as usize),
        starts: Vec::with_capacity(f.flows.len()),
    };
    for (i, (fl, &count)) in f.flows.iter().zip(&counts).enumerate() {
        let r = fl.get_ref();
        let parent = index.parent_of(&r.parent, at)?;
        let rank = rank_source(r, at)?;
        let params = child_params(&r.child(), at)?;
        let base = base_name(fl, i);
        out.starts.push(out.specs.len() as u32);
        for k in 0..count {
            out.specs.push(FlowSpec { parent, params });
            out.names.push(if count == 1 {
                base.clone()
            } else {
                format!("{base}#{k}")
            });
            out.ranks.push(rank);
        }
    }
    Ok(out)
}

/// The annotator a flow's table sets.
fn rank_source(r: &FlowToml, at: &Locator) -> Result<RankSource, PolicyFileError> {
    Ok(match (&r.deadline_us, &r.message_bytes) {
        (Some(d), None) => match d.get_ref().checked_mul(1000) {
            Some(ns) => RankSource::Deadline(ns),
            None => {
                let max = u64::MAX / 1000;
                let m = format!("deadline_us {} outside 0..={max}", d.get_ref());
                return Err(at.error(d.span(), m));
            }
        },
        (None, Some(m)) if *m.get_ref() > 0 => RankSource::Remaining(*m.get_ref()),
        (None, Some(m)) => {
            return Err(at.error(
                m.span(),
                format!("message_bytes 0 outside 1..={}", u64::MAX),
            ))
        }
        (None, None) => RankSource::None,
        (Some(_), Some(m)) => {
            return Err(at.error(m.span(), "set deadline_us or message_bytes, not both"))
        }
    })
}

/// The name table `i` gives its flows (before `#k`).
pub(crate) fn base_name(fl: &Spanned<FlowToml>, i: usize) -> String {
    match &fl.get_ref().name {
        Some(n) => n.get_ref().clone(),
        None => format!("flow{i}"),
    }
}

/// No two flows share a name, checked per table (not per flow): two
/// single flows of one name, two counted tables of one base name (both
/// make `NAME#0`), or a single flow named `NAME#K` beside a counted table
/// `NAME` of more than `K` flows. The error points at the later table and
/// names the line of the earlier.
fn no_two_names(f: &FileToml, counts: &[u32], at: &Locator) -> Result<(), PolicyFileError> {
    let mut single: HashMap<String, usize> = HashMap::new();
    let mut counted: HashMap<String, usize> = HashMap::new();
    let place = |i: usize| {
        let fl = &f.flows[i];
        span_or(fl.get_ref().name.as_ref(), fl.span())
    };
    let twice = |first: usize, second: usize, name: &str| {
        let (a, b) = (first.min(second), first.max(second));
        let line = at.line(place(a));
        at.error(
            place(b),
            format!("flow name {name:?} used twice (also on line {line}): flow names must differ"),
        )
    };
    for (i, &count) in counts.iter().enumerate() {
        let base = base_name(&f.flows[i], i);
        let map = if count == 1 {
            &mut single
        } else {
            &mut counted
        };
        if let Some(&first) = map.get(&base) {
            let shown = if count == 1 {
                base.clone()
            } else {
                format!("{base}#0")
            };
            return Err(twice(first, i, &shown));
        }
        map.insert(base, i);
    }
    for (i, &count) in counts.iter().enumerate() {
        let name = base_name(&f.flows[i], i);
        let Some((base, k)) = name.rsplit_once('#') else {
            continue;
        };
        let Some(&j) = counted.get(base) else {
            continue;
        };
        // `NAME#07` is not a name the table makes.
        if count == 1
            && k.parse::<u32>()
                .is_ok_and(|v| v < counts[j] && v.to_string() == k)
        {
            return Err(twice(j, i, &name));
        }
    }
    Ok(())
}
