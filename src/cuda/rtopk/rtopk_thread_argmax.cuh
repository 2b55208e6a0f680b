/*
 * rtopk_thread_argmax.cuh: k = 1 on RTop-K's thread path (MoE top-1 routing, an argmax over each
 * of many short rows), and k = 2 for 16-bit keys (top-2 routing): G lanes a row, each keeps the
 * best k elements of its part of the row, and the group merges them by shuffles. rtopk.cu
 * launches it where the thread path runs (thread_group) and k fits (argmax_path).
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
 * - 32-bit keys: key and index in two registers; k = 1 only.
 * - 16-bit keys: the composite word key << 16 | (2^16 - 1 - index) (rtopk_word16), whose
 *   maximum is the argmax with its tie rule: one max an element (k = 2: a second word, two).
 *   Word 0 is below every element. Words are built two at a time (rtopk_argmax_words16).
 * - NaN: the pass builds keys without NaN's fix; a lane that saw a NaN redoes its part (below).
 *
 * Registers: the kernel reads only a few bytes a thread, so it is bound by how many bytes are in
 * flight, and so by blocks an SM. Session 36's version (a fixed U = 4, the row-end tests, the NaN
 * fix in the loop) took 43-48 registers: 1280 threads an SM, a row set of 65536 x 4 lanes in 1.55
 * waves. With U fitted to the row and FULL it takes 30-32 (2048 threads an SM, one wave):
 * bf16 65536 x 64, k = 1 6.26 -> 5.21 us under graph replay (docs/perf-notes.md v0.37).
 *
 * Loads: lane g reads the row's 16-byte vectors g, g + G, ..., U of them before it compares
 * any, as the queue kernel fetches its chunks (rtopk_fetch_chunk: scalar loads for a row start
 * that is not 16-byte aligned and for the tail).
 * One group per row; the grid covers the rows (and strides past 2^31 - 1 blocks).
 * Safety: rows as topk_row gives them (the thread path takes rows of <= RTOPK_THREAD_MAX_N);
 * every index read back is < the row's length; each of a row's k slots is written once.
 */
#ifndef TOPK_CUDA_RTOPK_THREAD_ARGMAX_CUH
#define TOPK_CUDA_RTOPK_THREAD_ARGMAX_CUH

#include "rtopk_thread_rows.cuh"

enum {
  RTOPK_ARGMAX_VECS = 4,    /* most 16-byte vectors a lane has in flight (the kernel's U: 1, 2 or 4) */
  RTOPK_ARGMAX_BLOCK = 128, /* threads a block (rtopk.cu launch_argmax says why) */
  RTOPK_ARGMAX_MAX_BLOCK = 1024
};

/* One 16-bit word's raw bits, two elements, into the two composite words of rtopk_word16
 * (key << 16 | 2^16 - 1 - index, the key flipped by F2 for TOPK_SMALLEST), for every value
 * but NaN (the caller finds those apart). I holds the two index complements (element 2p + 1's
 * in the high half). Three byte permutes and the xors for two elements: PRMT's sign-replicating
 * selector 0xBB99 turns each half's sign bit into 0xFFFF or 0, key = bits ^ (that | 0x8000)
 * (^ F2), and two permutes set each key above its index complement. */
__device__ __forceinline__ void rtopk_argmax_words16(uint32_t w, uint32_t I, uint32_t F2, uint32_t& lo,
                                                     uint32_t& hi) {
  uint32_t sx, kw;
  asm("prmt.b32 %0, %1, 0, 0xBB99;" : "=r"(sx) : "r"(w));
  kw = w ^ (sx | 0x80008000u) ^ F2;
  asm("prmt.b32 %0, %1, %2, 0x1054;" : "=r"(lo) : "r"(kw), "r"(I));
  asm("prmt.b32 %0, %1, %2, 0x3276;" : "=r"(hi) : "r"(kw), "r"(I));
}

/* 32-bit keys of one vector (4 elements): f32 by rtopk_f32_kl with the flip (NaN marked in
 * *nan, its key left wrong: the caller redoes the lane), other 32-bit kinds by rtopk_key. */
template <int KIND>
__device__ __forceinline__ void rtopk_argmax_keys32(const uint32_t (&w)[4], const rtopk_xf<uint32_t>& x,
                                                    uint32_t (&key)[4], bool* nan) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (KIND == RTOPK_KIND_F32) {
      const float f = __uint_as_float(w[j]);
      *nan |= f != f;
      key[j] = rtopk_f32_kl(w[j]) ^ x.flip;
    } else {
      key[j] = rtopk_key(w[j], x);
    }
  }
}

/*
 * blockDim.x a multiple of 32 up to RTOPK_ARGMAX_MAX_BLOCK, G lanes a row (1, 2, 4 or 8; the
 * lanes of a group are adjacent in a warp), P.k == K. KIND as rtopk_kernel: RTOPK_KIND_F32 or
 * _GENERIC for 32-bit keys, RTOPK_KIND_F16X for 16-bit ones. U: 16-byte vectors a lane loads
 * before it uses any (a lane's part of a row rounded up to 1, 2 or 4: registers and so blocks an
 * SM follow it). FULL: every row has P.n elements, a multiple of G x U vectors, 16-byte aligned
 * (rtopk.cu argmax_full), so no step tests the row's end.
 *
 * A lane's pass takes keys without NaN's fix (NaN: all ones, above +inf, every NaN equal): f32
 * marks a NaN by a float compare an element; 16-bit keys keep the largest |bits| of each half
 * (one VIMNMX a word) and compare it with the NaN bound at the end. A lane that saw a NaN
 * redoes its part with rtopk_key an element (rare; the fast pass's registers are dead then).
 */
