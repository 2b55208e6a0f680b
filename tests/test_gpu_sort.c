/*
 * test_gpu_sort.c: differential tests of sort-and-choose on the GPU (TOPK_ALGO_SORT,
 * TOPK_BACKEND_CUDA) against the CPU reference (check_topk), plus the API's
 * behaviour around device memory: backend routing, workspace checks, plans,
 * streams.
 *
 * Every test returns TEST_SKIP where topk_cuda_available() is 0, so CI (no GPU)
 * reports the binary as skipped. Device memory is handled through topk.h's own
 * helpers (section 6: cudaMalloc/cudaMemcpy underneath), so this file needs no CUDA
 * header and compiles in CPU-only builds as well.
 *
 * Each case: generate the input on the host (gen.h), upload it, poison the device
 * outputs (0xA5), select, copy back, check. The checked properties are those of
 * DESIGN.md: equal value multisets, distinct in-range indices, in[idx] == value,
 * the deterministic index set, best-first order with ties by index, padding of
 * short rows. Cases too large for the qsort reference use an independent scan
 * (small k) or a constructed input whose answer is known.
 *
 *   test_gpu_sort [filter]      runs the tests whose name contains filter;
 *   test_gpu_sort sanitizer     the quick subset for compute-sanitizer (memcheck, racecheck)
 * TOPK_TEST_SEED=<n> replays a failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/keys.h"
#include "gen.h"
#include "harness.h"
#include "topk.h"

/* ------------------------------------------------------------------ helpers */

/* splitmix64: the tests' own random numbers (shapes, k, offsets), from the seed. */
static uint64_t rng_next(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/* Uniform in [lo, hi]. */
static int64_t rng_range(uint64_t* state, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rng_next(state) % (uint64_t)(hi - lo + 1));
}

static size_t index_size(topk_index it) { return it == TOPK_INDEX_I32 ? 4 : it == TOPK_INDEX_I64 ? 8 : 0; }

static const char* index_name(topk_index it) {
  return it == TOPK_INDEX_I32 ? "i32" : it == TOPK_INDEX_I64 ? "i64" : "none";
}

/* The input distributions: every gen.h family, radix-adversarial at several widths, NaN/inf mixes. */
typedef struct dist_spec {
  gen_dist    dist;
  int         equal_bits;
  double      nan_fraction, inf_fraction;
  const char* name;
} dist_spec;

static const dist_spec dists_[] = {
    {GEN_UNIFORM, 0, 0, 0, "uniform"},
    {GEN_NORMAL, 0, 0, 0, "normal"},
    {GEN_RADIX_ADVERSARIAL, 8, 0, 0, "radix8"},
    {GEN_RADIX_ADVERSARIAL, 16, 0, 0, "radix16"},
    {GEN_RADIX_ADVERSARIAL, 20, 0, 0, "radix20"},
    {GEN_RADIX_ADVERSARIAL, 24, 0, 0, "radix24"},
    {GEN_ALL_EQUAL, 0, 0, 0, "all-equal"},
    {GEN_SORTED_ASC, 0, 0, 0, "sorted-asc"},
    {GEN_SORTED_DESC, 0, 0, 0, "sorted-desc"},
    {GEN_ZIPF, 0, 0, 0, "zipf"},
    {GEN_CD, 0, 0, 0, "cd"},
    {GEN_UNIFORM, 0, 0.05, 0.05, "nan-inf"},
    {GEN_NORMAL, 0, 0.4, 0.4, "nan-inf-heavy"},
};
#define DIST_COUNT ((int)(sizeof dists_ / sizeof dists_[0]))

static const topk_dtype dtypes_[TOPK_DTYPE_COUNT] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                                     TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};

/* One GPU selection to run and check. */
typedef struct gpu_case {
  topk_problem   p;                /* row_offsets unused: offsets below */
  dist_spec      dist;
  uint64_t       seed;
  const int64_t* offsets;          /* host offsets (batch + 1) for variable rows, or NULL */
  int            caller_workspace; /* 1: pass topk_workspace_size() bytes; 0: NULL (library allocates) */
  topk_stream    stream;
} gpu_case;

static void describe_case(const gpu_case* c) {
  fprintf(stderr,
          "  case: %s %s batch=%lld n=%lld k=%lld ld=%lld %s %s index=%s offsets=%s workspace=%s stream=%s "
          "gen-seed=%llu\n",
          topk_dtype_name(c->p.dtype), c->dist.name, (long long)c->p.batch, (long long)c->p.n, (long long)c->p.k,
          (long long)c->p.ld, (c->p.flags & TOPK_SMALLEST) ? "smallest" : "largest",
          (c->p.flags & TOPK_SORTED) ? "sorted" : "unsorted", index_name(c->p.index_type), c->offsets ? "yes" : "no",
          c->caller_workspace ? "caller" : "library", c->stream ? "own" : "default", (unsigned long long)c->seed);
}

#define CASE_FAIL(...)          \
  do {                          \
    fprintf(stderr, __VA_ARGS__); \
    goto done;                  \
  } while (0)
