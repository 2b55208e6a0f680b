/*
 * air_radix_kernels.cuh: the kernels of AIR Top-K, iteration-fused radix top-k
 * (paper 003: sec. 2.3 "Parallel Radix Top-K", sec. 3 "AIR Top-K", Algorithm 1).
 * The host side (workspace layout, launch sequence) is air_radix.cu.
 *
 * The selection works on rank keys (keys.cuh over src/common/keys.h): larger is
 * better, so every direction and dtype becomes "the k largest unsigned keys".
 *
 * Multi-block path (air_pass_kernel, air_final_kernel; grid = blocks per row x rows):
 *   pass p reads its source once and, for every element, (1) filters it by the
 *   prefix chosen by passes 0..p-1 and (2) counts the digit of pass p of each
 *   surviving candidate in a shared-memory histogram (sec. 3.1: the filter of
 *   pass p-1 and the histogram of pass p fused, Algorithm 1 lines 10-22). The
 *   block histograms are merged into the row's global histogram with atomics;
 *   the LAST block of the row to finish (atomic counter + __threadfence) scans the
 *   histogram and picks the digit of the k-th key (lines 23-28), and stores the new
 *   prefix / k / candidate count in the row's state for the next launch. No host
 *   round trip: one launch per pass plus one final filter launch.
 *   Digits: 11 bits but the last (air_pass_width): 16-bit keys 11+5, 32-bit
 *   11+11+10, 64-bit 11x5+9 (the one-block path: 8-bit digits).
 *
 * Fused path (air_fused_kernel): the same passes in one cooperative launch; a
 * per-row barrier (air_row_barrier) replaces the kernel boundary, and every block
 * of a row computes the same choice from the row's complete histogram, so the
 * pass-to-pass state stays in registers. Loads are 16 bytes wide wherever the
 * source is 16-byte aligned (air_load_tile).
 *
 * Adaptive buffering (sec. 3.2): pass p >= 1 writes its candidates (raw bits +
 * index) to a candidate buffer only when their count C_p (known from pass p-1's
 * histogram) is <= len / alpha; the next pass then reads the buffer instead of
 * the input. Otherwise nothing is written and the next pass re-reads the input and
 * re-filters it by the longer prefix. Elements already known to be results (their
 * prefix beats the k-th's) are written to the output only by a buffering pass:
 * a non-buffering pass leaves them for whichever later launch reads the input.
 *
 * Sampled start (MULTI, long rows; air_start_bound below): a bound from a 1/1024 sample of
 * the row, then one read that buffers every element >= it, so that the passes after it read
 * only the buffer. A row that pass 0 would leave with n/8 candidates (uniform floats) is read
 * once instead of three times.
 *
 * Early stopping (sec. 3.3): when, after a pass, the candidates left equal the
 * results still needed (C == k_rem), every candidate is a result: the row's mode
 * becomes AIR_FINAL, later pass launches return at once for that row, and the final
 * filter writes all elements whose prefix is >= the chosen prefix.
 *
 * Deterministic ties (the default contract): the selection runs on the composite
 * key (rank key, ~index): after the key passes, if more elements equal the k-th key
 * than are needed, further passes run over the bits of ~index (index passes), which
 * picks the lowest indices among the ties; composite keys are distinct, so after
 * the last index pass exactly one candidate is left and it is needed (C == k_rem).
 * These passes are launched but return at once when the key passes already
 * finished (no ties to break). TOPK_NONDETERMINISTIC skips them: the final filter
 * then claims the needed equal elements with an atomic counter.
 *
 * One-block path (air_one_block_kernel; one thread block per row): the row is
 * staged in shared memory when it fits, all key passes run in the block (histogram
 * in shared memory), and the final filter takes the row in index order (each warp
 * counts a contiguous range, one barrier, then writes it), so ties are resolved by
 * index without index passes and the output slots are deterministic (results appear
 * in index order). For many short rows.
 *
 * Invariants (row r; "level" = number of known leading bits of the composite key):
 *   I1  k_rem >= 1 and C >= k_rem while a row is AIR_RUNNING; k - k_rem elements of
 *       the row have a prefix greater than the chosen prefix (they are results).
 *   I2  C is non-increasing over passes, so once a pass buffers, every later pass
 *       buffers too, and the first buffering pass reads the input: each result is
 *       written exactly once (by the first buffering pass that sees it, else by the
 *       final filter). The sampled start's pass 0 buffers results and candidates alike
 *       (at level 0 nothing is known to be a result), so pass 1 is the first to write.
 *   I3  pass p reads buffer (p-1)&1 and writes buffer p&1, never the same one.
 *   I4  the last block of a pass is the only block touching the row's histogram and
 *       state after the other blocks have counted themselves finished; it zeroes
 *       the histogram and the finished-block counter for the next launch.
 *   I5  every write is bounds-guarded (slot < k, buffer position < capacity), so even
 *       invalid row offsets (which topk.h forbids) cannot write out of bounds.
 */
#ifndef TOPK_CUDA_AIR_RADIX_KERNELS_CUH
#define TOPK_CUDA_AIR_RADIX_KERNELS_CUH

/*
 * The paths' phase stamps (CLUSTER's TOPK_AIR_CLUSTER_STAMPS=1, RESIDENT's TOPK_AIR_RES_STAMPS=1:
 * one thread printf's %globaltimer at its steps) exist only in builds configured with
 * -DTOPK_AIR_STAMPS=ON (CMakeLists.txt). Compiled in and left off at run time they cost the
 * CLUSTER kernel 6-8 % a call at its slowest LLM shapes (f32 and bf16 8 x 262144, k = 1024), and
 * RESIDENT ~3 %: code and state beside kernels held at 64 registers a thread (ptxas gave CLUSTER a
 * 168-byte stack frame for the printf, and bf16's 4 / 4 bytes of spills, 0 / 0 without them;
 * docs/perf-notes.md v0.52).
 */
#ifndef TOPK_AIR_STAMPS
#define TOPK_AIR_STAMPS 0
#endif

#include <stdint.h>

#include <cooperative_groups.h>

#include "../common/cluster_async.cuh"
#include "../common/keys.cuh"
#include "../common/rows.cuh"

enum {
  AIR_THREADS = 256,
  AIR_WARPS = AIR_THREADS / 32,
  AIR_MAX_DIGIT_BITS = 12,               /* multi-block passes: shared histograms sized for this */
  AIR_MAX_BINS = 1 << AIR_MAX_DIGIT_BITS,
  AIR_ONE_DIGIT_BITS = 8,                /* one-block passes: short rows pay per bin, so small histograms */
  AIR_ONE_BINS = 1 << AIR_ONE_DIGIT_BITS,
  AIR_MAX_PASSES = 16,                   /* 64-bit keys (6) + index passes of 64-bit rows (6) fit */
  /* MULTI passes, 32-bit counts: 4 resident blocks per SM (64 registers) instead of the 3 that 77
   * allow. The grid gives each row floor(resident / rows) blocks: 100 rows of 2^21 get 5 instead
   * of 3 (17-23 % faster); one row of 2^28 is 1-4 % slower (docs/perf-notes.md v0.11) */
  AIR_PASS_MIN_BLOCKS = 4
};

/* Row modes, in the row state. The state is zeroed before pass 0, so 0 = running.
 * AIR_RESTART: the sampled start's bound left too few or too many candidates; pass 0's
 * second launch (air_pass_desc.retry) then runs pass 0 over the input without it. */
enum { AIR_RUNNING = 0, AIR_FINAL = 1, AIR_DONE = 2, AIR_RESTART = 3 };

/* Where results go: straight to the caller's outputs, or to the sort buffers. */
enum {
  AIR_OUT_DIRECT = 0,    /* unsorted: values and indices */
  AIR_OUT_COMPOSITE = 1, /* sorted, key <= 32 bits, 32-bit rows: one u64 (~key << cshift | index) */
  AIR_OUT_PAIRS = 2,     /* sorted otherwise: u64 ~key and u64 index */
  AIR_OUT_BLOCK = 3      /* sorted, one-block path, sorted inside the kernel (P.bsort_m > 0): no air_emit */
};

/*
 * Passes over a field of `bits` bits with digits of at most max_digit bits: every
 * pass max_digit wide but the last, which takes the rest. The first digit is the
 * widest because the leading bits are the crowded ones: a 16-bit float's first 8
 * bits are sign and exponent, so 8+8 put most normal data in a few bins (shared
 * atomics serialise on them; bf16 ran at 46 GB/s) where 11+5 spreads it.
 */
__host__ __device__ __forceinline__ int air_num_passes(int bits, int max_digit) {
  return (bits + max_digit - 1) / max_digit;
}
/* The digit below `level` known bits: max_digit wide, or the rest (air_pass_width from any level). */
__host__ __device__ __forceinline__ int air_width_below(int bits, int max_digit, int level) {
  return bits - level < max_digit ? bits - level : max_digit;
}
__host__ __device__ __forceinline__ int air_pass_width(int bits, int max_digit, int pass) {
  const int np = air_num_passes(bits, max_digit);
  return pass < np - 1 ? max_digit : bits - (np - 1) * max_digit;
}

/*
 * Per-row state of the multi-block path, in the workspace. Written by the last
 * block of a pass (the fields above finished_blocks), read by the next launches;
 * the counters are atomics within one launch. IdxT: unsigned int, or unsigned long
 * long when a row can hold 2^31 elements or more.
 */
template <typename IdxT>
struct air_row_state {
  unsigned long long prefix_key; /* known leading bits of the k-th rank key, right-aligned */
  unsigned long long prefix_idx; /* known leading bits of the k-th ~index (index passes) */
  IdxT k_rem;                    /* results still needed among the elements matching the prefix */
  IdxT len;                      /* C: elements matching the prefix */
  IdxT src_len;                  /* elements in the buffer the next launch reads (src != 0) */
  int src;                       /* 0: the input row; 1 or 2: candidate buffer 0 or 1 */
  int level_key, level_idx;      /* bits in prefix_key, prefix_idx */
  int mode;                      /* AIR_RUNNING, AIR_FINAL, AIR_DONE */
  unsigned int finished_blocks;  /* blocks of this launch done with their histogram */
  IdxT buf_cnt;                  /* next free candidate-buffer slot in this launch */
  IdxT out_cnt;                  /* next free output slot from the front */
  IdxT back_cnt;                 /* equal elements claimed from the back (nondeterministic) */
};

/* Everything a launch needs; passed by value. */
struct air_params {
  const void* in;
  const int64_t* offsets; /* device; NULL: uniform rows */
  int64_t n, ld, k;
  int64_t row0;           /* first row of this launch */
  int64_t alpha;          /* buffer candidates when C <= len / alpha */
  int smallest;
  int index_type;         /* topk_index */
  int out_mode;           /* AIR_OUT_* */
  int ib;                 /* index bits: every index of every row is < 2^ib */
  int cshift;             /* AIR_OUT_COMPOSITE: bits of the index field */
  int bsort_m;            /* AIR_OUT_BLOCK: sort slots per row (power of two >= k); 0 otherwise */
  void* values;
  void* indices;
  unsigned long long* sort_key;
  unsigned long long* sort_idx;
  void* state;            /* air_row_state<IdxT>[rows of the launch] */
  void* hist;             /* IdxT[rows of the launch][hist_bins], zero before pass 0 */
  int hist_bins;          /* bins of the widest pass: the stride of the row histograms */
  void* buf_raw[2];
  void* buf_idx[2];
  unsigned long long worst_bits;
  unsigned* ovf;          /* ADAPTIVE: per row, 1 if longer than the one-block stage (FUSED takes it); else NULL */
  int common_prefix;      /* one-block, cluster: start the passes below the bits all keys share (air_common_bits) */
  /* MULTI's sampled start (air_start_bound): the sample's row states after its key passes, the
   * rank selected in the sample, and the most sample elements >= the bound that the buffer takes.
   * start_state NULL: no start. */
  const void* start_state;
  int64_t start_rank, start_limit;
};

/* One pass of the multi-block path; the levels are those before the pass. */
struct air_pass_desc {
  int pass;
  int is_idx;  /* digit of ~index (deterministic tie passes) instead of the key */
  int width;
  int level_key, level_idx;
  int last;    /* the last pass launched: the row goes to AIR_FINAL whatever C is */
  int retry;   /* pass 0 again, for the rows whose sampled start failed (AIR_RESTART); others return */
};

template <typename IdxT>
struct air_choice {
  int digit;
  IdxT greater; /* candidates whose digit beats the chosen one */
  IdxT count;   /* candidates with the chosen digit */
};

struct air_row_extent {
  int64_t start; /* first element, in elements from `in` */
  int64_t len;
  int64_t vo;    /* virtual offset: the row's candidate buffer begins at vo / alpha */
};

/*
 * Row r's extent. Offsets are clamped into [0, n] so that no row reaches outside
 * the input or its buffer share; for valid offsets the clamp changes nothing.
 * Buffer shares do not overlap: floor(a/alpha) + floor(b/alpha) <= floor((a+b)/alpha).
 */
__device__ __forceinline__ air_row_extent air_row(const air_params& P, int64_t row) {
  const topk_row_span s = topk_row(P.offsets, P.n, P.ld, row); /* common/rows.cuh */
  air_row_extent r;
  r.start = s.start;
  r.len = s.len;
  r.vo = P.offsets ? s.start : (row - P.row0) * P.n;
  return r;
}

/* Elements per thread per tile: 16 (8 for 8-byte elements), loads strided by the block. */
template <typename RawT>
__host__ __device__ constexpr int air_items() {
  return sizeof(RawT) == 8 ? 8 : 16;
}

/* Writes one result to slot `slot` of row `row`. */
template <typename RawT, typename KeyT, typename IdxT>
__device__ __forceinline__ void air_emit(const air_params& P, int64_t row, int64_t slot, RawT raw, KeyT key,
                                         IdxT idx) {
  const int64_t o = row * P.k + slot;
  if (P.out_mode == AIR_OUT_DIRECT) {
    ((RawT*)P.values)[o] = raw;
    if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = (int64_t)idx;
    else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = (int32_t)idx;
  } else {
    const unsigned long long sk = (unsigned long long)(KeyT)~key; /* smaller is better */
    if (P.out_mode == AIR_OUT_COMPOSITE) {
      P.sort_key[o] = (sk << P.cshift) | (unsigned long long)idx;
    } else {
      P.sort_key[o] = sk;
      P.sort_idx[o] = (unsigned long long)idx;
    }
  }
}

/* Pads slot `slot` of a row shorter than k: index -1 and the worst value (sorted: sorts last). */
template <typename RawT>
__device__ __forceinline__ void air_pad(const air_params& P, int64_t row, int64_t slot) {
  const int64_t o = row * P.k + slot;
  if (P.out_mode == AIR_OUT_DIRECT) {
    ((RawT*)P.values)[o] = (RawT)P.worst_bits;
    if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = -1;
    else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = -1;
  } else {
    P.sort_key[o] = ~0ull;
    if (P.out_mode == AIR_OUT_PAIRS) P.sort_idx[o] = ~0ull;
  }
}

/* A row with len <= k: element s to slot s (index order), padding after it. */
template <topk_dtype DT, typename IdxT>
__device__ void air_copy_row(const air_params& P, int64_t row, const air_row_extent& R, int64_t first,
                             int64_t stride) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  const RawT* in_row = (const RawT*)P.in + R.start;
  for (int64_t s = first; s < P.k; s += stride) {
    if (s < R.len) {
      const RawT raw = in_row[s];
      air_emit(P, row, s, raw, topk_to_rank_key<DT>(raw, P.smallest != 0), (IdxT)s);
    } else {
      air_pad<RawT>(P, row, s);
    }
  }
}

/* COPY path (k >= n, unsorted, uniform rows): a thread per output slot, grid-stride over the
 * batch x k slots; slot s of row r is element s (s < n) or padding. One launch, no workspace. */
template <topk_dtype DT, typename IdxT>
__global__ void __launch_bounds__(AIR_THREADS) air_copy_kernel(const air_params P, int64_t batch) {
  const int64_t slots = batch * P.k;
  for (int64_t o = (int64_t)blockIdx.x * AIR_THREADS + threadIdx.x; o < slots; o += (int64_t)gridDim.x * AIR_THREADS) {
    const int64_t row = o / P.k, s = o - row * P.k;
    air_copy_row<DT, IdxT>(P, row, air_row(P, row), s, P.k); /* stride k: slot s only */
  }
}

/* Inclusive sum of x over lanes 0..lane of the warp (all 32 lanes must call it). */
template <typename T>
__device__ __forceinline__ T air_warp_incl_sum(T x) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  return x;
}

/*
 * Claims n consecutive slots of *counter for each lane of the warp, one atomic a warp (n may be
 * 0; a 64-bit T may pack two counters, which then never carry into each other). Returns the
 * lane's first slot. Every lane of the warp must call it.
 */
template <typename T>
__device__ __forceinline__ T air_warp_claim(T n, T* counter) {
  const T incl = air_warp_incl_sum(n);
  const T total = __shfl_sync(0xffffffffu, incl, 31);
  T base = 0;
  if ((threadIdx.x & 31) == 31 && total) base = atomicAdd(counter, total);
  base = __shfl_sync(0xffffffffu, base, 31);
  return base + incl - n;
}

/* The AND of a and the OR of o over the warp's 32 lanes, in every lane (REDUX, a 32-bit
 * half each: four instructions where shuffles took ten rounds). */
__device__ __forceinline__ void air_warp_and_or(unsigned long long& a, unsigned long long& o) {
  const unsigned alo = __reduce_and_sync(0xffffffffu, (unsigned)a), ahi = __reduce_and_sync(0xffffffffu, (unsigned)(a >> 32));
  const unsigned olo = __reduce_or_sync(0xffffffffu, (unsigned)o), ohi = __reduce_or_sync(0xffffffffu, (unsigned)(o >> 32));
  a = (unsigned long long)ahi << 32 | alo;
  o = (unsigned long long)ohi << 32 | olo;
}

/*
 * Exclusive block-wide sum of v over the AIR_THREADS threads; *total gets the sum
 * of all. Every thread must call it (it synchronises twice; s_warp is free again
 * when it returns).
 */
