/*
 * win_lock.c -- a lock held by a dead process goes to the next waiter
 * (the ULFM RMA proposal, patches/openmpi: osc/sm's fault-tolerant locks),
 * so the window stays usable without a revoke.
 * run: 4 allocate exclusive
 * run: 4 allocate shared
 * run: 4 allocate claimed-writer
 * run: 4 allocate claimed-reader
 * run: 4 allocate accumulate
 * run: 4 create exclusive
 * run: 4 create shared
 * run: 4 create claimed-writer
 * run: 4 create claimed-reader
 * run: 4 create accumulate
 *
 * Arguments: backend (allocate: MPI_Win_allocate, osc/sm on one node;
 * create: MPI_Win_create, osc/rdma, whose lock words live in each target's
 * state and are reached by atomics, through the network across hosts) and
 * where the victim (the last rank) dies by SIGKILL, on rank 0's locks:
 *   exclusive, shared  holding that lock;
 *   claimed-writer  inside its MPI_Win_lock(EXCLUSIVE), having claimed the
 *           lock while rank 0 held a shared one (the library's test hook
 *           osc_base_ft_crashpoint 2, set through MPI_T);
 *   claimed-reader  inside its MPI_Win_lock(SHARED), having set its reader
 *           bit while rank 0 held the exclusive lock (crash point 1);
 *   accumulate  inside an MPI_Accumulate of two elements (no
 *           acc_single_intrinsic), holding the target's accumulate lock
 *           (crash point 3).
 * Fault-tolerant RMA is switched on through MPI_T before the window is
 * made.  Pass rules (a survivor stuck behind the dead is a hang, which the
 * launcher's limit turns into a failure):
 *   1. every survivor's N exclusive locks on rank 0 return MPI_SUCCESS,
 *      each around a read, an increment and a write of a counter at rank
 *      0 (get, flush, put, unlock), the survivors contending (in
 *      accumulate: N accumulates of 1 to two counters, each flushed,
 *      inside a shared lock);
 *   2. the counter ends at N times the survivors: no increment lost, so no
 *      two survivors held the lock at once (nor one with the dead);
 *   3. a shared lock on rank 0 afterwards, by every survivor at once,
 *      returns MPI_SUCCESS and reads the same counter;
 *   4. the window is freed with MPI_SUCCESS.
 * With the switch off (Open MPI as released) the survivors would wait for
 * the dead holder forever: not run by make test (KVT_FT_RMA=off runs it:
 * the conformance record, experiments/bench/bench_conformance.sh).  Each
 * survivor prints how long its first lock waited.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdint.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

#ifndef OMPI_HAVE_MPIX_WIN_ACK_FAILED
int main(void) {
    fprintf(stderr, "win_lock: this MPI lacks the window failure state (build it with scripts/deps.sh)\n");
    return 1;
}
#else

enum { N = 200 };

/* Set this process's osc_base_ft_crashpoint (the library's test hook). */
static void crash_at(int point) {
    int provided, idx, count;
    MPI_T_cvar_handle h;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_cvar_get_index("osc_base_ft_crashpoint", &idx) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS || MPI_T_cvar_write(h, &point) != MPI_SUCCESS) {
        fprintf(stderr, "win_lock: this MPI has no osc_base_ft_crashpoint\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_cvar_handle_free(&h);
}

/* Wait (10 s at most) until the window knows of one failure. */
static int victim_known(MPI_Win win) {
    int n = 0;
    MPI_Group g;
    for (double t = MPI_Wtime(); n < 1 && MPI_Wtime() - t < 10; MPI_Group_free(&g)) {
        MPIX_Win_get_failed(win, &g);
        MPI_Group_size(g, &n);
    }
    return n == 1;
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 3 || (strcmp(argv[1], "allocate") && strcmp(argv[1], "create"))) {
        fprintf(stderr, "usage: win_lock allocate|create exclusive|shared|claimed-writer|claimed-reader|accumulate\n");
        return 2;
    }
    const char *sc = argv[2];
    int exclusive = strcmp(sc, "exclusive") == 0, acc = strcmp(sc, "accumulate") == 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int victim = size - 1, alive = size - 1;
    if (kvt_ft_wanted()) KVT_CHECK_RC(kvr_proposed_enable(), KV_OK);

    MPI_Win win;
    uint64_t *mem = NULL;
    kvt_win_make(!strcmp(argv[1], "create"), 64, sizeof *mem, MPI_INFO_NULL, &mem, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(sc, "exclusive") || !strcmp(sc, "shared")) {
        if (rank == victim) MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == victim) raise(SIGKILL);
    } else if (!strcmp(sc, "claimed-writer") || !strcmp(sc, "claimed-reader")) {
        int writer = sc[8] == 'w';
        if (rank == 0) MPI_Win_lock(writer ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == victim) {
            crash_at(writer ? 2 : 1);
            MPI_Win_lock(writer ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, win);
            fprintf(stderr, "win_lock: the victim came back from MPI_Win_lock\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* nobody else claims before the victim; rank 0 releases once the
           victim is known dead, its claim or bit in place */
        KVT_CHECK(victim_known(win));
        if (rank == 0) KVT_CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    } else if (acc) {
        if (rank == victim) {
            uint64_t one[2] = {1, 1};
            crash_at(3);
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Accumulate(one, 2, MPI_UINT64_T, 0, 1, 2, MPI_UINT64_T, MPI_SUM, win);
            fprintf(stderr, "win_lock: the victim came back from MPI_Accumulate\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        KVT_CHECK(victim_known(win));  /* so the survivors find its lock held */
    } else {
        fprintf(stderr, "win_lock: unknown scenario %s\n", sc);
        return 2;
    }

    /* 1. and 2. */
    double t0 = MPI_Wtime(), first_ms = -1;
    for (int i = 0; i < N && acc; i++) {  /* accumulate: the accumulate lock */
        uint64_t one[2] = {1, 1};
        int rc = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        if (rc == MPI_SUCCESS) rc = MPI_Accumulate(one, 2, MPI_UINT64_T, 0, 1, 2, MPI_UINT64_T, MPI_SUM, win);
        if (first_ms < 0) first_ms = (MPI_Wtime() - t0) * 1e3;
        KVT_CHECK_RC(rc, MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
        if (rc != MPI_SUCCESS) break;
    }
    for (int i = 0; i < N && !acc; i++) {
        uint64_t v = 0;
        int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        if (first_ms < 0) first_ms = (MPI_Wtime() - t0) * 1e3;
        KVT_CHECK_RC(rc, MPI_SUCCESS);
        if (rc != MPI_SUCCESS) break;
        KVT_CHECK_RC(MPI_Get(&v, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_flush(0, win), MPI_SUCCESS);
        v++;
        KVT_CHECK_RC(MPI_Put(&v, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, win), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    }
    MPI_Comm survivors;
    MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors);
    MPI_Barrier(survivors);

    /* 3. */
    uint64_t c[3] = {0};
    KVT_CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
    KVT_CHECK_RC(MPI_Get(c, 3, MPI_UINT64_T, 0, 0, 3, MPI_UINT64_T, win), MPI_SUCCESS);
    KVT_CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    uint64_t total = acc ? c[1] : c[0];
    KVT_CHECK(total == (uint64_t)N * (uint64_t)alive);
    KVT_CHECK(!acc || c[2] == c[1]);
    printf("[rank %d] %s: first lock after %.1f ms; counter %llu of %d\n", rank, sc, first_ms,
           (unsigned long long)total, N * alive);

    /* 4. */
    MPI_Barrier(survivors);
    KVT_CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    if (!strcmp(argv[1], "create")) free(mem);
    int bad = kvt_finish(survivors, "win_lock");
    MPI_Finalize();
    return bad ? 1 : 0;
}
#endif
