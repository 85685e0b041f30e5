/*
 * win_leader.c -- a node's leader killed alone on osc/rdma (the patched
 * Open MPI, patches/openmpi): what its node's live ranks still do.
 *
 * Across nodes osc/rdma keeps every rank's lock words in a segment its
 * node's leader (lowest rank there) registered, and the leader's process
 * serves them to other nodes; with MPI_Win_create each rank serves its own
 * memory.  So when a leader dies alone, its node-mates' memory stays
 * reachable and their locks do not: the limit patches/openmpi/README.md
 * states, tested here.  Run on the test cluster only (tests/scripts/
 * test_multihost.sh, 6 ranks spread over 3 hosts one by one): rank 1, the
 * leader of its node, is the victim; its node-mate is the "orphan".  Pass
 * rules, switch on, every wait bounded by DEADLINE seconds:
 *   1. MPIX_Win_get_failed names the victim, once known;
 *   2. every survivor on another node puts to the orphan and gets it back
 *      inside its lock_all epoch (MPI_MODE_NOCHECK), each flushed: all
 *      MPI_SUCCESS, the value read back;
 *   3. after MPI_Win_unlock_all, such a survivor's MPI_Win_lock(EXCLUSIVE)
 *      on the orphan returns MPIX_ERR_PROC_FAILED (its lock word's server
 *      is dead), while its locks on the live ranks of the other nodes,
 *      each around a put and a flush, return MPI_SUCCESS;
 *   4. after a barrier of the survivors, MPI_Win_free returns MPI_SUCCESS.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdint.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

#ifndef OMPI_HAVE_OSC_RDMA_FT_LOCKS
int main(void) {
    fprintf(stderr, "win_leader: this MPI lacks osc/rdma's fault-tolerant locks (build it with scripts/deps.sh)\n");
    return 1;
}
#else

enum { DEADLINE = 10, SLOTS = 64, VICTIM = 1 };

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int rank, size, node_rank, node_size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* the node of each rank, by its lowest rank */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    int lead = rank, *leader = malloc(size * sizeof *leader);
    MPI_Allreduce(MPI_IN_PLACE, &lead, 1, MPI_INT, MPI_MIN, node);
    MPI_Allgather(&lead, 1, MPI_INT, leader, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    int orphan = -1;
    for (int r = 0; r < size; r++)
        if (r != VICTIM && leader[r] == VICTIM) orphan = r;
    if (size < 4 || leader[VICTIM] != VICTIM || orphan < 0 || leader[0] == VICTIM) {
        if (rank == 0)
            fprintf(stderr, "win_leader: needs rank %d to lead a node of 2 ranks or more, rank 0 "
                    "elsewhere (6 ranks over 3 hosts, one by one)\n", VICTIM);
        MPI_Finalize();
        return 2;
    }
    KVT_CHECK_RC(kvr_proposed_enable(), KV_OK);
    uint64_t *mem;
    MPI_Win win;
    kvt_win_make(1, SLOTS * sizeof *mem, sizeof *mem, MPI_INFO_NULL, &mem, &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == VICTIM) raise(SIGKILL);

    /* 1. */
    MPI_Group g;
    int n = 0;
    for (double t0 = MPI_Wtime(); n < 1 && MPI_Wtime() - t0 < DEADLINE; MPI_Group_free(&g)) {
        MPIX_Win_get_failed(win, &g);
        MPI_Group_size(g, &n);
    }
    if (n != 1) {
        MPI_Group wg;
        int idx[16], fr[16];
        MPIX_Win_get_failed(win, &g);
        MPI_Win_get_group(win, &wg);
        MPI_Group_size(g, &n);
        for (int i = 0; i < n && i < 16; i++) idx[i] = i;
        MPI_Group_translate_ranks(g, n < 16 ? n : 16, idx, wg, fr);
        fprintf(stderr, "[rank %d] %d failures known:", rank, n);
        for (int i = 0; i < n && i < 16; i++) fprintf(stderr, " %d", fr[i]);
        fprintf(stderr, "\n");
        MPI_Group_free(&wg);
        MPI_Group_free(&g);
    }
    KVT_CHECK(n == 1);
    int elsewhere = leader[rank] != VICTIM;
    /* 2. */
    uint64_t mine = 1000 + (uint64_t)rank, back = 0;
    if (elsewhere) {
        KVT_CHECK_RC(MPI_Put(&mine, 1, MPI_UINT64_T, orphan, rank, 1, MPI_UINT64_T, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_flush(orphan, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Get(&back, 1, MPI_UINT64_T, orphan, rank, 1, MPI_UINT64_T, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_flush(orphan, win), MPI_SUCCESS);
        KVT_CHECK(back == mine);
    }
    MPI_Win_unlock_all(win);
    /* 3. */
    int lock_cls = -1, others_ok = 1;
    if (elsewhere) {
        double t0 = MPI_Wtime();
        int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, orphan, 0, win);
        lock_cls = kvt_err_class(rc);
        KVT_CHECK(lock_cls == MPIX_ERR_PROC_FAILED);
        if (rc == MPI_SUCCESS) MPI_Win_unlock(orphan, win);
        KVT_CHECK(MPI_Wtime() - t0 < DEADLINE);
        for (int r = 0; r < size; r++) {
            if (leader[r] == VICTIM || r == rank) continue;
            int ok = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win) == MPI_SUCCESS;
            ok = ok && MPI_Put(&mine, 1, MPI_UINT64_T, r, SLOTS - 1 - rank, 1, MPI_UINT64_T, win) == MPI_SUCCESS;
            ok = ok && MPI_Win_flush(r, win) == MPI_SUCCESS;
            ok = ok && MPI_Win_unlock(r, win) == MPI_SUCCESS;
            others_ok &= ok;
        }
        KVT_CHECK(others_ok);
    }
    printf("[rank %d] %s: put/get to the orphan %d %s; lock on it: error class %d; locks elsewhere %s\n",
           rank, elsewhere ? "another node" : "the orphan's node", orphan, back == mine ? "ok" : "-",
           lock_cls, others_ok ? "ok" : "FAILED");
    fflush(stdout);
    /* 4. */
    MPI_Comm survivors;
    MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors);
    MPI_Barrier(survivors);
    KVT_CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    free(mem);
    free(leader);
    int bad = kvt_finish(survivors, "win_leader");
    MPI_Finalize();
    return bad ? 1 : 0;
}
#endif
