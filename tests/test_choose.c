/*
 * test_choose.c: AUTO (src/choose.c and its generated table, src/choose_table.h) on an
 * H100's description. Only supports() and the chooser run: host code, so no device.
 *   - every grid point of every table plane, for every dtype of the plane's key width and
 *     both directions, gets an algorithm that supports it (issue "TOPK_ALGO_AUTO", item 6);
 *   - at every measured grid point the choice costs what the point's cheapest supported
 *     algorithm costs (the interpolation is exact on the grid);
 *   - off the grid, problems crossing every limit (dtypes, batch 1..2^20, rows 1..2^30 and
 *     their neighbours, k up to the row length, sorted or not, offsets, max_iter) get an
 *     algorithm that supports them;
 *   - the rules before the table: max_iter, offsets; and every choice says why (also through
 *     topk_plan_explain).
 * Skips (77) in builds without the CUDA backend (AUTO is then cpu_select, which takes all).
 */
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "choose_table.h"
#include "harness.h"
#include "topk.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define TOPK_ALGO_NONE_OF_RTOPK ((topk_algo)-1) /* any algorithm but rtopk */

static const topk_device_info h100 = {.ordinal = 0, .cc_major = 9, .cc_minor = 0, .sm_count = 132,
                                      .max_threads_per_sm = 2048, .l2_bytes = 50 << 20,
                                      .smem_per_block_optin = 227 << 10};

TEST(every_choice_supports_its_problem) {
  if (!topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_AIR_RADIX)) return TEST_SKIP;
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
                const topk_algo_ops* ops = topk_choose(&p, TOPK_BACKEND_CUDA, &h100, NULL, 0);
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

static const topk_dtype* dtypes_of(int key_bits, int* count) {
  static const topk_dtype d16[] = {TOPK_BF16, TOPK_F16};
  static const topk_dtype d32[] = {TOPK_F32, TOPK_I32, TOPK_U32};
  static const topk_dtype d64[] = {TOPK_F64, TOPK_I64, TOPK_U64};
  *count = key_bits == 16 ? COUNT(d16) : key_bits == 32 ? COUNT(d32) : COUNT(d64);
  return key_bits == 16 ? d16 : key_bits == 32 ? d32 : d64;
}

/* Item 6: every grid point of the table gets an algorithm that supports it. */
TEST(every_table_point_gets_a_supporting_algorithm) {
  if (!topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_AIR_RADIX)) return TEST_SKIP;
  int64_t checked = 0;
  for (int t = 0; t < CHOOSE_PLANE_COUNT; ++t) {
    const choose_plane* pl = &choose_planes[t];
    int ndt = 0;
    const topk_dtype* dts = dtypes_of(pl->key_bits, &ndt);
    for (int d = 0; d < ndt; ++d)
      for (int ib = 0; ib < pl->nb; ++ib)
        for (int in = 0; in < pl->nn; ++in)
          for (int ik = 0; ik < pl->nk; ++ik)
            for (int smallest = 0; smallest < 2; ++smallest) {
              topk_problem p = {.dtype = dts[d],
                                .batch = (int64_t)1 << pl->lb[ib],
                                .n = (int64_t)1 << pl->ln[in],
                                .k = (int64_t)1 << pl->lk[ik],
                                .flags = (pl->sorted ? TOPK_SORTED : 0u) | (smallest ? TOPK_SMALLEST : 0u),
                                .backend = TOPK_BACKEND_CUDA};
              if (p.k > p.n) continue;
              p.ld = p.n;
              char why[256] = "", no[256] = "";
              const topk_algo_ops* ops = topk_choose(&p, TOPK_BACKEND_CUDA, &h100, why, sizeof why);
              if (!ops || !ops->supports(&p, &h100, no, sizeof no) || !why[0]) {
                fprintf(stderr, "%s 2^%d x 2^%d k=2^%d: %s (%s)\n", topk_dtype_name(p.dtype), pl->lb[ib], pl->ln[in],
                        pl->lk[ik], ops ? ops->name : "no algorithm", no);
                ASSERT_TRUE(ops && ops->supports(&p, &h100, no, sizeof no) && why[0]);
              }
              ++checked;
            }
  }
  ASSERT_TRUE(checked > 5000);
  return TEST_OK;
}

