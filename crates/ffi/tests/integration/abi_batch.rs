//! The batch calls: `fairway_sched_dequeue_batch` gives the packets single
//! dequeues would, in the same order; `fairway_sched_enqueue_batch` queues
//! as single enqueues would and, at the first refused packet, stops and
//! says exactly how many it queued, so the caller loses none.

use fairway_ffi::*;
use std::ffi::{c_void, CStr, CString};
use std::ptr::{null, null_mut};

fn create(spec: &str) -> *mut FairwayScheduler {
    let spec = CString::new(spec).unwrap();
    let mut h = null_mut();
    let st = unsafe { fairway_sched_create(spec.as_ptr(), 8, 64, &mut h, null_mut(), 0) };
    assert_eq!(st, FairwayStatus::FairwayOk);
    for f in 0..4 {
        assert_eq!(
            unsafe { fairway_sched_add_flow(h, f, 1 + f, 1500) },
            FairwayStatus::FairwayOk
        );
    }
    h
}

fn packet(i: usize) -> FairwayPacket {
    FairwayPacket {
        data: (i + 1) as *mut c_void,
        len: 64 + (i * 97) % 1400,
        flow: (i % 4) as u32,
    }
}

fn message(h: *mut FairwayScheduler) -> String {
    unsafe { CStr::from_ptr(fairway_sched_last_error(h)) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn batches_give_what_single_calls_give_in_the_same_order() {
    for spec in ["drr", "qfq", "qfq+:m=4", "wf2q+"] {
        let (single, batch) = (create(spec), create(spec));
        let pkts: Vec<FairwayPacket> = (0..40).map(packet).collect();
        let mut done = usize::MAX;
        let st =
            unsafe { fairway_sched_enqueue_batch(batch, pkts.as_ptr(), pkts.len(), &mut done) };
        assert_eq!((st, done), (FairwayStatus::FairwayOk, 40), "{spec}");
        for p in &pkts {
            let st = unsafe { fairway_sched_enqueue(single, p.flow, p.data, p.len) };
            assert_eq!(st, FairwayStatus::FairwayOk);
        }
        let mut want = Vec::new();
        let mut p = packet(0);
        while unsafe { fairway_sched_dequeue(single, &mut p) } == FairwayStatus::FairwayOk {
            want.push(p);
        }
        let mut got = Vec::new();
        let mut buf = [packet(0); 7];
        loop {
            let mut n = usize::MAX;
            let st = unsafe { fairway_sched_dequeue_batch(batch, buf.as_mut_ptr(), 7, &mut n) };
            if st == FairwayStatus::FairwayEmpty {
                assert_eq!(n, 0);
                break;
            }
            assert_eq!(st, FairwayStatus::FairwayOk);
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, want, "{spec}");
        let mut s = std::mem::MaybeUninit::<FairwaySchedStats>::zeroed();
        unsafe { fairway_sched_stats(batch, s.as_mut_ptr()) };
        let s = unsafe { s.assume_init() };
        assert_eq!((s.enqueued_packets, s.dequeued_packets), (40, 40));
        unsafe {
            fairway_sched_destroy(single);
            fairway_sched_destroy(batch);
        }
    }
}

#[test]
fn an_enqueue_batch_stops_at_the_first_refused_packet_and_counts_exactly() {
    let h = create("drr");
    let mut pkts: Vec<FairwayPacket> = (0..5).map(packet).collect();
    pkts[2].flow = 7; // never added
    let mut done = usize::MAX;
    let st = unsafe { fairway_sched_enqueue_batch(h, pkts.as_ptr(), pkts.len(), &mut done) };
    assert_eq!((st, done), (FairwayStatus::FairwayErrUnknownFlow, 2));
    assert!(message(h).contains("flow 7"), "{}", message(h));
    let mut b = FairwayBacklog {
        packets: 0,
        bytes: 0,
    };
    unsafe { fairway_sched_backlog(h, &mut b) };
    assert_eq!(b.packets, 2, "the two before the refused one, no more");
    // The rest, resubmitted from where it stopped, goes in.
    let st = unsafe { fairway_sched_enqueue_batch(h, pkts[3..].as_ptr(), 2, &mut done) };
    assert_eq!((st, done), (FairwayStatus::FairwayOk, 2));
    unsafe { fairway_sched_destroy(h) };
}

#[test]
fn batch_calls_check_their_pointers() {
    let h = create("qfq");
    let mut n = 0usize;
    unsafe {
        assert_eq!(
            fairway_sched_enqueue_batch(h, null(), 3, &mut n),
            FairwayStatus::FairwayErrNullPointer
        );
        assert_eq!(
            fairway_sched_enqueue_batch(h, null(), 0, &mut n),
            FairwayStatus::FairwayOk
        );
        let p = [packet(0)];
        assert_eq!(
            fairway_sched_enqueue_batch(h, p.as_ptr(), 1, null_mut()),
            FairwayStatus::FairwayErrNullPointer
        );
        assert_eq!(
            fairway_sched_dequeue_batch(h, null_mut(), 4, &mut n),
            FairwayStatus::FairwayErrNullPointer
        );
        let mut out = [packet(0); 2];
        assert_eq!(
            fairway_sched_dequeue_batch(h, out.as_mut_ptr(), 2, null_mut()),
            FairwayStatus::FairwayErrNullPointer
        );
        // Nothing was queued by the refused calls.
        assert_eq!(
            fairway_sched_dequeue_batch(h, out.as_mut_ptr(), 2, &mut n),
            FairwayStatus::FairwayEmpty
        );
        assert_eq!(n, 0);
        assert_eq!(
            fairway_sched_dequeue_batch(null_mut(), out.as_mut_ptr(), 2, &mut n),
            FairwayStatus::FairwayErrInvalidHandle
        );
        fairway_sched_destroy(h);
    }
}
