/*
 * test_workload.c -- the YCSB workload generators of experiments/driver/workload.c.
 *
 * Pass rules (seeds fixed, so every run draws the same numbers):
 *  - uniform over 100 records, 100k draws: chi-square below 148.23, the
 *    0.1% critical value for 99 degrees of freedom (for each of 3 seeds);
 *  - unscrambled zipfian 0.99 over 1000 records, 100k draws: the hottest
 *    record's share and the top-10 share within 5% (relative) of
 *    1/zeta(1000, 0.99) and sum(i^-0.99, i=1..10)/zeta(1000, 0.99) (and the
 *    top-10 within 1% of what Gray's algorithm itself gives, 4% above); the
 *    scrambled zipfian's hottest share at least 1/zeta(10^10, 0.99) and its
 *    hot records not the first ten; wl_zeta within 1e-9 of direct sums and
 *    of YCSB's constant zeta(10^10, 0.99) = 26.46902820178302;
 *  - latest: the newest record drawn over 20 times as often as the oldest;
 *    with inserts, age 0 (the newest known) is the most drawn age;
 *  - each of YCSB A-F, and a custom mix, over 100k operations: every kind's
 *    share within 0.01 (absolute) of its proportion; hotspot puts 0.8 of
 *    draws in the hot 20% within 0.01;
 *  - the same (params, seed, rank) gives the same 1000 operations; another
 *    rank or seed agrees on fewer than 10% of them;
 *  - keys are key_bytes long, "user" then digits, distinct per record;
 *  - open loop: op k of a rank is due at k * nranks / rate; closed loop -1;
 *  - inserts of rank r are records + r + k*nranks in order, disjoint;
 *  - budgets split as evenly as possible; load blocks cover all records;
 *  - values round-trip through wl_check_value, a changed byte fails;
 *  - scans: lengths in range, cut at the highest known record;
 *  - every bad parameter, rank count and workload name gets its own message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

#define N_DRAWS 100000

static void set(wl_params *p, const char *name, const char *value) {
    char err[256] = "";
    if (wl_params_set(p, name, value, err, sizeof err)) fail_msg("%s=%s: %s", name, value, err);
}

/* Default params turned into a read-only workload with distribution d. */
static wl_params reads_only(const char *dist, const char *records) {
    wl_params p;
    wl_params_default(&p);
    set(&p, "update", "0");
    set(&p, "read", "1");
    set(&p, "distribution", dist);
    set(&p, "records", records);
    set(&p, "operations", "100000");
    return p;
}

static wl_gen *gen(const wl_params *p, int rank, int nranks) {
    wl_gen *g = wl_gen_new(p, rank, nranks);
    if (!g) fail_msg("wl_gen_new failed for rank %d of %d", rank, nranks);
    return g;
}

/* Count how often each record below `records` is drawn in n operations. */
static void count_records(const wl_params *p, uint64_t *count, uint64_t records, int n) {
    wl_gen *g = gen(p, 0, 1);
    wl_op op;
    memset(count, 0, records * sizeof *count);
    for (int i = 0; i < n; i++) {
        assert_int_equal(wl_next(g, &op), 1);
        assert_true(op.record < records);
        count[op.record]++;
    }
    wl_gen_free(g);
}

static double zeta_direct(int n, double theta) {
    double s = 0;
    for (int i = n; i >= 1; i--) s += pow(i, -theta);
    return s;
}

static void test_uniform_chi_square(void **st) {
    (void)st;
    uint64_t count[100];
    for (int seed = 1; seed <= 3; seed++) {
        wl_params p = reads_only("uniform", "100");
        p.seed = (uint64_t)seed;
        count_records(&p, count, 100, N_DRAWS);
        double chi2 = 0, e = N_DRAWS / 100.0;
        for (int i = 0; i < 100; i++) chi2 += (count[i] - e) * (count[i] - e) / e;
        print_message("uniform, seed %d: chi-square %.2f (limit 148.23)\n", seed, chi2);
        if (chi2 >= 148.23) fail_msg("seed %d: chi-square %.2f >= 148.23", seed, chi2);
    }
}

