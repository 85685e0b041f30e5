/*
 * cfgfile.c -- the config file parser of cfgfile.h.
 *
 * The whole file is read into memory (at most CF_FILE_MAX bytes) and cut
 * into lines; each line is copied into a fixed buffer of CF_LINE_MAX bytes
 * (hence the line limit: no allocation per line) and classified as blank or
 * comment, section header or entry.  An entry's name is checked here, its
 * value unquoted, and both handed to the callback.  The first problem ends
 * the parse with "SOURCE:LINE: problem".
 */
#include "cfgfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *src;
    cf_callback cb;
    void *ctx;
    char *err;
    size_t errlen;
    int line;
    char section[CF_NAME_MAX];
} parser;

/* Write "SOURCE:LINE: message" (or "SOURCE: message" before the first
 * line) to the caller's err and return -1. */
__attribute__((format(printf, 2, 3)))
static int perr(parser *ps, const char *fmt, ...) {
    if (!ps->err || !ps->errlen) return -1;
    int n = ps->line ? snprintf(ps->err, ps->errlen, "%s:%d: ", ps->src, ps->line)
                     : snprintf(ps->err, ps->errlen, "%s: ", ps->src);
    if (n >= 0 && (size_t)n < ps->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int is_comment(char c) { return c == '#' || c == ';'; }

static int is_name_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

static char *skip_blanks(char *s) {
    while (isspace((unsigned char)*s)) s++;
    return s;
}

/* Drop blanks at both ends, in place. */
static char *trim(char *s) {
    s = skip_blanks(s);
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

/* The first character of s that may not be in a name, or 0. */
static char bad_name_char(const char *s) {
    for (; *s; s++)
        if (!is_name_char(*s)) return *s;
    return 0;
}

static int parse_section(parser *ps, char *p) {
    char *close = strchr(p, ']');
    if (!close) return perr(ps, "bad section header: no closing ']'");
    *close = 0;
    char *name = trim(p + 1), c;
    if (!*name) return perr(ps, "bad section header: empty name");
    if ((c = bad_name_char(name)))
        return perr(ps, "bad section header: '%c' is not allowed in a name", c);
    char *rest = skip_blanks(close + 1);
    if (*rest && !is_comment(*rest)) return perr(ps, "bad section header: text after ']'");
    if (strlen(name) >= CF_NAME_MAX - 1)
        return perr(ps, "bad section header: name longer than %d characters", CF_NAME_MAX - 2);
    strcpy(ps->section, name);
    return 0;
}

/* Unquote the value starting at v into out (CF_LINE_MAX bytes). */
static int parse_value(parser *ps, char *v, char *out) {
    v = skip_blanks(v);
    if (*v != '"') {
        size_t k = strcspn(v, "#;\"");
        if (v[k] == '"') return perr(ps, "'\"' inside an unquoted value (quote the whole value)");
        memcpy(out, v, k);
        out[k] = 0;
        memmove(out, trim(out), strlen(trim(out)) + 1);
        return 0;
    }
    for (v++; *v != '"'; v++) {
        if (!*v) return perr(ps, "unterminated quoted value (no closing '\"')");
        if (*v == '\\' && (v[1] == '"' || v[1] == '\\')) v++;
        *out++ = *v;
    }
    *out = 0;
    char *rest = skip_blanks(v + 1);
    if (*rest && !is_comment(*rest))
        return perr(ps, "text after the closing quote: '%s'", rest);
    return 0;
}

/* Hand one entry to the callback; its refusal becomes the parse error. */
static int deliver(parser *ps, const char *name, const char *value) {
    char msg[512] = "";
    if (!ps->cb || ps->cb(ps->ctx, name, value, ps->line, msg, sizeof msg) == 0) return 0;
    return msg[0] ? perr(ps, "%s", msg) : perr(ps, "%s: refused", name);
}

static int parse_entry(parser *ps, char *p) {
    size_t k = strcspn(p, "=#;\"");
    if (p[k] == '"') return perr(ps, "bad character '\"' in a name");
    if (p[k] != '=') return perr(ps, "no '=' in the line (expected NAME = VALUE)");
    p[k] = 0;
    char *name = trim(p), c, full[CF_NAME_MAX], value[CF_LINE_MAX];
    if (!*name) return perr(ps, "empty name before '='");
    if ((c = bad_name_char(name))) return perr(ps, "bad character '%c' in name '%s'", c, name);
    int n = ps->section[0] ? snprintf(full, sizeof full, "%s.%s", ps->section, name)
                           : snprintf(full, sizeof full, "%s", name);
    if (n < 0 || (size_t)n >= sizeof full)
        return perr(ps, "name '%s' longer than %d characters", name, CF_NAME_MAX - 1);
    if (parse_value(ps, p + k + 1, value)) return -1;
    return deliver(ps, full, value);
}

/* One line of n bytes (no newline). */
static int parse_line(parser *ps, const char *s, size_t n) {
    if (n && s[n - 1] == '\r') n--;
    if (memchr(s, 0, n)) return perr(ps, "NUL byte in the line");
    if (n >= CF_LINE_MAX) return perr(ps, "line longer than %d characters", CF_LINE_MAX - 1);
    char buf[CF_LINE_MAX];
    memcpy(buf, s, n);
    buf[n] = 0;
    char *p = skip_blanks(buf);
    if (!*p || is_comment(*p)) return 0;
    return *p == '[' ? parse_section(ps, p) : parse_entry(ps, p);
}

static int parse_buf(parser *ps, const char *text, size_t len) {
    size_t at = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        ps->line++;
        if (parse_line(ps, text + at, n)) return -1;
        at += n + 1;
    }
    return 0;
}

static void parser_init(parser *ps, const char *src, cf_callback cb, void *ctx, char *err,
                        size_t errlen) {
    memset(ps, 0, sizeof *ps);
    ps->src = src;
    ps->cb = cb;
    ps->ctx = ctx;
    ps->err = err;
    ps->errlen = errlen;
    if (err && errlen) err[0] = 0;
}

int cf_parse_string(const char *text, const char *source, cf_callback cb, void *ctx, char *err,
                    size_t errlen) {
    parser ps;
    parser_init(&ps, source ? source : "<string>", cb, ctx, err, errlen);
    return parse_buf(&ps, text, strlen(text));
}

/* Read all of f into a malloc'd buffer; -1 (errno set) on error or size. */
static int slurp(FILE *f, char **out, size_t *len) {
    size_t cap = 0, n = 0, got;
    char *buf = NULL;
    do {
        if (n == cap) {
            int big = cap >= CF_FILE_MAX;
            char *nb = big ? NULL : realloc(buf, cap = cap ? 2 * cap : 65536);
            if (!nb) {
                free(buf);
                errno = big ? EFBIG : ENOMEM;
                return -1;
            }
            buf = nb;
        }
        n += got = fread(buf + n, 1, cap - n, f);
    } while (got > 0);
    if (ferror(f)) {
        free(buf);
        return -1;
    }
    *out = buf;
    *len = n;
    return 0;
}

int cf_parse_file(const char *path, cf_callback cb, void *ctx, char *err, size_t errlen) {
    parser ps;
    parser_init(&ps, path, cb, ctx, err, errlen);
    FILE *f = fopen(path, "rb");
    char *text;
    size_t len;
    if (!f) return perr(&ps, "cannot open: %s", strerror(errno));
    int bad = slurp(f, &text, &len);
    int saved = errno;
    fclose(f);
    if (bad) return perr(&ps, "cannot read: %s", strerror(saved));
    int rc = parse_buf(&ps, text, len);
    free(text);
    return rc;
}
