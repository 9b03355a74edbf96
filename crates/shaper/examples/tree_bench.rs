//! The shaping tree's cost per frame, without frame I/O: one direction's
//! tree of 10 nodes × 100 circuits (every circuit with a min, every node
//! with a min), every circuit overloaded, a simulated clock in 10 µs
//! steps, the link at 10 Gbit/s of 1500-byte frames.
//!
//! ```text
//! cargo run --release -p fairway-shaper --example tree_bench -- [SIM_SECONDS] [POLICY]
//! ```
//!
//! Prints frames sent and the wall-clock ns per frame (enqueue and
//! dequeue together). POLICY (default: the plan's default) is every
//! node's scheduler.

use fairway_shaper::datapath::tree::Tree;
use fairway_shaper::load::{load, Source};
use fairway_shaper::plan::Dir;
use std::fmt::Write as _;
use std::time::Instant;

const NODES: u32 = 10;
const PER_NODE: u32 = 100;
const FRAME: u32 = 1500;

fn plan_text(policy: Option<&str>) -> String {
    let mut t = String::from(
        "[interfaces]\ninternet = \"a\"\nsubscribers = \"b\"\nrate = { download = \"10gbit\", upload = \"10gbit\" }\n\n",
    );
    for n in 0..NODES {
        let policy = policy.map_or(String::new(), |p| format!("policy = \"{p}\"\n"));
        let _ = write!(
            t,
            "[[node]]\nname = \"n{n}\"\nrate = {{ download = \"2gbit\", upload = \"2gbit\" }}\nreservation = {{ download = \"200mbit\", upload = \"200mbit\" }}\n{policy}\n"
        );
        for c in 0..PER_NODE {
            let _ = write!(
                t,
                "[[circuit]]\nid = \"c{n}_{c}\"\nparent = \"n{n}\"\nrate = {{ download = \"100mbit\", upload = \"100mbit\" }}\nreservation = {{ download = \"{}mbit\", upload = \"1mbit\" }}\n\n",
                1 + c % 2
            );
        }
    }
    t
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2);
    let policy = args.next();
    let path = std::env::temp_dir().join(format!("fairway-tree-bench-{}.toml", std::process::id()));
    std::fs::write(&path, plan_text(policy.as_deref())).expect("the plan file");
    let checked = match load(&Source::ShaperFile(path.clone())) {
        Ok(c) => c,
        Err(e) => panic!("plan refused: {}", e[0]),
    };
    let _ = std::fs::remove_file(&path);
    let mut tree: Tree<u32> = Tree::new(&checked, Dir::Download, 0).expect("the tree");
    let leaves = tree.leaves() as u32;
    let step = 10_000u64;
    let mut now = 0u64;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut sent = 0u64;
    let start = Instant::now();
    while now < secs * 1_000_000_000 {
        now += step;
        // 10 Gbit/s for 10 µs is ~8 frames; offer 16, over random circuits
        // kept at most 32 frames deep.
        for _ in 0..16 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let leaf = ((seed >> 33) % u64::from(leaves)) as u32;
            if tree.backlog(leaf).packets < 32 {
                let _ = tree.enqueue(leaf, (seed >> 13) as u32, FRAME, now);
            }
        }
        while tree.dequeue(now, &mut |_, _| {}).is_some() {
            sent += 1;
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / sent as f64;
    println!(
        "policy {}: {sent} frames in {secs} simulated s, {ns:.1} ns per frame",
        policy.as_deref().unwrap_or("(default)")
    );
}
