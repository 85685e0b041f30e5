/*
 * inject.h -- the one header of the signal-based process-kill injector.
 *
 * A schedule spec (a line of text) is parsed into a kvi_spec, then drawn
 * into a kvi_schedule against the table of ranks (rank, pid, host, and the
 * pids of the rank's Open MPI daemon): which processes die, by which
 * signal, and when (after a number of operations of the victim, or at a
 * wall-clock offset from the run's start).  A node loss is one event whose
 * kills are every rank of a node and that node's daemon, sent together.  The same seed
 * gives the same schedule on every machine (own PRNG, no libc rand).  Two
 * forms carry it out: in-process (kvi_inproc_tick, called from the driver's
 * loop, raises the signal on itself) and external (kv_inject reads the pid
 * table the ranks publish and kills by pid).  Every kill is logged, with a
 * CLOCK_REALTIME timestamp in integer nanoseconds taken just before the
 * signal, to a CSV file.
 * No MPI in here: the caller supplies rank numbers and the run's start time.
 * Conventions: functions return 0 on success and -1 on failure; the ones
 * taking (err, errlen) write a message naming the bad item there, the
 * others set errno.  Nothing here aborts the program.
 */
#ifndef KV_INJECT_H
#define KV_INJECT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVI_HOST_MAX 64       /* host name buffer, NUL included */
/* Faults that are not signals, in the signal fields: a host's network
 * link cut (a partition: spec signal=LINK, node targets only) and put
 * back (the end of one with for=).  They run the command template in
 * KV_INJECT_LINK with {host} and {state} (down, up). */
#define KVI_LINK_DOWN 1000
#define KVI_LINK_UP 1001
/* A node that vanishes (spec signal=VANISH, node targets only): its
 * daemon and ranks stopped (SIGSTOP) and its link cut at one instant, as
 * a power loss or a kernel panic leaves it: nothing closes a socket, and
 * only heartbeats and keepalive notice.  The spec's for= is required:
 * that long after, the stopped processes are killed and the link put back
 * (the node rebooted, its processes gone), so none outlives the run.  In
 * the schedule it is the node's STOP events, then its host's LINKDOWN. */
#define KVI_VANISH 1002
/* A slow, lossy link (spec signal=SLOW, node targets only): the host's
 * link limited to the spec's rate= and dropping the share loss= of its
 * packets, both ways, for for= seconds or to the run's end; through
 * KV_INJECT_LINK with {state} "slow RATEkbit LOSS%" (and "up" at its
 * end, which also lifts the limits).  On the test cluster: a token
 * bucket (tc tbf) and a random drop (nftables), this kernel having no
 * netem; no fixed delay (docs/cluster.md). */
#define KVI_LINK_SLOW 1003
#define KVI_MAX_LISTED 1024   /* most ranks a target=ranks: list may name */

/* Who dies in one failure event. */
typedef enum kvi_target_kind {
    KVI_TARGET_RANKS = 0,   /* the listed ranks */
    KVI_TARGET_RANDOM = 1,  /* K ranks drawn at random, fresh ones per event */
    KVI_TARGET_HOST = 2,    /* every rank on one host (its daemon lives on) */
    KVI_TARGET_NODE = 3     /* a node loss: every rank of a node and its daemon */
} kvi_target_kind;

/* What a killed process is to the run (the kill log's role column). */
typedef enum kvi_role {
    KVI_ROLE_RANK = 0,          /* an MPI rank */
    KVI_ROLE_DAEMON = 1,        /* the ranks' parent: prted, or prterun on the launch node */
    KVI_ROLE_DAEMON_PARENT = 2, /* the daemon's parent when it is a prted too: PRRTE
                                   starts each remote daemon as a prted that forks the
                                   real one and waits for it */
    KVI_ROLE_HOST = 3           /* a host's network link (KVI_LINK_DOWN, KVI_LINK_UP) */
} kvi_role;

