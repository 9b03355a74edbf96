//! A client's socket, whichever transport the trial uses (the PSPAT paper §5.2:
//! one socket per client), and how a trial opens one per client inside the
//! testbed's sender namespace.
//!
//! Both the client threads and the dispatcher
//! ([`super::dispatcher`]) transmit through a [`Sender`].

use super::spec::Transport;
use crate::testbed::{Testbed, TestbedError, RECEIVER_IP, RECEIVER_MAC, SENDER_IP, SENDER_MAC};
use fairway_runtime::net::{
    Datagram, FrameAddrs, PacketSender, RingSender, SendCounters, SendDelays, UdpSender,
};
use fairway_runtime::Backend;
use hdrhistogram::Histogram;
use std::net::SocketAddr;
use std::time::Duration;

/// How long a socket send may block on a full socket buffer.
const SEND_TIMEOUT: Duration = Duration::from_millis(100);

/// A client's socket, any kind.
pub(super) enum Sender {
    Udp(UdpSender),
    Packet(PacketSender),
    Ring(RingSender),
}

impl Sender {
    pub(super) fn send_now(&mut self, d: &[Datagram]) {
        match self {
            Sender::Udp(s) => s.send_now(d),
            Sender::Packet(s) => s.send_now(d),
            Sender::Ring(s) => s.send_now(d),
        }
    }
    /// The final counters (the ring first waits for the kernel to take its
    /// last frames).
    pub(super) fn finish(&mut self) -> SendCounters {
        match self {
            Sender::Udp(s) => s.counters(),
            Sender::Packet(s) => s.counters(),
            Sender::Ring(s) => s.finish(),
        }
    }
    /// Records the submit → send delays from now on, whichever socket.
    pub(super) fn record_delays(&mut self) {
        match self {
            Sender::Udp(s) => s.record_delays(),
            Sender::Packet(s) => s.record_delays(),
            Sender::Ring(s) => s.record_delays(),
        }
    }
    fn send_delays(&self) -> Option<&SendDelays> {
        match self {
            Sender::Udp(s) => s.delays(),
            Sender::Packet(s) => s.delays(),
            Sender::Ring(s) => s.delays(),
        }
    }
    /// Submit → send call returned, ns, if recorded.
    pub(super) fn delays(&self) -> Option<&Histogram<u64>> {
        self.send_delays().map(SendDelays::done)
    }
    /// Submit → send call started, ns, if recorded.
    pub(super) fn call_delays(&self) -> Option<&Histogram<u64>> {
        self.send_delays().map(SendDelays::call)
    }
}

impl Backend<Datagram> for Sender {
    #[inline]
    fn transmit(&mut self, p: Datagram) {
        match self {
            Sender::Udp(s) => s.transmit(p),
            Sender::Packet(s) => s.transmit(p),
            Sender::Ring(s) => s.transmit(p),
        }
    }
    fn flush(&mut self) {
        match self {
            Sender::Udp(s) => s.flush(),
            Sender::Packet(s) => s.flush(),
            Sender::Ring(s) => s.flush(),
        }
    }
}

/// How the senders of one trial are opened.
pub(super) struct SenderSetup {
    /// UDP sockets or raw frames.
    pub(super) transport: Transport,
    /// Datagrams per send call.
    pub(super) batch: usize,
    /// Tag each client's packets with its HTB class (`tc`).
    pub(super) htb: bool,
    /// Raw frames skip the qdisc.
    pub(super) bypass: bool,
}

/// Opens one sender per receiver address in `addrs` (client i sends to
/// `addrs[i]`) inside the testbed's sender namespace. The outer error is
/// the testbed's (entering the namespace), the inner one the sockets'.
pub(super) fn open_senders(
    tb: &Testbed,
    setup: &SenderSetup,
    addrs: &[SocketAddr],
) -> Result<std::io::Result<Vec<Sender>>, TestbedError> {
    let ifindex = match setup.transport {
        Transport::AfPacket | Transport::AfPacketRing => Some(tb.sender_ifindex()?),
        Transport::Udp => None,
    };
    let (transport, batch, bypass) = (setup.transport, setup.batch, setup.bypass);
    let htb = setup.htb;
    tb.in_sender_ns(|| {
        addrs
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let prio = htb.then(|| Testbed::htb_priority(i));
                let frame = FrameAddrs {
                    src_mac: SENDER_MAC,
                    dst_mac: RECEIVER_MAC,
                    src_ip: SENDER_IP,
                    dst_ip: RECEIVER_IP,
                    src_port: 30_000u16.wrapping_add(i as u16),
                    dst_port: a.port(),
                };
                match (transport, ifindex) {
                    (Transport::AfPacket, Some(ix)) => {
                        let mut s = PacketSender::open(ix, frame, batch, prio)?;
                        if bypass {
                            s.bypass_qdisc()?;
                        }
                        Ok(Sender::Packet(s))
                    }
                    (Transport::AfPacketRing, Some(ix)) => {
                        let mut s = RingSender::open(ix, frame, batch, prio, SEND_TIMEOUT)?;
                        if bypass {
                            s.bypass_qdisc()?;
                        }
                        Ok(Sender::Ring(s))
                    }
                    _ => UdpSender::connect(*a, batch, prio, SEND_TIMEOUT).map(Sender::Udp),
                }
            })
            .collect::<Result<Vec<_>, _>>()
    })
}
