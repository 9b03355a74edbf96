//! CPU time per request of the embeddable engine (scheduler, hand-offs,
//! delivery), measured against issuing the same I/O without it, on two
//! devices:
//!
//! * `/dev/zero`, which costs almost nothing: io_uring reads it inline in
//!   the submission (a tmpfs file would hand every read to an io_uring
//!   worker thread, whose wake-up is the device's cost, not the engine's);
//! * a 64 MiB file in `/var/tmp` read with `O_DIRECT` (buffered where
//!   refused), whose transfers take real time, as a device's do: what the
//!   engine does while a transfer is in flight shows here.
//!
//! First, BFQ alone (no engine, no threads): eight applications, each with
//! one synchronous request queued at a time, added, dispatched and
//! completed in a loop — the scheduler's own CPU per request.
//!
//! `cargo bench -p fairway-disk --bench engine_cpu [-- SECONDS]`
//! (default 2 s per line; nothing else should run meanwhile, as wake-ups
//! cost more CPU on a busy machine).
//!
//! Then, for 1 and 8 clients, each a thread reading 4 KiB synchronously
//! and sequentially in its own region (one request outstanding per client,
//! as the S-style benchmark's readers), three ways in turn:
//!
//! * `plain`: each thread issues its reads on an io_uring of its own and
//!   waits for each (no scheduler, no other thread): the cost of the I/O
//!   itself;
//! * `device-thread`: through the engine, `Submission::DeviceThread`;
//! * `inline`: through the engine, `Submission::Inline`;
//!
//! the engine's completions by callback to a channel per client (as
//! `fairway disk s-bench` does). Each line prints the requests completed,
//! the whole process's CPU per request (`getrusage`, user + system, all
//! threads) and the engine thread's (`/proc/self/task/TID/schedstat`, the
//! s-bench CPU column's measure). The summary gives what the engine adds
//! per request: its process CPU per request minus `plain`'s, measured in
//! the same run.

use fairway_disk::engine::{
    AlignedBuf, ClientOptions, Completion, Engine, EngineConfig, IoRequest, Submission,
    TargetOptions,
};
use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Dispatch, Request};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const REGION: u64 = 8 << 20;
const READ: u32 = 4096;

fn process_cpu() -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn engine_thread_cpu() -> Duration {
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == "fairway-engine" {
            let s = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            let ns = s.split_whitespace().next().and_then(|v| v.parse().ok());
            return Duration::from_nanos(ns.unwrap_or(0));
        }
    }
    Duration::ZERO
}

/// One line's totals.
#[derive(Clone, Copy, Debug)]
struct Totals {
    requests: u64,
    wall: Duration,
    process: Duration,
    engine_thread: Duration,
}

impl Totals {
    /// Microseconds per request of `d`.
    fn per(&self, d: Duration) -> f64 {
        d.as_nanos() as f64 / 1000.0 / self.requests.max(1) as f64
    }

    fn print(&self, path: &Path, how: &str, clients: usize) {
        println!(
            "{}, {how}, {clients} client(s): {} requests in {:.2} s ({:.0}/s); process {:.3} s = {:.2} us/request; engine thread {:.3} s = {:.2} us/request",
            path.display(),
            self.requests,
            self.wall.as_secs_f64(),
            self.requests as f64 / self.wall.as_secs_f64(),
            self.process.as_secs_f64(),
            self.per(self.process),
            self.engine_thread.as_secs_f64(),
            self.per(self.engine_thread),
        );
    }
}

