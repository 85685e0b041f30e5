"""benchfiles.py -- reading the benchmark files of results/bench/ for the
figure scripts that draw them (fig_checkpoint_bench.py, fig_proposed.py)."""
import csv
import os


def rows(path):
    """The rows of CSV file path as dicts; none when it does not exist."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    """x as a float, or None for an empty or NA field."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return None
