//! The receiving end (the PSPAT paper §5.5 and footnote 8): one UDP socket per
//! flow, on its own port. A receiver thread reads the *watched* flows (the
//! target client) as packets arrive, with non-blocking I/O, and records
//! each packet's one-way delay from the submit time in its payload. The
//! other flows are not read during the run — as in the PSPAT paper §5.2,
//! "receivers bind UDP sockets ... but normally do not read from them", so
//! receiving costs no CPU that the senders need — and are counted when the
//! run is over by draining their sockets.
//!
//! Nothing is lost uncounted: a datagram that reaches a full socket buffer
//! is dropped by the kernel and counted in the socket's `sk_drops`, the
//! counter `SO_RXQ_OVFL` reports with each packet; the receiver reads it
//! with `SO_MEMINFO` once the run is over, so drops after the last packet
//! are included too. So per flow: delivered to the socket = received +
//! socket drops; what the senders' side of the kernel drops (qdisc, veth)
//! is read from `fairway_lab::testbed::Testbed::kernel_drops`.

use super::datagram::{monotonic_ns, Datagram};
use hdrhistogram::Histogram;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the receiver thread waits in `poll` before re-checking its stop
/// flag.
const POLL_TIMEOUT_MS: u16 = 5;

/// One bound socket per flow (flow `i` on port `base_port + i`).
pub struct ReceiverSockets {
    sockets: Vec<UdpSocket>,
    addrs: Vec<SocketAddr>,
}

impl ReceiverSockets {
    /// Binds `flows` non-blocking sockets at `ip`, ports `base_port..`, each
    /// with a receive buffer of `rcvbuf` bytes (the kernel doubles it for
    /// overhead) if given. Call inside the receiver's namespace.
    pub fn bind(
        ip: std::net::Ipv4Addr,
        base_port: u16,
        flows: usize,
        rcvbuf: Option<usize>,
    ) -> io::Result<Self> {
        let mut sockets = Vec::with_capacity(flows);
        let mut addrs = Vec::with_capacity(flows);
        for i in 0..flows {
            let port = u16::try_from(base_port as usize + i).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("port {base_port}+{i} exceeds 65535"),
                )
            })?;
            let s = UdpSocket::bind(SocketAddr::from((ip, port)))?;
            s.set_nonblocking(true)?;
            if let Some(b) = rcvbuf {
                nix::sys::socket::setsockopt(&s, nix::sys::socket::sockopt::RcvBufForce, &b)
                    .or_else(|_| {
                        nix::sys::socket::setsockopt(&s, nix::sys::socket::sockopt::RcvBuf, &b)
                    })
                    .map_err(io::Error::from)?;
            }
            addrs.push(s.local_addr()?);
            sockets.push(s);
        }
        Ok(Self { sockets, addrs })
    }

    /// The address of flow `i`'s socket.
    pub fn addr(&self, flow: usize) -> SocketAddr {
        self.addrs[flow]
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        self.sockets.len()
    }

    /// True when there are no flows.
    pub fn is_empty(&self) -> bool {
        self.sockets.is_empty()
    }
}

/// What was received on one flow.
#[derive(Clone, Debug)]
pub struct FlowCount {
    /// Datagrams read by the application.
    pub received: u64,
    /// Datagrams the kernel dropped at this socket (full receive buffer).
    pub socket_drops: u64,
    /// Datagrams of the wrong size or carrying another flow's index.
    pub malformed: u64,
    /// One-way delay (kernel receive time − submit), ns, for watched flows.
    pub delays: Option<Histogram<u64>>,
    /// Submit → read by the receiver thread, ns, for watched flows.
    pub app_delays: Option<Histogram<u64>>,
    /// Receive time of the first and the last datagram read live, ns.
    pub first_last_ns: Option<(u64, u64)>,
}

/// Everything the receiver counted.
#[derive(Clone, Debug)]
pub struct ReceiverReport {
    /// Per flow, in flow order.
    pub flows: Vec<FlowCount>,
}

impl ReceiverReport {
    /// Datagrams received on all flows.
    pub fn received(&self) -> u64 {
        self.flows.iter().map(|f| f.received).sum()
    }
    /// Socket drops on all flows.
    pub fn socket_drops(&self) -> u64 {
        self.flows.iter().map(|f| f.socket_drops).sum()
    }
}

