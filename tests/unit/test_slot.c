/*
 * test_slot.c -- slot encoding, checksum and decoding of hostile images.
 *
 * Pass rules: an encoded slot decodes as live with its key and value; every
 * single flipped bit outside the lock word is detected; a torn write (new
 * header over an old body, or half a new value) is detected; lengths beyond
 * the limits or the bytes fetched are refused before use; an image shorter
 * than its value says "short", not "live"; tombstones decode as deleted.
 * The check word: the crc32 instruction and the portable table give the
 * same bits for every length; on the version and on every word of key and
 * value the check reads (8 bytes from their start), the one-bit differences
 * move the check by 64 linearly independent amounts, so no difference
 * confined to one word goes unnoticed.  A key compares equal to itself
 * at every length and unequal after any one byte changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kv_internal.h"

enum { MK = 32, MV = 200 };

static size_t ssz(void) { return kvs_slot_size(MK, MV); }

static unsigned char *make(const char *k, const char *v, uint64_t ver) {
    unsigned char *s = calloc(1, ssz());
    kvs_encode(s, ver, k, (uint32_t)strlen(k), v, (uint32_t)strlen(v), false, MK);
    return s;
}

static void test_roundtrip(void **st) {
    (void)st;
    unsigned char *s = make("alpha", "the value", 7);
    assert_int_equal(kvs_decode(s, ssz(), MK, MV), KVS_LIVE);
    assert_true(kvs_key_is(s, "alpha", 5));
    assert_false(kvs_key_is(s, "alphb", 5));
    assert_false(kvs_key_is(s, "alph", 4));
    assert_int_equal(kvs_hdr_of(s)->vlen, 9);
    assert_memory_equal(kvs_val_of(s, MK), "the value", 9);
    free(s);
}

static void test_every_bit_flip(void **st) {
    (void)st;
    unsigned char *s = make("key-1", "some value bytes", 3);
    size_t used = KVS_HDR_SIZE + MK + 16;
    for (size_t bit = 64; bit < used * 8; bit++) {  /* skip the lock word */
        size_t byte = bit / 8;
        /* bytes between the key's end and the value area are padding */
        if (byte >= KVS_HDR_SIZE + 5 && byte < KVS_HDR_SIZE + MK) continue;
        s[byte] ^= (unsigned char)(1u << (bit % 8));
        enum kvs_state d = kvs_decode(s, ssz(), MK, MV);
        if (d == KVS_LIVE) fail_msg("flip of bit %zu not detected", bit);
        s[byte] ^= (unsigned char)(1u << (bit % 8));
    }
    assert_int_equal(kvs_decode(s, ssz(), MK, MV), KVS_LIVE);
    free(s);
}

static void test_torn(void **st) {
    (void)st;
    unsigned char *a = make("key", "old-value-old-value", 1), *b = make("key", "NEW-VALUE-NEW-VALUE", 2);
    unsigned char *t = malloc(ssz());
    memcpy(t, a, ssz());
    memcpy(t, b, KVS_HDR_SIZE);  /* new header, old body */
    assert_int_equal(kvs_decode(t, ssz(), MK, MV), KVS_TORN);
    memcpy(t, b, KVS_HDR_SIZE + MK + 8);  /* half of the new value */
    assert_int_equal(kvs_decode(t, ssz(), MK, MV), KVS_TORN);
    memcpy(t, b, ssz());
    assert_int_equal(kvs_decode(t, ssz(), MK, MV), KVS_LIVE);
    free(a); free(b); free(t);
}

static void test_hostile_lengths(void **st) {
    (void)st;
    unsigned char *s = make("k", "v", 1);
    kvs_hdr *h = (kvs_hdr *)(void *)s;
    h->vlen = MV + 1;
    assert_int_equal(kvs_decode(s, ssz(), MK, MV), KVS_TORN);
    h->vlen = 0xFFFFFFFFu;
    assert_int_equal(kvs_decode(s, ssz(), MK, MV), KVS_TORN);
    h->vlen = 1;
    h->klen = MK + 1;
    assert_int_equal(kvs_decode(s, ssz(), MK, MV), KVS_TORN);
    h->klen = 0;
    assert_int_equal(kvs_decode(s, ssz(), MK, MV), KVS_TORN);
    assert_int_equal(kvs_decode(s, 10, MK, MV), KVS_TORN);  /* not even a header */
    free(s);
}

