/*
 * store_close.c -- a rank dies as the store closes: every survivor's
 * kv_close returns, none waits for ever.
 * run: 4 allocate online
 * run: 4 allocate recreate-copy
 * run: 4 create online
 *
 * Arguments: backend variant.  Every rank writes its keys, the members
 * meet (kv_barrier), then the last rank dies by SIGKILL 200 ms later;
 * ranks 0 and 1 close the store at once, before the death, and rank 2
 * only once its own copy of MPI_COMM_WORLD names the dead
 * (MPIX_Comm_get_failed) and its store has a failure pending (as a call
 * that met the dead leaves it), so that the survivors reach kv_close
 * knowing different things.  A
 * repair that one of them started alone in kv_close waited for ever in
 * its shrink while the others freed and finalized (a soak run of online,
 * the second of two kills landing as the run closed).  Pass rules (r = 2,
 * the launcher's limit turning a hang into a failure): every survivor's
 * kv_close returns KV_OK, and then the survivors agree (MPIX_Comm_agree)
 * on a communicator of theirs made before the death, which waits for one
 * still stuck in kv_close.  (An MPI_Allreduce there returned
 * MPIX_ERR_PROC_FAILED at times, though none of its members had failed.)
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <time.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

enum { KEYS = 32, WAIT_S = 10 };

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 3) { fprintf(stderr, "usage: store_close allocate|create VARIANT\n"); return 2; }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm world;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    kv_config c;
    kv_config_default(&c);
    c.backend = kv_backend_from_name(argv[1]);
    c.variant = kv_variant_from_name(argv[2]);
    c.replicas = 2;
    kv_store *s;
    int rc = kv_open(MPI_COMM_WORLD, &c, &s);
    if (rc != KV_OK) {
        fprintf(stderr, "kv_open: %s\n", kv_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char key[32], val[32];
    for (int k = 0; k < KEYS; k++) {
        snprintf(key, sizeof key, "r%d-k%d", rank, k);
        snprintf(val, sizeof val, "v%d", k);
        KVT_CHECK_RC(kv_put(s, key, strlen(key), val, strlen(val)), KV_OK);
    }
    KVT_CHECK_RC(kv_barrier(s), KV_OK);
    int victim = size - 1;
    MPI_Comm live;  /* the survivors-to-be, made before the death */
    MPI_Comm_split(world, rank == victim ? MPI_UNDEFINED : 0, rank, &live);
    MPI_Barrier(world);
    if (rank == victim) {  /* once ranks 0 and 1 are inside kv_close */
        struct timespec t = {0, 200 * 1000 * 1000};
        nanosleep(&t, NULL);
        raise(SIGKILL);
    }
    if (rank == 2) {  /* closes knowing of the death */
        MPI_Group g;
        int n = 0;
        for (double t0 = MPI_Wtime(); n < 1 && MPI_Wtime() - t0 < WAIT_S; MPI_Group_free(&g)) {
            int flag;  /* news of failures comes through progress */
            MPI_Iprobe(MPI_ANY_SOURCE, 0, world, &flag, MPI_STATUS_IGNORE);
            MPIX_Comm_get_failed(world, &g);
            MPI_Group_size(g, &n);
        }
        KVT_CHECK(n == 1);
        s->failure_pending = true;  /* as an operation that met the dead leaves it */
    }
    MPI_Comm keep = kvt_keep(kv_comm(s));
    rc = kv_close(s);
    KVT_CHECK_RC(rc, KV_OK);
    printf("[rank %d] kv_close: %s\n", rank, kv_strerror(rc));
    fflush(stdout);
    int flag = 1;  /* every survivor came back from kv_close */
    KVT_CHECK_RC(MPIX_Comm_agree(live, &flag), MPI_SUCCESS);
    MPI_Comm_free(&live);
    int bad = kvt_finish(keep, "store_close");  /* it shrinks past the dead */
    MPI_Finalize();
    return bad ? 1 : 0;
}
