/*
 * ulfm_killnode.c -- a whole node lost: its ranks and its Open MPI daemon.
 * cluster-run: 3 1 self
 * cluster-run: 3 2 self
 * cluster-run: 3 2 external
 * cluster-run: 3 2 freeze
 *
 * Runs across hosts only, so it has no "run:" line (those are single-host):
 * tests/scripts/test_killnode.sh runs one case per "cluster-run: HOSTS
 * RANKS-PER-HOST MODE" line on the test cluster.  The victim node is the
 * last rank's; it must not be rank 0's, the head node, where mpirun runs
 * (losing that one ends the job).  MODE self is ULFM's own stress/kill_node:
 * the last rank SIGKILLs its daemon (prted, its parent process) and the
 * node's other ranks SIGKILL themselves as soon as they see it gone, so the
 * runtime learns of them only through the daemon's loss.  MODE external:
 * the last rank creates DIR/ready, and the script SIGKILLs every process of
 * the node (ranks and prted) with one kill(1).  MODE freeze: the same, but
 * the script takes the node's link down and stops its processes with
 * SIGSTOP: a node that vanishes without closing its sockets, noticed only
 * through the runtime's TCP keepalive (scripts/kvrun sets it).  Usage: ulfm_killnode MODE
 * [DIR]; the killer writes the time of the kill to DIR/killtime (the kill
 * log of kvtest.h), from which survivors time their detection.  DIR must be
 * seen by every host.
 *
 * Pass rule, on every survivor: a pending MPI_ANY_SOURCE receive on a
 * watchdog communicator fails within 20 s; the next barrier on the world
 * communicator fails with MPIX_ERR_PROC_FAILED or MPIX_ERR_REVOKED;
 * MPIX_Comm_get_failed names exactly the victim node's ranks; a barrier on
 * the survivor's own node communicator (which holds no dead rank) succeeds;
 * the shrunken world has exactly the other nodes' ranks in their old
 * order, agrees, and an allreduce on it sums their old ranks.
 */
#include "kvtest.h"

#include <mpi-ext.h>

#define NAME_LEN 64

/* 1 for each rank of `comm` that runs on the node of its last rank. */
static int *victims_of(MPI_Comm comm, int size) {
    char me[NAME_LEN] = {0}, *all = malloc((size_t)size * NAME_LEN);
    int len, *victim = malloc((size_t)size * sizeof *victim);
    MPI_Get_processor_name(me, &len);
    MPI_Allgather(me, NAME_LEN, MPI_CHAR, all, NAME_LEN, MPI_CHAR, comm);
    for (int r = 0; r < size; r++)
        victim[r] = strncmp(all + (size_t)r * NAME_LEN, all + (size_t)(size - 1) * NAME_LEN,
                            NAME_LEN) == 0;
    free(all);
    return victim;
}

/* The name of process `pid` (its /proc comm), or "" when it is gone. */
static void comm_of(pid_t pid, char *out, size_t n) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "r");
    out[0] = 0;
    if (f && fgets(out, (int)n, f)) out[strcspn(out, "\n")] = 0;
    if (f) fclose(f);
}

/* A rank of the victim node: never returns. */
static void die_with_node(int last, const char *mode, const char *dir) {
    pid_t daemon = getppid();
    if (strcmp(mode, "external") == 0 || strcmp(mode, "freeze") == 0) {
        if (last) {  /* the script kills the node once this file exists */
            char path[4096];
            snprintf(path, sizeof path, "%s/ready", dir);
            FILE *f = fopen(path, "w");
            if (f) fclose(f);
        }
        sleep(60);  /* killed long before, unless the script failed */
        _exit(1);
    }
    if (last) {
        char name[32];
        comm_of(daemon, name, sizeof name);
        if (strcmp(name, "prted") != 0) {  /* on the head node it is mpirun */
            fprintf(stderr, "[victim] parent %d is '%s', not prted\n", (int)daemon, name);
            _exit(1);
        }
        kvt_log_kill_time();
        kill(daemon, SIGKILL);
        raise(SIGKILL);
    }
    /* Reparented once the daemon is gone: die then, as on a lost node. */
    for (int i = 0; i < 10000 && getppid() == daemon; i++) usleep(1000);
    raise(SIGKILL);
}

/* Wait for the watchdog receive to fail; its error class, or MPI_SUCCESS.
 * Prints the delay since the kill when the killer logged its time. */
