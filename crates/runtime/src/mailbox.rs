//! The client queue: a single-producer/single-consumer mailbox shared by one
//! client and the arbiter, designed as seed 001 §3.2.2 says.
//!
//! * The shared part holds only packet **lengths**, one `u32` per slot
//!   (`0` = empty, seed 001 §3.2.2 "a packet length of 0 marks an empty
//!   slot"). The payloads stay in the client's private memory, in submit
//!   order: the arbiter never needs them, so they never cross a cache line
//!   the arbiter reads.
//! * The client (producer) writes a slot's length; the arbiter (consumer)
//!   detects new entries from the slot contents and never reads the
//!   client's insertion index (FastForward).
//! * The arbiter publishes how many packets it has granted in `head`; the
//!   client reads `head`, transmits the granted packets and clears their
//!   slots itself. So slots are written only by the client and `head` only
//!   by the arbiter: no cache line is written by both sides.
//! * One slot always stays empty as a separator (Fig. 3 `submit()` checks
//!   `slots[next]`), so the arbiter, scanning, always stops on a cleared
//!   slot and can never mistake a granted-but-undrained entry of the
//!   previous lap for a new one.
//!
//! Indices are free-running counters (`usize`, wrapping), masked on access.

use crate::sync::{Arc, AtomicBool, AtomicU32, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;

/// Length slots per cache-padded block (128 bytes on x86-64).
const SLOTS_PER_BLOCK: usize = 32;

/// Largest accepted ring (usable slots + 1).
pub const MAX_QUEUE_LEN: usize = 1 << 20;

/// The memory shared between one client and the arbiter.
pub(crate) struct MailboxShared {
    /// Packets granted so far (free-running). Written by the arbiter only.
    head: CachePadded<AtomicUsize>,
    /// Set once by the client when it goes away (seed 001 §4.1 footnote 7:
    /// the arbiter then reclaims what it had scheduled for it).
    closed: CachePadded<AtomicBool>,
    /// Packet length per slot, `0` = empty. Written by the client only.
    lens: Box<[CachePadded<[AtomicU32; SLOTS_PER_BLOCK]>]>,
    mask: usize,
    /// Slots used per block: `SLOTS_PER_BLOCK`, or the ring length if the
    /// ring is shorter than one block.
    block_len: usize,
}

impl MailboxShared {
    #[inline]
    fn slot(&self, index: usize) -> &AtomicU32 {
        let i = index & self.mask;
        &self.lens[i / SLOTS_PER_BLOCK][i % SLOTS_PER_BLOCK]
    }

    /// The slots from `index` to the end of its block, at most `max`: the
    /// bulk paths (`poll`, `drain_to`) walk a run with one bounds check
    /// instead of one index computation per slot.
    #[inline]
    fn run(&self, index: usize, max: usize) -> &[AtomicU32] {
        let i = index & self.mask;
        let start = i % SLOTS_PER_BLOCK;
        let len = (self.block_len - start).min(max);
        &self.lens[i / SLOTS_PER_BLOCK][start..start + len]
    }
}

/// Creates a queue with room for `usable` packets: the client end and the
/// arbiter end. `usable` must be in `1..MAX_QUEUE_LEN` (checked by the
/// caller; [`crate::RuntimeBuilder::add_client`] does).
pub fn client_queue<P>(usable: usize) -> (ClientQueue<P>, QueueReader) {
    let ring = (usable + 1).next_power_of_two().max(2);
    let blocks = ring.div_ceil(SLOTS_PER_BLOCK);
    let lens = (0..blocks)
        .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU32::new(0))))
        .collect();
    let shared = Arc::new(MailboxShared {
        head: CachePadded::new(AtomicUsize::new(0)),
        closed: CachePadded::new(AtomicBool::new(false)),
        lens,
        mask: ring - 1,
        block_len: ring.min(SLOTS_PER_BLOCK),
    });
    let usable = ring - 1;
    (
        ClientQueue {
            shared: shared.clone(),
            payloads: (0..ring).map(|_| MaybeUninit::uninit()).collect(),
            tail: 0,
            drained: 0,
            usable,
        },
        QueueReader {
            shared,
            next_scan: 0,
            granted: 0,
            usable,
        },
    )
}

