//! The PSPAT paper §4, Eq. (1): the T-WFI of the arbiter architecture is the
//! scheduler's own T-WFI plus what the runtime adds,
//!
//! ```text
//! T-WFI = T-WFI_SA + Δ_A + (2 + k)·Δ_C,   k = Δ_A·B / L  (≥ 1, rounded up)
//! ```
//!
//! with the scheduler's term from §4.2 (φ are normalised weights, Σφ = 1;
//! L the largest packet, L_k client k's largest, B the link rate):
//!
//! ```text
//! T-WFI_DRR(k) = (1/φ_min + 1/φ_k + N − 1) · L/B
//! T-WFI_QFQ(k) = 6·L_k/(φ_k·B) + (L − L_k)/B
//! ```
//!
//! (6·L_k/φ_k is QFQ's ΔS, which the registry's guarantee entry holds.)
//!
//! The check compares the target client's measured *submit → send* delay
//! (the time from handing a packet to the client queue to the `sendmmsg`
//! that put it on the wire) with the bound. That delay is at least the
//! packet's lateness against the fluid system (whose completion time is
//! after the arrival), so the check is stricter than Eq. (1) by the fluid
//! service time L/(φ_k·B).

use fairway_core::registry::Guarantee;
use fairway_core::SchedKind;
use hdrhistogram::Histogram;
use serde::Serialize;

/// What Eq. (1) needs to know.
#[derive(Clone, Debug)]
pub struct BoundInput {
    /// The scheduling algorithm in the arbiter.
    pub kind: SchedKind,
    /// Every client's weight.
    pub weights: Vec<u32>,
    /// The client whose bound is computed.
    pub target: usize,
    /// Largest packet of any client, bytes (L; here every client's L_k too).
    pub max_len: u32,
    /// Link rate B, bits/s.
    pub link_bps: f64,
    /// Δ_A, ns.
    pub delta_a_ns: u64,
    /// Δ_C, ns.
    pub delta_c_ns: u64,
}

/// The scheduler's own T-WFI for the target, ns; `None` for algorithms
/// the PSPAT paper §4.2 gives no expression for.
pub fn twfi_scheduler_ns(b: &BoundInput) -> Option<f64> {
    let total: f64 = b.weights.iter().map(|&w| w as f64).sum();
    let wk = *b.weights.get(b.target)? as f64;
    let wmin = b.weights.iter().copied().min()? as f64;
    if total <= 0.0 || wk <= 0.0 || wmin <= 0.0 || b.link_bps <= 0.0 {
        return None;
    }
    let (phi_k, phi_min) = (wk / total, wmin / total);
    let l_over_b_ns = b.max_len as f64 * 8.0 / b.link_bps * 1e9;
    let n = b.weights.len() as f64;
    match b.kind {
        SchedKind::Drr => Some((1.0 / phi_min + 1.0 / phi_k + n - 1.0) * l_over_b_ns),
        // 6 = QFQ's ΔS = ΔS⁻ + ΔS⁺ in units of L_k/φ_k (the registry's
        // timestamp errors); L_k = L: the second term vanishes.
        SchedKind::Qfq => {
            let Guarantee::Flow(errors) = b.kind.info().guarantee else {
                return None;
            };
            Some(f64::from(errors.delta_s_factor()) * l_over_b_ns / phi_k)
        }
        _ => None,
    }
}

/// k of Eq. (1): maximum-sized packets per Δ_A block, at least 1.
pub fn k_blocks(b: &BoundInput) -> f64 {
    let per_block = b.delta_a_ns as f64 * 1e-9 * b.link_bps / (8.0 * b.max_len as f64);
    per_block.ceil().max(1.0)
}

/// Eq. (1), ns.
pub fn eq1_bound_ns(b: &BoundInput) -> Option<f64> {
    let sa = twfi_scheduler_ns(b)?;
    Some(sa + b.delta_a_ns as f64 + (2.0 + k_blocks(b)) * b.delta_c_ns as f64)
}

