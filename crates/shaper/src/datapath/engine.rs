//! The engine: a frame's way from reception to sending or a drop, in
//! both directions, with the clock passed in. [`super::run`] feeds it
//! from the sockets; the tests feed it in simulated time.
//!
//! A frame is received into a pool slot ([`Engine::receive`]),
//! classified, and either queued in its circuit (or the default class),
//! or put on the direction's unshaped FIFO (not IP, or unclaimed without
//! a default class), or dropped (too large, no free slot, FQ-CoDel's
//! overflow). [`Engine::next`] hands out the next frame to send (the
//! unshaped FIFOs first, then the two trees in turn); the caller sends
//! it and reports with [`Engine::sent`], which frees its slot. CoDel's
//! drops free theirs as they happen. Nothing is allocated per frame.

use super::classify::{Class, Classifier};
use super::headers::parse;
use super::pool::{FrameRef, Pool, PoolError, DEFAULT_MTU};
use super::snapshot::{Layout, Raw, SideView, Snapshot};
use super::stats::{Count, Counters, DropReason, Report, Row};
use super::tree::{leaf_limit, Tree, LEAF_BUCKETS};
use super::watch::{StatsTooLarge, Watch};
use crate::plan::Dir;
use crate::validate::Checked;
use fairway_core::aqm::AqmConfigError;
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

/// Frames the pool holds (24 MiB of slots at an MTU of 1500), about 250 ms of a 1 Gbit/s
/// link in full-size frames. When all are queued, new frames are dropped
/// (counted as no slot).
pub const POOL_SLOTS: u32 = 16_384;
/// The most memory the circuits' queues may take (their FQ-CoDel buckets
/// and packet records, both directions), bytes: checked before anything
/// is allocated, since a plan at the circuit limit with high rates would
/// otherwise take more than a shaper's machine has.
pub const MAX_QUEUE_BYTES: u64 = 4 << 30;
/// Bytes per FQ-CoDel bucket and per packet record, as allocated (an
/// upper bound on 64-bit targets).
const BUCKET_BYTES: u64 = 96;
const RECORD_BYTES: u64 = 40;

/// Why the engine cannot be built.
#[derive(Debug)]
pub enum EngineError {
    /// The queues would take more than [`MAX_QUEUE_BYTES`].
    Memory {
        /// What they would take.
        bytes: u64,
    },
    /// A circuit's FQ-CoDel configuration was refused.
    Aqm(AqmConfigError),
    /// The statistics would take too much memory.
    Stats(StatsTooLarge),
    /// The frame pool would take more than its limit.
    Pool(PoolError),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Memory { bytes } => write!(
                f,
                "the circuits' queues would take {bytes} bytes, above the limit of {MAX_QUEUE_BYTES} \
                 (each circuit holds 100 ms of frames at its max rate, both directions)"
            ),
            EngineError::Aqm(e) => write!(f, "a circuit's FQ-CoDel: {e}"),
            EngineError::Stats(e) => e.fmt(f),
            EngineError::Pool(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for EngineError {}

/// A frame to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Out {
    /// Its direction (download leaves by the subscribers' interface).
    pub dir: Dir,
    /// Its leaf; `None`: unshaped.
    pub leaf: Option<u32>,
    /// The frame.
    pub frame: FrameRef,
}

/// One direction (fields shared with [`super::reload`], which swaps them).
pub(super) struct Side {
    pub(super) classifier: Classifier,
    pub(super) tree: Tree<FrameRef>,
    pub(super) leaf: Vec<Counters>,
    pub(super) unshaped: Counters,
    pub(super) fifo: VecDeque<FrameRef>,
    /// The counters of the circuits reloads removed, summed.
    pub(super) removed: Counters,
}

/// Both directions, the pool, the counters.
pub struct Engine {
    pub(super) sides: [Side; 2],
    pub(super) pool: Pool,
    scratch: Vec<u8>,
    turn: usize,
    pub(super) names: Vec<String>,
    /// The plan running ([`super::reload`] diffs the next one against it).
    pub(super) plan: Arc<Checked>,
    /// Rates and delays ([`super::watch`]).
    pub(super) watch: Watch,
    pub(super) layout: Arc<Layout>,
    start_ns: u64,
    /// The time of the last [`Engine::next`]: a frame's send time.
    next_ns: u64,
}

fn side(d: Dir) -> usize {
    match d {
        Dir::Download => 0,
        Dir::Upload => 1,
    }
}

/// The names of a plan's leaves, as the report shows them.
pub(super) fn leaf_names(c: &Checked) -> Vec<String> {
    let mut names: Vec<String> = c
        .plan
        .circuits
        .iter()
        .map(|k| format!("circuit {}", k.id))
        .collect();
    if c.plan.default_class.is_some() {
        names.push("default".into());
    }
    names
}

/// The memory the queues of a plan take, bytes.
pub fn queue_bytes(c: &Checked) -> u64 {
    let plan = &c.plan;
    let leaves = plan
        .circuits
        .iter()
        .map(|k| k.rates)
        .chain(plan.default_class.iter().map(|d| d.rates));
    let mut bytes = 0u64;
    for r in leaves {
        for d in Dir::BOTH {
            let records = u64::from(leaf_limit(r.get(d).max)) + 1;
            bytes += u64::from(LEAF_BUCKETS) * BUCKET_BYTES + records * RECORD_BYTES;
        }
    }
    bytes
}

impl Engine {
    /// The engine of a checked plan, as of `now_ns`, its pool sized for
    /// Ethernet's MTU.
    pub fn new(c: &Checked, now_ns: u64) -> Result<Self, EngineError> {
        let pool = Pool::new(POOL_SLOTS, DEFAULT_MTU).map_err(EngineError::Pool)?;
        Self::with_pool(c, now_ns, pool)
    }

