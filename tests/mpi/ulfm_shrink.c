/*
 * ulfm_shrink.c -- ULFM is really there.
 * run: 4
 * run: 5
 *
 * Pass rule: the last rank is killed with SIGKILL after a barrier; every
 * survivor notices it within 10 s through a pending MPI_ANY_SOURCE receive
 * on a watchdog communicator, revokes, shrinks and agrees; the shrunken
 * communicator has size-1 ranks in the old order; an allreduce on it sums
 * the survivors' old ranks correctly.  Run without --with-ft ulfm the same
 * program must not pass (the suite checks that too).
 */
#include "kvtest.h"

#include <mpi-ext.h>

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    MPI_Comm world, watch;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    MPI_Comm_dup(world, &watch);
    MPI_Comm_set_errhandler(watch, MPI_ERRORS_RETURN);
    int rank, size, buf;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    MPI_Request req;
    MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 7, watch, &req);
    MPI_Barrier(world);
    if (rank == size - 1) raise(SIGKILL);

    double t0 = kvt_now();
    int flag = 0, rc = MPI_SUCCESS;
    while (kvt_now() - t0 < 10.0) {
        rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || flag) break;
        usleep(100);
    }
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    KVT_CHECK(cls == MPIX_ERR_PROC_FAILED_PENDING || cls == MPIX_ERR_PROC_FAILED ||
              cls == MPIX_ERR_REVOKED);
    if (rc == MPI_SUCCESS) {  /* never noticed: nothing below can work */
        kvt_finish(MPI_COMM_NULL, "ulfm_shrink");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("[rank %d] noticed the failure after %.1f ms (class %d)\n", rank,
           (kvt_now() - t0) * 1e3, cls);
    MPIX_Comm_revoke(watch);
    MPIX_Comm_revoke(world);
    MPI_Comm shrunk;
    KVT_CHECK_RC(MPIX_Comm_shrink(world, &shrunk), MPI_SUCCESS);
    int ok = 1;
    KVT_CHECK_RC(MPIX_Comm_agree(shrunk, &ok), MPI_SUCCESS);
    int nrank, nsize;
    MPI_Comm_rank(shrunk, &nrank);
    MPI_Comm_size(shrunk, &nsize);
    KVT_CHECK(nsize == size - 1);
    KVT_CHECK(nrank == rank);  /* order kept: only the last rank left */
    int sum = 0;
    KVT_CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shrunk), MPI_SUCCESS);
    KVT_CHECK(sum == (size - 1) * (size - 2) / 2);
    kvt_finish(shrunk, "ulfm_shrink");
    MPI_Finalize();
    return 0;
}
