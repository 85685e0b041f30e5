/*
 * recover.c -- recovery after a process failure, common to all variants.
 *
 * Run by every survivor (members and idle spares) once it notices the
 * failure.  Phases, each timed:
 *   revoke  revoke the watchdog and the store's communicator, so that
 *           every survivor stops its current operation and joins;
 *   shrink  MPIX_Comm_shrink: the survivors' communicator;
 *   agree   MPIX_Comm_agree: every survivor got through the shrink;
 *   spawn   (variant respawn) new processes for the dead, merged in after
 *           the survivors (variant_respawn.c); ids of failed members follow
 *           from the survivors' (spares, and such newcomers, take them
 *           over); a new epoch begins;
 *   windows the variant makes a window on the new communicator and
 *           disposes of the old one (kvr_windows);
 *   rereplicate  every slot lock is cleared (no operation is in flight
 *           now; a lock is either a dead writer's or an interrupted one's,
 *           and the homes it guarded are remembered as "affected"), in the
 *           same pass over the table that finds what to send; every
 *           survivor holding a pair whose replica set lost a member, or
 *           whose home is affected at any member, sends its copy to the
 *           other replicas of the new placement; a copy is written only
 *           where the target's version is older, so the newest copy wins
 *           and an interrupted write ends up fully there or fully absent;
 *   a final agree, after which every survivor resumes.
 * A failure during any phase restarts recovery from revoke (bounded).
 */
#include "kv_internal.h"

#include <mpi-ext.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KVR_MAX_RESTARTS 16

void (*kvr_fault_hook)(const char *point);

void kvr_note_affected(kv_store *s, uint32_t home) {
    if (s->naffected == s->caffected) {
        int c = s->caffected ? 2 * s->caffected : 16;
        uint32_t *a = realloc(s->affected, (size_t)c * sizeof *a);
        if (!a) return;
        s->affected = a;
        s->caffected = c;
    }
    s->affected[s->naffected++] = home;
}

void kvr_trace(const kv_store *s, const char *fmt, ...) {
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[kvstore id %d rank %d/%d epoch %d %.6f] %s\n", s->my_id, s->rank, s->size,
            s->epoch, kv_wtime(), line);
}

static double us_since(int64_t t0) { return (double)(kv_clock_ns() - t0) / 1e3; }

/* Variant online stops the survivors only for what placement cannot do
 * without, and no other variant changes with it: its membership comes
 * from the shrink alone (it has no spares, and the shrunken communicator
 * is the old one less the dead, in the same order), no agreement follows
 * the shrink (the one that ends the attempt, kvr_conclude, catches a
 * member that did not get through), and the barrier counts travel with
 * the affected homes (kvr_share_affected).  Two agreements and two
 * gathers fewer: each is a round of messages among ranks that share
 * cores, and the stop is what bounds the worst bin of its throughput. */
static bool brief(const kv_store *s) { return s->vt->keep != NULL; }

/* The id of each rank of nall, a shrink of s->all, from the ranks of
 * s->all it kept (a local translation of groups). */
static int ids_after_shrink(kv_store *s, MPI_Comm nall, int **out) {
    int n = 0;
    MPI_Comm_size(nall, &n);
    int *ranks = malloc((size_t)n * sizeof(int)), *old = malloc((size_t)n * sizeof(int));
    int *ids = malloc((size_t)n * sizeof(int));
    MPI_Group og = MPI_GROUP_NULL, ng = MPI_GROUP_NULL;
    int rc = ranks && old && ids ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) rc = MPI_Comm_group(s->all, &og);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_group(nall, &ng);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) ranks[i] = i;
    if (rc == MPI_SUCCESS) rc = MPI_Group_translate_ranks(ng, n, ranks, og, old);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        if (old[i] == MPI_UNDEFINED) rc = MPI_ERR_INTERN;
        else ids[i] = s->all_ids[old[i]];
    }
    if (og != MPI_GROUP_NULL) MPI_Group_free(&og);
    if (ng != MPI_GROUP_NULL) MPI_Group_free(&ng);
    free(ranks);
    free(old);
    if (rc != MPI_SUCCESS) {
        free(ids);
        return rc == MPI_ERR_NO_MEM ? KV_ERR_NOMEM : KV_ERR_MPI;
    }
    *out = ids;
    return KV_OK;
}

