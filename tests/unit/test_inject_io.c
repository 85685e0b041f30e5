/*
 * test_inject_io.c -- the injector's pid table, kill log and both kill paths.
 *
 * Pass rules: a published pid table reads back (rank, pid, host) and an
 * incomplete one times out with ETIMEDOUT after the timeout, naming the
 * missing rank by pid 0; the kill log gets its header once and one line
 * per kill with a timestamp within 1 s of now; kvi_kill kills a forked child
 * with SIGKILL and logs it, refuses a pid that does not exist (no log line),
 * runs the KV_INJECT_REMOTE template for another host and refuses without
 * it; a group of kills logs the live victims in one go, kills them, reports
 * a gone one (ESRCH, not logged), and sends a run of victims of one remote
 * host as one {pids} command (one per victim without {pids}); in-process, a child ticking its operation count dies by SIGKILL at
 * exactly the scheduled count, another child dies by its time event within
 * 0.1 s of the scheduled moment (within 50 ms when each operation takes
 * 5 ms), and a rank with no event never dies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inject.h"

static char dir[64];

static int setup(void **st) {
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/kvi_test.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st) {
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t len, const char *name) {
    snprintf(buf, len, "%s/%s", dir, name);
}

static int count_lines(const char *path, char *last, size_t len) {
    FILE *f = fopen(path, "r");
    char line[512];
    int n = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        n++;
        if (last) snprintf(last, len, "%s", line);
    }
    fclose(f);
    return n;
}

static kvi_event event_for(int rank, int sig) {
    kvi_event e;
    memset(&e, 0, sizeof e);
    e.index = 3;
    e.rank = rank;
    e.signal = sig;
    e.kind = KVI_AT_TIME;
    return e;
}

static void test_pid_table(void **st) {
    (void)st;
    char pids[128], me[KVI_HOST_MAX];
    kvi_rank_info r[3];
    path_of(pids, sizeof pids, "pids");
    assert_int_equal(kvi_publish_pid(pids, 0), 0);
    assert_int_equal(kvi_publish_pid(pids, 1), 0);
    assert_int_equal(kvi_hostname(me, sizeof me), 0);
    assert_int_equal(kvi_read_pids(pids, 2, 1.0, r), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r[i].rank, i);
        assert_int_equal(r[i].pid, getpid());
        assert_string_equal(r[i].host, me);
    }
    double t0 = kvi_now();
    assert_int_equal(kvi_read_pids(pids, 3, 0.2, r), -1);
    assert_int_equal(errno, ETIMEDOUT);
    assert_true(kvi_now() - t0 >= 0.2);
    assert_int_equal(r[2].pid, 0);
    assert_int_equal(r[1].pid, getpid());
}

static void test_log(void **st) {
    (void)st;
    char log[128], last[512], want[256];
    long long when = 0;
    kvi_event e = event_for(5, SIGTERM);
    path_of(log, sizeof log, "log1.csv");
    assert_int_equal(kvi_log_kill(log, &e, 4242, "nodeA", &when), 0);
    assert_int_equal(kvi_log_kill(log, &e, 4243, NULL, NULL), 0);
    assert_int_equal(count_lines(log, NULL, 0), 3);
    FILE *f = fopen(log, "r");
    assert_non_null(fgets(last, sizeof last, f));
    fclose(f);
    assert_string_equal(last, "kill,target_rank,pid,host,signal,role,time_ns\n");
    assert_true(when > 0 && kvi_wall_ns() - when < 1000000000LL);
    count_lines(log, last, sizeof last);
    char me[KVI_HOST_MAX];
    kvi_hostname(me, sizeof me);
    snprintf(want, sizeof want, "3,5,4243,%s,TERM,rank,", me);
    assert_true(strncmp(last, want, strlen(want)) == 0);
}

static pid_t child_pause(void) {
    pid_t p = fork();
    if (p == 0) {
        for (;;) pause();
    }
    return p;
}

static void test_kill_local(void **st) {
    (void)st;
    char log[128], last[512], want[128];
    int status;
    kvi_event e = event_for(2, SIGKILL);
    path_of(log, sizeof log, "log2.csv");
    pid_t c = child_pause();
    assert_true(c > 0);
    assert_int_equal(kvi_kill(&e, c, "localhost", log), 0);
    assert_int_equal(waitpid(c, &status, 0), c);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    count_lines(log, last, sizeof last);
    snprintf(want, sizeof want, "3,2,%d,localhost,KILL,rank,", (int)c);
    assert_true(strncmp(last, want, strlen(want)) == 0);
    /* The child is gone now: refused, and nothing logged. */
    assert_int_equal(kvi_kill(&e, c, NULL, log), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(count_lines(log, NULL, 0), 2);
}

