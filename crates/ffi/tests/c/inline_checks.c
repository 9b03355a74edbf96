/*
 * The checks of the header's inline fairway_sched_enqueue and
 * fairway_sched_dequeue, driven from C: every misuse the exported functions
 * refuse must be refused through the inline calls too, with the same status
 * and nothing changed. Built and run by tests/c_inline.rs, also with
 * FAIRWAY_NO_INLINE, against a header of another layout, and against
 * headers with one inline check removed (each of which must make this
 * program fail).
 *
 * Usage: inline_checks SPEC
 * Prints "inline calls: yes|no; live tag matches: yes|no", then "ok".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairway.h"

static int failures = 0;

static void expect(FairwayStatus got, FairwayStatus want, const char *what, int line) {
    if (got != want) {
        fprintf(stderr, "line %d: %s returned %s, expected %s\n", line, what,
                fairway_status_name(got), fairway_status_name(want));
        failures++;
    }
}

#define EXPECT(call, want) expect((call), (want), #call, __LINE__)

static void check(int ok, const char *what, int line) {
    if (!ok) {
        fprintf(stderr, "line %d: %s does not hold\n", line, what);
        failures++;
    }
}

#define CHECK(cond) check((cond), #cond, __LINE__)

static uint64_t queued(FairwayScheduler *s) {
    FairwayBacklog b = {0, 0};
    EXPECT(fairway_sched_backlog(s, &b), FAIRWAY_OK);
    return b.packets;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s SPEC\n", argv[0]);
        return 2;
    }
    char err[256];
    FairwayScheduler *s = NULL;
    if (fairway_sched_create(argv[1], 4, 16, &s, err, sizeof err) != FAIRWAY_OK) {
        fprintf(stderr, "create: %s\n", err);
        return 2;
    }
    uint64_t tag;
    memcpy(&tag, (const void *)s, sizeof tag);
#ifdef fairway_sched_enqueue
    const char *inlined = "yes";
#else
    const char *inlined = "no";
#endif
    printf("inline calls: %s; live tag matches: %s\n", inlined,
           tag == FAIRWAY_SCHED_LIVE_TAG ? "yes" : "no");

    EXPECT(fairway_sched_add_flow(s, 0, 1, 1500), FAIRWAY_OK);
    EXPECT(fairway_sched_enqueue(s, 0, (void *)0x10, 100), FAIRWAY_OK);
    FairwayPacket p = {NULL, 0, 0};

    /* A null handle. */
    EXPECT(fairway_sched_enqueue(NULL, 0, (void *)0x20, 100), FAIRWAY_ERR_INVALID_HANDLE);
    EXPECT(fairway_sched_dequeue(NULL, &p), FAIRWAY_ERR_INVALID_HANDLE);

    /* Misaligned handles: every address inside the tag word. */
    for (size_t k = 1; k < 8; k++) {
        FairwayScheduler *m = (FairwayScheduler *)(void *)((char *)s + k);
        EXPECT(fairway_sched_enqueue(m, 0, (void *)0x20, 100), FAIRWAY_ERR_INVALID_HANDLE);
        EXPECT(fairway_sched_dequeue(m, &p), FAIRWAY_ERR_INVALID_HANDLE);
    }

    /* A null or misaligned out: refused with its message, packet kept. */
    EXPECT(fairway_sched_dequeue(s, NULL), FAIRWAY_ERR_NULL_POINTER);
    CHECK(strcmp(fairway_sched_last_error(s), "dequeue: out is null") == 0);
    uint64_t buf[4] = {0, 0, 0, 0};
    FairwayPacket *skewed = (FairwayPacket *)(void *)((char *)buf + 4);
    EXPECT(fairway_sched_dequeue(s, skewed), FAIRWAY_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(fairway_sched_last_error(s), "dequeue: out is not aligned for its type") == 0);
    CHECK(queued(s) == 1);

    /* A length beyond 2^32 - 1 is refused, not truncated; a refused
     * packet is counted and stays the caller's. */
    if (sizeof(size_t) > 4) {
        size_t long_len = (size_t)0xffffffffu + 13;
        EXPECT(fairway_sched_enqueue(s, 0, (void *)0x30, long_len), FAIRWAY_ERR_PACKET_TOO_LONG);
    }
    EXPECT(fairway_sched_enqueue(s, 3, (void *)0x30, 100), FAIRWAY_ERR_UNKNOWN_FLOW);
    EXPECT(fairway_sched_enqueue(s, 0, (void *)0x30, 0), FAIRWAY_ERR_EMPTY_PACKET);
    CHECK(queued(s) == 1);

    /* A handle of the other kind. */
    FairwayPq *q = NULL;
    if (fairway_pq_create(64, 16, &q, err, sizeof err) != FAIRWAY_OK) {
        fprintf(stderr, "pq create: %s\n", err);
        return 2;
    }
    FairwayScheduler *foreign = (FairwayScheduler *)(void *)q;
    EXPECT(fairway_sched_enqueue(foreign, 0, (void *)0x20, 100), FAIRWAY_ERR_INVALID_HANDLE);
    EXPECT(fairway_sched_dequeue(foreign, &p), FAIRWAY_ERR_INVALID_HANDLE);

    /* A poisoned handle. A panic cannot be provoked from C, so the
     * poisoned tag ("FWYSCPOI" read as a big-endian number, the library's
     * private value) is written over the tag, then the live tag put back. */
    const uint64_t poisoned = 0x4657595343504f49ull;
    memcpy((void *)s, &poisoned, sizeof poisoned);
    EXPECT(fairway_sched_enqueue(s, 0, (void *)0x20, 100), FAIRWAY_ERR_POISONED);
    EXPECT(fairway_sched_dequeue(s, &p), FAIRWAY_ERR_POISONED);
    memcpy((void *)s, &tag, sizeof tag);
    CHECK(queued(s) == 1);

    /* The packet comes back unchanged; then the queue is empty. */
    EXPECT(fairway_sched_dequeue(s, &p), FAIRWAY_OK);
    CHECK(p.data == (void *)0x10 && p.len == 100 && p.flow == 0);
    EXPECT(fairway_sched_dequeue(s, &p), FAIRWAY_EMPTY);
    FairwaySchedStats st;
    EXPECT(fairway_sched_stats(s, &st), FAIRWAY_OK);
    CHECK(st.enqueued_packets == 1 && st.dequeued_packets == 1 && st.dequeued_bytes == 100);
    CHECK(st.rejected_packets == (sizeof(size_t) > 4 ? 3u : 2u));

    /* The exported functions, called by name, give the same answers. */
    EXPECT((fairway_sched_enqueue)(s, 0, (void *)0x40, 200), FAIRWAY_OK);
    EXPECT((fairway_sched_dequeue)(s, NULL), FAIRWAY_ERR_NULL_POINTER);
    EXPECT((fairway_sched_dequeue)(s, &p), FAIRWAY_OK);
    CHECK(p.data == (void *)0x40 && p.len == 200);

    /* A destroyed handle (a tombstone), also after the same calls again. */
    EXPECT(fairway_sched_enqueue(s, 0, (void *)0x10, 100), FAIRWAY_OK);
    EXPECT(fairway_sched_destroy(s), FAIRWAY_OK);
    for (int i = 0; i < 2; i++) {
        EXPECT(fairway_sched_enqueue(s, 0, (void *)0x20, 100), FAIRWAY_ERR_INVALID_HANDLE);
        EXPECT(fairway_sched_dequeue(s, &p), FAIRWAY_ERR_INVALID_HANDLE);
    }
    EXPECT(fairway_pq_destroy(q), FAIRWAY_OK);

    if (failures > 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
