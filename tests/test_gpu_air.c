/*
 * test_gpu_air.c: AIR Top-K (TOPK_ALGO_AIR_RADIX on the CUDA backend) against the
 * CPU reference, through the public API (DESIGN.md "Testing": differential).
 *
 * Every case runs through tests/gpu_case.h (generate, copy, poison the outputs,
 * topk_select with algo = AIR_RADIX on the CUDA backend, copy back) into check_topk
 * (tests/check.h): values equal in[row][idx] bit for bit, distinct indices, the reference's
 * multiset, the reference's index set unless TOPK_NONDETERMINISTIC, order when
 * TOPK_SORTED, padding for rows shorter than k.
 *
 * Every path of the implementation is covered: TOPK_AIR_PATH=one|multi|fused|cluster|adaptive|rows|resident
 * forces one (air_radix.cu); without it the shape decides. TOPK_AIR_ALPHA changes the
 * buffering threshold, to reach both "always buffer" and "never buffer".
 *
 * Skips (exit 77) where no CUDA device is usable. `sanitizer_small` is the quick
 * subset for compute-sanitizer (memcheck, racecheck):
 *   compute-sanitizer --tool racecheck ./test_gpu_air sanitizer_small
 */
#include <stdio.h>

#include "gpu_case.h"
#include "harness.h"
#include "topk.h"

static const topk_dtype all_dtypes[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                        TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct air_case {
  topk_dtype     dtype;
  int64_t        batch, n, k, ld;
  unsigned       flags;
  topk_index     index_type;
  gen_opts       gen;           /* seed 0: the test seed */
  const int64_t* offsets;       /* host, batch + 1 entries; NULL: uniform rows */
  const char*    path;          /* "one", "multi", or NULL: the algorithm decides */
  const char*    alpha;         /* TOPK_AIR_ALPHA, or NULL for the default */
  const char*    cluster_cs;    /* TOPK_AIR_CLUSTER_CS, or NULL: the launch decides */
  const char*    cluster_del;   /* TOPK_AIR_CLUSTER_DELEGATES ("0": no delegate start), or NULL for the default */
  const char*    cluster_wide;  /* TOPK_AIR_CLUSTER_WIDE ("0": no wide start; K: for k <= K), or NULL */
  const char*    rows_cap;      /* TOPK_AIR_ROWS_CAP (ROWS candidate buffer), or NULL for the default */
  const char*    rows_bits;     /* TOPK_AIR_ROWS_FIRST_BITS, or NULL for the default */
  const char*    rows_stream;   /* TOPK_AIR_ROWS_STREAM ("0": no one-read start), or NULL for the default */
  const char*    rows_sample;   /* TOPK_AIR_ROWS_SAMPLE ("0": the stream without its sampled start), or NULL */
  const char*    rows_keep;     /* TOPK_AIR_ROWS_SAMPLE_KEEP (the sample's keep forced), or NULL */
  const char*    res_vecs;      /* TOPK_AIR_RES_VECS (RESIDENT vectors per thread aimed at), or NULL */
  const char*    res_rank;      /* TOPK_AIR_RES_RANK ("0": RESIDENT's radix finish only), or NULL */
  const char*    res_del;       /* TOPK_AIR_RES_DELEGATES ("0": no delegate start; K: for k <= K), or NULL */
  const char*    start;         /* TOPK_AIR_START (MULTI's sampled start: "0" off, N: rows of >= N), or NULL */
  const char*    start_rank;    /* TOPK_AIR_START_RANK (the start's sample rank forced), or NULL */
  int            lib_workspace; /* pass no workspace: the library allocates it */
  int            out_shift;     /* outputs this many elements into their buffers (gpu_case.h) */
} air_case;

/* The case through the shared runner (tests/gpu_case.h), with the path and alpha as environment. */
static int run_case(const air_case* a) {
  const gpu_case c = {.algo = TOPK_ALGO_AIR_RADIX,
                      .dtype = a->dtype,
                      .batch = a->batch,
                      .n = a->n,
                      .k = a->k,
                      .ld = a->ld,
                      .flags = a->flags,
                      .index_type = a->index_type,
                      .gen = a->gen,
                      .offsets = a->offsets,
                      .env = {{"TOPK_AIR_PATH", a->path},
                              {"TOPK_AIR_ALPHA", a->alpha},
                              {"TOPK_AIR_CLUSTER_CS", a->cluster_cs},
                              {"TOPK_AIR_CLUSTER_DELEGATES", a->cluster_del},
                              {"TOPK_AIR_CLUSTER_WIDE", a->cluster_wide},
                              {"TOPK_AIR_ROWS_CAP", a->rows_cap},
                              {"TOPK_AIR_ROWS_FIRST_BITS", a->rows_bits},
                              {"TOPK_AIR_ROWS_STREAM", a->rows_stream},
                              {"TOPK_AIR_ROWS_SAMPLE", a->rows_sample},
                              {"TOPK_AIR_ROWS_SAMPLE_KEEP", a->rows_keep},
                              {"TOPK_AIR_RES_VECS", a->res_vecs},
                              {"TOPK_AIR_RES_RANK", a->res_rank},
                              {"TOPK_AIR_RES_DELEGATES", a->res_del},
                              {"TOPK_AIR_START", a->start},
                              {"TOPK_AIR_START_RANK", a->start_rank}},
                      .lib_workspace = a->lib_workspace,
                      .out_shift = a->out_shift};
  return gpu_case_run(&c, test_seed());
}

#define SKIP_WITHOUT_GPU() GPU_SKIP_WITHOUT_DEVICE()

#define RUN(...)                                        \
  do {                                                  \
    air_case c_ = {__VA_ARGS__};                        \
    ASSERT_EQ_I64(run_case(&c_), 0);                    \
  } while (0)

/* The paths; "one" serves short rows (the tests give it short rows). */
static const char* const paths[] = {"multi", "one", "fused", "cluster", "rows", "resident"};
#define NPATHS COUNT(paths)

/* ------------------------------------------------------------------ tests */

/* Small and quick: both paths, buffering, index passes, offsets, sorted. For compute-sanitizer. */
TEST(sanitizer_small) {
  SKIP_WITHOUT_GPU();
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 100, .gen = {.dist = GEN_UNIFORM}, .path = "multi");
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 100, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .path = "multi", .alpha = "4");
  /* f16: many ties at the k-th value -> index passes, from a candidate buffer with alpha 4 */
  RUN(.dtype = TOPK_F16, .batch = 2, .n = 20000, .k = 300, .gen = {.dist = GEN_UNIFORM}, .path = "multi", .alpha = "4");
  RUN(.dtype = TOPK_F16, .batch = 2, .n = 20000, .k = 300, .flags = TOPK_NONDETERMINISTIC,
      .gen = {.dist = GEN_UNIFORM}, .path = "multi", .alpha = "4");
  RUN(.dtype = TOPK_F64, .batch = 5, .n = 700, .k = 33, .flags = TOPK_SORTED | TOPK_SMALLEST,
      .gen = {.dist = GEN_ZIPF}, .path = "one");
  static const int64_t off[] = {0, 0, 3, 40, 1040, 1040, 3000};
  RUN(.dtype = TOPK_BF16, .batch = 6, .n = 3000, .k = 40, .gen = {.dist = GEN_NORMAL}, .offsets = off,
      .path = "multi");
  RUN(.dtype = TOPK_BF16, .batch = 6, .n = 3000, .k = 40, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .offsets = off, .path = "one");
  /* MULTI's sampled start: taken, and failing (too few elements >= the bound) */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 100, .gen = {.dist = GEN_UNIFORM}, .path = "multi", .alpha = "2",
      .start = "1000");
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 100, .gen = {.dist = GEN_NORMAL}, .path = "multi", .alpha = "2",
      .start = "1000", .start_rank = "1");
  /* the fused path: buffering, index passes, offsets */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 100, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .path = "fused", .alpha = "4");
  RUN(.dtype = TOPK_F16, .batch = 2, .n = 20000, .k = 300, .gen = {.dist = GEN_UNIFORM}, .path = "fused", .alpha = "4");
  RUN(.dtype = TOPK_BF16, .batch = 6, .n = 3000, .k = 40, .gen = {.dist = GEN_NORMAL}, .offsets = off, .path = "fused");
  /* the cluster path: 1 and 4 blocks per row, ties across blocks; 16 blocks, three passes */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 100, .gen = {.dist = GEN_ZIPF}, .path = "cluster",
      .cluster_cs = "1");
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 70001, .k = 100, .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 8},
      .path = "cluster", .cluster_cs = "16");
  RUN(.dtype = TOPK_BF16, .batch = 2, .n = 180000, .k = 300, .flags = TOPK_SORTED, .gen = {.dist = GEN_ALL_EQUAL},
      .path = "cluster");
  /* the cluster path for one row given by offsets (sized for the whole buffer): an unaligned
   * row over 7 of 8 blocks; a short row in the first of 4 blocks, the others empty */
  static const int64_t off_c8[] = {37, 150037}, off_c4[] = {5, 3005};
  RUN(.dtype = TOPK_F32, .batch = 1, .n = 180000, .k = 1000, .gen = {.dist = GEN_ZIPF}, .offsets = off_c8,
      .path = "cluster");
  RUN(.dtype = TOPK_BF16, .batch = 1, .n = 100000, .k = 40, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .offsets = off_c4, .path = "cluster");
  /* the cluster path's delegate start: done in it; after it, the radix passes (ascending rows) */
  RUN(.dtype = TOPK_U64, .batch = 2, .n = 50000, .k = 64, .gen = {.dist = GEN_NORMAL}, .path = "cluster");
  /* the cluster path's wide start: done in it (8 blocks, and 1 block with the delegate start off);
   * after it, the radix passes (descending rows overflow a segment) */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 50000, .k = 300, .gen = {.dist = GEN_NORMAL}, .path = "cluster");
  RUN(.dtype = TOPK_BF16, .batch = 2, .n = 20000, .k = 30, .gen = {.dist = GEN_UNIFORM}, .path = "cluster",
      .cluster_cs = "1", .cluster_del = "0");
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 50000, .k = 300, .gen = {.dist = GEN_SORTED_DESC}, .path = "cluster");
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 70001, .k = 50, .gen = {.dist = GEN_SORTED_ASC}, .path = "cluster");
  /* the wide start's collection by the list of its collecting threads (4 blocks of 2500 vectors),
   * and with too many threads to list (all equal: each collects its own vectors, a segment overflows) */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 40000, .k = 300, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
      .cluster_cs = "4");
  RUN(.dtype = TOPK_F32, .batch = 1, .n = 40000, .k = 300, .gen = {.dist = GEN_ALL_EQUAL}, .path = "cluster",
      .cluster_cs = "4");
  /* the starts' staging of 32-bit keys with a few NaN: the threads that met one stage again */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 50000, .k = 300, .flags = TOPK_SMALLEST,
      .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.001}, .path = "cluster");
  /* the adaptive path: a short row (one-block kernel) and a long one (fused kernel) */
  static const int64_t off_ad[] = {0, 2000, 402000};
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 402000, .k = 100, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM},
      .offsets = off_ad, .path = "adaptive");
  /* the rows path: the one-read start with compactions (normal), giving up after the compaction
   * limit (ascending, exact threshold) or on ties (all equal, misaligned); the sampled start
   * (ascending), and its threshold too high (keep forced to 1: the row streams again); without
   * the start, buffered from pass 1; with a tiny buffer, ties broken over global memory */
  RUN(.dtype = TOPK_F32, .batch = 3, .n = 20000, .k = 100, .gen = {.dist = GEN_NORMAL}, .path = "rows");
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 70000, .k = 100, .gen = {.dist = GEN_SORTED_ASC}, .path = "rows",
      .rows_stream = "1");
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 70000, .k = 100, .gen = {.dist = GEN_SORTED_ASC}, .path = "rows");
  RUN(.dtype = TOPK_BF16, .batch = 2, .n = 70000, .k = 300, .gen = {.dist = GEN_NORMAL}, .path = "rows",
      .rows_keep = "1");
  RUN(.dtype = TOPK_BF16, .batch = 2, .n = 30001, .k = 500, .ld = 30003, .flags = TOPK_SORTED,
      .gen = {.dist = GEN_ALL_EQUAL}, .path = "rows");
  RUN(.dtype = TOPK_F32, .batch = 3, .n = 20000, .k = 100, .gen = {.dist = GEN_NORMAL}, .path = "rows",
      .rows_stream = "0");
  RUN(.dtype = TOPK_BF16, .batch = 3, .n = 9001, .k = 300, .ld = 9003, .flags = TOPK_SORTED,
      .gen = {.dist = GEN_ZIPF}, .path = "rows", .rows_cap = "64");
  /* the resident path: one pass and the finish (normal); the tie path over blocks (all equal,
   * a misaligned stride: heads and tails; after the delegate start and after the passes); one
   * block with a head and a tail; sorted */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 40000, .k = 100, .gen = {.dist = GEN_NORMAL}, .path = "resident");
  RUN(.dtype = TOPK_BF16, .batch = 2, .n = 30001, .k = 500, .ld = 30003, .gen = {.dist = GEN_ALL_EQUAL},
      .path = "resident");
  RUN(.dtype = TOPK_BF16, .batch = 2, .n = 30001, .k = 500, .ld = 30003, .gen = {.dist = GEN_ALL_EQUAL},
      .path = "resident", .res_del = "0");
  /* block bounds from the warps' top two thread maxima (20 blocks, k = 70: 7 a block) */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 40000, .k = 70, .gen = {.dist = GEN_NORMAL}, .path = "resident");
  RUN(.dtype = TOPK_F16, .batch = 2, .n = 5001, .k = 70, .ld = 5003, .flags = TOPK_SORTED,
      .gen = {.dist = GEN_ZIPF}, .path = "resident", .res_vecs = "8");
  /* the copy path (k = n, unsorted, no path forced): a row stride, NaN and inf */
  RUN(.dtype = TOPK_F32, .batch = 3, .n = 777, .k = 777, .ld = 780,
      .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.1, .inf_fraction = 0.1});
  /* the race_one_block shape once, so that racecheck covers the one-block kernel on it */
  RUN(.dtype = TOPK_BF16, .batch = 56, .n = 2067, .k = 1795, .index_type = TOPK_INDEX_I64,
      .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.1, .inf_fraction = 0.1}, .path = "one");
  return TEST_OK;
}

