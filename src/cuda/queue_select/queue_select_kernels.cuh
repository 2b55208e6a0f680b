/*
 * queue_select_kernels.cuh: the kernels of WarpSelect, BlockSelect and GridSelect
 * and their launchers. Included only by the generated instantiation files
 * (queue_select_inst.cu.in, expanded per (algorithm, bucket) by queue_select.cmake);
 * the queues and merge networks are include/topk_device/merge.cuh, shared with
 * users' kernels.
 *
 *   WarpSelect  (004 sec. 4)  one warp per row, 4 rows per block; the warp reads its
 *               row in 16-byte vectors and keeps the best CAP in registers.
 *   BlockSelect (004 sec. 4, Faiss)  one block per row; each warp keeps its own
 *               queue over a strided part of the row (the block's threads read
 *               consecutive vectors), then the warps' queues merge in shared memory.
 *   GridSelect  (003 sec. 4)  as BlockSelect, but each warp buffers candidates in a
 *               shared queue of 32 filled by two-step ballot insertion (003 Fig. 5),
 *               and a row may be split over several blocks (bpr): each writes its
 *               best k pairs to the workspace, and a merge kernel (a block select
 *               over the bpr x k candidates) writes the outputs.
 *
 * Reading: the row's first elements up to a 16-byte boundary (head) and the last
 * ones after the last whole vector (tail) are read in one extra round by single
 * lanes (head + tail < 16 < 32 lanes); the middle in uint4 loads, QS_UNROLL vectors
 * per thread per round, all loads of a round issued before any is used. A round
 * first tests all its elements against the warp's threshold (one compare each) and
 * takes the queue path only if some lane has a candidate (__any_sync).
 *
 * Values are written from the input (in[row][index]), so they are bit-exact
 * (NaN payloads, -0.0); empty slots (rows shorter than k) get index -1 and the
 * worst value. Offsets are clamped into [0, n] as in AIR, so bad offsets cannot
 * read or write out of bounds.
 */
#ifndef TOPK_QUEUE_SELECT_KERNELS_CUH
#define TOPK_QUEUE_SELECT_KERNELS_CUH

#include <limits.h>
#include <stdint.h>

#include "../common/cuda_check.h"
#include "../common/keys.cuh"
#include "../common/rows.cuh"
#include "queue_select.h"

/* uint4 vectors per thread per round: 8 elements of 32 bits, 8 of 16, 4 of 64. */
template <int KB> __host__ __device__ constexpr int qs_unroll() { return KB == 16 ? 1 : 2; }

/* Row `row`'s first element and length; offsets clamped into [0, n]. */
__device__ __forceinline__ void qs_row(const qs_params& P, int64_t row, int64_t& start, uint32_t& len) {
  const topk_row_span s = topk_row(P.offsets, P.n, P.ld, row); /* common/rows.cuh */
  start = s.start;
  len = (uint32_t)s.len; /* n <= QS_MAX_ROW (supports()) */
}

/* Element j of a 16-byte vector of KB-bit elements (little-endian). */
template <int KB>
__device__ __forceinline__ typename topk_key_of_width<KB>::type qs_vec_elem(const uint4& x, int j) {
  const unsigned int w[4] = {x.x, x.y, x.z, x.w};
  if (KB == 16) return (typename topk_key_of_width<KB>::type)((w[j >> 1] >> ((j & 1) * 16)) & 0xFFFFu);
  if (KB == 32) return (typename topk_key_of_width<KB>::type)w[j];
  return (typename topk_key_of_width<KB>::type)(((unsigned long long)w[2 * j + 1] << 32) | w[2 * j]);
}

/* ---- sinks: where a warp's candidates go (thread queues or the shared queue) ---- */

template <int KB, int R> struct qs_shared_sink {
  topk_dq_pair<KB>  w[R];
  topk_dq_pair<KB>  kth;
  int               k;
  topk_dq_pair<KB>* buf; /* this warp's 32 shared slots */
  int               nb;  /* filled slots, warp-uniform */
};

template <int KB, int R, int T>
__device__ __forceinline__ topk_dq_pair<KB>& qs_kth(topk_dq_warp<KB, R, T>& q) { return q.kth; }
template <int KB, int R>
__device__ __forceinline__ topk_dq_pair<KB>& qs_kth(qs_shared_sink<KB, R>& s) { return s.kth; }

/*
 * The block's threshold: the best of its warps' k-th elements, shared through one
 * 64-bit word of shared memory (packed keys only). An element worse than any warp's
 * k-th is worse than k elements of the row, so every warp may filter with the best
 * of them: fewer candidates when several warps share a row. Read and published
 * with shared-memory atomics by lane 0 (atomicOr(p, 0) is an atomic read).
 */
