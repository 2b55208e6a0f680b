/*
 * topk_device/merge.cuh: the detail part of topk_device.cuh. Elements, the
 * register merge networks and the warp queues that WarpSelect, BlockSelect and
 * GridSelect (src/cuda/queue_select/) and users' own kernels share. Written once.
 *
 * Elements (topk_dq_pair<KB>): a rank key of KB bits (16, 32, 64; larger is better)
 * and a 32-bit row-relative index, ordered lexicographically: larger key first,
 * then SMALLER index. Every pair of a row is distinct (indices are), so "better" is
 * a strict total order: the best k are one set (deterministic ties: the lowest
 * indices among keys equal to the k-th) and a sorted queue is the sorted output.
 * Keys of 16 and 32 bits are packed with the complemented index into one 64-bit
 * integer, (key << 32) | ~index, so a comparison is one integer compare; 64-bit
 * keys need a (key, ~index) pair. The all-zero pair (key 0, index 0xFFFFFFFF) is
 * the sentinel: worse than every real element, since real indices are < 2^32 - 1.
 *
 * Register layout (lane stride, as Faiss's MergeNetworkWarp.cuh and paper 004
 * sec. 4): a warp-wide sequence of 32 * R elements lives in R registers per lane;
 * element e is register e / 32 of lane e % 32. Compare-exchanges at distance >= 32
 * stay inside a lane; at distance < 32 they are one __shfl_xor_sync.
 *
 * Networks (004 sec. 4.1-4.2 and Algorithms 1-2): R is any count of registers, so a
 * sequence is any multiple of 32 long ("odd sizes": 96, 160, ...):
 *   topk_dq_sort<R>        sorts 32R elements best first: a bitonic sort when R is a
 *                          power of two, else sort-odd (Alg. 2): each register sorted
 *                          across the lanes, then merge-odd up a tree of register ranges
 *   topk_dq_merge_bitonic  sorts a sequence that falls then rises (the half-cleaner
 *                          cascade; for odd R, merge-odd-continue of Alg. 1)
 *   topk_dq_merge<R1, R2>  W (32 R1, sorted) <- best 32 R1 of W and X (32 R2, sorted).
 *                          The first step compares W[N1-1-i] with X[i] (the
 *                          "reversed" compare of 004 Alg. 1) and keeps the better in
 *                          W: W then holds the best N1 and falls then rises; the
 *                          cascade sorts it. X is clobbered.
 *   topk_dq_sort_blocked<O, E>  sorts 32E elements in the blocked layout (element
 *                          lane * E + e), for sorts that start and end in memory
 * Odd sizes follow 004's derivation: a range of N registers is read as padded to the
 * next power of two P, with elements better than all in front (a sequence that falls
 * then rises stays bitonic) or worse than all behind (one that rises then falls); a
 * compare-exchange that would touch a pad is a no-op and is left out.
 *
 * Warp queues (004 sec. 4.2): topk_dq_warp<KB, R, T> holds the warp queue W (32R
 * best so far, sorted) and a thread queue of T per lane; an element enters a
 * thread queue only if it beats kth, the k-th best of W (the queue's threshold, so
 * the common case is one compare). When any lane's thread queue is full, the warp
 * sorts all 32T thread-queue entries and merges them into W. Invariants: (1) W is
 * sorted, (2) every element seen and not in W or a thread queue is worse than kth,
 * (3) thread queues hold only elements that beat kth when they entered. So W after
 * the last merge holds the best 32R >= k elements seen.
 * R and T may be any positive counts (004 uses T = 3 up to k = 128); the table the
 * library's kernels use is in src/cuda/queue_select/queue_select.h.
 *
 * The shared queue (paper 003 sec. 4, Fig. 5; GridSelect): instead of thread
 * queues, a warp buffers candidates in 32 shared-memory slots, appended in two
 * steps with a ballot: step 1 fills the free slots, a full buffer is sorted (one
 * register per lane) and merged into W, step 2 writes the rest. Merges then always
 * carry 32 candidates.
 *
 * Every function here is warp-collective: all 32 lanes of the warp call it with
 * the same template arguments and uniform control flow (full mask).
 */
