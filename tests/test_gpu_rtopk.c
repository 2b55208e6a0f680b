/*
 * test_gpu_rtopk.c: RTop-K (TOPK_ALGO_RTOPK on the CUDA backend), through the
 * public API.
 *
 * Exact mode (max_iter = 0): differential against the CPU reference with
 * tests/gpu_case.h (bit-exact values, the reference's index set, order when
 * TOPK_SORTED, padding of short rows). The shapes cross every bucket boundary of
 * rtopk.cu (128, 256, 512, 768, 1024 in registers; 2048, 4096 in shared memory), the
 * vector width (rows not a multiple of 4 or 8, ld > n so that row starts are not
 * 16-byte aligned), and k = 1, n - 1, n.
 *
 * Early stopping (max_iter > 0, approximate): every row returns exactly k distinct
 * valid indices whose values are the input's bit for bit; with max_iter = 64 on
 * distinct values the result is the exact one.
 *
 * Skips (exit 77) where no CUDA device is usable, except max_iter_errors, which
 * needs no device. `sanitizer_small` is the quick subset for compute-sanitizer:
 *   compute-sanitizer --tool memcheck ./test_gpu_rtopk sanitizer_small
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gen.h"
#include "gpu_case.h"
#include "harness.h"
#include "topk.h"

static const topk_dtype all_dtypes[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                        TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

#define RUN(...) GPU_RUN(.algo = TOPK_ALGO_RTOPK, __VA_ARGS__)

/* ------------------------------------------------------------------ early stopping */

typedef struct es_case {
  topk_dtype     dtype;
  int64_t        batch, n, k, ld;
  unsigned       flags;
  topk_index     index_type;
  int32_t        max_iter;
  gen_opts       gen;       /* ignored when distinct */
  int            distinct;  /* each row a permutation of distinct values: max_iter 64 must be exact */
  const int64_t* offsets;   /* host; NULL: uniform rows */
} es_case;

static uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Row-wise permutations of distinct values (f32, f64, i32 only). */
static void fill_distinct(void* in, topk_dtype dt, int64_t batch, int64_t n, int64_t ld, uint64_t seed) {
  int64_t* perm = (int64_t*)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  for (int64_t r = 0; r < batch; ++r) {
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t i = n - 1; i > 0; --i) { /* Fisher-Yates */
      const int64_t j = (int64_t)(mix64(seed ^ (uint64_t)(r * 1000003 + i)) % (uint64_t)(i + 1));
      const int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int64_t i = 0; i < n; ++i) {
      const double v = (double)perm[i] * 0.37 - 40.0; /* distinct in f32 for n <= 4096 */
      const int64_t o = r * ld + i;
      if (dt == TOPK_F32) ((float*)in)[o] = (float)v;
      else if (dt == TOPK_F64) ((double*)in)[o] = v;
      else ((int32_t*)in)[o] = (int32_t)(perm[i] * 7 - 9000);
    }
  }
  free(perm);
}

static int same_bits(const void* a, const void* b, size_t es, topk_dtype dt) {
  if (memcmp(a, b, es) == 0) return 1;
  if (dt == TOPK_F32) { float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4); return x != x && y != y; }
  if (dt == TOPK_F64) { double x, y; memcpy(&x, a, 8); memcpy(&y, b, 8); return x != x && y != y; }
  return 0;
}

/* Every row: min(k, len) distinct valid indices with the input's values, then padding. */
static int check_valid(const es_case* c, const void* in, int64_t ld, const void* vals, const void* idxs) {
  const size_t es = topk_dtype_size(c->dtype);
  char* seen = (char*)calloc((size_t)(c->n > 0 ? c->n : 1), 1);
  int rc = 0;
  for (int64_t r = 0; r < c->batch && rc == 0; ++r) {
    const int64_t start = c->offsets ? c->offsets[r] : r * ld;
    const int64_t len = c->offsets ? c->offsets[r + 1] - c->offsets[r] : c->n;
    const int64_t real = len < c->k ? len : c->k;
    memset(seen, 0, (size_t)(len > 0 ? len : 1));
    for (int64_t s = 0; s < c->k; ++s) {
      const int64_t o = r * c->k + s;
      const int64_t idx = c->index_type == TOPK_INDEX_I32 ? ((const int32_t*)idxs)[o] : ((const int64_t*)idxs)[o];
      if (s >= real) {
        if (idx != -1) {
          fprintf(stderr, "row %lld slot %lld: padding index %lld\n", (long long)r, (long long)s, (long long)idx);
          rc = -1;
        }
        continue;
      }
      if (idx < 0 || idx >= len || seen[idx]) {
        fprintf(stderr, "row %lld slot %lld: index %lld out of range or repeated\n", (long long)r, (long long)s,
                (long long)idx);
        rc = -1;
        break;
      }
      seen[idx] = 1;
      if (!same_bits((const char*)vals + (size_t)o * es, (const char*)in + (size_t)(start + idx) * es, es,
                     c->dtype)) {
        fprintf(stderr, "row %lld slot %lld: value differs from in[%lld]\n", (long long)r, (long long)s,
                (long long)idx);
        rc = -1;
        break;
      }
    }
  }
  free(seen);
  return rc;
}