/* revoke + shrink (+ agree): s->all becomes the survivors' communicator;
 * under variant online s->all_ids too. */
static int kvr_shrink(kv_store *s, kvr_ctx *c) {
    int64_t t = kv_clock_ns();
    kvw_alarm(s);
    MPIX_Comm_revoke(s->all);
    /* A member may be blocked in a collective on the members' communicator
     * (kv_barrier's agree): revoking it releases that call. */
    if (s->comm != s->all && s->comm != MPI_COMM_NULL) MPIX_Comm_revoke(s->comm);
    c->rt.revoke_us += us_since(t);
    t = kv_clock_ns();
    /* A window kept through the recovery (online) must carry no operation
     * of a survivor's past: over TCP a target carries out an RMA operation
     * when it next drives progress, and a compare-and-swap whose wait the
     * failure ended (the patched osc/rdma ends waits it cannot tie to one
     * target when any member failed) could take a slot lock after its
     * target broke every lock (kvr_break_locks, after the shrink), a lock
     * whose owner does not know it holds it (a dead writer's late
     * operation did that; kvo_break_dead in ops.c).  The flush completes this
     * member's operations to live targets (fault-tolerant RMA: the live
     * part of an _all call), and the shrink returns nowhere before every
     * survivor has entered it, so after it nothing of the past is in
     * flight towards a live member. */
    if (brief(s) && s->win != MPI_WIN_NULL) MPI_Win_flush_all(s->win);
    MPI_Comm nall;
    int rc = MPIX_Comm_shrink(s->all, &nall);
    c->rt.shrink_us += us_since(t);
    KVR_TRACE(s, "shrink rc %d", rc);
    if (rc != MPI_SUCCESS) return kvw_status(s, rc);
    MPI_Comm_set_errhandler(nall, MPI_ERRORS_RETURN);
    int nsurv = 0;
    MPI_Comm_size(nall, &nsurv);
    t = kv_clock_ns();
    kvf_recorded(s, s->all, s->all_size - nsurv);  /* the fence goes up here */
    c->rt.fence_us += us_since(t);
    int *ids = NULL;
    if (brief(s) && (rc = ids_after_shrink(s, nall, &ids)) != KV_OK) {
        MPI_Comm_free(&nall);
        return rc;
    }
    if (s->comm != s->all && s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
    MPI_Comm_free(&s->all);
    s->all = nall;
    s->comm = MPI_COMM_NULL;
    MPI_Comm_rank(s->all, &s->all_rank);
    MPI_Comm_size(s->all, &s->all_size);
    if (ids) {
        free(s->all_ids);
        s->all_ids = ids;
        return KV_OK;
    }
    t = kv_clock_ns();
    int ok = 1;
    rc = MPIX_Comm_agree(s->all, &ok);
    c->rt.agree_us += us_since(t);
    KVR_TRACE(s, "agree rc %d, %d survivors", rc, s->all_size);
    return kvw_status(s, rc);
}

/* Who holds which id now, and the most kv_barrier calls any survivor
 * completed; spares take over failed ids; member comm.  Under variant
 * online the ids are known from the shrink, and the barrier counts come
 * later, with the affected homes. */
static int kvr_membership(kv_store *s, kvr_ctx *c) {
    s->barrier_done_max = s->barrier_done;
    if (!brief(s)) {
        long mine[2] = {s->my_id, s->barrier_done}, *got = malloc((size_t)s->all_size * sizeof mine);
        int *ids = realloc(s->all_ids, (size_t)s->all_size * sizeof(int));
        if (ids) s->all_ids = ids;
        if (!got || !ids) { free(got); return KV_ERR_NOMEM; }
        int rc = MPI_Allgather(mine, 2, MPI_LONG, got, 2, MPI_LONG, s->all);
        if (rc != MPI_SUCCESS) { free(got); return kvw_status(s, rc); }
        for (int i = 0; i < s->all_size; i++) {
            s->all_ids[i] = (int)got[2 * i];
            if (got[2 * i + 1] > s->barrier_done_max) s->barrier_done_max = got[2 * i + 1];
        }
        free(got);
    }
    bool held[s->nids > 0 ? s->nids : 1];
    memset(held, 0, sizeof held);
    for (int i = 0; i < s->all_size; i++)
        if (s->all_ids[i] >= 0) held[s->all_ids[i]] = true;
    for (int i = 0; i < c->nold; i++)
        if (!held[c->old_ids[i]]) c->failed[c->old_ids[i]] = true;
    if (s->vt->takes_over) {  /* spares (and newcomers), in rank order, take failed ids */
        int next = 0;
        for (int i = 0; i < s->all_size; i++) {
            if (s->all_ids[i] >= 0) continue;
            while (next < s->nids && held[next]) next++;
            if (next >= s->nids) break;
            held[next] = true;
            if (i == s->all_rank) {  /* a replacement: count barriers as the members do */
                s->my_id = next;
                s->spare = false;
                s->barrier_seq = s->barrier_done = s->barrier_done_max;
            }
            s->all_ids[i] = next;
        }
    }
    s->nspares = 0;
    for (int i = 0; i < s->all_size; i++) s->nspares += s->all_ids[i] < 0;
    if (s->nspares == 0 && !s->vt->grow) {
        s->comm = s->all;
    } else {  /* (respawn: in id order, so that a newcomer has its predecessor's rank) */
        int rc = MPI_Comm_split(s->all, s->my_id >= 0 ? 0 : MPI_UNDEFINED, s->my_id, &s->comm);
        if (rc != MPI_SUCCESS) return kvw_status(s, rc);
    }
    if (s->my_id < 0) return KV_OK;  /* still a spare */
    MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    if (!brief(s)) return kvo_map_ranks(s);
    int *id_node = malloc((size_t)s->size * 2 * sizeof(int));
    if (!id_node) return KV_ERR_NOMEM;
    for (int r = 0; r < s->size; r++) {  /* a survivor's node is the one it had */
        id_node[2 * r] = s->all_ids[r];
        id_node[2 * r + 1] = s->node_of_id[s->all_ids[r]];
    }
    kvo_set_ranks(s, id_node);
    free(id_node);
    return KV_OK;
}

/* The journal slot of member id in the local table. */
static unsigned char *journal_of(kv_store *s, int id) {
    return s->base + (s->nslots + (size_t)id) * s->slot_size;
}

/* Is id's journal the image of a write still in progress here?  Only then
 * does the writer's lock word, which the journal carries, still sit on the
 * home slot of the journalled key: a writer locks that slot at every
 * replica before it writes any, and releases it only when every copy is
 * complete.  An older journal image is stale, and reapplying it could
 * bring back a value deleted since (its slot reused by another key). */
static bool journal_in_progress(kv_store *s, int id) {
    const unsigned char *j = journal_of(s, id);
    const kvs_hdr *h = kvs_hdr_of(j);
    enum kvs_state st = kvs_decode(j, s->slot_size, s->cfg.max_key, s->cfg.max_value);
    if ((st != KVS_LIVE && st != KVS_DELETED) || h->version == 0 || h->lock == 0) return false;
    uint64_t home = kvh_hash(kvs_key_of(j), KVS_KLEN(h), 0) % s->nslots;
    return kvs_hdr_of(s->base + home * s->slot_size)->lock == h->lock;
}

/* Interrupted writes, dead or surviving writers alike, are settled in
 * three steps (kvr_break_locks runs them over the whole table; recovery
 * runs the third inside re-replication's scan, which reads every slot
 * anyway): (1) which journals describe a write still in progress, asked
 * before any lock is cleared; (2) each such journal is applied
 * put-if-newer, after the locks in its key's probe window are broken,
 * which brings back a value whose slot was torn while being overwritten
 * in place, and every journal is cleared (none describes a write in
 * progress any more); (3) every other lock is cleared.  A lock's slot is
 * the home of the key its writer was writing, and is noted as affected
 * (so that re-replication reconciles the replicas of that key); a slot
 * left torn becomes a version-0 tombstone, so that probe chains through
 * it stay intact and any real copy replaces it.  Only the probe window is
 * repaired before a journal's insert, and an insert looks nowhere else,
 * so the order of (2) and (3) changes nothing. */
void kvr_break_lock(kv_store *s, size_t i, const bool *failed) {
    unsigned char *slot = s->base + i * s->slot_size;
    kvs_hdr *h = (kvs_hdr *)(void *)slot;
    if (h->lock == 0) return;
    int64_t owner = KVS_LOCK_OWNER(h->lock);
    kvr_note_affected(s, (uint32_t)i);
    if (owner >= 0 && owner < s->nids && failed[owner]) s->st.locks_broken++;
    if (kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value) == KVS_TORN)
        kvs_encode(slot, 0, "", 1, NULL, 0, true, s->cfg.max_key);
    h->lock = 0;
}

