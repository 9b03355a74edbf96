//! Every validation error of the Scheduler API, for every scheduler: a typed
//! error, the packet handed back, counters untouched.

use crate::common::*;
use fairway_core::registry::SchedKind;
use fairway_core::*;

fn all() -> Vec<Box<dyn Scheduler<Pkt> + Send>> {
    SchedKind::ALL
        .iter()
        .map(|&k| SchedSpec::new(k).build::<Pkt>(Capacity::new(4, 3), Limits::DEFAULT))
        .collect()
}

#[test]
fn flow_configuration_errors_are_typed() {
    for mut s in all() {
        let name = s.name();
        assert_eq!(
            s.add_flow(FlowId::RESERVED, FlowConfig::new(1, 100)),
            Err(ConfigError::ReservedFlowId),
            "{name}"
        );
        assert!(matches!(
            s.add_flow(FlowId(4), FlowConfig::new(1, 100)),
            Err(ConfigError::FlowIdOutOfRange { .. })
        ));
        assert!(matches!(
            s.add_flow(FlowId(0), FlowConfig::new(0, 100)),
            Err(ConfigError::InvalidWeight { .. })
        ));
        assert!(matches!(
            s.add_flow(FlowId(0), FlowConfig::new(1 << 20, 100)),
            Err(ConfigError::InvalidWeight { .. })
        ));
        assert!(matches!(
            s.add_flow(FlowId(0), FlowConfig::new(1, 0)),
            Err(ConfigError::InvalidMaxLen { .. })
        ));
        assert!(matches!(
            s.add_flow(FlowId(0), FlowConfig::new(1, 1 << 20)),
            Err(ConfigError::InvalidMaxLen { .. })
        ));
        s.add_flow(FlowId(0), FlowConfig::new(1, 100)).unwrap();
        assert_eq!(
            s.add_flow(FlowId(0), FlowConfig::new(1, 100)),
            Err(ConfigError::FlowExists(FlowId(0)))
        );
        assert_eq!(
            s.remove_flow(FlowId(1)).unwrap_err(),
            ConfigError::UnknownFlow(FlowId(1))
        );
        assert_eq!(
            s.reconfigure_flow(FlowId(2), FlowConfig::new(1, 100)),
            Err(ConfigError::UnknownFlow(FlowId(2)))
        );
        assert!(s.flow_config(FlowId(1)).is_none());
        assert_eq!(
            s.flow_config(FlowId(0)),
            Some(FlowConfig::new(1, 100)),
            "{name}"
        );
    }
}

#[test]
fn weight_sum_overflow_is_rejected() {
    for kind in SchedKind::ALL {
        let limits = Limits {
            max_weight_sum: 10,
            ..Limits::DEFAULT
        };
        let mut s = SchedSpec::new(*kind).build::<Pkt>(Capacity::new(4, 4), limits);
        s.add_flow(FlowId(0), FlowConfig::new(6, 100)).unwrap();
        assert!(matches!(
            s.add_flow(FlowId(1), FlowConfig::new(5, 100)),
            Err(ConfigError::WeightSumOverflow { sum: 11, max: 10 })
        ));
        assert!(matches!(
            s.reconfigure_flow(FlowId(0), FlowConfig::new(11, 100)),
            Err(ConfigError::WeightSumOverflow { .. })
        ));
        s.add_flow(FlowId(1), FlowConfig::new(4, 100)).unwrap();
    }
}

