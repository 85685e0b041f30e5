/*
 * mpi_crash.c -- a plain MPI job whose rank 1 dies of SIGSEGV (Open MPI's
 * signal handler reports it) while the others finish: under --with-ft ulfm
 * mpirun then exits 0, and tests/run.sh checks that kvrun --no-verdict
 * still calls the run CRASHED.  No "run:" line: it is not a test itself.
 *
 * Rank 0 enters MPI_Finalize only once it has been told of rank 1's death
 * (its receive from rank 1 fails).  MPI_Finalize's closing PMIx fence then
 * must not wait for the dead rank: it did in 1 run in 20 on a loaded
 * machine, when the runtime deregistered the dead client before PMIx's
 * server had read its dropped connection (fixed by patch 0013).
 */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) raise(SIGSEGV);
    if (rank == 0) {  /* returns with an error once rank 1 is known dead */
        int x;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    usleep(300000);  /* the others outlive it, then finish */
    MPI_Finalize();
    return 0;
}
