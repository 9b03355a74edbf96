//! Waking the data path's loop from another thread: an `eventfd` the
//! loop's `ppoll` watches beside its sockets, so that a statistics or
//! reload request is served at once rather than after the loop's longest
//! sleep.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// An eventfd.
#[derive(Debug)]
pub struct Wake {
    fd: OwnedFd,
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
        })
    }

    /// Wakes the loop (its next or current sleep ends).
    pub fn wake(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: 8 live bytes to a live eventfd. A full counter (EAGAIN)
        // means it is set already.
        unsafe { libc::write(self.fd.as_raw_fd(), one.as_ptr().cast(), 8) };
    }

    /// Clears it (the loop, before serving requests).
    pub fn clear(&self) {
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
