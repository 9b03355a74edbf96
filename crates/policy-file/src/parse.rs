//! A policy file's text to a checked tree: the tables read by serde, the
//! nodes and flows resolved by name, the shaper and sizes, then the whole
//! tree built once by [`PolicyTree::build`] so that every error it finds
//! points at the table it concerns.

use crate::build_error_span;
use crate::error::{Locator, PolicyFileError};
use crate::flow::{expand_flows, RankSource};
use crate::node::{node_spec, NodeIndex};
use crate::schema::FileToml;
use fairway_core::policy::{PolicyTree, QueueKind, QueueSpec, TreeSpec};
use std::ops::Range;

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

/// Reads and checks a policy file.
pub fn load(path: &str) -> Result<PolicyFile, PolicyFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| PolicyFileError {
        file: path.to_string(),
        line: 0,
        column: 0,
        message: format!("cannot read: {e}"),
    })?;
    parse(&text, path)
}

/// Checks a policy file's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<PolicyFile, PolicyFileError> {
    let at = Locator { text, file };
    let f: FileToml = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        at.error(span, e.message())
    })?;
    if f.nodes.is_empty() {
        return Err(at.error(0..0, "no [[node]]: a policy needs at least a root"));
    }
    let index = NodeIndex::new(&f, &at)?;
    let nodes = f
        .nodes
        .iter()
        .map(|n| node_spec(n.get_ref(), &index, &at))
        .collect::<Result<Vec<_>, _>>()?;
    let flows = expand_flows(&f, &index, &at)?;
    if flows.specs.is_empty() {
        return Err(at.error(0..0, "no [[flow]]: packets need a leaf to enter"));
    }
    let spec = TreeSpec {
        nodes,
        flows: flows.specs,
        shaper: shaper(&f, &at)?,
        max_packets: f
            .max_packets
            .as_ref()
            .map_or(DEFAULT_MAX_PACKETS, |m| *m.get_ref()),
        max_packet_len: f
            .max_packet_len
            .as_ref()
            .map_or(DEFAULT_MAX_PACKET_LEN, |m| *m.get_ref()),
    };
    check_tree(&spec, &f, &flows.spans, &at)?;
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

/// The `[shaper]` table's queue, or the tree's default shaper.
fn shaper(f: &FileToml, at: &Locator) -> Result<QueueSpec, PolicyFileError> {
    let Some(s) = &f.shaper else {
        return Ok(TreeSpec::DEFAULT_SHAPER);
    };
    let r = s.get_ref();
    let kind = QueueKind::parse(r.queue.get_ref()).ok_or_else(|| {
        at.error(
            r.queue.span(),
            format!("unknown queue {:?}", r.queue.get_ref()),
        )
    })?;
    Ok(QueueSpec::new(kind, r.buckets, r.granularity))
}

/// Builds the tree once to check everything, and points at what is wrong.
fn check_tree(
    spec: &TreeSpec,
    f: &FileToml,
    flow_spans: &[Range<usize>],
    at: &Locator,
) -> Result<(), PolicyFileError> {
    match PolicyTree::<u32>::build(spec) {
        Ok(_) => Ok(()),
        Err(e) => {
            let (span, extra) = build_error_span::locate(&e, f, flow_spans);
            Err(at.error(span, format!("{e}{extra}")))
        }
    }
}
