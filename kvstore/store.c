/*
 * store.c -- opening and closing a store, its windows and its member map.
 *
 * kv_open duplicates the caller's communicator (so the store's traffic and
 * revocations never touch the caller's), splits off spare ranks for
 * variant spare, numbers the data-holding members by a stable id (their
 * rank at open), exposes each member's slot table in one RMA window and
 * opens a single MPI_Win_lock_all epoch that lasts until the window is
 * replaced or closed.  Open validates the configuration on every rank and
 * agrees on the outcome, so every rank gets the same status.  The window
 * itself is made by window.c, which recovery and the variants use too.
 */
#include "kv_internal.h"

#include <mpi-ext.h>  /* OMPI_HAVE_MPIX_WIN_FT: the patched Open MPI */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static const kvr_variant_ops *variant_ops(kv_variant v) {
    switch (v) {
    case KV_VARIANT_NONE: return &kvr_none;
    case KV_VARIANT_RECREATE_COPY: return &kvr_recreate_copy;
    case KV_VARIANT_RECREATE_INPLACE: return &kvr_recreate_inplace;
    case KV_VARIANT_RECREATE_FREE: return &kvr_recreate_free;
    case KV_VARIANT_SPARE: return &kvr_spare;
    case KV_VARIANT_CHECKPOINT: return &kvr_checkpoint;
#ifdef OMPI_HAVE_MPIX_WIN_FT
    case KV_VARIANT_PROPOSED: return &kvr_proposed;
#endif
#ifdef OMPI_HAVE_MPIX_WIN_ACK_FAILED
    case KV_VARIANT_ONLINE: return &kvr_online;
#endif
#ifdef OMPI_HAVE_MPIX_WIN_FT
    case KV_VARIANT_RESPAWN: return &kvr_respawn;
#endif
    default: return NULL;  /* proposed or online without the patched Open MPI */
    }
}

/* newcomer: a process that variant respawn started (its communicator holds
 * the newcomers only; the store's size is the survivors'). */
static int open_check(MPI_Comm comm, const kv_config *cfg, bool newcomer) {
    int size;
    MPI_Comm_size(comm, &size);
    int rc = kv_config_check(cfg, NULL, 0);
    if (rc == KV_OK && !variant_ops(cfg->variant)) rc = KV_ERR_UNSUPPORTED;
    if (rc == KV_OK && variant_ops(cfg->variant)->ft_rma) rc = kvr_proposed_enable();
    if (rc == KV_OK && !newcomer && cfg->spares >= size) rc = KV_ERR_TOO_FEW_RANKS;
    if (rc == KV_OK && !newcomer && cfg->replicas > size - cfg->spares) rc = KV_ERR_TOO_FEW_RANKS;
    int all = rc;  /* every rank returns the same (most negative) status */
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

/* The member maps, for n ids and ranks. */
static int open_maps(kv_store *s, int n) {
    s->live_ids = calloc((size_t)n, sizeof(int));
    s->rank_of_id = calloc((size_t)n, sizeof(int));
    s->target_of_id = calloc((size_t)n, sizeof(int));
    s->node_of_id = calloc((size_t)n, sizeof(int));
    s->all_ids = calloc((size_t)n, sizeof(int));
    return s->live_ids && s->rank_of_id && s->target_of_id && s->node_of_id && s->all_ids ? KV_OK : KV_ERR_NOMEM;
}

static int open_members(kv_store *s) {
    int member = s->all_rank < s->all_size - s->cfg.spares;
    s->spare = !member;
    s->nspares = s->cfg.spares;
    s->nids = s->all_size - s->cfg.spares;
    if (s->cfg.spares == 0) {
        s->comm = s->all;
    } else {
        int rc = MPI_Comm_split(s->all, member ? 0 : MPI_UNDEFINED, s->all_rank, &s->comm);
        if (rc != MPI_SUCCESS) return KV_ERR_MPI;
    }
    if (open_maps(s, s->all_size)) return KV_ERR_NOMEM;
    for (int i = 0; i < s->all_size; i++) s->all_ids[i] = i < s->nids ? i : -1;
    if (!member) {
        s->my_id = -1;
        s->rank = -1;
        s->size = s->nids;
        return KV_OK;
    }
    MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    s->my_id = s->rank;
    return kvo_map_ranks(s);
}

static int open_table(kv_store *s) {
    s->slot_size = kvs_slot_size(s->cfg.max_key, s->cfg.max_value);
    s->nslots = s->cfg.slots_per_rank;
    /* nslots table slots, then one journal slot per member id (ops.c). */
    s->table_bytes = s->slot_size * (s->nslots + (size_t)s->nids);
    /* First read of a slot: header, key and up to 128 value bytes. */
    size_t spec = s->cfg.max_value < 128 ? s->cfg.max_value : 128;
    s->read_size = KVS_HDR_SIZE + s->cfg.max_key + spec;
    if (kvo_renew_results(s) != KV_OK) return KV_ERR_NOMEM;
    if (s->spare) return KV_OK;
    int rc = kvo_alloc_table(s, s->comm, s->table_bytes, &s->base, &s->win, &s->base_malloced, true);
    if (rc) return rc;
    kvo_map_shm(s);
    kvo_map_targets(s);
    return MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win) == MPI_SUCCESS ? KV_OK : KV_ERR_MPI;
}

