//! BFQ, Budget Fair Queueing of disk requests (the BFQ thesis §2.1, Figs. 2–4).
//!
//! # The problem
//!
//! A disk serves one request at a time and its service time depends on
//! where the request is: a sequential reader gets ~36 MB/s from the model
//! drive, a reader alternating between two far-apart files a fraction of
//! that, because every switch costs a seek and half a rotation (≈ 8–15 ms).
//! Applications also issue *synchronous* requests: the next one arrives only
//! after the previous completes, so for a moment the application looks idle
//! (deceptive idleness), and a timestamp scheduler that stamps it at its
//! actual arrival pushes it behind everybody (delayed arrival). Fair
//! queueing per request therefore loses both throughput and fairness.
//!
//! # The algorithm
//!
//! BFQ serves one *active* application at a time, exclusively, for a
//! *budget* B_i of sectors, and picks the next active application with
//! B-WF2Q+ ([`crate::bwf2q`]) over budgets, so each application gets its
//! share φ_i = w_i/Σw of the *sectors* transferred, whatever the seek costs:
//!
//! * `add_request` (Fig. 3 lines 5–19) queues the request in the
//!   application's queue; if the queue was empty the application enters
//!   B-WF2Q+ with `S = max(V, F)`, unless it is the active one waiting for
//!   this very request, in which case the idling timer is cancelled.
//! * `dispatch` (lines 22–55) serves the active application's next request
//!   (C-LOOK order from the head, unless the oldest has waited T_FIFO) and
//!   decrements the remaining budget. When the next request no longer fits
//!   in the remaining budget the application is *deactivated with backlog*:
//!   charged its actual service (`F = S + served/w`), its budget grows by
//!   [`BfqConfig::budget_step`] if that stays within B_i,max, and it is
//!   re-inserted with the back-shifted start `S = F` (lines 27–36).
//! * **Device idling.** When the active application's queue empties, the
//!   disk is kept idle for T_wait after the completion of its last request
//!   (the SI property measures `a_i^j − c_i^{j−1} ≤ T_wait` from the
//!   completion, so the timer is armed there, as Linux does). A request
//!   arriving in time cancels the timer and the batch goes on; otherwise the
//!   application is deemed idle, its budget becomes what it consumed and it
//!   is charged that (lines 57–65). Nothing else is dispatched meanwhile.
//! * **Synchronous and asynchronous requests.** Idling is for an
//!   application that waits for its request to complete before issuing the
//!   next ([`Request::sync`]). When the active application's queue empties
//!   on an *asynchronous* request, nobody waits for it: the application is
//!   deactivated at once (charged what it consumed), as the kernel's BFQ
//!   idles only for synchronous queues. The thesis' applications are all
//!   synchronous, so its experiments are unchanged.
//! * **Low-latency weight raising** ([`BfqConfig::low_latency`], on by
//!   default as in the kernel): an application that issues after
//!   [`WR_MIN_IDLE`] of idleness has its weight multiplied by [`WR_COEFF`]
//!   for [`Bfq::wr_duration`], then returns to its weight. A raised
//!   application ends the turn of an active one of its class that is not
//!   raised when it becomes backlogged, as the kernel's BFQ preempts for a
//!   queue of higher weight, and when, back-shifted after using up its
//!   budget, it becomes the eligible application B-WF2Q+ would serve first
//!   (the active one having been served something): an interactive task
//!   does not wait for a greedy application's whole budget.
//! * **I/O injection** ([`BfqConfig::inject`], off by default: Theorem
//!   2.1 and the thesis' experiments assume exclusive service while
//!   idling): while the active application idles, requests of the
//!   application B-WF2Q+ would serve next are dispatched, at most the
//!   adaptive injection limit in flight, and deducted from its next
//!   budget. The idling application's request ends the idling and goes
//!   before any further injection.
//! * **Priority classes** ([`crate::IoClass`]): one B-WF2Q+ per class;
//!   the next active application comes from the highest class with one
//!   backlogged, a newly backlogged application preempts an active one of
//!   a lower class, and the IDLE class waits [`IDLE_GRACE`] after the last
//!   real-time or best-effort request.
//! * **Groups** ([`crate::hier`], [`DiskScheduler::add_group`]): each
//!   class's B-WF2Q+ is hierarchical, a tree per group, so groups share
//!   by their weights and their members share each group's share, as the
//!   kernel's BFQ schedules cgroups; everything above applies to the
//!   active application inside its group.
//! * **Reservations and limits** ([`crate::dmclock`], the `qos` part of
//!   this module): a reservation phase in front of BFQ's choice, and
//!   limits as eligibility for B-WF2Q+.
//! * **The adaptive device bound** ([`BfqConfig::warm_depth`]): while a
//!   raised application is warm, the others keep few requests in flight
//!   together (below).
//! * **T_max** (§2.1.1). An application still active T_max after its
//!   activation is deactivated and *overcharged* B_i,max, so a seeky
//!   application cannot hold the disk for long at a low rate. With
//!   [`TimeBudget::Auto`] (the simplified interface) T_max is 4/3 of the
//!   time to transfer B_max at the estimated rate, the rate being an
//!   exponentially weighted average (gain 1/8) of the rates of batches that
//!   exhausted their budget; no timeout applies before the first estimate.
//!
//! A budget never falls below the next request's size (Fig. 3's comment at
//! lines 45–46 defers this to the code; here an application whose next
//! request does not fit an unused budget is deactivated with zero service
//! and its budget raised to that size, so it loses nothing).
//!
//! # The adaptive device bound
//!
//! On a device that takes many requests at once (an SSD, a loop device,
//! the engine's `max_in_flight` above 1), how many requests sit on it is a
//! trade between throughput and the wait of a request arriving behind
//! them. Greedy sequential readers need bytes in flight: by Little's law,
//! throughput = bytes in flight / service time, and a device's service
//! time grows with the transfer, so it reaches its throughput only with
//! several transfers queued (the kernel's BFQ lets read-ahead put dozens
//! of reads of over 1 MiB on a loop device). A raised application's
//! request, arriving behind them, waits for them on a device that serves
//! in arrival order. So the bound adapts:
//!
//! * **While no raised application is warm**, nothing here limits the
//!   requests in flight: the bound is the device's (the engine's
//!   `max_in_flight`, the large end), chosen for throughput.
//! * **While a raised application is warm** (requests queued or in
//!   flight, or its last completion less than T_wait ago: its next
//!   request is expected within the same window BFQ idles for), the
//!   applications that are not raised — the active one, those injected,
//!   those whose turn ended with requests still in flight — keep at most
//!   [`BfqConfig::warm_depth`] requests in flight *together*; a request of
//!   theirs waits for one to complete. Once the requests that were on the
//!   device when the raised application became warm are served, each of
//!   its requests arrives behind at most `warm_depth` of theirs: its wait
//!   is at most `warm_depth` transfers of at most [`WARM_PIECE`] sectors
//!   (on a device serving in arrival order; less on one serving in
//!   parallel).
//!   This is what the kernel's BFQ gets by idling for a raised queue and
//!   bounding what it injects meanwhile with its injection limit (which
//!   starts at 1).
//! * **The default, 2** ([`DEFAULT_WARM_DEPTH`]): one greedy transfer in
//!   service and one waiting, so the device does not go idle between a
//!   completion and the next dispatch (a thread's round trip) and the
//!   greedy readers keep part of their throughput, while a raised request
//!   waits behind at most two 128 KiB transfers. 1 gives the raised
//!   application the shortest waits and the greedy readers a device idle
//!   for a round trip after each transfer; more gives them more
//!   throughput and it proportionally longer waits.
//! * Reservations (the dmClock phase) are promises of a rate and are not
//!   held by it; nor are raised applications' own requests.
//! * Transfer size: the bound counts what leaves the queues, and while a
//!   raised application is warm (and for [`WARM_PIECE_WINDOW`] after)
//!   the others' requests leave them in pieces of at most [`WARM_PIECE`]
//!   sectors (128 KiB), the rest staying queued in place; so the wait it
//!   promises is `warm_depth · WARM_PIECE` sectors whatever L_max is
//!   (an engine's `max_request` of up to 1 MiB). Otherwise requests go
//!   whole.
//!
//! # Guarantees (§2.2)
//!
//! For an application continuously quasi-backlogged over [t1, t2],
//! `φ_i·W(t1,t2) − W_i(t1,t2) ≤ B_max + B_i,max + L_max` (Theorem 2.1);
//! the integration tests check it on random workloads, and that a variant
//! without idling violates it.
//!
//! # Constants and their units
//!
//! | symbol | field | default (simplified interface) | unit |
//! |---|---|---|---|
//! | B_max | [`BfqConfig::max_budget`] | user-given, or from the boost level | sectors |
//! | B_i^0 | [`BfqConfig::default_budget`] | max(L_max, B_max/8) | sectors |
//! | BUDG_INC_STEP | [`BfqConfig::budget_step`] | max(1, B_max/8) | sectors |
//! | T_wait | [`BfqConfig::t_wait`] | [`DEFAULT_T_WAIT`] = 4 ms | ns |
//! | T_FIFO | [`BfqConfig::t_fifo`] | [`DEFAULT_T_FIFO`] = 100 ms | ns |
//! | T_max | [`BfqConfig::t_max`] | 4/3 · B_max / rate | ns |
//! | L_max | [`BfqConfig::l_max`] | [`DEFAULT_L_MAX`] = 256 | sectors |
//! | warm depth | [`BfqConfig::warm_depth`] | [`DEFAULT_WARM_DEPTH`] = 2 | requests |
//!
//! Cost: O(log N) per dispatch for N queued applications (two heaps) plus
//! O(log n) for the application's own queue of n requests.