/* On the grid the interpolation is the measurement: the choice is the cheapest supported there. */
TEST(table_points_choose_their_measured_winner) {
  if (!topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_AIR_RADIX)) return TEST_SKIP;
  int64_t measured = 0;
  for (int t = 0; t < CHOOSE_PLANE_COUNT; ++t) {
    const choose_plane* pl = &choose_planes[t];
    const topk_dtype dt = pl->key_bits == 16 ? TOPK_BF16 : pl->key_bits == 32 ? TOPK_F32 : TOPK_F64; /* as swept */
    for (int ib = 0; ib < pl->nb; ++ib)
      for (int in = 0; in < pl->nn; ++in)
        for (int ik = 0; ik < pl->nk; ++ik) {
          const uint16_t* cost = pl->cost + ((size_t)(ib * pl->nn + in) * (size_t)pl->nk + (size_t)ik) * CHOOSE_ALGOS;
          topk_problem p = {.dtype = dt,
                            .batch = (int64_t)1 << pl->lb[ib],
                            .n = (int64_t)1 << pl->ln[in],
                            .k = (int64_t)1 << pl->lk[ik],
                            .flags = pl->sorted ? TOPK_SORTED : 0u,
                            .backend = TOPK_BACKEND_CUDA};
          p.ld = p.n;
          int cheapest = -1;
          for (int a = 0; a < CHOOSE_ALGOS; ++a) {
            const topk_algo_ops* ops = topk_algo_find(TOPK_BACKEND_CUDA, choose_algo[a]);
            char no[64];
            if (cost[a] != CHOOSE_UNMEASURED && ops && ops->supports(&p, &h100, no, sizeof no) &&
                (cheapest < 0 || cost[a] < cost[cheapest]))
              cheapest = a;
          }
          if (cheapest < 0) continue; /* not measured (k > n, or over the sweep's input cap) */
          if (!pl->sorted && p.k >= p.n) continue; /* a rule before the table: AIR's copy (rules_before_the_table) */
          const topk_algo_ops* ops = topk_choose(&p, TOPK_BACKEND_CUDA, &h100, NULL, 0);
          ASSERT_TRUE(ops != NULL);
          int chosen = -1;
          for (int a = 0; a < CHOOSE_ALGOS; ++a)
            if (choose_algo[a] == ops->algo) chosen = a;
          if (chosen < 0 || cost[chosen] != cost[cheapest])
            fprintf(stderr, "%d-bit %s 2^%d x 2^%d k=2^%d: chose %s, the measured winner is %s\n", pl->key_bits,
                    pl->sorted ? "sorted" : "unsorted", pl->lb[ib], pl->ln[in], pl->lk[ik], ops->name,
                    topk_algo_name(choose_algo[cheapest]));
          ASSERT_TRUE(chosen >= 0);
          ASSERT_EQ_I64(cost[chosen], cost[cheapest]);
          ++measured;
        }
  }
  ASSERT_TRUE(measured > 1000);
  return TEST_OK;
}

/* The rules before the table, and the reasons. */
TEST(rules_before_the_table) {
  if (!topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_AIR_RADIX)) return TEST_SKIP;
  static const int64_t offsets_stub[2] = {0, 0};
  struct { topk_problem p; topk_algo want; const char* why; } cases[] = {
      {{.batch = 100, .n = 1024, .k = 64, .max_iter = 3}, TOPK_ALGO_RTOPK, "max_iter"},
      {{.batch = 100, .n = 1 << 16, .k = 64, .max_iter = 3}, TOPK_ALGO_NONE_OF_RTOPK, "table"}, /* rows > 4096: exact */
      {{.batch = 1, .n = 1 << 20, .k = 64, .row_offsets = offsets_stub}, TOPK_ALGO_AIR_RADIX, "variable-length"},
      {{.batch = 64, .n = 128256, .k = 50, .flags = TOPK_SORTED}, TOPK_ALGO_NONE_OF_RTOPK, "table 32-bit sorted"},
      {{.dtype = TOPK_I64, .batch = 64, .n = 128256, .k = 50, .flags = TOPK_SORTED}, TOPK_ALGO_NONE_OF_RTOPK,
       "(no sorted plane)"},
      {{.batch = 1, .n = 8192, .k = 8192}, TOPK_ALGO_AIR_RADIX, "k >= n"},
      {{.dtype = TOPK_BF16, .batch = 4096, .n = 16, .k = 20}, TOPK_ALGO_AIR_RADIX, "k >= n"},
      {{.batch = 1, .n = 8192, .k = 8192, .flags = TOPK_SORTED}, TOPK_ALGO_AUTO, "table 32-bit sorted"},
  };
  for (int i = 0; i < COUNT(cases); ++i) {
    topk_problem* p = &cases[i].p;
    p->backend = TOPK_BACKEND_CUDA;
    p->ld = p->row_offsets ? 0 : p->n;
    char why[256] = "";
    const topk_algo_ops* ops = topk_choose(p, TOPK_BACKEND_CUDA, &h100, why, sizeof why);
    ASSERT_TRUE(ops != NULL);
    if (!strstr(why, cases[i].why)) fprintf(stderr, "case %d: why = '%s', want '%s'\n", i, why, cases[i].why);
    ASSERT_TRUE(strstr(why, cases[i].why) != NULL);
    if (cases[i].want == TOPK_ALGO_NONE_OF_RTOPK) {
      ASSERT_TRUE(ops->algo != TOPK_ALGO_RTOPK);
    } else if (cases[i].want != TOPK_ALGO_AUTO) { /* AUTO here: any algorithm, the reason is the test */
      ASSERT_EQ_I64(ops->algo, cases[i].want);
    }
  }
  return TEST_OK;
}

/* topk_plan_explain: the reason, through the public API (the CPU backend: no device needed). */
TEST(plans_say_why) {
  ASSERT_TRUE(strcmp(topk_plan_explain(NULL), "") == 0);
  topk_problem p = {.batch = 2, .n = 100, .k = 5, .backend = TOPK_BACKEND_CPU};
  topk_plan* plan = NULL;
  ASSERT_EQ_I64(topk_plan_create(&plan, &p), TOPK_SUCCESS);
  ASSERT_TRUE(strstr(topk_plan_explain(plan), "cpu_select") != NULL);
  topk_plan_destroy(plan);
  p.algo = TOPK_ALGO_SORT;
  ASSERT_EQ_I64(topk_plan_create(&plan, &p), TOPK_SUCCESS);
  ASSERT_TRUE(strstr(topk_plan_explain(plan), "requested") != NULL);
  topk_plan_destroy(plan);
  return TEST_OK;
}

#define LIST(X)                                                                                    \
  X(every_choice_supports_its_problem) X(every_table_point_gets_a_supporting_algorithm)            \
  X(table_points_choose_their_measured_winner) X(rules_before_the_table) X(plans_say_why)
TEST_MAIN(LIST)