/*
 * The shape of an intermittent failure seen once on the H100 through the Python package
 * (torch (7, 2067, 8) bf16, dim = -2, k = 1795, largest, unsorted, NaN/+-inf mixed in:
 * 56 rows of 2067 after the move to the last axis; one block per row, the row staged,
 * most of it selected, many exact bf16 ties), run 20 times on the same input in each
 * direction, every run checked: a race in the one-block kernel would show as a flaky run.
 */
TEST(race_one_block) {
  SKIP_WITHOUT_GPU();
  for (int rep = 0; rep < 20; ++rep)
    for (int smallest = 0; smallest < 2; ++smallest)
      RUN(.dtype = TOPK_BF16, .batch = 56, .n = 2067, .k = 1795, .flags = smallest ? TOPK_SMALLEST : 0u,
          .index_type = TOPK_INDEX_I64, .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.1, .inf_fraction = 0.1},
          .path = "one");
  return TEST_OK;
}

/* Every dtype, both directions, sorted or not, on both paths. */
TEST(dtypes_directions) {
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(all_dtypes); ++d)
    for (int f = 0; f < 4; ++f) {
      const unsigned flags = (f & 1 ? TOPK_SMALLEST : 0u) | (f & 2 ? TOPK_SORTED : 0u);
      RUN(.dtype = all_dtypes[d], .batch = 2, .n = 50000, .k = 500, .flags = flags, .gen = {.dist = GEN_NORMAL});
      RUN(.dtype = all_dtypes[d], .batch = 20, .n = 2000, .k = 64, .flags = flags, .gen = {.dist = GEN_UNIFORM});
    }
  return TEST_OK;
}

/* The distributions of DESIGN.md, radix-adversarial ones included, on both paths. */
TEST(distributions) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_F64, TOPK_I32};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g)
      for (int smallest = 0; smallest < 2; ++smallest) {
        const unsigned flags = smallest ? TOPK_SMALLEST : 0u;
        RUN(.dtype = dts[d], .batch = 1, .n = 100000, .k = 1000, .flags = flags, .gen = gpu_case_dists[g]);
        RUN(.dtype = dts[d], .batch = 8, .n = 3000, .k = 100, .flags = flags | TOPK_SORTED, .gen = gpu_case_dists[g]);
      }
  return TEST_OK;
}

/* k = 1, n - 1, n on both paths, deterministic or not, sorted or not. */
TEST(k_extremes) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_U64};
  static const gen_dist gd[] = {GEN_UNIFORM, GEN_ALL_EQUAL, GEN_ZIPF};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < COUNT(gd); ++g)
      for (int pa = 0; pa < NPATHS; ++pa)
        for (int f = 0; f < 4; ++f) {
          const int64_t n = pa != 1 ? 30000 : 1000;
          const int64_t ks[3] = {1, n - 1, n};
          const unsigned flags = (f & 1 ? TOPK_NONDETERMINISTIC : 0u) | (f & 2 ? TOPK_SORTED : 0u);
          for (int ki = 0; ki < 3; ++ki)
            RUN(.dtype = dts[d], .batch = 2, .n = n, .k = ks[ki], .flags = flags, .gen = {.dist = gd[g]},
                .path = paths[pa]);
        }
  /* the smallest rows */
  for (int pa = 0; pa < NPATHS; ++pa) {
    RUN(.dtype = TOPK_F32, .batch = 3, .n = 1, .k = 1, .gen = {.dist = GEN_NORMAL}, .path = paths[pa]);
    RUN(.dtype = TOPK_F32, .batch = 3, .n = 2, .k = 1, .gen = {.dist = GEN_ALL_EQUAL}, .path = paths[pa]);
    RUN(.dtype = TOPK_I64, .batch = 3, .n = 5, .k = 3, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF},
        .path = paths[pa]);
  }
  return TEST_OK;
}

/*
 * The RESIDENT path (one cooperative launch, rows in registers; forced here, the default only
 * where res_by_default measured it faster): every <= 4-byte dtype and direction, every distribution (each way out of the
 * passes: early stop, the rank finish, the radix finish with its index digits, more passes, the tie path), k from 1
 * to beyond the finish's capacity, misaligned strides (head and tail elements), one block per
 * row and the most a row can hold, index types, sorted.
 */
