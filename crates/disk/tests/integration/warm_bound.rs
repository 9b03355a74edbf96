//! The adaptive device bound against a model in simulated time: a device
//! that takes up to [`LARGE`] requests (the engine's `max_in_flight`) and
//! serves them one at a time in the order it got them — the worst order
//! for a request arriving behind others —, greedy readers keeping many
//! requests outstanding, and an application that starts after idleness
//! (weight-raised) reading one request after another with a thread's
//! round trip between them, every other one asynchronous (read-ahead,
//! after which BFQ serves the others at once rather than idling).
//!
//! While the raised application is warm, the greedy readers' requests in
//! flight never exceed [`BfqConfig::warm_depth`] once those already on the
//! device when it started are served, so each of its requests waits at
//! most `warm_depth` greedy transfers; when it has gone quiet for T_wait
//! the greedy readers fill the device to the large bound again. Each check
//! fails on a broken variant ([`BfqFault`]).

use fairway_disk::bfq::{BfqFault, DEFAULT_T_WAIT, DEFAULT_WARM_DEPTH};
use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Dispatch, Nanos, Request, MS};
use std::collections::VecDeque;

/// The large bound: requests the device may hold at once.
const LARGE: usize = 64;
/// Greedy readers, each keeping [`OUTSTANDING`] requests of [`BIG`].
const GREEDY: u32 = 4;
const OUTSTANDING: usize = 38;
/// A greedy transfer (128 KiB) and the raised application's (4 KiB).
const BIG: u32 = 256;
const SMALL: u32 = 8;
/// The device's service time per sector (512 MB/s).
const NS_PER_SECTOR: Nanos = 1_000;
/// The raised application's round trip between a completion and its next
/// request (below T_wait, so it stays warm between requests).
const THINK: Nanos = 50_000;
const RAISED: AppId = AppId(GREEDY);
/// It starts 3 s after its only earlier request: raised.
const START: Nanos = 3_000 * MS;
const READS: usize = 200;
const END: Nanos = START + 500 * MS;

/// What one run saw.
struct Run {
    /// Most greedy requests in flight right after a greedy dispatch made
    /// while the raised application was warm.
    max_greedy_warm: usize,
    /// The raised application's requests' waits, arrival to completion.
    waits: Vec<Nanos>,
    /// Most greedy requests in flight once it had been quiet for T_wait.
    max_greedy_after: usize,
    /// Its last completion.
    done: Nanos,
}

/// The model's device: requests in the order they were dispatched, each
/// with its completion instant.
struct Device {
    queue: VecDeque<(Request, Nanos)>,
    free_at: Nanos,
}

impl Device {
    fn push(&mut self, now: Nanos, r: Request) {
        self.free_at = self.free_at.max(now) + u64::from(r.len) * NS_PER_SECTOR;
        self.queue.push_back((r, self.free_at));
    }

    fn greedy(&self) -> usize {
        self.queue.iter().filter(|(r, _)| r.app != RAISED).count()
    }
}

fn run(fault: BfqFault, warm_depth: u32) -> Run {
    let cfg = BfqConfig {
        inject: true,
        warm_depth,
        ..BfqConfig::simplified(4096).unwrap()
    };
    let mut b = Bfq::with_fault(cfg, fault).unwrap();
    for a in 0..=GREEDY {
        b.add_app(AppId(a), AppSpec::weight(1)).unwrap();
    }
    let mut next_sector = [0u64; GREEDY as usize];
    let mut greedy_read = |b: &mut Bfq, app: u32, now: Nanos| {
        let s = &mut next_sector[app as usize];
        let r = Request::read(AppId(app), (u64::from(app) << 30) + *s, BIG).asynchronous();
        *s += u64::from(BIG);
        b.add_request(now, r).unwrap();
    };
    for app in 0..GREEDY {
        for _ in 0..OUTSTANDING {
            greedy_read(&mut b, app, 0);
        }
    }
    // The raised application's earlier request, at 0.
    b.add_request(0, Request::read(RAISED, 40 << 30, SMALL))
        .unwrap();
    let mut dev = Device {
        queue: VecDeque::new(),
        free_at: 0,
    };
    let (mut now, mut next_raised, mut issued) = (0, Some(START), 0usize);
    let mut last_raised_done: Option<Nanos> = None;
    let mut raised_outstanding = false;
    let mut out = Run {
        max_greedy_warm: 0,
        waits: Vec::new(),
        max_greedy_after: 0,
        done: 0,
    };
    loop {
        let mut deadline = None;
        while dev.queue.len() < LARGE {
            match b.dispatch(now) {
                Dispatch::Serve(r) => {
                    let is_greedy = r.app != RAISED;
                    dev.push(now, r);
                    let warm = now >= START
                        && (raised_outstanding
                            || last_raised_done.is_some_and(|c| now - c < DEFAULT_T_WAIT));
                    if is_greedy && warm {
                        out.max_greedy_warm = out.max_greedy_warm.max(dev.greedy());
                    }
                }
                Dispatch::Idle(t) => {
                    deadline = t;
                    break;
                }
                Dispatch::Empty => break,
            }
        }
        if issued == READS && last_raised_done.is_some_and(|c| now >= c + DEFAULT_T_WAIT) {
            out.max_greedy_after = out.max_greedy_after.max(dev.greedy());
        }
        let next = [dev.queue.front().map(|&(_, t)| t), next_raised, deadline]
            .into_iter()
            .flatten()
            .min();
        let Some(next) = next.filter(|&t| t <= END) else {
            break;
        };
        now = next.max(now);
        while let Some(&(r, t)) = dev.queue.front().filter(|&&(_, t)| t <= now) {
            dev.queue.pop_front();
            b.complete(t, &r);
            if r.app == RAISED {
                raised_outstanding = false;
                last_raised_done = Some(t);
                if t >= START {
                    out.waits.push(t - r.arrival);
                    out.done = t;
                    next_raised = (issued < READS).then_some(t + THINK);
                }
            } else {
                greedy_read(&mut b, r.app.0, t);
            }
        }
        if next_raised == Some(now) {
            let r = Request::read(RAISED, (40 << 30) + 8 + issued as u64 * 8, SMALL);
            // Every other one is read-ahead: asynchronous, so BFQ ends
            // its turn at once and a greedy reader becomes active.
            let r = if issued % 2 == 1 { r.asynchronous() } else { r };
            b.add_request(now, r).unwrap();
            issued += 1;
            raised_outstanding = true;
            next_raised = None;
        }
    }
    assert!(
        b.raised_until(RAISED).is_some(),
        "the application was not raised"
    );
    out
}

