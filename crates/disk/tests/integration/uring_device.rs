//! BFQ scheduling real O_DIRECT reads of threads through io_uring: every
//! request answered once with the right data, shares following the
//! weights. Skipped, visibly, where the kernel refuses io_uring.

use fairway_disk::file_device::FileIoError;
use fairway_disk::uring_device::{UringDevice, UringError};
use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Request, TimeBudget};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

const O_DIRECT: i32 = 0o40000; // Linux x86-64 and aarch64
const SECTORS: u64 = 65_536; // 32 MiB
const REQ: u32 = 64; // 32 KiB

fn pattern(sector: u64) -> u8 {
    (sector * 13 % 251) as u8
}

/// A 32 MiB file of known content in /var/tmp (tmpfs /tmp refuses
/// O_DIRECT), opened with O_DIRECT where the file system allows it.
fn temp_file(name: &str) -> (std::path::PathBuf, std::fs::File) {
    let dir = std::path::Path::new("/var/tmp");
    let dir = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("fairway-uring-{name}-{}.bin", std::process::id()));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for s in 0..SECTORS {
        f.write_all(&[pattern(s); 512]).unwrap();
    }
    f.into_inner().unwrap().sync_all().unwrap();
    let direct = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_DIRECT)
        .open(&path);
    let f = match direct {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "O_DIRECT refused on {} ({e}): buffered reads",
                path.display()
            );
            std::fs::File::open(&path).unwrap()
        }
    };
    (path, f)
}

fn bfq(weights: &[u32]) -> Bfq {
    let cfg = BfqConfig {
        // Time plays no part in this check: on a cached file every request
        // takes microseconds, and T_max would cut budgets by the wall clock.
        t_max: TimeBudget::Off,
        ..BfqConfig::simplified(1024).unwrap()
    };
    let mut b = Bfq::new(cfg).unwrap();
    for (i, &w) in weights.iter().enumerate() {
        b.add_app(AppId(i as u32), AppSpec::weight(w)).unwrap();
    }
    b
}

fn start(sched: Bfq, file: std::fs::File, in_flight: u32) -> Option<UringDevice> {
    match UringDevice::start(sched, file, in_flight) {
        Ok(d) => Some(d),
        Err(UringError::Unavailable(e)) => {
            eprintln!("skipped, io_uring unavailable: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Two threads, weights 2:1, each keeping 4 reads of 32 KiB outstanding
/// in its own half of the file (both always backlogged), `per_thread`
/// reads each. Returns each thread's (completion instant, sectors) list.
fn run(dev: &UringDevice, per_thread: u64) -> Vec<Vec<(u64, u64)>> {
    let threads: Vec<_> = (0..2u32)
        .map(|i| {
            let s = dev.submitter();
            std::thread::spawn(move || {
                let base = u64::from(i) * SECTORS / 2;
                let mut window = std::collections::VecDeque::new();
                let mut done = Vec::new();
                let mut issued = 0u64;
                while issued < per_thread || !window.is_empty() {
                    while issued < per_thread && window.len() < 4 {
                        let sector = base + issued * u64::from(REQ) % (SECTORS / 2);
                        let req = Request::read(AppId(i), sector, REQ).with_tag(issued);
                        window.push_back((issued, sector, s.read(req)));
                        issued += 1;
                    }
                    let (k, sector, rx) = window.pop_front().unwrap();
                    let c = rx.recv().expect("every request is answered");
                    c.result.expect("the read succeeds");
                    assert_eq!(c.req.tag, k);
                    assert_eq!(c.data.len(), REQ as usize * 512);
                    for (j, chunk) in c.data.chunks(512).enumerate() {
                        let want = pattern(sector + j as u64);
                        assert!(
                            chunk.iter().all(|&b| b == want),
                            "sector {}",
                            sector + j as u64
                        );
                    }
                    done.push((c.completed, u64::from(c.req.len)));
                }
                done
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

#[test]
#[ignore = "slow tier: O_DIRECT reads of a 32 MiB file on disk"]
fn bfq_over_io_uring_completes_every_read_and_follows_the_weights() {
    let (path, file) = temp_file("shares");
    let Some(dev) = start(bfq(&[2, 1]), file, 1) else {
        let _ = std::fs::remove_file(&path);
        return;
    };
    let per_thread = 1200;
    let done = run(&dev, per_thread);
    let report = dev.shutdown();
    let _ = std::fs::remove_file(&path);
    assert_eq!(report.completed, 2 * per_thread);
    assert_eq!(report.failed, 0);
    assert!(report.unserved.is_empty());
    // Shares while both were backlogged: up to the first thread's end.
    let end = done.iter().map(|d| d.last().unwrap().0).min().unwrap();
    let served: Vec<f64> = done
        .iter()
        .map(|d| d.iter().filter(|c| c.0 <= end).map(|c| c.1 as f64).sum())
        .collect();
    let share = served[0] / (served[0] + served[1]);
    eprintln!("sectors {served:?}, share of weight 2: {share:.4} (ideal 0.6667)");
    assert!((share / (2.0 / 3.0) - 1.0).abs() < 0.05, "share {share}");
}

#[test]
#[ignore = "slow tier: O_DIRECT reads of a 32 MiB file on disk"]
fn several_in_flight_still_answers_everything_and_refuses_bad_input() {
    let (path, file) = temp_file("depth");
    let Some(dev) = start(bfq(&[1, 1]), file, 4) else {
        let _ = std::fs::remove_file(&path);
        return;
    };
    // A request for an unknown application is refused, typed, not lost.
    let c = dev
        .submitter()
        .read(Request::read(AppId(7), 0, 8))
        .recv()
        .unwrap();
    assert!(matches!(c.result, Err(FileIoError::Refused(_))));
    // A read past the end of the file fails with an I/O error.
    let c = dev
        .submitter()
        .read(Request::read(AppId(0), SECTORS, 8))
        .recv()
        .unwrap();
    assert!(
        matches!(c.result, Err(FileIoError::Io(_))),
        "{:?}",
        c.result
    );
    let done = run(&dev, 300);
    let report = dev.shutdown();
    let _ = std::fs::remove_file(&path);
    assert_eq!(done.iter().map(Vec::len).sum::<usize>(), 600);
    assert_eq!(report.completed, 600);
    assert_eq!(report.failed, 2);
    assert!(
        matches!(
            UringDevice::start(bfq(&[1]), std::fs::File::open("/dev/null").unwrap(), 0),
            Err(UringError::InFlight(0))
        ),
        "max_in_flight 0 is refused"
    );
}
