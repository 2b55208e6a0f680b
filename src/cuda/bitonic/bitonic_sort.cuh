/*
 * bitonic_sort.cuh: (key, ~index) pairs and the block-wide bitonic primitives
 * shared by bitonic top-k (bitonic.cu) and bucket select's sorted output
 * (src/cuda/bucket/bucket.cu).
 *
 * A pair orders as the contract: larger rank key first, then lower index
 * (nidx = ~index, larger is better). The empty pair {0, 0} is worse than every real
 * one (a real nidx is >= 2^63 because indices are < 2^63), so it pads and sorts last.
 *
 * bt_finish_kernel: one block per row sorts the row's <= M pairs (a region of a pair
 * buffer, given by bt_regions) best first and writes the first k as the outputs,
 * reading each value back from the input (exact bits: NaN payloads survive);
 * empty pairs become padding (index -1, the worst value).
 */
#ifndef TOPK_CUDA_BITONIC_SORT_CUH
#define TOPK_CUDA_BITONIC_SORT_CUH

#include <stdint.h>

#include "../common/keys.cuh"
#include "../common/rows.cuh"

enum { BT_THREADS = 256 };

struct bt_pair {
  unsigned long long key;  /* rank key, zero-extended */
  unsigned long long nidx; /* ~index */
};

__device__ __forceinline__ bool bt_better(const bt_pair& a, const bt_pair& b) {
  return a.key > b.key || (a.key == b.key && a.nidx > b.nidx);
}

__device__ __forceinline__ bt_pair bt_make(unsigned long long key, int64_t idx) {
  bt_pair p;
  p.key = key;
  p.nidx = ~(unsigned long long)idx;
  return p;
}

__device__ __forceinline__ bt_pair bt_empty() {
  bt_pair p;
  p.key = 0;
  p.nidx = 0;
  return p;
}

/*
 * Compare-exchange stages of a bitonic network over s[0..m) (m a power of two),
 * for block sizes `size` from size_lo to size_hi (powers of two): within the
 * stage of block size `size`, the pair (i, i ^ stride) is ordered best first when
 * (i & size) == 0, worst first otherwise. size_lo = 2, size_hi = M sorts every run
 * of M alternately best-first / worst-first (run q best first iff q is even, since
 * for size = M, (i & M) == 0 exactly in even runs); size_lo = size_hi = M with
 * stride starting at M / 2 merges bitonic runs of M in the same alternating order.
 * Every thread must call it; it synchronises after every stage.
 */
__device__ __forceinline__ void bt_network(bt_pair* s, int m, int size_lo, int size_hi) {
  for (int size = size_lo; size <= size_hi; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < (m >> 1); t += blockDim.x) {
        const int i = 2 * t - (t & (stride - 1)), j = i + stride; /* i has bit `stride` clear */
        const bt_pair a = s[i], b = s[j];
        const bool best_first = (i & size) == 0;
        if (bt_better(b, a) == best_first) {
          s[i] = b;
          s[j] = a;
        }
      }
      __syncthreads();
    }
}

/* Full sort of s[0..m), best first. */
__device__ __forceinline__ void bt_sort_block(bt_pair* s, int m) {
  __syncthreads();
  /* the last size is m: (i & m) == 0 for every i < m, so the whole array ends best first */
  bt_network(s, m, 2, m);
}

/* Where row r's pairs are: [start, start + len) of the pair buffer. */
struct bt_region {
  int64_t start, len;
};

struct bt_finish_params {
  const void* in;
  const int64_t* offsets; /* device; NULL: uniform rows */
  int64_t n, ld, batch, k;
  const bt_pair* pairs;   /* NULL: the rows are read straight from the input (short rows) */
  /* regions: start = (start0 / t) + r) * m ... applied `rounds` times (bitonic), or r * k (bucket) */
  int rounds;
  int64_t tile, m_out;    /* bitonic round geometry (see bt_region_of) */
  int64_t fixed_stride;   /* > 0: region r = [r * fixed_stride, + fixed_stride) (bucket) */
  int m;                  /* sort size, power of two >= k and >= every region length */
  int smallest;
  int index_type;
  void* values;
  void* indices;
  unsigned long long worst_bits;
};

/* Row r of the input: clamped offsets (as AIR); vo = virtual start (r * n for uniform rows). */
__device__ __forceinline__ void bt_input_row(const void* in, const int64_t* offsets, int64_t n, int64_t ld, int64_t r,
                                             int64_t* start, int64_t* len, int64_t* vo) {
  (void)in;
  const topk_row_span s = topk_row(offsets, n, ld, r); /* common/rows.cuh */
  *start = s.start;
  *len = s.len;
  *vo = offsets ? s.start : r * n;
}

/*
 * Region of row r after `rounds` reduction rounds of tile elements -> m_out
 * survivors per tile: start' = (start / tile + r) * m_out, len' = ceil(len / tile) * m_out.
 * Rows stay disjoint and inside a buffer of (V / tile + batch) * m_out (V: the
 * previous total), because floor(a/t) + ceil(l/t) <= floor((a+l)/t) + 1.
 */
__device__ __forceinline__ bt_region bt_region_of(int64_t vo, int64_t len, int64_t r, int rounds, int64_t tile,
                                                  int64_t m_out) {
  bt_region g;
  g.start = vo;
  g.len = len;
  for (int i = 0; i < rounds; ++i) {
    g.start = (g.start / tile + r) * m_out;
    g.len = (g.len + tile - 1) / tile * m_out;
  }
  return g;
}

/* One block per row (grid-stride): sort the row's pairs (<= m) best first, write k outputs. */
template <topk_dtype DT>
__global__ void __launch_bounds__(BT_THREADS) bt_finish_kernel(const bt_finish_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  extern __shared__ __align__(16) unsigned char bt_finish_smem[];
  bt_pair* s = (bt_pair*)bt_finish_smem;
  const bool smallest = P.smallest != 0;
  for (int64_t r = blockIdx.x; r < P.batch; r += gridDim.x) {
    int64_t start, len, vo;
    bt_input_row(P.in, P.offsets, P.n, P.ld, r, &start, &len, &vo);
    const RawT* row = (const RawT*)P.in + start;
    bt_region g;
    if (P.fixed_stride > 0) {
      g.start = r * P.fixed_stride;
      g.len = P.fixed_stride;
    } else {
      g = bt_region_of(vo, len, r, P.rounds, P.tile, P.m_out);
    }
    for (int i = threadIdx.x; i < P.m; i += BT_THREADS) {
      bt_pair v = bt_empty();
      if (i < g.len) {
        if (P.pairs) v = P.pairs[g.start + i];
        else v = bt_make((unsigned long long)topk_to_rank_key<DT>(row[i], smallest), i);
      }
      s[i] = v;
    }
    bt_sort_block(s, P.m);
    for (int64_t q = threadIdx.x; q < P.k; q += BT_THREADS) {
      const bt_pair v = s[q];
      const int64_t idx = (int64_t)~v.nidx;
      int64_t ix = -1;
      RawT val = (RawT)P.worst_bits;
      if (v.nidx != 0 && idx >= 0 && idx < len) {
        ix = idx;
        val = row[idx];
      }
      const int64_t o = r * P.k + q;
      ((RawT*)P.values)[o] = val;
      if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = ix;
      else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = (int32_t)ix;
    }
    __syncthreads(); /* s is rewritten for the next row */
  }
}

#endif /* TOPK_CUDA_BITONIC_SORT_CUH */