template <typename T>
__device__ __forceinline__ T air_block_excl_scan(T v, T* s_warp, T* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const T x = air_warp_incl_sum(v);
  if (lane == 31) s_warp[warp] = x;
  __syncthreads();
  T before = 0, all = 0;
#pragma unroll
  for (int w = 0; w < AIR_WARPS; ++w) {
    const T s = s_warp[w];
    if (w < warp) before += s;
    all += s;
  }
  __syncthreads();
  *total = all;
  return before + x - v;
}

/*
 * Chooses the digit of the k_rem-th best candidate from a shared histogram of
 * nbins bins: the unique d with (count of digits > d) < k_rem <= (count of digits
 * >= d) (sec. 2.3 "find target digit", over a suffix sum because larger is
 * better). Needs 1 <= k_rem <= sum of the histogram (invariant I1). Every thread
 * must call it; *s_choice is valid for all when it returns.
 */
template <typename IdxT>
__device__ void air_choose(const IdxT* s_hist, int nbins, IdxT k_rem, IdxT* s_warp, air_choice<IdxT>* s_choice) {
  if (threadIdx.x == 0) { /* defined result even if the invariant were broken */
    s_choice->digit = 0;
    s_choice->greater = 0;
    s_choice->count = 0;
  }
  /* Thread t owns positions [t * per, (t + 1) * per) of the bins in descending digit order. */
  const int per = (nbins + AIR_THREADS - 1) / AIR_THREADS;
  const int j0 = threadIdx.x * per;
  IdxT sum = 0;
  for (int q = 0; q < per; ++q) {
    const int j = j0 + q;
    if (j < nbins) sum += s_hist[nbins - 1 - j];
  }
  IdxT total;
  IdxT greater = air_block_excl_scan<IdxT>(sum, s_warp, &total);
  for (int q = 0; q < per; ++q) {
    const int j = j0 + q;
    if (j >= nbins) break;
    const int d = nbins - 1 - j;
    const IdxT c = s_hist[d];
    if (greater < k_rem && greater + c >= k_rem) {
      s_choice->digit = d;
      s_choice->greater = greater;
      s_choice->count = c;
    }
    greater += c;
  }
  __syncthreads();
}

/*
 * Compares an element's composite key (rank key, ~index) with the chosen prefix
 * over the known levels: 1 if the element's prefix is greater (a result), 0 if it
 * matches (a candidate), -1 if smaller (discarded).
 */
template <typename KeyT, int KB, typename IdxT>
__device__ __forceinline__ int air_cmp(KeyT key, IdxT idx, int lk, unsigned long long pk, int li,
                                       unsigned long long pi, int ib, unsigned long long imask) {
  if (lk > 0) {
    const KeyT kp = (KeyT)(key >> (KB - lk));
    const KeyT want = (KeyT)pk;
    if (kp != want) return kp > want ? 1 : -1;
  }
  if (li > 0) {
    const unsigned long long ip = ((~(unsigned long long)idx) & imask) >> (ib - li);
    if (ip != pi) return ip > pi ? 1 : -1;
  }
  return 0;
}

/*
 * Leading bits every key of a staged row shares (the one-block and cluster paths):
 * their passes start below them, so a row whose keys crowd one bin of the first digits
 * (Dr. Top-k's delegates, the maxima of their subranges; radix-adversarial data)
 * skips those passes and their serialised shared-memory atomics on that bin.
 * air_block_and_or: the AND and OR of every thread's a and o (64-bit words holding
 * KB-bit keys, identity ~0 and 0), for all threads; s_ao holds 2 x AIR_WARPS words.
 * air_common_bits: how many leading bits of KB the AND and OR agree on (KB: all equal).
 */
template <int NWARP = AIR_WARPS>
__device__ __forceinline__ void air_block_and_or(unsigned long long& a, unsigned long long& o,
                                                 unsigned long long* s_ao) {
  air_warp_and_or(a, o);
  if ((threadIdx.x & 31) == 0) {
    s_ao[threadIdx.x >> 5] = a;
    s_ao[NWARP + (threadIdx.x >> 5)] = o;
  }
  __syncthreads();
  /* lane w folds warp w's words: every thread reading all of them (32 16-byte loads a thread
   * at 1024 threads) throttled the shared-memory pipe for ~1 us (ncu, docs/perf-notes.md v0.21) */
  static_assert(NWARP <= 32, "a lane a warp");
  const unsigned lane = threadIdx.x & 31;
  a = lane < NWARP ? s_ao[lane] : ~0ull;
  o = lane < NWARP ? s_ao[NWARP + lane] : 0ull;
  air_warp_and_or(a, o);
  __syncthreads(); /* s_ao may be reused */
}
template <int KB>
__device__ __forceinline__ int air_common_bits(unsigned long long a, unsigned long long o) {
  const unsigned long long x = (a ^ o) & (KB == 64 ? ~0ull : ((1ull << KB) - 1ull));
  return x == 0 ? KB : __clzll(x) - (64 - KB);
}

__device__ __forceinline__ unsigned long long air_index_mask(int ib) {
  return ib >= 64 ? ~0ull : ((1ull << ib) - 1ull);
}

/* ------------------------------------------------------------------ multi-block path */

/*
 * Loads tile t (AIR_THREADS x ITEMS elements from tile t x TILE) of a pass's source:
 * raw bits, and the row index of each (the position for the input, the stored index
 * for a candidate buffer). With `vec` (16-byte aligned source) thread x takes
 * 16-byte groups x, x + AIR_THREADS, ... (whole-tile 128-bit loads); otherwise
 * elements x, x + AIR_THREADS, ... Buffers are read through L2 (__ldcg): the fused
 * path's blocks wrote them earlier in the same launch. @return bit j set iff item j
 * is inside the source.
 */
template <typename RawT, typename IdxT, int ITEMS>
__device__ __forceinline__ unsigned air_load_tile(const RawT* src_raw, const IdxT* src_idx, int64_t t, int64_t count,
                                                  bool vec, RawT (&raw)[ITEMS], IdxT (&idx)[ITEMS]) {
  constexpr int V = 16 / (int)sizeof(RawT);
  constexpr int64_t TILE = (int64_t)AIR_THREADS * ITEMS;
  static_assert(ITEMS % V == 0 && ITEMS <= 32, "a tile is whole 16-byte groups");
  const int64_t base = t * TILE;
  if (vec && base + TILE <= count) {
#pragma unroll
    for (int g = 0; g < ITEMS / V; ++g) {
      const int64_t p0 = base + ((int64_t)g * AIR_THREADS + threadIdx.x) * V;
      const uint4 w = src_idx ? __ldcg((const uint4*)(src_raw + p0)) : *(const uint4*)(src_raw + p0);
      memcpy(&raw[g * V], &w, 16);
#pragma unroll
      for (int e = 0; e < V; ++e) idx[g * V + e] = src_idx ? __ldcg(&src_idx[p0 + e]) : (IdxT)(p0 + e);
    }
    return ITEMS == 32 ? ~0u : (1u << ITEMS) - 1u;
  }
  unsigned valid = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int64_t i = vec ? base + ((int64_t)(j / V) * AIR_THREADS + threadIdx.x) * V + (j % V)
                          : base + threadIdx.x + (int64_t)j * AIR_THREADS;
    raw[j] = 0;
    idx[j] = 0;
    if (i < count) {
      raw[j] = src_idx ? __ldcg(&src_raw[i]) : src_raw[i];
      idx[j] = src_idx ? __ldcg(&src_idx[i]) : (IdxT)i;
      valid |= 1u << j;
    }
  }
  return valid;
}

/*
 * What pass p of a row starts from: the choice of passes 0..p-1. The multi-launch
 * path keeps it in the row state between launches; the fused path in registers.
 */
template <typename IdxT>
struct air_pass_in {
  IdxT k_rem;                 /* results still needed among the candidates */
  IdxT cand;                  /* C: elements matching the prefix */
  IdxT src_len;               /* elements in the buffer this pass reads (src != 0) */
  int src;                    /* 0: the input row; 1 or 2: candidate buffer 0 or 1 */
  int level_key, level_idx;   /* known prefix bits */
  unsigned long long pk, pi;  /* the prefix of the k-th composite key */
};

/* Pass 0's starting point for a row of len > k elements. */
template <typename IdxT>
__device__ __forceinline__ air_pass_in<IdxT> air_first_pass_in(const air_params& P, int64_t len) {
  air_pass_in<IdxT> in;
  in.k_rem = (IdxT)P.k;
  in.cand = (IdxT)len;
  in.src_len = 0;
  in.src = 0;
  in.level_key = 0;
  in.level_idx = 0;
  in.pk = 0;
  in.pi = 0;
  return in;
}

/* Sec. 3.2: pass p buffers its candidates iff C_p <= len / alpha (never pass 0: C_0 = len). */
template <typename IdxT>
__device__ __forceinline__ bool air_writes_buffer(const air_params& P, const air_pass_desc& S, const air_row_extent& R,
                                                  const air_pass_in<IdxT>& in) {
  return S.pass > 0 && in.cand <= (IdxT)(R.len / P.alpha);
}

/* The sampled start's stage: candidates (raw bits and index) in 8 KB of shared memory. */
enum { AIR_START_STAGE_BYTES = 8192 };
template <typename RawT, typename IdxT>
__host__ __device__ constexpr int air_start_stage() {
  return AIR_START_STAGE_BYTES / (int)(sizeof(RawT) + sizeof(IdxT));
}
/* The stage's raw bits start after its indices, rounded up to 16 bytes; the launch's dynamic
 * shared memory is AIR_START_SMEM_BYTES. */
template <typename IdxT>
__host__ __device__ constexpr int air_start_raw_offset(int stage) {
  return (stage * (int)sizeof(IdxT) + 15) & ~15;
}
enum { AIR_START_SMEM_BYTES = AIR_START_STAGE_BYTES + 16 };

/*
 * The sampled start's staged candidates (s_raw, s_idx: n of them) to the candidate buffer:
 * one slot claim for the lot. Block-uniform; every thread must call it.
 */
template <typename RawT, typename IdxT>
__device__ void air_stage_flush(const RawT* s_raw, const IdxT* s_idx, IdxT n, IdxT* buf_cnt, IdxT* s_base,
                                RawT* dst_raw, IdxT* dst_idx, IdxT cap) {
  __syncthreads(); /* the stage's writes */
  if (threadIdx.x == 0) s_base[1] = atomicAdd(buf_cnt, n);
  __syncthreads();
  const IdxT b = s_base[1];
  for (IdxT i = threadIdx.x; i < n; i += AIR_THREADS)
    if (b + i < cap) {
      dst_raw[b + i] = s_raw[i];
      dst_idx[b + i] = s_idx[i];
    }
  __syncthreads(); /* the stage is free again */
}

/*
 * The body of one pass over tiles first_tile, first_tile + tile_stride, ... of the
 * pass's source (Algorithm 1 lines 10-22): filters every element by the prefix,
 * counts the digit of each candidate in s_hist (zeroed by the caller), and, when
 * the pass buffers (`writing`), writes results to the output (slots from *out_cnt)
 * and candidates to the buffer (slots from *buf_cnt). Block-uniform control flow:
 * every thread must call it.
 */
template <topk_dtype DT, typename IdxT>
__device__ void air_filter_tiles(const air_params& P, const air_pass_desc& S, int64_t row, const air_row_extent& R,
                                 const air_pass_in<IdxT>& in, bool writing, IdxT* s_hist, unsigned int* s_warp32,
                                 IdxT* s_base, IdxT* out_cnt, IdxT* buf_cnt, int64_t first_tile, int64_t tile_stride) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  constexpr int ITEMS = air_items<RawT>();
  constexpr int64_t TILE = (int64_t)AIR_THREADS * ITEMS;
  const bool smallest = P.smallest != 0;
  const IdxT cap = (IdxT)(R.len / P.alpha);
  const int64_t buf_base = R.vo / P.alpha;
  const int nbins = 1 << S.width;
  const unsigned long long imask = air_index_mask(P.ib);
  const int dshift = S.is_idx ? (P.ib - S.level_idx - S.width) : (KB - S.level_key - S.width);

  const RawT* src_raw = in.src == 0 ? (const RawT*)P.in + R.start : (const RawT*)P.buf_raw[in.src - 1] + buf_base;
  const IdxT* src_idx = in.src == 0 ? (const IdxT*)0 : (const IdxT*)P.buf_idx[in.src - 1] + buf_base;
  RawT* dst_raw = (RawT*)P.buf_raw[S.pass & 1] + buf_base;
  IdxT* dst_idx = (IdxT*)P.buf_idx[S.pass & 1] + buf_base;
  const int64_t count = in.src == 0 ? R.len : (int64_t)in.src_len;
  const int64_t ntiles = (count + TILE - 1) / TILE;
  const bool vec = (((uintptr_t)src_raw) & 15) == 0; /* block-uniform: one row's source */

  for (int64_t t = first_tile; t < ntiles; t += tile_stride) { /* block-uniform trip count */
    RawT raw[ITEMS];
    IdxT idx[ITEMS];
    const unsigned valid = air_load_tile<RawT, IdxT, ITEMS>(src_raw, src_idx, t, count, vec, raw, idx);
    signed char cls[ITEMS];
    unsigned int nres = 0, ncand = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      cls[j] = -1;
      if ((valid >> j) & 1u) {
        const KeyT key = topk_to_rank_key<DT>(raw[j], smallest);
        const int c = air_cmp<KeyT, KB, IdxT>(key, idx[j], S.level_key, in.pk, S.level_idx, in.pi, P.ib, imask);
        cls[j] = (signed char)c;
        if (c == 0) {
          const int d = S.is_idx ? (int)((((~(unsigned long long)idx[j]) & imask) >> dshift) & (unsigned)(nbins - 1))
                                 : (int)((key >> dshift) & (KeyT)(nbins - 1));
          atomicAdd(&s_hist[d], (IdxT)1);
          ++ncand;
        } else if (c > 0) {
          ++nres;
        }
      }
    }
    if (writing) { /* block-uniform */
      unsigned int tot;
      const unsigned int ex = air_block_excl_scan<unsigned int>(nres | (ncand << 16), s_warp32, &tot);
      if (threadIdx.x == 0) {
        const IdxT tr = (IdxT)(tot & 0xFFFFu), tc = (IdxT)(tot >> 16);
        s_base[0] = tr ? atomicAdd(out_cnt, tr) : (IdxT)0;
        s_base[1] = tc ? atomicAdd(buf_cnt, tc) : (IdxT)0;
      }
      __syncthreads();
      IdxT ro = s_base[0] + (IdxT)(ex & 0xFFFFu);
      IdxT co = s_base[1] + (IdxT)(ex >> 16);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        if (cls[j] > 0) {
          if ((int64_t)ro < P.k) air_emit(P, row, (int64_t)ro, raw[j], topk_to_rank_key<DT>(raw[j], smallest), idx[j]);
          ++ro;
        } else if (cls[j] == 0) {
          if (co < cap) {
            dst_raw[co] = raw[j];
            dst_idx[co] = idx[j];
          }
          ++co;
        }
      }
    }
  }
}

/* The word a 16-byte group of keys is handled in: 32 bits (two 16-bit keys, or one), or 64. */
template <int KB> struct air_cword { typedef unsigned type; };
template <> struct air_cword<64> { typedef unsigned long long type; };

/* Defined with the cluster path below: rank keys of a 16-byte group, and whether one exceeds thr. */
template <topk_dtype DT>
__device__ __forceinline__ uint4 air_rank_keys(const uint4& raw, bool smallest);
__device__ __forceinline__ bool air_any_gt(const uint4& v, unsigned thr, int kb);
__device__ __forceinline__ bool air_any_gt(const uint4& v, unsigned long long thr, int);

/*
 * The sampled start's pass 0 over tiles first_tile, first_tile + tile_stride, ... of the
 * row: counts the first digit of every element >= the bound in s_hist and writes those
 * elements to candidate buffer 0 (slots from *buf_cnt, counted even past the buffer's end).
 * They are staged in shared memory (s_stage_*: stage_cap entries) and claim buffer slots once
 * per stage: a row with many ties at the bound has a candidate in most tiles, and a claim per
 * tile on the row's one counter serialised in L2 (radix-adversarial 2^30: 2.2 against 2.08 ms).
 * Block-uniform control flow: every thread must call it.
 */
