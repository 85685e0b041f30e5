/*
 * checkpoint.c -- the checkpoint-restart variant: files instead of replicas.
 *
 * The classic alternative to in-memory redundancy.  The store keeps one
 * copy of every pair (r = 1, no watchdog); kv_checkpoint writes each
 * rank's pairs to a file, coordinated by a barrier so that the files form
 * a consistent cut, and a failure ends the job: the launcher starts it
 * again and kv_restore reloads the latest complete checkpoint.
 *
 * Layout in cfg.checkpoint_dir:
 *   ckpt-NNNNNN/id-IIIII.kvc   one file per member id of checkpoint N
 *   LATEST                     "N nids\n": the latest complete checkpoint
 * A file is a 64-byte header (magic, number, id, nids, limits, pair count,
 * body length, body and header checksums) and a body of records in the
 * re-replication format (kvr_rec, key, value, padded to 8).  Every file is
 * written under a temporary name, synced and renamed, and LATEST moves
 * only after every rank reported success, so a crash at any moment leaves
 * the previous checkpoint complete and named by LATEST.  Reading trusts
 * nothing: the header is checked against this store before the body is
 * read, and the body against its checksum before a pair is inserted.
 */
#include "kv_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int no_make(kv_store *s, kvr_window *nw) {
    (void)s;
    (void)nw;
    return KV_ERR_UNSUPPORTED;
}

const kvr_variant_ops kvr_checkpoint = {.detects = false, .retire = KVR_ABANDON, .make = no_make};

#define KVC_MAGIC "KVCKPT01"

typedef struct kvc_hdr {
    char magic[8];
    uint64_t number;
    uint32_t id, nids;
    uint32_t max_key, max_value;
    uint64_t npairs;
    uint64_t body_bytes;
    uint64_t body_check;
    uint64_t hdr_check;   /* over the bytes above */
} kvc_hdr;

_Static_assert(sizeof(kvc_hdr) == 64, "checkpoint header is 64 bytes");

static uint64_t hdr_check(const kvc_hdr *h) {
    return kvh_hash(h, offsetof(kvc_hdr, hdr_check), 0x6b76636b70743031ull);
}

static void ckpt_path(char *out, size_t n, const char *dir, long long number, int id) {
    if (id < 0) snprintf(out, n, "%s/ckpt-%06lld", dir, number);
    else snprintf(out, n, "%s/ckpt-%06lld/id-%05d.kvc", dir, number, id);
}

static int sync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* LATEST: the number of the latest complete checkpoint, 0 when none. */
static long long read_latest(const char *dir, int *nids) {
    char path[512];
    snprintf(path, sizeof path, "%s/LATEST", dir);
    FILE *f = fopen(path, "r");
    long long n = 0;
    *nids = 0;
    if (!f) return 0;
    if (fscanf(f, "%lld %d", &n, nids) != 2 || n < 1) n = -1;
    fclose(f);
    return n;
}

static int write_latest(const char *dir, long long number, int nids) {
    char path[512], tmp[520];
    snprintf(path, sizeof path, "%s/LATEST", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    int ok = fprintf(f, "%lld %d\n", number, nids) > 0;
    ok &= fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) return -1;
    return sync_dir(dir);
}

