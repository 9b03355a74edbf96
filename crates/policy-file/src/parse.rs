//! A policy file's text to a checked tree: the tables read by serde, the
//! nodes and flows resolved by name, the tree's shape, the fields each
//! policy reads, the sizes and their totals, then the whole tree built
//! once by [`PolicyTree::build`] so that every error it finds points at
//! the table or value it concerns.

use crate::build_error_span;
use crate::error::{Locator, PolicyFileError};
use crate::fields::check_fields;
use crate::flow::{expand_flows, Flows, RankSource};
use crate::limits::{BUCKETS_WHY, MAX_PACKETS, MAX_PACKET_LEN, MAX_TOTAL_BUCKETS, PACKETS_WHY};
use crate::node::{node_spec, NodeIndex};
use crate::queue::{buckets_of, queue_spec, QueueFields};
use crate::read::read_text;
use crate::schema::{span_or, FileToml};
use crate::tree_shape::check_shape;
use fairway_core::policy::{PolicyTree, QueueKind, QueueSpec, Transaction, TreeSpec};
use std::ops::Range;
use toml::Spanned;

/// Packet slots when the file gives no `max_packets`.
const DEFAULT_MAX_PACKETS: u32 = 65_536;
/// Longest packet when the file gives no `max_packet_len`.
const DEFAULT_MAX_PACKET_LEN: u32 = 1500;

/// A checked policy file.
#[derive(Clone, Debug)]
pub struct PolicyFile {
    /// The tree, ready for [`PolicyTree::build`].
    pub spec: TreeSpec,
    /// Node names, by index.
    pub node_names: Vec<String>,
    /// Flow names, by index.
    pub flow_names: Vec<String>,
    /// Each flow's rank annotator.
    pub ranks: Vec<RankSource>,
}

/// Reads (at most [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES)) and checks a
/// policy file.
pub fn load(path: &str) -> Result<PolicyFile, PolicyFileError> {
    parse(&read_text(path)?, path)
}

/// Checks a policy file's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<PolicyFile, PolicyFileError> {
    let at = Locator { text, file };
    let f: FileToml = toml::from_str(text).map_err(|e| match e.span() {
        Some(span) => at.error(span, e.message()),
        None => at.whole_file(e.message()),
    })?;
    if f.nodes.is_empty() {
        return Err(at.whole_file("no [[node]]: a policy needs at least a root"));
    }
    let index = NodeIndex::new(&f, &at)?;
    let nodes = f
        .nodes
        .iter()
        .map(|n| node_spec(n.get_ref(), &index, &at))
        .collect::<Result<Vec<_>, _>>()?;
    let flows = expand_flows(&f, &index, &at)?;
    if flows.specs.is_empty() {
        return Err(at.whole_file("no [[flow]]: packets need a leaf to enter"));
    }
    check_shape(&f, &nodes, &flows.specs, &at)?;
    check_fields(&f, &nodes, &flows, &at)?;
    let spec = TreeSpec {
        shaper: shaper(&f, &nodes, &flows, &at)?,
        max_packets: size(
            f.max_packets.as_ref(),
            "max_packets",
            DEFAULT_MAX_PACKETS,
            MAX_PACKETS,
            PACKETS_WHY,
            &at,
        )?,
        max_packet_len: size(
            f.max_packet_len.as_ref(),
            "max_packet_len",
            DEFAULT_MAX_PACKET_LEN,
            MAX_PACKET_LEN,
            "the tree's packet lengths are 16-bit",
            &at,
        )?,
        nodes,
        flows: flows.specs.clone(),
    };
    total_buckets(&f, &spec, &at)?;
    check_tree(&spec, &f, &flows, &at)?;
    Ok(PolicyFile {
        node_names: f
            .nodes
            .iter()
            .map(|n| n.get_ref().name.get_ref().clone())
            .collect(),
        spec,
        flow_names: flows.names,
        ranks: flows.ranks,
    })
}

