//! Flows bucketed by backlog, so that "the least backlogged flow below the
//! cap" is O(1): one intrusive doubly linked list per backlog level plus a
//! bitmask of the non-empty levels (dummynet's controller scheme). The
//! least backlogged flow is one `trailing_zeros` away.
//!
//! Two tie orders, chosen at compile time (`FIFO`), so that neither costs a
//! branch per packet:
//! * `FIFO = true` (the cost harness, as dummynet): the flow that reached
//!   the level first is taken first, and a flow leaving a level is simply
//!   unlinked;
//! * `FIFO = false` (the guarantee experiment): a level behaves as an array
//!   with swap-remove, the last flow is taken first and a flow leaving the
//!   middle of a level is replaced there by the level's last flow. This is
//!   the order the guarantee experiment's published figures were computed
//!   with; keeping it keeps them identical.

const NIL: u32 = u32::MAX;

/// Levels tracked: backlogs `0..=63` packets.
pub const LEVELS: usize = 64;

/// One flow's node.
#[derive(Clone, Copy)]
struct LevelNode {
    prev: u32,
    next: u32,
    level: u32,
}

/// Flows bucketed by backlog level, see the module doc.
pub struct LevelLists<const FIFO: bool> {
    nodes: Vec<LevelNode>,
    head: [u32; LEVELS],
    tail: [u32; LEVELS],
    /// Bit `l` set iff level `l` holds a flow.
    mask: u64,
    /// Levels a flow may be taken from: `0..cap`.
    below_cap: u64,
}

impl<const FIFO: bool> LevelLists<FIFO> {
    /// `n` flows at level 0 (in index order), taken below `cap`
    /// (`cap < LEVELS`, checked by the controller).
    pub fn new(n: u32, cap: u32) -> Self {
        let cap = cap.min(LEVELS as u32 - 1);
        let mut l = Self {
            nodes: vec![
                LevelNode {
                    prev: NIL,
                    next: NIL,
                    level: 0
                };
                n as usize
            ],
            head: [NIL; LEVELS],
            tail: [NIL; LEVELS],
            mask: 0,
            below_cap: (1u64 << cap) - 1,
        };
        for f in 0..n {
            l.push_tail(f, 0);
        }
        l
    }

    #[inline(always)]
    fn push_tail(&mut self, f: u32, level: u32) {
        let lv = level as usize & (LEVELS - 1);
        let t = self.tail[lv];
        if let Some(node) = self.nodes.get_mut(f as usize) {
            *node = LevelNode {
                prev: t,
                next: NIL,
                level: lv as u32,
            };
        }
        if t == NIL {
            self.head[lv] = f;
            self.mask |= 1 << lv;
        } else if let Some(node) = self.nodes.get_mut(t as usize) {
            node.next = f;
        }
        self.tail[lv] = f;
    }

    /// Unlinks `f` and returns its level.
    #[inline(always)]
    fn unlink(&mut self, f: u32) -> u32 {
        let Some(&LevelNode { prev, next, level }) = self.nodes.get(f as usize) else {
            return 0;
        };
        let lv = level as usize & (LEVELS - 1);
        match self.nodes.get_mut(prev as usize) {
            Some(p) => p.next = next,
            None => self.head[lv] = next,
        }
        match self.nodes.get_mut(next as usize) {
            Some(n) => n.prev = prev,
            None => {
                self.tail[lv] = prev;
                // `f` was the tail; the level empties if it was the head too.
                if prev == NIL {
                    self.mask &= !(1 << lv);
                }
            }
        }
        level
    }

    /// Array swap-remove on a list: the level's last flow takes `f`'s
    /// place. Returns `f`'s level.
    fn swap_unlink(&mut self, f: u32) -> u32 {
        let level = self.level(f);
        let lv = level as usize & (LEVELS - 1);
        let last = self.tail[lv];
        self.unlink(last);
        if last == f {
            return level;
        }
        // `f`'s links as they are once `last` is out.
        let LevelNode { prev, next, .. } = self.nodes[f as usize];
        self.nodes[last as usize] = LevelNode { prev, next, level };
        match self.nodes.get_mut(prev as usize) {
            Some(p) => p.next = last,
            None => self.head[lv] = last,
        }
        match self.nodes.get_mut(next as usize) {
            Some(n) => n.prev = last,
            None => self.tail[lv] = last,
        }
        self.mask |= 1 << lv;
        level
    }