/* @return 0 if the case passed; -1 (after printing why) otherwise. */
static int es_run(const es_case* c) {
  const size_t es = topk_dtype_size(c->dtype);
  const size_t is = c->index_type == TOPK_INDEX_I32 ? 4 : 8;
  const int64_t ld = c->offsets ? 0 : (c->ld ? c->ld : c->n);
  const int64_t count = c->offsets ? c->n : (c->batch - 1) * ld + c->n;
  const size_t in_bytes = (size_t)(count > 0 ? count : 1) * es;
  const size_t val_bytes = (size_t)(c->batch * c->k) * es, idx_bytes = (size_t)(c->batch * c->k) * is;
  const size_t off_bytes = c->offsets ? (size_t)(c->batch + 1) * sizeof(int64_t) : 0;
  int rc = -1;
  void *in = calloc(in_bytes, 1), *vals = malloc(val_bytes), *idxs = malloc(idx_bytes);
  void *d_in = NULL, *d_vals = NULL, *d_idxs = NULL, *d_off = NULL;
  if (!in || !vals || !idxs) goto done;
  if (c->distinct) {
    fill_distinct(in, c->dtype, c->batch, c->n, ld, test_seed());
  } else {
    gen_opts o = c->gen;
    if (o.seed == 0) o.seed = test_seed();
    if (gen_fill(in, c->dtype, count, &o) != 0) goto done;
  }
  GPU_TRY(topk_device_malloc(&d_in, in_bytes), "device_malloc(in)");
  GPU_TRY(topk_device_malloc(&d_vals, val_bytes), "device_malloc(values)");
  GPU_TRY(topk_device_malloc(&d_idxs, idx_bytes), "device_malloc(indices)");
  if (c->offsets) GPU_TRY(topk_device_malloc(&d_off, off_bytes), "device_malloc(offsets)");
  GPU_TRY(topk_memcpy_to_device(d_in, in, in_bytes), "memcpy(in)");
  if (c->offsets) GPU_TRY(topk_memcpy_to_device(d_off, c->offsets, off_bytes), "memcpy(offsets)");
  GPU_TRY(topk_memset_device(d_vals, 0xA5, val_bytes, NULL), "memset(values)");
  GPU_TRY(topk_memset_device(d_idxs, 0xA5, idx_bytes, NULL), "memset(indices)");
  topk_problem p = {.dtype = c->dtype,
                    .batch = c->batch,
                    .n = c->n,
                    .k = c->k,
                    .ld = c->offsets ? 0 : c->ld,
                    .row_offsets = (const int64_t*)d_off,
                    .index_type = c->index_type,
                    .flags = c->flags,
                    .algo = TOPK_ALGO_RTOPK,
                    .backend = TOPK_BACKEND_CUDA,
                    .max_iter = c->max_iter};
  GPU_TRY(topk_select(&p, d_in, d_vals, d_idxs, NULL, 0, NULL), "topk_select");
  GPU_TRY(topk_device_synchronize(), "synchronize after topk_select");
  GPU_TRY(topk_memcpy_to_host(vals, d_vals, val_bytes), "memcpy(values)");
  GPU_TRY(topk_memcpy_to_host(idxs, d_idxs, idx_bytes), "memcpy(indices)");
  rc = check_valid(c, in, ld, vals, idxs);
  if (rc == 0 && c->distinct) {
    topk_problem hp = p;
    hp.row_offsets = NULL;
    hp.max_iter = 0;
    rc = check_topk(&hp, in, c->offsets, vals, idxs);
  }
done:
  if (rc != 0)
    fprintf(stderr, "  case: %s batch=%lld n=%lld k=%lld ld=%lld flags=0x%x index=%d max_iter=%d dist=%s%s offsets=%s\n",
            topk_dtype_name(c->dtype), (long long)c->batch, (long long)c->n, (long long)c->k, (long long)c->ld,
            c->flags, (int)c->index_type, (int)c->max_iter, gen_dist_name(c->gen.dist),
            c->distinct ? " (distinct)" : "", c->offsets ? "yes" : "no");
  topk_device_free(d_in);
  topk_device_free(d_vals);
  topk_device_free(d_idxs);
  topk_device_free(d_off);
  free(in);
  free(vals);
  free(idxs);
  return rc;
}

#define ES_RUN(...)                             \
  do {                                          \
    es_case c_ = {__VA_ARGS__};                 \
    ASSERT_EQ_I64(es_run(&c_), 0);              \
  } while (0)

/* ------------------------------------------------------------------ tests */

/* Small and quick: both storage kinds, sorted, offsets, unaligned rows, early stopping, the
 * thread-group path. */
