//! The ring back-end (`io = "ring"`, the default): a TPACKET_V3
//! memory-mapped receive ring per interface, sends batched with
//! `sendmmsg`.
//!
//! The kernel writes received frames into *blocks* of a ring shared with
//! the shaper and hands a block over (its status `TP_STATUS_USER`) when
//! it is full or its timeout passes; the shaper walks the block's frames
//! and gives the block back (`TP_STATUS_KERNEL`). No system call per
//! received frame, and the socket polls readable once per block.
//!
//! - **Copied, not held.** Each frame is copied into a pool slot and the
//!   block is given back as soon as its last frame is read. A shaped
//!   frame waits for its circuit's turn (up to FQ-CoDel's 100 ms), and a
//!   block can only go back when every frame in it is gone: holding
//!   frames in the ring would starve it of blocks behind one slow
//!   circuit. The copy is one cache-warm `memcpy` per frame.
//! - **Latency.** A block that is not full goes to the shaper when its
//!   timeout passes: [`BLOCK_TIMEOUT_MS`], the least the kernel takes.
//!   Under load blocks fill long before.
//! - **Metadata.** Each frame's header gives its true length
//!   (`tp_len`; longer than what was captured only for frames beyond the
//!   block, reported so and dropped as too large), the VLAN tag the
//!   kernel stripped (`tp_vlan_tci`, valid with `TP_STATUS_VLAN_VALID`),
//!   put back into the copy, and its packet type (in the `sockaddr_ll`
//!   after the header): `PACKET_OUTGOING` is skipped.
//! - **Drops.** The kernel counts frames it found no room for in the ring
//!   (`PACKET_STATISTICS`), reported per interface.
//! - **Sending.** Frames of one turn leave by one `sendmmsg` per
//!   interface; a frame the kernel refuses is counted as a failed send
//!   and the rest go on.

use super::port::{setsockopt, Port, PortError, SendBatch, Socket};
use super::run::BATCH;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// How long the kernel fills a block before handing it over anyway, ms.
pub const BLOCK_TIMEOUT_MS: u32 = 1;
/// Blocks in a ring.
pub const BLOCKS: u32 = 64;
/// The smallest block, bytes: a few thousand 64-byte frames.
pub const MIN_BLOCK_BYTES: u32 = 1 << 18;
/// TPACKET_V3 packs frames of any size into a block; `tp_frame_size`
/// only has to divide the block and hold a header.
const FRAME_BYTES: u32 = 2048;

const TPACKET_V3: libc::c_int = 2;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const PACKET_OUTGOING: u8 = 4;
/// Offsets in `struct tpacket_block_desc` (version, offset_to_priv, then
/// `tpacket_hdr_v1`).
const BLOCK_STATUS: usize = 8;
const BLOCK_NUM_PKTS: usize = 12;
const BLOCK_FIRST: usize = 16;
/// Offsets in `struct tpacket3_hdr`.
const FRAME_NEXT: usize = 0;
const FRAME_SNAPLEN: usize = 12;
const FRAME_LEN: usize = 16;
const FRAME_STATUS: usize = 20;
const FRAME_MAC: usize = 24;
const FRAME_VLAN_TCI: usize = 32;
const FRAME_VLAN_TPID: usize = 36;
/// `sll_pkttype` of the `sockaddr_ll` at TPACKET_ALIGN(sizeof header).
const FRAME_PKTTYPE: usize = 48 + 10;

/// The ring's shape for frames up to `max_frame` bytes: block bytes and
/// block count. A block holds at least two of the longest frames.
pub fn geometry(max_frame: usize) -> (u32, u32) {
    let need = (2 * (max_frame + 128)).next_power_of_two();
    (MIN_BLOCK_BYTES.max(need as u32), BLOCKS)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

/// Where a block's frames are: the first's offset and their number.
pub fn block_frames(block: &[u8]) -> Option<(usize, u32)> {
    Some((
        u32_at(block, BLOCK_FIRST)? as usize,
        u32_at(block, BLOCK_NUM_PKTS)?,
    ))
}

/// One frame's header in a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Offset of the next frame from this one.
    pub next: u32,
    /// Bytes captured.
    pub snaplen: u32,
    /// The frame's true length.
    pub len: u32,
    /// Offset of the frame's bytes from its header.
    pub mac: u16,
    /// The tag the kernel stripped: TPID and TCI.
    pub vlan: Option<(u16, u16)>,
    /// The packet type (`PACKET_HOST`, `PACKET_OUTGOING`, …).
    pub pkttype: u8,
}

