//! BFQ beyond the thesis, as the kernel's BFQ does it: no idling after
//! asynchronous requests, low-latency weight raising, I/O injection while
//! idling and strict priority classes.

use fairway_disk::bfq::IDLE_GRACE;
use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::model::DiskModel;
use fairway_disk::sim::Simulation;
use fairway_disk::workload::{App, Interactive, SeqReader};
use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Dispatch, IoClass, Request, MS};

fn bfq() -> Bfq {
    let cfg = BfqConfig::simplified(4096).unwrap();
    let mut b = Bfq::new(cfg).unwrap();
    for a in 0..4 {
        b.add_app(AppId(a), AppSpec::weight(1)).unwrap();
    }
    b
}

/// App 0's only request is served; then app 1 issues. After a synchronous
/// request BFQ idles for app 0 (app 1 waits); after an asynchronous one it
/// serves app 1 at once, and app 0's completion later changes nothing.
#[test]
fn bfq_idles_after_sync_requests_only() {
    for sync in [true, false] {
        let mut b = bfq();
        let r = Request::read(AppId(0), 0, 8);
        let r = if sync { r } else { r.asynchronous() };
        b.add_request(0, r).unwrap();
        let Dispatch::Serve(served) = b.dispatch(0) else {
            panic!("app 0 not served")
        };
        b.add_request(MS, Request::read(AppId(1), 1 << 20, 8))
            .unwrap();
        let next = b.dispatch(MS);
        if sync {
            assert_eq!(next, Dispatch::Idle(None), "sync: idles for app 0");
            b.complete(2 * MS, &served);
            assert_eq!(b.dispatch(2 * MS), Dispatch::Idle(Some(6 * MS)));
            assert_eq!(b.stats().async_expired, 0);
        } else {
            let Dispatch::Serve(r1) = next else {
                panic!("async: app 1 not served at once: {next:?}")
            };
            assert_eq!(r1.app, AppId(1));
            b.complete(2 * MS, &served);
            assert_eq!(b.stats().async_expired, 1);
            assert_eq!(b.stats().idle_expired, 0);
        }
    }
}

/// Three greedy sequential readers and an interactive application reading
/// 4 MiB bursts 3 s apart, for 60 s; returns the interactive bursts'
/// latencies, the greedy readers' sectors and the interactive's sectors.
fn interactive_run(low_latency: bool) -> (Vec<u64>, u64, u64, u64) {
    let spec = DiskSchedSpec::parse(&format!("bfq:low_latency={}", u8::from(low_latency))).unwrap();
    let mut sched = spec.build(4).unwrap();
    let mut apps = Vec::new();
    for i in 0..3u32 {
        sched.add_app(AppId(i), AppSpec::weight(1)).unwrap();
        let start = u64::from(i) * 10_000_000;
        apps.push(App::Seq(SeqReader::new(AppId(i), start, 8_000_000)));
    }
    sched.add_app(AppId(3), AppSpec::weight(1)).unwrap();
    apps.push(App::Interactive(Interactive::new(
        AppId(3),
        (40_000_000, 50_000_000),
        256,
        32,
        3_000 * MS,
    )));
    let mut sim = Simulation::new(sched, DiskModel::dtla_307030(), apps);
    let totals = sim.run(60_000 * MS, &mut |_| {}).clone();
    let App::Interactive(i) = &sim.apps[3] else {
        unreachable!()
    };
    let greedy = totals.sectors[..3].iter().sum();
    (i.latencies.clone(), greedy, totals.sectors[3], totals.busy)
}

/// Weight raising (on by default) cuts an interactive application's burst
/// latency under greedy readers; the greedy readers lose at most what the
/// raised application gains plus the seeks to reach it.
#[test]
fn weight_raising_cuts_interactive_latency_at_a_bounded_cost() {
    let (lat_on, greedy_on, inter_on, _) = interactive_run(true);
    let (lat_off, greedy_off, inter_off, _) = interactive_run(false);
    let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len().max(1) as u64;
    eprintln!(
        "on: {} bursts mean {} ms max {} ms greedy {greedy_on} inter {inter_on}; off: {} bursts mean {} ms max {} ms greedy {greedy_off} inter {inter_off}",
        lat_on.len(),
        mean(&lat_on) / MS,
        lat_on.iter().max().unwrap_or(&0) / MS,
        lat_off.len(),
        mean(&lat_off) / MS,
        lat_off.iter().max().unwrap_or(&0) / MS,
    );
    assert!(lat_on.len() >= 10 && lat_off.len() >= 10);
    assert!(mean(&lat_on) * 2 < mean(&lat_off));
    // The greedy readers lose at most the raised application's sectors,
    // and the disk's total throughput stays within 5 %.
    assert!(greedy_off.saturating_sub(greedy_on) <= inter_on);
    assert!((greedy_on + inter_on) * 100 >= (greedy_off + inter_off) * 95);
}

