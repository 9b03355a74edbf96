//! Receive-and-forward rate of 64-byte frames through one forwarder, two
//! ways in one run: AF_PACKET with one `recvmsg` and one `send` per frame
//! (the shaper's frame I/O), and AF_XDP (the XDP redirect into an AF_XDP
//! socket, copy mode, sent from a second AF_XDP socket). The path is
//! generator -> veth -> forwarder -> veth -> sink, each in its own network
//! namespace; the generator (CPU 0) sends batches with `sendmmsg` straight
//! to the driver, the forwarder runs on CPU 1, and the sink's device
//! counts what arrives. Besides the rates it reports the forwarder
//! thread's CPU time per forwarded frame (its share of a CPU, over the
//! frames), which depends less on what else the machine runs; the kernel
//! work done for the thread in its system calls is included, and softirq
//! work is charged to whichever thread the CPU was running. Needs root and a build with the `ebpf` feature:
//!
//! ```text
//! cargo run --release -p fairway-bpf --features ebpf --example forward_bench -- [SECONDS]
//! ```
//!
//! SECONDS (1 to 60, default 5) is the measured time per path, after half
//! a second of warm-up. Exit status 3 if it cannot run here, 2 for a bad
//! argument.

mod forward;
mod packet;
mod topology;

use forward::{run_path, Path};
use std::process::ExitCode;

fn main() -> ExitCode {
    let seconds = match std::env::args().nth(1) {
        None => 5,
        Some(s) => match s.parse::<u64>() {
            Ok(n) if (1..=60).contains(&n) => n,
            _ => {
                eprintln!("forward_bench: SECONDS {s:?} is not a whole number from 1 to 60");
                return ExitCode::from(2);
            }
        },
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("forward_bench: needs root (network namespaces, XDP, AF_XDP)");
        return ExitCode::from(3);
    }
    if let Err(e) = fairway_bpf::require() {
        eprintln!("forward_bench: {e}");
        return ExitCode::from(3);
    }
    println!(
        "64-byte frames, generator (CPU 0) -> veth -> forwarder (CPU 1) -> veth -> sink; {seconds} s per path"
    );
    println!(
        "{:<34} {:>12} {:>14} {:>10} {:>13} {:>12}  forwarder's drops",
        "path", "offered Mpps", "forwarded Mpps", "fwd/offer", "fwd CPU share", "CPU ns/frame"
    );
    let mut rates = Vec::new();
    for path in [Path::Packet, Path::Xdp] {
        match run_path(path, seconds) {
            Ok(o) => {
                let secs = o.seconds;
                let ns_per_frame = o.forwarder_cpu * 1e9 / o.forwarded.max(1) as f64;
                println!(
                    "{:<34} {:>12.3} {:>14.3} {:>10.3} {:>13.2} {:>12.0}  {}",
                    path.label(),
                    o.offered as f64 / secs / 1e6,
                    o.forwarded as f64 / secs / 1e6,
                    o.forwarded as f64 / o.offered.max(1) as f64,
                    o.forwarder_cpu / secs,
                    ns_per_frame,
                    o.drops
                );
                rates.push((o.forwarded as f64 / secs, ns_per_frame));
            }
            Err(e) => {
                eprintln!("forward_bench: {}: {e}", path.label());
                return ExitCode::from(1);
            }
        }
    }
    println!(
        "AF_XDP / AF_PACKET: forwarded {:.2}x, forwarder CPU per frame {:.2}x",
        rates[1].0 / rates[0].0,
        rates[1].1 / rates[0].1
    );
    ExitCode::SUCCESS
}
