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
 *   topk_to_sort_key<DT>    raw bits -> key where SMALLER is better: the complement
 *                           of the rank key, for ascending sorts that put the best first
 *   TOPK_DISPATCH_DTYPE     a runtime dtype -> compile-time DT switch, written once
 *
 * Kernels should be templated on key_t (3 widths), not on the dtype (8), wherever
 * the dtype only matters when loading: transform at the load, then work on keys.
 */
#ifndef TOPK_CUDA_COMMON_KEYS_CUH
#define TOPK_CUDA_COMMON_KEYS_CUH

#include <stdint.h>

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
