//! Groups, reservations and limits through the I/O engine's C ABI: each
//! bad value comes back as a status and a one-line message naming it,
//! never a panic; good ones register.

use fairway_ffi::*;
use std::ffi::{c_char, CStr, CString};
use std::ptr::{null, null_mut};

fn create(spec: &str) -> Option<*mut FairwayIoEngine> {
    let spec = CString::new(spec).unwrap();
    let mut e = null_mut();
    let mut err = [0 as c_char; 256];
    let st = unsafe {
        fairway_io_create(
            spec.as_ptr(),
            1,
            64,
            64,
            &mut e,
            err.as_mut_ptr(),
            err.len(),
        )
    };
    if st == FairwayStatus::FairwayErrUnavailable {
        eprintln!("io_uring unavailable: test skipped");
        return None;
    }
    assert_eq!(st, FairwayStatus::FairwayOk);
    Some(e)
}

fn last_error(e: *mut FairwayIoEngine) -> String {
    let p = unsafe { fairway_io_last_error(e) };
    unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
}

fn refused(e: *mut FairwayIoEngine, st: FairwayStatus, want: FairwayStatus, text: &str) {
    let msg = last_error(e);
    assert_eq!(st, want, "{msg}");
    assert!(msg.contains(text), "message '{msg}' lacks '{text}'");
    assert!(!msg.contains('\n'), "not one line: {msg}");
}

fn options(weight: u32, group: u64) -> FairwayIoClientOptions {
    FairwayIoClientOptions {
        weight,
        group,
        ..Default::default()
    }
}

#[test]
fn groups_reservations_and_limits_are_checked_and_registered() {
    let Some(e) = create("bfq") else { return };
    use FairwayStatus as S;
    let (mut g1, mut g2, mut c) = (0, 0, 0);
    assert_eq!(
        unsafe { fairway_io_add_group(e, 2, 0, &mut g1) },
        S::FairwayOk
    );
    assert_eq!(
        unsafe { fairway_io_add_group(e, 1, g1, &mut g2) },
        S::FairwayOk
    );
    let r = unsafe { fairway_io_add_group(e, 0, 0, &mut c) };
    refused(e, r, S::FairwayErrOutOfRange, "group weight = 0");
    let r = unsafe { fairway_io_add_group(e, 1, 999, &mut c) };
    refused(
        e,
        r,
        S::FairwayErrInvalidArgument,
        "group 999 is not declared",
    );
    let r = unsafe { fairway_io_add_group(e, 1, 0, null_mut()) };
    refused(e, r, S::FairwayErrNullPointer, "add_group: group is null");
    let r = unsafe { fairway_io_remove_group(e, 0) };
    refused(e, r, S::FairwayErrInvalidArgument, "root group");

    let ok = options(3, g2);
    assert_eq!(
        unsafe { fairway_io_add_client_ex(e, &ok, &mut c) },
        S::FairwayOk
    );
    let r = unsafe { fairway_io_remove_group(e, g2) };
    refused(e, r, S::FairwayErrInvalidArgument, "still has members");
    assert_eq!(
        unsafe { fairway_io_remove_client(e, c, null_mut()) },
        S::FairwayOk
    );
    assert_eq!(unsafe { fairway_io_remove_group(e, g2) }, S::FairwayOk);
    let r = unsafe { fairway_io_remove_group(e, g2) };
    refused(e, r, S::FairwayErrInvalidArgument, "is not declared");

    let rated = FairwayIoClientOptions {
        reservation: 100,
        limit: 200,
        ..options(1, g1)
    };
    assert_eq!(
        unsafe { fairway_io_add_client_ex(e, &rated, &mut c) },
        S::FairwayOk
    );
    let bytes = FairwayIoClientOptions {
        rate_unit: FAIRWAY_IO_RATE_BYTES,
        limit: 1 << 20,
        ..options(1, 0)
    };
    assert_eq!(
        unsafe { fairway_io_add_client_ex(e, &bytes, &mut c) },
        S::FairwayOk
    );
    for (o, status, text) in [
        (
            FairwayIoClientOptions {
                reservation: 300,
                limit: 200,
                ..options(1, 0)
            },
            S::FairwayErrOutOfRange,
            "reservation must not exceed limit",
        ),
        (
            FairwayIoClientOptions {
                limit: 100,
                rate_unit: FAIRWAY_IO_RATE_BYTES,
                ..options(1, 0)
            },
            S::FairwayErrOutOfRange,
            "limit = 100 is out of range",
        ),
        (
            FairwayIoClientOptions {
                reservation: 10,
                rate_unit: 7,
                ..options(1, 0)
            },
            S::FairwayErrInvalidArgument,
            "rate_unit 7",
        ),
        (
            options(1, 12345),
            S::FairwayErrInvalidArgument,
            "group 12345",
        ),
        (options(0, 0), S::FairwayErrOutOfRange, "weight = 0"),
    ] {
        let r = unsafe { fairway_io_add_client_ex(e, &o, &mut c) };
        refused(e, r, status, text);
    }
    let r = unsafe { fairway_io_add_client_ex(e, null(), &mut c) };
    refused(e, r, S::FairwayErrNullPointer, "options is null");
    unsafe { fairway_io_destroy(e) };

    // A scheduler without groups refuses them with a message.
    let Some(e) = create("c-look") else { return };
    let r = unsafe { fairway_io_add_group(e, 1, 0, &mut g1) };
    refused(
        e,
        r,
        S::FairwayErrInvalidArgument,
        "groups need the bfq scheduler",
    );
    unsafe { fairway_io_destroy(e) };
}