/* When failure events happen; event e (0-based) is at the e+1-th step. */
typedef enum kvi_when_kind {
    KVI_WHEN_OPS = 0,      /* (e+1)*ops operations of the victim rank */
    KVI_WHEN_TIME = 1,     /* (e+1)*time_s seconds after the run's start */
    KVI_WHEN_EXP = 2,      /* sum of e+1 exponential draws, mean mtbf_s */
    KVI_WHEN_WEIBULL = 3,  /* sum of e+1 Weibull draws, mean mtbf_s, given shape */
    KVI_WHEN_TRACE = 4     /* a failure log's times (times scale) and nodes, replayed */
} kvi_when_kind;

/* A parsed spec.  Plain data (no pointers): copy it freely, nothing to free. */
typedef struct kvi_spec {
    int signal;                    /* SIGKILL, SIGTERM, SIGSEGV, SIGSTOP, KVI_LINK_DOWN,
                                      KVI_VANISH or KVI_LINK_SLOW */
    long long rate_kbit;           /* KVI_LINK_SLOW: the link's rate in kbit/s; 0 none */
    double loss_pct;               /* KVI_LINK_SLOW: packets dropped, percent in [0, 100) */
    double for_s;                  /* SIGSTOP, KVI_LINK_DOWN, KVI_VANISH, KVI_LINK_SLOW: > 0, the fault
                                      ends this long after it began (SIGCONT: a straggler;
                                      the link put back: a partition healed; a vanished
                                      node's processes killed, its link put back); 0, for
                                      good (not with KVI_VANISH) */
    kvi_target_kind target;
    int listed[KVI_MAX_LISTED];    /* KVI_TARGET_RANKS: the ranks, distinct */
    int nlisted;
    int random_k;                  /* KVI_TARGET_RANDOM: ranks per event */
    char host[KVI_HOST_MAX];       /* KVI_TARGET_HOST, KVI_TARGET_NODE: the host name */
    int node_random;               /* KVI_TARGET_NODE: 1 = drawn (node:random), host "" */
    int node_k;                    /* KVI_TARGET_NODE drawn: nodes lost together per event
                                      (node:random:K); 1 otherwise */
    int daemon_only;               /* KVI_TARGET_NODE: 1 = the node's Open MPI daemon alone
                                      (daemon:random, daemon:NAME), its ranks spared */
    kvi_when_kind when;
    long long ops;                 /* KVI_WHEN_OPS */
    double time_s;                 /* KVI_WHEN_TIME */
    double mtbf_s;                 /* KVI_WHEN_EXP and KVI_WHEN_WEIBULL */
    double shape;                  /* KVI_WHEN_WEIBULL */
    char trace[256];               /* KVI_WHEN_TRACE: the failure log's path (node targets) */
    double scale;                  /* KVI_WHEN_TRACE: its times are multiplied by this (> 0) */
    int count;                     /* failure events, >= 1; with KVI_WHEN_TRACE at most
                                      this many (0: every one the log has) */
    int spread;                    /* 0: victims of an event die together; 1: one by one */
    double cascade_s;              /* > 0: every event after the first comes this long after
                                      the one before (time-based when= only); 0: the law's */
    unsigned long long seed;
    int force;                     /* 1: skip the survivability limits */
    int allow_rank0;               /* 1: rank 0 may be a victim (the parser's default,
                                      except for node targets: 0, rank 0's node is the
                                      launch node, whose loss ends an Open MPI job) */
} kvi_spec;

/* One rank as the pid table records it. */
typedef struct kvi_rank_info {
    int rank;
    int pid;                  /* 0 when unknown (in-process form) */
    char host[KVI_HOST_MAX];
    int daemon;               /* its Open MPI daemon (KVI_ROLE_DAEMON); 0 when unknown */
    int daemon_parent;        /* KVI_ROLE_DAEMON_PARENT; 0 when there is none */
} kvi_rank_info;

/* How an event's moment is expressed. */
typedef enum kvi_at_kind {
    KVI_AT_OPS = 0,   /* at_ops operations of the victim */
    KVI_AT_TIME = 1   /* at_time_s seconds after the run's start */
} kvi_at_kind;

/* One kill: a victim process at a moment.  Victims of one simultaneous
 * failure event share its index (and its moment); a node loss lists the
 * node's daemon processes first, then its ranks, the in-process executor
 * (by_rank) last. */
