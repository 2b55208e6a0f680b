/*
 * test_cpu_semantics.c: differential tests of every CPU algorithm in the ops table
 * against the reference (check_topk), over dtypes x directions x sorted/unsorted x
 * index types x distributions x shapes (strided and variable-length rows too), plus
 * hand-written cases for the semantics in topk.h: NaN, signed zero, infinities,
 * deterministic ties, padding of short rows.
 *
 * Every case's data comes from a seed derived from test_seed() (TOPK_TEST_SEED), and a
 * failing case prints its parameters and seed. Elements outside the rows (stride gaps,
 * space outside the offsets) hold the best value of the direction, so reading them
 * shows up as a wrong result; outputs carry a poisoned guard zone that must survive.
 */
#define _POSIX_C_SOURCE 200809L /* setenv: the thread count is varied through TOPK_CPU_THREADS */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "check.h"
#include "common/keys.h"
#include "gen.h"
#include "harness.h"
#include "topk.h"

static const topk_dtype all_dtypes[] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                        TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};
enum { NDTYPES = sizeof all_dtypes / sizeof all_dtypes[0], GUARD = 16 };

typedef struct dist_case {
  const char* name;
  gen_dist    dist;
  int         equal_bits;
  double      nan_fraction, inf_fraction; /* floats only */
} dist_case;

static const dist_case dists[] = {
    {"uniform", GEN_UNIFORM, 0, 0, 0},        {"normal", GEN_NORMAL, 0, 0, 0},
    {"radix8", GEN_RADIX_ADVERSARIAL, 8, 0, 0}, {"radix16", GEN_RADIX_ADVERSARIAL, 16, 0, 0},
    {"radix20", GEN_RADIX_ADVERSARIAL, 20, 0, 0}, {"radix24", GEN_RADIX_ADVERSARIAL, 24, 0, 0},
    {"equal", GEN_ALL_EQUAL, 0, 0, 0},        {"asc", GEN_SORTED_ASC, 0, 0, 0},
    {"desc", GEN_SORTED_DESC, 0, 0, 0},       {"zipf", GEN_ZIPF, 0, 0, 0},
    {"cd", GEN_CD, 0, 0, 0},                  {"uniform+nan+inf", GEN_UNIFORM, 0, 0.05, 0.05},
    {"normal+many-nan", GEN_NORMAL, 0, 0.3, 0.1}, {"zipf+nan+inf", GEN_ZIPF, 0, 0.01, 0.01},
};
enum { NDISTS = sizeof dists / sizeof dists[0] };

static int is_float(topk_dtype dt) { return dt == TOPK_F32 || dt == TOPK_F16 || dt == TOPK_BF16 || dt == TOPK_F64; }

/* ------------------------------------------------------------------ randomness */

static uint64_t splitmix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

