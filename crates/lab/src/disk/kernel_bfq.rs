//! Side-by-side share accuracy of the kernel's BFQ and fairway's, on the
//! same storage and the same workload (Linux, root, `fio`, `losetup`).
//!
//! A 1 GiB file in `/var/tmp` becomes a loop device (direct I/O to the
//! backing file). Two synchronous sequential readers of 128 KiB `O_DIRECT`
//! requests, in the first and second half of the device, compete for
//! `seconds`:
//! * **kernel**: the loop device's scheduler is `bfq` (with `low_latency`
//!   off, so weight raising does not distort the shares) and `fio` runs the
//!   two readers with best-effort I/O priorities; Linux's BFQ turns
//!   priority p into weight (8 − p)·10, so priorities 0 and 4 are weights
//!   80 and 40;
//! * **fairway**: the loop device's scheduler is `none`, and two threads
//!   submit the same reads under fairway's BFQ (B_max 4096 sectors, T_max
//!   125 ms like the kernel's `timeout_sync`, weights 80 and 40) through
//!   the [`Backend`] chosen: [`FileDevice`] (`pread`) or [`UringDevice`]
//!   (io_uring).
//!
//! Reported: each reader's MB/s and share of the total, beside the weight
//! share.

pub use super::kernel_error::KernelError;
use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::file_device::{FileDevice, FileIoError, FileSubmitter};
use fairway_disk::uring_device::{UringDevice, UringError};
use fairway_disk::{AppId, AppSpec, DiskScheduler, Request, SECTOR_BYTES};
use serde::Serialize;
use std::os::unix::fs::OpenOptionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

/// How fairway's side performs the transfers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Backend {
    /// One blocking `pread` at a time ([`FileDevice`]).
    Pread,
    /// io_uring with at most `in_flight` transfers at once ([`UringDevice`]).
    IoUring {
        /// Transfers in the ring at once, `1..=256`.
        in_flight: u32,
    },
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Pread => write!(f, "pread"),
            Backend::IoUring { in_flight } => write!(f, "io_uring, {in_flight} in flight"),
        }
    }
}

enum Device {
    Pread(FileDevice),
    Uring(UringDevice),
}

impl Device {
    fn submitter(&self) -> FileSubmitter {
        match self {
            Device::Pread(d) => d.submitter(),
            Device::Uring(d) => d.submitter(),
        }
    }
    fn shutdown(self) {
        match self {
            Device::Pread(d) => drop(d.shutdown()),
            Device::Uring(d) => drop(d.shutdown()),
        }
    }
}

/// One side's result.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    /// `kernel` or `fairway`.
    pub scheduler: String,
    /// MB/s per reader.
    pub mb_s: Vec<f64>,
    /// Share of the total per reader.
    pub share: Vec<f64>,
}

/// The comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Weights (kernel: from the I/O priorities).
    pub weights: Vec<u32>,
    /// Ideal shares.
    pub ideal: Vec<f64>,
    /// Kernel BFQ.
    pub kernel: Side,
    /// fairway BFQ.
    pub fairway: Side,
}

