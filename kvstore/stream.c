/*
 * stream.c -- re-replication's exchange, in chunks of bounded size.
 *
 * The records a scan packs go out while the scan is still running, in
 * messages of at most `chunk` bytes, from a few buffers used over and
 * over: one being filled for each member that is sent to, at most
 * KVR_INFLIGHT on their way, KVR_RECVS posted receives.  The memory an
 * exchange takes is thus fixed by the number of members, not by how much
 * moves, and the pages of its buffers are faulted in once, not once for
 * every page moved (a fresh page costs a few microseconds, about what
 * packing the thirty records it holds costs).  Every chunk begins with
 * its number among the chunks from its sender to its receiver and
 * whether it is the last; every member sends every other a last chunk,
 * empty if it has nothing for it, and a receiver is done once every
 * sender's last chunk and all those before it have come (they may
 * complete out of order).  Arrivals are inserted put-if-newer
 * (kvr_insert_all) as they come, while the local scan is still running
 * too: an insert writes only an empty slot, a placeholder or an older
 * version of its own key, so the scan either passed that slot already or
 * meets the pair later, and then packs it only if it held the key in its
 * old replica set, now in a newer version: nothing the scan must send is
 * lost, and a copy sent twice is dropped by put-if-newer.  Receives take
 * any sender with the stream's tag; the scan's stream and the affected
 * homes' stream follow one another, with a collective between them
 * (kvr_share_affected).  A rank that waits for room or for arrivals
 * dozes between tests (kvw_doze), which leaves the processor to the
 * scans still running where ranks outnumber cores.  On an error every
 * pending request is ended by revoking the communicator before its
 * buffer is freed.  Its time goes to the recovery's exchange_us, the
 * inserts' to insert_us.
 */
#include "kv_internal.h"

#include <mpi-ext.h>
#include <stdlib.h>

enum {
    KVR_RECVS = 4,                /* receives posted at once */
    KVR_INFLIGHT = 8,             /* chunks on their way at once */
    KVR_NREQ = KVR_RECVS + KVR_INFLIGHT,
    KVR_FILL_BYTES = 8 << 20,     /* chunks being filled, all members together */
    KVR_CHUNK_MAX = 256 << 10,
    KVR_CHUNK_MIN = 16 << 10,
};

typedef struct kvr_chunk_hdr {
    uint32_t seq;   /* 1, 2, ... from this sender to this receiver */
    uint32_t last;  /* 1 on the last one */
} kvr_chunk_hdr;

struct kvr_stream {
    kv_store *s;
    kvr_ctx *c;
    int tag;
    bool first;              /* the scan's stream: the one that passes the fault points */
    bool sent_any, inserted_any;
    size_t chunk;            /* bytes of a message at most, header included */
    unsigned char **fill;    /* by rank: the chunk being filled, or NULL */
    size_t *len;             /* by rank: its bytes so far */
    uint32_t *sent, *got, *expect;  /* by rank: chunks sent, received, announced by the last */
    int waiting;             /* senders not all of whose chunks have come */
    unsigned char **spare;   /* buffers free for use again */
    int nspare;
    MPI_Request req[KVR_NREQ];  /* [0, KVR_RECVS) receives, the rest sends */
    unsigned char *buf[KVR_NREQ];
    int nflight;
};

static unsigned char *get_buf(kvr_stream *st) {
    return st->nspare ? st->spare[--st->nspare] : malloc(st->chunk);
}

static int post_recv(kvr_stream *st, int i) {
    if (!st->buf[i] && !(st->buf[i] = get_buf(st))) return KV_ERR_NOMEM;
    return kvw_status(st->s, MPI_Irecv(st->buf[i], (int)st->chunk, MPI_BYTE, MPI_ANY_SOURCE, st->tag,
                                       st->s->comm, &st->req[i]));
}

