/*
 * mpi_respawn.c -- ULFM's respawn recovery, without the store: the
 * survivors replace the dead with new processes and go on at the old size,
 * every rank in its old place.
 * run: 4 1
 * run: 4 0
 * run: 5 1 3
 * run: 2 1
 *
 * (2 ranks on a 2-core machine fill its slots: the spawn needs the dead
 * rank's slot, which Open MPI 5.0.7 frees only with patch 0011.)
 * Arguments: the world ranks to kill (rank 0 may be one).  After a barrier
 * the victims SIGKILL themselves; every survivor notices on a watchdog
 * receive (as ulfm_shrink), revokes, shrinks and agrees; the survivors
 * spawn as many copies of this program as died (the launcher's KVRUN_
 * variables passed on, so a newcomer can write the verdict and is tagged
 * as the run's), agree that the spawn succeeded, merge the intercommunicator
 * (survivors first), tell the newcomers which ranks they replace, and
 * split the merged communicator by old rank.
 *
 * Pass rule: the new communicator has the old size; every survivor has its
 * old rank and every newcomer a dead one's, each dead rank taken once; an
 * allreduce sums the ranks; a ring of sends (every rank to the next)
 * delivers each rank's number, across survivors and newcomers alike.
 */
#include "kvtest.h"

#include <mpi-ext.h>

extern char **environ;

/* PMIX_ENVAR's value: the launcher's KVRUN_ variables, one per line. */
static void launcher_env(char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "KVRUN_", 6) == 0 && used + strlen(*e) + 2 < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "\n" : "", *e);
}

/* The world ranks that are not in shrunk: the dead, in increasing order. */
static int dead_ranks(MPI_Comm world, MPI_Comm shrunk, int *dead) {
    int size, n = 0;
    MPI_Comm_size(world, &size);
    MPI_Group wg, sg;
    MPI_Comm_group(world, &wg);
    MPI_Comm_group(shrunk, &sg);
    for (int r = 0; r < size; r++) {
        int t;
        MPI_Group_translate_ranks(wg, 1, &r, sg, &t);
        if (t == MPI_UNDEFINED) dead[n++] = r;
    }
    MPI_Group_free(&wg);
    MPI_Group_free(&sg);
    return n;
}

/* Survivor side: notice, shrink, spawn, merge; *key is the old rank. */
static MPI_Comm survive(int argc, char **argv, MPI_Comm world, int *key) {
    MPI_Comm watch;
    MPI_Comm_dup(world, &watch);
    MPI_Comm_set_errhandler(watch, MPI_ERRORS_RETURN);
    int rank, size, buf;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    /* Every pair connected first, as in a program that has run a while:
     * across hosts a revoke that must reach a dead rank its sender never
     * talked to waits for ever for that rank's address (docs/status.md). */
    int *all = calloc((size_t)size, sizeof(int)), *got = calloc((size_t)size, sizeof(int));
    KVT_CHECK_RC(MPI_Alltoall(all, 1, MPI_INT, got, 1, MPI_INT, world), MPI_SUCCESS);
    free(all);
    free(got);
    MPI_Request req;
    MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 7, watch, &req);
    MPI_Barrier(world);
    for (int i = 1; i < argc; i++)
        if (atoi(argv[i]) == rank) raise(SIGKILL);

    double t0 = kvt_now();
    int flag = 0, rc = MPI_SUCCESS;
    while (kvt_now() - t0 < 10.0 && rc == MPI_SUCCESS && !flag) {
        rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        usleep(100);
    }
    KVT_CHECK(rc != MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {  /* never noticed: nothing below can work */
        kvt_finish(MPI_COMM_NULL, "mpi_respawn");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPIX_Comm_revoke(watch);
    MPIX_Comm_revoke(world);
    MPI_Comm shrunk, inter, merged;
    KVT_CHECK_RC(MPIX_Comm_shrink(world, &shrunk), MPI_SUCCESS);
    MPI_Comm_set_errhandler(shrunk, MPI_ERRORS_RETURN);
    int ok = 1;
    KVT_CHECK_RC(MPIX_Comm_agree(shrunk, &ok), MPI_SUCCESS);
    int dead[64];
    int ndead = dead_ranks(world, shrunk, dead);
    KVT_CHECK(ndead == argc - 1);

    char env[4096];
    launcher_env(env, sizeof env);
    MPI_Info info;
    MPI_Info_create(&info);
    if (env[0]) MPI_Info_set(info, "PMIX_ENVAR", env);
    /* one a node, on the nodes with room (the job's own policy, 2 a node,
     * would put two newcomers on a node that has one free slot) */
    MPI_Info_set(info, "map_by", "node");
    double ts = kvt_now();
    /* The runtime may free the dead's slots a moment after the survivors
     * hear of the death: a refused spawn is tried again (up to 1 s). */
    ok = 0;
    for (int try = 0; try < 20 && !ok; try++) {
        if (try > 0) usleep(50000);
        rc = MPI_Comm_spawn(argv[0], &argv[1], ndead, info, 0, shrunk, &inter, MPI_ERRCODES_IGNORE);
        ok = rc == MPI_SUCCESS;
        KVT_CHECK_RC(MPIX_Comm_agree(shrunk, &ok), MPI_SUCCESS);  /* all spawned, or none goes on */
    }
    MPI_Info_free(&info);
    KVT_CHECK(ok);
    if (!ok) {
        kvt_finish(shrunk, "mpi_respawn");
        MPI_Finalize();
        exit(0);
    }
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    KVT_CHECK_RC(MPI_Intercomm_merge(inter, 0, &merged), MPI_SUCCESS);
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    KVT_CHECK_RC(MPI_Bcast(dead, ndead, MPI_INT, 0, merged), MPI_SUCCESS);
    int srank;
    MPI_Comm_rank(shrunk, &srank);
    if (srank == 0)
        printf("[rank %d] replaced %d dead in %.1f ms (spawn and merge)\n", rank, ndead,
               (kvt_now() - ts) * 1e3);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&shrunk);
    MPI_Comm_free(&watch);
    *key = rank;
    return merged;
}

