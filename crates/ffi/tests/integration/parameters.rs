//! One test per parameter that reaches the library through the C ABI
//! (the table in `docs/parameters.md`): the extreme accepted values work
//! exactly as given, and the first value outside is rejected with a status
//! and a message naming the parameter and its range — never clamped.

use fairway_ffi::*;
use std::ffi::{c_void, CStr, CString};
use std::ptr::null_mut;

fn create(
    spec: &str,
    flows: u32,
    packets: u32,
) -> Result<*mut FairwayScheduler, (FairwayStatus, String)> {
    let spec = CString::new(spec).unwrap();
    let mut h = null_mut();
    let mut buf = [0 as std::ffi::c_char; 256];
    let st = unsafe {
        fairway_sched_create(
            spec.as_ptr(),
            flows,
            packets,
            &mut h,
            buf.as_mut_ptr(),
            buf.len(),
        )
    };
    if st == FairwayStatus::FairwayOk {
        Ok(h)
    } else {
        Err((
            st,
            unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_str()
                .unwrap()
                .to_string(),
        ))
    }
}

fn destroy(h: *mut FairwayScheduler) {
    assert_eq!(
        unsafe { fairway_sched_destroy(h) },
        FairwayStatus::FairwayOk
    );
}

fn last_error(h: *mut FairwayScheduler) -> String {
    unsafe { CStr::from_ptr(fairway_sched_last_error(h)) }
        .to_str()
        .unwrap()
        .to_string()
}

fn rejected(
    r: Result<*mut FairwayScheduler, (FairwayStatus, String)>,
    status: FairwayStatus,
    text: &str,
) {
    match r {
        Ok(h) => {
            destroy(h);
            panic!("accepted, expected '{text}'");
        }
        Err((st, msg)) => {
            assert_eq!(st, status, "{msg}");
            assert!(msg.contains(text), "message '{msg}' lacks '{text}'");
        }
    }
}

#[test]
fn spec_name() {
    for kind in fairway_core::SchedKind::ALL {
        destroy(create(kind.name(), 1, 1).unwrap());
    }
    rejected(
        create("wfq", 1, 1),
        FairwayStatus::FairwayErrInvalidArgument,
        "unknown scheduler 'wfq'",
    );
}

#[test]
fn spec_m_of_qfq_plus_and_wf2q_plus_plus() {
    let takes_m: Vec<&str> = fairway_core::SchedKind::ALL
        .iter()
        .filter(|k| k.info().params.iter().any(|p| p.key == "m"))
        .map(|k| k.name())
        .collect();
    assert!(takes_m.contains(&"qfq+") && takes_m.contains(&"wf2q++"));
    for name in takes_m {
        destroy(create(&format!("{name}:m=1"), 4, 4).unwrap());
        destroy(create(&format!("{name}:m=64"), 4, 4).unwrap());
        rejected(
            create(&format!("{name}:m=0"), 4, 4),
            FairwayStatus::FairwayErrOutOfRange,
            &format!("m=0 of {name} is outside 1..=64"),
        );
        rejected(
            create(&format!("{name}:m=65"), 4, 4),
            FairwayStatus::FairwayErrOutOfRange,
            &format!("m=65 of {name} is outside 1..=64"),
        );
        rejected(
            create(&format!("{name}:m=18446744073709551615"), 4, 4),
            FairwayStatus::FairwayErrOutOfRange,
            "is outside 1..=64",
        );
    }
}

#[test]
fn spec_quantum_of_drr() {
    destroy(create("drr:quantum=1", 4, 4).unwrap());
    destroy(create("drr:quantum=4294967295", 4, 4).unwrap());
    rejected(
        create("drr:quantum=0", 4, 4),
        FairwayStatus::FairwayErrOutOfRange,
        "quantum=0 of drr is outside 1..=4294967295",
    );
    rejected(
        create("drr:quantum=4294967296", 4, 4),
        FairwayStatus::FairwayErrOutOfRange,
        "quantum=4294967296 of drr is outside 1..=4294967295",
    );
}

