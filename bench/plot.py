#!/usr/bin/env python3
"""plot.py: PNG plots of `topk bench` and bench/peers.py results.

  time vs k at fixed n, and time vs n at fixed k (log-log, like Fig. 6 and 7 of the AIR
  Top-K paper): one figure per (family, dtype, distribution, batch, order, sorted), up to
  four panels of the best-covered n (or k), one line per algorithm of `topk bench` and per
  peer of peers.py;
  % of the roofline (roofline.png): a panel per family, each measured case against its bytes moved.

Rows whose check is not a pass (FAIL, error, unchecked) are left out and counted on stderr:
a time for a wrong answer is not plotted. When a CSV holds the same measurement twice (a
--resume run that retried it), the last row wins.

  python3 bench/plot.py --bench quick.csv --peers peers_quick.csv --out plots/
"""

import argparse
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: files only
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

CASE_KEYS = ("family", "dtype", "dist", "batch", "order", "sorted")
PEER_LABELS = {
    "torch_topk_sorted": "torch.topk sorted",
    "torch_topk_unsorted": "torch.topk unsorted",
    "torch_sort": "torch.sort+slice",
    "jax_top_k": "jax.lax.top_k (wall)",
}
PASS = {"ref", "cpu_select", "ok"}
MAX_PANELS = 4


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def points_from_bench(rows, skipped):
    """{(case key, series): (n, k, ms, roofline %)} from a `topk bench` CSV; later rows win."""
    variants = {(r.get("index"), r.get("deterministic"), r.get("device")) for r in rows}
    out = {}
    for r in rows:
        if r["check"] not in PASS or not r["median_ms"]:
            skipped[r["check"] or "no time"] += 1
            continue
        name = r["algo"]
        if len(variants) > 1:  # several index types or devices in one file: keep them apart
            name += f" [{r.get('index')}{'' if r.get('deterministic') == '1' else ' nondet'} {r.get('device')}]"
        key = tuple(r[k] for k in CASE_KEYS)
        roof = float(r["roofline_pct"]) if r.get("roofline_pct") else None
        out[(key, name, int(r["n"]), int(r["k"]))] = (float(r["median_ms"]), roof, int(float(r["bytes"])))
    return out


def points_from_peers(rows, skipped, with_topk):
    """The peers' times (and topk's own, when there is no bench CSV) from a peers.py CSV."""
    out = {}
    for r in rows:
        if r["check"] != "ok":
            skipped[f"peers {r['check']}"] += 1
            continue
        key = tuple(r[k] for k in CASE_KEYS)
        series = [(f"{p}_ms", label) for p, label in PEER_LABELS.items()]
        if with_topk:
            series.append(("topk_ms", f"topk {r['algo']} (peers.py)"))
        for col, label in series:
            if r.get(col):
                out[(key, label, int(r["n"]), int(r["k"]))] = (float(r[col]), None, None)
    return out


def style_for(names):
    """A fixed colour and marker per series, the same in every figure: algorithms take the
    tab10 colours, peers dark ones (and dashed lines, see sweep_figure)."""
    palette = list(plt.get_cmap("tab10").colors)
    peer_colors = ["black", "dimgray", "saddlebrown", "darkolivegreen", "slategray"]
    markers = "os^vD<>pP*Xh"
    styles = {}
    algos = sorted(n for n in names if n not in PEER_LABELS.values())
    for i, name in enumerate(algos):
        styles[name] = (palette[i % len(palette)], markers[i % len(markers)])
    for i, name in enumerate(sorted(n for n in names if n in PEER_LABELS.values())):
        styles[name] = (peer_colors[i % len(peer_colors)], markers[(i + 5) % len(markers)])
    return styles


def pick_panels(values_to_points):
    """Up to MAX_PANELS fixed values with >= 3 points, spread over their range."""
    good = sorted(v for v, pts in values_to_points.items() if len(pts) >= 3)
    if len(good) <= MAX_PANELS:
        return good
    step = (len(good) - 1) / (MAX_PANELS - 1)
    return [good[round(i * step)] for i in range(MAX_PANELS)]


def fmt_pow2(v):
    return f"2^{v.bit_length() - 1}" if v >= 1024 and v & (v - 1) == 0 else str(v)


def case_title(key):
    fam, dtype, dist, batch, order, srt = key
    return f"{fam}: {dtype} {dist}, batch {fmt_pow2(int(batch))}, {order}{', sorted' if srt == '1' else ''}"


def label_log_axis(ax):
    """Plain numbers on a log y axis (0.02, not 2x10^-2), with enough labels to read values
    even when the view holds fewer than two powers of ten."""
    lo, hi = ax.get_ylim()
    decades = sum(1 for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1) if lo <= 10.0 ** e <= hi)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    if decades >= 2:
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        keep = (2, 3, 4, 5, 6, 7, 8, 9) if hi / lo < 10 else (2, 5)
        ax.yaxis.set_minor_formatter(
            FuncFormatter(lambda v, _: f"{v:g}" if round(v / 10.0 ** math.floor(math.log10(v) + 1e-9)) in keep else ""))
    ax.tick_params(axis="y", which="both", labelsize=8)


