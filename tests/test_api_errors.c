/*
 * test_api_errors.c: one case per status reachable without a GPU, and the small
 * API surface around them (status strings, plans, versions, names).
 *
 * Every rejected call must leave the outputs untouched and say why in
 * topk_error_detail(). The buffers of a case live in one poisoned arena, so an
 * output that overlaps the input (the ERR_OVERLAP cases) is covered as well.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "topk.h"

/* in at 0, values at VALS, indices at IDX: disjoint unless a case points them elsewhere. */
enum { ARENA = 4096, VALS = 1024, IDX = 2048 };
static _Alignas(16) unsigned char arena[ARENA];
#define IN (arena)
#define VAL (arena + VALS)
#define IX (arena + IDX)

/* A valid problem: 2 rows of 16 floats, top 4, int64 indices, on the CPU. */
static topk_problem valid(void) {
  topk_problem p = {.dtype = TOPK_F32, .batch = 2, .n = 16, .k = 4, .backend = TOPK_BACKEND_CPU};
  return p;
}

/* The call fails with `want`, writes nothing anywhere in the arena, and leaves a reason. */
#define EXPECT_REJECTED(call, want)                                                       \
  do {                                                                                    \
    check_poison(arena, sizeof arena);                                                    \
    ASSERT_STATUS((call), (want));                                                        \
    ASSERT_TRUE(check_is_poisoned(arena, sizeof arena));                                  \
    ASSERT_TRUE(topk_error_detail()[0] != '\0');                                          \
  } while (0)

#define EXPECT_SELECT_REJECTED(p, in, v, ix, want) \
  EXPECT_REJECTED(topk_select((p), (in), (v), (ix), NULL, 0, NULL), (want))

TEST(null_pointers) {
  topk_problem p = valid();
  size_t ws = 0;
  EXPECT_SELECT_REJECTED(NULL, IN, VAL, IX, TOPK_ERR_NULL_POINTER);
  EXPECT_SELECT_REJECTED(&p, NULL, VAL, IX, TOPK_ERR_NULL_POINTER);
  EXPECT_SELECT_REJECTED(&p, IN, NULL, IX, TOPK_ERR_NULL_POINTER);
  EXPECT_SELECT_REJECTED(&p, IN, VAL, NULL, TOPK_ERR_NULL_POINTER);
  EXPECT_REJECTED(topk_workspace_size(&p, NULL), TOPK_ERR_NULL_POINTER);
  EXPECT_REJECTED(topk_workspace_size(NULL, &ws), TOPK_ERR_NULL_POINTER);
  EXPECT_REJECTED(topk_plan_create(NULL, &p), TOPK_ERR_NULL_POINTER);
  topk_plan* plan = (topk_plan*)&ws; /* must come back NULL */
  EXPECT_REJECTED(topk_plan_create(&plan, NULL), TOPK_ERR_NULL_POINTER);
  ASSERT_TRUE(plan == NULL);
  EXPECT_REJECTED(topk_plan_run(NULL, IN, NULL, VAL, IX, NULL, 0, NULL), TOPK_ERR_NULL_POINTER);
  EXPECT_REJECTED(topk_plan_workspace_size(NULL, &ws), TOPK_ERR_NULL_POINTER);
  /* TOPK_INDEX_NONE: indices are not needed, so NULL is fine. */
  p.index_type = TOPK_INDEX_NONE;
  ASSERT_STATUS(topk_select(&p, IN, VAL, NULL, NULL, 0, NULL), TOPK_SUCCESS);
  return TEST_OK;
}

TEST(invalid_arguments) {
  topk_problem p = valid();
  p.batch = -1;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  p = valid();
  p.n = -1;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  p = valid();
  p.k = -1;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  p = valid();
  p.flags = 1u << 9;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  p = valid();
  p.algo = (topk_algo)TOPK_ALGO_COUNT;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  p.algo = (topk_algo)-1;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  p = valid();
  p.backend = (topk_backend)7;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  /* Sizes whose byte counts overflow 64 bits: rows x stride, the buffer, and batch x k. */
  p = valid();
  p.batch = INT64_MAX / 2;
  p.n = 4;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  p = valid();
  p.batch = 1;
  p.n = INT64_MAX / 2;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  const int64_t off[3] = {0, 4, 8};
  p = valid();
  p.row_offsets = off;
  p.n = 8;
  p.batch = INT64_MAX / 4; /* offsets are not read: the size check comes first */
  p.k = 16;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
  /* The same validation answers topk_workspace_size(). */
  size_t ws = 0;
  p = valid();
  p.k = -3;
  EXPECT_REJECTED(topk_workspace_size(&p, &ws), TOPK_ERR_INVALID_ARGUMENT);
  return TEST_OK;
}

