//! A token bucket in exact integers: the rate limit of one node or
//! circuit in one direction.
//!
//! Tokens are counted in bit·ns per s, i.e. bits × 10⁹: in `dt`
//! nanoseconds a rate of `r` bit/s earns exactly `r · dt` of them, and a
//! frame of `L` bytes costs `8 · L · 10⁹`. No division, no rounding, no
//! float: over any interval a bucket lets through exactly what its rate
//! earned plus its burst.
//!
//! A frame may be sent while the tokens are not negative, and its cost may
//! take them below zero (as HTB's buckets): a frame larger than the burst
//! is never stuck, and the long-run rate is still exactly `r`, since the
//! debt is paid before the next frame. Tokens are capped at the burst:
//! the larger of [`BURST_NS`] at the rate and [`BURST_BYTES`], so that a
//! loop that wakes late does not lose rate (what it earned meanwhile is
//! kept, up to the burst) and an idle bucket cannot save more.

/// The burst in time at the rate: what a wake-up that comes this late
/// still gets back in full. A loaded machine wakes the loop milliseconds
/// late (the cost of a smaller burst is rate lost for good); the price of
/// a larger one is that an idle circuit may send this much of its rate at
/// once (12.5 KB at 10 Mbit/s).
pub const BURST_NS: u64 = 10_000_000;
/// The smallest burst, bytes: two full Ethernet frames.
pub const BURST_BYTES: u64 = 2 * 1514;

/// Tokens per byte: 8 bits × 10⁹.
const PER_BYTE: i128 = 8_000_000_000;

/// A token bucket at a fixed rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Bit/s.
    rate: u64,
    /// Tokens (bits × 10⁹); may be negative (a debt).
    tokens: i128,
    /// The cap on tokens.
    burst: i128,
    /// When `tokens` was last brought up to date, ns.
    at_ns: u64,
}

impl Bucket {
    /// A full bucket at `rate` bit/s, as of `now_ns`. A rate of 0 never
    /// earns: such a bucket allows one burst and then nothing.
    pub fn new(rate: u64, now_ns: u64) -> Self {
        let by_time = i128::from(rate) * i128::from(BURST_NS);
        let burst = by_time.max(i128::from(BURST_BYTES) * PER_BYTE);
        Bucket {
            rate,
            tokens: burst,
            burst,
            at_ns: now_ns,
        }
    }

    /// The rate, bit/s.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// Continues `old`'s tokens in this bucket (a new rate, maybe): what
    /// `old` holds at `now_ns`, at most this bucket's burst; a debt is
    /// kept, so a reload neither grants a fresh burst nor forgives one.
    pub fn carry(&mut self, old: &Bucket, now_ns: u64) {
        let mut o = *old;
        o.refill(now_ns);
        self.at_ns = o.at_ns.max(now_ns);
        self.tokens = o.tokens.min(self.burst);
    }

    /// Earns the tokens of the time since the last update (a clock that
    /// went back earns nothing).
    pub fn refill(&mut self, now_ns: u64) {
        if now_ns <= self.at_ns {
            return;
        }
        let dt = i128::from(now_ns - self.at_ns);
        self.at_ns = now_ns;
        self.tokens = (self.tokens + i128::from(self.rate) * dt).min(self.burst);
    }

    /// True if a frame may be sent now (tokens not negative).
    pub fn allows(&mut self, now_ns: u64) -> bool {
        self.refill(now_ns);
        self.tokens >= 0
    }

    /// Charges a frame of `bytes`.
    pub fn charge(&mut self, bytes: u32) {
        self.tokens -= i128::from(bytes) * PER_BYTE;
    }

    /// Nanoseconds from the last update until the bucket allows again
    /// (0 if it does); `u64::MAX` for a debt at rate 0.
    pub fn wait_ns(&self) -> u64 {
        if self.tokens >= 0 {
            return 0;
        }
        if self.rate == 0 {
            return u64::MAX;
        }
        let rate = i128::from(self.rate);
        let ns = (-self.tokens + rate - 1) / rate;
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    /// When the bucket allows again, ns (its last update plus
    /// [`Self::wait_ns`]).
    pub fn ready_at(&self) -> u64 {
        self.at_ns.saturating_add(self.wait_ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_lets_through_exactly_its_rate_plus_its_burst() {
        // 1 Mbit/s: burst 10 ms = 1250 bytes < 3028, so 3028 bytes.
        let mut b = Bucket::new(1_000_000, 0);
        let mut sent = 0u64;
        let mut now = 0u64;
        while now <= 1_000_000_000 {
            while b.allows(now) {
                b.charge(1000);
                sent += 1000;
            }
            now += 10_000;
        }
        // 1 s at 1 Mbit/s is 125,000 bytes; plus the burst and one
        // frame of debt at most.
        assert!(sent >= 125_000, "{sent}");
        assert!(sent <= 125_000 + 3028 + 1000, "{sent}");
    }

    #[test]
    fn a_carried_bucket_keeps_its_tokens_within_the_new_burst() {
        let mut old = Bucket::new(1_000_000, 0);
        old.charge(2000); // 3028 - 2000 bytes left
        let mut slower = Bucket::new(500_000, 0);
        slower.carry(&old, 0);
        assert_eq!(slower.tokens, 1028 * PER_BYTE);
        // A debt is kept; a full bucket is cut to the smaller burst.
        old.charge(5000);
        slower.carry(&old, 0);
        assert_eq!(slower.tokens, (3028 - 7000) * PER_BYTE);
        let mut fast = Bucket::new(1_000_000_000, 0);
        fast.carry(&Bucket::new(1_000_000, 0), 0);
        assert_eq!(fast.tokens, 3028 * PER_BYTE);
        let mut small = Bucket::new(1_000_000, 0);
        small.carry(&Bucket::new(1_000_000_000, 0), 5);
        assert_eq!((small.tokens, small.at_ns), (small.burst, 5));
    }

    #[test]
    fn waits_are_exact() {
        let mut b = Bucket::new(8_000, 0); // 1000 bytes/s
        while b.allows(0) {
            b.charge(1000);
        }
        let wait = b.wait_ns();
        assert!(!b.allows(wait - 1));
        assert!(b.allows(wait));
        assert_eq!(Bucket::new(0, 0).wait_ns(), 0);
    }
}