template <typename KeyT, int K, int G, int KIND, int U, bool FULL>
__global__ void __launch_bounds__(RTOPK_ARGMAX_MAX_BLOCK) rtopk_argmax_kernel(const rtopk_params P) {
  static_assert(K == 1 || (K == 2 && sizeof(KeyT) == 2), "k = 2 for 16-bit keys only");
  constexpr int CW = 16 / (int)sizeof(KeyT); /* elements a vector */
  const rtopk_xf<KeyT> x = rtopk_make_xf<KeyT, KIND>(P.dtype, P.smallest);
  const int g = (int)(threadIdx.x % G);
  const unsigned mask = ((1u << G) - 1u) << ((threadIdx.x % 32) & ~(unsigned)(G - 1));
  const int rows_per_block = (int)blockDim.x / G;
  const int64_t rows_per_pass = (int64_t)gridDim.x * rows_per_block;
  const uint32_t F2 = (uint32_t)x.flip * 0x10001u; /* 16-bit keys: the flip in both halves */
  const uint32_t nan_abs = (uint32_t)x.nan_abs;
  for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / G; r < P.batch; r += rows_per_pass) {
    const rtopk_lane_row<KeyT> row = rtopk_lane_row_at<KeyT, CW>(P, r); /* chunks of one 16-byte vector */
    const KeyT* src = row.src;
    const int len = row.len, nvec = row.chunks;
    uint32_t best = 0; /* 32-bit keys: the best key; 16-bit keys: the best word */
    uint32_t second = 0; /* K = 2: the second-best word (0: none) */
    unsigned bi = ~0u; /* 32-bit keys: its index (~0u: none taken) */
    /* 16-bit keys: word c into the best K (words are distinct but for 0, the empty word) */
    const auto put16 = [&](uint32_t c) {
      if constexpr (K == 2) second = max(second, min(best, c));
      best = max(best, c);
    };
    bool nan = false;
    uint32_t amax = 0; /* 16-bit keys: the largest |bits| of each half */
#pragma unroll 1
    for (int v0 = g; v0 < nvec; v0 += G * U) {
      rtopk_chunk_bits<KeyT, CW> w[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (FULL || v0 + u * G < nvec) rtopk_fetch_chunk<KeyT, CW, FULL>(row, v0 + u * G, w[u]);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * G;
        if (!FULL && v >= nvec) break;
        const int base = v * CW;
        if constexpr (sizeof(KeyT) == 4) {
          uint32_t key[4];
          rtopk_argmax_keys32<KIND>(w[u].w, x, key, &nan);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const bool take = key[j] > best && (FULL || base + j < len);
            best = take ? key[j] : best;
            bi = take ? (unsigned)(base + j) : bi;
          }
        } else {
          const uint32_t I0 = ((0xFFFEu - (uint32_t)base) << 16) | (0xFFFFu - (uint32_t)base);
#pragma unroll
          for (int p = 0; p < 4; ++p) {
            uint32_t lo, hi;
            rtopk_argmax_words16(w[u].w[p], I0 - (uint32_t)p * 0x00020002u, F2, lo, hi);
            if (!FULL) { /* rtopk_fetch_chunk zero-fills past the end: |bits| 0, never NaN */
              lo = base + 2 * p < len ? lo : 0u;
              hi = base + 2 * p + 1 < len ? hi : 0u;
            }
            if constexpr (K == 1) {
              best = max(best, max(lo, hi));
            } else {
              put16(lo);
              put16(hi);
            }
            amax = __vmaxu2(amax, w[u].w[p] & 0x7FFF7FFFu);
          }
        }
      }
    }
    if constexpr (sizeof(KeyT) == 2) nan = (amax & 0xFFFFu) > nan_abs || (amax >> 16) > nan_abs;
    if (__builtin_expect(nan, 0)) { /* this lane's part again, every key by rtopk_key */
      best = 0;
      second = 0;
      bi = ~0u;
#pragma unroll 1
      for (int v = g; v < nvec; v += G) {
        rtopk_chunk_bits<KeyT, CW> c;
        rtopk_fetch_chunk<KeyT, CW>(row, v, c);
#pragma unroll
        for (int j = 0; j < CW; ++j) {
          const int i = v * CW + j;
          if (i >= len) break;
          const KeyT key = rtopk_key(c.elem(j), x);
          if constexpr (sizeof(KeyT) == 4) {
            if (key > best) {
              best = key;
              bi = (unsigned)i;
            }
          } else {
            put16(rtopk_word16(key, (unsigned)i));
          }
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
      for (int m = 1; m < G; m <<= 1) {
        const uint32_t o = __shfl_xor_sync(mask, best, m, G);
        if constexpr (K == 2) {
          const uint32_t o2 = __shfl_xor_sync(mask, second, m, G);
          second = max(min(best, o), max(second, o2));
        }
        best = max(best, o);
      }
    }
    if (g != 0) continue;
    const int64_t obase = r * K;
    if constexpr (K == 2) { /* the second slot: a row of one element has none */
      if (len < 2) {
        rtopk_emit_empty<KeyT>(P, obase, 1);
      } else {
        const rtopk_entry<uint16_t> e{second};
        bool knan;
        KeyT raw = rtopk_raw((KeyT)e.key(), x, &knan);
        if (knan) raw = src[e.pos()];
        rtopk_emit_raw<KeyT>(P, obase, 1, raw, e.pos());
      }
    }
    if (len == 0) {
      rtopk_emit_empty<KeyT>(P, obase, 0);
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
    bool knan;
    KeyT raw = rtopk_raw(key, x, &knan);
    if (knan) raw = src[idx]; /* NaN payloads survive */
    rtopk_emit_raw<KeyT>(P, obase, 0, raw, idx);
  }
}

#endif /* TOPK_CUDA_RTOPK_THREAD_ARGMAX_CUH */