typedef struct kvi_event {
    int index;                /* failure event number, 0-based */
    int rank;                 /* the victim rank; -1 for a daemon */
    int pid;                  /* from the rank table; 0 when unknown */
    int role;                 /* kvi_role */
    int by_rank;              /* the rank that sends this kill in the in-process form:
                                 the victim itself, or for a node loss the node's
                                 lowest rank, which kills the others, then itself */
    char host[KVI_HOST_MAX];
    int signal;
    kvi_at_kind kind;
    long long at_ops;         /* KVI_AT_OPS; -1 otherwise */
    double at_time_s;         /* KVI_AT_TIME; -1 otherwise */
    double resume_s;          /* > 0: the fault ends this long after (the spec's for=)
                                 with end_signal; 0 otherwise */
    int end_signal;           /* what ends it: SIGCONT (a straggler), SIGKILL (a
                                 vanished node's process), KVI_LINK_UP; 0 none */
    long long rate_kbit;      /* KVI_LINK_SLOW: the spec's */
    double loss_pct;
} kvi_event;

/* A drawn schedule: events in firing order (event index ascending). */
typedef struct kvi_schedule {
    kvi_event *events;        /* owned; release with kvi_schedule_free */
    int nevents;
    unsigned long long seed;  /* the seed it was drawn with */
} kvi_schedule;

/* ---- helpers ------------------------------------------------------------ */

/* kvi_wall_ns: CLOCK_REALTIME in integer nanoseconds since 1970, the
 * clock of the kill log (and of meta.json's run_start_wall_ns).
 * kvi_now: the same clock in seconds as a double (a step of 0.24 us at
 * today's epoch), for the moments of a schedule only, never a duration. */
long long kvi_wall_ns(void);
double kvi_now(void);

/* kvi_hostname: this host's name as gethostname() gives it (the name the
 * pid table records).  buf: caller's, len >= 2.  Returns 0, or -1 (errno). */
int kvi_hostname(char *buf, size_t len);

/* kvi_host_is_local: 1 when host names this machine: NULL, "", "localhost",
 * kvi_hostname(), or the same name with or without a domain; else 0. */
int kvi_host_is_local(const char *host);

/* kvi_signal_name: "KILL", "TERM", "SEGV", "STOP" for the four injector
 * signals, "CONT" for the end of a straggler's stop (the log's),
 * "LINKDOWN" and "LINKUP" for a partition's cut and end, "SLOW" for a slow
 * link (its end is "LINKUP"), "?" for any
 * other.  Static string: do not free. */
const char *kvi_signal_name(int sig);

/* kvi_role_name: "rank", "daemon", "daemon-parent", "host"; "?" for any other. */
const char *kvi_role_name(int role);

/* kvi_self_info: this process as the pid table records it: rank, getpid(),
 * kvi_hostname(), and its daemon: the parent process when that is an Open
 * MPI runtime process (prted, prterun, mpirun, mpiexec, orted), and the
 * daemon's own parent when that is a prted too (Linux /proc).  Returns 0,
 * or -1 (errno) when the host name cannot be read. */
int kvi_self_info(int rank, kvi_rank_info *out);

/* kvi_parent_of: the parent of process pid (0 if unknown), and that
 * parent's command name into comm (len bytes; "" if unknown), from
 * Linux /proc. */
int kvi_parent_of(int pid, char *comm, size_t len);

/* ---- spec ---------------------------------------------------------------- */

/* kvi_spec_parse: parse a schedule spec, e.g.
 *   "signal=KILL; target=random:2; when=ops:5000; count=1; spread=simultaneous; seed=42"
 * Items are name=value, separated by ';' or newlines; see injectors/README.md.
 * text: caller's, NUL-terminated.  out: caller's, fully overwritten.
 * err/errlen: caller's buffer for a one-line message (may be NULL/0).
 * Returns 0, or -1 with a message that starts with the bad item's name
 * (unknown names, malformed or missing values, repeated items, a missing
 * target= or when=, count > 1 with a fixed target). */
int kvi_spec_parse(const char *text, kvi_spec *out, char *err, size_t errlen);

/* ---- schedule ------------------------------------------------------------ */

