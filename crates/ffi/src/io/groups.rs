//! Groups, reservations and limits in the I/O scheduler's C ABI: clients
//! in groups that share the device by weight, level by level, and dmClock
//! reservations and limits per client (`docs/io-scheduler.md`, "Groups"
//! and "Reservations and limits"). Group ids are handed out like client
//! ids (never reused, 0 is the root).

use super::{engine_failure, handle, FairwayIoEngine, IoState, IO_KIND};
use crate::handle::{call, check_out, Failure};
use crate::status::FairwayStatus;
use fairway_disk::engine::{ClientOptions, GroupId, GroupOptions, Rate};

/// `FairwayIoClientOptions::rate_unit`: requests per second.
pub const FAIRWAY_IO_RATE_IOPS: u32 = 0;
/// `FairwayIoClientOptions::rate_unit`: bytes per second.
pub const FAIRWAY_IO_RATE_BYTES: u32 = 1;

/// How [`fairway_io_add_client_ex`] registers a client.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairwayIoClientOptions {
    /// Weight, `1..=65536` (within its group).
    pub weight: u32,
    /// Unit of `reservation` and `limit`: `FAIRWAY_IO_RATE_IOPS` or
    /// `FAIRWAY_IO_RATE_BYTES`.
    pub rate_unit: u32,
    /// Its group (from `fairway_io_add_group`), 0 for the root.
    pub group: u64,
    /// Minimum rate while it has requests waiting (0: none); IOPS
    /// `1..=10^7`, bytes/s `512..=2^40`.
    pub reservation: u64,
    /// Maximum rate (0: none), in the same ranges; at least `reservation`.
    pub limit: u64,
}

/// How [`fairway_io_add_group_ex`] declares a group.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairwayIoGroupOptions {
    /// Weight in its parent, `1..=65536`.
    pub weight: u32,
    /// Unit of `reservation` and `limit`: `FAIRWAY_IO_RATE_IOPS` or
    /// `FAIRWAY_IO_RATE_BYTES`.
    pub rate_unit: u32,
    /// Its parent group, 0 for the root.
    pub parent: u64,
    /// Minimum rate of the group's members together while one of them has
    /// requests waiting (0: none); IOPS `1..=10^7`, bytes/s `512..=2^40`.
    pub reservation: u64,
    /// Maximum rate of the group's members together (0: none), in the
    /// same ranges; at least `reservation`.
    pub limit: u64,
}

impl IoState {
    fn group(&self, group: u64, what: &str) -> Result<Option<GroupId>, Failure> {
        if group == 0 {
            return Ok(None);
        }
        self.groups.get(&group).copied().map(Some).ok_or_else(|| {
            Failure::new(
                FairwayStatus::FairwayErrInvalidArgument,
                format!("{what}: group {group} is not declared (never added, or removed)"),
            )
        })
    }
}

fn rate(unit: u32, value: u64, what: &str) -> Result<Option<Rate>, Failure> {
    match (value, unit) {
        (0, _) => Ok(None),
        (v, FAIRWAY_IO_RATE_IOPS) => Ok(Some(Rate::Iops(v))),
        (v, FAIRWAY_IO_RATE_BYTES) => Ok(Some(Rate::BytesPerSec(v))),
        (_, u) => Err(Failure::new(
            FairwayStatus::FairwayErrInvalidArgument,
            format!("{what}: rate_unit {u} is neither FAIRWAY_IO_RATE_IOPS (0) nor FAIRWAY_IO_RATE_BYTES (1)"),
        )),
    }
}

/// Declares a group of weight `weight` (`1..=65536`) under `parent` (0:
/// the root; at most 8 levels, 1024 groups) and writes its id to `*group`.
///
/// # Safety
/// As for [`fairway_io_destroy`](super::fairway_io_destroy); `group` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_add_group(
    e: *mut FairwayIoEngine,
    weight: u32,
    parent: u64,
    group: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            check_out(group, "add_group: group")?;
            let mut options = GroupOptions::weight(weight);
            if let Some(p) = s.group(parent, "add_group")? {
                options = options.in_group(p);
            }
            let g = s
                .engine("add_group")?
                .add_group(options)
                .map_err(|e| engine_failure("add_group", e))?;
            let id = s.next_id();
            s.groups.insert(id, g);
            // SAFETY: checked non-null and aligned; caller-writable.
            group.write(id);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Removes an empty group (no client, no group left in it). Its id is
