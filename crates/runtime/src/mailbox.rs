//! The client queue: a single-producer/single-consumer mailbox shared by one
//! client and the arbiter, designed as the PSPAT paper §3.2.2 says.
//!
//! * The shared part holds only packet **lengths**, one `u32` per slot
//!   (`0` = empty, the PSPAT paper §3.2.2 "a packet length of 0 marks an empty
//!   slot"). The payloads stay in the client's private memory, in submit
//!   order: the arbiter never needs them, so they never cross a cache line
//!   the arbiter reads.
//! * The client (producer) writes a slot's length; the arbiter (consumer)
//!   detects new entries from the slot contents and never reads the
//!   client's insertion index (FastForward).
//! * The arbiter publishes how many packets it has granted in `head`; the
//!   client (or its dispatcher) reads `head`, transmits the granted packets
//!   and clears their slots itself. So slots are written only by the client
//!   side and `head` only by the arbiter: no cache line is written by both.
//! * One slot always stays empty as a separator (Fig. 3 `submit()` checks
//!   `slots[next]`), so the arbiter, scanning, always stops on a cleared
//!   slot and can never mistake a granted-but-undrained entry of the
//!   previous lap for a new one.
//! * The client end can be split ([`ClientQueue::split`]) into a push half
//!   and a drain half on different threads: a dispatcher thread then
//!   transmits and clears the slots. The two halves share the payload ring
//!   and two counters, `tail` and `drained`, each written by one half only
//!   (Release) and read by the other (Acquire): the drain half's `drained`
//!   tells the push half which payload slots and lengths it may reuse, and
//!   the push half reads it only when the ring looks full.
//!
//! Indices are free-running counters (`usize`, wrapping), masked on access.

use crate::sync::{Arc, AtomicBool, AtomicU32, AtomicUsize, Ordering, UnsafeCell};
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
    /// Set once by the client when it goes away (the PSPAT paper §4.1 footnote 7:
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

/// Creates a queue with room for exactly `usable` packets: the client end
/// and the arbiter end. `usable` must be in `1..MAX_QUEUE_LEN` (checked by
/// the caller; [`crate::RuntimeBuilder::add_client`] does). The ring behind
/// it has the next power of two above `usable` slots (indices are masked),
/// so at least one slot is always empty: the separator the module doc
/// describes needs only that, not that all but one are usable.
pub fn client_queue<P>(usable: usize) -> (ClientQueue<P>, QueueReader) {
    let ring = (usable + 1).next_power_of_two();
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
    let payloads = Arc::new(PayloadRing {
        slots: (0..ring)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect(),
        drained: CachePadded::new(AtomicUsize::new(0)),
        tail: CachePadded::new(AtomicUsize::new(0)),
        shared: shared.clone(),
    });
    (
        ClientQueue {
            push: QueuePusher {
                shared: shared.clone(),
                payloads: payloads.clone(),
                tail: 0,
                drained_seen: 0,
                usable,
            },
            drain: QueueDrainer {
                shared: shared.clone(),
                payloads,
                drained: 0,
            },
        },
        QueueReader {
            shared,
            next_scan: 0,
            granted: 0,
            usable,
        },
    )
}

/// The payloads, indexed like the slots (`index & mask`), shared by the
/// push and drain halves of a client queue: entries `drained..tail` are
/// initialised, the others are not. Payloads never leave the client side;
/// the arbiter sees only lengths.
struct PayloadRing<P> {
    slots: Box<[UnsafeCell<MaybeUninit<P>>]>,
    /// Packets drained so far (free-running). Stored (Release) by the drain
    /// half after it moved the payloads out and cleared their slots; the
    /// push half loads it (Acquire) only when the ring looks full.
    drained: CachePadded<AtomicUsize>,
    /// Packets pushed so far. Stored (Release) by the push half after each
    /// payload is written; the drain half loads it once per drain, to never
    /// read past what was pushed whatever the grant index says.
    tail: CachePadded<AtomicUsize>,
    shared: Arc<MailboxShared>,
}

// SAFETY: a payload slot is written only by the push half, for entries
// outside `drained..tail`, and read (moved out) only by the drain half, for
// entries inside it; `tail` and `drained` are published with Release after
// the write / move and loaded with Acquire before the other side touches the
// slot, so no slot is ever accessed by both at once. Moving payloads
// between threads needs `P: Send`.
unsafe impl<P: Send> Send for PayloadRing<P> {}
// SAFETY: as above; `&PayloadRing` gives access only through the protocol.
unsafe impl<P: Send> Sync for PayloadRing<P> {}

