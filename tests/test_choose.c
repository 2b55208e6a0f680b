/*
 * test_choose.c: every problem on a grid that spans AUTO's rules (src/choose.c) gets an
 * algorithm that supports it (issue "TOPK_ALGO_AUTO", item 6), on an H100's description.
 * Only supports() runs: it is host code, so this needs no device. The grid crosses every
 * rule's boundaries: dtypes of each key width, batch 1..2^20, row lengths 1..2^30, k from 1
 * to the row length, sorted or not, both directions, offsets, max_iter.
 * Skips (77) in builds without the CUDA backend (AUTO is then cpu_select, which takes all).
 */
#include <stdio.h>

#include "algo.h"
#include "harness.h"
#include "topk.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

TEST(every_choice_supports_its_problem) {
  if (!topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_AIR_RADIX)) return TEST_SKIP;
  const topk_device_info h100 = {.ordinal = 0, .cc_major = 9, .cc_minor = 0, .sm_count = 132,
                                 .max_threads_per_sm = 2048, .l2_bytes = 50 << 20,
                                 .smem_per_block_optin = 227 << 10};
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_F16, TOPK_F64, TOPK_I32, TOPK_U64};
  static const int64_t batches[] = {1, 7, 8, 9, 100, 132, 133, 4096, 10000, 1 << 16, 1 << 20};
  static const int64_t ns[] = {1,      64,     100,    1000,   1024,   4096,   4097,   32000,
                               128000, 128001, 128255, 128256, 151936, 151937, 262144, 262145,
                               1 << 20, (int64_t)1 << 24, (int64_t)1 << 26, (int64_t)1 << 29, (int64_t)1 << 30};
  static const int64_t ks[] = {1, 8, 100, 128, 129, 1000, 1001, 2048, 2049, 4096, 4097, 1 << 15, (1 << 15) + 1,
                               1 << 18, (1 << 18) + 1, 1 << 20, (1 << 20) + 1};
  static const int64_t offsets_stub[2] = {0, 0}; /* never read: supports() sees only "has offsets" */
  static const unsigned flag_sets[] = {0u, TOPK_SORTED, TOPK_SMALLEST | TOPK_NONDETERMINISTIC};
  static const int max_iters[] = {0, 5};
  int64_t checked = 0;
  for (int d = 0; d < COUNT(dts); ++d)
    for (int b = 0; b < COUNT(batches); ++b)
      for (int ni = 0; ni < COUNT(ns); ++ni)
        for (int ki = 0; ki <= COUNT(ks); ++ki)
          for (int f = 0; f < COUNT(flag_sets); ++f)
            for (int m = 0; m < COUNT(max_iters); ++m)
              for (int off = 0; off < 2; ++off) {
                const int64_t n = ns[ni], k = ki < COUNT(ks) ? ks[ki] : n;
                if (k > n) continue;
                topk_problem p = {.dtype = dts[d],
                                  .batch = batches[b],
                                  .n = n,
                                  .k = k,
                                  .ld = off ? 0 : n,
                                  .row_offsets = off ? offsets_stub : NULL,
                                  .flags = flag_sets[f],
                                  .max_iter = max_iters[m],
                                  .backend = TOPK_BACKEND_CUDA};
                const topk_algo_ops* ops = topk_choose(&p, TOPK_BACKEND_CUDA, &h100);
                char why[256] = "";
                if (!ops || !ops->supports(&p, &h100, why, sizeof why)) {
                  fprintf(stderr, "%s batch=%lld n=%lld k=%lld flags=%u max_iter=%d offsets=%d: %s (%s)\n",
                          topk_dtype_name(p.dtype), (long long)p.batch, (long long)p.n, (long long)p.k, p.flags,
                          (int)p.max_iter, off, ops ? ops->name : "no algorithm", why);
                  ASSERT_TRUE(ops && ops->supports(&p, &h100, why, sizeof why));
                }
                ++checked;
              }
  ASSERT_TRUE(checked > 10000);
  return TEST_OK;
}