    /// The engine of a checked plan with the frame pool `pool` (sized for
    /// the interfaces' MTU, see [`Pool::new`]).
    pub fn with_pool(c: &Checked, now_ns: u64, pool: Pool) -> Result<Self, EngineError> {
        let bytes = queue_bytes(c);
        if bytes > MAX_QUEUE_BYTES {
            return Err(EngineError::Memory { bytes });
        }
        let watch = Watch::new(c, POOL_SLOTS).map_err(EngineError::Stats)?;
        let make = |d: Dir| -> Result<Side, EngineError> {
            let tree = Tree::new(c, d, now_ns).map_err(EngineError::Aqm)?;
            Ok(Side {
                classifier: Classifier::new(c, d),
                leaf: vec![Counters::default(); tree.leaves()],
                tree,
                unshaped: Counters::default(),
                fifo: VecDeque::with_capacity(POOL_SLOTS as usize),
                removed: Counters::default(),
            })
        };
        Ok(Engine {
            sides: [make(Dir::Download)?, make(Dir::Upload)?],
            scratch: vec![0; pool.slot_bytes()],
            pool,
            turn: 0,
            names: leaf_names(c),
            plan: Arc::new(c.clone()),
            watch,
            layout: Arc::new(Layout::of(c)),
            start_ns: now_ns,
            next_ns: now_ns,
        })
    }

    /// The plan running.
    pub fn plan(&self) -> &Arc<Checked> {
        &self.plan
    }