TEST(sanitizer_small) {
  static const int64_t off[] = {0, 0, 3, 40, 1040, 1041, 3000};
  GPU_SKIP_WITHOUT_DEVICE();
  RUN(.dtype = TOPK_F32, .batch = 9, .n = 300, .k = 17, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_F32, .batch = 9, .n = 300, .k = 17, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  RUN(.dtype = TOPK_F16, .batch = 5, .n = 3000, .k = 100, .gen = {.dist = GEN_UNIFORM});
  RUN(.dtype = TOPK_F64, .batch = 5, .n = 4096, .k = 333, .flags = TOPK_SORTED | TOPK_SMALLEST,
      .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.1, .inf_fraction = 0.1});
  RUN(.dtype = TOPK_BF16, .batch = 6, .n = 3000, .k = 40, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .offsets = off);
  RUN(.dtype = TOPK_I64, .batch = 7, .n = 129, .k = 129, .ld = 131, .index_type = TOPK_INDEX_I32,
      .gen = {.dist = GEN_ALL_EQUAL});
  /* sorted output's register network (65..256 results) and shared-memory network (more) */
  RUN(.dtype = TOPK_F32, .batch = 9, .n = 700, .k = 100, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_U64, .batch = 5, .n = 200, .k = 65, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  RUN(.dtype = TOPK_F32, .batch = 5, .n = 600, .k = 200, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  RUN(.dtype = TOPK_BF16, .batch = 5, .n = 256, .k = 128, .flags = TOPK_SORTED | TOPK_SMALLEST,
      .gen = {.dist = GEN_ALL_EQUAL});
  /* two rows a warp (rows of <= 256 by default; 512 forced): an odd batch, offsets */
  static const int64_t hoff[] = {0, 0, 1, 130, 131, 387, 512};
  RUN(.dtype = TOPK_F32, .batch = 6, .n = 512, .k = 16, .gen = {.dist = GEN_NORMAL}, .offsets = hoff,
      .env = {{"TOPK_RTOPK_LANES", "16"}});
  RUN(.dtype = TOPK_BF16, .batch = 7, .n = 200, .k = 40, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  ES_RUN(.dtype = TOPK_F32, .batch = 33, .n = 256, .k = 16, .max_iter = 3, .gen = {.dist = GEN_NORMAL});
  ES_RUN(.dtype = TOPK_F32, .batch = 33, .n = 256, .k = 16, .max_iter = 64, .distinct = 1);
  /* the thread-group path: empty and 1-element rows, unaligned rows, 2 and 4 lanes per row */
  static const int64_t toff[] = {0, 0, 1, 6, 69, 70, 71, 200, 256};
  RUN(.dtype = TOPK_F32, .batch = 8, .n = 256, .k = 6, .gen = {.dist = GEN_ZIPF}, .offsets = toff,
      .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", "4"}});
  RUN(.dtype = TOPK_BF16, .batch = 40, .n = 100, .ld = 103, .k = 16, .flags = TOPK_SORTED,
      .gen = {.dist = GEN_NORMAL}, .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", "4"}});
  RUN(.dtype = TOPK_F32, .batch = 40, .n = 64, .k = 8, .gen = {.dist = GEN_UNIFORM},
      .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", "2"}});
  /* its queues of 1 and 2 (chunks of 4), rows ending mid-chunk */
  RUN(.dtype = TOPK_F32, .batch = 40, .n = 61, .k = 1, .gen = {.dist = GEN_ZIPF}, .env = {{"TOPK_RTOPK_PATH", "thread"}});
  RUN(.dtype = TOPK_BF16, .batch = 30, .n = 100, .ld = 103, .k = 1, .flags = TOPK_SMALLEST,
      .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.1}, .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", "8"}});
  RUN(.dtype = TOPK_F32, .batch = 40, .n = 300, .k = 32, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM},
      .env = {{"TOPK_RTOPK_PATH", "thread"}}); /* a queue of 32 */
  RUN(.dtype = TOPK_BF16, .batch = 40, .n = 126, .k = 2, .flags = TOPK_SORTED, .gen = {.dist = GEN_CD},
      .env = {{"TOPK_RTOPK_PATH", "thread"}});
  /* the argmax kernel over whole aligned rows (FULL), a lane's NaN redo, k = 2 for 16-bit keys */
  RUN(.dtype = TOPK_BF16, .batch = 65, .n = 64, .k = 2, .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.05},
      .env = {{"TOPK_RTOPK_PATH", "thread"}});
  RUN(.dtype = TOPK_F32, .batch = 65, .n = 128, .k = 1, .flags = TOPK_SMALLEST,
      .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.05}, .env = {{"TOPK_RTOPK_PATH", "thread"}});
  return TEST_OK;
}

/* The exact mode's three threshold choices (TOPK_RTOPK_SEARCH) are all exact. */
TEST(search_modes) {
  static const char* const modes[] = {"interp", "value", "key"};
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_F64, TOPK_I64, TOPK_U32};
  static const gen_opts dists[] = {
      {.dist = GEN_NORMAL},
      {.dist = GEN_ZIPF},
      {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 24},
      {.dist = GEN_CD},
      {.dist = GEN_NORMAL, .nan_fraction = 0.1, .inf_fraction = 0.3},
  };
  GPU_SKIP_WITHOUT_DEVICE();
  for (int m = 0; m < COUNT(modes); ++m)
    for (int d = 0; d < COUNT(dts); ++d)
      for (int g = 0; g < COUNT(dists); ++g) {
        RUN(.dtype = dts[d], .batch = 200, .n = 768, .k = 100, .gen = dists[g], .env = {{"TOPK_RTOPK_SEARCH", modes[m]}});
        RUN(.dtype = dts[d], .batch = 20, .n = 4000, .k = 7, .flags = TOPK_SMALLEST, .gen = dists[g],
            .env = {{"TOPK_RTOPK_SEARCH", modes[m]}});
      }
  return TEST_OK;
}

/* Every dtype, both directions, sorted or not, registers and shared memory. */
TEST(dtypes_directions) {
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(all_dtypes); ++d)
    for (int f = 0; f < 4; ++f) {
      const unsigned flags = (f & 1 ? TOPK_SMALLEST : 0u) | (f & 2 ? TOPK_SORTED : 0u);
      RUN(.dtype = all_dtypes[d], .batch = 64, .n = 256, .k = 32, .flags = flags, .gen = {.dist = GEN_NORMAL});
      RUN(.dtype = all_dtypes[d], .batch = 64, .n = 1000, .k = 100, .flags = flags, .gen = {.dist = GEN_UNIFORM});
      RUN(.dtype = all_dtypes[d], .batch = 16, .n = 3500, .k = 128, .flags = flags, .gen = {.dist = GEN_NORMAL});
    }
  return TEST_OK;
}

/* The distributions of DESIGN.md: radix-adversarial, ties at the k-th value, NaN/inf. */
TEST(distributions) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_F64, TOPK_I32, TOPK_F16};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g)
      for (int smallest = 0; smallest < 2; ++smallest) {
        const unsigned flags = smallest ? TOPK_SMALLEST : 0u;
        RUN(.dtype = dts[d], .batch = 100, .n = 768, .k = 64, .flags = flags, .gen = gpu_case_dists[g]);
        RUN(.dtype = dts[d], .batch = 100, .n = 256, .k = 128, .flags = flags | TOPK_SORTED, .gen = gpu_case_dists[g]);
        RUN(.dtype = dts[d], .batch = 10, .n = 3000, .k = 100, .flags = flags | TOPK_SORTED, .gen = gpu_case_dists[g]);
        RUN(.dtype = dts[d], .batch = 10, .n = 4096, .k = 2000, .flags = flags, .gen = gpu_case_dists[g]);
      }
  return TEST_OK;
}

/* Row lengths across every bucket and vector-width boundary; k = 1, about n / 3, n - 1, n. */
TEST(row_lengths) {
  static const int64_t ns[] = {1,   2,   3,   5,   31,   32,   33,   100,  127,  128,  129,  255,  256,  257,
                               500, 511, 512, 513, 767,  768,  769,  1000, 1023, 1024, 1025, 1500, 2047, 2048,
                               2049, 3000, 4095, 4096};
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_F64};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int i = 0; i < COUNT(ns); ++i) {
      const int64_t n = ns[i];
      const int64_t ks[4] = {1, n / 3 + 1, n > 1 ? n - 1 : 1, n};
      for (int ki = 0; ki < 4; ++ki) {
        if (ks[ki] > n) continue;
        RUN(.dtype = dts[d], .batch = 37, .n = n, .k = ks[ki], .gen = {.dist = GEN_ZIPF});
        RUN(.dtype = dts[d], .batch = 37, .n = n, .k = ks[ki], .flags = TOPK_SORTED | TOPK_SMALLEST,
            .gen = {.dist = GEN_NORMAL});
      }
    }
  return TEST_OK;
}

/* int32, int64 and no indices; sorted or not; every storage kind. */
TEST(index_types) {
  static const topk_index its[] = {TOPK_INDEX_I64, TOPK_INDEX_I32, TOPK_INDEX_NONE};
  static const int64_t ns[] = {100, 700, 2500};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int i = 0; i < COUNT(its); ++i)
    for (int s = 0; s < COUNT(ns); ++s)
      for (int sorted = 0; sorted < 2; ++sorted) {
        RUN(.dtype = TOPK_F32, .batch = 20, .n = ns[s], .k = 57, .flags = sorted ? TOPK_SORTED : 0u,
            .index_type = its[i], .gen = {.dist = GEN_ZIPF});
        RUN(.dtype = TOPK_U64, .batch = 20, .n = ns[s], .k = 57, .flags = sorted ? TOPK_SORTED : 0u,
            .index_type = its[i], .gen = {.dist = GEN_UNIFORM});
      }
  return TEST_OK;
}

