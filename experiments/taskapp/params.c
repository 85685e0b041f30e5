/*
 * params.c -- the settings of a task run: workload.kind, app, size,
 * split_depth, checkpoint_ms, kill_point.
 *
 * The driver hands every workload.NAME setting here first; a name that is
 * not one of these goes on to the YCSB workload (workload.h).  The size
 * is the application's to parse (N for N-Queens, a sample tree's name for
 * UTS), so an application brings its own sizes and published answers.  A
 * kill point names a step of the protocol (ta_int.h's TA_POINTS) where the
 * scheduled victim dies instead of between two tasks.
 */
#include <string.h>

#include "kv_util.h"
#include "ta_int.h"

static const ta_app *const apps[] = {&ta_nqueens, &ta_uts_app};
enum { NAPPS = sizeof apps / sizeof apps[0] };

static const char *const points[] = {
#define TA_POINT_NAME_(id, name, what) name,
    TA_POINTS(TA_POINT_NAME_)
#undef TA_POINT_NAME_
};
enum { NPOINTS = sizeof points / sizeof points[0] };

void ta_params_default(ta_params *p) {
    memset(p, 0, sizeof *p);
    p->app = &ta_nqueens;
    p->n = 14;
    p->split = 4;
    p->checkpoint_ms = 50;
    p->kill_rank = -1;
    strcpy(p->size, "14");
}

static int set_app(ta_params *p, const char *v, char *err, size_t len) {
    for (int i = 0; i < NAPPS; i++)
        if (!strcmp(v, apps[i]->name)) {
            p->app = apps[i];
            p->size[0] = 0;  /* the size must be given again for another application */
            return 0;
        }
    return kvu_fail(err, len, "app: '%s' is not nqueens or uts", v);
}

/* NAME or NAME:RANK (only that rank dies at the point; the others'
 * events fire between tasks, so a second failure can hit a recovery). */
static int set_point(ta_params *p, const char *v, char *err, size_t len) {
    p->kill_point[0] = 0;
    p->kill_rank = -1;
    if (!v[0]) return 0;
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    long long r = -1;
    if (colon && kvu_parse_ll(colon + 1, 0, TA_MAX_IDS - 1, false, &r))
        return kvu_fail(err, len, "kill_point: '%s' is not NAME or NAME:RANK", v);
    for (int i = 0; i < NPOINTS; i++)
        if (strlen(points[i]) == n && !strncmp(v, points[i], n)) {
            memcpy(p->kill_point, v, n);
            p->kill_point[n] = 0;
            p->kill_rank = (int)r;
            return 0;
        }
    char names[256] = "";
    for (int i = 0; i < NPOINTS; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", points[i]);
    return kvu_fail(err, len, "kill_point: '%s' is not one of %s", v, names);
}

int ta_params_set(ta_params *p, const char *name, const char *v, char *err, size_t len) {
    long long n;
    double d;
    if (!strcmp(name, "kind")) {
        if (strcmp(v, "ycsb") && strcmp(v, "taskapp"))
            return kvu_fail(err, len, "kind: '%s' is not ycsb or taskapp", v);
        p->enabled = !strcmp(v, "taskapp");
        return 0;
    }
    if (!strcmp(name, "app")) return set_app(p, v, err, len);
    if (!strcmp(name, "size")) {
        if (strlen(v) >= sizeof p->size) return kvu_fail(err, len, "size: '%.40s' is too long", v);
        if (p->app->set_size(p, v, err, len)) return -1;
        strcpy(p->size, v);
        return 0;
    }
    if (!strcmp(name, "split_depth")) {
        if (kvu_parse_ll(v, 1, 30, false, &n)) return kvu_fail(err, len, "split_depth: '%s' is not 1..30", v);
        p->split = (int)n;
        return 0;
    }
    if (!strcmp(name, "checkpoint_ms")) {
        if (kvu_parse_double(v, &d) || d < 0 || d > 3.6e6)
            return kvu_fail(err, len, "checkpoint_ms: '%s' is not a number of milliseconds >= 0", v);
        p->checkpoint_ms = d;
        return 0;
    }
    if (!strcmp(name, "kill_point")) return set_point(p, v, err, len);
    return 1;
}

int ta_params_check(const ta_params *p, char *err, size_t len) {
    if (!p->size[0])
        return kvu_fail(err, len, "workload.app=%s needs workload.size (%s)", p->app->name, p->app->sizes);
    if (p->app == &ta_nqueens && p->split >= p->n)
        return kvu_fail(err, len, "workload.split_depth=%d must be below the board size %d", p->split, p->n);
    return 0;
}

void ta_usage(FILE *f) {
    fputs("  workload.kind  ycsb (default) | taskapp: a task-parallel application instead,\n"
          "                 with workload.app (nqueens | uts), size (N-Queens: N, 4..20; UTS:\n"
          "                 a sample tree, T1 T2 T3 T4 T5 T1L T3L), split_depth (N-Queens),\n"
          "                 checkpoint_ms (how often a rank's state goes to the store; 0 =\n"
          "                 never: not resilient), kill_point (NAME[:RANK]: docs/taskapp.md)\n", f);
}
