/*
 * gpu_case.h: one differential case on the CUDA backend, for every algorithm's test.
 *
 * gpu_case_run generates host data (tools/common/gen.h), copies it to the device,
 * poisons the outputs (0xA5), runs topk_select with the case's algorithm on the CUDA
 * backend, copies the results back and hands them to check_topk (tests/check.h),
 * which compares them with the CPU reference. It uses only topk.h (the section-6
 * device helpers), so it builds without CUDA headers.
 *
 *   TEST(x) {
 *     GPU_SKIP_WITHOUT_DEVICE();
 *     GPU_RUN(.algo = TOPK_ALGO_AIR_RADIX, .dtype = TOPK_F32, .batch = 2, .n = 1000, .k = 10,
 *             .gen = {.dist = GEN_NORMAL}, .env = {{"TOPK_AIR_PATH", "one"}});
 *     return TEST_OK;
 *   }
 */
#ifndef TOPK_TEST_GPU_CASE_H
#define TOPK_TEST_GPU_CASE_H

#include <stdint.h>

#include "gen.h"
#include "topk.h"

#define GPU_CASE_MAX_ENV 16

typedef struct gpu_case {
  topk_algo      algo;          /* 0: AUTO */
  topk_dtype     dtype;
  int64_t        batch, n, k, ld;
  unsigned       flags;
  topk_index     index_type;
  gen_opts       gen;           /* seed 0: the test seed (TOPK_TEST_SEED) */
  const int64_t* offsets;       /* host, batch + 1 entries; NULL: uniform rows */
  /* environment variables set for this case only, {name, value}; a NULL name ends the list */
  const char*    env[GPU_CASE_MAX_ENV][2];
  int            lib_workspace; /* pass no workspace: the library allocates it */
  int            out_shift;     /* 0..8: the outputs start this many elements into their buffers
                                   (misaligned), whose first elements must stay unwritten */
} gpu_case;

/*
 * DESIGN.md's distributions for differential tests, in one list: uniform, normal,
 * radix-adversarial with 8/16/20/24 equal leading bits, Dr. Top-k's CD, all-equal,
 * zipf (many duplicates), sorted both ways, NaN/inf mixes, all NaN.
 */
extern const gen_opts gpu_case_dists[];
extern const int gpu_case_dist_count;

/* In a function with a `done:` label: on a failing topk call, print why and jump there. */
#define GPU_TRY(expr, what)                                                                  \
  do {                                                                                       \
    topk_status s_ = (expr);                                                                 \
    if (s_ != TOPK_SUCCESS) {                                                                \
      fprintf(stderr, "%s: %s (%s)\n", what, topk_status_name(s_), topk_error_detail());    \
      goto done;                                                                             \
    }                                                                                        \
  } while (0)

/* @return 0 if the case passed; -1 (after printing the case and why) otherwise. */
int gpu_case_run(const gpu_case* c, uint64_t seed);

/* Prints the case on one line to stderr. */
void gpu_case_describe(const gpu_case* c);

#define GPU_SKIP_WITHOUT_DEVICE()                    \
  do {                                               \
    if (!topk_cuda_available()) return TEST_SKIP;    \
  } while (0)

/* Runs one case inside a TEST (tests/harness.h); a failure fails the test. */
#define GPU_RUN(...)                                 \
  do {                                               \
    gpu_case c_ = {__VA_ARGS__};                     \
    ASSERT_EQ_I64(gpu_case_run(&c_, test_seed()), 0); \
  } while (0)

#endif
