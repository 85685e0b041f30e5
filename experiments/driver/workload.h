/*
 * workload.h -- YCSB-style workload generators for the benchmark driver.
 *
 * A wl_params describes a workload: the YCSB core workloads A-F (wl_preset)
 * or a custom mix of read, update, insert, scan and read-modify-write over
 * `records` loaded records, with a key-choice distribution (uniform,
 * scrambled zipfian as in YCSB, plain zipfian, latest, hotspot), key and
 * value sizes, an operation budget or a duration, and a target rate (open
 * loop) or none (closed loop).  Each rank builds a wl_gen from the params,
 * its rank and the rank count; wl_next hands out its operations, the same
 * sequence for the same (seed, rank) on every machine (own PRNG, no libc
 * rand).  No MPI in here and no clock: the driver does both.
 * Conventions: functions that take (err, errlen) return 0 or -1 and write a
 * message naming the bad item; nothing here aborts the program.
 */
#ifndef WL_WORKLOAD_H
#define WL_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WL_KEY_MIN 5                 /* "user" plus at least one digit */
#define WL_KEY_MAX 256               /* longest key, bytes */
#define WL_VALUE_MAX (1u << 30)      /* largest value size accepted, bytes */
#define WL_VALUE_HEADER 16           /* record and version at the head of a value */
#define WL_PROPORTION_SLACK 1e-6     /* proportions must sum to 1 within this */

/* Operation kinds; the order is that of wl_params.proportion. */
typedef enum wl_kind {
    WL_READ = 0,    /* get one record */
    WL_UPDATE = 1,  /* put a new value for an existing record */
    WL_INSERT = 2,  /* put a new record (this rank's insert range, see wl_next) */
    WL_SCAN = 3,    /* get scan_len records with consecutive record numbers */
    WL_RMW = 4,     /* get one record, then put a new value for it */
    WL_NKINDS = 5
} wl_kind;

/* How the record of a read, update, scan or rmw is chosen. */
typedef enum wl_dist {
    WL_DIST_UNIFORM = 0,        /* every known record alike */
    WL_DIST_ZIPFIAN = 1,        /* YCSB's scrambled zipfian: hot records spread by FNV-64 */
    WL_DIST_ZIPFIAN_PLAIN = 2,  /* zipfian without scrambling: record 0 hottest */
    WL_DIST_LATEST = 3,         /* zipfian over recency: newest known record hottest */
    WL_DIST_HOTSPOT = 4,        /* hot_ops of the draws on the first hot_data of records */
    WL_NDISTS = 5
} wl_dist;

/*
 * The workload.  Set it with wl_params_default, then wl_preset and/or
 * wl_params_set; check it with wl_params_check.  Names for wl_params_set
 * (the value is text; sizes are bytes):
 *   workload            a..f (or A..F): wl_preset
 *   records             records loaded (YCSB recordcount), >= 1
 *   operations          operations over all ranks (YCSB operationcount);
 *                       0 = no budget, duration_s decides
 *   duration_s          run time in seconds, 0 = none (the driver's clock)
 *   read, update, insert, scan, rmw
 *                       proportions of each kind, in [0, 1], summing to 1
 *   distribution        uniform | zipfian | zipfian_plain | latest | hotspot
 *   zipfian_constant    the zipfian theta, in (0, 1); YCSB's 0.99 by default
 *   hotspot_data_fraction, hotspot_ops_fraction
 *                       hotspot: share of records that is hot (0.2) and
 *                       share of draws that go to it (0.8), as in YCSB
 *   key_bytes           key length, WL_KEY_MIN..WL_KEY_MAX (default 24)
 *   value_bytes         N (fixed) or MIN..MAX (uniform), default 1000
 *   scan_length         N or MIN..MAX, uniform, default 1..1000 (YCSB)
 *   target_rate_per_s   operations per second over all ranks; 0 = closed loop
 *   seed                the seed of every rank's stream (default 1)
 */
typedef struct wl_params {
    char name[16];                   /* "a".."f" after a preset; "custom" once a proportion,
                                        the distribution, zipfian_constant or scan_length
                                        is set by wl_params_set */
    uint64_t records;
    uint64_t operations;
    double duration_s;
    double proportion[WL_NKINDS];    /* indexed by wl_kind */
    wl_dist dist;
    double zipf_theta;
    double hot_data, hot_ops;
    int key_bytes;
    int64_t value_min, value_max;    /* signed so that a negative size can be refused */
    int64_t scan_min, scan_max;
    double target_rate;
    uint64_t seed;
} wl_params;

/* One operation, filled by wl_next; the caller owns it. */
typedef struct wl_op {
    wl_kind kind;
    uint64_t seq;                    /* 0-based index of the operation on this rank */
    uint64_t record;                 /* record number; for a scan the first record */
    size_t key_len;                  /* == key_bytes */
    char key[WL_KEY_MAX + 1];        /* the record's key, NUL-terminated */
    size_t value_len;                /* update, insert, rmw: bytes to write; else 0 */
    uint32_t scan_len;               /* scan: records in the run (>= 1); else 0 */
    double intended_s;               /* open loop: intended start, s since run start; closed: -1 */
} wl_op;

/* A rank's generator (opaque). */
typedef struct wl_gen wl_gen;

/* Fill p with the defaults: YCSB workload A, 1000 records, 1000 operations,
 * 24-byte keys, 1000-byte values, scans 1..1000, closed loop, seed 1. */
void wl_params_default(wl_params *p);