typedef struct rng {
  uint64_t s;
} rng;
static uint64_t rng_next(rng* r) { return r->s = splitmix(r->s); }
/* Uniform in [lo, hi]. */
static int64_t rng_range(rng* r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Per-case seeds: test_seed() mixed with the test's own salt and a running case number, so a
 * test run alone (by name) replays the very same cases as in a full run. */
static uint64_t case_counter_;
static void begin_cases(uint64_t salt) { case_counter_ = salt << 32; }
static uint64_t next_case_seed(void) { return splitmix(test_seed() ^ splitmix(++case_counter_)); }

/* ------------------------------------------------------------------ CPU algorithms */

static const topk_algo_ops* cpu_algos_[TOPK_ALGO_COUNT];
static int cpu_algo_count(void) {
  int count = 0, found = 0;
  const topk_algo_ops* const* all = topk_algo_all(&count);
  for (int i = 0; i < count; ++i)
    if (all[i]->backend == TOPK_BACKEND_CPU && found < TOPK_ALGO_COUNT) cpu_algos_[found++] = all[i];
  return found;
}

/* The reference sorts every row: long rows cost it (and the checker, which calls it) the most,
 * and exercise nothing new in it, so it gets fewer of them than the algorithms it judges. */
static int is_oracle(const topk_algo_ops* ops) { return ops->algo == TOPK_ALGO_SORT; }

/* ------------------------------------------------------------------ one differential case */

typedef struct tcase {
  const topk_algo_ops* algo;
  topk_dtype           dt;
  const dist_case*     dist;
  unsigned             flags;
  topk_index           it;
  int64_t              batch, n, k, ld; /* ld 0: n (uniform rows) */
  const int64_t*       offsets;         /* host offsets, or NULL */
  uint64_t             seed;
} tcase;

static void describe(const tcase* c) {
  const char* threads = getenv("TOPK_CPU_THREADS");
  fprintf(stderr,
          "  case: algo=%s dtype=%s dist=%s flags=0x%x index=%d batch=%lld n=%lld k=%lld ld=%lld offsets=%s "
          "seed=%llu threads=%s\n",
          c->algo->name, topk_dtype_name(c->dt), c->dist->name, c->flags, (int)c->it, (long long)c->batch,
          (long long)c->n, (long long)c->k, (long long)c->ld, c->offsets ? "yes" : "no",
          (unsigned long long)c->seed, threads ? threads : "default");
}

/* The best value of a direction: what a stray read of a gap would most likely return. */
static uint64_t best_bits(topk_dtype dt, int smallest) { return topk_worst_value_bits(dt, !smallest); }

/* Runs one case and checks it. @return 0 if right, -1 (after printing the case) otherwise. */
static int run_case(const tcase* c) {
  const size_t es = topk_dtype_size(c->dt);
  const int smallest = (c->flags & TOPK_SMALLEST) != 0;
  const int64_t ld = c->offsets ? 0 : (c->ld ? c->ld : c->n);
  const int64_t total = c->offsets ? c->n : (c->batch - 1) * ld + c->n;
  const int64_t outs = c->batch * c->k;
  const size_t is = c->it == TOPK_INDEX_I32 ? 4 : 8;
  int rc = -1;
  void* in = malloc((size_t)(total > 0 ? total : 1) * es);
  void* values = malloc((size_t)(outs + GUARD) * es);
  void* indices = malloc((size_t)(outs + GUARD) * is);
  if (!in || !values || !indices) {
    fprintf(stderr, "out of memory\n");
    goto done;
  }
  gen_opts o = {.dist = c->dist->dist,
                .seed = c->seed,
                .equal_bits = c->dist->equal_bits,
                .nan_fraction = is_float(c->dt) ? c->dist->nan_fraction : 0,
                .inf_fraction = is_float(c->dt) ? c->dist->inf_fraction : 0,
                .row_length = c->offsets ? 0 : ld};
  if (gen_fill(in, c->dt, total, &o) != 0) {
    fprintf(stderr, "gen_fill failed\n");
    goto done;
  }
  const uint64_t bait = best_bits(c->dt, smallest);
  if (c->offsets) {
    for (int64_t i = 0; i < c->offsets[0]; ++i) topk_store_bits(in, i, c->dt, bait);
    for (int64_t i = c->offsets[c->batch]; i < c->n; ++i) topk_store_bits(in, i, c->dt, bait);
  } else {
    for (int64_t r = 0; r + 1 < c->batch; ++r)
      for (int64_t i = c->n; i < ld; ++i) topk_store_bits(in, r * ld + i, c->dt, bait);
  }
  check_poison(values, (size_t)(outs + GUARD) * es);
  check_poison(indices, (size_t)(outs + GUARD) * is);

  topk_problem p = {.dtype = c->dt,
                    .batch = c->batch,
                    .n = c->n,
                    .k = c->k,
                    .ld = c->offsets ? 0 : c->ld,
                    .row_offsets = c->offsets,
                    .index_type = c->it,
                    .flags = c->flags,
                    .algo = c->algo->algo,
                    .backend = TOPK_BACKEND_CPU};
  topk_status s = topk_select(&p, in, values, c->it == TOPK_INDEX_NONE ? NULL : indices, NULL, 0, NULL);
  if (s != TOPK_SUCCESS) {
    fprintf(stderr, "topk_select: %s (%s)\n", topk_status_name(s), topk_error_detail());
    goto done;
  }
  if (!check_is_poisoned((char*)values + (size_t)outs * es, GUARD * es) ||
      !check_is_poisoned((char*)indices + (size_t)outs * is, GUARD * is)) {
    fprintf(stderr, "wrote past the end of the outputs\n");
    goto done;
  }
  if (c->it == TOPK_INDEX_NONE && !check_is_poisoned(indices, (size_t)(outs + GUARD) * is)) {
    fprintf(stderr, "wrote indices with TOPK_INDEX_NONE\n");
    goto done;
  }
  if (check_topk(&p, in, c->offsets, values, c->it == TOPK_INDEX_NONE ? NULL : indices) != 0) goto done;
  rc = 0;
done:
  if (rc != 0) describe(c);
  free(in);
  free(values);
  free(indices);
  return rc;
}

/* k = 1, n - 1, n, or anything in between. */
static int64_t pick_k(rng* r, int64_t n) {
  switch (rng_range(r, 0, 4)) {
    case 0: return 1;
    case 1: return n > 1 ? n - 1 : 1;
    case 2: return n;
    default: return rng_range(r, 1, n);
  }
}

static const unsigned flag_sets[] = {0, TOPK_SORTED, TOPK_SMALLEST, TOPK_SMALLEST | TOPK_SORTED};
static const topk_index index_types[] = {TOPK_INDEX_I64, TOPK_INDEX_I32, TOPK_INDEX_NONE};

#define RUN_CASE(c)                                                         \
  do {                                                                      \
    if (run_case(&(c)) != 0) TEST_FAILED_("differential case failed\n");    \
  } while (0)

/* ------------------------------------------------------------------ differential grids */

/* Every algorithm x dtype x distribution x direction x sorted, on small random shapes. */
TEST(grid_small_shapes) {
  begin_cases(1);
  static const int64_t ns[] = {1, 2, 3, 5, 8, 17, 31, 64, 100, 257, 1000, 2049};
  const int na = cpu_algo_count();
  ASSERT_TRUE(na >= 2);
  for (int a = 0; a < na; ++a)
    for (int d = 0; d < NDTYPES; ++d)
      for (int ds = 0; ds < NDISTS; ++ds) {
        if (!is_float(all_dtypes[d]) && dists[ds].nan_fraction > 0) continue;
        for (int f = 0; f < 4; ++f) {
          tcase c = {.algo = cpu_algos_[a], .dt = all_dtypes[d], .dist = &dists[ds], .flags = flag_sets[f]};
          c.seed = next_case_seed();
          rng r = {c.seed};
          c.n = ns[rng_range(&r, 0, sizeof ns / sizeof ns[0] - 1)];
          c.batch = rng_range(&r, 1, c.n >= 1000 ? 8 : 50);
          c.k = pick_k(&r, c.n);
          c.it = index_types[rng_range(&r, 0, 2)];
          RUN_CASE(c);
        }
      }
  return TEST_OK;
}

/* Long rows: the sampling filter, the radix passes over long rows and rows split across threads. */
TEST(long_rows) {
  begin_cases(2);
  static const int64_t ns[] = {70001, 150001, 300007}; /* odd: chunks of unequal length */
  static const int dist_pick[] = {0, 1, 4, 5, 6, 7, 9, 11}; /* uniform normal radix20 radix24 equal asc zipf nan */
  const int na = cpu_algo_count();
  for (int a = 0; a < na; ++a)
    for (int d = 0; d < NDTYPES; ++d)
      for (int i = 0; i < (is_oracle(cpu_algos_[a]) ? 1 : 5); ++i) {
        tcase c = {.algo = cpu_algos_[a], .dt = all_dtypes[d]};
        c.seed = next_case_seed();
        rng r = {c.seed};
        int ds = dist_pick[rng_range(&r, 0, sizeof dist_pick / sizeof dist_pick[0] - 1)];
        if (!is_float(c.dt) && dists[ds].nan_fraction > 0) ds = 0;
        c.dist = &dists[ds];
        c.flags = flag_sets[rng_range(&r, 0, 3)];
        c.it = index_types[rng_range(&r, 0, 2)];
        c.n = ns[rng_range(&r, 0, 2)];
        c.batch = c.n > 100000 ? 1 : rng_range(&r, 1, 3);
        static const int64_t ks[] = {1, 10, 1000, 0 /* n/100 */, -1 /* n/3 */, -2 /* n - 1 */};
        int64_t k = ks[rng_range(&r, 0, 5)];
        c.k = k == 0 ? c.n / 100 : k == -1 ? c.n / 3 : k == -2 ? c.n - 1 : k;
        RUN_CASE(c);
      }
  return TEST_OK;
}

/* Draws a case's distribution (none with NaN for integer dtypes), flags and index type, in that order. */
static void draw_dist_flags_index(tcase* c, rng* r) {
  int ds = (int)rng_range(r, 0, NDISTS - 1);
  if (!is_float(c->dt) && dists[ds].nan_fraction > 0) ds = 0;
  c->dist = &dists[ds];
  c->flags = flag_sets[rng_range(r, 0, 3)];
  c->it = index_types[rng_range(r, 0, 2)];
}

/* Rows with a stride larger than their length; the gaps hold the best value as bait. */
TEST(strided_rows) {
  begin_cases(3);
  const int na = cpu_algo_count();
  for (int a = 0; a < na; ++a)
    for (int d = 0; d < NDTYPES; ++d)
      for (int i = 0; i < 6; ++i) {
        tcase c = {.algo = cpu_algos_[a], .dt = all_dtypes[d]};
        c.seed = next_case_seed();
        rng r = {c.seed};
        draw_dist_flags_index(&c, &r);
        const int big = i == 5 && !is_oracle(c.algo); /* long rows split across threads, strided */
        c.n = big ? 140001 : rng_range(&r, 1, 3000);
        c.batch = big ? 2 : rng_range(&r, 1, 20);
        c.ld = c.n + (rng_range(&r, 0, 1) ? rng_range(&r, 1, 7) : c.n);
        c.k = pick_k(&r, c.n);
        RUN_CASE(c);
      }
  return TEST_OK;
}

/* Builds batch + 1 offsets with empty rows, rows shorter than k, and gaps before and after. */
static int64_t make_offsets(rng* r, int64_t* off, int64_t batch, int64_t k, int64_t longest) {
  off[0] = rng_range(r, 0, 3);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len;
    switch (rng_range(r, 0, 4)) {
      case 0: len = 0; break;
      case 1: len = rng_range(r, 0, k); break; /* at most k: whole row plus padding */
      case 2: len = k; break;
      default: len = rng_range(r, k, longest > k ? longest : k); break;
    }
    off[b + 1] = off[b] + len;
  }
  return off[batch] + rng_range(r, 0, 3); /* n: the whole buffer */
}

