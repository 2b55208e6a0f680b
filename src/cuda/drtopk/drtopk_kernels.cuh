/*
 * drtopk_kernels.cuh: the kernels of the Dr. Top-k delegate layer (paper 000
 * sec. 4-5). The host side (plan, workspace, base calls) is drtopk.cu.
 *
 * Composite keys. Every element of a row becomes the 64-bit composite
 *     c = rank_key << ib | (imask - idx),   imask = 2^ib - 1,  2^ib > longest row
 * so composites are distinct, order exactly as the contract (better key first, then
 * lower index) and are never 0 (imask - idx >= 1): 0 marks an empty slot. This
 * needs KB + ib <= 64 (16- and 32-bit keys); the host runs the plain base otherwise.
 *
 * Steps per row (each row has its own delegate layer):
 *   1. delegates (Rule 1, Rule 3): subranges of S = 2^alpha elements; the top
 *      beta composites of each, sorted best first, to the delegate vector
 *      (dt_delegate_warp_kernel: one warp per subrange, 16-byte loads;
 *      dt_delegate_smem_kernel for S <= 512: a warp stages 32 subranges in shared
 *      memory chunk by chunk with coalesced asynchronous copies, double-buffered,
 *      and each lane scans one subrange, no shuffles).
 *      Per element both keep 32-bit (key, offset) pairs (the shared-memory kernel at
 *      beta <= 2: keys alone, the offsets found afterwards); composites are formed
 *      per subrange.
 *   2. first top-k (the base, on the delegate vector); Tc = the k-th best delegate
 *      (dt_threshold_kernel); Tc = 0 when the row has fewer than k delegates.
 *   3. Rule 2 filtering + concatenation (dt_concat_kernel): the elements with
 *      composite >= Tc. A subrange whose beta-th delegate is >= Tc is scanned whole
 *      ("full"); every other subrange contributes only its delegates >= Tc (its
 *      other elements are below its beta-th delegate, hence below Tc). Full
 *      subranges are listed (at most floor(k / beta) + 1 per row, see Bound) and
 *      scanned by dt_full_kernel over the whole grid. Positions come from
 *      warp-aggregated atomics; the order does not matter because the composite
 *      carries the original index.
 *   4. second top-k (the base, on the concatenated composites); dt_emit_kernel
 *      decodes index = imask - low bits and reads the value back from the input.
 *
 * Bound (why the concatenation never overflows): with composites distinct and
 * Tc the k-th best delegate, exactly k delegates are >= Tc; a full subrange holds
 * beta of them, so at most floor(k / beta) subranges are full, and the rest
 * contribute at most k delegates: count <= floor(k / beta) * S + k. With fewer
 * than k delegates (Tc = 0) the row has at most (floor((k-1)/beta) + 1) subranges,
 * so count <= len <= (floor(k / beta) + 1) * S. The capacity per row is
 * min(len, B) with B = (floor(k / beta) + 1) * S + k, which covers both; writes are
 * still bounds-guarded so that invalid device offsets cannot write outside.
 *
 * Per-row regions (all rows share one buffer each; for valid offsets regions are
 * contiguous, so they are the base's row offsets; vo = virtual start: r * n for
 * uniform rows, the clamped offset otherwise; ve = vo + len):
 *   delegates    uniform rows: [r x m x beta, (r + 1) x m x beta), m = ceil(n / S);
 *                offsets: [(vo >> alpha) + r) * beta, ((ve >> alpha) + r + 1) * beta)
 *                (every slot written: real delegates, then 0)
 *   concatenated [min(vo, r * B), min(ve, (r + 1) * B)); the unused tail of every
 *                row but the last is filled with 0 (never selected: a row with
 *                len >= k has >= k real candidates; a shorter row's 0s become padding)
 */
#ifndef TOPK_CUDA_DRTOPK_KERNELS_CUH
#define TOPK_CUDA_DRTOPK_KERNELS_CUH

#include <stdint.h>

#include "../common/keys.cuh"
#include "../common/rows.cuh"

enum {
  DT_THREADS = 256,       /* warp-centric kernels, concatenation */
  DT_SMEM_THREADS = 128,  /* shared-memory delegate kernel: 4 warps */
  DT_SMEM_MAX_ALPHA = 10, /* the shared-memory kernel is built for alpha 5..10 (TOPK_DRTOPK_BUILD=smem) */
  DT_SMEM_AUTO_ALPHA = 9, /* and runs by default up to this alpha (docs/BENCHMARKS.md: delegate construction) */
  DT_UNROLL = 4           /* 16-byte loads in flight per lane */
};

typedef unsigned long long dt_u64;

