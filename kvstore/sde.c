/*
 * sde.c -- the store's counters exported through PAPI Software Defined
 * Events, so any PAPI tool reads them as sde:::kvstore::NAME on every
 * machine, hardware counters or not.  The counters are the fields of
 * kv_stats, registered by address: reading them costs the store nothing.
 * Built without libsde (kv_features.h, written by the Makefile from what
 * scripts/features.sh found), both functions do nothing: the counters are
 * still in kv_stats, only not exported.
 */
#include "kv_internal.h"
#include "kv_features.h"

#if KV_HAVE_SDE
#include <sde_lib.h>
#include <stddef.h>

/* libsde 7.0 crashes in papi_sde_init after papi_sde_shutdown, and when a
 * counter name is registered again after being unregistered, so the handle
 * and the counters are made once per process and kept. */
static papi_handle_t sde_handle;
static kv_store *sde_owner;

static const struct {
    const char *name, *desc;
    size_t off;
} sde_counters[] = {
#define COUNTER_(f, d) {#f, d, offsetof(kv_stats, f)},
    KV_STATS(COUNTER_)
#undef COUNTER_
};
#define NCOUNTERS (sizeof sde_counters / sizeof sde_counters[0])

/* Counters are registered once, as callbacks that read the fields of the
 * store opened last (0 when none is open). */
static long long sde_read(void *param) {
    size_t i = (size_t)param;
    if (!sde_owner || i >= NCOUNTERS) return 0;
    return *(const long long *)(const void *)((const char *)&sde_owner->st + sde_counters[i].off);
}

void kvp_sde_init(kv_store *s) {
    if (!sde_handle) {
        sde_handle = papi_sde_init("kvstore");
        for (size_t i = 0; sde_handle && i < NCOUNTERS; i++) {
            papi_sde_register_counter_cb(sde_handle, sde_counters[i].name, PAPI_SDE_RO | PAPI_SDE_DELTA,
                                         PAPI_SDE_long_long, sde_read, (void *)i);
            papi_sde_describe_counter(sde_handle, sde_counters[i].name, sde_counters[i].desc);
        }
    }
    sde_owner = s;
}

void kvp_sde_fini(kv_store *s) {
    if (sde_owner == s) sde_owner = NULL;
}

#else /* !KV_HAVE_SDE */

void kvp_sde_init(kv_store *s) { (void)s; }
void kvp_sde_fini(kv_store *s) { (void)s; }

#endif