/* Variable-length rows through row_offsets, including empty rows and rows shorter than k. */
TEST(variable_length_rows) {
  begin_cases(4);
  enum { MAXB = 40 };
  int64_t off[MAXB + 1];
  const int na = cpu_algo_count();
  for (int a = 0; a < na; ++a)
    for (int d = 0; d < NDTYPES; ++d)
      for (int i = 0; i < 8; ++i) {
        tcase c = {.algo = cpu_algos_[a], .dt = all_dtypes[d]};
        c.seed = next_case_seed();
        rng r = {c.seed};
        draw_dist_flags_index(&c, &r);
        const int big = i == 7 && !is_oracle(c.algo); /* one row long enough to be split across threads */
        c.batch = big ? 3 : rng_range(&r, 1, MAXB);
        c.k = big ? rng_range(&r, 1, 2000) : rng_range(&r, 1, 300);
        c.n = make_offsets(&r, off, c.batch, c.k, big ? 200000 : 2000);
        c.offsets = off;
        RUN_CASE(c);
      }
  return TEST_OK;
}

/* Thread counts that do not divide the work evenly, many rows and long rows alike. */
TEST(thread_counts) {
  begin_cases(5);
  static const char* counts[] = {"1", "3", "7", "2"};
  int64_t off[65];
  const int na = cpu_algo_count();
  for (unsigned t = 0; t < sizeof counts / sizeof counts[0]; ++t) {
    setenv("TOPK_CPU_THREADS", counts[t], 1);
    for (int a = 0; a < na; ++a)
      for (int i = 0; i < 6; ++i) {
        if (is_oracle(cpu_algos_[a]) && i % 3 == 1) continue; /* its long rows are covered elsewhere */
        tcase c = {.algo = cpu_algos_[a]};
        c.seed = next_case_seed();
        rng r = {c.seed};
        c.dt = all_dtypes[rng_range(&r, 0, NDTYPES - 1)];
        draw_dist_flags_index(&c, &r);
        switch (i % 3) {
          case 0: c.batch = 300; c.n = 500; c.k = pick_k(&r, c.n); break; /* rows across threads */
          case 1: /* one row split into chunks of unequal length */
            c.batch = 1;
            c.n = 250001;
            c.k = t % 2 ? (i < 3 ? 100 : 60000) : (i < 3 ? c.n : c.n - 1);
            break;
          default:
            c.batch = 64;
            c.k = rng_range(&r, 1, 50);
            c.n = make_offsets(&r, off, c.batch, c.k, 5000);
            c.offsets = off;
            break;
        }
        const int rc = run_case(&c);
        if (rc != 0) {
          unsetenv("TOPK_CPU_THREADS");
          TEST_FAILED_("differential case failed\n");
        }
      }
  }
  unsetenv("TOPK_CPU_THREADS");
  return TEST_OK;
}