#[test]
fn enqueue_errors_hand_the_packet_back() {
    for mut s in all() {
        let name = s.name();
        s.add_flow(FlowId(0), FlowConfig::new(1, 100)).unwrap();
        let p = Pkt { id: 7, len: 50 };
        let e = s.enqueue(FlowId(3), p).unwrap_err();
        assert_eq!(
            (e.kind, e.packet),
            (EnqueueErrorKind::UnknownFlow(FlowId(3)), p),
            "{name}"
        );
        let e = s.enqueue(FlowId(99), p).unwrap_err();
        assert_eq!(e.kind, EnqueueErrorKind::UnknownFlow(FlowId(99)));
        let e = s.enqueue(FlowId::RESERVED, p).unwrap_err();
        assert_eq!(e.kind, EnqueueErrorKind::ReservedFlowId);
        let e = s.enqueue(FlowId(0), Pkt { id: 8, len: 101 }).unwrap_err();
        assert_eq!(
            e.kind,
            EnqueueErrorKind::PacketTooLong {
                len: 101,
                max_len: 100
            }
        );
        assert_eq!(e.into_packet().id, 8);
        let e = s.enqueue(FlowId(0), Pkt { id: 9, len: 0 }).unwrap_err();
        assert_eq!(e.kind, EnqueueErrorKind::EmptyPacket);
        assert_eq!(
            s.backlog(),
            Backlog::default(),
            "{name}: failed enqueues must not count"
        );
        for i in 0..3 {
            s.enqueue(FlowId(0), Pkt { id: i, len: 10 }).unwrap();
        }
        let e = s.enqueue(FlowId(0), Pkt { id: 3, len: 10 }).unwrap_err();
        assert_eq!(e.kind, EnqueueErrorKind::Full { capacity: 3 });
        assert_eq!(e.packet.id, 3);
        assert_eq!(
            s.backlog(),
            Backlog {
                packets: 3,
                bytes: 30
            }
        );
    }
}

#[test]
fn removing_a_backlogged_flow_returns_its_packets_and_keeps_counters() {
    for mut s in all() {
        let name = s.name();
        for f in 0..3 {
            s.add_flow(FlowId(f), FlowConfig::new(f + 1, 100)).unwrap();
        }
        s.enqueue(FlowId(0), Pkt { id: 0, len: 10 }).unwrap();
        s.enqueue(FlowId(1), Pkt { id: 1, len: 20 }).unwrap();
        s.enqueue(FlowId(1), Pkt { id: 2, len: 30 }).unwrap();
        let back = s.remove_flow(FlowId(1)).unwrap();
        assert_eq!(
            back.iter().map(|p| p.id).collect::<Vec<_>>(),
            vec![1, 2],
            "{name}"
        );
        assert_eq!(
            s.backlog(),
            Backlog {
                packets: 1,
                bytes: 10
            }
        );
        assert!(s.flow_backlog(FlowId(1)).is_none());
        // The freed slots are reusable and the id can be configured again.
        s.add_flow(FlowId(1), FlowConfig::new(1, 100)).unwrap();
        s.enqueue(FlowId(1), Pkt { id: 3, len: 5 }).unwrap();
        s.enqueue(FlowId(2), Pkt { id: 4, len: 5 }).unwrap();
        let mut out = Vec::new();
        while let Some(d) = s.dequeue() {
            out.push(d.packet.id);
        }
        out.sort();
        assert_eq!(out, vec![0, 3, 4], "{name}");
        assert_eq!(s.backlog(), Backlog::default());
    }
}

#[test]
fn reconfiguring_a_backlogged_flow_checks_queued_lengths() {
    for mut s in all() {
        let name = s.name();
        s.add_flow(FlowId(0), FlowConfig::new(1, 100)).unwrap();
        s.enqueue(FlowId(0), Pkt { id: 0, len: 80 }).unwrap();
        assert_eq!(
            s.reconfigure_flow(FlowId(0), FlowConfig::new(2, 50)),
            Err(ConfigError::QueuedPacketTooLong {
                flow: FlowId(0),
                queued_len: 80,
                new_max_len: 50
            }),
            "{name}"
        );
        assert_eq!(s.flow_config(FlowId(0)), Some(FlowConfig::new(1, 100)));
        s.reconfigure_flow(FlowId(0), FlowConfig::new(2, 80))
            .unwrap();
        s.enqueue(FlowId(0), Pkt { id: 1, len: 80 }).unwrap();
        assert_eq!(s.dequeue().map(|d| d.packet.id), Some(0));
        assert_eq!(s.dequeue().map(|d| d.packet.id), Some(1));
        assert!(s.dequeue().is_none());
    }
}

#[test]
fn peek_predicts_dequeue() {
    for mut s in all() {
        for f in 0..3 {
            s.add_flow(FlowId(f), FlowConfig::new(f + 1, 100)).unwrap();
        }
        for i in 0..3u32 {
            s.enqueue(FlowId(i % 3), Pkt { id: i, len: 10 + i })
                .unwrap();
        }
        while let Some((flow, p)) = s.peek().map(|(f, p)| (f, *p)) {
            let d = s.dequeue().unwrap();
            assert_eq!((d.flow, d.packet), (flow, p));
        }
        assert!(s.dequeue().is_none());
    }
}