/* One chunk arrived in receive i. */
static int arrived(kvr_stream *st, int i, const MPI_Status *status) {
    kv_store *s = st->s;
    int src = status->MPI_SOURCE, n = 0;
    MPI_Get_count(status, MPI_BYTE, &n);
    kvr_chunk_hdr h;
    if (src < 0 || src >= s->size || src == s->rank || n < (int)sizeof h) return KV_ERR_CORRUPT;
    memcpy(&h, st->buf[i], sizeof h);
    if (h.last && (st->expect[src] || h.seq <= st->got[src])) return KV_ERR_CORRUPT;
    if (st->first && !st->inserted_any) KVR_POINT("insert");
    st->inserted_any = true;
    int64_t t = kv_clock_ns();
    long long in = kvr_insert_all(s, st->buf[i] + sizeof h, (size_t)n - sizeof h);
    st->c->rt.insert_us += (double)(kv_clock_ns() - t) / 1e3;
    if (in < 0) return KV_ERR_CORRUPT;
    st->got[src]++;  /* chunks may complete out of order, the last before others */
    if (h.last) st->expect[src] = h.seq;
    if (st->expect[src] && st->got[src] > st->expect[src]) return KV_ERR_CORRUPT;
    if (st->expect[src] && st->got[src] == st->expect[src]) st->waiting--;
    return st->waiting > 0 ? post_recv(st, i) : KV_OK;
}

/* Complete what has completed, without waiting; *any tells whether
 * something did. */
static int progress(kvr_stream *st, bool *any) {
    *any = false;
    for (;;) {
        int i, done = 0;
        MPI_Status status;
        int rc = MPI_Testany(KVR_NREQ, st->req, &i, &done, &status);
        if (rc != MPI_SUCCESS) return kvw_status(st->s, rc);
        if (!done || i == MPI_UNDEFINED) return KV_OK;
        *any = true;
        if (i < KVR_RECVS) {
            if ((rc = arrived(st, i, &status))) return rc;
        } else {  /* a send: its buffer is free again */
            st->spare[st->nspare++] = st->buf[i];
            st->buf[i] = NULL;
            st->nflight--;
        }
    }
}

/* Progress, napping between tests, until `until` holds. */
static int wait_for(kvr_stream *st, bool (*until)(const kvr_stream *)) {
    int64_t t = kv_clock_ns();
    double ins = st->c->rt.insert_us;
    int rc = KV_OK;
    while (rc == KV_OK && !until(st)) {
        bool any;
        rc = progress(st, &any);
        if (rc == KV_OK && !any && !until(st)) kvw_doze();
    }
    st->c->rt.exchange_us += (double)(kv_clock_ns() - t) / 1e3 - (st->c->rt.insert_us - ins);
    return rc;
}

static bool room(const kvr_stream *st) { return st->nflight < KVR_INFLIGHT; }
static bool all_done(const kvr_stream *st) { return st->waiting == 0 && st->nflight == 0; }

/* Send the chunk being filled for rank `to` (an empty one if none). */
static int flush(kvr_stream *st, int to, bool last) {
    int rc = wait_for(st, room);
    if (rc) return rc;
    unsigned char *b = st->fill[to];
    if (!b) {
        if (!(b = get_buf(st))) return KV_ERR_NOMEM;
        st->len[to] = sizeof(kvr_chunk_hdr);
    }
    st->fill[to] = NULL;
    kvr_chunk_hdr h = {++st->sent[to], last};
    memcpy(b, &h, sizeof h);
    int i = KVR_RECVS;
    while (st->buf[i]) i++;  /* a free send: room() holds */
    st->buf[i] = b;
    st->nflight++;
    rc = kvw_status(st->s, MPI_Isend(b, (int)st->len[to], MPI_BYTE, to, st->tag, st->s->comm, &st->req[i]));
    if (rc == KV_OK && st->first && !st->sent_any) KVR_POINT("exchange");
    st->sent_any = true;
    return rc;
}

