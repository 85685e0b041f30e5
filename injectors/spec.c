/*
 * spec.c -- the schedule spec parser (kvi_spec_parse).
 *
 * A spec is name=value items separated by ';' or newlines.  A table maps
 * each name to a small parser; every parser reports its own errors, always
 * starting with the item's name, so a driver can show the user exactly
 * which item to fix.  After all items are read a final pass checks what
 * needs the whole spec: target= and when= present, count=1 for fixed
 * targets (a rank dies only once), and rank 0's node spared by a node
 * target unless allow_rank0=1 was given (rank 0 runs on the launch node,
 * whose loss ends an Open MPI job).  The spec only describes the schedule;
 * checks against the actual ranks happen in kvi_schedule_build.  A failure
 * log (when=trace:FILE) is read here too, only to refuse a malformed one
 * with the spec; the schedule reads it again.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "inject_int.h"

#define MAX_RANK (1 << 24)      /* largest rank number a spec may name */
#define MAX_COUNT 1000000       /* failure events per run */

static int parse_signal(const char *v, kvi_spec *s, char *err, size_t len) {
    static const struct { const char *name; int sig; } sigs[] = {
        {"KILL", SIGKILL}, {"TERM", SIGTERM}, {"SEGV", SIGSEGV}, {"STOP", SIGSTOP},
        {"LINK", KVI_LINK_DOWN}, {"LINKDOWN", KVI_LINK_DOWN}, {"VANISH", KVI_VANISH},
        {"SLOW", KVI_LINK_SLOW}};
    const char *name = strncasecmp(v, "SIG", 3) == 0 ? v + 3 : v;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (strcasecmp(name, sigs[i].name) == 0) {
            s->signal = sigs[i].sig;
            return 0;
        }
    return kvu_fail(err, len, "signal: '%s' is not KILL, TERM, SEGV, STOP, LINK, VANISH or SLOW", v);
}

/* "3,5,7": distinct ranks. */
static int parse_rank_list(const char *v, kvi_spec *s, char *err, size_t len) {
    char buf[16];
    s->nlisted = 0;
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        long long r;
        if (n == 0 || n >= sizeof buf)
            return kvu_fail(err, len, "target: bad rank list 'ranks:%s'", v);
        memcpy(buf, p, n);
        buf[n] = '\0';
        if (kvu_parse_ll(buf, 0, MAX_RANK, false, &r))
            return kvu_fail(err, len, "target: '%s' in 'ranks:%s' is not a rank number", buf, v);
        for (int i = 0; i < s->nlisted; i++)
            if (s->listed[i] == r)
                return kvu_fail(err, len, "target: rank %lld listed twice", r);
        if (s->nlisted == KVI_MAX_LISTED)
            return kvu_fail(err, len, "target: more than %d ranks listed", KVI_MAX_LISTED);
        s->listed[s->nlisted++] = (int)r;
        if (!p[n]) return 0;
        p += n + 1;
    }
}

/* node:random or node:NAME: a node loss; daemon:random or daemon:NAME
 * (kind "daemon"): its daemon alone. */
static int parse_node(const char *kind, const char *v, kvi_spec *s, char *err, size_t len) {
    s->target = KVI_TARGET_NODE;
    s->daemon_only = strcmp(kind, "daemon") == 0;
    if (strcmp(v, "random") == 0) {
        s->node_random = 1;
        return 0;
    }
    if (strncmp(v, "random:", 7) == 0 && !s->daemon_only) {   /* K nodes lost together */
        long long k;
        if (kvu_parse_ll(v + 7, 1, MAX_RANK, false, &k))
            return kvu_fail(err, len, "target: 'node:%s' needs node:random:K with a whole "
                             "number K >= 1", v);
        s->node_random = 1;
        s->node_k = (int)k;
        return 0;
    }
    if (!kvi__valid_host(v))
        return kvu_fail(err, len, "target: '%s:%s' needs %s:random or a host name of 1-%d "
                         "letters, digits, '.', '-' or '_'", kind, v, kind, KVI_HOST_MAX - 1);
    snprintf(s->host, sizeof s->host, "%s", v);
    return 0;
}

