//! The greedy workers of S's `comm_startup_lat`: sequential readers,
//! random readers and sequential writers, each a thread issuing one
//! synchronous `O_DIRECT` request after another in its own region of the
//! device until told to stop. (S's are `fio` jobs on files through the
//! page cache; here the requests are direct, so the scheduler under test
//! sees every one of them.) A sequential reader may instead keep a batch
//! of `depth` reads in the device at once ([`MAX_READER_DEPTH`]), as the
//! page cache's read-ahead of S's readers does: it issues `depth`
//! consecutive 128 KiB reads asynchronously (native AIO on the kernel's
//! side, asynchronous engine requests on fairway's) and waits for all of
//! them before the next batch.

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

/// Starts a worker on `port` until `stop` is set; a sequential reader
/// reads `depth` requests at a time (`1..=MAX_READER_DEPTH`, 1:
/// synchronously, one by one).
pub fn spawn<P: Port + 'static>(
    kind: WorkerKind,
    depth: u32,
    mut port: P,
    region: Region,
    seed: u64,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
) -> Result<JoinHandle<Result<(), SBenchError>>, SBenchError> {
    let work = move || {
        let mut rng = Rng::new(seed);
        let mut off = 0u64;
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
