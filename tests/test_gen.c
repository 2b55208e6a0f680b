/* test_gen.c: the input generators do what gen.h promises (tests and benchmarks rely on them). */
#include <math.h>
#include <stdlib.h>

#include "common/keys.h"
#include "gen.h"
#include "harness.h"
#include "topk.h"

static const topk_dtype all_dtypes[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                        TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};

TEST(names_round_trip) {
  for (int d = 0; d < GEN_DIST_COUNT; ++d) {
    gen_dist back;
    ASSERT_EQ_I64(gen_dist_parse(gen_dist_name((gen_dist)d), &back), 0);
    ASSERT_EQ_I64(back, d);
  }
  gen_dist x;
  ASSERT_EQ_I64(gen_dist_parse("no-such", &x), -1);
  return TEST_OK;
}

TEST(reproducible_from_seed) {
  enum { N = 4096 };
  static uint64_t a[N], b[N], c[N];
  for (int d = 0; d < GEN_DIST_COUNT; ++d) {
    gen_opts o = {.dist = (gen_dist)d, .seed = test_seed(), .nan_fraction = 0.01};
    ASSERT_EQ_I64(gen_fill(a, TOPK_F64, N, &o), 0);
    ASSERT_EQ_I64(gen_fill(b, TOPK_F64, N, &o), 0);
    ASSERT_TRUE(memcmp(a, b, sizeof a) == 0);
  }
  gen_opts o1 = {.dist = GEN_UNIFORM, .seed = 1}, o2 = {.dist = GEN_UNIFORM, .seed = 2};
  gen_fill(a, TOPK_U64, N, &o1);
  gen_fill(c, TOPK_U64, N, &o2);
  ASSERT_TRUE(memcmp(a, c, sizeof a) != 0);
  return TEST_OK;
}

TEST(radix_adversarial_shares_leading_bits) {
  enum { N = 2048 };
  static uint64_t buf[N];
  for (size_t t = 0; t < sizeof all_dtypes / sizeof all_dtypes[0]; ++t) {
    topk_dtype dt = all_dtypes[t];
    int w = topk_key_bits(dt);
    int eq = w == 16 ? 8 : 20;
    gen_opts o = {.dist = GEN_RADIX_ADVERSARIAL, .seed = test_seed(), .equal_bits = eq};
    gen_fill(buf, dt, N, &o);
    uint64_t first = topk_key_of_bits(topk_load_bits(buf, 0, dt), dt) >> (w - eq);
    int differs_low = 0;
    for (int i = 1; i < N; ++i) {
      uint64_t key = topk_key_of_bits(topk_load_bits(buf, i, dt), dt);
      ASSERT_EQ_U64(key >> (w - eq), first);
      differs_low |= key != topk_key_of_bits(topk_load_bits(buf, 0, dt), dt);
    }
    ASSERT_TRUE(differs_low);
  }
  return TEST_OK;
}

TEST(sorted_rows_and_all_equal) {
  enum { N = 1000, ROW = 100 };
  static double v[N];
  gen_opts o = {.dist = GEN_SORTED_ASC, .row_length = ROW};
  gen_fill(v, TOPK_F64, N, &o);
  for (int i = 0; i < N; ++i)
    if (i % ROW) ASSERT_TRUE(v[i] > v[i - 1]);
  o.dist = GEN_SORTED_DESC;
  gen_fill(v, TOPK_F64, N, &o);
  for (int i = 0; i < N; ++i)
    if (i % ROW) ASSERT_TRUE(v[i] < v[i - 1]);
  static int32_t e[N];
  o.dist = GEN_ALL_EQUAL;
  gen_fill(e, TOPK_I32, N, &o);
  for (int i = 0; i < N; ++i) ASSERT_EQ_I64(e[i], 1);
  return TEST_OK;
}

/* step_length: plateaus 16 apart within each row (uniform values in [16 s, 16 s + 1)), restarting each row */
TEST(step_plateaus) {
  enum { N = 1000, ROW = 500, STEP = 100 };
  static float v[N];
  gen_opts o = {.dist = GEN_UNIFORM, .row_length = ROW, .step_length = STEP};
  gen_fill(v, TOPK_F32, N, &o);
  for (int i = 0; i < N; ++i) {
    const double lo = 16.0 * (double)((i % ROW) / STEP);
    ASSERT_TRUE(v[i] >= lo && v[i] < lo + 1.0);
  }
  o.step_length = 0;
  gen_fill(v, TOPK_F32, N, &o);
  for (int i = 0; i < N; ++i) ASSERT_TRUE(v[i] >= 0.0f && v[i] < 1.0f);
  return TEST_OK;
}

