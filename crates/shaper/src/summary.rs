//! What `fairway shape --check` prints for a plan that passed: counts,
//! the interfaces, the default class and, per level of the tree, the
//! nodes, the circuits and the guarantees they sum to.

use crate::plan::Dir;
use crate::rate::show;
use crate::validate::Checked;
use std::fmt;

/// One level of the tree (the root's children are level 1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Level {
    /// Nodes at this level.
    pub nodes: usize,
    /// Circuits whose parent is at the level above.
    pub circuits: usize,
    /// Guarantees of those nodes and circuits, bit/s, per direction.
    pub mins: [u64; 2],
}

/// A checked plan in numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The summary's lines.
    pub lines: Vec<String>,
    /// Per level.
    pub levels: Vec<Level>,
}

impl Summary {
    /// The summary of `ck`.
    pub fn of(ck: &Checked) -> Self {
        let p = &ck.plan;
        let depth_max = ck.node_depth.iter().copied().max().unwrap_or(0);
        let mut levels = vec![Level::default(); depth_max + 1];
        for (i, &d) in ck.node_depth.iter().enumerate() {
            let l = &mut levels[d - 1];
            l.nodes += 1;
            for k in 0..2 {
                l.mins[k] = l.mins[k].saturating_add(ck.node_min[i][k]);
            }
        }
        for (c, parent) in p.circuits.iter().zip(&ck.circuit_parent) {
            let l = &mut levels[parent.map_or(0, |n| ck.node_depth[n])];
            l.circuits += 1;
            for (k, dir) in Dir::BOTH.into_iter().enumerate() {
                l.mins[k] = l.mins[k].saturating_add(c.rates.get(dir).min.unwrap_or(0));
            }
        }
        while levels
            .last()
            .is_some_and(|l| l.nodes == 0 && l.circuits == 0)
        {
            levels.pop();
        }
        let mut lines = vec![format!(
            "{} nodes, {} circuits, {} devices, {} rules",
            p.nodes.len(),
            p.circuits.len(),
            p.devices.len(),
            p.rules.len()
        )];
        lines.push(match &p.interfaces {
            Some(i) => format!(
                "interfaces: internet {}, subscribers {}; link {} download, {} upload",
                i.internet,
                i.subscribers,
                show(i.download),
                show(i.upload)
            ),
            None => "interfaces: none given (only a shaper file's [interfaces] gives them)".into(),
        });
        lines.push(match &p.default_class {
            Some(d) => format!(
                "default class: max {} download, {} upload, under {}",
                show(d.rates.download.max),
                show(d.rates.upload.max),
                d.parent.as_deref().unwrap_or("the root")
            ),
            None => "default class: none (frames no device or rule claims pass unshaped)".into(),
        });
        if !p.virtual_nodes.is_empty() {
            lines.push(format!(
                "virtual nodes (not shaped, children moved up as LibreQoS does): {}",
                p.virtual_nodes
                    .iter()
                    .map(|(v, _)| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if p.flattened_parents > 0 {
            lines.push(format!(
                "flat network: {} circuits name a parent node; placed under the root as LibreQoS does",
                p.flattened_parents
            ));
        }
        for (i, l) in levels.iter().enumerate() {
            lines.push(format!(
                "level {}: {} nodes, {} circuits; mins sum to {} download, {} upload",
                i + 1,
                l.nodes,
                l.circuits,
                show(l.mins[0]),
                show(l.mins[1])
            ));
        }
        Self { lines, levels }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for l in &self.lines {
            writeln!(f, "{l}")?;
        }
        Ok(())
    }
}
