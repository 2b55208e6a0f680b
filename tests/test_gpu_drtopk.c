/*
 * test_gpu_drtopk.c: bitonic top-k, bucket select and the Dr. Top-k delegate layer
 * over radix (AIR), bucket and bitonic (TOPK_ALGO_BITONIC, _BUCKET, _DRTOPK_RADIX,
 * _DRTOPK_BUCKET, _DRTOPK_BITONIC) against the CPU reference, through the public
 * API and tests/gpu_case.h (values bit-exact, the reference's index set unless
 * TOPK_NONDETERMINISTIC, order when TOPK_SORTED, padding for short rows).
 *
 * The delegate layer's paths are forced through the environment
 * (src/cuda/drtopk/drtopk.cu): TOPK_DRTOPK_ALPHA (subrange size 2^alpha: small
 * alpha -> the shared-memory delegate kernel, large -> warp-centric, or the plain
 * base when the capacity bound reaches the row length), TOPK_DRTOPK_BETA (1..4),
 * TOPK_DRTOPK_BUILD=warp|smem. Rows shorter than k / beta subranges (variable rows)
 * reach the "fewer than k delegates" threshold (Tc = 0: every element concatenated);
 * f64/i64/u64 and huge alpha reach the plain-base fallback.
 *
 * Skips (exit 77) where no CUDA device is usable. Quick subset for compute-sanitizer:
 *   compute-sanitizer --tool memcheck ./test_gpu_drtopk sanitizer_small
 *   compute-sanitizer --tool racecheck ./test_gpu_drtopk sanitizer_small
 */
#include <stdio.h>
#include <stdlib.h>

#include "gen.h"
#include "gpu_case.h"
#include "harness.h"
#include "topk.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const topk_dtype all_dtypes[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                        TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};
static const topk_algo all_algos[] = {TOPK_ALGO_BITONIC, TOPK_ALGO_BUCKET, TOPK_ALGO_DRTOPK_RADIX,
                                      TOPK_ALGO_DRTOPK_BUCKET, TOPK_ALGO_DRTOPK_BITONIC};
static const topk_algo dr_algos[] = {TOPK_ALGO_DRTOPK_RADIX, TOPK_ALGO_DRTOPK_BUCKET, TOPK_ALGO_DRTOPK_BITONIC};

typedef struct dr_case {
  topk_dtype     dtype;
  int64_t        batch, n, k, ld;
  unsigned       flags;
  topk_index     index_type;
  gen_opts       gen;
  const int64_t* offsets;
  const char*    alpha; /* TOPK_DRTOPK_ALPHA */
  const char*    beta;  /* TOPK_DRTOPK_BETA */
  const char*    build; /* TOPK_DRTOPK_BUILD */
  int            lib_workspace;
} dr_case;

/* Whether the algorithm takes the problem (bitonic: k <= 1024; bucket: sorted k <= 2048). */
static int algo_takes(topk_algo algo, const dr_case* d) {
  const int bitonic = algo == TOPK_ALGO_BITONIC || algo == TOPK_ALGO_DRTOPK_BITONIC;
  const int bucket = algo == TOPK_ALGO_BUCKET || algo == TOPK_ALGO_DRTOPK_BUCKET;
  if (bitonic && d->k > 1024) return 0;
  if (bucket && (d->flags & TOPK_SORTED) && d->k > 2048) return 0;
  return 1;
}

static int run_one(topk_algo algo, const dr_case* d) {
  const gpu_case c = {.algo = algo,
                      .dtype = d->dtype,
                      .batch = d->batch,
                      .n = d->n,
                      .k = d->k,
                      .ld = d->ld,
                      .flags = d->flags,
                      .index_type = d->index_type,
                      .gen = d->gen,
                      .offsets = d->offsets,
                      .env = {{"TOPK_DRTOPK_ALPHA", d->alpha},
                              {"TOPK_DRTOPK_BETA", d->beta},
                              {"TOPK_DRTOPK_BUILD", d->build}},
                      .lib_workspace = d->lib_workspace};
  return gpu_case_run(&c, test_seed());
}

