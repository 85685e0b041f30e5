#!/usr/bin/env python3
"""cfgdump.py FILE... -- what experiments/campaign/cfgfile.py makes of a file,
printed as cfgdump.c prints what the C parser makes of it (one line per
entry, "LINE<TAB>NAME<TAB>VALUE", '\\' and TAB escaped; then "error:
MESSAGE" if the parse stopped; each file after a line "== FILE").  Run with experiments/campaign on
PYTHONPATH."""
import argparse
import sys

import cfgfile


def escaped(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE")
    out = sys.stdout.buffer
    for path in ap.parse_args().files:
        out.write(f"== {path}\n".encode())
        try:
            for name, value, line in cfgfile.entries(cfgfile.read(path), path):
                out.write(f"{line}\t{escaped(name)}\t{escaped(value)}\n".encode())
        except cfgfile.ConfigError as e:
            out.write(f"error: {e}\n".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
