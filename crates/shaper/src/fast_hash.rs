//! The hash maps of a configuration's names, ids and addresses.
//!
//! Why not the standard library's SipHash: a reload hashes every name of
//! the plan several times (the check's uniqueness, the comparison with
//! the running plan, the tree's edit lists), about a tenth of its CPU at
//! 10,000 circuits with SipHash. The keys come from the operator's own
//! files, never from traffic, so a hasher built to resist chosen keys
//! buys nothing here; foldhash (hashbrown's default, seeded per process)
//! is several times faster on short keys.

use std::collections::{HashMap, HashSet};

/// A hash map keyed by a configuration's names or numbers.
pub type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A hash set of a configuration's names or numbers.
pub type Set<K> = HashSet<K, foldhash::fast::RandomState>;

/// An empty [`Map`] with room for `n` entries.
pub fn map_with_capacity<K, V>(n: usize) -> Map<K, V> {
    Map::with_capacity_and_hasher(n, Default::default())
}
