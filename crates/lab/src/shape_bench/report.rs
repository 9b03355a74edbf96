//! The bench's results: one [`Side`] per forwarder, and the table that
//! puts them side by side.

use super::measure::NOT_RUN;
use super::plan::ChangeSize;
use super::Phase;
use serde::Serialize;
use std::fmt;

/// A measurement, or why it was not made.
#[derive(Clone, Debug, Serialize)]
pub struct Maybe<T> {
    /// The result.
    pub value: Option<T>,
    /// Why there is none (`n/a (…)`).
    pub not_available: Option<String>,
}

impl<T> Maybe<T> {
    /// A result.
    pub fn done(value: T) -> Self {
        Maybe {
            value: Some(value),
            not_available: None,
        }
    }

    /// No result, and why.
    pub fn na(why: impl Into<String>) -> Self {
        Maybe {
            value: None,
            not_available: Some(why.into()),
        }
    }
}

/// One circuit's rate under overload.
#[derive(Clone, Debug, Serialize)]
pub struct RateRow {
    /// Circuit id.
    pub circuit: String,
    /// What is checked.
    pub check: String,
    /// Offered, Mbit/s of frames: the flow's nominal rate.
    pub offered_mbit: f64,
    /// What the sender really handed to the kernel in the window,
    /// Mbit/s of frames (below `offered_mbit` when it fell behind).
    pub sent_mbit: f64,
    /// Datagrams the kernel refused to take from the sender.
    pub send_failed: u64,
    /// Datagrams the receiving socket dropped in the run, all of the
    /// phase's flows together: lost by the measurement, not the path.
    pub receiver_drops: u64,
    /// What the configuration gives it, Mbit/s.
    pub expected_mbit: f64,
    /// Received, Mbit/s.
    pub measured_mbit: f64,
    /// (measured − expected) / expected, %.
    pub error_pct: f64,
}

impl RateRow {
    /// True when the traffic, not the side measured, may have made the
    /// rate low: the sender offered less than the rate checked, the
    /// kernel refused datagrams from it, or the receiving socket dropped
    /// some.
    pub fn doubtful(&self) -> bool {
        self.sent_mbit < self.expected_mbit || self.send_failed > 0 || self.receiver_drops > 0
    }

    /// Why [`RateRow::doubtful`] holds, in words.
    pub fn why_doubtful(&self) -> String {
        let mut why = Vec::new();
        if self.sent_mbit < self.expected_mbit {
            why.push(format!(
                "the sender offered only {:.2} Mbit/s in the window ({:.2} asked)",
                self.sent_mbit, self.offered_mbit
            ));
        }
        if self.send_failed > 0 {
            why.push(format!(
                "{} datagrams refused to the sender",
                self.send_failed
            ));
        }
        if self.receiver_drops > 0 {
            why.push(format!(
                "the receiving socket dropped {} datagrams of the phase",
                self.receiver_drops
            ));
        }
        why.join("; ")
    }
}

/// The sparse flow beside the bulk flow. Delays end at the kernel's
/// receive stamp of each datagram; `sparse_read_p99_ms` ends when the
/// receiver thread read it instead (the difference: the receiver waiting
/// for a core).
#[derive(Clone, Debug, Serialize)]
pub struct DelayRow {
    /// Sparse flow's delay, median, ms.
    pub sparse_p50_ms: f64,
    /// Sparse flow's delay, 99th percentile, ms.
    pub sparse_p99_ms: f64,
    /// Sparse flow's largest delay, ms.
    pub sparse_max_ms: f64,
    /// Sparse flow's delay to the receiver thread's read, 99th
    /// percentile, ms.
    pub sparse_read_p99_ms: f64,
    /// Sparse datagrams lost.
    pub sparse_lost: u64,
    /// Sparse datagrams sent.
    pub sparse_sent: u64,
    /// Bulk flow's delay, median, ms.
    pub bulk_p50_ms: f64,
    /// Bulk flow received, Mbit/s.
    pub bulk_mbit: f64,
}

/// Forwarding flat out at one frame size.
#[derive(Clone, Debug, Serialize)]
pub struct ForwardRow {
    /// Frame bytes (without FCS).
    pub frame_bytes: usize,
    /// Million frames per second at the receiver's device.
    pub mpps: f64,
    /// Gbit/s of frames at the receiver's device.
    pub gbit: f64,
    /// CPU of the sender thread, cores (the kernel forwards in it).
    pub sender_cores: f64,
    /// CPU of the shaper process, cores (0 for the kernel's side).
    pub shaper_cores: f64,
    /// CPU of the receiver thread, cores.
    pub receiver_cores: f64,
}

