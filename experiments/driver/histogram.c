/*
 * histogram.c -- the log-linear histogram of histogram.h.
 *
 * Bucket index of v: v itself below 2*HIST_SUB; otherwise, with e the
 * position of v's top bit, the HIST_SUB_BITS bits under it pick one of
 * HIST_SUB buckets of width 2^(e - HIST_SUB_BITS) in the octave of e.  The
 * width of a bucket is at most 1/HIST_SUB of its low end, so its middle is
 * within 1/(2*HIST_SUB) of anything in it: that is HIST_REL_ERROR.  Bucket
 * arithmetic is a shift and a count of leading zeros: no loops, no floats.
 */
#include "histogram.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

_Static_assert(offsetof(hist, count) == HIST_BUCKETS * sizeof(uint64_t),
               "count must follow bucket[] for hist_flat");
_Static_assert(offsetof(hist, sum) == (HIST_BUCKETS + 1) * sizeof(uint64_t),
               "sum must follow count for hist_flat");

#define LINEAR (2 * HIST_SUB)   /* values below this have a bucket each */

void hist_init(hist *h) {
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

int hist_bucket_of(uint64_t v) {
    if (v < LINEAR) return (int)v;
    if (v >> HIST_TOP_BITS) return HIST_BUCKETS - 1;
    int e = 63 - __builtin_clzll(v);   /* e >= HIST_SUB_BITS + 1 */
    int sub = (int)(v >> (e - HIST_SUB_BITS)) - HIST_SUB;
    return LINEAR + (e - HIST_SUB_BITS - 1) * HIST_SUB + sub;
}

/* Shift giving the width of bucket i (0 in the linear range). */
static int bucket_shift(int i) {
    return i < LINEAR ? 0 : (i - LINEAR) / HIST_SUB + 1;
}

uint64_t hist_bucket_low(int i) {
    if (i < LINEAR) return (uint64_t)i;
    uint64_t sub = (uint64_t)(HIST_SUB + (i - LINEAR) % HIST_SUB);
    return sub << bucket_shift(i);
}

uint64_t hist_bucket_high(int i) { return hist_bucket_low(i) + (1ULL << bucket_shift(i)); }

void hist_record_n(hist *h, uint64_t v, uint64_t n) {
    if (n == 0) return;
    h->bucket[hist_bucket_of(v)] += n;
    h->count += n;
    h->sum += v * n;
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
}

void hist_record(hist *h, uint64_t v) { hist_record_n(h, v, 1); }

void hist_merge(hist *dst, const hist *src) {
    uint64_t *d = hist_flat(dst);
    const uint64_t *s = src->bucket;
    for (int i = 0; i < HIST_FLAT_LEN; i++) d[i] += s[i];
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
}

uint64_t *hist_flat(hist *h) { return h->bucket; }

uint64_t hist_count(const hist *h) { return h->count; }

uint64_t hist_max(const hist *h) { return h->max; }

uint64_t hist_min(const hist *h) { return h->count ? h->min : 0; }

double hist_mean(const hist *h) { return h->count ? (double)h->sum / (double)h->count : 0; }

/* Rank (1-based) of the p-th percentile among n values. */
static uint64_t percentile_rank(double p, uint64_t n) {
    double r = ceil(p / 100.0 * (double)n - 1e-9);   /* 1e-9: 99.9% of 1000 is 999, not 1000 */
    if (!(r >= 1)) return 1;
    return r >= (double)n ? n : (uint64_t)r;
}

double hist_percentile(const hist *h, double p) {
    if (h->count == 0) return 0;
    uint64_t want = percentile_rank(p, h->count), seen = 0;
    if (want == 1) return (double)h->min;
    if (want == h->count) return (double)h->max;
    int i = 0;
    while (i < HIST_BUCKETS - 1 && (seen += h->bucket[i]) < want) i++;
    double low = (double)hist_bucket_low(i), width = (double)(1ULL << bucket_shift(i));
    double mid = low + (width - 1) / 2;
    if (mid < (double)h->min) mid = (double)h->min;
    if (mid > (double)h->max) mid = (double)h->max;
    return mid;
}

int hist_next(const hist *h, int *pos, hist_range *out) {
    while (*pos < HIST_BUCKETS && h->bucket[*pos] == 0) (*pos)++;
    if (*pos >= HIST_BUCKETS) return 0;
    out->low = hist_bucket_low(*pos);
    out->high = hist_bucket_high(*pos);
    out->count = h->bucket[*pos];
    (*pos)++;
    return 1;
}
