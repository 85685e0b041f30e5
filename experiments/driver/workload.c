/*
 * workload.c -- YCSB core workloads and custom mixes, one stream per rank.
 *
 * Randomness: our own xoshiro256** seeded through splitmix64 from (seed,
 * rank), so streams are reproducible everywhere.  Zipfian draws use the
 * algorithm of Gray et al., "Quickly generating billion-record synthetic
 * databases" (SIGMOD 1994), as YCSB's ZipfianGenerator does: zeta(n, theta)
 * precomputed, items 0 and 1 exact, the rest by the closed-form inverse.
 * "zipfian" is YCSB's ScrambledZipfianGenerator: a zipfian over 10^10 items
 * hashed with FNV-64 and reduced modulo the item space, so hot records are
 * spread; "latest" is YCSB's SkewedLatestGenerator: a zipfian over recency
 * whose zeta grows term by term as records are inserted.
 */
#include "workload.h"

#include "kv_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers, PRNG, hashes ------------------------------------------------ */

/* A stateless 64-bit mix of a and b, for seeds derived from several inputs. */
static uint64_t mix2(uint64_t a, uint64_t b) {
    uint64_t x = a;
    x = kvu_splitmix64(&x) ^ b;
    return kvu_splitmix64(&x);
}

typedef kvu_rng rng;  /* kv_util.h's xoshiro256** */

/* Uniform in [0, 1) with 53 random bits. */
static double rng_u01(rng *r) { return (double)(kvu_rng_next(r) >> 11) * 0x1.0p-53; }

__extension__ typedef unsigned __int128 u128;

/* Uniform in [0, n), n > 0, without modulo bias (Lemire's multiply-shift). */
static uint64_t rng_below(rng *r, uint64_t n) {
    u128 m = (u128)kvu_rng_next(r) * n;
    if ((uint64_t)m < n) {
        uint64_t floor = -n % n;
        while ((uint64_t)m < floor) m = (u128)kvu_rng_next(r) * n;
    }
    return (uint64_t)(m >> 64);
}

/* YCSB's Utils.fnvhash64: FNV-1a over the 8 little-endian bytes, then the
 * absolute value of the result read as a signed 64-bit number. */
static uint64_t fnv64(uint64_t v) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < 8; i++, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ULL;
    return (int64_t)h < 0 ? -h : h;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* ---- zipfian (Gray et al.) ------------------------------------------------ */

#define ZETA_EXACT 4096          /* terms summed one by one before the tail */
#define SCRAMBLE_ITEMS 10000000000ULL  /* YCSB's ScrambledZipfianGenerator.ITEM_COUNT */
#define SCRAMBLE_TRIES 64        /* redraws of not-yet-inserted items before folding */

/* Sum of x^-theta for x = a+1..b by Euler-Maclaurin (integral, end
 * corrections, B2 and B4 terms): for a >= 4096 the next term is below
 * 1e-20, so rounding (about 1e-15 relative) is all the error there is. */
static double zeta_tail(double a, double b, double t) {
    double integral = fabs(1 - t) < 1e-12 ? log(b / a)
                                          : (pow(b, 1 - t) - pow(a, 1 - t)) / (1 - t);
    double fa = pow(a, -t), fb = pow(b, -t);
    double d1 = -t * (pow(b, -t - 1) - pow(a, -t - 1));
    double d3 = -t * (t + 1) * (t + 2) * (pow(b, -t - 3) - pow(a, -t - 3));
    return integral + (fb - fa) / 2 + d1 / 12 - d3 / 720;
}

double wl_zeta(uint64_t n, double theta) {
    double sum = 0;
    uint64_t m = n < ZETA_EXACT ? n : ZETA_EXACT;
    for (uint64_t i = m; i >= 1; i--) sum += pow((double)i, -theta);  /* small terms first */
    return n > m ? sum + zeta_tail((double)m, (double)n, theta) : sum;
}

typedef struct zipf {
    uint64_t n;
    double theta, alpha, zetan, zeta2, eta;
} zipf;

