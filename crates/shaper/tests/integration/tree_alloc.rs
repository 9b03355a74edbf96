//! The shaping tree allocates nothing per frame: after a warm-up, a
//! second of overloaded traffic through a tree of nodes with mins and
//! every registry scheduler (enqueue, dequeue, guarantees, stale tokens,
//! timers) makes no allocation on this thread. Counted by this test
//! binary's global allocator, per thread, so other tests running at the
//! same time are not counted.

use crate::support::shaper;
use fairway_shaper::datapath::tree::Tree;
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
    let mut t = String::from(
        "[interfaces]\ninternet = \"a\"\nsubscribers = \"b\"\nrate = { download = \"1gbit\", upload = \"1gbit\" }\n\n",
    );
    for (n, spec) in SPECS.iter().enumerate() {
        let _ = write!(
            t,
            "[[node]]\nname = \"n{n}\"\nrate = {{ download = \"300mbit\", upload = \"300mbit\" }}\nreservation = {{ download = \"20mbit\", upload = \"20mbit\" }}\npolicy = \"{spec}\"\n\n"
        );
        for c in 0..6 {
            let _ = write!(
                t,
                "[[circuit]]\nid = \"c{n}_{c}\"\nparent = \"n{n}\"\nrate = {{ download = \"{}mbit\", upload = \"50mbit\" }}\nreservation = {{ download = \"1mbit\", upload = \"1mbit\" }}\nweight = {}\n\n",
                20 + 20 * c,
                1 + c
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