template <topk_dtype DT, typename IdxT>
__device__ void air_start_tiles(const air_params& P, const air_pass_desc& S, const air_row_extent& R,
                                unsigned long long bound64, IdxT* s_hist, unsigned int* s_warp32, IdxT* s_base,
                                IdxT* buf_cnt, typename topk_dtype_traits<DT>::raw_t* s_stage_raw, IdxT* s_stage_idx,
                                int stage_cap, int64_t first_tile, int64_t tile_stride) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  /* 16-bit elements: 32 a thread (64 bytes in flight, as for 4-byte ones); 1.04-1.13x faster
   * than 16 on bf16 rows of 2^28 and 2^30 (docs/perf-notes.md v0.30) */
  constexpr int ITEMS = sizeof(RawT) == 2 ? 32 : air_items<RawT>();
  constexpr int V = 16 / (int)sizeof(RawT);
  constexpr int64_t TILE = (int64_t)AIR_THREADS * ITEMS;
  const bool smallest = P.smallest != 0;
  const KeyT bound = (KeyT)bound64;
  const IdxT cap = (IdxT)(R.len / P.alpha);
  const int64_t buf_base = R.vo / P.alpha;
  const int nbins = 1 << S.width, dshift = KB - S.width;
  const RawT* src_raw = (const RawT*)P.in + R.start;
  RawT* dst_raw = (RawT*)P.buf_raw[0] + buf_base;
  IdxT* dst_idx = (IdxT*)P.buf_idx[0] + buf_base;
  const int64_t ntiles = (R.len + TILE - 1) / TILE;
  const bool vec = (((uintptr_t)src_raw) & 15) == 0; /* block-uniform: one row's source */
  IdxT staged = 0;                                    /* block-uniform */
  /* A 16-byte group is tested as a whole first (keys > bound - 1, both halves of a word at once
   * for 16-bit keys), then element by element only where it passes: few groups do. */
  typedef typename air_cword<KB>::type CT;
  const CT gthr = KB == 16 ? (CT)((bound - 1u) & 0xFFFFu) * (CT)0x10001u : (CT)(KeyT)(bound - 1u);
  const bool group_test = bound > 0; /* block-uniform; bound 0 takes every element */

  for (int64_t t = first_tile; t < ntiles; t += tile_stride) {
    RawT raw[ITEMS];
    IdxT idx[ITEMS]; /* unused: positions are recomputed where an element is written */
    const unsigned valid = air_load_tile<RawT, IdxT, ITEMS>(src_raw, (const IdxT*)0, t, R.len, vec, raw, idx);
    const bool whole = vec && group_test && (t + 1) * TILE <= R.len; /* air_load_tile's 16-byte groups */
    unsigned take = 0;
#pragma unroll
    for (int g = 0; g < ITEMS / V; ++g) {
      if (whole) {
        uint4 w;
        memcpy(&w, &raw[g * V], 16);
        if (!air_any_gt(air_rank_keys<DT>(w, smallest), gthr, KB)) continue;
      }
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const int j = g * V + e;
        const KeyT key = topk_to_rank_key<DT>(raw[j], smallest);
        if (((valid >> j) & 1u) && key >= bound) {
          take |= 1u << j;
          atomicAdd(&s_hist[(int)((key >> dshift) & (KeyT)(nbins - 1))], (IdxT)1);
        }
      }
    }
    if (!__syncthreads_or(take != 0)) continue; /* most tiles: one barrier */
    unsigned int tot;
    const unsigned int ex = air_block_excl_scan<unsigned int>((unsigned)__popc(take), s_warp32, &tot);
    const int64_t base = t * TILE;
    IdxT* o_idx;
    RawT* o_raw;
    IdxT o;
    if ((IdxT)tot > (IdxT)stage_cap) { /* more than a stage: straight to the buffer */
      if (threadIdx.x == 0) s_base[1] = atomicAdd(buf_cnt, (IdxT)tot);
      __syncthreads();
      o = s_base[1] + (IdxT)ex;
      o_raw = dst_raw;
      o_idx = dst_idx;
    } else {
      if (staged + (IdxT)tot > (IdxT)stage_cap) {
        air_stage_flush<RawT, IdxT>(s_stage_raw, s_stage_idx, staged, buf_cnt, s_base, dst_raw, dst_idx, cap);
        staged = 0;
      }
      o = staged + (IdxT)ex;
      staged += (IdxT)tot;
      o_raw = s_stage_raw;
      o_idx = s_stage_idx;
    }
    const bool direct = o_raw == dst_raw;
    /* the element is read again (an L1 hit, in the rare tile that has one) rather than held
     * across the scan: 32 16-bit elements a thread held spilled */
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
      if ((take >> j) & 1u) {
        if (!direct || o < cap) {
          const int64_t pos = vec ? base + ((int64_t)(j / V) * AIR_THREADS + threadIdx.x) * V + (j % V)
                                  : base + threadIdx.x + (int64_t)j * AIR_THREADS;
          o_raw[o] = src_raw[pos];
          o_idx[o] = (IdxT)pos;
        }
        ++o;
      }
  }
  if (staged > 0) air_stage_flush<RawT, IdxT>(s_stage_raw, s_stage_idx, staged, buf_cnt, s_base, dst_raw, dst_idx, cap);
}

/*
 * After pass S, from the row's complete histogram in s_hist: chooses the digit of
 * the k_rem-th candidate (lines 23-28) and returns what the next pass starts from;
 * *mode gets AIR_FINAL when the row is done (C == k_rem: early stop, sec. 3.3; or
 * the last pass), else AIR_RUNNING. Every thread must call it; every thread gets
 * the same result.
 */
template <typename IdxT>
__device__ air_pass_in<IdxT> air_after_pass(const air_pass_desc& S, const air_pass_in<IdxT>& in, bool writing,
                                            const IdxT* s_hist, IdxT* s_warp, air_choice<IdxT>* s_choice, int* mode) {
  air_choose<IdxT>(s_hist, 1 << S.width, in.k_rem, s_warp, s_choice);
  const IdxT greater = s_choice->greater, c = s_choice->count;
  const unsigned long long d = (unsigned long long)s_choice->digit;
  air_pass_in<IdxT> out;
  out.pk = S.is_idx ? in.pk : ((in.pk << S.width) | d);
  out.pi = S.is_idx ? ((in.pi << S.width) | d) : in.pi;
  out.level_key = S.level_key + (S.is_idx ? 0 : S.width);
  out.level_idx = S.level_idx + (S.is_idx ? S.width : 0);
  out.k_rem = in.k_rem - greater;
  out.cand = c;
  out.src = writing ? 1 + (S.pass & 1) : 0;
  out.src_len = writing ? in.cand : (IdxT)0;
  *mode = (c == out.k_rem || S.last) ? AIR_FINAL : AIR_RUNNING;
  return out;
}

/*
 * The last filter (Algorithm 1 line 5) over tiles first_tile, first_tile +
 * tile_stride, ...: reads what the next pass would have read and writes every
 * element whose prefix beats the chosen one, plus the needed elements that match
 * it: all of them when C == k_rem (early stop, or after the index passes), else
 * (nondeterministic) the first k_rem to claim a back slot (*back_cnt).
 */
template <topk_dtype DT, typename IdxT>
__device__ void air_final_tiles(const air_params& P, int64_t row, const air_row_extent& R, const air_pass_in<IdxT>& in,
                                unsigned int* s_warp32, IdxT* s_base, IdxT* out_cnt, IdxT* back_cnt,
                                int64_t first_tile, int64_t tile_stride) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  constexpr int ITEMS = air_items<RawT>();
  constexpr int64_t TILE = (int64_t)AIR_THREADS * ITEMS;
  const bool smallest = P.smallest != 0;
  const bool take_all = in.cand == in.k_rem;
  const unsigned long long imask = air_index_mask(P.ib);
  const int64_t buf_base = R.vo / P.alpha;

  const RawT* src_raw = in.src == 0 ? (const RawT*)P.in + R.start : (const RawT*)P.buf_raw[in.src - 1] + buf_base;
  const IdxT* src_idx = in.src == 0 ? (const IdxT*)0 : (const IdxT*)P.buf_idx[in.src - 1] + buf_base;
  const int64_t count = in.src == 0 ? R.len : (int64_t)in.src_len;
  const int64_t ntiles = (count + TILE - 1) / TILE;
  const bool vec = (((uintptr_t)src_raw) & 15) == 0; /* block-uniform: one row's source */

  for (int64_t t = first_tile; t < ntiles; t += tile_stride) {
    RawT raw[ITEMS];
    IdxT idx[ITEMS];
    const unsigned valid = air_load_tile<RawT, IdxT, ITEMS>(src_raw, src_idx, t, count, vec, raw, idx);
    signed char cls[ITEMS]; /* 1: front slot, 0: back slot (nondeterministic ties), -1: not taken */
    unsigned int nf = 0, ne = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      cls[j] = -1;
      if ((valid >> j) & 1u) {
        const KeyT key = topk_to_rank_key<DT>(raw[j], smallest);
        const int c = air_cmp<KeyT, KB, IdxT>(key, idx[j], in.level_key, in.pk, in.level_idx, in.pi, P.ib, imask);
        if (c > 0 || (c == 0 && take_all)) {
          cls[j] = 1;
          ++nf;
        } else if (c == 0) {
          cls[j] = 0;
          ++ne;
        }
      }
    }
    unsigned int tot;
    const unsigned int ex = air_block_excl_scan<unsigned int>(nf | (ne << 16), s_warp32, &tot);
    if (threadIdx.x == 0) {
      const IdxT tf = (IdxT)(tot & 0xFFFFu), te = (IdxT)(tot >> 16);
      s_base[0] = tf ? atomicAdd(out_cnt, tf) : (IdxT)0;
      s_base[1] = te ? atomicAdd(back_cnt, te) : (IdxT)0;
    }
    __syncthreads();
    IdxT fo = s_base[0] + (IdxT)(ex & 0xFFFFu);
    IdxT bo = s_base[1] + (IdxT)(ex >> 16);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      if (cls[j] == 1) {
        if ((int64_t)fo < P.k) air_emit(P, row, (int64_t)fo, raw[j], topk_to_rank_key<DT>(raw[j], smallest), idx[j]);
        ++fo;
      } else if (cls[j] == 0) {
        if (bo < in.k_rem)
          air_emit(P, row, P.k - 1 - (int64_t)bo, raw[j], topk_to_rank_key<DT>(raw[j], smallest), idx[j]);
        ++bo;
      }
    }
  }
}

/*
 * Copies a row's complete global histogram (nbins <= AIR_MAX_BINS) into shared
 * memory through L2 (the other blocks' atomics), optionally zeroing it. All loads
 * are issued before any store: a loop that alternates them waits a full L2 round
 * trip per bin group (microseconds per pass). Every thread must call it; it ends
 * with __syncthreads.
 */
template <typename IdxT>
__device__ __forceinline__ void air_fetch_hist(IdxT* g_hist, IdxT* s_hist, int nbins, bool zero) {
  constexpr int PER = AIR_MAX_BINS / AIR_THREADS;
  IdxT v[PER];
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int b = threadIdx.x + j * AIR_THREADS;
    v[j] = b < nbins ? __ldcg(&g_hist[b]) : (IdxT)0;
  }
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int b = threadIdx.x + j * AIR_THREADS;
    if (b < nbins) {
      s_hist[b] = v[j];
      if (zero) g_hist[b] = 0;
    }
  }
  __syncthreads();
}

/*
 * MULTI's sampled start. A gather kernel copies a sample of every row (air_sample_kernel), the
 * pass kernel selects its start_rank-th largest key over the key passes (its own row states,
 * never buffering), and air_start_kernel, pass 0 with that key as a bound, counts and writes
 * to candidate buffer 0 only the elements >= the bound, and nothing else. If at least k
 * elements are >= the bound, the k results are among them, so the later passes read the
 * buffer alone: histograms that miss elements below the k-th key choose the same digits
 * (the suffix sums down to the k-th key's bin count every element >= it), and the counts they
 * give are those of the buffer, which is what the next pass reads. Otherwise (or where the
 * buffer overflowed) the row goes to AIR_RESTART and pass 0 runs again without the bound.
 * The start needs one read of the row where the plain passes need two or three.
 *
 * air_start_bound: the bound for the rows of this launch, false where the sample gives none
 * (no sample state, or more sample elements >= the key than start_limit: ties, or a
 * sample too crowded for the buffer).
 */
template <typename KeyT, typename IdxT>
__device__ __forceinline__ bool air_start_bound(const air_params& P, unsigned long long* bound) {
  if (!P.start_state) return false;
  constexpr int KB = (int)sizeof(KeyT) * 8;
  const air_row_state<IdxT>* ss = (const air_row_state<IdxT>*)P.start_state + blockIdx.y;
  if (ss->mode != AIR_FINAL || ss->level_key <= 0) return false;
  /* sample elements >= the bound: those beating the k-th key's prefix, and the ones matching it */
  const int64_t above = P.start_rank - (int64_t)ss->k_rem + (int64_t)ss->len;
  if (above > P.start_limit) return false;
  *bound = ss->level_key >= KB ? ss->prefix_key : ss->prefix_key << (KB - ss->level_key);
  return true;
}

/*
 * The sample of air_start_bound: rows row0.. of the input, m elements each, in groups of
 * `group` consecutive elements (one 32-byte sector) spread evenly over the row, to
 * `dst` (rows x m). Grid-stride over the elements.
 */
template <typename RawT>
__global__ void __launch_bounds__(AIR_THREADS) air_sample_kernel(const RawT* in, int64_t row0, int64_t rows, int64_t n,
                                                                 int64_t ld, int64_t m, int group, RawT* dst) {
  const int64_t total = rows * m, groups = m / group, stride = n / groups;
  for (int64_t i = (int64_t)blockIdx.x * AIR_THREADS + threadIdx.x; i < total; i += (int64_t)gridDim.x * AIR_THREADS) {
    const int64_t r = i / m, j = i - r * m;
    dst[i] = in[(row0 + r) * ld + (j / group) * stride + j % group];
  }
}

/*
 * The end of a pass launch in every block: merges the block's histogram (s_hist, nbins) into
 * the row's (g_hist) and counts the block finished. True in the row's last block (every
 * thread), which then sees every other block's histogram, buffer and output writes
 * (invariant I4).
 */
template <typename IdxT>
__device__ __forceinline__ bool air_merge_last(IdxT* g_hist, const IdxT* s_hist, int nbins, unsigned int* finished,
                                               int* s_last) {
  __syncthreads();
  for (int b = threadIdx.x; b < nbins; b += AIR_THREADS) {
    const IdxT v = s_hist[b];
    if (v) atomicAdd(&g_hist[b], v);
  }
  __threadfence(); /* this thread's histogram, buffer and output writes before the count below */
  __syncthreads();
  if (threadIdx.x == 0) *s_last = atomicAdd(finished, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!*s_last) return false;
  __threadfence();
  return true;
}

/* The last block's choice to the row state, for the next launch (thread 0). */
template <typename IdxT>
__device__ __forceinline__ void air_store_pass(air_row_state<IdxT>* st, const air_pass_in<IdxT>& out, int mode) {
  if (threadIdx.x == 0) {
    st->prefix_key = out.pk;
    st->prefix_idx = out.pi;
    st->level_key = out.level_key;
    st->level_idx = out.level_idx;
    st->k_rem = out.k_rem;
    st->len = out.cand;
    st->src = out.src;
    st->src_len = out.src_len;
    st->mode = mode;
    st->buf_cnt = 0;
    st->finished_blocks = 0;
  }
}

/*
 * One pass launch (Algorithm 1's iteration_fused_kernel). Grid: x = blocks of a row,
 * y = rows of this launch (row P.row0 + blockIdx.y, state and histogram index
 * blockIdx.y). Pass 0 also serves rows with len <= k (copied whole, padded). S.retry:
 * pass 0 for the rows whose sampled start failed (AIR_RESTART); the others return.
 */
template <topk_dtype DT, typename IdxT>
__global__ void __launch_bounds__(AIR_THREADS, sizeof(IdxT) == 4 ? AIR_PASS_MIN_BLOCKS : 1)
air_pass_kernel(const air_params P, const air_pass_desc S) {
  __shared__ IdxT s_hist[AIR_MAX_BINS];
  __shared__ IdxT s_warp[AIR_WARPS];
  __shared__ unsigned int s_warp32[AIR_WARPS];
  __shared__ IdxT s_base[2];
  __shared__ int s_last;
  __shared__ air_choice<IdxT> s_choice;

  const int64_t row = P.row0 + blockIdx.y;
  air_row_state<IdxT>* st = (air_row_state<IdxT>*)P.state + blockIdx.y;
  IdxT* g_hist = (IdxT*)P.hist + (size_t)blockIdx.y * P.hist_bins;
  const air_row_extent R = air_row(P, row);
  if (S.retry && st->mode != AIR_RESTART) return; /* the start served this row */

  /* The pass's inputs: from the arguments for pass 0, else from the previous pass's last block. */
  air_pass_in<IdxT> in;
  if (S.pass == 0) {
    if (R.len <= P.k) {
      air_copy_row<DT, IdxT>(P, row, R, (int64_t)blockIdx.x * AIR_THREADS + threadIdx.x,
                             (int64_t)gridDim.x * AIR_THREADS);
      if (blockIdx.x == 0 && threadIdx.x == 0) st->mode = AIR_DONE;
      return;
    }
    in = air_first_pass_in<IdxT>(P, R.len);
  } else {
    if (st->mode != AIR_RUNNING) return; /* copied, or stopped early: the same for every block of the row */
    in.k_rem = st->k_rem;
    in.cand = st->len;
    in.src = st->src;
    in.src_len = st->src_len;
    in.pk = st->prefix_key;
    in.pi = st->prefix_idx;
    in.level_key = S.level_key;
    in.level_idx = S.level_idx;
  }
  const bool writing = air_writes_buffer(P, S, R, in);
  const int nbins = 1 << S.width;
  for (int b = threadIdx.x; b < nbins; b += AIR_THREADS) s_hist[b] = 0;
  __syncthreads();
  air_filter_tiles<DT, IdxT>(P, S, row, R, in, writing, s_hist, s_warp32, s_base, &st->out_cnt, &st->buf_cnt,
                             blockIdx.x, gridDim.x);
  if (!air_merge_last<IdxT>(g_hist, s_hist, nbins, &st->finished_blocks, &s_last)) return;
  air_fetch_hist<IdxT>(g_hist, s_hist, nbins, true); /* and zero it for the next pass */
  int mode;
  const air_pass_in<IdxT> out = air_after_pass<IdxT>(S, in, writing, s_hist, s_warp, &s_choice, &mode);
  air_store_pass<IdxT>(st, out, mode);
}

/*
 * The sampled start's pass 0 (air_start_bound; launched before pass 0's own launch, which
 * then runs with S.retry). Rows with len <= k are copied as pass 0 would; a row without a
 * bound, or whose bound leaves fewer than k elements or more than the buffer holds, goes to
 * AIR_RESTART for the retry. Dynamic shared memory: AIR_START_SMEM_BYTES, the stage.
 */
