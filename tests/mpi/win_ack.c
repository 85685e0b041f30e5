/*
 * win_ack.c -- per-target failure semantics and acknowledgement on a
 * window (the ULFM RMA proposal, patches/openmpi): RMA among the survivors
 * goes on after a member died, as if nothing happened.
 * run: 4 allocate on
 * run: 4 allocate off
 * run: 4 create on
 *
 * Arguments: backend (allocate: MPI_Win_allocate, osc/sm on one node;
 * create: MPI_Win_create, osc/rdma) and
 * the switch osc_base_ft_rma (on: set through MPI_T; off: as released).
 * Every rank opens a lock_all epoch (MPI_MODE_NOCHECK, as the store does);
 * the last rank is the victim and dies by SIGKILL after a barrier.  Pass
 * rules, every wait bounded by DEADLINE seconds, switch on:
 *   1. MPIX_Win_get_failed names the victim, once known;
 *   2. a survivor's put to the next survivor and its get back from it,
 *      each flushed to that target, return MPI_SUCCESS, and every value
 *      written is read back (the window goes on for live targets);
 *   3. a put to the victim and its flush return MPIX_ERR_PROC_FAILED;
 *   4. MPI_Win_flush_all returns MPIX_ERR_PROC_FAILED while the failure is
 *      not acknowledged: after MPIX_Win_ack_failed(win, 0) (acknowledges
 *      0) too; after MPIX_Win_ack_failed(win, 5) (acknowledges the one
 *      failure) it returns MPI_SUCCESS, while a flush to the victim still
 *      fails and MPIX_Win_get_failed still names it;
 *   5. MPIX_Win_ack_failed with a negative count is MPI_ERR_ARG;
 *   6. MPI_Win_unlock_all returns MPI_SUCCESS; a new MPI_Win_lock_all
 *      (with locks: no MPI_MODE_NOCHECK) returns MPI_SUCCESS, the failure
 *      being acknowledged, and leaves the victim out: a put to the next
 *      survivor and its flush succeed, a put to the victim returns
 *      MPIX_ERR_PROC_FAILED (osc/rdma locks each target at its first
 *      operation, which returns that lock's error; on osc/sm the put or
 *      its flush does, as in 3.), and so does a flush to it; its
 *      MPI_Win_unlock_all returns MPI_SUCCESS; after a barrier of the
 *      survivors (MPI_Win_free, which skips its own once a member failed,
 *      is no longer collective: a survivor that freed first would have its
 *      window's memory written by one still in rule 6, which crashed it on
 *      osc/rdma across hosts) MPI_Win_free returns MPI_SUCCESS.
 * Switch off, what Open MPI as released does, recorded: on osc/sm rule 2
 * holds, and the flushes to the victim and flush_all keep returning
 * MPI_SUCCESS (docs/facts.md: RMA never reports a failed target); the
 * acknowledgement still counts.  On osc/rdma ("create off", not run by
 * make test) every survivor hangs: the flush after a put to the victim
 * waits for it for ever, and before the per-target completions of the
 * patches (0004) the switch on failed rules 4 and 6 there, every wait
 * giving up once anyone had failed.  Each survivor prints what it saw.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdint.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

#ifndef OMPI_HAVE_MPIX_WIN_ACK_FAILED
int main(void) {
    fprintf(stderr, "win_ack: this MPI lacks MPIX_Win_ack_failed (build it with scripts/deps.sh)\n");
    return 1;
}
#else

enum { DEADLINE = 10, SLOTS = 64 };

/* The window's failed members as window ranks; their count. */
static int failed_ranks(MPI_Win win, int *ranks, int max) {
    MPI_Group g, wg;
    int n = -1;
    if (MPIX_Win_get_failed(win, &g) != MPI_SUCCESS) return -1;
    MPI_Group_size(g, &n);
    MPI_Win_get_group(win, &wg);
    int idx[16];
    for (int i = 0; i < n && i < 16; i++) idx[i] = i;
    if (n > 0) MPI_Group_translate_ranks(g, n < max ? n : max, idx, wg, ranks);
    MPI_Group_free(&wg);
    MPI_Group_free(&g);
    return n;
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 3) { fprintf(stderr, "usage: win_ack allocate|create on|off\n"); return 2; }
    int on = strcmp(argv[2], "on") == 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int victim = size - 1, alive = size - 1;
    if (on && kvt_ft_wanted()) KVT_CHECK_RC(kvr_proposed_enable(), KV_OK);

    MPI_Win win;
    uint64_t *mem = NULL;
    int create = strcmp(argv[1], "create") == 0;
    kvt_win_make(create, SLOTS * sizeof *mem, sizeof *mem, MPI_INFO_NULL, &mem, &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim) raise(SIGKILL);

    /* 1. the victim, once known */
    int failed[4] = {-1}, n = 0;
    double t0 = MPI_Wtime();
    while ((n = failed_ranks(win, failed, 4)) < 1 && MPI_Wtime() - t0 < DEADLINE) {}
    KVT_CHECK(n == 1 && failed[0] == victim);
    double known_ms = (MPI_Wtime() - t0) * 1e3;

    /* 2. live targets: put into the next survivor, get it back */
    int next = (rank + 1) % alive;
    uint64_t mine = 1000 + (uint64_t)rank, got = 0;
    KVT_CHECK_RC(MPI_Put(&mine, 1, MPI_UINT64_T, next, rank, 1, MPI_UINT64_T, win), MPI_SUCCESS);
    KVT_CHECK_RC(MPI_Win_flush(next, win), MPI_SUCCESS);
    KVT_CHECK_RC(MPI_Get(&got, 1, MPI_UINT64_T, next, rank, 1, MPI_UINT64_T, win), MPI_SUCCESS);
    KVT_CHECK_RC(MPI_Win_flush(next, win), MPI_SUCCESS);
    KVT_CHECK(got == mine);

    /* 3. the failed target */
    int put_rc = MPI_Put(&mine, 1, MPI_UINT64_T, victim, rank, 1, MPI_UINT64_T, win);
    int flush_rc = put_rc == MPI_SUCCESS ? MPI_Win_flush(victim, win) : put_rc;

    /* 4. the _all form, before and after the acknowledgement */
    int all_before = MPI_Win_flush_all(win), acked0 = -1, acked = -1;
    KVT_CHECK_RC(MPIX_Win_ack_failed(win, 0, &acked0), MPI_SUCCESS);
    int all_ack0 = MPI_Win_flush_all(win);
    KVT_CHECK_RC(MPIX_Win_ack_failed(win, 5, &acked), MPI_SUCCESS);
    int all_after = MPI_Win_flush_all(win), victim_after = MPI_Win_flush(victim, win);
    KVT_CHECK(acked0 == 0 && acked == 1);
    KVT_CHECK(failed_ranks(win, failed, 4) == 1 && failed[0] == victim);
    KVT_CHECK_RC(MPI_Win_flush(next, win), MPI_SUCCESS);
    if (on) {
        KVT_CHECK(kvt_err_class(flush_rc) == MPIX_ERR_PROC_FAILED);
        KVT_CHECK(kvt_err_class(all_before) == MPIX_ERR_PROC_FAILED);
        KVT_CHECK(kvt_err_class(all_ack0) == MPIX_ERR_PROC_FAILED);
        KVT_CHECK_RC(all_after, MPI_SUCCESS);
        KVT_CHECK(kvt_err_class(victim_after) == MPIX_ERR_PROC_FAILED);
    } else {  /* as released: RMA never reports the failure */
        KVT_CHECK_RC(flush_rc, MPI_SUCCESS);
        KVT_CHECK_RC(all_before, MPI_SUCCESS);
        KVT_CHECK_RC(all_after, MPI_SUCCESS);
        KVT_CHECK_RC(victim_after, MPI_SUCCESS);
    }

    /* 5. bad input */
    int dummy;
    KVT_CHECK(kvt_err_class(MPIX_Win_ack_failed(win, -1, &dummy)) == MPI_ERR_ARG);

    /* 2, seen from the target: the value the previous survivor put here */
    MPI_Comm survivors;
    MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors);
    MPI_Barrier(survivors);
    int prev = (rank + alive - 1) % alive;
    KVT_CHECK(mem[prev] == 1000 + (uint64_t)prev);
    printf("[rank %d] switch %s: victim known after %.1f ms; to it: flush %d; flush_all %d, after ack(0) %d, "
           "after ack(5)=%d %d; live target ok\n", rank, on ? "on" : "off", known_ms, kvt_err_class(flush_rc),
           kvt_err_class(all_before), kvt_err_class(all_ack0), acked, kvt_err_class(all_after));

    /* 6. */
    KVT_CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);
    if (on) {
        KVT_CHECK_RC(MPI_Win_lock_all(0, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Put(&mine, 1, MPI_UINT64_T, next, rank, 1, MPI_UINT64_T, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_flush(next, win), MPI_SUCCESS);
        int rc = MPI_Put(&mine, 1, MPI_UINT64_T, victim, rank, 1, MPI_UINT64_T, win);
        if (!create && rc == MPI_SUCCESS) rc = MPI_Win_flush(victim, win);  /* as in 3. */
        KVT_CHECK(kvt_err_class(rc) == MPIX_ERR_PROC_FAILED);
        KVT_CHECK(kvt_err_class(MPI_Win_flush(victim, win)) == MPIX_ERR_PROC_FAILED);
        KVT_CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);
    }
    if (on) {
        MPI_Barrier(survivors);
        KVT_CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    }
    /* switch off: the window is left to MPI_Finalize (a stock free may wait on the dead) */
    int bad = kvt_finish(survivors, "win_ack");
    MPI_Finalize();
    if (create) free(mem);
    return bad ? 1 : 0;
}
#endif
