/*
 * driver.h -- the benchmark driver's shared types (kv_driver and its
 * modules).
 *
 * A run is: a store configuration (kv_config), a workload (wl_params), a
 * failure schedule (injector spec text) and driver settings (output place,
 * timeline bin, verification, backend).  settings.c fills them from a
 * config file and name=value arguments; run.c runs the workload on every
 * rank against a backend (backend.h) and keeps per-rank measurements;
 * output.c gathers them on the first survivor and writes the files of
 * docs/formats.md.
 */
#ifndef KV_DRIVER_H
#define KV_DRIVER_H

#include <stdbool.h>
#include <stdio.h>

#include "histogram.h"
#include "inject.h"
#include "kvstore.h"
#include "taskapp.h"
#include "workload.h"

struct drv_backend;

/* Settings redis.NAME of the Redis backend (backends/redis.c). */
typedef struct drv_redis {
    char host[256];          /* the primary (and the sentinels' host) */
    int port;
    char sentinel_ports[128];/* "P[,P...]": follow a Sentinel failover; "" = none */
    char master_name[64];    /* the name the sentinels monitor */
    int wait_replicas;       /* WAIT after each write (r = 2: 1); 0 = none */
    int wait_timeout_ms;
    double retry_s;          /* how long one operation retries through a failover */
    int check_lost;          /* after the run, re-read every key for lost acknowledged writes */
} drv_redis;

typedef struct drv_settings {
    kv_config store;
    wl_params work;
    ta_params task;          /* workload.kind=taskapp: experiments/taskapp/ */
    char failures[512];      /* injector spec, "" for none */
    char out[512];           /* run directory (results/CAMPAIGN/RUN_ID) */
    char campaign[128];
    char run_id[128];
    double bin_s;            /* timeline bin, seconds */
    int verify;              /* check every value read */
    int progress;            /* progress line on rank 0 */
    double checkpoint_s;     /* variant checkpoint-restart: interval, 0 = none */
    int restore;             /* reload the latest checkpoint instead of loading */
    char cmdline[2048];
    const struct drv_backend *backend;  /* driver.backend: store (default) or redis */
    drv_redis redis;
} drv_settings;

/* Parse argv (name=value, --config FILE) into s; 0 or -1 with err set. */
int drv_parse(int argc, char **argv, drv_settings *s, char *err, size_t errlen);
/* Check the combination (workload against store limits, ranks). */
int drv_check(const drv_settings *s, int nranks, char *err, size_t errlen);
void drv_usage(FILE *f);

/* Per-rank measurements. */
typedef struct drv_bin {
    long long ops, reads, writes, failed;
} drv_bin;

enum { DRV_BEFORE = 0, DRV_AFTER = 1, DRV_NPHASES = 2 };

typedef struct drv_rank {
    hist lat[WL_NKINDS][DRV_NPHASES];   /* latency in ns, per kind and phase */
    drv_bin *bins;
    int nbins, cbins;
    long long ops, failed_ops, retried_ops, verify_errors, not_found;
    double load_s, run_s;
    double run_start;                   /* wall clock at run start (same on all ranks) */
    kv_stats after_load, after_run;
    long long papi_load[2], papi_run[2];/* PAPI_TOT_INS, PAPI_TOT_CYC; -1 = NA */
    char papi_reason[160];
    long long checkpoints, checkpoint_errors;  /* checkpoint.c */
    double ckpt_s, restore_s;
    long long restored_from, restored_pairs, lost_writes;
} drv_rank;

/* run.c: PAPI's hardware counters per phase (NA when the machine has none). */
void drv_papi_init(drv_rank *m);
void drv_papi_phase(drv_rank *m, long long out[2], int start);
/* Count one completion at t seconds in the timeline (kind < 0: neither read nor write). */
void drv_add_bin(drv_rank *m, double t, int kind, int failed, double bin_s);

/* checkpoint.c: variant checkpoint-restart.  start: map the acks file,
 * or (driver.restore=1) reload the latest checkpoint, *restored = 1. */
int drv_ckpt_start(kv_store *kv, const drv_settings *s, drv_rank *m, int *restored);
void drv_ckpt_ack(void);
/* One checkpoint now (collective); the task runtime decides when. */
void drv_ckpt_take(kv_store *kv, drv_rank *m);
void drv_ckpt_tick(kv_store *kv, const drv_settings *s, drv_rank *m, double now);
void drv_ckpt_finish(kv_store *kv, const drv_settings *s, drv_rank *m);
void drv_ckpt_write(MPI_Comm comm, const drv_settings *s, const drv_rank *m, int me);

/* output.c: make a directory and its parents (0 or -1); the first max
 * kill times (time_s, the last column) of the run's kills.csv. */
int drv_mkdirs(const char *path);
int drv_read_kills(const drv_settings *s, double *t, int max);

#endif