struct dt_params {
  const void* in;
  const int64_t* offsets; /* device; NULL: uniform rows */
  int64_t n, ld, batch, k;
  int smallest;
  int alpha;              /* S = 2^alpha */
  int beta;
  int ib;                 /* composite index bits */
  dt_u64 imask;           /* 2^ib - 1 */
  int64_t bound;          /* B: concatenation capacity per row (before clamping by len) */
  dt_u64* dele;
  dt_u64* conc;
  dt_u64* tc;             /* batch thresholds */
  dt_u64* cnt;            /* batch concatenation counters */
  dt_u64* nfull;          /* batch: full subranges listed */
  int64_t* full;          /* batch x fcap: the full subranges of each row */
  int64_t fcap;           /* floor(k / beta) + 1 */
  int64_t* off1;          /* batch + 1: delegate rows (base offsets, stage 1) */
  int64_t* off2;          /* batch + 1: concatenated rows (stage 2) */
  const dt_u64* s1;       /* batch x k: stage-1 results */
  const dt_u64* s2;       /* batch x k: stage-2 results */
  void* values;
  void* indices;
  int index_type;
  dt_u64 worst_bits;
};

struct dt_row {
  int64_t start; /* first element, in elements from in */
  int64_t len;
  int64_t vo;    /* virtual start */
};

/* Row r's extent (clamped offsets: common/rows.cuh) and its virtual start. */
__device__ __forceinline__ dt_row dt_get_row(const dt_params& P, int64_t r) {
  const topk_row_span s = topk_row(P.offsets, P.n, P.ld, r);
  dt_row R;
  R.start = s.start;
  R.len = s.len;
  R.vo = P.offsets ? s.start : r * P.n;
  return R;
}

/* Subranges holding elements, and delegate slots of the row's region (>= that).
 * Uniform rows: exactly the subranges, ceil(n / S) per row, so the first top-k gets
 * uniform rows of ceil(n / S) x beta delegates (no padding slot: an extra one per
 * row pushed 2^24 / 2^13 x 2 = 4096 delegates over AIR's one-block size). */
__device__ __forceinline__ int64_t dt_nsub(const dt_params& P, const dt_row& R) {
  return (R.len + ((int64_t)1 << P.alpha) - 1) >> P.alpha;
}
__device__ __forceinline__ int64_t dt_nslots(const dt_params& P, const dt_row& R) {
  if (!P.offsets) return dt_nsub(P, R);
  return ((R.vo + R.len) >> P.alpha) - (R.vo >> P.alpha) + 1;
}
__device__ __forceinline__ int64_t dt_dbase(const dt_params& P, const dt_row& R, int64_t r) {
  if (!P.offsets) return r * ((P.n + ((int64_t)1 << P.alpha) - 1) >> P.alpha) * P.beta;
  return ((R.vo >> P.alpha) + r) * P.beta;
}
/* min(v, r * B) without forming r * B when it would exceed v (no overflow). */
__device__ __forceinline__ int64_t dt_min_rb(int64_t v, int64_t r, int64_t B) {
  return r > v / B ? v : (r * B < v ? r * B : v);
}
__device__ __forceinline__ int64_t dt_cbase(const dt_params& P, const dt_row& R, int64_t r) {
  return dt_min_rb(R.vo, r, P.bound);
}
__device__ __forceinline__ int64_t dt_ccap(const dt_params& P, const dt_row& R, int64_t r) {
  const int64_t c = dt_min_rb(R.vo + R.len, r + 1, P.bound) - dt_cbase(P, R, r);
  return c < 0 ? 0 : c;
}

__device__ __forceinline__ dt_u64 dt_comp(dt_u64 key, int64_t idx, int ib, dt_u64 imask) {
  return (key << ib) | (imask - (dt_u64)idx);
}

/*
 * A lane's running top BETA of a subrange, best first, as 32-bit (rank key, offset
 * in the subrange) pairs: cheaper than 64-bit composites in the per-element loop,
 * which is what bounds the delegate kernels at small subranges. Empty slots are
 * (0, DT_EMPTY), so every real element beats them; composites are formed once per
 * subrange (dt_list_comp).
 */
#define DT_EMPTY 0xFFFFFFFFu

/* (x, o) before (k, e) in the contract's order: better key, then lower offset. */
__device__ __forceinline__ bool dt_better(uint32_t x, uint32_t o, uint32_t k, uint32_t e) {
  return x > k || (x == k && o < e);
}

template <int BETA>
__device__ __forceinline__ void dt_list_clear(uint32_t (&tk)[BETA], uint32_t (&to)[BETA]) {
#pragma unroll
  for (int q = 0; q < BETA; ++q) {
    tk[q] = 0;
    to[q] = DT_EMPTY;
  }
}

/*
 * Inserts (x, o); b[q] = "(x, o) goes before slot q" is monotone in q (the list is
 * sorted), so slot q takes slot q-1 when b[q-1], (x, o) when only b[q], else stays.
 * STRICT: every slot is real and o is larger than every offset in the list (a lane
 * offers its elements in index order), so "before" reduces to x > key.
 */
