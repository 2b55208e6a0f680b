/*
 * air_rows_kernels.cuh: AIR Top-K's ROWS path, one thread block per row for many rows
 * too long to stage in shared memory (issue 4 item 4; paper 003 sec. 3 with the
 * multi-block machinery taken out). The other paths are in air_radix_kernels.cuh;
 * air_radix.cu chooses among them.
 *
 * Why a path of its own: with batch >= SM count every SM already has whole rows to
 * work on, so splitting a row over blocks (MULTI, FUSED) only adds launches, global
 * histograms and atomics, and a cluster per row (CLUSTER) pays its per-row latency
 * chain (barriers, DSMEM) once per row with one block per SM. Here a block streams its
 * row from global memory with 16-byte loads (several blocks per SM keep enough loads
 * in flight), keeps the histogram and a candidate buffer in shared memory, and needs
 * no workspace and no second launch (sorted output: air_segsort_kernel, or CUB for k > 4096 or
 * 64-bit sort keys, sorts the k results after it).
 *
 * The selection runs on the composite key (rank key, ~index): key digits first, then,
 * only when more candidates tie at the k-th key than are needed, digits of ~index, so
 * the lowest indices win (the deterministic contract) and the loop always ends (the
 * composite keys of a row are distinct). Per pass, with `cur` the known prefix and
 * `prev` the prefix before the last pass:
 *   - an element matching cur is a candidate: its next digit is counted in the
 *     shared histogram (and, in the first pass whose candidates fit the buffer, the
 *     element is appended to the buffer: rank key and index);
 *   - an element beating cur but matching prev became a result in the last pass: it
 *     gets an output slot now (warp-aggregated atomic counter), so every result is
 *     written exactly once, by the global pass after the pass that decided it.
 * Rows of at least twice the one-read start's buffer begin with it (air_rows_stream, below):
 * the row is read once into the buffer by a running threshold, and every pass after it reads
 * only the buffer. Otherwise, or when it gives up:
 * passes read global memory until one buffers (candidates <= cap, known exactly from
 * the previous histogram); later passes read only the buffer and write nothing, and
 * the last step writes every buffered element whose prefix is >= the final prefix
 * (early stop, sec. 3.3: the loop ends as soon as the candidates left equal the
 * results still needed). A row whose candidates never fit (all-equal rows longer than
 * cap) ends with one more global pass instead.
 * First digit: first_bits wide (11 by default, up to 13: a wider first digit leaves
 * fewer candidates for U(0,1]-like rows, whose first 11 bits put 1/8 of the row in the
 * top bin); then 11-bit digits, the last taking the rest. The AND and OR of the keys of
 * pass 0 give the bits the whole row shares; the second pass starts below them.
 *
 * Dynamic shared memory: 2^max(first_bits, 11) histogram counters, then cap rank keys,
 * then cap indices (air_rows_smem_bytes; the host sizes the launch with it).
 * Rows must have fewer than 2^32 elements (counts and indices are 32-bit).
 */
#ifndef TOPK_CUDA_AIR_ROWS_KERNELS_CUH
#define TOPK_CUDA_AIR_ROWS_KERNELS_CUH

#include "air_radix_kernels.cuh"

enum {
  AIR_ROWS_DIGIT_BITS = 11,
  AIR_ROWS_MIN_FIRST_BITS = 8,
  AIR_ROWS_MAX_FIRST_BITS = 13,
  AIR_ROWS_UNROLL = 4 /* 16-byte loads in flight per thread */
};

__host__ __device__ __forceinline__ int air_rows_hist_bins(int first_bits) {
  return 1 << (first_bits > AIR_ROWS_DIGIT_BITS ? first_bits : AIR_ROWS_DIGIT_BITS);
}
__host__ __device__ __forceinline__ int64_t air_rows_key_bytes(int64_t cap, int64_t key_bytes) {
  return (cap * key_bytes + 15) & ~(int64_t)15;
}
__host__ __device__ __forceinline__ int64_t air_rows_smem_bytes(int first_bits, int64_t cap, int64_t key_bytes) {
  return (int64_t)air_rows_hist_bins(first_bits) * 4 + air_rows_key_bytes(cap, key_bytes) + cap * 4;
}

/*
 * Claims consecutive slots of *ctr for the calling lanes that want one (one atomic per
 * warp); returns the lane's slot (meaningless where want is false). The lanes that
 * call it together need not be the whole warp.
 */
__device__ __forceinline__ unsigned air_rows_claim(unsigned* ctr, bool want) {
  const unsigned active = __activemask();
  const unsigned m = __ballot_sync(active, want);
  const int lane = threadIdx.x & 31;
  const int leader = m ? __ffs(m) - 1 : 0;
  unsigned base = 0;
  if (m && lane == leader) base = atomicAdd(ctr, (unsigned)__popc(m));
  base = __shfl_sync(active, base, leader);
  return base + (unsigned)__popc(m & ((1u << lane) - 1u));
}

/* Elements before the row's first 16-byte boundary: read one by one (all of them when the
 * elements themselves are misaligned, or the row ends first). */
template <typename RawT>
__device__ __forceinline__ unsigned air_rows_head(const RawT* row, unsigned len) {
  const uintptr_t a = (uintptr_t)row;
  const unsigned head = (unsigned)(((16u - (unsigned)(a & 15u)) & 15u) / sizeof(RawT));
  return (a % sizeof(RawT)) != 0 || head > len ? len : head;
}