void kvr_settle_journals(kv_store *s, const bool *failed) {
    if (!s->base) return;
    bool in_progress[s->nids > 0 ? s->nids : 1];
    for (int id = 0; id < s->nids; id++) in_progress[id] = journal_in_progress(s, id);
    for (int id = 0; id < s->nids; id++) {
        const unsigned char *j = journal_of(s, id);
        if (in_progress[id]) {
            uint64_t home = kvh_hash(kvs_key_of(j), KVS_KLEN(kvs_hdr_of(j)), 0) % s->nslots;
            for (uint32_t p = 0; p < kvs_probes(s); p++)
                kvr_break_lock(s, (home + p) % s->nslots, failed);
            if (kvr_apply_image(s, j, &home)) kvr_note_affected(s, (uint32_t)home);
        }
        memset(journal_of(s, id), 0, s->slot_size);
    }
}

void kvr_break_locks(kv_store *s, const bool *failed) {
    if (!s->base) return;
    kvr_settle_journals(s, failed);
    for (size_t i = 0; i < s->nslots; i++) kvr_break_lock(s, i, failed);
}

int kvr_cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The affected homes a member sends in the first exchange; a member with
 * more sends its count, and all then gather every list (a second
 * collective).  Interrupted writes leave a few homes each, so one
 * collective usually does: it is part of the time variant online stops. */
