/*
 * rtopk_kernels.cuh: RTop-K, row-wise top-k by binary search on a threshold
 * (paper 001: Algorithm 1, Algorithm 2 "with early stopping", "GPU
 * Implementation"). The host side (bucket choice, launch) is rtopk.cu.
 *
 * One warp per row, several rows per block, for many short rows (n <= 4096):
 *   load    the row is read once, 16-byte vector loads where the row start is
 *           aligned (scalar otherwise and for the tail), and every element is
 *           turned into its rank key at the load (larger is better; keys.h):
 *           rows of up to 1024 stay in registers (R / 32 keys per lane, 16-bit
 *           keys two to a register; all of a row's loads are issued before the
 *           first is used), longer rows in the warp's slice of shared memory (the
 *           same layout, read back with 16-byte loads). Lane l holds elements
 *           (c * 32 + l) * V + j of chunk c, j < V, so a chunk is one coalesced
 *           512-byte warp load.
 *   search  min and max key by warp reduction, then a binary search for the
 *           threshold; every step counts the keys >= mid with a compare and a
 *           predicated add per key (register rows: every chunk, no branches,
 *           padding included) and one warp sum (redux.sync). See "exact search"
 *           and "early stopping".
 *   select  register rows: a bit per selected key of the lane, one scan of the
 *           per-lane counts, the results staged in the warp's shared-memory slice
 *           (lane order) and written from there 32 at a time (ncu: the per-key
 *           decode and two addressed stores of the old per-chunk path were 40 % of
 *           the instructions at 768 x k = 128). Shared-memory rows: per chunk,
 *           ballot + popc prefix sums give each selected element its slot (index
 *           order). TOPK_SORTED stages the results, sorts them in the warp's
 *           slice (rtopk_warp_sort) and writes them in order.
 *
 * Two rows a warp (the kernel's L = 16; rtopk.cu's row_lanes: many register rows of <= 256,
 * keys of <= 32 bits): each half of the warp is a row's L lanes, lane sl = lane % L holding
 * elements (c * L + sl) * V + j, and every reduction, scan, ballot, shuffle and __syncwarp
 * names the half's lanes (hmask); the two halves run the same code for their own rows and
 * diverge only where their rows do. What a row costs whatever its length (threshold
 * guesses, reductions, scans, the finish's network, the output loop) is then paid once a
 * warp for two rows. L = 32 is the warp-per-row kernel unchanged.
 *
 * Exact search (max_iter == 0, the default). The paper's loop stops when the
 * interval is narrower than epsilon and then takes elements "equal within
 * epsilon", which is not exact. Here the search runs on the integer rank keys:
 * the interval [lo, hi] holds the k-th largest key (count(key >= lo) >= k and
 * count(key > hi) < k); a step at mid in (lo, hi] moves lo up (count >= k) or hi
 * down to mid - 1, so it ends after at most key-bits steps with lo == hi == the
 * k-th key, or earlier when count(key >= mid) == k exactly (then every key >= mid
 * is a result and no tie is left to break). Any threshold in (lo, hi] keeps that
 * invariant, so the choice of the next threshold is a matter of speed only. For
 * the first RTOPK_VALUE_STEPS steps it is taken in value space (the key of the
 * dtype value nearest to a real between value(lo) and value(hi)): by default
 * halfway between the value midpoint and the interpolated point where the count
 * would be k + 1/2 if the values in [lo, hi] were uniform (pure regula falsi stalls
 * on the tails of smooth data; the blend took 20-25 % fewer steps than value
 * midpoints on N(0,1) rows of 256 and 768 in a host simulation; a step that does
 * not halve the value interval is followed by a bisection step), or, with TOPK_RTOPK_SEARCH=value,
 * the paper's value midpoint; TOPK_RTOPK_SEARCH=key uses key midpoints only. A
 * value-space guess that does not fall strictly inside (lo, hi] (ties, denormals,
 * huge ranges, NaN/inf stand-ins) is replaced by the key midpoint, and after
 * RTOPK_VALUE_STEPS steps only key midpoints are used: at most
 * RTOPK_VALUE_STEPS + key-bits steps in all, whatever the data.
 * Value space is a template parameter (RTOPK_KIND_*, rtopk_space): for F32, F16 and
 * BF16 the reals are fp32 (value x 2^-8, finite stand-ins for NaN and +-inf) and the
 * conversions straight-line code; the other dtypes use doubles and a runtime switch
 * on the dtype. Precision only changes which guesses are made (the step count),
 * never the result.
 * Ties (the project's deterministic rule): the results are every key > T plus
 * the lowest-index elements with key == T, up to k.
 *
 * Sorted output from a wider threshold (P.wide_cap > 0: TOPK_SORTED, register rows, 32 lanes a
 * row, keys of <= 32 bits, 64 < k <= 256; rtopk.cu make_plan). The sort orders its entries by
 * (key descending, position), the tie rule itself, so any lo with k <= count(key >= lo) <= the
 * network's capacity (128 or 256) serves: every key >= lo is staged and sorted, and the first k
 * are the result. The search then stops at the first such lo, with no finish and no ties to
 * pick, and aims its guesses at the middle of [k, wide_cap] (a host simulation on rows of 1000,
 * k = 100: ~2.5-4 steps on uniform, normal and exponential rows, against ~4 steps and the
 * finish before).
 *
 * Early stopping (max_iter > 0, Algorithm 2; approximate): value midpoints only (in
 * the kind's reals: fp32 for the 16- and 32-bit floats), at most max_iter steps; min
 * moves up when count > k, max down when count < k, and count == k ends the search
 * with min = mid. The results are the first k elements in index order whose key
 * is >= the key of min: always k distinct elements of the row (count(key >= min)
 * >= k holds throughout), not always the k best. Unlike the paper's line 11, an
 * exact hit (count == k) moves min to mid, so a hit returns exactly the top k
 * (TOPK_RTOPK_PAPER_BREAK=1 restores the literal line 11, for bench/rtopk_accuracy's
 * comparison with the paper's Table 2).
 *
 * Invariants and safety:
 *   - warp-uniform control flow: every lane of a warp runs every row step
 *     (ballots and reductions use the full mask); no __syncthreads anywhere.
 *   - padding (positions >= the row length) holds key 0 and is never counted:
 *     every counted mid is >= 1, and selection checks the position.
 *   - every output slot written is < k (guarded), rows are clamped to [0, n] and
 *     to the bucket's capacity R, so bad device offsets cannot send a read or a
 *     write out of bounds.
 */
#ifndef TOPK_CUDA_RTOPK_KERNELS_CUH
#define TOPK_CUDA_RTOPK_KERNELS_CUH

#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/keys.cuh"
#include "../common/rows.cuh"
#include "topk_device/merge.cuh"

enum {
  RTOPK_MAX_N = 4096,       /* longest row (bucket capacity) */
  RTOPK_REG_MAX = 1024,     /* rows up to this stay in registers; longer ones in shared memory */
  RTOPK_REG_WARPS = 8,      /* warps (rows in flight) per block, register buckets */
  RTOPK_SMEM_ROW_BUDGET = 32768, /* shared-memory buckets: row bytes per block */
  RTOPK_VALUE_STEPS = 24,   /* exact mode: value midpoints for at most this many steps */
  RTOPK_FINISH = 32,        /* exact mode, register rows: rank the keys left in [lo, hi] once
                               at most this many remain (one per lane) instead of more steps */
  RTOPK_REG_MIN_BLOCKS = 4  /* register buckets: __launch_bounds__(256, this), <= 64 registers
                               (rtopk_min_blocks has the exceptions) */
};

/* Exact mode's choice of the next threshold in (lo, hi] (TOPK_RTOPK_SEARCH, rtopk.cu). */
enum {
  RTOPK_SEARCH_INTERP = 0, /* default: interpolation in value space, a bisection after a poor step */
  RTOPK_SEARCH_VALUE = 1,  /* value midpoints (the paper's) */
  RTOPK_SEARCH_KEY = 2     /* key midpoints only: at most key-bits steps */
};

/* The value-space arithmetic of a kernel (a template parameter; rtopk.cu picks it from the
 * dtype): the float kinds use fp32 reals and straight-line conversions, the generic kind
 * doubles and a runtime switch on P.dtype. */
enum {
  RTOPK_KIND_GENERIC = 0, /* I32, U32 (32-bit keys), F64, I64, U64 (64-bit keys) */
  RTOPK_KIND_F32 = 1,     /* F32 */
  RTOPK_KIND_F16X = 2     /* F16 and BF16 (16-bit keys; which one is a warp-uniform flag) */
};