TEST(resident_path) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_I32, TOPK_U32};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g)
      for (int f = 0; f < 2; ++f) {
        const unsigned flags = f ? TOPK_SMALLEST | TOPK_SORTED : 0u;
        RUN(.dtype = dts[d], .batch = 3, .n = 32000, .k = 50, .flags = flags, .gen = gpu_case_dists[g],
            .path = "resident");
        RUN(.dtype = dts[d], .batch = 1, .n = 151936, .k = 1024, .ld = 151939, .flags = flags,
            .gen = gpu_case_dists[g], .path = "resident");
        /* the few candidates these leave go to the rank finish by default: the radix finish too */
        if (d < 3)
          RUN(.dtype = dts[d], .batch = 3, .n = 32000, .k = 50, .flags = flags, .gen = gpu_case_dists[g],
              .path = "resident", .res_rank = "0");
        /* k <= 1024 takes the delegate start by default: the radix passes from the first digit too */
        if (d < 3) {
          RUN(.dtype = dts[d], .batch = 3, .n = 32000, .k = 50, .flags = flags, .gen = gpu_case_dists[g],
              .path = "resident", .res_del = "0");
          RUN(.dtype = dts[d], .batch = 1, .n = 151936, .k = 1024, .ld = 151939, .flags = flags,
              .gen = gpu_case_dists[g], .path = "resident", .res_del = "0");
        }
      }
  static const gen_dist gd[] = {GEN_NORMAL, GEN_UNIFORM, GEN_ALL_EQUAL, GEN_ZIPF, GEN_SORTED_ASC};
  for (int g = 0; g < COUNT(gd); ++g) {
    /* k around the finish's capacity (4096) and far beyond it; k = n - 1 */
    static const int64_t ks[] = {1, 2, 4095, 4096, 4097, 30000, 99999};
    for (int ki = 0; ki < COUNT(ks); ++ki) {
      RUN(.dtype = TOPK_F32, .batch = 2, .n = 100000, .k = ks[ki], .gen = {.dist = gd[g]}, .path = "resident");
      RUN(.dtype = TOPK_BF16, .batch = 1, .n = 100000, .k = ks[ki], .flags = TOPK_SORTED, .gen = {.dist = gd[g]},
          .path = "resident");
      /* the delegate start for every k: past the candidate buffer it falls back to the radix passes */
      RUN(.dtype = TOPK_F32, .batch = 2, .n = 100000, .k = ks[ki], .gen = {.dist = gd[g]}, .path = "resident",
          .res_del = "100000");
    }
    /* the delegate start with the last block's radix finish, and with one block a row */
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 100000, .k = 700, .gen = {.dist = gd[g]}, .path = "resident",
        .res_rank = "0");
    RUN(.dtype = TOPK_F32, .batch = 3, .n = 5001, .k = 200, .ld = 5003, .gen = {.dist = gd[g]}, .path = "resident",
        .res_vecs = "8", .res_del = "5000");
    /* the largest LLM shape (the most blocks a row can hold), and one row of 2^20 + 3 */
    RUN(.dtype = TOPK_F32, .batch = 8, .n = 262144, .k = 1024, .gen = {.dist = gd[g]}, .path = "resident");
    RUN(.dtype = TOPK_F32, .batch = 1, .n = ((int64_t)1 << 20) + 3, .k = 2048, .gen = {.dist = gd[g]},
        .path = "resident");
    /* the delegate start over more than 256 blocks (264 on the H100: 16 bounds a lane); block
     * bounds from warp maxima (k = 500: 4 a block) and from all thread maxima (k = 1000: 8) */
    RUN(.dtype = TOPK_F32, .batch = 1, .n = ((int64_t)1 << 20) + 3, .k = 500, .gen = {.dist = gd[g]},
        .path = "resident");
    RUN(.dtype = TOPK_F32, .batch = 1, .n = ((int64_t)1 << 20) + 3, .k = 1000, .gen = {.dist = gd[g]},
        .path = "resident");
    /* rows that fit only at two blocks an SM (the occupancy, not one block an SM) */
    RUN(.dtype = TOPK_F32, .batch = 1, .n = ((int64_t)1 << 21) - 5, .k = 8, .gen = {.dist = gd[g]},
        .path = "resident");
    RUN(.dtype = TOPK_BF16, .batch = 1, .n = 3 * ((int64_t)1 << 20) + 1, .k = 700, .flags = TOPK_SORTED,
        .gen = {.dist = gd[g]}, .path = "resident");
    /* one block per row (8 vectors a thread), with a head and a tail; and one vector a thread */
    RUN(.dtype = TOPK_F32, .batch = 3, .n = 5001, .k = 33, .ld = 5003, .gen = {.dist = gd[g]}, .path = "resident",
        .res_vecs = "8");
    RUN(.dtype = TOPK_BF16, .batch = 5, .n = 70001, .k = 300, .ld = 70005, .flags = TOPK_SMALLEST,
        .gen = {.dist = gd[g]}, .path = "resident", .res_vecs = "1");
  }
  /* the delegate start on few distinct values: bf16 uniform rows (~2k keys at the top value:
   * the keys above the threshold as candidates, or the tie path) and radix-adversarial 16-bit
   * rows (256 values: the tie path), sorted and not */
  for (int f = 0; f < 2; ++f) {
    const unsigned flags = f ? TOPK_SORTED : 0u;
    static const int64_t kd[] = {50, 300, 1024};
    for (int ki = 0; ki < COUNT(kd); ++ki) {
      RUN(.dtype = TOPK_BF16, .batch = 1, .n = (int64_t)1 << 20, .k = kd[ki], .flags = flags,
          .gen = {.dist = GEN_UNIFORM}, .path = "resident");
      RUN(.dtype = TOPK_F16, .batch = 1, .n = (int64_t)1 << 20, .k = kd[ki], .flags = flags,
          .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 8}, .path = "resident");
      /* 16 values, misaligned rows (head and tail scalars): the ties of several blocks taken in
       * index order; both directions */
      RUN(.dtype = TOPK_BF16, .batch = 2, .n = ((int64_t)1 << 20) + 3, .k = kd[ki], .ld = ((int64_t)1 << 20) + 5,
          .flags = flags | (ki == 1 ? TOPK_SMALLEST : 0u), .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 12},
          .path = "resident");
    }
  }
  /* the tie path after the radix passes (no delegate start): all-equal rows over many blocks,
   * with a head and a tail */
  RUN(.dtype = TOPK_F32, .batch = 1, .n = ((int64_t)1 << 20) + 3, .k = 1000, .ld = ((int64_t)1 << 20) + 5,
      .gen = {.dist = GEN_ALL_EQUAL}, .path = "resident", .res_del = "0");
  RUN(.dtype = TOPK_BF16, .batch = 2, .n = 300001, .k = 5000, .flags = TOPK_SMALLEST,
      .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 12}, .path = "resident", .res_del = "0");
  /* block bounds from each warp's top two thread maxima (q = 5..8: 256 blocks, k = 1000), top
   * four (q = 9..16: 147 and 132 blocks) and the block-wide search (q > 16: 98 blocks) */
  for (int g = 0; g < 3; ++g) {
    static const gen_dist gq[] = {GEN_NORMAL, GEN_UNIFORM, GEN_RADIX_ADVERSARIAL};
    RUN(.dtype = TOPK_BF16, .batch = 1, .n = (int64_t)1 << 20, .k = 1000, .gen = {.dist = gq[g]}, .path = "resident");
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 300001, .k = 1024, .gen = {.dist = gq[g]}, .path = "resident",
        .res_del = "1024");
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 262144, .k = 1024, .gen = {.dist = gq[g]}, .path = "resident");
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 200000, .k = 1024, .gen = {.dist = gq[g]}, .path = "resident",
        .res_del = "1024");
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 1 << 19, .k = 700, .gen = {.dist = gq[g]}, .path = "resident",
        .res_del = "1024");
  }
  /* index types; k = n, which the path leaves to the copy (forced, it falls back) */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 50000, .k = 64, .index_type = TOPK_INDEX_I64,
      .gen = {.dist = GEN_NORMAL}, .path = "resident");
  RUN(.dtype = TOPK_F16, .batch = 2, .n = 50000, .k = 64, .index_type = TOPK_INDEX_NONE,
      .gen = {.dist = GEN_UNIFORM}, .path = "resident");
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 50000, .k = 50000, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .path = "resident");
  return TEST_OK;
}

/* k = n, unsorted, no path forced: the copy path (air_copy_kernel), which AUTO also takes.
 * Every element width, both directions, index types, row strides, NaN/inf, one row and many. */
TEST(copy_path) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64, TOPK_I32, TOPK_U64};
  static const topk_index its[] = {TOPK_INDEX_I64, TOPK_INDEX_I32, TOPK_INDEX_NONE};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int i = 0; i < COUNT(its); ++i) {
      const unsigned flags = i == 1 ? TOPK_SMALLEST : 0u;
      RUN(.dtype = dts[d], .batch = 1, .n = 8192, .k = 8192, .index_type = its[i], .flags = flags,
          .gen = {.dist = GEN_UNIFORM, .nan_fraction = 0.05, .inf_fraction = 0.05});
      RUN(.dtype = dts[d], .batch = 1000, .n = 37, .k = 37, .ld = 41, .index_type = its[i], .flags = flags,
          .gen = {.dist = GEN_ALL_EQUAL});
      RUN(.dtype = dts[d], .batch = 5, .n = 1, .k = 1, .index_type = its[i], .gen = {.dist = GEN_NORMAL});
    }
  /* AUTO takes the same path */
  GPU_RUN(.algo = TOPK_ALGO_AUTO, .dtype = TOPK_BF16, .batch = 300, .n = 300, .k = 300, .gen = {.dist = GEN_ZIPF});
  return TEST_OK;
}

