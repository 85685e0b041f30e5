/*
 * sde.c -- the store's counters exported through PAPI Software Defined
 * Events, so any PAPI tool reads them as sde:::kvstore::NAME on every
 * machine, hardware counters or not.  The counters are the fields of
 * kv_stats, registered by address: reading them costs the store nothing.
 */
#include "kv_internal.h"

#include <sde_lib.h>

#define REG(name, field, desc)                                                            \
    do {                                                                                  \
        papi_sde_register_counter(h, name, PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, \
                                  &s->st.field);                                          \
        papi_sde_describe_counter(h, name, desc);                                         \
    } while (0)

void kv_sde_init(kv_store *s) {
    papi_handle_t h = papi_sde_init("kvstore");
    s->sde = h;
    if (!h) return;
    REG("puts", puts, "kv_put calls");
    REG("gets", gets, "kv_get calls");
    REG("deletes", deletes, "kv_delete calls");
    REG("fetch_adds", fetch_adds, "kv_fetch_add calls");
    REG("get_misses", get_misses, "gets that found no key");
    REG("read_retries", read_retries, "re-reads of torn slot copies");
    REG("replica_fallbacks", replica_fallbacks, "reads served by a later replica");
    REG("lock_waits", lock_waits, "slot lock attempts that found the lock taken");
    REG("bytes_put", bytes_put, "bytes written with MPI_Put");
    REG("bytes_got", bytes_got, "bytes read with MPI_Get");
    REG("polls", polls, "watchdog tests");
    REG("recoveries", recoveries, "recoveries completed");
    REG("pairs_restored", pairs_restored, "copies pushed during re-replication");
    REG("windows_abandoned", windows_abandoned, "old windows left allocated");
    REG("locks_broken", locks_broken, "slot locks of failed ranks reset");
}

void kv_sde_fini(kv_store *s) {
    if (s->sde) papi_sde_shutdown(s->sde);
    s->sde = NULL;
}
