#!/usr/bin/env bash
# Instructions per dequeue + enqueue pair through the C ABI and in Rust,
# counted by callgrind (exact and repeatable on a noisy machine), for the
# `abi_pair` bench's workload: 1000 backlogged flows, weights 1..4,
# 64..1500-byte packets.
#
# Each column runs twice, with 80 000 and 160 000 pairs and no warm-up;
# the difference of the two counts over 80 000 is the cost of one pair,
# setup (creation, flows, the first packets) excluded. Columns:
#   C->ABI     examples/c/bench_pairs.c (-O2) calling the static library
#   Rust->ABI  the same exported functions called from Rust, not inlined
#   Rust       the registry's Box<dyn Scheduler> from the same spec (the
#              baseline of the target: C->ABI <= 1.1 x Rust)
#   concrete   the scheduler's concrete type, loop compiled for it
#   batch      32-packet batches: ABI batch calls vs the same in Rust
#
# Usage: crates/ffi/scripts/abi-instructions.sh [SPEC...]
#   default specs: drr qfq qfq+:m=8 wf2q+
set -euo pipefail
cd "$(dirname "$0")/../../.."

command -v valgrind >/dev/null || { echo "abi-instructions.sh: valgrind is not installed" >&2; exit 1; }
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(drr qfq qfq+:m=8 wf2q+)

bench=$(cargo bench -p fairway-ffi --bench abi_pair --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -n 1)
[ -x "$bench" ] || { echo "abi-instructions.sh: could not build the abi_pair bench" >&2; exit 1; }
cexe=$("$bench" --c-exe)
[ -x "$cexe" ] || { echo "abi-instructions.sh: could not build the C benchmark" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lo=80000
hi=160000

# instructions COMMAND...: total instructions callgrind counts for COMMAND.
instructions() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >/dev/null 2>&1
    sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$tmp/cg.out" | head -n 1
}

# per_pair SPEC COLUMN: instructions per pair of one column.
per_pair() {
    local spec=$1 column=$2 a b
    if [ "$column" = c ]; then
        a=$(instructions "$cexe" "$spec" 1000 $lo 1)
        b=$(instructions "$cexe" "$spec" 1000 $hi 1)
    else
        a=$(instructions "$bench" --column "$column" --specs "$spec" --pairs $lo)
        b=$(instructions "$bench" --column "$column" --specs "$spec" --pairs $hi)
    fi
    echo "scale=1; ($b - $a) / ($hi - $lo)" | bc
}

printf '%-10s %8s %10s %8s %9s %12s %14s %10s %10s %8s\n' spec "C->ABI" "Rust->ABI" Rust concrete \
    "C->ABI/Rust" "C->ABI/concr." "ABI batch" "Rust batch" "batch/R"
for spec in "${specs[@]}"; do
    c=$(per_pair "$spec" c)
    ra=$(per_pair "$spec" abi)
    r=$(per_pair "$spec" rust)
    rc=$(per_pair "$spec" rust-concrete)
    ab=$(per_pair "$spec" abi-batch)
    rb=$(per_pair "$spec" rust-batch)
    printf '%-10s %8s %10s %8s %9s %12.3f %14.3f %10s %10s %8.3f\n' "$spec" "$c" "$ra" "$r" "$rc" \
        "$(echo "$c / $r" | bc -l)" "$(echo "$c / $rc" | bc -l)" "$ab" "$rb" "$(echo "$ab / $rb" | bc -l)"
done
