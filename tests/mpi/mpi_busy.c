/*
 * mpi_busy.c -- a plain MPI job that keeps every rank talking for a while:
 * the job a node is lost under in tests/scripts/test_nodeloss.sh.
 * run: 3 1
 *
 * Usage: mpi_busy [SECONDS] (default 1).  Every 10 ms, until SECONDS have
 * passed on rank 0 (the decision is broadcast, so all ranks stop at the
 * same round), the ranks sum their numbers with MPI_Allreduce.  Pass rule:
 * every sum is size*(size-1)/2 and every call returns MPI_SUCCESS.  Errors
 * return instead of aborting (MPI_ERRORS_RETURN), so a failure the job
 * survives is counted, and the verdict is still written.  A rank that
 * sees a failure revokes the communicator before it leaves the loop: a
 * collective need not fail at every rank (under a node loss one rank's
 * MPI_Allreduce returned MPI_SUCCESS, with a wrong sum, where the others
 * got an error), and without the revoke that rank waited in the next
 * MPI_Bcast for a root that had left, and the others in the verdict's
 * agreement for it.  A wrong sum with MPI_SUCCESS is printed on its own
 * line, which test_nodeloss.sh must never find (coll/han's allreduce did
 * that; patch 0010 keeps it out of a fault-tolerant job).
 */
#include "kvtest.h"

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int want = size * (size - 1) / 2;  /* every sum */
    double seconds = argc > 1 ? atof(argv[1]) : 1.0, t0 = MPI_Wtime();
    long rounds = 0;
    for (int go = 1; go;) {
        int sum = -1, rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        KVT_CHECK_RC(rc, MPI_SUCCESS);
        KVT_CHECK(sum == want);
        if (rc == MPI_SUCCESS && sum != want)  /* a failure may fail it, never falsify it */
            printf("rank %d: MPI_Allreduce returned MPI_SUCCESS with the sum %d, not %d\n", rank, sum, want);
        if (rc != MPI_SUCCESS || sum != want) {  /* a failure: the verdict says so */
            MPIX_Comm_revoke(MPI_COMM_WORLD);
            break;
        }
        rounds++;
        go = MPI_Wtime() - t0 < seconds;
        rc = MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        KVT_CHECK_RC(rc, MPI_SUCCESS);
        if (rc != MPI_SUCCESS) {
            MPIX_Comm_revoke(MPI_COMM_WORLD);
            break;
        }
        usleep(10000);
    }
    if (rank == 0) printf("rounds: %ld\n", rounds);
    kvt_finish(MPI_COMM_WORLD, "mpi_busy");
    MPI_Finalize();
    return 0;
}
