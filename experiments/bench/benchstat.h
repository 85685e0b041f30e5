/*
 * benchstat.h -- the median of a benchmark's rounds (header-only; shared by
 * bench_store_raw and bench_hotpath, which both report the median round so
 * that one noisy round on a shared machine does not move the figure).
 */
#ifndef KV_BENCHSTAT_H
#define KV_BENCHSTAT_H

#include <stdlib.h>

static int benchstat_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) in place; n >= 1. */
static inline double benchstat_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, benchstat_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
