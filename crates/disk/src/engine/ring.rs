//! The io_uring both device threads issue transfers on
//! ([`crate::uring_device`]'s and the engine's): creation (with the
//! feature check), submission that waits when the submission queue is full
//! instead of failing, timed waits for completions, and reaping into a
//! buffer the caller reuses (no allocation per request).
//!
//! A ring may have a [`Doorbell`]: an eventfd the ring polls, which a
//! thread that has just sent the device a command rings, so that the
//! device can wait on the ring for a completion *or* a command without a
//! timeout. The doorbell is rung only while the device sleeps on the ring
//! (one atomic swap per command otherwise), so a busy device costs no
//! system call per command.

// Submission is `unsafe`: the kernel reads or writes the buffer after
// `push` returns. `Ring::push`'s contract moves that obligation to the
// caller (the device keeps the buffer in its in-flight table until the
// completion is reaped and never exits with transfers in flight). The
// doorbell's eventfd is read and written with `libc` calls on a file
// descriptor it owns.
#![allow(unsafe_code)]

use crate::request::Direction;
use io_uring::{opcode, types, IoUring};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Linux's `ETIME`: an io_uring wait that timed out.
const ETIME: i32 = 62;

/// The `user_data` of the doorbell's poll (requests' tags never reach it:
/// they count up from 0).
const DOORBELL: u64 = u64::MAX;

/// An eventfd a device's ring polls, rung by the threads that send the
/// device commands.
pub(crate) struct Doorbell {
    fd: OwnedFd,
    /// The device is (about to be) waiting on its ring.
    sleeping: AtomicBool,
}

impl Doorbell {
    pub(crate) fn new() -> std::io::Result<Self> {
        // SAFETY: eventfd has no memory arguments; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self {
            // SAFETY: `fd` was just created and is owned by nothing else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            sleeping: AtomicBool::new(false),
        })
    }

    /// Wakes the device if it waits on its ring. Call after sending it a
    /// command.
    pub(crate) fn ring(&self) {
        // Orders the command's send before the flag's read, against the
        // device's flag write before its check for commands (see
        // `Ring::sleep`): one of the two sides sees the other.
        fence(Ordering::SeqCst);
        if self.sleeping.swap(false, Ordering::SeqCst) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to an eventfd we own.
            // A failure can only be an overflowed counter, which wakes the
            // device anyway.
            unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
        }
    }

    /// Wakes the thread sleeping in [`Doorbell::sleep`] (or makes its next
    /// sleep return at once), whatever its flag says: for callers that
    /// know, under a lock of their own, that it sleeps.
    pub(crate) fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to an eventfd we own.
        unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    /// Sleeps until the doorbell rings, `also` (a ring's descriptor: a
    /// completion posted) is readable or `wait` passes (forever: `None`) —
    /// unless `commands_waiting`, asked once the doorbell is set to ring,
    /// says a command came meanwhile. Clears the doorbell if it rang.
    pub(crate) fn sleep(
        &self,
        also: Option<RawFd>,
        wait: Option<Duration>,
        commands_waiting: impl FnOnce() -> bool,
    ) {
        self.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !commands_waiting() {
            let fds = poll_two([self.fd.as_raw_fd(), also.unwrap_or(-1)], wait);
            self.sleeping.store(false, Ordering::SeqCst);
            // Only a rung doorbell needs clearing (a completion alone does
            // not cost the system call).
            if fds[0] {
                self.clear();
            }
            return;
        }
        self.sleeping.store(false, Ordering::SeqCst);
        self.clear();
    }

    /// The eventfd, for a thread that polls it itself.
    pub(crate) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Resets the eventfd's counter.
    pub(crate) fn clear(&self) {
        let mut n: u64 = 0;
        // SAFETY: reads at most 8 bytes into a live u64; nonblocking.
        unsafe { libc::read(self.fd.as_raw_fd(), (&mut n as *mut u64).cast(), 8) };
    }
}

pub(crate) struct Ring {
    ring: IoUring,
    doorbell: Option<Arc<Doorbell>>,
    /// The doorbell's poll is queued in the ring.
    armed: bool,
}