    /// Receives one frame of direction `dir` at `now_ns`: `recv` fills
    /// the buffer it is given and returns the frame's full length (which
    /// may exceed the buffer), or `None` if there is none. True if a
    /// frame was received.
    pub fn receive(
        &mut self,
        dir: Dir,
        now_ns: u64,
        recv: impl FnOnce(&mut [u8]) -> Option<usize>,
    ) -> bool {
        let slot = self.pool.take();
        let max_frame = self.pool.max_frame();
        let buf = match slot {
            Some(s) => self.pool.slot_mut(s),
            None => &mut self.scratch[..],
        };
        let Some(len) = recv(buf) else {
            if let Some(s) = slot {
                self.pool.give(s);
            }
            return false;
        };
        let seen = &buf[..len.min(max_frame)];
        let headers = parse(seen);
        let side = &mut self.sides[side(dir)];
        let class = side.classifier.classify(headers.as_ref());
        let leaf = match class {
            Class::Circuit(c) => Some(c),
            Class::Default => Some(side.leaf.len() as u32 - 1),
            Class::NotIp | Class::Unclaimed => None,
        };
        let counters = match leaf {
            Some(l) => &mut side.leaf[l as usize],
            None => &mut side.unshaped,
        };
        counters.received.add(len);
        let refuse = match slot {
            _ if len > max_frame || len == 0 => Some(DropReason::TooLarge),
            None => Some(DropReason::NoSlot),
            Some(_) => None,
        };
        if let Some(reason) = refuse {
            counters.drop(reason, len);
            if let Some(s) = slot {
                self.pool.give(s);
            }
            return true;
        }
        let frame = FrameRef {
            slot: slot.unwrap_or_default(),
            len: len as u32,
        };
        self.watch.arrived(frame.slot, now_ns);
        let Some(l) = leaf else {
            side.fifo.push_back(frame);
            return true;
        };
        let hash = headers.map_or(0, |h| h.flow_hash());
        // Counted here, not read from the queue: the circuit's counters
        // are the engine's (a reload keeps them with the circuit).
        let collided = side.tree.collisions(l);
        let queued = side.tree.enqueue(l, hash, frame, now_ns);
        if side.tree.collisions(l) != collided {
            side.leaf[l as usize].collisions += 1;
        }
        match queued {
            Ok(None) => {}
            Ok(Some(victim)) => {
                side.leaf[l as usize].drop(DropReason::Overflow, victim.len as usize);
                self.pool.give(victim.slot);
            }
            Err(e) => {
                side.leaf[l as usize].drop(DropReason::TooLarge, len);
                self.pool.give(e.packet.slot);
            }
        }
        true
    }

    /// The next frame to send at `now_ns`, if any may go.
    pub fn next(&mut self, now_ns: u64) -> Option<Out> {
        self.next_ns = now_ns;
        for (d, dir) in Dir::BOTH.into_iter().enumerate() {
            if let Some(frame) = self.sides[d].fifo.pop_front() {
                return Some(Out {
                    dir,
                    leaf: None,
                    frame,
                });
            }
        }
        for k in 0..2 {
            let d = (self.turn + k) % 2;
            let Side { tree, leaf, .. } = &mut self.sides[d];
            let pool = &mut self.pool;
            let mut on_drop = |l: u32, f: FrameRef| {
                leaf[l as usize].drop(DropReason::Codel, f.len as usize);
                pool.give(f.slot);
            };
            if let Some((l, frame)) = tree.dequeue(now_ns, &mut on_drop) {
                self.turn = (d + 1) % 2;
                return Some(Out {
                    dir: Dir::BOTH[d],
                    leaf: Some(l),
                    frame,
                });
            }
        }
        None
    }

    /// A frame's bytes.
    pub fn frame(&self, f: FrameRef) -> &[u8] {
        self.pool.frame(f)
    }

    /// Reports a frame [`Self::next`] gave out as sent (`ok`) or as a
    /// failed send; frees its slot.
    pub fn sent(&mut self, out: Out, ok: bool) {
        let side = &mut self.sides[side(out.dir)];
        let c = match out.leaf {
            Some(l) => &mut side.leaf[l as usize],
            None => &mut side.unshaped,
        };
        let len = out.frame.len as usize;
        if ok {
            c.sent.add(len);
            let leaf = out.leaf.map_or(self.watch.unshaped(), |l| l as usize);
            let (slot, len) = (out.frame.slot, out.frame.len);
            self.watch.sent(out.dir, leaf, slot, len, self.next_ns);
        } else {
            c.drop(DropReason::SendFailed, len);
        }
        self.pool.give(out.frame.slot);
    }

    /// When to look again for a queued frame to send (`None`: nothing
    /// queued in the trees; unshaped frames go at once): no frame may go
    /// before, though one may still have to wait then.
    pub fn ready_at(&self) -> Option<u64> {
        self.sides.iter().filter_map(|s| s.tree.ready_at()).min()
    }

