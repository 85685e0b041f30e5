"""stats.py -- how repetitions are summarised, in every table and figure:
the median with a 95% bootstrap confidence interval, and n.

summary(values) takes the values of one cell (None and NaN left out) and
gives Summary(median, lo, hi, n): the interval is scipy.stats.bootstrap's
percentile interval of the median (10,000 resamples, a fixed generator
seed, so a table computed twice is the same table); with one value there
is no interval (lo = hi = None), with none no median.  With few
repetitions the interval of a median cannot be narrower than the spread
of the middle values: five runs give roughly their min-max, which is what
they support.  rate(k, n) is a proportion (hang rate) with its Wilson
95% interval.  text() and the figure helpers print and draw these the
same way everywhere: "12.3 [11.0, 14.2]" and the n beside it.
"""
import collections
import math

import numpy as np
from scipy import stats as st

LEVEL = 0.95
RESAMPLES = 10000
SEED = 20261201

Summary = collections.namedtuple("Summary", "median lo hi n")


def clean(values):
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def summary(values, resamples=RESAMPLES):
    v = np.array(clean(values))
    if len(v) == 0:
        return Summary(None, None, None, 0)
    med = float(np.median(v))
    if len(v) == 1:
        return Summary(med, None, None, 1)
    if np.all(v == v[0]):
        return Summary(med, med, med, len(v))
    ci = st.bootstrap((v,), np.median, confidence_level=LEVEL, n_resamples=resamples, method="percentile",
                      vectorized=True, random_state=np.random.default_rng(SEED)).confidence_interval
    return Summary(med, float(ci.low), float(ci.high), len(v))


def rate(k, n):
    """(k/n, lo, hi): a proportion and its Wilson interval; Nones for n = 0."""
    if n == 0:
        return None, None, None
    ci = st.binomtest(k, n).proportion_ci(LEVEL, method="wilson")
    return k / n, float(ci.low), float(ci.high)


def text(s, fmt="{:.1f}", scale=1.0):
    """'median [lo, hi]' (scaled), 'median' for n = 1, 'NA' for n = 0."""
    if s.median is None:
        return "NA"
    m = fmt.format(s.median * scale)
    if s.lo is None:
        return m
    return f"{m} [{fmt.format(s.lo * scale)}, {fmt.format(s.hi * scale)}]"


def errorbar(s, scale=1.0):
    """([below], [above]) for matplotlib's yerr: the interval around the
    median; zero-length without one."""
    if s.median is None or s.lo is None:
        return [0.0], [0.0]
    return [(s.median - s.lo) * scale], [(s.hi - s.median) * scale]
