/*
 * trace.c -- failure logs: reading one for replay (when=trace:FILE), and
 * writing one drawn from a Weibull law (kvi_trace_write_weibull).
 *
 * A trace is CSV with the header "time_s,node", then one failure per
 * line: the seconds since the log's start (non-decreasing) and the name
 * of the node that failed in the system the log comes from; blank lines
 * and lines starting with '#' are skipped (docs/formats.md).  Replay
 * happens in nodeloss.c: the distinct names, in the order of their first
 * failure, are given the run's eligible nodes in a drawn order, and a
 * name that fails again is not killed again (a run does not repair a
 * node).  Reading keeps the times and, per line, the index of its name
 * among the distinct ones; every malformed line is an error naming the
 * file and the line.  The writer draws the gaps between failures from a
 * Weibull law of the given mean and shape, on the schedule's generator,
 * and the node of each failure uniformly.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject_int.h"

enum { TRACE_MAX = 100000 };   /* failures a trace may hold */

typedef struct names {
    char (*name)[KVI_HOST_MAX];
    int n, cap;
} names;

/* Index of name in nm, appended when new; -1 when out of memory. */
static int name_index(names *nm, const char *name) {
    for (int i = 0; i < nm->n; i++)
        if (strcmp(nm->name[i], name) == 0) return i;
    if (nm->n == nm->cap) {
        int cap = nm->cap ? 2 * nm->cap : 64;
        void *p = realloc(nm->name, (size_t)cap * sizeof *nm->name);
        if (!p) return -1;
        nm->name = p;
        nm->cap = cap;
    }
    snprintf(nm->name[nm->n], KVI_HOST_MAX, "%s", name);
    return nm->n++;
}

/* One data line "time_s,node" into tr (at index tr->n). */
static int parse_line(char *line, const char *path, int lineno, double prev, kvi__trace *tr,
                      names *nm, char *err, size_t len) {
    char *comma = strchr(line, ',');
    if (!comma || strchr(comma + 1, ','))
        return kvu_fail(err, len, "when: %s line %d: not 'time_s,node'", path, lineno);
    *comma = '\0';
    char *t = kvi__trim(line), *node = kvi__trim(comma + 1), *end;
    errno = 0;
    double x = strtod(t, &end);
    if (!*t || *end || errno || !(x >= 0) || !isfinite(x))
        return kvu_fail(err, len, "when: %s line %d: time '%s' is not seconds >= 0", path, lineno, t);
    if (x < prev)
        return kvu_fail(err, len, "when: %s line %d: time %g goes back (the line before: %g)",
                         path, lineno, x, prev);
    if (!kvi__valid_host(node))
        return kvu_fail(err, len, "when: %s line %d: node '%s' is not a name of 1-%d letters, "
                         "digits, '.', '-' or '_'", path, lineno, node, KVI_HOST_MAX - 1);
    int k = name_index(nm, node);
    if (k < 0) return kvu_fail(err, len, "when: out of memory");
    tr->t[tr->n] = x;
    tr->node[tr->n++] = k;
    return 0;
}

int kvi__trace_read(const char *path, kvi__trace *tr, char *err, size_t len) {
    memset(tr, 0, sizeof *tr);
    FILE *f = fopen(path, "r");
    if (!f) return kvu_fail(err, len, "when: cannot read trace %s: %s", path, strerror(errno));
    names nm = {0};
    char buf[512];
    int lineno = 0, header = 0, rc = 0;
    tr->t = malloc(TRACE_MAX * sizeof *tr->t);
    tr->node = malloc(TRACE_MAX * sizeof *tr->node);
    if (!tr->t || !tr->node) rc = kvu_fail(err, len, "when: out of memory");
    while (!rc && fgets(buf, sizeof buf, f)) {
        lineno++;
        if (!strchr(buf, '\n') && !feof(f)) {
            rc = kvu_fail(err, len, "when: %s line %d: longer than %zu characters", path, lineno,
                          sizeof buf - 2);
            break;
        }
        char *line = kvi__trim(buf);
        if (!*line || *line == '#') continue;
        if (!header) {
            if (strcmp(line, "time_s,node"))
                rc = kvu_fail(err, len, "when: %s line %d: the header must be 'time_s,node'",
                              path, lineno);
            header = 1;
            continue;
        }
        if (tr->n == TRACE_MAX)
            rc = kvu_fail(err, len, "when: %s: more than %d failures", path, TRACE_MAX);
        else
            rc = parse_line(line, path, lineno, tr->n ? tr->t[tr->n - 1] : 0, tr, &nm, err, len);
    }
    if (!rc && ferror(f)) rc = kvu_fail(err, len, "when: cannot read trace %s", path);
    if (!rc && tr->n == 0) rc = kvu_fail(err, len, "when: trace %s holds no failure", path);
    fclose(f);
    tr->nnames = nm.n;
    free(nm.name);
    if (rc) kvi__trace_free(tr);
    return rc;
}

void kvi__trace_free(kvi__trace *tr) {
    free(tr->t);
    free(tr->node);
    memset(tr, 0, sizeof *tr);
}

int kvi_trace_write_weibull(FILE *f, double mtbf_s, double shape, int nodes, int count,
                            unsigned long long seed) {
    if (!f || !(mtbf_s > 0) || !(shape >= 0.1 && shape <= 100) || nodes < 1 || count < 1) {
        errno = EINVAL;
        return -1;
    }
    kvi_spec s = {.when = KVI_WHEN_WEIBULL, .mtbf_s = mtbf_s, .shape = shape};
    kvi_rng rng;
    kvu_rng_seed(&rng, seed);
    fprintf(f, "# %d failures drawn from a Weibull law, mean %g s between them, shape %g, "
            "over %d nodes, seed %llu (kv_inject --make-trace)\ntime_s,node\n",
            count, mtbf_s, shape, nodes, seed);
    double t = 0;
    for (int i = 0; i < count; i++) {
        t += kvi__draw_gap(&s, &rng);
        fprintf(f, "%.6f,node%llu\n", t, (unsigned long long)kvi__rng_below(&rng, (uint64_t)nodes));
    }
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