mod group_rates;
mod groups;
mod qos;

use crate::dmclock::{DmTags, Rate};
use crate::hier::HierWf2q;
use crate::queue::RequestQueue;
use crate::request::{
    check_range, AddError, AddErrorKind, AppId, DiskConfigError, Nanos, Request, MS,
};
use crate::scheduler::{AppSpec, DiskScheduler, Dispatch, MAX_WEIGHT, MAX_WEIGHT_SUM};

/// T_wait default: 4 ms, the Linux default the thesis uses (§2.2.3).
pub const DEFAULT_T_WAIT: Nanos = 4 * MS;
/// T_FIFO default: 100 ms, the kernel's usual read deadline (§2.2.3).
pub const DEFAULT_T_FIFO: Nanos = 100 * MS;
/// L_max default: 256 sectors (128 KiB), the Linux default (§2.4).
pub const DEFAULT_L_MAX: u32 = 256;
/// The boost level's upper B_max: the sectors served in this time at the
/// peak rate (§2.2.3: 200 ms).
pub const BOOST_WINDOW: Nanos = 200 * MS;
/// Largest accepted B_max (2^24 sectors = 8 GiB), for exact virtual times.
pub const MAX_BUDGET_LIMIT: u32 = 1 << 24;
/// Low-latency weight raising: the factor a raised application's weight is
/// multiplied by. The kernel's `bfq_wr_coeff` (30): large enough that a
/// raised application's batch finishes, in virtual time, before the
/// batches of greedy applications already queued, so it is served next.
pub const WR_COEFF: u32 = 30;
/// An application is raised when it issues after having been idle (no
/// request queued or in service) for at least this long: the kernel's
/// `bfq_wr_min_idle_time` (2 s). Shorter gaps are an application's own
/// think time between requests, not a new start.
pub const WR_MIN_IDLE: Nanos = 2_000 * MS;
/// The raising lasts the time to transfer this many sectors at the
/// estimated rate (64 MiB: of the order of what a large application reads
/// while it starts), within [`WR_MIN_DURATION`]..=[`WR_MAX_DURATION`]: the
/// kernel's rule, a duration inversely proportional to the device's peak
/// rate, so a slow device raises longer.
pub const WR_REF_SECTORS: u64 = 1 << 17;
/// Shortest raising (the kernel's lower bound, 3 s); also the duration
/// before the first rate estimate, the cautious choice for the other
/// applications.
pub const WR_MIN_DURATION: Nanos = 3_000 * MS;
/// Longest raising (the kernel's upper bound, 25 s): bounds the unfairness
/// a raised application can cause on a very slow device.
pub const WR_MAX_DURATION: Nanos = 25_000 * MS;
/// I/O injection: most injected requests in flight at once. The limit
/// adapts within `1..=INJECT_MAX_LIMIT`; 8 lets a device that serves
/// requests in parallel (an SSD) overlap a few, while the idling
/// application's next request still waits behind at most 8.
pub const INJECT_MAX_LIMIT: u32 = 8;
/// [`BfqConfig::warm_depth`] default: while a raised application is
/// *warm* (requests queued or in flight, or its last completion less
/// than T_wait ago), the applications that are not raised have at most
/// this many requests in flight together. See "The adaptive device
/// bound" in the module doc for why 2.
pub const DEFAULT_WARM_DEPTH: u32 = 2;
/// While a raised application is warm, or was less than
/// [`WARM_PIECE_WINDOW`] ago, the applications that are not raised get
/// their requests dispatched in pieces of at most this many sectors
/// (128 KiB, the default L_max): a request of up to L_max sectors (an
/// engine's 1 MiB read) leaves the queue one piece at a time, the rest
/// staying queued in its place. The raised application's wait behind
/// [`BfqConfig::warm_depth`] transfers so stays what it is with 128 KiB
/// requests, whatever L_max is.
pub const WARM_PIECE: u32 = DEFAULT_L_MAX;
/// How long after a raised application was last warm the others'
/// requests are still dispatched in [`WARM_PIECE`]s (200 ms). A starting
/// task pauses between its reads (its processes think, its threads wait
/// for the CPU on a busy host), longer than T_wait at times: its request
/// after such a pause waits for what is on the device, which the large
/// bound lets fill; in pieces that is at most `max_in_flight` pieces, as
/// with 128 KiB requests, where whole requests would be up to L_max
/// sectors each. Past the window the others' requests go whole again.
pub const WARM_PIECE_WINDOW: Nanos = 200 * MS;
/// Largest [`BfqConfig::warm_depth`]: the engine's largest bound on
/// transfers in flight, above which the rule would never hold anything.
pub const MAX_WARM_DEPTH: u32 = 256;
/// An IDLE-class application is served only once no real-time or
/// best-effort request has been dispatched or completed for this long:
/// 200 ms, the kernel's `BFQ_CL_IDLE_TIMEOUT`, long enough that a
/// best-effort application thinking between requests is not interleaved
/// with (and its sequential access broken by) idle-class work.
pub const IDLE_GRACE: Nanos = 200 * MS;
/// A request starting farther than this from where its application's
/// previous request ended is a seek (sectors; the kernel BFQ's threshold).
pub const SEEK_DISTANCE: u64 = 800;
/// An application is *seeky* when more than this many of its last 32
/// requests were seeks (the kernel BFQ's 1/8).
pub const SEEKY_MIN: u32 = 4;

/// How T_max is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeBudget {
    /// No time budget.
    Off,
    /// A fixed T_max in ns (`1..=60 s`).
    Fixed(Nanos),
    /// 4/3 of the time to consume B_max at the measured rate.
    Auto,
}