template <int BETA, bool STRICT>
__device__ __forceinline__ void dt_list_push(uint32_t (&tk)[BETA], uint32_t (&to)[BETA], uint32_t x, uint32_t o) {
  bool b[BETA];
#pragma unroll
  for (int q = 0; q < BETA; ++q) b[q] = STRICT ? x > tk[q] : dt_better(x, o, tk[q], to[q]);
#pragma unroll
  for (int q = BETA - 1; q >= 0; --q) {
    const bool prev = q > 0 ? b[q > 0 ? q - 1 : 0] : false;
    const uint32_t nk = prev ? tk[q > 0 ? q - 1 : 0] : x, no = prev ? to[q > 0 ? q - 1 : 0] : o;
    tk[q] = b[q] ? nk : tk[q];
    to[q] = b[q] ? no : to[q];
  }
}

/* Slot q as a composite (0 when empty); base = the subrange's first index in the row. */
__device__ __forceinline__ dt_u64 dt_list_comp(uint32_t k, uint32_t o, int64_t base, int ib, dt_u64 imask) {
  return o == DT_EMPTY ? 0ull : ((dt_u64)k << ib) | (imask - (dt_u64)(base + o));
}

/* Warp-aggregated atomic: this lane's first slot of c slots taken from *ctr. All 32 lanes call it. */
__device__ __forceinline__ dt_u64 dt_warp_reserve(dt_u64* ctr, unsigned c) {
  const int lane = threadIdx.x & 31;
  unsigned x = c;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  dt_u64 base = 0;
  if (lane == 31 && x > 0) base = atomicAdd(ctr, (dt_u64)x);
  base = __shfl_sync(0xffffffffu, base, 31);
  return base + (dt_u64)(x - c);
}

/* ------------------------------------------------------------------ setup */

/* Row offsets of both base calls' rows (the last stage-2 end comes later) and zero counters. */
static __global__ void dt_prep_kernel(const dt_params P) {
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < P.batch; r += (int64_t)gridDim.x * blockDim.x) {
    const dt_row R = dt_get_row(P, r);
    P.off1[r] = dt_dbase(P, R, r);
    P.off2[r] = dt_cbase(P, R, r);
    P.cnt[r] = 0;
    P.nfull[r] = 0;
    if (r == P.batch - 1) P.off1[P.batch] = dt_dbase(P, R, r) + dt_nslots(P, R) * P.beta;
  }
}

/* ------------------------------------------------------------------ delegates */

/* Element e of a 16-byte vector of RawT. */
template <typename RawT>
__device__ __forceinline__ RawT dt_lane_elem(const uint4& v, int e) {
  return reinterpret_cast<const RawT*>(&v)[e];
}

/*
 * Warp-centric delegates (sec. 5.1): warp w of the grid takes subrange slots w,
 * w + warps, ... of each row (rows over blockIdx.y); lanes read 16-byte vectors
 * (DT_UNROLL in flight) and keep their top BETA in registers (offered in index
 * order, so a 32-bit key test rejects most elements); then BETA rounds of a warp
 * max over composites (shuffles) give the subrange's BETA delegates.
 */
