#!/usr/bin/env python3
"""fairway's gradient queues against the Eiffel authors' queue, same run, one core.

The Eiffel paper's Figs. 12-14 measure an *approximate* gradient queue
(weights 2^(i/alpha), one division per lookup, a linear search when the
estimate lands on an empty bucket). The authors' public queue code is the
kernel qdisc `net/sched/sch_gq.c` of their `eiffel_linux` repository; its
gradient-queue version (commit 004f245c1812e12b8bf487277ded6d8ce5b38bf5) is
the *exact* hierarchical gradient queue of Theorem 1: 32 children per node,
weights 2^i, one `ceil(b/a)` per level, under a timing-wheel wrapper.

This script takes a user's copy of that one file (never vendored here),
cuts the queue's data structure out of it (the structs, `gq_init`,
`gq_side`, `gq_inc_meta`, `gq_dec_meta`, `gq_push`, `gq_extract`,
`gq_get_min_index`, `log_approx`, the bucket lists), compiles it with
`cc -O2` into a small user-space harness in a temporary directory (kernel
types, `kmalloc_node` and the skb shimmed; the horizon set to the bucket
count), and runs it on exactly the ranks `fairway bench-pq` draws (fairway
writes them with its hidden `--dump-ranks`). Per configuration and round,
pinned to one CPU with taskset, in alternating order:

* `authors-gq`: fill with `gq_push`, drain by `gq_get_min_index` (the
  gradient find-min), pop that bucket, `gq_dec_meta`;
* `authors-wheel`: fill the same, drain with the qdisc's own `gq_extract`
  (a head pointer scanning the buckets, as their dequeue does);
* `fairway bench-pq --queues gradient,approx,cffs` on the same ranks.

Errors are dequeues that did not return a minimum-rank element (an untimed
drain against per-rank counts, as bench-pq counts them for `approx`;
fairway's `gradient` and `cffs` are exact queues, checked against a
sort-by-rank oracle by the property tests, and bench-pq reports no error
for them). Mpps = elements / (fill + drain), best of the batches, as in
bench-pq. Ratios are taken within a round.

    curl -LO https://raw.githubusercontent.com/saeed/eiffel_linux/004f245c1812e12b8bf487277ded6d8ce5b38bf5/net/sched/sch_gq.c
    cargo build --release
    scripts/vs-eiffel.py sch_gq.c                      # 5k and 10k buckets, Fig. 14's occupancies
    scripts/vs-eiffel.py sch_gq.c --buckets 10000 --occupancy 100 --rounds 9
    scripts/vs-eiffel.py sch_gq.c --json > vs-eiffel.json

See docs/priority-queues.md, "The approximate queue against the authors' code".
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

# What the harness needs from sch_gq.c, in the order it is emitted.
STRUCTS = ["gq_bucket", "curvature_desc", "precalc_a_b", "gradient_queue", "gq_sched_data"]
FUNCTIONS = ["gq_bucket_dequeue_head", "bucket_queue_add", "gq_side", "gq_inc_meta", "gq_dec_meta",
             "gq_push", "gq_extract", "gq_get_min_index", "log_approx", "gq_init"]
GRADIENT_COMMIT = "004f245c1812e12b8bf487277ded6d8ce5b38bf5"
FAIRWAY_QUEUES = ["gradient", "approx", "cffs"]
AUTHORS = ["authors-gq", "authors-wheel"]
# Paper's occupancies (Figs. 13-14) and bucket counts (Figs. 12-13).
DEFAULT_BUCKETS = "5000,10000"
DEFAULT_OCCUPANCY = "10,30,50,70,90,100"
MAX_BUCKETS = 1 << 20  # the harness keeps one bucket array and skb per element in memory


def die(msg):
    sys.exit(f"vs-eiffel: {msg}")


def strip_comments(text):
    """The C text with comments blanked (strings and chars kept), so braces
    and names inside comments do not count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def top_level_blocks(text):
    """(header, body-with-braces, trailing) of each top-level `{...}`: the
    header is the text since the previous top-level `;` or `}`."""
    blocks, depth, start, head_from = [], 0, 0, 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                header = text[head_from:start]
                trail = ";" if text[i + 1:].lstrip().startswith(";") else ""
                blocks.append((header.strip(), text[start:i + 1], trail))
                head_from = i + 1
        elif c == ";" and depth == 0:
            head_from = i + 1
        i += 1
    return blocks


