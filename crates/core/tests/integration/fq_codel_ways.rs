//! FQ-CoDel's set-associative classification (`ways > 1`, see the module
//! doc of `fairway_core::aqm::fq_codel`) on hand-made cases: a sparse flow
//! whose home bucket is a bulk flow's takes another bucket of the set and
//! is served ahead of the bulk flow's queue (with `ways = 1` it waits
//! behind it); a ninth flow in a full set of eight collides, is counted,
//! and does not displace the home bucket's owner.

use crate::common::Pkt;
use fairway_core::aqm::{FqCodel, FqCodelConfig};

/// Home bucket 4 of 64 for both (`hash · 64 / 2^32 = hash >> 26`).
const BULK: u32 = 0x1000_0000;
const SPARSE: u32 = 0x1000_0001;

fn fq(ways: u32) -> FqCodel<Pkt> {
    FqCodel::new(FqCodelConfig {
        buckets: 64,
        ways,
        ..FqCodelConfig::RFC8290
    })
    .expect("in range")
}

/// 20 bulk packets, two of them sent (the bulk bucket's deficit is spent),
/// then one sparse packet: how many packets are sent before it.
fn sent_before_sparse(q: &mut FqCodel<Pkt>) -> usize {
    for id in 0..20 {
        assert_eq!(q.enqueue(BULK, Pkt { id, len: 1500 }, 0), Ok(None));
    }
    assert_eq!(q.dequeue(0).map(|p| p.id), Some(0));
    assert_eq!(q.dequeue(0).map(|p| p.id), Some(1));
    let sparse = Pkt { id: 100, len: 100 };
    assert_eq!(q.enqueue(SPARSE, sparse, 0), Ok(None));
    let mut before = 0;
    while let Some(p) = q.dequeue(0) {
        if p == sparse {
            return before;
        }
        before += 1;
    }
    panic!("the sparse packet was never sent");
}

#[test]
fn a_sparse_flow_sharing_the_bulk_flows_home_gets_its_own_bucket_and_goes_first() {
    let mut q = fq(8);
    assert_eq!(q.bucket_of(BULK), q.bucket_of(SPARSE));
    assert_eq!(sent_before_sparse(&mut fq(8)), 0);
    // Where it went: the bucket after home in the set, not the bulk one.
    for id in 0..3 {
        assert_eq!(q.enqueue(BULK, Pkt { id, len: 1500 }, 0), Ok(None));
    }
    assert_eq!(q.bucket_for(SPARSE), (5, false));
    assert_eq!(q.enqueue(SPARSE, Pkt { id: 9, len: 100 }, 0), Ok(None));
    assert_eq!(q.bucket_backlog(4).map(|b| b.packets), Some(3));
    assert_eq!(q.bucket_backlog(5).map(|b| b.packets), Some(1));
    assert_eq!(q.collisions(), 0);
    // Plain hashing: the sparse packet waits behind the 18 bulk packets.
    let mut plain = fq(1);
    assert_eq!(sent_before_sparse(&mut plain), 18);
    assert_eq!(plain.collisions(), 1);
}

#[test]
fn a_ninth_flow_in_a_full_set_collides_at_home_and_the_owner_keeps_its_bucket() {
    let mut q = fq(8);
    // Nine flows with home 4: the first eight take the set's buckets from
    // home, wrapping around within the set (buckets 0..8).
    for i in 0..9u32 {
        assert_eq!(q.enqueue(BULK + i, Pkt { id: i, len: 100 }, 0), Ok(None));
    }
    for b in 0..8 {
        let want = if b == 4 { 2 } else { 1 };
        assert_eq!(
            q.bucket_backlog(b).map(|k| k.packets),
            Some(want),
            "bucket {b}"
        );
    }
    assert_eq!(q.bucket_backlog(8).map(|k| k.packets), Some(0));
    assert_eq!(q.collisions(), 1);
    // The owner of bucket 4 keeps it; the ninth flow collides again.
    assert_eq!(q.bucket_for(BULK), (4, false));
    assert_eq!(q.bucket_for(BULK + 3), (7, false));
    assert_eq!(q.bucket_for(BULK + 4), (0, false));
    assert_eq!(q.bucket_for(BULK + 8), (4, true));
    assert_eq!(q.enqueue(BULK + 8, Pkt { id: 10, len: 100 }, 0), Ok(None));
    assert_eq!(q.collisions(), 2);
    // Once everything is sent, the ninth flow finds its home free and
    // takes it; the former owner takes the next free bucket.
    while q.dequeue(0).is_some() {}
    assert_eq!(q.enqueue(BULK + 8, Pkt { id: 11, len: 100 }, 0), Ok(None));
    assert_eq!(q.bucket_for(BULK + 8), (4, false));
    assert_eq!(q.bucket_for(BULK), (5, false));
    assert_eq!(q.collisions(), 2);
}
