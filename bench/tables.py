"""Markdown tables for docs/BENCHMARKS.md from the committed CSVs in bench/results/.

    python3 bench/tables.py sweep h100_figk h100_fign   # topk bench + peers.py of a sweep, side by side
    python3 bench/tables.py family h100_llm             # per-(dtype, batch) geometric means of a family
    python3 bench/tables.py algos h100_targets_faiss    # every algorithm of a `topk bench` CSV side by side
    python3 bench/tables.py latency h100_llm_k1_s12 h100_llm_k1_peers_s12 h100_latency_llm_auto_s12
                                                        # AUTO per case: topk bench, build/latency, peers.py
    python3 bench/tables.py targets h100_targets_moe_all_s26 h100_peers_targets_moe_all_final_s26
                                                        # AUTO per case (topk bench) beside torch (peers.py)

Every number printed comes from the CSVs; nothing is typed in by hand.
"""
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def load(name):
    with open(RESULTS / f"{name}.csv") as f:
        return list(csv.DictReader(f))


def pow2(v):
    v = int(v)
    return f"2^{v.bit_length() - 1}" if v > 1 and v & (v - 1) == 0 else str(v)


def gmean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def bench_times(name):
    """(case key) -> {algo: (median_ms, roofline_pct)} from a `topk bench` CSV."""
    out = defaultdict(dict)
    for r in load(name):
        key = (r["dtype"], r["dist"], r["batch"], r["n"], r["k"], r["order"], r["sorted"])
        out[key][r["algo"]] = (float(r["median_ms"]), float(r["roofline_pct"]), r["check"])
    return out


