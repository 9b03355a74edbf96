/*
 * Cost of one dequeue + enqueue pair through the fairway C ABI.
 *
 * FLOWS flows (weights 1..4, max_len 1500) each hold BACKLOG packets of
 * lengths 64..1500 bytes; every step dequeues the next packet and enqueues
 * it again on its flow, so the backlog stays constant. Prints one line per
 * round: "round R ns_per_pair X". The same workload in Rust, and the ratio,
 * come from `cargo bench -p fairway-ffi --bench abi_pair`, which builds
 * and runs this program. The single enqueue and dequeue are the header's
 * inline calls (build with -DFAIRWAY_NO_INLINE for the exported functions).
 *
 * Usage: bench_pairs SPEC FLOWS PAIRS ROUNDS
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fairway.h"

enum { BACKLOG = 4 };

static uint32_t packet_len(uint64_t i) { return 64 + (uint32_t)((i * 2654435761u) % 1437u); }

/* CPU time of this thread: time spent descheduled on a shared machine is
 * not counted (the Rust columns of the benchmark measure the same way). */
static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s SPEC FLOWS PAIRS ROUNDS\n", argv[0]);
        return 2;
    }
    const char *spec = argv[1];
    uint32_t flows = (uint32_t)strtoul(argv[2], NULL, 10);
    uint64_t pairs = strtoull(argv[3], NULL, 10);
    int rounds = atoi(argv[4]);
    char err[256];
    FairwayScheduler *s = NULL;
    FairwayStatus st = fairway_sched_create(spec, flows, flows * BACKLOG, &s, err, sizeof err);
    if (st != FAIRWAY_OK) {
        fprintf(stderr, "create: %s (%s)\n", fairway_status_name(st), err);
        return 1;
    }
    uint64_t id = 0;
    for (uint32_t f = 0; f < flows; f++) {
        if (fairway_sched_add_flow(s, f, 1 + f % 4, 1500) != FAIRWAY_OK) {
            fprintf(stderr, "add_flow: %s\n", fairway_sched_last_error(s));
            return 1;
        }
        for (int i = 0; i < BACKLOG; i++, id++) {
            if (fairway_sched_enqueue(s, f, (void *)(uintptr_t)(id + 1), packet_len(id)) !=
                FAIRWAY_OK) {
                fprintf(stderr, "enqueue: %s\n", fairway_sched_last_error(s));
                return 1;
            }
        }
    }
    uint64_t checksum = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns();
        for (uint64_t i = 0; i < pairs; i++) {
            FairwayPacket p;
            if (fairway_sched_dequeue(s, &p) != FAIRWAY_OK ||
                fairway_sched_enqueue(s, p.flow, p.data, p.len) != FAIRWAY_OK) {
                fprintf(stderr, "pair %llu: %s\n", (unsigned long long)i,
                        fairway_sched_last_error(s));
                return 1;
            }
            checksum += p.flow;
        }
        double t1 = now_ns();
        printf("round %d ns_per_pair %.3f\n", r, (t1 - t0) / (double)pairs);
    }
    fprintf(stderr, "checksum %llu\n", (unsigned long long)checksum);
    fairway_sched_destroy(s);
    return 0;
}
