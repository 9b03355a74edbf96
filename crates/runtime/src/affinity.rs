//! Thread placement: pinning threads to CPUs (`sched_setaffinity`), so the
//! arbiter and the clients run on different cores as in the PSPAT paper §5.2, and
//! real-time (`SCHED_FIFO`) priority, so that ordinary processes sharing
//! those cores cannot preempt them (the PSPAT paper runs its arbiter as a kernel
//! thread; in user space this is the nearest equivalent).

use std::io;

/// Number of CPUs this process may run on.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Pins the calling thread to `cpu`.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "cpu index too large",
        ));
    }
    // SAFETY: `cpu_set_t` is plain data for which all-zero is the empty
    // set; CPU_SET writes within it (index checked above); the call reads
    // `size_of::<cpu_set_t>()` bytes from a valid pointer.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    os_result(rc)
}

/// A libc call's return code as an `io::Result` (`errno` on failure).
#[cfg(target_os = "linux")]
fn os_result(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Pinning is a no-op off Linux.
#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_cpu: usize) -> io::Result<()> {
    Ok(())
}

/// Highest `SCHED_FIFO` priority Linux accepts.
pub const MAX_RT_PRIORITY: u8 = 99;

/// Runs the calling thread under `SCHED_FIFO` at `priority` (1..=99).
/// Needs `CAP_SYS_NICE` (root) or an `RLIMIT_RTPRIO` allowance. Note that
/// Linux throttles real-time threads to `sched_rt_runtime_us` per
/// `sched_rt_period_us` (by default 950 ms per second): a busy-polling
/// real-time thread is stopped for up to 50 ms each second.
#[cfg(target_os = "linux")]
pub fn set_realtime_priority(priority: u8) -> io::Result<()> {
    if priority == 0 || priority > MAX_RT_PRIORITY {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "real-time priority must be 1..=99",
        ));
    }
    let param = libc::sched_param {
        sched_priority: i32::from(priority),
    };
    // SAFETY: `param` is a valid, initialised sched_param; pid 0 is the
    // calling thread.
    os_result(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })
}

/// Linux's real-time throttling budget, `sched_rt_runtime_us`
/// (microseconds of each `sched_rt_period_us` that real-time threads may
/// use; `-1` = unlimited), or `None` where it cannot be read.
///
/// With the default 950 000 µs per second a busy-polling real-time thread
/// is stopped for the remaining 50 ms of every second, even on an
/// otherwise idle CPU: every packet submitted meanwhile waits up to 50 ms.
/// `fairway arbiter-bench --realtime` reports it for that reason.
pub fn rt_throttle_runtime_us() -> Option<i64> {
    std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Real-time priority is not available off Linux.
#[cfg(not(target_os = "linux"))]
pub fn set_realtime_priority(_priority: u8) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "real-time priority is only implemented on Linux",
    ))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn rt_throttle_budget_is_read() {
        let us = rt_throttle_runtime_us().expect("sched_rt_runtime_us readable on Linux");
        assert!(us == -1 || us >= 0, "unexpected sched_rt_runtime_us {us}");
    }
}