impl Ring {
    /// A ring with room for `max_in_flight` transfers (and, with
    /// `doorbell`, a [`Doorbell`], see [`Ring::doorbell`]). Fails where
    /// the kernel refuses io_uring or lacks timed waits
    /// (`IORING_FEAT_EXT_ARG`, Linux 5.11).
    pub(crate) fn new(max_in_flight: u32, doorbell: bool) -> std::io::Result<Self> {
        let ring = IoUring::new(max_in_flight.saturating_add(1).next_power_of_two())?;
        if !ring.params().is_feature_ext_arg() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "no timed waits (IORING_FEAT_EXT_ARG, Linux 5.11)",
            ));
        }
        let doorbell = if doorbell {
            Some(Arc::new(Doorbell::new()?))
        } else {
            None
        };
        Ok(Self {
            ring,
            doorbell,
            armed: false,
        })
    }

    /// Hands what was pushed to the kernel, without waiting (no system
    /// call when nothing was pushed).
    pub(crate) fn submit(&mut self) -> std::io::Result<()> {
        if self.ring.submission().is_empty() {
            return Ok(());
        }
        self.submit_and_wait(0, None)
    }

    /// The ring's descriptor, readable while a completion is posted.
    pub(crate) fn fd(&self) -> RawFd {
        self.ring.as_raw_fd()
    }

    /// The ring's doorbell, for the threads that send its device commands.
    pub(crate) fn doorbell(&self) -> Option<Arc<Doorbell>> {
        self.doorbell.clone()
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
        // SAFETY: the caller's contract (see above).
        unsafe { self.push_entry(&entry) }
    }

    /// Queues `entry`, flushing (then waiting for one completion) while
    /// the submission queue is full.
    ///
    /// # Safety
    ///
    /// As [`Ring::push`], for what `entry` points to.
    unsafe fn push_entry(&mut self, entry: &io_uring::squeue::Entry) -> std::io::Result<()> {
        for attempt in 0..3 {
            // SAFETY: the caller's contract (see above).
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
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

    /// Submits what was pushed and waits until a completion is posted,
    /// the doorbell rings or `wait` passes (forever: `None`) — unless
    /// `commands_waiting`, asked once the doorbell is set to ring, says a
    /// command came meanwhile. Without a doorbell, waits for a completion
    /// or `wait` only.
    pub(crate) fn sleep(
        &mut self,
        wait: Option<Duration>,
        commands_waiting: impl FnOnce() -> bool,
    ) -> std::io::Result<()> {
        let Some(bell) = self.doorbell.clone() else {
            return self.submit_and_wait(1, wait);
        };
        if !self.armed {
            let poll = opcode::PollAdd::new(types::Fd(bell.fd.as_raw_fd()), libc::POLLIN as u32)
                .build()
                .user_data(DOORBELL);
            // SAFETY: a poll has no buffer; the eventfd lives as long as
            // `bell`, which the ring holds until it is dropped.
            unsafe { self.push_entry(&poll) }?;
            self.armed = true;
        }
        bell.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let r = if commands_waiting() {
            self.submit_and_wait(0, None)
        } else {
            self.submit_and_wait(1, wait)
        };
        bell.sleeping.store(false, Ordering::SeqCst);
        r
    }

    /// Appends every completion posted to `out`: `(user_data, result)`, the
    /// result a byte count or a negated `errno`. The doorbell's are taken
    /// here (and its poll re-armed at the next [`Ring::sleep`]).
    pub(crate) fn reap(&mut self, out: &mut Vec<(u64, i32)>) {
        for c in self.ring.completion() {
            if c.user_data() == DOORBELL {
                self.armed = false;
                if let Some(bell) = &self.doorbell {
                    bell.clear();
                }
            } else {
                out.push((c.user_data(), c.result()));
            }
        }
    }
}

/// Sleeps until one of `fds` is readable or `wait` passes (`None`: no
/// limit); which of them polled readable (or in error). A negative fd is
/// ignored. EINTR and errors end the sleep early, which the callers'
/// loops tolerate (they re-check everything).
pub(crate) fn poll_two(fds: [RawFd; 2], wait: Option<Duration>) -> [bool; 2] {
    let mut p = fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    let ts = wait.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
    // SAFETY: `p` and `ts` live across the call.
    unsafe { libc::ppoll(p.as_mut_ptr(), 2, tsp, std::ptr::null()) };
    p.map(|q| q.revents != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    /// Pushes `n` 8-byte reads of /dev/zero into a ring of 2 entries
    /// without submitting: a full submission queue is flushed (and waited
    /// on) by `push` itself, and every read completes exactly once.
    #[test]
    fn a_full_ring_loses_nothing() {
        let Ok(mut ring) = Ring::new(1, false) else {
            eprintln!("skipped: io_uring unavailable here");
            return;
        };
        let zero = File::open("/dev/zero").unwrap();
        let n = 9u64;
        let mut bufs = vec![[1u8; 8]; n as usize];
        for (i, b) in bufs.iter_mut().enumerate() {
            // SAFETY: `zero` and `bufs` outlive the ring's completions,
            // which are all reaped below.
            unsafe {
                ring.push(
                    zero.as_raw_fd(),
                    Direction::Read,
                    b.as_mut_ptr(),
                    8,
                    0,
                    i as u64,
                )
            }
            .unwrap();
        }
        let mut done = Vec::new();
        while done.len() < n as usize {
            ring.submit_and_wait(1, Some(Duration::from_secs(5)))
                .unwrap();
            let before = done.len();
            ring.reap(&mut done);
            assert!(done.len() > before, "no completion within 5 s");
        }
        let mut tags: Vec<u64> = done.iter().map(|&(t, _)| t).collect();
        tags.sort_unstable();
        assert_eq!(tags, (0..n).collect::<Vec<_>>());
        assert!(done.iter().all(|&(_, res)| res == 8));
        assert!(bufs.iter().all(|b| *b == [0u8; 8]));
    }

    /// A doorbell rung while the ring sleeps wakes it well before its
    /// timeout; rung while it does not sleep, it writes nothing (the next
    /// sleep waits its full timeout).
    #[test]
    fn the_doorbell_wakes_a_sleeping_ring_only() {
        let Ok(mut ring) = Ring::new(1, true) else {
            eprintln!("skipped: io_uring unavailable here");
            return;
        };
        let bell = ring.doorbell().unwrap();
        bell.ring();
        let t = std::time::Instant::now();
        ring.sleep(Some(Duration::from_millis(50)), || false)
            .unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(50),
            "woken by a stale ring"
        );
        let ringer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            // Rings until the sleeper is asleep (the flag is set just
            // before it waits).
            while !bell.sleeping.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            bell.ring();
        });
        let t = std::time::Instant::now();
        ring.sleep(Some(Duration::from_secs(30)), || false).unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the doorbell did not wake the ring"
        );
        ringer.join().unwrap();
        let mut done = Vec::new();
        ring.reap(&mut done);
        assert!(
            done.is_empty(),
            "the doorbell's completion is the ring's own"
        );
    }
}
