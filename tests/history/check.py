#!/usr/bin/env python3
"""check.py -- is a recorded store history linearizable, and durable?

Reads the operation logs that tests/history/client.c wrote (LOGDIR/ops.N,
one per rank) and checks every key on its own: keys are independent
registers, so the history of the whole store is linearizable exactly when
each key's is (linearizability is compositional).  A key is a register
holding a value or nothing; put(v) sets it, del empties it (and answers
notfound when it was empty already), get reads it.

An operation counts by what its caller was told:
  ok / notfound      it took effect at one instant between call and return;
  interrupted        a failure cut it short: it took effect or it did not,
                     before it returned (recovery settles every replica
                     before the call returns);
  no return line     its rank died: it took effect or not, at any time
                     after the call;
  busy / error       a write that changed nothing (the store reports these
                     before any replica is written); a read that says
                     nothing.
Because the survivors read every key at the end, a lost acknowledged write
or delete shows up as a read no order can explain.  The summary also says
how many recoveries a rank ran at most (its "N" line): a run in which
nobody died must have run none; when the last survivor noticed the
first failure (the "D" lines), from which run.sh measures detection; and,
with --evicted, the operations that ranks reported failed while alive
answered although their clients asked them once a survivor served again
without them (there must be none: the store's fence, kvstore/fence.c,
lets such a rank answer only what it was asked before; an answer to an
earlier question may come later, and the history must explain it).

The search is Wing and Gong's, with memoisation of (operations linearized,
register value) as in Lowe's and Porcupine's versions: operations are
taken in call order, one of those called before the earliest pending
return is linearized next, and a dead end backtracks.  Exit 0 when every
key is linearizable and every log's audit line says 0 divergent pairs,
1 otherwise; the reasons go to stdout, and --json writes a summary.
"""
import argparse
import glob
import json
import os
import sys

INF = float("inf")


class Op:
    __slots__ = ("rank", "seq", "call", "ret", "key", "kind", "arg", "result", "value", "optional",
                 "final")

    def __init__(self, rank, seq, call, key, kind, arg):
        self.rank, self.seq, self.call, self.key, self.kind, self.arg = rank, seq, call, key, kind, arg
        self.ret, self.result, self.value, self.optional = INF, None, None, True
        self.final = False  # one of the survivors' reads at the end

    def __repr__(self):
        r = "pending" if self.result is None else f"{self.result} {self.value or ''}".strip()
        return f"rank {self.rank} #{self.seq} {self.kind} {self.key} {self.arg or ''} -> {r}"


