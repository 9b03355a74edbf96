//! Exact gradient queue (the Eiffel paper §3.1.2, Theorem 1 in its Appendix A).
//!
//! Each node of a 32-ary tree keeps the curvature coefficients of its
//! children: `a = Σ 2^i` and `b = Σ i·2^i` over the non-empty children, where
//! child position `p` (0 = lowest rank) has weight index `i = 31 - p`, so the
//! *maximum* non-empty index — which Theorem 1 locates at `⌈b / a⌉` — is the
//! *minimum* rank. Maintaining a node is an add or subtract of precomputed
//! constants when a child turns non-empty or empty; a lookup evaluates
//! `⌈b / a⌉` once per level, O(log_32 N) (the Eiffel paper: "an equivalent of
//! FFS-based queue with more expensive operations").
//!
//! How `⌈b / a⌉` is evaluated: it is the unique integer `q` with
//! `(q - 1)·a < b ≤ q·a`. The candidate `q` is the index of `a`'s highest
//! set bit (one leading-zero count: `a < 2^(q+1)` and `a ≥ 2^q`, which is
//! where Theorem 1 says the quotient lands), and two multiplications check
//! the bracket; a failed check (impossible by Theorem 1) falls back to an
//! integer division. The result is exact with integers only. It replaced
//! an `f64` division whose ~13-cycle latency sat on the dependency chain of
//! every extract that emptied a bucket (the division's result is the next
//! bucket to read), which also needed a look-ahead division to hide it.
//! With `w = 32`, `a < 2^32` and `b < 2^37`, so the products fit in `u64`.
//! (Eiffel's kernel gradient queue also uses 32-wide nodes.)

use super::bucket_lists::BucketLists;
use super::{IntegerPriorityQueue, PqError};
use alloc::vec;
use alloc::vec::Vec;

/// Children per node.
const WIDTH: usize = 32;
/// 32^7 > u32::MAX.
const MAX_LEVELS: usize = 7;

/// Curvature coefficients of one node.
#[derive(Clone, Copy, Default)]
struct Curvature {
    a: u64,
    b: u64,
}

/// Weight terms `(2^i, i·2^i)` of child position `p`, with `i = 31 - p`.
#[inline]
fn term(p: usize) -> Curvature {
    let i = (WIDTH - 1 - p) as u64;
    Curvature {
        a: 1 << i,
        b: i << i,
    }
}

/// Theorem 1: the highest non-empty weight index is `⌈b / a⌉`; returns the
/// child position (lowest rank). `c.a` must be non-zero.
///
/// `⌈b / a⌉` is the `q` with `(q - 1)·a < b ≤ q·a`; the candidate is the
/// highest set bit of `a` (see the module doc), confirmed by the bracket
/// (`b + a > q·a` is the left side without a signed `q - 1`). The checks
/// are off the critical path: the candidate does not wait for them, and
/// the branch is always taken the same way.
#[inline(always)]
fn critical_point(c: Curvature) -> usize {
    let q = u64::from(63 - c.a.leading_zeros());
    let qa = q * c.a;
    let q = if c.b <= qa && c.b + c.a > qa {
        q
    } else {
        ceil_div_fallback(c)
    };
    WIDTH - 1 - q as usize
}

/// `⌈b / a⌉` by integer division; unreachable while Theorem 1 holds.
#[cold]
#[inline(never)]
fn ceil_div_fallback(c: Curvature) -> u64 {
    debug_assert!(false, "Theorem 1 violated");
    c.b.div_ceil(c.a)
}

/// A 32-ary tree of curvature functions over `0..buckets`.
///
/// A node's `a` and `b` sit side by side (one bounds check per node) and
/// are read and written as scalars: a 16-byte `(a, b)` reload right after
/// the two 8-byte stores of an update cannot be store-forwarded, which
/// stalled every extract that emptied a bucket.
struct GradientTree {
    nodes: Vec<Curvature>,
    /// `offsets[0]` is the level just above the buckets.
    offsets: [usize; MAX_LEVELS],
    depth: usize,
}

impl GradientTree {
    fn new(buckets: u32) -> Self {
        let mut offsets = [0; MAX_LEVELS];
        let mut total = 0;
        let mut depth = 0;
        let mut width = buckets.max(1) as usize;
        loop {
            offsets[depth] = total;
            depth += 1;
            width = width.div_ceil(WIDTH);
            total += width;
            if width == 1 {
                break;
            }
        }
        Self {
            nodes: vec![Curvature::default(); total],
            offsets,
            depth,
        }
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.nodes[self.offsets[self.depth - 1]].a == 0
    }