static void test_zeta(void **st) {
    (void)st;
    assert_true(fabs(wl_zeta(1000, 0.99) - zeta_direct(1000, 0.99)) < 1e-9);
    assert_true(fabs(wl_zeta(100000, 0.5) - zeta_direct(100000, 0.5)) < 1e-9 * 632);
    assert_true(fabs(wl_zeta(10000000000ULL, 0.99) - 26.46902820178302) < 1e-9 * 26.5);
    assert_true(fabs(wl_zeta(1, 0.99) - 1) < 1e-15);
}

static void test_zipfian_plain(void **st) {
    (void)st;
    uint64_t count[1000];
    wl_params p = reads_only("zipfian_plain", "1000");
    count_records(&p, count, 1000, N_DRAWS);
    double z = zeta_direct(1000, 0.99), top10 = 0, got10 = 0;
    for (int i = 0; i < 10; i++) {
        top10 += pow(i + 1, -0.99) / z;
        got10 += (double)count[i] / N_DRAWS;
    }
    double hot = (double)count[0] / N_DRAWS;
    print_message("zipfian_plain: hottest %.4f (theory %.4f), top-10 %.4f (theory %.4f)\n", hot,
                  1 / z, got10, top10);
    if (fabs(hot - 1 / z) > 0.05 / z) fail_msg("hottest share %.4f, expected %.4f", hot, 1 / z);
    if (fabs(got10 - top10) > 0.05 * top10)
        fail_msg("top-10 share %.4f, expected %.4f", got10, top10);
    /* Gray's closed form slightly over-weights items 2..9: its own top-10
     * mass, P(u < ((10/n)^(1-theta) - 1 + eta) / eta), is 0.3983 here. */
    double eta = (1 - pow(2.0 / 1000, 0.01)) / (1 - (1 + pow(0.5, 0.99)) / z);
    double gray10 = (pow(10.0 / 1000, 0.01) - 1 + eta) / eta;
    if (fabs(got10 - gray10) > 0.01 * gray10)
        fail_msg("top-10 share %.4f, Gray's algorithm gives %.4f", got10, gray10);
}