TEST(k_range) {
  topk_problem p = valid();
  p.k = p.n + 1;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_K_RANGE);
  size_t ws = 0;
  EXPECT_REJECTED(topk_workspace_size(&p, &ws), TOPK_ERR_K_RANGE);
  p.batch = 0; /* still rejected: k > n is wrong whatever the batch */
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_K_RANGE);
  return TEST_OK;
}

TEST(dtype) {
  topk_problem p = valid();
  p.dtype = (topk_dtype)TOPK_DTYPE_COUNT;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_DTYPE);
  p.dtype = (topk_dtype)-1;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_DTYPE);
  return TEST_OK;
}

TEST(index_type) {
  topk_problem p = valid();
  p.index_type = (topk_index)3;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INDEX_TYPE);
  /* int32 indices cannot address a row of 2^31 elements; validation answers before any read. */
  p = valid();
  p.batch = 1;
  p.n = (int64_t)INT32_MAX + 1;
  p.k = 1;
  p.index_type = TOPK_INDEX_I32;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INDEX_TYPE);
  p.index_type = TOPK_INDEX_I64; /* and the same problem is fine by int64 (not run: no such buffer) */
  size_t ws = 1;
  ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  ASSERT_EQ_U64(ws, 0);
  return TEST_OK;
}

TEST(stride) {
  topk_problem p = valid();
  p.ld = p.n - 1;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_STRIDE);
  p.ld = -1;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_STRIDE);
  const int64_t off[3] = {0, 8, 16};
  p = valid();
  p.row_offsets = off;
  p.ld = 16;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_STRIDE);
  return TEST_OK;
}

TEST(overlap) {
  topk_problem p = valid(); /* input: 32 floats = 128 bytes at IN */
  EXPECT_SELECT_REJECTED(&p, IN, IN + 64, IX, TOPK_ERR_OVERLAP);     /* values inside the input */
  EXPECT_SELECT_REJECTED(&p, IN + 64, IN + 48, IX, TOPK_ERR_OVERLAP); /* values run into the input */
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IN + 120, TOPK_ERR_OVERLAP);   /* indices reach into the input */
  EXPECT_SELECT_REJECTED(&p, IN, VAL, VAL + 16, TOPK_ERR_OVERLAP);   /* values and indices */
  /* An output over the row offsets. */
  int64_t* off = (int64_t*)(arena + 3072);
  p.row_offsets = off;
  p.n = 32;
  check_poison(arena, sizeof arena);
  ASSERT_STATUS(topk_select(&p, IN, VAL, arena + 3072, NULL, 0, NULL), TOPK_ERR_OVERLAP);
  ASSERT_TRUE(check_is_poisoned(arena, sizeof arena));
  ASSERT_TRUE(topk_error_detail()[0] != '\0');
  return TEST_OK;
}

TEST(unsupported) {
  topk_problem p = valid();
  p.algo = TOPK_ALGO_AIR_RADIX; /* a GPU family: never built for the CPU backend */
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_UNSUPPORTED);
  topk_plan* plan = NULL;
  EXPECT_REJECTED(topk_plan_create(&plan, &p), TOPK_ERR_UNSUPPORTED);
  ASSERT_TRUE(plan == NULL);
  return TEST_OK;
}

TEST(no_device) {
  if (topk_cuda_available()) return TEST_SKIP; /* with a GPU this status is not reachable */
  topk_problem p = valid();
  p.backend = TOPK_BACKEND_CUDA;
  EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_NO_DEVICE);
  size_t ws = 0;
  EXPECT_REJECTED(topk_workspace_size(&p, &ws), TOPK_ERR_NO_DEVICE);
  topk_plan* plan = NULL;
  EXPECT_REJECTED(topk_plan_create(&plan, &p), TOPK_ERR_NO_DEVICE);
  ASSERT_TRUE(plan == NULL);
  topk_device_props props;
  ASSERT_STATUS(topk_device_get_props(0, &props), TOPK_ERR_NO_DEVICE);
  ASSERT_EQ_I64(topk_device_count(), 0);
  return TEST_OK;
}

/* Host offsets are checked by the CPU algorithms: a bad one is refused before anything is written. */
TEST(bad_offsets_on_cpu) {
  static const int64_t bad[][3] = {
      {0, 9, 4},   /* decreasing */
      {-1, 2, 4},  /* negative */
      {0, 4, 40},  /* past n */
  };
  static const topk_algo algos[] = {TOPK_ALGO_AUTO, TOPK_ALGO_SORT, TOPK_ALGO_CPU_SELECT};
  for (unsigned a = 0; a < sizeof algos / sizeof algos[0]; ++a)
    for (unsigned b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
      topk_problem p = valid();
      p.n = 32;
      p.row_offsets = bad[b];
      p.algo = algos[a];
      EXPECT_SELECT_REJECTED(&p, IN, VAL, IX, TOPK_ERR_INVALID_ARGUMENT);
    }
  return TEST_OK;
}