/* Row stride larger than the row: row starts not 16-byte aligned (the scalar loads). */
TEST(leading_dimension) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_F64, TOPK_I32};
  static const int64_t ns[] = {256, 1000, 3000};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int s = 0; s < COUNT(ns); ++s)
      for (int extra = 1; extra <= 8; extra += 3) {
        RUN(.dtype = dts[d], .batch = 13, .n = ns[s], .k = 50, .ld = ns[s] + extra, .gen = {.dist = GEN_NORMAL});
        RUN(.dtype = dts[d], .batch = 13, .n = ns[s], .k = ns[s], .ld = ns[s] + extra, .flags = TOPK_SORTED,
            .gen = {.dist = GEN_ZIPF});
      }
  return TEST_OK;
}

/* Variable-length rows from device offsets: empty rows, rows shorter than k, unaligned starts. */
TEST(variable_rows) {
  static const int64_t off[] = {0, 0, 1, 6, 69, 70, 71, 1071, 1071, 3071, 3072, 4000, 4000, 4096};
  const int64_t batch = COUNT(off) - 1, n = off[COUNT(off) - 1];
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F64, TOPK_BF16, TOPK_U32};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int f = 0; f < 8; ++f) {
      const unsigned flags = (f & 1 ? TOPK_SORTED : 0u) | (f & 2 ? TOPK_NONDETERMINISTIC : 0u) |
                             (f & 4 ? TOPK_SMALLEST : 0u);
      RUN(.dtype = dts[d], .batch = batch, .n = n, .k = 70, .flags = flags, .gen = {.dist = GEN_ZIPF},
          .offsets = off);
      RUN(.dtype = dts[d], .batch = batch, .n = n, .k = 5000, .flags = flags, .gen = {.dist = GEN_NORMAL},
          .offsets = off);
    }
  /* a register bucket (n <= 1024) with offsets; one row holding the whole buffer */
  static const int64_t small[] = {0, 5, 5, 300, 301, 1000};
  RUN(.dtype = TOPK_F32, .batch = 5, .n = 1000, .k = 64, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL},
      .offsets = small);
  static const int64_t one_row[] = {0, 4096};
  RUN(.dtype = TOPK_F16, .batch = 1, .n = 4096, .k = 4000, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM},
      .offsets = one_row);
  return TEST_OK;
}

/* The thread-group path (rtopk_thread_rows.cuh: n <= 1024, k <= 32, 16- and 32-bit keys),
 * forced at 1, 2 and 4 lanes per row and at the rule's own (TOPK_RTOPK_GROUP=3 is not a group
 * size, so it is ignored), and the warp search forced on the same shapes; then the default rule. Every distribution (NaN and inf mixes included) and direction, sorted or
 * not, queue buckets 4 / 8 / 16 / 32 and their edges, k == n, rows shorter than k and than the group,
 * unaligned rows, offsets, index types. */