/// The client (producer) end of a client queue. Owned by one thread at a
/// time; `Send` if the packets are.
pub struct ClientQueue<P> {
    shared: Arc<MailboxShared>,
    /// Payloads, indexed like the slots (`index & mask`): entries
    /// `drained..tail` are initialised, the others are not. A plain ring
    /// rather than a `VecDeque`: same index arithmetic as the slots, no
    /// length/head bookkeeping of its own, no `Option` per pop.
    payloads: Box<[MaybeUninit<P>]>,
    /// Index of the next slot to fill.
    tail: usize,
    /// Index of the next packet to transmit (`client_head` in Fig. 3).
    drained: usize,
    usable: usize,
}

impl<P> ClientQueue<P> {
    /// Packets the queue holds at most.
    pub fn capacity(&self) -> usize {
        self.usable
    }

    /// Packets submitted and not yet drained (granted or not).
    pub fn len(&self) -> usize {
        self.tail.wrapping_sub(self.drained)
    }

    /// True when nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a packet of `len > 0` bytes, or hands it back when full.
    /// The fullness test uses only client-private counters: no shared read.
    #[inline]
    pub fn try_push(&mut self, len: u32, packet: P) -> Result<(), P> {
        debug_assert!(len != 0, "0 marks an empty slot");
        if self.len() >= self.usable {
            return Err(packet);
        }
        let i = self.tail & self.shared.mask;
        self.payloads[i].write(packet);
        // Release: the arbiter, acquiring this length, also sees our earlier
        // clear of the slot after it (the separator), see the module doc.
        self.shared.slot(self.tail).store(len, Ordering::Release);
        self.tail = self.tail.wrapping_add(1);
        Ok(())
    }

    /// The arbiter's grant index: packets before it may be transmitted.
    #[inline]
    pub fn grant_index(&self) -> usize {
        self.shared.head.load(Ordering::Acquire)
    }

    /// Packets granted and not yet drained, given a `grant_index()` value.
    #[inline]
    pub fn granted_since(&self, grant_index: usize) -> usize {
        grant_index.wrapping_sub(self.drained)
    }

    /// Hands every packet granted up to `grant_index` to `transmit`, oldest
    /// first, and clears their slots (Fig. 3 `drain()`). Returns how many.
    #[inline]
    pub fn drain_to(&mut self, grant_index: usize, mut transmit: impl FnMut(P)) -> usize {
        let n = self.granted_since(grant_index);
        debug_assert!(
            n <= self.len(),
            "the arbiter granted more than was submitted"
        );
        // Release-mode guard for the `unsafe` read below: never read past
        // the submitted (initialised) entries, whatever `grant_index` says.
        let n = n.min(self.len());
        let mask = self.shared.mask;
        let mut left = n;
        while left > 0 {
            let run = self.shared.run(self.drained, left);
            left -= run.len();
            for slot in run {
                let i = self.drained & mask;
                // Relaxed: ordered before our next Release store of a length.
                slot.store(0, Ordering::Relaxed);
                self.drained = self.drained.wrapping_add(1);
                // SAFETY: `i` is in `drained..tail` (n <= len()), so the
                // entry was written by `try_push` and not read since;
                // advancing `drained` first marks it uninitialised again, so
                // it is read exactly once (also if `transmit` panics).
                let p = unsafe { self.payloads[i].assume_init_read() };
                transmit(p);
            }
        }
        n
    }

    /// Tells the arbiter this client is gone. Undrained payloads are dropped
    /// with the queue; the arbiter reclaims the lengths it had scheduled.
    pub(crate) fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
    }
}

impl<P> Drop for ClientQueue<P> {
    fn drop(&mut self) {
        let mask = self.shared.mask;
        while self.drained != self.tail {
            let i = self.drained & mask;
            self.drained = self.drained.wrapping_add(1);
            // SAFETY: entries `drained..tail` are initialised and unread.
            unsafe { self.payloads[i].assume_init_drop() };
        }
    }
}

/// The arbiter (consumer) end of a client queue: its private cursors live
/// here, not in shared memory.
pub struct QueueReader {
    shared: Arc<MailboxShared>,
    /// Next slot to look at for a new entry.
    next_scan: usize,
    /// Packets granted so far (published to `head`).
    granted: usize,
    usable: usize,
}