/// A size of the file (`max_packets`, `max_packet_len`): `default` when
/// absent, else in `1..=max` at its value.
fn size(
    v: Option<&Spanned<u32>>,
    name: &str,
    default: u32,
    max: u32,
    why: &str,
    at: &Locator,
) -> Result<u32, PolicyFileError> {
    let Some(v) = v else { return Ok(default) };
    let n = *v.get_ref();
    if n == 0 || n > max {
        return Err(at.error(v.span(), format!("{name} {n} outside 1..={max} ({why})")));
    }
    Ok(n)
}

/// The `[shaper]` table's queue, or the tree's default shaper. The
/// shaper's ranks are times (cffs or a heap), and it serves rate limits
/// only: a `[shaper]` with no `rate` in the file would be ignored.
fn shaper(
    f: &FileToml,
    nodes: &[fairway_core::policy::NodeSpec],
    flows: &Flows,
    at: &Locator,
) -> Result<QueueSpec, PolicyFileError> {
    let Some(s) = &f.shaper else {
        return Ok(TreeSpec::DEFAULT_SHAPER);
    };
    let r = s.get_ref();
    // The kind first: buckets out of FFS's range would hide that no FFS
    // can be the shaper.
    if let Some(kind) = QueueKind::parse(r.queue.get_ref()) {
        if !kind.is_moving() && !kind.holds_any_rank() {
            return Err(at.error(
                r.queue.span(),
                format!(
                    "the shaper's ranks are times that only grow: use cffs or binary-heap, not {}",
                    kind.name()
                ),
            ));
        }
    }
    let q = queue_spec(
        &QueueFields {
            what: "[shaper]",
            span: s.span(),
            kind: &r.queue,
            buckets: r.buckets.as_ref(),
            granularity: &r.granularity,
        },
        at,
    )?;
    let any_rate = nodes.iter().any(|n| n.params.rate.is_some())
        || flows.specs.iter().any(|fl| fl.params.rate.is_some());
    if !any_rate {
        return Err(at.error(
            s.span(),
            "[shaper] is ignored: it holds rate-limited children only, and no node or flow sets `rate`",
        ));
    }
    Ok(q)
}

/// The buckets of every queue the tree allocates (nodes' queues given or
/// default, hClock's reservation queues, the shaper) stay within
/// [`MAX_TOTAL_BUCKETS`]; the queue that passes it is refused.
fn total_buckets(f: &FileToml, spec: &TreeSpec, at: &Locator) -> Result<(), PolicyFileError> {
    // The shaper first: past the limit, the error points at a queue the
    // file wrote (or the node whose default it is).
    let shaper_span = f.shaper.as_ref().map_or(0..0, |s| s.span());
    let mut queues: Vec<(u64, Range<usize>)> = vec![(buckets_of(&spec.shaper), shaper_span)];
    for (n, s) in f.nodes.iter().zip(&spec.nodes) {
        let r = n.get_ref();
        queues.push((buckets_of(&s.queue), span_or(r.queue.as_ref(), n.span())));
        if let Transaction::HClock { reservation_queue } = &s.transaction {
            let span = span_or(r.reservation_queue.as_ref(), n.span());
            queues.push((buckets_of(reservation_queue), span));
        }
    }
    let mut total = 0u64;
    for (b, span) in queues {
        total += b;
        if total > u64::from(MAX_TOTAL_BUCKETS) {
            return Err(at.error(
                span,
                format!("this queue brings the file's queues to {total} buckets, past the limit of {MAX_TOTAL_BUCKETS} over all queues (defaults included): {BUCKETS_WHY}"),
            ));
        }
    }
    Ok(())
}

/// Builds the tree once to check everything, and points at what is wrong.
fn check_tree(
    spec: &TreeSpec,
    f: &FileToml,
    flows: &Flows,
    at: &Locator,
) -> Result<(), PolicyFileError> {
    match PolicyTree::<u32>::build(spec) {
        Ok(_) => Ok(()),
        Err(e) => {
            let (span, message) = build_error_span::locate(&e, f, spec, flows);
            // An empty span at the start marks an error of no one table.
            if span == (0..0) {
                return Err(at.whole_file(message));
            }
            Err(at.error(span, message))
        }
    }
}
