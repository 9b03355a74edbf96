//! One measured run of one forwarding path: the topology, the generator
//! and the forwarder threads, and the counts read at the start and end of
//! the measured interval.

use crate::packet;
use crate::topology::{self, Topology, FWD_IN, FWD_NS, FWD_OUT, GEN_DEV, GEN_NS};
use fairway_bpf::xdp::{XdpMode, XdpRedirect};
use fairway_bpf::xsk::{XskConfig, XskSocket};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The forwarder's frame I/O.
#[derive(Clone, Copy, Debug)]
pub enum Path {
    /// AF_PACKET, one recvmsg and one send per frame.
    Packet,
    /// AF_XDP, XDP redirect in native mode, copy mode sockets.
    Xdp,
}

impl Path {
    /// Its name in the table.
    pub fn label(self) -> &'static str {
        match self {
            Path::Packet => "AF_PACKET recvmsg/send per frame",
            Path::Xdp => "AF_XDP (native XDP, copy mode)",
        }
    }
}

/// What one path did in the measured interval.
pub struct Outcome {
    /// The interval.
    pub seconds: f64,
    /// Frames the generator sent.
    pub offered: u64,
    /// Frames the sink received.
    pub forwarded: u64,
    /// CPU time of the forwarder's thread in the interval, in seconds.
    pub forwarder_cpu: f64,
    /// The forwarder's and its sockets' drop counters over the whole run.
    pub drops: String,
}

/// The CPU time a running thread has used, in seconds.
fn thread_cpu(thread: &std::thread::JoinHandle<io::Result<String>>) -> io::Result<f64> {
    use std::os::unix::thread::JoinHandleExt;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: the thread is running (it is joined later), `clock` is
    // writable.
    let r = unsafe { libc::pthread_getcpuclockid(thread.as_pthread_t(), &mut clock) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a writable timespec.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// The frame: to a locally administered address, of an ethertype no
/// protocol handles (IEEE local experimental), so that the sink's kernel
/// drops it as soon as it has counted it.
const FRAME: [u8; 64] = {
    let mut f = [0u8; 64];
    let head = [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5];
    let mut i = 0;
    while i < head.len() {
        f[i] = head[i];
        i += 1;
    }
    f
};

fn poll_in(fd: RawFd) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one live pollfd.
    unsafe { libc::poll(&mut p, 1, 10) };
}

/// AF_PACKET: drain the input socket at each wake-up, frame by frame.
fn forward_packet(stop: &AtomicBool, ready: mpsc::Sender<()>) -> io::Result<String> {
    let rx = packet::open(FWD_IN, true)?;
    let tx = packet::open(FWD_OUT, false)?;
    let _ = ready.send(());
    let mut buf = [0u8; 2048];
    let mut refused = 0u64;
    while !stop.load(Ordering::Relaxed) {
        poll_in(rx.as_raw_fd());
        while let Some(n) = packet::recv(rx.as_raw_fd(), &mut buf) {
            if !packet::send(tx.as_raw_fd(), &buf[..n.min(buf.len())]) {
                refused += 1;
            }
        }
    }
    let mut st = [0u32; 2];
    let mut len = std::mem::size_of_val(&st) as libc::socklen_t;
    // SAFETY: tpacket_stats is two u32s, the length passed.
    unsafe {
        libc::getsockopt(
            rx.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            st.as_mut_ptr().cast(),
            &mut len,
        )
    };
    Ok(format!("socket drops {}, send refused {refused}", st[1]))
}

/// The AF_XDP sockets' sizes: 8192 frames waiting in the RX ring hold
/// about as many 64-byte frames as the AF_PACKET socket's 8 MiB receive
/// buffer, so that both ride out the same scheduling delays.
const RINGS: XskConfig = XskConfig {
    frame_size: 2048,
    ring_size: 8192,
    frames: 16384,
};

/// AF_XDP: receive a batch from the input socket, copy each frame into
/// the output socket's TX ring, publish, repeat.
fn forward_xdp(stop: &AtomicBool, ready: mpsc::Sender<()>) -> io::Result<String> {
    let e = |e: fairway_bpf::BpfError| io::Error::other(e.to_string());
    let mut xdp = XdpRedirect::attach(FWD_IN, XdpMode::Native).map_err(e)?;
    let mut rx = XskSocket::bind(FWD_IN, 0, RINGS).map_err(e)?;
    xdp.register(0, &rx).map_err(e)?;
    let mut tx = XskSocket::bind(FWD_OUT, 0, RINGS).map_err(e)?;
    let _ = ready.send(());
    while !stop.load(Ordering::Relaxed) {
        poll_in(rx.as_raw_fd());
        loop {
            let n = rx.receive(64, |frame| {
                tx.send(frame);
            });
            tx.flush().map_err(e)?;
            if n == 0 {
                break;
            }
        }
    }
    let k = rx.kernel_counters().map_err(e)?;
    let c = tx.counters();
    Ok(format!(
        "rx ring full {}, rx dropped {}, tx full {}",
        k.rx_ring_full, k.rx_dropped, c.tx_full
    ))
}

fn joined<T>(r: std::thread::Result<io::Result<T>>) -> io::Result<T> {
    r.unwrap_or_else(|_| Err(io::Error::other("a thread panicked")))
}

/// Builds the path, runs generator and forwarder, measures `seconds`
/// after half a second of warm-up, and removes the path.
pub fn run_path(path: Path, seconds: u64) -> io::Result<Outcome> {
    let topo = Topology::create()?;
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let (ready_tx, ready_rx) = mpsc::channel();
    let fwd = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || -> io::Result<String> {
            topology::enter(FWD_NS, 1)?;
            match path {
                Path::Packet => forward_packet(&stop, ready_tx),
                Path::Xdp => forward_xdp(&stop, ready_tx),
            }
        })
    };
    if ready_rx.recv_timeout(Duration::from_secs(10)).is_err() {
        stop.store(true, Ordering::Relaxed);
        return Err(fwd
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("forwarder panicked")))
            .err()
            .unwrap_or_else(|| io::Error::other("forwarder not ready")));
    }
    let gen = {
        let (stop, sent) = (Arc::clone(&stop), Arc::clone(&sent));
        std::thread::spawn(move || -> io::Result<()> {
            topology::enter(GEN_NS, 0)?;
            let fd = packet::open(GEN_DEV, false)?;
            while !stop.load(Ordering::Relaxed) {
                let n = packet::send_batch(&fd, &FRAME, 64);
                sent.fetch_add(n as u64, Ordering::Relaxed);
            }
            Ok(())
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let (s0, r0, t0) = (
        sent.load(Ordering::Relaxed),
        topo.sink_received()?,
        Instant::now(),
    );
    let c0 = thread_cpu(&fwd)?;
    std::thread::sleep(Duration::from_secs(seconds));
    let (s1, r1, t1) = (
        sent.load(Ordering::Relaxed),
        topo.sink_received()?,
        Instant::now(),
    );
    let c1 = thread_cpu(&fwd)?;
    stop.store(true, Ordering::Relaxed);
    joined(gen.join())?;
    let drops = joined(fwd.join())?;
    Ok(Outcome {
        seconds: (t1 - t0).as_secs_f64(),
        offered: s1 - s0,
        forwarded: r1 - r0,
        forwarder_cpu: c1 - c0,
        drops,
    })
}