#ifndef TOPK_DEVICE_MERGE_CUH
#define TOPK_DEVICE_MERGE_CUH

#include <stdint.h>

#define TOPK_DQ_FULL 0xFFFFFFFFu

/* ------------------------------------------------------------------ elements */

template <int KB> struct topk_dq_pair {
  unsigned long long v; /* (key << 32) | ~index */
};
template <> struct topk_dq_pair<64> {
  unsigned long long key;
  unsigned int       nidx; /* ~index */
};

template <int KB> struct topk_dq_ops {
  typedef topk_dq_pair<KB> P;
  static __device__ __forceinline__ P make(unsigned long long key, unsigned int idx) {
    P p;
    p.v = (key << 32) | (unsigned long long)(~idx);
    return p;
  }
  static __device__ __forceinline__ P worst() {
    P p;
    p.v = 0ull;
    return p;
  }
  static __device__ __forceinline__ bool better(const P& a, const P& b) { return a.v > b.v; }
  /* hi, lo <- the better and the worse of the two, from ONE 64-bit compare: written as C,
   * the two selects become max.u64 and min.u64, two compares each (ptxas, sm_90) */
  static __device__ __forceinline__ void cmpx(P& hi, P& lo) {
    unsigned long long h, l;
    asm("{\n\t.reg .pred p;\n\t.reg .b64 t0, t1;\n\tsetp.gt.u64 p, %3, %2;\n\tselp.b64 t0, %3, %2, p;\n\t"
        "selp.b64 t1, %2, %3, p;\n\tmov.b64 %0, t0;\n\tmov.b64 %1, t1;\n\t}"
        : "=l"(h), "=l"(l)
        : "l"(hi.v), "l"(lo.v));
    hi.v = h;
    lo.v = l;
  }
  static __device__ __forceinline__ unsigned long long key(const P& a) { return a.v >> 32; }
  static __device__ __forceinline__ unsigned int index(const P& a) { return ~(unsigned int)a.v; }
  static __device__ __forceinline__ P shfl_xor(const P& a, int m) {
    P p;
    p.v = __shfl_xor_sync(TOPK_DQ_FULL, a.v, m);
    return p;
  }
  static __device__ __forceinline__ P shfl(const P& a, int src) {
    P p;
    p.v = __shfl_sync(TOPK_DQ_FULL, a.v, src);
    return p;
  }
};
template <> struct topk_dq_ops<64> {
  typedef topk_dq_pair<64> P;
  static __device__ __forceinline__ P make(unsigned long long key, unsigned int idx) {
    P p;
    p.key = key;
    p.nidx = ~idx;
    return p;
  }
  static __device__ __forceinline__ P worst() {
    P p;
    p.key = 0ull;
    p.nidx = 0u;
    return p;
  }
  static __device__ __forceinline__ bool better(const P& a, const P& b) {
    return a.key > b.key || (a.key == b.key && a.nidx > b.nidx);
  }
  static __device__ __forceinline__ void cmpx(P& hi, P& lo) {
    if (better(lo, hi)) {
      const P t = hi;
      hi = lo;
      lo = t;
    }
  }
  static __device__ __forceinline__ unsigned long long key(const P& a) { return a.key; }
  static __device__ __forceinline__ unsigned int index(const P& a) { return ~a.nidx; }
  static __device__ __forceinline__ P shfl_xor(const P& a, int m) {
    P p;
    p.key = __shfl_xor_sync(TOPK_DQ_FULL, a.key, m);
    p.nidx = __shfl_xor_sync(TOPK_DQ_FULL, a.nidx, m);
    return p;
  }
  static __device__ __forceinline__ P shfl(const P& a, int src) {
    P p;
    p.key = __shfl_sync(TOPK_DQ_FULL, a.key, src);
    p.nidx = __shfl_sync(TOPK_DQ_FULL, a.nidx, src);
    return p;
  }
};

/* True for the sentinel (an unfilled slot). */
template <int KB>
__device__ __forceinline__ bool topk_dq_is_sentinel(const topk_dq_pair<KB>& a) {
  return topk_dq_ops<KB>::index(a) == 0xFFFFFFFFu;
}

