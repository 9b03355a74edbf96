//! Live reload: a new checked plan applied to the running [`Engine`]
//! while frames flow, in two steps.
//!
//! 1. [`prepare`] (on any thread, the engine untouched): the difference
//!    from the running plan ([`crate::diff`]), refused if the interfaces
//!    changed or the queues would not fit [`MAX_QUEUE_BYTES`]; then the
//!    new classifiers and trees, with queues allocated for the circuits
//!    that are new (or whose queue limit changed) and stand-ins for the
//!    ones that stay. Everything that costs is done here.
//! 2. [`Engine::apply`] (on the loop's thread, between two frames): for
//!    each direction the new tree takes over, by index, the queues and
//!    token buckets of every node and circuit that stays (moved to
//!    another parent or not), the counters of the circuits that stay
//!    continue, the queued frames of the circuits removed are dropped and
//!    counted ([`DropReason::Removed`]; their counters are summed into the
//!    direction's "removed circuits" row), and the new classifier takes
//!    effect. O(nodes + circuits + frames of removed circuits), nothing
//!    allocated: the loop does not serve for this long (the *pause*).
//!
//! What a circuit that stays keeps: its FQ-CoDel queues (frames, their
//! flows' order, CoDel's state), its token buckets (what a bucket holds
//! carries over at the new rate, at most the new burst; a debt stays a
//! debt), its counters. A changed max rate changes the queue's packet
//! limit only once the running queue has emptied (frames are never moved
//! between queues). What starts afresh: the virtual passes of weighted
//! sharing (every backlogged child starts level with its siblings) and
//! the round robin among guarantees.
//!
//! The old state ([`Applied::retired`]) is best dropped away from the
//! loop: freeing thousands of queues takes time too.

use super::classify::Classifier;
use super::engine::{leaf_names, queue_bytes, Engine, EngineError, Side, MAX_QUEUE_BYTES};
use super::reload_request::ReloadAnswer;
use super::snapshot::Layout;
use super::stats::{Count, Counters, DropReason};
use super::tree::{leaf_limit, Tree};
use super::watch::Watch;
use crate::diff::{diff, DefaultChange, Diff};
use crate::error::ConfigError;
use crate::plan::Dir;
use crate::validate::Checked;
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

/// Why a new configuration is refused (the running one keeps running).
#[derive(Debug)]
pub enum ReloadError {
    /// The files have problems (each names its file and line).
    Config(Vec<ConfigError>),
    /// The interfaces' names changed: the running shaper's sockets are
    /// bound to the old ones.
    Interfaces,
    /// The queues cannot be built.
    Engine(EngineError),
}

