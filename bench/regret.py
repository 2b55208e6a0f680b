#!/usr/bin/env python3
"""regret.py: AUTO's regret and its speedup over torch.topk, per family (issue "TOPK_ALGO_AUTO", item 3).

  python3 bench/regret.py BENCH_CSV [--peers PEERS_CSV] [--md OUT.md] [--worst N]

BENCH_CSV: `topk bench` rows of every algorithm and auto for each case (e.g.
`topk bench --suite regret`). A case's regret is auto's median time over the fastest
algorithm's median time in the same run (auto itself excluded from the fastest). Rows with
a failed check or an error are left out; a case without an auto row is reported.

PEERS_CSV: bench/peers.py rows for the same cases (--algo auto, --peers
torch_topk_unsorted,torch_topk_sorted). torch.topk's time for a case is its sorted call
when the case asks for sorted output, else the faster of its sorted and unsorted calls
(either meets an unsorted contract). Speedup = that time / topk's time in the same run.

Prints, per family and overall: cases, regret median and worst, cases over 1.3, the
geometric mean of the speedup over torch.topk and the cases where AUTO is slower.
--plot PNG draws both per family (needs matplotlib; the rest is standard library only).
"""
import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict

KEY = ("family", "dtype", "dist", "batch", "n", "k", "order", "sorted")


def load_bench(path):
    cases = defaultdict(dict)
    chosen = {}
    for r in csv.DictReader(open(path)):
        if not r["median_ms"] or r["check"] in ("FAIL", "error", "unsupported"):
            continue
        key = tuple(r[c] for c in KEY)
        cases[key][r["algo"]] = float(r["median_ms"])
        if r["algo"] == "auto":
            chosen[key] = r["chosen"]
    return cases, chosen


def load_peers(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r.get("check", "ok") not in ("ok", "") or not r["topk_ms"]:
            continue
        s = float(r["torch_topk_sorted_ms"]) if r["torch_topk_sorted_ms"] else math.inf
        u = float(r["torch_topk_unsorted_ms"]) if r["torch_topk_unsorted_ms"] else math.inf
        torch = s if r["sorted"] == "1" else min(s, u)
        if math.isfinite(torch):
            out[tuple(r[c] for c in KEY)] = (torch, float(r["topk_ms"]))
    return out


def fmt_case(key):
    fam, dt, dist, b, n, k, order, srt = key
    return f"{fam} {dt} {dist} {b}x{n} k={k}{' smallest' if order == 'smallest' else ''}{' sorted' if srt == '1' else ''}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench_csv")
    ap.add_argument("--peers")
    ap.add_argument("--md")
    ap.add_argument("--worst", type=int, default=10, help="list the N worst cases (default 10)")
    ap.add_argument("--plot", help="PNG: regret per case and speedup over torch.topk, per family")
    args = ap.parse_args()
    cases, chosen = load_bench(args.bench_csv)
    peers = load_peers(args.peers) if args.peers else {}

    regret, missing = {}, []
    for key, t in cases.items():
        others = {a: v for a, v in t.items() if a != "auto"}
        if "auto" not in t or not others:
            missing.append(key)
            continue
        best = min(others, key=others.get)
        regret[key] = (t["auto"] / others[best], best)

    families = sorted({k[0] for k in regret} | {k[0] for k in peers})
    lines = ["| family | cases | regret median | regret worst | over 1.3 | speedup over torch.topk (geomean) | slower than torch.topk |",
             "| --- | --- | --- | --- | --- | --- | --- |"]

    def row(name, keys_r, keys_p):
        regs = sorted(regret[k][0] for k in keys_r)
        sp = [peers[k][0] / peers[k][1] for k in keys_p]
        cells = [name, str(len(regs) or len(sp))]
        cells += [f"{statistics.median(regs):.3f}", f"{regs[-1]:.2f}", str(sum(r > 1.3 for r in regs))] if regs else ["-"] * 3
        cells += [f"{math.exp(statistics.mean(math.log(x) for x in sp)):.2f}x ({len(sp)})", str(sum(x < 1 for x in sp))] if sp else ["-"] * 2
        lines.append("| " + " | ".join(cells) + " |")

    for fam in families:
        row(fam, [k for k in regret if k[0] == fam], [k for k in peers if k[0] == fam])
    row("**all**", list(regret), list(peers))
    out = "\n".join(lines)
    print(out)
    worst = sorted(regret.items(), key=lambda kv: -kv[1][0])[: args.worst]
    extra = ["", f"Worst regrets (auto's choice -> the fastest):"]
    for key, (r, best) in worst:
        extra.append(f"- {fmt_case(key)}: {r:.2f} ({chosen.get(key, '?')} {cases[key]['auto']:.4f} ms -> "
                     f"{best} {cases[key][best]:.4f} ms)")
    slow = sorted((peers[k][0] / peers[k][1], k) for k in peers if peers[k][0] < peers[k][1])
    if slow:
        extra.append("")
        extra.append("Slower than torch.topk:")
        for sp, key in slow:
            extra.append(f"- {fmt_case(key)}: topk {peers[key][1]:.4f} ms, torch.topk {peers[key][0]:.4f} ms")
    if missing:
        extra.append("")
        extra.append(f"{len(missing)} cases without an auto row or another algorithm: " +
                     "; ".join(fmt_case(k) for k in missing[:5]))
    print("\n".join(extra))
    if args.md:
        with open(args.md, "w") as f:
            f.write(out + "\n" + "\n".join(extra) + "\n")
    if args.plot:
        plot(args.plot, families, regret, peers)


def plot(path, families, regret, peers):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.2))
    for i, fam in enumerate(families):
        regs = [r for k, (r, _) in regret.items() if k[0] == fam]
        a.scatter([i] * len(regs), regs, s=12, alpha=0.6, color="tab:blue")
        sp = [peers[k][0] / peers[k][1] for k in peers if k[0] == fam]
        if sp:
            b.bar(i, math.exp(statistics.mean(math.log(x) for x in sp)), color="tab:green")
            b.scatter([i] * len(sp), sp, s=8, alpha=0.5, color="black")
    for ax in (a, b):
        ax.set_xticks(range(len(families)))
        ax.set_xticklabels(families, rotation=30)
        ax.grid(True, axis="y", alpha=0.3)
    a.axhline(1.3, color="tab:red", linestyle="--", linewidth=1, label="1.3 (worst allowed)")
    a.axhline(1.05, color="tab:orange", linestyle=":", linewidth=1, label="1.05 (median allowed)")
    a.set_ylabel("AUTO time / fastest algorithm's")
    a.set_title("AUTO's regret per case")
    a.legend(fontsize=8)
    b.set_yscale("log")
    b.axhline(1.0, color="tab:red", linestyle="--", linewidth=1)
    b.set_ylabel("torch.topk time / AUTO time")
    b.set_title("speedup over torch.topk (bar: geometric mean; dots: cases)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
