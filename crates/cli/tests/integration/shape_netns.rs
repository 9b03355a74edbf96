//! What the real-frame tests of `fairway shape` share: three network
//! namespaces, sender — shaper — receiver, joined by two veth pairs (the
//! shaper's namespace holds both inner ends), and the shaper as a
//! subprocess in the middle one. Both are removed or stopped on every
//! path, a failing assertion included. `shape_real` uses the bench's
//! topology (`fairway_lab::shape_bench`) instead, which adds routes and a
//! bridge for the kernel's side.
//!
//! ```text
//!  {p}-s: {p}-s0 ══ {p}-x: {p}-in  [fairway shape]  {p}-out ══ {p}-r: {p}-r0
//! ```

use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Whether the test can build namespaces; prints `TEST: skipped, needs
/// root` (visible with `--show-output`) when it cannot.
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root && Command::new("ip").arg("-V").output().is_ok() {
        return true;
    }
    println!("{test}: skipped, needs root");
    false
}

/// Runs `ip ARGS`; a failure fails the test.
pub fn ip(args: &str) {
    let ok = Command::new("ip")
        .args(args.split_whitespace())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "ip {args}");
}

/// Moves this thread into namespace `name`.
pub fn enter(name: &str) {
    let f = std::fs::File::open(format!("/var/run/netns/{name}")).expect("namespace file");
    // SAFETY: a valid namespace descriptor; affects this thread only.
    let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "setns {name}");
}

/// The three namespaces of prefix `p`, deleted (with their veths) on drop.
pub struct Netns {
    /// `{p}-s`, `{p}-x`, `{p}-r`.
    names: [String; 3],
}

impl Netns {
    /// Builds `{p}-s`, `{p}-x` and `{p}-r` with the links above, IPv6
    /// off (no router solicitations among the frames counted) and
    /// everything up, the middle's loopback included (the metrics
    /// endpoint). Namespaces left by a killed run are removed first.
    /// `mtu` is set on all four ends; with `subnet` ("10.77.0") the
    /// sender's end gets `.1/24` and the receiver's `.2/24`.
    pub fn build(p: &str, mtu: Option<u32>, subnet: Option<&str>) -> Netns {
        let names = [format!("{p}-s"), format!("{p}-x"), format!("{p}-r")];
        for n in &names {
            let _ = Command::new("ip")
                .args(["netns", "del", n])
                .stderr(Stdio::null())
                .status();
        }
        for n in &names {
            ip(&format!("netns add {n}"));
        }
        let ns = Netns { names };
        let [s, x, r] = &ns.names;
        ip(&format!(
            "link add {p}-s0 netns {s} type veth peer name {p}-in netns {x}"
        ));
        ip(&format!(
            "link add {p}-r0 netns {r} type veth peer name {p}-out netns {x}"
        ));
        let mtu = mtu.map_or(String::new(), |m| format!("mtu {m} "));
        for (n, dev) in [(s, "s0"), (x, "in"), (x, "out"), (r, "r0")] {
            let _ = Command::new("ip")
                .args(["netns", "exec", n, "sysctl", "-qw"])
                .arg(format!("net.ipv6.conf.{p}-{dev}.disable_ipv6=1"))
                .status();
            ip(&format!("-n {n} link set {p}-{dev} {mtu}up"));
        }
        ip(&format!("-n {x} link set lo up"));
        if let Some(net) = subnet {
            ip(&format!("-n {s} addr add {net}.1/24 dev {p}-s0"));
            ip(&format!("-n {r} addr add {net}.2/24 dev {p}-r0"));
        }
        ns
    }

    /// The sender's namespace.
    pub fn sender(&self) -> &str {
        &self.names[0]
    }

    /// The shaper's namespace.
    pub fn middle(&self) -> &str {
        &self.names[1]
    }