def extract(path):
    """The structs and functions the harness needs, cut from sch_gq.c."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    blocks = top_level_blocks(text)
    found = {}
    for header, body, trail in blocks:
        # Preprocessor lines and macro calls without `;` are not part of a
        # definition's header.
        lines = [ln.strip() for ln in header.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        sig = " ".join(lines)
        for name in STRUCTS:
            if lines and re.fullmatch(rf"struct\s+{name}", lines[-1]):
                found[("struct", name)] = f"struct {name} {body};"
        if "=" in sig or "(" not in sig:
            continue
        m = re.search(r"([A-Za-z_]\w*)\s*\(", sig)
        if m and m.group(1) in FUNCTIONS:
            # From the return type on: drop macro calls left before it.
            sig = sig[sig.rfind(")", 0, m.start()) + 1:].strip() if ")" in sig[:m.start()] else sig
            found[("fn", m.group(1))] = (sig, body)
    missing = [n for n in STRUCTS if ("struct", n) not in found] + \
              [n for n in FUNCTIONS if ("fn", n) not in found]
    if missing:
        die(f"{path} has no {', '.join(missing)}: this script needs the gradient-queue version of "
            f"net/sched/sch_gq.c (saeed/eiffel_linux at commit {GRADIENT_COMMIT}); later versions "
            f"replaced the gradient arithmetic with __ffs")
    if "meta_tmp" not in found[("fn", "gq_inc_meta")][1]:
        die(f"{path}: gq_inc_meta does not add gradient weights (meta_tmp): not the gradient-queue version "
            f"(commit {GRADIENT_COMMIT})")
    return found


SHIM = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef uint64_t u64;
typedef uint32_t u32;
typedef int64_t s64;
/* The kernel's skb, reduced to what the bucket lists touch, plus the
   element's handle (its index in the rank file). */
struct sk_buff { struct sk_buff *next; u64 trans_time; u32 handle; };
struct qdisc_watchdog { int unused; };
struct Qdisc { void *priv; u32 limit; int dev_queue; };
struct nlattr;
struct netlink_ext_ack;
static void *qdisc_priv(struct Qdisc *sch) { return sch->priv; }
static u64 harness_now;
#define ktime_get_ns() harness_now
#define kmalloc_node(size, flags, node) calloc(1, (size))
#define vmalloc_node(size, node) calloc(1, (size))
#define netdev_queue_numa_node_read(q) 0
#define qdisc_watchdog_init(w, s) ((void)0)
#define printk(...) ((void)0)
#define KERN_DEBUG ""
#define GFP_KERNEL 0
#define __GFP_REPEAT 0
#define __GFP_NOWARN 0
#define __GFP_RETRY_MAYFAIL 0
#define likely(x) (x)
#define unlikely(x) (x)
"""

