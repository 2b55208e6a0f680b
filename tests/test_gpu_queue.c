/*
 * test_gpu_queue.c: WarpSelect, BlockSelect and GridSelect (src/cuda/queue_select/)
 * against the CPU reference, through the public API (tests/gpu_case.h: generate,
 * poison the outputs, run on the CUDA backend, check_topk).
 *
 * Covers: every dtype and direction, sorted and unsorted (both write the sorted
 * result), k = 1 and every bucket edge (32/33, 64/65, 96/97 ... 1536/1537, 2047/2048), n < 32,
 * n not a multiple of 32, k = n, I32/I64/NONE indices, ld > n, variable-length
 * rows with empty and short rows (padding), the distributions of gen.h (radix-
 * adversarial with 8/16/20/24 equal bits, all-equal, zipf duplicates at the k-th,
 * sorted both ways, NaN/inf mixes), 10^4 rows, GridSelect's split rows (batch 1,
 * n = 2^24, k = 128 and 2048), BlockSelect's shared-memory queue (k = 2049..8192:
 * both caps and their edges, every dtype and direction, k = n, variable-length
 * rows (some shorter than k, unaligned starts), flushes forced by ascending rows, ties) and
 * k past each algorithm's largest queue refused with TOPK_ERR_UNSUPPORTED.
 *
 * Skips (exit 77) where no CUDA device is usable. `sanitizer_small` is the quick
 * subset for compute-sanitizer (memcheck, racecheck):
 *   compute-sanitizer --tool racecheck ./test_gpu_queue sanitizer_small
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_case.h"
#include "harness.h"
#include "topk.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const topk_algo algos[] = {TOPK_ALGO_WARP_SELECT, TOPK_ALGO_BLOCK_SELECT, TOPK_ALGO_GRID_SELECT};
static const topk_dtype all_dtypes[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                        TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};

/* Small shapes for the sanitizers: each algorithm, each key width, GridSelect split over blocks. */
TEST(sanitizer_small) {
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a) {
    GPU_RUN(.algo = algos[a], .dtype = TOPK_F32, .batch = 3, .n = 1000, .k = 40, .flags = TOPK_SORTED,
            .gen = {.dist = GEN_NORMAL});
    GPU_RUN(.algo = algos[a], .dtype = TOPK_BF16, .batch = 2, .n = 333, .k = 65, .gen = {.dist = GEN_ZIPF});
    GPU_RUN(.algo = algos[a], .dtype = TOPK_F64, .batch = 2, .n = 517, .k = 300, .flags = TOPK_SMALLEST,
            .gen = {.dist = GEN_UNIFORM});
  }
  /* BlockSelect's shared-memory queue: ascending rows flush at every full buffer */
  GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = TOPK_F32, .batch = 2, .n = 9001, .k = 2100,
          .gen = {.dist = GEN_SORTED_ASC});
  GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = TOPK_BF16, .batch = 2, .n = 12003, .k = 5000,
          .flags = TOPK_SMALLEST | TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  /* GridSelect: 100000 elements -> several blocks per row and the merge kernel */
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F32, .batch = 1, .n = 100000, .k = 64,
          .gen = {.dist = GEN_UNIFORM});
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_U64, .batch = 2, .n = 70000, .k = 100,
          .flags = TOPK_SMALLEST, .gen = {.dist = GEN_ZIPF});
  /* GridSelect at k = 1 on a split row: one cluster per row, the parts' bests meet in rank 0 */
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F32, .batch = 2, .n = 100000, .k = 1,
          .gen = {.dist = GEN_ZIPF});
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_BF16, .batch = 3, .n = 40001, .k = 1, .ld = 40003,
          .flags = TOPK_SMALLEST, .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.01, .inf_fraction = 0.01});
  return TEST_OK;
}

TEST(dtypes_directions) {
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a)
    for (int d = 0; d < COUNT(all_dtypes); ++d)
      for (int f = 0; f < 4; ++f) {
        const unsigned flags = (f & 1 ? TOPK_SMALLEST : 0u) | (f & 2 ? TOPK_SORTED : 0u);
        GPU_RUN(.algo = algos[a], .dtype = all_dtypes[d], .batch = 3, .n = 4099, .k = 100, .flags = flags,
                .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.01, .inf_fraction = 0.01});
      }
  return TEST_OK;
}

