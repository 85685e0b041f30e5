/*
 * test_ftlock.c -- the fault-tolerant lock of the patched osc/sm, as a
 * model: processes killed at any step of taking, holding or giving it up.
 *
 * The patched osc/sm (patches/openmpi/0003, docs/ft-rma.md section 2.3)
 * replaces the stock ticket lock by one whose claiming atomic is the
 * record of its holder: a reader ORs its bit into the target's reader
 * word, then reads the writer word (0, or the writer's rank + 1), and
 * backs off if a writer is there; a writer claims the writer word by
 * compare-and-swap, then waits until no reader bit of a live process is
 * set, clearing the bits of the dead.  A survivor that finds the writer
 * word held by a rank known to have failed frees it by compare-and-swap.
 * This file runs that algorithm, written again here with C11 atomics, in
 * NPROC forked processes sharing one mapping.  In every round one of them
 * raises SIGKILL at one of the algorithm's steps (STEP_*: after a reader's
 * claim, after its back-off, after a writer's claim, while a writer waits
 * for the readers, inside the lock in either mode, after a release), the
 * step, and the operation from which on it dies there, drawn from the
 * round's number, so the
 * rounds kill at every step; the parent marks the victim failed once
 * waitpid has seen it die, as ULFM reports a death only after it happened.
 *
 * Pass rules, over ROUNDS rounds: the victim dies of its own SIGKILL; the
 * survivors finish all their lock
 * operations before a deadline (no lock is left to the dead: a hang is a
 * failure); no survivor ever holds the exclusive lock while another live
 * process holds the lock in any mode, nor a shared lock while a live
 * process holds it exclusively; the counter that writers increment under
 * the lock loses no increment of a survivor.  The model checks the
 * algorithm, not the patch's code, which tests/mpi/win_lock.c runs with
 * real ranks killed at the same steps.
 */
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

enum { NPROC = 8, ROUNDS = 300, OPS = 2000, DEADLINE_S = 10 };

typedef struct shared {
    _Atomic uint64_t readers;      /* bit p: process p holds or claims a shared lock */
    _Atomic int32_t excl;          /* 0 free, p + 1: process p holds or claims it */
    _Atomic int32_t failed[NPROC]; /* set by the parent after p died */
    _Atomic int32_t inside[NPROC]; /* 0 out, 1 shared, 2 exclusive (set once held) */
    _Atomic int64_t counter;       /* incremented under the exclusive lock */
    _Atomic int64_t added[NPROC];  /* increments each process completed */
    _Atomic int32_t done[NPROC];   /* lock operations each process completed */
    _Atomic int32_t violations;
} shared;

static shared *sh;
/* The steps a victim dies at (in the lock functions below). */
enum { STEP_READER_CLAIMED, STEP_READER_BACKED_OFF, STEP_WRITER_CLAIMED, STEP_WRITER_DRAINING,
       STEP_INSIDE_SHARED, STEP_INSIDE_EXCLUSIVE, STEP_RELEASED, NSTEPS };
static int victim = -1, die_op, die_step;  /* set before the fork */
static int me_, op_;                       /* this process and its operation */

static int killed_at[NSTEPS];              /* rounds whose victim died at each step */

static void step(int s) {
    if (me_ == victim && op_ >= die_op && s == die_step) raise(SIGKILL);
}

static void progress(void) { sched_yield(); }

static uint64_t dead_mask(void) {
    uint64_t m = 0;
    for (int p = 0; p < NPROC; p++)
        if (atomic_load(&sh->failed[p])) m |= UINT64_C(1) << p;
    return m;
}

/* Free the writer word if its holder failed. */
static void reap(int32_t e) {
    if (e > 0 && atomic_load(&sh->failed[e - 1])) atomic_compare_exchange_strong(&sh->excl, &e, 0);
}

static void lock_shared(int me) {
    uint64_t b = UINT64_C(1) << me;
    for (;;) {
        atomic_fetch_or(&sh->readers, b);  /* seq_cst: the store before the load */
        step(STEP_READER_CLAIMED);
        if (atomic_load(&sh->excl) == 0) return;
        atomic_fetch_and(&sh->readers, ~b);
        step(STEP_READER_BACKED_OFF);
        int32_t e;
        while ((e = atomic_load(&sh->excl)) != 0) {
            reap(e);
            progress();
        }
    }
}

static void unlock_shared(int me) { atomic_fetch_and(&sh->readers, ~(UINT64_C(1) << me)); }

static void lock_exclusive(int me) {
    for (;;) {
        int32_t e = 0;
        if (atomic_compare_exchange_strong(&sh->excl, &e, me + 1)) break;
        reap(e);
        progress();
    }
    step(STEP_WRITER_CLAIMED);
    for (;;) {
        step(STEP_WRITER_DRAINING);
        uint64_t v = atomic_load(&sh->readers), d = v & dead_mask();
        if (d) atomic_fetch_and(&sh->readers, ~d);
        if ((v & ~d) == 0) return;
        progress();
    }
}

static void unlock_exclusive(int me) {
    int32_t e = me + 1;
    atomic_compare_exchange_strong(&sh->excl, &e, 0);
}

