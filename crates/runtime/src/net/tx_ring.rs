//! The `AF_PACKET` back-end with a `TPACKET_V2` transmit ring
//! (`PACKET_TX_RING`): the frames are written into memory shared with the
//! kernel (an `mmap` of the socket) and one `send` call hands every frame
//! marked ready to the device — no per-frame copy from a user buffer, no
//! message headers. The ring is the kernel's closest equivalent of a netmap
//! TX ring (the PSPAT paper Fig. 7); it is measured against the `sendmmsg` path
//! ([`super::PacketSender`]) in the same run (`fairway udp-bench
//! --transport af-packet-ring`).
//!
//! ## The ring protocol (packet(7), `Documentation/networking/packet_mmap`)
//!
//! The ring is `FRAMES` slots of `FRAME_SIZE` bytes. Each slot starts with
//! a `tpacket2_hdr` whose first word, `tp_status`, says who owns the slot:
//!
//! * `TP_STATUS_AVAILABLE` (0): user space may fill it;
//! * `TP_STATUS_SEND_REQUEST` (1): filled, for the kernel to send;
//! * `TP_STATUS_SENDING` (2): the kernel built an skb from it and the skb
//!   is still alive (queued in the qdisc or travelling); the slot goes back
//!   to `AVAILABLE` when the skb is freed.
//!
//! The frame data starts `TPACKET_ALIGN(sizeof(tpacket2_hdr))` = 32 bytes
//! into the slot (the kernel's `tp_hdrlen − sizeof(sockaddr_ll)`), and
//! `tp_len` is its length. The sender fills slots in ring order with a
//! release store of `SEND_REQUEST` after the data (the kernel reads the
//! status, then the data), and kicks the kernel with
//! `send(fd, NULL, 0, MSG_DONTWAIT)` per batch: the kernel sends every
//! requested slot and returns without waiting for the skbs to be freed.
//! Reaching a slot that is not yet `AVAILABLE` again (the ring is full of
//! frames still held by the qdisc, e.g. HTB shaping), the sender calls a
//! blocking `send`, which waits (at most `SO_SNDTIMEO`) for the skbs to
//! complete.
//!
//! ## Accounting
//!
//! A frame is counted as sent once the kernel has taken it (its slot left
//! `SEND_REQUEST`). The ring holds [`RING_FRAMES`] = 256 frames, fewer than
//! the qdisc's queue limit (1000 packets per HTB class), so the qdisc never
//! drops a ring frame — a dropped frame whose skb is freed in the xmit call
//! is re-marked `SEND_REQUEST` by the kernel and sent again, which would
//! count one frame twice. [`RingSender::finish`] waits (bounded) until the
//! kernel has taken every requested frame and counts any it did not take
//! as refused.

use super::af_packet::{bound_packet_socket, frame_header, FrameAddrs};
use super::datagram::{monotonic_ns, Datagram, FRAME_LEN, PAYLOAD_LEN};
use super::send_delays::SendDelays;
use super::udp::SendCounters;
use crate::backend::Backend;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Bytes per ring slot: the 32-byte `tpacket2_hdr` (aligned) plus the
/// 60-byte frame, rounded up to a power of two that divides a page.
pub const RING_FRAME_SIZE: usize = 128;
/// Slots in the ring (see the module doc for why fewer than the qdisc's
/// 1000-packet queue).
pub const RING_FRAMES: usize = 256;
/// Bytes per ring block (one page; slots never straddle blocks).
const BLOCK_SIZE: usize = 4096;
/// Offset of the frame data in a slot: `TPACKET_ALIGN(sizeof(tpacket2_hdr))`.
const DATA_OFFSET: usize = 32;
const FRAME: usize = FRAME_LEN as usize;
const HEADERS: usize = FRAME - PAYLOAD_LEN;
/// `TPACKET_V2` of `enum tpacket_versions`.
const TPACKET_V2: libc::c_int = 1;
/// `tp_status` values (packet(7)).
const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_WRONG_FORMAT: u32 = 4;
/// Blocking sends a full ring may take before the frame is given up
/// (counted as refused): each waits at most the send timeout.
const MAX_FULL_RING_WAITS: u32 = 10;
/// How long `finish` waits for the kernel to take the last frames.
const FINISH_WAIT: Duration = Duration::from_millis(500);

