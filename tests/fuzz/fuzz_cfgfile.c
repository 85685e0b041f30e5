/*
 * fuzz_cfgfile.c -- the config-file parser of the driver and campaigns
 * (experiments/driver/cfgfile.c): any text is parsed or refused with a message.
 */
#include <stdlib.h>
#include <string.h>

#include "cfgfile.h"

static int accept_all(void *ctx, const char *name, const char *value, int line, char *err,
                      size_t errlen) {
    (void)ctx; (void)line; (void)err; (void)errlen;
    volatile size_t n = strlen(name) + strlen(value);  /* both must be strings */
    (void)n;
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    char err[256] = "";
    if (cf_parse_string(text, "fuzz", accept_all, NULL, err, sizeof err) != 0 && !err[0]) abort();
    free(text);
    return 0;
}
