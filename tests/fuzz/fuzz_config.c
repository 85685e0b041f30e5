/*
 * fuzz_config.c -- store settings as text (config files, KV_* variables):
 * each line "name=value" goes through kv_config_set, then the result
 * through kv_config_check; errors come with a message, never a crash.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kv_internal.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    kv_config c;
    kv_config_default(&c);
    char msg[256];
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        msg[0] = 0;
        if (kv_config_set(&c, line, eq + 1, msg, sizeof msg) != KV_OK && !msg[0]) abort();
    }
    msg[0] = 0;
    if (kv_config_check(&c, msg, sizeof msg) != KV_OK && !msg[0]) abort();
    free(text);
    return 0;
}
