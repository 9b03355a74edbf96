//! The test packet: a 60-byte Ethernet frame (the PSPAT paper §5.2: "60 byte
//! packets (including MAC headers)"), i.e. 14 bytes of Ethernet, 20 of
//! IPv4 and 8 of UDP headers around an 18-byte payload:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | submit time, ns of `CLOCK_MONOTONIC`, little endian |
//! | 8..16 | sequence number within the flow |
//! | 16..18 | flow (client) index |
//!
//! The submit time is written when the client hands the packet to its
//! scheduler (`none`/`tc`: the socket; `fairway`: the client queue), so the
//! receiver's one-way delay includes the scheduling (§5.5: "marked with a
//! TSC timestamp when they are submitted to the scheduler"). Sender and
//! receiver run on the same host, so they read the same clock.

use fairway_core::Packet;
use nix::time::{clock_gettime, ClockId};

/// Bytes of Ethernet + IPv4 + UDP headers in front of the payload.
pub const HEADER_LEN: u32 = 14 + 20 + 8;
/// Bytes of UDP payload.
pub const PAYLOAD_LEN: usize = 18;
/// Bytes of the whole frame as the scheduler and the link count it.
pub const FRAME_LEN: u32 = HEADER_LEN + PAYLOAD_LEN as u32;

/// Nanoseconds of `CLOCK_MONOTONIC` (a vDSO call, no system call).
#[inline]
pub fn monotonic_ns() -> u64 {
    // CLOCK_MONOTONIC cannot fail on Linux; 0 would only make one delay
    // look huge, never lose a packet.
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// One test packet: its UDP payload. Its scheduling length is the whole
/// frame, [`FRAME_LEN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// The UDP payload.
    pub payload: [u8; PAYLOAD_LEN],
}

impl Datagram {
    /// A packet of `flow`, number `seq`, submitted at `submit_ns`.
    #[inline]
    pub fn new(flow: u16, seq: u64, submit_ns: u64) -> Self {
        let mut payload = [0u8; PAYLOAD_LEN];
        payload[0..8].copy_from_slice(&submit_ns.to_le_bytes());
        payload[8..16].copy_from_slice(&seq.to_le_bytes());
        payload[16..18].copy_from_slice(&flow.to_le_bytes());
        Self { payload }
    }

    /// Parses a received payload; `None` if it is not one of ours (wrong
    /// length).
    #[inline]
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let payload: [u8; PAYLOAD_LEN] = bytes.try_into().ok()?;
        Some(Self { payload })
    }

    /// The submit time, ns of `CLOCK_MONOTONIC`.
    #[inline]
    pub fn submit_ns(&self) -> u64 {
        u64::from_le_bytes(self.payload[0..8].try_into().unwrap_or([0; 8]))
    }

    /// The sequence number within the flow.
    #[inline]
    pub fn seq(&self) -> u64 {
        u64::from_le_bytes(self.payload[8..16].try_into().unwrap_or([0; 8]))
    }

    /// The flow (client) index.
    #[inline]
    pub fn flow(&self) -> u16 {
        u16::from_le_bytes([self.payload[16], self.payload[17]])
    }
}

impl Packet for Datagram {
    #[inline]
    fn len(&self) -> u32 {
        FRAME_LEN
    }
}

impl AsRef<[u8]> for Datagram {
    fn as_ref(&self) -> &[u8] {
        &self.payload
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_the_frame_is_60_bytes() {
        let d = Datagram::new(7, 123_456_789_012, 987_654_321);
        let back = Datagram::parse(d.as_ref()).unwrap();
        assert_eq!(
            (back.flow(), back.seq(), back.submit_ns()),
            (7, 123_456_789_012, 987_654_321)
        );
        assert_eq!(d.len(), 60);
        assert!(Datagram::parse(&[0u8; 17]).is_none());
        let (a, b) = (monotonic_ns(), monotonic_ns());
        assert!(a > 0 && b >= a);
    }
}
