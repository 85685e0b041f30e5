/*
 * clocks.c -- the hosts of a run and the offsets between their wall clocks.
 *
 * Times of two hosts are compared where a kill's timestamp (taken on the
 * victim's host) meets the moment a survivor noticed it (detection time),
 * and where kills are placed on the timeline (rank 0's clock).  Each
 * host's offset from the reference host (world rank 0's) is measured by
 * a ping-pong: the root sends, the host's first rank answers with its
 * kv_wall_ns(), and of DRV_CLOCK_ROUNDS round trips the shortest gives
 * offset = answer - (send + receive) / 2, with half that round trip as the
 * uncertainty (the answer was read somewhere inside it).  It runs at the
 * start on every rank and again at the end on the survivors (whose root
 * may be on another host if rank 0 died: its own start offset converts).
 * Ranks of one host share its clock, and the reference host is 0 exactly.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"

enum { DRV_CLOCK_ROUNDS = 20 };

void drv_hosts_init(drv_clocks *c) {
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char me[DRV_HOST_LEN] = {0}, *all = calloc((size_t)size, DRV_HOST_LEN);
    gethostname(me, sizeof me - 1);
    MPI_Allgather(me, DRV_HOST_LEN, MPI_CHAR, all, DRV_HOST_LEN, MPI_CHAR, MPI_COMM_WORLD);
    memset(c, 0, sizeof *c);
    for (int r = 0; all && r < size; r++) {
        int h = drv_host_index(c, all + (size_t)r * DRV_HOST_LEN);
        if (h < 0 && c->nhosts < DRV_MAX_HOSTS) {
            h = c->nhosts++;
            memcpy(c->h[h].name, all + (size_t)r * DRV_HOST_LEN, DRV_HOST_LEN);
        }
        if (h >= 0) c->h[h].ranks++;
        if (r == rank) c->mine = h;
    }
    free(all);
}

void drv_hosts_share(MPI_Comm comm, drv_clocks *c) {
    MPI_Bcast(c, (int)sizeof *c, MPI_BYTE, 0, comm);
    char me[DRV_HOST_LEN] = {0};
    gethostname(me, sizeof me - 1);
    c->mine = drv_host_index(c, me);
}

int drv_host_index(const drv_clocks *c, const char *name) {
    for (int i = 0; i < c->nhosts; i++)
        if (strcmp(c->h[i].name, name) == 0) return i;
    return -1;
}

/* At the root: the offset of the rank `peer`'s clock from its own. */
static void ping(MPI_Comm comm, int peer, int64_t *off, int64_t *unc) {
    int64_t best = INT64_MAX;
    for (int i = 0; i < DRV_CLOCK_ROUNDS; i++) {
        int64_t t0 = kv_wall_ns(), remote;
        MPI_Send(&t0, 1, MPI_INT64_T, peer, 0, comm);
        MPI_Recv(&remote, 1, MPI_INT64_T, peer, 0, comm, MPI_STATUS_IGNORE);
        int64_t t1 = kv_wall_ns();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *off = remote - t0 - (t1 - t0) / 2;
            *unc = (best + 1) / 2;
        }
    }
}

static void pong(MPI_Comm comm) {
    for (int i = 0; i < DRV_CLOCK_ROUNDS; i++) {
        int64_t t;
        MPI_Recv(&t, 1, MPI_INT64_T, 0, 0, comm, MPI_STATUS_IGNORE);
        t = kv_wall_ns();
        MPI_Send(&t, 1, MPI_INT64_T, 0, 0, comm);
    }
}

void drv_clocks_measure(MPI_Comm comm, drv_clocks *c, int when) {
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    if (c->nhosts < 2) {
        if (c->nhosts == 1) c->h[0].have[when] = 1;  /* one clock: nothing to measure */
        return;
    }
    MPI_Comm d;
    MPI_Comm_dup(comm, &d);  /* a tag space of its own */
    /* Each host's first rank in comm (-1: none left), as every rank sees it. */
    int *first = malloc(sizeof(int) * (size_t)c->nhosts), *hosts = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&c->mine, 1, MPI_INT, hosts, 1, MPI_INT, d);
    for (int h = 0; h < c->nhosts; h++) first[h] = -1;
    for (int r = size - 1; r >= 0; r--)
        if (hosts[r] >= 0) first[hosts[r]] = r;
    int root_host = hosts[0];
    int64_t off[DRV_MAX_HOSTS] = {0}, unc[DRV_MAX_HOSTS] = {0};
    for (int h = 0; h < c->nhosts; h++) {
        if (h == root_host || first[h] < 0) continue;
        if (me == 0) ping(d, first[h], &off[h], &unc[h]);
        else if (me == first[h]) pong(d);
    }
    if (me == 0) {
        /* The root's host against the reference host (host 0), from the
         * start (the same host then: 0). */
        int64_t base = when == 0 ? 0 : c->h[root_host].off[0], ubase = when == 0 ? 0 : c->h[root_host].unc[0];
        for (int h = 0; h < c->nhosts; h++) {
            if (first[h] < 0) continue;
            c->h[h].off[when] = (h == root_host ? 0 : off[h]) + base;
            c->h[h].unc[when] = (h == root_host ? 0 : unc[h]) + ubase;
            c->h[h].have[when] = 1;
        }
    }
    /* Every rank keeps the start's table: the end's root may be another. */
    if (when == 0) MPI_Bcast(c->h, (int)sizeof c->h, MPI_BYTE, 0, d);
    free(first);
    free(hosts);
    MPI_Comm_free(&d);
}

int64_t drv_on_reference(const drv_clocks *c, int h, int64_t wall_ns) {
    int64_t off, unc;
    drv_clock_offset(c, h, &off, &unc);
    return wall_ns - off;
}

void drv_clock_offset(const drv_clocks *c, int h, int64_t *off, int64_t *unc) {
    *off = *unc = 0;
    if (h < 0 || h >= c->nhosts) return;
    const drv_clock_host *x = &c->h[h];
    if (x->have[0] && x->have[1]) {
        int64_t d = x->off[1] - x->off[0];
        *off = x->off[0] + d / 2;
        /* the worse measurement, plus half the drift between them */
        *unc = (x->unc[0] > x->unc[1] ? x->unc[0] : x->unc[1]) + (d < 0 ? -d : d) / 2;
    } else if (x->have[0] || x->have[1]) {
        int w = x->have[1];
        *off = x->off[w];
        *unc = x->unc[w];
    }
}
