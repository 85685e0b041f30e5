/*
 * client.c -- a store client whose every operation is recorded, for the
 * history checker (check.py).
 *
 * Usage: client BACKEND VARIANT R SPARES SECONDS KEYS SEED LOGDIR [POINT]
 *
 * Every rank publishes its pid (LOGDIR/pid.RANK), so that run.sh can
 * SIGKILL any rank from outside at any instant, and then, until a common
 * deadline, runs random gets, puts and deletes over KEYS shared keys
 * (each put writes a value no other put writes).  Each operation is
 * logged before it is invoked and after it returns, one write(2) per
 * line, to LOGDIR/ops.RANK: a SIGKILL loses nothing that was written.
 * Lines: "C seq t_ns key op value" at the call, "R seq t_ns result value"
 * at the return (CLOCK_MONOTONIC, shared by all ranks of one machine).  An
 * operation interrupted by a failure is retried once, as a new operation.
 * Afterwards the survivors meet in kv_barrier, read every key (logged like
 * any other read) and run kv_audit; the number of divergent pairs goes to
 * the log ("A n") and into the verdict, and the recoveries this rank ran
 * and the members left ("N recoveries members"), and when this rank
 * noticed the first failure and when it served again ("D wall_ns t_ns
 * resumed_t_ns": kv_recovery_times.noticed_ns, CLOCK_REALTIME, which the
 * test cluster's hosts share; the same moment on the operations' clock;
 * that plus stopped_us; none without a recovery), from which run.sh
 * measures detection and check.py finds a rank reported failed that still
 * answered its client once the others served again without it.  With POINT (a recovery fault
 * point, see KVR_POINT) the rank named by $HIST_POINT_RANK kills itself
 * there in the first recovery it runs: a second failure inside recovery.
 * Each rank pauses $HIST_PAUSE_US (50) microseconds between operations, so
 * that a run's history stays small enough to check (tens of thousands of
 * operations, not a million) while the ranks still overlap all the time.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

static int logfd = -1;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void logline(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logline(const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0 && write(logfd, line, (size_t)n) != n) kvt_errors++;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {  /* splitmix64 */
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static const char *result_name(int rc) {
    switch (rc) {
    case KV_OK: case KV_WARN_DEGRADED: return "ok";
    case KV_ERR_NOT_FOUND: return "notfound";
    case KV_ERR_INTERRUPTED: return "interrupted";
    case KV_ERR_BUSY: return "busy";
    default: return "error";
    }
}

enum op { OP_GET, OP_PUT, OP_DEL };
static const char *op_name[] = {"get", "put", "del"};

/* One logged operation; returns its status. */
static int run_op(kv_store *s, int rank, long *seq, enum op op, int key) {
    char k[16], v[64], got[64];
    snprintf(k, sizeof k, "k%d", key);
    snprintf(v, sizeof v, "r%d.%ld", rank, *seq);
    long id = (*seq)++;
    logline("C %ld %llu %s %s %s\n", id, (unsigned long long)now_ns(), k, op_name[op],
            op == OP_PUT ? v : "-");
    size_t len = 0;
    int rc = op == OP_GET   ? kv_get(s, k, strlen(k), got, sizeof got - 1, &len)
             : op == OP_PUT ? kv_put(s, k, strlen(k), v, strlen(v))
                            : kv_delete(s, k, strlen(k));
    bool read = op == OP_GET && (rc == KV_OK || rc == KV_WARN_DEGRADED);
    if (read) got[len] = 0;
    logline("R %ld %llu %s %s\n", id, (unsigned long long)now_ns(), result_name(rc), read ? got : "-");
    if (!strcmp(result_name(rc), "error")) {
        fprintf(stderr, "[rank %d] %s %s: %s\n", rank, op_name[op], k, kv_strerror(rc));
        kvt_errors++;
    }
    return rc;
}

