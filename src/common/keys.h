/*
 * keys.h: order-preserving key transforms for every dtype, in one place.
 *
 * Every algorithm compares unsigned integer keys instead of values. A key has the
 * width of its dtype (16, 32 or 64 bits) and orders exactly as DESIGN.md says:
 *   -inf < ... < -0.0 < +0.0 < ... < +inf < NaN   (floats; every NaN is one key, the largest)
 *   signed integers: sign bit flipped;  unsigned: unchanged.
 * "Best" keys are the largest: for TOPK_SMALLEST the key is complemented (~key),
 * so each algorithm only ever looks for the largest keys (RAFT's twiddle_in, CUB's Traits).
 *
 * Plain C, usable from host C code and, through src/cuda/common/keys.cuh, from CUDA.
 */
#ifndef TOPK_COMMON_KEYS_H
#define TOPK_COMMON_KEYS_H

#include <stdint.h>
#include <string.h>
#include "topk.h"

#if defined(__CUDACC__)
#  define TOPK_HD static inline __host__ __device__
#else
#  define TOPK_HD static inline
#endif

/* Floats: sign-magnitude to two's-complement order; all NaNs to the largest key. */
TOPK_HD uint16_t topk_key_f16(uint16_t b) {
  if ((b & 0x7FFFu) > 0x7C00u) return 0xFFFFu;
  return (b & 0x8000u) ? (uint16_t)~b : (uint16_t)(b | 0x8000u);
}
TOPK_HD uint16_t topk_key_bf16(uint16_t b) {
  if ((b & 0x7FFFu) > 0x7F80u) return 0xFFFFu;
  return (b & 0x8000u) ? (uint16_t)~b : (uint16_t)(b | 0x8000u);
}
TOPK_HD uint32_t topk_key_f32(uint32_t b) {
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFu;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
TOPK_HD uint64_t topk_key_f64(uint64_t b) {
  if ((b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) return 0xFFFFFFFFFFFFFFFFull;
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
TOPK_HD uint32_t topk_key_i32(uint32_t b) { return b ^ 0x80000000u; }
TOPK_HD uint32_t topk_key_u32(uint32_t b) { return b; }
TOPK_HD uint64_t topk_key_i64(uint64_t b) { return b ^ 0x8000000000000000ull; }
TOPK_HD uint64_t topk_key_u64(uint64_t b) { return b; }

/* Key width in bits for a dtype (16, 32 or 64); 0 if unknown. */
TOPK_HD int topk_key_bits(topk_dtype dt) {
  switch (dt) {
    case TOPK_F16: case TOPK_BF16: return 16;
    case TOPK_F32: case TOPK_I32: case TOPK_U32: return 32;
    case TOPK_F64: case TOPK_I64: case TOPK_U64: return 64;
  }
  return 0;
}

/* The raw bits of element i, zero-extended to 64 bits. */
TOPK_HD uint64_t topk_load_bits(const void* base, int64_t i, topk_dtype dt) {
  switch (topk_key_bits(dt)) {
    case 16: return ((const uint16_t*)base)[i];
    case 32: return ((const uint32_t*)base)[i];
    default: return ((const uint64_t*)base)[i];
  }
}

/* Order-preserving key of raw bits, zero-extended to 64 bits (order holds within a dtype). */
TOPK_HD uint64_t topk_key_of_bits(uint64_t b, topk_dtype dt) {
  switch (dt) {
    case TOPK_F16:  return topk_key_f16((uint16_t)b);
    case TOPK_BF16: return topk_key_bf16((uint16_t)b);
    case TOPK_F32:  return topk_key_f32((uint32_t)b);
    case TOPK_F64:  return topk_key_f64(b);
    case TOPK_I32:  return topk_key_i32((uint32_t)b);
    case TOPK_U32:  return topk_key_u32((uint32_t)b);
    case TOPK_I64:  return topk_key_i64(b);
    case TOPK_U64:  return topk_key_u64(b);
  }
  return 0;
}

/* The key mask of a dtype: all ones in its width. */
TOPK_HD uint64_t topk_key_mask(topk_dtype dt) {
  int bits = topk_key_bits(dt);
  return bits == 64 ? ~0ull : ((1ull << bits) - 1ull);
}

/* "Goodness" key: larger is better in the requested direction. */
TOPK_HD uint64_t topk_rank_key(uint64_t bits, topk_dtype dt, int smallest) {
  uint64_t k = topk_key_of_bits(bits, dt);
  return smallest ? (~k & topk_key_mask(dt)) : k;
}

/*
 * The raw bits of a key: topk_key_of_bits's inverse. Every key but a float's NaN key
 * (all ones, shared by every NaN) comes from exactly one bit pattern.
 */
TOPK_HD uint64_t topk_bits_of_key(uint64_t k, topk_dtype dt) {
  switch (dt) {
    case TOPK_F16:
    case TOPK_BF16: return (k & 0x8000u) ? (k ^ 0x8000u) : (~k & 0xFFFFu);
    case TOPK_F32:  return (k & 0x80000000u) ? (k ^ 0x80000000u) : (~k & 0xFFFFFFFFu);
    case TOPK_F64:  return (k >> 63) ? (k ^ 0x8000000000000000ull) : ~k;
    case TOPK_I32:  return k ^ 0x80000000u;
    case TOPK_I64:  return k ^ 0x8000000000000000ull;
    case TOPK_U32:
    case TOPK_U64:  return k;
  }
  return 0;
}

/*
 * Raw bits of the worst value in a direction, written to padded slots of rows
 * shorter than k: largest -> -inf / INT_MIN / 0; smallest -> NaN / INT_MAX / UINT_MAX.
 */
TOPK_HD uint64_t topk_worst_value_bits(topk_dtype dt, int smallest) {
  switch (dt) {
    case TOPK_F16:  return smallest ? 0x7E00u : 0xFC00u;
    case TOPK_BF16: return smallest ? 0x7FC0u : 0xFF80u;
    case TOPK_F32:  return smallest ? 0x7FC00000u : 0xFF800000u;
    case TOPK_F64:  return smallest ? 0x7FF8000000000000ull : 0xFFF0000000000000ull;
    case TOPK_I32:  return smallest ? 0x7FFFFFFFu : 0x80000000u;
    case TOPK_U32:  return smallest ? 0xFFFFFFFFu : 0u;
    case TOPK_I64:  return smallest ? 0x7FFFFFFFFFFFFFFFull : 0x8000000000000000ull;
    case TOPK_U64:  return smallest ? 0xFFFFFFFFFFFFFFFFull : 0ull;
  }
  return 0;
}

/* Stores the low bytes of raw bits as element i of an array of dtype dt. */
TOPK_HD void topk_store_bits(void* base, int64_t i, topk_dtype dt, uint64_t b) {
  switch (topk_key_bits(dt)) {
    case 16: ((uint16_t*)base)[i] = (uint16_t)b; break;
    case 32: ((uint32_t*)base)[i] = (uint32_t)b; break;
    default: ((uint64_t*)base)[i] = b; break;
  }
}

#endif /* TOPK_COMMON_KEYS_H */
