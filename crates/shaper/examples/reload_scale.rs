//! A reload at 10,000 circuits, timed: the change of the shaper's
//! benchmark (1000 rate changes, 500 circuits added, 500 removed, 100
//! moved to another node) applied to an engine with 1000 busy circuits
//! and frames queued, and the cost of picking the next frame among them.
//!
//! `cargo run --release -p fairway-shaper --example reload_scale`
//!
//! Prints the check, the preparation (off the loop in the shaper), the
//! pause (the swap, during which the loop does not serve) and the time
//! per frame sent. Times are of this machine and run, not asserted.

mod common;

use common::{addr, changed, cpu_ns, frame, plan, CIRCUITS};
use fairway_shaper::datapath::engine::Engine;
use fairway_shaper::datapath::reload::{prepare, show_ns};
use fairway_shaper::plan::Dir;
use fairway_shaper::validate::check;
use std::time::Instant;

fn main() {
    let p = plan();
    let running = check(p.clone()).unwrap_or_else(|e| panic!("{}", e[0]));
    let mut e = Engine::new(&running, 0).expect("the engine");
    // A tenth of the circuits busy, 16 frames each: 13 go at once (the
    // max bucket's burst, 10 ms at 10 Mbit/s, and a debt), 3 stay queued.
    let busy: Vec<u32> = (0..CIRCUITS).step_by(10).collect();
    for &k in &busy {
        for s in 0..16 {
            let f = frame(addr(k), s);
            e.receive(Dir::Download, 0, |b| {
                b[..f.len()].copy_from_slice(&f);
                Some(f.len())
            });
        }
    }
    // Each pick is among all busy circuits.
    let (t, c) = (Instant::now(), cpu_ns());
    let mut sent = 0u32;
    while let Some(out) = e.next(0) {
        e.sent(out, true);
        sent += 1;
    }
    let per_frame = t.elapsed().as_nanos() / u128::from(sent.max(1));
    let cpu_per_frame = (cpu_ns() - c) / u64::from(sent.max(1));
    println!(
        "{} busy circuits: {sent} frames picked at {per_frame} ns each ({cpu_per_frame} ns of CPU)",
        busy.len()
    );
    let queued = e.report().total().1.packets;

    let (t0, c0) = (Instant::now(), cpu_ns());
    let next = check(changed(&p)).unwrap_or_else(|e| panic!("{}", e[0]));
    let checked_ns = t0.elapsed().as_nanos() as u64;
    let t1 = Instant::now();
    let prepared = prepare(e.plan(), next, 1).expect("prepared");
    let prepared_ns = t1.elapsed().as_nanos() as u64;
    let (t2, c2) = (Instant::now(), cpu_ns());
    let applied = e.apply(prepared, 1).expect("applied");
    let pause_ns = t2.elapsed().as_nanos() as u64;
    let pause_cpu_ns = cpu_ns() - c2;
    let total_ns = t0.elapsed().as_nanos() as u64;
    let total_cpu_ns = cpu_ns() - c0;
    println!(
        "{CIRCUITS} circuits, {queued} frames queued: {}",
        applied.diff
    );
    println!(
        "check {}, prepare {}, pause {} ({} of CPU); applied in {} ({} of CPU); {} queued frames of removed circuits dropped",
        show_ns(checked_ns),
        show_ns(prepared_ns),
        show_ns(pause_ns),
        show_ns(pause_cpu_ns),
        show_ns(total_ns),
        show_ns(total_cpu_ns),
        applied.dropped.packets
    );
    let t3 = Instant::now();
    drop(applied.retired);
    println!(
        "old state freed in {}",
        show_ns(t3.elapsed().as_nanos() as u64)
    );
}
