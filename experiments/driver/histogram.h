/*
 * histogram.h -- a log-linear latency histogram of fixed size.
 *
 * Values are unsigned integers in whatever unit the caller picks (the
 * driver records nanoseconds).  Values below 256 each have their own
 * bucket; above, every power of two [2^e, 2^(e+1)) is cut into 128 equal
 * buckets, up to 2^44 (about 4.9 hours in ns).  A percentile is reported as
 * the middle of its bucket, clamped to the exact min and max, so it is
 * within HIST_REL_ERROR (1/256, about 0.4%) of the exact value, and exact
 * below 256.  Count, sum, min and max are kept exactly.  The struct is
 * plain memory (about 39 KB, no pointers): ranks can merge histograms with
 * MPI_Reduce, see hist_flat.  No MPI and no allocation in here.
 */
#ifndef HIST_HISTOGRAM_H
#define HIST_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIST_SUB_BITS 7                          /* 2^7 = 128 buckets per power of two */
#define HIST_SUB (1 << HIST_SUB_BITS)
#define HIST_TOP_BITS 44                         /* values >= 2^44 go to the top bucket */
#define HIST_BUCKETS (2 * HIST_SUB + (HIST_TOP_BITS - HIST_SUB_BITS - 1) * HIST_SUB)
#define HIST_FLAT_LEN (HIST_BUCKETS + 2)         /* bucket[], count, sum: summable */
#define HIST_REL_ERROR (1.0 / 256)               /* bound on a percentile's relative error */

/*
 * The histogram.  bucket, count and sum are adjacent uint64 words (the
 * first HIST_FLAT_LEN words of the struct) that merge by addition; min and
 * max merge by MIN and MAX.  Merging across ranks with MPI:
 *   MPI_Reduce(hist_flat(&mine), hist_flat(&all), HIST_FLAT_LEN, MPI_UINT64_T,
 *              MPI_SUM, 0, comm);
 *   MPI_Reduce(&mine.min, &all.min, 1, MPI_UINT64_T, MPI_MIN, 0, comm);
 *   MPI_Reduce(&mine.max, &all.max, 1, MPI_UINT64_T, MPI_MAX, 0, comm);
 */
typedef struct hist {
    uint64_t bucket[HIST_BUCKETS];   /* values counted per bucket */
    uint64_t count;                  /* values recorded */
    uint64_t sum;                    /* their sum (wraps past 2^64: 584 years of ns) */
    uint64_t min;                    /* smallest value; UINT64_MAX when empty */
    uint64_t max;                    /* largest value; 0 when empty */
} hist;

/* One non-empty bucket: values in [low, high) were counted `count` times. */
typedef struct hist_range {
    uint64_t low, high, count;
} hist_range;

/* Empty h. */
void hist_init(hist *h);

/* Count value v once (hist_record) or n times (hist_record_n).  Values at
 * or above 2^HIST_TOP_BITS land in the top bucket; min and max stay exact. */
void hist_record(hist *h, uint64_t v);
void hist_record_n(hist *h, uint64_t v, uint64_t n);

/* Add src into dst: dst becomes the histogram of both samples. */
void hist_merge(hist *dst, const hist *src);

/* The first of the HIST_FLAT_LEN summable words of h (bucket[], count,
 * sum), for MPI_Reduce with MPI_SUM; the pointer is into h. */
uint64_t *hist_flat(hist *h);

/* Values recorded; largest and smallest value (0 when empty); mean (0
 * when empty). */
uint64_t hist_count(const hist *h);
uint64_t hist_max(const hist *h);
uint64_t hist_min(const hist *h);
double hist_mean(const hist *h);

/* The p-th percentile, p in [0, 100] (99.9 for p99.9): the value of rank
 * ceil(p/100 * count) in sorted order (rank 1 for p = 0), within
 * HIST_REL_ERROR; exactly the min (max) when that rank is the first
 * (last).  0 when empty. */
double hist_percentile(const hist *h, double p);

/* Bucket of value v, and the values [low, high) a bucket holds. */
int hist_bucket_of(uint64_t v);
uint64_t hist_bucket_low(int i);
uint64_t hist_bucket_high(int i);

/* Iterate over the non-empty buckets in increasing order: start with
 * *pos = 0; each call fills *out and returns 1, then 0 at the end. */
int hist_next(const hist *h, int *pos, hist_range *out);

#ifdef __cplusplus
}
#endif

#endif
