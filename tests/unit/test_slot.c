/*
 * test_slot.c -- slot encoding, checksum and decoding of hostile images.
 *
 * Pass rules: an encoded slot decodes as live with its key and value; every
 * single flipped bit outside the lock word is detected; a torn write (new
 * header over an old body, or half a new value) is detected; lengths beyond
 * the limits or the bytes fetched are refused before use; an image shorter
 * than its value says "short", not "live"; tombstones decode as deleted.
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip), cmocka_unit_test(test_every_bit_flip),
        cmocka_unit_test(test_torn), cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_short_and_empty)};
    return cmocka_run_group_tests_name("slot", tests, NULL, NULL);
}
