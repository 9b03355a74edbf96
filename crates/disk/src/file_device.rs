//! A real back-end: BFQ (or any [`DiskScheduler`]) scheduling the reads and
//! writes of application threads against a file or block device.
//!
//! A device thread owns the scheduler and the file. Threads submit
//! requests through a [`FileSubmitter`]; whenever the device is free it asks
//! the scheduler for the next request and performs it with positional I/O
//! (`pread`/`pwrite`, [`std::os::unix::fs::FileExt`]), one at a time, so
//! the scheduler decides the order the storage sees, idling included: a
//! synchronous reader's next read is waited for up to T_wait on the wall
//! clock. Buffers are 4 KiB-aligned, so the caller may open the file with
//! `O_DIRECT` to bypass the page cache (requests must then be aligned to
//! the device's logical block size).
//!
//! Every submitted request comes back exactly once: completed (with its
//! data for a read), refused by the scheduler (typed, see [`FileIoError`]),
//! failed by the operating system, or handed back by
//! [`FileDevice::shutdown`].

use crate::request::{AddError, Direction, Nanos, Request, SECTOR_BYTES};
use crate::scheduler::{DiskScheduler, Dispatch};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Why a request did not complete.
#[derive(Debug)]
pub enum FileIoError {
    /// The scheduler refused it (unknown application, too long, ...).
    Refused(AddError),
    /// A write's data is not `len` sectors long.
    BadLength {
        /// Bytes given.
        given: usize,
        /// Bytes the request covers.
        expected: usize,
    },
    /// The operating system failed the transfer.
    Io(std::io::Error),
    /// The device was shut down before serving it.
    ShutDown,
}

impl std::fmt::Display for FileIoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(e) => write!(f, "refused: {e}"),
            Self::BadLength { given, expected } => {
                write!(
                    f,
                    "write data is {given} bytes, the request covers {expected}"
                )
            }
            Self::Io(e) => write!(f, "I/O error: {e}"),
            Self::ShutDown => write!(f, "device shut down"),
        }
    }
}

impl std::error::Error for FileIoError {}

/// A finished request.
#[derive(Debug)]
pub struct FileCompletion {
    /// The request, with the caller's tag.
    pub req: Request,
    /// The data read (empty for writes and failures).
    pub data: Vec<u8>,
    /// Outcome.
    pub result: Result<(), FileIoError>,
    /// When the device received it, ns since the device started.
    pub arrived: Nanos,
    /// When the transfer finished, ns since the device started.
    pub completed: Nanos,
}

/// What a submitter sends a device thread (this back-end's or
/// [`crate::uring_device`]'s).
pub(crate) enum Cmd {
    Submit(Request, Vec<u8>, Sender<FileCompletion>),
    Shutdown,
}

/// Handle to submit requests; one per application thread.
#[derive(Clone)]
pub struct FileSubmitter {
    pub(crate) tx: Sender<Cmd>,
}

impl FileSubmitter {
    /// Submits a read; the completion (with the data) comes on the channel.
    pub fn read(&self, req: Request) -> Receiver<FileCompletion> {
        self.send(
            Request {
                dir: Direction::Read,
                ..req
            },
            Vec::new(),
        )
    }

    /// Submits a write of `data` (exactly `req.len` sectors).
    pub fn write(&self, req: Request, data: Vec<u8>) -> Receiver<FileCompletion> {
        self.send(
            Request {
                dir: Direction::Write,
                ..req
            },
            data,
        )
    }

    fn send(&self, req: Request, data: Vec<u8>) -> Receiver<FileCompletion> {
        let (tx, rx) = mpsc::channel();
        // A stopped device drops `tx`: the receiver reports disconnection.
        let _ = self.tx.send(Cmd::Submit(req, data, tx));
        rx
    }
}

/// What the device did.
#[derive(Debug, Default)]
pub struct FileDeviceReport {
    /// Transfers done.
    pub completed: u64,
    /// Requests refused or failed.
    pub failed: u64,
    /// Requests still queued at shutdown (each was also answered with
    /// [`FileIoError::ShutDown`]).
    pub unserved: Vec<Request>,
}

/// The device.
pub struct FileDevice {
    submitter: FileSubmitter,
    thread: Option<JoinHandle<FileDeviceReport>>,
}

impl FileDevice {
    /// Starts a device thread serving `file` under `sched`.
    pub fn start<S: DiskScheduler + Send + 'static>(sched: S, file: File) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("fairway-file".into())
            .spawn(move || run(sched, file, rx))?;
        Ok(Self {
            submitter: FileSubmitter { tx },
            thread: Some(thread),
        })
    }

    /// A handle to submit requests.
    pub fn submitter(&self) -> FileSubmitter {
        self.submitter.clone()
    }

    /// Stops after the transfer in progress; queued requests are answered
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

impl Drop for FileDevice {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}

/// Buffer alignment for O_DIRECT.
pub(crate) const ALIGN: usize = 4096;

struct Pending {
    reply: Sender<FileCompletion>,
    tag: u64,
    data: Vec<u8>,
    arrived: Nanos,
}

/// The device thread's state: the scheduler, the file, and the requests
/// the scheduler holds, by the tag the device gave them.
struct Device<S> {
    sched: S,
    file: File,
    epoch: Instant,
    report: FileDeviceReport,
    waiting: HashMap<u64, Pending>,
    next_tag: u64,
}

