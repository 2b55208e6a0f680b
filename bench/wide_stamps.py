#!/usr/bin/env python3
"""Rank 0's steps in AIR CLUSTER's wide start, from its stamps, as a markdown table.

The stamps exist only in a build configured with -DTOPK_AIR_STAMPS=ON (they slow the kernel by a
few percent even when off at run time, docs/perf-notes.md v0.52), e.g. in build-stamps:

    cmake -S . -B build-stamps -G Ninja -DTOPK_AIR_STAMPS=ON && ninja -C build-stamps topk

and build-stamps/topk in place of build/topk below.

    TOPK_AIR_CLUSTER_STAMPS=1 build/topk bench -a auto -n N -b B -k 1024 --dtype D --dist normal \\
        --reps 30 --warmup 3 --min-time 0 --check-results 0 --in-l2 | grep "WIDESTAMP rank=0 " > F
    python3 bench/wide_stamps.py F [G.txt.xz ...]

Each file holds WIDESTAMP lines (air_cluster_wide.cuh prints one a block a launch; only rank 0's
are used), plain or xz-compressed; a line "# NAME" starts a section of its own (several shapes in
one file, as bench/results/*_wide_stamps_s47* keep them). Every stamp is %globaltimer minus the
block's start (t0), in ns. Per section, the median over launches of: staged (0), bound (0 -> 1),
collection (w -> 2: the cluster wait, then this block's keys >= its bound), headers (2 -> 3),
candidates (3 -> 4), digit (4 -> L: the read and the binade digit where it runs), select (L -> 5),
gather (5 -> 6), writes (6 -> 7) and in kernel (7), in us; and span: per launch, from its first
block's start (t0) to the last rank 0's write (t0 + 7), median over the launches whose rows all
printed (rank 0 lines grouped by t0: a launch's blocks start within a few hundred ns, launches are
tens of us apart; the usual group size is the launch's rows), since a launch ends with its slowest row.
"""
import lzma
import re
import statistics
import sys

STEPS = [("staged", None, "0"), ("bound", "0", "1"), ("collection", "w", "2"), ("headers", "2", "3"),
         ("candidates", "3", "4"), ("digit", "4", "L"), ("select", "L", "5"), ("gather", "5", "6"),
         ("writes", "6", "7"), ("in kernel", None, "7")]
FIELD = re.compile(r"(\w+)[:=](\d+)")


def sections(path):
    opener = lzma.open if path.endswith(".xz") else open
    name, rows, out = path, [], []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("# "):
                if rows:
                    out.append((name, rows))
                name, rows = line[2:].strip(), []
            elif line.startswith("WIDESTAMP rank=0 "):
                rows.append({k: int(v) for k, v in FIELD.findall(line)})
    if rows:
        out.append((name, rows))
    return out


def medians(rows):
    return [statistics.median((r[b] - (r[a] if a else 0)) / 1000.0 for r in rows) for _, a, b in STEPS]


def span(rows):
    rows = sorted(rows, key=lambda r: r["t0"])
    launches, cur = [], []
    for r in rows:
        if cur and r["t0"] - cur[0]["t0"] > 5000:
            launches.append(cur)
            cur = []
        cur.append(r)
    launches.append(cur)
    per = statistics.mode(len(g) for g in launches)  # rows a launch: the usual group's size
    return statistics.median((max(r["t0"] + r["7"] for r in g) - min(r["t0"] for r in g)) / 1000.0
                             for g in launches if len(g) == per)


def main(paths):
    if not paths:
        sys.exit(__doc__)
    print("| stamps | launches | " + " | ".join(s for s, _, _ in STEPS) + " | span |")
    print("| --- | ---: | " + " | ".join("---:" for _ in STEPS) + " | ---: |")
    for path in paths:
        for name, rows in sections(path):
            print("| %s | %d | " % (name, len(rows)) + " | ".join("%.2f" % m for m in medians(rows)) +
                  " | %.2f |" % span(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
