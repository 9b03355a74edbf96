//! CoDel, the Controlled Delay active queue manager (RFC 8289), as a
//! per-queue state machine that any FIFO can drive.
//!
//! # The algorithm
//!
//! A queue that absorbs a burst drains within a round trip; a queue whose
//! delay never falls below some level for a whole round trip is a *standing*
//! queue: it only adds delay. CoDel watches the one quantity that tells the
//! two apart, the **sojourn time** of each packet (dequeue time minus
//! enqueue time, so it needs no knowledge of the link rate), and acts only
//! on a standing queue:
//!
//! 1. **Estimator** (`pop_and_judge`). At each dequeue the head packet's
//!    sojourn time is compared with `target`. If it is below,
//!    or if at most `mtu` bytes remain behind it (one packet's transmission
//!    time may legitimately exceed `target` on a slow link), the queue is
//!    "good" and the above-target timer is cleared. Otherwise the timer is
//!    started at `now + interval` if it was clear; once `now` reaches it,
//!    the sojourn time has stayed above `target` for a full `interval`,
//!    i.e. the *minimum* delay over that interval exceeds `target`: the
//!    packet is *ok to drop*. The RFC's "timer clear" value 0 is an
//!    `Option` here (a deadline `now + interval ≥ 1` is never 0 anyway).
//!
//! 2. **Control law.** Reno-like senders reach throughput `∝ 1/(RTT·√p)`
//!    at drop probability `p`; to cut a sender's rate
//!    *linearly* over time, the gap between successive drops must shrink as
//!    `1/√count`. In the dropping state the next drop is therefore due at
//!    `drop_next = t + interval/√count`, `count` the drops of this episode.
//!    We compute `⌊interval/√count⌋` exactly, as `⌊√⌊interval²/count⌋⌋`
//!    (`⌊√⌊x⌋⌋ = ⌊√x⌋` for real `x ≥ 0`) in `u128` integer arithmetic
//!    ([`control_law`]). Linux instead keeps a 16-bit fixed-point `1/√count`
//!    updated by one Newton step per drop (after a re-entry it starts from
//!    the previous episode's value and converges over the next drops); the
//!    exact floor is what a floating-point transcription of the RFC's
//!    pseudocode truncates to, so the two drop at the same instants.
//!    It runs only when a drop is scheduled, never per forwarded packet.
//!
//! 3. **Dropping state** ([`CodelState::dequeue`]). Outside it, the first
//!    ok-to-drop packet is dropped, the next one dequeued, and the
//!    state entered with `drop_next = now + interval/√count`. Inside it:
//!    a good packet leaves the state; otherwise, while `now ≥ drop_next`,
//!    the head is dropped, `count` grows by one, the next packet is
//!    dequeued and judged, and `drop_next` advances by
//!    `interval/√count` from its *previous* value (a loop, because a large
//!    backlog may owe several drops at once). An empty queue leaves the
//!    state.
//!
//! 4. **Re-entry** (the `count`/`lastcount` memory). On entering the
//!    dropping state, `delta = count − lastcount` is the number of drops the
//!    previous episode added. If it is above 1 and that episode ended
//!    recently — `now − drop_next < 16 · interval`, the difference taken
//!    *signed* (a `drop_next` still in the future counts as recent, as in
//!    Linux's wrap-safe comparison; the RFC leaves the sign of its `time_t`
//!    open) — the drop rate that last controlled the queue is a better start
//!    than 1, so `count = delta`; else `count = 1`. Then `lastcount = count`.
//!
//! The RFC's comparisons are kept where Linux differs: a packet is ok to
//! drop once `now ≥ first_above_time` (Linux: `>`), and an empty queue
//! clears the above-target timer (Linux leaves it when the queue is found
//! empty on entry). Times are caller-given `u64` nanoseconds on any
//! monotonic clock; all time arithmetic saturates, so a clock stepping
//! backwards makes sojourn times 0 (never a panic). `count` saturates at
//! `u32::MAX` (4·10⁹ drops in one episode).
//!
//! # Constants
//!
//! * [`DEFAULT_TARGET_NS`] = 5 ms and [`DEFAULT_INTERVAL_NS`] = 100 ms: the
//!   RFC's defaults (`interval` a worst-case round trip of the traffic,
//!   `target` 5–10 % of it).
//! * [`DEFAULT_MTU`] = 1514 bytes: the RFC's `MAXPACKET` for Ethernet
//!   (1500-byte MTU plus the 14-byte header, as Linux's `psched_mtu`).
//! * [`REENTRY_INTERVALS`] = 16: how many intervals after the last scheduled
//!   drop an episode still counts as recent.
//! * Ranges: `interval` `1..=`[`MAX_INTERVAL_NS`] (60 s: an interval is a
//!   round-trip time; beyond a minute CoDel would never act within a
//!   connection's life), `target` `1..=interval` (a target above the
//!   interval could never be held for an interval first), `mtu`
//!   `1..=`[`MAX_MTU`] (64 KiB, the crate's largest packet). Outside:
//!   [`AqmConfigError`].

