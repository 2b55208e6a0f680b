/*
 * drtopk_workload.c: the Dr. Top-k delegate layer's workload and tuning, as
 * markdown tables (CUDA builds only; target drtopk_workload).
 *
 *   drtopk_workload [max_log2_n [section]]     max_log2_n: 24..30 (default 30)
 *                                              section: all (default), ratio, sweep, sweepcsv, beta, bw, steps
 *
 * ratio  paper 000 Fig. 20/21: the workload ratio of the delegate layer, i.e. the
 *        elements the steps after the one read of the input work on, as a fraction
 *        of n: delegates / n and concatenated / n, against n (k = 1024) and
 *        against k (n = 2^max), for UD (uniform), ND (normal) and CD (Dr. Top-k's
 *        customised distribution), f32, drtopk_radix.
 * sweepcsv  the data Rule 4 is fitted on (bench/fit_rule4.py) and checked against
 *        (tests/test_drtopk_rule4.c), as CSV: UD, every n = 2^24..2^max, k = 4^0..4^8,
 *        the median ms for every alpha 5..20, the alphas interleaved run by run
 *        (not part of "all").
 * sweep  Rule 4 check: for n = 2^24..2^max and k = 1..2^16, the median time of
 *        drtopk_radix per alpha (TOPK_DRTOPK_ALPHA), the best alpha, the alpha
 *        Rule 4 chooses, and time(Rule 4) / time(best) (the issue asks <= 1.10).
 * beta   Rule 3 re-measured: total time for beta = 1..4, n = 2^max, k = 1..2^16.
 * steps  where the time goes per alpha (not part of "all"): for the (n, k) points where
 *        Rule 4 misses the best alpha by most in the committed sweep, the median ms of
 *        every step (delegates, first top-k, threshold, concatenation, second top-k,
 *        emit) and the concatenated size, for alpha 5..16.
 * bw     delegate construction alone: the first step inside a run, and the delegate
 *        kernel alone (10 launches back to back), in GB/s and as % of
 *        topk_measure_read_bandwidth counting the reads alone and the bytes moved
 *        (reads + delegate writes), for the shared-memory kernel (alpha 5..10) and the
 *        warp-centric kernel (alpha 5..16), n = 2^max.
 *
 * Timing: CUDA events around topk_select, 2 warm-up runs, median of 7; the input
 * (>= 64 MB) is larger than the L2, so no buffer rotation is needed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/drtopk/drtopk.h"
#include "gen.h"
#include "topk.h"

#define TRY_(expr)                        \
  do {                                    \
    topk_status s_ = (expr);              \
    if (s_ != TOPK_SUCCESS) return s_;    \
  } while (0)

#define REPS 7
#define WARM 2

static int fail(topk_status s, const char* what) {
  fprintf(stderr, "drtopk_workload: %s: %s (%s)\n", what, topk_status_name(s), topk_error_detail());
  return 1;
}

static int cmp_float(const void* a, const void* b) {
  const float x = *(const float*)a, y = *(const float*)b;
  return x < y ? -1 : x > y;
}

static void set_alpha(int alpha) {
  if (alpha <= 0) {
    unsetenv("TOPK_DRTOPK_ALPHA");
  } else {
    char buf[16];
    snprintf(buf, sizeof buf, "%d", alpha);
    setenv("TOPK_DRTOPK_ALPHA", buf, 1);
  }
}

/*
 * Median ms of topk_select for p at every alpha in [lo, hi] (t[a - lo]; alpha 0: Rule 4's), the alphas
 * interleaved run by run (WARM rounds, then REPS timed rounds), so that a transient
 * slowdown of the GPU touches every alpha alike instead of a few in a row. One
 * workspace, the largest any alpha needs. @return 0, or -1 on an error.
 */
