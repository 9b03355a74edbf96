//! The shape of a file's tree, checked with the places to point at: no
//! cycle, at most [`MAX_DEPTH`] levels, exactly one root, and a flow below
//! every node (a node with none can never hold a packet). Run before the
//! tree is built, in time linear in the nodes and flows.

use crate::error::{Locator, PolicyFileError};
use crate::limits::MAX_DEPTH;
use crate::schema::FileToml;
use fairway_core::policy::{FlowSpec, NodeSpec};

/// Checks the tree of `nodes` (parents resolved) and `flows`.
pub(crate) fn check_shape(
    f: &FileToml,
    nodes: &[NodeSpec],
    flows: &[FlowSpec],
    at: &Locator,
) -> Result<(), PolicyFileError> {
    depths(f, nodes, at)?;
    one_root(f, nodes, at)?;
    flow_below_every_node(f, nodes, flows, at)
}

/// Every node's level (the root's is 1); a cycle points at the `parent`
/// of its first node in file order and lists it.
fn depths(f: &FileToml, nodes: &[NodeSpec], at: &Locator) -> Result<(), PolicyFileError> {
    // 0: not seen; u32::MAX: on the path being walked; else the level.
    const ON_PATH: u32 = u32::MAX;
    let mut level = vec![0u32; nodes.len()];
    let mut path = Vec::new();
    for start in 0..nodes.len() {
        let mut cur = start;
        let base = loop {
            match level[cur] {
                0 => {
                    level[cur] = ON_PATH;
                    path.push(cur);
                    match nodes[cur].parent {
                        Some(p) => cur = p as usize,
                        None => break 0,
                    }
                }
                ON_PATH => return Err(cycle(f, nodes, cur, at)),
                l => break l,
            }
        };
        for (k, &n) in path.iter().rev().enumerate() {
            let l = base + k as u32 + 1;
            if l > MAX_DEPTH {
                let name = f.nodes[n].get_ref().name.get_ref();
                return Err(at.error(
                    f.nodes[n].span(),
                    format!("node {name:?} is on level {l} of the tree, past the limit of {MAX_DEPTH} levels: every packet walks from its flow to the root on enqueue and on dequeue"),
                ));
            }
            level[n] = l;
        }
        path.clear();
    }
    Ok(())
}

/// The error for the cycle through `on`: at the `parent` of the cycle's
/// first node in file order.
fn cycle(f: &FileToml, nodes: &[NodeSpec], on: usize, at: &Locator) -> PolicyFileError {
    let mut members = vec![on];
    let mut cur = nodes[on].parent.map_or(on, |p| p as usize);
    while cur != on {
        members.push(cur);
        cur = nodes[cur].parent.map_or(on, |p| p as usize);
    }
    let first = (0..members.len()).min_by_key(|&k| members[k]).unwrap_or(0);
    members.rotate_left(first);
    let name = |i: usize| format!("{:?}", f.nodes[i].get_ref().name.get_ref());
    let mut chain: Vec<String> = members.iter().map(|&m| name(m)).collect();
    chain.push(name(members[0]));
    let n = f.nodes[members[0]].get_ref();
    let span = n
        .parent
        .as_ref()
        .map_or(f.nodes[members[0]].span(), |p| p.span());
    at.error(
        span,
        format!(
            "node {} is its own ancestor (cycle: {})",
            name(members[0]),
            chain.join(" -> ")
        ),
    )
}

/// Exactly one node without a parent; a second points at its table and
/// names the first's line.
fn one_root(f: &FileToml, nodes: &[NodeSpec], at: &Locator) -> Result<(), PolicyFileError> {
    let mut roots = nodes.iter().enumerate().filter(|(_, n)| n.parent.is_none());
    let Some((first, _)) = roots.next() else {
        // Without a root, following parents must come back: a cycle,
        // reported by `depths` first.
        return Err(at.whole_file("no node without `parent`: a tree needs exactly one root"));
    };
    if let Some((second, _)) = roots.next() {
        let line = at.line(f.nodes[first].span());
        let (a, b) = (f.nodes[first].get_ref(), f.nodes[second].get_ref());
        return Err(at.error(
            f.nodes[second].span(),
            format!(
                "node {:?} has no `parent`, nor has {:?} (line {line}): a tree has exactly one root",
                b.name.get_ref(),
                a.name.get_ref()
            ),
        ));
    }
    Ok(())
}

/// Every node has a flow somewhere below it; the first (in file order)
/// that has none is refused.
fn flow_below_every_node(
    f: &FileToml,
    nodes: &[NodeSpec],
    flows: &[FlowSpec],
    at: &Locator,
) -> Result<(), PolicyFileError> {
    let mut fed = vec![false; nodes.len()];
    for fl in flows {
        let mut cur = Some(fl.parent);
        // Stops at the first node already marked: each node is marked
        // once, so this is linear.
        while let Some(n) = cur {
            if fed[n as usize] {
                break;
            }
            fed[n as usize] = true;
            cur = nodes[n as usize].parent;
        }
    }
    match fed.iter().position(|&x| !x) {
        Some(i) => {
            let name = f.nodes[i].get_ref().name.get_ref();
            Err(at.error(
                f.nodes[i].span(),
                format!("node {name:?} has no flow below it, so no packet can ever reach it: give it a [[flow]] (parent = {name:?}) or a child node with one, or remove it"),
            ))
        }
        None => Ok(()),
    }
}
