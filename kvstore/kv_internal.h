/*
 * kv_internal.h -- the store's private types, shared by its source files.
 *
 * A store is: a configuration, the current communicator of data-holding
 * ranks ("members"), a map between member ids (ranks at open, stable for
 * the store's life) and current ranks, the local slot table exposed in an
 * RMA window, the watchdog used for failure detection, and the recovery
 * variant's function table.  Module prefixes: kvh_ hashing and placement,
 * kvs_ slot encoding, kvw_ watchdog, kvr_ recovery, kvo_ operations and
 * windows (window.c), kvc_ checkpoints, kvp_ PAPI counters, kvu_ helpers.
 */
#ifndef KV_INTERNAL_H
#define KV_INTERNAL_H

#include "kvstore.h"
#include "kv_util.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------- slots --
 * A slot is [header 32 B][key max_key B][value max_value B], padded to 8.
 * The header's lock word is the target of MPI_Compare_and_swap; the rest
 * is written with MPI_Put and verified by readers through `check`.  */
typedef struct kvs_hdr {
    uint64_t lock;     /* 0 free, else KVS_LOCK_WORD(write sequence, owner id) */
    uint64_t version;  /* per-key write counter; 0 = slot never used */
    uint32_t klen;     /* key length; KVS_TOMB bit set for a deleted key */
    uint32_t vlen;     /* value length */
    uint64_t check;    /* checksum of version, klen, vlen, key and value */
} kvs_hdr;

#define KVS_HDR_SIZE ((size_t)sizeof(kvs_hdr))
#define KVS_TOMB 0x80000000u
#define KVS_KLEN(h) ((h)->klen & ~KVS_TOMB)

/* A lock word names its owner and the owner's write: the low 24 bits hold
 * the owner's member id + 1, the rest a sequence number the owner counts
 * up per write.  A writer journals each image with the lock word of its
 * write, so recovery can tell the journal of a write still in progress
 * (its lock word is on the key's home slot) from a stale one. */
#define KVS_LOCK_ID_BITS 24
#define KVS_LOCK_WORD(seq, id) (((uint64_t)(seq) << KVS_LOCK_ID_BITS) | (uint64_t)((id) + 1))
#define KVS_LOCK_OWNER(w) ((int64_t)((w) & ((UINT64_C(1) << KVS_LOCK_ID_BITS) - 1)) - 1)

/* KVS_SHORT: lengths valid but the value lies beyond the bytes fetched. */
enum kvs_state { KVS_EMPTY, KVS_LIVE, KVS_DELETED, KVS_TORN, KVS_SHORT };

size_t kvs_slot_size(size_t max_key, size_t max_value);
uint64_t kvs_checksum(uint64_t version, uint32_t klen, uint32_t vlen,
                      const void *key, const void *val);
/* The same check word without the crc32 instruction (test_slot compares). */
uint64_t kvs_checksum_portable(uint64_t version, uint32_t klen, uint32_t vlen,
                               const void *key, const void *val);
/* Fill a slot image (header without lock, key, value) for writing. */
void kvs_encode(unsigned char *slot, uint64_t version, const void *key, uint32_t klen,
                const void *val, uint32_t vlen, bool tomb, size_t max_key);
/* Classify a slot image of `have` bytes read from (possibly hostile)
 * remote memory; lengths are checked against the limits before use. */
enum kvs_state kvs_decode(const unsigned char *slot, size_t have, size_t max_key,
                          size_t max_value);
/* A key length (with its tombstone bit) and a value length are within the
 * limits and consistent (a tombstone has no value): the key and value may
 * be read, not yet trusted.  The first test kvs_decode makes of a used
 * slot, and of a record in transit (kvr_rec); a scan of the local table
 * uses it to look at a key before paying for its check word. */
static inline bool kvs_lengths_ok(uint32_t klen, uint32_t vlen, size_t max_key, size_t max_value) {
    uint32_t n = klen & ~KVS_TOMB;
    return n != 0 && n <= max_key && vlen <= max_value && !((klen & KVS_TOMB) && vlen != 0);
}
/* True when the image's key equals key/klen (its key length, at most
 * max_key, already checked). */
