/*
 * pidtable.c -- the pid table through which ranks meet the external injector.
 *
 * Each rank writes one file, DIR/rank.N, holding the line
 * "N PID HOST DAEMON DAEMON_PARENT\n": the rank, its pid, its host, and
 * the pids of its Open MPI daemon (its parent: prted, or prterun on the
 * launch node) and of the daemon's parent when that is a prted too (PRRTE
 * starts a remote daemon as a prted that forks the real one and waits for
 * it, through ssh and through srun alike); 0 for none.  Both are read from
 * /proc by the rank itself, on its own node.  A line of the first three
 * fields only (the format before daemons were recorded) reads as "no
 * daemon known".  It is written to a temporary name and renamed into
 * place, so a reader sees either no file or a whole line.  The reader polls until every rank's
 * file is there; a file without a complete, well-formed line counts as not
 * there yet (a shell writer is not atomic), and is reported as malformed
 * only if it is still bad at the deadline.  Use a fresh DIR for every run:
 * stale files from an earlier run name processes that are gone.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inject_int.h"

#define POLL_NS 20000000L   /* 20 ms between looks at the directory */

int kvi_parent_of(int pid, char *comm, size_t len) {
    char path[64], line[256];
    int ppid = 0;
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "PPid: %d", &ppid) == 1) break;
    if (f) fclose(f);
    comm[0] = '\0';
    snprintf(path, sizeof path, "/proc/%d/comm", ppid);
    f = ppid > 0 ? fopen(path, "r") : NULL;
    if (f && fgets(comm, (int)len, f)) comm[strcspn(comm, "\n")] = '\0';
    if (f) fclose(f);
    return ppid;
}

/* Open MPI's runtime processes: 5.x (PRRTE) and older (ORTE). */
static int is_daemon(const char *comm) {
    static const char *const names[] = {"prted", "prterun", "mpirun", "mpiexec", "orted"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(comm, names[i]) == 0) return 1;
    return 0;
}

int kvi_self_info(int rank, kvi_rank_info *out) {
    char comm[64];
    memset(out, 0, sizeof *out);
    out->rank = rank;
    out->pid = (int)getpid();
    if (kvi_hostname(out->host, sizeof out->host) != 0) return -1;
    int d = kvi_parent_of(out->pid, comm, sizeof comm);
    if (d <= 1 || !is_daemon(comm)) return 0;   /* not started by Open MPI */
    out->daemon = d;
    int dp = kvi_parent_of(d, comm, sizeof comm);
    if (dp > 1 && strcmp(comm, "prted") == 0) out->daemon_parent = dp;
    return 0;
}

static int write_entry(const char *dir, const kvi_rank_info *me);

int kvi_publish_pid(const char *dir, int rank) {
    kvi_rank_info me;
    if (!dir || rank < 0) {
        errno = EINVAL;
        return -1;
    }
    return kvi_self_info(rank, &me) ? -1 : write_entry(dir, &me);
}

int kvi_publish_pid_of(const char *dir, int rank, int pid) {
    kvi_rank_info other = {.rank = rank, .pid = pid};
    if (!dir || rank < 0 || pid <= 0) {
        errno = EINVAL;
        return -1;
    }
    return kvi_hostname(other.host, sizeof other.host) ? -1 : write_entry(dir, &other);
}

static int write_entry(const char *dir, const kvi_rank_info *me) {
    char path[4096], tmp[4096], line[200];
    int rank = me->rank, pid = me->pid;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return -1;
    int n = snprintf(line, sizeof line, "%d %d %s %d %d\n", rank, pid, me->host, me->daemon,
                     me->daemon_parent);
    if (snprintf(path, sizeof path, "%s/rank.%d", dir, rank) >= (int)sizeof path ||
        snprintf(tmp, sizeof tmp, "%s/.rank.%d.tmp.%d", dir, rank, pid) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    int ok = write(fd, line, (size_t)n) == n;
    ok = (close(fd) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        errno = ok ? saved : EIO;
        return -1;
    }
    return 0;
}

/* 1: read; 0: absent or incomplete; -1: complete line but malformed. */
static int read_one(const char *dir, int rank, kvi_rank_info *out) {
    char path[4096], line[256], host[KVI_HOST_MAX];
    int r, pid, d = 0, dp = 0, hend = 0, used = 0;
    snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    if (!got || !strchr(line, '\n')) return 0;
    /* hend: the end of the host; a longer name than fits is malformed, not cut. */
    if (sscanf(line, "%d %d %63s%n %n", &r, &pid, host, &hend, &used) != 3 ||
        !isspace((unsigned char)line[hend]) || r != rank || pid <= 0 || !kvi__valid_host(host))
        return -1;
    if (line[used] != '\0') {   /* the daemon's fields */
        int more = 0;
        if (sscanf(line + used, "%d %d %n", &d, &dp, &more) != 2 || line[used + more] != '\0' ||
            d < 0 || dp < 0)
            return -1;
    }
    out->rank = rank;
    out->pid = pid;
    out->daemon = d;
    out->daemon_parent = dp;
    snprintf(out->host, sizeof out->host, "%s", host);
    return 1;
}

/* One pass over the missing ranks; returns how many are still missing. */
static int read_pass(const char *dir, int nranks, kvi_rank_info *out, int *bad) {
    int missing = 0;
    *bad = 0;
    for (int r = 0; r < nranks; r++) {
        if (out[r].pid > 0) continue;
        int st = read_one(dir, r, &out[r]);
        missing += st != 1;
        *bad += st < 0;
    }
    return missing;
}

int kvi_read_pids(const char *dir, int nranks, double timeout_s, kvi_rank_info *out) {
    if (!dir || nranks < 1 || !out) {
        errno = EINVAL;
        return -1;
    }
    for (int r = 0; r < nranks; r++) {
        memset(&out[r], 0, sizeof out[r]);
        out[r].rank = r;
    }
    double deadline = kvi_now() + (timeout_s > 0 ? timeout_s : 0);
    int bad;
    while (read_pass(dir, nranks, out, &bad) > 0) {
        if (kvi_now() >= deadline) {
            errno = bad ? EBADMSG : ETIMEDOUT;
            return -1;
        }
        struct timespec ts = {0, POLL_NS};
        nanosleep(&ts, NULL);
    }
    return 0;
}
