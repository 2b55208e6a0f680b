/*
 * env.c: the library's knobs (TOPK_* environment variables, for measurement and tests), read
 * at every call as getenv would, but at the cost of one scan of the environment a call.
 *
 * Why: a select reads ~11 knobs (RTop-K's thread path) to ~20 (AIR), and getenv of an absent
 * name walks the whole environment: 0.14-0.26 us a call with the 86 variables of the H100
 * hosts (session 36, docs/perf-notes.md v0.36). With the scan, `build/latency --quick`'s
 * host time of one call went from 7.43 / 7.84 to 6.50 / 6.77 us (median of 8 shapes, two
 * runs each, alternated in one process tree; TOPK_AB=1 turned the old way on).
 * Each public entry calls topk_env_scan, which looks once for any variable named TOPK_* (but
 * TOPK_LIBRARY, which the Python package reads to find the library, and no knob does);
 * where there is none (the production case) every knob read until the next entry returns
 * NULL at once. Where there is one, knobs read getenv as before, so a test that sets a knob
 * between two calls sees it on the second.
 *
 * The state is per thread (calls come from any thread). A thread that has not entered the API
 * reads getenv (state 0); the internal entry rtopk_select_iters scans as the public ones do, so
 * a knob set since this thread's last call is seen there too.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "algo.h"

extern char** environ;

static _Thread_local int env_state_ = 0; /* 0: not scanned (getenv), 1: no TOPK_* variable, 2: some */

void topk_env_scan(void) {
  int state = 1;
  for (char** e = environ; e && *e; ++e)
    if ((*e)[0] == 'T' && strncmp(*e, "TOPK_", 5) == 0 && strncmp(*e, "TOPK_LIBRARY=", 13) != 0) {
      state = 2;
      break;
    }
  env_state_ = state;
}

const char* topk_env(const char* name) { return env_state_ == 1 ? NULL : getenv(name); }

int topk_host_cache_on(void) {
  const char* e = topk_env("TOPK_HOST_CACHE");
  return !(e && strcmp(e, "0") == 0);
}