/* ------------------------------------------------------------------ networks */

/* One stage of a bitonic network over a[R] at distance `stride`, within blocks of
 * `size`: blocks whose bit `size` of the element number is 0 sort best first,
 * the others worst first (size >= 32R: all best first). */
template <int KB, int R>
__device__ __forceinline__ void topk_dq_stage(topk_dq_pair<KB> (&a)[R], int size, int stride, int lane) {
  typedef topk_dq_ops<KB> O;
  if (stride >= 32) {
    const int rs = stride >> 5;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if ((r & rs) == 0) {
        const bool desc = (((r << 5) & size) == 0);
        const topk_dq_pair<KB> x = a[r], y = a[r | rs];
        const bool swap = desc ? O::better(y, x) : O::better(x, y);
        if (swap) {
          a[r] = y;
          a[r | rs] = x;
        }
      }
    }
  } else {
    const bool lower = (lane & stride) == 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int e_bits = (r << 5) | lane; /* element number */
      const bool desc = (e_bits & size) == 0;
      const topk_dq_pair<KB> x = a[r];
      const topk_dq_pair<KB> y = O::shfl_xor(x, stride);
      /* The lower element of a best-first pair keeps the better one. */
      const bool take_better = lower == desc;
      const bool y_better = O::better(y, x);
      a[r] = (take_better == y_better) ? y : x;
    }
  }
}

/* ------------------------------------------------------------ odd sizes (004 Alg. 1-2) */

__host__ __device__ constexpr int topk_dq_pow2_ceil(int n) { return n <= 1 ? 1 : 2 * topk_dq_pow2_ceil((n + 1) / 2); }
__host__ __device__ constexpr bool topk_dq_is_pow2(int n) { return n >= 1 && (n & (n - 1)) == 0; }

/* Compare-exchange of two registers of a lane: the better ends in hi. */
template <int KB>
__device__ __forceinline__ void topk_dq_cmpx(topk_dq_pair<KB>& hi, topk_dq_pair<KB>& lo) {
  if (topk_dq_ops<KB>::better(lo, hi)) {
    const topk_dq_pair<KB> t = hi;
    hi = lo;
    lo = t;
  }
}

/* merge-odd-continue's steps at distances of whole registers over registers [LO, LO + N),
 * padded in front (FRONT: the range falls then rises) or behind to a power of two. */
template <int KB, int R, int LO, int N, bool FRONT>
__device__ __forceinline__ void topk_dq_clean_regs(topk_dq_pair<KB> (&a)[R]) {
  enum { P = topk_dq_pow2_ceil(N), PAD = FRONT ? P - N : 0 };
#pragma unroll
  for (int s = P / 2; s >= 1; s >>= 1) {
#pragma unroll
    for (int r = 0; r < N; ++r)
      if (r + s < N && ((r + PAD) & s) == 0) topk_dq_cmpx<KB>(a[LO + r], a[LO + r + s]);
  }
}

/* The last five steps (distances 16..1, inside each register): best first. */
template <int KB, int R, int LO, int N>
__device__ __forceinline__ void topk_dq_clean_lanes(topk_dq_pair<KB> (&a)[R], int lane) {
  typedef topk_dq_ops<KB> O;
#pragma unroll
  for (int s = 16; s >= 1; s >>= 1) {
    const bool lower = (lane & s) == 0;
#pragma unroll
    for (int r = LO; r < LO + N; ++r) {
      const topk_dq_pair<KB> y = O::shfl_xor(a[r], s);
      a[r] = (lower == O::better(y, a[r])) ? y : a[r];
    }
  }
}

/* Sorts each register of [LO, LO + N) across the lanes on its own, best first. */
template <int KB, int R, int LO, int N>
__device__ __forceinline__ void topk_dq_sort_lanes(topk_dq_pair<KB> (&a)[R], int lane) {
  typedef topk_dq_ops<KB> O;
#pragma unroll
  for (int size = 2; size <= 32; size <<= 1) {
#pragma unroll
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      const bool take_better = ((lane & stride) == 0) == ((lane & size) == 0);
#pragma unroll
      for (int r = LO; r < LO + N; ++r) {
        const topk_dq_pair<KB> y = O::shfl_xor(a[r], stride);
        a[r] = (take_better == O::better(y, a[r])) ? y : a[r];
      }
    }
  }
}