/* TOPK_NONDETERMINISTIC is accepted; any tied elements may come back (the checker allows that). */
TEST(nondeterministic_flag) {
  begin_cases(6);
  const int na = cpu_algo_count();
  for (int a = 0; a < na; ++a)
    for (int d = 0; d < NDTYPES; ++d) {
      tcase c = {.algo = cpu_algos_[a], .dt = all_dtypes[d], .dist = &dists[9] /* zipf: many ties */};
      c.seed = next_case_seed();
      rng r = {c.seed};
      c.flags = TOPK_NONDETERMINISTIC | flag_sets[rng_range(&r, 0, 3)];
      c.it = index_types[rng_range(&r, 0, 2)];
      c.batch = 4;
      c.n = 5000;
      c.k = pick_k(&r, c.n);
      RUN_CASE(c);
    }
  return TEST_OK;
}

/* ------------------------------------------------------------------ hand-written semantics */

/* Runs every CPU algorithm on one row of raw bits; checks values (bits) and indices. */
static int expect_row(topk_dtype dt, const void* row, int64_t n, int64_t k, unsigned flags,
                      const uint64_t* want_bits, const int64_t* want_idx) {
  const int na = cpu_algo_count();
  for (int a = 0; a < na; ++a) {
    uint64_t values[16];
    int64_t idx[16];
    check_poison(values, sizeof values);
    check_poison(idx, sizeof idx);
    topk_problem p = {.dtype = dt, .batch = 1, .n = n, .k = k, .flags = flags, .algo = cpu_algos_[a]->algo,
                      .backend = TOPK_BACKEND_CPU};
    topk_status s = topk_select(&p, row, values, idx, NULL, 0, NULL);
    if (s != TOPK_SUCCESS) {
      fprintf(stderr, "%s: %s (%s)\n", cpu_algos_[a]->name, topk_status_name(s), topk_error_detail());
      return -1;
    }
    if (check_topk(&p, row, NULL, values, idx) != 0) return -1;
    if (!(flags & TOPK_SORTED)) continue; /* unsorted: the checker above compared the sets */
    for (int64_t j = 0; j < k; ++j) {
      const uint64_t got = topk_load_bits(values, j, dt);
      if (got != want_bits[j] || idx[j] != want_idx[j]) {
        fprintf(stderr, "%s: dtype %s flags 0x%x slot %lld: got 0x%llx at %lld, want 0x%llx at %lld\n",
                cpu_algos_[a]->name, topk_dtype_name(dt), flags, (long long)j, (unsigned long long)got,
                (long long)idx[j], (unsigned long long)want_bits[j], (long long)want_idx[j]);
        return -1;
      }
    }
  }
  return 0;
}