/// Raising starts only after WR_MIN_IDLE of idleness following a
/// completion, lasts wr_duration, ends by itself, and never starts with
/// low latency off.
#[test]
fn weight_raising_starts_after_long_idleness_and_ends() {
    use fairway_disk::bfq::{WR_MIN_DURATION, WR_MIN_IDLE};
    for low_latency in [true, false] {
        let cfg = BfqConfig {
            low_latency,
            ..BfqConfig::simplified(4096).unwrap()
        };
        let mut b = Bfq::new(cfg).unwrap();
        b.add_app(AppId(0), AppSpec::weight(2)).unwrap();
        let serve = |b: &mut Bfq, t: u64| {
            b.add_request(t, Request::read(AppId(0), 0, 8)).unwrap();
            let Dispatch::Serve(r) = b.dispatch(t) else {
                panic!("not served")
            };
            b.complete(t + MS, &r);
            // Idling expires; the application is idle from t + 1 ms.
            assert_eq!(b.dispatch(t + 10 * MS), Dispatch::Empty);
        };
        // A new application is not raised.
        serve(&mut b, 0);
        assert_eq!(b.raised_until(AppId(0)), None);
        // Idle just under WR_MIN_IDLE: not raised.
        let t = MS + WR_MIN_IDLE - 1;
        serve(&mut b, t);
        assert_eq!(b.raised_until(AppId(0)), None);
        // Idle WR_MIN_IDLE: raised (with low latency on) for wr_duration.
        let t = t + MS + WR_MIN_IDLE;
        serve(&mut b, t);
        let want = low_latency.then_some(t + WR_MIN_DURATION);
        assert_eq!(b.raised_until(AppId(0)), want);
        assert_eq!(b.stats().wr_started, u64::from(low_latency));
        // Ends by itself at the next dispatch after its end.
        b.dispatch(t + WR_MIN_DURATION);
        assert_eq!(b.raised_until(AppId(0)), None);
    }
}

/// BFQ with a model check of injection: a request of the active
/// application arriving while it idles is never passed by an injected
/// request, so (one request in service at a time) its service time is at
/// most its own plus what remains of the one request in service when it
/// arrived.
struct Checked {
    b: Bfq,
    waiting: Option<(AppId, u64)>,
    checked: u64,
    violations: u64,
}

impl DiskScheduler for Checked {
    fn name(&self) -> &'static str {
        "checked-bfq"
    }
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), fairway_disk::DiskConfigError> {
        self.b.add_app(app, spec)
    }
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, fairway_disk::DiskConfigError> {
        self.b.remove_app(app)
    }
    fn add_request(&mut self, now: u64, req: Request) -> Result<(), fairway_disk::AddError> {
        if let Some((app, Some(_))) = self.b.active() {
            if app == req.app {
                self.waiting = Some((req.app, req.sector));
                self.checked += 1;
            }
        }
        self.b.add_request(now, req)
    }
    fn dispatch(&mut self, now: u64) -> Dispatch {
        let injected = self.b.stats().injected;
        let d = self.b.dispatch(now);
        if let (Some(w), Dispatch::Serve(r)) = (self.waiting, d) {
            if (r.app, r.sector) == w {
                self.waiting = None;
            } else if self.b.stats().injected > injected {
                self.violations += 1;
            } else {
                // The application's turn ended (budget, T_max): B-WF2Q+'s
                // order, not injection.
                self.waiting = None;
            }
        }
        d
    }
    fn complete(&mut self, now: u64, req: &Request) {
        self.b.complete(now, req)
    }
    fn queued(&self) -> usize {
        self.b.queued()
    }
    fn drain(&mut self) -> Vec<Request> {
        self.b.drain()
    }
}

