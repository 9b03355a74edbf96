//! How many receive queues an interface has: an AF_XDP socket receives
//! from one queue, so a user that must see every frame opens one socket
//! per queue and registers each with the XDP program.

use crate::BpfError;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `struct ethtool_channels` (linux/ethtool.h).
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

const ETHTOOL_GCHANNELS: u32 = 0x3c;
const SIOCETHTOOL: libc::c_ulong = 0x8946;

/// The receive queues of `interface` (in the calling thread's network
/// namespace) that deliver frames: its channels' receive and combined
/// counts (`ETHTOOL_GCHANNELS`). A driver that does not report its
/// channels has one queue.
pub fn rx_queues(interface: &str) -> Result<u32, BpfError> {
    let sys = |what: &'static str| move |source| BpfError::Socket { what, source };
    if interface.is_empty() || interface.len() > 15 || interface.contains('\0') {
        return Err(sys("interface name")(io::Error::from(
            io::ErrorKind::InvalidInput,
        )));
    }
    // SAFETY: plain socket creation, checked below.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(sys("a socket for ethtool")(io::Error::last_os_error()));
    }
    // SAFETY: a fresh descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut ch = EthtoolChannels {
        cmd: ETHTOOL_GCHANNELS,
        ..EthtoolChannels::default()
    };
    // SAFETY: all-zero is a valid ifreq.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(interface.bytes()) {
        *d = s as libc::c_char;
    }
    req.ifr_ifru.ifru_data = (&mut ch as *mut EthtoolChannels).cast();
    // SAFETY: `req` names the interface and points to `ch`, which the
    // kernel fills; both outlive the call.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), SIOCETHTOOL as _, &mut req) };
    if r != 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) => Ok(1),
            Some(libc::ENODEV) => Err(sys("no such interface")(e)),
            _ => Err(sys("reading the interface's channels (ETHTOOL_GCHANNELS)")(
                e,
            )),
        };
    }
    Ok((ch.rx_count + ch.combined_count).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interface_without_channels_has_one_queue_and_a_missing_one_is_an_error() {
        assert_eq!(rx_queues("lo").unwrap(), 1);
        let e = rx_queues("fwb-no-such0").unwrap_err().to_string();
        assert!(e.starts_with("AF_XDP socket: no such interface"), "{e}");
        assert!(rx_queues("").is_err());
        assert!(rx_queues("sixteen-bytes-nm").is_err());
    }
}
