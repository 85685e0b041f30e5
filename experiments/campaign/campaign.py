#!/usr/bin/env python3
"""campaign.py -- expand, run and track experiment campaigns.

A campaign file (format in docs/formats.md) lists a sweep; it
expands to runs with stable identifiers (derived from their parameters), so
a rerun skips runs that finished and retries the others.  Commands:

  campaign.py list FILE              the runs it expands to
  campaign.py run FILE               run them here, one after another
  campaign.py run-one FILE INDEX     run one (what a Slurm array task does)
  campaign.py plan FILE              settings and runs with their status, as JSON
                                     (what slurm/slurm_submit.py submits)
  campaign.py status FILE [--queued] finished / failed / hung / pending
  campaign.py gather FILE            rebuild runs.csv from the run directories
Results go to $KV_RESULTS (default results/)/CAMPAIGN/RUN_ID/.  This file
knows nothing of Slurm: slurm/ calls these commands.
"""
import argparse
import hashlib
import itertools
import json
import os
import re
import subprocess
import sys
import time

import cfgfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCH_KEYS = {"ranks", "nodes", "ranks_per_node"}
CAMPAIGN_KEYS = {"name", "repetitions", "time_limit_s", "spares_for_spare_variant",
                 "description", "throttle", "account", "partition", "modules"}
SECTIONS = {"campaign", "sweep", "fixed", "slurm"}
NAME_RE = re.compile(r"^(store|workload|driver)\.[a-z_]+$|^(ranks|nodes|ranks_per_node)$")


class CampaignError(Exception):
    pass


def parse(path):
    """Read a campaign file: {'campaign': {}, 'sweep': {k: [v]}, 'fixed': {}, 'slurm': {}}.
    The syntax is the driver's config-file dialect (cfgfile.py); the
    sections and names are checked here."""
    out = {s: {} for s in SECTIONS}

    def known_section(name, line):
        if name not in SECTIONS:
            raise CampaignError(f"{path}:{line}: bad section header '[{name}]' (known: "
                                f"{', '.join(sorted(SECTIONS))})")
    try:
        for full, value, no in cfgfile.entries(cfgfile.read(path), path, known_section):
            where = f"{path}:{no}"
            section, _, name = full.partition(".")
            if section not in SECTIONS or not name:
                raise CampaignError(f"{where}: entry before any [section]")
            if not value:
                raise CampaignError(f"{where}: empty value for {name!r} (leave the line out instead)")
            check_entry(section, name, value, where, out)
    except cfgfile.ConfigError as e:
        raise CampaignError(str(e))
    finish(out, path)
    out["_path"] = path
    return out


def check_entry(section, name, value, where, out):
    if section == "campaign" and name not in CAMPAIGN_KEYS:
        raise CampaignError(f"{where}: unknown campaign setting {name!r} (known: "
                            f"{', '.join(sorted(CAMPAIGN_KEYS))})")
    if section in ("sweep", "fixed") and not NAME_RE.match(name):
        raise CampaignError(f"{where}: {name!r} is not store.X, workload.X, driver.X, "
                            "ranks, nodes or ranks_per_node")
    if name in out[section]:
        raise CampaignError(f"{where}: {name!r} given twice")
    if section == "sweep":
        items = [v.strip() for v in value.split(",")]
        if any(not v for v in items):
            raise CampaignError(f"{where}: empty item in the list {value!r}")
        out[section][name] = items
    else:
        out[section][name] = value
    if name in LAUNCH_KEYS | {"repetitions", "time_limit_s", "throttle", "spares_for_spare_variant"}:
        for v in (out[section][name] if section == "sweep" else [value]):
            if not re.fullmatch(r"[1-9][0-9]*", v) and not (name == "spares_for_spare_variant" and v == "0"):
                raise CampaignError(f"{where}: {name} must be a positive integer, not {v!r}")


def finish(c, path):
    camp = c["campaign"]
    if "name" not in camp:
        raise CampaignError(f"{path}: [campaign] needs a name")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", camp["name"]):
        raise CampaignError(f"{path}: campaign name {camp['name']!r} may hold only letters, "
                            "digits, '.', '_' and '-'")
    both = set(c["sweep"]) & set(c["fixed"])
    if both:
        raise CampaignError(f"{path}: {', '.join(sorted(both))} in both [sweep] and [fixed]")
    if "ranks" not in c["sweep"] and "ranks" not in c["fixed"]:
        raise CampaignError(f"{path}: no 'ranks' in [sweep] or [fixed]")


def expand(c):
    """The list of runs: dicts with 'params', 'launch', 'id', 'rep'."""
    keys = sorted(c["sweep"])
    reps = int(c["campaign"].get("repetitions", "1"))
    runs = []
    for combo in itertools.product(*(c["sweep"][k] for k in keys)):
        params = dict(c["fixed"])
        params.update(zip(keys, combo))
        no_replicas = params.get("store.variant") in ("none", "checkpoint-restart")
        if no_replicas and params.get("store.replicas", "1") != "1":
            continue  # the baseline and checkpoint-restart have no replicas: one run per sweep point, r = 1
        if no_replicas:
            params["store.replicas"] = "1"
        launch = {k: int(params.pop(k)) for k in list(params) if k in LAUNCH_KEYS}
        launch.setdefault("nodes", 1)
        if params.get("store.variant") == "spare" and "store.spares" not in params:
            n = int(c["campaign"].get("spares_for_spare_variant", "1"))
            params["store.spares"] = str(n)
            launch["ranks"] += n
        for rep in range(1, reps + 1):
            runs.append(make_run(params, launch, rep))
    ids = [r["id"] for r in runs]
    if len(set(ids)) != len(ids):
        raise CampaignError("two runs expand to the same identifier")
    return runs