/* merge-odd (004 Alg. 1): registers [LO, LO + NL) and [LO + NL, LO + NL + NR), each sorted,
 * become one sorted range. The reversed first step pairs register NL-1-j of lane L with
 * register NL+j of lane 31-L (both kept: two shuffles a pair). */
template <int KB, int R, int LO, int NL, int NR>
__device__ __forceinline__ void topk_dq_merge_odd(topk_dq_pair<KB> (&a)[R], int lane) {
  typedef topk_dq_ops<KB> O;
  enum { M = NL < NR ? NL : NR };
#pragma unroll
  for (int j = 0; j < M; ++j) {
    const topk_dq_pair<KB> l = a[LO + NL - 1 - j], r = a[LO + NL + j];
    const topk_dq_pair<KB> rp = O::shfl_xor(r, 31), lp = O::shfl_xor(l, 31);
    a[LO + NL - 1 - j] = O::better(rp, l) ? rp : l;
    a[LO + NL + j] = O::better(lp, r) ? r : lp;
  }
  topk_dq_clean_regs<KB, R, LO, NL, true>(a);
  topk_dq_clean_regs<KB, R, LO + NL, NR, false>(a);
  topk_dq_clean_lanes<KB, R, LO, NL + NR>(a, lane);
}

/* sort-odd's merges (004 Alg. 2) over registers [LO, LO + N) whose registers are sorted. */
template <int KB, int R, int LO, int N> struct topk_dq_merge_tree {
  static __device__ __forceinline__ void run(topk_dq_pair<KB> (&a)[R], int lane) {
    topk_dq_merge_tree<KB, R, LO, N / 2>::run(a, lane);
    topk_dq_merge_tree<KB, R, LO + N / 2, N - N / 2>::run(a, lane);
    topk_dq_merge_odd<KB, R, LO, N / 2, N - N / 2>(a, lane);
  }
};
template <int KB, int R, int LO> struct topk_dq_merge_tree<KB, R, LO, 1> {
  static __device__ __forceinline__ void run(topk_dq_pair<KB> (&)[R], int) {}
};

/* Sorts 32R elements best first: bitonic for R a power of two (the cross-register
 * steps of an alternating-direction sort need no shuffle), else sort-odd. */
template <int KB, int R>
__device__ __forceinline__ void topk_dq_sort(topk_dq_pair<KB> (&a)[R], int lane) {
  if (topk_dq_is_pow2(R)) {
#pragma unroll
    for (int size = 2; size <= 32 * R; size <<= 1) {
#pragma unroll
      for (int stride = size >> 1; stride > 0; stride >>= 1) topk_dq_stage<KB, R>(a, size, stride, lane);
    }
  } else {
    topk_dq_sort_lanes<KB, R, 0, R>(a, lane);
    topk_dq_merge_tree<KB, R, 0, R>::run(a, lane);
  }
}

/* Sorts best first a sequence of 32R elements that falls, then rises. */
template <int KB, int R>
__device__ __forceinline__ void topk_dq_merge_bitonic(topk_dq_pair<KB> (&a)[R], int lane) {
  if (topk_dq_is_pow2(R)) {
#pragma unroll
    for (int stride = 16 * R; stride > 0; stride >>= 1) topk_dq_stage<KB, R>(a, 64 * R, stride, lane);
  } else {
    topk_dq_clean_regs<KB, R, 0, R, true>(a);
    topk_dq_clean_lanes<KB, R, 0, R>(a, lane);
  }
}

/* Sorts 32E elements best first in the blocked layout: element p = lane * E + e is register
 * e of lane p / E (E = 1, 2, 4, 8 or 16). Steps at distances below E stay inside a lane, so
 * of a bitonic sort's log2(32E)(log2(32E) + 1) / 2 steps only those at distances >= E shuffle
 * (for E = 4, 15 of 28, against 25 in the lane-stride layout): the cheaper layout for a
 * sort that starts and ends in memory (rtopk's sorted output). O: topk_dq_ops<KB>, or any
 * type with P, better(a, b), cmpx(hi, lo) and shfl_xor(a, m) (a strict order: no two
 * elements equal but sentinels). */
