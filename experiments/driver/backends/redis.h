/*
 * redis.h -- what the Redis backend's two files share:
 * redis.c runs a rank's load and workload and keeps its write log;
 * redis_check.c judges the logs afterwards (lost acknowledged
 * writes, failover times).  Private to those two files.
 */
#ifndef KV_DRIVER_REDIS_H
#define KV_DRIVER_REDIS_H

#include "driver.h"
#include "redis_client.h"

#define BATCH_BYTES (1 << 22)  /* values in flight in one pipelined batch, at most */

typedef struct wrec {        /* one write of the log */
    uint64_t record, version;
    double issue, ack;       /* CLOCK_REALTIME; ack INFINITY: never acknowledged */
} wrec;

typedef struct rrun {
    const drv_settings *s;
    drv_rank *m;
    rcl cl;
    const wl_gen *g;         /* the rank's workload (values are checked against it) */
    size_t cap;              /* largest value plus one */
    wrec *log;
    size_t nlog, caplog;
    double first_write;      /* first acknowledged write after the first failed attempt; 0 none */
} rrun;

/* Lost-write check: keys that were checked, too short to check, lost (-1:
 * the check could not run). */
typedef struct drr_judged { long long checked, unchecked, lost; } drr_judged;

/* Values per batch: count, but not more than BATCH_BYTES of values. */
int drr_batch_of(const rrun *x, int count);
/* Sort the log by record and issue time; per record keep the last
 * acknowledged write and the failed ones after it. */
void drr_log_compact(wrec *e, size_t *n);
/* Collective over MPI_COMM_WORLD: rank 0 gathers the logs and re-reads
 * every loaded and every written key. */
drr_judged drr_check_lost(rrun *x, int rank, int size);
/* Collective: failover.csv and the summary's [REDIS] lines (rank 0). */
void drr_report(rrun *x, int rank, int size, const drr_judged *j);

#endif
