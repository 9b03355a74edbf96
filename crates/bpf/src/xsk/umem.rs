//! The UMEM: the frames an AF_XDP socket receives into and sends from,
//! one anonymous mapping of `frames` chunks of `frame_size` bytes that
//! the kernel pins when it is registered.

use std::io;

/// The frames' memory.
pub(crate) struct Umem {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by the socket owning the `Umem`.
unsafe impl Send for Umem {}

impl Umem {
    /// Maps `len` bytes (the caller checked the size against its limit).
    pub(crate) fn new(len: usize) -> io::Result<Self> {
        // SAFETY: a fresh private anonymous mapping.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Umem {
            base: base.cast(),
            len,
        })
    }

    /// The start address, for `XDP_UMEM_REG`.
    pub(crate) fn addr(&self) -> u64 {
        self.base as u64
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// `len` bytes at offset `addr`, or `None` if they are not all inside.
    pub(crate) fn get(&self, addr: u64, len: u32) -> Option<&[u8]> {
        let end = addr.checked_add(u64::from(len))?;
        if end > self.len as u64 {
            return None;
        }
        // SAFETY: inside the mapping; the kernel wrote this frame before
        // publishing its descriptor and does not touch it until it is
        // given back through the fill ring.
        Some(unsafe { std::slice::from_raw_parts(self.base.add(addr as usize), len as usize) })
    }

    /// The frame at offset `addr`, `len` bytes, for writing; `None` if
    /// not all inside.
    pub(crate) fn get_mut(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let end = addr.checked_add(len as u64)?;
        if end > self.len as u64 {
            return None;
        }
        // SAFETY: inside the mapping; a frame on the TX free list, which
        // the kernel does not use until its descriptor is published.
        Some(unsafe { std::slice::from_raw_parts_mut(self.base.add(addr as usize), len) })
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once, after the
        // socket (declared before the UMEM in `XskSocket`) has closed.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}