/* Runs the case with every algorithm of the list that takes it; @return the number of failures. */
static int run_list(const topk_algo* algos, int count, const dr_case* d) {
  int fails = 0;
  for (int a = 0; a < count; ++a)
    if (algo_takes(algos[a], d) && run_one(algos[a], d) != 0) {
      fprintf(stderr, "  ^ algo %s (alpha %s, beta %s, build %s)\n", topk_algo_name(algos[a]),
              d->alpha ? d->alpha : "rule4", d->beta ? d->beta : "default", d->build ? d->build : "auto");
      ++fails;
    }
  return fails;
}

#define RUN_ALL(...)                                                \
  do {                                                              \
    dr_case d_ = {__VA_ARGS__};                                     \
    ASSERT_EQ_I64(run_list(all_algos, COUNT(all_algos), &d_), 0);   \
  } while (0)
#define RUN_DR(...)                                                 \
  do {                                                              \
    dr_case d_ = {__VA_ARGS__};                                     \
    ASSERT_EQ_I64(run_list(dr_algos, COUNT(dr_algos), &d_), 0);     \
  } while (0)

/* ------------------------------------------------------------------ tests */

/* Small and quick: every algorithm, both delegate kernels, beta 1 and 3, sorted, offsets. */
TEST(sanitizer_small) {
  GPU_SKIP_WITHOUT_DEVICE();
  RUN_ALL(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 100, .gen = {.dist = GEN_UNIFORM});
  RUN_ALL(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 100, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
          .alpha = "5", .build = "smem");
  RUN_DR(.dtype = TOPK_F16, .batch = 2, .n = 20000, .k = 300, .gen = {.dist = GEN_UNIFORM}, .alpha = "6",
         .beta = "1", .build = "warp");
  RUN_DR(.dtype = TOPK_F32, .batch = 1, .n = 30001, .k = 50, .flags = TOPK_SMALLEST | TOPK_SORTED,
         .gen = {.dist = GEN_ALL_EQUAL}, .alpha = "8", .beta = "3");
  static const int64_t off[] = {0, 0, 3, 40, 1040, 1040, 9000};
  RUN_ALL(.dtype = TOPK_BF16, .batch = 6, .n = 9000, .k = 40, .gen = {.dist = GEN_NORMAL}, .offsets = off,
          .alpha = "5");
  return TEST_OK;
}

/* Every dtype, both directions, sorted and not; 64-bit keys take the plain base. */
TEST(dtypes_directions) {
  GPU_SKIP_WITHOUT_DEVICE();
  static const unsigned flags[] = {0, TOPK_SMALLEST, TOPK_SORTED, TOPK_SMALLEST | TOPK_SORTED};
  for (int d = 0; d < COUNT(all_dtypes); ++d)
    for (int f = 0; f < COUNT(flags); ++f)
      RUN_ALL(.dtype = all_dtypes[d], .batch = 3, .n = 50007, .k = 77, .flags = flags[f],
              .gen = {.dist = GEN_NORMAL});
  return TEST_OK;
}

/* Distributions: uniform, normal, radix-adversarial (8..24 equal bits), CD, all-equal,
 * sorted, zipf (many duplicates at the k-th value), NaN/inf mixes. */
