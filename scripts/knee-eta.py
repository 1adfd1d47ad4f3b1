#!/usr/bin/env python3
"""The step-size exponent q of tau_c ∝ eta^-q from `amsgd knee` runs at several step sizes.

Usage: scripts/knee-eta.py KNEE.json KNEE.json ... (one `amsgd knee --seeds S --format json`
run per step size, the same momenta and seeds in each; docs/findings.md, L3):

    for e in 1e-3 5e-4 2.5e-4; do
        build/amsgd knee --mus 0.7,0.8,0.9,0.95 --eta $e --replicas 100 --seeds 3 \\
            --threads 1 --quiet --format json -o knee_eta_$e.json
    done
    scripts/knee-eta.py knee_eta_*.json

Per momentum and seed, q is minus the least-squares slope of log tau_c on log eta over the
step sizes (tau_c_seeds: the crossings interpolated between the bracketing delays); the table
gives the seeds' tau_c, the mean q over the seeds with its t interval mean -/+ t_{n-1,0.975}
sd / sqrt(n), and the same slope of the linear-stability delays (tau_c_linear). The pooled q
is, per seed, the slope common to all momenta with one intercept per momentum, then its mean
and t interval over the seeds. Also: tau_c eta per momentum and step size (means over the
seeds) and each run's (1-mu) exponent p with its interval and exponent_linear.
"""

import json
import math
import statistics
import sys


def t_quantile(p, df):
    """The p quantile of Student's t with df degrees of freedom (bisection on the CDF)."""

    def betacf(a, b, x):
        # continued fraction of the regularized incomplete beta (modified Lentz)
        tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
        d = 1 / (d if abs(d) > tiny else tiny)
        h = d
        for m in range(1, 300):
            for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                        -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
                d = 1 + num * d
                d = 1 / (d if abs(d) > tiny else tiny)
                c = 1 + num / c
                c = c if abs(c) > tiny else tiny
                h *= d * c
        return h

    def ibeta(a, b, x):
        if x <= 0 or x >= 1:
            return 0.0 if x <= 0 else 1.0
        lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + \
            b * math.log(1 - x)
        if x < (a + 1) / (a + b + 2):
            return math.exp(lbt) * betacf(a, b, x) / a
        return 1 - math.exp(lbt) * betacf(b, a, 1 - x) / b

    def cdf(t):
        tail = 0.5 * ibeta(df / 2, 0.5, df / (df + t * t))
        return 1 - tail if t > 0 else tail

    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def slope(x, y):
    mx, my = statistics.fmean(x), statistics.fmean(y)
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)


def mean_ci(v):
    m = statistics.fmean(v)
    if len(v) < 2:
        return m, math.nan, math.nan
    h = t_quantile(0.975, len(v) - 1) * statistics.stdev(v) / math.sqrt(len(v))
    return m, m - h, m + h


def main(paths):
    runs = sorted((json.load(open(p)) for p in paths), key=lambda r: -r["params"]["eta"])
    if len(runs) < 2:
        sys.exit("knee-eta: give at least two runs (step sizes)")
    mus, seeds = runs[0]["mu"], runs[0]["params"]["seeds"]
    for r in runs:
        if r["mu"] != mus or r["params"]["seeds"] != seeds:
            sys.exit("knee-eta: the runs differ in their momenta or seeds")
    le = [math.log(r["params"]["eta"]) for r in runs]
    etas = " | ".join(f"`{r['params']['eta']:g}`" for r in runs)
    print(f"| mu | tau_c at eta = {etas} | q | linear stability's q |")
    print("|---" * (len(runs) + 3) + "|")
    for i, mu in enumerate(mus):
        cols = ["/".join(f"{t:.2f}" for t in r["tau_c_seeds"][i]) for r in runs]
        q = [-slope(le, [math.log(r["tau_c_seeds"][i][s]) for r in runs]) for s in range(seeds)]
        m, lo, hi = mean_ci(q)
        ql = -slope(le, [math.log(r["tau_c_linear"][i]) for r in runs])
        print(f"| {mu:.2f} | " + " | ".join(cols) + f" | {m:.3f} [{lo:.3f}, {hi:.3f}] | {ql:.3f} |")
    # pooled: one slope, one intercept per momentum (the slope of the centred values)
    def pooled_q(delays):  # delays(r, i): the delay of momentum i in run r
        num = den = 0.0
        for i in range(len(mus)):
            y = [math.log(delays(r, i)) for r in runs]
            mx, my = statistics.fmean(le), statistics.fmean(y)
            num += sum((a - mx) * (b - my) for a, b in zip(le, y))
            den += sum((a - mx) ** 2 for a in le)
        return -num / den

    pooled = [pooled_q(lambda r, i, s=s: r["tau_c_seeds"][i][s]) for s in range(seeds)]
    m, lo, hi = mean_ci(pooled)
    print(f"\npooled q over the momenta: {m:.3f} [{lo:.3f}, {hi:.3f}] "
          f"(per seed {', '.join(f'{x:.4f}' for x in pooled)}; "
          f"linear stability {pooled_q(lambda r, i: r['tau_c_linear'][i]):.3f})")
    print("\ntau_c eta (mean over the seeds):")
    for i, mu in enumerate(mus):
        print(f"  mu = {mu:g}: " + ", ".join(
            f"{statistics.fmean(r['tau_c_seeds'][i]) * r['params']['eta']:.4f}" for r in runs))
    print("\n(1-mu) exponent p per step size:")
    for r in runs:
        ci = r["exponent_ci"]
        print(f"  eta = {r['params']['eta']:g}: p = {r['exponent']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}], "
              f"linear stability {r['exponent_linear']:.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    main(sys.argv[1:])