static void zipf_eta(zipf *z) {
    z->eta = z->n <= 2 ? 0
                       : (1 - pow(2.0 / (double)z->n, 1 - z->theta)) / (1 - z->zeta2 / z->zetan);
}

static void zipf_init(zipf *z, uint64_t n, double theta) {
    z->n = n;
    z->theta = theta;
    z->alpha = 1 / (1 - theta);
    z->zetan = wl_zeta(n, theta);
    z->zeta2 = 1 + pow(0.5, theta);
    zipf_eta(z);
}

/* Extend the item count to n, adding the new terms of zeta (as YCSB does). */
static void zipf_grow(zipf *z, uint64_t n) {
    for (uint64_t i = z->n + 1; i <= n; i++) z->zetan += pow((double)i, -z->theta);
    z->n = n;
    zipf_eta(z);
}

/* A draw in [0, n), item 0 the most popular. */
static uint64_t zipf_draw(const zipf *z, rng *r) {
    double u = rng_u01(r), uz = u * z->zetan;
    if (uz < 1) return 0;
    if (uz < z->zeta2) return 1;
    uint64_t v = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1, z->alpha));
    return v < z->n ? v : z->n - 1;
}

/* ---- keys and values ------------------------------------------------------ */

static int key_digits(int key_bytes) { return key_bytes - 4 < 19 ? key_bytes - 4 : 19; }

static uint64_t pow10u(int d) {
    uint64_t m = 1;
    while (d-- > 0) m *= 10;
    return m;
}

/* One round of a bijection of [0, 2^k): affine maps with odd multipliers and
 * xorshifts, each invertible modulo 2^k. */
static uint64_t perm_round(uint64_t x, int k, uint64_t mask) {
    int s = (k + 1) / 2;
    x = (x * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL) & mask;
    x ^= x >> s;
    x = (x * 0xbf58476d1ce4e5b9ULL) & mask;
    return x ^ (x >> s);
}

/* A bijection of [0, m): the round above on the smallest power of two
 * >= m, repeated until it lands below m (cycle walking, < 2 rounds on
 * average since m > 2^k / 2). */
static uint64_t perm(uint64_t x, uint64_t m) {
    int k = 0;
    while (k < 64 && ((m - 1) >> k) != 0) k++;
    uint64_t mask = k == 64 ? ~0ULL : (1ULL << k) - 1;
    do x = perm_round(x, k, mask); while (x >= m);
    return x;
}

size_t wl_key(const wl_params *p, uint64_t record, char *buf, size_t buflen) {
    int kb = p->key_bytes;
    if (kb < WL_KEY_MIN || kb > WL_KEY_MAX || buflen < (size_t)kb + 1) return 0;
    uint64_t m = pow10u(key_digits(kb));
    snprintf(buf, buflen, "user%0*llu", kb - 4, (unsigned long long)perm(record % m, m));
    return (size_t)kb;
}

/* Start of the byte stream of the value of (record, version). */
static uint64_t value_state(uint64_t seed, uint64_t record, uint64_t version) {
    return mix2(mix2(seed, record), version);
}

/* n bytes of the stream, a whole word at a time: calls continue the stream
 * as long as every n but the last is a multiple of 8. */
static void stream_fill(uint64_t *s, unsigned char *buf, size_t n) {
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = kvu_splitmix64(s);
        for (size_t j = 0; j < 8 && i + j < n; j++) buf[i + j] = (unsigned char)(w >> (8 * j));
    }
}

static void put_le64(unsigned char *b, uint64_t v) {
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | b[i];
    return v;
}

size_t wl_load_value_len(const wl_params *p, uint64_t record) {
    uint64_t span = (uint64_t)(p->value_max - p->value_min) + 1;
    return (size_t)(p->value_min + (int64_t)(mix2(mix2(p->seed, record), 0x10ad) % span));
}

/* ---- parameters ----------------------------------------------------------- */

