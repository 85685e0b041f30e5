/*
 * ta_int.h -- what the runtime's files share: a rank's committed state
 * (ta_head), the runtime of one rank (ta_rt), status codes, keys and the
 * kill points.  Not used outside experiments/taskapp/.
 *
 * Every function that talks to the store returns TA_OK, TA_ABSENT (a get
 * found no key), TA_RECOVER (a kv_ call returned KV_ERR_INTERRUPTED: the
 * store has recovered from a failure and the caller unwinds to the worker
 * loop, which runs recover.c before anything else), TA_DONE (the run is
 * over) or TA_FATAL (any other error: the run fails with a message).
 */
#ifndef TA_INT_H
#define TA_INT_H

#include <stdarg.h>
#include <stdio.h>

#include "backend.h"
#include "kv_util.h"
#include "kvstore.h"
#include "taskapp.h"

/* Protocol steps where a scheduled victim may die (workload.kill_point=NAME:
 * at the point once its event is due; NAME:RANK: RANK at its first arrival):
 * X(ID, "name", "what has happened when it dies"). */
#define TA_POINTS(X)                                                          \
    X(GIVE_LOOT, "give-loot", "victim: loot written, its commit not yet")     \
    X(GIVE_COMMIT, "give-commit", "victim: loot committed, no answer yet")     \
    X(CLAIM_READ, "claim-read", "thief: loot read, its commit not yet")       \
    X(CLAIM_COMMIT, "claim-commit", "thief: loot committed")                  \
    X(CHUNKS, "commit-chunks", "queue chunks written, the head not yet")      \
    X(ADOPT, "adopt", "adopter: a dead rank's state read, its commit not yet")

enum ta_point {
#define TA_POINT_ENUM_(id, name, what) TA_POINT_##id,
    TA_POINTS(TA_POINT_ENUM_)
#undef TA_POINT_ENUM_
    TA_NPOINTS
};

enum { TA_FATAL = -1, TA_OK = 0, TA_ABSENT = 1, TA_RECOVER = 2, TA_DONE = 3 };
enum { TA_IDLE = 1 };                       /* head flag: committed with an empty queue */
enum { TA_LOOT = 1, TA_NONE = 2 };          /* what a victim answered */
enum { TA_MAX_RECOVERIES = 64 };

/* A rank's committed state: everything the survivors need to take over. */
typedef struct ta_head {
    uint64_t seq;                   /* commits so far; 0 = never committed (initial state) */
    int32_t owner, flags;
    int64_t res[2];                 /* results of the tasks counted */
    int64_t counted;                /* tasks whose results are in res */
    uint32_t nqueue, qbuf;          /* the queue: nqueue tasks in chunk set qbuf */
    int32_t nids;
    uint32_t given[TA_MAX_IDS];     /* loots given to each thief */
    uint32_t claimed[TA_MAX_IDS];   /* loots claimed from each victim */
    uint8_t adopted[TA_MAX_IDS];    /* dead ranks whose state this head took over */
} ta_head;

/* The run's control key: checkpoint number (variant checkpoint-restart),
 * the end, and two starts as rank 0's kv_wall_ns(): the run's first start
 * (the first job's, restored with the checkpoint: a wall clock because a
 * monotonic one means nothing in another job) and this job's run start
 * (a spare that joins late converts it to its own clock). */
typedef struct ta_ctl {
    int64_t ckpt, done;
    int64_t first_start_wall_ns, job_start_wall_ns;
} ta_ctl;

/* Kept in a file mapped MAP_SHARED, so a killed rank's count survives it. */
typedef struct ta_counts {
    long long executed, at_commit;
} ta_counts;

typedef struct ta_stats {
    long long commits, loots_given, loots_taken, requests, reclaims, adoptions, checkpoints;
    double commit_s, idle_s, recover_s[TA_MAX_RECOVERIES];  /* durations on kv_clock_ns */
    int nrecover;
} ta_stats;