/// The running receiver.
pub struct Receiver {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<(ReceiverSockets, Vec<FlowCount>)>>,
}

fn new_hist(watched: bool) -> io::Result<Option<Histogram<u64>>> {
    if !watched {
        return Ok(None);
    }
    Histogram::new_with_bounds(1, 60_000_000_000, 3)
        .map(Some)
        .map_err(|e| io::Error::other(e.to_string()))
}

fn new_count(watched: bool) -> io::Result<FlowCount> {
    Ok(FlowCount {
        received: 0,
        socket_drops: 0,
        malformed: 0,
        delays: new_hist(watched)?,
        app_delays: new_hist(watched)?,
        first_last_ns: None,
    })
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC, ns: converts the kernel's receive
/// timestamps (realtime) to the senders' clock. The pair of reads with the
/// smallest gap of three is used.
fn realtime_offset_ns() -> i128 {
    use nix::time::{clock_gettime, ClockId};
    let ns = |c| {
        clock_gettime(c)
            .map(|t| t.tv_sec() as i128 * 1_000_000_000 + t.tv_nsec() as i128)
            .unwrap_or(0)
    };
    let mut best = (i128::MAX, 0);
    for _ in 0..3 {
        let a = ns(ClockId::CLOCK_MONOTONIC);
        let r = ns(ClockId::CLOCK_REALTIME);
        let b = ns(ClockId::CLOCK_MONOTONIC);
        if b - a < best.0 {
            best = (b - a, r - (a + b) / 2);
        }
    }
    best.1
}

/// Reads what is queued on a watched socket, with the kernel's receive
/// timestamp of each datagram.
fn read_ready_timestamped(
    socket: &UdpSocket,
    flow: usize,
    count: &mut FlowCount,
    offset: i128,
) -> usize {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrIn};
    let mut buf = [0u8; 64];
    let mut cmsg = nix::cmsg_space!(nix::sys::time::TimeSpec);
    let mut n = 0;
    loop {
        let mut iov = [io::IoSliceMut::new(&mut buf)];
        let (len, kernel_ns) = match recvmsg::<SockaddrIn>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut cmsg),
            MsgFlags::MSG_DONTWAIT,
        ) {
            Ok(msg) => {
                let mut ts = None;
                if let Ok(cmsgs) = msg.cmsgs() {
                    for c in cmsgs {
                        if let ControlMessageOwned::ScmTimestampns(t) = c {
                            ts = Some(t.tv_sec() as i128 * 1_000_000_000 + t.tv_nsec() as i128);
                        }
                    }
                }
                (msg.bytes, ts)
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return n,
        };
        let now = monotonic_ns();
        n += 1;
        match Datagram::parse(&buf[..len]) {
            Some(d) if d.flow() as usize == flow => {
                count.received += 1;
                let submit = d.submit_ns();
                if let Some(h) = count.app_delays.as_mut() {
                    let _ = h.record(now.saturating_sub(submit).max(1));
                }
                if let (Some(h), Some(k)) = (count.delays.as_mut(), kernel_ns) {
                    let delay = (k - offset - submit as i128).max(1);
                    let _ = h.record(delay.min(u64::MAX as i128) as u64);
                }
                count.first_last_ns = Some(match count.first_last_ns {
                    Some((f, _)) => (f, now),
                    None => (now, now),
                });
            }
            _ => count.malformed += 1,
        }
    }
}