static int notice(MPI_Request *req, int rank) {
    double t0 = kvt_now();
    int flag = 0, rc = MPI_SUCCESS, cls = MPI_SUCCESS;
    while (kvt_now() - t0 < 20.0) {
        rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || flag) break;
        usleep(200);
    }
    int64_t killed = kvt_kill_time_ns(), now = kv_wall_ns();
    MPI_Error_class(rc, &cls);
    if (killed > 0)
        printf("[rank %d] noticed the node loss %.1f ms after the kill (class %d)\n", rank,
               (now - killed) * 1e-6, cls);
    else
        printf("[rank %d] noticed the node loss (class %d)\n", rank, cls);
    return cls;
}

/* Wait (10 s at most) until `comm` knows `want` failed ranks; check that
 * they are exactly the victims. */
static void check_failed(MPI_Comm comm, const int *victim, int size, int want) {
    MPI_Group failed = MPI_GROUP_NULL, all;
    int n = 0, flag;
    for (double t0 = kvt_now(); kvt_now() - t0 < 10.0; usleep(1000)) {
        /* failure notices are applied by the progress engine, which
         * MPIX_Comm_get_failed does not run: a probe does */
        MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
        MPIX_Comm_get_failed(comm, &failed);
        MPI_Group_size(failed, &n);
        if (n >= want) break;
        MPI_Group_free(&failed);
        failed = MPI_GROUP_NULL;
    }
    KVT_CHECK(n == want);
    if (failed == MPI_GROUP_NULL) return;
    MPI_Comm_group(comm, &all);
    int *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    for (int i = 0; i < n; i++) in[i] = i;
    MPI_Group_translate_ranks(failed, n, in, all, out);
    for (int i = 0; i < n; i++) KVT_CHECK(out[i] >= 0 && out[i] < size && victim[out[i]]);
    free(in);
    free(out);
    MPI_Group_free(&all);
    MPI_Group_free(&failed);
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "self", *dir = argc > 2 ? argv[2] : ".";
    if (strcmp(mode, "self") != 0 && strcmp(mode, "external") != 0 && strcmp(mode, "freeze") != 0) {
        fprintf(stderr, "usage: ulfm_killnode [self|external|freeze] [DIR]\n");
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    char killlog[4096];  /* the kill log kvtest.h reads and writes */
    snprintf(killlog, sizeof killlog, "%s/killtime", dir);
    setenv("KV_KILL_LOG", killlog, 1);
    MPI_Comm world, watch, node;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    MPI_Comm_dup(world, &watch);
    MPI_Comm_set_errhandler(watch, MPI_ERRORS_RETURN);
    int rank, size, buf;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    int *victim = victims_of(world, size), nvictims = 0, sum = 0;
    for (int r = 0; r < size; r++) {
        nvictims += victim[r];
        if (!victim[r]) sum += r;
    }
    if (victim[0]) {  /* one host, or a mapping that puts rank 0 with the last */
        if (rank == 0) fprintf(stderr, "ulfm_killnode: the last rank shares rank 0's node\n");
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    MPI_Request req;
    MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 7, watch, &req);
    MPI_Barrier(world);
    if (victim[rank]) die_with_node(rank == size - 1, mode, dir);

    int cls = notice(&req, rank);
    KVT_CHECK(cls == MPIX_ERR_PROC_FAILED_PENDING || cls == MPIX_ERR_PROC_FAILED ||
              cls == MPIX_ERR_REVOKED);
    if (cls == MPI_SUCCESS) {  /* never noticed: nothing below can work */
        kvt_finish(MPI_COMM_NULL, "ulfm_killnode");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rc = MPI_Barrier(world);
    MPI_Error_class(rc, &cls);
    KVT_CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED);
    check_failed(world, victim, size, nvictims);
    KVT_CHECK_RC(MPI_Barrier(node), MPI_SUCCESS);  /* no dead rank in it */

    MPIX_Comm_revoke(watch);
    MPIX_Comm_revoke(world);
    MPI_Comm shrunk;
    KVT_CHECK_RC(MPIX_Comm_shrink(world, &shrunk), MPI_SUCCESS);
    int ok = 1, nrank, nsize, before = 0, got = -1;
    KVT_CHECK_RC(MPIX_Comm_agree(shrunk, &ok), MPI_SUCCESS);
    MPI_Comm_rank(shrunk, &nrank);
    MPI_Comm_size(shrunk, &nsize);
    for (int r = 0; r < rank; r++) before += !victim[r];
    KVT_CHECK(nsize == size - nvictims);
    KVT_CHECK(nrank == before);  /* order kept: only the victims left */
    KVT_CHECK_RC(MPI_Allreduce(&rank, &got, 1, MPI_INT, MPI_SUM, shrunk), MPI_SUCCESS);
    KVT_CHECK(got == sum);
    free(victim);
    kvt_finish(shrunk, "ulfm_killnode");
    MPI_Finalize();
    return 0;
}