template <topk_dtype DT, typename IdxT>
__global__ void __launch_bounds__(AIR_THREADS, sizeof(IdxT) == 4 ? AIR_PASS_MIN_BLOCKS : 1)
air_start_kernel(const air_params P, const air_pass_desc S) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  __shared__ IdxT s_hist[AIR_MAX_BINS];
  __shared__ IdxT s_warp[AIR_WARPS];
  __shared__ unsigned int s_warp32[AIR_WARPS];
  __shared__ IdxT s_base[2];
  __shared__ int s_last;
  __shared__ air_choice<IdxT> s_choice;
  constexpr int STAGE = air_start_stage<RawT, IdxT>();
  extern __shared__ __align__(16) unsigned char s_dyn[];
  IdxT* s_stage_idx = (IdxT*)s_dyn; /* the raw bits at a 16-byte offset after them */
  RawT* s_stage_raw = (RawT*)(s_dyn + air_start_raw_offset<IdxT>(STAGE));

  const int64_t row = P.row0 + blockIdx.y;
  air_row_state<IdxT>* st = (air_row_state<IdxT>*)P.state + blockIdx.y;
  IdxT* g_hist = (IdxT*)P.hist + (size_t)blockIdx.y * P.hist_bins;
  const air_row_extent R = air_row(P, row);
  if (R.len <= P.k) {
    air_copy_row<DT, IdxT>(P, row, R, (int64_t)blockIdx.x * AIR_THREADS + threadIdx.x, (int64_t)gridDim.x * AIR_THREADS);
    if (blockIdx.x == 0 && threadIdx.x == 0) st->mode = AIR_DONE;
    return;
  }
  unsigned long long bound = 0;
  if (!air_start_bound<typename topk_dtype_traits<DT>::key_t, IdxT>(P, &bound)) { /* the same in every block */
    if (blockIdx.x == 0 && threadIdx.x == 0) st->mode = AIR_RESTART;
    return;
  }
  const int nbins = 1 << S.width;
  for (int b = threadIdx.x; b < nbins; b += AIR_THREADS) s_hist[b] = 0;
  __syncthreads();
  air_start_tiles<DT, IdxT>(P, S, R, bound, s_hist, s_warp32, s_base, &st->buf_cnt, s_stage_raw, s_stage_idx, STAGE,
                            blockIdx.x, gridDim.x);
  if (!air_merge_last<IdxT>(g_hist, s_hist, nbins, &st->finished_blocks, &s_last)) return;
  air_fetch_hist<IdxT>(g_hist, s_hist, nbins, true); /* and zero it for the next pass */
  /* every block's buffer claims are in: the elements >= the bound, written or not */
  const IdxT c = *(volatile IdxT*)&st->buf_cnt;
  if ((int64_t)c < P.k || (int64_t)c > R.len / P.alpha) { /* too few for the k results, or overflowed */
    if (threadIdx.x == 0) {
      st->mode = AIR_RESTART;
      st->buf_cnt = 0;
      st->finished_blocks = 0;
    }
    return;
  }
  air_pass_in<IdxT> in = air_first_pass_in<IdxT>(P, R.len);
  in.cand = c; /* the buffer the next pass reads holds c elements (air_after_pass: src_len) */
  int mode;
  const air_pass_in<IdxT> out = air_after_pass<IdxT>(S, in, true, s_hist, s_warp, &s_choice, &mode);
  air_store_pass<IdxT>(st, out, mode);
}

/* The last filter launch of the multi-launch path: the row state says what to read. */
template <topk_dtype DT, typename IdxT>
__global__ void __launch_bounds__(AIR_THREADS) air_final_kernel(const air_params P) {
  __shared__ unsigned int s_warp32[AIR_WARPS];
  __shared__ IdxT s_base[2];

  const int64_t row = P.row0 + blockIdx.y;
  air_row_state<IdxT>* st = (air_row_state<IdxT>*)P.state + blockIdx.y;
  if (st->mode != AIR_FINAL) return; /* AIR_DONE: copied in pass 0 */
  const air_row_extent R = air_row(P, row);
  air_pass_in<IdxT> in;
  in.k_rem = st->k_rem;
  in.cand = st->len;
  in.src_len = st->src_len;
  in.src = st->src;
  in.level_key = st->level_key;
  in.level_idx = st->level_idx;
  in.pk = st->prefix_key;
  in.pi = st->prefix_idx;
  air_final_tiles<DT, IdxT>(P, row, R, in, s_warp32, s_base, &st->out_cnt, &st->back_cnt, blockIdx.x, gridDim.x);
}

/* ------------------------------------------------------------------ fused path */

/*
 * Per-row control block of the fused path, in the workspace after the histograms
 * (IdxT[rows][passes][P.hist_bins]); both are zeroed by the kernel itself.
 */
template <typename IdxT>
struct air_fused_row {
  unsigned int arrived;       /* the row's barrier: blocks arrived, over all passes */
  IdxT out_cnt, back_cnt;
  IdxT buf_cnt[AIR_MAX_PASSES];
};

/* The passes of a fused launch, by value (a few hundred bytes of kernel parameters). */
struct air_fused_desc {
  int n_passes;
  air_pass_desc passes[AIR_MAX_PASSES];
};

/*
 * Waits until `target` blocks have arrived at the row's barrier (counting this one).
 * The blocks of a row are co-resident (cooperative launch), so spinning is safe. The
 * fences order this block's global writes (histogram atomics, buffer and output
 * stores) before its arrival, and the other blocks' before what this block reads next.
 */
__device__ __forceinline__ void air_row_barrier(unsigned int* arrived, unsigned int target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(arrived, 1u);
    while (atomicAdd(arrived, 0u) < target) __nanosleep(64);
    __threadfence();
  }
  __syncthreads();
}

/*
 * The whole selection of a row in one cooperative launch (issue: small-n latency):
 * every pass of the multi-launch path, separated by a per-row barrier instead of a
 * kernel boundary, then the last filter. Every block of a row computes the same
 * choice from the row's complete histogram, so no state travels through memory
 * except the histograms and counters. Grid: x = blocks of a row, y = rows; all
 * blocks resident. Histograms are per pass, so no pass has to zero one for the next.
 */
template <topk_dtype DT, typename IdxT>
__global__ void __launch_bounds__(AIR_THREADS) air_fused_kernel(const air_params P, const air_fused_desc F) {
  __shared__ IdxT s_hist[AIR_MAX_BINS];
  __shared__ IdxT s_warp[AIR_WARPS];
  __shared__ unsigned int s_warp32[AIR_WARPS];
  __shared__ IdxT s_base[2];
  __shared__ air_choice<IdxT> s_choice;

  /* ADAPTIVE: only the rows the one-block kernel left (P.ovf); none: every block returns at once. */
  if (P.ovf) {
    __shared__ unsigned s_any;
    if (threadIdx.x == 0) {
      unsigned any = 0;
      for (unsigned r = 0; r < gridDim.y; ++r) any |= P.ovf[P.row0 + r];
      s_any = any;
    }
    __syncthreads();
    if (!s_any) return; /* the same in every block: nobody waits at the barrier below */
  }

  /* Zero every row's histograms and control block, then one grid-wide barrier. */
  const int64_t rows = gridDim.y;
  const int64_t hist_words = rows * F.n_passes * P.hist_bins;
  IdxT* g_hist_all = (IdxT*)P.hist;
  air_fused_row<IdxT>* ctrl_all = (air_fused_row<IdxT>*)P.state;
  const int64_t nthreads = (int64_t)gridDim.x * gridDim.y * AIR_THREADS;
  const int64_t tid = ((int64_t)blockIdx.y * gridDim.x + blockIdx.x) * AIR_THREADS + threadIdx.x;
  for (int64_t i = tid; i < hist_words; i += nthreads) g_hist_all[i] = 0;
  for (int64_t r = tid; r < rows; r += nthreads) {
    air_fused_row<IdxT> z;
    memset(&z, 0, sizeof z);
    ctrl_all[r] = z;
  }
  cooperative_groups::this_grid().sync();

  const int64_t row = P.row0 + blockIdx.y;
  if (P.ovf && !P.ovf[row]) return; /* the one-block kernel did this row (all its blocks agree) */
  const air_row_extent R = air_row(P, row);
  if (R.len <= P.k) {
    air_copy_row<DT, IdxT>(P, row, R, (int64_t)blockIdx.x * AIR_THREADS + threadIdx.x,
                           (int64_t)gridDim.x * AIR_THREADS);
    return;
  }
  air_fused_row<IdxT>* ctrl = ctrl_all + blockIdx.y;
  air_pass_in<IdxT> in = air_first_pass_in<IdxT>(P, R.len);
  for (int q = 0; q < F.n_passes; ++q) {
    const air_pass_desc& S = F.passes[q];
    IdxT* g_hist = g_hist_all + ((int64_t)blockIdx.y * F.n_passes + q) * P.hist_bins;
    const bool writing = air_writes_buffer(P, S, R, in);
    const int nbins = 1 << S.width;
    for (int b = threadIdx.x; b < nbins; b += AIR_THREADS) s_hist[b] = 0;
    __syncthreads();
    air_filter_tiles<DT, IdxT>(P, S, row, R, in, writing, s_hist, s_warp32, s_base, &ctrl->out_cnt,
                               &ctrl->buf_cnt[q], blockIdx.x, gridDim.x);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += AIR_THREADS) {
      const IdxT v = s_hist[b];
      if (v) atomicAdd(&g_hist[b], v);
    }
    air_row_barrier(&ctrl->arrived, gridDim.x * (unsigned)(q + 1));
    air_fetch_hist<IdxT>(g_hist, s_hist, nbins, false);
    int mode;
    in = air_after_pass<IdxT>(S, in, writing, s_hist, s_warp, &s_choice, &mode);
    if (mode != AIR_RUNNING) break; /* the same decision in every block of the row */
  }
  air_final_tiles<DT, IdxT>(P, row, R, in, s_warp32, s_base, &ctrl->out_cnt, &ctrl->back_cnt, blockIdx.x, gridDim.x);
}

/* ------------------------------------------------------------------ one-block path */

/*
 * Dynamic shared memory of the one-block kernel: the staged row (stage_cap
 * elements), then, for AIR_OUT_BLOCK, bsort_m u64 sort keys and bsort_m IdxT
 * indices. The host sizes the launch with the same functions.
 */
__host__ __device__ __forceinline__ int64_t air_sort_smem_offset(int64_t stage_cap, int64_t es) {
  return (stage_cap * es + 15) & ~(int64_t)15;
}
__host__ __device__ __forceinline__ int64_t air_one_smem_bytes(int64_t stage_cap, int64_t es, int64_t bsort_m,
                                                               int64_t isz) {
  return bsort_m > 0 ? air_sort_smem_offset(stage_cap, es) + bsort_m * (8 + isz) : stage_cap * es;
}

/*
 * Bitonic sort of m (a power of two) (sk, si) pairs in shared memory, ascending by
 * sk and then by si. Every thread must call it; it synchronises before the first
 * stage and after every stage, so the result is visible to all when it returns.
 */
template <typename IdxT>
__device__ void air_block_bitonic(unsigned long long* sk, IdxT* si, int m) {
  __syncthreads();
  for (int size = 2; size <= m; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < (m >> 1); t += AIR_THREADS) {
        const int i = 2 * t - (t & (stride - 1)), j = i + stride; /* i has bit `stride` clear */
        const unsigned long long a = sk[i], b = sk[j];
        const IdxT ia = si[i], ja = si[j];
        const bool gt = a > b || (a == b && ia > ja);
        if (gt == ((i & size) == 0)) { /* ascending run: swap if a > b; descending: if a < b */
          sk[i] = b;
          sk[j] = a;
          si[i] = ja;
          si[j] = ia;
        }
      }
      __syncthreads();
    }
}

/*
 * AIR_OUT_BLOCK, after air_block_bitonic: slot s < nreal gets the index in si[s]
 * and its value read back from src (exact bits); slots nreal..k-1 are padding.
 */
template <typename RawT, typename IdxT>
__device__ void air_write_sorted(const air_params& P, int64_t row, const RawT* src, const IdxT* si, int64_t nreal) {
  for (int64_t s = threadIdx.x; s < P.k; s += AIR_THREADS) {
    const int64_t o = row * P.k + s;
    RawT v;
    int64_t ix;
    if (s < nreal) {
      ix = (int64_t)si[s];
      v = src[ix];
    } else {
      v = (RawT)P.worst_bits;
      ix = -1;
    }
    ((RawT*)P.values)[o] = v;
    if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = ix;
    else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = (int32_t)ix;
  }
}

/*
 * One thread block per row (row P.row0 + blockIdx.x). ADAPTIVE (P.ovf): rows longer than
 * stage_cap are marked in P.ovf and left to the FUSED kernel. Rows of at most stage_cap
 * elements are staged in dynamic shared memory (stage_cap * sizeof(raw) bytes);
 * longer rows are re-read from global memory by every pass (correct, slower).
 * Digits of AIR_ONE_DIGIT_BITS (8: 256 bins, one per thread): short rows favour
 * small histograms over fewer passes.
 * AIR_OUT_BLOCK (sorted, P.bsort_m > 0): the results go to shared-memory slots
 * (~rank key, index) after the staged row, slots k..bsort_m-1 hold (~0, ~0) (sort
 * last), a block bitonic sort orders them best first, equal keys by index (the
 * order the CUB path produces), and the outputs are written from the sorted slots.
 */
template <topk_dtype DT, typename IdxT>
__global__ void __launch_bounds__(AIR_THREADS) air_one_block_kernel(const air_params P, const int64_t stage_cap) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  constexpr int UNROLL = 8;
  const int NP = air_num_passes(KB, AIR_ONE_DIGIT_BITS);

  extern __shared__ __align__(16) unsigned char air_stage_smem[];
  RawT* s_row = (RawT*)air_stage_smem;
  const int bsort_m = P.bsort_m; /* > 0: AIR_OUT_BLOCK */
  unsigned long long* s_sk = (unsigned long long*)(air_stage_smem + air_sort_smem_offset(stage_cap, sizeof(RawT)));
  IdxT* s_si = (IdxT*)(s_sk + (bsort_m > 0 ? bsort_m : 0));
  __shared__ IdxT s_hist[AIR_ONE_BINS];
  __shared__ unsigned long long s_ao[2 * AIR_WARPS];
  __shared__ IdxT s_warp[AIR_WARPS];
  __shared__ IdxT s_wgt[AIR_WARPS], s_weq[AIR_WARPS]; /* the final filter's counts per warp */
  __shared__ air_choice<IdxT> s_choice;

  const int64_t row = P.row0 + blockIdx.x;
  const air_row_extent R = air_row(P, row);
  const bool smallest = P.smallest != 0;
  const RawT* in_row = (const RawT*)P.in + R.start;
  if (P.ovf) { /* ADAPTIVE: a row longer than the stage is marked and left to the FUSED kernel (which
                 * also copies a long row shorter than k faster, with all its blocks) */
    const bool over = R.len > stage_cap;
    if (threadIdx.x == 0) P.ovf[row] = over ? 1u : 0u;
    if (over) return;
  }
  if (R.len <= P.k) {
    if (bsort_m == 0) {
      air_copy_row<DT, IdxT>(P, row, R, threadIdx.x, AIR_THREADS);
      return;
    }
    /* The whole row is the result (len <= k <= bsort_m): sort it; slots len.. are padding. */
    for (int s = threadIdx.x; s < bsort_m; s += AIR_THREADS) {
      if ((int64_t)s < R.len) {
        const KeyT key = topk_to_rank_key<DT>(in_row[s], smallest);
        s_sk[s] = (unsigned long long)(KeyT)~key;
        s_si[s] = (IdxT)s;
      } else {
        s_sk[s] = ~0ull;
        s_si[s] = (IdxT)~(IdxT)0;
      }
    }
    air_block_bitonic<IdxT>(s_sk, s_si, bsort_m);
    air_write_sorted<RawT, IdxT>(P, row, in_row, s_si, R.len);
    return;
  }
  const IdxT len = (IdxT)R.len; /* < k's type range: k < len fits IdxT (host picks IdxT from n) */
  const bool staged = R.len <= stage_cap;
  const RawT* rd = staged ? (const RawT*)s_row : in_row;
  for (int64_t s = P.k + (int64_t)threadIdx.x; s < (int64_t)bsort_m; s += AIR_THREADS) {
    s_sk[s] = ~0ull; /* unused slots sort last; visible after the filter's barriers */
    s_si[s] = (IdxT)~(IdxT)0;
  }

  IdxT k_rem = (IdxT)P.k, cand = len;
  unsigned long long pk = 0;
  int lk = 0; /* known leading bits of the k-th key: those every key shares, then each pass's digit */
  if (staged) {
    unsigned long long k_and = ~0ull, k_or = 0;
    for (IdxT i0 = 0; i0 < len; i0 += (IdxT)(AIR_THREADS * UNROLL)) {
      RawT v[UNROLL];
#pragma unroll
      for (int j = 0; j < UNROLL; ++j) {
        const IdxT i = i0 + (IdxT)(j * AIR_THREADS) + (IdxT)threadIdx.x;
        if (i < len) v[j] = in_row[i];
      }
#pragma unroll
      for (int j = 0; j < UNROLL; ++j) {
        const IdxT i = i0 + (IdxT)(j * AIR_THREADS) + (IdxT)threadIdx.x;
        if (i < len) {
          s_row[i] = v[j];
          const unsigned long long key = (unsigned long long)topk_to_rank_key<DT>(v[j], smallest);
          k_and &= key;
          k_or |= key;
        }
      }
    }
    air_block_and_or(k_and, k_or, (unsigned long long*)s_ao); /* synchronises: the staged row is visible */
    lk = P.common_prefix ? air_common_bits<KB>(k_and, k_or) : 0;
    pk = lk == 0 ? 0ull : k_or >> (KB - lk);
  }

  for (int p = 0; p < NP && lk < KB; ++p) {
    const int w = air_width_below(KB, AIR_ONE_DIGIT_BITS, lk);
    const int nbins = 1 << w;
    const int dshift = KB - lk - w;
    for (int b = threadIdx.x; b < nbins; b += AIR_THREADS) s_hist[b] = 0;
    __syncthreads();
    for (IdxT i = threadIdx.x; i < len; i += AIR_THREADS) {
      const KeyT key = topk_to_rank_key<DT>(rd[i], smallest);
      if (lk == 0 || (KeyT)(key >> (KB - lk)) == (KeyT)pk)
        atomicAdd(&s_hist[(int)((key >> dshift) & (KeyT)(nbins - 1))], (IdxT)1);
    }
    __syncthreads();
    air_choose<IdxT>(s_hist, nbins, k_rem, s_warp, &s_choice);
    pk = (pk << w) | (unsigned long long)s_choice.digit;
    lk += w;
    k_rem -= s_choice.greater;
    cand = s_choice.count;
    __syncthreads(); /* s_choice and s_hist are rewritten by the next pass */
    if (cand == k_rem) break; /* early stop (sec. 3.3); block-uniform */
  }

  /*
   * Final filter in index order: the elements beating the prefix, and the first k_rem
   * (lowest-index) elements matching it; an element's slot is the number of those before it
   * in index order, so the output is in index order. Each warp takes a contiguous range of
   * the row: it counts its range (ballots), one barrier gives every warp the counts of the
   * warps before it, and it walks its range again writing. Until session 25 this was a walk
   * over the row in steps of AIR_THREADS elements with a block scan each (two barriers a
   * step, 32 steps for 8192 elements). Measured against that (H100, same run): 4096 rows of
   * 8192, k = 32..2048, 1.05-1.08x faster; single rows of 1000..8192 0.93-1.04x (their time
   * is the latency of 8 warps in every pass, which CLUSTER's 32 hide: air_radix.cu).
   */
  const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x % 32);
  const unsigned lt_mask = (1u << lane) - 1u;
  const IdxT wspan = (IdxT)((len + (IdxT)(AIR_WARPS * 32 - 1)) / (IdxT)(AIR_WARPS * 32) * 32);
  const IdxT wlo = (IdxT)warp * wspan < len ? (IdxT)warp * wspan : len;
  const IdxT whi = wlo + wspan < len ? wlo + wspan : len;