bool kvs_key_is(const unsigned char *slot, const void *key, size_t klen);
static inline const kvs_hdr *kvs_hdr_of(const unsigned char *slot) {
    return (const kvs_hdr *)(const void *)slot;
}
static inline const unsigned char *kvs_key_of(const unsigned char *slot) {
    return slot + KVS_HDR_SIZE;
}
static inline const unsigned char *kvs_val_of(const unsigned char *slot, size_t max_key) {
    return slot + KVS_HDR_SIZE + max_key;
}

/* ------------------------------------------------------------- hashing -- */
uint64_t kvh_hash(const void *data, size_t len, uint64_t seed);
uint64_t kvh_mix(uint64_t a, uint64_t b);
/* Rendezvous placement: the `r` members with the highest scores for key
 * hash kh among ids[0..n) (r <= n), on distinct nodes where there are r
 * (node_of_id: node of each id; NULL: every id its own node), best first,
 * written to out[0..r). */
void kvh_place(uint64_t kh, const int *ids, int n, int r, const int *node_of_id, int *out);
/* The current replica set of key hash kh: min(r, members) ids; returns
 * their number. */
int kvh_replicas(const kv_store *s, uint64_t kh, int *out);

/* ------------------------------------------------------------ variants --
 * A recovery variant says how the survivors get a window on the shrunken
 * communicator: how a new one is made, and what becomes of the old one.
 * The rest of recovery, the order of these steps included, is common
 * (recover.c, kvr_windows).  */
typedef struct kvr_window {
    MPI_Win win;
    unsigned char *base;  /* the table it exposes */
    bool malloced;        /* base came from malloc, not from MPI */
} kvr_window;

/* What happens to the window being replaced, which spans the dead. */
typedef enum {
    KVR_ABANDON,     /* kept allocated, never used again (kvo_abandon) */
    KVR_FREE_AFTER,  /* MPI_Win_free once the new window exists at every survivor */
    KVR_FREE_FIRST,  /* MPI_Win_free before the new window is made; may hang */
} kvr_retire;

struct kvr_ctx;
typedef struct kvr_variant_ops {
    bool detects;  /* false: no failure detection, no recovery (variant none) */
    kvr_retire retire;
    /* A new window on s->comm holding the current table (s->base; NULL on
     * a spare that takes over a failed id: then an empty table).  Fills
     * *nw and changes nothing in s: until every survivor has its new
     * window, the old table stays the table. */
    int (*make)(kv_store *s, kvr_window *nw);
    /* Set when the window reports failures itself (the proposed ULFM RMA
     * features, variant proposed): then there is no watchdog, wait loops
     * call window_failed, and the alarm calls revoke_window.  NULL for the
     * workaround variants. */
    bool (*window_failed)(kv_store *s);
    void (*revoke_window)(kv_store *s);
    /* The variant needs Open MPI's fault-tolerant RMA (patches/openmpi):
     * kv_open switches it on, and its windows on one node are
     * MPI_Win_allocate's, whose atomics report failures (window.c). */
    bool ft_rma;
    /* Variant online: recovery first tries to keep the window, and
     * re-replication goes on in the background (variant_online.c).  keep
     * acknowledges the failures on the window when it can outlive its
     * dead: KV_OK, or 1 when it cannot (then `make` makes a new one), or
     * an error.  NULL for the others. */
    int (*keep)(kv_store *s);
    /* Variant respawn: after the shrink, new processes for the dead, merged
     * into s->all after the survivors (variant_respawn.c). */
    int (*grow)(kv_store *s, struct kvr_ctx *c);
    /* Ranks of s->all without an id (spares, newcomers) take failed ids. */
    bool takes_over;
} kvr_variant_ops;

extern const kvr_variant_ops kvr_none, kvr_recreate_copy, kvr_recreate_inplace,
    kvr_recreate_free, kvr_spare, kvr_checkpoint, kvr_proposed, kvr_online, kvr_respawn;

/* make of recreate-copy: a new window, the table copied in (or zeroed when
 * there is none yet). */
int kvr_make_copy(kv_store *s, kvr_window *nw);
/* Switch on Open MPI's fault-tolerant RMA (variant proposed); KV_OK, or
 * KV_ERR_UNSUPPORTED when this MPI lacks it. */
int kvr_proposed_enable(void);

typedef struct kvo_abandoned {
    MPI_Win win;
    void *mem;       /* malloc'd table of a KV_BACKEND_CREATE window, or NULL */
} kvo_abandoned;

