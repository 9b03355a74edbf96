//! The shaping tree's per-node schedulers: which child has which slot,
//! the weights ([`crate::share`]), and building a node's scheduler (for
//! a fresh tree, and off the loop for a reload's [`super::TreeEdit`]).

use super::{NodeSched, Spec};
use crate::share::{weights, Kid};
use fairway_core::SchedSpec;

/// Each parent's children (tree indices of a fresh build: node `i + 1`
/// is `specs[i]`, node 0 the root) in slot order, the order of `specs`.
pub(super) fn groups(specs: &[Spec]) -> Vec<Vec<u32>> {
    let mut g: Vec<Vec<u32>> = vec![Vec::new(); specs.len() + 1];
    for (i, s) in specs.iter().enumerate() {
        g[s.parent as usize].push(i as u32 + 1);
    }
    g
}

/// The weights of a group of children by slot (`kids`: tree indices of a
/// fresh build).
pub(super) fn group_weights(specs: &[Spec], kids: &[u32]) -> Vec<u32> {
    let g: Vec<Kid> = kids
        .iter()
        .map(|&c| {
            let s = &specs[c as usize - 1];
            Kid {
                weight: s.weight,
                guarantee: s.guarantee,
            }
        })
        .collect();
    weights(&g).expect("validate::check refuses weights a scheduler cannot take")
}

/// The scheduler spec of node `n` of a fresh build (the root's: the
/// default, QFQ+; `None` for a leaf).
pub(super) fn spec_of(specs: &[Spec], n: usize) -> Option<SchedSpec> {
    match n {
        0 => Some(crate::plan::default_scheduler()),
        _ => specs[n - 1].scheduler.clone(),
    }
}

/// The scheduler of spec `spec` over children of `weights`.
pub(super) fn scheduler(spec: &SchedSpec, weights: &[u32]) -> NodeSched {
    NodeSched::new(spec, weights)
        .expect("validate::check builds every node's scheduler the same way")
}

/// Children by slot per node (as [`super::Tree::kid`] reads them),
/// each node's slot, and each inner node's scheduler.
pub(super) type Layout = (Vec<Vec<u32>>, Vec<u32>, Vec<Option<NodeSched>>);

/// The layout of the tree of `specs` (node `i + 1` is `specs[i]`, node 0
/// the root).
pub(super) fn layout(specs: &[Spec]) -> Layout {
    let kids = groups(specs);
    let mut slots = vec![0u32; specs.len() + 1];
    for g in &kids {
        for (slot, &c) in g.iter().enumerate() {
            slots[c as usize] = slot as u32;
        }
    }
    let scheds = (0..kids.len())
        .map(|n| spec_of(specs, n).map(|s| scheduler(&s, &group_weights(specs, &kids[n]))))
        .collect();
    let nodes = specs.iter().filter(|s| !s.leaf).count();
    let kids = kids
        .into_iter()
        .map(|g| g.into_iter().map(|c| kid_id(c, nodes)).collect())
        .collect();
    (kids, slots, scheds)
}

/// A child's entry in its parent's list from its fresh-build tree index
/// (`nodes`: the plan's node count; nodes come first).
pub(super) fn kid_id(c: u32, nodes: usize) -> u32 {
    let i = c as usize - 1;
    if i < nodes {
        i as u32
    } else {
        (i - nodes) as u32 | super::LEAF_KID
    }
}
