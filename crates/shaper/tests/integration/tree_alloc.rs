//! The shaping tree allocates nothing per frame: after a warm-up, a
//! second of overloaded traffic through a tree of nodes with mins and
//! every registry scheduler (enqueue, dequeue, guarantees, stale tokens,
//! timers) makes no allocation on this thread; nor does a reload's edit
//! in the pause (other policies, weights and mins, circuits moved,
//! removed and added), beyond what its preparation allocated. Counted by this test
//! binary's global allocator, per thread, so other tests running at the
//! same time are not counted.

use crate::support::shaper;
use fairway_shaper::datapath::tree::{Tree, TreeEdit};
use fairway_shaper::plan::Dir;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::Write as _;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is passed to the system allocator unchanged; the
// count is a const-initialized thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

const SPECS: [&str; 7] = ["qfq+", "drr", "qfq", "s-kps", "wf2q+", "wf2q++", "fifo"];

fn plan() -> String {
    plan_with(&SPECS, &[], 0)
}

/// The plan with node `n`'s policy `specs[n]`, without the circuits
/// `skip` names, and circuits `c{n}_0` weighing `1 + w0`.
fn plan_with(specs: &[&str], skip: &[&str], w0: u32) -> String {
    let mut t = String::from(
        "[interfaces]\ninternet = \"a\"\nsubscribers = \"b\"\nrate = { download = \"1gbit\", upload = \"1gbit\" }\n\n",
    );
    for (n, spec) in specs.iter().enumerate() {
        let _ = write!(
            t,
            "[[node]]\nname = \"n{n}\"\nrate = {{ download = \"300mbit\", upload = \"300mbit\" }}\nreservation = {{ download = \"20mbit\", upload = \"20mbit\" }}\npolicy = \"{spec}\"\n\n"
        );
        for c in 0..6 {
            if skip.contains(&format!("c{n}_{c}").as_str()) {
                continue;
            }
            let _ = write!(
                t,
                "[[circuit]]\nid = \"c{n}_{c}\"\nparent = \"n{n}\"\nrate = {{ download = \"{}mbit\", upload = \"50mbit\" }}\nreservation = {{ download = \"1mbit\", upload = \"1mbit\" }}\nweight = {}\n\n",
                20 + 20 * c,
                1 + c + if c == 0 { w0 } else { 0 }
            );
        }
    }
    t
}

#[test]
fn a_frame_through_the_tree_allocates_nothing() {
    let c = shaper("tree_alloc", &plan()).expect("the plan");
    let mut t: Tree<u32> = Tree::new(&c, Dir::Download, 0).expect("the tree");
    let leaves = t.leaves() as u32;
    let mut seed = 1u64;
    let mut now = 0u64;
    let mut sent = 0u64;
    let mut run = |t: &mut Tree<u32>, steps: u32, now: &mut u64| {
        for _ in 0..steps {
            *now += 20_000;
            for _ in 0..40 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                let leaf = ((seed >> 33) % u64::from(leaves)) as u32;
                let len = 64 + ((seed >> 17) % 1451) as u32;
                if t.backlog(leaf).packets < 100 {
                    let _ = t.enqueue(leaf, (seed >> 7) as u32, len, *now);
                }
            }
            while t.dequeue(*now, &mut |_, _| {}).is_some() {
                sent += 1;
            }
        }
    };
    // Warm-up: every queue reaches its deepest, every scheduler has seen
    // every child.
    run(&mut t, 50_000, &mut now);
    let before = allocs();
    run(&mut t, 50_000, &mut now);
    assert_eq!(allocs() - before, 0, "allocations while shaping");
    assert!(sent > 100_000, "{sent}");
}

