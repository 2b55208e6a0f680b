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
 *      dt_delegate_smem_kernel for S <= 64: a warp stages 32 subranges in shared
 *      memory with coalesced loads, then each lane scans one subrange, no shuffles).
 *   2. first top-k (the base, on the delegate vector); Tc = the k-th best delegate
 *      (dt_threshold_kernel); Tc = 0 when the row has fewer than k delegates.
 *   3. Rule 2 filtering + concatenation (dt_concat_kernel): the elements with
 *      composite >= Tc. A subrange whose beta-th delegate is >= Tc is scanned whole
 *      ("full"); every other subrange contributes only its delegates >= Tc (its
 *      other elements are below its beta-th delegate, hence below Tc). Positions
 *      come from warp-aggregated atomics; the order does not matter because the
 *      composite carries the original index.
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
 *   delegates    [(vo >> alpha) + r) * beta, ((ve >> alpha) + r + 1) * beta)
 *                (every slot written: real delegates, then 0)
 *   concatenated [min(vo, r * B), min(ve, (r + 1) * B)); the unused tail of every
 *                row but the last is filled with 0 (never selected: a row with
 *                len >= k has >= k real candidates; a shorter row's 0s become padding)
 */
#ifndef TOPK_CUDA_DRTOPK_KERNELS_CUH
#define TOPK_CUDA_DRTOPK_KERNELS_CUH

#include <stdint.h>

#include "../common/keys.cuh"

enum {
  DT_THREADS = 256,       /* warp-centric kernels, concatenation */
  DT_SMEM_THREADS = 128,  /* shared-memory delegate kernel: 4 warps */
  DT_SMEM_MAX_S = 64,     /* subranges up to this many elements use the shared-memory kernel */
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

/* Row r's extent; offsets clamped into [0, n] as AIR does (no access outside the input). */
__device__ __forceinline__ dt_row dt_get_row(const dt_params& P, int64_t r) {
  dt_row R;
  if (P.offsets) {
    int64_t b = P.offsets[r], e = P.offsets[r + 1];
    b = b < 0 ? 0 : (b > P.n ? P.n : b);
    e = e < b ? b : (e > P.n ? P.n : e);
    R.start = b;
    R.len = e - b;
    R.vo = b;
  } else {
    R.start = r * P.ld;
    R.len = P.n;
    R.vo = r * P.n;
  }
  return R;
}

/* Subranges holding elements, and delegate slots of the row's region (>= that). */
__device__ __forceinline__ int64_t dt_nsub(const dt_params& P, const dt_row& R) {
  return (R.len + ((int64_t)1 << P.alpha) - 1) >> P.alpha;
}
__device__ __forceinline__ int64_t dt_nslots(const dt_params& P, const dt_row& R) {
  return ((R.vo + R.len) >> P.alpha) - (R.vo >> P.alpha) + 1;
}
__device__ __forceinline__ int64_t dt_dbase(const dt_params& P, const dt_row& R, int64_t r) {
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

/* Inserts c into t[0..BETA) kept sorted best first; the smallest falls out. */
template <int BETA>
__device__ __forceinline__ void dt_insert(dt_u64 (&t)[BETA], dt_u64 c) {
  if (c <= t[BETA - 1]) return;
#pragma unroll
  for (int q = 0; q < BETA; ++q) {
    const dt_u64 hi = t[q] > c ? t[q] : c;
    c = t[q] > c ? c : t[q];
    t[q] = hi;
  }
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
 * (DT_UNROLL in flight), keep their top BETA composites in registers, then BETA
 * rounds of a warp max (shuffles) give the subrange's BETA delegates.
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
      dt_u64 t[BETA];
#pragma unroll
      for (int q = 0; q < BETA; ++q) t[q] = 0;
      if (j < m) {
        const int64_t lo = j * S, hi = lo + S < R.len ? lo + S : R.len;
        int64_t tail = lo;
        if (aligned) {
          const uint4* v = (const uint4*)(row + lo); /* S * es is a multiple of 16 */
          const int64_t nv = (hi - lo) / VEC;
          for (int64_t q0 = lane; q0 < nv; q0 += 32 * DT_UNROLL) {
            uint4 x[DT_UNROLL];
#pragma unroll
            for (int u = 0; u < DT_UNROLL; ++u)
              if (q0 + u * 32 < nv) x[u] = __ldcs(v + q0 + u * 32); /* streamed: read once */
#pragma unroll
            for (int u = 0; u < DT_UNROLL; ++u) {
              if (q0 + u * 32 < nv) {
                const int64_t i0 = lo + (q0 + u * 32) * VEC;
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                  const dt_u64 key = topk_to_rank_key<DT>(dt_lane_elem<RawT>(x[u], e), smallest);
                  dt_insert<BETA>(t, dt_comp(key, i0 + e, P.ib, P.imask));
                }
              }
            }
          }
          tail = lo + nv * VEC;
        }
        for (int64_t i = tail + lane; i < hi; i += 32)
          dt_insert<BETA>(t, dt_comp(topk_to_rank_key<DT>(row[i], smallest), i, P.ib, P.imask));
      }
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
 * Shared-memory delegates for small subranges (sec. 5.3): each warp loads 32
 * consecutive subranges (32 * S elements) with coalesced 16-byte loads into its
 * shared area as 32-bit rank keys, one padding word per subrange (bank of lane i's
 * q-th key: (i * (S + 1) + q) mod 32 = (i + q) mod 32 for S a multiple of 32:
 * conflict-free); then lane i scans subrange i alone: no shuffles.
 * Dynamic shared memory: DT_SMEM_THREADS / 32 * 32 * (S + 1) * 4 bytes.
 */
template <topk_dtype DT, int BETA>
__global__ void __launch_bounds__(DT_SMEM_THREADS) dt_delegate_smem_kernel(const dt_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  constexpr int VEC = 16 / (int)sizeof(RawT);
  extern __shared__ uint32_t dt_smem[];
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  const int S = 1 << P.alpha;
  uint32_t* my = dt_smem + (int64_t)wib * 32 * (S + 1);
  const int64_t warp0 = ((int64_t)blockIdx.x * DT_SMEM_THREADS + threadIdx.x) >> 5;
  const int64_t warps = (int64_t)gridDim.x * (DT_SMEM_THREADS / 32);
  const bool smallest = P.smallest != 0;
  for (int64_t r = blockIdx.y; r < P.batch; r += gridDim.y) {
    const dt_row R = dt_get_row(P, r);
    const int64_t m = dt_nsub(P, R), slots = dt_nslots(P, R);
    const RawT* row = (const RawT*)P.in + R.start;
    const bool aligned = ((uintptr_t)row & 15) == 0;
    dt_u64* d = P.dele + dt_dbase(P, R, r);
    const int64_t groups = (slots + 31) / 32;
    for (int64_t g = warp0; g < groups; g += warps) {
      const int64_t lo = g * 32 * S;
      const int64_t hi = lo + 32 * (int64_t)S < R.len ? lo + 32 * (int64_t)S : R.len; /* may be <= lo */
      const int nvec = 32 * S / VEC;
      for (int v0 = lane; v0 < nvec; v0 += 32 * DT_UNROLL) {
        uint4 x[DT_UNROLL];
#pragma unroll
        for (int u = 0; u < DT_UNROLL; ++u) {
          const int vi = v0 + u * 32;
          const int64_t p0 = lo + (int64_t)vi * VEC;
          x[u] = make_uint4(0, 0, 0, 0);
          if (vi < nvec && aligned && p0 + VEC <= hi) x[u] = __ldcs((const uint4*)(row + p0));
        }
#pragma unroll
        for (int u = 0; u < DT_UNROLL; ++u) {
          const int vi = v0 + u * 32;
          if (vi >= nvec) continue;
          const int64_t p0 = lo + (int64_t)vi * VEC;
#pragma unroll
          for (int e = 0; e < VEC; ++e) {
            const int el = vi * VEC + e; /* element within the 32 subranges */
            RawT raw = 0;
            if (aligned && p0 + VEC <= hi) raw = dt_lane_elem<RawT>(x[u], e);
            else if (p0 + e < hi) raw = row[p0 + e];
            my[(el >> P.alpha) * (S + 1) + (el & (S - 1))] = (uint32_t)topk_to_rank_key<DT>(raw, smallest);
          }
        }
      }
      __syncwarp();
      const int64_t j = g * 32 + lane;
      if (j < slots) {
        dt_u64 t[BETA];
#pragma unroll
        for (int q = 0; q < BETA; ++q) t[q] = 0;
        if (j < m) {
          const int64_t base = j * S;
          const int cnt = R.len - base < (int64_t)S ? (int)(R.len - base) : S;
          const uint32_t* mine = my + lane * (S + 1);
          for (int q = 0; q < cnt; ++q) dt_insert<BETA>(t, dt_comp((dt_u64)mine[q], base + q, P.ib, P.imask));
        }
#pragma unroll
        for (int q = 0; q < BETA; ++q) d[j * BETA + q] = t[q];
      }
      __syncwarp(); /* the shared area is reloaded by the next group */
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
 * delegates >= Tc; then the warp scans each full subrange together (16-byte loads;
 * the subranges re-read are the few whose beta-th delegate passes).
 */
template <topk_dtype DT, int BETA>
__global__ void __launch_bounds__(DT_THREADS) dt_concat_kernel(const dt_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  constexpr int VEC = 16 / (int)sizeof(RawT);
  const int lane = threadIdx.x & 31;
  const int64_t warp0 = ((int64_t)blockIdx.x * DT_THREADS + threadIdx.x) >> 5;
  const int64_t warps = (int64_t)gridDim.x * (DT_THREADS / 32);
  const bool smallest = P.smallest != 0;
  const int64_t S = (int64_t)1 << P.alpha;
  for (int64_t r = blockIdx.y; r < P.batch; r += gridDim.y) {
    const dt_row R = dt_get_row(P, r);
    const int64_t m = dt_nsub(P, R);
    const RawT* row = (const RawT*)P.in + R.start;
    const bool aligned = ((uintptr_t)row & 15) == 0;
    const dt_u64* d = P.dele + dt_dbase(P, R, r);
    dt_u64* out = P.conc + dt_cbase(P, R, r);
    const dt_u64 cap = (dt_u64)dt_ccap(P, R, r);
    const dt_u64 tc = P.tc[r];
    dt_u64* ctr = P.cnt + r;
    const int64_t groups = (m + 31) / 32;
    for (int64_t g = warp0; g < groups; g += warps) {
      const int64_t j = g * 32 + lane;
      dt_u64 dl[BETA];
#pragma unroll
      for (int q = 0; q < BETA; ++q) dl[q] = j < m ? d[j * BETA + q] : 0;
      const bool full = j < m && dl[BETA - 1] >= tc; /* tc == 0: every subrange is full */
      unsigned c = 0;
      if (j < m && !full) {
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
      unsigned fm = __ballot_sync(0xffffffffu, full);
      while (fm) { /* warp-uniform */
        const int src = __ffs(fm) - 1;
        fm &= fm - 1;
        const int64_t lo = (g * 32 + src) * S, hi = lo + S < R.len ? lo + S : R.len;
        for (int64_t i0 = lo; i0 < hi; i0 += 32 * VEC) {
          const int64_t p0 = i0 + (int64_t)lane * VEC;
          dt_u64 cand[VEC];
          unsigned nc = 0;
          if (aligned && p0 + VEC <= hi) {
            const uint4 x = *(const uint4*)(row + p0);
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
              const dt_u64 cc = dt_comp(topk_to_rank_key<DT>(dt_lane_elem<RawT>(x, e), smallest), p0 + e, P.ib, P.imask);
              cand[e] = cc;
              nc += cc >= tc ? 1u : 0u;
            }
          } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
              cand[e] = 0;
              if (p0 + e < hi) {
                const dt_u64 cc = dt_comp(topk_to_rank_key<DT>(row[p0 + e], smallest), p0 + e, P.ib, P.imask);
                cand[e] = cc;
                nc += cc >= tc ? 1u : 0u;
              }
            }
          }
          dt_u64 w = dt_warp_reserve(ctr, nc);
#pragma unroll
          for (int e = 0; e < VEC; ++e)
            if (cand[e] != 0 && cand[e] >= tc) {
              if (w < cap) out[w] = cand[e];
              ++w;
            }
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
