//! The testbed: two network namespaces joined by a veth pair, created and
//! removed by the program itself.
//!
//! ```text
//!  namespace fwy<pid>x<n>s              namespace fwy<pid>x<n>r
//!  senders ── veth0 198.18.0.1/30 ══ veth1 198.18.0.2/30 ── receiver
//!             [root qdisc: none | HTB]
//! ```
//!
//! The addresses are in 198.18.0.0/15, the range reserved for benchmarking
//! (RFC 2544), and exist only inside the two namespaces: no packet can
//! leave them. Names carry the process id and a counter, so parallel tests
//! and runs never collide; [`Testbed::create`] also removes namespaces left
//! by fairway processes that no longer exist, and `Drop` removes this
//! testbed's (deleting a namespace deletes its veth end, and the pair with
//! it).
//!
//! The `tc` comparison of the PSPAT paper §5.4 schedules on the egress device:
//! [`Testbed::set_htb`] installs an HTB root with one class per client
//! (rate = its weighted share of the link, ceil = the link, quantum = its
//! weight in 60-byte packets, like fairway's DRR with a one-packet quantum).
//! Packets find their class by `SO_PRIORITY` (HTB maps `skb->priority`
//! equal to a class id to that class), so no filter is walked. The PSPAT
//! paper used QFQ/DRR through TC; this kernel has the HTB and TBF qdiscs but not
//! `qfq` or `drr`, hence HTB.
//!
//! Needs root (`CAP_NET_ADMIN`, `CAP_SYS_ADMIN` for `setns`) and the `ip`
//! and `tc` tools (iproute2).

pub mod ingress;

use std::fs::File;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The senders' address (inside the sender namespace only).
pub const SENDER_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// The receiver's address (inside the receiver namespace only).
pub const RECEIVER_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// The sender's interface.
pub const SENDER_DEV: &str = "veth0";
/// The receiver's interface.
pub const RECEIVER_DEV: &str = "veth1";
/// The sender's MAC address.
pub const SENDER_MAC: [u8; 6] = [0x02, 0x00, 0xc6, 0x12, 0x00, 0x01];
/// The receiver's MAC address.
pub const RECEIVER_MAC: [u8; 6] = [0x02, 0x00, 0xc6, 0x12, 0x00, 0x02];
/// Prefix of every namespace a testbed creates.
pub(crate) const NS_PREFIX: &str = "fwy";

static SEQ: AtomicU32 = AtomicU32::new(0);

/// Why the testbed could not be built or driven.
#[derive(Debug)]
pub enum TestbedError {
    /// Not running as root.
    NeedsRoot,
    /// A tool (`ip`, `tc`) is missing.
    MissingTool(String),
    /// A command failed: the command line and its error output.
    Command(String, String),
    /// Entering a namespace or another system call failed.
    Io(io::Error),
    /// The ingress classifier could not be loaded or attached, or this
    /// build has none ([`fairway_bpf::BpfError::NotBuilt`]).
    Bpf(fairway_bpf::BpfError),
}

impl std::fmt::Display for TestbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TestbedError::NeedsRoot => write!(
                f,
                "the testbed needs root (CAP_NET_ADMIN) to create network namespaces"
            ),
            TestbedError::MissingTool(t) => write!(f, "`{t}` not found (install iproute2)"),
            TestbedError::Command(cmd, err) => write!(f, "`{cmd}` failed: {}", err.trim()),
            TestbedError::Io(e) => write!(f, "testbed: {e}"),
            TestbedError::Bpf(e) => write!(f, "testbed: {e}"),
        }
    }
}

impl std::error::Error for TestbedError {}

impl From<io::Error> for TestbedError {
    fn from(e: io::Error) -> Self {
        TestbedError::Io(e)
    }
}

/// One HTB class: a client's weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtbClass {
    /// The client's weight (its share of the link is weight / Σ weights).
    pub weight: u32,
}

/// The kernel's drop counters along the path, read back after a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelDrops {
    /// Dropped by the sender's root qdisc (HTB), all classes.
    pub qdisc: u64,
    /// Dropped at the receiver's ingress hook
    /// ([`Testbed::drop_at_ingress`]): counted by its `clsact` qdisc.
    pub ingress: u64,
    /// Packets still queued in the root qdisc.
    pub qdisc_backlog: u64,
    /// `tx_dropped` of the sender's veth (peer's backlog full).
    pub veth_tx: u64,
    /// `rx_dropped` of the receiver's veth.
    pub veth_rx: u64,
    /// UDP datagrams for a port nobody listens on (receiver namespace).
    pub udp_no_ports: u64,
    /// UDP receive errors other than full socket buffers (receiver
    /// namespace: `InErrors − RcvbufErrors`).
    pub udp_other_errors: u64,
    /// UDP datagrams dropped at full socket buffers in the receiver
    /// namespace (`RcvbufErrors`): cross-checks the per-socket counters.
    pub udp_rcvbuf_errors: u64,
}