def sweep(names):
    print("| n | k | air_radix ms (% roofline) | sort ms | torch.topk unsorted | torch.topk sorted | jax.lax.top_k (wall) | check |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name in names:
        b = bench_times(name)
        for r in load(name.replace("h100_", "h100_peers_")):
            key = (r["dtype"], r["dist"], r["batch"], r["n"], r["k"], r["order"], r["sorted"])
            air, srt = b[key]["air_radix"], b[key]["sort"]
            rel = lambda col: f"{float(r[col]):.3f} ({float(r[col]) / float(r['topk_ms']):.2f}x)"
            print(f"| {pow2(r['n'])} | {pow2(r['k'])} | {air[0]:.3f} ({air[1]:.1f} %) | {srt[0]:.3f} | "
                  f"{rel('torch_topk_unsorted_ms')} | {rel('torch_topk_sorted_ms')} | "
                  f"{float(r['jax_top_k_ms']):.3f} ({float(r['jax_top_k_ms']) / float(r['topk_wall_ms']):.2f}x) | "
                  f"{air[2]}, peers {r['check']} |")


def family(name):
    b = bench_times(name)
    p = defaultdict(list)
    for r in load(name.replace("h100_", "h100_peers_")):
        if r["check"] == "ok":
            p[(r["dtype"], r["batch"])].append(r)
    groups = defaultdict(list)
    for key, algos in b.items():
        groups[(key[0], key[2])].append(algos)
    print("| dtype | batch | cases | auto ms (median case) | auto % roofline (best) | auto vs sort | peers cases | torch.topk sorted / topk | torch.topk unsorted / topk | jax / topk (wall) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (dtype, batch) in sorted(groups, key=lambda g: (g[0], int(g[1]))):
        cases = groups[(dtype, batch)]
        auto = sorted(c["auto"][0] for c in cases)
        best = max(c["auto"][1] for c in cases)
        vs_sort = gmean([c["sort"][0] / c["auto"][0] for c in cases])
        pr = p[(dtype, batch)]
        g = lambda col, base: gmean([float(r[col]) / float(r[base]) for r in pr if r[col]])
        print(f"| {dtype} | {batch} | {len(cases)} | {auto[len(auto) // 2]:.3f} | {best:.1f} % | {vs_sort:.2f}x | {len(pr)} | "
              f"{g('torch_topk_sorted_ms', 'topk_ms'):.2f}x | {g('torch_topk_unsorted_ms', 'topk_ms'):.2f}x | "
              f"{g('jax_top_k_ms', 'topk_wall_ms'):.2f}x |")


def algos(names):
    """One row per case, one column per algorithm: median ms (% roofline); the fastest in bold."""
    rows, names_seen = [], []
    for name in names:
        for key, by_algo in bench_times(name).items():
            rows.append((key, by_algo))
            for a in by_algo:
                if a not in names_seen:
                    names_seen.append(a)
    print("| dtype | dist | batch | n | k | " + " | ".join(names_seen) + " | check |")
    print("|---|---|---:|---:|---:|" + "---:|" * len(names_seen) + "---|")
    for (dtype, dist, batch, n, k, order, srt), by_algo in rows:
        best = min(v[0] for v in by_algo.values())
        cells = []
        for a in names_seen:
            if a not in by_algo:
                cells.append("")
                continue
            ms, pct, _ = by_algo[a]
            cell = f"{ms:.3f} ({pct:.1f} %)"
            cells.append(f"**{cell}**" if ms == best else cell)
        flags = (" smallest" if order == "smallest" else "") + (" sorted" if srt == "1" else "")
        checks = ",".join(sorted({v[2] for v in by_algo.values()}))
        print(f"| {dtype} | {dist}{flags} | {pow2(batch)} | {pow2(n)} | {pow2(k)} | " + " | ".join(cells) + f" | {checks} |")


def latency(names):
    """AUTO per case of a `topk bench` CSV: its time and % roofline, the fastest other algorithm,
    build/latency's events / graph-replay microseconds (same shape and k) and peers.py's torch.topk."""
    bench_name, peers_name, lat_name = names
    lat = {(r["dtype"], r["batch"], r["n"], r["k"]): r for r in load(lat_name)}
    peers = {(r["dtype"], r["batch"], r["n"], r["k"]): r for r in load(peers_name)}
    print("| dtype | batch | n | k | AUTO runs | `topk bench` ms (% roofline) | fastest other algorithm | "
          "latency events / graph us | peers.py: topk ms | torch.topk unsorted / sorted ms | speedup |")
    print("|---|---:|---:|---:|---|---:|---|---:|---:|---:|---:|")
    for key, by_algo in bench_times(bench_name).items():
        dtype, _, batch, n, k, _, _ = key
        if "auto" not in by_algo:
            continue
        auto = [r for r in load(bench_name) if (r["dtype"], r["batch"], r["n"], r["k"], r["algo"]) ==
                (dtype, batch, n, k, "auto")][0]
        others = {a: v for a, v in by_algo.items() if a != "auto"}
        best = min(others, key=lambda a: others[a][0]) if others else ""
        ms, pct, _ = by_algo["auto"]
        l, p = lat.get((dtype, batch, n, k)), peers.get((dtype, batch, n, k))
        lcell = f"{float(l['events_us']):.1f} / {float(l['graph_us']):.1f}" if l else ""
        pcells = (f"{float(p['topk_ms']):.4f} | {float(p['torch_topk_unsorted_ms']):.4f} / "
                  f"{float(p['torch_topk_sorted_ms']):.4f} | {float(p['ratio_torch_topk_unsorted']):.2f}x"
                  if p else " | | ")
        bcell = f"{best} {others[best][0]:.4f}" if best else ""
        print(f"| {dtype} | {batch} | {n} | {k} | {auto['chosen']} | {ms:.4f} ({pct:.1f} %) | {bcell} | {lcell} | "
              f"{pcells} |")


def targets(args):
    """AUTO's rows of a `topk bench` CSV (time, % of roofline) beside the same cases of a peers.py CSV
    (topk through ctypes and torch.topk, one process)."""
    bench_name, peers_name = args
    key = lambda r: (r["dtype"], r["dist"], r["batch"], r["n"], r["k"], r["order"], r["sorted"])
    peers = {key(r): r for r in load(peers_name)}
    print("| case | AUTO chose | us | % roofline | peers: topk / torch.topk unsorted / sorted, us | torch unsorted / topk |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in load(bench_name):
        if r["algo"] != "auto":
            continue
        p = peers.get(key(r))
        srt = ", sorted" if r["sorted"] == "1" else ""
        case = f"{r['dtype']} {r['dist']} {pow2(r['batch'])} x {r['n']}, k = {r['k']}{srt}"
        pc = (f"{1e3 * float(p['topk_ms']):.1f} / {1e3 * float(p['torch_topk_unsorted_ms']):.1f} / "
              f"{1e3 * float(p['torch_topk_sorted_ms']):.1f} | {float(p['ratio_torch_topk_unsorted']):.1f}x" if p else " | ")
        print(f"| {case} | {r['chosen']} | {1e3 * float(r['median_ms']):.1f} | {float(r['roofline_pct']):.1f} | {pc} |")


if __name__ == "__main__":
    {"sweep": lambda a: sweep(a), "family": lambda a: family(a[0]), "algos": algos,
     "latency": latency, "targets": targets}[sys.argv[1]](sys.argv[2:])
