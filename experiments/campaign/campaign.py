#!/usr/bin/env python3
"""campaign.py -- expand, run and track experiment campaigns.

A campaign file (format in docs/formats.md) lists a sweep; it expands to
runs with stable identifiers (derived from their parameters and the
campaign seed).  Each run draws its own failure and workload seeds from
the campaign seed and its identifier, so repetitions differ and a rerun of
one identifier repeats it exactly.  A run keeps its outcome: a rerun skips
runs that finished and also those that failed, crashed or hung, unless
--retry-failed asks for them again.  Where runs go (this host, the test
cluster, a hostfile, a Slurm allocation) is scripts/kvrun's choice, with
the shape each run asks for (shape.py).  Before runs across nodes the MPI
is classified where they run (scripts/mpiprobe, kept as mpiprobe.json in
the campaign's results): a run that needs what it lacks (a rank loss
across nodes, a node loss, the proposed RMA features) is recorded
"unsupported" with the reason instead of being run, so an MPI's hangs are
never counted as a variant's.  Commands:

  campaign.py list FILE              the runs it expands to
  campaign.py run FILE [--retry-failed] [--cluster | --hostfile F]
                                     run them here, one after another
  campaign.py run-one FILE RUN       run one, by number in `list` or by id
                                     (what a Slurm array task does)
  campaign.py check FILE --nodes N --cores-per-node C
                                     can a cluster of that shape hold every run?
  campaign.py plan FILE              settings and runs with their status, as JSON
                                     (what slurm/slurm_submit.py submits)
  campaign.py status FILE            finished / failed / hung / not run
  campaign.py gather FILE            rebuild runs.csv from the run directories
  campaign.py record FILE RUN STATUS REASON
                                     a run that ended without a result (its
                                     Slurm task died): the runner's meta.json
Results go to $KV_RESULTS (default results/)/CAMPAIGN/RUN_ID/.  This file
knows nothing of Slurm: slurm/ calls these commands.
"""
import argparse
import collections
import fcntl
import hashlib
import itertools
import json
import os
import re
import subprocess
import sys
import time

import cfgfile
import shape

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCH_KEYS = {"ranks", "nodes", "ranks_per_node"}
CAMPAIGN_KEYS = {"name", "repetitions", "time_limit_s", "spares_for_spare_variant",
                 "description", "throttle", "seed", "mca", "interface", "launcher_node"}
