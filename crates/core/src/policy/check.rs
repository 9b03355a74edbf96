//! The structural checks of a tree description (the Eiffel paper §3.2: a
//! policy is a tree of scheduling transactions): every weight, rate and
//! reservation in its range, every parent a node, exactly one root, no
//! cycle. [`PolicyTree::build`](super::PolicyTree::build) runs them before
//! allocating anything, then checks what depends on each node's queue.

use super::error::BuildError;
use super::spec::{ChildParams, TreeSpec};

/// Largest accepted weight.
pub const MAX_WEIGHT: u32 = 1 << 16;
/// Largest accepted rate, bytes/s (8.8 Tbit/s).
pub const MAX_RATE: u64 = 1 << 40;

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

/// Every node reaches the root within `n` steps.
fn no_cycle(spec: &TreeSpec) -> Result<(), BuildError> {
    let n = spec.nodes.len();
    for i in 0..n {
        let mut cur = i;
        let mut steps = 0;
        while let Some(p) = spec.nodes[cur].parent {
            cur = p as usize;
            steps += 1;
            if steps > n {
                return Err(BuildError::Cycle { node: i as u32 });
            }
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
