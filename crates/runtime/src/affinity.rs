//! Pinning threads to CPUs (`sched_setaffinity`), so the arbiter and the
//! clients run on different cores as in seed 001 §5.2.

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
