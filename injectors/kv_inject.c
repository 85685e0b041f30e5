/*
 * kv_inject.c -- the external injector: kills ranks by pid at scheduled times.
 *
 * It waits for the pid table the ranks publish (kvi_publish_pid), draws the
 * schedule from the spec against it, writes the schedule out before the
 * first kill, then sleeps on CLOCK_REALTIME (absolute deadlines, so errors
 * do not accumulate) until each event's moment and kills its victims with
 * kvi_kill_group, which sends the kills of an event back to back and then
 * logs them (a node loss: the node's daemon processes and ranks).  A
 * straggler's stop (the spec's for=) is ended the same way: SIGCONT to the
 * same victims at its moment plus its length, logged as CONT lines; the
 * ends and the later events go out in the order of their moments.  A
 * partition (signal=LINK) cuts hosts' links through KV_INJECT_LINK, and
 * with for= puts them back (LINKDOWN, LINKUP lines); a vanish
 * (signal=VANISH) is a node's STOP lines and its LINKDOWN, ended by KILL
 * lines and LINKUP.
 * Only time-based schedules can be run from outside: operation counts live
 * inside the ranks, so `when=ops:N` is refused with a pointer to the
 * in-process form.  `kv_inject --publish DIR -- PROGRAM` is the other end:
 * it writes the calling process's pid table entry and execs PROGRAM in its
 * place (same pid), so any program an MPI launcher starts can be a victim.
 * `kv_inject --make-trace MTBF,SHAPE --nodes N --count K` prints a failure
 * log for when=trace:FILE, its gaps drawn from a Weibull law.
 * Exit status: 0 every kill sent; 1 the pid table was incomplete or a kill
 * failed; 2 bad arguments or a refused schedule.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inject_int.h"

#define LATE_WARN_S 0.05   /* report kills sent later than this */

typedef struct opts {
    const char *pids, *spec, *log, *sched_out;
    int nranks, max_sim;
    double timeout_s, start;   /* start < 0: when the pid table is complete */
} opts;

static void usage(FILE *f) {
    fprintf(f,
        "usage: kv_inject --pids DIR --nranks N --schedule SPEC --max-simultaneous M\n"
        "                 --log FILE [--schedule-out FILE] [--timeout S] [--start-time T]\n"
        "       kv_inject --publish DIR [--rank N] -- PROGRAM [ARGS]\n"
        "       kv_inject --make-trace MTBF,SHAPE --nodes N --count K [--seed S]\n"
        "Kill MPI ranks (and for a node loss their node's daemon) by pid at the times\n"
        "SPEC gives (see injectors/README.md).\n"
        "  --pids DIR            pid table: DIR/rank.N holds \"N PID HOST DAEMON DAEMON_PARENT\"\n"
        "  --nranks N            ranks in the run (waits for rank.0 .. rank.N-1)\n"
        "  --schedule SPEC       e.g. 'target=random:1; when=exp:30; count=3; seed=7'\n"
        "  --max-simultaneous M  ranks the store can lose at once (replicas-1, or more\n"
        "                        with spares); bigger schedules need force=1 in SPEC\n"
        "  --log FILE            kill log, CSV, appended to:\n"
        "                        kill,target_rank,pid,host,signal,role,time_ns\n"
        "  --schedule-out FILE   where to write the schedule CSV first ('-' or default: stdout)\n"
        "  --timeout S           how long to wait for the pid table (default 60)\n"
        "  --start-time T        run start, CLOCK_REALTIME seconds (date +%%s.%%N); event\n"
        "                        times count from it (default: when the pid table is complete)\n"
        "Victims on other hosts are reached through KV_INJECT_REMOTE, e.g.\n"
        "  KV_INJECT_REMOTE='ssh {host} kill -{signal} {pids}'\n"
        "  ({pids}: every victim of the event on that host, in one command).\n"
        "A partition (signal=LINK) cuts and restores links through KV_INJECT_LINK, e.g.\n"
        "  KV_INJECT_LINK='scripts/vcluster link {host} {state}'  ({state}: down, up);\n"
        "a vanish (signal=VANISH; for=S) stops a node's processes and cuts its link,\n"
        "then kills them and puts it back S seconds later.\n"
        "--make-trace prints a failure log for when=trace:FILE: K failures whose gaps\n"
        "are drawn from a Weibull law (mean MTBF s, the shape), on nodes node0..N-1.\n"
        "--publish writes this process's entry (rank N, default $OMPI_COMM_WORLD_RANK,\n"
        "its daemon from /proc) to DIR/rank.N and execs PROGRAM with the same pid.\n"
        "Exit status: 0 all kills sent, 1 pid table incomplete or a kill failed,\n"
        "2 bad arguments or refused schedule.\n");
}