/// Why the comparison could not run.
#[derive(Debug)]
pub enum Skip {
    /// What this machine or user lacks, every item of it: `root`, or a
    /// tool with the package that has it.
    Lacks(Vec<&'static str>),
    /// The kernel has no BFQ for loop devices.
    NoBfq,
    /// The io_uring back-end was asked for and the kernel refuses io_uring.
    NoUring(String),
    /// Something failed once the comparison had started.
    Failed(KernelError),
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::Lacks(what) => write!(f, "needs {}", what.join(" and ")),
            Skip::NoBfq => write!(f, "needs a kernel with the bfq I/O scheduler"),
            Skip::NoUring(e) => write!(f, "needs io_uring, which the kernel refuses: {e}"),
            Skip::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

const IMAGE: &str = "/var/tmp/fairway-kernel-bfq.img";
const HALF: u64 = 512 << 20;
const REGION: u64 = 400 << 20;
const BS: u64 = 128 << 10;
/// fairway's BFQ: B_max 4096 sectors, and T_max as the kernel's BFQ sets it
/// (`timeout_sync`, 125 ms): on a device this fast, the automatic T_max
/// (4/3 of B_max at the measured rate) is a few milliseconds, shorter than
/// a thread's wake-up jitter, and would overcharge both readers into equal
/// time slices.
pub const FAIRWAY_BFQ: DiskSchedSpec = DiskSchedSpec::Bfq {
    b_max: 4096,
    t_wait_ms: 4,
    t_fifo_ms: 100,
    t_max_ms: Some(125),
    // The kernel's default too.
    low_latency: true,
    inject: false,
    warm_depth: fairway_disk::bfq::DEFAULT_WARM_DEPTH,
};
/// fio priorities and the kernel weights they mean.
const PRIOS: [u32; 2] = [0, 4];

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

impl From<KernelError> for Skip {
    fn from(e: KernelError) -> Self {
        Skip::Failed(e)
    }
}

fn sh(cmd: &'static str, args: &[&str]) -> Result<String, KernelError> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|error| KernelError::Spawn { cmd, error })?;
    if !out.status.success() {
        return Err(KernelError::Command {
            cmd,
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The image file's error.
fn image(error: std::io::Error) -> KernelError {
    KernelError::File {
        path: IMAGE.to_string(),
        error,
    }
}

/// Whether an executable file named `tool` is in a directory of `PATH`
/// (looked up here rather than through a shell, which may itself be absent).
fn has(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// What the comparison needs: root, and each tool with its package.
const TOOLS: [(&str, &str); 2] = [
    ("fio", "fio (package fio)"),
    ("losetup", "losetup (package util-linux)"),
];

struct Loop(String);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
        let _ = std::fs::remove_file(IMAGE);
    }
}

fn set(dev: &str, setting: &'static str, value: &'static str) -> Result<(), KernelError> {
    let name = dev.trim_start_matches("/dev/");
    std::fs::write(format!("/sys/block/{name}/queue/{setting}"), value).map_err(|error| {
        KernelError::Setting {
            setting,
            value,
            error,
        }
    })
}

fn shares(mb: &[f64]) -> Vec<f64> {
    let t: f64 = mb.iter().sum();
    mb.iter().map(|x| x / t.max(1e-9)).collect()
}

fn kernel_side(dev: &str, seconds: u64) -> Result<Side, KernelError> {
    set(dev, "scheduler", "bfq")?;
    set(dev, "iosched/low_latency", "0")?;
    let mut args = vec![
        "--output-format=json".to_string(),
        "--ioengine=psync".into(),
        "--direct=1".into(),
        "--rw=read".into(),
        format!("--bs={BS}"),
        "--time_based".into(),
        format!("--runtime={seconds}"),
        format!("--filename={dev}"),
    ];
    for (i, p) in PRIOS.iter().enumerate() {
        args.push(format!("--name=r{i}"));
        args.push(format!("--offset={}", i as u64 * HALF));
        args.push(format!("--size={REGION}"));
        args.push("--prioclass=2".into());
        args.push(format!("--prio={p}"));
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sh("fio", &a)?;
    let v: serde_json::Value = serde_json::from_str(&out).map_err(KernelError::FioJson)?;
    let jobs = v["jobs"].as_array().map_or(&[][..], Vec::as_slice);
    if jobs.len() != PRIOS.len() {
        return Err(KernelError::FioJobs {
            found: jobs.len(),
            expected: PRIOS.len(),
        });
    }
    let mb = jobs
        .iter()
        .enumerate()
        .map(|(job, j)| {
            j["read"]["bw_bytes"]
                .as_f64()
                .map(|b| b / 1e6)
                .ok_or(KernelError::FioBandwidth { job })
        })
        .collect::<Result<Vec<f64>, _>>()?;
    Ok(Side {
        scheduler: "kernel BFQ".into(),
        share: shares(&mb),
        mb_s: mb,
    })
}

fn fairway_side(dev: &str, weights: &[u32], seconds: u64, backend: Backend) -> Result<Side, Skip> {
    set(dev, "scheduler", "none")?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(0o40000) // O_DIRECT on Linux x86-64 and aarch64
        .open(dev)
        .map_err(|error| KernelError::File {
            path: dev.to_string(),
            error,
        })?;
    let mut bfq = FAIRWAY_BFQ
        .build(weights.len() as u32)
        .map_err(KernelError::from)?;
    for (i, &w) in weights.iter().enumerate() {
        bfq.add_app(AppId(i as u32), AppSpec::weight(w))
            .map_err(KernelError::from)?;
    }
    let device = match backend {
        Backend::Pread => Device::Pread(FileDevice::start(bfq, file).map_err(KernelError::Device)?),
        Backend::IoUring { in_flight } => match UringDevice::start(bfq, file, in_flight) {
            Ok(d) => Device::Uring(d),
            Err(UringError::Unavailable(e)) => return Err(Skip::NoUring(e.to_string())),
            Err(e) => return Err(KernelError::Uring(e).into()),
        },
    };
    let end = Instant::now() + Duration::from_secs(seconds);
    let threads: Vec<_> = (0..weights.len())
        .map(|i| {
            let s = device.submitter();
            std::thread::spawn(move || {
                let (mut off, mut bytes) = (0u64, 0u64);
                let t0 = Instant::now();
                while Instant::now() < end {
                    let sector = (i as u64 * HALF + off) / SECTOR_BYTES;
                    let req = Request::read(AppId(i as u32), sector, (BS / SECTOR_BYTES) as u32);
                    let result = s
                        .read(req)
                        .recv()
                        .map_or(Err(FileIoError::ShutDown), |c| c.result);
                    result.map_err(|error| KernelError::Read { reader: i, error })?;
                    bytes += BS;
                    off = (off + BS) % REGION;
                }
                Ok(bytes as f64 / 1e6 / t0.elapsed().as_secs_f64())
            })
        })
        .collect();
    let mb: Result<Vec<f64>, KernelError> = threads
        .into_iter()
        .enumerate()
        .map(|(reader, t)| {
            t.join()
                .unwrap_or(Err(KernelError::ReaderPanicked { reader }))
        })
        .collect();
    device.shutdown();
    let mb = mb?;
    Ok(Side {
        scheduler: format!("fairway BFQ ({backend})"),
        share: shares(&mb),
        mb_s: mb,
    })
}

/// Runs the comparison (see the module doc), `seconds` per side, fairway's
/// side through `backend`.
pub fn compare(seconds: u64, backend: Backend) -> Result<Comparison, Skip> {
    let mut lacks: Vec<&'static str> = Vec::new();
    if !is_root() {
        lacks.push("root");
    }
    lacks.extend(TOOLS.iter().filter(|(t, _)| !has(t)).map(|(_, what)| *what));
    if !lacks.is_empty() {
        return Err(Skip::Lacks(lacks));
    }
    // Real blocks, not a sparse file: reading holes costs no I/O.
    {
        use std::io::Write;
        let mut f = std::fs::File::create(IMAGE).map_err(image)?;
        let block: Vec<u8> = (0..1u32 << 20)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        for _ in 0..(2 * HALF) >> 20 {
            f.write_all(&block).map_err(image)?;
        }
        f.sync_all().map_err(image)?;
    }
    let dev = sh("losetup", &["-f", "--show", "--direct-io=on", IMAGE])?
        .trim()
        .to_string();
    let guard = Loop(dev.clone());
    let name = dev.trim_start_matches("/dev/");
    let list = format!("/sys/block/{name}/queue/scheduler");
    let available =
        std::fs::read_to_string(&list).map_err(|error| KernelError::File { path: list, error })?;
    if !available.contains("bfq") {
        return Err(Skip::NoBfq);
    }
    // Warm the backing file into the host's caches once, so neither side
    // runs against a colder store than the other.
    {
        use std::io::Read;
        let mut f = std::fs::File::open(IMAGE).map_err(image)?;
        let mut buf = vec![0u8; 1 << 20];
        while f.read(&mut buf).map_err(image)? > 0 {}
    }
    let weights: Vec<u32> = PRIOS.iter().map(|p| (8 - p) * 10).collect();
    let wsum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    let kernel = kernel_side(&dev, seconds)?;
    let fairway = fairway_side(&dev, &weights, seconds, backend)?;
    drop(guard);
    Ok(Comparison {
        ideal: weights.iter().map(|&w| f64::from(w) / wsum).collect(),
        weights,
        kernel,
        fairway,
    })
}