    /// The receiver's namespace.
    pub fn receiver(&self) -> &str {
        &self.names[2]
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// `fairway shape --config FILE ARGS…` running in a namespace; killed on
/// drop if the test fails before [`Shaper::stop`].
pub struct Shaper {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Shaper {
    /// Starts the shaper in `ns`.
    pub fn start(ns: &str, config: &Path, args: &[&str]) -> Shaper {
        let mut child = Command::new("ip")
            .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_fairway")])
            .args(["shape", "--config"])
            .arg(config)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the shaper");
        let out = BufReader::new(child.stdout.take().expect("piped"));
        Shaper { child, out }
    }

    /// The next line of its standard output ("" at its end).
    pub fn line(&mut self) -> String {
        let mut line = String::new();
        self.out.read_line(&mut line).expect("the shaper's output");
        line
    }

    /// Its standard error so far, read to the end: for a shaper that
    /// has exited.
    pub fn stderr(&mut self) -> String {
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        err
    }

    /// Stops it with SIGTERM: its exit status, the rest of its standard
    /// output (the exit table) and its standard error.
    pub fn stop(mut self) -> (ExitStatus, String, String) {
        // SAFETY: the shaper's pid; SIGTERM asks it to stop.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let mut rest = String::new();
        self.out
            .read_to_string(&mut rest)
            .expect("the shaper's output");
        let status = self.child.wait().expect("the shaper's exit");
        let err = self.stderr();
        (status, rest, err)
    }
}

impl Drop for Shaper {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// From namespace `ns`, sends `payload`-byte UDP datagrams from `from`
/// to `to` ("10.77.0.2:9000") at `bps` of frame bytes (payload + 42 bytes
/// of Ethernet, IPv4 and UDP headers) for `secs`; how many it sent.
///
/// One datagram goes first alone, then a pause, so that ARP is resolved
/// and no datagram waits (or is dropped) in the sender's neighbour
/// queue. UDP checksums are off (SO_NO_CHECK): the veth would leave them
/// to an offload the frame never meets once the shaper forwards it. It
/// sends what is due, then sleeps: a spinning sender would take a core
/// from the shaper on a small machine.
pub fn send_udp(ns: &str, from: &str, to: &str, payload: usize, bps: u64, secs: u64) -> u64 {
    enter(ns);
    let sock = UdpSocket::bind(format!("{from}:0")).expect("bind sender");
    let one: libc::c_int = 1;
    // SAFETY: a live socket and a c_int option of the size passed.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_NO_CHECK,
            (&one as *const libc::c_int).cast(),
            4,
        )
    };
    let data = vec![0x5au8; payload];
    let mut sent = u64::from(sock.send_to(&data, to).is_ok());
    std::thread::sleep(Duration::from_millis(300));
    let gap = Duration::from_nanos((payload as u64 + 42) * 8 * 1_000_000_000 / bps);
    let start = Instant::now();
    let mut next = start;
    while start.elapsed() < Duration::from_secs(secs) {
        while Instant::now() >= next {
            if sock.send_to(&data, to).is_ok() {
                sent += 1;
            }
            next += gap;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    sent
}

/// A UDP frame of `len` bytes (Ethernet header included) with VLAN
/// `tags` after the MAC addresses, from `{net}.src` to `{net}.dst`
/// (MACs `02:00:00:00:00:src` and `…:dst`), port 9000 to 9000, UDP
/// checksum 0, the payload starting with `mark` and filled with 0x5a.
pub fn udp_frame(
    len: usize,
    tags: &[[u8; 4]],
    net: [u8; 3],
    src: u8,
    dst: u8,
    mark: u16,
) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src];
    for t in tags {
        f.extend(t);
    }
    f.extend([8, 0]);
    let ip_len = (len - f.len()) as u16;
    let [a, b, c] = net;
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, a, b, c, src, a, b, c, dst,
    ];
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    f.extend(ip);
    f.extend(9000u16.to_be_bytes());
    f.extend(9000u16.to_be_bytes());
    f.extend((ip_len - 20).to_be_bytes());
    f.extend([0, 0]);
    f.extend(mark.to_be_bytes());
    f.resize(len, 0x5a);
    f
}

/// Runs `fairway shape --config FILE` in `ns`, which must refuse to
/// start: exit status 1 and one line on standard error, returned.
pub fn refused_start(ns: &str, config: &Path) -> String {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_fairway")])
        .args(["shape", "--config"])
        .arg(config)
        .output()
        .expect("run the shaper");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

/// The frames a packet socket on `dev` (in this thread's namespace)
/// reads within `wait`, at most `n`, VLAN tags put back.
pub fn receive_frames(dev: &str, n: usize, wait: Duration) -> Vec<Vec<u8>> {
    use fairway_shaper::{datapath::port, plan::FrameIo};
    let mut p = port::open(dev, FrameIo::Frame).expect("receiver's port");
    let mut got = Vec::new();
    let end = Instant::now() + wait;
    let mut buf = vec![0u8; 16_384];
    while got.len() < n && Instant::now() < end {
        match p.recv(&mut buf) {
            Ok(Some(len)) => got.push(buf[..len].to_vec()),
            _ => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    got
}
