#!/usr/bin/env bash
# test_vcluster.sh -- the test cluster (scripts/vcluster) is N real hosts,
# Open MPI and Slurm run across them, and nothing of it outlives `down`.
#
# On a cluster of its own (own state directory and bridge, so a cluster a
# user keeps up is not touched): a failed `up` leaves nothing; `up 3`; a
# second `up` says so; each host has its own hostname, address, TMPDIR and
# hosts file, no address outside 198.18.0.0/24, no route out; through the
# launch agent (kvrun --cluster) `hostname` with one rank per host prints
# the 3 hosts, and tests/mpi/mpi_hosts (gather, ring, allreduce) passes
# with 1 and with 2 ranks per host; Slurm shows 3 idle nodes and
# `sbatch -N 3` of kvrun (plain mpirun --with-ft ulfm, daemons started by
# srun) runs mpi_hosts's ranks on the 3 hosts, in an srun step; a
# hung run, through the agent and in an allocation, leaves no process on
# any host; after `down`: no namespace, link, process or mount of the
# cluster, and /etc/hosts unchanged.  Exit 0 pass, 1 fail, 77 skip (not
# root, or namespaces/Slurm not available).  Every launch is bounded.
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${KV_BUILD:-$ROOT/build}
VC=$ROOT/scripts/vcluster KVRUN=$ROOT/scripts/kvrun
T0=$SECONDS
say() { printf '[vcluster-test +%3ds] %s\n' "$((SECONDS - T0))" "$*"; }
FAILMSG=""
fail() { FAILMSG=$*; exit 1; }

why=$("$ROOT/scripts/vcluster" can) || { echo "skip: $why"; exit 77; }
[ -x "$B/tests/mpi/mpi_hosts" ] || { echo "FAIL: not built: $B/tests/mpi/mpi_hosts"; exit 1; }

export KV_CLUSTER_DIR
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-test.XXXXXX)
export KV_CLUSTER_BRIDGE=kvbrt
WORK=$KV_CLUSTER_DIR/work; mkdir -p "$WORK"; chmod 0755 "$KV_CLUSTER_DIR" "$WORK"
HOSTS_SUM=$(sha256sum </etc/hosts)
MUNGED_BEFORE=$(pgrep -x munged)
NETS=""   # the hosts' network namespaces, seen while up