/* The vector filter of scans that offer every element. */
struct air_rows_all {
  __device__ __forceinline__ bool may_pass_any(const uint4&) const { return true; }
};

/* Calls f(raw, index) for the elements of this thread's U 16-byte vectors v[u] = vector
 * j0 + u * AIR_THREADS + threadIdx.x (those below nvec) of a row whose vectors start at element
 * head, skipping the vectors where pre.may_pass_any is false. */
template <typename RawT, int U, typename F, typename Pre>
__device__ __forceinline__ void air_rows_offer_vecs(const uint4 (&v)[U], unsigned j0, unsigned nvec, unsigned head,
                                                    F& f, const Pre& pre) {
  constexpr int V = 16 / (int)sizeof(RawT);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const unsigned j = j0 + (unsigned)(u * AIR_THREADS) + threadIdx.x;
    if (j < nvec && pre.may_pass_any(v[u]))
      topk_vec_elems<RawT>(v[u], [&](RawT e, int t) { f(e, head + j * (unsigned)V + (unsigned)t); });
  }
}

/* The 16-bit element at bit p of a mask in pass_bits' layout over the U <= 4 vectors v (vector
 * p / 4 % 4, word p % 4, half p / 16), by selects rather than an indexed (local-memory) array. */
template <int U>
__device__ __forceinline__ uint16_t air_rows_elem16_at(const uint4 (&v)[U], int p) {
  static_assert(U == 1 || U == 2 || U == 4, "pass_bits' layout holds four vectors");
  const bool odd = (p & 1) != 0, hi_pair = (p & 2) != 0;
  uint4 q = v[0]; /* a select tree on the vector bits, then the word bits: no branches */
  if constexpr (U == 2) q = (p & 4) ? v[1] : v[0];
  if constexpr (U == 4) {
    const uint4 a = (p & 4) ? v[1] : v[0], b = (p & 4) ? v[3] : v[2];
    q = (p & 8) ? b : a;
  }
  const unsigned lo = hi_pair ? q.z : q.x, hi = hi_pair ? q.w : q.y;
  return (uint16_t)((odd ? hi : lo) >> (p & 16));
}

/*
 * Calls f(raw, index) for every element of the row, each once, by the block's threads:
 * scalar up to the first 16-byte boundary, then AIR_ROWS_UNROLL 16-byte loads per
 * thread in flight, then the scalar tail.
 */
template <typename RawT, typename F>
__device__ __forceinline__ void air_rows_scan(const RawT* row, unsigned len, F& f) {
  constexpr int V = 16 / (int)sizeof(RawT);
  const unsigned head = air_rows_head(row, len);
  for (unsigned i = threadIdx.x; i < head; i += AIR_THREADS) f(row[i], i);
  const unsigned nvec = (len - head) / V;
  const uint4* vp = (const uint4*)(row + head);
  for (unsigned j0 = 0; j0 < nvec; j0 += AIR_THREADS * AIR_ROWS_UNROLL) {
    uint4 v[AIR_ROWS_UNROLL];
#pragma unroll
    for (int u = 0; u < AIR_ROWS_UNROLL; ++u) {
      const unsigned j = j0 + (unsigned)(u * AIR_THREADS) + threadIdx.x;
      if (j < nvec) v[u] = vp[j];
    }
    air_rows_offer_vecs<RawT, AIR_ROWS_UNROLL>(v, j0, nvec, head, f, air_rows_all());
  }
  for (unsigned i = head + nvec * (unsigned)V + threadIdx.x; i < len; i += AIR_THREADS) f(row[i], i);
}

/* The same for the rare paths (index digits, all-equal rows): one element per thread per step, small code. */
template <typename RawT, typename F>
__device__ __forceinline__ void air_rows_scan_plain(const RawT* row, unsigned len, F& f) {
  for (unsigned i = threadIdx.x; i < len; i += AIR_THREADS) f(row[i], i);
}

/* The composite prefix known so far: lk bits of the rank key (pk), then li bits of ~index (pi). */
struct air_rows_level {
  int lk, li;
  unsigned long long pk, pi;
};

template <typename KeyT, int KB>
__device__ __forceinline__ int air_rows_cmp(KeyT key, unsigned idx, const air_rows_level& L, int ib,
                                            unsigned long long imask) {
  return air_cmp<KeyT, KB, unsigned>(key, idx, L.lk, L.pk, L.li, L.pi, ib, imask);
}

template <int KB> struct air_rows_word { typedef unsigned type; };
template <> struct air_rows_word<64> { typedef unsigned long long type; };

/* The digit below the known prefix: of the key while key bits are left, else of ~index. */
template <typename KeyT>
__device__ __forceinline__ int air_rows_digit(KeyT key, unsigned idx, bool by_key, int shift, int nbins,
                                              unsigned long long imask) {
  return by_key ? (int)((unsigned long long)(key >> shift) & (unsigned long long)(nbins - 1))
                : (int)((((~(unsigned long long)idx) & imask) >> shift) & (unsigned long long)(nbins - 1));
}

