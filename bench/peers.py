#!/usr/bin/env python3
"""peers.py: topk against its peers, case by case, in one process on one GPU.

For every case of a suite (bench/suites.txt, the file `topk bench` reads) this times
  topk                 libtopk's topk_select() through ctypes (algorithm --algo, default auto)
  torch.topk           sorted=True and sorted=False
  torch.sort + slice   torch.sort(...)[:, :k] (a view: no copy of the slice)
  jax.lax.top_k        on the same memory (DLPack); it only finds the largest, so "smallest"
                       cases run top_k(-x) inside the jitted function
and writes one row per case with every time and the ratios peer / topk (> 1: topk is faster).

Timers. topk and the torch peers: CUDA events recorded back to back on torch's current stream
around each call, so a time is what one call costs in a stream of calls, Python overhead
included alike (a ctypes call for topk, the torch dispatcher for torch). jax runs on its own
stream, so it is timed with a wall clock around each call plus block_until_ready(); topk is
timed the same way in the column topk_wall_ms, and the jax ratio compares those two.
Inputs smaller than 3x the L2 cache are cloned several times and the calls rotate among the
copies, as `topk bench` does. Each case checks topk's result against torch.topk once.

Without a GPU, --dry-run lists the cases (the same lines as `topk bench --suite S --list`), and
--device cpu runs everything on the CPU (topk's CPU backend, wall clocks throughout): a test of
this script, not a benchmark.
"""

import argparse
import csv
import ctypes
import math
import os
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAX_REPS = 2000

# ----------------------------------------------------------------------------- suites.txt
# The grammar of bench/suites.txt (documented at its top), parsed by the same rules as
# tools/topk/suites.c. `topk bench --list` and `--dry-run` here print identical lines.

DTYPES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "u32": 4, "i64": 8, "u64": 8}
DISTS = ["uniform", "normal", "radix", "cd", "equal", "asc", "desc", "zipf"]
DIST_ALIASES = {"radix-adversarial": "radix", "all-equal": "equal"}
INT64_MAX = (1 << 63) - 1
MAX_LIST_VALUES = 100000
MAX_GRID_CASES = 1000000


class SuiteError(ValueError):
    pass


class _Num:
    """An expression's value: exact while integral (like the C parser), else a float."""

    def __init__(self, value, is_power=False, base=0):
        self.value, self.is_power, self.base = value, is_power, base


