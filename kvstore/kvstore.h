/*
 * kvstore.h -- the one public header of the resilient RMA key-value store.
 *
 * Every pair is held by `replicas` processes of the communicator given to
 * kv_open().  Reads and writes are one-sided (passive-target MPI RMA inside
 * one MPI_Win_lock_all epoch); no call waits for the target process.  Rank
 * failures are noticed through ULFM (a watchdog communicator with a pending
 * MPI_ANY_SOURCE receive) and repaired by the survivors: revoke, shrink,
 * agree, rebuild the windows, restore `replicas` copies of every pair.
 *
 * Conventions:
 *  - Every function returns an int status: KV_OK (0), a warning (> 0) or an
 *    error (< 0); kv_strerror() names it.  Nothing here aborts the program.
 *  - kv_open, kv_close and kv_recover are collective over the store's
 *    communicator (the survivors after a failure); everything else is local
 *    or one-sided.
 *  - Keys and values are byte strings.  The store copies them: the caller
 *    keeps ownership of every buffer it passes.
 *  - After a rank fails, the next call on a survivor that notices it runs
 *    recovery (collectively with the other survivors, who notice it through
 *    the revoked watchdog) and returns KV_ERR_INTERRUPTED for the call it
 *    interrupted: the store is usable again and the call may be retried.
 */
#ifndef KVSTORE_H
#define KVSTORE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KV_VERSION_STRING "0.1.0"

/* Opaque handle: the struct is defined in the library only. */
typedef struct kv_store kv_store;

/* Status codes.  Errors negative, warnings positive (the call did its job). */
enum kv_status {
    KV_OK = 0,
    KV_WARN_DEGRADED = 1,          /* done, but fewer than `replicas` copies exist */
    KV_ERR_ARG = -1,               /* NULL handle or buffer, zero-length key */
    KV_ERR_NOT_FOUND = -2,         /* no such key */
    KV_ERR_KEY_TOO_LONG = -3,      /* key longer than max_key */
    KV_ERR_VALUE_TOO_LARGE = -4,   /* value longer than max_value */
    KV_ERR_BUFFER_TOO_SMALL = -5,  /* get: value longer than the buffer; *vlen says how long */
    KV_ERR_FULL = -6,              /* no free slot within max_probe of the key's home */
    KV_ERR_NOMEM = -7,             /* local allocation failed */
    KV_ERR_CONFIG = -8,            /* invalid configuration (see kv_config_check) */
    KV_ERR_TOO_FEW_RANKS = -9,     /* replicas greater than the ranks available */
    KV_ERR_MPI = -10,              /* an MPI call failed in a way that is not a process failure */
    KV_ERR_INTERRUPTED = -11,      /* a rank failed during the call; recovery is done: retry */
    KV_ERR_BUSY = -12,             /* a slot stayed locked by a live writer past lock_timeout_ms */
    KV_ERR_CORRUPT = -13,          /* no intact copy could be read within read_retries */
                                   /* -14: unused */
    KV_ERR_NOT_COUNTER = -15,      /* fetch_add on a value that is not 8 bytes */
    KV_ERR_UNSUPPORTED = -16,      /* variant or feature not available in this build */
    KV_ERR_SPARE = -17,            /* called on a spare rank that holds no role yet */
    KV_ERR_CLOSED = -18,           /* spare released at kv_close without being used */
    KV_ERR_IO = -19                /* a checkpoint file could not be written or read */
};

/* Window backends: how each rank's slot table is exposed. */
typedef enum kv_backend {
    KV_BACKEND_ALLOCATE = 0,  /* MPI_Win_allocate: osc/sm when all ranks share a node */
    KV_BACKEND_CREATE = 1     /* MPI_Win_create over malloc'd memory: osc/rdma */
} kv_backend;