use super::error::AqmConfigError;

/// The RFC's default target: 5 ms.
pub const DEFAULT_TARGET_NS: u64 = 5_000_000;
/// The RFC's default interval: 100 ms.
pub const DEFAULT_INTERVAL_NS: u64 = 100_000_000;
/// The default `mtu` (the RFC's `MAXPACKET`): an Ethernet frame, bytes.
pub const DEFAULT_MTU: u32 = 1514;
/// Largest accepted interval: 60 s.
pub const MAX_INTERVAL_NS: u64 = 60_000_000_000;
/// Largest accepted `mtu`: 64 KiB, the crate's largest packet.
pub const MAX_MTU: u32 = 1 << 16;
/// A dropping episode that scheduled its last drop less than this many
/// intervals ago is recent: re-entry resumes its drop rate.
pub const REENTRY_INTERVALS: u64 = 16;

/// CoDel's parameters. Plain data: every constructor that takes them
/// ([`CodelFifo`](super::CodelFifo), [`FqCodel`](super::FqCodel)) checks
/// them with [`CodelParams::check`] first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// Acceptable standing delay, nanoseconds: `1..=interval_ns`.
    pub target_ns: u64,
    /// Window over which the delay must stay above target before CoDel
    /// drops, and the scale of the control law, nanoseconds:
    /// `1..=MAX_INTERVAL_NS`.
    pub interval_ns: u64,
    /// The RFC's `MAXPACKET`: with at most this many bytes left in the
    /// queue, a packet is never dropped. `1..=MAX_MTU` bytes.
    pub mtu: u32,
}

impl CodelParams {
    /// The RFC's defaults: target 5 ms, interval 100 ms, mtu 1514 bytes.
    pub const RFC8289: CodelParams = CodelParams {
        target_ns: DEFAULT_TARGET_NS,
        interval_ns: DEFAULT_INTERVAL_NS,
        mtu: DEFAULT_MTU,
    };

    /// `Ok` if every field is in its range; otherwise the error naming the
    /// first one out of range (interval, then target, then mtu).
    pub const fn check(&self) -> Result<(), AqmConfigError> {
        if self.interval_ns == 0 || self.interval_ns > MAX_INTERVAL_NS {
            return Err(AqmConfigError::Interval {
                interval_ns: self.interval_ns,
            });
        }
        if self.target_ns == 0 || self.target_ns > self.interval_ns {
            return Err(AqmConfigError::Target {
                target_ns: self.target_ns,
                interval_ns: self.interval_ns,
            });
        }
        if self.mtu == 0 || self.mtu > MAX_MTU {
            return Err(AqmConfigError::Mtu { mtu: self.mtu });
        }
        Ok(())
    }
}

