//! The path: three network namespaces joined by two veth pairs,
//! generator -> forwarder -> sink, removed on drop.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::process::Command;

/// The namespaces (prefixed so that other runs on the machine are not
/// touched).
pub const GEN_NS: &str = "fwbx-gen";
pub const FWD_NS: &str = "fwbx-fwd";
pub const SINK_NS: &str = "fwbx-sink";
/// The generator's device, the forwarder's two and the sink's.
pub const GEN_DEV: &str = "fwbx-g0";
pub const FWD_IN: &str = "fwbx-f0";
pub const FWD_OUT: &str = "fwbx-f1";
pub const SINK_DEV: &str = "fwbx-s0";

fn ip(args: &[&str]) -> io::Result<String> {
    let out = Command::new("ip").args(args).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "`ip {}`: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The three namespaces and their links.
pub struct Topology;

impl Topology {
    /// Builds it (removing a leftover of an earlier run first).
    pub fn create() -> io::Result<Self> {
        remove();
        for ns in [GEN_NS, FWD_NS, SINK_NS] {
            ip(&["netns", "add", ns])?;
        }
        let topo = Topology;
        ip(&[
            "link", "add", GEN_DEV, "netns", GEN_NS, "type", "veth", "peer", "name", FWD_IN,
            "netns", FWD_NS,
        ])?;
        ip(&[
            "link", "add", FWD_OUT, "netns", FWD_NS, "type", "veth", "peer", "name", SINK_DEV,
            "netns", SINK_NS,
        ])?;
        for (ns, dev) in [
            (GEN_NS, GEN_DEV),
            (FWD_NS, FWD_IN),
            (FWD_NS, FWD_OUT),
            (SINK_NS, SINK_DEV),
        ] {
            ip(&["-n", ns, "link", "set", dev, "up"])?;
        }
        Ok(topo)
    }

    /// Frames the sink's device has received.
    pub fn sink_received(&self) -> io::Result<u64> {
        let path = format!("/sys/class/net/{SINK_DEV}/statistics/rx_packets");
        let out = Command::new("ip")
            .args(["netns", "exec", SINK_NS, "cat", &path])
            .output()?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| io::Error::other("reading the sink's rx_packets"))
    }
}

fn remove() {
    for ns in [GEN_NS, FWD_NS, SINK_NS] {
        let _ = ip(&["netns", "del", ns]);
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        remove();
    }
}

/// Moves the calling thread into namespace `ns` and onto CPU `cpu`.
pub fn enter(ns: &str, cpu: usize) -> io::Result<()> {
    let f = File::open(format!("/var/run/netns/{ns}"))?;
    // SAFETY: setns on a namespace file this thread opened.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a zeroed cpu_set_t with one CPU set, passed with its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    Ok(())
}
