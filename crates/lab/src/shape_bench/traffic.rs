//! Timestamped UDP: a sender thread in the sender namespace (one socket
//! per flow, so each flow is its own 5-tuple), a receiver thread in the
//! receiver namespace (one socket on port [`PORT`] for every circuit's
//! address). Each datagram carries its flow, its run (datagrams a queue
//! still held from an earlier run are ignored), a sequence number and its
//! send time as nanoseconds since a shared `Instant`: sender and receiver
//! are threads of one process, so one clock, and a delay is the receive
//! time minus the send time (the receiver thread's own wake-up included,
//! alike for both sides of the bench).
//!
//! Checksums are off (`SO_NO_CHECK`): a veth leaves them to an offload
//! the frame never meets once `fairway shape` forwards it raw; both sides
//! get the same frames.

use crate::testbed::{DeviceCounters, TestbedError};
use hdrhistogram::Histogram;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

static RUN: AtomicU16 = AtomicU16::new(1);
use std::time::{Duration, Instant};

/// The receiver's port.
pub const PORT: u16 = 9000;
/// Bytes of the header each payload starts with (flow, run, sequence,
/// time).
pub const HEADER: usize = 16;
/// The largest payload: a 1500-byte IP packet.
pub const MAX_PAYLOAD: usize = 1472;
/// The payload of the smallest Ethernet frame (60 bytes, 64 with the FCS).
pub const SMALL_PAYLOAD: usize = 18;
/// Ethernet + IPv4 + UDP header bytes: a frame is payload + this.
pub const FRAME_OVERHEAD: usize = 42;

/// One flow.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    /// Destination (a circuit's address).
    pub dst: Ipv4Addr,
    /// UDP payload bytes, [`HEADER`]`..=`[`MAX_PAYLOAD`].
    pub payload: usize,
    /// Datagrams per second; 0: as fast as the sender can.
    pub pps: f64,
}

impl Flow {
    /// A flow of `bps` frame bits per second of `payload`-byte datagrams.
    pub fn at_bps(dst: Ipv4Addr, payload: usize, bps: u64) -> Flow {
        let frame = (payload + FRAME_OVERHEAD) as f64 * 8.0;
        Flow {
            dst,
            payload,
            pps: bps as f64 / frame,
        }
    }

    /// Frame bytes of each datagram.
    pub fn frame(&self) -> usize {
        self.payload + FRAME_OVERHEAD
    }
}

/// What one flow did.
#[derive(Debug)]
pub struct FlowStats {
    /// Datagrams the sender handed to the kernel.
    pub sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// Datagrams received inside the measuring window.
    pub in_window: u64,
    /// Datagrams received with a sequence number below one seen before.
    pub reordered: u64,
    /// One-way delays of the datagrams received in the window, µs.
    pub delay_us: Histogram<u64>,
}

impl FlowStats {
    /// Frame bits per second received in a window of `window`.
    pub fn bps(&self, flow: &Flow, window: Duration) -> f64 {
        self.in_window as f64 * flow.frame() as f64 * 8.0 / window.as_secs_f64()
    }
}

/// The timing of a run: traffic for `seconds`, measured from `warmup` on.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// How long the sender sends.
    pub seconds: Duration,
    /// Start of the measuring window.
    pub warmup: Duration,
}

impl Timing {
    /// The measuring window's length.
    pub fn window(&self) -> Duration {
        self.seconds.saturating_sub(self.warmup)
    }
}

/// A run's results.
#[derive(Debug)]
pub struct Outcome<T> {
    /// Per flow, in the order given.
    pub flows: Vec<FlowStats>,
    /// CPU time of the sender thread (the kernel forwards in it).
    pub sender_cpu: Duration,
    /// CPU time of the receiver thread.
    pub receiver_cpu: Duration,
    /// Frames the receiver's device received in the window, if counted.
    pub device_frames: Option<u64>,
    /// What the action at the window's start returned.
    pub action: T,
}

