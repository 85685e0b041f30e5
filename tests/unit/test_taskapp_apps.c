/*
 * test_taskapp_apps.c -- the task runtime's applications, queue and
 * settings, without MPI (experiments/taskapp/).
 *
 * Pass rules:
 *  - N-Queens run as tasks on one queue gives OEIS A000170 for N = 4..12,
 *    whatever the split depth (1, 3, N - 1), and knows the published value
 *    of every N it accepts;
 *  - UTS: a root's state is SHA-1 of 16 zero bytes and the seed (big-endian);
 *    the binomial T3 root has its b0 = 2000 children, all at height 1; the
 *    published counts come back for each sample tree's parameters;
 *  - the queue pops the newest task and gives away the oldest;
 *  - settings: an unknown name is left to the YCSB workload (1), bad
 *    sizes, trees and kill points are refused with a message, NAME:RANK
 *    is parsed, a new application needs its size again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <string.h>

#include "taskapp.h"

static const int64_t a000170[] = {2, 10, 4, 40, 92, 352, 724, 2680, 14200};  /* N = 4..12 */

static int64_t run_all(const ta_params *p, int64_t res[2], long long *tasks) {
    ta_queue q = {0};
    ta_task t;
    p->app->root(p, &t);
    assert_int_equal(ta_queue_push(&q, &t), 0);
    res[0] = res[1] = 0;
    *tasks = 0;
    while (ta_queue_pop(&q, &t)) {
        assert_int_equal(p->app->run(p, &t, &q, res), 0);
        (*tasks)++;
    }
    ta_queue_free(&q);
    return res[0];
}

static void test_nqueens(void **st) {
    (void)st;
    char err[200];
    for (int n = 4; n <= 12; n++) {
        int splits[] = {1, 3, n - 1};
        for (int i = 0; i < 3; i++) {
            ta_params p;
            ta_params_default(&p);
            char v[12];
            snprintf(v, sizeof v, "%d", n);
            assert_int_equal(ta_params_set(&p, "size", v, err, sizeof err), 0);
            p.split = splits[i];
            int64_t res[2], want[2];
            long long tasks;
            assert_int_equal(run_all(&p, res, &tasks), a000170[n - 4]);
            assert_int_equal(p.app->expected(&p, want), 1);
            assert_int_equal(want[0], a000170[n - 4]);
        }
    }
}

static void test_uts_root(void **st) {
    (void)st;
    char err[200];
    ta_params p;
    ta_params_default(&p);
    assert_int_equal(ta_params_set(&p, "app", "uts", err, sizeof err), 0);
    assert_int_equal(ta_params_set(&p, "size", "T3", err, sizeof err), 0);
    ta_task root;
    p.app->root(&p, &root);
    unsigned char in[20] = {0}, want[20];
    in[19] = 42;  /* T3's seed, big-endian */
    SHA1(in, 20, want);
    assert_memory_equal(root.b, want, 20);
    ta_queue q = {0};
    int64_t res[2] = {0, 0};
    assert_int_equal(p.app->run(&p, &root, &q, res), 0);
    assert_int_equal(q.n, 2000);
    assert_int_equal(res[0], 1);
    for (size_t i = 0; i < q.n; i++) {
        int32_t h;
        memcpy(&h, q.t[i].b + 20, sizeof h);
        assert_int_equal(h, 1);
    }
    ta_queue_free(&q);
    const char *trees[] = {"T1", "T2", "T3", "T4", "T5", "T1L", "T3L"};
    const int64_t nodes[] = {4130071, 4117769, 4112897, 4132453, 4147582, 102181082, 111345631};
    for (int i = 0; i < 7; i++) {
        int64_t w[2];
        assert_int_equal(ta_params_set(&p, "size", trees[i], err, sizeof err), 0);
        assert_int_equal(p.app->expected(&p, w), 1);
        assert_int_equal(w[0], nodes[i]);
    }
}

static void test_queue(void **st) {
    (void)st;
    ta_queue q = {0};
    for (int i = 0; i < 1000; i++) {
        ta_task t = {{0}};
        t.b[0] = (unsigned char)i;
        t.b[1] = (unsigned char)(i >> 8);
        assert_int_equal(ta_queue_push(&q, &t), 0);
    }
    ta_queue_drop_bottom(&q, 10);  /* tasks 0..9 given away */
    assert_int_equal(q.n, 990);
    assert_int_equal(q.t[0].b[0], 10);
    ta_task t;
    assert_int_equal(ta_queue_pop(&q, &t), 1);
    assert_int_equal(t.b[0] | t.b[1] << 8, 999);
    ta_queue_free(&q);
    assert_int_equal(ta_queue_pop(&q, &t), 0);
}

static void test_settings(void **st) {
    (void)st;
    char err[300];
    ta_params p;
    ta_params_default(&p);
    assert_int_equal(ta_params_set(&p, "records", "10", err, sizeof err), 1);
    assert_int_equal(ta_params_set(&p, "kind", "taskapp", err, sizeof err), 0);
    assert_true(p.enabled);
    assert_int_equal(ta_params_set(&p, "kind", "tasks", err, sizeof err), -1);
    assert_int_equal(ta_params_set(&p, "size", "3", err, sizeof err), -1);
    assert_non_null(strstr(err, "board size"));
    assert_int_equal(ta_params_set(&p, "app", "uts", err, sizeof err), 0);
    assert_int_equal(ta_params_check(&p, err, sizeof err), -1);  /* uts needs its size */
    assert_int_equal(ta_params_set(&p, "size", "T9", err, sizeof err), -1);
    assert_int_equal(ta_params_set(&p, "kill_point", "adopt:3", err, sizeof err), 0);
    assert_string_equal(p.kill_point, "adopt");
    assert_int_equal(p.kill_rank, 3);
    assert_int_equal(ta_params_set(&p, "kill_point", "claim-read", err, sizeof err), 0);
    assert_int_equal(p.kill_rank, -1);
    assert_int_equal(ta_params_set(&p, "kill_point", "nowhere", err, sizeof err), -1);
    assert_int_equal(ta_params_set(&p, "kill_point", "adopt:x", err, sizeof err), -1);
    assert_int_equal(ta_params_set(&p, "checkpoint_ms", "-1", err, sizeof err), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nqueens), cmocka_unit_test(test_uts_root), cmocka_unit_test(test_queue),
        cmocka_unit_test(test_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