/*
 * Recovery variants (see docs/design.md); all report the same phases.
 * KV_VARIANTS(X) lists each once, X(ENUM, "name"), in the order of their
 * numbers: the enum, kv_variant_name and kv_config_set's names come from it
 * (append new ones at the end: the numbers are part of the ABI).
 *   none               no detection, no recovery: the failure-free baseline
 *                      (r = 1 alone, or r copies: what fault tolerance costs
 *                      beyond keeping them)
 *   recreate-copy      new windows, local data copied in, old abandoned
 *   recreate-inplace   new windows over the same memory, old abandoned
 *   recreate-free      old windows freed first (may hang; bounded)
 *   spare              spare ranks replace failed ones
 *   proposed           the RMA calls report failures, MPIX_Win_revoke: needs
 *                      Open MPI with patches/openmpi (else kv_open returns
 *                      KV_ERR_UNSUPPORTED); sets osc_base_ft_rma for the process
 *   checkpoint-restart no replicas; periodic checkpoints to files
 *   online             keeps serving through recovery: the window outlives
 *                      its dead (MPIX_Win_ack_failed), the survivors agree
 *                      on who failed, and the lost copies are restored in
 *                      the background while reads and writes go on; needs
 *                      the patched Open MPI, as proposed does
 *   respawn            new processes replace the dead (MPI_Comm_spawn of
 *                      this program again; see kv_is_respawned): the store
 *                      keeps its size and placement; detects and rebuilds
 *                      as proposed does, so it needs the patched Open MPI
 */
#define KV_VARIANTS(X)                            \
    X(NONE, "none")                               \
    X(RECREATE_COPY, "recreate-copy")             \
    X(RECREATE_INPLACE, "recreate-inplace")       \
    X(RECREATE_FREE, "recreate-free")             \
    X(SPARE, "spare")                             \
    X(PROPOSED, "proposed")                       \
    X(CHECKPOINT, "checkpoint-restart")           \
    X(ONLINE, "online")                           \
    X(RESPAWN, "respawn")

typedef enum kv_variant {
#define KV_VARIANT_ENUM_(id, name) KV_VARIANT_##id,
    KV_VARIANTS(KV_VARIANT_ENUM_)
#undef KV_VARIANT_ENUM_
    KV_VARIANT_COUNT_
} kv_variant;

/*
 * Configuration.  kv_config_default() fills in the documented defaults;
 * kv_config_set() sets one field by name from text (for tools that read a
 * file or the environment: the names are the field names).
 */
typedef struct kv_config {
    int replicas;             /* r, copies of every pair (default 2) */
    size_t slots_per_rank;    /* table slots each rank exposes (default 65536) */
    size_t max_key;           /* longest key in bytes (default 64, at most 4096) */
    size_t max_value;         /* largest value in bytes (default 1024, at most 1 MiB) */
    kv_backend backend;       /* window backend (default KV_BACKEND_ALLOCATE) */
    kv_variant variant;       /* recovery variant (default KV_VARIANT_RECREATE_COPY) */
    int spares;               /* ranks held back as spares, variant spare only (default 0) */
    int poll_interval;        /* operations between watchdog tests (default 64); with
                               * poll_us, only the first interval */
    int poll_us;              /* the watchdog is tested about every poll_us microseconds
                               * of the rank's running time (CPU clock), the interval in
                               * operations following their pace (default 1000); 0: every
                               * poll_interval operations */
    int max_probe;            /* linear-probe length before KV_ERR_FULL (default 256) */
    int read_retries;         /* re-reads of a torn copy before the next replica (default 16) */
    double lock_timeout_ms;   /* wait for a live writer's slot lock (default 1000) */
    double failure_wait_ms;   /* how long an MPI error that is not a ULFM error waits for a
                               * failure to become known before it is KV_ERR_MPI; above the
                               * MPI's detection bound (default 30000) */
    char checkpoint_dir[256]; /* variant checkpoint-restart: where checkpoints go (no default) */
} kv_config;

/* Fill cfg with the defaults above. Local. */
void kv_config_default(kv_config *cfg);

/* Check every field; returns KV_OK or KV_ERR_CONFIG and, when msg is not
 * NULL, a sentence naming the field and the problem. Local. */
int kv_config_check(const kv_config *cfg, char *msg, size_t msglen);

/* Set field `name` (e.g. "replicas", "variant", "backend") from text.
 * Returns KV_OK, or KV_ERR_CONFIG with a message for an unknown name or a
 * value that does not parse. Local. */
int kv_config_set(kv_config *cfg, const char *name, const char *value,
                  char *msg, size_t msglen);

/* Apply KV_<NAME> environment variables (KV_REPLICAS=3, KV_VARIANT=spare...).
 * Returns KV_OK or KV_ERR_CONFIG with a message. Local. */
int kv_config_from_env(kv_config *cfg, char *msg, size_t msglen);

