/*
 * rtopk_thread_rows.cuh: short rows with small k (MoE routing: 64..256 experts, k <= 8; rows
 * of <= 1024 with k <= 32), a few lanes per row. rtopk.cu launches it instead of the
 * warp-per-row search (rtopk_kernels.cuh) in exact mode for rows of at most
 * RTOPK_THREAD_MAX_N elements with k <= RTOPK_THREAD_MAX_K where enough rows fill the SMs
 * (thread_group).
 *
 * Why: a warp per row pays a fixed cost per row (min/max reductions, guess arithmetic,
 * warp scans; ncu: 767 warp instructions per row of 64 elements, k = 8), which a short row
 * cannot amortise. A lane that streams its part of the row and keeps the best K in registers
 * pays compare-exchanges per element and little per row beyond the stores; the SM needs many
 * lanes.
 *
 * The queue: K composite words, best first, each one 32-bit word, so that a compare-exchange
 * is an unsigned min and max (two VIMNMX). The larger word is the better element and, among
 * equal keys, the one with the lower index (the project's tie rule); 0 is below every element
 * (the empty slot).
 * - 16-bit keys: key << 16 | (2^16 - 1 - index), exact.
 * - 32-bit keys: the prefix word, (key without its low ib bits) | (2^ib - 1 - index), ib = 8,
 *   9 or 10 index bits for rows of <= 256, 512, 1024. It orders elements by their keys'
 *   prefixes only. The k best by prefix word are the k best elements unless the k-th slot's
 *   prefix p also belongs to an element left out (the queue tracks the best word it dropped):
 *   then the slots with prefixes above p stand, and a second pass over the row ranks the
 *   elements of prefix p by (low ib bits, index) (rtopk_low_word) for the rest. Sorted output
 *   whose kept slots share a prefix is put in order by full keys read back from the row.
 *   Values are read back from the row by index.
 *   Until session 23 these were 64-bit composites (key << 30 | ~index, compared as doubles):
 *   ~9 instructions a compare-exchange with the register moves that pairs need (SASS: 547
 *   IMAD.MOV, 449 SEL/FSEL for 118 DSETP in the K = 8 kernel), where a word takes two.
 * Chunks of K elements are sorted by a network and merged into the queue by a bitonic step,
 * with no branch; the queue is sorted at the end: TOPK_SORTED costs nothing where prefixes
 * differ. Queues of 1 and 2 (k <= 2, MoE top-1 and top-2 routing) read chunks of 4 (CW), sort
 * them and keep their best K: a 16-byte load a step, and per row a merge of K words a round
 * instead of 4 (session 26).
 *
 * Loads: a lane reads its chunks with 16-byte loads (8-byte for four 16-bit keys) where the
 * row start is aligned (scalar otherwise and for the tail), one chunk ahead of its
 * compare-exchanges: the next chunk of the row, or the first chunk of the lane's next row
 * (the grid is one wave of resident blocks that strides over the rows), so that the loads
 * overlap the networks. The lanes of a group read adjacent chunks; across a warp these are
 * 32 / G rows at the row stride.
 *
 * Safety: rows are clamped as in rtopk_kernels.cuh (topk_row, then to RTOPK_THREAD_MAX_N);
 * every output slot written is < k; every index read back is < the row's length.
 */
#ifndef TOPK_CUDA_RTOPK_THREAD_ROWS_CUH
#define TOPK_CUDA_RTOPK_THREAD_ROWS_CUH

#include "rtopk_kernels.cuh"

enum {
  RTOPK_THREAD_MAX_N = 1024, /* longest row of the thread path (<= 10 index bits in a prefix word) */
  RTOPK_THREAD_MAX_K = 32,  /* longest queue */
  RTOPK_THREAD_BLOCK = 128  /* threads per block (128 / G rows) */
};
/* Elements a chunk for a queue of K and es-byte keys: queues of 1 and 2 read chunks of 4 (one
 * 16-byte or 8-byte load), longer queues chunks of K, but 32-bit keys' queues of 32 chunks of 16:
 * queue, chunk and next chunk in 64 registers instead of 96 (with 96 the kernel spilled 104-694
 * bytes at its 128-register cap; session 34). */
