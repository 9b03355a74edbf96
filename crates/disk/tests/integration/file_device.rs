//! BFQ scheduling real reads and writes of threads against a file: data
//! correct, every request answered exactly once, typed refusals.

use fairway_disk::file_device::{FileDevice, FileIoError};
use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Request};
use std::io::Write;

fn pattern(sector: u64) -> u8 {
    (sector * 7 % 251) as u8
}

fn temp_file(sectors: u64) -> (std::path::PathBuf, std::fs::File) {
    let path = std::env::temp_dir().join(format!("fairway-disk-test-{}.bin", std::process::id()));
    let mut f = std::fs::File::create(&path).unwrap();
    for s in 0..sectors {
        f.write_all(&[pattern(s); 512]).unwrap();
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    (path, f)
}

#[test]
fn threads_read_and_write_a_real_file_through_bfq() {
    let (path, file) = temp_file(16_384);
    let mut bfq = Bfq::new(BfqConfig::simplified(1024).unwrap()).unwrap();
    bfq.add_app(AppId(0), AppSpec::weight(2)).unwrap();
    bfq.add_app(AppId(1), AppSpec::weight(1)).unwrap();
    let dev = FileDevice::start(bfq, file).unwrap();
    let (s0, s1) = (dev.submitter(), dev.submitter());
    // A synchronous sequential reader, checking every byte.
    let reader = std::thread::spawn(move || {
        for k in 0..64u64 {
            let c = s0
                .read(Request::read(AppId(0), k * 64, 64).with_tag(k))
                .recv()
                .unwrap();
            c.result.unwrap();
            assert_eq!(c.req.tag, k);
            for (i, chunk) in c.data.chunks(512).enumerate() {
                assert!(chunk.iter().all(|&b| b == pattern(k * 64 + i as u64)));
            }
        }
    });
    // An asynchronous writer far away, then reads back.
    let writer = std::thread::spawn(move || {
        let rxs: Vec<_> = (0..32u64)
            .map(|k| {
                s1.write(
                    Request::read(AppId(1), 8192 + k * 8, 8),
                    vec![0xAB; 8 * 512],
                )
            })
            .collect();
        for rx in rxs {
            rx.recv().unwrap().result.unwrap();
        }
        let c = s1.read(Request::read(AppId(1), 8192, 256)).recv().unwrap();
        assert!(c.data.iter().all(|&b| b == 0xAB));
        // Typed refusals come back, nothing is dropped.
        let bad = s1.read(Request::read(AppId(7), 0, 8)).recv().unwrap();
        assert!(matches!(bad.result, Err(FileIoError::Refused(_))));
        let short = s1
            .write(Request::read(AppId(1), 0, 8), vec![0; 10])
            .recv()
            .unwrap();
        assert!(matches!(
            short.result,
            Err(FileIoError::BadLength {
                given: 10,
                expected: 4096
            })
        ));
        let past_end = s1.read(Request::read(AppId(1), 1 << 30, 8)).recv().unwrap();
        assert!(matches!(past_end.result, Err(FileIoError::Io(_))));
    });
    reader.join().unwrap();
    writer.join().unwrap();
    let report = dev.shutdown();
    assert_eq!(report.completed, 64 + 32 + 1);
    assert_eq!(report.failed, 3);
    assert!(report.unserved.is_empty());
    std::fs::remove_file(path).unwrap();
}
