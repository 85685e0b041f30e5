/*
 * test_cfgfile.c -- the driver's config file parser, experiments/driver/cfgfile.c.
 *
 * Pass rules:
 *  - a good file (comments whole-line and trailing with '#' and ';', blank
 *    lines, CRLF, a byte order mark, sections, quoted values with '#', ';',
 *    '=', blanks and escapes, empty values, no final newline) gives exactly
 *    the expected (name, value, line) entries, from a string and from a file;
 *  - each malformed line gives -1 and a message "SOURCE:LINE: problem" with
 *    the right line number and words naming the problem, and the entries
 *    before it have been delivered;
 *  - a callback's refusal is reported as "SOURCE:LINE: its message";
 *  - a missing file gives "PATH: cannot open: ...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfgfile.h"

/* What the callback saw. */
typedef struct seen {
    int n;
    char names[32][CF_NAME_MAX];
    char values[32][256];
    int lines[32];
    const char *refuse;   /* refuse this name, with a message */
} seen;

static int collect(void *ctx, const char *name, const char *value, int line, char *err,
                   size_t errlen) {
    seen *s = ctx;
    if (s->refuse && strcmp(name, s->refuse) == 0) {
        if (strcmp(value, "silent") != 0)
            snprintf(err, errlen, "%s: '%s' is not allowed", name, value);
        return 1;
    }
    assert_true(s->n < 32);
    snprintf(s->names[s->n], CF_NAME_MAX, "%s", name);
    snprintf(s->values[s->n], 256, "%s", value);
    s->lines[s->n++] = line;
    return 0;
}

static const char good[] =
    "\xEF\xBB\xBF# whole-line comment\n"
    "; another whole-line comment\n"
    "\n"
    "   \t\n"
    "records = 100000   # trailing comment\n"
    "workload=b;trailing\n"
    "  name-ok.x_1   =   some value with spaces   \r\n"
    "empty =\n"
    "equals = a=b=c\n"
    "[store]   # section comment\n"
    "replicas = 2\n"
    "[ inject ]\n"
    "failures = \"signal=KILL; target=random:1 # not a comment\"  ; comment\n"
    "quoted = \"  blanks kept  \"\n"
    "escapes = \"say \\\"hi\\\" \\\\ \\n\"\n"
    "empty_quoted = \"\"\n"
    "last = no newline";

static void check_good(const seen *s) {
    static const char *const names[] = {
        "records", "workload", "name-ok.x_1", "empty", "equals", "store.replicas",
        "inject.failures", "inject.quoted", "inject.escapes", "inject.empty_quoted", "inject.last"};
    static const char *const values[] = {
        "100000", "b", "some value with spaces", "", "a=b=c", "2",
        "signal=KILL; target=random:1 # not a comment", "  blanks kept  ", "say \"hi\" \\ \\n",
        "", "no newline"};
    static const int lines[] = {5, 6, 7, 8, 9, 11, 13, 14, 15, 16, 17};
    assert_int_equal(s->n, 11);
    for (int i = 0; i < 11; i++) {
        assert_string_equal(s->names[i], names[i]);
        assert_string_equal(s->values[i], values[i]);
        assert_int_equal(s->lines[i], lines[i]);
    }
}

static void test_good_string(void **st) {
    (void)st;
    seen s = {0};
    char err[256] = "x";
    assert_int_equal(cf_parse_string(good, "good.cfg", collect, &s, err, sizeof err), 0);
    assert_string_equal(err, "");
    check_good(&s);
}

static void test_good_file(void **st) {
    (void)st;
    char path[] = "/tmp/test_cfgfile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, good, sizeof good - 1), (ssize_t)(sizeof good - 1));
    close(fd);
    seen s = {0};
    char err[256];
    int rc = cf_parse_file(path, collect, &s, err, sizeof err);
    unlink(path);
    assert_int_equal(rc, 0);
    check_good(&s);
}

/* Parse text; expect failure with "t.cfg:LINE: " then `words`, and `before` entries seen. */
static void expect_error(const char *text, int line, const char *words, int before) {
    seen s = {0};
    s.refuse = "refused";
    char err[512] = "", prefix[32];
    assert_int_equal(cf_parse_string(text, "t.cfg", collect, &s, err, sizeof err), -1);
    snprintf(prefix, sizeof prefix, "t.cfg:%d: ", line);
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, words))
        fail_msg("for %s: message '%s', expected '%s...%s'", text, err, prefix, words);
    assert_int_equal(s.n, before);
}

static void test_malformed(void **st) {
    (void)st;
    expect_error("a = 1\njust words\n", 2, "no '=' in the line", 1);
    expect_error("a = 1\n# c\n = 3\n", 3, "empty name before '='", 1);
    expect_error("two words = 1\n", 1, "bad character ' ' in name 'two words'", 0);
    expect_error("a/b = 1\n", 1, "bad character '/' in name", 0);
    expect_error("\"a\" = 1\n", 1, "bad character '\"' in a name", 0);
    expect_error("x = 1 # = 2\ny # = 2\n", 2, "no '=' in the line", 1);
    expect_error("a = 1\nb = \"open\n", 2, "unterminated quoted value", 1);
    expect_error("b = \"esc\\\"\n", 1, "unterminated quoted value", 0);
    expect_error("b = \"v\" extra\n", 1, "text after the closing quote: 'extra'", 0);
    expect_error("b = half\"quoted\"\n", 1, "'\"' inside an unquoted value", 0);
    expect_error("[sec\n", 1, "bad section header: no closing ']'", 0);
    expect_error("a = 1\n\n[]\n", 3, "bad section header: empty name", 1);
    expect_error("[a b]\n", 1, "bad section header: ' ' is not allowed", 0);
    expect_error("[a] x\n", 1, "bad section header: text after ']'", 0);
    expect_error("a = 1\nrefused = 7\n", 2, "refused: '7' is not allowed", 1);
    expect_error("refused = silent\n", 1, "refused: refused", 0);
}

static void test_limits(void **st) {
    (void)st;
    char *text = malloc(CF_LINE_MAX + 64);
    strcpy(text, "a = 1\nb = ");
    memset(text + 10, 'v', CF_LINE_MAX);
    text[6 + CF_LINE_MAX] = 0;   /* line 2: "b = " and 4092 v, 4096 characters */
    expect_error(text, 2, "line longer than 4095 characters", 1);
    text[5 + CF_LINE_MAX] = 0;   /* 4095 characters: fine */
    seen s = {0};
    char err[256];
    assert_int_equal(cf_parse_string(text, "t.cfg", collect, &s, err, sizeof err), 0);
    free(text);
    char name[CF_NAME_MAX + 16];
    memset(name, 'n', sizeof name);
    strcpy(name + CF_NAME_MAX, " = 1\n");
    expect_error(name, 1, "longer than 127 characters", 0);
    static const char nul[] = "a = 1\nb = x\0y\n";
    char path[] = "/tmp/test_cfgfile_XXXXXX";
    int fd = mkstemp(path);
    assert_int_equal(write(fd, nul, sizeof nul - 1), (ssize_t)(sizeof nul - 1));
    close(fd);
    memset(&s, 0, sizeof s);
    assert_int_equal(cf_parse_file(path, collect, &s, err, sizeof err), -1);
    unlink(path);
    char want_msg[128];
    snprintf(want_msg, sizeof want_msg, "%s:2: NUL byte in the line", path);
    assert_string_equal(err, want_msg);
    assert_int_equal(cf_parse_file("/nonexistent/x.cfg", collect, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.cfg: cannot open: "));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_string), cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_malformed),   cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests_name("cfgfile", tests, NULL, NULL);
}
