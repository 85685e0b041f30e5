#!/usr/bin/env bash
# test_figures.sh -- every committed benchmark figure is drawn from the
# committed result files, and one command redraws them all.
#
# Pass rules: each figure of results/bench/figures/ has its PNG, PDF and
# NAME.sha256 (benchfiles.save), and `sha256sum -c` of every NAME.sha256
# in results/bench/ passes (the files are the ones it was drawn from); a
# changed file in a copy makes that check fail; analysis/bench_figures.py
# redraws, into a scratch directory, exactly the figures that are
# committed (none missing, none left over); every figure README.md and
# docs/ show exists.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/results/bench
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
names() { for f in "$1"/*.png; do basename "$f" .png; done | sort; }

committed=$(names "$B/figures")
[ -n "$committed" ] || fail "no committed figure"
for n in $committed; do
  for ext in pdf sha256; do [ -s "$B/figures/$n.$ext" ] || fail "$n.png has no $n.$ext"; done
done
(cd "$B" && sha256sum --quiet -c figures/*.sha256) >"$T/sums" 2>&1 ||
  fail "a figure is not drawn from the committed file (make bench-figures): $(head -3 "$T/sums")"

# a changed file is found
mkdir "$T/copy" && cp -r "$B/figures" "$T/copy/" && cp "$B"/*.csv "$T/copy/"
f=$(awk '{print $2; exit}' "$B/figures/$(head -1 <<<"$committed").sha256")
echo "0" >> "$T/copy/$f"
(cd "$T/copy" && sha256sum --quiet -c figures/*.sha256) >/dev/null 2>&1 && fail "a changed $f went unnoticed"

# one command redraws every committed figure, and no other
python3 "$ROOT/analysis/bench_figures.py" "$B" "$T/redrawn" >"$T/redraw.log" 2>&1 ||
  fail "bench_figures.py: $(tail -3 "$T/redraw.log")"
[ "$(names "$T/redrawn")" = "$committed" ] ||
  fail "redrawn $(names "$T/redrawn" | tr '\n' ' ')but committed $(tr '\n' ' ' <<<"$committed")"
for n in $committed; do
  cmp -s "$T/redrawn/$n.sha256" "$B/figures/$n.sha256" || fail "$n: redrawn from other files than the committed figure"
done

# the figures the documents show exist
for doc in "$ROOT/README.md" "$ROOT"/docs/*.md; do
  for img in $(grep -o '([^)]*figures/[^)]*\.png)' "$doc" | tr -d '()'); do
    [ -e "$(dirname "$doc")/$img" ] || fail "$(basename "$doc") shows $img, which does not exist"
  done
done
echo "PASS: $(wc -w <<<"$committed") figures, each drawn from the committed files; one command redraws them all"
