"""slurm_submit.py -- turn a campaign into sbatch job arrays.

Runs are grouped by what Slurm must allocate (nodes, tasks, time limit);
each group becomes one job array whose task K runs the K-th run of the
group through `campaign.py run-one` (slurm/task.sh): inside the allocation
that is `mpirun --with-ft ulfm` via scripts/kvrun, since Open MPI supports
fault tolerance only under its own launcher, not under direct srun.
Finished runs are not submitted again.  Account, partition, modules and the
throttle come from the campaign's [slurm] section or the environment
(SBATCH_ACCOUNT, SBATCH_PARTITION are read by sbatch itself).  Job ids go
to results/CAMPAIGN/slurm/jobs.csv; each run's meta.json carries its own.
"""
import math
import os
import subprocess

SLURM_KEYS = {"account", "partition", "modules", "throttle", "overcommit", "extra"}


def submit(c, runs, rdir, root):
    sl = c["slurm"]
    unknown = set(sl) - SLURM_KEYS
    if unknown:
        print(f"campaign: error: unknown [slurm] setting(s): {', '.join(sorted(unknown))} "
              f"(known: {', '.join(sorted(SLURM_KEYS))})")
        return 2
    from campaign import run_status  # same directory layout as the local runner
    groups = {}
    for i, r in enumerate(runs):
        if run_status(os.path.join(rdir, r["id"])) == "finished":
            continue
        key = (r["launch"]["nodes"], r["launch"]["ranks"], r["launch"].get("ranks_per_node", 0))
        groups.setdefault(key, []).append(i)
    sdir = os.path.join(rdir, "slurm")
    os.makedirs(sdir, exist_ok=True)
    if not groups:
        print("nothing to submit: every run has finished")
        return 0
    limit_s = int(c["campaign"].get("time_limit_s", "300"))
    minutes = max(1, math.ceil((limit_s + 60) / 60))  # launcher limit plus start-up slack
    throttle = sl.get("throttle", c["campaign"].get("throttle", "4"))
    camp_file = os.path.abspath(c["_path"])
    jobs = []
    for g, ((nodes, ranks, rpn), idx) in enumerate(sorted(groups.items())):
        listing = os.path.join(sdir, f"group{g}.txt")
        with open(listing, "w") as f:
            f.write("\n".join(str(i) for i in idx) + "\n")
        cmd = ["sbatch", "--parsable", f"--array=0-{len(idx) - 1}%{throttle}",
               f"--job-name=kv-{c['campaign']['name']}-g{g}", f"--nodes={nodes}",
               f"--ntasks={ranks}", f"--time={minutes}",
               f"--output={sdir}/%A_%a.out", f"--chdir={root}"]
        if rpn:
            cmd.append(f"--ntasks-per-node={rpn}")
        for k in ("account", "partition"):
            if k in sl:
                cmd.append(f"--{k}={sl[k]}")
        if sl.get("overcommit") == "1":
            cmd.append("--overcommit")
        cmd += sl.get("extra", "").split()
        cmd += [os.path.join(root, "slurm", "task.sh"), camp_file, listing]
        env = dict(os.environ, KV_MODULES=sl.get("modules", ""), KV_ROOT=root)
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if res.returncode != 0:
            print(f"sbatch failed for group {g}: {res.stderr.strip()}")
            return 1
        job = res.stdout.strip().split(";")[0]
        jobs.append((job, g, len(idx), nodes, ranks))
        print(f"submitted job array {job}: {len(idx)} runs of {ranks} ranks on {nodes} node(s)")
    with open(os.path.join(sdir, "jobs.csv"), "a") as f:
        for job, g, n, nodes, ranks in jobs:
            f.write(f"{job},{g},{n},{nodes},{ranks}\n")
    return 0