/* Everything a launch needs; passed by value. */
struct rtopk_params {
  const void*    in;
  const int64_t* offsets;   /* device; NULL: uniform rows */
  int64_t        n, ld, k, batch;
  void*          values;
  void*          indices;   /* NULL for TOPK_INDEX_NONE */
  int            index_type;
  int            smallest;
  int            sorted;
  int            max_iter;  /* 0: exact; > 0: early stopping after at most this many steps */
  int            dtype;     /* topk_dtype: value midpoints and key transforms */
  int            search;    /* exact mode's midpoints: RTOPK_SEARCH_* */
  int            paper_break; /* early stopping: count == k keeps min (Algorithm 2 line 11 literally) */
  int            sort_cap;  /* staged results per warp (min(k, R)): register rows, and TOPK_SORTED; else 0 */
  int            wide_cap;  /* sorted register rows: the search may stop once <= this many keys are >= lo
                               (the stage holds them; the sort orders them and the first k are written);
                               0: off. See "sorted output from a wider threshold". */
  unsigned       warp_smem; /* shared-memory bytes per warp (row slice + sort slice) */
  unsigned       row_smem;  /* of which the row slice (shared-memory buckets) */
  unsigned long long worst_bits;
  int*           iters;     /* optional: each row's number of search steps (rtopk_accuracy) */
};

/* ------------------------------------------------------------------ key transforms */

/* A dtype's order-preserving transform, decided once per launch (keys.h, written per
 * key width so that kernels are instantiated per width, not per dtype). */
template <typename KeyT>
struct rtopk_xf {
  KeyT sign;      /* the top bit */
  KeyT nan_abs;   /* floats: |bits| above this are NaN */
  KeyT int_xor;   /* integers: the sign bit for signed types, 0 for unsigned */
  KeyT flip;      /* all ones for TOPK_SMALLEST */
  int  is_float;
  int  bf16;      /* RTOPK_KIND_F16X: BF16 rather than F16 */
};

/* The float kinds fix is_float (and F32 nan_abs) at compile time, so the transforms below
 * fold to straight-line code. */
template <typename KeyT, int KIND>
__device__ __forceinline__ rtopk_xf<KeyT> rtopk_make_xf(int dtype, int smallest) {
  rtopk_xf<KeyT> x;
  x.sign = (KeyT)((KeyT)1 << (sizeof(KeyT) * 8 - 1));
  x.is_float = KIND != RTOPK_KIND_GENERIC ||
               (dtype == TOPK_F32 || dtype == TOPK_F16 || dtype == TOPK_BF16 || dtype == TOPK_F64);
  x.bf16 = KIND == RTOPK_KIND_F16X && dtype == TOPK_BF16;
  x.nan_abs = KIND == RTOPK_KIND_F32 ? (KeyT)0x7F800000u
              : dtype == TOPK_F16 ? (KeyT)0x7C00u
              : dtype == TOPK_BF16 ? (KeyT)0x7F80u
              : dtype == TOPK_F32 ? (KeyT)0x7F800000u
                                  : (KeyT)0x7FF0000000000000ull;
  x.int_xor = KIND == RTOPK_KIND_GENERIC && (dtype == TOPK_I32 || dtype == TOPK_I64) ? x.sign : (KeyT)0;
  x.flip = smallest ? (KeyT)~(KeyT)0 : (KeyT)0;
  return x;
}

/* Raw bits -> rank key (same result as keys.h's topk_rank_key). Floats without branches:
 * ~b for a negative value, b | sign otherwise, all ones for NaN. */
template <typename KeyT>
__device__ __forceinline__ KeyT rtopk_key(KeyT b, const rtopk_xf<KeyT>& x) {
  constexpr int TOP = (int)sizeof(KeyT) * 8 - 1;
  KeyT k;
  if (x.is_float) {
    const KeyT a = (KeyT)(b & (KeyT)~x.sign);
    const KeyT neg = (KeyT)((KeyT)0 - (KeyT)(b >> TOP)); /* all ones for a negative value */
    k = (KeyT)(b ^ (KeyT)(neg | x.sign));
    k = a > x.nan_abs ? (KeyT)~(KeyT)0 : k;
  } else {
    k = (KeyT)(b ^ x.int_xor);
  }
  return (KeyT)(k ^ x.flip);
}

/* Keys of V elements, get(j) for j < avail (0 after: padding, never counted, every mid >= 1),
 * and the min and max of the keys taken. avail >= V (a whole vector) folds the checks away. */
template <typename KeyT, int V, typename Get>
__device__ __forceinline__ void rtopk_keys_minmax(Get get, int avail, const rtopk_xf<KeyT>& x, KeyT (&v)[V],
                                                  KeyT& kmin, KeyT& kmax) {
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if (j < avail) {
      v[j] = rtopk_key(get(j), x);
      kmin = v[j] < kmin ? v[j] : kmin;
      kmax = v[j] > kmax ? v[j] : kmax;
    } else {
      v[j] = 0;
    }
  }
}

/* Rank key -> raw bits. *nan: the key of NaN (all NaNs share it: the caller reloads the
 * element to keep its payload). */
template <typename KeyT>
__device__ __forceinline__ KeyT rtopk_raw(KeyT rk, const rtopk_xf<KeyT>& x, bool* nan) {
  constexpr int TOP = (int)sizeof(KeyT) * 8 - 1;
  const KeyT k = (KeyT)(rk ^ x.flip);
  *nan = false;
  if (!x.is_float) return (KeyT)(k ^ x.int_xor);
  *nan = k == (KeyT)~(KeyT)0;
  /* k & ~sign when the sign bit is set (a value >= +0), else ~k; without branches */
  const KeyT pos = (KeyT)((KeyT)(k >> TOP) - (KeyT)1); /* 0 when set, all ones when clear */
  const KeyT raw = (KeyT)(k ^ (KeyT)(pos | x.sign));
  return *nan ? k : raw;
}

/* Stand-ins that keep every value midpoint finite: NaN (the best key when largest, the
 * worst when smallest) and +-inf get finite reals beyond every finite value. */
#define RTOPK_BIG 1e300
#define RTOPK_INF_PROXY 5e299

/* Rank key -> a real that orders as the key (value for largest, -value for smallest). */
template <typename KeyT>
__device__ __forceinline__ double rtopk_real(KeyT rk, const rtopk_xf<KeyT>& x, int dtype) {
  bool nan;
  const KeyT raw = rtopk_raw(rk, x, &nan);
  double v;
  if (nan) {
    v = RTOPK_BIG;
  } else {
    const uint64_t r = (uint64_t)raw;
    switch (dtype) {
      case TOPK_F16: v = (double)__half2float(__ushort_as_half((unsigned short)r)); break;
      case TOPK_BF16: v = (double)__uint_as_float((unsigned)r << 16); break;
      case TOPK_F32: v = (double)__uint_as_float((unsigned)r); break;
      case TOPK_F64: v = __longlong_as_double((long long)r); break;
      case TOPK_I32: v = (double)(int32_t)(uint32_t)r; break;
      case TOPK_U32: v = (double)(uint32_t)r; break;
      case TOPK_I64: v = (double)(int64_t)r; break;
      default: v = (double)r; break;
    }
    /* a NaN bit pattern from a key that no element has (keys between -inf and the NaN key
     * decode to them): below -inf or above +inf, as the key says */
    if (isnan(v)) v = (raw & x.sign) ? -RTOPK_BIG : RTOPK_BIG;
    else if (isinf(v)) v = v > 0 ? RTOPK_INF_PROXY : -RTOPK_INF_PROXY;
  }
  return x.flip ? -v : v;
}

/* A real -> the rank key of the dtype value nearest to it (any key works for the caller:
 * it only needs an order-preserving guess, which it clamps into its interval). */
template <typename KeyT>
__device__ __forceinline__ KeyT rtopk_key_of_real(double r, const rtopk_xf<KeyT>& x, int dtype) {
  const double t = x.flip ? -r : r;
  uint64_t raw;
  switch (dtype) {
    case TOPK_F16: raw = __half_as_ushort(__double2half(t)); break;
    case TOPK_BF16: raw = __bfloat16_as_ushort(__double2bfloat16(t)); break;
    case TOPK_F32: raw = __float_as_uint((float)t); break;
    case TOPK_F64: raw = (uint64_t)__double_as_longlong(t); break;
    case TOPK_I32: raw = (uint32_t)(int32_t)fmin(fmax(rint(t), -2147483648.0), 2147483647.0); break;
    case TOPK_U32: raw = (uint32_t)fmin(fmax(rint(t), 0.0), 4294967295.0); break;
    case TOPK_I64:
      raw = t >= 9.2233720368547758e18 ? (uint64_t)INT64_MAX
            : t <= -9.2233720368547758e18 ? (uint64_t)INT64_MIN
                                         : (uint64_t)(int64_t)rint(t);
      break;
    default: raw = t >= 1.8446744073709552e19 ? UINT64_MAX : t <= 0.0 ? 0ull : (uint64_t)rint(t); break;
  }
  return rtopk_key((KeyT)raw, x);
}

/*
 * The float kinds' reals: fp32, value x 2^-8 (exact for all but the smallest magnitudes,
 * below 2^-118, which only lose guess precision), so that the stand-ins for NaN and +-inf
 * (1e38, 5e37) are finite, order beyond every finite value (FLT_MAX x 2^-8 = 1.3e36), and
 * no sum, difference or interpolation of two reals overflows or gives NaN. A guess between
 * a stand-in and a finite real scales back beyond FLT_MAX, i.e. to the key of +-inf, as the
 * double reals with their 1e300 stand-ins did.
 */
