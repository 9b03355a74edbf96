//! The machine-wide lock that makes trials of every process run one at a
//! time.

use super::error::TrialError;
use fairway_runtime::net::interrupted;
use std::fs::{File, OpenOptions, TryLockError};
use std::time::{Duration, Instant};

/// The machine-wide lock every trial holds while it runs.
pub const TRIAL_LOCK_PATH: &str = "/run/fairway-udp-bench.lock";
/// How long a trial waits for another process's trial to end, at most.
const TRIAL_LOCK_WAIT: Duration = Duration::from_secs(120);

/// Holds [`TRIAL_LOCK_PATH`] (an advisory `flock`) until dropped.
///
/// Trials pin real-time threads to fixed CPUs; two processes running
/// trials at once (a benchmark and the root-run tests, say) would share
/// them, and a busy-polling arbiter at the same `SCHED_FIFO` priority as
/// another's never lets it run: a trial then delivers nothing. Every trial
/// of every process takes this lock first, so they run one at a time.
pub(super) struct TrialLock(#[allow(dead_code)] File);

impl TrialLock {
    /// Takes the lock, waiting at most [`TRIAL_LOCK_WAIT`] for another
    /// process to release it.
    pub(super) fn acquire() -> Result<Self, TrialError> {
        let failed = |source| TrialError::Lock {
            path: TRIAL_LOCK_PATH,
            source,
        };
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(TRIAL_LOCK_PATH)
            .map_err(failed)?;
        let give_up = Instant::now() + TRIAL_LOCK_WAIT;
        loop {
            match f.try_lock() {
                Ok(()) => return Ok(Self(f)),
                Err(TryLockError::WouldBlock) if Instant::now() < give_up => {
                    if interrupted() {
                        return Err(TrialError::Interrupted);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(TrialError::LockTimeout {
                        path: TRIAL_LOCK_PATH,
                        seconds: TRIAL_LOCK_WAIT.as_secs(),
                    })
                }
                Err(TryLockError::Error(e)) => return Err(failed(e)),
            }
        }
    }
}
