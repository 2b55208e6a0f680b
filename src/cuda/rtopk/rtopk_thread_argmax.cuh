/*
 * rtopk_thread_argmax.cuh: k = 1 on RTop-K's thread path (MoE top-1 routing, an argmax over each
 * of many short rows): G lanes a row, each keeps the best element of its part of the row, and
 * the group reduces by shuffles. rtopk.cu launches it where the thread path runs (thread_group)
 * and k = 1.
 *
 * Why: the queue kernel (rtopk_thread_rows.cuh) at K = 1 builds 32-bit prefix words, sorts
 * chunks of 4, tracks the best word it dropped and checks at the row's end whether the prefixes
 * decided the slot (~430 warp instructions for a warp's 8 rows of 64 f32 with FULL; ncu,
 * session 26). An argmax needs none of it: a compare of full keys and a select an element, and a
 * reduction of G (key, index) pairs a row.
 *
 * Exact, with the project's tie rule: a lane reads its elements in index order and takes one
 * only when its key is strictly better, so it keeps the lowest index among its equal keys; the
 * group breaks equal keys by the lower index. Keys are rtopk_key's (NaN above +inf and all NaNs
 * equal; TOPK_SMALLEST flips them). Key 0 (the worst key) never beats the initial 0, so a lane
 * whose elements all have key 0 ends with none taken and takes its first element instead.
 * - 32-bit keys: key and index in two registers. f32 computes keys without a NaN test an
 *   element (rtopk_f32_prefix_words' formula) and recomputes the rare chunk that holds a NaN.
 * - 16-bit keys: the composite word key << 16 | (2^16 - 1 - index) (rtopk_f16x_words), whose
 *   maximum is the argmax with its tie rule: one max an element. Word 0 is below every element.
 *
 * Loads: lane g reads the row's 16-byte vectors g, g + G, ..., RTOPK_ARGMAX_VECS of them before
 * it compares any, as the queue kernel fetches its chunks (rtopk_fetch_chunk: scalar loads for
 * a row start that is not 16-byte aligned and for the tail).
 * One group per row; the grid covers the rows (and strides past 2^31 - 1 blocks).
 * Safety: rows as topk_row gives them (the thread path takes rows of <= RTOPK_THREAD_MAX_N);
 * every index read back is < the row's length; slot 0 of each row is written once.
 */
#ifndef TOPK_CUDA_RTOPK_THREAD_ARGMAX_CUH
#define TOPK_CUDA_RTOPK_THREAD_ARGMAX_CUH

#include "rtopk_thread_rows.cuh"

enum { RTOPK_ARGMAX_VECS = 4 /* 16-byte vectors a lane has in flight */ };

/* 32-bit keys of one vector (4 elements): f32 by rtopk_f32_kl with the flip, and rtopk_key
 * where the vector holds a NaN; other 32-bit kinds by rtopk_key. */
template <int KIND>
__device__ __forceinline__ void rtopk_argmax_keys32(const uint32_t (&w)[4], const rtopk_xf<uint32_t>& x,
                                                    uint32_t (&key)[4]) {
  if constexpr (KIND == RTOPK_KIND_F32) {
    bool nan = false;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float f = __uint_as_float(w[j]);
      nan |= f != f;
      key[j] = rtopk_f32_kl(w[j]) ^ x.flip;
    }
    if (__builtin_expect(nan, 0)) {
#pragma unroll
      for (int j = 0; j < 4; ++j) key[j] = rtopk_key(w[j], x);
    }
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) key[j] = rtopk_key(w[j], x);
  }
}

/*
 * blockDim.x = RTOPK_THREAD_BLOCK, G lanes a row (1, 2, 4 or 8; the lanes of a group are
 * adjacent in a warp), P.k == 1. KIND as rtopk_kernel: RTOPK_KIND_F32 or _GENERIC for 32-bit
 * keys, RTOPK_KIND_F16X for 16-bit ones.
 */
template <typename KeyT, int G, int KIND>
__global__ void __launch_bounds__(RTOPK_THREAD_BLOCK) rtopk_argmax_kernel(const rtopk_params P) {
  constexpr int B = RTOPK_THREAD_BLOCK;
  constexpr int CW = 16 / (int)sizeof(KeyT); /* elements a vector */
  constexpr int U = RTOPK_ARGMAX_VECS;
  const rtopk_xf<KeyT> x = rtopk_make_xf<KeyT, KIND>(P.dtype, P.smallest);
  const int g = (int)(threadIdx.x % G);
  const unsigned mask = ((1u << G) - 1u) << ((threadIdx.x % 32) & ~(unsigned)(G - 1));
  const int64_t rows_per_pass = (int64_t)gridDim.x * (B / G);
  for (int64_t r = (int64_t)blockIdx.x * (B / G) + threadIdx.x / G; r < P.batch; r += rows_per_pass) {
    const rtopk_lane_row<KeyT> row = rtopk_lane_row_at<KeyT, CW>(P, r); /* chunks of one 16-byte vector */
    const KeyT* src = row.src;
    const int len = row.len, nvec = row.chunks;
    uint32_t best = 0;    /* 32-bit keys: the best key; 16-bit keys: the best word */
    unsigned bi = ~0u;    /* 32-bit keys: its index (~0u: none taken) */
#pragma unroll 1
    for (int v0 = g; v0 < nvec; v0 += G * U) {
      rtopk_chunk_bits<KeyT, CW> w[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (v0 + u * G < nvec) rtopk_fetch_chunk<KeyT, CW>(row, v0 + u * G, w[u]);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * G;
        if (v >= nvec) break;
        const int base = v * CW;
        if constexpr (sizeof(KeyT) == 4) {
          uint32_t key[4];
          rtopk_argmax_keys32<KIND>(w[u].w, x, key);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const bool take = key[j] > best && base + j < len;
            best = take ? key[j] : best;
            bi = take ? (unsigned)(base + j) : bi;
          }
        } else {
          uint32_t c[8];
          const rtopk_f16x_words<8> words(x); /* rtopk_thread_rows.cuh */
          words(w[u], base, c);
#pragma unroll
          for (int j = 0; j < 8; ++j) best = max(best, base + j < len ? c[j] : 0u);
        }
      }
    }
    if constexpr (sizeof(KeyT) == 4) {
      if (bi == ~0u && g < nvec) bi = (unsigned)(g * CW); /* every key of this lane's part is 0 */
#pragma unroll
      for (int m = 1; m < G; m <<= 1) {
        const uint32_t ok = __shfl_xor_sync(mask, best, m, G);
        const unsigned oi = __shfl_xor_sync(mask, bi, m, G);
        const bool take = ok > best || (ok == best && oi < bi);
        best = take ? ok : best;
        bi = take ? oi : bi;
      }
    } else {
#pragma unroll
      for (int m = 1; m < G; m <<= 1) best = max(best, __shfl_xor_sync(mask, best, m, G));
    }
    if (g != 0) continue;
    if (len == 0) {
      rtopk_emit_empty<KeyT>(P, r, 0);
      continue;
    }
    KeyT key;
    unsigned idx;
    if constexpr (sizeof(KeyT) == 4) {
      key = best;
      idx = bi;
    } else {
      const rtopk_entry<uint16_t> e{best};
      key = e.key();
      idx = e.pos();
    }
    bool nan;
    KeyT raw = rtopk_raw(key, x, &nan);
    if (nan) raw = src[idx]; /* NaN payloads survive */
    rtopk_emit_raw<KeyT>(P, r, 0, raw, idx);
  }
}

#endif /* TOPK_CUDA_RTOPK_THREAD_ARGMAX_CUH */
