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
 * docs/formats.md (formats.c the two that other tools read); clocks.c
 * measures the offsets between the hosts' clocks, provenance.c reads the
 * source revision when the run starts.
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
    char host[256];          /* the primary (and the sentinels' host); "/path" a Unix socket */
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

/* clocks.c: the run's hosts and their wall clocks' offsets from the
 * reference host (world rank 0's).  drv_hosts_init (collective over
 * MPI_COMM_WORLD): the hosts in order of their first rank, with their rank
 * counts and this rank's host.  drv_clocks_measure (collective over comm;
 * when 0 at the start on MPI_COMM_WORLD, 1 at the end on the survivors):
 * the offsets, known at comm's rank 0.  drv_clock_offset: host h's offset
 * (its clock minus the reference's) and its uncertainty, in ns, from both
 * measurements (0 and 0 for an unknown host); drv_on_reference: a
 * kv_wall_ns() time read on host h, on the reference host's clock. */
enum { DRV_HOST_LEN = 64, DRV_MAX_HOSTS = 256 };
typedef struct drv_clock_host {
    char name[DRV_HOST_LEN];
    int ranks;                /* world ranks on it */
    int have[2];              /* measured at the start, at the end */
    int64_t off[2], unc[2];   /* ns */
} drv_clock_host;
typedef struct drv_clocks {
    int nhosts, mine;
    drv_clock_host h[DRV_MAX_HOSTS];
} drv_clocks;
void drv_hosts_init(drv_clocks *c);
/* Every rank of comm takes comm's rank 0's table (collective over comm),
 * its own host found again by name (-1: a host the table lacks). */
void drv_hosts_share(MPI_Comm comm, drv_clocks *c);
int drv_host_index(const drv_clocks *c, const char *name);
void drv_clocks_measure(MPI_Comm comm, drv_clocks *c, int when);
void drv_clock_offset(const drv_clocks *c, int h, int64_t *off, int64_t *unc);
int64_t drv_on_reference(const drv_clocks *c, int h, int64_t wall_ns);

/* provenance.c: the source revision at run time ("-dirty" when edited),
 * the one the binary was built from, the Open MPI patches of the checkout.
 * Collective over MPI_COMM_WORLD (rank 0 reads, all get it). */
typedef struct drv_provenance {
    char revision[64], built[64], patches[512];
} drv_provenance;
const drv_provenance *drv_provenance_read(void);

/* Per-rank measurements. */
typedef struct drv_bin {
    long long ops, reads, writes, failed;
} drv_bin;

enum { DRV_BEFORE = 0, DRV_AFTER = 1, DRV_NPHASES = 2 };

typedef struct drv_rank {
    hist lat[WL_NKINDS][DRV_NPHASES];   /* latency in ns (kv_clock_ns), per kind and phase */
    drv_bin *bins;
    int nbins, cbins;
    long long ops, failed_ops, retried_ops, verify_errors, not_found;
    long long failed_kind[WL_NKINDS];   /* failed operations per kind (summary.txt's Return=ERROR) */
    double load_s, run_s;
    /* The run phase starts at the end of the start barrier: run_start_ns is
     * this rank's kv_clock_ns() then (every duration of the run phase is
     * measured from it); run_start_wall_ns is rank 0's kv_wall_ns() then,
     * the same on every rank (meta.json, the injector's schedule). */
    int64_t run_start_ns, run_start_wall_ns;
    drv_clocks clocks;                  /* the hosts and their clock offsets (clocks.c) */
    const drv_provenance *prov;
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
 * or (driver.restore=1) reload the latest checkpoint, *restored = 1.
 * tick: t is seconds since this rank's run start. */
int drv_ckpt_start(kv_store *kv, const drv_settings *s, drv_rank *m, int *restored);
void drv_ckpt_ack(void);
/* One checkpoint now (collective); the task runtime decides when. */
void drv_ckpt_take(kv_store *kv, drv_rank *m);
void drv_ckpt_tick(kv_store *kv, const drv_settings *s, drv_rank *m, double t);
void drv_ckpt_finish(kv_store *kv, const drv_settings *s, drv_rank *m);
void drv_ckpt_write(MPI_Comm comm, const drv_settings *s, const drv_rank *m, int me);

/* Seconds from this rank's run start to now_ns (a kv_clock_ns() value). */
static inline double drv_run_time(const drv_rank *m, int64_t now_ns) {
    return (double)(now_ns - m->run_start_ns) * 1e-9;
}

/* formats.c: summary.txt in YCSB's format (run_ms, throughput, failed
 * operations per kind), and one histogram in HdrHistogram's
 * percentile-distribution text format (values in us). */
void drv_write_ycsb(FILE *f, const drv_rank *m, long long run_ms, double throughput,
                    const long long failed[WL_NKINDS]);
void drv_write_hgrm(FILE *f, const hist *h);

/* output.c: make a directory and its parents (0 or -1). */
int drv_mkdirs(const char *path);

/* One kill of the run's kills.csv: its failure event (kill), the victim's
 * rank (-1 for a daemon), host and role ("rank", "daemon",
 * "daemon-parent"), and the wall-clock time on the victim's host
 * (time_ns).  drv_read_kills: the first max of them; their number. */
typedef struct drv_kill {
    int kill, rank;
    int64_t time_ns;
    char host[64], role[16];
} drv_kill;
int drv_read_kills(const drv_settings *s, drv_kill *k, int max);

#endif