def sweep_figure(key, pts, sweep, styles, path):
    """Time vs `sweep` ('k' or 'n') at a few fixed values of the other size. @return True if drawn."""
    fixed = "n" if sweep == "k" else "k"
    by_fixed = defaultdict(set)
    for (name, n, k) in pts:
        by_fixed[n if fixed == "n" else k].add(k if sweep == "k" else n)
    panels = pick_panels(by_fixed)
    if not panels:
        return False
    cols = 2 if len(panels) == 4 else len(panels)
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols + 2.2, 3.9 * rows), squeeze=False)
    axes = axes.ravel()
    drawn = set()
    for ax, fv in zip(axes, panels):
        series = defaultdict(list)
        for (name, n, k), ms in pts.items():
            if (n if fixed == "n" else k) == fv:
                series[name].append((k if sweep == "k" else n, ms))
        for name in sorted(series):
            xs, ys = zip(*sorted(series[name]))
            color, marker = styles[name]
            dashed = name in PEER_LABELS.values()
            ax.plot(xs, ys, marker=marker, color=color, ls="--" if dashed else "-", ms=4, lw=1.3, label=name)
            drawn.add(name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        label_log_axis(ax)
        ax.set_xlabel(sweep)
        ax.set_title(f"{fixed} = {fmt_pow2(fv)}", fontsize=10)
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
    for ax in axes[::cols]:
        ax.set_ylabel("time per call (ms)")
    handles = {h.get_label(): h for ax in axes for h in ax.get_lines()}
    fig.legend([handles[n] for n in sorted(drawn)], sorted(drawn), loc="center left", bbox_to_anchor=(1.0, 0.5),
               fontsize=8, frameon=False)
    fig.suptitle(f"{case_title(key)}: time vs {sweep}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return True


def roofline_figure(roof, styles, path):
    """% of the roofline against bytes moved: a panel per family, one series per algorithm."""
    families = sorted(roof)
    cols = min(3, len(families))
    rows = (len(families) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.0 * cols + 2.2, 3.6 * rows), squeeze=False)
    axes = axes.ravel()
    drawn = {}
    for ax, family in zip(axes, families):
        series = defaultdict(list)
        for (name, _case), (bytes_moved, pct) in roof[family].items():
            series[name].append((bytes_moved, pct))
        for name in sorted(series):
            xs, ys = zip(*sorted(series[name]))
            color, marker = styles[name]
            drawn[name] = ax.scatter(xs, ys, color=color, marker=marker, s=18, label=name, alpha=0.85)
        ax.set_xscale("log")
        top = max(y for pts in series.values() for _, y in pts)
        ax.set_ylim(0, max(100.0, top * 1.05))
        ax.axhline(100, color="grey", lw=0.8, ls=":")
        ax.grid(True, alpha=0.3)
        ax.set_title(family, fontsize=10)
        ax.set_xlabel("bytes moved", fontsize=9)
    for ax in axes[::cols]:
        ax.set_ylabel("% of roofline")
    for ax in axes[len(families):]:
        ax.set_visible(False)
    fig.legend([drawn[n] for n in sorted(drawn)], sorted(drawn), loc="center left", bbox_to_anchor=(1.0, 0.5),
               fontsize=8, frameon=False)
    fig.suptitle("% of the roofline: (input read once + output written once) / probe read bandwidth, "
                 "over the median time", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def safe(s):
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in s)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plots from `topk bench` and bench/peers.py CSVs.")
    ap.add_argument("--bench", action="append", default=[], help="a `topk bench` CSV (repeatable)")
    ap.add_argument("--peers", action="append", default=[], help="a peers.py CSV (repeatable)")
    ap.add_argument("--out", default="plots", help="directory for the PNGs (default plots/)")
    args = ap.parse_args(argv)
    if not args.bench and not args.peers:
        ap.error("give at least one --bench or --peers CSV")

    skipped = defaultdict(int)
    points = {}
    for path in args.bench:
        points.update(points_from_bench(read_csv(path), skipped))
    for path in args.peers:
        points.update(points_from_peers(read_csv(path), skipped, with_topk=not args.bench))
    for why, count in sorted(skipped.items()):
        print(f"plot.py: left out {count} rows ({why})", file=sys.stderr)
    if not points:
        sys.exit("plot.py: no plottable rows")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    styles = style_for({name for (_, name, _, _) in points})
    cases = defaultdict(dict)
    roof = defaultdict(dict)
    for (key, name, n, k), (ms, pct, nbytes) in points.items():
        cases[key][(name, n, k)] = ms
        if pct is not None and not math.isnan(pct):
            roof[key[0]][(name, (key, n, k))] = (nbytes, pct)
    written = []
    for key, pts in sorted(cases.items()):
        stem = safe("_".join([key[0], key[1], key[2], f"b{key[3]}", key[4]] + (["sorted"] if key[5] == "1" else [])))
        for sweep in ("k", "n"):
            path = out / f"{stem}_vs_{sweep}.png"
            if sweep_figure(key, pts, sweep, styles, path):
                written.append(path)
    if roof:
        path = out / "roofline.png"
        roofline_figure(roof, styles, path)
        written.append(path)
    for p in written:
        print(p)
    if not written:
        print("plot.py: nothing to draw: no sweep has 3 or more points and no row has a roofline", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
