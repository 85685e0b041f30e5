/*
 * provenance.c -- which source made this run, read when it runs.
 *
 * A binary keeps running after HEAD moves or the tree is edited, so the
 * revision compiled into it (KV_GIT_REVISION) may not be the source's.
 * At the start, world rank 0 runs scripts/provenance of the checkout the
 * binary was built in (KV_SOURCE_DIR) and keeps its revision line (with
 * "-dirty" when tracked files outside results/ differ from it) and the Open MPI patches,
 * then broadcasts both, so whichever rank writes meta.json has them.  A
 * build revision that differs from the source's is said on stderr.
 */
#include <string.h>

#include "driver.h"
#include "revision.h"  /* KV_GIT_REVISION, KV_SOURCE_DIR: written by the Makefile */

static drv_provenance prov;

/* The value of "KEY: value" in text, or "unknown". */
static void field(const char *text, const char *key, char *out, size_t n) {
    const char *p = strstr(text, key);
    snprintf(out, n, "unknown");
    if (!p) return;
    p += strlen(key);
    size_t len = strcspn(p, "\n");
    if (len) snprintf(out, n, "%.*s", (int)len, p);
}

const drv_provenance *drv_provenance_read(void) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        char text[4096] = "", line[512];
        FILE *p = popen("'" KV_SOURCE_DIR "/scripts/provenance' kv_driver 2>/dev/null", "r");
        size_t used = 0;
        while (p && fgets(line, sizeof line, p) && used + strlen(line) < sizeof text) {
            strcpy(text + used, line);
            used += strlen(line);
        }
        if (p) pclose(p);
        field(text, "revision: ", prov.revision, sizeof prov.revision);
        field(text, "mpi patches: ", prov.patches, sizeof prov.patches);
        snprintf(prov.built, sizeof prov.built, "%s", KV_GIT_REVISION);
        size_t bl = strlen(prov.built);
        if (strncmp(prov.revision, prov.built, bl) || (prov.revision[bl] && prov.revision[bl] != '-'))
            fprintf(stderr, "kv_driver: warning: built from revision %s, the source is at %s: "
                            "run make\n", prov.built, prov.revision);
    }
    MPI_Bcast(&prov, (int)sizeof prov, MPI_BYTE, 0, MPI_COMM_WORLD);
    return &prov;
}