#define RTOPK_FSCALE 0.00390625f /* 2^-8 */
#define RTOPK_FUNSCALE 256.0f
#define RTOPK_FBIG 1e38f
#define RTOPK_FINF_PROXY 5e37f

template <typename KeyT, int KIND>
struct rtopk_space {
  typedef float real;
  /* rank key -> a real that orders as the key (value for largest, -value for smallest) */
  static __device__ __forceinline__ float of_key(KeyT rk, const rtopk_xf<KeyT>& x, int dtype) {
    (void)dtype;
    bool nan;
    const KeyT raw = rtopk_raw(rk, x, &nan);
    float v;
    if (KIND == RTOPK_KIND_F32) v = __uint_as_float((unsigned)raw);
    else v = x.bf16 ? __uint_as_float((unsigned)raw << 16) : __half2float(__ushort_as_half((unsigned short)raw));
    float r = v * RTOPK_FSCALE;
    if (isinf(v)) r = v > 0.0f ? RTOPK_FINF_PROXY : -RTOPK_FINF_PROXY;
    /* a NaN bit pattern from a key that no element has: below -inf or above +inf */
    if (isnan(v)) r = (raw & x.sign) ? -RTOPK_FBIG : RTOPK_FBIG;
    if (nan) r = RTOPK_FBIG;
    return x.flip ? -r : r;
  }
  /* a real -> the rank key of the dtype value nearest to it (finite reals in, any key out) */
  static __device__ __forceinline__ KeyT key_of(float r, const rtopk_xf<KeyT>& x, int dtype) {
    (void)dtype;
    const float t = (x.flip ? -r : r) * RTOPK_FUNSCALE;
    unsigned raw;
    if (KIND == RTOPK_KIND_F32) raw = __float_as_uint(t);
    else raw = x.bf16 ? (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(t))
                      : (unsigned)__half_as_ushort(__float2half_rn(t));
    return rtopk_key((KeyT)raw, x);
  }
};

/* The generic kind: doubles, the dtype switched at run time (rtopk_real, rtopk_key_of_real). */
template <typename KeyT>
struct rtopk_space<KeyT, RTOPK_KIND_GENERIC> {
  typedef double real;
  static __device__ __forceinline__ double of_key(KeyT rk, const rtopk_xf<KeyT>& x, int dtype) {
    return rtopk_real(rk, x, dtype);
  }
  static __device__ __forceinline__ KeyT key_of(double r, const rtopk_xf<KeyT>& x, int dtype) {
    return rtopk_key_of_real(r, x, dtype);
  }
};

/* ------------------------------------------------------------------ warp primitives */

/* Reductions over a row's L lanes (L = 32: the warp; L = 16: a half, mask = its lanes; both
 * halves may run the same instruction with their own masks). */
template <int L = 32>
__device__ __forceinline__ unsigned rtopk_warp_sum(unsigned v, unsigned mask = 0xffffffffu) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(mask, v);
#else
  for (int o = L / 2; o > 0; o >>= 1) v += __shfl_xor_sync(mask, v, o);
  return v;
#endif
}

template <int L = 32>
__device__ __forceinline__ unsigned rtopk_warp_min(unsigned v, unsigned mask = 0xffffffffu) {
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(mask, v);
#else
  for (int o = L / 2; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(mask, v, o));
  return v;
#endif
}
template <int L = 32>
__device__ __forceinline__ unsigned rtopk_warp_max(unsigned v, unsigned mask = 0xffffffffu) {
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(mask, v);
#else
  for (int o = L / 2; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(mask, v, o));
  return v;
#endif
}
template <int L = 32>
__device__ __forceinline__ unsigned long long rtopk_warp_min(unsigned long long v, unsigned mask = 0xffffffffu) {
  for (int o = L / 2; o > 0; o >>= 1) {
    const unsigned long long w = __shfl_xor_sync(mask, v, o);
    v = w < v ? w : v;
  }
  return v;
}
template <int L = 32>
__device__ __forceinline__ unsigned long long rtopk_warp_max(unsigned long long v, unsigned mask = 0xffffffffu) {
  for (int o = L / 2; o > 0; o >>= 1) {
    const unsigned long long w = __shfl_xor_sync(mask, v, o);
    v = w > v ? w : v;
  }
  return v;
}

/* Wider type for reductions: 16-bit keys reduce as 32-bit. */
template <typename KeyT> struct rtopk_wide { typedef unsigned type; };
template <> struct rtopk_wide<uint64_t> { typedef unsigned long long type; };

/* A staged result: key and position, ordered as the results are (before(): key descending,
 * then position ascending, the project's tie rule). 16-bit keys as one composite word, so
 * that a compare is one instruction (in the sorted path's old quadratic rank loop, bf16 sorted
 * rows took 2x as long with separate fields). Written with one shared-memory store (rtopk_stage_put). */
template <typename KeyT> struct alignas(2 * sizeof(KeyT)) rtopk_entry {
  KeyT k, p; /* key, position (as wide as the key: one vector store) */
  static __device__ __forceinline__ rtopk_entry make(KeyT key, unsigned pos) {
    rtopk_entry e;
    e.k = key;
    e.p = pos;
    return e;
  }
  __device__ __forceinline__ KeyT key() const { return k; }
  __device__ __forceinline__ unsigned pos() const { return (unsigned)p; }
  /* bitwise, not ||: a short-circuit compiles to a divergent branch per compare (4x slower
   * in the sorted path's rank loop, f32 4096 x 4096, k = 1024) */
  __device__ __forceinline__ bool before(const rtopk_entry& o) const {
    return (unsigned)(k > o.k) | ((unsigned)(k == o.k) & (unsigned)(p < o.p));
  }
};
template <> struct alignas(4) rtopk_entry<uint16_t> {
  uint32_t w; /* key << 16 | (0xFFFF - position) */
  static __device__ __forceinline__ rtopk_entry make(uint16_t key, unsigned pos) {
    rtopk_entry e;
    e.w = ((uint32_t)key << 16) | (0xFFFFu - pos);
    return e;
  }
  __device__ __forceinline__ uint16_t key() const { return (uint16_t)(w >> 16); }
  __device__ __forceinline__ unsigned pos() const { return 0xFFFFu - (w & 0xFFFFu); }
  __device__ __forceinline__ bool before(const rtopk_entry& o) const { return w > o.w; }
};

/* *addr = e if sel (a shared-memory address; predicated in PTX, so that an unrolled loop of
 * these has no branch per key). */
__device__ __forceinline__ void rtopk_stage_put(unsigned addr, const rtopk_entry<uint16_t>& e, unsigned sel) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p st.shared.u32 [%0], %1;\n\t}" ::"r"(addr),
               "r"(e.w), "r"(sel)
               : "memory");
}
__device__ __forceinline__ void rtopk_stage_put(unsigned addr, const rtopk_entry<uint32_t>& e, unsigned sel) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\t@p st.shared.v2.u32 [%0], {%1, %2};\n\t}" ::"r"(addr),
               "r"(e.k), "r"(e.p), "r"(sel)
               : "memory");
}
__device__ __forceinline__ void rtopk_stage_put(unsigned addr, const rtopk_entry<uint64_t>& e, unsigned sel) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\t@p st.shared.v2.u64 [%0], {%1, %2};\n\t}" ::"r"(addr),
               "l"(e.k), "l"((uint64_t)e.pos()), "r"(sel)
               : "memory");
}

/* Inclusive prefix sum of x over a row's L lanes (shuffles; x of any size); sl = lane % L. */
template <int L = 32>
__device__ __forceinline__ unsigned rtopk_lane_incl_sum(unsigned x, int sl, unsigned mask = 0xffffffffu) {
#pragma unroll
  for (int o = 1; o < L; o <<= 1) {
    const unsigned t = __shfl_up_sync(mask, x, o, L);
    if (sl >= o) x += t;
  }
  return x;
}

/*
 * Exclusive prefix sum and total over the lanes of a small per-lane count x in
 * [0, 2^BITS): one ballot per bit instead of a shuffle scan.
 */
template <int BITS>
__device__ __forceinline__ unsigned rtopk_lane_prefix(unsigned x, unsigned lane_lt, unsigned* total,
                                                      unsigned mask = 0xffffffffu) {
  unsigned excl = 0, tot = 0;
#pragma unroll
  for (int b = 0; b < BITS; ++b) {
    /* lanes outside mask contribute 0 bits */
    const unsigned m = __ballot_sync(mask, (x >> b) & 1u);
    excl += (unsigned)__popc(m & lane_lt) << b;
    tot += (unsigned)__popc(m) << b;
  }
  *total = tot;
  return excl;
}

/* ------------------------------------------------------------------ the row */

/* V keys of one chunk, for 16-byte (or 8-byte: 16-bit keys in the 128 bucket) vector loads. */
template <typename KeyT, int V>
struct alignas(V * sizeof(KeyT)) rtopk_vec {
  KeyT a[V];
};

