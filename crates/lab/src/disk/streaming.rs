//! The streaming workload of the BFQ thesis §2.4 on the simulator: a new
//! stream (32 KiB every 128 ms, 1 s playback buffer) starts every
//! [`StreamSetup::every`] next to greedy ON/OFF readers, until the streams'
//! loss rate reaches the threshold; reported is how many streams were
//! sustained. Deterministic for a given seed.

use super::run_error::DiskRunError;
use super::units::{check_capacity, mb_per_s, SEC, SLICES};
use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::model::DiskModel;
use fairway_disk::readahead::ReadAhead;
use fairway_disk::sim::Simulation;
use fairway_disk::workload::{App, OnOffReader, Streamer};
use fairway_disk::{AppId, AppSpec, Nanos};
use serde::Serialize;

/// Fewest chunks due in the loss window before the loss rate counts.
pub const MIN_CHUNKS: u64 = 100;

/// Result of a streaming run.
#[derive(Clone, Debug, Serialize)]
pub struct StreamResult {
    /// The scheduler (its typed identity; the JSON shows its label).
    #[serde(skip)]
    pub spec: DiskSchedSpec,
    /// The scheduler's label.
    pub sched: String,
    /// Streams running when the loss rate reached the threshold (or at the end).
    pub streams: usize,
    /// Aggregate throughput over the last 5 s, MB/s.
    pub aggregate_mb_s: f64,
    /// Loss rate over the last window when the run ended.
    pub loss_rate: f64,
    /// Simulated seconds.
    pub sim_seconds: f64,
}

/// Streaming workload parameters.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StreamSetup {
    /// Movies available (one per slice).
    pub movies: usize,
    /// A new stream every this many ns.
    pub every: Nanos,
    /// ON/OFF readers.
    pub on_off: usize,
    /// Loss threshold (fraction).
    pub max_loss: f64,
    /// Read-ahead of the ON/OFF readers (greedy sequential file readers).
    pub readahead: ReadAhead,
}

impl StreamSetup {
    /// The thesis' setup: 30 movies, one every 15 s, 5 ON/OFF readers with
    /// Linux's read-ahead, 1 %.
    pub const THESIS: Self = Self {
        movies: 30,
        every: 15 * SEC,
        on_off: 5,
        max_loss: 0.01,
        readahead: ReadAhead::LINUX,
    };

    /// The thesis' setup with the ON/OFF readers' read-ahead `readahead`,
    /// and with `quick` a new stream every 5 s instead of 15 (a short
    /// version for CI).
    pub fn new(quick: bool, readahead: ReadAhead) -> Self {
        Self {
            every: if quick { 5 * SEC } else { Self::THESIS.every },
            readahead,
            ..Self::THESIS
        }
    }
}

/// The streaming workload (§2.4). Loss rate: lost chunks over chunks due in
/// the last `every` ns, checked every second once at least [`MIN_CHUNKS`]
/// are due in that window. A chunk is due at its nominal time plus the 1 s
/// playback buffer and counts as lost if it has not completed by then,
/// whether it completes later or not at all ([`Streamer::due_and_lost`]):
/// a starved stream's chunks are lost as they fall due.
pub fn streaming(
    spec: DiskSchedSpec,
    setup: StreamSetup,
    disk: &DiskModel,
    seed: u64,
) -> Result<StreamResult, DiskRunError> {
    check_capacity(disk)?;
    let n = setup.movies + setup.on_off;
    let mut sched = spec.build(n as u32)?;
    let slice = disk.capacity() / SLICES;
    let mut apps = Vec::new();
    for k in 0..setup.movies {
        let id = AppId(k as u32);
        sched.add_app(id, AppSpec::weight(1))?;
        let s = (k as u64 % SLICES) * slice;
        apps.push(App::Stream(Streamer::new(
            id,
            s,
            slice / 2,
            k as u64 * setup.every,
        )));
    }
    for j in 0..setup.on_off {
        let id = AppId((setup.movies + j) as u32);
        sched.add_app(id, AppSpec::weight(1))?;
        let s = ((j as u64 * 6 + 3) % SLICES) * slice + slice / 2;
        apps.push(App::OnOff(
            OnOffReader::new(id, s, slice / 2, seed ^ (j as u64 + 1))
                .with_readahead(setup.readahead),
        ));
    }
    let mut sim = Simulation::new(sched, disk.clone(), apps);
    let end = setup.movies as u64 * setup.every + setup.every;
    let mut history: Vec<u64> = Vec::new();
    let mut t = 0;
    let mut loss = 0.0;
    let mut streams = setup.movies;
    while t < end {
        t += SEC;
        sim.run(t, &mut |_| {});
        history.push(sim.totals().sectors.iter().sum());
        let lo = t.saturating_sub(setup.every);
        let (mut due, mut lost) = (0u64, 0u64);
        for a in &sim.apps {
            if let App::Stream(s) = a {
                let (d, l) = s.due_and_lost(lo, t);
                due += d;
                lost += l;
            }
        }
        loss = if due > 0 {
            lost as f64 / due as f64
        } else {
            0.0
        };
        // A rate over fewer chunks than a window of one stream is noise.
        if due >= MIN_CHUNKS && loss >= setup.max_loss {
            streams = ((t / setup.every) as usize + 1).min(setup.movies);
            break;
        }
    }
    let k = history.len();
    let last5 = history[k - 1] - if k > 5 { history[k - 6] } else { 0 };
    Ok(StreamResult {
        spec,
        sched: spec.label(),
        streams,
        aggregate_mb_s: mb_per_s(last5, 5 * SEC.min(t)),
        loss_rate: loss,
        sim_seconds: t as f64 / 1e9,
    })
}
