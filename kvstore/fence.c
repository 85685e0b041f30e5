/*
 * fence.c -- keeping a rank that was evicted alive from answering.
 *
 * ULFM's premise is fail-stop: a process reported failed has stopped.  A
 * node whose Open MPI daemon dies breaks it: the runtime reports the
 * node's ranks failed while they run on, and until each learns of its
 * daemon's loss (and ends itself, patch 0006) it serves its clients.  The
 * survivors have recovered without it by then; its answers contradict
 * theirs (a write they never see, a read of a copy they moved on from).
 * The fence has two halves, and a store on one node needs neither (a lost
 * daemon there ends the job):
 *
 * - Nothing it sends reaches a survivor.  A survivor's Open MPI stops
 *   reading the connection of a process it recorded as failed before it
 *   applies anything more from it (patches 0006 and 0007, btl/tcp), and a
 *   survivor's recovery waits until its MPI has recorded every member the
 *   shrink left out (kvf_recorded).  So an operation of the evicted that
 *   touches another node completes only if that node carried it out
 *   before its fence went up, which is before any survivor finished the
 *   recovery.
 * - What it reads on its own node alone proves nothing, so such a read is
 *   answered only under a lease: within KVF_LEASE_NS of the start of one of
 *   its operations that completed on another node, or with a read made
 *   there for the purpose (ops.c).  The survivors serve again only
 *   KVF_LEASE_NS after the recovery's last agreement (kvf_hold).  A read
 *   answered from the evicted's node therefore began before the survivors
 *   served anything new, and it is linearizable: what it returns was the
 *   pair's value at some instant of it.
 *
 * The lease is short because it costs twice: the survivors' pause after
 * each recovery, and an extra read on another node for a rank that has
 * touched no other node for that long (a rank under load touches one at
 * almost every operation: most copies are elsewhere).  Time is each
 * host's CLOCK_MONOTONIC; only durations are compared across hosts.
 * Over InfiniBand the adapter writes into a window without the host's
 * processor, and not reading a connection does not stop it: there the
 * first half needs the window's registration withdrawn, which no MPI
 * offers.
 */
#include "kv_internal.h"

#include <mpi-ext.h>
#include <time.h>

/* How long a completed operation on another node lets a rank answer
 * from its own node alone, and how long survivors wait after a recovery. */
#define KVF_LEASE_NS 2000000
/* How long a survivor waits for its MPI to record a failure the shrink
 * agreed on (the runtime's notice is on its way to every survivor). */
#define KVF_RECORD_WAIT_MS 2000

bool kvf_needed(const kv_store *s) { return !s->one_node; }

int64_t kvf_start(const kv_store *s) { return kvf_needed(s) ? kv_clock_ns() : 0; }

bool kvf_leased(const kv_store *s, int64_t t0) {
    return !kvf_needed(s) || t0 - s->lease_ns < KVF_LEASE_NS;
}

int kvf_off_node(const kv_store *s, const int *ids, int n) {
    for (int i = 0; i < n; i++)
        if (s->node_of_id[ids[i]] != s->my_node) return ids[i];
    return -1;
}

void kvf_renew(kv_store *s, int64_t t0) {
    if (kvf_needed(s) && t0 > s->lease_ns) s->lease_ns = t0;
}

/* Wait until this process's MPI has recorded nfailed failures among old's
 * members.  The record comes through progress, which asking for the failed
 * group does not drive; a probe on MPI_COMM_SELF does (the watchdog's test
 * does nothing while a recovery runs).  Past the wait the recovery goes on
 * unfenced, and the count says so. */
void kvf_recorded(kv_store *s, MPI_Comm old, int nfailed) {
    if (!kvf_needed(s) || nfailed <= 0) return;
    int64_t until = kv_clock_ns() + (int64_t)KVF_RECORD_WAIT_MS * 1000000;
    int n = 0;
    for (;;) {
        MPI_Group g;
        if (MPIX_Comm_get_failed(old, &g) == MPI_SUCCESS) {
            MPI_Group_size(g, &n);
            MPI_Group_free(&g);
        }
        if (n >= nfailed) return;
        if (kv_clock_ns() > until) break;
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
        kvw_doze();
    }
    KVR_TRACE(s, "fence: MPI recorded %d failures of %d", n, nfailed);
    s->st.fence_unrecorded++;
}

void kvf_hold(const kv_store *s) {
    if (!kvf_needed(s)) return;
    struct timespec nap = {0, KVF_LEASE_NS};
    while (nanosleep(&nap, &nap) != 0) {}
}