/* k = 1 and both sides of every bucket edge; the dtype rotates over the key widths. */
TEST(bucket_edges) {
  static const int64_t ks[] = {1,   2,   31,  32,  33,   63,   64,   65,   95,   96,   97,   127,  128,  129, 191, 192,
                               193, 255, 256, 257, 383,  384,  385,  511,  512,  513,  767,  768,  769,  1023,
                               1024, 1025, 1535, 1536, 1537, 2047, 2048};
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_I64};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a)
    for (int i = 0; i < COUNT(ks); ++i)
      for (int d = 0; d < COUNT(dts); ++d)
        GPU_RUN(.algo = algos[a], .dtype = dts[d], .batch = 2, .n = 5000, .k = ks[i],
                .flags = (i & 1) ? TOPK_SORTED : TOPK_SMALLEST, .gen = {.dist = GEN_ZIPF});
  return TEST_OK;
}

/* Rows shorter than a warp, not a multiple of 32, and k = n (every element selected). */
TEST(short_rows) {
  static const int64_t ns[] = {1, 2, 5, 17, 31, 32, 33, 63, 100, 1001};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a)
    for (int i = 0; i < COUNT(ns); ++i) {
      GPU_RUN(.algo = algos[a], .dtype = TOPK_F32, .batch = 5, .n = ns[i], .k = 1, .gen = {.dist = GEN_NORMAL});
      GPU_RUN(.algo = algos[a], .dtype = TOPK_F16, .batch = 5, .n = ns[i], .k = ns[i], .flags = TOPK_SORTED,
              .gen = {.dist = GEN_ZIPF});
      GPU_RUN(.algo = algos[a], .dtype = TOPK_U64, .batch = 4, .n = ns[i], .k = (ns[i] + 1) / 2,
              .flags = TOPK_SMALLEST, .gen = {.dist = GEN_UNIFORM});
    }
  for (int a = 0; a < COUNT(algos); ++a) {
    GPU_RUN(.algo = algos[a], .dtype = TOPK_F32, .batch = 3, .n = 2048, .k = 2048, .flags = TOPK_SORTED,
            .gen = {.dist = GEN_NORMAL});
    GPU_RUN(.algo = algos[a], .dtype = TOPK_I32, .batch = 3, .n = 1025, .k = 1025, .gen = {.dist = GEN_ZIPF});
  }
  return TEST_OK;
}

TEST(distributions) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_F64};
  static const int64_t ks[] = {7, 100, 700};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a)
    for (int g = 0; g < gpu_case_dist_count; ++g)
      for (int d = 0; d < COUNT(dts); ++d)
        for (int f = 0; f < 2; ++f)
          GPU_RUN(.algo = algos[a], .dtype = dts[d], .batch = 3, .n = 6007, .k = ks[(g + d) % COUNT(ks)],
                  .flags = (f ? TOPK_SMALLEST : 0u) | TOPK_SORTED, .gen = gpu_case_dists[g]);
  return TEST_OK;
}

TEST(index_types) {
  static const topk_index its[] = {TOPK_INDEX_I64, TOPK_INDEX_I32, TOPK_INDEX_NONE};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a)
    for (int i = 0; i < COUNT(its); ++i) {
      GPU_RUN(.algo = algos[a], .dtype = TOPK_F32, .batch = 4, .n = 3000, .k = 200, .index_type = its[i],
              .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
      GPU_RUN(.algo = algos[a], .dtype = TOPK_I64, .batch = 4, .n = 3000, .k = 33, .index_type = its[i],
              .flags = TOPK_NONDETERMINISTIC, .gen = {.dist = GEN_ALL_EQUAL});
    }
  return TEST_OK;
}

/* Row stride larger than the row, odd strides so that rows start unaligned. */
TEST(leading_dimension) {
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a) {
    GPU_RUN(.algo = algos[a], .dtype = TOPK_F32, .batch = 5, .n = 9000, .k = 50, .ld = 9017,
            .gen = {.dist = GEN_NORMAL});
    GPU_RUN(.algo = algos[a], .dtype = TOPK_BF16, .batch = 7, .n = 1003, .k = 1000, .ld = 1011,
            .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
    GPU_RUN(.algo = algos[a], .dtype = TOPK_F64, .batch = 5, .n = 31, .k = 31, .ld = 33,
            .gen = {.dist = GEN_UNIFORM});
  }
  return TEST_OK;
}

/* Variable-length rows: empty rows, rows shorter than k (padding), unaligned starts. */
TEST(variable_rows) {
  static const int64_t off[] = {0, 0, 1, 6, 69, 70, 71, 3071, 3071, 103071, 103072, 110000, 110000};
  const int64_t batch = COUNT(off) - 1, n = off[COUNT(off) - 1];
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F64, TOPK_BF16, TOPK_U32};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a)
    for (int d = 0; d < COUNT(dts); ++d)
      for (int f = 0; f < 4; ++f) {
        const unsigned flags = (f & 1 ? TOPK_SORTED : 0u) | (f & 2 ? TOPK_SMALLEST : 0u);
        GPU_RUN(.algo = algos[a], .dtype = dts[d], .batch = batch, .n = n, .k = 70, .flags = flags,
                .gen = {.dist = GEN_ZIPF}, .offsets = off);
        GPU_RUN(.algo = algos[a], .dtype = dts[d], .batch = batch, .n = n, .k = 2048, .flags = flags,
                .gen = {.dist = GEN_NORMAL}, .offsets = off);
      }
  return TEST_OK;
}