#[test]
fn max_flows() {
    destroy(create("fifo", 1, 1).unwrap());
    destroy(create("fifo", FAIRWAY_MAX_FLOWS, 1).unwrap());
    rejected(
        create("fifo", 0, 1),
        FairwayStatus::FairwayErrOutOfRange,
        "max_flows 0 out of range 1..=1048576",
    );
    rejected(
        create("fifo", FAIRWAY_MAX_FLOWS + 1, 1),
        FairwayStatus::FairwayErrOutOfRange,
        "max_flows 1048577 out of range",
    );
}

#[test]
fn max_packets() {
    let h = create("fifo", 1, 1).unwrap();
    // Exactly one packet fits, the second is an overload drop.
    unsafe {
        assert_eq!(
            fairway_sched_add_flow(h, 0, 1, 100),
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            fairway_sched_enqueue(h, 0, null_mut(), 1),
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            fairway_sched_enqueue(h, 0, null_mut(), 1),
            FairwayStatus::FairwayErrFull
        );
    }
    assert!(
        last_error(h).contains("scheduler full (1 packets queued)"),
        "{}",
        last_error(h)
    );
    destroy(h);
    rejected(
        create("fifo", 1, 0),
        FairwayStatus::FairwayErrOutOfRange,
        "max_packets 0 out of range 1..=16777216",
    );
    rejected(
        create("fifo", 1, FAIRWAY_MAX_PACKETS + 1),
        FairwayStatus::FairwayErrOutOfRange,
        "max_packets 16777217 out of range",
    );
}

#[test]
fn flow_id() {
    let h = create("qfq", 3, 4).unwrap();
    unsafe {
        assert_eq!(
            fairway_sched_add_flow(h, 0, 1, 100),
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            fairway_sched_add_flow(h, 2, 1, 100),
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            fairway_sched_add_flow(h, 3, 1, 100),
            FairwayStatus::FairwayErrOutOfRange
        );
        assert!(
            last_error(h).contains("flow id 3 out of range (scheduler holds 3 flows)"),
            "{}",
            last_error(h)
        );
        assert_eq!(
            fairway_sched_add_flow(h, u32::MAX, 1, 100),
            FairwayStatus::FairwayErrOutOfRange
        );
        assert!(last_error(h).contains("reserved"), "{}", last_error(h));
        assert_eq!(
            fairway_sched_enqueue(h, 1, null_mut(), 10),
            FairwayStatus::FairwayErrUnknownFlow
        );
        assert!(last_error(h).contains("unknown flow 1"));
    }
    destroy(h);
}

#[test]
fn flow_weight() {
    let weighted = fairway_core::SchedKind::ALL
        .iter()
        .filter(|k| k.info().shares_by_weight);
    for spec in weighted.map(|k| k.name()) {
        let h = create(spec, 4, 4).unwrap();
        unsafe {
            assert_eq!(
                fairway_sched_add_flow(h, 0, 1, 100),
                FairwayStatus::FairwayOk
            );
            assert_eq!(
                fairway_sched_add_flow(h, 1, 65536, 100),
                FairwayStatus::FairwayOk
            );
            let mut c = FairwayFlowConfig::default();
            assert_eq!(
                fairway_sched_flow_config(h, 1, &mut c),
                FairwayStatus::FairwayOk
            );
            assert_eq!(c.weight, 65536, "{spec}: used as given");
            assert_eq!(
                fairway_sched_add_flow(h, 2, 0, 100),
                FairwayStatus::FairwayErrOutOfRange
            );
            assert!(
                last_error(h).contains("weight 0 out of range 1..=65536"),
                "{spec}: {}",
                last_error(h)
            );
            assert_eq!(
                fairway_sched_add_flow(h, 2, 65537, 100),
                FairwayStatus::FairwayErrOutOfRange
            );
            assert!(
                last_error(h).contains("weight 65537 out of range 1..=65536"),
                "{spec}: {}",
                last_error(h)
            );
            assert_eq!(
                fairway_sched_reconfigure_flow(h, 0, 65537, 100),
                FairwayStatus::FairwayErrOutOfRange
            );
            assert_eq!(
                fairway_sched_flow_config(h, 0, &mut c),
                FairwayStatus::FairwayOk
            );
            assert_eq!(c.weight, 1, "{spec}: a failed reconfigure changes nothing");
        }
        destroy(h);
    }
}

