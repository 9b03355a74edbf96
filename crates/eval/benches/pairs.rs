//! Continuous wall-clock benchmark of the hot path (criterion): one
//! enqueue+dequeue pair per iteration, for every registry scheduler and the
//! `none` baseline, at 64 and 32768 flows.
//!
//! The pattern is `alternate` (FreeBSD dummynet's harness: backlog
//! held between N and N+1), because each of its cycles is exactly one pair,
//! so criterion's iteration counts are honoured exactly. The same loop as
//! `fairway bench` is timed (`fairway_eval::cost`), statically dispatched.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fairway_eval::cost::{build_runner, CostPattern, CostSetup, Subject};
use fairway_eval::workload::FlowSet;
use std::time::Duration;

fn subjects() -> Vec<Subject> {
    Subject::all()
}

fn pairs(c: &mut Criterion) {
    for n in [64u32, 32768] {
        let mut group = c.benchmark_group(format!("pair/{n}-flows"));
        group
            .throughput(Throughput::Elements(1))
            .sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        for subject in subjects() {
            let flows = FlowSet::parse(&format!("1x{n}")).expect("valid flow set");
            let setup = CostSetup::new(flows, CostPattern::Alternate, 4 * u64::from(n));
            let mut runner = build_runner(&subject, &setup).expect("runner builds");
            group.bench_function(BenchmarkId::from_parameter(subject.label()), |b| {
                b.iter_custom(|iters| {
                    let s = runner.run(iters, None);
                    // `run` stops at a cycle boundary, i.e. exactly `iters`
                    // pairs here; scale anyway in case it ran more.
                    s.elapsed.mul_f64(iters as f64 / s.pairs.max(1) as f64)
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, pairs);
criterion_main!(benches);