#define EXPECT_ROW(dt, row, n, k, flags, bits, idx) \
  ASSERT_TRUE(expect_row((dt), (row), (n), (k), (flags), (bits), (idx)) == 0)

TEST(nan_is_largest) {
  const uint32_t x[6] = {0x3F800000u /* 1 */, 0x7FC00000u /* NaN */, 0xFFC00001u /* -NaN */,
                         0x40000000u /* 2 */, 0x7F800000u /* inf */, 0xFF800000u /* -inf */};
  {
    const uint64_t b[4] = {0x7FC00000u, 0xFFC00001u, 0x7F800000u, 0x40000000u};
    const int64_t i[4] = {1, 2, 4, 3};
    EXPECT_ROW(TOPK_F32, x, 6, 4, TOPK_SORTED, b, i); /* both NaN signs first, by index */
    EXPECT_ROW(TOPK_F32, x, 6, 4, 0, b, i);
  }
  {
    const uint64_t b[6] = {0xFF800000u, 0x3F800000u, 0x40000000u, 0x7F800000u, 0x7FC00000u, 0xFFC00001u};
    const int64_t i[6] = {5, 0, 3, 4, 1, 2};
    EXPECT_ROW(TOPK_F32, x, 6, 6, TOPK_SORTED | TOPK_SMALLEST, b, i); /* NaNs last for smallest */
    EXPECT_ROW(TOPK_F32, x, 6, 3, TOPK_SORTED | TOPK_SMALLEST, b, i);
  }
  const uint16_t h[4] = {0x3C00u /* 1 */, 0xFE00u /* -NaN */, 0x7C00u /* inf */, 0x7E01u /* NaN */};
  const uint16_t bf[4] = {0x3F80u, 0xFFC0u, 0x7F80u, 0x7FC1u};
  const uint64_t d[4] = {0x3FF0000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000000ull,
                         0x7FF8000000000001ull};
  {
    const int64_t i[3] = {1, 3, 2};
    const uint64_t hb[3] = {0xFE00u, 0x7E01u, 0x7C00u}, bb[3] = {0xFFC0u, 0x7FC1u, 0x7F80u};
    const uint64_t db[3] = {d[1], d[3], d[2]};
    EXPECT_ROW(TOPK_F16, h, 4, 3, TOPK_SORTED, hb, i);
    EXPECT_ROW(TOPK_BF16, bf, 4, 3, TOPK_SORTED, bb, i);
    EXPECT_ROW(TOPK_F64, d, 4, 3, TOPK_SORTED, db, i);
  }
  return TEST_OK;
}

