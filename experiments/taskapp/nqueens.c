/*
 * nqueens.c -- N-Queens: the number of ways to place N non-attacking
 * queens on an N x N board, as tasks.
 *
 * A task is a partial board: the rows filled so far and three bit masks
 * (columns taken, and the two diagonals as seen from the next row).  A task
 * above workload.split_depth pushes one child per free square of its next
 * row; a task at that depth counts the solutions below it sequentially by
 * backtracking over the same masks.  The answers are known independently:
 * OEIS A000170 (the table below), so a run is checked against published
 * values, not against another run of this code.
 */
#include <string.h>

#include "kv_util.h"
#include "taskapp.h"

/* OEIS A000170, "Number of ways of placing n nonattacking queens on an n X n
 * board", a(4)..a(20). */
static const int64_t a000170[] = {2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184,
                                  14772512, 95815104, 666090624, 4968057848LL, 39029188884LL};
enum { NQ_MIN = 4, NQ_MAX = NQ_MIN + (int)(sizeof a000170 / sizeof a000170[0]) - 1 };

typedef struct nq_task {
    uint32_t row, cols, d1, d2;
} nq_task;

static int set_size(ta_params *p, const char *v, char *err, size_t len) {
    long long n;
    if (kvu_parse_ll(v, NQ_MIN, NQ_MAX, false, &n))
        return kvu_fail(err, len, "size: '%s' is not a board size %d..%d", v, NQ_MIN, NQ_MAX);
    p->n = (int)n;
    return 0;
}

static void root(const ta_params *p, ta_task *t) {
    (void)p;
    memset(t, 0, sizeof *t);
}

/* Solutions below a board whose columns, diagonals are taken as given. */
static int64_t solve(uint32_t mask, uint32_t cols, uint32_t d1, uint32_t d2) {
    if (cols == mask) return 1;
    int64_t found = 0;
    for (uint32_t free = mask & ~(cols | d1 | d2); free; ) {
        uint32_t bit = free & -free;
        free ^= bit;
        found += solve(mask, cols | bit, ((d1 | bit) << 1) & mask, (d2 | bit) >> 1);
    }
    return found;
}

static int run(const ta_params *p, const ta_task *t, ta_queue *q, int64_t res[2]) {
    nq_task b;
    memcpy(&b, t->b, sizeof b);
    uint32_t mask = (1u << p->n) - 1;
    if ((int)b.row >= p->split) {
        res[0] += solve(mask, b.cols, b.d1, b.d2);
        return 0;
    }
    for (uint32_t free = mask & ~(b.cols | b.d1 | b.d2); free; ) {
        uint32_t bit = free & -free;
        free ^= bit;
        nq_task c = {b.row + 1, b.cols | bit, ((b.d1 | bit) << 1) & mask, (b.d2 | bit) >> 1};
        ta_task ct = {{0}};
        memcpy(ct.b, &c, sizeof c);
        if (ta_queue_push(q, &ct)) return -1;
    }
    return 0;
}

static int expected(const ta_params *p, int64_t want[2]) {
    if (p->n < NQ_MIN || p->n > NQ_MAX) return 0;
    want[0] = a000170[p->n - NQ_MIN];
    want[1] = 0;
    return 1;
}

const ta_app ta_nqueens = {
    .name = "nqueens", .sizes = "N, 4..20", .set_size = set_size, .root = root, .run = run,
    .expected = expected, .res_names = {"solutions", ""},
};