/// Sends `flows` for `timing.seconds`; at the window's start, runs
/// `action` on the calling thread (a configuration change). With
/// `count_device`, the receiver device's frames in the window are counted
/// too (what was forwarded, socket drops or not).
pub fn run<T: Send>(
    topo: &super::topology::Topology,
    flows: &[Flow],
    timing: Timing,
    count_device: bool,
    action: impl FnOnce() -> T,
) -> Result<Outcome<T>, TestbedError> {
    if let Some(f) = flows
        .iter()
        .find(|f| !(HEADER..=MAX_PAYLOAD).contains(&f.payload))
    {
        return Err(TestbedError::Command(
            "traffic".into(),
            format!("payload {} outside {HEADER}..={MAX_PAYLOAD}", f.payload),
        ));
    }
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let epoch = Instant::now();
    let stop = AtomicBool::new(false);
    let counters = if count_device {
        Some(DeviceCounters::open(
            &topo.receiver,
            super::topology::RECEIVER_DEV,
        )?)
    } else {
        None
    };
    let rx_sock = super::topology::Topology::in_ns(&topo.receiver, receiver_socket)??;
    let tx_socks = super::topology::Topology::in_ns(&topo.sender, || {
        flows
            .iter()
            .map(|_| sender_socket())
            .collect::<Result<Vec<_>, _>>()
    })??;
    std::thread::scope(|s| {
        let rx = s.spawn(|| receive(&rx_sock, flows.len(), run, epoch, timing, &stop));
        let tx = s.spawn(|| send(&tx_socks, flows, run, epoch, timing, counters));
        // The action runs when the window opens, while traffic flows.
        sleep_until(epoch + timing.warmup);
        let action = action();
        let (sent, sender_cpu, device_frames) = tx.join().map_err(|_| panicked())??;
        // Time for what is queued to drain before the receiver stops.
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::SeqCst);
        let (mut flows_out, receiver_cpu) = rx.join().map_err(|_| panicked())?;
        for (f, n) in flows_out.iter_mut().zip(sent) {
            f.sent = n;
        }
        Ok(Outcome {
            flows: flows_out,
            sender_cpu,
            receiver_cpu,
            device_frames,
            action,
        })
    })
}

fn panicked() -> TestbedError {
    TestbedError::Io(std::io::Error::other("a traffic thread panicked"))
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

fn set_int(sock: &UdpSocket, opt: libc::c_int, value: libc::c_int) -> std::io::Result<()> {
    // SAFETY: a live socket and a c_int option of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn receiver_socket() -> std::io::Result<UdpSocket> {
    let sock = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, PORT))?;
    // Root may exceed rmem_max: a burst must not overflow the socket.
    set_int(&sock, libc::SO_RCVBUFFORCE, 32 << 20)?;
    sock.set_read_timeout(Some(Duration::from_millis(20)))?;
    Ok(sock)
}

fn sender_socket() -> std::io::Result<UdpSocket> {
    let sock = UdpSocket::bind(SocketAddrV4::new(
        super::topology::SENDER_IP
            .parse()
            .unwrap_or(Ipv4Addr::UNSPECIFIED),
        0,
    ))?;
    set_int(&sock, libc::SO_NO_CHECK, 1)?;
    set_int(&sock, libc::SO_SNDBUFFORCE, 4 << 20)?;
    Ok(sock)
}

/// CPU time of the calling thread.
pub fn thread_cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

type Sent = (Vec<u64>, Duration, Option<u64>);