/// The outcome of comparing measured delays with the bound.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BoundCheck {
    /// Eq. (1), µs.
    pub bound_us: f64,
    /// The scheduler's own term, µs.
    pub twfi_scheduler_us: f64,
    /// The largest measured submit → send delay, µs.
    pub worst_us: f64,
    /// Its 99.9th percentile, µs.
    pub p999_us: f64,
    /// bound − worst, µs (negative: violated).
    pub margin_us: f64,
    /// Packets whose delay exceeded the bound.
    pub over_bound: u64,
    /// Packets measured.
    pub packets: u64,
    /// Every measured delay within the bound.
    pub holds: bool,
}

/// Compares `delays` (ns) with Eq. (1) for `input`; `None` when the
/// scheduler has no bound or nothing was measured.
pub fn check(input: &BoundInput, delays: &Histogram<u64>) -> Option<BoundCheck> {
    let bound = eq1_bound_ns(input)?;
    let sa = twfi_scheduler_ns(input)?;
    if delays.is_empty() {
        return None;
    }
    let worst = delays.max() as f64;
    let over = delays.count_between(bound.ceil() as u64 + 1, u64::MAX);
    Some(BoundCheck {
        bound_us: bound / 1e3,
        twfi_scheduler_us: sa / 1e3,
        worst_us: worst / 1e3,
        p999_us: delays.value_at_quantile(0.999) as f64 / 1e3,
        margin_us: (bound - worst) / 1e3,
        over_bound: over,
        packets: delays.len(),
        holds: worst <= bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(kind: SchedKind, n: usize) -> BoundInput {
        let mut weights = vec![1; n];
        weights[0] = 50;
        BoundInput {
            kind,
            weights,
            target: 0,
            max_len: 1500,
            link_bps: 10e9,
            delta_a_ns: 1000,
            delta_c_ns: 1000,
        }
    }

    #[test]
    fn matches_seed_001_section_4_2_examples() {
        // §4.2's link: 10 Gbit/s, L = 1500 B, L/B = 1.2 us. DRR with N = 5,
        // weights 50,1,1,1,1: φ_k = 50/54, φ_min = 1/54.
        let b = input(SchedKind::Drr, 5);
        let sa = twfi_scheduler_ns(&b).unwrap();
        let expect = (54.0 + 54.0 / 50.0 + 4.0) * 1200.0;
        assert!((sa - expect).abs() < 1e-6, "{sa} vs {expect}");
        // k = Δ_A·B/L = 1e-6 · 1e10 / 12000 = 0.83 -> 1 (§4.1: "k = 1").
        assert_eq!(k_blocks(&b), 1.0);
        assert!((eq1_bound_ns(&b).unwrap() - (expect + 1000.0 + 3000.0)).abs() < 1e-6);
        // QFQ for the client with φ = 0.5: 12 L/B = 14.4 us (§4.2).
        let mut q = input(SchedKind::Qfq, 2);
        q.weights = vec![1, 1];
        assert!((twfi_scheduler_ns(&q).unwrap() - 14_400.0).abs() < 1e-6);
        assert!(twfi_scheduler_ns(&input(SchedKind::Fifo, 3)).is_none());
    }

    #[test]
    fn the_check_fails_when_a_delay_exceeds_the_bound() {
        let b = input(SchedKind::Drr, 5);
        let bound = eq1_bound_ns(&b).unwrap();
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        h.record((bound * 0.5) as u64).unwrap();
        let ok = check(&b, &h).unwrap();
        assert!(ok.holds && ok.margin_us > 0.0 && ok.over_bound == 0);
        h.record((bound * 3.0) as u64).unwrap();
        let bad = check(&b, &h).unwrap();
        assert!(!bad.holds && bad.margin_us < 0.0 && bad.over_bound == 1);
    }
}