# What of the cluster remains: processes, namespaces, links, mounts.
leftovers() {
  local left ns
  left=$("$VC" pids | tr '\n' ' ')
  [ -n "${left// /}" ] && echo "processes: $left"
  for ns in $NETS; do
    stat -c '%N' /proc/[0-9]*/ns/net 2>/dev/null | grep -qF "'$ns'" && echo "namespace $ns still has processes"
  done
  ip -o link show | grep -E ": (kvbrt|kvvt-)" | awk -F': ' '{print "link", $2}'
  grep -F "$KV_CLUSTER_DIR" /proc/self/mountinfo | awk '{print "mount", $5}'
  [ "$(sha256sum </etc/hosts)" = "$HOSTS_SUM" ] || echo "/etc/hosts changed"
  # munged is ours to stop unless other Slurm daemons use it (slurm/cluster.sh's rule)
  if [ -z "$MUNGED_BEFORE" ] && [ -n "$(live munged)" ] && [ -z "$(live slurmctld)$(live slurmd)" ]; then
    echo "munged $(live munged)"
  fi
}
live() {  # live processes named $1 (a daemon's zombie waits for init to reap it)
  local p   # (a process gone between pgrep and grep is not live either)
  for p in $(pgrep -x "$1"); do
    grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$p/status" 2>/dev/null && printf '%s ' "$p"
  done
}
cleanup() {
  local rc=$? left
  trap - EXIT
  say "vcluster down"
  "$VC" down || { [ "$rc" -eq 0 ] && { rc=1; FAILMSG="vcluster down failed"; }; }
  left=$(leftovers)
  if [ -n "$left" ]; then
    [ "$rc" -eq 0 ] && rc=1
    FAILMSG="${FAILMSG:+$FAILMSG; }left after down: $(tr '\n' ';' <<<"$left")"
  fi
  [ "$rc" -eq 0 ] && rm -rf "$KV_CLUSTER_DIR"   # kept on failure: the logs
  if [ "$rc" -eq 0 ]; then say "PASS: 3 hosts, MPI through the agent and through Slurm, nothing left"
  else say "FAIL: ${FAILMSG:-exit $rc} (state and logs: $KV_CLUSTER_DIR)"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'FAILMSG="interrupted"; exit 1' INT TERM

# ---------------------------------------------------------------- failure half-way
# slurmctld cannot bind port 0: up fails after the hosts and munged started.
say "an up that fails half-way (Slurm cannot start)"
if KV_SLURM_PORT=0 KV_SLURM_TIMEOUT=3 timeout 120 "$VC" up 2 >"$WORK/badup.log" 2>&1; then
  fail "up with an unusable Slurm port succeeded"
fi
left=$(leftovers); [ -z "$left" ] || fail "a failed up left: $left"
say "it failed and left nothing ($(grep -c 'tearing down' "$WORK/badup.log") teardown)"

# ---------------------------------------------------------------- up
say "vcluster up 3"
timeout 180 "$VC" up 3 || fail "vcluster up 3 failed"
timeout 60 "$VC" up 3 2>&1 | grep -q 'already up' || fail "a second up does not say 'already up'"
"$VC" status >/dev/null || fail "status after up is not 0"
i=0
for h in kvnode1 kvnode2 kvnode3; do
  i=$((i + 1))
  [ "$("$VC" exec "$h" hostname)" = "$h" ] || fail "$h: hostname is $("$VC" exec "$h" hostname)"
  addrs=$("$VC" exec "$i" ip -4 -o addr show | awk '{print $4}' | sort | tr '\n' ' ')
  [ "$addrs" = "127.0.0.1/8 198.18.0.$i/24 " ] || fail "$h: IPv4 addresses '$addrs'"
  [ -z "$("$VC" exec "$h" ip -6 -o addr show)" ] || fail "$h has IPv6 addresses"
  [ "$("$VC" exec "$h" ip route show default)" = "" ] || fail "$h has a default route"
  [ "$("$VC" exec "$h" getent hosts kvnode3 | awk '{print $1}')" = 198.18.0.3 ] || fail "$h does not resolve kvnode3"
  tmp=$("$VC" exec "$h" sh -c 'echo $TMPDIR')
  [[ $tmp == "$KV_CLUSTER_DIR/node/$h/tmp" ]] || fail "$h: TMPDIR $tmp"
  NETS+="$("$VC" exec "$h" readlink /proc/self/ns/net) "
done
[ "$(tr ' ' '\n' <<<"$NETS" | sort -u | grep -c .)" -eq 3 ] || fail "the hosts do not have 3 network namespaces: $NETS"
getent hosts kvnode1 >/dev/null && fail "the machine itself resolves kvnode1 (its /etc/hosts was touched)"
say "3 hosts: own hostname, address 198.18.0.1-3, no IPv6, no default route, own TMPDIR, own hosts file"

# ---------------------------------------------------------------- MPI through the agent
timeout 120 "$KVRUN" --cluster --ppn 1 --no-verdict --timeout 60 -- hostname >"$WORK/hostname.log" 2>&1 ||
  fail "hostname across the hosts: $(tail -3 "$WORK/hostname.log")"
grep -q 'plm_ssh_agent' "$WORK/hostname.log" || fail "the launch did not use the agent"
got=$(grep -x 'kvnode[0-9]*' "$WORK/hostname.log" | sort | tr '\n' ' ')
[ "$got" = "kvnode1 kvnode2 kvnode3 " ] || fail "the 3 ranks ran on: $got"
say "mpirun through the agent, one rank per host: $got"
for ppn in 1 2; do
  timeout 150 "$KVRUN" --cluster --ppn "$ppn" --timeout 90 -- "$B/tests/mpi/mpi_hosts" 3 >"$WORK/hosts$ppn.log" 2>&1 ||
    fail "mpi_hosts with $ppn rank(s) per host: $(tail -1 "$WORK/hosts$ppn.log")"
  grep -qx 'hosts: kvnode1 kvnode2 kvnode3' "$WORK/hosts$ppn.log" || fail "mpi_hosts ($ppn per host) saw: $(grep '^hosts:' "$WORK/hosts$ppn.log")"
done
say "mpi_hosts across 3 hosts, 1 and 2 ranks per host: $(tail -1 "$WORK/hosts2.log")"

# ---------------------------------------------------------------- a slow, lossy link
# kvnode3's link at 10 mbit/s carries 2 MB at less than 20 Mbit/s (more
# than 100 before and after), and with 20% loss drops 10-30% of 2000
# datagrams sent to it (none before)
NP=$ROOT/tests/scripts/netprobe.py
tcp_rate() {  # Mbit/s from kvnode1 to kvnode3
  "$VC" exec kvnode3 python3 "$NP" tcp-serve 198.18.0.3 5101 & local srv=$!
  sleep 0.5
  "$VC" exec kvnode1 python3 "$NP" tcp-send 198.18.0.3 5101 2000000
  wait "$srv"
}
udp_got() {  # datagrams of 2000 from kvnode1 that kvnode3 received
  "$VC" exec kvnode3 python3 "$NP" udp-serve 198.18.0.3 5102 > "$WORK/udp.out" & local srv=$!
  sleep 0.5
  "$VC" exec kvnode1 python3 "$NP" udp-send 198.18.0.3 5102 2000
  wait "$srv"
  cat "$WORK/udp.out"
}
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x != "" && x >= lo && x <= hi) }'; }
fast=$(tcp_rate); within "$fast" 100 1e9 || fail "kvnode3's link carries ${fast:-nothing} Mbit/s before any limit"
"$VC" link kvnode3 slow 10mbit 0 || fail "vcluster link kvnode3 slow 10mbit 0 failed"
slow=$(tcp_rate); within "$slow" 1 20 || fail "kvnode3's link at 10mbit carries ${slow:-nothing} Mbit/s"
"$VC" link kvnode3 slow 0 20 || fail "vcluster link kvnode3 slow 0 20 failed"
lossy=$(udp_got); within "$lossy" 1400 1800 || fail "with 20% loss kvnode3 received ${lossy:-no} datagrams of 2000"
"$VC" link kvnode3 up || fail "vcluster link kvnode3 up failed"
whole=$(udp_got); [ "$whole" = 2000 ] || fail "after up kvnode3 received ${whole:-no} datagrams of 2000"
back=$(tcp_rate); within "$back" 100 1e9 || fail "after up kvnode3's link carries ${back:-nothing} Mbit/s"
"$VC" link kvnode3 slow 10 5 2>/dev/null && fail "vcluster link accepted the rate '10' (no unit)"
say "a slow link: ${fast} Mbit/s, at 10mbit ${slow}, with 20% loss ${lossy} of 2000 datagrams, after up ${whole} and ${back} Mbit/s"