/* int32, int64 and no indices; sorted or not; both paths, both sort encodings (32- and 64-bit keys). */
TEST(index_types) {
  static const topk_index its[] = {TOPK_INDEX_I64, TOPK_INDEX_I32, TOPK_INDEX_NONE};
  static const topk_dtype dts[] = {TOPK_F32, TOPK_I64};
  SKIP_WITHOUT_GPU();
  for (int i = 0; i < COUNT(its); ++i)
    for (int d = 0; d < COUNT(dts); ++d)
      for (int pa = 0; pa < NPATHS; ++pa)
        for (int sorted = 0; sorted < 2; ++sorted)
          RUN(.dtype = dts[d], .batch = 3, .n = pa != 1 ? 40000 : 2500, .k = 257, .flags = sorted ? TOPK_SORTED : 0u,
              .index_type = its[i], .gen = {.dist = GEN_ZIPF}, .path = paths[pa]);
  return TEST_OK;
}

/* TOPK_NONDETERMINISTIC: any tied elements (check_topk then checks the multiset only). */
TEST(nondeterministic) {
  static const gen_dist gd[] = {GEN_ZIPF, GEN_ALL_EQUAL, GEN_UNIFORM};
  SKIP_WITHOUT_GPU();
  for (int g = 0; g < COUNT(gd); ++g)
    for (int pa = 0; pa < NPATHS; ++pa)
      for (int sorted = 0; sorted < 2; ++sorted) {
        const unsigned flags = TOPK_NONDETERMINISTIC | (sorted ? TOPK_SORTED : 0u);
        RUN(.dtype = TOPK_F16, .batch = 4, .n = pa != 1 ? 100000 : 4000, .k = 1500, .flags = flags,
            .gen = {.dist = gd[g]}, .path = paths[pa]);
        RUN(.dtype = TOPK_I32, .batch = 4, .n = pa != 1 ? 100000 : 4000, .k = 7, .flags = flags | TOPK_SMALLEST,
            .gen = {.dist = gd[g]}, .path = paths[pa]);
      }
  return TEST_OK;
}

/* Variable-length rows from device offsets: empty rows, rows shorter than k, equal to k, long. */
TEST(variable_rows) {
  static const int64_t off[] = {0, 0, 1, 6, 69, 70, 71, 3071, 3071, 103071, 103072, 110000, 110000};
  const int64_t batch = COUNT(off) - 1, n = off[COUNT(off) - 1];
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F64, TOPK_BF16, TOPK_U32};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int pa = 0; pa <= NPATHS; ++pa)
      for (int f = 0; f < 8; ++f) {
        const unsigned flags = (f & 1 ? TOPK_SORTED : 0u) | (f & 2 ? TOPK_NONDETERMINISTIC : 0u) |
                               (f & 4 ? TOPK_SMALLEST : 0u);
        RUN(.dtype = dts[d], .batch = batch, .n = n, .k = 70, .flags = flags, .gen = {.dist = GEN_ZIPF},
            .offsets = off, .path = pa < NPATHS ? paths[pa] : NULL);
      }
  /* k larger than every row; the whole buffer as one row; alpha that always buffers */
  RUN(.dtype = TOPK_F32, .batch = batch, .n = n, .k = 200000, .gen = {.dist = GEN_NORMAL}, .offsets = off,
      .path = "multi");
  static const int64_t one_row[] = {0, 50000};
  RUN(.dtype = TOPK_F16, .batch = 1, .n = 50000, .k = 4000, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM},
      .offsets = one_row, .path = "multi", .alpha = "2");
  return TEST_OK;
}

/*
 * The ADAPTIVE path (TOPK_AIR_PATH=adaptive; Dr. Top-k's second step takes it unforced):
 * rows by offsets, each done by the one-block kernel when it fits its stage (32 KB: 8192
 * f32, 16384 bf16, 4096 u64 elements) and by the fused kernel when longer; rows shorter
 * than k, empty rows; both directions, sorted or not, ties.
 */
TEST(adaptive_rows) {
  /* rows: 3 (< k), 5000 (one-block; u64: fused), empty, 400000 (fused), 4997 (one-block; u64: fused) */
  static const int64_t off[] = {0, 3, 5003, 5003, 405003, 410000};
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_U64};
  static const gen_dist gd[] = {GEN_UNIFORM, GEN_ALL_EQUAL, GEN_ZIPF};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < COUNT(gd); ++g)
      for (int f = 0; f < 4; ++f) {
        const unsigned flags = (f & 1 ? TOPK_SORTED : 0u) | (f & 2 ? TOPK_SMALLEST : 0u);
        RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = off[COUNT(off) - 1], .k = 1000, .flags = flags,
            .gen = {.dist = gd[g]}, .offsets = off, .path = "adaptive");
      }
  /* one row: short in a large buffer (one-block), or longer than the stage (fused only) */
  static const int64_t short_row[] = {1001, 8001}, long_row[] = {7, 500007};
  RUN(.dtype = TOPK_F32, .batch = 1, .n = (int64_t)1 << 21, .k = 777, .gen = {.dist = GEN_NORMAL},
      .offsets = short_row, .path = "adaptive");
  RUN(.dtype = TOPK_F32, .batch = 1, .n = 600000, .k = 777, .flags = TOPK_NONDETERMINISTIC,
      .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20}, .offsets = long_row, .path = "adaptive");
  RUN(.dtype = TOPK_U64, .batch = 1, .n = 600000, .k = 5, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM},
      .offsets = long_row, .path = "adaptive");
  return TEST_OK;
}

/*
 * Keys sharing their leading bits (the one-block and cluster paths start their passes
 * below the bits every key of the row shares): 8..24 equal leading bits, all equal,
 * 64-bit keys, both directions.
 */
TEST(common_prefix) {
  static const int eq_bits[] = {8, 16, 20, 24};
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_F64, TOPK_U64};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int e = 0; e < COUNT(eq_bits); ++e)
      for (int pa = 1; pa < NPATHS; pa += 2) { /* "one" and "cluster" */
        const int64_t n = pa == 1 ? 3000 : 60000;
        RUN(.dtype = dts[d], .batch = 3, .n = n, .k = 100, .flags = e & 1 ? TOPK_SMALLEST : 0u,
            .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = eq_bits[e]}, .path = paths[pa]);
        RUN(.dtype = dts[d], .batch = 3, .n = n, .k = n / 2, .flags = TOPK_SORTED | (e & 1 ? 0u : TOPK_SMALLEST),
            .gen = {.dist = e == 3 ? GEN_ALL_EQUAL : GEN_RADIX_ADVERSARIAL, .equal_bits = eq_bits[e]},
            .path = paths[pa]);
      }
  return TEST_OK;
}

/* Many rows: 10^4 short rows (one block per row), and chunked MULTI launches (1024 rows per chunk). */
TEST(many_rows) {
  SKIP_WITHOUT_GPU();
  RUN(.dtype = TOPK_F32, .batch = 10000, .n = 256, .k = 16, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_F32, .batch = 10000, .n = 256, .k = 16, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  RUN(.dtype = TOPK_BF16, .batch = 10000, .n = 1000, .k = 100, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_UNIFORM});
  RUN(.dtype = TOPK_F32, .batch = 3000, .n = 1000, .k = 10, .gen = {.dist = GEN_ZIPF}, .path = "multi");
  RUN(.dtype = TOPK_F64, .batch = 2100, .n = 600, .k = 599, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM},
      .path = "multi");
  return TEST_OK;
}

/* Row stride larger than the row. */
TEST(leading_dimension) {
  SKIP_WITHOUT_GPU();
  for (int pa = 0; pa < NPATHS; ++pa) {
    RUN(.dtype = TOPK_F32, .batch = 5, .n = 9000, .k = 50, .ld = 9017, .gen = {.dist = GEN_NORMAL}, .path = paths[pa]);
    RUN(.dtype = TOPK_F16, .batch = 5, .n = 9000, .k = 9000, .ld = 10000, .flags = TOPK_SORTED,
        .gen = {.dist = GEN_ZIPF}, .path = paths[pa]);
  }
  return TEST_OK;
}

/* Both ends of the adaptive buffer: alpha 2 buffers from pass 1, a huge alpha never buffers. */
TEST(alpha_extremes) {
  static const char* const alphas[] = {"2", "1000000000"};
  SKIP_WITHOUT_GPU();
  for (int a = 0; a < 2; ++a)
    for (int f = 0; f < 4; ++f) {
      const unsigned flags = (f & 1 ? TOPK_NONDETERMINISTIC : 0u) | (f & 2 ? TOPK_SORTED : 0u);
      RUN(.dtype = TOPK_F32, .batch = 2, .n = 200000, .k = 5000, .flags = flags, .gen = {.dist = GEN_UNIFORM},
          .path = "multi", .alpha = alphas[a]);
      RUN(.dtype = TOPK_F16, .batch = 2, .n = 200000, .k = 5000, .flags = flags, .gen = {.dist = GEN_UNIFORM},
          .path = "multi", .alpha = alphas[a]);
      RUN(.dtype = TOPK_U64, .batch = 2, .n = 100000, .k = 77, .flags = flags,
          .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 40}, .path = "multi", .alpha = alphas[a]);
      RUN(.dtype = TOPK_F32, .batch = 3, .n = 200000, .k = 5000, .flags = flags, .gen = {.dist = GEN_UNIFORM},
          .path = "fused", .alpha = alphas[a]);
      RUN(.dtype = TOPK_U64, .batch = 2, .n = 100000, .k = 77, .flags = flags,
          .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 40}, .path = "fused", .alpha = alphas[a]);
    }
  return TEST_OK;
}

