//! Fuzzes every scheduler entry point of the C ABI with arbitrary call
//! sequences on every spec: statuses are known codes, per-flow order holds
//! (sequence numbers as packet pointers), the counters satisfy
//! enqueued = dequeued + reclaimed + queued after every call, and at the
//! end every accepted packet has come back exactly once.
#![no_main]

use fairway_ffi::*;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_void;
use std::ptr::null_mut;

const SPECS: &[&std::ffi::CStr] = &[
    c"fifo",
    c"drr",
    c"drr:quantum=300",
    c"qfq",
    c"qfq+:m=3",
    c"wf2q+",
    c"wf2q++:m=2",
];
const FLOWS: u32 = 6;
const PACKETS: u32 = 24;

#[derive(Arbitrary, Debug)]
enum Op {
    Add { flow: u8, weight: u32, max_len: u16 },
    Reconfigure { flow: u8, weight: u32, max_len: u16 },
    Remove { flow: u8, cap: u8 },
    Enqueue { flow: u8, len: u16 },
    Dequeue,
    Peek,
    Backlog { flow: u8 },
    Config { flow: u8 },
}

fuzz_target!(|input: (u8, Vec<Op>)| {
    let (spec, ops) = input;
    let spec = SPECS[spec as usize % SPECS.len()];
    let mut h = null_mut();
    let st = unsafe { fairway_sched_create(spec.as_ptr(), FLOWS, PACKETS, &mut h, null_mut(), 0) };
    assert_eq!(st, FairwayStatus::FairwayOk);
    let mut outstanding: BTreeSet<usize> = BTreeSet::new();
    let mut last_seq: BTreeMap<u32, usize> = BTreeMap::new();
    let mut seq = 0usize;
    let mut take = |p: &FairwayPacket, outstanding: &mut BTreeSet<usize>| {
        let s = p.data as usize;
        assert!(
            outstanding.remove(&s),
            "packet {s} returned twice or never queued"
        );
        let last = last_seq.entry(p.flow).or_insert(0);
        assert!(s > *last, "flow {} out of order", p.flow);
        *last = s;
    };
    for op in ops.iter().take(400) {
        let st = unsafe {
            match *op {
                Op::Add {
                    flow,
                    weight,
                    max_len,
                } => fairway_sched_add_flow(
                    h,
                    u32::from(flow) % (FLOWS + 1),
                    weight % 70_000,
                    u32::from(max_len),
                ),
                Op::Reconfigure {
                    flow,
                    weight,
                    max_len,
                } => fairway_sched_reconfigure_flow(
                    h,
                    u32::from(flow) % (FLOWS + 1),
                    weight % 70_000,
                    u32::from(max_len),
                ),
                Op::Remove { flow, cap } => {
                    let mut out = vec![
                        FairwayPacket {
                            data: null_mut(),
                            len: 0,
                            flow: 0
                        };
                        cap as usize % 32
                    ];
                    let mut n = 0usize;
                    let st = fairway_sched_remove_flow(
                        h,
                        u32::from(flow) % (FLOWS + 1),
                        out.as_mut_ptr(),
                        out.len(),
                        &mut n,
                    );
                    if st == FairwayStatus::FairwayOk {
                        for p in &out[..n] {
                            take(p, &mut outstanding);
                        }
                    }
                    st
                }
                Op::Enqueue { flow, len } => {
                    seq += 1;
                    let st = fairway_sched_enqueue(
                        h,
                        u32::from(flow) % (FLOWS + 1),
                        seq as *mut c_void,
                        usize::from(len),
                    );
                    if st == FairwayStatus::FairwayOk {
                        outstanding.insert(seq);
                    }
                    st
                }
                Op::Dequeue => {
                    let mut p = FairwayPacket {
                        data: null_mut(),
                        len: 0,
                        flow: 0,
                    };
                    let st = fairway_sched_dequeue(h, &mut p);
                    if st == FairwayStatus::FairwayOk {
                        take(&p, &mut outstanding);
                    } else {
                        assert_eq!(st, FairwayStatus::FairwayEmpty);
                        assert!(outstanding.is_empty());
                    }
                    st
                }
                Op::Peek => {
                    let mut p = FairwayPacket {
                        data: null_mut(),
                        len: 0,
                        flow: 0,
                    };
                    fairway_sched_peek(h, &mut p)
                }
                Op::Backlog { flow } => {
                    let mut b = FairwayBacklog::default();
                    fairway_sched_flow_backlog(h, u32::from(flow) % (FLOWS + 1), &mut b)
                }
                Op::Config { flow } => {
                    let mut c = FairwayFlowConfig::default();
                    fairway_sched_flow_config(h, u32::from(flow) % (FLOWS + 1), &mut c)
                }
            }
        };
        assert!(FairwayStatus::from_code(st as i32).is_some());
        assert_ne!(
            st,
            FairwayStatus::FairwayErrPanic,
            "{op:?}: panic inside the library"
        );
        let mut s = FairwaySchedStats::default();
        assert_eq!(
            unsafe { fairway_sched_stats(h, &mut s) },
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            s.enqueued_packets,
            s.dequeued_packets + s.reclaimed_packets + s.queued_packets
        );
        assert_eq!(s.queued_packets, outstanding.len() as u64);
    }
    // Drain: everything comes back once.
    let mut p = FairwayPacket {
        data: null_mut(),
        len: 0,
        flow: 0,
    };
    while unsafe { fairway_sched_dequeue(h, &mut p) } == FairwayStatus::FairwayOk {
        take(&p, &mut outstanding);
    }
    assert!(outstanding.is_empty(), "lost packets {outstanding:?}");
    assert_eq!(
        unsafe { fairway_sched_destroy(h) },
        FairwayStatus::FairwayOk
    );
});
