//! Progress of a reproduction for the caller's progress bar, and the
//! timing of each experiment.

use super::error::ReproduceError;
use super::report::Section;
use std::time::Instant;

/// Progress of [`run`](super::run): the step just started, of how many.
#[derive(Clone, Debug)]
pub struct Progress<'a> {
    /// Steps finished.
    pub done: u64,
    /// Steps in total.
    pub total: u64,
    /// What runs now.
    pub message: &'a str,
}

/// Counts steps across papers for the progress callback.
pub struct Ticker<'a> {
    done: u64,
    total: u64,
    progress: &'a mut dyn FnMut(Progress),
}

impl<'a> Ticker<'a> {
    /// A ticker over `total` steps reporting to `progress`.
    pub(super) fn new(total: u64, progress: &'a mut dyn FnMut(Progress)) -> Self {
        Self {
            done: 0,
            total,
            progress,
        }
    }

    /// Reports every step done.
    pub(super) fn finish(self) {
        (self.progress)(Progress {
            done: self.total,
            total: self.total,
            message: "done",
        });
    }

    /// Announces the next step (`message`), counting the previous one done.
    pub fn step(&mut self, message: &str) {
        (self.progress)(Progress {
            done: self.done,
            total: self.total,
            message,
        });
        self.done += 1;
    }
}

/// Times `f`, storing the seconds in the section it returns.
pub(crate) fn timed(
    f: impl FnOnce() -> Result<Section, ReproduceError>,
) -> Result<Section, ReproduceError> {
    let start = Instant::now();
    let mut s = f()?;
    s.seconds = start.elapsed().as_secs_f64();
    Ok(s)
}
