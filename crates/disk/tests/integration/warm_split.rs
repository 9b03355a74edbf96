//! Large requests dispatched in pieces while a raised application is
//! warm, against a model in simulated time: BFQ with L_max = 2048 sectors
//! (the engine's `max_request` of 1 MiB), the engine's bookkeeping of
//! each request ([`Assembly`], as the engine's core keeps it: pieces
//! issued, completed, the first failure; a client's next synchronous
//! request handed to the scheduler once all of the previous one is
//! dispatched) and a device that takes up to [`LARGE`] transfers and
//! serves them one at a time in the order it got them.
//!
//! The workload: greedy readers keeping 1 MiB asynchronous reads
//! outstanding, a synchronous reader of 1 MiB at random offsets with
//! several requests submitted at once (the engine holds all but its
//! oldest), and an application that starts after idleness
//! (weight-raised) reading 4 KiB after 4 KiB, every other read
//! asynchronous (read-ahead).
//!
//! Checks: every request completes exactly once, after all its pieces,
//! with its full length (or, where a piece failed, with that failure,
//! once); a client's synchronous requests are dispatched in order, each
//! whole before the next; no piece of the others is larger than
//! [`WARM_PIECE`] while the raised application is warm, and requests go
//! whole (1 MiB) while nobody is warm. Each check fails on a broken
//! variant: [`BfqFault::WholeWhileWarm`], the model's hand-over of the
//! next synchronous request at a request's first piece rather than its
//! last, a completion before every piece is back, a failure ignored.

use fairway_disk::bfq::{BfqFault, WARM_PIECE};
use fairway_disk::split::{Assembly, Failed, Piece};
use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Dispatch, Nanos, Request, MS};
use std::collections::{HashMap, VecDeque};

/// Transfers the device takes at once (the engine's `max_in_flight`).
const LARGE: usize = 64;
/// A greedy request: 1 MiB.
const BIG: u32 = 2048;
/// The raised application's read: 4 KiB.
const SMALL: u32 = 8;
const NS_PER_SECTOR: Nanos = 1_000;
const THINK: Nanos = 50_000;
/// Greedy asynchronous readers, apps `0..GREEDY`, [`OUTSTANDING`] each.
const GREEDY: u32 = 3;
const OUTSTANDING: usize = 6;
/// The synchronous random reader, [`SYNC_SUBMITTED`] submitted at once.
const SYNC: AppId = AppId(GREEDY);
const SYNC_SUBMITTED: usize = 4;
const RAISED: AppId = AppId(GREEDY + 1);
/// It starts 3 s after its only earlier request: raised.
const START: Nanos = 3_000 * MS;
const READS: usize = 150;
const END: Nanos = START + 600 * MS;
/// Region of each reader, sectors.
const REGION: u64 = 1 << 24;

/// What the model may get wrong on purpose, to show the checks fail.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ModelFault {
    None,
    /// Hands the client's next synchronous request over at its previous
    /// one's first piece.
    EarlyHandOver,
    /// Completes a request at its last piece's dispatch, not completion.
    EarlyCompletion,
    /// Reports a request whose piece failed as done in full.
    FailureIgnored,
}

struct Entry {
    app: AppId,
    sync: bool,
    len: u32,
    asm: Assembly<&'static str>,
    issued: u32,
    back: u32,
}