static int parse_target(const char *v, kvi_spec *s, char *err, size_t len) {
    long long k;
    if (strncmp(v, "ranks:", 6) == 0) {
        s->target = KVI_TARGET_RANKS;
        return parse_rank_list(v + 6, s, err, len);
    }
    if (strncmp(v, "random:", 7) == 0) {
        if (kvu_parse_ll(v + 7, 1, MAX_RANK, false, &k))
            return kvu_fail(err, len, "target: 'random:%s' needs a whole number K >= 1", v + 7);
        s->target = KVI_TARGET_RANDOM;
        s->random_k = (int)k;
        return 0;
    }
    if (strncmp(v, "host:", 5) == 0) {
        if (!kvi__valid_host(v + 5))
            return kvu_fail(err, len, "target: 'host:%s' needs a host name of 1-%d letters, "
                             "digits, '.', '-' or '_'", v + 5, KVI_HOST_MAX - 1);
        s->target = KVI_TARGET_HOST;
        snprintf(s->host, sizeof s->host, "%s", v + 5);
        return 0;
    }
    if (strncmp(v, "node:", 5) == 0) return parse_node("node", v + 5, s, err, len);
    if (strncmp(v, "daemon:", 7) == 0) return parse_node("daemon", v + 7, s, err, len);
    return kvu_fail(err, len, "target: '%s' is not ranks:LIST, random:K, node:random, "
                     "node:NAME, daemon:random, daemon:NAME or host:NAME", v);
}

/* "MTBF,SHAPE" of weibull: */
static int parse_weibull(const char *v, kvi_spec *s, char *err, size_t len) {
    char buf[64];
    const char *comma = strchr(v, ',');
    size_t n = comma ? (size_t)(comma - v) : 0;
    if (!comma || n >= sizeof buf)
        return kvu_fail(err, len, "when: 'weibull:%s' needs weibull:MTBF,SHAPE", v);
    memcpy(buf, v, n);
    buf[n] = '\0';
    if (kvu_parse_double(buf, &s->mtbf_s) || s->mtbf_s <= 0)
        return kvu_fail(err, len, "when: weibull MTBF '%s' is not a number of seconds > 0", buf);
    /* Shapes far outside [0.1, 100] make tgamma() and the draws degenerate. */
    if (kvu_parse_double(comma + 1, &s->shape) || s->shape < 0.1 || s->shape > 100)
        return kvu_fail(err, len, "when: weibull shape '%s' is not a number in [0.1, 100]",
                         comma + 1);
    s->when = KVI_WHEN_WEIBULL;
    return 0;
}

/* trace:FILE: a failure log, read now so that a bad one is refused with
 * the spec (and again when the schedule is built). */
static int parse_trace(const char *v, kvi_spec *s, char *err, size_t len) {
    if (!*v || strlen(v) >= sizeof s->trace)
        return kvu_fail(err, len, "when: 'trace:%s' needs a file name of 1-%zu characters", v,
                         sizeof s->trace - 1);
    kvi__trace tr;
    if (kvi__trace_read(v, &tr, err, len)) return -1;
    kvi__trace_free(&tr);
    snprintf(s->trace, sizeof s->trace, "%s", v);
    s->when = KVI_WHEN_TRACE;
    return 0;
}

static int parse_when(const char *v, kvi_spec *s, char *err, size_t len) {
    if (strncmp(v, "ops:", 4) == 0) {
        if (kvu_parse_ll(v + 4, 0, LLONG_MAX / MAX_COUNT, false, &s->ops))
            return kvu_fail(err, len, "when: 'ops:%s' needs a whole number N >= 0", v + 4);
        s->when = KVI_WHEN_OPS;
        return 0;
    }
    if (strncmp(v, "time:", 5) == 0) {
        if (kvu_parse_double(v + 5, &s->time_s) || s->time_s < 0)
            return kvu_fail(err, len, "when: 'time:%s' needs seconds >= 0", v + 5);
        s->when = KVI_WHEN_TIME;
        return 0;
    }
    if (strncmp(v, "exp:", 4) == 0) {
        if (kvu_parse_double(v + 4, &s->mtbf_s) || s->mtbf_s <= 0)
            return kvu_fail(err, len, "when: 'exp:%s' needs an MTBF in seconds > 0", v + 4);
        s->when = KVI_WHEN_EXP;
        return 0;
    }
    if (strncmp(v, "weibull:", 8) == 0) return parse_weibull(v + 8, s, err, len);
    if (strncmp(v, "trace:", 6) == 0) return parse_trace(v + 6, s, err, len);
    return kvu_fail(err, len, "when: '%s' is not ops:N, time:S, exp:MTBF, "
                     "weibull:MTBF,SHAPE or trace:FILE", v);
}

static int parse_count(const char *v, kvi_spec *s, char *err, size_t len) {
    long long n;
    if (kvu_parse_ll(v, 1, MAX_COUNT, false, &n))
        return kvu_fail(err, len, "count: '%s' is not a whole number in [1, %d]", v, MAX_COUNT);
    s->count = (int)n;
    return 0;
}

static int parse_spread(const char *v, kvi_spec *s, char *err, size_t len) {
    if (strcmp(v, "simultaneous") == 0) s->spread = 0;
    else if (strcmp(v, "spread") == 0) s->spread = 1;
    else return kvu_fail(err, len, "spread: '%s' is not simultaneous or spread", v);
    return 0;
}