template <typename O, int E>
__device__ __forceinline__ void topk_dq_sort_blocked(typename O::P (&a)[E], int lane) {
  static_assert(E == 1 || E == 2 || E == 4 || E == 8 || E == 16, "E is a power of two, 1..16");
  typedef typename O::P P;
#pragma unroll
  for (int size = 2; size <= 32 * E; size <<= 1) {
    /* merge two runs of size / 2: p against p ^ (size - 1), the lower position keeps the better */
    if (size <= E) {
#pragma unroll
      for (int e = 0; e < E; ++e)
        if (e < (e ^ (size - 1))) O::cmpx(a[e], a[e ^ (size - 1)]);
    } else { /* partner: lane ^ ((size - 1) / E), register e ^ (E - 1) */
      const bool lower = (lane & (size / 2 / E)) == 0;
      P o[E];
#pragma unroll
      for (int e = 0; e < E; ++e) o[e] = O::shfl_xor(a[e ^ (E - 1)], (size - 1) / E);
#pragma unroll
      for (int e = 0; e < E; ++e) a[e] = (lower == O::better(o[e], a[e])) ? o[e] : a[e];
    }
    /* half-cleaners: p against p + st */
#pragma unroll
    for (int st = size >> 2; st >= 1; st >>= 1) {
      if (st < E) {
#pragma unroll
        for (int e = 0; e < E; ++e)
          if ((e & st) == 0) O::cmpx(a[e], a[e | st]);
      } else {
        const bool lower = (lane & (st / E)) == 0;
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const P y = O::shfl_xor(a[e], st / E);
          a[e] = (lower == O::better(y, a[e])) ? y : a[e];
        }
      }
    }
  }
}

/* W (sorted, 32 R1) <- the best 32 R1 of W and X (sorted, 32 R2), sorted. X is clobbered. */
template <int KB, int R1, int R2>
__device__ __forceinline__ void topk_dq_merge(topk_dq_pair<KB> (&w)[R1], topk_dq_pair<KB> (&x)[R2], int lane) {
  typedef topk_dq_ops<KB> O;
  const int m = R1 < R2 ? R1 : R2;
  /* W[N1-1-i] vs X[i]: lane L's register R1-1-j meets lane 31-L's register j of X. */
#pragma unroll
  for (int j = 0; j < m; ++j) {
    const topk_dq_pair<KB> xr = O::shfl_xor(x[j], 31);
    if (O::better(xr, w[R1 - 1 - j])) w[R1 - 1 - j] = xr;
  }
  topk_dq_merge_bitonic<KB, R1>(w, lane);
}

/* Element e = r * 32 + src_lane of a lane-stride sequence, broadcast to the warp
 * (r and src_lane warp-uniform; r is selected without dynamic register indexing). */
template <int KB, int R>
__device__ __forceinline__ topk_dq_pair<KB> topk_dq_element(const topk_dq_pair<KB> (&a)[R], int e) {
  const int r = e >> 5;
  topk_dq_pair<KB> s = a[0];
#pragma unroll
  for (int i = 1; i < R; ++i)
    if (i == r) s = a[i];
  return topk_dq_ops<KB>::shfl(s, e & 31);
}

/* ------------------------------------------------------------------ warp queue */

/*
 * A warp's queue: W = best 32R so far (sorted, lane stride), the thread queue t[T]
 * of each lane (unsorted; slots past nt hold sentinels), and kth = element k-1 of
 * W (sentinel until W holds k elements): the threshold an element must beat.
 */
template <int KB, int R, int T> struct topk_dq_warp {
  topk_dq_pair<KB> w[R];
  topk_dq_pair<KB> t[T];
  topk_dq_pair<KB> kth;
  int              nt; /* filled thread-queue slots of this lane */
  int              k;  /* 1 <= k <= 32R */
};