static void free_store(kv_store *s) {
    free(s->live_ids);
    free(s->rank_of_id);
    free(s->target_of_id);
    free(s->node_of_id);
    free(s->all_ids);
    free(s->buf);
    free(s->buf2);
    free(s->words);
    free(s->abandoned);
    free(s->affected);
    free(s->rec);
    free(s->shm);
    free(s->cmdline);
    free(s->respawn_argv);
    free(s->respawn_exe);
    free(s);
}

/* A survivor's TCP transport may write to a dead peer's socket; SIGPIPE's
 * default action would then kill it (seen: a second rank gone, and with it
 * the last copy of its keys).  A handler the program installed is kept. */
static void keep_sigpipe_from_killing(void) {
    struct sigaction old;
    if (sigaction(SIGPIPE, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
        old.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);
}

/* A process variant respawn started: it merges with the survivors, takes
 * their state and configuration (recovery gives them to it), opens as far
 * as an idle spare and runs the rest of their recovery with them, which
 * gives it a failed member's id and that member's copies. */
static int open_newcomer(kv_store *s, MPI_Comm parent) {
    int64_t t0 = kv_clock_ns();
    kvr_ctx c = {0};
    int rc = kvr_respawn_join(s, parent, &c);
    if (rc == KV_OK) rc = open_maps(s, s->nids > s->all_size ? s->nids : s->all_size);
    if (rc == KV_OK) rc = open_table(s);
    if (rc != KV_OK) {
        kvr_ctx_free(&c);
        return rc;
    }
    rc = kvr_recover_joined(s, &c, t0);
    return rc == KV_WARN_DEGRADED ? KV_OK : rc;
}

int kv_open(MPI_Comm comm, const kv_config *cfg_in, kv_store **out) {
    if (!out || comm == MPI_COMM_NULL) return KV_ERR_ARG;
    *out = NULL;
    kv_config cfg;
    if (cfg_in) cfg = *cfg_in;
    else kv_config_default(&cfg);
    MPI_Comm parent = MPI_COMM_NULL;
    const char *re = getenv("KV_RESPAWNED");
    if (cfg.variant == KV_VARIANT_RESPAWN && re && strcmp(re, "1") == 0) MPI_Comm_get_parent(&parent);
    int rc = open_check(comm, &cfg, parent != MPI_COMM_NULL);
    if (rc) return rc;
    kv_store *s = calloc(1, sizeof *s);
    if (!s) return KV_ERR_NOMEM;
    s->cfg = cfg;
    s->vt = variant_ops(cfg.variant);
    s->watch = MPI_COMM_NULL;
    s->watch_req = MPI_REQUEST_NULL;
    s->win = MPI_WIN_NULL;
    s->all = MPI_COMM_NULL;
    s->comm = MPI_COMM_NULL;
    if (s->vt->detects) keep_sigpipe_from_killing();
    const char *tr = getenv("KV_TRACE");
    s->trace = tr && *tr && strcmp(tr, "0") != 0;
    if (s->vt->grow && (rc = kvr_respawn_command(s)) != KV_OK) {
        free_store(s);
        return rc;
    }
    if (parent != MPI_COMM_NULL) {
        rc = open_newcomer(s, parent);
        if (rc != KV_OK) {
            kvw_stop(s);
            if (s->comm != s->all && s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
            if (s->all != MPI_COMM_NULL) MPI_Comm_free(&s->all);
            free_store(s);
            return rc;
        }
        kvp_sde_init(s);
        *out = s;
        return KV_OK;
    }
    MPI_Comm_dup(comm, &s->all);
    MPI_Comm_set_errhandler(s->all, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s->all, &s->all_rank);
    MPI_Comm_size(s->all, &s->all_size);
    /* Which ranks share a node: placement keeps a pair's copies on
     * distinct nodes; the node is named by its lowest rank here. */
    MPI_Comm node;
    MPI_Comm_split_type(s->all, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Allreduce(&s->all_rank, &s->my_node, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    s->one_node = node_size == s->all_size;
    rc = open_members(s);
    if (rc == KV_OK) rc = open_table(s);
    if (rc == KV_OK && s->vt->detects) rc = kvw_start(s);
    int all = rc;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, s->all);
    if (all != KV_OK) {
        /* Nothing is half-open: release what this rank made. */
        kvw_stop(s);
        if (s->win != MPI_WIN_NULL) {
            MPI_Win_unlock_all(s->win);
            MPI_Win_free(&s->win);
        }
        if (s->base_malloced) free(s->base);
        if (s->comm != s->all && s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
        MPI_Comm_free(&s->all);
        free_store(s);
        return all;
    }
    kvp_sde_init(s);
    *out = s;
    return KV_OK;
}

int kv_close(kv_store *s) {
    if (!s) return KV_ERR_ARG;
    int rc = KV_OK;
    /* The members meet first (kv_barrier), so that a failure noticed now is
     * repaired by all of them or by none, and the collective frees below
     * run on a communicator of live ranks only; kv_barrier also finishes
     * the background re-replication (online), so that none waits for
     * another's share after that one closed, and no member still writes
     * to a table another frees.  A repair that one member started alone
     * (it noticed a death the others had not) waited for ever in its
     * shrink while they went on to free and finalize: a soak run of
     * online, the second of two kills landing as the run closed. */
    if (!s->spare && s->vt->detects) rc = kv_barrier(s);
    s->closing = true;
    if (s->nspares > 0 && !s->spare) kvr_release_spares(s);
    kvw_stop(s);
    if (s->win != MPI_WIN_NULL) {
        /* (A window kept through a failure, online's, is freed without the
         * barrier MPI_Win_free has, which the patched Open MPI skips once
         * a member failed: kv_barrier above is the one it needs.) */
        MPI_Win_unlock_all(s->win);
        if (MPI_Win_free(&s->win) != MPI_SUCCESS) rc = KV_ERR_MPI;
    }
    if (s->base_malloced) free(s->base);
    /* Abandoned windows span dead ranks: freeing them could hang, so they
     * are left to MPI_Finalize (counted in stats.windows_abandoned). */
    if (s->comm != s->all && s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
    MPI_Comm_free(&s->all);
    kvp_sde_fini(s);
    free_store(s);
    return rc == KV_WARN_DEGRADED ? KV_OK : rc;
}

MPI_Comm kv_comm(const kv_store *s) { return s ? s->comm : MPI_COMM_NULL; }
int kv_rank(const kv_store *s) { return s ? s->rank : -1; }
int kv_size(const kv_store *s) { return s ? s->size : 0; }
int kv_is_spare(const kv_store *s) { return s && s->spare; }
int kv_is_respawned(const kv_store *s) { return s && s->respawned; }
const kv_config *kv_get_config(const kv_store *s) { return s ? &s->cfg : NULL; }

int kv_get_stats(const kv_store *s, kv_stats *out) {
    if (!s || !out) return KV_ERR_ARG;
    *out = s->st;
    return KV_OK;
}

int kv_recovery_count(const kv_store *s) { return s ? s->nrec : 0; }

int kv_recovery_get(const kv_store *s, int i, kv_recovery_times *out) {
    if (!s || !out || i < 0 || i >= s->nrec) return KV_ERR_ARG;
    *out = s->rec[i];
    return KV_OK;
}

void kv_note_failure_ns(kv_store *s, int64_t wall_ns) {
    if (s) s->failure_ns = wall_ns;
}
