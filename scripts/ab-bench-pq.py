#!/usr/bin/env python3
"""Compare two builds of `fairway` on one `bench-pq` configuration.

On a machine whose speed drifts (a shared VM switches between regimes ~2x
apart, minute to minute), a version-to-version comparison is only fair when
both versions run under the same conditions. This script alternates short
runs of binary A and binary B (ABBA order), each with the `ideal` yardstick,
and reports per version the best and median fill, drain and total ns per
element, and the median of the *paired* ratios B/A (each B run against the A
run next to it). Calibrate first with A against itself: on this VM the
median of an A/A comparison lands within about 3 % of 1.0, single pairs
anywhere in 0.5-2.0.

Usage:
  scripts/ab-bench-pq.py [--pairs N] BIN_A BIN_B QUEUE BUCKETS PER_BUCKET [bench-pq args...]
Example (build each version, copy its binary aside, then):
  scripts/ab-bench-pq.py --pairs 20 /tmp/fairway-old target/release/fairway gradient 10000 64
"""
import argparse
import json
import statistics as st
import subprocess


def run(binary, queue, buckets, per_bucket, extra):
    out = subprocess.run(
        [binary, "bench-pq", "--queues", queue + ",ideal", "--buckets", buckets,
         "--per-bucket", per_bucket, "--batches", "8", "--json"] + extra,
        capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    (row,) = [r for r in rows if r["queue"] != "ideal"]
    return row


def summary(rows):
    def col(key):
        values = [r[key] for r in rows]
        return f"min {min(values):6.2f} med {st.median(values):6.2f}"
    shares = [r["of_ideal"] for r in rows]
    return (f"fill {col('fill_ns_per_element')} | drain {col('drain_ns_per_element')} | "
            f"total {col('ns_per_element')} | of_ideal med {st.median(shares):.3f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=20)
    p.add_argument("bin_a")
    p.add_argument("bin_b")
    p.add_argument("queue")
    p.add_argument("buckets")
    p.add_argument("per_bucket")
    p.add_argument("extra", nargs=argparse.REMAINDER)
    a = p.parse_args()
    runs = {"A": [], "B": []}
    for i in range(a.pairs):
        order = ("A", "B") if i % 2 == 0 else ("B", "A")
        for v in order:
            binary = a.bin_a if v == "A" else a.bin_b
            runs[v].append(run(binary, a.queue, a.buckets, a.per_bucket, a.extra))
    print(f"{a.queue} {a.buckets} x {a.per_bucket}, {a.pairs} pairs, ns per element")
    print("A", summary(runs["A"]))
    print("B", summary(runs["B"]))

    def ratios(key):
        return [b[key] / x[key] for x, b in zip(runs["A"], runs["B"])]
    total = ratios("ns_per_element")
    print(f"B/A median: total {st.median(total):.3f} (pairs {min(total):.2f}-{max(total):.2f}), "
          f"fill {st.median(ratios('fill_ns_per_element')):.3f}, "
          f"drain {st.median(ratios('drain_ns_per_element')):.3f}")


if __name__ == "__main__":
    main()
