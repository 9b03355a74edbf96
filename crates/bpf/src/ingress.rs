//! The ingress drop classifier (`bpf/ingress_drop.bpf.c`): attached to a
//! device's `clsact` qdisc at its ingress hook, in direct-action mode, it
//! drops every IPv4 UDP datagram except those to one kept port, before the
//! IP and UDP receive path. The qdisc counts every drop (`tc -s qdisc
//! show`: `dropped`); frames that are not IPv4 UDP pass.
//!
//! It is attached as a tc filter by rtnetlink (not as a `tcx` link, which
//! newer kernels also offer), so that the `clsact` qdisc counts its drops
//! and the filter stays on the device, holding the program, after the
//! loader is gone: it lasts as long as the device.

use crate::BpfError;

/// The program's name (its function in the C source).
pub const PROGRAM: &str = "ingress_drop";

/// Attaches the classifier dropping every IPv4 UDP datagram except those
/// to port `keep` (`None`: all of them) to the ingress of `interface`, in
/// the calling thread's network namespace, adding the device's `clsact`
/// qdisc if it has none. Needs CAP_NET_ADMIN and CAP_BPF (root).
pub fn attach_drop_filter(interface: &str, keep: Option<u16>) -> Result<(), BpfError> {
    if keep == Some(0) {
        return Err(BpfError::Parameter {
            name: "kept UDP port",
            value: 0,
            allowed: "1..=65535 (0 is no port: pass None to keep none)",
        });
    }
    attach(interface, keep.unwrap_or(0))
}

#[cfg(not(feature = "ebpf"))]
fn attach(_interface: &str, _keep: u16) -> Result<(), BpfError> {
    Err(BpfError::NotBuilt)
}

#[cfg(feature = "ebpf")]
fn attach(interface: &str, keep: u16) -> Result<(), BpfError> {
    use crate::error::chain;
    use aya::programs::tc::{self, NlOptions, TcAttachOptions};
    use aya::programs::{SchedClassifier, TcAttachType};

    let load_err = |e: &dyn std::error::Error| BpfError::Load {
        program: PROGRAM,
        reason: chain(e),
    };
    let attach_err = |e: &dyn std::error::Error| BpfError::Attach {
        program: PROGRAM,
        interface: interface.to_string(),
        reason: chain(e),
    };
    let mut bpf = aya::EbpfLoader::new()
        .set_global("keep_port", &keep, true)
        .load(crate::object::ingress_drop())
        .map_err(|e| load_err(&e))?;
    let prog: &mut SchedClassifier = bpf
        .program_mut(PROGRAM)
        .ok_or_else(|| BpfError::Load {
            program: PROGRAM,
            reason: "not in the compiled object".into(),
        })?
        .try_into()
        .map_err(|e| load_err(&e))?;
    prog.load().map_err(|e| load_err(&e))?;
    // An existing clsact qdisc (EEXIST) is the one wanted.
    if let Err(e) = tc::qdisc_add_clsact(interface) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(attach_err(&e));
        }
    }
    let link = prog
        .attach_with_options(
            interface,
            TcAttachType::Ingress,
            TcAttachOptions::Netlink(NlOptions::default()),
        )
        .map_err(|e| attach_err(&e))?;
    // The filter holds its own reference to the program. Taking the link
    // out of the program and forgetting it leaves the filter attached when
    // `bpf` is dropped (aya removes the filters it still owns).
    let link = prog.take_link(link).map_err(|e| attach_err(&e))?;
    std::mem::forget(link);
    Ok(())
}