#[test]
fn flow_max_len() {
    for spec in fairway_core::SchedKind::ALL.iter().map(|k| k.name()) {
        let h = create(spec, 4, 4).unwrap();
        unsafe {
            assert_eq!(fairway_sched_add_flow(h, 0, 1, 1), FairwayStatus::FairwayOk);
            assert_eq!(
                fairway_sched_add_flow(h, 1, 1, 65536),
                FairwayStatus::FairwayOk
            );
            assert_eq!(
                fairway_sched_add_flow(h, 2, 1, 0),
                FairwayStatus::FairwayErrOutOfRange
            );
            assert!(
                last_error(h).contains("max packet length 0 out of range 1..=65536"),
                "{spec}: {}",
                last_error(h)
            );
            assert_eq!(
                fairway_sched_add_flow(h, 2, 1, 65537),
                FairwayStatus::FairwayErrOutOfRange
            );
            assert!(
                last_error(h).contains("max packet length 65537 out of range 1..=65536"),
                "{spec}: {}",
                last_error(h)
            );
        }
        destroy(h);
    }
}

#[test]
fn weight_sum() {
    // 256 flows of weight 65536 reach 2^24 exactly; one more unit is refused.
    let h = create("wf2q+", 257, 4).unwrap();
    unsafe {
        for f in 0..256 {
            assert_eq!(
                fairway_sched_add_flow(h, f, 65536, 100),
                FairwayStatus::FairwayOk
            );
        }
        assert_eq!(
            fairway_sched_add_flow(h, 256, 1, 100),
            FairwayStatus::FairwayErrOutOfRange
        );
        assert!(
            last_error(h).contains("sum of weights 16777217 would exceed the supported 16777216"),
            "{}",
            last_error(h)
        );
    }
    destroy(h);
}

#[test]
fn packet_len() {
    let h = create("drr", 1, 4).unwrap();
    let p = 0x10 as *mut c_void;
    unsafe {
        assert_eq!(
            fairway_sched_add_flow(h, 0, 1, 65536),
            FairwayStatus::FairwayOk
        );
        assert_eq!(fairway_sched_enqueue(h, 0, p, 1), FairwayStatus::FairwayOk);
        assert_eq!(
            fairway_sched_enqueue(h, 0, p, 65536),
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            fairway_sched_enqueue(h, 0, p, 0),
            FairwayStatus::FairwayErrEmptyPacket
        );
        assert_eq!(
            fairway_sched_enqueue(h, 0, p, 65537),
            FairwayStatus::FairwayErrPacketTooLong
        );
        assert!(last_error(h).contains("packet of 65537 bytes exceeds the flow's max of 65536"));
        // 2^32 + 1 would be 1 if truncated: refused instead.
        assert_eq!(
            fairway_sched_enqueue(h, 0, p, (1usize << 32) + 1),
            FairwayStatus::FairwayErrPacketTooLong
        );
        assert!(
            last_error(h).contains("4294967297 out of range 1..=4294967295"),
            "{}",
            last_error(h)
        );
        let mut out = FairwayPacket {
            data: null_mut(),
            len: 0,
            flow: 0,
        };
        assert_eq!(fairway_sched_dequeue(h, &mut out), FairwayStatus::FairwayOk);
        assert_eq!(out.len, 1);
        assert_eq!(fairway_sched_dequeue(h, &mut out), FairwayStatus::FairwayOk);
        assert_eq!(out.len, 65536);
    }
    destroy(h);
}