/// BFQ parameters (see the module doc's table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BfqConfig {
    /// B_max, sectors, `L_max..=2^24`.
    pub max_budget: u32,
    /// B_i^0, the budget of a newly admitted application, `1..=B_max`.
    pub default_budget: u32,
    /// Budget growth after an exhaustion with backlog, `1..=B_max`.
    pub budget_step: u32,
    /// T_wait, ns, `0..=1 s` (0 disables idling).
    pub t_wait: Nanos,
    /// T_FIFO, ns, `0..=60 s`.
    pub t_fifo: Nanos,
    /// T_max.
    pub t_max: TimeBudget,
    /// L_max, sectors, `1..=65536`.
    pub l_max: u32,
    /// Application ids must be below this, `1..=2^20`.
    pub max_apps: u32,
    /// Most requests queued at once, `1..=2^32`.
    pub max_queued: usize,
    /// Low-latency weight raising (the kernel's `low_latency`, on by
    /// default): an application that issues after having been idle for
    /// [`WR_MIN_IDLE`] has its weight multiplied by [`WR_COEFF`] for
    /// [`Bfq::wr_duration`].
    pub low_latency: bool,
    /// I/O injection while idling (off by default, see the module doc):
    /// while the active application idles, other applications' requests
    /// are dispatched, at most the adaptive injection limit in flight.
    pub inject: bool,
    /// The adaptive device bound's small end, `1..=MAX_WARM_DEPTH`
    /// (default [`DEFAULT_WARM_DEPTH`]): while a raised application is
    /// warm, the applications that are not raised keep at most this many
    /// requests in flight together (see the module doc).
    pub warm_depth: u32,
}

impl BfqConfig {
    /// The simplified interface with B_max given directly (§2.2.3): every
    /// other parameter at the thesis' default.
    pub fn simplified(max_budget: u32) -> Result<Self, DiskConfigError> {
        let cfg = Self {
            max_budget,
            default_budget: DEFAULT_L_MAX.max(max_budget / 8),
            budget_step: (max_budget / 8).max(1),
            t_wait: DEFAULT_T_WAIT,
            t_fifo: DEFAULT_T_FIFO,
            t_max: TimeBudget::Auto,
            l_max: DEFAULT_L_MAX,
            max_apps: 1024,
            max_queued: 1 << 20,
            low_latency: true,
            inject: false,
            warm_depth: DEFAULT_WARM_DEPTH,
        };
        // B_i^0 may not exceed a small B_max.
        let cfg = Self {
            default_budget: cfg.default_budget.min(max_budget.max(1)),
            ..cfg
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// The simplified interface with a throughput-boosting level in 0..=1
    /// (§2.2.3): B_max = L_max + level·(S_200 − L_max), rounded down, where
    /// S_200 is the number of sectors transferred in 200 ms at
    /// `peak_sectors_per_sec`. The lower end is L_max rather than the
    /// thesis' "minimum possible request size" because a budget must fit
    /// the longest request.
    pub fn boost_level(level: f64, peak_sectors_per_sec: u64) -> Result<Self, DiskConfigError> {
        if !(0.0..=1.0).contains(&level) {
            return Err(DiskConfigError::OutOfRange {
                name: "boost-level",
                value: level,
                allowed: "0..=1",
            });
        }
        let top = peak_sectors_per_sec as u128 * u128::from(BOOST_WINDOW) / 1_000_000_000;
        let top = u32::try_from(top)
            .ok()
            .filter(|t| (DEFAULT_L_MAX..=MAX_BUDGET_LIMIT).contains(t))
            .ok_or(DiskConfigError::OutOfRange {
                name: "peak-rate",
                value: peak_sectors_per_sec as f64,
                allowed: "sectors/s such that 200 ms covers 256..=2^24 sectors",
            })?;
        let span = f64::from(top - DEFAULT_L_MAX);
        Self::simplified(DEFAULT_L_MAX + (level * span) as u32)
    }

    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), DiskConfigError> {
        check_range("l-max", self.l_max, 1, 1 << 16, "1..=65536 sectors")?;
        check_range(
            "max-budget",
            self.max_budget,
            self.l_max,
            MAX_BUDGET_LIMIT,
            "L_max..=16777216 sectors (a budget must fit the longest request)",
        )?;
        check_range(
            "default-budget",
            self.default_budget,
            1,
            self.max_budget,
            "1..=B_max sectors",
        )?;
        check_range(
            "budget-step",
            self.budget_step,
            1,
            self.max_budget,
            "1..=B_max sectors",
        )?;
        check_range("t-wait", self.t_wait as f64, 0.0, 1e9, "0..=1e9 ns")?;
        check_range("t-fifo", self.t_fifo as f64, 0.0, 60e9, "0..=6e10 ns")?;
        if let TimeBudget::Fixed(t) = self.t_max {
            check_range("t-max", t as f64, 1.0, 60e9, "1..=6e10 ns")?;
        }
        check_range("max-apps", self.max_apps, 1, 1 << 20, "1..=1048576")?;
        check_range(
            "warm-depth",
            self.warm_depth,
            1,
            MAX_WARM_DEPTH,
            "1..=256 requests (at least one, so a completion always comes to end the hold)",
        )?;
        check_range(
            "max-queued",
            self.max_queued as f64,
            1.0,
            4294967296.0,
            "1..=2^32",
        )?;
        Ok(())
    }
}

/// Deliberately broken variants, for the tests that show the guarantee
/// checks can fail. Compiled only with the `test-support` feature, which
/// only this crate's own tests turn on (its dev-dependency on itself), so
/// no build of the library for use has them.
#[cfg(feature = "test-support")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BfqFault {
    /// The correct algorithm.
    #[default]
    None,
    /// Never idles: an emptied active application is expired at once.
    NoIdling,
    /// Re-inserts a deactivated application at `max(V, F)`, not `F`.
    NoBackshift,
    /// Ends the idling wait when *another* application's request arrives.
    ServeWhileIdling,
    /// The adaptive bound's small end counts only the requests in flight
    /// of the application asking, not those of every application that is
    /// not raised.
    WarmDepthPerApp,
    /// Holds the applications that are not raised while a raised one is
    /// raised, warm or not: they never reach the large bound meanwhile.
    HoldWhileRaised,
    /// Dispatches requests whole while a raised application is warm
    /// (no [`WARM_PIECE`]s).
    WholeWhileWarm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Idling {
    /// Serving.
    No,
    /// Queue empty, its last request still in service: timer not armed yet.
    AwaitCompletion,
    /// Timer pending until this instant.
    Until(Nanos),
}

#[derive(Clone, Copy, Debug)]
struct Active {
    app: u32,
    remaining: u32,
    since: Nanos,
    idling: Idling,
    /// The active application's request in service arrived while injected
    /// requests were in flight (its service time measures injection).
    with_injection: bool,
}

#[derive(Debug, Default)]
struct AppState {
    configured: bool,
    /// The weight the application was admitted with.
    weight: u32,
    /// The weight B-WF2Q+ uses: `weight`, or `weight · WR_COEFF` while
    /// raised.
    cur_weight: u32,
    /// End of the weight raising (meaningful while `cur_weight > weight`).
    wr_until: Nanos,
    /// Completion of the application's last request (`None`: none yet).
    last_completion: Option<Nanos>,
    /// Requests dispatched and not completed.
    in_service: u32,
    /// Priority class index (0 RT, 1 BE, 2 IDLE).
    class: usize,
    /// Sectors injected ahead of the application's turn, deducted from its
    /// next budget.
    injected: u32,
    /// While it is active: most requests in flight (its own and injected
    /// ones) with injection, `1..=INJECT_MAX_LIMIT` (0 until admitted).
    inject_limit: u32,
    /// Service time (arrival to completion) of its last request served
    /// without injection in flight (0: none yet).
    base_service: Nanos,
    max_budget: u32,
    budget: u32,
    queue: RequestQueue,
    /// One bit per request, newest lowest: it started more than
    /// [`SEEK_DISTANCE`] from where the application's previous one ended.
    seek_history: u32,
    /// The sector after the application's previous request.
    last_end: u64,
    /// Its group (0: the root).
    group: u32,
    /// dmClock reservation, limit and tags.
    dm: DmTags,
    /// Its start tag in its groups' reservation phases: the group's
    /// reserved service is shared among its members by weight
    /// ([`group_rates`]).
    gres_tag: u128,
}

/// Event counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BfqStats {
    /// Requests dispatched.
    pub dispatched: u64,
    /// Deactivations with backlog left and the budget exhausted.
    pub exhausted: u64,
    /// Idling timer expirations (application deemed idle).
    pub idle_expired: u64,
    /// Deactivations without idling because the application's last queued
    /// request was asynchronous.
    pub async_expired: u64,
    /// Idling timers cancelled by a request arriving in time.
    pub idle_hits: u64,
    /// T_max expirations.
    pub timeouts: u64,
    /// T_max expirations of seeky applications, overcharged B_i,max.
    pub overcharged: u64,
    /// Requests injected while the active application idled.
    pub injected: u64,
    /// Weight raisings started (low latency).
    pub wr_started: u64,
    /// Active applications expired because a higher class, or a raised
    /// application of their class, became backlogged, a raised one became
    /// eligible again, or a limited one came back.
    pub preempted: u64,
    /// Weight raisings not started because the raised weight would take
    /// the weight sum beyond [`MAX_WEIGHT_SUM`].
    pub wr_skipped: u64,
    /// Requests dispatched in dmClock's reservation phase.
    pub reserved: u64,
    /// Turns ended, or applications held back, by their dmClock limit.
    pub limited: u64,
}

