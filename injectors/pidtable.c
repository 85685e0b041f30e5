/*
 * pidtable.c -- the pid table through which ranks meet the external injector.
 *
 * Each rank writes one file, DIR/rank.N, holding the line "N PID HOST\n".
 * It is written to a temporary name and renamed into place, so a reader
 * sees either no file or a whole line.  The reader polls until every rank's
 * file is there; a file without a complete, well-formed line counts as not
 * there yet (a shell writer is not atomic), and is reported as malformed
 * only if it is still bad at the deadline.  Use a fresh DIR for every run:
 * stale files from an earlier run name processes that are gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inject_int.h"

#define POLL_NS 20000000L   /* 20 ms between looks at the directory */

int kvi_publish_pid(const char *dir, int rank) { return kvi_publish_pid_of(dir, rank, (int)getpid()); }

int kvi_publish_pid_of(const char *dir, int rank, int pid) {
    char path[4096], tmp[4096], line[160], host[KVI_HOST_MAX];
    if (!dir || rank < 0 || pid <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return -1;
    if (kvi_hostname(host, sizeof host) != 0) return -1;
    int n = snprintf(line, sizeof line, "%d %d %s\n", rank, pid, host);
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
    int r, pid, used = 0;
    snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    if (!got || !strchr(line, '\n')) return 0;
    if (sscanf(line, "%d %d %63s %n", &r, &pid, host, &used) != 3 || line[used] != '\0' ||
        r != rank || pid <= 0 || !kvi__valid_host(host))
        return -1;
    out->rank = rank;
    out->pid = pid;
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