TEST(thread_path) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_I32, TOPK_U32};
  static const char* paths[] = {"thread", "thread", "thread", "thread", "search"};
  static const char* groups[] = {"1", "2", "4", "3", NULL}; /* "3" is not a group size: the rule picks */
  GPU_SKIP_WITHOUT_DEVICE();
  for (int pth = 0; pth < COUNT(paths); ++pth)
    for (int d = 0; d < COUNT(dts); ++d)
      for (int g = 0; g < gpu_case_dist_count; ++g)
        for (int f = 0; f < 4; ++f) {
          const unsigned flags = (f & 1 ? TOPK_SMALLEST : 0u) | (f & 2 ? TOPK_SORTED : 0u);
          RUN(.dtype = dts[d], .batch = 300, .n = 64, .k = 8, .flags = flags, .gen = gpu_case_dists[g],
              .env = {{"TOPK_RTOPK_PATH", paths[pth]}, {"TOPK_RTOPK_GROUP", groups[pth]}});
          RUN(.dtype = dts[d], .batch = 70, .n = 256, .k = 5, .flags = flags, .gen = gpu_case_dists[g],
              .env = {{"TOPK_RTOPK_PATH", paths[pth]}, {"TOPK_RTOPK_GROUP", groups[pth]}});
          RUN(.dtype = dts[d], .batch = 70, .n = 100, .ld = 103, .k = 16, .flags = flags, .gen = gpu_case_dists[g],
              .env = {{"TOPK_RTOPK_PATH", paths[pth]}, {"TOPK_RTOPK_GROUP", groups[pth]}});
          /* rows of 257..1024: 9 and 10 index bits in a prefix word */
          RUN(.dtype = dts[d], .batch = 40, .n = 700, .k = 11, .flags = flags, .gen = gpu_case_dists[g],
              .env = {{"TOPK_RTOPK_PATH", paths[pth]}, {"TOPK_RTOPK_GROUP", groups[pth]}});
          /* queues of 32 (k = 17..32) */
          RUN(.dtype = dts[d], .batch = 70, .n = 256, .k = 32, .flags = flags, .gen = gpu_case_dists[g],
              .env = {{"TOPK_RTOPK_PATH", paths[pth]}, {"TOPK_RTOPK_GROUP", groups[pth]}});
          RUN(.dtype = dts[d], .batch = 40, .n = 500, .ld = 509, .k = 24, .flags = flags, .gen = gpu_case_dists[g],
              .env = {{"TOPK_RTOPK_PATH", paths[pth]}, {"TOPK_RTOPK_GROUP", groups[pth]}});
        }
  static const int64_t ns[] = {1,   3,   4,   5,   8,   9,   16,  17,   31,  64,  127,
                               128, 129, 255, 256, 257, 511, 512, 513, 1000, 1024};
  static const int64_t ks[] = {1, 2, 4, 5, 8, 9, 16, 17, 31, 32};
  for (int i = 0; i < COUNT(ns); ++i)
    for (int j = 0; j < COUNT(ks) && ks[j] <= ns[i]; ++j) {
      for (int gi = 0; gi < 4; ++gi) {
        RUN(.dtype = TOPK_F32, .batch = 33, .n = ns[i], .k = ks[j], .gen = {.dist = GEN_ZIPF},
            .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", groups[gi]}});
        RUN(.dtype = TOPK_BF16, .batch = 33, .n = ns[i], .k = ks[j], .flags = TOPK_SORTED | TOPK_SMALLEST,
            .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.1, .inf_fraction = 0.1},
            .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", groups[gi]}});
      }
      RUN(.dtype = TOPK_U32, .batch = 33, .n = ns[i], .k = ks[j], .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
    }
  /* queues longer than the rule's (TOPK_RTOPK_QUEUE, for measurement) give the same results */
  static const char* queues[] = {"8", "16"};
  for (int qi = 0; qi < COUNT(queues); ++qi)
    for (int g = 0; g < gpu_case_dist_count; ++g) {
      RUN(.dtype = TOPK_F32, .batch = 300, .n = 64, .k = 2, .flags = TOPK_SORTED, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_QUEUE", queues[qi]}});
      RUN(.dtype = TOPK_BF16, .batch = 300, .n = 200, .k = 3, .flags = TOPK_SMALLEST, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_QUEUE", queues[qi]}});
    }
  /* queues of 1 and 2 (k <= 2), which read chunks of 4 and keep their best k: by default over rows
   * of <= 128 (16-bit keys: any), forced (TOPK_RTOPK_QUEUE) over longer ones and rows that end
   * mid-chunk */
  static const topk_dtype qdts[] = {TOPK_F32, TOPK_BF16, TOPK_I32};
  for (int d = 0; d < COUNT(qdts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g) {
      const unsigned flags = (g & 1 ? TOPK_SMALLEST : 0u) | (g & 2 ? TOPK_SORTED : 0u);
      RUN(.dtype = qdts[d], .batch = 300, .n = 64, .k = 1, .flags = flags, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}});
      RUN(.dtype = qdts[d], .batch = 300, .n = 128, .k = 2, .flags = flags ^ TOPK_SORTED, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}});
      RUN(.dtype = qdts[d], .batch = 100, .n = 701, .k = 1, .flags = flags, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_QUEUE", "1"}});
      RUN(.dtype = qdts[d], .batch = 100, .n = 302, .k = 2, .flags = flags ^ TOPK_SMALLEST, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_QUEUE", "2"}});
      /* 8 lanes a row (built for these queues only; TOPK_RTOPK_GROUP=8 with k = 3 takes 4) */
      RUN(.dtype = qdts[d], .batch = 300, .n = 64, .k = 1 + (g & 1), .flags = flags, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", "8"}});
      RUN(.dtype = qdts[d], .batch = 100, .n = 250, .k = 1 + (g & 1), .flags = flags ^ TOPK_SORTED,
          .gen = gpu_case_dists[g], .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", "8"}});
      RUN(.dtype = qdts[d], .batch = 100, .n = 27, .k = 3, .flags = flags, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", "8"}});
      /* whole aligned rows (FULL) and the same without it (TOPK_RTOPK_FULL=0): queues 1..16 */
      RUN(.dtype = qdts[d], .batch = 300, .n = 128, .k = 1 + g % 16, .flags = flags, .gen = gpu_case_dists[g],
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_FULL", g & 4 ? "0" : "1"}});
    }
  static const int64_t off[] = {0, 0, 1, 6, 69, 70, 71, 200, 256};
  for (int d = 0; d < COUNT(dts); ++d) {
    RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = 256, .k = 8, .gen = {.dist = GEN_ZIPF}, .offsets = off);
    RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = 256, .k = 3, .flags = TOPK_SORTED | TOPK_SMALLEST,
        .gen = {.dist = GEN_NORMAL}, .offsets = off);
    /* so few rows take the search by default: force the groups over empty and 1-element rows */
    for (int gi = 0; gi < 4; ++gi)
      RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = 256, .k = 6, .flags = gi & 1 ? TOPK_SORTED : 0u,
          .gen = {.dist = GEN_ZIPF}, .offsets = off,
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", groups[gi]}});
    RUN(.dtype = dts[d], .batch = 5000, .n = 128, .k = 8, .index_type = TOPK_INDEX_I32, .gen = {.dist = GEN_CD});
    RUN(.dtype = dts[d], .batch = 500, .n = 200, .k = 7, .index_type = TOPK_INDEX_NONE, .gen = {.dist = GEN_UNIFORM});
  }
  /* k = 1 (and 2 for 16-bit keys): the argmax kernel (rtopk_thread_argmax.cuh) at every group
   * size: rows whose starts are not 16-byte aligned (ld = 103), rows shorter than a vector, empty
   * rows (offsets), every distribution (NaN, inf, all equal, all NaN), both directions; and the
   * queue kernel it replaces (TOPK_RTOPK_ARGMAX=0) on the same rows */
  static const char* agroups[] = {"1", "2", "4", "8", "3"};
  for (int d = 0; d < COUNT(dts); ++d) {
    for (int g = 0; g < gpu_case_dist_count; ++g)
      for (int gi = 0; gi < COUNT(agroups); ++gi) {
        const unsigned flags = (g + gi) & 1 ? TOPK_SMALLEST : 0u;
        const int64_t k = topk_dtype_size(dts[d]) == 2 && (g & 1) ? 2 : 1; /* k = 2: 16-bit keys */
        RUN(.dtype = dts[d], .batch = 70, .n = 100, .ld = 103, .k = k, .flags = flags, .gen = gpu_case_dists[g],
            .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", agroups[gi]}});
        RUN(.dtype = dts[d], .batch = 50, .n = 7, .k = k, .flags = flags ^ TOPK_SMALLEST, .gen = gpu_case_dists[g],
            .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", agroups[gi]}});
      }
    for (int gi = 0; gi < COUNT(agroups); ++gi) {
      RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = 256, .k = 1, .flags = gi & 1 ? TOPK_SMALLEST : 0u,
          .gen = {.dist = GEN_ZIPF}, .offsets = off,
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", agroups[gi]}});
      if (topk_dtype_size(dts[d]) == 2) /* k = 2 over empty and one-element rows */
        RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = 256, .k = 2, .flags = gi & 1 ? TOPK_SORTED : 0u,
            .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.2}, .offsets = off,
            .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", agroups[gi]}});
      RUN(.dtype = dts[d], .batch = 300, .n = 1000, .k = 1, .flags = gi & 1 ? TOPK_SORTED : 0u,
          .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20},
          .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", agroups[gi]}, {"TOPK_RTOPK_ARGMAX", "0"}});
    }
  }
  /* The argmax kernel's variants: a lane's part of 1, 2, 4 and 8 vectors (U = 1, 2, 4, and 4 in
   * two rounds) over whole aligned rows (FULL) and the same rows without it, at every group size,
   * every distribution (NaN of either sign: the fast pass's NaN test; +-0: zero_fraction), both
   * directions, k = 2 for 16-bit keys, and blocks of 96 and 1024 threads besides the default. */
  static const topk_dtype adts[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_I32};
  static const char* ablocks[] = {NULL, "96", "1024"};
  for (int d = 0; d < COUNT(adts); ++d)
    for (int gi = 0; gi < 4; ++gi)
      for (int u = 1; u <= 8; u *= 2) {
        const int64_t n = (int64_t)(16 / (int)topk_dtype_size(adts[d])) * (1 << gi) * u;
        for (int g = 0; g < gpu_case_dist_count; ++g) {
          gen_opts gen = gpu_case_dists[g];
          if (g % 3 == 1) gen.zero_fraction = 0.3;
          /* k = 2 on this kernel for 16-bit keys (sorted or not: its two slots come out in order) */
          const int64_t k = topk_dtype_size(adts[d]) == 2 ? 1 + (g & 1) : 1;
          RUN(.dtype = adts[d], .batch = 67, .n = n, .k = k, .gen = gen,
              .flags = ((g + u) & 2 ? TOPK_SMALLEST : 0u) | ((g + u) & 4 ? TOPK_SORTED : 0u),
              .env = {{"TOPK_RTOPK_PATH", "thread"},
                      {"TOPK_RTOPK_GROUP", agroups[gi]},
                      {"TOPK_RTOPK_FULL", g & 2 ? "0" : "1"},
                      {"TOPK_RTOPK_ARGMAX_BLOCK", ablocks[g % 3]}});
        }
      }
  /* More rows than one wave of blocks holds (the grid strides, and each lane fetches its next
   * row's first chunk during its last one): uniform rows at every group size, and variable
   * rows (mostly empty, 21 of them 1..23 long) where a lane's next row differs in length. */
  const int64_t vb = 200000;
  int64_t* voff = (int64_t*)malloc((size_t)(vb + 1) * sizeof *voff);
  ASSERT_TRUE(voff != NULL);
  for (int64_t r = 0, o = 0; r <= vb; ++r) {
    voff[r] = o;
    if (r % 9973 == 0) o += 1 + r % 23; /* 21 rows, 247 elements in all */
  }
  for (int gi = 0; gi < 3; ++gi) {
    RUN(.dtype = TOPK_F32, .batch = 300000, .n = 24, .k = 5, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF},
        .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", groups[gi]}});
    RUN(.dtype = TOPK_I32, .batch = 200000, .n = 100, .ld = 101, .k = 16, .gen = {.dist = GEN_NORMAL},
        .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", groups[gi]}});
    RUN(.dtype = TOPK_F32, .batch = vb, .n = voff[vb], .k = 3, .gen = {.dist = GEN_NORMAL}, .offsets = voff,
        .env = {{"TOPK_RTOPK_PATH", "thread"}, {"TOPK_RTOPK_GROUP", groups[gi]}});
  }
  free(voff);
  return TEST_OK;
}

/* Many rows: the rowwise and moe shapes at test size, and a grid that strides. */
TEST(many_rows) {
  GPU_SKIP_WITHOUT_DEVICE();
  RUN(.dtype = TOPK_F32, .batch = 65536, .n = 256, .k = 16, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_BF16, .batch = 65536, .n = 64, .k = 8, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_F32, .batch = 65536, .n = 128, .k = 2, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM});
  /* top-1 routing (a queue of 1) over more rows than a wave of blocks, at 4, 2 and 8 lanes a row,
   * with a block for every few rows (TOPK_RTOPK_GRID=all), and without the whole-row kernel
   * (TOPK_RTOPK_FULL=0) */
  RUN(.dtype = TOPK_F32, .batch = 300000, .n = 64, .k = 1, .gen = {.dist = GEN_ZIPF});
  RUN(.dtype = TOPK_BF16, .batch = 200000, .n = 128, .k = 1, .flags = TOPK_SMALLEST, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_F32, .batch = 300000, .n = 64, .k = 2, .flags = TOPK_SORTED, .gen = {.dist = GEN_CD},
      .env = {{"TOPK_RTOPK_GROUP", "8"}});
  RUN(.dtype = TOPK_F32, .batch = 300000, .n = 64, .k = 4, .gen = {.dist = GEN_ZIPF}, .env = {{"TOPK_RTOPK_GRID", "all"}});
  RUN(.dtype = TOPK_F32, .batch = 300000, .n = 64, .k = 1, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF},
      .env = {{"TOPK_RTOPK_FULL", "0"}});
  RUN(.dtype = TOPK_BF16, .batch = 300000, .n = 64, .k = 8, .gen = {.dist = GEN_CD}, .env = {{"TOPK_RTOPK_FULL", "0"}});
  /* enough rows of 257..512 for the thread path by default (prefix words of 9 index bits), and
   * enough 16-bit rows for 2 lanes a row */
  RUN(.dtype = TOPK_F32, .batch = 17000, .n = 500, .k = 7, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM});
  RUN(.dtype = TOPK_BF16, .batch = 66000, .n = 300, .k = 16, .gen = {.dist = GEN_UNIFORM});
  RUN(.dtype = TOPK_F32, .batch = 16384, .n = 768, .k = 128, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_F16, .batch = 4096, .n = 4096, .k = 512, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_F32, .batch = 1, .n = 1024, .k = 1000, .gen = {.dist = GEN_NORMAL});
  /* k == n on short rows: the thread path by default (moe with every expert kept) */
  RUN(.dtype = TOPK_F32, .batch = 65536, .n = 8, .k = 8, .flags = TOPK_SORTED, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_BF16, .batch = 40000, .n = 16, .k = 16, .flags = TOPK_SMALLEST,
      .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.05, .inf_fraction = 0.05});
  RUN(.dtype = TOPK_I32, .batch = 70000, .n = 4, .k = 4, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
  return TEST_OK;
}

/* Sorted output with large k (ranking in shared memory, blocks opting in to more of it). */
TEST(sorted_large_k) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F64, TOPK_F16};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d) {
    RUN(.dtype = dts[d], .batch = 20, .n = 4096, .k = 4096, .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
    RUN(.dtype = dts[d], .batch = 20, .n = 4096, .k = 3001, .flags = TOPK_SORTED | TOPK_SMALLEST,
        .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.2});
    RUN(.dtype = dts[d], .batch = 50, .n = 1024, .k = 1024, .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM});
  }
  return TEST_OK;
}