static const char *const kind_names[WL_NKINDS] = {"read", "update", "insert", "scan", "rmw"};
static const char *const dist_names[WL_NDISTS] = {"uniform", "zipfian", "zipfian_plain",
                                                  "latest", "hotspot"};

const char *wl_kind_name(wl_kind k) {
    return (unsigned)k < WL_NKINDS ? kind_names[k] : "?";
}

const char *wl_dist_name(wl_dist d) {
    return (unsigned)d < WL_NDISTS ? dist_names[d] : "?";
}

/* YCSB workloads/workload{a..f}: read, update, insert, scan, rmw, distribution. */
static const struct preset {
    char name;
    double mix[WL_NKINDS];
    wl_dist dist;
    int64_t scan_max;
} presets[] = {
    {'a', {0.50, 0.50, 0, 0, 0}, WL_DIST_ZIPFIAN, 1000},
    {'b', {0.95, 0.05, 0, 0, 0}, WL_DIST_ZIPFIAN, 1000},
    {'c', {1.00, 0, 0, 0, 0}, WL_DIST_ZIPFIAN, 1000},
    {'d', {0.95, 0, 0.05, 0, 0}, WL_DIST_LATEST, 1000},
    {'e', {0, 0, 0.05, 0.95, 0}, WL_DIST_ZIPFIAN, 100},
    {'f', {0.50, 0, 0, 0, 0.50}, WL_DIST_ZIPFIAN, 1000},
};

int wl_preset(wl_params *p, const char *name, char *err, size_t errlen) {
    if (name && strlen(name) == 1)
        for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
            if (presets[i].name != tolower((unsigned char)name[0])) continue;
            memcpy(p->proportion, presets[i].mix, sizeof p->proportion);
            p->dist = presets[i].dist;
            p->scan_min = 1;
            p->scan_max = presets[i].scan_max;
            snprintf(p->name, sizeof p->name, "%c", presets[i].name);
            return 0;
        }
    return kvu_fail(err, errlen, "unknown workload '%s' (YCSB core workloads are a to f)",
                name ? name : "(null)");
}

void wl_params_default(wl_params *p) {
    memset(p, 0, sizeof *p);
    wl_preset(p, "a", NULL, 0);
    p->records = 1000;
    p->operations = 1000;
    p->zipf_theta = 0.99;
    p->hot_data = 0.2;
    p->hot_ops = 0.8;
    p->key_bytes = 24;
    p->value_min = p->value_max = 1000;
    p->seed = 1;
}