/* 10^4 rows: many rows per launch (WarpSelect: 4 per block). */
TEST(many_rows) {
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a) {
    GPU_RUN(.algo = algos[a], .dtype = TOPK_F32, .batch = 10000, .n = 1000, .k = 100, .gen = {.dist = GEN_NORMAL});
    GPU_RUN(.algo = algos[a], .dtype = TOPK_BF16, .batch = 10001, .n = 257, .k = 16, .flags = TOPK_SORTED,
            .gen = {.dist = GEN_ZIPF});
  }
  return TEST_OK;
}

/* GridSelect on long rows: one row split over many blocks, then the merge. */
TEST(grid_long_rows) {
  GPU_SKIP_WITHOUT_DEVICE();
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F32, .batch = 1, .n = 1 << 24, .k = 128,
          .gen = {.dist = GEN_UNIFORM});
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F32, .batch = 1, .n = 1 << 24, .k = 2048,
          .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_BF16, .batch = 1, .n = 1 << 22, .k = 1000,
          .flags = TOPK_SMALLEST, .gen = {.dist = GEN_ZIPF});
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F64, .batch = 3, .n = 3000001, .k = 1,
          .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 24});
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F32, .batch = 2, .n = 1 << 20, .k = 64,
          .gen = {.dist = GEN_ALL_EQUAL}, .lib_workspace = 1);
  /* BlockSelect and WarpSelect on a long row too (one block / one warp for it all) */
  GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = TOPK_F32, .batch = 2, .n = 1 << 21, .k = 512,
          .gen = {.dist = GEN_SORTED_ASC});
  GPU_RUN(.algo = TOPK_ALGO_WARP_SELECT, .dtype = TOPK_F16, .batch = 2, .n = 1 << 20, .k = 64,
          .gen = {.dist = GEN_SORTED_ASC});
  return TEST_OK;
}

/*
 * GridSelect at k = 1 where a row is split over blocks (few rows): one launch, a cluster of
 * up to 8 blocks per row, no workspace. Every key width and direction, sorted or not, ties
 * across blocks (all-equal, zipf, sorted: the lowest index wins), NaN / inf, every index
 * type, a stride, rows of 1..9 vectors (clusters whose parts are empty), variable-length
 * rows (an empty row pads), and the LLM-sampling shapes (batch 1..8, vocabulary 32000..262144).
 */
TEST(grid_top1) {
  static const gen_opts dists[] = {
      {.dist = GEN_NORMAL},      {.dist = GEN_ALL_EQUAL}, {.dist = GEN_ZIPF},
      {.dist = GEN_SORTED_ASC},  {.dist = GEN_SORTED_DESC},
      {.dist = GEN_UNIFORM, .nan_fraction = 0.001, .inf_fraction = 0.01},
      {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 24},
  };
  static const int64_t shapes[][2] = {{1, 32000}, {8, 32000}, {1, 262144}, {8, 262144}, {4, 151936}, {3, 100003}};
  GPU_SKIP_WITHOUT_DEVICE();
  size_t ws = 1;
  topk_problem q = {.dtype = TOPK_F32, .batch = 1, .n = 262144, .k = 1, .algo = TOPK_ALGO_GRID_SELECT,
                    .backend = TOPK_BACKEND_CUDA};
  ASSERT_STATUS(topk_workspace_size(&q, &ws), TOPK_SUCCESS);
  ASSERT_EQ_U64(ws, 0); /* the cluster path needs none */
  for (int d = 0; d < COUNT(all_dtypes); ++d)
    for (int g = 0; g < COUNT(dists); ++g) {
      const int sh = (d + g) % COUNT(shapes);
      const unsigned flags = (g & 1 ? TOPK_SMALLEST : 0u) | (d & 1 ? TOPK_SORTED : 0u);
      GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = all_dtypes[d], .batch = shapes[sh][0], .n = shapes[sh][1],
              .k = 1, .flags = flags, .index_type = (topk_index)(g % 3), .gen = dists[g]);
    }
  for (int64_t n = 1; n <= 9 * 8; n += 7) /* tiny rows: most parts empty */
    GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F16, .batch = 2, .n = n, .k = 1, .gen = {.dist = GEN_ZIPF});
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F32, .batch = 2, .n = 262144, .k = 1, .ld = 262147,
          .gen = {.dist = GEN_NORMAL});
  static const int64_t off[] = {3, 3, 60003, 60004, 200000};
  GPU_RUN(.algo = TOPK_ALGO_GRID_SELECT, .dtype = TOPK_F32, .batch = 4, .n = 200000, .k = 1, .offsets = off,
          .gen = {.dist = GEN_NORMAL});
  return TEST_OK;
}