    /// The loop's part of the statistics at `now_ns`
    /// ([`super::snapshot::raw`]): numbers only, no histogram, no name.
    pub fn raw_stats(&self, now_ns: u64) -> Raw {
        let view = |s: &Side| {
            let fifo = Count {
                packets: s.fifo.len() as u64,
                bytes: s.fifo.iter().map(|f| u64::from(f.len)).sum(),
            };
            (s.unshaped, fifo)
        };
        let [down, up] = &self.sides;
        let (dc, df) = view(down);
        let (uc, uf) = view(up);
        let db = |l: u32| backlog(&down.tree, l);
        let ub = |l: u32| backlog(&up.tree, l);
        let sides = [
            SideView {
                leaves: &down.leaf,
                backlog: &db,
                unshaped: dc,
                unshaped_backlog: df,
            },
            SideView {
                leaves: &up.leaf,
                backlog: &ub,
                unshaped: uc,
                unshaped_backlog: uf,
            },
        ];
        super::snapshot::raw(&self.watch, sides, self.start_ns, now_ns)
    }

    /// The names of the rows of [`Self::raw_stats`].
    pub fn layout(&self) -> &std::sync::Arc<Layout> {
        &self.layout
    }

    /// The statistics at `now_ns`, named and summed
    /// ([`super::snapshot::assemble`]).
    pub fn snapshot(&self, now_ns: u64) -> Snapshot {
        super::snapshot::assemble(&self.layout, &self.raw_stats(now_ns))
    }

    /// The loop's turn for the statistics: rolls the rate and delay
    /// windows of a few classes ([`super::watch::Watch::sweep`]).
    pub fn sweep_stats(&mut self, now_ns: u64) {
        self.watch.sweep(now_ns, super::watch::SWEEP_PER_TURN);
    }