template <topk_dtype DT, int BETA>
__global__ void __launch_bounds__(DT_THREADS) dt_delegate_warp_kernel(const dt_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  constexpr int VEC = 16 / (int)sizeof(RawT);
  const int lane = threadIdx.x & 31;
  const int64_t warp0 = ((int64_t)blockIdx.x * DT_THREADS + threadIdx.x) >> 5;
  const int64_t warps = (int64_t)gridDim.x * (DT_THREADS / 32);
  const bool smallest = P.smallest != 0;
  const int64_t S = (int64_t)1 << P.alpha;
  for (int64_t r = blockIdx.y; r < P.batch; r += gridDim.y) {
    const dt_row R = dt_get_row(P, r);
    const int64_t m = dt_nsub(P, R), slots = dt_nslots(P, R);
    const RawT* row = (const RawT*)P.in + R.start;
    const bool aligned = ((uintptr_t)row & 15) == 0;
    dt_u64* d = P.dele + dt_dbase(P, R, r);
    for (int64_t j = warp0; j < slots; j += warps) {
      uint32_t tk[BETA], to[BETA];
      dt_list_clear<BETA>(tk, to);
      const int64_t lo = j * S;
      if (j < m) {
        const uint32_t len = (uint32_t)(lo + S < R.len ? S : R.len - lo);
        uint32_t tail = 0;
        if (aligned) {
          const uint4* v = (const uint4*)(row + lo); /* S * es is a multiple of 16 */
          const uint32_t nv = len / VEC;
          for (uint32_t q0 = lane; q0 < nv; q0 += 32 * DT_UNROLL) {
            uint4 x[DT_UNROLL];
#pragma unroll
            for (int u = 0; u < DT_UNROLL; ++u)
              if (q0 + u * 32 < nv) x[u] = __ldcs(v + q0 + u * 32); /* streamed: read once */
#pragma unroll
            for (int u = 0; u < DT_UNROLL; ++u) {
              if (q0 + u * 32 < nv) {
                const uint32_t o0 = (q0 + u * 32) * VEC;
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                  const uint32_t key = (uint32_t)topk_to_rank_key<DT>(dt_lane_elem<RawT>(x[u], e), smallest);
                  if (dt_better(key, o0 + e, tk[BETA - 1], to[BETA - 1])) dt_list_push<BETA, false>(tk, to, key, o0 + e);
                }
              }
            }
          }
          tail = nv * VEC;
        }
        for (uint32_t o = tail + lane; o < len; o += 32) {
          const uint32_t key = (uint32_t)topk_to_rank_key<DT>(row[lo + o], smallest);
          if (dt_better(key, o, tk[BETA - 1], to[BETA - 1])) dt_list_push<BETA, false>(tk, to, key, o);
        }
      }
      dt_u64 t[BETA];
#pragma unroll
      for (int q = 0; q < BETA; ++q) t[q] = dt_list_comp(tk[q], to[q], lo, P.ib, P.imask);
#pragma unroll
      for (int q = 0; q < BETA; ++q) {
        dt_u64 best = t[0];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
          const dt_u64 y = __shfl_xor_sync(0xffffffffu, best, o);
          best = y > best ? y : best;
        }
        if (lane == 0) d[j * BETA + q] = best;
        if (t[0] == best) { /* the owner pops it (composites are distinct; popping 0s is harmless) */
#pragma unroll
          for (int s = 0; s + 1 < BETA; ++s) t[s] = t[s + 1];
          t[BETA - 1] = 0;
        }
      }
    }
  }
}

/*
 * Shared-memory delegates for small subranges (sec. 5.3), S = 2^ALPHA <= 1024. A warp
 * owns 32 consecutive subranges (a group); lane i scans subrange i alone, keeping its
 * list in registers: no shuffles. The group is staged in chunks of CV 16-byte
 * vectors per subrange (128 bytes: whole cache lines, so the loads stay coalesced),
 * 32 x CV vectors per stage, copied with cp.async (L2 evict-first) into one of two
 * stage buffers per warp while the lane scans the other. Chunks let the kernel serve
 * subranges up to 512 elements, where the warp-centric kernel's per-subrange shuffle
 * reductions cost it most of the bandwidth (38-77 % at alpha 7-9, beta 2).
 * Bank check (a 16-byte access is served 8 lanes at a time): subrange i's chunk
 * starts at 16-byte slot i x (CV + 1), so 8 consecutive lanes reading their j-th
 * vector hit slots i x (CV + 1) + j, distinct mod 8 for CV = 4 or 8.
 * The row's ragged last group and unaligned rows are staged synchronously with
 * checked element loads and scanned with bounds.
 * Dynamic shared memory: dt_smem_build_bytes(ALPHA, element size).
 */
enum { DT_SMEM_CHUNK_V = 8 }; /* 16-byte vectors per subrange per stage (128 bytes) */

__host__ __device__ constexpr int dt_smem_chunk_v(int alpha, int es) {
  return ((1 << alpha) * es / 16) < DT_SMEM_CHUNK_V ? ((1 << alpha) * es / 16) : DT_SMEM_CHUNK_V;
}
__host__ __device__ constexpr int dt_smem_build_bytes(int alpha, int es) {
  return (DT_SMEM_THREADS / 32) * 2 * 32 * (dt_smem_chunk_v(alpha, es) + 1) * 16;
}

/* 16 bytes global -> shared, asynchronous, L2 evict-first (the input is read once: +3-6 % at alpha 7-9) */
__device__ __forceinline__ void dt_cp_async16(void* smem, const void* gmem, unsigned long long pol) {
  const unsigned sa = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(gmem), "l"(pol) : "memory");
}
__device__ __forceinline__ void dt_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/* Waits until at most one committed group of this thread is still in flight. */
__device__ __forceinline__ void dt_cp_async_wait_prev() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

/* Calls f(element, its offset in the chunk) for the CV x VEC elements of a staged chunk, in index order. */
template <typename RawT, int CV, typename F>
__device__ __forceinline__ void dt_chunk_each(const uint4* mine, F f) {
  constexpr int VEC = 16 / (int)sizeof(RawT);
#pragma unroll
  for (int t = 0; t < CV; ++t) {
    const uint4 w = mine[t];
#pragma unroll
    for (int e = 0; e < VEC; ++e) f(dt_lane_elem<RawT>(w, e), t * VEC + e);
  }
}

