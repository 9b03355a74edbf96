//! `fairway shape bench`: the shaper side by side with the kernel's HTB,
//! in one run, on one topology ([`topology`]): namespaces sender —
//! middle — receiver joined by veth pairs, the same circuits ([`plan`])
//! built once as HTB classes (rate = min, ceil = max, quantum ∝ weight,
//! pfifo leaves, as LibreQoS falls back to without fq_codel or CAKE)
//! under a bridge, once as a `fairway shape` subprocess ([`shaper`]),
//! the same timestamped UDP traffic through both ([`traffic`]).
//!
//! Measured per side ([`measure`], reported by [`report`]):
//! rate accuracy (a circuit's max under overload; two circuits' mins and
//! their weighted share of their node's excess), a sparse flow's delay
//! beside a bulk flow in one 100 Mbit/s circuit, forwarding at 64-byte
//! and 1514-byte frames with the CPU each side used, the time and the
//! packets lost while a configuration change is applied at `--circuits`
//! circuits (`tc -batch` against a SIGHUP reload), and the time to read
//! every circuit's statistics (`tc -s class show` against `--metrics`).
//! What the `fairway` binary does not support yet is reported as not
//! available, with the reason, never guessed. `Config::phases` picks the
//! phases measured ([`phase`]).

pub mod error;
pub mod measure;
pub mod phase;
pub mod plan;
pub mod report;
pub mod shaper;
pub mod topology;
pub mod traffic;

pub use error::BenchError;
pub use phase::{Phase, Phases};
pub use report::Report;

use std::path::PathBuf;

/// Fewest circuits: the change touches 2,100 idle ones besides the five
/// that carry traffic, and the removals must leave the moved ones.
pub const MIN_CIRCUITS: usize = 2200;
/// Most circuits: HTB class minors are `0x1000 + index` (16 bits, with
/// the change's additions), addresses come from 10.78.0.0/16.
pub const MAX_CIRCUITS: usize = 50_000;
/// The default, an operator's network of 10,000 subscribers.
pub const DEFAULT_CIRCUITS: usize = 10_000;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Circuits in the tree.
    pub circuits: usize,
    /// Shorter traffic phases.
    pub quick: bool,
    /// The phases measured (both sides the same).
    pub phases: Phases,
    /// Runs the shaper's loop under SCHED_FIFO at this priority
    /// (`fairway shape --rt-priority`), 1..=99; `None`: the normal
    /// policy. The kernel's side forwards in softirq context either way.
    pub shaper_rt_priority: Option<u8>,
    /// The `fairway` binary to run as the shaper.
    pub shaper_exe: PathBuf,
    /// Where the generated shaper file goes.
    pub work_dir: PathBuf,
}

impl Config {
    /// Checks the sizes before anything is built.
    pub fn check(&self) -> Result<(), BenchError> {
        if !(MIN_CIRCUITS..=MAX_CIRCUITS).contains(&self.circuits) {
            return Err(BenchError::Circuits(self.circuits));
        }
        if let Some(p) = self.shaper_rt_priority.filter(|p| !(1..=99).contains(p)) {
            return Err(BenchError::RtPriority(p));
        }
        Ok(())
    }
}

/// True once SIGINT or SIGTERM arrived (the CLI installs the handler).
pub fn interrupted() -> bool {
    fairway_runtime::net::interrupted()
}

/// Runs both sides; `progress` hears what starts.
pub fn run(cfg: &Config, progress: &mut dyn FnMut(&str)) -> Result<Report, BenchError> {
    cfg.check()?;
    let topo = topology::Topology::create()?;
    let plan = plan::Plan::bench(cfg.circuits);
    let kernel = measure::kernel(&topo, &plan, cfg, progress)?;
    topo.clear_kernel_side()?;
    let fairway = measure::fairway(&topo, &plan, cfg, progress)?;
    Ok(Report {
        circuits: cfg.circuits,
        quick: cfg.quick,
        phases: cfg.phases,
        shaper_rt_priority: cfg.shaper_rt_priority,
        change: plan::CHANGE,
        kernel,
        fairway,
    })
}
