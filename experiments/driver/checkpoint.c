/*
 * checkpoint.c -- the driver's side of variant checkpoint-restart.
 *
 * driver.checkpoint_s=T: every rank takes checkpoint k (kv_checkpoint,
 * collective) once the shared clock passes run_start + k*T, and before it
 * stops it takes those still due before the run's end, so every rank makes
 * the same calls.  A kill ends such a job (it runs without --with-ft); the
 * launcher starts it again with driver.restore=1: the store reloads the
 * latest complete checkpoint instead of loading the records, and the run
 * phase goes on with the workload.
 * Lost work: every acknowledged write is counted in a file mapped
 * MAP_SHARED (store.checkpoint_dir/acks-RANK, ackfile.h), which outlives a
 * SIGKILL of the process, together with the count at each checkpoint's cut.  After a
 * restore, the writes acknowledged after the restored cut are the lost ones;
 * the driver reports them (restore.csv in the run directory).
 */
#include <stdlib.h>
#include <string.h>

#include "ackfile.h"
#include "driver.h"

static kv_acks *acks;
static long long next_k = 1;

static int take(kv_store *kv, drv_rank *m) {
    long long at = acks ? acks->acked : 0;
    kv_checkpoint_info ci;
    int64_t t = kv_clock_ns();
    int rc = kv_checkpoint(kv, &ci);
    m->ckpt_s += (double)(kv_clock_ns() - t) * 1e-9;
    if (rc != KV_OK) return rc;
    m->checkpoints++;
    acks_cut(acks, ci.number, at);
    return KV_OK;
}

void drv_ckpt_take(kv_store *kv, drv_rank *m) {
    if (take(kv, m) != KV_OK) m->checkpoint_errors++;
}

int drv_ckpt_start(kv_store *kv, const drv_settings *s, drv_rank *m, int *restored) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *restored = 0;
    if (s->store.variant != KV_VARIANT_CHECKPOINT) return KV_OK;
    if (!s->restore) {
        acks = acks_map(s->store.checkpoint_dir, rank, 1);
        return acks ? KV_OK : KV_ERR_IO;
    }
    acks = acks_map(s->store.checkpoint_dir, rank, 0);
    kv_checkpoint_info ci;
    int64_t t = kv_clock_ns();
    int rc = kv_restore(kv, &ci);
    m->restore_s = (double)(kv_clock_ns() - t) * 1e-9;
    /* A task run whose first job died before its first checkpoint starts
     * again from the beginning (restored_from stays 0). */
    if (rc == KV_ERR_NOT_FOUND && s->task.enabled) return KV_OK;
    if (rc != KV_OK) return rc;
    m->restored_from = ci.number;
    m->restored_pairs = ci.pairs;
    /* Writes acknowledged after the restored cut are lost; counting goes on
     * from the cut, so a second failure is counted the same way. */
    m->lost_writes = acks_lost(acks, ci.number);
    if (m->lost_writes >= 0) acks->acked = acks->at_cut[ci.number];
    *restored = 1;
    return KV_OK;
}

void drv_ckpt_ack(void) {
    if (acks) acks->acked++;
}

void drv_ckpt_tick(kv_store *kv, const drv_settings *s, drv_rank *m, double t) {
    if (s->checkpoint_s <= 0 || s->task.enabled) return;  /* a task run decides itself */
    double end = s->work.duration_s > 0 ? s->work.duration_s : 1e300;
    while (t >= next_k * s->checkpoint_s && next_k * s->checkpoint_s < end) {
        drv_ckpt_take(kv, m);
        next_k++;
    }
}

void drv_ckpt_finish(kv_store *kv, const drv_settings *s, drv_rank *m) {
    if (s->checkpoint_s <= 0 || s->work.duration_s <= 0) return;
    drv_ckpt_tick(kv, s, m, s->work.duration_s);
}

/* checkpoint.csv in the run directory, and a line on stdout (collective). */
void drv_ckpt_write(MPI_Comm comm, const drv_settings *s, const drv_rank *m, int me) {
    if (s->store.variant != KV_VARIANT_CHECKPOINT) return;
    /* lost writes, checkpoint errors, ranks whose ack file was unreadable */
    long long mine[3] = {m->lost_writes < 0 ? 0 : m->lost_writes, m->checkpoint_errors,
                         s->restore && m->lost_writes < 0}, sum[3];
    double tm[2] = {m->ckpt_s, m->restore_s}, mx[2];
    MPI_Reduce(mine, sum, 3, MPI_LONG_LONG, MPI_SUM, 0, comm);
    MPI_Reduce(tm, mx, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (me != 0) return;
    char lost[32] = "0";  /* NA when a rank could not count: never report a guess */
    if (s->restore) snprintf(lost, sizeof lost, sum[2] ? "NA" : "%lld", sum[0]);
    char path[1100];
    snprintf(path, sizeof path, "%s/checkpoint.csv", s->out);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "interval_s,checkpoints,checkpoint_errors,checkpoint_s_total,restored_from,"
                   "restored_pairs,restore_s,lost_writes\n");
        fprintf(f, "%g,%lld,%lld,%.6f,%lld,%lld,%.6f,%s\n", s->checkpoint_s, m->checkpoints, sum[1],
                mx[0], m->restored_from, m->restored_pairs, mx[1], lost);
        fclose(f);
    }
    printf("[CHECKPOINT], Taken, %lld every %g s (%.3f s in all, slowest rank)\n", m->checkpoints,
           s->checkpoint_s, mx[0]);
    if (s->restore)
        printf("[CHECKPOINT], Restored, checkpoint %lld: %lld pairs in %.3f s; %s acknowledged "
               "writes lost (after its cut)\n", m->restored_from, m->restored_pairs, mx[1], lost);
}
