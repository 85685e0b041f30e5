/*
 * mpi_hosts.c -- plain MPI works across the hosts a run is placed on.
 * run: 3 1
 *
 * Usage: mpi_hosts [HOSTS]. Pass rule: the ranks gather their hostnames
 * and find exactly HOSTS distinct ones (default 1), each holding the same
 * number of ranks (size / HOSTS); a token passed around the ring of all
 * ranks comes back counted by each; an allreduce sums the ranks
 * correctly.  Rank 0 prints "hosts: NAME..." (first rank's order), which
 * the multi-host tests read (tests/scripts/test_vcluster.sh runs it with one
 * rank per host of the test cluster, and in a Slurm allocation).
 */
#include "kvtest.h"

#define NAME_LEN 64

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int want = argc > 1 ? atoi(argv[1]) : 1;

    char me[NAME_LEN] = {0};
    gethostname(me, NAME_LEN - 1);
    char *all = calloc((size_t)size, NAME_LEN);
    KVT_CHECK_RC(MPI_Allgather(me, NAME_LEN, MPI_CHAR, all, NAME_LEN, MPI_CHAR, MPI_COMM_WORLD),
                 MPI_SUCCESS);
    if (rank == 0) {
        int distinct = 0;
        printf("hosts:");
        for (int i = 0; i < size; i++) {
            int seen = 0, count = 0;
            for (int j = 0; j < size; j++) {
                if (j < i && !strcmp(all + j * NAME_LEN, all + i * NAME_LEN)) seen = 1;
                if (!strcmp(all + j * NAME_LEN, all + i * NAME_LEN)) count++;
            }
            if (seen) continue;
            distinct++;
            printf(" %s", all + i * NAME_LEN);
            /* an even placement: every host holds size / HOSTS ranks */
            if (want > 0 && size % want == 0) KVT_CHECK(count == size / want);
        }
        printf("\n");
        fflush(stdout);
        KVT_CHECK(distinct == want);
    }
    free(all);

    /* the ring: the token visits every rank in turn, each adds one */
    long token = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (size > 1) {
        if (rank == 0) {
            token = 1;
            MPI_Send(&token, 1, MPI_LONG, next, 1, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            KVT_CHECK(token == size);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_LONG, next, 1, MPI_COMM_WORLD);
        }
    }
    int sum = 0;
    KVT_CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    KVT_CHECK(sum == size * (size - 1) / 2);
    kvt_finish(MPI_COMM_WORLD, "mpi_hosts");
    MPI_Finalize();
    return 0;
}
