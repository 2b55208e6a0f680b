#!/usr/bin/env python3
"""fit_rule4.py: fits Rule 4's constants (src/drtopk_rule4.c) to a measured alpha sweep.

  python3 bench/fit_rule4.py bench/results/h100_drtopk_alpha_sweep.csv

The CSV (build/drtopk_workload 30 sweepcsv) holds the median time of drtopk_radix for
every (n, k, alpha). Rule 4 is alpha = round((log2 n - log2 k) / 2) + C, clamped to
at least 2^MIN_SUB_LOG subranges, to alpha <= floor(log2 n) - floor(log2 k) - FULL_GAP,
and to [5, 20]. For every (C, MIN_SUB_LOG, FULL_GAP) this prints the regret
time(rule alpha) / time(best alpha) over the swept (n, k): worst, median, and how
many points exceed 1.10, then the triple with the smallest worst regret (ties:
smallest mean). Standard library only.
"""
import csv
import math
import statistics
import sys
from collections import defaultdict

ALPHA_MIN, ALPHA_MAX = 5, 20


def rule4(n, k, c, min_sub_log, full_gap):
    a = math.floor((math.log2(n) - math.log2(k)) / 2.0 + 0.5) + c
    cap = n.bit_length() - 1 - min_sub_log
    full = n.bit_length() - k.bit_length() - full_gap
    a = min(a, cap, full, ALPHA_MAX)
    return max(a, ALPHA_MIN)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/h100_drtopk_alpha_sweep.csv"
    times = defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(f):
            times[(int(row["n"]), int(row["k"]))][int(row["alpha"])] = float(row["median_ms"])
    fits = []
    for c in range(-2, 9):
        for msl in range(8, 19):
            for gap in range(-1, 7):  # -1: never binds on the swept range (k <= 2^16 < n / 2^8)
                regrets = []
                for (n, k), t in times.items():
                    a = rule4(n, k, c, msl, gap)
                    if a not in t:
                        regrets = None
                        break
                    regrets.append(t[a] / min(t.values()))
                if regrets:
                    fits.append((max(regrets), statistics.mean(regrets), c, msl, gap, regrets))
    fits.sort(key=lambda f: (round(f[0], 3), f[1]))  # worst to the printed precision, then mean
    print("C  min_sub_log  full_gap  worst  median  mean  points>1.10")
    for worst, mean, c, msl, gap, r in fits[:12]:
        print(f"{c:2d}  {msl:11d}  {gap:8d}  {worst:5.3f}  {statistics.median(r):6.3f}  {mean:5.3f}  "
              f"{sum(x > 1.10 for x in r)}/{len(r)}")
    worst, mean, c, msl, gap, r = fits[0]
    print(f"\nbest: RULE4_C = {c}, RULE4_MIN_SUB_LOG = {msl}, RULE4_FULL_GAP = {gap} (worst regret {worst:.3f})")
    print("\nper point (n, k): best alpha, rule alpha, regret")
    for (n, k), t in sorted(times.items()):
        best = min(t, key=t.get)
        a = rule4(n, k, c, msl, gap)
        print(f"  2^{n.bit_length() - 1:<2d} 2^{k.bit_length() - 1:<2d}  best {best:2d} ({t[best]:.3f} ms)  rule {a:2d} ({t[a]:.3f} ms)  {t[a] / t[best]:.3f}")


if __name__ == "__main__":
    main()
