//! Where in the file a [`BuildError`] of the whole tree points, and its
//! message with node and flow names instead of indices. The file's own
//! checks run first and catch every error they can place at a value;
//! what reaches here is what only the tree knows (a queue's horizon
//! against the steps its policy takes, priorities against the queue's
//! range), pointed at the value to change: the node's `queue` or
//! `reservation_queue`, the child's `priority`, the `[shaper]` or the
//! slowest `rate`; the node's table when the queue is its default.

use crate::flow::{base_name, Flows};
use crate::schema::{span_or, FileToml};
use fairway_core::policy::{BuildError, QueueSpec, Transaction, TreeSpec};
use std::ops::Range;

/// The span `e` points at and its message for the file.
pub(crate) fn locate(
    e: &BuildError,
    f: &FileToml,
    spec: &TreeSpec,
    flows: &Flows,
) -> (Range<usize>, String) {
    let node = |i: u32| f.nodes.get(i as usize);
    let table = |i: u32| node(i).map_or(0..0, |n| n.span());
    let name = |i: u32| {
        node(i).map_or_else(
            || format!("{i}"),
            |n| format!("{:?}", n.get_ref().name.get_ref()),
        )
    };
    let queue = |i: u32| node(i).map_or(0..0, |n| span_or(n.get_ref().queue.as_ref(), n.span()));
    match e {
        BuildError::HorizonTooShort { node, needs, has } if *node == u32::MAX => {
            let span = match &f.shaper {
                Some(s) => s.span(),
                None => slowest_rate(f, spec, flows),
            };
            let m = format!("the shaper's half window covers {has} ns, and one packet at the slowest rate limit takes {needs} ns: give a [shaper] with more buckets or a coarser granularity, or a faster rate");
            (span, m)
        }
        BuildError::HorizonTooShort {
            node: i,
            needs,
            has,
        } => {
            let reservation = match &spec.nodes[*i as usize].transaction {
                Transaction::HClock { reservation_queue } => {
                    *has == reservation_queue.half_window() && !share_too_short(spec, *i)
                }
                _ => false,
            };
            let (what, span) = if reservation {
                let n = node(*i);
                let span = n.map_or(0..0, |n| {
                    span_or(n.get_ref().reservation_queue.as_ref(), n.span())
                });
                ("reservation_queue", span)
            } else {
                ("queue", queue(*i))
            };
            let m = format!("the {what} of node {} has a half window of {has} rank units, and one packet can step {needs}: more buckets or a coarser granularity", name(*i));
            (span, m)
        }
        BuildError::BadChild { node: i, reason } if reason.contains("priority") => {
            let q = spec.nodes[*i as usize].queue;
            let range = u64::from(q.buckets)
                .checked_mul(q.granularity)
                .map_or_else(|| "2^64".to_string(), |r| r.to_string());
            match priority_outside(f, spec, flows, *i) {
                Some((span, child, p)) => (
                    span,
                    format!("priority {p} of {child} is outside the queue of its parent {} ({} buckets x granularity {}: priorities 0..{range})", name(*i), q.buckets, q.granularity),
                ),
                None => (queue(*i), format!("node {}: {reason}", name(*i))),
            }
        }
        BuildError::BadChild { node: i, reason } if reason.contains("reservation") => {
            let n = node(*i);
            let span = n.map_or(0..0, |n| {
                span_or(n.get_ref().reservation_queue.as_ref(), n.span())
            });
            (span, format!("node {}: {reason}", name(*i)))
        }
        BuildError::BadChild { node: i, reason } => {
            (queue(*i), format!("node {}: {reason}", name(*i)))
        }
        BuildError::NeedsFixedRange { node: i } | BuildError::Queue { node: i, .. } => (
            queue(*i),
            e.to_string()
                .replacen(&format!("node {i}"), &format!("node {}", name(*i)), 1),
        ),
        BuildError::Cycle { node: i } | BuildError::Scheduler { node: i, .. } => (
            table(*i),
            e.to_string()
                .replacen(&format!("node {i}"), &format!("node {}", name(*i)), 1),
        ),
        // The file's own checks refuse these first, at their values;
        // should one come through, it points at its table.
        BuildError::UnknownNode {
            what: "flow",
            index,
            ..
        }
        | BuildError::RateZero {
            what: "flow",
            index,
        }
        | BuildError::InvalidWeight {
            what: "flow",
            index,
            ..
        } => {
            let t = flows.table_of(*index);
            (f.flows.get(t).map_or(0..0, |fl| fl.span()), e.to_string())
        }
        BuildError::UnknownNode { index, .. }
        | BuildError::RateZero { index, .. }
        | BuildError::InvalidWeight { index, .. } => (table(*index), e.to_string()),
        BuildError::InvalidParameter(_) | BuildError::Empty | BuildError::RootCount(_) => {
            (0..0, e.to_string())
        }
    }
}

