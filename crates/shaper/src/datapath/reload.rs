//! Live reload: a new checked plan applied to the running [`Engine`]
//! while frames flow, in two steps.
//!
//! 1. [`prepare`] (on any thread, the engine untouched): the difference
//!    from the running plan ([`crate::diff`]), refused if the interfaces
//!    changed or the queues would not fit [`MAX_QUEUE_BYTES`]; the new
//!    plan arranged so that every node and circuit that stays keeps its
//!    index ([`super::slots`]); then per direction the tree's edit
//!    ([`TreeEdit`]: only what changed, with the queues of new circuits
//!    and room for the new queue limits of circuits whose limit
//!    changed), the new classifiers, the
//!    statistics' edit ([`WatchEdit`]: histograms for the new classes
//!    only), names and layout. Everything that costs is done here.
//! 2. [`Engine::apply`] (on the loop's thread, between two frames): the
//!    trees and statistics are edited in place, touching only what
//!    changed; the queued frames of the circuits removed are dropped and
//!    counted ([`DropReason::Removed`]; their counters are summed into
//!    the direction's "removed circuits" row); the classifiers, names,
//!    layout and plan are swapped for the prepared ones. O(changes +
//!    frames of removed circuits), nothing large allocated or freed: the
//!    loop does not serve for this long (the *pause*).
//!
//! What a circuit (or node) that stays keeps: its FQ-CoDel queues
//! (frames, their flows' order, CoDel's state), its token buckets, max
//! and min (what a bucket holds carries over at the new rate, at most the
//! new burst; a debt stays a debt), its counters and statistics, and its
//! place in its parent's scheduler (the parent's `policy`) unless the
//! parent is *regrouped*. A parent whose children or their weights
//! change keeps its scheduler and edits the changed children's places
//! in it; it is regrouped when its policy changes or its children's
//! number changes its scheduler's room: it gets a new scheduler, built
//! in [`prepare`], and every eligible child of it one token there in
//! slot order, starting level, with neither the credit nor the debt of
//! its old place. A moved child takes the place its new parent gives
//! it; one with a min also goes last in the guarantees' round robin. A changed max rate changes
//! the queue's packet limit, the queue kept (its frames, their order,
//! CoDel's state, its counters): the queue takes the new limit when it is
//! empty, at its next frame or once it has emptied (frames are never
//! copied between rooms, and the pause touches no queue for it).
//!
//! The old state ([`Applied::retired`]) is best dropped away from the
//! loop: freeing thousands of queues takes time too.

use super::classify::Classifier;
use super::engine::{leaf_names, queue_bytes, Engine, EngineError, MAX_QUEUE_BYTES};
use super::pool::FrameRef;
use super::reload_request::ReloadAnswer;
use super::slots::{arrange, Rearrange};
use super::snapshot::Layout;
use super::stats::{Count, Counters, DropReason};
use super::tree::TreeEdit;
use super::watch::WatchEdit;
use crate::diff::{diff, DefaultChange, Diff};
use crate::error::ConfigError;
use crate::plan::Dir;
use crate::validate::Checked;
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
    /// Per direction.
    edits: [TreeEdit<FrameRef>; 2],
    classifiers: [Classifier; 2],
    names: Vec<String>,
    watch: WatchEdit,
    layout: Arc<Layout>,
}

impl Prepared {
    /// What it changes.
    pub fn diff(&self) -> &Diff {
        &self.diff
    }
}

/// The old slot of each leaf of `new` (circuits, then the default
/// class), `d` arranged like `new`.
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

/// Prepares `new` to replace `old` (the running plan, [`Engine::plan`]):
/// the step of a reload that allocates and may take milliseconds; the
/// engine is not touched. (`_now_ns` is kept for the callers: nothing
/// prepared depends on the time, the edit takes it at the swap.)
pub fn prepare(old: &Arc<Checked>, new: Checked, _now_ns: u64) -> Result<Prepared, ReloadError> {
    let mut d = diff(old, &new);
    if d.interfaces_changed {
        return Err(ReloadError::Interfaces);
    }
    let bytes = queue_bytes(&new);
    if bytes > MAX_QUEUE_BYTES {
        return Err(ReloadError::Engine(EngineError::Memory { bytes }));
    }
    let new = arrange(new, &mut d);
    let node_from: Vec<Option<u32>> = d.node_from.iter().map(|o| o.map(|i| i as u32)).collect();
    let from = leaf_from(old, &new, &d);
    let edit = |dir: Dir| {
        TreeEdit::new(old, &new, &node_from, &from, dir)
            .map_err(|e| ReloadError::Engine(EngineError::Aqm(e)))
    };
    let watch = || {
        // The statistics' leaves end with the unshaped frames' class.
        let old_leaves = from_len(old);
        let mut watch_from = from.clone();
        watch_from.push(Some(old_leaves as u32));
        WatchEdit::new(
            &new,
            Rearrange::of(&watch_from, old_leaves + 1),
            Rearrange::of(&node_from, old.plan.nodes.len()),
        )
        .map_err(|e| ReloadError::Engine(EngineError::Stats(e)))
    };
    // The upload side and the statistics on a second thread: most of
    // the preparation is allocating queues and histograms, which scales
    // with the cores (one thread does it all if none can start).
    let ((down, classifiers), (up, watch)) = crate::on_two::on_two(
        || {
            (
                edit(Dir::Download),
                [
                    Classifier::new(&new, Dir::Download),
                    Classifier::new(&new, Dir::Upload),
                ],
            )
        },
        || (edit(Dir::Upload), watch()),
    );
    Ok(Prepared {
        edits: [down?, up?],
        classifiers,
        watch: watch?,
        layout: Arc::new(Layout::of(&new)),
        names: leaf_names(&new),
        plan: Arc::new(new),
        base: Arc::clone(old),
        diff: d,
    })
}

/// A plan's leaves: its circuits and the default class.
fn from_len(c: &Checked) -> usize {
    c.plan.circuits.len() + usize::from(c.plan.default_class.is_some())
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
    into.collisions += c.collisions;
}

/// The state a reload replaced: drop it where a pause does not matter.
pub struct Retired {
    _edits: [TreeEdit<FrameRef>; 2],
    _classifiers: [Classifier; 2],
    _plan: Arc<Checked>,
    _names: Vec<String>,
    _watch: WatchEdit,
    _layout: Arc<Layout>,
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
            mut edits,
            mut classifiers,
            names,
            mut watch,
            layout,
            ..
        } = p;
        for (d, e) in edits.iter_mut().enumerate() {
            let side = &mut self.sides[d];
            let (pool, leaf) = (&mut self.pool, &mut side.leaf);
            side.tree.edit(e, now_ns, |o, f| {
                leaf[o as usize].drop(DropReason::Removed, f.len as usize);
                dropped.add(f.len as usize);
                pool.give(f.slot);
            });
            for &o in &e.leaves.removed {
                absorb(&mut side.removed, &side.leaf[o as usize]);
            }
            e.leaves
                .apply(&mut side.leaf, |_| Counters::default(), |_| {});
            std::mem::swap(&mut side.classifier, &mut classifiers[d]);
        }
        self.watch.edit(&mut watch);
        let old_layout = std::mem::replace(&mut self.layout, layout);
        let old_names = std::mem::replace(&mut self.names, names);
        let old_plan = std::mem::replace(&mut self.plan, plan);
        Ok(Applied {
            diff,
            dropped,
            retired: Retired {
                _edits: edits,
                _classifiers: classifiers,
                _plan: old_plan,
                _names: old_names,
                _watch: watch,
                _layout: old_layout,
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
