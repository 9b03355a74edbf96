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

    /// As [`pop_next_within`](Self::pop_next_within), but a request
    /// longer than `piece` sectors is not removed whole: its first `piece`
    /// sectors are returned and the rest stays queued in its place, with
    /// its age (a request dispatched in pieces keeps its T_FIFO deadline
    /// and, starting where the piece ends, is C-LOOK's next pick). The
    /// budget check applies to what leaves the queue.
    pub fn pop_piece_within(
        &mut self,
        head: u64,
        now: Nanos,
        t_fifo: Option<Nanos>,
        max_len: u32,
        piece: u32,
    ) -> Result<Request, Option<u32>> {
        let key = self.pick_key(head, now, t_fifo).ok_or(None)?;
        let len = self.by_pos.get(&key).map_or(0, |r| r.len);
        if len <= piece || piece == 0 {
            return self.pop_next_within(head, now, t_fifo, max_len);
        }
        if piece > max_len {
            return Err(Some(piece));
        }
        let mut rest = self.by_pos.remove(&key).ok_or(None)?;
        let mut head_piece = rest;
        head_piece.len = piece;
        rest.sector += u64::from(piece);
        rest.len -= piece;
        self.by_age.insert(key.1, rest.sector);
        self.by_pos.insert((rest.sector, key.1), rest);
        self.sectors -= u64::from(piece);
        Ok(head_piece)
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

    #[test]
    fn a_piece_leaves_the_rest_in_place_with_its_age() {
        let mut q = RequestQueue::new();
        let mut big = Request::read(AppId(0), 100, 40);
        big.arrival = 0;
        q.push(big);
        q.push(req(500, 1));
        let p = q.pop_piece_within(0, 5, Some(100), 1000, 16).unwrap();
        assert_eq!((p.sector, p.len), (100, 16));
        assert_eq!(q.sectors(), 24 + 8);
        // The rest is the oldest still, and C-LOOK's next from the piece's end.
        assert_eq!(q.oldest().map(|r| (r.sector, r.len)), Some((116, 24)));
        // A piece beyond the budget stays queued, its length returned.
        assert_eq!(q.pop_piece_within(p.end(), 5, None, 4, 16), Err(Some(16)));
        let r = q.pop_piece_within(p.end(), 5, Some(100), 1000, 16).unwrap();
        assert_eq!((r.sector, r.len), (116, 16));
        let r = q.pop_piece_within(0, 5, None, 1000, 16).unwrap();
        assert_eq!((r.sector, r.len), (132, 8));
        assert_eq!(q.len(), 1);
    }
}
