/*
 * nodeloss.c -- the schedule of a node loss (target=node:random, node:NAME).
 *
 * The nodes are the distinct hosts of the rank table, numbered in the
 * order of their lowest rank, so the same table gives the same numbering
 * everywhere.  node:NAME picks one; node:random draws `count` distinct
 * nodes (a partial Fisher-Yates shuffle of the eligible ones on the
 * schedule's generator: victims first, then moments, as for rank
 * targets).  The launch node is eligible only with allow_rank0=1: the
 * loss of the node where mpirun runs ends an Open MPI job.  It is the node
 * whose ranks are the launcher's own children (a daemon and no
 * daemon-parent in the rank table: prterun forks them itself); when no
 * rank is (kvrun --launcher-alone: mpirun on a node without ranks), every
 * node may be drawn, rank 0's too; when the table knows no daemon at all
 * (a program not started by Open MPI) rank 0's node stands for it.  Each
 * event lists the node's daemon processes (each distinct pid once, the
 * launch-side prted before the daemon), then its ranks, its lowest rank
 * last: that rank carries the whole event out in the in-process form and
 * must die last.  A partition (signal=LINK) is one event per node, its
 * host's link (role host), no process; a vanish (signal=VANISH) the
 * node's processes stopped (STOP, ended by KILL), then its host's link; a
 * slow link (signal=SLOW) one event per node too, its host's link.
 * The limits count nodes at once (placement keeps a pair's copies on
 * distinct nodes) and ranks in total;
 * a straggler (STOP with for=) has none: it loses nothing.  A partition
 * has them even with an end: one that outlasts the runtime's detection
 * is the loss of that node.  A lost daemon (daemon:random, daemon:NAME)
 * is the node's daemon processes alone, its ranks spared; its limits are a
 * node loss's, since the runtime may take the ranks for lost with it.
 * node:random:K loses K drawn nodes in each event, together (one kill
 * group, so the injector freezes all their ranks before any kill), and
 * needs max_simultaneous >= K.  A replayed failure log (when=trace:FILE) takes its nodes and moments
 * from the log instead (replay): its distinct names in the order of their
 * first failure get the eligible nodes in a drawn order (the shuffle of
 * node:random), each name's first failure only, the limits as for
 * node:random.
 */
#include <stdlib.h>
#include <string.h>

#include "inject_int.h"

typedef struct nodes {
    int n;           /* distinct hosts */
    int *of_rank;    /* of_rank[r]: node of rank r */
    int *first;      /* first[k]: lowest rank of node k */
    int *size;       /* size[k]: ranks on node k */
} nodes;

static void nodes_free(nodes *nd) {
    free(nd->of_rank);
    free(nd->first);
    free(nd->size);
}

static int nodes_make(const kvi_rank_info *ranks, int nranks, const int *idx, nodes *nd) {
    nd->n = 0;
    nd->of_rank = malloc((size_t)nranks * sizeof(int));
    nd->first = malloc((size_t)nranks * sizeof(int));
    nd->size = calloc((size_t)nranks, sizeof(int));
    if (!nd->of_rank || !nd->first || !nd->size) return -1;
    for (int r = 0; r < nranks; r++) {
        const char *h = ranks[idx[r]].host;
        int k = 0;
        while (k < nd->n && strcmp(ranks[idx[nd->first[k]]].host, h)) k++;
        if (k == nd->n) nd->first[nd->n++] = r;
        nd->of_rank[r] = k;
        nd->size[k]++;
    }
    return 0;
}

/* The launch node: the node of a rank forked by the launcher itself (a
 * daemon, no daemon-parent); -1 when the table knows daemons but none is
 * the launcher (it runs on a node without ranks); 0, rank 0's node, when
 * it knows none. */
static int launch_node(const kvi_rank_info *ranks, int nranks, const int *idx, const nodes *nd) {
    int known = 0;
    for (int r = 0; r < nranks; r++) {
        const kvi_rank_info *x = &ranks[idx[r]];
        known |= x->daemon > 0;
        if (x->daemon > 0 && x->daemon_parent == 0) return nd->of_rank[r];
    }
    return known ? -1 : 0;
}

