/*
 * test_inject_schedule.c -- the injector's spec parser and schedule draws.
 *
 * Pass rules: the same seed gives an identical schedule (and the recorded
 * golden one, so it is the same on every machine); different seeds differ;
 * over 20000 seeds the mean exponential failure time is within 3% of the
 * MTBF; for Weibull shapes 0.7 and 2 the sample mean is within 3% of the
 * MTBF and the empirical CDF at its 10/50/90% points is within 0.02 of
 * 1-exp(-(t/scale)^shape); random targets are distinct, include rank 0
 * by default and never with allow_rank0=0; more simultaneous kills than allowed, or
 * no survivor left, is refused with a message unless force=1; spread events
 * are one victim each with accumulating times; every malformed spec item
 * gets an error naming it; the CSV has its header and one row per kill;
 * the generator reproduces the published splitmix64 and xoshiro256**
 * reference outputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "inject_int.h"

#define NSEEDS 20000

static void table(kvi_rank_info *r, int n) {
    for (int i = 0; i < n; i++) {
        r[i] = (kvi_rank_info){0};   /* no daemons */
        r[i].rank = i;
        r[i].pid = 1000 + i;
        snprintf(r[i].host, sizeof r[i].host, "node%d", i / 4);
    }
}

static void parse_ok(const char *text, kvi_spec *s) {
    char err[256];
    if (kvi_spec_parse(text, s, err, sizeof err)) fail_msg("'%s' refused: %s", text, err);
}

static void build_ok(const kvi_spec *s, int n, int max_sim, kvi_schedule *out) {
    kvi_rank_info r[64];
    char err[256];
    table(r, n);
    if (kvi_schedule_build(s, r, n, max_sim, out, err, sizeof err))
        fail_msg("build refused: %s", err);
}

static int same_schedule(const kvi_schedule *a, const kvi_schedule *b) {
    if (a->nevents != b->nevents) return 0;
    for (int i = 0; i < a->nevents; i++) {
        const kvi_event *x = &a->events[i], *y = &b->events[i];
        if (x->index != y->index || x->rank != y->rank || x->pid != y->pid ||
            x->at_ops != y->at_ops || x->at_time_s != y->at_time_s || strcmp(x->host, y->host))
            return 0;
    }
    return 1;
}

/* Reference outputs from the algorithms' authors (prng.di.unimi.it). */
static void test_rng_reference(void **st) {
    (void)st;
    kvi_rng r = {{1, 2, 3, 4}};
    static const uint64_t xo[4] = {11520, 0, 1509978240, 1215971899390074240ULL};
    for (int i = 0; i < 4; i++) assert_true(kvu_rng_next(&r) == xo[i]);
    kvu_rng_seed(&r, 1234567);   /* state = the first splitmix64 outputs */
    assert_true(r.s[0] == 6457827717110365317ULL && r.s[1] == 3203168211198807973ULL);
    for (int i = 0; i < 1000; i++) {
        double u = kvi__rng_open01(&r);
        assert_true(u > 0 && u < 1);
        assert_true(kvi__rng_below(&r, 7) < 7);
    }
}

static void test_defaults(void **st) {
    (void)st;
    kvi_spec s;
    parse_ok("target=ranks:3,5; when=time:2", &s);
    assert_int_equal(s.signal, SIGKILL);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.spread, 0);
    assert_int_equal(s.seed, 1);
    assert_int_equal(s.force, 0);
    assert_int_equal(s.allow_rank0, 1);
    assert_int_equal(s.nlisted, 2);
    parse_ok(" signal = sigstop ;target=host:n-1.x\nwhen=weibull:10,0.7;seed=0x2a ", &s);
    assert_int_equal(s.signal, SIGSTOP);
    assert_string_equal(s.host, "n-1.x");
    assert_true(s.seed == 42 && s.shape == 0.7 && s.mtbf_s == 10);
}