def read_logs(logdir):
    """Operations by key, the audit counts, the recovery counts and when
    each rank noticed the first failure, from every ops.N file."""
    by_key, audits, recoveries, noticed, problems = {}, {}, {}, {}, []
    files = sorted(glob.glob(os.path.join(logdir, "ops.*")))
    if not files:
        raise SystemExit(f"check.py: no ops.N logs in {logdir}")
    for path in files:
        rank = int(path.rsplit(".", 1)[1])
        calls, final = {}, False
        with open(path, encoding="ascii", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                w = line.split()
                if not line.endswith("\n"):
                    continue  # the last line of a killed rank may be cut short
                if w[:1] == ["C"] and len(w) == 6:
                    op = Op(rank, int(w[1]), int(w[2]), w[3], w[4], None if w[5] == "-" else w[5])
                    op.final = final
                    calls[op.seq] = op
                    by_key.setdefault(op.key, []).append(op)
                elif w[:1] == ["R"] and len(w) == 5 and int(w[1]) in calls:
                    op = calls[int(w[1])]
                    op.ret, op.result = int(w[2]), w[3]
                    op.value = None if w[4] == "-" else w[4]
                elif w[:1] == ["A"] and len(w) == 2:
                    audits[rank] = int(w[1])
                elif w[:1] == ["N"] and len(w) == 3:
                    recoveries[rank] = int(w[1])
                elif w[:1] == ["D"] and len(w) in (2, 4):
                    noticed[rank] = (int(w[1]), int(w[3]) if len(w) == 4 else None)
                elif w == ["P", "final"]:
                    final = True
                else:
                    problems.append(f"{path}:{lineno}: unreadable line {line.strip()!r}")
    return by_key, audits, recoveries, noticed, problems


def classify(ops):
    """Drop operations that say nothing; mark those of unknown effect."""
    kept = []
    for op in ops:
        if op.result is None:  # its rank died during the call
            if op.kind == "get":
                continue
            op.ret, op.optional = INF, True
        elif op.result in ("ok", "notfound"):
            op.optional = False
        elif op.result == "interrupted":
            if op.kind == "get":
                continue
            op.optional = True
        else:  # busy, error: nothing changed, nothing learned
            continue
        kept.append(op)
    return kept


def step(state, op):
    """(allowed, new state) for op applied to the register value `state`."""
    if op.kind == "put":
        return (op.optional or op.result == "ok"), op.arg
    if op.kind == "del":
        if op.optional:
            return True, None
        if op.result == "ok":
            return state is not None, None
        return state is None, None
    if op.result == "ok":
        return state == op.value, state
    return state is None, state


def linearizable(ops):
    """Wing-Gong search over one key's operations; True or False."""
    events = []  # (time, order, is_return, index)
    for i, op in enumerate(ops):
        events.append((op.call, 0, False, i))
        if not op.optional:
            events.append((op.ret, 1, True, i))
    events.sort()
    # A doubly linked list of the events still to be placed.
    n = len(events)
    nxt = list(range(1, n + 1)) + [None]
    prv = [None] + list(range(n))
    head = 0 if n else None
    call_at = {}
    ret_at = {}
    for pos, (_, _, is_ret, i) in enumerate(events):
        (ret_at if is_ret else call_at)[i] = pos
    required = sum(1 for op in ops if not op.optional)

    def unlink(pos):
        nonlocal head
        p, q = prv[pos], nxt[pos]
        if p is None:
            head = q
        else:
            nxt[p] = q
        if q is not None:
            prv[q] = p

    def relink(pos):
        nonlocal head
        p, q = prv[pos], nxt[pos]
        if p is None:
            head = pos
        else:
            nxt[p] = pos
        if q is not None:
            prv[q] = pos

    state, done, placed = None, 0, 0
    seen = set()
    stack = []  # (call position, previous state)
    cur = head
    while placed < required:
        if cur is None:
            return False  # only optional calls left, yet a return is pending
        _, _, is_ret, i = events[cur]
        if not is_ret:
            op = ops[i]
            ok, new = step(state, op)
            nd = done | (1 << i)
            if ok and (nd, new) not in seen:
                seen.add((nd, new))
                stack.append((cur, state))
                state, done = new, nd
                placed += not op.optional
                unlink(cur)
                if i in ret_at:
                    unlink(ret_at[i])
                cur = head
                continue
            cur = nxt[cur]
            continue
        # A return whose operation is not placed yet: undo the last choice.
        if not stack:
            return False
        pos, state = stack.pop()
        i = events[pos][3]
        done &= ~(1 << i)
        placed -= not ops[i].optional
        if i in ret_at:
            relink(ret_at[i])
        relink(pos)
        cur = nxt[pos]
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logdir", help="directory with the client's ops.N logs")
    ap.add_argument("--json", help="write a summary here")
    ap.add_argument("--evicted", default="", metavar="RANKS",
                    help="ranks (comma-separated) reported failed while alive: none may answer an "
                         "operation its client asked once a survivor served again without them")
    a = ap.parse_args()
    by_key, audits, recoveries, noticed, problems = read_logs(a.logdir)
    evicted = {int(r) for r in a.evicted.split(",") if r}
    resumed = min((m for r, (_, m) in noticed.items() if m is not None and r not in evicted), default=None)
    late = [] if resumed is None else [op for ops in by_key.values() for op in ops
                                       if op.rank in evicted and op.result is not None and op.call >= resumed]
    for op in sorted(late, key=lambda o: o.call)[:10]:
        print(f"evicted rank {op.rank} answered what it was asked after the others served again "
              f"without it: {op!r}")
    bad_keys, lost_keys = [], []
    nops = 0
    for key in sorted(by_key):
        ops = classify(by_key[key])
        nops += len(ops)
        if not linearizable(ops):
            bad_keys.append(key)
            # Linearizable without the final reads: what was acknowledged
            # is not what the survivors read at the end.
            if linearizable([op for op in ops if not op.final]):
                lost_keys.append(key)
                print(f"lost: key {key}: the final reads contradict the acknowledged operations")
            print(f"key {key}: not linearizable ({len(ops)} operations); its history:")
            for op in sorted(ops, key=lambda o: o.call):
                print(f"  {op.call} .. {op.ret}  {op!r}")
    divergent = max(audits.values()) if audits else None
    for p in problems:
        print(p)
    if divergent is None:
        print("no audit line: no survivor finished")
    elif divergent:
        print(f"kv_audit: {divergent} divergent pairs")
    summary = {"keys": len(by_key), "operations": nops, "nonlinearizable_keys": bad_keys,
               "lost_keys": lost_keys,
               "divergent": divergent, "problems": len(problems),
               # the most recoveries any rank ran; -1 when no rank said
               "recoveries": max(recoveries.values()) if recoveries else -1,
               # when the last survivor noticed the first failure (wall ns); None: none did
               "noticed_last_ns": max(w for w, _ in noticed.values()) if noticed else None,
               "evicted_answers": len(late)}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f)
    ok = not bad_keys and divergent == 0 and not problems and not late
    print(f"history: {nops} operations on {len(by_key)} keys: "
          f"{'linearizable' if not bad_keys else f'{len(bad_keys)} keys NOT linearizable'}, "
          f"divergent {divergent}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
