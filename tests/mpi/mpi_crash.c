/*
 * mpi_crash.c -- a plain MPI job whose rank 1 dies of SIGSEGV (Open MPI's
 * signal handler reports it) while the others finish: under --with-ft ulfm
 * mpirun then exits 0, and tests/run.sh checks that kvrun --no-verdict
 * still calls the run CRASHED.  No "run:" line: it is not a test itself.
 */
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) raise(SIGSEGV);
    usleep(300000);  /* the others outlive it, then finish */
    MPI_Finalize();
    return 0;
}