/* Load YCSB core workload `name` ("a".."f", any case) into p: proportions,
 * distribution, scan length and p->name.  Sizes, counts, rate and seed are
 * left alone.  Returns 0, or -1 with "unknown workload ..." in err. */
int wl_preset(wl_params *p, const char *name, char *err, size_t errlen);

/* Set the field called `name` (see wl_params) from the text `value`.
 * Only the syntax is checked here (and the name of a workload or
 * distribution); ranges and the whole are wl_params_check's.  Returns 0,
 * or -1 with a message naming the setting in err (unknown name, bad
 * number, unknown workload or distribution). */
int wl_params_set(wl_params *p, const char *name, const char *value, char *err, size_t errlen);

/* Check p as a whole: each problem (no records, no operation budget and no
 * duration, proportions out of [0,1] or not summing to 1, negative or
 * reversed sizes, key too short for the record numbers, bad theta,
 * negative rate...) gets its own message.  Returns 0 or -1. */
int wl_params_check(const wl_params *p, char *err, size_t errlen);

/* wl_params_check plus what depends on the rank count: nranks >= 1 and,
 * with an operation budget, room in the key's digits for the highest
 * insert record number (records + nranks * ceil(operations / nranks)). */
int wl_params_check_ranks(const wl_params *p, int nranks, char *err, size_t errlen);

/* Name of an operation kind ("read", "update", "insert", "scan", "rmw")
 * or distribution ("uniform", ...); "?" when out of range. */
const char *wl_kind_name(wl_kind k);
const char *wl_dist_name(wl_dist d);

/* Write the key of `record` to buf (at least key_bytes + 1 bytes): "user",
 * zeros, then the record number passed through a fixed bijection of
 * [0, 10^D), D = min(key_bytes - 4, 19) digits, so distinct record numbers
 * below 10^D give distinct keys and neighbours land far apart (YCSB hashes
 * with FNV-64 instead, which can collide once truncated).  Record numbers
 * >= 10^D wrap (wl_params_check_ranks refuses budgets that need them).
 * Returns key_bytes, or 0 if buflen is too small. */
size_t wl_key(const wl_params *p, uint64_t record, char *buf, size_t buflen);

/* The load phase: rank loads records [wl_load_begin, wl_load_end), a
 * contiguous block; the blocks of ranks 0..nranks-1 cover 0..records-1. */
uint64_t wl_load_begin(const wl_params *p, int rank, int nranks);
uint64_t wl_load_end(const wl_params *p, int rank, int nranks);

/* Value length of a loaded record: value_min..value_max drawn from a hash
 * of (seed, record), so every rank and every run agrees. */
size_t wl_load_value_len(const wl_params *p, uint64_t record);

/* A generator for `rank` of `nranks`: copies p, returns NULL (errno
 * EINVAL) if wl_params_check_ranks fails or ENOMEM.  Its stream depends on
 * (seed, rank) only.  Free with wl_gen_free. */
wl_gen *wl_gen_new(const wl_params *p, int rank, int nranks);

/* Free g (NULL is fine). */
void wl_gen_free(wl_gen *g);

/* Operations this rank runs in all: `operations` split as evenly as
 * possible, lower ranks taking the remainder (so 0 for some ranks when
 * operations < nranks); also 0 when there is no budget (operations = 0). */
uint64_t wl_rank_ops(const wl_gen *g);

/*
 * Draw the next operation into op.  Returns 1, or 0 (op untouched) when the
 * rank's share of `operations` is done; with no budget it never returns 0
 * and the driver stops at duration_s.
 * Records this rank knows: the loaded 0..records-1 and its own inserts.
 * Without communication there is no shared insert counter, so the k-th
 * insert of rank r (k = 0, 1, ...) is record  records + r + k * nranks:
 * disjoint ranges, interleaved so that together they fill the space after
 * the loaded records.  An insert is counted as done at the next wl_next
 * (YCSB acknowledges it when it completes; the driver is synchronous).
 * Key choice is over the known records, in order loaded then own inserts:
 * latest favours this rank's newest inserts, then the highest loaded
 * records; zipfian and zipfian_plain draw over a fixed item space of
 * records + twice the expected inserts (YCSB's "expectednewkeys") and
 * redraw items not yet inserted.  A scan starts at the chosen record and
 * runs over consecutive record numbers, cut at the highest known record;
 * past `records` it also crosses other ranks' inserts, which may be absent.
 * Open loop: op k of a rank is due at k * nranks / target_rate seconds.
 */
int wl_next(wl_gen *g, wl_op *op);

/* Fill buf[0..len) with the value of (record, version): if len >=
 * WL_VALUE_HEADER the record and version (8 bytes each, little-endian),
 * then bytes from a stream seeded by (seed, record, version).  The same on
 * every rank, so a reader can check what it got with wl_check_value. */
void wl_make_value(const wl_gen *g, uint64_t record, uint64_t version, unsigned char *buf,
                   size_t len);

/* Check a value read for `record`: 1 if it is what wl_make_value made for
 * that record (its version stored in *version if not NULL), 0 if not, -1
 * if it is shorter than WL_VALUE_HEADER and so cannot be checked (a value
 * of exactly WL_VALUE_HEADER bytes has no check bytes: only its record
 * number is compared). */
int wl_check_value(const wl_gen *g, uint64_t record, const unsigned char *buf, size_t len,
                   uint64_t *version);

/* zeta(n, theta) = sum over i = 1..n of i^-theta, the zipfian normaliser
 * (exact sum up to 4096 terms, Euler-Maclaurin tail beyond). */
double wl_zeta(uint64_t n, double theta);

#ifdef __cplusplus
}
#endif

#endif
