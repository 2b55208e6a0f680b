/*
 * rtopk_thread_rows.cuh: tiny rows with small k (MoE routing: 64..256 experts, k <= 8),
 * a few lanes per row. rtopk.cu launches it instead of the warp-per-row search
 * (rtopk_kernels.cuh) in exact mode for rows of at most RTOPK_THREAD_MAX_N elements with
 * k <= RTOPK_THREAD_MAX_K, where n x k per lane is small for the lanes per SM (thread_group).
 *
 * Why: a warp per row pays a fixed cost per row (min/max reductions, guess arithmetic,
 * warp scans; ncu: 767 warp instructions per row of 64 elements, k = 8), which a
 * 64-element row cannot amortise. A lane that streams its part of the row and keeps the best
 * K in registers pays compare-exchanges per element (about 6 instructions each for 64-bit
 * composites, on the integer pipe, which bounds this path) and little per row beyond the
 * stores; the SM needs many lanes.
 *
 * The queue: K composite keys, best first. A composite is (rank key << 30 | (2^30 - 1 -
 * index)) for 32-bit keys and (rank key << 16 | (2^16 - 1 - index)) for 16-bit keys, so
 * that the larger composite is the better element and, among equal keys, the one with
 * the lower index (the project's tie rule), and 0 is below every element (the empty
 * slot). Chunks of K elements are sorted by a network and merged into the queue by a
 * bitonic step, with no branch; the queue is sorted at the end: TOPK_SORTED costs nothing.
 *
 * Loads: a lane reads its chunks with 16-byte loads (8-byte for four 16-bit keys) where the
 * row start is aligned (scalar otherwise and for the tail). The lanes of a group read
 * adjacent chunks; across a warp these are 32 / G rows at the row stride.
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
  RTOPK_THREAD_BLOCK = 128  /* threads per block (128 / G rows) */
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
/* 32-bit keys: key << 30 | (2^30 - 1 - index) (rows here are <= 256 long). The top two bits
 * stay 0, so the word read as a double is a finite non-negative number (subnormal for small
 * keys, which FP64 compares exactly), ordered as the integer is: rtopk_gt compares it on the
 * FP64 pipe with one DSETP, where a 64-bit integer compare takes two or four ALU instructions,
 * and the ALU pipe is what bounds this path (ncu: 71-79 %). */
template <> struct rtopk_comp<uint32_t> {
  typedef uint64_t type;
  static __device__ __forceinline__ uint64_t make(uint32_t key, unsigned idx) {
    return ((uint64_t)key << 30) | (uint64_t)(0x3FFFFFFFu - idx);
  }
  static __device__ __forceinline__ uint32_t key(uint64_t c) { return (uint32_t)(c >> 30); }
  static __device__ __forceinline__ unsigned idx(uint64_t c) { return 0x3FFFFFFFu - (uint32_t)(c & 0x3FFFFFFFu); }
};

/* a > b for composites: the 32-bit ones as integers, the 64-bit ones as doubles (above). */
__device__ __forceinline__ bool rtopk_gt(uint32_t a, uint32_t b) { return a > b; }
__device__ __forceinline__ bool rtopk_gt(uint64_t a, uint64_t b) {
  return __longlong_as_double((long long)a) > __longlong_as_double((long long)b);
}

/* Compare-exchange: the larger composite to a. */
template <typename C>
__device__ __forceinline__ void rtopk_cx(C& a, C& b) {
  const bool p = rtopk_gt(a, b);
  const C hi = p ? a : b;
  b = p ? b : a;
  a = hi;
}

/* Batcher's odd-even merge sort network for K elements as a list of compare-exchanges (5, 19,
 * 63 for K = 4, 8, 16), built at compile time so that every index is a constant. */
template <int K>
struct rtopk_batcher {
  int n;
  unsigned char a[K * K], b[K * K];
  constexpr rtopk_batcher() : n(0), a(), b() {
    for (int p = 1; p < K; p <<= 1)
      for (int d = p; d >= 1; d >>= 1)
        for (int j = d % p; j + d < K; j += 2 * d)
          for (int i = 0; i < d && i + j + d < K; ++i)
            if ((i + j) / (2 * p) == (i + j + d) / (2 * p)) {
              a[n] = (unsigned char)(i + j);
              b[n] = (unsigned char)(i + j + d);
              ++n;
            }
  }
};

/* Sort K composites best first. */
template <typename C, int K>
__device__ __forceinline__ void rtopk_sort_desc(C (&c)[K]) {
  constexpr rtopk_batcher<K> net{};
#pragma unroll
  for (int t = 0; t < net.n; ++t) rtopk_cx(c[net.a[t]], c[net.b[t]]);
}

/* q and o sorted best first: q becomes the best K of both, sorted. q[s] = max(q[s], o[K-1-s])
 * keeps the best K as a bitonic sequence (one list descending against the other ascending),
 * and a half-cleaner network sorts it. */
template <typename C, int K>
__device__ __forceinline__ void rtopk_keep_best(C (&q)[K], const C (&o)[K]) {
#pragma unroll
  for (int s = 0; s < K; ++s) q[s] = rtopk_gt(q[s], o[K - 1 - s]) ? q[s] : o[K - 1 - s];
#pragma unroll
  for (int j = K / 2; j >= 1; j >>= 1)
#pragma unroll
    for (int s = 0; s < K; ++s)
      if ((s & j) == 0) rtopk_cx(q[s], q[s + j]);
}