/* The library allocates the workspace (stream-ordered) when none is passed. */
TEST(library_workspace) {
  SKIP_WITHOUT_GPU();
  RUN(.dtype = TOPK_F32, .batch = 3, .n = 70000, .k = 99, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .lib_workspace = 1);
  RUN(.dtype = TOPK_F32, .batch = 30, .n = 700, .k = 99, .gen = {.dist = GEN_NORMAL}, .lib_workspace = 1);
  return TEST_OK;
}

/*
 * Sorted output sorted inside the one-block kernel (AIR_OUT_BLOCK, air_radix.cu): m =
 * next power of two >= k <= 2048 and staged row + m x (8 + 4) bytes <= 45056. Rows
 * staged at 32 KB (f32 8192, f16 16384, f64 4096): k <= 1024 in the kernel, 1025 by
 * CUB; uniform rows of 3000 f32 (12 KB staged): k <= 2048 in the kernel.
 */
TEST(block_sort) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_F64, TOPK_I32, TOPK_U64};
  static const int64_t stage_n[] = {8192, 16384, 4096, 8192, 4096};
  static const gen_opts dists[] = {
      {.dist = GEN_UNIFORM},
      {.dist = GEN_ALL_EQUAL},
      {.dist = GEN_ZIPF},
      {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 16},
      {.dist = GEN_NORMAL, .nan_fraction = 0.3, .inf_fraction = 0.2},
      {.dist = GEN_UNIFORM, .nan_fraction = 1.0},
  };
  static const int64_t ks[] = {1, 8, 511, 513, 1023, 1024, 1025};
  SKIP_WITHOUT_GPU();
  /* across the threshold, every distribution, both directions (the shape picks the one-block path) */
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < COUNT(dists); ++g)
      for (int ki = 0; ki < COUNT(ks); ++ki) {
        const unsigned flags = TOPK_SORTED | ((d + g + ki) & 1 ? TOPK_SMALLEST : 0u);
        RUN(.dtype = dts[d], .batch = 3, .n = stage_n[d], .k = ks[ki], .flags = flags, .gen = dists[g]);
      }
  /* index types and nondeterministic ties on both sides of the threshold */
  static const topk_index its[] = {TOPK_INDEX_I64, TOPK_INDEX_I32, TOPK_INDEX_NONE};
  for (int i = 0; i < COUNT(its); ++i)
    for (int ki = 4; ki < COUNT(ks); ++ki) {
      RUN(.dtype = TOPK_F32, .batch = 4, .n = 8192, .k = ks[ki], .flags = TOPK_SORTED, .index_type = its[i],
          .gen = {.dist = GEN_ZIPF});
      RUN(.dtype = TOPK_BF16, .batch = 4, .n = 8192, .k = ks[ki], .flags = TOPK_SORTED | TOPK_NONDETERMINISTIC,
          .index_type = its[i], .gen = {.dist = GEN_ALL_EQUAL});
    }
  /* short uniform rows: threshold at 2048, k = n - 1, k = n, with a row stride (padding: variable rows below) */
  static const int64_t ks_short[] = {2047, 2048, 2049, 2999, 3000};
  for (int ki = 0; ki < COUNT(ks_short); ++ki)
    for (int g = 0; g < COUNT(dists); ++g) {
      RUN(.dtype = TOPK_F32, .batch = 3, .n = 3000, .k = ks_short[ki], .flags = TOPK_SORTED, .gen = dists[g]);
      RUN(.dtype = TOPK_F16, .batch = 2, .n = 3000, .k = ks_short[ki], .ld = 3007, .flags = TOPK_SORTED | TOPK_SMALLEST,
          .gen = dists[g], .path = "one");
    }
  /* variable rows (empty, shorter than k, equal to k, longer than the staged 8192): forced one-block */
  static const int64_t off[] = {0, 0, 1, 6, 69, 70, 71, 1095, 1095, 11095, 11096, 12121, 12121, 13146};
  const int64_t batch = COUNT(off) - 1, n = off[COUNT(off) - 1];
  static const int64_t ks_off[] = {1, 70, 1024, 1025};
  for (int ki = 0; ki < COUNT(ks_off); ++ki)
    for (int f = 0; f < 4; ++f) {
      const unsigned flags = TOPK_SORTED | (f & 1 ? TOPK_SMALLEST : 0u) | (f & 2 ? TOPK_NONDETERMINISTIC : 0u);
      RUN(.dtype = TOPK_F32, .batch = batch, .n = n, .k = ks_off[ki], .flags = flags, .gen = {.dist = GEN_ZIPF},
          .offsets = off, .path = "one");
      RUN(.dtype = TOPK_F64, .batch = batch, .n = n, .k = ks_off[ki], .flags = flags, .index_type = TOPK_INDEX_I32,
          .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.2}, .offsets = off, .path = "one");
    }
  /* the MoE router shape; the library-allocated workspace */
  RUN(.dtype = TOPK_F32, .batch = 16384, .n = 128, .k = 8, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_BF16, .batch = 16384, .n = 128, .k = 8, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  RUN(.dtype = TOPK_F32, .batch = 30, .n = 700, .k = 99, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .lib_workspace = 1);

  /* workspace: none when the kernel sorts, some (the CUB sort) just above the threshold */
  topk_problem p = {.dtype = TOPK_F32,
                    .batch = 3,
                    .n = 8192,
                    .k = 1024,
                    .index_type = TOPK_INDEX_I64,
                    .flags = TOPK_SORTED,
                    .algo = TOPK_ALGO_AIR_RADIX,
                    .backend = TOPK_BACKEND_CUDA};
  size_t ws = 1;
  ASSERT_EQ_I64(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  ASSERT_EQ_U64(ws, 0);
  p.k = 1025;
  ASSERT_EQ_I64(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  ASSERT_TRUE(ws > 0);
  p.k = 1024;
  p.flags = 0;
  ASSERT_EQ_I64(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  ASSERT_EQ_U64(ws, 0);
  return TEST_OK;
}

/*
 * The cluster path at every cluster size: f32 rows staged in 1, 2, 4 and 8 blocks of at most
 * 96 KB, and 8 blocks of up to 192 KB; ties spread over several blocks (all-equal, zipf,
 * radix-adversarial), k = 1, n - 1, n, both directions, sorted (CUB after the kernel).
 */
TEST(cluster_shapes) {
  static const int64_t ns[] = {20000, 40000, 90000, 150000, 300000};
  static const gen_opts dists[] = {
      {.dist = GEN_UNIFORM},
      {.dist = GEN_ALL_EQUAL},
      {.dist = GEN_ZIPF},
      {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 24},
      {.dist = GEN_NORMAL, .nan_fraction = 0.2, .inf_fraction = 0.2},
  };
  SKIP_WITHOUT_GPU();
  for (int ni = 0; ni < COUNT(ns); ++ni)
    for (int g = 0; g < COUNT(dists); ++g) {
      const int64_t n = ns[ni];
      const int64_t ks[] = {1, 777, n - 1, n};
      for (int ki = 0; ki < COUNT(ks); ++ki) {
        const unsigned flags = ((ni + g + ki) & 1 ? TOPK_SMALLEST : 0u) | ((g + ki) & 2 ? TOPK_SORTED : 0u);
        RUN(.dtype = TOPK_F32, .batch = 3, .n = n, .k = ks[ki], .flags = flags, .gen = dists[g], .path = "cluster");
      }
    }
  /* other widths, index types, a row stride that misaligns the rows, many rows */
  static const topk_dtype dts[] = {TOPK_BF16, TOPK_F16, TOPK_F64, TOPK_U64, TOPK_I32};
  for (int d = 0; d < COUNT(dts); ++d) {
    RUN(.dtype = dts[d], .batch = 2, .n = 100000, .k = 5000, .flags = TOPK_SORTED, .index_type = TOPK_INDEX_I32,
        .gen = {.dist = GEN_ZIPF}, .path = "cluster");
    RUN(.dtype = dts[d], .batch = 2, .n = 100000, .k = 3, .index_type = TOPK_INDEX_NONE, .gen = {.dist = GEN_NORMAL},
        .path = "cluster");
  }
  RUN(.dtype = TOPK_BF16, .batch = 4, .n = 393216, .k = 1024, .gen = {.dist = GEN_NORMAL}, .path = "cluster");
  RUN(.dtype = TOPK_F32, .batch = 3, .n = 50001, .ld = 50007, .k = 100, .gen = {.dist = GEN_UNIFORM}, .path = "cluster");
  RUN(.dtype = TOPK_F32, .batch = 2000, .n = 16000, .k = 100, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_F32, .batch = 2000, .n = 16000, .k = 1000, .gen = {.dist = GEN_UNIFORM});
  return TEST_OK;
}

/*
 * The default path for rows of 16 KB .. 32 KB: CLUSTER where cluster_over_one (air_radix.cu)
 * says so (unsorted 4-byte rows in <= 128 rows; unsorted 16-bit rows in <= 256 rows or from
 * 24 KB at any batch; sorted 16-bit rows of 32 KB in <= 512 rows), ONE-BLOCK just past each
 * edge; ties, NaN and inf, both directions, 2- and 4-byte keys.
 */
TEST(short_rows_default) {
  static const gen_opts dists[] = {
      {.dist = GEN_NORMAL},
      {.dist = GEN_ALL_EQUAL},
      {.dist = GEN_ZIPF},
      {.dist = GEN_UNIFORM, .nan_fraction = 0.1, .inf_fraction = 0.1},
  };
  SKIP_WITHOUT_GPU();
  for (int g = 0; g < COUNT(dists); ++g) {
    const unsigned sm = g & 1 ? TOPK_SMALLEST : 0u;
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 8192, .k = 128, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_F32, .batch = 16, .n = 4096, .k = 512, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 3, .n = 16384, .k = 8, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_I32, .batch = 2, .n = 5000, .k = 1, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_F16, .batch = 4, .n = 8192, .k = 300, .flags = sm, .index_type = TOPK_INDEX_I32, .gen = dists[g]);
    /* unsorted 16-bit rows from 24 KB at any batch: CLUSTER; under 24 KB past 256 rows, sorted past
     * 512 rows: ONE-BLOCK */
    RUN(.dtype = TOPK_BF16, .batch = 1024, .n = 16384, .k = 2048, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_F16, .batch = 300, .n = 12288, .k = 300, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 1024, .n = 12287, .k = 2048, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 1024, .n = 16384, .k = 100, .flags = sm | TOPK_SORTED, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 513, .n = 16384, .k = 700, .flags = sm | TOPK_SORTED, .gen = dists[g]);
    /* a few rows at large k, up to the batch edges, and sorted 16-bit rows of 32 KB: CLUSTER */
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 8192, .k = 4000, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_F32, .batch = 128, .n = 4096, .k = 1000, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 256, .n = 8192, .k = 2048, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 16, .n = 16384, .k = 2048, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 512, .n = 16384, .k = 2048, .flags = sm | TOPK_SORTED, .gen = dists[g]);
    RUN(.dtype = TOPK_F16, .batch = 1, .n = 16384, .k = 100, .flags = sm | TOPK_SORTED, .gen = dists[g]);
    /* just past the rule's edges: ONE-BLOCK */
    RUN(.dtype = TOPK_F32, .batch = 129, .n = 8192, .k = 128, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 257, .n = 8192, .k = 256, .flags = sm, .gen = dists[g]);
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 8192, .k = 64, .flags = sm | TOPK_SORTED, .gen = dists[g]);
    RUN(.dtype = TOPK_BF16, .batch = 2, .n = 16383, .k = 2048, .flags = sm | TOPK_SORTED, .gen = dists[g]);
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 2048, .k = 100, .flags = sm, .gen = dists[g]);
  }
  return TEST_OK;
}

