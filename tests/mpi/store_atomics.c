/*
 * store_atomics.c -- which atomics take the slot locks.
 * run: 3 allocate recreate-copy 0
 * run: 3 allocate spare 0
 * run: 3 create recreate-copy 1
 * run: 3 allocate proposed 1
 *
 * Arguments: backend variant expect.  Stock osc/sm guards every MPI atomic
 * to a target with a spin lock in shared memory that a killed rank can
 * hold forever; the workaround variants therefore take slot locks with the
 * processor's atomics on shared-memory windows (kvstore/ops.c).  This
 * program counts, through the MPI profiling interface, the MPI atomics the
 * store issues during puts, deletes and fetch-and-adds.  Pass rules: the
 * operations succeed and read back; with expect 0 no MPI atomic was
 * called, with expect 1 some were (osc/rdma windows, and variant
 * proposed, whose patched osc/sm bounds that spin).
 */
#include <stdint.h>

#include "kvstore.h"
#include "kvtest.h"

static long long atomics;

int MPI_Compare_and_swap(const void *o, const void *c, void *r, MPI_Datatype d, int t, MPI_Aint disp,
                         MPI_Win w) {
    atomics++;
    return PMPI_Compare_and_swap(o, c, r, d, t, disp, w);
}
int MPI_Accumulate(const void *o, int oc, MPI_Datatype od, int t, MPI_Aint disp, int tc,
                   MPI_Datatype td, MPI_Op op, MPI_Win w) {
    atomics++;
    return PMPI_Accumulate(o, oc, od, t, disp, tc, td, op, w);
}
int MPI_Fetch_and_op(const void *o, void *r, MPI_Datatype d, int t, MPI_Aint disp, MPI_Op op,
                     MPI_Win w) {
    atomics++;
    return PMPI_Fetch_and_op(o, r, d, t, disp, op, w);
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 4) { fprintf(stderr, "usage: store_atomics backend variant expect\n"); return 2; }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    kv_config c;
    kv_config_default(&c);
    c.backend = kv_backend_from_name(argv[1]);
    c.variant = kv_variant_from_name(argv[2]);
    c.spares = c.variant == KV_VARIANT_SPARE ? 1 : 0;
    c.replicas = 2;
    c.slots_per_rank = 1024;
    int expect = atoi(argv[3]);
    kv_store *s;
    int rc = kv_open(MPI_COMM_WORLD, &c, &s);
    if (rc == KV_ERR_UNSUPPORTED) {
        fprintf(stderr, "variant %s needs the patched Open MPI (make deps)\n", argv[2]);
        kvt_errors++;
        kvt_finish(MPI_COMM_WORLD, "store_atomics");
        MPI_Finalize();
        return 0;
    }
    KVT_CHECK_RC(rc, KV_OK);
    if (kv_is_spare(s)) {
        KVT_CHECK_RC(kv_spare_wait(s), KV_ERR_CLOSED);
        kv_close(s);
        MPI_Finalize();
        return 0;
    }
    long long before = atomics;
    char key[32];
    for (int i = 0; i < 50; i++) {
        snprintf(key, sizeof key, "atom-%d-%d", rank, i);
        KVT_CHECK_RC(kv_put(s, key, strlen(key), "v", 1), KV_OK);
        if (i % 2) KVT_CHECK_RC(kv_delete(s, key, strlen(key)), KV_OK);
    }
    int64_t old = -1;
    for (int i = 0; i < 20; i++) KVT_CHECK_RC(kv_fetch_add(s, "counter", 7, 1, &old), KV_OK);
    kv_barrier(s);
    int64_t total = 0;
    char buf[8];
    size_t len = 0;
    KVT_CHECK_RC(kv_get(s, "counter", 7, buf, sizeof buf, &len), KV_OK);
    memcpy(&total, buf, sizeof total);
    KVT_CHECK(len == 8 && total == 20 * kv_size(s));
    long long mine = atomics - before, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, kv_comm(s));
    if (rank == 0) printf("MPI atomics issued by the store: %lld\n", all);
    KVT_CHECK(expect ? all > 0 : all == 0);
    MPI_Comm keep = kvt_keep(kv_comm(s));
    kv_close(s);
    kvt_finish(keep, "store_atomics");
    MPI_Finalize();
    return 0;
}