/* Digits only (no sign, no blanks), within uint64. */
static int parse_u64(const char *s, uint64_t *out) {
    if (!isdigit((unsigned char)s[0])) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

/* "N" or "MIN..MAX", each a signed integer (the check refuses negatives). */
static int parse_range(const char *s, int64_t *lo, int64_t *hi) {
    char *end;
    errno = 0;
    long long a = strtoll(s, &end, 10), b;
    if (end == s || errno) return -1;
    if (*end == 0) b = a;
    else if (strncmp(end, "..", 2) == 0) {
        const char *t = end + 2;
        b = strtoll(t, &end, 10);
        if (end == t || *end || errno) return -1;
    } else
        return -1;
    *lo = a;
    *hi = b;
    return 0;
}

static int set_dist(wl_params *p, const char *v, char *err, size_t n) {
    for (int d = 0; d < WL_NDISTS; d++)
        if (strcmp(v, dist_names[d]) == 0) {
            p->dist = (wl_dist)d;
            return 0;
        }
    return kvu_fail(err, n, "distribution: unknown distribution '%s' (uniform, zipfian, "
                "zipfian_plain, latest, hotspot)", v);
}

typedef enum ftype { F_PRESET, F_COUNT, F_REAL, F_INT, F_RANGE, F_DIST } ftype;

#define AT(field) offsetof(wl_params, field)

/* The names of wl_params_set: syntax, whether setting it makes the workload
 * "custom" (no longer the preset), and where the value goes (at2: the
 * maximum of a range). */
static const struct setting {
    const char *name;
    ftype type;
    int custom;
    size_t at, at2;
} settings[] = {
    {"workload", F_PRESET, 0, 0, 0},          {"records", F_COUNT, 0, AT(records), 0},
    {"operations", F_COUNT, 0, AT(operations), 0}, {"seed", F_COUNT, 0, AT(seed), 0},
    {"duration_s", F_REAL, 0, AT(duration_s), 0},
    {"read", F_REAL, 1, AT(proportion[WL_READ]), 0},
    {"update", F_REAL, 1, AT(proportion[WL_UPDATE]), 0},
    {"insert", F_REAL, 1, AT(proportion[WL_INSERT]), 0},
    {"scan", F_REAL, 1, AT(proportion[WL_SCAN]), 0},
    {"rmw", F_REAL, 1, AT(proportion[WL_RMW]), 0},
    {"distribution", F_DIST, 1, 0, 0},        {"zipfian_constant", F_REAL, 1, AT(zipf_theta), 0},
    {"hotspot_data_fraction", F_REAL, 0, AT(hot_data), 0},
    {"hotspot_ops_fraction", F_REAL, 0, AT(hot_ops), 0},
    {"key_bytes", F_INT, 0, AT(key_bytes), 0},
    {"value_bytes", F_RANGE, 0, AT(value_min), AT(value_max)},
    {"scan_length", F_RANGE, 1, AT(scan_min), AT(scan_max)},
    {"target_rate_per_s", F_REAL, 0, AT(target_rate), 0},
};

/* Parse v by the setting's syntax into its field(s) of p. */
static int apply(wl_params *p, const struct setting *s, const char *v, char *err, size_t n) {
    char *base = (char *)p;
    uint64_t u;
    double d;
    int64_t lo, hi;
    switch (s->type) {
    case F_PRESET:
        return wl_preset(p, v, err, n);
    case F_DIST:
        return set_dist(p, v, err, n);
    case F_COUNT:
        if (parse_u64(v, &u))
            return kvu_fail(err, n, "%s: '%s' is not a whole number >= 0", s->name, v);
        *(uint64_t *)(base + s->at) = u;
        return 0;
    case F_REAL:
        if (kvu_parse_double(v, &d)) return kvu_fail(err, n, "%s: '%s' is not a number", s->name, v);
        *(double *)(base + s->at) = d;
        return 0;
    case F_INT:
        if (parse_range(v, &lo, &hi) || strstr(v, "..") || lo < -1000000 || lo > 1000000)
            return kvu_fail(err, n, "%s: '%s' is not an integer", s->name, v);
        *(int *)(base + s->at) = (int)lo;
        return 0;
    default:
        if (parse_range(v, &lo, &hi))
            return kvu_fail(err, n, "%s: '%s' is neither N nor MIN..MAX", s->name, v);
        *(int64_t *)(base + s->at) = lo;
        *(int64_t *)(base + s->at2) = hi;
        return 0;
    }
}

int wl_params_set(wl_params *p, const char *name, const char *value, char *err, size_t errlen) {
    if (!name || !value) return kvu_fail(err, errlen, "workload setting: missing name or value");
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        if (strcmp(name, settings[i].name) != 0) continue;
        if (apply(p, &settings[i], value, err, errlen)) return -1;
        if (settings[i].custom) snprintf(p->name, sizeof p->name, "custom");
        return 0;
    }
    return kvu_fail(err, errlen, "unknown workload setting '%s'", name);
}

static int check_mix(const wl_params *p, char *err, size_t n) {
    double sum = 0;
    for (int k = 0; k < WL_NKINDS; k++) {
        if (!(p->proportion[k] >= 0 && p->proportion[k] <= 1))
            return kvu_fail(err, n, "proportion %s must be in [0, 1], not %g", kind_names[k],
                        p->proportion[k]);
        sum += p->proportion[k];
    }
    if (fabs(sum - 1) > WL_PROPORTION_SLACK)
        return kvu_fail(err, n, "proportions read+update+insert+scan+rmw sum to %.9g, not 1", sum);
    return 0;
}

