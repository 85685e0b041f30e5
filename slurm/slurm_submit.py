#!/usr/bin/env python3
"""slurm_submit.py submit|status CAMPAIGN_FILE -- a campaign as sbatch job arrays.

The campaign runner says what to run (`campaign.py plan FILE`: the
campaign's settings and every run with its shape and recorded outcome, as
JSON); this file only talks to Slurm.  `submit` groups the runs to do by
what Slurm must allocate (nodes, tasks per node); each group becomes one
job array whose task K runs the run named on line K of the group's
listing through `campaign.py run-one` (slurm/task.sh): inside the
allocation that is `mpirun --with-ft ulfm` via scripts/kvrun, since Open
MPI supports fault tolerance only under its own launcher.

Nothing is submitted twice.  A run is left alone when it has an outcome
(finished, or any other: those again only with --retry-failed) or when
Slurm still holds its array task: the job ids of
every submission are in results/CAMPAIGN/slurm/jobs.csv with their
listings, and Slurm's state of each task comes from squeue (pending,
running, and ended within MinJobAge) and from sacct when the cluster has
accounting (the test cluster has none: squeue and the files are enough).
A run whose task started (campaign.py leaves started.json) but ended
without a result (killed at Slurm's time limit, its node lost) gets an
outcome recorded through `campaign.py record`: hung after TIMEOUT, else
failed.  `status` prints every run's state, Slurm's included.  Account,
partition, modules, overcommit, exclusive (1: --exclusive; the default for
a group with failures, 0 otherwise), extra sbatch options and the throttle
come from the campaign's [slurm] section or the environment
(SBATCH_ACCOUNT, SBATCH_PARTITION are read by sbatch itself).
"""
import argparse
import collections
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAMPAIGN_PY = os.path.join(ROOT, "experiments", "campaign", "campaign.py")
SLURM_KEYS = {"account", "partition", "modules", "throttle", "overcommit", "exclusive", "extra"}
LIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
        "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD"}
AS_HUNG = {"TIMEOUT", "DEADLINE"}  # past Slurm's limit, which is kvrun's plus a minute
JOBS_HEADER = "job,group,count,nodes,ranks,listing\n"


