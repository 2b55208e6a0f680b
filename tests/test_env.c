/*
 * test_env.c: the knobs' environment scan (src/env.c). A knob read returns what getenv
 * returns whenever some TOPK_* variable other than TOPK_LIBRARY is set, NULL at once where
 * none is, and every public entry scans again, so a knob set between two calls is seen by
 * the second. No device needed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "drtopk_rule4.h"
#include "harness.h"
#include "topk.h"

extern char** environ;

/* Unsets every TOPK_* variable (the harness's seed included: this test draws nothing). */
static void clear_topk_vars(void) {
  for (;;) {
    char name[256] = "";
    for (char** e = environ; e && *e; ++e)
      if (strncmp(*e, "TOPK_", 5) == 0) {
        const char* eq = strchr(*e, '=');
        const size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        if (len < sizeof name) memcpy(name, *e, len), name[len] = '\0';
        break;
      }
    if (!name[0]) return;
    unsetenv(name);
  }
}

TEST(no_knob_reads_null) {
  clear_topk_vars();
  topk_env_scan();
  ASSERT_TRUE(topk_env("TOPK_RTOPK_GROUP") == NULL);
  /* TOPK_LIBRARY is the Python package's, not a knob: it leaves the fast answer on */
  setenv("TOPK_LIBRARY", "/nowhere/libtopk.so", 1);
  topk_env_scan();
  ASSERT_TRUE(topk_env("TOPK_RTOPK_GROUP") == NULL);
  unsetenv("TOPK_LIBRARY");
  return TEST_OK;
}

TEST(a_knob_is_read_after_a_scan) {
  clear_topk_vars();
  topk_env_scan();
  setenv("TOPK_RTOPK_GROUP", "4", 1);
  /* until the next entry scans, this thread still knows of no knob (documented) */
  ASSERT_TRUE(topk_env("TOPK_RTOPK_GROUP") == NULL);
  topk_env_scan();
  ASSERT_STR_EQ(topk_env("TOPK_RTOPK_GROUP"), "4");
  ASSERT_TRUE(topk_env("TOPK_RTOPK_QUEUE") == NULL); /* others read getenv: unset is NULL */
  unsetenv("TOPK_RTOPK_GROUP");
  topk_env_scan();
  ASSERT_TRUE(topk_env("TOPK_RTOPK_GROUP") == NULL);
  return TEST_OK;
}

TEST(public_entries_scan) {
  clear_topk_vars();
  topk_problem p;
  memset(&p, 0, sizeof p);
  p.dtype = TOPK_F32;
  p.batch = 1;
  p.n = 16;
  p.k = 4;
  p.backend = TOPK_BACKEND_CPU;
  size_t ws = 0;
  ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  setenv("TOPK_CPU_THREADS", "1", 1);
  ASSERT_TRUE(topk_env("TOPK_CPU_THREADS") == NULL); /* the last entry found no knob */
  ASSERT_STATUS(topk_workspace_size(&p, &ws), TOPK_SUCCESS);
  ASSERT_STR_EQ(topk_env("TOPK_CPU_THREADS"), "1");
  float in[16], vals[4];
  int64_t idx[4];
  for (int i = 0; i < 16; ++i) in[i] = (float)((i * 7) % 16);
  unsetenv("TOPK_CPU_THREADS");
  ASSERT_STATUS(topk_select(&p, in, vals, idx, NULL, 0, NULL), TOPK_SUCCESS);
  ASSERT_TRUE(topk_env("TOPK_CPU_THREADS") == NULL);
  return TEST_OK;
}

/* A knob read from plain C (drtopk_rule4.c once called topk_env undeclared: its pointer was cut
 * to an int, so a set variable crashed the read). */
TEST(rule4_knob_from_c) {
  clear_topk_vars();
  topk_env_scan();
  const int64_t n = (int64_t)1 << 24, k = 1024;
  const int dflt = topk_drtopk_rule4_alpha(n, k);
  setenv("TOPK_DRTOPK_RULE4_C", "4", 1); /* the fitted C: the same alpha */
  topk_env_scan();
  ASSERT_EQ_I64(topk_drtopk_rule4_alpha(n, k), dflt);
  setenv("TOPK_DRTOPK_RULE4_C", "-20", 1);
  topk_env_scan();
  const int a = topk_drtopk_rule4_alpha(n, k);
  ASSERT_TRUE(a >= TOPK_DRTOPK_ALPHA_MIN && a <= TOPK_DRTOPK_ALPHA_MAX);
  unsetenv("TOPK_DRTOPK_RULE4_C");
  return TEST_OK;
}

#define LIST(X) X(no_knob_reads_null) X(a_knob_is_read_after_a_scan) X(public_entries_scan) X(rule4_knob_from_c)
TEST_MAIN(LIST)