TEST(signed_zero_order) {
  const uint32_t x[5] = {0x00000000u, 0x80000000u, 0x00000000u, 0x80000000u, 0x80000000u};
  {
    const uint64_t b[3] = {0x00000000u, 0x00000000u, 0x80000000u};
    const int64_t i[3] = {0, 2, 1};
    EXPECT_ROW(TOPK_F32, x, 5, 3, TOPK_SORTED, b, i); /* +0.0 above -0.0 */
  }
  {
    const uint64_t b[4] = {0x80000000u, 0x80000000u, 0x80000000u, 0x00000000u};
    const int64_t i[4] = {1, 3, 4, 0};
    EXPECT_ROW(TOPK_F32, x, 5, 4, TOPK_SORTED | TOPK_SMALLEST, b, i);
  }
  const uint64_t d[3] = {0x8000000000000000ull, 0x0000000000000000ull, 0x8000000000000000ull};
  {
    const uint64_t b[1] = {0};
    const int64_t i[1] = {1};
    EXPECT_ROW(TOPK_F64, d, 3, 1, TOPK_SORTED, b, i);
    const uint64_t bs[2] = {0x8000000000000000ull, 0x8000000000000000ull};
    const int64_t is[2] = {0, 2};
    EXPECT_ROW(TOPK_F64, d, 3, 2, TOPK_SORTED | TOPK_SMALLEST, bs, is);
  }
  return TEST_OK;
}