/* The names kv_config_set knows, one per field above: the i-th (0-based),
 * or NULL past the last.  kv_config_get writes field `name` of cfg as the
 * text kv_config_set reads; KV_OK, or KV_ERR_CONFIG for an unknown name.
 * For tools that list or record every setting. Local. */
const char *kv_config_name(int i);
int kv_config_get(const kv_config *cfg, const char *name, char *buf, size_t buflen);

/* Names of variants and backends, and their inverse (-1 when unknown). */
const char *kv_variant_name(kv_variant v);
int kv_variant_from_name(const char *name);
const char *kv_backend_name(kv_backend b);
int kv_backend_from_name(const char *name);

/*
 * Open a store over `comm` (collective).  The store duplicates comm; the
 * caller keeps it.  Allocates slots_per_rank slots on every rank, or on
 * every non-spare rank for variant spare.  Fails with KV_ERR_TOO_FEW_RANKS
 * when replicas exceeds the ranks that hold data, KV_ERR_CONFIG on a bad
 * configuration (the same answer on every rank).  On success *out owns the
 * store until kv_close.
 * With a detecting variant, kv_open sets SIGPIPE to SIG_IGN when it is at
 * its default action: Open MPI's TCP transport writes to the sockets of
 * dead peers, and the default action would kill the survivor that does.
 */
int kv_open(MPI_Comm comm, const kv_config *cfg, kv_store **out);

/*
 * Checkpoint/restart (variant checkpoint-restart: replicas = 1, no
 * detection; a failure ends the job and a restarted job reloads).
 *
 * kv_checkpoint writes every pair to cfg.checkpoint_dir as checkpoint
 * number (last + 1).  Collective over the members, and a consistent cut:
 * every operation any rank completed before calling it is in the
 * checkpoint, none issued after.  Each rank writes its file under a
 * temporary name, syncs it and renames it; only when every rank succeeded
 * does the first rank switch the directory's LATEST pointer (written the
 * same way), so a crash at any moment leaves the previous checkpoint the
 * latest complete one.  The checkpoint before it is removed afterwards.
 *
 * kv_restore loads the latest complete checkpoint into a freshly opened
 * store of the same number of ranks (collective); KV_ERR_NOT_FOUND when
 * the directory holds none, KV_ERR_CORRUPT when a file fails its checks,
 * KV_ERR_CONFIG when it was taken with other ranks or limits.
 */
typedef struct kv_checkpoint_info {
    long long number;        /* checkpoint number, 1 for the first */
    long long pairs;         /* pairs in it, all ranks */
    long long bytes;         /* bytes of its files, all ranks */
    double seconds;          /* the whole call, max over ranks */
    double io_seconds;       /* this rank's file write+sync (or read) */
    double io_seconds_max;   /* the same, max over ranks */
} kv_checkpoint_info;
int kv_checkpoint(kv_store *s, kv_checkpoint_info *info);
int kv_restore(kv_store *s, kv_checkpoint_info *info);

/* Close the store and free it (collective over the survivors).  Windows the
 * workaround had to abandon are freed here when the variant allows it. */
int kv_close(kv_store *s);

/*
 * Store `val` (vlen bytes) under `key` (klen bytes).  Not collective.
 * Returns when every live replica holds the complete new copy.  KV_OK, or
 * KV_WARN_DEGRADED when fewer than `replicas` ranks hold it; errors:
 * KV_ERR_KEY_TOO_LONG, KV_ERR_VALUE_TOO_LARGE, KV_ERR_FULL (nothing was
 * changed), KV_ERR_BUSY, KV_ERR_INTERRUPTED (retry; the pair is either the
 * new or the old value at every replica).
 */
int kv_put(kv_store *s, const void *key, size_t klen, const void *val, size_t vlen);

/*
 * Read the value of `key` into buf (buflen bytes).  Not collective.  On
 * KV_OK or KV_ERR_BUFFER_TOO_SMALL, *vlen (if not NULL) is the stored
 * length.  Reads one replica (its own copy first), verifies its checksum
 * and falls back to the next replica for a torn copy; a miss is confirmed
 * at every replica.  Reads are linearizable: a read that meets a write of
 * the same key in progress waits for it (at most lock_timeout_ms, then
 * KV_ERR_BUSY).  KV_ERR_NOT_FOUND when absent.
 */