static int cmp_desc(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void test_zipfian_scrambled(void **st) {
    (void)st;
    uint64_t count[1000], sorted[1000];
    wl_params p = reads_only("zipfian", "1000");
    count_records(&p, count, 1000, N_DRAWS);
    int first_ten_hot = 1;
    memcpy(sorted, count, sizeof sorted);
    qsort(sorted, 1000, sizeof sorted[0], cmp_desc);
    for (int i = 0; i < 10; i++) first_ten_hot &= count[i] >= sorted[9];
    assert_false(first_ten_hot);
    double hot = (double)sorted[0] / N_DRAWS;
    print_message("zipfian (scrambled): hottest record's share %.4f\n", hot);
    if (hot < 1 / 26.469 * 0.95) fail_msg("scrambled hottest share %.4f too low", hot);
}

static void test_latest(void **st) {
    (void)st;
    uint64_t count[1000];
    wl_params p = reads_only("latest", "1000");
    count_records(&p, count, 1000, N_DRAWS);
    if (count[999] <= 20 * (count[0] ? count[0] : 1))
        fail_msg("newest drawn %llu times, oldest %llu", (unsigned long long)count[999],
                 (unsigned long long)count[0]);
    /* Workload D on one rank: record number == index among known records. */
    wl_preset(&p, "d", NULL, 0);
    wl_gen *g = gen(&p, 0, 1);
    uint64_t known = 1000, age[64] = {0}, new_reads = 0;
    wl_op op;
    while (wl_next(g, &op)) {
        if (op.kind == WL_INSERT) {
            assert_int_equal(op.record, known++);
            continue;
        }
        new_reads += op.record >= 1000;
        if (known - 1 - op.record < 64) age[known - 1 - op.record]++;
    }
    wl_gen_free(g);
    for (int a = 1; a < 64; a++) assert_true(age[0] > age[a]);
    assert_true(new_reads > N_DRAWS / 4);   /* inserted records are read back */
}

static void check_mix(wl_params *p, const char *what) {
    uint64_t n[WL_NKINDS] = {0};
    wl_gen *g = gen(p, 0, 1);
    wl_op op;
    while (wl_next(g, &op)) n[op.kind]++;
    wl_gen_free(g);
    for (int k = 0; k < WL_NKINDS; k++) {
        double share = (double)n[k] / N_DRAWS;
        if (fabs(share - p->proportion[k]) > 0.01)
            fail_msg("%s: %s share %.4f, configured %.4f", what, wl_kind_name((wl_kind)k), share,
                     p->proportion[k]);
    }
}

static void test_ycsb_mixes(void **st) {
    (void)st;
    static const char *const names[] = {"a", "b", "c", "d", "e", "f"};
    static const double read[] = {0.5, 0.95, 1, 0.95, 0, 0.5};
    for (int i = 0; i < 6; i++) {
        wl_params p;
        wl_params_default(&p);
        set(&p, "operations", "100000");
        set(&p, "workload", names[i]);
        assert_string_equal(p.name, names[i]);
        assert_true(p.proportion[WL_READ] == read[i]);
        check_mix(&p, names[i]);
    }
    wl_params p;
    wl_params_default(&p);
    set(&p, "operations", "100000");
    const char *kinds[] = {"read", "update", "insert", "scan", "rmw"};
    for (int k = 0; k < WL_NKINDS; k++) set(&p, kinds[k], "0.2");
    assert_string_equal(p.name, "custom");
    check_mix(&p, "custom");
}

static void test_hotspot(void **st) {
    (void)st;
    uint64_t count[1000], hot = 0;
    wl_params p = reads_only("hotspot", "1000");
    count_records(&p, count, 1000, N_DRAWS);
    for (int i = 0; i < 200; i++) hot += count[i];
    assert_true(fabs((double)hot / N_DRAWS - 0.8) <= 0.01);
}

/* Positions at which two generators give the same operation, of 1000. */
static int same_ops(const wl_params *p1, int r1, const wl_params *p2, int r2) {
    wl_gen *a = gen(p1, r1, 4), *b = gen(p2, r2, 4);
    wl_op x, y;
    int same = 0;
    for (int i = 0; i < 1000; i++) {
        wl_next(a, &x);
        wl_next(b, &y);
        same += x.kind == y.kind && x.record == y.record && x.value_len == y.value_len &&
                strcmp(x.key, y.key) == 0;
    }
    wl_gen_free(a);
    wl_gen_free(b);
    return same;
}

static void test_reproducible(void **st) {
    (void)st;
    wl_params p, q;
    wl_params_default(&p);
    set(&p, "distribution", "uniform");
    set(&p, "records", "1000000");
    set(&p, "value_bytes", "10..1000");
    q = p;
    q.seed = 2;
    assert_int_equal(same_ops(&p, 1, &p, 1), 1000);
    assert_true(same_ops(&p, 1, &p, 2) < 100);
    assert_true(same_ops(&p, 0, &q, 0) < 100);
}

static void test_keys(void **st) {
    (void)st;
    static const int sizes[] = {5, 8, 16, 23, 24, 40, 256};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        wl_params p;
        wl_params_default(&p);
        p.key_bytes = sizes[s];
        p.records = sizes[s] == 5 ? 10 : 1000;
        wl_gen *g = gen(&p, 0, 1);
        wl_op op;
        wl_next(g, &op);
        wl_gen_free(g);
        assert_int_equal(op.key_len, sizes[s]);
        assert_int_equal(strlen(op.key), sizes[s]);
        assert_memory_equal(op.key, "user", 4);
        assert_int_equal(strspn(op.key + 4, "0123456789"), sizes[s] - 4);
    }
    /* key_bytes 8: 10^4 numbers, a bijection of records 0..9999. */
    wl_params p;
    wl_params_default(&p);
    p.key_bytes = 8;
    static char seen[10000];
    char key[16];
    for (int r = 0; r < 10000; r++) {
        assert_int_equal(wl_key(&p, (uint64_t)r, key, sizeof key), 8);
        int v = atoi(key + 4);
        assert_int_equal(seen[v]++, 0);
    }
    assert_int_equal(wl_key(&p, 1, key, 8), 0);   /* no room for the NUL */
}