fn run<S: DiskScheduler>(sched: S, file: File, rx: Receiver<Cmd>) -> FileDeviceReport {
    let mut dev = Device {
        sched,
        file,
        epoch: Instant::now(),
        report: FileDeviceReport::default(),
        waiting: HashMap::new(),
        next_tag: 0,
    };
    let mut wake: Option<Nanos> = None;
    let mut stopping = false;
    loop {
        for cmd in dev.receive(&rx, wake, stopping) {
            match cmd {
                Cmd::Shutdown => stopping = true,
                Cmd::Submit(req, data, reply) => dev.accept(req, data, reply, stopping),
            }
        }
        if stopping {
            break;
        }
        wake = None;
        match dev.sched.dispatch(dev.now()) {
            Dispatch::Serve(req) => dev.serve(req),
            Dispatch::Idle(until) => wake = until,
            Dispatch::Empty => {}
        }
    }
    dev.hand_back_queued();
    dev.report
}

impl<S: DiskScheduler> Device<S> {
    /// Nanoseconds since the device started.
    fn now(&self) -> Nanos {
        self.epoch.elapsed().as_nanos() as Nanos
    }

    /// Every command already here, after waiting for the first one: until
    /// `wake` (an idling deadline) if there is one, for as long as it takes
    /// if nothing is queued, not at all otherwise or when `stopping`. A
    /// disconnected channel reads as a shutdown.
    fn receive(&self, rx: &Receiver<Cmd>, wake: Option<Nanos>, stopping: bool) -> Vec<Cmd> {
        let first = if stopping {
            None
        } else {
            match wake {
                Some(w) => {
                    let t = self.now();
                    if w <= t {
                        None
                    } else {
                        match rx.recv_timeout(Duration::from_nanos(w - t)) {
                            Ok(c) => Some(c),
                            Err(RecvTimeoutError::Timeout) => None,
                            Err(RecvTimeoutError::Disconnected) => Some(Cmd::Shutdown),
                        }
                    }
                }
                None if self.sched.queued() == 0 => Some(rx.recv().unwrap_or(Cmd::Shutdown)),
                None => rx.try_recv().ok(),
            }
        };
        let mut cmds: Vec<Cmd> = first.into_iter().collect();
        while let Ok(c) = rx.try_recv() {
            cmds.push(c);
        }
        cmds
    }

    /// Hands a submitted request to the scheduler, or answers it at once:
    /// refused after a shutdown, for a write whose data is not its length,
    /// or by the scheduler.
    fn accept(
        &mut self,
        req: Request,
        data: Vec<u8>,
        reply: Sender<FileCompletion>,
        stopping: bool,
    ) {
        let t = self.now();
        let expected = req.len as usize * SECTOR_BYTES as usize;
        let refuse = |reply: Sender<FileCompletion>, e: FileIoError| {
            let _ = reply.send(FileCompletion {
                req,
                data: Vec::new(),
                result: Err(e),
                arrived: t,
                completed: t,
            });
        };
        if stopping {
            refuse(reply, FileIoError::ShutDown);
            self.report.failed += 1;
            return;
        }
        if req.dir == Direction::Write && data.len() != expected {
            refuse(
                reply,
                FileIoError::BadLength {
                    given: data.len(),
                    expected,
                },
            );
            self.report.failed += 1;
            return;
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        match self.sched.add_request(t, req.with_tag(tag)) {
            Ok(()) => {
                self.waiting.insert(
                    tag,
                    Pending {
                        reply,
                        tag: req.tag,
                        data,
                        arrived: t,
                    },
                );
            }
            Err(e) => {
                self.report.failed += 1;
                refuse(reply, FileIoError::Refused(AddError { request: req, ..e }));
            }
        }
    }

    /// Performs the dispatched `req` (blocking), tells the scheduler it
    /// completed and answers its submitter.
    fn serve(&mut self, req: Request) {
        let p = self.waiting.remove(&req.tag);
        let offset = req.sector * SECTOR_BYTES;
        let bytes = req.len as usize * SECTOR_BYTES as usize;
        // Transfers go through a 4 KiB-aligned buffer, so a file
        // opened with O_DIRECT works too.
        let mut raw = vec![0u8; bytes + ALIGN];
        let at = raw.as_ptr().align_offset(ALIGN).min(ALIGN);
        let buf = &mut raw[at..at + bytes];
        let (result, data) = match req.dir {
            Direction::Read => match self.file.read_exact_at(buf, offset) {
                Ok(()) => (Ok(()), buf.to_vec()),
                Err(e) => (Err(FileIoError::Io(e)), Vec::new()),
            },
            Direction::Write => {
                if let Some(p) = &p {
                    buf.copy_from_slice(&p.data);
                }
                (
                    self.file.write_all_at(buf, offset).map_err(FileIoError::Io),
                    Vec::new(),
                )
            }
        };
        let t = self.now();
        self.sched.complete(t, &req);
        if result.is_ok() {
            self.report.completed += 1;
        } else {
            self.report.failed += 1;
        }
        if let Some(p) = p {
            let _ = p.reply.send(FileCompletion {
                req: req.with_tag(p.tag),
                data,
                result,
                arrived: p.arrived,
                completed: t,
            });
        }
    }

    /// At shutdown: every request the scheduler still holds is answered
    /// with [`FileIoError::ShutDown`] and listed in the report.
    fn hand_back_queued(&mut self) {
        for r in self.sched.drain() {
            if let Some(p) = self.waiting.remove(&r.tag) {
                let req = r.with_tag(p.tag);
                let _ = p.reply.send(FileCompletion {
                    req,
                    data: Vec::new(),
                    result: Err(FileIoError::ShutDown),
                    arrived: p.arrived,
                    completed: self.now(),
                });
                self.report.unserved.push(req);
            }
        }
    }
}