#define KVR_FEW_HOMES 15

/* Union of every member's affected homes, sorted, each once (collective
 * over s->comm: only members hold data or write).  Each member's count
 * of completed kv_barrier calls comes along (s->barrier_done_max): variant
 * online gathers it nowhere else. */
int kvr_share_affected(kv_store *s, kvr_ctx *c) {
    enum { HEAD = 2, W = HEAD + KVR_FEW_HOMES };  /* count, barriers, homes */
    int n = s->naffected, *counts = malloc((size_t)s->size * sizeof(int));
    int *displs = malloc((size_t)s->size * sizeof(int));
    uint64_t mine[W], *few = malloc((size_t)s->size * W * sizeof(uint64_t));
    if (!counts || !displs || !few) { free(counts); free(displs); free(few); return KV_ERR_NOMEM; }
    mine[0] = (uint64_t)n;
    mine[1] = (uint64_t)s->barrier_done;
    for (int i = 0; i < KVR_FEW_HOMES; i++) mine[HEAD + i] = i < n ? s->affected[i] : 0;
    /* The first collective after the scan: the members that are done wait
     * here for the slowest, dozing (kvw_wait) rather than spinning. */
    MPI_Request req;
    int rc = kvw_status(s, MPI_Iallgather(mine, W, MPI_UINT64_T, few, W, MPI_UINT64_T, s->comm, &req));
    if (rc == KV_OK) rc = kvw_wait(s, &req);
    int total = 0;
    bool many = false;
    for (int i = 0; rc == KV_OK && i < s->size; i++) {
        const uint64_t *got = few + (size_t)i * W;
        counts[i] = (int)got[0];
        displs[i] = total;
        total += counts[i];
        many |= counts[i] > KVR_FEW_HOMES;
        if ((long)got[1] > s->barrier_done_max) s->barrier_done_max = (long)got[1];
    }
    free(c->homes);
    c->homes = rc == KV_OK ? malloc((size_t)(total ? total : 1) * sizeof(uint32_t)) : NULL;
    if (c->homes && many) {
        rc = kvw_status(s, MPI_Allgatherv(s->affected, n, MPI_UINT32_T, c->homes, counts, displs,
                                          MPI_UINT32_T, s->comm));
    } else if (c->homes) {
        for (int i = 0; i < s->size; i++)
            for (int k = 0; k < counts[i]; k++)
                c->homes[displs[i] + k] = (uint32_t)few[(size_t)i * W + HEAD + k];
    }
    free(counts);
    free(displs);
    free(few);
    if (rc != KV_OK) return rc;
    if (!c->homes) return KV_ERR_NOMEM;
    qsort(c->homes, (size_t)total, sizeof(uint32_t), kvr_cmp_u32);
    int u = 0;
    for (int i = 0; i < total; i++)
        if (u == 0 || c->homes[i] != c->homes[u - 1]) c->homes[u++] = c->homes[i];
    c->nhomes = u;
    return KV_OK;
}

