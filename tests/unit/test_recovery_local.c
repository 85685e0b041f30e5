/*
 * test_recovery_local.c -- the local steps of recovery that settle
 * interrupted writes: re-replicated copies inserted in any order, and
 * slot locks broken with the help of writers' journals.
 *
 * Pass rules: a deletion is never undone by an older live copy, whichever
 * arrives first, and an inserted copy never takes the slot of another
 * key's tombstone; a journal counts only while its write still holds the
 * key's home slot (a stale one does not bring a deleted key back); a slot
 * torn by a writer that survived is repaired from its journal; a torn slot
 * without a journal becomes a placeholder that any copy replaces; a
 * stream of copies ends at its first malformed record, everything before
 * it inserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kv_internal.h"

enum { NSLOTS = 16, NIDS = 3, MK = 16, MV = 32 };

static kv_store *store_sized(size_t nslots) {
    kv_store *s = calloc(1, sizeof *s);
    kv_config_default(&s->cfg);
    s->cfg.max_key = MK;
    s->cfg.max_value = MV;
    s->cfg.max_probe = 8;
    s->nslots = nslots;
    s->nids = NIDS;
    s->slot_size = kvs_slot_size(MK, MV);
    s->base = calloc(nslots + NIDS, s->slot_size);  /* table, then one journal per id */
    return s;
}

static kv_store *store(void) { return store_sized(NSLOTS); }

static void store_free(kv_store *s) {
    free(s->base);
    free(s->affected);
    free(s);
}

static unsigned char *slot_at(kv_store *s, size_t i) { return s->base + i * s->slot_size; }
static uint32_t home_of(kv_store *s, const char *k) {
    return (uint32_t)(kvh_hash(k, strlen(k), 0) % s->nslots);
}

/* Insert one record as re-replication does. */
static void insert(kv_store *s, const char *k, const char *v, uint64_t version) {
    kvr_rec r = {version, (uint32_t)strlen(k) | (v ? 0 : KVS_TOMB), v ? (uint32_t)strlen(v) : 0};
    kvr_insert_local(s, &r, (const unsigned char *)k, (const unsigned char *)(v ? v : ""));
}

/* State and version of key k in the local table (KVS_EMPTY if absent). */
static enum kvs_state find(kv_store *s, const char *k, uint64_t *version, const char **val) {
    for (uint32_t p = 0; p < s->nslots; p++) {
        unsigned char *sl = slot_at(s, (home_of(s, k) + p) % s->nslots);
        enum kvs_state st = kvs_decode(sl, s->slot_size, MK, MV);
        if ((st == KVS_LIVE || st == KVS_DELETED) && kvs_key_is(sl, k, strlen(k))) {
            if (version) *version = kvs_hdr_of(sl)->version;
            if (val) *val = (const char *)kvs_val_of(sl, MK);
            return st;
        }
        if (st == KVS_EMPTY) break;
    }
    return KVS_EMPTY;
}

/* Two distinct keys with the same home slot. */
static void colliding(kv_store *s, char *a, char *b) {
    strcpy(a, "key-0");
    for (int i = 1;; i++) {
        snprintf(b, MK, "key-%d", i);
        if (home_of(s, a) == home_of(s, b)) return;
    }
}

static void test_tombstone_then_older_copy(void **st) {
    (void)st;
    kv_store *s = store();
    insert(s, "k", NULL, 2);     /* the new replica gets the deletion first */
    insert(s, "k", "old", 1);    /* and the older live copy after it */
    uint64_t v = 0;
    assert_int_equal(find(s, "k", &v, NULL), KVS_DELETED);
    assert_int_equal(v, 2);
    store_free(s);
}

static void test_older_copy_then_tombstone(void **st) {
    (void)st;
    kv_store *s = store();
    insert(s, "k", "old", 1);
    insert(s, "k", NULL, 2);
    uint64_t v = 0;
    assert_int_equal(find(s, "k", &v, NULL), KVS_DELETED);
    assert_int_equal(v, 2);
    store_free(s);
}

static void test_tombstone_slot_not_taken(void **st) {
    (void)st;
    kv_store *s = store();
    char a[MK], b[MK];
    colliding(s, a, b);
    insert(s, a, NULL, 5);       /* a's deletion */
    insert(s, b, "bee", 1);      /* another key probing through a's tombstone */
    insert(s, a, "stale", 4);    /* a's older live copy, last */
    assert_int_equal(find(s, a, NULL, NULL), KVS_DELETED);
    assert_int_equal(find(s, b, NULL, NULL), KVS_LIVE);
    store_free(s);
}

/* Write an image of k into journal `id` with lock word `lock`. */
static void journal(kv_store *s, int id, const char *k, const char *v, uint64_t version, uint64_t lock) {
    unsigned char *j = slot_at(s, NSLOTS + (size_t)id);
    kvs_encode(j, version, k, (uint32_t)strlen(k), v, (uint32_t)strlen(v), false, MK);
    ((kvs_hdr *)(void *)j)->lock = lock;
}

static void lock_slot(kv_store *s, uint32_t i, uint64_t lock) {
    ((kvs_hdr *)(void *)slot_at(s, i))->lock = lock;
}