# A run's outcomes: kvrun's verdicts, and "unsupported" for a run the MPI
# cannot support (scripts/mpiprobe said so; not run).  Every one but the
# first is retried by --retry-failed, here and in slurm/slurm_submit.py
# (from `plan`); analysis/results.py reads them from here.
OUTCOMES = ("finished", "failed", "crashed", "hung", "aborted", "unsupported")
NOT_PASSED = OUTCOMES[1:]
SEED_ITEM = re.compile(r"(^|[;\n])\s*seed\s*=")
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
                            f"{', '.join(sorted(CAMPAIGN_KEYS))}; batch settings such as account, "
                            "partition and modules go in [slurm])")
    if section in ("sweep", "fixed") and not NAME_RE.match(name):
        raise CampaignError(f"{where}: {name!r} is not store.X, workload.X, driver.X, "
                            "ranks, nodes or ranks_per_node")
    if name in out[section]:
        raise CampaignError(f"{where}: {name!r} given twice")
    if name == "workload.seed" or (name == "driver.failures" and SEED_ITEM.search(value)):
        raise CampaignError(f"{where}: {name}: seeds are drawn for each run from [campaign] seed "
                            "and the run id; set [campaign] seed instead")
    if section == "sweep":
        items = [v.strip() for v in value.split(",")]
        if any(not v for v in items):
            raise CampaignError(f"{where}: empty item in the list {value!r}")
        out[section][name] = items
    else:
        out[section][name] = value
    if name == "launcher_node" and value not in ("shared", "own"):
        raise CampaignError(f"{where}: launcher_node must be 'shared' (mpirun beside rank 0, the "
                            f"default) or 'own' (mpirun on a node without ranks), not {value!r}")
    if name in LAUNCH_KEYS | {"repetitions", "time_limit_s", "throttle", "spares_for_spare_variant", "seed"}:
        for v in (out[section][name] if section == "sweep" else [value]):
            if not re.fullmatch(r"[1-9][0-9]*", v) and not (name in ("spares_for_spare_variant", "seed")
                                                            and v == "0"):
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
    """The list of runs: dicts with 'params', 'launch' (shape.launch_of),
    'id', 'rep' and 'seeds'."""
    keys = sorted(c["sweep"])
    reps = int(c["campaign"].get("repetitions", "1"))
    seed = int(c["campaign"].get("seed", "1"))
    runs, seen = [], set()
    for combo in itertools.product(*(c["sweep"][k] for k in keys)):
        params = dict(c["fixed"])
        params.update(zip(keys, combo))
        if params.get("store.variant") in ("none", "checkpoint-restart"):
            params["store.replicas"] = "1"  # no replicas in these: r = 1 (duplicates go below)
        asked = {k: int(params.pop(k)) for k in list(params) if k in LAUNCH_KEYS}
        spares = 0
        if params.get("store.variant") == "spare" and "store.spares" not in params:
            spares = int(c["campaign"].get("spares_for_spare_variant", "1"))
            params["store.spares"] = str(spares)
        launch = shape.launch_of(asked, spares, c["campaign"].get("launcher_node") == "own")
        for rep in range(1, reps + 1):
            run = make_run(params, launch, rep, seed)
            if run["id"] not in seen:  # one baseline per point of the others
                seen.add(run["id"])
                runs.append(run)
    return runs


def make_run(params, launch, rep, seed):
    where = {"ranks": launch["ranks"], "nodes": launch["nodes"]}
    if launch["ranks_per_node"]:
        where["ranks_per_node"] = launch["ranks_per_node"]
    if launch.get("launcher_alone"):   # only then: the ids of other runs stay as they were
        where["launcher_alone"] = True
    desc = json.dumps({"p": params, "l": where, "s": seed}, sort_keys=True)
    digest = hashlib.sha1(desc.encode()).hexdigest()[:8]
    short = "-".join(x for x in (params.get("store.variant", "recreate-copy"),
                                 params.get("store.backend", "allocate"),
                                 f"n{launch['ranks']}", f"r{params.get('store.replicas', '2')}",
                                 params.get("workload.workload", "custom")) if x)
    rid = f"{short}-{digest}-rep{rep}"
    return {"params": params, "launch": launch, "rep": rep, "id": rid,
            "seeds": {"failure": draw_seed(seed, rid, "failure"), "workload": draw_seed(seed, rid, "workload")}}


def draw_seed(campaign_seed, run_id, what):
    """A run's own seed for `what`, from the campaign seed and its id: the
    same on every machine and every rerun (1 .. 2^62)."""
    h = hashlib.sha256(f"{campaign_seed}/{run_id}/{what}".encode()).digest()
    return (int.from_bytes(h[:8], "big") >> 2) or 1


def driver_args(run):
    """The run's driver settings, its seeds included."""
    p = dict(run["params"])
    p["workload.seed"] = str(run["seeds"]["workload"])
    if p.get("driver.failures"):
        p["driver.failures"] = f"{p['driver.failures'].rstrip().rstrip(';')}; seed={run['seeds']['failure']}"
    return [f"{k}={v}" for k, v in sorted(p.items())]


def results_dir(c):
    return os.path.join(os.environ.get("KV_RESULTS", os.path.join(ROOT, "results")), c["campaign"]["name"])


