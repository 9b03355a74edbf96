//! A queue as a file writes it (a node's `queue` or `reservation_queue`,
//! the `[shaper]`): its kind, `buckets` and `granularity`, each checked
//! at its value. A heap holds any rank, so `buckets` there would be
//! ignored and is refused; every other kind needs it.

use crate::error::{Locator, PolicyFileError};
use crate::limits::MAX_TOTAL_BUCKETS;
use fairway_core::policy::{QueueKind, QueueSpec};
use fairway_core::pq::FfsQueue;
use std::ops::Range;
use toml::Spanned;

/// The fields of a queue, borrowed from its table.
pub(crate) struct QueueFields<'a> {
    /// What the file calls the table (`queue`, `reservation_queue`,
    /// `[shaper]`), for messages.
    pub(crate) what: &'static str,
    /// The span of the whole table.
    pub(crate) span: Range<usize>,
    /// The kind's name.
    pub(crate) kind: &'a Spanned<String>,
    /// `buckets`, if given.
    pub(crate) buckets: Option<&'a Spanned<u32>>,
    /// `granularity`.
    pub(crate) granularity: &'a Spanned<u64>,
}

/// The queue `q` describes, every value in its range.
pub(crate) fn queue_spec(q: &QueueFields, at: &Locator) -> Result<QueueSpec, PolicyFileError> {
    let kind = QueueKind::parse(q.kind.get_ref()).ok_or_else(|| {
        at.error(
            q.kind.span(),
            format!(
                "unknown queue {:?} in {} (one of: {})",
                q.kind.get_ref(),
                q.what,
                QueueKind::ALL.map(|(n, _)| n).join(", ")
            ),
        )
    })?;
    let name = kind.name();
    let buckets = match (kind.holds_any_rank(), q.buckets) {
        (true, Some(b)) => {
            return Err(at.error(
                b.span(),
                format!(
                    "`buckets` of {} is ignored by {name} (a heap holds any rank): remove it",
                    q.what
                ),
            ))
        }
        (true, None) => 1,
        (false, None) => {
            return Err(at.error(
                q.span.clone(),
                format!("{} of kind {name} needs `buckets`", q.what),
            ))
        }
        (false, Some(b)) => {
            let v = *b.get_ref();
            let (min, max) = bucket_range(kind);
            if v < min || v > max || (kind.is_moving() && v % 2 == 1) {
                let even = if kind.is_moving() {
                    ", even (two halves)"
                } else {
                    ""
                };
                let why = if max == MAX_TOTAL_BUCKETS {
                    " (the limit on all queues of a file together)"
                } else {
                    ""
                };
                return Err(at.error(
                    b.span(),
                    format!(
                        "buckets {v} of {} outside {min}..={max}{even} for {name}{why}",
                        q.what
                    ),
                ));
            }
            v
        }
    };
    let g = *q.granularity.get_ref();
    if g == 0 {
        return Err(at.error(
            q.granularity.span(),
            format!(
                "granularity 0 of {} outside 1..={} (rank units per bucket)",
                q.what,
                u64::MAX
            ),
        ));
    }
    Ok(QueueSpec::new(kind, buckets, g))
}

/// The buckets a queue of `kind` accepts: FFS is one 1024-bit bitmap, cFFS
/// two halves; none may exceed what a whole file may hold.
fn bucket_range(kind: QueueKind) -> (u32, u32) {
    match kind {
        QueueKind::Ffs => (1, FfsQueue::MAX_BUCKETS),
        QueueKind::Cffs => (2, MAX_TOTAL_BUCKETS),
        _ => (1, MAX_TOTAL_BUCKETS),
    }
}

/// Buckets `q` allocates (a heap has none).
pub(crate) fn buckets_of(q: &QueueSpec) -> u64 {
    if q.kind.holds_any_rank() {
        0
    } else {
        u64::from(q.buckets)
    }
}