/* kvi_schedule_build: draw the schedule of `spec` over `ranks`.
 * ranks: caller's table of nranks entries, each rank 0..nranks-1 exactly
 * once (any order); pid and host are copied into the events, and for a
 * node loss the node's daemon pids (distinct, when known).
 * max_simultaneous: how many ranks the store can lose at once (replicas-1,
 * or more with spares); for a node target, how many nodes (placement keeps
 * the copies of a pair on distinct nodes).  Refused unless spec->force: an
 * event killing more than that at once, more than nranks-1 ranks in total,
 * or every node.  Always refused: a victim that does not exist, rank 0 (or
 * its node) with allow_rank0=0, more random victims than eligible ranks or
 * nodes, an unknown host.
 * Victims are drawn first, then times, from one xoshiro256** stream seeded
 * by splitmix64(seed).  out: caller's struct; on success it owns a buffer
 * the caller frees with kvi_schedule_free.  Returns 0, or -1 with a message
 * in err naming the item at fault (out is then empty). */
int kvi_schedule_build(const kvi_spec *spec, const kvi_rank_info *ranks, int nranks,
                       int max_simultaneous, kvi_schedule *out, char *err, size_t errlen);

/* kvi_schedule_write_csv: write the schedule to f, header first:
 *   event,target_rank,pid,host,signal,when_kind,at_ops,at_time_s,role,for_s
 * when_kind is "ops" or "time"; the column that does not apply is empty;
 * role is kvi_role_name's; for_s is the stop's length (empty unless the
 * spec's for=).
 * Returns 0, or -1 if a write failed (errno). */
int kvi_schedule_write_csv(const kvi_schedule *s, FILE *f);

/* kvi_schedule_free: release the events; s is left empty.  NULL is fine. */
void kvi_schedule_free(kvi_schedule *s);

/* kvi_trace_write_weibull: write a failure log for when=trace:FILE to f:
 * count failures whose gaps are drawn from a Weibull law of mean mtbf_s
 * seconds and the given shape (in [0.1, 100]), each on a node drawn
 * uniformly among `nodes` (named node0..), from the schedule's generator
 * seeded with seed; a comment line says how it was made.  Returns 0, or
 * -1 (errno: EINVAL for a bad argument, or the write's). */
int kvi_trace_write_weibull(FILE *f, double mtbf_s, double shape, int nodes, int count,
                            unsigned long long seed);

/* ---- kill log and kill --------------------------------------------------- */

/* kvi_log_kill: append "kill,target_rank,pid,host,signal,role,time_ns" to the CSV
 * file at path (the header is written when the file is new or empty), with
 * time_ns = kvi_wall_ns() taken as the last step before the write; then fsync.
 * The caller sends the signal right after.  The file is locked (flock) for
 * the append, so ranks sharing one log do not interleave.  ev: the event
 * (its index is the "kill" column); pid/host: the victim's (override ev's;
 * host may be NULL for ev->host).  when_ns: if not NULL, receives time_ns.
 * Returns 0, or -1 (errno) if the file could not be written. */
int kvi_log_kill(const char *path, const kvi_event *ev, int pid, const char *host,
                 long long *when_ns);

/* kvi_kill: log the kill (if log_path is not NULL), then send ev->signal.
 * pid: the victim's (<= 0: ev->pid); host: the victim's (NULL or "": ev->host).
 * On this host (host equal to kvi_hostname(), "localhost" or empty) it uses
 * kill(2), after checking the pid exists; elsewhere it runs the command
 * template in the environment variable KV_INJECT_REMOTE, e.g.
 *   ssh {host} kill -{signal} {pid}
 * with {host}, {pid}, {rank}, {signal} (name) and {signum} replaced, through
 * /bin/sh.  Nothing is sent (or logged) if the local pid cannot be
 * signalled, and nothing is sent if the log cannot be written.  Returns 0,
 * or -1 with errno: ESRCH/EPERM (local pid gone or not ours), ENOTSUP
 * (remote host and no KV_INJECT_REMOTE), EINVAL (bad pid or host name, or
 * the command too long), EIO (the hook failed), or the log's error. */