/* Newcomer side: merge with the survivors; *key is the dead rank taken. */
static MPI_Comm join(MPI_Comm parent, int ndead, int *key) {
    MPI_Comm merged;
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    KVT_CHECK_RC(MPI_Intercomm_merge(parent, 1, &merged), MPI_SUCCESS);
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    int dead[64];
    KVT_CHECK_RC(MPI_Bcast(dead, ndead, MPI_INT, 0, merged), MPI_SUCCESS);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    *key = dead[me];
    MPI_Comm_free(&parent);
    return merged;
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 2 || argc - 1 > 64) {
        fprintf(stderr, "usage: mpi_respawn RANK... (the ranks to kill, at most 64)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm parent, merged, world;
    MPI_Comm_get_parent(&parent);
    int key = -1, joined = parent != MPI_COMM_NULL;
    if (joined) {
        merged = join(parent, argc - 1, &key);
    } else {
        MPI_Comm_dup(MPI_COMM_WORLD, &world);
        MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
        merged = survive(argc, argv, world, &key);
    }
    MPI_Comm again;
    KVT_CHECK_RC(MPI_Comm_split(merged, 0, key, &again), MPI_SUCCESS);
    MPI_Comm_set_errhandler(again, MPI_ERRORS_RETURN);
    int rank, size, sum = 0, njoined = 0;
    MPI_Comm_rank(again, &rank);
    MPI_Comm_size(again, &size);
    KVT_CHECK(rank == key);  /* every rank in its old place */
    KVT_CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, again), MPI_SUCCESS);
    KVT_CHECK(sum == size * (size - 1) / 2);
    KVT_CHECK_RC(MPI_Allreduce(&joined, &njoined, 1, MPI_INT, MPI_SUM, again), MPI_SUCCESS);
    KVT_CHECK(njoined == argc - 1);
    int from = -1;
    KVT_CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 3, &from, 1, MPI_INT,
                              (rank + size - 1) % size, 3, again, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
    KVT_CHECK(from == (rank + size - 1) % size);
    if (!joined) {
        int old;
        MPI_Comm_size(MPI_COMM_WORLD, &old);
        KVT_CHECK(size == old);  /* the old size again */
    }
    kvt_finish(again, "mpi_respawn");
    MPI_Finalize();
    return 0;
}