impl<P> Drop for PayloadRing<P> {
    /// Both halves are gone: drop the payloads never drained, and tell the
    /// arbiter this client left (the PSPAT paper §4.1 footnote 7: it then reclaims
    /// what it had scheduled for it).
    fn drop(&mut self) {
        let mask = self.shared.mask;
        let (mut i, tail) = (
            self.drained.load(Ordering::Acquire),
            self.tail.load(Ordering::Acquire),
        );
        while i != tail {
            // SAFETY: entries `drained..tail` are initialised and unread, and
            // no half is left to touch them.
            self.slots[i & mask].with_mut(|p| unsafe { (*p).assume_init_drop() });
            i = i.wrapping_add(1);
        }
        self.shared.closed.store(true, Ordering::Release);
    }
}

/// The push half of a client queue (see [`ClientQueue::split`]).
pub struct QueuePusher<P> {
    shared: Arc<MailboxShared>,
    payloads: Arc<PayloadRing<P>>,
    /// Index of the next slot to fill.
    tail: usize,
    /// The drain half's `drained` as last loaded (a lower bound).
    drained_seen: usize,
    usable: usize,
}

impl<P> QueuePusher<P> {
    /// Packets the queue holds at most.
    pub fn capacity(&self) -> usize {
        self.usable
    }

    /// Packets pushed so far (free-running).
    pub fn pushed(&self) -> usize {
        self.tail
    }

    /// Room for this many more packets (reads the drain half's progress).
    pub fn room(&mut self) -> usize {
        self.drained_seen = self.payloads.drained.load(Ordering::Acquire);
        self.usable - self.tail.wrapping_sub(self.drained_seen)
    }

    /// Appends a packet of `len > 0` bytes, or hands it back when full.
    /// Reads shared memory only when the ring looks full.
    #[inline]
    pub fn try_push(&mut self, len: u32, packet: P) -> Result<(), P> {
        debug_assert!(len != 0, "0 marks an empty slot");
        if self.tail.wrapping_sub(self.drained_seen) >= self.usable {
            // Acquire: the drain half's moves out of these slots (and its
            // clears of their lengths) happen before our writes.
            self.drained_seen = self.payloads.drained.load(Ordering::Acquire);
            if self.tail.wrapping_sub(self.drained_seen) >= self.usable {
                return Err(packet);
            }
        }
        let i = self.tail & self.shared.mask;
        // SAFETY: entry `i` is outside `drained..tail` (checked above), so
        // no one else accesses it until we publish it below.
        self.payloads.slots[i].with_mut(|p| unsafe { (*p).write(packet) });
        // Release: the arbiter, acquiring this length, also sees our earlier
        // clear of the slot after it (the separator), see the module doc.
        self.shared.slot(self.tail).store(len, Ordering::Release);
        self.tail = self.tail.wrapping_add(1);
        // Release: the payload write happens before the drain half's read.
        self.payloads.tail.store(self.tail, Ordering::Release);
        Ok(())
    }
}

/// The drain half of a client queue (see [`ClientQueue::split`]): what a
/// dispatcher thread holds to transmit a client's granted packets.
pub struct QueueDrainer<P> {
    shared: Arc<MailboxShared>,
    payloads: Arc<PayloadRing<P>>,
    /// Index of the next packet to transmit (`client_head` in Fig. 3).
    drained: usize,
}

impl<P> QueueDrainer<P> {
    /// The arbiter's grant index: packets before it may be transmitted.
    #[inline]
    pub fn grant_index(&self) -> usize {
        self.shared.head.load(Ordering::Acquire)
    }

