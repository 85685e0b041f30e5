/*
 * kill.c -- sending the signals: kvi_kill (one victim) and kvi_kill_group
 * (the victims of one event, as close together as they can be).
 *
 * A group goes in three steps, so that nothing slow sits between two
 * signals: (1) every victim is checked and every hook command is built
 * (a local pid must exist and be ours; a remote victim needs the template
 * in KV_INJECT_REMOTE and a sane host name), and the log is opened; (2)
 * the signals go out in the order given, each victim's timestamp read
 * right before its own: consecutive kill(2) calls for local victims, and
 * for a run of consecutive victims of one remote host one command when the
 * template takes {pids} (one per victim otherwise); (3) the lines of the
 * victims signalled are written in one write and one fsync.  When the
 * calling process is itself a victim (the in-process form) step (3) comes
 * before step (2), as it could not come after (killlog.c).  kvi_kill is a
 * group of one.  The spread reported is CLOCK_MONOTONIC from just before
 * the first signal to just after the last.  A partition's cut and end are
 * no signals: each host's link goes down or up through the command
 * template in KV_INJECT_LINK ({host}, {state}), the timestamp read right
 * before the command, the lines logged after the last (link_group).  A
 * group that has both (a vanish: the node's processes stopped, then its
 * link cut) goes as its signals, then its links.
 *
 * A group of SIGKILLs is frozen first: every rank it kills, the sender
 * itself excepted, is stopped (SIGSTOP, not logged; a remote host's ranks
 * by one more command, the template given STOP) before the first SIGKILL
 * goes out.  A real node loss ends its processes at once; signals sent one
 * by one do not: on a loaded host the sender can be descheduled between
 * two kill(2) calls for milliseconds, and once the runtime has reported
 * the first death (the daemon's, which reports all the node's ranks
 * failed) a victim not yet signalled would go on serving while the
 * survivors recover without it.  A rank that loses its daemon also ends
 * itself (patches/openmpi 0006), so in the in-process form the sender may
 * end before it reaches its node-mates.  Stopped, the victims act no
 * more; the SIGKILL that follows, or the run's end, ends them.  A remote
 * template without {signal} or {signum} cannot stop, and is not asked to.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject_int.h"

#define CMD_MAX 8192

/* One step of the sending: victims [first, first+count) by kill(2)
 * (cmd NULL) or by one hook command; freeze: the command that stops the
 * step's remote ranks first (NULL when there is none to stop). */
typedef struct step {
    int first, count;
    char *cmd, *freeze;
} step;

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Append src to out[*n..], bounded by CMD_MAX. */
static int put(char *out, size_t *n, const char *src) {
    size_t l = strlen(src);
    if (*n + l >= CMD_MAX) return -1;
    memcpy(out + *n, src, l + 1);
    *n += l;
    return 0;
}

/* Append cmd to the shell text *text as a line of its own. */
static int put_line(char **text, const char *cmd) {
    size_t had = *text ? strlen(*text) : 0, l = strlen(cmd);
    char *t = realloc(*text, had + l + 2);
    if (!t) return -1;
    memcpy(t + had, cmd, l);
    memcpy(t + had + l, "\n", 2);
    *text = t;
    return 0;
}

/* Fill the KV_INJECT_REMOTE template for evs[0..count-1] (one host);
 * unknown {words} stay as they are. */
static int expand(const char *tmpl, const kvi_event *evs, int count, char *out) {
    char num[3][24], pids[CMD_MAX] = "";
    size_t pn = 0;
    for (int i = 0; i < count; i++) {
        snprintf(num[0], sizeof num[0], "%s%d", i ? " " : "", evs[i].pid);
        if (put(pids, &pn, num[0])) return -1;
    }
    const char *keys[] = {"{host}", "{pids}", "{pid}", "{rank}", "{signal}", "{signum}", "{state}"};
    snprintf(num[0], sizeof num[0], "%d", evs[0].pid);
    snprintf(num[1], sizeof num[1], "%d", evs[0].rank);
    snprintf(num[2], sizeof num[2], "%d", evs[0].signal);
    char state[64] = "";
    if (evs[0].signal == KVI_LINK_SLOW)
        snprintf(state, sizeof state, "slow %lldkbit %g%%", evs[0].rate_kbit, evs[0].loss_pct);
    else
        snprintf(state, sizeof state, "%s", evs[0].signal == KVI_LINK_DOWN ? "down"
                                            : evs[0].signal == KVI_LINK_UP ? "up" : "");
    const char *vals[] = {evs[0].host, pids, num[0], num[1], kvi_signal_name(evs[0].signal),
                          num[2], state};
    enum { NKEYS = sizeof keys / sizeof keys[0] };
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = tmpl; *p;) {
        size_t k = 0;
        while (k < NKEYS && strncmp(p, keys[k], strlen(keys[k]))) k++;
        char one[2] = {*p, '\0'};
        if (put(out, &n, k < NKEYS ? vals[k] : one)) return -1;
        p += k < NKEYS ? strlen(keys[k]) : 1;
    }
    return 0;
}

