/*
 * ackfile.h -- counting acknowledged writes so that a SIGKILL cannot lose
 * the count (header-only; the driver's checkpoint-restart support and
 * bench_checkpoint share it).
 *
 * A rank maps DIR/acks-RANK with MAP_SHARED: the counter lives in the page
 * cache, so it outlives the process, and the restarted job reads what the
 * killed one acknowledged.  At each checkpoint's cut the count is noted
 * under the checkpoint's number; the writes lost by a restart from
 * checkpoint n are those acknowledged after cut n.
 */
#ifndef KV_ACKFILE_H
#define KV_ACKFILE_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { ACKS_MAX_CKPT = 4096 };

typedef struct kv_acks {
    long long acked;                  /* writes acknowledged so far */
    long long at_cut[ACKS_MAX_CKPT];  /* acked at the cut of checkpoint n (n < ACKS_MAX_CKPT) */
} kv_acks;

/* Map dir/acks-RANK (create: a new, zeroed file; dir is made if missing).
 * NULL when it cannot be opened or mapped. */
static inline kv_acks *acks_map(const char *dir, int rank, int create) {
    char p[600];
    mkdir(dir, 0755);
    snprintf(p, sizeof p, "%s/acks-%d", dir, rank);
    int fd = open(p, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0644);
    if (fd < 0) return NULL;
    if (create && ftruncate(fd, sizeof(kv_acks)) != 0) { close(fd); return NULL; }
    kv_acks *a = mmap(NULL, sizeof(kv_acks), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return a == MAP_FAILED ? NULL : a;
}

/* Note `at` (the count taken at the cut) under checkpoint `number`. */
static inline void acks_cut(kv_acks *a, long long number, long long at) {
    if (a && number > 0 && number < ACKS_MAX_CKPT) a->at_cut[number] = at;
}

/* Writes acknowledged after the cut of checkpoint `number`; -1 unknown. */
static inline long long acks_lost(const kv_acks *a, long long number) {
    return a && number > 0 && number < ACKS_MAX_CKPT ? a->acked - a->at_cut[number] : -1;
}

#endif
