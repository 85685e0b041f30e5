/*
 * taskq.c -- a rank's local task queue.
 *
 * A growable array used as a stack: the owner pushes and pops at the top
 * (depth first, so the queue stays short), thieves take from the bottom,
 * where the oldest tasks are: near the root of the tree, so usually the
 * largest pieces of work.  Taking from the bottom moves the rest down; the
 * queue holds at most a few thousand 32-byte tasks.
 */
#include <stdlib.h>
#include <string.h>

#include "taskapp.h"

static int reserve(ta_queue *q, size_t n) {
    if (q->n + n <= q->cap) return 0;
    size_t cap = q->cap ? q->cap : 256;
    while (cap < q->n + n) cap *= 2;
    ta_task *t = realloc(q->t, cap * sizeof *t);
    if (!t) return -1;
    q->t = t;
    q->cap = cap;
    return 0;
}

int ta_queue_push(ta_queue *q, const ta_task *t) { return ta_queue_append(q, t, 1); }

int ta_queue_append(ta_queue *q, const ta_task *t, size_t n) {
    if (n == 0) return 0;
    if (reserve(q, n)) return -1;
    memcpy(q->t + q->n, t, n * sizeof *t);
    q->n += n;
    return 0;
}

int ta_queue_pop(ta_queue *q, ta_task *t) {
    if (q->n == 0) return 0;
    *t = q->t[--q->n];
    return 1;
}

void ta_queue_drop_bottom(ta_queue *q, size_t n) {
    if (n > q->n) n = q->n;
    memmove(q->t, q->t + n, (q->n - n) * sizeof *q->t);
    q->n -= n;
}

void ta_queue_free(ta_queue *q) {
    free(q->t);
    q->t = NULL;
    q->n = q->cap = 0;
}