    /// Takes the least backlogged flow below the cap and counts one more
    /// packet for it.
    #[inline(always)]
    pub fn take_least(&mut self) -> Option<u32> {
        let m = self.mask & self.below_cap;
        if m == 0 {
            return None;
        }
        let level = m.trailing_zeros();
        let f = self.pop_end(level as usize & (LEVELS - 1));
        self.push_tail(f, level + 1);
        Some(f)
    }

    /// Unlinks the flow taken first from the non-empty level `lv` (its
    /// head for `FIFO`, else its tail) and returns it. The general
    /// [`Self::unlink`] less the side that is known to be the end.
    #[inline(always)]
    fn pop_end(&mut self, lv: usize) -> u32 {
        if FIFO {
            let f = self.head[lv];
            let next = self.nodes.get(f as usize).map_or(NIL, |n| n.next);
            self.head[lv] = next;
            match self.nodes.get_mut(next as usize) {
                Some(n) => n.prev = NIL,
                None => {
                    self.tail[lv] = NIL;
                    self.mask &= !(1 << lv);
                }
            }
            f
        } else {
            let f = self.tail[lv];
            let prev = self.nodes.get(f as usize).map_or(NIL, |n| n.prev);
            self.tail[lv] = prev;
            match self.nodes.get_mut(prev as usize) {
                Some(p) => p.next = NIL,
                None => {
                    self.head[lv] = NIL;
                    self.mask &= !(1 << lv);
                }
            }
            f
        }
    }

    /// Counts one packet less for `f`.
    #[inline(always)]
    pub fn release(&mut self, f: u32) {
        let level = if FIFO {
            self.unlink(f)
        } else {
            self.swap_unlink(f)
        };
        self.push_tail(f, level.saturating_sub(1));
    }

    /// `f`'s backlog level.
    pub fn level(&self, f: u32) -> u32 {
        self.nodes.get(f as usize).map_or(0, |n| n.level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference the swap order must equal: one `Vec` per level,
    /// `last()` taken, `swap_remove` on leaving.
    struct VecLevels {
        levels: Vec<Vec<u32>>,
        level: Vec<u32>,
    }

    impl VecLevels {
        fn set(&mut self, f: u32, new: u32) {
            let old = self.level[f as usize] as usize;
            let p = self.levels[old].iter().position(|&x| x == f).unwrap();
            self.levels[old].swap_remove(p);
            self.levels[new as usize].push(f);
            self.level[f as usize] = new;
        }
        fn least(&self, cap: u32) -> Option<u32> {
            let l = self.levels.iter().position(|v| !v.is_empty())?;
            (l < cap as usize).then(|| *self.levels[l].last().unwrap())
        }
    }

    #[test]
    fn swap_order_matches_arrays_with_swap_remove() {
        let (n, cap) = (7u32, 5u32);
        let mut lists = LevelLists::<false>::new(n, cap);
        let mut reference = VecLevels {
            levels: vec![Vec::new(); cap as usize + 1],
            level: vec![0; n as usize],
        };
        reference.levels[0] = (0..n).collect();
        let mut x = 12345u64;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x >> 63 == 0 {
                let want = reference.least(cap);
                assert_eq!(lists.take_least(), want);
                if let Some(f) = want {
                    let l = reference.level[f as usize];
                    reference.set(f, l + 1);
                }
            } else {
                let f = ((x >> 32) % u64::from(n)) as u32;
                let l = reference.level[f as usize];
                if l > 0 {
                    lists.release(f);
                    reference.set(f, l - 1);
                }
            }
            for f in 0..n {
                assert_eq!(lists.level(f), reference.level[f as usize]);
            }
        }
    }

    #[test]
    fn fifo_order_takes_the_first_arrival() {
        let mut l = LevelLists::<true>::new(3, 2);
        assert_eq!(l.take_least(), Some(0));
        assert_eq!(l.take_least(), Some(1));
        l.release(0);
        assert_eq!(l.take_least(), Some(2));
        assert_eq!(l.take_least(), Some(0));
        let mut s = LevelLists::<false>::new(3, 2);
        assert_eq!(s.take_least(), Some(2));
    }
}
