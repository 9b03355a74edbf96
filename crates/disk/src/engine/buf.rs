//! [`AlignedBuf`]: an owned, page-aligned byte buffer, the only buffer type
//! the engine transfers into or out of.
//!
//! `O_DIRECT` requires the memory address, like the file offset and the
//! length, to be a multiple of the device's logical block size. Every
//! `AlignedBuf` starts on a [`BUF_ALIGN`] (4 KiB) boundary, which covers
//! every logical block size a target may declare, so an unaligned buffer
//! cannot be handed to the engine at all. The storage is a heap block that
//! never moves or reallocates while the buffer exists: the kernel may write
//! into it while the engine owns it (during the transfer), and moving the
//! `AlignedBuf` value itself does not move the bytes. The heap block is
//! the default; [`super::huge_page_bufs`] carves buffers out of
//! transparent huge pages instead (see there why a device may serve
//! those faster).

// A buffer in a shared mapping is a slice of its own range of it.
#![allow(unsafe_code)]

use super::error::EngineError;
use super::mapping::Mapping;
use std::sync::Arc;

/// Alignment of every [`AlignedBuf`], bytes.
pub const BUF_ALIGN: usize = 4096;

/// The largest request of an engine with the default
/// [`super::EngineConfig::max_request`] (128 KiB, L_max = 256 sectors,
/// [`crate::bfq::DEFAULT_L_MAX`]). A buffer may be up to
/// [`MAX_LARGE_BUF_LEN`], for engines that take larger requests.
pub const MAX_BUF_LEN: usize = crate::bfq::DEFAULT_L_MAX as usize * 512;

/// Largest buffer: the largest request any engine may take
/// ([`super::MAX_REQUEST_LIMIT`], 1 MiB).
pub const MAX_LARGE_BUF_LEN: usize = super::config::MAX_REQUEST_LIMIT as usize;

/// An owned, zero-initialised, [`BUF_ALIGN`]-aligned byte buffer of a fixed
/// length (`1..=MAX_LARGE_BUF_LEN` bytes).
pub struct AlignedBuf {
    storage: Storage,
    /// Start of the aligned region inside the storage.
    at: usize,
    len: usize,
}

/// Where an [`AlignedBuf`]'s bytes live.
enum Storage {
    /// Heap storage, `len + BUF_ALIGN` bytes; never resized, so it never
    /// moves.
    Heap(Vec<u8>),
    /// A range of a mapping shared with other buffers
    /// ([`super::huge_page_bufs`]): each buffer's range is its own.
    Mapped(Arc<Mapping>),
}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes. `len` must be in `1..=MAX_LARGE_BUF_LEN`
    /// (checked before allocating).
    pub fn new(len: usize) -> Result<Self, EngineError> {
        if !(1..=MAX_LARGE_BUF_LEN).contains(&len) {
            return Err(EngineError::OutOfRange {
                name: "buffer length",
                value: len as u64,
                allowed: "1..=1048576 bytes (one request, at most the largest max_request)",
            });
        }
        let raw = vec![0u8; len + BUF_ALIGN];
        let addr = raw.as_ptr() as usize;
        let at = (BUF_ALIGN - addr % BUF_ALIGN) % BUF_ALIGN;
        Ok(Self {
            storage: Storage::Heap(raw),
            at,
            len,
        })
    }

    /// The buffer of bytes `at..at + len` of `mapping`, which no other
    /// buffer uses; `at` a multiple of [`BUF_ALIGN`], `len` in
    /// `1..=MAX_LARGE_BUF_LEN` (the caller checks both).
    pub(super) fn mapped(mapping: Arc<Mapping>, at: usize, len: usize) -> Self {
        debug_assert!(at.is_multiple_of(BUF_ALIGN) && at + len <= mapping.len());
        Self {
            storage: Storage::Mapped(mapping),
            at,
            len,
        }
    }

    /// A buffer holding a copy of `data` (`1..=MAX_LARGE_BUF_LEN` bytes).
    pub fn from_slice(data: &[u8]) -> Result<Self, EngineError> {
        let mut b = Self::new(data.len())?;
        b.copy_from_slice(data);
        Ok(b)
    }

    /// A one-byte buffer standing in for one the kernel may still own
    /// (after a ring failure, that buffer is leaked, never freed).
    pub(crate) fn placeholder() -> Self {
        let raw = vec![0u8; 1 + BUF_ALIGN];
        let at = (BUF_ALIGN - raw.as_ptr() as usize % BUF_ALIGN) % BUF_ALIGN;
        Self {
            storage: Storage::Heap(raw),
            at,
            len: 1,
        }
    }

    /// Length in bytes.
    #[allow(clippy::len_without_is_empty)] // never empty by construction
    pub fn len(&self) -> usize {
        self.len
    }

    /// The bytes as a slice.
    pub fn as_slice(&self) -> &[u8] {
        match &self.storage {
            Storage::Heap(raw) => &raw[self.at..self.at + self.len],
            // SAFETY: `at..at + len` lies within the mapping, which lives
            // as long as this buffer (the Arc), and no other buffer uses
            // that range; `&self` excludes a mutable borrow of it.
            Storage::Mapped(m) => unsafe {
                std::slice::from_raw_parts(m.base().add(self.at), self.len)
            },
        }
    }

    /// The bytes as a mutable slice.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Storage::Heap(raw) => &mut raw[self.at..self.at + self.len],
            // SAFETY: as in `as_slice`; `&mut self` makes this the only
            // borrow of the range.
            Storage::Mapped(m) => unsafe {
                std::slice::from_raw_parts_mut(m.base().add(self.at), self.len)
            },
        }
    }

    /// Start of the aligned region, for the kernel.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_slice().as_mut_ptr()
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_and_bounded() {
        for len in [1, 511, 4096, 4097, MAX_BUF_LEN, MAX_LARGE_BUF_LEN] {
            let b = AlignedBuf::new(len).unwrap();
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
            assert!(b.iter().all(|&x| x == 0));
        }
        assert!(AlignedBuf::new(0).is_err());
        let e = AlignedBuf::new(MAX_LARGE_BUF_LEN + 1).unwrap_err();
        assert!(e.to_string().contains("1..=1048576"), "{e}");
    }
}
