//! The limits of a policy file on totals that each value alone cannot
//! show: flows over all `[[flow]]` tables, buckets over all queues, packet
//! slots, depth. Each is checked before anything of that size is
//! allocated, and each error says the limit and why it exists.

/// Most flows of one file, over all `[[flow]]` tables and their `count`
/// (2^22), 16x the Eiffel paper's largest experiment (256k pFabric
/// flows). Each flow is a name, a spec, an entity, a FIFO and a handle in
/// its parent's queue and in the shaper: about 400 bytes while the file is
/// checked and its tree built, 1.7 GB at the limit.
pub const MAX_FLOWS: u32 = 1 << 22;

/// Most queue buckets of one file, over every node's queue (given or
/// default), hClock's reservation queues and the shaper (2^24). Each
/// bucket reserves 64 bytes of memory for its first chunk and writes 16
/// or more: 1 GiB reserved and ~270 MB written at the limit.
pub const MAX_TOTAL_BUCKETS: u32 = 1 << 24;

/// Most packet slots (`max_packets`, 2^24, as the C ABI): every slot is
/// allocated when the tree is built, 32 bytes each: 512 MiB at the limit.
pub const MAX_PACKETS: u32 = 1 << 24;

/// Deepest tree: levels of nodes from the root down (the root is level
/// 1), the tree's own limit ([`fairway_core::policy::MAX_DEPTH`]): every
/// packet walks from its flow to the root on enqueue and again on dequeue,
/// so each level costs every packet; no policy of the papers needs more
/// than 3.
pub const MAX_DEPTH: u32 = fairway_core::policy::MAX_DEPTH;

/// Longest packet, bytes (the tree's own limit).
pub const MAX_PACKET_LEN: u32 = 1 << 16;

/// Why [`MAX_FLOWS`] exists, for messages.
pub(crate) const FLOWS_WHY: &str =
    "each flow costs ~400 bytes, allocated when the file is checked and its tree built";
/// Why [`MAX_TOTAL_BUCKETS`] exists, for messages.
pub(crate) const BUCKETS_WHY: &str =
    "each bucket reserves 64 bytes when its queue is built; give smaller queues";
/// Why [`MAX_PACKETS`] exists, for messages.
pub(crate) const PACKETS_WHY: &str =
    "every slot is allocated when the tree is built, 32 bytes each";
