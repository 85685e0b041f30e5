/*
 * redis_check.c -- after a Redis run: were acknowledged
 * writes lost, and how long did the failover take?
 *
 * Lost writes.  Every rank logs its writes (record, version, issue time,
 * acknowledgement time, or none when the write failed).  A key may be
 * written by several ranks (YCSB draws records over all of them), so a
 * single rank cannot judge it; rank 0 gathers the logs and re-reads every
 * key (the loaded records and every written one).  Wall-clock times of one
 * machine order the writes: an acknowledged write W supersedes every write
 * acknowledged before W was issued.  The value read must be a write that
 * nothing acknowledged has superseded (an unacknowledged write may or may
 * not have landed); otherwise, or when the key is missing, the key counts
 * as an acknowledged write lost.  To bound memory a rank keeps, per
 * record, only its last acknowledged write and the failed ones after it:
 * its earlier writes are superseded by its own later one.
 *
 * Failover.  From the kill log's CLOCK_REALTIME timestamp (kv_inject) to
 * each rank's first acknowledged write after its first failed attempt;
 * the first rank's and the last rank's times go to failover.csv.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "redis.h"

#define CHECK_BATCH 256      /* GETs per pipelined call of the lost-write check */
#define SHOW_LOST 5          /* lost keys described on stderr */

static int by_record_issue(const void *a, const void *b) {
    const wrec *x = a, *y = b;
    if (x->record != y->record) return x->record < y->record ? -1 : 1;
    return (x->issue > y->issue) - (x->issue < y->issue);
}

void drr_log_compact(wrec *e, size_t *n) {
    if (*n == 0) return;  /* e may be NULL then, which qsort does not allow */
    qsort(e, *n, sizeof *e, by_record_issue);
    size_t out = 0;
    for (size_t i = 0, j; i < *n; i = j) {
        size_t keep = i;
        for (j = i; j < *n && e[j].record == e[i].record; j++)
            if (isfinite(e[j].ack)) keep = j;
        while (keep < j) e[out++] = e[keep++];
    }
    *n = out;
}

int drr_batch_of(const rrun *x, int count) {
    size_t n = BATCH_BYTES / x->cap;
    return n < 1 ? 1 : n < (size_t)count ? (int)n : count;
}

/* Is `got` bytes of v what record `rec`'s log entries e[0..n) allow? */
static int key_ok(const rrun *x, uint64_t rec, const wrec *e, size_t n, int loaded,
                  const unsigned char *v, long got, drr_judged *j) {
    double t_load = (double)x->m->run_start_wall_ns * 1e-9, newest = loaded ? t_load : -INFINITY;
    int acked = loaded;
    for (size_t k = 0; k < n; k++)
        if (isfinite(e[k].ack)) {
            acked = 1;
            if (e[k].issue > newest) newest = e[k].issue;
        }
    if (got < 0) return !acked;
    uint64_t ver;
    int c = wl_check_value(x->g, rec, v, (size_t)got < x->cap ? (size_t)got : x->cap, &ver);
    if (c < 0 && x->s->work.value_min < WL_VALUE_HEADER) { j->unchecked++; return 1; }
    if (c < 0) return 0;  /* shorter than any value written */
    if (c == 0) return 0;
    if (loaded && ver == 0 && t_load >= newest) return 1;
    for (size_t k = 0; k < n; k++)
        if (e[k].version == ver && e[k].ack >= newest) return 1;
    return 0;
}

typedef struct item { uint64_t record; size_t first, n; int loaded; } item;

static void check_batch(rrun *x, const wrec *all, const item *it, int n, unsigned char *buf, drr_judged *j) {
    char keys[CHECK_BATCH][WL_KEY_MAX + 1];
    const char *kp[CHECK_BATCH];
    unsigned char *bp[CHECK_BATCH];
    size_t kl[CHECK_BATCH];
    long got[CHECK_BATCH];
    if (n < 1 || n > CHECK_BATCH) return;
    for (int i = 0; i < n; i++) {
        kp[i] = keys[i];
        kl[i] = wl_key(&x->s->work, it[i].record, keys[i], sizeof keys[i]);
        bp[i] = buf + x->cap * (size_t)i;
    }
    if (rcl_get(&x->cl, n, kp, kl, bp, x->cap, got) < 0) {
        fprintf(stderr, "kv_driver: lost-write check: %s\n", x->cl.err);
        j->lost = -1;
        return;
    }
    for (int i = 0; i < n && j->lost >= 0; i++) {
        const wrec *e = all + it[i].first;
        j->checked++;
        if (key_ok(x, it[i].record, e, it[i].n, it[i].loaded, bp[i], got[i], j)) continue;
        if (j->lost++ < SHOW_LOST)
            fprintf(stderr, "kv_driver: acknowledged write lost: key %s (record %llu): %s; %zu writes "
                    "logged%s\n", keys[i], (unsigned long long)it[i].record,
                    got[i] < 0 ? "missing" : "another value", it[i].n, it[i].loaded ? " after the load" : "");
    }
}