/* Does a live process other than me hold the lock in a conflicting mode? */
static void check(int me, int mode) {
    for (int q = 0; q < NPROC; q++) {
        if (q == me || atomic_load(&sh->failed[q])) continue;
        int in = atomic_load(&sh->inside[q]);
        if (in == 2 || (in == 1 && mode == 2)) atomic_fetch_add(&sh->violations, 1);
    }
}

/* A little work inside the lock, so that a kill finds a process in
 * there often, and its victim with operations left. */
static void work(void) {
    for (volatile int i = 0; i < 300; i++) {}
}

static void child(int me, unsigned seed) {
    me_ = me;
    for (int i = 0; i < OPS; i++) {
        op_ = i;
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 3 == 0) {
            lock_exclusive(me);
            atomic_store(&sh->inside[me], 2);
            check(me, 2);
            int64_t c = atomic_load(&sh->counter);
            step(STEP_INSIDE_EXCLUSIVE);
            work();
            atomic_store(&sh->counter, c + 1);  /* a read-modify-write the lock must protect */
            atomic_fetch_add(&sh->added[me], 1);
            atomic_store(&sh->inside[me], 0);
            unlock_exclusive(me);
            step(STEP_RELEASED);
        } else {
            lock_shared(me);
            atomic_store(&sh->inside[me], 1);
            check(me, 1);
            step(STEP_INSIDE_SHARED);
            work();
            atomic_store(&sh->inside[me], 0);
            unlock_shared(me);
            step(STEP_RELEASED);
        }
        atomic_fetch_add(&sh->done[me], 1);
    }
    _exit(0);
}

/* One round: NPROC processes, one of which dies at a step of an operation. */
static void round_(unsigned seed) {
    memset(sh, 0, sizeof *sh);
    victim = (int)(seed % NPROC);
    die_step = (int)(seed % NSTEPS);
    die_op = (int)((seed * 2654435761u) % (OPS / 2));
    pid_t pid[NPROC];
    for (int p = 0; p < NPROC; p++) {
        pid[p] = fork();
        assert_true(pid[p] >= 0);
        if (pid[p] == 0) child(p, seed * 31u + (unsigned)p);
    }
    /* A step the victim's operation never reaches (a reader that needs no
     * back-off) leaves it alive: then it is killed after its operations. */
    int vst = 0;
    time_t give_up = time(NULL) + DEADLINE_S;
    pid_t got;
    while ((got = waitpid(pid[victim], &vst, WNOHANG)) == 0 && time(NULL) < give_up) {
        struct timespec nap = {0, 100000};
        nanosleep(&nap, NULL);
    }
    if (got == 0) {
        kill(pid[victim], SIGKILL);
        assert_int_equal(waitpid(pid[victim], &vst, 0), pid[victim]);
    }
    atomic_store(&sh->failed[victim], 1);
    if (WIFSIGNALED(vst)) {
        assert_int_equal(WTERMSIG(vst), SIGKILL);
        killed_at[die_step]++;
    }
    time_t until = time(NULL) + DEADLINE_S;
    for (int p = 0; p < NPROC; p++) {
        if (p == victim) continue;
        int st = 0;
        pid_t got;
        while ((got = waitpid(pid[p], &st, WNOHANG)) == 0 && time(NULL) < until) {
            struct timespec nap = {0, 1000000};
            nanosleep(&nap, NULL);
        }
        if (got == 0) {  /* hung: end every process of the round, then fail */
            for (int q = 0; q < NPROC; q++) kill(pid[q], SIGKILL);
            while (wait(NULL) > 0) {}
            fail_msg("round %u: process %d still waits for the lock %d s after process %d died", seed, p,
                     DEADLINE_S, victim);
        }
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    int64_t survivors = 0;
    for (int p = 0; p < NPROC; p++)
        if (p != victim) survivors += atomic_load(&sh->added[p]);
    int64_t counter = atomic_load(&sh->counter), mine = atomic_load(&sh->added[victim]);
    /* The victim's own increments count once they completed; one cut
     * short between its read and its write may be lost with it. */
    assert_true(counter == survivors + mine || counter == survivors + mine + 1);
    assert_int_equal(atomic_load(&sh->violations), 0);
}

static void test_kills_at_any_step(void **state) {
    (void)state;
    for (unsigned r = 1; r <= ROUNDS; r++) round_(r);
    for (int s = 0; s < NSTEPS; s++)  /* every step was a place of death */
        if (killed_at[s] == 0) fail_msg("no victim died at step %d", s);
    victim = -1;
}

/* The same algorithm without a kill: exclusion and no lost increment. */
static void test_no_kill(void **state) {
    (void)state;
    memset(sh, 0, sizeof *sh);
    pid_t pid[NPROC];
    for (int p = 0; p < NPROC; p++)
        if ((pid[p] = fork()) == 0) child(p, 7u + (unsigned)p);
    int64_t want = 0;
    for (int p = 0; p < NPROC; p++) {
        int st = 0;
        assert_int_equal(waitpid(pid[p], &st, 0), pid[p]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        want += atomic_load(&sh->added[p]);
    }
    assert_int_equal(atomic_load(&sh->counter), want);
    assert_int_equal(atomic_load(&sh->violations), 0);
}

int main(void) {
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_kill),
        cmocka_unit_test(test_kills_at_any_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
