"""Statistics of bench/overhead.sh, shared with bench/overhead_pool.py.

Ratios are attached/detached pairs; both scripts judge them the same way:
the median with a distribution-free interval (order statistics) decides,
the mean with a bootstrap interval is printed beside it.
"""
import math
import random
import statistics


def median_ci(xs, conf=0.95):
    """Distribution-free interval for the median: order statistics
    (k, n+1-k) with k the largest such that P(Bin(n, 1/2) < k) <= (1-conf)/2.
    Returns (lo, hi, coverage) or None when n is too small."""
    n, s = len(xs), sorted(xs)
    k, cdf = 0, 0.0
    for j in range(n + 1):
        cdf += math.comb(n, j) / 2 ** n
        if cdf > (1 - conf) / 2:
            break
        k = j + 1
    if k == 0:
        return None
    tail = sum(math.comb(n, j) for j in range(k)) / 2 ** n
    return s[k - 1], s[n - k], 1 - 2 * tail


def boot_ci(xs, conf=0.95, reps=4000):
    """Bootstrap interval of the mean (fixed seed: the same data, the same
    interval): strata_mean() of one stratum."""
    return strata_mean([(1, xs)], conf, reps)[1:]


def strata_mean(strata, conf=0.95, reps=4000):
    """sum w mean(xs) over @strata [(w, xs)], with a bootstrap interval
    that resamples each stratum's xs on its own (fixed seed). Returns
    (estimate, lo, hi)."""
    rnd = random.Random(1)
    est = sum(w * statistics.mean(xs) for w, xs in strata)
    boots = sorted(sum(w * sum(rnd.choice(xs) for _ in xs) / len(xs) for w, xs in strata)
                   for _ in range(reps))
    return est, boots[int(reps * (1 - conf) / 2)], boots[int(reps * (1 + conf) / 2) - 1]


def verdict(lo, hi, target):
    return "met" if lo >= target else "NOT met" if hi < target else "not resolved"


def report(name, ratios, target, out=print):
    """Print the median and mean of @ratios with their intervals; returns
    (median, lo, hi, verdict), lo-hi the median's interval (the bootstrap
    one when n is too small for it)."""
    n = len(ratios)
    med, mean = statistics.median(ratios), statistics.mean(ratios)
    m = median_ci(ratios)
    b = boot_ci(ratios) if n >= 2 else (mean, mean)
    out("%s: n=%d pairs, median %.3f %s, mean %.3f (bootstrap 95%% CI %.3f-%.3f)"
        % (name, n, med, "(95%% CI %.3f-%.3f, order statistics, coverage %.1f%%)"
           % (m[0], m[1], 100 * m[2]) if m else "(too few pairs for a median CI)",
           mean, b[0], b[1]))
    lo, hi = (m[0], m[1]) if m else b
    return med, lo, hi, verdict(lo, hi, target)