HARNESS = r"""
static u64 *ranks;
static struct sk_buff *skbs;
static u64 n, nbuckets;
static u32 *remaining;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void fill(struct gradient_queue *gq) {
    for (u64 h = 0; h < n; h++)
        gq_push(gq, &skbs[h], ranks[h] * gq->grnlrty);
}

/* The gradient find-min: gq_get_min_index, pop that bucket, gq_dec_meta. */
static struct sk_buff *pop_gradient(struct gradient_queue *gq) {
    uint64_t idx = (uint64_t)gq_get_min_index(gq);
    if (idx >= gq->num_of_buckets || !gq->buckets[idx].qlen) {
        fprintf(stderr, "gq_get_min_index gave bucket %llu, which is empty\n", (unsigned long long)idx);
        exit(3);
    }
    struct sk_buff *skb = gq_bucket_dequeue_head(&gq->buckets[idx]);
    gq_dec_meta(gq, &idx);
    gq->num_of_elements--;
    return skb;
}

/* The qdisc's own dequeue: the head scans forward to the next bucket. */
static struct sk_buff *pop_wheel(struct gradient_queue *gq) {
    struct sk_buff *skb = gq_extract(gq, (nbuckets - 1) * gq->grnlrty);
    if (!skb) {
        fprintf(stderr, "gq_extract found nothing with %llu queued\n", (unsigned long long)gq->num_of_elements);
        exit(3);
    }
    return skb;
}

static u64 drain(struct gradient_queue *gq, int wheel) {
    u64 sum = 0;
    while (gq->num_of_elements) {
        struct sk_buff *skb = wheel ? pop_wheel(gq) : pop_gradient(gq);
        sum += ranks[skb->handle] ^ skb->handle;
    }
    gq->head_ts = 0; /* the next fill starts at rank 0 again, as fairway's fixed-range queues do */
    return sum;
}

/* Untimed: dequeues not at the minimum rank still queued. */
static u64 errors(struct gradient_queue *gq, int wheel) {
    memset(remaining, 0, nbuckets * sizeof *remaining);
    for (u64 h = 0; h < n; h++) remaining[ranks[h]]++;
    fill(gq);
    u64 min = 0, errs = 0, got = 0;
    while (gq->num_of_elements) {
        struct sk_buff *skb = wheel ? pop_wheel(gq) : pop_gradient(gq);
        u64 r = ranks[skb->handle];
        while (remaining[min] == 0) min++;
        errs += r != min;
        remaining[r]--;
        got++;
    }
    gq->head_ts = 0;
    if (got != n) { fprintf(stderr, "drained %llu of %llu\n", (unsigned long long)got, (unsigned long long)n); exit(3); }
    return errs;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: harness RANKS gq|wheel MIN_OPS BATCHES\n"); return 2; }
    int wheel = strcmp(argv[2], "wheel") == 0;
    u64 min_ops = strtoull(argv[3], 0, 10), batches = strtoull(argv[4], 0, 10);
    FILE *f = fopen(argv[1], "r");
    unsigned long long b, k, occ, count;
    if (!f || fscanf(f, "%llu %llu %llu %llu", &b, &k, &occ, &count) != 4) { fprintf(stderr, "bad rank file\n"); return 2; }
    nbuckets = b; n = count;
    ranks = malloc(n * sizeof *ranks);
    skbs = calloc(n, sizeof *skbs);
    remaining = malloc(nbuckets * sizeof *remaining);
    for (u64 h = 0; h < n; h++) {
        unsigned long long r;
        if (fscanf(f, "%llu", &r) != 1 || r >= nbuckets) { fprintf(stderr, "bad rank %llu\n", (unsigned long long)h); return 2; }
        ranks[h] = r;
        skbs[h].handle = (u32)h;
    }
    fclose(f);
    struct gq_sched_data q;
    memset(&q, 0, sizeof q);
    struct Qdisc sch = { &q, 0, 0 };
    harness_now = 0;
    if (gq_init(&sch, NULL) != 0) { fprintf(stderr, "gq_init failed\n"); return 3; }
    struct gradient_queue *gq = q.gq;
    u64 leaves = 1;
    for (u64 i = 0; i < gq->l; i++) leaves *= gq->w;
    if (gq->num_of_buckets != nbuckets || leaves < nbuckets) {
        fprintf(stderr, "their queue has %llu buckets under %llu leaves, not %llu\n",
                (unsigned long long)gq->num_of_buckets, (unsigned long long)leaves, (unsigned long long)nbuckets);
        return 3;
    }
    u64 errs = errors(gq, wheel);
    u64 reps = (min_ops + n - 1) / n;
    if (reps < 1) reps = 1;
    u64 check = 0;
    fill(gq); check += drain(gq, wheel); /* warm-up */
    double best_fill = 0, best_drain = 0, spent = 0;
    for (u64 batch = 0; batch < (batches ? batches : 1); batch++) {
        double tf = 0, td = 0;
        for (u64 r = 0; r < reps; r++) {
            double t0 = now_ns();
            fill(gq);
            double t1 = now_ns();
            check += drain(gq, wheel);
            double t2 = now_ns();
            tf += t1 - t0; td += t2 - t1;
        }
        spent += tf + td;
        if (batch == 0 || tf + td < best_fill + best_drain) { best_fill = tf; best_drain = td; }
        if (batch >= 2 && spent > 250e6) break;
    }
    double fill_ns = best_fill / reps / n, drain_ns = best_drain / reps / n;
    printf("{\"elements\": %llu, \"errors\": %llu, \"levels\": %llu, \"fill_ns\": %.3f, \"drain_ns\": %.3f, "
           "\"mpps\": %.3f, \"checksum\": %llu}\n", (unsigned long long)n, (unsigned long long)errs,
           (unsigned long long)gq->l, fill_ns, drain_ns, 1e3 / (fill_ns + drain_ns), (unsigned long long)check);
    return 0;
}
"""


