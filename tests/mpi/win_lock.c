/*
 * win_lock.c -- a lock held by a dead process goes to the next waiter
 * (the ULFM RMA proposal, patches/openmpi: osc/sm's fault-tolerant locks),
 * so the window stays usable without a revoke.
 * run: 4 allocate exclusive
 * run: 4 allocate shared
 *
 * Arguments: backend (allocate: MPI_Win_allocate, osc/sm on one node) and
 * what the victim (the last rank) holds on rank 0 when it dies by SIGKILL:
 * an exclusive or a shared lock.  Fault-tolerant RMA is switched on through
 * MPI_T before the window is made.  Pass rules, every wait bounded by
 * DEADLINE seconds (a survivor stuck behind the dead is a hang, which the
 * launcher's limit turns into a failure):
 *   1. every survivor's N exclusive locks on rank 0 return MPI_SUCCESS,
 *      each around a read, an increment and a write of a counter at rank
 *      0 (get, flush, put, unlock), the survivors contending;
 *   2. the counter ends at N times the survivors: no increment lost, so no
 *      two survivors held the lock at once (nor one with the dead);
 *   3. a shared lock on rank 0 afterwards, by every survivor at once,
 *      returns MPI_SUCCESS and reads the same counter;
 *   4. the window is freed with MPI_SUCCESS.
 * With the switch off (Open MPI as released) the survivors would wait for
 * the dead holder forever: not run.  Each survivor prints how long its
 * first lock waited.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdint.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

#ifndef OMPI_HAVE_MPIX_WIN_ACK_FAILED
int main(void) {
    fprintf(stderr, "win_lock: this MPI lacks the window failure state (build it with scripts/deps.sh)\n");
    return 1;
}
#else

enum { N = 200 };

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 3) { fprintf(stderr, "usage: win_lock allocate exclusive|shared\n"); return 2; }
    int exclusive = strcmp(argv[2], "exclusive") == 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int victim = size - 1, alive = size - 1;
    KVT_CHECK_RC(kvr_proposed_enable(), KV_OK);

    MPI_Win win;
    uint64_t *mem = NULL;
    MPI_Win_allocate(64, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, 64);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim) {
        MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim) raise(SIGKILL);

    /* 1. and 2. */
    double t0 = MPI_Wtime(), first_ms = -1;
    for (int i = 0; i < N; i++) {
        uint64_t v = 0;
        int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        if (first_ms < 0) first_ms = (MPI_Wtime() - t0) * 1e3;
        KVT_CHECK_RC(rc, MPI_SUCCESS);
        if (rc != MPI_SUCCESS) break;
        KVT_CHECK_RC(MPI_Get(&v, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_flush(0, win), MPI_SUCCESS);
        v++;
        KVT_CHECK_RC(MPI_Put(&v, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    }
    MPI_Comm survivors;
    MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors);
    MPI_Barrier(survivors);

    /* 3. */
    uint64_t total = 0;
    KVT_CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
    KVT_CHECK_RC(MPI_Get(&total, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, win), MPI_SUCCESS);
    KVT_CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    KVT_CHECK(total == (uint64_t)N * (uint64_t)alive);
    printf("[rank %d] %s holder dead: first lock after %.1f ms; counter %llu of %d\n", rank,
           exclusive ? "exclusive" : "shared", first_ms, (unsigned long long)total, N * alive);

    /* 4. */
    MPI_Barrier(survivors);
    KVT_CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    int bad = kvt_finish(survivors, "win_lock");
    MPI_Finalize();
    return bad ? 1 : 0;
}
#endif
