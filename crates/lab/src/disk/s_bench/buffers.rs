//! The direct-I/O buffers of the benchmark's workers and replays, on both
//! sides: heap buffers, or buffers in transparent huge pages
//! ([`fairway_disk::engine::huge_page_bufs`]; the default).
//!
//! Why it matters here: the loop device takes at most 128 segments of at
//! most 64 KiB in one request. A heap buffer's 4 KiB pages are one
//! segment each, so direct transfers reach the device in requests of at
//! most 512 KiB, while S's buffered readers' read-ahead reaches it in
//! requests of about 1.2 MiB from the page cache's contiguous folios; a
//! huge page gives direct transfers the same room. The loop device serves
//! one request at a time per file, so its throughput follows the size of
//! its requests.

use super::SBenchError;
use fairway_disk::engine::{huge_page_bufs, AlignedBuf, BUF_ALIGN, HUGE_PAGE};

/// Where the direct-I/O buffers live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Buffers {
    /// Transparent huge pages, a huge page's worth of buffers at a time.
    Huge,
    /// One heap block per buffer.
    Heap,
}

impl Buffers {
    /// A buffer of `len` bytes: one from `spare`, or new ones (a huge
    /// page's worth of them, the rest left in `spare`).
    pub fn take(self, spare: &mut Vec<AlignedBuf>, len: usize) -> Result<AlignedBuf, SBenchError> {
        if let Some(b) = spare.pop() {
            return Ok(b);
        }
        match self {
            Buffers::Heap => Ok(AlignedBuf::new(len)?),
            Buffers::Huge => {
                let per_page = (HUGE_PAGE / len.next_multiple_of(BUF_ALIGN)).max(1);
                let mut fresh = huge_page_bufs(len, per_page)?;
                // `per_page` is at least 1, and that many come back.
                let b = fresh.swap_remove(0);
                spare.append(&mut fresh);
                Ok(b)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_buffers_come_a_page_at_a_time_and_spares_go_first() {
        let mut spare = Vec::new();
        let b = Buffers::Huge.take(&mut spare, 128 << 10).unwrap();
        assert_eq!(b.len(), 128 << 10);
        assert_eq!(spare.len(), 15, "a huge page holds 16 of them");
        let again = Buffers::Huge.take(&mut spare, 128 << 10).unwrap();
        assert_eq!(spare.len(), 14);
        drop((b, again));
        let h = Buffers::Heap.take(&mut Vec::new(), 4096).unwrap();
        assert_eq!(h.len(), 4096);
    }
}
