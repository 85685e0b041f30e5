/*
 * test_histogram.c -- the log-linear latency histogram of experiments/driver/histogram.c.
 *
 * Pass rules:
 *  - bucket layout: every value lies in [low, high) of its bucket, buckets
 *    tile the range without gaps, widths are 1 below 256 and at most low/128;
 *  - percentiles (0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100) of the
 *    values 1..100000 and of 200000 lognormal values (sorted exactly) are
 *    within HIST_REL_ERROR (1/256) of the exact nearest-rank percentile,
 *    p0 and p100 exactly the min and max;
 *  - count, sum, min and max are exact; mean is sum/count;
 *  - merging two histograms gives exactly the histogram of the union, and
 *    so does summing their flat arrays (as MPI_Reduce would) plus min/max;
 *  - iteration visits the non-empty buckets in order, counts summing to
 *    the count; values past 2^44 go to the top bucket with max exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"

static const double pcts[] = {0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
#define NPCTS (sizeof pcts / sizeof pcts[0])

static void test_buckets(void **st) {
    (void)st;
    for (int i = 0; i < HIST_BUCKETS - 1; i++) {
        assert_int_equal(hist_bucket_high(i), hist_bucket_low(i + 1));
        uint64_t lo = hist_bucket_low(i), w = hist_bucket_high(i) - lo;
        assert_true(lo < 256 ? w == 1 : w * 128 <= lo);
        assert_int_equal(hist_bucket_of(lo), i);
        assert_int_equal(hist_bucket_of(hist_bucket_high(i) - 1), i);
    }
    assert_int_equal(hist_bucket_high(HIST_BUCKETS - 1), 1ULL << HIST_TOP_BITS);
    uint64_t x = 1;
    for (int i = 0; i < 100000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t v = x >> (20 + i % 44);
        int b = hist_bucket_of(v);
        assert_true(hist_bucket_low(b) <= v && v < hist_bucket_high(b));
    }
}

/* Exact nearest-rank percentile of sorted v[0..n). */
static double exact(const uint64_t *v, size_t n, double p) {
    double r = ceil(p / 100.0 * (double)n - 1e-9);
    size_t rank = r < 1 ? 1 : r > (double)n ? n : (size_t)r;
    return (double)v[rank - 1];
}

static void check_percentiles(const hist *h, const uint64_t *sorted, size_t n, const char *what) {
    for (size_t i = 0; i < NPCTS; i++) {
        double want = exact(sorted, n, pcts[i]), got = hist_percentile(h, pcts[i]);
        print_message("%s p%g: exact %.0f, histogram %.1f\n", what, pcts[i], want, got);
        int ends = pcts[i] == 0 || pcts[i] == 100;
        if (fabs(got - want) > want * HIST_REL_ERROR || (ends && got != want))
            fail_msg("%s p%g: histogram %.1f, exact %.0f", what, pcts[i], got, want);
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_linear_sample(void **st) {
    (void)st;
    static hist h;
    static uint64_t v[100000];
    hist_init(&h);
    for (int i = 0; i < 100000; i++) v[i] = (uint64_t)(i + 1);
    for (int i = 0; i < 100000; i++) hist_record(&h, v[99999 - i]);   /* any order */
    check_percentiles(&h, v, 100000, "1..100000");
    assert_int_equal(hist_count(&h), 100000);
    assert_int_equal(hist_max(&h), 100000);
    assert_int_equal(hist_min(&h), 1);
    assert_true(hist_mean(&h) == 50000.5);
}

/* 200000 lognormal values (median 50 us in ns, sigma 1.5) by Box-Muller. */
static void lognormal(uint64_t *v, size_t n) {
    uint64_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double u1 = ((double)(x >> 11) + 1) * 0x1.0p-53;
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double u2 = (double)(x >> 11) * 0x1.0p-53;
        double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
        v[i] = (uint64_t)(exp(log(50000.0) + 1.5 * z)) + 1;
    }
}

static void test_lognormal_sample(void **st) {
    (void)st;
    enum { N = 200000 };
    static uint64_t v[N];
    static hist h;
    lognormal(v, N);
    hist_init(&h);
    uint64_t sum = 0;
    for (size_t i = 0; i < N; i++) {
        hist_record(&h, v[i]);
        sum += v[i];
    }
    qsort(v, N, sizeof v[0], cmp_u64);
    check_percentiles(&h, v, N, "lognormal");
    assert_int_equal(hist_count(&h), N);
    assert_int_equal(hist_max(&h), v[N - 1]);
    assert_int_equal(hist_min(&h), v[0]);
    assert_true(hist_mean(&h) == (double)sum / N);
}

static void test_merge(void **st) {
    (void)st;
    enum { N = 50000 };
    static uint64_t v[N];
    static hist a, b, all, summed;
    lognormal(v, N);
    hist_init(&a);
    hist_init(&b);
    hist_init(&all);
    for (size_t i = 0; i < N; i++) {
        hist_record(i % 3 ? &a : &b, v[i] * (i % 3 ? 1 : 7));
        hist_record(&all, v[i] * (i % 3 ? 1 : 7));
    }
    summed = a;   /* what MPI_Reduce does: flat words summed, min and max reduced */
    for (int i = 0; i < HIST_FLAT_LEN; i++) hist_flat(&summed)[i] += hist_flat(&b)[i];
    summed.min = a.min < b.min ? a.min : b.min;
    summed.max = a.max > b.max ? a.max : b.max;
    hist_merge(&a, &b);
    assert_memory_equal(&a, &all, sizeof all);
    assert_memory_equal(&summed, &all, sizeof all);
    hist empty;
    hist_init(&empty);
    hist_merge(&a, &empty);
    assert_memory_equal(&a, &all, sizeof all);
}

static void test_iterate_and_edges(void **st) {
    (void)st;
    static hist h;
    hist_init(&h);
    assert_true(hist_percentile(&h, 50) == 0 && hist_mean(&h) == 0);
    assert_int_equal(hist_min(&h), 0);
    static const uint64_t vals[] = {0, 1, 255, 256, 257, 1000, 1000, 100000000000ULL};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) hist_record(&h, vals[i]);
    hist_record_n(&h, 5, 10);
    hist_record_n(&h, 6, 0);
    hist_range r;
    int pos = 0, buckets = 0;
    uint64_t total = 0, prev_high = 0;
    while (hist_next(&h, &pos, &r)) {
        assert_true(r.low >= prev_high && r.low < r.high && r.count > 0);
        prev_high = r.high;
        total += r.count;
        buckets++;
    }
    assert_int_equal(buckets, 7);   /* 0, 1, 5, 255, [256, 258), 1000, 1e11 */
    assert_int_equal(total, hist_count(&h));
    assert_int_equal(hist_count(&h), 18);
    double p100 = hist_percentile(&h, 100);
    assert_true(fabs(p100 - 1e11) <= 1e11 * HIST_REL_ERROR);
    hist_record(&h, UINT64_MAX / 2);   /* past 2^44: top bucket, max exact */
    assert_int_equal(hist_max(&h), UINT64_MAX / 2);
    assert_int_equal(h.bucket[HIST_BUCKETS - 1], 1);
    assert_true(hist_percentile(&h, 100) >= (double)(1ULL << 43));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),       cmocka_unit_test(test_linear_sample),
        cmocka_unit_test(test_lognormal_sample), cmocka_unit_test(test_merge),
        cmocka_unit_test(test_iterate_and_edges),
    };
    return cmocka_run_group_tests_name("histogram", tests, NULL, NULL);
}
