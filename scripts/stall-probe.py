#!/usr/bin/env python3
"""How long each CPU stops running a thread that never blocks, with nothing else running.

One thread per CPU (a process each, pinned) reads CLOCK_MONOTONIC in a loop
for the given seconds and reports the gaps between consecutive reads longer
than 50 us. A gap is time the CPU spent elsewhere: the host of a virtual
machine running something else, the guest kernel's own work, or the kernel's
real-time throttling pause. docs/real-traffic.md uses it to tell such gaps
from the arbiter's own behaviour when Eq. (1) fails.

Usage (root, for the real-time priority; drop --fifo to run at normal priority):
  scripts/stall-probe.py [--seconds 0.7] [--fifo 50] [--cpus 0,1]
Keep real-time runs under ~0.9 s: longer ones meet the kernel's real-time
throttling pause (50 ms of every second) by design.
"""
import argparse
import os
import time


def probe(cpu, seconds, fifo):
    os.sched_setaffinity(0, {cpu})
    if fifo:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))
    end = time.monotonic_ns() + int(seconds * 1e9)
    prev = time.monotonic_ns()
    gaps = []
    while True:
        t = time.monotonic_ns()
        if t - prev > 50_000:
            gaps.append(t - prev)
        prev = t
        if t > end:
            break
    gaps.sort()
    largest = ", ".join(f"{g / 1e3:.0f}" for g in gaps[-8:])
    print(f"cpu {cpu}: {len(gaps)} gaps over 50 us; largest (us): {largest or '-'}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.7)
    ap.add_argument("--fifo", type=int, default=0, help="SCHED_FIFO priority (0: normal)")
    ap.add_argument("--cpus", default=",".join(str(c) for c in sorted(os.sched_getaffinity(0))))
    a = ap.parse_args()
    if not 0 < a.seconds <= 60:
        ap.error(f"--seconds {a.seconds} outside (0, 60]")
    if not 0 <= a.fifo <= 99:
        ap.error(f"--fifo {a.fifo} outside 0..=99")
    pids = []
    for cpu in (int(c) for c in a.cpus.split(",")):
        pid = os.fork()
        if pid == 0:
            probe(cpu, a.seconds, a.fifo)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