fn send(
    socks: &[UdpSocket],
    flows: &[Flow],
    run: u16,
    epoch: Instant,
    timing: Timing,
    mut counters: Option<DeviceCounters>,
) -> Result<Sent, TestbedError> {
    let cpu0 = thread_cpu();
    let mut sent = vec![0u64; flows.len()];
    let mut seq = vec![0u32; flows.len()];
    let mut buf = vec![0u8; flows.iter().map(|f| f.payload).max().unwrap_or(HEADER)];
    let dsts: Vec<SocketAddrV4> = flows
        .iter()
        .map(|f| SocketAddrV4::new(f.dst, PORT))
        .collect();
    let gaps: Vec<Option<Duration>> = flows
        .iter()
        .map(|f| (f.pps > 0.0).then(|| Duration::from_secs_f64(1.0 / f.pps)))
        .collect();
    let mut due: Vec<Duration> = vec![Duration::ZERO; flows.len()];
    let mut at_window = None;
    let end = epoch + timing.seconds;
    let mut send_one = |i: usize, buf: &mut [u8]| {
        let len = flows[i].payload;
        buf[..2].copy_from_slice(&(i as u16).to_le_bytes());
        buf[2..4].copy_from_slice(&run.to_le_bytes());
        buf[4..8].copy_from_slice(&seq[i].to_le_bytes());
        let t = epoch.elapsed().as_nanos() as u64;
        buf[8..16].copy_from_slice(&t.to_le_bytes());
        if socks[i].send_to(&buf[..len], dsts[i]).is_ok() {
            seq[i] += 1;
            sent[i] += 1;
        }
    };
    let flat_out = gaps.iter().all(Option::is_none);
    loop {
        let now = Instant::now();
        if now >= end || crate::shape_bench::interrupted() {
            break;
        }
        if at_window.is_none() && now >= epoch + timing.warmup {
            at_window = Some(match counters.as_mut() {
                Some(c) => c.read()?.rx_packets,
                None => 0,
            });
        }
        if flat_out {
            for _ in 0..64 {
                for i in 0..flows.len() {
                    send_one(i, &mut buf);
                }
            }
            continue;
        }
        let elapsed = now - epoch;
        for i in 0..flows.len() {
            let Some(gap) = gaps[i] else { continue };
            while due[i] <= elapsed {
                send_one(i, &mut buf);
                due[i] += gap;
            }
        }
        // What is due, then a short sleep: a spinning sender would take a
        // core from the forwarder on a small machine.
        std::thread::sleep(Duration::from_micros(200));
    }
    let device = match (counters.as_mut(), at_window) {
        (Some(c), Some(start)) => Some(c.read()?.rx_packets.saturating_sub(start)),
        _ => None,
    };
    Ok((sent, thread_cpu() - cpu0, device))
}

fn receive(
    sock: &UdpSocket,
    n: usize,
    run: u16,
    epoch: Instant,
    timing: Timing,
    stop: &AtomicBool,
) -> (Vec<FlowStats>, Duration) {
    let cpu0 = thread_cpu();
    let mut out: Vec<FlowStats> = (0..n)
        .map(|_| FlowStats {
            sent: 0,
            received: 0,
            in_window: 0,
            reordered: 0,
            delay_us: Histogram::new_with_bounds(1, 600_000_000, 3)
                .expect("constant histogram bounds are valid"),
        })
        .collect();
    let mut next_seq = vec![0u32; n];
    let mut buf = [0u8; 2048];
    let (from, to) = (timing.warmup, timing.seconds);
    while !stop.load(Ordering::SeqCst) {
        let Ok(len) = sock.recv(&mut buf) else {
            continue;
        };
        let now = epoch.elapsed();
        if len < HEADER {
            continue;
        }
        if u16::from_le_bytes([buf[2], buf[3]]) != run {
            continue;
        }
        let flow = u16::from_le_bytes([buf[0], buf[1]]) as usize;
        let Some(f) = out.get_mut(flow) else { continue };
        let seq = u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]);
        let sent_ns = u64::from_le_bytes(buf[8..16].try_into().unwrap_or([0; 8]));
        f.received += 1;
        if seq < next_seq[flow] {
            f.reordered += 1;
        } else {
            next_seq[flow] = seq + 1;
        }
        // The rate counts arrivals in the window; the delays, datagrams
        // sent in it (a queue filled before it is the warm-up's).
        if (from..=to).contains(&now) {
            f.in_window += 1;
        }
        let sent_at = Duration::from_nanos(sent_ns);
        if sent_at >= from {
            let us = now.saturating_sub(sent_at).as_micros() as u64;
            f.delay_us.saturating_record(us.max(1));
        }
    }
    (out, thread_cpu() - cpu0)
}