/* A register row's storage word: 16-bit keys are kept two to a 32-bit register. */
template <typename KeyT, bool PACK> struct rtopk_word { typedef KeyT type; };
template <> struct rtopk_word<uint16_t, true> { typedef uint32_t type; };

/*
 * One warp's row: keys in registers (SMEM false) or in the warp's shared-memory
 * slice (SMEM true), lane l of chunk c holding positions (c * 32 + l) * V + j.
 * Registers hold 16-bit keys in pairs (PACK: key j of a chunk in the low half of word
 * j / 2 when j is even, in the high half when odd), so a lane's 32 keys of the 1024
 * bucket take 16 registers, not 32 with garbage upper halves.
 */
template <typename KeyT, int R, bool SMEM>
struct rtopk_row {
  static constexpr int V0 = 16 / (int)sizeof(KeyT);
  static constexpr int V = V0 < R / 32 ? V0 : R / 32;   /* keys per lane per chunk */
  static constexpr int CHUNKS = R / (32 * V);
  static constexpr int UNROLL = SMEM ? 2 : CHUNKS;
  static constexpr bool PACK = !SMEM && sizeof(KeyT) == 2; /* V is even then (>= 4) */
  static constexpr int WPC = PACK ? V / 2 : V;              /* words per chunk */
  typedef typename rtopk_word<KeyT, PACK>::type Word;
  Word reg[SMEM ? 1 : CHUNKS * WPC];
  KeyT* smem; /* SMEM: the warp's R keys */

  __device__ __forceinline__ void get(int c, int lane, KeyT (&v)[V]) const {
    if (SMEM) {
      const rtopk_vec<KeyT, V> t = *reinterpret_cast<const rtopk_vec<KeyT, V>*>(smem + (c * 32 + lane) * V);
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] = t.a[j];
    } else if (PACK) {
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] = (KeyT)((uint32_t)reg[(SMEM ? 0 : c * WPC) + j / 2] >> (16 * (j & 1)));
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] = (KeyT)reg[(SMEM ? 0 : c * V) + j];
    }
  }
  __device__ __forceinline__ void put(int c, int lane, const KeyT (&v)[V]) {
    if (SMEM) {
      rtopk_vec<KeyT, V> t;
#pragma unroll
      for (int j = 0; j < V; ++j) t.a[j] = v[j];
      *reinterpret_cast<rtopk_vec<KeyT, V>*>(smem + (c * 32 + lane) * V) = t;
    } else if (PACK) {
      /* packed by prmt in asm, so that the compiler keeps the words, not the 16-bit keys
       * (which it would otherwise keep alive next to them, twice the registers) */
#pragma unroll
      for (int j = 0; j < V / 2; ++j) {
        uint32_t w;
        asm("prmt.b32 %0, %1, %2, 0x5410;" : "=r"(w) : "r"((uint32_t)v[2 * j]), "r"((uint32_t)v[2 * j + 1]));
        reg[(SMEM ? 0 : c * WPC) + j] = (Word)w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) reg[(SMEM ? 0 : c * V) + j] = (Word)v[j];
    }
  }
};

/* c += (v >= m): a compare and a predicated add (nvcc otherwise tends to add 1
 * unconditionally and select, three instructions). */
__device__ __forceinline__ void rtopk_add_ge(unsigned& c, uint32_t v, uint32_t m) {
  asm("{\n\t.reg .pred p;\n\tsetp.ge.u32 p, %1, %2;\n\t@p add.u32 %0, %0, 1;\n\t}" : "+r"(c) : "r"(v), "r"(m));
}
__device__ __forceinline__ void rtopk_add_ge(unsigned& c, uint16_t v, uint16_t m) {
  rtopk_add_ge(c, (uint32_t)v, (uint32_t)m);
}
__device__ __forceinline__ void rtopk_add_ge(unsigned& c, uint64_t v, uint64_t m) {
  asm("{\n\t.reg .pred p;\n\tsetp.ge.u64 p, %1, %2;\n\t@p add.u32 %0, %0, 1;\n\t}" : "+r"(c) : "l"(v), "l"(m));
}

/* A pair of 16-bit keys in a word (rtopk_row's PACK), mh = m << 16: c_lo += (low key >= m),
 * c_hi += (high key >= m). volatile: a shift, two compares and two predicated adds per
 * step, rather than the shifted words hoisted out of the search loop (16 more registers). */
__device__ __forceinline__ void rtopk_add_ge_pair(unsigned& c_lo, unsigned& c_hi, uint32_t w, uint32_t mh) {
  asm volatile(
      "{\n\t.reg .pred p, q;\n\t.reg .b32 t;\n\tshl.b32 t, %2, 16;\n\tsetp.ge.u32 p, t, %3;\n\t"
      "setp.ge.u32 q, %2, %3;\n\t@p add.u32 %0, %0, 1;\n\t@q add.u32 %1, %1, 1;\n\t}"
      : "+r"(c_lo), "+r"(c_hi)
      : "r"(w), "r"(mh));
}

/* Number of keys >= m in the row's active chunks, over the warp. Padding (key 0) never
 * counts: m >= 1. Register rows count every chunk, padding included, without branches
 * (a compare and a predicated add per key, V independent sums, one redux.sync); shared-
 * memory rows only the active chunks. */
template <int L, typename KeyT, int R, bool SMEM>
__device__ __forceinline__ unsigned rtopk_count_ge(const rtopk_row<KeyT, R, SMEM>& row, int lane, int chunks,
                                                   KeyT m, unsigned mask) {
  typedef rtopk_row<KeyT, R, SMEM> Row;
  if (!SMEM) {
    unsigned cj[Row::V];
#pragma unroll
    for (int j = 0; j < Row::V; ++j) cj[j] = 0;
    if (Row::PACK) {
      /* a pair's high key >= m iff word >= m << 16; its low key iff word << 16 >= m << 16 */
      const uint32_t mh = (uint32_t)m << 16;
#pragma unroll
      for (int ch = 0; ch < Row::CHUNKS; ++ch)
#pragma unroll
        for (int j = 0; j < Row::WPC; ++j)
          rtopk_add_ge_pair(cj[2 * j], cj[2 * j + 1], (uint32_t)row.reg[(SMEM ? 0 : ch * Row::WPC) + j], mh);
    } else {
#pragma unroll
      for (int ch = 0; ch < Row::CHUNKS; ++ch)
#pragma unroll
        for (int j = 0; j < Row::V; ++j) rtopk_add_ge(cj[j], (KeyT)row.reg[(SMEM ? 0 : ch * Row::V) + j], m);
    }
    unsigned c = 0;
#pragma unroll
    for (int j = 0; j < Row::V; ++j) c += cj[j];
    return rtopk_warp_sum<L>(c, mask);
  }
  /* shared-memory rows: the active chunks, one 16-byte load each (16-bit keys compared
   * in pairs, as above) */
  unsigned c0 = 0, c1 = 0;
  const uint32_t mh = (uint32_t)m << 16;
#pragma unroll Row::UNROLL
  for (int ch = 0; ch < chunks; ++ch) {
    if (sizeof(KeyT) == 2) {
      const rtopk_vec<uint32_t, 4> t =
          *reinterpret_cast<const rtopk_vec<uint32_t, 4>*>(row.smem + (ch * 32 + lane) * Row::V);
#pragma unroll
      for (int i = 0; i < 4; ++i) rtopk_add_ge_pair(c0, c1, t.a[i], mh);
    } else {
      KeyT v[Row::V];
      row.get(ch, lane, v);
#pragma unroll
      for (int j = 0; j < Row::V; ++j) rtopk_add_ge((j & 1) ? c1 : c0, v[j], m);
    }
  }
  return rtopk_warp_sum<L>(c0 + c1, mask);
}

/* Writes result `slot` of the row whose results start at obase: the raw value and the index
 * (rtopk_emit_raw), or the raw value of a key (reloaded from the input for NaN keys, so
 * payloads survive) and the index (rtopk_emit). */
template <typename KeyT, typename SlotT, typename IdxT>
__device__ __forceinline__ void rtopk_emit_raw(const rtopk_params& P, int64_t obase, SlotT slot, KeyT raw, IdxT idx) {
  ((KeyT*)P.values + obase)[slot] = raw;
  if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices + obase)[slot] = idx;
  else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices + obase)[slot] = idx;
}
template <typename KeyT>
__device__ __forceinline__ void rtopk_emit(const rtopk_params& P, const rtopk_xf<KeyT>& x, const KeyT* src,
                                           int64_t obase, unsigned slot, KeyT key, int idx) {
  bool nan;
  KeyT raw = rtopk_raw(key, x, &nan);
  if (nan) raw = src[idx];
  rtopk_emit_raw(P, obase, slot, raw, idx);
}

/* Writes an empty result slot (a row shorter than k): the worst value and index -1. */
template <typename KeyT>
__device__ __forceinline__ void rtopk_emit_empty(const rtopk_params& P, int64_t obase, int64_t slot) {
  ((KeyT*)P.values + obase)[slot] = (KeyT)P.worst_bits;
  if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices + obase)[slot] = -1;
  else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices + obase)[slot] = -1;
}

