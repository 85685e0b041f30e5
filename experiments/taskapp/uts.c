/*
 * uts.c -- Unbalanced Tree Search: count the nodes of an implicit random
 * tree, as tasks (one task = one node).
 *
 * The tree is the UTS benchmark's (Olivier, Prins et al., LCPC 2006): every
 * node carries a 20-byte state of a splittable random generator; the root's
 * is SHA-1 of 16 zero bytes and the 4-byte big-endian root seed, child i's
 * is SHA-1 of its parent's state and i as 4 big-endian bytes, and a node's
 * random number is the last 4 bytes of its state, big-endian, with the top
 * bit cleared, read as a probability by dividing by 2^31.  Binomial nodes
 * below the root have m children with probability q; geometric nodes draw
 * their number of children from a geometric distribution whose mean b_i
 * follows the tree's shape over depth; hybrid trees are geometric above
 * shift x depth and binomial below.  SHA-1 is OpenSSL's libcrypto.  The
 * sample trees and their published node and leaf counts come from the UTS
 * distribution's list of sample workloads (docs/taskapp.md).
 */
/* libcrypto's SHA-1 functions are deprecated in OpenSSL 3 in favour of EVP,
 * but EVP costs 0.3-1.3 us for a 24-byte digest here against 0.14 us:
 * most of a node's work. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <math.h>
#include <openssl/sha.h>
#include <string.h>

#include "kv_util.h"
#include "taskapp.h"

enum { BIN = 0, GEO = 1, HYBRID = 2 };
enum { LINEAR = 0, EXPDEC = 1, CYCLIC = 2, FIXED = 3 };
enum { MAX_CHILDREN = 100 };  /* UTS caps the children of every node but a binomial root */

/* The UTS sample trees (type, shape, depth, b0, seed, q, m), with the node
 * and leaf counts the UTS distribution publishes for them. */
static const struct uts_sample {
    const char *name;
    ta_uts t;
    int64_t nodes, leaves;
} samples[] = {
    {"T1", {GEO, FIXED, 10, 4, 19, 4.0, 15.0 / 64, 0.5}, 4130071, 3305118},
    {"T5", {GEO, LINEAR, 20, 4, 34, 4.0, 15.0 / 64, 0.5}, 4147582, 2181318},
    {"T2", {GEO, CYCLIC, 16, 4, 502, 6.0, 15.0 / 64, 0.5}, 4117769, 2342762},
    {"T3", {BIN, LINEAR, 6, 8, 42, 2000.0, 0.124875, 0.5}, 4112897, 3599034},
    {"T4", {HYBRID, LINEAR, 16, 4, 1, 6.0, 0.234375, 0.5}, 4132453, 3108986},
    {"T1L", {GEO, FIXED, 13, 4, 29, 4.0, 15.0 / 64, 0.5}, 102181082, 81746377},
    {"T3L", {BIN, LINEAR, 6, 5, 7, 2000.0, 0.200014, 0.5}, 111345631, 89076904},
};
enum { NSAMPLES = sizeof samples / sizeof samples[0] };

/* A node: generator state, height, and the tree's type (informative). */
typedef struct uts_node {
    unsigned char state[20];
    int32_t height;
    int32_t type;
} uts_node;

static int set_size(ta_params *p, const char *v, char *err, size_t len) {
    for (int i = 0; i < NSAMPLES; i++)
        if (!strcmp(v, samples[i].name)) {
            p->uts = samples[i].t;
            return 0;
        }
    return kvu_fail(err, len, "size: '%s' is not a UTS sample tree (T1 T2 T3 T4 T5 T1L T3L)", v);
}

static void sha1(const unsigned char *a, size_t na, const unsigned char *b, size_t nb, unsigned char out[20]) {
    unsigned char in[24];
    memcpy(in, a, na);
    if (nb) memcpy(in + na, b, nb);  /* b is NULL for the root */
    SHA1(in, na + nb, out);
}

static void be32(unsigned char out[4], uint32_t v) {
    out[0] = v >> 24; out[1] = v >> 16; out[2] = v >> 8; out[3] = v;
}

static void root(const ta_params *p, ta_task *t) {
    uts_node n = {{0}, 0, p->uts.type == HYBRID ? GEO : p->uts.type};
    unsigned char seed[20] = {0};
    be32(seed + 16, (uint32_t)p->uts.seed);
    sha1(seed, 20, NULL, 0, n.state);
    memset(t, 0, sizeof *t);
    memcpy(t->b, &n, sizeof n);
}

static double uniform(const uts_node *n) {
    uint32_t r = ((uint32_t)n->state[16] << 24 | (uint32_t)n->state[17] << 16 |
                  (uint32_t)n->state[18] << 8 | n->state[19]) & 0x7fffffff;
    return r / 2147483648.0;
}

/* The mean branching factor at a geometric node's depth. */
static double mean_children(const ta_uts *u, int depth) {
    if (depth == 0) return u->b0;
    switch (u->shape) {
    case EXPDEC: return u->b0 * pow((double)depth, -log(u->b0) / log((double)u->depth));
    case CYCLIC:
        if (depth > 5 * u->depth) return 0.0;
        return pow(u->b0, sin(2.0 * 3.141592653589793 * depth / u->depth));
    case FIXED: return depth < u->depth ? u->b0 : 0.0;
    default: return u->b0 * (1.0 - (double)depth / u->depth);
    }
}

static int num_children(const ta_uts *u, const uts_node *n) {
    /* A hybrid tree is geometric above shift x depth, binomial from there. */
    if (u->type == BIN || (u->type == HYBRID && n->height >= u->shift * u->depth)) {
        if (n->height == 0) return (int)floor(u->b0);  /* a binomial root may exceed the cap */
        return uniform(n) < u->q ? u->m : 0;
    }
    double p = 1.0 / (1.0 + mean_children(u, n->height));
    int k = (int)floor(log(1 - uniform(n)) / log(1 - p));
    return k > MAX_CHILDREN ? MAX_CHILDREN : k;
}

static int run(const ta_params *p, const ta_task *t, ta_queue *q, int64_t res[2]) {
    uts_node n;
    memcpy(&n, t->b, sizeof n);
    int k = num_children(&p->uts, &n);
    res[0]++;
    if (k == 0) res[1]++;
    uts_node c = {{0}, n.height + 1, n.type};
    for (int i = 0; i < k; i++) {
        unsigned char idx[4];
        be32(idx, (uint32_t)i);
        sha1(n.state, 20, idx, 4, c.state);
        ta_task ct = {{0}};
        memcpy(ct.b, &c, sizeof c);
        if (ta_queue_push(q, &ct)) return -1;
    }
    return 0;
}

static int expected(const ta_params *p, int64_t want[2]) {
    for (int i = 0; i < NSAMPLES; i++)
        if (!memcmp(&p->uts, &samples[i].t, sizeof p->uts)) {
            want[0] = samples[i].nodes;
            want[1] = samples[i].leaves;
            return 1;
        }
    return 0;
}

const ta_app ta_uts_app = {
    .name = "uts", .sizes = "a sample tree: T1 T2 T3 T4 T5 T1L T3L", .set_size = set_size,
    .root = root, .run = run, .expected = expected, .res_names = {"nodes", "leaves"},
};
