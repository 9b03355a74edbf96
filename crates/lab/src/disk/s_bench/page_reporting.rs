//! A virtual machine's free page reporting, which pauses its virtual
//! disk. A guest whose balloon device offers it (`virtio_balloon`'s
//! `reporting_vq`) tells the hypervisor which of its freed memory it may
//! take back: starting 2 s after a large amount is freed (Linux's
//! `PAGE_REPORTING_DELAY`), in passes about 2 s apart until all of it is
//! reported. A hypervisor that handles the report on the thread that also
//! serves the virtual disk serves no I/O meanwhile: each pass stops every
//! request in flight for tens to a couple of hundred milliseconds.
//!
//! S drops the page cache before each start-up, and the kernel's columns
//! read through that cache, so each drop frees gigabytes: without care, a
//! replay of the next seconds may fall into a pass, and takes several
//! times its usual time whatever the scheduler. The loop therefore waits,
//! before each drop, until no report has come for [`QUIET`] (a replay
//! then ends before its own drop's first pass), and counts the reports
//! that still came during each replay. The count is the guest's
//! interrupts from the reporting queue (`/proc/interrupts`): one per pass
//! of reports the hypervisor has taken.

use std::time::Duration;

/// No report for this long: the passes have ended (they are about 2 s
/// apart while memory is left to report).
pub const QUIET: Duration = Duration::from_secs(3);

/// The longest the loop waits for quiet before a drop; it goes on after
/// that (each replay's count says whether reports came during it).
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// The name of the balloon's reporting queue in `/proc/interrupts`.
const QUEUE: &str = "reporting_vq";

/// Reports the hypervisor has taken so far (summed over CPUs and
/// devices); `None` on a machine without free page reporting.
pub fn reports() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/interrupts").ok()?;
    count(&text)
}

/// The reporting queues' interrupts in `/proc/interrupts`' `text`.
fn count(text: &str) -> Option<u64> {
    let mut found = None;
    for line in text.lines().filter(|l| l.contains(QUEUE)) {
        // `NN:  cpu0  cpu1 ...  chip  hwirq  name`: the numbers follow
        // the irq's own.
        let n: u64 = line
            .split_whitespace()
            .skip(1)
            .map_while(|f| f.parse::<u64>().ok())
            .sum();
        found = Some(found.unwrap_or(0) + n);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "           CPU0       CPU1
 31:          0       6657 PCI-MSIX-0000:00:01.0   3-edge      virtio0-stats
 32:       8291         12 PCI-MSIX-0000:00:01.0   4-edge      virtio0-reporting_vq
 36:          0   13471344 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
NMI:          0          0   Non-maskable interrupts
";

    #[test]
    fn the_reporting_queue_is_counted_over_every_cpu() {
        assert_eq!(count(SAMPLE), Some(8303));
    }

    #[test]
    fn a_machine_without_the_queue_has_no_count() {
        let without: String = SAMPLE
            .lines()
            .filter(|l| !l.contains(QUEUE))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(count(&without), None);
    }
}