/// The header of the frame at offset `at` of `block`; `None` if it does
/// not lie inside the block.
pub fn frame_header(block: &[u8], at: usize) -> Option<FrameHeader> {
    let h = block.get(at..)?;
    let status = u32_at(h, FRAME_STATUS)?;
    let vlan = (status & TP_STATUS_VLAN_VALID != 0).then(|| {
        let tci = u32_at(h, FRAME_VLAN_TCI).unwrap_or(0) as u16;
        let tpid = match status & TP_STATUS_VLAN_TPID_VALID {
            0 => 0x8100,
            _ => u16_at(h, FRAME_VLAN_TPID).unwrap_or(0x8100),
        };
        (tpid, tci)
    });
    Some(FrameHeader {
        next: u32_at(h, FRAME_NEXT)?,
        snaplen: u32_at(h, FRAME_SNAPLEN)?,
        len: u32_at(h, FRAME_LEN)?,
        mac: u16_at(h, FRAME_MAC)?,
        vlan,
        pkttype: *h.get(FRAME_PKTTYPE)?,
    })
}

/// Copies the frame of header `f` at offset `at` of `block` into `buf`,
/// its VLAN tag put back after the MAC addresses: the frame's true
/// length (more than `buf.len()` if it does not fit; then the bytes that
/// fit are copied, for classification). `None` if the captured bytes do
/// not lie inside the block.
pub fn copy_frame(block: &[u8], at: usize, f: &FrameHeader, buf: &mut [u8]) -> Option<usize> {
    let start = at + usize::from(f.mac);
    let data = block.get(start..start + f.snaplen as usize)?;
    let Some((tpid, tci)) = f.vlan.filter(|_| data.len() >= 12) else {
        let n = data.len().min(buf.len());
        buf[..n].copy_from_slice(&data[..n]);
        return Some(f.len as usize);
    };
    let mut tag = [0u8; 4];
    tag[..2].copy_from_slice(&tpid.to_be_bytes());
    tag[2..].copy_from_slice(&tci.to_be_bytes());
    let parts: [&[u8]; 3] = [&data[..12], &tag, &data[12..]];
    let mut w = 0;
    for p in parts {
        let n = p.len().min(buf.len() - w);
        buf[w..w + n].copy_from_slice(&p[..n]);
        w += n;
    }
    Some(f.len as usize + 4)
}

/// The mapped ring.
struct Ring {
    base: *mut u8,
    block_bytes: usize,
    blocks: usize,
}

// SAFETY: the mapping belongs to this `Ring` alone (no other handle to
// it exists), so moving it to another thread moves its only user.
unsafe impl Send for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `RingPort::open`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.block_bytes * self.blocks) };
    }
}

impl Ring {
    fn status(&self, block: usize) -> &AtomicU32 {
        // SAFETY: the block's status word lies inside the mapping, is
        // 4-aligned (blocks are page-aligned) and is shared with the
        // kernel, so it is only accessed atomically.
        unsafe {
            &*self
                .base
                .add(block * self.block_bytes + BLOCK_STATUS)
                .cast::<AtomicU32>()
        }
    }

    /// Block `block`'s bytes if the kernel handed it over.
    fn user_block(&self, block: usize) -> Option<&[u8]> {
        if self.status(block).load(Ordering::Acquire) & TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the kernel does not write a block the shaper owns until
        // it is given back (`release`), and the Acquire load above orders
        // the kernel's writes before these reads.
        Some(unsafe {
            std::slice::from_raw_parts(self.base.add(block * self.block_bytes), self.block_bytes)
        })
    }

    fn release(&self, block: usize) {
        self.status(block)
            .store(TP_STATUS_KERNEL, Ordering::Release);
    }
}

/// An interface's packet socket with a receive ring.
pub struct RingPort {
    sock: Socket,
    ring: Ring,
    /// The block being read, and where in it: the next frame's offset
    /// and the frames left (`None`: wait for block `block`).
    block: usize,
    cursor: Option<(usize, u32)>,
    tx: SendBatch,
}