/// A FIFO that CoDel can drive: it removes the head packet with its enqueue
/// time and tells how many bytes remain.
pub trait CodelQueue {
    /// What the queue holds.
    type Packet;
    /// Removes the head packet, returning it with the time (ns) it was
    /// enqueued; `None` if the queue is empty.
    fn pop(&mut self) -> Option<(Self::Packet, u64)>;
    /// Bytes still queued.
    fn bytes(&self) -> u64;
}

/// CoDel's per-queue state (the RFC's per-queue variables): 40 bytes on 64-bit targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelState {
    /// When the sojourn time will have been above target for an interval;
    /// `None` while it is below (the RFC's `first_above_time_ = 0`).
    first_above: Option<u64>,
    /// When the next drop is due while dropping.
    drop_next: u64,
    /// Drops of the current (or last) dropping episode, plus the count it
    /// re-entered with.
    count: u32,
    /// `count` right after the last entry into the dropping state.
    lastcount: u32,
    /// In the dropping state.
    dropping: bool,
}

/// `t + ⌊interval/√count⌋`, exactly (see the module doc); saturates at
/// `u64::MAX`. `count = 0` is treated as 1 (the state never passes it).
pub fn control_law(t: u64, interval_ns: u64, count: u32) -> u64 {
    let i = u128::from(interval_ns);
    let step = isqrt(i * i / u128::from(count.max(1)));
    t.saturating_add(step)
}

/// `⌊√n⌋` for `n < 2^128`, by Newton's iteration from above: the integer
/// iterates decrease strictly until they reach the floor.
fn isqrt(n: u128) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let bits = 128 - n.leading_zeros();
    // 2^⌈bits/2⌉ > √n: the iteration starts above the root.
    let mut x: u128 = 1 << bits.div_ceil(2);
    loop {
        let y = (x + n / x) >> 1;
        if y >= x {
            // x ≤ 2^64 - 1 since x² ≤ n < 2^128.
            return x as u64;
        }
        x = y;
    }
}

impl CodelState {
    /// A queue's state at rest (not dropping, no history).
    pub const fn new() -> Self {
        Self {
            first_above: None,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

    /// True while in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// The drop count of the current or last episode.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// `count` at the last entry into the dropping state.
    pub fn lastcount(&self) -> u32 {
        self.lastcount
    }

    /// When the next drop is due (meaningful while dropping).
    pub fn drop_next(&self) -> u64 {
        self.drop_next
    }

    /// The RFC's `dodequeue`: removes the head and judges it (is it ok to
    /// drop?). Updates the above-target timer.
    fn pop_and_judge<Q: CodelQueue>(
        &mut self,
        p: &CodelParams,
        q: &mut Q,
        now: u64,
    ) -> Option<(Q::Packet, bool)> {
        let Some((packet, enqueued)) = q.pop() else {
            self.first_above = None;
            return None;
        };
        let sojourn = now.saturating_sub(enqueued);
        if sojourn < p.target_ns || q.bytes() <= u64::from(p.mtu) {
            self.first_above = None;
            return Some((packet, false));
        }
        match self.first_above {
            None => {
                self.first_above = Some(now.saturating_add(p.interval_ns));
                Some((packet, false))
            }
            Some(deadline) => Some((packet, now >= deadline)),
        }
    }

    /// Dequeues the next packet to send from `q` at time `now` (ns), handing
    /// every packet CoDel drops on the way to `drop` (in queue order). `p`
    /// must have passed [`CodelParams::check`] (the constructors that take
    /// parameters do it); out-of-range values are not unsafe, only
    /// meaningless.
    pub fn dequeue<Q: CodelQueue>(
        &mut self,
        p: &CodelParams,
        q: &mut Q,
        now: u64,
        drop: &mut impl FnMut(Q::Packet),
    ) -> Option<Q::Packet> {
        let Some((mut packet, ok_to_drop)) = self.pop_and_judge(p, q, now) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                drop(packet);
                self.count = self.count.saturating_add(1);
                let Some((next, next_ok)) = self.pop_and_judge(p, q, now) else {
                    // The RFC's null packet: never ok to drop, so it ends
                    // the episode.
                    self.dropping = false;
                    return None;
                };
                packet = next;
                if next_ok {
                    self.drop_next = control_law(self.drop_next, p.interval_ns, self.count);
                } else {
                    self.dropping = false;
                }
            }
            return Some(packet);
        }
        if !ok_to_drop {
            return Some(packet);
        }
        drop(packet);
        let next = self.pop_and_judge(p, q, now);
        self.enter_dropping(p, now);
        next.map(|(packet, _)| packet)
    }

