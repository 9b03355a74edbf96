//! [`EngineConfig`]: the scheduler spec, how many requests may be in
//! flight on the device, how many clients and outstanding requests the
//! engine holds. [`EngineConfig::validate`] checks every value against its
//! stated range before anything is allocated or started.

use super::error::EngineError;
use crate::catalogue::{DiskSchedKind, DiskSchedSpec};

/// Largest `max_in_flight` (io_uring entries), the io_uring back-end's.
pub const MAX_IN_FLIGHT: u32 = crate::uring_device::MAX_IN_FLIGHT;
/// Largest `max_clients`: the schedulers keep a slot per possible client.
pub const MAX_CLIENTS: u32 = 1 << 16;
/// Largest `max_queued`: BFQ's own bound on queued requests.
pub const MAX_QUEUED: u32 = 1 << 20;
/// Default and smallest `max_request`, bytes: 128 KiB, the schedulers'
/// default L_max ([`crate::bfq::DEFAULT_L_MAX`] sectors).
pub const DEFAULT_MAX_REQUEST: u32 = crate::bfq::DEFAULT_L_MAX * 512;
/// Largest `max_request`, bytes (1 MiB): larger transfers add nothing a
/// device's own merging does not already give, and every buffer of that
/// size is held for the request's whole life.
pub const MAX_REQUEST_LIMIT: u32 = 1 << 20;

/// Which threads run the scheduler and issue the transfers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Submission {
    /// The engine's device thread does everything: a submission is sent
    /// to it, and it delivers every completion (callbacks run on it).
    /// Two thread hand-offs per request: in, and the completion back.
    #[default]
    DeviceThread,
    /// The submitting thread runs the scheduler and issues what it
    /// dispatches itself, under a short lock; whichever thread is in the
    /// engine reaps and delivers completions (callbacks run on it, so
    /// possibly inside `submit`). The engine thread stays for idling
    /// deadlines, transfers left in flight and the other commands.
    Inline,
}

/// How an [`super::Engine`] schedules and issues requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// The disk scheduler, any spec of the catalogue
    /// ([`crate::catalogue`]). Default: `bfq` with the catalogue's
    /// defaults (B_max = 4096 sectors, T_wait = 4 ms, T_FIFO = 100 ms,
    /// T_max automatic).
    pub scheduler: DiskSchedSpec,
    /// Requests handed to the device at once, `1..=256`. 1 (the default)
    /// is the BFQ thesis' model: one request in service, every ordering
    /// decision the scheduler's. More lets the device reorder among them
    /// (command queueing) and overlap transfers, which a fast SSD needs for
    /// throughput, at the cost of that much looser control. A transfer
    /// counts once per 128 KiB it carries (see `max_request`).
    pub max_in_flight: u32,
    /// Clients registered at once, `1..=65536`. Default 1024.
    pub max_clients: u32,
    /// Requests outstanding at once (queued in the scheduler, waiting for
    /// their client's previous synchronous request, or in flight),
    /// `1..=1048576`. One more is refused with
    /// [`super::SubmitErrorKind::QueueFull`]. Default 4096.
    pub max_queued: u32,
    /// Which threads run the scheduler and issue transfers. Default
    /// [`Submission::DeviceThread`].
    pub submission: Submission,
    /// The largest request, bytes (counting the 512-byte sectors its offset
    /// and length touch): `131072..=1048576`, a multiple of 4096. Default
    /// 131072. The scheduler's L_max is this many sectors. With BFQ, while
    /// a weight-raised client is warm the others' requests are dispatched
    /// in pieces of at most 128 KiB ([`crate::bfq::WARM_PIECE`]), each a
    /// transfer of its own; the request completes once, after its last
    /// piece. BFQ's B_max must be at least as large (a budget must fit the
    /// longest request).
    pub max_request: u32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            scheduler: DiskSchedKind::Bfq.default_spec(),
            max_in_flight: 1,
            max_clients: 1024,
            max_queued: 4096,
            submission: Submission::DeviceThread,
            max_request: DEFAULT_MAX_REQUEST,
        }
    }
}

fn check(
    name: &'static str,
    value: u32,
    max: u32,
    allowed: &'static str,
) -> Result<(), EngineError> {
    if (1..=max).contains(&value) {
        Ok(())
    } else {
        Err(EngineError::OutOfRange {
            name,
            value: u64::from(value),
            allowed,
        })
    }
}

impl EngineConfig {
    /// Checks every value's range and the scheduler spec.
    pub fn validate(&self) -> Result<(), EngineError> {
        check(
            "max_in_flight",
            self.max_in_flight,
            MAX_IN_FLIGHT,
            "1..=256",
        )?;
        check("max_clients", self.max_clients, MAX_CLIENTS, "1..=65536")?;
        check("max_queued", self.max_queued, MAX_QUEUED, "1..=1048576")?;
        if !(DEFAULT_MAX_REQUEST..=MAX_REQUEST_LIMIT).contains(&self.max_request)
            || !self.max_request.is_multiple_of(4096)
        {
            return Err(EngineError::OutOfRange {
                name: "max_request",
                value: u64::from(self.max_request),
                allowed: "131072..=1048576 bytes, a multiple of 4096",
            });
        }
        self.scheduler.check()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_inclusive_and_named() {
        let ok = EngineConfig::default();
        ok.validate().unwrap();
        for (cfg, name) in [
            (
                EngineConfig {
                    max_in_flight: 0,
                    ..ok
                },
                "max_in_flight",
            ),
            (
                EngineConfig {
                    max_in_flight: 257,
                    ..ok
                },
                "max_in_flight",
            ),
            (
                EngineConfig {
                    max_clients: 0,
                    ..ok
                },
                "max_clients",
            ),
            (
                EngineConfig {
                    max_clients: MAX_CLIENTS + 1,
                    ..ok
                },
                "max_clients",
            ),
            (
                EngineConfig {
                    max_queued: 0,
                    ..ok
                },
                "max_queued",
            ),
            (
                EngineConfig {
                    max_queued: MAX_QUEUED + 1,
                    ..ok
                },
                "max_queued",
            ),
            (
                EngineConfig {
                    max_request: DEFAULT_MAX_REQUEST - 4096,
                    ..ok
                },
                "max_request",
            ),
            (
                EngineConfig {
                    max_request: MAX_REQUEST_LIMIT + 4096,
                    ..ok
                },
                "max_request",
            ),
            (
                EngineConfig {
                    max_request: DEFAULT_MAX_REQUEST + 512,
                    ..ok
                },
                "max_request",
            ),
        ] {
            let e = cfg.validate().unwrap_err();
            assert!(e.to_string().starts_with(name), "{e}");
        }
        for cfg in [
            EngineConfig {
                max_in_flight: 256,
                ..ok
            },
            EngineConfig {
                max_clients: MAX_CLIENTS,
                ..ok
            },
            EngineConfig {
                max_queued: MAX_QUEUED,
                ..ok
            },
            EngineConfig {
                max_request: MAX_REQUEST_LIMIT,
                ..ok
            },
        ] {
            cfg.validate().unwrap();
        }
        let bad = EngineConfig {
            scheduler: DiskSchedSpec::Yfq {
                batch: 0,
                t_wait_ms: 0,
            },
            ..ok
        };
        assert!(bad.validate().is_err());
    }
}