static void test_same_seed(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule a, b;
    parse_ok("target=random:2; when=exp:10; count=3; seed=42; allow_rank0=0", &s);
    build_ok(&s, 16, 2, &a);
    build_ok(&s, 16, 2, &b);
    assert_int_equal(a.nevents, 6);
    assert_true(same_schedule(&a, &b));
    /* Golden draws: a change here means schedules no longer reproduce. */
    static const int ranks[6] = {13, 10, 7, 9, 2, 5};
    static const double times[3] = {3.295344, 4.920433, 7.646734};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(a.events[i].rank, ranks[i]);
        assert_int_equal(a.events[i].index, i / 2);
        assert_true(fabs(a.events[i].at_time_s - times[i / 2]) < 1e-6);
    }
    kvi_schedule_free(&a);
    kvi_schedule_free(&b);
}

static void test_seeds_differ(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule a, b;
    parse_ok("target=random:2; when=exp:10; count=3", &s);
    for (unsigned long long seed = 1; seed < 50; seed++) {
        s.seed = seed;
        build_ok(&s, 16, 2, &a);
        s.seed = seed + 1;
        build_ok(&s, 16, 2, &b);
        if (same_schedule(&a, &b)) fail_msg("seeds %llu and %llu agree", seed, seed + 1);
        kvi_schedule_free(&a);
        kvi_schedule_free(&b);
    }
}

/* First failure time under NSEEDS seeds; returns the sample mean. */
static double sample(const char *text, double *t) {
    kvi_spec s;
    kvi_schedule sc;
    double sum = 0;
    parse_ok(text, &s);
    for (int i = 0; i < NSEEDS; i++) {
        s.seed = (unsigned long long)i + 1;
        build_ok(&s, 4, 1, &sc);
        t[i] = sc.events[0].at_time_s;
        sum += t[i];
        kvi_schedule_free(&sc);
    }
    return sum / NSEEDS;
}

static void test_exp_mean(void **st) {
    (void)st;
    double *t = malloc(NSEEDS * sizeof *t), mean = sample("target=random:1; when=exp:7.5", t);
    if (fabs(mean - 7.5) > 0.03 * 7.5) fail_msg("exponential mean %g, MTBF 7.5", mean);
    free(t);
}

static void check_weibull(double mtbf, double shape) {
    char text[128];
    double *t = malloc(NSEEDS * sizeof *t);
    snprintf(text, sizeof text, "target=random:1; when=weibull:%g,%g", mtbf, shape);
    double mean = sample(text, t), scale = mtbf / tgamma(1 + 1 / shape);
    if (fabs(mean - mtbf) > 0.03 * mtbf)
        fail_msg("Weibull shape %g: mean %g, MTBF %g", shape, mean, mtbf);
    static const double p[3] = {0.1, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        double x = scale * pow(-log(1 - p[k]), 1 / shape), cdf = 1 - exp(-pow(x / scale, shape));
        int below = 0;
        for (int i = 0; i < NSEEDS; i++) below += t[i] <= x;
        double ecdf = (double)below / NSEEDS;
        if (fabs(ecdf - cdf) > 0.02)
            fail_msg("Weibull shape %g: ECDF(%g) = %g, CDF %g", shape, x, ecdf, cdf);
    }
    free(t);
}

static void test_weibull(void **st) {
    (void)st;
    check_weibull(20, 0.7);
    check_weibull(20, 2);
}

static void test_random_targets(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule sc;
    int saw0 = 0;
    parse_ok("target=random:3; when=time:1; count=2; allow_rank0=0", &s);
    for (unsigned long long seed = 1; seed <= 500; seed++) {
        s.seed = seed;
        build_ok(&s, 8, 3, &sc);
        assert_int_equal(sc.nevents, 6);
        for (int i = 0; i < 6; i++) {
            assert_int_not_equal(sc.events[i].rank, 0);
            assert_int_equal(sc.events[i].pid, 1000 + sc.events[i].rank);
            for (int j = 0; j < i; j++) assert_int_not_equal(sc.events[i].rank, sc.events[j].rank);
        }
        kvi_schedule_free(&sc);
        s.allow_rank0 = 1;
        build_ok(&s, 8, 3, &sc);
        for (int i = 0; i < 6; i++) saw0 |= sc.events[i].rank == 0;
        kvi_schedule_free(&sc);
        s.allow_rank0 = 0;
    }
    assert_true(saw0);
}