def run_status(rdir):
    """finished, failed, crashed, hung, aborted, or None when never run (a
    run without its meta.json; runs that started are given one at their
    end)."""
    meta = os.path.join(rdir, "meta.json")
    try:
        return json.load(open(meta)).get("status")
    except (OSError, ValueError):
        return None


def kvrun_command(c, run, where, dry=False):
    """scripts/kvrun's command line for a run: its shape, the campaign's
    network interface, the place (where: [] for kvrun's own choice,
    ['--cluster'] or ['--hostfile', F])."""
    cmd = [os.path.join(ROOT, "scripts", "kvrun")] + shape.kvrun_args(run["launch"]) + list(where)
    cmd += ["--timeout", c["campaign"].get("time_limit_s", "300")]
    if c["campaign"].get("interface"):
        cmd += ["--if", c["campaign"]["interface"]]
    return cmd + (["--dry-run"] if dry else [])


def kvrun_env(c, **more):
    """The environment of a launch: the campaign's MCA settings (KV_MCA)."""
    env = dict(os.environ, **more)
    if c["campaign"].get("mca"):
        env["KV_MCA"] = (env.get("KV_MCA", "") + " " + c["campaign"]["mca"]).strip()
    return env


def run_one(c, run, where=(), probe=None):
    """Run one run here under the launcher; returns its status.  With a
    probe record (mpiprobe.json) a run its MPI cannot support is recorded
    unsupported instead."""
    rdir = os.path.join(results_dir(c), run["id"])
    os.makedirs(rdir, exist_ok=True)
    why = probe and unsupported(run, probe)
    if why:
        write_stub_meta(c, run, rdir, "unsupported", None, f"not run: {why} (mpiprobe.json)")
        return "unsupported"
    before = earlier_attempts(rdir)
    for stale in ("kills.csv", "meta.json", "launch.txt"):  # a retry starts clean
        if os.path.exists(os.path.join(rdir, stale)):
            os.remove(os.path.join(rdir, stale))
    args = driver_args(run)
    args += [f"driver.out={rdir}", f"driver.campaign={c['campaign']['name']}",
             f"driver.run_id={run['id']}", "driver.progress=0"]
    cmd = kvrun_command(c, run, where) + ["--out", os.path.join(rdir, "ranks"), "--",
           os.path.join(os.environ.get("KV_BUILD") or os.path.join(ROOT, "build"), "bin", "kv_driver")] + args
    env = kvrun_env(c, KVRUN_CMD_FILE=os.path.join(rdir, "launch.txt"))
    t0 = time.time()
    with open(os.path.join(rdir, "started.json"), "w") as f:  # the batch system's trace
        json.dump(attempt_record(t0, before), f)
    ckpt = run["params"].get("store.variant") == "checkpoint-restart"
    if ckpt:  # a death ends the job (no ULFM); the launcher restarts it below
        if "store.checkpoint_dir" not in run["params"]:
            cmd.append(f"store.checkpoint_dir={os.path.join(rdir, 'checkpoints')}")
        cmd.insert(cmd.index("--"), "--no-ft")
    with open(os.path.join(rdir, "launcher.log"), "w") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    if ckpt and rc != 0 and os.path.exists(os.path.join(rdir, "kills.csv")):
        # Checkpoint/restart: start the job again at once; it reloads the
        # latest checkpoint and runs the workload on, without the failures.
        ended = time.time()
        again = [a for a in cmd if not a.startswith(("driver.failures=", "driver.checkpoint_s="))]
        again += ["driver.restore=1", "driver.failures="]
        with open(os.path.join(rdir, "launcher.log"), "a") as log:
            log.write(f"campaign.py: job ended (kvrun exit {rc}); restarting it to restore\n")
            log.flush()
            rc = subprocess.call(again, stdout=log, stderr=subprocess.STDOUT, env=env)
        with open(os.path.join(rdir, "restart.json"), "w") as f:
            json.dump({"job_ended_and_restarted_wallclock": ended,
                       "second_job_exit": rc}, f, indent=1)
    status = {0: "finished", 1: "failed", 2: "crashed", 3: "hung", 4: "aborted"}.get(rc, "failed")
    if status != "finished" or run_status(rdir) is None:
        write_stub_meta(c, run, rdir, status if status != "finished" else "failed", time.time() - t0)
    add_launch(rdir, before)
    return run_status(rdir)


