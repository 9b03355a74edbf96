//! DRR's default quantum unit is the largest maximum length among the flows
//! configured *now*: it shrinks back when the flow that set it leaves or is
//! reconfigured to shorter packets.

use crate::common::*;
use fairway_core::*;

/// Two equal 1500-byte flows, each with 6 packets queued: the order in
/// which they are served.
fn order_of_two_equal_flows(s: &mut Drr<Pkt>) -> Vec<u32> {
    for id in 0..6 {
        s.enqueue(FlowId(0), Pkt { id, len: 1500 }).unwrap();
        s.enqueue(FlowId(1), Pkt { id, len: 1500 }).unwrap();
    }
    std::iter::from_fn(|| s.dequeue().map(|d| d.flow.0)).collect()
}

const ALTERNATING: [u32; 12] = [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1];

fn two_flows_and_a_jumbo_one() -> Drr<Pkt> {
    let mut s = Drr::new(Capacity::new(3, 64));
    s.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
    s.add_flow(FlowId(1), FlowConfig::new(1, 1500)).unwrap();
    s.add_flow(FlowId(2), FlowConfig::new(1, 9000)).unwrap();
    s
}

#[test]
fn the_quantum_follows_the_largest_configured_max_len() {
    let mut s = two_flows_and_a_jumbo_one();
    assert_eq!(s.quantum(FlowId(0)), Some(9000));
    // With a 9000-byte quantum each turn sends six 1500-byte packets.
    assert_eq!(
        order_of_two_equal_flows(&mut s),
        [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    );
}

#[test]
fn removing_the_largest_flow_shrinks_the_quantum() {
    let mut s = two_flows_and_a_jumbo_one();
    s.remove_flow(FlowId(2)).unwrap();
    assert_eq!(s.quantum(FlowId(0)), Some(1500));
    assert_eq!(order_of_two_equal_flows(&mut s), ALTERNATING);
}

#[test]
fn reconfiguring_the_largest_flow_shrinks_the_quantum() {
    let mut s = two_flows_and_a_jumbo_one();
    s.reconfigure_flow(FlowId(2), FlowConfig::new(1, 1000))
        .unwrap();
    assert_eq!(s.quantum(FlowId(0)), Some(1500));
    assert_eq!(order_of_two_equal_flows(&mut s), ALTERNATING);
    // And grows again when a flow is reconfigured to larger packets.
    s.reconfigure_flow(FlowId(2), FlowConfig::new(1, 3000))
        .unwrap();
    assert_eq!(s.quantum(FlowId(1)), Some(3000));
}

#[test]
fn the_unit_stays_while_another_flow_still_has_the_largest_max_len() {
    let mut s2 = Drr::<Pkt>::new(Capacity::new(4, 64));
    s2.add_flow(FlowId(0), FlowConfig::new(1, 1500)).unwrap();
    s2.add_flow(FlowId(2), FlowConfig::new(1, 9000)).unwrap();
    s2.add_flow(FlowId(3), FlowConfig::new(1, 9000)).unwrap();
    s2.remove_flow(FlowId(2)).unwrap();
    assert_eq!(s2.quantum(FlowId(0)), Some(9000));
    s2.remove_flow(FlowId(3)).unwrap();
    assert_eq!(s2.quantum(FlowId(0)), Some(1500));
}

#[test]
fn a_fixed_quantum_unit_is_not_recomputed() {
    let mut s = Drr::<Pkt>::with_options(Capacity::new(3, 64), Limits::DEFAULT, Some(500));
    s.add_flow(FlowId(0), FlowConfig::new(2, 1500)).unwrap();
    s.add_flow(FlowId(2), FlowConfig::new(1, 9000)).unwrap();
    s.remove_flow(FlowId(2)).unwrap();
    assert_eq!(s.quantum(FlowId(0)), Some(1000));
}
