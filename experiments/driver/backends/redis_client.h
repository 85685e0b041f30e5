/*
 * redis_client.h -- one rank's connection to a Redis primary that follows
 * a Sentinel failover (the driver's Redis backend, redis.c).
 *
 * Why a layer of our own over hiredis: the comparison with the store needs
 * the same contract the store gives its callers -- a write returns only
 * once it is on r copies, and a call interrupted by a failure is retried
 * until the system has recovered -- and hiredis gives neither.  So a write
 * is SET pipelined with `WAIT n timeout` (n = wait_replicas: r = 2 is a
 * primary and one replica, WAIT 1), and any call that loses its connection,
 * or is refused because the server it reached is not (yet) the primary,
 * asks Sentinel for the primary's address, reconnects and sends the whole
 * call again, until retry_s have passed.  After a failover the new primary
 * has no replica (nobody restarts the old one), so WAIT would block for its
 * timeout on every write: the client asks for min(wait_replicas, replicas
 * the primary has) and counts writes acknowledged by fewer copies than
 * asked as degraded, as the store counts KV_WARN_DEGRADED as success.
 * No MPI and no driver types in here.  Functions returning int give 0 (or
 * 1, see below) on success and -1 with a message in r->err.
 */
#ifndef KV_REDIS_CLIENT_H
#define KV_REDIS_CLIENT_H

#include <stddef.h>

#define RCL_MAX_SENTINELS 8
#define RCL_MAX_BATCH 1024       /* commands in one pipelined call */
#define RCL_HOST 256

typedef struct rcl_config {
    char host[RCL_HOST];         /* the primary's address at start, and the sentinels' host;
                                    "/path": the primary's Unix socket */
    int port;
    int sentinel_ports[RCL_MAX_SENTINELS];
    int nsentinels;              /* 0: no failover, reconnect to host:port */
    char master_name[64];        /* the name the sentinels monitor */
    int wait_replicas;           /* WAIT after writes; 0 = none */
    int wait_timeout_ms;         /* WAIT's timeout */
    double retry_s;              /* one call keeps retrying this long, then fails */
} rcl_config;

typedef struct rcl {
    rcl_config cfg;
    void *ctx, *sctx;            /* hiredis contexts: the primary, a sentinel (NULL: none) */
    char at_host[RCL_HOST];      /* where ctx is connected */
    int at_port;
    int wait_now;                /* replicas the next WAIT asks for */
    double role_checked;         /* when wait_now was last refreshed (CLOCK_REALTIME) */
    long long reconnects;        /* connections made after the first */
    long long degraded_writes;   /* writes acknowledged by fewer replicas than wait_replicas */
    double first_error;          /* CLOCK_REALTIME of the first failed attempt; 0 none */
    char err[1024];
} rcl;

/* Connect to cfg->host:cfg->port, which must be a primary (ROLE master).
 * No retry: a wrong address is reported at once. */
int rcl_open(rcl *r, const rcl_config *cfg);
void rcl_close(rcl *r);

/* SET keys[i] vals[i] for i < n (n <= RCL_MAX_BATCH - 1), pipelined, then
 * one WAIT when wait_now > 0.  Returns 0 when acknowledged at the first
 * attempt, 1 when acknowledged after retrying through a failure, -1 when it
 * still failed after retry_s (or the server refused it). */
int rcl_set(rcl *r, int n, const char *const *keys, const size_t *klens,
            const unsigned char *const *vals, const size_t *vlens);

/* GET keys[i] for i < n (n <= RCL_MAX_BATCH), pipelined: got[i] is the
 * value's length (at most cap bytes are copied to bufs[i]) or -1 when the
 * key does not exist.  Returns 0, 1 or -1 as rcl_set. */
int rcl_get(rcl *r, int n, const char *const *keys, const size_t *klens, unsigned char *const *bufs,
            size_t cap, long *got);

/* Process ids of the primary and of its first replica (from INFO server;
 * the replica found through ROLE); 0 where unknown.  Returns 0 or -1. */
int rcl_pids(rcl *r, int *primary, int *replica);

#endif