/* Merge the sorted queues of the G lanes of a group (lanes g ^ m, m < G) so that every lane
 * holds the best K of the group's elements, best first. Both partners of a round end with
 * the same queue: the composites are distinct (or 0, the empty slot). */
template <typename C, int K, int G>
__device__ __forceinline__ void rtopk_group_merge(C (&q)[K], unsigned mask) {
#pragma unroll
  for (int m = 1; m < G; m <<= 1) {
    C o[K];
#pragma unroll
    for (int s = 0; s < K; ++s) o[s] = __shfl_xor_sync(mask, q[s], m, G);
    rtopk_keep_best<C, K>(q, o);
  }
}

/* The composites of the row's chunk [base, base + K), 0 (the empty slot) past the row's end;
 * one or more 16-byte loads (one 8-byte load for four 16-bit keys) where the row start allows. */
template <typename KeyT, int K>
__device__ __forceinline__ void rtopk_load_chunk(const KeyT* src, int base, int len, bool vec_ok,
                                                 const rtopk_xf<KeyT>& x, typename rtopk_comp<KeyT>::type (&c)[K]) {
  typedef rtopk_comp<KeyT> Comp;
  constexpr int BYTES = K * (int)sizeof(KeyT); /* 8 .. 64 */
  if (vec_ok && base + K <= len) {
    KeyT v[K];
    if constexpr (BYTES >= 16) {
      constexpr int V = 16 / (int)sizeof(KeyT);
#pragma unroll
      for (int m = 0; m < K / V; ++m) {
        const rtopk_vec<KeyT, V> t = *reinterpret_cast<const rtopk_vec<KeyT, V>*>(src + base + m * V);
#pragma unroll
        for (int j = 0; j < V; ++j) v[m * V + j] = t.a[j];
      }
    } else {
      const uint2 t = *reinterpret_cast<const uint2*>(src + base);
      memcpy(v, &t, sizeof t);
    }
#pragma unroll
    for (int j = 0; j < K; ++j) c[j] = Comp::make(rtopk_key(v[j], x), (unsigned)(base + j));
  } else {
#pragma unroll
    for (int j = 0; j < K; ++j)
      c[j] = base + j < len ? Comp::make(rtopk_key(src[base + j], x), (unsigned)(base + j)) : 0;
  }
}

/*
 * grid-stride over rows, G lanes per row (a group: 1, 2 or 4 adjacent lanes); blockDim.x
 * = RTOPK_THREAD_BLOCK. The row is cut into chunks of K elements; lane g of a group takes
 * chunks g, g + G, ..., sorts each (rtopk_sort_desc) and keeps the best K of its queue and
 * the chunk (rtopk_keep_best): for K = 8, 31 compare-exchanges and 8 maxima per 8 elements,
 * where inserting each element down the queue took 64. The group merges its queues
 * (rtopk_group_merge) and lane g writes the slots s with s % G == g. More lanes per row
 * shorten each lane's chain and fill the SM where rows are few (thread_group in rtopk.cu
 * picks G). K >= P.k (a queue bucket: 4, 8 or 16); KIND as rtopk_kernel (the key transform
 * only).
 */
template <typename KeyT, int K, int G, int KIND>
__global__ void __launch_bounds__(RTOPK_THREAD_BLOCK) rtopk_thread_kernel(const rtopk_params P) {
  typedef rtopk_comp<KeyT> Comp;
  typedef typename Comp::type C;
  const rtopk_xf<KeyT> x = rtopk_make_xf<KeyT, KIND>(P.dtype, P.smallest);
  const int64_t rows_per_pass = (int64_t)gridDim.x * (RTOPK_THREAD_BLOCK / G);
  const int g = (int)(threadIdx.x % G);
  /* the group's lanes within the warp (all of them take the same branches: same row) */
  const unsigned mask = ((1u << G) - 1u) << ((threadIdx.x % 32) & ~(unsigned)(G - 1));
  const int k = (int)P.k; /* <= K */
  for (int64_t r = (int64_t)blockIdx.x * (RTOPK_THREAD_BLOCK / G) + threadIdx.x / G; r < P.batch;
       r += rows_per_pass) {
    const topk_row_span span = topk_row(P.offsets, P.n, P.ld, r); /* common/rows.cuh */
    const int len = (int)(span.len < RTOPK_THREAD_MAX_N ? span.len : RTOPK_THREAD_MAX_N);
    const KeyT* src = (const KeyT*)P.in + span.start;
    const int align = K * (int)sizeof(KeyT) < 16 ? K * (int)sizeof(KeyT) : 16;
    const bool vec_ok = ((uintptr_t)src % align) == 0;
    const int chunks = (len + K - 1) / K;
    C q[K];
    int ci = g;
    if (ci < chunks) { /* the first chunk is the queue */
      rtopk_load_chunk<KeyT, K>(src, ci * K, len, vec_ok, x, q);
      rtopk_sort_desc<C, K>(q);
      ci += G;
    } else {
#pragma unroll
      for (int s = 0; s < K; ++s) q[s] = 0;
    }
    for (; ci < chunks; ci += G) {
      C c[K];
      rtopk_load_chunk<KeyT, K>(src, ci * K, len, vec_ok, x, c);
      rtopk_sort_desc<C, K>(c);
      rtopk_keep_best<C, K>(q, c);
    }
    rtopk_group_merge<C, K, G>(q, mask);

    /* the queue is best first: sorted and unsorted output alike; empty slots (rows shorter
     * than k) get the worst value and index -1 */
    const int64_t obase = r * P.k;
#pragma unroll
    for (int s = 0; s < K; ++s) {
      if (s % G == g && s < k) {
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
