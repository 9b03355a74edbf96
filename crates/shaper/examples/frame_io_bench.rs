//! Forwarding speed of the shaper's frame I/O back-ends next to the
//! kernel's own forwarding, on one veth path, in one run:
//!
//! ```text
//! sudo cargo run --release -p fairway-shaper --example frame_io_bench -- [SECONDS] [ROUNDS] [PATHS]
//! sudo cargo run --release -p fairway-shaper --features ebpf --example frame_io_bench -- 3 2 ring,xdp
//! ```
//!
//! PATHS, comma-separated, picks the middles below (default: all this
//! build has; `xdp` needs the `ebpf` feature).
//!
//! Namespaces sender — middle — receiver joined by two veth pairs
//! (prefix `fwr-`). A sender thread blasts UDP frames (64 flows) of 64
//! and of 1514 bytes (1500-byte IP packets) from an AF_PACKET socket with
//! `sendmmsg`, as fast as it can, for SECONDS (default 3); the receiver's
//! veth counts what arrives. In the middle, in turn:
//!
//! - `kernel`: a bridge of the two veths with an HTB root on the
//!   outgoing one (one class at 10 Gbit/s, its default pfifo leaf);
//! - `frame`, `ring` and `xdp`: the shaper's data path (`datapath::run::run`,
//!   what `fairway shape` runs) with `[interfaces] io` set so, all
//!   frames in one circuit of max 10 Gbit/s (so shaping is not the
//!   limit).
//!
//! Cores: the sender's thread, on whichever core the scheduler gives it,
//! also runs the kernel's forwarding in `kernel` (veth hands frames over
//! in the sender's softirq); with the shaper, its one thread forwards on
//! a core of its own. Each row: frames and rates the receiver saw, what
//! the sender offered, the sender thread's CPU time per frame (with the
//! kernel's forwarding in `kernel`), and for the shaper its thread's CPU
//! time per frame forwarded and the rate one core of it would forward at
//! that cost (its capacity when the sender, not the shaper, is the
//! limit).
//!
//! A second table sends alone into the middle's veth, with `sendmmsg`
//! (what the ring back-end does) and with a TPACKET_V2 TX ring, to choose
//! between the two. Needs root and iproute2.

use fairway_shaper::datapath::run;
use fairway_shaper::load::{load, Source};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NS: [&str; 3] = ["fwr-s", "fwr-x", "fwr-r"];
const FLOWS: usize = 64;

fn sh(args: &str) -> bool {
    Command::new("ip")
        .args(args.split_whitespace())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn must(args: &str) {
    assert!(sh(args), "ip {args}");
}

fn tc(args: &str) {
    let ok = Command::new("ip")
        .args(["netns", "exec", NS[1], "tc"])
        .args(args.split_whitespace())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "tc {args}");
}

struct Topology;

impl Drop for Topology {
    fn drop(&mut self) {
        for n in NS {
            let _ = sh(&format!("netns del {n}"));
        }
    }
}

fn build() -> Topology {
    for n in NS {
        let _ = Command::new("ip")
            .args(["netns", "del", n])
            .stderr(std::process::Stdio::null())
            .status();
    }
    for n in NS {
        must(&format!("netns add {n}"));
    }
    let t = Topology;
    must("link add fwr-s0 netns fwr-s type veth peer name fwr-in netns fwr-x");
    must("link add fwr-r0 netns fwr-r type veth peer name fwr-out netns fwr-x");
    for (n, dev) in [
        ("fwr-s", "fwr-s0"),
        ("fwr-x", "fwr-in"),
        ("fwr-x", "fwr-out"),
        ("fwr-r", "fwr-r0"),
    ] {
        let _ = Command::new("ip")
            .args(["netns", "exec", n, "sysctl", "-qw"])
            .arg(format!("net.ipv6.conf.{dev}.disable_ipv6=1"))
            .status();
        must(&format!("-n {n} link set {dev} up"));
    }
    t
}

/// Moves this thread into namespace `name`.
fn enter(name: &str) {
    let f = std::fs::File::open(format!("/var/run/netns/{name}")).expect("namespace file");
    // SAFETY: a valid namespace descriptor; affects this thread only.
    let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "setns {name}");
}