/* Sorted output at the edges of its three sorts (rtopk_warp_sort: ranks up to 64 results, a
 * register network up to 256, a shared-memory network above), with the 16-bit composite, the
 * 32-bit and the 64-bit entries, register and shared-memory rows, and many ties. */
TEST(sorted_methods) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_U64};
  static const int64_t ks[] = {63, 64, 65, 100, 127, 128, 129, 255, 256, 257};
  static const int64_t ns[] = {300, 1000, 3000};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int i = 0; i < COUNT(ns); ++i)
      for (int j = 0; j < COUNT(ks); ++j) {
        RUN(.dtype = dts[d], .batch = 13, .n = ns[i], .k = ks[j], .flags = TOPK_SORTED, .gen = {.dist = GEN_ZIPF});
        RUN(.dtype = dts[d], .batch = 13, .n = ns[i], .k = ks[j], .flags = TOPK_SORTED | TOPK_SMALLEST,
            .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.05, .inf_fraction = 0.05});
      }
  RUN(.dtype = TOPK_F16, .batch = 7, .n = 128, .k = 128, .flags = TOPK_SORTED, .gen = {.dist = GEN_ALL_EQUAL});
  RUN(.dtype = TOPK_I32, .batch = 7, .n = 129, .k = 120, .flags = TOPK_SORTED, .gen = {.dist = GEN_ALL_EQUAL});
  return TEST_OK;
}

