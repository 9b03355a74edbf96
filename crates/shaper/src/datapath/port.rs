//! The shaper's ports: how frames get in and out of an interface, behind
//! one trait so that the loop ([`super::run`]) does not depend on the
//! back-end, chosen by `[interfaces] io`:
//!
//! - `ring` ([`super::ring::RingPort`], the default): a TPACKET_V3
//!   memory-mapped receive ring, sends batched with `sendmmsg`;
//! - `frame` ([`super::frame_io::FramePort`]): one `recvmsg`/`send` per
//!   frame.
//!
//! - `xdp` (`super::xdp::XdpPort`, in a build with the `ebpf` feature):
//!   AF_XDP sockets fed by an XDP redirect program.
//!
//! Each receives one frame at a time into the caller's pool slot, sends
//! in batches with a result per frame, gives the kernel's drops on
//! request and a descriptor to poll.
//!
//! What both AF_PACKET back-ends share lives here: the socket (bound to
//! one interface, promiscuous, nonblocking, blind to frames sent on its
//! interface), the interface's MTU, the kernel's drop counter, batched
//! sends.

use crate::plan::FrameIo;
use std::ffi::CString;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A way in and out of one interface; it may move to the thread that
/// runs the loop.
pub trait Port: Send {
    /// The interface's name.
    fn name(&self) -> &str;
    /// A descriptor that polls readable when frames wait.
    fn raw_fd(&self) -> RawFd;
    /// The interface's MTU, read when it was opened.
    fn mtu(&self) -> u32;
    /// Receives one frame into `buf`: its true length (more than
    /// `buf.len()` if it did not fit; the bytes that fit are written),
    /// `None` if none is waiting. A VLAN tag the kernel took out is back
    /// in the frame; frames the interface sent are never returned.
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>>;
    /// Sends `frames` in order; `ok[i]` tells whether frame `i` left
    /// (`ok` is as long as `frames`).
    fn send(&mut self, frames: &[&[u8]], ok: &mut [bool]);
    /// Frames the kernel dropped before the shaper read them, since the
    /// last call.
    fn kernel_drops(&mut self) -> u64;
}

/// Opens interface `name` with back-end `io`. Needs CAP_NET_RAW.
pub fn open(name: &str, io: FrameIo) -> Result<Box<dyn Port>, PortError> {
    Ok(match io {
        FrameIo::Ring => Box::new(super::ring::RingPort::open(name)?),
        FrameIo::Frame => Box::new(super::frame_io::FramePort::open(name)?),
        #[cfg(feature = "ebpf")]
        FrameIo::Xdp => Box::new(super::xdp::XdpPort::open(name)?),
        // The check refuses it in such a build; a plan made without the
        // check is refused here.
        #[cfg(not(feature = "ebpf"))]
        FrameIo::Xdp => {
            return Err(err(
                name,
                "io = \"xdp\"",
                io::Error::new(io::ErrorKind::Unsupported, xdp_not_built()),
            ))
        }
    })
}

#[cfg(not(feature = "ebpf"))]
fn xdp_not_built() -> &'static str {
    "this fairway was built without eBPF support (AF_XDP): build with --features ebpf \
     (needs clang)"
}

/// The MTU of interface `name`, without opening a packet socket (a
/// datagram socket serves the ioctl).
pub fn interface_mtu(name: &str) -> Result<u32, PortError> {
    let cname = CString::new(name).map_err(|_| {
        err(
            name,
            "name",
            io::Error::new(io::ErrorKind::InvalidInput, "holds a NUL byte"),
        )
    })?;
    // SAFETY: a NUL-terminated string that outlives the call.
    if unsafe { libc::if_nametoindex(cname.as_ptr()) } == 0 {
        return Err(err(name, "no such interface", io::Error::last_os_error()));
    }
    // SAFETY: plain system call; the descriptor is owned at once.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(err(name, "reading the MTU", io::Error::last_os_error()));
    }
    // SAFETY: `raw` is a fresh descriptor no one else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    read_mtu(fd.as_raw_fd(), name).map_err(|e| err(name, "reading the MTU", e))
}

/// Why an interface cannot be used.
#[derive(Debug)]
pub struct PortError {
    /// The interface.
    pub interface: String,
    /// What failed.
    pub what: &'static str,
    /// The system's error.
    pub source: io::Error,
}

impl fmt::Display for PortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "interface {:?}: {}: {}",
            self.interface, self.what, self.source
        )
    }
}

impl std::error::Error for PortError {}

const ETH_P_ALL: u16 = 0x0003;

/// A packet socket for one interface, not yet bound.
pub struct Socket {
    /// The socket.
    pub fd: OwnedFd,
    /// The interface's name.
    pub name: String,
    ifindex: i32,
    /// The interface's MTU.
    pub mtu: u32,
}

