#!/usr/bin/env bash
# Long randomized runs, outside CI (CI runs the same tests with small case
# counts). Usage:
#   scripts/long-random.sh                 # 10^6 cases per property, 1 h of fuzzing per target
#   CASES=10000 FUZZ_SECONDS=60 scripts/long-random.sh   # a shorter pass
#   SKIP_FUZZ=1 scripts/long-random.sh     # property tests only
#
# 1. Property tests with PROPTEST_CASES=$CASES random operation sequences
#    per property: every scheduler (packet conservation, per-flow order,
#    counters, WF2Q+/QFQ oracles) and every priority queue (against sorted
#    references), in fairway-core; the C ABI against its models (every
#    spec, and the cFFS queue), in fairway-ffi. A failure is saved by
#    proptest in the test's .proptest-regressions file and replayed first
#    by every later run, CI included, once committed.
# 2. Coverage-guided fuzzing (cargo-fuzz / libFuzzer, nightly toolchain)
#    of each public entry point: crates/ffi/fuzz/fuzz_targets/*.rs, for
#    $FUZZ_SECONDS seconds each. Crashes land in crates/ffi/fuzz/artifacts/.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

CASES=${CASES:-1000000}
FUZZ_SECONDS=${FUZZ_SECONDS:-3600}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

echo "== property tests, PROPTEST_CASES=$CASES"
# Release mode keeps the debug-only invariant checkers out; the CI run
# (debug assertions on) covers them.
PROPTEST_CASES=$CASES cargo test --release -p fairway-core \
    --test integration properties:: --test integration pq_props:: --test integration qfq_props:: --test integration qfq_differential::
PROPTEST_CASES=$CASES cargo test --release -p fairway-ffi --test integration abi_sched:: --test integration abi_pq::

if [[ -n "${SKIP_FUZZ:-}" ]]; then
    echo "== fuzzing skipped (SKIP_FUZZ set)"
    exit 0
fi
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "== fuzzing skipped: no nightly toolchain (rustup toolchain install nightly)"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "== fuzzing skipped: cargo-fuzz missing (cargo install cargo-fuzz)"
    exit 0
fi
echo "== fuzzing, $FUZZ_SECONDS s per target"
cd crates/ffi
for target in $(cargo +nightly fuzz list); do
    echo "-- $target"
    cargo +nightly fuzz run -O "$target" -- -max_total_time="$FUZZ_SECONDS" -print_final_stats=1
done