/* Sorted output from a wider threshold (wide_cap: register rows, 64 < k <= 256): the search
 * stops at any lo with k <= count(key >= lo) <= 128 or 256 and the sort picks the first k.
 * Every distribution and direction; rows that start inside the window (n <= 128 or 256: no
 * search step at all), both network sizes, rows shorter than k and unaligned (offsets), and the
 * same shapes with TOPK_RTOPK_WIDE=0 (the finish path). */
TEST(sorted_wide) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_I32};
  static const int64_t shapes[][2] = {{1000, 100}, {300, 65}, {700, 200}, {120, 100}, {256, 129}, {1024, 255}};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int g = 0; g < gpu_case_dist_count; ++g)
      for (int s = 0; s < COUNT(shapes); ++s) {
        const unsigned flags = TOPK_SORTED | ((g + s) & 1 ? TOPK_SMALLEST : 0u);
        RUN(.dtype = dts[d], .batch = 40, .n = shapes[s][0], .k = shapes[s][1], .flags = flags,
            .gen = gpu_case_dists[g]);
      }
  static const int64_t off[] = {0, 99, 100, 228, 229, 331, 1000}; /* the buffer picks the bucket */
  for (int d = 0; d < COUNT(dts); ++d)
    for (int f = 0; f < 2; ++f) {
      RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = 1000, .k = 100, .flags = TOPK_SORTED | (f ? TOPK_SMALLEST : 0u),
          .gen = {.dist = GEN_NORMAL}, .offsets = off);
      RUN(.dtype = dts[d], .batch = 50, .n = 1000, .k = 100, .flags = TOPK_SORTED | (f ? TOPK_SMALLEST : 0u),
          .gen = {.dist = GEN_UNIFORM}, .env = {{"TOPK_RTOPK_WIDE", "0"}});
    }
  return TEST_OK;
}

/* The exact search's finish (rtopk_finish: <= 32 keys left in [lo, hi], register rows), both
 * of its sorts: one 32-bit word per candidate where hi - lo is narrow (with many ties among
 * the candidates, broken by position), and (key, position) entries where it is not (rows of
 * <= 32 + k elements start there with the whole key range: NaN and inf included). */
TEST(finish_paths) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_F64, TOPK_I64, TOPK_U32};
  static const int64_t ns[] = {20, 33, 45, 256, 700, 1024};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int i = 0; i < COUNT(ns); ++i) {
      const int64_t n = ns[i];
      const int64_t ks[] = {1, n > 32 ? n - 32 : n / 2, n - 1, 16};
      for (int j = 0; j < COUNT(ks); ++j) {
        if (ks[j] >= n) continue;
        RUN(.dtype = dts[d], .batch = 40, .n = n, .k = ks[j],
            .gen = {.dist = GEN_NORMAL, .nan_fraction = 0.05, .inf_fraction = 0.1});
        RUN(.dtype = dts[d], .batch = 40, .n = n, .k = ks[j], .flags = TOPK_SMALLEST,
            .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 24});
        RUN(.dtype = dts[d], .batch = 40, .n = n, .k = ks[j], .flags = TOPK_SORTED, .gen = {.dist = GEN_UNIFORM});
      }
    }
  return TEST_OK;
}

/* Two rows a warp (rtopk_kernel's L = 16: register rows of <= 512, keys of <= 32 bits, sorted
 * output for k <= 64), forced on and off (TOPK_RTOPK_LANES) over the same shapes: odd batches
 * (a warp's second half without a row), rows shorter than a half's chunk, unaligned rows
 * (ld), offsets with empty and one-element rows, every distribution's kind of ties, both
 * directions, sorted or not. */
TEST(two_rows_a_warp) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_BF16, TOPK_F16, TOPK_I32, TOPK_U32};
  static const int64_t ns[] = {1, 7, 64, 65, 200, 256, 257, 300, 512};
  static const char* lanes[] = {"16", "32"};
  static const gen_opts dists[] = {
      {.dist = GEN_UNIFORM},
      {.dist = GEN_NORMAL, .nan_fraction = 0.05, .inf_fraction = 0.1},
      {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 24},
      {.dist = GEN_ALL_EQUAL},
  };
  static const int64_t off[] = {0, 0, 1, 2, 130, 131, 387, 400, 401, 512};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int l = 0; l < COUNT(lanes); ++l)
    for (int d = 0; d < COUNT(dts); ++d)
      for (int i = 0; i < COUNT(ns); ++i) {
        const int64_t n = ns[i];
        const int64_t ks[] = {1, 16, 64, n - 1, n};
        for (int j = 0; j < COUNT(ks); ++j) {
          if (ks[j] > n || ks[j] < 1) continue;
          const gen_opts g = dists[(i + j) % COUNT(dists)];
          const unsigned flags = (j & 1 ? TOPK_SORTED : 0u) | (i & 1 ? TOPK_SMALLEST : 0u);
          RUN(.dtype = dts[d], .batch = 33, .n = n, .k = ks[j], .flags = flags, .gen = g,
              .env = {{"TOPK_RTOPK_LANES", lanes[l]}});
          RUN(.dtype = dts[d], .batch = 17, .n = n, .ld = n + 3, .k = ks[j], .flags = flags ^ TOPK_SORTED, .gen = g,
              .env = {{"TOPK_RTOPK_LANES", lanes[l]}});
        }
      }
  for (int l = 0; l < COUNT(lanes); ++l)
    for (int d = 0; d < COUNT(dts); ++d) {
      RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = 512, .k = 20, .gen = {.dist = GEN_ZIPF}, .offsets = off,
          .env = {{"TOPK_RTOPK_LANES", lanes[l]}});
      RUN(.dtype = dts[d], .batch = COUNT(off) - 1, .n = 512, .k = 64, .flags = TOPK_SORTED,
          .gen = {.dist = GEN_NORMAL}, .offsets = off, .env = {{"TOPK_RTOPK_LANES", lanes[l]}});
    }
  /* the default rule's two rows a warp: many rows (an odd count) of <= 256 and of <= 128 */
  RUN(.dtype = TOPK_F32, .batch = 20001, .n = 256, .k = 16, .gen = {.dist = GEN_NORMAL});
  RUN(.dtype = TOPK_BF16, .batch = 20001, .n = 200, .k = 40, .flags = TOPK_SORTED | TOPK_SMALLEST,
      .gen = {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 8});
  RUN(.dtype = TOPK_I32, .batch = 5001, .n = 120, .k = 30, .gen = {.dist = GEN_ZIPF});
  return TEST_OK;
}