#[test]
fn a_reload_edit_allocates_nothing_in_the_pause() {
    use fairway_shaper::datapath::slots::arrange;
    use fairway_shaper::diff::diff;
    let old = shaper("tree_alloc_old", &plan_with(&SPECS, &["c1_5", "c2_5"], 0)).expect("the plan");
    let mut t: Tree<u32> = Tree::new(&old, Dir::Download, 0).expect("the tree");
    // Other policies, a weight changed, two circuits removed and two added
    // (the tree's size stays: the new ones take the freed nodes).
    let specs = ["drr", "qfq+", "wf2q+", "fifo", "qfq", "s-kps", "wf2q++"];
    let new = shaper("tree_alloc_new", &plan_with(&specs, &["c3_5", "c4_5"], 3)).expect("the plan");
    let mut d = diff(&old, &new);
    let new = arrange(new, &mut d);
    let node_from: Vec<Option<u32>> = d.node_from.iter().map(|o| o.map(|i| i as u32)).collect();
    let leaf_from: Vec<Option<u32>> = d.circuit_from.iter().map(|o| o.map(|i| i as u32)).collect();
    let e: TreeEdit<u32> =
        TreeEdit::new(&old, &new, &node_from, &leaf_from, Dir::Download).expect("the edit");
    edit_under_load(&mut t, e);
}

/// A reload that keeps every parent's scheduler (the same policies; a
/// weight changed, circuits removed, added and shifted into the freed
/// slots, each parent's children within its scheduler's room) edits the
/// schedulers in place without allocating in the pause, for every
/// scheduler of the registry (QFQ+ and WF2Q++ included: their index of
/// non-full aggregates is sized when they are built).
#[test]
fn a_reload_that_keeps_the_schedulers_allocates_nothing_in_the_pause() {
    use fairway_shaper::datapath::slots::arrange;
    use fairway_shaper::diff::diff;
    let specs = ["drr", "qfq", "s-kps", "wf2q+", "fifo", "qfq+", "wf2q++"];
    // Removed: the first circuit of n0 and the last of n1 (a slot that
    // goes); n2 and n3 gain one; fewer come than go, so the last
    // circuit moves down into the first one's slot.
    let old = shaper(
        "tree_alloc_kept_old",
        &plan_with(&specs, &["c2_5", "c3_5"], 0),
    )
    .expect("the plan");
    let mut t: Tree<u32> = Tree::new(&old, Dir::Download, 0).expect("the tree");
    let new = shaper(
        "tree_alloc_kept_new",
        &plan_with(&specs, &["c0_0", "c1_5", "c2_0"], 3),
    )
    .expect("the plan");
    let mut d = diff(&old, &new);
    let new = arrange(new, &mut d);
    let node_from: Vec<Option<u32>> = d.node_from.iter().map(|o| o.map(|i| i as u32)).collect();
    let leaf_from: Vec<Option<u32>> = d.circuit_from.iter().map(|o| o.map(|i| i as u32)).collect();
    let e: TreeEdit<u32> =
        TreeEdit::new(&old, &new, &node_from, &leaf_from, Dir::Download).expect("the edit");
    assert_eq!(e.regrouped(), 0, "every parent keeps its scheduler");
    assert!(
        !e.leaves.moves.is_empty(),
        "a circuit moves to another slot"
    );
    edit_under_load(&mut t, e);
}

/// Fills every circuit of `t`, applies `e` counting the allocations in
/// the pause (none allowed) and the removed circuits' frames (some
/// expected), then checks that the edited tree sends all it holds.
fn edit_under_load(t: &mut Tree<u32>, mut e: TreeEdit<u32>) {
    let leaves = t.leaves() as u32;
    let mut now = 0u64;
    for step in 0..2000u32 {
        now += 20_000;
        for leaf in 0..leaves {
            if t.backlog(leaf).packets < 20 {
                let _ = t.enqueue(leaf, step, 1000 + leaf, now);
            }
        }
        for _ in 0..20 {
            let _ = t.dequeue(now, &mut |_, _| {});
        }
    }
    let mut removed = 0u32;
    let before = allocs();
    t.edit(&mut e, now, |_, _| removed += 1);
    assert_eq!(allocs() - before, 0, "allocations in the pause");
    assert!(removed > 0, "the removed circuits held frames");
    drop(e);
    // The edited tree sends what it holds.
    let mut sent = 0u32;
    for _ in 0..1000 {
        now += 20_000;
        while t.dequeue(now, &mut |_, _| {}).is_some() {
            sent += 1;
        }
    }
    assert!(sent > 0);
    let left: u64 = (0..t.leaves() as u32).map(|l| t.backlog(l).packets).sum();
    assert_eq!(left, 0, "frames left after the edit");
}