static int time_alphas(const topk_problem* p, int lo, int hi, const void* d_in, void* d_v, void* d_i, float* t) {
  enum { MAXA = TOPK_DRTOPK_ALPHA_MAX + 1 };
  size_t bytes = 0;
  for (int a = lo; a <= hi; ++a) {
    size_t b = 0;
    set_alpha(a);
    if (topk_workspace_size(p, &b) != TOPK_SUCCESS) return -1;
    if (b > bytes) bytes = b;
  }
  void* ws = NULL;
  if (bytes && topk_device_malloc(&ws, bytes) != TOPK_SUCCESS) return -1;
  topk_event *e0 = NULL, *e1 = NULL;
  static float runs[MAXA][REPS];
  int rc = -1;
  if (topk_event_create(&e0) != TOPK_SUCCESS || topk_event_create(&e1) != TOPK_SUCCESS) goto done;
  for (int r = 0; r < WARM + REPS; ++r)
    for (int a = lo; a <= hi; ++a) {
      set_alpha(a);
      topk_event_record(e0, NULL);
      if (topk_select(p, d_in, d_v, d_i, ws, bytes, NULL) != TOPK_SUCCESS) goto done;
      topk_event_record(e1, NULL);
      float ms = 0;
      if (topk_event_elapsed_ms(e0, e1, &ms) != TOPK_SUCCESS) goto done;
      if (r >= WARM) runs[a - lo][r - WARM] = ms;
    }
  for (int a = lo; a <= hi; ++a) {
    qsort(runs[a - lo], REPS, sizeof(float), cmp_float);
    t[a - lo] = runs[a - lo][REPS / 2];
  }
  rc = 0;
done:
  set_alpha(0);
  topk_event_destroy(e0);
  topk_event_destroy(e1);
  topk_device_free(ws);
  return rc;
}

/* Median ms of topk_select for p with Rule 4's alpha (time_alphas' alpha 0: none forced); < 0 on error. */
static float time_select(const topk_problem* p, const void* d_in, void* d_v, void* d_i) {
  float t = -1.0f;
  return time_alphas(p, 0, 0, d_in, d_v, d_i, &t) == 0 ? t : -1.0f;
}

/* The step statistics of REPS runs, every time field its own median. */
static topk_status workload(const topk_problem* p, const void* d_in, void* d_v, void* d_i, topk_drtopk_stats* out) {
  topk_drtopk_stats s[REPS];
  for (int r = 0; r < WARM; ++r) TRY_(topk_drtopk_workload(p, d_in, d_v, d_i, &s[0]));
  for (int r = 0; r < REPS; ++r) TRY_(topk_drtopk_workload(p, d_in, d_v, d_i, &s[r]));
  *out = s[0];
  float* const fields[8] = {&out->ms_delegates, &out->ms_first, &out->ms_threshold, &out->ms_concat,
                            &out->ms_second,    &out->ms_emit,  &out->ms_total,     &out->ms_delegate_kernel};
  for (int f = 0; f < 8; ++f) { /* each step's own median */
    const size_t at = (size_t)((char*)fields[f] - (char*)out);
    float d[REPS];
    for (int r = 0; r < REPS; ++r) d[r] = *(const float*)((const char*)&s[r] + at);
    qsort(d, REPS, sizeof d[0], cmp_float);
    *fields[f] = d[REPS / 2];
  }
  return TOPK_SUCCESS;
}

static const char* const dist_names[3] = {"UD", "ND", "CD"};
static const gen_dist dists[3] = {GEN_UNIFORM, GEN_NORMAL, GEN_CD};

