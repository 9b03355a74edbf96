//! One AF_XDP socket: its UMEM, its four rings, the frames waiting to be
//! sent, and its counters.

use super::ring::Ring;
use super::umem::Umem;
use super::XskConfig;
use crate::BpfError;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// What the socket did with the frames it was given, counted here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XskCounters {
    /// Frames received and handed to the caller.
    pub received: u64,
    /// Frames queued to be sent.
    pub sent: u64,
    /// Frames not sent: no free TX frame or TX ring slot (the kernel has
    /// not completed enough earlier sends).
    pub tx_full: u64,
    /// Frames not sent: longer than a UMEM frame.
    pub tx_too_long: u64,
    /// Received descriptors outside the UMEM (never, from a correct
    /// kernel), dropped.
    pub rx_invalid: u64,
}

/// The kernel's counters of the socket (`XDP_STATISTICS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelCounters {
    /// Frames dropped for other reasons than a full ring.
    pub rx_dropped: u64,
    /// Frames dropped because the RX ring was full.
    pub rx_ring_full: u64,
    /// Times the fill ring was found empty.
    pub rx_fill_ring_empty: u64,
    /// Invalid descriptors in the fill ring.
    pub rx_invalid_descs: u64,
    /// Invalid descriptors in the TX ring.
    pub tx_invalid_descs: u64,
}

/// The most frames [`XskSocket::receive_one`] takes from the RX ring at
/// once.
pub const RX_BATCH: u32 = 64;

/// An AF_XDP socket bound to one receive queue of one interface.
pub struct XskSocket {
    // Declared first, dropped first: the rings are unmapped and the socket
    // closed before the UMEM it registered is unmapped.
    fill: Ring<u64>,
    completion: Ring<u64>,
    rx: Ring<libc::xdp_desc>,
    tx: Ring<libc::xdp_desc>,
    fd: OwnedFd,
    umem: Umem,
    frame_size: u32,
    ring_size: u32,
    /// TX frames (UMEM offsets) free to be written.
    tx_free: Vec<u64>,
    /// TX descriptors written but not yet published.
    tx_queued: u32,
    /// Received descriptors published by the kernel and taken for
    /// [`XskSocket::receive_one`] ...
    rx_taken: u32,
    /// ... and how many of them were handed out, not yet given back.
    rx_held: u32,
    counters: XskCounters,
}

fn sys(what: &'static str) -> impl FnOnce(io::Error) -> BpfError {
    move |source| BpfError::Socket { what, source }
}