impl KernelDrops {
    /// The counts accumulated since `before` (the counters are cumulative
    /// over the testbed's life; the backlog is taken as it is now).
    pub fn since(&self, before: &KernelDrops) -> KernelDrops {
        KernelDrops {
            qdisc: self.qdisc.saturating_sub(before.qdisc),
            ingress: self.ingress.saturating_sub(before.ingress),
            qdisc_backlog: self.qdisc_backlog,
            veth_tx: self.veth_tx.saturating_sub(before.veth_tx),
            veth_rx: self.veth_rx.saturating_sub(before.veth_rx),
            udp_no_ports: self.udp_no_ports.saturating_sub(before.udp_no_ports),
            udp_other_errors: self
                .udp_other_errors
                .saturating_sub(before.udp_other_errors),
            udp_rcvbuf_errors: self
                .udp_rcvbuf_errors
                .saturating_sub(before.udp_rcvbuf_errors),
        }
    }

    /// Drops that are not counted per socket by the receiver.
    pub fn outside_sockets(&self) -> u64 {
        self.qdisc
            + self.ingress
            + self.veth_tx
            + self.veth_rx
            + self.udp_no_ports
            + self.udp_other_errors
    }
}

/// Two namespaces and a veth pair; removed on drop.
#[derive(Debug)]
pub struct Testbed {
    sender_ns: String,
    receiver_ns: String,
}