template <int KB>
__device__ __forceinline__ void qs_raise(topk_dq_pair<KB>& kth, unsigned long long* skth, int lane) {
  unsigned long long t = 0;
  if (lane == 0) t = atomicOr(skth, 0ull);
  t = __shfl_sync(TOPK_DQ_FULL, t, 0);
  if (t > kth.v) kth.v = t;
}
template <>
__device__ __forceinline__ void qs_raise<64>(topk_dq_pair<64>&, unsigned long long*, int) {}
template <int KB>
__device__ __forceinline__ void qs_publish(const topk_dq_pair<KB>& kth, unsigned long long* skth, int lane) {
  if (lane == 0) atomicMax(skth, kth.v);
}
template <>
__device__ __forceinline__ void qs_publish<64>(const topk_dq_pair<64>&, unsigned long long*, int) {}

template <int KB, int R, int T>
__device__ __forceinline__ void qs_add(topk_dq_warp<KB, R, T>& q, const topk_dq_pair<KB>& e, bool ok, int lane) {
  topk_dq_warp_add<KB, R, T>(q, e, ok, lane);
}
template <int KB, int R>
__device__ __forceinline__ void qs_add(qs_shared_sink<KB, R>& s, const topk_dq_pair<KB>& e, bool ok, int lane) {
  topk_dq_warp_add_shared<KB, R>(s.w, s.kth, s.k, s.buf, s.nb, e, ok, lane);
}

/* ---- reading ---- */

/*
 * A row as 16-byte vectors: `head` elements before the first whole vector, `nvec` vectors,
 * `tail` elements after the last; part `part` of `parts` takes vectors [vb, ve).
 */
struct qs_row_split {
  uint32_t head, nvec, tail, vb, ve;
};
template <int KB>
__device__ __forceinline__ qs_row_split qs_split_row(const char* row, uint32_t len, uint32_t part, uint32_t parts) {
  const uint32_t ES = KB / 8, VE = 16 / ES;
  qs_row_split r;
  r.head = (uint32_t)(((16u - ((uintptr_t)row & 15u)) & 15u) / ES);
  if (r.head > len) r.head = len;
  r.nvec = (len - r.head) / VE;
  r.tail = len - r.head - r.nvec * VE;
  const uint32_t per = r.nvec / parts + (r.nvec % parts != 0);
  r.vb = part * per < r.nvec ? part * per : r.nvec;
  r.ve = r.nvec - r.vb < per ? r.nvec : r.vb + per;
  return r;
}

/*
 * Feeds part `part` of `parts` of a row's vectors to the sink; part 0 also feeds
 * the head and tail elements. gid: the thread's number among the G threads that
 * share the row (their warps each have their own sink). Warp-collective.
 */
template <int KB, typename Sink>
__device__ __forceinline__ void qs_scan_input(Sink& s, const qs_params& P, int64_t start, uint32_t len, uint32_t part,
                                              uint32_t parts, int gid, int G, int lane, unsigned long long* skth) {
  typedef topk_dq_ops<KB> O;
  typedef typename topk_key_of_width<KB>::type U;
  const int ES = KB / 8, VE = 16 / ES, UN = qs_unroll<KB>();
  const char* row = (const char*)P.in + start * ES;
  const qs_row_split rs = qs_split_row<KB>(row, len, part, parts);
  const uint32_t head = rs.head, nvec = rs.nvec, tail = rs.tail, vb = rs.vb, ve = rs.ve;
  const uint4* vp = (const uint4*)(row + (size_t)head * ES);

  for (uint32_t v0 = vb; v0 < ve; v0 += (uint32_t)(G * UN)) {
    if (skth) qs_raise<KB>(qs_kth(s), skth, lane);
    uint4 x[UN];
    bool ok[UN];
#pragma unroll
    for (int u = 0; u < UN; ++u) {
      const uint32_t v = v0 + (uint32_t)(u * G + gid);
      ok[u] = v < ve;
      x[u] = ok[u] ? __ldg(vp + v) : make_uint4(0u, 0u, 0u, 0u);
    }
    bool any = false;
#pragma unroll
    for (int u = 0; u < UN; ++u) {
      const uint32_t base = head + (v0 + (uint32_t)(u * G + gid)) * VE;
#pragma unroll
      for (int j = 0; j < VE; ++j) {
        const topk_dq_pair<KB> e = O::make(topk_dq_rank_key<U>(qs_vec_elem<KB>(x[u], j), P.kp), base + j);
        any |= ok[u] && O::better(e, qs_kth(s));
      }
    }
    if (__any_sync(TOPK_DQ_FULL, any)) {
      /* Not unrolled, so the queue's merge is inlined once, not UN x VE times (code size,
       * compile time); element c is picked from the registers by selects. */
#pragma unroll 1
      for (int c = 0; c < UN * VE; ++c) {
        U raw = 0;
        bool okc = false;
#pragma unroll
        for (int u = 0; u < UN; ++u)
#pragma unroll
          for (int j = 0; j < VE; ++j)
            if (u * VE + j == c) {
              raw = qs_vec_elem<KB>(x[u], j);
              okc = ok[u];
            }
        const uint32_t v = v0 + (uint32_t)((c / VE) * G + gid);
        qs_add(s, O::make(topk_dq_rank_key<U>(raw, P.kp), head + v * VE + (uint32_t)(c % VE)), okc, lane);
      }
      if (skth) qs_publish<KB>(qs_kth(s), skth, lane);
    }
  }
  if (part == 0 && head + tail > 0) {
    const bool ok = (uint32_t)gid < head + tail;
    const uint32_t i = (uint32_t)gid < head ? (uint32_t)gid : head + nvec * VE + ((uint32_t)gid - head);
    const U raw = ok ? ((const U*)row)[i] : (U)0;
    qs_add(s, O::make(topk_dq_rank_key<U>(raw, P.kp), i), ok, lane);
  }
}