def build_harness(src, tmp):
    found = extract(src)
    parts = [SHIM]
    for name in STRUCTS:
        parts.append(found[("struct", name)])
    # Prototypes first: the file's own order calls some before they appear.
    parts += [found[("fn", name)][0] + ";" for name in FUNCTIONS]
    for name in FUNCTIONS:
        sig, body = found[("fn", name)]
        if name == "gq_init":
            # The horizon in ns is a constant of gq_init; the harness sets it
            # to as many granules as the configuration has buckets.
            body, k = re.subn(r"(\bu64\s+horizon\s*=\s*)\d+\s*;", r"\1(u64)HARNESS_BUCKETS * granularity;", body)
            if k != 1 or "horizon / granularity" not in body:
                die(f"{src}: gq_init does not set `u64 horizon = ...;` and num_of_buckets = horizon / granularity "
                    f"as the gradient-queue version (commit {GRADIENT_COMMIT}) does")
        parts.append(f"{sig}\n{body}")
    parts.append(HARNESS)
    c_file = os.path.join(tmp, "gq_harness.c")
    with open(c_file, "w") as f:
        f.write("\n".join(parts))
    return c_file


def compile_for(c_file, buckets, tmp):
    binary = os.path.join(tmp, f"gq_harness_{buckets}")
    cc = os.environ.get("CC", "cc")
    # -w: kernel-style code (int/pointer mixes, unused variables) warns in
    # user space; the code compiled is the file's.
    cmd = [cc, "-O2", "-w", "-fgnu89-inline", f"-DHARNESS_BUCKETS={buckets}ULL", "-o", binary, c_file]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"compiling the harness failed ({' '.join(cmd)}):\n{r.stderr}")
    return binary


def pinned(cpu, cmd):
    return ["taskset", "-c", str(cpu)] + cmd


