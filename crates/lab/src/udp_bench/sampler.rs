//! The rate a trial delivered, counted where the packets cross the link.
//!
//! A sampler thread reads the sender veth's `tx_packets` (frames that left
//! the qdisc and reached the peer) at t0 + [`WARMUP_FRACTION`]·`seconds`
//! and at the deadline t0 + `seconds`, so the delivered rate does not
//! depend on when each client happened to run: flat-out clients sharing
//! one CPU round-robin under `SCHED_RR` start up to a time slice apart, and
//! a rate taken as packets sent / `seconds` from each client's own start
//! would overstate every configuration's.

use super::start::{sleep_until, StartGate};
use crate::testbed::DeviceCounters;
use fairway_runtime::net::{interrupted, monotonic_ns};
use fairway_runtime::ScanGapWindow;

/// The share of the trial left out at its start when counting the
/// delivered rate (sockets and queues filling, clients first scheduled).
pub const WARMUP_FRACTION: f64 = 0.1;
/// The length of the slices of [`LinkWindow::slice_pps`], ns.
const SLICE_NS: u64 = 50_000_000;

/// What crossed the link in the counting window.
#[derive(Clone, Debug, Default)]
pub(super) struct LinkWindow {
    /// Frames that crossed the link.
    pub(super) packets: u64,
    /// The window's length, s.
    pub(super) seconds: f64,
    /// The rate in consecutive slices of the window (the last one may be
    /// shorter), packets/s.
    pub(super) slice_pps: Vec<f64>,
}

impl LinkWindow {
    /// Frames per second across the link in the window (0 if it is empty).
    pub(super) fn pps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.packets as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Runs on the sampler thread: waits for the shared start, opens the
/// arbiter's scan-gap window at t0 (if there is an arbiter), and reads the
/// link's counters through the window of a trial of `seconds`.
pub(super) fn sample_link(
    counters: &mut DeviceCounters,
    start: &StartGate,
    seconds: f64,
    scan_gaps: Option<&ScanGapWindow>,
) -> std::io::Result<LinkWindow> {
    let t0 = start.t0();
    if let Some(w) = scan_gaps {
        sleep_until(t0);
        w.take();
    }
    let span = (seconds * 1e9) as u64;
    // Each reading is timed by the midpoint of the read.
    let mut sample = |at: u64| -> std::io::Result<(u64, u64)> {
        sleep_until(at);
        let a = monotonic_ns();
        let v = counters.read()?.tx_packets;
        Ok((v, (a + monotonic_ns()) / 2))
    };
    let start_at = t0 + (span as f64 * WARMUP_FRACTION) as u64;
    let (c0, t_a) = sample(start_at)?;
    // Intermediate readings every SLICE_NS show how steady the rate was
    // within the window.
    let (mut c, mut t) = (c0, t_a);
    let mut slices = Vec::new();
    let mut at = start_at + SLICE_NS;
    // A signal ends the window early (the trial is then not reported).
    while at + SLICE_NS / 2 < t0 + span && !interrupted() {
        let (c1, t1) = sample(at)?;
        slices.push((c1 - c) as f64 * 1e9 / (t1 - t).max(1) as f64);
        (c, t) = (c1, t1);
        at += SLICE_NS;
    }
    let (c1, t_b) = sample(t0 + span)?;
    slices.push((c1 - c) as f64 * 1e9 / (t_b - t).max(1) as f64);
    Ok(LinkWindow {
        packets: c1 - c0,
        seconds: (t_b - t_a) as f64 / 1e9,
        slice_pps: slices,
    })
}
