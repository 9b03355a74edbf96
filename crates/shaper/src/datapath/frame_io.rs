//! Frame I/O: one AF_PACKET socket per interface, bound to it, in
//! promiscuous mode, nonblocking; frames are received into the caller's
//! buffer (a pool slot) and sent from it.
//!
//! One `recvmsg`/`send` per frame, the loop draining every socket that
//! is ready at each wake-up. Not a PACKET_MMAP ring nor
//! `recvmmsg`/`sendmmsg` batches yet: per-frame calls keep each frame's
//! metadata exact and simple (its true length with `MSG_TRUNC`, its VLAN
//! tag from `PACKET_AUXDATA`, its packet type), which the first slice
//! needs to be right before it is fast; a TPACKET_V3 ring, then AF_XDP,
//! are the measured steps that follow.
//!
//! - **Own frames.** `PACKET_IGNORE_OUTGOING`: a socket sees no frame
//!   sent on its interface, ours or the host's (a bump in the wire
//!   forwards what arrives, never what leaves); frames of packet type
//!   `PACKET_OUTGOING` are skipped as well, for kernels without it.
//! - **VLAN tags.** The kernel strips a received frame's tag into its
//!   metadata; it is put back into the frame (at bytes 12..16), so that
//!   classification sees it and the frame leaves tagged as it came.
//! - **Lengths.** A frame longer than the buffer is truncated and its
//!   true length returned: the engine drops it as too large.

use std::ffi::CString;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

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

/// An interface's packet socket.
pub struct Port {
    fd: OwnedFd,
    name: String,
}

const ETH_P_ALL: u16 = 0x0003;

fn setsockopt<T>(fd: RawFd, level: i32, name: i32, value: &T) -> io::Result<()> {
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

impl Port {
    /// Opens interface `name`: a packet socket bound to it, promiscuous,
    /// nonblocking. Needs CAP_NET_RAW.
    pub fn open(name: &str) -> Result<Port, PortError> {
        let err = |what, source| PortError {
            interface: name.to_string(),
            what,
            source,
        };
        let cname = CString::new(name).map_err(|_| {
            err(
                "name",
                io::Error::new(io::ErrorKind::InvalidInput, "holds a NUL byte"),
            )
        })?;
        // SAFETY: a NUL-terminated string that outlives the call.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(err("no such interface", io::Error::last_os_error()));
        }
        // SAFETY: plain system call; the descriptor is owned at once.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                i32::from(ETH_P_ALL.to_be()),
            )
        };
        if raw < 0 {
            return Err(err(
                "packet socket (needs CAP_NET_RAW)",
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: `raw` is a fresh descriptor no one else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let one: libc::c_int = 1;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_AUXDATA, &one)
            .map_err(|e| err("PACKET_AUXDATA", e))?;
        // Older kernels lack it; packet types are checked as well.
        let _ = setsockopt(raw, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &one);
        // Room for bursts while the loop is busy with the other side.
        let rcvbuf: libc::c_int = 8 << 20;
        let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &rcvbuf);
        // SAFETY: sockaddr_ll is plain data for which all-zero is valid.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: bind reads exactly size_of::<sockaddr_ll>() bytes.
        let rc = unsafe {
            libc::bind(
                raw,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(err("bind", io::Error::last_os_error()));
        }
        // SAFETY: packet_mreq is plain data for which all-zero is valid.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex as i32;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
            .map_err(|e| err("promiscuous mode", e))?;
        Ok(Port {
            fd,
            name: name.to_string(),
        })
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The socket, for poll.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Receives one frame into `buf`: its true length (more than
    /// `buf.len()` if it was truncated), `None` if none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            match self.recv_one(buf)? {
                Received::None => return Ok(None),
                Received::Outgoing => continue,
                Received::Frame(len) => return Ok(Some(len)),
            }
        }
    }

    fn recv_one(&self, buf: &mut [u8]) -> io::Result<Received> {
        // SAFETY: all-zero is valid for these plain-data structs.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut cmsg = [0u64; 8]; // 64 bytes, aligned: one tpacket_auxdata
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: all-zero is a valid msghdr; its pointers are set below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cmsg) as _;
        // SAFETY: every pointer in `msg` points to live buffers of the
        // lengths given, which outlive the call.
        let n = unsafe { libc::recvmsg(self.raw_fd(), &mut msg, libc::MSG_TRUNC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(Received::None),
                _ => Err(e),
            };
        }
        if sll.sll_pkttype == libc::PACKET_OUTGOING {
            return Ok(Received::Outgoing);
        }
        let len = n as usize;
        Ok(Received::Frame(match vlan_of(&msg) {
            Some((tpid, tci)) => restore_tag(buf, len, tpid, tci),
            None => len,
        }))
    }

    /// Sends one frame; the error of the system call if the interface
    /// refused it.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: `frame` is live for the call and its length is passed.
        let n = unsafe { libc::send(self.raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Frames the kernel dropped on this socket before the shaper read
    /// them (its buffer was full), since the last call.
    pub fn kernel_drops(&self) -> u64 {
        // SAFETY: all-zero is valid; getsockopt writes at most `len`.
        let mut st: libc::tpacket_stats = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: `st` and `len` are live and sized as passed.
        let rc = unsafe {
            libc::getsockopt(
                self.raw_fd(),
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

enum Received {
    None,
    Outgoing,
    Frame(usize),
}

/// The VLAN tag the kernel took out of the frame, from PACKET_AUXDATA.
fn vlan_of(msg: &libc::msghdr) -> Option<(u16, u16)> {
    // SAFETY: `msg` was filled by recvmsg; the CMSG macros walk its
    // control buffer within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == libc::PACKET_AUXDATA {
                let aux: libc::tpacket_auxdata =
                    std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                if aux.tp_status & libc::TP_STATUS_VLAN_VALID == 0 {
                    return None;
                }
                let tpid = if aux.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                    aux.tp_vlan_tpid
                } else {
                    0x8100
                };
                return Some((tpid, aux.tp_vlan_tci));
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

/// Puts a tag back after the MAC addresses; the new length (too large
/// if the buffer cannot hold it).
fn restore_tag(buf: &mut [u8], len: usize, tpid: u16, tci: u16) -> usize {
    let tagged = len + 4;
    if tagged > buf.len() || len < 12 {
        return tagged.max(buf.len() + 1);
    }
    buf.copy_within(12..len, 16);
    buf[12..14].copy_from_slice(&tpid.to_be_bytes());
    buf[14..16].copy_from_slice(&tci.to_be_bytes());
    tagged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stripped_tag_is_put_back_after_the_macs() {
        let mut buf = [0u8; 32];
        buf[..16].copy_from_slice(&[1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 8, 0, 0x45, 0]);
        let len = restore_tag(&mut buf, 16, 0x8100, 7);
        assert_eq!(len, 20);
        assert_eq!(&buf[12..20], &[0x81, 0, 0, 7, 8, 0, 0x45, 0]);
        // No room: reported too large.
        assert!(restore_tag(&mut buf, 30, 0x8100, 7) > 32);
    }
}