static int parse_seed(const char *v, kvi_spec *s, char *err, size_t len) {
    char *end;
    errno = 0;
    int hex = v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
    unsigned long long x = strtoull(v, &end, hex ? 16 : 10);
    if (!isdigit((unsigned char)v[0]) || errno || *end)
        return kvu_fail(err, len, "seed: '%s' is not a whole number >= 0", v);
    s->seed = x;
    return 0;
}

#define MAX_FOR_S 86400.0       /* the longest stop (a day) */

/* A number in (0, max] for item `name` into *out. */
static int positive(const char *name, const char *v, double max, double *out, char *err,
                    size_t len) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x > 0 && x <= max))
        return max == HUGE_VAL ? kvu_fail(err, len, "%s: '%s' is not a number > 0", name, v)
                               : kvu_fail(err, len, "%s: '%s' is not a number of seconds in "
                                          "(0, %.0f]", name, v, max);
    *out = x;
    return 0;
}

static int parse_for(const char *v, kvi_spec *s, char *err, size_t len) {
    return positive("for", v, MAX_FOR_S, &s->for_s, err, len);
}

/* rate=: a whole number with a unit, kbit, mbit or gbit (per second), as
 * tc takes it; kept in kbit/s. */
static int parse_rate(const char *v, kvi_spec *s, char *err, size_t len) {
    static const struct { const char *unit; long long kbit; } units[] = {
        {"kbit", 1}, {"mbit", 1000}, {"gbit", 1000000}};
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (isdigit((unsigned char)v[0]) && !errno && x > 0 && strcasecmp(end, units[i].unit) == 0 &&
            x <= 100000000 / units[i].kbit) {
            s->rate_kbit = x * units[i].kbit;
            return 0;
        }
    return kvu_fail(err, len, "rate: '%s' is not a rate such as 500kbit, 10mbit or 1gbit "
                     "(at most 100gbit)", v);
}

/* cascade=: the gap between one event and the next, in seconds (> 0). */
static int parse_cascade(const char *v, kvi_spec *s, char *err, size_t len) {
    return positive("cascade", v, MAX_FOR_S, &s->cascade_s, err, len);
}

/* scale=: a trace's times are multiplied by it (> 0). */
static int parse_scale(const char *v, kvi_spec *s, char *err, size_t len) {
    double x;
    if (positive("scale", v, HUGE_VAL, &x, err, len) || !isfinite(x))
        return kvu_fail(err, len, "scale: '%s' is not a number > 0", v);
    s->scale = x;
    return 0;
}

/* loss=: the share of packets dropped, in percent, [0, 100). */
static int parse_loss(const char *v, kvi_spec *s, char *err, size_t len) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || (*end && strcmp(end, "%")) || !(x >= 0 && x < 100))
        return kvu_fail(err, len, "loss: '%s' is not a percentage in [0, 100)", v);
    s->loss_pct = x;
    return 0;
}

static int parse_flag(const char *name, const char *v, int *out, char *err, size_t len) {
    if (strcmp(v, "0") && strcmp(v, "1"))
        return kvu_fail(err, len, "%s: '%s' is not 0 or 1", name, v);
    *out = v[0] == '1';
    return 0;
}

static int parse_force(const char *v, kvi_spec *s, char *err, size_t len) {
    return parse_flag("force", v, &s->force, err, len);
}

static int parse_rank0(const char *v, kvi_spec *s, char *err, size_t len) {
    return parse_flag("allow_rank0", v, &s->allow_rank0, err, len);
}

typedef int (*item_fn)(const char *v, kvi_spec *s, char *err, size_t len);

static const struct {
    const char *name;
    item_fn fn;
} items[] = {
    {"signal", parse_signal}, {"target", parse_target}, {"when", parse_when},
    {"count", parse_count},   {"spread", parse_spread}, {"seed", parse_seed},
    {"force", parse_force},   {"allow_rank0", parse_rank0}, {"for", parse_for},
    {"rate", parse_rate},     {"loss", parse_loss},   {"scale", parse_scale},
    {"cascade", parse_cascade},
};
enum { NITEMS = sizeof items / sizeof items[0] };

/* Whether the item called name was given (seen: per item of items[]). */
static int given(const int *seen, const char *name) {
    for (int i = 0; i < NITEMS; i++)
        if (strcmp(items[i].name, name) == 0) return seen[i];
    return 0;
}

char *kvi__trim(char *p) {
    while (isspace((unsigned char)*p)) p++;
    char *e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1])) *--e = '\0';
    return p;
}

