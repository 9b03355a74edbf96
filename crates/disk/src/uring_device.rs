//! The io_uring back-end: a [`DiskScheduler`] (BFQ or a baseline)
//! scheduling the reads and writes of application threads against a file
//! or block device, the transfers done by the kernel's io_uring.
//!
//! Same interface as [`crate::file_device`] ([`FileSubmitter`],
//! [`FileCompletion`], [`FileDeviceReport`]), different engine: the device
//! thread hands each dispatched request to the ring as a `READ`/`WRITE` at
//! its offset and does not block in the transfer. While transfers are in
//! flight it waits for a completion at most [`POLL`] at a time and takes
//! the submissions that came meanwhile, so arrivals are time-stamped within
//! [`POLL`] of the real instant (the `pread` back-end stamps them only once
//! its blocking transfer returns), which is what BFQ's idling and
//! back-shifted timestamps are computed from.
//!
//! `max_in_flight` is how many dispatched requests the device may have in
//! the ring at once. 1 (the default of the CLI) is the thesis' model, one
//! request in service, every ordering decision the scheduler's; more lets
//! the storage reorder among them (as a drive with command queueing does),
//! which raises throughput on fast devices and loosens the scheduler's
//! control by that many requests.
//!
//! Buffers are 4 KiB-aligned, so the file may be opened with `O_DIRECT`.
//! Every submitted request comes back exactly once, as with the `pread`
//! back-end; a request in flight at shutdown is completed first (its buffer
//! belongs to the kernel until then).

// io_uring submission is `unsafe`: the kernel writes into the buffer after
// `push` returns. The one unsafe block below keeps every buffer alive and
// unmoved (heap storage owned by `in_flight`) until its completion is
// reaped, and the device never exits with transfers in flight.
#![allow(unsafe_code)]

use crate::engine::ring::Ring;
use crate::engine::wait::{receive, Wait};
use crate::file_device::{
    Cmd, FileCompletion, FileDeviceReport, FileIoError, FileSubmitter, ALIGN,
};
use crate::request::{AddError, Direction, Nanos, Request, SECTOR_BYTES};
use crate::scheduler::{DiskScheduler, Dispatch};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest wait for a completion before looking at new submissions, ns.
pub const POLL: Nanos = 100_000;

/// Largest `max_in_flight` accepted (ring entries).
pub const MAX_IN_FLIGHT: u32 = 256;

/// Why the device could not start.
#[derive(Debug)]
pub enum UringError {
    /// `max_in_flight` outside `1..=MAX_IN_FLIGHT`.
    InFlight(u32),
    /// The kernel refused io_uring (too old, disabled, or filtered by a
    /// sandbox), or lacks timed waits (`IORING_FEAT_EXT_ARG`, Linux 5.11).
    Unavailable(std::io::Error),
}

impl std::fmt::Display for UringError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InFlight(n) => write!(
                f,
                "max in flight = {n} is out of range (allowed: 1..={MAX_IN_FLIGHT})"
            ),
            Self::Unavailable(e) => write!(f, "io_uring unavailable: {e}"),
        }
    }
}

impl std::error::Error for UringError {}

/// The device.
pub struct UringDevice {
    submitter: FileSubmitter,
    thread: Option<JoinHandle<FileDeviceReport>>,
}