/* Rows longer than 4096, or offsets over a longer buffer: TOPK_ERR_UNSUPPORTED, nothing run. */
TEST(unsupported) {
  GPU_SKIP_WITHOUT_DEVICE();
  void* d = NULL;
  ASSERT_STATUS(topk_device_malloc(&d, 8 * 5000 * 4), TOPK_SUCCESS);
  topk_problem p = {.batch = 2, .n = 4097, .k = 10, .algo = TOPK_ALGO_RTOPK, .backend = TOPK_BACKEND_CUDA};
  topk_status s = topk_select(&p, d, (char*)d + 40000, (char*)d + 80000, NULL, 0, NULL);
  topk_device_free(d);
  ASSERT_STATUS(s, TOPK_ERR_UNSUPPORTED);
  return TEST_OK;
}

/* max_iter's argument checks need no device: they come before the backend. */
TEST(max_iter_errors) {
  float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[2];
  int64_t idx[2];
  topk_problem p = {.batch = 1, .n = 8, .k = 2, .backend = TOPK_BACKEND_CPU, .max_iter = -1};
  ASSERT_STATUS(topk_select(&p, in, out, idx, NULL, 0, NULL), TOPK_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(strstr(topk_error_detail(), "max_iter") != NULL);
  p.max_iter = 3;
  p.algo = TOPK_ALGO_AIR_RADIX;
  ASSERT_STATUS(topk_select(&p, in, out, idx, NULL, 0, NULL), TOPK_ERR_UNSUPPORTED);
  ASSERT_TRUE(strstr(topk_error_detail(), "rtopk") != NULL);
  p.algo = TOPK_ALGO_CPU_SELECT;
  ASSERT_STATUS(topk_select(&p, in, out, idx, NULL, 0, NULL), TOPK_ERR_UNSUPPORTED);
  size_t ws = 0;
  p.algo = TOPK_ALGO_SORT;
  ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_ERR_UNSUPPORTED);
  p.max_iter = -5;
  p.algo = TOPK_ALGO_RTOPK;
  ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_ERR_INVALID_ARGUMENT);
  return TEST_OK;
}

/* Early stopping returns k valid, distinct elements of the row, whatever the data. */
TEST(early_stop_valid) {
  static const gen_opts dists[] = {
      {.dist = GEN_NORMAL},
      {.dist = GEN_UNIFORM},
      {.dist = GEN_ALL_EQUAL},
      {.dist = GEN_ZIPF},
      {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20},
      {.dist = GEN_NORMAL, .nan_fraction = 0.2, .inf_fraction = 0.2},
      {.dist = GEN_UNIFORM, .nan_fraction = 1.0},
  };
  static const int64_t ns[] = {64, 256, 768, 1000, 3000, 4096};
  static const int32_t iters[] = {1, 2, 5, 8, 40};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(all_dtypes); ++d)
    for (int g = 0; g < COUNT(dists); ++g)
      for (int s = 0; s < COUNT(ns); ++s)
        for (int it = 0; it < COUNT(iters); ++it) {
          const unsigned flags = ((s + it) & 1 ? TOPK_SMALLEST : 0u) | ((d + g) % 3 == 0 ? TOPK_SORTED : 0u);
          ES_RUN(.dtype = all_dtypes[d], .batch = 40, .n = ns[s], .k = ns[s] / 5 + 1, .flags = flags,
                 .index_type = (it & 1) ? TOPK_INDEX_I32 : TOPK_INDEX_I64, .max_iter = iters[it], .gen = dists[g]);
        }
  /* unaligned rows, k = n - 1 and n, offsets with empty and short rows */
  ES_RUN(.dtype = TOPK_F32, .batch = 40, .n = 257, .k = 256, .ld = 259, .max_iter = 2, .gen = {.dist = GEN_NORMAL});
  ES_RUN(.dtype = TOPK_BF16, .batch = 40, .n = 700, .k = 700, .max_iter = 2, .gen = {.dist = GEN_NORMAL});
  static const int64_t off[] = {0, 0, 1, 6, 69, 70, 71, 1071, 1071, 3071, 3072, 4000, 4000, 4096};
  ES_RUN(.dtype = TOPK_F16, .batch = COUNT(off) - 1, .n = 4096, .k = 70, .max_iter = 4,
         .gen = {.dist = GEN_NORMAL}, .offsets = off);
  return TEST_OK;
}

/* With enough iterations the early-stopping search hits count == k: the exact result. */
TEST(early_stop_converges) {
  static const topk_dtype dts[] = {TOPK_F32, TOPK_F64, TOPK_I32};
  static const int64_t ns[] = {256, 768, 1024, 4096};
  GPU_SKIP_WITHOUT_DEVICE();
  for (int d = 0; d < COUNT(dts); ++d)
    for (int s = 0; s < COUNT(ns); ++s)
      for (int f = 0; f < 4; ++f) {
        const unsigned flags = (f & 1 ? TOPK_SMALLEST : 0u) | (f & 2 ? TOPK_SORTED : 0u);
        ES_RUN(.dtype = dts[d], .batch = 300, .n = ns[s], .k = 16 + 40 * f, .flags = flags, .max_iter = 64,
               .distinct = 1);
      }
  return TEST_OK;
}

/* The library-allocated workspace path (RTop-K needs none) and TOPK_NONDETERMINISTIC. */
TEST(misc_flags) {
  GPU_SKIP_WITHOUT_DEVICE();
  RUN(.dtype = TOPK_F32, .batch = 30, .n = 700, .k = 99, .gen = {.dist = GEN_NORMAL}, .lib_workspace = 1);
  RUN(.dtype = TOPK_F16, .batch = 30, .n = 2000, .k = 300, .flags = TOPK_NONDETERMINISTIC | TOPK_SORTED,
      .gen = {.dist = GEN_ZIPF});
  return TEST_OK;
}

#define TEST_LIST(X)        \
  X(sanitizer_small)        \
  X(search_modes)           \
  X(dtypes_directions)      \
  X(distributions)          \
  X(row_lengths)            \
  X(index_types)            \
  X(leading_dimension)      \
  X(variable_rows)          \
  X(thread_path)            \
  X(many_rows)              \
  X(sorted_large_k)         \
  X(sorted_methods)         \
  X(sorted_wide)            \
  X(finish_paths)           \
  X(two_rows_a_warp)        \
  X(unsupported)            \
  X(max_iter_errors)        \
  X(early_stop_valid)       \
  X(early_stop_converges)   \
  X(misc_flags)
TEST_MAIN(TEST_LIST)
