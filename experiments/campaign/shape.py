"""shape.py -- where a campaign's runs go: their launch shape, and whether
a cluster of a given shape can hold them.

A run asks for `ranks` ranks that hold data, plus the spares of variant
spare (together R), on `nodes` nodes, with at most `ranks_per_node` (K) on
a node.  Without nodes, nodes is ceil(R / K) with K, else 1.  R = nodes x K
places exactly K on each node (kvrun --ppn K); otherwise the R ranks are
dealt round-robin over the nodes (kvrun --nodes N -n R), so the busiest
gets ceil(R / nodes), which must not exceed K.  Slurm is asked for the same
(slurm/slurm_submit.py: --nodes and --ntasks-per-node), and problems()
says why a cluster of N nodes with C cores each cannot hold it.  Runs with
one shape form a group: one Slurm job array.  A campaign with
launcher_node = own runs mpirun on a node of its own (kvrun
--launcher-alone): Slurm then allocates one node more than the ranks use.
"""
import math


def launch_of(launch_params, spares, launcher_alone=False):
    """{'ranks', 'nodes', 'ranks_per_node' (0: dealt round-robin), 'spares',
    'launcher_alone'} from the campaign's ranks, nodes and ranks_per_node,
    the spares and whether mpirun gets a node of its own."""
    ranks = launch_params["ranks"] + spares
    rpn = launch_params.get("ranks_per_node", 0)
    nodes = launch_params.get("nodes") or (math.ceil(ranks / rpn) if rpn else 1)
    return {"ranks": ranks, "nodes": nodes, "ranks_per_node": rpn, "spares": spares,
            "launcher_alone": launcher_alone}


def allocated(launch):
    """Nodes the batch system must give: the ranks' and mpirun's own."""
    return launch["nodes"] + (1 if launch.get("launcher_alone") else 0)


def exact(launch):
    """K ranks on every node: --ppn K."""
    k = launch["ranks_per_node"]
    return k and launch["ranks"] == launch["nodes"] * k


def busiest(launch):
    """Ranks on the busiest node."""
    return launch["ranks_per_node"] if exact(launch) else math.ceil(launch["ranks"] / launch["nodes"])


def key(launch):
    """What Slurm must allocate: (nodes, ranks, ranks per node)."""
    return (allocated(launch), launch["ranks"], launch["ranks_per_node"])


def kvrun_args(launch):
    args = ["-n", str(launch["ranks"]), "--nodes", str(launch["nodes"])]
    args += ["--launcher-alone"] if launch.get("launcher_alone") else []
    return args + (["--ppn", str(launch["ranks_per_node"])] if exact(launch) else [])


def describe(launch):
    """'65 ranks (64 + 1 spare) on 4 nodes, 16 per node'."""
    r, s = launch["ranks"], launch["spares"]
    ranks = f"{r} ranks" + (f" ({r - s} + {s} spare{'s' if s > 1 else ''})" if s else "")
    per = f", {busiest(launch)} per node" if exact(launch) else f", up to {busiest(launch)} per node"
    own = ", mpirun on a node of its own" if launch.get("launcher_alone") else ""
    return f"{ranks} on {launch['nodes']} node{'s' if launch['nodes'] > 1 else ''}{per}{own}"


def problems(launch, nodes=None, cores=None, overcommit=False):
    """Why this shape cannot run (on nodes x cores, when given): [text]."""
    out = []
    r, n, k = launch["ranks"], launch["nodes"], launch["ranks_per_node"]
    if k and busiest(launch) > k:
        out.append(f"{r} ranks on {n} nodes put {busiest(launch)} on a node, over ranks_per_node = {k}"
                   + (" (the spares need room too: leave them a core)" if launch["spares"] else ""))
    if r < n:
        out.append(f"{n} nodes for {r} ranks leave a node without a rank")
    if nodes is not None and allocated(launch) > nodes:
        out.append(f"{allocated(launch)} nodes asked for, the cluster has {nodes}")
    if cores is not None and busiest(launch) > cores and not overcommit:
        out.append(f"{busiest(launch)} ranks on a node of {cores} cores (more ranks than cores: "
                   "set [slurm] overcommit = 1 to allow it)")
    return out