/// The BFQ scheduler.
pub struct Bfq {
    cfg: BfqConfig,
    apps: Vec<AppState>,
    /// One hierarchical B-WF2Q+ per priority class (RT, BE, IDLE), each
    /// with its own virtual times and weight sums, as the kernel's
    /// per-class trees; the groups are the same in all three.
    engines: [HierWf2q; 3],
    /// The declared groups (index 0, the root, always).
    groups: Vec<groups::GroupState>,
    /// Applications with a reservation.
    reserved: Vec<u32>,
    /// Groups with a reservation.
    reserved_groups: Vec<u32>,
    /// Groups with a limit.
    limited_groups: Vec<u32>,
    /// The latest instant a call passed in (for the limit check of a
    /// deactivation).
    clock: Nanos,
    /// Backlogged applications held back by their limit, out of B-WF2Q+.
    parked: Vec<u32>,
    /// Last dispatch or completion of a real-time or best-effort request.
    hi_last: Nanos,
    /// Real-time and best-effort requests in service.
    hi_in_flight: u32,
    /// Requests dispatched and not completed, every application's
    /// (Σ `in_service`).
    in_flight: u32,

    active: Option<Active>,
    head: u64,
    queued: usize,
    /// Σ of the weights B-WF2Q+ uses (raised ones included).
    weight_sum: u64,
    /// Σ of the admitted weights.
    base_weight_sum: u64,
    /// Estimated rate in sectors per second (0 = none yet).
    rate: u64,
    /// Applications whose weight is raised.
    raised: Vec<u32>,
    /// Earliest `wr_until` among `raised` (`Nanos::MAX`: none).
    wr_next_end: Nanos,
    /// Injected requests in flight: (application, first sector).
    injected_in_flight: Vec<(u32, u64)>,
    /// The device has no seek cost (flash): see [`Bfq::worth_idling`].
    nonrot: bool,
    stats: BfqStats,
    #[cfg(feature = "test-support")]
    fault: BfqFault,
}

impl Bfq {
    /// BFQ with a validated configuration.
    pub fn new(cfg: BfqConfig) -> Result<Self, DiskConfigError> {
        cfg.validate()?;
        let mut apps = Vec::with_capacity(cfg.max_apps as usize);
        apps.resize_with(cfg.max_apps as usize, AppState::default);
        Ok(Self {
            cfg,
            apps,
            engines: [0; 3].map(|_| HierWf2q::new(cfg.max_apps)),
            groups: groups::GroupState::root(),
            reserved: Vec::new(),
            reserved_groups: Vec::new(),
            limited_groups: Vec::new(),
            clock: 0,
            parked: Vec::new(),
            hi_last: 0,
            hi_in_flight: 0,
            in_flight: 0,
            active: None,
            head: 0,
            queued: 0,
            weight_sum: 0,
            base_weight_sum: 0,
            rate: 0,
            raised: Vec::new(),
            wr_next_end: Nanos::MAX,
            injected_in_flight: Vec::new(),
            nonrot: false,
            stats: BfqStats::default(),
            #[cfg(feature = "test-support")]
            fault: BfqFault::None,
        })
    }

    /// A deliberately broken BFQ (see [`BfqFault`]), for tests only.
    #[cfg(feature = "test-support")]
    pub fn with_fault(cfg: BfqConfig, fault: BfqFault) -> Result<Self, DiskConfigError> {
        let mut b = Self::new(cfg)?;
        b.fault = fault;
        Ok(b)
    }

    /// Re-inserts a deactivated application at `max(V, F)` (the
    /// `BfqFault::NoBackshift` fault of the tests).
    #[cfg(feature = "test-support")]
    fn skips_backshift(&self) -> bool {
        self.fault == BfqFault::NoBackshift
    }

    /// Ends the idling wait on another application's request (the
    /// `BfqFault::ServeWhileIdling` fault of the tests).
    #[cfg(feature = "test-support")]
    fn serves_while_idling(&self) -> bool {
        self.fault == BfqFault::ServeWhileIdling
    }

    /// Never idles (the `BfqFault::NoIdling` fault of the tests).
    #[cfg(feature = "test-support")]
    fn never_idles(&self) -> bool {
        self.fault == BfqFault::NoIdling
    }

    /// Counts only the asking application's requests in flight against
    /// the warm depth (the `BfqFault::WarmDepthPerApp` fault of the tests).
    #[cfg(feature = "test-support")]
    fn warm_depth_per_app(&self) -> bool {
        self.fault == BfqFault::WarmDepthPerApp
    }

    /// Holds while a raised application is raised, warm or not (the
    /// `BfqFault::HoldWhileRaised` fault of the tests).
    #[cfg(feature = "test-support")]
    fn holds_while_raised(&self) -> bool {
        self.fault == BfqFault::HoldWhileRaised
    }

    /// Dispatches whole requests while a raised application is warm (the
    /// `BfqFault::WholeWhileWarm` fault of the tests).
    #[cfg(feature = "test-support")]
    fn whole_while_warm(&self) -> bool {
        self.fault == BfqFault::WholeWhileWarm
    }

    // Without the `test-support` feature there are no faults: the checks
    // are constant and compile away.
    #[cfg(not(feature = "test-support"))]
    fn whole_while_warm(&self) -> bool {
        false
    }

    #[cfg(not(feature = "test-support"))]
    fn warm_depth_per_app(&self) -> bool {
        false
    }

    #[cfg(not(feature = "test-support"))]
    fn holds_while_raised(&self) -> bool {
        false
    }

    #[cfg(not(feature = "test-support"))]
    fn skips_backshift(&self) -> bool {
        false
    }

    #[cfg(not(feature = "test-support"))]
    fn serves_while_idling(&self) -> bool {
        false
    }

    #[cfg(not(feature = "test-support"))]
    fn never_idles(&self) -> bool {
        false
    }

    /// Declares the device non-rotational (no seek cost) or not (the
    /// default, the thesis' rotating disk). On a non-rotational device BFQ
    /// does not idle for a *seeky* application (more than [`SEEKY_MIN`] of
    /// its last 32 requests start over [`SEEK_DISTANCE`] sectors from
    /// where its previous one ended) unless its weight is raised or idling
    /// is needed for a guarantee (nobody else waiting, or another
    /// priority class waiting), as the kernel's BFQ decides.
    pub fn set_nonrotational(&mut self, nonrot: bool) {
        self.nonrot = nonrot;
    }

    /// The configuration.
    pub fn config(&self) -> &BfqConfig {
        &self.cfg
    }

    /// Event counters.
    pub fn stats(&self) -> BfqStats {
        self.stats
    }

    /// The active application and, if it is idling with the timer armed,
    /// the timer's deadline.
    pub fn active(&self) -> Option<(AppId, Option<Nanos>)> {
        self.active.map(|a| {
            let until = match a.idling {
                Idling::Until(t) => Some(t),
                _ => None,
            };
            (AppId(a.app), until)
        })
    }

    /// The current budget of `app`, sectors.
    pub fn budget(&self, app: AppId) -> Option<u32> {
        self.apps
            .get(app.index())
            .filter(|a| a.configured)
            .map(|a| a.budget)
    }