#define AIR_ONE_CMP(I, RAW, KEY, C)                                      \
  int C = -1;                                                           \
  RawT RAW = 0;                                                         \
  KeyT KEY = 0;                                                         \
  if ((I) < whi) {                                                      \
    RAW = rd[I];                                                        \
    KEY = topk_to_rank_key<DT>(RAW, smallest);                          \
    C = air_cmp<KeyT, KB, IdxT>(KEY, I, lk, pk, 0, 0ull, P.ib, 0ull);   \
  }
  IdxT gt_run = 0, eq_run = 0; /* warp-uniform */
  for (IdxT b0 = wlo; b0 < whi; b0 += 32) {
    const IdxT i = b0 + (IdxT)lane;
    AIR_ONE_CMP(i, raw, key, c)
    (void)raw;
    gt_run += (IdxT)__popc(__ballot_sync(0xffffffffu, c > 0));
    eq_run += (IdxT)__popc(__ballot_sync(0xffffffffu, c == 0));
  }
  if (lane == 0) {
    s_wgt[warp] = gt_run;
    s_weq[warp] = eq_run;
  }
  __syncthreads();
  gt_run = 0;
  eq_run = 0;
  for (int w = 0; w < warp; ++w) {
    gt_run += s_wgt[w];
    eq_run += s_weq[w];
  }
  for (IdxT b0 = wlo; b0 < whi; b0 += 32) {
    if ((int64_t)(gt_run + (eq_run < k_rem ? eq_run : k_rem)) >= P.k) break; /* all k slots written; warp-uniform */
    const IdxT i = b0 + (IdxT)lane;
    AIR_ONE_CMP(i, raw, key, c)
    const unsigned gm = __ballot_sync(0xffffffffu, c > 0), em = __ballot_sync(0xffffffffu, c == 0);
    const IdxT gt_before = gt_run + (IdxT)__popc(gm & lt_mask), eq_before = eq_run + (IdxT)__popc(em & lt_mask);
    int64_t slot = -1;
    if (c > 0) slot = (int64_t)(gt_before + (eq_before < k_rem ? eq_before : k_rem));
    else if (c == 0 && eq_before < k_rem) slot = (int64_t)(gt_before + eq_before);
    if (slot >= 0 && slot < P.k) {
      if (bsort_m > 0) {
        s_sk[slot] = (unsigned long long)(KeyT)~key;
        s_si[slot] = i;
      } else {
        air_emit(P, row, slot, raw, key, i);
      }
    }
    gt_run += (IdxT)__popc(gm);
    eq_run += (IdxT)__popc(em);
  }
#undef AIR_ONE_CMP
  if (bsort_m > 0) { /* block-uniform; all k slots are written (I1: greater + min(equal, k_rem) = k) */
    air_block_bitonic<IdxT>(s_sk, s_si, bsort_m);
    air_write_sorted<RawT, IdxT>(P, row, rd, s_si, P.k);
  }
}

/* ------------------------------------------------------------------ cluster path */

/*
 * Cluster path (air_cluster_kernel): a thread-block cluster of cs = 1..16 blocks per
 * row (Hopper), each block staging a contiguous slice of the row in its shared
 * memory, so the row is read from DRAM exactly once. The slice is staged as RANK
 * KEYS (same width as the elements, so the same bytes): 16-byte loads, the key
 * transform once per element (two 16-bit floats at a time with SWAR), 16-byte
 * stores; every later scan reads 16-byte groups of keys and never transforms again.
 * Raw values are read back from global memory for the (at most k) results only, so
 * they stay bit-exact (NaN payloads); keys are never turned back into values.
 *
 * Per pass (11-bit digits, key passes only) each block counts its slice's candidates
 * into a local histogram and sums it into 64 groups of 32 bins; one hardware cluster
 * barrier later every block reads, through distributed shared memory, the group
 * sums of every block (picks the group of the k-th key), then that group's 32 bins
 * of every block (picks the digit): cs x 96 words per block instead of merging 2048
 * bins, and every block makes the same choice. The two histograms alternate between
 * passes, so one barrier per pass is enough (air_cluster_kernel says why).
 * 1024 threads per block: every per-pass step is a short latency chain, and the
 * staging loads of a 128 KB slice are all in flight at once.
 *
 * Final phase, with lo / hi the smallest / largest key matching the chosen prefix
 * (results: key > hi, ties: lo <= key <= hi): thread t owns the contiguous run
 * [t x L, (t + 1) x L) of the slice, L an odd number of 16-byte groups (odd: the
 * eight threads of a quarter-warp reading group j of their runs hit distinct banks);
 * only the run with the slice's end may end in a partial group, handled element by
 * element. (a) Each thread marks the groups of its run holding a key >= lo (one
 * 64-bit mask; a run of more than 64 groups visits them all). (b) It counts
 * results and ties in the marked groups only (the others hold neither); thread,
 * warp and block prefix sums (shuffles, shared memory, DSMEM) give every thread the
 * number of results and ties before its run in index order. (c) It walks its marked
 * groups again in index order and parks the slice position of each element that
 * gets a slot (results beating the prefix: slots [0, front) in index order; ties:
 * slots front + their rank, the first k_rem of them) in a stash in the histograms'
 * space, ordered by slot; (d) the block then emits the stash with all its threads:
 * consecutive slots, raw values read back from global memory. A block with more
 * than AIR_CLUSTER_STASH slotted elements runs (c)-(d) in rounds. Ties are
 * resolved by position, so no index passes. After an early stop (the chosen bin holds
 * exactly the results still needed) no tie is left to order, so after (b) one DSMEM
 * atomic per warp on rank 0's slot counter replaces the prefix across ranks, its
 * cluster barrier and the stash of (c)-(d) (LLM shapes 0.92x the time,
 * docs/perf-notes.md v0.12). For rows of AIR_STAGE_BYTES .. cs x stage budget,
 * cs = 1 .. AIR_CLUSTER_MAX_BLOCKS (air_radix.cu chooses).
 */
enum {
  AIR_CLUSTER_THREADS = 1024,
  AIR_CLUSTER_MAX_BLOCKS = 16, /* non-portable cluster size (Hopper allows 16) */
  AIR_CLUSTER_DIGIT_BITS = 11,
  AIR_CLUSTER_BINS = 1 << AIR_CLUSTER_DIGIT_BITS,
  AIR_CLUSTER_GROUPS = AIR_CLUSTER_BINS / 32, /* the choice reads group sums, then one group's 32 bins */
  AIR_CLUSTER_STASH = 2 * AIR_CLUSTER_BINS,   /* final phase: slotted positions, in the two histograms' space */
  AIR_CLUSTER_ROUND = 8 /* the staging's 16-byte loads a thread in flight at once */
};

/* Dynamic shared memory of the cluster kernel: the staged slice, then two histograms. */
__host__ __device__ __forceinline__ int64_t air_cluster_smem_bytes(int64_t slice, int64_t es) {
  return ((slice * es + 15) & ~(int64_t)15) + 2 * AIR_CLUSTER_BINS * (int64_t)sizeof(unsigned);
}

/* The word the cluster kernel computes keys in: 32 bits for 16- and 32-bit keys (two 16-bit keys per word). */

/* A 16-byte group as words and back. */
__device__ __forceinline__ void air_words(const uint4& v, unsigned (&w)[4]) {
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
}
__device__ __forceinline__ void air_words(const uint4& v, unsigned long long (&w)[2]) {
  w[0] = (unsigned long long)v.x | ((unsigned long long)v.y << 32);
  w[1] = (unsigned long long)v.z | ((unsigned long long)v.w << 32);
}
__device__ __forceinline__ uint4 air_group(const unsigned (&w)[4]) { return make_uint4(w[0], w[1], w[2], w[3]); }
__device__ __forceinline__ uint4 air_group(const unsigned long long (&w)[2]) {
  return make_uint4((unsigned)w[0], (unsigned)(w[0] >> 32), (unsigned)w[1], (unsigned)(w[1] >> 32));
}

/* Key e of a group's words (zero-extended). */
template <int KB, typename CT, int NW>
__device__ __forceinline__ CT air_key_at(const CT (&w)[NW], int e) {
  if (KB == 16) return (e & 1) ? (CT)(w[e >> 1] >> 16) : (CT)(w[e >> 1] & 0xFFFFu);
  return w[e];
}

/* 0xFFFF in each 16-bit half of x whose top bit is set (prmt's sign replication: bytes 1 and 3). */
__device__ __forceinline__ unsigned air_sign16x2(unsigned x) {
  unsigned r;
  asm("prmt.b32 %0, %1, 0, 0xBB99;" : "=r"(r) : "r"(x));
  return r;
}

/*
 * Rank keys of a 16-byte group of raw elements: topk_to_rank_key on each. For f16 and
 * bf16 both halves of a word at once: negative -> ~raw, else raw | 0x8000 (xor with
 * sign mask | 0x8000); NaN (|raw| > inf, i.e. |raw| + (0x7FFF - inf) carries into bit
 * 15; no carry crosses the halves) -> 0xFFFF; smallest -> complement. Checked against
 * keys.h for every 16-bit value in each half.
 */
template <topk_dtype DT>
__device__ __forceinline__ uint4 air_rank_keys(const uint4& raw, bool smallest) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename air_cword<topk_dtype_traits<DT>::bits>::type CT;
  CT w[16 / sizeof(CT)];
  air_words(raw, w);
  if constexpr (DT == TOPK_F16 || DT == TOPK_BF16) {
    const unsigned nan_add = DT == TOPK_BF16 ? 0x007F007Fu : 0x03FF03FFu;
    const unsigned flip = 0u - (unsigned)smallest;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned sgn = air_sign16x2(w[j]), nan = air_sign16x2((w[j] & 0x7FFF7FFFu) + nan_add);
      w[j] = ((w[j] ^ (sgn | 0x80008000u)) | nan) ^ flip;
    }
  } else {
#pragma unroll
    for (int j = 0; j < (int)(16 / sizeof(CT)); ++j) w[j] = (CT)topk_to_rank_key<DT>((RawT)w[j], smallest);
  }
  return air_group(w);
}

/*
 * The starts' staging for 32-bit keys: this thread's vectors t, t + NT, ... of src as rank keys
 * at the same places of dst, every load of a round in flight before any store (one L2 round trip
 * per NT x UNROLL x 16 bytes; the first round's, w0, issued by the kernel at its start),
 * after_issue() first (every thread, converged, also where it stages nothing); returns the thread's
 * largest key. The keys skip NaN canonicalisation (topk_to_rank_key_nan_open: a sign shift and one
 * xor folding the direction, fixed at compile time, where topk_to_rank_key takes ~7 instructions an
 * f32 element); a NaN's key lands outside [topk_rank_key_lo, topk_rank_key_hi], which the thread's
 * smallest and largest key tell, and such a thread stages its vectors again by air_rank_keys (read
 * again from src: rows with NaN only).
 * Why: ncu put this step of f32 8 x 262144 at ~12 issued instructions an element, issue-bound
 * (~50 a vector; 1024 threads' 8 vectors are ~1.8 us of issue at 4 an SM a cycle); this loop is
 * ~16 a vector, and the staging took 3.87 -> 2.82 us (rank 0's stamps). 16-bit keys keep
 * air_rank_keys (its word-wise transform is ~3.5 instructions a key): the same scheme for them
 * measured slower over the 16 bf16 LLM shapes (geomean 1.014x at k = 50, 1.007x at k = 1024).
 * docs/perf-notes.md v0.45. Staged raw (a NaN-propagating packed max a word, keys made only of the
 * vectors the collection's first look passes), they saved the staging 86 instructions a warp but
 * added ~70 to the collection, which every warp runs: 1.04-1.06x (v0.49, wip/s49-raw-stage16).
 */
/* The largest of a 16-byte vector's four 32-bit words. */
__device__ __forceinline__ unsigned air_vec_max(const uint4& k) { return max(max(k.x, k.y), max(k.z, k.w)); }

/* One staging round's loads: w[j] = src[v + j x NT] where that is < nvec (v: this thread's first
 * vector of the round), all in flight before any is used. */
template <int NT>
__device__ __forceinline__ void air_cluster_load_round(const uint4* src, int v, int nvec,
                                                       uint4 (&w)[AIR_CLUSTER_ROUND]) {
#pragma unroll
  for (int j = 0; j < AIR_CLUSTER_ROUND; ++j)
    if (v + j * NT < nvec) w[j] = src[v + j * NT];
}

template <topk_dtype DT, bool SMALLEST, int NT, typename F>
__device__ __forceinline__ unsigned air_cluster_stage_open(const uint4* src, uint4* dst, int nvec,
                                                           const uint4 (&w0)[AIR_CLUSTER_ROUND], F&& after_issue) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  static_assert(topk_dtype_traits<DT>::bits == 32, "32-bit keys");
  constexpr int UNROLL = AIR_CLUSTER_ROUND;
  const int t = (int)threadIdx.x;
  unsigned k_max = 0, k_min = ~0u;
  auto keys = [](const uint4& raw) {
    return make_uint4((unsigned)topk_to_rank_key_nan_open<DT>((RawT)raw.x, SMALLEST),
                      (unsigned)topk_to_rank_key_nan_open<DT>((RawT)raw.y, SMALLEST),
                      (unsigned)topk_to_rank_key_nan_open<DT>((RawT)raw.z, SMALLEST),
                      (unsigned)topk_to_rank_key_nan_open<DT>((RawT)raw.w, SMALLEST));
  };
  auto take = [&](const uint4(&w)[UNROLL], int v0) {
#pragma unroll
    for (int j = 0; j < UNROLL; ++j)
      if (v0 + j * NT < nvec) {
        const uint4 k = keys(w[j]);
        dst[v0 + j * NT] = k;
        k_max = max(k_max, air_vec_max(k));
        k_min = min(min(k_min, min(k.x, k.y)), min(k.z, k.w));
      }
  };
  after_issue(); /* every thread, converged; the kernel issued the first round's loads (w0) */
  take(w0, t);
  for (int v0 = t + NT * UNROLL; v0 - t < nvec; v0 += NT * UNROLL) { /* block-uniform */
    uint4 w[UNROLL];
    air_cluster_load_round<NT>(src, v0, nvec, w);
    take(w, v0);
  }
  if constexpr (topk_rank_key_lo<DT>() != 0) /* f32: a NaN's key lies outside [lo, hi] */
    if (k_max > (unsigned)topk_rank_key_hi<DT>() || k_min < (unsigned)topk_rank_key_lo<DT>()) {
      k_max = 0;
      for (int v = t; v < nvec; v += NT) {
        const uint4 k = air_rank_keys<DT>(src[v], SMALLEST);
        dst[v] = k;
        k_max = max(k_max, air_vec_max(k));
      }
    }
  return k_max;
}

/* Whether a 16-byte group of keys holds a key > thr (16-bit keys: thr in both halves). */
__device__ __forceinline__ bool air_any_gt(const uint4& v, unsigned thr, int kb) {
  if (kb == 16) {
    const unsigned m = __vmaxu2(__vmaxu2(__vmaxu2(v.x, v.y), __vmaxu2(v.z, v.w)), thr);
    return m != thr;
  }
  return air_vec_max(v) > thr;
}
__device__ __forceinline__ bool air_any_gt(const uint4& v, unsigned long long thr, int) {
  unsigned long long w[2];
  air_words(v, w);
  return (w[0] > w[1] ? w[0] : w[1]) > thr;
}

/*
 * One pass's histogram of a block's len staged keys into s_loc: digit
 * (key >> shift) & dmask of each key whose top `level` bits are pk (PREFIX; false
 * for level 0, where every key counts). 16-byte groups, then the partial group.
 */
template <int KB, bool PREFIX>
__device__ __forceinline__ void air_cluster_hist(const typename topk_key_of_width<KB>::type* s_key, int len,
                                                 unsigned* s_loc, int level, unsigned long long pk, int shift,
                                                 unsigned dmask) {
  typedef typename air_cword<KB>::type CT;
  constexpr int KPW = KB == 16 ? 2 : 1, NW = (int)(16 / sizeof(CT)), V = 128 / KB;
  const CT pmask = PREFIX ? (((CT)1 << level) - 1) << (KB - level) : 0;
  const CT pval = PREFIX ? (CT)pk << (KB - level) : 0;
  CT pm[KPW], pv[KPW];
  int sh[KPW];
#pragma unroll
  for (int h = 0; h < KPW; ++h) { /* the same test and digit on the key at bit h x KB of a word */
    pm[h] = pmask << (h * KB);
    pv[h] = pval << (h * KB);
    sh[h] = shift + h * KB;
  }
  const int nvec = len / V;
  const uint4* sv = (const uint4*)s_key;
#pragma unroll 2
  for (int v = threadIdx.x; v < nvec; v += AIR_CLUSTER_THREADS) {
    CT w[NW];
    air_words(sv[v], w);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const CT x = w[e / KPW];
      const int h = e % KPW;
      /* level 0: the word's top key needs no mask (its digit is the word's top bits) */
      const unsigned d = !PREFIX && h == KPW - 1 ? (unsigned)(x >> sh[h]) : (unsigned)(x >> sh[h]) & dmask;
      if (!PREFIX || (x & pm[h]) == pv[h]) atomicAdd(&s_loc[d], 1u);
    }
  }
  for (int i = nvec * V + threadIdx.x; i < len; i += AIR_CLUSTER_THREADS) {
    const CT x = s_key[i];
    if (!PREFIX || (x & pm[0]) == pv[0]) atomicAdd(&s_loc[(unsigned)(x >> sh[0]) & dmask], 1u);
  }
}