/* The rules pick what their measurements say, at a point inside each measured range. */
TEST(rules_pick_the_measured_winner) {
  if (!topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_AIR_RADIX)) return TEST_SKIP;
  const topk_device_info h100 = {.cc_major = 9, .sm_count = 132, .smem_per_block_optin = 227 << 10};
  struct { topk_problem p; topk_algo want; } cases[] = {
      {{.batch = 1, .n = (int64_t)1 << 28, .k = 1024}, TOPK_ALGO_DRTOPK_RADIX},
      {{.batch = 1, .n = (int64_t)1 << 30, .k = (int64_t)1 << 20}, TOPK_ALGO_DRTOPK_RADIX},
      {{.batch = 1, .n = (int64_t)1 << 27, .k = (int64_t)1 << 18}, TOPK_ALGO_DRTOPK_RADIX},
      {{.batch = 1, .n = (int64_t)1 << 27, .k = (int64_t)1 << 20}, TOPK_ALGO_AIR_RADIX},
      {{.batch = 1, .n = (int64_t)1 << 24, .k = (int64_t)1 << 16}, TOPK_ALGO_AIR_RADIX},
      {{.batch = 1 << 18, .n = 768, .k = 128}, TOPK_ALGO_RTOPK},
      {{.batch = 65536, .n = 256, .k = 8, .flags = TOPK_SORTED}, TOPK_ALGO_RTOPK},
      {{.batch = 10000, .n = 128000, .k = 100, .flags = TOPK_SMALLEST | TOPK_SORTED}, TOPK_ALGO_WARP_SELECT},
      {{.dtype = TOPK_BF16, .batch = 4096, .n = 131072, .k = 2048}, TOPK_ALGO_AIR_RADIX},
      {{.dtype = TOPK_BF16, .batch = 1, .n = 32000, .k = 50}, TOPK_ALGO_AIR_RADIX},
      {{.batch = 64, .n = 128256, .k = 50}, TOPK_ALGO_AIR_RADIX},
      {{.batch = 1, .n = 262144, .k = 1}, TOPK_ALGO_GRID_SELECT},
      {{.batch = 8, .n = 151937, .k = 1, .flags = TOPK_SORTED}, TOPK_ALGO_GRID_SELECT},
      {{.batch = 8, .n = 151936, .k = 1}, TOPK_ALGO_AIR_RADIX},
      {{.batch = 1, .n = 128256, .k = 1}, TOPK_ALGO_AIR_RADIX},
      {{.batch = 8, .n = 32000, .k = 1}, TOPK_ALGO_AIR_RADIX},
      {{.dtype = TOPK_BF16, .batch = 1, .n = 262144, .k = 1}, TOPK_ALGO_AIR_RADIX},
      {{.batch = 16, .n = 262144, .k = 1}, TOPK_ALGO_AIR_RADIX},
      {{.batch = 100, .n = 1024, .k = 64, .max_iter = 3}, TOPK_ALGO_RTOPK},
      {{.batch = 100, .n = 1 << 16, .k = 64, .max_iter = 3}, TOPK_ALGO_AIR_RADIX}, /* rows > 4096: exact */
      {{.dtype = TOPK_F64, .batch = 1, .n = (int64_t)1 << 28, .k = 1024}, TOPK_ALGO_AIR_RADIX},
  };
  for (int i = 0; i < COUNT(cases); ++i) {
    cases[i].p.backend = TOPK_BACKEND_CUDA;
    const topk_algo_ops* ops = topk_choose(&cases[i].p, TOPK_BACKEND_CUDA, &h100);
    ASSERT_TRUE(ops != NULL);
    if (ops->algo != cases[i].want)
      fprintf(stderr, "case %d: chose %s, want %s\n", i, ops->name, topk_algo_name(cases[i].want));
    ASSERT_EQ_I64(ops->algo, cases[i].want);
  }
  return TEST_OK;
}

#define LIST(X) X(every_choice_supports_its_problem) X(rules_pick_the_measured_winner)
TEST_MAIN(LIST)