def make_run(params, launch, rep):
    desc = json.dumps({"p": params, "l": launch}, sort_keys=True)
    digest = hashlib.sha1(desc.encode()).hexdigest()[:8]
    short = "-".join(x for x in (params.get("store.variant", "recreate-copy"),
                                 params.get("store.backend", "allocate"),
                                 f"n{launch['ranks']}", f"r{params.get('store.replicas', '2')}",
                                 params.get("workload.workload", "custom")) if x)
    return {"params": params, "launch": launch, "rep": rep,
            "id": f"{short}-{digest}-rep{rep}"}


def results_dir(c):
    return os.path.join(os.environ.get("KV_RESULTS", os.path.join(ROOT, "results")), c["campaign"]["name"])


def run_status(rdir):
    """finished, failed, crashed, hung, or None when never run."""
    meta = os.path.join(rdir, "meta.json")
    try:
        return json.load(open(meta)).get("status")
    except (OSError, ValueError):
        return None


def run_one(c, run):
    """Run one run here under the launcher; returns its status."""
    rdir = os.path.join(results_dir(c), run["id"])
    os.makedirs(rdir, exist_ok=True)
    for stale in ("kills.csv", "meta.json"):  # a retry starts clean
        if os.path.exists(os.path.join(rdir, stale)):
            os.remove(os.path.join(rdir, stale))
    args = [f"{k}={v}" for k, v in sorted(run["params"].items())]
    args += [f"driver.out={rdir}", f"driver.campaign={c['campaign']['name']}",
             f"driver.run_id={run['id']}", "driver.progress=0"]
    limit = c["campaign"].get("time_limit_s", "300")
    cmd = [os.path.join(ROOT, "scripts", "kvrun"), "-n", str(run["launch"]["ranks"]),
           "--timeout", limit, "--out", os.path.join(rdir, "ranks"), "--",
           os.path.join(os.environ.get("KV_BUILD") or os.path.join(ROOT, "build"), "bin", "kv_driver")] + args
    t0 = time.time()
    ckpt = run["params"].get("store.variant") == "checkpoint-restart"
    if ckpt:  # a death ends the job (no ULFM); the launcher restarts it below
        if "store.checkpoint_dir" not in run["params"]:
            cmd.append(f"store.checkpoint_dir={os.path.join(rdir, 'checkpoints')}")
        cmd.insert(cmd.index("--"), "--no-ft")
    with open(os.path.join(rdir, "launcher.log"), "w") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
    if ckpt and rc != 0 and os.path.exists(os.path.join(rdir, "kills.csv")):
        # Checkpoint/restart: start the job again at once; it reloads the
        # latest checkpoint and runs the workload on, without the failures.
        ended = time.time()
        again = [a for a in cmd if not a.startswith(("driver.failures=", "driver.checkpoint_s="))]
        again += ["driver.restore=1", "driver.failures="]
        with open(os.path.join(rdir, "launcher.log"), "a") as log:
            log.write(f"campaign.py: job ended (kvrun exit {rc}); restarting it to restore\n")
            log.flush()
            rc = subprocess.call(again, stdout=log, stderr=subprocess.STDOUT)
        with open(os.path.join(rdir, "restart.json"), "w") as f:
            json.dump({"job_ended_and_restarted_wallclock": ended,
                       "second_job_exit": rc}, f, indent=1)
    status = {0: "finished", 1: "failed", 2: "crashed", 3: "hung"}.get(rc, "failed")
    if status != "finished" or run_status(rdir) is None:
        write_stub_meta(c, run, rdir, status if status != "finished" else "failed", t0)
    return run_status(rdir)


