#!/usr/bin/env bash
# test_cfg_dialect.sh -- campaign files and driver config files are one
# dialect: the C parser (experiments/driver/cfgfile.c) and its Python port
# (experiments/campaign/cfgfile.py) read every file alike.
#
# Pass rule: over the committed campaign files, the config-file fuzz seeds,
# a list of cases at the edges of the grammar (quotes, escapes, comments,
# sections, CRLF, a byte order mark, NUL, over-long lines and names) and
# 600 mutations of all of these drawn from a fixed seed, both parsers give
# the same entries (line, name, value) and stop at the same line with the
# same message (for a file with a byte outside ASCII, the same line: C
# names a bad byte, Python the character it belongs to).  Files that are
# not UTF-8 are left out: campaign files must be UTF-8 text.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${KV_BUILD:-$ROOT/build}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
[ -x "$B/tests/dialect/cfgdump" ] || { echo "FAIL: $B/tests/dialect/cfgdump not built (make)"; exit 1; }
python3 - "$T" "$ROOT" <<'EOF' || { echo "FAIL: could not write the cases"; exit 1; }
import glob, os, random, sys
out, root = sys.argv[1], sys.argv[2]
seeds = [open(p, "rb").read() for p in sorted(glob.glob(f"{root}/experiments/campaign/campaigns/*.campaign")
                                              + glob.glob(f"{root}/tests/fuzz/corpus/fuzz_cfgfile/*")
                                              + glob.glob(f"{root}/tests/fixtures/*.campaign"))]
edges = [b"a = 1\n", b"a=1", b"  a  =  b c  \n", b"a = \"x # y ; z\"\n", b"a = \"q\\\"q\\\\q\\nq\"\n",
         b"a = \"open\n", b"a = \"x\" y\n", b"a = \"x\" # c\n", b"a = x\"y\n", b"a\n", b"= 1\n", b"a b = 1\n",
         b"[s]\na = 1\n[t] # c\nb = 2\n", b"[s\n", b"[]\n", b"[s] x\n", b"[s t]\n", b"a = 1\r\nb = 2\r\n",
         b"\xef\xbb\xbfa = 1\n", b"a = 1\x00\n", b"a = " + b"x" * 5000 + b"\n", b"n" * 200 + b" = 1\n",
         b"[" + b"s" * 130 + b"]\n", b"[s]\n" + b"n" * 124 + b" = 1\n", b"; c\n# c\n   \n", b"a =\n",
         b"a = ;\n", b"a = \"\"\n", b"a\"b = 1\n", b"a = 1 = 2\n", b"\xc3\xa9 = 1\n", b"a = \xc3\xa9\n",
         b"a = \t1\t\n", b"\n\n\na = 1", b"[a.b-c_d]\nx.y = z\n", b"a = \"tab\there\"\n"]
rng = random.Random(7)
tokens = [b"[", b"]", b"=", b"\"", b"\\", b"#", b";", b"\n", b"\r\n", b" ", b"\t", b"a", b".", b"\xc3\xa9"]
def mutate(d):
    d = bytearray(d)
    for _ in range(rng.randint(1, 6)):
        pos = rng.randrange(len(d) + 1)
        op = rng.randrange(3)
        if op == 0 and d:
            del d[pos:pos + rng.randint(1, 8)]
        elif op == 1:
            d[pos:pos] = rng.choice(tokens)
        elif d:
            d[rng.randrange(len(d))] = rng.randrange(32, 127)
    return bytes(d)
cases = seeds + edges + [mutate(rng.choice(seeds + edges)) for _ in range(600)]
for i, c in enumerate(cases):
    try:
        c.decode("utf-8")
    except UnicodeDecodeError:
        continue
    with open(f"{out}/case{i:04d}{'-ascii' if c.isascii() else ''}.conf", "wb") as f:
        f.write(c)
EOF
files=("$T"/case*.conf)
"$B/tests/dialect/cfgdump" "${files[@]}" > "$T/c.out"
PYTHONPATH=$ROOT/experiments/campaign python3 "$ROOT/tests/dialect/cfgdump.py" "${files[@]}" > "$T/py.out"
# Outside ASCII, compare an error only up to its FILE:LINE.
norm() { awk '/^== / {ascii = ($2 ~ /-ascii\.conf$/)}
              !ascii && match($0, /^error: [^:]*:[0-9]+/) {$0 = substr($0, 1, RLENGTH)} {print}' "$1"; }
if ! diff <(norm "$T/c.out") <(norm "$T/py.out") > "$T/diff"; then
  head -20 "$T/diff"
  echo "FAIL: the C and Python parsers differ (< C, > Python)"
  exit 1
fi
n=${#files[@]}; e=$(grep -c '^error: ' "$T/c.out")
echo "PASS: $n files read alike by both parsers ($e refused, $((n - e)) accepted)"
