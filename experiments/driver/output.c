/*
 * output.c -- gather every rank's measurements and write the run's
 * files (docs/formats.md) from the first survivor.
 *
 * Collective over the run's communicator (the store's survivors, or every
 * rank for another backend): histograms are
 * summed with MPI_Reduce over their flat arrays, timelines and recovery
 * records gathered with MPI_Gatherv.  Everything is written and flushed
 * before the caller reaches MPI_Finalize, which may hang after a failure.
 * Detection time per recovery is taken from the kill log the injector
 * wrote (the last kill before the rank noticed): the survivor's notice
 * minus the victim's kill timestamp, each corrected by its host's clock
 * offset (clocks.c, measured again here on the survivors).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "kv_util.h"


int drv_mkdirs(const char *path) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

static FILE *open_out(const drv_settings *s, const char *name) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", s->out, name);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "kv_driver: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static void iso_time(int64_t wall_ns, char *buf, size_t n) {
    time_t tt = (time_t)(wall_ns / 1000000000);
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char *phase_name[DRV_NPHASES] = {"before_failure", "after_failure"};

MPI_Comm drv_comm(const drv_ctx *x) { return x->kv ? kv_comm(x->kv) : MPI_COMM_WORLD; }

static int survivors(const drv_ctx *x) { return x->kv ? kv_size(x->kv) : x->size; }

void drv_verdict(int bad, const char *what, const char *why) {
    FILE *f = getenv("KVRUN_DONE") ? fopen(getenv("KVRUN_DONE"), "w") : NULL;
    if (!f) return;
    if (bad) fprintf(f, "FAIL %s\n", why);
    else fprintf(f, "PASS %s\n", what);
    fclose(f);
}

/* Merge every rank's histograms into m->lat at the root. */
static void reduce_hists(MPI_Comm comm, drv_rank *m, int root_is_me) {
    for (int k = 0; k < WL_NKINDS; k++)
        for (int p = 0; p < DRV_NPHASES; p++) {
            hist *h = &m->lat[k][p], sum;
            hist_init(&sum);
            MPI_Reduce(hist_flat(h), hist_flat(&sum), HIST_FLAT_LEN, MPI_UINT64_T, MPI_SUM, 0, comm);
            MPI_Reduce(&h->min, &sum.min, 1, MPI_UINT64_T, MPI_MIN, 0, comm);
            MPI_Reduce(&h->max, &sum.max, 1, MPI_UINT64_T, MPI_MAX, 0, comm);
            if (root_is_me) *h = sum;
        }
}

static void line_lat(FILE *f, const char *op, const char *ph, const hist *h) {
    if (hist_count(h) == 0) return;
    fprintf(f, "%s,%s,%llu,%.3f,%.3f,%.3f,%.3f,%.3f\n", op, ph, (unsigned long long)hist_count(h),
            hist_percentile(h, 50) / 1e3, hist_percentile(h, 90) / 1e3, hist_percentile(h, 99) / 1e3,
            hist_percentile(h, 99.9) / 1e3, hist_max(h) / 1e3);
}

/* One HdrHistogram percentile distribution (formats.c). */
static void write_hgrm(const drv_settings *s, const char *name, const hist *h) {
    FILE *f = open_out(s, name);
    if (!f) return;
    drv_write_hgrm(f, h);
    fclose(f);
}

