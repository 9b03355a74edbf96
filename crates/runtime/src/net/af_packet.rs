//! The `AF_PACKET` back-end: whole Ethernet frames written to the device
//! through a raw packet socket, batched with `sendmmsg` — the sender skips
//! the kernel's UDP/IP output path (socket lookup, routing, neighbour
//! resolution, per-socket memory accounting), the closest a plain socket
//! comes to the PSPAT paper's netmap path (Fig. 7). Frames still pass the
//! device's qdisc, so the `tc` configuration applies unchanged, and the
//! receiver sees ordinary UDP datagrams.
//!
//! Each sender builds its frames once: a fixed Ethernet + IPv4 + UDP header
//! (IPv4 checksum computed, UDP checksum 0 = "none", as IPv4 allows) in
//! front of the 18-byte payload of each [`Datagram`].

use super::datagram::{monotonic_ns, Datagram, FRAME_LEN, PAYLOAD_LEN};
use super::send_delays::SendDelays;
use super::udp::{MmsgBatcher, SendCounters};
use crate::backend::Backend;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

const ETH_P_IP: u16 = 0x0800;
const FRAME: usize = FRAME_LEN as usize;
const HEADERS: usize = FRAME - PAYLOAD_LEN;

/// Where a sender's frames go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameAddrs {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: Ipv4Addr,
    /// Destination IPv4 address.
    pub dst_ip: Ipv4Addr,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
}

/// The 42 header bytes of every frame from `a`.
pub fn frame_header(a: &FrameAddrs) -> [u8; HEADERS] {
    let mut h = [0u8; HEADERS];
    h[0..6].copy_from_slice(&a.dst_mac);
    h[6..12].copy_from_slice(&a.src_mac);
    h[12..14].copy_from_slice(&ETH_P_IP.to_be_bytes());
    let ip = &mut h[14..34];
    ip[0] = 0x45; // IPv4, 5 words of header
    ip[2..4].copy_from_slice(&((FRAME - 14) as u16).to_be_bytes());
    ip[6] = 0x40; // don't fragment
    ip[8] = 64; // TTL
    ip[9] = 17; // UDP
    ip[12..16].copy_from_slice(&a.src_ip.octets());
    ip[16..20].copy_from_slice(&a.dst_ip.octets());
    let sum = ipv4_checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let udp = &mut h[34..42];
    udp[0..2].copy_from_slice(&a.src_port.to_be_bytes());
    udp[2..4].copy_from_slice(&a.dst_port.to_be_bytes());
    udp[4..6].copy_from_slice(&((8 + PAYLOAD_LEN) as u16).to_be_bytes());
    h
}