static int check_sizes(const wl_params *p, char *err, size_t n) {
    if (p->key_bytes < WL_KEY_MIN || p->key_bytes > WL_KEY_MAX)
        return kvu_fail(err, n, "key_bytes must be %d..%d, not %d", WL_KEY_MIN, WL_KEY_MAX,
                    p->key_bytes);
    if (p->value_min < 0 || p->value_max < 0)
        return kvu_fail(err, n, "value_bytes must not be negative (%lld..%lld)",
                    (long long)p->value_min, (long long)p->value_max);
    if (p->value_max < p->value_min)
        return kvu_fail(err, n, "value_bytes minimum %lld is above its maximum %lld",
                    (long long)p->value_min, (long long)p->value_max);
    if (p->value_max > WL_VALUE_MAX)
        return kvu_fail(err, n, "value_bytes maximum %lld is over the limit %u",
                    (long long)p->value_max, WL_VALUE_MAX);
    if (p->scan_min < 1)
        return kvu_fail(err, n, "scan_length minimum must be at least 1, not %lld",
                    (long long)p->scan_min);
    if (p->scan_max < p->scan_min)
        return kvu_fail(err, n, "scan_length minimum %lld is above its maximum %lld",
                    (long long)p->scan_min, (long long)p->scan_max);
    if (p->scan_max > UINT32_MAX)
        return kvu_fail(err, n, "scan_length maximum %lld is too large", (long long)p->scan_max);
    return 0;
}

/* The record numbers `need` must fit in the key's digits. */
static int check_key_room(const wl_params *p, uint64_t need, const char *what, char *err,
                          size_t n) {
    int d = key_digits(p->key_bytes);
    if (need > pow10u(d))
        return kvu_fail(err, n, "key_bytes %d leaves %d digits, too few for %s (%llu record numbers)",
                    p->key_bytes, d, what, (unsigned long long)need);
    return 0;
}

static int check_choice(const wl_params *p, char *err, size_t n) {
    if ((unsigned)p->dist >= WL_NDISTS)
        return kvu_fail(err, n, "distribution %d is not one of uniform, zipfian, zipfian_plain, "
                    "latest, hotspot", (int)p->dist);
    if (!(p->zipf_theta > 0 && p->zipf_theta < 1))
        return kvu_fail(err, n, "zipfian_constant must be in (0, 1), not %g", p->zipf_theta);
    if (!(p->hot_data >= 0 && p->hot_data <= 1))
        return kvu_fail(err, n, "hotspot_data_fraction must be in [0, 1], not %g", p->hot_data);
    if (!(p->hot_ops >= 0 && p->hot_ops <= 1))
        return kvu_fail(err, n, "hotspot_ops_fraction must be in [0, 1], not %g", p->hot_ops);
    return 0;
}

int wl_params_check(const wl_params *p, char *err, size_t errlen) {
    if (p->records == 0)
        return kvu_fail(err, errlen, "records must be at least 1: reads, updates and scans "
                    "need loaded records");
    if (!(p->duration_s >= 0) || isinf(p->duration_s))
        return kvu_fail(err, errlen, "duration_s must be a finite number >= 0, not %g",
                    p->duration_s);
    if (p->operations == 0 && p->duration_s == 0)
        return kvu_fail(err, errlen, "no end to the run: set operations or duration_s");
    if (!(p->target_rate >= 0) || isinf(p->target_rate))
        return kvu_fail(err, errlen, "target_rate_per_s must be a finite number >= 0 "
                    "(0 = closed loop), not %g", p->target_rate);
    if (check_mix(p, err, errlen) || check_choice(p, err, errlen) ||
        check_sizes(p, err, errlen) || check_key_room(p, p->records, "records", err, errlen))
        return -1;
    if (p->proportion[WL_INSERT] > 0 && p->operations > 0)
        return check_key_room(p, add_sat(p->records, p->operations), "records + operations",
                              err, errlen);
    return 0;
}