/*
 * A lane's scan of one staged chunk of its subrange (CV 16-byte vectors at mine, the
 * chunk's first offset o0), every element in the row: (key, offset) inserts. The
 * first chunk's first vector fills the list (VEC >= BETA); every later insert is
 * strict (dt_list_push).
 */
template <topk_dtype DT, int BETA, int CV>
__device__ __forceinline__ void dt_chunk_scan(const uint4* mine, uint32_t o0, bool smallest, uint32_t (&tk)[BETA],
                                              uint32_t (&to)[BETA]) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  constexpr int VEC = 16 / (int)sizeof(RawT);
  dt_chunk_each<RawT, CV>(mine, [&](RawT raw, int i) {
    const uint32_t key = (uint32_t)topk_to_rank_key<DT>(raw, smallest);
    const uint32_t o = o0 + (uint32_t)i;
    if (i < VEC && o0 == 0) dt_list_push<BETA, false>(tk, to, key, o);
    else dt_list_push<BETA, true>(tk, to, key, o);
  });
}

/*
 * The same for BETA <= 2 in two cheaper passes. Keys first, by a min/max network that
 * tracks no offsets: slot q keeps max(slot q, min(slot q-1, key)), 3 integer min/max per
 * element at beta 2 against a two-slot insert that carries offsets (the instructions
 * were this kernel's limit at alpha 5-6). The keys skip NaN canonicalisation
 * (topk_to_rank_key_nan_open); one more min/max tells whether any NaN was there, and
 * such a chunk takes dt_chunk_scan instead. Then the offsets, by matching the winners'
 * raw bits over the chunk in reverse, so the first occurrences win (the contract's tie
 * rule; at beta 2 with equal winners, the first two). The chunk's winners then join
 * the running list: strict inserts, since their offsets follow every offset there.
 * SMALLEST is the direction, fixed per instantiation so the per-element code has no select.
 */
template <topk_dtype DT, int BETA, int CV, bool SMALLEST>
__device__ __forceinline__ void dt_chunk_minmax(const uint4* mine, uint32_t o0, uint32_t (&tk)[BETA],
                                                uint32_t (&to)[BETA]) {
  static_assert(BETA <= 2, "dt_chunk_minmax: beta 1 or 2");
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int VEC = 16 / (int)sizeof(RawT);
  uint32_t ck[BETA]; /* 0 is below or equal to every key, and the chunk holds >= BETA elements */
#pragma unroll
  for (int q = 0; q < BETA; ++q) ck[q] = 0;
  uint32_t lo = ~0u;
  dt_chunk_each<RawT, CV>(mine, [&](RawT raw, int) {
    const uint32_t key = (uint32_t)topk_to_rank_key_nan_open<DT>(raw, SMALLEST);
#pragma unroll
    for (int q = BETA - 1; q > 0; --q) ck[q] = max(ck[q], min(ck[q - 1], key));
    ck[0] = max(ck[0], key);
    lo = min(lo, key);
  });
  if constexpr (topk_rank_key_lo<DT>() != 0) { /* floats: was there a NaN? */
    if (ck[0] > (uint32_t)topk_rank_key_hi<DT>() || lo < (uint32_t)topk_rank_key_lo<DT>()) {
      dt_chunk_scan<DT, BETA, CV>(mine, o0, SMALLEST, tk, to);
      return;
    }
  }
  RawT r[BETA];
  uint32_t co[BETA];
#pragma unroll
  for (int q = 0; q < BETA; ++q) {
    r[q] = topk_from_rank_key<DT>((KeyT)ck[q], SMALLEST);
    co[q] = 0;
  }
  const bool tie = BETA == 2 && ck[0] == ck[BETA - 1];
#pragma unroll
  for (int t = CV - 1; t >= 0; --t) {
    const uint4 w = mine[t];
#pragma unroll
    for (int e = VEC - 1; e >= 0; --e) {
      const RawT x = dt_lane_elem<RawT>(w, e);
      const uint32_t o = (uint32_t)(t * VEC + e);
      if (BETA == 2) co[BETA - 1] = x == r[BETA - 1] ? (tie ? co[0] : o) : co[BETA - 1];
      co[0] = x == r[0] ? o : co[0];
    }
  }
#pragma unroll
  for (int q = 0; q < BETA; ++q) {
    if (o0 == 0) {
      tk[q] = ck[q];
      to[q] = co[q];
    } else {
      dt_list_push<BETA, true>(tk, to, ck[q], o0 + co[q]);
    }
  }
}

