//! The structural checks of a tree description (the Eiffel paper §3.2: a
//! policy is a tree of scheduling transactions): every weight, rate and
//! reservation in its range, every parent a node, exactly one root, no
//! cycle. [`PolicyTree::build`](super::PolicyTree::build) runs them before
//! allocating anything, then checks what depends on each node's queue.

use super::error::BuildError;
use super::spec::{ChildParams, TreeSpec};
use alloc::vec;
use alloc::vec::Vec;

/// Largest accepted weight.
pub const MAX_WEIGHT: u32 = 1 << 16;
/// Largest accepted rate, bytes/s (8.8 Tbit/s).
pub const MAX_RATE: u64 = 1 << 40;
/// Most nodes on the path from the root to a flow, the root included. A
/// dequeue pops and re-inserts the packet's path at every level, so a
/// packet's work is linear in its depth; this bounds it to about two
/// thousand queue operations. Policies of the papers have two or three
/// levels.
pub const MAX_DEPTH: u32 = 1024;
/// The error of a node deeper than [`MAX_DEPTH`].
const TOO_DEEP: &str = "deeper than 1024 levels from the root (MAX_DEPTH): every level costs \
     each packet a queue pop and a re-insert";
const _: () = assert!(MAX_DEPTH == 1024, "TOO_DEEP names the limit");

/// Checks the nodes' and flows' parameters and parents; returns the root's
/// index. Errors come in the order a reader meets them: each node's
/// parameters and parent, the number of roots, cycles, then each flow.
pub(super) fn structure(spec: &TreeSpec) -> Result<u32, BuildError> {
    let root = single_root(spec)?;
    no_cycle(spec)?;
    flows_under_nodes(spec)?;
    Ok(root)
}

/// A node's or flow's weight, rate and reservation are in range.
fn child_params(what: &'static str, index: u32, p: &ChildParams) -> Result<(), BuildError> {
    if p.weight == 0 || p.weight > MAX_WEIGHT {
        return Err(BuildError::InvalidWeight {
            what,
            index,
            weight: p.weight,
        });
    }
    for r in [p.rate, p.reservation].into_iter().flatten() {
        if r == 0 {
            return Err(BuildError::RateZero { what, index });
        }
        if r > MAX_RATE {
            return Err(BuildError::InvalidParameter(
                "rates and reservations must be 1..=2^40 bytes/s",
            ));
        }
    }
    Ok(())
}

/// Every node's parameters in range and parent a node; exactly one node
/// has no parent: its index.
fn single_root(spec: &TreeSpec) -> Result<u32, BuildError> {
    let n = spec.nodes.len();
    let mut root = 0;
    let mut roots = 0;
    for (i, nd) in spec.nodes.iter().enumerate() {
        child_params("node", i as u32, &nd.params)?;
        match nd.parent {
            None => {
                roots += 1;
                root = i as u32;
            }
            Some(p) if p as usize >= n => {
                return Err(BuildError::UnknownNode {
                    what: "node",
                    index: i as u32,
                    parent: p,
                })
            }
            Some(_) => {}
        }
    }
    if roots != 1 {
        return Err(BuildError::RootCount(roots));
    }
    Ok(root)
}

/// Every node reaches the root, with at most [`MAX_DEPTH`] nodes on the
/// way (itself and the root included). Each node's depth is computed once
/// (a walk stops at the first node whose depth is known), so the check is
/// O(nodes) whatever the shape.
fn no_cycle(spec: &TreeSpec) -> Result<(), BuildError> {
    const UNKNOWN: u32 = 0;
    const ON_PATH: u32 = u32::MAX;
    let n = spec.nodes.len();
    let mut depth = vec![UNKNOWN; n];
    let mut path = Vec::new();
    for i in 0..n {
        let mut cur = i;
        // Up to the root or a node whose depth is known.
        let mut above = loop {
            match depth[cur] {
                ON_PATH => return Err(BuildError::Cycle { node: cur as u32 }),
                UNKNOWN => {}
                d => break d,
            }
            depth[cur] = ON_PATH;
            path.push(cur);
            match spec.nodes[cur].parent {
                Some(p) => cur = p as usize,
                None => break 0,
            }
        };
        while let Some(c) = path.pop() {
            above += 1;
            if above > MAX_DEPTH {
                return Err(BuildError::BadChild {
                    node: c as u32,
                    reason: TOO_DEEP,
                });
            }
            depth[c] = above;
        }
    }
    Ok(())
}

/// Every flow's parameters in range and parent a node.
fn flows_under_nodes(spec: &TreeSpec) -> Result<(), BuildError> {
    for (i, fl) in spec.flows.iter().enumerate() {
        child_params("flow", i as u32, &fl.params)?;
        if fl.parent as usize >= spec.nodes.len() {
            return Err(BuildError::UnknownNode {
                what: "flow",
                index: i as u32,
                parent: fl.parent,
            });
        }
    }
    Ok(())
}
