"""cfgfile.py -- the config-file dialect of experiments/driver/cfgfile.c, in Python.

Campaign files and the driver's config files are one dialect (described in
docs/formats.md): `[SECTION]` headers, `NAME = VALUE` lines, '#' and ';'
comments outside double quotes, \\" and \\\\ inside them.  This is a line by
line port of cfgfile.c, with the same limits and the same messages
("SOURCE:LINE: problem"); tests/scripts/test_cfg_dialect.sh feeds both
parsers the same files and compares what they accept, what they make of
it, and where they stop.  One addition: the text must be UTF-8 (the C
parser takes any bytes but NUL), since campaign values end up in JSON.

parse(data, source, on_section) returns [(name, value, line)], name being
"SECTION.NAME" below a header (entries() yields them one at a time);
on_section(name, line) is called for each header and may raise.  Problems
raise ConfigError.
"""

LINE_MAX = 4096          # CF_LINE_MAX: longest line, newline excluded, plus one
NAME_MAX = 128           # CF_NAME_MAX: longest SECTION.NAME, plus one
FILE_MAX = 16 << 20      # CF_FILE_MAX: files must be smaller than this, bytes
BLANKS = " \t\n\v\f\r"   # C's isspace in the C locale
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class ConfigError(Exception):
    pass


class _Parser:
    def __init__(self, source, on_section):
        self.src, self.on_section, self.line, self.section = source, on_section, 0, ""

    def fail(self, msg):
        where = f"{self.src}:{self.line}" if self.line else self.src
        raise ConfigError(f"{where}: {msg}")

    def section_header(self, p):
        close = p.find("]")
        if close < 0:
            self.fail("bad section header: no closing ']'")
        name = p[1:close].strip(BLANKS)
        if not name:
            self.fail("bad section header: empty name")
        bad = next((c for c in name if c not in NAME_CHARS), None)
        if bad is not None:
            self.fail(f"bad section header: '{bad}' is not allowed in a name")
        rest = p[close + 1:].lstrip(BLANKS)
        if rest and rest[0] not in "#;":
            self.fail("bad section header: text after ']'")
        if len(name.encode()) >= NAME_MAX - 1:
            self.fail(f"bad section header: name longer than {NAME_MAX - 2} characters")
        self.section = name
        if self.on_section:
            self.on_section(name, self.line)

    def value(self, v):
        v = v.lstrip(BLANKS)
        if not v.startswith('"'):
            k = next((i for i, c in enumerate(v) if c in '#;"'), len(v))
            if k < len(v) and v[k] == '"':
                self.fail("'\"' inside an unquoted value (quote the whole value)")
            return v[:k].strip(BLANKS)
        out, i = [], 1
        while True:
            if i >= len(v):
                self.fail("unterminated quoted value (no closing '\"')")
            if v[i] == '"':
                break
            if v[i] == "\\" and i + 1 < len(v) and v[i + 1] in '"\\':
                i += 1
            out.append(v[i])
            i += 1
        rest = v[i + 1:].lstrip(BLANKS)
        if rest and rest[0] not in "#;":
            self.fail(f"text after the closing quote: '{rest}'")
        return "".join(out)

    def entry(self, p):
        k = next((i for i, c in enumerate(p) if c in '=#;"'), len(p))
        if k < len(p) and p[k] == '"':
            self.fail("bad character '\"' in a name")
        if k == len(p) or p[k] != "=":
            self.fail("no '=' in the line (expected NAME = VALUE)")
        name = p[:k].strip(BLANKS)
        if not name:
            self.fail("empty name before '='")
        bad = next((c for c in name if c not in NAME_CHARS), None)
        if bad is not None:
            self.fail(f"bad character '{bad}' in name '{name}'")
        full = f"{self.section}.{name}" if self.section else name
        if len(full.encode()) >= NAME_MAX:
            self.fail(f"name '{name}' longer than {NAME_MAX - 1} characters")
        return full, self.value(p[k + 1:])

    def one_line(self, s):
        if s.endswith("\r"):
            s = s[:-1]
        if "\0" in s:
            self.fail("NUL byte in the line")
        if len(s.encode()) >= LINE_MAX:
            self.fail(f"line longer than {LINE_MAX - 1} characters")
        p = s.lstrip(BLANKS)
        if not p or p[0] in "#;":
            return None
        if p[0] == "[":
            self.section_header(p)
            return None
        return self.entry(p)


def entries(data, source="<string>", on_section=None):
    """The entries of data (bytes or str), one (name, value, line) at a
    time, as cfgfile.c hands them to its callback."""
    ps = _Parser(source, on_section)
    if isinstance(data, bytes):
        if len(data) >= FILE_MAX:
            ps.fail("cannot read: File too large")
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            ps.fail(f"not UTF-8 text (byte {e.start})")
    if data.startswith("\ufeff"):  # a UTF-8 byte order mark
        data = data[1:]
    lines = data.split("\n")
    if lines[-1] == "":  # the text's last newline ends a line and starts none
        lines.pop()
    for s in lines:
        ps.line += 1
        got = ps.one_line(s)
        if got:
            yield got[0], got[1], ps.line


def parse(data, source="<string>", on_section=None):
    """Every entry of data as [(name, value, line)]."""
    return list(entries(data, source, on_section))


def read(path):
    """The bytes of the file at path (at most FILE_MAX, which parse refuses)."""
    try:
        with open(path, "rb") as f:
            return f.read(FILE_MAX)
    except OSError as e:
        raise ConfigError(f"{path}: cannot open: {e.strerror}")


def parse_file(path, on_section=None):
    return parse(read(path), path, on_section)
