//! Fields a policy would ignore, refused where they are written: what a
//! node or flow gives its parent is read only by some parents (`weight`
//! by stfq, hclock and the schedulers that share by weight; `priority` by
//! strict-priority; `reservation` by hclock; none by the root's absent
//! parent), and a flow's packet annotator only by the ranking node above
//! it (`deadline_us` by edf and lstf, `message_bytes` by pfabric), which
//! in turn needs it; hClock's `reservation_queue` only when a child sets
//! `reservation`. Also the sum of the weights under a scheduler node,
//! which the scheduler limits.

use crate::error::{Locator, PolicyFileError};
use crate::flow::{base_name, Flows, RankSource};
use crate::rate::parse_rate;
use crate::schema::{span_or, ChildToml, FileToml};
use fairway_core::policy::{FlowRank, NodeSpec, Transaction};
use fairway_core::Limits;
use std::ops::Range;

/// Who a node or flow is, for messages: `node "B"` / `flow "A"`.
struct Who<'a> {
    what: &'static str,
    name: &'a str,
    table: Range<usize>,
}

/// Checks every node's and flow's fields against the policy that would
/// read them.
pub(crate) fn check_fields(
    f: &FileToml,
    nodes: &[NodeSpec],
    flows: &Flows,
    at: &Locator,
) -> Result<(), PolicyFileError> {
    for (i, n) in f.nodes.iter().enumerate() {
        let r = n.get_ref();
        let who = Who {
            what: "node",
            name: r.name.get_ref(),
            table: n.span(),
        };
        read_by_parent(&r.child(), &who, nodes[i].parent, f, nodes, at)?;
    }
    for (t, fl) in f.flows.iter().enumerate() {
        let r = fl.get_ref();
        let j = flows.starts[t] as usize;
        let name = base_name(fl, t);
        let who = Who {
            what: "flow",
            name: &name,
            table: fl.span(),
        };
        let parent = flows.specs[j].parent;
        read_by_parent(&r.child(), &who, Some(parent), f, nodes, at)?;
        let given = match flows.ranks[j] {
            RankSource::None => None,
            RankSource::Deadline(_) => r.deadline_us.as_ref().map(|d| ("deadline_us", d.span())),
            RankSource::Remaining(_) => r
                .message_bytes
                .as_ref()
                .map(|m| ("message_bytes", m.span())),
        };
        annotator_matches(given, &who, parent, f, nodes, at)?;
    }
    reservation_queues_used(f, nodes, flows, at)?;
    weight_sums(f, nodes, flows, at)
}

/// An hClock node's `reservation_queue` holds the reservation tags of its
/// children: given on a node none of whose children sets `reservation`,
/// it would be ignored.
fn reservation_queues_used(
    f: &FileToml,
    nodes: &[NodeSpec],
    flows: &Flows,
    at: &Locator,
) -> Result<(), PolicyFileError> {
    let mut reserved = vec![false; nodes.len()];
    let children = nodes
        .iter()
        .map(|n| (n.parent, n.params.reservation))
        .chain(
            flows
                .specs
                .iter()
                .map(|fl| (Some(fl.parent), fl.params.reservation)),
        );
    for (parent, reservation) in children {
        if let (Some(p), Some(_)) = (parent, reservation) {
            reserved[p as usize] = true;
        }
    }
    for (n, used) in f.nodes.iter().zip(reserved) {
        let r = n.get_ref();
        if let (Some(q), false) = (&r.reservation_queue, used) {
            return Err(at.error(
                q.span(),
                format!(
                    "`reservation_queue` of node {:?} is ignored: no child of it sets `reservation`",
                    r.name.get_ref()
                ),
            ));
        }
    }
    Ok(())
}

/// The policy name of node `p`, as the file writes it.
fn policy_of(f: &FileToml, p: u32) -> &str {
    f.nodes[p as usize].get_ref().policy.get_ref()
}

/// A field a parent may read: its name, its span if given, which parents
/// read it, and the readers as a message lists them.
type ReadBy = (
    &'static str,
    Option<Range<usize>>,
    fn(&Transaction) -> bool,
    &'static str,
);

