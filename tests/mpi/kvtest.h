/*
 * kvtest.h -- helpers for the MPI test programs (header-only).
 *
 * Each test counts its own errors with KVT_CHECK, which prints the failed
 * condition with its rank and line.  kvt_finish() sums the errors over the
 * surviving ranks, and the lowest of them writes the verdict ("PASS" or
 * "FAIL errors=N") to the file named by $KVRUN_DONE -- the signal the
 * launcher (scripts/kvrun) waits for -- before the caller's MPI_Finalize.
 * A rank may die while the verdict is gathered (rank 0 included): the
 * survivors then shrink and gather again, so a late kill costs the dead
 * rank's count, never the verdict.
 */
#ifndef KVTEST_H
#define KVTEST_H

#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvstore.h"  /* kv_wall_ns, the clock of kill logs */

static int kvt_errors;
static int kvt_rank_world = -1;

#define KVT_CHECK(cond)                                                                       \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            kvt_errors++;                                                                     \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", kvt_rank_world, __FILE__, \
                    __LINE__, #cond);                                                         \
        }                                                                                     \
    } while (0)

/* KVT_CHECK for status codes, printing the code's name. */
#define KVT_CHECK_RC(expr, want)                                                              \
    do {                                                                                      \
        int kvt_rc_ = (expr);                                                                 \
        if (kvt_rc_ != (want)) {                                                              \
            kvt_errors++;                                                                     \
            fprintf(stderr, "[rank %d] %s:%d: %s returned %d (%s), wanted %d\n", kvt_rank_world, \
                    __FILE__, __LINE__, #expr, kvt_rc_, kvt_strerror_(kvt_rc_), (int)(want)); \
        }                                                                                     \
    } while (0)

#ifdef KVSTORE_H
static inline const char *kvt_strerror_(int rc) { return kv_strerror(rc); }
#else
static inline const char *kvt_strerror_(int rc) { (void)rc; return "-"; }
#endif

/* Whether a test of the fault-tolerant RMA should switch it on (through
 * MPI_T, kvr_proposed_enable): yes unless KVT_FT_RMA=off, with which the
 * conformance record (experiments/bench/bench_conformance.sh) runs the
 * same rules on Open MPI's behaviour as released. */
static inline int kvt_ft_wanted(void) {
    const char *v = getenv("KVT_FT_RMA");
    return !(v && strcmp(v, "off") == 0);
}

/* The error class of an MPI return code. */
static inline int kvt_err_class(int rc) {
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

#ifdef OMPI_HAVE_MPIX_WIN_FT
/* How many members window win knows failed (MPIX_Win_get_failed); -1 on
 * an error. */
static inline int kvt_win_nfailed(MPI_Win win) {
    MPI_Group g;
    int n = -1;
    if (MPIX_Win_get_failed(win, &g) != MPI_SUCCESS) return -1;
    MPI_Group_size(g, &n);
    MPI_Group_free(&g);
    return n;
}
#endif

/* A window of `bytes` zeroed bytes over MPI_COMM_WORLD with displacement
 * unit disp, its errors returned: MPI_Win_create over memory of its own
 * when create (osc/rdma; the caller frees *mem after MPI_Win_free), else
 * MPI_Win_allocate (osc/sm on one node).  *mem is the window's memory. */
static inline void kvt_win_make(int create, int bytes, int disp, MPI_Info info, uint64_t **mem,
                                MPI_Win *win) {
    if (create) {
        *mem = calloc(1, (size_t)bytes);
        KVT_CHECK(*mem != NULL);
        MPI_Win_create(*mem, bytes, disp, info, MPI_COMM_WORLD, win);
    } else {
        MPI_Win_allocate(bytes, disp, info, MPI_COMM_WORLD, mem, win);
        memset(*mem, 0, (size_t)bytes);
    }
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
}

static inline void kvt_init(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &kvt_rank_world);
}

/* A communicator of c's live members that outlives the store, for
 * kvt_finish after kv_close: a shrink, which every survivor completes
 * alike even when a failure lands during it (a dup does not: one cut
 * short left its output undefined at some ranks, and two survivors of a
 * soak run crashed in kvt_finish on it); MPI_COMM_WORLD, counted as an
 * error, if the shrink fails. */
static inline MPI_Comm kvt_keep(MPI_Comm c) {
    MPI_Comm keep = MPI_COMM_NULL;
    if (MPIX_Comm_shrink(c, &keep) == MPI_SUCCESS && keep != MPI_COMM_NULL) return keep;
    kvt_errors++;
    return MPI_COMM_WORLD;
}

/* Write the verdict; call on every surviving rank of `comm`. */
static inline int kvt_finish(MPI_Comm comm, const char *name) {
    int total = kvt_errors, rank = 0;
    if (comm != MPI_COMM_NULL) {
        MPI_Comm c = comm;
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        for (int attempt = 0;; attempt++) {
            int ok = MPI_Allreduce(&kvt_errors, &total, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS;
            int arc = MPIX_Comm_agree(c, &ok);  /* every survivor got the sum */
            if (arc == MPI_SUCCESS && ok) break;
            MPI_Comm shrunk;
            MPIX_Comm_revoke(c);
            if (attempt == 8 || MPIX_Comm_shrink(c, &shrunk) != MPI_SUCCESS) {
                total = kvt_errors + 1000;  /* no agreed count: never a PASS */
                break;
            }
            if (c != comm) MPI_Comm_free(&c);
            c = shrunk;
            MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        }
        MPI_Comm_rank(c, &rank);
        if (c != comm) MPI_Comm_free(&c);
    }
    if (rank == 0) {
        const char *path = getenv("KVRUN_DONE");
        char line[128];
        if (total == 0) snprintf(line, sizeof line, "PASS %s\n", name);
        else snprintf(line, sizeof line, "FAIL %s errors=%d\n", name, total);
        fputs(line, stdout);
        fflush(stdout);
        if (path) {
            FILE *f = fopen(path, "w");
            if (f) { fputs(line, f); fclose(f); }
        }
    }
    return total;
}

/* Write the wall clock (kv_wall_ns: CLOCK_REALTIME in integer ns, the
 * clock of kill logs) to $KV_KILL_LOG, so survivors can time detection
 * from it. */
static inline void kvt_log_kill_time(void) {
    const char *p = getenv("KV_KILL_LOG");
    FILE *f = p ? fopen(p, "w") : NULL;
    if (f) {
        fprintf(f, "%lld\n", (long long)kv_wall_ns());
        fclose(f);
    }
}

/* Die by SIGKILL after logging the time (kvt_log_kill_time). */
static inline void kvt_die_logged(void) {
    kvt_log_kill_time();
    raise(SIGKILL);
}

/* The time kvt_die_logged wrote (ns), or 0 when there is none. */
static inline int64_t kvt_kill_time_ns(void) {
    const char *p = getenv("KV_KILL_LOG");
    FILE *f = p ? fopen(p, "r") : NULL;
    long long t = 0;
    if (f && fscanf(f, "%lld", &t) != 1) t = 0;
    if (f) fclose(f);
    return t;
}

#ifdef KV_INTERNAL_H
/* After a failed check: where this rank holds `key` (slot, state, version,
 * lock) and which ids the current placement names for it. */
static inline void kvt_dump_key(kv_store *s, const char *key) {
    size_t kl = strlen(key);
    uint64_t kh = kvh_hash(key, kl, 0);
    int ids[16], r = kvh_replicas(s, kh, ids);
    fprintf(stderr, "[rank %d id %d] %s: home %llu, placed at ids", kvt_rank_world, s->my_id, key,
            (unsigned long long)(kh % s->nslots));
    for (int i = 0; i < r; i++) fprintf(stderr, " %d", ids[i]);
    for (size_t i = 0; i < s->nslots; i++) {
        const unsigned char *slot = s->base + i * s->slot_size;
        const kvs_hdr *h = kvs_hdr_of(slot);
        if (KVS_KLEN(h) == kl && kvs_key_is(slot, key, kl))
            fprintf(stderr, "; here at slot %zu: state %d version %llu lock %llu", i,
                    (int)kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value),
                    (unsigned long long)h->version, (unsigned long long)h->lock);
    }
    fprintf(stderr, "\n");
}
#endif

/* Seconds on the monotonic clock (kv_clock_ns), for durations. */
static inline double kvt_now(void) { return (double)kv_clock_ns() * 1e-9; }

#endif
