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
//! * (flow, ancestor) pairs of the policy: at most [`MAX_ANCESTOR_PAIRS`],
//!   since the run keeps them for its accounting.
//! * packets the run can send (`link · duration / smallest packet`, times
//!   `load` when above 1): at most [`MAX_RUN_PACKETS`], since each
//!   departure keeps its sojourn time (8 bytes) for the percentiles.

use super::run::{RunConfig, RunError};
use crate::workload::{PacketSizes, MAX_FLOWS};
use fairway_core::policy::MAX_RATE;
use fairway_policy_file::PolicyFile;

/// Most (flow, ancestor) pairs of a policy a run accounts: the run keeps
/// each policy flow's ancestors, and each node's flows, for the report
/// (4 bytes each way); deep trees
/// with millions of flows would need gigabytes.
pub const MAX_ANCESTOR_PAIRS: u64 = 1 << 26;

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
    check_ancestors(policy)?;
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

/// The policy's (flow, ancestor) pairs stay within
/// [`MAX_ANCESTOR_PAIRS`]; each node's depth is computed once (the tree
/// built, so there is no cycle).
fn check_ancestors(policy: &PolicyFile) -> Result<(), RunError> {
    let nodes = &policy.spec.nodes;
    let mut depth = vec![0u64; nodes.len()];
    let mut path = Vec::new();
    for i in 0..nodes.len() {
        let mut cur = i;
        let mut d = loop {
            if depth[cur] > 0 {
                break depth[cur];
            }
            path.push(cur);
            match nodes[cur].parent {
                Some(p) => cur = p as usize,
                None => break 0,
            }
        };
        while let Some(c) = path.pop() {
            d += 1;
            depth[c] = d;
        }
    }
    let pairs: u64 = (policy.spec.flows.iter())
        .map(|f| depth[f.parent as usize])
        .sum();
    if pairs > MAX_ANCESTOR_PAIRS {
        return Err(RunError::OutOfRange {
            param: "policy",
            value: format!("{pairs} (flow, ancestor) pairs"),
            range: format!("1..={MAX_ANCESTOR_PAIRS}"),
            why: "the run keeps every policy flow's ancestors for its accounting: fewer flows or a shallower tree",
        });
    }
    Ok(())
}

