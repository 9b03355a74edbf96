//! dmClock's reservation and limit for one application (the mClock paper's
//! R and L tags, as Ceph's `dmclock` library applies them per client).
//!
//! An application may have a *reservation* r (a minimum rate) and a
//! *limit* l (a maximum), each in requests per second or bytes per second.
//! Its tags are real times: the next request is *due* for its reservation
//! at `R` and may be dispatched no earlier than `L`. Every dispatch of one
//! of its requests at `t`, whatever chose it, sets `R = max(R + cost/r,
//! t − 20 ms)` and `L = max(L + cost/l, t − 20 ms)` (cost: one request, or
//! its bytes), so late service is made up for, but never by a burst of
//! more than 20 ms worth; when
//! it becomes backlogged
//! after having nothing queued, its tags are brought up to now
//! (`R = max(R, now)`: idle time earns no credit), which is mClock's
//! `R_k = max(R_{k−1} + 1/r, arrival)`. Counting weight-based dispatches in
//! `R` is mClock's reduction of the R tags after a weight-phase request: an
//! application whose weight already gives it its reservation never needs
//! the reservation phase, so it gets `max(r, its weighted share)`, at most
//! `l`.
//!
//! How BFQ uses the tags ([`crate::bfq`]): before its own choice, the
//! backlogged application with the smallest `R ≤ now` (and `L ≤ now`) is
//! served one request (the constraint-based phase); an application with
//! `L > now` is not eligible for B-WF2Q+ until then, and an active one
//! reaching its limit ends its turn (the limit is non-work-conserving).
//!
//! Tags are kept in units of 2^-16 ns, so a rate's cost per request (down
//! to a fraction of a nanosecond at the largest rates) accumulates without
//! drift.

use crate::request::{DiskConfigError, Nanos, SECTOR_BYTES};

/// Largest rate in requests per second.
pub const MAX_IOPS: u64 = 10_000_000;
/// Smallest and largest rates in bytes per second: one sector per second
/// up to 2^40 (1 TiB/s).
pub const MIN_BYTES_PER_SEC: u64 = SECTOR_BYTES;
/// See [`MIN_BYTES_PER_SEC`].
pub const MAX_BYTES_PER_SEC: u64 = 1 << 40;

const SHIFT: u32 = 16;

/// Lateness of a client's service that is still made up for: 20 ms, a
/// few requests of other clients plus a loaded host's delay in running
/// the device thread. Beyond it, the time is not credited, so a client
/// never bursts above its limit, nor catches up on its reservation at the
/// others' expense, by more than this much of its rate (plus one
/// request).
pub const LATE_CREDIT: Nanos = 20_000_000;

/// A rate: a reservation or a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// Requests per second, `1..=10^7`.
    Iops(u64),
    /// Bytes per second, `512..=2^40`.
    BytesPerSec(u64),
}

impl Rate {
    fn check(self, name: &'static str) -> Result<(), DiskConfigError> {
        let (v, ok, allowed) = match self {
            Rate::Iops(v) => (v, (1..=MAX_IOPS).contains(&v), "1..=10000000 IOPS"),
            Rate::BytesPerSec(v) => (
                v,
                (MIN_BYTES_PER_SEC..=MAX_BYTES_PER_SEC).contains(&v),
                "512..=1099511627776 bytes/s",
            ),
        };
        if ok {
            Ok(())
        } else {
            Err(DiskConfigError::OutOfRange {
                name,
                value: v as f64,
                allowed,
            })
        }
    }

    /// The time one request of `sectors` costs at this rate, 2^-16 ns.
    fn cost(self, sectors: u32) -> u128 {
        let (units, rate) = match self {
            Rate::Iops(r) => (1u128, r),
            Rate::BytesPerSec(r) => (u128::from(sectors) * u128::from(SECTOR_BYTES), r),
        };
        ((units * 1_000_000_000) << SHIFT) / u128::from(rate)
    }

    fn value(self) -> (u64, bool) {
        match self {
            Rate::Iops(v) => (v, true),
            Rate::BytesPerSec(v) => (v, false),
        }
    }
}

/// Checks a reservation and a limit: each in range, the same unit, the
/// reservation at most the limit.
pub fn validate(reservation: Option<Rate>, limit: Option<Rate>) -> Result<(), DiskConfigError> {
    if let Some(r) = reservation {
        r.check("reservation")?;
    }
    if let Some(l) = limit {
        l.check("limit")?;
    }
    if let (Some(r), Some(l)) = (reservation, limit) {
        let ((r, ri), (l, li)) = (r.value(), l.value());
        if ri != li {
            return Err(DiskConfigError::Inconsistent {
                rule: "reservation and limit must be in the same unit (IOPS or bytes/s)",
            });
        }
        if r > l {
            return Err(DiskConfigError::Inconsistent {
                rule: "reservation must not exceed limit",
            });
        }
    }
    Ok(())
}

fn scaled(t: Nanos) -> u128 {
    u128::from(t) << SHIFT
}

