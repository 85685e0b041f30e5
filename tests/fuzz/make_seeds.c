/*
 * make_seeds.c -- writes the binary seed inputs of the slot and record
 * fuzz targets (valid images, so the fuzzer starts from the structure the
 * code expects rather than having to find a checksum).  Run by hand:
 *   build/tests/fuzz/make_seeds tests/fuzz/corpus   (make builds it)
 */
#include <stdio.h>
#include <stdlib.h>

#include "kv_internal.h"

static void put(const char *dir, const char *name, const void *p, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) { perror(path); exit(1); }
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    char d[400];
    unsigned char buf[2 + 512] = {0};
    /* fuzz_slot: two bytes of limits (max_key 1+b0%64, max_value b1%200), then the image */
    size_t mk = 16, mv = 40, slot = kvs_slot_size(mk, mv);
    buf[0] = (unsigned char)(mk - 1);
    buf[1] = (unsigned char)mv;
    kvs_encode(buf + 2, 7, "key-1", 5, "value-of-key-1", 14, false, mk);
    snprintf(d, sizeof d, "%s/fuzz_slot", argv[1]);
    put(d, "live", buf, 2 + slot);
    kvs_encode(buf + 2, 9, "key-2", 5, NULL, 0, true, mk);
    put(d, "deleted", buf, 2 + slot);
    put(d, "short", buf, 2 + KVS_HDR_SIZE + 3);
    /* fuzz_records: three records of the exchange (limits 16/48) */
    unsigned char rec[512];
    size_t off = 0;
    const char *keys[] = {"a", "key-two", "k3"}, *vals[] = {"1", "", "value three"};
    for (int i = 0; i < 3; i++) {
        kvr_rec r = {(uint64_t)(i + 1), (uint32_t)strlen(keys[i]) | (i == 1 ? KVS_TOMB : 0),
                     (uint32_t)strlen(vals[i])};
        memset(rec + off, 0, kvr_rec_size(r.klen, r.vlen));
        memcpy(rec + off, &r, sizeof r);
        memcpy(rec + off + sizeof r, keys[i], strlen(keys[i]));
        memcpy(rec + off + sizeof r + strlen(keys[i]), vals[i], strlen(vals[i]));
        off += kvr_rec_size(r.klen, r.vlen);
    }
    snprintf(d, sizeof d, "%s/fuzz_records", argv[1]);
    put(d, "three", rec, off);
    return 0;
}
