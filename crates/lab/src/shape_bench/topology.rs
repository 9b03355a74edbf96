//! Three namespaces, sender — shaper — receiver, joined by two veth
//! pairs; the middle namespace either bridges the two (the kernel's side:
//! HTB on the receiver-facing end) or leaves them to `fairway shape`.
//!
//! ```text
//!  sender ns                 middle ns                        receiver ns
//!  fsb-s 10.77.0.1/24 ══ fsb-in ─[bridge fsb-br + HTB | fairway]─ fsb-out ══ fsb-r 10.77.0.2/24
//!                                                                           local 10.78.0.0/16
//! ```
//!
//! The sender routes 10.78.0.0/16 (the circuits' addresses) via the
//! receiver, whose MAC is a permanent neighbour entry (no ARP), and the
//! receiver takes the whole /16 as local, so one socket receives every
//! circuit's traffic. The middle forwards at layer 2 either way (a bridge
//! or the shaper), so both sides see the same frames. Names follow the
//! testbed's (`fwy<pid>x<n>…`), so a run killed without cleanup is
//! removed by the next one, and `Drop` removes them on every other path.

use crate::testbed::{self, in_ns, remove_stale, run, TestbedError, NS_PREFIX};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The sender's veth end.
pub const SENDER_DEV: &str = "fsb-s";
/// The middle's end toward the sender (the shaper's `internet`).
pub const IN_DEV: &str = "fsb-in";
/// The middle's end toward the receiver (the shaper's `subscribers`; HTB
/// sits on it).
pub const OUT_DEV: &str = "fsb-out";
/// The receiver's veth end.
pub const RECEIVER_DEV: &str = "fsb-r";
/// The bridge of the kernel's side.
const BRIDGE: &str = "fsb-br";
/// The sender's address.
pub const SENDER_IP: &str = "10.77.0.1";
/// The receiver's address on its veth.
pub const RECEIVER_IP: &str = "10.77.0.2";
const RECEIVER_MAC: &str = "02:00:4e:4d:00:02";
const SENDER_MAC: &str = "02:00:4e:4d:00:01";

static SEQ: AtomicU32 = AtomicU32::new(0);

/// The three namespaces; removed on drop.
#[derive(Debug)]
pub struct Topology {
    /// Sender namespace.
    pub sender: String,
    /// Middle (shaper) namespace.
    pub middle: String,
    /// Receiver namespace.
    pub receiver: String,
}

impl Topology {
    /// Builds the namespaces and links, the middle forwarding nothing yet.
    pub fn create() -> Result<Self, TestbedError> {
        if !testbed::is_root() {
            return Err(TestbedError::NeedsRoot);
        }
        remove_stale();
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let base = format!("{NS_PREFIX}{}x{n}b", std::process::id());
        let t = Topology {
            sender: format!("{base}s"),
            middle: format!("{base}m"),
            receiver: format!("{base}r"),
        };
        for ns in [&t.sender, &t.middle, &t.receiver] {
            run("ip", &["netns", "add", ns])?;
        }
        let (s, m, r) = (t.sender.as_str(), t.middle.as_str(), t.receiver.as_str());
        let steps = [
            format!("-n {s} link add {SENDER_DEV} address {SENDER_MAC} type veth peer name {IN_DEV} netns {m}"),
            format!("-n {r} link add {RECEIVER_DEV} address {RECEIVER_MAC} type veth peer name {OUT_DEV} netns {m}"),
            format!("-n {s} addr add {SENDER_IP}/24 dev {SENDER_DEV}"),
            format!("-n {r} addr add {RECEIVER_IP}/24 dev {RECEIVER_DEV}"),
            format!("-n {s} link set {SENDER_DEV} up"),
            format!("-n {r} link set {RECEIVER_DEV} up"),
            format!("-n {r} link set lo up"),
            format!("-n {m} link set lo up"),
            format!("-n {m} link set {IN_DEV} up"),
            format!("-n {m} link set {OUT_DEV} up"),
            format!("-n {s} neigh replace {RECEIVER_IP} lladdr {RECEIVER_MAC} dev {SENDER_DEV} nud permanent"),
            format!("-n {r} neigh replace {SENDER_IP} lladdr {SENDER_MAC} dev {RECEIVER_DEV} nud permanent"),
            format!("-n {s} route add {}/16 via {RECEIVER_IP}", super::plan::BASE),
            format!("-n {r} route add local {}/16 dev lo", super::plan::BASE),
        ];
        for step in &steps {
            let args: Vec<&str> = step.split_whitespace().collect();
            run("ip", &args)?;
        }
        Ok(t)
    }

    /// The kernel forwards: a bridge joins the middle's two ends; then
    /// `script` (`tc -batch`) runs in the middle namespace.
    pub fn kernel_side(&self, script: &str) -> Result<std::time::Duration, TestbedError> {
        let m = self.middle.as_str();
        for step in [
            format!("-n {m} link add {BRIDGE} type bridge"),
            format!("-n {m} link set {IN_DEV} master {BRIDGE}"),
            format!("-n {m} link set {OUT_DEV} master {BRIDGE}"),
            format!("-n {m} link set {BRIDGE} up"),
        ] {
            let args: Vec<&str> = step.split_whitespace().collect();
            run("ip", &args)?;
        }
        self.tc_batch(script)
    }

    /// Undoes [`Topology::kernel_side`]: no bridge, no qdisc on the
    /// middle's ends, ready for the shaper.
    pub fn clear_kernel_side(&self) -> Result<(), TestbedError> {
        let m = self.middle.as_str();
        run("ip", &["-n", m, "link", "del", BRIDGE])?;
        run("tc", &["-n", m, "qdisc", "del", "dev", OUT_DEV, "root"])?;
        Ok(())
    }

    /// Runs `script` through `tc -batch` in the middle namespace; its
    /// wall-clock time.
    pub fn tc_batch(&self, script: &str) -> Result<std::time::Duration, TestbedError> {
        let start = std::time::Instant::now();
        let mut child = Command::new("tc")
            .args(["-n", &self.middle, "-batch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => TestbedError::MissingTool("tc".into()),
                _ => TestbedError::Io(e),
            })?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(script.as_bytes())?;
        }
        let out = child.wait_with_output()?;
        let took = start.elapsed();
        if !out.status.success() {
            return Err(TestbedError::Command(
                format!("tc -batch ({} commands)", script.lines().count()),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        Ok(took)
    }

    /// `tc` with `args` in the middle namespace: its output.
    pub fn tc(&self, args: &[&str]) -> Result<String, TestbedError> {
        let mut all = vec!["-n", self.middle.as_str()];
        all.extend_from_slice(args);
        run("tc", &all)
    }

    /// HTB's count of frames sent without a class (unshaped), from
    /// `direct_packets_stat` of the root on the middle's receiver side.
    pub fn htb_direct_packets(&self) -> Result<u64, TestbedError> {
        let text = self.tc(&["qdisc", "show", "dev", OUT_DEV])?;
        Ok(text
            .split_whitespace()
            .skip_while(|w| *w != "direct_packets_stat")
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// Runs `f` on a thread inside namespace `ns`.
    pub fn in_ns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> Result<T, TestbedError> {
        in_ns(ns, f)
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        // Best effort; the next run removes what a failure leaves.
        for ns in [&self.sender, &self.middle, &self.receiver] {
            let _ = run("ip", &["netns", "del", ns]);
        }
    }
}
