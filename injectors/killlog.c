/*
 * killlog.c -- the kill log, and sending the signal (locally or by a hook).
 *
 * Every kill is first appended to a CSV log, with a CLOCK_REALTIME
 * timestamp in integer nanoseconds taken as the last step before the line is written, flushed and
 * fsync'ed (the line must survive the victim, and the node if it is the
 * victim's own node); only then is the signal sent.  The gap between the
 * timestamp and the signal is one write and one fsync: microseconds on a
 * page cache or tmpfs, up to a few ms on a disk with write barriers.  A
 * victim on another host is reached through the command template in
 * KV_INJECT_REMOTE (see injectors/README.md); its timestamp then precedes
 * the signal by the hook's own latency (an ssh login: tens of ms or more).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject_int.h"

#define LOG_HEADER "kill,target_rank,pid,host,signal,time_ns\n"
#define CMD_MAX 2048

long long kvi_wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double kvi_now(void) { return (double)kvi_wall_ns() * 1e-9; }

int kvi_hostname(char *buf, size_t len) {
    if (!buf || len < 2) {
        errno = EINVAL;
        return -1;
    }
    if (gethostname(buf, len - 1) != 0) return -1;
    buf[len - 1] = '\0';
    return 0;
}

const char *kvi_signal_name(int sig) {
    switch (sig) {
    case SIGKILL: return "KILL";
    case SIGTERM: return "TERM";
    case SIGSEGV: return "SEGV";
    case SIGSTOP: return "STOP";
    default: return "?";
    }
}

int kvi__valid_host(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n >= KVI_HOST_MAX) return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* "node1" and "node1.cluster.org" name the same host. */
static int same_host(const char *a, const char *b) {
    if (strcmp(a, b) == 0) return 1;
    if (strchr(a, '.') && strchr(b, '.')) return 0;
    const char *s = strchr(a, '.') ? b : a, *l = strchr(a, '.') ? a : b;
    size_t n = strlen(s);
    return strncmp(s, l, n) == 0 && l[n] == '.';
}

int kvi_host_is_local(const char *host) {
    char me[KVI_HOST_MAX];
    if (!host || !*host || strcmp(host, "localhost") == 0) return 1;
    return kvi_hostname(me, sizeof me) == 0 && same_host(host, me);
}

static int write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Header if the file is empty, then the timestamped line, then fsync. */
static int append_line(int fd, const kvi_event *ev, int pid, const char *host, long long *when_ns) {
    struct stat st;
    char line[256];
    if (fstat(fd, &st) != 0) return -1;
    if (st.st_size == 0 && write_all(fd, LOG_HEADER, strlen(LOG_HEADER))) return -1;
    long long t = kvi_wall_ns();
    int n = snprintf(line, sizeof line, "%d,%d,%d,%s,%s,%lld\n", ev->index, ev->rank, pid,
                     host, kvi_signal_name(ev->signal), t);
    if (write_all(fd, line, (size_t)n)) return -1;
    /* A log on a pipe or a terminal cannot be synced: that is not an error. */
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) return -1;
    if (when_ns) *when_ns = t;
    return 0;
}

int kvi_log_kill(const char *path, const kvi_event *ev, int pid, const char *host,
                 long long *when_ns) {
    char me[KVI_HOST_MAX] = "";
    if (!path || !ev) {
        errno = EINVAL;
        return -1;
    }
    if (!host || !*host) host = ev->host;
    if (!*host && kvi_hostname(me, sizeof me) == 0) host = me;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    /* Ranks may share one log: the lock keeps header and lines whole. */
    (void)flock(fd, LOCK_EX);
    int rc = append_line(fd, ev, pid, host, when_ns);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/* Append src to out[*n..], bounded by CMD_MAX. */
static int put(char *out, size_t *n, const char *src) {
    size_t l = strlen(src);
    if (*n + l >= CMD_MAX) return -1;
    memcpy(out + *n, src, l + 1);
    *n += l;
    return 0;
}

/* Fill the KV_INJECT_REMOTE template; unknown {words} stay as they are. */
static int expand(const char *tmpl, const kvi_event *ev, int pid, const char *host, char *out) {
    char num[3][24];
    const char *keys[] = {"{host}", "{pid}", "{rank}", "{signal}", "{signum}"};
    snprintf(num[0], sizeof num[0], "%d", pid);
    snprintf(num[1], sizeof num[1], "%d", ev->rank);
    snprintf(num[2], sizeof num[2], "%d", ev->signal);
    const char *vals[] = {host, num[0], num[1], kvi_signal_name(ev->signal), num[2]};
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = tmpl; *p;) {
        size_t k = 0;
        while (k < 5 && strncmp(p, keys[k], strlen(keys[k]))) k++;
        char one[2] = {*p, '\0'};
        if (put(out, &n, k < 5 ? vals[k] : one)) return -1;
        p += k < 5 ? strlen(keys[k]) : 1;
    }
    return 0;
}

static int kill_remote(const kvi_event *ev, int pid, const char *host, const char *log_path) {
    const char *tmpl = getenv("KV_INJECT_REMOTE");
    char cmd[CMD_MAX];
    if (!tmpl || !*tmpl) {
        errno = ENOTSUP;
        return -1;
    }
    if (!kvi__valid_host(host) || expand(tmpl, ev, pid, host, cmd)) {
        errno = EINVAL;
        return -1;
    }
    if (log_path && kvi_log_kill(log_path, ev, pid, host, NULL)) return -1;
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        errno = EIO;
        return -1;
    }
    return 0;
}

static int kill_local(const kvi_event *ev, int pid, const char *host, const char *log_path) {
    if (kill(pid, 0) != 0) return -1;   /* gone (ESRCH) or not ours (EPERM): no log line */
    if (log_path && kvi_log_kill(log_path, ev, pid, host, NULL)) return -1;
    return kill(pid, ev->signal);
}

int kvi_kill(const kvi_event *ev, int pid, const char *host, const char *log_path) {
    if (!ev) {
        errno = EINVAL;
        return -1;
    }
    if (pid <= 0) pid = ev->pid;
    if (!host || !*host) host = ev->host;
    if (pid <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (kvi_host_is_local(host)) return kill_local(ev, pid, host, log_path);
    return kill_remote(ev, pid, host, log_path);
}