int kv_get(kv_store *s, const void *key, size_t klen, void *buf, size_t buflen, size_t *vlen);

/* Remove `key` at every live replica.  Not collective.  KV_ERR_NOT_FOUND
 * when it was absent. */
int kv_delete(kv_store *s, const void *key, size_t klen);

/*
 * Atomically add `delta` to the 8-byte signed counter stored under key
 * (created as 0 when absent) and return the previous value in *old.  Not
 * collective; serialised with every other writer of the key.
 * KV_ERR_NOT_COUNTER when the stored value is not 8 bytes long.
 */
int kv_fetch_add(kv_store *s, const void *key, size_t klen, int64_t delta, int64_t *old);

/*
 * Check for failures without doing an operation (not collective).  When a
 * failure is pending, runs recovery with the other survivors and returns
 * KV_ERR_INTERRUPTED; otherwise KV_OK.  Ranks that are idle should call it
 * regularly, as others cannot finish recovery without them (under variant
 * online each call also does a share of the copying that follows a
 * recovery, and the recovery is counted by kv_recovery_count once every
 * member's share is done).
 */
int kv_poll(kv_store *s);

/*
 * Barrier over the store's ranks that survives failures (collective over
 * the survivors): returns KV_OK once every live member reached it, running
 * recovery first as often as needed (KV_WARN_DEGRADED if fewer ranks than
 * `replicas` remain).  Use it instead of MPI_Barrier(kv_comm(s)).  Under
 * variant online it returns once every pair has its copies again, too.
 */
int kv_barrier(kv_store *s);

/*
 * Check that the replicas agree (collective over the store's members;
 * spares get KV_ERR_SPARE).  Every member compares the copies of each pair
 * it holds with those of the pair's other replicas under the current
 * placement: a live pair must be held, with the same version and contents,
 * by every replica (a tombstone and an absent key both mean "deleted").
 * *divergent is the number of pairs that differ, the same on every member.
 * Meant for tests and after experiments, with no operation in flight; a
 * failure during the call runs recovery and returns KV_ERR_INTERRUPTED.
 */
int kv_audit(kv_store *s, long long *divergent);

/* Run recovery now (collective over the survivors).  Returns KV_OK, or
 * KV_WARN_DEGRADED when fewer ranks than `replicas` remain. */
int kv_recover(kv_store *s);

/*
 * Spare ranks (variant spare): kv_open returns KV_OK on a spare too, with
 * kv_is_spare() true.  A spare calls kv_spare_wait(), which serves recovery
 * until the spare replaces a failed rank (KV_OK: it now holds data and may
 * use the store) or the store is closed (KV_ERR_CLOSED: call kv_close).
 */
int kv_is_spare(const kv_store *s);
/*
 * Variant respawn: the store replaces a failed process with a new one, a
 * run of the same program (its executable and arguments again, the KV_ and
 * KVRUN_ environment, KV_RESPAWNED=1) placed where the job has room.  The
 * new process opens the store as its predecessor did (kv_open with the
 * same configuration, on its own MPI_COMM_WORLD): kv_open then joins the
 * survivors' recovery and returns once it holds the failed member's id and
 * copies, its communicator the store's (kv_comm) again; kv_is_respawned()
 * is then true.  It must not redo what the program did before its first
 * failure (load data, set up a run): the survivors are past that.
 */
int kv_is_respawned(const kv_store *s);
int kv_spare_wait(kv_store *s);

/* The store's communicator (survivors, spares excluded), this process's
 * rank in it and its size.  The communicator stays owned by the store and
 * changes after every recovery. */
MPI_Comm kv_comm(const kv_store *s);
int kv_rank(const kv_store *s);
int kv_size(const kv_store *s);

/* The configuration the store runs with (after defaults). */
const kv_config *kv_get_config(const kv_store *s);

/* Counters of this rank (also exported through PAPI SDE as
 * sde:::kvstore::NAME).  KV_STATS(X) lists each once, X(name, "what it
 * counts"): the struct, the SDE counters and the driver's papi.csv come
 * from it. */