/// The one's-complement sum of RFC 791 over a header whose checksum field
/// is zero.
pub fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A raw `AF_PACKET` socket bound to device `ifindex` (in the calling
/// thread's namespace) for sending only, its frames tagged with
/// `SO_PRIORITY` = `priority` if given.
pub(crate) fn bound_packet_socket(ifindex: u32, priority: Option<u32>) -> io::Result<OwnedFd> {
    // Protocol 0: this socket receives nothing, it only sends.
    let fd = nix::sys::socket::socket(
        nix::sys::socket::AddressFamily::Packet,
        nix::sys::socket::SockType::Raw,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(io::Error::from)?;
    // SAFETY: sockaddr_ll is plain data for which all-zero is valid;
    // bind reads exactly size_of::<sockaddr_ll>() bytes from it. nix
    // cannot build a LinkAddr for bind, so this one call uses libc.
    let rc = unsafe {
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = 0;
        sll.sll_ifindex = ifindex as i32;
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if let Some(p) = priority {
        nix::sys::socket::setsockopt(&fd, nix::sys::socket::sockopt::Priority, &(p as i32))
            .map_err(io::Error::from)?;
    }
    Ok(fd)
}

/// Makes packet socket `fd` hand its frames straight to the device driver
/// (`PACKET_QDISC_BYPASS`): no qdisc, not even the `noqueue` path of
/// `dev_queue_xmit`. For a sender that needs no kernel scheduler: with
/// fairway the arbiter is the scheduler (the PSPAT paper §3), and `none` has
/// none. Frames then also skip `tc`'s egress hooks and the device's
/// queue-length limit, so the `tc` configuration must never use it.
pub(crate) fn set_qdisc_bypass(fd: &OwnedFd) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: a valid socket and a c_int option value of the size passed
    // (nix has no PACKET_QDISC_BYPASS).
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_QDISC_BYPASS,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One client's raw packet socket, bound to a device, batching frames
/// with `sendmmsg`.
pub struct PacketSender {
    fd: OwnedFd,
    header: [u8; HEADERS],
    batcher: MmsgBatcher,
    pending: Vec<[u8; FRAME]>,
    batch: usize,
    counters: SendCounters,
    priority: Option<u32>,
    /// Submit → `sendmmsg` call and return, if enabled with
    /// [`PacketSender::record_delays`].
    delays: Option<SendDelays>,
}

/// The submit time a frame carries (the payload's first 8 bytes, as
/// [`Datagram::submit_ns`] reads them).
#[inline]
pub(super) fn frame_submit_ns(frame: &[u8]) -> u64 {
    frame
        .get(HEADERS..HEADERS + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

impl PacketSender {
    /// A raw `AF_PACKET` socket on device `ifindex` (which must be in the
    /// calling thread's namespace: see
    /// `fairway_lab::testbed::Testbed::in_sender_ns`), sending frames with `addrs`'
    /// headers in batches of up to `batch`, tagged with `SO_PRIORITY` =
    /// `priority` if given (the HTB class).
    pub fn open(
        ifindex: u32,
        addrs: FrameAddrs,
        batch: usize,
        priority: Option<u32>,
    ) -> io::Result<Self> {
        if batch == 0 || batch > super::udp::MAX_BATCH {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("batch {batch} outside 1..={}", super::udp::MAX_BATCH),
            ));
        }
        let fd = bound_packet_socket(ifindex, priority)?;
        Ok(Self {
            fd,
            header: frame_header(&addrs),
            batcher: MmsgBatcher::new(batch),
            pending: Vec::with_capacity(batch),
            batch,
            counters: SendCounters::default(),
            priority,
            delays: None,
        })
    }

    /// Records the submit → send delay of every frame from now on, as
    /// [`UdpSender::record_delays`](super::UdpSender::record_delays).
    pub fn record_delays(&mut self) {
        self.delays = Some(SendDelays::new());
    }

    /// The recorded delays, if enabled.
    pub fn delays(&self) -> Option<&SendDelays> {
        self.delays.as_ref()
    }

    /// The `SO_PRIORITY` this sender tags frames with.
    pub fn priority(&self) -> Option<u32> {
        self.priority
    }

    /// From now on frames go straight to the driver, past any qdisc
    /// (`PACKET_QDISC_BYPASS`; see `set_qdisc_bypass`).
    pub fn bypass_qdisc(&mut self) -> io::Result<()> {
        set_qdisc_bypass(&self.fd)
    }

    /// The counters so far.
    pub fn counters(&self) -> SendCounters {
        self.counters
    }

    /// Sends `datagrams` now, in batches.
    pub fn send_now(&mut self, datagrams: &[Datagram]) {
        for chunk in datagrams.chunks(self.batch) {
            let frames: Vec<[u8; FRAME]> = chunk.iter().map(|d| self.frame(d)).collect();
            self.send_frames(&frames);
        }
    }

    fn frame(&self, d: &Datagram) -> [u8; FRAME] {
        let mut f = [0u8; FRAME];
        f[..HEADERS].copy_from_slice(&self.header);
        f[HEADERS..].copy_from_slice(&d.payload);
        f
    }

    fn send_frames(&mut self, frames: &[[u8; FRAME]]) {
        let slices: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
        if let Some(h) = self.delays.as_mut() {
            h.call_starts(monotonic_ns(), slices.iter().map(|f| frame_submit_ns(f)));
        }
        let (s, r, c) = self.batcher.send(self.fd.as_fd(), &slices);
        self.counters.sent += s;
        self.counters.refused += r;
        self.counters.calls += c;
        if let Some(h) = self.delays.as_mut() {
            h.call_returned(monotonic_ns(), slices.iter().map(|f| frame_submit_ns(f)));
        }
    }
}

impl Backend<Datagram> for PacketSender {
    #[inline]
    fn transmit(&mut self, packet: Datagram) {
        let f = self.frame(&packet);
        self.pending.push(f);
        if self.pending.len() >= self.batch {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        self.send_frames(&pending);
        self.pending = pending;
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_checksum_verifies_and_lengths_are_right() {
        let a = FrameAddrs {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_ip: Ipv4Addr::new(198, 18, 0, 1),
            dst_ip: Ipv4Addr::new(198, 18, 0, 2),
            src_port: 5000,
            dst_port: 40000,
        };
        let h = frame_header(&a);
        // A header with its checksum in place sums to 0xffff (→ 0).
        assert_eq!(ipv4_checksum(&h[14..34]), 0);
        // The submit time is read back from where the frame carries it.
        let mut f = [0u8; FRAME];
        f[..HEADERS].copy_from_slice(&h);
        f[HEADERS..].copy_from_slice(&Datagram::new(3, 9, 123_456).payload);
        assert_eq!(frame_submit_ns(&f), 123_456);
        assert_eq!(frame_submit_ns(&f[..HEADERS]), 0);
        assert_eq!(u16::from_be_bytes([h[16], h[17]]), 46);
        assert_eq!(u16::from_be_bytes([h[38], h[39]]), 26);
        assert_eq!(u16::from_be_bytes([h[36], h[37]]), 40000);
    }
}