/// True if node `i`'s share queue is too short for its children's steps
/// (the check the tree makes before the reservation queue's).
fn share_too_short(spec: &TreeSpec, i: u32) -> bool {
    let nd = &spec.nodes[i as usize];
    let min_w = spec
        .nodes
        .iter()
        .filter(|n| n.parent == Some(i))
        .map(|n| n.params.weight)
        .chain(
            spec.flows
                .iter()
                .filter(|fl| fl.parent == i)
                .map(|fl| fl.params.weight),
        )
        .min()
        .unwrap_or(1);
    let step = u64::from(spec.max_packet_len) * fairway_core::policy::STFQ_SCALE / u64::from(min_w);
    nd.queue.kind.is_moving() && nd.queue.half_window() <= step
}

/// The first child of node `i` (nodes, then flows, as the tree orders
/// them) whose priority its queue cannot hold: where its `priority` is
/// written, who it is, and the priority.
fn priority_outside(
    f: &FileToml,
    spec: &TreeSpec,
    flows: &Flows,
    i: u32,
) -> Option<(Range<usize>, String, u64)> {
    let q: QueueSpec = spec.nodes[i as usize].queue;
    let outside = |p: u64| !q.kind.holds_any_rank() && p / q.granularity >= u64::from(q.buckets);
    let from_nodes = f.nodes.iter().zip(&spec.nodes).find_map(|(n, s)| {
        (s.parent == Some(i) && outside(s.params.priority)).then(|| {
            let r = n.get_ref();
            let who = format!("node {:?}", r.name.get_ref());
            (
                span_or(r.priority.as_ref(), n.span()),
                who,
                s.params.priority,
            )
        })
    });
    from_nodes.or_else(|| {
        let j = spec
            .flows
            .iter()
            .position(|fl| fl.parent == i && outside(fl.params.priority))?;
        let t = flows.table_of(j as u32);
        let fl = f.flows.get(t)?;
        let who = format!("flow {:?}", base_name(fl, t));
        let span = span_or(fl.get_ref().priority.as_ref(), fl.span());
        Some((span, who, spec.flows[j].params.priority))
    })
}

/// The `rate` value of the slowest rate limit (what the default shaper
/// must cover).
fn slowest_rate(f: &FileToml, spec: &TreeSpec, flows: &Flows) -> Range<usize> {
    let from_nodes = f
        .nodes
        .iter()
        .zip(&spec.nodes)
        .filter_map(|(n, s)| Some((s.params.rate?, n.get_ref().rate.as_ref()?.span())));
    let from_flows = f.flows.iter().enumerate().filter_map(|(t, fl)| {
        let s = spec.flows.get(flows.starts[t] as usize)?;
        Some((s.params.rate?, fl.get_ref().rate.as_ref()?.span()))
    });
    from_nodes
        .chain(from_flows)
        .min_by_key(|(r, _)| *r)
        .map_or(0..0, |(_, s)| s)
}
