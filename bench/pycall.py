#!/usr/bin/env python3
"""pycall.py: topk.topk against torch.topk as Python calls, call overhead included.

For every case of the chosen benchmark families (bench/suites.txt) this times four calls on
the same CUDA tensor:
  torch.topk(x, k, largest=..., sorted=True)     torch.topk(x, k, largest=..., sorted=False)
  topk.topk(x, k, largest=..., sorted=True)      topk.topk(x, k, largest=..., sorted=False)
topk.topk is the Python package of python/topk (argument checks, output and workspace
allocation through torch's caching allocator, the ctypes call). bench/peers.py times the bare
C call instead; this script asks what a Python user of each function pays.

Timer: a pair of torch.cuda.Events recorded from Python right before and right after each
call, on torch's current stream, with no synchronisation between calls. A call's time is
then its Python overhead plus its GPU work, whichever the pipeline waits on. Median, p10 and
p90 over --reps calls (fewer, at least MIN_REPS, where --reps calls would take longer than
--max-time), after --warmup calls. Inputs smaller than 3x the L2 cache are cloned and the calls
rotate among the copies, as in peers.py, so no call finds its input in L2.

Each case checks once that both topk.topk calls return torch.topk's values (as a multiset,
best first for sorted=True) and indices that gather to them (peers.check_against_torch).
Suites, cases and inputs are peers.py's: its suite parser and its torch data generators.
Cases of a suite that differ only in `sorted` are run once, since both are timed.

  PYTHONUNBUFFERED=1 python3 bench/pycall.py --family llm --family dsa --family rowwise \\
      --csv pycall.csv --md pycall.md
  python3 bench/pycall.py --dry-run          # the cases and a time estimate; no torch or GPU
"""

import argparse
import csv
import math
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import peers  # noqa: E402  (bench/peers.py: suites.txt parser, input generators, result check)

REPO = BENCH.parent
DEFAULT_FAMILIES = ["llm", "dsa", "rowwise"]
MIN_REPS = 10
METHODS = ["torch_sorted", "topk_sorted", "torch_unsorted", "topk_unsorted"]
COLUMNS = (["suite", "family", "dtype", "dist", "batch", "n", "k", "order", "device_name", "buffers"]
           + [f"{m}_{s}" for m in METHODS for s in ("ms", "p10_ms", "p90_ms", "reps")]
           + ["ratio_sorted", "ratio_unsorted", "check", "note"])

# The --dry-run estimate: a call costs CALL_S plus its input read at EST_BYTES_PER_S (a rough
# guess, pessimistic for torch.topk on short rows), a case CASE_S more (input, copies, check, events).
CALL_S, EST_BYTES_PER_S, CASE_S = 40e-6, 200e9, 0.03
L2_ASSUMED = 50 << 20  # an H100's; the GPU's own size is used when running


# ----------------------------------------------------------------------------- cases

def select_cases(args):
    """The cases to run, in suite order; cases differing only in `sorted` appear once."""
    try:
        sf = peers.load_suites(args.suites)
        if args.suite:
            cases = [c for c in peers.expand_suite(sf, args.suite)
                     if not args.family or c["family"] in args.family]
        else:
            cases = [c for f in args.family for c in peers.expand_suite(sf, f, f)]
    except (OSError, peers.SuiteError) as e:
        sys.exit(f"pycall.py: {e}")
    unique = {}
    for c in cases:
        unique.setdefault(case_key(c) + (c["k"], c["smallest"]), c)
    cases = list(unique.values())
    return cases[:args.max_cases] if args.max_cases > 0 else cases


def case_key(c):
    """What the input depends on: consecutive cases with the same key share their tensors."""
    return c["suite"], c["family"], c["dtype"], c["dist"], c["batch"], c["n"]


def case_line(c):
    return (f"{c['suite']} {c['family']} {c['dtype']} {c['dist']} {c['batch']} {c['n']} {c['k']} "
            f"{'smallest' if c['smallest'] else 'largest'}")


def input_bytes(c):
    return c["batch"] * c["n"] * peers.DTYPES[c["dtype"]]