int kvi_kill(const kvi_event *ev, int pid, const char *host, const char *log_path);

/* kvi_kill_group: the kills of one failure event, sent as close together
 * as they can be: every local victim is checked (kill(pid, 0)) and the log
 * opened, then the signals are sent by consecutive kill(2) calls in the
 * order of evs, each victim's timestamp read right before its signal, and
 * the lines of those signalled are logged afterwards in one write and one
 * fsync (before the signals when this process is itself a victim).  Victims on another host
 * go through KV_INJECT_REMOTE: a template holding {pids} gets one command
 * per run of consecutive victims of one host ({pids}: their pids, space
 * separated; {pid} and {rank}: the first one's), any other template one
 * command per victim.  evs: n events (pid and host from each).  err: the
 * caller's array of n (may be NULL), set to 0 for a kill sent and to the
 * errno of one not sent (as kvi_kill).  spread_s (may be NULL): seconds
 * from the first signal to the last (the remote hooks' run time counts).
 * Returns how many kills were not sent, or -1 (errno) for bad arguments, a
 * log that cannot be opened (then nothing is sent; err untouched) or a log
 * whose lines could not be written after the signals (err is then set). */
int kvi_kill_group(const kvi_event *evs, int n, const char *log_path, int *err,
                   double *spread_s);

/* ---- in-process form ----------------------------------------------------- */

typedef struct kvi_inproc kvi_inproc;   /* opaque */

/* kvi_inproc_start: take the events of `my_rank` from s (copied; s may be
 * freed afterwards).  run_start_wallclock: kvi_now() at the run's start,
 * the same on every rank (broadcast it).  log_path: kill log (copied; NULL
 * for none).  Returns a handle (also when my_rank has no event), or NULL
 * with errno (ENOMEM, EINVAL). */
kvi_inproc *kvi_inproc_start(const kvi_schedule *s, int my_rank, double run_start_wallclock,
                             const char *log_path);

/* kvi_inproc_tick: call once per operation with the count done so far.
 * When nothing is due it costs two compares and an increment: the clock is
 * read every 64th call only, so time events fire up to 64 operations late.
 * When an event is due it logs the kill (a failed log is reported on
 * stderr, and the kill goes ahead) and sends the signal to this process;
 * with SIGKILL it does not return.  A stop with resume_s starts a helper
 * (/bin/sh, by posix_spawn: no fork of this process) that continues the
 * victims resume_s later, and logs their CONT lines once this process
 * runs again.  p may be NULL (then it does nothing). */
void kvi_inproc_tick(kvi_inproc *p, long long ops_done);

/* kvi_inproc_pending: events of this rank not fired yet (0 for NULL). */
int kvi_inproc_pending(const kvi_inproc *p);

/* kvi_inproc_free: release the handle.  NULL is fine. */
void kvi_inproc_free(kvi_inproc *p);

/* ---- pid table (external form) ------------------------------------------- */

/* kvi_publish_pid: write "rank pid host daemon daemon_parent" (kvi_self_info)
 * to dir/rank.N (N = rank) through a temporary file and rename(2), so a
 * reader never sees half a line.  Creates dir if missing.  Call once per
 * rank at start-up (not collective).  Returns 0, or -1 (errno).
 * kvi_publish_pid_of does the same for another process of this host (pid),
 * as the table's entry N, with no daemon (0 0). */
int kvi_publish_pid(const char *dir, int rank);
int kvi_publish_pid_of(const char *dir, int rank, int pid);

/* kvi_read_pids: read dir/rank.0 .. rank.(nranks-1), polling every 20 ms
 * until all are there or timeout_s has passed.  out: caller's array of
 * nranks entries, out[i] is rank i; entries not found have pid 0.  A line
 * is "rank pid host", optionally followed by "daemon daemon_parent" (pids,
 * 0 = none; a table without them is read with daemon 0).
 * Returns 0, or -1 with errno ETIMEDOUT (some missing: see out), EINVAL
 * (bad arguments), EBADMSG (a file that is not such a line). */
int kvi_read_pids(const char *dir, int nranks, double timeout_s, kvi_rank_info *out);

#ifdef __cplusplus
}
#endif

#endif