TEST(distributions) {
  GPU_SKIP_WITHOUT_DEVICE();
  static const gen_dist dists[] = {GEN_UNIFORM, GEN_NORMAL, GEN_CD, GEN_ALL_EQUAL, GEN_SORTED_ASC,
                                   GEN_SORTED_DESC, GEN_ZIPF};
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_I32};
  for (int t = 0; t < COUNT(dts); ++t) {
    for (int g = 0; g < COUNT(dists); ++g) {
      RUN_ALL(.dtype = dts[t], .batch = 2, .n = 100003, .k = 257, .gen = {.dist = dists[g], .row_length = 100003});
      RUN_ALL(.dtype = dts[t], .batch = 2, .n = 100003, .k = 257, .flags = TOPK_SORTED | TOPK_SMALLEST,
              .gen = {.dist = dists[g], .row_length = 100003});
    }
    static const int eq_bits[] = {8, 16, 20, 24};
    for (int e = 0; e < COUNT(eq_bits); ++e)
      RUN_ALL(.dtype = dts[t], .batch = 2, .n = 100003, .k = 257,
              .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = eq_bits[e]});
  }
  RUN_ALL(.dtype = TOPK_F32, .batch = 2, .n = 100003, .k = 300,
          .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.001, .inf_fraction = 0.002});
  RUN_ALL(.dtype = TOPK_F16, .batch = 2, .n = 100003, .k = 300, .flags = TOPK_SMALLEST | TOPK_SORTED,
          .gen = {.dist = GEN_UNIFORM, .nan_fraction = 0.01, .inf_fraction = 0.01});
  RUN_ALL(.dtype = TOPK_BF16, .batch = 1, .n = 100003, .k = 600,
          .gen = {.dist = GEN_UNIFORM, .nan_fraction = 0.5, .inf_fraction = 0.2});
  return TEST_OK;
}

/* k = 1, n - 1, n; small and larger rows. */
TEST(k_extremes) {
  GPU_SKIP_WITHOUT_DEVICE();
  static const int64_t ns[] = {1, 2, 1000, 70001};
  for (int i = 0; i < COUNT(ns); ++i) {
    const int64_t n = ns[i];
    const int64_t ks[] = {1, n > 1 ? n - 1 : 1, n};
    for (int j = 0; j < 3; ++j) {
      RUN_ALL(.dtype = TOPK_F32, .batch = 2, .n = n, .k = ks[j], .gen = {.dist = GEN_NORMAL});
      RUN_ALL(.dtype = TOPK_F16, .batch = 2, .n = n, .k = ks[j], .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
    }
  }
  return TEST_OK;
}

TEST(index_types) {
  GPU_SKIP_WITHOUT_DEVICE();
  static const topk_index its[] = {TOPK_INDEX_I64, TOPK_INDEX_I32, TOPK_INDEX_NONE};
  for (int i = 0; i < COUNT(its); ++i) {
    RUN_ALL(.dtype = TOPK_F32, .batch = 3, .n = 40000, .k = 500, .index_type = its[i], .gen = {.dist = GEN_UNIFORM});
    RUN_ALL(.dtype = TOPK_U32, .batch = 1, .n = 40000, .k = 33, .index_type = its[i], .flags = TOPK_SORTED,
            .gen = {.dist = GEN_ZIPF});
  }
  return TEST_OK;
}

TEST(nondeterministic) {
  GPU_SKIP_WITHOUT_DEVICE();
  RUN_ALL(.dtype = TOPK_F16, .batch = 3, .n = 60000, .k = 1000, .flags = TOPK_NONDETERMINISTIC,
          .gen = {.dist = GEN_ZIPF});
  RUN_ALL(.dtype = TOPK_F32, .batch = 1, .n = 60000, .k = 100, .flags = TOPK_NONDETERMINISTIC | TOPK_SORTED,
          .gen = {.dist = GEN_ALL_EQUAL});
  return TEST_OK;
}

/* Batches, rows not a multiple of 16 bytes apart (scalar load paths), n not a power of two. */
TEST(batches_and_strides) {
  GPU_SKIP_WITHOUT_DEVICE();
  RUN_ALL(.dtype = TOPK_F32, .batch = 1, .n = 123457, .k = 64, .gen = {.dist = GEN_UNIFORM});
  RUN_ALL(.dtype = TOPK_F32, .batch = 17, .n = 12345, .k = 64, .gen = {.dist = GEN_NORMAL});
  RUN_ALL(.dtype = TOPK_F32, .batch = 5, .n = 30000, .ld = 30001, .k = 100, .gen = {.dist = GEN_UNIFORM});
  RUN_ALL(.dtype = TOPK_F16, .batch = 5, .n = 30000, .ld = 30003, .k = 100, .flags = TOPK_SORTED,
          .gen = {.dist = GEN_NORMAL}, .alpha = "5");
  RUN_ALL(.dtype = TOPK_BF16, .batch = 3, .n = 30000, .ld = 30007, .k = 100, .gen = {.dist = GEN_CD},
          .alpha = "9", .build = "warp");
  RUN_ALL(.dtype = TOPK_F32, .batch = 1500, .n = 3000, .k = 20, .gen = {.dist = GEN_UNIFORM}, .alpha = "5");
  return TEST_OK;
}

/*
 * Variable rows with the delegate layer forced small (alpha 6: S = 64): empty rows,
 * rows shorter than k, shorter than one subrange, exactly one subrange, subrange
 * edges +-1, rows with fewer than k delegates (Tc = 0), long rows; odd offsets
 * (unaligned rows).
 */
TEST(variable_rows) {
  GPU_SKIP_WITHOUT_DEVICE();
  static const int64_t off[] = {0, 0, 1, 6, 69, 133, 197, 262, 1000, 1001, 3001, 60001, 60001, 200000};
  const int64_t batch = COUNT(off) - 1, n = off[COUNT(off) - 1];
  static const char* const alphas[] = {"5", "6", "7", "10"};
  static const char* const betas[] = {"1", "2", "4"};
  for (int a = 0; a < COUNT(alphas); ++a)
    for (int b = 0; b < COUNT(betas); ++b) {
      RUN_ALL(.dtype = TOPK_F32, .batch = batch, .n = n, .k = 20, .gen = {.dist = GEN_NORMAL}, .offsets = off,
              .alpha = alphas[a], .beta = betas[b]);
      RUN_DR(.dtype = TOPK_F16, .batch = batch, .n = n, .k = 64, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF},
             .offsets = off, .alpha = alphas[a], .beta = betas[b]);
    }
  RUN_ALL(.dtype = TOPK_I32, .batch = batch, .n = n, .k = 700, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_UNIFORM},
          .offsets = off, .alpha = "5");
  return TEST_OK;
}

