#!/usr/bin/env python3
"""wide_bound_model.py: a numpy model of CLUSTER's wide start's per-block bound (session 43).

Each block of a cluster of cs blocks stages a slice of the row; thread t of 1024 holds vectors
t, t + 1024, ... (4 keys each) and its maximum. The block sends its keys >= its bound thr_b; rank 0
checks that >= k keys >= M (the largest bound) were sent. Estimators of thr_b:
  exact       the q-th largest of the 1024 thread maxima (the radix select before session 43)
  median      the median over the 32 warps of each warp's r-th largest maximum, r = ceil(q / 32)
  median_rnd  the same with r = round(q / 32)
  mean        the mean of the warps' values instead of their median
Printed per shape and distribution: trials where a block's keys overflowed its segment (4096 / cs),
trials where the check failed (both send the cluster to the radix passes), the mean candidate count.

  python3 bench/wide_bound_model.py [normal uniform gumbel t3] [--trials N]
"""
import argparse
import numpy as np

NT, K = 1024, 1024


def rank_keys(x):
    b = np.frombuffer(np.asarray(x, dtype=np.float32).tobytes(), dtype=np.uint32).astype(np.int64)
    return np.where(b >> 31, (~b) & 0xFFFFFFFF, b | 0x80000000)


def thread_maxima(blk):
    nv = len(blk) // 4
    v = blk[: nv * 4].reshape(nv, 4).max(1)
    v = np.concatenate([v, np.zeros((-nv) % NT, np.int64)]).reshape(-1, NT).max(0)
    return v


def bound(mx, q, how):
    if how == "exact":
        return np.sort(mx)[::-1][q - 1]
    r = max(1, int(round(q / 32))) if how == "median_rnd" else -(-q // 32)
    wr = np.sort(mx.reshape(32, 32), axis=1)[:, ::-1][:, r - 1]
    if how == "mean":
        lo = wr.min()
        return lo + int((wr - lo).sum() // 32)
    return np.sort(wr)[15]  # the 16th largest of 32


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dists", nargs="*", default=["normal", "uniform", "gumbel", "t3"])
    ap.add_argument("--trials", type=int, default=60)
    a = ap.parse_args()
    rng = np.random.default_rng(2)
    draw = {"normal": rng.standard_normal, "uniform": rng.random, "gumbel": lambda n: rng.gumbel(size=n),
            "t3": lambda n: rng.standard_t(3, size=n)}
    hows = ["exact", "median", "median_rnd", "mean"]
    for dist in a.dists:
        for n, cs in [(32000, 8), (128256, 16), (151936, 16), (262144, 16), (262144, 8)]:
            q = -(-K // cs)
            q += int(np.ceil(4 * np.sqrt(q))) + 1
            seg = 4096 // cs
            st = {h: [0, 0, []] for h in hows}
            for _ in range(a.trials):
                kk = rank_keys(draw[dist](n))
                sl = (-(-n // cs) + 3) // 4 * 4
                blks = [kk[b * sl:(b + 1) * sl] for b in range(cs)]
                mxs = [thread_maxima(b) for b in blks]
                for h in hows:
                    th = [bound(m, q, h) for m in mxs]
                    cnt = [int((b >= t).sum()) for b, t in zip(blks, th)]
                    M = max(th)
                    st[h][0] += any(c > seg for c in cnt)
                    st[h][1] += sum(int((b >= M).sum()) for b in blks) < K
                    st[h][2].append(sum(min(c, seg) for c in cnt))
            print(f"{dist} n={n} cs={cs} q={q} seg={seg} ({a.trials} trials)")
            for h in hows:
                print(f"  {h:11s} overflow {st[h][0]:3d}  check failed {st[h][1]:3d}  candidates {np.mean(st[h][2]):6.0f}")


if __name__ == "__main__":
    main()
