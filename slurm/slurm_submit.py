#!/usr/bin/env python3
"""slurm_submit.py CAMPAIGN_FILE -- turn a campaign into sbatch job arrays.

The campaign runner says what to run (`campaign.py plan FILE`: the
campaign's settings and every run with its launch shape and status, as
JSON); this file only talks to Slurm.  Runs are grouped by what Slurm must
allocate (nodes, tasks, tasks per node); each group becomes one job array
whose task K runs the K-th run of the group through `campaign.py run-one`
(slurm/task.sh): inside the allocation that is `mpirun --with-ft ulfm`
via scripts/kvrun, since Open MPI supports fault tolerance only under its
own launcher, not under direct srun.  Finished runs are not submitted
again.  Account, partition, modules and the throttle come from the
campaign's [slurm] section or the environment (SBATCH_ACCOUNT,
SBATCH_PARTITION are read by sbatch itself).  Job ids go to
results/CAMPAIGN/slurm/jobs.csv; each run's meta.json carries its own.
"""
import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAMPAIGN_PY = os.path.join(ROOT, "experiments", "campaign", "campaign.py")
SLURM_KEYS = {"account", "partition", "modules", "throttle", "overcommit", "extra"}


def plan(path):
    """The campaign runner's plan, or None after it printed why not."""
    res = subprocess.run([sys.executable, CAMPAIGN_PY, "plan", path], capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        return None
    return json.loads(res.stdout)


def groups_of(runs):
    """Unfinished runs by (nodes, ranks, ranks per node): {key: [index]}."""
    groups = {}
    for r in runs:
        if r["status"] != "finished":
            key = (r["nodes"], r["ranks"], r["ranks_per_node"])
            groups.setdefault(key, []).append(r["index"])
    return groups


def sbatch_command(p, g, shape, count, listing, sdir):
    nodes, ranks, rpn = shape
    sl = p["slurm"]
    minutes = max(1, math.ceil((p["time_limit_s"] + 60) / 60))  # launcher limit plus start-up slack
    throttle = sl.get("throttle", p["throttle"])
    cmd = ["sbatch", "--parsable", f"--array=0-{count - 1}%{throttle}",
           f"--job-name=kv-{p['name']}-g{g}", f"--nodes={nodes}", f"--ntasks={ranks}",
           f"--time={minutes}", f"--output={sdir}/%A_%a.out", f"--chdir={ROOT}"]
    if rpn:
        cmd.append(f"--ntasks-per-node={rpn}")
    for k in ("account", "partition"):
        if k in sl:
            cmd.append(f"--{k}={sl[k]}")
    if sl.get("overcommit") == "1":
        cmd.append("--overcommit")
    cmd += sl.get("extra", "").split()
    return cmd + [os.path.join(ROOT, "slurm", "task.sh"), p["file"], listing]


def submit(p):
    unknown = set(p["slurm"]) - SLURM_KEYS
    if unknown:
        print(f"slurm_submit: error: unknown [slurm] setting(s): {', '.join(sorted(unknown))} "
              f"(known: {', '.join(sorted(SLURM_KEYS))})", file=sys.stderr)
        return 2
    groups = groups_of(p["runs"])
    sdir = os.path.join(p["results"], "slurm")
    os.makedirs(sdir, exist_ok=True)
    if not groups:
        print("nothing to submit: every run has finished")
        return 0
    jobs = []
    env = dict(os.environ, KV_MODULES=p["slurm"].get("modules", ""), KV_ROOT=ROOT)
    for g, (shape, idx) in enumerate(sorted(groups.items())):
        listing = os.path.join(sdir, f"group{g}.txt")
        with open(listing, "w") as f:
            f.write("\n".join(str(i) for i in idx) + "\n")
        res = subprocess.run(sbatch_command(p, g, shape, len(idx), listing, sdir),
                             capture_output=True, text=True, env=env)
        if res.returncode != 0:
            print(f"sbatch failed for group {g}: {res.stderr.strip()}", file=sys.stderr)
            return 1
        job = res.stdout.strip().split(";")[0]
        jobs.append((job, g, len(idx), shape[0], shape[1]))
        print(f"submitted job array {job}: {len(idx)} runs of {shape[1]} ranks on {shape[0]} node(s)")
    with open(os.path.join(sdir, "jobs.csv"), "a") as f:
        for job, g, n, nodes, ranks in jobs:
            f.write(f"{job},{g},{n},{nodes},{ranks}\n")
    return 0


def main():
    ap = argparse.ArgumentParser(description="Submit a campaign's unfinished runs as Slurm job arrays.")
    ap.add_argument("campaign", metavar="CAMPAIGN_FILE")
    a = ap.parse_args()
    p = plan(a.campaign)
    return 2 if p is None else submit(p)


if __name__ == "__main__":
    sys.exit(main())
