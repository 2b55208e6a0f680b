#!/usr/bin/env python3
"""Compare two builds' `build/latency --csv` runs, shape by shape.

    python3 bench/latency_compare.py A1.csv,A2.csv,A3.csv B1.csv,B2.csv,B3.csv [--limit 10] [--stat max]

Each side is one or more CSVs of the same build (runs alternated with the other build's in one
device call, as docs/BENCHMARKS.md records them). Per shape (dtype, batch, n, k) a side's figure is
the MOST of its runs, for graph_us and for events_us alike: the target is a bound on every call, so
the slowest run is the one that counts. Prints, per k, the shapes near or over the limit and, per k,
the geometric mean and range of B / A (graph replay) and how many shapes each side keeps within the
limit under graph replay and under events.

--stat median or --stat min takes that of the runs instead, to compare builds: runs of one binary fall
into two modes ~0.1 us apart on every shape at once (docs/perf-notes.md v0.50), so the most of three
or four runs can take one build's slow mode and the other's fast one.
"""
import csv
import math
import statistics
import sys


STATS = {"max": max, "median": statistics.median, "min": min}


def load(paths, stat=max):
    runs = {}
    for path in paths.split(","):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["dtype"], int(row["batch"]), int(row["n"]), int(row["k"]))
                try:
                    runs.setdefault(key, []).append((float(row["graph_us"]), float(row["events_us"])))
                except ValueError:  # "unsupported" or a failed capture: no figure
                    continue
    return {key: (stat([g for g, _ in v]), stat([e for _, e in v])) for key, v in runs.items()}


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    limit = float(argv[argv.index("--limit") + 1]) if "--limit" in argv else 10.0
    stat = argv[argv.index("--stat") + 1] if "--stat" in argv else "max"
    if stat not in STATS:
        sys.exit("latency_compare: --stat takes max, median or min")
    a, b = load(argv[0], STATS[stat]), load(argv[1], STATS[stat])
    print("| dtype | batch | n | k | A graph | B graph | B / A | A events | B events |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    summary = []
    for k in sorted({key[3] for key in a}):
        keys = sorted(key for key in a if key[3] == k and key in b)
        if not keys:
            continue
        ratios = [b[key][0] / a[key][0] for key in keys]
        for key in keys:
            if max(a[key] + b[key]) > 0.95 * limit:
                print("| %s | %d | %d | %d | %.2f | %.2f | %.3f | %.2f | %.2f |"
                      % (key + (a[key][0], b[key][0], b[key][0] / a[key][0], a[key][1], b[key][1])))
        within = [sum(side[key][i] <= limit for key in keys) for side in (a, b) for i in (0, 1)]
        summary.append("k = %d: B / A geomean %.3f (%.3f-%.3f); within %g us, graph A %d B %d, events A %d B %d, of %d"
                       % (k, math.exp(sum(map(math.log, ratios)) / len(ratios)), min(ratios), max(ratios), limit,
                          within[0], within[2], within[1], within[3], len(keys)))
    print()
    print("\n".join(summary))


if __name__ == "__main__":
    main(sys.argv[1:])