/* Remove checkpoint `number` (every file in its directory). */
static void remove_ckpt(const char *dir, long long number) {
    char d[512], p[1024];
    ckpt_path(d, sizeof d, dir, number, -1);
    DIR *dh = opendir(d);
    if (!dh) return;
    struct dirent *e;
    while ((e = readdir(dh)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", d, e->d_name);
            unlink(p);
        }
    closedir(dh);
    rmdir(d);
}

/* This rank's file of checkpoint `number`: temporary name, sync, rename.
 * The fault point "checkpoint-write" lies halfway through the table. */
static int write_file(kv_store *s, long long number, long long *pairs, long long *bytes) {
    char dir[512], path[512], tmp[520];
    ckpt_path(dir, sizeof dir, s->cfg.checkpoint_dir, number, -1);
    ckpt_path(path, sizeof path, s->cfg.checkpoint_dir, number, s->my_id);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return KV_ERR_IO;
    FILE *f = fopen(tmp, "w");
    if (!f) return KV_ERR_IO;
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    kvc_hdr h = {.number = (uint64_t)number, .id = (uint32_t)s->my_id, .nids = (uint32_t)s->nids,
                 .max_key = (uint32_t)s->cfg.max_key, .max_value = (uint32_t)s->cfg.max_value};
    memcpy(h.magic, KVC_MAGIC, 8);
    bool ok = fwrite(&h, sizeof h, 1, f) == 1;
    unsigned char *rec = calloc(1, s->slot_size);  /* one record, padding zeroed */
    uint64_t check = 0;
    for (size_t i = 0; i < s->nslots && ok && rec; i++) {
        if (i == s->nslots / 2) KVR_POINT("checkpoint-write");
        const unsigned char *slot = s->base + i * s->slot_size;
        if (kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value) != KVS_LIVE) continue;
        const kvs_hdr *sh = kvs_hdr_of(slot);
        kvr_rec r = {sh->version, sh->klen, sh->vlen};
        size_t klen = KVS_KLEN(sh), sz = kvr_rec_size(r.klen, r.vlen);
        memset(rec + sz - 8, 0, 8);
        memcpy(rec, &r, sizeof r);
        memcpy(rec + sizeof r, kvs_key_of(slot), klen);
        memcpy(rec + sizeof r + klen, kvs_val_of(slot, s->cfg.max_key), r.vlen);
        check = kvh_hash(rec, sz, check);
        ok = fwrite(rec, 1, sz, f) == sz;
        h.npairs++;
        h.body_bytes += sz;
    }
    ok = ok && rec;
    free(rec);
    h.body_check = check;
    h.hdr_check = hdr_check(&h);
    ok = ok && fseek(f, 0, SEEK_SET) == 0 && fwrite(&h, sizeof h, 1, f) == 1;
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0 || sync_dir(dir) != 0) {
        unlink(tmp);
        return KV_ERR_IO;
    }
    *pairs = (long long)h.npairs;
    *bytes = (long long)(sizeof h + h.body_bytes);
    return KV_OK;
}

/* Check a checkpoint file's image (header against this store, body against
 * its checksum and the limits) and insert its pairs.  Anything may be in
 * `img`: it came from a disk. */
int kvc_load_image(kv_store *s, const unsigned char *img, size_t len, long long number,
                   long long *pairs) {
    kvc_hdr h;
    if (len < sizeof h) return KV_ERR_CORRUPT;
    memcpy(&h, img, sizeof h);
    if (memcmp(h.magic, KVC_MAGIC, 8) || h.hdr_check != hdr_check(&h) ||
        (number > 0 && h.number != (uint64_t)number) || h.id != (uint32_t)s->my_id ||
        h.body_bytes != len - sizeof h)
        return KV_ERR_CORRUPT;
    if (h.nids != (uint32_t)s->nids || h.max_key > s->cfg.max_key || h.max_value > s->cfg.max_value)
        return KV_ERR_CONFIG;  /* taken by a store of other ranks or larger limits */
    const unsigned char *body = img + sizeof h;
    /* The writer chained the hash record by record; so does the reader. */
    uint64_t check = 0;
    for (size_t off = 0; off < h.body_bytes;) {
        kvr_rec r;
        if (h.body_bytes - off < sizeof r) return KV_ERR_CORRUPT;
        memcpy(&r, body + off, sizeof r);
        size_t sz = kvr_rec_size(r.klen, r.vlen);
        if ((r.klen & ~KVS_TOMB) > s->cfg.max_key || r.vlen > s->cfg.max_value ||
            sz > h.body_bytes - off)
            return KV_ERR_CORRUPT;
        check = kvh_hash(body + off, sz, check);
        off += sz;
    }
    if (check != h.body_check) return KV_ERR_CORRUPT;
    long long before = s->st.restore_full, n = kvr_insert_all(s, body, h.body_bytes);
    if (n < 0 || (uint64_t)n != h.npairs) return KV_ERR_CORRUPT;
    *pairs = n;
    return s->st.restore_full > before ? KV_ERR_FULL : KV_OK;
}

/* Read this rank's file of checkpoint `number` and load it. */
static int read_file(kv_store *s, long long number, long long *pairs, long long *bytes) {
    char path[512];
    ckpt_path(path, sizeof path, s->cfg.checkpoint_dir, number, s->my_id);
    FILE *f = fopen(path, "r");
    if (!f) return KV_ERR_IO;
    struct stat st;
    unsigned char *img = NULL;
    int rc = KV_ERR_IO;
    if (fstat(fileno(f), &st) == 0 && st.st_size >= 0) {
        img = malloc((size_t)st.st_size + 1);
        rc = !img ? KV_ERR_NOMEM
             : fread(img, 1, (size_t)st.st_size, f) == (size_t)st.st_size
                 ? kvc_load_image(s, img, (size_t)st.st_size, number, pairs)
                 : KV_ERR_IO;
        *bytes = st.st_size;
    }
    free(img);
    fclose(f);
    return rc;
}