/// The configuration change, applied under traffic.
#[derive(Clone, Debug, Serialize)]
pub struct ChangeRow {
    /// How it was applied.
    pub how: String,
    /// Wall time until applied, ms.
    pub apply_ms: f64,
    /// Datagrams sent to the changed circuits during the phase.
    pub sent: u64,
    /// Of these, never received.
    pub lost: u64,
    /// Received out of order.
    pub reordered: u64,
    /// Frames sent unshaped during the change (HTB's direct queue), when
    /// counted.
    pub unshaped: Option<u64>,
    /// The shaper's own report line, when it printed one.
    pub report: Option<String>,
}

/// Reading every circuit's statistics once.
#[derive(Clone, Debug, Serialize)]
pub struct ScrapeRow {
    /// How.
    pub how: String,
    /// Wall time, ms.
    pub ms: f64,
    /// Bytes of the answer.
    pub bytes: usize,
}

/// One forwarder's results.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    /// `kernel HTB` or `fairway`.
    pub name: String,
    /// Building the tree at `circuits` circuits, ms.
    pub setup_ms: f64,
    /// Rates under overload.
    pub rates: Vec<RateRow>,
    /// The sparse flow.
    pub delay: Maybe<DelayRow>,
    /// 64-byte and 1514-byte frames.
    pub forwarding: Vec<ForwardRow>,
    /// Statistics of every circuit.
    pub scrape: Maybe<ScrapeRow>,
    /// The change.
    pub change: Maybe<ChangeRow>,
}

/// Both sides.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Circuits in the tree.
    pub circuits: usize,
    /// Short phases.
    pub quick: bool,
    /// The phases measured.
    pub phases: super::Phases,
    /// The shaper's loop under SCHED_FIFO at this priority, if asked.
    pub shaper_rt_priority: Option<u8>,
    /// What the change touches.
    pub change: ChangeSize,
    /// The kernel's HTB under a bridge.
    pub kernel: Side,
    /// `fairway shape`.
    pub fairway: Side,
}

/// The value, or `n/a` (the reason is printed below the table).
fn cell<T>(m: &Maybe<T>, f: impl Fn(&T) -> String) -> String {
    m.value.as_ref().map_or_else(|| "n/a (below)".into(), f)
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (k, w) = (&self.kernel, &self.fairway);
        let c = &self.change;
        writeln!(
            f,
            "fairway shape bench: {} circuits{}{}{}",
            self.circuits,
            if self.quick { " (--quick)" } else { "" },
            if self.phases == super::Phases::ALL {
                String::new()
            } else {
                let names: Vec<&str> = self.phases.list().iter().map(|p| p.name()).collect();
                format!(", phases {}", names.join(","))
            },
            self.shaper_rt_priority.map_or(String::new(), |p| format!(
                ", fairway's loop under SCHED_FIFO {p}"
            ))
        )?;
        writeln!(
            f,
            "{:<52} {:>28} {:>28}",
            "", "kernel HTB (bridge)", "fairway shape"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, name: &str, a: String, b: String| {
            writeln!(f, "{name:<52} {a:>28} {b:>28}")
        };
        row(
            f,
            "build the tree, ms",
            format!("{:.0}", k.setup_ms),
            format!("{:.0}", w.setup_ms),
        )?;
        for (a, b) in k.rates.iter().zip(&w.rates) {
            let name = format!("{} {}: {:.2} Mbit/s", a.circuit, a.check, a.expected_mbit);
            let v = |r: &RateRow| {
                let mark = if r.doubtful() { " *" } else { "" };
                format!("{:.2} ({:+.2} %){mark}", r.measured_mbit, r.error_pct)
            };
            row(f, &name, v(a), v(b))?;
        }
        if self.phases.has(Phase::Delay) {
            delay_rows(f, &k.delay, &w.delay)?;
        }
        for (a, b) in k.forwarding.iter().zip(&w.forwarding) {
            let v = |r: &ForwardRow| format!("{:.3} Mpps {:.2} Gbit/s", r.mpps, r.gbit);
            row(
                f,
                &format!("forwarding {} B frames", a.frame_bytes),
                v(a),
                v(b),
            )?;
            let v = |r: &ForwardRow| {
                format!(
                    "{:.2}+{:.2}+{:.2}",
                    r.sender_cores, r.shaper_cores, r.receiver_cores
                )
            };
            row(f, "  cores: sender+shaper+receiver", v(a), v(b))?;
        }
        if self.phases.has(Phase::Change) {
            change_rows(f, c, &k.change, &w.change)?;
        }
        if self.phases.has(Phase::Statistics) {
            let v = |r: &ScrapeRow| format!("{:.1} ms ({} kB)", r.ms, r.bytes / 1000);
            row(
                f,
                "statistics of every circuit",
                cell(&k.scrape, v),
                cell(&w.scrape, v),
            )?;
        }
        for side in [k, w] {
            for r in side.rates.iter().filter(|r| r.doubtful()) {
                writeln!(f, "* {}: {}: {}", side.name, r.circuit, r.why_doubtful())?;
            }
        }
        if let Some(r) = w.change.value.as_ref().and_then(|c| c.report.as_ref()) {
            writeln!(f, "fairway's reload line: {r}")?;
        }
        for side in [k, w] {
            for (what, why) in [
                ("delay", &side.delay.not_available),
                ("change", &side.change.not_available),
                ("statistics", &side.scrape.not_available),
            ] {
                if let Some(why) = why.as_ref().filter(|w| w.as_str() != NOT_RUN) {
                    writeln!(f, "{}: {what}: n/a ({why})", side.name)?;
                }
            }
        }
        Ok(())
    }
}

