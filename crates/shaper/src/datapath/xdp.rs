//! The AF_XDP back-end (`io = "xdp"`, in a build with the `ebpf`
//! feature): an XDP program on each interface redirects every received
//! frame into an AF_XDP socket, whose memory (the UMEM) user space shares
//! with the kernel, so that no system call is made per received frame;
//! sends are copied into the socket's TX ring and published once per
//! batch (one wake-up of the kernel per 32 frames in copy mode).
//!
//! - **Queues.** A socket receives from one receive queue: one socket is
//!   opened and registered per queue of the interface (its channels, at
//!   most [`MAX_QUEUES`]); the loop polls them through one epoll
//!   descriptor and reads them in turn. The first also sends.
//! - **Modes.** The program runs in the driver (native XDP; veth has
//!   it); the sockets copy frames (`XDP_COPY`), which every driver
//!   supports. Zero-copy would need a driver with AF_XDP zero-copy
//!   support and its own UMEM per queue shared with the driver's rings,
//!   which veth does not have.
//! - **Sizes.** One UMEM frame holds one received frame (no
//!   multi-buffer): 2048-byte frames up to an MTU of 1770 and 4096-byte
//!   ones up to 3818, each less the kernel's 256-byte headroom and
//!   [`super::pool::FRAME_OVERHEAD`]; a larger MTU is refused when the
//!   interface is opened, naming the limit.
//! - **Drops.** Frames the kernel could not hand over (the RX ring full,
//!   no free UMEM frame in the fill ring) are the kernel's drops
//!   (`XDP_STATISTICS`); a frame that finds no free TX frame or TX ring
//!   slot is a failed send, which the engine counts.
//! - **VLAN tags.** XDP sees a frame as it arrived, its tag inside, when
//!   the driver did not strip it: on a NIC, turn VLAN receive offload
//!   off (`ethtool -K IF rxvlan off`); veth keeps a tag that was sent
//!   inside the frame.

use super::pool::max_frame;
use super::port::{interface_mtu, Port, PortError};
use fairway_bpf::xdp::{XdpMode, XdpRedirect};
use fairway_bpf::xsk::{self, XskConfig, XskSocket};
use fairway_bpf::BpfError;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The most receive queues an interface may have: the slots of the XDP
/// program's socket map (each queue takes a socket and its UMEM).
pub const MAX_QUEUES: u32 = fairway_bpf::xdp::MAX_QUEUES;

/// Entries of each ring of a socket: 4096 frames waiting to be read
/// hold 3 ms of a 1 Gbit/s link's smallest frames; with as many more
/// to send from, a socket's UMEM is 16 MiB (32 MiB of 4096-byte frames),
/// what the ring back-end maps per interface.
const RING: u32 = 4096;

/// The longest frame each UMEM frame size receives.
const SIZES: [u32; 2] = [2048, 4096];

/// The sockets' sizes for an interface of `mtu`, or why it cannot be
/// carried.
pub fn config(mtu: u32) -> Result<XskConfig, String> {
    let need = max_frame(mtu);
    let frames = 2 * RING;
    for frame_size in SIZES {
        let c = XskConfig {
            frame_size,
            ring_size: RING,
            frames,
        };
        if need <= c.max_rx_frame() as usize {
            return Ok(c);
        }
    }
    let largest = XskConfig {
        frame_size: SIZES[1],
        ring_size: RING,
        frames,
    }
    .max_rx_frame() as usize;
    Err(format!(
        "MTU {mtu} needs frames of {need} bytes (MTU, Ethernet header, two VLAN tags), above \
         the {largest} bytes AF_XDP carries in copy mode (a 4096-byte UMEM frame less the \
         kernel's 256-byte headroom, one frame per buffer); use io = \"ring\" or lower the MTU \
         to {}",
        largest - super::pool::FRAME_OVERHEAD
    ))
}

/// An interface's AF_XDP sockets, one per receive queue, and the XDP
/// program that feeds them.
pub struct XdpPort {
    name: String,
    mtu: u32,
    // Declared before the sockets, dropped before them: the program
    // stops redirecting before the sockets close.
    _program: XdpRedirect,
    socks: Vec<XskSocket>,
    /// The socket read first at the next receive.
    next: usize,
    /// An epoll descriptor over every socket, when there are several.
    epoll: Option<OwnedFd>,
    /// The kernel's drops (every socket) already reported.
    reported: u64,
    /// A failure while sending or reading counters, returned by the next
    /// receive (the [`Port`] calls that found it return none).
    failed: Option<io::Error>,
}

fn bpf_err<'a>(name: &'a str, what: &'static str) -> impl FnOnce(BpfError) -> PortError + 'a {
    move |e| PortError {
        interface: name.to_string(),
        what,
        source: io::Error::other(e.to_string()),
    }
}

