//! The receiving end (seed 001 §5.5 and footnote 8): one UDP socket per
//! flow, on its own port. A receiver thread reads the *watched* flows (the
//! target client) as packets arrive, with non-blocking I/O, and records
//! each packet's one-way delay from the submit time in its payload. The
//! other flows are not read during the run — as in seed 001 §5.2,
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
//! is read from [`super::Testbed::kernel_drops`].

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
    /// One-way delay (receive − submit), ns, for watched flows.
    pub delays: Option<Histogram<u64>>,
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

fn new_count(watched: bool) -> io::Result<FlowCount> {
    let delays = if watched {
        Some(
            Histogram::new_with_bounds(1, 60_000_000_000, 3)
                .map_err(|e| io::Error::other(e.to_string()))?,
        )
    } else {
        None
    };
    Ok(FlowCount {
        received: 0,
        socket_drops: 0,
        malformed: 0,
        delays,
        first_last_ns: None,
    })
}

/// Reads everything queued on `socket` without blocking, counting it in
/// `count`; `live` records delays.
fn read_ready(socket: &UdpSocket, flow: usize, count: &mut FlowCount, live: bool) -> usize {
    let mut buf = [0u8; 64];
    let mut n = 0;
    loop {
        match socket.recv(&mut buf) {
            Ok(len) => {
                n += 1;
                match Datagram::parse(&buf[..len]) {
                    Some(d) if d.flow() as usize == flow => {
                        count.received += 1;
                        if live {
                            let now = monotonic_ns();
                            if let Some(h) = count.delays.as_mut() {
                                let _ = h.record(now.saturating_sub(d.submit_ns()).max(1));
                            }
                            count.first_last_ns = Some(match count.first_last_ns {
                                Some((f, _)) => (f, now),
                                None => (now, now),
                            });
                        }
                    }
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
            counts.push(new_count(watched.contains(&i))?);
        }
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
                        got += read_ready(&sockets.sockets[w], w, &mut counts[w], true);
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
        for (i, s) in sockets.sockets.iter().enumerate() {
            let live = counts[i].delays.is_some();
            read_ready(s, i, &mut counts[i], live);
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