/// A sequential reader thinking 2 ms between requests (BFQ idles for it)
/// and two greedy readers, 20 s: the disk's utilisation and the checked
/// scheduler.
fn injection_run(inject: bool) -> (Checked, u64, u64) {
    let cfg = BfqConfig {
        inject,
        ..BfqConfig::simplified(4096).unwrap()
    };
    let mut sched = Checked {
        b: Bfq::new(cfg).unwrap(),
        waiting: None,
        checked: 0,
        violations: 0,
    };
    let mut apps = Vec::new();
    for i in 0..3u32 {
        sched.add_app(AppId(i), AppSpec::weight(1)).unwrap();
        let mut r = SeqReader::new(AppId(i), u64::from(i) * 10_000_000, 8_000_000);
        if i == 0 {
            r.think = 2 * MS;
        }
        apps.push(App::Seq(r));
    }
    let mut sim = Simulation::new(sched, DiskModel::dtla_307030(), apps);
    let totals = sim.run(20_000 * MS, &mut |_| {}).clone();
    let (busy, end) = (totals.busy, totals.end);
    (sim.sched, busy, end)
}

/// With injection the disk is busier, and the model check holds: the
/// idling application's next request never waits behind an injected one
/// dispatched after it arrived. Without injection nothing is injected.
#[test]
fn injection_raises_utilisation_and_never_delays_the_idling_application_beyond_its_bound() {
    let (on, busy_on, end_on) = injection_run(true);
    let (off, busy_off, end_off) = injection_run(false);
    eprintln!(
        "on: busy {} of {} ms, injected {}, checked {}; off: busy {} of {} ms",
        busy_on / MS,
        end_on / MS,
        on.b.stats().injected,
        on.checked,
        busy_off / MS,
        end_off / MS
    );
    assert_eq!(off.b.stats().injected, 0);
    assert!(on.b.stats().injected > 100);
    assert!(on.checked > 100, "the check saw arrivals during idling");
    assert_eq!(on.violations, 0);
    assert!((1..=fairway_disk::bfq::INJECT_MAX_LIMIT).contains(&on.b.inject_limit()));
    // Utilisation (busy / elapsed) rises by at least 5 points.
    assert!(busy_on * 100 / end_on >= busy_off * 100 / end_off + 5);
}

/// BFQ with a model check of the priority classes: a served request's
/// class is never below the highest class with a request queued, and an
/// IDLE-class request is served only after IDLE_GRACE without real-time or
/// best-effort work (none in service, none dispatched or completed).
struct ClassChecked {
    b: Bfq,
    class: Vec<usize>,
    queued: [u64; 3],
    hi_in_flight: u64,
    hi_last: u64,
    served: [u64; 3],
    violations: u64,
}

impl DiskScheduler for ClassChecked {
    fn name(&self) -> &'static str {
        "class-checked-bfq"
    }
    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), fairway_disk::DiskConfigError> {
        self.class.push(spec.class.index());
        self.b.add_app(app, spec)
    }
    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, fairway_disk::DiskConfigError> {
        self.b.remove_app(app)
    }
    fn add_request(&mut self, now: u64, req: Request) -> Result<(), fairway_disk::AddError> {
        self.queued[self.class[req.app.index()]] += 1;
        self.b.add_request(now, req)
    }
    fn dispatch(&mut self, now: u64) -> Dispatch {
        let d = self.b.dispatch(now);
        if let Dispatch::Serve(r) = d {
            let c = self.class[r.app.index()];
            let top = (0..3).find(|&k| self.queued[k] > 0).unwrap_or(3);
            if c > top {
                self.violations += 1;
            }
            if c == 2 && (self.hi_in_flight > 0 || now < self.hi_last + IDLE_GRACE) {
                self.violations += 1;
            }
            if c < 2 {
                self.hi_in_flight += 1;
                self.hi_last = now;
            }
            self.queued[c] -= 1;
            self.served[c] += u64::from(r.len);
        }
        d
    }
    fn complete(&mut self, now: u64, req: &Request) {
        if self.class[req.app.index()] < 2 {
            self.hi_in_flight -= 1;
            self.hi_last = now;
        }
        self.b.complete(now, req)
    }
    fn queued(&self) -> usize {
        self.b.queued()
    }
    fn drain(&mut self) -> Vec<Request> {
        self.b.drain()
    }
}