/*
 * The choice of a pass from the cluster's histograms (every block's s_hist and its
 * group sums s_grp, published before the cluster barrier): the digit of the
 * k_rem-th best key, in two DSMEM rounds that read 64 + 32 words per block instead
 * of the 2048 bins: (1) the 64 group sums of every block, summed, pick the group;
 * (2) that group's 32 bins of every block, summed, pick the digit. Every block
 * computes the same answer. s_gtot (64) and s_btot (32) are zero on entry.
 */
__device__ __forceinline__ void air_cluster_choose(const cooperative_groups::cluster_group& cluster, unsigned cs,
                                                   unsigned* s_hist, unsigned* s_grp, unsigned k_rem,
                                                   unsigned* s_gtot, unsigned* s_btot, unsigned* s_sel,
                                                   air_choice<unsigned>* s_choice) {
  static_assert(AIR_CLUSTER_GROUPS == 64, "warp 0 scans the groups two per lane");
  const unsigned t = threadIdx.x, lane = t & 31;
  if (t < cs * AIR_CLUSTER_GROUPS) {
    const unsigned v = cluster.map_shared_rank(s_grp, t / AIR_CLUSTER_GROUPS)[t % AIR_CLUSTER_GROUPS];
    if (v) atomicAdd(&s_gtot[t % AIR_CLUSTER_GROUPS], v);
  }
  if (t == 0) { /* defined even if the invariant were broken; every thread read the last choice before this pass's hist */
    s_choice->digit = 0;
    s_choice->greater = 0;
    s_choice->count = 0;
  }
  __syncthreads();
  if (t < 32) { /* lane l: groups 63 - 2l and 62 - 2l, best first */
    const unsigned a = s_gtot[63 - 2 * lane], b = s_gtot[62 - 2 * lane];
    const unsigned x = air_warp_incl_sum(a + b);
    const unsigned before = x - a - b;
    if (before < k_rem && k_rem <= before + a) {
      s_sel[0] = 63 - 2 * lane;
      s_sel[1] = before;
    } else if (before + a < k_rem && k_rem <= before + a + b) {
      s_sel[0] = 62 - 2 * lane;
      s_sel[1] = before + a;
    }
  }
  __syncthreads();
  /* s_sel is not zeroed a pass: where no lane chose (a broken invariant) the last pass's group,
   * clamped, keeps the reads in bounds (zeroing it at a pass's start was the one access
   * compute-sanitizer's racecheck flagged in these passes, on sorted rows, docs/perf-notes.md v0.40) */
  const unsigned g = min(s_sel[0], (unsigned)AIR_CLUSTER_GROUPS - 1u), gbefore = s_sel[1];
  if (t < cs * 32) {
    const unsigned v = cluster.map_shared_rank(s_hist, t / 32)[g * 32 + (t % 32)];
    if (v) atomicAdd(&s_btot[t % 32], v);
  }
  __syncthreads();
  if (t < 32) { /* lane l: bin 31 - l of the group */
    const unsigned c = s_btot[31 - lane];
    const unsigned x = air_warp_incl_sum(c);
    const unsigned before = gbefore + x - c;
    if (before < k_rem && k_rem <= before + c) {
      s_choice->digit = (int)(g * 32 + 31 - lane);
      s_choice->greater = before;
      s_choice->count = c;
    }
  }
  __syncthreads();
}

/*
 * The cluster kernel's delegate start (Dr. Top-k's delegates, paper 004 sec. 3, inside one
 * cluster): for small k it replaces the radix passes, whose chain of block barriers and
 * DSMEM rounds (~2 us a pass) leads an LLM-sampling call's time.
 *  (1) Threads form groups of dgrp (a power of two); a group's largest key (of the vectors
 *      its threads staged) is published, 1024 / dgrp a block. The D delegates are the
 *      maxima of runs of g = cs x 1024 / (dgrp x D) published ones (cs, D, dgrp are
 *      powers of two and D >= cs, so a run lies in one block): D / cs a block, D follows k,
 *      not the cluster's size. Each block pushes its D / cs to every block (st.async).
 *  (2) Every block ranks the D delegates itself (the same answer everywhere): thr = the
 *      k-th largest delegate. k groups hold a key >= thr, so the row's k best all have
 *      keys >= thr. In rows of random order about -D ln(1 - k / D) keys pass (1.39k at
 *      D = 2k).
 *  (3) Every block counts its keys > thr and == thr and pushes both counts to every block;
 *      with all counts each block knows which candidates go (the ties at thr only as many
 *      as needed, the lowest indices first: step (3) below) and where they go in rank 0's
 *      buffer, and pushes them there.
 *  (4) Rank 0 ranks its candidates by (key, lower index): the candidate ranked r < k is
 *      slot r (so the slots come out sorted, though sorted output is still sorted after).
 * No cluster barrier after the one at the kernel's start: every exchange is an st.async
 * push that the receiver waits for on its own mbarrier (cluster_async.cuh says why), so
 * no step pays the barrier's GPU-wide memory fence, and blocks other than rank 0 leave
 * as soon as their candidates are sent.
 * With more than air_cluster_del_cap keys > thr (rows whose best keys crowd a few groups,
 * e.g. sorted rows) every block sees the same counts, nothing is sent, and the radix passes
 * run after the start. Ranking is quadratic (D^2 and c^2
 * compares over a block), which bounds D and the cap. Scratch: the histograms' space
 * (AIR_CLUSTER_SCRATCH bytes), free until pass 0: [0, 4 KB) this block's published maxima,
 * [4 KB, 8 KB) the cluster's delegates (32-bit words for keys of up to 32 bits, else
 * 64-bit), [8 KB, 16 KB) rank 0's candidates (keys <= 32 bits: key << 32 | ~index;
 * 64-bit keys: keys, then indices).
 */
enum {
  AIR_CLUSTER_SCRATCH = 2 * AIR_CLUSTER_BINS * 4,
  AIR_CLUSTER_DEL_BLOCK_MAX = 512, /* delegates per block at most (dgrp >= 2) */
  AIR_CLUSTER_DEL_MAX = 1024,      /* delegates per cluster at most */
  AIR_CLUSTER_CAND_MAX = 512       /* candidates rank 0 holds at most */
};
/* The candidates rank 0 takes for k (beyond them the radix passes run): ~2.9x the expected count at D = 2k. */
__host__ __device__ __forceinline__ constexpr int air_cluster_del_cap(int64_t k) {
  return 4 * k + 64 < AIR_CLUSTER_CAND_MAX ? (int)(4 * k + 64) : AIR_CLUSTER_CAND_MAX;
}

/* The delegate start's per-block synchronisation: mbarriers for the delegates, the counts and
 * rank 0's candidates, the counts themselves, and this block's running candidate count. */
struct air_del_sync {
  unsigned long long bar[3];
  unsigned cnt[2][AIR_CLUSTER_MAX_BLOCKS]; /* every block's keys > thr, and == thr */
  unsigned mine[2];                        /* this block's, counted */
  unsigned wsum[AIR_CLUSTER_THREADS / 32]; /* air_cluster_first_ties' warp totals */
};
enum { AIR_DEL_BAR_DELEGATES = 0, AIR_DEL_BAR_COUNTS = 1, AIR_DEL_BAR_CANDIDATES = 2 };

/* At the kernel's start, before staging (thread 0, then every thread arrives on the cluster
 * barrier that air_cluster_delegates waits on before its first push). */
template <int KB>
__device__ __forceinline__ void air_cluster_delegates_init(air_del_sync* S, unsigned cs, int D) {
  if (threadIdx.x == 0) {
    for (int b = 0; b < 3; ++b) mbar_init(&S->bar[b]);
    S->mine[0] = S->mine[1] = 0;
    /* what the first two exchanges deliver is known now: expect it before any of it can arrive */
    mbar_expect_tx(&S->bar[AIR_DEL_BAR_DELEGATES], (unsigned)D * (KB == 64 ? 8u : 4u));
    mbar_expect_tx(&S->bar[AIR_DEL_BAR_COUNTS], cs * 8u);
    cluster_mbar_init_fence();
  }
  cluster_arrive_relaxed();
}

/* %globaltimer in ns, for the paths' phase stamps (measurement only) */
__device__ __forceinline__ unsigned long long air_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* The delegate start's ordered ties: f(r, i) for the block's first m staged keys equal to thr
 * in index order (r = 0 .. m - 1, i the slice position), scanning the slice in chunks of a
 * unit a thread (a 16-byte group, or one element of an unaligned slice's tail) with a block
 * prefix sum a chunk, until m are found. Block-uniform m; every thread calls it. */
template <topk_dtype DT, typename F>
__device__ void air_cluster_first_ties(const typename topk_dtype_traits<DT>::key_t* s_key, int my_len, int nvec,
                                       typename topk_dtype_traits<DT>::key_t thr, unsigned m, F&& f, unsigned* wsum) {
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  typedef typename air_cword<KB>::type CT;
  constexpr int NT = AIR_CLUSTER_THREADS, NWARP = NT / 32, V = 16 / (int)sizeof(KeyT), NW = (int)(16 / sizeof(CT));
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int units = nvec + (my_len - nvec * V);
  unsigned taken = 0; /* block-uniform */
  for (int u0 = 0; u0 < units && taken < m; u0 += NT) {
    const int u = u0 + (int)t;
    CT w[NW] = {};
    unsigned e = 0;
    if (u < nvec) {
      air_words(((const uint4*)s_key)[u], w);
#pragma unroll
      for (int j = 0; j < V; ++j) e += air_key_at<KB>(w, j) == (CT)thr;
    } else if (u < units) {
      e = s_key[nvec * V + (u - nvec)] == thr;
    }
    const unsigned x = air_warp_incl_sum(e);
    if (lane == 31) wsum[warp] = x;
    __syncthreads();
    const unsigned ws = lane < NWARP ? wsum[lane] : 0u, wx = air_warp_incl_sum(ws);
    unsigned r = taken + __shfl_sync(0xffffffffu, wx - ws, warp) + x - e; /* ties before this unit */
    taken += __shfl_sync(0xffffffffu, wx, 31);
    if (e && r < m) {
      if (u < nvec) {
#pragma unroll
        for (int j = 0; j < V; ++j)
          if (air_key_at<KB>(w, j) == (CT)thr) {
            if (r < m) f(r, u * V + j);
            ++r;
          }
      } else {
        f(r, nvec * V + (u - nvec));
      }
    }
    __syncthreads(); /* wsum is rewritten */
  }
}

/* Thread t's share of a staged slice's scalar tail (the keys after its nvec whole 16-byte vectors):
 * f(i, key) for each key >= lim, i the slice position. */
template <topk_dtype DT, typename F>
__device__ __forceinline__ void air_cluster_each_tail_key(const typename topk_dtype_traits<DT>::key_t* s_key,
                                                          int my_len, int nvec,
                                                          typename topk_dtype_traits<DT>::key_t lim, int t, F&& f) {
  constexpr int V = 16 / (int)sizeof(typename topk_dtype_traits<DT>::raw_t);
  for (int i = nvec * V + t; i < my_len; i += AIR_CLUSTER_THREADS)
    if (s_key[i] >= lim) f(i, s_key[i]);
}

/* The starts' scans of this thread's staged keys (its vectors t, t + NT, ..., then its share of the
 * slice's scalar tail): f(i, key) for each key >= lim, i the slice position; a vector with no key
 * >= lim is skipped after one compare of its words (most are, at the starts' thresholds). */
template <topk_dtype DT, typename F>
__device__ __forceinline__ void air_cluster_each_key(const typename topk_dtype_traits<DT>::key_t* s_key, int my_len,
                                                     int nvec, typename topk_dtype_traits<DT>::key_t lim, F&& f) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  typedef typename air_cword<KB>::type CT;
  constexpr int NT = AIR_CLUSTER_THREADS, V = 16 / (int)sizeof(RawT), NW = (int)(16 / sizeof(CT));
  const int t = (int)threadIdx.x;
  const CT lim1 = KB == 16 ? (CT)(lim - 1) * (CT)0x10001u : (CT)(lim - 1);
  for (int v = t; v < nvec; v += NT) {
    const uint4 q = ((const uint4*)s_key)[v];
    if (lim != 0 && !air_any_gt(q, lim1, KB)) continue;
    CT w[NW];
    air_words(q, w);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const CT x = air_key_at<KB>(w, e);
      if (x >= (CT)lim) f(v * V + e, (KeyT)x);
    }
  }
  air_cluster_each_tail_key<DT>(s_key, my_len, nvec, lim, (int)threadIdx.x, f);
}

/* Returns true when the row is done (the block returns), false when the radix passes must run. */
template <topk_dtype DT>
__device__ bool air_cluster_delegates(const air_params& P, unsigned rank, unsigned cs, int64_t row,
                                      const air_row_extent& R, int64_t lo,
                                      const typename topk_dtype_traits<DT>::key_t* s_key, int my_len, int nvec,
                                      typename topk_dtype_traits<DT>::key_t mine_max, int dgrp, int D,
                                      unsigned char* scratch, air_del_sync* S,
                                      typename air_cword<topk_dtype_traits<DT>::bits>::type* s_thr, unsigned long long t0,
                                      bool stamps) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  typedef typename air_cword<KB>::type CT; /* also what shuffles take */
  typedef CT DelT; /* a pushed delegate: 32-bit words for keys of up to 32 bits */
  constexpr int NT = AIR_CLUSTER_THREADS;
  static_assert(AIR_CLUSTER_DEL_BLOCK_MAX * sizeof(KeyT) <= 4096 &&
                    (KB == 64 ? AIR_CLUSTER_DEL_MAX / 2 : AIR_CLUSTER_DEL_MAX) * sizeof(DelT) <= 4096 &&
                    AIR_CLUSTER_CAND_MAX * (KB == 64 ? 12 : 8) <= AIR_CLUSTER_SCRATCH - 8192,
                "the delegate start's scratch layout");
  KeyT* s_dmine = (KeyT*)scratch;
  DelT* s_dall = (DelT*)(scratch + 4096);
  unsigned long long* s_cand = (unsigned long long*)(scratch + 8192); /* composites, or 64-bit keys */
  unsigned* s_cidx = (unsigned*)(s_cand + AIR_CLUSTER_CAND_MAX);      /* 64-bit keys: their indices */
  const unsigned t = threadIdx.x, lane = t & 31;
  /* powers of two throughout: shifts, not divisions */
  const int lg_dgrp = __ffs(dgrp) - 1, lg_db = __ffs(NT) - 1 - lg_dgrp, lg_dpb = __ffs(D) - __ffs((int)cs);
  const int lg_g = __ffs((int)cs) - 1 + lg_db - (__ffs(D) - 1); /* published per delegate */
  const int64_t k = P.k;
  const unsigned cap = (unsigned)air_cluster_del_cap(k);
  const bool solo = cs == 1; /* a cluster of one block: local stores (cluster_send) */
  unsigned long long ts[8], clk[2] = {0, 0}; /* stamps only: %globaltimer, and clock64 at stamps 0 and 5 */
