/*
 * variant_respawn.c -- the dead replaced by new processes.
 *
 * Recovery shrinks as for every variant; then (grow, between the shrink
 * and the membership) the survivors spawn as many processes as members
 * died, running this program again: its executable and arguments as
 * /proc/self gave them at kv_open, KV_RESPAWNED=1 and as much of the
 * KVRUN_ and KV_ environment as one info value holds (newcomer_env).  The runtime places them where the job has room
 * (the dead's slots, with patch 0011).  The survivors merge them in after
 * themselves and hand them what an idle spare knows (the configuration,
 * the members before the recovery, their nodes, the ids failed so far, the
 * epoch).  From there on the recovery is spare's: in the membership each
 * newcomer takes a failed id (recover.c), every survivor copies its table
 * into the new window while a newcomer starts from an empty one, and
 * re-replication restores every pair's copies on the original placement,
 * the newcomers' included.  A newcomer's kv_open runs that rest of the
 * recovery with the survivors (kvr_respawn_join) and returns once it holds
 * its id's data.
 *
 * The spawn is all or nothing.  The survivors first agree, among
 * themselves, that each of them has the newcomers merged and has handed
 * them the state; then every process of the merged communicator agrees on
 * that answer, so that a newcomer learns it too: on no, the survivors
 * revoke the merged communicator, the newcomers leave (kv_open fails with
 * KV_ERR_MPI and the program ends), and the attempt starts again from the
 * shrink.  A failure after a yes is an ordinary failure of the grown
 * store, newcomers included.  When the runtime cannot start them (no free
 * slot), the store goes on with the survivors, as proposed does.
 * Failures are noticed, and the windows rebuilt, as under proposed: the
 * variant needs the patched Open MPI too.
 */
#include "kv_internal.h"

#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A refused spawn is tried again this often, this far apart. */
enum { KVR_SPAWN_TRIES = 20, KVR_SPAWN_WAIT_MS = 50 };

#ifdef OMPI_HAVE_MPIX_WIN_FT
/* Failures are noticed and the windows rebuilt as under proposed (the
 * fault-tolerant RMA of the patched Open MPI: no watchdog, and the RMA
 * calls over osc/rdma report a dead target instead of hanging); a
 * newcomer's table starts empty (kvr_make_copy). */
const kvr_variant_ops kvr_respawn = {.detects = true, .retire = KVR_FREE_AFTER, .make = kvr_make_copy,
                                     .window_failed = kvr_proposed_window_failed,
                                     .revoke_window = kvr_proposed_revoke_window, .ft_rma = true,
                                     .grow = kvr_respawn_grow, .takes_over = true};
#endif

/* This program as the runtime should start it again: the executable's path
 * (the link, which names the same file on every node of a cluster whose
 * nodes share the path) and the arguments after argv[0]. */
int kvr_respawn_command(kv_store *s) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (n <= 0 || !f) {
        if (f) fclose(f);
        return KV_ERR_UNSUPPORTED;
    }
    exe[n] = '\0';
    size_t cap = 1 << 16, len = fread(s->cmdline = malloc(cap), 1, cap - 1, f);
    fclose(f);
    if (!s->cmdline) return KV_ERR_NOMEM;
    s->cmdline[len] = '\0';
    int argc = 0;
    for (size_t i = 0; i < len; i += strlen(s->cmdline + i) + 1) argc++;
    s->respawn_argv = calloc((size_t)argc + 1, sizeof(char *));
    s->respawn_exe = strdup(exe);
    if (!s->respawn_argv || !s->respawn_exe) return KV_ERR_NOMEM;
    int a = 0;  /* argv[0] is the program: MPI_Comm_spawn's argv starts after it */
    for (size_t i = 0, k = 0; i < len; i += strlen(s->cmdline + i) + 1, k++)
        if (k > 0) s->respawn_argv[a++] = s->cmdline + i;
    return KV_OK;
}

/* PMIX_ENVAR's value: KV_RESPAWNED=1, then the KVRUN_ variables (the
 * launcher's tag and verdict file), then the other KV_ ones, each group
 * shortest first, as many as fit in one info value (MPI_MAX_INFO_VAL
 * bytes: a longer value is an error); the ones left out are traced. */
static int by_length(const void *a, const void *b) {
    size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
    return (x > y) - (x < y);
}

