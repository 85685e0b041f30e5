#!/usr/bin/env python3
"""profile_parts.py -- where re-replication's processor time goes, from
`perf script` output (perf record -a --call-graph dwarf of one
bench_recovery run, every process) on stdin.

Every sample whose stack passes through kvr_rereplicate is charged to one
part: the first of PARTS, in order, one of whose functions is on the
stack below kvr_rereplicate (so a page fault inside a pack's append is a
page fault, and a hash inside an insert is a hash).  The window is the
time from the first such sample to the last; every other sample taken in
it, on any core, is "idle" (the kernel's idle task), "profiler" (perf's
own process, whose work -- copying the stacks it samples, faulting in its
buffers -- would otherwise look like the run's page faults), or charged
by its whole stack to one of OUTSIDE (page faults, the kernel's socket
work, MPI waiting in sched_yield or epoll, the rest of MPI) or
"elsewhere: other"; these are also the stacks too deep to reach
kvr_rereplicate.  With
the window's wall time times the cores, they show whether the cores were
busy throughout.  Prints CSV rows part,samples,cpu_ms,cpu_ms_per_survivor,
share (of all the window's samples); cpu_ms is samples over the sampling
frequency, the last row the window's wall time.
  perf script ... | profile_parts.py FREQ_HZ SURVIVORS
"""
import sys

MPI_MARKS = ("MPI_", "PMPI_", "ompi_", "opal_", "mca_")

# (part, functions that mark it), innermost concern first
PARTS = [
    ("page faults", ("exc_page_fault",)),
    ("placement", ("kvh_place", "kvh_replicas")),
    ("key hash", ("kvh_hash",)),
    ("check word", ("kvs_decode", "kvs_encode")),
    ("key compare", ("kvs_key_is",)),
    ("pack append", ("kvr_stream_add",)),
    ("mpi", MPI_MARKS),
    ("insert probe", ("insert_at",)),
    ("insert stream", ("kvr_insert_all",)),
    ("lock repair and journals", ("kvr_break_lock", "kvr_settle_journals", "kvr_share_affected")),
    ("table scan", ("kvr_rereplicate",)),  # the rest: on every stack charged here
]


# the window's other samples, by the same rule over their whole stack
OUTSIDE = [
    ("elsewhere: page faults", ("exc_page_fault",)),
    ("elsewhere: tcp sockets", ("tcp_", "sock_", "sys_sendto", "sys_recvfrom", "sys_sendmsg",
                                "sys_recvmsg", "readv", "writev")),
    ("elsewhere: mpi waiting", ("sched_yield", "do_sched_yield", "epoll")),
    ("elsewhere: mpi", MPI_MARKS),
]


def function(frame):
    """The function name of one `perf script` stack line."""
    parts = frame.split(None, 1)
    name = parts[1] if len(parts) > 1 else parts[0]
    return name.split(" (")[0].split("+0x")[0]


def part_of(stack):
    """The part a stack (innermost first) is charged to, or None."""
    names = [function(f) for f in stack]
    if "kvr_rereplicate" not in names:
        return None
    below = names[:names.index("kvr_rereplicate") + 1]
    return next(part for part, marks in PARTS if any(n.startswith(m) for n in below for m in marks))


# the window's samples charged by their process's command, whatever their stack
BY_COMMAND = {"perf": "profiler", "swapper": "idle"}


def outside_part(comm, stack):
    """The part of a sample in the window that is not under kvr_rereplicate."""
    if comm in BY_COMMAND:
        return BY_COMMAND[comm]
    names = [function(f) for f in stack]
    for part, marks in OUTSIDE:  # by substring: the kernel's names carry prefixes
        if any(m in n for n in names for m in marks):
            return part
    return "elsewhere: other"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: profile_parts.py FREQ_HZ SURVIVORS < perf-script-output")
    freq, survivors = float(sys.argv[1]), int(sys.argv[2])
    samples, stack, head = [], [], None  # (time, part)
    for line in list(sys.stdin) + [""]:
        if not line.strip():
            if head:
                samples.append((head[0], part_of(stack) or outside_part(head[1], stack)))
            stack, head = [], None
        elif head is None:  # the sample's own line: command, pid, [cpu], time:, event
            words = line.split()
            at = next((float(w[:-1]) for w in words if w.endswith(":") and w[:-1].replace(".", "").isdigit()), None)
            head = (at, words[0])
        else:
            stack.append(line.strip())
    mine = {part for part, _ in PARTS}
    ours = [t for t, part in samples if part in mine]
    if not ours:
        sys.exit("profile_parts.py: no sample under kvr_rereplicate")
    t0, t1 = min(ours), max(ours)
    names = [part for part, _ in PARTS + OUTSIDE] + ["elsewhere: other"] + list(BY_COMMAND.values())
    counts = {part: 0 for part in names}
    for t, part in samples:
        if t is not None and t0 <= t <= t1:
            counts[part] += 1
    total = sum(counts.values())
    print("part,samples,cpu_ms,cpu_ms_per_survivor,share")
    for part, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        ms = 1e3 * n / freq
        print(f'"{part}",{n},{ms:.1f},{ms / survivors:.1f},{n / total:.3f}')
    print(f'"window (wall)",,{1e3 * (t1 - t0):.1f},,')


if __name__ == "__main__":
    main()
