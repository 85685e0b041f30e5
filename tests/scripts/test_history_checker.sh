#!/usr/bin/env bash
# test_history_checker.sh -- the history checker tells right from wrong.
# Pass rules, on hand-written logs of two ranks: concurrent operations in
# a legal order pass; a read of an overwritten value after the write
# returned fails; a final read that brings back an acknowledged delete is
# reported as lost; an interrupted put may or may not have happened (both
# pass); a put by a rank that died mid-call may take effect later; a read
# of a value nobody wrote fails; a nonzero audit line fails; no audit line
# (no survivor finished) fails; with --evicted, a rank reported failed
# while alive may answer a question asked before the survivors served
# again, however late, but none asked after.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK=$ROOT/tests/history/check.py
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
fails=0
case_() {  # name expect(pass|fail|lost) ; logs on stdin as "RANK|line"
  local name=$1 expect=$2 d=$W/$1
  mkdir -p "$d"
  while IFS='|' read -r rank line; do echo "$line" >> "$d/ops.$rank"; done
  out=$(python3 "$CHECK" "$d" ${ARGS:-} 2>&1); rc=$?
  got=pass; [ $rc -ne 0 ] && got=fail
  [ $rc -ne 0 ] && grep -q '^lost' <<<"$out" && got=lost
  if [ "$got" = "$expect" ]; then echo "ok   $name ($got)"
  else echo "FAIL $name: expected $expect, got $got"; echo "$out" | sed 's/^/    /'; fails=$((fails + 1)); fi
}
case_ concurrent-legal pass <<'L'
0|C 0 100 k put a
1|C 0 110 k get -
1|R 0 150 ok a
0|R 0 200 ok -
0|C 1 300 k del -
0|R 1 400 ok -
1|C 1 350 k get -
1|R 1 360 notfound -
0|P final
0|C 2 500 k get -
0|R 2 510 notfound -
0|A 0
1|A 0
L
# rank 1 reported failed while alive; survivor 0 served again at 500
ARGS="--evicted 1" case_ evicted-earlier-question pass <<'L'
0|C 0 100 k put a
0|R 0 200 ok -
1|C 0 400 k get -
1|R 0 600 ok a
0|D 1 450 500
0|A 0
L
ARGS="--evicted 1" case_ evicted-later-question fail <<'L'
0|C 0 100 k put a
0|R 0 200 ok -
1|C 0 550 k get -
1|R 0 600 ok a
0|D 1 450 500
0|A 0
L
case_ stale-read fail <<'L'
0|C 0 100 k put a
0|R 0 200 ok -
0|C 1 300 k put b
0|R 1 400 ok -
1|C 0 500 k get -
1|R 0 600 ok a
0|A 0
L
case_ lost-delete lost <<'L'
0|C 0 100 k put a
0|R 0 200 ok -
0|C 1 300 k del -
0|R 1 400 ok -
0|P final
0|C 2 500 k get -
0|R 2 600 ok a
0|A 0
L
case_ interrupted-took-effect pass <<'L'
0|C 0 100 k put a
0|R 0 200 interrupted -
1|C 0 300 k get -
1|R 0 400 ok a
0|A 0
L
case_ interrupted-did-not pass <<'L'
0|C 0 100 k put a
0|R 0 200 interrupted -
1|C 0 300 k get -
1|R 0 400 notfound -
0|A 0
L
case_ dead-writer-later pass <<'L'
1|C 0 100 k put a
0|C 0 300 k get -
0|R 0 400 notfound -
0|C 1 500 k get -
0|R 1 600 ok a
0|A 0
L
case_ value-never-written fail <<'L'
0|C 0 100 k put a
0|R 0 200 ok -
1|C 0 300 k get -
1|R 0 400 ok zzz
0|A 0
L
case_ delete-of-absent-acknowledged pass <<'L'
0|C 0 100 k del -
0|R 0 200 notfound -
0|A 0
L
case_ divergent-audit fail <<'L'
0|C 0 100 k put a
0|R 0 200 ok -
0|A 3
L
case_ no-survivor-finished fail <<'L'
0|C 0 100 k put a
0|R 0 200 ok -
L
[ "$fails" -eq 0 ] || { echo "FAIL: $fails checker cases wrong"; exit 1; }
echo "PASS: the checker accepts legal histories and rejects stale reads, lost deletes and divergence"
