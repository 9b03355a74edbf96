//! The shaping tree's per-node schedulers: which child has which slot,
//! the weights ([`crate::share`]), building them, and carrying them over
//! a reload.

use super::{NodeSched, Packet, Spec, Tree};
use crate::share::{weights, Kid};

/// Children by slot per node (`kids[first[n]..first[n + 1]]`), each
/// node's slot, and each node's children's weights by slot.
pub(super) type Layout = (Vec<u32>, Vec<u32>, Vec<u32>, Vec<Vec<u32>>);

/// The layout of the tree of `specs` (node `i + 1` is `specs[i]`, node 0
/// the root).
pub(super) fn layout(specs: &[Spec]) -> Layout {
    let n = specs.len() + 1;
    let mut first = vec![0u32; n + 1];
    for s in specs {
        first[s.parent as usize + 1] += 1;
    }
    for p in 0..n {
        first[p + 1] += first[p];
    }
    let mut kids = vec![0u32; specs.len()];
    let mut slots = vec![0u32; n];
    let mut fill = vec![0u32; n];
    let mut groups: Vec<Vec<Kid>> = vec![Vec::new(); n];
    for (i, s) in specs.iter().enumerate() {
        let p = s.parent as usize;
        slots[i + 1] = fill[p];
        kids[(first[p] + fill[p]) as usize] = i as u32 + 1;
        fill[p] += 1;
        groups[p].push(Kid {
            weight: s.weight,
            guarantee: s.guarantee,
        });
    }
    let w = groups
        .iter()
        .map(|g| weights(g).expect("validate::check refuses weights a scheduler cannot take"))
        .collect();
    (kids, first, slots, w)
}

/// Each inner node's scheduler (the root's: the default, QFQ+).
pub(super) fn schedulers(specs: &[Spec], weights: &[Vec<u32>]) -> Vec<Option<NodeSched>> {
    let root = crate::plan::default_scheduler();
    let spec = |n: usize| match n {
        0 => Some(&root),
        _ => specs[n - 1].scheduler.as_ref(),
    };
    (0..weights.len())
        .map(|n| {
            spec(n).map(|s| {
                NodeSched::new(s, &weights[n])
                    .expect("validate::check builds every node's scheduler the same way")
            })
        })
        .collect()
}

impl<P: Packet> Tree<P> {
    /// For [`Tree::take_over`], before backlogged leaves are activated:
    /// every node that stays keeps the length of its last frame, and an
    /// inner node that stays with the same scheduler, the same children
    /// in the same slots and the same weights takes over its running
    /// scheduler (its children keep their tokens); any other starts a
    /// fresh one, its children's tokens queued as they turn eligible.
    pub(super) fn carry_schedulers(&mut self, old: &mut Tree<P>, tree_from: &[Option<u32>]) {
        let from = |n: u32| tree_from.get(n as usize).copied().flatten();
        for n in 0..self.nodes.len() {
            let Some(o) = from(n as u32).map(|o| o as usize) else {
                continue;
            };
            self.nodes[n].last = old.nodes[o].last;
            let (Some(a), Some(b)) = (&self.scheds[n], &old.scheds[o]) else {
                continue;
            };
            let kn = &self.kids[self.first[n] as usize..self.first[n + 1] as usize];
            let ko = &old.kids[old.first[o] as usize..old.first[o + 1] as usize];
            let same = a.same_as(b)
                && kn.len() == ko.len()
                && kn.iter().zip(ko).all(|(&c, &oc)| from(c) == Some(oc));
            if !same {
                continue;
            }
            std::mem::swap(&mut self.scheds[n], &mut old.scheds[o]);
            for (&c, &oc) in kn.iter().zip(ko) {
                self.nodes[c as usize].token = old.nodes[oc as usize].token;
            }
        }
    }
}
