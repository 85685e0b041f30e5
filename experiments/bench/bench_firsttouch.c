/*
 * bench_firsttouch.c -- what a first touch of fresh shared memory costs.
 *
 * A window's memory is mapped at MPI_Win_allocate and filled in by the
 * page faults of its first writes, so copying a table into a new window
 * costs the faults as well as the copy.  On a virtual machine a fault on
 * memory the guest has never used also takes the page from the host.
 * This maps MB megabytes of shared anonymous memory (as osc/sm's segments
 * are), writes every byte once, unmaps it, ROUNDS times: round 1 touches
 * memory that may never have been used, the later ones memory just freed.
 * Appends round,megabytes,ms,gb_per_s rows to out.csv.  No MPI.
 * Usage: bench_firsttouch MB ROUNDS out.csv
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    long mb = argc > 1 ? atol(argv[1]) : 0;
    int rounds = argc > 2 ? atoi(argv[2]) : 0;
    if (argc != 4 || mb < 1 || rounds < 1) {
        fprintf(stderr, "usage: bench_firsttouch MB ROUNDS out.csv (MB, ROUNDS >= 1)\n");
        return 64;
    }
    FILE *csv = fopen(argv[3], "a");
    if (!csv) {
        perror(argv[3]);
        return 1;
    }
    size_t n = (size_t)mb << 20;
    for (int i = 1; i <= rounds; i++) {
        unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        double t = now_s();
        memset(p, 1, n);
        double d = now_s() - t;
        munmap(p, n);
        fprintf(csv, "%d,%ld,%.1f,%.3f\n", i, mb, d * 1e3, (double)n / d / 1e9);
        printf("round %d: %ld MB written for the first time in %.0f ms (%.2f GB/s)\n", i, mb, d * 1e3,
               (double)n / d / 1e9);
    }
    fclose(csv);
    return 0;
}