/// `setsockopt` with a plain-data value.
pub fn setsockopt<T>(fd: RawFd, level: i32, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: `value` is a live, initialised T and the length passed is
    // its size; the kernel only reads it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Socket {
    /// A packet socket for interface `name`, receiving nothing until
    /// [`Self::bind`] (so that the ring, if any, is set up first).
    pub fn new(name: &str) -> Result<Socket, PortError> {
        let cname = CString::new(name).map_err(|_| {
            err(
                name,
                "name",
                io::Error::new(io::ErrorKind::InvalidInput, "holds a NUL byte"),
            )
        })?;
        // SAFETY: a NUL-terminated string that outlives the call.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(err(name, "no such interface", io::Error::last_os_error()));
        }
        // Protocol 0: no frame arrives before bind names the interface.
        // SAFETY: plain system call; the descriptor is owned at once.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if raw < 0 {
            let e = io::Error::last_os_error();
            return Err(err(name, "packet socket (needs CAP_NET_RAW)", e));
        }
        // SAFETY: `raw` is a fresh descriptor no one else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mtu = read_mtu(raw, name).map_err(|e| err(name, "reading the MTU", e))?;
        Ok(Socket {
            fd,
            name: name.to_string(),
            ifindex: ifindex as i32,
            mtu,
        })
    }

    /// An error about this interface.
    pub fn err(&self, what: &'static str, source: io::Error) -> PortError {
        err(&self.name, what, source)
    }

    /// Binds to the interface (every protocol), promiscuous, and blind to
    /// frames sent on it: a bump in the wire forwards what arrives,
    /// never what leaves (packet type `PACKET_OUTGOING` is skipped as
    /// well, for kernels without `PACKET_IGNORE_OUTGOING`).
    pub fn bind(&self) -> Result<(), PortError> {
        let raw = self.fd.as_raw_fd();
        let one: libc::c_int = 1;
        let _ = setsockopt(raw, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &one);
        // SAFETY: sockaddr_ll is plain data for which all-zero is valid.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = self.ifindex;
        // SAFETY: bind reads exactly size_of::<sockaddr_ll>() bytes.
        let rc = unsafe {
            libc::bind(
                raw,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(self.err("bind", io::Error::last_os_error()));
        }
        // SAFETY: packet_mreq is plain data for which all-zero is valid.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = self.ifindex;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
            .map_err(|e| self.err("promiscuous mode", e))?;
        // Drops counted so far were before the shaper ran: reset.
        self.kernel_drops();
        Ok(())
    }

    /// Frames the kernel dropped on this socket (its buffer or ring was
    /// full), since the last call.
    pub fn kernel_drops(&self) -> u64 {
        // tpacket_stats_v3 starts as tpacket_stats; the kernel writes at
        // most the length passed.
        // SAFETY: all-zero is valid; getsockopt writes at most `len`.
        let mut st: libc::tpacket_stats = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: `st` and `len` are live and sized as passed.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut st as *mut libc::tpacket_stats).cast(),
                &mut len,
            )
        };
        if rc == 0 {
            u64::from(st.tp_drops)
        } else {
            0
        }
    }
}

fn err(name: &str, what: &'static str, source: io::Error) -> PortError {
    PortError {
        interface: name.to_string(),
        what,
        source,
    }
}

/// The MTU of interface `name` (SIOCGIFMTU on any socket).
fn read_mtu(fd: RawFd, name: &str) -> io::Result<u32> {
    // SAFETY: ifreq is plain data for which all-zero is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    // The name fits: if_nametoindex found it (at most 15 bytes + NUL).
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes().take(15)) {
        *d = s as libc::c_char;
    }
    // SAFETY: `req` is a live ifreq; the ioctl writes its MTU field.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCGIFMTU as _, &mut req) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: SIOCGIFMTU wrote the union's MTU member.
    let mtu = unsafe { req.ifr_ifru.ifru_mtu };
    u32::try_from(mtu).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "negative MTU"))
}

/// Batched sends: `sendmmsg`'s scratch space, for up to a batch of
/// frames a call.
pub struct SendBatch {
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
}

// SAFETY: the pointers inside are rewritten before each call and point
// to the caller's frames only during it; nothing is shared.
unsafe impl Send for SendBatch {}

impl SendBatch {
    /// Room for `n` frames a call.
    pub fn new(n: usize) -> Self {
        let iov = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        SendBatch {
            iov: vec![iov; n],
            // SAFETY: all-zero is a valid mmsghdr (filled before use).
            msgs: (0..n).map(|_| unsafe { std::mem::zeroed() }).collect(),
        }
    }

    /// Sends `frames` on `fd` with as few `sendmmsg` calls as the
    /// kernel allows: a call stops at the first frame refused, which is
    /// marked failed, and the rest go in the next call.
    pub fn send(&mut self, fd: RawFd, frames: &[&[u8]], ok: &mut [bool]) {
        for (f, k) in frames
            .chunks(self.iov.len())
            .zip(ok.chunks_mut(self.iov.len()))
        {
            self.send_chunk(fd, f, k);
        }
    }

    fn send_chunk(&mut self, fd: RawFd, frames: &[&[u8]], ok: &mut [bool]) {
        let (iov, msgs) = (&mut self.iov, &mut self.msgs);
        let mut i = 0;
        while i < frames.len() {
            let n = frames.len() - i;
            for k in 0..n {
                iov[k] = libc::iovec {
                    iov_base: frames[i + k].as_ptr() as *mut libc::c_void,
                    iov_len: frames[i + k].len(),
                };
                // SAFETY: all-zero is a valid msghdr (no name, no control).
                msgs[k].msg_hdr = unsafe { std::mem::zeroed() };
                msgs[k].msg_hdr.msg_iov = &mut iov[k];
                msgs[k].msg_hdr.msg_iovlen = 1;
                msgs[k].msg_len = 0;
            }
            // SAFETY: `msgs[..n]` point to `iov[..n]`, which point to
            // frames that outlive the call; the kernel only reads them.
            let r = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), n as libc::c_uint, 0) };
            if r > 0 {
                let r = r as usize;
                ok[i..i + r].fill(true);
                i += r;
            } else if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            } else {
                ok[i] = false;
                i += 1;
            }
        }
    }
}