    /// The current T_max, if any.
    pub fn t_max(&self) -> Option<Nanos> {
        match self.cfg.t_max {
            TimeBudget::Off => None,
            TimeBudget::Fixed(t) => Some(t),
            TimeBudget::Auto => (self.rate > 0).then(|| {
                let t =
                    u128::from(self.cfg.max_budget) * 4_000_000_000 / (3 * u128::from(self.rate));
                t.min(u128::from(u64::MAX)) as u64
            }),
        }
    }

    /// How long a weight raising lasts: the time to transfer
    /// [`WR_REF_SECTORS`] at the estimated rate, within
    /// [`WR_MIN_DURATION`]..=[`WR_MAX_DURATION`]; [`WR_MIN_DURATION`]
    /// before the first estimate.
    pub fn wr_duration(&self) -> Nanos {
        if self.rate == 0 {
            return WR_MIN_DURATION;
        }
        let d = u128::from(WR_REF_SECTORS) * 1_000_000_000 / u128::from(self.rate);
        (d.min(u128::from(WR_MAX_DURATION)) as Nanos).max(WR_MIN_DURATION)
    }

    /// Whether `app`'s weight is raised, and until when.
    pub fn raised_until(&self, app: AppId) -> Option<Nanos> {
        self.apps
            .get(app.index())
            .filter(|a| a.configured && a.cur_weight > a.weight)
            .map(|a| a.wr_until)
    }

    /// Starts (or restarts) `app`'s weight raising at `now` if low latency
    /// is on and the application has been idle for [`WR_MIN_IDLE`]. A newly
    /// admitted application has no completion yet and is not raised:
    /// `add_app` carries no time to measure its idleness from, and
    /// applications admitted together would all be raised, which changes
    /// nothing but their weight sum.
    fn maybe_raise(&mut self, app: u32, now: Nanos) {
        if !self.cfg.low_latency {
            return;
        }
        let st = &self.apps[app as usize];
        let idle_long = st.in_service == 0
            && st
                .last_completion
                .is_some_and(|c| now.saturating_sub(c) >= WR_MIN_IDLE);
        if !idle_long {
            return;
        }
        let raised = u64::from(st.weight) * u64::from(WR_COEFF);
        let sum = self.weight_sum - u64::from(st.cur_weight) + raised;
        // Beyond 2^24 the virtual times lose exactness (see MAX_WEIGHT_SUM).
        if sum > MAX_WEIGHT_SUM {
            self.stats.wr_skipped += 1;
            return;
        }
        let until = now.saturating_add(self.wr_duration());
        let st = &mut self.apps[app as usize];
        if st.cur_weight == st.weight {
            self.raised.push(app);
        }
        // `raised` fits in u32: it is at most 65536 · 30.
        let (class, old) = (st.class, st.cur_weight);
        st.cur_weight = raised as u32;
        st.wr_until = until;
        self.reweigh(app, class, old, raised as u32);
        self.wr_next_end = self.wr_next_end.min(until);
        self.stats.wr_started += 1;
    }

    /// Ends every weight raising due by `now`.
    fn end_raisings(&mut self, now: Nanos) {
        if now < self.wr_next_end {
            return;
        }
        let mut next = Nanos::MAX;
        let mut i = 0;
        while i < self.raised.len() {
            let app = self.raised[i] as usize;
            let st = &mut self.apps[app];
            if st.wr_until <= now {
                let (class, old, w) = (st.class, st.cur_weight, st.weight);
                st.cur_weight = w;
                self.reweigh(app as u32, class, old, w);
                self.raised.swap_remove(i);
            } else {
                next = next.min(st.wr_until);
                i += 1;
            }
        }
        self.wr_next_end = next;
    }

    /// Application `app` of `class` goes from weight `old` to `new` in the
    /// weight sums (raising and its end).
    fn reweigh(&mut self, app: u32, class: usize, old: u32, new: u32) {
        self.weight_sum = self.weight_sum - u64::from(old) + u64::from(new);
        self.engines[class].reweigh(app, old, new);
    }

    /// The B-WF2Q+ of `app`'s class.
    fn engine(&mut self, app: u32) -> &mut HierWf2q {
        &mut self.engines[self.apps[app as usize].class]
    }

    /// The highest class with an application queued in B-WF2Q+ and the
    /// application it would serve next; an IDLE-class one only after
    /// [`IDLE_GRACE`] without real-time or best-effort work; otherwise
    /// what the disk should do meanwhile.
    fn peek_class(&mut self, now: Nanos) -> Result<(usize, u32), Dispatch> {
        for c in 0..2 {
            if let Some(a) = self.engines[c].peek_next() {
                return Ok((c, a));
            }
        }
        let Some(a) = self.engines[2].peek_next() else {
            return Err(Dispatch::Empty);
        };
        if self.hi_in_flight > 0 {
            // The grace period starts at that request's completion.
            return Err(Dispatch::Idle(None));
        }
        let ready = self.hi_last.saturating_add(IDLE_GRACE);
        if now < ready {
            return Err(Dispatch::Idle(Some(ready)));
        }
        Ok((2, a))
    }

    /// A newly backlogged application of `class` preempts an active
    /// application of a lower class (the kernel's preemption): the active
    /// one is expired, charged what it consumed, and keeps its backlog
    /// queued.
    fn preempt_lower(&mut self, class: usize) {
        let Some(a) = self.active else { return };
        let st = &self.apps[a.app as usize];
        if st.class <= class {
            return;
        }
        self.preempt_active();
    }

    /// Ends the active application's turn for another's sake (counted in
    /// [`BfqStats::preempted`]): charged what it consumed, its budget
    /// kept, re-inserted back-shifted if backlogged.
    pub(super) fn preempt_active(&mut self) {
        let Some(a) = self.active else { return };
        let budget = self.apps[a.app as usize].budget;
        self.stats.preempted += 1;
        self.deactivate(budget - a.remaining, budget);
    }

    /// A newly backlogged application `app` whose weight is raised ends
    /// the turn of an active application of its class that is not raised
    /// (the kernel's BFQ preempts for a queue of higher weight becoming
    /// busy): an interactive task starting does not wait for a greedy
    /// application's whole budget. The preempted application is charged
    /// what it consumed and, if backlogged, re-inserted back-shifted
    /// (`S = F`), so it loses nothing of its share; B-WF2Q+ then chooses,
    /// and the raised weight puts the newcomer first.
    fn preempt_for_raised(&mut self, app: u32) {
        let Some(a) = self.active else { return };
        let (new, cur) = (&self.apps[app as usize], &self.apps[a.app as usize]);
        if new.cur_weight == new.weight || cur.cur_weight > cur.weight || new.class != cur.class {
            return;
        }
        self.preempt_active();
    }

    /// A raised application that has become eligible, and is the eligible
    /// one B-WF2Q+ would serve first, ends the turn of the
    /// active application of its class that is not raised, once that one
    /// has been served something in its turn. A raised application that
    /// used up its budget with requests left is re-inserted back-shifted
    /// (`S = F`) and waits to become eligible; with its raised weight that
    /// takes a small part of its budget of the others' service, but the
    /// greedy application chosen meanwhile would keep the device for its
    /// whole budget. So, as in [`Bfq::preempt_for_raised`], the greedy
    /// one's turn ends: charged what it consumed, it loses nothing of its
    /// share. An application chosen while the raised one was already
    /// eligible (B-WF2Q+ put it first) serves at least one request, so
    /// that choice is not undone before it has made progress. Returns
    /// whether it preempted.
    fn preempt_for_next_raised(&mut self) -> bool {
        let Some(a) = self.active else { return false };
        let st = &self.apps[a.app as usize];
        let class = st.class;
        if st.budget == a.remaining || st.cur_weight > st.weight || !self.raised_queued(class) {
            return false;
        }
        let Some(next) = self.engines[class].peek_eligible() else {
            return false;
        };
        let n = &self.apps[next as usize];
        if n.cur_weight == n.weight {
            return false;
        }
        self.preempt_active();
        true
    }

