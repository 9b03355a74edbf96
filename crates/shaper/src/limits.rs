//! The sizes a configuration may have. Each bounds what a file can make
//! the checker (and later the shaper, which gives every circuit queues in
//! both directions) allocate, and is checked before the memory is taken:
//! a file is read only if its size is within its limit, and a reader
//! stops at the first element past a count. Large deployments must work:
//! 10,000 circuits are a tenth of the circuit limit.

/// Largest ShapedDevices.csv, bytes (100,000 circuits of several
/// devices with long names and address lists fit).
pub const MAX_CSV_BYTES: u64 = 64 << 20;
/// Largest network.json, bytes.
pub const MAX_JSON_BYTES: u64 = 16 << 20;
/// Largest shaper file (TOML), bytes.
pub const MAX_TOML_BYTES: u64 = 16 << 20;
/// Most inner nodes.
pub const MAX_NODES: usize = 10_000;
/// Most circuits.
pub const MAX_CIRCUITS: usize = 100_000;
/// Most devices.
pub const MAX_DEVICES: usize = 400_000;
/// Most prefixes of one device.
pub const MAX_PREFIXES_PER_DEVICE: usize = 256;
/// Most classifier rules (tried in order, so every frame may try them
/// all).
pub const MAX_RULES: usize = 10_000;
/// Deepest node (the root's children are at depth 1): the data path
/// walks a frame's path to the root on every dequeue.
pub const MAX_DEPTH: usize = 32;
