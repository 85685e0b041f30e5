/*
 * failures.c -- what each failure cost a task run: task_failures.csv.
 *
 * One row per failure event of kills.csv (the victims of a simultaneous
 * event share its number; recovery i of the store belongs to event i):
 *   failure,kill_time_s,victims,detect_s,store_recovery_s,app_recovery_s,
 *   redone_tasks,redone_s,lost_s
 * detect_s: from the kill to the last survivor noticing it; the store's
 * recovery (total, slowest survivor); the runtime's own recovery after it
 * (recover.c, slowest survivor); the tasks the victims had executed since
 * their last commit (their count files), which their adopters execute
 * again, and what that costs at the run's rate per rank; lost_s, the sum
 * of the time columns: an estimate of the run time the failure cost (the
 * benchmark measures it directly, as a run with a kill against one
 * without).  NA where a value is unknown.
 */
#include <stdlib.h>
#include <string.h>

#include "ta_int.h"

enum { MAXK = 64 };

typedef struct kill_ev {
    double t;
    char victims[256];
    long long redone;  /* -1 unknown */
} kill_ev;

/* Events of kills.csv, by their number (0..MAXK-1); how many. */
static int read_kills(const drv_settings *s, kill_ev *ev) {
    char path[1200], line[512];
    snprintf(path, sizeof path, "%s/kills.csv", s->out);
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        int e, rank;
        char *last = strrchr(line, ',');
        if (!last || sscanf(line, "%d,%d,", &e, &rank) != 2 || e < 0 || e >= MAXK) continue;
        kill_ev *k = &ev[e];
        if (!k->victims[0]) k->t = atof(last + 1);
        snprintf(k->victims + strlen(k->victims), sizeof k->victims - strlen(k->victims), "%s%d",
                 k->victims[0] ? " " : "", rank);
        char p[1200];
        snprintf(p, sizeof p, "%s/taskapp/rank.%d", s->out, rank);
        FILE *c = fopen(p, "rb");
        ta_counts cnt;
        if (c && fread(&cnt, sizeof cnt, 1, c) == 1 && cnt.executed >= 0) {
            if (k->redone >= 0) k->redone += cnt.executed - cnt.at_commit;
        } else {
            k->redone = -1;
        }
        if (c) fclose(c);
        if (e + 1 > n) n = e + 1;
    }
    if (f) fclose(f);
    return n;
}

static void na_or(FILE *f, double v, int known) {
    if (known) fprintf(f, ",%.6f", v);
    else fprintf(f, ",NA");
}

void ta_failures(ta_rt *rt, double rate) {
    MPI_Comm comm = kv_comm(rt->kv);
    int me;
    MPI_Comm_rank(comm, &me);
    /* per recovery: noticed_at, total (s), the runtime's recovery; -1 = none */
    double mine[3 * MAXK], mx[3 * MAXK];
    for (int i = 0; i < MAXK; i++) {
        kv_recovery_times r;
        int have = kv_recovery_get(rt->kv, i, &r) == KV_OK && i < kv_recovery_count(rt->kv);
        mine[3 * i] = have ? r.noticed_at : -1;
        mine[3 * i + 1] = have ? r.total_us / 1e6 : -1;
        mine[3 * i + 2] = i < TA_MAX_RECOVERIES && have ? rt->st.recover_s[i] : -1;
    }
    MPI_Reduce(mine, mx, 3 * MAXK, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (me != 0) return;
    static kill_ev ev[MAXK];
    memset(ev, 0, sizeof ev);
    int n = read_kills(rt->x->s, ev);
    char path[1200];
    snprintf(path, sizeof path, "%s/task_failures.csv", rt->x->s->out);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "failure,kill_time_s,victims,detect_s,store_recovery_s,app_recovery_s,redone_tasks,redone_s,lost_s\n");
    for (int e = 0; e < n; e++) {
        const kill_ev *k = &ev[e];
        int rec = mx[3 * e] > 0, red = k->redone >= 0 && rate > 0;
        double det = mx[3 * e] - k->t, st = mx[3 * e + 1], app = mx[3 * e + 2];
        double redo_s = red ? k->redone / rate : 0;
        fprintf(f, "%d,%.6f,%s", e, k->t, k->victims[0] ? k->victims : "NA");
        na_or(f, det, rec && k->t > 0);
        na_or(f, st, rec);
        na_or(f, app, rec && app >= 0);
        if (k->redone >= 0) fprintf(f, ",%lld", k->redone);
        else fprintf(f, ",NA");
        na_or(f, redo_s, red);
        na_or(f, det + st + app + redo_s, rec && red && k->t > 0 && app >= 0);
        fputc('\n', f);
    }
    fclose(f);
}