/// An RT and a BE interactive application and a greedy IDLE-class reader,
/// 30 s: the class order holds at every dispatch, IDLE work fills the
/// gaps, and the RT application preempts it.
#[test]
fn priority_classes_are_strict_and_idle_waits_for_its_grace_period() {
    let mut sched = ClassChecked {
        b: Bfq::new(BfqConfig::simplified(4096).unwrap()).unwrap(),
        class: Vec::new(),
        queued: [0; 3],
        hi_in_flight: 0,
        hi_last: 0,
        served: [0; 3],
        violations: 0,
    };
    let spec = |c| AppSpec::weight(1).with_class(c);
    sched.add_app(AppId(0), spec(IoClass::Rt)).unwrap();
    sched.add_app(AppId(1), spec(IoClass::Be)).unwrap();
    sched.add_app(AppId(2), spec(IoClass::Idle)).unwrap();
    let apps = vec![
        App::Interactive(Interactive::new(
            AppId(0),
            (40_000_000, 50_000_000),
            256,
            16,
            700 * MS,
        )),
        App::Interactive(Interactive::new(
            AppId(1),
            (20_000_000, 30_000_000),
            256,
            16,
            500 * MS,
        )),
        App::Seq(SeqReader::new(AppId(2), 0, 8_000_000)),
    ];
    let mut sim = Simulation::new(sched, DiskModel::dtla_307030(), apps);
    sim.run(30_000 * MS, &mut |_| {});
    let s = &sim.sched;
    eprintln!("served {:?}, preempted {}", s.served, s.b.stats().preempted);
    assert_eq!(s.violations, 0);
    assert!(s.served.iter().all(|&x| x > 10_000), "every class served");
    assert!(s.b.stats().preempted > 0, "RT/BE preempted the IDLE reader");
}

/// The schedulers without classes refuse a class other than best effort.
#[test]
fn classes_are_refused_where_unsupported() {
    let mut c = DiskSchedSpec::CLook.build(2).unwrap();
    assert!(c
        .add_app(AppId(0), AppSpec::weight(1).with_class(IoClass::Rt))
        .is_err());
    assert!(c.add_app(AppId(0), AppSpec::weight(1)).is_ok());
}

/// Injection beside the active application's request in flight, on a
/// device that takes several at once (the engine with `max_in_flight` >
/// 1): allowed once the limit counting every request in flight is 2 or
/// more, which the limit reaches only after the active application's
/// request served with an injected one took less than 3/2 of its base;
/// one that took longer brings the limit back down, and with it the
/// injection beside its requests.
#[test]
fn injection_beside_a_request_in_flight_follows_the_adaptive_limit() {
    let cfg = BfqConfig {
        inject: true,
        ..BfqConfig::simplified(4096).unwrap()
    };
    let mut b = Bfq::new(cfg).unwrap();
    for a in 0..2 {
        b.add_app(AppId(a), AppSpec::weight(1)).unwrap();
    }
    for k in 0..20u64 {
        b.add_request(0, Request::read(AppId(1), (1 << 30) + k * 8, 8))
            .unwrap();
    }
    let serve = |b: &mut Bfq, t: u64| match b.dispatch(t) {
        Dispatch::Serve(r) => r,
        d => panic!("nothing served at {t}: {d:?}"),
    };
    // App 0 comes first and becomes active; app 1 waits.
    b.add_request(0, Request::read(AppId(0), 0, 8)).unwrap();
    let mut sector = 0;
    let mut own = |b: &mut Bfq, t: u64| {
        sector += 8;
        b.add_request(t, Request::read(AppId(0), sector, 8))
            .unwrap();
    };
    let r0 = serve(&mut b, 0);
    assert_eq!(r0.app, AppId(0));
    // Limit 1: nothing beside its request in flight.
    assert_eq!(b.inject_limit(), 1);
    assert_eq!(b.dispatch(MS / 10), Dispatch::Idle(None));
    b.complete(MS, &r0); // base service: 1 ms
                         // Idling: one of app 1's requests is injected; app 0's next request
                         // arrives meanwhile and is served beside it, within 3/2 of its base.
    let inj = serve(&mut b, MS);
    assert_eq!(inj.app, AppId(1));
    own(&mut b, MS + MS / 10);
    let r1 = serve(&mut b, MS + MS / 10);
    assert_eq!(r1.app, AppId(0));
    b.complete(2 * MS, &inj);
    b.complete(2 * MS + MS / 10, &r1); // 1 ms with injection: limit 2
    assert_eq!(b.inject_limit(), 2);
    // Now app 1's request goes beside app 0's in flight, and no more.
    own(&mut b, 3 * MS);
    let r2 = serve(&mut b, 3 * MS);
    assert_eq!(r2.app, AppId(0));
    let inj = serve(&mut b, 3 * MS);
    assert_eq!(inj.app, AppId(1));
    assert_eq!(b.dispatch(3 * MS), Dispatch::Idle(None));
    b.complete(4 * MS, &inj);
    // App 0's request took 2 ms with injection, 2× its base: limit 1.
    b.complete(5 * MS, &r2);
    assert_eq!(b.inject_limit(), 1);
    own(&mut b, 5 * MS + MS / 10);
    let r3 = serve(&mut b, 5 * MS + MS / 10);
    assert_eq!(r3.app, AppId(0));
    assert_eq!(b.dispatch(5 * MS + MS / 5), Dispatch::Idle(None));
    // Without injection, nothing goes beside its request, whatever the
    // limit would say.
    let mut off = Bfq::new(BfqConfig::simplified(4096).unwrap()).unwrap();
    for a in 0..2 {
        off.add_app(AppId(a), AppSpec::weight(1)).unwrap();
    }
    off.add_request(0, Request::read(AppId(1), 1 << 30, 8))
        .unwrap();
    off.add_request(0, Request::read(AppId(0), 0, 8)).unwrap();
    assert_eq!(serve(&mut off, 0).app, AppId(0));
    assert_eq!(off.dispatch(MS / 10), Dispatch::Idle(None));
}