/*
 * Every delegate-layer path on one row: alpha from 5 (shared-memory kernel) to 14
 * (warp-centric), beta 1..4, both kernels forced, on distributions that make many
 * subranges full (sorted ascending: the best elements crowd the last subranges;
 * all-equal: every delegate ties on value, only the index breaks it) or few.
 */
TEST(delegate_paths) {
  GPU_SKIP_WITHOUT_DEVICE();
  static const char* const alphas[] = {"5", "6", "8", "11"};
  static const char* const betas[] = {"1", "2", "3", "4"};
  static const gen_dist dists[] = {GEN_UNIFORM, GEN_SORTED_ASC, GEN_ALL_EQUAL, GEN_RADIX_ADVERSARIAL, GEN_ZIPF};
  const int64_t n = ((int64_t)1 << 18) + 3;
  for (int a = 0; a < COUNT(alphas); ++a)
    for (int b = 0; b < COUNT(betas); ++b)
      for (int g = 0; g < COUNT(dists); ++g)
        RUN_DR(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 100, .gen = {.dist = dists[g], .row_length = n},
               .alpha = alphas[a], .beta = betas[b]);
  /* large subranges (alpha 14: S = 16384) need a small k to stay below the row length */
  for (int g = 0; g < COUNT(dists); ++g)
    RUN_DR(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 5, .flags = TOPK_SORTED, .gen = {.dist = dists[g], .row_length = n},
           .alpha = "14", .beta = "1");
  static const char* const builds[] = {"warp", "smem"};
  for (int w = 0; w < 2; ++w) {
    RUN_DR(.dtype = TOPK_F16, .batch = 2, .n = 300001, .k = 1000, .gen = {.dist = GEN_NORMAL}, .alpha = "5",
           .build = builds[w]);
    RUN_DR(.dtype = TOPK_U32, .batch = 2, .n = 300001, .k = 10, .flags = TOPK_SORTED | TOPK_SMALLEST,
           .gen = {.dist = GEN_UNIFORM}, .alpha = "6", .build = builds[w]);
  }
  /* NaN and inf in the shared-memory kernel, alpha 5 (one chunk per subrange) to 10 (32 chunks) */
  RUN_DR(.dtype = TOPK_F32, .batch = 2, .n = 300001, .k = 1000, .flags = TOPK_SMALLEST,
         .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.01, .inf_fraction = 0.01}, .alpha = "5", .build = "smem");
  RUN_DR(.dtype = TOPK_F32, .batch = 1, .n = 300001, .k = 100, .flags = TOPK_SORTED,
         .gen = {.dist = GEN_UNIFORM, .nan_fraction = 0.0001}, .alpha = "9", .build = "smem");
  RUN_DR(.dtype = TOPK_F32, .batch = 1, .n = 300001, .k = 30, .gen = {.dist = GEN_UNIFORM, .inf_fraction = 0.0002},
         .alpha = "10", .build = "smem", .beta = "4");
  /* one row of 2^22: the first step's 2^22 / S x 2 delegates take each of the base's
   * paths (AIR: one block at 4096, an 8-block cluster at 131072, fused at 262144) */
  static const char* const first_step[] = {"11", "6", "5"};
  for (int a = 0; a < COUNT(first_step); ++a)
    RUN_DR(.dtype = TOPK_F32, .batch = 1, .n = (int64_t)1 << 22, .k = 64, .gen = {.dist = GEN_UNIFORM},
           .alpha = first_step[a]);
  /* the second step on AIR's ADAPTIVE path (capacity B above the largest cluster's 196608
   * composites, or two rows): few candidates arrive (uniform, k = 1000, B = 257512: the
   * one-block kernel takes them), or more than its 4096 (sorted ascending, k = 8192:
   * k / beta full subranges, 524288 elements; the fused kernel takes them), one row and two */
  static const gen_dist second[] = {GEN_UNIFORM, GEN_SORTED_ASC};
  for (int g = 0; g < COUNT(second); ++g) {
    const int64_t k = g == 0 ? 1000 : 8192;
    const char* alpha = g == 0 ? "9" : "7";
    RUN_DR(.dtype = TOPK_F32, .batch = 1, .n = (int64_t)1 << 22, .k = k, .gen = {.dist = second[g]}, .alpha = alpha);
    RUN_DR(.dtype = TOPK_F32, .batch = 2, .n = ((int64_t)1 << 21) + 5, .k = k, .flags = TOPK_SORTED,
           .gen = {.dist = second[g], .row_length = ((int64_t)1 << 21) + 5}, .alpha = alpha);
  }
  /* alpha so large that the bound reaches the row: the plain base */
  RUN_DR(.dtype = TOPK_F32, .batch = 2, .n = 100000, .k = 100, .gen = {.dist = GEN_UNIFORM}, .alpha = "20");
  return TEST_OK;
}

