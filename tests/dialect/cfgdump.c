/*
 * cfgdump.c -- what experiments/driver/cfgfile.c makes of a file, in a
 * form cfgdump.py prints for the Python port (experiments/campaign/
 * cfgfile.py): one line per entry, "LINE<TAB>NAME<TAB>VALUE" with '\' and
 * TAB escaped as \\ and \t, then "error: MESSAGE" if the parse stopped.
 * Each file's lines follow a line "== FILE".  tests/scripts/
 * test_cfg_dialect.sh compares the two.
 * Usage: cfgdump FILE...
 */
#include <stdio.h>

#include "cfgfile.h"

static void put_escaped(const char *s) {
    for (; *s; s++) {
        if (*s == '\\') fputs("\\\\", stdout);
        else if (*s == '\t') fputs("\\t", stdout);
        else putchar(*s);
    }
}

static int show(void *ctx, const char *name, const char *value, int line, char *err, size_t len) {
    (void)ctx;
    (void)err;
    (void)len;
    printf("%d\t", line);
    put_escaped(name);
    putchar('\t');
    put_escaped(value);
    putchar('\n');
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: cfgdump FILE...\n");
        return 64;
    }
    for (int i = 1; i < argc; i++) {
        char err[1024];
        printf("== %s\n", argv[i]);
        if (cf_parse_file(argv[i], show, NULL, err, sizeof err)) printf("error: %s\n", err);
    }
    return 0;
}
