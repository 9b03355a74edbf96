//! Online checks of BFQ's guarantees over a simulated run (the BFQ thesis
//! §2.2), fed with the simulator's [`SimEvent`]s.
//!
//! * [`ServiceLagCheck`]: Theorem 2.1. For every interval [t1, t2] during
//!   which application i is continuously *quasi-backlogged* (it has
//!   requests issued and not completed, or its last one completed no more
//!   than T_wait ago), `φ_i·W(t1,t2) − W_i(t1,t2) ≤ B_max + B_i,max + L_max`.
//!   Service is counted when a request is dispatched (the instant V
//!   advances). The worst interval is found in one pass: for each
//!   quasi-backlogged period, `g = φ_i·W − W_i` is tracked and the largest
//!   rise of g over its running minimum is the worst lag.
//! * [`IdlingCheck`]: while the scheduler idles with a pending timer for
//!   the application it served last, nothing of another application is
//!   dispatched.
//! * [`CompletionBoundCheck`]: Theorem 2.2 for lone synchronous requests.
//! * [`DelayBoundCheck`]: the delay bound of Eq. (6) for periodic
//!   applications that read each period's chunk with synchronous requests
//!   (the SI property) and never ask more than their reserved service.

use crate::request::Nanos;
use crate::sim::SimEvent;

#[derive(Clone, Debug, Default)]
struct AppLag {
    phi: f64,
    outstanding: u32,
    in_period: bool,
    emptied_at: Nanos,
    g: f64,
    g_min: f64,
    worst: f64,
}

/// Theorem 2.1 check (see the module doc).
#[derive(Clone, Debug)]
pub struct ServiceLagCheck {
    apps: Vec<AppLag>,
    t_wait: Nanos,
}

impl ServiceLagCheck {
    /// Applications with weights `weights` (φ_i = w_i/Σw), quasi-backlog
    /// window `t_wait`.
    pub fn new(weights: &[u32], t_wait: Nanos) -> Self {
        let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        Self {
            apps: weights
                .iter()
                .map(|&w| AppLag {
                    phi: f64::from(w) / sum,
                    ..AppLag::default()
                })
                .collect(),
            t_wait,
        }
    }

    fn close_expired(&mut self, t: Nanos) {
        let tw = self.t_wait;
        for a in &mut self.apps {
            if a.in_period && a.outstanding == 0 && t > a.emptied_at + tw {
                a.in_period = false;
            }
        }
    }

    /// Feeds one event.
    pub fn observe(&mut self, ev: &SimEvent) {
        match *ev {
            SimEvent::Issue { t, req } => {
                self.close_expired(t);
                let a = &mut self.apps[req.app.index()];
                a.outstanding += 1;
                if !a.in_period {
                    a.in_period = true;
                    a.g = 0.0;
                    a.g_min = 0.0;
                }
            }
            SimEvent::Dispatch { t, req, .. } => {
                self.close_expired(t);
                let l = f64::from(req.len);
                for (i, a) in self.apps.iter_mut().enumerate() {
                    if !a.in_period {
                        continue;
                    }
                    a.g += a.phi * l - if i == req.app.index() { l } else { 0.0 };
                    a.g_min = a.g_min.min(a.g);
                    a.worst = a.worst.max(a.g - a.g_min);
                }
            }
            SimEvent::Complete { t, req } => {
                self.close_expired(t);
                let a = &mut self.apps[req.app.index()];
                a.outstanding -= 1;
                if a.outstanding == 0 {
                    a.emptied_at = t;
                }
            }
            SimEvent::Idle { .. } => {}
        }
    }

    /// The worst lag φ_i·W − W_i seen per application, sectors.
    pub fn worst(&self) -> Vec<f64> {
        self.apps.iter().map(|a| a.worst).collect()
    }
}

/// Idling check (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct IdlingCheck {
    last_app: Option<u32>,
    idle_until: Option<Nanos>,
    /// Dispatches of another application before the idling deadline.
    pub violations: u64,
    /// Idle answers with a deadline seen.
    pub idles: u64,
}

impl IdlingCheck {
    /// Feeds one event.
    pub fn observe(&mut self, ev: &SimEvent) {
        match *ev {
            // A request of the idling application cancels the timer.
            SimEvent::Issue { req, .. } if Some(req.app.0) == self.last_app => {
                self.idle_until = None;
            }
            SimEvent::Idle { until: Some(u), .. } => {
                self.idles += 1;
                self.idle_until = Some(u);
            }
            SimEvent::Dispatch { t, req, .. } => {
                if let (Some(u), Some(last)) = (self.idle_until, self.last_app) {
                    if t < u && req.app.0 != last {
                        self.violations += 1;
                    }
                }
                self.idle_until = None;
                self.last_app = Some(req.app.0);
            }
            _ => {}
        }
    }
}