/* Build must fail with a message holding `word` (and "force" if forced). */
static void refused(const char *text, int n, int max_sim, const char *word) {
    kvi_spec s;
    kvi_schedule sc;
    kvi_rank_info r[64];
    char err[256] = "";
    parse_ok(text, &s);
    table(r, n);
    if (kvi_schedule_build(&s, r, n, max_sim, &sc, err, sizeof err) == 0)
        fail_msg("'%s' with %d ranks, max %d: accepted", text, n, max_sim);
    if (!strstr(err, word)) fail_msg("'%s': message '%s' lacks '%s'", text, err, word);
    assert_null(sc.events);
}

static void test_limits(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule sc;
    refused("target=random:2; when=time:1", 8, 1, "force=1");
    refused("target=ranks:1,2; when=time:1", 8, 1, "simultaneous");
    refused("target=host:node1; when=time:1", 8, 3, "force=1");
    refused("target=ranks:0,1,2,3; when=time:1; spread=spread; allow_rank0=1", 4, 1, "survivor");
    refused("target=ranks:0,1; when=time:1; allow_rank0=1", 2, 2, "force=1");
    parse_ok("target=random:2; when=time:1; force=1", &s);
    build_ok(&s, 8, 1, &sc);
    assert_int_equal(sc.nevents, 2);
    kvi_schedule_free(&sc);
    parse_ok("target=ranks:0,1; when=time:1; force=1; allow_rank0=1", &s);
    build_ok(&s, 2, 1, &sc);
    kvi_schedule_free(&sc);
    /* Always refused, forced or not. */
    refused("target=ranks:9; when=time:1; force=1", 8, 1, "rank 9");
    refused("target=ranks:0; when=time:1; force=1; allow_rank0=0", 8, 1, "allow_rank0");
    refused("target=host:node0; when=time:1; force=1; allow_rank0=0", 8, 4, "rank 0");
    refused("target=host:elsewhere; when=time:1", 8, 4, "elsewhere");
    refused("target=random:5; when=time:1; count=2; force=1", 8, 4, "eligible");
    /* A hand-made spec gets the parser's checks. */
    char err[256] = "";
    kvi_rank_info r[8];
    table(r, 8);
    parse_ok("target=random:1; when=time:1", &s);
    s.random_k = 0;
    assert_int_equal(kvi_schedule_build(&s, r, 8, 1, &sc, err, sizeof err), -1);
    assert_true(strncmp(err, "target", 6) == 0);
    parse_ok("target=random:1; when=time:1", &s);
    r[3].rank = 2;
    assert_int_equal(kvi_schedule_build(&s, r, 8, 1, &sc, err, sizeof err), -1);
    assert_true(strncmp(err, "ranks", 5) == 0);
}

static void test_spread_and_ops(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule sc;
    parse_ok("target=ranks:3,5,6; when=time:1.5; spread=spread", &s);
    build_ok(&s, 8, 1, &sc);
    assert_int_equal(sc.nevents, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sc.events[i].index, i);
        assert_true(fabs(sc.events[i].at_time_s - 1.5 * (i + 1)) < 1e-12);
    }
    kvi_schedule_free(&sc);
    parse_ok("target=host:node1; when=ops:5000; signal=TERM", &s);
    build_ok(&s, 8, 4, &sc);
    assert_int_equal(sc.nevents, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(sc.events[i].rank, 4 + i);
        assert_int_equal(sc.events[i].index, 0);
        assert_int_equal(sc.events[i].kind, KVI_AT_OPS);
        assert_int_equal(sc.events[i].at_ops, 5000);
        assert_int_equal(sc.events[i].signal, SIGTERM);
        assert_string_equal(sc.events[i].host, "node1");
    }
    kvi_schedule_free(&sc);
    parse_ok("target=random:1; when=weibull:5,2; count=5; spread=spread", &s);
    build_ok(&s, 8, 1, &sc);
    for (int i = 1; i < 5; i++) assert_true(sc.events[i].at_time_s > sc.events[i - 1].at_time_s);
    kvi_schedule_free(&sc);
}

