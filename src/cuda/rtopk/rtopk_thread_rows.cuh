/*
 * rtopk_thread_rows.cuh: tiny rows with small k (MoE routing: 64..256 experts, k <= 8),
 * a thread per row. rtopk.cu launches it instead of the warp-per-row search
 * (rtopk_kernels.cuh) in exact mode for rows of at most RTOPK_THREAD_MAX_N elements with
 * k <= RTOPK_THREAD_MAX_K, where n x k is small for the rows per SM (use_thread_path).
 *
 * Why: a warp per row pays a fixed cost per row (min/max reductions, guess arithmetic,
 * warp scans; ncu: 767 warp instructions per row of 64 elements, k = 8), which a
 * 64-element row cannot amortise. A thread that streams its row and keeps the best K in
 * registers pays a compare-exchange per element and queue slot (about 6 instructions for
 * 64-bit composites) and little per row beyond the stores; it needs many rows per SM.
 * H100, 65536 x 64, k = 8: 56.4 us for the search, 30.0 us for this path.
 *
 * The queue: K composite keys, best first. A composite is (rank key << 32 | (2^32 - 1 -
 * index)) for 32-bit keys and (rank key << 16 | (2^16 - 1 - index)) for 16-bit keys, so
 * that the larger composite is the better element and, among equal keys, the one with
 * the lower index (the project's tie rule), and 0 is below every element (the empty
 * slot). An element is inserted by a compare-exchange down the queue (max stays, min
 * moves on), with no branch, so the queue is sorted at the end: TOPK_SORTED costs nothing.
 *
 * Loads: a thread reads its row front to back, 16 bytes at a time where the row start is
 * 16-byte aligned (scalar otherwise and for the tail). Across a warp these are 32 rows at
 * the row stride; every byte of a row is used by the same thread's next loads, which the L1
 * serves.
 *
 * Safety: rows are clamped as in rtopk_kernels.cuh (topk_row, then to RTOPK_THREAD_MAX_N);
 * every output slot written is < k.
 */
#ifndef TOPK_CUDA_RTOPK_THREAD_ROWS_CUH
#define TOPK_CUDA_RTOPK_THREAD_ROWS_CUH

#include "rtopk_kernels.cuh"

enum {
  RTOPK_THREAD_MAX_N = 256, /* longest row of the thread path */
  RTOPK_THREAD_MAX_K = 16,  /* longest queue */
  RTOPK_THREAD_BLOCK = 128  /* threads (rows) per block */
};

/* The composite of a key: the type twice as wide, and how to build and split it. */
template <typename KeyT> struct rtopk_comp;
template <> struct rtopk_comp<uint16_t> { /* the word of rtopk_entry<uint16_t> (rtopk_kernels.cuh) */
  typedef uint32_t type;
  static __device__ __forceinline__ uint32_t make(uint16_t key, unsigned idx) {
    return rtopk_entry<uint16_t>::make(key, idx).w;
  }
  static __device__ __forceinline__ uint16_t key(uint32_t c) { return rtopk_entry<uint16_t>{c}.key(); }
  static __device__ __forceinline__ unsigned idx(uint32_t c) { return rtopk_entry<uint16_t>{c}.pos(); }
};
template <> struct rtopk_comp<uint32_t> {
  typedef uint64_t type;
  static __device__ __forceinline__ uint64_t make(uint32_t key, unsigned idx) {
    return ((uint64_t)key << 32) | (uint64_t)(0xFFFFFFFFu - idx);
  }
  static __device__ __forceinline__ uint32_t key(uint64_t c) { return (uint32_t)(c >> 32); }
  static __device__ __forceinline__ unsigned idx(uint64_t c) { return 0xFFFFFFFFu - (uint32_t)c; }
};

/* Insert composite c into the queue q (best first): a compare-exchange per slot. */
template <typename C, int K>
__device__ __forceinline__ void rtopk_queue_insert(C (&q)[K], C c) {
#pragma unroll
  for (int s = 0; s < K; ++s) {
    const C hi = q[s] > c ? q[s] : c;
    c = q[s] > c ? c : q[s];
    q[s] = hi;
  }
}

/*
 * grid-stride over rows, a thread per row; blockDim.x = RTOPK_THREAD_BLOCK. K >= P.k (a
 * queue bucket: 4, 8 or 16); KIND as rtopk_kernel (the key transform only).
 */
template <typename KeyT, int K, int KIND>
__global__ void __launch_bounds__(RTOPK_THREAD_BLOCK) rtopk_thread_kernel(const rtopk_params P) {
  typedef rtopk_comp<KeyT> Comp;
  typedef typename Comp::type C;
  constexpr int V = 16 / (int)sizeof(KeyT); /* keys per 16-byte load */
  const rtopk_xf<KeyT> x = rtopk_make_xf<KeyT, KIND>(P.dtype, P.smallest);
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int k = (int)P.k; /* <= K */
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < P.batch; r += stride) {
    const topk_row_span span = topk_row(P.offsets, P.n, P.ld, r); /* common/rows.cuh */
    const int len = (int)(span.len < RTOPK_THREAD_MAX_N ? span.len : RTOPK_THREAD_MAX_N);
    const KeyT* src = (const KeyT*)P.in + span.start;
    C q[K];
#pragma unroll
    for (int s = 0; s < K; ++s) q[s] = 0;
    int i = 0;
    if (((uintptr_t)src % 16) == 0) {
      /* whole vectors, two in flight */
      for (; i + 2 * V <= len; i += 2 * V) {
        const rtopk_vec<KeyT, V> a = *reinterpret_cast<const rtopk_vec<KeyT, V>*>(src + i);
        const rtopk_vec<KeyT, V> b = *reinterpret_cast<const rtopk_vec<KeyT, V>*>(src + i + V);
#pragma unroll
        for (int j = 0; j < V; ++j) rtopk_queue_insert<C, K>(q, Comp::make(rtopk_key(a.a[j], x), (unsigned)(i + j)));
#pragma unroll
        for (int j = 0; j < V; ++j)
          rtopk_queue_insert<C, K>(q, Comp::make(rtopk_key(b.a[j], x), (unsigned)(i + V + j)));
      }
    }
    for (; i < len; ++i) rtopk_queue_insert<C, K>(q, Comp::make(rtopk_key(src[i], x), (unsigned)i));

    /* the queue is best first: sorted and unsorted output alike; empty slots (rows shorter
     * than k) get the worst value and index -1 */
    const int64_t obase = r * P.k;
#pragma unroll
    for (int s = 0; s < K; ++s) {
      if (s < k) {
        if (s < len) {
          /* as rtopk_emit, with the index unsigned (zero-extended to i64) */
          const unsigned idx = Comp::idx(q[s]);
          bool nan;
          KeyT raw = rtopk_raw(Comp::key(q[s]), x, &nan);
          if (nan) raw = src[idx]; /* NaN payloads survive */
          ((KeyT*)P.values + obase)[s] = raw;
          if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices + obase)[s] = (int64_t)idx;
          else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices + obase)[s] = (int32_t)idx;
        } else {
          rtopk_emit_empty<KeyT>(P, obase, s);
        }
      }
    }
  }
}

#endif /* TOPK_CUDA_RTOPK_THREAD_ROWS_CUH */
