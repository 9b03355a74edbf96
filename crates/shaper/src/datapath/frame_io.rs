//! The per-frame AF_PACKET back-end (`io = "frame"`): one socket per
//! interface, frames received into the caller's buffer (a pool slot) by
//! one `recvmsg` each and sent by one `send` each.
//!
//! Slower than the ring ([`super::ring`]) by a system call per frame each
//! way, kept as the reference the ring is checked against and for
//! kernels or interfaces where a ring cannot be set up. Each frame's
//! metadata comes with it:
//!
//! - **Own frames.** See [`Socket::bind`]; frames of packet type
//!   `PACKET_OUTGOING` are skipped.
//! - **VLAN tags.** The kernel strips a received frame's tag into its
//!   metadata (`PACKET_AUXDATA`); it is put back into the frame (at bytes
//!   12..16), so that classification sees it and the frame leaves tagged
//!   as it came.
//! - **Lengths.** A frame longer than the buffer is truncated and its
//!   true length returned (`MSG_TRUNC`): the engine drops it as too large.

use super::port::{setsockopt, Port, PortError, Socket};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// An interface's packet socket, one system call per frame.
pub struct FramePort {
    sock: Socket,
}

impl FramePort {
    /// Opens interface `name`: a packet socket bound to it, promiscuous,
    /// nonblocking. Needs CAP_NET_RAW.
    pub fn open(name: &str) -> Result<FramePort, PortError> {
        let sock = Socket::new(name)?;
        let raw = sock.fd.as_raw_fd();
        let one: libc::c_int = 1;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_AUXDATA, &one)
            .map_err(|e| sock.err("PACKET_AUXDATA", e))?;
        // Room for bursts while the loop is busy with the other side.
        let rcvbuf: libc::c_int = 8 << 20;
        let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &rcvbuf);
        sock.bind()?;
        Ok(FramePort { sock })
    }

    fn raw(&self) -> RawFd {
        self.sock.fd.as_raw_fd()
    }
}

impl Port for FramePort {
    fn name(&self) -> &str {
        &self.sock.name
    }

    fn raw_fd(&self) -> RawFd {
        self.raw()
    }

    fn mtu(&self) -> u32 {
        self.sock.mtu
    }

    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            match self.recv_one(buf)? {
                Received::None => return Ok(None),
                Received::Outgoing => continue,
                Received::Frame(len) => return Ok(Some(len)),
            }
        }
    }

    fn send(&mut self, frames: &[&[u8]], ok: &mut [bool]) {
        for (f, ok) in frames.iter().zip(ok) {
            // SAFETY: `f` is live for the call and its length is passed.
            let n = unsafe { libc::send(self.raw(), f.as_ptr().cast(), f.len(), 0) };
            *ok = n >= 0;
        }
    }

    fn kernel_drops(&mut self) -> u64 {
        self.sock.kernel_drops()
    }
}

impl FramePort {
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
        let n = unsafe { libc::recvmsg(self.raw(), &mut msg, libc::MSG_TRUNC) };
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
