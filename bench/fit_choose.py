#!/usr/bin/env python3
"""fit_choose.py: fits TOPK_ALGO_AUTO's table (src/choose_table.h) to the choose sweep.

  python3 bench/fit_choose.py bench/results/h100_choose_sweep.csv \
      bench/results/h100_choose_sweep_rtopk_s10.csv -o src/choose_table.h

A later CSV's timing replaces an earlier one's for the same case and algorithm, so that an
algorithm re-swept alone after a change (`topk bench --suite choose --algo rtopk`) updates
its cells without a whole new sweep.

The sweep (`topk bench --suite choose`, bench/suites.txt) times every algorithm that
supports each case on a grid of (rows, row length, k) per plane, a plane being a key
width (16, 32, 64 bits) and an output order (unsorted, sorted). All grid values are
powers of two. For every grid point and algorithm the table keeps the algorithm's cost,
log2(time / the point's fastest time) in 1/256ths, or "unmeasured" where the algorithm
does not support the point (and everywhere at points that were not measured: k > n,
inputs over the sweep's 4 GiB cap). Algorithms more than 3x slower than the fastest were
timed once (`--prune 3`); their cost is as measured, just less precise.

src/choose.c interpolates the costs trilinearly in log2(rows), log2(n), log2(k) between the
8 corners of the query's cell and runs the cheapest algorithm that supports the problem.
At a grid point that is the measured winner. An algorithm unmeasured at a corner that
carries weight is skipped (its limits end inside the cell) unless no algorithm is left.

Also prints, per plane, the winners and a cross-validation: the table fitted on every
other grid value per axis (a grid twice as coarse), queried at the points it left out,
with each query's regret = time(chosen) / time(fastest) at that point. Standard library only.
"""
import argparse
import csv
import math
import statistics
import sys
from collections import Counter, defaultdict

ALGO_ENUM = {
    "sort": "TOPK_ALGO_SORT", "air_radix": "TOPK_ALGO_AIR_RADIX", "warp_select": "TOPK_ALGO_WARP_SELECT",
    "block_select": "TOPK_ALGO_BLOCK_SELECT", "grid_select": "TOPK_ALGO_GRID_SELECT",
    "bitonic": "TOPK_ALGO_BITONIC", "bucket": "TOPK_ALGO_BUCKET", "drtopk_radix": "TOPK_ALGO_DRTOPK_RADIX",
    "drtopk_bucket": "TOPK_ALGO_DRTOPK_BUCKET", "drtopk_bitonic": "TOPK_ALGO_DRTOPK_BITONIC",
    "rtopk": "TOPK_ALGO_RTOPK",
}
KEY_BITS = {"f16": 16, "bf16": 16, "f32": 32, "i32": 32, "u32": 32, "f64": 64, "i64": 64, "u64": 64}


def log2_exact(v):
    l = v.bit_length() - 1
    if v <= 0 or (1 << l) != v:
        raise SystemExit(f"fit_choose: grid value {v} is not a power of two")
    return l


def load(paths):
    """{(key_bits, sorted): {(b, n, k): {algo: ms}}} and the device description."""
    planes = defaultdict(lambda: defaultdict(dict))
    device = set()
    bw = []
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["algo"] == "auto" or r["algo"] not in ALGO_ENUM or not r["median_ms"]:
                    continue
                if r["check"] in ("FAIL", "error", "unsupported") or r["deterministic"] != "1":
                    continue
                plane = (KEY_BITS[r["dtype"]], int(r["sorted"]))
                shape = (int(r["batch"]), int(r["n"]), int(r["k"]))
                planes[plane][shape][r["algo"]] = float(r["median_ms"])
                device.add(r["device_name"])
                bw.append(float(r["read_bw_gbps"]))
    return planes, sorted(device), statistics.median(bw) if bw else 0.0


COST_SCALE = 256      # cost units per doubling of time
UNMEASURED = 0xFFFF


def grid(points):
    """Axes (log2 values) and {(lb, ln, lk): {algo: ms}} of one plane."""
    at = {(log2_exact(b), log2_exact(n), log2_exact(k)): t for (b, n, k), t in points.items()}
    axes = tuple(sorted({c[d] for c in at}) for d in range(3))
    return axes, at


def locate(axis, x):
    """The cell of x on an axis and x's fraction across it (clamped to the axis)."""
    if len(axis) == 1 or x <= axis[0]:
        return 0, 0.0
    if x >= axis[-1]:
        return len(axis) - 2, 1.0
    i = 0
    while axis[i + 1] <= x:
        i += 1
    return i, (x - axis[i]) / (axis[i + 1] - axis[i])


def choose(axes, at, q, candidates):
    """What src/choose.c picks at q = (log2 rows, log2 n, log2 k) among candidates."""
    loc = [locate(axes[d], q[d]) for d in range(3)]
    corners = []
    for bits in range(8):
        w, c = 1.0, []
        for d in range(3):
            i, f = loc[d]
            up = (bits >> d) & 1
            w *= f if up else 1.0 - f
            c.append(axes[d][min(i + up, len(axes[d]) - 1)])
        if w > 0 and tuple(c) in at:
            corners.append((w, at[tuple(c)]))
    for strict in (True, False):
        score = {}
        for a in candidates:
            s = ws = 0.0
            for w, t in corners:
                if a not in t:
                    if strict:
                        break
                    continue
                s += w * math.log2(t[a] / min(t.values()))
                ws += w
            else:
                if ws > 0:
                    score[a] = s / ws
        if score:
            return min(score, key=score.get)
    # No corner measured (beyond the sweep's inputs): the nearest measured point.
    best = None
    for c, t in at.items():
        d = sum(abs(x - y) for x, y in zip(c, q))
        have = [a for a in candidates if a in t]
        if have and (best is None or d < best[0]):
            best = (d, min(have, key=t.get))
    return best[1] if best else None