fn setsockopt<T>(fd: RawFd, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: `value` is a live T and the length passed is its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_XDP,
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

/// Plain C structures the kernel fills in, for which all zero bytes is
/// a valid value.
trait Zeroable: Sized {}
impl Zeroable for libc::xdp_mmap_offsets {}
impl Zeroable for libc::xdp_statistics {}

fn getsockopt<T: Zeroable>(fd: RawFd, name: i32) -> io::Result<T> {
    // SAFETY: `T` is a C structure of integers (`Zeroable`).
    let mut value: T = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is a writable T of the length passed.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_XDP,
            name,
            (&mut value as *mut T).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The interface index of `name` in the calling thread's namespace.
fn ifindex(name: &str) -> Result<u32, BpfError> {
    let c = CString::new(name).map_err(|_| BpfError::Socket {
        what: "interface name",
        source: io::Error::from(io::ErrorKind::InvalidInput),
    })?;
    // SAFETY: a NUL-terminated string.
    let ix = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if ix == 0 {
        return Err(BpfError::Socket {
            what: "no such interface",
            source: io::Error::last_os_error(),
        });
    }
    Ok(ix)
}

impl XskSocket {
    /// Opens a socket on receive queue `queue` of `interface` (in the
    /// calling thread's network namespace), with its UMEM and rings sized
    /// by `config`, and fills the fill ring. Needs CAP_NET_RAW. It
    /// receives what an [`crate::xdp::XdpRedirect`] registered for this
    /// queue redirects to it.
    pub fn bind(interface: &str, queue: u32, config: XskConfig) -> Result<Self, BpfError> {
        config.check()?;
        let ifindex = ifindex(interface)?;
        // SAFETY: plain socket creation; the result is checked.
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(sys("socket(AF_XDP)")(io::Error::last_os_error()));
        }
        // SAFETY: a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let umem = Umem::new(config.umem_len()).map_err(sys("mapping the UMEM"))?;
        let reg = libc::xdp_umem_reg {
            addr: umem.addr(),
            len: umem.len() as u64,
            chunk_size: config.frame_size,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        let raw = fd.as_raw_fd();
        setsockopt(raw, libc::XDP_UMEM_REG, &reg).map_err(sys("registering the UMEM"))?;
        let n = config.ring_size;
        for (opt, what) in [
            (libc::XDP_UMEM_FILL_RING, "sizing the fill ring"),
            (libc::XDP_UMEM_COMPLETION_RING, "sizing the completion ring"),
            (libc::XDP_RX_RING, "sizing the RX ring"),
            (libc::XDP_TX_RING, "sizing the TX ring"),
        ] {
            setsockopt(raw, opt, &n).map_err(sys(what))?;
        }
        let off: libc::xdp_mmap_offsets =
            getsockopt(raw, libc::XDP_MMAP_OFFSETS).map_err(sys("reading the rings' offsets"))?;
        let fill = Ring::map(raw, &off.fr, n, libc::XDP_UMEM_PGOFF_FILL_RING)
            .map_err(sys("mapping the fill ring"))?;
        let completion = Ring::map(raw, &off.cr, n, libc::XDP_UMEM_PGOFF_COMPLETION_RING)
            .map_err(sys("mapping the completion ring"))?;
        let rx = Ring::map(raw, &off.rx, n, libc::XDP_PGOFF_RX_RING as u64)
            .map_err(sys("mapping the RX ring"))?;
        let tx = Ring::map(raw, &off.tx, n, libc::XDP_PGOFF_TX_RING as u64)
            .map_err(sys("mapping the TX ring"))?;
        let size = u64::from(config.frame_size);
        let mut sock = XskSocket {
            fill,
            completion,
            rx,
            tx,
            fd,
            umem,
            frame_size: config.frame_size,
            ring_size: n,
            tx_free: (u64::from(n)..u64::from(config.frames))
                .map(|i| i * size)
                .collect(),
            tx_queued: 0,
            rx_taken: 0,
            rx_held: 0,
            counters: XskCounters::default(),
        };
        // The first `ring_size` frames fill the fill ring.
        for i in 0..n {
            sock.fill.write(i, u64::from(i) * size);
        }
        sock.fill.submit(n);
        sock.bind_to(ifindex, queue)?;
        Ok(sock)
    }

    fn bind_to(&self, ifindex: u32, queue: u32) -> Result<(), BpfError> {
        let addr = libc::sockaddr_xdp {
            sxdp_family: libc::AF_XDP as u16,
            sxdp_flags: libc::XDP_COPY | libc::XDP_USE_NEED_WAKEUP,
            sxdp_ifindex: ifindex,
            sxdp_queue_id: queue,
            sxdp_shared_umem_fd: 0,
        };
        // SAFETY: a valid sockaddr_xdp of the length passed.
        let r = unsafe {
            libc::bind(
                self.fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_xdp).cast(),
                std::mem::size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(sys("binding to the interface's queue")(
                io::Error::last_os_error(),
            ));
        }
        Ok(())
    }

    /// Hands up to `max` received frames, in order, to `each`, then gives
    /// their memory back to the kernel (copy what must outlive the call).
    /// Returns how many. Does not block: wait for the socket to be
    /// readable (`poll`) first.
    pub fn receive(&mut self, max: u32, mut each: impl FnMut(&[u8])) -> u32 {
        self.recycle();
        let n = self.rx.available(max);
        if n == 0 {
            if self.fill.needs_wakeup() {
                self.wake_rx();
            }
            return 0;
        }
        let size = u64::from(self.frame_size);
        // At most `ring_size` frames circulate between the fill and RX
        // rings, so the `n` taken from RX always fit back into fill; a
        // frame that did not would stay out of circulation, never
        // overwrite a slot the kernel owns.
        let free = self.fill.free(n);
        for i in 0..n {
            let d = self.rx.read(i);
            match self.umem.get(d.addr, d.len) {
                Some(frame) => {
                    each(frame);
                    self.counters.received += 1;
                }
                None => self.counters.rx_invalid += 1,
            }
            if i < free {
                self.fill.write(i, d.addr - d.addr % size);
            }
        }
        self.rx.release(n);
        self.fill.submit(free);
        if self.fill.needs_wakeup() {
            self.wake_rx();
        }
        n
    }

    /// Hands the next received frame to `each` (copy what must outlive
    /// the call); `false` if none is waiting. Its memory goes back to the
    /// kernel with the others taken in the same batch of up to
    /// [`RX_BATCH`], when the batch has been read, so that the rings'
    /// indices, which the kernel's CPU writes too, are touched once per
    /// batch rather than once per frame. Does not block.
    pub fn receive_one(&mut self, each: impl FnOnce(&[u8])) -> bool {
        loop {
            if self.rx_held == self.rx_taken {
                self.recycle();
                self.rx_taken = self.rx.available(RX_BATCH);
                if self.rx_taken == 0 {
                    if self.fill.needs_wakeup() {
                        self.wake_rx();
                    }
                    return false;
                }
            }
            let d = self.rx.read(self.rx_held);
            self.rx_held += 1;
            if let Some(frame) = self.umem.get(d.addr, d.len) {
                each(frame);
                self.counters.received += 1;
                return true;
            }
            self.counters.rx_invalid += 1;
        }
    }

    /// Gives the frames [`Self::receive_one`] handed out back to the
    /// kernel: the RX ring's entries released, their memory to the fill
    /// ring (which always has room for them: see [`Self::receive`]).
    fn recycle(&mut self) {
        let n = self.rx_held;
        if n == 0 {
            return;
        }
        let size = u64::from(self.frame_size);
        let free = self.fill.free(n);
        for i in 0..free {
            let d = self.rx.read(i);
            self.fill.write(i, d.addr - d.addr % size);
        }
        self.rx.release(n);
        self.fill.submit(free);
        if self.fill.needs_wakeup() {
            self.wake_rx();
        }
        self.rx_held = 0;
        self.rx_taken = 0;
    }

    fn wake_rx(&self) {
        // SAFETY: a zero-length receive that only wakes the kernel.
        unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }

    /// Takes back the TX frames the kernel has sent.
    fn reclaim(&mut self) {
        let n = self.completion.available(u32::MAX);
        for i in 0..n {
            self.tx_free.push(self.completion.read(i));
        }
        self.completion.release(n);
    }

    /// Copies `frame` into a free TX frame and queues it; `false` if it was
    /// dropped instead (counted: too long, or no room until the kernel
    /// completes earlier sends). Queued frames leave at [`Self::flush`].
    pub fn send(&mut self, frame: &[u8]) -> bool {
        if frame.len() > self.frame_size as usize {
            self.counters.tx_too_long += 1;
            return false;
        }
        if self.tx_free.is_empty() {
            self.reclaim();
        }
        if self.tx.free(self.tx_queued + 1) <= self.tx_queued {
            self.counters.tx_full += 1;
            return false;
        }
        let Some(addr) = self.tx_free.pop() else {
            self.counters.tx_full += 1;
            return false;
        };
        match self.umem.get_mut(addr, frame.len()) {
            Some(buf) => buf.copy_from_slice(frame),
            None => {
                // A free-list entry outside the UMEM cannot happen: they
                // are made in `bind` and returned by the kernel.
                self.counters.tx_full += 1;
                return false;
            }
        }
        let desc = libc::xdp_desc {
            addr,
            len: frame.len() as u32,
            options: 0,
        };
        self.tx.write(self.tx_queued, desc);
        self.tx_queued += 1;
        self.counters.sent += 1;
        true
    }

    /// Publishes the queued frames and, if the kernel asks for it, wakes
    /// it to send them; takes back the frames already sent.
    pub fn flush(&mut self) -> Result<(), BpfError> {
        if self.tx_queued > 0 {
            self.tx.submit(self.tx_queued);
            self.tx_queued = 0;
        }
        if self.tx.unconsumed() > 0 && self.tx.needs_wakeup() {
            self.kick_tx()?;
        }
        self.reclaim();
        Ok(())
    }

    /// Wakes the kernel to send the published frames. In copy mode one
    /// wake-up sends at most 32 of them and answers EAGAIN while more
    /// wait, so it is repeated, at most as often as a full ring needs.
    fn kick_tx(&mut self) -> Result<(), BpfError> {
        let kicks = self.ring_size / 32 + 1;
        for _ in 0..kicks {
            // SAFETY: a zero-length send that only wakes the kernel.
            let r = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                )
            };
            if r >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN | libc::EINTR) => continue,
                // Busy or out of buffers: the frames stay in the ring and
                // leave at the next wake-up.
                Some(libc::EBUSY | libc::ENOBUFS | libc::ENETDOWN) => return Ok(()),
                _ => return Err(sys("waking the kernel to send")(e)),
            }
        }
        Ok(())
    }

    /// The counters of what this socket did.
    pub fn counters(&self) -> XskCounters {
        self.counters
    }

    /// The kernel's counters of this socket.
    pub fn kernel_counters(&self) -> Result<KernelCounters, BpfError> {
        let s: libc::xdp_statistics = getsockopt(self.fd.as_raw_fd(), libc::XDP_STATISTICS)
            .map_err(sys("reading the socket's statistics"))?;
        Ok(KernelCounters {
            rx_dropped: s.rx_dropped,
            rx_ring_full: s.rx_ring_full,
            rx_fill_ring_empty: s.rx_fill_ring_empty_descs,
            rx_invalid_descs: s.rx_invalid_descs,
            tx_invalid_descs: s.tx_invalid_descs,
        })
    }
}

impl AsFd for XskSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for XskSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
