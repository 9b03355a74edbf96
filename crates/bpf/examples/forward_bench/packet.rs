//! AF_PACKET sockets as the shaper's frame I/O opens them (bound to one
//! interface, promiscuous, nonblocking, PACKET_AUXDATA), with one
//! `recvmsg` and one `send` per frame; and the generator's socket, which
//! sends batches with `sendmmsg` straight to the driver.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const ETH_P_ALL: u16 = 0x0003;

fn setsockopt<T>(fd: RawFd, level: i32, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: `value` is a live T whose size is passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A packet socket bound to `dev` (in the calling thread's namespace);
/// `rx` makes it receive (ETH_P_ALL, promiscuous, auxdata).
pub fn open(dev: &str, rx: bool) -> io::Result<OwnedFd> {
    let c = std::ffi::CString::new(dev).expect("no NUL in a device name");
    // SAFETY: a NUL-terminated name.
    let ifindex = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if ifindex == 0 {
        return Err(io::Error::last_os_error());
    }
    let proto = if rx { i32::from(ETH_P_ALL.to_be()) } else { 0 };
    // SAFETY: plain socket creation, checked.
    let raw = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            proto,
        )
    };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let one: libc::c_int = 1;
    if rx {
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_AUXDATA, &one)?;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &one)?;
        let rcvbuf: libc::c_int = 8 << 20;
        setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &rcvbuf)?;
    }
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = if rx { ETH_P_ALL.to_be() } else { 0 };
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: bind reads size_of::<sockaddr_ll>() bytes.
    let rc = unsafe {
        libc::bind(
            raw,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if rx {
        // SAFETY: all-zero is a valid packet_mreq.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex as i32;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)?;
    } else {
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one)?;
    }
    Ok(fd)
}

/// One frame into `buf` with `recvmsg` (its length), `None` if none waits.
pub fn recv(fd: RawFd, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: all-zero is valid for these plain-data structs.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    let mut cmsg = [0u64; 8];
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
    // SAFETY: every pointer in `msg` is live for the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_TRUNC) };
    (n >= 0).then_some(n as usize)
}

/// Sends one frame with `send`; whether the interface took it.
pub fn send(fd: RawFd, frame: &[u8]) -> bool {
    // SAFETY: `frame` is live and its length passed.
    unsafe { libc::send(fd, frame.as_ptr().cast(), frame.len(), 0) >= 0 }
}

/// Sends `batch` copies of `frame` with one `sendmmsg`; how many left.
pub fn send_batch(fd: &OwnedFd, frame: &[u8], batch: usize) -> usize {
    let mut iov = libc::iovec {
        iov_base: frame.as_ptr() as *mut libc::c_void,
        iov_len: frame.len(),
    };
    // SAFETY: all-zero is a valid mmsghdr; the iovec is set below.
    let mut msgs: Vec<libc::mmsghdr> = (0..batch).map(|_| unsafe { std::mem::zeroed() }).collect();
    for m in &mut msgs {
        m.msg_hdr.msg_iov = &mut iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: `batch` message headers pointing at a live frame.
    let n = unsafe { libc::sendmmsg(fd.as_raw_fd(), msgs.as_mut_ptr(), batch as u32, 0) };
    n.max(0) as usize
}