/* Step (1) for victim i: 0 when it can be signalled, else its errno. */
static int check_one(const kvi_event *ev, int local, const char *tmpl) {
    if (ev->pid <= 0) return EINVAL;
    if (local) return kill(ev->pid, 0) == 0 ? 0 : errno;  /* gone or not ours: no log line */
    if (!tmpl || !*tmpl) return ENOTSUP;
    return kvi__valid_host(ev->host) ? 0 : EINVAL;
}

/* Victims i.. of one remote host and signal that one {pids} command takes. */
static int run_length(const kvi_event *evs, int n, const int *err, const int *local, int i,
                      int batch) {
    int j = i + 1;
    while (batch && j < n && !err[j] && !local[j] && evs[j].signal == evs[i].signal &&
           strcmp(evs[j].host, evs[i].host) == 0)
        j++;
    return j - i;
}

/* Whether victim i is one the freeze stops: a rank, not the sender, in a
 * group of more than one SIGKILL (see above). */
static int frozen(const kvi_event *evs, int n, int i) {
    return n > 1 && evs[i].signal == SIGKILL && evs[i].role == KVI_ROLE_RANK &&
           evs[i].pid != (int)getpid();
}

/* s->freeze for a remote step: the template given STOP and the step's
 * ranks; 0 when there is none to stop or the template cannot say STOP. */
static int freeze_command(const char *tmpl, int batch, const kvi_event *evs, int n, step *s) {
    if (!strstr(tmpl, "{signal}") && !strstr(tmpl, "{signum}")) return 0;
    kvi_event *ranks = malloc((size_t)s->count * sizeof *ranks);
    int m = 0, rc = -1;
    if (!ranks) return -1;
    for (int j = s->first; j < s->first + s->count; j++)
        if (frozen(evs, n, j)) {
            ranks[m] = evs[j];
            ranks[m++].signal = SIGSTOP;
        }
    char cmd[CMD_MAX];
    for (int j = 0; j < m; j += batch ? m : 1)   /* one command, or one per rank */
        if (expand(tmpl, &ranks[j], batch ? m : 1, cmd) || put_line(&s->freeze, cmd)) goto out;
    rc = 0;
out:
    free(ranks);
    return rc;
}

/* Steps (1) and the commands: err[] set, steps[] filled; returns the count. */
static int plan(const kvi_event *evs, int n, int all_local, int *err, int *local, step *steps) {
    const char *tmpl = getenv("KV_INJECT_REMOTE");
    int batch = tmpl && strstr(tmpl, "{pids}"), ns = 0;
    for (int i = 0; i < n; i++) {
        local[i] = all_local || kvi_host_is_local(evs[i].host);
        err[i] = check_one(&evs[i], local[i], tmpl);
    }
    for (int i = 0; i < n;) {
        if (err[i]) { i++; continue; }
        step *s = &steps[ns];
        *s = (step){i, local[i] ? 1 : run_length(evs, n, err, local, i, batch), NULL, NULL};
        if (!local[i]) {
            char cmd[CMD_MAX];
            if (expand(tmpl, &evs[i], s->count, cmd) || !(s->cmd = strdup(cmd)) ||
                freeze_command(tmpl, batch, evs, n, s)) {
                for (int j = i; j < i + s->count; j++) err[j] = EINVAL;   /* too long */
                free(s->cmd);
                free(s->freeze);
                i += s->count;
                continue;
            }
        }
        i += s->count;
        ns++;
    }
    return ns;
}

/* Freeze the group (see above): local ranks by kill(2), remote ones by
 * their steps' freeze commands. */
static void freeze_all(const kvi_event *evs, int n, const int *err, const step *steps, int ns) {
    for (int k = 0; k < ns; k++) {
        const step *s = &steps[k];
        if (s->freeze) (void)!system(s->freeze);
        else if (!s->cmd && !err[s->first] && frozen(evs, n, s->first))
            (void)kill(evs[s->first].pid, SIGSTOP);
    }
}

/* Step (2); times[i]: CLOCK_REALTIME ns right before victim i's signal. */
static void send_all(const kvi_event *evs, int n, int *err, const step *steps, int ns,
                     long long *times) {
    freeze_all(evs, n, err, steps, ns);
    for (int k = 0; k < ns; k++) {
        const step *s = &steps[k];
        times[s->first] = kvi_wall_ns();
        if (!s->cmd) {
            if (kill(evs[s->first].pid, evs[s->first].signal) != 0) err[s->first] = errno;
            continue;
        }
        for (int j = s->first + 1; j < s->first + s->count; j++) times[j] = times[s->first];
        int st = system(s->cmd);
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            for (int j = s->first; j < s->first + s->count; j++) err[j] = EIO;
    }
}

/* A link's fault or its end (KVI_LINK_DOWN, KVI_LINK_SLOW, KVI_LINK_UP): one
 * KV_INJECT_LINK command per host, then the lines of those done. */