static void test_short_and_empty(void **st) {
    (void)st;
    char big[150];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    unsigned char *s = make("k", big, 1);
    assert_int_equal(kvs_decode(s, KVS_HDR_SIZE + MK + 64, MK, MV), KVS_SHORT);
    assert_int_equal(kvs_decode(s, ssz(), MK, MV), KVS_LIVE);
    unsigned char *z = calloc(1, ssz());
    assert_int_equal(kvs_decode(z, ssz(), MK, MV), KVS_EMPTY);
    kvs_encode(z, 4, "gone", 4, NULL, 0, true, MK);
    assert_int_equal(kvs_decode(z, ssz(), MK, MV), KVS_DELETED);
    assert_true(kvs_key_is(z, "gone", 4));
    free(s); free(z);
}

static uint64_t rnd(uint64_t *x) {  /* splitmix64 */
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void test_check_portable(void **st) {
    (void)st;
    unsigned char k[MK], v[MV];
    uint64_t x = 1;
    for (int t = 0; t < 20000; t++) {
        for (size_t i = 0; i < MK; i++) k[i] = (unsigned char)rnd(&x);
        for (size_t i = 0; i < MV; i++) v[i] = (unsigned char)rnd(&x);
        uint32_t kl = 1 + (uint32_t)(rnd(&x) % MK), vl = (uint32_t)(rnd(&x) % (MV + 1));
        if (t & 1) kl |= KVS_TOMB;
        uint64_t ver = rnd(&x);
        assert_true(kvs_checksum(ver, kl, vl, k, v) == kvs_checksum_portable(ver, kl, vl, k, v));
    }
}

/* Rank over GF(2) of n 64-bit vectors (destroys them). */
static int rank64(uint64_t *m, int n) {
    int rank = 0;
    for (int bit = 63; bit >= 0 && rank < n; bit--) {
        int piv = -1;
        for (int i = rank; i < n && piv < 0; i++)
            if (m[i] >> bit & 1) piv = i;
        if (piv < 0) continue;
        uint64_t t = m[piv];
        m[piv] = m[rank];
        m[rank] = t;
        for (int i = 0; i < n; i++)
            if (i != rank && (m[i] >> bit & 1)) m[i] ^= t;
        rank++;
    }
    return rank;
}

static void test_check_one_word(void **st) {
    (void)st;
    unsigned char k[MK], v[MV];
    memset(k, 0x5A, sizeof k);
    memset(v, 0xC3, sizeof v);
    const uint32_t kl = 29, vl = 197;  /* partial last words in both */
    const uint64_t ver = 12345;
    uint64_t base = kvs_checksum(ver, kl, vl, k, v), m[64];
    /* the version; a length that changes moves the words read instead */
    for (int b = 0; b < 64; b++) m[b] = base ^ kvs_checksum(ver ^ (1ull << b), kl, vl, k, v);
    if (rank64(m, 64) != 64) fail_msg("version word: rank below 64");
    for (int seg = 0; seg < 2; seg++) {
        unsigned char *p = seg ? v : k;
        uint32_t len = seg ? vl : kl;
        for (uint32_t w = 0; w * 8 < len; w++) {
            int bits = len - w * 8 >= 8 ? 64 : (int)(len - w * 8) * 8;
            for (int b = 0; b < bits; b++) {
                p[w * 8 + b / 8] ^= (unsigned char)(1u << (b % 8));
                m[b] = base ^ kvs_checksum(ver, kl, vl, k, v);
                p[w * 8 + b / 8] ^= (unsigned char)(1u << (b % 8));
            }
            if (rank64(m, bits) != bits) fail_msg("%s word %u: rank below %d", seg ? "value" : "key", w, bits);
        }
    }
}

static void test_key_is(void **st) {
    (void)st;
    unsigned char *s = calloc(1, ssz());
    char k[MK + 1];
    for (size_t n = 1; n <= MK; n++) {
        for (size_t i = 0; i < n; i++) k[i] = (char)('a' + (i * 7) % 26);
        kvs_encode(s, 1, k, (uint32_t)n, "v", 1, false, MK);
        assert_true(kvs_key_is(s, k, n));
        if (n > 1) assert_false(kvs_key_is(s, k, n - 1));
        for (size_t i = 0; i < n; i++) {
            k[i] ^= 0x20;
            if (kvs_key_is(s, k, n)) fail_msg("length %zu: byte %zu changed, still equal", n, i);
            k[i] ^= 0x20;
        }
    }
    free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip), cmocka_unit_test(test_every_bit_flip),
        cmocka_unit_test(test_torn), cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_short_and_empty), cmocka_unit_test(test_check_portable),
        cmocka_unit_test(test_check_one_word), cmocka_unit_test(test_key_is)};
    return cmocka_run_group_tests_name("slot", tests, NULL, NULL);
}
