/*
 * fuzz_slot.c -- decoding a slot image fetched from another rank's memory.
 * Any bytes, any fetched length: kvs_decode must classify without reading
 * past `have`, and for LIVE/DELETED the key and value it vouches for must
 * lie inside the image (touched here so ASan sees any overrun).
 */
#include <stdlib.h>

#include "kv_internal.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    if (size < 2) return 0;
    size_t max_key = 1 + data[0] % 64, max_value = data[1] % 200;
    data += 2;
    size -= 2;
    /* A copy of exactly `size` bytes, so any overread is out of bounds. */
    unsigned char *img = malloc(size ? size : 1);
    memcpy(img, data, size);
    enum kvs_state st = kvs_decode(img, size, max_key, max_value);
    if (st == KVS_LIVE || st == KVS_DELETED) {
        const kvs_hdr *h = kvs_hdr_of(img);
        volatile unsigned char sink = 0;
        for (size_t i = 0; i < KVS_KLEN(h); i++) sink ^= kvs_key_of(img)[i];
        for (size_t i = 0; i < h->vlen; i++) sink ^= kvs_val_of(img, max_key)[i];
        (void)kvs_key_is(img, "key", 3);
        (void)sink;
    }
    free(img);
    return 0;
}