/* topk_bits_of_key inverts topk_key_of_bits for every key but the NaN key (the Dr. Top-k
 * delegate kernel finds its winners' offsets by their raw bits). */
TEST(key_inverse) {
  static const topk_dtype dts[8] = {TOPK_F16, TOPK_BF16, TOPK_F32, TOPK_F64, TOPK_I32, TOPK_U32, TOPK_I64, TOPK_U64};
  static const uint64_t edge[] = {0, 1, 0x7F, 0x80, 0x7FFF, 0x8000, 0xFFFF, 0x7C00, 0x7C01, 0xFC00, 0x7F80, 0x7F81,
                                  0x7F800000u, 0x7F800001u, 0xFF800000u, 0x80000000u, 0x7FFFFFFFu, 0xFFFFFFFFu,
                                  0x7FF0000000000000ull, 0x7FF0000000000001ull, 0xFFF0000000000000ull,
                                  0x8000000000000000ull, 0xFFFFFFFFFFFFFFFFull};
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int d = 0; d < 8; ++d) {
    const topk_dtype dt = dts[d];
    const uint64_t mask = topk_key_mask(dt);
    for (int i = 0; i < 4096 + (int)(sizeof edge / sizeof edge[0]); ++i) {
      uint64_t b;
      if (i < (int)(sizeof edge / sizeof edge[0])) {
        b = edge[i] & mask;
      } else {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        b = state & mask;
      }
      const uint64_t k = topk_key_of_bits(b, dt);
      const int nan = (dt == TOPK_F16 && (b & 0x7FFFu) > 0x7C00u) || (dt == TOPK_BF16 && (b & 0x7FFFu) > 0x7F80u) ||
                      (dt == TOPK_F32 && (b & 0x7FFFFFFFu) > 0x7F800000u) ||
                      (dt == TOPK_F64 && (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull);
      if (nan) ASSERT_EQ_U64(k, mask); /* every NaN: the one key with no inverse */
      else ASSERT_EQ_U64(topk_bits_of_key(k, dt), b);
    }
  }
  return TEST_OK;
}

TEST(infinities) {
  const float x[5] = {-INFINITY, 5.0f, INFINITY, -5.0f, 3.4e38f};
  uint32_t bits[5];
  memcpy(bits, x, sizeof bits);
  {
    const uint64_t b[2] = {bits[2], bits[4]};
    const int64_t i[2] = {2, 4};
    EXPECT_ROW(TOPK_F32, x, 5, 2, TOPK_SORTED, b, i);
  }
  {
    const uint64_t b[2] = {bits[0], bits[3]};
    const int64_t i[2] = {0, 3};
    EXPECT_ROW(TOPK_F32, x, 5, 2, TOPK_SORTED | TOPK_SMALLEST, b, i);
  }
  return TEST_OK;
}

TEST(deterministic_ties) {
  float x[10];
  for (int i = 0; i < 10; ++i) x[i] = 1.0f;
  const uint64_t one[3] = {0x3F800000u, 0x3F800000u, 0x3F800000u};
  const int64_t first[3] = {0, 1, 2};
  EXPECT_ROW(TOPK_F32, x, 10, 3, TOPK_SORTED, one, first);
  EXPECT_ROW(TOPK_F32, x, 10, 3, 0, one, first); /* same set unsorted (checked by check_topk) */
  EXPECT_ROW(TOPK_F32, x, 10, 3, TOPK_SORTED | TOPK_SMALLEST, one, first);

  const int32_t y[7] = {3, 1, 3, 2, 3, 1, 2};
  {
    const uint64_t b[5] = {3, 3, 3, 2, 2};
    const int64_t i[5] = {0, 2, 4, 3, 6};
    EXPECT_ROW(TOPK_I32, y, 7, 5, TOPK_SORTED, b, i); /* equal values by index */
    EXPECT_ROW(TOPK_I32, y, 7, 4, TOPK_SORTED, b, i); /* tie at the k-th: lowest index wins */
  }
  {
    const uint64_t b[3] = {1, 1, 2};
    const int64_t i[3] = {1, 5, 3};
    EXPECT_ROW(TOPK_I32, y, 7, 3, TOPK_SORTED | TOPK_SMALLEST, b, i);
  }
  /* A long all-equal row: the tie rule must hold through every code path (sampling, threads). */
  enum { N = 200000 };
  float* big = (float*)malloc(N * sizeof *big);
  ASSERT_TRUE(big != NULL);
  for (int i = 0; i < N; ++i) big[i] = 2.0f;
  big[N - 1] = 3.0f;
  const uint64_t bb[4] = {0x40400000u, 0x40000000u, 0x40000000u, 0x40000000u};
  const int64_t bi[4] = {N - 1, 0, 1, 2};
  int rc = expect_row(TOPK_F32, big, N, 4, TOPK_SORTED, bb, bi);
  free(big);
  ASSERT_TRUE(rc == 0);
  return TEST_OK;
}

