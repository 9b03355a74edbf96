//! The reload thread's warm-up: one preparation when the shaper starts,
//! thrown away, so that the first real reload finds its memory ready.
//!
//! Why: glibc's malloc gives each thread an arena of its own and returns
//! a freed block to the arena it came from. A reload's new plan, edit
//! lists and the queues and delay histograms of the circuits it adds are
//! built on the reload's thread and a second one
//! ([`super::reload::prepare`]); without a warm-up, the first reload
//! would take all of that fresh from the kernel a page at a time (about
//! 6,000 page faults, each page zeroed, at 10,000 circuits), since the
//! running plan was built on another thread and is still in use.
//!
//! How: the running configuration is read and prepared against the
//! running plan without one circuit in [`ADDED_SHARE`] (its devices and
//! rules gone with it), so the preparation also builds queues and
//! histograms for those circuits, as a reload that adds them would. What
//! it frees stays in the threads' arenas
//! ([`super::memory::keep_freed_memory`]), and a reload that adds up to
//! that share of circuits takes no new page.
//!
//! What it costs: one preparation's CPU when the shaper starts, off the
//! loop, and the memory of that share's queues and histograms kept in
//! malloc's free lists (the queues follow the circuits' rates: about
//! 19 KiB per circuit, both directions, at the shape bench's, so some
//! 38 MB at 10,000 circuits, plus the histograms).

use super::reload::{load_and_prepare, Prepared, ReloadError};
use crate::fast_hash::Set;
use crate::load::Source;
use crate::validate::{check, Checked};
use std::sync::Arc;

/// One circuit in this many is left out of the plan the warm-up
/// prepares against: the room kept for a reload's added circuits.
pub const ADDED_SHARE: usize = 5;

/// Reads and prepares `source` against `running` without one circuit in
/// [`ADDED_SHARE`], and returns what it prepared, for the caller to drop
/// (an error is nobody's: a reload reads the file again and reports).
/// Against `running` itself when the smaller plan does not check.
pub fn warm_up(
    source: &Source,
    running: &Arc<Checked>,
    now_ns: u64,
) -> Result<Prepared, ReloadError> {
    let base = without_some(running).map_or_else(|| Arc::clone(running), Arc::new);
    load_and_prepare(source, &base, now_ns)
}

/// `c`'s plan without every [`ADDED_SHARE`]th circuit, their devices and
/// rules, checked; `None` if there is nothing to leave out or the check
/// refuses it.
pub fn without_some(c: &Checked) -> Option<Checked> {
    let mut plan = c.plan.clone();
    let gone: Set<String> = plan
        .circuits
        .iter()
        .step_by(ADDED_SHARE)
        .map(|k| k.id.clone())
        .collect();
    if gone.is_empty() || gone.len() == plan.circuits.len() {
        return None;
    }
    plan.circuits.retain(|k| !gone.contains(&k.id));
    plan.devices.retain(|d| !gone.contains(&d.circuit));
    plan.rules.retain(|r| !gone.contains(&r.circuit));
    check(plan).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datapath::reload::prepare;

    use crate::datapath::test_plan::example_source as example;

    #[test]
    fn the_base_leaves_out_one_circuit_in_five_with_its_devices_and_rules() {
        let (_, running) = example();
        let base = without_some(&running).expect("the example has circuits to leave out");
        let (all, kept) = (&running.plan, &base.plan);
        let n = all.circuits.len();
        assert!(n >= 2, "the example has several circuits");
        assert_eq!(kept.circuits.len(), n - n.div_ceil(ADDED_SHARE));
        let ids: Set<&str> = kept.circuits.iter().map(|k| k.id.as_str()).collect();
        assert!(kept
            .devices
            .iter()
            .all(|d| ids.contains(d.circuit.as_str())));
        assert!(kept.rules.iter().all(|r| ids.contains(r.circuit.as_str())));
        let left_devices = all
            .devices
            .iter()
            .filter(|d| ids.contains(d.circuit.as_str()))
            .count();
        assert_eq!(kept.devices.len(), left_devices, "the others' devices stay");
    }

    #[test]
    fn the_warm_up_prepares_the_left_out_circuits_as_added() {
        let (source, running) = example();
        let base = Arc::new(without_some(&running).expect("a base"));
        let left_out = running.plan.circuits.len() - base.plan.circuits.len();
        let p = prepare(&base, running.as_ref().clone(), 0).expect("prepared");
        assert_eq!(p.diff().circuits.added.len(), left_out);
        assert!(warm_up(&source, &running, 0).is_ok());
    }
}
