//! [`huge_page_bufs`]: [`AlignedBuf`]s carved out of transparent huge
//! pages, for applications whose transfers are large.
//!
//! Why: a direct transfer reaches the device as a list of segments, one
//! per run of physically contiguous memory, each at most the device's
//! `queue/max_segment_size` (64 KiB on many devices, the loop device's
//! included), and one request holds at most `queue/max_segments` of them
//! (128 on the loop device). A heap buffer is 4 KiB pages scattered in
//! physical memory, one segment each, so a request carries at most
//! 128 × 4 KiB = 512 KiB: the block layer splits a larger transfer there
//! and stops merging adjacent ones there. A huge page is 2 MiB of
//! contiguous memory, so a request can carry what `queue/max_sectors_kb`
//! allows (1280 KiB on the loop device) in a few segments, as the page
//! cache's read-ahead does for buffered readers. On a device whose
//! throughput follows the size of its requests (a loop device serves one
//! request at a time per file), that is the difference between the two.
//!
//! How: one anonymous mapping, its 2 MiB-aligned part marked
//! `MADV_HUGEPAGE` (transparent huge pages in `madvise` or `always` mode),
//! cut into `count` buffers of `len` bytes rounded up to 4 KiB, each the
//! only user of its range; the mapping is unmapped when the last of its
//! buffers is dropped. Where the kernel has no huge page to give (THP
//! off, memory fragmented), the pages are ordinary ones: the buffers work
//! the same, and the device sees what heap buffers give it.

use super::buf::{AlignedBuf, BUF_ALIGN, MAX_LARGE_BUF_LEN};
use super::error::EngineError;
use super::mapping::{Mapping, HUGE_PAGE};
use std::sync::Arc;

/// Most buffers one call makes (256 MiB of 1 MiB buffers plus slack).
pub const MAX_HUGE_BUFS: usize = 65_536;

/// Largest mapping one call makes: 16 GiB.
pub const MAX_HUGE_BYTES: usize = 16 << 30;

/// `count` zeroed buffers of `len` bytes (`1..=MAX_LARGE_BUF_LEN`; each
/// takes `len` rounded up to 4 KiB) in memory backed by transparent huge
/// pages where the kernel gives them (the module doc says why and when
/// that helps). `count` is `1..=MAX_HUGE_BUFS`, the memory at most
/// [`MAX_HUGE_BYTES`]; both are checked before mapping.
///
/// ```
/// use fairway_disk::engine::huge_page_bufs;
/// let bufs = huge_page_bufs(128 * 1024, 16)?;
/// assert_eq!(bufs.len(), 16);
/// assert!(bufs.iter().all(|b| b.len() == 128 * 1024));
/// # Ok::<(), fairway_disk::engine::EngineError>(())
/// ```
pub fn huge_page_bufs(len: usize, count: usize) -> Result<Vec<AlignedBuf>, EngineError> {
    if !(1..=MAX_LARGE_BUF_LEN).contains(&len) {
        return Err(EngineError::OutOfRange {
            name: "buffer length",
            value: len as u64,
            allowed: "1..=1048576 bytes (one request, at most the largest max_request)",
        });
    }
    if !(1..=MAX_HUGE_BUFS).contains(&count) {
        return Err(EngineError::OutOfRange {
            name: "buffer count",
            value: count as u64,
            allowed: "1..=65536",
        });
    }
    let stride = len.div_ceil(BUF_ALIGN) * BUF_ALIGN;
    let bytes = stride * count;
    if bytes > MAX_HUGE_BYTES {
        return Err(EngineError::OutOfRange {
            name: "buffer length × count",
            value: bytes as u64,
            allowed: "1..=17179869184 bytes (16 GiB), each buffer rounded up to 4 KiB",
        });
    }
    let mapping =
        Mapping::new(bytes.div_ceil(HUGE_PAGE) * HUGE_PAGE).map_err(EngineError::Memory)?;
    let mapping = Arc::new(mapping);
    Ok((0..count)
        .map(|k| AlignedBuf::mapped(Arc::clone(&mapping), k * stride, len))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_zeroed_disjoint_and_outlive_each_other() {
        let mut bufs = huge_page_bufs(5000, 3).unwrap();
        for (k, b) in bufs.iter_mut().enumerate() {
            assert_eq!(b.len(), 5000);
            assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
            assert!(b.iter().all(|&x| x == 0));
            b.fill(k as u8 + 1);
        }
        let last = bufs.pop().unwrap();
        drop(bufs);
        assert!(last.iter().all(|&x| x == 3), "its own bytes, still mapped");
    }

    #[test]
    fn the_first_buffer_starts_a_huge_page() {
        let bufs = huge_page_bufs(MAX_LARGE_BUF_LEN, 2).unwrap();
        assert_eq!(bufs[0].as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(
            bufs[1].as_ptr() as usize - bufs[0].as_ptr() as usize,
            MAX_LARGE_BUF_LEN
        );
    }

    #[test]
    fn sizes_are_checked_before_mapping() {
        for (len, count, what) in [
            (0, 1, "buffer length = 0"),
            (MAX_LARGE_BUF_LEN + 1, 1, "buffer length = 1048577"),
            (4096, 0, "buffer count = 0"),
            (4096, MAX_HUGE_BUFS + 1, "buffer count = 65537"),
        ] {
            let e = huge_page_bufs(len, count).unwrap_err();
            assert!(e.to_string().starts_with(what), "{e}");
        }
        // 65536 buffers of 1 MiB is 64 GiB, over the 16 GiB bound.
        let e = huge_page_bufs(MAX_LARGE_BUF_LEN, MAX_HUGE_BUFS).unwrap_err();
        assert!(e.to_string().contains("16 GiB"), "{e}");
    }
}
