/*
 * formats.c -- the two result files other tools read as they are:
 * summary.txt in YCSB's output format, and the latency distributions in
 * HdrHistogram's percentile-distribution text format (.hgrm).
 *
 * summary.txt holds exactly what YCSB's HdrHistogram measurement prints
 * when run with hdrhistogram.percentiles=50,95,99,99.9: "[SECTION],
 * Metric, value" lines, RunTime in ms, latencies in us, operation names in
 * YCSB's spelling, Return=OK and Return=ERROR counts; nothing else, so
 * YCSB's parsers read it (the Redis backend's [REDIS] lines and a task
 * run's [TASKAPP] lines follow in the same shape, numbers only).  What
 * YCSB has no line for (the variant, the recoveries) is printed on stdout
 * and kept in meta.json and recovery.csv.
 * A .hgrm file is what HdrHistogram's outputPercentileDistribution writes
 * (values in us, 5 ticks per half distance): percentiles step by halving
 * the distance to 100%, each line giving the value at that percentile
 * (its bucket's upper end), the count up to it and 1/(1-percentile), then
 * the mean, deviation, maximum and count.  Plotters of that format (the
 * HdrHistogram plotter, hdr-plot) draw the tail from it.
 */
#include <math.h>
#include <string.h>

#include "backend.h"

static const char *const ycsb_name[WL_NKINDS] = {"READ", "UPDATE", "INSERT", "SCAN",
                                                 "READ-MODIFY-WRITE"};
static const double ycsb_pct[] = {50, 95, 99, 99.9};

/* YCSB's metric name of a percentile: "95thPercentileLatency(us)", "99.9PercentileLatency(us)". */
static void pct_name(double p, char *buf, size_t n) {
    if (p == floor(p)) snprintf(buf, n, "%.0fthPercentileLatency(us)", p);
    else snprintf(buf, n, "%gPercentileLatency(us)", p);
}

void drv_write_ycsb(FILE *f, const drv_rank *m, long long run_ms, double throughput,
                    const long long failed[WL_NKINDS]) {
    fprintf(f, "[OVERALL], RunTime(ms), %lld\n", run_ms);
    fprintf(f, "[OVERALL], Throughput(ops/sec), %.3f\n", throughput);
    for (int k = 0; k < WL_NKINDS; k++) {
        hist h;
        hist_init(&h);
        for (int p = 0; p < DRV_NPHASES; p++) hist_merge(&h, &m->lat[k][p]);
        if (!hist_count(&h)) continue;
        const char *n = ycsb_name[k];
        fprintf(f, "[%s], Operations, %llu\n", n, (unsigned long long)hist_count(&h));
        fprintf(f, "[%s], AverageLatency(us), %.3f\n", n, hist_mean(&h) / 1e3);
        fprintf(f, "[%s], MinLatency(us), %.3f\n", n, (double)hist_min(&h) / 1e3);
        fprintf(f, "[%s], MaxLatency(us), %.3f\n", n, (double)hist_max(&h) / 1e3);
        for (size_t i = 0; i < sizeof ycsb_pct / sizeof ycsb_pct[0]; i++) {
            char name[48];
            pct_name(ycsb_pct[i], name, sizeof name);
            fprintf(f, "[%s], %s, %.3f\n", n, name, hist_percentile(&h, ycsb_pct[i]) / 1e3);
        }
        fprintf(f, "[%s], Return=OK, %llu\n", n, (unsigned long long)hist_count(&h) - failed[k]);
        if (failed[k]) fprintf(f, "[%s], Return=ERROR, %lld\n", n, failed[k]);
    }
}

/* Standard deviation of the values in h (bucket middles), ns. */
static double hist_stddev(const hist *h) {
    double mean = hist_mean(h), sq = 0;
    hist_range r;
    for (int pos = 0; hist_next(h, &pos, &r);) {
        double mid = ((double)r.low + (double)r.high - 1) / 2, d = mid - mean;
        sq += d * d * (double)r.count;
    }
    return h->count ? sqrt(sq / (double)h->count) : 0;
}

enum { TICKS_PER_HALF = 5 };

void drv_write_hgrm(FILE *f, const hist *h) {
    fprintf(f, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    uint64_t n = hist_count(h), seen = 0;
    double next = 0;  /* the next percentile to report */
    hist_range r;
    for (int pos = 0, buckets = 0; n && hist_next(h, &pos, &r); buckets++) {
        seen += r.count;
        double upto = 100.0 * (double)seen / (double)n;
        /* the bucket's top value, within the exact extremes */
        double v = (double)(r.high - 1 < h->max ? r.high - 1 : h->max);
        if (v < (double)h->min) v = (double)h->min;
        while (next <= upto && next < 100) {
            fprintf(f, "%12.3f %12f %12llu %12.2f\n", v / 1e3, next / 100, (unsigned long long)seen,
                    1 / (1 - next / 100));
            /* HdrHistogram's step: halve the distance to 100% every
             * TICKS_PER_HALF lines */
            double ticks = TICKS_PER_HALF * pow(2, floor(log2(100 / (100 - next))) + 1);
            next += 100 / ticks;
            if (seen == n) break;  /* the last bucket: one line, then 100% */
        }
        if (seen == n) fprintf(f, "%12.3f %12f %12llu %12s\n", v / 1e3, 1.0, (unsigned long long)n, "inf");
    }
    fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", hist_mean(h) / 1e3, hist_stddev(h) / 1e3);
    fprintf(f, "#[Max     = %12.3f, Total count    = %12llu]\n", (double)hist_max(h) / 1e3,
            (unsigned long long)n);
    fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", HIST_TOP_BITS - HIST_SUB_BITS, HIST_SUB);
}