template <topk_dtype DT, int BETA, int ALPHA>
__global__ void __launch_bounds__(DT_SMEM_THREADS) dt_delegate_smem_kernel(const dt_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  constexpr int VEC = 16 / (int)sizeof(RawT);
  constexpr int S = 1 << ALPHA;
  constexpr int SV = S / VEC;                                  /* 16-byte vectors per subrange */
  constexpr int CV = dt_smem_chunk_v(ALPHA, (int)sizeof(RawT)); /* of them per stage */
  constexpr int NC = SV / CV;                                  /* stages per group */
  constexpr int PITCH = CV + 1;
  constexpr int STAGE = 32 * PITCH; /* 16-byte slots of one stage buffer */
  static_assert(SV % CV == 0 && (CV & (CV - 1)) == 0 && VEC >= BETA, "dt_delegate_smem_kernel shape");
  extern __shared__ uint4 dt_smem4[];
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  uint4* const bufs = dt_smem4 + wib * 2 * STAGE;
  const int64_t warp0 = ((int64_t)blockIdx.x * DT_SMEM_THREADS + threadIdx.x) >> 5;
  const int64_t warps = (int64_t)gridDim.x * (DT_SMEM_THREADS / 32);
  const bool smallest = P.smallest != 0;
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  for (int64_t r = blockIdx.y; r < P.batch; r += gridDim.y) {
    const dt_row R = dt_get_row(P, r);
    const int64_t m = dt_nsub(P, R), slots = dt_nslots(P, R);
    const RawT* row = (const RawT*)P.in + R.start;
    const bool aligned = ((uintptr_t)row & 15) == 0;
    dt_u64* d = P.dele + dt_dbase(P, R, r);
    const int64_t groups = (slots + 31) / 32;
    /* a whole group inside the row, 16-byte aligned: staged asynchronously, scanned unchecked */
    auto fast = [&](int64_t g) { return aligned && (g + 1) * 32 * (int64_t)S <= R.len; };
    auto issue = [&](int64_t g, int c, uint4* st) {
      const uint4* src = (const uint4*)(row + g * 32 * (int64_t)S) + c * CV;
#pragma unroll
      for (int u = 0; u < CV; ++u) {
        const int vi = lane + 32 * u, sub = vi / CV, j = vi % CV;
        dt_cp_async16(st + sub * PITCH + j, src + sub * SV + j, pol);
      }
    };
    int64_t g = warp0;
    int c = 0, cur = 0;
    if (g < groups && fast(g)) issue(g, 0, bufs);
    dt_cp_async_commit();
    uint32_t tk[BETA], to[BETA];
    while (g < groups) {
      int64_t gn = g;
      int cn = c + 1;
      if (cn == NC) {
        cn = 0;
        gn = g + warps;
      }
      uint4* const st = bufs + cur * STAGE;
      if (gn < groups && fast(gn)) issue(gn, cn, bufs + (cur ^ 1) * STAGE);
      dt_cp_async_commit();
      const int64_t j = g * 32 + lane; /* this lane's slot */
      const int64_t base = j * S;
      if (c == 0) dt_list_clear<BETA>(tk, to);
      const uint4* mine = st + lane * PITCH;
      if (fast(g)) {
        dt_cp_async_wait_prev();
        __syncwarp();
        const uint32_t o0 = (uint32_t)(c * CV * VEC);
        if constexpr (BETA <= 2) {
          if (smallest) dt_chunk_minmax<DT, BETA, CV, true>(mine, o0, tk, to);
          else dt_chunk_minmax<DT, BETA, CV, false>(mine, o0, tk, to);
        } else dt_chunk_scan<DT, BETA, CV>(mine, o0, smallest, tk, to);
      } else { /* the row's ragged end, or an unaligned row: checked loads, then a bounded scan */
        const int64_t g0 = g * 32 * (int64_t)S;
#pragma unroll
        for (int u = 0; u < CV; ++u) {
          const int vi = lane + 32 * u, sub = vi / CV, jv = vi % CV;
          const int64_t p0 = g0 + (int64_t)sub * S + (int64_t)(c * CV + jv) * VEC;
          union {
            uint4 v;
            RawT e[VEC];
          } x;
#pragma unroll
          for (int e = 0; e < VEC; ++e) x.e[e] = p0 + e < R.len ? row[p0 + e] : (RawT)0;
          st[sub * PITCH + jv] = x.v;
        }
        __syncwarp();
        const int64_t lim = j < m ? (R.len - base < S ? R.len - base : S) : 0; /* this lane's elements */
        for (int t = 0; t < CV; ++t) {
          const uint4 w = mine[t];
#pragma unroll
          for (int e = 0; e < VEC; ++e) {
            const int o = (c * CV + t) * VEC + e;
            if (o < lim)
              dt_list_push<BETA, false>(tk, to, (uint32_t)topk_to_rank_key<DT>(dt_lane_elem<RawT>(w, e), smallest),
                                        (uint32_t)o);
          }
        }
      }
      if (c == NC - 1 && j < slots) {
#pragma unroll
        for (int q = 0; q < BETA; ++q) d[j * BETA + q] = dt_list_comp(tk[q], to[q], base, P.ib, P.imask);
      }
      __syncwarp(); /* every lane is done with this buffer before the next stage's copies refill it */
      g = gn;
      c = cn;
      cur ^= 1;
    }
  }
}