/// An application starting after 2 s of idleness (raised) ends the turn
/// of a greedy application in the middle of its budget and is served
/// next, as the kernel's BFQ preempts for a queue of higher weight; the
/// greedy one keeps its backlog and resumes after. Without low latency
/// (no raising) the greedy one finishes its budget first.
#[test]
fn a_raised_application_preempts_a_greedy_one_mid_budget() {
    for low_latency in [true, false] {
        let cfg = BfqConfig {
            low_latency,
            ..BfqConfig::simplified(4096).unwrap()
        };
        let mut b = Bfq::new(cfg).unwrap();
        for a in 0..2 {
            b.add_app(AppId(a), AppSpec::weight(1)).unwrap();
        }
        // App 1 completes one request, then idles 3 s.
        b.add_request(0, Request::read(AppId(1), 1 << 30, 8))
            .unwrap();
        let Dispatch::Serve(r) = b.dispatch(0) else {
            panic!("app 1 not served")
        };
        b.complete(MS, &r);
        // App 0 is greedy: 64 requests of 64 sectors queued (a budget of
        // 512 sectors covers 8 of them).
        let t0 = 3_000 * MS;
        for k in 0..64u64 {
            b.add_request(t0, Request::read(AppId(0), k * 64, 64))
                .unwrap();
        }
        let Dispatch::Serve(first) = b.dispatch(t0) else {
            panic!("app 0 not served")
        };
        assert_eq!(first.app, AppId(0));
        b.complete(t0 + MS, &first);
        // App 1 issues after 3 s of idleness.
        b.add_request(t0 + MS, Request::read(AppId(1), (1 << 30) + 8, 8))
            .unwrap();
        let Dispatch::Serve(next) = b.dispatch(t0 + MS) else {
            panic!("nothing served")
        };
        let want = if low_latency { AppId(1) } else { AppId(0) };
        assert_eq!(next.app, want, "low_latency {low_latency}");
        assert_eq!(b.stats().preempted, u64::from(low_latency));
    }
}

