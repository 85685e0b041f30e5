/*
 * test_clock.c -- the clocks of kvstore.h, and the resolution they deliver
 * on this machine.
 *
 * Pass rules:
 *  - kv_clock_ns never goes back over 200,000 consecutive reads, and its
 *    smallest non-zero step is under 1 us; at least 90% of consecutive
 *    reads differ (the clock is finer than the time one read takes), where
 *    a clock of 0.24-us steps gives mostly equal reads;
 *  - durations of short busy loops measured with kv_clock_ns take many
 *    distinct values, not a few multiples of one step;
 *  - kv_wall_ns agrees with time() within 2 s and with kv_wtime() within
 *    1 ms, and kv_wtime's own step at today's epoch is 2^-22 s (what the
 *    nanosecond clocks exist to avoid).
 * The smallest steps seen are printed, so the log says what was delivered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kvstore.h"

enum { READS = 200000 };

/* Static, not malloc'd: a failed assertion leaves the test by a long
 * jump, which would leak a heap buffer (and under valgrind, whose clock
 * reads are slow, the resolution check can fail without any fault of
 * the clock's). */
static int64_t t[READS];

static void test_monotonic_resolution(void **st) {
    (void)st;
    int64_t min_step = INT64_MAX;
    long differ = 0;
    for (int i = 0; i < READS; i++) t[i] = kv_clock_ns();
    for (int i = 1; i < READS; i++) {
        int64_t d = t[i] - t[i - 1];
        assert_true(d >= 0);
        if (d > 0) {
            differ++;
            if (d < min_step) min_step = d;
        }
    }
    printf("# kv_clock_ns: smallest step %lld ns, %.1f%% of consecutive reads differ\n",
           (long long)min_step, 100.0 * (double)differ / (READS - 1));
    assert_true(min_step < 1000);
    assert_true(differ >= (READS - 1) * 9L / 10);
}

static void test_durations_not_quantised(void **st) {
    (void)st;
    enum { N = 400 };
    int64_t d[N];
    volatile unsigned x = 1;
    for (int i = 0; i < N; i++) {
        int64_t t0 = kv_clock_ns();
        for (int k = 0; k < 50 + i; k++) x = x * 1103515245u + 12345u;
        d[i] = kv_clock_ns() - t0;
    }
    int distinct = 0;
    for (int i = 0; i < N; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = d[j] == d[i];
        distinct += !seen;
    }
    printf("# %d distinct durations among %d loops\n", distinct, N);
    assert_true(distinct >= 50);
}

static void test_wall_clock(void **st) {
    (void)st;
    int64_t w = kv_wall_ns();
    double s = kv_wtime();
    assert_true(llabs(w / 1000000000 - (int64_t)time(NULL)) <= 2);
    assert_true(fabs((double)w * 1e-9 - s) < 1e-3);
    /* the double's step at today's epoch: 2^-22 s, about 0.238 us */
    double ulp = nextafter(s, INFINITY) - s;
    printf("# kv_wtime's step now: %.3f ns\n", ulp * 1e9);
    assert_true(ulp == ldexp(1.0, -22));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monotonic_resolution),
        cmocka_unit_test(test_durations_not_quantised),
        cmocka_unit_test(test_wall_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
