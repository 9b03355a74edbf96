//! The shaping plan: what `fairway shape` will build, as read from the
//! files and before any check. A tree of [`Node`]s under an implicit root
//! (the link), [`Circuit`]s (a subscriber's queues) hanging from nodes or
//! from the root, [`Device`]s (addresses and MACs) that put frames into
//! their circuit, [`Rule`]s that classify frames by other fields, and the
//! [`DefaultClass`] for frames nothing claims.
//!
//! Rates are exact bit/s per direction: download is toward the
//! subscribers, upload toward the Internet. Parents are names as written;
//! [`crate::validate::check`] resolves them, so that the same plan type
//! serves readers (which cannot know the whole tree yet), the check and,
//! later, the data path and live reload (which diff two plans).

use crate::loc::Loc;
use crate::mac::Mac;
use fairway_core::{SchedKind, SchedSpec};
use ipnet::IpNet;

/// A direction of traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Toward the subscribers.
    Download,
    /// Toward the Internet.
    Upload,
}

impl Dir {
    /// Both directions.
    pub const BOTH: [Dir; 2] = [Dir::Download, Dir::Upload];

    /// `download` or `upload`.
    pub fn name(self) -> &'static str {
        match self {
            Dir::Download => "download",
            Dir::Upload => "upload",
        }
    }
}

/// One direction's rates, bit/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bandwidth {
    /// Guaranteed rate, if one is given. A node without one guarantees
    /// what its children's guarantees sum to.
    pub min: Option<u64>,
    /// Ceiling.
    pub max: u64,
}

/// Rates in both directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rates {
    /// Toward the subscribers.
    pub download: Bandwidth,
    /// Toward the Internet.
    pub upload: Bandwidth,
}

impl Rates {
    /// The rates of direction `dir`.
    pub fn get(&self, dir: Dir) -> Bandwidth {
        match dir {
            Dir::Download => self.download,
            Dir::Upload => self.upload,
        }
    }
}

/// The two interfaces of the bump in the wire and the link's rates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interfaces {
    /// The interface toward the Internet (upload leaves by it).
    pub internet: String,
    /// The interface toward the subscribers (download leaves by it).
    pub subscribers: String,
    /// The link's rate toward the subscribers, bit/s.
    pub download: u64,
    /// The link's rate toward the Internet, bit/s.
    pub upload: u64,
    /// How frames are read and sent (`io`).
    pub io: FrameIo,
    /// Where `[interfaces]` is.
    pub at: Loc,
}

/// The data path's frame I/O back-end (`[interfaces] io`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrameIo {
    /// `ring`: a TPACKET_V3 memory-mapped receive ring, batched sends.
    #[default]
    Ring,
    /// `frame`: one `recvmsg`/`send` system call per frame.
    Frame,
    /// `xdp`: AF_XDP sockets fed by an XDP redirect program (builds with
    /// the `ebpf` feature only).
    Xdp,
}

impl FrameIo {
    /// The values `io` takes, for errors.
    pub const ALLOWED: &'static str = "\"ring\" (TPACKET_V3 receive ring, batched sends; \
        the default), \"frame\" (one system call per frame) or \"xdp\" (AF_XDP sockets, \
        in a build with eBPF support)";

    /// Why `io = "xdp"` is refused by a build without the `ebpf` feature.
    pub const XDP_NOT_BUILT: &'static str = "\"ring\" or \"frame\": this fairway was built \
        without eBPF support, which io = \"xdp\" (AF_XDP) needs: build with --features ebpf \
        (needs clang)";

    /// Whether this build can run back-end `self`.
    pub fn built(self) -> bool {
        self != FrameIo::Xdp || cfg!(feature = "ebpf")
    }

    /// The back-end named `s`.
    pub fn parse(s: &str) -> Option<FrameIo> {
        match s {
            "ring" => Some(FrameIo::Ring),
            "frame" => Some(FrameIo::Frame),
            "xdp" => Some(FrameIo::Xdp),
            _ => None,
        }
    }
}

