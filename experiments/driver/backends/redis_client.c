/*
 * redis_client.c -- the failover-following Redis connection of
 * redis_client.h, on hiredis's blocking API.
 *
 * A call is a pipeline: every command is appended, then every reply read,
 * so a write costs one round trip with its WAIT.  An attempt fails when
 * hiredis loses the connection (the primary was killed: EOF or reset) or a
 * reply says the server is not a usable primary (READONLY: still a replica;
 * LOADING, MASTERDOWN, TRYAGAIN); the context is then dropped, because
 * hiredis contexts are unusable after an I/O error and a demoted server
 * must not be written again.  Between attempts the client sleeps a few ms
 * and asks the sentinels (one kept connection) for the primary: Sentinel
 * answers with the old, dead address until it has promoted the replica,
 * so the first attempt that succeeds marks the end of the failover as this
 * client sees it.  Any other error reply (a bad command) is not retried.
 * Built without hiredis (kv_features.h) the functions only fail: redis.c
 * refuses driver.backend=redis in its settings check before any is called.
 */
#include "redis_client.h"
#include "kv_features.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if KV_HAVE_HIREDIS
#include <hiredis/hiredis.h>

#define RETRY_PAUSE_NS 5000000L   /* 5 ms between attempts: the failover time's resolution */
#define CONNECT_MS 500
#define ROLE_REFRESH_S 1.0        /* degraded: look for a returned replica this often */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct timeval tv_ms(long ms) { return (struct timeval){ms / 1000, (ms % 1000) * 1000}; }

static void drop(void **ctx) {
    if (*ctx) redisFree(*ctx);
    *ctx = NULL;
}

/* host "/path" is a Unix socket (port unused), as redis-cli -s. */
static redisContext *connect_to(rcl *r, const char *host, int port, const char *what) {
    redisContext *c = host[0] == '/' ? redisConnectUnixWithTimeout(host, tv_ms(CONNECT_MS))
                                     : redisConnectWithTimeout(host, port, tv_ms(CONNECT_MS));
    if (!c || c->err) {
        snprintf(r->err, sizeof r->err, "cannot connect to %s at %s:%d: %s", what, host, port,
                 c ? c->errstr : "out of memory");
        if (c) redisFree(c);
        return NULL;
    }
    /* Bounds a call to a frozen server; longer than WAIT's own timeout. */
    long ms = r->cfg.wait_timeout_ms + (long)(r->cfg.retry_s * 1000) + 1000;
    redisSetTimeout(c, tv_ms(ms));
    return c;
}

static int ok_type(const redisReply *x) {
    return x->type == REDIS_REPLY_ARRAY && x->elements && x->element[0]->type == REDIS_REPLY_STRING;
}

/* ROLE on the connected server: -1 unless it is a primary; sets wait_now. */
static int check_role(rcl *r) {
    redisReply *x = redisCommand(r->ctx, "ROLE");
    int ok = x && x->type == REDIS_REPLY_ARRAY && x->elements >= 3 &&
             x->element[0]->type == REDIS_REPLY_STRING && !strcmp(x->element[0]->str, "master") &&
             x->element[2]->type == REDIS_REPLY_ARRAY;
    if (!ok) {
        const char *why = !x ? ((redisContext *)r->ctx)->errstr
                          : x->type == REDIS_REPLY_ERROR ? x->str
                          : ok_type(x) ? x->element[0]->str : "unexpected ROLE reply";
        snprintf(r->err, sizeof r->err, "%s:%d is not a Redis primary (%s)", r->at_host, r->at_port, why);
    } else {
        int have = (int)x->element[2]->elements;
        r->wait_now = r->cfg.wait_replicas < have ? r->cfg.wait_replicas : have;
        r->role_checked = now();
    }
    if (x) freeReplyObject(x);
    if (!ok) drop(&r->ctx);
    return ok ? 0 : -1;
}

static int connect_primary(rcl *r, const char *host, int port) {
    drop(&r->ctx);
    snprintf(r->at_host, sizeof r->at_host, "%s", host);
    r->at_port = port;
    r->ctx = connect_to(r, host, port, "Redis");
    return r->ctx ? check_role(r) : -1;
}

/* The primary's address from the first sentinel that answers. */
static int ask_sentinels(rcl *r, char *host, size_t hlen, int *port) {
    for (int i = 0; i < r->cfg.nsentinels; i++) {
        if (!r->sctx) r->sctx = connect_to(r, r->cfg.host, r->cfg.sentinel_ports[i], "Redis Sentinel");
        if (!r->sctx) continue;
        redisReply *x = redisCommand(r->sctx, "SENTINEL get-master-addr-by-name %s", r->cfg.master_name);
        int ok = x && x->type == REDIS_REPLY_ARRAY && x->elements == 2 &&
                 x->element[0]->type == REDIS_REPLY_STRING && x->element[1]->type == REDIS_REPLY_STRING;
        if (ok) {
            snprintf(host, hlen, "%s", x->element[0]->str);
            *port = atoi(x->element[1]->str);
        } else {
            snprintf(r->err, sizeof r->err, "sentinel %s:%d does not know '%s'", r->cfg.host,
                     r->cfg.sentinel_ports[i], r->cfg.master_name);
            drop(&r->sctx);  /* try the next one */
        }
        if (x) freeReplyObject(x);
        if (ok) return 0;
    }
    return -1;
}