/* Feeds a row's `count` candidate pairs (GridSelect's merge). Warp-collective. */
template <int KB, typename Sink>
__device__ __forceinline__ void qs_scan_pairs(Sink& s, const topk_dq_pair<KB>* cand, int64_t count, int gid, int G,
                                              int lane) {
  typedef topk_dq_ops<KB> O;
  enum { UN = 4 };
  for (int64_t i0 = 0; i0 < count; i0 += (int64_t)G * UN) {
    topk_dq_pair<KB> e[UN];
    bool ok[UN];
    bool any = false;
#pragma unroll
    for (int u = 0; u < UN; ++u) {
      const int64_t i = i0 + u * G + gid;
      ok[u] = i < count;
      e[u] = ok[u] ? cand[i] : O::worst();
    }
#pragma unroll
    for (int u = 0; u < UN; ++u) any |= ok[u] && O::better(e[u], qs_kth(s));
    if (__any_sync(TOPK_DQ_FULL, any)) {
#pragma unroll 1
      for (int c = 0; c < UN; ++c) {
        topk_dq_pair<KB> ec = e[0];
        bool okc = ok[0];
#pragma unroll
        for (int u = 1; u < UN; ++u)
          if (u == c) {
            ec = e[u];
            okc = ok[u];
          }
        qs_add(s, ec, okc, lane);
      }
    }
  }
}

/* ---- writing ---- */

/* Writes output slot e (< k) of row `row` from pair p: the value read back from the row, or
 * the worst value and index -1 for a sentinel (a row shorter than k). */
template <int KB>
__device__ __forceinline__ void qs_write_slot(const qs_params& P, int64_t row, int64_t start, int e,
                                              const topk_dq_pair<KB>& p) {
  typedef typename topk_key_of_width<KB>::type U;
  const int64_t o = row * (int64_t)P.k + e;
  const bool empty = topk_dq_is_sentinel<KB>(p);
  const uint32_t idx = topk_dq_ops<KB>::index(p);
  ((U*)P.values)[o] = empty ? (U)P.worst_bits : ((const U*)P.in + start)[idx];
  if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = empty ? (int64_t)-1 : (int64_t)idx;
  else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = empty ? (int32_t)-1 : (int32_t)idx;
}

/* Writes the first k of a sorted lane-stride queue as row `row`'s outputs. */
template <int KB, int R>
__device__ __forceinline__ void qs_write_out(const qs_params& P, int64_t row, int64_t start,
                                             const topk_dq_pair<KB> (&w)[R], int lane) {
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (r * 32 + lane < P.k) qs_write_slot<KB>(P, row, start, r * 32 + lane, w[r]);
}

extern __shared__ __align__(16) unsigned char qs_smem[];

/* ---- kernels ---- */