# ---------------------------------------------------------------- a hung run through the agent
TAG=vcluster-test-hang-$$
KVRUN_TAG=$TAG timeout 60 "$KVRUN" --cluster --ppn 1 --timeout 5 -- sleep 600 >"$WORK/hang.log" 2>&1; rc=$?
[ "$rc" -eq 3 ] && grep -q 'HUNG' "$WORK/hang.log" || fail "a hung run across the hosts: rc $rc, $(tail -1 "$WORK/hang.log")"
tagged=$(grep -lzxF "KVRUN_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null | wc -l)
[ "$tagged" -eq 0 ] || fail "$tagged processes of the hung run remain"
prteds=$(for p in $("$VC" pids); do cat "/proc/$p/comm" 2>/dev/null; done | grep -c '^prted$')
[ "$prteds" -eq 0 ] || fail "$prteds prted remain on the hosts after the hung run"
say "a hung run across the hosts: HUNG, no process of it left on any host"

# ---------------------------------------------------------------- Slurm
nodes=$("$VC" exec 1 sinfo -h -N -o '%N %T' | sort | tr '\n' ' ')
[ "$nodes" = "kvnode1 idle kvnode2 idle kvnode3 idle " ] || fail "sinfo: $nodes"
say "sinfo: $nodes"
cat >"$WORK/job.sh" <<EOF
#!/bin/bash
echo "batch on \$(hostname), nodes \$SLURM_JOB_NODELIST"
"$KVRUN" --nodes 3 --ppn 1 --no-verdict --timeout 60 -- sh -c 'echo "rank on \$(hostname) step \${SLURM_STEP_ID:-none}"'
echo "kvrun exit \$?"
"$KVRUN" --nodes 3 --ppn 1 --timeout 60 -- "$B/tests/mpi/mpi_hosts" 3
echo "kvrun exit \$?"
KVRUN_TAG=vcluster-test-slurm-hang "$KVRUN" --nodes 3 --ppn 1 --timeout 5 -- sleep 600
echo "hung kvrun exit \$?"
EOF
chmod +x "$WORK/job.sh"
job=$("$VC" exec 1 sbatch --parsable -N 3 --time=2 -o "$WORK/job.out" "$WORK/job.sh") || fail "sbatch -N 3 failed"
t=$SECONDS   # (sbatch --wait polls every 30 s or so: poll here instead)
until st=$("$VC" exec 1 squeue -h -t all -j "$job" -o %T 2>/dev/null) && [[ $st =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL)$ ]]; do
  ((SECONDS - t > 150)) && fail "job $job is '$st' after 150 s"
  sleep 1
