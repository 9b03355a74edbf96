//! A request queue ordered both by position (for C-LOOK) and by arrival (for
//! the T_FIFO deadline), the BFQ thesis §2.1: "if a_i^j + T_FIFO > t holds for
//! all the queued requests, the next request is chosen in C-LOOK order,
//! otherwise the oldest request is picked".
//!
//! C-LOOK serves requests in ascending position from the head, and starts
//! over from the lowest position when every request is behind it. Two
//! B-trees keyed by (position, sequence) and by sequence make insertion,
//! C-LOOK pick and FIFO pick O(log n); the sequence number (arrival order)
//! breaks ties so the order is total and deterministic.

use crate::request::{Nanos, Request};
use std::collections::BTreeMap;

/// Requests of one application (or of the whole disk, for C-LOOK).
#[derive(Default, Debug, Clone)]
pub struct RequestQueue {
    by_pos: BTreeMap<(u64, u64), Request>,
    by_age: BTreeMap<u64, u64>,
    next_seq: u64,
    sectors: u64,
}

impl RequestQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of requests.
    pub fn len(&self) -> usize {
        self.by_age.len()
    }

    /// No requests.
    pub fn is_empty(&self) -> bool {
        self.by_age.is_empty()
    }

    /// Sum of the queued lengths, in sectors.
    pub fn sectors(&self) -> u64 {
        self.sectors
    }

    /// Appends `req` (arrival order = insertion order).
    pub fn push(&mut self, req: Request) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.by_pos.insert((req.sector, seq), req);
        self.by_age.insert(seq, req.sector);
        self.sectors += u64::from(req.len);
    }

    /// Key of the C-LOOK successor of `head`: the lowest position `>= head`,
    /// else the lowest position overall.
    fn clook_key(&self, head: u64) -> Option<(u64, u64)> {
        self.by_pos
            .range((head, 0)..)
            .next()
            .or_else(|| self.by_pos.iter().next())
            .map(|(k, _)| *k)
    }

    /// Key of the oldest request if it has waited at least `t_fifo` at
    /// `now`.
    fn expired_key(&self, now: Nanos, t_fifo: Nanos) -> Option<(u64, u64)> {
        let (&seq, &sector) = self.by_age.iter().next()?;
        let req = self.by_pos.get(&(sector, seq))?;
        (req.arrival.saturating_add(t_fifo) <= now).then_some((sector, seq))
    }

    fn pick_key(&self, head: u64, now: Nanos, t_fifo: Option<Nanos>) -> Option<(u64, u64)> {
        t_fifo
            .and_then(|t| self.expired_key(now, t))
            .or_else(|| self.clook_key(head))
    }

    /// The request [`pop_next`](Self::pop_next) would return.
    pub fn peek_next(&self, head: u64, now: Nanos, t_fifo: Option<Nanos>) -> Option<&Request> {
        self.pick_key(head, now, t_fifo)
            .and_then(|k| self.by_pos.get(&k))
    }

    /// Removes the next request: the oldest if it has waited `t_fifo` or more
    /// (`None`: never), else the C-LOOK successor of `head`.
    pub fn pop_next(&mut self, head: u64, now: Nanos, t_fifo: Option<Nanos>) -> Option<Request> {
        let key = self.pick_key(head, now, t_fifo)?;
        self.remove_key(key)
    }

    /// Removes the next request (as [`pop_next`](Self::pop_next)) if it is
    /// at most `max_len` sectors long; otherwise leaves it and returns its
    /// length. One lookup instead of a peek and a pop.
    pub fn pop_next_within(
        &mut self,
        head: u64,
        now: Nanos,
        t_fifo: Option<Nanos>,
        max_len: u32,
    ) -> Result<Request, Option<u32>> {
        let key = self.pick_key(head, now, t_fifo).ok_or(None)?;
        let len = self.by_pos.get(&key).map_or(0, |r| r.len);
        if len > max_len {
            return Err(Some(len));
        }
        self.remove_key(key).ok_or(None)
    }

    /// Removes the oldest request.
    pub fn pop_oldest(&mut self) -> Option<Request> {
        let (&seq, &sector) = self.by_age.iter().next()?;
        self.remove_key((sector, seq))
    }

    /// The oldest request.
    pub fn oldest(&self) -> Option<&Request> {
        let (&seq, &sector) = self.by_age.iter().next()?;
        self.by_pos.get(&(sector, seq))
    }

    fn remove_key(&mut self, key: (u64, u64)) -> Option<Request> {
        let req = self.by_pos.remove(&key)?;
        self.by_age.remove(&key.1);
        self.sectors -= u64::from(req.len);
        Some(req)
    }

    /// Removes every request, oldest first.
    pub fn drain(&mut self) -> Vec<Request> {
        let mut out = Vec::with_capacity(self.len());
        while let Some(r) = self.pop_oldest() {
            out.push(r);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{AppId, Request};

    fn req(sector: u64, arrival: Nanos) -> Request {
        let mut r = Request::read(AppId(0), sector, 8);
        r.arrival = arrival;
        r
    }

    #[test]
    fn clook_ascends_then_wraps_and_fifo_overrides_when_old() {
        let mut q = RequestQueue::new();
        for (s, a) in [(50, 0), (10, 1), (90, 2), (30, 3)] {
            q.push(req(s, a));
        }
        let mut order = Vec::new();
        let mut head = 40;
        while let Some(r) = q.pop_next(head, 5, Some(100)) {
            head = r.end();
            order.push(r.sector);
        }
        assert_eq!(order, [50, 90, 10, 30]);
        for (s, a) in [(50, 0), (10, 1), (90, 2)] {
            q.push(req(s, a));
        }
        // At t = 100 the request at 50 (arrived at 0) has waited T_FIFO.
        assert_eq!(q.pop_next(60, 100, Some(100)).map(|r| r.sector), Some(50));
        assert_eq!(q.pop_next(60, 100, Some(100)).map(|r| r.sector), Some(90));
        assert_eq!(q.sectors(), 8);
    }
}