def estimate_s(c, args):
    call = CALL_S + input_bytes(c) / EST_BYTES_PER_S
    reps = args.reps if call * args.reps <= args.max_time else max(MIN_REPS, int(args.max_time / call))
    return CASE_S + len(METHODS) * (args.warmup + reps) * call


def dry_run(cases, args):
    print("# suite family dtype dist batch n k order")
    total, fit = 0.0, len(cases)
    for i, c in enumerate(cases):
        print(case_line(c))
        if args.time_limit and total >= args.time_limit and fit == len(cases):
            fit = i
        total += estimate_s(c, args)
    print(f"# {len(cases)} cases; estimated ~{total:.1f} s on an H100 (rough: {CALL_S * 1e6:.0f} us + "
          f"input at {EST_BYTES_PER_S / 1e9:.0f} GB/s a call, {CASE_S * 1e3:.0f} ms a case)")
    if fit < len(cases):
        print(f"# --time-limit {args.time_limit:g} would start about {fit} of them")


# ----------------------------------------------------------------------------- timing

def measure(torch, call, next_input, args):
    """(median, p10, p90) ms of call(x) by a CUDA event pair around each call, and the reps."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.warmup):
        call(next_input())
    torch.cuda.synchronize()
    per_call = (time.perf_counter() - t0) / args.warmup
    reps = args.reps if per_call * args.reps <= args.max_time else max(MIN_REPS, int(args.max_time / per_call))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        x = next_input()
        start.record()
        call(x)
        end.record()
    ends[-1].synchronize()
    deciles = statistics.quantiles([s.elapsed_time(e) for s, e in zip(starts, ends)], n=10, method="inclusive")
    return deciles[4], deciles[0], deciles[8], reps


class Inputs:
    """A case's input and its copies, handed out in rotation across all calls of the case."""

    def __init__(self, torch, c, l2):
        x = peers.make_input(torch, c, torch.device("cuda"))
        nbytes = x.numel() * x.element_size()
        copies = 0 if nbytes >= 3 * l2 else math.ceil(3 * l2 / nbytes) - 1
        self.bufs = [x] + list(x.expand(copies, *x.shape).contiguous().unbind(0))  # one copy kernel for all
        self.next = 0

    def __call__(self):
        x = self.bufs[self.next % len(self.bufs)]
        self.next += 1
        return x


# ----------------------------------------------------------------------------- one case

def run_case(c, inputs, ctx, args):
    torch, topk = ctx["torch"], ctx["topk"]
    k, largest = c["k"], not c["smallest"]
    row = {"suite": c["suite"], "family": c["family"], "dtype": c["dtype"], "dist": c["dist"], "batch": c["batch"],
           "n": c["n"], "k": k, "order": "smallest" if c["smallest"] else "largest",
           "device_name": ctx["device_name"], "buffers": len(inputs.bufs)}
    calls = {
        "torch_sorted": lambda x: torch.topk(x, k, largest=largest, sorted=True),
        "topk_sorted": lambda x: topk.topk(x, k, largest=largest, sorted=True),
        "torch_unsorted": lambda x: torch.topk(x, k, largest=largest, sorted=False),
        "topk_unsorted": lambda x: topk.topk(x, k, largest=largest, sorted=False),
    }
    notes = []
    try:
        x = inputs.bufs[0]
        checks = [peers.check_against_torch(torch, x, *calls[f"topk_{s}"](x), dict(c, sorted=s == "sorted"))
                  for s in ("sorted", "unsorted")]
        bad = [f"{s}: {r}" for s, r in zip(("sorted", "unsorted"), checks) if r != "ok"]
        row["check"] = "FAIL" if bad else "ok"
        notes += bad
    except Exception as e:  # topk.topk raised (unsupported, out of memory): no topk times
        row["check"] = "error"
        notes.append(f"topk: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]}")
        torch.cuda.empty_cache()
    for m in METHODS:
        if m.startswith("topk") and row["check"] == "error":
            continue
        try:
            (row[f"{m}_ms"], row[f"{m}_p10_ms"], row[f"{m}_p90_ms"],
             row[f"{m}_reps"]) = measure(torch, calls[m], inputs, args)
        except Exception as e:  # a call failing must not end the run
            notes.append(f"{m}: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]}")
            torch.cuda.empty_cache()
    for s in ("sorted", "unsorted"):
        if row.get(f"torch_{s}_ms") and row.get(f"topk_{s}_ms"):
            row[f"ratio_{s}"] = row[f"torch_{s}_ms"] / row[f"topk_{s}_ms"]
    row["note"] = "; ".join(notes).replace(",", ";")
    return row