/* The victim nodes, node_k per event, into chosen[0..count*node_k-1]. */
static int pick_nodes(const kvi_spec *s, kvi_rng *rng, const kvi_rank_info *ranks, int nranks,
                      const int *idx, const nodes *nd, int *chosen, char *err, size_t len) {
    const char *head = ranks[idx[0]].host;
    int launch = s->allow_rank0 ? -1 : launch_node(ranks, nranks, idx, nd);
    if (!s->node_random) {
        int k = 0;
        while (k < nd->n && strcmp(ranks[idx[nd->first[k]]].host, s->host)) k++;
        if (k == nd->n)
            return kvu_fail(err, len, "target: no rank runs on node '%s' (rank 0 is on '%s')",
                             s->host, head);
        if (k == launch)
            return kvu_fail(err, len, "target: node '%s' is the launch node (mpirun's), whose "
                             "loss ends an Open MPI job; set allow_rank0=1 to kill it anyway, or "
                             "run mpirun on a node of its own (kvrun --launcher-alone)", s->host);
        chosen[0] = k;
        return 0;
    }
    int m = nd->n - (launch >= 0), want = s->count * s->node_k;
    if (want > m)
        return kvu_fail(err, len, "target: node:random%s x count=%d needs %d distinct nodes but "
                         "only %d are eligible%s", s->node_k > 1 ? ":K" : "", s->count, want, m,
                         launch >= 0 ? " (the launch node is never drawn unless allow_rank0=1)" : "");
    int *pool = malloc((size_t)(m > 0 ? m : 1) * sizeof *pool);
    if (!pool) return kvu_fail(err, len, "schedule: out of memory");
    for (int k = 0, i = 0; k < nd->n; k++)
        if (k != launch) pool[i++] = k;
    for (int i = 0; i < want; i++) {
        int j = i + (int)kvi__rng_below(rng, (uint64_t)(m - i));
        int t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
        chosen[i] = pool[i];
    }
    free(pool);
    return 0;
}

static int check_node_limits(const kvi_spec *s, const nodes *nd, const int *chosen,
                             int nranks, int max_sim, char *err, size_t len) {
    int lost = 0, total = s->count * s->node_k;
    for (int e = 0; e < total; e++) lost += nd->size[chosen[e]];
    if (s->force || kvi__straggler(s)) return 0;
    if (max_sim < s->node_k)
        return kvu_fail(err, len, "target: %d node(s) would die at once but the store survives "
                         "at most %d simultaneous losses (max_simultaneous); set force=1 to "
                         "run it anyway", s->node_k, max_sim);
    if (lost > nranks - 1 || total >= nd->n)
        return kvu_fail(err, len, "target: %d node loss(es) of %d nodes would leave no "
                         "survivor; set force=1 to run it anyway", total, nd->n);
    return 0;
}

/* pid is not in list[0..n-1] and not 0. */
static int fresh(int pid, const int *list, int n) {
    if (pid <= 0) return 0;
    for (int i = 0; i < n; i++)
        if (list[i] == pid) return 0;
    return 1;
}

static void put_event(kvi_event *ev, const kvi_event *moment, int e, int rank, int pid,
                      int role, int by, const char *host, int sig) {
    *ev = *moment;
    ev->index = e;
    ev->rank = rank;
    ev->pid = pid;
    ev->role = role;
    ev->by_rank = by;
    ev->signal = sig;
    snprintf(ev->host, sizeof ev->host, "%s", host);
}

/* Node k's kills of event e at out[*n..]: daemon processes, ranks, the
 * lowest rank last.  seen: scratch of 2*nranks pids. */
static void node_events(const kvi_spec *s, const kvi_rank_info *ranks, int nranks,
                        const int *idx, const nodes *nd, int k, int e,
                        const kvi_event *moment, int *seen, kvi_event *out, int *n) {
    int by = nd->first[k], ns = 0;
    const char *host = ranks[idx[by]].host;
    if (s->signal == KVI_LINK_DOWN || s->signal == KVI_LINK_SLOW) {   /* the host's link, no process */
        put_event(&out[*n], moment, e, -1, 0, KVI_ROLE_HOST, by, host, s->signal);
        out[*n].rate_kbit = s->rate_kbit;
        out[(*n)++].loss_pct = s->loss_pct;
        return;
    }
    int sig = s->signal == KVI_VANISH ? SIGSTOP : s->signal;   /* a vanish: stopped, ... */
    for (int role = KVI_ROLE_DAEMON_PARENT; role >= KVI_ROLE_DAEMON; role--)
        for (int r = 0; r < nranks; r++) {
            const kvi_rank_info *ri = &ranks[idx[r]];
            int pid = role == KVI_ROLE_DAEMON ? ri->daemon : ri->daemon_parent;
            if (nd->of_rank[r] != k || !fresh(pid, seen, ns)) continue;
            seen[ns++] = pid;
            put_event(&out[(*n)++], moment, e, -1, pid, role, by, host, sig);
        }
    if (s->daemon_only) return;   /* a lost daemon: its ranks are spared */
    for (int r = by + 1; r < nranks; r++)
        if (nd->of_rank[r] == k)
            put_event(&out[(*n)++], moment, e, r, ranks[idx[r]].pid, KVI_ROLE_RANK, by, host, sig);
    put_event(&out[(*n)++], moment, e, by, ranks[idx[by]].pid, KVI_ROLE_RANK, by, host, sig);
    if (s->signal == KVI_VANISH) {   /* ... and cut off */
        put_event(&out[(*n)++], moment, e, -1, 0, KVI_ROLE_HOST, by, host, KVI_LINK_DOWN);
        out[*n - 1].end_signal = kvi__end_signal(KVI_VANISH, KVI_ROLE_HOST);
    }
}

