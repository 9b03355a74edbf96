//! The io_uring the device thread issues transfers on: creation (with the
//! same feature check as [`crate::uring_device`]), submission that waits
//! when the submission queue is full instead of failing, timed waits for
//! completions, and reaping.

// Submission is `unsafe`: the kernel reads or writes the buffer after
// `push` returns. `Ring::push`'s contract moves that obligation to the
// caller (the device keeps the buffer in its in-flight table until the
// completion is reaped and never exits with transfers in flight).
#![allow(unsafe_code)]

use crate::request::{Direction, Nanos};
use io_uring::{opcode, types, IoUring};
use std::os::unix::io::RawFd;
use std::time::Duration;

/// Linux's `ETIME`: an io_uring wait that timed out.
const ETIME: i32 = 62;

/// Longest wait for a completion before looking at new submissions, ns
/// (the io_uring back-end's).
pub(crate) const POLL: Nanos = crate::uring_device::POLL;

pub(crate) struct Ring {
    ring: IoUring,
}

impl Ring {
    /// A ring with room for `max_in_flight` transfers.
    pub(crate) fn new(max_in_flight: u32) -> std::io::Result<Self> {
        let ring = IoUring::new(max_in_flight.next_power_of_two())?;
        if !ring.params().is_feature_ext_arg() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "no timed waits (IORING_FEAT_EXT_ARG, Linux 5.11)",
            ));
        }
        Ok(Self { ring })
    }

    /// Queues a transfer of `len` bytes at `ptr` to or from `offset` of
    /// `fd`, tagged `user_data`. A full submission queue is flushed to the
    /// kernel, then waited on (one completion), before giving up.
    ///
    /// # Safety
    ///
    /// `fd` must stay open and `ptr..ptr+len` valid, unmoved and otherwise
    /// unused until the completion tagged `user_data` has been reaped.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn push(
        &mut self,
        fd: RawFd,
        dir: Direction,
        ptr: *mut u8,
        len: u32,
        offset: u64,
        user_data: u64,
    ) -> std::io::Result<()> {
        let fd = types::Fd(fd);
        let entry = match dir {
            Direction::Read => opcode::Read::new(fd, ptr, len).offset(offset).build(),
            Direction::Write => opcode::Write::new(fd, ptr, len).offset(offset).build(),
        }
        .user_data(user_data);
        for attempt in 0..3 {
            // SAFETY: the caller's contract (see above).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            // Full: hand what is queued to the kernel; the second time,
            // also wait until one transfer has finished.
            self.submit_and_wait(attempt.min(1), None)?;
        }
        Err(std::io::Error::other("io_uring submission queue full"))
    }

    /// Submits what was pushed and waits up to `wait` (forever: `None`)
    /// until `want` completions are posted.
    pub(crate) fn submit_and_wait(
        &mut self,
        want: usize,
        wait: Option<Duration>,
    ) -> std::io::Result<()> {
        let r = match wait {
            Some(d) => {
                let ts = types::Timespec::from(d);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
            None => self.ring.submitter().submit_and_wait(want),
        };
        match r {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(ETIME) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every completion posted: `(user_data, result)`, the result a byte
    /// count or a negated `errno`.
    pub(crate) fn reap(&mut self) -> Vec<(u64, i32)> {
        self.ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect()
    }
}
