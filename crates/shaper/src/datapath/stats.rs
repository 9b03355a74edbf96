//! Accounting: every frame received is, at any moment, sent, dropped for
//! one reason, or still queued. Counters per class (each circuit, the
//! default class, and the frames passed unshaped) and direction, and the
//! table `fairway shape` prints at exit.

use crate::plan::Dir;
use std::fmt;

/// Why a frame was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// CoDel, at dequeue (standing queue above its target).
    Codel,
    /// The circuit's FQ-CoDel was full (its fattest flow's head dropped).
    Overflow,
    /// Longer than the interfaces' MTU allows ([`super::pool::Pool::max_frame`]).
    TooLarge,
    /// No free slot in the frame pool.
    NoSlot,
    /// The send system call failed (the interface refused it).
    SendFailed,
    /// Queued in a circuit a reload removed.
    Removed,
}

/// Packets and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Count {
    /// Frames.
    pub packets: u64,
    /// Their bytes (Ethernet header and payload, no FCS).
    pub bytes: u64,
}

impl Count {
    /// Adds a frame of `len` bytes.
    pub fn add(&mut self, len: usize) {
        self.packets += 1;
        self.bytes += len as u64;
    }
}

/// One class's counters in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Received.
    pub received: Count,
    /// Sent on.
    pub sent: Count,
    /// Dropped by CoDel.
    pub codel: Count,
    /// Dropped on overflow.
    pub overflow: Count,
    /// Dropped as too large.
    pub too_large: Count,
    /// Dropped for want of a pool slot.
    pub no_slot: Count,
    /// Dropped because the send failed.
    pub send_failed: Count,
    /// Dropped because a reload removed the circuit.
    pub removed: Count,
    /// Frames queued in a flow bucket of the circuit's FQ-CoDel that was
    /// busy with another flow (every way of the flow's set was taken), so
    /// that two flows shared a queue.
    pub collisions: u64,
}

impl Counters {
    /// Counts a drop.
    pub fn drop(&mut self, reason: DropReason, len: usize) {
        match reason {
            DropReason::Codel => self.codel.add(len),
            DropReason::Overflow => self.overflow.add(len),
            DropReason::TooLarge => self.too_large.add(len),
            DropReason::NoSlot => self.no_slot.add(len),
            DropReason::SendFailed => self.send_failed.add(len),
            DropReason::Removed => self.removed.add(len),
        }
    }

    /// Frames dropped, every reason.
    pub fn dropped(&self) -> u64 {
        [
            self.codel,
            self.overflow,
            self.too_large,
            self.no_slot,
            self.send_failed,
            self.removed,
        ]
        .iter()
        .map(|c| c.packets)
        .sum()
    }
}

/// A class's row of the exit table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Its direction.
    pub dir: Dir,
    /// `circuit <id>`, `default`, or `unshaped`.
    pub class: String,
    /// Its counters.
    pub counters: Counters,
    /// Frames and bytes still queued.
    pub queued: Count,
}

impl Row {
    /// True if every frame is accounted for: received = sent + dropped +
    /// queued.
    pub fn balanced(&self) -> bool {
        let c = &self.counters;
        c.received.packets == c.sent.packets + c.dropped() + self.queued.packets
    }
}

/// The exit table: a row per class and direction that saw a frame, and
/// the totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The rows.
    pub rows: Vec<Row>,
}

impl Report {
    /// The sums over all rows.
    pub fn total(&self) -> (Counters, Count) {
        let mut t = Counters::default();
        let mut q = Count::default();
        for r in &self.rows {
            let c = &r.counters;
            for (sum, x) in [
                (&mut t.received, c.received),
                (&mut t.sent, c.sent),
                (&mut t.codel, c.codel),
                (&mut t.overflow, c.overflow),
                (&mut t.too_large, c.too_large),
                (&mut t.no_slot, c.no_slot),
                (&mut t.send_failed, c.send_failed),
                (&mut t.removed, c.removed),
                (&mut q, r.queued),
            ] {
                sum.packets += x.packets;
                sum.bytes += x.bytes;
            }
        }
        (t, q)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .rows
            .iter()
            .map(|r| r.class.len())
            .max()
            .unwrap_or(0)
            .max(5);
        writeln!(
            f,
            "{:<8} {:<width$} {:>10} {:>12} {:>10} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "dir",
            "class",
            "received",
            "bytes",
            "sent",
            "bytes",
            "codel",
            "overflow",
            "toolarge",
            "noslot",
            "sendfail",
            "removed",
            "queued"
        )?;
        let (total, queued) = self.total();
        let all = Row {
            dir: Dir::Download,
            class: "total".into(),
            counters: total,
            queued,
        };
        for (dir, r) in self
            .rows
            .iter()
            .map(|r| (r.dir.name(), r))
            .chain([("", &all)])
        {
            let c = &r.counters;
            writeln!(
                f,
                "{:<8} {:<width$} {:>10} {:>12} {:>10} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
                dir,
                r.class,
                c.received.packets,
                c.received.bytes,
                c.sent.packets,
                c.sent.bytes,
                c.codel.packets,
                c.overflow.packets,
                c.too_large.packets,
                c.no_slot.packets,
                c.send_failed.packets,
                c.removed.packets,
                r.queued.packets
            )?;
        }
        Ok(())
    }
}