TEST(nan_and_inf_fractions) {
  enum { N = 100000 };
  static float f[N];
  gen_opts o = {.dist = GEN_NORMAL, .seed = test_seed(), .nan_fraction = 0.1, .inf_fraction = 0.05};
  gen_fill(f, TOPK_F32, N, &o);
  int nans = 0, infs = 0;
  for (int i = 0; i < N; ++i) { nans += isnan(f[i]) != 0; infs += isinf(f[i]) != 0; }
  ASSERT_TRUE(nans > 9000 && nans < 11000);
  ASSERT_TRUE(infs > 4000 && infs < 6000);
  return TEST_OK;
}

TEST(half_conversions) {
  const float exact[] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 0x1p-24f, 0x1p-14f, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; ++i) {
    ASSERT_TRUE(gen_f16_to_f32(gen_f32_to_f16(exact[i])) == exact[i]);
    ASSERT_TRUE(signbit(gen_f16_to_f32(gen_f32_to_f16(exact[i]))) == signbit(exact[i]));
  }
  ASSERT_EQ_U64(gen_f32_to_f16(1.0f), 0x3C00);
  ASSERT_EQ_U64(gen_f32_to_f16(1e6f), 0x7C00);       /* overflow rounds to inf */
  ASSERT_EQ_U64(gen_f32_to_f16(1.0f + 0x1p-11f), 0x3C00); /* tie rounds to even */
  ASSERT_TRUE(isnan(gen_f16_to_f32(gen_f32_to_f16(NAN))));
  ASSERT_EQ_U64(gen_f32_to_bf16(1.0f), 0x3F80);
  ASSERT_TRUE(gen_bf16_to_f32(gen_f32_to_bf16(-3.0f)) == -3.0f);
  ASSERT_TRUE(isnan(gen_bf16_to_f32(gen_f32_to_bf16(NAN))));
  return TEST_OK;
}

TEST(key_order) {
  /* The order of DESIGN.md on f32: -inf < -1 < -0 < +0 < 1 < inf < NaN (both NaN signs). */
  const float v[] = {-INFINITY, -1.0f, -0.0f, 0.0f, 1.0f, INFINITY, NAN};
  for (size_t i = 1; i < sizeof v / sizeof v[0]; ++i) {
    uint32_t a, b;
    memcpy(&a, &v[i - 1], 4);
    memcpy(&b, &v[i], 4);
    ASSERT_TRUE(topk_key_f32(a) < topk_key_f32(b));
  }
  float neg_nan = -NAN;
  uint32_t nb;
  memcpy(&nb, &neg_nan, 4);
  ASSERT_EQ_U64(topk_key_f32(nb), 0xFFFFFFFFu);
  ASSERT_TRUE(topk_key_i32(0x80000000u) < topk_key_i32(0xFFFFFFFFu)); /* INT_MIN < -1 */
  ASSERT_TRUE(topk_key_i32(0xFFFFFFFFu) < topk_key_i32(0u));          /* -1 < 0 */
  ASSERT_TRUE(topk_key_f16(0x8000u) < topk_key_f16(0x0000u));         /* -0 < +0 */
  ASSERT_TRUE(topk_key_bf16(0xFF80u) < topk_key_bf16(0xBF80u));       /* -inf < -1 */
  ASSERT_EQ_U64(topk_key_bf16(0xFFC1u), 0xFFFFu);                     /* -NaN is the largest */
  ASSERT_TRUE(topk_key_f64(0x8000000000000000ull) < topk_key_f64(0));
  return TEST_OK;
}

#define LIST(X) X(names_round_trip) X(reproducible_from_seed) X(radix_adversarial_shares_leading_bits) \
  X(sorted_rows_and_all_equal) X(step_plateaus) X(nan_and_inf_fractions) X(half_conversions) X(key_order)
TEST_MAIN(LIST)