int kvr_members_agree(kv_store *s, int local_rc) {
    int flag = local_rc == KV_OK;
    int rc = MPIX_Comm_agree(s->comm, &flag);
    if (rc != MPI_SUCCESS) return kvw_status(s, rc);
    if (flag) return KV_OK;
    s->failure_pending = true;
    return local_rc ? local_rc : KV_ERR_INTERRUPTED;
}

/* The windows phase: every survivor ends it with the new window, or all
 * keep the old one.  A window comes from a collective call that one
 * failure can let succeed at some members and fail at others, and a window
 * that exists at only some members can be neither used nor freed (a free
 * waits for members that do not have it: seen as a hang of recreate-free
 * when a second rank died during the first recovery).  So the members
 * agree before a free (everyone enters it) and after the new window is
 * made; a new window that not every member got is abandoned where it
 * exists, and the next attempt starts again from the same table. */
static int kvr_windows(kv_store *s) {
    int rc;
    if (s->vt->retire == KVR_FREE_FIRST && s->win != MPI_WIN_NULL) {
        unsigned char *save = malloc(s->table_bytes ? s->table_bytes : 1);
        rc = kvr_members_agree(s, save ? KV_OK : KV_ERR_NOMEM);
        if (rc) {
            free(save);
            return rc;
        }
        memcpy(save, s->base, s->table_bytes);  /* the window takes its memory along */
        MPI_Win_free(&s->win);                   /* may hang: variant_recreate_free.c */
        if (s->base_malloced) free(s->base);
        s->win = MPI_WIN_NULL;
        s->base = save;  /* the table until a new window exists */
        s->base_malloced = true;
    }
    kvr_window nw = {MPI_WIN_NULL, NULL, false};
    int made = s->vt->make(s, &nw);
    KVR_POINT("made");
    bool own_mem = made == KV_OK && nw.base != s->base;  /* not recreate-inplace's */
    rc = kvr_members_agree(s, made);
    if (rc) {
        if (made == KV_OK) kvo_abandon(s, nw.win, own_mem && nw.malloced ? nw.base : NULL);
        return rc;
    }
    void *old_mem = own_mem && s->base_malloced ? s->base : NULL;
    /* Freed only on osc/sm: on osc/rdma an operation a peer gave up on can
     * still arrive at the old window after recovery, and the transport
     * then serves it from the window's memory (variant_online.c). */
    if (s->win != MPI_WIN_NULL && s->vt->retire == KVR_FREE_AFTER && kvo_window_shm(s)) {
        MPI_Win_free(&s->win);  /* revoked: the patched free completes without the dead */
        free(old_mem);
    } else if (s->win != MPI_WIN_NULL) {
        kvo_abandon(s, s->win, old_mem);
    } else {
        free(old_mem);  /* the saved table of a free-first rebuild */
    }
    s->win = nw.win;
    s->base = nw.base;
    s->base_malloced = nw.malloced;
    return KV_OK;
}

