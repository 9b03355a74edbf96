//! CPU time per request of the embeddable engine (scheduler + device
//! thread), on two devices:
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
//! For 1 and 8 clients, each reading 4 KiB synchronously and sequentially
//! in its own region (one request outstanding per client, as the S-style
//! benchmark's readers), completions by callback to a per-client channel
//! (as `fairway disk s-bench` does): prints the requests completed, the
//! device thread's CPU time per request (`/proc/self/task/TID/schedstat`,
//! what the s-bench CPU column counts) and the whole process's
//! (`getrusage`, user + system: clients included).

use fairway_disk::engine::{
    AlignedBuf, ClientOptions, Completion, Engine, EngineConfig, IoRequest, TargetOptions,
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

fn run(
    path: &std::path::Path,
    options: TargetOptions,
    clients: usize,
    secs: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let routes: Arc<Mutex<Vec<Sender<Completion>>>> = Arc::default();
    let r = routes.clone();
    let engine = Engine::with_callback(EngineConfig::default(), move |c: Completion| {
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
        process_cpu() - cpu0,
        engine_thread_cpu() - dev0,
        t0.elapsed(),
    );
    let per = |d: Duration| d.as_nanos() as f64 / 1000.0 / n.max(1) as f64;
    println!(
        "{}, {clients} client(s): {n} requests in {:.2} s ({:.0}/s); device thread {:.2} us/request; process {:.2} us/request",
        path.display(),
        wall.as_secs_f64(),
        n as f64 / wall.as_secs_f64(),
        per(dev),
        per(cpu)
    );
    drop(engine);
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
    let cpu = process_cpu() - cpu0;
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
    for clients in [1, 8] {
        run(
            Path::new("/dev/zero"),
            TargetOptions::buffered(),
            clients,
            secs,
        )?;
    }
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
        for clients in [1, 8] {
            run(&path, direct, clients, secs)?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&path);
    result
}
