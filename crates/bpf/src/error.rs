//! Why loading a program, attaching it or opening an AF_XDP socket
//! failed.

use std::fmt;
use std::io;

/// Why an eBPF program or an AF_XDP socket could not be used.
#[derive(Debug)]
pub enum BpfError {
    /// The crate was built without the `ebpf` feature.
    NotBuilt,
    /// The kernel refused a program or its maps (the verifier's reason, a
    /// missing capability).
    Load {
        /// The program.
        program: &'static str,
        /// The loader's message.
        reason: String,
    },
    /// A loaded program could not be attached to an interface.
    Attach {
        /// The program.
        program: &'static str,
        /// The interface.
        interface: String,
        /// The loader's message.
        reason: String,
    },
    /// A parameter outside its allowed range.
    Parameter {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: u64,
        /// What is allowed, and why.
        allowed: &'static str,
    },
    /// A system call of an AF_XDP socket failed.
    Socket {
        /// What was being done.
        what: &'static str,
        /// The system's error.
        source: io::Error,
    },
}

impl fmt::Display for BpfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotBuilt => f.write_str(crate::NOT_BUILT),
            Self::Load { program, reason } => {
                write!(f, "loading the eBPF program {program}: {reason}")
            }
            Self::Attach {
                program,
                interface,
                reason,
            } => write!(
                f,
                "attaching the eBPF program {program} to {interface:?}: {reason}"
            ),
            Self::Parameter {
                name,
                value,
                allowed,
            } => write!(f, "{name} {value} is outside {allowed}"),
            Self::Socket { what, source } => write!(f, "AF_XDP socket: {what}: {source}"),
        }
    }
}

impl std::error::Error for BpfError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Socket { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The full chain of an error's messages, on one line (aya's errors put
/// the system's reason in their sources).
#[cfg(feature = "ebpf")]
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        text.push_str(": ");
        text.push_str(&s.to_string());
        next = s.source();
    }
    text.replace('\n', " ")
}