_NUMBER = re.compile(r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?")


def _parse_number(s, i):
    m = re.match(r"\d+", s[i:])
    if not m:
        raise SuiteError(f"bad number at '{s[i:]}'")
    j = i + m.end()
    nxt = s[j:j + 1]
    if (nxt != "." or s[j:j + 2] == "..") and nxt not in ("e", "E"):
        value = int(m.group())
        if value > INT64_MAX:
            raise SuiteError(f"number too large at '{s[i:]}'")
        return _Num(value), j
    m = _NUMBER.match(s, i)
    return _Num(float(m.group())), m.end()


def _parse_factor(s, i):
    x, i = _parse_number(s, i)
    if s[i:i + 1] != "^":
        return x, i
    e, i = _parse_number(s, i + 1)
    if isinstance(x.value, int) and isinstance(e.value, int):
        if x.value >= 2 and e.value > 63:
            raise SuiteError("power too large")
        v = x.value ** e.value
        if v > INT64_MAX:
            raise SuiteError("power too large")
        return _Num(v, True, x.value), i
    return _Num(float(x.value) ** float(e.value)), i


def _parse_expr(s, i):
    x, i = _parse_factor(s, i)
    while s[i:i + 1] == "*" and s[i + 1:i + 2].isdigit():
        f, i = _parse_factor(s, i + 1)
        if isinstance(x.value, int) and isinstance(f.value, int):
            if x.value * f.value > INT64_MAX:
                raise SuiteError("product too large")
            x = _Num(x.value * f.value)
        else:
            x = _Num(float(x.value) * float(f.value))
    return x, i


def _to_int(x, text):
    if isinstance(x.value, int):
        return x.value
    r = round(x.value)  # half to even, as C's nearbyint
    if not abs(x.value - r) <= 1e-9 * max(1.0, abs(x.value)) or abs(r) > 9.2e18:
        raise SuiteError(f"'{text}' is not an integer")
    return int(r)


def parse_items(text, allow_n_div=False):
    """A list as (n_div, value) pairs in order, duplicates dropped; n_div: k = n // value."""
    items = []

    def push(n_div, v):
        if (n_div, v) in items:
            return
        if len(items) >= MAX_LIST_VALUES:
            raise SuiteError(f"list has more than {MAX_LIST_VALUES} values")
        items.append((n_div, v))

    i = 0
    while True:
        start = i
        n_div = text.startswith("n/", i)
        if n_div:
            if not allow_n_div:
                raise SuiteError("'n/' is allowed only in the k column")
            i += 2
        a, i = _parse_expr(text, i)
        av = _to_int(a, text[start:])
        if not text.startswith("..", i):
            if av < 1:
                raise SuiteError(f"'{text[start:i]}' must be at least 1")
            push(n_div, av)
        else:
            if n_div:
                raise SuiteError("'n/' cannot start a range")
            b, i = _parse_expr(text, i + 2)
            bv = _to_int(b, text[start:])
            geometric = a.is_power and b.is_power and a.base == b.base and a.base >= 2
            step = a.base if geometric else 1
            if text[i:i + 1] == ":":
                kind = text[i + 1:i + 2]
                if kind not in ("*", "+"):
                    raise SuiteError(f"range step must be ':*F' or ':+S' in '{text[start:]}'")
                st, i = _parse_expr(text, i + 2)
                step = _to_int(st, text[start:])
                geometric = kind == "*"
                if step < (2 if geometric else 1):
                    raise SuiteError(f"range step too small in '{text[start:]}'")
            if av < 1 or bv < av:
                raise SuiteError(f"range '{text[start:i]}' is empty or starts below 1")
            v = av
            while v <= bv:
                push(0, v)
                v = v * step if geometric else v + step
        if i == len(text):
            return items
        if text[i] != ",":
            raise SuiteError(f"unexpected '{text[i:]}' in list '{text}'")
        i += 1


def _words(text, what, limit):
    words = [w for w in text.split(",") if w]
    if len(words) > limit:
        raise SuiteError(f"too many {what}")
    if not words:
        raise SuiteError("empty list")
    return words


def expand_grid(g, max_input_bytes):
    """The cases of one grid line, in the order of tools/topk/suites.c."""
    for d in _words(g["dtypes"], "dtypes", 32):
        if d not in DTYPES:
            raise SuiteError(f"unknown dtype '{d}'")
    dists = []
    for d in _words(g["dists"], "distributions", 32):
        d = DIST_ALIASES.get(d, d)
        if d not in DISTS:
            raise SuiteError(f"unknown distribution '{d}'")
        dists.append(d)
    orders = _words(g["orders"] or "largest", "orders", 2)
    for o in orders:
        if o not in ("largest", "smallest"):
            raise SuiteError(f"order must be largest or smallest, not '{o}'")
    sorteds = _words(g["sorteds"] or "0", "sorted values", 2)
    for s in sorteds:
        if s not in ("0", "1"):
            raise SuiteError(f"sorted must be 0 or 1, not '{s}'")
    batches = parse_items(g["batches"])
    ns = parse_items(g["ns"])
    ks = parse_items(g["ks"], allow_n_div=True)
    cases = []
    for dtype in _words(g["dtypes"], "dtypes", 32):
        for dist in dists:
            for _, batch in batches:
                for _, n in ns:
                    if max_input_bytes > 0 and batch * n * DTYPES[dtype] > max_input_bytes:
                        continue
                    seen = set()
                    for n_div, v in ks:
                        k = n // v if n_div else v
                        if k < 1 or k > n or k in seen:
                            continue
                        seen.add(k)
                        for order in orders:
                            for s in sorteds:
                                if len(cases) >= MAX_GRID_CASES:
                                    raise SuiteError(f"the grid has more than {MAX_GRID_CASES} cases")
                                cases.append(dict(suite=g["suite"], family=g["family"], dtype=dtype, dist=dist,
                                                  batch=batch, n=n, k=k, smallest=order == "smallest",
                                                  sorted=s == "1"))
    return cases


_FIELD_LIMITS = [("suite", 32), ("family", 32), ("dtypes", 128), ("dists", 128), ("batches", 128), ("ns", 128),
                 ("ks", 128)]


def load_suites(path):
    """{'max_input_bytes': int, 'grids': [grid dicts], 'about': {suite: text}}; SuiteError with path:line."""
    sf = {"max_input_bytes": 0, "grids": [], "about": {}}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            tok = line.split("#", 1)[0].split()
            if not tok:
                continue
            try:
                if len(tok) > 64:
                    raise SuiteError("more than 64 columns")
                if tok[0] == "about":
                    if len(tok) < 3:
                        raise SuiteError("expected 'about SUITE TEXT'")
                    sf["about"][tok[1]] = " ".join(tok[2:])
                elif tok[0] == "max_input_bytes":
                    items = parse_items(tok[1]) if len(tok) == 2 else []
                    if len(items) != 1:
                        raise SuiteError("expected 'max_input_bytes VALUE'")
                    sf["max_input_bytes"] = items[0][1]
                else:
                    if len(tok) < 7:
                        raise SuiteError("expected SUITE FAMILY DTYPES DISTS BATCHES NS KS [order=..] [sorted=..], "
                                         f"got {len(tok)} columns")
                    g = dict(zip([name for name, _ in _FIELD_LIMITS], tok[:7]), orders="", sorteds="", line=lineno)
                    for name, limit in _FIELD_LIMITS:
                        if len(g[name]) >= limit:
                            raise SuiteError(f"'{g[name]}' is too long (at most {limit - 1} characters)")
                    for opt in tok[7:]:
                        if opt.startswith("order="):
                            g["orders"] = opt[6:]
                        elif opt.startswith("sorted="):
                            g["sorteds"] = opt[7:]
                        else:
                            raise SuiteError(f"unknown option '{opt}' (order=... or sorted=...)")
                    expand_grid(g, 0)  # errors show at load time, with the line
                    sf["grids"].append(g)
            except SuiteError as e:
                raise SuiteError(f"{path}:{lineno}: {e}") from None
    return sf


def expand_suite(sf, suite, family=None, max_input_bytes=0):
    cap = max_input_bytes if max_input_bytes > 0 else sf["max_input_bytes"]
    grids = [g for g in sf["grids"] if g["suite"] == suite]
    if not grids:
        names = ", ".join(dict.fromkeys(g["suite"] for g in sf["grids"]))
        raise SuiteError(f"no suite '{suite}' (there are: {names})")
    cases = []
    for g in grids:
        if family is None or g["family"] == family:
            cases += expand_grid(g, cap)
    return cases


def case_line(c):
    """The line `topk bench --list` prints for a case."""
    return (f"{c['suite']} {c['family']} {c['dtype']} {c['dist']} {c['batch']} {c['n']} {c['k']} "
            f"{'smallest' if c['smallest'] else 'largest'} {int(c['sorted'])}")


def case_label(c):
    def size(v):
        return f"2^{v.bit_length() - 1}" if v >= 1024 and v & (v - 1) == 0 else str(v)

    flags = (" smallest" if c["smallest"] else "") + (" sorted" if c["sorted"] else "")
    return f"{c['family']} {c['dtype']} {c['dist']} batch={size(c['batch'])} n={size(c['n'])} k={size(c['k'])}{flags}"


# ----------------------------------------------------------------------------- libtopk via ctypes
# Mirrors include/topk.h: the enums' values and struct topk_problem field by field.

TOPK_DTYPE = {"f32": 0, "f16": 1, "bf16": 2, "f64": 3, "i32": 4, "u32": 5, "i64": 6, "u64": 7}
TOPK_INDEX_I64 = 0
TOPK_SMALLEST, TOPK_SORTED = 1 << 0, 1 << 1
TOPK_BACKEND_CPU, TOPK_BACKEND_CUDA = 1, 2
TOPK_ERR_UNSUPPORTED = 9


class TopkProblem(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("batch", ctypes.c_int64),
        ("n", ctypes.c_int64),
        ("k", ctypes.c_int64),
        ("ld", ctypes.c_int64),
        ("row_offsets", ctypes.c_void_p),  # const int64_t*
        ("index_type", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("algo", ctypes.c_int),
        ("backend", ctypes.c_int),
        ("max_iter", ctypes.c_int32),  # 0: exact (a missing field here reads garbage in C)
    ]


class Libtopk:
    def __init__(self, path):
        lib = ctypes.CDLL(str(path))
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        self.select = lib.topk_select
        self.select.restype = ctypes.c_int
        self.select.argtypes = [ctypes.POINTER(TopkProblem), vp, vp, vp, vp, sz, vp]
        self.workspace_size = lib.topk_workspace_size
        self.workspace_size.restype = ctypes.c_int
        self.workspace_size.argtypes = [ctypes.POINTER(TopkProblem), ctypes.POINTER(sz)]
        self.plan_create = lib.topk_plan_create
        self.plan_create.restype = ctypes.c_int
        self.plan_create.argtypes = [ctypes.POINTER(vp), ctypes.POINTER(TopkProblem)]
        self.plan_algo = lib.topk_plan_algo
        self.plan_algo.restype = ctypes.c_int
        self.plan_algo.argtypes = [vp]
        self.plan_destroy = lib.topk_plan_destroy
        self.plan_destroy.restype = None
        self.plan_destroy.argtypes = [vp]
        for name in ("topk_status_name", "topk_error_detail", "topk_algo_name", "topk_version_string"):
            getattr(lib, name).restype = ctypes.c_char_p
        lib.topk_status_name.argtypes = [ctypes.c_int]
        lib.topk_algo_name.argtypes = [ctypes.c_int]
        lib.topk_algo_parse.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        self.lib = lib

    def error(self, status):
        return f"{self.lib.topk_status_name(status).decode()} {self.lib.topk_error_detail().decode()}".strip()

    def algo_name(self, algo):
        name = self.lib.topk_algo_name(algo)
        return name.decode() if name else str(algo)

    def algo_parse(self, name):
        a = ctypes.c_int()
        if self.lib.topk_algo_parse(name.encode(), ctypes.byref(a)) != 0:
            raise SystemExit(f"peers.py: unknown algorithm '{name}'")
        return a.value

    def chosen(self, problem):
        plan = ctypes.c_void_p()
        if self.plan_create(ctypes.byref(plan), ctypes.byref(problem)) != 0:
            return ""
        algo = self.plan_algo(plan)
        self.plan_destroy(plan)
        return self.algo_name(algo)


# ----------------------------------------------------------------------------- inputs (torch)

def make_input(torch, c, device):
    """A (batch, n) tensor of the case's distribution, made on the GPU with torch's generator.
    The recipes follow tools/common/gen.c: radix fixes the top min(20, width - 4) key bits to
    those of 1.0 (ints: 2^(width-8)); cd puts 15/16 of the elements in [0.5, 0.5 + 2^-20)."""
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
           "i32": torch.int32, "i64": torch.int64}.get(c["dtype"])
    if tdt is None:
        raise ValueError(f"torch has no usable {c['dtype']}")
    shape = (c["batch"], c["n"])
    is_float = tdt.is_floating_point
    width = DTYPES[c["dtype"]] * 8
    dist = c["dist"]
    if dist == "uniform":
        if is_float:
            return torch.rand(shape, device=device, dtype=torch.float32).to(tdt)
        info = torch.iinfo(tdt)
        return torch.randint(info.min, info.max, shape, device=device, dtype=tdt)
    if dist == "normal":
        z = torch.randn(shape, device=device, dtype=torch.float64 if width == 64 else torch.float32)
        return z.to(tdt) if is_float else torch.round(z * 2.0 ** (width // 4)).to(tdt)
    if dist == "radix":
        eq = min(20, width - 4)
        bits_dt = {16: torch.int16, 32: torch.int32, 64: torch.int64}[width]
        one = torch.ones(1, dtype=tdt) if is_float else torch.tensor([1 << (width - 8)], dtype=tdt)
        prefix = int(one.view(bits_dt).item()) & ~((1 << (width - eq)) - 1)
        low = torch.randint(0, 1 << (width - eq), shape, device=device, dtype=torch.int64)
        return (low | prefix).to(bits_dt).view(tdt)
    if dist == "cd":
        u = torch.rand(shape, device=device, dtype=torch.float64)
        narrow = torch.randint(0, 16, shape, device=device) != 0
        v = torch.where(narrow, 0.5 + u * 2.0 ** -20, torch.rand(shape, device=device, dtype=torch.float64))
        return v.to(tdt) if is_float else (v * 2.0 ** (width - 1)).to(tdt)
    if dist == "equal":
        return torch.ones(shape, device=device, dtype=tdt)
    if dist in ("asc", "desc"):
        pos = torch.arange(c["n"], device=device, dtype=torch.float64)
        if dist == "desc":
            pos = c["n"] - 1 - pos
        row = pos / c["n"] if is_float else pos
        return row.to(tdt).expand(shape).contiguous()
    if dist == "zipf":
        u = torch.rand(shape, device=device, dtype=torch.float64) + 2.0 ** -60
        return torch.floor(u ** (-1.0 / 1.1)).to(tdt)
    raise ValueError(f"unknown distribution {dist}")


# ----------------------------------------------------------------------------- timing

def reps_for(est_ms, args):
    reps = args.reps
    if est_ms > 0 and args.min_time * 1e3 / est_ms > reps:
        reps = math.ceil(args.min_time * 1e3 / est_ms)
    return min(reps, MAX_REPS)


def time_events(torch, launch, nbuf, args):
    """Median ms per call from CUDA events recorded back to back on the current stream."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(args.warmup):
        launch(i % nbuf)
    end.record()
    end.synchronize()
    reps = reps_for(start.elapsed_time(end) / max(args.warmup, 1), args)
    events = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    events[0].record()
    for i in range(reps):
        launch((args.warmup + i) % nbuf)
        events[i + 1].record()
    events[-1].synchronize()
    return statistics.median(events[i].elapsed_time(events[i + 1]) for i in range(reps)), reps


def time_wall(call, nbuf, args):
    """Median ms per call by a wall clock; call(i) must wait for its result."""
    t0 = time.perf_counter()
    for i in range(args.warmup):
        call(i % nbuf)
    reps = reps_for(1e3 * (time.perf_counter() - t0) / max(args.warmup, 1), args)
    times = []
    for i in range(reps):
        t0 = time.perf_counter()
        call((args.warmup + i) % nbuf)
        times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times), reps


# ----------------------------------------------------------------------------- checking

def same_values(torch, a, b):
    """Exact equality of two tensors, NaN equal to NaN."""
    na, nb = torch.isnan(a), torch.isnan(b)
    if a.is_floating_point():
        return torch.equal(na, nb) and torch.equal(torch.where(na, 0, a), torch.where(nb, 0, b))
    return torch.equal(a, b)


def check_against_torch(torch, x, values, indices, c):
    """'ok' or 'FAIL: why': values as a multiset equal torch.topk's, indices distinct, in range
    and pointing at their values, and best first when sorted."""
    largest = not c["smallest"]
    ref = torch.topk(x, c["k"], dim=1, largest=largest, sorted=True).values
    ours_sorted = torch.sort(values, dim=1, descending=largest, stable=True).values
    if not same_values(torch, ours_sorted, ref):
        return "FAIL: the values differ from torch.topk's"
    if c["sorted"] and not same_values(torch, values, ours_sorted):
        return "FAIL: not sorted best first"
    if bool(((indices < 0) | (indices >= c["n"])).any()):
        return "FAIL: an index is out of range"
    if not same_values(torch, x.gather(1, indices), values):
        return "FAIL: a value is not the input at its index"
    s = torch.sort(indices, dim=1).values
    if c["k"] > 1 and bool((s[:, 1:] == s[:, :-1]).any()):
        return "FAIL: an index is returned twice"
    return "ok"


# ----------------------------------------------------------------------------- one case

PEERS = ["torch_topk_sorted", "torch_topk_unsorted", "torch_sort", "jax_top_k"]
COLUMNS = (["suite", "family", "dtype", "dist", "batch", "n", "k", "order", "sorted", "algo", "chosen",
            "device_name", "buffers", "topk_ms", "topk_wall_ms"]
           + [f"{p}_ms" for p in PEERS] + [f"ratio_{p}" for p in PEERS] + ["check", "note"])


def time_stream(ctx, launch, nbuf, args):
    """Per-call time of stream work: CUDA events on a GPU, a wall clock after each call on the CPU."""
    if ctx["cuda"]:
        return time_events(ctx["torch"], launch, nbuf, args)
    return time_wall(launch, nbuf, args)


def run_case(c, ctx, args):
    torch, lib = ctx["torch"], ctx["lib"]
    dev, sync = ctx["device"], ctx["sync"]
    row = {"suite": c["suite"], "family": c["family"], "dtype": c["dtype"], "dist": c["dist"], "batch": c["batch"],
           "n": c["n"], "k": c["k"], "order": "smallest" if c["smallest"] else "largest", "sorted": int(c["sorted"]),
           "algo": args.algo, "device_name": ctx["device_name"]}
    notes = []
    x = make_input(torch, c, dev)
    nbytes = x.numel() * x.element_size()
    nbuf = 1 if nbytes >= 3 * ctx["l2"] else math.ceil(3 * ctx["l2"] / nbytes)
    bufs = [x] + [x.clone() for _ in range(nbuf - 1)]
    row["buffers"] = nbuf
    k, largest = c["k"], not c["smallest"]

    # topk through ctypes, on torch's current stream, with preallocated outputs and workspace.
    p = TopkProblem(dtype=TOPK_DTYPE[c["dtype"]], batch=c["batch"], n=c["n"], k=k, index_type=TOPK_INDEX_I64,
                    flags=(TOPK_SMALLEST if c["smallest"] else 0) | (TOPK_SORTED if c["sorted"] else 0),
                    algo=ctx["algo"], backend=TOPK_BACKEND_CUDA if ctx["cuda"] else TOPK_BACKEND_CPU)
    values = torch.empty((c["batch"], k), device=dev, dtype=x.dtype)
    indices = torch.empty((c["batch"], k), device=dev, dtype=torch.int64)
    ws_bytes = ctypes.c_size_t()
    status = lib.workspace_size(ctypes.byref(p), ctypes.byref(ws_bytes))
    if status != 0:
        row["check"] = "unsupported" if status == TOPK_ERR_UNSUPPORTED else "error"
        row["note"] = lib.error(status).replace(",", ";")
        return row
    row["chosen"] = lib.chosen(p) if ctx["algo"] == 0 else ""
    ws = torch.empty(max(ws_bytes.value, 1), device=dev, dtype=torch.uint8)
    pp, vptr, iptr, wptr = ctypes.byref(p), values.data_ptr(), indices.data_ptr(), ws.data_ptr()
    wsize = ws_bytes.value
    stream = (torch.cuda.current_stream().cuda_stream or None) if ctx["cuda"] else None
    ptrs = [b.data_ptr() for b in bufs]

    def ours(i):
        s = lib.select(pp, ptrs[i], vptr, iptr, wptr, wsize, stream)
        if s != 0:
            raise RuntimeError(f"topk_select: {lib.error(s)}")

    indices.fill_(-1)  # poison: a slot the call leaves unwritten fails the range check
    try:
        ours(0)
        sync()
        row["check"] = check_against_torch(torch, x, values, indices, c)
        row["topk_ms"], _ = time_stream(ctx, ours, nbuf, args)
        row["topk_wall_ms"], _ = time_wall(lambda i: (ours(i), sync()), nbuf, args)
    except RuntimeError as e:
        row["check"], row["note"] = "error", str(e).replace(",", ";")
        return row
    if row["check"] != "ok":
        print(f"[peers] {case_label(c)}: {row['check']}", file=sys.stderr)

    peers = {
        "torch_topk_sorted": lambda i: torch.topk(bufs[i], k, dim=1, largest=largest, sorted=True),
        "torch_topk_unsorted": lambda i: torch.topk(bufs[i], k, dim=1, largest=largest, sorted=False),
        "torch_sort": lambda i: torch.sort(bufs[i], dim=1, descending=largest)[0][:, :k],
    }
    for name in args.peers:
        try:
            if name == "jax_top_k":
                row[f"{name}_ms"] = time_jax(ctx, bufs, c, nbuf, args)
                ours_ms = row["topk_wall_ms"]
            else:
                row[f"{name}_ms"], _ = time_stream(ctx, peers[name], nbuf, args)
                ours_ms = row["topk_ms"]
            row[f"ratio_{name}"] = row[f"{name}_ms"] / ours_ms
        except Exception as e:  # a peer failing (out of memory, unsupported) must not end the run
            notes.append(f"{name}: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:120]}".replace(",", ";"))
            ctx["free_cache"]()
    if c["smallest"] and "jax_top_k" in args.peers:
        notes.append("jax: top_k(-x)")
    row["note"] = "; ".join(notes)
    return row


def time_jax(ctx, bufs, c, nbuf, args):
    jax = ctx["jax"]
    k = c["k"]
    if c["smallest"]:
        f = jax.jit(lambda a: jax.lax.top_k(-a, k))
    else:
        f = jax.jit(lambda a: jax.lax.top_k(a, k))
    try:
        arrays = [jax.dlpack.from_dlpack(b) for b in bufs]
    except TypeError:  # an older jax wants a DLPack capsule
        import torch.utils.dlpack

        arrays = [jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(b)) for b in bufs]
    jax.block_until_ready(f(arrays[0]))  # compiles
    return time_wall(lambda i: jax.block_until_ready(f(arrays[i])), nbuf, args)[0]


# ----------------------------------------------------------------------------- output

def fmt(v):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def write_markdown(path, rows, args, ctx):
    def ms(v):
        return "" if v is None else f"{v:.4g}"

    def cell(row, peer):
        ms, ratio = row.get(f"{peer}_ms"), row.get(f"ratio_{peer}")
        return "" if ms is None else f"{ms:.4g} ({ratio:.2f}x)"

    timer = ("topk and torch: CUDA events between calls; jax: wall clock, compared with topk's wall-clock time"
             if ctx["cuda"] else "every time is a wall clock (the CPU test mode, not a benchmark)")
    lines = [f"# topk vs peers: suite {args.suite}, {ctx['device_name']}", "",
             f"topk: {args.algo} via ctypes. Times are medians in ms; (Nx) is peer / topk, above 1 topk is faster. "
             f"{timer}.", "",
             "| case | chosen | topk | torch.topk sorted | torch.topk unsorted | torch.sort+slice | topk wall | "
             "jax.lax.top_k wall | check |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['label']} | {r.get('chosen', '')} | {ms(r.get('topk_ms'))} | "
                     f"{cell(r, 'torch_topk_sorted')} | {cell(r, 'torch_topk_unsorted')} | {cell(r, 'torch_sort')} | "
                     f"{ms(r.get('topk_wall_ms'))} | {cell(r, 'jax_top_k')} | {r.get('check', '')} |")
    lines += ["", "Geometric mean of peer / topk over the cases both ran:", ""]
    for peer in PEERS:
        ratios = [r[f"ratio_{peer}"] for r in rows if r.get(f"ratio_{peer}")]
        if ratios:
            gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            lines.append(f"- {peer}: {gm:.2f}x over {len(ratios)} cases")
    fails = [r["label"] for r in rows if r.get("check") not in ("ok",)]
    if fails:
        lines += ["", f"Not checked ok ({len(fails)}): " + "; ".join(fails)]
    Path(path).write_text("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------- main

def parse_args(argv):
    ap = argparse.ArgumentParser(description="Time topk against torch.topk, torch.sort and jax.lax.top_k "
                                             "on the cases of a suite (see bench/README.md).")
    ap.add_argument("--suite", default="quick", help="suite name in the suites file (default quick)")
    ap.add_argument("--suites", default=str(REPO / "bench" / "suites.txt"), help="the suites file")
    ap.add_argument("--family", help="only this family of the suite")
    ap.add_argument("--lib", default=str(REPO / "build" / "libtopk.so"), help="libtopk.so to call")
    ap.add_argument("--csv", help="write the rows here")
    ap.add_argument("--md", help="write a markdown table here")
    ap.add_argument("--max-cases", type=int, default=0, help="run only the first N cases")
    ap.add_argument("--max-input-bytes", type=int, default=0, help="drop larger inputs (default: the file's cap)")
    ap.add_argument("--dry-run", action="store_true", help="list the cases and exit (needs no torch, jax or GPU)")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="cpu: test this script without a GPU (topk's CPU backend, wall clocks)")
    ap.add_argument("--algo", default="auto", help="topk algorithm (default auto)")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of: " + ", ".join(PEERS))
    ap.add_argument("--reps", type=int, default=20, help="at least this many timed calls (default 20)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    ap.add_argument("--min-time", type=float, default=0.1, help="time at least this many seconds per measurement")
    ap.add_argument("--time-limit", type=float, default=0, help="start no case after this many seconds (0: none)")
    args = ap.parse_args(argv)
    args.peers = [p for p in args.peers.split(",") if p]
    for p in args.peers:
        if p not in PEERS:
            ap.error(f"unknown peer '{p}'")
    if not 1 <= args.reps <= MAX_REPS or args.warmup < 0 or args.min_time < 0:
        ap.error(f"--reps must be 1..{MAX_REPS}; --warmup and --min-time >= 0")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        sf = load_suites(args.suites)
        cases = expand_suite(sf, args.suite, args.family, args.max_input_bytes)
    except (OSError, SuiteError) as e:
        sys.exit(f"peers.py: {e}")
    if args.max_cases > 0:
        cases = cases[:args.max_cases]
    if args.dry_run:
        print("# suite family dtype dist batch n k order sorted")
        for c in cases:
            print(case_line(c))
        print(f"# {len(cases)} cases")
        return 0

    if "jax_top_k" in args.peers:
        # jax must not take 75 % of the GPU for itself: torch and libtopk share it.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import torch

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("peers.py: torch sees no CUDA device (--device cpu tests this script on the CPU)")
    ctx = {"torch": torch, "cuda": cuda, "device": torch.device(args.device),
           "sync": torch.cuda.synchronize if cuda else (lambda: None),
           "free_cache": torch.cuda.empty_cache if cuda else (lambda: None)}
    if "jax_top_k" in args.peers:
        import jax
        import jax.dlpack

        jax.config.update("jax_enable_x64", True)  # so f64/i64 inputs keep their type
        ctx["jax"] = jax
    lib = Libtopk(args.lib)
    ctx["lib"], ctx["algo"] = lib, lib.algo_parse(args.algo)
    if cuda:
        props = torch.cuda.get_device_properties(0)
        ctx["device_name"] = props.name.replace(",", ";")
        ctx["l2"] = getattr(props, "L2_cache_size", 0) or 50 << 20
    else:
        ctx["device_name"], ctx["l2"] = "cpu", 32 << 20  # the rotation rule of `topk bench --device cpu`
    print(f"[peers] {ctx['device_name']}, L2 {ctx['l2'] >> 20} MiB; libtopk {lib.lib.topk_version_string().decode()} "
          f"from {args.lib}; torch {torch.__version__}"
          + (f", jax {ctx['jax'].__version__}" if "jax" in ctx else ""), file=sys.stderr)

    out = open(args.csv, "w", newline="") if args.csv else None
    writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="ignore") if out else None
    if writer:
        writer.writeheader()
    rows, fails, start = [], 0, time.perf_counter()
    for i, c in enumerate(cases):
        if args.time_limit and time.perf_counter() - start > args.time_limit:
            print(f"[peers] --time-limit {args.time_limit:g} s reached: {len(cases) - i} of {len(cases)} cases not run",
                  file=sys.stderr)
            break
        try:
            row = run_case(c, ctx, args)
        except Exception as e:  # the input could not be made (memory, dtype): record and go on
            row = {**{k: c.get(k) for k in ("suite", "family", "dtype", "dist", "batch", "n", "k")},
                   "order": "smallest" if c["smallest"] else "largest", "sorted": int(c["sorted"]),
                   "algo": args.algo, "check": "error", "note": f"{type(e).__name__}: {e}".replace(",", ";")[:200]}
            ctx["free_cache"]()
        row["label"] = case_label(c)
        fails += row.get("check") not in ("ok", "unsupported")
        rows.append(row)
        if writer:
            writer.writerow({k: fmt(v) if isinstance(v, float) else v for k, v in row.items()})
            out.flush()
        if args.md:
            write_markdown(args.md, rows, args, ctx)
        ratios = "  ".join(f"{p}={row[f'ratio_{p}']:.2f}x" for p in args.peers if row.get(f"ratio_{p}"))
        elapsed = time.perf_counter() - start
        print(f"{row['label']:<52} topk {fmt(row.get('topk_ms'))} ms  {ratios}  {row.get('check')}", flush=True)
        print(f"[peers] case {i + 1}/{len(cases)}  elapsed {elapsed:.0f} s  "
              f"remaining ~{elapsed / (i + 1) * (len(cases) - i - 1):.0f} s", file=sys.stderr, flush=True)
    if out:
        out.close()
    if fails:
        print(f"[peers] {fails} cases not checked ok (see the check column)", file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