// A slot holds the header and a frame; slots fill whole blocks.
const _: () = assert!(DATA_OFFSET + FRAME <= RING_FRAME_SIZE);
const _: () = assert!(BLOCK_SIZE.is_multiple_of(RING_FRAME_SIZE));
const _: () = assert!((RING_FRAMES * RING_FRAME_SIZE).is_multiple_of(BLOCK_SIZE));

/// The mapped ring; unmapped on drop.
struct Ring {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned by one RingSender, which is moved between
// threads but used by one at a time; the kernel's side is synchronised
// through the per-slot status words.
unsafe impl Send for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: base/len are exactly the mapping made in `RingSender::open`,
        // and no reference into it outlives the Ring.
        let _ = unsafe { nix::sys::mman::munmap(self.base.cast(), self.len) };
    }
}

impl Ring {
    /// The status word of slot `i`.
    fn status(&self, i: usize) -> &AtomicU32 {
        debug_assert!(i < RING_FRAMES);
        // SAFETY: slot i lies inside the mapping (i < RING_FRAMES, slots of
        // RING_FRAME_SIZE bytes, BLOCK_SIZE a multiple of it); tp_status is
        // its first, 4-byte-aligned u32, shared with the kernel, so it is
        // accessed atomically only.
        unsafe { &*(self.base.as_ptr().add(i * RING_FRAME_SIZE) as *const AtomicU32) }
    }

    /// Writes `frame` into slot `i` (which the caller owns: AVAILABLE) and
    /// sets its length.
    fn fill(&mut self, i: usize, header: &[u8; HEADERS], payload: &[u8; PAYLOAD_LEN]) {
        // SAFETY: the slot is inside the mapping and owned by user space
        // (status AVAILABLE, checked by the caller), so the kernel does not
        // read it concurrently; tp_len is the u32 at offset 4 of the header,
        // the data DATA_OFFSET + FRAME ≤ RING_FRAME_SIZE bytes in.
        unsafe {
            let slot = self.base.as_ptr().add(i * RING_FRAME_SIZE);
            std::ptr::write_volatile(slot.add(4) as *mut u32, FRAME_LEN);
            let data = slot.add(DATA_OFFSET);
            std::ptr::copy_nonoverlapping(header.as_ptr(), data, HEADERS);
            std::ptr::copy_nonoverlapping(payload.as_ptr(), data.add(HEADERS), PAYLOAD_LEN);
        }
    }
}

/// One client's raw packet socket with a `TPACKET_V2` TX ring.
pub struct RingSender {
    ring: Ring,
    // Declared after `ring`: the mapping is removed before the socket closes.
    fd: OwnedFd,
    header: [u8; HEADERS],
    /// The next slot to fill.
    head: usize,
    /// The oldest slot filled but not yet seen taken by the kernel.
    tail: usize,
    /// Slots filled and not yet seen taken (head − tail, mod the ring).
    requested: usize,
    /// Slots filled since the last kick.
    unkicked: usize,
    batch: usize,
    counters: SendCounters,
    /// Submit → kick and → seen taken, if enabled with
    /// [`RingSender::record_delays`].
    delays: Option<SendDelays>,
    /// The submit time of the frame in each slot (while recording).
    submits: Vec<u64>,
}

