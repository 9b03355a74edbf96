//! The greedy workers of S's `comm_startup_lat`: sequential readers,
//! random readers and sequential writers, each a thread issuing its
//! requests in its own region of the device until told to stop.
//!
//! S's readers are `fio` jobs with fio's defaults: one thread each,
//! synchronous 4 KiB `read`s through the page cache, so what reaches the
//! device is what the kernel's read-ahead makes of them. By default
//! ([`SeqReads::Buffered`]) the kernel's columns do just that on the loop
//! device's page cache; fairway's engine takes only direct I/O, so its
//! readers keep the depth and request size measured on the kernel's side
//! ([`SeqReads::Pipelined`], see [`super::load`]). [`SeqReads::Batch`] is
//! the `--reader-depth` override: batches of direct 128 KiB reads on both
//! sides. Random readers and writers issue one synchronous `O_DIRECT`
//! request after another.

use super::port::{Counters, Op, Port};
use super::SBenchError;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A sequential worker's request: 128 KiB, the largest the engine takes.
pub const SEQ_BYTES: u32 = 128 << 10;
/// A random reader's request: one 4 KiB page.
pub const RAND_BYTES: u32 = 4 << 10;
/// Most reads a sequential reader keeps in the device at once: 64 × 128
/// KiB = 8 MiB, beyond any read-ahead window Linux opens by default.
pub const MAX_READER_DEPTH: u32 = 64;

/// What a greedy worker does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerKind {
    /// Reads its region from start to end, over and over.
    SeqReader,
    /// Reads 4 KiB pages at random places of its region.
    RandReader,
    /// Writes its region from start to end, over and over.
    SeqWriter,
}

/// A small xorshift generator: the random readers' and the replay's
/// random offsets, seeded so runs are repeatable.
pub struct Rng(u64);

impl Rng {
    /// Seeded with `seed` (any value).
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Where a worker works: `len` bytes from `base`.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    /// First byte.
    pub base: u64,
    /// Bytes (a multiple of [`SEQ_BYTES`]).
    pub len: u64,
}

/// How a sequential reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SeqReads {
    /// S's: synchronous [`BUFFERED_BYTES`] reads through the page cache
    /// (the kernel's side only).
    Buffered,
    /// `depth` direct reads of `bytes` kept outstanding all the time: a
    /// new one as soon as one completes.
    Pipelined {
        /// Reads outstanding, `1..=MAX_READER_DEPTH`.
        depth: u32,
        /// Bytes per read, a multiple of 4 KiB up to [`SEQ_BYTES`].
        bytes: u32,
    },
    /// Batches of `depth` direct [`SEQ_BYTES`] reads issued together and
    /// waited for together (1: one synchronous read after another).
    Batch {
        /// Reads per batch, `1..=MAX_READER_DEPTH`.
        depth: u32,
    },
}

/// A buffered reader's `read`: fio's default block size.
pub const BUFFERED_BYTES: u32 = 4 << 10;

/// Starts a worker on `port` until `stop` is set; a sequential reader
/// reads as `reads` says.
pub fn spawn<P: Port + 'static>(
    kind: WorkerKind,
    reads: SeqReads,
    mut port: P,
    region: Region,
    seed: u64,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
) -> Result<JoinHandle<Result<(), SBenchError>>, SBenchError> {
    let work = move || {
        let mut rng = Rng::new(seed);
        let mut off = 0u64;
        if kind == WorkerKind::SeqReader {
            match reads {
                SeqReads::Buffered => return buffered(&mut port, region, &stop, &counters),
                SeqReads::Pipelined { depth, bytes } => {
                    return pipelined(&mut port, region, depth, bytes, &stop, &counters)
                }
                SeqReads::Batch { .. } => {}
            }
        }
        let depth = match reads {
            SeqReads::Batch { depth } => depth,
            _ => 1,
        };
        while !stop.load(Ordering::Relaxed) {
            if kind == WorkerKind::SeqReader && depth > 1 {
                for _ in 0..depth {
                    port.read_async(region.base + off, SEQ_BYTES)?;
                    off = (off + u64::from(SEQ_BYTES)) % region.len;
                }
                port.drain()?;
                for _ in 0..depth {
                    counters.add(u64::from(SEQ_BYTES));
                }
                continue;
            }
            let (op, at, len) = match kind {
                WorkerKind::SeqReader | WorkerKind::SeqWriter => {
                    let at = off;
                    off = (off + u64::from(SEQ_BYTES)) % region.len;
                    let op = if kind == WorkerKind::SeqWriter {
                        Op::Write
                    } else {
                        Op::Read
                    };
                    (op, at, SEQ_BYTES)
                }
                WorkerKind::RandReader => {
                    let pages = region.len / u64::from(RAND_BYTES);
                    (
                        Op::Read,
                        rng.below(pages) * u64::from(RAND_BYTES),
                        RAND_BYTES,
                    )
                }
            };
            port.sync(op, region.base + at, len)?;
            counters.add(u64::from(len));
        }
        Ok(())
    };
    std::thread::Builder::new()
        .name("s-bench-worker".into())
        .spawn(work)
        .map_err(|e| SBenchError::Io {
            what: "spawning a worker".into(),
            source: e,
        })
}

/// S's reader: 4 KiB reads through the page cache from start to end of
/// the region, over and over. The region's cached pages are dropped at
/// each wrap, so every pass reads the device again (the host has memory
/// enough to cache every region, and a cached pass would not load the
/// device at all).
fn buffered<P: Port>(
    port: &mut P,
    region: Region,
    stop: &AtomicBool,
    counters: &Counters,
) -> Result<(), SBenchError> {
    let mut off = 0u64;
    port.drop_cache(region.base, region.len)?;
    while !stop.load(Ordering::Relaxed) {
        port.read_buffered(region.base + off, BUFFERED_BYTES)?;
        counters.add(u64::from(BUFFERED_BYTES));
        off += u64::from(BUFFERED_BYTES);
        if off >= region.len {
            off = 0;
            port.drop_cache(region.base, region.len)?;
        }
    }
    Ok(())
}

/// `depth` direct reads of `bytes` outstanding all the time, from start
/// to end of the region, over and over.
fn pipelined<P: Port>(
    port: &mut P,
    region: Region,
    depth: u32,
    bytes: u32,
    stop: &AtomicBool,
    counters: &Counters,
) -> Result<(), SBenchError> {
    let mut off = 0u64;
    let mut next = |port: &mut P| {
        let at = off;
        off += u64::from(bytes);
        if off + u64::from(bytes) > region.len {
            off = 0;
        }
        port.read_async(region.base + at, bytes)
    };
    for _ in 0..depth {
        next(port)?;
    }
    while !stop.load(Ordering::Relaxed) {
        port.wait_one()?;
        counters.add(u64::from(bytes));
        next(port)?;
    }
    port.drain()
}