#[test]
fn a_group_reservation_and_limit_are_checked_and_registered() {
    let Some(e) = create("bfq") else { return };
    use FairwayStatus as S;
    let (mut g1, mut g2, mut c) = (0, 0, 0);
    let rated = FairwayIoGroupOptions {
        weight: 2,
        reservation: 100,
        limit: 200,
        ..Default::default()
    };
    assert_eq!(
        unsafe { fairway_io_add_group_ex(e, &rated, &mut g1) },
        S::FairwayOk,
        "{}",
        last_error(e)
    );
    let bytes = FairwayIoGroupOptions {
        weight: 1,
        parent: g1,
        rate_unit: FAIRWAY_IO_RATE_BYTES,
        limit: 1 << 20,
        ..Default::default()
    };
    assert_eq!(
        unsafe { fairway_io_add_group_ex(e, &bytes, &mut g2) },
        S::FairwayOk
    );
    assert_eq!(
        unsafe { fairway_io_add_client_ex(e, &options(1, g2), &mut c) },
        S::FairwayOk
    );
    for (o, status, text) in [
        (
            FairwayIoGroupOptions {
                reservation: 300,
                limit: 200,
                ..rated
            },
            S::FairwayErrInvalidArgument,
            "reservation must not exceed limit",
        ),
        (
            FairwayIoGroupOptions {
                reservation: 0,
                limit: 100,
                rate_unit: FAIRWAY_IO_RATE_BYTES,
                ..rated
            },
            S::FairwayErrOutOfRange,
            "limit = 100 is out of range",
        ),
        (
            FairwayIoGroupOptions {
                rate_unit: 7,
                ..rated
            },
            S::FairwayErrInvalidArgument,
            "add_group_ex: rate_unit 7",
        ),
        (
            FairwayIoGroupOptions {
                parent: 12345,
                ..rated
            },
            S::FairwayErrInvalidArgument,
            "group 12345",
        ),
        (
            FairwayIoGroupOptions { weight: 0, ..rated },
            S::FairwayErrOutOfRange,
            "group weight = 0",
        ),
    ] {
        let r = unsafe { fairway_io_add_group_ex(e, &o, &mut c) };
        refused(e, r, status, text);
    }
    let r = unsafe { fairway_io_add_group_ex(e, null(), &mut c) };
    refused(e, r, S::FairwayErrNullPointer, "options is null");
    let r = unsafe { fairway_io_add_group_ex(e, &rated, null_mut()) };
    refused(
        e,
        r,
        S::FairwayErrNullPointer,
        "add_group_ex: group is null",
    );
    unsafe { fairway_io_destroy(e) };

    // A scheduler without groups refuses them with a message.
    let Some(e) = create("c-look") else { return };
    let r = unsafe { fairway_io_add_group_ex(e, &rated, &mut g1) };
    refused(
        e,
        r,
        S::FairwayErrInvalidArgument,
        "groups need the bfq scheduler",
    );
    unsafe { fairway_io_destroy(e) };
}