/*
 * Every cluster size the launch can pick, forced (1..16 blocks, 16 where the device has
 * clusters of 16): rows split into slices of a few groups, blocks whose slice is empty
 * (100 elements over 16 blocks), ties and results spread over many blocks, both
 * directions, sorted, every key width.
 */
TEST(cluster_sizes) {
  static const char* const sizes[] = {"1", "2", "4", "8", "16"};
  static const gen_opts dists[] = {
      {.dist = GEN_NORMAL},
      {.dist = GEN_ALL_EQUAL},
      {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20},
      {.dist = GEN_UNIFORM, .nan_fraction = 0.05, .inf_fraction = 0.05},
  };
  SKIP_WITHOUT_GPU();
  for (int c = 0; c < COUNT(sizes); ++c) {
    for (int g = 0; g < COUNT(dists); ++g) {
      const unsigned fl = (g & 1 ? TOPK_SMALLEST : 0u) | (c & 1 ? TOPK_SORTED : 0u);
      RUN(.dtype = TOPK_F32, .batch = 2, .n = 20000, .k = 50, .flags = fl, .gen = dists[g], .path = "cluster",
          .cluster_cs = sizes[c]);
      RUN(.dtype = TOPK_F32, .batch = 1, .n = 70001, .k = 1024, .flags = fl, .gen = dists[g], .path = "cluster",
          .cluster_cs = sizes[c]);
      RUN(.dtype = TOPK_BF16, .batch = 3, .n = 262144, .k = 1, .flags = fl, .gen = dists[g], .path = "cluster",
          .cluster_cs = sizes[c]);
    }
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 100, .k = 7, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
        .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 100, .k = 99, .gen = {.dist = GEN_ALL_EQUAL}, .path = "cluster",
        .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F16, .batch = 1, .n = 50000, .k = 4000, .gen = {.dist = GEN_ZIPF}, .path = "cluster",
        .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F64, .batch = 1, .n = 50000, .k = 333, .flags = TOPK_SORTED, .index_type = TOPK_INDEX_I32,
        .gen = {.dist = GEN_NORMAL}, .path = "cluster", .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_U64, .batch = 1, .n = 50000, .k = 5000, .index_type = TOPK_INDEX_NONE,
        .gen = {.dist = GEN_UNIFORM}, .path = "cluster", .cluster_cs = sizes[c]);
  }
  return TEST_OK;
}

/*
 * CLUSTER's delegate start (by default for k <= 128 with 4- and 8-byte keys, 16-bit keys taking the
 * wide start; TOPK_AIR_CLUSTER_DELEGATES=128 takes it at every key width, =512 up to 1024 delegates,
 * 512 for 64-bit keys), on and off: every dtype and distribution in
 * both directions, sorted or not; k at its smallest and at the default limit, one above it,
 * and k = 512; sorted rows and all-equal rows (more candidates than rank 0 holds: the radix
 * passes run after the start); ties at the k-th key across blocks (zipf); every cluster size
 * (delegates that are maxima of several warps, or of a few threads), blocks with empty
 * slices, misaligned rows, rows of k + 1.
 */
TEST(cluster_delegates) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64, TOPK_I32, TOPK_U32, TOPK_I64, TOPK_U64};
  static const char* const del[] = {NULL, "0", "512"};
  static const char* const sizes[] = {"1", "2", "4", "8", "16"};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d) {
    for (int g = 0; g < gpu_case_dist_count; ++g) {
      const unsigned flags = (g + d) & 1 ? TOPK_SMALLEST : 0u;
      RUN(.dtype = dts[d], .batch = 2, .n = 131072, .k = 50, .flags = flags, .gen = gpu_case_dists[g],
          .path = "cluster", .cluster_del = "128");
      RUN(.dtype = dts[d], .batch = 1, .n = 60001, .k = 128, .flags = (flags ^ TOPK_SMALLEST) | TOPK_SORTED,
          .gen = gpu_case_dists[g], .path = "cluster", .cluster_del = "128");
    }
    /* the launch's own growth: 16 blocks for the 2 rows of 131072 above (4- and 8-byte keys), 8
     * for 9 rows (9 clusters of 16 do not fit at once: 7 on the H100) */
    RUN(.dtype = dts[d], .batch = 9, .n = 150000, .k = 50, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
        .cluster_del = "128");
    for (int s = 0; s < COUNT(del); ++s) {
      RUN(.dtype = dts[d], .batch = 3, .n = 32000, .k = 1, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
          .cluster_del = del[s]);
      RUN(.dtype = dts[d], .batch = 2, .n = 100000, .k = 129, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM},
          .path = "cluster", .cluster_del = del[s]);
      RUN(.dtype = dts[d], .batch = 2, .n = 200000, .k = 512, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_NORMAL},
          .path = "cluster", .cluster_del = del[s]);
      RUN(.dtype = dts[d], .batch = 2, .n = 50000, .k = 77, .ld = 50003, .index_type = TOPK_INDEX_I32,
          .gen = {.dist = GEN_ZIPF}, .path = "cluster", .cluster_del = del[s]);
    }
  }
  for (int c = 0; c < COUNT(sizes); ++c) {
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 100, .k = 5, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
        .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_BF16, .batch = 2, .n = 129, .k = 128, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_UNIFORM},
        .path = "cluster", .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 262144, .k = 64, .flags = TOPK_SORTED, .gen = {.dist = GEN_SORTED_DESC},
        .path = "cluster", .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F64, .batch = 2, .n = 30000, .k = 3, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
        .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 300000, .k = 500, .gen = {.dist = GEN_UNIFORM}, .path = "cluster",
        .cluster_cs = sizes[c], .cluster_del = "512");
  }
  return TEST_OK;
}

/*
 * CLUSTER's wide start (by default for 128 < k <= 1024 with keys of up to 32 bits, and for every
 * k <= 1024 with 16-bit keys), on and off: every distribution in both directions, sorted or not,
 * at k = 1024 over rows of the LLM vocabularies' lengths, and at k = 129 and 50; sorted and
 * all-equal rows and heavy ties (a segment overflows or rank 0's check fails: the radix passes run
 * after the start); ties at the k-th key across blocks (zipf, 16-bit keys); every cluster size;
 * slices of a few dozen keys (rows of k + 1 over 16 blocks), misaligned rows; rows of plateaus, where
 * rank 0's check fails without an overflow; 64-bit keys, which it leaves to the passes; long rows with
 * a few NaN, which the starts' staging keys in a second look; outputs at an offset in their buffers.
 */