    /// Adds bucket `i`'s weight; climbs while nodes turn non-empty.
    #[inline(always)]
    fn mark_nonempty(&mut self, i: u32) {
        // Level 0 (offset 0) inline; climbing is rarer and out of line.
        let t = term(i as usize % WIDTH);
        let n = i as usize / WIDTH;
        let node = &mut self.nodes[n];
        let was_empty = node.a == 0;
        node.a += t.a;
        node.b += t.b;
        if was_empty && self.depth > 1 {
            self.mark_nonempty_upper(n);
        }
    }

    #[inline(never)]
    fn mark_nonempty_upper(&mut self, mut i: usize) {
        for level in 1..self.depth {
            let t = term(i % WIDTH);
            let node = &mut self.nodes[self.offsets[level] + i / WIDTH];
            let was_empty = node.a == 0;
            node.a += t.a;
            node.b += t.b;
            if !was_empty {
                break;
            }
            i /= WIDTH;
        }
    }

    /// Subtracts bucket `i`'s weight; climbs while nodes turn empty.
    #[inline(always)]
    fn mark_empty(&mut self, i: u32) {
        let t = term(i as usize % WIDTH);
        let n = i as usize / WIDTH;
        let node = &mut self.nodes[n];
        node.a -= t.a;
        node.b -= t.b;
        if node.a == 0 && self.depth > 1 {
            self.mark_empty_upper(n);
        }
    }

    #[inline(never)]
    fn mark_empty_upper(&mut self, mut i: usize) {
        for level in 1..self.depth {
            let t = term(i % WIDTH);
            let node = &mut self.nodes[self.offsets[level] + i / WIDTH];
            node.a -= t.a;
            node.b -= t.b;
            if node.a != 0 {
                break;
            }
            i /= WIDTH;
        }
    }

    #[inline(always)]
    fn node(&self, n: usize) -> Curvature {
        let node = &self.nodes[n];
        Curvature {
            a: node.a,
            b: node.b,
        }
    }

    /// Lowest non-empty bucket, given that none is below `from`: the
    /// critical point of `from`'s leaf node if that node is still
    /// non-empty, else [`Self::first`].
    #[inline(always)]
    fn first_from(&self, from: u32) -> Option<u32> {
        let leaf = from as usize / WIDTH;
        let node = self.node(leaf); // level 0 is at offset 0
        if node.a != 0 {
            Some((leaf * WIDTH + critical_point(node)) as u32)
        } else {
            self.first()
        }
    }

    /// Marks bucket `i`, the lowest non-empty one, empty and returns the
    /// new lowest: [`Self::mark_empty`] then [`Self::first_from`], with the
    /// leaf node's new `(a, b)` taken from the subtraction instead of
    /// reloaded.
    #[inline(always)]
    fn clear_min(&mut self, i: u32) -> Option<u32> {
        let t = term(i as usize % WIDTH);
        let n = i as usize / WIDTH;
        let slot = &mut self.nodes[n];
        let node = Curvature {
            a: slot.a - t.a,
            b: slot.b - t.b,
        };
        slot.a = node.a;
        slot.b = node.b;
        if node.a != 0 {
            return Some((n * WIDTH + critical_point(node)) as u32);
        }
        if self.depth > 1 {
            self.mark_empty_upper(n);
        }
        self.first()
    }

    /// Lowest non-empty bucket: one critical point per level.
    #[inline]
    fn first(&self) -> Option<u32> {
        let mut idx = 0usize;
        let mut level = self.depth;
        while level > 0 {
            level -= 1;
            let node = self.node(self.offsets[level] + idx);
            if node.a == 0 {
                return None; // only possible at the root
            }
            idx = idx * WIDTH + critical_point(node);
        }
        Some(idx as u32)
    }
}

/// Exact hierarchical gradient queue over ranks `base..base + buckets`.
/// # Examples
///
/// ```
/// use fairway_core::pq::{GradientQueue, IntegerPriorityQueue};
///
/// // Ranks 100..10100, handles 0..8.
/// let mut q = GradientQueue::new(100, 10_000, 8).unwrap();
/// q.insert(5, 130).unwrap();
/// q.insert(2, 110).unwrap();
/// q.insert(7, 110).unwrap(); // same bucket as handle 2: FIFO order
/// assert!(q.insert(5, 120).is_err()); // handle 5 is already queued
/// assert!(q.remove(5)); // O(1), by handle
/// assert_eq!(q.extract_min(), Some((2, 110)));
/// assert_eq!(q.extract_min(), Some((7, 110)));
/// assert!(q.is_empty());
/// ```
pub struct GradientQueue {
    lists: BucketLists,
    tree: GradientTree,
    base: u64,
    /// The minimum non-empty bucket (`u32::MAX` when empty): lowered by
    /// inserts; only the operation that empties it evaluates `⌈b/a⌉` again.
    cur: u32,
}