static void bad_spec(const char *text, const char *word) {
    kvi_spec s;
    char err[256] = "";
    if (kvi_spec_parse(text, &s, err, sizeof err) == 0) fail_msg("'%s' accepted", text);
    if (strncmp(err, word, strlen(word)) != 0)
        fail_msg("'%s': message '%s' does not start with '%s'", text, err, word);
}

static void test_bad_items(void **st) {
    (void)st;
    static const char *ok = "target=ranks:1; when=time:1; ";
    static const struct { const char *item, *word; } bad[] = {
        {"signal=HUP", "signal"},       {"signal=", "signal"},       {"signal", "signal"},
        {"colour=red", "colour"},       {"=3", "''"},                {"seed=abc", "seed"},
        {"seed=-1", "seed"},            {"count=0", "count"},        {"count=2.5", "count"},
        {"spread=maybe", "spread"},     {"force=2", "force"},
        {"allow_rank0=yes", "allow_rank0"},
        {"seed=1; seed=2", "seed"},     {"count=2", "count"},
        {"for=2", "for"},               {"signal=STOP; for=0", "for"},
        {"signal=STOP; for=-1", "for"}, {"signal=STOP; for=2s", "for"},
        {"signal=STOP; for=90000", "for"}, {"signal=KILL; for=1", "for"},
        {"signal=LINK", "signal"},      /* a link is a host's: node targets only */
        {"signal=VANISH; for=5", "signal"},  /* so is a vanish */
        {"signal=SLOW; rate=1mbit", "signal"},  /* and a slow link */
        {"rate=1mbit", "rate"},         {"loss=1", "loss"},   /* a slow link's settings only */
    };
    char text[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", ok, bad[i].item);
        bad_spec(text, bad[i].word);
    }
    static const char *targets[] = {"target=ranks:", "target=ranks:1,x", "target=ranks:1,,2",
                                    "target=ranks:2,2", "target=ranks:-1", "target=random:0",
                                    "target=random:x", "target=host:", "target=host:a b",
                                    "target=bogus:1", "target=", ""};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        snprintf(text, sizeof text, "when=time:1; %s", targets[i]);
        bad_spec(text, "target");
    }
    static const char *whens[] = {"when=ops:-1", "when=ops:abc", "when=time:x", "when=time:-2",
                                  "when=exp:0", "when=exp:", "when=weibull:10", "when=weibull:10,0",
                                  "when=weibull:x,2", "when=weibull:10,inf", "when=fortnight:3",
                                  "when=", "signal=KILL"};
    for (size_t i = 0; i < sizeof whens / sizeof whens[0]; i++) {
        snprintf(text, sizeof text, "target=ranks:1; %s", whens[i]);
        bad_spec(text, "when");
    }
}

/* The schedule's CSV, in a buffer the caller frees. */
static char *csv_of(const kvi_schedule *sc) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(kvi_schedule_write_csv(sc, f), 0);
    fclose(f);
    return buf;
}

static void test_csv(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule sc;
    parse_ok("target=ranks:2,3; when=time:0.5; signal=STOP", &s);
    build_ok(&s, 8, 2, &sc);
    char *buf = csv_of(&sc);
    assert_string_equal(buf, "event,target_rank,pid,host,signal,when_kind,at_ops,at_time_s,role,for_s\n"
                             "0,2,1002,node0,STOP,time,,0.500000,rank,\n"
                             "0,3,1003,node0,STOP,time,,0.500000,rank,\n");
    free(buf);
    kvi_schedule_free(&sc);
}

/* A partition (signal=LINK): one event per node, its host's link, no
 * process; the node limits hold even with an end (a cut that outlasts
 * detection loses the node). */