static void write_latency(const drv_settings *s, drv_rank *m) {
    FILE *f = open_out(s, "latency.csv"), *g = open_out(s, "latency_hist.csv");
    if (!f || !g) { if (f) fclose(f); if (g) fclose(g); return; }
    fprintf(f, "op,phase,count,p50_us,p90_us,p99_us,p999_us,max_us\n");
    fprintf(g, "op,phase,bucket_low_us,bucket_high_us,count\n");
    hist all_ops[DRV_NPHASES + 1];
    for (int p = 0; p <= DRV_NPHASES; p++) hist_init(&all_ops[p]);
    for (int k = 0; k < WL_NKINDS; k++) {
        hist both;
        hist_init(&both);
        for (int p = 0; p < DRV_NPHASES; p++) {
            const hist *h = &m->lat[k][p];
            line_lat(f, wl_kind_name(k), phase_name[p], h);
            hist_merge(&both, h);
            hist_merge(&all_ops[p], h);
            hist_range r;
            for (int pos = 0; hist_next(h, &pos, &r);)
                fprintf(g, "%s,%s,%.3f,%.3f,%llu\n", wl_kind_name(k), phase_name[p], r.low / 1e3,
                        r.high / 1e3, (unsigned long long)r.count);
        }
        line_lat(f, wl_kind_name(k), "all", &both);
        hist_merge(&all_ops[DRV_NPHASES], &both);
    }
    for (int p = 0; p < DRV_NPHASES; p++) line_lat(f, "all", phase_name[p], &all_ops[p]);
    line_lat(f, "all", "all", &all_ops[DRV_NPHASES]);
    fclose(f);
    fclose(g);
    write_hgrm(s, "latency.hgrm", &all_ops[DRV_NPHASES]);
    for (int k = 0; k < WL_NKINDS; k++) {
        hist both;
        hist_init(&both);
        for (int p = 0; p < DRV_NPHASES; p++) hist_merge(&both, &m->lat[k][p]);
        char name[64];
        snprintf(name, sizeof name, "latency-%s.hgrm", wl_kind_name(k));
        if (hist_count(&both)) write_hgrm(s, name, &both);
    }
}

/* Every rank's `cnt` elements concatenated at rank 0 of comm (all, with
 * per-rank counts and offsets in elements); nothing on the other ranks. */
typedef struct drv_gathered {
    void *all;
    int *counts, *displs, total;
} drv_gathered;

static drv_gathered gather_root(MPI_Comm comm, int me, void *mine, int cnt, MPI_Datatype type,
                                size_t elem) {
    int size;
    MPI_Comm_size(comm, &size);
    drv_gathered g = {NULL, NULL, NULL, 0};
    if (me == 0) {
        g.counts = malloc(sizeof(int) * (size_t)size);
        g.displs = malloc(sizeof(int) * (size_t)size);
    }
    MPI_Gather(&cnt, 1, MPI_INT, g.counts, 1, MPI_INT, 0, comm);
    if (me == 0) {
        for (int i = 0; i < size; i++) {
            g.displs[i] = g.total;
            g.total += g.counts[i];
        }
        g.all = malloc(elem * (size_t)g.total + 1);
    }
    MPI_Gatherv(mine, cnt, type, g.all, g.counts, g.displs, type, 0, comm);
    return g;
}

static void gathered_free(drv_gathered *g) {
    free(g->all);
    free(g->counts);
    free(g->displs);
}

/* Timelines: rank, then nbins x 4 counters, gathered at root. */
/* wr in the next three: the rank a row names (drv_ctx's rank). */
static void write_timeline(MPI_Comm comm, const drv_settings *s, drv_rank *m, int me, int wr) {
    int n = m->nbins * 4, size;
    MPI_Comm_size(comm, &size);
    long long *mine = malloc(sizeof(long long) * (size_t)(n + 1) + 1);
    mine[0] = wr;
    for (int b = 0; b < m->nbins; b++) {
        mine[1 + 4 * b] = m->bins[b].ops;
        mine[2 + 4 * b] = m->bins[b].reads;
        mine[3 + 4 * b] = m->bins[b].writes;
        mine[4 + 4 * b] = m->bins[b].failed;
    }
    drv_gathered g = gather_root(comm, me, mine, n + 1, MPI_LONG_LONG, sizeof(long long));
    FILE *f = me == 0 ? open_out(s, "timeline.csv") : NULL;
    if (f) {
        fprintf(f, "rank,t_start_s,t_end_s,ops,read_ops,write_ops,failed_ops\n");
        for (int i = 0; i < size; i++) {
            const long long *r = (const long long *)g.all + g.displs[i];
            for (int b = 0; b < (g.counts[i] - 1) / 4; b++)
                fprintf(f, "%lld,%.3f,%.3f,%lld,%lld,%lld,%lld\n", r[0], b * s->bin_s, (b + 1) * s->bin_s,
                        r[1 + 4 * b], r[2 + 4 * b], r[3 + 4 * b], r[4 + 4 * b]);
        }
        fclose(f);
    }
    free(mine);
    gathered_free(&g);
}