static int bad_arg(const char *opt, const char *val, const char *want) {
    fprintf(stderr, "kv_inject: %s '%s' is not %s\n", opt, val, want);
    return -1;
}

static int num_arg(const char *opt, const char *val, double lo, double *out) {
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (errno || end == val || *end || !isfinite(v) || v < lo) {
        char want[64];
        snprintf(want, sizeof want, "a number >= %g", lo);
        return bad_arg(opt, val, want);
    }
    *out = v;
    return 0;
}

static int int_arg(const char *opt, const char *val, int lo, int *out) {
    double v;
    if (num_arg(opt, val, lo, &v)) return -1;
    if (v != floor(v) || v > 1 << 24) return bad_arg(opt, val, "a whole number in range");
    *out = (int)v;
    return 0;
}

static int check_required(const opts *o) {
    const char *missing = !o->pids ? "--pids" : o->nranks < 1 ? "--nranks"
                        : !o->spec ? "--schedule" : o->max_sim < 0 ? "--max-simultaneous"
                        : !o->log ? "--log" : NULL;
    if (!missing) return 0;
    fprintf(stderr, "kv_inject: %s is required (--help for usage)\n", missing);
    return -1;
}

/* Returns 0 to run, 1 after --help, -1 on a bad argument. */
static int parse_args(int argc, char **argv, opts *o) {
    static const struct option lo[] = {
        {"pids", 1, 0, 'p'},          {"nranks", 1, 0, 'n'}, {"schedule", 1, 0, 's'},
        {"max-simultaneous", 1, 0, 'm'}, {"log", 1, 0, 'l'}, {"schedule-out", 1, 0, 'o'},
        {"timeout", 1, 0, 't'},       {"start-time", 1, 0, 'S'}, {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    *o = (opts){.nranks = -1, .max_sim = -1, .timeout_s = 60, .start = -1};
    int c, rc = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'p': o->pids = optarg; break;
        case 's': o->spec = optarg; break;
        case 'l': o->log = optarg; break;
        case 'o': o->sched_out = optarg; break;
        case 'n': rc = int_arg("--nranks", optarg, 1, &o->nranks); break;
        case 'm': rc = int_arg("--max-simultaneous", optarg, 0, &o->max_sim); break;
        case 't': rc = num_arg("--timeout", optarg, 0, &o->timeout_s); break;
        case 'S': rc = num_arg("--start-time", optarg, 0, &o->start); break;
        case 'h': usage(stdout); return 1;
        default: return -1;
        }
    }
    if (rc == 0 && optind < argc) {
        fprintf(stderr, "kv_inject: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    return rc ? -1 : check_required(o);
}

static int load_pids(const opts *o, kvi_rank_info *ranks) {
    if (kvi_read_pids(o->pids, o->nranks, o->timeout_s, ranks) == 0) return 0;
    const char *why = errno == EBADMSG ? "some files are not \"rank pid host\"" : "waited";
    fprintf(stderr, "kv_inject: pid table %s incomplete after %g s (%s); missing ranks:",
            o->pids, o->timeout_s, why);
    for (int r = 0; r < o->nranks; r++)
        if (ranks[r].pid == 0) fprintf(stderr, " %d", r);
    fprintf(stderr, "\n");
    return -1;
}

/* Fail before the run if a victim is remote and no hook is configured. */
static int check_reach(const kvi_schedule *s) {
    const char *hook = getenv("KV_INJECT_REMOTE"), *link = getenv("KV_INJECT_LINK");
    char me[KVI_HOST_MAX] = "";
    kvi_hostname(me, sizeof me);
    for (int i = 0; i < s->nevents; i++) {
        if (kvi__is_link(s->events[i].signal)) {
            if (link && *link) continue;
            fprintf(stderr, "kv_inject: a fault of host %s's link needs KV_INJECT_LINK, a command "
                    "with {host} and {state} (see injectors/README.md)\n", s->events[i].host);
            return -1;
        }
        if ((hook && *hook) || kvi_host_is_local(s->events[i].host)) continue;
        fprintf(stderr, "kv_inject: %s %d runs on host %s, not here (%s), and "
                "KV_INJECT_REMOTE is not set (see injectors/README.md)\n",
                kvi_role_name(s->events[i].role), s->events[i].rank, s->events[i].host, me);
        return -1;
    }
    return 0;
}

static int write_schedule(const kvi_schedule *s, const char *path) {
    int to_stdout = !path || strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f || kvi_schedule_write_csv(s, f) != 0) {
        fprintf(stderr, "kv_inject: cannot write the schedule to %s: %s\n",
                to_stdout ? "stdout" : path, strerror(errno));
        if (f && !to_stdout) fclose(f);
        return -1;
    }
    return to_stdout ? 0 : fclose(f);
}

static void sleep_until(double t) {
    struct timespec ts;
    ts.tv_sec = (time_t)floor(t);
    ts.tv_nsec = (long)((t - floor(t)) * 1e9);
    if (ts.tv_nsec > 999999999L) ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

/* A node loss whose table named no daemon kills the ranks only: say so. */
static void warn_no_daemon(const kvi_spec *spec, const kvi_schedule *s) {
    for (int i = 0; spec->target == KVI_TARGET_NODE && i < s->nevents; i++) {
        int j = i, daemons = 0;
        while (j < s->nevents && s->events[j].index == s->events[i].index)
            daemons += s->events[j++].role != KVI_ROLE_RANK;
        if (!daemons)
            fprintf(stderr, "kv_inject: warning: the pid table names no daemon on node %s "
                    "(not started by Open MPI, or an old table): only its ranks will die\n",
                    s->events[i].host);
        i = j - 1;
    }
}

static void report(const kvi_event *e, int err, double late) {
    const char *what = kvi_role_name(e->role);
    if (err)
        fprintf(stderr, "kv_inject: event %d: cannot send %s to %s %d (pid %d on %s): %s\n",
                e->index, kvi_signal_name(e->signal), what, e->rank, e->pid, e->host,
                strerror(err));
    else
        fprintf(stderr, "kv_inject: event %d: sent %s to %s %d (pid %d on %s) at +%.3f s%s\n",
                e->index, kvi_signal_name(e->signal), what, e->rank, e->pid, e->host,
                e->at_time_s + late, late > LATE_WARN_S ? " (late)" : "");
}

/* The n kills of one failure event, at its moment. */
static int run_event(const kvi_event *ev, int n, double start, const char *log) {
    int *err = calloc((size_t)n, sizeof *err);
    if (!err) return n;
    double due = start + ev[0].at_time_s, spread = 0;
    sleep_until(due);
    double late = kvi_now() - due;
    int failed = kvi_kill_group(ev, n, log, err, &spread);
    if (failed < 0) {
        fprintf(stderr, "kv_inject: event %d: cannot write the kill log %s: %s\n",
                ev[0].index, log, strerror(errno));
        failed = n;
    } else {
        for (int i = 0; i < n; i++) report(&ev[i], err[i], late);
        if (n > 1)
            fprintf(stderr, "kv_inject: event %d: %d kills sent within %.1f us\n", ev[0].index,
                    n - failed, spread * 1e6);
    }
    free(err);
    return failed;
}

/* The stops begun and not ended yet: events [first, first + n) of s. */
typedef struct stops {
    int *first, *n, count;
} stops;

static double end_of(const kvi_event *e) { return e->at_time_s + e->resume_s; }

/* End every stop due by `until` (HUGE_VAL: all), earliest first. */
static int end_stops(const kvi_schedule *s, stops *st, double start, double until, const char *log) {
    int failed = 0;
    for (;;) {
        int best = -1;
        for (int k = 0; k < st->count; k++)
            if (best < 0 || end_of(&s->events[st->first[k]]) < end_of(&s->events[st->first[best]])) best = k;
        if (best < 0) return failed;
        const kvi_event *e = &s->events[st->first[best]];
        if (end_of(e) > until) return failed;
        int n = st->n[best];
        kvi_event *cont = malloc((size_t)n * sizeof *cont);
        if (!cont) return failed + n;
        for (int i = 0; i < n; i++) {
            cont[i] = e[i];
            cont[i].signal = e[i].end_signal;
            cont[i].at_time_s = end_of(&e[i]);
        }
        failed += run_event(cont, n, start, log);
        free(cont);
        st->first[best] = st->first[--st->count];
        st->n[best] = st->n[st->count];
    }
}

static int run_kills(const kvi_schedule *s, double start, const char *log) {
    int failed = 0;
    stops st = {calloc((size_t)s->nevents + 1, sizeof(int)), calloc((size_t)s->nevents + 1, sizeof(int)), 0};
    if (!st.first || !st.n) {
        free(st.first);
        free(st.n);
        fprintf(stderr, "kv_inject: out of memory\n");
        return 1;
    }
    for (int i = 0, j; i < s->nevents; i = j) {
        j = i + 1;
        while (j < s->nevents && s->events[j].index == s->events[i].index) j++;
        failed += end_stops(s, &st, start, s->events[i].at_time_s, log);
        failed += run_event(&s->events[i], j - i, start, log);
        if (s->events[i].resume_s > 0) {   /* a stop or a cut with an end */
            st.first[st.count] = i;
            st.n[st.count++] = j - i;
        }
    }
    failed += end_stops(s, &st, start, HUGE_VAL, log);
    free(st.first);
    free(st.n);
    return failed ? 1 : 0;
}

static int run(const opts *o, const kvi_spec *spec, kvi_rank_info *ranks) {
    char err[512];
    kvi_schedule s;
    if (load_pids(o, ranks)) return 1;
    double start = o->start >= 0 ? o->start : kvi_now();
    if (kvi_schedule_build(spec, ranks, o->nranks, o->max_sim, &s, err, sizeof err)) {
        fprintf(stderr, "kv_inject: schedule refused: %s\n", err);
        return 2;
    }
    warn_no_daemon(spec, &s);
    int rc = check_reach(&s) || write_schedule(&s, o->sched_out) ? 2 : run_kills(&s, start, o->log);
    kvi_schedule_free(&s);
    return rc;
}

/* --publish DIR [--rank N] -- PROGRAM [ARGS]: returns only on failure. */
static int publish_and_exec(int argc, char **argv) {
    const char *dir = argv[2], *r = getenv("OMPI_COMM_WORLD_RANK");
    int i = 3, rank = -1;
    if (argc > 4 && strcmp(argv[3], "--rank") == 0) {
        r = argv[4];
        i = 5;
    }
    if (i < argc && strcmp(argv[i], "--") == 0) i++;
    if (!r || int_arg("--rank", r, 0, &rank)) {
        fprintf(stderr, "kv_inject: --publish needs --rank N or $OMPI_COMM_WORLD_RANK\n");
        return 2;
    }
    if (i >= argc) {
        fprintf(stderr, "kv_inject: --publish DIR [--rank N] -- PROGRAM: no PROGRAM\n");
        return 2;
    }
    if (kvi_publish_pid(dir, rank) != 0) {
        fprintf(stderr, "kv_inject: cannot publish rank %d in %s: %s\n", rank, dir, strerror(errno));
        return 1;
    }
    execvp(argv[i], argv + i);
    fprintf(stderr, "kv_inject: cannot run %s: %s\n", argv[i], strerror(errno));
    return 127;
}

/* --make-trace MTBF,SHAPE --nodes N --count K [--seed S]: a Weibull
 * failure log on stdout. */
static int make_trace(int argc, char **argv) {
    kvi_spec w;
    char err[256], text[128];
    int nodes = 0, count = 0;
    double seed = 1;
    for (int i = 3; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        int rc = strcmp(argv[i], "--nodes") == 0   ? int_arg("--nodes", v, 1, &nodes)
                 : strcmp(argv[i], "--count") == 0 ? int_arg("--count", v, 1, &count)
                 : strcmp(argv[i], "--seed") == 0  ? num_arg("--seed", v, 0, &seed)
                 : (fprintf(stderr, "kv_inject: --make-trace: unknown argument '%s'\n", argv[i]), -1);
        if (rc) return 2;
    }
    snprintf(text, sizeof text, "target=random:1; when=weibull:%s", argv[2]);
    if (kvi_spec_parse(text, &w, err, sizeof err)) {
        fprintf(stderr, "kv_inject: --make-trace '%s': %s\n", argv[2], err);
        return 2;
    }
    if (nodes < 1 || count < 1 || seed != floor(seed)) {
        fprintf(stderr, "kv_inject: --make-trace needs --nodes N and --count K (whole numbers "
                ">= 1) and a whole --seed\n");
        return 2;
    }
    return kvi_trace_write_weibull(stdout, w.mtbf_s, w.shape, nodes, count,
                                   (unsigned long long)seed) ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--publish") == 0) return publish_and_exec(argc, argv);
    if (argc >= 3 && strcmp(argv[1], "--make-trace") == 0) return make_trace(argc, argv);
    opts o;
    kvi_spec spec;
    char err[512];
    int a = parse_args(argc, argv, &o);
    if (a != 0) return a > 0 ? 0 : 2;
    if (kvi_spec_parse(o.spec, &spec, err, sizeof err)) {
        fprintf(stderr, "kv_inject: bad --schedule: %s\n", err);
        return 2;
    }
    if (spec.when == KVI_WHEN_OPS) {
        fprintf(stderr, "kv_inject: when=ops:N counts the victim's own operations, which only "
                "the rank itself sees: use the in-process form (kvi_inproc_tick in the driver) "
                "or a time-based when= (time:, exp:, weibull:)\n");
        return 2;
    }
    kvi_rank_info *ranks = calloc((size_t)o.nranks, sizeof *ranks);
    if (!ranks) {
        fprintf(stderr, "kv_inject: out of memory\n");
        return 1;
    }
    int rc = run(&o, &spec, ranks);
    free(ranks);
    return rc;
}
