//! Kernel read-ahead for the simulated sequential readers
//! (the BFQ thesis §2.4).
//!
//! The thesis' readers are Linux processes calling `read()` on files; for a
//! sequential pattern the kernel reads ahead of the application and issues
//! the next window *asynchronously*, before the application asks for it.
//! §2.4 credits this for the throughput of the work-conserving schedulers:
//! "as the system performs read-ahead for sequential accesses, it tends to
//! asynchronously issue the next request before the completion of the
//! current one (this also helps C-LOOK)".
//!
//! Model: a reader blocked on one request of [`READ_REQUEST_SECTORS`] also
//! has `window / READ_REQUEST_SECTORS` read-ahead requests outstanding, so
//! a sequential reader keeps `1 + window / READ_REQUEST_SECTORS` requests
//! in flight; each completion makes it issue the next one after its think
//! time. Linux 2.6.21 (the thesis' kernel) keeps one *ahead window* of at
//! most `VM_MAX_READAHEAD` = 128 KiB in flight beside the window being
//! read, which is [`ReadAhead::LINUX`]: one 128 KiB request ahead.
//! [`ReadAhead::NONE`] gives strictly synchronous readers (one request at
//! a time), the worst case for the work-conserving schedulers.

use crate::request::{DiskConfigError, SECTOR_BYTES};

/// Size of a sequential reader's request, sectors (128 KiB: Linux's
/// largest read-ahead window, and L_max = 256 sectors of §2.4).
pub const READ_REQUEST_SECTORS: u32 = 256;

/// Longest read-ahead window accepted, sectors (32 MiB: 128 requests).
pub const MAX_READAHEAD_SECTORS: u32 = 128 * READ_REQUEST_SECTORS;

/// A read-ahead window: how far ahead of the request an application waits
/// for the kernel keeps reading, in whole requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ReadAhead {
    window_sectors: u32,
}

impl ReadAhead {
    /// No read-ahead: strictly synchronous readers.
    pub const NONE: Self = Self { window_sectors: 0 };
    /// Linux 2.6.21's default (`read_ahead_kb` = 128): one 128 KiB request
    /// ahead of the one being waited for.
    pub const LINUX: Self = Self {
        window_sectors: READ_REQUEST_SECTORS,
    };

    /// A window of `sectors`, a multiple of [`READ_REQUEST_SECTORS`] in
    /// `0..=`[`MAX_READAHEAD_SECTORS`] (the window is issued as whole
    /// requests; any other size is refused, not rounded).
    pub fn sectors(sectors: u32) -> Result<Self, DiskConfigError> {
        if sectors > MAX_READAHEAD_SECTORS || !sectors.is_multiple_of(READ_REQUEST_SECTORS) {
            return Err(DiskConfigError::OutOfRange {
                name: "readahead",
                value: f64::from(sectors),
                allowed: "0..=32768 sectors (0..=16384 KiB), a multiple of 256 sectors (128 KiB)",
            });
        }
        Ok(Self {
            window_sectors: sectors,
        })
    }

    /// A window of `kib` KiB (the unit of Linux's `read_ahead_kb`), with the
    /// same rules as [`ReadAhead::sectors`].
    pub fn kib(kib: u64) -> Result<Self, DiskConfigError> {
        let sectors = kib
            .checked_mul(1024 / SECTOR_BYTES)
            .and_then(|s| u32::try_from(s).ok())
            .ok_or(DiskConfigError::OutOfRange {
                name: "readahead",
                value: kib as f64,
                allowed: "0..=16384 KiB, a multiple of 128 KiB",
            })?;
        Self::sectors(sectors).map_err(|_| DiskConfigError::OutOfRange {
            name: "readahead",
            value: kib as f64,
            allowed: "0..=16384 KiB, a multiple of 128 KiB",
        })
    }

    /// The window, sectors.
    pub fn window_sectors(self) -> u32 {
        self.window_sectors
    }

    /// Requests a sequential reader keeps in flight: the one it waits for
    /// plus the window's.
    pub fn depth(self) -> u32 {
        1 + self.window_sectors / READ_REQUEST_SECTORS
    }
}

impl Default for ReadAhead {
    fn default() -> Self {
        Self::LINUX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_whole_requests_or_refused() {
        assert_eq!(ReadAhead::NONE.depth(), 1);
        assert_eq!(ReadAhead::LINUX.depth(), 2);
        assert_eq!(ReadAhead::kib(128).unwrap(), ReadAhead::LINUX);
        assert_eq!(ReadAhead::kib(512).unwrap().depth(), 5);
        for bad in [1, 64, 200, 16512, u64::MAX] {
            assert!(
                matches!(
                    ReadAhead::kib(bad),
                    Err(DiskConfigError::OutOfRange {
                        name: "readahead",
                        ..
                    })
                ),
                "{bad}"
            );
        }
        assert!(ReadAhead::sectors(300).is_err());
        assert_eq!(ReadAhead::sectors(0).unwrap(), ReadAhead::NONE);
    }
}