impl RingPort {
    /// Opens interface `name`: a packet socket with a TPACKET_V3 ring
    /// sized for its MTU, bound to it, promiscuous, nonblocking. Needs
    /// CAP_NET_RAW.
    pub fn open(name: &str) -> Result<RingPort, PortError> {
        let sock = Socket::new(name)?;
        let raw = sock.fd.as_raw_fd();
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_VERSION, &TPACKET_V3)
            .map_err(|e| sock.err("TPACKET_V3", e))?;
        let (block_bytes, blocks) = geometry(super::pool::max_frame(sock.mtu));
        let req = libc::tpacket_req3 {
            tp_block_size: block_bytes,
            tp_block_nr: blocks,
            tp_frame_size: FRAME_BYTES,
            tp_frame_nr: block_bytes / FRAME_BYTES * blocks,
            tp_retire_blk_tov: BLOCK_TIMEOUT_MS,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
            .map_err(|e| sock.err("receive ring (PACKET_RX_RING)", e))?;
        let len = block_bytes as usize * blocks as usize;
        // SAFETY: maps the ring just set up on this socket; the mapping
        // is owned by `Ring` and unmapped on drop.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                raw,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(sock.err("mapping the ring", io::Error::last_os_error()));
        }
        let ring = Ring {
            base: base.cast(),
            block_bytes: block_bytes as usize,
            blocks: blocks as usize,
        };
        sock.bind()?;
        Ok(RingPort {
            sock,
            ring,
            block: 0,
            cursor: None,
            tx: SendBatch::new(BATCH),
        })
    }
}

impl Port for RingPort {
    fn name(&self) -> &str {
        &self.sock.name
    }

    fn raw_fd(&self) -> RawFd {
        self.sock.fd.as_raw_fd()
    }