#define CASE_TRY(expr)                                                                                  \
  do {                                                                                                  \
    topk_status s_ = (expr);                                                                            \
    if (s_ != TOPK_SUCCESS) CASE_FAIL("%s: %s (%s)\n", #expr, topk_status_name(s_), topk_error_detail()); \
  } while (0)

/* Elements of the input buffer of a case. */
static int64_t input_count(const topk_problem* p, const int64_t* offsets) {
  if (offsets) return p->n;
  const int64_t ld = p->ld ? p->ld : p->n;
  return (p->batch - 1) * ld + p->n;
}

/*
 * Runs one case on the GPU (p.algo = SORT, p.backend = CUDA) and checks it.
 * @return 0 when right; -1 (after printing why and the case) otherwise.
 */
static int run_case(const gpu_case* c) {
  topk_problem p = c->p;
  p.algo = TOPK_ALGO_SORT;
  p.backend = TOPK_BACKEND_CUDA;
  const size_t es = topk_dtype_size(p.dtype);
  const int64_t count = input_count(&p, c->offsets);
  const size_t in_bytes = (size_t)count * es;
  const size_t val_bytes = (size_t)(p.batch * p.k) * es;
  const size_t idx_bytes = (size_t)(p.batch * p.k) * index_size(p.index_type);
  const size_t off_bytes = c->offsets ? (size_t)(p.batch + 1) * sizeof(int64_t) : 0;
  void *h_in = malloc(in_bytes + 1), *h_val = malloc(val_bytes + 1), *h_idx = malloc(idx_bytes + 1);
  void *d_in = NULL, *d_val = NULL, *d_idx = NULL, *d_off = NULL, *d_ws = NULL;
  size_t ws = 0;
  int rc = -1;
  if (!h_in || !h_val || !h_idx) CASE_FAIL("out of host memory\n");

  gen_opts g;
  memset(&g, 0, sizeof g);
  g.dist = c->dist.dist;
  g.seed = c->seed;
  g.equal_bits = c->dist.equal_bits;
  g.nan_fraction = c->dist.nan_fraction;
  g.inf_fraction = c->dist.inf_fraction;
  g.row_length = c->offsets ? 0 : (p.ld ? p.ld : p.n); /* sorted distributions restart every row */
  if (count > 0 && gen_fill(h_in, p.dtype, count, &g) != 0) CASE_FAIL("gen_fill failed\n");

  CASE_TRY(topk_device_malloc(&d_in, in_bytes + 1));
  CASE_TRY(topk_device_malloc(&d_val, val_bytes));
  if (idx_bytes) CASE_TRY(topk_device_malloc(&d_idx, idx_bytes));
  if (off_bytes) CASE_TRY(topk_device_malloc(&d_off, off_bytes));
  if (in_bytes) CASE_TRY(topk_memcpy_to_device(d_in, h_in, in_bytes));
  if (off_bytes) CASE_TRY(topk_memcpy_to_device(d_off, c->offsets, off_bytes));
  /* Uploads from pageable memory may still be in flight for a non-blocking stream. */
  CASE_TRY(topk_device_synchronize());
  CASE_TRY(topk_memset_device(d_val, 0xA5, val_bytes, c->stream));
  if (idx_bytes) CASE_TRY(topk_memset_device(d_idx, 0xA5, idx_bytes, c->stream));

  p.row_offsets = (const int64_t*)d_off;
  CASE_TRY(topk_workspace_size(&p, &ws));
  if (ws == 0) CASE_FAIL("workspace size is 0 for a CUDA sort\n");
  if (c->caller_workspace) CASE_TRY(topk_device_malloc(&d_ws, ws));
  CASE_TRY(topk_select(&p, d_in, d_val, d_idx, d_ws, c->caller_workspace ? ws : 0, c->stream));
  CASE_TRY(topk_stream_synchronize(c->stream));
  CASE_TRY(topk_memcpy_to_host(h_val, d_val, val_bytes));
  if (idx_bytes) CASE_TRY(topk_memcpy_to_host(h_idx, d_idx, idx_bytes));
  if (check_topk(&p, h_in, c->offsets, h_val, idx_bytes ? h_idx : NULL) != 0) CASE_FAIL("check_topk failed\n");
  rc = 0;
done:
  if (rc != 0) describe_case(c);
  topk_device_free(d_in);
  topk_device_free(d_val);
  topk_device_free(d_idx);
  topk_device_free(d_off);
  topk_device_free(d_ws);
  free(h_in);
  free(h_val);
  free(h_idx);
  return rc;
}

/*
 * Offsets of batch variable-length rows with lengths in [0, max_len]: every fifth
 * row empty, a gap before the first row and after the last (positions in no row).
 * @return the buffer length n.
 */
static int64_t make_offsets(int64_t* off, int64_t batch, int64_t max_len, uint64_t* rng) {
  int64_t pos = rng_range(rng, 0, 6);
  for (int64_t r = 0; r < batch; ++r) {
    off[r] = pos;
    pos += (r % 5 == 1) ? 0 : rng_range(rng, 0, max_len);
  }
  off[batch] = pos;
  return pos + rng_range(rng, 0, 4);
}

/* SHAPE_COUNT shapes that cover each mode of the sort: per-row (batch 1; long rows), segmented
 * (uniform, strided, variable). Sets c->p's shape and, for variable rows, off (>= 41 entries). */
enum { SHAPE_COUNT = 8 };
static void set_shape(gpu_case* c, int shape, int64_t* off, uint64_t* rng) {
  topk_problem* p = &c->p;
  p->ld = 0;
  c->offsets = NULL;
  switch (shape) {
    case 0: p->batch = 1; p->n = 1; p->k = 1; break;
    case 1: p->batch = 1; p->n = 1000; p->k = 999; break;                     /* k = n - 1 */
    case 2: p->batch = 5; p->n = 300; p->k = 300; p->ld = 307; break;         /* k = n, strided */
    case 3: p->batch = 64; p->n = 2000; p->k = rng_range(rng, 1, 2000); break; /* random k */
    case 4: p->batch = 3; p->n = 5000; p->k = 1; p->ld = 5003; break;
    case 5: /* variable rows, empty ones and ones shorter than k */
      p->batch = 40;
      p->k = 50;
      p->n = make_offsets(off, p->batch, 300, rng);
      c->offsets = off;
      break;
    case 6: p->batch = 2; p->n = 150001; p->k = rng_range(rng, 1, 2000); break; /* long rows: one sort per row */
    default: p->batch = 300; p->n = 1024; p->k = 100; break;                    /* many rows: segmented */
  }
}

/* ------------------------------------------------------------------ differential tests */

/* Every dtype x direction x index type x distribution, each on one of the shapes in turn. */
TEST(sort_matrix) {
  if (!topk_cuda_available()) return TEST_SKIP;
  uint64_t rng = test_seed() ^ 0x51ull;
  topk_stream stream = NULL;
  ASSERT_STATUS(topk_stream_create(&stream), TOPK_SUCCESS);
  int64_t off[64];
  int counter = 0, failed = 0;
  for (int t = 0; t < TOPK_DTYPE_COUNT; ++t)
    for (int smallest = 0; smallest < 2; ++smallest)
      for (int it = 0; it < 3; ++it)
        for (int d = 0; d < DIST_COUNT && !failed; ++d, ++counter) {
          gpu_case c;
          memset(&c, 0, sizeof c);
          c.p.dtype = dtypes_[t];
          c.p.index_type = (topk_index)it;
          c.p.flags = (smallest ? TOPK_SMALLEST : 0) | ((counter / 2) % 2 ? TOPK_SORTED : 0);
          c.dist = dists_[d];
          c.seed = test_seed() + (uint64_t)counter;
          c.caller_workspace = counter % 2;
          c.stream = counter % 3 == 0 ? stream : NULL;
          set_shape(&c, counter % SHAPE_COUNT, off, &rng);
          failed = run_case(&c) != 0;
        }
  topk_stream_destroy(stream);
  ASSERT_TRUE(!failed);
  return TEST_OK;
}

/* batch x n x k over the edges: n from 1, k in {1, n - 1, n, random}; four dtypes in turn. */
TEST(sort_shapes) {
  if (!topk_cuda_available()) return TEST_SKIP;
  static const int64_t batches[] = {1, 2, 17, 1000};
  static const int64_t lengths[] = {1, 2, 33, 1000, 70000, (1 << 17) + 5, (1 << 20) + 3};
  static const topk_dtype types[] = {TOPK_F32, TOPK_BF16, TOPK_I64, TOPK_U32};
  uint64_t rng = test_seed() ^ 0x5Aull;
  int counter = 0;
  for (size_t b = 0; b < sizeof batches / sizeof batches[0]; ++b)
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; ++l) {
      const int64_t batch = batches[b], n = lengths[l];
      if (batch * n > ((int64_t)1 << 22)) continue; /* the qsort reference's time */
      const int64_t ks[4] = {1, n - 1, n, rng_range(&rng, 1, n)};
      for (int ki = 0; ki < 4; ++ki, ++counter) {
        if (ks[ki] < 1) continue;
        gpu_case c;
        memset(&c, 0, sizeof c);
        c.p.dtype = types[counter % 4];
        c.p.batch = batch;
        c.p.n = n;
        c.p.k = ks[ki];
        c.p.ld = counter % 3 == 0 ? n + 3 : 0;
        c.p.index_type = (topk_index)(counter % 3);
        c.p.flags = (counter % 2 ? TOPK_SMALLEST : 0) | TOPK_SORTED;
        c.dist = dists_[counter % DIST_COUNT];
        c.seed = test_seed() + 1000u + (uint64_t)counter;
        c.caller_workspace = (counter / 2) % 2;
        ASSERT_EQ_I64(run_case(&c), 0);
      }
    }
  return TEST_OK;
}