def write_stub_meta(c, run, rdir, status, t0):
    """A run that ended without its own meta.json still says what it was."""
    meta = {"campaign": c["campaign"]["name"], "run_id": run["id"], "status": status,
            "variant": run["params"].get("store.variant", "recreate-copy"),
            "backend": run["params"].get("store.backend", "allocate"),
            "ranks": run["launch"]["ranks"], "nodes": run["launch"]["nodes"],
            "replicas": int(run["params"].get("store.replicas", "2")),
            "failures": run["params"].get("driver.failures", ""),
            "job_id": slurm_job_id(),
            "wall_s": round(time.time() - t0, 3), "params": run["params"]}
    with open(os.path.join(rdir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)


def slurm_job_id():
    arr, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    if arr and task:
        return f"{arr}_{task}"
    return os.environ.get("SLURM_JOB_ID")


def write_index(c, runs):
    """runs.csv and campaign.json in the campaign directory."""
    d = results_dir(c)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "campaign.json"), "w") as f:
        json.dump({"campaign": c, "runs": runs}, f, indent=1)
    with open(os.path.join(d, "runs.csv"), "w") as f:
        f.write("run_id,variant,backend,ranks,nodes,replicas,workload,failures,repetition,status,wall_s\n")
        for r in runs:
            rdir = os.path.join(d, r["id"])
            meta = {}
            try:
                meta = json.load(open(os.path.join(rdir, "meta.json")))
            except (OSError, ValueError):
                pass
            p = r["params"]
            wall = meta.get("wall_s", meta.get("run_s", "NA"))
            fail = p.get("driver.failures", "").replace('"', "'")
            f.write(f"{r['id']},{p.get('store.variant', 'recreate-copy')},{p.get('store.backend', 'allocate')},"
                    f"{r['launch']['ranks']},{r['launch']['nodes']},{p.get('store.replicas', '2')},"
                    f"{p.get('workload.workload', 'custom')},\"{fail}\",{r['rep']},"
                    f"{meta.get('status', 'pending')},{wall}\n")


def cmd_run(c, runs):
    todo = [r for r in runs if run_status(os.path.join(results_dir(c), r["id"])) != "finished"]
    print(f"campaign {c['campaign']['name']}: {len(runs)} runs, {len(runs) - len(todo)} already "
          f"finished, {len(todo)} to run; results in {results_dir(c)}", flush=True)
    counts = {"finished": 0, "failed": 0, "crashed": 0, "hung": 0}
    t0 = time.time()
    for i, r in enumerate(todo, 1):
        st = run_one(c, r) or "failed"
        counts[st] = counts.get(st, 0) + 1
        left = (time.time() - t0) / i * (len(todo) - i)
        print(f"[{i}/{len(todo)}] {r['id']}: {st:8s}  done {counts['finished']}, failed "
              f"{counts['failed'] + counts['crashed']}, hung {counts['hung']}, ~{left:.0f} s left", flush=True)
        write_index(c, runs)
    write_index(c, runs)
    return 0 if counts["failed"] + counts["crashed"] == 0 else 1


def cmd_status(c, runs, queued):
    by = {}
    for r in runs:
        st = run_status(os.path.join(results_dir(c), r["id"])) or ("pending" if queued else "not run")
        by.setdefault(st, []).append(r["id"])
    for st in sorted(by):
        print(f"{st:10s} {len(by[st])}")
    return 0


def cmd_plan(c, runs):
    """What a batch system needs to submit the campaign."""
    camp = c["campaign"]
    print(json.dumps({
        "name": camp["name"], "file": os.path.abspath(c["_path"]), "results": results_dir(c),
        "time_limit_s": int(camp.get("time_limit_s", "300")), "throttle": camp.get("throttle", "4"),
        "slurm": c["slurm"],
        "runs": [{"index": i, "id": r["id"], "nodes": r["launch"]["nodes"], "ranks": r["launch"]["ranks"],
                  "ranks_per_node": r["launch"].get("ranks_per_node", 0),
                  "status": run_status(os.path.join(results_dir(c), r["id"]))}
                 for i, r in enumerate(runs)]}, indent=1))
    return 0


def cmd_list(c, runs):
    for i, r in enumerate(runs):
        print(i, r["id"], r["launch"]["ranks"], " ".join(f"{k}={v}" for k, v in sorted(r["params"].items())))
    return 0


def cmd_run_one(c, runs, index):
    run = runs[index]
    if run_status(os.path.join(results_dir(c), run["id"])) == "finished":
        print(f"{run['id']}: already finished")
        return 0
    st = run_one(c, run)
    print(f"{run['id']}: {st}")
    return 0 if st in ("finished", "hung") else 1


def cmd_gather(c, runs):
    write_index(c, runs)
    print(f"wrote {os.path.join(results_dir(c), 'runs.csv')}")
    return 0


def arguments():
    ap = argparse.ArgumentParser(prog="campaign.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in ("list", "run", "run-one", "plan", "status", "gather"):
        p = sub.add_parser(name)
        p.add_argument("file", metavar="FILE", help="the campaign file")
        if name == "run-one":
            p.add_argument("index", metavar="INDEX", type=int, help="the run's number in `list`")
        if name == "status":
            p.add_argument("--queued", action="store_true",
                           help="jobs of the campaign are queued: runs not yet run are pending")
    return ap


def main(argv):
    ap = arguments()
    a = ap.parse_args(argv)
    try:
        c = parse(a.file)
        runs = expand(c)
    except CampaignError as e:
        print(f"campaign: error: {e}", file=sys.stderr)
        return 2
    if a.command == "run-one" and not 0 <= a.index < len(runs):
        ap.error(f"INDEX {a.index} is not a run of {a.file} (0..{len(runs) - 1})")
    commands = {"list": cmd_list, "run": cmd_run, "plan": cmd_plan, "gather": cmd_gather,
                "status": lambda c, runs: cmd_status(c, runs, a.queued),
                "run-one": lambda c, runs: cmd_run_one(c, runs, a.index)}
    return commands[a.command](c, runs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