/// Theorem 2.2 in the sector domain, for requests that find their
/// application's queue empty and are the only one it has outstanding until
/// they complete (synchronous requests: Q_i(t1⁻) = 0, A_i = L_i^j, t1 =
/// a_i^j). Theorem 2.2 bounds c − t1 by dividing
/// `(Q + A + (B_i^j − L) + B_i,max)/φ_i + B_max + B_i,max + L_max` sectors
/// by the minimum aggregate rate T_agg over [t1, c]; since the disk served
/// at least T_agg·(c − t1) sectors in that interval, the theorem implies
/// that the service W(a, c) delivered to all applications between the
/// arrival and the completion is at most
/// `(B_i^j + B_i,max)/φ_i + B_max + B_i,max + L_max ≤ 2·B_i,max/φ_i + B_max + B_i,max + L_max`,
/// which needs no throughput estimate. Service is counted at dispatch.
#[derive(Clone, Debug)]
pub struct CompletionBoundCheck {
    bound: Vec<f64>,
    total: u64,
    /// Per application: (W at arrival, still a lone request).
    open: Vec<Option<(u64, bool)>>,
    outstanding: Vec<u32>,
    /// Requests checked.
    pub checked: u64,
    /// Requests whose W(a, c) exceeded the bound.
    pub violations: u64,
    /// Largest W(a, c) / bound seen.
    pub worst_ratio: f64,
}

impl CompletionBoundCheck {
    /// Applications with weights `weights` and maximum budgets
    /// `max_budgets` (B_i,max), system B_max and L_max, sectors.
    pub fn new(weights: &[u32], max_budgets: &[u32], b_max: u32, l_max: u32) -> Self {
        let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        let bound = weights
            .iter()
            .zip(max_budgets)
            .map(|(&w, &bi)| {
                let phi = f64::from(w) / sum;
                2.0 * f64::from(bi) / phi + f64::from(b_max) + f64::from(bi) + f64::from(l_max)
            })
            .collect();
        Self {
            bound,
            total: 0,
            open: vec![None; weights.len()],
            outstanding: vec![0; weights.len()],
            checked: 0,
            violations: 0,
            worst_ratio: 0.0,
        }
    }

    /// Feeds one event.
    pub fn observe(&mut self, ev: &SimEvent) {
        match *ev {
            SimEvent::Issue { req, .. } => {
                let i = req.app.index();
                if self.outstanding[i] == 0 {
                    self.open[i] = Some((self.total, true));
                } else if let Some(o) = &mut self.open[i] {
                    o.1 = false;
                }
                self.outstanding[i] += 1;
            }
            SimEvent::Dispatch { req, .. } => {
                self.total += u64::from(req.len);
                // A request still waiting once the bound is passed has
                // already violated it (W(a, c) ≥ W(a, now)): counted once,
                // even if it never completes.
                for (i, o) in self.open.iter_mut().enumerate() {
                    if let Some((w0, true)) = *o {
                        if (self.total - w0) as f64 > self.bound[i] && i != req.app.index() {
                            self.checked += 1;
                            self.violations += 1;
                            self.worst_ratio = self
                                .worst_ratio
                                .max((self.total - w0) as f64 / self.bound[i]);
                            *o = Some((w0, false));
                        }
                    }
                }
            }
            SimEvent::Complete { req, .. } => {
                let i = req.app.index();
                self.outstanding[i] -= 1;
                if let Some((w0, lone)) = self.open[i].take() {
                    if lone {
                        let ratio = (self.total - w0) as f64 / self.bound[i];
                        self.checked += 1;
                        self.worst_ratio = self.worst_ratio.max(ratio);
                        self.violations += u64::from(ratio > 1.0);
                    }
                }
            }
            SimEvent::Idle { .. } => {}
        }
    }
}

/// A periodic application's parameters for [`DelayBoundCheck`].
#[derive(Clone, Copy, Debug)]
pub struct PeriodicApp {
    /// Sectors per period (the chunk, Q_i + A_i of Eq. (5)).
    pub chunk: u32,
    /// Smallest request it issues, L_i,min, sectors.
    pub l_min: u32,
    /// Its maximum budget B_i,max, sectors.
    pub max_budget: u32,
}

/// Eq. (6) in the sector domain. A periodic application i reads a chunk
/// of Q_i sectors per period, as one or more synchronous requests tagged
/// with the chunk's number (as [`crate::workload::Streamer`] does). Take t1
/// = the arrival of a chunk's first request, with nothing of i outstanding
/// (Q_i(t1⁻) = 0) and the previous chunk already completed in the ideal
/// system (φ_i·W(t1', t1) ≥ Q_i, t1' the previous chunk's start: the
/// application has not asked for more than its reserved service, so the
/// B_i,max term of Eq. (5) vanishes). Eq. (5) with R_i^j the chunk's last
/// request, multiplied by T_agg as in [`CompletionBoundCheck`], gives
///
/// `W(t1, c) − Q_i/φ_i ≤ (B_i,max − L_i,min)/φ_i + B_max + L_max`:
///
/// the service delivered to everybody between the chunk's start and its
/// completion exceeds the ideal system's Q_i/φ_i by at most the delay
/// bound d_i,max of Eq. (6) times T_agg. Chunks that do not meet the two
/// conditions are skipped (and counted). For an application with the SI
/// property BFQ idles between the chunk's requests, so they are served as
/// one batch; a scheduler that does not (no idling) makes every request
/// of the chunk wait for other applications' budgets and fails the bound.
#[derive(Clone, Debug)]
pub struct DelayBoundCheck {
    phi: Vec<f64>,
    apps: Vec<Option<PeriodicApp>>,
    b_max: f64,
    l_max: f64,
    total: u64,
    outstanding: Vec<u32>,
    /// Per application: the chunk in progress (tag, W at t1, sectors
    /// completed, checked), and W at the previous chunk's start.
    open: Vec<Option<(u64, u64, u64, bool)>>,
    prev_start: Vec<Option<u64>>,
    /// Chunks checked.
    pub checked: u64,
    /// Chunks skipped (the application had asked ahead of its reserved
    /// service, or had requests outstanding at the chunk's start).
    pub skipped: u64,
    /// Chunks whose delay exceeded the bound.
    pub violations: u64,
    /// Largest delay / bound seen.
    pub worst_ratio: f64,
}