/* The end of an attempt, at every survivor, members and idle spares alike:
 * one agreement over s->all on whether everybody got through.  A member
 * whose windows or re-replication phase failed (local_rc) still comes
 * here, after revoking the members' communicator so that no member stays
 * in a collective there: an idle spare, which skips those phases, waits in
 * this agreement, and had the member gone straight on to the next shrink
 * of s->all, the spare's agreement would have been matched by the one
 * inside that shrink -- the spare then left recovery while the members
 * shrank without it, and every survivor waited forever (variant spare, a
 * second kill during recovery, with a spare left).  The flag's bits, ANDed
 * by the agreement: KVR_THROUGH is cleared by a member interrupted by a
 * failure (all start the next attempt together), KVR_SOUND by one with a
 * genuine error (all end the recovery: that member with its error, the
 * others with KV_ERR_MPI). */
enum { KVR_THROUGH = 1, KVR_SOUND = 2 };
static int kvr_conclude(kv_store *s, kvr_ctx *c, int local_rc) {
    int64_t t = kv_clock_ns();
    int flag = KVR_THROUGH | KVR_SOUND;
    if (local_rc == KV_ERR_INTERRUPTED) flag &= ~KVR_THROUGH;
    else if (local_rc) flag &= ~KVR_SOUND;
    if (local_rc && s->comm != MPI_COMM_NULL) MPIX_Comm_revoke(s->comm);
    int rc = kvw_status(s, MPIX_Comm_agree(s->all, &flag));
    c->rt.agree_us += us_since(t);
    KVR_TRACE(s, "final agree rc %d flag %d local %d pending %d", rc, flag, local_rc,
              (int)s->failure_pending);
    if (rc == KV_ERR_INTERRUPTED || (rc == KV_OK && !(flag & KVR_THROUGH))) {
        s->failure_pending = true;
        return KV_ERR_INTERRUPTED;
    }
    if (rc) return rc;
    if (!(flag & KVR_SOUND)) return local_rc ? local_rc : KV_ERR_MPI;
    return s->failure_pending ? KV_ERR_INTERRUPTED : KV_OK;
}

/* An attempt after the shrink (and the spawn): membership, windows,
 * re-replication, the final agreement.  A newcomer (variant respawn)
 * starts its first attempt here. */
static int kvr_attempt_rest(kv_store *s, kvr_ctx *c) {
    int64_t t = kv_clock_ns();
    int rc = kvr_membership(s, c);
    c->rt.agree_us += us_since(t);
    if (rc) return rc;
    /* New watchdog before any RMA, so pushes notice a second failure. */
    KVR_TRACE(s, "membership done");
    kvw_stop(s);
    s->failure_pending = false;
    /* A failure in the watchdog's dup goes to the agreement below with
     * the rest: returned from here, it ended the recovery at every
     * survivor with KV_ERR_MPI (a second kill at the same instant). */
    KVR_POINT("watchdog");
    rc = s->vt->detects ? kvw_start(s) : KV_OK;
    KVR_TRACE(s, "watchdog started rc %d", rc);
    if (rc == KV_OK && s->my_id >= 0) {
        if (brief(s)) {  /* while the window learns of the failures, below */
            t = kv_clock_ns();
            kvr_break_locks(s, c->failed);
            c->rt.scan_us += us_since(t);
            KVR_TRACE(s, "locks broken");
        }
        KVR_POINT("windows");
        t = kv_clock_ns();
        /* The window outlives its dead (online, where it can), or a new one */
        int kept = s->vt->keep ? s->vt->keep(s) : 1;
        if (kept == KV_OK) KVR_POINT("made");  /* the window every member keeps */
        rc = kept == 1 ? kvr_windows(s) : kept;
        if (kept == 1 && rc == KV_OK) {
            kvo_map_shm(s);
            kvo_map_targets(s);
            rc = kvw_status(s, MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win));
        }
        c->rt.windows_us += us_since(t);
        KVR_TRACE(s, "windows rc %d", rc);
        if (rc == KV_OK) {
            t = kv_clock_ns();
            /* online restores the lost copies in the background, after this */
            rc = s->vt->keep ? kvr_reconcile(s, c) : kvr_rereplicate(s, c);
            c->rt.rereplicate_us += us_since(t);
        }
    }
    return kvr_conclude(s, c, rc);
}