    fn mtu(&self) -> u32 {
        self.sock.mtu
    }

    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            let Some(block) = self.ring.user_block(self.block) else {
                return Ok(None);
            };
            let (at, left) = match self.cursor {
                Some(c) => c,
                None => block_frames(block).unwrap_or((0, 0)),
            };
            let header = (left > 0).then(|| frame_header(block, at)).flatten();
            let Some(f) = header else {
                // Every frame read (or a header that cannot be): the
                // block goes back to the kernel.
                self.ring.release(self.block);
                self.block = (self.block + 1) % self.ring.blocks;
                self.cursor = None;
                continue;
            };
            self.cursor = Some((at + f.next as usize, left - 1));
            if f.pkttype == PACKET_OUTGOING {
                continue;
            }
            if let Some(len) = copy_frame(block, at, &f, buf) {
                return Ok(Some(len));
            }
        }
    }

    fn send(&mut self, frames: &[&[u8]], ok: &mut [bool]) {
        let fd = self.sock.fd.as_raw_fd();
        self.tx.send(fd, frames, ok);
    }

    fn kernel_drops(&mut self) -> u64 {
        self.sock.kernel_drops()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block as the kernel writes it: frames `(bytes, vlan, pkttype)`
    /// one after the other, 16-byte aligned.
    /// A frame written into a test block: bytes, stripped tag, packet type.
    type Written<'a> = (&'a [u8], Option<(u16, u16)>, u8);

    fn block(frames: &[Written<'_>]) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        let first = 48usize;
        b[BLOCK_STATUS..BLOCK_STATUS + 4].copy_from_slice(&TP_STATUS_USER.to_ne_bytes());
        b[BLOCK_NUM_PKTS..BLOCK_NUM_PKTS + 4].copy_from_slice(&(frames.len() as u32).to_ne_bytes());
        b[BLOCK_FIRST..BLOCK_FIRST + 4].copy_from_slice(&(first as u32).to_ne_bytes());
        let mut at = first;
        for (k, (bytes, vlan, pkttype)) in frames.iter().enumerate() {
            let mac = 80u16;
            let size = (usize::from(mac) + bytes.len()).div_ceil(16) * 16;
            let next = if k + 1 == frames.len() {
                0
            } else {
                size as u32
            };
            let put = |b: &mut Vec<u8>, off: usize, v: &[u8]| {
                b[at + off..at + off + v.len()].copy_from_slice(v)
            };
            put(&mut b, FRAME_NEXT, &next.to_ne_bytes());
            put(&mut b, FRAME_SNAPLEN, &(bytes.len() as u32).to_ne_bytes());
            put(&mut b, FRAME_LEN, &(bytes.len() as u32).to_ne_bytes());
            let mut status = TP_STATUS_USER;
            if let Some((tpid, tci)) = vlan {
                status |= TP_STATUS_VLAN_VALID;
                if *tpid != 0x8100 {
                    status |= TP_STATUS_VLAN_TPID_VALID;
                }
                put(&mut b, FRAME_VLAN_TCI, &u32::from(*tci).to_ne_bytes());
                put(&mut b, FRAME_VLAN_TPID, &tpid.to_ne_bytes());
            }
            put(&mut b, FRAME_STATUS, &status.to_ne_bytes());
            put(&mut b, FRAME_MAC, &mac.to_ne_bytes());
            put(&mut b, FRAME_PKTTYPE, &[*pkttype]);
            put(&mut b, usize::from(mac), bytes);
            at += size;
        }
        b
    }

    fn eth(n: usize, ethertype: [u8; 2]) -> Vec<u8> {
        let mut f = vec![0xaa; 6];
        f.extend([0xbb; 6]);
        f.extend(ethertype);
        f.extend((0..n - 14).map(|i| i as u8));
        f
    }

    /// Reads every frame of a block as `recv` does.
    fn read_all(b: &[u8], buf_len: usize) -> Vec<(usize, Vec<u8>, u8)> {
        let (mut at, n) = block_frames(b).unwrap();
        let mut out = Vec::new();
        for _ in 0..n {
            let f = frame_header(b, at).unwrap();
            let mut buf = vec![0u8; buf_len];
            let len = copy_frame(b, at, &f, &mut buf).unwrap();
            buf.truncate(len.min(buf_len));
            out.push((len, buf, f.pkttype));
            at += f.next as usize;
        }
        out
    }

    #[test]
    fn frames_are_walked_with_their_lengths_and_packet_types() {
        let a = eth(60, [8, 0]);
        let c = eth(1514, [0x86, 0xdd]);
        let d = eth(64, [8, 6]);
        let b = block(&[(&a, None, 0), (&c, None, 3), (&d, None, PACKET_OUTGOING)]);
        let got = read_all(&b, 2048);
        assert_eq!(got.len(), 3);
        assert_eq!((got[0].0, &got[0].1, got[0].2), (60, &a, 0));
        assert_eq!((got[1].0, &got[1].1, got[1].2), (1514, &c, 3));
        assert_eq!(got[2].2, PACKET_OUTGOING);
    }

    #[test]
    fn a_stripped_tag_is_put_back_in_the_copy() {
        let a = eth(60, [8, 0]);
        let b = block(&[(&a, Some((0x8100, 0x2007)), 0), (&a, Some((0x88a8, 5)), 0)]);
        let got = read_all(&b, 2048);
        assert_eq!(got[0].0, 64);
        assert_eq!(&got[0].1[..12], &a[..12]);
        assert_eq!(&got[0].1[12..18], &[0x81, 0x00, 0x20, 0x07, 8, 0]);
        assert_eq!(&got[0].1[16..], &a[12..]);
        // An 802.1ad tag keeps its TPID.
        assert_eq!(&got[1].1[12..16], &[0x88, 0xa8, 0, 5]);
    }

    #[test]
    fn a_frame_longer_than_the_buffer_reports_its_true_length() {
        let a = eth(1514, [8, 0]);
        let b = block(&[(&a, Some((0x8100, 1)), 0)]);
        let got = read_all(&b, 1000);
        assert_eq!(got[0].0, 1518);
        assert_eq!(got[0].1.len(), 1000);
        assert_eq!(&got[0].1[12..16], &[0x81, 0, 0, 1]);
        // Captured bytes beyond the block: refused, not read out of bounds.
        let mut f = frame_header(&b, 48).unwrap();
        f.snaplen = 5000;
        assert_eq!(copy_frame(&b, 48, &f, &mut [0u8; 64]), None);
        assert_eq!(frame_header(&b, 4090), None);
    }

    #[test]
    fn blocks_hold_two_of_the_longest_frames() {
        assert_eq!(geometry(1522), (MIN_BLOCK_BYTES, BLOCKS));
        assert_eq!(geometry(9022).0, MIN_BLOCK_BYTES);
        let (big, _) = geometry(200_000);
        assert!(big as usize >= 2 * 200_000 && big.is_power_of_two());
    }
}
