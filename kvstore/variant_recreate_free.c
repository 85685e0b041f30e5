/*
 * variant_recreate_free.c -- free the old windows first, then recreate.
 *
 * The tidy way, and the one the standard would like: MPI_Win_free the old
 * window, then allocate a new one and copy the table in.  MPI_Win_free is
 * collective over a group that includes the dead rank, so in Open MPI
 * 5.0.7 it may block forever; nothing inside the process can bound it.
 * The harness's deadline does, and counts such runs as hangs: measuring
 * that rate is this variant's purpose.  Recovery saves the local table
 * before the free (a window made by MPI_Win_allocate takes its memory
 * with it) and makes sure every survivor enters the free (kvr_windows).
 */
#include "kv_internal.h"

const kvr_variant_ops kvr_recreate_free = {.detects = true, .retire = KVR_FREE_FIRST, .make = kvr_make_copy};