static void test_open_loop(void **st) {
    (void)st;
    wl_params p;
    wl_params_default(&p);
    set(&p, "target_rate_per_s", "1000");
    wl_gen *g = gen(&p, 3, 4);
    wl_op op;
    for (int k = 0; wl_next(g, &op); k++) {
        assert_int_equal(op.seq, k);
        assert_true(fabs(op.intended_s - k * 0.004) < 1e-12);
    }
    wl_gen_free(g);
    p.target_rate = 0;
    g = gen(&p, 0, 4);
    wl_next(g, &op);
    assert_true(op.intended_s == -1);
    wl_gen_free(g);
}

static void test_inserts(void **st) {
    (void)st;
    wl_params p;
    wl_params_default(&p);
    set(&p, "records", "100");
    set(&p, "operations", "30000");
    set(&p, "workload", "d");
    for (int r = 0; r < 3; r++) {
        wl_gen *g = gen(&p, r, 3);
        wl_op op;
        uint64_t k = 0;
        while (wl_next(g, &op))
            if (op.kind == WL_INSERT) assert_int_equal(op.record, 100 + r + 3 * k++);
        assert_true(k > 300);
        wl_gen_free(g);
    }
}

static void test_budget_and_load(void **st) {
    (void)st;
    wl_params p;
    wl_params_default(&p);
    set(&p, "operations", "10");
    static const uint64_t share[] = {4, 3, 3};
    for (int r = 0; r < 3; r++) {
        wl_gen *g = gen(&p, r, 3);
        wl_op op;
        uint64_t n = 0;
        while (wl_next(g, &op)) n++;
        assert_int_equal(n, share[r]);
        assert_int_equal(wl_rank_ops(g), share[r]);
        wl_gen_free(g);
    }
    set(&p, "operations", "2");   /* fewer operations than ranks: rank 2 has none */
    wl_gen *none = gen(&p, 2, 3);
    wl_op nop;
    assert_int_equal(wl_rank_ops(none), 0);
    assert_int_equal(wl_next(none, &nop), 0);
    wl_gen_free(none);
    set(&p, "operations", "0");
    set(&p, "duration_s", "5");
    wl_gen *g = gen(&p, 0, 1);
    wl_op op;
    for (int i = 0; i < 10000; i++) assert_int_equal(wl_next(g, &op), 1);
    wl_gen_free(g);
    set(&p, "records", "10");
    assert_int_equal(wl_load_begin(&p, 0, 3), 0);
    assert_int_equal(wl_load_end(&p, 0, 3), wl_load_begin(&p, 1, 3));
    assert_int_equal(wl_load_end(&p, 1, 3), wl_load_begin(&p, 2, 3));
    assert_int_equal(wl_load_end(&p, 2, 3), 10);
    set(&p, "value_bytes", "100..110");
    int lo = 0, hi = 0;
    for (uint64_t r = 0; r < 1000; r++) {
        size_t n = wl_load_value_len(&p, r);
        assert_true(n >= 100 && n <= 110);
        assert_int_equal(n, wl_load_value_len(&p, r));
        lo |= n == 100;
        hi |= n == 110;
    }
    assert_true(lo && hi);
}

static void test_values(void **st) {
    (void)st;
    wl_params p;
    wl_params_default(&p);
    wl_gen *g = gen(&p, 0, 2), *h = gen(&p, 1, 2);
    static const size_t lens[] = {16, 17, 100, 256, 272, 300, 1000};
    unsigned char buf[1000];
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        wl_make_value(g, 42, 7, buf, lens[i]);
        assert_int_equal(wl_check_value(h, 42, buf, lens[i], &v), 1);   /* another rank */
        assert_int_equal(v, 7);
        assert_int_equal(wl_check_value(h, 43, buf, lens[i], NULL), 0);
        buf[lens[i] - 1] ^= 1;
        assert_int_equal(wl_check_value(h, 42, buf, lens[i], NULL), lens[i] == 16);
    }
    wl_make_value(g, 42, 7, buf, 8);
    assert_int_equal(wl_check_value(h, 42, buf, 8, NULL), -1);
    wl_gen_free(g);
    wl_gen_free(h);
}

