//! A virtual machine's free page reporting, which pauses its virtual
//! disk. A guest whose balloon device offers it (`virtio_balloon`'s
//! `reporting_vq`) tells the hypervisor which of its freed memory it may
//! take back: starting 2 s after a large amount is freed (Linux's
//! `PAGE_REPORTING_DELAY`), in passes about 2 s apart until all of it is
//! reported. A hypervisor that handles a pass on the thread that also
//! serves the virtual disk serves no I/O meanwhile: every request in
//! flight stops for tens to a couple of hundred milliseconds.
//!
//! S drops the page cache before each start-up, and the kernel's columns
//! read through that cache (their readers also drop their region's pages
//! each time they wrap around), so memory is freed by the gigabyte all
//! through a run: a replay that falls into a pass takes several times
//! its usual time, whatever the scheduler. For the run, [`Pause`] raises
//! Linux's `page_reporting_order` (the smallest block it reports) above
//! the largest block the kernel has, which stops new reports, and puts
//! the old value back on every exit path. [`reports`] counts the passes
//! the hypervisor has taken (the guest's interrupts from the reporting
//! queue, `/proc/interrupts`), so each replay says whether one came
//! during it.

use std::fmt;

/// Where Linux keeps the smallest order of the free blocks it reports.
const ORDER: &str = "/sys/module/page_reporting/parameters/page_reporting_order";

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

/// What the run did about free page reporting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reporting {
    /// The machine has none: its disk is not paused by it.
    Absent,
    /// Stopped for the run, the previous order put back after it.
    Paused,
    /// Left as it was, and why (asked for, or refused by the kernel).
    LeftOn(String),
}

impl fmt::Display for Reporting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Absent => f.write_str("absent"),
            Self::Paused => f.write_str("paused for the run"),
            Self::LeftOn(why) => write!(f, "left on ({why})"),
        }
    }
}

/// Free page reporting stopped while this lives (see the module doc).
pub struct Pause {
    /// The order to put back.
    restore: Option<String>,
    /// What was done.
    pub state: Reporting,
}

impl Pause {
    /// Stops new free page reports if the machine makes them and `keep`
    /// is false.
    pub fn start(keep: bool) -> Self {
        let left = |why: String| Self {
            restore: None,
            state: Reporting::LeftOn(why),
        };
        if reports().is_none() {
            return Self {
                restore: None,
                state: Reporting::Absent,
            };
        }
        if keep {
            return left("--keep-page-reporting".into());
        }
        let old = match std::fs::read_to_string(ORDER) {
            Ok(o) => o.trim().to_string(),
            Err(e) => return left(format!("{ORDER}: {e}")),
        };
        // The orders the kernel has: /proc/buddyinfo's columns of counts.
        let Some(orders) = std::fs::read_to_string("/proc/buddyinfo")
            .ok()
            .and_then(|b| block_orders(&b))
        else {
            return left("/proc/buddyinfo unreadable".into());
        };
        match std::fs::write(ORDER, orders.to_string()) {
            Ok(()) => Self {
                restore: Some(old),
                state: Reporting::Paused,
            },
            Err(e) => left(format!("{ORDER} = {orders}: {e}")),
        }
    }
}

impl Drop for Pause {
    fn drop(&mut self) {
        if let Some(old) = self.restore.take() {
            let _ = std::fs::write(ORDER, old);
        }
    }
}

/// The number of block orders in `/proc/buddyinfo`'s `text` (every
/// order is below it): the counts after `zone NAME`.
fn block_orders(text: &str) -> Option<usize> {
    let line = text.lines().next()?;
    let counts = line
        .split_whitespace()
        .skip_while(|f| *f != "zone")
        .skip(2)
        .take_while(|f| f.parse::<u64>().is_ok())
        .count();
    (counts > 0).then_some(counts)
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
    fn the_block_orders_are_buddyinfos_columns() {
        let b = "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \nNode 0, zone    DMA32      2      3      0      2      3      2      1      4      4      2    752 \n";
        assert_eq!(block_orders(b), Some(11));
        assert_eq!(block_orders("Node 0, zone DMA\n"), None);
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
