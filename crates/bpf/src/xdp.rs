//! The XDP redirect (`bpf/xdp_redirect.bpf.c`): attached to an interface,
//! it hands each frame received on queue q to the AF_XDP socket
//! registered for q ([`XdpRedirect::register`]); a queue without a socket
//! passes its frames to the kernel's stack. Detached when the
//! [`XdpRedirect`] is dropped.

use crate::xsk::XskSocket;
use crate::BpfError;

/// The program's name (its function in the C source).
pub const PROGRAM: &str = "xdp_redirect";

/// Receive queues the program's socket map has slots for (`max_entries`
/// of its XSKMAP).
pub const MAX_QUEUES: u32 = 64;

/// Where the program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XdpMode {
    /// In the driver, before an skb is built (veth supports it).
    Native,
    /// After the kernel has built an skb, for any driver (slower).
    Generic,
}

/// The program, attached to one interface.
pub struct XdpRedirect {
    #[cfg(feature = "ebpf")]
    bpf: aya::Ebpf,
    interface: String,
}

impl XdpRedirect {
    /// Loads the program and attaches it to `interface` (in the calling
    /// thread's network namespace). Needs CAP_NET_ADMIN and CAP_BPF.
    pub fn attach(interface: &str, mode: XdpMode) -> Result<Self, BpfError> {
        #[cfg(not(feature = "ebpf"))]
        {
            let _ = mode;
            let _ = interface;
            Err(BpfError::NotBuilt)
        }
        #[cfg(feature = "ebpf")]
        {
            attach(interface, mode)
        }
    }

    /// The interface it is attached to.
    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// Sends the frames of receive queue `queue` to `socket`, which must be
    /// bound to that queue of this interface.
    pub fn register(&mut self, queue: u32, socket: &XskSocket) -> Result<(), BpfError> {
        if queue >= MAX_QUEUES {
            return Err(BpfError::Parameter {
                name: "receive queue",
                value: u64::from(queue),
                allowed: "0..=63 (the slots of the program's socket map)",
            });
        }
        #[cfg(not(feature = "ebpf"))]
        {
            let _ = socket;
            Err(BpfError::NotBuilt)
        }
        #[cfg(feature = "ebpf")]
        {
            use std::os::fd::AsRawFd;
            let map = self.bpf.map_mut("xsks").ok_or_else(|| BpfError::Load {
                program: PROGRAM,
                reason: "its socket map is not in the compiled object".into(),
            })?;
            let mut xsks = aya::maps::XskMap::try_from(map).map_err(|e| BpfError::Load {
                program: PROGRAM,
                reason: crate::error::chain(&e),
            })?;
            xsks.set(queue, socket.as_raw_fd(), 0)
                .map_err(|e| BpfError::Attach {
                    program: PROGRAM,
                    interface: self.interface.clone(),
                    reason: format!(
                        "registering the socket of queue {queue}: {}",
                        crate::error::chain(&e)
                    ),
                })
        }
    }
}

#[cfg(feature = "ebpf")]
fn attach(interface: &str, mode: XdpMode) -> Result<XdpRedirect, BpfError> {
    use crate::error::chain;
    use aya::programs::{Xdp, XdpFlags};

    let load_err = |e: &dyn std::error::Error| BpfError::Load {
        program: PROGRAM,
        reason: chain(e),
    };
    let mut bpf = aya::Ebpf::load(crate::object::xdp_redirect()).map_err(|e| load_err(&e))?;
    let prog: &mut Xdp = bpf
        .program_mut(PROGRAM)
        .ok_or_else(|| BpfError::Load {
            program: PROGRAM,
            reason: "not in the compiled object".into(),
        })?
        .try_into()
        .map_err(|e| load_err(&e))?;
    prog.load().map_err(|e| load_err(&e))?;
    let flags = match mode {
        XdpMode::Native => XdpFlags::DRV_MODE,
        XdpMode::Generic => XdpFlags::SKB_MODE,
    };
    prog.attach(interface, flags)
        .map_err(|e| BpfError::Attach {
            program: PROGRAM,
            interface: interface.to_string(),
            reason: chain(&e),
        })?;
    Ok(XdpRedirect {
        bpf,
        interface: interface.to_string(),
    })
}