static void test_scans(void **st) {
    (void)st;
    wl_params p;
    wl_params_default(&p);
    set(&p, "workload", "E");
    set(&p, "operations", "20000");
    wl_gen *g = gen(&p, 0, 1);
    wl_op op;
    uint64_t known = p.records, longest = 0, cut = 0;
    while (wl_next(g, &op)) {
        if (op.kind == WL_INSERT) {
            known++;
            continue;
        }
        assert_int_equal(op.kind, WL_SCAN);
        assert_true(op.scan_len >= 1 && op.scan_len <= 100);
        assert_true(op.record + op.scan_len <= known);
        longest = op.scan_len > longest ? op.scan_len : longest;
        cut += op.record + op.scan_len == known;
    }
    wl_gen_free(g);
    assert_int_equal(longest, 100);
    assert_true(cut > 0);
}

#define BAD(stmt, word)                                                          \
    do {                                                                         \
        wl_params p;                                                             \
        wl_params_default(&p);                                                   \
        stmt;                                                                    \
        char msg[256] = "";                                                      \
        assert_int_equal(wl_params_check(&p, msg, sizeof msg), -1);              \
        if (!strstr(msg, word)) fail_msg("message '%s' lacks '%s'", msg, word);  \
        assert_null(wl_gen_new(&p, 0, 1));                                       \
        assert_int_equal(errno, EINVAL);                                         \
    } while (0)

static void test_bad_params(void **st) {
    (void)st;
    BAD(p.records = 0, "records must be at least 1");
    BAD((p.records = 0, p.proportion[0] = 0, p.proportion[1] = 0, p.proportion[3] = 1),
        "records must be at least 1");
    BAD(p.operations = 0, "no end to the run");
    BAD(p.duration_s = -1, "duration_s must be");
    BAD(p.target_rate = -5, "target_rate_per_s must be");
    BAD(p.proportion[WL_READ] = 1.5, "proportion read must be in [0, 1]");
    BAD(p.proportion[WL_UPDATE] = -0.1, "proportion update must be in [0, 1]");
    BAD(p.proportion[WL_READ] = 0.4, "sum to 0.9");
    BAD(p.dist = (wl_dist)9, "distribution 9 is not");
    BAD(p.zipf_theta = 1.0, "zipfian_constant must be in (0, 1)");
    BAD(p.hot_data = 2, "hotspot_data_fraction");
    BAD(p.hot_ops = -1, "hotspot_ops_fraction");
    BAD(p.key_bytes = 4, "key_bytes must be 5..256");
    BAD(p.key_bytes = 300, "key_bytes must be 5..256");
    BAD(p.value_min = -1, "value_bytes must not be negative");
    BAD((p.value_min = 10, p.value_max = 5), "value_bytes minimum 10 is above");
    BAD(p.value_max = (int64_t)WL_VALUE_MAX + 1, "over the limit");
    BAD(p.scan_min = 0, "scan_length minimum must be at least 1");
    BAD((p.scan_min = 5, p.scan_max = 4), "scan_length minimum 5 is above");
    BAD((p.key_bytes = 6, p.records = 101), "too few for records (101");
    BAD((p.key_bytes = 7, p.records = 900, p.operations = 200, p.proportion[0] = 0.9,
         p.proportion[1] = 0, p.proportion[2] = 0.1), "too few for records + operations");
    wl_params p;
    wl_params_default(&p);
    char msg[256] = "";
    assert_int_equal(wl_params_check(&p, msg, sizeof msg), 0);
    assert_int_equal(wl_params_check_ranks(&p, 0, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "nranks must be at least 1"));
    p.key_bytes = 7;
    p.records = 900;
    p.operations = 100;
    set(&p, "workload", "d");
    assert_int_equal(wl_params_check(&p, msg, sizeof msg), 0);
    assert_int_equal(wl_params_check_ranks(&p, 3, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "insert ranges of all ranks"));
    assert_null(wl_gen_new(&p, 0, 3));
    assert_null(wl_gen_new(&p, 3, 3));
}