/*
 * The one-read start (air_rows_stream): the row is streamed once and every element whose
 * rank key is >= a running threshold thr goes to the candidate buffer. thr starts at the
 * smallest key; whenever the buffer could not take another round of loads, the block
 * compacts it (air_rows_compact): thr rises to a key prefix at or below the k-th best key
 * seen so far and the buffer keeps only the keys >= thr. Invariant: the buffer holds every
 * element seen with key >= thr, and at least k of them, because thr never exceeds the k-th
 * best key seen. The k-th best key of the row is >= thr at the end, so the buffer holds the
 * row's k best (with every tie at the k-th key) and the passes after it read only the
 * buffer: one read of the row instead of two or more. For random orders few elements pass
 * once thr is near the k-th key (about k ln(n / cap) after the first compaction).
 * It gives up (the caller then runs the passes over global memory from the start) when a
 * compaction cannot free a round's room (more keys tie at thr than the buffer holds, e.g.
 * all-equal rows) or after AIR_ROWS_STREAM_MAX_COMPACTIONS compactions (rows in ascending
 * order, where every element passes): the cost of such rows is bounded by that many
 * compactions plus the multi-pass path.
 *
 * Speculative thresholds (spec): keeping k entries after a compaction is what the invariant
 * needs but not what a row in random order needs. After s of the row's n elements, about
 * k s / n of the row's k best have been seen, so thr at the k_s-th best key seen, k_s =
 * k s / n plus four standard deviations and 8 (air_rows_spec_keep), is below the row's k-th
 * best key but for a vanishing fraction of random rows, and far fewer elements pass after it
 * (about 1.3 k in all instead of k ln(n / cap): the compactions, the claims and the exact
 * tests go with them). Such a thr is no longer proven, so the stream checks at the end: the
 * buffer holds every element of the row with key >= thr, so when it holds at least k of them
 * the row's k-th best key is >= thr and the buffer is complete as before; when it holds fewer
 * (rows whose best elements come early, e.g. sorted in the wanted order) it returns
 * AIR_ROWS_STREAM_TOO_FEW and the caller streams the row again without speculation.
 */
/* AIR_ROWS_COMPACT_E: buffer entries per thread per compaction round (8 spilled 48-64 bytes at 80
 * registers once the speculative threshold's values were live; 4 spills nothing) */
enum { AIR_ROWS_STREAM_MAX_COMPACTIONS = 8, AIR_ROWS_COMPACT_E = 4 };
/* The speculative stream's sampled start: rows of at least this many rounds (below). */
enum { AIR_ROWS_SAMPLE_MIN_ROUNDS = 8 };
/* What air_rows_stream returns */
enum { AIR_ROWS_STREAM_GAVE_UP = 0, AIR_ROWS_STREAM_OK = 1, AIR_ROWS_STREAM_TOO_FEW = 2 };
/* The kernel's `stream` argument: no one-read start, the exact one, or the speculative one first */
enum { AIR_ROWS_STREAM_OFF = 0, AIR_ROWS_STREAM_EXACT = 1, AIR_ROWS_STREAM_SPEC = 2 };
/* Further bits of the kernel's `stream` argument: the mode above in the low two, SPEC without the
 * sampled start, and the sample's keep forced (tests: a thr too high) from bit 8 up, 0: not forced */
enum { AIR_ROWS_STREAM_MODE = 3, AIR_ROWS_STREAM_NO_SAMPLE = 4, AIR_ROWS_STREAM_KEEP_SHIFT = 8 };

/* Entries a speculative compaction keeps after `seen` of the row's len elements (above): the
 * expected number of the row's k best among them, mu = k seen / len, plus 4 sqrt(mu) + 8; at
 * most k. (Their number is hypergeometric with variance below mu: 4 standard deviations put the
 * chance that a random row needs the second stream at ~3e-5 or less, and the +8 keeps it small
 * where mu is small.) */
__device__ __forceinline__ unsigned air_rows_spec_keep(unsigned k, unsigned seen, float k_per_elem) {
  const float mu = (float)seen * k_per_elem;
  const float keep = mu + 4.0f * sqrtf(mu) + 8.0f;
  return keep >= (float)k ? k : (unsigned)keep;
}

/* 16-byte loads per thread per round of the stream (16-bit keys: 2, else 4) and elements per round */
__host__ __device__ constexpr int air_rows_stream_unroll(int es) { return es == 2 ? 2 : AIR_ROWS_UNROLL; }
__host__ __device__ constexpr int air_rows_stream_round(int es) {
  return AIR_THREADS * air_rows_stream_unroll(es) * (16 / es);
}
/* Buffer entries the stream needs: k kept after a compaction, half a round of room, then a
 * round's worth for the round that starts with the buffer at that room. Half a round of room
 * (two until session 18) keeps the buffer of k <= ~2048 4-byte keys within the shared memory
 * of three blocks per SM (docs/perf-notes.md v0.18). */
__host__ __device__ __forceinline__ int64_t air_rows_stream_cap(int64_t k, int es) {
  return (k + 3 * (int64_t)air_rows_stream_round(es) / 2 + 255) & ~(int64_t)255;
}

/*
 * The largest key prefix whose keys among the n buffer entries number at least k and at most
 * `target` (or the exact k-th key when no coarser prefix is that small), as a threshold key in
 * *t; returns how many entries are >= it. Needs k <= n. Every thread calls it; all get the same
 * result (it ends with a barrier).
 */