# ----------------------------------------------------------------------------- output

def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def write_markdown(path, rows, ctx, args, stopped):
    def ms(r, m):
        v = r.get(f"{m}_ms")
        return "" if v is None else f"{v:.4g}"

    def ratio(r, s):
        v = r.get(f"ratio_{s}")
        return "" if v is None else f"{v:.2f}x"

    lines = [f"# topk.topk vs torch.topk from Python: {ctx['device_name']}, torch {ctx['torch'].__version__}, "
             f"topk {ctx['topk'].__version__}", "",
             f"Timing: a pair of torch.cuda.Events recorded from Python right before and after each call, on "
             f"torch's current stream, no synchronisation between calls, so Python overhead (argument handling, "
             f"output allocation, launch) is inside each time. Medians in ms over up to {args.reps} calls "
             f"(at least {MIN_REPS}, fewer than {args.reps} where they would take over {args.max_time:g} s) after "
             f"{args.warmup} warm-up calls; inputs under 3x the L2 cache rotate among copies. "
             f"ratio = torch.topk / topk.topk: above 1, topk.topk is faster. p10/p90 are in the CSV.", "",
             "| family | dtype | dist | batch | n | k | order | torch sorted | topk sorted | ratio | "
             "torch unsorted | topk unsorted | ratio | check |",
             "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['family']} | {r['dtype']} | {r['dist']} | {r['batch']} | {r['n']} | {r['k']} | "
                     f"{r['order']} | {ms(r, 'torch_sorted')} | {ms(r, 'topk_sorted')} | {ratio(r, 'sorted')} | "
                     f"{ms(r, 'torch_unsorted')} | {ms(r, 'topk_unsorted')} | {ratio(r, 'unsorted')} | "
                     f"{r['check']} |")
    lines += ["", "Geometric mean of torch.topk / topk.topk per family, over the cases checked ok:", "",
              "| family | cases | sorted | unsorted |", "|---|---:|---:|---:|"]
    families = list(dict.fromkeys(r["family"] for r in rows))
    for fam in families + (["all"] if len(families) > 1 else []):
        sel = [r for r in rows if fam in ("all", r["family"]) and r["check"] == "ok"]
        cells = []
        for s in ("sorted", "unsorted"):
            ratios = [r[f"ratio_{s}"] for r in sel if r.get(f"ratio_{s}")]
            cells.append(f"{geomean(ratios):.2f}x" if ratios else "")
        lines.append(f"| {fam} | {len(sel)} | {cells[0]} | {cells[1]} |")
    bad = [r for r in rows if r["check"] != "ok"]
    if bad:
        lines += ["", f"Not checked ok ({len(bad)}): "
                  + "; ".join(f"{case_line(r['case'])}: {r['check']} {r['note']}" for r in bad)]
    if stopped:
        lines += ["", stopped]
    Path(path).write_text("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------- main

def parse_args(argv):
    ap = argparse.ArgumentParser(description="Time topk.topk against torch.topk as Python calls on the cases of "
                                             "benchmark families (see bench/README.md).")
    ap.add_argument("--suites", default=str(REPO / "bench" / "suites.txt"), help="the suites file")
    ap.add_argument("--family", action="append",
                    help="a family, from the suite of the same name (repeatable; default: "
                         f"{', '.join(DEFAULT_FAMILIES)}); with --suite, only these families of it")
    ap.add_argument("--suite", help="every case of this suite instead")
    ap.add_argument("--csv", help="write the rows here")
    ap.add_argument("--md", help="write a markdown table here")
    ap.add_argument("--max-cases", type=int, default=0, help="run only the first N cases")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="start no case after this many seconds (0: no limit)")
    ap.add_argument("--reps", type=int, default=50, help="timed calls per measurement (default 50)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed calls first (default 5)")
    ap.add_argument("--max-time", type=float, default=0.2,
                    help=f"fewer reps (at least {MIN_REPS}) where --reps calls would take longer than this many "
                         "seconds, judged by the warm-up (default 0.2)")
    ap.add_argument("--dry-run", action="store_true", help="list the cases and a time estimate (no torch or GPU)")
    args = ap.parse_args(argv)
    if args.family is None and not args.suite:
        args.family = DEFAULT_FAMILIES
    if args.reps < MIN_REPS or args.warmup < 1 or args.max_time <= 0 or args.time_limit < 0:
        ap.error(f"--reps must be at least {MIN_REPS}, --warmup at least 1, --max-time above 0, "
                 "--time-limit at least 0")
    return args