def earlier_attempts(rdir):
    """The attempts of this run before the one starting now, oldest first,
    each as started.json recorded it plus the outcome it left ('ended
    without a result' when none: its task or node died, or Slurm requeued
    it).  A Slurm requeue reruns a task under the same job id, so this is
    where a requeued run says so."""
    try:
        with open(os.path.join(rdir, "started.json")) as f:
            last = json.load(f)
    except (OSError, ValueError):
        return []
    older = last.pop("earlier_attempts", [])
    last["outcome"] = run_status(rdir) or "ended without a result"
    return older + [last]


def attempt_record(t0, before):
    """started.json: who runs this attempt, and the attempts before it."""
    rec = {"job_id": slurm_job_id(), "host": os.uname().nodename, "time": t0,
           "slurm_restart_count": int(os.environ.get("SLURM_RESTART_COUNT", "0") or 0)}
    if before:
        rec["earlier_attempts"] = before
    return rec


def add_launch(rdir, before=()):
    """meta.json gets the exact launch command kvrun wrote (launch.txt), and
    the run's earlier attempts with Slurm's restart count when there were."""
    try:
        with open(os.path.join(rdir, "launch.txt")) as f:
            line = f.read().strip()
        with open(os.path.join(rdir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return
    meta["launch_command"] = line
    meta["slurm_restart_count"] = int(os.environ.get("SLURM_RESTART_COUNT", "0") or 0)
    if before:
        meta["earlier_attempts"] = list(before)
    with open(os.path.join(rdir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def write_stub_meta(c, run, rdir, status, wall_s, reason=None):
    """A run that ended without its own meta.json still says what it was
    (nodes: the nodes it asked for; the driver's own counts those it got)."""
    args = dict(a.split("=", 1) for a in driver_args(run))
    meta = {"campaign": c["campaign"]["name"], "run_id": run["id"], "status": status,
            "variant": run["params"].get("store.variant", "recreate-copy"),
            "backend": run["params"].get("store.backend", "allocate"),
            "ranks": run["launch"]["ranks"], "nodes": run["launch"]["nodes"],
            "replicas": int(run["params"].get("store.replicas", "2")),
            "failures": args.get("driver.failures", ""),
            "failure_seed": run["seeds"]["failure"], "workload_seed": run["seeds"]["workload"],
            "job_id": slurm_job_id(), "wall_s": None if wall_s is None else round(wall_s, 3),
            "params": run["params"]}
    if reason:
        meta["reason"] = reason
    with open(os.path.join(rdir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


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
        f.write("run_id,variant,backend,ranks,nodes,replicas,workload,failures,repetition,"
                "failure_seed,workload_seed,status,wall_s\n")
        for r in runs:
            rdir = os.path.join(d, r["id"])
            meta = {}
            try:
                meta = json.load(open(os.path.join(rdir, "meta.json")))
            except (OSError, ValueError):
                pass
            p = r["params"]
            wall = meta.get("wall_s", meta.get("run_s")) or "NA"
            fail = p.get("driver.failures", "").replace('"', "'")
            f.write(f"{r['id']},{p.get('store.variant', 'recreate-copy')},{p.get('store.backend', 'allocate')},"
                    f"{r['launch']['ranks']},{meta.get('nodes', r['launch']['nodes'])},"
                    f"{p.get('store.replicas', '2')},{p.get('workload.workload', 'custom')},\"{fail}\","
                    f"{r['rep']},{r['seeds']['failure']},{r['seeds']['workload']},"
                    f"{meta.get('status', 'pending')},{wall}\n")


def preflight(c, runs, where):
    """Every shape of the campaign can be launched here: kvrun --dry-run
    says so, or the message says which group cannot and why."""
    seen = {}
    for r in runs:
        seen.setdefault(shape.key(r["launch"]), r)
    for r in seen.values():
        res = subprocess.run(kvrun_command(c, r, where, dry=True) + ["--", "true"], capture_output=True,
                             text=True, env=kvrun_env(c))
        if res.returncode != 0:
            why = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else f"exit {res.returncode}"
            raise CampaignError(f"runs of {shape.describe(r['launch'])} (e.g. {r['id']}) cannot be "
                                f"launched here: {why}")


def needs(run):
    """What a run asks of its MPI: (probe field, value wanted, what for)."""
    out = []
    if run["params"].get("store.variant") == "proposed":
        out.append(("proposed_rma", "yes", "variant proposed needs the proposed RMA features"))
    spec = run["params"].get("driver.failures", "")
    if re.search(r"target\s*=\s*node", spec):
        out.append(("node_loss", "survives", "its failures are node losses"))
    elif spec.strip() and run["launch"]["nodes"] > 1 and run["params"].get("store.variant") != "checkpoint-restart":
        out.append(("rank_loss", "survives", "its failures are rank losses across nodes"))
    return out


def probe_mpi(c, where, fresh=False):
    """scripts/mpiprobe's record for where the runs go, made once per
    campaign, place, MPI, transport and MCA settings
    (results/CAMPAIGN/mpiprobe.json) unless fresh.  Array tasks that start
    together take turns (a lock beside it): the first probes, the others
    find its record."""
    path = os.path.join(results_dir(c), "mpiprobe.json")
    env = kvrun_env(c)
    want = {"where": " ".join(where) or "local", "mpi_home": mpi_home(),
            "transport": env.get("KV_TRANSPORT") or "tcp", "mca": env.get("KV_MCA", "")}
    os.makedirs(results_dir(c), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            rec = json.load(open(path))
            if not fresh and all(rec.get(k) == v for k, v in want.items()):
                return rec
        except (OSError, ValueError):
            pass
        return run_probe(where, path, env)


def run_probe(where, path, env):
    res = subprocess.run([os.path.join(ROOT, "scripts", "mpiprobe"), *where, "--out", path],
                         capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise CampaignError(f"scripts/mpiprobe could not classify the MPI: "
                            f"{(res.stderr.strip().splitlines() or ['exit ' + str(res.returncode)])[-1]}")
    print(res.stdout.strip(), flush=True)
    return json.load(open(path))


def mpi_home():
    """The MPI kvrun launches with: KV_MPI_ENV's, else build/mpi.env's."""
    try:
        with open(os.environ.get("KV_MPI_ENV") or os.path.join(ROOT, "build", "mpi.env")) as f:
            return next((ln.split("=", 1)[1].strip().strip("'\"") for ln in f
                         if ln.startswith("export MPI_HOME=")), None)
    except OSError:
        return None


def unsupported(run, probe):
    """Why the probed MPI cannot support this run (None: it can)."""
    why = [f"{what}, and the MPI's {field.replace('_', ' ')} probe says {probe.get(field, 'nothing')!r}"
           for field, want, what in needs(run) if probe.get(field) != want]
    return "; ".join(why) or None


def to_run(c, runs, retry):
    """The runs a `run` does: never run, or (retry) any outcome but finished."""
    again = NOT_PASSED if retry else ()
    return [r for r in runs if run_status(os.path.join(results_dir(c), r["id"])) in (None,) + again]


def cmd_run(c, runs, retry, where):
    todo = to_run(c, runs, retry)
    by = collections.Counter(run_status(os.path.join(results_dir(c), r["id"])) for r in runs)
    kept = sum(by[o] for o in NOT_PASSED) if not retry else 0
    print(f"campaign {c['campaign']['name']}: {len(runs)} runs, {by['finished']} already finished, "
          f"{kept} kept as {', '.join(NOT_PASSED)} (--retry-failed runs them again), {len(todo)} to run; "
          f"results in {results_dir(c)}", flush=True)
    if todo:
        preflight(c, todo, where)
    probe = probe_mpi(c, where) if any(r["launch"]["nodes"] > 1 for r in todo) else None
    counts = collections.Counter()
    t0 = time.time()
    for i, r in enumerate(todo, 1):
        st = run_one(c, r, where, probe) or "failed"
        counts[st] += 1
        left = (time.time() - t0) / i * (len(todo) - i)
        print(f"[{i}/{len(todo)}] {r['id']}: {st:8s}  done {counts['finished']}, failed "
              f"{counts['failed'] + counts['crashed']}, hung {counts['hung']}, aborted "
              f"{counts['aborted']}, unsupported {counts['unsupported']}, ~{left:.0f} s left", flush=True)
        write_index(c, runs)
    write_index(c, runs)
    return 0 if counts["failed"] + counts["crashed"] == 0 else 1


def cmd_status(c, runs):
    by = collections.Counter(run_status(os.path.join(results_dir(c), r["id"])) or "not run" for r in runs)
    for st in sorted(by):
        print(f"{st:10s} {by[st]}")
    return 0


def cmd_check(c, runs, nodes, cores):
    """Can a cluster of `nodes` nodes with `cores` cores each hold every run?"""
    overcommit = c["slurm"].get("overcommit") == "1"
    groups = {}
    for r in runs:
        groups.setdefault(shape.key(r["launch"]), []).append(r)
    bad = 0
    print(f"campaign {c['campaign']['name']}: {len(runs)} runs in {len(groups)} groups, against "
          f"{nodes} nodes of {cores} cores")
    for g, (k, rs) in enumerate(sorted(groups.items())):
        why = shape.problems(rs[0]["launch"], nodes, cores, overcommit)
        for r in rs:  # settings the driver would refuse for want of ranks
            data = r["launch"]["ranks"] - r["launch"]["spares"]
            if int(r["params"].get("store.replicas", "2")) > data:
                why.append(f"store.replicas = {r['params']['store.replicas']} with {data} data ranks")
                break
        what = f"group {g}: {shape.describe(rs[0]['launch'])}, {len(rs)} run{'s' if len(rs) > 1 else ''}"
        if why:
            bad += 1
            print(f"campaign: error: {what} (e.g. {rs[0]['id']}): {'; '.join(why)}", file=sys.stderr)
        else:
            print(f"  ok  {what}")
    if bad:
        print(f"campaign: {bad} of {len(groups)} groups cannot run on {nodes} nodes x {cores} cores",
              file=sys.stderr)
    return 2 if bad else 0


def cmd_plan(c, runs):
    """What a batch system needs to submit the campaign."""
    camp = c["campaign"]
    print(json.dumps({
        "name": camp["name"], "file": os.path.abspath(c["_path"]), "results": results_dir(c),
        "time_limit_s": int(camp.get("time_limit_s", "300")), "throttle": camp.get("throttle", "4"),
        "slurm": c["slurm"], "outcomes_not_passed": list(NOT_PASSED),
        "runs": [{"index": i, "id": r["id"], "nodes": shape.allocated(r["launch"]), "ranks": r["launch"]["ranks"],
                  "faults": bool(r["params"].get("driver.failures", "").strip()),
                  "ranks_per_node": r["launch"]["ranks_per_node"],
                  "tasks_per_node": shape.busiest(r["launch"]),
                  "problems": shape.problems(r["launch"]),
                  "dir": os.path.join(results_dir(c), r["id"]),
                  "status": run_status(os.path.join(results_dir(c), r["id"]))}
                 for i, r in enumerate(runs)]}, indent=1))
    return 0


def cmd_list(c, runs):
    for i, r in enumerate(runs):
        print(i, r["id"], r["launch"]["ranks"], " ".join(driver_args(r)))
    return 0


def cmd_run_one(c, runs, index, where):
    run = runs[index]
    st = run_status(os.path.join(results_dir(c), run["id"]))
    if st == "finished":
        print(f"{run['id']}: already finished")
        return 0
    probe = probe_mpi(c, where) if run["launch"]["nodes"] > 1 else None
    st = run_one(c, run, where, probe)
    print(f"{run['id']}: {st}")
    return 0 if st in ("finished", "hung", "unsupported") else 1


def cmd_record(c, runs, index, status, reason):
    """A run that ended without a result, as its batch system saw it."""
    run = runs[index]
    rdir = os.path.join(results_dir(c), run["id"])
    if run_status(rdir) is not None:
        print(f"{run['id']}: has its outcome already ({run_status(rdir)})")
        return 0
    os.makedirs(rdir, exist_ok=True)
    write_stub_meta(c, run, rdir, status, None, reason)
    write_index(c, runs)
    print(f"{run['id']}: recorded {status} ({reason})")
    return 0


def cmd_gather(c, runs):
    write_index(c, runs)
    print(f"wrote {os.path.join(results_dir(c), 'runs.csv')}")
    return 0


def arguments():
    ap = argparse.ArgumentParser(prog="campaign.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in ("list", "run", "run-one", "check", "plan", "status", "gather", "record"):
        p = sub.add_parser(name)
        p.add_argument("file", metavar="FILE", help="the campaign file")
        if name in ("run-one", "record"):
            p.add_argument("run", metavar="RUN", help="the run's number in `list`, or its id")
        if name == "record":
            p.add_argument("status", choices=NOT_PASSED)
            p.add_argument("reason", help="what ended it (e.g. 'Slurm: TIMEOUT')")
        if name == "run":
            p.add_argument("--retry-failed", action="store_true",
                           help=f"run again the runs that ended {', '.join(NOT_PASSED)}")
        if name in ("run", "run-one"):
            w = p.add_mutually_exclusive_group()
            w.add_argument("--cluster", action="store_true", help="on the test cluster (scripts/vcluster)")
            w.add_argument("--hostfile", metavar="F", help="on the hosts of an Open MPI hostfile")
        if name == "check":
            p.add_argument("--nodes", type=int, required=True, help="nodes of the cluster")
            p.add_argument("--cores-per-node", type=int, required=True, help="cores of each node")
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
    if a.command in ("run-one", "record"):
        ids = [r["id"] for r in runs]
        a.index = int(a.run) if re.fullmatch(r"[0-9]+", a.run) else ids.index(a.run) if a.run in ids else -1
        if not 0 <= a.index < len(runs):
            ap.error(f"RUN {a.run} is not a run of {a.file} (0..{len(runs) - 1}, or an id of `list`)")
    if a.command == "check" and (a.nodes < 1 or a.cores_per_node < 1):
        ap.error("--nodes and --cores-per-node must be positive")
    where = ["--cluster"] if getattr(a, "cluster", False) else \
        ["--hostfile", a.hostfile] if getattr(a, "hostfile", None) else []
    commands = {"list": cmd_list, "plan": cmd_plan, "gather": cmd_gather, "status": cmd_status,
                "run": lambda c, runs: cmd_run(c, runs, a.retry_failed, where),
                "run-one": lambda c, runs: cmd_run_one(c, runs, a.index, where),
                "check": lambda c, runs: cmd_check(c, runs, a.nodes, a.cores_per_node),
                "record": lambda c, runs: cmd_record(c, runs, a.index, a.status, a.reason)}
    try:
        return commands[a.command](c, runs)
    except CampaignError as e:
        print(f"campaign: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