template <typename KeyT, int KB>
__device__ unsigned air_rows_prefix(const KeyT* s_bkey, unsigned n, unsigned* s_hist, unsigned* s_warp,
                                    air_choice<unsigned>* s_choice, unsigned k, unsigned target, KeyT* t) {
  typedef typename air_rows_word<KB>::type W;
  unsigned k_rem = k, ge = n;
  int lk = 0;
  W pk = 0;
  while (lk < KB) {
    const int w = KB - lk < AIR_ROWS_DIGIT_BITS ? KB - lk : AIR_ROWS_DIGIT_BITS;
    const int nbins = 1 << w, shift = KB - lk - w;
    for (int b = threadIdx.x; b < nbins; b += AIR_THREADS) s_hist[b] = 0;
    __syncthreads();
    for (unsigned e = threadIdx.x; e < n; e += AIR_THREADS) {
      const W key = (W)s_bkey[e];
      if (lk == 0 || (key >> (KB - lk)) == pk) atomicAdd(&s_hist[(int)((key >> shift) & (W)(nbins - 1))], 1u);
    }
    __syncthreads();
    air_choose<unsigned>(s_hist, nbins, k_rem, s_warp, s_choice); /* ends with a barrier */
    pk = (pk << w) | (W)s_choice->digit;
    lk += w;
    k_rem -= s_choice->greater;
    ge = (k - k_rem) + s_choice->count; /* entries whose key has the prefix pk or a greater one */
    if (ge <= target) break;
  }
  *t = (KeyT)(lk < KB ? pk << (KB - lk) : pk);
  __syncthreads(); /* s_choice read by all before a later call rewrites it */
  return ge;
}

/*
 * Raises thr to air_rows_prefix's threshold over the buffer, then keeps only the entries >= thr,
 * in place. Every thread calls it; all get the same result. Returns false when the entries >=
 * the exact k-th key exceed `room` (ties: the stream gives up).
 */
template <typename KeyT, int KB>
__device__ bool air_rows_compact(KeyT* s_bkey, unsigned* s_bidx, unsigned* s_nbuf, unsigned* s_hist,
                                 unsigned* s_warp, air_choice<unsigned>* s_choice, unsigned k, unsigned target,
                                 unsigned room, KeyT& thr) {
  const unsigned n = *s_nbuf;
  KeyT t;
  const unsigned ge = air_rows_prefix<KeyT, KB>(s_bkey, n, s_hist, s_warp, s_choice, k, target, &t);
  if (ge > room) return false;
  if (t > thr) thr = t;
  if (threadIdx.x == 0) *s_nbuf = 0; /* every thread read n before air_rows_prefix's last barrier */
  __syncthreads();
  /* In rounds: a round's entries are read into registers before any is written back, and the
   * kept ones go to slots below the end of the rounds read so far. */
  for (unsigned base = 0; base < n; base += AIR_THREADS * AIR_ROWS_COMPACT_E) {
    KeyT kk[AIR_ROWS_COMPACT_E];
    unsigned ii[AIR_ROWS_COMPACT_E];
#pragma unroll
    for (int u = 0; u < AIR_ROWS_COMPACT_E; ++u) {
      const unsigned e = base + (unsigned)(u * AIR_THREADS) + threadIdx.x;
      if (e < n) {
        kk[u] = s_bkey[e];
        ii[u] = s_bidx[e];
      }
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < AIR_ROWS_COMPACT_E; ++u) {
      const unsigned e = base + (unsigned)(u * AIR_THREADS) + threadIdx.x;
      if (e < n && kk[u] >= thr) {
        const unsigned slot = air_rows_claim(s_nbuf, true);
        s_bkey[slot] = kk[u];
        s_bidx[slot] = ii[u];
      }
    }
    __syncthreads();
  }
  return true;
}

/*
 * Streams the row once into the buffer (above), speculatively when spec, then from a sampled start
 * unless sample_keep < 0 (> 0: the sample's keep forced). Returns (the same for
 * all threads) AIR_ROWS_STREAM_OK when the buffer then holds the row's k best, *s_nbuf entries;
 * AIR_ROWS_STREAM_GAVE_UP when it gave up; AIR_ROWS_STREAM_TOO_FEW when a speculative threshold
 * proved too high. Needs cap >= air_rows_stream_cap(k, sizeof(RawT)), k < len, *s_nbuf == 0.
 */
