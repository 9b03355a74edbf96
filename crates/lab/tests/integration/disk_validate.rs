//! The BFQ thesis' App. C.5.1 trace replay through the real-time emulated
//! disk: the device computes exactly the simulator's schedule from its
//! arrival stamps, never delivers early, loses nothing. Wall-clock
//! accuracy is reported by `fairway disk validate`, not asserted here.

use fairway_disk::model::DiskModel;
use fairway_disk::MS;
use fairway_lab::disk::validate::{synthetic_trace, validate, TraceKind};

#[test]
fn replayed_trace_matches_the_simulator_exactly_on_the_device_clock() {
    let disk = DiskModel::dtla_307030();
    for kind in [TraceKind::Random, TraceKind::Mixed] {
        let trace = synthetic_trace(kind, 60, 4 * MS, disk.capacity(), 3);
        let v = validate(kind, &trace, &disk);
        assert_eq!(v.missing, 0);
        assert_eq!(v.early, 0);
        assert_eq!((v.device.min_us, v.device.max_us), (0.0, 0.0), "{v:?}");
        assert!(v.injection.min_us >= 0.0);
    }
}
