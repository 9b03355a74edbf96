//! Keeps CPUs out of their idle halt during latency measurements: one
//! `SCHED_IDLE` thread per CPU that spins (with the CPU's pause hint) until
//! dropped.
//!
//! Why: in a virtual machine a vCPU with nothing to run halts, and the host
//! may take milliseconds to run it again when a timer or a packet wakes it.
//! A client that sleeps until its next packet is due, or a receiver that
//! sleeps until a packet arrives, then measures the host's wake-up instead
//! of the scheduler under test (on the 2-vCPU guest used for the figures,
//! which has no cpuidle driver, the target's p98 was 1–3 ms in every
//! configuration, `none` included, and 4–8 µs with these threads).
//! The PSPAT paper's receiver spun on a core of its own for the same reason.
//!
//! A `SCHED_IDLE` thread runs only when nothing else on its CPU can, so it
//! takes no time from the measured threads of its own CPU; on a CPU whose
//! hyperthread sibling is busy it does share the core's issue slots with
//! it, which is why `udp-bench` uses it for the latency experiments only,
//! not for throughput.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The spinning threads; they stop when this is dropped.
#[derive(Debug)]
pub struct IdleSpinners {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl IdleSpinners {
    /// Starts one `SCHED_IDLE` spinner pinned to each CPU of `cpus`, and
    /// returns once every one runs at that policy. An error (a CPU that
    /// does not exist, a policy the kernel refuses) stops the ones already
    /// started.
    pub fn start(cpus: &[usize]) -> io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut spinners = Self {
            stop: stop.clone(),
            threads: Vec::with_capacity(cpus.len()),
        };
        for &cpu in cpus {
            let (tx, rx) = std::sync::mpsc::channel();
            let stop = stop.clone();
            let t = std::thread::Builder::new()
                .name(format!("idle-spin-{cpu}"))
                .spawn(move || {
                    let ready =
                        crate::affinity::pin_current_thread(cpu).and_then(|()| set_idle_policy());
                    let ok = ready.is_ok();
                    let _ = tx.send(ready);
                    if ok {
                        while !stop.load(Ordering::Relaxed) {
                            std::hint::spin_loop();
                        }
                    }
                })?;
            spinners.threads.push(t);
            match rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(io::Error::other("an idle spinner exited before it started")),
            }
        }
        Ok(spinners)
    }

    /// How many threads spin.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// Whether no thread spins.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }
}

impl Drop for IdleSpinners {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Puts the calling thread under `SCHED_IDLE` (priority 0).
fn set_idle_policy() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid, initialised sched_param; pid 0 is the
    // calling thread. (nix has no sched_setscheduler.)
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spinners run at SCHED_IDLE on their CPUs and stop when dropped;
    /// a CPU that does not exist is an error, not a silent skip.
    #[test]
    fn spinners_run_idle_and_stop() {
        let cpus: Vec<usize> = (0..crate::affinity::available_cpus()).collect();
        let s = IdleSpinners::start(&cpus).unwrap();
        assert_eq!(s.len(), cpus.len());
        let names: Vec<String> = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
            .filter(|st| st.contains("(idle-spin-"))
            .collect();
        assert_eq!(names.len(), cpus.len(), "{names:?}");
        for st in &names {
            // Field 41 of /proc/.../stat (after the command in parentheses)
            // is the policy: 5 = SCHED_IDLE.
            let rest = &st[st.rfind(')').unwrap() + 2..];
            let policy: u32 = rest.split(' ').nth(38).unwrap().parse().unwrap();
            assert_eq!(policy, libc::SCHED_IDLE as u32, "{st}");
        }
        drop(s);
        // `join` returns when the thread has cleared its id, which can be
        // a moment before the kernel removes its /proc entry; on a loaded
        // machine that moment is long, so wait for it (bounded).
        let spinners_left = || {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
                .filter(|st| st.contains("(idle-spin-") && !st.contains(") Z "))
                .count()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while spinners_left() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(spinners_left(), 0);
        assert!(IdleSpinners::start(&[usize::MAX / 2]).is_err());
    }
}
