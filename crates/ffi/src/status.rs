//! The status code every ABI function returns, and its printable name.
//!
//! Zero is success, positive codes are outcomes that are not errors (nothing
//! to dequeue; a priority-queue rank served at the window's edge; a wait
//! that timed out), negative codes are errors. An error never changes the
//! scheduler, queue or I/O engine.

use core::ffi::c_char;

/// Result of every `fairway_*` call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FairwayStatus {
    /// Success.
    FairwayOk = 0,
    /// Nothing queued: dequeue, peek or extract found no element.
    FairwayEmpty = 1,
    /// cFFS insert accepted, but the rank lay outside the queue's window
    /// and is served at the window's edge (the Eiffel paper §3.1.1); counted in
    /// `FairwayPqStats`.
    FairwayClamped = 2,
    /// `fairway_io_wait` timed out: requests are still outstanding, none
    /// completed in time.
    FairwayTimeout = 3,
    /// A required pointer argument (spec, out-parameter, buffer) was null.
    FairwayErrNullPointer = -1,
    /// The handle is null, destroyed, or of the other kind.
    FairwayErrInvalidHandle = -2,
    /// An earlier call on this handle panicked; only destroy is allowed.
    FairwayErrPoisoned = -3,
    /// This call panicked inside the library (a bug); the handle is now
    /// poisoned.
    FairwayErrPanic = -4,
    /// Malformed argument: spec text that does not parse, text that is not
    /// UTF-8.
    FairwayErrInvalidArgument = -5,
    /// A number outside its allowed range (flow id, weight, max length,
    /// weight sum, capacity, packet length, queue handle, rank); the
    /// message names the parameter and the range.
    FairwayErrOutOfRange = -6,
    /// The flow id names no configured flow.
    FairwayErrUnknownFlow = -7,
    /// The flow is already configured, or the queue handle already queued.
    FairwayErrAlreadyExists = -8,
    /// The packet is longer than its flow's maximum length.
    FairwayErrPacketTooLong = -9,
    /// Zero-length packets are not schedulable.
    FairwayErrEmptyPacket = -10,
    /// Every packet slot is in use: an overload drop the caller counts.
    FairwayErrFull = -11,
    /// The caller's array cannot hold the packets to hand back; nothing
    /// was removed.
    FairwayErrBufferTooSmall = -12,
    /// The queue handle is not queued.
    FairwayErrNotQueued = -13,
    /// Reconfiguring would make a queued packet longer than the new
    /// maximum length; nothing changed.
    FairwayErrQueuedPacketTooLong = -14,
    /// The I/O client id names no registered client (never added, or
    /// removed).
    FairwayErrUnknownClient = -15,
    /// The I/O target id names no open target (never opened, or closed).
    FairwayErrUnknownTarget = -16,
    /// A write to an I/O target opened without `FAIRWAY_IO_OPEN_WRITE`.
    FairwayErrReadOnly = -17,
    /// The I/O buffer belongs to the engine (submitted, not yet handed
    /// back by a completion).
    FairwayErrBufferInFlight = -18,
    /// The I/O engine has shut down: only poll, wait, statistics and
    /// destroy still work.
    FairwayErrStopped = -19,
    /// io_uring is unavailable (old kernel, disabled, filtered by a
    /// sandbox) or the engine's thread could not be started.
    FairwayErrUnavailable = -20,
    /// The operating system refused (opening an I/O target); the message
    /// has its error.
    FairwayErrOs = -21,
}