impl XdpPort {
    /// Opens interface `name`: sockets on each of its receive queues, the
    /// XDP program attached (native mode) and the sockets registered.
    /// Needs CAP_NET_RAW, CAP_NET_ADMIN and CAP_BPF.
    pub fn open(name: &str) -> Result<XdpPort, PortError> {
        let mtu = interface_mtu(name)?;
        let refused = |what, text: String| PortError {
            interface: name.to_string(),
            what,
            source: io::Error::new(io::ErrorKind::InvalidInput, text),
        };
        let c = config(mtu).map_err(|t| refused("AF_XDP frame size", t))?;
        let queues = xsk::rx_queues(name).map_err(bpf_err(name, "receive queues"))?;
        if queues > MAX_QUEUES {
            let text = format!(
                "{queues} receive queues, above the {MAX_QUEUES} the XDP program's socket map \
                 holds (each takes a socket and its UMEM); reduce them (ethtool -L) or use \
                 io = \"ring\""
            );
            return Err(refused("receive queues", text));
        }
        let mut socks = Vec::with_capacity(queues as usize);
        for q in 0..queues {
            let s = XskSocket::bind(name, q, c).map_err(bpf_err(name, "AF_XDP socket"))?;
            socks.push(s);
        }
        let mut program = XdpRedirect::attach(name, XdpMode::Native)
            .map_err(bpf_err(name, "XDP program (native mode)"))?;
        for (q, s) in socks.iter().enumerate() {
            program
                .register(q as u32, s)
                .map_err(bpf_err(name, "XDP program"))?;
        }
        let epoll = if socks.len() > 1 {
            Some(epoll_over(&socks).map_err(|e| PortError {
                interface: name.to_string(),
                what: "epoll over the AF_XDP sockets",
                source: e,
            })?)
        } else {
            None
        };
        let mut port = XdpPort {
            name: name.to_string(),
            mtu,
            _program: program,
            socks,
            next: 0,
            epoll,
            reported: 0,
            failed: None,
        };
        // Drops counted so far were before the shaper ran.
        port.reported = port.kernel_total();
        Ok(port)
    }

    /// The kernel's drops of every socket since they were opened.
    fn kernel_total(&mut self) -> u64 {
        let mut total = 0;
        for s in &self.socks {
            match s.kernel_counters() {
                Ok(k) => total += k.rx_dropped + k.rx_ring_full,
                Err(e) => self.failed = Some(io::Error::other(e.to_string())),
            }
        }
        total
    }
}

/// An epoll descriptor readable when any of `socks` is.
fn epoll_over(socks: &[XskSocket]) -> io::Result<OwnedFd> {
    // SAFETY: plain system call, checked below.
    let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    let ep = unsafe { OwnedFd::from_raw_fd(raw) };
    for (i, s) in socks.iter().enumerate() {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        // SAFETY: both descriptors are open; `ev` is live for the call.
        let r = unsafe { libc::epoll_ctl(raw, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(ep)
}

impl Port for XdpPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn raw_fd(&self) -> RawFd {
        match &self.epoll {
            Some(ep) => ep.as_raw_fd(),
            None => self.socks[0].as_raw_fd(),
        }
    }

    fn mtu(&self) -> u32 {
        self.mtu
    }

    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let n = self.socks.len();
        for k in 0..n {
            let q = (self.next + k) % n;
            let mut len = None;
            self.socks[q].receive_one(|f| {
                let fit = f.len().min(buf.len());
                buf[..fit].copy_from_slice(&f[..fit]);
                len = Some(f.len());
            });
            if len.is_some() {
                self.next = (q + 1) % n;
                return Ok(len);
            }
        }
        Ok(None)
    }

    fn send(&mut self, frames: &[&[u8]], ok: &mut [bool]) {
        let s = &mut self.socks[0];
        for (f, ok) in frames.iter().zip(ok.iter_mut()) {
            *ok = s.send(f);
        }
        // The frames queued stay in the TX ring; a socket that cannot be
        // woken any more stops the loop at its next receive.
        if let Err(e) = s.flush() {
            self.failed = Some(io::Error::other(e.to_string()));
        }
    }

    fn kernel_drops(&mut self) -> u64 {
        let total = self.kernel_total();
        let new = total.saturating_sub(self.reported);
        self.reported = self.reported.max(total);
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_sized_for_the_mtu_and_a_larger_one_is_refused_naming_the_limit() {
        assert_eq!(config(1500).unwrap().frame_size, 2048);
        assert_eq!(config(1770).unwrap().frame_size, 2048);
        assert_eq!(config(1771).unwrap().frame_size, 4096);
        assert_eq!(config(3818).unwrap().frame_size, 4096);
        for c in [config(1500).unwrap(), config(3818).unwrap()] {
            assert!(c.check().is_ok(), "{c:?}");
        }
        let e = config(3819).unwrap_err();
        assert!(
            e.starts_with("MTU 3819 needs frames of 3841 bytes") && e.contains("above the 3840"),
            "{e}"
        );
        assert!(
            e.contains("io = \"ring\"") && e.ends_with("lower the MTU to 3818"),
            "{e}"
        );
        assert!(config(9000).is_err());
    }
}
