/*
 * fuzz_inject_spec.c -- injector schedule specs: parsed or refused with a
 * message; a spec that parses is drawn into a schedule against 8 ranks on
 * three hosts (each with its daemon; a prted parent off the first) without
 * a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    kvi_spec spec;
    char err[256] = "";
    if (kvi_spec_parse(text, &spec, err, sizeof err) == 0) {
        kvi_rank_info ranks[8];
        for (int i = 0; i < 8; i++) {
            int node = i < 4 ? 1 : i < 6 ? 2 : 3;
            ranks[i] = (kvi_rank_info){.rank = i, .pid = 1000 + i, .daemon = 500 + node,
                                       .daemon_parent = node > 1 ? 400 + node : 0};
            snprintf(ranks[i].host, sizeof ranks[i].host, "node%d", node);
        }
        kvi_schedule sched;
        if (kvi_schedule_build(&spec, ranks, 8, 1, &sched, err, sizeof err) == 0)
            kvi_schedule_free(&sched);
    } else if (!err[0]) {
        abort();
    }
    free(text);
    return 0;
}
