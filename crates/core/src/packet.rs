//! The packet abstraction: schedulers only need a packet's length.

/// Anything a scheduler can queue. Only the length (in bytes) is read; the
/// payload is never touched, so a packet can be an index, a descriptor or a
/// real buffer.
#[allow(clippy::len_without_is_empty)] // a packet is never empty; see EnqueueErrorKind::EmptyPacket
pub trait Packet {
    /// Length of the packet in bytes. Must not change while queued.
    fn len(&self) -> u32;
}

/// A bare length is a packet: handy in tests and benchmarks.
impl Packet for u32 {
    #[inline]
    fn len(&self) -> u32 {
        *self
    }
}

impl<T: Packet + ?Sized> Packet for alloc::boxed::Box<T> {
    #[inline]
    fn len(&self) -> u32 {
        (**self).len()
    }
}

/// A byte buffer is a packet of its own length. Buffers longer than
/// `u32::MAX` bytes report `u32::MAX`, which every scheduler refuses as
/// longer than its flow's maximum (`EnqueueErrorKind::PacketTooLong`), so no
/// length is ever silently shortened into an accepted one.
impl Packet for [u8] {
    #[inline]
    fn len(&self) -> u32 {
        u32::try_from(<[u8]>::len(self)).unwrap_or(u32::MAX)
    }
}

/// An owned byte buffer: see the `[u8]` implementation.
impl Packet for alloc::vec::Vec<u8> {
    #[inline]
    fn len(&self) -> u32 {
        Packet::len(self.as_slice())
    }
}

/// A `bytes::Bytes` buffer (feature `bytes`): see the `[u8]` implementation.
#[cfg(feature = "bytes")]
impl Packet for bytes::Bytes {
    #[inline]
    fn len(&self) -> u32 {
        Packet::len(&self[..])
    }
}

#[cfg(test)]
mod tests {
    use super::Packet;
    use alloc::{boxed::Box, vec, vec::Vec};

    #[test]
    fn byte_buffers_are_packets_of_their_length() {
        let v: Vec<u8> = vec![0; 1500];
        assert_eq!(Packet::len(&v), 1500);
        let b: Box<[u8]> = vec![0u8; 64].into_boxed_slice();
        assert_eq!(Packet::len(&b), 64);
        assert_eq!(Packet::len(&b"abc"[..]), 3);
    }

    #[cfg(feature = "bytes")]
    #[test]
    fn bytes_buffers_are_packets() {
        assert_eq!(Packet::len(&bytes::Bytes::from_static(&[1, 2, 3, 4])), 4);
    }
}