int drv_read_kills(const drv_settings *s, drv_kill *k, int max) {
    char path[1200], line[512];
    snprintf(path, sizeof path, "%s/kills.csv", s->out);
    FILE *f = fopen(path, "r");
    int n = 0;
    /* kill,target_rank,pid,host,signal,role,time_ns (injectors/killlog.c) */
    while (f && n < max && fgets(line, sizeof line, f))
        if (strncmp(line, "kill,", 5) && sscanf(line, "%d,%d,%*d,%63[^,],%*[^,],%15[^,],%" SCNd64, &k[n].kill,
                                                &k[n].rank, k[n].host, k[n].role, &k[n].time_ns) == 5)
            n++;
    if (f) fclose(f);
    return n;
}

enum { REC_FIELDS = 15, MAX_KILLS = 256 };

static void write_recovery(MPI_Comm comm, const drv_settings *s, const drv_rank *m, kv_store *kv,
                           int me, int wr) {
    int nrec = kv_recovery_count(kv);
    /* The run's start as the members have it; an idle spare never ran the
     * workload and has 0 (its notices would otherwise be measured from 1970). */
    int64_t start = m->run_start_wall_ns;
    MPI_Allreduce(MPI_IN_PLACE, &start, 1, MPI_INT64_T, MPI_MAX, comm);
    double *mine = calloc((size_t)nrec * REC_FIELDS + 1, sizeof(double));
    for (int i = 0; i < nrec; i++) {
        kv_recovery_times r;
        kv_recovery_get(kv, i, &r);
        double *o = mine + i * REC_FIELDS;
        /* the notice on the reference clock, from the run start: exact in a double */
        double noticed =
            (double)(drv_on_reference(&m->clocks, m->clocks.mine, r.noticed_ns) - start);
        double v[REC_FIELDS] = {i, wr, r.epoch, r.failed, noticed, r.revoke_us, r.shrink_us,
                                r.agree_us, r.windows_us, r.rereplicate_us, r.total_us, r.pairs_restored,
                                r.restarts, r.stopped_us, r.spawn_us};
        memcpy(o, v, sizeof v);
    }
    drv_gathered g = gather_root(comm, me, mine, nrec * REC_FIELDS, MPI_DOUBLE, sizeof(double));
    FILE *f = me == 0 ? open_out(s, "recovery.csv") : NULL;
    if (f) {
        static drv_kill kills[MAX_KILLS];
        double kt[MAX_KILLS];  /* on the reference clock, ns from the run start */
        int nk = drv_read_kills(s, kills, MAX_KILLS);
        for (int k = 0; k < nk; k++)
            kt[k] = (double)(drv_on_reference(&m->clocks, drv_host_index(&m->clocks, kills[k].host),
                                          kills[k].time_ns) - start);
        fprintf(f, "failure,rank,epoch,failed_ranks,detect_us,revoke_us,shrink_us,agree_us,windows_us,"
                   "rereplicate_us,total_us,pairs_restored,restarts,stopped_us,spawn_us\n");
        for (int i = 0; i < g.total / REC_FIELDS; i++) {
            const double *o = (const double *)g.all + i * REC_FIELDS;
            int last = -1;  /* the last kill before this rank noticed */
            for (int k = 0; k < nk; k++)
                if (kt[k] <= o[4] && (last < 0 || kt[k] > kt[last])) last = k;
            char det[32] = "NA";
            if (last >= 0) snprintf(det, sizeof det, "%.3f", (o[4] - kt[last]) / 1e3);
            fprintf(f, "%.0f,%.0f,%.0f,%.0f,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f,%.0f,%.3f,%.3f\n", o[0],
                    o[1], o[2], o[3], det, o[5], o[6], o[7], o[8], o[9], o[10], o[11], o[12], o[13], o[14]);
        }
        fclose(f);
    }
    free(mine);
    gathered_free(&g);
}

/* The store's counters, by kvstore.h's list: names, and values of one kv_stats. */
static const char *const stat_names[] = {
#define STAT_NAME_(f, what) #f,
    KV_STATS(STAT_NAME_)
#undef STAT_NAME_
};
enum { NSTAT = sizeof stat_names / sizeof stat_names[0], PAPI_FIELDS = 5 + 2 * NSTAT };

static void stat_values(const kv_stats *st, long long out[NSTAT]) {
    int i = 0;
#define STAT_VALUE_(f, what) out[i++] = st->f;
    KV_STATS(STAT_VALUE_)
#undef STAT_VALUE_
}