    /// The counters so far, a row per class and direction that saw a
    /// frame.
    pub fn report(&self) -> Report {
        let mut rows = Vec::new();
        for (s, dir) in self.sides.iter().zip(Dir::BOTH) {
            for (l, c) in s.leaf.iter().enumerate() {
                if c.received.packets > 0 {
                    let b = s.tree.backlog(l as u32);
                    rows.push(Row {
                        dir,
                        class: self.names[l].clone(),
                        counters: *c,
                        queued: Count {
                            packets: b.packets,
                            bytes: b.bytes,
                        },
                    });
                }
            }
            if s.removed.received.packets > 0 {
                rows.push(Row {
                    dir,
                    class: "removed circuits".into(),
                    counters: s.removed,
                    queued: Count::default(),
                });
            }
            if s.unshaped.received.packets > 0 {
                let queued = Count {
                    packets: s.fifo.len() as u64,
                    bytes: s.fifo.iter().map(|f| u64::from(f.len)).sum(),
                };
                rows.push(Row {
                    dir,
                    class: "unshaped".into(),
                    counters: s.unshaped,
                    queued,
                });
            }
        }
        Report { rows }
    }
}

fn backlog(t: &Tree<FrameRef>, leaf: u32) -> Count {
    let b = t.backlog(leaf);
    Count {
        packets: b.packets,
        bytes: b.bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::super::headers::tests::udp4;
    use super::super::test_plan::{checked, circuit, plan};
    use super::*;
    use crate::plan::{Device, Prefix};
    use proptest::prelude::*;

    fn engine() -> Engine {
        let mut p = plan(10_000_000);
        circuit(&mut p, "a", None, Some(1_000_000), 2_000_000, None);
        p.devices.push(Device {
            id: "d".into(),
            name: "d".into(),
            circuit: "a".into(),
            mac: None,
            prefixes: vec![Prefix {
                net: "10.0.0.2/32".parse().unwrap(),
                at: super::super::test_plan::at(),
            }],
            at: super::super::test_plan::at(),
        });
        Engine::new(&checked(p), 0).unwrap()
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Receive a frame: to the circuit or not, its length, direction.
        Rx(bool, usize, bool),
        /// Not IP.
        Arp(bool),
        /// Let time pass (µs) and send what may go; maybe fail a send.
        Tick(u32, bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (any::<bool>(), 40usize..3000, any::<bool>()).prop_map(|(a, l, d)| Op::Rx(a, l, d)),
            1 => any::<bool>().prop_map(Op::Arp),
            3 => (0u32..20_000, any::<bool>()).prop_map(|(t, f)| Op::Tick(t, f)),
        ]
    }

    proptest! {
        /// Received = sent + dropped + queued, for every class and
        /// direction, after any sequence of frames, ticks and failed
        /// sends; and the pool's free slots plus the queued frames are
        /// all the slots.
        #[test]
        fn every_frame_is_accounted_for(ops in proptest::collection::vec(op(), 1..400)) {
            let mut e = engine();
            let mut now = 0u64;
            for o in ops {
                match o {
                    Op::Rx(ours, len, up) => {
                        let dst = if ours { [10, 0, 0, 2] } else { [10, 0, 0, 3] };
                        let mut f = udp4([8, 8, 8, 8], dst, 1, 2, None);
                        f.resize(len.max(f.len()), 0);
                        let dir = if up { Dir::Upload } else { Dir::Download };
                        e.receive(dir, now, |buf| {
                            let n = f.len().min(buf.len());
                            buf[..n].copy_from_slice(&f[..n]);
                            Some(f.len())
                        });
                    }
                    Op::Arp(up) => {
                        let dir = if up { Dir::Upload } else { Dir::Download };
                        e.receive(dir, now, |buf| { buf[12] = 8; buf[13] = 6; Some(60) });
                    }
                    Op::Tick(us, fail) => {
                        now += u64::from(us) * 1000;
                        let mut first = true;
                        while let Some(out) = e.next(now) {
                            e.sent(out, !(fail && first));
                            first = false;
                        }
                    }
                }
                let r = e.report();
                for row in &r.rows {
                    prop_assert!(row.balanced(), "{row:?}");
                }
                let (_, queued) = r.total();
                prop_assert_eq!(e.pool.free() as u64 + queued.packets, u64::from(POOL_SLOTS));
            }
        }
    }

    #[test]
    fn queues_above_the_memory_limit_are_refused_before_allocating() {
        // At 2^43 bit/s a circuit's limit is FQ-CoDel's 2^24 packets:
        // 1.3 GB both ways, so four circuits exceed 4 GiB; three fit.
        let top = 1u64 << 43;
        let mut p = plan(top);
        for id in ["a", "b", "c"] {
            circuit(&mut p, id, None, None, top, None);
        }
        let fits = queue_bytes(&checked(p.clone()));
        assert!(fits <= MAX_QUEUE_BYTES, "{fits}");
        circuit(&mut p, "d", None, None, top, None);
        match Engine::new(&checked(p), 0) {
            Err(EngineError::Memory { bytes }) => assert!(bytes > MAX_QUEUE_BYTES),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("four 8-Tbit/s circuits must be refused"),
        }
    }

    #[test]
    fn the_counts_add_up_in_a_simple_case() {
        let mut e = engine();
        let mut f = udp4([8, 8, 8, 8], [10, 0, 0, 2], 1, 2, None);
        // 1000 bytes: the burst (two full frames) lets 4 go at once.
        f.resize(1000, 0);
        for _ in 0..10 {
            assert!(e.receive(Dir::Download, 0, |b| {
                b[..f.len()].copy_from_slice(&f);
                Some(f.len())
            }));
        }
        assert!(e.receive(Dir::Download, 0, |b| {
            b[..f.len()].copy_from_slice(&f);
            Some(5000)
        }));
        assert!(!e.receive(Dir::Download, 0, |_| None));
        let mut sent = 0;
        while let Some(out) = e.next(0) {
            e.sent(out, true);
            sent += 1;
        }
        let r = e.report();
        assert_eq!(r.rows.len(), 1);
        let c = r.rows[0].counters;
        assert_eq!(
            (c.received.packets, c.too_large.packets, c.sent.packets),
            (11, 1, sent)
        );
        assert_eq!(r.rows[0].queued.packets, 10 - sent);
        assert_eq!(sent, 4);
    }
}
