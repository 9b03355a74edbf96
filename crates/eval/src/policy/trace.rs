//! Trace-driven policy runs: given arrivals `(time_ns, flow, len)` in
//! time order, the departures of a policy tree feeding one constant-rate
//! link, in one pass — what the PIFO-tree artifacts record when they feed
//! a packet capture through FCFS, strict, round-robin, WFQ and HPFQ trees.
//!
//! A departure's time is the instant the link starts sending it (the
//! tree's dequeue, as in [`super::run`]); the link is then busy for
//! `len · 10^9 / link` ns. Its queueing delay is departure time minus
//! arrival time. Packet ranks come from the policy file's annotators, as
//! in a generated run (`deadline_us` relative to the arrival,
//! `message_bytes` counted down per flow).
//!
//! Memory is the tree's pre-allocated slots and a few words per flow: a
//! packet allocates nothing, departures go to the caller's sink as they
//! happen. Packets the tree refuses (every slot in use, or a rank outside
//! a queue's horizon) are counted in the [`TraceSummary`] with the index
//! of the first, never silently lost.

use fairway_core::policy::{tx_ns, BuildError, PolicyEnqueueErrorKind, PolicyTree, MAX_RATE};
use fairway_core::Packet;
use fairway_policy_file::{PolicyFile, RankSource};
use std::fmt;

/// One packet offered to the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Arrival time, ns; non-decreasing along the trace.
    pub time_ns: u64,
    /// Policy flow index (order of the policy file's flows).
    pub flow: u32,
    /// Bytes, `1..=` the policy's `max_packet_len`.
    pub len: u32,
}

/// One packet the link sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    /// When the link started sending it, ns.
    pub time_ns: u64,
    /// Policy flow index.
    pub flow: u32,
    /// Bytes.
    pub len: u32,
    /// Departure minus arrival, ns.
    pub queueing_delay_ns: u64,
}

/// What a replay did besides its departures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceSummary {
    /// Arrivals offered.
    pub offered: u64,
    /// Departures sent to the sink.
    pub departed: u64,
    /// Arrivals refused: every slot in use.
    pub refused_full: u64,
    /// Arrivals refused: rank outside a queue's horizon (or decreasing).
    pub refused_rank: u64,
    /// Index (0-based, in the trace) of the first refused arrival.
    pub first_refused: Option<u64>,
    /// Bytes offered and accepted.
    pub bytes_in: u64,
    /// Bytes departed.
    pub bytes_out: u64,
}

/// Why a replay stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceError {
    /// The policy's tree did not build.
    Policy(BuildError),
    /// The link rate is outside `1..=MAX_RATE` bytes/s.
    Link(u64),
    /// Arrival `index` is earlier than the one before it.
    Unordered {
        /// 0-based index in the trace.
        index: u64,
        /// Its time, ns.
        time_ns: u64,
        /// The previous arrival's time, ns.
        previous_ns: u64,
    },
    /// Arrival `index` names a flow the policy does not have.
    Flow {
        /// 0-based index in the trace.
        index: u64,
        /// The flow index given.
        flow: u32,
        /// The policy's flows.
        flows: u32,
    },
    /// Arrival `index` has a length outside `1..=max_packet_len`.
    Len {
        /// 0-based index in the trace.
        index: u64,
        /// The length given.
        len: u32,
        /// The policy's `max_packet_len`.
        max: u32,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Policy(e) => write!(f, "policy: {e}"),
            TraceError::Link(l) => write!(
                f,
                "link {l} B/s outside 1..={MAX_RATE} B/s (the policy tree's rate ceiling (8.8 Tbit/s))"
            ),
            TraceError::Unordered {
                index,
                time_ns,
                previous_ns,
            } => write!(
                f,
                "arrival {index}: time {time_ns} ns before the previous arrival's {previous_ns} ns \
                 (arrivals must be in non-decreasing time order)"
            ),
            TraceError::Flow { index, flow, flows } => write!(
                f,
                "arrival {index}: flow {flow} outside 0..{flows} (the policy's flows)"
            ),
            TraceError::Len { index, len, max } => write!(
                f,
                "arrival {index}: len {len} outside 1..={max} (the policy's max_packet_len: the \
                 tree refuses longer packets)"
            ),
        }
    }
}

