/*
 * failures.c -- what each failure cost a task run: task_failures.csv.
 *
 * One row per failure event of kills.csv (the victims of a simultaneous
 * event share its number; recovery i of the store belongs to event i):
 *   failure,kill_time_s,victims,detect_s,store_recovery_s,app_recovery_s,
 *   redone_tasks,redone_s,lost_s
 * kill_time_s: the event's first kill, in seconds from the run's first
 * start; detect_s: from the kill to the last survivor noticing it.  Both
 * compare wall clocks of different hosts (the victim's timestamp, each
 * survivor's notice, rank 0's start), so each is first put on the
 * reference host's clock with the offsets the driver measured (clocks.c).
 * Then the store's recovery (total, slowest survivor); the runtime's own
 * recovery after it (recover.c, slowest survivor); the tasks the victim
 * ranks had executed since their last commit (their count files), which
 * their adopters execute again, and what that costs at the run's rate per
 * rank; lost_s, the sum of the time columns: an estimate of the run time
 * the failure cost (the benchmark measures it directly, as a run with a
 * kill against one without).  NA where a value is unknown.
 */
#include <stdlib.h>
#include <string.h>

#include "ta_int.h"

enum { MAXK = 64, MAX_KILLS = 256, NF = 4 };

typedef struct kill_ev {
    int64_t t_ns;        /* the first kill, on the reference clock */
    char victims[256];   /* the ranks killed ("" for a daemon only) */
    long long redone;    /* -1 unknown */
} kill_ev;

/* The tasks rank executed since its last commit (its count file), or -1. */
static long long redone_by(const drv_settings *s, int rank) {
    char p[1200];
    snprintf(p, sizeof p, "%s/taskapp/rank.%d", s->out, rank);
    FILE *c = fopen(p, "rb");
    ta_counts cnt;
    long long r = -1;
    if (c && fread(&cnt, sizeof cnt, 1, c) == 1 && cnt.executed >= 0) r = cnt.executed - cnt.at_commit;
    if (c) fclose(c);
    return r;
}

/* Events of kills.csv, by their number (0..MAXK-1); how many. */
static int read_kills(const drv_settings *s, const drv_clocks *clk, kill_ev *ev) {
    static drv_kill k[MAX_KILLS];
    int nk = drv_read_kills(s, k, MAX_KILLS), n = 0;
    for (int i = 0; i < nk; i++) {
        if (k[i].kill < 0 || k[i].kill >= MAXK) continue;
        kill_ev *e = &ev[k[i].kill];
        int64_t t = drv_on_reference(clk, drv_host_index(clk, k[i].host), k[i].time_ns);
        if (!e->t_ns || t < e->t_ns) e->t_ns = t;
        if (k[i].kill + 1 > n) n = k[i].kill + 1;
        if (k[i].rank < 0) continue;  /* a node's daemon: no tasks of its own */
        size_t used = strlen(e->victims);
        snprintf(e->victims + used, sizeof e->victims - used, "%s%d", used ? " " : "", k[i].rank);
        long long r = redone_by(s, k[i].rank);
        e->redone = r < 0 || e->redone < 0 ? -1 : e->redone + r;
    }
    return n;
}

static void na_or(FILE *f, double v, int known) {
    if (known) fprintf(f, ",%.6f", v);
    else fprintf(f, ",NA");
}

void ta_failures(ta_rt *rt, double rate) {
    MPI_Comm comm = kv_comm(rt->kv);
    const drv_rank *m = rt->x->m;
    int me;
    MPI_Comm_rank(comm, &me);
    /* per recovery: seen here (1/0), when it was noticed (s from the first
     * start, reference clock), total (s), the runtime's recovery (s; -1 = none) */
    double mine[NF * MAXK], mx[NF * MAXK];
    for (int i = 0; i < MAXK; i++) {
        kv_recovery_times r;
        int have = kv_recovery_get(rt->kv, i, &r) == KV_OK && i < kv_recovery_count(rt->kv);
        int64_t at = have ? drv_on_reference(&m->clocks, m->clocks.mine, r.noticed_ns) : 0;
        double v[NF] = {have, have ? (double)(at - rt->first_start_wall_ns) * 1e-9 : -1e300,
                        have ? r.total_us / 1e6 : -1, i < TA_MAX_RECOVERIES && have ? rt->st.recover_s[i] : -1};
        memcpy(mine + NF * i, v, sizeof v);
    }
    MPI_Reduce(mine, mx, NF * MAXK, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (me != 0) return;
    static kill_ev ev[MAXK];
    memset(ev, 0, sizeof ev);
    int n = read_kills(rt->x->s, &m->clocks, ev);
    char path[1200];
    snprintf(path, sizeof path, "%s/task_failures.csv", rt->x->s->out);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "failure,kill_time_s,victims,detect_s,store_recovery_s,app_recovery_s,redone_tasks,redone_s,lost_s\n");
    for (int e = 0; e < n; e++) {
        const kill_ev *k = &ev[e];
        const double *r = mx + NF * e;
        int logged = k->t_ns != 0, rec = r[0] > 0, red = logged && k->redone >= 0 && rate > 0;
        double kt = (double)(k->t_ns - rt->first_start_wall_ns) * 1e-9;
        double det = r[1] - kt, st = r[2], app = r[3];
        double redo_s = red ? k->redone / rate : 0;
        fprintf(f, "%d", e);
        na_or(f, kt, logged);
        fprintf(f, ",%s", k->victims[0] ? k->victims : "NA");
        na_or(f, det, rec && logged);
        na_or(f, st, rec);
        na_or(f, app, rec && app >= 0);
        if (logged && k->redone >= 0) fprintf(f, ",%lld", k->redone);
        else fprintf(f, ",NA");
        na_or(f, redo_s, red);
        na_or(f, det + st + app + redo_s, rec && red && app >= 0);
        fputc('\n', f);
    }
    fclose(f);
}