int kvr_stream_open(kv_store *s, kvr_ctx *c, int tag, bool first, kvr_stream **out) {
    int n = s->size;
    kvr_stream *st = calloc(1, sizeof *st);
    *out = st;
    if (!st) return KV_ERR_NOMEM;
    st->s = s;
    st->c = c;
    st->tag = tag;
    st->first = first;
    st->chunk = KVR_FILL_BYTES / (size_t)n;
    if (st->chunk > KVR_CHUNK_MAX) st->chunk = KVR_CHUNK_MAX;
    if (st->chunk < KVR_CHUNK_MIN) st->chunk = KVR_CHUNK_MIN;
    if (st->chunk < sizeof(kvr_chunk_hdr) + s->slot_size)  /* a record is at most a slot */
        st->chunk = sizeof(kvr_chunk_hdr) + s->slot_size;
    for (int i = 0; i < KVR_NREQ; i++) st->req[i] = MPI_REQUEST_NULL;
    st->fill = calloc((size_t)n, sizeof *st->fill);
    st->len = calloc((size_t)n, sizeof *st->len);
    st->sent = calloc((size_t)n, sizeof *st->sent);
    st->got = calloc((size_t)n, sizeof *st->got);
    st->expect = calloc((size_t)n, sizeof *st->expect);
    st->spare = calloc((size_t)n + KVR_NREQ, sizeof *st->spare);
    if (!st->fill || !st->len || !st->sent || !st->got || !st->expect || !st->spare) return KV_ERR_NOMEM;
    st->waiting = n - 1;
    int rc = KV_OK;
    for (int i = 0; i < KVR_RECVS && st->waiting > 0 && rc == KV_OK; i++) rc = post_recv(st, i);
    return rc;
}

int kvr_stream_add(kvr_stream *st, int to, const kvs_hdr *h, const unsigned char *key,
                   const unsigned char *val) {
    size_t need = kvr_rec_size(h->klen, h->vlen);
    if (st->fill[to] && st->len[to] + need > st->chunk) {
        int rc = flush(st, to, false);
        if (rc) return rc;
    }
    if (!st->fill[to]) {
        if (!(st->fill[to] = get_buf(st))) return KV_ERR_NOMEM;
        st->len[to] = sizeof(kvr_chunk_hdr);
    }
    kvr_rec r = {h->version, h->klen, h->vlen};
    unsigned char *p = st->fill[to] + st->len[to];
    memcpy(p, &r, sizeof r);
    memcpy(p + sizeof r, key, KVS_KLEN(h));
    memcpy(p + sizeof r + KVS_KLEN(h), val, h->vlen);
    st->len[to] += need;
    return KV_OK;
}

int kvr_stream_poll(kvr_stream *st) {
    int64_t t = kv_clock_ns();
    double ins = st->c->rt.insert_us;
    bool any;
    int rc = progress(st, &any);
    st->c->rt.exchange_us += (double)(kv_clock_ns() - t) / 1e3 - (st->c->rt.insert_us - ins);
    return rc;
}

int kvr_stream_finish(kvr_stream *st) {
    kv_store *s = st->s;
    int rc = KV_OK;
    for (int to = 0; to < s->size && rc == KV_OK; to++)
        if (to != s->rank) rc = flush(st, to, true);
    if (rc == KV_OK) rc = wait_for(st, all_done);
    /* Nothing more can come: the receives still posted are withdrawn. */
    for (int i = 0; i < KVR_RECVS && rc == KV_OK; i++) {
        if (st->req[i] == MPI_REQUEST_NULL) continue;
        MPI_Status status;
        int cancelled = 0;
        MPI_Cancel(&st->req[i]);
        rc = kvw_status(s, MPI_Wait(&st->req[i], &status));
        if (rc == KV_OK) MPI_Test_cancelled(&status, &cancelled);
        if (rc == KV_OK && !cancelled) rc = KV_ERR_CORRUPT;  /* a chunk after the last */
    }
    return rc;
}

void kvr_stream_close(kvr_stream *st) {
    if (!st) return;
    bool pending = false;
    for (int i = 0; i < KVR_NREQ; i++) pending |= st->req[i] != MPI_REQUEST_NULL;
    if (pending) {  /* an error: end what is still pending before its buffer goes */
        MPIX_Comm_revoke(st->s->comm);
        MPI_Waitall(KVR_NREQ, st->req, MPI_STATUSES_IGNORE);
    }
    for (int i = 0; i < KVR_NREQ; i++) free(st->buf[i]);
    for (int i = 0; st->fill && i < st->s->size; i++) free(st->fill[i]);
    for (int i = 0; i < st->nspare; i++) free(st->spare[i]);
    free(st->fill); free(st->len); free(st->sent); free(st->got); free(st->expect); free(st->spare);
    free(st);
}
