//! Reference models of CoDel and FQ-CoDel, written from the RFCs and not
//! from `fairway_core::aqm`: the RFC 8289 pseudocode transcribed line by
//! line (a `VecDeque`, a floating-point square root in the control law, the
//! RFC's `0` for "timer not running", signed `time_t` arithmetic), and
//! RFC 8290's scheduler as plain `VecDeque` lists, a brute-force count of
//! the queued packets and a scan of every bucket for the fattest one. One
//! rule is Linux's rather than the RFC's letter, as in the implementation's
//! module doc: an emptied new queue moves to the old list only if that list
//! is not empty. The set-associative classification (`ways > 1`, after
//! CAKE) is modelled as a map from tag to bucket per set and a brute-force
//! search of the set's lists.
//!
//! Each model takes a [`Variant`]: `Rfc` is the specification; the others
//! are deliberate mistakes the differential tests must tell apart, which
//! shows that those tests can fail.
#![allow(dead_code)] // each test module uses part of the models

use crate::common::Pkt;
use std::collections::{HashMap, VecDeque};

/// Which model: the specification or one deliberate mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// RFC 8289 / RFC 8290 as written.
    Rfc,
    /// CoDel: ok to drop only once `now > first_above_time` (strict).
    StrictAboveTime,
    /// CoDel: every dropping episode starts at `count = 1` (no memory).
    NoReentryMemory,
    /// CoDel: the next drop is scheduled from `now`, not from `drop_next`.
    ControlLawFromNow,
    /// FQ-CoDel: new flows join the old list (no sparse-flow priority).
    NoNewList,
    /// FQ-CoDel: an emptied new flow leaves at once (no pass through the
    /// old list).
    NoOldPass,
    /// FQ-CoDel: `ways` ignored (every packet in its home bucket).
    WaysIgnored,
    /// FQ-CoDel: a colliding flow re-tags its home bucket (CAKE's choice),
    /// displacing the flow that owned it.
    RetagOnCollision,
    /// FQ-CoDel: the search for a free bucket starts at the set's first
    /// bucket, not at the home bucket.
    ScanFromSetStart,
}

/// `time_t` of the pseudocode: signed nanoseconds.
type Time = i64;

/// RFC 8289 §5: one CoDel-managed FIFO.
#[derive(Clone, Debug)]
pub struct RfcCodel {
    pub queue: VecDeque<(Pkt, Time)>,
    bytes: u64,
    target: Time,
    interval: Time,
    maxpacket: u64,
    variant: Variant,
    first_above_time: Time,
    drop_next: Time,
    pub count: u32,
    lastcount: u32,
    pub dropping: bool,
}

struct DodequeueResult {
    p: Option<Pkt>,
    ok_to_drop: bool,
}