#define KV_STATS(X)                                                            \
    X(puts, "kv_put calls")                                                    \
    X(gets, "kv_get calls")                                                    \
    X(deletes, "kv_delete calls")                                              \
    X(fetch_adds, "kv_fetch_add calls")                                        \
    X(get_misses, "gets that found no key")                                    \
    X(read_retries, "re-reads of torn slot copies")                            \
    X(replica_fallbacks, "reads served by a later replica")                    \
    X(lock_waits, "slot lock attempts that found the lock taken")              \
    X(bytes_put, "bytes written with MPI_Put")                                 \
    X(bytes_got, "bytes read with MPI_Get")                                    \
    X(polls, "watchdog tests")                                                 \
    X(recoveries, "recoveries completed")                                      \
    X(pairs_restored, "copies pushed during re-replication")                   \
    X(windows_abandoned, "old windows left allocated by the workaround")       \
    X(locks_broken, "slot locks of failed ranks reset")                        \
    X(restore_full, "restored copies that found no free slot (lost there)")    \
    X(checkpoints, "kv_checkpoint calls completed (variant checkpoint-restart)") \
    X(lease_reads, "reads on another node made only to renew the fence's lease") \
    X(fence_unrecorded, "recoveries that went on before MPI recorded a failure") \
    X(respawned, "processes spawned to replace failed ones (variant respawn)")  \
    X(respawn_refused, "recoveries whose spawn the runtime refused (no room)")

typedef struct kv_stats {
#define KV_STATS_FIELD_(name, what) long long name;
    KV_STATS(KV_STATS_FIELD_)
#undef KV_STATS_FIELD_
} kv_stats;
int kv_get_stats(const kv_store *s, kv_stats *out);

/* Phases of one recovery on this rank, in microseconds (-1 when unknown),
 * each timed on kv_clock_ns().  detect is from the failure to its noticing
 * and is only known when the caller gave the failure's wall-clock time with
 * kv_note_failure_ns() (on this host's clock: the store cannot correct for
 * another host's clock offset). */
typedef struct kv_recovery_times {
    int epoch;                  /* store epoch after this recovery */
    int failed;                 /* ranks that left in this recovery */
    int survivors;              /* ranks after it */
    int64_t noticed_ns;         /* kv_wall_ns() when this rank noticed the failure (0 on a
                                 * replacement that joined this recovery: it did not) */
    double detect_us, revoke_us, shrink_us, agree_us, windows_us, rereplicate_us, total_us;
    long long pairs_restored;
    int restarts;               /* times this recovery restarted after a new failure */
    double scan_us, exchange_us, insert_us;  /* parts of rereplicate_us: the scan of the
                                              * local table (clearing its locks) and
                                              * packing, the exchange (sending and
                                              * waiting, also during the scan), the
                                              * inserts of what arrived */
    double fence_us;            /* part of total_us across nodes: the wait for MPI to record
                                 * the failures, and the pause before serving again that
                                 * keeps a rank evicted alive from answering */
    double spawn_us;            /* part of total_us, variant respawn: spawning the
                                 * replacements, merging them in and handing them the
                                 * store's state (on a replacement: from its start) */
    double stopped_us;          /* how long this rank served no operation: total_us where
                                 * every copy is restored before serving, the part before
                                 * the background copy for variant online */
} kv_recovery_times;

/* Number of recoveries recorded, and the i-th (0 = first). */
int kv_recovery_count(const kv_store *s);
int kv_recovery_get(const kv_store *s, int i, kv_recovery_times *out);

/* Tell the store when a failure was caused (kv_wall_ns() of this host), so
 * the next recovery's detect phase can be measured.  Local. */
void kv_note_failure_ns(kv_store *s, int64_t wall_ns);

/* Human-readable name of a status code; never NULL. */
const char *kv_strerror(int status);

/* The clocks.  Local, never fail.
 *  kv_clock_ns  CLOCK_MONOTONIC in integer nanoseconds: durations and
 *               latencies (take differences; its origin is arbitrary and
 *               differs between hosts; it never jumps).
 *  kv_wall_ns   CLOCK_REALTIME in integer nanoseconds since 1970:
 *               timestamps that other processes compare (a kill and its
 *               noticing); between hosts only after correcting for their
 *               measured clock offset.
 *  kv_wtime     the wall clock as a double of seconds: messages and
 *               coarse deadlines only.  At today's epoch a double steps
 *               by 2^-22 s (0.24 us): never use it for a duration. */
int64_t kv_clock_ns(void);
int64_t kv_wall_ns(void);
double kv_wtime(void);

#ifdef __cplusplus
}
#endif
#endif /* KVSTORE_H */