/* ---------------------------------------------------------------- store -- */
struct kv_store {
    kv_config cfg;
    const kvr_variant_ops *vt;

    MPI_Comm comm;        /* data-holding members, current */
    MPI_Comm all;         /* members and spares (== comm without spares) */
    MPI_Comm watch;       /* watchdog: dup of `all`, never used for data */
    MPI_Request watch_req;
    int watch_buf;

    int rank, size;       /* in comm; rank -1 on a spare */
    int all_rank, all_size;
    int my_id;            /* member id, -1 on an unused spare */
    int nids;             /* ids ever assigned (members at open) */
    int *live_ids;        /* ids of current members, by rank in comm */
    int *rank_of_id;      /* current rank of each id, -1 when gone */
    int *node_of_id;      /* node of the process holding each id (its my_node) */
    int my_node;          /* this process's node: the lowest rank of `all` at
                           * open that shares its memory (MPI_COMM_TYPE_SHARED) */
    bool place_by_node;   /* members span several nodes, some with several
                           * members: only then does the node map change the
                           * placement (kvh_replicas skips it otherwise) */
    int *all_ids;         /* id held by each rank of `all`, -1 for a spare */
    int nspares;          /* spares still idle */
    bool spare;           /* this process is an idle spare */
    bool respawned;       /* a process variant respawn started (kv_is_respawned) */
    char *respawn_exe;    /* variant respawn: what to spawn, and its arguments */
    char **respawn_argv;  /* (pointers into cmdline, NULL-terminated) */
    char *cmdline;
    bool closing;

    size_t slot_size, nslots, table_bytes, read_size;
    unsigned char *base;  /* local slot table (window memory) */
    bool base_malloced;   /* base came from malloc, not MPI_Win_allocate */
    MPI_Win win;
    /* The window's rank of each id (-1 when gone): the ranks of s->comm
     * when the window was made, which a window that outlives its dead
     * keeps (variant online) while s->comm shrinks; target_self is ours. */
    int *target_of_id;
    int target_self;
    /* Every member's table as mapped here when the window is shared memory
     * (osc/sm) and the variant is a workaround: slot locks are then taken
     * with the processor's atomics, not MPI's (ops.c); NULL otherwise. */
    unsigned char **shm;
    bool one_node;        /* every rank of `all` shared one node at open */
    uint64_t write_seq;   /* writes started here */
    uint64_t lock_word;   /* KVS_LOCK_WORD of the write in progress here */
    kvo_abandoned *abandoned;
    int nabandoned, cabandoned;

    /* Where RMA results land: slot images (buf, buf2) and the 8-byte
     * results of reads and compare-and-swaps (words, KVO_W_*).  Never on
     * the stack: over osc/rdma an operation whose wait a failure cut short
     * can still complete later and write its result (ASan caught one
     * writing into a returned kv_get's frame).  Every recovery gives the
     * store new ones (kvo_renew_results) and leaves the old to such late
     * writes. */
    unsigned char *buf;
    unsigned char *buf2;
    uint64_t *words;

    /* failure handling */
    bool failure_pending;   /* watchdog fired or revoke seen */
    int epoch;
    unsigned ops_since_poll;
    unsigned poll_every;    /* operations between watchdog tests (kvw_pace) */
    int64_t poll_ns;        /* when the watchdog was last tested by kvw_maybe */
    int64_t failure_ns;     /* kv_note_failure_ns (wall clock), 0 if none */
    /* kv_barrier calls entered and completed here; after a recovery,
     * barrier_done_max is the highest completed count among survivors. */
    long barrier_seq, barrier_done, barrier_done_max;
    uint32_t *affected;     /* homes of interrupted local writes */
    int naffected, caffected;

    /* Variant online: the re-replication still running in the background
     * after a recovery (variant_online.c), NULL when there is none. */
    struct kvr_background *bg;

    kv_stats st;
    kv_recovery_times *rec;
    int nrec, crec;
    bool trace;             /* KV_TRACE set: recovery steps to stderr */
    /* The fence (fence.c): when the last operation that completed on
     * another node began (kv_clock_ns). */
    int64_t lease_ns;
};

/* The slots a key may occupy from its home on: max_probe of them, or the
 * whole table when it is smaller (ops.c, rereplicate.c). */
static inline uint32_t kvs_probes(const kv_store *s) {
    return (uint32_t)s->cfg.max_probe < s->nslots ? (uint32_t)s->cfg.max_probe : (uint32_t)s->nslots;
}

