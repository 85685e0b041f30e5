/*
 * fuzz_checkpoint.c -- a checkpoint file as read back from disk: any bytes
 * give KV_OK or an error (CORRUPT, CONFIG, FULL), never a crash or a read
 * outside the image.
 */
#include "fuzz_store.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    kv_store *s = fuzz_store(64, 32, 64);
    unsigned char *img = malloc(size ? size : 1);
    memcpy(img, data, size);
    long long pairs = 0;
    int rc = kvc_load_image(s, img, size, 0, &pairs);
    if (rc != KV_OK && rc != KV_ERR_CORRUPT && rc != KV_ERR_CONFIG && rc != KV_ERR_FULL) abort();
    free(img);
    fuzz_store_free(s);
    return 0;
}