static void test_partition(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule sc;
    parse_ok("target=node:random; when=time:1; signal=LINK; for=0.5", &s);
    assert_int_equal(s.signal, KVI_LINK_DOWN);
    build_ok(&s, 12, 1, &sc);
    assert_int_equal(sc.nevents, 1);
    assert_int_equal(sc.events[0].role, KVI_ROLE_HOST);
    assert_int_equal(sc.events[0].rank, -1);
    assert_int_equal(sc.events[0].pid, 0);
    assert_true(sc.events[0].resume_s == 0.5);
    assert_true(strcmp(sc.events[0].host, "node0") != 0);   /* not the launch node */
    kvi_schedule_free(&sc);
    refused("target=node:random; when=time:1; signal=LINK; for=0.5", 12, 0, "force=1");
    assert_string_equal(kvi_signal_name(KVI_LINK_DOWN), "LINKDOWN");
    assert_string_equal(kvi_signal_name(KVI_LINK_UP), "LINKUP");
    assert_string_equal(kvi_role_name(KVI_ROLE_HOST), "host");
}

/* A vanish (signal=VANISH): the node's processes stopped (STOP, its
 * lowest rank last), then its host's link cut, at one moment; each ended
 * for= later, the processes by KILL, the link by LINKUP; for= is
 * required, and the node limits hold (the node is lost). */
static void test_vanish(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule sc;
    parse_ok("target=node:random; when=time:1; signal=VANISH; for=8", &s);
    assert_int_equal(s.signal, KVI_VANISH);
    build_ok(&s, 12, 1, &sc);
    assert_int_equal(sc.nevents, 5);   /* 4 ranks, no daemon in the table, the link */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(sc.events[i].signal, SIGSTOP);
        assert_int_equal(sc.events[i].role, KVI_ROLE_RANK);
        assert_int_equal(sc.events[i].end_signal, SIGKILL);
        assert_true(sc.events[i].resume_s == 8);
        assert_string_equal(sc.events[i].host, sc.events[4].host);
    }
    assert_int_equal(sc.events[3].rank, sc.events[3].by_rank);   /* the lowest rank last */
    assert_int_equal(sc.events[4].signal, KVI_LINK_DOWN);
    assert_int_equal(sc.events[4].role, KVI_ROLE_HOST);
    assert_int_equal(sc.events[4].end_signal, KVI_LINK_UP);
    assert_true(sc.events[4].resume_s == 8);
    assert_true(strcmp(sc.events[4].host, "node0") != 0);   /* not the launch node */
    kvi_schedule_free(&sc);
    bad_spec("target=node:random; when=time:1; signal=VANISH", "for");
    refused("target=node:random; when=time:1; signal=VANISH; for=8", 12, 0, "force=1");
    assert_string_equal(kvi_signal_name(KVI_VANISH), "VANISH");
    /* a straggler ends by CONT, a partition by LINKUP */
    parse_ok("target=ranks:1; when=time:1; signal=STOP; for=1", &s);
    build_ok(&s, 4, 1, &sc);
    assert_int_equal(sc.events[0].end_signal, SIGCONT);
    kvi_schedule_free(&sc);
    parse_ok("target=node:random; when=time:1; signal=LINK; for=1", &s);
    build_ok(&s, 12, 1, &sc);
    assert_int_equal(sc.events[0].end_signal, KVI_LINK_UP);
    kvi_schedule_free(&sc);
}

/* A slow link (signal=SLOW): one event per node, its host's link, with
 * the spec's rate and loss; ended by LINKUP after for=; the node limits
 * hold (heavy loss can make the runtime give the node up). */