/* Variable-length rows: empty rows, rows shorter than k (padding), gaps, batch 1..1000. */
TEST(sort_variable_rows) {
  if (!topk_cuda_available()) return TEST_SKIP;
  static const int64_t batches[] = {1, 2, 7, 100, 1000};
  static const int64_t max_lens[] = {0, 5, 64, 3000};
  uint64_t rng = test_seed() ^ 0x7Full;
  int64_t* off = (int64_t*)malloc((1000 + 1) * sizeof(int64_t));
  ASSERT_TRUE(off != NULL);
  int counter = 0, failed = 0;
  for (size_t b = 0; b < sizeof batches / sizeof batches[0] && !failed; ++b)
    for (size_t m = 0; m < sizeof max_lens / sizeof max_lens[0] && !failed; ++m)
      for (int t = 0; t < 3 && !failed; ++t, ++counter) {
        gpu_case c;
        memset(&c, 0, sizeof c);
        c.p.dtype = dtypes_[counter % TOPK_DTYPE_COUNT];
        c.p.batch = batches[b];
        c.p.n = make_offsets(off, c.p.batch, max_lens[m], &rng);
        c.p.k = t == 0 ? 1 : t == 1 ? (max_lens[m] / 2 + 1) : max_lens[m] + 7; /* the last: every row short */
        c.p.index_type = (topk_index)(counter % 3);
        c.p.flags = (counter % 2 ? TOPK_SMALLEST : 0) | TOPK_SORTED;
        c.offsets = off;
        c.dist = dists_[counter % DIST_COUNT];
        c.seed = test_seed() + 2000u + (uint64_t)counter;
        c.caller_workspace = (counter / 2) % 2;
        failed = run_case(&c) != 0;
      }
  /* A buffer of no elements: every row empty, every slot padding. */
  if (!failed) {
    gpu_case c;
    memset(&c, 0, sizeof c);
    c.p.dtype = TOPK_F32;
    c.p.batch = 3;
    c.p.n = 0;
    c.p.k = 2;
    memset(off, 0, 4 * sizeof(int64_t));
    c.offsets = off;
    c.dist = dists_[0];
    failed = run_case(&c) != 0;
  }
  free(off);
  ASSERT_TRUE(!failed);
  return TEST_OK;
}