#define AIR_CLUSTER_STAMP(i)                                \
  if (stamps && t == 0) {                                   \
    ts[i] = air_now();                                      \
    if (i == 0 || i == 5) clk[i == 5] = clock64();          \
  }

  /* this thread's keys (the vectors it staged, then its scalar tail): f(i, key) for each key >= lim */
  auto each_key = [&](KeyT lim, auto&& f) { air_cluster_each_key<DT>(s_key, my_len, nvec, lim, f); };

  /* (1) group maxima (an empty group's is 0), this block's D / cs delegates pushed to every block.
   * A group is dgrp threads; each thread's largest key (mine_max) was taken while it staged its
   * keys, so this step reads no key from shared memory. */
  AIR_CLUSTER_STAMP(0);
  KeyT m = mine_max;
  for (int o = 1; o < dgrp; o <<= 1) {
    const KeyT x = (KeyT)__shfl_xor_sync(0xffffffffu, (CT)m, o);
    m = x > m ? x : m;
  }
  if ((t & (dgrp - 1)) == 0) s_dmine[t >> lg_dgrp] = m;
  if (t == 0) *s_thr = 0;
  __syncthreads();
  cluster_wait(); /* the kernel start's arrival: every block runs and has its mbarriers */
  if ((int)t < D) { /* thread t: delegate j of this block, to block dst */
    const int j = (int)t & ((1 << lg_dpb) - 1), dst = (int)t >> lg_dpb;
    const KeyT* run = s_dmine + (j << lg_g);
    KeyT d = run[0];
    for (int i = 1; i < (1 << lg_g); ++i) d = run[i] > d ? run[i] : d;
    DelT* at = s_dall + ((int)rank << lg_dpb) + j;
    cluster_send<DelT>(at, (unsigned)dst, (DelT)d, &S->bar[AIR_DEL_BAR_DELEGATES], solo);
  }
  if (solo) __syncthreads(); /* the local stores, ordered for compute-sanitizer too (racecheck sees no mbarrier) */
  mbar_wait(&S->bar[AIR_DEL_BAR_DELEGATES], 0);
  AIR_CLUSTER_STAMP(1);

  /* (2) the k-th largest of the D delegates, the largest with >= k delegates >= it: L lanes a
   * delegate, each comparing 16-byte groups. Every block runs this whole step, so its
   * instructions are its time (issue-bound): one count a pair, not > and >= both (0.81 against
   * 1.07 us at D = 128; docs/perf-notes.md v0.39). */
  {
    constexpr int PER = 16 / (int)sizeof(DelT); /* delegates in a group */
    const int ng = D / PER;                     /* D >= 16: whole groups */
    /* L = min(NT / D, 32) lanes a delegate, fewer while a lane would compare < 8 groups (fewer
     * threads and shuffles: D = 128, 32 groups: 4 lanes, not 8) */
    int lg_l = (__ffs(NT) - 1) - (__ffs(D) - 1);
    if (lg_l > 5) lg_l = 5;
    while (lg_l > 0 && (ng >> lg_l) < 8) --lg_l;
    const int L = 1 << lg_l, i = (int)t >> lg_l, s = (int)t & (L - 1);
    const bool live = i < D;
    const DelT d = live ? s_dall[i] : (DelT)0;
    unsigned ge = 0;
    if (live)
      for (int jg = s; jg < ng; jg += L) {
        if constexpr (KB == 64) {
          const ulonglong2 q = ((const ulonglong2*)s_dall)[jg];
          ge += (q.x >= d) + (q.y >= d);
        } else {
          const uint4 q = ((const uint4*)s_dall)[jg];
          ge += (q.x >= d) + (q.y >= d) + (q.z >= d) + (q.w >= d);
        }
      }
    for (int o = 1; o < L; o <<= 1) ge += __shfl_xor_sync(0xffffffffu, ge, o);
    /* a delegate above the k-th largest has < k delegates >= it: the maximum is the k-th */
    if (live && s == 0 && k <= (int64_t)ge) atomicMax(s_thr, (CT)d);
  }
  __syncthreads();
  const KeyT thr = (KeyT)*s_thr; /* 0 if none qualified (only with D < k): every key passes, the count overflows */
  AIR_CLUSTER_STAMP(2);

  /* (3) this thread's keys > thr and == thr counted (one shared atomic a warp each, for their
   * places among the block's), both counts pushed to every block; then the candidates go to
   * rank 0: the keys > thr of every block in rank order, then the ties at thr. Which ties:
   *  - all of them while the candidates fit the cap (rank 0's ranking orders ties by index);
   *  - none when k keys are > thr (the k-th key is above thr);
   *  - else the k - G ties of lowest index (G keys > thr), found in index order: the slices
   *    are in rank order, each block takes its share by the counts before it and its first
   *    ties by a scan of its slice (air_cluster_first_ties). Rows whose k-th key repeats
   *    hundreds of times (bf16) so take no radix pass.
   * Only a row with more than the cap keys > thr (a sorted row) takes the radix passes. */
  unsigned cg = 0, ce = 0;
  /* A thread whose largest key is below thr has none to count: at k <= 128 all but ~k threads
   * of the cluster, which so skip reading their part of the slice again (the count took 1.0 /
   * 0.7 us over slices of 128 / 64 KB; LLM k = 50 under CLUSTER 0.96-0.99x the time since;
   * docs/perf-notes.md v0.38). */
  if (mine_max >= thr) each_key(thr, [&](int, KeyT key) { key > thr ? ++cg : ++ce; });
  unsigned slot_g = 0, slot_e = 0; /* among the block's keys > thr, and among its ties */
  if (__any_sync(0xffffffffu, (cg | ce) != 0)) { /* warp-uniform: most warps have none to place */
    const unsigned xg = air_warp_incl_sum(cg), xe = air_warp_incl_sum(ce);
    unsigned bg = 0, be = 0;
    if (lane == 31) {
      if (xg) bg = atomicAdd(&S->mine[0], xg);
      if (xe) be = atomicAdd(&S->mine[1], xe);
    }
    slot_g = __shfl_sync(0xffffffffu, bg, 31) + xg - cg;
    slot_e = __shfl_sync(0xffffffffu, be, 31) + xe - ce;
  }
  __syncthreads();
  if (t < cs) {
    cluster_send<unsigned>(&S->cnt[0][rank], t, S->mine[0], &S->bar[AIR_DEL_BAR_COUNTS], solo);
    cluster_send<unsigned>(&S->cnt[1][rank], t, S->mine[1], &S->bar[AIR_DEL_BAR_COUNTS], solo);
  }
  if (solo) __syncthreads();
  mbar_wait(&S->bar[AIR_DEL_BAR_COUNTS], 0);
  /* the cs blocks' counts summed by lanes (lane r: block r's), in every warp: a serial loop
   * over them took 0.6 / 1.0 us at 8 / 16 blocks (docs/perf-notes.md v0.38) */
  const unsigned cg_r = lane < cs ? S->cnt[0][lane] : 0u, ce_r = lane < cs ? S->cnt[1][lane] : 0u;
  const unsigned G = __reduce_add_sync(0xffffffffu, cg_r), E = __reduce_add_sync(0xffffffffu, ce_r);
  const unsigned g_before = __reduce_add_sync(0xffffffffu, lane < rank ? cg_r : 0u);
  const unsigned e_before = __reduce_add_sync(0xffffffffu, lane < rank ? ce_r : 0u);
  AIR_CLUSTER_STAMP(3);
  if (G > cap) { /* every block has the same counts: all take the radix passes, nothing was sent */
    __syncthreads(); /* the passes rewrite this scratch */
    return false;
  }
  /* ties sent: all, none, or the first `need` by index (this block's from its first) */
  const bool all_ties = G + E <= cap, ordered = !all_ties && (int64_t)G < k;
  const unsigned need = ordered ? (unsigned)(k - (int64_t)G) : 0u;
  const unsigned total = all_ties ? G + E : ordered ? G + need : G;
  unsigned long long* bar0 = &S->bar[AIR_DEL_BAR_CANDIDATES]; /* rank 0's */
  auto send = [&](unsigned at, int i, KeyT key) {
    const unsigned idx = (unsigned)(lo + i);
    if constexpr (KB == 64) {
      cluster_send<unsigned long long>(s_cand + at, 0u, (unsigned long long)key, bar0, solo);
      cluster_send<unsigned>(s_cidx + at, 0u, idx, bar0, solo);
    } else {
      cluster_send<unsigned long long>(s_cand + at, 0u, ((unsigned long long)key << 32) | (unsigned long long)~idx, bar0, solo);
    }
  };
  if (cg + (all_ties ? ce : 0u) > 0) {
    slot_g += g_before;
    slot_e += G + e_before;
    each_key(thr, [&](int i, KeyT key) {
      if (key > thr) send(slot_g++, i, key);
      else if (all_ties) send(slot_e++, i, key);
    });
  }
  if (ordered) {
    const unsigned from = e_before < need ? e_before : need; /* ties the blocks before send */
    const unsigned mine = S->cnt[1][rank] < need - from ? S->cnt[1][rank] : need - from;
    air_cluster_first_ties<DT>(s_key, my_len, nvec, thr, mine,
                               [&](unsigned r, int i) { send(G + from + r, i, thr); }, S->wsum);
  }
  if (rank != 0) return true; /* nothing is sent to this block any more */
  if (t == 0) mbar_expect_tx(&S->bar[AIR_DEL_BAR_CANDIDATES], total * (KB == 64 ? 12u : 8u));
  if (solo) __syncthreads();
  mbar_wait(&S->bar[AIR_DEL_BAR_CANDIDATES], 0);
  AIR_CLUSTER_STAMP(4);

  /* (4) rank 0: each candidate's rank among the nc, L lanes a candidate, two candidates a load;
   * no more lanes than leave each ~8 loads (at k = 50, 60 candidates: 4 lanes, not 16, in the
   * same ~1.1 us: the step's time is not its lanes' work, docs/perf-notes.md v0.39). */
  const int nc = (int)total;
  int lg_l = 0;
  while (lg_l < 5 && (2 << lg_l) * nc <= NT && (nc >> (lg_l + 1)) > 8) ++lg_l;
  const int L = 1 << lg_l;
  const RawT* in_row = (const RawT*)P.in + R.start;
  for (int i0 = 0; i0 < nc; i0 += NT >> lg_l) { /* one round unless nc > NT / L */
    const int i = i0 + ((int)t >> lg_l), s = (int)t & (L - 1);
    const bool live = i < nc;
    const unsigned long long ci = live ? s_cand[i] : 0ull;
    unsigned r = 0;
    if constexpr (KB == 64) {
      const unsigned ii = live ? s_cidx[i] : 0u;
      if (live)
        for (int j = s; j < nc; j += L) {
          const unsigned long long cj = s_cand[j];
          r += cj > ci || (cj == ci && s_cidx[j] < ii);
        }
    } else {
      if (live)
        for (int j = 2 * s; j < nc; j += 2 * L) { /* s_cand is 16-byte aligned */
          const ulonglong2 p2 = *(const ulonglong2*)(s_cand + j);
          r += (p2.x > ci) + (j + 1 < nc && p2.y > ci);
        }
    }
    for (int o = 1; o < L; o <<= 1) r += __shfl_xor_sync(0xffffffffu, r, o);
    if (live && s == 0 && (int64_t)r < k) {
      const KeyT key = KB == 64 ? (KeyT)ci : (KeyT)(ci >> 32);
      const unsigned idx = KB == 64 ? s_cidx[i] : ~(unsigned)ci;
      air_emit(P, row, (int64_t)r, topk_raw_of_key<DT>(key, P.smallest != 0, in_row, idx), key, idx);
    }
  }
  AIR_CLUSTER_STAMP(5);
  if (stamps && t == 0) {
    printf("CLUSTAMP n=%lld k=%lld cs=%u D=%d c=%u", (long long)R.len, (long long)k, cs, D, total);
    for (int q = 0; q <= 5; ++q) printf(" %d:%llu", q, ts[q] - t0);
    printf(" clk:%llu\n", clk[1] - clk[0]); /* SM cycles from stamp 0 to 5: the clock rate, with 0:, 5: */
  }
#undef AIR_CLUSTER_STAMP
  return true;
}

#include "air_cluster_wide.cuh"