/*
 * The shared-memory kernel's min/max scan (beta 1 and 2): per chunk, keys without
 * offsets, then the winners' offsets by their raw bits; a chunk holding a NaN takes
 * the offset-tracking scan. Every 16- and 32-bit dtype, both directions, alpha 5 (one
 * chunk per subrange) and 7 (four), on data with NaNs of both signs (some chunks take
 * each scan), ties at the top of a subrange (zipf, 24 equal bits, all-equal: first
 * occurrences must win) and a ragged row end.
 */
TEST(smem_minmax) {
  GPU_SKIP_WITHOUT_DEVICE();
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_I32, TOPK_U32};
  static const unsigned flags[] = {TOPK_SORTED, TOPK_SORTED | TOPK_SMALLEST};
  static const char* const alphas[] = {"5", "7"};
  static const char* const betas[] = {"1", "2"};
  const gen_opts gens[] = {{.dist = GEN_NORMAL, .nan_fraction = 0.002, .inf_fraction = 0.002},
                           {.dist = GEN_ZIPF},
                           {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 24},
                           {.dist = GEN_ALL_EQUAL}};
  const int64_t n = ((int64_t)1 << 17) + 37;
  for (int d = 0; d < COUNT(dts); ++d)
    for (int f = 0; f < COUNT(flags); ++f)
      for (int a = 0; a < COUNT(alphas); ++a)
        for (int b = 0; b < COUNT(betas); ++b)
          for (int g = 0; g < COUNT(gens); ++g) {
            dr_case d_ = {.dtype = dts[d], .batch = 2, .n = n, .k = 300, .flags = flags[f], .gen = gens[g],
                          .alpha = alphas[a], .beta = betas[b], .build = "smem"};
            ASSERT_EQ_I64(run_one(TOPK_ALGO_DRTOPK_RADIX, &d_), 0);
          }
  return TEST_OK;
}