def main(argv=None):
    args = parse_args(argv)
    cases = select_cases(args)
    if args.dry_run:
        dry_run(cases, args)
        return 0

    import torch

    if not torch.cuda.is_available():
        sys.exit("pycall.py: torch sees no CUDA device")
    sys.path.insert(0, str(REPO / "python"))
    import topk

    if not topk.cuda_available():
        sys.exit(f"pycall.py: {topk._lib.LIBRARY_PATH} has no usable CUDA backend")
    props = torch.cuda.get_device_properties(0)
    ctx = {"torch": torch, "topk": topk, "device_name": props.name.replace(",", ";")}
    l2 = getattr(props, "L2_cache_size", 0) or L2_ASSUMED
    print(f"[pycall] {ctx['device_name']}, L2 {l2 >> 20} MiB; torch {torch.__version__}; topk {topk.__version__} "
          f"from {topk._lib.LIBRARY_PATH}; {len(cases)} cases", file=sys.stderr, flush=True)

    out = open(args.csv, "w", newline="") if args.csv else None
    writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="ignore") if out else None
    if writer:
        writer.writeheader()
    rows, inputs, key, stopped = [], None, None, ""
    start = time.perf_counter()
    for i, c in enumerate(cases):
        elapsed = time.perf_counter() - start
        if args.time_limit and elapsed >= args.time_limit:
            stopped = (f"Stopped by --time-limit {args.time_limit:g}: {i} of {len(cases)} cases run; "
                       f"the first not run: {case_line(c)}.")
            print(f"[pycall] {stopped}", file=sys.stderr, flush=True)
            break
        try:
            if case_key(c) != key:
                inputs, key = None, None  # frees the previous case's tensors first
                inputs = Inputs(torch, c, l2)
                key = case_key(c)
            row = run_case(c, inputs, ctx, args)
        except Exception as e:  # the input could not be made (memory, dtype): record and go on
            row = {"suite": c["suite"], "family": c["family"], "dtype": c["dtype"], "dist": c["dist"],
                   "batch": c["batch"], "n": c["n"], "k": c["k"], "order": "smallest" if c["smallest"] else "largest",
                   "device_name": ctx["device_name"], "check": "error",
                   "note": f"{type(e).__name__}: {e}".replace(",", ";")[:200]}
            inputs, key = None, None
            torch.cuda.empty_cache()
        row["case"] = c
        rows.append(row)
        if writer:
            writer.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})
            out.flush()
        if args.md:
            write_markdown(args.md, rows, ctx, args, stopped)
        elapsed = time.perf_counter() - start
        times = "  ".join(f"{m} {row[f'{m}_ms']:.4g}" for m in METHODS if row.get(f"{m}_ms") is not None)
        ratios = "  ".join(f"{s} {row[f'ratio_{s}']:.2f}x" for s in ("sorted", "unsorted") if row.get(f"ratio_{s}"))
        print(f"[pycall] {i + 1}/{len(cases)} {case_line(c)}: {times} ms  torch/topk {ratios}  {row['check']}"
              f"{'  ' + row['note'] if row.get('note') else ''}  [{elapsed:.0f} s, "
              f"~{elapsed / (i + 1) * (len(cases) - i - 1):.0f} s left]", file=sys.stderr, flush=True)
    if out:
        out.close()
    if args.md:
        write_markdown(args.md, rows, ctx, args, stopped)
    bad = sum(r["check"] != "ok" for r in rows)
    if bad:
        print(f"[pycall] {bad} cases not checked ok (see the check column)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
