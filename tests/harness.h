/*
 * harness.h: a small C test harness in libuv's manner.
 *
 *   TEST(name) { ASSERT_EQ_I64(a, b); ... }
 *   TEST_LIST(X) X(name) X(other)   then   TEST_MAIN(TEST_LIST)
 *
 * A test returns TEST_OK or TEST_SKIP; an ASSERT that fails prints both values,
 * the file and line, and the seed (TOPK_TEST_SEED), and fails the test. The
 * binary exits 0 if all ran and passed, 77 if every test skipped (ctest's
 * SKIP_RETURN_CODE: "Not Run" rather than "Passed"), 1 if any failed.
 */
#ifndef TOPK_TEST_HARNESS_H
#define TOPK_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TEST_OK = 0, TEST_FAIL = 1, TEST_SKIP = 77 };

static uint64_t test_seed_;
static const char* test_name_;

/* The seed of this run: TOPK_TEST_SEED, else fixed so CI is reproducible. */
static inline uint64_t test_seed(void) { return test_seed_; }

#define TEST(name) static int test_##name(void)

#define TEST_FAILED_(...)                                                                          \
  do {                                                                                             \
    fprintf(stderr, "FAIL %s (%s:%d): ", test_name_, __FILE__, __LINE__);                          \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fprintf(stderr, "  [TOPK_TEST_SEED=%" PRIu64 "]\n", test_seed_);                               \
    return TEST_FAIL;                                                                              \
  } while (0)

#define ASSERT_TRUE(c) do { if (!(c)) TEST_FAILED_("%s is false\n", #c); } while (0)
#define ASSERT_EQ_I64(a, b)                                                                        \
  do {                                                                                             \
    long long a_ = (long long)(a), b_ = (long long)(b);                                            \
    if (a_ != b_) TEST_FAILED_("%s == %s: %lld != %lld\n", #a, #b, a_, b_);                        \
  } while (0)
#define ASSERT_EQ_U64(a, b)                                                                        \
  do {                                                                                             \
    unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);                 \
    if (a_ != b_) TEST_FAILED_("%s == %s: 0x%llx != 0x%llx\n", #a, #b, a_, b_);                    \
  } while (0)
#define ASSERT_STR_EQ(a, b)                                                                        \
  do {                                                                                             \
    const char *a_ = (a), *b_ = (b);                                                               \
    if (strcmp(a_, b_) != 0) TEST_FAILED_("%s == %s: \"%s\" != \"%s\"\n", #a, #b, a_, b_);         \
  } while (0)
/* Checks a topk_status and prints its name and the library's detail. */
#define ASSERT_STATUS(expr, want)                                                                  \
  do {                                                                                             \
    topk_status s_ = (expr);                                                                       \
    if (s_ != (want))                                                                              \
      TEST_FAILED_("%s: got %s, want %s (%s)\n", #expr, topk_status_name(s_),                      \
                   topk_status_name(want), topk_error_detail());                                   \
  } while (0)

#define TEST_ENTRY_(name) {#name, test_##name},
#define TEST_MAIN(LIST)                                                                            \
  int main(int argc, char** argv) {                                                                \
    static const struct { const char* name; int (*fn)(void); } tests[] = {LIST(TEST_ENTRY_)};      \
    const char* env = getenv("TOPK_TEST_SEED");                                                    \
    test_seed_ = env ? strtoull(env, NULL, 10) : 20261122ull;                                      \
    int failed = 0, skipped = 0, ran = 0;                                                          \
    size_t count = sizeof tests / sizeof tests[0];                                                 \
    for (size_t i = 0; i < count; ++i) {                                                           \
      if (argc > 1 && strstr(tests[i].name, argv[1]) == NULL) continue;                            \
      test_name_ = tests[i].name;                                                                  \
      int r = tests[i].fn();                                                                       \
      ++ran;                                                                                       \
      if (r == TEST_SKIP) { ++skipped; printf("skip %s\n", tests[i].name); }                       \
      else if (r != TEST_OK) { ++failed; printf("FAIL %s\n", tests[i].name); }                     \
      else printf("ok   %s\n", tests[i].name);                                                     \
    }                                                                                              \
    printf("%d passed, %d failed, %d skipped\n", ran - failed - skipped, failed, skipped);         \
    if (failed) return 1;                                                                          \
    return (ran > 0 && skipped == ran) ? TEST_SKIP : 0;                                            \
  }

#endif
