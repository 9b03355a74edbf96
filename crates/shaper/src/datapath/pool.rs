//! The frame pool: every frame the shaper holds lives in one of a fixed
//! number of fixed-size slots, allocated at start. A queued frame is a
//! [`FrameRef`] (slot and length), so queueing never copies or
//! allocates; a frame is received straight into a free slot.

use fairway_core::Packet;

/// Bytes of one slot: a 1500-byte MTU frame with two VLAN tags fits
/// (1522), with room to restore a tag the kernel stripped. Frames longer
/// than a slot are dropped as too large (jumbo frames are not shaped yet).
pub const SLOT_BYTES: usize = 2048;

/// A frame in the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRef {
    /// Its slot.
    pub slot: u32,
    /// Its length, bytes (1..=SLOT_BYTES).
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
}

impl Pool {
    /// `slots` slots of [`SLOT_BYTES`] (the caller checks `slots` against
    /// its limit before).
    pub fn new(slots: u32) -> Self {
        Pool {
            bytes: vec![0; slots as usize * SLOT_BYTES],
            free: (0..slots).rev().collect(),
        }
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
        let at = slot as usize * SLOT_BYTES;
        &mut self.bytes[at..at + SLOT_BYTES]
    }

    /// A frame's bytes.
    pub fn frame(&self, f: FrameRef) -> &[u8] {
        let at = f.slot as usize * SLOT_BYTES;
        &self.bytes[at..at + f.len as usize]
    }
}