template <int KB, int CAP>
__global__ void __launch_bounds__(QS_WARP_ROWS_PER_BLOCK * 32) qs_warp_kernel(const qs_params P) {
  enum { R = CAP / 32, T = qs_thread_q(CAP, true) };
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row = P.row0 + (int64_t)blockIdx.x * QS_WARP_ROWS_PER_BLOCK + warp;
  if (row >= P.batch) return; /* whole warps; no block-wide synchronisation follows */
  int64_t start;
  uint32_t len;
  qs_row(P, row, start, len);
  topk_dq_warp<KB, R, T> q;
  topk_dq_warp_init<KB, R, T>(q, P.k);
  qs_scan_input<KB>(q, P, start, len, 0u, 1u, lane, 32, lane, (unsigned long long*)0);
  topk_dq_warp_flush<KB, R, T>(q, lane);
  qs_write_out<KB, R>(P, row, start, q.w, lane);
}

template <int KB, int CAP>
__global__ void __launch_bounds__(qs_block_warps(CAP) * 32) qs_block_kernel(const qs_params P) {
  enum { R = CAP / 32, T = qs_thread_q(CAP, false), NW = qs_block_warps(CAP) };
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row = P.row0 + (int64_t)blockIdx.x;
  int64_t start;
  uint32_t len;
  qs_row(P, row, start, len);
  __shared__ unsigned long long skth;
  if (threadIdx.x == 0) skth = 0ull;
  __syncthreads();
  topk_dq_warp<KB, R, T> q;
  topk_dq_warp_init<KB, R, T>(q, P.k);
  qs_scan_input<KB>(q, P, start, len, 0u, 1u, (int)threadIdx.x, NW * 32, lane,
                    KB == 64 ? (unsigned long long*)0 : &skth);
  topk_dq_warp_flush<KB, R, T>(q, lane);
  topk_dq_block_merge<KB, R>(q.w, (topk_dq_pair<KB>*)qs_smem, warp, NW, lane);
  if (warp == 0) qs_write_out<KB, R>(P, row, start, q.w, lane);
}

/* GridSelect's dynamic shared memory: NW shared queues of 32, then the block merge. */
template <int KB, int CAP> __host__ __device__ constexpr size_t qs_grid_smem() {
  return (size_t)qs_block_warps(CAP) * 32 * sizeof(topk_dq_pair<KB>) +
         topk_dq_block_merge_bytes<KB, CAP / 32>(qs_block_warps(CAP));
}

template <int KB, int CAP>
__global__ void __launch_bounds__(qs_block_warps(CAP) * 32) qs_grid_kernel(const qs_params P) {
  enum { R = CAP / 32, NW = qs_block_warps(CAP) };
  typedef topk_dq_ops<KB> O;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row = P.row0 + (int64_t)blockIdx.y;
  const uint32_t part = blockIdx.x;
  topk_dq_pair<KB>* bufs = (topk_dq_pair<KB>*)qs_smem;
  int64_t start;
  uint32_t len;
  qs_row(P, row, start, len);
  __shared__ unsigned long long skth;
  if (threadIdx.x == 0) skth = 0ull;
  __syncthreads();
  qs_shared_sink<KB, R> s;
#pragma unroll
  for (int r = 0; r < R; ++r) s.w[r] = O::worst();
  s.kth = O::worst();
  s.k = P.k;
  s.buf = bufs + warp * 32;
  s.nb = 0;
  qs_scan_input<KB>(s, P, start, len, part, (uint32_t)P.bpr, (int)threadIdx.x, NW * 32, lane,
                    KB == 64 ? (unsigned long long*)0 : &skth);
  topk_dq_warp_flush_shared<KB, R>(s.w, s.kth, s.k, s.buf, s.nb, lane);
  topk_dq_block_merge<KB, R>(s.w, bufs + NW * 32, warp, NW, lane);
  if (warp != 0) return;
  if (P.cand) {
    topk_dq_pair<KB>* out = (topk_dq_pair<KB>*)P.cand + ((size_t)row * (size_t)P.bpr + part) * (size_t)P.k;
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (r * 32 + lane < P.k) out[r * 32 + lane] = s.w[r];
  } else {
    qs_write_out<KB, R>(P, row, start, s.w, lane);
  }
}

/* GridSelect's merge: one block per row over the row's bpr x k candidates. */
template <int KB, int CAP>
__global__ void __launch_bounds__(qs_block_warps(CAP) * 32) qs_grid_merge_kernel(const qs_params P) {
  enum { R = CAP / 32, T = qs_thread_q(CAP, false), NW = qs_block_warps(CAP) };
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row = P.row0 + (int64_t)blockIdx.x;
  const int64_t count = P.bpr * (int64_t)P.k;
  const topk_dq_pair<KB>* cand = (const topk_dq_pair<KB>*)P.cand + (size_t)row * (size_t)count;
  topk_dq_warp<KB, R, T> q;
  topk_dq_warp_init<KB, R, T>(q, P.k);
  qs_scan_pairs<KB>(q, cand, count, (int)threadIdx.x, NW * 32, lane);
  topk_dq_warp_flush<KB, R, T>(q, lane);
  topk_dq_block_merge<KB, R>(q.w, (topk_dq_pair<KB>*)qs_smem, warp, NW, lane);
  if (warp == 0) {
    int64_t start;
    uint32_t len;
    qs_row(P, row, start, len);
    qs_write_out<KB, R>(P, row, start, q.w, lane);
  }
}

