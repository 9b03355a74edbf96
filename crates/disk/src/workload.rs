//! Application models driving the simulator (the BFQ thesis §2.4): sequential
//! file readers, random readers (synchronous or with requests issued
//! ahead), web-server processes, streaming threads and ON/OFF readers;
//! beyond the thesis, interactive applications (bursts after idling, for
//! low-latency weight raising).
//!
//! A *synchronous* application issues its next request only after the
//! previous one completed, after a think time (the CPU time to use the
//! data); an *asynchronous* one keeps `depth > 1` requests outstanding.
//! Every random choice comes from the application's own seeded generator,
//! so a run is reproducible and independent of event interleaving.

use crate::readahead::ReadAhead;
use crate::request::{AppId, Direction, DiskConfigError, Nanos, Request, MS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cell::Cell;
use std::rc::Rc;

/// Requests and a wake-up an application asks for.
#[derive(Debug, Default)]
pub struct Io {
    /// Requests to issue, each at its time (≥ now).
    pub issued: Vec<(Nanos, Request)>,
    /// Call `on_wake` at this time.
    pub wake: Option<Nanos>,
    now: Nanos,
}

impl Io {
    /// Empty, at `now`.
    pub fn new(now: Nanos) -> Self {
        Self {
            now,
            ..Self::default()
        }
    }

    fn issue(&mut self, delay: Nanos, req: Request) {
        self.issued.push((self.now + delay, req));
    }
}

/// A sequential reader of `len` sectors from `start`.
#[derive(Clone, Debug)]
pub struct SeqReader {
    /// Application id.
    pub app: AppId,
    /// First sector of the file.
    pub start: u64,
    /// File length, sectors.
    pub len: u64,
    /// Request size, sectors.
    pub req_len: u32,
    /// Requests kept outstanding (1 = synchronous).
    pub depth: u32,
    /// Think time before each new request, ns.
    pub think: Nanos,
    /// Next offset to request.
    pub next: u64,
    /// Sectors completed.
    pub done: u64,
    /// Completion time of the whole file.
    pub finished: Option<Nanos>,
}

impl SeqReader {
    /// A reader of `len` sectors at `start`, 128 KiB synchronous requests
    /// with a 100 µs think time.
    pub fn new(app: AppId, start: u64, len: u64) -> Self {
        Self {
            app,
            start,
            len,
            req_len: 256,
            depth: 1,
            think: MS / 10,
            next: 0,
            done: 0,
            finished: None,
        }
    }

    /// The same reader with the kernel's read-ahead `ra`: it keeps
    /// `ra.depth()` requests in flight instead of one.
    pub fn with_readahead(mut self, ra: ReadAhead) -> Self {
        self.depth = ra.depth();
        self
    }

    fn issue_next(&mut self, io: &mut Io, delay: Nanos) {
        if self.next < self.len {
            let n = (self.len - self.next).min(u64::from(self.req_len)) as u32;
            io.issue(delay, Request::read(self.app, self.start + self.next, n));
            self.next += u64::from(n);
        }
    }
}

/// Random reads over `[lo, hi)`: sizes uniform in `len_min..=len_max`,
/// think times uniform in `0..=think_max`, `depth` outstanding, bursts of
/// `burst` requests issued at once when `depth > 1`.
#[derive(Clone, Debug)]
pub struct RandomReader {
    /// Application id.
    pub app: AppId,
    /// Region start.
    pub lo: u64,
    /// Region end.
    pub hi: u64,
    /// Smallest request.
    pub len_min: u32,
    /// Largest request.
    pub len_max: u32,
    /// Longest think time, ns.
    pub think_max: Nanos,
    /// Outstanding requests.
    pub depth: u32,
    /// Probability that the next request continues the previous one.
    pub p_sequential: f64,
    /// Requests left to issue (`u64::MAX`: unbounded).
    pub remaining: u64,
    /// Stop issuing after this time.
    pub until: Nanos,
    /// Open loop: issue one request every this many ns, whatever completes
    /// (`None`: closed loop, next request after a completion).
    pub open_interval: Option<Nanos>,
    last_end: u64,
    rng: StdRng,
}

impl RandomReader {
    /// A reader with its own seed.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        app: AppId,
        lo: u64,
        hi: u64,
        len: (u32, u32),
        think_max: Nanos,
        depth: u32,
        p_sequential: f64,
        seed: u64,
    ) -> Self {
        Self {
            app,
            lo,
            hi,
            len_min: len.0,
            len_max: len.1,
            think_max,
            depth,
            p_sequential,
            remaining: u64::MAX,
            until: Nanos::MAX,
            open_interval: None,
            last_end: lo,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    fn issue_one(&mut self, io: &mut Io, delay: Nanos) {
        if self.remaining == 0 || io.now + delay >= self.until {
            return;
        }
        self.remaining -= 1;
        let len = self.rng.random_range(self.len_min..=self.len_max);
        let span = self.hi.saturating_sub(self.lo + u64::from(len)).max(1);
        let sector = if self.rng.random_bool(self.p_sequential)
            && self.last_end + u64::from(len) <= self.hi
        {
            self.last_end
        } else {
            self.lo + self.rng.random_range(0..span)
        };
        self.last_end = sector + u64::from(len);
        io.issue(delay, Request::read(self.app, sector, len));
    }
}

/// A web-server process (§2.4): reads files one after the other, small
/// (16 KiB, first half of the disk, probability 0.9) or large (1–30 MiB,
/// second half); every 10 files appends 1–16 KiB to a shared log.
#[derive(Clone, Debug)]
pub struct WebProcess {
    /// Application id.
    pub app: AppId,
    /// Disk capacity, sectors.
    pub capacity: u64,
    /// Think time between requests, ns.
    pub think: Nanos,
    /// Longest pause before starting the next file (accepting the next
    /// HTTP request, opening the file), ns; the pause is uniform in
    /// `0..=file_gap_max`.
    pub file_gap_max: Nanos,
    /// Completion times of small files, ns.
    pub small_latencies: Vec<Nanos>,
    /// (sectors, duration ns) of each large file read.
    pub large_reads: Vec<(u64, Nanos)>,
    /// Stop starting files after this time.
    pub until: Nanos,
    log: Rc<Cell<u64>>,
    file: Option<(u64, u64, u64, bool, Nanos)>,
    files: u64,
    rng: StdRng,
}

/// Small file: 16 KiB = 32 sectors, read in 2 requests of 16 sectors.
const SMALL_FILE: u64 = 32;
const SMALL_REQ: u32 = 16;

impl WebProcess {
    /// A process; `log` is the shared log's append cursor (sector).
    pub fn new(app: AppId, capacity: u64, log: Rc<Cell<u64>>, seed: u64) -> Self {
        Self {
            app,
            capacity,
            think: MS / 10,
            file_gap_max: 10 * MS,
            small_latencies: Vec::new(),
            large_reads: Vec::new(),
            until: Nanos::MAX,
            log,
            file: None,
            files: 0,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    fn start_file(&mut self, io: &mut Io) {
        if io.now >= self.until {
            return;
        }
        self.files += 1;
        if self.files.is_multiple_of(10) {
            let n = self.rng.random_range(2..=32u32);
            let at = self.log.get();
            self.log.set(at + u64::from(n));
            let mut w = Request::read(self.app, at, n);
            w.dir = Direction::Write;
            self.file = Some((at, u64::from(n), u64::from(n), false, io.now));
            io.issue(self.think, w);
            return;
        }
        let half = self.capacity / 2;
        let (start, len, small) = if self.rng.random_bool(0.9) {
            (
                self.rng.random_range(0..half - SMALL_FILE),
                SMALL_FILE,
                true,
            )
        } else {
            let len = self.rng.random_range(2048..=61440u64);
            (half + self.rng.random_range(0..half - len), len, false)
        };
        let gap = self.rng.random_range(0..=self.file_gap_max);
        self.file = Some((start, len, 0, small, io.now + gap));
        self.next_request(io, gap);
    }

    fn next_request(&mut self, io: &mut Io, gap: Nanos) {
        let Some((start, len, next, small, t0)) = self.file else {
            return;
        };
        let step = if small { SMALL_REQ } else { 256 };
        let n = (len - next).min(u64::from(step)) as u32;
        io.issue(gap + self.think, Request::read(self.app, start + next, n));
        self.file = Some((start, len, next + u64::from(n), small, t0));
    }
}

/// A streaming thread (§2.4): from `start_at`, reads `chunk` sectors of its
/// movie every `period`; a chunk completed more than `buffer` after its
/// nominal time is lost. One read outstanding. A chunk may be read as
/// several synchronous requests ([`Streamer::split`]); every request of
/// chunk k carries tag k, so observers can tell the chunks apart.
#[derive(Clone, Debug)]
pub struct Streamer {
    /// Application id.
    pub app: AppId,
    /// Movie's first sector.
    pub start: u64,
    /// Movie length, sectors.
    pub len: u64,
    /// Sectors per read.
    pub chunk: u32,
    /// Period between reads, ns.
    pub period: Nanos,
    /// Playback buffer, ns.
    pub buffer: Nanos,
    /// Streaming start.
    pub start_at: Nanos,
    /// (due time, lost) of every chunk read.
    pub chunks: Vec<(Nanos, bool)>,
    /// Requests per chunk (≥ 1), issued one after the other.
    pub parts: u32,
    /// Think time between the requests of a chunk, ns.
    pub think: Nanos,
    k: u64,
    part: u32,
    busy: bool,
}

impl Streamer {
    /// A streamer of the movie at `start`.
    pub fn new(app: AppId, start: u64, len: u64, start_at: Nanos) -> Self {
        Self {
            app,
            start,
            len,
            chunk: 64,
            period: 128 * MS,
            buffer: 1000 * MS,
            start_at,
            chunks: Vec::new(),
            parts: 1,
            think: 0,
            k: 0,
            part: 0,
            busy: false,
        }
    }

    /// The same streamer reading each chunk as `parts` synchronous requests
    /// of `chunk / parts` sectors, `think` ns apart (a thread reading its
    /// chunk with several `read()` calls; with `think` ≤ T_wait it has the
    /// SI property). `parts` must divide the chunk.
    pub fn split(mut self, parts: u32, think: Nanos) -> Result<Self, DiskConfigError> {
        if parts == 0 || !self.chunk.is_multiple_of(parts) {
            return Err(DiskConfigError::OutOfRange {
                name: "parts",
                value: f64::from(parts),
                allowed: "a divisor of the chunk size (≥ 1)",
            });
        }
        self.parts = parts;
        self.think = think;
        Ok(self)
    }

    fn nominal(&self, k: u64) -> Nanos {
        self.start_at + k * self.period
    }

    /// Chunks due (nominal time + buffer) in `(lo, t]` and how many of them
    /// are lost: completed after their due time, or — the case a count of
    /// completions alone misses — still not completed at `t`. A stream that
    /// has fallen hopelessly behind completes only chunks that were due long
    /// ago; they must count as lost when they fall due, not when (or if)
    /// they complete.
    pub fn due_and_lost(&self, lo: Nanos, t: Nanos) -> (u64, u64) {
        if t < self.start_at + self.buffer {
            return (0, 0);
        }
        // Chunk k is due at start_at + k·period + buffer.
        let due_index = |x: Nanos| -> Option<u64> {
            x.checked_sub(self.start_at + self.buffer)
                .map(|d| d / self.period.max(1))
        };
        let last = due_index(t).unwrap_or(0);
        let first = match due_index(lo) {
            Some(k) => k + 1,
            None => 0,
        };
        if first > last {
            return (0, 0);
        }
        let completed_lost = self.chunks[(first as usize).min(self.chunks.len())..]
            .iter()
            .filter(|&&(d, l)| d <= t && l)
            .count() as u64;
        // Chunks first..=last not completed yet (index ≥ chunks.len()).
        let pending = (last + 1).saturating_sub((self.chunks.len() as u64).max(first));
        (last + 1 - first, completed_lost + pending)
    }

    fn issue(&mut self, io: &mut Io, delay: Nanos) {
        let part_len = self.chunk / self.parts.max(1);
        let off =
            (self.k * u64::from(self.chunk) + u64::from(self.part * part_len)) % self.len.max(1);
        self.busy = true;
        io.issue(
            delay,
            Request::read(self.app, self.start + off, part_len).with_tag(self.k),
        );
    }
}

/// An ON/OFF reader (§2.4): reads a random 64–512 MiB portion of its file,
/// then sleeps 1–200 ms, again and again. It keeps `depth` requests
/// outstanding while ON (a large `read()` lets the kernel queue several
/// read-ahead requests at once).
#[derive(Clone, Debug)]
pub struct OnOffReader {
    /// Application id.
    pub app: AppId,
    /// File start.
    pub start: u64,
    /// File length, sectors.
    pub len: u64,
    /// Requests outstanding while ON.
    pub depth: u32,
    pos: u64,
    left: u64,
    outstanding: u32,
    rng: StdRng,
}

impl OnOffReader {
    /// A reader of the file at `start`, 4 requests outstanding.
    pub fn new(app: AppId, start: u64, len: u64, seed: u64) -> Self {
        Self {
            app,
            start,
            len,
            depth: 4,
            pos: 0,
            left: 0,
            outstanding: 0,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The same reader with the kernel's read-ahead `ra`: `ra.depth()`
    /// requests in flight while ON.
    pub fn with_readahead(mut self, ra: ReadAhead) -> Self {
        self.depth = ra.depth();
        self
    }

    fn issue_one(&mut self, io: &mut Io, delay: Nanos) {
        if self.left == 0 {
            return;
        }
        if self.pos + 256 > self.len {
            self.pos = 0;
        }
        let n = self.left.min(256) as u32;
        io.issue(delay, Request::read(self.app, self.start + self.pos, n));
        self.pos += u64::from(n);
        self.left -= u64::from(n);
        self.outstanding += 1;
    }

    fn wake(&mut self, io: &mut Io) {
        // 64..=512 MiB in sectors.
        self.left = self.rng.random_range(131_072..=1_048_576u64);
        for _ in 0..self.depth.max(1) {
            self.issue_one(io, 0);
        }
    }

    fn completed(&mut self, io: &mut Io) {
        self.outstanding -= 1;
        if self.left > 0 {
            self.issue_one(io, MS / 10);
        } else if self.outstanding == 0 {
            io.wake = Some(io.now + self.rng.random_range(MS..=200 * MS));
        }
    }
}

/// An interactive application: after `think` of idleness it reads a burst
/// of `burst` consecutive synchronous requests of `len` sectors from a
/// random place in `[lo, hi)` (an application starting, a command loading
/// its file), and
/// records how long each burst took from its first issue to its last
/// completion.
#[derive(Clone, Debug)]
pub struct Interactive {
    /// Application id.
    pub app: AppId,
    /// Region start.
    pub lo: u64,
    /// Region end.
    pub hi: u64,
    /// Request size, sectors.
    pub len: u32,
    /// Requests per burst.
    pub burst: u32,
    /// Idle time between bursts, ns.
    pub think: Nanos,
    /// Duration of each completed burst, ns.
    pub latencies: Vec<Nanos>,
    left: u32,
    pos: u64,
    started: Nanos,
    armed: bool,
    rng: StdRng,
}

impl Interactive {
    /// Bursts of `burst` reads of `len` sectors over `[lo, hi)`, `think`
    /// apart; the first burst starts after `think` too.
    pub fn new(app: AppId, (lo, hi): (u64, u64), len: u32, burst: u32, think: Nanos) -> Self {
        Self {
            app,
            lo,
            hi,
            len,
            burst,
            think,
            latencies: Vec::new(),
            left: 0,
            pos: 0,
            started: 0,
            armed: false,
            rng: StdRng::seed_from_u64(u64::from(app.0)),
        }
    }

    fn issue(&mut self, io: &mut Io) {
        io.issue(0, Request::read(self.app, self.pos, self.len));
        self.pos += u64::from(self.len);
    }

    fn wake(&mut self, now: Nanos, io: &mut Io) {
        if !self.armed {
            self.armed = true;
            io.wake = Some(now + self.think);
        } else if self.left == 0 && self.burst > 0 {
            let span = u64::from(self.len) * u64::from(self.burst);
            let top = self.hi.saturating_sub(span).max(self.lo + 1);
            self.pos = self.rng.random_range(self.lo..top);
            self.left = self.burst;
            self.started = now;
            self.issue(io);
        }
    }

    fn completed(&mut self, now: Nanos, io: &mut Io) {
        self.left = self.left.saturating_sub(1);
        if self.left > 0 {
            self.issue(io);
        } else {
            self.latencies.push(now - self.started);
            io.wake = Some(now + self.think);
        }
    }
}

/// Any application model.
#[derive(Clone, Debug)]
pub enum App {
    /// Sequential file reader.
    Seq(SeqReader),
    /// Random reader.
    Random(RandomReader),
    /// Web-server process.
    Web(WebProcess),
    /// Streaming thread.
    Stream(Streamer),
    /// ON/OFF reader.
    OnOff(OnOffReader),
    /// Interactive bursts after idling.
    Interactive(Interactive),
}

impl App {
    /// Called at start and on the wake-ups it asked for.
    pub fn on_wake(&mut self, now: Nanos, io: &mut Io) {
        match self {
            App::Seq(s) => {
                if s.next == 0 {
                    for _ in 0..s.depth.max(1) {
                        s.issue_next(io, 0);
                    }
                }
            }
            App::Random(r) => {
                if let Some(every) = r.open_interval {
                    r.issue_one(io, 0);
                    io.wake = Some(now + every.max(1));
                } else {
                    for _ in 0..r.depth.max(1) {
                        r.issue_one(io, 0);
                    }
                }
            }
            App::Web(w) => w.start_file(io),
            App::Stream(s) => {
                if now < s.start_at {
                    io.wake = Some(s.start_at);
                } else if !s.busy {
                    s.issue(io, 0);
                }
            }
            App::OnOff(o) => o.wake(io),
            App::Interactive(i) => i.wake(now, io),
        }
    }

    /// Called when one of its requests completed (or was refused).
    pub fn on_complete(&mut self, now: Nanos, req: &Request, io: &mut Io) {
        match self {
            App::Seq(s) => {
                s.done += u64::from(req.len);
                if s.done >= s.len {
                    s.finished.get_or_insert(now);
                }
                s.issue_next(io, s.think);
            }
            App::Random(r) => {
                if r.open_interval.is_none() {
                    let think = r.rng.random_range(0..=r.think_max);
                    r.issue_one(io, think);
                }
            }
            App::Web(w) => {
                let Some((start, len, next, small, t0)) = w.file else {
                    return;
                };
                let _ = start;
                if next < len {
                    w.next_request(io, 0);
                    return;
                }
                if req.dir == Direction::Read {
                    if small {
                        w.small_latencies.push(now - t0);
                    } else {
                        w.large_reads.push((len, now - t0));
                    }
                }
                w.file = None;
                w.start_file(io);
            }
            App::Stream(s) => {
                if s.part + 1 < s.parts {
                    s.part += 1;
                    s.issue(io, s.think);
                    return;
                }
                s.part = 0;
                let due = s.nominal(s.k) + s.buffer;
                s.chunks.push((due, now > due));
                s.busy = false;
                s.k += 1;
                let next = s.nominal(s.k);
                if next <= now {
                    s.issue(io, 0);
                } else {
                    io.wake = Some(next);
                }
            }
            App::OnOff(o) => o.completed(io),
            App::Interactive(i) => i.completed(now, io),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that completes nothing loses every chunk that falls due;
    /// counting completed chunks only (the earlier criterion) would have
    /// seen no chunk at all, hence no loss.
    #[test]
    fn a_starved_stream_loses_every_chunk_that_falls_due() {
        let s = Streamer::new(AppId(0), 0, 1 << 20, 0);
        // Due at 1 s + k·128 ms: by 3 s, chunks 0..=15 are due.
        assert_eq!(s.due_and_lost(0, 3000 * MS), (16, 16));
        // Only those due in the window (2 s, 3 s]: chunks 8..=15.
        assert_eq!(s.due_and_lost(2000 * MS, 3000 * MS), (8, 8));
        assert_eq!(s.due_and_lost(0, 999 * MS), (0, 0));
        assert!(s.chunks.is_empty());
    }

    #[test]
    fn chunks_completed_on_time_are_not_lost_and_late_ones_are() {
        let mut s = Streamer::new(AppId(0), 0, 1 << 20, 0);
        // Chunk 0 completed in time, chunk 1 late, chunk 2 not yet done.
        s.chunks = vec![(1000 * MS, false), (1128 * MS, true)];
        assert_eq!(s.due_and_lost(0, 1300 * MS), (3, 2));
        assert_eq!(s.due_and_lost(1100 * MS, 1300 * MS), (2, 2));
    }

    #[test]
    fn split_must_divide_the_chunk() {
        let s = Streamer::new(AppId(0), 0, 1 << 20, 0);
        assert!(s.clone().split(0, 0).is_err());
        assert!(s.clone().split(3, 0).is_err());
        assert_eq!(s.split(4, MS).unwrap().parts, 4);
    }
}