/* The fence against a rank reported failed that runs on (fence.c).
 * kvf_needed: the store spans nodes (else every kvf_ call does nothing).
 * kvf_start: an operation's start, for kvf_leased (may it answer from its
 * own node alone?) and kvf_renew (it completed on another node).
 * kvf_off_node: the first of ids on another node, or -1.  kvf_recorded:
 * recovery waits for this process's MPI to record the failures the shrink
 * agreed on; kvf_hold: the survivors' pause before they serve again. */
bool kvf_needed(const kv_store *s);
int64_t kvf_start(const kv_store *s);
bool kvf_leased(const kv_store *s, int64_t t0);
void kvf_renew(kv_store *s, int64_t t0);
int kvf_off_node(const kv_store *s, const int *ids, int n);
void kvf_recorded(kv_store *s, MPI_Comm old, int nfailed);
void kvf_hold(const kv_store *s);

/* Recovery tracing (environment KV_TRACE=1), one line per step. */
#define KVR_TRACE(s, ...)                                                      \
    do {                                                                       \
        if ((s)->trace) kvr_trace((s), __VA_ARGS__);                           \
    } while (0)
void kvr_trace(const kv_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* window.c */
/* A window over a fresh table; zeroed unless the caller overwrites it all. */
int kvo_alloc_table(kv_store *s, MPI_Comm comm, size_t bytes, unsigned char **base, MPI_Win *win,
                    bool *malloced, bool zero);
void kvo_abandon(kv_store *s, MPI_Win win, void *mem);
/* Is the table's window osc/sm's (MPI_Win_allocate on one node)?  Else it
 * is osc/rdma's, where an operation that a failure cut short can still
 * reach the window after recovery (kvr_windows, variant_online.c). */
bool kvo_window_shm(const kv_store *s);
/* Can the table's window outlive its dead (variant online keeps it)?
 * osc/sm's, and with an Open MPI whose osc/rdma has per-target failure
 * semantics, MPI_Win_create's, where every rank serves its own memory
 * (MPI_Win_allocate's across nodes is served by each node's leader, and
 * a leader killed alone would cut off its node's live ranks). */
bool kvo_window_outlives(const kv_store *s);
/* The info keys every window over a table gets. */
void kvo_window_info(const kv_store *s, MPI_Info info);
/* Who is which rank of s->comm: each member's id and node, gathered
 * (kvo_map_ranks) or known ({id, node} by rank: kvo_set_ranks). */
int kvo_map_ranks(kv_store *s);
void kvo_set_ranks(kv_store *s, const int *id_node);
/* The window's ranks are s->comm's now (a new window): s->target_of_id. */
void kvo_map_targets(kv_store *s);
/* New result buffers for s (ops.c; at every recovery), the old ones left
 * allocated: KV_OK or KV_ERR_NOMEM. */
int kvo_renew_results(kv_store *s);
/* Set s->shm for the current window (see struct kv_store). */
void kvo_map_shm(kv_store *s);

/* detect.c.  KVW_TAG: the tag of the watchdog's messages (its pending
 * receive, and the close signal member 0 sends idle spares). */
#define KVW_TAG 4242
int kvw_start(kv_store *s);
void kvw_stop(kv_store *s);
/* Test the watchdog; true when a failure is pending.  Drives the progress
 * engine, so the hot path paces it (kvw_maybe, kvw_pace). */
bool kvw_test(kv_store *s);
/* The operations until the next watchdog test (s->poll_every), from the
 * time the last poll_every took (detect.c). */
void kvw_pace(kv_store *s);
void kvr_background_step(kv_store *s, bool idle);
static inline bool kvw_maybe(kv_store *s) {
    if (s->failure_pending) return true;
    if (!s->vt->detects || s->vt->window_failed) return false;  /* the RMA calls report */
    if (++s->ops_since_poll < s->poll_every) return false;
    s->ops_since_poll = 0;
    kvw_pace(s);
    if (kvw_test(s)) return true;
    if (s->bg) kvr_background_step(s, false);  /* variant online: a share of the re-replication */
    return s->failure_pending;
}
bool kvw_is_ft_error(int mpi_err);
/* KV_OK, KV_ERR_INTERRUPTED (a failure is known, or becomes known within a
 * grace period: sets failure_pending) or KV_ERR_MPI for the return code of
 * an MPI call on the store's communicators or window (see detect.c). */
int kvw_status(kv_store *s, int mpi_rc);
void kvw_alarm(kv_store *s);
/* A process with nothing to do but wait naps between tests, so that on a
 * node with more ranks than cores it leaves its core to those still
 * working.  kvw_nap sleeps poll_us, the members' own detection delay (50 us
 * when poll_us is 0): an idle spare.  kvw_doze sleeps KVW_DOZE_US: a
 * survivor waiting in recovery for the slowest one, where every nap's
 * slack adds to the time the store stops (with 1-ms naps, a third of
 * variant online's 5-ms stop was napping), and a member waiting for the
 * others' background copies, which need its progress; kvw_wait completes
 * a request that way. */
#define KVW_DOZE_US 50
void kvw_nap(const kv_store *s);
void kvw_doze(void);
int kvw_wait(kv_store *s, MPI_Request *req);

/* recover.c: state carried across restarts of one recovery. */
typedef struct kvr_ctx {
    int nold;
    int *old_ids;        /* members before this recovery (placement basis) */
    int *old_node;       /* node of each id before this recovery */
    bool old_by_node;    /* placement used the node map before (else plain) */
    bool *failed;        /* by id: holder died (cumulative over restarts) */
    uint32_t *homes;     /* union of affected homes, sorted */
    int nhomes;
    kv_recovery_times rt;
} kvr_ctx;
/* recover.c: the union of the members' affected homes into c->homes
 * (collective over s->comm). */
int kvr_share_affected(kv_store *s, kvr_ctx *c);
/* Did every member get here with ok?  Collective over s->comm: KV_OK when
 * all did, else the local error or KV_ERR_INTERRUPTED, the same decision
 * at every survivor (an agreement is uniform even when a member dies). */
int kvr_members_agree(kv_store *s, int local_rc);
/* A recovery's arrays for nids ids (KV_OK or KV_ERR_NOMEM; free them with
 * kvr_ctx_free either way). */
int kvr_ctx_alloc(kvr_ctx *c, int nids);
void kvr_ctx_free(kvr_ctx *c);
/* A newcomer's part of the survivors' recovery, from the membership on
 * (variant respawn; t0: when it started joining). */
int kvr_recover_joined(kv_store *s, kvr_ctx *c, int64_t t0);
/* variant_proposed.c: the window says whether a member failed, and is
 * revoked (variant respawn detects as proposed does) */
bool kvr_proposed_window_failed(kv_store *s);
void kvr_proposed_revoke_window(kv_store *s);
/* variant_respawn.c */
int kvr_respawn_command(kv_store *s);
int kvr_respawn_grow(kv_store *s, kvr_ctx *c);
int kvr_respawn_join(kv_store *s, MPI_Comm parent, kvr_ctx *c);
int kvr_cmp_u32(const void *a, const void *b);
/* rereplicate.c: a pair in transit (re-replication exchange, checkpoint
 * files): this header, the key, the value, padded to 8 bytes. */
typedef struct kvr_rec {
    uint64_t version;
    uint32_t klen;   /* with KVS_TOMB for a deletion */
    uint32_t vlen;
} kvr_rec;
size_t kvr_rec_size(uint32_t klen, uint32_t vlen);
/* Put-if-newer of one pair into the local table (no RMA, no locks). */
void kvr_insert_local(kv_store *s, const kvr_rec *r, const unsigned char *key,
                      const unsigned char *val);
/* Insert a stream of records; the number inserted, or -1 at the first
 * malformed record (lengths out of limits, past the end). */
long long kvr_insert_all(kv_store *s, const unsigned char *data, size_t len);
/* stream.c: re-replication's exchange in chunks of bounded size.  Every
 * member opens a stream of the same tag (open posts its receives); add
 * packs a record for a member, sending a full chunk and inserting
 * arrivals as needed; poll inserts what has arrived; finish sends the
 * last chunks and inserts until every member's have come; close frees it
 * (revoking s->comm first if anything is pending: after an error).  The
 * `first` stream, the scan's, passes the fault points "exchange" (at its
 * first send) and "insert" (at its first arrival). */
typedef struct kvr_stream kvr_stream;
int kvr_stream_open(kv_store *s, kvr_ctx *c, int tag, bool first, kvr_stream **st);
int kvr_stream_add(kvr_stream *st, int to, const kvs_hdr *h, const unsigned char *key,
                   const unsigned char *val);
int kvr_stream_poll(kvr_stream *st);
int kvr_stream_finish(kvr_stream *st);
void kvr_stream_close(kvr_stream *st);
/* rereplicate.c: put-if-newer of a complete slot image into the local
 * table (true if it was a valid image; *home = its key's home slot). */
bool kvr_apply_image(kv_store *s, const unsigned char *img, uint64_t *home);
/* recover.c: settle what the interrupted writes left in the local table
 * (no MPI; `failed` by id): kvr_settle_journals applies the journals of
 * writes still in progress and clears every journal, kvr_break_lock then
 * clears one slot's lock (repairing it if torn, noting its home as
 * affected), and kvr_break_locks does both over the whole table. */
void kvr_settle_journals(kv_store *s, const bool *failed);
void kvr_break_lock(kv_store *s, size_t i, const bool *failed);
void kvr_break_locks(kv_store *s, const bool *failed);
/* rereplicate.c: restore r copies of every pair (collective over s->comm).
 * kvr_reconcile is the part that cannot wait (variant online, whose scan
 * runs in the background): after kvr_break_locks (recovery runs it
 * before the windows phase there), the copies of every pair at an
 * affected home made equal among its new replicas. */
int kvr_rereplicate(kv_store *s, kvr_ctx *c);
int kvr_reconcile(kv_store *s, kvr_ctx *c);

/* Fault-injection points for tests: when set, called with the name of each
 * point a recovery passes ("watchdog" before the new watchdog's
 * communicator is made, "windows" before the new window is made, "made"
 * after it exists here and before the members agree on it, "rereplicate",
 * "exchange" (the scan's first chunk sent; without a scan, online, the
 * exchange of the homes a failure interrupted), "insert" (the scan's
 * first chunk received; online has none)); tests/mpi/store_kill.c and
 * tests/history kill a rank there.  NULL otherwise. */
extern void (*kvr_fault_hook)(const char *point);
#define KVR_POINT(name)                           \
    do {                                          \
        if (kvr_fault_hook) kvr_fault_hook(name); \
    } while (0)

int kvr_recover(kv_store *s);

/* variant_online.c: the re-replication that runs while the store serves.
 * kvr_background_start begins it at the end of a recovery (c: that
 * recovery's state; its record is kept when the background ends, with the
 * background's time in its re-replication and total);
 * kvr_background_step does a share of it (from kvw_maybe; `idle`: a rank
 * that only waits, a whole step), and
 * kvr_background_finish all of it (collective over the members: in
 * kv_barrier, kv_audit and kv_close); kvr_background_drop abandons it when a new
 * failure starts another recovery (which starts it again).  While it
 * runs, kvr_background_readable keeps to the replicas that had every
 * pair before it began. */
int kvr_background_start(kv_store *s, const kvr_ctx *c);
int kvr_background_finish(kv_store *s);
void kvr_background_drop(kv_store *s);
int kvr_background_readable(const kv_store *s, uint64_t kh, int *ids, int n);
/* recover.c: keep a recovery's phase times (kv_recovery_get). */
void kvr_record(kv_store *s, const kv_recovery_times *rt);
/* ops.c: copy the local pair `key` to the members `to` that hold an older
 * version or none, under the slot locks of a write (variant online); the
 * copies made are added to *restored.  KV_OK also when there is nothing
 * to copy (the pair gone or torn here) or no room within max_probe at a
 * target (counted in restore_full); KV_ERR_BUSY, KV_ERR_INTERRUPTED and
 * errors pass through. */
int kvo_push(kv_store *s, const void *key, size_t klen, const int *to, int nto, long long *restored);
void kvr_note_affected(kv_store *s, uint32_t home);
void kvr_release_spares(kv_store *s);


/* checkpoint.c: check a checkpoint file image and insert its pairs
 * (number 0: any number).  KV_OK, KV_ERR_CORRUPT, _CONFIG or _FULL. */
int kvc_load_image(kv_store *s, const unsigned char *img, size_t len, long long number,
                   long long *pairs);

/* sde.c: the counters of the store opened last, exported through PAPI SDE. */
void kvp_sde_init(kv_store *s);
void kvp_sde_fini(kv_store *s);

#endif /* KV_INTERNAL_H */