impl fmt::Display for ReloadError {
    /// One line per problem.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReloadError::Config(problems) => {
                for (i, p) in problems.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "\n" };
                    write!(f, "{sep}{p}")?;
                }
                Ok(())
            }
            ReloadError::Interfaces => write!(
                f,
                "[interfaces] names other interfaces (or was added or removed): a running \
                 shaper cannot change its interfaces; restart it for that"
            ),
            ReloadError::Engine(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ReloadError {}

/// A new configuration ready to apply.
pub struct Prepared {
    plan: Arc<Checked>,
    /// The plan it was prepared against.
    base: Arc<Checked>,
    diff: Diff,
    /// Each new tree node's old index (the same in both directions).
    tree_from: Vec<Option<u32>>,
    /// Each new leaf's old index.
    leaf_from: Vec<Option<u32>>,
    /// The old leaves that go.
    removed: Vec<u32>,
    sides: [Side; 2],
    names: Vec<String>,
    /// The new plan's statistics, filled from the old at the swap.
    watch: Watch,
    layout: Arc<Layout>,
}

impl Prepared {
    /// What it changes.
    pub fn diff(&self) -> &Diff {
        &self.diff
    }
}

/// The old index of each leaf of `new` (circuits by id, then the default
/// class).
fn leaf_from(old: &Checked, new: &Checked, d: &Diff) -> Vec<Option<u32>> {
    let mut from: Vec<Option<u32>> = d.circuit_from.iter().map(|o| o.map(|i| i as u32)).collect();
    if new.plan.default_class.is_some() {
        let kept = matches!(
            d.default_class,
            DefaultChange::Same | DefaultChange::Changed
        );
        from.push(kept.then_some(old.plan.circuits.len() as u32));
    }
    from
}

/// A leaf's max rate in `dir` (`leaf`: a circuit's index, or the default
/// class after the circuits).
fn leaf_max(c: &Checked, leaf: u32, dir: Dir) -> u64 {
    let plan = &c.plan;
    let rates = match plan.circuits.get(leaf as usize) {
        Some(k) => Some(k.rates),
        None => plan.default_class.as_ref().map(|d| d.rates),
    };
    rates.map_or(0, |r| r.get(dir).max)
}

/// Prepares `new` to replace `old` (the running plan, [`Engine::plan`]),
/// as of `now_ns`: the step of a reload that allocates and may take
/// milliseconds; the engine is not touched.
pub fn prepare(old: &Arc<Checked>, new: Checked, now_ns: u64) -> Result<Prepared, ReloadError> {
    let d = diff(old, &new);
    if d.interfaces_changed {
        return Err(ReloadError::Interfaces);
    }
    let bytes = queue_bytes(&new);
    if bytes > MAX_QUEUE_BYTES {
        return Err(ReloadError::Engine(EngineError::Memory { bytes }));
    }
    let from = leaf_from(old, &new, &d);
    let old_leaves = old.plan.circuits.len() + usize::from(old.plan.default_class.is_some());
    let mut leaf_to = vec![None; old_leaves];
    for (n, o) in from.iter().enumerate() {
        if let Some(o) = o {
            leaf_to[*o as usize] = Some(n as u32);
        }
    }
    let removed = (0..old_leaves as u32)
        .filter(|&o| leaf_to[o as usize].is_none())
        .collect();
    // A tree's nodes: the root, the plan's nodes, then its leaves.
    let old_nodes = old.plan.nodes.len() as u32;
    let tree_from = std::iter::once(Some(0))
        .chain(d.node_from.iter().map(|o| o.map(|o| o as u32 + 1)))
        .chain(from.iter().map(|o| o.map(|o| o + 1 + old_nodes)))
        .collect();
    let side = |dir: Dir| -> Result<Side, ReloadError> {
        let old_limit = |l: u32| {
            let o = from.get(l as usize).copied().flatten()?;
            Some(leaf_limit(leaf_max(old, o, dir)))
        };
        let tree = Tree::build(&new, dir, now_ns, old_limit)
            .map_err(|e| ReloadError::Engine(EngineError::Aqm(e)))?;
        Ok(Side {
            classifier: Classifier::new(&new, dir),
            leaf: vec![Counters::default(); tree.leaves()],
            tree,
            unshaped: Counters::default(),
            fifo: VecDeque::new(),
            removed: Counters::default(),
        })
    };
    let sides = [side(Dir::Download)?, side(Dir::Upload)?];
    // No arrival times: the swap moves the running ones over.
    let watch = Watch::new(&new, 0).map_err(|e| ReloadError::Engine(EngineError::Stats(e)))?;
    Ok(Prepared {
        watch,
        layout: Arc::new(Layout::of(&new)),
        names: leaf_names(&new),
        plan: Arc::new(new),
        base: Arc::clone(old),
        diff: d,
        tree_from,
        leaf_from: from,
        removed,
        sides,
    })
}

/// Adds `c` to `into`, counter by counter.
fn absorb(into: &mut Counters, c: &Counters) {
    for (sum, x) in [
        (&mut into.received, c.received),
        (&mut into.sent, c.sent),
        (&mut into.codel, c.codel),
        (&mut into.overflow, c.overflow),
        (&mut into.too_large, c.too_large),
        (&mut into.no_slot, c.no_slot),
        (&mut into.send_failed, c.send_failed),
        (&mut into.removed, c.removed),
    ] {
        sum.packets += x.packets;
        sum.bytes += x.bytes;
    }
}

/// The state a reload replaced: drop it where a pause does not matter.
pub struct Retired {
    _sides: [Side; 2],
    _plan: Arc<Checked>,
    _names: Vec<String>,
    _watch: Watch,
}

/// What [`Engine::apply`] did.
pub struct Applied {
    /// What changed.
    pub diff: Diff,
    /// The frames queued in removed circuits, dropped and counted.
    pub dropped: Count,
    /// The old state.
    pub retired: Retired,
}

/// Why [`Engine::apply`] refused a prepared configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StalePlan;

impl fmt::Display for StalePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the configuration was prepared against a plan that no longer runs (another reload came first)"
        )
    }
}

