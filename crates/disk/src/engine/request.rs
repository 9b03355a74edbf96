//! What the application submits ([`IoRequest`]) and what it gets back
//! ([`Completion`]). The buffer travels with the request and comes back in
//! its completion (or in the [`super::SubmitError`] that refused it): the
//! engine never copies data and never loses a buffer.

use super::buf::AlignedBuf;
use super::client::ClientId;
use super::error::IoError;
use super::target::TargetId;
use crate::request::Direction;
use std::time::Duration;

/// The engine's id of an accepted request, unique over the engine's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// One read or write.
#[derive(Debug)]
pub struct IoRequest {
    /// The issuing client.
    pub client: ClientId,
    /// The file or device.
    pub target: TargetId,
    /// Byte offset in the target (a multiple of the target's `align` for
    /// `O_DIRECT`).
    pub offset: u64,
    /// Bytes to transfer, `1..=buf.len()` (a multiple of the target's
    /// `align` for `O_DIRECT`); the request may span at most L_max = 256
    /// sectors of 512 bytes.
    pub len: u32,
    /// Read into `buf[..len]` or write `buf[..len]`.
    pub dir: Direction,
    /// Synchronous: the client waits for it before issuing what depends on
    /// it (reads, commits). A client's synchronous requests are dispatched
    /// in submission order: only its oldest undispatched one is in the
    /// scheduler at a time, the next joins as soon as it is dispatched, as
    /// the BFQ thesis models a synchronous application (§2.1). Asynchronous
    /// requests (write-back, prefetch) all go to the scheduler at once and
    /// it orders them (C-LOOK within the client).
    pub sync: bool,
    /// The buffer, handed back in the completion.
    pub buf: AlignedBuf,
    /// Caller's value, returned untouched in the completion.
    pub user_data: u64,
}

impl IoRequest {
    /// A synchronous read of `buf.len()` bytes at `offset`.
    pub fn read(client: ClientId, target: TargetId, offset: u64, buf: AlignedBuf) -> Self {
        Self {
            client,
            target,
            offset,
            len: buf.len() as u32,
            dir: Direction::Read,
            sync: true,
            buf,
            user_data: 0,
        }
    }

    /// A synchronous write of `buf` at `offset`.
    pub fn write(client: ClientId, target: TargetId, offset: u64, buf: AlignedBuf) -> Self {
        Self {
            dir: Direction::Write,
            ..Self::read(client, target, offset, buf)
        }
    }

    /// The same request, asynchronous.
    pub fn asynchronous(self) -> Self {
        Self {
            sync: false,
            ..self
        }
    }

    /// The same request transferring `len` bytes (of its buffer).
    pub fn with_len(self, len: u32) -> Self {
        Self { len, ..self }
    }

    /// The same request carrying `user_data`.
    pub fn with_user_data(self, user_data: u64) -> Self {
        Self { user_data, ..self }
    }
}

/// A finished request: every accepted request produces exactly one.
#[derive(Debug)]
pub struct Completion {
    /// The id [`super::Engine::submit`] returned.
    pub id: RequestId,
    /// The request's `user_data`.
    pub user_data: u64,
    /// The issuing client.
    pub client: ClientId,
    /// The target.
    pub target: TargetId,
    /// Byte offset.
    pub offset: u64,
    /// Bytes requested.
    pub len: u32,
    /// Read or write.
    pub dir: Direction,
    /// Whether it was synchronous.
    pub sync: bool,
    /// `Ok` when all `len` bytes were transferred.
    pub result: Result<(), IoError>,
    /// The buffer (for a successful read, holding the data).
    pub buf: AlignedBuf,
    /// From submission to completion.
    pub latency: Duration,
    /// From submission to the scheduler's first dispatch of it: the part
    /// of [`Completion::latency`] spent waiting in fairway's queues (the
    /// rest is the device's; all of it for a request never dispatched).
    pub queued: Duration,
}