/// Reads everything queued on an unwatched `socket` without blocking,
/// counting it in `count`.
fn read_ready(socket: &UdpSocket, flow: usize, count: &mut FlowCount) -> usize {
    let mut buf = [0u8; 64];
    let mut n = 0;
    loop {
        match socket.recv(&mut buf) {
            Ok(len) => {
                n += 1;
                match Datagram::parse(&buf[..len]) {
                    Some(d) if d.flow() as usize == flow => count.received += 1,
                    _ => count.malformed += 1,
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // WouldBlock: drained. Any other error: nothing more to read.
            Err(_) => return n,
        }
    }
}

/// The kernel's drop counter of a socket (`sk_drops`, what `SO_RXQ_OVFL`
/// reports), read with `SO_MEMINFO`.
pub fn socket_drops(socket: &impl AsFd) -> io::Result<u64> {
    // SK_MEMINFO_VARS: the number of counters SO_MEMINFO returns.
    let mut info = [0u32; 9];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` is a writable buffer of `len` bytes that outlives the
    // call; the kernel writes at most `len` bytes and updates `len`. No
    // crate wraps SO_MEMINFO.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info[libc::SK_MEMINFO_DROPS as usize] as u64)
}

impl Receiver {
    /// Starts the receiver thread reading the `watched` flows live, pinned
    /// to `cpu` if given, under `SCHED_FIFO` at `rt_priority` if given (so
    /// that on a machine with fewer cores than threads a packet's arrival
    /// preempts whatever runs there, instead of waiting for a time slice).
    pub fn spawn(
        sockets: ReceiverSockets,
        watched: Vec<usize>,
        cpu: Option<usize>,
        rt_priority: Option<u8>,
    ) -> io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let mut counts = Vec::with_capacity(sockets.len());
        for i in 0..sockets.len() {
            let w = watched.contains(&i);
            if w {
                nix::sys::socket::setsockopt(
                    &sockets.sockets[i],
                    nix::sys::socket::sockopt::ReceiveTimestampns,
                    &true,
                )
                .map_err(io::Error::from)?;
            }
            counts.push(new_count(w)?);
        }
        let offset = realtime_offset_ns();
        let (tx, rx) = std::sync::mpsc::channel::<io::Result<()>>();
        let thread = std::thread::Builder::new()
            .name("fairway-receiver".into())
            .spawn(move || {
                let mut counts = counts;
                if let Some(c) = cpu {
                    let _ = crate::affinity::pin_current_thread(c);
                }
                if let Some(p) = rt_priority {
                    if let Err(e) = crate::affinity::set_realtime_priority(p) {
                        let _ = tx.send(Err(e));
                        return (sockets, counts);
                    }
                }
                let _ = tx.send(Ok(()));
                let watched: Vec<usize> =
                    watched.into_iter().filter(|&w| w < sockets.len()).collect();
                while !stop2.load(Ordering::Acquire) {
                    let mut got = 0;
                    for &w in &watched {
                        got +=
                            read_ready_timestamped(&sockets.sockets[w], w, &mut counts[w], offset);
                    }
                    if got == 0 {
                        wait_readable(&sockets, &watched);
                    }
                }
                (sockets, counts)
            })?;
        match rx.recv() {
            Ok(Ok(())) => Ok(Self {
                stop,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err(io::Error::other("receiver thread exited during start-up")),
        }
    }

    /// Stops the thread, drains every socket (counting the unwatched flows
    /// now), reads the kernel's per-socket drop counters, and reports.
    pub fn finish(mut self) -> io::Result<ReceiverReport> {
        self.stop.store(true, Ordering::Release);
        let (sockets, mut counts) = self
            .thread
            .take()
            .ok_or_else(|| io::Error::other("receiver already finished"))?
            .join()
            .map_err(|_| io::Error::other("receiver thread panicked"))?;
        let offset = realtime_offset_ns();
        for (i, s) in sockets.sockets.iter().enumerate() {
            if counts[i].delays.is_some() {
                read_ready_timestamped(s, i, &mut counts[i], offset);
            } else {
                read_ready(s, i, &mut counts[i]);
            }
            counts[i].socket_drops = socket_drops(s)?;
        }
        Ok(ReceiverReport { flows: counts })
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sleeps until a watched socket is readable or `POLL_TIMEOUT_MS` passed
/// (the sockets stay non-blocking; this only avoids spinning on a core the
/// senders may need). With nothing watched, just sleeps.
fn wait_readable(sockets: &ReceiverSockets, watched: &[usize]) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    if watched.is_empty() {
        std::thread::sleep(Duration::from_millis(POLL_TIMEOUT_MS as u64));
        return;
    }
    let mut fds: Vec<PollFd<'_>> = watched
        .iter()
        .map(|&w| PollFd::new(sockets.sockets[w].as_fd(), PollFlags::POLLIN))
        .collect();
    let _ = poll(&mut fds, PollTimeout::from(POLL_TIMEOUT_MS));
}