/* One chunk's selection mask (bit j: key j of the lane): every key > thi, then keys in
 * [tlo, thi] in index order while fewer than `need` have been taken (*taken counts them
 * over the chunks so far; warp-uniform). */
template <typename KeyT, int V, int PBITS>
__device__ __forceinline__ unsigned rtopk_chunk_select(const KeyT (&v)[V], int pos, int len, unsigned lane_lt, KeyT thi,
                                                       KeyT tlo, unsigned need, unsigned* taken,
                                                       unsigned mask = 0xffffffffu) {
  unsigned selmask = 0;
#pragma unroll
  for (int j = 0; j < V; ++j) /* padding (key 0) is never > thi */
    if (v[j] > thi) selmask |= 1u << j;
  if (*taken < need) { /* warp-uniform; skipped when the search hit count == k */
    unsigned ties = 0, tiemask = 0;
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (pos + j < len && v[j] >= tlo && v[j] <= thi) {
        tiemask |= 1u << j;
        ++ties;
      }
    unsigned tot;
    const unsigned before = *taken + rtopk_lane_prefix<PBITS>(ties, lane_lt, &tot, mask);
    unsigned seen = 0;
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (tiemask & (1u << j)) {
        if (before + seen < need) selmask |= 1u << j;
        ++seen;
      }
    *taken += tot;
  }
  return selmask;
}

/* A register row's selection bits (bit c * V + j) when ties at the threshold must be taken
 * in index order (need > 0): chunk by chunk, as rtopk_chunk_select. */
template <int L, int PBITS, typename KeyT, int R, bool SMEM>
__device__ __forceinline__ void rtopk_select_ties(const rtopk_row<KeyT, R, SMEM>& row, int sl, unsigned lane_lt,
                                                  int chunks, int len, KeyT thi, KeyT tlo, unsigned need,
                                                  uint32_t* bits, unsigned mask) {
  typedef rtopk_row<KeyT, R, SMEM> Row;
  constexpr int V = Row::V;
  unsigned taken = 0;
  uint32_t b = 0;
#pragma unroll
  for (int c = 0; c < Row::CHUNKS; ++c)
    if (c < chunks) {
      KeyT v[V];
      row.get(c, sl, v);
      b |= rtopk_chunk_select<KeyT, V, PBITS>(v, (c * L + sl) * V, len, lane_lt, thi, tlo, need, &taken, mask)
           << (c * V);
    }
  *bits = b;
}

/*
 * TOPK_SORTED: the warp sorts its cnt staged results best first (rtopk_entry::before) in
 * place, by one of three methods (same-run A/B against the old quadratic rank loop, in which
 * each lane ranked cnt / 32 entries against all cnt: docs/perf-notes.md v0.14):
 *   - cnt <= RTOPK_SORT_RANK_MAX: each lane ranks entries l and l + 32 against all in one pass
 *     (2 x cnt independent compares; the rank loop's cost there, 0.98-1.00x);
 *   - cnt <= RTOPK_SORT_REG_MAX, keys of <= 32 bits: a bitonic network in registers
 *     (topk_dq_sort_blocked: lane l holds positions 4l..4l+3 or 8l..8l+7, so the steps at
 *     distances below 4 or 8 need no shuffle; 32-bit keys compared as one 64-bit composite).
 *     No shared-memory round trip or __syncwarp per step, which made the shared-memory network
 *     0.83-0.96x the rank loop at k = 100 / 128 on few rows; 64-bit keys' 16-byte entries cost
 *     4 shuffles an exchange, and a register network was 0.93x the shared-memory one for f64
 *     4096 x 4096;
 *   - above, the same network in shared memory over the next power of two m >= cnt:
 *     positions >= cnt stand for padding worse than every entry, so a comparator reaching one
 *     would not swap and is skipped (nothing past cnt is read or written).
 * The network's comparators all put the better entry at the lower position: each merge of runs
 * of size 2^ls opens with a flip (p against p ^ (2^ls - 1)), then half-cleaners.
 */
enum {
  RTOPK_SORT_RANK_MAX = 64,
  RTOPK_SORT_REG_HALF = 128, /* the register network at 4 entries a lane (8 above, up to RTOPK_SORT_REG_MAX) */
  RTOPK_SORT_REG_MAX = 256
};

template <typename KeyT>
__device__ __forceinline__ void rtopk_cx_stage(rtopk_entry<KeyT>* s, unsigned i, unsigned j) {
  const rtopk_entry<KeyT> a = s[i], b = s[j];
  if (b.before(a)) {
    s[i] = b;
    s[j] = a;
  }
}

/* An entry from another lane, its fields as 32-bit words: lane ^ m (XOR), or lane m of the
 * caller's width-lane segment; mask: the lanes taking part. */
template <typename KeyT, bool XOR = true>
__device__ __forceinline__ rtopk_entry<KeyT> rtopk_shfl_entry(const rtopk_entry<KeyT>& e, int m,
                                                              unsigned mask = 0xffffffffu, int width = 32) {
  static_assert(sizeof(rtopk_entry<KeyT>) % 4 == 0, "entries are whole words");
  constexpr int W = (int)sizeof(rtopk_entry<KeyT>) / 4;
  unsigned w[W];
  memcpy(w, &e, sizeof e);
#pragma unroll
  for (int i = 0; i < W; ++i)
    w[i] = XOR ? __shfl_xor_sync(mask, w[i], m, width) : __shfl_sync(mask, w[i], m, width);
  rtopk_entry<KeyT> o;
  memcpy(&o, w, sizeof o);
  return o;
}

/* The blocked sort's view of a staged entry (topk_dq_sort_blocked, topk_device/merge.cuh):
 * 32-bit keys as the shared 64-bit composite (key << 32 | ~position: one 64-bit compare, where
 * before() takes three), 16-bit keys as their own composite word. */
template <typename KeyT> struct rtopk_sort_ops;
template <> struct rtopk_sort_ops<uint32_t> : topk_dq_ops<32> {
  static __device__ __forceinline__ P of(const rtopk_entry<uint32_t>& e) { return make(e.k, e.p); }
  static __device__ __forceinline__ rtopk_entry<uint32_t> entry(const P& a) {
    return rtopk_entry<uint32_t>::make((uint32_t)key(a), index(a));
  }
};
template <> struct rtopk_sort_ops<uint16_t> {
  typedef rtopk_entry<uint16_t> P;
  static __device__ __forceinline__ P of(const P& e) { return e; }
  static __device__ __forceinline__ P entry(const P& a) { return a; }
  static __device__ __forceinline__ P worst() { return P::make(0, 0xFFFFu); } /* composite word 0 */
  static __device__ __forceinline__ bool better(const P& a, const P& b) { return a.before(b); }
  static __device__ __forceinline__ void cmpx(P& hi, P& lo) { /* IMNMX each */
    const uint32_t h = max(hi.w, lo.w), l = min(hi.w, lo.w);
    hi.w = h;
    lo.w = l;
  }
  static __device__ __forceinline__ P shfl_xor(const P& a, int m) {
    P o;
    o.w = __shfl_xor_sync(0xffffffffu, a.w, m);
    return o;
  }
};

/* The stage's cnt <= 32 x E entries sorted through the register network in the blocked layout
 * (lane l holds positions l * E .. l * E + E - 1), back in place. Positions past cnt are the
 * sentinel, worse than every entry. */
template <typename KeyT, int E>
__device__ __forceinline__ void rtopk_sort_stage_regs(rtopk_entry<KeyT>* s, unsigned cnt, int lane) {
  typedef rtopk_sort_ops<KeyT> O;
  typename O::P v[E];
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const unsigned p = (unsigned)(lane * E + e);
    v[e] = p < cnt ? O::of(s[p]) : O::worst();
  }
  topk_dq_sort_blocked<O, E>(v, lane);
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const unsigned p = (unsigned)(lane * E + e);
    if (p < cnt) s[p] = O::entry(v[e]); /* the lane's own positions: no other lane read them */
  }
  __syncwarp();
}

/* cnt <= RTOPK_SORT_RANK_MAX staged entries sorted in place by rank: a row's L lanes (sl =
 * lane % L, mask = their lanes) rank entries sl + L * i, i < RTOPK_SORT_RANK_MAX / L, against
 * all cnt in one pass. */
template <typename KeyT, int L>
__device__ __forceinline__ void rtopk_rank_sort(rtopk_entry<KeyT>* s, unsigned cnt, int sl, unsigned mask) {
  constexpr int E = RTOPK_SORT_RANK_MAX / L;
  rtopk_entry<KeyT> e[E];
  unsigned r[E];
#pragma unroll
  for (int i = 0; i < E; ++i) {
    const unsigned p = (unsigned)(sl + L * i);
    e[i] = p < cnt ? s[p] : rtopk_entry<KeyT>::make(0, 0);
    r[i] = 0;
  }
  for (unsigned f = 0; f < cnt; ++f) {
    const rtopk_entry<KeyT> o = s[f];
#pragma unroll
    for (int i = 0; i < E; ++i) r[i] += o.before(e[i]) ? 1u : 0u;
  }
  __syncwarp(mask);
#pragma unroll
  for (int i = 0; i < E; ++i)
    if ((unsigned)(sl + L * i) < cnt) s[r[i]] = e[i];
  __syncwarp(mask);
}