static char *newcomer_env(const kv_store *s) {
    size_t n = 0, cap = MPI_MAX_INFO_VAL;
    for (char **e = environ; *e; e++) n++;
    char **pick = calloc(n + 1, sizeof *pick), *out = malloc(cap);
    if (!pick || !out) {
        free(pick);
        free(out);
        return NULL;
    }
    size_t used = (size_t)snprintf(out, cap, "KV_RESPAWNED=1");
    for (int group = 0; group < 2; group++) {
        size_t k = 0;
        for (char **e = environ; *e; e++)
            if (group == 0 ? strncmp(*e, "KVRUN_", 6) == 0
                           : strncmp(*e, "KV_", 3) == 0 && strncmp(*e, "KV_RESPAWNED=", 13) != 0)
                pick[k++] = *e;
        qsort(pick, k, sizeof *pick, by_length);
        for (size_t i = 0; i < k; i++) {
            if (used + 1 + strlen(pick[i]) < cap) used += (size_t)snprintf(out + used, cap - used, "\n%s", pick[i]);
            else KVR_TRACE(s, "respawn: %.40s... not passed on (no room in one info value)", pick[i]);
        }
    }
    free(pick);
    return out;
}

/* What a newcomer learns: survivor 0's view, then its arrays. */
typedef struct kvr_handover {
    kv_config cfg;
    int nids, epoch, nold, old_by_node;
} kvr_handover;

/* The state, from rank 0 of merged (a survivor) to the newcomers; on a
 * newcomer s and c are filled from it.  Collective over merged. */
static int hand_over(kv_store *s, kvr_ctx *c, MPI_Comm merged, bool newcomer) {
    kvr_handover h = {0};
    if (!newcomer) h = (kvr_handover){s->cfg, s->nids, s->epoch, c->nold, c->old_by_node};
    int rc = MPI_Bcast(&h, (int)sizeof h, MPI_BYTE, 0, merged);
    if (rc != MPI_SUCCESS) return rc;
    if (newcomer) {
        s->cfg = h.cfg;
        s->nids = h.nids;
        s->epoch = h.epoch;
        c->nold = h.nold;
        c->old_by_node = h.old_by_node;
        if (kvr_ctx_alloc(c, s->nids) != KV_OK) return MPI_ERR_NO_MEM;
    }
    rc = MPI_Bcast(c->old_ids, c->nold, MPI_INT, 0, merged);
    if (rc == MPI_SUCCESS) rc = MPI_Bcast(c->old_node, s->nids, MPI_INT, 0, merged);
    if (rc == MPI_SUCCESS) rc = MPI_Bcast(c->failed, s->nids * (int)sizeof(bool), MPI_BYTE, 0, merged);
    return rc;
}

/* Nodes of the merged communicator: a newcomer on a survivor's node takes
 * that node's number; one on a node of its own, a number no survivor has
 * (the total ranks ever plus its lowest merged rank there).  Whether every
 * rank is on one node is asked again.  Collective over merged. */
static int place_nodes(kv_store *s, MPI_Comm merged, bool newcomer) {
    MPI_Comm node;
    int rc = MPI_Comm_split_type(merged, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS) return rc;
    int mrank, msize, nsize, known = newcomer ? INT32_MAX : s->my_node, low = 0, lowest = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    MPI_Comm_size(node, &nsize);
    rc = MPI_Allreduce(&known, &low, 1, MPI_INT, MPI_MIN, node);
    if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&mrank, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (rc != MPI_SUCCESS) return rc;
    if (newcomer) s->my_node = low != INT32_MAX ? low : s->nids + msize + lowest;
    int one = nsize == msize, all_one = 0;
    rc = MPI_Allreduce(&one, &all_one, 1, MPI_INT, MPI_MIN, merged);
    if (rc == MPI_SUCCESS) s->one_node = all_one;
    return rc;
}

/* Every process of merged learns the survivors' verdict (1: the newcomers
 * stay) from an agreement, which is uniform even when a process dies in
 * it (*mpi_rc then says so).  -1: merged was revoked first, the survivors'
 * way of saying no. */
static int verdict_of(MPI_Comm merged, int ok, int *mpi_rc) {
    int flag = ok, rc = MPIX_Comm_agree(merged, &flag), cls = MPI_SUCCESS;
    *mpi_rc = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls == MPIX_ERR_REVOKED ? -1 : flag;
}

/* The survivors' side (kvr_variant_ops.grow), after the shrink: spawn,
 * merge, hand over, agree.  s->all becomes the merged communicator, the
 * newcomers its last ranks with no id yet. */