static int kvr_attempt(kv_store *s, kvr_ctx *c) {
    KVR_TRACE(s, "recovery attempt %d", c->rt.restarts);
    int rc = kvr_shrink(s, c);
    if (rc == KV_OK && s->vt->grow) rc = s->vt->grow(s, c);
    return rc ? rc : kvr_attempt_rest(s, c);
}

void kvr_record(kv_store *s, const kv_recovery_times *rt) {
    if (s->nrec == s->crec) {
        int n = s->crec ? 2 * s->crec : 8;
        kv_recovery_times *r = realloc(s->rec, (size_t)n * sizeof *r);
        if (!r) return;
        s->rec = r;
        s->crec = n;
    }
    s->rec[s->nrec++] = *rt;
}

int kvr_ctx_alloc(kvr_ctx *c, int nids) {
    c->old_ids = malloc((size_t)(nids + 1) * sizeof(int));
    c->old_node = malloc((size_t)(nids + 1) * sizeof(int));
    c->failed = calloc((size_t)nids + 1, sizeof(bool));
    return c->old_ids && c->old_node && c->failed ? KV_OK : KV_ERR_NOMEM;
}

void kvr_ctx_free(kvr_ctx *c) {
    free(c->old_ids);
    free(c->old_node);
    free(c->failed);
    free(c->homes);
}

/* Attempts until one is not interrupted (bounded), then the end of the
 * recovery at this process: epoch, counts and times. */
static int kvr_run(kv_store *s, kvr_ctx *c, int rc, int64_t t0) {
    for (int attempt = c->rt.restarts; attempt < KVR_MAX_RESTARTS && rc == KV_ERR_INTERRUPTED; attempt++) {
        c->rt.restarts = attempt;
        rc = kvr_attempt(s, c);
    }
    s->naffected = 0;
    s->failure_ns = 0;
    for (int i = 0; i < s->nids; i++) c->rt.failed += c->failed[i];
    if (rc == KV_OK) {
        int64_t t = kv_clock_ns();
        kvf_hold(s);  /* an evicted rank's lease runs out (fence.c) */
        c->rt.fence_us += us_since(t);
        s->epoch++;
        s->st.recoveries++;
        c->rt.epoch = s->epoch;
        c->rt.survivors = s->size;
        c->rt.total_us = us_since(t0);
        c->rt.stopped_us = c->rt.total_us;  /* online's background adds to total_us only */
        /* online: recorded when the background ends (variant_online.c) */
        if (s->vt->keep && s->my_id >= 0) rc = kvr_background_start(s, c);
        else kvr_record(s, &c->rt);
    }
    kvr_ctx_free(c);
    if (rc != KV_OK) return rc;
    return s->size < s->cfg.replicas ? KV_WARN_DEGRADED : KV_OK;
}

int kvr_recover(kv_store *s) {
    if (!s->vt->detects) return KV_ERR_UNSUPPORTED;
    kvr_ctx c = {0};
    int64_t t0 = kv_clock_ns();
    c.rt.noticed_ns = kv_wall_ns();
    c.rt.detect_us = s->failure_ns > 0 ? (double)(c.rt.noticed_ns - s->failure_ns) / 1e3 : -1;
    if (kvr_ctx_alloc(&c, s->nids) != KV_OK) {
        kvr_ctx_free(&c);
        return KV_ERR_NOMEM;
    }
    /* Spares know the member list from the last recovery they served. */
    memcpy(c.old_ids, s->live_ids, (size_t)s->size * sizeof(int));
    memcpy(c.old_node, s->node_of_id, (size_t)s->nids * sizeof(int));
    c.nold = s->size;
    c.old_by_node = s->place_by_node;
    kvr_background_drop(s);  /* online: a second failure; it starts again below */
    if (kvo_renew_results(s) != KV_OK) {  /* an RMA call cut short may still write the old */
        kvr_ctx_free(&c);
        return KV_ERR_NOMEM;
    }
    return kvr_run(s, &c, KV_ERR_INTERRUPTED, t0);
}