int main(int argc, char** argv) {
  int max_log = argc > 1 ? atoi(argv[1]) : 30;
  if (max_log < 24) max_log = 24;
  if (max_log > 30) max_log = 30;
  const char* section = argc > 2 ? argv[2] : "all";
  const int all = strcmp(section, "all") == 0;
  if (!topk_cuda_available()) {
    fprintf(stderr, "drtopk_workload: no CUDA device\n");
    return 77;
  }
  const int64_t nmax = (int64_t)1 << max_log;
  const int64_t kmax = (int64_t)1 << 16;
  float* host = (float*)malloc((size_t)nmax * sizeof(float));
  void *d_in = NULL, *d_v = NULL, *d_i = NULL;
  topk_status s;
  if (!host) return fail(TOPK_ERR_OUT_OF_MEMORY, "host buffer");
  if ((s = topk_device_malloc(&d_in, (size_t)nmax * sizeof(float))) != TOPK_SUCCESS) return fail(s, "input");
  if ((s = topk_device_malloc(&d_v, (size_t)kmax * 2 * sizeof(float))) != TOPK_SUCCESS) return fail(s, "values");
  if ((s = topk_device_malloc(&d_i, (size_t)kmax * 2 * sizeof(int64_t))) != TOPK_SUCCESS) return fail(s, "indices");
  topk_device_props props;
  topk_device_get_props(0, &props);
  if (strcmp(section, "sweepcsv") != 0) printf("# Dr. Top-k delegate layer: workload and tuning (%s)\n\n", props.name);

  const int ud_only = !all && strcmp(section, "ratio") != 0; /* every section but ratio runs on UD alone */
  for (int di = 0; di < (ud_only ? 1 : 3); ++di) {
    gen_opts g = {.dist = dists[di], .seed = 12345u + (uint64_t)di};
    if (gen_fill(host, TOPK_F32, nmax, &g) != 0) return fail(TOPK_ERR_INTERNAL, "gen_fill");
    if ((s = topk_memcpy_to_device(d_in, host, (size_t)nmax * sizeof(float))) != TOPK_SUCCESS) return fail(s, "copy");

    if (all || strcmp(section, "ratio") == 0) {
      printf("## Workload ratio, %s (f32, drtopk_radix, Rule-4 alpha, beta default)\n\n", dist_names[di]);
      printf("| n | k | alpha | delegates / n | concatenated / n | (delegates + concatenated) / n | total ms |\n");
      printf("| --- | --- | --- | --- | --- | --- | --- |\n");
      set_alpha(0);
      for (int ln = 24; ln <= max_log; ++ln) {
        topk_problem p = {.batch = 1, .n = (int64_t)1 << ln, .k = 1024, .algo = TOPK_ALGO_DRTOPK_RADIX};
        topk_drtopk_stats st;
        if ((s = workload(&p, d_in, d_v, d_i, &st)) != TOPK_SUCCESS) return fail(s, "workload");
        printf("| 2^%d | %lld | %d | %.3g | %.3g | %.3g | %.3f |\n", ln, (long long)p.k, st.alpha,
               (double)st.delegate_size / (double)p.n, (double)st.concat_size / (double)p.n,
               (double)(st.delegate_size + st.concat_size) / (double)p.n, st.ms_total);
      }
      for (int lk = 0; lk <= 16; lk += 2) {
        topk_problem p = {.batch = 1, .n = nmax, .k = (int64_t)1 << lk, .algo = TOPK_ALGO_DRTOPK_RADIX};
        topk_drtopk_stats st;
        if ((s = workload(&p, d_in, d_v, d_i, &st)) != TOPK_SUCCESS) return fail(s, "workload");
        printf("| 2^%d | 2^%d | %d | %.3g | %.3g | %.3g | %.3f |\n", max_log, lk, st.alpha,
               (double)st.delegate_size / (double)p.n, (double)st.concat_size / (double)p.n,
               (double)(st.delegate_size + st.concat_size) / (double)p.n, st.ms_total);
      }
      printf("\n");
    }

    if ((all || strcmp(section, "sweep") == 0) && di == 0) {
      printf("## Rule 4 against an alpha sweep (UD, f32, drtopk_radix; median ms)\n\n");
      printf("| n | k | best alpha | best ms | Rule-4 alpha | Rule-4 ms | Rule-4 / best | times for alpha 5..20 |\n");
      printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
      for (int ln = 24; ln <= max_log; ln += 2) {
        for (int lk = 0; lk <= 16; lk += 4) {
          topk_problem p = {.batch = 1, .n = (int64_t)1 << ln, .k = (int64_t)1 << lk, .algo = TOPK_ALGO_DRTOPK_RADIX};
          float best = -1.0f;
          int best_a = 0;
          char line[1024];
          size_t used = 0;
          line[0] = 0;
          const int hi = 20 < ln - 1 ? 20 : ln - 1;
          float ts[TOPK_DRTOPK_ALPHA_MAX + 1];
          if (time_alphas(&p, 5, hi, d_in, d_v, d_i, ts) != 0) return fail(TOPK_ERR_INTERNAL, "sweep timing");
          for (int a = 5; a <= hi; ++a) {
            const float t = ts[a - 5];
            used += (size_t)snprintf(line + used, sizeof line - used, "%s%d:%.3f", a > 5 ? " " : "", a, t);
            if (t > 0 && (best < 0 || t < best)) {
              best = t;
              best_a = a;
            }
          }
          const int ra = topk_drtopk_rule4_alpha(p.n, p.k);
          const float rt = time_select(&p, d_in, d_v, d_i);
          printf("| 2^%d | 2^%d | %d | %.3f | %d | %.3f | %.3f | %s |\n", ln, lk, best_a, best, ra, rt,
                 best > 0 ? rt / best : -1.0, line);
        }
      }
      printf("\n");
    }

    if (strcmp(section, "sweepcsv") == 0 && di == 0) {
      /* the fitting data of src/drtopk_rule4.c (bench/fit_rule4.py, tests/test_drtopk_rule4.c) */
      printf("device,dist,n,k,alpha,median_ms\n");
      for (int ln = 24; ln <= max_log; ++ln)
        for (int lk = 0; lk <= 16; lk += 2) {
          topk_problem p = {.batch = 1, .n = (int64_t)1 << ln, .k = (int64_t)1 << lk, .algo = TOPK_ALGO_DRTOPK_RADIX};
          const int lo = TOPK_DRTOPK_ALPHA_MIN, hi = TOPK_DRTOPK_ALPHA_MAX < ln - 1 ? TOPK_DRTOPK_ALPHA_MAX : ln - 1;
          float t[TOPK_DRTOPK_ALPHA_MAX + 1];
          if (time_alphas(&p, lo, hi, d_in, d_v, d_i, t) != 0) return fail(TOPK_ERR_INTERNAL, "sweep timing");
          for (int a = lo; a <= hi; ++a)
            printf("%s,uniform,%lld,%lld,%d,%.5f\n", props.name, (long long)p.n, (long long)p.k, a, t[a - lo]);
          fflush(stdout);
        }
    }

    if (strcmp(section, "steps") == 0 && di == 0) {
      static const int pts[][2] = {{24, 8}, {25, 10}, {25, 16}, {26, 14}, {24, 0}, {26, 4}, {28, 10}, {30, 10}};
      printf("## Per-step median ms against alpha (UD, f32, drtopk_radix, beta default)\n\n");
      printf("| n | k | alpha | delegates | first | threshold | concat | second | emit | total | concatenated |\n");
      printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
      for (size_t i = 0; i < sizeof pts / sizeof pts[0]; ++i) {
        if (pts[i][0] > max_log) continue;
        topk_problem p = {.batch = 1, .n = (int64_t)1 << pts[i][0], .k = (int64_t)1 << pts[i][1],
                          .algo = TOPK_ALGO_DRTOPK_RADIX};
        for (int a = 5; a <= 16; ++a) {
          set_alpha(a);
          topk_drtopk_stats st;
          if ((s = workload(&p, d_in, d_v, d_i, &st)) != TOPK_SUCCESS) return fail(s, "workload");
          if (!st.delegate_path) continue;
          printf("| 2^%d | 2^%d | %d%s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %lld |\n", pts[i][0],
                 pts[i][1], a, a == topk_drtopk_rule4_alpha(p.n, p.k) ? " (rule 4)" : "", st.ms_delegates,
                 st.ms_first, st.ms_threshold, st.ms_concat, st.ms_second, st.ms_emit, st.ms_total,
                 (long long)st.concat_size);
        }
        fflush(stdout);
      }
      set_alpha(0);
      printf("\n");
    }

    if ((all || strcmp(section, "beta") == 0) && di == 0) {
      printf("## Beta (Rule 3) re-measured (UD, f32, drtopk_radix, n = 2^%d, Rule-4 alpha; median ms)\n\n", max_log);
      printf("| k | beta 1 | beta 2 | beta 3 | beta 4 |\n| --- | --- | --- | --- | --- |\n");
      set_alpha(0);
      for (int lk = 0; lk <= 16; lk += 4) {
        topk_problem p = {.batch = 1, .n = nmax, .k = (int64_t)1 << lk, .algo = TOPK_ALGO_DRTOPK_RADIX};
        printf("| 2^%d |", lk);
        for (int beta = 1; beta <= 4; ++beta) {
          char bb[8];
          snprintf(bb, sizeof bb, "%d", beta);
          setenv("TOPK_DRTOPK_BETA", bb, 1);
          printf(" %.3f |", time_select(&p, d_in, d_v, d_i));
        }
        printf("\n");
      }
      unsetenv("TOPK_DRTOPK_BETA");
      printf("\n");
    }

    if ((all || strcmp(section, "bw") == 0) && di == 0) {
      double bw = 0;
      if ((s = topk_measure_read_bandwidth(&bw)) != TOPK_SUCCESS) return fail(s, "read bandwidth");
      printf("## Delegate construction alone (UD, f32, n = 2^%d, k = 1024; read bandwidth %.0f GB/s)\n\n", max_log,
             bw / 1e9);
      printf("step ms: the first step inside a run (prep kernel and launch gaps included); kernel ms: the delegate\n"
             "kernel alone, 10 launches back to back; reads: n x 4 bytes; moved: reads + the delegates written\n"
             "(n / 2^alpha x beta x 8 bytes), the roofline's bytes; %% of the read bandwidth at kernel ms.\n\n");
      printf("| kernel | alpha | beta | step ms | kernel ms | reads GB/s | %% (reads) | %% (moved) |\n"
             "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
      static const char* const builds[2] = {"smem", "warp"};
      for (int b = 0; b < 2; ++b)
        for (int beta = 1; beta <= 2; ++beta)
          for (int a = 5; a <= (b == 0 ? 10 : 16); ++a) {
            setenv("TOPK_DRTOPK_BUILD", builds[b], 1);
            char bb[8];
            snprintf(bb, sizeof bb, "%d", beta);
            setenv("TOPK_DRTOPK_BETA", bb, 1);
            set_alpha(a);
            topk_problem p = {.batch = 1, .n = nmax, .k = 1024, .algo = TOPK_ALGO_DRTOPK_RADIX};
            topk_drtopk_stats st;
            if ((s = workload(&p, d_in, d_v, d_i, &st)) != TOPK_SUCCESS) return fail(s, "workload");
            const double reads = (double)nmax * 4.0, writes = (double)st.delegate_size * 8.0;
            const double sec = st.ms_delegate_kernel * 1e-3;
            printf("| %s | %d | %d | %.3f | %.3f | %.0f | %.1f | %.1f |\n", st.build_smem ? "shared memory" : "warp-centric",
                   a, beta, st.ms_delegates, st.ms_delegate_kernel, reads / sec / 1e9, 100.0 * reads / sec / bw,
                   100.0 * (reads + writes) / sec / bw);
          }
      unsetenv("TOPK_DRTOPK_BUILD");
      unsetenv("TOPK_DRTOPK_BETA");
      set_alpha(0);
      printf("\n");
    }
  }
  topk_device_free(d_in);
  topk_device_free(d_v);
  topk_device_free(d_i);
  free(host);
  return 0;
}
