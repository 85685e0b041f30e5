/*
 * win_shrink.c -- a window whose collectives outlive its dead
 * (MPIX_Win_shrink_comm, patches/openmpi): after a failure the survivors
 * agree on who is left, and fence, MPI_Win_set_info and MPI_Win_free
 * run among them again, over the same memory, ranks and displacements.
 * run: 4 allocate on
 * run: 4 allocate-fence on
 * run: 4 create on
 * run: 4 allocate off
 *
 * Arguments: backend (allocate: MPI_Win_allocate, osc/sm on one node, its
 * fence a barrier; allocate-fence: the same with the info key
 * blocking_fence, osc/sm's fence then a barrier in the shared segment;
 * create: MPI_Win_create, osc/rdma) and the switch osc_base_ft_rma (on:
 * set through MPI_T; off: as released).  Fence epochs throughout; the last
 * rank dies by SIGKILL after a fence, then the one before it.  Pass rules,
 * every wait bounded by DEADLINE seconds, switch on:
 *   0. before any failure, a fence epoch moves a put to the next rank;
 *   1. once a survivor knows of the death, MPI_Win_fence returns an error
 *      (its collective lost a member) and does not wait;
 *   2. MPIX_Win_shrink_comm returns MPI_SUCCESS at every survivor;
 *   3. then fence epochs work among the survivors: a put to the next
 *      survivor is read back at the target after the closing fence, which
 *      returns MPI_SUCCESS; a put to the dead returns MPI_SUCCESS or
 *      MPIX_ERR_PROC_FAILED, never waits (on osc/sm its memory is still
 *      mapped);
 *   4. nothing was allocated or copied: MPI_WIN_BASE is the memory of
 *      before, and a value each rank stored in it before the failure is
 *      read by its neighbour (MPI_Get in a fence epoch) at the same
 *      displacement;
 *   5. MPI_Win_set_info returns MPI_SUCCESS (it is collective);
 *   6. a second death (rank size-2) takes 1-3 again, with a second shrink;
 *   7. MPI_Win_free is collective again: rank 0 enters it 300 ms after the
 *      others, whose free returns MPI_SUCCESS no sooner than 200 ms;
 *   8. MPIX_Win_shrink_comm(MPI_WIN_NULL) is MPI_ERR_WIN.
 * Switch off, what Open MPI as released does, recorded: rule 1 holds (ULFM
 * disables a communicator's collectives at a failure, and the fence is a
 * barrier), and MPIX_Win_shrink_comm is MPI_ERR_UNSUPPORTED_OPERATION: the
 * window's collectives stay lost, so the window can only be freed.  Each
 * survivor prints what it saw.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdint.h>
#include <unistd.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

#ifndef OMPI_HAVE_MPIX_WIN_SHRINK_COMM
int main(void) {
    fprintf(stderr, "win_shrink: this MPI lacks MPIX_Win_shrink_comm (build it with scripts/deps.sh)\n");
    return 1;
}
#else

enum { DEADLINE = 10, SLOTS = 64, MARK = SLOTS - 1 };

/* Wait (bounded) until the window knows of n failures; 1 if it does. */
static int await_failures(MPI_Win win, int n) {
    double t0 = MPI_Wtime();
    while (kvt_win_nfailed(win) < n && MPI_Wtime() - t0 < DEADLINE) {}
    return kvt_win_nfailed(win) == n;
}

/* One fence epoch among ranks 0..alive-1: put base+rank into the next
 * live rank's slot `rank`, and, when dead >= 0, a put to the dead (rule 3).
 * Returns 1 when the value the previous rank put here arrived. */
static int ring_epoch(MPI_Win win, const uint64_t *mem, int rank, int alive, int dead, uint64_t base) {
    uint64_t mine = base + (uint64_t)rank;
    int next = (rank + 1) % alive, prev = (rank + alive - 1) % alive;
    KVT_CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
    KVT_CHECK_RC(MPI_Put(&mine, 1, MPI_UINT64_T, next, rank, 1, MPI_UINT64_T, win), MPI_SUCCESS);
    if (dead >= 0) {
        int rc = MPI_Put(&mine, 1, MPI_UINT64_T, dead, rank, 1, MPI_UINT64_T, win);
        KVT_CHECK(rc == MPI_SUCCESS || kvt_err_class(rc) == MPIX_ERR_PROC_FAILED);
    }
    KVT_CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
    return mem[prev] == base + (uint64_t)prev;
}

