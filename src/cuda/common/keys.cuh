/*
 * keys.cuh: the device side of the order-preserving key transforms.
 *
 * The bit logic lives once, in src/common/keys.h (plain C, __host__ __device__
 * under nvcc). This header only adds what CUDA code needs on top of it:
 *
 *   topk_dtype_traits<DT>   the bit container of an element (raw_t: what is loaded
 *                           and stored, so values move bit-exactly, NaN payloads
 *                           and -0.0 included) and its key type (key_t: uint16/32/64)
 *   topk_to_rank_key<DT>    raw bits -> key where larger is better in the requested
 *                           direction (keys.h's topk_rank_key with the dtype fixed at
 *                           compile time, so its switches fold away)
 *   topk_to_rank_key_nan_open<DT>  the rank key without NaN canonicalisation (NaNs
 *                           fall outside [topk_rank_key_lo, topk_rank_key_hi])
 *   topk_from_rank_key<DT>  a rank key back to its raw bits (every key but the NaN key)
 *   topk_raw_of_key<DT>     the same, the NaN key's raw bits read from the row
 *   topk_vec_elems<RawT>    calls f(element, t) for the elements of a 16-byte vector
 *   topk_key_floor<DT>      a cheap superset test of "rank key >= thr" on raw elements
 *                           (a float compare), for scans against a running threshold
 *   topk_to_sort_key<DT>    raw bits -> key where SMALLER is better: the complement
 *                           of the rank key, for ascending sorts that put the best first
 *   TOPK_DISPATCH_DTYPE     a runtime dtype -> compile-time DT switch, written once
 *
 * Kernels should be templated on key_t (3 widths), not on the dtype (8), wherever
 * the dtype only matters when loading: transform at the load, then work on keys.
 */
#ifndef TOPK_CUDA_COMMON_KEYS_CUH
#define TOPK_CUDA_COMMON_KEYS_CUH

#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../../common/keys.h"

/* Bit container and key type of each dtype. The key has the width of the element. */
template <topk_dtype DT> struct topk_dtype_traits;
#define TOPK_DTYPE_TRAITS_(DT, RAW)                                                  \
  template <> struct topk_dtype_traits<DT> {                                        \
    typedef RAW raw_t;                                                               \
    typedef RAW key_t;                                                               \
    static constexpr int bits = (int)(sizeof(RAW) * 8);                              \
  };
TOPK_DTYPE_TRAITS_(TOPK_F16, uint16_t)
TOPK_DTYPE_TRAITS_(TOPK_BF16, uint16_t)
TOPK_DTYPE_TRAITS_(TOPK_F32, uint32_t)
TOPK_DTYPE_TRAITS_(TOPK_I32, uint32_t)
TOPK_DTYPE_TRAITS_(TOPK_U32, uint32_t)
TOPK_DTYPE_TRAITS_(TOPK_F64, uint64_t)
TOPK_DTYPE_TRAITS_(TOPK_I64, uint64_t)
TOPK_DTYPE_TRAITS_(TOPK_U64, uint64_t)
#undef TOPK_DTYPE_TRAITS_

/* Unsigned integer type of a key width in bits (16, 32, 64). */
template <int BITS> struct topk_key_of_width;
template <> struct topk_key_of_width<16> { typedef uint16_t type; };
template <> struct topk_key_of_width<32> { typedef uint32_t type; };
template <> struct topk_key_of_width<64> { typedef uint64_t type; };

/* Larger is better: "largest" keeps the key, "smallest" complements it (keys.h). */
template <topk_dtype DT>
__host__ __device__ __forceinline__ typename topk_dtype_traits<DT>::key_t
topk_to_rank_key(typename topk_dtype_traits<DT>::raw_t raw, bool smallest) {
  return (typename topk_dtype_traits<DT>::key_t)topk_rank_key((uint64_t)raw, DT, smallest ? 1 : 0);
}

