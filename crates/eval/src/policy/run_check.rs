//! The checks of a [`RunConfig`] against the policy it drives, before the
//! run allocates or offers anything: every parameter is used exactly as
//! given or refused with a [`RunError`] naming it and its allowed range.
//!
//! Limits and why they exist:
//! * `backlog` (greedy sources): `1..=max_packets / flows` — every greedy
//!   source keeps `backlog` packets queued from the start, and together
//!   they must fit the policy's pre-allocated packet slots (`max_packets`);
//!   more could only be refused as "full" one by one.
//! * each workload flow's `MAXLEN` (`flows`): `1..=max_packet_len` of the
//!   policy — the tree refuses longer packets, and cutting them would
//!   change the workload.
//! * `sizes` `uniform:MIN`: `1..=` the smallest flow's `MAXLEN`.
//! * `load`: `0..=10`, a finite fraction of the link.
//! * `link`: `1..=2^40` bytes/s (the tree's rate ceiling).
//! * packets the run can send (`link · duration / smallest packet`, times
//!   `load` when above 1): at most [`MAX_RUN_PACKETS`], since each
//!   departure keeps its sojourn time (8 bytes) for the percentiles.

use super::run::{RunConfig, RunError};
use crate::workload::{PacketSizes, MAX_FLOWS};
use fairway_core::policy::MAX_RATE;
use fairway_policy_file::PolicyFile;

/// Most packets one run may send: each keeps its sojourn time (8 bytes)
/// until the report, so this bounds that memory to 1 GiB.
pub const MAX_RUN_PACKETS: u64 = 1 << 27;

/// Checks `cfg` against `policy` (see the module doc).
pub(super) fn check(policy: &PolicyFile, cfg: &RunConfig) -> Result<(), RunError> {
    let spec = &policy.spec;
    if cfg.link == 0 || cfg.link > MAX_RATE {
        return Err(RunError::OutOfRange {
            param: "link",
            value: format!("{} B/s", cfg.link),
            range: format!("1..={MAX_RATE} B/s"),
            why: "the policy tree's rate ceiling (8.8 Tbit/s)",
        });
    }
    if !(0.0..=10.0).contains(&cfg.load) {
        return Err(RunError::LoadOutOfRange(cfg.load));
    }
    let flows = cfg.flows.flows();
    if flows.is_empty() || spec.flows.is_empty() {
        return Err(RunError::OutOfRange {
            param: "flows",
            value: format!(
                "{} workload flows for {} policy flows",
                flows.len(),
                spec.flows.len()
            ),
            range: format!("1..={MAX_FLOWS} for 1.. policy flows"),
            why: "workload flow k feeds policy flow k mod N",
        });
    }
    if let Some(&(w, _)) = flows.iter().find(|f| f.0 == 0) {
        return Err(RunError::OutOfRange {
            param: "flows",
            value: format!("WEIGHT {w}"),
            range: "1..".to_string(),
            why: "offered loads are split by weight",
        });
    }
    let max_len = spec.max_packet_len;
    if let Some(&(_, ml)) = flows.iter().find(|f| f.1 == 0 || f.1 > max_len) {
        return Err(RunError::OutOfRange {
            param: "flows",
            value: format!("MAXLEN {ml}"),
            range: format!("1..={max_len}"),
            why: "the policy's max_packet_len: longer packets would be refused by the tree",
        });
    }
    let smallest_max = flows.iter().map(|f| f.1).min().unwrap_or(max_len);
    let min_len = match cfg.sizes {
        PacketSizes::Fixed => smallest_max,
        PacketSizes::Uniform { min } => {
            if min == 0 || min > smallest_max {
                return Err(RunError::OutOfRange {
                    param: "sizes",
                    value: format!("uniform:{min}"),
                    range: format!("uniform:1..={smallest_max}"),
                    why: "MIN must not exceed the smallest MAXLEN of the flows",
                });
            }
            min
        }
    };
    if cfg.load == 0.0 {
        check_backlog(spec.max_packets, flows.len() as u64, cfg.backlog)?;
    }
    check_packets(cfg, min_len)
}

/// Greedy sources' backlogs together fit the policy's packet slots.
fn check_backlog(max_packets: u32, flows: u64, backlog: u32) -> Result<(), RunError> {
    let most = u64::from(max_packets) / flows;
    if most == 0 {
        return Err(RunError::OutOfRange {
            param: "flows",
            value: format!("{flows} workload flows"),
            range: format!("1..={max_packets}"),
            why: "each greedy source keeps at least one packet queued, in the policy's max_packets slots",
        });
    }
    if backlog == 0 || u64::from(backlog) > most {
        return Err(RunError::OutOfRange {
            param: "backlog",
            value: backlog.to_string(),
            range: format!("1..={most}"),
            why: "each greedy source keeps this many packets queued; all of them must fit the policy's max_packets slots",
        });
    }
    Ok(())
}

/// The packets the link can send in the run stay within
/// [`MAX_RUN_PACKETS`].
fn check_packets(cfg: &RunConfig, min_len: u32) -> Result<(), RunError> {
    let bytes = u128::from(cfg.link) * u128::from(cfg.duration_ns) / 1_000_000_000;
    let mut packets = bytes / u128::from(min_len) + 1;
    if cfg.load > 1.0 {
        packets = (packets as f64 * cfg.load) as u128;
    }
    if packets > u128::from(MAX_RUN_PACKETS) {
        return Err(RunError::TooManyPackets {
            packets,
            duration_ns: cfg.duration_ns,
            link: cfg.link,
            min_len,
        });
    }
    Ok(())
}
