//! Online checks of BFQ's guarantees over a simulated run (seed 004 §2.2),
//! fed with the simulator's [`SimEvent`]s.
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