template <typename KeyT>
__device__ void rtopk_warp_sort(rtopk_entry<KeyT>* s, unsigned cnt, int lane) {
  if (cnt <= RTOPK_SORT_RANK_MAX) { /* lane l ranks entries l and l + 32 */
    rtopk_rank_sort<KeyT, 32>(s, cnt, lane, 0xffffffffu);
    return;
  }
  if constexpr (sizeof(KeyT) <= 4) {
    if (cnt <= RTOPK_SORT_REG_MAX) {
      if (cnt <= RTOPK_SORT_REG_HALF) rtopk_sort_stage_regs<KeyT, RTOPK_SORT_REG_HALF / 32>(s, cnt, lane);
      else rtopk_sort_stage_regs<KeyT, 8>(s, cnt, lane);
      return;
    }
  }
  const int lg = 32 - __clz((int)(cnt - 1)); /* m = 2^lg >= cnt */
  const unsigned half_m = 1u << (lg - 1);   /* comparators per step */
  for (int ls = 1; ls <= lg; ++ls) {         /* merges of runs of size 2^ls */
    for (unsigned t = (unsigned)lane; t < half_m; t += 32) {
      const unsigned i = ((t >> (ls - 1)) << ls) | (t & ((1u << (ls - 1)) - 1u));
      const unsigned j = i ^ ((1u << ls) - 1u);
      if (j < cnt) rtopk_cx_stage<KeyT>(s, i, j);
    }
    __syncwarp();
    for (int lt = ls - 2; lt >= 0; --lt) {   /* half-cleaners, stride 2^lt */
      for (unsigned t = (unsigned)lane; t < half_m; t += 32) {
        const unsigned i = ((t >> lt) << (lt + 1)) | (t & ((1u << lt) - 1u));
        const unsigned j = i + (1u << lt);
        if (j < cnt) rtopk_cx_stage<KeyT>(s, i, j);
      }
      __syncwarp();
    }
  }
}

/* Bitonic sort of one 32-bit word per lane over a row's L lanes (sl = lane % L, mask = their
 * lanes), largest first at sub-lane 0 (the network of topk_dq_sort_blocked with E = 1: a flip,
 * then half-cleaners; one shuffle and one min / max per step, 15 steps for L = 32). */
template <int L>
__device__ __forceinline__ uint32_t rtopk_sort_words_desc(uint32_t c, int sl, unsigned mask) {
#pragma unroll
  for (int size = 2; size <= L; size <<= 1) {
    uint32_t o = __shfl_xor_sync(mask, c, size - 1, L);
    c = (sl & (size >> 1)) == 0 ? max(c, o) : min(c, o);
#pragma unroll
    for (int st = size >> 2; st >= 1; st >>= 1) {
      o = __shfl_xor_sync(mask, c, st, L);
      c = (sl & st) == 0 ? max(c, o) : min(c, o);
    }
  }
  return c;
}

/*
 * The exact search's finish (register rows): the ncand <= L keys in [lo, hi] (lo >= 1, so
 * padding is never one; L = the row's lanes) are staged, sub-lane l takes candidate l, they
 * are ordered (key descending, then position: the project's tie rule), and the first `need`
 * are results, staged in slots gt .. gt + need - 1, after the keys > hi that the select
 * stages in slots 0 .. gt - 1. One pass over the row and an L-lane network, where the
 * search would take 3-4 more counting passes (a host simulation of the search on uniform
 * and normal rows). Where hi - lo is narrow enough (the usual case: the search has narrowed
 * it), a candidate is one 32-bit word, (key - lo + 1) << PB | (R - 1 - position), and the
 * L lanes sort the words with one min / max per compare-exchange (ncu, 2^18 x 256, k = 16:
 * the rank loop this replaced, each lane ranking its candidate against all ncand through
 * shared memory, was 276 of the row's 1007 warp instructions). Else (keys more than
 * 2^(32 - PB) apart: rows that start with <= L candidates, over the whole key range) each
 * lane ranks its entry against the others' by shuffles and stores it at its rank.
 */
template <int L, typename KeyT, int R, bool SMEM>
__device__ __forceinline__ void rtopk_finish(const rtopk_row<KeyT, R, SMEM>& row, int sl, unsigned mask, KeyT lo,
                                             KeyT hi, unsigned ncand, unsigned gt, unsigned need, unsigned kcap,
                                             rtopk_entry<KeyT>* stage) {
  typedef rtopk_row<KeyT, R, SMEM> Row;
  constexpr int V = Row::V;
  constexpr int RL = R * L / 32; /* the row's capacity (R is the storage's, 32 / L rows a warp) */
  constexpr int PB = RL <= 128 ? 7 : RL <= 256 ? 8 : RL <= 512 ? 9 : RL <= 1024 ? 10 : 12; /* bits of a position */
  uint32_t cb = 0;
#pragma unroll
  for (int c = 0; c < Row::CHUNKS; ++c) {
    KeyT v[V];
    row.get(c, sl, v);
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (v[j] >= lo && v[j] <= hi) cb |= 1u << (c * V + j);
  }
  const unsigned cnt = (unsigned)__popc(cb);
  const unsigned incl = rtopk_lane_incl_sum<L>(cnt, sl, mask);
  if (incl > (unsigned)L) cb = 0; /* only if the counts disagreed: stay inside the slots */
  const unsigned st0 = (unsigned)__cvta_generic_to_shared(stage);
  unsigned slot = incl - cnt;
#pragma unroll
  for (int c = 0; c < Row::CHUNKS; ++c) {
    KeyT v[V];
    row.get(c, sl, v);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const unsigned sel = (cb >> (c * V + j)) & 1u;
      rtopk_stage_put(st0 + slot * (unsigned)sizeof(rtopk_entry<KeyT>),
                      rtopk_entry<KeyT>::make(v[j], (unsigned)((c * L + sl) * V + j)), sel);
      slot += sel;
    }
  }
  __syncwarp(mask);
  const bool have = (unsigned)sl < ncand;
  if ((uint64_t)(KeyT)(hi - lo) < (1ull << (32 - PB)) - 1ull) { /* uniform over the row's lanes */
    uint32_t w = 0; /* below every candidate's word */
    if (have) {
      const rtopk_entry<KeyT> e = stage[sl];
      w = ((uint32_t)(KeyT)(e.key() - lo) + 1u) << PB | (uint32_t)(RL - 1 - (int)e.pos());
    }
    w = rtopk_sort_words_desc<L>(w, sl, mask);
    const rtopk_entry<KeyT> e =
        rtopk_entry<KeyT>::make((KeyT)(lo + (KeyT)((w >> PB) - 1u)), (unsigned)(RL - 1) - (w & ((1u << PB) - 1u)));
    __syncwarp(mask);
    /* the winners' final slots, after the gt keys > hi that the select stages in 0 .. gt - 1 */
    const unsigned ws = gt + (unsigned)sl;
    rtopk_stage_put(st0 + ws * (unsigned)sizeof(rtopk_entry<KeyT>), e, (unsigned)sl < need && ws < kcap ? 1u : 0u);
  } else {
    rtopk_entry<KeyT> e = rtopk_entry<KeyT>::make(0, 0);
    if (have) e = stage[sl];
    unsigned rank = 0;
#pragma unroll
    for (int m = 0; m < L; ++m)
      rank += (unsigned)m < ncand && rtopk_shfl_entry<KeyT, false>(e, m, mask, L).before(e) ? 1u : 0u;
    __syncwarp(mask);
    const unsigned ws = gt + rank;
    rtopk_stage_put(st0 + ws * (unsigned)sizeof(rtopk_entry<KeyT>), e, have && rank < need && ws < kcap ? 1u : 0u);
  }
}

/* ------------------------------------------------------------------ the kernel */

/* Blocks of 256 threads per SM that the register budget must allow: 4 (<= 64 registers)
 * for the register buckets, so that 32 warps (rows) are in flight per SM, 5 (<= 48) for
 * R = 128, except where that would spill in the search or select loops: 3 (<= 80) for
 * 64-bit keys at R = 512, the generic kind's 32-bit keys at R = 768 and F32 at R = 1024
 * (H100, 2^18 x 1024, k = 16: 0.621 ms at 80 registers, 0.781 ms spilling at 64), 2 (<= 128) for
 * 64-bit keys at R = 768 and the generic kind's 32-bit keys at R = 1024, none for 64-bit
 * keys at R = 1024 (64 registers of keys per lane) and for the shared-memory buckets
 * (under 64 anyway). Checked with -Xptxas -v: no spills but a few bytes (F32 at R = 768
 * and 1024). */