__host__ __device__ constexpr int rtopk_thread_chunk(int K, int es) { return K < 4 ? 4 : es == 4 && K > 16 ? 16 : K; }
/* Whether the whole-row variant (the kernel's FULL) is built for es-byte keys and queues of K:
 * 32-bit keys, and 16-bit keys with queues of <= 4 (rtopk.cu thread_full says why). */
__host__ __device__ constexpr bool rtopk_thread_full_built(int es, int K) { return es == 4 || K <= 4; }

/* Blocks an SM that ptxas must allow (0: its own choice). Queues of 32 at 4 (<= 128 registers;
 * 3 blocks, <= 168, measured no better in session 34 with chunks of 32: rtopk.cu thread_group). Queues of 16 at 5 (<= 96 registers):
 * left to itself ptxas took 116-122 for the 32-bit kernels after session 24's cheaper words,
 * and 2^18 x 256 / 512, k = 16 ran 1.02x faster at 96 (H100, same run). 16-bit queues of 8 at 9
 * (<= 56 registers, as before session 24; 64-69 with the early loads; not measured apart).
 * A bound of 1 is not "no bound": it gave the f32 K = 8 kernels 80-86 registers, not 64.
 * docs/perf-notes.md v0.24. */
#define RTOPK_THREAD_MIN_BLOCKS(K, ES) ((K) >= 32 ? 4 : (K) >= 16 ? 5 : (ES) == 2 && (K) == 8 ? 9 : 0)

/* The composite words (see above). */
__device__ __forceinline__ uint32_t rtopk_word16(uint16_t key, unsigned idx) {
  return rtopk_entry<uint16_t>::make(key, idx).w; /* rtopk_kernels.cuh */
}
/* ib index bits (8, 9 or 10: rows of <= 256, 512, 1024); imax = 2^ib - 1 */
__device__ __forceinline__ uint32_t rtopk_prefix_word(uint32_t key, unsigned idx, int ib) {
  const uint32_t imax = (1u << ib) - 1u;
  return (key & ~imax) | (imax - idx);
}
__device__ __forceinline__ uint32_t rtopk_word_prefix(uint32_t w, int ib) { return w >> ib; }
__device__ __forceinline__ unsigned rtopk_word_index(uint32_t w, int ib) {
  const uint32_t imax = (1u << ib) - 1u;
  return imax - (w & imax);
}
/* The second pass: elements of prefix p ordered by (low ib bits, lower index); 0 for the rest. */
__device__ __forceinline__ uint32_t rtopk_low_word(uint32_t key, unsigned idx, uint32_t p, int ib) {
  const uint32_t imax = (1u << ib) - 1u;
  return (key >> ib) == p ? (1u << (2 * ib)) | ((key & imax) << ib) | (imax - idx) : 0u;
}