int kvr_respawn_grow(kv_store *s, kvr_ctx *c) {
    int lost = s->nids - s->all_size;  /* members lost, newcomers without an id counted in */
    if (lost <= 0 || !s->respawn_exe) return KV_OK;
    int64_t t = kv_clock_ns();
    char *env = newcomer_env(s);
    MPI_Info info;
    MPI_Info_create(&info);
    if (env) MPI_Info_set(info, "PMIX_ENVAR", env);
    free(env);
    /* One a node, over the nodes with room: a job's own policy (as many a
     * node) would put two newcomers on a node where one died. */
    MPI_Info_set(info, "map_by", "node");
    MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
    int rc, spawned = 0, arc = MPI_SUCCESS;
    /* Did every survivor spawn?  If the runtime could not place them, none
     * did.  The runtime may not have freed the dead's slots yet (the
     * survivors can hear of a death before the head node does), so a
     * refused spawn is tried again, for up to about a second; then the
     * store goes on without (a failure here is a new attempt). */
    for (int try = 0; try < KVR_SPAWN_TRIES && !spawned && arc == MPI_SUCCESS; try++) {
        if (try > 0) nanosleep(&(struct timespec){0, KVR_SPAWN_WAIT_MS * 1000000L}, NULL);
        rc = MPI_Comm_spawn(s->respawn_exe, s->respawn_argv, lost, info, 0, s->all, &inter, MPI_ERRCODES_IGNORE);
        KVR_TRACE(s, "spawn of %d, try %d: rc %d", lost, try, rc);
        spawned = rc == MPI_SUCCESS;
        arc = MPIX_Comm_agree(s->all, &spawned);
        if (!spawned && inter != MPI_COMM_NULL) {
            MPIX_Comm_revoke(inter);
            MPI_Comm_free(&inter);
        }
    }
    MPI_Info_free(&info);
    if (arc != MPI_SUCCESS || !spawned) {
        if (inter != MPI_COMM_NULL) {
            MPIX_Comm_revoke(inter);
            MPI_Comm_free(&inter);
        }
        c->rt.spawn_us += (double)(kv_clock_ns() - t) / 1e3;
        if (arc != MPI_SUCCESS) return kvw_status(s, arc);
        s->st.respawn_refused++;
        return KV_OK;  /* no room: on with the survivors */
    }
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    rc = MPI_Intercomm_merge(inter, 0, &merged);
    if (rc == MPI_SUCCESS) MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = hand_over(s, c, merged, false);
    if (rc == MPI_SUCCESS) rc = place_nodes(s, merged, false);
    int ok = rc == MPI_SUCCESS;
    arc = MPIX_Comm_agree(s->all, &ok);  /* among the survivors: all have them merged? */
    if (arc != MPI_SUCCESS) ok = 0;
    int mrc = MPI_SUCCESS, verdict = 0;
    if (ok) verdict = verdict_of(merged, 1, &mrc);
    else if (merged != MPI_COMM_NULL) MPIX_Comm_revoke(merged);  /* the newcomers leave */
    if (!ok) MPIX_Comm_revoke(inter);
    MPI_Comm_free(&inter);
    c->rt.spawn_us += (double)(kv_clock_ns() - t) / 1e3;
    KVR_TRACE(s, "merge rc %d, survivors' verdict %d, all %d", rc, ok, verdict);
    if (!ok || verdict != 1) {
        if (merged != MPI_COMM_NULL) MPI_Comm_free(&merged);
        return arc != MPI_SUCCESS ? kvw_status(s, arc) : KV_ERR_INTERRUPTED;
    }
    /* The grown store: a failure from here on is one of its members'. */
    if (s->comm != s->all && s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
    s->comm = MPI_COMM_NULL;
    MPI_Comm_free(&s->all);
    s->all = merged;
    MPI_Comm_rank(s->all, &s->all_rank);
    MPI_Comm_size(s->all, &s->all_size);
    s->st.respawned += lost;
    return mrc == MPI_SUCCESS ? KV_OK : kvw_status(s, mrc);
}

/* A newcomer's side, from kv_open: merge with the survivors, take the
 * state into s and c, learn their verdict.  KV_OK: s->all is the merged
 * communicator and the caller runs the rest of the recovery
 * (kvr_recover_joined) once s is opened as far as a spare's; else the
 * survivors did not keep this process, which must leave. */
int kvr_respawn_join(kv_store *s, MPI_Comm parent, kvr_ctx *c) {
    MPI_Comm merged = MPI_COMM_NULL;
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    int64_t t = kv_clock_ns();
    int rc = MPI_Intercomm_merge(parent, 1, &merged);
    if (rc == MPI_SUCCESS) MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = hand_over(s, c, merged, true);
    if (rc == MPI_SUCCESS) rc = place_nodes(s, merged, true);
    int mrc = MPI_SUCCESS, verdict = rc == MPI_SUCCESS ? verdict_of(merged, 1, &mrc) : -1;
    MPI_Comm_free(&parent);
    c->rt.spawn_us = (double)(kv_clock_ns() - t) / 1e3;
    KVR_TRACE(s, "joined: merge rc %d, verdict %d", rc, verdict);
    if (verdict != 1) {
        if (merged != MPI_COMM_NULL) MPI_Comm_free(&merged);
        return KV_ERR_MPI;
    }
    s->all = merged;
    MPI_Comm_rank(s->all, &s->all_rank);
    MPI_Comm_size(s->all, &s->all_size);
    s->respawned = true;
    s->spare = true;  /* until the membership gives it a failed id */
    s->my_id = -1;
    if (mrc != MPI_SUCCESS) s->failure_pending = true;
    return KV_OK;
}