    /// Entry into the dropping state after its first drop: the re-entry
    /// rule for `count`, then the first deadline.
    fn enter_dropping(&mut self, p: &CodelParams, now: u64) {
        self.dropping = true;
        let delta = self.count.saturating_sub(self.lastcount);
        // `now − drop_next < 16·interval`, signed: true whenever drop_next
        // is still ahead.
        let recent = now < self.drop_next
            || now - self.drop_next < REENTRY_INTERVALS.saturating_mul(p.interval_ns);
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.drop_next = control_law(now, p.interval_ns, self.count);
        self.lastcount = self.count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_is_the_floor_of_the_root() {
        for n in 0u128..10_000 {
            let r = u128::from(isqrt(n));
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "n = {n}");
        }
        for &n in &[
            u128::MAX,
            (u128::from(u64::MAX) * u128::from(u64::MAX)),
            1 << 100,
            3_600_000_000_000_000_000_000,
        ] {
            let r = u128::from(isqrt(n));
            assert!(r * r <= n, "n = {n}");
            assert!(
                r == u128::from(u64::MAX) || (r + 1) * (r + 1) > n,
                "n = {n}"
            );
        }
    }

    #[test]
    fn control_law_matches_the_rfc_schedule() {
        assert_eq!(control_law(7, 100_000_000, 1), 100_000_007);
        assert_eq!(control_law(0, 100_000_000, 4), 50_000_000);
        // 100 ms / √2 = 70 710 678.118… ns
        assert_eq!(control_law(0, 100_000_000, 2), 70_710_678);
        assert_eq!(control_law(u64::MAX - 1, 10, 1), u64::MAX);
        assert_eq!(control_law(0, 100, 0), 100);
    }

    #[test]
    fn parameters_are_checked_in_order_with_their_ranges() {
        assert_eq!(CodelParams::RFC8289.check(), Ok(()));
        let p = |target_ns, interval_ns, mtu| CodelParams {
            target_ns,
            interval_ns,
            mtu,
        };
        assert_eq!(
            p(1, 0, 1).check(),
            Err(AqmConfigError::Interval { interval_ns: 0 })
        );
        assert_eq!(
            p(1, MAX_INTERVAL_NS + 1, 1).check(),
            Err(AqmConfigError::Interval {
                interval_ns: MAX_INTERVAL_NS + 1
            })
        );
        assert_eq!(p(1, MAX_INTERVAL_NS, 1).check(), Ok(()));
        assert_eq!(
            p(0, 10, 1).check(),
            Err(AqmConfigError::Target {
                target_ns: 0,
                interval_ns: 10
            })
        );
        assert_eq!(
            p(11, 10, 1).check(),
            Err(AqmConfigError::Target {
                target_ns: 11,
                interval_ns: 10
            })
        );
        assert_eq!(p(10, 10, 1).check(), Ok(()));
        assert_eq!(p(1, 10, 0).check(), Err(AqmConfigError::Mtu { mtu: 0 }));
        assert_eq!(
            p(1, 10, MAX_MTU + 1).check(),
            Err(AqmConfigError::Mtu { mtu: MAX_MTU + 1 })
        );
        assert_eq!(p(1, 10, MAX_MTU).check(), Ok(()));
    }
}