static void test_kill_remote(void **st) {
    (void)st;
    char log[128], out[128], tmpl[256], line[256] = "";
    kvi_event e = event_for(7, SIGSTOP);
    path_of(log, sizeof log, "log3.csv");
    path_of(out, sizeof out, "remote.out");
    unsetenv("KV_INJECT_REMOTE");
    assert_int_equal(kvi_kill(&e, 99999, "far-away-host", log), -1);
    assert_int_equal(errno, ENOTSUP);
    assert_int_equal(count_lines(log, NULL, 0), -1);   /* no log file at all */
    snprintf(tmpl, sizeof tmpl, "echo {host} -{signal} {signum} {pid} {rank} {x} > %s", out);
    setenv("KV_INJECT_REMOTE", tmpl, 1);
    assert_int_equal(kvi_kill(&e, 99999, "far-away-host", log), 0);
    unsetenv("KV_INJECT_REMOTE");
    count_lines(out, line, sizeof line);
    snprintf(tmpl, sizeof tmpl, "far-away-host -STOP %d 99999 7 {x}\n", SIGSTOP);
    assert_string_equal(line, tmpl);
    assert_int_equal(count_lines(log, NULL, 0), 2);
}

static void test_kill_group(void **st) {
    (void)st;
    char log[128], out[128], tmpl[256], line[256] = "";
    int err[4], status;
    double spread = -1;
    path_of(log, sizeof log, "log6.csv");
    pid_t a = child_pause(), b = child_pause(), gone = child_pause();
    kill(gone, SIGKILL);
    waitpid(gone, &status, 0);
    kvi_event g[3] = {event_for(1, SIGKILL), event_for(2, SIGKILL), event_for(-1, SIGKILL)};
    g[0].pid = a;
    g[1].pid = gone;
    g[2].pid = b;
    g[2].role = KVI_ROLE_DAEMON;
    assert_int_equal(kvi_kill_group(g, 3, log, err, &spread), 1);
    assert_true(err[0] == 0 && err[1] == ESRCH && err[2] == 0);
    assert_true(spread >= 0 && spread < 1);
    assert_int_equal(waitpid(a, &status, 0), a);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(waitpid(b, &status, 0), b);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(count_lines(log, line, sizeof line), 3);   /* header, a, b */
    char want[64];
    snprintf(want, sizeof want, "3,-1,%d,", (int)b);
    assert_true(strncmp(line, want, strlen(want)) == 0 && strstr(line, ",KILL,daemon,"));
    /* Remote: one command for the run of one host, one per victim without {pids}. */
    path_of(out, sizeof out, "group.out");
    for (int i = 0; i < 3; i++) {
        g[i].pid = 101 + i;
        snprintf(g[i].host, sizeof g[i].host, i < 2 ? "far-a" : "far-b");
    }
    snprintf(tmpl, sizeof tmpl, "echo {host} -{signal} {pids} >> %s", out);
    setenv("KV_INJECT_REMOTE", tmpl, 1);
    assert_int_equal(kvi_kill_group(g, 3, NULL, err, NULL), 0);
    /* The ranks are stopped before the first SIGKILL; the daemon is not. */
    assert_int_equal(count_lines(out, line, sizeof line), 3);
    assert_string_equal(line, "far-b -KILL 103\n");
    FILE *f = fopen(out, "r");
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "far-a -STOP 101 102\n");
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "far-a -KILL 101 102\n");
    fclose(f);
    /* A template that cannot say STOP stops nothing. */
    snprintf(tmpl, sizeof tmpl, "echo {pid} >> %s", out);
    setenv("KV_INJECT_REMOTE", tmpl, 1);
    assert_int_equal(kvi_kill_group(g, 3, NULL, err, NULL), 0);
    unsetenv("KV_INJECT_REMOTE");
    assert_int_equal(count_lines(out, line, sizeof line), 6);
    assert_string_equal(line, "103\n");
}