/* Larger problems (k up to 2^14; bitonic takes k <= 1024). */
TEST(large_n) {
  GPU_SKIP_WITHOUT_DEVICE();
  const int64_t n = (int64_t)1 << 24;
  RUN_ALL(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 1000, .gen = {.dist = GEN_UNIFORM});
  RUN_ALL(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 16384, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  RUN_ALL(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 1024, .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20});
  RUN_ALL(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 1, .gen = {.dist = GEN_CD});
  RUN_DR(.dtype = TOPK_BF16, .batch = 1, .n = (int64_t)1 << 22, .k = (int64_t)1 << 15, .gen = {.dist = GEN_ALL_EQUAL});
  RUN_DR(.dtype = TOPK_F16, .batch = 4, .n = n / 4, .k = 3000, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_NORMAL});
  return TEST_OK;
}

TEST(library_workspace) {
  GPU_SKIP_WITHOUT_DEVICE();
  RUN_ALL(.dtype = TOPK_F32, .batch = 2, .n = 50000, .k = 64, .gen = {.dist = GEN_UNIFORM}, .lib_workspace = 1);
  return TEST_OK;
}

/* Refusals come with TOPK_ERR_UNSUPPORTED (and a reason), never a wrong answer. */
TEST(limits) {
  GPU_SKIP_WITHOUT_DEVICE();
  size_t bytes = 0;
  topk_problem p = {.batch = 1, .n = 100000, .k = 1025, .algo = TOPK_ALGO_BITONIC, .backend = TOPK_BACKEND_CUDA};
  ASSERT_STATUS(topk_workspace_size(&p, &bytes), TOPK_ERR_UNSUPPORTED);
  p.algo = TOPK_ALGO_DRTOPK_BITONIC;
  ASSERT_STATUS(topk_workspace_size(&p, &bytes), TOPK_ERR_UNSUPPORTED);
  p.algo = TOPK_ALGO_BUCKET;
  p.k = 4096;
  p.flags = TOPK_SORTED;
  ASSERT_STATUS(topk_workspace_size(&p, &bytes), TOPK_ERR_UNSUPPORTED);
  p.flags = 0;
  ASSERT_STATUS(topk_workspace_size(&p, &bytes), TOPK_SUCCESS);
  ASSERT_TRUE(bytes > 0);
  return TEST_OK;
}

#define LIST(X)            \
  X(sanitizer_small)       \
  X(dtypes_directions)     \
  X(distributions)         \
  X(k_extremes)            \
  X(index_types)           \
  X(nondeterministic)      \
  X(batches_and_strides)   \
  X(variable_rows)         \
  X(delegate_paths)        \
  X(smem_minmax)           \
  X(large_n)               \
  X(library_workspace)     \
  X(limits)
TEST_MAIN(LIST)