/* The largest rows the qsort reference can check in reasonable time (a few seconds each). */
TEST(sort_large) {
  if (!topk_cuda_available()) return TEST_SKIP;
  gpu_case c;
  memset(&c, 0, sizeof c);
  c.p.dtype = TOPK_F32;
  c.p.batch = 1;
  c.p.n = (int64_t)1 << 26;
  c.p.k = 1000;
  c.p.flags = TOPK_SORTED;
  c.dist = dists_[0];
  c.seed = test_seed() + 3000u;
  c.caller_workspace = 1;
  ASSERT_EQ_I64(run_case(&c), 0);

  /* bf16 has 2^16 values: 2^25 elements tie massively, so the index rule is tested at scale. */
  c.p.dtype = TOPK_BF16;
  c.p.n = (int64_t)1 << 25;
  c.p.k = 100000;
  c.p.flags = TOPK_SMALLEST | TOPK_SORTED;
  c.p.index_type = TOPK_INDEX_I32;
  c.dist = dists_[1];
  c.caller_workspace = 0;
  ASSERT_EQ_I64(run_case(&c), 0);

  c.p.dtype = TOPK_U64;
  c.p.batch = 4;
  c.p.n = (int64_t)1 << 22;
  c.p.k = 4097;
  c.p.flags = TOPK_SORTED;
  c.p.index_type = TOPK_INDEX_I64;
  c.dist = dists_[4];
  ASSERT_EQ_I64(run_case(&c), 0);
  return TEST_OK;
}

/*
 * The k best of row[0..len) by one scan (rank key descending, index ascending);
 * an oracle for inputs too large to qsort, and independent of the reference.
 * @return min(k, len). k must be small.
 */
static int64_t scan_topk(const void* row, int64_t len, topk_dtype dt, int smallest, int64_t k, uint64_t* keys,
                         int64_t* idx) {
  int64_t m = 0;
  for (int64_t i = 0; i < len; ++i) {
    const uint64_t key = topk_rank_key(topk_load_bits(row, i, dt), dt, smallest);
    if (m == k && key <= keys[m - 1]) continue; /* a later index loses ties */
    int64_t j = m < k ? m++ : k - 1;
    while (j > 0 && keys[j - 1] < key) {
      keys[j] = keys[j - 1];
      idx[j] = idx[j - 1];
      --j;
    }
    keys[j] = key;
    idx[j] = i;
  }
  return m;
}

/*
 * More rows than one segmented call holds (2^28 elements per group): 4100 rows of
 * 2^16, checked by the scan oracle. 1 GiB of input, 4 GiB of workspace.
 */
TEST(sort_many_groups) {
  if (!topk_cuda_available()) return TEST_SKIP;
  const int64_t batch = 4100, n = (int64_t)1 << 16, k = 7;
  const size_t in_bytes = (size_t)(batch * n) * 4;
  int32_t* h_in = (int32_t*)malloc(in_bytes);
  int32_t* h_val = (int32_t*)malloc((size_t)(batch * k) * 4);
  int64_t* h_idx = (int64_t*)malloc((size_t)(batch * k) * 8);
  ASSERT_TRUE(h_in && h_val && h_idx);
  uint64_t rng = test_seed() ^ 0x6Dull;
  /* Few distinct values (many ties) in random order. */
  for (int64_t i = 0; i < batch * n; ++i) h_in[i] = (int32_t)(rng_next(&rng) % 100000u) - 50000;
  void *d_in = NULL, *d_val = NULL, *d_idx = NULL;
  int result = TEST_OK;
  topk_status s = topk_device_malloc(&d_in, in_bytes);
  if (s == TOPK_SUCCESS) s = topk_device_malloc(&d_val, (size_t)(batch * k) * 4);
  if (s == TOPK_SUCCESS) s = topk_device_malloc(&d_idx, (size_t)(batch * k) * 8);
  if (s == TOPK_SUCCESS) s = topk_memcpy_to_device(d_in, h_in, in_bytes);
  uint64_t keys[7];
  int64_t want[7];
  for (int smallest = 0; smallest < 2 && s == TOPK_SUCCESS && result == TEST_OK; ++smallest) {
    topk_problem p = {.dtype = TOPK_I32, .batch = batch, .n = n, .k = k, .flags = TOPK_SORTED,
                      .algo = TOPK_ALGO_SORT, .backend = TOPK_BACKEND_CUDA};
    if (smallest) p.flags |= TOPK_SMALLEST;
    s = topk_select(&p, d_in, d_val, d_idx, NULL, 0, NULL);
    if (s == TOPK_SUCCESS) s = topk_memcpy_to_host(h_val, d_val, (size_t)(batch * k) * 4);
    if (s == TOPK_SUCCESS) s = topk_memcpy_to_host(h_idx, d_idx, (size_t)(batch * k) * 8);
    for (int64_t r = 0; r < batch && s == TOPK_SUCCESS && result == TEST_OK; ++r) {
      scan_topk(h_in + r * n, n, TOPK_I32, smallest, k, keys, want);
      for (int64_t j = 0; j < k; ++j)
        if (h_idx[r * k + j] != want[j] || h_val[r * k + j] != h_in[r * n + want[j]]) {
          fprintf(stderr, "row %lld slot %lld (%s): got index %lld value %d, want index %lld value %d\n",
                  (long long)r, (long long)j, smallest ? "smallest" : "largest", (long long)h_idx[r * k + j],
                  h_val[r * k + j], (long long)want[j], h_in[r * n + want[j]]);
          result = TEST_FAIL;
          break;
        }
    }
  }
  topk_device_free(d_in);
  topk_device_free(d_val);
  topk_device_free(d_idx);
  free(h_in);
  free(h_val);
  free(h_idx);
  if (s == TOPK_ERR_OUT_OF_MEMORY) return TEST_SKIP; /* a smaller GPU */
  ASSERT_STATUS(s, TOPK_SUCCESS);
  ASSERT_EQ_I64(result, TEST_OK);
  return TEST_OK;
}