#define BAD_SET(name, value, word)                                                 \
    do {                                                                           \
        wl_params p;                                                               \
        wl_params_default(&p);                                                     \
        char msg[256] = "";                                                        \
        assert_int_equal(wl_params_set(&p, name, value, msg, sizeof msg), -1);     \
        if (!strstr(msg, word)) fail_msg("message '%s' lacks '%s'", msg, word);    \
    } while (0)

static void test_bad_settings(void **st) {
    (void)st;
    BAD_SET("workload", "g", "unknown workload 'g'");
    BAD_SET("workload", "ab", "unknown workload 'ab'");
    BAD_SET("workload", "", "unknown workload ''");
    BAD_SET("workloads", "a", "unknown workload setting 'workloads'");
    BAD_SET("records", "abc", "records: 'abc' is not a whole number");
    BAD_SET("records", "-1", "records: '-1' is not a whole number");
    BAD_SET("operations", "1e6", "operations: '1e6' is not a whole number");
    BAD_SET("seed", "", "seed: '' is not a whole number");
    BAD_SET("read", "half", "read: 'half' is not a number");
    BAD_SET("target_rate_per_s", "nan", "target_rate_per_s: 'nan' is not a number");
    BAD_SET("distribution", "pareto", "unknown distribution 'pareto'");
    BAD_SET("value_bytes", "10..", "value_bytes: '10..' is neither N nor MIN..MAX");
    BAD_SET("scan_length", "x", "scan_length: 'x' is neither");
    BAD_SET("key_bytes", "16b", "key_bytes: '16b' is not an integer");
    wl_params p;
    char msg[256];
    assert_int_equal(wl_preset(&p, "g", msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "a to f"));
}

static void test_settings(void **st) {
    (void)st;
    wl_params p;
    wl_params_default(&p);
    set(&p, "workload", "F");
    assert_string_equal(p.name, "f");
    assert_true(p.proportion[WL_RMW] == 0.5 && p.dist == WL_DIST_ZIPFIAN);
    set(&p, "records", "12345");
    set(&p, "operations", "678");
    set(&p, "duration_s", "2.5");
    set(&p, "seed", "99");
    set(&p, "key_bytes", "32");
    set(&p, "value_bytes", "100..200");
    set(&p, "target_rate_per_s", "5000");
    set(&p, "hotspot_data_fraction", "0.1");
    set(&p, "hotspot_ops_fraction", "0.9");
    assert_string_equal(p.name, "f");   /* sizes keep the preset's name */
    set(&p, "scan_length", "7");
    assert_string_equal(p.name, "custom");
    set(&p, "zipfian_constant", "0.8");
    assert_true(p.records == 12345 && p.operations == 678 && p.duration_s == 2.5);
    assert_true(p.seed == 99 && p.key_bytes == 32 && p.target_rate == 5000);
    assert_true(p.value_min == 100 && p.value_max == 200 && p.scan_min == 7 && p.scan_max == 7);
    assert_true(p.hot_data == 0.1 && p.hot_ops == 0.9 && p.zipf_theta == 0.8);
    assert_int_equal(wl_params_check(&p, NULL, 0), 0);
    assert_string_equal(wl_kind_name(WL_RMW), "rmw");
    assert_string_equal(wl_dist_name(WL_DIST_LATEST), "latest");
    assert_string_equal(wl_dist_name((wl_dist)42), "?");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_chi_square), cmocka_unit_test(test_zeta),
        cmocka_unit_test(test_zipfian_plain),      cmocka_unit_test(test_zipfian_scrambled),
        cmocka_unit_test(test_latest),             cmocka_unit_test(test_ycsb_mixes),
        cmocka_unit_test(test_hotspot),            cmocka_unit_test(test_reproducible),
        cmocka_unit_test(test_keys),               cmocka_unit_test(test_open_loop),
        cmocka_unit_test(test_inserts),            cmocka_unit_test(test_budget_and_load),
        cmocka_unit_test(test_values),             cmocka_unit_test(test_scans),
        cmocka_unit_test(test_bad_params),         cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_settings),
    };
    return cmocka_run_group_tests_name("workload", tests, NULL, NULL);
}