impl RingSender {
    /// A raw `AF_PACKET` socket on device `ifindex` (in the calling
    /// thread's namespace) with a 256-slot TX ring, sending frames with
    /// `addrs`' headers, kicking the kernel every `batch` frames
    /// (`1..=RING_FRAMES`), tagged with `SO_PRIORITY` = `priority` if given;
    /// a full ring waits at most `send_timeout` per blocking send.
    pub fn open(
        ifindex: u32,
        addrs: FrameAddrs,
        batch: usize,
        priority: Option<u32>,
        send_timeout: Duration,
    ) -> io::Result<Self> {
        if batch == 0 || batch > RING_FRAMES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("batch {batch} outside 1..={RING_FRAMES} (the TX ring's slots)"),
            ));
        }
        let fd = bound_packet_socket(ifindex, priority)?;
        nix::sys::socket::setsockopt(
            &fd,
            nix::sys::socket::sockopt::SendTimeout,
            &nix::sys::time::TimeVal::new(
                send_timeout.as_secs() as _,
                send_timeout.subsec_micros() as _,
            ),
        )
        .map_err(io::Error::from)?;
        let version: libc::c_int = TPACKET_V2;
        let req = libc::tpacket_req {
            tp_block_size: BLOCK_SIZE as u32,
            tp_block_nr: (RING_FRAMES * RING_FRAME_SIZE / BLOCK_SIZE) as u32,
            tp_frame_size: RING_FRAME_SIZE as u32,
            tp_frame_nr: RING_FRAMES as u32,
        };
        // SAFETY: plain setsockopt calls with correctly sized option values
        // (nix has no PACKET_VERSION / PACKET_TX_RING options).
        unsafe {
            if libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_VERSION,
                (&version as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_TX_RING,
                (&req as *const libc::tpacket_req).cast(),
                std::mem::size_of::<libc::tpacket_req>() as libc::socklen_t,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        let len = RING_FRAMES * RING_FRAME_SIZE;
        let nz = std::num::NonZeroUsize::new(len).ok_or_else(|| io::Error::other("empty ring"))?;
        // SAFETY: maps the ring the kernel just allocated for this socket,
        // shared, at offset 0, exactly its size; the Ring owns the mapping.
        let base = unsafe {
            nix::sys::mman::mmap(
                None,
                nz,
                nix::sys::mman::ProtFlags::PROT_READ | nix::sys::mman::ProtFlags::PROT_WRITE,
                nix::sys::mman::MapFlags::MAP_SHARED,
                &fd,
                0,
            )
        }
        .map_err(io::Error::from)?;
        Ok(Self {
            ring: Ring {
                base: base.cast(),
                len,
            },
            fd,
            header: frame_header(&addrs),
            head: 0,
            tail: 0,
            requested: 0,
            unkicked: 0,
            batch,
            counters: SendCounters::default(),
            delays: None,
            submits: Vec::new(),
        })
    }

    /// Records the submit → send delay of every frame from now on, as
    /// [`UdpSender::record_delays`](super::UdpSender::record_delays): the
    /// call delay when the kick that first covers the frame starts, the
    /// send delay when, after a kick returns, its slot is seen taken by the
    /// kernel (a frame taken by an earlier non-blocking kick and seen only
    /// after a later one is counted late, never early).
    pub fn record_delays(&mut self) {
        self.delays = Some(SendDelays::new());
        self.submits = vec![0; RING_FRAMES];
    }

    /// The recorded delays, if enabled.
    pub fn delays(&self) -> Option<&SendDelays> {
        self.delays.as_ref()
    }

    /// From now on frames go straight to the driver, past any qdisc
    /// (`PACKET_QDISC_BYPASS`; see `af_packet::set_qdisc_bypass`).
    pub fn bypass_qdisc(&mut self) -> io::Result<()> {
        super::af_packet::set_qdisc_bypass(&self.fd)
    }

    /// The counters so far (frames taken by the kernel are `sent`).
    pub fn counters(&self) -> SendCounters {
        self.counters
    }

    /// Counts the slots the kernel has taken since the last look.
    fn reap(&mut self) {
        let now = if self.delays.is_some() {
            monotonic_ns()
        } else {
            0
        };
        while self.requested > 0 {
            let status = self.ring.status(self.tail);
            match status.load(Ordering::Acquire) {
                TP_STATUS_SEND_REQUEST => break,
                // A frame the kernel rejected (never with our fixed-size
                // frames): not sent; the slot is returned to user space.
                TP_STATUS_WRONG_FORMAT => {
                    self.counters.refused += 1;
                    status.store(TP_STATUS_AVAILABLE, Ordering::Release);
                }
                _ => {
                    self.counters.sent += 1;
                    if let (Some(h), Some(&t)) = (self.delays.as_mut(), self.submits.get(self.tail))
                    {
                        h.call_returned(now, [t]);
                    }
                }
            }
            self.tail = (self.tail + 1) % RING_FRAMES;
            self.requested -= 1;
        }
    }

    /// Asks the kernel to send every requested slot; `wait`: block until
    /// their skbs are freed (at most the send timeout).
    fn kick(&mut self, wait: bool) {
        let flags = if wait {
            nix::sys::socket::MsgFlags::empty()
        } else {
            nix::sys::socket::MsgFlags::MSG_DONTWAIT
        };
        self.counters.calls += 1;
        if let Some(h) = self.delays.as_mut() {
            // The frames this kick is the first to cover: the last
            // `unkicked` slots before `head`.
            let first = (self.head + RING_FRAMES - self.unkicked) % RING_FRAMES;
            let submits = &self.submits;
            h.call_starts(
                monotonic_ns(),
                (0..self.unkicked).filter_map(|i| submits.get((first + i) % RING_FRAMES).copied()),
            );
        }
        // Errors (EAGAIN: socket memory full; ETIMEDOUT/EINTR while waiting)
        // leave slots requested: they are sent by a later kick, or counted
        // as refused by `finish`.
        let _ = nix::sys::socket::send(self.fd.as_raw_fd(), &[], flags);
        self.unkicked = 0;
        self.reap();
    }

    /// Puts one frame in the ring; kicks the kernel every `batch` frames.
    fn push(&mut self, d: &Datagram) {
        // The slot must be ours again: the kernel freed its last skb.
        let mut waits = 0;
        while self.ring.status(self.head).load(Ordering::Acquire) != TP_STATUS_AVAILABLE {
            if waits == MAX_FULL_RING_WAITS || crate::net::interrupted() {
                // The kernel holds the whole ring that long (or Ctrl-C):
                // give the frame up, counted.
                self.counters.refused += 1;
                return;
            }
            self.kick(true);
            waits += 1;
        }
        self.ring.fill(self.head, &self.header, &d.payload);
        if let Some(t) = self.submits.get_mut(self.head) {
            *t = d.submit_ns();
        }
        self.ring
            .status(self.head)
            .store(TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.head = (self.head + 1) % RING_FRAMES;
        self.requested += 1;
        self.unkicked += 1;
        if self.unkicked >= self.batch {
            self.kick(false);
        }
    }

    /// Sends `datagrams` now (kicking the kernel at the end).
    pub fn send_now(&mut self, datagrams: &[Datagram]) {
        for d in datagrams {
            self.push(d);
        }
        if self.unkicked > 0 {
            self.kick(false);
        }
    }

    /// Waits (at most 0.5 s) until the kernel has taken every requested
    /// frame; frames it did not take are counted as refused and withdrawn.
    /// Returns the final counters.
    pub fn finish(&mut self) -> SendCounters {
        let end = std::time::Instant::now() + FINISH_WAIT;
        self.kick(false);
        while self.requested > 0 && std::time::Instant::now() < end {
            self.kick(true);
        }
        // Whatever the kernel has not taken is withdrawn: the status stays
        // SEND_REQUEST but the socket closes before another kick.
        self.counters.refused += self.requested as u64;
        self.requested = 0;
        self.counters
    }
}

impl Backend<Datagram> for RingSender {
    #[inline]
    fn transmit(&mut self, packet: Datagram) {
        self.push(&packet);
    }

    fn flush(&mut self) {
        if self.unkicked > 0 {
            self.kick(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_data_starts_after_the_aligned_tpacket2_header() {
        let hdr = std::mem::size_of::<libc::tpacket2_hdr>();
        assert_eq!((hdr + 15) & !15, DATA_OFFSET);
        assert_eq!(
            TPACKET_V2,
            libc::tpacket_versions::TPACKET_V2 as libc::c_int
        );
    }
}