impl QueueReader {
    /// Reports each new entry's length to `on_new`, at most one queue's
    /// worth per call (so one busy client cannot monopolise a scan).
    /// Built on [`QueueReader::poll_into`].
    pub fn poll(&mut self, mut on_new: impl FnMut(u32)) -> usize {
        let mut buf = [0u32; 64];
        let mut n = 0;
        while n < self.usable {
            let room = (self.usable - n).min(buf.len());
            let got = self.poll_into(&mut buf[..room]);
            buf[..got].iter().for_each(|&len| on_new(len));
            n += got;
            if got < room {
                break;
            }
        }
        n
    }

    /// Copies the lengths of up to `out.len()` new entries into `out` (at
    /// most one queue's worth) and returns how many. The arbiter reads a
    /// whole batch this way before scheduling any of it: the loop is a few
    /// instructions per slot, so the loads of every cache line the client
    /// wrote are in flight together, instead of one exposed cross-core miss
    /// per line when each length is scheduled as soon as it is read.
    #[inline]
    pub fn poll_into(&mut self, out: &mut [u32]) -> usize {
        let start = self.next_scan;
        let max = out.len().min(self.usable);
        let mut seen = 0;
        'runs: while seen < max {
            let run = self.shared.run(start.wrapping_add(seen), max - seen);
            let dst = &mut out[seen..seen + run.len()];
            for (slot, d) in run.iter().zip(dst) {
                // Acquire: see the client's clear of the following slot.
                let len = slot.load(Ordering::Acquire);
                if len == 0 {
                    break 'runs;
                }
                *d = len;
                seen += 1;
            }
        }
        self.next_scan = start.wrapping_add(seen);
        seen
    }

    /// Largest number of entries one poll can return (the queue's capacity).
    pub fn capacity(&self) -> usize {
        self.usable
    }

    /// Grants the oldest seen-but-ungranted packet (not yet published).
    #[inline]
    pub fn grant_one(&mut self) {
        debug_assert!(self.pending() > 0);
        self.granted = self.granted.wrapping_add(1);
    }

    /// Makes the grants visible to the client.
    #[inline]
    pub fn publish(&self) {
        self.shared.head.store(self.granted, Ordering::Release);
    }

    /// Packets seen and not yet granted.
    pub fn pending(&self) -> usize {
        self.next_scan.wrapping_sub(self.granted)
    }

    /// True once the client has gone away.
    #[inline]
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn full_queue_hands_the_packet_back_and_keeps_one_separator() {
        let (mut c, mut r) = client_queue::<u64>(3);
        assert_eq!(c.capacity(), 3);
        for i in 0..3 {
            c.try_push(10 + i as u32, i).unwrap();
        }
        assert_eq!(c.try_push(99, 7), Err(7));
        let mut seen = vec![];
        assert_eq!(r.poll(|l| seen.push(l)), 3);
        assert_eq!(seen, [10, 11, 12]);
        r.grant_one();
        r.grant_one();
        r.publish();
        let mut out = vec![];
        assert_eq!(c.drain_to(c.grant_index(), |p| out.push(p)), 2);
        assert_eq!(out, [0, 1]);
        // Two slots freed; the ring wraps and the reader sees exactly them.
        c.try_push(20, 3).unwrap();
        c.try_push(21, 4).unwrap();
        assert!(c.try_push(22, 5).is_err());
        seen.clear();
        assert_eq!(r.poll(|l| seen.push(l)), 2);
        assert_eq!(seen, [20, 21]);
        assert_eq!(r.poll(|_| ()), 0);
        assert_eq!(r.pending(), 3);
    }

    #[test]
    fn payloads_are_moved_out_once_and_undrained_ones_dropped() {
        let token = std::sync::Arc::new(());
        let (mut c, mut r) = client_queue::<std::sync::Arc<()>>(5);
        for lap in 0..3 {
            for _ in 0..5 {
                c.try_push(1, token.clone()).unwrap();
            }
            assert_eq!(r.poll(|_| ()), 5);
            for _ in 0..5 {
                r.grant_one();
            }
            r.publish();
            let mut out = vec![];
            assert_eq!(c.drain_to(c.grant_index(), |p| out.push(p)), 5);
            assert_eq!(std::sync::Arc::strong_count(&token), 6, "lap {lap}");
        }
        for _ in 0..4 {
            c.try_push(1, token.clone()).unwrap();
        }
        assert_eq!(std::sync::Arc::strong_count(&token), 5);
        drop(c);
        assert_eq!(std::sync::Arc::strong_count(&token), 1);
    }
}
