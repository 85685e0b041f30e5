#!/usr/bin/env bash
# bench_uct.sh -- `BENCH=uct make bench`: which of the suite's MPI cases
# work over btl/uct (InfiniBand's transport under ULFM) on the UCT
# transports this machine has, and how the others fail.
#
# With build/mpi-ucx (KV_UCX=1 make deps), every case of tests/mpi whose
# name holds store_, win_ft or ulfm_shrink runs once through tests/run.sh
# as tests/scripts/test_uct.sh runs its failure-free few (build/ucx,
# `kvrun --transport uct`, btl_uct_memory_domains=posix,tcp), each under a
# UCT_TIMEOUT (30 s) limit.  One row per case in results/bench/uct.csv:
# case, backend (allocate: osc/sm windows; create: osc/rdma over btl/uct;
# none), outcome (pass, fail, crashed, hung), and the first line of the case's log that says what went wrong
# (a signal caught inside UCX or Open MPI, an Open MPI error, or kvrun's
# verdict); uct.meta what made it.  Without build/mpi-ucx it says so,
# writes nothing and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${UCT_CSV:-$ROOT/results/bench/uct.csv}
ENV=$ROOT/build/mpi-ucx/mpi.env
[ -f "$ENV" ] || { echo "bench_uct: no build/mpi-ucx (KV_UCX=1 make deps): skipped"; exit 0; }
UHOME=$(. "$ENV" && echo "$MPI_HOME")
make -s -C "$ROOT" BUILD=build/ucx MPI_HOME="$UHOME" MPICC="$UHOME/bin/mpicc" tests > /dev/null 2>&1 ||
  { echo "bench_uct: cannot build with $UHOME"; exit 1; }
export KV_BUILD=$ROOT/build/ucx KV_MPI_ENV=$ENV KV_TRANSPORT=uct
export KV_MCA="${KV_MCA:+$KV_MCA }btl_uct_memory_domains=posix,tcp"
rm -rf "$KV_BUILD/test-logs"
load=$(cut -d' ' -f1 /proc/loadavg)
MPI_TIMEOUT=${UCT_TIMEOUT:-30} TESTS="store_ win_ft ulfm_shrink-4 ulfm_shrink-5" bash "$ROOT/tests/run.sh" > "$KV_BUILD/uct-run.log" 2>&1
python3 - "$KV_BUILD/test-logs" "$OUT.tmp" <<'PY'
import glob, os, re, sys
logs, out = sys.argv[1], sys.argv[2]
why_re = re.compile(r"Caught signal [0-9]+ \([^)]*\)|BTL is not compatible with active-message RDMA|"
                    r"UCX  ERROR .*|MPI_ERR_[A-Z_]+|errors=[0-9]+")
with open(out, "w") as f:
    f.write("case,backend,outcome,signature\n")
    for p in sorted(glob.glob(os.path.join(logs, "*.log"))):
        case = os.path.basename(p)[:-4]
        if not case.startswith(("store_", "win_ft", "ulfm_shrink")) or case.endswith("noft"):
            continue
        text = open(p, "rb").read().decode("utf-8", "replace").replace("\0", "")
        verdict = ([l for l in text.splitlines() if re.match(r"\s*kvrun: [A-Z]+ ", l) and "launch:" not in l]
                   or ["kvrun: no verdict"])[-1].strip()
        outcome = ("pass" if "FINISHED PASS" in verdict else "hung" if "HUNG" in verdict
                   else "crashed" if "CRASHED" in verdict else "fail")
        m = why_re.search(text)
        sig = "" if outcome == "pass" else (m.group(0) if m else verdict)
        sig = re.sub(r"\s+", " ", sig.split("] ")[-1]).replace(",", ";")[:120]
        backend = "allocate" if "-allocate" in case else "create" if "-create" in case else "none"
        f.write(f"{case},{backend},{outcome},{sig}\n")
PY
mv "$OUT.tmp" "$OUT"
{ "$ROOT/scripts/provenance" "UCT_TIMEOUT=${UCT_TIMEOUT:-30} BENCH=uct make bench"
  echo "mpi-ucx: $(sed -n 's/^MPI_VERSION := //p' "$ROOT/build/mpi-ucx/mpi.mk") at $UHOME, $(grep -c . <<<"$(sed -n 's/^patches=//p' "$UHOME/.kvstore-complete" | tr ' ' '\n')") patches, --with-ucx"
  echo "load before the cases: $load"; } > "${OUT%.csv}.meta"
echo "bench_uct: $(tail -1 "$KV_BUILD/uct-run.log"); $OUT"
