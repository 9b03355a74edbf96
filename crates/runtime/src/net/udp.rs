//! The UDP back-end: one connected socket per client (the PSPAT paper §5.2
//! "different destination ports to avoid contention"), packets batched into
//! one `sendmmsg` call per `drain()` (or per burst of a direct sender).
//!
//! A refused datagram (`ENOBUFS`, or the send timeout expiring on a full
//! socket buffer) is counted in [`SendCounters::refused`] and not retried:
//! it never reached the kernel's queues, so it is not "sent" and the
//! receiver's accounting (sent = received + counted drops) excludes it.

use super::datagram::{monotonic_ns, Datagram};
use super::send_delays::SendDelays;
use crate::backend::Backend;
use nix::sys::socket::{sendmmsg, MsgFlags, MultiHeaders, SockaddrIn};
use std::io::{self, IoSlice};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::time::Duration;

/// Largest `sendmmsg` batch (Linux caps one call at `UIO_MAXIOV` = 1024).
pub const MAX_BATCH: usize = 1024;

/// What a sender did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendCounters {
    /// Datagrams the kernel accepted.
    pub sent: u64,
    /// Datagrams the kernel refused (not retried, not sent).
    pub refused: u64,
    /// `sendmmsg` calls made.
    pub calls: u64,
}

/// Sends batches of datagrams with `sendmmsg` on any datagram socket.
///
/// nix's `MultiHeaders` holds raw pointers, so it is not `Send`; it is
/// built per call (two small allocations per batch, against a system call
/// that copies the whole batch), which keeps the sender movable to its
/// client thread without an `unsafe impl Send`.
pub(crate) struct MmsgBatcher {
    addrs: Vec<Option<SockaddrIn>>,
}

impl MmsgBatcher {
    pub(crate) fn new(batch: usize) -> Self {
        Self {
            addrs: vec![None; batch],
        }
    }

    /// Sends `frames` (at most the batch size) on the connected/bound
    /// socket `fd`; returns (accepted, refused). A message the kernel
    /// refuses is skipped and counted; the rest of the batch is retried
    /// from the next one.
    pub(crate) fn send(&mut self, fd: BorrowedFd<'_>, frames: &[&[u8]]) -> (u64, u64, u64) {
        let (mut sent, mut refused, mut calls) = (0u64, 0u64, 0u64);
        let mut start = 0;
        while start < frames.len() {
            let iovs: Vec<[IoSlice<'_>; 1]> =
                frames[start..].iter().map(|f| [IoSlice::new(f)]).collect();
            calls += 1;
            let mut headers = MultiHeaders::<SockaddrIn>::preallocate(iovs.len(), None);
            match sendmmsg(
                fd.as_raw_fd(),
                &mut headers,
                &iovs,
                &self.addrs[..iovs.len()],
                [],
                MsgFlags::empty(),
            ) {
                Ok(res) => {
                    let n = res.count();
                    sent += n as u64;
                    start += n;
                    if n == 0 {
                        // Nothing accepted and no error: count the head as
                        // refused so the loop always progresses.
                        refused += 1;
                        start += 1;
                    }
                }
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => {
                    refused += 1;
                    start += 1;
                }
            }
        }
        (sent, refused, calls)
    }
}

/// One client's UDP socket, batching with `sendmmsg`.
pub struct UdpSender {
    socket: UdpSocket,
    batcher: MmsgBatcher,
    pending: Vec<Datagram>,
    batch: usize,
    counters: SendCounters,
    /// Submit → `sendmmsg` call and return, if enabled with
    /// [`UdpSender::record_delays`].
    delays: Option<SendDelays>,
}

impl UdpSender {
    /// A socket connected to `peer`, batching up to `batch` datagrams
    /// (`1..=MAX_BATCH`), tagged with `SO_PRIORITY` = `priority` if given
    /// (HTB then classifies the packets into the class with that id without
    /// any filter), and whose sends give up after `send_timeout` on a full
    /// socket buffer. Call inside the sender's network namespace
    /// (`fairway_lab::testbed::Testbed::in_sender_ns`).
    pub fn connect(
        peer: SocketAddr,
        batch: usize,
        priority: Option<u32>,
        send_timeout: Duration,
    ) -> io::Result<Self> {
        if batch == 0 || batch > MAX_BATCH {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("batch {batch} outside 1..={MAX_BATCH}"),
            ));
        }
        let socket = UdpSocket::bind(SocketAddr::from(([0, 0, 0, 0], 0)))?;
        socket.connect(peer)?;
        socket.set_write_timeout(Some(send_timeout))?;
        if let Some(p) = priority {
            nix::sys::socket::setsockopt(&socket, nix::sys::socket::sockopt::Priority, &(p as i32))
                .map_err(io::Error::from)?;
        }
        Ok(Self {
            socket,
            batcher: MmsgBatcher::new(batch),
            pending: Vec::with_capacity(batch),
            batch,
            counters: SendCounters::default(),
            delays: None,
        })
    }

    /// Records the submit → send delay of every datagram from now on (the
    /// scheduling delay that the PSPAT paper Eq. (1) bounds), and the submit →
    /// `sendmmsg` call delay ([`SendDelays::call`]).
    pub fn record_delays(&mut self) {
        self.delays = Some(SendDelays::new());
    }

    /// The recorded delays, if enabled.
    pub fn delays(&self) -> Option<&SendDelays> {
        self.delays.as_ref()
    }

    /// The counters so far.
    pub fn counters(&self) -> SendCounters {
        self.counters
    }

    /// The local port (tells flows apart in the kernel's tables).
    pub fn local_port(&self) -> io::Result<u16> {
        Ok(self.socket.local_addr()?.port())
    }

    /// Sends `datagrams` now, in batches.
    pub fn send_now(&mut self, datagrams: &[Datagram]) {
        for chunk in datagrams.chunks(self.batch) {
            let frames: Vec<&[u8]> = chunk.iter().map(|d| &d.payload[..]).collect();
            if let Some(h) = self.delays.as_mut() {
                h.datagrams_call_starts(monotonic_ns(), chunk);
            }
            let (s, r, c) = self.batcher.send(self.socket.as_fd(), &frames);
            self.counters.sent += s;
            self.counters.refused += r;
            self.counters.calls += c;
            if let Some(h) = self.delays.as_mut() {
                h.datagrams_call_returned(monotonic_ns(), chunk);
            }
        }
    }
}

impl Backend<Datagram> for UdpSender {
    #[inline]
    fn transmit(&mut self, packet: Datagram) {
        self.pending.push(packet);
        if self.pending.len() >= self.batch {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        self.send_now(&pending);
        self.pending = pending;
        self.pending.clear();
    }
}