int kvr_recover_joined(kv_store *s, kvr_ctx *c, int64_t t0) {
    c->rt.noticed_ns = 0;  /* it was not there to notice */
    c->rt.detect_us = -1;
    int rc = s->failure_pending ? KV_ERR_INTERRUPTED : kvr_attempt_rest(s, c);
    if (rc == KV_ERR_INTERRUPTED) c->rt.restarts = 1;  /* the next attempt is a whole one */
    return kvr_run(s, c, rc, t0);
}

int kv_recover(kv_store *s) {
    if (!s) return KV_ERR_ARG;
    s->failure_pending = true;
    return kvr_recover(s);
}

/* One barrier attempt: a non-blocking barrier on the members'
 * communicator, polled together with the watchdog, so that a failure (or a
 * recovery started elsewhere) pulls this rank into recovery instead of
 * leaving it blocked.  (An agreement would give a uniform answer, but it
 * cannot be interrupted, and ranks that noticed the failure first are
 * already waiting in the shrink of recovery.) */
static int kvr_barrier_once(kv_store *s) {
    MPI_Request req;
    int rc = MPI_Ibarrier(s->comm, &req);
    if (rc != MPI_SUCCESS) KVR_TRACE(s, "ibarrier: MPI error %d", rc);
    if (rc != MPI_SUCCESS) return kvw_status(s, rc);
    for (;;) {
        int done = 0;
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            int cls = rc;
            MPI_Error_class(rc, &cls);
            KVR_TRACE(s, "barrier test: MPI error %d class %d", rc, cls);
            return kvw_status(s, rc);
        }
        if (done) return KV_OK;
        /* On a failure the request is left behind, not freed: freeing an
         * active collective request is an error in Open MPI 5.0.7 and
         * raised on MPI_COMM_WORLD's (fatal) handler. */
        if (kvw_test(s)) return KV_ERR_INTERRUPTED;
        if (s->bg) kvr_background_step(s, true);  /* online: the others may wait for this share */
        else sched_yield();
    }
}

/* Barriers are counted.  A failure can interrupt one barrier at different
 * ranks in different calls: a rank that left barrier k (it saw everybody
 * enter) may be in barrier k+1, or past it, while others still wait in k.
 * Retrying blindly after recovery would pair k at some ranks with k+1 at
 * others and shift every later collective.  So recovery gathers how many
 * barriers each survivor completed; a rank whose current barrier someone
 * completed is done with it (all members had entered it), the others retry
 * theirs on the new communicator. */
int kv_barrier(kv_store *s) {
    if (!s) return KV_ERR_ARG;
    if (s->spare) return KV_ERR_SPARE;
    s->barrier_seq++;
    for (int round = 0; round < 4 * KVR_MAX_RESTARTS; round++) {
        int rc = s->vt->detects ? kvr_barrier_once(s) : kvw_status(s, MPI_Barrier(s->comm));
        KVR_TRACE(s, "barrier %ld round %d rc %d", s->barrier_seq, round, rc);
        if (rc == KV_OK) break;
        if (rc != KV_ERR_INTERRUPTED) return rc;
        s->failure_pending = true;
        rc = kvr_recover(s);
        if (rc != KV_OK && rc != KV_WARN_DEGRADED) return rc;
        if (s->barrier_done_max >= s->barrier_seq) break;  /* completed elsewhere */
        if (round == 4 * KVR_MAX_RESTARTS - 1) return KV_ERR_MPI;
    }
    s->barrier_done = s->barrier_seq;
    if (s->bg) {  /* online: every member here finishes its copies first */
        int rc = kvr_background_finish(s);
        if (rc != KV_OK && rc != KV_WARN_DEGRADED) return rc;
    }
    return s->size < s->cfg.replicas ? KV_WARN_DEGRADED : KV_OK;
}

int kv_poll(kv_store *s) {
    if (!s) return KV_ERR_ARG;
    if (!kvw_test(s) && s->bg) kvr_background_step(s, false);  /* online: a share of the copies */
    if (!s->failure_pending) return KV_OK;
    int rc = kvr_recover(s);
    return (rc == KV_OK || rc == KV_WARN_DEGRADED) ? KV_ERR_INTERRUPTED : rc;
}
