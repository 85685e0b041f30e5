/*
 * variant_none.c -- the failure-free baseline: r = 1, no watchdog.
 *
 * Operations never poll and recovery is never entered; a failure ends the
 * job (or hangs it, which the harness's deadline reports).  It measures
 * what the fault-tolerance machinery costs when nothing fails.
 */
#include "kv_internal.h"

static int none_make(kv_store *s, kvr_window *nw) {
    (void)s;
    (void)nw;
    return KV_ERR_UNSUPPORTED;
}

const kvr_variant_ops kvr_none = {.detects = false, .retire = KVR_ABANDON, .make = none_make};
