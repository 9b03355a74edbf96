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