/// The default scheduler of a node's children: QFQ+ (the QFQ+ paper).
pub fn default_scheduler() -> SchedSpec {
    SchedSpec::new(SchedKind::QfqPlus)
}

/// An inner node of the tree (a site, a tower, an access point).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Unique among nodes.
    pub name: String,
    /// The parent node's name; `None`: under the root.
    pub parent: Option<String>,
    /// Its rates.
    pub rates: Rates,
    /// Share among its siblings; `None`: in proportion to its guarantee.
    pub weight: Option<u32>,
    /// The scheduler that serves its children ([`default_scheduler`]
    /// unless given).
    pub scheduler: SchedSpec,
    /// Where it is written.
    pub at: Loc,
}

/// A subscriber's queues: what the shaper guarantees and caps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circuit {
    /// Unique among circuits.
    pub id: String,
    /// A label for reports.
    pub name: String,
    /// The parent node's name; `None`: under the root.
    pub parent: Option<String>,
    /// Its rates.
    pub rates: Rates,
    /// Share among its siblings; `None`: in proportion to its guarantee.
    pub weight: Option<u32>,
    /// Where it is written (its first row in a CSV file).
    pub at: Loc,
}

/// An address prefix of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// The prefix (a single address is a /32 or /128).
    pub net: IpNet,
    /// Where it is written.
    pub at: Loc,
}

/// A device of a circuit: frames from or to its addresses or MAC belong
/// to the circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Unique among devices.
    pub id: String,
    /// A label for reports.
    pub name: String,
    /// The circuit's id.
    pub circuit: String,
    /// Its MAC, if given.
    pub mac: Option<Mac>,
    /// Its IPv4 and IPv6 prefixes.
    pub prefixes: Vec<Prefix>,
    /// Where it is written.
    pub at: Loc,
}

/// An inclusive range of transport ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    /// First port.
    pub lo: u16,
    /// Last port.
    pub hi: u16,
}

/// What a rule matches; every field given must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Match {
    /// Source or destination address in the prefix.
    pub prefix: Option<IpNet>,
    /// Source or destination MAC.
    pub mac: Option<Mac>,
    /// 802.1Q VLAN id.
    pub vlan: Option<u16>,
    /// IP protocol number.
    pub protocol: Option<u8>,
    /// Source port in the range.
    pub src_ports: Option<PortRange>,
    /// Destination port in the range.
    pub dst_ports: Option<PortRange>,
    /// DSCP code point.
    pub dscp: Option<u8>,
}

/// A classifier rule: frames it matches go to a circuit. Rules are tried
/// in the order written, before the devices' addresses and MACs; the
/// first match wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// What it matches.
    pub matches: Match,
    /// The circuit's id.
    pub circuit: String,
    /// Where it is written.
    pub at: Loc,
}

/// Where frames no rule, address or MAC claims go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefaultClass {
    /// The parent node's name; `None`: under the root.
    pub parent: Option<String>,
    /// Its rates.
    pub rates: Rates,
    /// Where it is written.
    pub at: Loc,
}

/// Everything the shaper is told, as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// The interfaces and link rates (shaper file only).
    pub interfaces: Option<Interfaces>,
    /// Inner nodes.
    pub nodes: Vec<Node>,
    /// Circuits.
    pub circuits: Vec<Circuit>,
    /// Devices.
    pub devices: Vec<Device>,
    /// Classifier rules, in order.
    pub rules: Vec<Rule>,
    /// The default class; `None`: frames nothing claims pass unshaped.
    pub default_class: Option<DefaultClass>,
    /// LibreQoS virtual nodes (logical only, not shaped) and their
    /// nearest real ancestor (`None`: the root), to which their children
    /// and circuits were moved, as LibreQoS does.
    pub virtual_nodes: Vec<(String, Option<String>)>,
    /// Circuits that named a parent node in a flat network (no nodes),
    /// put under the root as LibreQoS does.
    pub flattened_parents: usize,
    /// Names and ids of nodes and circuits left out because they did not
    /// parse (their problems are reported): the check does not report
    /// again what refers to them.
    pub left_out: Vec<String>,
}