/* The events of the chosen nodes; times: a trace's moments (scaled), or
 * NULL to draw them. */
static int fill_node_events(const kvi_spec *s, kvi_rng *rng, const kvi_rank_info *ranks,
                            int nranks, const int *idx, const nodes *nd, const int *chosen,
                            const double *times, kvi_schedule *out, char *err, size_t len) {
    int cap = 0;
    for (int e = 0; e < s->count * s->node_k; e++) cap += 3 * nd->size[chosen[e]] + 1;   /* rank + 2 daemons; a link */
    int *seen = malloc((size_t)cap * sizeof *seen);
    out->events = calloc((size_t)cap, sizeof *out->events);
    if (!seen || !out->events) {
        free(seen);
        return kvu_fail(err, len, "schedule: out of memory");
    }
    double t = 0;
    int n = 0;
    for (int e = 0; e < s->count; e++) {
        kvi_event moment;
        if (times) t = times[e];
        kvi__set_moment(s, rng, e, &t, &moment);
        for (int j = 0; j < s->node_k; j++)   /* nodes lost together: one event */
            node_events(s, ranks, nranks, idx, nd, chosen[e * s->node_k + j], e, &moment, seen,
                        out->events, &n);
    }
    free(seen);
    out->nevents = n;
    return 0;
}

/* A trace's replay: its failures in order, each name's first only, at
 * most s->count (0: all), into times[] (scaled) and the count *k; the
 * distinct names then get the eligible nodes in a drawn order (ts: s with
 * count = *k and node:random, for pick_nodes), into chosen[]. */
static int replay(const kvi_spec *s, kvi_rng *rng, const kvi_rank_info *ranks, int nranks,
                  const int *idx, const nodes *nd, int *chosen, double *times, int *k,
                  char *err, size_t len) {
    kvi__trace tr;
    if (kvi__trace_read(s->trace, &tr, err, len)) return -1;
    char *done = calloc((size_t)tr.nnames, 1);
    int rc = done ? 0 : kvu_fail(err, len, "schedule: out of memory");
    *k = 0;
    for (int i = 0; !rc && i < tr.n && (s->count == 0 || *k < s->count); i++) {
        if (*k == nranks) {   /* more than the run could ever lose */
            rc = kvu_fail(err, len, "when: trace %s fails more than the run's %d ranks' nodes; "
                          "count=K replays its first K", s->trace, nranks);
            break;
        }
        if (done[tr.node[i]]) continue;   /* a node fails once in a run */
        done[tr.node[i]] = 1;
        times[*k] = tr.t[i] * s->scale;
        chosen[(*k)++] = tr.node[i];      /* names are numbered by first failure */
    }
    kvi_spec ts = *s;
    ts.count = *k;
    int *order = malloc((size_t)(*k > 0 ? *k : 1) * sizeof *order);
    if (!rc && !order) rc = kvu_fail(err, len, "schedule: out of memory");
    char why[256] = "";
    if (!rc && pick_nodes(&ts, rng, ranks, nranks, idx, nd, order, why, sizeof why))
        rc = kvu_fail(err, len, "when: trace %s: %d failed nodes to replay (%s); count=K replays "
                       "the first K", s->trace, *k, why);
    for (int e = 0; !rc && e < *k; e++) chosen[e] = order[chosen[e]];
    free(order);
    free(done);
    kvi__trace_free(&tr);
    return rc;
}

int kvi__build_node_loss(const kvi_spec *s, kvi_rng *rng, const kvi_rank_info *ranks,
                         int nranks, const int *idx, int max_sim, kvi_schedule *out,
                         char *err, size_t len) {
    nodes nd = {0};
    kvi_spec ts = *s;   /* a trace's: count = the failures taken from it */
    int trace = s->when == KVI_WHEN_TRACE, cap = trace ? nranks : s->count * s->node_k;
    int *chosen = malloc((size_t)cap * sizeof *chosen);
    double *times = trace ? malloc((size_t)cap * sizeof *times) : NULL;
    int rc = chosen && (times || !trace) && nodes_make(ranks, nranks, idx, &nd) == 0
                 ? 0 : kvu_fail(err, len, "schedule: out of memory");
    if (!rc && trace) rc = replay(s, rng, ranks, nranks, idx, &nd, chosen, times, &ts.count, err, len);
    else if (!rc) rc = pick_nodes(s, rng, ranks, nranks, idx, &nd, chosen, err, len);
    if (!rc) rc = check_node_limits(&ts, &nd, chosen, nranks, max_sim, err, len);
    if (!rc) rc = fill_node_events(&ts, rng, ranks, nranks, idx, &nd, chosen, times, out, err, len);
    free(chosen);
    free(times);
    nodes_free(&nd);
    return rc;
}