template <topk_dtype DT>
__global__ void __launch_bounds__(AIR_CLUSTER_THREADS, 1) air_cluster_kernel(const air_params P, const int64_t slice,
                                                                           const int dgrp, const int ndel,
                                                                           const int wide_q, const int stamps_on) {
  const bool stamps = TOPK_AIR_STAMPS && stamps_on != 0; /* a constant false but in stamp builds */
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  typedef typename air_cword<KB>::type CT;
  constexpr int V = 16 / (int)sizeof(RawT);
  constexpr int NW = (int)(16 / sizeof(CT));
  constexpr int NT = AIR_CLUSTER_THREADS, NWARP = NT / 32;
  const int NP = air_num_passes(KB, AIR_CLUSTER_DIGIT_BITS);
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const unsigned rank = cluster.block_rank();
  const unsigned cs = cluster.num_blocks();
  const unsigned long long t0 = stamps ? air_now() : 0ull;

  extern __shared__ __align__(16) unsigned char air_stage_smem[];
  KeyT* s_key = (KeyT*)air_stage_smem; /* the slice's rank keys */
  unsigned* s_hist2 = (unsigned*)(air_stage_smem + ((slice * (int64_t)sizeof(KeyT) + 15) & ~(int64_t)15));
  __shared__ unsigned s_grp2[2][AIR_CLUSTER_GROUPS]; /* per pass parity: group sums of s_hist2's halves */
  __shared__ unsigned s_gtot[AIR_CLUSTER_GROUPS], s_btot[32], s_sel[2];
  __shared__ unsigned s_wcnt[2][NWARP]; /* per warp: elements taken from the front, ties */
  __shared__ unsigned s_counts[2];      /* this block's totals, read by higher ranks */
  __shared__ unsigned s_next_slot;      /* rank 0's: the next free output slot (early-stop final) */
  __shared__ unsigned long long s_ao[2 * NWARP];
  __shared__ unsigned long long s_ao_blk[2]; /* this block's AND and OR of its keys, read by every rank */
  __shared__ air_choice<unsigned> s_choice;
  __shared__ union {
    air_del_sync del;   /* delegate start: its mbarriers and counts */
    air_wide_sync wide; /* wide start: its mbarriers, headers and selects */
  } s_start;
  __shared__ CT s_thr; /* delegate start: the k-th largest delegate */

  const int64_t row = P.row0 + blockIdx.y;
  const air_row_extent R = air_row(P, row);
  /* This block's slice [lo, lo + my_len) of the row, and for 32-bit keys its first round of loads
   * (the staging loops below take them as their first), issued before the rest of the set-up: the
   * loads had left ~0.7 us after the block's start (stamps, f32), and issued first they took f32
   * k = 1024 to 0.971x and k = 50 to 0.963x a call (H200, graph replay). 16-bit keys lost 2-3 % the
   * same way (not understood), so they load in their loop.
   * docs/perf-notes.md v0.48. */
  const int64_t lo = (int64_t)rank * slice < R.len ? (int64_t)rank * slice : R.len;
  const int my_len = (int)(R.len - lo < slice ? R.len - lo : slice);
  const RawT* src = (const RawT*)P.in + R.start + lo;
  /* unaligned: element by element */
  const int nvec = (((uintptr_t)src) & 15) == 0 ? (int)((unsigned)my_len / (unsigned)V) : 0;
  constexpr int UNROLL = AIR_CLUSTER_ROUND;
  constexpr bool early = KB == 32;
  /* the entries past nvec are left unset: the staging loops read w0[j] only where j NT + t < nvec.
   * Kept as keys in registers until the wide start's collection (every LLM slice is one round) they
   * spilled: 32 registers beside the kernel's state at 64 a thread; 1.08-1.27x (docs/perf-notes.md v0.49). */
  uint4 w0[UNROLL];
  if constexpr (early) {
    const int rem = nvec - (int)threadIdx.x; /* this thread's vectors j NT < rem exist */
#pragma unroll
    for (int j = 0; j < UNROLL; ++j)
      if (j * NT < rem) w0[j] = ((const uint4*)src)[j * NT + (int)threadIdx.x];
  }
  const bool smallest = P.smallest != 0;
  if (R.len <= P.k) { /* the whole cluster returns: no block touches another's memory */
    air_copy_row<DT, unsigned>(P, row, R, (int64_t)rank * NT + threadIdx.x, (int64_t)cs * NT);
    return;
  }
  /* a start's init before staging, whose latency hides it (at most one start runs: the host's choice),
   * but for the wide start with 32-bit keys (below) */
  const bool del = dgrp > 0, wide = KB <= 32 && wide_q > 0 && !del;
  /* The wide start's init for 32-bit keys runs after the staging's first loads are issued: before
   * them it held every warp's loads back (bench/cluster_place.cu: 0.2-0.8 us of the median block's
   * staging), after them it is hidden, and its first wait on the cluster barrier comes a bound
   * later. f32 k = 1024: 0.977-0.994x a call. Not for the delegate start, whose first push waits on
   * the barrier right after the staging (f32 k = 50: 0.994-1.016x). docs/perf-notes.md v0.45.
   * (Since v0.48 the first round's loads of 32-bit keys leave before either start's init.) */
  auto start_init = [&]() {
    if (del) air_cluster_delegates_init<KB>(&s_start.del, cs, ndel);
    else if (wide) air_cluster_wide_init(&s_start.wide, rank, cs);
  };
  const bool init_late = KB == 32 && wide;
  if (!init_late) start_init();

  /* Stage the rank keys of this block's slice. Over this thread's key words (16-bit keys: two per
   * word): the AND and OR for the passes, and the largest key for the delegate start. Where the
   * start runs, the AND and OR wait until it falls back to the passes (sorted rows): they are
   * instructions in a loop the SM issues at its limit. */
  CT k_and = ~(CT)0, k_or = 0;
  CT k_max = 0; /* 16-bit keys: per half */
  bool staged = false;
  if constexpr (KB == 32)
    if (del || wide) { /* the starts, 32-bit keys: ~4 instructions an element, no AND / OR */
      auto after_issue = [&]() {
        if (init_late) start_init();
      };
      k_max = smallest ? air_cluster_stage_open<DT, true, NT>((const uint4*)src, (uint4*)s_key, nvec, w0, after_issue)
                       : air_cluster_stage_open<DT, false, NT>((const uint4*)src, (uint4*)s_key, nvec, w0, after_issue);
      staged = true;
    }
  if (!staged) {
    /* every load of a round in flight before any store: one DRAM round trip per NT x UNROLL x 16 bytes
     * (32-bit keys: the first round's, w0, issued at the kernel's start) */
    auto take = [&](const uint4(&w)[UNROLL], int v0) {
#pragma unroll
      for (int j = 0; j < UNROLL; ++j) {
        const int v = v0 + j * NT + threadIdx.x;
        if (v < nvec) {
          const uint4 kv = air_rank_keys<DT>(w[j], smallest);
          ((uint4*)s_key)[v] = kv;
          CT kw[NW];
          air_words(kv, kw);
#pragma unroll
          for (int e = 0; e < NW; ++e) {
            if (!del && !wide) {
              k_and &= kw[e];
              k_or |= kw[e];
            }
            if constexpr (KB == 16) k_max = __vmaxu2(k_max, kw[e]);
            else k_max = kw[e] > k_max ? kw[e] : k_max;
          }
        }
      }
    };
    int v0 = 0;
    if constexpr (early) {
      take(w0, 0);
      v0 = NT * UNROLL;
    }
    for (; v0 < nvec; v0 += NT * UNROLL) {
      uint4 w[UNROLL];
      air_cluster_load_round<NT>((const uint4*)src, v0 + (int)threadIdx.x, nvec, w);
      take(w, v0);
    }
  }
  for (int i = nvec * V + threadIdx.x; i < my_len; i += NT) {
    const KeyT key = topk_to_rank_key<DT>(src[i], smallest);
    s_key[i] = key;
    const CT kw = KB == 16 ? (CT)key * (CT)0x10001u : (CT)key; /* both halves, as in a word */
    k_and &= kw;
    k_or |= kw;
    if constexpr (KB == 16) k_max = __vmaxu2(k_max, kw);
    else k_max = kw > k_max ? kw : k_max;
  }
  if constexpr (KB == 16) k_max = max(k_max & 0xFFFFu, k_max >> 16);
  /* small k: the delegate start (cluster-uniform; its block barrier after the group maxima comes
   * before any thread reads keys another staged) */
  if (del && air_cluster_delegates<DT>(P, rank, cs, row, R, lo, s_key, my_len, nvec, (KeyT)k_max, dgrp, ndel,
                                       (unsigned char*)s_hist2, &s_start.del, &s_thr, t0, stamps != 0))
    return;
  if constexpr (KB <= 32) /* k up to 1024: the wide start (its buffer: s_hist2 and AIR_WIDE_EXTRA bytes after it) */
    if (wide && air_cluster_wide<DT>(P, rank, cs, row, R, lo, s_key, my_len, nvec, (KeyT)k_max, (unsigned)wide_q,
                                     (unsigned long long*)s_hist2, &s_start.wide, t0, stamps != 0))
      return;
  if (del || wide) /* fallen back to the passes: the AND and OR of this thread's staged vectors now */
    for (int v = threadIdx.x; v < nvec; v += NT) {
      CT kw[NW];
      air_words(((const uint4*)s_key)[v], kw);
#pragma unroll
      for (int e = 0; e < NW; ++e) {
        k_and &= kw[e];
        k_or |= kw[e];
      }
    }
  /*
   * The leading bits the keys share. This block's (blk_c, from its AND and OR): a pass
   * whose digit lies within them counts the slice in one bin, without atomics (they
   * would all hit that bin). The row's (the AND / OR of every block, read after pass
   * 0's barrier, so no barrier of its own): when it covers pass 0's digit, the passes
   * continue below it.
   */
  const CT kmask = KB == 64 ? ~(CT)0 : (CT)((1ull << KB) - 1ull);
  unsigned long long blk_o;
  int blk_c;
  {
    unsigned long long a = (unsigned long long)k_and, o = (unsigned long long)k_or;
    if (KB == 16) { /* fold the two halves */
      a = (a & (a >> 16)) & 0xFFFFull;
      o = (o | (o >> 16)) & 0xFFFFull;
    }
    air_block_and_or<NWARP>(a, o, s_ao); /* synchronises: the staged slice is visible */
    if (threadIdx.x == 0) {
      s_ao_blk[0] = a;
      s_ao_blk[1] = o;
      s_next_slot = 0; /* before pass 0's cluster barrier, so before any block's atomics on it */
      s_sel[0] = s_sel[1] = 0; /* defined before pass 0's choice, which reads it */
    }
    blk_o = o;
    blk_c = P.common_prefix && my_len > 0 ? air_common_bits<KB>(a, o) : 0;
  }
  unsigned long long pk = 0;
  int level = 0;
  /*
   * One cluster barrier per pass: pass q counts into half q & 1 of s_hist2 (and
   * s_grp2[q & 1]), which the other blocks read after barrier q and before they
   * arrive at barrier q + 1, so zeroing that half again in pass q + 2 is safe.
   */
  unsigned k_rem = (unsigned)P.k, cand = (unsigned)R.len;
  for (int q = 0; q < NP && level < KB; ++q) {
    const int width = air_width_below(KB, AIR_CLUSTER_DIGIT_BITS, level);
    const int shift = KB - level - width;
    unsigned* s_loc = s_hist2 + (q & 1) * AIR_CLUSTER_BINS;
    for (int b = threadIdx.x; b < AIR_CLUSTER_BINS; b += NT) s_loc[b] = 0; /* narrower digits: the top bins stay 0 */
    if (threadIdx.x < AIR_CLUSTER_GROUPS) s_gtot[threadIdx.x] = 0;
    if (threadIdx.x < 32) s_btot[threadIdx.x] = 0;
    __syncthreads();
    if (blk_c >= level + width) { /* block-uniform: every key of the slice has the same digit */
      const unsigned long long top = (blk_o & (unsigned long long)kmask) >> shift; /* level + width bits */
      if (threadIdx.x == 0 && (top >> width) == pk) s_loc[top & ((1ull << width) - 1ull)] = (unsigned)my_len;
    } else if (level == 0) {
      air_cluster_hist<KB, false>(s_key, my_len, s_loc, 0, 0ull, shift, (1u << width) - 1u);
    } else {
      air_cluster_hist<KB, true>(s_key, my_len, s_loc, level, pk, shift, (1u << width) - 1u);
    }
    __syncthreads();
    { /* group sums: warp w sums groups w and w + NWARP (32 bins each) */
      const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
      for (int g = warp; g < AIR_CLUSTER_GROUPS; g += NWARP) {
        const unsigned s = __reduce_add_sync(0xffffffffu, s_loc[g * 32 + lane]);
        if (lane == 0) s_grp2[q & 1][g] = s;
      }
    }
    cluster.sync(); /* (1) every block's histogram of this pass is out (pass 0: and its AND / OR) */
    int row_c = 0; /* pass 0: the row's common leading bits; lane r reads rank r, the warp folds */
    if (q == 0 && P.common_prefix) {
      const unsigned lane = threadIdx.x & 31;
      unsigned long long a = ~0ull, o = 0;
      if (lane < cs) {
        const unsigned long long* ao = cluster.map_shared_rank(s_ao_blk, lane);
        a = ao[0];
        o = ao[1];
      }
      air_warp_and_or(a, o);
      row_c = air_common_bits<KB>(a, o);
      if (row_c > width) pk = (o & (unsigned long long)kmask) >> (KB - row_c); /* used after the choice below */
    }
    air_cluster_choose(cluster, cs, s_loc, s_grp2[q & 1], k_rem, s_gtot, s_btot, s_sel, &s_choice);
    if (row_c > width) { /* every key shares more than this digit: it was their one bin (greater 0, count len) */
      level = row_c;
    } else {
      pk = (pk << width) | (unsigned long long)s_choice.digit;
      level += width;
    }
    k_rem -= s_choice.greater;
    cand = s_choice.count;
    if (cand == k_rem) break; /* early stop: every candidate is a result (same in every block) */
  }

  /*
   * Final (see the comment above the kernel). Ties: klo <= key <= khi; results:
   * key > khi. level > 0 (a pass ran, or every key shares it), so 0 <= sh < KB. Thread t owns the run
   * [t x L, (t + 1) x L) of the slice: runs are in thread order, so index order is
   * (thread, group, element). L is an odd number n of 16-byte groups, so the eight
   * threads of a quarter-warp reading group j of their runs hit distinct banks.
   */
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int sh = KB - level;
  const CT klo = (CT)pk << sh;
  const CT khi = klo | (((CT)1 << sh) - 1);
  const int n = (((my_len + NT - 1) / NT + V - 1) / V) | 1;
  const int e0 = min((int)threadIdx.x * n * V, my_len), e1 = min(e0 + n * V, my_len);
  const int nfull = (e1 - e0) / V; /* whole groups of the run; the elements after them are the slice's last */
  const uint4* gv = (const uint4*)s_key + e0 / V;

  /* (a) the groups holding a key >= klo: bit j for group j (runs of more than 64 groups: every group) */
  unsigned long long cmask = 0;
  if (klo == 0) {
    cmask = nfull >= 64 ? ~0ull : (1ull << nfull) - 1ull;
  } else if (nfull <= 64) {
    const CT thr = KB == 16 ? (CT)(klo - 1) * (CT)0x10001u : (CT)(klo - 1);
    unsigned long long rev = 0; /* group j at bit nfull - 1 - j */
    for (int j = 0; j < nfull; ++j) rev = (rev << 1) | (unsigned long long)air_any_gt(gv[j], thr, KB);
    cmask = nfull > 0 ? __brevll(rev) >> (64 - nfull) : 0ull;
  }
  /* f(j) for the marked groups j, in index order */
  auto each_marked = [&](auto&& f) {
    if (nfull <= 64) {
      for (unsigned m = (unsigned)cmask; m != 0; m &= m - 1) f(__ffs(m) - 1);
      for (unsigned m = (unsigned)(cmask >> 32); m != 0; m &= m - 1) f(31 + __ffs(m));
    } else {
      for (int j = 0; j < nfull; ++j) f(j);
    }
  };

  /* (b) results (nf) and ties (nt) of the run: in the marked groups only */
  unsigned nf = 0, ng = 0; /* keys > khi, keys >= klo */
  {
    unsigned cnt = 0, nlt = 0, nle = 0; /* 16-bit keys: counts of keys < klo, <= khi (sign of the difference) */
    const CT khi1 = khi + 1;            /* 16-bit keys only: <= 0x10000 */
    each_marked([&](int j) {
      CT w[NW];
      air_words(gv[j], w);
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const CT x = air_key_at<KB>(w, e);
        if (KB == 16) {
          nlt += (unsigned)(x - klo) >> 31;
          nle += (unsigned)(x - khi1) >> 31;
        } else {
          nf += x > khi;
          ng += x >= klo;
        }
      }
      cnt += V;
    });
    for (int i = e0 + nfull * V; i < e1; ++i) {
      const CT x = s_key[i];
      nf += x > khi;
      ng += x >= klo;
    }
    if (KB == 16) {
      ng += cnt - nlt;
      nf += cnt - nle;
    }
  }

  if (cand == k_rem) {
    /*
     * Early stop: every key >= klo is a result and there are exactly k of them, so slot order
     * is free (unsorted output allows any; sorted output is sorted after the kernel). One
     * DSMEM atomic per warp on rank 0's counter gives each warp its slots, instead of the
     * index-ordered prefix across ranks below, which costs a cluster barrier and a stash.
     */
    const unsigned c = ng; /* the run's keys >= klo, counted in (b) */
    const unsigned x = air_warp_incl_sum(c);
    unsigned base = 0;
    if (lane == 31 && x > 0) base = atomicAdd(cluster.map_shared_rank(&s_next_slot, 0u), x);
    unsigned slot = __shfl_sync(0xffffffffu, base, 31) + x - c;
    auto emit_at = [&](int i) {
      air_emit(P, row, (int64_t)slot++, src[i], s_key[i], (unsigned)(lo + i));
    };
    if (c > 0) {
      each_marked([&](int j) {
        CT w[NW];
        air_words(gv[j], w);
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (air_key_at<KB>(w, e) >= klo) emit_at(e0 + j * V + e);
      });
      for (int i = e0 + nfull * V; i < e1; ++i)
        if ((CT)s_key[i] >= klo) emit_at(i);
    }
    cluster.sync(); /* no block leaves while another may still add to rank 0's counter */
    return;
  }

  const unsigned nt = ng - nf;
  const unsigned xf = air_warp_incl_sum(nf), xt = air_warp_incl_sum(nt); /* inclusive, over the warp's lanes */
  if (lane == 31) {
    s_wcnt[0][warp] = xf;
    s_wcnt[1][warp] = xt;
  }
  unsigned fcnt = xf - nf, tcnt = xt - nt; /* results / ties before the run in the block */
  __syncthreads();
  unsigned ftot = 0, ttot = 0;
  for (int w = 0; w < NWARP; ++w) {
    if (w < warp) {
      fcnt += s_wcnt[0][w];
      tcnt += s_wcnt[1][w];
    }
    ftot += s_wcnt[0][w];
    ttot += s_wcnt[1][w];
  }
  if (threadIdx.x == 0) {
    s_counts[0] = ftot;
    s_counts[1] = ttot;
  }
  cluster.sync(); /* (3) every block's totals are published */
  unsigned bf = 0, bt = 0; /* results / ties in the slices of lower ranks: lane r reads rank r < rank, the warp sums */
  if ((unsigned)lane < rank) {
    const unsigned* rc = cluster.map_shared_rank(s_counts, (unsigned)lane);
    bf = rc[0];
    bt = rc[1];
  }
  bf = __reduce_add_sync(0xffffffffu, bf);
  bt = __reduce_add_sync(0xffffffffu, bt);
  const unsigned front = (unsigned)P.k - k_rem;
  /* This block's slotted elements, in slot order: nfe results (slots bf..), then nte ties (slots front + bt..). */
  const unsigned nfe = bf < front ? min(ftot, front - bf) : 0u;
  const unsigned nte = bt < k_rem ? min(ttot, k_rem - bt) : 0u;
  const unsigned ne = nfe + nte;
  unsigned* s_stash = s_hist2; /* the histograms are free: every block is past its last read of them (barrier 3) */

  for (unsigned rb = 0; rb < ne; rb += AIR_CLUSTER_STASH) { /* block-uniform; one round unless ne > stash */
    /*
     * (c) stash position of the run's next result: fp (slotted while < nfe); of its
     * next tie: tp (slotted while < ne). Position p goes to s_stash[p - rb].
     */
    unsigned fp = fcnt, tp = nfe + tcnt;
    auto place = [&](int i, bool res) {
      const unsigned p = res ? fp : tp;
      if (p < (res ? nfe : ne) && p - rb < (unsigned)AIR_CLUSTER_STASH) s_stash[p - rb] = (unsigned)i;
      fp += res;
      tp += !res;
    };
    if (fp < nfe || tp < ne) {
      each_marked([&](int j) {
        if (fp >= nfe && tp >= ne) return; /* the rest of the run gets no slot */
        CT w[NW];
        air_words(gv[j], w);
        unsigned cm = 0; /* the group's keys >= klo */
#pragma unroll
        for (int e = 0; e < V; ++e) cm |= (unsigned)(air_key_at<KB>(w, e) >= klo) << e;
        for (; cm != 0; cm &= cm - 1) { /* in index order */
          const int i = e0 + j * V + __ffs(cm) - 1;
          place(i, (CT)s_key[i] > khi);
        }
      });
      for (int i = e0 + nfull * V; i < e1; ++i) {
        const CT x = s_key[i];
        if (x >= klo) place(i, x > khi);
      }
    }
    __syncthreads();
    /* (d) emit this round's slots with the whole block: raw values read back from the input */
    const unsigned nr = ne - rb < (unsigned)AIR_CLUSTER_STASH ? ne - rb : (unsigned)AIR_CLUSTER_STASH;
    for (unsigned p0 = threadIdx.x; p0 < nr; p0 += 4 * NT) {
      unsigned ii[4];
      RawT raw[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) { /* the loads first: four in flight */
        const unsigned p = p0 + u * NT;
        ii[u] = p < nr ? s_stash[p] : 0u;
        raw[u] = p < nr ? src[ii[u]] : (RawT)0;
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const unsigned p = rb + p0 + u * NT;
        if (p0 + u * NT < nr) {
          const unsigned slot = p < nfe ? bf + p : front + bt + (p - nfe);
          air_emit(P, row, (int64_t)slot, raw[u], s_key[ii[u]], (unsigned)(lo + ii[u]));
        }
      }
    }
    __syncthreads(); /* the next round rewrites the stash */
  }
  cluster.sync(); /* (4) no block leaves while another may still read its s_counts */
}

/* ------------------------------------------------------------------ sorted output */

/* Segment offsets b * k for b in [0, rows]. */
static __global__ void air_segments_kernel(int64_t* seg, int64_t rows, int64_t k) {
  for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b <= rows; b += (int64_t)gridDim.x * blockDim.x)
    seg[b] = b * k;
}

/* Output slot o of the row R: the element of index idx (value read back from the input:
 * exact bits), or padding (index -1, the worst value) where pad is set. */
template <typename RawT>
__device__ __forceinline__ void air_decode_slot(const air_params& P, const air_row_extent& R, int64_t o,
                                                unsigned long long idx, bool pad) {
  if (!pad && (int64_t)idx >= R.len) pad = true; /* cannot happen; keeps the read in bounds */
  RawT v;
  int64_t ix;
  if (pad) {
    v = (RawT)P.worst_bits;
    ix = -1;
  } else {
    v = ((const RawT*)P.in)[R.start + (int64_t)idx];
    ix = (int64_t)idx;
  }
  ((RawT*)P.values)[o] = v;
  if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = ix;
  else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = (int32_t)ix;
}

/* After the sort: index from the sort buffers, value read back from the input (exact bits). */
template <typename RawT>
__global__ void __launch_bounds__(AIR_THREADS) air_decode_kernel(const air_params P, int64_t rows,
                                                                 const unsigned long long* keys,
                                                                 const unsigned long long* idxs) {
  const unsigned long long fmask = (1ull << P.cshift) - 1ull;
  const int64_t total = rows * P.k;
  for (int64_t o = (int64_t)blockIdx.x * AIR_THREADS + threadIdx.x; o < total; o += (int64_t)gridDim.x * AIR_THREADS) {
    const int64_t row = o / P.k;
    unsigned long long idx;
    bool pad;
    if (P.out_mode == AIR_OUT_COMPOSITE) {
      const unsigned long long c = keys[o];
      pad = c == ~0ull;
      idx = c & fmask;
    } else {
      idx = idxs[o];
      pad = idx == ~0ull;
    }
    air_decode_slot<RawT>(P, air_row(P, row), o, idx, pad);
  }
}

/*
 * Sorted output of at most AIR_SEGSORT_MAX composite sort keys per row (AIR_OUT_COMPOSITE):
 * one block per row (row P.row0 + blockIdx.x) loads the row's k keys into shared memory,
 * pads them to m (a power of two >= k) with ~0 (sorts last), bitonic-sorts them ascending
 * (best first; equal rank keys by index, as the composite orders them) and writes the
 * outputs itself. One launch instead of CUB's segmented sort (one pass per 7 bits over
 * every segment: 1.3 ms for 10^4 rows of 100 on the H100) and the decode launch.
 * Dynamic shared memory: m x 8 bytes.
 */
enum { AIR_SEGSORT_THREADS = 512, AIR_SEGSORT_MAX = 4096 };
template <typename RawT>
__global__ void __launch_bounds__(AIR_SEGSORT_THREADS) air_segsort_kernel(const air_params P, const int m) {
  extern __shared__ unsigned long long air_segsort_smem[];
  unsigned long long* s_k = air_segsort_smem;
  const int64_t row = P.row0 + blockIdx.x;
  const int k = (int)P.k;
  const unsigned long long* src = P.sort_key + row * P.k;
  for (int i = threadIdx.x; i < m; i += AIR_SEGSORT_THREADS) s_k[i] = i < k ? src[i] : ~0ull;
  __syncthreads();
  for (int size = 2; size <= m; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < (m >> 1); t += AIR_SEGSORT_THREADS) {
        const int i = 2 * t - (t & (stride - 1)), j = i + stride; /* i has bit `stride` clear */
        const unsigned long long a = s_k[i], b = s_k[j];
        if ((a > b) == ((i & size) == 0)) { /* ascending run: swap if a > b; descending: if a < b */
          s_k[i] = b;
          s_k[j] = a;
        }
      }
      __syncthreads();
    }
  const unsigned long long fmask = (1ull << P.cshift) - 1ull;
  const air_row_extent R = air_row(P, row);
  for (int s = threadIdx.x; s < k; s += AIR_SEGSORT_THREADS) {
    const unsigned long long c = s_k[s];
    air_decode_slot<RawT>(P, R, row * P.k + s, c & fmask, c == ~0ull);
  }
}

#endif /* TOPK_CUDA_AIR_RADIX_KERNELS_CUH */