/* Most operations any rank runs: ceil(operations / nranks). */
static uint64_t max_rank_ops(const wl_params *p, int nranks) {
    return p->operations / (uint64_t)nranks + (p->operations % (uint64_t)nranks != 0);
}

int wl_params_check_ranks(const wl_params *p, int nranks, char *err, size_t errlen) {
    if (wl_params_check(p, err, errlen)) return -1;
    if (nranks < 1) return kvu_fail(err, errlen, "nranks must be at least 1, not %d", nranks);
    if (p->proportion[WL_INSERT] > 0 && p->operations > 0) {
        u128 top = (u128)max_rank_ops(p, nranks) * (unsigned)nranks;
        uint64_t need = top > UINT64_MAX ? UINT64_MAX : add_sat(p->records, (uint64_t)top);
        return check_key_room(p, need, "the insert ranges of all ranks", err, errlen);
    }
    return 0;
}

uint64_t wl_load_begin(const wl_params *p, int rank, int nranks) {
    return (uint64_t)((u128)p->records * (unsigned)rank / (unsigned)nranks);
}

uint64_t wl_load_end(const wl_params *p, int rank, int nranks) {
    return wl_load_begin(p, rank + 1, nranks);
}

/* ---- the generator -------------------------------------------------------- */

struct wl_gen {
    wl_params p;
    int rank, nranks;
    rng r;
    uint64_t budget, done, inserted;
    double period;            /* seconds between intended starts; 0 = closed loop */
    double cum[WL_NKINDS];    /* cumulative proportions */
    uint64_t space;           /* zipfian item space: records + expected own inserts */
    zipf fixed;               /* zipfian, zipfian_plain: over SCRAMBLE_ITEMS or space */
    zipf recent;              /* latest: over the known records, grown on insert */
};

wl_gen *wl_gen_new(const wl_params *p, int rank, int nranks) {
    if (wl_params_check_ranks(p, nranks, NULL, 0) || rank < 0 || rank >= nranks) {
        errno = EINVAL;
        return NULL;
    }
    wl_gen *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->p = *p;
    g->rank = rank;
    g->nranks = nranks;
    kvu_rng_seed(&g->r, mix2(p->seed, (uint64_t)rank));
    uint64_t n = (uint64_t)nranks;
    g->budget = p->operations / n + ((uint64_t)rank < p->operations % n);
    g->period = p->target_rate > 0 ? nranks / p->target_rate : 0;
    for (int k = 0; k < WL_NKINDS; k++) g->cum[k] = (k ? g->cum[k - 1] : 0) + p->proportion[k];
    /* YCSB: expectednewkeys = operationcount * insertproportion * 2 (a fudge factor). */
    g->space = add_sat(p->records, (uint64_t)((double)max_rank_ops(p, nranks) *
                                              p->proportion[WL_INSERT] * 2.0));
    zipf_init(&g->fixed, p->dist == WL_DIST_ZIPFIAN ? SCRAMBLE_ITEMS : g->space, p->zipf_theta);
    zipf_init(&g->recent, p->records, p->zipf_theta);
    return g;
}

void wl_gen_free(wl_gen *g) { free(g); }

uint64_t wl_rank_ops(const wl_gen *g) { return g->budget; }

/* Record number of the rank's i-th known record (loaded first, then own inserts). */
static uint64_t known_record(const wl_gen *g, uint64_t i) {
    uint64_t n = g->p.records;
    return i < n ? i : n + (uint64_t)g->rank + (i - n) * (uint64_t)g->nranks;
}

static wl_kind choose_kind(wl_gen *g) {
    double u = rng_u01(&g->r) * g->cum[WL_NKINDS - 1];
    int last = 0;
    for (int k = 0; k < WL_NKINDS; k++) {
        if (g->p.proportion[k] <= 0) continue;
        if (u < g->cum[k]) return (wl_kind)k;
        last = k;
    }
    return (wl_kind)last;
}