impl UringDevice {
    /// Starts a device thread serving `file` under `sched` through a new
    /// io_uring, at most `max_in_flight` transfers at once.
    pub fn start<S: DiskScheduler + Send + 'static>(
        sched: S,
        file: File,
        max_in_flight: u32,
    ) -> Result<Self, UringError> {
        if !(1..=MAX_IN_FLIGHT).contains(&max_in_flight) {
            return Err(UringError::InFlight(max_in_flight));
        }
        let ring = Ring::new(max_in_flight, false).map_err(UringError::Unavailable)?;
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("fairway-uring".into())
            .spawn(move || run(sched, file, ring, max_in_flight as usize, rx))
            .map_err(UringError::Unavailable)?;
        Ok(Self {
            submitter: FileSubmitter { tx },
            thread: Some(thread),
        })
    }

    /// A handle to submit requests.
    pub fn submitter(&self) -> FileSubmitter {
        self.submitter.clone()
    }

    /// Stops after the transfers in flight; queued requests are answered
    /// with [`FileIoError::ShutDown`] and listed in the report.
    pub fn shutdown(mut self) -> FileDeviceReport {
        self.stop()
    }

    fn stop(&mut self) -> FileDeviceReport {
        let _ = self.submitter.tx.send(Cmd::Shutdown);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for UringDevice {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}

struct Pending {
    reply: Sender<FileCompletion>,
    tag: u64,
    data: Vec<u8>,
    arrived: Nanos,
}

/// A transfer the kernel owns until its completion is reaped.
struct InFlight {
    req: Request,
    pending: Option<Pending>,
    /// Heap storage of the buffer; `at` is the aligned start inside it.
    raw: Vec<u8>,
    at: usize,
}

struct Device<S> {
    sched: S,
    file: File,
    ring: Ring,
    max_in_flight: usize,
    epoch: Instant,
    waiting: HashMap<u64, Pending>,
    in_flight: HashMap<u64, InFlight>,
    next_tag: u64,
    report: FileDeviceReport,
}

impl<S: DiskScheduler> Device<S> {
    fn now(&self) -> Nanos {
        self.epoch.elapsed().as_nanos() as Nanos
    }

    fn accept(
        &mut self,
        req: Request,
        data: Vec<u8>,
        reply: Sender<FileCompletion>,
        stopping: bool,
    ) {
        let t = self.now();
        let expected = req.len as usize * SECTOR_BYTES as usize;
        let refuse = |e: FileIoError| {
            let _ = reply.send(FileCompletion {
                req,
                data: Vec::new(),
                result: Err(e),
                arrived: t,
                completed: t,
            });
        };
        if stopping {
            self.report.failed += 1;
            return refuse(FileIoError::ShutDown);
        }
        if req.dir == Direction::Write && data.len() != expected {
            self.report.failed += 1;
            return refuse(FileIoError::BadLength {
                given: data.len(),
                expected,
            });
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        match self.sched.add_request(t, req.with_tag(tag)) {
            Ok(()) => {
                self.waiting.insert(
                    tag,
                    Pending {
                        reply: reply.clone(),
                        tag: req.tag,
                        data,
                        arrived: t,
                    },
                );
            }
            Err(e) => {
                self.report.failed += 1;
                refuse(FileIoError::Refused(AddError { request: req, ..e }));
            }
        }
    }

    /// Hands `req` to the ring; an error here completes it at once.
    fn start_transfer(&mut self, req: Request) {
        let pending = self.waiting.remove(&req.tag);
        let bytes = req.len as usize * SECTOR_BYTES as usize;
        let mut raw = vec![0u8; bytes + ALIGN];
        let at = raw.as_ptr().align_offset(ALIGN).min(ALIGN);
        if req.dir == Direction::Write {
            if let Some(p) = &pending {
                raw[at..at + bytes].copy_from_slice(&p.data);
            }
        }
        let fd = self.file.as_raw_fd();
        let ptr = raw[at..].as_mut_ptr();
        let offset = req.sector * SECTOR_BYTES;
        // SAFETY: `raw` is moved into `in_flight` below and stays there,
        // its heap block unmoved and alive, until the completion carrying
        // `req.tag` is reaped in `reap`; the device drains every transfer
        // before it exits. A failed push completes the request at once.
        let pushed = unsafe {
            self.ring
                .push(fd, req.dir, ptr, bytes as u32, offset, req.tag)
        };
        let flight = InFlight {
            req,
            pending,
            raw,
            at,
        };
        if let Err(e) = pushed {
            return self.finish(flight, Err(FileIoError::Io(e)));
        }
        self.in_flight.insert(req.tag, flight);
    }

    fn finish(&mut self, f: InFlight, result: Result<(), FileIoError>) {
        let t = self.now();
        self.sched.complete(t, &f.req);
        if result.is_ok() {
            self.report.completed += 1;
        } else {
            self.report.failed += 1;
        }
        let bytes = f.req.len as usize * SECTOR_BYTES as usize;
        let data = if result.is_ok() && f.req.dir == Direction::Read {
            f.raw[f.at..f.at + bytes].to_vec()
        } else {
            Vec::new()
        };
        if let Some(p) = f.pending {
            let _ = p.reply.send(FileCompletion {
                req: f.req.with_tag(p.tag),
                data,
                result,
                arrived: p.arrived,
                completed: t,
            });
        }
    }

    /// Takes every completion the kernel has posted.
    fn reap(&mut self) {
        let mut done = Vec::new();
        self.ring.reap(&mut done);
        for (tag, res) in done {
            let Some(f) = self.in_flight.remove(&tag) else {
                continue;
            };
            let bytes = f.req.len as usize * SECTOR_BYTES as usize;
            let result = if res < 0 {
                Err(FileIoError::Io(std::io::Error::from_raw_os_error(-res)))
            } else if res as usize != bytes {
                // A short transfer: past the end of the file or device.
                Err(FileIoError::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("transferred {res} of {bytes} bytes"),
                )))
            } else {
                Ok(())
            };
            self.finish(f, result);
        }
    }
}