/// The same reads without the engine: each thread on its own ring; with
/// `one_at_a_time`, a read in flight at a time over all threads (as the
/// engine's `max_in_flight` of 1 allows), the threads taking turns on a
/// mutex.
fn plain(
    path: &Path,
    direct: bool,
    clients: usize,
    one_at_a_time: bool,
    secs: f64,
) -> Result<Totals, Box<dyn std::error::Error>> {
    let turn = Arc::new(Mutex::new(()));
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    if direct {
        open.custom_flags(libc::O_DIRECT);
    }
    let file = Arc::new(open.open(path)?);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (cpu0, t0) = (process_cpu(), Instant::now());
    let threads: Vec<_> = (0..clients)
        .map(|k| {
            let (file, stop, turn) = (file.clone(), stop.clone(), turn.clone());
            std::thread::spawn(move || -> std::io::Result<u64> {
                use std::os::fd::AsRawFd;
                let mut ring = io_uring::IoUring::new(2)?;
                let mut buf = AlignedBuf::new(READ as usize).expect("buffer");
                let fd = io_uring::types::Fd(file.as_raw_fd());
                let mut n = 0u64;
                let base = k as u64 * REGION;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let offset = base + (n * u64::from(READ)) % REGION;
                    let _turn =
                        one_at_a_time.then(|| turn.lock().unwrap_or_else(|e| e.into_inner()));
                    let e = io_uring::opcode::Read::new(fd, buf.as_mut_ptr(), READ)
                        .offset(offset)
                        .build();
                    // SAFETY: `buf` and `file` outlive the read, which is
                    // waited for and reaped before the next one.
                    unsafe { ring.submission().push(&e) }.map_err(std::io::Error::other)?;
                    ring.submit_and_wait(1)?;
                    let c = ring
                        .completion()
                        .next()
                        .ok_or_else(|| std::io::Error::other("no completion"))?;
                    assert_eq!(c.result(), READ as i32, "read at {offset}");
                    n += 1;
                }
                Ok(n)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut requests = 0;
    for t in threads {
        requests += t.join().map_err(|_| "a reader panicked")??;
    }
    Ok(Totals {
        requests,
        wall: t0.elapsed(),
        process: process_cpu().saturating_sub(cpu0),
        engine_thread: Duration::ZERO,
    })
}

fn run(
    path: &std::path::Path,
    options: TargetOptions,
    submission: Submission,
    clients: usize,
    secs: f64,
) -> Result<Totals, Box<dyn std::error::Error>> {
    let routes: Arc<Mutex<Vec<Sender<Completion>>>> = Arc::default();
    let r = routes.clone();
    let config = EngineConfig {
        submission,
        ..EngineConfig::default()
    };
    let engine = Engine::with_callback(config, move |c: Completion| {
        let routes = r.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = routes.get(c.user_data as usize) {
            let _ = tx.send(c);
        }
    })?;
    let target = engine.open(path, options)?;
    let engine = Arc::new(engine);
    let mut rxs = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..clients {
        let (tx, rx) = channel();
        routes.lock().unwrap().push(tx);
        rxs.push(rx);
        ids.push(engine.add_client(ClientOptions::weight(1))?);
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (cpu0, dev0, t0) = (process_cpu(), engine_thread_cpu(), Instant::now());
    let threads: Vec<_> = rxs
        .into_iter()
        .enumerate()
        .map(|(k, rx)| {
            let (engine, stop, client) = (engine.clone(), stop.clone(), ids[k]);
            std::thread::spawn(move || -> u64 {
                let mut buf = AlignedBuf::new(READ as usize).expect("buffer");
                let mut n = 0u64;
                let base = k as u64 * REGION;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let offset = base + (n * u64::from(READ)) % REGION;
                    let req = IoRequest::read(client, target, offset, buf).with_user_data(k as u64);
                    if engine.submit(req).is_err() {
                        break;
                    }
                    let c = rx.recv().expect("completion");
                    assert!(c.result.is_ok(), "{:?}", c.result);
                    buf = c.buf;
                    n += 1;
                }
                n
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let n: u64 = threads.into_iter().map(|t| t.join().unwrap_or(0)).sum();
    let (cpu, dev, wall) = (
        process_cpu().saturating_sub(cpu0),
        engine_thread_cpu().checked_sub(dev0).unwrap_or_else(|| {
            println!("(the engine thread's clock went backwards: its figure below is not valid)");
            Duration::ZERO
        }),
        t0.elapsed(),
    );
    drop(engine);
    Ok(Totals {
        requests: n,
        wall,
        process: cpu,
        engine_thread: dev,
    })
}

/// The three ways on one device, 1 and 8 clients; the summary's rows.
fn device(
    path: &Path,
    options: TargetOptions,
    secs: f64,
    rows: &mut Vec<String>,
) -> Result<(), Box<dyn std::error::Error>> {
    for clients in [1, 8] {
        let free = plain(path, options.direct, clients, false, secs)?;
        free.print(path, "plain", clients);
        let base = plain(path, options.direct, clients, true, secs)?;
        base.print(path, "plain, 1 in flight", clients);
        let mut added = Vec::new();
        for (how, submission) in [
            ("device-thread", Submission::DeviceThread),
            ("inline", Submission::Inline),
        ] {
            let t = run(path, options, submission, clients, secs)?;
            t.print(path, how, clients);
            added.push(t.per(t.process) - base.per(base.process));
        }
        rows.push(format!(
            "| {} | {clients} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            path.display(),
            free.per(free.process),
            base.per(base.process),
            added[0],
            added[1],
            added[1] / added[0]
        ));
    }
    Ok(())
}

/// BFQ alone: 8 applications reading sequentially, one request each
/// queued at a time; the CPU time per request added, dispatched and
/// completed (the thread's clock, `getrusage`).
fn scheduler_alone(secs: f64) -> Result<(), Box<dyn std::error::Error>> {
    let mut b = Bfq::new(BfqConfig::simplified(4096)?)?;
    for a in 0..8 {
        b.add_app(AppId(a), AppSpec::weight(1 + a % 2))?;
    }
    let mut next = [0u64; 8];
    let mut now = 0u64;
    for a in 0..8u32 {
        b.add_request(now, Request::read(AppId(a), u64::from(a) << 30, 8))
            .map_err(|e| format!("{e:?}"))?;
        next[a as usize] = (u64::from(a) << 30) + 8;
    }
    let (cpu0, t0) = (process_cpu(), Instant::now());
    let mut n = 0u64;
    while t0.elapsed().as_secs_f64() < secs {
        for _ in 0..1000 {
            now += 20_000;
            let req = match b.dispatch(now) {
                Dispatch::Serve(r) => r,
                d => return Err(format!("nothing served: {d:?}").into()),
            };
            now += 20_000;
            b.complete(now, &req);
            let a = req.app.index();
            b.add_request(now, Request::read(req.app, next[a], 8))
                .map_err(|e| format!("{e:?}"))?;
            next[a] += 8;
            n += 1;
        }
    }
    let cpu = process_cpu().saturating_sub(cpu0);
    println!(
        "BFQ alone, 8 applications: {n} requests; {:.3} us/request",
        cpu.as_nanos() as f64 / 1000.0 / n as f64
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let secs: f64 = match std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        Some(a) => a
            .parse()
            .ok()
            .filter(|s: &f64| (0.1..=600.0).contains(s))
            .ok_or_else(|| format!("SECONDS {a:?} is out of range (allowed: 0.1..=600)"))?,
        None => 2.0,
    };
    scheduler_alone(secs)?;
    let mut rows = Vec::new();
    device(
        Path::new("/dev/zero"),
        TargetOptions::buffered(),
        secs,
        &mut rows,
    )?;
    let path = Path::new("/var/tmp").join(format!("fairway-engine-cpu-{}.bin", std::process::id()));
    let result = (|| -> Result<(), Box<dyn std::error::Error>> {
        let mut f = std::fs::File::create(&path)?;
        let block = vec![7u8; 1 << 20];
        for _ in 0..(8 * REGION) >> 20 {
            f.write_all(&block)?;
        }
        f.sync_all()?;
        drop(f);
        let direct = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
        {
            Ok(_) => TargetOptions::default(),
            Err(_) => TargetOptions::buffered(),
        };
        device(&path, direct, secs, &mut rows)
    })();
    let _ = std::fs::remove_file(&path);
    result?;
    println!(
        "\nCPU the engine adds per request (its process CPU per request minus plain io_uring's with 1 in flight), us:"
    );
    println!(
        "| device | clients | plain | plain, 1 in flight | device-thread adds | inline adds | inline / device-thread |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!("{r}");
    }
    Ok(())
}