    /// Whether a raised application of `class` has requests queued.
    fn raised_queued(&self, class: usize) -> bool {
        self.raised.iter().any(|&r| {
            let st = &self.apps[r as usize];
            st.class == class && !st.queue.is_empty()
        })
    }

    /// Requests in flight of the applications that are not raised.
    pub fn greedy_in_flight(&self) -> u32 {
        let raised: u32 = self
            .raised
            .iter()
            .map(|&r| self.apps[r as usize].in_service)
            .sum();
        self.in_flight.saturating_sub(raised)
    }

    /// Whether a raised application of `class` or a higher one is warm at
    /// `now`: requests queued or in flight, or its last completion less
    /// than T_wait ago (its next request is then likely on its way: a
    /// thread's round trip, or the next process of a starting task).
    pub fn raised_warm(&self, class: usize, now: Nanos) -> bool {
        self.raised_warm_within(class, now, self.cfg.t_wait)
    }

    /// [`Bfq::raised_warm`] with the last completion less than `window`
    /// ago instead of T_wait.
    fn raised_warm_within(&self, class: usize, now: Nanos, window: Nanos) -> bool {
        let t_wait = window;
        self.raised.iter().any(|&r| {
            let w = &self.apps[r as usize];
            w.class <= class
                && (!w.queue.is_empty()
                    || w.in_service > 0
                    || w.last_completion
                        .is_some_and(|c| now.saturating_sub(c) < t_wait))
        })
    }

    /// Whether a request of `app` must wait for a completion: `app` is
    /// not raised, a raised application of its class or a higher one is
    /// warm, and the applications that are not raised already have
    /// [`BfqConfig::warm_depth`] requests in flight (the adaptive device
    /// bound's small end).
    fn held_for_raised(&self, app: u32, now: Nanos) -> bool {
        let st = &self.apps[app as usize];
        if st.cur_weight > st.weight || self.raised.is_empty() {
            return false;
        }
        let greedy = if self.warm_depth_per_app() {
            st.in_service
        } else {
            self.greedy_in_flight()
        };
        greedy >= self.cfg.warm_depth
            && (self.raised_warm(st.class, now) || self.holds_while_raised())
    }

    /// The largest piece of a request of `app` that may leave its queue at
    /// `now` (0: the whole request): [`WARM_PIECE`] while `app` is not
    /// raised and a raised application of its class or a higher one is
    /// warm or was less than [`WARM_PIECE_WINDOW`] ago.
    fn warm_piece(&self, app: u32, now: Nanos) -> u32 {
        let st = &self.apps[app as usize];
        let window = WARM_PIECE_WINDOW.max(self.cfg.t_wait);
        if self.raised.is_empty()
            || st.cur_weight > st.weight
            || self.whole_while_warm()
            || !self.raised_warm_within(st.class, now, window)
        {
            0
        } else {
            WARM_PIECE
        }
    }

    /// Bookkeeping of a dispatch from `class` at `now`, for the IDLE
    /// class's grace period.
    fn note_dispatch(&mut self, class: usize, now: Nanos) {
        if class < 2 {
            self.hi_in_flight += 1;
            self.hi_last = now;
        }
    }

    /// The injection limit of the active application (1 when there is
    /// none).
    pub fn inject_limit(&self) -> u32 {
        self.active
            .map_or(1, |a| self.apps[a.app as usize].inject_limit.max(1))
    }

    /// I/O injection (the kernel's, while idling): the next request of the
    /// application B-WF2Q+ would serve next, if injection is on, the
    /// requests in flight — the active application's and the injected
    /// ones, as the kernel counts those in the drive — are fewer than the
    /// active application's limit, and it fits what is left of that
    /// application's budget; its sectors are deducted from that budget
    /// when its turn comes, so its share is unchanged.
    ///
    /// It is tried while the active application idles for its next
    /// request and, as in the kernel, while its last request is still in
    /// flight with the device able to take more (limit 2 or more): on a
    /// device that serves several requests at once, that is where the
    /// other applications' throughput comes from.
    fn inject(&mut self, now: Nanos) -> Option<Request> {
        let a = self.active?;
        let act = &self.apps[a.app as usize];
        let in_flight = self.injected_in_flight.len() + act.in_service as usize;
        if !self.cfg.inject || in_flight >= act.inject_limit.max(1) as usize {
            return None;
        }
        let (_, j) = self.peek_class(now).ok()?;
        if self.held_for_raised(j, now) {
            return None;
        }
        let (head, t_fifo) = (self.head, Some(self.cfg.t_fifo));
        let piece = self.warm_piece(j, now);
        let st = &mut self.apps[j as usize];
        let room = st.budget.saturating_sub(st.injected);
        let before = st.queue.len();
        let req = st.queue.pop_piece_within(head, now, t_fifo, room, piece);
        let req = req.ok()?;
        st.injected += req.len;
        st.in_service += 1;
        self.in_flight += 1;
        let class = st.class;
        // A piece leaves the rest of its request queued.
        self.queued -= before - st.queue.len();
        self.head = req.end();
        self.note_dispatch(class, now);
        self.engines[class].add_service(j, req.len);
        self.charge_tags(j, req.len, now);
        self.stats.dispatched += 1;
        self.stats.injected += 1;
        self.injected_in_flight.push((j, req.sector));
        if let Some(a) = &mut self.active {
            // Its request in flight now shares the device.
            a.with_injection |= a.idling == Idling::AwaitCompletion;
        }
        Some(req)
    }

    /// Adapts the injection limit from the service time (arrival to
    /// completion) of the active application's request, as the kernel's
    /// BFQ does, per application: a request served without injection in
    /// flight sets its base; one served with injection lowers its limit if
    /// it took at least 3/2 of the base (injection delayed it too much) and
    /// raises it otherwise. The idling application's service time so
    /// stays within 3/2 of what it is alone, give or take one step of the
    /// limit.
    fn adapt_inject_limit(&mut self, service: Nanos) {
        let Some(a) = self.active else { return };
        let st = &mut self.apps[a.app as usize];
        let limit = st.inject_limit.max(1);
        if !a.with_injection || st.base_service == 0 {
            st.base_service = service;
        } else if service.saturating_mul(2) >= st.base_service.saturating_mul(3) {
            st.inject_limit = (limit - 1).max(1);
        } else {
            st.inject_limit = (limit + 1).min(INJECT_MAX_LIMIT);
        }
    }

    fn app_mut(&mut self, app: AppId) -> Result<&mut AppState, DiskConfigError> {
        self.apps
            .get_mut(app.index())
            .filter(|a| a.configured)
            .ok_or(DiskConfigError::UnknownApp(app))
    }

    /// Deactivation of the active application; `charge` is what it pays,
    /// `requeue_budget` its next budget if it is to be re-inserted.
    fn deactivate(&mut self, charge: u32, next_budget: u32) {
        let Some(a) = self.active.take() else { return };
        let skip_backshift = self.skips_backshift();
        let st = &mut self.apps[a.app as usize];
        st.budget = next_budget;
        let (w, backlogged) = (st.cur_weight, !st.queue.is_empty());
        let requeue =
            (backlogged && !self.over_limit(a.app)).then_some((next_budget, !skip_backshift));
        self.engine(a.app).deactivate(a.app, charge, w, requeue);
        if backlogged && requeue.is_none() {
            self.park(a.app);
        }
    }

    /// Budget exhausted with backlog (Fig. 3 lines 27–36).
    fn expire_exhausted(&mut self, now: Nanos, next_len: u32) {
        let Some(a) = self.active else { return };
        let st = &self.apps[a.app as usize];
        let served = st.budget - a.remaining;
        let mut next = st.budget;
        if next.saturating_add(self.cfg.budget_step) <= st.max_budget {
            next += self.cfg.budget_step;
        }
        next = next.max(next_len);
        if served > 0 && served == st.budget {
            let elapsed = now.saturating_sub(a.since).max(1);
            let r = (u128::from(served) * 1_000_000_000 / u128::from(elapsed)) as u64;
            self.rate = if self.rate == 0 {
                r
            } else {
                self.rate - self.rate / 8 + r / 8
            };
        }
        self.stats.exhausted += 1;
        self.deactivate(served, next);
    }

