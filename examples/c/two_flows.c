/*
 * Two flows through a fairway scheduler, from C.
 *
 * Flow 0 (weight 3) and flow 1 (weight 1) are kept backlogged with
 * 1000-byte packets; after DEQUEUES dequeues, flow 0 must have received
 * 3/4 of the bytes (within SHARE_TOLERANCE). Packets are real heap
 * buffers whose first byte records the flow, so a build under
 * AddressSanitizer also checks that every pointer comes back intact and is
 * freed exactly once.
 *
 * Build (from the repository root, after `cargo build --release -p fairway-ffi`):
 *   cc -std=c11 -O2 -Icrates/ffi/include examples/c/two_flows.c \
 *      target/release/libfairway_ffi.a -lpthread -ldl -lm -o two_flows
 *   ./two_flows "qfq+:m=8"
 * Exit status 0 when the shares match; the shares are printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairway.h"

enum { PKT_LEN = 1000, BACKLOG = 16, DEQUEUES = 40000 };
static const double SHARE_TOLERANCE = 0.01;

static int check(FairwayScheduler *s, FairwayStatus st, const char *what) {
    if (st != FAIRWAY_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, fairway_status_name(st),
                fairway_sched_last_error(s));
        return 0;
    }
    return 1;
}

static unsigned char *new_packet(uint32_t flow) {
    unsigned char *p = malloc(PKT_LEN);
    if (p == NULL) {
        perror("malloc");
        exit(2);
    }
    memset(p, (int)flow, PKT_LEN);
    return p;
}

int main(int argc, char **argv) {
    const char *spec = argc > 1 ? argv[1] : "qfq+:m=8";
    char err[256];
    FairwayScheduler *s = NULL;
    FairwayStatus st = fairway_sched_create(spec, 2, 2 * BACKLOG, &s, err, sizeof err);
    if (st != FAIRWAY_OK) {
        fprintf(stderr, "create '%s': %s (%s)\n", spec, fairway_status_name(st), err);
        return 1;
    }
    const uint32_t weights[2] = {3, 1};
    for (uint32_t f = 0; f < 2; f++) {
        if (!check(s, fairway_sched_add_flow(s, f, weights[f], 1500), "add_flow"))
            return 1;
        for (int i = 0; i < BACKLOG; i++) {
            if (!check(s, fairway_sched_enqueue(s, f, new_packet(f), PKT_LEN), "enqueue"))
                return 1;
        }
    }
    /* A misuse the library reports instead of crashing on. */
    if (fairway_sched_enqueue(s, 7, NULL, PKT_LEN) != FAIRWAY_ERR_UNKNOWN_FLOW) {
        fprintf(stderr, "enqueue on an unknown flow was not rejected\n");
        return 1;
    }

    uint64_t bytes[2] = {0, 0};
    for (int i = 0; i < DEQUEUES; i++) {
        FairwayPacket p;
        if (!check(s, fairway_sched_dequeue(s, &p), "dequeue"))
            return 1;
        unsigned char *buf = p.data;
        if (p.flow > 1 || p.len != PKT_LEN || buf[0] != p.flow) {
            fprintf(stderr, "packet %d came back altered\n", i);
            return 1;
        }
        bytes[p.flow] += p.len;
        /* Keep the flow backlogged: re-use the buffer. */
        if (!check(s, fairway_sched_enqueue(s, p.flow, buf, p.len), "enqueue"))
            return 1;
    }

    /* Get every buffer back, then free it. */
    for (uint32_t f = 0; f < 2; f++) {
        FairwayPacket back[BACKLOG];
        size_t n = 0;
        if (!check(s, fairway_sched_remove_flow(s, f, back, BACKLOG, &n), "remove_flow"))
            return 1;
        for (size_t i = 0; i < n; i++)
            free(back[i].data);
    }
    FairwaySchedStats stats;
    if (!check(s, fairway_sched_stats(s, &stats), "stats"))
        return 1;
    if (stats.enqueued_packets !=
        stats.dequeued_packets + stats.reclaimed_packets + stats.queued_packets) {
        fprintf(stderr, "packets not conserved\n");
        return 1;
    }
    if (fairway_sched_destroy(s) != FAIRWAY_OK ||
        fairway_sched_destroy(s) != FAIRWAY_ERR_INVALID_HANDLE) {
        fprintf(stderr, "destroy / double destroy misbehaved\n");
        return 1;
    }

    double share0 = (double)bytes[0] / (double)(bytes[0] + bytes[1]);
    double want0 = (double)weights[0] / (double)(weights[0] + weights[1]);
    printf("%s: flow 0 got %.4f of the bytes (weight share %.4f), flow 1 %.4f\n", spec,
           share0, want0, 1.0 - share0);
    if (share0 < want0 - SHARE_TOLERANCE || share0 > want0 + SHARE_TOLERANCE) {
        fprintf(stderr, "share of flow 0 is off by more than %.3f\n", SHARE_TOLERANCE);
        return 1;
    }
    return 0;
}
