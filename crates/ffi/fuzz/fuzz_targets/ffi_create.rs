//! Fuzzes `fairway_sched_create` (and so `SchedSpec::parse` and the
//! registry's build) and `fairway_pq_create` with arbitrary spec bytes and
//! sizes: every call returns OK with a handle or an error with a message;
//! nothing panics, aborts or leaks a half-built handle.
#![no_main]

use fairway_ffi::*;
use libfuzzer_sys::fuzz_target;
use std::ffi::{CStr, CString};
use std::ptr::null_mut;

fuzz_target!(|input: (Vec<u8>, u16, u16, u16, u16)| {
    let (spec, flows, packets, half, cap) = input;
    // Sizes stay small so the fuzzer explores specs, not allocations; the
    // range checks at the limits are unit-tested.
    let spec = CString::new(spec.into_iter().filter(|&b| b != 0).collect::<Vec<u8>>()).unwrap();
    let mut h = null_mut();
    let mut err = [0 as std::ffi::c_char; 128];
    let st = unsafe {
        fairway_sched_create(
            spec.as_ptr(),
            u32::from(flows % 512),
            u32::from(packets % 2048),
            &mut h,
            err.as_mut_ptr(),
            err.len(),
        )
    };
    if st == FairwayStatus::FairwayOk {
        assert!(!h.is_null());
        let mut name = std::ptr::null();
        assert_eq!(
            unsafe { fairway_sched_name(h, &mut name) },
            FairwayStatus::FairwayOk
        );
        assert_eq!(
            unsafe { fairway_sched_destroy(h) },
            FairwayStatus::FairwayOk
        );
    } else {
        assert!(h.is_null());
        assert!((st as i32) < 0);
        let msg = unsafe { CStr::from_ptr(err.as_ptr()) };
        assert!(!msg.to_bytes().is_empty());
    }
    let mut q = null_mut();
    let st = unsafe { fairway_pq_create(u32::from(half), u32::from(cap), &mut q, null_mut(), 0) };
    if st == FairwayStatus::FairwayOk {
        assert_eq!(unsafe { fairway_pq_destroy(q) }, FairwayStatus::FairwayOk);
    } else {
        assert!(q.is_null());
    }
});