    /// Packets drained so far (free-running).
    pub fn drained(&self) -> usize {
        self.drained
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
        // Release-mode guard for the `unsafe` reads below: never read past
        // the pushed (initialised) entries, whatever `grant_index` says.
        let pushed = self.payloads.tail.load(Ordering::Acquire);
        // The bound also bites in normal operation when the drain half runs
        // on another thread than the push half (a dispatcher): `try_push`
        // publishes the slot's length (which the arbiter may read and grant
        // at once) before it publishes `tail`, so a granted entry can be
        // briefly invisible here. It is then drained by the next call.
        let n = n.min(pushed.wrapping_sub(self.drained));
        let mask = self.shared.mask;
        let mut left = n;
        while left > 0 {
            let run = self.shared.run(self.drained, left);
            left -= run.len();
            for slot in run {
                let i = self.drained & mask;
                // Relaxed: ordered before the Release store of `drained`.
                slot.store(0, Ordering::Relaxed);
                self.drained = self.drained.wrapping_add(1);
                // SAFETY: `i` is in `drained..tail` (n is bounded by the
                // pushed count), so the entry was written by `try_push` and
                // not read since; only this half reads it, once.
                let p = self.payloads.slots[i].with_mut(|p| unsafe { (*p).assume_init_read() });
                transmit(p);
            }
        }
        if n > 0 {
            // Release: our moves out and slot clears happen before the push
            // half reuses these entries.
            self.payloads.drained.store(self.drained, Ordering::Release);
        }
        n
    }
}

/// The client end of a client queue: both halves, owned by one thread at a
/// time (`Send` if the packets are), or [`split`](Self::split) so that a
/// dispatcher thread drains while the client pushes.
pub struct ClientQueue<P> {
    push: QueuePusher<P>,
    drain: QueueDrainer<P>,
}

impl<P> ClientQueue<P> {
    /// Packets the queue holds at most.
    pub fn capacity(&self) -> usize {
        self.push.usable
    }

    /// Packets submitted and not yet drained (granted or not).
    pub fn len(&self) -> usize {
        self.push.tail.wrapping_sub(self.drain.drained)
    }

    /// True when nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a packet of `len > 0` bytes, or hands it back when full.
    #[inline]
    pub fn try_push(&mut self, len: u32, packet: P) -> Result<(), P> {
        // Both halves are here: the exact drained count needs no load.
        self.push.drained_seen = self.drain.drained;
        self.push.try_push(len, packet)
    }

    /// The arbiter's grant index: packets before it may be transmitted.
    #[inline]
    pub fn grant_index(&self) -> usize {
        self.drain.grant_index()
    }

    /// Packets granted and not yet drained, given a `grant_index()` value.
    #[inline]
    pub fn granted_since(&self, grant_index: usize) -> usize {
        self.drain.granted_since(grant_index)
    }

    /// Hands every packet granted up to `grant_index` to `transmit`, oldest
    /// first, and clears their slots (Fig. 3 `drain()`). Returns how many.
    #[inline]
    pub fn drain_to(&mut self, grant_index: usize, transmit: impl FnMut(P)) -> usize {
        self.drain.drain_to(grant_index, transmit)
    }

    /// The two halves, for pushing and draining on different threads. The
    /// arbiter reclaims the client (as when a `ClientQueue` is dropped) once
    /// both halves are dropped.
    pub fn split(self) -> (QueuePusher<P>, QueueDrainer<P>) {
        (self.push, self.drain)
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
    /// Built on [`QueueReader::poll_into`], 64 lengths at a time.
    pub fn poll(&mut self, on_new: impl FnMut(u32)) -> usize {
        self.poll_batched(&mut [0u32; 64], on_new)
    }

    /// [`QueueReader::poll`] through a caller-supplied buffer: copies up to
    /// `buf.len()` new lengths at a time ([`QueueReader::poll_into`]), then
    /// reports them to `on_new`, until the queue has no new entry or one
    /// queue's worth was reported. Returns how many. (The arbiter passes a
    /// large buffer, so that one batch covers many cache lines.)
    #[inline]
    pub fn poll_batched(&mut self, buf: &mut [u32], mut on_new: impl FnMut(u32)) -> usize {
        let mut n = 0;
        while n < self.usable && !buf.is_empty() {
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
    fn the_queue_holds_exactly_what_was_asked_not_a_power_of_two() {
        for usable in [1, 2, 5, 500, 511, 512] {
            let (mut c, mut r) = client_queue::<usize>(usable);
            assert_eq!((c.capacity(), r.capacity()), (usable, usable));
            for lap in 0..3 {
                for i in 0..usable {
                    assert_eq!(c.try_push(1, i), Ok(()), "{usable}: lap {lap}, {i}");
                }
                assert_eq!(c.try_push(1, usable), Err(usable), "{usable}: one past");
                assert_eq!(r.poll(|_| ()), usable);
                (0..usable).for_each(|_| r.grant_one());
                r.publish();
                assert_eq!(c.drain_to(c.grant_index(), drop), usable);
            }
        }
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
