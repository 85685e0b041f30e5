/*
 * taskapp.h -- a resilient task-parallel runtime on the store, and the
 * applications it runs, as one more kind of kv_driver workload
 * (workload.kind=taskapp).
 *
 * The driver keeps its role (settings, the store backend, the failure
 * schedule, result files); this folder adds: the settings of a task run
 * (params.c), the applications, each with its published answers (nqueens.c,
 * uts.c), the local task queue (taskq.c), a rank's state in the store
 * (state.c), load balancing by work stealing through the store (steal.c),
 * recovery after the store's own (recover.c), the worker loop and
 * termination (runtime.c), and what the run reports (report.c).  The
 * protocol is in docs/taskapp.md and at the top of state.c and steal.c.
 */
#ifndef TA_TASKAPP_H
#define TA_TASKAPP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TA_TASK_BYTES 32   /* one task, as the applications encode it */
#define TA_MAX_IDS 128     /* ranks a task run may have (heads hold per-rank counters) */

typedef struct ta_task {
    unsigned char b[TA_TASK_BYTES];
} ta_task;

/* The local task queue: a stack whose bottom (index 0) holds the oldest
 * tasks, the ones thieves take. */
typedef struct ta_queue {
    ta_task *t;
    size_t n, cap;
} ta_queue;

int ta_queue_push(ta_queue *q, const ta_task *t);                 /* 0, or -1: no memory */
int ta_queue_pop(ta_queue *q, ta_task *t);                        /* 1, or 0 when empty */
int ta_queue_append(ta_queue *q, const ta_task *t, size_t n);     /* on top; 0 or -1 */
void ta_queue_drop_bottom(ta_queue *q, size_t n);                 /* remove the n oldest */
void ta_queue_free(ta_queue *q);

/* UTS tree parameters (uts.c). */
typedef struct ta_uts {
    int type, shape, depth, m, seed;
    double b0, q, shift;
} ta_uts;

/* The settings of a task run: workload.NAME (params.c). */
typedef struct ta_params {
    int enabled;                 /* workload.kind=taskapp */
    const struct ta_app *app;    /* workload.app */
    char size[32];               /* workload.size as given */
    int n, split;                /* N-Queens: board size, depth of the sequential tasks */
    ta_uts uts;                  /* UTS: the sample tree's parameters */
    double checkpoint_ms;        /* a rank's state goes to the store this often; 0 = never */
    char kill_point[24];         /* kill at this protocol point instead of between tasks */
    int kill_rank;               /* only this rank dies at the point (-1: any) */
} ta_params;

/* An application: tasks that make tasks, and two result counters summed
 * over every task (N-Queens: solutions, 0; UTS: nodes, leaves). */
typedef struct ta_app {
    const char *name;
    const char *sizes;           /* what workload.size may be, for messages */
    int (*set_size)(ta_params *p, const char *v, char *err, size_t len);
    void (*root)(const ta_params *p, ta_task *t);
    /* Execute t: push its children onto q, add to res; 0, or -1: no memory. */
    int (*run)(const ta_params *p, const ta_task *t, ta_queue *q, int64_t res[2]);
    /* The published answer for p: 1 and want[] set, or 0 when none is known. */
    int (*expected)(const ta_params *p, int64_t want[2]);
    const char *res_names[2];    /* what res[0] and res[1] count ("" = unused) */
} ta_app;

extern const ta_app ta_nqueens, ta_uts_app;

/* params.c: defaults; one workload.NAME setting: 0, -1 with err, or 1 when
 * the name is not a task-run setting (then it is the YCSB workload's). */
void ta_params_default(ta_params *p);
int ta_params_set(ta_params *p, const char *name, const char *value, char *err, size_t len);
int ta_params_check(const ta_params *p, char *err, size_t len);
void ta_usage(FILE *f);
/* The whole task run's settings against the store's, for nranks ranks. */
struct drv_settings;
int ta_check_run(const struct drv_settings *s, int nranks, char *err, size_t len);

/* report.c / runtime.c: the run on every rank of the store backend
 * (joined: a spare that replaced a failed rank and joins late). */
struct drv_ctx;
void ta_workload(struct drv_ctx *x, int joined);

#endif
