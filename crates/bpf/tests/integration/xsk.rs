//! AF_XDP sockets on a veth pair in a namespace of their own (Linux,
//! root, a build with the `ebpf` feature): frames redirected by the XDP
//! program arrive whole and in order, and frames sent leave, every one
//! counted.

use fairway_bpf::xdp::{XdpMode, XdpRedirect};
use fairway_bpf::xsk::{XskConfig, XskSocket};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::time::{Duration, Instant};

const NS: &str = "fwbt-xsk";
const A: &str = "fwbt-a";
const B: &str = "fwbt-b";
const FRAMES: u32 = 1000;
/// Frames sent before those are received.
const CHUNK: u32 = 50;

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The namespace with the veth pair A <-> B, removed on drop.
struct Pair;

impl Pair {
    fn create() -> Pair {
        let _ = Command::new("ip").args(["netns", "del", NS]).output();
        ip(&["netns", "add", NS]);
        let pair = Pair;
        ip(&[
            "-n", NS, "link", "add", A, "type", "veth", "peer", "name", B,
        ]);
        ip(&["-n", NS, "link", "set", A, "up"]);
        ip(&["-n", NS, "link", "set", B, "up"]);
        pair
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", NS]).output();
    }
}

fn enter_ns() {
    let f = File::open(format!("/var/run/netns/{NS}")).unwrap();
    // SAFETY: setns on a namespace file this thread opened.
    assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0);
}

/// A packet socket on `dev`: receiving every protocol if `rx`.
fn packet_socket(dev: &str, rx: bool) -> OwnedFd {
    let name = std::ffi::CString::new(dev).unwrap();
    // SAFETY: a NUL-terminated name.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    assert_ne!(ifindex, 0);
    let proto: u16 = if rx { 0x0003u16.to_be() } else { 0 };
    // SAFETY: plain socket creation, checked below.
    let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(proto)) };
    assert!(raw >= 0, "{}", std::io::Error::last_os_error());
    // SAFETY: a fresh descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto;
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: bind reads size_of::<sockaddr_ll>() bytes.
    let rc = unsafe {
        libc::bind(
            raw,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    fd
}

/// Frame `seq`: 64 bytes of an unhandled ethertype, `seq` at bytes 14..18.
fn frame(seq: u32) -> [u8; 64] {
    let mut f = [0u8; 64];
    f[..14].copy_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5]);
    f[14..18].copy_from_slice(&seq.to_be_bytes());
    f
}

fn received_in_order_then_sent() {
    enter_ns();
    let mut xdp = XdpRedirect::attach(B, XdpMode::Native).unwrap();
    let mut sock = XskSocket::bind(B, 0, XskConfig::default()).unwrap();
    xdp.register(0, &sock).unwrap();
    let e = xdp.register(64, &sock).unwrap_err().to_string();
    assert!(e.starts_with("receive queue 64 is outside 0..=63"), "{e}");
    // In chunks that fit the veth's and the sockets' queues: none may be
    // lost, so every loss is a defect.
    let tx = packet_socket(A, false);
    let mut seqs = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    for chunk in 0..FRAMES / CHUNK {
        for seq in chunk * CHUNK..(chunk + 1) * CHUNK {
            let f = frame(seq);
            // SAFETY: a live frame, its length passed.
            let n = unsafe { libc::send(tx.as_raw_fd(), f.as_ptr().cast(), f.len(), 0) };
            assert_eq!(n, 64, "{}", std::io::Error::last_os_error());
        }
        while seqs.len() < ((chunk + 1) * CHUNK) as usize && Instant::now() < deadline {
            sock.receive(64, |f| {
                if f.len() == 64 && f[12..14] == [0x88, 0xb5] {
                    seqs.push(u32::from_be_bytes(f[14..18].try_into().unwrap()));
                }
            });
        }
    }
    assert_eq!(seqs, (0..FRAMES).collect::<Vec<_>>(), "whole and in order");
    let k = sock.kernel_counters().unwrap();
    assert_eq!((k.rx_dropped, k.rx_ring_full), (0, 0), "{k:?}");

    // Sent from B: each arrives at A.
    let rx = packet_socket(A, true);
    let mut got = Vec::new();
    let mut buf = [0u8; 128];
    for chunk in 0..FRAMES / CHUNK {
        for seq in chunk * CHUNK..(chunk + 1) * CHUNK {
            assert!(sock.send(&frame(seq)));
        }
        sock.flush().unwrap();
        while got.len() < ((chunk + 1) * CHUNK) as usize && Instant::now() < deadline {
            // SAFETY: a live buffer, its length passed.
            let n = unsafe {
                libc::recv(
                    rx.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if n < 0 {
                sock.flush().unwrap();
            } else if n == 64 && buf[12..14] == [0x88, 0xb5] {
                got.push(u32::from_be_bytes(buf[14..18].try_into().unwrap()));
            }
        }
    }
    assert_eq!(
        got,
        (0..FRAMES).collect::<Vec<_>>(),
        "every frame sent arrives"
    );
    let c = sock.counters();
    assert_eq!(
        (c.sent, c.tx_full, c.tx_too_long),
        (u64::from(FRAMES), 0, 0)
    );
    assert!(!sock.send(&[0u8; 4096]), "longer than a UMEM frame");
    assert_eq!(sock.counters().tx_too_long, 1);
}

#[test]
#[ignore = "slow tier: needs root, network namespaces and the eBPF programs"]
fn an_af_xdp_socket_receives_what_xdp_redirects_and_sends() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("an_af_xdp_socket_receives_what_xdp_redirects_and_sends: skipped, needs root");
        return;
    }
    if !fairway_bpf::AVAILABLE {
        println!(
            "an_af_xdp_socket_receives_what_xdp_redirects_and_sends: skipped, {}",
            fairway_bpf::NOT_BUILT
        );
        return;
    }
    let _pair = Pair::create();
    std::thread::spawn(received_in_order_then_sent)
        .join()
        .expect("the test thread");
}
