//! A worker's path to the device: [`Port`], one per thread (a greedy
//! reader or writer, or one process of the replayed application), made by
//! a [`Ports`] — the kernel's path ([`super::kernel`]: system calls on the
//! loop device) or fairway's ([`super::engine`]: one client of the
//! engine) — so the workers and the replay are the same code on both.

use super::SBenchError;
use std::sync::atomic::{AtomicU64, Ordering};

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read.
    Read,
    /// Write.
    Write,
}

/// One thread's I/O.
pub trait Port: Send {
    /// A synchronous `O_DIRECT` transfer of `len` bytes at `offset`.
    fn sync(&mut self, op: Op, offset: u64, len: u32) -> Result<(), SBenchError>;
    /// An asynchronous read (read-ahead), collected by [`Port::drain`].
    fn read_async(&mut self, offset: u64, len: u32) -> Result<(), SBenchError>;
    /// Waits for every asynchronous read issued.
    fn drain(&mut self) -> Result<(), SBenchError>;
    /// Waits for at least one asynchronous read issued (all of them where
    /// the port cannot tell which completed).
    fn wait_one(&mut self) -> Result<(), SBenchError> {
        self.drain()
    }
    /// A synchronous read of `len` bytes at `offset` through the page
    /// cache; only the kernel's side has one.
    fn read_buffered(&mut self, _offset: u64, _len: u32) -> Result<(), SBenchError> {
        Err(SBenchError::Submit(
            "reads through the page cache are the kernel's side only".into(),
        ))
    }
    /// Drops the page cache's copy of `len` bytes at `offset` (nothing
    /// where no read goes through the page cache).
    fn drop_cache(&mut self, _offset: u64, _len: u64) -> Result<(), SBenchError> {
        Ok(())
    }
}

/// Makes ports.
pub trait Ports {
    /// The port type.
    type P: Port + 'static;
    /// A new port (a new client, for the engine).
    fn port(&self) -> Result<Self::P, SBenchError>;
}

/// What the workers did, read between phases.
#[derive(Debug, Default)]
pub struct Counters {
    /// Bytes the greedy workers transferred.
    pub bytes: AtomicU64,
    /// Requests completed by anyone (workers and replay).
    pub requests: AtomicU64,
}

impl Counters {
    /// Counts one request of `bytes` (workers) or of none (replay).
    pub fn add(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed);
    }
    /// `(bytes, requests)` now.
    pub fn snapshot(&self) -> (u64, u64) {
        (
            self.bytes.load(Ordering::Relaxed),
            self.requests.load(Ordering::Relaxed),
        )
    }
}