static int reconnect(rcl *r) {
    char host[RCL_HOST];
    int port = r->cfg.port;
    snprintf(host, sizeof host, "%s", r->cfg.host);
    if (r->cfg.nsentinels && ask_sentinels(r, host, sizeof host, &port)) return -1;
    if (connect_primary(r, host, port)) return -1;
    r->reconnects++;
    return 0;
}

int rcl_open(rcl *r, const rcl_config *cfg) {
    memset(r, 0, sizeof *r);
    r->cfg = *cfg;
    return connect_primary(r, cfg->host, cfg->port);
}

void rcl_close(rcl *r) {
    drop(&r->ctx);
    drop(&r->sctx);
}

typedef struct cmd {
    int argc;
    const char *argv[3];
    size_t len[3];
} cmd;

static int failover_error(const redisReply *x) {
    static const char *const transient[] = {"READONLY", "LOADING", "MASTERDOWN", "TRYAGAIN"};
    if (x->type != REDIS_REPLY_ERROR) return 0;
    for (size_t i = 0; i < sizeof transient / sizeof *transient; i++)
        if (!strncmp(x->str, transient[i], strlen(transient[i]))) return 1;
    return 0;
}

static void free_replies(redisReply **rep, int n) {
    for (int i = 0; i < n; i++)
        if (rep[i]) freeReplyObject(rep[i]);
}

/* One attempt: the n commands, then (with_wait and wait_now > 0) a WAIT
 * for wait_now replicas, read now because a reconnect may have changed it.
 * Returns the number of replies in rep, or -1 (context dropped). */
static int attempt(rcl *r, const cmd *c, int n, int with_wait, redisReply **rep) {
    redisContext *ctx = r->ctx;
    if (!ctx) return -1;
    char wn[16], wt[16];
    snprintf(wn, sizeof wn, "%d", r->wait_now);
    snprintf(wt, sizeof wt, "%d", r->cfg.wait_timeout_ms);
    cmd w = {3, {"WAIT", wn, wt}, {4, strlen(wn), strlen(wt)}};
    int total = n + (with_wait && r->wait_now > 0);
    memset(rep, 0, sizeof *rep * (size_t)total);
    for (int i = 0; i < total; i++) {
        const cmd *x = i < n ? &c[i] : &w;
        redisAppendCommandArgv(ctx, x->argc, (const char **)x->argv, x->len);  /* hiredis 0.14: not const */
    }
    int bad = -1;
    for (int i = 0; i < total && bad < 0; i++) {
        void *x = NULL;
        if (redisGetReply(ctx, &x) != REDIS_OK) {
            snprintf(r->err, sizeof r->err, "Redis at %s:%d: %s", r->at_host, r->at_port, ctx->errstr);
            bad = i;
        } else if (failover_error(rep[i] = x)) {
            snprintf(r->err, sizeof r->err, "Redis at %s:%d: %s", r->at_host, r->at_port, rep[i]->str);
            bad = i + 1;
        }
    }
    if (bad < 0) return total;
    free_replies(rep, bad);
    drop(&r->ctx);
    return -1;
}

/* Attempts until one succeeds or retry_s is over.  Returns the replies'
 * count (*retried set when it took more than one attempt) or -1. */
static int call(rcl *r, const cmd *c, int n, int with_wait, redisReply **rep, int *retried) {
    double t0 = now();
    for (int tries = 0;; tries++) {
        int got = attempt(r, c, n, with_wait, rep);
        *retried = tries > 0;
        if (got >= 0) return got;
        if (!r->first_error) r->first_error = now();
        if (now() - t0 > r->cfg.retry_s) {
            size_t l = strlen(r->err);
            snprintf(r->err + l, sizeof r->err - l, " (gave up after %.1f s of retries)", r->cfg.retry_s);
            return -1;
        }
        nanosleep(&(struct timespec){0, RETRY_PAUSE_NS}, NULL);
        reconnect(r);
    }
}

static int bad_reply(rcl *r, const redisReply *x, const char *what) {
    snprintf(r->err, sizeof r->err, "Redis at %s:%d: unexpected reply to %s: %s", r->at_host, r->at_port,
             what, x->type == REDIS_REPLY_ERROR || x->type == REDIS_REPLY_STATUS ? x->str : "(other type)");
    return -1;
}

