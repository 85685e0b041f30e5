/*
 * ulfm_cid.c -- a message sent on a communicator that failed never reaches
 * a later one.
 * run: 4
 *
 * Open MPI's ob1 keeps a message for a communicator that does not exist
 * (yet, or any more) and hands it to the next communicator that gets the
 * same context id (CID).  After a failure that is a message a process sent
 * on a communicator that its receiver gave up: the receiver's creation of
 * it failed, or it freed it once a member had died.  Stock Open MPI gives
 * that CID back, and the next communicator (a shrink's, a window's) then
 * took the message as its own: ob1 aborted the receiver when the sender's
 * rank lay outside the new communicator (seen as a survivor exiting with
 * status 255 while the store made a window after a second failure inside
 * its recovery), and matched it silently otherwise.  The patched Open MPI
 * (patches/openmpi, 0009) keeps such a CID reserved.
 *
 * The same thing, deterministically: rank 2 dies; ranks 0, 1 and 3 notice;
 * rank 0 frees communicator A; then ranks 1 and 3 send one message each on
 * A to rank 0 (tag 5) and free A themselves.  The survivors shrink and
 * duplicate the result three times.  Pass rules: rank 0 lives on; none of
 * the four new communicators holds a message with tag 5; an allreduce on
 * the shrunken one sums the survivors' ranks.
 */
#include "kvtest.h"

#include <mpi-ext.h>

enum { VICTIM = 2, TAG_STALE = 5, TAG_WATCH = 9, TAG_FREED = 11, TAG_SENT = 12, NDUP = 3 };

/* Wait up to 10 s for the victim's death to show on a receive from it. */
static int notice(MPI_Comm world) {
    int buf, flag = 0, rc = MPI_SUCCESS;
    MPI_Request req;
    MPI_Irecv(&buf, 1, MPI_INT, VICTIM, TAG_WATCH, world, &req);
    double t0 = kvt_now();
    while (kvt_now() - t0 < 10.0) {
        rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || flag) break;
        usleep(100);
    }
    return rc;
}

/* Progress for 100 ms: is a message with the stale tag there? */
static bool holds_stale(MPI_Comm c) {
    int flag = 0;
    for (double t0 = kvt_now(); kvt_now() - t0 < 0.1 && !flag;) {
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_STALE, c, &flag, MPI_STATUS_IGNORE);
        usleep(100);
    }
    return flag != 0;
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    MPI_Comm world, a;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    MPI_Comm_dup(world, &a);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
    int rank, size, one = 1;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    if (size != 4) {
        fprintf(stderr, "ulfm_cid: run with 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(world);
    if (rank == VICTIM) raise(SIGKILL);

    int cls = MPI_SUCCESS;
    MPI_Error_class(notice(world), &cls);
    KVT_CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_PROC_FAILED_PENDING);
    if (rank == 0) {
        MPI_Comm_free(&a);
        for (int r = 1; r < size; r++)
            if (r != VICTIM) KVT_CHECK_RC(MPI_Send(&one, 1, MPI_INT, r, TAG_FREED, world), MPI_SUCCESS);
        /* The stale messages travel ahead of these on the same connection. */
        for (int r = 1; r < size; r++)
            if (r != VICTIM)
                KVT_CHECK_RC(MPI_Recv(&one, 1, MPI_INT, r, TAG_SENT, world, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else {
        KVT_CHECK_RC(MPI_Recv(&one, 1, MPI_INT, 0, TAG_FREED, world, MPI_STATUS_IGNORE), MPI_SUCCESS);
        KVT_CHECK_RC(MPI_Send(&rank, 1, MPI_INT, 0, TAG_STALE, a), MPI_SUCCESS);
        MPI_Comm_free(&a);
        KVT_CHECK_RC(MPI_Send(&one, 1, MPI_INT, 0, TAG_SENT, world), MPI_SUCCESS);
    }

    MPI_Comm shrunk, dup[NDUP];
    KVT_CHECK_RC(MPIX_Comm_shrink(world, &shrunk), MPI_SUCCESS);
    for (int i = 0; i < NDUP; i++) KVT_CHECK_RC(MPI_Comm_dup(shrunk, &dup[i]), MPI_SUCCESS);
    if (rank == 0) {
        KVT_CHECK(!holds_stale(shrunk));
        for (int i = 0; i < NDUP; i++) KVT_CHECK(!holds_stale(dup[i]));
    }
    int sum = 0;
    KVT_CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shrunk), MPI_SUCCESS);
    KVT_CHECK(sum == size * (size - 1) / 2 - VICTIM);
    for (int i = 0; i < NDUP; i++) MPI_Comm_free(&dup[i]);
    kvt_finish(shrunk, "ulfm_cid");
    MPI_Finalize();
    return 0;
}
