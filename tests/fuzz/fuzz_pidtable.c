/*
 * fuzz_pidtable.c -- the pid table the external injector reads (files
 * written by the ranks, "rank pid host"): any content of rank.0 is read or
 * refused (EBADMSG), never a crash or a host name without its NUL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inject.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/fuzz_pidtable.%d", (int)getpid());
        mkdir(dir, 0755);
    }
    char path[96];
    snprintf(path, sizeof path, "%s/rank.0", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    kvi_rank_info info;
    if (kvi_read_pids(dir, 1, 0.0, &info) == 0) {
        if (!memchr(info.host, 0, sizeof info.host)) abort();
    } else if (errno != EBADMSG && errno != ETIMEDOUT) {
        abort();
    }
    return 0;
}
