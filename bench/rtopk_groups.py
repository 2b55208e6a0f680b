#!/usr/bin/env python3
"""RTop-K thread path: lanes per row (G) and grid, from the session-26 sweep.

Reads the CSVs of `topk bench -a rtopk` run with TOPK_RTOPK_PATH=thread, TOPK_RTOPK_GROUP=G and
TOPK_RTOPK_GRID=wave|all forced (bench/results/h100_rtopk_groups_s26_g{G}_{grid}_r{run}.csv) and
with the rule of the time (..._def_r{run}.csv), keeps the lower of the runs per variant, prints
every case's times, and simulates rtopk.cu's rule (thread_group, launch_thread's queue and grid)
against the best variant and the old rule. `rule()` below is a copy of that rule in Python: change
both together.

    python3 bench/rtopk_groups.py [bench/results/h100_rtopk_groups_s26]
"""
import csv
import glob
import statistics as st
import sys

SMS = 132  # H100 SXM


def load(prefix):
    times = {}
    for f in glob.glob(prefix + '_*_r*.csv'):
        name = f[len(prefix) + 1:].rsplit('_r', 1)[0]
        for r in csv.DictReader(open(f)):
            key = (r['dtype'], int(r['batch']), int(r['n']), int(r['k']))
            times.setdefault(key, {}).setdefault(name, []).append(float(r['median_ms']) * 1e3)
    return {key: {v: min(t) for v, t in d.items()} for key, d in times.items()}


def rule(dtype, batch, n, k):
    """The variant rtopk.cu picks (session 26): g{G}_{wave|all}."""
    es = 4 if dtype in ('f32', 'i32', 'u32') else 2
    short = k <= 2 and (n <= 128 or es == 2)
    K = k if short else (4 if k <= 4 and n <= 128 else (8 if k <= 8 else 16))
    g = 4 if es == 4 and n >= 32 else 1
    while g < 4 and n >= 8 * g and (n / g > 64 or batch * g < 2048 * SMS):
        g *= 2
    if es == 2 and g > 2 and 64 < n <= 256 and batch >= 496 * SMS:
        g = 2
    if k <= 2 and n > 32:
        few = batch * 4 < 1024 * SMS
        if (es == 4 and (64 < n <= 128 or (n <= 64 and few))) or (es == 2 and n <= 256 and few):
            g = 8
    return f"g{g}_{'all' if K >= 8 else 'wave'}"


def main():
    prefix = sys.argv[1] if len(sys.argv) > 1 else 'bench/results/h100_rtopk_groups_s26'
    T = load(prefix)
    cols = ['g2_wave', 'g2_all', 'g4_wave', 'g4_all', 'g8_wave', 'g8_all']
    print('dtype batch n k | old rule us | rule picks | us | best | us | ' + ' '.join(cols))
    vs_old, vs_best = [], []
    for key in sorted(T):
        d = T[key]
        v = rule(*key)
        best_v, best_t = min(((vv, t) for vv, t in d.items() if vv in cols), key=lambda x: x[1])
        cells = ' '.join(f'{d[c]:.2f}' if c in d else '-' for c in cols)
        print(f"{key[0]} {key[1]} {key[2]} k={key[3]} | {d['def']:.2f} | {v} | {d[v]:.2f} | {best_v} | {best_t:.2f} | {cells}")
        vs_old.append(d['def'] / d[v])
        vs_best.append(d[v] / best_t)
    print(f"\n{len(vs_old)} cases. old rule / rule: median {st.median(vs_old):.3f}, {min(vs_old):.3f}..{max(vs_old):.3f}; "
          f"rule / best: median {st.median(vs_best):.3f}, worst {max(vs_best):.3f}")


if __name__ == '__main__':
    main()