/* ------------------------------------------------------------------ threshold */

/* Tc of each row: the smallest of its k stage-1 results (the k-th best delegate; 0 if fewer). */
static __global__ void __launch_bounds__(DT_THREADS) dt_threshold_kernel(const dt_params P) {
  __shared__ dt_u64 s_min[DT_THREADS / 32];
  for (int64_t r = blockIdx.x; r < P.batch; r += gridDim.x) {
    dt_u64 v = ~0ull;
    for (int64_t s = threadIdx.x; s < P.k; s += DT_THREADS) {
      const dt_u64 x = P.s1[r * P.k + s];
      v = x < v ? x : v;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const dt_u64 y = __shfl_xor_sync(0xffffffffu, v, o);
      v = y < v ? y : v;
    }
    if ((threadIdx.x & 31) == 0) s_min[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
      dt_u64 m = ~0ull;
      for (int w = 0; w < DT_THREADS / 32; ++w) m = s_min[w] < m ? s_min[w] : m;
      P.tc[r] = m;
    }
    __syncthreads();
  }
}

/* ------------------------------------------------------------------ concatenation */

/*
 * Rule 2 filtering (see the file comment). Warp w of a row takes 32 subranges per
 * round: lane i reads the delegates of subrange i; non-full subranges emit their
 * delegates >= Tc; full subranges are listed (at most fcap = floor(k / beta) + 1
 * per row, by the bound argument) for dt_full_kernel, which spreads their scan over
 * the whole grid: on data with many equal keys the full subranges are the first
 * ones of the row, and one warp scanning them all in turn took milliseconds.
 */
template <topk_dtype DT, int BETA>
__global__ void __launch_bounds__(DT_THREADS) dt_concat_kernel(const dt_params P) {
  const int64_t warp0 = ((int64_t)blockIdx.x * DT_THREADS + threadIdx.x) >> 5;
  const int64_t warps = (int64_t)gridDim.x * (DT_THREADS / 32);
  const int lane = threadIdx.x & 31;
  for (int64_t r = blockIdx.y; r < P.batch; r += gridDim.y) {
    const dt_row R = dt_get_row(P, r);
    const int64_t m = dt_nsub(P, R);
    const dt_u64* d = P.dele + dt_dbase(P, R, r);
    dt_u64* out = P.conc + dt_cbase(P, R, r);
    const dt_u64 cap = (dt_u64)dt_ccap(P, R, r);
    const dt_u64 tc = P.tc[r];
    dt_u64* ctr = P.cnt + r;
    int64_t* full = P.full + r * P.fcap;
    const int64_t groups = (m + 31) / 32;
    for (int64_t g = warp0; g < groups; g += warps) {
      const int64_t j = g * 32 + lane;
      dt_u64 dl[BETA];
#pragma unroll
      for (int q = 0; q < BETA; ++q) dl[q] = j < m ? d[j * BETA + q] : 0;
      const bool is_full = j < m && dl[BETA - 1] >= tc; /* tc == 0: every subrange is full */
      unsigned c = 0;
      if (j < m && !is_full) {
#pragma unroll
        for (int q = 0; q < BETA; ++q) c += dl[q] >= tc ? 1u : 0u; /* tc > 0 here, so dl[q] != 0 */
      }
      dt_u64 pos = dt_warp_reserve(ctr, c);
      if (c) {
#pragma unroll
        for (int q = 0; q < BETA; ++q)
          if (dl[q] >= tc) {
            if (pos < cap) out[pos] = dl[q];
            ++pos;
          }
      }
      const dt_u64 f = dt_warp_reserve(P.nfull + r, is_full ? 1u : 0u);
      if (is_full && f < (dt_u64)P.fcap) full[f] = j;
    }
  }
}

/*
 * The listed full subranges, scanned whole: work items of CH elements (one 16-byte
 * load per lane and unroll step) over (full subrange, chunk) pairs, so a few long
 * subranges still spread over the grid. Elements with composite >= Tc are appended.
 */