template <typename KeyT, int R, bool SMEM, int KIND>
struct rtopk_min_blocks {
  static constexpr bool wide = (sizeof(KeyT) == 8 && R >= 512) || (KIND == RTOPK_KIND_GENERIC && R >= 768) ||
                               (sizeof(KeyT) == 4 && R >= 1024);
  static constexpr int value = SMEM || (sizeof(KeyT) == 8 && R >= 1024) ? 1
                               : (sizeof(KeyT) == 8 && R >= 768) ||
                                         (KIND == RTOPK_KIND_GENERIC && R >= 1024) ? 2
                               : wide                                  ? 3
                               : R <= 128                              ? 5
                                                                       : RTOPK_REG_MIN_BLOCKS;
};

/*
 * grid-stride over rows, one warp per row (L = 32) or two (L = 16: a half each);
 * blockDim.x = 32 x warps per block; dynamic shared memory = warps x (32 / L) x P.warp_smem
 * (a slice per row slot). KIND: RTOPK_KIND_*, matching P.dtype. WIDE: the kernel for
 * P.wide_cap > 0 ("sorted output from a wider threshold"); a separate instantiation because
 * its tests in the search loop, compiled into every register kernel, made the unsorted search
 * 1.03-1.05x slower (H100, session 35: 2^18 / 2^20 rows of 512..1024, against session 33's code).
 */