done
[ "$st" = COMPLETED ] || fail "job $job ended $st: $(tail -5 "$WORK/job.out")"
n_ok=$(grep -c '^kvrun exit 0$' "$WORK/job.out")
[ "$n_ok" -eq 2 ] || fail "kvrun in the allocation: $(grep -E 'kvrun( exit|:)' "$WORK/job.out" | grep -v launch | tr '\n' ';')"
grep 'kvrun: launch:' "$WORK/job.out" | grep -q 'plm_ssh_agent\|--host' && fail "in the allocation kvrun did not launch plain mpirun"
grep 'kvrun: launch:' "$WORK/job.out" | head -1 | grep -q -- '--with-ft ulfm' || fail "in the allocation kvrun did not pass --with-ft ulfm"
got=$(awk '/^rank on/ {print $3}' "$WORK/job.out" | sort | tr '\n' ' ')
[ "$got" = "kvnode1 kvnode2 kvnode3 " ] || fail "the allocation's ranks ran on: $got"
# the ranks off the head node are children of prted started by an srun step
steps=$(awk '/^rank on kvnode[23]/ {print $5}' "$WORK/job.out" | sort -u | tr '\n' ' ')
[[ $steps =~ ^[0-9]+\ $ ]] || fail "the ranks on kvnode2/3 are not in one srun step (steps: '$steps')"
grep -qx 'hosts: kvnode1 kvnode2 kvnode3' "$WORK/job.out" || fail "mpi_hosts in the allocation saw: $(grep '^hosts:' "$WORK/job.out")"
grep -q 'hung kvrun exit 3' "$WORK/job.out" || fail "a hung run in the allocation: $(grep 'hung kvrun' "$WORK/job.out")"
tagged=$(grep -lzxF "KVRUN_TAG=vcluster-test-slurm-hang" /proc/[0-9]*/environ 2>/dev/null | wc -l)
[ "$tagged" -eq 0 ] || fail "$tagged processes of the hung run in the allocation remain"
say "sbatch -N 3: mpirun --with-ft ulfm put ranks on $got(srun step $steps); its hung run left nothing"

# ---------------------------------------------------------------- up after a crash
say "vcluster up killed half-way, then up again"
"$VC" down >/dev/null 2>&1 || fail "down before the crash test failed"
# The whole `up` is killed (its process group, as a crash would) once the
# hosts stand and before Slurm is up: hosts and daemons are left behind.
setsid "$VC" up 3 >"$WORK/crash.log" 2>&1 &
crash=$!
t=$SECONDS
until [ -e "$KV_CLUSTER_DIR/node/kvnode3/ready" ]; do
  ((SECONDS - t > 60)) && fail "the up to crash never started its hosts"
  sleep 0.05
done
kill -KILL -- -"$crash" 2>/dev/null
wait "$crash" 2>/dev/null
[ -n "$("$VC" pids)" ] || fail "the crashed up left nothing to clean (the test needs leftovers)"
timeout 180 "$VC" up 3 >"$WORK/reup.log" 2>&1 || fail "up after a crashed up: $(tail -3 "$WORK/reup.log")"
"$VC" status >/dev/null || fail "status after the re-up is not 0"
NETS+=" $(for h in 1 2 3; do "$VC" exec "$h" readlink /proc/self/ns/net; done | tr '\n' ' ')"
grep -q 'leftovers' "$WORK/reup.log" || fail "the up after a crash did not clean its leftovers"
say "up after a crashed up: it cleaned the leftovers, then came up"