def campaign(*args):
    """campaign.py's output, or None after it printed why not."""
    res = subprocess.run([sys.executable, CAMPAIGN_PY, *args], capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        return None
    return res.stdout


def submissions(sdir):
    """{array job id: [run id of task 0, 1, ...]} from jobs.csv and the listings."""
    out = {}
    try:
        lines = open(os.path.join(sdir, "jobs.csv")).read().splitlines()
    except OSError:
        return out
    for line in lines:
        f = line.split(",")
        if len(f) == 6 and f[0] != "job":  # older files have no listing: nothing to map
            try:
                out[f[0]] = open(f[5]).read().split()
            except OSError:
                pass
    return out


def slurm_states(jobs):
    """{"JOB_TASK": state} for the array tasks of these jobs that Slurm
    still knows: sacct when accounting works, then squeue (live and recently
    ended jobs), which wins."""
    states = {}
    if not jobs:
        return states
    ids = ",".join(sorted(jobs))
    try:
        acct = subprocess.run(["sacct", "-n", "-P", "-X", "-j", ids, "-o", "JobID,State"],
                              capture_output=True, text=True, timeout=30)
        if acct.returncode == 0:
            for line in acct.stdout.splitlines():
                jid, _, st = line.partition("|")
                states[jid] = st.split()[0] if st else "UNKNOWN"
        q = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-o", "%i|%T"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SystemExit(f"slurm_submit: error: cannot ask Slurm ({e})")
    if q.returncode != 0:
        raise SystemExit(f"slurm_submit: error: squeue failed: {q.stderr.strip()}")
    for line in q.stdout.splitlines():
        jid, _, st = line.partition("|")
        if jid.split("_")[0] in jobs:
            states[jid] = st
    return states


def run_states(p, sdir):
    """{run id: (state, slurm task, slurm state)}: state is the recorded
    outcome, 'queued' or 'running' while Slurm holds its task, 'ended' when
    its task started and ended without a result, else 'not run'."""
    subs = submissions(sdir)
    slurm = slurm_states(set(subs))
    task_of = {}
    for job, listing in sorted(subs.items(), key=lambda kv: int(kv[0])):
        for k, rid in enumerate(listing):
            task_of[rid] = f"{job}_{k}"  # the latest submission of a run wins
    out = {}
    for r in p["runs"]:
        task = task_of.get(r["id"])
        st = slurm.get(task) if task else None
        if r["status"]:
            out[r["id"]] = (r["status"], task, st)
        elif st in LIVE:
            out[r["id"]] = ("queued" if st == "PENDING" else "running", task, st)
        elif task and started_in(r["dir"], task):
            out[r["id"]] = ("ended", task, st)
        else:
            out[r["id"]] = ("not run", task, st)
    return out


def started_in(rdir, task):
    """Did array task `task` start this run (campaign.py's started.json)?"""
    try:
        return json.load(open(os.path.join(rdir, "started.json"))).get("job_id") == task
    except (OSError, ValueError):
        return False


def record_ended(p, states):
    """Give every run whose task ended without a result its outcome."""
    for rid, (st, task, slurm) in states.items():
        if st != "ended":
            continue
        outcome = "hung" if slurm in AS_HUNG else "failed"
        why = (f"Slurm array task {task} ended {slurm} without a result" if slurm else
               f"Slurm array task {task} started and ended without a result (Slurm no longer knows its state)")
        if campaign("record", p["file"], rid, outcome, why) is None:
            raise SystemExit(2)
        states[rid] = (outcome, task, slurm)


def sbatch_command(p, g, run, count, listing, sdir, faults):
    sl = p["slurm"]
    # the launcher's limit, start-up slack, and for runs across nodes the
    # MPI probe campaign.py may run first (scripts/mpiprobe: 30 s and 60 s
    # limits, its build and a one-host check)
    probe = 180 if run["nodes"] > 1 else 0
    minutes = max(1, math.ceil((p["time_limit_s"] + 60 + probe) / 60))
    throttle = sl.get("throttle", p["throttle"])
    cmd = ["sbatch", "--parsable", f"--array=0-{count - 1}%{throttle}",
           f"--job-name=kv-{p['name']}-g{g}", f"--nodes={run['nodes']}",
           f"--ntasks-per-node={run['tasks_per_node']}",
           f"--time={minutes}", f"--output={sdir}/%A_%a.out", f"--chdir={ROOT}"]
    for k in ("account", "partition"):
        if k in sl:
            cmd.append(f"--{k}={sl[k]}")
    if sl.get("overcommit") == "1":
        cmd.append("--overcommit")
    # A run with failures gets its nodes to itself unless the campaign says
    # otherwise: another job's ranks on a victim node would be measured
    # with it, and a node loss would take them too.
    if sl.get("exclusive", "1" if faults else "0") == "1":
        cmd.append("--exclusive")
    cmd += sl.get("extra", "").split()
    return cmd + [os.path.join(ROOT, "slurm", "task.sh"), p["file"], listing]


def submit(p, retry):
    unknown = set(p["slurm"]) - SLURM_KEYS
    if unknown:
        print(f"slurm_submit: error: unknown [slurm] setting(s): {', '.join(sorted(unknown))} "
              f"(known: {', '.join(sorted(SLURM_KEYS))})", file=sys.stderr)
        return 2
    sdir = os.path.join(p["results"], "slurm")
    os.makedirs(sdir, exist_ok=True)
    states = run_states(p, sdir)
    record_ended(p, states)
    again = tuple(p["outcomes_not_passed"]) if retry else ()
    groups = {}
    for r in p["runs"]:
        if states[r["id"]][0] in ("not run",) + again:
            groups.setdefault((r["nodes"], r["ranks"], r["tasks_per_node"]), []).append(r)
    count = collections.Counter(st for st, _, _ in states.values())
    print(f"campaign {p['name']}: {count['finished']} finished, "
          f"{sum(count[o] for o in p['outcomes_not_passed'])} {', '.join(p['outcomes_not_passed'])}"
          f"{' (submitted again)' if retry else ' (kept; --retry-failed submits them again)'}, "
          f"{count['queued'] + count['running']} queued or running (not submitted again)")
    if not groups:
        print("nothing to submit")
        return 0
    for shape, runs in groups.items():
        if runs[0]["problems"]:
            print(f"slurm_submit: error: runs of {runs[0]['ranks']} ranks on {runs[0]['nodes']} nodes "
                  f"(e.g. {runs[0]['id']}): {'; '.join(runs[0]['problems'])}", file=sys.stderr)
            return 2
    env = dict(os.environ, KV_MODULES=p["slurm"].get("modules", ""), KV_ROOT=ROOT)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for g, (shape, runs) in enumerate(sorted(groups.items())):
        listing = os.path.join(sdir, f"{stamp}-g{g}.txt")
        with open(listing, "w") as f:
            f.write("\n".join(r["id"] for r in runs) + "\n")
        res = subprocess.run(sbatch_command(p, g, runs[0], len(runs), listing, sdir,
                                            any(r["faults"] for r in runs)),
                             capture_output=True, text=True, env=env)
        if res.returncode != 0:
            print(f"sbatch failed for group {g}: {res.stderr.strip()}", file=sys.stderr)
            return 1
        job = res.stdout.strip().split(";")[0]
        jobs = os.path.join(sdir, "jobs.csv")
        new = not os.path.exists(jobs) or os.path.getsize(jobs) == 0
        with open(jobs, "a") as f:
            f.write((JOBS_HEADER if new else "") + f"{job},{g},{len(runs)},{shape[0]},{shape[1]},{listing}\n")
        print(f"submitted job array {job}: {len(runs)} runs of {shape[1]} ranks on {shape[0]} node(s)")
    return 0


def status(p):
    states = run_states(p, os.path.join(p["results"], "slurm"))
    count = collections.Counter(st for st, _, _ in states.values())
    for st in sorted(count):
        print(f"{st:10s} {count[st]}")
    for rid, (st, task, slurm) in sorted(states.items()):
        if st == "ended":
            print(f"  {rid}: task {task} ended {slurm or '(state no longer known)'} without a result")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("submit", "status"))
    ap.add_argument("campaign", metavar="CAMPAIGN_FILE")
    ap.add_argument("--retry-failed", action="store_true", help="submit every run that did not finish again")
    a = ap.parse_args()
    out = campaign("plan", a.campaign)
    if out is None:
        return 2
    p = json.loads(out)
    return submit(p, a.retry_failed) if a.command == "submit" else status(p)


if __name__ == "__main__":
    sys.exit(main())
