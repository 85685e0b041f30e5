#!/usr/bin/env python3
"""fuzz_campaign.py -- campaign files are parsed by Python (campaign.py), so
libFuzzer does not reach them; this mutates the committed campaigns (and the
seeds in tests/fuzz/corpus/fuzz_cfgfile) for SECONDS and feeds each result
to campaign.parse and campaign.expand.  Pass rule: every input is accepted
or refused with CampaignError (a message naming file and line); any other
exception is a failure, and the input is written to build/fuzz/ to become a
regression input in tests/fuzz/regressions/fuzz_campaign/ (replayed first).
Usage: fuzz_campaign.py [SECONDS], with experiments/campaign on PYTHONPATH
(tests/fuzz/run.sh sets it).
"""
import argparse
import glob
import os
import random
import sys
import tempfile
import time
import traceback

import campaign

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TOKENS = [b"[campaign]", b"[sweep]", b"[fixed]", b"=", b",", b"\"", b"#", b";", b"\n", b"ranks",
          b"store.variant", b"repetitions", b"0", b"-1", b"99999999999999999999", b"\xff", b"\x00",
          b"name", b"a b", b"''", b"\\\"", b"\r\n", b"workload.records = 1,2,,3"]


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(5)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 1:
            data[pos:pos] = rng.choice(TOKENS)
        elif op == 2 and data:
            del data[pos:pos + rng.randint(1, 40)]
        elif op == 3 and data:
            a = rng.randrange(len(data))
            data[pos:pos] = data[a:a + rng.randint(1, 80)]
        else:
            lines = data.split(b"\n")
            rng.shuffle(lines)
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def one(data, path):
    with open(path, "wb") as f:
        f.write(data)
    try:
        c = campaign.parse(path)
        campaign.expand(c)
    except campaign.CampaignError:
        pass


def main():
    ap = argparse.ArgumentParser(description="Mutation fuzzer of the campaign file parser.")
    ap.add_argument("seconds", nargs="?", type=float, default=20.0, help="how long (default 20)")
    secs = ap.parse_args().seconds
    seeds = [open(p, "rb").read() for p in sorted(glob.glob(os.path.join(ROOT, "experiments", "campaign", "campaigns", "*.campaign"))
                                                 + glob.glob(os.path.join(ROOT, "tests", "fuzz", "corpus", "fuzz_cfgfile", "*")))]
    regress = sorted(glob.glob(os.path.join(ROOT, "tests", "fuzz", "regressions", "fuzz_campaign", "*")))
    out = os.path.join(ROOT, "build", "fuzz")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(int(os.environ.get("FUZZ_SEED", "1")))
    fd, path = tempfile.mkstemp(suffix=".campaign")
    os.close(fd)
    n, t_end = 0, time.time() + secs
    try:
        for data in [open(p, "rb").read() for p in regress] + seeds:
            one(data, path)
        while time.time() < t_end:
            data = mutate(rng, rng.choice(seeds))
            try:
                one(data, path)
            except Exception:  # noqa: BLE001 -- anything but CampaignError is the finding
                crash = os.path.join(out, f"fuzz_campaign-crash-{n}")
                with open(crash, "wb") as f:
                    f.write(data)
                traceback.print_exc()
                print(f"FAIL  fuzz_campaign: {crash}")
                return 1
            n += 1
    finally:
        os.remove(path)
    print(f"ok    fuzz_campaign: {n} inputs in {secs:g}s, no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
