/*
 * window.c -- the slot table's window: making it, abandoning an old one,
 * mapping the other members' tables, and the map from member ids to ranks.
 *
 * Open (store.c), recovery (recover.c) and the variants' rebuilds
 * (variant_*.c) all come here for windows, and this file calls none of
 * them: calls go one way, store.c -> recover.c -> variant_*.c -> window.c.
 * A window is MPI_Win_allocate's (osc/sm on one node) or MPI_Win_create's
 * over malloc'd memory (osc/rdma), by the configured backend; an old
 * window that spans a dead rank is never freed here (freeing is
 * collective), only kept out of use.
 */
#include "kv_internal.h"

#include <mpi-ext.h>

#include <stdlib.h>

bool kvo_window_shm(const kv_store *s) {
    return s->cfg.backend == KV_BACKEND_ALLOCATE && s->one_node;
}

bool kvo_window_outlives(const kv_store *s) {
#ifdef OMPI_HAVE_OSC_RDMA_FT_PER_TARGET
    if (s->cfg.backend == KV_BACKEND_CREATE) return true;
#endif
    return kvo_window_shm(s);
}

void kvo_window_info(const kv_store *s, MPI_Info info) {
    MPI_Info_set(info, "accumulate_ordering", "none");
    /* The store's only atomics are 8-byte integer compare-and-swap and
     * replace on slot lock words (ops.c).  Saying so lets osc/rdma across
     * nodes do each as one network atomic at the target; otherwise it
     * takes the target's accumulate lock around each (two more round
     * trips, and one lock per target that every writer and waiter queues
     * on): with 6 ranks on 3 hosts contended slot locks then timed out
     * (docs/cluster.md).  On one node the lock is in shared memory, and
     * the variants on fault-tolerant RMA are the ones that say it there:
     * the patched osc/sm then does each atomic with the processor's,
     * without the lock (patches/openmpi; stock osc/sm ignores the key),
     * and osc/rdma (MPI_Win_create) as one atomic at the target, outside
     * the accumulate lock (which the patched osc/rdma hands on when its
     * holder dies, but which costs two more round trips).  The others use
     * the processor's atomics on the mapped tables (kvo_map_shm), or
     * osc/rdma's lock on one node, as released. */
    if (!s->one_node || s->vt->ft_rma)
        MPI_Info_set(info, "acc_single_intrinsic", "true");
}

/* Allocate a zeroed table of `bytes` and a window over it on comm. */
int kvo_alloc_table(kv_store *s, MPI_Comm comm, size_t bytes, unsigned char **base, MPI_Win *win,
                    bool *malloced, bool zero) {
    MPI_Info info;
    MPI_Info_create(&info);
    kvo_window_info(s, info);
    MPI_Info_set(info, "same_disp_unit", "true");
    int rc;
    if (s->cfg.backend == KV_BACKEND_ALLOCATE) {
        void *mem = NULL;
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        /* On one node MPI_Win_allocate gives an osc/sm window; the same
         * window from MPI_Win_allocate_shared also tells every rank where
         * the others' tables are mapped (Open MPI 5.0.7's
         * MPI_Win_shared_query refuses MPI_Win_allocate's windows), which
         * the workaround variants need for their slot locks (kvo_map_shm). */
        if (s->one_node && !s->vt->ft_rma)
            rc = MPI_Win_allocate_shared((MPI_Aint)bytes, 1, info, comm, &mem, win);
        else
            rc = MPI_Win_allocate((MPI_Aint)bytes, 1, info, comm, &mem, win);
        *base = mem;
        *malloced = false;
    } else {
        void *mem = NULL;
        if (posix_memalign(&mem, 64, bytes ? bytes : 64)) {
            MPI_Info_free(&info);
            return KV_ERR_NOMEM;
        }
        rc = MPI_Win_create(mem, (MPI_Aint)bytes, 1, info, comm, win);
        if (rc != MPI_SUCCESS) {
            free(mem);
            mem = NULL;
        }
        *base = mem;
        *malloced = true;
    }
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) return kvw_status(s, rc);
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    if (zero) memset(*base, 0, bytes);
    return KV_OK;
}

/* Keep an old window (and its malloc'd memory) out of use without freeing
 * it: freeing is collective over a group with dead members. */
void kvo_abandon(kv_store *s, MPI_Win win, void *mem) {
    if (s->nabandoned == s->cabandoned) {
        int c = s->cabandoned ? 2 * s->cabandoned : 4;
        kvo_abandoned *a = realloc(s->abandoned, (size_t)c * sizeof *a);
        if (!a) return;  /* leak it untracked rather than fail recovery */
        s->abandoned = a;
        s->cabandoned = c;
    }
    s->abandoned[s->nabandoned++] = (kvo_abandoned){win, mem};
    s->st.windows_abandoned++;
}

/* Map every member's table when the window is shared memory and the
 * variant is a workaround (the slot locks of ops.c then use the
 * processor's atomics).  Not for variants proposed and online, whose
 * patched osc/sm reports failures through MPI's atomics, nor for windows that are not
 * MPI_Win_allocate_shared's (recreate-inplace rebuilds with
 * MPI_Win_create; across nodes the tables are not mapped here). */
void kvo_map_shm(kv_store *s) {
    free(s->shm);
    s->shm = NULL;
    if (s->win == MPI_WIN_NULL || s->vt->ft_rma) return;
    int *flavor = NULL, found = 0;
    if (MPI_Win_get_attr(s->win, MPI_WIN_CREATE_FLAVOR, &flavor, &found) != MPI_SUCCESS || !found ||
        *flavor != MPI_WIN_FLAVOR_SHARED)
        return;
    unsigned char **shm = calloc((size_t)s->size, sizeof *shm);
    for (int r = 0; shm && r < s->size; r++) {
        MPI_Aint size = 0;
        int unit = 0;
        if (MPI_Win_shared_query(s->win, r, &size, &unit, &shm[r]) != MPI_SUCCESS || !shm[r] ||
            (size_t)size < s->table_bytes) {
            free(shm);
            return;
        }
    }
    s->shm = shm;
}

/* Learn every member's id, current rank and node (collective over
 * s->comm).  A spare that took over an id brings its own node along. */
int kvo_map_ranks(kv_store *s) {
    int mine[2] = {s->my_id, s->my_node}, *got = malloc((size_t)s->size * sizeof mine);
    if (!got) return KV_ERR_NOMEM;
    int rc = MPI_Allgather(mine, 2, MPI_INT, got, 2, MPI_INT, s->comm);
    if (rc == MPI_SUCCESS) kvo_set_ranks(s, got);
    free(got);
    return kvw_status(s, rc);
}

void kvo_set_ranks(kv_store *s, const int *got) {
    for (int i = 0; i < s->nids; i++) s->rank_of_id[i] = -1;
    int nodes = 0;
    for (int r = 0; r < s->size; r++) {
        s->live_ids[r] = got[2 * r];
        s->rank_of_id[got[2 * r]] = r;
        s->node_of_id[got[2 * r]] = got[2 * r + 1];
        bool first = true;  /* of its node among ranks 0..r */
        for (int q = 0; q < r; q++) first &= got[2 * q + 1] != got[2 * r + 1];
        nodes += first;
    }
    s->place_by_node = nodes > 1 && nodes < s->size;
}

void kvo_map_targets(kv_store *s) {
    memcpy(s->target_of_id, s->rank_of_id, (size_t)s->nids * sizeof(int));
    s->target_self = s->my_id >= 0 ? s->target_of_id[s->my_id] : -1;
}