/// BFQ (B_max 4096 sectors) with apps 0 and 1 of weight 1; app 1 has
/// completed one request at 1 ms and its idling has ended: its next
/// request 2 s or more later raises its weight.
fn two_apps_the_second_idle_after_one_request() -> Bfq {
    let mut b = Bfq::new(BfqConfig::simplified(4096).unwrap()).unwrap();
    for a in 0..2 {
        b.add_app(AppId(a), AppSpec::weight(1)).unwrap();
    }
    b.add_request(0, Request::read(AppId(1), 1 << 30, 8))
        .unwrap();
    let Dispatch::Serve(r) = b.dispatch(0) else {
        panic!("app 1 not served")
    };
    b.complete(MS, &r);
    assert_eq!(b.dispatch(10 * MS), Dispatch::Empty); // its idling ends
    b
}

/// A raised application that used up its budget with requests left is
/// re-inserted with its start at its finish and waits to become eligible;
/// the greedy application chosen meanwhile yields as soon as B-WF2Q+ would
/// serve the raised one again, instead of keeping the device for its whole
/// budget (512 sectors and more: 8 requests and more here).
#[test]
fn a_raised_application_back_from_its_budget_preempts_a_greedy_one() {
    // App 1 completes one request, then idles 3 s: raised at its next.
    let mut b = two_apps_the_second_idle_after_one_request();
    let t0 = 3_000 * MS;
    let read = |a: u32, k: u64| Request::read(AppId(a), (u64::from(a) << 30) + k * 64, 64);
    for k in 0..256 {
        b.add_request(t0, read(0, k).asynchronous()).unwrap();
    }
    let left = 128;
    for k in 0..left {
        b.add_request(t0, read(1, k + 1).asynchronous()).unwrap();
    }
    // One request at a time, 1 ms each: the longest run of app 0's while
    // app 1 has requests queued.
    let (mut t, mut left, mut run, mut longest) = (t0, left, 0, 0);
    while left > 0 {
        let Dispatch::Serve(r) = b.dispatch(t) else {
            panic!("nothing served at {t}")
        };
        if r.app == AppId(1) {
            left -= 1;
            run = 0;
        } else {
            run += 1;
            longest = longest.max(run);
        }
        t += MS;
        b.complete(t, &r);
    }
    assert!(b.raised_until(AppId(1)).is_some(), "app 1 stayed raised");
    assert!(b.stats().exhausted > 2, "app 1 used up its budget");
    assert!(longest <= 2, "app 0 served {longest} in a row");
}

/// While a raised application is warm, a greedy active application that
/// is not raised keeps at most `warm_depth` requests in flight (on
/// a device taking several at once); once the raised one has been quiet
/// for T_wait, the greedy one fills the device again.
#[test]
fn a_warm_raised_application_keeps_the_device_shallow() {
    use fairway_disk::bfq::DEFAULT_WARM_DEPTH;
    // App 1 is raised: one request done at 1 ms, the next 3 s later.
    let mut b = two_apps_the_second_idle_after_one_request();
    let t0 = 3_000 * MS;
    // Its next request is asynchronous (read-ahead): served, and its turn
    // ends at once (nobody waits for it), while it is still in flight.
    let ahead = Request::read(AppId(1), (1 << 30) + 8, 8).asynchronous();
    b.add_request(t0, ahead).unwrap();
    let Dispatch::Serve(r) = b.dispatch(t0) else {
        panic!("app 1 not served")
    };
    assert!(b.raised_until(AppId(1)).is_some());
    // App 0, greedy and asynchronous, becomes active: two in flight, no
    // more, while app 1 is warm.
    for k in 0..16u64 {
        b.add_request(t0, Request::read(AppId(0), k * 8, 8).asynchronous())
            .unwrap();
    }
    let mut in_flight = Vec::new();
    while let Dispatch::Serve(q) = b.dispatch(t0) {
        in_flight.push(q);
    }
    assert_eq!(b.dispatch(t0), Dispatch::Idle(None));
    assert_eq!(in_flight.len() as u32, DEFAULT_WARM_DEPTH);
    assert!(in_flight.iter().all(|q| q.app == AppId(0)));
    // Its read-ahead done at t0 + 1 ms: warm until T_wait later.
    b.complete(t0 + MS, &r);
    assert_eq!(b.dispatch(t0 + 2 * MS), Dispatch::Idle(None));
    let later = t0 + 6 * MS;
    let mut more = 0;
    while let Dispatch::Serve(q) = b.dispatch(later) {
        assert_eq!(q.app, AppId(0));
        more += 1;
    }
    assert!(more > 2, "app 0 not let go once app 1 was quiet: {more}");
}