/* ---- launchers ---- */

/* Allows dynamic shared memory above the default where a kernel needs it. */
template <typename K>
static cudaError_t qs_allow_smem(K kernel, size_t bytes) {
  if (!topk_smem_needs_optin(bytes)) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

template <int KB, int CAP> topk_status qs_launch_warp(const qs_params& P0, cudaStream_t stream) {
  qs_params P = P0;
  const int64_t chunk = (int64_t)INT_MAX * QS_WARP_ROWS_PER_BLOCK; /* a multiple of the rows per block */
  for (int64_t row0 = 0; row0 < P.batch; row0 += chunk) {
    const int64_t rows = P.batch - row0 < chunk ? P.batch - row0 : chunk;
    P.row0 = row0;
    const unsigned blocks = (unsigned)((rows + QS_WARP_ROWS_PER_BLOCK - 1) / QS_WARP_ROWS_PER_BLOCK);
    qs_warp_kernel<KB, CAP><<<blocks, QS_WARP_ROWS_PER_BLOCK * 32, 0, stream>>>(P);
    TOPK_CUDA_TRY_LAUNCH("qs_warp_kernel");
  }
  return TOPK_SUCCESS;
}

template <int KB, int CAP> topk_status qs_launch_block(const qs_params& P0, cudaStream_t stream) {
  qs_params P = P0;
  const int NW = qs_block_warps(CAP);
  const size_t smem = topk_dq_block_merge_bytes<KB, CAP / 32>(NW);
  TOPK_CUDA_TRY(qs_allow_smem(qs_block_kernel<KB, CAP>, smem));
  for (int64_t row0 = 0; row0 < P.batch; row0 += INT_MAX) {
    const int64_t rows = P.batch - row0 < INT_MAX ? P.batch - row0 : INT_MAX;
    P.row0 = row0;
    qs_block_kernel<KB, CAP><<<(unsigned)rows, NW * 32, smem, stream>>>(P);
    TOPK_CUDA_TRY_LAUNCH("qs_block_kernel");
  }
  return TOPK_SUCCESS;
}

template <int KB, int CAP> topk_status qs_launch_grid(const qs_params& P0, cudaStream_t stream) {
  qs_params P = P0;
  const int NW = qs_block_warps(CAP);
  const size_t smem = qs_grid_smem<KB, CAP>();
  const size_t msmem = topk_dq_block_merge_bytes<KB, CAP / 32>(NW);
  TOPK_CUDA_TRY(qs_allow_smem(qs_grid_kernel<KB, CAP>, smem));
  if (P.cand) TOPK_CUDA_TRY(qs_allow_smem(qs_grid_merge_kernel<KB, CAP>, msmem));
  const int64_t chunk = 65535; /* gridDim.y */
  for (int64_t row0 = 0; row0 < P.batch; row0 += chunk) {
    const int64_t rows = P.batch - row0 < chunk ? P.batch - row0 : chunk;
    P.row0 = row0;
    const dim3 grid((unsigned)P.bpr, (unsigned)rows, 1);
    qs_grid_kernel<KB, CAP><<<grid, NW * 32, smem, stream>>>(P);
    TOPK_CUDA_TRY_LAUNCH("qs_grid_kernel");
    if (P.cand) {
      qs_grid_merge_kernel<KB, CAP><<<(unsigned)rows, NW * 32, msmem, stream>>>(P);
      TOPK_CUDA_TRY_LAUNCH("qs_grid_merge_kernel");
    }
  }
  return TOPK_SUCCESS;
}

/* One generated file per (algorithm, bucket): the three key widths. */
#define QS_INSTANTIATE(FN, CAP)                                        \
  template topk_status FN<16, CAP>(const qs_params&, cudaStream_t);   \
  template topk_status FN<32, CAP>(const qs_params&, cudaStream_t);   \
  template topk_status FN<64, CAP>(const qs_params&, cudaStream_t);

#endif /* TOPK_QUEUE_SELECT_KERNELS_CUH */
