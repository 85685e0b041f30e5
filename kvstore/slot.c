/*
 * slot.c -- encoding and verification of one slot image.
 *
 * A slot image is what a reader fetched with MPI_Get from another rank's
 * table, so nothing in it is trusted: lengths are checked against the
 * configured limits and against the bytes actually fetched before any of
 * them is used, and the checksum (over version, lengths, key and value)
 * tells a complete copy from a torn one (a write in progress or cut short
 * by a failure).  The lock word is not covered: it changes independently.
 */
#include "kv_internal.h"

size_t kvs_slot_size(size_t max_key, size_t max_value) {
    size_t sz = KVS_HDR_SIZE + max_key + max_value;
    return (sz + 7) & ~(size_t)7;
}

uint64_t kvs_checksum(uint64_t version, uint32_t klen, uint32_t vlen, const void *key,
                      const void *val) {
    uint64_t h = kvh_mix(version, ((uint64_t)klen << 32) | vlen);
    h = kvh_hash(key, klen & ~KVS_TOMB, h);
    h = kvh_hash(val, vlen, h);
    return h | 1;  /* never 0: an all-zero (empty) slot never verifies */
}

void kvs_encode(unsigned char *slot, uint64_t version, const void *key, uint32_t klen,
                const void *val, uint32_t vlen, bool tomb, size_t max_key) {
    kvs_hdr h = {0};
    h.version = version;
    h.klen = klen | (tomb ? KVS_TOMB : 0);
    h.vlen = tomb ? 0 : vlen;
    memcpy(slot + KVS_HDR_SIZE, key, klen);
    if (!tomb && vlen) memcpy(slot + KVS_HDR_SIZE + max_key, val, vlen);
    h.check = kvs_checksum(h.version, h.klen, h.vlen, slot + KVS_HDR_SIZE,
                           slot + KVS_HDR_SIZE + max_key);
    memcpy(slot, &h, KVS_HDR_SIZE);
}

enum kvs_state kvs_decode(const unsigned char *slot, size_t have, size_t max_key,
                          size_t max_value) {
    if (have < KVS_HDR_SIZE) return KVS_TORN;
    kvs_hdr h;
    memcpy(&h, slot, KVS_HDR_SIZE);
    if (h.version == 0 && h.klen == 0 && h.vlen == 0 && h.check == 0) return KVS_EMPTY;
    uint32_t klen = h.klen & ~KVS_TOMB;
    bool tomb = (h.klen & KVS_TOMB) != 0;
    if (klen == 0 || klen > max_key || h.vlen > max_value || (tomb && h.vlen != 0))
        return KVS_TORN;
    if (KVS_HDR_SIZE + max_key + h.vlen > have) return KVS_SHORT;
    if (h.check != kvs_checksum(h.version, h.klen, h.vlen, slot + KVS_HDR_SIZE,
                                slot + KVS_HDR_SIZE + max_key))
        return KVS_TORN;
    return tomb ? KVS_DELETED : KVS_LIVE;
}

bool kvs_key_is(const unsigned char *slot, const void *key, size_t klen) {
    const kvs_hdr *h = kvs_hdr_of(slot);
    return KVS_KLEN(h) == klen && memcmp(slot + KVS_HDR_SIZE, key, klen) == 0;
}