/*
 * The rank key without NaN canonicalisation, for scans that test for NaN once per
 * block of elements instead of once per element: equal to topk_to_rank_key for every
 * value but NaN (two instructions for f32 instead of five), while a NaN's key lands
 * outside [topk_rank_key_lo<DT>(), topk_rank_key_hi<DT>()], the keys of -inf and
 * +inf, whichever the direction (the range is symmetric under ~). Integers: the rank key.
 */
template <topk_dtype DT>
__host__ __device__ __forceinline__ typename topk_dtype_traits<DT>::key_t
topk_to_rank_key_nan_open(typename topk_dtype_traits<DT>::raw_t raw, bool smallest) {
  typedef typename topk_dtype_traits<DT>::key_t K;
  if constexpr (DT == TOPK_F16 || DT == TOPK_BF16 || DT == TOPK_F32 || DT == TOPK_F64) {
    constexpr int W = topk_dtype_traits<DT>::bits;
    typedef typename topk_key_of_width<W>::type U;
    const U sign = (U)1 << (W - 1);
    const U s = (raw & sign) ? (U)~(U)0 : (U)0; /* sign-extended: one shift */
    const U u = (U)(raw ^ (U)(s | sign));
    return (K)(smallest ? (U)~u : u);
  } else {
    return topk_to_rank_key<DT>(raw, smallest);
  }
}
template <topk_dtype DT>
__host__ __device__ __forceinline__ constexpr typename topk_dtype_traits<DT>::key_t topk_rank_key_hi() {
  typedef typename topk_dtype_traits<DT>::key_t K;
  return DT == TOPK_F16 ? (K)0xFC00u : DT == TOPK_BF16 ? (K)0xFF80u : DT == TOPK_F32 ? (K)0xFF800000u
       : DT == TOPK_F64 ? (K)0xFFF0000000000000ull : (K)~(K)0;
}
template <topk_dtype DT>
__host__ __device__ __forceinline__ constexpr typename topk_dtype_traits<DT>::key_t topk_rank_key_lo() {
  typedef typename topk_dtype_traits<DT>::key_t K;
  return (DT == TOPK_F16 || DT == TOPK_BF16 || DT == TOPK_F32 || DT == TOPK_F64) ? (K)~topk_rank_key_hi<DT>() : (K)0;
}

/*
 * The raw bits of a rank key (topk_to_rank_key's inverse), for every key but the NaN
 * rank key, which has no single bit pattern (a NaN-open key outside
 * [topk_rank_key_lo, topk_rank_key_hi] tells a NaN was there).
 */
template <topk_dtype DT>
__host__ __device__ __forceinline__ typename topk_dtype_traits<DT>::raw_t
topk_from_rank_key(typename topk_dtype_traits<DT>::key_t key, bool smallest) {
  const uint64_t k = smallest ? (~(uint64_t)key & topk_key_mask(DT)) : (uint64_t)key;
  return (typename topk_dtype_traits<DT>::raw_t)topk_bits_of_key(k, DT);
}

/*
 * The raw element of a rank key taken from row[idx]: rebuilt from the key (no global read),
 * but for the NaN key, whose payload only the row keeps.
 */
template <topk_dtype DT>
__device__ __forceinline__ typename topk_dtype_traits<DT>::raw_t
topk_raw_of_key(typename topk_dtype_traits<DT>::key_t key, bool smallest,
                const typename topk_dtype_traits<DT>::raw_t* row, unsigned long long idx) {
  if constexpr (DT == TOPK_F16 || DT == TOPK_BF16 || DT == TOPK_F32 || DT == TOPK_F64)
    if (key > topk_rank_key_hi<DT>() || key < topk_rank_key_lo<DT>()) return row[idx];
  return topk_from_rank_key<DT>(key, smallest);
}

/* The type topk_key_floor compares in: the value's own (floats widened to float). */
template <topk_dtype DT> struct topk_key_floor_value { typedef float type; };
template <> struct topk_key_floor_value<TOPK_F64> { typedef double type; };
template <> struct topk_key_floor_value<TOPK_I32> { typedef int32_t type; };
template <> struct topk_key_floor_value<TOPK_U32> { typedef uint32_t type; };
template <> struct topk_key_floor_value<TOPK_I64> { typedef int64_t type; };
template <> struct topk_key_floor_value<TOPK_U64> { typedef uint64_t type; };

