//! The frame pool: every frame the shaper holds lives in one of a fixed
//! number of fixed-size slots, allocated at start. A queued frame is a
//! [`FrameRef`] (slot and length), so queueing never copies or
//! allocates; a frame is received straight into a free slot (or copied
//! there from the receive ring, which must not be held while a frame
//! waits for its turn: see [`super::ring`]).
//!
//! A slot holds the longest frame the interfaces can carry: their MTU
//! plus [`FRAME_OVERHEAD`] (an Ethernet header and two VLAN tags, one of
//! which the kernel may have stripped and the shaper puts back), rounded
//! up to [`SLOT_ALIGN`]. Jumbo frames take larger slots; the pool's
//! memory is checked against [`MAX_POOL_BYTES`] before it is allocated.

use fairway_core::Packet;
use std::fmt;

/// Bytes a frame may carry beyond its interface's MTU: the Ethernet
/// header (14) and two VLAN tags (4 each, 802.1ad with an inner 802.1Q).
pub const FRAME_OVERHEAD: usize = 22;
/// Slot sizes are rounded up to cache lines.
pub const SLOT_ALIGN: usize = 64;
/// The MTU the pool is sized for when no interface gives one (tests,
/// simulations): Ethernet's 1500.
pub const DEFAULT_MTU: u32 = 1500;
/// The most memory the frame pool may take, bytes: it is allocated whole
/// at start, next to the queues (at most 4 GiB), on a machine that also
/// runs the kernel's own buffers; 1 GiB holds 16,384 frames of a
/// 65,535-byte MTU less a few, and of any jumbo MTU (9,000 to 16,000).
pub const MAX_POOL_BYTES: u64 = 1 << 30;

/// The pool cannot be allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolError {
    /// Slots asked for.
    pub slots: u32,
    /// The MTU the slots were sized for.
    pub mtu: u32,
    /// Bytes of one slot.
    pub slot_bytes: usize,
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = u64::from(self.slots) * self.slot_bytes as u64;
        write!(
            f,
            "the frame pool would take {total} bytes ({} slots of {} bytes for an MTU of {}), \
             above the limit of {MAX_POOL_BYTES} bytes (it is allocated whole at start)",
            self.slots, self.slot_bytes, self.mtu
        )
    }
}

impl std::error::Error for PoolError {}

/// The longest frame an interface of `mtu` carries, tags included.
pub fn max_frame(mtu: u32) -> usize {
    mtu as usize + FRAME_OVERHEAD
}

/// Bytes of a slot for frames of at most `max_frame` bytes.
pub fn slot_bytes(max_frame: usize) -> usize {
    max_frame.div_ceil(SLOT_ALIGN) * SLOT_ALIGN
}

/// A frame in the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRef {
    /// Its slot.
    pub slot: u32,
    /// Its length, bytes (1..=the pool's [`Pool::max_frame`]).
    pub len: u32,
}

impl Packet for FrameRef {
    fn len(&self) -> u32 {
        self.len
    }
}

/// Slots and the free list.
pub struct Pool {
    bytes: Vec<u8>,
    free: Vec<u32>,
    slot: usize,
    max_frame: usize,
}

impl Pool {
    /// `slots` slots for frames of interfaces of `mtu` (the caller checks
    /// `slots` against its limit before); refused, before anything is
    /// allocated, if they would take more than [`MAX_POOL_BYTES`].
    pub fn new(slots: u32, mtu: u32) -> Result<Self, PoolError> {
        let max_frame = max_frame(mtu);
        let slot = slot_bytes(max_frame);
        if u64::from(slots) * slot as u64 > MAX_POOL_BYTES {
            return Err(PoolError {
                slots,
                mtu,
                slot_bytes: slot,
            });
        }
        Ok(Pool {
            bytes: vec![0; slots as usize * slot],
            free: (0..slots).rev().collect(),
            slot,
            max_frame,
        })
    }

    /// The longest frame kept: longer ones are dropped as too large.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Bytes of a slot (at least [`Self::max_frame`]).
    pub fn slot_bytes(&self) -> usize {
        self.slot
    }

    /// A free slot, if any.
    pub fn take(&mut self) -> Option<u32> {
        self.free.pop()
    }

    /// Returns a slot (never more than were taken, so no allocation).
    pub fn give(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Free slots.
    pub fn free(&self) -> usize {
        self.free.len()
    }

    /// A slot's bytes.
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let at = slot as usize * self.slot;
        &mut self.bytes[at..at + self.slot]
    }

    /// A frame's bytes.
    pub fn frame(&self, f: FrameRef) -> &[u8] {
        let at = f.slot as usize * self.slot;
        &self.bytes[at..at + f.len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_the_mtu_with_an_ethernet_header_and_two_tags() {
        assert_eq!(max_frame(1500), 1522);
        assert_eq!(slot_bytes(1522), 1536);
        assert_eq!(slot_bytes(1536), 1536);
        let p = Pool::new(4, 9000).unwrap();
        assert_eq!(p.max_frame(), 9022);
        assert_eq!(p.slot_bytes(), 9024);
        let mut p = Pool::new(2, 9216).unwrap();
        let s = p.take().unwrap();
        assert_eq!(p.slot_mut(s).len(), 9280);
    }

    #[test]
    fn a_pool_above_the_limit_is_refused_before_allocation() {
        // 16,384 slots of a 65,535-byte MTU: 65,600 bytes each, 1 GiB + 1 MiB.
        let e = Pool::new(16_384, 65_535).err().expect("refused");
        assert_eq!(e.slot_bytes, 65_600);
        let msg = e.to_string();
        assert!(msg.contains("1074790400 bytes"), "{msg}");
        assert!(msg.contains("limit of 1073741824"), "{msg}");
        assert!(msg.contains("MTU of 65535"), "{msg}");
        assert!(!msg.contains('\n'));
    }
}
