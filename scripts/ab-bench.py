#!/usr/bin/env python3
"""Compare two builds of `fairway` on `fairway bench` (cost per enqueue/dequeue pair).

A version-to-version comparison on a shared VM is only fair when both
versions run under the same conditions: this script alternates runs of
binary A and binary B (ABBA order within each round), pinned to one CPU,
and prints per scheduler and number of flows the median ns per pair of each
and the median (range) of the paired ratios B/A, each B run against the A
run next to it.

Usage:
  scripts/ab-bench.py [--rounds R] [--pairs P] [--flows 1,1024] [--sched drr,qfq] BIN_A BIN_B
Example (build each version, copy its binary aside, then):
  scripts/ab-bench.py --rounds 7 /tmp/fairway-old target/release/fairway
"""
import argparse
import json
import statistics as st
import subprocess


def run(binary, scheds, n, pattern, pairs, cpu):
    cmd = ["taskset", "-c", str(cpu), binary, "bench", "--sched", scheds, "--flows", f"1x{n}",
           "--pattern", pattern, "--repeat", "1", "--pairs", str(pairs), "--json", "--no-counters"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {r["sched"]: r["ns_per_pair"] for r in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="binary A (before)")
    ap.add_argument("b", help="binary B (after)")
    ap.add_argument("--rounds", type=int, default=5, help="ABBA rounds")
    ap.add_argument("--pairs", type=int, default=2_000_000, help="pairs per run")
    ap.add_argument("--flows", default="1,64,1024,32768", help="numbers of flows N")
    ap.add_argument("--sched", default="drr,qfq,wf2q+,qfq+", help="schedulers, comma separated")
    ap.add_argument("--pattern", default="alternate", help="traffic pattern")
    ap.add_argument("--cpu", type=int, default=1, help="the CPU both run on")
    args = ap.parse_args()
    print(f"{'N':>6} {'sched':8} {'A ns':>8} {'B ns':>8} {'B/A median (range)':>22}")
    for n in (int(x) for x in args.flows.split(",")):
        a_runs, b_runs = [], []
        for r in range(args.rounds):
            order = [("a", args.a), ("b", args.b)] if r % 2 == 0 else [("b", args.b), ("a", args.a)]
            got = {}
            for tag, binary in order:
                got[tag] = run(binary, args.sched, n, args.pattern, args.pairs, args.cpu)
            a_runs.append(got["a"])
            b_runs.append(got["b"])
        for s in args.sched.split(","):
            a = [x[s] for x in a_runs]
            b = [x[s] for x in b_runs]
            ratios = [y / x for x, y in zip(a, b)]
            print(f"{n:>6} {s:8} {st.median(a):8.1f} {st.median(b):8.1f} "
                  f"{st.median(ratios):8.2f} ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