/* Fork a rank that ticks `ops` operations (sleeping us_per_op each) with
 * the schedule of `spec`; returns its wait status; *last_ops = its count. */
static int run_rank(const char *spec, int rank, int ops, int us_per_op, double *start,
                    long long *last_ops, const char *log) {
    kvi_spec s;
    kvi_schedule sc;
    kvi_rank_info r[4] = {{.rank = 0, .host = "h"}, {.rank = 1, .host = "h"},
                          {.rank = 2, .host = "h"}, {.rank = 3, .host = "h"}};
    char err[256];
    int status;
    assert_int_equal(kvi_spec_parse(spec, &s, err, sizeof err), 0);
    assert_int_equal(kvi_schedule_build(&s, r, 4, 1, &sc, err, sizeof err), 0);
    long long *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(shared != MAP_FAILED);
    *start = kvi_now();
    pid_t c = fork();
    if (c == 0) {
        kvi_inproc *p = kvi_inproc_start(&sc, rank, *start, log);
        for (long long i = 1; i <= ops; i++) {
            *shared = i;
            kvi_inproc_tick(p, i);
            if (us_per_op) usleep((useconds_t)us_per_op);
        }
        _exit(kvi_inproc_pending(p) == 0 ? 0 : 3);
    }
    assert_int_equal(waitpid(c, &status, 0), c);
    *last_ops = *shared;
    munmap(shared, sizeof *shared);
    kvi_schedule_free(&sc);
    return status;
}

static void test_inproc_ops(void **st) {
    (void)st;
    char log[128], last[512];
    double start;
    long long last_ops;
    path_of(log, sizeof log, "log4.csv");
    int status = run_rank("target=ranks:1; when=ops:100", 1, 1000, 0, &start, &last_ops, log);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(last_ops, 100);
    count_lines(log, last, sizeof last);
    assert_true(strncmp(last, "0,1,", 4) == 0 && strstr(last, ",KILL,"));
    /* Rank 2 has no event: it runs to the end, never killed. */
    status = run_rank("target=ranks:1; when=ops:100", 2, 1000, 0, &start, &last_ops, log);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(last_ops, 1000);
}

static void test_inproc_time(void **st) {
    (void)st;
    char log[128], last[512];
    double start, t;
    long long last_ops;
    path_of(log, sizeof log, "log5.csv");
    /* 100 us per op: 64 ops between clock reads is ~6.4 ms. */
    int status = run_rank("target=ranks:3; when=time:0.3", 3, 20000, 100, &start, &last_ops, log);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    count_lines(log, last, sizeof last);
    char *comma = strrchr(last, ',');
    assert_non_null(comma);
    t = (double)atoll(comma + 1) * 1e-9 - start;  /* time_ns */
    if (t < 0.3 || t > 0.4) fail_msg("time event fired at +%.4f s, scheduled +0.3 s", t);
    /* Slow operations (5 ms each, as across hosts): not 64 of them late. */
    status = run_rank("target=ranks:3; when=time:0.1", 3, 200, 5000, &start, &last_ops, log);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    count_lines(log, last, sizeof last);
    t = (double)atoll(strrchr(last, ',') + 1) * 1e-9 - start;  /* time_ns */
    if (t < 0.1 || t > 0.15) fail_msg("slow ops: time event fired at +%.4f s, scheduled +0.1 s", t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pid_table),   cmocka_unit_test(test_log),
        cmocka_unit_test(test_kill_local),  cmocka_unit_test(test_kill_remote),
        cmocka_unit_test(test_kill_group),
        cmocka_unit_test(test_inproc_ops),  cmocka_unit_test(test_inproc_time),
    };
    return cmocka_run_group_tests_name("inject_io", tests, setup, teardown);
}