/* ------------------------------------------------------------------ n >= 2^31 */

/* An f16 element placed at a position of a buffer that is +0.0 everywhere else. */
typedef struct planted {
  int64_t  pos;
  uint16_t bits;
} planted;

/* Best first (rank key descending, index ascending). */
typedef struct ranked {
  uint64_t key;
  int64_t  idx;
  uint16_t bits;
} ranked;
static int ranked_cmp(const void* a, const void* b) {
  const ranked *x = (const ranked*)a, *y = (const ranked*)b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Expected top k of [begin, end) of the planted buffer; want holds k entries (idx -1: padding). */
static void expect_planted(const planted* pl, int count, int64_t begin, int64_t end, int smallest, int64_t k,
                           ranked* want) {
  ranked cand[64];
  int m = 0;
  for (int i = 0; i < count; ++i)
    if (pl[i].pos >= begin && pl[i].pos < end) {
      cand[m].key = topk_rank_key(pl[i].bits, TOPK_F16, smallest);
      cand[m].idx = pl[i].pos - begin;
      cand[m].bits = pl[i].bits;
      ++m;
    }
  /* +0.0 everywhere else: the lowest unplanted positions are the only zeros that can win. */
  for (int64_t pos = begin; pos < end && m < 64; ++pos) {
    int taken = 0;
    for (int i = 0; i < count; ++i) taken |= pl[i].pos == pos;
    if (taken) continue;
    if (pos - begin >= k + count) break;
    cand[m].key = topk_rank_key(0, TOPK_F16, smallest);
    cand[m].idx = pos - begin;
    cand[m].bits = 0;
    ++m;
  }
  qsort(cand, (size_t)m, sizeof cand[0], ranked_cmp);
  for (int64_t j = 0; j < k; ++j) {
    if (j < m) {
      want[j] = cand[j];
    } else {
      want[j].idx = -1;
      want[j].bits = (uint16_t)topk_worst_value_bits(TOPK_F16, smallest);
    }
  }
}

/*
 * Rows and buffers of more than 2^31 elements (64-bit counts and indices in every
 * kernel, the per-row and the global modes): an f16 buffer of 2^31 + 2^20 zeros
 * with values planted on both sides of 2^31. About 60 GB of device memory; skipped
 * where there is not enough.
 */
TEST(sort_huge_n) {
  if (!topk_cuda_available()) return TEST_SKIP;
  const int64_t n = ((int64_t)1 << 31) + ((int64_t)1 << 20), two31 = (int64_t)1 << 31;
  const planted pl[] = {
      {two31 + 1000, 0x3C00}, /* 1.0 */
      {two31 + 3, 0x4000},    /* 2.0 */
      {n - 1, 0x7E00},        /* NaN: the largest */
      {5, 0x3C00},            /* 1.0 again: ties with two31 + 1000, lower index first */
      {two31 + 77, 0xBC00},   /* -1.0 */
      {two31 - 1, 0xC000},    /* -2.0 */
      {two31, 0x8000},        /* -0.0, below every +0.0 */
      {n - 2, 0x7C00},        /* +inf */
  };
  const int count = (int)(sizeof pl / sizeof pl[0]);
  const int64_t k = 8;
  /* Variable rows: [0, 2^30), an empty row, [2^30, n - 3), and a 3-element row holding inf and NaN. */
  const int64_t offsets[5] = {0, (int64_t)1 << 30, (int64_t)1 << 30, n - 3, n};
  const int64_t vbatch = 4;

  void *d_in = NULL, *d_val = NULL, *d_idx = NULL, *d_off = NULL;
  uint16_t h_val[4 * 8];
  int64_t h_idx[4 * 8];
  ranked want[8];
  int result = TEST_OK;
  topk_status s = topk_device_malloc(&d_in, (size_t)n * 2);
  if (s == TOPK_SUCCESS) s = topk_device_malloc(&d_val, sizeof h_val);
  if (s == TOPK_SUCCESS) s = topk_device_malloc(&d_idx, sizeof h_idx);
  if (s == TOPK_SUCCESS) s = topk_device_malloc(&d_off, sizeof offsets);
  if (s == TOPK_SUCCESS) s = topk_memset_device(d_in, 0, (size_t)n * 2, NULL);
  for (int i = 0; i < count && s == TOPK_SUCCESS; ++i)
    s = topk_memcpy_to_device((char*)d_in + pl[i].pos * 2, &pl[i].bits, 2);
  if (s == TOPK_SUCCESS) s = topk_memcpy_to_device(d_off, offsets, sizeof offsets);

  for (int mode = 0; mode < 4 && s == TOPK_SUCCESS && result == TEST_OK; ++mode) {
    const int smallest = mode % 2, variable = mode / 2;
    topk_problem p = {.dtype = TOPK_F16, .batch = variable ? vbatch : 1, .n = n, .k = k,
                      .row_offsets = variable ? (const int64_t*)d_off : NULL,
                      .flags = (smallest ? TOPK_SMALLEST : 0u) | TOPK_SORTED, .algo = TOPK_ALGO_SORT,
                      .backend = TOPK_BACKEND_CUDA};
    s = topk_memset_device(d_val, 0xA5, sizeof h_val, NULL);
    if (s == TOPK_SUCCESS) s = topk_memset_device(d_idx, 0xA5, sizeof h_idx, NULL);
    if (s == TOPK_SUCCESS) s = topk_select(&p, d_in, d_val, d_idx, NULL, 0, NULL);
    if (s == TOPK_SUCCESS) s = topk_memcpy_to_host(h_val, d_val, (size_t)(p.batch * k) * 2);
    if (s == TOPK_SUCCESS) s = topk_memcpy_to_host(h_idx, d_idx, (size_t)(p.batch * k) * 8);
    for (int64_t r = 0; r < p.batch && s == TOPK_SUCCESS && result == TEST_OK; ++r) {
      const int64_t begin = variable ? offsets[r] : 0, end = variable ? offsets[r + 1] : n;
      expect_planted(pl, count, begin, end, smallest, k, want);
      for (int64_t j = 0; j < k; ++j)
        if (h_idx[r * k + j] != want[j].idx || h_val[r * k + j] != want[j].bits) {
          fprintf(stderr, "%s %s row %lld slot %lld: got index %lld bits 0x%04x, want index %lld bits 0x%04x\n",
                  variable ? "variable" : "uniform", smallest ? "smallest" : "largest", (long long)r, (long long)j,
                  (long long)h_idx[r * k + j], h_val[r * k + j], (long long)want[j].idx, want[j].bits);
          result = TEST_FAIL;
          break;
        }
    }
  }
  topk_device_free(d_in);
  topk_device_free(d_val);
  topk_device_free(d_idx);
  topk_device_free(d_off);
  if (s == TOPK_ERR_OUT_OF_MEMORY) {
    printf("sort_huge_n: not enough device memory (%s)\n", topk_error_detail());
    return TEST_SKIP;
  }
  ASSERT_STATUS(s, TOPK_SUCCESS);
  ASSERT_EQ_I64(result, TEST_OK);
  return TEST_OK;
}

/* ------------------------------------------------------------------ plans, streams, API */

/* One plan run many times: new inputs, new offsets, both workspace modes, a non-default stream. */
TEST(sort_plan_reuse_and_stream) {
  if (!topk_cuda_available()) return TEST_SKIP;
  topk_stream stream = NULL;
  ASSERT_STATUS(topk_stream_create(&stream), TOPK_SUCCESS);
  const int64_t batch = 9, n = 777, k = 33;
  const size_t in_bytes = (size_t)(batch * n) * 4, out_bytes = (size_t)(batch * k) * 4;
  float* h_in = (float*)malloc(in_bytes);
  float* h_val = (float*)malloc(out_bytes);
  int32_t* h_idx = (int32_t*)malloc(out_bytes);
  ASSERT_TRUE(h_in && h_val && h_idx);
  void *d_in = NULL, *d_val = NULL, *d_idx = NULL, *d_ws = NULL, *d_off = NULL;
  ASSERT_STATUS(topk_device_malloc(&d_in, in_bytes), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_val, out_bytes), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_idx, out_bytes), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_off, (size_t)(batch + 1) * 8), TOPK_SUCCESS);

  for (int variable = 0; variable < 2; ++variable) {
    topk_problem p = {.dtype = TOPK_F32, .batch = batch, .n = n, .k = k, .index_type = TOPK_INDEX_I32,
                      .flags = TOPK_SORTED | (variable ? TOPK_SMALLEST : 0u), .algo = TOPK_ALGO_SORT,
                      .backend = TOPK_BACKEND_CUDA};
    int64_t off[10];
    if (variable) p.row_offsets = (const int64_t*)d_off; /* marks the plan as variable; offsets come per run */
    topk_plan* plan = NULL;
    ASSERT_STATUS(topk_plan_create(&plan, &p), TOPK_SUCCESS);
    ASSERT_EQ_I64(topk_plan_algo(plan), TOPK_ALGO_SORT);
    size_t ws = 0;
    ASSERT_STATUS(topk_plan_workspace_size(plan, &ws), TOPK_SUCCESS);
    ASSERT_TRUE(ws > 0);
    ASSERT_STATUS(topk_device_malloc(&d_ws, ws), TOPK_SUCCESS);
    uint64_t rng = test_seed() ^ (0x90ull + (uint64_t)variable);
    for (int run = 0; run < 4; ++run) {
      gen_opts g = {.dist = (gen_dist)(run % GEN_DIST_COUNT), .seed = test_seed() + 4000u + (uint64_t)run};
      ASSERT_EQ_I64(gen_fill(h_in, TOPK_F32, batch * n, &g), 0);
      ASSERT_STATUS(topk_memcpy_to_device(d_in, h_in, in_bytes), TOPK_SUCCESS);
      if (variable) { /* rows of 0..n/batch elements, different every run */
        off[0] = rng_range(&rng, 0, 10);
        for (int64_t r = 1; r <= batch; ++r) off[r] = off[r - 1] + rng_range(&rng, 0, n / batch - 2);
        ASSERT_STATUS(topk_memcpy_to_device(d_off, off, sizeof off), TOPK_SUCCESS);
      }
      ASSERT_STATUS(topk_device_synchronize(), TOPK_SUCCESS);
      ASSERT_STATUS(topk_memset_device(d_val, 0xA5, out_bytes, stream), TOPK_SUCCESS);
      ASSERT_STATUS(topk_memset_device(d_idx, 0xA5, out_bytes, stream), TOPK_SUCCESS);
      const int caller = run % 2;
      ASSERT_STATUS(topk_plan_run(plan, d_in, variable ? (const int64_t*)d_off : NULL, d_val, d_idx,
                                  caller ? d_ws : NULL, caller ? ws : 0, stream),
                    TOPK_SUCCESS);
      ASSERT_STATUS(topk_stream_synchronize(stream), TOPK_SUCCESS);
      ASSERT_STATUS(topk_memcpy_to_host(h_val, d_val, out_bytes), TOPK_SUCCESS);
      ASSERT_STATUS(topk_memcpy_to_host(h_idx, d_idx, out_bytes), TOPK_SUCCESS);
      ASSERT_EQ_I64(check_topk(&p, h_in, variable ? off : NULL, h_val, h_idx), 0);
    }
    topk_device_free(d_ws);
    d_ws = NULL;
    topk_plan_destroy(plan);
  }
  topk_device_free(d_in);
  topk_device_free(d_val);
  topk_device_free(d_idx);
  topk_device_free(d_off);
  topk_stream_destroy(stream);
  free(h_in);
  free(h_val);
  free(h_idx);
  return TEST_OK;
}