/// never valid again.
///
/// # Safety
/// As for [`fairway_io_destroy`](super::fairway_io_destroy).
#[no_mangle]
pub unsafe extern "C" fn fairway_io_remove_group(
    e: *mut FairwayIoEngine,
    group: u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            let Some(g) = s.group(group, "remove_group")? else {
                return Err(Failure::new(
                    FairwayStatus::FairwayErrInvalidArgument,
                    "remove_group: the root group (0) cannot be removed",
                ));
            };
            s.engine("remove_group")?
                .remove_group(g)
                .map_err(|e| engine_failure("remove_group", e))?;
            s.groups.remove(&group);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Registers a client as `*options` says (weight, group, reservation,
/// limit) and writes its id to `*client`.
///
/// # Safety
/// As for [`fairway_io_destroy`](super::fairway_io_destroy); `options` must be null or point
/// to a `FairwayIoClientOptions`; `client` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_add_client_ex(
    e: *mut FairwayIoEngine,
    options: *const FairwayIoClientOptions,
    client: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            check_out(client, "add_client_ex: client")?;
            if options.is_null() {
                return Err(Failure::new(
                    FairwayStatus::FairwayErrNullPointer,
                    "add_client_ex: options is null",
                ));
            }
            // SAFETY: non-null; the caller promises a valid struct (read
            // unaligned: the pointer's alignment is not checked).
            let o = options.read_unaligned();
            let mut opts = ClientOptions::weight(o.weight);
            opts.group = s.group(o.group, "add_client_ex")?;
            opts.reservation = rate(o.rate_unit, o.reservation, "add_client_ex")?;
            opts.limit = rate(o.rate_unit, o.limit, "add_client_ex")?;
            let c = s
                .engine("add_client_ex")?
                .add_client(opts)
                .map_err(|e| engine_failure("add_client_ex", e))?;
            let id = s.next_id();
            s.clients.insert(id, c);
            // SAFETY: checked non-null and aligned; caller-writable.
            client.write(id);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}

/// Declares a group as `*options` says (weight, parent, the group's
/// reservation and limit as a whole) and writes its id to `*group`.
///
/// # Safety
/// As for [`fairway_io_destroy`](super::fairway_io_destroy); `options` must be null or point
/// to a `FairwayIoGroupOptions`; `group` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn fairway_io_add_group_ex(
    e: *mut FairwayIoEngine,
    options: *const FairwayIoGroupOptions,
    group: *mut u64,
) -> FairwayStatus {
    // SAFETY: forwarded contract.
    unsafe {
        call(handle(e), IO_KIND, |s| {
            check_out(group, "add_group_ex: group")?;
            if options.is_null() {
                return Err(Failure::new(
                    FairwayStatus::FairwayErrNullPointer,
                    "add_group_ex: options is null",
                ));
            }
            // SAFETY: non-null; the caller promises a valid struct (read
            // unaligned: the pointer's alignment is not checked).
            let o = options.read_unaligned();
            let mut opts = GroupOptions::weight(o.weight);
            opts.parent = s.group(o.parent, "add_group_ex")?;
            opts.reservation = rate(o.rate_unit, o.reservation, "add_group_ex")?;
            opts.limit = rate(o.rate_unit, o.limit, "add_group_ex")?;
            let g = s
                .engine("add_group_ex")?
                .add_group(opts)
                .map_err(|e| engine_failure("add_group_ex", e))?;
            let id = s.next_id();
            s.groups.insert(id, g);
            // SAFETY: checked non-null and aligned; caller-writable.
            group.write(id);
            Ok(FairwayStatus::FairwayOk)
        })
    }
}