impl GradientQueue {
    /// A queue for ranks `base..base + buckets` and handles `0..capacity`.
    pub fn new(base: u64, buckets: u32, capacity: u32) -> Result<Self, PqError> {
        if buckets == 0 || base.checked_add(u64::from(buckets)).is_none() {
            return Err(PqError::InvalidConfig(
                "buckets must be >= 1 and base + buckets must fit in u64",
            ));
        }
        Ok(Self {
            lists: BucketLists::new(buckets, capacity)?,
            tree: GradientTree::new(buckets),
            base,
            cur: u32::MAX,
        })
    }

    /// Levels of the curvature tree (⌈log_32 N⌉, at least 1).
    pub fn depth(&self) -> u32 {
        self.tree.depth as u32
    }
}

impl IntegerPriorityQueue for GradientQueue {
    // Forced inline (as `extract_min`): out of line, the register saves
    // and the returned value cost ~25 instructions per call (callgrind),
    // a fifth of a fill-drain's work per element.
    #[inline(always)]
    fn insert(&mut self, handle: u32, rank: u64) -> Result<(), PqError> {
        let i = super::fixed_range_bucket(rank, self.base, self.lists.buckets())?;
        let bucket = i as u32;
        // Only a bucket that was empty can be below the minimum.
        if self.lists.push_back_untagged(i, handle)? {
            self.tree.mark_nonempty(bucket);
            self.cur = self.cur.min(bucket);
        }
        Ok(())
    }

    #[inline]
    fn peek_min(&self) -> Option<(u32, u64)> {
        if self.cur == u32::MAX {
            return None;
        }
        let (handle, _) = self.lists.front(self.cur)?;
        Some((handle, self.base + u64::from(self.cur)))
    }

    #[inline(always)]
    fn extract_min(&mut self) -> Option<(u32, u64)> {
        let bucket = self.cur;
        if bucket == u32::MAX {
            return None;
        }
        let (handle, now_empty) = self.lists.pop_front_untagged(bucket);
        if now_empty {
            self.cur = self.tree.clear_min(bucket).unwrap_or(u32::MAX);
        }
        Some((handle, self.base + u64::from(bucket)))
    }

    fn remove(&mut self, handle: u32) -> bool {
        match self.lists.unlink(handle) {
            Some((bucket, now_empty)) => {
                if now_empty {
                    self.tree.mark_empty(bucket);
                    if bucket == self.cur {
                        self.cur = self.tree.first_from(bucket).unwrap_or(u32::MAX);
                    }
                }
                true
            }
            None => false,
        }
    }

    fn soonest_rank(&self) -> Option<u64> {
        (self.cur != u32::MAX).then(|| self.base + u64::from(self.cur))
    }

    fn len(&self) -> usize {
        self.lists.len()
    }

    fn capacity(&self) -> u32 {
        self.lists.capacity()
    }

    fn contains(&self, handle: u32) -> bool {
        self.lists.bucket_of(handle).is_some()
    }

    fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curvature_of(mask: u32) -> Curvature {
        let mut c = Curvature::default();
        for p in 0..WIDTH {
            if mask >> p & 1 == 1 {
                let t = term(p);
                c.a += t.a;
                c.b += t.b;
            }
        }
        c
    }

    #[test]
    fn critical_point_is_exact_for_hardest_patterns() {
        // For each lowest position p: p alone, and p with every higher
        // position (every lower weight) set, the pattern closest to the
        // next integer. (In debug builds the fallback asserts, so this
        // also checks that Theorem 1's bracket never fails.)
        for p in 0..WIDTH {
            let alone = 1u32 << p;
            let dense = u32::MAX << p;
            assert_eq!(critical_point(curvature_of(alone)), p);
            assert_eq!(critical_point(curvature_of(dense)), p);
        }
        let mut x = 0x9E37_79B9u32;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if x != 0 {
                assert_eq!(critical_point(curvature_of(x)), x.trailing_zeros() as usize);
            }
        }
    }
}