static void test_slow(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule sc;
    parse_ok("target=node:random; when=time:1; signal=SLOW; rate=10mbit; loss=2.5%; for=3", &s);
    assert_int_equal(s.signal, KVI_LINK_SLOW);
    assert_true(s.rate_kbit == 10000 && s.loss_pct == 2.5);
    build_ok(&s, 12, 1, &sc);
    assert_int_equal(sc.nevents, 1);
    assert_int_equal(sc.events[0].role, KVI_ROLE_HOST);
    assert_int_equal(sc.events[0].pid, 0);
    assert_true(sc.events[0].rate_kbit == 10000 && sc.events[0].loss_pct == 2.5);
    assert_int_equal(sc.events[0].end_signal, KVI_LINK_UP);
    assert_true(sc.events[0].resume_s == 3);
    kvi_schedule_free(&sc);
    parse_ok("target=node:random; when=time:1; signal=SLOW; loss=1", &s);   /* for good */
    assert_true(s.rate_kbit == 0 && s.for_s == 0);
    parse_ok("target=node:random; when=time:1; signal=SLOW; rate=500kbit", &s);
    assert_true(s.rate_kbit == 500 && s.loss_pct == 0);
    refused("target=node:random; when=time:1; signal=SLOW; rate=1gbit", 12, 0, "force=1");
    assert_string_equal(kvi_signal_name(KVI_LINK_SLOW), "SLOW");
    static const char *bad[][2] = {
        {"signal=SLOW", "signal"},          /* neither rate nor loss */
        {"signal=SLOW; rate=10", "rate"},   {"signal=SLOW; rate=10mb", "rate"},
        {"signal=SLOW; rate=0mbit", "rate"}, {"signal=SLOW; rate=-1kbit", "rate"},
        {"signal=SLOW; rate=200gbit", "rate"},
        {"signal=SLOW; loss=100", "loss"},  {"signal=SLOW; loss=-1", "loss"},
        {"signal=SLOW; loss=1%%", "loss"},  {"signal=SLOW; loss=x", "loss"},
        {"signal=KILL; rate=1mbit", "rate"},
    };
    char text[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "target=node:random; when=time:1; %s", bad[i][0]);
        bad_spec(text, bad[i][1]);
    }
    bad_spec("target=daemon:random; when=time:1; signal=SLOW; loss=1", "signal");
}

/* A straggler (for=): every victim carries its stop's length, no
 * survivability limit applies (nothing is lost), and the CSV says it. */
static void test_straggler(void **st) {
    (void)st;
    kvi_spec s;
    kvi_schedule sc;
    parse_ok("target=ranks:0,1,2; when=time:0.25; signal=STOP; for=0.75", &s);
    assert_true(s.for_s == 0.75);
    build_ok(&s, 4, 1, &sc);   /* 3 at once with max_simultaneous 1: a straggler may */
    assert_int_equal(sc.nevents, 3);
    for (int i = 0; i < sc.nevents; i++) assert_true(sc.events[i].resume_s == 0.75);
    char *buf = csv_of(&sc);
    assert_non_null(strstr(buf, "0,1,1001,node0,STOP,time,,0.250000,rank,0.750000\n"));
    free(buf);
    kvi_schedule_free(&sc);
    refused("target=ranks:0,1,2; when=time:0.25; signal=STOP", 4, 1, "force=1");  /* for good */
    parse_ok("target=node:random; when=time:1; signal=STOP; for=2; count=3", &s);
    build_ok(&s, 16, 0, &sc);   /* every eligible node, with no loss allowed: still a straggler */
    for (int i = 0; i < sc.nevents; i++) assert_true(sc.events[i].resume_s == 2);
    kvi_schedule_free(&sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng_reference),  cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_same_seed),
        cmocka_unit_test(test_seeds_differ),   cmocka_unit_test(test_exp_mean),
        cmocka_unit_test(test_weibull),        cmocka_unit_test(test_random_targets),
        cmocka_unit_test(test_limits),         cmocka_unit_test(test_spread_and_ops),
        cmocka_unit_test(test_bad_items),      cmocka_unit_test(test_csv),
        cmocka_unit_test(test_straggler),      cmocka_unit_test(test_partition),
        cmocka_unit_test(test_vanish),         cmocka_unit_test(test_slow),
    };
    return cmocka_run_group_tests_name("inject_schedule", tests, NULL, NULL);
}
