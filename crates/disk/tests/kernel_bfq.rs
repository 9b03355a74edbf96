//! The kernel-BFQ comparison runs end to end where it can (root, fio,
//! losetup, a kernel with bfq) and fairway's shares follow the weights on
//! real storage; elsewhere it prints why it skipped.

use fairway_disk::kernel_bfq::{compare, Skip};

#[test]
fn fairway_bfq_shares_follow_the_weights_on_a_loop_device() {
    match compare(2) {
        Ok(c) => {
            for (s, i) in c.fairway.share.iter().zip(&c.ideal) {
                assert!((s / i - 1.0).abs() < 0.05, "{c:?}");
            }
        }
        Err(Skip::Failed(e)) => panic!("{e}"),
        Err(skip) => eprintln!("kernel BFQ comparison {skip}"),
    }
}
