//! [`Mapping`]: an anonymous memory mapping whose 2 MiB-aligned part is
//! asked to be backed by transparent huge pages, shared by the
//! [`super::AlignedBuf`]s cut from it ([`super::huge_page_bufs`] says why).

// mmap, madvise and munmap.
#![allow(unsafe_code)]

/// A transparent huge page on x86-64 and arm64 (4 KiB base pages).
pub const HUGE_PAGE: usize = 2 << 20;

/// An anonymous mapping shared by the buffers cut from it.
pub(crate) struct Mapping {
    /// The mapping as mmap returned it.
    map: *mut libc::c_void,
    map_len: usize,
    /// Its first 2 MiB boundary: the buffers' memory starts here.
    base: *mut u8,
    /// Bytes usable from `base`.
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; the buffers
// that share it each touch only their own disjoint range, through
// `&`/`&mut AlignedBuf`, so sharing the pointer between threads is as
// safe as sharing `Vec<u8>` storage.
unsafe impl Send for Mapping {}
// SAFETY: as above; `Mapping` itself only hands out the base pointer.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Where the buffers' memory starts (2 MiB aligned).
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }

    /// Bytes usable from [`Self::base`].
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// A zeroed mapping with `len` bytes from a 2 MiB boundary, that part
    /// asked to be backed by huge pages.
    pub(crate) fn new(len: usize) -> std::io::Result<Self> {
        let map_len = len + HUGE_PAGE;
        // SAFETY: a fresh private anonymous mapping; no existing memory
        // is touched.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let skip = (HUGE_PAGE - map as usize % HUGE_PAGE) % HUGE_PAGE;
        // SAFETY: `skip < HUGE_PAGE`, so `base..base + len` lies inside
        // the mapping of `len + HUGE_PAGE` bytes.
        let base = unsafe { map.cast::<u8>().add(skip) };
        // Advice only: without huge pages the memory is ordinary pages
        // (the module doc), so its refusal changes nothing here.
        // SAFETY: a range inside our own mapping.
        let _ = unsafe { libc::madvise(base.cast(), len, libc::MADV_HUGEPAGE) };
        Ok(Self {
            map,
            map_len,
            base,
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping, no buffer left to use it (the last
        // Arc is going).
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}