/* Compare-exchange: the larger word to a. */
__device__ __forceinline__ void rtopk_cx(uint32_t& a, uint32_t& b) {
  const uint32_t hi = max(a, b);
  b = min(a, b);
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

/* Sort K words best first. */
template <int K>
__device__ __forceinline__ void rtopk_sort_desc(uint32_t (&c)[K]) {
  constexpr rtopk_batcher<K> net{};
#pragma unroll
  for (int t = 0; t < net.n; ++t) rtopk_cx(c[net.a[t]], c[net.b[t]]);
}

/* q (K words) and o (C <= K words) sorted best first: q becomes the best K of both, sorted.
 * q[s] = max(q[s], o[K-1-s]) (o read as padded with empty words to K, so the first K - C slots
 * keep their word) keeps the best K as a bitonic sequence (one list descending against the
 * other ascending), and a half-cleaner network sorts it. TRACK: *dropped becomes the best word
 * left out, if better (the words left out are the minima of that first step). */
template <int K, int C, bool TRACK>
__device__ __forceinline__ void rtopk_keep_best(uint32_t (&q)[K], const uint32_t (&o)[C], uint32_t& dropped) {
  static_assert(C <= K, "a chunk no longer than the queue");
#pragma unroll
  for (int s = K - C; s < K; ++s) {
    if (TRACK) dropped = max(dropped, min(q[s], o[K - 1 - s]));
    q[s] = max(q[s], o[K - 1 - s]);
  }
#pragma unroll
  for (int j = K / 2; j >= 1; j >>= 1)
#pragma unroll
    for (int s = 0; s < K; ++s)
      if ((s & j) == 0) rtopk_cx(q[s], q[s + j]);
}

/* Merge the sorted queues of the G lanes of a group (lanes g ^ m, m < G) so that every lane
 * holds the best K of the group's elements, best first (and, TRACK, the best word dropped
 * anywhere in the group). Both partners of a round end with the same queue: the words are
 * distinct (or 0, the empty slot). */
template <int K, int G, bool TRACK>
__device__ __forceinline__ void rtopk_group_merge(uint32_t (&q)[K], uint32_t& dropped, unsigned mask) {
#pragma unroll
  for (int m = 1; m < G; m <<= 1) {
    uint32_t o[K];
#pragma unroll
    for (int s = 0; s < K; ++s) o[s] = __shfl_xor_sync(mask, q[s], m, G);
    if (TRACK) dropped = max(dropped, __shfl_xor_sync(mask, dropped, m, G));
    rtopk_keep_best<K, K, TRACK>(q, o, dropped);
  }
}

/* A row as the lanes of its group see it. */
template <typename KeyT>
struct rtopk_lane_row {
  const KeyT* src;
  int len;    /* clamped to RTOPK_THREAD_MAX_N */
  int chunks; /* ceil(len / K) */
  bool vec_ok;
};

template <typename KeyT, int K>
__device__ __forceinline__ rtopk_lane_row<KeyT> rtopk_lane_row_at(const rtopk_params& P, int64_t r) {
  const topk_row_span span = topk_row(P.offsets, P.n, P.ld, r); /* common/rows.cuh */
  rtopk_lane_row<KeyT> w;
  w.len = (int)(span.len < RTOPK_THREAD_MAX_N ? span.len : RTOPK_THREAD_MAX_N);
  w.src = (const KeyT*)P.in + span.start;
  constexpr int align = K * (int)sizeof(KeyT) < 16 ? K * (int)sizeof(KeyT) : 16;
  w.vec_ok = ((uintptr_t)w.src % align) == 0;
  w.chunks = (w.len + K - 1) / K;
  return w;
}

/* A chunk's raw bits as loaded: K keys in 32-bit words (two 16-bit keys a word). */
template <typename KeyT, int K>
struct rtopk_chunk_bits {
  uint32_t w[K * (int)sizeof(KeyT) / 4];
  __device__ __forceinline__ KeyT elem(int j) const {
    if constexpr (sizeof(KeyT) == 4) return (KeyT)w[j];
    else return (KeyT)(w[j >> 1] >> (16 * (j & 1)));
  }
};

/* Issues the loads of chunk ci ([ci K, ci K + K) of the row; 0 past its end): 16-byte loads
 * (one 8-byte load for four 16-bit keys) where the row start allows, else one by one. FULL:
 * the caller knows the chunk is whole and aligned (the kernel's FULL). */
template <typename KeyT, int K, bool FULL = false>
__device__ __forceinline__ void rtopk_fetch_chunk(const rtopk_lane_row<KeyT>& row, int ci,
                                                  rtopk_chunk_bits<KeyT, K>& b) {
  constexpr int BYTES = K * (int)sizeof(KeyT); /* 8 .. 64 */
  const int base = ci * K;
  if (FULL || (row.vec_ok && base + K <= row.len)) {
    if constexpr (BYTES >= 16) {
#pragma unroll
      for (int m = 0; m < BYTES / 16; ++m) {
        const uint4 t = reinterpret_cast<const uint4*>(row.src + base)[m];
        b.w[4 * m] = t.x;
        b.w[4 * m + 1] = t.y;
        b.w[4 * m + 2] = t.z;
        b.w[4 * m + 3] = t.w;
      }
    } else {
      const uint2 t = *reinterpret_cast<const uint2*>(row.src + base);
      b.w[0] = t.x;
      b.w[1] = t.y;
    }
  } else {
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const uint32_t e = base + j < row.len ? (uint32_t)row.src[base + j] : 0u;
      if constexpr (sizeof(KeyT) == 4) b.w[j] = e;
      else if (j & 1) b.w[j >> 1] |= e << 16;
      else b.w[j >> 1] = e;
    }
  }
}