template <topk_dtype DT>
__device__ int air_rows_stream(const typename topk_dtype_traits<DT>::raw_t* row, unsigned len, bool smallest,
                               unsigned k, bool spec, int sample_keep, unsigned cap,
                               typename topk_dtype_traits<DT>::key_t* s_bkey,
                               unsigned* s_bidx, unsigned* s_nbuf, unsigned* s_hist, unsigned* s_warp,
                               air_choice<unsigned>* s_choice) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  constexpr int V = 16 / (int)sizeof(RawT);
  constexpr int U = air_rows_stream_unroll((int)sizeof(RawT));
  constexpr unsigned ROUND = (unsigned)air_rows_stream_round((int)sizeof(RawT));
  const unsigned room = cap - ROUND; /* the buffer may hold this many at a round's start */
  const unsigned target = k + (room - k) / 8;
  KeyT thr = 0;
  const float k_per_elem = (float)k / (float)len;
  /* Most elements fail the threshold: a compare of values rejects them, and only the rest get
   * the exact test in `offer` (below). Measured 1.05-1.25x on the rows suite at three blocks
   * per SM (docs/perf-notes.md v0.18). */
  topk_key_floor<DT> pre = topk_key_floor<DT>::make(thr, smallest);
  unsigned my_end = 0; /* 1 + the highest slot this thread claimed since the last compaction */
  int compactions = 0;
  auto offer = [&](RawT raw, unsigned idx) {
    const KeyT key = topk_to_rank_key<DT>(raw, smallest);
    if (key >= thr) {
      const unsigned slot = air_rows_claim(s_nbuf, true);
      s_bkey[slot] = key;
      s_bidx[slot] = idx;
      my_end = slot + 1;
    }
  };
  const unsigned head = air_rows_head(row, len); /* misaligned elements: all scalar, by rounds */
  const unsigned nvec = (len - head) / V;
  const uint4* vp = (const uint4*)(row + head);
  /* The sampled start: a speculative thr from a round's worth of the row, U vectors a thread
   * spread evenly over it, selected as the first round's compaction would select (keep and its
   * prefix slack). It stands for that compaction: the first round no longer enters the buffer
   * whole (every element passed thr = 0 and was written), and sorted rows get a thr from their
   * whole range instead of from their start. A sample too high makes the stream end
   * TOO_FEW, as a first round's thr could. 16-bit keys only: measured 1.04-1.09x there, and
   * 0.976-0.988x on f32 rows of 32768..131072 (docs/perf-notes.md v0.31). */
  if (sizeof(RawT) == 2 && spec && sample_keep >= 0 && nvec >= (unsigned)(AIR_ROWS_SAMPLE_MIN_ROUNDS * U * AIR_THREADS) &&
      air_rows_spec_keep(k, ROUND, k_per_elem) <= ROUND / 4) {
    const unsigned stride = nvec / AIR_THREADS; /* >= 8 U: each thread's vectors are its own */
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = vp[threadIdx.x * stride + (unsigned)u];
#pragma unroll
    for (int u = 0; u < U; ++u)
      topk_vec_elems<RawT>(v[u], [&](RawT e, int t) {
        s_bkey[(threadIdx.x * U + u) * V + t] = topk_to_rank_key<DT>(e, smallest);
      });
    __syncthreads();
    const unsigned keep = sample_keep > 0 ? (unsigned)sample_keep : air_rows_spec_keep(k, ROUND, k_per_elem);
    air_rows_prefix<KeyT, KB>(s_bkey, ROUND, s_hist, s_warp, s_choice, keep, keep + keep / 4 + 16, &thr);
    pre = topk_key_floor<DT>::make(thr, smallest);
    compactions = 1;
  }
  /* After each step (at most ROUND elements offered, so a step that starts with <= room
   * entries cannot overflow the buffer; `seen` elements offered in all): one barrier, and a
   * compaction when some thread's last slot passed room. A speculative compaction keeps
   * about keep entries (its prefix may hold up to a quarter more, not the exact target's
   * slack: every entry it keeps lowers thr). */
  auto step_done = [&](unsigned seen) -> bool {
    /* Speculative: the first compaction comes after the first round, before the buffer fills,
     * where it keeps a quarter of what it read or less (every later element is then tested
     * against its thr: the rows of the dsa suite buffered two rounds whole before it). */
    const bool early = spec && compactions == 0 && seen >= ROUND && air_rows_spec_keep(k, seen, k_per_elem) <= seen / 4;
    if (!__syncthreads_or(my_end > room || early)) return true;
    if (++compactions > AIR_ROWS_STREAM_MAX_COMPACTIONS) return false;
    const unsigned keep = spec ? air_rows_spec_keep(k, seen, k_per_elem) : k;
    const unsigned tkeep = keep < k && keep + keep / 4 + 16 < target ? keep + keep / 4 + 16 : target;
    if (!air_rows_compact<KeyT, KB>(s_bkey, s_bidx, s_nbuf, s_hist, s_warp, s_choice, keep, tkeep, room, thr))
      return false;
    pre = topk_key_floor<DT>::make(thr, smallest);
    my_end = 0;
    return true;
  };
  /* the scalar head (the whole row when its elements are misaligned) */
  for (unsigned pos = 0; pos < head;) {
    const unsigned end = head - pos < ROUND ? head : pos + ROUND;
    for (unsigned i = pos + threadIdx.x; i < end; i += AIR_THREADS) offer(row[i], i);
    pos = end;
    if (!step_done(pos)) return AIR_ROWS_STREAM_GAVE_UP;
  }
  /* 16-byte loads, the next step's issued before this step is offered. (Two buffers used in
   * turn instead of this copy measured 1.15-1.35x slower: docs/perf-notes.md v0.13.) */
  const uint4* vpt = vp + threadIdx.x; /* this thread's vectors: vpt[j0 + u * AIR_THREADS] */
  auto load = [&](uint4(&v)[U], unsigned j0) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const unsigned j = j0 + (unsigned)(u * AIR_THREADS);
      if (j + threadIdx.x < nvec) v[u] = vpt[j];
    }
  };
  constexpr unsigned STEP_VEC = (unsigned)(U * AIR_THREADS);
  uint4 cur[U], nxt[U];
  if (nvec > 0) load(cur, 0);
  for (unsigned j0 = 0; j0 < nvec; j0 += STEP_VEC) {
    if (j0 + STEP_VEC < nvec) load(nxt, j0 + STEP_VEC);
    if constexpr (sizeof(RawT) == 2) {
      /* 16-bit keys: one mask of the elements that pass for the thread's U vectors (packed
       * compares, pass_bits), one claim for all of them (a warp scan and one atomic a warp), then a
       * loop over the mask's bits that writes them. Where pass_bits is not exact (the smallest, a
       * zero or infinite thr) each bit is tested exactly first. A loop per vector, a mask
       * bit per element in order and the exact test everywhere took 427 warp instructions a step
       * on dsa bf16 (ncu source counters, docs/perf-notes.md v0.31); the claim per element before
       * that kept the warp in a divergent loop of ballots and shared atomics (v0.28). 32-bit keys
       * keep the test per vector: a loop per element measured 0.84-0.94x there (v0.19). */
      unsigned m = 0;
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (j0 + (unsigned)(u * AIR_THREADS) + threadIdx.x < nvec) m |= pre.pass_bits(cur[u]) << (4 * u);
      if (!pre.exact) {
        unsigned e = 0;
        for (unsigned b = m; b;) {
          const int p = __ffs(b) - 1;
          b &= b - 1;
          if (topk_to_rank_key<DT>((RawT)air_rows_elem16_at<U>(cur, p), smallest) >= thr) e |= 1u << p;
        }
        m = e;
      }
      const unsigned cnt = (unsigned)__popc(m);
      unsigned slot = air_warp_claim<unsigned>(cnt, s_nbuf);
      const unsigned idx0 = head + (j0 + threadIdx.x) * (unsigned)V; /* element 0 of vector 0 */
      if (cnt) my_end = slot + cnt;
      while (m) {
        const int p = __ffs(m) - 1;
        m &= m - 1;
        s_bkey[slot] = topk_to_rank_key<DT>((RawT)air_rows_elem16_at<U>(cur, p), smallest);
        s_bidx[slot] = idx0 + (unsigned)((p >> 2 & 3) * AIR_THREADS * V + (p & 3) * 2 + (p >> 4));
        ++slot;
      }
    } else {
      air_rows_offer_vecs<RawT, U>(cur, j0, nvec, head, offer, pre);
    }
    const unsigned jn = j0 + STEP_VEC < nvec ? j0 + STEP_VEC : nvec;
    if (!step_done(head + jn * (unsigned)V)) return AIR_ROWS_STREAM_GAVE_UP;
#pragma unroll
    for (int u = 0; u < U; ++u) cur[u] = nxt[u];
  }
  /* the scalar tail (< V elements) */
  const unsigned vend = head + nvec * (unsigned)V;
  if (vend < len) {
    for (unsigned i = vend + threadIdx.x; i < len; i += AIR_THREADS) offer(row[i], i);
    if (!step_done(len)) return AIR_ROWS_STREAM_GAVE_UP;
  }
  /* every step ended with a barrier: *s_nbuf is final for all threads */
  return spec && *s_nbuf < k ? AIR_ROWS_STREAM_TOO_FEW : AIR_ROWS_STREAM_OK;
}