/*
 * BlockSelect with k = 2049..8192: the shared-memory queue (CAP 4096 and 8192). Edges of
 * both caps; every dtype, both directions; k = n; rows not a multiple of a vector; ascending rows (every element beats the threshold: a flush each
 * time the buffer fills); all-equal and zipf rows (ties at the k-th go to the lowest
 * index); NaN / inf; variable-length rows with unaligned starts; an ld > n.
 */
TEST(block_smem_queue) {
  static const int64_t ks[] = {2049, 3000, 4096, 4097, 6000, 8192};
  static const gen_opts dists[] = {
      {.dist = GEN_NORMAL}, {.dist = GEN_SORTED_ASC}, {.dist = GEN_ALL_EQUAL}, {.dist = GEN_ZIPF},
      {.dist = GEN_UNIFORM, .nan_fraction = 0.01, .inf_fraction = 0.01},
      {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20}, {.dist = GEN_SORTED_DESC}, {.dist = GEN_UNIFORM},
  };
  GPU_SKIP_WITHOUT_DEVICE();
  for (int i = 0; i < COUNT(ks); ++i)
    for (int d = 0; d < COUNT(all_dtypes); ++d) {
      const int g = (i + d) % COUNT(dists);
      const unsigned flags = (d & 1 ? TOPK_SMALLEST : 0u) | (i & 1 ? TOPK_SORTED : 0u);
      GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = all_dtypes[d], .batch = 3, .n = 40003, .k = ks[i],
              .flags = flags, .index_type = (topk_index)((i + d) % 3), .gen = dists[g]);
    }
  /* k = n (rows shorter than k: the variable-length rows below) */
  GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = TOPK_F32, .batch = 4, .n = 3001, .k = 3001,
          .gen = {.dist = GEN_NORMAL});
  GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = TOPK_BF16, .batch = 2, .n = 8192, .k = 8192,
          .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  /* long rows: many flushes */
  GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = TOPK_BF16, .batch = 2, .n = 1 << 20, .k = 4096,
          .gen = {.dist = GEN_SORTED_ASC});
  GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = TOPK_F32, .batch = 5, .n = 131072, .k = 8000,
          .flags = TOPK_SMALLEST | TOPK_SORTED, .gen = {.dist = GEN_UNIFORM});
  GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = TOPK_F32, .batch = 2, .n = 70001, .k = 2500, .ld = 70005,
          .gen = {.dist = GEN_NORMAL});
  static const int64_t off[] = {0, 0, 1, 2999, 3000, 9001, 30001, 30002, 90000};
  for (int d = 0; d < 3; ++d)
    GPU_RUN(.algo = TOPK_ALGO_BLOCK_SELECT, .dtype = (topk_dtype[]){TOPK_F16, TOPK_F64, TOPK_U32}[d],
            .batch = COUNT(off) - 1, .n = 90000, .k = 5000, .flags = d == 1 ? TOPK_SMALLEST : 0u,
            .gen = {.dist = GEN_ZIPF}, .offsets = off);
  return TEST_OK;
}

/* k beyond the largest queue: refused, with nothing written. */
TEST(k_too_large) {
  GPU_SKIP_WITHOUT_DEVICE();
  for (int a = 0; a < COUNT(algos); ++a) {
    const int64_t k = algos[a] == TOPK_ALGO_BLOCK_SELECT ? 8193 : 2049;
    topk_problem p = {.batch = 1, .n = 10000, .k = k, .algo = algos[a], .backend = TOPK_BACKEND_CUDA};
    size_t ws = 0;
    ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_ERR_UNSUPPORTED);
  }
  return TEST_OK;
}

#define TEST_LIST(X)      \
  X(sanitizer_small)      \
  X(dtypes_directions)    \
  X(bucket_edges)         \
  X(block_smem_queue)     \
  X(short_rows)           \
  X(distributions)        \
  X(index_types)          \
  X(leading_dimension)    \
  X(variable_rows)        \
  X(many_rows)            \
  X(grid_long_rows)       \
  X(grid_top1)            \
  X(k_too_large)
TEST_MAIN(TEST_LIST)
