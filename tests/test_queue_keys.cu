/*
 * test_queue_keys.cu: the key transform of the queue selects (topk_dq_rank_key with
 * the parameters of qs_key_params, src/cuda/queue_select/queue_select.h) against
 * src/common/keys.h, for every dtype and direction: specials (+-0, +-inf, NaNs with
 * any sign and payload, extremes) and 10^5 random bit patterns. Host code only (the
 * transform is __host__ __device__), so it runs without a device: label cpu.
 */
#include <stdint.h>
#include <stdio.h>

#include "common/keys.h"
#include "cuda/queue_select/queue_select.h"
#include "harness.h"

static const topk_dtype helper_dtypes[8] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                            TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};

static uint64_t rng_state;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* The library's parameterised transform (queue_select.h) against keys.h, on the host: needs no device. */
TEST(key_params) {
  static const uint64_t specials[] = {0x0ull, 0x8000ull, 0x7C00ull, 0xFC00ull, 0x7E00ull, 0xFE01ull, 0x7F80ull,
                                      0xFF80ull, 0x7FC0ull, 0xFFC1ull, 0x7F800000ull, 0xFF800000ull, 0x7FC00000ull,
                                      0xFFC00001ull, 0x80000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                      0x7FF8000000000000ull, 0xFFF8000000000001ull, 0x8000000000000000ull,
                                      0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0x1ull};
  const int ns = (int)(sizeof specials / sizeof specials[0]);
  rng_state = test_seed() * 11 + 3;
  for (int i = 0; i < ns + 100000; ++i) {
    const uint64_t raw = i < ns ? specials[i] : rng();
    for (int t = 0; t < 8; ++t)
      for (int s = 0; s < 2; ++s) {
        const topk_dtype dt = helper_dtypes[t];
        const uint64_t b = raw & topk_key_mask(dt);
        const topk_dq_key_params kp = qs_key_params(dt, s);
        uint64_t lib;
        switch (topk_key_bits(dt)) {
          case 16: lib = topk_dq_rank_key<uint16_t>((uint16_t)b, kp); break;
          case 32: lib = topk_dq_rank_key<uint32_t>((uint32_t)b, kp); break;
          default: lib = topk_dq_rank_key<uint64_t>(b, kp); break;
        }
        if (lib != topk_rank_key(b, dt, s))
          TEST_FAILED_("%s smallest=%d bits 0x%llx: 0x%llx, want 0x%llx\n", topk_dtype_name(dt), s,
                       (unsigned long long)b, (unsigned long long)lib,
                       (unsigned long long)topk_rank_key(b, dt, s));
      }
  }
  return TEST_OK;
}

#define TEST_LIST(X) X(key_params)
TEST_MAIN(TEST_LIST)