/* One step of a lane: the words of chunk ci (mk builds all K from the raw bits; those past the
 * row's end become 0, the empty word), while buf takes the lane's next chunk (chunk ci + G, or,
 * on the row's last step, the first chunk of `next`); then the words are sorted and taken as
 * the queue (FIRST) or merged into it.
 * When the loads are issued: 16-bit keys copy the chunk (K / 2 registers) and load before the
 * words are built, so that the loads overlap the whole step; 32-bit keys load once the words
 * are built, into buf's own registers, and overlap the network and the merge. Copying K
 * registers a step (session 23, with K more for the queue) or two buffers taking turns (more
 * registers) measured slower for 32-bit keys on the H100; loading late measured slower for
 * 16-bit keys on rows of 64, where a step is short (session 24, docs/perf-notes.md v0.24). */
template <int K, int CW, int G, bool TRACK, bool FIRST, bool FULL, typename KeyT, typename Make>
__device__ __forceinline__ void rtopk_lane_step(const rtopk_lane_row<KeyT>& row, rtopk_chunk_bits<KeyT, CW>& buf,
                                                bool last, bool has_next, const rtopk_lane_row<KeyT>& next, int g,
                                                int ci, Make mk, uint32_t (&q)[K], uint32_t& dropped) {
  constexpr bool EARLY = sizeof(KeyT) == 2;
  const auto fetch_next = [&] {
    if (!last) {
      if (FULL || ci + G < row.chunks) rtopk_fetch_chunk<KeyT, CW, FULL>(row, ci + G, buf);
    } else if (has_next && (FULL || g < next.chunks)) {
      rtopk_fetch_chunk<KeyT, CW, FULL>(next, g, buf);
    }
  };
  uint32_t c[CW];
  const bool have = FULL || ci < row.chunks;
  const auto words = [&](const rtopk_chunk_bits<KeyT, CW>& bits) {
    if (have) {
      const int base = ci * CW;
      mk(bits, base, c);
      if (!FULL && base + CW > row.len) {
#pragma unroll
        for (int j = 0; j < CW; ++j) c[j] = base + j < row.len ? c[j] : 0u;
      }
    }
  };
  if constexpr (EARLY) {
    const rtopk_chunk_bits<KeyT, CW> cur = buf;
    fetch_next();
    words(cur);
  } else {
    words(buf);
    fetch_next();
  }
  if (have) {
    rtopk_sort_desc<CW>(c);
    if (FIRST) {
#pragma unroll
      for (int j = 0; j < K; ++j) q[j] = j < CW ? c[j < CW ? j : 0] : 0u; /* a chunk shorter than the queue: empty words */
    } else if constexpr (CW >= K) {
      /* queues shorter than a chunk (K < CW) take its best K; the rest is dropped */
      uint32_t (&best)[K] = reinterpret_cast<uint32_t(&)[K]>(c);
      rtopk_keep_best<K, K, TRACK>(q, best, dropped);
    } else {
      rtopk_keep_best<K, CW, TRACK>(q, c, dropped);
    }
    if constexpr (TRACK && CW > K) dropped = max(dropped, c[K]);
  } else if (FIRST) {
#pragma unroll
    for (int j = 0; j < K; ++j) q[j] = 0;
  }
}