static const char *die_point;
static void die_at(const char *point) {
    if (!strcmp(point, die_point)) raise(SIGKILL);
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 9) {
        fprintf(stderr, "usage: client BACKEND VARIANT R SPARES SECONDS KEYS SEED LOGDIR [POINT]\n");
        return 2;
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    kv_config c;
    kv_config_default(&c);
    c.backend = kv_backend_from_name(argv[1]);
    c.variant = kv_variant_from_name(argv[2]);
    c.replicas = atoi(argv[3]);
    c.spares = atoi(argv[4]);
    c.slots_per_rank = 1024;
    c.max_key = 16;
    c.max_value = 48;
    double seconds = atof(argv[5]);
    int nkeys = atoi(argv[6]);
    rng ^= strtoull(argv[7], NULL, 10) * 0x100000001B3ull + (uint64_t)rank;
    char path[512];
    snprintf(path, sizeof path, "%s/ops.%d", argv[8], rank);
    logfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (logfd < 0 || nkeys < 1 || seconds <= 0) { perror(path); return 2; }
    const char *pr = getenv("HIST_POINT_RANK");
    if (argc > 9 && pr && atoi(pr) == rank) {
        die_point = argv[9];
        kvr_fault_hook = die_at;
    }
    const char *pause_env = getenv("HIST_PAUSE_US");
    long pause_us = pause_env ? atol(pause_env) : 50;
    struct timespec pause = {pause_us / 1000000, (pause_us % 1000000) * 1000};
    kv_store *s;
    int rc = kv_open(MPI_COMM_WORLD, &c, &s);
    if (rc != KV_OK) {
        fprintf(stderr, "kv_open: %s\n", kv_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* A deadline common to all, fixed after the open (which can take a
     * while) and before any failure: the killer starts its clock when
     * every pid file below exists, so its kills land inside the workload. */
    uint64_t deadline = now_ns() + (uint64_t)(seconds * 1e9);
    MPI_Bcast(&deadline, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/pid.%d", argv[8], rank);
    FILE *pf = fopen(path, "w");
    if (pf) { fprintf(pf, "%d\n", (int)getpid()); fclose(pf); }
    long seq = 0;
    if (kv_is_spare(s) && kv_spare_wait(s) != KV_OK) {  /* never needed: closed */
        kv_close(s);
        close(logfd);
        MPI_Finalize();
        return 0;
    }
    while (now_ns() < deadline) {
        uint64_t x = rnd();
        enum op op = x % 100 < 50 ? OP_GET : x % 100 < 85 ? OP_PUT : OP_DEL;
        int key = (int)((x >> 8) % (uint64_t)nkeys);
        if (run_op(s, rank, &seq, op, key) == KV_ERR_INTERRUPTED) run_op(s, rank, &seq, op, key);
        if (pause_us > 0) nanosleep(&pause, NULL);
    }
    rc = kv_barrier(s);
    KVT_CHECK(rc == KV_OK || rc == KV_WARN_DEGRADED);
    logline("P final\n");
    for (int k = 0; k < nkeys; k++)
        while (run_op(s, rank, &seq, OP_GET, k) == KV_ERR_INTERRUPTED) {}
    long long divergent = -1;
    do rc = kv_audit(s, &divergent);
    while (rc == KV_ERR_INTERRUPTED);
    KVT_CHECK_RC(rc, KV_OK);
    KVT_CHECK(divergent == 0);
    logline("A %lld\n", divergent);
    logline("N %d %d\n", kv_recovery_count(s), kv_size(s));  /* recoveries run, members left */
    kv_recovery_times first;
    if (kv_recovery_get(s, 0, &first) == KV_OK) {
        int64_t ago = kv_wall_ns() - first.noticed_ns;  /* the same moment on now_ns's clock */
        uint64_t at = now_ns() - (uint64_t)ago;
        logline("D %lld %llu %llu\n", (long long)first.noticed_ns, (unsigned long long)at,
                (unsigned long long)(at + (uint64_t)(first.stopped_us * 1e3)));
    }
    close(logfd);
    MPI_Comm keep = kvt_keep(kv_comm(s));
    kv_close(s);
    kvt_finish(keep, "history");
    MPI_Finalize();
    return 0;
}