template <int KB, int R, int T>
__device__ __forceinline__ void topk_dq_warp_init(topk_dq_warp<KB, R, T>& q, int k) {
  typedef topk_dq_ops<KB> O;
#pragma unroll
  for (int r = 0; r < R; ++r) q.w[r] = O::worst();
#pragma unroll
  for (int i = 0; i < T; ++i) q.t[i] = O::worst();
  q.kth = O::worst();
  q.nt = 0;
  q.k = k;
}

/* Sorts the 32T thread-queue entries, merges them into W, empties the thread queues. */
template <int KB, int R, int T>
__device__ __forceinline__ void topk_dq_warp_merge_threadq(topk_dq_warp<KB, R, T>& q, int lane) {
  typedef topk_dq_ops<KB> O;
  topk_dq_sort<KB, T>(q.t, lane);
  topk_dq_merge<KB, R, T>(q.w, q.t, lane);
#pragma unroll
  for (int i = 0; i < T; ++i) q.t[i] = O::worst();
  q.nt = 0;
  q.kth = topk_dq_element<KB, R>(q.w, q.k - 1);
}

/* One element per lane (valid = 0: this lane has none this round). Warp-collective. */
template <int KB, int R, int T>
__device__ __forceinline__ void topk_dq_warp_add(topk_dq_warp<KB, R, T>& q, const topk_dq_pair<KB>& e, bool valid,
                                                  int lane) {
  typedef topk_dq_ops<KB> O;
  if (valid && O::better(e, q.kth)) {
    /* Rotate in: registers need static indices. */
#pragma unroll
    for (int i = T - 1; i > 0; --i) q.t[i] = q.t[i - 1];
    q.t[0] = e;
    ++q.nt;
  }
  if (__any_sync(TOPK_DQ_FULL, q.nt == T)) topk_dq_warp_merge_threadq<KB, R, T>(q, lane);
}

/* Merges what the thread queues still hold. After it, W holds the warp's result. */
template <int KB, int R, int T>
__device__ __forceinline__ void topk_dq_warp_flush(topk_dq_warp<KB, R, T>& q, int lane) {
  if (__any_sync(TOPK_DQ_FULL, q.nt > 0)) topk_dq_warp_merge_threadq<KB, R, T>(q, lane);
}

/*
 * Shared-queue variant (003 Fig. 5): buf is this warp's 32 shared-memory slots,
 * nb (warp-uniform) how many are filled. One element per lane per call.
 */
template <int KB, int R>
__device__ __forceinline__ void topk_dq_warp_merge_buf(topk_dq_pair<KB> (&w)[R], topk_dq_pair<KB>& kth, int k,
                                                        topk_dq_pair<KB>* buf, int nb, int lane) {
  typedef topk_dq_ops<KB> O;
  __syncwarp();
  topk_dq_pair<KB> x[1];
  x[0] = O::worst();
  if (lane < nb) x[0] = buf[lane];
  __syncwarp(); /* every lane has read its slot before any slot is written again */
  topk_dq_sort<KB, 1>(x, lane);
  topk_dq_merge<KB, R, 1>(w, x, lane);
  kth = topk_dq_element<KB, R>(w, k - 1);
}

template <int KB, int R>
__device__ __forceinline__ void topk_dq_warp_add_shared(topk_dq_pair<KB> (&w)[R], topk_dq_pair<KB>& kth, int k,
                                                         topk_dq_pair<KB>* buf, int& nb, const topk_dq_pair<KB>& e,
                                                         bool valid, int lane) {
  typedef topk_dq_ops<KB> O;
  const bool pass = valid && O::better(e, kth);
  const unsigned ballot = __ballot_sync(TOPK_DQ_FULL, pass);
  if (ballot == 0u) return;
  const int cnt = __popc(ballot);
  const int pos = nb + __popc(ballot & ((1u << lane) - 1u));
  /* Step 1: fill the free slots. */
  if (pass && pos < 32) buf[pos] = e;
  if (nb + cnt >= 32) {
    topk_dq_warp_merge_buf<KB, R>(w, kth, k, buf, 32, lane);
    /* Step 2: the rest go to the emptied buffer. */
    if (pass && pos >= 32) buf[pos - 32] = e;
    nb = nb + cnt - 32;
  } else {
    nb += cnt;
  }
}