/* One lane's part of a row pass: the words of chunks g, g + G, ... of the row, best K kept in q
 * (all 0 for a lane without a chunk). buf holds the lane's first chunk (the caller fetched it)
 * and ends holding its first chunk of `next` (when has_next). Every lane of a group takes the
 * same number of steps. The first step is peeled: with a branch on it inside the loop, the two
 * ways q was built met in copies of all K words every step (SASS, session 24). */
template <int K, int CW, int G, bool TRACK, bool FULL, typename KeyT, typename Make>
__device__ __forceinline__ void rtopk_lane_pass(const rtopk_lane_row<KeyT>& row, rtopk_chunk_bits<KeyT, CW>& buf,
                                                bool has_next, const rtopk_lane_row<KeyT>& next, int g, Make mk,
                                                uint32_t (&q)[K], uint32_t& dropped) {
  const int steps = row.chunks > G ? (row.chunks + G - 1) / G : 1;
  rtopk_lane_step<K, CW, G, TRACK, true, FULL>(row, buf, steps == 1, has_next, next, g, g, mk, q, dropped);
#pragma unroll 1
  for (int s = 1; s < steps; ++s)
    rtopk_lane_step<K, CW, G, TRACK, false, FULL>(row, buf, s + 1 == steps, has_next, next, g, s * G + g, mk, q, dropped);
}

/* Word builders for rtopk_lane_pass: all K words of a chunk at once. */
template <typename KeyT, int K, typename Word>
struct rtopk_each_word { /* word(key bits, index), element by element */
  Word word;
  __device__ __forceinline__ void operator()(const rtopk_chunk_bits<KeyT, K>& cur, int base, uint32_t (&c)[K]) const {
#pragma unroll
    for (int j = 0; j < K; ++j) c[j] = word(cur.elem(j), (unsigned)(base + j));
  }
};
template <typename KeyT, int K, typename Word>
__device__ __forceinline__ rtopk_each_word<KeyT, K, Word> rtopk_words_of(Word w) {
  return rtopk_each_word<KeyT, K, Word>{w};
}

/* f32 bits to their largest-first key, kl = b ^ (sign-fill | sign); right for every value but
 * NaN, which callers find by a float compare and fix apart (shared with the argmax kernel). */
__device__ __forceinline__ uint32_t rtopk_f32_kl(uint32_t b) { return b ^ ((uint32_t)((int32_t)b >> 31) | 0x80000000u); }

/* F32 prefix words, the same words as rtopk_prefix_word(rtopk_key(b), idx, ib) in ~5
 * instructions an element instead of 8 (SASS, session 24). With kl the largest-first key
 * (b ^ (sign-fill | sign)), M = ~imax and C_j = (flip & M) | (imax - base - j):
 * word = (kl & M) ^ C_j, since C_j's low bits fill the bits that M clears and its high bits
 * apply the flip. NaN (kl = all ones for every NaN) is found for the chunk as a whole by one
 * FSETP an element and fixed on a branch that finite chunks skip. */
template <int K>
struct rtopk_f32_prefix_words {
  uint32_t M, FM, imax;
  __device__ __forceinline__ rtopk_f32_prefix_words(int ib, uint32_t flip)
      : M(~((1u << ib) - 1u)), FM(flip & ~((1u << ib) - 1u)), imax((1u << ib) - 1u) {}
  __device__ __forceinline__ void operator()(const rtopk_chunk_bits<uint32_t, K>& cur, int base,
                                             uint32_t (&c)[K]) const {
    const uint32_t C0 = FM | (imax - (uint32_t)base);
    bool nan = false;
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const uint32_t b = cur.w[j];
      const uint32_t kl = rtopk_f32_kl(b);
      const float f = __uint_as_float(b);
      nan |= f != f;
      c[j] = (kl & M) ^ (C0 - (uint32_t)j);
    }
    if (__builtin_expect(nan, 0)) {
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const float f = __uint_as_float(cur.w[j]);
        if (f != f) c[j] = M ^ (C0 - (uint32_t)j);
      }
    }
  }
};

