//! Timestamped UDP: a sender thread in the sender namespace (one socket
//! per flow, so each flow is its own 5-tuple), a receiver thread in the
//! receiver namespace (one socket on port [`PORT`] for every circuit's
//! address). Each datagram carries its flow, its run (datagrams a queue
//! still held from an earlier run are ignored), a sequence number and its
//! send time as nanoseconds of `CLOCK_REALTIME` since the run's start:
//! sender and receiver are threads of one process, so one clock. A
//! datagram's delay is its arrival time minus its send time, the arrival
//! time being the kernel's receive timestamp (`SO_TIMESTAMPNS`: stamped
//! when the frame enters the receiver's network stack, on the same clock),
//! not the moment the receiver thread reads it: on a small machine the
//! receiver thread waits for a core now and then, and a datagram read
//! late behind a socket buffer of bulk ones would be measured late. The
//! reading time is kept too ([`Arrival::read_ns`]), so the two can be
//! compared; without a kernel stamp the reading time is the arrival.
//!
//! Checksums are off (`SO_NO_CHECK`): a veth leaves them to an offload
//! the frame never meets once `fairway shape` forwards it raw; both sides
//! get the same frames.

use crate::testbed::{DeviceCounters, TestbedError};
use hdrhistogram::Histogram;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::time::{Duration, Instant};

static RUN: AtomicU16 = AtomicU16::new(1);

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
/// Arrivals traced per flow ([`FlowStats::trace`]): the first ones sent
/// in the window, every datagram of a sparse flow.
pub const TRACE_MAX: usize = 10_000;

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
    /// Of them, those handed over inside the measuring window: what was
    /// really offered there (a loaded sender may fall short of the
    /// flow's nominal rate).
    pub sent_in_window: u64,
    /// Datagrams the kernel refused to take from the sender (`send_to`
    /// failed, e.g. `ENOBUFS`): not sent, not counted in `sent`.
    pub send_failed: u64,
    /// Datagrams received.
    pub received: u64,
    /// Datagrams received inside the measuring window.
    pub in_window: u64,
    /// Datagrams received with a sequence number below one seen before.
    pub reordered: u64,
    /// One-way delays of the datagrams sent in the window, µs, to the
    /// kernel's arrival stamp.
    pub delay_us: Histogram<u64>,
    /// The same datagrams' delays to the moment the receiver thread read
    /// them, µs.
    pub read_delay_us: Histogram<u64>,
    /// The first [`TRACE_MAX`] of them, one by one.
    pub trace: Vec<Arrival>,
}

/// One datagram's times, ns since the run's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Its sequence number in its flow.
    pub seq: u32,
    /// When the sender handed it to the kernel.
    pub sent_ns: u64,
    /// The kernel's receive stamp, if the socket gave one.
    pub kernel_ns: Option<u64>,
    /// When the receiver thread read it.
    pub read_ns: u64,
}

impl Arrival {
    /// When it arrived: the kernel's stamp, else the reading time.
    pub fn arrived_ns(&self) -> u64 {
        self.kernel_ns.unwrap_or(self.read_ns)
    }

    /// Its one-way delay, ns.
    pub fn delay_ns(&self) -> u64 {
        self.arrived_ns().saturating_sub(self.sent_ns)
    }
}

/// `CLOCK_REALTIME`, ns: the clock of the kernel's receive stamps.
pub fn realtime_ns() -> u64 {
    // SAFETY: all-zero is a valid timespec; clock_gettime writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    timespec_ns(&ts)
}