/* One "name=value" (modified in place).  seen: items already given. */
static int parse_item(char *item, kvi_spec *s, int *seen, char *err, size_t len) {
    char *eq = strchr(item, '=');
    if (!eq) return kvu_fail(err, len, "%s: not name=value", item);
    *eq = '\0';
    char *name = kvi__trim(item), *val = kvi__trim(eq + 1);
    for (int i = 0; i < NITEMS; i++) {
        if (strcmp(name, items[i].name)) continue;
        if (seen[i]) return kvu_fail(err, len, "%s: given twice", name);
        if (!*val) return kvu_fail(err, len, "%s: missing value", name);
        seen[i] = 1;
        return items[i].fn(val, s, err, len);
    }
    char known[128] = "";
    for (int i = 0; i < NITEMS; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                 items[i].name);
    return kvu_fail(err, len, "%s: unknown item (known: %s)", *name ? name : "''", known);
}

/* Checks that need the whole spec (and the node target's rank 0 default). */
static int check_whole(kvi_spec *s, const int *seen, char *err, size_t len) {
    if (!given(seen, "target"))
        return kvu_fail(err, len, "target: missing (e.g. target=ranks:1 or target=random:1)");
    if (!given(seen, "when"))
        return kvu_fail(err, len, "when: missing (e.g. when=time:5 or when=exp:30)");
    int drawn = s->target == KVI_TARGET_RANDOM || (s->target == KVI_TARGET_NODE && s->node_random);
    int trace = s->when == KVI_WHEN_TRACE;
    if (given(seen, "scale") && !trace)
        return kvu_fail(err, len, "scale: a trace's time scale, only with when=trace:FILE");
    if (trace && !(s->target == KVI_TARGET_NODE && s->node_random && !s->daemon_only && s->node_k == 1))
        return kvu_fail(err, len, "target: when=trace:FILE replays node failures: it needs "
                         "target=node:random (the log's nodes are given the run's)");
    if (trace && !given(seen, "count")) s->count = 0;   /* every failure of the log */
    if (s->cascade_s > 0 && (s->when == KVI_WHEN_OPS || trace))
        return kvu_fail(err, len, "cascade: the gap between events, with when=time:, exp: or "
                         "weibull: only");
    if (s->count > 1 && !drawn)
        return kvu_fail(err, len, "count: %d events with a fixed target would kill the same "
                         "ranks again; use count=1 (spread=spread separates them in time), "
                         "target=random:K or target=node:random", s->count);
    if (s->target == KVI_TARGET_NODE && !given(seen, "allow_rank0")) s->allow_rank0 = 0;
    if (s->for_s > 0 && !kvi__can_end(s->signal))
        return kvu_fail(err, len, "for: a fault's length, only with signal=STOP (a straggler: "
                         "stopped, then continued %g s later), signal=LINK (a partition), "
                         "signal=VANISH or signal=SLOW", s->for_s);
    int slow = s->signal == KVI_LINK_SLOW;
    if ((given(seen, "rate") || given(seen, "loss")) && !slow)
        return kvu_fail(err, len, "%s: a slow link's setting, only with signal=SLOW",
                         given(seen, "rate") ? "rate" : "loss");
    if (slow && !(s->rate_kbit > 0 || s->loss_pct > 0))
        return kvu_fail(err, len, "signal: SLOW needs rate=RATE (e.g. 10mbit), loss=PERCENT "
                         "or both");
    if ((s->signal == KVI_LINK_DOWN || s->signal == KVI_VANISH || slow) &&
        (s->target != KVI_TARGET_NODE || s->daemon_only))
        return kvu_fail(err, len, "signal: %s is a fault of a host's network link: it needs "
                         "target=node:random or target=node:NAME", kvi_signal_name(s->signal));
    if (s->signal == KVI_VANISH && !(s->for_s > 0))
        return kvu_fail(err, len, "for: signal=VANISH needs for=S: the vanished node's "
                         "processes are killed and its link put back S seconds later (nothing "
                         "else would end them)");
    return 0;
}

static void spec_default(kvi_spec *s) {
    memset(s, 0, sizeof *s);
    s->signal = SIGKILL;
    s->count = 1;
    s->seed = 1;
    s->allow_rank0 = 1;  /* a real failure does not spare rank 0 */
    s->scale = 1;
    s->node_k = 1;
}

int kvi_spec_parse(const char *text, kvi_spec *out, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!text || !out) return kvu_fail(err, errlen, "spec: no text or no output");
    char *copy = strdup(text);
    if (!copy) return kvu_fail(err, errlen, "spec: out of memory");
    int seen[NITEMS] = {0}, rc = 0;
    spec_default(out);
    char *save = NULL;
    for (char *it = strtok_r(copy, ";\n", &save); it && rc == 0;
         it = strtok_r(NULL, ";\n", &save)) {
        char *t = kvi__trim(it);
        if (*t) rc = parse_item(t, out, seen, err, errlen);
    }
    free(copy);
    return rc ? rc : check_whole(out, seen, err, errlen);
}