static void write_papi(MPI_Comm comm, const drv_settings *s, drv_rank *m, int me, int wr) {
    int size;
    MPI_Comm_size(comm, &size);
    long long mine[PAPI_FIELDS], *all = NULL, ld[NSTAT], rn[NSTAT];
    stat_values(&m->after_load, ld);
    stat_values(&m->after_run, rn);
    mine[0] = wr;
    mine[1] = m->papi_load[0]; mine[2] = m->papi_load[1];
    mine[3] = m->papi_run[0]; mine[4] = m->papi_run[1];
    for (int i = 0; i < NSTAT; i++) {
        mine[5 + i] = ld[i];
        mine[5 + NSTAT + i] = rn[i] - ld[i];
    }
    if (me == 0) all = malloc(sizeof(long long) * PAPI_FIELDS * (size_t)size);
    MPI_Gather(mine, PAPI_FIELDS, MPI_LONG_LONG, all, PAPI_FIELDS, MPI_LONG_LONG, 0, comm);
    FILE *f = me == 0 ? open_out(s, "papi.csv") : NULL;
    if (f) {
        fprintf(f, "rank,phase,counter,value\n");
        for (int r = 0; r < size; r++) {
            const long long *o = all + r * PAPI_FIELDS;
            for (int ph = 0; ph < 2; ph++) {
                const char *pn = ph ? "run" : "load";
                const char *hw[2] = {"PAPI_TOT_INS", "PAPI_TOT_CYC"};
                for (int h = 0; h < 2; h++) {
                    long long v = o[1 + 2 * ph + h];
                    if (v < 0) fprintf(f, "%lld,%s,%s,NA\n", o[0], pn, hw[h]);
                    else fprintf(f, "%lld,%s,%s,%lld\n", o[0], pn, hw[h], v);
                }
                for (int i = 0; i < NSTAT; i++)
                    fprintf(f, "%lld,%s,sde:::kvstore::%s,%lld\n", o[0], pn, stat_names[i],
                            o[5 + ph * NSTAT + i]);
            }
        }
        fclose(f);
    }
    free(all);
}

/* "v" with v escaped. */
static void json_quoted(FILE *f, const char *v) {
    fputc('"', f);
    for (; *v; v++) {
        if (*v == '"' || *v == '\\') fputc('\\', f);
        if ((unsigned char)*v >= 0x20) fputc(*v, f);
    }
    fputc('"', f);
}

/* "k": "v" with v escaped, then `after`. */
static void json_text(FILE *f, const char *k, const char *v, const char *after) {
    fprintf(f, "\"%s\": ", k);
    json_quoted(f, v);
    fputs(after, f);
}

/* One line of meta.json's top level. */
static void json_str(FILE *f, const char *k, const char *v, int comma) {
    fputs("  ", f);
    json_text(f, k, v, comma ? ",\n" : "\n");
}

/* "config": every store setting (kvstore's list) and the driver's own. */
static void write_config(FILE *f, const kv_config *c, const drv_settings *s) {
    fprintf(f, "  \"config\": {");
    char v[300];
    double d;
    for (int i = 0; kv_config_name(i); i++) {
        kv_config_get(c, kv_config_name(i), v, sizeof v);
        if (kvu_parse_double(v, &d) == 0) fprintf(f, "\"%s\": %s, ", kv_config_name(i), v);
        else json_text(f, kv_config_name(i), v, ", ");
    }
    fprintf(f, "\"bin_s\": %g, \"verify\": %d},\n", s->bin_s, s->verify);
}

typedef struct drv_totals {
    long long ops, failed, retried, verify_errors, not_found;
    long long failed_kind[WL_NKINDS];
    double run_s;
} drv_totals;

/* "hosts", "ranks_per_host", "nodes" and "clock_offsets": the placement
 * the ranks found, and each host's clock against the reference host's. */