/* Calls f(element, t) for the elements t of a 16-byte vector, in order. */
template <typename RawT, typename F>
__device__ __forceinline__ void topk_vec_elems(const uint4& q, F&& f) {
  constexpr int V = 16 / (int)sizeof(RawT);
  union {
    uint4 q;
    RawT e[V];
  } w;
  w.q = q;
#pragma unroll
  for (int t = 0; t < V; ++t) f(w.e[t], t);
}

/*
 * A superset test of "rank key >= thr" on raw elements, for scans that reject most of them
 * against a running threshold: the element's value is compared with the value of thr's key
 * (f32: one FSETP, where the rank key with NaN canonicalisation costs five instructions;
 * 16-bit floats widen first). It never rejects an element whose rank key is >= thr. For
 * floats NaNs always pass and -0 compares equal to +0, so a few elements below thr may pass
 * too: callers test those exactly (flushing subnormals to zero keeps it safe: the flush is
 * monotone), except where `exact` says no element can. For integers it is exact.
 */
template <topk_dtype DT> struct topk_key_floor {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  typedef typename topk_key_floor_value<DT>::type ValT;
  static constexpr bool is_float = DT == TOPK_F16 || DT == TOPK_BF16 || DT == TOPK_F32 || DT == TOPK_F64;
  ValT t;      /* elements whose value is below t (above t, smallest) fail */
  unsigned t2; /* 16-bit floats: t's own bits in both halves, for packed compares */
  bool smallest;
  /* 16-bit floats: pass_bits is exactly "rank key >= thr". So for the largest when thr is at
   * most +inf's key and t is a normal number or -inf: NaNs pass both tests; a zero t would let -0
   * (keyed below +0) pass the value compare, and a subnormal one would not survive a compare
   * that flushes. (Not for the smallest: NaNs, the worst there, pass the unordered compare.) */
  bool exact;

  static __device__ __forceinline__ ValT value(RawT raw) {
    if constexpr (DT == TOPK_F64) return __longlong_as_double((long long)raw);
    else if constexpr (DT == TOPK_F32) return __uint_as_float((unsigned)raw);
    else if constexpr (DT == TOPK_BF16) return __uint_as_float((unsigned)raw << 16);
    else if constexpr (DT == TOPK_F16) return __half2float(__ushort_as_half((unsigned short)raw));
    else return (ValT)raw;
  }
  static __device__ __forceinline__ topk_key_floor make(KeyT thr, bool smallest) {
    topk_key_floor f;
    f.smallest = smallest;
    if constexpr (is_float) {
      const ValT inf = (ValT)INFINITY;
      /* keys above the best infinity's (or below the worst's) are NaN bit patterns */
      if (thr > topk_rank_key_hi<DT>()) f.t = smallest ? -inf : inf;
      else if (thr < topk_rank_key_lo<DT>()) f.t = smallest ? inf : -inf;
      else f.t = value(topk_from_rank_key<DT>(thr, smallest));
    } else {
      f.t = value(topk_from_rank_key<DT>(thr, smallest));
    }
    if constexpr (DT == TOPK_BF16) { /* t is a bf16 value or an infinity: exact */
      const unsigned b = __bfloat16_as_ushort(__float2bfloat16_rn(f.t));
      f.t2 = b | b << 16;
    } else if constexpr (DT == TOPK_F16) {
      const unsigned b = __half_as_ushort(__float2half_rn(f.t));
      f.t2 = b | b << 16;
    }
    f.exact = false;
    if constexpr (DT == TOPK_BF16 || DT == TOPK_F16) {
      const float min_normal = DT == TOPK_F16 ? 6.103515625e-05f : 1.17549435e-38f;
      f.exact = !smallest && thr <= topk_rank_key_hi<DT>() && fabsf(f.t) >= min_normal;
    }
    return f;
  }
  /* Whether any element of a 16-byte vector may pass (the direction tested once). */
  __device__ __forceinline__ bool may_pass_any(const uint4& q) const {
    bool any = false;
    if (smallest) topk_vec_elems<RawT>(q, [&](RawT e, int) { any |= !(value(e) > t); });
    else topk_vec_elems<RawT>(q, [&](RawT e, int) { any |= !(value(e) < t); });
    return any;
  }
  /* 16-bit floats: where the elements of a 16-byte vector may pass: bit i for element 2i (the
   * low half of word i) and bit 16 + i for element 2i + 1, so a caller can put the masks of up to
   * four vectors in one word (vector u shifted by 4u). Three instructions a word. */
  __device__ __forceinline__ unsigned pass_bits(const uint4& q) const {
    static_assert(DT == TOPK_BF16 || DT == TOPK_F16, "pass_bits: 16-bit floats");
    /* two elements a compare: the unordered compares pass NaNs as the float ones do */
    const unsigned wv[4] = {q.x, q.y, q.z, q.w};
    unsigned m = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      unsigned r;
      if constexpr (DT == TOPK_BF16) {
        const __nv_bfloat162 a = *(const __nv_bfloat162*)&wv[i], b = *(const __nv_bfloat162*)&t2;
        r = smallest ? __hleu2_mask(a, b) : __hgeu2_mask(a, b);
      } else {
        const __half2 a = *(const __half2*)&wv[i], b = *(const __half2*)&t2;
        r = smallest ? __hleu2_mask(a, b) : __hgeu2_mask(a, b);
      }
      m |= (r & 0x10001u) << i;
    }
    return m;
  }
};