fn line(f: &mut fmt::Formatter<'_>, name: &str, a: String, b: String) -> fmt::Result {
    writeln!(f, "{name:<52} {a:>28} {b:>28}")
}

/// The sparse flow's rows.
fn delay_rows(f: &mut fmt::Formatter<'_>, k: &Maybe<DelayRow>, w: &Maybe<DelayRow>) -> fmt::Result {
    // The percentiles of no datagram would read 0: say they were lost.
    let d = |r: &DelayRow| match r.sparse_lost {
        lost if lost == r.sparse_sent => format!("all {lost} datagrams lost"),
        0 => format!("{:.2} / {:.2}", r.sparse_p50_ms, r.sparse_p99_ms),
        lost => format!(
            "{:.2} / {:.2}, {lost}/{} lost",
            r.sparse_p50_ms, r.sparse_p99_ms, r.sparse_sent
        ),
    };
    line(f, "sparse flow delay p50 / p99, ms", cell(k, d), cell(w, d))?;
    let d = |r: &DelayRow| format!("{:.2} / {:.2}", r.sparse_max_ms, r.sparse_read_p99_ms);
    line(
        f,
        "  max, ms / p99 to the receiver's read, ms",
        cell(k, d),
        cell(w, d),
    )?;
    let d = |r: &DelayRow| format!("{:.1} ms, {:.1} Mbit/s", r.bulk_p50_ms, r.bulk_mbit);
    line(
        f,
        "  beside bulk: bulk p50, bulk rate",
        cell(k, d),
        cell(w, d),
    )
}

/// The change's rows.
fn change_rows(
    f: &mut fmt::Formatter<'_>,
    c: &ChangeSize,
    k: &Maybe<ChangeRow>,
    w: &Maybe<ChangeRow>,
) -> fmt::Result {
    let name = format!(
        "change: {} rates, {} adds, {} removals, {} moves",
        c.rates, c.adds, c.removals, c.moves
    );
    let v = |r: &ChangeRow| format!("{:.1} ms", r.apply_ms);
    line(f, &name, cell(k, v), cell(w, v))?;
    let v = |r: &ChangeRow| {
        let u = r
            .unshaped
            .map_or(String::new(), |u| format!(", {u} unshaped"));
        format!("{}/{} lost, {} reord{u}", r.lost, r.sent, r.reordered)
    };
    line(
        f,
        "  during it: lost/sent, reordered",
        cell(k, v),
        cell(w, v),
    )
}

#[cfg(test)]
mod tests {
    use super::RateRow;

    fn row() -> RateRow {
        RateRow {
            circuit: "c5".into(),
            check: "max held".into(),
            offered_mbit: 1500.0,
            sent_mbit: 1490.0,
            send_failed: 0,
            receiver_drops: 0,
            expected_mbit: 1000.0,
            measured_mbit: 999.0,
            error_pct: -0.1,
        }
    }

    #[test]
    fn a_rate_is_doubtful_only_when_the_traffic_fell_short() {
        assert!(!row().doubtful());
        let short = RateRow {
            sent_mbit: 476.7,
            ..row()
        };
        assert!(short.doubtful());
        assert!(short
            .why_doubtful()
            .contains("offered only 476.70 Mbit/s in the window (1500.00 asked)"));
        let refused = RateRow {
            send_failed: 3,
            ..row()
        };
        assert!(refused.why_doubtful().contains("3 datagrams refused"));
        let dropped = RateRow {
            receiver_drops: 9,
            ..row()
        };
        assert!(dropped.why_doubtful().contains("dropped 9 datagrams"));
    }
}