pub(crate) fn run(cmd: &str, args: &[&str]) -> Result<String, TestbedError> {
    let out = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => TestbedError::MissingTool(cmd.into()),
            _ => TestbedError::Io(e),
        })?;
    if !out.status.success() {
        return Err(TestbedError::Command(
            format!("{cmd} {}", args.join(" ")),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `f` on a new thread that has entered namespace `ns`: sockets it
/// creates belong to `ns` for their whole life, whichever thread uses them.
pub(crate) fn in_ns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> Result<T, TestbedError> {
    let file = File::open(format!("/run/netns/{ns}"))?;
    std::thread::scope(|s| {
        s.spawn(move || {
            nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(|e| TestbedError::Io(e.into()))?;
            Ok(f())
        })
        .join()
        .map_err(|_| TestbedError::Io(io::Error::other("namespace thread panicked")))?
    })
}

/// Removes namespaces named by this module whose process is gone.
pub(crate) fn remove_stale() {
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(NS_PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('x').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = run("ip", &["netns", "del", &name]);
        }
    }
}

impl Testbed {
    /// Creates the namespaces, the veth pair, addresses, a static
    /// neighbour entry (no ARP during runs) and brings everything up.
    pub fn create() -> Result<Self, TestbedError> {
        if !is_root() {
            return Err(TestbedError::NeedsRoot);
        }
        remove_stale();
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let base = format!("{NS_PREFIX}{}x{n}", std::process::id());
        let tb = Testbed {
            sender_ns: format!("{base}s"),
            receiver_ns: format!("{base}r"),
        };
        run("ip", &["netns", "add", &tb.sender_ns])?;
        // From here on `tb`'s Drop removes whatever was created.
        run("ip", &["netns", "add", &tb.receiver_ns])?;
        let (s, r) = (tb.sender_ns.as_str(), tb.receiver_ns.as_str());
        let sip = format!("{SENDER_IP}/30");
        let rip = format!("{RECEIVER_IP}/30");
        let rmac = "02:00:c6:12:00:02";
        let steps: [&[&str]; 9] = [
            &[
                "-n",
                s,
                "link",
                "add",
                SENDER_DEV,
                "address",
                "02:00:c6:12:00:01",
                "type",
                "veth",
                "peer",
                "name",
                RECEIVER_DEV,
                "netns",
                r,
                "address",
                rmac,
            ],
            &["-n", s, "addr", "add", &sip, "dev", SENDER_DEV],
            &["-n", r, "addr", "add", &rip, "dev", RECEIVER_DEV],
            &["-n", s, "link", "set", "lo", "up"],
            &["-n", r, "link", "set", "lo", "up"],
            &["-n", s, "link", "set", SENDER_DEV, "up"],
            &["-n", r, "link", "set", RECEIVER_DEV, "up"],
            &[
                "-n",
                s,
                "neigh",
                "replace",
                &RECEIVER_IP.to_string(),
                "lladdr",
                rmac,
                "dev",
                SENDER_DEV,
                "nud",
                "permanent",
            ],
            &["-n", s, "link", "set", SENDER_DEV, "txqueuelen", "1000"],
        ];
        for args in steps {
            run("ip", args)?;
        }
        Ok(tb)
    }

    /// The sender namespace's name.
    pub fn sender_ns(&self) -> &str {
        &self.sender_ns
    }

    /// The receiver namespace's name.
    pub fn receiver_ns(&self) -> &str {
        &self.receiver_ns
    }

    /// Runs `f` in the sender namespace (create sender sockets there).
    pub fn in_sender_ns<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T, TestbedError> {
        in_ns(&self.sender_ns, f)
    }

    /// Runs `f` in the receiver namespace (create receiver sockets there).
    pub fn in_receiver_ns<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T, TestbedError> {
        in_ns(&self.receiver_ns, f)
    }

    /// The sender device's interface index (for `AF_PACKET` sockets).
    pub fn sender_ifindex(&self) -> Result<u32, TestbedError> {
        self.in_sender_ns(|| nix::net::if_::if_nametoindex(SENDER_DEV))?
            .map_err(|e| TestbedError::Io(e.into()))
    }

    /// The sender device's counters (frames that crossed the link are its
    /// `tx_packets`), readable from any thread.
    pub fn sender_device_counters(&self) -> Result<DeviceCounters, TestbedError> {
        let file = self.in_sender_ns(|| File::open("/proc/thread-self/net/dev"))??;
        let mut c = DeviceCounters {
            file,
            dev: SENDER_DEV.into(),
            text: String::new(),
        };
        c.read()?;
        Ok(c)
    }

    /// Removes any root qdisc: veth then sends directly (`noqueue`).
    pub fn clear_qdisc(&self) -> Result<(), TestbedError> {
        match run(
            "tc",
            &[
                "-n",
                &self.sender_ns,
                "qdisc",
                "del",
                "dev",
                SENDER_DEV,
                "root",
            ],
        ) {
            Ok(_) => Ok(()),
            // Nothing to delete is fine.
            Err(TestbedError::Command(_, e))
                if e.contains("No such file")
                    || e.contains("Cannot delete qdisc with handle of zero") =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The `SO_PRIORITY` value that puts a packet in class `index` (0-based)
    /// of the HTB installed by [`Testbed::set_htb`].
    pub fn htb_priority(index: usize) -> u32 {
        (1 << 16) | (index as u32 + 2)
    }

    /// Installs an HTB root on the sender's veth: a parent class of
    /// `link_bps` bits/s and one child per entry of `classes`, with rate =
    /// weighted share of `link_bps`, ceil = `link_bps`, quantum = weight ×
    /// `packet_len` bytes.
    pub fn set_htb(
        &self,
        classes: &[HtbClass],
        link_bps: u64,
        packet_len: u32,
    ) -> Result<(), TestbedError> {
        self.clear_qdisc()?;
        let total: u64 = classes.iter().map(|c| c.weight as u64).sum();
        if total == 0 || link_bps == 0 || classes.len() > 0xfff0 {
            return Err(TestbedError::Command(
                "set_htb".into(),
                "classes need positive weights and the link a positive rate".into(),
            ));
        }
        let dev = SENDER_DEV;
        let mut script = format!(
            "qdisc add dev {dev} root handle 1: htb default 0\n\
             class add dev {dev} parent 1: classid 1:1 htb rate {link_bps}bit ceil {link_bps}bit quantum {packet_len}\n"
        );
        for (i, c) in classes.iter().enumerate() {
            let minor = Self::htb_priority(i) & 0xffff;
            let rate = link_bps as u128 * c.weight as u128 / total as u128;
            // HTB keeps rates in bytes/s: a class below 8 bit/s would get
            // none. Refused, not raised to 8.
            if rate < 8 {
                return Err(TestbedError::Command(
                    "set_htb".into(),
                    format!("class {i} would get {rate} bit/s, below the 8 bit/s HTB can shape"),
                ));
            }
            let quantum = c.weight as u64 * packet_len as u64;
            script.push_str(&format!(
                "class add dev {dev} parent 1:1 classid 1:{minor:x} htb rate {rate}bit ceil {link_bps}bit quantum {quantum}\n"
            ));
        }
        let mut child = Command::new("tc")
            .args(["-n", &self.sender_ns, "-batch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => TestbedError::MissingTool("tc".into()),
                _ => TestbedError::Io(e),
            })?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(script.as_bytes())?;
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(TestbedError::Command(
                "tc -batch (HTB setup)".into(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        Ok(())
    }

    /// Drops every IPv4 UDP datagram except those to port `keep` (`None`:
    /// all of them) where it enters the receiver's device, before the IP
    /// and UDP receive path, counting each drop
    /// ([`KernelDrops::ingress`]; see [`ingress`]). The sending CPU
    /// then no longer runs the receive stack for the flows nobody reads.
    pub fn drop_at_ingress(&self, keep: Option<u16>) -> Result<(), TestbedError> {
        self.in_receiver_ns(|| ingress::attach_drop_filter(RECEIVER_DEV, keep))?
            .map_err(TestbedError::Bpf)
    }

    /// Reads the drop counters along the path.
    pub fn kernel_drops(&self) -> Result<KernelDrops, TestbedError> {
        let mut d = KernelDrops::default();
        let q = run(
            "tc",
            &[
                "-n",
                &self.sender_ns,
                "-s",
                "qdisc",
                "show",
                "dev",
                SENDER_DEV,
            ],
        )?;
        (d.qdisc, d.qdisc_backlog) = parse_root_qdisc(&q);
        let q = run(
            "tc",
            &[
                "-n",
                &self.receiver_ns,
                "-s",
                "qdisc",
                "show",
                "dev",
                RECEIVER_DEV,
            ],
        )?;
        d.ingress = parse_qdisc_drops(&q, "clsact");
        let read = |ns: &str, dev: &str, stat: &str| -> Result<u64, TestbedError> {
            let path = format!("/sys/class/net/{dev}/statistics/{stat}");
            let out = run("ip", &["netns", "exec", ns, "cat", &path])?;
            Ok(out.trim().parse().unwrap_or(0))
        };
        d.veth_tx = read(&self.sender_ns, SENDER_DEV, "tx_dropped")?;
        d.veth_rx = read(&self.receiver_ns, RECEIVER_DEV, "rx_dropped")?;
        let snmp = run(
            "ip",
            &["netns", "exec", &self.receiver_ns, "cat", "/proc/net/snmp"],
        )?;
        let udp = parse_snmp(&snmp, "Udp");
        let get = |k: &str| udp.iter().find(|(n, _)| n == k).map_or(0, |(_, v)| *v);
        d.udp_no_ports = get("NoPorts");
        d.udp_rcvbuf_errors = get("RcvbufErrors");
        d.udp_other_errors = get("InErrors").saturating_sub(d.udp_rcvbuf_errors);
        Ok(d)
    }
}

/// One device's packet counters, as `/proc/net/dev` gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets transmitted: for a veth end, frames that left its qdisc and
    /// were handed to the peer.
    pub tx_packets: u64,
    /// Transmit drops (a veth end: the peer's backlog was full).
    pub tx_dropped: u64,
}

/// A device's counters in one namespace, readable from any thread at any
/// time: `/proc/thread-self/net/dev` is opened by a thread inside the
/// namespace, and the open file keeps reporting that namespace's devices
/// (each read starts over from the top). Used to count what crosses the
/// link inside a time window, independently of how long each sender ran.
#[derive(Debug)]
pub struct DeviceCounters {
    file: File,
    dev: String,
    text: String,
}

impl DeviceCounters {
    /// The counters of device `dev` of namespace `ns`.
    pub fn open(ns: &str, dev: &str) -> Result<Self, TestbedError> {
        let file = in_ns(ns, || File::open("/proc/thread-self/net/dev"))??;
        let mut c = DeviceCounters {
            file,
            dev: dev.into(),
            text: String::new(),
        };
        c.read()?;
        Ok(c)
    }

    /// The device's counters now.
    pub fn read(&mut self) -> io::Result<DeviceStats> {
        use std::io::{Read, Seek, SeekFrom};
        self.file.seek(SeekFrom::Start(0))?;
        self.text.clear();
        self.file.read_to_string(&mut self.text)?;
        parse_proc_net_dev(&self.text, &self.dev).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("device {} not in /proc/net/dev", self.dev),
            )
        })
    }
}

/// The counters of `dev` in `/proc/net/dev` text.
fn parse_proc_net_dev(text: &str, dev: &str) -> Option<DeviceStats> {
    text.lines().find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name.trim() != dev {
            return None;
        }
        // rx: bytes packets errs drop fifo frame compressed multicast,
        // tx: bytes packets errs drop fifo colls carrier compressed.
        let v: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        (v.len() >= 12).then(|| DeviceStats {
            rx_packets: v[1],
            tx_packets: v[9],
            tx_dropped: v[11],
        })
    })
}

/// (drops, backlog packets) of the root qdisc in `tc -s qdisc show` output.
fn parse_root_qdisc(text: &str) -> (u64, u64) {
    let mut in_root = false;
    let (mut drops, mut backlog) = (0, 0);
    for line in text.lines() {
        if line.starts_with("qdisc ") {
            in_root = line.contains(" root ");
            continue;
        }
        if !in_root {
            continue;
        }
        if let Some(i) = line.find("dropped ") {
            let rest = &line[i + 8..];
            drops = rest
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        }
        if let Some(rest) = line.trim().strip_prefix("backlog ") {
            backlog = rest
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.strip_suffix('p'))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        }
    }
    (drops, backlog)
}

