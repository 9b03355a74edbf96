//! Waking the data path's loop from another thread: an `eventfd` the
//! loop's `ppoll` watches beside its sockets, so that a statistics or
//! reload request is served at once rather than after the loop's longest
//! sleep.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// An eventfd, and a flag that saves the loop a system call per turn
/// when nobody woke it.
#[derive(Debug)]
pub struct Wake {
    fd: OwnedFd,
    /// Set after every write: the loop reads the eventfd only then.
    armed: AtomicBool,
}

impl Wake {
    /// A new one, not set.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain system call; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor nothing else owns.
        Ok(Wake {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed: AtomicBool::new(false),
        })
    }

    /// Wakes the loop (its next or current sleep ends).
    pub fn wake(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: 8 live bytes to a live eventfd. A full counter (EAGAIN)
        // means it is set already.
        unsafe { libc::write(self.fd.as_raw_fd(), one.as_ptr().cast(), 8) };
        // After the write: a loop that sees the flag finds the eventfd
        // set (or already cleared by an earlier read), never set after
        // its read with the flag down.
        self.armed.store(true, Ordering::Release);
    }

    /// Clears it if it was woken (the loop, before serving requests):
    /// one atomic load when it was not.
    pub fn clear(&self) {
        if !self.armed.load(Ordering::Relaxed) || !self.armed.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut buf = [0u8; 8];
        // SAFETY: 8 live bytes from a live non-blocking eventfd; EAGAIN
        // means it was not set.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
    }

    /// The descriptor to poll for reading.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(w: &Wake) -> bool {
        let mut p = libc::pollfd {
            fd: w.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd, no wait.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    }

    #[test]
    fn a_wake_is_seen_once_and_cleared() {
        let w = Wake::new().unwrap();
        assert!(!readable(&w));
        w.wake();
        w.wake();
        assert!(readable(&w));
        w.clear();
        assert!(!readable(&w));
        // Nothing woke it: clearing is a no-op.
        w.clear();
        assert!(!readable(&w));
    }
}