fn timespec_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
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
    /// Datagrams the receiving socket dropped for want of buffer space
    /// (`SO_RXQ_OVFL`), all flows: lost by the measurement, not by the
    /// path measured.
    pub receiver_drops: u64,
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
    let epoch_real = realtime_ns();
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
        let rx = s.spawn(|| receive(&rx_sock, flows.len(), run, epoch_real, timing, &stop));
        let tx = s.spawn(|| {
            let clock = (epoch, epoch_real);
            send(&tx_socks, flows, run, clock, timing, counters)
        });
        // The action runs when the window opens, while traffic flows.
        sleep_until(epoch + timing.warmup);
        let action = action();
        let (sent, sender_cpu, device_frames) = tx.join().map_err(|_| panicked())??;
        // Time for what is queued to drain before the receiver stops.
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::SeqCst);
        let (mut flows_out, receiver_cpu, receiver_drops) = rx.join().map_err(|_| panicked())?;
        for (f, n) in flows_out.iter_mut().zip(sent) {
            (f.sent, f.sent_in_window, f.send_failed) = (n.total, n.in_window, n.failed);
        }
        Ok(Outcome {
            flows: flows_out,
            sender_cpu,
            receiver_cpu,
            device_frames,
            receiver_drops,
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
    set_int(&sock, libc::SO_TIMESTAMPNS, 1)?;
    set_int(&sock, libc::SO_RXQ_OVFL, 1)?;
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

/// What the sender did with one flow.
#[derive(Clone, Copy, Debug, Default)]
struct SentCount {
    total: u64,
    in_window: u64,
    failed: u64,
}

type Sent = (Vec<SentCount>, Duration, Option<u64>);

fn send(
    socks: &[UdpSocket],
    flows: &[Flow],
    run: u16,
    (epoch, epoch_real): (Instant, u64),
    timing: Timing,
    mut counters: Option<DeviceCounters>,
) -> Result<Sent, TestbedError> {
    let cpu0 = thread_cpu();
    let mut sent = vec![SentCount::default(); flows.len()];
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
    let window = (
        timing.warmup.as_nanos() as u64,
        timing.seconds.as_nanos() as u64,
    );
    let mut send_one = |i: usize, buf: &mut [u8]| {
        let len = flows[i].payload;
        buf[..2].copy_from_slice(&(i as u16).to_le_bytes());
        buf[2..4].copy_from_slice(&run.to_le_bytes());
        buf[4..8].copy_from_slice(&seq[i].to_le_bytes());
        let t = realtime_ns().saturating_sub(epoch_real);
        buf[8..16].copy_from_slice(&t.to_le_bytes());
        let n = &mut sent[i];
        if socks[i].send_to(&buf[..len], dsts[i]).is_ok() {
            seq[i] += 1;
            n.total += 1;
            n.in_window += u64::from((window.0..=window.1).contains(&t));
        } else {
            n.failed += 1;
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
        // What is due, earliest first across the flows: a flow sent after
        // every other flow's due datagrams would always meet the queue
        // they just filled (a tail-drop FIFO would drop it every time).
        while let Some(i) = next_due(&gaps, &due, elapsed) {
            send_one(i, &mut buf);
            due[i] += gaps[i].unwrap_or(Duration::MAX);
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

/// The paced flow whose next datagram is due earliest, if one is due by
/// `elapsed` (ties: the lowest index).
fn next_due(gaps: &[Option<Duration>], due: &[Duration], elapsed: Duration) -> Option<usize> {
    (0..gaps.len())
        .filter(|&i| gaps[i].is_some() && due[i] <= elapsed)
        .min_by_key(|&i| due[i])
}

/// Bytes of control data a receive may carry: a timestamp and a drop
/// count.
const CONTROL: usize = 96;

/// One datagram read.
struct Received {
    len: usize,
    /// The kernel's receive stamp (`CLOCK_REALTIME` ns), if given.
    stamp: Option<u64>,
    /// The socket's drops so far (`SO_RXQ_OVFL`), if given.
    drops: Option<u32>,
}

/// Reads one datagram into `buf`.
fn recv_stamped(sock: &UdpSocket, buf: &mut [u8]) -> std::io::Result<Received> {
    // u64s: the control buffer is aligned for a cmsghdr.
    let mut control = [0u64; CONTROL / 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: all-zero is a valid msghdr (no name, no iovecs).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = CONTROL as _;
    // SAFETY: `msg` points at `iov` (into `buf`) and `control`, all live
    // and of the lengths given.
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Received {
        len: n as usize,
        stamp: stamp_of(&msg),
        drops: drops_of(&msg),
    })
}

/// The `SO_RXQ_OVFL` count among `msg`'s control messages: datagrams
/// the socket dropped since it was opened.
fn drops_of(msg: &libc::msghdr) -> Option<u32> {
    // SAFETY: as in `stamp_of`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let h = &*c;
            let want = libc::CMSG_LEN(std::mem::size_of::<u32>() as u32) as usize;
            if h.cmsg_level == libc::SOL_SOCKET
                && h.cmsg_type == libc::SO_RXQ_OVFL
                && h.cmsg_len as usize >= want
            {
                return Some(std::ptr::read_unaligned(libc::CMSG_DATA(c).cast()));
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

/// The `SCM_TIMESTAMPNS` stamp among `msg`'s control messages, ns.
pub fn stamp_of(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: `msg`'s control pointer and length describe a live buffer
    // the kernel (or the caller) filled; the CMSG macros stay inside it.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let h = &*c;
            let len = h.cmsg_len as usize;
            let want = libc::CMSG_LEN(std::mem::size_of::<libc::timespec>() as u32) as usize;
            if h.cmsg_level == libc::SOL_SOCKET
                && h.cmsg_type == libc::SCM_TIMESTAMPNS
                && len >= want
            {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                return Some(timespec_ns(&ts));
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

/// The header fields of a datagram of this run: flow, sequence number,
/// send time.
fn parse(buf: &[u8], run: u16) -> Option<(usize, u32, u64)> {
    if buf.len() < HEADER || u16::from_le_bytes([buf[2], buf[3]]) != run {
        return None;
    }
    let flow = u16::from_le_bytes([buf[0], buf[1]]) as usize;
    let seq = u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]);
    let sent_ns = u64::from_le_bytes(buf[8..16].try_into().ok()?);
    Some((flow, seq, sent_ns))
}

fn new_stats() -> FlowStats {
    let h = || {
        Histogram::new_with_bounds(1, 600_000_000, 3).expect("constant histogram bounds are valid")
    };
    FlowStats {
        sent: 0,
        sent_in_window: 0,
        send_failed: 0,
        received: 0,
        in_window: 0,
        reordered: 0,
        delay_us: h(),
        read_delay_us: h(),
        trace: Vec::new(),
    }
}

impl FlowStats {
    /// Counts one arrival; `window` bounds the arrivals counted for the
    /// rate and the send times of the delays recorded.
    pub fn record(&mut self, a: Arrival, next_seq: &mut u32, window: (Duration, Duration)) {
        self.received += 1;
        if a.seq < *next_seq {
            self.reordered += 1;
        } else {
            *next_seq = a.seq + 1;
        }
        let (from, to) = (window.0.as_nanos() as u64, window.1.as_nanos() as u64);
        // The rate counts arrivals in the window; the delays, datagrams
        // sent in it (a queue filled before it is the warm-up's).
        if (from..=to).contains(&a.arrived_ns()) {
            self.in_window += 1;
        }
        if a.sent_ns >= from {
            let us = |ns: u64| (ns / 1000).max(1);
            self.delay_us.saturating_record(us(a.delay_ns()));
            self.read_delay_us
                .saturating_record(us(a.read_ns.saturating_sub(a.sent_ns)));
            if self.trace.len() < TRACE_MAX {
                self.trace.push(a);
            }
        }
    }
}

fn receive(
    sock: &UdpSocket,
    n: usize,
    run: u16,
    epoch_real: u64,
    timing: Timing,
    stop: &AtomicBool,
) -> (Vec<FlowStats>, Duration, u64) {
    let cpu0 = thread_cpu();
    let mut out: Vec<FlowStats> = (0..n).map(|_| new_stats()).collect();
    let mut next_seq = vec![0u32; n];
    let mut buf = [0u8; 2048];
    let window = (timing.warmup, timing.seconds);
    let mut drops = 0u32;
    loop {
        let r = recv_stamped(sock, &mut buf);
        // Once stopped, what the socket still holds is read to the end
        // (a read that times out): a receiver that fell behind must not
        // lose the window's last datagrams from the count.
        let Ok(Received {
            len,
            stamp,
            drops: d,
        }) = r
        else {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            continue;
        };
        drops = drops.max(d.unwrap_or(0));
        let kernel = stamp;
        let read_ns = realtime_ns().saturating_sub(epoch_real);
        let Some((flow, seq, sent_ns)) = parse(&buf[..len.min(buf.len())], run) else {
            continue;
        };
        let (Some(f), Some(next)) = (out.get_mut(flow), next_seq.get_mut(flow)) else {
            continue;
        };
        let a = Arrival {
            seq,
            sent_ns,
            kernel_ns: kernel.map(|k| k.saturating_sub(epoch_real)),
            read_ns,
        };
        f.record(a, next, window);
    }
    (out, thread_cpu() - cpu0, u64::from(drops))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A msghdr whose control buffer holds `cmsgs` (level, type, data).
    fn with_control(control: &mut [u64], cmsgs: &[(i32, i32, &[u8])]) -> libc::msghdr {
        // SAFETY: all-zero is a valid msghdr.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(control) as _;
        // SAFETY: the CMSG macros walk the buffer just described, which
        // is large enough for the messages the tests put in it.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            let mut used = 0;
            for (level, ty, data) in cmsgs {
                (*c).cmsg_level = *level;
                (*c).cmsg_type = *ty;
                (*c).cmsg_len = libc::CMSG_LEN(data.len() as u32) as _;
                std::ptr::copy_nonoverlapping(data.as_ptr(), libc::CMSG_DATA(c), data.len());
                used += libc::CMSG_SPACE(data.len() as u32) as usize;
                c = libc::CMSG_NXTHDR(&msg, c);
            }
            msg.msg_controllen = used as _;
        }
        msg
    }

    fn timespec_bytes(sec: i64, nsec: i64) -> Vec<u8> {
        let ts = libc::timespec {
            tv_sec: sec as libc::time_t,
            tv_nsec: nsec as libc::c_long,
        };
        // SAFETY: a timespec is plain data of its size.
        unsafe {
            std::slice::from_raw_parts(
                (&ts as *const libc::timespec).cast::<u8>(),
                std::mem::size_of::<libc::timespec>(),
            )
        }
        .to_vec()
    }

    #[test]
    fn the_kernel_stamp_is_found_among_the_control_messages() {
        let mut control = [0u64; 16];
        let ts = timespec_bytes(12, 345_678_901);
        let other = 7i32.to_ne_bytes();
        let msg = with_control(
            &mut control,
            &[
                (libc::SOL_IP, libc::IP_TTL, &other),
                (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, &ts),
            ],
        );
        assert_eq!(stamp_of(&msg), Some(12_345_678_901));
    }

    #[test]
    fn the_socket_drop_count_is_found_beside_the_stamp() {
        let mut control = [0u64; 16];
        let ts = timespec_bytes(1, 2);
        let drops = 4242u32.to_ne_bytes();
        let msg = with_control(
            &mut control,
            &[
                (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, &ts),
                (libc::SOL_SOCKET, libc::SO_RXQ_OVFL, &drops),
            ],
        );
        assert_eq!(
            (stamp_of(&msg), drops_of(&msg)),
            (Some(1_000_000_002), Some(4242))
        );
        let msg = with_control(
            &mut control,
            &[(libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, &ts)],
        );
        assert_eq!(drops_of(&msg), None);
        // What a receive may carry fits the buffer it is given.
        // SAFETY: CMSG_SPACE is arithmetic on its argument.
        let both = unsafe { libc::CMSG_SPACE(16) + libc::CMSG_SPACE(4) };
        assert!(both as usize <= CONTROL);
    }

    #[test]
    fn no_stamp_without_a_timestamp_message() {
        let mut control = [0u64; 16];
        let other = 7i32.to_ne_bytes();
        let msg = with_control(&mut control, &[(libc::SOL_IP, libc::IP_TTL, &other)]);
        assert_eq!(stamp_of(&msg), None);
        // SAFETY: all-zero is a valid msghdr: no control data at all.
        let empty: libc::msghdr = unsafe { std::mem::zeroed() };
        assert_eq!(stamp_of(&empty), None);
    }

    #[test]
    fn the_delay_ends_at_the_kernel_arrival_not_at_the_late_read() {
        let window = (Duration::from_millis(10), Duration::from_secs(5));
        let mut f = new_stats();
        let mut next = 0;
        // Sent at 20 ms, in the receiver's stack 0.3 ms later, read by a
        // receiver thread that had no core for 60 ms.
        let late_read = Arrival {
            seq: 0,
            sent_ns: 20_000_000,
            kernel_ns: Some(20_300_000),
            read_ns: 80_300_000,
        };
        f.record(late_read, &mut next, window);
        assert_eq!(f.delay_us.max(), f.delay_us.highest_equivalent(300));
        assert_eq!(
            f.read_delay_us.max(),
            f.read_delay_us.highest_equivalent(60_300)
        );
        assert_eq!(f.trace, [late_read]);
        // Without a stamp, the read time is the arrival.
        let unstamped = Arrival {
            kernel_ns: None,
            seq: 1,
            ..late_read
        };
        assert_eq!(unstamped.delay_ns(), 60_300_000);
        // Sent before the window: counted, not measured.
        let early = Arrival {
            seq: 2,
            sent_ns: 1_000_000,
            ..late_read
        };
        f.record(early, &mut next, window);
        assert_eq!((f.received, f.in_window, f.delay_us.len()), (2, 2, 1));
    }

    #[test]
    fn due_datagrams_go_earliest_first_across_flows() {
        let ms = Duration::from_millis;
        // A bulk flow every 1 ms and a sparse one every 20 ms, both
        // started at 0, after 2.5 ms: the sparse one's first datagram is
        // as early as the bulk's first, then the bulk catches up.
        let gaps = [Some(ms(1)), Some(ms(20)), None];
        let mut due = [ms(0), ms(0), ms(0)];
        let mut order = Vec::new();
        while let Some(i) = next_due(&gaps, &due, Duration::from_micros(2500)) {
            order.push(i);
            due[i] += gaps[i].unwrap();
        }
        assert_eq!(order, [0, 1, 0, 0]);
        // Later, the sparse datagram due at 20 ms goes between the bulk
        // ones due at 20 and 21 ms (a tie goes to the lower index), not
        // after every bulk one due.
        let mut due = [ms(19), ms(20), ms(0)];
        let mut order = Vec::new();
        while let Some(i) = next_due(&gaps, &due, ms(21)) {
            order.push((i, due[i]));
            due[i] += gaps[i].unwrap();
        }
        assert_eq!(order, [(0, ms(19)), (0, ms(20)), (1, ms(20)), (0, ms(21))]);
    }

    #[test]
    fn only_this_runs_datagrams_parse() {
        let mut buf = [0u8; HEADER];
        buf[..2].copy_from_slice(&3u16.to_le_bytes());
        buf[2..4].copy_from_slice(&9u16.to_le_bytes());
        buf[4..8].copy_from_slice(&41u32.to_le_bytes());
        buf[8..16].copy_from_slice(&5_000u64.to_le_bytes());
        assert_eq!(parse(&buf, 9), Some((3, 41, 5_000)));
        assert_eq!(parse(&buf, 8), None);
        assert_eq!(parse(&buf[..HEADER - 1], 9), None);
    }
}