static int link_group(const kvi_event *evs, int n, const char *log_path, int *err_out,
                      double *spread_s) {
    const char *tmpl = getenv("KV_INJECT_LINK");
    int *err = calloc((size_t)n, sizeof *err), *pick = calloc((size_t)n, sizeof *pick);
    long long *times = calloc((size_t)n, sizeof *times);
    int rc = -1, fd = -1;
    if (!err || !pick || !times) goto out;
    if (log_path && tmpl && *tmpl && (fd = kvi__log_open(log_path)) < 0) goto out;
    double t0 = mono();
    for (int i = 0; i < n; i++) {
        char cmd[CMD_MAX];
        if (!tmpl || !*tmpl) err[i] = ENOTSUP;
        else if (!kvi__valid_host(evs[i].host) || expand(tmpl, &evs[i], 1, cmd)) err[i] = EINVAL;
        if (err[i]) continue;
        times[i] = kvi_wall_ns();
        int st = system(cmd);
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) err[i] = EIO;
    }
    if (spread_s) *spread_s = mono() - t0;
    if (err_out) memcpy(err_out, err, (size_t)n * sizeof *err);
    if (fd >= 0) {
        for (int i = 0; i < n; i++) pick[i] = !err[i];
        if (kvi__log_write(fd, evs, n, pick, times, NULL)) goto out;
    }
    rc = 0;
    for (int i = 0; i < n; i++) rc += err[i] != 0;
out:;
    int saved = errno;
    free(err);
    free(pick);
    free(times);
    if (rc < 0 && saved == 0) saved = ENOMEM;
    errno = saved;
    return rc;
}

int kvi__kill_group(const kvi_event *evs, int n, const char *log_path, int *err_out,
                    double *spread_s, int all_local) {
    if (!evs || n < 1) {
        errno = EINVAL;
        return -1;
    }
    int k = 1;   /* a vanish is signals, then a link: each part on its own */
    while (k < n && kvi__is_link(evs[k].signal) == kvi__is_link(evs[0].signal)) k++;
    if (k < n) {
        double s1 = 0, s2 = 0;
        int a = kvi__kill_group(evs, k, log_path, err_out, &s1, all_local);
        int b = a < 0 ? -1 : kvi__kill_group(evs + k, n - k, log_path, err_out ? err_out + k : NULL,
                                            &s2, all_local);
        if (spread_s) *spread_s = s1 + s2;
        return b < 0 ? -1 : a + b;
    }
    if (kvi__is_link(evs[0].signal))
        return link_group(evs, n, log_path, err_out, spread_s);
    int *err = calloc((size_t)n, sizeof *err), *local = calloc((size_t)n, sizeof *local);
    int *pick = calloc((size_t)n, sizeof *pick);
    step *steps = calloc((size_t)n, sizeof *steps);
    long long *times = calloc((size_t)n, sizeof *times);
    int rc = -1, ns = 0, fd = -1, self = 0;
    if (!err || !local || !pick || !steps || !times) goto out;
    ns = plan(evs, n, all_local, err, local, steps);
    for (int i = 0; i < n; i++) self |= local[i] && evs[i].pid == (int)getpid();
    for (int i = 0; i < n; i++) pick[i] = !err[i];
    if (log_path && ns > 0) {
        if (self ? kvi__log_lines(log_path, evs, n, pick, NULL) : (fd = kvi__log_open(log_path)) < 0)
            goto out;
    }
    double t0 = mono();
    send_all(evs, n, err, steps, ns, times);
    if (spread_s) *spread_s = mono() - t0;
    if (err_out) memcpy(err_out, err, (size_t)n * sizeof *err);
    if (fd >= 0) {
        for (int i = 0; i < n; i++) pick[i] = !err[i];
        if (kvi__log_write(fd, evs, n, pick, times, NULL)) goto out;   /* sent, but not logged */
    }
    rc = 0;
    for (int i = 0; i < n; i++) rc += err[i] != 0;
out:;
    int saved = errno;
    for (int k = 0; k < ns; k++) {
        free(steps[k].cmd);
        free(steps[k].freeze);
    }
    free(err);
    free(local);
    free(pick);
    free(steps);
    free(times);
    if (rc < 0 && saved == 0) saved = ENOMEM;
    errno = saved;
    return rc;
}

int kvi_kill_group(const kvi_event *evs, int n, const char *log_path, int *err, double *spread_s) {
    return kvi__kill_group(evs, n, log_path, err, spread_s, 0);
}

int kvi_kill(const kvi_event *ev, int pid, const char *host, const char *log_path) {
    if (!ev) {
        errno = EINVAL;
        return -1;
    }
    kvi_event one = *ev;
    if (pid > 0) one.pid = pid;
    if (host && *host) snprintf(one.host, sizeof one.host, "%s", host);
    int err = 0, rc = kvi_kill_group(&one, 1, log_path, &err, NULL);
    if (rc == 0) return 0;
    if (rc > 0) errno = err;
    return -1;
}