/// Frames of `len` bytes, one per flow: to a MAC no one has, so the
/// receiver counts and drops them.
fn frames(len: usize) -> Vec<Vec<u8>> {
    (0..FLOWS)
        .map(|k| {
            let mut f = vec![0u8; len];
            f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
            f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
            f[12..14].copy_from_slice(&[8, 0]);
            let ip_len = (len - 14) as u16;
            let ip = &mut f[14..34];
            ip[0] = 0x45;
            ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
            ip[8] = 64;
            ip[9] = 17;
            ip[12..16].copy_from_slice(&[10, 78, 0, 1]);
            ip[16..20].copy_from_slice(&[10, 78, 0, 2]);
            let mut sum: u32 = ip
                .chunks(2)
                .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
                .sum();
            sum = (sum & 0xffff) + (sum >> 16);
            sum = (sum & 0xffff) + (sum >> 16);
            ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
            let udp = &mut f[34..42];
            udp[0..2].copy_from_slice(&(10_000 + k as u16).to_be_bytes());
            udp[2..4].copy_from_slice(&9u16.to_be_bytes());
            udp[4..6].copy_from_slice(&(ip_len - 20).to_be_bytes());
            f
        })
        .collect()
}

/// Sends `len`-byte frames from the sender's namespace until `stop`:
/// frames sent and the thread's CPU time, ns.
fn blast(len: usize, stop: Arc<AtomicBool>) -> (u64, u64) {
    enter(NS[0]);
    let frames = frames(len);
    // SAFETY: plain system calls on a fresh descriptor closed below.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
    assert!(fd >= 0, "packet socket");
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    // SAFETY: a NUL-terminated name.
    sll.sll_ifindex = unsafe { libc::if_nametoindex(c"fwr-s0".as_ptr()) } as i32;
    // SAFETY: bind reads exactly size_of::<sockaddr_ll>() bytes.
    let rc = unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    assert_eq!(rc, 0, "bind");
    let mut iov: Vec<libc::iovec> = frames
        .iter()
        .map(|f| libc::iovec {
            iov_base: f.as_ptr() as *mut _,
            iov_len: f.len(),
        })
        .collect();
    let mut msgs: Vec<libc::mmsghdr> = iov
        .iter_mut()
        .map(|v| {
            // SAFETY: all-zero is a valid mmsghdr.
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
            m
        })
        .collect();
    let mut sent = 0u64;
    let cpu = thread_cpu_ns();
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: `msgs` point to `iov`, which point to `frames`, all live.
        let n = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), FLOWS as u32, 0) };
        if n > 0 {
            sent += n as u64;
        }
    }
    let cpu = thread_cpu_ns() - cpu;
    // SAFETY: our descriptor, closed once.
    unsafe { libc::close(fd) };
    (sent, cpu)
}

fn rx_packets() -> u64 {
    rx_of(NS[2], "fwr-r0")
}

fn rx_of(ns: &str, dev: &str) -> u64 {
    let out = Command::new("ip")
        .args(["-n", ns, "-s", "-j", "link", "show", "dev", dev])
        .output()
        .expect("ip -s link");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("ip -j");
    v[0]["stats64"]["rx"]["packets"]
        .as_u64()
        .expect("rx packets")
}