int rcl_set(rcl *r, int n, const char *const *keys, const size_t *klens,
            const unsigned char *const *vals, const size_t *vlens) {
    static cmd c[RCL_MAX_BATCH];
    static redisReply *rep[RCL_MAX_BATCH];
    if (n < 1 || n >= RCL_MAX_BATCH) {
        snprintf(r->err, sizeof r->err, "rcl_set: %d commands (1..%d)", n, RCL_MAX_BATCH - 1);
        return -1;
    }
    if (r->wait_now < r->cfg.wait_replicas && r->ctx && now() - r->role_checked > ROLE_REFRESH_S)
        check_role(r);  /* a replica may be back; a failure here is retried by call() */
    for (int i = 0; i < n; i++)
        c[i] = (cmd){3, {"SET", keys[i], (const char *)vals[i]}, {3, klens[i], vlens[i]}};
    int retried, got = call(r, c, n, 1, rep, &retried), bad = 0;
    if (got < 0) return -1;
    for (int i = 0; i < n && !bad; i++)
        if (rep[i]->type != REDIS_REPLY_STATUS || strcmp(rep[i]->str, "OK")) bad = bad_reply(r, rep[i], "SET");
    long long acks = got > n ? rep[n]->integer : 0;
    if (!bad && got > n && rep[n]->type != REDIS_REPLY_INTEGER) bad = bad_reply(r, rep[n], "WAIT");
    if (!bad && acks < r->cfg.wait_replicas) {
        r->degraded_writes += n;
        if (got > n && acks < r->wait_now) r->role_checked = 0;  /* a replica left: look again */
    }
    free_replies(rep, got);
    return bad ? -1 : retried;
}

int rcl_get(rcl *r, int n, const char *const *keys, const size_t *klens, unsigned char *const *bufs,
            size_t cap, long *got) {
    static cmd c[RCL_MAX_BATCH];
    static redisReply *rep[RCL_MAX_BATCH];
    if (n < 1 || n > RCL_MAX_BATCH) {
        snprintf(r->err, sizeof r->err, "rcl_get: %d commands (1..%d)", n, RCL_MAX_BATCH);
        return -1;
    }
    for (int i = 0; i < n; i++) c[i] = (cmd){2, {"GET", keys[i], NULL}, {3, klens[i], 0}};
    int retried, nrep = call(r, c, n, 0, rep, &retried), bad = 0;
    for (int i = 0; i < nrep && !bad; i++) {
        if (rep[i]->type == REDIS_REPLY_NIL) {
            got[i] = -1;
        } else if (rep[i]->type == REDIS_REPLY_STRING) {
            got[i] = (long)rep[i]->len;
            memcpy(bufs[i], rep[i]->str, rep[i]->len < cap ? rep[i]->len : cap);
        } else {
            bad = bad_reply(r, rep[i], "GET");
        }
    }
    if (nrep < 0) return -1;
    free_replies(rep, nrep);
    return bad ? -1 : retried;
}

/* process_id from INFO server on ctx; 0 when not found. */
static int info_pid(redisContext *ctx) {
    redisReply *x = ctx ? redisCommand(ctx, "INFO server") : NULL;
    const char *p = x && x->type == REDIS_REPLY_STRING ? strstr(x->str, "process_id:") : NULL;
    int pid = p ? atoi(p + strlen("process_id:")) : 0;
    if (x) freeReplyObject(x);
    return pid;
}

int rcl_pids(rcl *r, int *primary, int *replica) {
    *primary = info_pid(r->ctx);
    *replica = 0;
    redisReply *x = r->ctx ? redisCommand(r->ctx, "ROLE") : NULL;
    if (x && x->type == REDIS_REPLY_ARRAY && x->elements >= 3 && x->element[2]->type == REDIS_REPLY_ARRAY &&
        x->element[2]->elements > 0 && x->element[2]->element[0]->elements >= 2) {
        redisReply *rep = x->element[2]->element[0];
        redisContext *c = connect_to(r, rep->element[0]->str, atoi(rep->element[1]->str), "the replica");
        *replica = info_pid(c);
        if (c) redisFree(c);
    }
    if (x) freeReplyObject(x);
    if (!*primary) snprintf(r->err, sizeof r->err, "no process_id in INFO of %s:%d", r->at_host, r->at_port);
    return *primary ? 0 : -1;
}

#else /* !KV_HAVE_HIREDIS: redis.c refuses the backend before any call */

int rcl_open(rcl *r, const rcl_config *cfg) {
    (void)cfg;
    snprintf(r->err, sizeof r->err, "built without hiredis");
    return -1;
}
void rcl_close(rcl *r) { (void)r; }
int rcl_set(rcl *r, int n, const char *const *keys, const size_t *klens,
            const unsigned char *const *vals, const size_t *vlens) {
    return -1;
}
int rcl_get(rcl *r, int n, const char *const *keys, const size_t *klens, unsigned char *const *bufs,
            size_t cap, long *got) {
    return -1;
}
int rcl_pids(rcl *r, int *primary, int *replica) { return -1; }

#endif