/* k = 0 or batch = 0: success and nothing written, even with NULL pointers. */
TEST(empty_problems) {
  topk_problem p = valid();
  p.k = 0;
  check_poison(arena, sizeof arena);
  ASSERT_STATUS(topk_select(&p, IN, VAL, IX, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_select(&p, NULL, NULL, NULL, NULL, 0, NULL), TOPK_SUCCESS);
  p = valid();
  p.batch = 0;
  ASSERT_STATUS(topk_select(&p, IN, VAL, IX, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_STATUS(topk_select(&p, NULL, NULL, NULL, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_TRUE(check_is_poisoned(arena, sizeof arena));
  size_t ws = 7;
  ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  ASSERT_EQ_U64(ws, 0);
  topk_plan* plan = NULL;
  ASSERT_STATUS(topk_plan_create(&plan, &p), TOPK_SUCCESS);
  ASSERT_TRUE(plan != NULL);
  ASSERT_STATUS(topk_plan_run(plan, NULL, NULL, NULL, NULL, NULL, 0, NULL), TOPK_SUCCESS);
  topk_plan_destroy(plan);
  ASSERT_TRUE(check_is_poisoned(arena, sizeof arena));
  return TEST_OK;
}

TEST(status_strings) {
#define CHECK_STATUS_(name, value, text)                                \
  ASSERT_EQ_I64(TOPK_##name, value);                                    \
  ASSERT_STR_EQ(topk_status_name(TOPK_##name), "TOPK_" #name);         \
  ASSERT_STR_EQ(topk_status_message(TOPK_##name), text);
  TOPK_STATUS_LIST(CHECK_STATUS_)
#undef CHECK_STATUS_
  ASSERT_STR_EQ(topk_status_name((topk_status)999), "TOPK_UNKNOWN_STATUS");
  ASSERT_STR_EQ(topk_status_message((topk_status)999), "unknown status");
  ASSERT_STR_EQ(topk_status_name((topk_status)-1), "TOPK_UNKNOWN_STATUS");
  return TEST_OK;
}

TEST(detail_cleared_by_success) {
  topk_problem p = valid();
  p.k = -1;
  ASSERT_STATUS(topk_select(&p, IN, VAL, IX, NULL, 0, NULL), TOPK_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(topk_error_detail()[0] != '\0');
  p = valid();
  memset(arena, 0, sizeof arena);
  ASSERT_STATUS(topk_select(&p, IN, VAL, IX, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_STR_EQ(topk_error_detail(), "");
  return TEST_OK;
}

TEST(plans) {
  const float x[8] = {0.5f, -1.0f, 7.0f, 3.0f, 3.0f, -0.0f, 0.0f, 2.5f};
  float v[3];
  int64_t idx[3];
  topk_problem p = {.batch = 1, .n = 8, .k = 3, .flags = TOPK_SORTED, .backend = TOPK_BACKEND_CPU};
  topk_plan* plan = NULL;
  ASSERT_STATUS(topk_plan_create(&plan, &p), TOPK_SUCCESS);
  ASSERT_TRUE(plan != NULL);
  ASSERT_TRUE(topk_plan_algo(plan) != TOPK_ALGO_AUTO);
  size_t ws = 9;
  ASSERT_STATUS(topk_plan_workspace_size(plan, &ws), TOPK_SUCCESS);
  ASSERT_EQ_U64(ws, 0);
  for (int run = 0; run < 2; ++run) { /* a plan runs many times */
    check_poison(v, sizeof v);
    check_poison(idx, sizeof idx);
    ASSERT_STATUS(topk_plan_run(plan, x, NULL, v, idx, NULL, 0, NULL), TOPK_SUCCESS);
    ASSERT_TRUE(check_topk(&p, x, NULL, v, idx) == 0);
    ASSERT_EQ_I64(idx[0], 2);
    ASSERT_EQ_I64(idx[1], 3);
    ASSERT_EQ_I64(idx[2], 4);
  }
  /* A uniform-row plan given offsets. */
  const int64_t off[2] = {0, 8};
  check_poison(v, sizeof v);
  ASSERT_STATUS(topk_plan_run(plan, x, off, v, idx, NULL, 0, NULL), TOPK_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(check_is_poisoned(v, sizeof v));
  topk_plan_destroy(plan);
  topk_plan_destroy(NULL);

  /* A plan for variable-length rows keeps no offsets: each run must pass them. */
  p.row_offsets = off;
  plan = NULL;
  ASSERT_STATUS(topk_plan_create(&plan, &p), TOPK_SUCCESS);
  check_poison(v, sizeof v);
  check_poison(idx, sizeof idx);
  ASSERT_STATUS(topk_plan_run(plan, x, NULL, v, idx, NULL, 0, NULL), TOPK_ERR_NULL_POINTER);
  ASSERT_TRUE(check_is_poisoned(v, sizeof v) && check_is_poisoned(idx, sizeof idx));
  ASSERT_TRUE(topk_error_detail()[0] != '\0');
  ASSERT_STATUS(topk_plan_run(plan, x, off, v, idx, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_TRUE(check_topk(&p, x, off, v, idx) == 0);
  topk_plan_destroy(plan);

  /* A rejected problem leaves *plan NULL. */
  p.row_offsets = NULL;
  p.k = 9;
  plan = (topk_plan*)&ws;
  ASSERT_STATUS(topk_plan_create(&plan, &p), TOPK_ERR_K_RANGE);
  ASSERT_TRUE(plan == NULL);
  return TEST_OK;
}

TEST(version) {
  ASSERT_EQ_I64(topk_version_number(), TOPK_VERSION_NUMBER);
  ASSERT_EQ_I64(TOPK_VERSION_NUMBER, TOPK_VERSION_MAJOR * 10000 + TOPK_VERSION_MINOR * 100 + TOPK_VERSION_PATCH);
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", TOPK_VERSION_MAJOR, TOPK_VERSION_MINOR, TOPK_VERSION_PATCH);
  ASSERT_STR_EQ(topk_version_string(), want);
  ASSERT_TRUE(topk_build_info() != NULL);
  return TEST_OK;
}

TEST(names_round_trip) {
  static const size_t sizes[TOPK_DTYPE_COUNT] = {4, 2, 2, 8, 4, 4, 8, 8};
  for (int d = 0; d < TOPK_DTYPE_COUNT; ++d) {
    const char* name = topk_dtype_name((topk_dtype)d);
    ASSERT_TRUE(name != NULL);
    topk_dtype back = (topk_dtype)-1;
    ASSERT_EQ_I64(topk_dtype_parse(name, &back), 0);
    ASSERT_EQ_I64(back, d);
    ASSERT_EQ_U64(topk_dtype_size((topk_dtype)d), sizes[d]);
  }
  ASSERT_TRUE(topk_dtype_name((topk_dtype)TOPK_DTYPE_COUNT) == NULL);
  ASSERT_EQ_U64(topk_dtype_size((topk_dtype)TOPK_DTYPE_COUNT), 0);
  topk_dtype dt;
  ASSERT_EQ_I64(topk_dtype_parse("f128", &dt), -1);
  ASSERT_EQ_I64(topk_dtype_parse(NULL, &dt), -1);
  ASSERT_EQ_I64(topk_dtype_parse("f32", NULL), -1);
  for (int a = 0; a < TOPK_ALGO_COUNT; ++a) {
    const char* name = topk_algo_name((topk_algo)a);
    ASSERT_TRUE(name != NULL);
    topk_algo back = (topk_algo)-1;
    ASSERT_EQ_I64(topk_algo_parse(name, &back), 0);
    ASSERT_EQ_I64(back, a);
  }
  ASSERT_TRUE(topk_algo_name((topk_algo)TOPK_ALGO_COUNT) == NULL);
  topk_algo al;
  ASSERT_EQ_I64(topk_algo_parse("quick", &al), -1);
  ASSERT_EQ_I64(topk_algo_parse(NULL, &al), -1);
  ASSERT_STR_EQ(topk_algo_name(TOPK_ALGO_SORT), "sort");
  ASSERT_STR_EQ(topk_algo_name(TOPK_ALGO_CPU_SELECT), "cpu_select");
  return TEST_OK;
}

#define LIST(X)                 \
  X(null_pointers)              \
  X(invalid_arguments)          \
  X(k_range)                    \
  X(dtype)                      \
  X(index_type)                 \
  X(stride)                     \
  X(overlap)                    \
  X(unsupported)                \
  X(no_device)                  \
  X(bad_offsets_on_cpu)         \
  X(empty_problems)             \
  X(status_strings)             \
  X(detail_cleared_by_success)  \
  X(plans)                      \
  X(version)                    \
  X(names_round_trip)
TEST_MAIN(LIST)