static void write_placement(FILE *f, const drv_clocks *c) {
    fprintf(f, "  \"nodes\": %d,\n  \"hosts\": [", c->nhosts);
    for (int h = 0; h < c->nhosts; h++) {
        fputs(h ? ", " : "", f);
        json_quoted(f, c->h[h].name);
    }
    fprintf(f, "],\n  \"ranks_per_host\": [");
    for (int h = 0; h < c->nhosts; h++) fprintf(f, "%s%d", h ? ", " : "", c->h[h].ranks);
    fprintf(f, "],\n  \"clock_offsets\": [");
    for (int h = 0; h < c->nhosts; h++) {
        const drv_clock_host *x = &c->h[h];
        int64_t off, unc;
        drv_clock_offset(c, h, &off, &unc);
        fprintf(f, "%s\n    {", h ? "," : "");
        json_text(f, "host", x->name, ", ");
        for (int w = 0; w < 2; w++) {
            const char *when = w ? "end" : "start";
            if (x->have[w])
                fprintf(f, "\"%s_offset_ns\": %" PRId64 ", \"%s_uncertainty_ns\": %" PRId64 ", ", when,
                        x->off[w], when, x->unc[w]);
            else fprintf(f, "\"%s_offset_ns\": null, \"%s_uncertainty_ns\": null, ", when, when);
        }
        fprintf(f, "\"offset_ns\": %" PRId64 ", \"uncertainty_ns\": %" PRId64 "}", off, unc);
    }
    fprintf(f, "],\n");
}

static void write_meta(const drv_ctx *x, int64_t t0, int64_t t1, const char *status, const drv_totals *t) {
    const drv_settings *s = x->s;
    const drv_rank *m = x->m;
    FILE *f = open_out(s, "meta.json");
    if (!f) return;
    const kv_config *c = &s->store;
    const wl_params *w = &s->work;
    char b0[32], b1[32], ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int vl;
    iso_time(t0, b0, sizeof b0);
    iso_time(t1, b1, sizeof b1);
    MPI_Get_library_version(ver, &vl);
    char *nl = strchr(ver, '\n');
    if (nl) *nl = 0;
    const char *job = getenv("SLURM_ARRAY_JOB_ID") ? getenv("SLURM_ARRAY_JOB_ID") : getenv("SLURM_JOB_ID");
    fprintf(f, "{\n");
    json_str(f, "campaign", s->campaign, 1);
    json_str(f, "run_id", s->run_id, 1);
    json_str(f, "status", status, 1);
    json_str(f, "variant", x->variant, 1);
    json_str(f, "backend", x->window, 1);
    fprintf(f, "  \"ranks\": %d,\n  \"replicas\": %d,\n  \"spares\": %d,\n", x->size, c->replicas,
            c->spares);
    write_placement(f, &m->clocks);
    fprintf(f, "  \"workload\": {\"name\": \"%s\", \"records\": %llu, \"operations\": %llu, "
               "\"duration_s\": %g, \"read\": %g, \"update\": %g, \"insert\": %g, \"scan\": %g, "
               "\"rmw\": %g, \"distribution\": \"%s\", \"key_bytes\": %d, \"value_bytes\": [%lld, %lld], "
               "\"target_rate_per_s\": %g, \"seed\": %llu},\n",
            w->name, (unsigned long long)w->records, (unsigned long long)w->operations, w->duration_s,
            w->proportion[WL_READ], w->proportion[WL_UPDATE], w->proportion[WL_INSERT],
            w->proportion[WL_SCAN], w->proportion[WL_RMW], wl_dist_name(w->dist), w->key_bytes,
            (long long)w->value_min, (long long)w->value_max, w->target_rate, (unsigned long long)w->seed);
    json_str(f, "failures", s->failures, 1);
    fprintf(f, "  \"node_loss\": %s,\n",
            strstr(s->failures, "host:") || strstr(s->failures, "node:") ? "true" : "false");
    json_str(f, "command_line", s->cmdline, 1);
    const char *task = getenv("SLURM_ARRAY_TASK_ID");
    if (job && task && getenv("SLURM_ARRAY_JOB_ID")) fprintf(f, "  \"job_id\": \"%s_%s\",\n", job, task);
    else if (job) fprintf(f, "  \"job_id\": \"%s\",\n", job);
    else fprintf(f, "  \"job_id\": null,\n");
    json_str(f, "mpi_version", ver, 1);
    json_str(f, "mpi_patches", m->prov->patches, 1);
    /* how scripts/kvrun launched it (unset: launched some other way) */
    json_str(f, "transport", getenv("KVRUN_TRANSPORT") ? getenv("KVRUN_TRANSPORT") : "unknown", 1);
    json_str(f, "binding", getenv("KVRUN_BIND") ? getenv("KVRUN_BIND") : "unknown", 1);
    json_str(f, "kvstore_version", KV_VERSION_STRING, 1);
    json_str(f, "git_revision", m->prov->revision, 1);
    json_str(f, "build_revision", m->prov->built, 1);
    json_str(f, "start_time", b0, 1);
    json_str(f, "end_time", b1, 1);
    fprintf(f, "  \"run_start_wall_ns\": %" PRId64 ",\n  \"load_s\": %.3f,\n  \"run_s\": %.3f,\n",
            m->run_start_wall_ns, m->load_s, m->run_s);
    fprintf(f, "  \"survivors\": %d,\n  \"recoveries\": %d,\n", survivors(x), kv_recovery_count(x->kv));
    fprintf(f, "  \"operations_done\": %lld,\n  \"failed_ops\": %lld,\n  \"retried_ops\": %lld,\n"
               "  \"verify_errors\": %lld,\n", t->ops, t->failed, t->retried, t->verify_errors);
    write_config(f, c, s);
    if (x->be->meta) x->be->meta(f, s);
    if (x->extra_meta) x->extra_meta(f, x);
    json_str(f, "papi_hw", m->papi_reason[0] ? m->papi_reason : "available", 0);
    fprintf(f, "}\n");
    fclose(f);
}

