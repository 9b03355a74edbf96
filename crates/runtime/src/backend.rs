//! Transmit back-ends: where `drain()` hands granted packets (seed 001 §3,
//! "the delivery of packets to the NIC ... is left to the clients").
//!
//! [`NullBackend`] is the "no-op transmit" of seed 001 §5.4 / Fig. 7,
//! [`CountingBackend`] counts packets and bytes, [`UdpBackend`] sends each
//! packet's bytes as one datagram (loopback in the tests).

use fairway_core::Packet;
use std::io;
use std::net::{SocketAddr, UdpSocket};

/// Something that transmits granted packets.
pub trait Backend<P> {
    /// Transmits (or consumes) one granted packet.
    fn transmit(&mut self, packet: P);

    /// Called at the end of each `drain()` that transmitted something, for
    /// back-ends that batch.
    fn flush(&mut self) {}
}

/// Drops every packet: measures the scheduler alone (no-op transmit).
#[derive(Clone, Copy, Debug, Default)]
pub struct NullBackend;

impl<P> Backend<P> for NullBackend {
    #[inline]
    fn transmit(&mut self, packet: P) {
        drop(packet);
    }
}

/// Counts packets and bytes, then drops them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountingBackend {
    /// Packets transmitted.
    pub packets: u64,
    /// Bytes transmitted (sum of `Packet::len`).
    pub bytes: u64,
}

impl<P: Packet> Backend<P> for CountingBackend {
    #[inline]
    fn transmit(&mut self, packet: P) {
        self.packets += 1;
        self.bytes += packet.len() as u64;
    }
}

/// Sends each packet's bytes as one UDP datagram to a fixed peer.
#[derive(Debug)]
pub struct UdpBackend {
    socket: UdpSocket,
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams the socket refused (e.g. `ENOBUFS`); counted, not retried.
    pub errors: u64,
}

impl UdpBackend {
    /// A socket bound to an ephemeral port, connected to `peer`.
    pub fn connect(peer: SocketAddr) -> io::Result<Self> {
        let local: SocketAddr = if peer.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let socket = UdpSocket::bind(local)?;
        socket.connect(peer)?;
        Ok(Self {
            socket,
            sent: 0,
            errors: 0,
        })
    }
}

impl<P: AsRef<[u8]>> Backend<P> for UdpBackend {
    fn transmit(&mut self, packet: P) {
        match self.socket.send(packet.as_ref()) {
            Ok(_) => self.sent += 1,
            Err(_) => self.errors += 1,
        }
    }
}