static void test_stale_journal_ignored(void **st) {
    (void)st;
    kv_store *s = store();
    char a[MK], b[MK];
    colliding(s, a, b);
    /* Writer 1 once wrote a (journalled, lock word of its write 3); a was
     * deleted since and its slot reused by b.  Writer 1 died while writing
     * b (write 9): the home slot holds write 9's lock, not write 3's. */
    journal(s, 1, a, "resurrected", 4, KVS_LOCK_WORD(3, 1));
    insert(s, b, "bee", 7);
    lock_slot(s, home_of(s, b), KVS_LOCK_WORD(9, 1));
    bool failed[NIDS] = {false, true, false};
    kvr_break_locks(s, failed);
    assert_int_equal(find(s, a, NULL, NULL), KVS_EMPTY);
    assert_int_equal(find(s, b, NULL, NULL), KVS_LIVE);
    assert_int_equal(kvs_hdr_of(slot_at(s, home_of(s, b)))->lock, 0);
    assert_int_equal(kvs_decode(slot_at(s, NSLOTS + 1), s->slot_size, MK, MV), KVS_EMPTY);
    store_free(s);
}

static void test_surviving_writer_torn_slot_repaired(void **st) {
    (void)st;
    kv_store *s = store();
    /* Writer 2 (alive) overwrote k in place: journal complete, slot torn
     * (new header over the old value) when a failure cut its flush short. */
    const uint64_t lock = KVS_LOCK_WORD(5, 2);
    insert(s, "k", "old-value", 1);
    uint32_t h = home_of(s, "k");
    unsigned char img[256] = {0};
    kvs_encode(img, 2, "k", 1, "new-value", 9, false, MK);
    memcpy(slot_at(s, h) + 8, img + 8, KVS_HDR_SIZE - 8);  /* the header only: torn */
    lock_slot(s, h, lock);
    journal(s, 2, "k", "new-value", 2, lock);
    assert_int_equal(kvs_decode(slot_at(s, h), s->slot_size, MK, MV), KVS_TORN);
    bool failed[NIDS] = {false, true, false};  /* another rank died */
    kvr_break_locks(s, failed);
    uint64_t v = 0;
    const char *val = NULL;
    assert_int_equal(find(s, "k", &v, &val), KVS_LIVE);
    assert_int_equal(v, 2);
    assert_memory_equal(val, "new-value", 9);
    assert_int_equal(s->naffected > 0, 1);
    store_free(s);
}

static void test_torn_slot_without_journal_is_placeholder(void **st) {
    (void)st;
    kv_store *s = store();
    insert(s, "k", "old-value", 1);
    uint32_t h = home_of(s, "k");
    unsigned char img[256] = {0};
    kvs_encode(img, 2, "k", 1, "new-value", 9, false, MK);
    memcpy(slot_at(s, h) + 8, img + 8, KVS_HDR_SIZE - 8);
    lock_slot(s, h, KVS_LOCK_WORD(5, 0));
    bool failed[NIDS] = {true, false, false};
    kvr_break_locks(s, failed);
    const kvs_hdr *hd = kvs_hdr_of(slot_at(s, h));
    assert_int_equal(kvs_decode(slot_at(s, h), s->slot_size, MK, MV), KVS_DELETED);
    assert_int_equal(hd->version, 0);
    assert_int_equal(hd->lock, 0);
    assert_int_equal(s->st.locks_broken, 1);
    insert(s, "k", "from-a-replica", 2);  /* the placeholder is free for any copy */
    assert_int_equal(find(s, "k", NULL, NULL), KVS_LIVE);
    store_free(s);
}

/* A stream of records is inserted a window of records behind the walk
 * that checks them: a malformed record still ends the stream with -1,
 * with every record before it inserted and none after. */
static void test_stream_stops_at_malformed_record(void **st) {
    (void)st;
    enum { N = 40, BAD = 30 };
    kv_store *s = store_sized(1024);
    unsigned char data[N * 64] = {0};
    size_t len = 0;
    char k[MK], v[MV];
    for (int i = 0; i < N; i++) {
        snprintf(k, sizeof k, "key-%d", i);
        snprintf(v, sizeof v, "value-%d", i);
        kvr_rec r = {1, (uint32_t)strlen(k), i == BAD ? MV + 1 : (uint32_t)strlen(v)};
        memcpy(data + len, &r, sizeof r);
        memcpy(data + len + sizeof r, k, strlen(k));
        memcpy(data + len + sizeof r + strlen(k), v, strlen(v));
        len += kvr_rec_size((uint32_t)strlen(k), (uint32_t)strlen(v));
    }
    assert_int_equal(kvr_insert_all(s, data, len), -1);
    for (int i = 0; i < N; i++) {
        snprintf(k, sizeof k, "key-%d", i);
        snprintf(v, sizeof v, "value-%d", i);
        const char *got = NULL;
        assert_int_equal(find(s, k, NULL, &got), i < BAD ? KVS_LIVE : KVS_EMPTY);
        if (i < BAD) assert_memory_equal(got, v, strlen(v));
    }
    assert_int_equal(kvr_insert_all(s, data, kvr_rec_size(5, 7)), 1);  /* key-0 alone: well formed */
    store_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tombstone_then_older_copy),
        cmocka_unit_test(test_older_copy_then_tombstone),
        cmocka_unit_test(test_tombstone_slot_not_taken),
        cmocka_unit_test(test_stale_journal_ignored),
        cmocka_unit_test(test_surviving_writer_torn_slot_repaired),
        cmocka_unit_test(test_torn_slot_without_journal_is_placeholder),
        cmocka_unit_test(test_stream_stops_at_malformed_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
