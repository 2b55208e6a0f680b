"""MaxK activation (MaxK-GNN's nonlinearity): keep the k largest of each row, zero the rest.

topk.maxk(x, k) against the equivalent torch code (torch.topk + zeros + scatter), timed with
CUDA events on the rowwise shapes of the RTop-K paper; also RTop-K's early stopping
(max_iter, approximate). Checks that topk.maxk equals the torch result (exact mode).

    PYTHONPATH=python python examples/maxk.py [--rows 65536] [--m 256] [--k 32] [--dtype float32]
"""

import argparse

import torch

import topk


def torch_maxk(x: torch.Tensor, k: int) -> torch.Tensor:
    values, indices = torch.topk(x, k, dim=-1, sorted=False)
    return torch.zeros_like(x).scatter_(-1, indices, values)


def time_ms(fn, reps: int = 50) -> float:
    for _ in range(5):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=65536)
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--k", type=int, default=32)
    ap.add_argument("--dtype", default="float32")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    x = torch.randn(args.rows, args.m, device="cuda", dtype=getattr(torch, args.dtype))

    ours = topk.maxk(x, args.k, algo="rtopk")
    ref = torch_maxk(x, args.k)
    # Same kept set where values are distinct; the tie rule may differ from torch's otherwise.
    assert torch.equal(ours != 0, ref != 0) and torch.equal(ours, ref), "topk.maxk differs from torch"

    t_torch = time_ms(lambda: torch_maxk(x, args.k))
    t_ours = time_ms(lambda: topk.maxk(x, args.k, algo="rtopk"))
    print(f"maxk {args.rows} x {args.m}, k = {args.k}, {args.dtype} (median of 50, CUDA events)")
    print(f"  torch (topk + zeros + scatter): {t_torch:8.3f} ms")
    print(f"  topk.maxk (rtopk, exact):       {t_ours:8.3f} ms   {t_torch / t_ours:5.2f}x")
    for max_iter in (2, 5, 8):
        t = time_ms(lambda: topk.maxk(x, args.k, algo="rtopk", max_iter=max_iter))
        print(f"  topk.maxk (max_iter = {max_iter}, approx): {t:8.3f} ms   {t_torch / t:5.2f}x")


if __name__ == "__main__":
    main()
