/*
 * test_placement.c -- hashing and rendezvous placement.
 *
 * Pass rules: replicas are distinct members; the same key and member list
 * give the same placement; load is balanced (every member's share of
 * 100000 keys within 10% of the mean, for 8 and 64 members); when one
 * member leaves, only keys it held change their replica set, and each of
 * those loses exactly that member.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "kv_internal.h"

static void keyname(char *buf, size_t n, int i) { snprintf(buf, n, "user%08d", i); }

static void test_distinct_and_stable(void **st) {
    (void)st;
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7}, a[3], b[3];
    for (int i = 0; i < 10000; i++) {
        char k[32];
        keyname(k, sizeof k, i);
        uint64_t h = kvh_hash(k, strlen(k), 0);
        kvh_place(h, ids, 8, 3, a);
        kvh_place(h, ids, 8, 3, b);
        assert_int_not_equal(a[0], a[1]);
        assert_int_not_equal(a[0], a[2]);
        assert_int_not_equal(a[1], a[2]);
        assert_memory_equal(a, b, sizeof a);
    }
}

static void balance(int n) {
    int ids[64], count[64] = {0}, out[2];
    for (int i = 0; i < n; i++) ids[i] = i;
    const int keys = 100000;
    for (int i = 0; i < keys; i++) {
        char k[32];
        keyname(k, sizeof k, i);
        kvh_place(kvh_hash(k, strlen(k), 0), ids, n, 2, out);
        count[out[0]]++;
        count[out[1]]++;
    }
    double mean = 2.0 * keys / n;
    for (int i = 0; i < n; i++) {
        double dev = (count[i] - mean) / mean;
        if (dev > 0.10 || dev < -0.10) fail_msg("member %d holds %d, mean %.0f", i, count[i], mean);
    }
}

static void test_balance8(void **st) { (void)st; balance(8); }
static void test_balance64(void **st) { (void)st; balance(64); }

static void test_minimal_movement(void **st) {
    (void)st;
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7}, after[7] = {0, 1, 2, 4, 5, 6, 7};
    int moved = 0;
    for (int i = 0; i < 50000; i++) {
        char k[32];
        keyname(k, sizeof k, i);
        uint64_t h = kvh_hash(k, strlen(k), 0);
        int a[2], b[2];
        kvh_place(h, ids, 8, 2, a);
        kvh_place(h, after, 7, 2, b);
        bool held = a[0] == 3 || a[1] == 3;
        if (!held) {
            assert_memory_equal(a, b, sizeof a);  /* untouched keys stay put */
        } else {
            moved++;
            int kept = a[0] == 3 ? a[1] : a[0];
            assert_true(b[0] == kept || b[1] == kept);  /* the survivor stays a replica */
        }
    }
    /* The departed member held about 2/8 of the keys. */
    assert_in_range(moved, 50000 * 2 / 8 * 9 / 10, 50000 * 2 / 8 * 11 / 10);
}

static void test_hash_spreads(void **st) {
    (void)st;
    /* one-bit input changes flip about half the output bits */
    unsigned char buf[40] = {0};
    uint64_t h0 = kvh_hash(buf, sizeof buf, 0);
    for (int bit = 0; bit < 320; bit++) {
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        int d = __builtin_popcountll(h0 ^ kvh_hash(buf, sizeof buf, 0));
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        assert_in_range(d, 12, 52);
    }
    assert_int_not_equal(kvh_hash("a", 1, 0), kvh_hash("a", 1, 1));
    assert_int_not_equal(kvh_hash("", 0, 0), kvh_hash("\0", 1, 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distinct_and_stable), cmocka_unit_test(test_balance8),
        cmocka_unit_test(test_balance64), cmocka_unit_test(test_minimal_movement),
        cmocka_unit_test(test_hash_spreads)};
    return cmocka_run_group_tests_name("placement", tests, NULL, NULL);
}