template <typename KeyT, int R, bool SMEM, int KIND, int L, bool WIDE = false>
__global__ void __launch_bounds__(256, (rtopk_min_blocks<KeyT, R * (32 / L), SMEM, KIND>::value))
    rtopk_kernel(const rtopk_params P) {
  static_assert(L == 32 || (L == 16 && !SMEM), "two rows a warp only for register rows");
  static_assert(!WIDE || (!SMEM && L == 32 && sizeof(KeyT) <= 4), "the wider threshold: register rows, a warp a row");
  constexpr int G = 32 / L; /* rows a warp */
  typedef rtopk_row<KeyT, R * G, SMEM> Row; /* R / L keys a lane */
  typedef typename rtopk_wide<KeyT>::type WideT;
  typedef rtopk_space<KeyT, KIND> Space;
  typedef typename Space::real RealT;
  constexpr int V = Row::V;
  constexpr int CHUNKS = Row::CHUNKS;
  constexpr int PBITS = V >= 8 ? 4 : V >= 4 ? 3 : V >= 2 ? 2 : 1; /* bits of a count in [0, V] */
  extern __shared__ __align__(16) unsigned char rtopk_smem[];

  const int lane = (int)(threadIdx.x & 31u);
  const unsigned lane_lt = (1u << lane) - 1u;
  const int sl = lane & (L - 1); /* the lane within the row's L */
  const int h = lane / L;        /* which of the warp's rows */
  const unsigned hmask = L == 32 ? 0xffffffffu : (0xffffffffu >> (32 - L)) << (h * L); /* the row's lanes */
  const int warp = (int)(threadIdx.x >> 5);
  const int64_t slots_total = (int64_t)gridDim.x * (blockDim.x >> 5) * G;
  unsigned char* wsm = rtopk_smem + (size_t)(warp * G + h) * P.warp_smem;
  rtopk_entry<KeyT>* stage = (rtopk_entry<KeyT>*)(wsm + P.row_smem); /* P.sort_cap entries */
  const rtopk_xf<KeyT> x = rtopk_make_xf<KeyT, KIND>(P.dtype, P.smallest);
  const KeyT ones = (KeyT)~(KeyT)0;

  Row row;
  row.smem = (KeyT*)wsm;

  for (int64_t r = ((int64_t)blockIdx.x * (blockDim.x >> 5) + warp) * G + h; r < P.batch; r += slots_total) {
    /* ---- the row's extent: offsets clamped into [0, n], length into [0, R] */
    const topk_row_span span = topk_row(P.offsets, P.n, P.ld, r); /* common/rows.cuh */
    const int64_t start = span.start;
    const int len = (int)(span.len < R ? span.len : R);
    const KeyT* src = (const KeyT*)P.in + start;
    const int chunks = (len + L * V - 1) / (L * V); /* chunks holding row elements */
    const bool aligned = ((uintptr_t)src % (V * sizeof(KeyT))) == 0;

    /* ---- load: keys, min and max of the valid ones */
    KeyT kmin = ones, kmax = 0;
    if (!SMEM) {
      /* register rows: every chunk's load is issued before any is used, so that a warp has
       * the whole row in flight rather than one 512-byte chunk at a time */
      KeyT raw[CHUNKS][V];
#pragma unroll
      for (int c = 0; c < CHUNKS; ++c) {
        const int pos = (c * L + sl) * V;
        if (c < chunks && aligned && pos + V <= len) {
          const rtopk_vec<KeyT, V> t = *reinterpret_cast<const rtopk_vec<KeyT, V>*>(src + pos);
#pragma unroll
          for (int j = 0; j < V; ++j) raw[c][j] = t.a[j];
        } else {
#pragma unroll
          for (int j = 0; j < V; ++j) raw[c][j] = pos + j < len ? src[pos + j] : (KeyT)0;
        }
      }
#pragma unroll
      for (int c = 0; c < CHUNKS; ++c) {
        const int pos = (c * L + sl) * V;
        KeyT v[V];
        const auto get = [&](int j) { return raw[c][j]; };
        if ((c + 1) * L * V <= len) rtopk_keys_minmax<KeyT, V>(get, V, x, v, kmin, kmax); /* warp-uniform: whole chunk */
        else rtopk_keys_minmax<KeyT, V>(get, len - pos, x, v, kmin, kmax);
        row.put(c, sl, v);
      }
    } else {
#pragma unroll Row::UNROLL
    for (int c = 0; c < CHUNKS; ++c) {
      KeyT v[V];
      if (c < chunks) {
        const int pos = (c * L + sl) * V;
        if (aligned && pos + V <= len) { /* a full vector: no per-element checks */
          const rtopk_vec<KeyT, V> t = *reinterpret_cast<const rtopk_vec<KeyT, V>*>(src + pos);
          rtopk_keys_minmax<KeyT, V>([&](int j) { return t.a[j]; }, V, x, v, kmin, kmax);
        } else {
          rtopk_keys_minmax<KeyT, V>([&](int j) { return src[pos + j]; }, len - pos, x, v, kmin, kmax);
        }
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) v[j] = 0;
      }
      if (c < chunks) row.put(c, sl, v);
    }
    }
    if (SMEM) __syncwarp(hmask);
    kmin = (KeyT)rtopk_warp_min<L>((WideT)kmin, hmask);
    kmax = (KeyT)rtopk_warp_max<L>((WideT)kmax, hmask);

    /* ---- search: thresholds for the selection below.
     * Results: every valid key > thi, then the first `need` valid keys in [tlo, thi] in index order. */
    const int64_t k = P.k;
    KeyT thi, tlo;
    unsigned need;
    bool fin = false;  /* the exact search ended in rtopk_finish */
    bool wide = false; /* the exact search stopped at a lo with count(key >= lo) <= wcap */
    const unsigned wcap = WIDE ? (unsigned)P.wide_cap : 0u;
    int steps = 0;
    if ((int64_t)len <= k) {
      thi = ones;
      tlo = 0;
      need = (unsigned)len; /* the whole row, then padding */
    } else if (P.max_iter > 0) {
      /* early stopping (Algorithm 2): value midpoints, at most max_iter steps (k < len <= R) */
      const unsigned ku = (unsigned)k;
      KeyT lo = kmin;
      RealT lo_r = Space::of_key(kmin, x, P.dtype), hi_r = Space::of_key(kmax, x, P.dtype);
      for (int it = 0; it < P.max_iter && lo != kmax; ++it) {
        const RealT mid_r = (RealT)0.5 * lo_r + (RealT)0.5 * hi_r;
        KeyT m = Space::key_of(mid_r, x, P.dtype);
        if (m <= lo) m = (KeyT)(lo + 1); /* lo < kmax here, so no wrap */
        const unsigned c = rtopk_count_ge<L>(row, sl, chunks, m, hmask);
        ++steps;
        if (c < ku) {
          /* count(key > lo) < k <= count(key >= lo): lo is the k-th key, and the first k keys
           * >= lo in index order are the exact result; no later step could move lo */
          if (m == (KeyT)(lo + 1)) break;
          hi_r = mid_r;
        } else {
          if (c == ku && P.paper_break) break; /* the paper's line 11 taken literally */
          lo = m;
          lo_r = mid_r;
          if (c == ku) break;
        }
      }
      thi = ones;
      tlo = lo;
      need = ku;
    } else {
      /* exact: [lo, hi] holds the k-th key; gt = count(key > hi); k < len <= R */
      const unsigned ku = (unsigned)k;
      /* the count the guesses aim at: k + 1/2, or the middle of [k, wcap] */
      const float kh = WIDE && wcap ? 0.5f * (float)(ku + wcap) : (float)ku + 0.5f;
      KeyT lo = kmin, hi = kmax;
      unsigned gt = 0, c_lo = (unsigned)len; /* count(key >= lo) */
      bool hit = false, bisect_next = false;
      KeyT hit_m = 0;
      const bool by_value = P.search != RTOPK_SEARCH_KEY;
      const bool interp = P.search == RTOPK_SEARCH_INTERP;
      RealT lo_r = 0, hi_r = 0;
      if (by_value) {
        lo_r = Space::of_key(lo, x, P.dtype);
        hi_r = Space::of_key(hi, x, P.dtype);
      }
      /* the finish is left out when the steps are recorded (bench/rtopk_accuracy's Table 1:
       * the search's own convergence, as in the paper) */
      const bool finish = !SMEM && !P.iters;
      while (lo < hi) {
        if (WIDE && c_lo <= wcap && lo >= (KeyT)1) { /* lo >= 1: padding (key 0) is never staged */
          wide = true;
          break;
        }
        if (finish && c_lo - gt <= (unsigned)L && lo >= (KeyT)1) {
          rtopk_finish<L>(row, sl, hmask, lo, hi, c_lo - gt, gt, ku - gt, ku, stage);
          fin = true;
          break;
        }
        ++steps;
        KeyT m = (KeyT)(lo + (KeyT)((KeyT)(hi - lo) >> 1) + 1); /* the key midpoint, in (lo, hi] */
        bool m_is_value = false;
        RealT m_r = 0;
        if (by_value && steps <= RTOPK_VALUE_STEPS) {
          /* interp: halfway between the value midpoint and the point where the count would
           * be k + 1/2 if the values were uniform in [lo, hi] (c_lo > k > gt), or the value
           * midpoint after a step that did not halve the interval */
          /* the wider target leans further to the interpolation (0.6 / 0.4 against 0.5 / 0.5:
           * 0.3-0.5 fewer steps in the simulation) */
          float frac = 0.5f;
          if (interp && !bisect_next) {
            const float fi = __fdividef((float)c_lo - kh, (float)(c_lo - gt)); /* fast: it only steers */
            frac = WIDE && wcap ? 0.2f + 0.6f * fi : 0.25f + 0.5f * fi;
          }
          m_r = lo_r + (hi_r - lo_r) * (RealT)frac;
          const KeyT vm = Space::key_of(m_r, x, P.dtype);
          if (vm > lo && vm <= hi) {
            m = vm;
            m_is_value = true;
          }
        }
        const unsigned c = rtopk_count_ge<L>(row, sl, chunks, m, hmask);
        if (c == ku) {
          hit = true;
          hit_m = m;
          break;
        }
        const RealT w = hi_r - lo_r;
        /* the real of the new endpoint: the guess itself when it gave m (rounding aside: it
         * only steers the guesses), else decoded from the key */
        if (by_value && !m_is_value) m_r = Space::of_key(m, x, P.dtype);
        if (c > ku) {
          lo = m;
          c_lo = c;
          lo_r = m_r;
        } else {
          hi = (KeyT)(m - 1);
          gt = c;
          hi_r = m_r;
        }
        bisect_next = hi_r - lo_r > (RealT)0.5 * w;
      }
      if (hit) {
        thi = (KeyT)(hit_m - 1); /* the k keys >= hit_m are the results; no ties to take */
        tlo = thi;
        need = 0;
      } else if (fin) {
        thi = hi; /* the keys > hi, then the finish's winners */
        tlo = thi;
        need = 0;
      } else if (wide) {
        thi = (KeyT)(lo - 1); /* every key >= lo (lo >= 1), sorted below, the first k written */
        tlo = thi;
        need = 0;
      } else {
        thi = lo;
        tlo = lo;
        need = ku - gt;
      }
    }
    if (P.iters && sl == 0) P.iters[r] = steps;

    /* ---- select. Results: every valid key > thi, then the first `need` valid keys in
     * [tlo, thi] in index order (need == 0 when the search hit count == k exactly). */
    const int64_t obase = r * k;
    /* slot < k: slots stay below len <= R, so min(k, R) bounds them in 32 bits */
    const unsigned kcap = k < (int64_t)R ? (unsigned)k : (unsigned)R;
    const unsigned scap = wide ? wcap : kcap; /* staged entries at most */
    unsigned nsel; /* staged or written results */
    if (!SMEM) {
      /* Register rows: one bit per key of the lane (bit c * V + j; R / 32 <= 32 keys), one
       * scan of the per-lane counts over the warp, then each lane stages its results in its
       * slots of the warp's shared-memory slice (rtopk_entry). The slots are in
       * lane order, not index order: unsorted output allows any order, and the sort below
       * breaks ties by position. The output is written from the slice, 32 slots at a time,
       * so a key is decoded and its two stores addressed once per result, not once per key. */
      uint32_t bits = 0;
      if (need == 0) {
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
          KeyT v[V];
          row.get(c, sl, v);
#pragma unroll
          for (int j = 0; j < V; ++j) /* padding (key 0) is never > thi */
            if (v[j] > thi) bits |= 1u << (c * V + j);
        }
      } else {
        rtopk_select_ties<L, PBITS>(row, sl, lane_lt, chunks, len, thi, tlo, need, &bits, hmask);
      }
      const unsigned cnt = (unsigned)__popc(bits);
      const unsigned incl = rtopk_lane_incl_sum<L>(cnt, sl, hmask);
      const unsigned total = __shfl_sync(hmask, incl, L - 1, L);
      if (incl > scap) { /* only if the search were wrong: never write past the stage */
        const unsigned keep = scap > incl - cnt ? scap - (incl - cnt) : 0u;
        while ((unsigned)__popc(bits) > keep) bits &= ~(0x80000000u >> __clz(bits));
      }
      /* predicated stores to consecutive slots, no branch per key */
      unsigned st = (unsigned)__cvta_generic_to_shared(stage + (incl - cnt));
      const unsigned lane_pos = (unsigned)(sl * V);
#pragma unroll
      for (int c = 0; c < CHUNKS; ++c) {
        KeyT v[V];
        row.get(c, sl, v);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const unsigned sel = (bits >> (c * V + j)) & 1u;
          rtopk_stage_put(st, rtopk_entry<KeyT>::make(v[j], lane_pos + (unsigned)(c * L * V + j)), sel);
          st += sel * (unsigned)sizeof(rtopk_entry<KeyT>);
        }
      }
      const unsigned all = fin ? (unsigned)k : total; /* the finish staged its winners after the keys > hi */
      nsel = all < scap ? all : scap; /* == min(len, k), or count(key >= lo) when wide */
    } else {
      /* Shared-memory rows: per chunk in index order, slot = results before this element;
       * written directly (unsorted) or staged for the sort. */
      unsigned taken = 0; /* [tlo, thi] elements taken so far */
      unsigned slot0 = 0; /* results written so far */
#pragma unroll Row::UNROLL
      for (int c = 0; c < CHUNKS; ++c) {
        if (c < chunks) {
          KeyT v[V];
          row.get(c, sl, v);
          const int pos = (c * L + sl) * V;
          const unsigned selmask =
              rtopk_chunk_select<KeyT, V, PBITS>(v, pos, len, lane_lt, thi, tlo, need, &taken, hmask);
          unsigned tot;
          unsigned slot = slot0 + rtopk_lane_prefix<PBITS>((unsigned)__popc(selmask), lane_lt, &tot, hmask);
          slot0 += tot;
#pragma unroll
          for (int j = 0; j < V; ++j) {
            const bool sel = (selmask >> j) & 1u;
            if (sel && slot < kcap) {
              if (P.sorted) {
                if (slot < (unsigned)P.sort_cap) {
                  stage[slot] = rtopk_entry<KeyT>::make(v[j], (unsigned)(pos + j));
                }
              } else {
                rtopk_emit<KeyT>(P, x, src, obase, slot, v[j], pos + j);
              }
            }
            slot += sel ? 1u : 0u;
          }
        }
      }
      nsel = slot0 < kcap ? slot0 : kcap; /* == min(len, k) */
    }

    /* ---- staged results (register rows; shared-memory rows when TOPK_SORTED): sorted when
     * asked (key descending, then position), then written from the stage in slot order */
    if (!SMEM || P.sorted) {
      __syncwarp(hmask);
      const unsigned cnt = wide || nsel < (unsigned)P.sort_cap ? nsel : (unsigned)P.sort_cap;
      if (P.sorted) {
        if (L == 32) rtopk_warp_sort<KeyT>(stage, cnt, lane);
        else /* two rows a warp: the host keeps k <= RTOPK_SORT_RANK_MAX */
          rtopk_rank_sort<KeyT, L>(stage, min(cnt, (unsigned)RTOPK_SORT_RANK_MAX), sl, hmask);
      }
      const unsigned nout = cnt < kcap ? cnt : kcap; /* wide: the first k of the sorted entries */
      for (unsigned e = (unsigned)sl; e < nout; e += L)
        rtopk_emit<KeyT>(P, x, src, obase, e, stage[e].key(), (int)stage[e].pos());
    }
    if (wide) nsel = kcap; /* count(key >= lo) >= k: every slot is written */

    /* ---- rows shorter than k: index -1 and the worst value */
    for (int64_t s = (int64_t)nsel + sl; s < k; s += L) rtopk_emit_empty<KeyT>(P, obase, s);
    __syncwarp(hmask); /* the next row reuses the shared-memory slices */
  }
}

#endif /* TOPK_CUDA_RTOPK_KERNELS_CUH */