def cross_validate(axes, at):
    """Regrets of the table fitted on every other grid value, at the points left out."""
    sub = tuple([v for i, v in enumerate(ax) if i % 2 == 0 or i == len(ax) - 1] for ax in axes)
    sat = {c: t for c, t in at.items() if all(c[d] in sub[d] for d in range(3))}
    regs = []
    for c, t in at.items():
        if c not in sat:
            a = choose(sub, sat, c, sorted(t))
            regs.append(t[a] / min(t.values()))
    return sorted(regs)


def report(plane, axes, at):
    win = Counter(min(t, key=t.get) for t in at.values())
    print(f"plane {plane[0]}-bit {'sorted' if plane[1] else 'unsorted'}: {len(at)} points, "
          f"{'x'.join(str(len(a)) for a in axes)} grid; winners {dict(win.most_common())}", file=sys.stderr)
    regs = cross_validate(axes, at)
    if regs:
        print(f"  cross-validation (grid twice as coarse, {len(regs)} points left out): regret median "
              f"{statistics.median(regs):.3f}, p90 {regs[int(0.9 * (len(regs) - 1))]:.3f}, worst {regs[-1]:.2f}, "
              f"{sum(r > 1.3 for r in regs)} over 1.3", file=sys.stderr)


def emit(out, planes, sources, device, bw):
    algos = list(ALGO_ENUM)
    w = out.write
    w("/*\n * choose_table.h: GENERATED by bench/fit_choose.py -- do not edit.\n")
    w(" * Regenerate: python3 bench/fit_choose.py " + " ".join(sources) + " -o src/choose_table.h\n")
    w(" * Data: `topk bench --suite choose` (bench/suites.txt) on " + ", ".join(device) +
      f" (read bandwidth {bw:.0f} GB/s),\n * normal data, deterministic ties, i64 indices. See the fitter's docstring for the format.\n */\n")
    w("#ifndef TOPK_CHOOSE_TABLE_H\n#define TOPK_CHOOSE_TABLE_H\n\n#include <stdint.h>\n\n#include \"topk.h\"\n\n")
    w(f"#define CHOOSE_ALGOS {len(algos)}\n#define CHOOSE_COST_SCALE {COST_SCALE} /* cost units per doubling of time */\n"
      f"#define CHOOSE_UNMEASURED 0x{UNMEASURED:X}\n\n")
    w("/* The algorithm of each cost column. */\nstatic const topk_algo choose_algo[CHOOSE_ALGOS] = {\n    " +
      ", ".join(ALGO_ENUM[a] for a in algos) + "};\n\n")
    w("typedef struct choose_plane {\n  int key_bits, sorted;\n  int nb, nn, nk;        /* grid values per axis */\n"
      "  const int8_t* lb;       /* log2 of the row counts */\n  const int8_t* ln;       /* log2 of the row lengths */\n"
      "  const int8_t* lk;       /* log2 of k */\n"
      "  const uint16_t* cost;   /* [((ib * nn + in) * nk + ik) * CHOOSE_ALGOS + column] */\n} choose_plane;\n\n")
    names = []
    w("#define U CHOOSE_UNMEASURED\n")
    for (bits, srt), (axes, at) in sorted(planes.items()):
        nm = f"p{bits}{'s' if srt else 'u'}"
        names.append((nm, bits, srt) + tuple(len(a) for a in axes))
        for ax, vals in zip(("lb", "ln", "lk"), axes):
            w(f"static const int8_t {nm}_{ax}[] = {{{', '.join(map(str, vals))}}};\n")
        w(f"static const uint16_t {nm}_cost[] = {{\n")
        for b in axes[0]:
            for n in axes[1]:
                w(f"    /* 2^{b} x 2^{n} */\n")
                for k in axes[2]:
                    t = at.get((b, n, k))
                    cells = []
                    for a in algos:
                        if t and a in t:
                            cells.append(str(min(int(round(math.log2(t[a] / min(t.values())) * COST_SCALE)), UNMEASURED - 1)))
                        else:
                            cells.append("U")
                    w("    " + ", ".join(cells) + ",\n")
        w("};\n\n")
    w("#undef U\n\n")
    w("static const choose_plane choose_planes[] = {\n")
    for nm, bits, srt, nb, nn, nk in names:
        w(f"    {{{bits}, {srt}, {nb}, {nn}, {nk}, {nm}_lb, {nm}_ln, {nm}_lk, {nm}_cost}},\n")
    w("};\n#define CHOOSE_PLANE_COUNT ((int)(sizeof choose_planes / sizeof choose_planes[0]))\n\n#endif\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("-o", "--output", default="src/choose_table.h")
    args = ap.parse_args()
    planes, device, bw = load(args.csv)
    grids = {plane: grid(points) for plane, points in planes.items()}
    for plane in sorted(grids):
        report(plane, *grids[plane])
    with open(args.output, "w") as out:
        emit(out, grids, args.csv, device, bw)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