typedef struct ta_rt {
    drv_ctx *x;
    kv_store *kv;
    const ta_params *p;
    int me, nids, members;
    int persist;                    /* queues go to the store (checkpoint_ms > 0) */
    int point_only;                 /* the injector is ticked at the kill point only */
    int ckpt_restart;               /* variant checkpoint-restart */
    int restored;                   /* a restarted job that reloaded a checkpoint */
    int live[TA_MAX_IDS], ever[TA_MAX_IDS];
    ta_head head;                   /* as last committed (or the initial state) */
    ta_queue q;
    int64_t res[2], counted;
    int idle_committed;             /* the head says idle and nothing changed since */
    /* kv_clock_ns() times of this rank (idle_since 0: not idle) */
    int64_t last_commit, next_poll, next_term, next_ckpt, idle_since;
    int64_t first_start_wall_ns;    /* the run's start (a restarted job: the first job's), ta_ctl */
    uint64_t nonce, pend[TA_MAX_IDS];   /* thief: the open request to each victim (0 = none) */
    int64_t pend_at[TA_MAX_IDS];    /* kv_clock_ns() when it was asked */
    int64_t bell_seen;              /* victim: the bell's value at the last scan */
    uint64_t answered[TA_MAX_IDS];  /* victim: the last request answered, per thief */
    int64_t ckpt_seen;
    int recoveries;                 /* store recoveries handled so far */
    kvu_rng rng;
    ta_counts *counts;
    ta_stats st;
    unsigned char *buf;             /* one value (store.max_value bytes) */
    size_t cap;                     /* tasks per chunk and per loot */
} ta_rt;

/* Keys: one format per kind, a rank id or two in it. */
#define TA_KEY_HEAD "h/%d"
#define TA_KEY_CHUNK "q/%d/%u/%u"
#define TA_KEY_LOOT "L/%d/%d"       /* victim, thief */
#define TA_KEY_REQ "rq/%d/%d"       /* victim, thief */
#define TA_KEY_ANS "an/%d/%d"       /* victim, thief */
#define TA_KEY_BELL "bell/%d"
#define TA_KEY_CTL "ctl"

/* state.c */
int ta_kv_get(ta_rt *rt, void *buf, size_t cap, size_t *len, const char *fmt, ...);
int ta_kv_put(ta_rt *rt, const void *val, size_t len, const char *fmt, ...);
int ta_kv_status(ta_rt *rt, int rc, const char *what);
size_t ta_head_bytes(int nids);
void ta_head_initial(ta_head *h, int owner, int nids);
int ta_head_read(ta_rt *rt, int id, ta_head *h);
int ta_queue_read(ta_rt *rt, const ta_head *h, ta_queue *out);
int ta_commit(ta_rt *rt, ta_head *h, const ta_task *a, size_t na, const ta_task *b, size_t nb,
              int *committed);
int ta_commit_now(ta_rt *rt, int idle);
/* The last committed head with this rank's results now and flags: what a
 * commit of the current state starts from. */
ta_head ta_head_now(const ta_rt *rt, int32_t flags);

/* steal.c */
void ta_nonce_init(ta_rt *rt);
int ta_serve(ta_rt *rt);
int ta_steal(ta_rt *rt);
int ta_loot_read(ta_rt *rt, int victim, int thief, uint32_t k, ta_queue *into);

/* recover.c */
void ta_update_live(ta_rt *rt);
int ta_recover(ta_rt *rt);
int ta_finish(ta_rt *rt);
int ta_restart(ta_rt *rt);

/* failures.c: task_failures.csv (collective over the survivors); rate:
 * tasks per second and rank, to price the work done again. */
void ta_failures(ta_rt *rt, double rate);

/* runtime.c (ta_put_ctl: the control key with this job's starts) */
int ta_run(ta_rt *rt);
int ta_poll(ta_rt *rt);
int ta_put_ctl(ta_rt *rt, int64_t ckpt, int64_t done);
void ta_point(ta_rt *rt, enum ta_point pt);
int ta_leader(const ta_rt *rt);
int ta_fatal(ta_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
