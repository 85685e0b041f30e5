/*
 * killlog.c -- the kill log, and the small helpers every part shares
 * (clock, host names, signal and role names).
 *
 * Every kill is appended to a CSV log with a CLOCK_REALTIME timestamp in
 * integer nanoseconds.  An injector outside its victims (kv_inject, or a
 * rank killing others) reads each timestamp right before that victim's
 * signal and writes and fsyncs the event's lines after the last signal
 * (kill.c): a write, an fsync and a lock on a shared file system (Lustre,
 * GPFS: milliseconds) never sit between a timestamp and its signal.  The
 * log is opened before the signals, so one that cannot be written stops
 * them.  A process that is itself among the victims (the in-process form:
 * a rank killing its own node, itself last) cannot write afterwards: its
 * lines are written and fsync'ed first, each timestamp read as the last
 * step before its line is formatted, and the gap to the signal is then one
 * write and one fsync.  The kills of one event (a node loss: its daemon and
 * its ranks) are logged together, in one write and one fsync.  A victim on
 * another host is reached through the command template in
 * KV_INJECT_REMOTE (kill.c); its timestamp precedes the signal by the
 * hook's own latency.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inject_int.h"

#define LOG_HEADER "kill,target_rank,pid,host,signal,role,time_ns\n"
#define LINE_CAP 256   /* one log line: numbers, a host name (< 64), names */

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
    case SIGCONT: return "CONT";
    case KVI_LINK_DOWN: return "LINKDOWN";
    case KVI_LINK_UP: return "LINKUP";
    case KVI_LINK_SLOW: return "SLOW";
    case KVI_VANISH: return "VANISH";
    default: return "?";
    }
}

const char *kvi_role_name(int role) {
    switch (role) {
    case KVI_ROLE_RANK: return "rank";
    case KVI_ROLE_DAEMON: return "daemon";
    case KVI_ROLE_DAEMON_PARENT: return "daemon-parent";
    case KVI_ROLE_HOST: return "host";
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

/* One victim's line; the timestamp is *t when given (> 0), else read here,
 * as the last step. */
static size_t format_line(char *line, const kvi_event *ev, long long *t) {
    char me[KVI_HOST_MAX] = "";
    const char *host = ev->host;
    if (!*host && kvi_hostname(me, sizeof me) == 0) host = me;
    if (*t <= 0) *t = kvi_wall_ns();
    int n = snprintf(line, LINE_CAP, "%d,%d,%d,%s,%s,%s,%lld\n", ev->index, ev->rank, ev->pid,
                     host, kvi_signal_name(ev->signal), kvi_role_name(ev->role), *t);
    return n < 0 ? 0 : n >= LINE_CAP ? LINE_CAP - 1 : (size_t)n;
}

/* Header if the file is empty, then the lines of the events i with
 * pick[i] (all when pick is NULL) in one write, then fsync; times[i] (NULL:
 * read as each line is formatted) their timestamps. */
static int append_lines(int fd, const kvi_event *evs, int n, const int *pick,
                        const long long *times, long long *when_ns) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    char *buf = malloc((size_t)n * LINE_CAP + sizeof LOG_HEADER);
    if (!buf) return -1;
    size_t used = st.st_size == 0 ? (size_t)snprintf(buf, sizeof LOG_HEADER, "%s", LOG_HEADER) : 0;
    long long t = 0;
    for (int i = 0; i < n; i++) {
        if (pick && !pick[i]) continue;
        t = times ? times[i] : 0;
        used += format_line(buf + used, &evs[i], &t);
    }
    int rc = write_all(fd, buf, used);
    free(buf);
    if (rc) return -1;
    /* A log on a pipe or a terminal cannot be synced: that is not an error. */
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) return -1;
    if (when_ns) *when_ns = t;
    return 0;
}

int kvi__log_open(const char *path) { return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644); }

int kvi__log_write(int fd, const kvi_event *evs, int n, const int *pick, const long long *times,
                   long long *when_ns) {
    /* Ranks may share one log: the lock keeps header and lines whole. */
    (void)flock(fd, LOCK_EX);
    int rc = append_lines(fd, evs, n, pick, times, when_ns);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int kvi__log_lines(const char *path, const kvi_event *evs, int n, const int *pick,
                   long long *when_ns) {
    int fd = kvi__log_open(path);
    return fd < 0 ? -1 : kvi__log_write(fd, evs, n, pick, NULL, when_ns);
}

int kvi_log_kill(const char *path, const kvi_event *ev, int pid, const char *host,
                 long long *when_ns) {
    if (!path || !ev) {
        errno = EINVAL;
        return -1;
    }
    kvi_event one = *ev;
    one.pid = pid;
    if (host && *host) snprintf(one.host, sizeof one.host, "%s", host);
    return kvi__log_lines(path, &one, 1, NULL, when_ns);
}