/* F16/BF16 words, the same as rtopk_word16(rtopk_key(e), idx) in ~6 instructions an element
 * instead of ~11 (SASS, session 24): as rtopk_f32_prefix_words with ib = 16 (the whole key is
 * the prefix), on each key moved to the top half of a 32-bit register (the odd key of a pair
 * is there already). NaN is found for the chunk as a whole, two keys at a time: (h & 0x7FFF) +
 * (0x7FFF - nan_abs) carries into bit 15 of its half exactly when h is NaN, and never across
 * halves. */
template <int K>
struct rtopk_f16x_words {
  uint32_t FM, nan_add2, flip;
  int bf16;
  __device__ __forceinline__ rtopk_f16x_words(const rtopk_xf<uint16_t>& x)
      : FM((uint32_t)x.flip << 16), nan_add2(0x7FFFu - x.nan_abs), flip(x.flip), bf16(x.bf16) {
    nan_add2 |= nan_add2 << 16;
  }
  __device__ __forceinline__ void operator()(const rtopk_chunk_bits<uint16_t, K>& cur, int base,
                                             uint32_t (&c)[K]) const {
    const uint32_t C0 = FM | (0xFFFFu - (uint32_t)base);
    uint32_t nan = 0;
#pragma unroll
    for (int p = 0; p < K / 2; ++p) {
      const uint32_t w = cur.w[p];
      nan |= (w & 0x7FFF7FFFu) + nan_add2;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t b = h ? w : w << 16;
        const uint32_t kl = b ^ ((uint32_t)((int32_t)b >> 31) | 0x80000000u);
        c[2 * p + h] = (kl & 0xFFFF0000u) ^ (C0 - (uint32_t)(2 * p + h));
      }
    }
    if (__builtin_expect((nan & 0x80008000u) != 0, 0)) {
      rtopk_xf<uint16_t> x;
      x.sign = 0x8000u;
      x.is_float = 1;
      x.bf16 = bf16;
      x.nan_abs = (uint16_t)(0x7FFFu - (nan_add2 & 0xFFFFu));
      x.int_xor = 0;
      x.flip = (uint16_t)flip;
#pragma unroll
      for (int j = 0; j < K; ++j) c[j] = rtopk_word16(rtopk_key(cur.elem(j), x), (unsigned)(base + j));
    }
  }
};

/*
 * grid-stride over rows, G lanes per row (a group: 1, 2, 4 or, for K <= 2, 8 adjacent lanes);
 * blockDim.x = RTOPK_THREAD_BLOCK; rtopk.cu launches one wave of resident blocks (queues of >= 8:
 * a block for every B / G rows). The row is cut into chunks of CW = rtopk_thread_chunk(K)
 * elements (max(K, 4); 16 for 32-bit queues of 32); lane g of a group takes chunks g, g + G, ...,
 * sorts each (rtopk_sort_desc) and keeps the best K of its queue and the chunk (rtopk_keep_best): for K =
 * 8, 19 + 12 compare-exchanges and 8 maxima per 8 elements, where inserting each element down
 * the queue took 64. The group merges its queues (rtopk_group_merge); every lane stages the
 * merged queue in its own column of shared memory, and lane g writes the slots s with s % G ==
 * g from there (a loop, not K unrolled gathers and stores, which held ~100 registers at G = 1).
 * More lanes per row shorten each lane's chain and fill the SM where rows are few
 * (thread_group in rtopk.cu picks G). K >= P.k (a queue bucket: 1, 2, 4, 8 or 16); KIND as
 * rtopk_kernel (the key transform only). FULL: every row of the batch is P.n long, P.n is a
 * multiple of CW x G and rows start 16-byte aligned (rtopk.cu thread_full), so every lane takes
 * the same number of whole chunks with vector loads, and the steps test none of it.
 */
