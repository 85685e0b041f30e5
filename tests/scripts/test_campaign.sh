#!/usr/bin/env bash
# test_campaign.sh -- campaign files: expansion, stable ids, errors, resume.
#
# Pass rules: the default campaign expands to 3 runs with the same ids on
# every expansion, and the spare run gets one more rank; every malformed
# file (unknown section, unknown setting, entry without '=', bad number,
# unterminated quote, missing name, a key in both sweep and fixed) fails
# with exit 2 and a message naming the file, the line and the problem; a
# local run of a tiny campaign finishes, and running it again skips it.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
C="python3 $ROOT/experiments/campaign/campaign.py"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
a=$($C list "$ROOT/experiments/campaign/campaigns/default.campaign") || fail "list default"
b=$($C list "$ROOT/experiments/campaign/campaigns/default.campaign")
[ "$a" = "$b" ] || fail "ids not stable"
[ "$(wc -l <<<"$a")" -eq 3 ] || fail "default campaign should expand to 3 runs"
grep -q ' spare-allocate-n9-' <<<"$a" || fail "spare run should have 8+1 ranks: $a"
bad() {  # name expected-message-part file-body
  printf '%b' "$3" > "$T/$1.campaign"
  out=$($C list "$T/$1.campaign" 2>&1); rc=$?
  [ "$rc" -eq 2 ] || fail "$1: exit $rc, wanted 2 ($out)"
  grep -q "$2" <<<"$out" || fail "$1: message '$out' lacks '$2'"
}
HEAD='[campaign]\nname = t\n'
bad section "$T/section.campaign:3: bad section header" "${HEAD}[nonsense]\n"
bad setting ":3: unknown campaign setting 'colour'" "${HEAD}colour = red\n"
bad noeq ":4: no '=' in the line" "${HEAD}[fixed]\nranks 4\n"
bad number ":4: ranks must be a positive integer" "${HEAD}[sweep]\nranks = 4, x\n"
bad quote ":4: unterminated quoted value" "${HEAD}[fixed]\ndriver.failures = \"target=ranks:1\n"
bad noname "needs a name" "[campaign]\nrepetitions = 2\n[fixed]\nranks = 2\n"
bad both "in both \\[sweep\\] and \\[fixed\\]" "${HEAD}[sweep]\nranks = 2\n[fixed]\nranks = 4\n"
bad key ":4: 'store' is not store.X" "${HEAD}[fixed]\nstore = 1\n"
printf '[campaign]\nname = tiny\ntime_limit_s = 60\n[fixed]\nranks = 2\nstore.slots_per_rank = 4096\nworkload.workload = c\nworkload.records = 1000\nworkload.operations = 20000\nworkload.value_bytes = 64\nstore.max_value = 64\n' > "$T/tiny.campaign"
KV_RESULTS=$T/res $C run "$T/tiny.campaign" > "$T/run1.log" 2>&1 || { cat "$T/run1.log"; fail "tiny campaign did not finish"; }
grep -q ',finished,' "$T/res/tiny/runs.csv" || fail "runs.csv lacks a finished run"
KV_RESULTS=$T/res $C run "$T/tiny.campaign" > "$T/run2.log" 2>&1
grep -q '1 already finished, 0 to run' "$T/run2.log" || fail "rerun did not skip: $(cat "$T/run2.log")"
echo "PASS: campaign expansion, errors and resume"