/// `c`'s weight, priority and reservation are each read by its parent.
fn read_by_parent(
    c: &ChildToml,
    who: &Who,
    parent: Option<u32>,
    f: &FileToml,
    nodes: &[NodeSpec],
    at: &Locator,
) -> Result<(), PolicyFileError> {
    let checks: [ReadBy; 3] = [
        (
            "weight",
            c.weight.map(|w| w.span()),
            |t| match t {
                Transaction::Stfq | Transaction::HClock { .. } => true,
                Transaction::Scheduler(s) => s.kind.info().shares_by_weight,
                _ => false,
            },
            "stfq, hclock and the schedulers that share by weight (all but fifo) read it",
        ),
        (
            "priority",
            c.priority.map(|p| p.span()),
            |t| *t == Transaction::StrictPriority,
            "only strict-priority reads it",
        ),
        (
            "reservation",
            c.reservation.map(|r| r.span()),
            |t| matches!(t, Transaction::HClock { .. }),
            "only hclock reads it",
        ),
    ];
    // Both rates parse: they were checked when the node or flow was read.
    let rate = c.rate.and_then(|r| parse_rate(r.get_ref().one()?).ok());
    let reservation = c
        .reservation
        .and_then(|r| Some((parse_rate(r.get_ref().one()?).ok()?, r.span())));
    if let (Some(r), Some((v, span))) = (rate, reservation) {
        if v > r {
            return Err(at.error(
                span,
                format!("reservation of {} {:?} ({v} B/s) above its own `rate` limit ({r} B/s): it could never be met", who.what, who.name),
            ));
        }
    }
    for (field, span, reads, readers) in checks {
        let Some(span) = span else { continue };
        let Some(p) = parent else {
            return Err(at.error(
                span,
                format!(
                    "`{field}` of {} {:?} is ignored: it is the root, with no parent to read it",
                    who.what, who.name
                ),
            ));
        };
        if !reads(&nodes[p as usize].transaction) {
            let pname = f.nodes[p as usize].get_ref().name.get_ref();
            return Err(at.error(
                span,
                format!(
                    "`{field}` of {} {:?} is ignored: its parent {pname:?} is {}, and {readers}",
                    who.what,
                    who.name,
                    policy_of(f, p)
                ),
            ));
        }
    }
    Ok(())
}

/// The flow sets exactly the annotator its nearest ranking ancestor
/// (edf, lstf, pfabric) reads, and none without one.
fn annotator_matches(
    given: Option<(&'static str, Range<usize>)>,
    who: &Who,
    parent: u32,
    f: &FileToml,
    nodes: &[NodeSpec],
    at: &Locator,
) -> Result<(), PolicyFileError> {
    let mut cur = Some(parent);
    let mut ranker = None;
    while let Some(n) = cur {
        if let Transaction::PacketRank(fr) = nodes[n as usize].transaction {
            ranker = Some((n, fr));
            break;
        }
        cur = nodes[n as usize].parent;
    }
    let needed = ranker.map(|(n, fr)| {
        let field = match fr {
            FlowRank::Front => "deadline_us",
            FlowRank::Min => "message_bytes",
        };
        (n, field)
    });
    match (given, needed) {
        (None, None) => Ok(()),
        (Some((field, span)), None) => Err(at.error(
            span,
            format!("`{field}` of flow {:?} is ignored: no node above it ranks packets (edf and lstf read deadline_us, pfabric message_bytes)", who.name),
        )),
        (Some((field, _)), Some((_, want))) if field == want => Ok(()),
        (given, Some((n, want))) => {
            let node = f.nodes[n as usize].get_ref().name.get_ref();
            let span = given.map_or(who.table.clone(), |(_, s)| s);
            Err(at.error(
                span,
                format!(
                    "flow {:?} needs `{want}`: node {node:?} above it is {} and ranks its packets by it{}",
                    who.name,
                    policy_of(f, n),
                    if want == "deadline_us" { " (0: rank = arrival)" } else { "" }
                ),
            ))
        }
    }
}

/// Under each scheduler node, the sum of the children's weights stays
/// within the scheduler's limit ([`Limits::DEFAULT`]); the child that
/// passes it is refused at its weight.
fn weight_sums(
    f: &FileToml,
    nodes: &[NodeSpec],
    flows: &Flows,
    at: &Locator,
) -> Result<(), PolicyFileError> {
    let max = Limits::DEFAULT.max_weight_sum;
    let mut sums = vec![0u64; nodes.len()];
    let node_children = f.nodes.iter().zip(nodes).map(|(n, s)| {
        let r = n.get_ref();
        let span = span_or(r.weight.as_ref(), n.span());
        (
            s.parent,
            u64::from(s.params.weight),
            span,
            "node",
            r.name.get_ref().clone(),
        )
    });
    let flow_children = f.flows.iter().enumerate().map(|(t, fl)| {
        let j = flows.starts[t] as usize;
        let end = flows
            .starts
            .get(t + 1)
            .map_or(flows.specs.len(), |&e| e as usize);
        let s = &flows.specs[j];
        let span = span_or(fl.get_ref().weight.as_ref(), fl.span());
        let w = u64::from(s.params.weight) * (end - j) as u64;
        (Some(s.parent), w, span, "flow", base_name(fl, t))
    });
    for (parent, w, span, what, name) in node_children.chain(flow_children) {
        let Some(p) = parent else { continue };
        if !matches!(nodes[p as usize].transaction, Transaction::Scheduler(_)) {
            continue;
        }
        sums[p as usize] += w;
        if sums[p as usize] > max {
            let pname = f.nodes[p as usize].get_ref().name.get_ref();
            return Err(at.error(
                span,
                format!(
                    "{what} {name:?} brings the weights under node {pname:?} ({}) to {}, past the scheduler's limit of {max} on their sum",
                    policy_of(f, p),
                    sums[p as usize]
                ),
            ));
        }
    }
    Ok(())
}
