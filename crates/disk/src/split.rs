//! A request dispatched in pieces, put back together: the bookkeeping the
//! engine keeps for each request it issues.
//!
//! A scheduler may dispatch one request of the application in several
//! pieces (BFQ does while a weight-raised application is warm, so that
//! the raised application waits behind small transfers: [`crate::bfq::WARM_PIECE`]).
//! Each piece is a [`crate::Request`] with the request's tag and a part
//! of its sectors; every piece is issued as a transfer of its own, and
//! the application must still see its request complete exactly once,
//! after all its pieces, with the byte count it asked for — or one
//! failure, whichever piece failed. [`Assembly`] is that bookkeeping:
//! the byte range of each piece, the pieces in flight, the bytes
//! transferred and the first failure. A request dispatched whole is the
//! case of one piece.
//!
//! Once a piece has failed, the pieces dispatched after it are not issued
//! ([`Assembly::piece`] returns `None`): the request has failed already,
//! and the scheduler is told they are done at once.

/// How a request dispatched in pieces ended, when it did not transfer
/// every byte.
#[derive(Debug, PartialEq, Eq)]
pub enum Failed<E> {
    /// A piece failed (the first failure; the others are not reported).
    Error(E),
    /// A piece transferred less than its length (the end of a file):
    /// `transferred` counts the bytes of the pieces that completed in
    /// full before it, and of it.
    Short {
        /// Bytes transferred.
        transferred: u32,
        /// The request's length.
        len: u32,
    },
}

/// One piece to issue: where in the request's buffer, where on the
/// target, how many bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Offset in the request's buffer.
    pub buf_offset: u32,
    /// Byte offset on the target.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
}

/// The pieces of one request: which were dispatched, which are in flight,
/// what they transferred.
#[derive(Debug)]
pub struct Assembly<E> {
    offset: u64,
    len: u32,
    /// Bytes of the pieces dispatched so far (issued or skipped).
    dispatched: u32,
    in_flight: u32,
    /// Bytes transferred by the pieces completed in full.
    done: u32,
    failed: Option<Failed<E>>,
}

impl<E> Assembly<E> {
    /// A request of `len` bytes at byte `offset`, nothing dispatched.
    pub fn new(offset: u64, len: u32) -> Self {
        Self {
            offset,
            len,
            dispatched: 0,
            in_flight: 0,
            done: 0,
            failed: None,
        }
    }

    /// The scheduler dispatched the request's sectors
    /// `sector..sector + sectors` (of 512 bytes, counted from the target's
    /// start): the piece to issue, its bytes those of the request within
    /// those sectors — or `None` when nothing is to be issued (the request
    /// has failed already, or the sectors hold none of its bytes).
    pub fn piece(&mut self, sector: u64, sectors: u32) -> Option<Piece> {
        let end = self.offset + u64::from(self.len);
        let from = (sector * crate::request::SECTOR_BYTES).max(self.offset);
        let to = ((sector + u64::from(sectors)) * crate::request::SECTOR_BYTES).min(end);
        let len = to.saturating_sub(from) as u32;
        self.dispatched = (self.dispatched + len).min(self.len);
        if len == 0 || self.failed.is_some() {
            return None;
        }
        self.in_flight += 1;
        Some(Piece {
            buf_offset: (from - self.offset) as u32,
            offset: from,
            len,
        })
    }

    /// Every byte of the request has been dispatched: nothing of it is
    /// left in the scheduler (the client's next synchronous request may
    /// follow it).
    pub fn all_dispatched(&self) -> bool {
        self.dispatched >= self.len
    }

    /// A piece issued by [`Assembly::piece`] completed: `Ok(bytes)` it
    /// transferred, or its error.
    pub fn complete(&mut self, piece: &Piece, result: Result<u32, E>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match result {
            Ok(n) if n == piece.len => self.done += n,
            Ok(n) => {
                let transferred = self.done + n;
                self.fail(Failed::Short {
                    transferred,
                    len: self.len,
                });
            }
            Err(e) => self.fail(Failed::Error(e)),
        }
    }

    /// A piece could not be issued (`e`), after [`Assembly::piece`]
    /// returned it.
    pub fn not_issued(&mut self, e: E) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.fail(Failed::Error(e));
    }

    /// The scheduler gave back the rest of the request undispatched (its
    /// client removed, the engine stopping): it fails with `e` unless it
    /// failed already, once its pieces in flight complete.
    pub fn abandon(&mut self, e: E) {
        self.dispatched = self.len;
        self.fail(Failed::Error(e));
    }

    /// The first failure is the request's.
    fn fail(&mut self, f: Failed<E>) {
        if self.failed.is_none() {
            self.failed = Some(f);
        }
    }

    /// Pieces issued and not completed.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Every piece dispatched and none in flight: the request may complete.
    pub fn finished(&self) -> bool {
        self.all_dispatched() && self.in_flight == 0
    }

    /// The request's outcome, once [`Assembly::finished`]: `Ok(len)`
    /// when every byte was transferred.
    pub fn result(self) -> Result<u32, Failed<E>> {
        match self.failed {
            Some(f) => Err(f),
            None if self.done == self.len => Ok(self.len),
            None => Err(Failed::Short {
                transferred: self.done,
                len: self.len,
            }),
        }
    }
}