/* summary.txt in YCSB's format (formats.c), then a workload's own lines in
 * the same shape (extra_summary); on stdout the same, after the lines YCSB
 * has none for: the run, the variant and each recovery. */
static void write_summary(const drv_ctx *x, const drv_totals *t) {
    const drv_settings *s = x->s;
    kv_store *kv = x->kv;
    long long ms = (long long)(t->run_s * 1e3 + 0.5);
    double tput = t->run_s > 0 ? t->ops / t->run_s : 0.0;
    FILE *f = open_out(s, "summary.txt");
    if (f) {
        drv_write_ycsb(f, x->m, ms, tput, t->failed_kind);
        if (x->extra_summary) x->extra_summary(f, x);
        fclose(f);
    }
    printf("# run %s/%s: %s (%s, r=%d, %d ranks, %d survivors); %lld operations (failed %lld, "
           "retried %lld, verify errors %lld, not found %lld)\n", s->campaign, s->run_id, x->variant,
           x->window, s->store.replicas, x->size, survivors(x), t->ops, t->failed, t->retried,
           t->verify_errors, t->not_found);
    for (int r = 0; r < kv_recovery_count(kv); r++) {
        kv_recovery_times rt;
        kv_recovery_get(kv, r, &rt);
        printf("# recovery %d on this rank: total %.0f us (revoke %.0f, shrink %.0f, agree %.0f, "
               "windows %.0f, re-replicate %.0f), %d failed, %d survivors\n", r, rt.total_us, rt.revoke_us,
               rt.shrink_us, rt.agree_us, rt.windows_us, rt.rereplicate_us, rt.failed, rt.survivors);
    }
    drv_write_ycsb(stdout, x->m, ms, tput, t->failed_kind);
    if (x->extra_summary) x->extra_summary(stdout, x);
}

int drv_write_results(drv_ctx *x, int64_t t0, int64_t t1) {
    const drv_settings *s = x->s;
    drv_rank *m = x->m;
    MPI_Comm comm = drv_comm(x);
    int me;
    MPI_Comm_rank(comm, &me);
    drv_totals t, mine = {m->ops, m->failed_ops, m->retried_ops, m->verify_errors, m->not_found, {0}, 0};
    memcpy(mine.failed_kind, m->failed_kind, sizeof mine.failed_kind);
    MPI_Reduce(&mine, &t, 5 + WL_NKINDS, MPI_LONG_LONG, MPI_SUM, 0, comm);
    MPI_Reduce(&m->run_s, &t.run_s, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    drv_hosts_share(comm, &m->clocks);  /* a respawned process knew only the newcomers' hosts */
    drv_clocks_measure(comm, &m->clocks, 1);
    reduce_hists(comm, m, me == 0);
    write_timeline(comm, s, m, me, x->rank);
    write_recovery(comm, s, m, x->kv, me, x->rank);
    write_papi(comm, s, m, me, x->rank);
    drv_ckpt_write(comm, s, m, me);
    if (me == 0) {
        write_latency(s, m);
        write_meta(x, t0, t1, "finished", &t);
        write_summary(x, &t);
    }
    long long verr = me == 0 ? t.verify_errors : 0;
    MPI_Bcast(&verr, 1, MPI_LONG_LONG, 0, comm);
    return verr ? 1 : 0;
}