/// The longest wait of a raised request behind a full device, and behind
/// `warm_depth` greedy transfers, on the model device.
fn wait_bounds(warm_depth: u32) -> (Nanos, Nanos) {
    let full = (LARGE as u64 * u64::from(BIG) + u64::from(SMALL)) * NS_PER_SECTOR;
    let warm = (u64::from(warm_depth) * u64::from(BIG) + u64::from(SMALL)) * NS_PER_SECTOR;
    (full, warm)
}

/// While the raised application is warm the greedy readers never have
/// more than `warm_depth` requests in flight after a dispatch of theirs;
/// its first request waits behind at most the full device (what was
/// there when it started), every later one behind at most `warm_depth`
/// greedy transfers; once it has been quiet for T_wait, the greedy readers
/// reach the large bound again.
#[test]
fn a_warm_raised_application_bounds_the_greedy_requests_in_flight() {
    for warm_depth in [1, DEFAULT_WARM_DEPTH, 4] {
        let r = run(BfqFault::None, warm_depth);
        assert_eq!(
            r.waits.len(),
            READS,
            "warm_depth {warm_depth}: not all reads done"
        );
        assert!(
            r.max_greedy_warm <= warm_depth as usize,
            "warm_depth {warm_depth}: {} greedy in flight while warm",
            r.max_greedy_warm
        );
        let (full, warm) = wait_bounds(warm_depth);
        assert!(r.waits[0] <= full, "first wait {} > {full}", r.waits[0]);
        let worst = r.waits[1..].iter().max().copied().unwrap_or(0);
        assert!(
            worst <= warm,
            "warm_depth {warm_depth}: a raised request waited {worst} ns > {warm}"
        );
        assert_eq!(
            r.max_greedy_after, LARGE,
            "warm_depth {warm_depth}: greedy readers not back at the large bound"
        );
        assert!(r.done < END - 10 * MS);
    }
}

/// The bound counted per application (the asking one's requests only)
/// lets the greedy readers keep the device full while the raised
/// application is warm: both the in-flight check and the wait bound fail.
#[test]
fn a_per_application_warm_depth_fails_the_checks() {
    let r = run(BfqFault::WarmDepthPerApp, DEFAULT_WARM_DEPTH);
    assert!(
        r.max_greedy_warm > DEFAULT_WARM_DEPTH as usize,
        "{}",
        r.max_greedy_warm
    );
    let (_, warm) = wait_bounds(DEFAULT_WARM_DEPTH);
    assert!(r.waits[1..].iter().any(|&w| w > warm));
}

/// Holding the greedy readers for as long as an application is raised,
/// warm or not, keeps them at the small bound after it has gone quiet:
/// the large-bound check fails.
#[test]
fn holding_while_raised_fails_the_large_bound_check() {
    let r = run(BfqFault::HoldWhileRaised, DEFAULT_WARM_DEPTH);
    assert!(r.max_greedy_after < LARGE, "{}", r.max_greedy_after);
}

/// The warm depth is refused outside `1..=256`, named, both ends and one
/// past.
#[test]
fn the_warm_depth_is_checked_and_named() {
    for (d, ok) in [(0, false), (1, true), (256, true), (257, false)] {
        let cfg = BfqConfig {
            warm_depth: d,
            ..BfqConfig::simplified(4096).unwrap()
        };
        match Bfq::new(cfg) {
            Ok(_) => assert!(ok, "{d} accepted"),
            Err(e) => {
                assert!(!ok, "{d} refused: {e}");
                assert!(e.to_string().contains("warm-depth"), "{e}");
            }
        }
    }
}
