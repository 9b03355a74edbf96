//! One of an AF_XDP socket's four rings, shared with the kernel through
//! `mmap`: a power-of-two array of descriptors and two free-running
//! 32-bit indices. The fill and TX rings are produced here and consumed
//! by the kernel; the RX and completion rings the other way round. Each
//! side publishes its index with a release store and reads the other's
//! with an acquire load, as the kernel's side does (`smp_store_release`,
//! `smp_load_acquire`), so that a descriptor is written before its index
//! says so.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

/// One mapped ring of descriptors of type `T` (`u64` frame addresses for
/// the fill and completion rings, `xdp_desc` for RX and TX).
pub(crate) struct Ring<T> {
    map: *mut libc::c_void,
    map_len: usize,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    descs: *mut T,
    mask: u32,
    /// This side's index: the producer's for a ring produced here, the
    /// consumer's for one consumed here.
    local: u32,
    /// The other side's index as last read.
    seen: u32,
}

// SAFETY: the ring's memory is owned by the socket that owns the `Ring`;
// moving it to another thread moves the only user-space access to it.
unsafe impl<T: Send> Send for Ring<T> {}

impl<T: Copy> Ring<T> {
    /// Maps the ring of `size` entries described by `off` at page offset
    /// `pgoff` of socket `fd`.
    pub(crate) fn map(
        fd: RawFd,
        off: &libc::xdp_ring_offset,
        size: u32,
        pgoff: u64,
    ) -> io::Result<Self> {
        let map_len = off.desc as usize + size as usize * std::mem::size_of::<T>();
        // SAFETY: a fresh shared mapping of the socket's ring; the kernel
        // checks the length and offset against the ring it allocated.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff as libc::off_t,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let at = |o: u64| (map as usize + o as usize) as *mut u8;
        Ok(Ring {
            map,
            map_len,
            producer: at(off.producer) as *const AtomicU32,
            consumer: at(off.consumer) as *const AtomicU32,
            flags: at(off.flags) as *const AtomicU32,
            descs: at(off.desc) as *mut T,
            mask: size - 1,
            local: 0,
            seen: 0,
        })
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: the index lies in the mapping, which lives as long as
        // `self`, 4-byte aligned (the kernel places it so).
        unsafe { &*self.producer }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.consumer }
    }

    /// Whether the kernel asks to be woken (`XDP_RING_NEED_WAKEUP`).
    pub(crate) fn needs_wakeup(&self) -> bool {
        // SAFETY: as for `producer`.
        let flags = unsafe { &*self.flags };
        flags.load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }

    fn slot(&self, index: u32) -> *mut T {
        // SAFETY (of the callers' accesses): masked, the index is below
        // the ring's size, within the mapping.
        unsafe { self.descs.add((index & self.mask) as usize) }
    }

    // A ring produced here.

    /// How many entries can be written (at most `want`).
    pub(crate) fn free(&mut self, want: u32) -> u32 {
        let size = self.mask + 1;
        let mut free = size - self.local.wrapping_sub(self.seen);
        if free < want {
            self.seen = self.consumer().load(Ordering::Acquire);
            free = size - self.local.wrapping_sub(self.seen);
        }
        free.min(want)
    }

    /// Writes the `i`-th entry after those published; `i` must be below
    /// what [`Ring::free`] returned.
    pub(crate) fn write(&mut self, i: u32, value: T) {
        // SAFETY: a free slot, which the kernel does not read until it is
        // published.
        unsafe { self.slot(self.local.wrapping_add(i)).write_volatile(value) }
    }

    /// Published entries the kernel has not consumed yet.
    pub(crate) fn unconsumed(&mut self) -> u32 {
        self.seen = self.consumer().load(Ordering::Acquire);
        self.local.wrapping_sub(self.seen)
    }

    /// Publishes `n` written entries.
    pub(crate) fn submit(&mut self, n: u32) {
        self.local = self.local.wrapping_add(n);
        self.producer().store(self.local, Ordering::Release);
    }

    // A ring consumed here.

    /// How many entries can be read (at most `want`).
    pub(crate) fn available(&mut self, want: u32) -> u32 {
        let mut n = self.seen.wrapping_sub(self.local);
        if n == 0 {
            self.seen = self.producer().load(Ordering::Acquire);
            n = self.seen.wrapping_sub(self.local);
        }
        n.min(want)
    }

    /// The `i`-th unread entry; `i` must be below what
    /// [`Ring::available`] returned.
    pub(crate) fn read(&self, i: u32) -> T {
        // SAFETY: a published slot, which the kernel does not rewrite
        // until it is released.
        unsafe { self.slot(self.local.wrapping_add(i)).read_volatile() }
    }

    /// Gives `n` read entries back to the kernel.
    pub(crate) fn release(&mut self, n: u32) {
        self.local = self.local.wrapping_add(n);
        self.consumer().store(self.local, Ordering::Release);
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}