/// Rounds a tag up to the first nanosecond at which it is reached.
fn to_nanos(tag: u128) -> Nanos {
    let ns = tag.div_ceil(1 << SHIFT);
    ns.min(u128::from(Nanos::MAX)) as Nanos
}

/// One application's reservation, limit and tags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmTags {
    reservation: Option<Rate>,
    limit: Option<Rate>,
    r_next: u128,
    l_next: u128,
}

impl DmTags {
    /// Tags for a (validated) reservation and limit, both due at once.
    pub fn new(reservation: Option<Rate>, limit: Option<Rate>) -> Self {
        Self {
            reservation,
            limit,
            r_next: 0,
            l_next: 0,
        }
    }

    /// Whether the application has a reservation.
    pub fn reserved(&self) -> bool {
        self.reservation.is_some()
    }

    /// Whether the application has a limit.
    pub fn limited(&self) -> bool {
        self.limit.is_some()
    }

    /// The application becomes backlogged at `now` after having had
    /// nothing queued: idle time earns no credit.
    pub fn backlogged(&mut self, now: Nanos) {
        let n = scaled(now);
        self.r_next = self.r_next.max(n);
        self.l_next = self.l_next.max(n);
    }

    /// One of its requests of `sectors` was dispatched at `now`. Each tag
    /// moves to `max(tag + cost/rate, now − LATE_CREDIT)`: service that
    /// came late (the device was busy with others' requests, the host
    /// slow to run the device thread) is made up for, so the long-run
    /// rates reach the reservation and the limit, but lateness beyond
    /// [`LATE_CREDIT`] is not credited, so a burst above the limit, or of
    /// owed reservation, is bounded.
    pub fn dispatched(&mut self, sectors: u32, now: Nanos) {
        let floor = scaled(now.saturating_sub(LATE_CREDIT));
        if let Some(r) = self.reservation {
            self.r_next = (self.r_next + r.cost(sectors)).max(floor);
        }
        if let Some(l) = self.limit {
            self.l_next = (self.l_next + l.cost(sectors)).max(floor);
        }
    }

    /// When its next request is due for its reservation (`None`: none).
    pub fn due_at(&self) -> Option<Nanos> {
        self.reservation.map(|_| to_nanos(self.r_next))
    }

    /// The first instant its next request may be dispatched (`None`: no
    /// limit).
    pub fn allowed_at(&self) -> Option<Nanos> {
        self.limit.map(|_| to_nanos(self.l_next))
    }

    /// Whether its limit lets it be served at `now`.
    pub fn allows(&self, now: Nanos) -> bool {
        self.limit.is_none() || self.l_next <= scaled(now)
    }

    /// The reservation tag (2^-16 ns), for choosing the earliest.
    pub fn r_tag(&self) -> u128 {
        self.r_next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_advance_by_cost_and_catch_up_after_idleness() {
        let mut t = DmTags::new(Some(Rate::Iops(1000)), Some(Rate::Iops(2000)));
        t.backlogged(5_000);
        assert_eq!(t.due_at(), Some(5_000));
        t.dispatched(8, 5_000);
        assert_eq!(t.due_at(), Some(1_005_000));
        assert_eq!(t.allowed_at(), Some(505_000));
        // Served late by less than an interval: made up for.
        t.dispatched(8, 900_000);
        assert_eq!(t.allowed_at(), Some(1_005_000));
        assert_eq!(t.due_at(), Some(2_005_000));
        assert!(!t.allows(1_005_000 - 1) && t.allows(1_005_000));
        // Later than the credit: not made up for beyond it.
        t.dispatched(8, 30_000_000);
        assert_eq!(t.allowed_at(), Some(10_000_000));
        assert_eq!(t.due_at(), Some(10_000_000));
        t.backlogged(40_000_000);
        assert_eq!(t.due_at(), Some(40_000_000));
        let mut b = DmTags::new(Some(Rate::BytesPerSec(1 << 20)), None);
        b.dispatched(2048, 0); // 1 MiB
        assert_eq!(b.due_at(), Some(1_000_000_000));
        assert!(b.allows(0));
    }

    #[test]
    fn validation_names_the_parameter_and_the_rule() {
        let e = validate(Some(Rate::Iops(0)), None).unwrap_err();
        assert!(e.to_string().starts_with("reservation = 0"), "{e}");
        let e = validate(None, Some(Rate::BytesPerSec(100))).unwrap_err();
        assert!(e.to_string().starts_with("limit = 100"), "{e}");
        let e = validate(Some(Rate::Iops(10)), Some(Rate::Iops(9))).unwrap_err();
        assert!(e.to_string().contains("reservation must not exceed limit"));
        let e = validate(Some(Rate::Iops(10)), Some(Rate::BytesPerSec(1 << 20))).unwrap_err();
        assert!(e.to_string().contains("same unit"));
        validate(Some(Rate::Iops(10)), Some(Rate::Iops(10))).unwrap();
    }
}
