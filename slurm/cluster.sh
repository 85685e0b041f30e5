#!/usr/bin/env bash
# cluster.sh -- a Slurm test cluster on this machine, for tests.
#
# One slurmctld and one slurmd per node.  By default the only node is this
# machine (named `hostname -s`, at 127.0.0.1); scripts/vcluster uses the
# same script for a cluster of N hosts made of namespaces, one slurmd on
# each host (KV_SLURM_NODES, KV_SLURM_ENTER below).
#
#   slurm/cluster.sh start    munged (if none answers), slurmctld and slurmd
#                             with a generated slurm.conf; waits until every
#                             node is idle.  Already up: says so, exit 0.
#   slurm/cluster.sh stop     cancels every job, stops the daemons this
#                             script started (and munged only if it started
#                             it); nothing running: exit 0.
#   slurm/cluster.sh status   prints whether it is up; exit 0 up, 1 not.
#   slurm/cluster.sh env      prints `export SLURM_CONF=...` for eval.
#
# Environment:
#   KV_SLURM_DIR      state directory (conf, logs, pid files, spool, saved
#                     state); default /tmp/kvslurm.  Never in the repository.
#   KV_SLURM_CPUS     CPUs each node advertises (default: nproc).  More than
#                     the machine has is allowed (SlurmdParameters=
#                     config_overrides), e.g. to fit an 8-rank job on 2 cores.
#   KV_SLURM_PORT     slurmctld port (default 6817); slurmd uses PORT+1.
#   KV_SLURM_TIMEOUT  seconds to wait for the nodes to become idle (default 60).
#   KV_SLURM_NODES    "NAME=ADDR ..." (default: this machine at 127.0.0.1);
#                     the first node also runs slurmctld.
#   KV_SLURM_ENTER    a command that runs a program on node NAME when called
#                     as `ENTER NAME PROGRAM ARGS...` (default: run it here);
#                     the daemons and every client call go through it.
#   KV_SLURM_NODE_TMPDIR  TMPDIR of every task, %n standing for the node
#                     name (default: the submitter's); set by a TaskProlog.
#   KV_SLURM_PROCTRACK  Slurm's process tracking plugin: proctrack/cgroup,
#                     as production sites have it, where the machine has
#                     the cgroup v1 freezer hierarchy (each slurmd keeps
#                     its own tree, slurm_NODE, in it; a cgroup.conf is
#                     written beside slurm.conf, and stop removes the
#                     trees), else proctrack/linuxproc.
#
# Needs root (SlurmUser=root, SlurmdUser=root; jobs run as the submitter).
# It never uses systemctl: CI machines have no systemd.  It refuses to touch
# a Slurm it did not start, except daemons left by the Debian package with
# its default /etc/slurm/slurm.conf when that file is missing or its
# controller does not answer (such daemons are stopped).  Daemons in
# another network namespace (another test cluster's hosts) are no concern.
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin

STATE=${KV_SLURM_DIR:-/tmp/kvslurm}
CONF=$STATE/slurm.conf
CTLD_PID=$STATE/slurmctld.pid
slurmd_pidfile() { echo "$STATE/slurmd-$1.pid"; }   # SlurmdPidFile with %n
MUNGED_MARK=$STATE/munged.started   # pid of the munged this script started
MUNGED_SESSION=$STATE/munged.session   # its session: munged daemonizes (fork, setsid, fork)
MUNGE_KEY=/etc/munge/munge.key
MUNGE_SOCKET_DIR=/run/munge
MUNGE_PID=$MUNGE_SOCKET_DIR/munged.pid
DEFAULT_CONF=/etc/slurm/slurm.conf
PORT=${KV_SLURM_PORT:-6817}
TIMEOUT=${KV_SLURM_TIMEOUT:-60}
read -ra NODE_LIST <<<"${KV_SLURM_NODES:-$(hostname -s)=127.0.0.1}"   # NAME=ADDR words
NODES=("${NODE_LIST[@]%%=*}")
CTL=${NODES[0]} CTL_ADDR=${NODE_LIST[0]#*=}
read -ra ENTER <<<"${KV_SLURM_ENTER:-}"
NODE_TMPDIR=${KV_SLURM_NODE_TMPDIR:-}
# Slurm 22.05's cgroup v2 plugin needs systemd, which CI machines lack.
if [ -z "${KV_SLURM_PROCTRACK:-}" ] && awk '$2 == "/sys/fs/cgroup/freezer" && $3 == "cgroup" {f = 1} END {exit !f}' /proc/mounts; then
  PROCTRACK=proctrack/cgroup
else
  PROCTRACK=${KV_SLURM_PROCTRACK:-proctrack/linuxproc}
fi

log() { printf '[cluster] %s\n' "$*"; }
# run a program on node $1 (through KV_SLURM_ENTER when set)
on() { local n=$1; shift; if [ ${#ENTER[@]} -gt 0 ]; then "${ENTER[@]}" "$n" "$@"; else "$@"; fi; }
err() { printf '[cluster] error: %s\n' "$*" >&2; }
die() { err "$*"; exit 1; }

# ---------------------------------------------------------------- helpers

# alive and not a zombie
alive() {
  [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null &&
    grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$1/status" 2>/dev/null   # not a zombie, not gone
}
# live (non-zombie) processes named exactly $1
live_pids() { local p; for p in $(pgrep -x "$1"); do alive "$p" && echo "$p"; done; }
# pid from a pid file, only if that process is alive and is named $2
pid_of() {  # pidfile comm
  local p
  [ -r "$1" ] || return 1
  p=$(tr -dc '0-9' <"$1")
  alive "$p" || return 1
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] || return 1
  echo "$p"
}
# the slurm.conf a running slurmctld/slurmd reads: -f ARG, else SLURM_CONF
# in its environment, else the compiled-in default
conf_of_pid() {
  local p=$1 args=() i env
  { mapfile -d '' -t args <"/proc/$p/cmdline"; } 2>/dev/null || true
  for ((i = 0; i < ${#args[@]}; i++)); do
    case ${args[i]} in
      -f) echo "${args[i+1]:-}"; return ;;
      -f?*) echo "${args[i]#-f}"; return ;;
    esac
  done
  env=$({ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | sed -n 's/^SLURM_CONF=//p' | head -1)
  echo "${env:-$DEFAULT_CONF}"
}
# slurmstepd and job tasks of this cluster: processes whose environment says
# SLURM_CONF=$CONF and that are slurmstepd or carry SLURM_JOB_ID (a shell
# that merely eval'ed `cluster.sh env` is never matched); never an ancestor
env_pids() {
  local f p e self_tree=" $$ $BASHPID "
  p=$PPID
  while [ "${p:-0}" -gt 1 ]; do
    self_tree+="$p "
    p=$(awk '/^PPid:/{print $2}' "/proc/$p/status" 2>/dev/null)
  done
  # shellcheck disable=SC2013  # /proc paths have no blanks
  for f in $(grep -lzxF "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null); do
    p=${f#/proc/}; p=${p%/environ}
    [[ $self_tree == *" $p "* ]] && continue
    alive "$p" || continue
    if [ "$(cat "/proc/$p/comm" 2>/dev/null)" != slurmstepd ]; then
      e=$({ tr '\0' '\n' <"$f"; } 2>/dev/null)
      grep -q '^SLURM_JOB_ID=' <<<"$e" || continue
    fi
    echo "$p"
  done
}
kill_wait() {  # pid name [seconds]: TERM, wait, KILL
  local p=$1 name=$2 t=${3:-15} i
  alive "$p" || return 0
  kill -TERM "$p" 2>/dev/null
  for ((i = 0; i < t * 5; i++)); do alive "$p" || return 0; sleep 0.2; done
  err "$name (pid $p) ignored SIGTERM for ${t}s; sending SIGKILL"
  kill -KILL "$p" 2>/dev/null
  for ((i = 0; i < 25; i++)); do alive "$p" || return 0; sleep 0.2; done
  err "$name (pid $p) is still alive"; return 1
}
munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
clients() { SLURM_CONF=$CONF on "$CTL" timeout 15 "$@"; }
ctld_up() { clients scontrol ping 2>/dev/null | grep -q 'is UP'; }
node_state() { clients sinfo -h -N -n "$1" -o '%T' 2>/dev/null | head -1; }
usable() { [[ $1 == idle* || $1 == mixed* || $1 == alloc* ]]; }
# every node's state is usable; else prints the first node that is not
all_usable() {
  local n st
  for n in "${NODES[@]}"; do
    st=$(node_state "$n"); usable "$st" || { echo "$n ${st:-none}"; return 1; }
  done
}
# pids of our slurmds that run (one per node), each line "node pid"
slurmd_pids() {
  local n p
  for n in "${NODES[@]}"; do p=$(pid_of "$(slurmd_pidfile "$n")" slurmd) && echo "$n $p"; done
}
tail_logs() {
  local f
  for f in "$STATE/slurmctld.log" "$STATE"/slurmd-*.log; do
    [ -s "$f" ] && { echo "---- last lines of $f"; tail -n 25 "$f"; }
  done >&2
  clients sinfo -R >&2 2>/dev/null || true
}

# Slurm daemons on this machine that are not ours.  Prints "pid name conf"
# lines; ours are those in our pid files or reading our conf.
foreign_daemons() {
  local name p c mine net
  mine=" $(pid_of "$CTLD_PID" slurmctld) $(slurmd_pids | awk '{printf "%s ", $2}')"
  # the network namespace our controller runs in; a daemon in another one
  # cannot take our ports or addresses
  net=$(on "$CTL" readlink /proc/self/ns/net)
  for name in slurmctld slurmd; do
    for p in $(live_pids "$name"); do
      [[ $mine == *" $p "* ]] && continue
      [ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$net" ] || continue
      c=$(conf_of_pid "$p")
      [ "$c" = "$CONF" ] && continue
      echo "$p $name $c"
    done
  done
}
# A daemon of the Debian package: default conf, and that conf missing or its
# controller not answering.
package_leftover() {  # conf
  [ "$1" = "$DEFAULT_CONF" ] || return 1
  [ -e "$DEFAULT_CONF" ] || return 0
  ! SLURM_CONF=$DEFAULT_CONF timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'
}
check_foreign() {
  local lines p name c bad=0
  lines=$(foreign_daemons)
  [ -z "$lines" ] && return 0
  while read -r p name c; do
    if package_leftover "$c"; then
      log "stopping $name (pid $p) left by the Debian package ($c missing or not answering)"
      kill_wait "$p" "$name" 10 || bad=1
    else
      err "$name (pid $p) is running with $c, not started by this script; not touching it"
      bad=1
    fi
  done <<<"$lines"
  [ "$bad" -eq 0 ] || die "another Slurm runs on this machine; stop it first (or use its SLURM_CONF)"
}

# ---------------------------------------------------------------- munge

start_munge() {
  if munge_ok; then
    return 0
  fi
  command -v munged >/dev/null || die "munged is not installed (apt-get install munge)"
  local created=""
  if [ ! -s "$MUNGE_KEY" ]; then
    created=1
    log "creating $MUNGE_KEY"
    mkdir -p "$(dirname "$MUNGE_KEY")"
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile="$MUNGE_KEY" --force ||
        die "mungekey --create failed"
    else
      dd if=/dev/urandom of="$MUNGE_KEY" bs=1024 count=1 status=none ||
        die "cannot write $MUNGE_KEY"
    fi
  fi
  local user=root
  id munge >/dev/null 2>&1 && user=munge
  if [ -n "$created" ]; then
    chown "$user:" "$MUNGE_KEY"
    chmod 0400 "$MUNGE_KEY"
  elif [ "$(stat -c %U "$MUNGE_KEY")" != "$user" ]; then
    log "$MUNGE_KEY is owned by $(stat -c %U "$MUNGE_KEY"); giving it to $user (munged requires it)"
    chown "$user:" "$MUNGE_KEY"
  fi
  # what the package's service unit would provide (no systemd on CI)
  local d
  for d in "$MUNGE_SOCKET_DIR" /var/lib/munge /var/log/munge; do
    if [ ! -d "$d" ]; then
      mkdir -p "$d"
      chown "$user:" "$d"
      if [ "$d" = "$MUNGE_SOCKET_DIR" ]; then chmod 0755 "$d"; else chmod 0700 "$d"; fi
    fi
  done
  # a stale pid file from a dead munged makes munged refuse to start
  if [ -e "$MUNGE_PID" ] && ! pid_of "$MUNGE_PID" munged >/dev/null; then
    rm -f "$MUNGE_PID"
  fi
  log "starting munged (as $user)"
  # without our lock's descriptor (9), nor scripts/vcluster's (8, it calls
  # this script): a daemon that kept one would hold that lock for good
  if [ "$user" = munge ]; then
    runuser -u munge -- /usr/sbin/munged 8>&- 9>&- || die "munged failed to start (see /var/log/munge/munged.log)"
  else
    /usr/sbin/munged --force 8>&- 9>&- || die "munged failed to start (see /var/log/munge/munged.log)"
  fi
  local i p
  for ((i = 0; i < 50; i++)); do munge_ok && break; sleep 0.2; done
  munge_ok || die "munged started but 'munge -n | unmunge' fails (see /var/log/munge/munged.log)"
  # The pid file, once munged wrote it; not the newest munged, which may be
  # the daemonizing parent on its way out.  Its session holds the rest.
  for ((i = 0; i < 25; i++)); do p=$(pid_of "$MUNGE_PID" munged) && break; sleep 0.2; done
  [ -n "$p" ] || p=$(live_pids munged | head -1)
  echo "$p" >"$MUNGED_MARK"
  { [ -n "$p" ] && ps -o sid= -p "$p"; } | tr -dc '0-9' >"$MUNGED_SESSION"
  log "munged up (pid $p)"
}

stop_munge() {
  [ -e "$MUNGED_MARK" ] || return 0
  local p
  p=$(tr -dc '0-9' <"$MUNGED_MARK")
  if alive "$p" && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = munged ]; then
    local others
    others=$(for o in $(live_pids slurmctld) $(live_pids slurmd); do
      printf '%s %s (%s) ' "$(cat "/proc/$o/comm" 2>/dev/null)" "$o" "$(conf_of_pid "$o")"; done)
    if [ -n "$others" ]; then
      # another test cluster's daemons need it (munged serves the machine)
      log "leaving munged (pid $p) running: other Slurm daemons use it: $others"
      rm -f "$MUNGED_MARK" "$MUNGED_SESSION"; return 0
    fi
    log "stopping munged (pid $p)"
    kill_wait "$p" munged 10 || return 1
  fi
  # any other munged of the session this script started (never one of
  # another session: that munged serves someone else)
  local sid q
  sid=$(tr -dc '0-9' <"$MUNGED_SESSION" 2>/dev/null)
  if [ -n "$sid" ]; then
    for q in $(pgrep -x -s "$sid" munged); do
      alive "$q" && { log "stopping munged (pid $q, session $sid)"; kill_wait "$q" munged 10 || return 1; }
    done
  fi
  rm -f "$MUNGED_MARK" "$MUNGED_SESSION"
}

# ---------------------------------------------------------------- slurm.conf

write_conf() {
  local cpus mem_kb mem
  cpus=${KV_SLURM_CPUS:-$(nproc)}
  mem_kb=$(awk '/^MemTotal:/{print $2}' /proc/meminfo)
  mem=$((mem_kb * 9 / 10 / 1024 / ${#NODES[@]}))   # 90% of MemTotal shared by the nodes, in MB
  [ "$mem" -ge 1 ] || mem=1
  mkdir -p "$STATE/state"
  local f n
  for n in "${NODES[@]}"; do mkdir -p "$STATE/spool/$n"; done
  for f in "$STATE/slurmctld.log" "$STATE"/slurmd-*.log; do   # one run's logs, plus the previous run's
    [ -s "$f" ] && mv -f "$f" "$f.old"
  done
  : >"$STATE/plugstack.conf"
  [ "$PROCTRACK" = proctrack/cgroup ] && printf 'CgroupAutomount=no\nConstrainCores=no\nConstrainRAMSpace=no\n' \
    > "$STATE/cgroup.conf"
  write_task_prolog
  cat >"$CONF" <<EOF
# Generated by slurm/cluster.sh on $(date -u +%FT%TZ); do not edit (rewritten
# at every start).  A test cluster of ${#NODES[@]} node(s); state in $STATE.
ClusterName=kvslurm
SlurmctldHost=$CTL($CTL_ADDR)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/state
SlurmdSpoolDir=$STATE/spool/%n
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$(slurmd_pidfile %n)
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$STATE/plugstack.conf
MailProg=/bin/true
ProctrackType=$PROCTRACK
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
# As a production site has them: a task that exits non-zero ends its whole
# step, and a batch job whose node failed is requeued (rerun under the same
# id).  kvrun's srun options for a fault-tolerant run, and campaign.py's
# record of earlier attempts, are what make node loss measurable under them.
KillOnBadExit=1
JobRequeue=1
ReturnToService=2
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
# short timeouts: jobs start, end and are killed fast
SchedulerParameters=sched_interval=5,sched_min_interval=100000,batch_sched_delay=0
MessageTimeout=5
TCPTimeout=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
OverTimeLimit=0
MinJobAge=300
Waittime=0
UnkillableStepTimeout=30
${NODE_TMPDIR:+TaskProlog=$STATE/task_prolog.sh}
$(for f in "${NODE_LIST[@]}"; do echo "NodeName=${f%%=*} NodeAddr=${f#*=} CPUs=$cpus RealMemory=$mem State=UNKNOWN"; done)
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
}

# Each task's TMPDIR on its node (Open MPI's session directories live there
# and must not be shared by two hosts): a TaskProlog's "export" lines set
# the task's environment.
write_task_prolog() {
  rm -f "$STATE/task_prolog.sh"
  [ -n "$NODE_TMPDIR" ] || return 0
  cat >"$STATE/task_prolog.sh" <<EOF
#!/bin/sh
# Generated by slurm/cluster.sh: the task's TMPDIR on its node.
echo "export TMPDIR=\$(printf '%s' '$NODE_TMPDIR' | sed "s/%n/\$SLURMD_NODENAME/")"
EOF
  chmod 0755 "$STATE/task_prolog.sh"
}

# ---------------------------------------------------------------- commands

cmd_start() {
  if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null; then
    die "slurmctld/slurmd are not installed (apt-get install slurm-wlm)"
  fi
  [ "$(id -u)" -eq 0 ] || die "must run as root (SlurmUser=root)"
  check_foreign
  local ctld sds n bad
  ctld=$(pid_of "$CTLD_PID" slurmctld || true)
  sds=$(slurmd_pids)
  if [ -n "$ctld" ] && [ "$(grep -c . <<<"$sds")" -eq ${#NODES[@]} ] && [ -n "$sds" ] &&
     munge_ok && ctld_up && all_usable >/dev/null; then
    log "already up (slurmctld $ctld, ${#NODES[@]} slurmd, nodes ${NODES[*]}); SLURM_CONF=$CONF"
    return 0
  fi
  start_munge
  if [ -z "$ctld" ] && [ -z "$sds" ]; then
    write_conf
    log "wrote $CONF (nodes ${NODES[*]}, CPUs=${KV_SLURM_CPUS:-$(nproc)} each, port $PORT)"
  fi
  export SLURM_CONF=$CONF
  if [ -z "$ctld" ]; then
    log "starting slurmctld on $CTL"
    on "$CTL" slurmctld -f "$CONF" -i 9>&- || { tail_logs; cmd_stop >/dev/null; die "slurmctld failed to start"; }
  fi
  local i
  for ((i = 0; i < TIMEOUT * 2; i++)); do ctld_up && break; sleep 0.5; done
  ctld_up || { tail_logs; cmd_stop >/dev/null; die "slurmctld does not answer 'scontrol ping' after ${TIMEOUT}s"; }
  for n in "${NODES[@]}"; do
    pid_of "$(slurmd_pidfile "$n")" slurmd >/dev/null && continue
    log "starting slurmd on $n"
    on "$n" slurmd -f "$CONF" -N "$n" 9>&- || { tail_logs; cmd_stop >/dev/null; die "slurmd on $n failed to start"; }
  done
  local t0=$SECONDS resumed=0
  while ((SECONDS - t0 < TIMEOUT)); do
    bad=$(all_usable) && break
    # ReturnToService=2 returns a registered node; a node drained by a
    # previous run (saved state) is resumed once
    if [ "$resumed" -eq 0 ] && ((SECONDS - t0 > 3)) && [[ ${bad#* } == drain* || ${bad#* } == down* ]]; then
      clients scontrol update NodeName="$(IFS=,; echo "${NODES[*]}")" State=RESUME >/dev/null 2>&1 || true
      resumed=1
    fi
    sleep 0.5
  done
  if [ -n "$bad" ]; then
    tail_logs; cmd_stop >/dev/null
    die "node ${bad% *} is not idle after ${TIMEOUT}s (state: ${bad#* }); cluster stopped"
  fi
  log "up: slurmctld $(pid_of "$CTLD_PID" slurmctld) on $CTL, slurmd $(slurmd_pids | awk '{printf "%s%s on %s", (NR > 1 ? ", " : ""), $2, $1}'), partition debug"
  log "use: eval \"\$($0 env)\"   (SLURM_CONF=$CONF)"
}

cmd_stop() {
  local ctld sds n p i left rc=0
  ctld=$(pid_of "$CTLD_PID" slurmctld || true)
  sds=$(slurmd_pids)
  # jobs first: a stopped slurmd leaves its slurmstepd and job tasks running
  if [ -n "$ctld" ] && ctld_up; then
    local jobs
    jobs=$(clients squeue -h -o '%A' 2>/dev/null | sort -u | tr '\n' ' ')
    if [ -n "${jobs// /}" ]; then
      log "cancelling jobs: $jobs"
      # shellcheck disable=SC2086
      clients scancel $jobs 2>/dev/null || true
      for ((i = 0; i < 60; i++)); do
        [ -z "$(clients squeue -h -o '%A' 2>/dev/null)" ] && [ -z "$(env_pids)" ] && break
        sleep 0.5
      done
    fi
  fi
  while read -r n p; do
    [ -n "$p" ] && { log "stopping slurmd on $n (pid $p)"; kill_wait "$p" slurmd 15 || rc=1; }
  done <<<"$sds"
  [ -n "$ctld" ] && { log "stopping slurmctld (pid $ctld)"; kill_wait "$ctld" slurmctld 15 || rc=1; }
  # leftovers of ours: slurmstepd and job tasks (they carry our SLURM_CONF)
  left=$(env_pids | tr '\n' ' ')
  if [ -n "${left// /}" ]; then
    log "killing leftover job processes: $left"
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
  fi
  for p in $(live_pids slurmctld) $(live_pids slurmd); do   # pid file lost?
    if [ "$(conf_of_pid "$p")" = "$CONF" ]; then
      log "stopping $(cat "/proc/$p/comm" 2>/dev/null) (pid $p, reads $CONF)"
      kill_wait "$p" slurm 10 || rc=1
    fi
  done
  rm -f "$CTLD_PID"
  for n in "${NODES[@]}"; do rm -f "$(slurmd_pidfile "$n")"; done
  # the cgroup trees of proctrack/cgroup: a cgroup goes with rmdir, leaves first
  for n in "${NODES[@]}"; do
    find /sys/fs/cgroup/*/"slurm_$n" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  stop_munge || rc=1
  if [ -z "$ctld$sds" ]; then log "stopped (nothing of ours was running)"; else log "stopped"; fi
  return $rc
}

cmd_status() {
  local ctld sds n st
  ctld=$(pid_of "$CTLD_PID" slurmctld || true)
  sds=$(slurmd_pids)
  if [ -n "$ctld" ] && [ -n "$sds" ] && [ "$(grep -c . <<<"$sds")" -eq ${#NODES[@]} ] && ctld_up; then
    echo "up: slurmctld pid $ctld on $CTL, SLURM_CONF=$CONF"
    while read -r n p; do echo "  slurmd pid $p, node $n $(node_state "$n")"; done <<<"$sds"
    [ -e "$MUNGED_MARK" ] && echo "munged pid $(cat "$MUNGED_MARK") (started by this script)"
    return 0
  fi
  if [ -n "$ctld$sds" ]; then
    echo "partly up: slurmctld ${ctld:-not running}, slurmd $(grep -c . <<<"$sds")/${#NODES[@]} (${sds//$'\n'/, }), controller $(ctld_up && echo answers || echo 'does not answer'); SLURM_CONF=$CONF"
  else
    echo "down (state dir $STATE)"
  fi
  return 1
}

cmd_env() {
  echo "export SLURM_CONF=$CONF"
}

case ${1:-} in
  start|stop)
    mkdir -p "$STATE" || die "cannot create $STATE"
    exec 9>"$STATE/.lock"
    flock -w 120 9 || die "another cluster.sh holds $STATE/.lock"
    "cmd_$1" ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *) echo "usage: $0 start|stop|status|env   (state in \$KV_SLURM_DIR, default /tmp/kvslurm)" >&2; exit 2 ;;
esac