/*
 * Smaller is better: the complement of the rank key, which is the rank key of the
 * opposite direction. An ascending (stable) sort of these keys lists the best
 * element first; all NaNs share one key, so they tie and keep index order.
 */
template <topk_dtype DT>
__host__ __device__ __forceinline__ typename topk_dtype_traits<DT>::key_t
topk_to_sort_key(typename topk_dtype_traits<DT>::raw_t raw, bool smallest) {
  return topk_to_rank_key<DT>(raw, !smallest);
}

/*
 * Runs the statements after ON_UNKNOWN with a constexpr `DT` naming the runtime
 * dtype `dtype` (variadic, so they may contain commas); ON_UNKNOWN runs for an
 * unknown value (api.c has validated the dtype, so that is an internal error):
 *   TOPK_DISPATCH_DTYPE(p->dtype, DT, return bad_dtype(), s = launch<DT, uint32_t>(a));
 */
#define TOPK_DISPATCH_DTYPE_CASE_(NAME, DT, ...) \
  case NAME: {                                  \
    constexpr topk_dtype DT = NAME;             \
    __VA_ARGS__;                                \
  } break;
#define TOPK_DISPATCH_DTYPE(dtype, DT, ON_UNKNOWN, ...)        \
  switch (dtype) {                                             \
    TOPK_DISPATCH_DTYPE_CASE_(TOPK_F32, DT, __VA_ARGS__)       \
    TOPK_DISPATCH_DTYPE_CASE_(TOPK_F16, DT, __VA_ARGS__)       \
    TOPK_DISPATCH_DTYPE_CASE_(TOPK_BF16, DT, __VA_ARGS__)      \
    TOPK_DISPATCH_DTYPE_CASE_(TOPK_F64, DT, __VA_ARGS__)       \
    TOPK_DISPATCH_DTYPE_CASE_(TOPK_I32, DT, __VA_ARGS__)       \
    TOPK_DISPATCH_DTYPE_CASE_(TOPK_U32, DT, __VA_ARGS__)       \
    TOPK_DISPATCH_DTYPE_CASE_(TOPK_I64, DT, __VA_ARGS__)       \
    TOPK_DISPATCH_DTYPE_CASE_(TOPK_U64, DT, __VA_ARGS__)       \
    default: { ON_UNKNOWN; } break;                            \
  }

#endif /* TOPK_CUDA_COMMON_KEYS_CUH */
