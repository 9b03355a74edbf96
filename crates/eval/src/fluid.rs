//! The ideal fluid system, GPS (Parekh & Gallager; the QFQ+ paper App. A.2,
//! the QFQ paper §3): every backlogged flow is served simultaneously at rate
//! `R · w_i / Σ_{backlogged} w_j`.
//!
//! Fed the same arrivals as a packet system, it gives each packet's ideal
//! completion time. It is an event simulation on the GPS virtual time V,
//! `dV/dt = 1 / Σ_{backlogged} w_j`: a packet of flow i gets the finish tag
//! `F = max(V(a), F_prev_i) + len / w_i` and completes when V reaches F.
//! Time is measured in *byte-times* (the time the link takes to send one
//! byte), so the link rate is 1.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// One arrival fed to the fluid system.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    /// Arrival time (byte-times).
    pub time: f64,
    /// Flow index.
    pub flow: u32,
    /// Length (bytes).
    pub len: u32,
}

#[derive(PartialEq)]
struct Head(f64, u32);
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    // Reversed: BinaryHeap is a max-heap and we want the smallest tag.
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// GPS reference for a fixed set of flow weights.
pub struct FluidReference {
    weights: Vec<u64>,
}

impl FluidReference {
    /// A fluid system whose flow `i` has weight `weights[i]`.
    pub fn new(weights: &[u32]) -> Self {
        Self {
            weights: weights.iter().map(|&w| w.max(1) as u64).collect(),
        }
    }

    /// Ideal completion time of each arrival (same order). Arrivals must be
    /// sorted by time; packets of a flow are served FIFO.
    pub fn completion_times(&self, arrivals: &[Arrival]) -> Vec<f64> {
        let n = self.weights.len();
        let mut done = vec![0.0; arrivals.len()];
        // Per flow: (arrival index, finish tag) of packets not yet finished.
        let mut pending: Vec<VecDeque<(usize, f64)>> = vec![VecDeque::new(); n];
        let mut heads = BinaryHeap::new();
        let (mut t, mut v) = (0.0f64, 0.0f64);
        let mut active_weight: u64 = 0;
        let mut next = 0;
        loop {
            let next_arrival = arrivals.get(next);
            let next_finish = heads
                .peek()
                .map(|h: &Head| t + (h.0 - v) * active_weight as f64);
            let finish_first = match (next_arrival, next_finish) {
                (None, None) => break,
                (Some(a), Some(tf)) => tf <= a.time,
                (None, Some(_)) => true,
                (Some(_), None) => false,
            };
            if finish_first {
                let (Some(tf), Some(Head(f, flow))) = (next_finish, heads.pop()) else {
                    break;
                };
                t = tf;
                v = f;
                let q = &mut pending[flow as usize];
                if let Some((idx, _)) = q.pop_front() {
                    done[idx] = t;
                }
                match q.front() {
                    Some(&(_, nf)) => heads.push(Head(nf, flow)),
                    None => active_weight -= self.weights[flow as usize],
                }
            } else if let Some(a) = next_arrival {
                if active_weight > 0 {
                    v += (a.time - t) / active_weight as f64;
                }
                t = a.time;
                let f = a.flow as usize;
                let w = self.weights[f];
                let q = &mut pending[f];
                let start = q.back().map_or(v, |&(_, last)| last);
                let finish = start + a.len as f64 / w as f64;
                if q.is_empty() {
                    heads.push(Head(finish, a.flow));
                    active_weight += w;
                }
                q.push_back((next, finish));
                next += 1;
            }
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(time: f64, flow: u32, len: u32) -> Arrival {
        Arrival { time, flow, len }
    }

    #[test]
    fn single_flow_is_served_at_link_rate() {
        let r = FluidReference::new(&[1, 1]);
        let c = r.completion_times(&[a(0.0, 0, 100), a(0.0, 0, 100), a(500.0, 0, 50)]);
        assert_eq!(c, vec![100.0, 200.0, 550.0]);
    }

    #[test]
    fn backlogged_flows_share_in_proportion_to_weights() {
        // weights 1 and 3, both with 300 bytes at t=0: flow 1 gets 3/4 of the
        // link until it finishes at 400, then flow 0 finishes its last 200 at 600.
        let r = FluidReference::new(&[1, 3]);
        let c = r.completion_times(&[a(0.0, 0, 300), a(0.0, 1, 300)]);
        assert!((c[1] - 400.0).abs() < 1e-9, "{c:?}");
        assert!((c[0] - 600.0).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn late_arrival_joins_the_share() {
        // flow 0 alone from 0, flow 1 (equal weight) arrives at 100.
        let r = FluidReference::new(&[1, 1]);
        let c = r.completion_times(&[a(0.0, 0, 300), a(100.0, 1, 100)]);
        // from 100 both at rate 1/2: flow 1 done at 300, flow 0 has 100 left at 300 -> 400
        assert!((c[1] - 300.0).abs() < 1e-9, "{c:?}");
        assert!((c[0] - 400.0).abs() < 1e-9, "{c:?}");
    }
}
