/*
 * bench_hotpath.c -- the local steps a store read adds to the raw RMA.
 *
 * bench_store_raw finds kv_get several times slower than a raw MPI_Get +
 * flush on osc/sm.  The difference is local work, which this benchmark
 * times one step at a time, in one process and without MPI: hashing the
 * key (kvh_hash), placing it on r of n ranks (kvh_place) and decoding the
 * fetched slot (kvs_decode), of which the checksum (kvs_checksum) is also
 * timed alone.  A baseline row times the loop alone (reading one byte of
 * each key): what a step costs is its row minus the baseline.  Keys are
 * bench_store_raw's ("bench-key-N", 1024 of them of 11-14 bytes, used in
 * turn), values 64 bytes, slots sized by the default configuration
 * (kv_config_default).  Each step runs ROUNDS rounds
 * of ITERS calls; the median round is reported in nanoseconds per call and
 * written as CSV rows (step,ranks,replicas,value_bytes,ns_per_call,rounds).
 * Usage: bench_hotpath out.csv [iterations_per_round] [rounds]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "benchstat.h"

enum { NKEYS = 1024, VBYTES = 64, MAX_ROUNDS = 99 };

struct bench {
    char keys[NKEYS][32];
    size_t klen[NKEYS];
    uint64_t kh[NKEYS];
    unsigned char *slots;  /* NKEYS encoded slot images */
    size_t slot_size, max_key, max_value;
    int ids[8];
};

static volatile uint64_t sink;

static double now_ns(void) { return (double)kv_clock_ns(); }

/* One round of `iters` calls of step `step`; returns ns per call. */
static double round_ns(const struct bench *b, const char *step, int n, int r, long iters) {
    uint64_t acc = 0;
    int out[8];
    double t0 = now_ns();
    if (!strcmp(step, "baseline")) {
        for (long i = 0; i < iters; i++) acc += (unsigned char)b->keys[i % NKEYS][0];
    } else if (!strcmp(step, "hash")) {
        for (long i = 0; i < iters; i++) acc += kvh_hash(b->keys[i % NKEYS], b->klen[i % NKEYS], 0);
    } else if (!strcmp(step, "place")) {
        for (long i = 0; i < iters; i++) {
            kvh_place(b->kh[i % NKEYS], b->ids, n, r, NULL, out);
            acc += (uint64_t)out[0];
        }
    } else if (!strcmp(step, "checksum")) {
        for (long i = 0; i < iters; i++) {
            const unsigned char *sl = b->slots + (size_t)(i % NKEYS) * b->slot_size;
            const kvs_hdr *h = kvs_hdr_of(sl);
            acc += kvs_checksum(h->version, h->klen, h->vlen, kvs_key_of(sl), kvs_val_of(sl, b->max_key));
        }
    } else {  /* decode */
        for (long i = 0; i < iters; i++)
            acc += kvs_decode(b->slots + (size_t)(i % NKEYS) * b->slot_size, b->slot_size,
                              b->max_key, b->max_value);
    }
    double t = now_ns() - t0;
    sink = acc;
    return t / (double)iters;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s out.csv [iterations_per_round] [rounds]\n", argv[0]);
        return 2;
    }
    long iters = argc > 2 ? atol(argv[2]) : 10000000;
    int rounds = argc > 3 ? atoi(argv[3]) : 9;
    if (iters < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench_hotpath: iterations must be >= 1 and rounds 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    kv_config cfg;
    kv_config_default(&cfg);
    static struct bench b;
    b.max_key = cfg.max_key;
    b.max_value = cfg.max_value;
    b.slot_size = kvs_slot_size(b.max_key, b.max_value);
    b.slots = calloc(NKEYS, b.slot_size);
    if (!b.slots) {
        fprintf(stderr, "bench_hotpath: out of memory\n");
        return 1;
    }
    unsigned char val[VBYTES];
    memset(val, 'v', sizeof val);
    for (int i = 0; i < NKEYS; i++) {
        snprintf(b.keys[i], sizeof b.keys[i], "bench-key-%d", i);
        b.klen[i] = strlen(b.keys[i]);
        b.kh[i] = kvh_hash(b.keys[i], b.klen[i], 0);
        kvs_encode(b.slots + (size_t)i * b.slot_size, 1, b.keys[i], (uint32_t)b.klen[i], val,
                   VBYTES, false, b.max_key);
        if (kvs_decode(b.slots + (size_t)i * b.slot_size, b.slot_size, b.max_key, b.max_value) !=
            KVS_LIVE) {
            fprintf(stderr, "bench_hotpath: slot %d does not decode as live\n", i);
            return 1;
        }
    }
    for (int i = 0; i < 8; i++) b.ids[i] = i;

    /* step, ranks, replicas: the get of bench_store_raw is r = 1 of 2 ranks;
     * the put r = 2 of 2; 8 ranks with r = 2 for a larger store. */
    static const struct { const char *step; int n, r; } rows[] = {
        {"baseline", 0, 0}, {"hash", 0, 0}, {"place", 2, 1}, {"place", 2, 2},
        {"place", 8, 2},    {"checksum", 0, 0}, {"decode", 0, 0},
    };
    FILE *f = fopen(argv[1], "a");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    printf("%-8s %5s %8s %12s\n", "step", "ranks", "replicas", "ns per call");
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        double t[MAX_ROUNDS];
        round_ns(&b, rows[k].step, rows[k].n, rows[k].r, iters / 10 + 1);  /* warm up */
        for (int i = 0; i < rounds; i++) t[i] = round_ns(&b, rows[k].step, rows[k].n, rows[k].r, iters);
        double med = benchstat_median(t, rounds);
        char n[16] = "", r[16] = "";  /* only placement depends on them */
        if (rows[k].n) {
            snprintf(n, sizeof n, "%d", rows[k].n);
            snprintf(r, sizeof r, "%d", rows[k].r);
        }
        printf("%-8s %5s %8s %12.2f\n", rows[k].step, n, r, med);
        fprintf(f, "%s,%s,%s,%d,%.2f,%d\n", rows[k].step, n, r, VBYTES, med, rounds);
    }
    fclose(f);
    free(b.slots);
    return 0;
}
