/*
 * Two clients reading one file through fairway's I/O scheduler, from C.
 *
 * Client 0 (weight 2) and client 1 (weight 1) each read their own half of
 * FILE sequentially in 64 KiB requests, keeping DEPTH synchronous reads
 * outstanding, for SECONDS seconds; each completion's buffer is reused for
 * the client's next read. Prints each client's share of the bytes read
 * after the first sixth of the run (under BFQ, 2/3 and 1/3 while both are
 * backlogged), then collects every outstanding request and checks that
 * each one completed exactly once.
 *
 * Build (from the repository root, after `cargo build --release -p fairway-ffi`):
 *   cc -std=c11 -O2 -Icrates/ffi/include examples/c/io_two_clients.c \
 *      target/release/libfairway_ffi.a -lpthread -ldl -lm -o io_two_clients
 *   ./io_two_clients FILE [SECONDS [SPEC]]     (defaults: 1, "bfq:t_max_ms=0")
 * FILE must hold at least 1 MiB; it is opened read-only with O_DIRECT
 * (buffered where the file system refuses O_DIRECT). Exit status 0 when
 * every read succeeded and completed once; 3 where io_uring is unavailable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fairway.h"

enum { READ_LEN = 65536, DEPTH = 4, CLIENTS = 2 };

static double now_s(void) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int check(FairwayIoEngine *e, FairwayStatus st, const char *what) {
    if (st != FAIRWAY_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, fairway_status_name(st),
                e ? fairway_io_last_error(e) : "");
        return 0;
    }
    return 1;
}

struct reader {
    uint64_t id;
    uint64_t start, end, next; /* its half of the file, next offset */
    uint64_t submitted, collected;
};

static int submit(FairwayIoEngine *e, uint64_t target, struct reader *r, int k,
                  FairwayIoBuf *buf) {
    uint64_t request;
    FairwayStatus st = fairway_io_submit(e, target, r->id, FAIRWAY_IO_OP_READ, r->next, buf,
                                         READ_LEN, true, (uint64_t)k, &request);
    if (!check(e, st, "submit")) {
        return 0; /* refused: the buffer is still ours */
    }
    r->submitted++;
    r->next += READ_LEN;
    if (r->next + READ_LEN > r->end) {
        r->next = r->start;
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s FILE [SECONDS [SPEC]]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    const char *spec = argc > 3 ? argv[3] : "bfq:t_max_ms=0";
    FILE *f = fopen(path, "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
        perror(path);
        return 2;
    }
    long size = ftell(f);
    fclose(f);
    if (size < (1L << 20)) {
        fprintf(stderr, "%s: %ld bytes, at least 1 MiB needed\n", path, size);
        return 2;
    }

    char err[256];
    FairwayIoEngine *e;
    FairwayStatus st = fairway_io_create(spec, 1, 16, 64, &e, err, sizeof err);
    if (st == FAIRWAY_ERR_UNAVAILABLE) {
        printf("io_uring unavailable: %s\n", err);
        return 3;
    }
    if (st != FAIRWAY_OK) {
        fprintf(stderr, "create: %s (%s)\n", fairway_status_name(st), err);
        return 1;
    }
    uint64_t target;
    st = fairway_io_open(e, path, FAIRWAY_IO_OPEN_DIRECT, 4096, &target);
    if (st == FAIRWAY_ERR_OS) {
        printf("O_DIRECT refused (%s): reading through the page cache\n",
               fairway_io_last_error(e));
        st = fairway_io_open(e, path, 0, 4096, &target);
    }
    if (!check(e, st, "open")) {
        return 1;
    }

    uint64_t half = (uint64_t)size / 2 / READ_LEN * READ_LEN;
    struct reader r[CLIENTS];
    const uint32_t weight[CLIENTS] = {2, 1};
    for (int k = 0; k < CLIENTS; k++) {
        memset(&r[k], 0, sizeof r[k]);
        r[k].start = r[k].next = half * (uint64_t)k;
        r[k].end = half * (uint64_t)(k + 1);
        if (!check(e, fairway_io_add_client(e, weight[k], &r[k].id), "add_client")) {
            return 1;
        }
        for (int d = 0; d < DEPTH; d++) {
            FairwayIoBuf *buf;
            st = fairway_io_buf_alloc(READ_LEN, &buf, err, sizeof err);
            if (st != FAIRWAY_OK) {
                fprintf(stderr, "buf_alloc: %s (%s)\n", fairway_status_name(st), err);
                return 1;
            }
            if (!submit(e, target, &r[k], k, buf)) {
                return 1;
            }
        }
    }

    int ok = 1;
    uint64_t base[CLIENTS] = {0, 0};
    int warm = 0;
    double start = now_s();
    FairwayIoCompletion done[2 * DEPTH];
    size_t n;
    int running = 1;
    for (;;) {
        double t = now_s() - start;
        if (!warm && t >= seconds / 6) {
            for (int k = 0; k < CLIENTS; k++) {
                FairwayIoClientStats s;
                ok &= check(e, fairway_io_client_stats(e, r[k].id, &s), "client_stats");
                base[k] = s.bytes;
            }
            warm = 1;
        }
        if (running && t >= seconds) {
            running = 0;
            uint64_t bytes[CLIENTS];
            for (int k = 0; k < CLIENTS; k++) {
                FairwayIoClientStats s;
                ok &= check(e, fairway_io_client_stats(e, r[k].id, &s), "client_stats");
                bytes[k] = s.bytes - base[k];
            }
            double total = (double)(bytes[0] + bytes[1]);
            printf("%s: client 0 (weight 2) got %.4f of the bytes (weight share 0.6667), "
                   "client 1 (weight 1) %.4f\n",
                   spec, total > 0 ? (double)bytes[0] / total : 0.0,
                   total > 0 ? (double)bytes[1] / total : 0.0);
        }
        st = fairway_io_wait(e, done, 2 * DEPTH, 100000000, &n);
        if (st == FAIRWAY_EMPTY) {
            break; /* nothing outstanding: every request collected */
        }
        if (st == FAIRWAY_TIMEOUT) {
            continue;
        }
        if (!check(e, st, "wait")) {
            return 1;
        }
        for (size_t i = 0; i < n; i++) {
            int k = (int)done[i].user_data;
            r[k].collected++;
            if (done[i].result != (int64_t)done[i].len) {
                fprintf(stderr, "client %d: read at %llu returned %lld\n", k,
                        (unsigned long long)done[i].offset, (long long)done[i].result);
                ok = 0;
            }
            /* The completion hands the buffer back: reuse it, or free it. */
            if (!running || !ok || !submit(e, target, &r[k], k, done[i].buf)) {
                ok &= check(e, fairway_io_buf_free(done[i].buf), "buf_free");
            }
        }
    }
    for (int k = 0; k < CLIENTS; k++) {
        printf("client %d: %llu reads submitted, %llu completed\n", k,
               (unsigned long long)r[k].submitted, (unsigned long long)r[k].collected);
        if (r[k].submitted != r[k].collected) {
            ok = 0;
        }
    }
    ok &= check(e, fairway_io_destroy(e), "destroy");
    return ok ? 0 : 1;
}