/// The drops of the qdisc of kind `kind` in `tc -s qdisc show` output (0
/// if there is none).
fn parse_qdisc_drops(text: &str, kind: &str) -> u64 {
    let head = format!("qdisc {kind} ");
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("qdisc ") {
            inside = line.starts_with(&head);
            continue;
        }
        if let (true, Some(i)) = (inside, line.find("dropped ")) {
            return line[i + 8..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        }
    }
    0
}

/// The `name value` pairs of one protocol in `/proc/net/snmp`.
fn parse_snmp(text: &str, proto: &str) -> Vec<(String, u64)> {
    let prefix = format!("{proto}:");
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(&prefix)).collect();
    if lines.len() < 2 {
        return Vec::new();
    }
    lines[0]
        .split_whitespace()
        .skip(1)
        .zip(lines[1].split_whitespace().skip(1))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap_or(0)))
        .collect()
}

impl Drop for Testbed {
    fn drop(&mut self) {
        // Best effort: a failure here cannot be reported, and the next
        // `create` removes namespaces of processes that are gone.
        let _ = run("ip", &["netns", "del", &self.sender_ns]);
        let _ = run("ip", &["netns", "del", &self.receiver_ns]);
    }
}

/// True when the process runs as root (effective uid 0), which creating
/// namespaces and qdiscs needs.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The namespaces this process's testbeds created that still exist (none
/// once every [`Testbed`] is dropped, unless `ip netns del` failed).
pub fn own_namespaces() -> Vec<String> {
    let own = format!("{NS_PREFIX}{}x", std::process::id());
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&own))
        .collect();
    names.sort();
    names
}