/// A reload that changes busy circuits' max rates, so their queue
/// limits (100 ms at the max), keeps their queues and frames and
/// allocates nothing in the pause; each queue takes its new limit once
/// it has emptied: the circuit whose limit rises (20 Mbit/s to 200
/// Mbit/s: 166 to 1652 frames) holds 166 frames until then and 1000
/// after; the one whose limit falls (120 Mbit/s to 20 Mbit/s: 991 to 166
/// frames) keeps taking frames up to 991 until then and 166 after. The
/// queues are the same all along (their counters go on).
#[test]
fn a_reload_that_changes_queue_limits_keeps_the_frames_and_allocates_nothing_in_the_pause() {
    use fairway_shaper::datapath::slots::arrange;
    use fairway_shaper::diff::diff;
    let text = plan();
    let old = shaper("tree_alloc_limit_old", &text).expect("the plan");
    let mut t: Tree<u32> = Tree::new(&old, Dir::Download, 0).expect("the tree");
    let changed = text
        .replacen(
            "download = \"20mbit\", upload = \"50mbit\"",
            "download = \"200mbit\", upload = \"50mbit\"",
            1,
        )
        .replacen(
            "download = \"120mbit\", upload = \"50mbit\"",
            "download = \"20mbit\", upload = \"50mbit\"",
            1,
        );
    let new = shaper("tree_alloc_limit_new", &changed).expect("the plan");
    let mut d = diff(&old, &new);
    let new = arrange(new, &mut d);
    let node_from: Vec<Option<u32>> = d.node_from.iter().map(|o| o.map(|i| i as u32)).collect();
    let leaf_from: Vec<Option<u32>> = d.circuit_from.iter().map(|o| o.map(|i| i as u32)).collect();
    let mut e: TreeEdit<u32> =
        TreeEdit::new(&old, &new, &node_from, &leaf_from, Dir::Download).expect("the edit");
    // c0_0 is leaf 0 (raised), c0_5 leaf 5 (lowered); nothing is sent
    // while the clock stays, so what they hold is what was queued.
    let (up, down) = (0u32, 5u32);
    for k in 0..600u32 {
        assert_eq!(t.enqueue(down, k, 100, 0), Ok(None), "below the old limit");
    }
    for k in 0..100u32 {
        assert_eq!(t.enqueue(up, k, 100, 0), Ok(None), "below the old limit");
    }
    let before = allocs();
    t.edit(&mut e, 0, |_, _| panic!("no circuit is removed"));
    assert_eq!(allocs() - before, 0, "allocations in the pause");
    drop(e);
    // Busy: the old limits hold, the frames stay.
    for k in 0..100u32 {
        assert_eq!(t.enqueue(down, k, 100, 0), Ok(None), "the old limit (991)");
        let _ = t.enqueue(up, k, 100, 0);
    }
    assert_eq!(t.backlog(down).packets, 700);
    assert_eq!(t.backlog(up).packets, 166, "the old limit while busy");
    let mut now = 0;
    while t.backlog(up).packets + t.backlog(down).packets > 0 {
        now += 1_000_000;
        while t.dequeue(now, &mut |_, _| {}).is_some() {}
    }
    // Emptied: the new limits.
    for k in 0..1000u32 {
        assert_eq!(t.enqueue(up, k, 100, now), Ok(None), "below the new limit");
        let _ = t.enqueue(down, k, 100, now);
    }
    assert_eq!(t.backlog(up).packets, 1000, "the new limit (1652)");
    assert_eq!(t.backlog(down).packets, 166, "the new limit (166)");
    // The same queue all along: it still counts the overflow drops it
    // made at the old limit.
    assert!(t.drops(up).overflow_packets >= 34, "{:?}", t.drops(up));
}