TEST(cluster_wide) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_F16, TOPK_I32, TOPK_U32, TOPK_F64};
  static const char* const wide[] = {NULL, "0"};
  static const char* const sizes[] = {"1", "2", "4", "8", "16"};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g) {
      const unsigned flags = (g + d) & 1 ? TOPK_SMALLEST : 0u;
      RUN(.dtype = dts[d], .batch = 2, .n = 262144, .k = 1024, .flags = flags, .gen = gpu_case_dists[g],
          .path = "cluster");
      RUN(.dtype = dts[d], .batch = 3, .n = 32000, .k = 1024, .flags = (flags ^ TOPK_SMALLEST) | TOPK_SORTED,
          .gen = gpu_case_dists[g], .path = "cluster");
      RUN(.dtype = dts[d], .batch = 1, .n = 151936, .k = 50, .flags = flags, .gen = gpu_case_dists[g],
          .path = "cluster", .cluster_del = "0");
    }
  /* outputs at an element offset in their buffers (misaligned for vector stores): each index type,
   * 32- and 16-bit values; nothing before them is written */
  RUN(.dtype = TOPK_F32, .batch = 3, .n = 151936, .k = 1024, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
      .out_shift = 1);
  RUN(.dtype = TOPK_F32, .batch = 3, .n = 151936, .k = 1024, .index_type = TOPK_INDEX_I32,
      .gen = {.dist = GEN_NORMAL}, .path = "cluster", .out_shift = 2);
  RUN(.dtype = TOPK_BF16, .batch = 3, .n = 151936, .k = 1024, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
      .out_shift = 3);
  RUN(.dtype = TOPK_BF16, .batch = 3, .n = 151936, .k = 1000, .index_type = TOPK_INDEX_NONE,
      .gen = {.dist = GEN_NORMAL}, .path = "cluster", .out_shift = 1);
  for (int w = 0; w < COUNT(wide); ++w) {
    RUN(.dtype = TOPK_F32, .batch = 8, .n = 262144, .k = 1024, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
        .cluster_wide = wide[w]);
    RUN(.dtype = TOPK_BF16, .batch = 4, .n = 128256, .k = 129, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM},
        .path = "cluster", .cluster_wide = wide[w]);
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 100000, .k = 700, .ld = 100003, .index_type = TOPK_INDEX_I32,
        .gen = {.dist = GEN_ZIPF}, .path = "cluster", .cluster_wide = wide[w]);
  }
  for (int c = 0; c < COUNT(sizes); ++c) {
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 1025, .k = 1024, .gen = {.dist = GEN_NORMAL}, .path = "cluster",
        .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 5000, .k = 300, .gen = {.dist = GEN_UNIFORM}, .path = "cluster",
        .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_BF16, .batch = 2, .n = 200000, .k = 1000, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_NORMAL},
        .path = "cluster", .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 262144, .k = 1024, .flags = TOPK_SORTED, .gen = {.dist = GEN_SORTED_DESC},
        .path = "cluster", .cluster_cs = sizes[c]);
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 300000, .k = 64, .gen = {.dist = GEN_UNIFORM}, .path = "cluster",
        .cluster_cs = sizes[c], .cluster_del = "0");
  }
  /* rows of rising plateaus in random order, a block's slice each (16 x 16384, 8 x 32768): the top
   * plateau's block bounds above every other key and sends ~128 keys, so rank 0 keeps fewer than k and
   * its check (the select's count) fails without an overflow; the passes finish. Smallest: the top is
   * rank 0's own slice. */
  for (int s = 0; s < 2; ++s) {
    const unsigned flags = s ? TOPK_SMALLEST : 0u;
    RUN(.dtype = TOPK_F32, .batch = 1, .n = 262144, .k = 1024, .flags = flags,
        .gen = {.dist = GEN_NORMAL, .step_length = 16384}, .path = "cluster");
    RUN(.dtype = TOPK_F32, .batch = 8, .n = 262144, .k = 1000, .flags = flags | TOPK_SORTED,
        .gen = {.dist = GEN_UNIFORM, .row_length = 262144, .step_length = 32768}, .path = "cluster");
  }
  /* a few NaN in long rows (~1 in 2000 keys): the starts stage 32-bit keys without NaN
   * canonicalisation and only the threads that met a NaN stage theirs again (air_cluster_stage_open);
   * every NaN is among the largest, none among the smallest. Both starts; 16-bit keys alongside. */
  static const topk_dtype nan_dts[] = {TOPK_F32, TOPK_BF16, TOPK_F16};
  for (int d = 0; d < COUNT(nan_dts); ++d)
    for (int s = 0; s < 2; ++s) {
      const gen_opts few_nan = {.dist = GEN_NORMAL, .nan_fraction = 0.0005, .inf_fraction = 0.0005};
      const unsigned flags = s ? TOPK_SMALLEST : 0u;
      RUN(.dtype = nan_dts[d], .batch = 2, .n = 262144, .k = 1024, .flags = flags, .gen = few_nan, .path = "cluster");
      RUN(.dtype = nan_dts[d], .batch = 1, .n = 151936, .k = 50, .flags = flags ^ TOPK_SMALLEST, .gen = few_nan,
          .path = "cluster", .cluster_del = "128");
      RUN(.dtype = nan_dts[d], .batch = 8, .n = 32000, .k = 1024, .flags = flags | TOPK_SORTED, .gen = few_nan,
          .path = "cluster");
    }
  /* AUTO: the LLM shapes the wide start was made for */
  RUN(.dtype = TOPK_F32, .batch = 1, .n = 262144, .k = 1024, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_BF16, .batch = 8, .n = 151936, .k = 1024, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_BF16, .batch = 8, .n = 262144, .k = 50, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_BF16, .batch = 1, .n = 32000, .k = 1, .gen = {.dist = GEN_UNIFORM}, .path = "cluster");
  return TEST_OK;
}

/*
 * The ROWS path (a block per row, streamed): every distribution with the candidate buffer
 * at its default, tiny (cap 64: passes re-read the row until few candidates are left, and
 * ties are broken by index passes over global memory) and large; first digits of 8 and 13
 * bits; unaligned rows (odd ld); and unforced batches: f32 with >= 1 row per SM takes ROWS,
 * bf16 rows that fit a cluster stay on CLUSTER (air_radix.cu, choose_path).
 */
TEST(rows_path) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_F64, TOPK_I32};
  static const char* const caps[] = {NULL, "64", "16384"};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g)
      for (int c = 0; c < COUNT(caps); ++c) {
        const unsigned flags = (g + c) & 1 ? TOPK_SMALLEST : 0u;
        RUN(.dtype = dts[d], .batch = 3, .n = 20000, .k = 100, .flags = flags, .gen = gpu_case_dists[g],
            .path = "rows", .rows_cap = caps[c]);
        RUN(.dtype = dts[d], .batch = 2, .n = 20000, .k = 7000, .flags = flags | TOPK_SORTED, .gen = gpu_case_dists[g],
            .path = "rows", .rows_cap = caps[c]);
      }
  static const char* const bits[] = {"8", "13"};
  for (int b = 0; b < 2; ++b)
    for (int d = 0; d < COUNT(dts); ++d) {
      RUN(.dtype = dts[d], .batch = 4, .n = 50000, .k = 1000, .gen = {.dist = GEN_UNIFORM}, .path = "rows",
          .rows_bits = bits[b]);
      RUN(.dtype = dts[d], .batch = 4, .n = 50000, .k = 1, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_ZIPF},
          .path = "rows", .rows_bits = bits[b], .rows_cap = "64");
    }
  RUN(.dtype = TOPK_F32, .batch = 7, .n = 30001, .k = 999, .ld = 30003, .gen = {.dist = GEN_NORMAL}, .path = "rows");
  /* a buffer of exactly 48 KB of dynamic shared memory with the kernel's static shared memory
   * on top: the launch needs the opt-in attribute (topk_smem_needs_optin) */
  RUN(.dtype = TOPK_F32, .batch = 3, .n = 20000, .k = 100, .gen = {.dist = GEN_NORMAL}, .path = "rows",
      .rows_cap = "5120");
  RUN(.dtype = TOPK_BF16, .batch = 7, .n = 30001, .k = 999, .ld = 30007, .flags = TOPK_SORTED,
      .gen = {.dist = GEN_ALL_EQUAL}, .path = "rows", .rows_cap = "100");
  RUN(.dtype = TOPK_F32, .batch = 300, .n = 20000, .k = 1000, .gen = {.dist = GEN_UNIFORM});
  RUN(.dtype = TOPK_BF16, .batch = 600, .n = 40000, .k = 2048, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  return TEST_OK;
}

/*
 * ROWS' one-read start (air_rows_stream): rows long enough for several compactions of the
 * buffer, on every distribution, with the speculative threshold (the default), the exact one
 * ("1") and without the start ("0"); rows sorted in the wanted order (a speculative threshold
 * too high: the row streams again with the exact rule); ascending rows (every
 * element passes: the compaction limit, then the passes over global memory) and all-equal
 * rows (a compaction that cannot free room) give up and must still be exact; rows whose
 * k-th key is tied many times; misaligned rows (scalar head and tail); both directions,
 * sorted or not, every dtype (each has its own raw-domain filter, topk_key_floor), 64-bit indices.
 */