impl RfcCodel {
    pub fn new(target_ns: u64, interval_ns: u64, mtu: u32, variant: Variant) -> Self {
        Self {
            queue: VecDeque::new(),
            bytes: 0,
            target: target_ns as Time,
            interval: interval_ns as Time,
            maxpacket: u64::from(mtu),
            variant,
            first_above_time: 0,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn enqueue(&mut self, p: Pkt, now: u64) {
        self.bytes += u64::from(p.len);
        self.queue.push_back((p, now as Time));
    }

    /// Removes the head with its timestamp.
    fn pop(&mut self) -> Option<(Pkt, Time)> {
        let (p, t) = self.queue.pop_front()?;
        self.bytes -= u64::from(p.len);
        Some((p, t))
    }

    /// Removes the head (FQ-CoDel's drop from the fattest flow).
    pub fn drop_head(&mut self) -> Option<Pkt> {
        self.pop().map(|(p, _)| p)
    }

    fn control_law(&self, t: Time, count: u32) -> Time {
        // t + INTERVAL / sqrt(count), the quotient truncated to whole
        // nanoseconds before the sum (time_t is an integer).
        t + (self.interval as f64 / f64::from(count).sqrt()) as Time
    }

    fn dodequeue(&mut self, now: Time) -> DodequeueResult {
        let Some((p, tstamp)) = self.pop() else {
            self.first_above_time = 0;
            return DodequeueResult {
                p: None,
                ok_to_drop: false,
            };
        };
        let mut r = DodequeueResult {
            p: Some(p),
            ok_to_drop: false,
        };
        let sojourn_time = now - tstamp;
        if sojourn_time < self.target || self.bytes <= self.maxpacket {
            // went below, so we'll stay below for at least an interval
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            // just went above from below: if we stay above for an
            // interval, it is ok to drop
            self.first_above_time = now + self.interval;
        } else if self.variant == Variant::StrictAboveTime {
            r.ok_to_drop = now > self.first_above_time;
        } else if now >= self.first_above_time {
            r.ok_to_drop = true;
        }
        r
    }

    /// The RFC's `dequeue()`: the packet sent (if any), with every packet
    /// dropped on the way appended to `dropped`.
    pub fn dequeue(&mut self, now: u64, dropped: &mut Vec<Pkt>) -> Option<Pkt> {
        let now = now as Time;
        let mut r = self.dodequeue(now);
        if r.p.is_none() {
            // an empty queue takes us out of dropping state
            self.dropping = false;
            return r.p;
        }
        if self.dropping {
            if !r.ok_to_drop {
                // sojourn time below target: leave dropping state
                self.dropping = false;
            }
            // It's time for the next drop. Drop the current packet and
            // dequeue the next. The dequeue might take us out of dropping
            // state; if not, schedule the next drop.
            while now >= self.drop_next && self.dropping {
                dropped.push(r.p.take().unwrap());
                self.count += 1;
                r = self.dodequeue(now);
                if !r.ok_to_drop {
                    self.dropping = false;
                } else if self.variant == Variant::ControlLawFromNow {
                    self.drop_next = self.control_law(now, self.count);
                } else {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                }
            }
        } else if r.ok_to_drop {
            // If we get here, we're not in dropping state. The ok_to_drop
            // return from dodequeue means that the sojourn time has been
            // above target for an interval, so enter dropping state.
            dropped.push(r.p.take().unwrap());
            r = self.dodequeue(now);
            self.dropping = true;
            // If min went above target close to when it last went below,
            // assume that the drop rate that controlled the queue on the
            // last cycle is a good starting point to control it now.
            let delta = self.count - self.lastcount;
            self.count = 1;
            if delta > 1
                && now - self.drop_next < 16 * self.interval
                && self.variant != Variant::NoReentryMemory
            {
                self.count = delta;
            }
            self.drop_next = self.control_law(now, self.count);
            self.lastcount = self.count;
        }
        r.p
    }
}

/// RFC 8290: buckets of [`RfcCodel`] queues, DRR over new and old lists.
pub struct FqModel {
    pub flows: Vec<RfcCodel>,
    deficit: Vec<i64>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    quantum: i64,
    limit: usize,
    ways: usize,
    /// Per set: which bucket each tag (a flow hash) owns.
    tags: Vec<HashMap<u32, usize>>,
    pub collisions: u64,
    variant: Variant,
}

impl FqModel {
    /// A new packet limit, from the next enqueue on (nothing dropped now).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    pub fn new(cfg: &fairway_core::aqm::FqCodelConfig, variant: Variant) -> Self {
        let c = cfg.codel;
        Self {
            flows: (0..cfg.buckets)
                .map(|_| RfcCodel::new(c.target_ns, c.interval_ns, c.mtu, variant))
                .collect(),
            deficit: vec![0; cfg.buckets as usize],
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: i64::from(cfg.quantum),
            limit: cfg.limit as usize,
            ways: cfg.ways as usize,
            tags: vec![HashMap::new(); (cfg.buckets / cfg.ways) as usize],
            collisions: 0,
            variant,
        }
    }

    pub fn bucket_of(&self, hash: u32) -> usize {
        // hash · buckets / 2^32, by the definition
        (u128::from(hash) * self.flows.len() as u128 / (1u128 << 32)) as usize
    }

    fn listed(&self, b: usize) -> bool {
        self.new_flows.contains(&b) || self.old_flows.contains(&b)
    }

    /// The bucket a packet of flow `hash` goes to, updating the tags and
    /// the collision count: its own tagged bucket, else the first bucket
    /// on no list scanning the set from home, else home (a collision).
    pub fn choose(&mut self, hash: u32) -> usize {
        let home = self.bucket_of(hash);
        if self.variant == Variant::WaysIgnored {
            return home;
        }
        let set = home / self.ways;
        let base = set * self.ways;
        if let Some(&b) = self.tags[set].get(&hash) {
            return b;
        }
        let start = if self.variant == Variant::ScanFromSetStart {
            0
        } else {
            home - base
        };
        let free = (0..self.ways)
            .map(|i| base + (start + i) % self.ways)
            .find(|&k| !self.listed(k));
        let b = match free {
            Some(k) => k,
            None => {
                self.collisions += 1;
                if self.variant != Variant::RetagOnCollision {
                    return home;
                }
                home
            }
        };
        self.tags[set].retain(|_, owned| *owned != b);
        self.tags[set].insert(hash, b);
        b
    }

    /// Queues `p`; returns the packet dropped for the limit, if any.
    pub fn enqueue(&mut self, hash: u32, p: Pkt, now: u64) -> Option<Pkt> {
        let b = self.choose(hash);
        self.flows[b].enqueue(p, now);
        if !self.new_flows.contains(&b) && !self.old_flows.contains(&b) {
            if self.variant == Variant::NoNewList {
                self.old_flows.push_back(b);
            } else {
                self.new_flows.push_back(b);
            }
            self.deficit[b] = self.quantum;
        }
        let total: usize = self.flows.iter().map(|f| f.queue.len()).sum();
        if total <= self.limit {
            return None;
        }
        let mut fattest = 0;
        for i in 0..self.flows.len() {
            if self.flows[i].bytes() > self.flows[fattest].bytes() {
                fattest = i;
            }
        }
        self.flows[fattest].drop_head()
    }

    pub fn dequeue(&mut self, now: u64, dropped: &mut Vec<Pkt>) -> Option<Pkt> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            let b = *list.front()?;
            if self.deficit[b] <= 0 {
                self.deficit[b] += self.quantum;
                list.pop_front();
                self.old_flows.push_back(b);
                continue;
            }
            if let Some(p) = self.flows[b].dequeue(now, dropped) {
                self.deficit[b] -= i64::from(p.len);
                return Some(p);
            }
            list.pop_front();
            if from_new && !self.old_flows.is_empty() && self.variant != Variant::NoOldPass {
                self.old_flows.push_back(b);
            }
        }
    }
}