impl std::error::Error for StalePlan {}

impl Engine {
    /// Applies a prepared configuration at `now_ns` (see the module
    /// doc). Not between [`Engine::next`] and [`Engine::sent`] of one
    /// frame: its leaf index is the old tree's. Refused, nothing changed,
    /// if `p` was prepared against another plan than the running one.
    pub fn apply(&mut self, p: Prepared, now_ns: u64) -> Result<Applied, StalePlan> {
        if !Arc::ptr_eq(&p.base, &self.plan) {
            return Err(StalePlan);
        }
        let mut dropped = Count::default();
        let Prepared {
            plan,
            diff,
            tree_from,
            leaf_from,
            removed,
            sides,
            names,
            mut watch,
            layout,
            ..
        } = p;
        let mut sides = sides;
        for (d, new) in sides.iter_mut().enumerate() {
            let old = &mut self.sides[d];
            new.tree
                .take_over(&mut old.tree, &tree_from, &leaf_from, now_ns);
            for (n, from) in leaf_from.iter().enumerate() {
                if let Some(o) = from {
                    new.leaf[n] = old.leaf[*o as usize];
                }
            }
            std::mem::swap(&mut new.fifo, &mut old.fifo);
            new.unshaped = old.unshaped;
            new.removed = old.removed;
            let pool = &mut self.pool;
            for &o in &removed {
                let counters = &mut old.leaf[o as usize];
                old.tree.drain(o, now_ns, |f| {
                    counters.drop(DropReason::Removed, f.len as usize);
                    dropped.add(f.len as usize);
                    pool.give(f.slot);
                });
                absorb(&mut new.removed, counters);
            }
            std::mem::swap(old, new);
        }
        watch.take_over(&mut self.watch, &leaf_from, &diff.node_from);
        let old_watch = std::mem::replace(&mut self.watch, watch);
        self.layout = layout;
        let old_names = std::mem::replace(&mut self.names, names);
        let old_plan = std::mem::replace(&mut self.plan, plan);
        Ok(Applied {
            diff,
            dropped,
            retired: Retired {
                _sides: sides,
                _plan: old_plan,
                _names: old_names,
                _watch: old_watch,
            },
        })
    }
}

/// A duration for people: `85 µs`, `4.1 ms`, `1.25 s`.
pub fn show_ns(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{} µs", ns / 1000)
    } else if ns < 1_000_000_000 {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else {
        format!("{:.2} s", ns as f64 / 1e9)
    }
}

impl Applied {
    /// The one-line outcome: what changed, the frames of removed
    /// circuits, the pause (`pause_ns`: the time the loop did not serve)
    /// and the time from the request to the end (`total_ns`).
    pub fn line(&self, pause_ns: u64, total_ns: u64) -> String {
        let mut s = self.diff.to_string();
        if self.dropped.packets > 0 {
            s += &format!(
                "; {} queued frames of removed circuits dropped (counted as removed)",
                self.dropped.packets
            );
        }
        s + &format!(
            "; pause {}, applied in {}",
            show_ns(pause_ns),
            show_ns(total_ns)
        )
    }

    /// The answer to whoever asked.
    pub fn answer(&self, pause_ns: u64, total_ns: u64) -> ReloadAnswer {
        ReloadAnswer {
            ok: true,
            text: self.line(pause_ns, total_ns),
        }
    }
}

/// The answer for a refused configuration: its problems, then
/// `reload refused; the running configuration is unchanged`.
pub fn refused(why: &dyn fmt::Display) -> ReloadAnswer {
    ReloadAnswer {
        ok: false,
        text: format!("{why}\nreload refused; the running configuration is unchanged"),
    }
}

/// Reads and checks `source` and prepares it against `old`: a reload's
/// work off the loop.
pub fn load_and_prepare(
    source: &crate::load::Source,
    old: &Arc<Checked>,
    now_ns: u64,
) -> Result<Prepared, ReloadError> {
    let new = crate::load::load(source).map_err(ReloadError::Config)?;
    prepare(old, new, now_ns)
}