    /// Idling timer expired (Fig. 3 lines 57–65).
    fn expire_idle(&mut self) {
        self.expire_idle_counted(true);
    }

    /// The application is deemed idle: its budget becomes what it consumed
    /// and it is charged that; `timer` says whether an idling timer ran out
    /// (counted in [`BfqStats::idle_expired`]).
    fn expire_idle_counted(&mut self, timer: bool) {
        let Some(a) = self.active else { return };
        let served = self.apps[a.app as usize].budget - a.remaining;
        if timer {
            self.stats.idle_expired += 1;
        }
        self.deactivate(served, served);
    }

    /// Whether to keep the disk idle for the active application `app`,
    /// whose queue has just emptied on a synchronous request, until its
    /// next request (the kernel BFQ's rule, `bfq_better_to_idle`, in this
    /// BFQ's terms). Idling is worth it when nobody else has requests
    /// queued (it delays nobody), or another priority class has (skipping
    /// it would hand the device across classes out of turn), and
    /// otherwise:
    ///
    /// * for a *raised* application, when some application waiting is not
    ///   raised: idling keeps the device from it, which is what raising
    ///   (an interactive task's latency) is for. When all those waiting are
    ///   raised too — typically the other processes of the same starting
    ///   task — idling would only make them wait.
    /// * for any other, when it raises throughput and no raised
    ///   application waits (whose latency would pay for it). It raises
    ///   throughput on a rotating disk (the thesis' model), or when the
    ///   application is sequential (not [`seeky`]): its next request is
    ///   cheaper than another's. On a device without seek cost
    ///   ([`Bfq::set_nonrotational`]) a seeky application's is not.
    ///
    /// Weights that differ within a class are not looked at: BFQ charges
    /// every application its sectors whether or not it idled, so a seeky
    /// application served without idling still gets its share of sectors.
    fn worth_idling(&self, app: u32) -> bool {
        let st = &self.apps[app as usize];
        let class = st.class;
        let other_class =
            (0..self.engines.len()).any(|c| c != class && !self.engines[c].is_empty());
        if self.queued == 0 || other_class {
            return true;
        }
        // Every application waiting is in `class`'s B-WF2Q+.
        let raised_waiting = self
            .raised
            .iter()
            .filter(|&&r| r != app && !self.apps[r as usize].queue.is_empty())
            .count();
        if st.cur_weight > st.weight {
            return self.engines[class].len() > raised_waiting;
        }
        let throughput = !self.nonrot || !seeky(st);
        throughput && raised_waiting == 0
    }

    /// T_max exceeded (§2.1.1): deactivated, and overcharged B_i,max if it
    /// is *seeky*, i.e. it consumed less than 2/3 of its budget in T_max
    /// (the criterion Linux's BFQ uses). An application that merely reads a
    /// slower zone a bit below the estimated rate is charged what it got,
    /// or fairness between sequential readers in different zones would be
    /// lost.
    fn expire_timeout(&mut self) {
        let Some(a) = self.active else { return };
        let st = &self.apps[a.app as usize];
        let (max, budget) = (st.max_budget, st.budget);
        self.stats.timeouts += 1;
        if a.remaining >= budget / 3 {
            self.stats.overcharged += 1;
            self.deactivate(max, budget);
        } else {
            self.deactivate(budget - a.remaining, budget);
        }
    }
}

/// Records in `st`'s seek history whether `req` starts more than
/// [`SEEK_DISTANCE`] from where the application's previous request ended.
fn note_position(st: &mut AppState, req: &Request) {
    let far = req.sector.abs_diff(st.last_end) > SEEK_DISTANCE;
    st.seek_history = (st.seek_history << 1) | u32::from(far);
    st.last_end = req.end();
}

/// Whether more than [`SEEKY_MIN`] of the application's last 32 requests
/// were seeks.
fn seeky(st: &AppState) -> bool {
    st.seek_history.count_ones() > SEEKY_MIN
}

impl DiskScheduler for Bfq {
    fn name(&self) -> &'static str {
        "bfq"
    }

    fn set_nonrotational(&mut self, nonrot: bool) {
        Bfq::set_nonrotational(self, nonrot);
    }

    fn add_group(&mut self, group: u32, parent: u32, weight: u32) -> Result<(), DiskConfigError> {
        self.declare_group(group, parent, weight)
    }

    fn remove_group(&mut self, group: u32) -> Result<(), DiskConfigError> {
        self.forget_group(group)
    }

    fn set_group_rates(
        &mut self,
        group: u32,
        reservation: Option<Rate>,
        limit: Option<Rate>,
    ) -> Result<(), DiskConfigError> {
        self.set_rates_of_group(group, reservation, limit)
    }

    fn add_app(&mut self, app: AppId, spec: AppSpec) -> Result<(), DiskConfigError> {
        let max_apps = self.cfg.max_apps;
        let st = self
            .apps
            .get(app.index())
            .ok_or(DiskConfigError::AppIdTooLarge { app, max_apps })?;
        if st.configured {
            return Err(DiskConfigError::AppExists(app));
        }
        check_range("weight", spec.weight, 1, MAX_WEIGHT, "1..=65536")?;
        self.check_group(spec.group)?;
        crate::dmclock::validate(spec.reservation, spec.limit)?;
        let max_budget = match spec.max_budget {
            None => self.cfg.max_budget,
            Some(b) => check_range(
                "app-max-budget",
                b,
                self.cfg.l_max,
                self.cfg.max_budget,
                "L_max..=B_max sectors",
            )?,
        };
        // Admission counts the admitted weights: a raising in progress must
        // not refuse an application (a raising that would overflow the sum
        // is skipped instead).
        let sum = self.base_weight_sum + u64::from(spec.weight);
        if sum > MAX_WEIGHT_SUM {
            return Err(DiskConfigError::WeightSumTooLarge {
                sum,
                max: MAX_WEIGHT_SUM,
            });
        }
        self.base_weight_sum = sum;
        self.weight_sum += u64::from(spec.weight);
        // A removed application's requests still in flight are no longer
        // counted once its slot is reused (their completions find 0).
        self.in_flight = self
            .in_flight
            .saturating_sub(self.apps[app.index()].in_service);
        let class = spec.class.index();
        self.engines[class].admit(app.0, spec.group, spec.weight);
        self.groups[spec.group as usize].members += 1;
        if spec.reservation.is_some() {
            self.reserved.push(app.0);
        }
        self.apps[app.index()] = AppState {
            configured: true,
            weight: spec.weight,
            cur_weight: spec.weight,
            wr_until: 0,
            last_completion: None,
            in_service: 0,
            injected: 0,
            inject_limit: 1,
            base_service: 0,
            class: spec.class.index(),
            max_budget,
            budget: self.cfg.default_budget.min(max_budget),
            queue: RequestQueue::new(),
            seek_history: 0,
            last_end: 0,
            group: spec.group,
            dm: DmTags::new(spec.reservation, spec.limit),
            gres_tag: 0,
        };
        Ok(())
    }

    fn remove_app(&mut self, app: AppId) -> Result<Vec<Request>, DiskConfigError> {
        self.app_mut(app)?;
        if self.active.is_some_and(|a| a.app == app.0) {
            self.expire_idle();
        }
        let st = &mut self.apps[app.index()];
        let reqs = st.queue.drain();
        st.configured = false;
        st.injected = 0;
        let (class, cur, w, group) = (st.class, st.cur_weight, st.weight, st.group);
        self.engines[class].leave(app.0, cur);
        self.weight_sum -= u64::from(cur);
        self.groups[group as usize].members -= 1;
        self.reserved.retain(|&a| a != app.0);
        self.parked.retain(|&a| a != app.0);
        self.base_weight_sum -= u64::from(w);
        self.raised.retain(|&a| a != app.0);
        self.queued -= reqs.len();
        Ok(reqs)
    }

    fn add_request(&mut self, now: Nanos, mut req: Request) -> Result<(), AddError> {
        let fail = |kind| Err(AddError { kind, request: req });
        if !self.apps.get(req.app.index()).is_some_and(|a| a.configured) {
            return fail(AddErrorKind::UnknownApp);
        };
        if req.len == 0 {
            return fail(AddErrorKind::ZeroLength);
        }
        if req.len > self.cfg.l_max {
            return fail(AddErrorKind::TooLong {
                len: req.len,
                max: self.cfg.l_max,
            });
        }
        if self.queued >= self.cfg.max_queued {
            return fail(AddErrorKind::Full {
                capacity: self.cfg.max_queued,
            });
        }
        if self.serves_while_idling() {
            if let Some(a) = self.active.as_mut().filter(|a| a.app != req.app.0) {
                if let Idling::Until(_) = a.idling {
                    a.idling = Idling::Until(now);
                }
            }
        }
        let st = &self.apps[req.app.index()];
        let was_empty = st.queue.is_empty();
        req.arrival = now;
        let i = req.app.0;
        self.queued += 1;
        let st = &mut self.apps[i as usize];
        note_position(st, &req);
        st.queue.push(req);
        if !was_empty {
            return Ok(());
        }
        if st.in_service == 0 {
            // Idle (nothing queued, nothing in service): no credit for
            // the time it did not ask for service. A request joining while
            // the previous one is in service (the engine hands a client's
            // synchronous requests over one at a time) keeps the tags.
            self.note_backlogged(i, now);
        }
        self.clock = now;
        match &mut self.active {
            Some(a) if a.app == i => {
                if matches!(a.idling, Idling::Until(_)) {
                    self.stats.idle_hits += 1;
                }
                a.idling = Idling::No;
                a.with_injection = !self.injected_in_flight.is_empty();
            }
            _ => {
                if self.over_limit_at(i, now) {
                    self.park(i);
                } else if !self.engine(i).contains(i) {
                    let st = &mut self.apps[i as usize];
                    st.budget = st.budget.max(req.len);
                    self.maybe_raise(i, now);
                    let st = &self.apps[i as usize];
                    let (budget, w, class) = (st.budget, st.cur_weight, st.class);
                    self.engines[class].insert_arrival(i, budget, w);
                    self.preempt_lower(class);
                    self.preempt_for_raised(i);
                }
            }
        }
        Ok(())
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.end_raisings(now);
        self.clock = now;
        self.unpark(now);
        if let Some(req) = self.reservation_phase(now) {
            return Dispatch::Serve(req);
        }
        let d = self.dispatch_bfq(now);
        self.with_qos_wake(d, now)
    }

    fn complete(&mut self, now: Nanos, req: &Request) {
        self.clock = now;
        self.complete_bfq(now, req);
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn drain(&mut self) -> Vec<Request> {
        let mut out = Vec::with_capacity(self.queued);
        for st in &mut self.apps {
            out.extend(st.queue.drain());
            st.injected = 0;
        }
        self.queued = 0;
        self.active = None;
        self.parked.clear();
        for e in &mut self.engines {
            e.clear();
        }
        out
    }
}