/* Host memory given to the CUDA backend is refused (TOPK_ERR_BACKEND) and nothing is written. */
TEST(sort_host_pointers_rejected) {
  if (!topk_cuda_available()) return TEST_SKIP;
  float h_in[64], h_val[4];
  for (int i = 0; i < 64; ++i) h_in[i] = (float)i;
  void *d_in = NULL, *d_val = NULL, *d_idx = NULL;
  ASSERT_STATUS(topk_device_malloc(&d_in, sizeof h_in), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_val, sizeof h_val), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_idx, 4 * 8), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_device(d_in, h_in, sizeof h_in), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memset_device(d_val, 0xA5, sizeof h_val, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memset_device(d_idx, 0xA5, 4 * 8, NULL), TOPK_SUCCESS);
  topk_problem p = {.batch = 1, .n = 64, .k = 4, .algo = TOPK_ALGO_SORT, .backend = TOPK_BACKEND_CUDA};
  ASSERT_STATUS(topk_select(&p, h_in, d_val, d_idx, NULL, 0, NULL), TOPK_ERR_BACKEND);
  ASSERT_STATUS(topk_select(&p, d_in, h_val, d_idx, NULL, 0, NULL), TOPK_ERR_BACKEND);
  p.algo = TOPK_ALGO_AUTO;
  ASSERT_STATUS(topk_select(&p, h_in, d_val, d_idx, NULL, 0, NULL), TOPK_ERR_BACKEND);
  /* After a call that succeeds with these device buffers (the library remembers them as device
   * memory), host pointers beside them are still refused at every call. */
  void* d_scratch = NULL;
  ASSERT_STATUS(topk_device_malloc(&d_scratch, sizeof h_in), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_device(d_scratch, h_in, sizeof h_in), TOPK_SUCCESS);
  void *d_val2 = NULL, *d_idx2 = NULL;
  ASSERT_STATUS(topk_device_malloc(&d_val2, sizeof h_val), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_idx2, 4 * 8), TOPK_SUCCESS);
  ASSERT_STATUS(topk_select(&p, d_scratch, d_val2, d_idx2, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_synchronize(), TOPK_SUCCESS);
  ASSERT_STATUS(topk_select(&p, d_scratch, h_val, d_idx, NULL, 0, NULL), TOPK_ERR_BACKEND);
  ASSERT_STATUS(topk_select(&p, h_in, d_val2, d_idx2, NULL, 0, NULL), TOPK_ERR_BACKEND);
  ASSERT_STATUS(topk_select(&p, d_in, d_val, h_val, NULL, 0, NULL), TOPK_ERR_BACKEND);
  topk_device_free(d_scratch);
  topk_device_free(d_val2);
  topk_device_free(d_idx2);
  unsigned char back[4 * 8];
  ASSERT_STATUS(topk_memcpy_to_host(back, d_val, sizeof h_val), TOPK_SUCCESS);
  ASSERT_TRUE(check_is_poisoned(back, sizeof h_val));
  ASSERT_STATUS(topk_memcpy_to_host(back, d_idx, 4 * 8), TOPK_SUCCESS);
  ASSERT_TRUE(check_is_poisoned(back, 4 * 8));
  topk_device_free(d_in);
  topk_device_free(d_val);
  topk_device_free(d_idx);
  return TEST_OK;
}

