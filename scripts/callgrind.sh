#!/usr/bin/env bash
# Instructions per enqueue/dequeue pair, counted by callgrind: stable on a
# noisy or virtual machine where wall-clock time and perf counters are not.
#
# Runs the `instructions` bench binary of fairway-eval (see
# crates/eval/benches/instructions.rs) once per (scheduler, flow set) under
# `valgrind --tool=callgrind`, collecting only inside its measured region
# (warm-up and setup excluded), and divides by the pairs it ran.
#
# Usage: scripts/callgrind.sh [PATTERN] [PAIRS]
#   SCHEDS="drr qfq" FLOWS="1x64 1x1024" scripts/callgrind.sh smooth 100000
# Writes a table to stdout and CSV to $OUT (default target/fairway-bench/callgrind-PATTERN.csv).
set -euo pipefail
cd "$(dirname "$0")/.."

pattern=${1:-smooth}
pairs=${2:-100000}
scheds=${SCHEDS:-"none fifo drr qfq qfq+ wf2q+ wf2q++"}
flows=${FLOWS:-"1x64 1x1024 1k-wmix"}
out=${OUT:-target/fairway-bench/callgrind-$pattern.csv}

command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }

bin=$(cargo bench -p fairway-eval --bench instructions --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -n 1)
[ -x "$bin" ] || { echo "callgrind.sh: could not build the instructions bench" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$out")"
echo "sched,flows,pattern,pairs,instructions,instructions_per_pair" >"$out"
printf '%-8s %-10s %-10s %10s %14s\n' sched flows pattern pairs "instr/pair"
for f in $flows; do
    for s in $scheds; do
        cg="$tmp/cg.out"
        done_pairs=$(valgrind --tool=callgrind --collect-atstart=no \
            --toggle-collect='*counted*' --callgrind-out-file="$cg" \
            "$bin" "$s" "$f" "$pattern" "$pairs" 2>/dev/null | sed -n 's/^pairs //p')
        ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$cg" | head -n 1)
        [ -n "$ir" ] || ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$cg" | head -n 1)
        per=$(awk -v a="$ir" -v b="$done_pairs" 'BEGIN { printf "%.1f", a / b }')
        printf '%-8s %-10s %-10s %10s %14s\n' "$s" "$f" "$pattern" "$done_pairs" "$per"
        echo "$s,$f,$pattern,$done_pairs,$ir,$per" >>"$out"
    done
done
echo "wrote $out" >&2
