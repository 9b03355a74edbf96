//! A counted early drop at the receiving end of the link: a `clsact`
//! qdisc on the receiver's device with an eBPF classifier in
//! direct-action mode that drops every IPv4 UDP datagram except those to
//! one kept port (the watched flow's), before the IP and UDP receive path.
//! The classifier is C, compiled by clang and loaded by `fairway-bpf`
//! ([`fairway_bpf::ingress`]); it is there only in a build with the
//! `ebpf` feature.
//!
//! Why: a veth delivers each frame with `netif_rx` on the *sending* CPU,
//! so without it that CPU also runs the receiver's IP routing lookup, UDP
//! socket lookup and the full socket's drop for every packet — about as
//! much work as sending it. The PSPAT paper's receivers (§5.2) "do not read, to
//! minimize the receive side processing costs and focus the measurements
//! on the transmit side"; dropping at ingress goes one step further in the
//! same direction, for every configuration alike.
//!
//! Nothing is lost uncounted: the `clsact` qdisc counts every packet its
//! classifier drops (`tc -s qdisc show`: `dropped`), which
//! [`super::Testbed::kernel_drops`] reads as [`super::KernelDrops::ingress`].
//! Frames that are not IPv4 UDP (IPv6 neighbour discovery, say) pass.

pub use fairway_bpf::BpfError;

/// Whether this build can drop at ingress (built with the `ebpf`
/// feature); [`fairway_bpf::NOT_BUILT`] says what to do if not.
pub const AVAILABLE: bool = fairway_bpf::AVAILABLE;

/// Attaches the classifier dropping every IPv4 UDP datagram except those to
/// port `keep` (`None`: drop them all) to the ingress of device
/// `interface`, adding its `clsact` qdisc. Call in the device's namespace
/// ([`super::Testbed::in_receiver_ns`]).
pub fn attach_drop_filter(interface: &str, keep: Option<u16>) -> Result<(), BpfError> {
    fairway_bpf::ingress::attach_drop_filter(interface, keep)
}
