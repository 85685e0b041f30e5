/*
 * cfgfile.h -- the parser of the benchmark driver's config file.
 *
 * Campaign files are the same dialect: experiments/campaign/cfgfile.py is
 * a port of this parser (tests/scripts/test_cfg_dialect.sh compares the
 * two), and docs/formats.md describes the format for users.
 *
 * Reads the text line by line and hands each `name = value` entry to a
 * callback, which knows the names and may refuse an entry; the parser
 * knows only the syntax.  Errors stop the parse and read `FILE:LINE:
 * problem`.  No allocation survives a call; nothing here aborts.
 *
 * The format:
 *
 *     # A whole-line comment; ';' starts one too.
 *     records   = 100000          # trailing comment
 *     workload  = b
 *     [store]                     # a section: names below become store.NAME
 *     replicas  = 2
 *     [inject]
 *     failures  = "signal=KILL; target=random:1; when=ops:5000"
 *
 *  - One entry per line: NAME = VALUE.  Blanks around both are dropped.  The
 *    first '=' splits; the value may contain more.
 *  - NAME and section names: letters, digits, '_', '.', '-'; not empty.
 *  - '#' or ';' starts a comment anywhere outside double quotes.  A value
 *    that must contain '#', ';', leading or trailing blanks, or '"' is
 *    written in double quotes; inside them \" is a quote and \\ a
 *    backslash (any other backslash is kept as is).  Only blanks and a
 *    comment may follow the closing quote.  An unquoted value may not
 *    contain '"'.  An empty value (NAME =) is passed on as "".
 *  - [SECTION] on its own line (a comment may follow) prefixes the names
 *    after it with "SECTION."; it lasts until the next header.
 *  - Lines end with LF or CRLF; at most CF_LINE_MAX - 1 characters each;
 *    no NUL bytes.  A UTF-8 byte order mark at the start is skipped.
 *  - Repeated names are all passed on, in order (the callback decides;
 *    the driver lets the last one win).
 * Errors, each with the file name and line number: a line without '=', an
 * empty name, a bad character in a name, an unterminated quote, text after
 * a closing quote, a quote in an unquoted value, a bad section header, an
 * over-long line, a NUL byte; and whatever the callback refuses.
 */
#ifndef CF_CFGFILE_H
#define CF_CFGFILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CF_LINE_MAX 4096     /* longest line, newline excluded, plus one */
#define CF_NAME_MAX 128      /* longest SECTION.NAME, plus one */
#define CF_FILE_MAX (16u << 20)  /* files must be smaller than this, bytes */

/*
 * Called once per entry, in file order.  name is "NAME" or "SECTION.NAME",
 * value the unquoted text; both are valid during the call only.  line is
 * 1-based.  Return 0 to accept, non-zero to stop the parse: write the
 * reason to err (errlen bytes, empty on entry); the parser reports it as
 * "FILE:LINE: reason" (or "FILE:LINE: NAME: refused" if err is left empty).
 */
typedef int (*cf_callback)(void *ctx, const char *name, const char *value, int line,
                           char *err, size_t errlen);

/* Parse the file at path.  Returns 0, or -1 with "PATH:LINE: problem" (or
 * "PATH: cannot open: reason", "PATH: cannot read: reason") in err, after
 * the callback has seen every entry before the bad line. */
int cf_parse_file(const char *path, cf_callback cb, void *ctx, char *err, size_t errlen);

/* Parse the NUL-terminated text; source names it in messages ("<string>"
 * if NULL).  Returns 0 or -1 as cf_parse_file. */
int cf_parse_string(const char *text, const char *source, cf_callback cb, void *ctx, char *err,
                    size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