fn shaper_config(io: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("fwr-bench-{io}.toml"));
    let text = format!(
        "[interfaces]\ninternet = \"fwr-in\"\nsubscribers = \"fwr-out\"\n\
         rate = {{ download = \"10gbit\", upload = \"10gbit\" }}\nio = \"{io}\"\n\n\
         [[circuit]]\nid = \"all\"\nrate = {{ download = \"10gbit\", upload = \"10gbit\" }}\n\n\
         [[rule]]\ncircuit = \"all\"\nprefix = \"10.78.0.0/16\"\n"
    );
    std::fs::write(&path, text).expect("writing the shaper file");
    path
}

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> u64 {
    // SAFETY: all-zero is a valid timespec; clock_gettime writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What one trial measured.
struct Trial {
    /// Frames per second the receiver saw.
    pps: u64,
    /// Frames per second the sender sent.
    offered: u64,
    /// The sender's CPU ns per frame sent.
    sender_ns: f64,
    /// The shaper thread's CPU ns per frame forwarded.
    shaper_ns: Option<f64>,
    /// The shaper's drops by reason, over the whole trial.
    drops: Option<String>,
}

/// One trial of `path` with `len`-byte frames.
fn trial(path: &str, len: usize, seconds: u64) -> Trial {
    let shaper_stop = Arc::new(AtomicBool::new(false));
    let shaper = (path != "kernel").then(|| {
        let file = shaper_config(path);
        let checked = load(&Source::ShaperFile(file.clone())).expect("shaper file");
        let _ = std::fs::remove_file(file);
        let stop = Arc::clone(&shaper_stop);
        let (tx, rx) = std::sync::mpsc::channel();
        let h = std::thread::Builder::new()
            .name("shaper".into())
            .spawn(move || {
                enter(NS[1]);
                let mut cpu = 0;
                let r = run::run(&checked, &stop, None, None, || {
                    cpu = thread_cpu_ns();
                    tx.send(()).unwrap_or(())
                });
                let out = r.expect("shaper run");
                let cpu = thread_cpu_ns() - cpu;
                let (t, _) = out.report.total();
                let kernel: u64 = out.kernel_drops.iter().map(|(_, n)| n).sum();
                let drops = format!(
                    "kernel {kernel}, send failed {}, queue full {}, codel {}",
                    t.send_failed.packets, t.overflow.packets, t.codel.packets
                );
                (cpu, drops)
            });
        let h = h.expect("shaper thread");
        rx.recv_timeout(Duration::from_secs(10))
            .expect("shaper started");
        h
    });
    if path == "kernel" {
        must("-n fwr-x link add fwr-br type bridge");
        must("-n fwr-x link set fwr-in master fwr-br");
        must("-n fwr-x link set fwr-out master fwr-br");
        must("-n fwr-x link set fwr-br up");
        tc("qdisc add dev fwr-out root handle 1: htb default 10");
        tc("class add dev fwr-out parent 1: classid 1:10 htb rate 10gbit ceil 10gbit quantum 200000");
    }
    let before = rx_packets();
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    let sender = std::thread::spawn(move || blast(len, s));
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(seconds));
    let after = rx_packets();
    let elapsed = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let (sent, sender_cpu) = sender.join().expect("sender");
    // The frames still in flight reach the receiver before the shaper
    // stops, so that its CPU time is over the frames counted.
    std::thread::sleep(Duration::from_millis(200));
    let total = rx_packets() - before;
    shaper_stop.store(true, Ordering::Relaxed);
    let joined = shaper.map(|h| h.join().expect("shaper thread"));
    let drops = joined.as_ref().map(|(_, d)| d.clone());
    let cpu = joined.map(|(c, _)| c as f64 / total.max(1) as f64);
    if path == "kernel" {
        tc("qdisc del dev fwr-out root");
        must("-n fwr-x link del fwr-br");
    }
    let got = after - before;
    Trial {
        pps: (got as f64 / elapsed) as u64,
        offered: (sent as f64 / elapsed) as u64,
        sender_ns: sender_cpu as f64 / sent.max(1) as f64,
        shaper_ns: cpu,
        drops,
    }
}

/// Sends `len`-byte frames through a TPACKET_V2 TX ring until `stop`:
/// frames sent. Up to [`FLOWS`] frames are queued, then one `send` hands
/// them all to the kernel.
fn blast_tx_ring(len: usize, stop: Arc<AtomicBool>) -> (u64, u64) {
    const FRAME: usize = 2048;
    const FRAMES: usize = 1024;
    const DATA: usize = 32; // TPACKET2_HDRLEN - sizeof(sockaddr_ll)
    enter(NS[0]);
    let frames = frames(len);
    // SAFETY: plain system calls on a fresh descriptor closed below.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
    assert!(fd >= 0, "packet socket");
    let v2: libc::c_int = 1;
    // SAFETY: live values of the sizes passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            (&v2 as *const i32).cast(),
            4,
        )
    };
    assert_eq!(rc, 0, "TPACKET_V2");
    let req = libc::tpacket_req {
        tp_block_size: (FRAME * 32) as u32,
        tp_block_nr: (FRAMES / 32) as u32,
        tp_frame_size: FRAME as u32,
        tp_frame_nr: FRAMES as u32,
    };
    // SAFETY: as above.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_TX_RING,
            (&req as *const libc::tpacket_req).cast(),
            std::mem::size_of::<libc::tpacket_req>() as u32,
        )
    };
    assert_eq!(rc, 0, "PACKET_TX_RING");
    // SAFETY: maps the ring of this socket; unmapped below.
    let ring = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            FRAME * FRAMES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    assert!(ring != libc::MAP_FAILED, "mmap");
    let ring = ring.cast::<u8>();
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    // SAFETY: a NUL-terminated name.
    sll.sll_ifindex = unsafe { libc::if_nametoindex(c"fwr-s0".as_ptr()) } as i32;
    // SAFETY: bind reads exactly size_of::<sockaddr_ll>() bytes.
    let rc = unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    assert_eq!(rc, 0, "bind");
    let status = |i: usize| {
        // SAFETY: a frame's status word, inside the mapping, 4-aligned,
        // shared with the kernel and so accessed atomically.
        unsafe { &*ring.add(i * FRAME).cast::<std::sync::atomic::AtomicU32>() }
    };
    let (mut sent, mut i, mut queued) = (0u64, 0usize, 0usize);
    let cpu = thread_cpu_ns();
    while !stop.load(Ordering::Relaxed) {
        let free = status(i).load(Ordering::Acquire) & !libc::TP_STATUS_WRONG_FORMAT == 0;
        if free && queued < FLOWS {
            let f = &frames[i % FLOWS];
            // SAFETY: the frame is the user's while its status is
            // available; the data fits the 2048-byte frame.
            unsafe {
                std::ptr::copy_nonoverlapping(f.as_ptr(), ring.add(i * FRAME + DATA), f.len());
                ring.add(i * FRAME + 4).cast::<u32>().write(f.len() as u32);
            }
            status(i).store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
            i = (i + 1) % FRAMES;
            queued += 1;
            continue;
        }
        // SAFETY: a live socket; no data (the ring holds it).
        let n = unsafe { libc::send(fd, std::ptr::null(), 0, 0) };
        if n > 0 {
            sent += n as u64 / len as u64;
        }
        queued = 0;
    }
    let cpu = thread_cpu_ns() - cpu;
    // SAFETY: the mapping and descriptor made above, released once.
    unsafe {
        libc::munmap(ring.cast(), FRAME * FRAMES);
        libc::close(fd);
    }
    (sent, cpu)
}