impl Bfq {
    /// BFQ's own choice (Fig. 3), after the reservation phase.
    fn dispatch_bfq(&mut self, now: Nanos) -> Dispatch {
        loop {
            if let Some(a) = self.active {
                match a.idling {
                    Idling::Until(t) if now < t => {
                        return match self.inject(now) {
                            Some(req) => Dispatch::Serve(req),
                            None => Dispatch::Idle(Some(t)),
                        }
                    }
                    Idling::Until(_) => {
                        self.expire_idle();
                        continue;
                    }
                    Idling::AwaitCompletion => {
                        return match self.inject(now) {
                            Some(req) => Dispatch::Serve(req),
                            None => Dispatch::Idle(None),
                        }
                    }
                    Idling::No => {}
                }
                if self
                    .t_max()
                    .is_some_and(|t| now.saturating_sub(a.since) > t)
                {
                    self.expire_timeout();
                    continue;
                }
                if self.over_limit_at(a.app, now) {
                    self.expire_limited();
                    continue;
                }
                if self.preempt_for_next_raised() {
                    continue;
                }
                if self.held_for_raised(a.app, now) {
                    return Dispatch::Idle(None);
                }
                let head = self.head;
                let t_fifo = Some(self.cfg.t_fifo);
                let piece = self.warm_piece(a.app, now);
                let st = &mut self.apps[a.app as usize];
                let before = st.queue.len();
                let req = match st
                    .queue
                    .pop_piece_within(head, now, t_fifo, a.remaining, piece)
                {
                    Ok(r) => r,
                    Err(Some(len)) => {
                        self.expire_exhausted(now, len);
                        continue;
                    }
                    Err(None) => {
                        // Unreachable by construction (a serving active
                        // application is backlogged); recover by expiring it.
                        self.expire_idle();
                        continue;
                    }
                };
                let empty = st.queue.is_empty();
                st.in_service += 1;
                self.in_flight += 1;
                self.queued -= before - st.queue.len();
                self.head = req.end();
                let class = self.apps[a.app as usize].class;
                self.note_dispatch(class, now);
                self.engines[class].add_service(a.app, req.len);
                self.charge_tags(a.app, req.len, now);
                self.stats.dispatched += 1;
                if let Some(a) = &mut self.active {
                    a.remaining -= req.len;
                    if empty {
                        a.idling = Idling::AwaitCompletion;
                    }
                }
                if empty && !req.sync {
                    // Nobody waits for an asynchronous request's
                    // completion to issue the next one: idling would only
                    // hold the disk (the kernel idles for sync queues only).
                    self.stats.async_expired += 1;
                    self.expire_idle_counted(false);
                } else if empty && !self.worth_idling(a.app) {
                    self.expire_idle_counted(false);
                }
                return Dispatch::Serve(req);
            }
            let app = match self.peek_class(now) {
                Ok((c, _)) => self.engines[c].next_application(),
                Err(d) => return d,
            };
            let Some(app) = app else {
                return Dispatch::Empty;
            };
            let st = &mut self.apps[app as usize];
            let pre = std::mem::take(&mut st.injected);
            let budget = st.budget;
            // Served ahead of its turn (injection, the reservation phase)
            // beyond a whole budget: charged that budget now and the rest
            // carried, so its weighted share counts everything it got.
            st.injected = pre.saturating_sub(budget);
            self.active = Some(Active {
                app,
                remaining: budget.saturating_sub(pre),
                since: now,
                idling: Idling::No,
                with_injection: false,
            });
            if pre >= budget {
                self.deactivate(budget, budget);
            }
        }
    }

    fn complete_bfq(&mut self, now: Nanos, req: &Request) {
        let never_idles = self.never_idles();
        let t_wait = self.cfg.t_wait;
        if let Some(st) = self.apps.get_mut(req.app.index()) {
            if st.in_service > 0 {
                self.in_flight -= 1;
            }
            st.in_service = st.in_service.saturating_sub(1);
            st.last_completion = Some(now);
            if st.class < 2 {
                self.hi_in_flight = self.hi_in_flight.saturating_sub(1);
                self.hi_last = now;
            }
        }
        if let Some(i) = self
            .injected_in_flight
            .iter()
            .position(|&(a, s)| a == req.app.0 && s == req.sector)
        {
            self.injected_in_flight.swap_remove(i);
        } else if self.active.is_some_and(|a| a.app == req.app.0) {
            self.adapt_inject_limit(now.saturating_sub(req.arrival));
            if let Some(a) = &mut self.active {
                a.with_injection = false;
            }
        }
        if let Some(a) = &mut self.active {
            if a.app == req.app.0 && a.idling == Idling::AwaitCompletion {
                if never_idles || t_wait == 0 {
                    self.expire_idle();
                } else {
                    a.idling = Idling::Until(now.saturating_add(t_wait));
                }
            }
        }
    }
}