/*
 * Blocks per SM the kernel's registers must allow: 3 for keys of up to 4 bytes (80 registers,
 * no spills; their shared memory allows 3 for k up to ~2048), 2 for 64-bit keys (80 registers
 * would spill ~150 bytes). The stream keeps one round of loads in flight per block, so
 * resident blocks are what covers the memory latency (docs/perf-notes.md v0.18).
 */
__host__ __device__ constexpr int air_rows_min_blocks(size_t key_bytes) { return key_bytes == 8 ? 2 : 3; }

/* Grid: one block per row (row P.row0 + blockIdx.x); AIR_THREADS threads; air_rows_smem_bytes. */
/* stream: AIR_ROWS_STREAM_SPEC or _EXACT tries the one-read start (air_rows_stream) first, the
 * speculative one then the exact one if its threshold proves too high; needs cap >=
 * air_rows_stream_cap(k, element size). AIR_ROWS_STREAM_OFF: the passes over global memory only. */
template <topk_dtype DT>
__global__ void __launch_bounds__(AIR_THREADS, air_rows_min_blocks(sizeof(typename topk_dtype_traits<DT>::key_t)))
    air_rows_kernel(const air_params P, const int first_bits, const unsigned cap, const int stream) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  typedef typename air_rows_word<KB>::type W; /* key arithmetic: 32 bits for 16- and 32-bit keys */

  extern __shared__ __align__(16) unsigned char air_rows_smem[];
  unsigned* s_hist = (unsigned*)air_rows_smem;
  KeyT* s_bkey = (KeyT*)(air_rows_smem + air_rows_hist_bins(first_bits) * 4);
  unsigned* s_bidx = (unsigned*)((unsigned char*)s_bkey + air_rows_key_bytes(cap, sizeof(KeyT)));
  __shared__ unsigned s_warp[AIR_WARPS];
  __shared__ unsigned long long s_ao[2 * AIR_WARPS];
  __shared__ air_choice<unsigned> s_choice;
  __shared__ unsigned s_out, s_nbuf, s_ties;

  const int64_t row = P.row0 + blockIdx.x;
  const air_row_extent R = air_row(P, row);
  if (R.len <= P.k) {
    air_copy_row<DT, unsigned>(P, row, R, threadIdx.x, AIR_THREADS);
    return;
  }
  const RawT* in_row = (const RawT*)P.in + R.start;
  const unsigned len = (unsigned)R.len;
  const bool smallest = P.smallest != 0;
  const int ib = P.ib;
  const unsigned long long imask = air_index_mask(ib);
  const unsigned k = (unsigned)P.k;
  bool streamed = false;
  /* the speculative stream first, then (if its threshold proved too high) the exact one */
  const int mode = stream & AIR_ROWS_STREAM_MODE;
  const int sample_keep = stream & AIR_ROWS_STREAM_NO_SAMPLE ? -1 : stream >> AIR_ROWS_STREAM_KEEP_SHIFT;
  for (int spec = mode == AIR_ROWS_STREAM_SPEC; mode != AIR_ROWS_STREAM_OFF; spec = 0) {
    if (threadIdx.x == 0) s_nbuf = 0;
    __syncthreads();
    const int st = air_rows_stream<DT>(in_row, len, smallest, k, spec != 0, sample_keep, cap, s_bkey, s_bidx, &s_nbuf, s_hist,
                                       s_warp, &s_choice);
    streamed = st == AIR_ROWS_STREAM_OK;
    if (st != AIR_ROWS_STREAM_TOO_FEW) break;
    __syncthreads(); /* every thread read s_nbuf before it is reset */
  }
  /* streamed: the buffer holds the row's k best, and the passes below read only the buffer */
  unsigned nbuf = streamed ? s_nbuf : 0u;
  /* Every thread's read of s_nbuf above (the compiler may load it whether or not `streamed`)
   * before thread 0 resets it after a stream that gave up: without this barrier racecheck
   * reported 4 hazards on test_gpu_air sanitizer_small. */
  __syncthreads();
  if (threadIdx.x == 0) {
    s_out = 0;
    if (!streamed) s_nbuf = 0;
  }

  air_rows_level cur = {0, 0, 0ull, 0ull}, prev = cur;
  unsigned k_rem = k, cand = streamed ? nbuf : len;
  bool buffered = streamed, tie_rank = false;

  /* A result to its output slot (called by the lanes that have one: one atomic per warp). */
  auto emit_one = [&](RawT raw, KeyT key, unsigned idx) {
    const unsigned slot = air_rows_claim(&s_out, true);
    if (slot < k) air_emit(P, row, (int64_t)slot, raw, key, idx);
  };

  for (int pass = 0;; ++pass) {
    const bool by_key = cur.lk < KB;
    int w = by_key ? (pass == 0 ? first_bits : AIR_ROWS_DIGIT_BITS) : AIR_ROWS_DIGIT_BITS;
    const int left = by_key ? KB - cur.lk : ib - cur.li;
    if (w > left) w = left;
    const int nbins = 1 << w;
    const int shift = left - w;
    const bool buffering = !buffered && cand <= cap;
    for (int b = threadIdx.x; b < nbins; b += AIR_THREADS) s_hist[b] = 0;
    __syncthreads(); /* also orders s_out / s_nbuf's zeroing before any claim */

    W k_and = (W)~(W)0, k_or = 0;
    auto put = [&](KeyT key, unsigned idx) { /* a candidate into the buffer (rare: <= cap per row) */
      const unsigned b = air_rows_claim(&s_nbuf, true);
      if (b < cap) {
        s_bkey[b] = key;
        s_bidx[b] = idx;
      }
    };
    if (buffered) {
      for (unsigned e = threadIdx.x; e < nbuf; e += AIR_THREADS) {
        const KeyT key = s_bkey[e];
        const unsigned idx = s_bidx[e];
        if (air_rows_cmp<KeyT, KB>(key, idx, cur, ib, imask) == 0)
          atomicAdd(&s_hist[air_rows_digit<KeyT>(key, idx, by_key, shift, nbins, imask)], 1u);
      }
    } else if (pass == 0 && !buffering) {
      /* The first digit of every key, and the bits all keys share. */
      auto body = [&](RawT raw, unsigned) {
        const W key = (W)topk_to_rank_key<DT>(raw, smallest);
        k_and &= key;
        k_or |= key;
        atomicAdd(&s_hist[(int)(key >> shift)], 1u);
      };
      air_rows_scan<RawT>(in_row, len, body);
    } else if (by_key && cur.li == 0 && pass > 0) {
      /* Key digits only (prev.li == 0 too: index digits come after the key's last). Most
       * elements fail the first compare; candidates and new results take the rare branches. */
      const int sc = KB - cur.lk, sp = KB - prev.lk; /* cur.lk >= first digit: sc < KB */
      const W want = (W)cur.pk, wantp = (W)prev.pk;
      const bool any_prev = prev.lk == 0;
      auto body = [&](RawT raw, unsigned idx) {
        const W key = (W)topk_to_rank_key<DT>(raw, smallest);
        const W kp = key >> sc;
        if (kp == want) {
          atomicAdd(&s_hist[(int)((key >> shift) & (W)(nbins - 1))], 1u);
          if (buffering) put((KeyT)key, idx);
        } else if (kp > want && (any_prev || (key >> sp) == wantp)) {
          emit_one(raw, (KeyT)key, idx);
        }
      };
      air_rows_scan<RawT>(in_row, len, body);
    } else {
      /* Any level (index digits, or a first pass that buffers the whole row). */
      auto body = [&](RawT raw, unsigned idx) {
        const KeyT key = topk_to_rank_key<DT>(raw, smallest);
        if (pass == 0) {
          k_and &= (W)key;
          k_or |= (W)key;
        }
        const int c = air_rows_cmp<KeyT, KB>(key, idx, cur, ib, imask);
        if (c == 0) {
          atomicAdd(&s_hist[air_rows_digit<KeyT>(key, idx, by_key, shift, nbins, imask)], 1u);
          if (buffering) put(key, idx);
        } else if (c > 0 && air_rows_cmp<KeyT, KB>(key, idx, prev, ib, imask) == 0) {
          emit_one(raw, key, idx);
        }
      };
      air_rows_scan_plain<RawT>(in_row, len, body);
    }
    __syncthreads();
    air_choose<unsigned>(s_hist, nbins, k_rem, s_warp, &s_choice); /* ends with a barrier */
    prev = cur;
    if (by_key) {
      cur.pk = (cur.pk << w) | (unsigned long long)s_choice.digit;
      cur.lk += w;
    } else {
      cur.pi = (cur.pi << w) | (unsigned long long)s_choice.digit;
      cur.li += w;
    }
    k_rem -= s_choice.greater;
    cand = s_choice.count;
    if (pass == 0 && !streamed) {
      /* Bits every key shares: no element differs there, so the next pass starts below them. */
      unsigned long long a = (unsigned long long)k_and, o = (unsigned long long)k_or;
      air_block_and_or(a, o, s_ao);
      const int common = air_common_bits<KB>(a, o);
      if (common > cur.lk) {
        cur.lk = common;
        cur.pk = common == 0 ? 0ull : (o >> (KB - common));
      }
    }
    if (buffering) {
      buffered = true;
      nbuf = s_nbuf < cap ? s_nbuf : cap;
    }
    __syncthreads(); /* s_choice, s_nbuf read by all before the next pass rewrites them */
    if (buffered && cur.lk >= KB && cur.li == 0 && cand != k_rem && cand <= AIR_THREADS) {
      tie_rank = true;
      break;
    }
    if (cand == k_rem || (cur.lk >= KB && cur.li >= ib)) break;
  }

  if (tie_rank) {
    /* The whole key is known and cand buffered entries tie at it, k_rem of them needed: the ties'
     * indices go to a list and each is ranked by the count of smaller ones, the lowest winning, in
     * place of index digits (two more passes over the buffer for rows of 2^12..2^22; dsa bf16
     * rows hold ~80 ties at the k-th key). */
    const KeyT kth = (KeyT)cur.pk;
    if (threadIdx.x == 0) s_ties = 0;
    __syncthreads();
    for (unsigned e = threadIdx.x; e < nbuf; e += AIR_THREADS) {
      const KeyT key = s_bkey[e];
      const unsigned idx = s_bidx[e];
      if (key > kth) emit_one(topk_raw_of_key<DT>(key, smallest, in_row, idx), key, idx);
      else if (key == kth) s_hist[air_rows_claim(&s_ties, true)] = idx;
    }
    __syncthreads();
    const unsigned ties = s_ties; /* == cand <= AIR_THREADS */
    if (threadIdx.x < ties) {
      const unsigned mine = s_hist[threadIdx.x];
      unsigned r = 0;
      for (unsigned j = 0; j < ties; ++j) r += s_hist[j] < mine ? 1u : 0u;
      if (r < k_rem) emit_one(topk_raw_of_key<DT>(kth, smallest, in_row, mine), kth, mine);
    }
    return;
  }

  /* The last step: every candidate left is needed (cand == k_rem); results beating cur get their slots too. */
  if (buffered) {
    for (unsigned e = threadIdx.x; e < nbuf; e += AIR_THREADS) {
      const KeyT key = s_bkey[e];
      const unsigned idx = s_bidx[e];
      if (air_rows_cmp<KeyT, KB>(key, idx, cur, ib, imask) >= 0) {
        /* only NaNs are gathered from the row, which the stream read long before */
        emit_one(topk_raw_of_key<DT>(key, smallest, in_row, idx), key, idx);
      }
    }
  } else if (cur.li == 0) {
    const int sc = KB - cur.lk, sp = KB - prev.lk; /* cur.lk >= first digit */
    const W want = (W)cur.pk, wantp = (W)prev.pk;
    const bool any_prev = prev.lk == 0;
    auto body = [&](RawT raw, unsigned idx) {
      const W key = (W)topk_to_rank_key<DT>(raw, smallest);
      const W kp = key >> sc;
      if (kp == want || (kp > want && (any_prev || (key >> sp) == wantp))) emit_one(raw, (KeyT)key, idx);
    };
    air_rows_scan<RawT>(in_row, len, body);
  } else {
    auto body = [&](RawT raw, unsigned idx) {
      const KeyT key = topk_to_rank_key<DT>(raw, smallest);
      const int c = air_rows_cmp<KeyT, KB>(key, idx, cur, ib, imask);
      if (c == 0 || (c > 0 && air_rows_cmp<KeyT, KB>(key, idx, prev, ib, imask) == 0)) emit_one(raw, key, idx);
    };
    air_rows_scan_plain<RawT>(in_row, len, body);
  }
}

#endif