impl FairwayStatus {
    /// The C constant's name, e.g. `FAIRWAY_ERR_FULL`.
    pub fn name(self) -> &'static str {
        let c = self.c_name();
        // The table below is ASCII, so this cannot fail.
        c.to_str().unwrap_or("FAIRWAY_?")
    }

    fn c_name(self) -> &'static core::ffi::CStr {
        match self {
            FairwayStatus::FairwayOk => c"FAIRWAY_OK",
            FairwayStatus::FairwayEmpty => c"FAIRWAY_EMPTY",
            FairwayStatus::FairwayClamped => c"FAIRWAY_CLAMPED",
            FairwayStatus::FairwayTimeout => c"FAIRWAY_TIMEOUT",
            FairwayStatus::FairwayErrNullPointer => c"FAIRWAY_ERR_NULL_POINTER",
            FairwayStatus::FairwayErrInvalidHandle => c"FAIRWAY_ERR_INVALID_HANDLE",
            FairwayStatus::FairwayErrPoisoned => c"FAIRWAY_ERR_POISONED",
            FairwayStatus::FairwayErrPanic => c"FAIRWAY_ERR_PANIC",
            FairwayStatus::FairwayErrInvalidArgument => c"FAIRWAY_ERR_INVALID_ARGUMENT",
            FairwayStatus::FairwayErrOutOfRange => c"FAIRWAY_ERR_OUT_OF_RANGE",
            FairwayStatus::FairwayErrUnknownFlow => c"FAIRWAY_ERR_UNKNOWN_FLOW",
            FairwayStatus::FairwayErrAlreadyExists => c"FAIRWAY_ERR_ALREADY_EXISTS",
            FairwayStatus::FairwayErrPacketTooLong => c"FAIRWAY_ERR_PACKET_TOO_LONG",
            FairwayStatus::FairwayErrEmptyPacket => c"FAIRWAY_ERR_EMPTY_PACKET",
            FairwayStatus::FairwayErrFull => c"FAIRWAY_ERR_FULL",
            FairwayStatus::FairwayErrBufferTooSmall => c"FAIRWAY_ERR_BUFFER_TOO_SMALL",
            FairwayStatus::FairwayErrNotQueued => c"FAIRWAY_ERR_NOT_QUEUED",
            FairwayStatus::FairwayErrQueuedPacketTooLong => c"FAIRWAY_ERR_QUEUED_PACKET_TOO_LONG",
            FairwayStatus::FairwayErrUnknownClient => c"FAIRWAY_ERR_UNKNOWN_CLIENT",
            FairwayStatus::FairwayErrUnknownTarget => c"FAIRWAY_ERR_UNKNOWN_TARGET",
            FairwayStatus::FairwayErrReadOnly => c"FAIRWAY_ERR_READ_ONLY",
            FairwayStatus::FairwayErrBufferInFlight => c"FAIRWAY_ERR_BUFFER_IN_FLIGHT",
            FairwayStatus::FairwayErrStopped => c"FAIRWAY_ERR_STOPPED",
            FairwayStatus::FairwayErrUnavailable => c"FAIRWAY_ERR_UNAVAILABLE",
            FairwayStatus::FairwayErrOs => c"FAIRWAY_ERR_OS",
        }
    }
}

/// Every status, for lookups by value (private: cbindgen would export it).
const ALL_STATUSES: [FairwayStatus; 25] = [
    FairwayStatus::FairwayOk,
    FairwayStatus::FairwayEmpty,
    FairwayStatus::FairwayClamped,
    FairwayStatus::FairwayTimeout,
    FairwayStatus::FairwayErrNullPointer,
    FairwayStatus::FairwayErrInvalidHandle,
    FairwayStatus::FairwayErrPoisoned,
    FairwayStatus::FairwayErrPanic,
    FairwayStatus::FairwayErrInvalidArgument,
    FairwayStatus::FairwayErrOutOfRange,
    FairwayStatus::FairwayErrUnknownFlow,
    FairwayStatus::FairwayErrAlreadyExists,
    FairwayStatus::FairwayErrPacketTooLong,
    FairwayStatus::FairwayErrEmptyPacket,
    FairwayStatus::FairwayErrFull,
    FairwayStatus::FairwayErrBufferTooSmall,
    FairwayStatus::FairwayErrNotQueued,
    FairwayStatus::FairwayErrQueuedPacketTooLong,
    FairwayStatus::FairwayErrUnknownClient,
    FairwayStatus::FairwayErrUnknownTarget,
    FairwayStatus::FairwayErrReadOnly,
    FairwayStatus::FairwayErrBufferInFlight,
    FairwayStatus::FairwayErrStopped,
    FairwayStatus::FairwayErrUnavailable,
    FairwayStatus::FairwayErrOs,
];

impl FairwayStatus {
    /// The status whose C value is `code`, if any.
    pub fn from_code(code: i32) -> Option<FairwayStatus> {
        ALL_STATUSES.iter().copied().find(|s| *s as i32 == code)
    }
}

/// The constant's name of status value `status` (e.g. `"FAIRWAY_ERR_FULL"`),
/// or `"FAIRWAY_UNKNOWN_STATUS"` for a value no function returns: a static
/// NUL-terminated string, never null. Takes an `int` rather than the enum so
/// that any value a C caller passes is defined behaviour.
#[no_mangle]
pub extern "C" fn fairway_status_name(status: i32) -> *const c_char {
    match FairwayStatus::from_code(status) {
        Some(s) => s.c_name().as_ptr(),
        None => c"FAIRWAY_UNKNOWN_STATUS".as_ptr(),
    }
}