/* Rules 1 and 2 after the death of `dead`: the fence fails at once, then
 * the shrink.  Prints the fence's error and the times taken. */
static void lose(MPI_Win win, int rank, int dead, int deaths, int on) {
    KVT_CHECK(await_failures(win, deaths));
    double t0 = MPI_Wtime();
    int frc = MPI_Win_fence(0, win);
    double fence_ms = (MPI_Wtime() - t0) * 1e3;
    KVT_CHECK(frc != MPI_SUCCESS);
    t0 = MPI_Wtime();
    int src = MPIX_Win_shrink_comm(win);
    double shrink_ms = (MPI_Wtime() - t0) * 1e3;
    if (on) KVT_CHECK_RC(src, MPI_SUCCESS);
    else KVT_CHECK(kvt_err_class(src) == MPI_ERR_UNSUPPORTED_OPERATION);
    printf("[rank %d] switch %s: rank %d died: fence error class %d after %.1f ms; "
           "MPIX_Win_shrink_comm class %d after %.1f ms\n", rank, on ? "on" : "off", dead,
           kvt_err_class(frc), fence_ms, kvt_err_class(src), shrink_ms);
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 3) { fprintf(stderr, "usage: win_shrink allocate|allocate-fence|create on|off\n"); return 2; }
    int on = strcmp(argv[2], "on") == 0;
    int create = strcmp(argv[1], "create") == 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (on && kvt_ft_wanted()) KVT_CHECK_RC(kvr_proposed_enable(), KV_OK);

    MPI_Info info;
    MPI_Info_create(&info);
    if (strcmp(argv[1], "allocate-fence") == 0) MPI_Info_set(info, "blocking_fence", "true");
    MPI_Win win;
    uint64_t *mem = NULL;
    kvt_win_make(create, SLOTS * sizeof *mem, sizeof *mem, info, &mem, &win);
    mem[MARK] = 7000 + (uint64_t)rank;

    /* 0. */
    KVT_CHECK(ring_epoch(win, mem, rank, size, -1, 100));
    if (rank == size - 1) raise(SIGKILL);

    /* 1, 2 */
    lose(win, rank, size - 1, 1, on);
    MPI_Comm survivors;
    if (on) {
        /* 3. */
        int alive = size - 1;
        KVT_CHECK(ring_epoch(win, mem, rank, alive, size - 1, 200));
        /* 4. */
        void *base = NULL;
        int flag = 0;
        MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
        KVT_CHECK(flag && base == mem);
        uint64_t got = 0;
        int next = (rank + 1) % alive;
        KVT_CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Get(&got, 1, MPI_UINT64_T, next, MARK, 1, MPI_UINT64_T, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
        KVT_CHECK(got == 7000 + (uint64_t)next);
        /* 5. */
        MPI_Info_set(info, "no_locks", "false");
        KVT_CHECK_RC(MPI_Win_set_info(win, info), MPI_SUCCESS);

        /* 6. */
        if (rank == size - 2) raise(SIGKILL);
        lose(win, rank, size - 2, 2, on);
        alive = size - 2;
        KVT_CHECK(ring_epoch(win, mem, rank, alive, size - 2, 300));

        /* 7. */
        if (rank == 0) usleep(300000);
        double t0 = MPI_Wtime();
        KVT_CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
        double free_ms = (MPI_Wtime() - t0) * 1e3;
        if (rank != 0) KVT_CHECK(free_ms >= 200);
        printf("[rank %d] fences among %d survivors ok; MPI_Win_free took %.1f ms\n", rank, alive, free_ms);
    }
    /* switch off: the window is left to MPI_Finalize (a stock free may wait on the dead) */

    /* 8. */
    KVT_CHECK(kvt_err_class(MPIX_Win_shrink_comm(MPI_WIN_NULL)) == MPI_ERR_WIN);

    MPI_Info_free(&info);
    MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors);
    int bad = kvt_finish(survivors, "win_shrink");
    MPI_Finalize();
    if (create) free(mem);
    return bad ? 1 : 0;
}
#endif