TEST(integer_extremes) {
  const int64_t x[4] = {INT64_MIN, INT64_MAX, -1, 0};
  {
    const uint64_t b[2] = {(uint64_t)INT64_MAX, 0};
    const int64_t i[2] = {1, 3};
    EXPECT_ROW(TOPK_I64, x, 4, 2, TOPK_SORTED, b, i);
    const uint64_t bs[2] = {(uint64_t)INT64_MIN, (uint64_t)-1};
    const int64_t is[2] = {0, 2};
    EXPECT_ROW(TOPK_I64, x, 4, 2, TOPK_SORTED | TOPK_SMALLEST, bs, is);
  }
  const uint32_t u[4] = {0u, UINT32_MAX, 0x80000000u, 1u};
  {
    const uint64_t b[2] = {UINT32_MAX, 0x80000000u};
    const int64_t i[2] = {1, 2};
    EXPECT_ROW(TOPK_U32, u, 4, 2, TOPK_SORTED, b, i);
  }
  return TEST_OK;
}

/* Rows shorter than k: the whole row, then index -1 and the worst value of the direction. */
TEST(short_rows_are_padded) {
  const float x[5] = {4.0f, 1.0f, 2.0f, 3.0f, 5.0f};
  const int64_t off[4] = {0, 2, 2, 5}; /* lengths 2, 0, 3 */
  const int na = cpu_algo_count();
  for (int a = 0; a < na; ++a)
    for (int sm = 0; sm < 2; ++sm) {
      float v[9];
      int64_t idx[9];
      topk_problem p = {.batch = 3, .n = 5, .k = 3, .row_offsets = off, .flags = TOPK_SORTED | (sm ? TOPK_SMALLEST : 0),
                        .algo = cpu_algos_[a]->algo, .backend = TOPK_BACKEND_CPU};
      check_poison(v, sizeof v);
      check_poison(idx, sizeof idx);
      ASSERT_STATUS(topk_select(&p, x, v, idx, NULL, 0, NULL), TOPK_SUCCESS);
      ASSERT_TRUE(check_topk(&p, x, off, v, idx) == 0);
      const int64_t want_idx[9] = {sm ? 1 : 0, sm ? 0 : 1, -1, -1, -1, -1, sm ? 0 : 2, 1, sm ? 2 : 0};
      for (int j = 0; j < 9; ++j) ASSERT_EQ_I64(idx[j], want_idx[j]);
      uint32_t pad;
      memcpy(&pad, &v[2], 4);
      ASSERT_EQ_U64(pad, sm ? 0x7FC00000u : 0xFF800000u); /* smallest: NaN; largest: -inf */
      ASSERT_TRUE(v[0] == (sm ? 1.0f : 4.0f) && v[6] == (sm ? 2.0f : 5.0f));
    }
  return TEST_OK;
}

#define LIST(X)                \
  X(nan_is_largest)            \
  X(signed_zero_order)         \
  X(infinities)                \
  X(key_inverse)               \
  X(deterministic_ties)        \
  X(integer_extremes)          \
  X(short_rows_are_padded)     \
  X(grid_small_shapes)         \
  X(long_rows)                 \
  X(strided_rows)              \
  X(variable_length_rows)      \
  X(thread_counts)             \
  X(nondeterministic_flag)
TEST_MAIN(LIST)