fn run<S: DiskScheduler>(
    sched: S,
    file: File,
    ring: Ring,
    max_in_flight: usize,
    rx: Receiver<Cmd>,
) -> FileDeviceReport {
    let mut d = Device {
        sched,
        file,
        ring,
        max_in_flight,
        epoch: Instant::now(),
        waiting: HashMap::new(),
        in_flight: HashMap::new(),
        next_tag: 0,
        report: FileDeviceReport::default(),
    };
    let mut wake: Option<Nanos> = None;
    let mut stopping = false;
    loop {
        // Wait for a submission only when no transfer is in flight (with
        // transfers in flight the ring wait below paces the loop).
        let wait = if stopping {
            Wait::None
        } else {
            Wait::for_commands(!d.in_flight.is_empty(), wake, d.now(), d.sched.queued())
        };
        let mut cmds = Vec::new();
        receive(&rx, wait, &mut cmds, || Cmd::Shutdown);
        for cmd in cmds {
            match cmd {
                Cmd::Shutdown => stopping = true,
                Cmd::Submit(req, data, reply) => d.accept(req, data, reply, stopping),
            }
        }
        d.reap();
        if stopping {
            break;
        }
        wake = None;
        while d.in_flight.len() < d.max_in_flight {
            let now = d.now();
            match d.sched.dispatch(now) {
                Dispatch::Serve(req) => d.start_transfer(req),
                Dispatch::Idle(until) => {
                    wake = until;
                    break;
                }
                Dispatch::Empty => break,
            }
        }
        // With a transfer in flight, wait for a completion but no longer
        // than POLL (or the idling deadline), then look at submissions.
        let wait = match wake {
            Some(w) => Duration::from_nanos(w.saturating_sub(d.now()).clamp(1, POLL)),
            None => Duration::from_nanos(POLL),
        };
        if !d.in_flight.is_empty() {
            if d.ring.submit_and_wait(1, Some(wait)).is_err() {
                // The ring itself failed: stop; what it holds is answered
                // below, what is queued gets ShutDown.
                break;
            }
            d.reap();
        }
    }
    // Every buffer the kernel holds must come back before they are freed.
    while !d.in_flight.is_empty() {
        if d.ring.submit_and_wait(1, None).is_err() {
            // Without a working ring the kernel cannot be writing into the
            // buffers any more than it already has: keep them (leak) rather
            // than free memory that might still be a transfer's target.
            let leaked: Vec<InFlight> = d.in_flight.drain().map(|(_, f)| f).collect();
            for f in &leaked {
                d.report.failed += 1;
                if let Some(p) = &f.pending {
                    let _ = p.reply.send(FileCompletion {
                        req: f.req.with_tag(p.tag),
                        data: Vec::new(),
                        result: Err(FileIoError::ShutDown),
                        arrived: p.arrived,
                        completed: d.now(),
                    });
                }
            }
            std::mem::forget(leaked);
            break;
        }
        d.reap();
    }
    for r in d.sched.drain() {
        if let Some(p) = d.waiting.remove(&r.tag) {
            let req = r.with_tag(p.tag);
            let _ = p.reply.send(FileCompletion {
                req,
                data: Vec::new(),
                result: Err(FileIoError::ShutDown),
                arrived: p.arrived,
                completed: d.now(),
            });
            d.report.unserved.push(req);
        }
    }
    d.report
}