/* Zipfian over the fixed item space, redrawing items not inserted yet. */
static uint64_t choose_zipfian(wl_gen *g, uint64_t known) {
    uint64_t i = 0;
    for (int t = 0; t < SCRAMBLE_TRIES; t++) {
        i = zipf_draw(&g->fixed, &g->r);
        if (g->p.dist == WL_DIST_ZIPFIAN) i = fnv64(i) % g->space;
        if (i < known) return i;
    }
    return i % known;
}

static uint64_t choose_hotspot(wl_gen *g, uint64_t known) {
    uint64_t hot = (uint64_t)((double)known * g->p.hot_data);
    if (hot < 1) hot = 1;
    if (hot >= known || rng_u01(&g->r) < g->p.hot_ops) return rng_below(&g->r, hot);
    return hot + rng_below(&g->r, known - hot);
}

/* Index into the known records for a read, update, scan or rmw. */
static uint64_t choose_index(wl_gen *g) {
    uint64_t known = g->p.records + g->inserted;
    switch (g->p.dist) {
    case WL_DIST_UNIFORM:
        return rng_below(&g->r, known);
    case WL_DIST_LATEST:
        if (g->recent.n < known) zipf_grow(&g->recent, known);
        return known - 1 - zipf_draw(&g->recent, &g->r);
    case WL_DIST_HOTSPOT:
        return choose_hotspot(g, known);
    default:
        return choose_zipfian(g, known);
    }
}

static uint64_t draw_between(rng *r, int64_t lo, int64_t hi) {
    return (uint64_t)lo + (hi > lo ? rng_below(r, (uint64_t)(hi - lo) + 1) : 0);
}

int wl_next(wl_gen *g, wl_op *op) {
    if (g->p.operations && g->done >= g->budget) return 0;
    wl_kind k = choose_kind(g);
    op->kind = k;
    op->seq = g->done;
    op->intended_s = g->period > 0 ? (double)g->done * g->period : -1;
    op->value_len = 0;
    op->scan_len = 0;
    if (k == WL_INSERT) {
        op->record = known_record(g, g->p.records + g->inserted);
        g->inserted++;
    } else
        op->record = known_record(g, choose_index(g));
    if (k == WL_UPDATE || k == WL_INSERT || k == WL_RMW)
        op->value_len = (size_t)draw_between(&g->r, g->p.value_min, g->p.value_max);
    if (k == WL_SCAN) {
        uint64_t top = known_record(g, g->p.records + g->inserted - 1);
        uint64_t len = draw_between(&g->r, g->p.scan_min, g->p.scan_max);
        op->scan_len = (uint32_t)(len < top + 1 - op->record ? len : top + 1 - op->record);
    }
    op->key_len = wl_key(&g->p, op->record, op->key, sizeof op->key);
    g->done++;
    return 1;
}

void wl_make_value(const wl_gen *g, uint64_t record, uint64_t version, unsigned char *buf,
                   size_t len) {
    size_t from = 0;
    if (len >= WL_VALUE_HEADER) {
        put_le64(buf, record);
        put_le64(buf + 8, version);
        from = WL_VALUE_HEADER;
    }
    uint64_t s = value_state(g->p.seed, record, version);
    stream_fill(&s, buf + from, len - from);
}

int wl_check_value(const wl_gen *g, uint64_t record, const unsigned char *buf, size_t len,
                   uint64_t *version) {
    if (len < WL_VALUE_HEADER) return -1;
    uint64_t v = get_le64(buf + 8), s = value_state(g->p.seed, record, v);
    if (get_le64(buf) != record) return 0;
    unsigned char chunk[256];  /* a multiple of 8, so the stream continues across chunks */
    for (size_t at = WL_VALUE_HEADER; at < len; at += sizeof chunk) {
        size_t n = len - at < sizeof chunk ? len - at : sizeof chunk;
        stream_fill(&s, chunk, n);
        if (memcmp(chunk, buf + at, n) != 0) return 0;
    }
    if (version) *version = v;
    return 1;
}
