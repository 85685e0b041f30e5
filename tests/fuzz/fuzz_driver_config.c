/*
 * fuzz_driver_config.c -- the driver's settings: the input is a config
 * file given with --config; drv_parse and drv_check accept it or refuse it
 * with a message, never crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_driver_config.%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    static drv_settings s;
    char err[600] = "";
    char *argv[] = {"kv_driver", "--config", path, NULL};
    if (drv_parse(3, argv, &s, err, sizeof err) == 0) {
        err[0] = 0;
        if (drv_check(&s, 4, err, sizeof err) != 0 && !err[0]) abort();
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