drr_judged drr_check_lost(rrun *x, int rank, int size) {
    drr_judged j = {0, 0, 0};
    drr_log_compact(x->log, &x->nlog);
    int mine = (int)(x->nlog * sizeof(wrec)), *counts = NULL, *displs = NULL, total = 0;
    if (rank == 0) {
        counts = calloc((size_t)size, sizeof *counts);
        displs = calloc((size_t)size, sizeof *displs);
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; rank == 0 && i < size; i++) {
        displs[i] = total;
        total += counts[i];
    }
    wrec *all = rank == 0 ? malloc((size_t)total + 1) : NULL;
    MPI_Gatherv(x->log, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        size_t n = (size_t)total / sizeof(wrec), i = 0;
        if (n) qsort(all, n, sizeof *all, by_record_issue);
        int b = drr_batch_of(x, CHECK_BATCH), nb = 0;
        item it[CHECK_BATCH];
        unsigned char *buf = malloc(x->cap * (size_t)b);
        uint64_t next_load = 0, records = x->s->work.records;
        while (buf && j.lost >= 0) {  /* loaded records and logged ones, in record order */
            uint64_t a = next_load < records ? next_load : UINT64_MAX, l = i < n ? all[i].record : UINT64_MAX;
            uint64_t rec = a < l ? a : l;
            if (rec == UINT64_MAX) break;
            it[nb] = (item){rec, i, 0, rec == a};
            for (; i < n && all[i].record == rec; i++) it[nb].n++;
            if (rec == a) next_load++;
            if (++nb == b) { check_batch(x, all, it, nb, buf, &j); nb = 0; }
        }
        if (buf && nb && j.lost >= 0) check_batch(x, all, it, nb, buf, &j);
        if (!buf) j.lost = -1;
        free(buf);
    }
    free(all);
    free(counts);
    free(displs);
    return j;
}

/* The first kill of DIR/kills.csv (the injector's log), wall-clock
 * seconds as the client's timestamps are; NAN if none.  Redis runs on this
 * host: no clock offset. */
static double first_kill(const drv_settings *s) {
    drv_kill k;
    return drv_read_kills(s, &k, 1) == 1 ? (double)k.time_ns * 1e-9 : NAN;
}

static void na_or(char *buf, size_t n, double v, const char *fmt) {
    if (isnan(v)) snprintf(buf, n, "NA");
    else snprintf(buf, n, fmt, v);
}

void drr_report(rrun *x, int rank, int size, const drr_judged *j) {
    enum { F = 4 };
    double mine[F] = {x->cl.first_error, x->first_write, (double)x->cl.reconnects,
                      (double)x->cl.degraded_writes};
    double *all = rank == 0 ? malloc(sizeof(double) * F * (size_t)size) : NULL;
    MPI_Gather(mine, F, MPI_DOUBLE, all, F, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    double kill = first_kill(x->s), first = NAN, last = NAN, first_err = NAN, reconn = 0, degraded = 0;
    int failed_over = 0, stuck = 0;
    for (int r = 0; r < size; r++) {
        const double *o = all + F * r;
        reconn += o[2];
        degraded += o[3];
        if (o[0] <= 0) continue;  /* this rank never saw a failure */
        failed_over++;
        if (isnan(first_err) || o[0] < first_err) first_err = o[0];
        if (o[1] <= 0) { stuck++; continue; }
        if (isnan(first) || o[1] < first) first = o[1];
        if (isnan(last) || o[1] > last) last = o[1];
    }
    free(all);
    if (stuck) last = NAN;  /* a rank never wrote again */
    double f_ms = isnan(kill) ? NAN : (first - kill) * 1e3, l_ms = isnan(kill) ? NAN : (last - kill) * 1e3;
    char kt[32], fm[32], lm[32], fe[32], lost[32];
    na_or(kt, sizeof kt, kill, "%.6f");
    na_or(fm, sizeof fm, f_ms, "%.1f");
    na_or(lm, sizeof lm, l_ms, "%.1f");
    na_or(fe, sizeof fe, first_err, "%.6f");
    na_or(lost, sizeof lost, j->lost < 0 || !x->s->redis.check_lost ? NAN : (double)j->lost, "%.0f");
    char path[1200];
    snprintf(path, sizeof path, "%s/failover.csv", x->s->out);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "kill_time_s,failover_first_ms,failover_last_ms,first_error_s,ranks_failed_over,"
                   "reconnects,degraded_writes,keys_checked,keys_unchecked,acked_lost\n");
        fprintf(f, "%s,%s,%s,%s,%d,%.0f,%.0f,%lld,%lld,%s\n", kt, fm, lm, fe, failed_over, reconn, degraded,
                j->checked, j->unchecked, lost);
        fclose(f);
    } else {
        fprintf(stderr, "kv_driver: cannot write %s\n", path);
    }
    snprintf(path, sizeof path, "%s/summary.txt", x->s->out);
    /* YCSB-style lines, one number each; what was not measured is left out */
    FILE *outs[2] = {stdout, fopen(path, "a")};
    for (int i = 0; i < 2; i++) {
        if (!outs[i]) continue;
        if (!isnan(f_ms)) fprintf(outs[i], "[REDIS], FailoverFirstRank(ms), %.1f\n", f_ms);
        if (!isnan(l_ms)) fprintf(outs[i], "[REDIS], FailoverLastRank(ms), %.1f\n", l_ms);
        fprintf(outs[i], "[REDIS], RanksFailedOver, %d\n", failed_over);
        if (strcmp(lost, "NA")) fprintf(outs[i], "[REDIS], AckedWritesLost, %s\n", lost);
        fprintf(outs[i], "[REDIS], KeysChecked, %lld\n", j->checked);
        fprintf(outs[i], "[REDIS], Reconnects, %.0f\n", reconn);
        fprintf(outs[i], "[REDIS], DegradedWrites, %.0f\n", degraded);
        if (i) fclose(outs[i]);
    }
}