/* Sum pairs and bytes, max times over the members; fill info. */
static void gather_info(kv_store *s, kv_checkpoint_info *info, long long number, long long pairs,
                        long long bytes, int64_t t0, double io) {
    long long sums[2] = {pairs, bytes}, tot[2] = {0, 0};
    double mine[2] = {(double)(kv_clock_ns() - t0) / 1e9, io}, mx[2] = {0, 0};
    MPI_Allreduce(sums, tot, 2, MPI_LONG_LONG, MPI_SUM, s->comm);
    MPI_Allreduce(mine, mx, 2, MPI_DOUBLE, MPI_MAX, s->comm);
    if (!info) return;
    info->number = number;
    info->pairs = tot[0];
    info->bytes = tot[1];
    info->seconds = mx[0];
    info->io_seconds = io;
    info->io_seconds_max = mx[1];
}

int kv_checkpoint(kv_store *s, kv_checkpoint_info *info) {
    if (!s) return KV_ERR_ARG;
    if (s->cfg.variant != KV_VARIANT_CHECKPOINT) return KV_ERR_UNSUPPORTED;
    int64_t t0 = kv_clock_ns();
    /* The cut: every operation completes before its call returns, so once
     * all members are here, everything before is in the tables. */
    if (MPI_Barrier(s->comm) != MPI_SUCCESS) return KV_ERR_MPI;
    const char *dir = s->cfg.checkpoint_dir;
    long long last[2] = {0, 0};  /* number, status */
    if (s->rank == 0) {
        int nids;
        last[0] = read_latest(dir, &nids);
        if (last[0] < 0) last[1] = KV_ERR_CORRUPT;
        else if (mkdir(dir, 0755) != 0 && errno != EEXIST) last[1] = KV_ERR_IO;
    }
    if (MPI_Bcast(last, 2, MPI_LONG_LONG, 0, s->comm) != MPI_SUCCESS) return KV_ERR_MPI;
    if (last[1]) return (int)last[1];
    long long number = last[0] + 1, pairs = 0, bytes = 0;
    int64_t t_io = kv_clock_ns();
    int rc = write_file(s, number, &pairs, &bytes), all = rc;
    double io = (double)(kv_clock_ns() - t_io) / 1e9;
    if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, s->comm) != MPI_SUCCESS) return KV_ERR_MPI;
    if (all == KV_OK && s->rank == 0) {
        all = write_latest(dir, number, s->nids) == 0 ? KV_OK : KV_ERR_IO;
        if (all == KV_OK && last[0] > 0) remove_ckpt(dir, last[0]);
    }
    if (MPI_Bcast(&all, 1, MPI_INT, 0, s->comm) != MPI_SUCCESS) return KV_ERR_MPI;
    if (all != KV_OK) return all;
    s->st.checkpoints++;
    gather_info(s, info, number, pairs, bytes, t0, io);
    return KV_OK;
}

int kv_restore(kv_store *s, kv_checkpoint_info *info) {
    if (!s) return KV_ERR_ARG;
    if (s->cfg.variant != KV_VARIANT_CHECKPOINT) return KV_ERR_UNSUPPORTED;
    int64_t t0 = kv_clock_ns();
    long long latest[3] = {0, 0, KV_OK};  /* number, nids, status */
    if (s->rank == 0) {
        int nids;
        latest[0] = read_latest(s->cfg.checkpoint_dir, &nids);
        latest[1] = nids;
        if (latest[0] < 0) latest[2] = KV_ERR_CORRUPT;
        else if (latest[0] == 0) latest[2] = KV_ERR_NOT_FOUND;
        else if (nids != s->nids) latest[2] = KV_ERR_CONFIG;
    }
    if (MPI_Bcast(latest, 3, MPI_LONG_LONG, 0, s->comm) != MPI_SUCCESS) return KV_ERR_MPI;
    if (latest[2]) return (int)latest[2];
    long long pairs = 0, bytes = 0;
    int64_t t_io = kv_clock_ns();
    int rc = read_file(s, latest[0], &pairs, &bytes), all = rc;
    double io = (double)(kv_clock_ns() - t_io) / 1e9;
    if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, s->comm) != MPI_SUCCESS) return KV_ERR_MPI;
    if (all != KV_OK) return all;
    gather_info(s, info, latest[0], pairs, bytes, t0, io);
    return KV_OK;
}
