"""stats.py -- how repetitions are summarised, in every table and figure:
the median, an interval around it whose coverage is exact, and n.

summary(values) takes the values of one cell (None and NaN left out) and
gives Summary(median, lo, hi, n, coverage).  The interval is the
distribution-free one of order statistics: with the values sorted,
[x(j), x(n+1-j)] holds the true median with probability
1 - 2 P(Binomial(n, 1/2) <= j - 1), whatever the distribution (the values
independent, the distribution continuous; ties only widen it).  j is the
largest that keeps that at LEVEL or more, so the interval is the narrowest
of its kind that has the level.  Below 6 values none has it: the interval
is then [min, max] and its coverage is what it is (5 values: 93.8%,
4: 87.5%, 3: 75%, 2: 50%), carried in the Summary and printed beside the
interval.  A paired ratio (a variant's run over the baseline's run of the
same repetition) is summarised the same way: the median of the ratios
with its interval.  With one value there is no interval (lo = hi = None),
with none no median.  rate(k, n) is a proportion (hang rate) with its
Clopper-Pearson interval, whose coverage is at least the level for every
n.  text() and the figure helpers print and draw these the same way
everywhere: "12.3 [11.0, 14.2]", "12.3 [11.0, 14.2] (94%)" below the
level, and the n beside it.
"""
import collections
import math

import numpy as np
from scipy import stats as st

LEVEL = 0.95
# How tables and figures name the two intervals, in one place.
INTERVAL = "95% distribution-free interval (order statistics; its coverage printed where below 95%)"
RATE_INTERVAL = "95% Clopper-Pearson interval"

Summary = collections.namedtuple("Summary", "median lo hi n coverage")


def clean(values):
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def coverage(n, j):
    """The probability that [x(j), x(n+1-j)] of n values holds their median."""
    return 1.0 - 2.0 * float(st.binom.cdf(j - 1, n, 0.5))


def order_interval(n):
    """(j, coverage): the narrowest symmetric order-statistic interval of
    n >= 2 values whose coverage is at least LEVEL, else [min, max] (j = 1)."""
    j = 1
    while j + 1 <= (n + 1) // 2 and coverage(n, j + 1) >= LEVEL:
        j += 1
    return j, coverage(n, j)


def summary(values):
    v = np.sort(np.array(clean(values)))
    if len(v) == 0:
        return Summary(None, None, None, 0, None)
    med = float(np.median(v))
    if len(v) == 1:
        return Summary(med, None, None, 1, None)
    j, cov = order_interval(len(v))
    return Summary(med, float(v[j - 1]), float(v[len(v) - j]), len(v), cov)


def rate(k, n):
    """(k/n, lo, hi): a proportion and its Clopper-Pearson interval; Nones for n = 0."""
    if n == 0:
        return None, None, None
    ci = st.binomtest(k, n).proportion_ci(LEVEL, method="exact")
    return k / n, float(ci.low), float(ci.high)


def restored(median, lo, hi, n):
    """A Summary from the columns a file keeps (median, lo, hi, n): its
    coverage follows from n."""
    n = int(n)
    return Summary(median, lo, hi, n, order_interval(n)[1] if n >= 2 else None)


def below(s):
    """' (94%)' when the interval's coverage is below LEVEL, else ''."""
    if s.coverage is None or s.coverage >= LEVEL:
        return ""
    return f" ({100 * s.coverage:.0f}%)"


def text(s, fmt="{:.1f}", scale=1.0):
    """'median [lo, hi]' (scaled) with its coverage when below the level,
    'median' for n = 1, 'NA' for n = 0."""
    if s.median is None:
        return "NA"
    m = fmt.format(s.median * scale)
    if s.lo is None:
        return m
    return f"{m} [{fmt.format(s.lo * scale)}, {fmt.format(s.hi * scale)}]{below(s)}"


def errorbar(s, scale=1.0):
    """([below], [above]) for matplotlib's yerr: the interval around the
    median; zero-length without one."""
    if s.median is None or s.lo is None:
        return [0.0], [0.0]
    return [(s.median - s.lo) * scale], [(s.hi - s.median) * scale]
