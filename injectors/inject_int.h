/*
 * inject_int.h -- internals shared by the injector's .c files (not installed).
 *
 * The draws of schedule.c on kv_util.h's generator (xoshiro256** seeded
 * through splitmix64, our own so that a seed gives the same stream on every
 * machine and libc); kv_util.h also has the error-message helper every
 * parser and checker uses (kvu_fail).
 */
#ifndef KV_INJECT_INT_H
#define KV_INJECT_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "inject.h"
#include "kv_util.h"

typedef kvu_rng kvi_rng;
double kvi__rng_open01(kvi_rng *r);              /* uniform in (0, 1) */
uint64_t kvi__rng_below(kvi_rng *r, uint64_t n); /* uniform in [0, n), n > 0 */

/* Faults that can end (the spec's for=): a stop, a cut or slow link, a
 * vanished node (whose end is required). */
static inline int kvi__can_end(int sig) {
    return sig == SIGSTOP || sig == KVI_LINK_DOWN || sig == KVI_VANISH || sig == KVI_LINK_SLOW;
}

/* Faults of a host's link, done through KV_INJECT_LINK, not by a signal. */
static inline int kvi__is_link(int sig) {
    return sig == KVI_LINK_DOWN || sig == KVI_LINK_UP || sig == KVI_LINK_SLOW;
}

/* What ends a fault of spec signal sig for a victim of role `role`: a
 * stop is continued, a cut link put back, a vanished node's processes
 * killed and its link put back. */
static inline int kvi__end_signal(int sig, int role) {
    if (sig == KVI_VANISH) return role == KVI_ROLE_HOST ? KVI_LINK_UP : SIGKILL;
    return sig == SIGSTOP ? SIGCONT : sig == KVI_LINK_DOWN || sig == KVI_LINK_SLOW ? KVI_LINK_UP : 0;
}

/* p without its leading and trailing white space (cut in place), spec.c. */
char *kvi__trim(char *p);

/* A gap between two failures drawn from s's law (KVI_WHEN_EXP or
 * KVI_WHEN_WEIBULL), schedule.c. */
double kvi__draw_gap(const kvi_spec *s, kvi_rng *rng);

/* A failure log read for replay (trace.c): n failures, t[i] seconds from
 * its start, node[i] the index of its node's name among the log's
 * distinct names (numbered in the order of their first failure). */
typedef struct kvi__trace {
    int n, nnames;
    double *t;
    int *node;
} kvi__trace;
int kvi__trace_read(const char *path, kvi__trace *tr, char *err, size_t len);
void kvi__trace_free(kvi__trace *tr);

/* A straggler: stopped, then continued; it loses nothing, so no
 * survivability limit applies (a cut link has them: a long cut is a
 * node loss). */
static inline int kvi__straggler(const kvi_spec *s) { return s->signal == SIGSTOP && s->for_s > 0; }

/* True when s is a usable host name: 1..63 chars of [A-Za-z0-9._-]. */
int kvi__valid_host(const char *s);

/* killlog.c: log the kills evs[i] with pick[i] != 0 (all when pick is
 * NULL) in one locked write and one fsync, each timestamp read as its line
 * is formatted; *when (may be NULL): the last line's timestamp.  0, or -1
 * (errno).  kvi__log_open and kvi__log_write are its two halves, for lines
 * written after the signals: the timestamps are then times[i] (NULL: read
 * at formatting), and kvi__log_write closes fd. */
int kvi__log_lines(const char *path, const kvi_event *evs, int n, const int *pick,
                   long long *when_ns);
int kvi__log_open(const char *path);
int kvi__log_write(int fd, const kvi_event *evs, int n, const int *pick, const long long *times,
                   long long *when_ns);

/* kill.c: kvi_kill_group; all_local: every victim is on this host, whatever
 * its host name (the in-process form: a rank kills its own node). */
int kvi__kill_group(const kvi_event *evs, int n, const char *log_path, int *err,
                    double *spread_s, int all_local);

/* schedule.c: the moment of failure event e (0-based) into ev's kind,
 * at_ops and at_time_s; *t accumulates the drawn times. */
void kvi__set_moment(const kvi_spec *s, kvi_rng *rng, int e, double *t, kvi_event *ev);

/* nodeloss.c: the schedule of a node target (kvi_schedule_build's part
 * for it).  idx[r] = position of rank r in ranks[]. */
int kvi__build_node_loss(const kvi_spec *s, kvi_rng *rng, const kvi_rank_info *ranks,
                         int nranks, const int *idx, int max_sim, kvi_schedule *out,
                         char *err, size_t len);

#endif