impl DelayBoundCheck {
    /// Applications with weights `weights` (φ_i = w_i/Σw); `periodic[i]`
    /// describes the periodic ones (`None`: not checked); system B_max and
    /// L_max, sectors.
    pub fn new(weights: &[u32], periodic: &[Option<PeriodicApp>], b_max: u32, l_max: u32) -> Self {
        let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        let n = weights.len();
        let mut apps = periodic.to_vec();
        apps.resize(n, None);
        Self {
            phi: weights.iter().map(|&w| f64::from(w) / sum).collect(),
            apps,
            b_max: f64::from(b_max),
            l_max: f64::from(l_max),
            total: 0,
            outstanding: vec![0; n],
            open: vec![None; n],
            prev_start: vec![None; n],
            checked: 0,
            skipped: 0,
            violations: 0,
            worst_ratio: 0.0,
        }
    }

    /// The bound on `W(t1, c) − Q_i/φ_i` for application `i`, sectors.
    pub fn bound(&self, i: usize) -> Option<f64> {
        let p = self.apps.get(i).copied().flatten()?;
        Some((f64::from(p.max_budget) - f64::from(p.l_min)) / self.phi[i] + self.b_max + self.l_max)
    }

    fn excess(&self, i: usize, w0: u64) -> f64 {
        let chunk = self.apps[i].map_or(0.0, |p| f64::from(p.chunk));
        (self.total - w0) as f64 - chunk / self.phi[i]
    }

    /// Feeds one event.
    pub fn observe(&mut self, ev: &SimEvent) {
        match *ev {
            SimEvent::Issue { req, .. } => {
                let i = req.app.index();
                let Some(p) = self.apps.get(i).copied().flatten() else {
                    return;
                };
                let new_chunk = self.open[i].is_none_or(|o| o.0 != req.tag);
                if new_chunk {
                    if self.open[i].is_some_and(|o| o.3) {
                        // The previous chunk never completed: it is still
                        // counted when it does (it cannot: tags differ), so
                        // judge it now by what it has already waited.
                        let (_, w0, _, _) = self.open[i].unwrap_or_default();
                        self.finish(i, w0);
                    }
                    let ideal_done = self.prev_start[i].is_none_or(|w| {
                        self.phi[i] * (self.total - w) as f64 >= f64::from(p.chunk)
                    });
                    let eligible = self.outstanding[i] == 0 && ideal_done;
                    self.skipped += u64::from(!eligible);
                    self.open[i] = Some((req.tag, self.total, 0, eligible));
                    self.prev_start[i] = Some(self.total);
                }
                self.outstanding[i] += 1;
            }
            SimEvent::Dispatch { req, .. } => {
                self.total += u64::from(req.len);
                // A chunk still unfinished once the bound is passed has
                // violated it already: judged now, once.
                for i in 0..self.open.len() {
                    if let Some((tag, w0, done, true)) = self.open[i] {
                        let bound = self.bound(i).unwrap_or(f64::INFINITY);
                        if self.excess(i, w0) > bound && i != req.app.index() {
                            self.finish(i, w0);
                            self.open[i] = Some((tag, w0, done, false));
                        }
                    }
                }
            }
            SimEvent::Complete { req, .. } => {
                let i = req.app.index();
                if self.apps.get(i).copied().flatten().is_none() {
                    return;
                }
                self.outstanding[i] -= 1;
                let chunk = self.apps[i].map_or(0, |p| u64::from(p.chunk));
                if let Some((tag, w0, done, eligible)) = self.open[i] {
                    if tag != req.tag {
                        return;
                    }
                    let done = done + u64::from(req.len);
                    self.open[i] = Some((tag, w0, done, eligible && done < chunk));
                    if eligible && done >= chunk {
                        self.finish(i, w0);
                    }
                }
            }
            SimEvent::Idle { .. } => {}
        }
    }

    fn finish(&mut self, i: usize, w0: u64) {
        let bound = self.bound(i).unwrap_or(f64::INFINITY);
        let ratio = self.excess(i, w0) / bound;
        self.checked += 1;
        self.worst_ratio = self.worst_ratio.max(ratio);
        self.violations += u64::from(ratio > 1.0);
    }
}
