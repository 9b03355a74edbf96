//! CPU time spent per request by each scheduler's side.
//!
//! * fairway: the engine's device thread (named `fairway-engine`) does all
//!   the scheduling and issues every transfer; its CPU time comes from
//!   `/proc/self/task/TID/schedstat` (nanoseconds on the CPU, user and
//!   system), falling back to `stat`'s `utime + stime` (clock ticks).
//! * the kernel: its schedulers run inside the workers' system calls (and
//!   the loop device's completion work), so the process's system time
//!   (`getrusage(RUSAGE_SELF)`) over the run, per request, is used. It is
//!   an approximation: it includes the whole I/O path in the kernel (system
//!   call entry, block layer, AIO), not the scheduler alone, and misses
//!   work done in kernel threads (the loop device's workers); compare the
//!   schedulers with `none`'s figure as the baseline.

use std::time::Duration;

/// The process's system CPU time so far.
pub fn process_system() -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    Duration::from_secs(ru.ru_stime.tv_sec as u64)
        + Duration::from_micros(ru.ru_stime.tv_usec as u64)
}

/// The process's CPU time, user and system, every thread.
pub fn process_total() -> Duration {
    // SAFETY: getrusage fills the zeroed struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let t = |v: libc::timeval| {
        Duration::from_secs(v.tv_sec as u64) + Duration::from_micros(v.tv_usec as u64)
    };
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// The CPU time so far of this process's thread named `name`, if there is
/// one.
///
/// Looks up to three times: a listing of `/proc/self/task` skips a
/// thread when one listed before it exits meanwhile (the directory is
/// read by position), which other threads' short lives make likely.
pub fn thread_named(name: &str) -> Option<Duration> {
    (0..3).find_map(|_| scan_for(name))
}

/// One listing of `/proc/self/task` for the thread named `name`.
fn scan_for(name: &str) -> Option<Duration> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        {
            return Some(Duration::from_nanos(ns));
        }
        let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
        // Fields after the command's closing parenthesis: utime is the
        // 14th field of the line, stime the 15th.
        let rest = stat.rsplit_once(')')?.1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        return Some(Duration::from_nanos(ticks * 1_000_000_000 / hz));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_named_thread_and_its_time() {
        let h = std::thread::Builder::new()
            .name("s-bench-cpu-t".into())
            .spawn(|| {
                // Spins until its own clock shows 5 ms (the machine may be
                // busy: wall time says little), or gives up after 10 s.
                let t = std::time::Instant::now();
                let first = thread_named("s-bench-cpu-t");
                while t.elapsed() < Duration::from_secs(10) {
                    if thread_named("s-bench-cpu-t").is_some_and(|c| c >= Duration::from_millis(5))
                    {
                        break;
                    }
                }
                (first, thread_named("s-bench-cpu-t"))
            })
            .unwrap();
        let (first, last) = h.join().unwrap();
        let (first, last) = (first.expect("thread found"), last.expect("thread found"));
        assert!(
            last >= Duration::from_millis(5) && last > first,
            "{first:?} {last:?}"
        );
        assert!(thread_named("no-such-thread-xyz").is_none());
    }
}