/// The sender alone into the middle's veth, by `sendmmsg` or by a TX
/// ring: frames per second the veth saw, the sender's CPU ns per frame.
fn sender_alone(tx_ring: bool, len: usize, seconds: u64) -> (u64, f64) {
    let before = rx_of(NS[1], "fwr-in");
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    let sender = std::thread::spawn(move || {
        if tx_ring {
            blast_tx_ring(len, s)
        } else {
            blast(len, s)
        }
    });
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(seconds));
    let got = rx_of(NS[1], "fwr-in") - before;
    let elapsed = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let (sent, cpu) = sender.join().expect("sender");
    (
        (got as f64 / elapsed) as u64,
        cpu as f64 / sent.max(1) as f64,
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().map_or(3, |a| a.parse().expect("SECONDS"));
    let rounds: u32 = args.next().map_or(1, |a| a.parse().expect("ROUNDS"));
    let built: &[&str] = if cfg!(feature = "ebpf") {
        &["kernel", "frame", "ring", "xdp"]
    } else {
        &["kernel", "frame", "ring"]
    };
    let paths: Vec<String> = match args.next() {
        None => built.iter().map(|p| p.to_string()).collect(),
        Some(a) => a.split(',').map(str::to_string).collect(),
    };
    for p in &paths {
        assert!(
            built.contains(&p.as_str()),
            "PATHS: {p:?} is not one of {built:?} (xdp needs --features ebpf)"
        );
    }
    let _t = build();
    println!(
        "path     frame B   round     Mpps   Gbit/s  offered Mpps  sender ns/frame  \
         shaper ns/frame  Mpps/shaper core  shaper drops"
    );
    for len in [64usize, 1514] {
        for r in 0..rounds {
            for path in &paths {
                let t = trial(path, len, seconds);
                let (ns, core) = t.shaper_ns.map_or(("-".into(), "-".into()), |ns| {
                    (format!("{ns:.0}"), format!("{:.3}", 1e3 / ns))
                });
                println!(
                    "{path:<8} {len:>7} {r:>7} {:>8.3} {:>8.3} {:>13.3} {:>16.0} {ns:>16} {core:>17}  {}",
                    t.pps as f64 / 1e6,
                    t.pps as f64 * len as f64 * 8.0 / 1e9,
                    t.offered as f64 / 1e6,
                    t.sender_ns,
                    t.drops.as_deref().unwrap_or("-"),
                );
            }
        }
    }
    println!("\nsending alone into a veth   frame B   round     Mpps  sender ns/frame");
    for len in [64usize, 1514] {
        for r in 0..rounds {
            for (name, tx_ring) in [("sendmmsg, 64 a call", false), ("TPACKET TX ring", true)] {
                let (pps, ns) = sender_alone(tx_ring, len, seconds);
                println!(
                    "{name:<27} {len:>7} {r:>7} {:>8.3} {ns:>16.0}",
                    pps as f64 / 1e6
                );
            }
        }
    }
}