template <topk_dtype DT>
__global__ void __launch_bounds__(DT_THREADS) dt_full_kernel(const dt_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  constexpr int VEC = 16 / (int)sizeof(RawT);
  constexpr int64_t CH = 32 * VEC * DT_UNROLL;
  const int lane = threadIdx.x & 31;
  const int64_t warp0 = ((int64_t)blockIdx.x * DT_THREADS + threadIdx.x) >> 5;
  const int64_t warps = (int64_t)gridDim.x * (DT_THREADS / 32);
  const bool smallest = P.smallest != 0;
  const int64_t S = (int64_t)1 << P.alpha;
  const int64_t cps = (S + CH - 1) / CH; /* chunks per subrange */
  for (int64_t r = blockIdx.y; r < P.batch; r += gridDim.y) {
    const dt_row R = dt_get_row(P, r);
    const RawT* row = (const RawT*)P.in + R.start;
    const bool aligned = ((uintptr_t)row & 15) == 0;
    dt_u64* out = P.conc + dt_cbase(P, R, r);
    const dt_u64 cap = (dt_u64)dt_ccap(P, R, r);
    const dt_u64 tc = P.tc[r];
    dt_u64* ctr = P.cnt + r;
    const int64_t* full = P.full + r * P.fcap;
    const dt_u64 nf0 = P.nfull[r];
    const int64_t items = (nf0 < (dt_u64)P.fcap ? (int64_t)nf0 : P.fcap) * cps;
    for (int64_t it = warp0; it < items; it += warps) {
      const int64_t sub = full[it / cps] * S;
      const int64_t lo = sub + (it % cps) * CH;
      const int64_t end = sub + S < R.len ? sub + S : R.len;
      const int64_t hi = lo + CH < end ? lo + CH : end;
      uint4 x[DT_UNROLL];
#pragma unroll
      for (int u = 0; u < DT_UNROLL; ++u) {
        const int64_t p0 = lo + (int64_t)(u * 32 + lane) * VEC;
        if (aligned && p0 + VEC <= hi) x[u] = __ldcs((const uint4*)(row + p0));
      }
#pragma unroll
      for (int u = 0; u < DT_UNROLL; ++u) {
        const int64_t p0 = lo + (int64_t)(u * 32 + lane) * VEC;
        dt_u64 cand[VEC];
        unsigned nc = 0;
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          cand[e] = 0;
          if (p0 + e < hi) {
            const RawT raw = aligned && p0 + VEC <= hi ? dt_lane_elem<RawT>(x[u], e) : row[p0 + e];
            const dt_u64 cc = dt_comp(topk_to_rank_key<DT>(raw, smallest), p0 + e, P.ib, P.imask);
            cand[e] = cc >= tc ? cc : 0;
            nc += cc >= tc ? 1u : 0u;
          }
        }
        dt_u64 w = dt_warp_reserve(ctr, nc);
#pragma unroll
        for (int e = 0; e < VEC; ++e)
          if (cand[e] != 0) {
            if (w < cap) out[w] = cand[e];
            ++w;
          }
      }
    }
  }
}

/*
 * After the concatenation: the end of the last stage-2 row, and 0 in the unused
 * tail of every other row's region (the base reads whole regions).
 */
static __global__ void __launch_bounds__(DT_THREADS) dt_finish_concat_kernel(const dt_params P) {
  for (int64_t r = blockIdx.y; r < P.batch; r += gridDim.y) {
    const dt_row R = dt_get_row(P, r);
    const int64_t cb = dt_cbase(P, R, r), cap = dt_ccap(P, R, r);
    const dt_u64 c0 = P.cnt[r];
    const int64_t c = c0 < (dt_u64)cap ? (int64_t)c0 : cap;
    if (r == P.batch - 1) {
      if (blockIdx.x == 0 && threadIdx.x == 0) P.off2[P.batch] = cb + c;
      continue;
    }
    for (int64_t i = c + (int64_t)blockIdx.x * DT_THREADS + threadIdx.x; i < cap; i += (int64_t)gridDim.x * DT_THREADS)
      P.conc[cb + i] = 0;
  }
}

/* ------------------------------------------------------------------ output */

/* Stage-2 composites -> outputs: index = imask - low bits, value read back (exact bits); 0 -> padding. */
template <typename RawT>
__global__ void __launch_bounds__(DT_THREADS) dt_emit_kernel(const dt_params P) {
  const int64_t total = P.batch * P.k;
  for (int64_t o = (int64_t)blockIdx.x * DT_THREADS + threadIdx.x; o < total; o += (int64_t)gridDim.x * DT_THREADS) {
    const int64_t r = o / P.k;
    const dt_u64 c = P.s2[o];
    const dt_row R = dt_get_row(P, r);
    int64_t ix = -1;
    RawT v = (RawT)P.worst_bits;
    if (c != 0) {
      const int64_t idx = (int64_t)(P.imask - (c & P.imask));
      if (idx >= 0 && idx < R.len) { /* always, for a composite of this row */
        ix = idx;
        v = ((const RawT*)P.in)[R.start + idx];
      }
    }
    ((RawT*)P.values)[o] = v;
    if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = ix;
    else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = (int32_t)ix;
  }
}

#endif /* TOPK_CUDA_DRTOPK_KERNELS_CUH */