TEST(rows_stream) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64, TOPK_I32, TOPK_U32, TOPK_I64, TOPK_U64};
  static const char* const stream[] = {NULL, "1", "0"};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g) {
      const unsigned flags = (g + d) & 1 ? TOPK_SMALLEST : 0u;
      RUN(.dtype = dts[d], .batch = 3, .n = 70001, .k = 100, .flags = flags, .gen = gpu_case_dists[g], .path = "rows");
      RUN(.dtype = dts[d], .batch = 2, .n = 150000, .k = 1500, .flags = (flags ^ TOPK_SMALLEST) | TOPK_SORTED,
          .gen = gpu_case_dists[g], .path = "rows");
    }
  /* the sampled start: off, and its threshold too high (keep forced) on every dtype and direction;
   * ascending and descending rows (a sample from the whole range), rows just long enough for it */
  for (int d = 0; d < COUNT(dts); ++d)
    for (int smallest = 0; smallest < 2; ++smallest) {
      const unsigned flags = smallest ? TOPK_SMALLEST : 0u;
      RUN(.dtype = dts[d], .batch = 2, .n = 70001, .k = 500, .flags = flags, .gen = {.dist = GEN_NORMAL},
          .path = "rows", .rows_sample = "0");
      RUN(.dtype = dts[d], .batch = 2, .n = 70001, .k = 500, .flags = flags | TOPK_SORTED,
          .gen = {.dist = GEN_UNIFORM}, .path = "rows", .rows_keep = smallest ? "3" : "1");
      RUN(.dtype = dts[d], .batch = 2, .n = 65536, .k = 2048, .flags = flags, .gen = {.dist = GEN_SORTED_ASC},
          .path = "rows");
      RUN(.dtype = dts[d], .batch = 2, .n = 65536, .k = 2048, .flags = flags, .gen = {.dist = GEN_SORTED_DESC},
          .path = "rows");
    }
  for (int s = 0; s < COUNT(stream); ++s)
    for (int d = 0; d < COUNT(dts); ++d) {
      /* a few distinct values: the k-th key tied many times (zipf), k = 1, k = n - 1 */
      RUN(.dtype = dts[d], .batch = 5, .n = 40000, .k = 333, .gen = {.dist = GEN_ZIPF}, .path = "rows",
          .rows_stream = stream[s]);
      RUN(.dtype = dts[d], .batch = 2, .n = 40000, .k = 1, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_NORMAL},
          .path = "rows", .rows_stream = stream[s]);
      RUN(.dtype = dts[d], .batch = 2, .n = 9000, .k = 8999, .gen = {.dist = GEN_UNIFORM}, .path = "rows",
          .rows_stream = stream[s]);
      /* misaligned rows, 64-bit indices, no indices */
      RUN(.dtype = dts[d], .batch = 3, .n = 33333, .k = 2048, .ld = 33335, .flags = TOPK_SORTED,
          .index_type = TOPK_INDEX_I64, .gen = {.dist = GEN_NORMAL}, .path = "rows", .rows_stream = stream[s]);
      RUN(.dtype = dts[d], .batch = 3, .n = 33333, .k = 64, .ld = 33334, .index_type = TOPK_INDEX_NONE,
          .gen = {.dist = GEN_UNIFORM}, .path = "rows", .rows_stream = stream[s]);
    }
  /* 16-bit keys, the largest: the stream trusts its packed value compare (topk_key_floor::exact)
   * except where thr's value is zero, where -0 (keyed below +0) compares equal to +0. Rows of
   * +-0 and U[0,1) with the k-th value zero, k-th below the first compaction's threshold or not,
   * NaNs and infinities mixed in */
  for (int d = 1; d <= 2; ++d) {
    const topk_dtype dt = d == 1 ? TOPK_F16 : TOPK_BF16;
    RUN(.dtype = dt, .batch = 3, .n = 150000, .k = 10000, .gen = {.dist = GEN_UNIFORM, .zero_fraction = 0.95},
        .path = "rows");
    RUN(.dtype = dt, .batch = 3, .n = 150000, .k = 2048, .gen = {.dist = GEN_UNIFORM, .zero_fraction = 0.99},
        .path = "rows");
    RUN(.dtype = dt, .batch = 2, .n = 150000, .k = 3000, .flags = TOPK_SORTED,
        .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.001, .inf_fraction = 0.001, .zero_fraction = 0.2},
        .path = "rows");
  }
  /* the unforced choice: half a row per SM of 2^20 (132-SM H100: ROWS), radix-adversarial */
  RUN(.dtype = TOPK_F32, .batch = 70, .n = (int64_t)1 << 20, .k = 256,
      .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20});
  /* the unforced choice: 16-bit rows that a cluster could hold but long enough to be read once */
  RUN(.dtype = TOPK_BF16, .batch = 140, .n = 140000, .k = 2048, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  /* nondeterministic ties allowed, and the unforced choice for many rows */
  RUN(.dtype = TOPK_F32, .batch = 200, .n = 60000, .k = 100, .flags = TOPK_NONDETERMINISTIC,
      .gen = {.dist = GEN_UNIFORM});
  RUN(.dtype = TOPK_F32, .batch = 200, .n = 60000, .k = 1000, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  return TEST_OK;
}

/* Large single rows: the whole GPU on one row. */
/*
 * MULTI's sampled start (air_start_bound), taken from rows of 1000 here, with alpha 2 or 8 so
 * that the buffer holds the sample's bound: every dtype and direction, the distributions (ties
 * and all-equal rows leave no bound; sorted rows are sampled evenly), k from 1 to beyond what the
 * buffer takes, several rows, sorted, nondeterministic, every index type; and the start failing
 * both ways (a forced sample rank: too few elements >= the bound, or more than the buffer holds),
 * where pass 0 runs again over the input.
 */
TEST(multi_start) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64, TOPK_I32, TOPK_U64};
  SKIP_WITHOUT_GPU();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g)
      for (int smallest = 0; smallest < 2; ++smallest)
        RUN(.dtype = dts[d], .batch = 2, .n = 60000, .k = 300, .flags = smallest ? TOPK_SMALLEST : 0u,
            .gen = gpu_case_dists[g], .path = "multi", .alpha = "2", .start = "1000");
  static const int64_t ks[] = {1, 32, 1000, 5000, 20000};
  for (int ki = 0; ki < COUNT(ks); ++ki)
    for (int f = 0; f < 4; ++f) {
      const unsigned flags = (f & 1 ? TOPK_NONDETERMINISTIC : 0u) | (f & 2 ? TOPK_SORTED : 0u);
      RUN(.dtype = TOPK_F32, .batch = 3, .n = 100003, .k = ks[ki], .flags = flags, .gen = {.dist = GEN_UNIFORM},
          .path = "multi", .alpha = "8", .start = "1000");
      RUN(.dtype = TOPK_BF16, .batch = 2, .n = 100000, .k = ks[ki], .flags = flags, .gen = {.dist = GEN_NORMAL},
          .path = "multi", .alpha = "8", .start = "1000");
    }
  for (int it = 0; it < 3; ++it)
    RUN(.dtype = TOPK_F32, .batch = 2, .n = 80000, .k = 500, .index_type = (topk_index)it,
        .gen = {.dist = GEN_NORMAL}, .path = "multi", .alpha = "4", .start = "1000");
  /* the start failing: too few (the sample's largest key as the bound), or an overflow */
  RUN(.dtype = TOPK_F32, .batch = 2, .n = 80000, .k = 1000, .gen = {.dist = GEN_UNIFORM}, .path = "multi",
      .alpha = "4", .start = "1000", .start_rank = "1");
  RUN(.dtype = TOPK_F16, .batch = 2, .n = 80000, .k = 1000, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .path = "multi", .alpha = "4", .start = "1000", .start_rank = "4000");
  RUN(.dtype = TOPK_U64, .batch = 1, .n = 80000, .k = 70, .flags = TOPK_NONDETERMINISTIC,
      .gen = {.dist = GEN_ZIPF}, .path = "multi", .alpha = "4", .start = "1000", .start_rank = "4000");
  /* the default threshold: a row of 2^22 at the default alpha, and the start off */
  RUN(.dtype = TOPK_F32, .batch = 1, .n = (int64_t)1 << 22, .k = 2048, .gen = {.dist = GEN_UNIFORM}, .path = "multi");
  RUN(.dtype = TOPK_F32, .batch = 1, .n = (int64_t)1 << 22, .k = 2048, .gen = {.dist = GEN_UNIFORM}, .path = "multi",
      .start = "0");
  return TEST_OK;
}

TEST(large_n) {
  SKIP_WITHOUT_GPU();
  const int64_t n = (int64_t)1 << 24;
  RUN(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 16384, .gen = {.dist = GEN_UNIFORM});
  RUN(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 16384, .gen = {.dist = GEN_UNIFORM}, .path = "multi");
  RUN(.dtype = TOPK_F16, .batch = 7, .n = n / 4, .k = 3000, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_F32, .batch = 1, .n = n, .k = 1000, .flags = TOPK_SORTED,
      .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20});
  RUN(.dtype = TOPK_BF16, .batch = 1, .n = (int64_t)1 << 22, .k = (int64_t)1 << 20, .gen = {.dist = GEN_ALL_EQUAL});
  return TEST_OK;
}

#define LIST(X)           \
  X(sanitizer_small)      \
  X(race_one_block)       \
  X(dtypes_directions)    \
  X(distributions)        \
  X(k_extremes)           \
  X(copy_path)            \
  X(index_types)          \
  X(nondeterministic)     \
  X(variable_rows)        \
  X(many_rows)            \
  X(leading_dimension)    \
  X(alpha_extremes)       \
  X(library_workspace)    \
  X(block_sort)           \
  X(cluster_shapes)       \
  X(short_rows_default)   \
  X(cluster_sizes)        \
  X(cluster_delegates)    \
  X(cluster_wide)         \
  X(adaptive_rows)        \
  X(common_prefix)        \
  X(rows_path)            \
  X(rows_stream)          \
  X(resident_path)        \
  X(multi_start)          \
  X(large_n)
TEST_MAIN(LIST)