/* TOPK_BACKEND_AUTO follows the input pointer: device memory -> CUDA, host memory -> CPU. */
TEST(sort_auto_backend_routing) {
  if (!topk_cuda_available()) return TEST_SKIP;
  enum { N = 5000, K = 17, B = 3 };
  float* h_in = (float*)malloc(sizeof(float) * N * B);
  float h_val[K * B];
  int64_t h_idx[K * B];
  ASSERT_TRUE(h_in != NULL);
  gen_opts g = {.dist = GEN_NORMAL, .seed = test_seed() + 5000u};
  ASSERT_EQ_I64(gen_fill(h_in, TOPK_F32, (int64_t)N * B, &g), 0);
  topk_problem p = {.batch = B, .n = N, .k = K, .flags = TOPK_SORTED}; /* AUTO algorithm, AUTO backend */

  /* Device pointers: the CUDA backend (the CPU one would refuse them with TOPK_ERR_BACKEND). */
  void *d_in = NULL, *d_val = NULL, *d_idx = NULL;
  ASSERT_STATUS(topk_device_malloc(&d_in, sizeof(float) * N * B), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_val, sizeof h_val), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_idx, sizeof h_idx), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_device(d_in, h_in, sizeof(float) * N * B), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memset_device(d_val, 0xA5, sizeof h_val, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memset_device(d_idx, 0xA5, sizeof h_idx, NULL), TOPK_SUCCESS);
  /* With CUDA available, AUTO's size is the size of what a CUDA plan would run. */
  size_t ws = 0, ws_cuda = 0;
  ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  topk_problem pc = p;
  pc.backend = TOPK_BACKEND_CUDA;
  topk_plan* plan = NULL;
  ASSERT_STATUS(topk_plan_create(&plan, &pc), TOPK_SUCCESS);
  ASSERT_STATUS(topk_plan_workspace_size(plan, &ws_cuda), TOPK_SUCCESS);
  topk_plan_destroy(plan);
  ASSERT_EQ_I64(ws, ws_cuda);
  ASSERT_STATUS(topk_select(&p, d_in, d_val, d_idx, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_host(h_val, d_val, sizeof h_val), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_host(h_idx, d_idx, sizeof h_idx), TOPK_SUCCESS);
  ASSERT_EQ_I64(check_topk(&p, h_in, NULL, h_val, h_idx), 0);

  /* Host pointers: the CPU backend (the CUDA one would refuse them with TOPK_ERR_BACKEND). */
  check_poison(h_val, sizeof h_val);
  check_poison(h_idx, sizeof h_idx);
  ASSERT_STATUS(topk_select(&p, h_in, h_val, h_idx, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_EQ_I64(check_topk(&p, h_in, NULL, h_val, h_idx), 0);

  topk_device_free(d_in);
  topk_device_free(d_val);
  topk_device_free(d_idx);
  free(h_in);
  return TEST_OK;
}

/* A workspace one byte short: TOPK_ERR_WORKSPACE, outputs untouched; the exact size works. */
TEST(sort_workspace_too_small) {
  if (!topk_cuda_available()) return TEST_SKIP;
  enum { N = 3000, K = 40, B = 20 };
  float* h_in = (float*)malloc(sizeof(float) * N * B);
  float h_val[K * B];
  int64_t h_idx[K * B];
  ASSERT_TRUE(h_in != NULL);
  gen_opts g = {.dist = GEN_UNIFORM, .seed = test_seed() + 6000u};
  ASSERT_EQ_I64(gen_fill(h_in, TOPK_F32, (int64_t)N * B, &g), 0);
  topk_problem p = {.batch = B, .n = N, .k = K, .algo = TOPK_ALGO_SORT, .backend = TOPK_BACKEND_CUDA};
  void *d_in = NULL, *d_val = NULL, *d_idx = NULL, *d_ws = NULL;
  size_t ws = 0;
  ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  ASSERT_TRUE(ws > 1);
  ASSERT_STATUS(topk_device_malloc(&d_in, sizeof(float) * N * B), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_val, sizeof h_val), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_idx, sizeof h_idx), TOPK_SUCCESS);
  ASSERT_STATUS(topk_device_malloc(&d_ws, ws + 256), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_device(d_in, h_in, sizeof(float) * N * B), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memset_device(d_val, 0xA5, sizeof h_val, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memset_device(d_idx, 0xA5, sizeof h_idx, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_select(&p, d_in, d_val, d_idx, d_ws, ws - 1, NULL), TOPK_ERR_WORKSPACE);
  ASSERT_STATUS(topk_device_synchronize(), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_host(h_val, d_val, sizeof h_val), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_host(h_idx, d_idx, sizeof h_idx), TOPK_SUCCESS);
  ASSERT_TRUE(check_is_poisoned(h_val, sizeof h_val));
  ASSERT_TRUE(check_is_poisoned(h_idx, sizeof h_idx));
  /* A workspace that starts off the 256-byte grid still works: the size includes the slack. */
  ASSERT_STATUS(topk_select(&p, d_in, d_val, d_idx, (char*)d_ws + 4, ws, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_host(h_val, d_val, sizeof h_val), TOPK_SUCCESS);
  ASSERT_STATUS(topk_memcpy_to_host(h_idx, d_idx, sizeof h_idx), TOPK_SUCCESS);
  ASSERT_EQ_I64(check_topk(&p, h_in, NULL, h_val, h_idx), 0);
  topk_device_free(d_in);
  topk_device_free(d_val);
  topk_device_free(d_idx);
  topk_device_free(d_ws);
  free(h_in);
  return TEST_OK;
}

/* Quick and small, one case per mode: for compute-sanitizer memcheck / racecheck / initcheck. */
TEST(sanitizer_small) {
  if (!topk_cuda_available()) return TEST_SKIP;
  uint64_t rng = test_seed() ^ 0x5Cull;
  int64_t off[64];
  int failed = 0;
  for (int i = 0; i < 8 && !failed; ++i) {
    gpu_case c;
    memset(&c, 0, sizeof c);
    c.p.dtype = dtypes_[i];
    c.p.index_type = (topk_index)(i % 3);
    c.p.flags = (i % 2 ? TOPK_SMALLEST : 0) | TOPK_SORTED;
    c.dist = dists_[(i * 5) % DIST_COUNT];
    c.seed = test_seed() + 7000u + (uint64_t)i;
    c.caller_workspace = (i / 2) % 2;
    switch (i % 4) {
      case 0: c.p.batch = 1; c.p.n = 3000; c.p.k = 10; break;                  /* per-row */
      case 1: c.p.batch = 6; c.p.n = 200; c.p.k = 200; c.p.ld = 211; break;    /* segmented, strided */
      case 2:                                                                 /* variable, short rows */
        c.p.batch = 12;
        c.p.k = 9;
        c.p.n = make_offsets(off, c.p.batch, 20, &rng);
        c.offsets = off;
        break;
      default: c.p.batch = 3; c.p.n = 1; c.p.k = 1; break;
    }
    failed = run_case(&c) != 0;
  }
  ASSERT_TRUE(!failed);
  return TEST_OK;
}

#define TESTS(X)                  \
  X(sanitizer_small)              \
  X(sort_matrix)                  \
  X(sort_shapes)                  \
  X(sort_variable_rows)           \
  X(sort_plan_reuse_and_stream)   \
  X(sort_host_pointers_rejected)  \
  X(sort_auto_backend_routing)    \
  X(sort_workspace_too_small)     \
  X(sort_many_groups)             \
  X(sort_large)                   \
  X(sort_huge_n)
TEST_MAIN(TESTS)
