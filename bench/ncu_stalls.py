#!/usr/bin/env python3
"""Warp-stall samples of an ncu source-page export, summed by region of SASS lines.

    ncu --kernel-name regex:KERNEL --launch-skip 2 --launch-count 1 --section SourceCounters \\
        --section WarpStateStats --warp-sampling-interval 0 --print-source sass --page source --csv \\
        --cache-control none --clock-control none <command> > F.csv
    python3 bench/ncu_stalls.py F.csv[.xz] [--lines A,B,C,... --names X,Y,...] [--max-warps N]

Prints the stall reasons' samples (issued and not) over the whole kernel, then over each region of
SASS rows [A, B), [B, C), ... (row 0 is the first instruction of the export's source page; the
regions are named by --names), most frequent first. --max-warps N counts only the instructions
executed by at most N warps of the launch (e.g. the rank-0-only code of a cluster kernel: 32 warps a
block times its number of clusters).
"""
import csv
import lzma
import sys
from collections import Counter


def rows_of(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        lines = f.readlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"Address","Source"'))
    reader = csv.reader(lines[start:])
    header = next(reader)
    return header, [r for r in reader if len(r) >= len(header)]


def main(argv):
    if not argv:
        sys.exit(__doc__)
    opt = {argv[i]: argv[i + 1] for i in range(1, len(argv) - 1, 2)}
    header, rows = rows_of(argv[0])
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    col = {r: header.index(r) for r in reasons}
    executed = header.index("Instructions Executed")
    max_warps = int(opt.get("--max-warps", "0"))

    def summed(part):
        c = Counter()
        for r in part:
            n = int(r[executed] or 0)
            if max_warps and not 0 < n <= max_warps:
                continue
            for k in reasons:
                c[k[len("stall_"):]] += int(r[col[k]] or 0)
        return c

    def show(name, c):
        print("%-14s %6d samples: %s" % (name, sum(c.values()),
                                           ", ".join("%s %d" % kv for kv in c.most_common(6))))

    show("kernel", summed(rows))
    if "--lines" in opt:
        bounds = [int(x) for x in opt["--lines"].split(",")]
        names = opt.get("--names", "").split(",")
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            show(names[i] if i < len(names) and names[i] else "[%d, %d)" % (a, b), summed(rows[a:b]))


if __name__ == "__main__":
    main(sys.argv[1:])