template <typename KeyT, int K, int G, int KIND, bool FULL>
__global__ void __launch_bounds__(RTOPK_THREAD_BLOCK, RTOPK_THREAD_MIN_BLOCKS(K, sizeof(KeyT))) rtopk_thread_kernel(const rtopk_params P) {
  constexpr int B = RTOPK_THREAD_BLOCK;
  constexpr int CW = rtopk_thread_chunk(K, (int)sizeof(KeyT));
  __shared__ uint32_t s_q[K * B];                          /* word s of thread t: s_q[s * B + t] */
  __shared__ uint32_t s_fk[sizeof(KeyT) == 4 ? K * B : 1]; /* full keys of tied slots, likewise */
  uint32_t* const my_q = s_q + threadIdx.x;
  const rtopk_xf<KeyT> x = rtopk_make_xf<KeyT, KIND>(P.dtype, P.smallest);
  const int64_t rows_per_pass = (int64_t)gridDim.x * (B / G);
  const int g = (int)(threadIdx.x % G);
  /* the group's lanes within the warp (all of them take the same branches: same row) */
  const unsigned mask = ((1u << G) - 1u) << ((threadIdx.x % 32) & ~(unsigned)(G - 1));
  const int k = (int)P.k; /* <= K */
  int64_t r = (int64_t)blockIdx.x * (B / G) + threadIdx.x / G;
  if (r >= P.batch) return;
  rtopk_lane_row<KeyT> row = rtopk_lane_row_at<KeyT, CW>(P, r);
  rtopk_chunk_bits<KeyT, CW> buf;
  if (FULL || g < row.chunks) rtopk_fetch_chunk<KeyT, CW, FULL>(row, g, buf);
  for (;;) {
    const int64_t rn = r + rows_per_pass;
    const bool has_next = rn < P.batch;
    const rtopk_lane_row<KeyT> next = has_next ? rtopk_lane_row_at<KeyT, CW>(P, rn) : row;
    const int64_t obase = r * P.k;
    const int kk = k < row.len ? k : row.len; /* slots that get an element */
    uint32_t q[K], dropped = 0;
    if constexpr (sizeof(KeyT) == 2) {
      static_assert(KIND == RTOPK_KIND_F16X, "16-bit keys are F16 or BF16 (rtopk.cu launch_thread)");
      rtopk_lane_pass<K, CW, G, false, FULL>(row, buf, has_next, next, g, rtopk_f16x_words<CW>(x), q, dropped);
      rtopk_group_merge<K, G, false>(q, dropped, mask);
#pragma unroll
      for (int s = 0; s < K; ++s) my_q[s * B] = q[s];
#pragma unroll 1
      for (int s = g; s < kk; s += G) {
        const rtopk_entry<uint16_t> e{my_q[s * B]};
        const unsigned idx = e.pos();
        bool nan;
        KeyT raw = rtopk_raw(e.key(), x, &nan);
        if (nan) raw = row.src[idx]; /* NaN payloads survive */
        rtopk_emit_raw<KeyT>(P, obase, s, raw, idx);
      }
    } else {
      const int ib = P.n <= 256 ? 8 : P.n <= 512 ? 9 : 10; /* index bits (P.n <= RTOPK_THREAD_MAX_N) */
      if constexpr (KIND == RTOPK_KIND_F32) {
        rtopk_lane_pass<K, CW, G, true, FULL>(row, buf, has_next, next, g, rtopk_f32_prefix_words<CW>(ib, x.flip),
                                              q, dropped);
      } else {
        rtopk_lane_pass<K, CW, G, true, FULL>(
            row, buf, has_next, next, g,
            rtopk_words_of<KeyT, CW>([&](KeyT e, unsigned i) { return rtopk_prefix_word(rtopk_key(e, x), i, ib); }), q,
            dropped);
      }
      rtopk_group_merge<K, G, true>(q, dropped, mask);
      /* The k-th slot's prefix p, and the best word outside the kk slots (q[kk], else the best
       * dropped): if it shares p, the prefixes do not decide the slots of prefix p. */
      /* q is sorted, and every dropped word is below q[K - 1]: last = q[kk - 1] is the least of
       * the first kk, after the greatest of the rest and dropped. As minima and maxima, since
       * the compiler made the plain q[kk - 1] an indexed load from a copy of q in local memory. */
      uint32_t last = ~0u, after = dropped;
#pragma unroll
      for (int s = 0; s < K; ++s) {
        if (s < kk) last = min(last, q[s]);
        else after = max(after, q[s]);
      }
      const uint32_t p = rtopk_word_prefix(last, ib);
      const bool undecided = kk < row.len && rtopk_word_prefix(after, ib) == p;
      int a = kk; /* slots decided by prefix */
      if (undecided) {
        a = 0;
#pragma unroll
        for (int s = 0; s < K; ++s) a += s < kk && rtopk_word_prefix(q[s], ib) > p;
      }
      bool tied = false; /* sorted output, and two of those a slots share a prefix */
      if (P.sorted) {
#pragma unroll
        for (int s = 0; s + 1 < K; ++s)
          tied |= s + 1 < a && rtopk_word_prefix(q[s], ib) == rtopk_word_prefix(q[s + 1], ib);
      }
#pragma unroll
      for (int s = 0; s < K; ++s) my_q[s * B] = q[s];
      if (undecided) {
        /* Slots a..kk-1: the best elements of prefix p by (low bits, index), in order. The pass
         * reads the row again (from cache) and fetches the next row's first chunk anew. */
        if (FULL || g < row.chunks) rtopk_fetch_chunk<KeyT, CW, FULL>(row, g, buf);
        rtopk_lane_pass<K, CW, G, false, FULL>(
            row, buf, has_next, next, g,
            rtopk_words_of<KeyT, CW>([&](KeyT e, unsigned i) { return rtopk_low_word(rtopk_key(e, x), i, p, ib); }), q,
            dropped);
        rtopk_group_merge<K, G, false>(q, dropped, mask);
#pragma unroll
        for (int s = 0; s < K; ++s)
          if (a + s < kk) my_q[(a + s) * B] = q[s];
      }
      if (tied) {
        /* Sorted output where slots below a share a prefix: order those by full key (read back
         * from the row), then index. Equal full keys share a prefix, and the queue lists equal
         * prefixes in index order, so among equal keys the earlier slot wins. */
#pragma unroll 1
        for (int t = 0; t < a; ++t)
          s_fk[t * B + threadIdx.x] = rtopk_key(row.src[rtopk_word_index(my_q[t * B], ib)], x);
      }
#pragma unroll 1
      for (int s = g; s < kk; s += G) {
        const unsigned idx = rtopk_word_index(my_q[s * B], ib);
        int slot = s;
        if (tied && s < a) {
          const uint32_t ks = s_fk[s * B + threadIdx.x];
          slot = 0;
#pragma unroll 1
          for (int t = 0; t < a; ++t) {
            const uint32_t kt = s_fk[t * B + threadIdx.x];
            slot += kt > ks || (kt == ks && t < s);
          }
        }
        rtopk_emit_raw<KeyT>(P, obase, slot, row.src[idx], idx);
      }
    }
    /* rows shorter than k: the empty slots get the worst value and index -1 */
    for (int s = kk + g; s < k; s += G) rtopk_emit_empty<KeyT>(P, obase, s);
    if (!has_next) break;
    r = rn;
    row = next;
  }
}

#endif /* TOPK_CUDA_RTOPK_THREAD_ROWS_CUH */
