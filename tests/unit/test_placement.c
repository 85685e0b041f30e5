/*
 * test_placement.c -- hashing and rendezvous placement.
 *
 * Pass rules: replicas are distinct members; the same key and member list
 * give the same placement; load is balanced (every member's share of
 * 100000 keys within 10% of the mean, for 8 and 64 members); when one
 * member leaves, only keys it held change their replica set, and each of
 * those loses exactly that member.  With a node map: the copies of every
 * key sit on distinct nodes when there are at least r nodes (distinct
 * members otherwise, the first two on distinct nodes); a map of one node,
 * or of a node per member, places exactly as no map; when a whole node
 * leaves, only keys with a copy there change, keep their other copies,
 * and get the new one on a node they did not use.
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
        kvh_place(h, ids, 8, 3, NULL, a);
        kvh_place(h, ids, 8, 3, NULL, b);
        assert_int_not_equal(a[0], a[1]);
        assert_int_not_equal(a[0], a[2]);
        assert_int_not_equal(a[1], a[2]);
        assert_memory_equal(a, b, sizeof a);
    }
}

/* Every shortcut of the plain set (one replica, every member, two
 * replicas) gives the set and order of the general greedy pick, here
 * place_by_node's with every member on a node of its own; the ids are
 * not their positions, so a mix-up of index and id shows. */
static void test_plain_matches_greedy(void **st) {
    (void)st;
    int ids[9] = {7, 2, 11, 5, 0, 9, 3, 14, 1}, node[16], a[4], b[4];
    for (int i = 0; i < 16; i++) node[i] = i;
    for (int n = 1; n <= 9; n++) {
        for (int r = 1; r <= 4 && r <= n; r++) {
            for (int i = 0; i < 20000; i++) {
                char k[32];
                keyname(k, sizeof k, i);
                uint64_t h = kvh_hash(k, strlen(k), 0);
                kvh_place(h, ids, n, r, NULL, a);
                kvh_place(h, ids, n, r, node, b);
                if (memcmp(a, b, (size_t)r * sizeof *a))
                    fail_msg("n=%d r=%d key %d: plain %d,%d greedy %d,%d", n, r, i, a[0], r > 1 ? a[1] : -1,
                             b[0], r > 1 ? b[1] : -1);
            }
        }
    }
}

static void balance(int n, const int *node) {
    int ids[64], count[64] = {0}, out[2];
    for (int i = 0; i < n; i++) ids[i] = i;
    const int keys = 100000;
    for (int i = 0; i < keys; i++) {
        char k[32];
        keyname(k, sizeof k, i);
        kvh_place(kvh_hash(k, strlen(k), 0), ids, n, 2, node, out);
        count[out[0]]++;
        count[out[1]]++;
        if (node) assert_int_not_equal(node[out[0]], node[out[1]]);
    }
    double mean = 2.0 * keys / n;
    for (int i = 0; i < n; i++) {
        double dev = (count[i] - mean) / mean;
        if (dev > 0.10 || dev < -0.10) fail_msg("member %d holds %d, mean %.0f", i, count[i], mean);
    }
}

static void test_balance8(void **st) { (void)st; balance(8, NULL); }
static void test_balance64(void **st) { (void)st; balance(64, NULL); }
/* Two ranks per node: still balanced, copies on distinct nodes. */
static const int two_per_node[64] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};
static void test_balance8_nodes(void **st) { (void)st; balance(8, two_per_node); }

static void test_minimal_movement(void **st) {
    (void)st;
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7}, after[7] = {0, 1, 2, 4, 5, 6, 7};
    int moved = 0;
    for (int i = 0; i < 50000; i++) {
        char k[32];
        keyname(k, sizeof k, i);
        uint64_t h = kvh_hash(k, strlen(k), 0);
        int a[2], b[2];
        kvh_place(h, ids, 8, 2, NULL, a);
        kvh_place(h, after, 7, 2, NULL, b);
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

/* ids 0..7, node = id / per */
static void nodes_of(int *node, int per) {
    for (int i = 0; i < 8; i++) node[i] = i / per;
}

static void test_nodes_distinct(void **st) {
    (void)st;
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7}, node[8], out[3];
    for (int per = 2; per <= 4; per += 2) {
        nodes_of(node, per);  /* 4 nodes of 2, or 2 nodes of 4 */
        for (int i = 0; i < 20000; i++) {
            char k[32];
            keyname(k, sizeof k, i);
            uint64_t h = kvh_hash(k, strlen(k), 0);
            kvh_place(h, ids, 8, 2, node, out);
            assert_int_not_equal(node[out[0]], node[out[1]]);
            kvh_place(h, ids, 8, 3, node, out);
            assert_int_not_equal(out[0], out[1]);
            assert_int_not_equal(out[0], out[2]);
            assert_int_not_equal(out[1], out[2]);
            assert_int_not_equal(node[out[0]], node[out[1]]);
            if (per == 2) {  /* 4 nodes >= r = 3 */
                assert_int_not_equal(node[out[0]], node[out[2]]);
                assert_int_not_equal(node[out[1]], node[out[2]]);
            }
        }
    }
}

static void test_nodes_degenerate(void **st) {
    (void)st;
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7}, one[8] = {0}, own[8], a[3], b[3], c[3];
    for (int i = 0; i < 8; i++) own[i] = 10 + i;
    for (int i = 0; i < 20000; i++) {
        char k[32];
        keyname(k, sizeof k, i);
        uint64_t h = kvh_hash(k, strlen(k), 0);
        kvh_place(h, ids, 8, 3, NULL, a);
        kvh_place(h, ids, 8, 3, one, b);
        kvh_place(h, ids, 8, 3, own, c);
        assert_memory_equal(a, b, sizeof a);
        assert_memory_equal(a, c, sizeof a);
    }
}

static void test_node_loss_movement(void **st) {
    (void)st;
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7}, after[6] = {0, 1, 4, 5, 6, 7}, node[8];
    nodes_of(node, 2);  /* node 1 = ids 2 and 3 leaves */
    int moved = 0;
    for (int i = 0; i < 50000; i++) {
        char k[32];
        keyname(k, sizeof k, i);
        uint64_t h = kvh_hash(k, strlen(k), 0);
        int a[2], b[2];
        kvh_place(h, ids, 8, 2, node, a);
        kvh_place(h, after, 6, 2, node, b);
        bool held = node[a[0]] == 1 || node[a[1]] == 1;
        if (!held) {
            assert_memory_equal(a, b, sizeof a);
        } else {
            moved++;
            int kept = node[a[0]] == 1 ? a[1] : a[0];
            assert_true(b[0] == kept || b[1] == kept);
            assert_int_not_equal(node[b[0]], node[b[1]]);
        }
    }
    /* The departed node held one copy of about 2/4 of the keys. */
    assert_in_range(moved, 50000 / 2 * 9 / 10, 50000 / 2 * 11 / 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distinct_and_stable),
        cmocka_unit_test(test_plain_matches_greedy),
        cmocka_unit_test(test_balance8),
        cmocka_unit_test(test_balance64), cmocka_unit_test(test_minimal_movement),
        cmocka_unit_test(test_hash_spreads), cmocka_unit_test(test_balance8_nodes),
        cmocka_unit_test(test_nodes_distinct), cmocka_unit_test(test_nodes_degenerate),
        cmocka_unit_test(test_node_loss_movement)};
    return cmocka_run_group_tests_name("placement", tests, NULL, NULL);
}
