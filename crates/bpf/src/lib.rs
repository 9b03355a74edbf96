//! fairway's eBPF programs and the sockets that use them.
//!
//! The programs are C (`bpf/*.bpf.c`), compiled by clang for the `bpf`
//! target when the crate is built with the `ebpf` feature, embedded in the
//! library and loaded with aya (a pure-Rust loader). Without the feature
//! the crate still builds, with Rust and a C compiler only, and every
//! function that loads a program returns [`BpfError::NotBuilt`].
//!
//! - [`ingress`]: a tc classifier dropping IPv4 UDP at a device's
//!   ingress except one kept port (the real-packet benchmark's receivers).
//! - [`xdp`]: an XDP program redirecting each received frame into the
//!   AF_XDP socket of its receive queue.
//! - [`xsk`]: AF_XDP sockets (UMEM, fill/completion/RX/TX rings): receive
//!   a batch of frames, send a frame, drop counters. They need no eBPF
//!   program of their own to be created, so they are built either way.

#![cfg_attr(not(target_os = "linux"), allow(unused))]

mod error;
#[cfg(target_os = "linux")]
pub mod ingress;
mod object;
#[cfg(target_os = "linux")]
pub mod xdp;
#[cfg(target_os = "linux")]
pub mod xsk;

pub use error::BpfError;

/// Whether this build holds the eBPF programs (the `ebpf` feature).
pub const AVAILABLE: bool = cfg!(feature = "ebpf");

/// What a command that needs the programs says when they are not built in.
pub const NOT_BUILT: &str =
    "this fairway was built without eBPF programs: build with --features ebpf, which needs clang";

/// `Err(BpfError::NotBuilt)` unless the programs are built in.
pub fn require() -> Result<(), BpfError> {
    if AVAILABLE {
        Ok(())
    } else {
        Err(BpfError::NotBuilt)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_kept_port_of_zero_is_refused_by_name() {
        let e = ingress::attach_drop_filter("lo", Some(0)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("kept UDP port 0 is outside 1..=65535"),
            "{e}"
        );
    }

    #[cfg(not(feature = "ebpf"))]
    #[test]
    fn without_the_feature_loading_says_how_to_build() {
        let e = ingress::attach_drop_filter("lo", Some(9)).unwrap_err();
        assert_eq!(e.to_string(), NOT_BUILT);
        assert!(NOT_BUILT.contains("--features ebpf") && NOT_BUILT.contains("clang"));
        let e = xdp::XdpRedirect::attach("lo", xdp::XdpMode::Native)
            .err()
            .unwrap();
        assert!(matches!(e, BpfError::NotBuilt), "{e}");
        assert!(require().is_err());
    }
}