/// True when a namespace of this name exists.
pub fn namespace_exists(name: &str) -> bool {
    std::path::Path::new(&format!("/run/netns/{name}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tc_and_snmp_counters() {
        let tc =
            "qdisc htb 1: root refcnt 2 r2q 10 default 0 direct_packets_stat 3 direct_qlen 1000\n \
                  Sent 600 bytes 10 pkt (dropped 17, overlimits 4 requeues 0)\n \
                  backlog 120b 2p requeues 0\n\
                  qdisc pfifo 8001: parent 1:2 limit 1000p\n \
                  Sent 60 bytes 1 pkt (dropped 5, overlimits 0 requeues 0)\n \
                  backlog 0b 0p requeues 0\n";
        assert_eq!(parse_root_qdisc(tc), (17, 2));
        assert_eq!(parse_qdisc_drops(tc, "pfifo"), 5);
        assert_eq!(parse_qdisc_drops(tc, "clsact"), 0);
        let clsact = "qdisc noqueue 0: root refcnt 2\n \
                      Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)\n\
                      qdisc clsact ffff: parent ffff:fff1\n \
                      Sent 6000 bytes 100 pkt (dropped 99, overlimits 0 requeues 0)\n";
        assert_eq!(parse_qdisc_drops(clsact, "clsact"), 99);
        let snmp = "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors\nUdp: 10 1 7 0 5\n";
        let u = parse_snmp(snmp, "Udp");
        assert_eq!(u[2], ("InErrors".to_string(), 7));
        assert_eq!(u[4], ("RcvbufErrors".to_string(), 5));
        let dev = "Inter-|   Receive                            |  Transmit\n \
                   face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n\
                   \x20   lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\n\
                   \x20veth0:     300       5    0    0    0     0          0         0   600060   10001    0    7    0     0       0          0\n";
        assert_eq!(
            parse_proc_net_dev(dev, "veth0"),
            Some(DeviceStats {
                rx_packets: 5,
                tx_packets: 10001,
                tx_dropped: 7
            })
        );
        assert_eq!(parse_proc_net_dev(dev, "veth1"), None);
    }
}