/// A request's completion: `Ok(bytes)` or its failure, with its pieces
/// issued and back at that instant.
type Completed = (Result<u32, Failed<&'static str>>, u32, u32);

/// What one run saw.
#[derive(Default)]
struct Seen {
    /// Per request: its completions (`Ok(bytes)` or the failure) with the
    /// pieces issued and back at that instant.
    done: HashMap<u64, Vec<Completed>>,
    /// Per client, the tags of the pieces it got dispatched, in order.
    log: HashMap<u32, Vec<u64>>,
    /// Largest piece of the others dispatched while the raised
    /// application was warm, and while nobody was.
    max_warm: u32,
    max_cold: u32,
    /// Pieces of the others dispatched while it was warm.
    warm_pieces: usize,
    submitted: u64,
    failed_pieces: usize,
}

struct Model {
    b: Bfq,
    fault: ModelFault,
    /// Fail every n-th transfer (0: none).
    fail_every: u64,
    transfers: u64,
    entries: HashMap<u64, Entry>,
    held: HashMap<u32, VecDeque<Request>>,
    sync_in: HashMap<u32, u64>,
    device: VecDeque<(Request, Piece, Nanos)>,
    free_at: Nanos,
    next_tag: u64,
    next_sector: HashMap<u32, u64>,
    rng: u64,
    seen: Seen,
}

impl Model {
    fn new(fault: BfqFault, model: ModelFault, fail_every: u64) -> Self {
        let cfg = BfqConfig {
            inject: true,
            l_max: BIG,
            ..BfqConfig::simplified(4096).unwrap()
        };
        let mut b = Bfq::with_fault(cfg, fault).unwrap();
        for a in 0..=RAISED.0 {
            b.add_app(AppId(a), AppSpec::weight(1)).unwrap();
        }
        Self {
            b,
            fault: model,
            fail_every,
            transfers: 0,
            entries: HashMap::new(),
            held: HashMap::new(),
            sync_in: HashMap::new(),
            device: VecDeque::new(),
            free_at: 0,
            next_tag: 0,
            next_sector: HashMap::new(),
            rng: 0x9e37_79b9_7f4a_7c15,
            seen: Seen::default(),
        }
    }

    fn random(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// The application submits a request (as `Engine::submit` accepts it).
    fn submit(&mut self, now: Nanos, app: AppId, len: u32, sync: bool) {
        let base = u64::from(app.0) * REGION;
        let sector = if app == SYNC {
            base + self.random() % (REGION / u64::from(BIG)) * u64::from(BIG)
        } else {
            let next = self.next_sector.entry(app.0).or_insert(0);
            let s = base + *next;
            *next = (*next + u64::from(len)) % (REGION - u64::from(BIG));
            s
        };
        let mut r = Request::read(app, sector, len);
        r.sync = sync;
        r.tag = self.next_tag;
        self.next_tag += 1;
        self.seen.submitted += 1;
        let asm = Assembly::new(sector * 512, len * 512);
        self.entries.insert(
            r.tag,
            Entry {
                app,
                sync,
                len: len * 512,
                asm,
                issued: 0,
                back: 0,
            },
        );
        if sync && self.sync_in.contains_key(&app.0) {
            self.held.entry(app.0).or_default().push_back(r);
        } else {
            self.schedule(now, r);
        }
    }

    fn schedule(&mut self, now: Nanos, r: Request) {
        if r.sync {
            self.sync_in.insert(r.app.0, r.tag);
        }
        self.b.add_request(now, r).unwrap();
    }

    /// The engine's `start`: the piece's bytes, the hand-over of the
    /// client's next synchronous request, the transfer.
    fn start(&mut self, now: Nanos, r: Request) {
        let warm = self.b.raised_warm(1, now);
        if r.app != RAISED {
            if warm {
                self.seen.max_warm = self.seen.max_warm.max(r.len);
                self.seen.warm_pieces += 1;
            } else {
                self.seen.max_cold = self.seen.max_cold.max(r.len);
            }
        }
        self.seen.log.entry(r.app.0).or_default().push(r.tag);
        let e = self.entries.get_mut(&r.tag).unwrap();
        let piece = e.asm.piece(r.sector, r.len);
        if piece.is_some() {
            e.issued += 1;
        }
        let hand_over = match self.fault {
            ModelFault::EarlyHandOver => true,
            _ => e.asm.all_dispatched(),
        };
        if hand_over && e.sync && self.sync_in.get(&r.app.0) == Some(&r.tag) {
            self.sync_in.remove(&r.app.0);
            if let Some(n) = self.held.get_mut(&r.app.0).and_then(|q| q.pop_front()) {
                self.schedule(now, n);
            }
        }
        let Some(piece) = piece else {
            self.b.complete(now, &r);
            self.finish_if_done(now, r.tag);
            return;
        };
        self.free_at = self.free_at.max(now) + u64::from(r.len) * NS_PER_SECTOR;
        self.device.push_back((r, piece, self.free_at));
        if self.fault == ModelFault::EarlyCompletion {
            let e = self.entries.get_mut(&r.tag).unwrap();
            if e.asm.all_dispatched() {
                let seen = (Ok(e.len), e.issued, e.back);
                self.seen.done.entry(r.tag).or_default().push(seen);
            }
        }
    }

    fn finish_if_done(&mut self, now: Nanos, tag: u64) {
        if !self.entries[&tag].asm.finished() {
            return;
        }
        let e = self.entries.remove(&tag).unwrap();
        let mut result = e.asm.result();
        if self.fault == ModelFault::FailureIgnored {
            result = Ok(e.len);
        }
        if self.fault != ModelFault::EarlyCompletion {
            let seen = (result, e.issued, e.back);
            self.seen.done.entry(tag).or_default().push(seen);
        }
        // The client issues its next request.
        if e.app == SYNC || e.app.0 < GREEDY {
            self.submit(now, e.app, BIG, e.sync);
        }
    }

    fn complete_one(&mut self, now: Nanos) {
        let (r, piece, _) = self.device.pop_front().unwrap();
        self.b.complete(now, &r);
        self.transfers += 1;
        let failed = self.fail_every > 0 && self.transfers.is_multiple_of(self.fail_every);
        self.seen.failed_pieces += usize::from(failed);
        let e = self.entries.get_mut(&r.tag).unwrap();
        e.back += 1;
        e.asm
            .complete(&piece, if failed { Err("EIO") } else { Ok(piece.len) });
        self.finish_if_done(now, r.tag);
    }

    fn dispatch(&mut self, now: Nanos) -> Option<Nanos> {
        while self.device.len() < LARGE {
            match self.b.dispatch(now) {
                Dispatch::Serve(r) => self.start(now, r),
                Dispatch::Idle(t) => return t,
                Dispatch::Empty => break,
            }
        }
        None
    }
}

fn run(fault: BfqFault, model: ModelFault, fail_every: u64) -> Seen {
    let mut m = Model::new(fault, model, fail_every);
    // The raised application's only earlier request, then the readers.
    m.submit(0, RAISED, SMALL, true);
    for a in 0..GREEDY {
        for _ in 0..OUTSTANDING {
            m.submit(0, AppId(a), BIG, false);
        }
    }
    for _ in 0..SYNC_SUBMITTED {
        m.submit(0, SYNC, BIG, true);
    }
    let mut now = 0;
    let mut raised_next = Some(START);
    let mut raised_left = READS;
    let mut raised_tag = None;
    loop {
        let wake = m.dispatch(now);
        let next = [m.device.front().map(|d| d.2), raised_next, wake]
            .into_iter()
            .flatten()
            .min();
        let Some(next) = next.filter(|&t| t <= END) else {
            break;
        };
        now = next.max(now);
        while m.device.front().is_some_and(|d| d.2 <= now) {
            m.complete_one(now);
        }
        if let Some(tag) = raised_tag {
            if m.seen.done.contains_key(&tag) && raised_next.is_none() && raised_left > 0 {
                raised_next = Some(now + THINK);
                raised_tag = None;
            }
        }
        if raised_next.is_some_and(|t| t <= now) {
            raised_tag = Some(m.next_tag);
            // Every other read asynchronous (read-ahead): BFQ then serves
            // the others rather than idling for it.
            m.submit(now, RAISED, SMALL, raised_left.is_multiple_of(2));
            raised_left -= 1;
            raised_next = None;
        }
    }
    m.seen
}

/// Checks that every completed request completed once, after all its
/// pieces, with its full length or its failure; `Err` says what broke.
fn completions_hold(seen: &Seen, failures: bool) -> Result<(), String> {
    let mut failed = 0;
    for (tag, done) in &seen.done {
        if done.len() != 1 {
            return Err(format!("request {tag} completed {} times", done.len()));
        }
        let (result, issued, back) = &done[0];
        if issued != back {
            return Err(format!(
                "request {tag} completed with {back} of its {issued} pieces back"
            ));
        }
        match result {
            Ok(n) if *n == 0 => return Err(format!("request {tag} completed empty")),
            Ok(_) => {}
            Err(Failed::Error(_)) if failures => failed += 1,
            Err(f) => return Err(format!("request {tag} failed: {f:?}")),
        }
    }
    if failures && failed == 0 {
        return Err(format!(
            "{} pieces failed and no request did",
            seen.failed_pieces
        ));
    }
    Ok(())
}

/// Checks that each client's synchronous requests went to the device in
/// order, all of one before any of the next.
fn sync_order_holds(seen: &Seen) -> Result<(), String> {
    let log = &seen.log[&SYNC.0];
    let mut count = 0;
    for w in log.windows(2) {
        if w[1] < w[0] {
            return Err(format!("request {} dispatched after {}", w[0], w[1]));
        }
        count += usize::from(w[1] != w[0]);
    }
    if count < 10 {
        return Err(format!("only {count} synchronous requests dispatched"));
    }
    Ok(())
}

/// Checks the pieces' sizes: at most [`WARM_PIECE`] while the raised
/// application is warm, whole requests otherwise.
fn pieces_hold(seen: &Seen) -> Result<(), String> {
    if seen.warm_pieces < 20 {
        return Err(format!(
            "only {} pieces while the application was warm",
            seen.warm_pieces
        ));
    }
    if seen.max_warm > WARM_PIECE {
        return Err(format!(
            "a piece of {} sectors while the application was warm",
            seen.max_warm
        ));
    }
    if seen.max_cold != BIG {
        return Err(format!(
            "largest transfer {} sectors while nobody was warm",
            seen.max_cold
        ));
    }
    Ok(())
}

#[test]
fn requests_complete_once_in_full_after_all_their_pieces() {
    let seen = run(BfqFault::None, ModelFault::None, 0);
    completions_hold(&seen, false).unwrap();
    assert!(seen.done.len() > 1000, "{} completed", seen.done.len());
    let early = run(BfqFault::None, ModelFault::EarlyCompletion, 0);
    assert!(completions_hold(&early, false).is_err());
}

#[test]
fn a_failed_piece_fails_its_request_once() {
    let seen = run(BfqFault::None, ModelFault::None, 7);
    completions_hold(&seen, true).unwrap();
    let ignored = run(BfqFault::None, ModelFault::FailureIgnored, 7);
    assert!(completions_hold(&ignored, true).is_err());
}

#[test]
fn synchronous_requests_go_whole_and_in_order() {
    let seen = run(BfqFault::None, ModelFault::None, 0);
    sync_order_holds(&seen).unwrap();
    let early = run(BfqFault::None, ModelFault::EarlyHandOver, 0);
    assert!(sync_order_holds(&early).is_err());
}

#[test]
fn pieces_are_small_while_a_raised_application_is_warm_whole_otherwise() {
    let seen = run(BfqFault::None, ModelFault::None, 0);
    pieces_hold(&seen).unwrap();
    let whole = run(BfqFault::WholeWhileWarm, ModelFault::None, 0);
    assert!(pieces_hold(&whole).is_err());
}