def run_authors(binary, cpu, ranks_file, mode, min_ops, batches):
    r = subprocess.run(pinned(cpu, [binary, ranks_file, mode, str(min_ops), str(batches)]),
                       capture_output=True, text=True)
    if r.returncode != 0:
        die(f"the authors' queue ({mode}) failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def run_fairway(args, buckets, occupancy):
    cmd = [args.fairway, "bench-pq", "--queues", ",".join(FAIRWAY_QUEUES), "--buckets", str(buckets),
           "--per-bucket", str(args.per_bucket), "--occupancy", str(occupancy), "--seed", str(args.seed),
           "--alpha", str(args.alpha), "--min-ops", str(args.min_ops), "--batches", str(args.batches), "--json"]
    r = subprocess.run(pinned(args.cpu, cmd), capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return {row["queue"]: row for row in rows}


def dump_ranks(args, buckets, occupancy, path):
    cmd = [args.fairway, "bench-pq", "--buckets", str(buckets), "--per-bucket", str(args.per_bucket),
           "--occupancy", str(occupancy), "--seed", str(args.seed), "--dump-ranks", path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{' '.join(cmd)} failed: {r.stderr.strip()} (a fairway build with --dump-ranks is needed)")


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def int_list(flag, text, lo, hi):
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        die(f"{flag} {text!r} is not a comma-separated list of integers")
    bad = [v for v in values if not lo <= v <= hi]
    if bad or not values:
        die(f"{flag} {text!r}: each value must be in {lo}..={hi}")
    return values


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sch_gq", help="a copy of net/sched/sch_gq.c of saeed/eiffel_linux, gradient-queue version")
    ap.add_argument("--buckets", default=DEFAULT_BUCKETS, help=f"bucket counts, comma separated, each in 2..={MAX_BUCKETS} (default {DEFAULT_BUCKETS})")
    ap.add_argument("--occupancy", default=DEFAULT_OCCUPANCY, help=f"percent of buckets occupied, comma separated, each in 1..=100 (default {DEFAULT_OCCUPANCY})")
    ap.add_argument("--per-bucket", type=int, default=1, help="elements per occupied bucket, 1..=64 (default 1, as Figs. 13-14)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per configuration, 1..=100 (default 5)")
    ap.add_argument("--min-ops", type=int, default=50_000, help="elements per timed batch, 1..=10^8 (default 50000, bench-pq's)")
    ap.add_argument("--batches", type=int, default=15, help="timed batches, the best is kept, 1..=1000 (default 15, bench-pq's)")
    ap.add_argument("--seed", type=int, default=1, help="workload seed (default 1, as fairway reproduce)")
    ap.add_argument("--alpha", type=int, default=16, help="alpha of fairway's approximate queue (default 16, the paper's)")
    ap.add_argument("--cpu", type=int, default=1, help="the one CPU every run is pinned to (default 1)")
    ap.add_argument("--fairway", default="target/release/fairway", help="the fairway binary")
    ap.add_argument("--json", action="store_true", help="one JSON object per configuration")
    args = ap.parse_args(argv)
    args.bucket_list = int_list("--buckets", args.buckets, 2, MAX_BUCKETS)
    args.occupancy_list = int_list("--occupancy", args.occupancy, 1, 100)
    for flag, v, lo, hi in (("--per-bucket", args.per_bucket, 1, 64), ("--rounds", args.rounds, 1, 100),
                            ("--min-ops", args.min_ops, 1, 10**8), ("--batches", args.batches, 1, 1000),
                            ("--cpu", args.cpu, 0, os.cpu_count() - 1)):
        if not lo <= v <= hi:
            die(f"{flag} {v}: must be in {lo}..={hi}")
    return args


def main(argv=None):
    args = parse_args(argv)
    if not os.path.isfile(args.sch_gq):
        die(f"{args.sch_gq}: no such file (see the module doc for how to get it)")
    if not os.access(args.fairway, os.X_OK):
        die(f"{args.fairway} not found: run `cargo build --release` first")
    if shutil.which("taskset") is None:
        die("needs taskset (util-linux) to pin every run to one CPU")
    with tempfile.TemporaryDirectory(prefix="vs-eiffel-") as tmp:
        c_file = build_harness(args.sch_gq, tmp)
        for buckets in args.bucket_list:
            binary = compile_for(c_file, buckets, tmp)
            for occupancy in args.occupancy_list:
                ranks_file = os.path.join(tmp, f"ranks-{buckets}-{occupancy}.txt")
                dump_ranks(args, buckets, occupancy, ranks_file)
                rows = {q: [] for q in AUTHORS + FAIRWAY_QUEUES}
                for r in range(args.rounds):
                    # ABBA: alternate which side runs first in a round.
                    for side in (["c", "fw"] if r % 2 == 0 else ["fw", "c"]):
                        if side == "c":
                            for q, mode in zip(AUTHORS, ("gq", "wheel")):
                                rows[q].append(run_authors(binary, args.cpu, ranks_file, mode,
                                                           args.min_ops, args.batches))
                        else:
                            got = run_fairway(args, buckets, occupancy)
                            for q in FAIRWAY_QUEUES:
                                rows[q].append(got[q])
                report(args, buckets, occupancy, rows)


RATIOS = [("approx", "cffs"), ("approx", "authors-gq"), ("gradient", "authors-gq"), ("authors-gq", "cffs")]


def report(args, buckets, occupancy, rows):
    mpps = {q: [row["mpps"] for row in rs] for q, rs in rows.items()}
    elements = rows["authors-gq"][0]["elements"]
    errors = {q: rows[q][0]["errors"] / elements for q in AUTHORS}
    errors["approx"] = rows["approx"][0].get("error_rate")
    out = {
        "buckets": buckets, "occupancy": occupancy, "per_bucket": args.per_bucket, "elements": elements,
        "seed": args.seed, "alpha": args.alpha, "rounds": args.rounds, "cpu": args.cpu,
        "authors_levels": rows["authors-gq"][0]["levels"],
        "error_rate": errors,
        "mpps": {q: spread(v) for q, v in mpps.items()},
        "ratios": {f"{a}/{b}": spread([x / y for x, y in zip(mpps[a], mpps[b])]) for a, b in RATIOS},
    }
    if args.json:
        print(json.dumps(out))
        return
    if not getattr(report, "header_done", False):
        report.header_done = True
        print(f"per bucket {args.per_bucket}, seed {args.seed}, alpha {args.alpha}, {args.rounds} rounds on CPU {args.cpu}; "
              f"Mpps: median of the rounds; ratios: median (min-max) of per-round ratios; errors: share of dequeues "
              f"not at the minimum (gradient and cffs: exact queues, not counted by bench-pq)")
        print(f"{'buckets':>7} {'occ':>4} | {'err a-gq':>8} {'err a-wh':>8} {'err approx':>10} | "
              f"{'a-gq':>6} {'a-wheel':>7} {'gradient':>8} {'approx':>6} {'cffs':>6} | "
              + " ".join(f"{a + '/' + b:>18}" for a, b in RATIOS))
    cell = lambda s: f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"
    e = lambda x: "-" if x is None else f"{100 * x:.2f}%"
    m = out["mpps"]
    print(f"{buckets:>7} {occupancy:>3}% | {e(errors['authors-gq']):>8} {e(errors['authors-wheel']):>8} "
          f"{e(errors['approx']):>10} | {m['authors-gq']['median']:6.1f} {m['authors-wheel']['median']:7.1f} "
          f"{m['gradient']['median']:8.1f} {m['approx']['median']:6.1f} {m['cffs']['median']:6.1f} | "
          + " ".join(f"{cell(out['ratios'][f'{a}/{b}']):>18}" for a, b in RATIOS), flush=True)


if __name__ == "__main__":
    main()
