//! Transmit back-ends: where `drain()` hands granted packets (the PSPAT paper §3,
//! "the delivery of packets to the NIC ... is left to the clients").
//!
//! [`NullBackend`] is the "no-op transmit" of the PSPAT paper §5.4 / Fig. 7,
//! [`CountingBackend`] counts packets and bytes, [`UdpBackend`] sends each
//! packet's bytes as one datagram (loopback in the tests), and
//! [`FailingBackend`] fails its sends on command (fault tests).
//!
//! A send that fails (socket error, full buffer) is reported by
//! [`Backend::try_transmit`]; the client's drain counts it
//! (`ClientStats::send_failed`, and the runtime's accounts) and drops the
//! packet: its grant already spent its share of the link, and sending it
//! later would break the schedule. A failure is never silent.

use fairway_core::Packet;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Something that transmits granted packets.
pub trait Backend<P> {
    /// Transmits (or consumes) one granted packet.
    fn transmit(&mut self, packet: P);

    /// Transmits one granted packet and says whether it was sent; what the
    /// client's drain calls. Back-ends whose send can fail override it; the
    /// default calls [`Backend::transmit`] and reports success. (Back-ends
    /// that send in [`Backend::flush`] count those failures themselves.)
    #[inline]
    fn try_transmit(&mut self, packet: P) -> io::Result<()> {
        self.transmit(packet);
        Ok(())
    }

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
        let _ = self.try_transmit(packet);
    }

    fn try_transmit(&mut self, packet: P) -> io::Result<()> {
        match self.socket.send(packet.as_ref()) {
            Ok(_) => {
                self.sent += 1;
                Ok(())
            }
            Err(e) => {
                self.errors += 1;
                Err(e)
            }
        }
    }
}

/// Wraps a back-end and fails every send while its switch is on, as a full
/// socket buffer would (`WouldBlock`): the fault tests' back-end. The
/// switch ([`FailingBackend::switch`]) can be flipped from another thread.
#[derive(Debug)]
pub struct FailingBackend<B> {
    /// The back-end that sends while the switch is off.
    pub inner: B,
    fail: Arc<AtomicBool>,
    /// Sends refused so far.
    pub failed: u64,
}

impl<B> FailingBackend<B> {
    /// `inner`, with the switch off.
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            fail: Arc::new(AtomicBool::new(false)),
            failed: 0,
        }
    }

    /// The switch: `store(true)` makes every send fail until `store(false)`.
    pub fn switch(&self) -> Arc<AtomicBool> {
        self.fail.clone()
    }
}

impl<P, B: Backend<P>> Backend<P> for FailingBackend<B> {
    fn transmit(&mut self, packet: P) {
        let _ = self.try_transmit(packet);
    }

    fn try_transmit(&mut self, packet: P) -> io::Result<()> {
        if self.fail.load(Ordering::Relaxed) {
            self.failed += 1;
            drop(packet);
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "send failure injected by FailingBackend",
            ));
        }
        self.inner.try_transmit(packet)
    }

    fn flush(&mut self) {
        self.inner.flush();
    }
}