impl std::error::Error for TraceError {}

/// A queued packet: its length and arrival time.
struct Pkt {
    len: u32,
}

impl Packet for Pkt {
    fn len(&self) -> u32 {
        self.len
    }
}

/// Replays `arrivals` through the tree of `policy` on a link of `link`
/// bytes/s, handing every departure to `sink` in departure order, until
/// the trace is exhausted and the tree empty (a rate-limited tree drains
/// at its limits). An arrival out of order or out of range stops the
/// replay with its index; departures before it have been sunk.
pub fn replay<I, S>(
    policy: &PolicyFile,
    link: u64,
    arrivals: I,
    mut sink: S,
) -> Result<TraceSummary, TraceError>
where
    I: IntoIterator<Item = Arrival>,
    S: FnMut(Departure),
{
    if link == 0 || link > MAX_RATE {
        return Err(TraceError::Link(link));
    }
    let mut tree: PolicyTree<Pkt> = PolicyTree::build(&policy.spec).map_err(TraceError::Policy)?;
    let flows = policy.spec.flows.len() as u32;
    let max = policy.spec.max_packet_len;
    // Bytes left in each flow's current message (pFabric ranks).
    let mut remaining = vec![0u64; flows as usize];
    let mut sum = TraceSummary::default();
    let mut arrivals = arrivals.into_iter().peekable();
    let (mut now, mut link_free, mut previous) = (0u64, 0u64, 0u64);
    loop {
        while let Some(&a) = arrivals.peek().filter(|a| a.time_ns <= now) {
            arrivals.next();
            let index = sum.offered;
            if a.time_ns < previous {
                return Err(TraceError::Unordered {
                    index,
                    time_ns: a.time_ns,
                    previous_ns: previous,
                });
            }
            previous = a.time_ns;
            if a.flow >= flows {
                return Err(TraceError::Flow {
                    index,
                    flow: a.flow,
                    flows,
                });
            }
            if a.len == 0 || a.len > max {
                return Err(TraceError::Len {
                    index,
                    len: a.len,
                    max,
                });
            }
            let rank = match policy.ranks[a.flow as usize] {
                RankSource::None => 0,
                RankSource::Deadline(d) => a.time_ns.saturating_add(d),
                RankSource::Remaining(m) => {
                    let r = &mut remaining[a.flow as usize];
                    if *r == 0 {
                        *r = m;
                    }
                    let rank = *r;
                    *r = r.saturating_sub(u64::from(a.len));
                    rank
                }
            };
            sum.offered += 1;
            match tree.enqueue(a.time_ns, a.flow, Pkt { len: a.len }, rank) {
                Ok(_) => sum.bytes_in += u64::from(a.len),
                Err(e) => {
                    match e.kind {
                        PolicyEnqueueErrorKind::Full { .. } => sum.refused_full += 1,
                        _ => sum.refused_rank += 1,
                    }
                    sum.first_refused.get_or_insert(index);
                }
            }
        }
        if now >= link_free {
            if let Some(s) = tree.dequeue(now) {
                let len = s.packet.len;
                sink(Departure {
                    time_ns: now,
                    flow: s.flow,
                    len,
                    queueing_delay_ns: now - s.enqueued_at,
                });
                sum.departed += 1;
                sum.bytes_out += u64::from(len);
                link_free = now + tx_ns(len, link);
            }
        }
        // The next event: a link slot, a shaper release or an arrival.
        let mut next = u64::MAX;
        if link_free > now {
            next = link_free;
        } else if let Some(t) = tree.next_eligible(now) {
            next = t.max(now);
        }
        if let Some(a) = arrivals.peek() {
            // An arrival in the past is refused at the top of the loop.
            next = next.min(a.time_ns.max(now));
        }
        if next == u64::MAX {
            return Ok(sum);
        }
        // A release due now that the tree did not serve yet is retried a
        // nanosecond later, so the clock always advances.
        now = if next == now && arrivals.peek().is_none_or(|a| a.time_ns > now) {
            next + 1
        } else {
            next
        };
    }
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
