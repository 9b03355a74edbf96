//! The kernel-BFQ comparison runs end to end where it can (root, fio,
//! losetup, a kernel with bfq); elsewhere it prints why it skipped. Share
//! accuracy on real storage depends on threads waking within T_wait, which
//! a loaded CI machine does not guarantee: that assertion is behind
//! `--ignored` (`cargo test -p fairway-lab --test integration kernel_bfq:: -- --ignored`).

use fairway_lab::disk::kernel_bfq::{compare, Backend, Comparison, Skip};

fn run(seconds: u64, backend: Backend) -> Option<Comparison> {
    match compare(seconds, backend) {
        Ok(c) => Some(c),
        Err(Skip::Failed(e)) => panic!("{e}"),
        Err(skip) => {
            eprintln!("kernel BFQ comparison skipped: {skip}");
            None
        }
    }
}

#[test]
#[ignore = "slow tier: needs root, fio and a loop device"]
fn the_comparison_runs_on_a_loop_device_or_skips_visibly() {
    if let Some(c) = run(1, Backend::Pread) {
        for side in [&c.kernel, &c.fairway] {
            assert_eq!(side.mb_s.len(), 2, "{c:?}");
            assert!(side.mb_s.iter().all(|&x| x > 0.0), "{c:?}");
            assert!((side.share.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }
    }
}

#[test]
#[ignore = "real-time: needs an unloaded machine"]
fn fairway_bfq_shares_follow_the_weights_on_a_loop_device() {
    for backend in [Backend::Pread, Backend::IoUring { in_flight: 1 }] {
        if let Some(c) = run(5, backend) {
            for (s, i) in c.fairway.share.iter().zip(&c.ideal) {
                assert!((s / i - 1.0).abs() < 0.05, "{backend}: {c:?}");
            }
        }
    }
}
