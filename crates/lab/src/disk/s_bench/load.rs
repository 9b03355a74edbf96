//! What the workers make of the device: the loop device's own counters
//! (`/sys/block/loopN/stat`, `/sys/block/loopN/inflight`), read while the
//! greedy workers run alone. This is how the depth and size of S's
//! readers' requests are measured rather than chosen: their 4 KiB reads
//! through the page cache reach the device as whatever the kernel's
//! read-ahead makes of them, and fairway's readers, which can only issue
//! direct I/O, are then given that depth and size
//! ([`super::workers::SeqReads::Pipelined`]).

use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the sampler reads the in-flight count.
const EVERY: Duration = Duration::from_millis(2);

/// The device's cumulative counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct DevStat {
    /// Reads completed.
    pub reads: u64,
    /// Sectors (512 bytes) read.
    pub read_sectors: u64,
    /// Writes completed.
    pub writes: u64,
}

/// `/sys/block/NAME/stat` of the block device `dev` (`/dev/loopN`).
pub fn stat(dev: &str) -> Option<DevStat> {
    let name = dev.trim_start_matches("/dev/");
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).ok()?;
    let f: Vec<u64> = s
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    Some(DevStat {
        reads: *f.first()?,
        read_sectors: *f.get(2)?,
        writes: *f.get(4)?,
    })
}

/// Reads in flight on the device now (`/sys/block/NAME/inflight`).
fn in_flight_reads(path: &str) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The load the workers put on the device while they ran alone.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct DeviceLoad {
    /// Mean reads in flight on the device (sampled every 2 ms).
    pub in_flight_reads: f64,
    /// Mean bytes per read the device completed.
    pub read_bytes: f64,
    /// Reads the device completed per second.
    pub reads_per_s: f64,
    /// Samples of the in-flight count.
    pub samples: u64,
}

/// Samples the device's in-flight reads in a thread until finished.
pub struct Sampler {
    dev: String,
    start: Option<DevStat>,
    began: std::time::Instant,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<(u64, u64)>>,
}

impl Sampler {
    /// Starts sampling the block device `dev`.
    pub fn start(dev: &str) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let path = format!("/sys/block/{}/inflight", dev.trim_start_matches("/dev/"));
        let handle = std::thread::Builder::new()
            .name("s-bench-sampler".into())
            .spawn(move || {
                let (mut sum, mut n) = (0u64, 0u64);
                while !s.load(Ordering::Relaxed) {
                    if let Some(x) = in_flight_reads(&path) {
                        sum += x;
                        n += 1;
                    }
                    std::thread::sleep(EVERY);
                }
                (sum, n)
            })
            .ok();
        Self {
            dev: dev.to_string(),
            start: stat(dev),
            began: std::time::Instant::now(),
            stop,
            handle,
        }
    }

    /// Stops; the load since the start (`None` if the device's counters
    /// could not be read or nothing was read).
    pub fn finish(mut self) -> Option<DeviceLoad> {
        self.stop.store(true, Ordering::Relaxed);
        let (sum, n) = self.handle.take()?.join().ok()?;
        let (a, b) = (self.start?, stat(&self.dev)?);
        let reads = b.reads.checked_sub(a.reads)?;
        let secs = self.began.elapsed().as_secs_f64();
        (n > 0 && reads > 0).then(|| DeviceLoad {
            in_flight_reads: sum as f64 / n as f64,
            read_bytes: (b.read_sectors - a.read_sectors) as f64 * 512.0 / reads as f64,
            reads_per_s: reads as f64 / secs,
            samples: n,
        })
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// What a fairway reader keeps outstanding to put `load` on the device as
/// one of `readers` readers: `(depth, bytes, split)`. A read no larger
/// than `max_bytes` (the engine's largest request) is kept as measured:
/// the mean size rounded to the nearest 4 KiB, and the mean in-flight
/// reads per reader rounded to the nearest whole one (at least one: a
/// reader always has one). A larger mean read is split into reads of
/// `max_bytes` keeping the same bytes outstanding per reader (`split`
/// true), so fairway's scheduler is given as much to hold back as the
/// kernel's device queue held: the fewest reads of at most `max_bytes`
/// that hold those bytes (at least two, so that a reader always has a
/// read on the device while it issues the next), of equal size rounded
/// to the nearest 4 KiB.
pub fn reader_shape(load: &DeviceLoad, readers: u32, max_bytes: u32) -> (u32, u32, bool) {
    let per = load.in_flight_reads / f64::from(readers.max(1));
    if load.read_bytes <= f64::from(max_bytes) {
        let pages = ((load.read_bytes / 4096.0).round() as u32).max(1);
        let bytes = pages.saturating_mul(4096).min(max_bytes);
        return ((per.round() as u32).max(1), bytes, false);
    }
    let outstanding = per * load.read_bytes;
    let depth = ((outstanding / f64::from(max_bytes)).ceil() as u32).max(2);
    let pages = ((outstanding / f64::from(depth) / 4096.0).round() as u32).max(1);
    (depth, pages.saturating_mul(4096).min(max_bytes), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(in_flight_reads: f64, read_bytes: f64) -> DeviceLoad {
        DeviceLoad {
            in_flight_reads,
            read_bytes,
            reads_per_s: 1.0,
            samples: 1,
        }
    }

    #[test]
    fn the_shape_is_the_measured_load_per_reader() {
        assert_eq!(
            reader_shape(&load(14.6, 131072.0), 10, 131072),
            (1, 131072, false)
        );
        assert_eq!(
            reader_shape(&load(16.0, 130000.0), 10, 131072),
            (2, 131072, false)
        );
        assert_eq!(
            reader_shape(&load(2.0, 65536.0), 10, 131072),
            (1, 65536, false)
        );
        assert_eq!(
            reader_shape(&load(40.0, 1000.0), 5, 131072),
            (8, 4096, false)
        );
        // 256 KiB reads, one per reader: two reads of 128 KiB.
        assert_eq!(
            reader_shape(&load(10.0, 262144.0), 10, 131072),
            (2, 131072, true)
        );
        // 2.54 reads of 856 KiB per reader: 17 of 128 KiB.
        assert_eq!(
            reader_shape(&load(25.4, 876544.0), 10, 131072),
            (17, 131072, true)
        );
        // 1.24 reads of 1.2 MiB per reader, reads up to 1 MiB: the same
        // bytes in two reads of 744 KiB.
        assert_eq!(
            reader_shape(&load(12.4, 1_228_800.0), 10, 1 << 20),
            (2, 761_856, true)
        );
        // Less than one such read per reader: still two, halving it.
        assert_eq!(
            reader_shape(&load(5.0, 1_228_800.0), 10, 1 << 20),
            (2, 307_200, true)
        );
    }
}