template <int KB, int R>
__device__ __forceinline__ void topk_dq_warp_flush_shared(topk_dq_pair<KB> (&w)[R], topk_dq_pair<KB>& kth, int k,
                                                           topk_dq_pair<KB>* buf, int& nb, int lane) {
  if (nb > 0) topk_dq_warp_merge_buf<KB, R>(w, kth, k, buf, nb, lane);
  nb = 0;
}

/* ------------------------------------------------------------------ block merge */

/* Shared memory for topk_dq_block_merge: (nwarps / 2) queues of 32R pairs. */
template <int KB, int R>
__host__ __device__ constexpr size_t topk_dq_block_merge_bytes(int nwarps) {
  return (size_t)(nwarps / 2) * (size_t)(32 * R) * sizeof(topk_dq_pair<KB>);
}

/*
 * Merges the sorted queues w of the block's nwarps warps (a power of two) in a
 * tree: in round s, warp w with w % 2s == s stores its queue, warp w - s merges
 * it. Afterwards warp 0's w holds the best 32R of all, sorted. Block-collective
 * (every thread calls it; it contains __syncthreads). smem: topk_dq_block_merge_bytes.
 */
template <int KB, int R>
__device__ __forceinline__ void topk_dq_block_merge(topk_dq_pair<KB> (&w)[R], topk_dq_pair<KB>* smem, int warp,
                                                     int nwarps, int lane) {
  for (int s = 1; s < nwarps; s <<= 1) {
    if ((warp & (2 * s - 1)) == s) {
      topk_dq_pair<KB>* slot = smem + (size_t)(warp / (2 * s)) * (32 * R);
#pragma unroll
      for (int r = 0; r < R; ++r) slot[r * 32 + lane] = w[r];
    }
    __syncthreads();
    if ((warp & (2 * s - 1)) == 0) {
      /* topk_dq_merge's first step, reading the other queue straight from shared memory
       * (element 32j + 31 - lane meets register R-1-j), so it needs no second register
       * array: at CAP 2048 two would not fit. */
      const topk_dq_pair<KB>* slot = smem + (size_t)(warp / (2 * s)) * (32 * R);
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const topk_dq_pair<KB> xr = slot[j * 32 + (31 - lane)];
        if (topk_dq_ops<KB>::better(xr, w[R - 1 - j])) w[R - 1 - j] = xr;
      }
      topk_dq_merge_bitonic<KB, R>(w, lane);
    }
    __syncthreads();
  }
}

/* ------------------------------------------------------------------ keys */

/*
 * Rank keys (larger is better) from raw bits, with the dtype described by runtime
 * parameters instead of a switch, so one kernel serves every dtype of a width and
 * the hot loop stays branch-free. Same order as topk.h (and src/common/keys.h):
 * floats -inf < ... < -0 < +0 < ... < +inf < NaN (every NaN one key, the largest),
 * signed integers by value, unsigned by value; "smallest" complements the key.
 */
typedef struct topk_dq_key_params {
  unsigned long long float_mask; /* all ones for floats, else 0 */
  unsigned long long sign_xor;   /* the sign bit for floats and signed integers, else 0 */
  unsigned long long nan_above;  /* |bits| above this is NaN: the +inf bits; all ones for integers */
  unsigned long long flip;       /* all ones (of the width) for smallest, else 0 */
} topk_dq_key_params;

template <typename U>
__host__ __device__ __forceinline__ U topk_dq_rank_key(U b, const topk_dq_key_params& kp) {
  const int W = (int)sizeof(U) * 8;
  const U sign = (U)((U)1 << (W - 1));
  const U neg = (U)(0 - (U)(b >> (W - 1))); /* all ones when the sign bit is set */
  U k = (U)(b ^ ((neg & (U)kp.float_mask) | (U)kp.sign_xor));
  if ((U)(b & (U)~sign) > (U)kp.nan_above) k = (U)~(U)0;
  return (U)(k ^ (U)kp.flip);
}

#endif /* TOPK_DEVICE_MERGE_CUH */
