//! Embedding fairway's BFQ in an application: two clients with weights 2
//! and 1 read a temporary file through one engine, each keeping four reads
//! outstanding, for one second; then each client's statistics are printed.
//!
//! `cargo run -p fairway-disk --example embed [-- --inline]` (no root
//! needed; `--inline`: the submitting thread runs the scheduler, see
//! `Submission::Inline`). The file
//! goes to /var/tmp (tmpfs refuses O_DIRECT); where O_DIRECT is refused
//! anyway the file is read buffered, and the output says so.

use fairway_disk::engine::{
    AlignedBuf, ClientId, ClientOptions, Engine, EngineConfig, EngineError, IoRequest, Submission,
    TargetOptions,
};
use std::io::Write;
use std::time::{Duration, Instant};

const FILE_BYTES: u64 = 32 << 20;
const READ: u32 = 64 << 10;
const DEPTH: usize = 4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut submission = Submission::DeviceThread;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--inline" => submission = Submission::Inline,
            _ => return Err(format!("unknown argument {arg:?} (allowed: --inline)").into()),
        }
    }
    let dir = std::path::Path::new("/var/tmp");
    let dir = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("fairway-embed-{}.bin", std::process::id()));
    let result = run(&path, submission);
    let _ = std::fs::remove_file(&path);
    result
}

fn run(path: &std::path::Path, submission: Submission) -> Result<(), Box<dyn std::error::Error>> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for i in 0..FILE_BYTES / 4096 {
        f.write_all(&[(i % 251) as u8; 4096])?;
    }
    f.into_inner()?.sync_all()?;

    // BFQ with the catalogue's defaults, one request on the device at a time.
    let engine = Engine::new(EngineConfig {
        submission,
        ..EngineConfig::default()
    })?;
    let target = match engine.open(path, TargetOptions::default()) {
        Ok(t) => t,
        Err(EngineError::Open { source, .. }) => {
            println!("O_DIRECT refused ({source}): reading through the page cache");
            engine.open(path, TargetOptions::buffered())?
        }
        Err(e) => return Err(e.into()),
    };
    let clients: [ClientId; 2] = [
        engine.add_client(ClientOptions::weight(2))?,
        engine.add_client(ClientOptions::weight(1))?,
    ];

    // Each client reads its own half of the file sequentially, wrapping.
    let half = FILE_BYTES / 2;
    let mut next = [0, half];
    let mut submit = |k: usize, buf: AlignedBuf| -> Result<(), Box<dyn std::error::Error>> {
        let offset = next[k];
        next[k] = half * k as u64 + (offset + u64::from(READ)) % half;
        let req = IoRequest::read(clients[k], target, offset, buf).with_user_data(k as u64);
        engine.submit(req)?;
        Ok(())
    };
    for k in [0, 1] {
        for _ in 0..DEPTH {
            submit(k, AlignedBuf::new(READ as usize)?)?;
        }
    }

    let start = Instant::now();
    let mut done = Vec::new();
    while start.elapsed() < Duration::from_secs(1) {
        done.clear();
        engine.wait(&mut done, Some(Duration::from_millis(100)));
        for c in done.drain(..) {
            if let Err(e) = &c.result {
                return Err(format!("read at {} failed: {e}", c.offset).into());
            }
            // The buffer comes back with the completion: reuse it.
            submit(c.user_data as usize, c.buf)?;
        }
    }

    let stats = [
        engine.client_stats(clients[0])?,
        engine.client_stats(clients[1])?,
    ];
    let total: u64 = stats.iter().map(|s| s.bytes).sum();
    println!("client  weight  completed  MiB     share  mean latency");
    for (k, s) in stats.iter().enumerate() {
        println!(
            "{:<7} {:<7} {:<10} {:<7.1} {:<6.3} {:?}",
            k,
            2 - k,
            s.completed,
            s.bytes as f64 / f64::from(1 << 20),
            s.bytes as f64 / total.max(1) as f64,
            s.mean_latency().unwrap_or_default(),
        );
    }
    // The reads still outstanding come back before shutdown returns.
    let rest = engine.shutdown();
    println!("{} reads outstanding at shutdown, all answered", rest.len());
    Ok(())
}