fn pq(half: u32, cap: u32) -> Result<*mut FairwayPq, (FairwayStatus, String)> {
    let mut q = null_mut();
    let mut buf = [0 as std::ffi::c_char; 200];
    let st = unsafe { fairway_pq_create(half, cap, &mut q, buf.as_mut_ptr(), buf.len()) };
    if st == FairwayStatus::FairwayOk {
        Ok(q)
    } else {
        Err((
            st,
            unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_str()
                .unwrap()
                .to_string(),
        ))
    }
}

fn pq_rejected(r: Result<*mut FairwayPq, (FairwayStatus, String)>, text: &str) {
    let (st, msg) = r.map(|_| ()).unwrap_err();
    assert_eq!(st, FairwayStatus::FairwayErrOutOfRange);
    assert!(msg.contains(text), "{msg}");
}

#[test]
fn pq_buckets_per_half() {
    for half in [1, FAIRWAY_PQ_MAX_BUCKETS_PER_HALF] {
        let q = pq(half, 1).unwrap();
        let mut s = FairwayPqStats::default();
        assert_eq!(
            unsafe { fairway_pq_stats(q, &mut s) },
            FairwayStatus::FairwayOk
        );
        assert_eq!(s.buckets_per_half, half);
        assert_eq!(unsafe { fairway_pq_destroy(q) }, FairwayStatus::FairwayOk);
    }
    pq_rejected(pq(0, 1), "buckets_per_half 0 out of range 1..=1048576");
    pq_rejected(
        pq(FAIRWAY_PQ_MAX_BUCKETS_PER_HALF + 1, 1),
        "buckets_per_half 1048577 out of range",
    );
}

#[test]
fn pq_capacity_and_element() {
    let q = pq(4, FAIRWAY_PQ_MAX_CAPACITY).unwrap();
    unsafe {
        assert_eq!(
            fairway_pq_insert(q, FAIRWAY_PQ_MAX_CAPACITY - 1, 0),
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            fairway_pq_insert(q, FAIRWAY_PQ_MAX_CAPACITY, 0),
            FairwayStatus::FairwayErrOutOfRange
        );
        let msg = CStr::from_ptr(fairway_pq_last_error(q)).to_str().unwrap();
        assert!(
            msg.contains("handle 16777216 is out of range (capacity 16777216)"),
            "{msg}"
        );
        assert_eq!(fairway_pq_destroy(q), FairwayStatus::FairwayOk);
    }
    pq_rejected(pq(4, 0), "capacity 0 out of range 1..=16777216");
    pq_rejected(
        pq(4, FAIRWAY_PQ_MAX_CAPACITY + 1),
        "capacity 16777217 out of range",
    );
}

#[test]
fn pq_rank() {
    // Window of 2 x 4 ranks; any u64 rank is accepted, and one served at
    // the window's edge is reported, not silent.
    let q = pq(4, 4).unwrap();
    unsafe {
        assert_eq!(fairway_pq_insert(q, 0, 0), FairwayStatus::FairwayOk);
        assert_eq!(fairway_pq_insert(q, 1, 7), FairwayStatus::FairwayOk);
        assert_eq!(fairway_pq_insert(q, 2, 8), FairwayStatus::FairwayClamped);
        assert_eq!(
            fairway_pq_insert(q, 3, u64::MAX),
            FairwayStatus::FairwayClamped
        );
        let mut s = FairwayPqStats::default();
        assert_eq!(fairway_pq_stats(q, &mut s), FairwayStatus::FairwayOk);
        assert_eq!((s.clamped_low, s.clamped_high), (0, 2));
        // Each comes back with the rank it was given.
        let (mut e, mut r) = (0u32, 0u64);
        let mut got = Vec::new();
        while fairway_pq_extract_min(q, &mut e, &mut r) == FairwayStatus::FairwayOk {
            got.push((e, r));
        }
        assert_eq!(got, [(0, 0), (1, 7), (2, 8), (3, u64::MAX)]);
        assert_eq!(fairway_pq_destroy(q), FairwayStatus::FairwayOk);
    }
}