/// Greedy sources' backlogs together fit the policy's packet slots.
fn check_backlog(max_packets: u32, flows: u64, backlog: u64) -> Result<(), RunError> {
    let most = u64::from(max_packets) / flows;
    if most == 0 {
        return Err(RunError::OutOfRange {
            param: "flows",
            value: format!("{flows} workload flows"),
            range: format!("1..={max_packets}"),
            why: "each greedy source keeps at least one packet queued, in the policy's max_packets slots",
        });
    }
    if backlog == 0 || backlog > most {
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

#[cfg(test)]
mod tests {
    use super::super::run::{run, RunConfig, RunError};
    use super::MAX_RUN_PACKETS;
    use crate::workload::{FlowSet, PacketSizes};

    fn policy(max_packets: u32, max_len: u32) -> fairway_policy_file::PolicyFile {
        let text = format!(
            "max_packets = {max_packets}\nmax_packet_len = {max_len}\n\
             [[node]]\nname = \"r\"\npolicy = \"stfq\"\n[[flow]]\nparent = \"r\"\n"
        );
        fairway_policy_file::parse(&text, "t.toml").unwrap()
    }

    fn cfg() -> RunConfig {
        RunConfig {
            flows: FlowSet::parse("1x4").unwrap(),
            sizes: PacketSizes::Fixed,
            link: 12_500_000,
            duration_ns: 1_000_000,
            load: 0.0,
            backlog: 16,
            seed: 1,
        }
    }

    fn refused(p: &fairway_policy_file::PolicyFile, c: &RunConfig) -> String {
        run(p, c).unwrap_err().to_string()
    }

    /// Each limit is used exactly at its edge and refused one past it,
    /// naming the parameter and its range; nothing is cut or grown.
    #[test]
    fn parameters_at_their_limits_and_one_past() {
        let p = policy(64, 1500);
        // 4 flows × 16 = 64 slots: at the limit; 17 is one past.
        let r = run(&p, &cfg()).unwrap();
        assert_eq!(r.refused_full, 0);
        let e = refused(
            &p,
            &RunConfig {
                backlog: 17,
                ..cfg()
            },
        );
        assert!(e.starts_with("backlog 17 outside 1..=16 ("), "{e}");
        let e = refused(
            &p,
            &RunConfig {
                backlog: 0,
                ..cfg()
            },
        );
        assert!(e.starts_with("backlog 0 outside 1..=16 ("), "{e}");
        let e = refused(
            &p,
            &RunConfig {
                backlog: 1 << 32,
                ..cfg()
            },
        );
        assert!(e.starts_with("backlog 4294967296 outside 1..=16 ("), "{e}");
        // 65 workload flows cannot each keep a packet in 64 slots.
        let many = RunConfig {
            flows: FlowSet::parse("1x65").unwrap(),
            backlog: 1,
            ..cfg()
        };
        assert!(refused(&p, &many).starts_with("flows 65 workload flows outside 1..=64 ("));
        // With offered load the backlog is not used, so not checked.
        assert!(run(
            &p,
            &RunConfig {
                backlog: 0,
                load: 0.5,
                ..cfg()
            }
        )
        .is_ok());
        // A flow's MAXLEN above the policy's max_packet_len names both.
        let jumbo = RunConfig {
            flows: FlowSet::parse("1x4@9000").unwrap(),
            ..cfg()
        };
        let e = refused(&p, &jumbo);
        assert!(
            e.starts_with("flows MAXLEN 9000 outside 1..=1500 (the policy's max_packet_len"),
            "{e}"
        );
        let at = RunConfig {
            flows: FlowSet::parse("1x4@1500").unwrap(),
            ..cfg()
        };
        assert!(run(&p, &at).is_ok());
        // uniform:MIN above the smallest MAXLEN.
        let s = RunConfig {
            sizes: PacketSizes::Uniform { min: 1501 },
            ..cfg()
        };
        assert!(refused(&p, &s).starts_with("sizes uniform:1501 outside uniform:1..=1500 ("));
        assert!(run(
            &p,
            &RunConfig {
                sizes: PacketSizes::Uniform { min: 1500 },
                ..cfg()
            }
        )
        .is_ok());
        // Loads: NaN, infinities, negative and above 10.
        for load in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.1, 10.5] {
            assert!(matches!(
                run(&p, &RunConfig { load, ..cfg() }),
                Err(RunError::LoadOutOfRange(_))
            ));
        }
        assert!(run(
            &p,
            &RunConfig {
                load: 10.0,
                duration_ns: 100_000,
                ..cfg()
            }
        )
        .is_ok());
        // A vanishing load offers nothing, without overflowing its gaps.
        let r = run(
            &p,
            &RunConfig {
                load: 1e-300,
                ..cfg()
            },
        )
        .unwrap();
        assert_eq!(r.offered, 0);
    }

    /// The packets a run can send: `link · duration / smallest packet + 1`
    /// up to `MAX_RUN_PACKETS`, one more is refused before anything runs.
    #[test]
    fn packets_of_a_run_are_bounded_before_it_starts() {
        let p = policy(64, 1500);
        // 1500-byte packets at 1500 B/s: one per second, plus the first.
        let at = |secs: u64| RunConfig {
            link: 1500,
            duration_ns: secs * 1_000_000_000,
            backlog: 1,
            ..cfg()
        };
        let e = refused(&p, &at(MAX_RUN_PACKETS));
        assert!(
            e.contains(&format!(
                "can send {} packets: at most {MAX_RUN_PACKETS}",
                MAX_RUN_PACKETS + 1
            )),
            "{e}"
        );
        assert!(super::check(&p, &at(MAX_RUN_PACKETS - 1)).is_ok());
    }

    /// A 1024-deep chain with 65536 flows at the bottom is exactly
    /// `MAX_ANCESTOR_PAIRS` pairs; one flow more is refused.
    #[test]
    fn ancestor_pairs_at_the_limit_and_one_past() {
        let chain = |flows: u32| {
            let mut s = String::from("max_packets = 4\n");
            for i in 0..1024 {
                s += &format!("[[node]]\nname = \"n{i}\"\npolicy = \"stfq\"\n");
                if i > 0 {
                    s += &format!("parent = \"n{}\"\n", i - 1);
                }
            }
            s += &format!("[[flow]]\nparent = \"n1023\"\ncount = {flows}\n");
            fairway_policy_file::parse(&s, "t.toml").unwrap()
        };
        assert!(super::check_ancestors(&chain(65_536)).is_ok());
        let e = super::check_ancestors(&chain(65_537))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("policy 67109888 (flow, ancestor) pairs outside 1..=67108864 ("),
            "{e}"
        );
    }
}
