/*
 * rtopk_accuracy.c: the RTop-K paper's (001) Tables 1 and 2, from our GPU kernel.
 *
 *   rtopk_accuracy [--rows R] [--m M] [--seed S] [--shift X]
 *
 * Data: R rows (default 65536) of M (default 256) f32 elements drawn from N(0, 1)
 * (tools/common/gen.h) plus X (default 0), as the paper's "normally distributed
 * elements" (its Tables 1 and 2: M = 256, 10^5 rows).
 *
 * Table 1 (iterations to exit): per k, the cumulative share of rows whose search
 * ended within i steps, and the mean. Three columns per k:
 *   paper  the paper's numbers (Algorithm 1, epsilon = 1e-4 * max);
 *   alg1   Algorithm 1 with epsilon run here on the CPU on our data (a check that
 *          our data matches the paper's);
 *   exact  our exact mode's steps (rtopk_select_iters: the search on rank keys with
 *          value midpoints, rtopk_kernels.cuh), which also finishes exactly.
 *
 * Table 2 (early stopping, Algorithm 2, max_iter 2..8): per k, over all rows,
 *   Hit  mean of |approx set ∩ exact set| / k          (percent)
 *   E1   mean of |max(approx) - max(exact)| / |max(exact)|  (percent)
 *   E2   mean of |min(approx) - min(exact)| / |min(exact)|  (percent)
 * with the paper's numbers beside ours. The exact set is our exact mode's (checked
 * against the CPU reference on the first rows). E2 divides by the k-th largest
 * value, which is near 0 for k = M / 2 on N(0, 1) data; --shift moves the data
 * away from 0 if the paper's data were not centred (it does not say).
 *
 * Prints markdown. Needs a CUDA device (exit 77 otherwise).
 */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda/rtopk/rtopk.h"
#include "gen.h"
#include "topk.h"

#define NK 5
static const int ks_[NK] = {16, 32, 64, 96, 128};

/* Paper 001, Table 1: cumulative % of exits by iteration 3..16, then the mean. */
static const double paper_t1_[14][NK] = {
    {4.13, 2.71, 1.96, 1.34, 1.58},       {8.98, 5.32, 3.52, 3.00, 2.81},       {17.90, 10.64, 6.92, 5.84, 5.59},
    {33.86, 21.40, 13.87, 11.72, 11.15},  {54.43, 38.84, 27.12, 23.29, 22.11},  {72.38, 59.17, 46.64, 41.35, 39.93},
    {84.53, 76.00, 66.21, 61.48, 60.35},  {91.88, 86.81, 80.68, 77.37, 76.62},  {95.81, 93.03, 89.79, 87.64, 87.18},
    {97.89, 96.45, 94.70, 93.57, 93.31},  {98.97, 98.21, 97.35, 96.70, 96.60},  {99.52, 99.12, 98.67, 98.34, 98.25},
    {99.76, 99.53, 99.34, 99.20, 99.17},  {100.00, 100.00, 100.00, 100.00, 100.00}};
static const double paper_t1_avg_[NK] = {7.60, 8.29, 8.95, 9.52, 9.60};

/* Paper 001, Table 2: per max_iter 2..8, per k: E1, E2, Hit (percent). */
static const double paper_t2_[7][NK][3] = {
    {{12.6, 20.17, 45.85}, {13.46, 30.68, 37.81}, {7.12, 25.03, 51.78}, {4.42, 17.80, 69.59}, {4.6, 24.73, 70.93}},
    {{8.01, 13.13, 54.29}, {6.22, 13.19, 60.32}, {4.44, 12.40, 69.04}, {3.39, 12.94, 74.41}, {2.78, 13.23, 79.33}},
    {{4.93, 7.64, 68.35}, {3.47, 7.05, 74.46}, {2.47, 6.55, 80.51}, {1.99, 6.82, 84.33}, {1.6, 7.24, 87.34}},
    {{3.52, 5.20, 77.36}, {2.20, 4.31, 83.19}, {1.47, 3.70, 87.88}, {1.18, 3.91, 90.49}, {0.97, 4.29, 92.34}},
    {{2.90, 4.33, 81.57}, {1.62, 3.17, 87.62}, {0.99, 2.39, 91.83}, {0.77, 2.57, 93.77}, {0.62, 2.90, 95.03}},
    {{2.67, 4.10, 83.17}, {1.38, 2.79, 89.51}, {0.79, 1.87, 93.68}, {0.61, 2.00, 95.33}, {0.47, 2.30, 96.35}},
    {{2.61, 4.06, 83.68}, {1.31, 2.69, 90.19}, {0.71, 1.72, 94.35}, {0.55, 1.82, 95.94}, {0.41, 2.11, 96.86}}};

#define MAX_STEPS 80

static int fail(const char* what, topk_status s) {
  fprintf(stderr, "rtopk_accuracy: %s: %s (%s)\n", what, topk_status_name(s), topk_error_detail());
  return 1;
}

/* Algorithm 1 of the paper on one row: the iteration at which its loop exits. */
static int alg1_iterations(const float* v, int m, int k) {
  float lo = v[0], hi = v[0];
  for (int i = 1; i < m; ++i) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  const float eps = 1e-4f * hi;
  int it = 0;
  while (hi - lo > eps && it < MAX_STEPS - 1) {
    ++it;
    const float mid = (lo + hi) / 2;
    int cnt = 0;
    for (int i = 0; i < m; ++i) cnt += v[i] >= mid;
    if (cnt < k) hi = mid;
    else if (cnt > k) lo = mid;
    else break;
  }
  return it;
}

static void print_cumulative(const char* label, int64_t (*hist)[MAX_STEPS], int64_t rows, int lo_it, int hi_it) {
  (void)label;
  for (int it = lo_it; it <= hi_it; ++it) {
    printf("| %d |", it);
    for (int q = 0; q < NK; ++q) {
      int64_t c = 0;
      for (int j = 0; j <= it && j < MAX_STEPS; ++j) c += hist[q][j];
      printf(" %.2f |", 100.0 * (double)c / (double)rows);
    }
    printf("\n");
  }
}

int main(int argc, char** argv) {
  int64_t rows = 65536;
  int m = 256;
  uint64_t seed = 1;
  double shift = 0;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--rows") == 0) rows = atoll(argv[a + 1]);
    else if (strcmp(argv[a], "--m") == 0) m = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--seed") == 0) seed = strtoull(argv[a + 1], NULL, 10);
    else if (strcmp(argv[a], "--shift") == 0) shift = atof(argv[a + 1]);
    else {
      fprintf(stderr, "usage: rtopk_accuracy [--rows R] [--m M] [--seed S] [--shift X]\n");
      return 64;
    }
  }
  if (rows < 1 || m < 128 || m > 4096) {
    fprintf(stderr, "rtopk_accuracy: rows >= 1 and 128 <= M <= 4096 (k goes to 128)\n");
    return 64;
  }
  if (!topk_cuda_available()) {
    printf("no CUDA device: skipped\n");
    return 77;
  }
  const int64_t count = rows * m;
  float* x = (float*)malloc((size_t)count * sizeof(float));
  float* ev = (float*)malloc((size_t)rows * 128 * sizeof(float));
  float* av = (float*)malloc((size_t)rows * 128 * sizeof(float));
  int64_t* ei = (int64_t*)malloc((size_t)rows * 128 * sizeof(int64_t));
  int64_t* ai = (int64_t*)malloc((size_t)rows * 128 * sizeof(int64_t));
  int* iters = (int*)malloc((size_t)rows * sizeof(int));
  unsigned char* mark = (unsigned char*)calloc((size_t)m, 1);
  if (!x || !ev || !av || !ei || !ai || !iters || !mark) {
    fprintf(stderr, "rtopk_accuracy: out of host memory\n");
    return 1;
  }
  gen_opts g = {.dist = GEN_NORMAL, .seed = seed};
  gen_fill(x, TOPK_F32, count, &g);
  for (int64_t i = 0; i < count; ++i) x[i] += (float)shift;

  void *d_x = NULL, *d_v = NULL, *d_i = NULL, *d_it = NULL;
  topk_status s;
  if ((s = topk_device_malloc(&d_x, (size_t)count * 4)) != TOPK_SUCCESS ||
      (s = topk_device_malloc(&d_v, (size_t)rows * 128 * 4)) != TOPK_SUCCESS ||
      (s = topk_device_malloc(&d_i, (size_t)rows * 128 * 8)) != TOPK_SUCCESS ||
      (s = topk_device_malloc(&d_it, (size_t)rows * 4)) != TOPK_SUCCESS ||
      (s = topk_memcpy_to_device(d_x, x, (size_t)count * 4)) != TOPK_SUCCESS)
    return fail("device setup", s);

  static int64_t hist_alg1[NK][MAX_STEPS], hist_exact[NK][MAX_STEPS];
  double sum_alg1[NK] = {0}, sum_exact[NK] = {0};
  /* [0]: ours (a hit, count == k, moves min to mid: the exact top k); [1]: Algorithm 2's line 11
   * literally (a hit keeps min: TOPK_RTOPK_PAPER_BREAK=1) */
  double hit[2][7][NK], e1[2][7][NK], e2[2][7][NK];
  int max_exact = 0;
  /* mean and largest step count of the exact mode per threshold choice (TOPK_RTOPK_SEARCH) */
  static const char* const modes[3] = {"interp", "value", "key"};
  double mode_avg[3][NK];
  int mode_max[3][NK];

  for (int q = 0; q < NK; ++q) {
    const int k = ks_[q];
    topk_problem p = {.dtype = TOPK_F32, .batch = rows, .n = m, .k = k, .algo = TOPK_ALGO_RTOPK,
                      .backend = TOPK_BACKEND_CUDA};
    /* exact, with per-row steps */
    if ((s = rtopk_select_iters(&p, d_x, d_v, d_i, (int*)d_it, NULL)) != TOPK_SUCCESS) return fail("exact", s);
    if ((s = topk_memcpy_to_host(ev, d_v, (size_t)rows * k * 4)) != TOPK_SUCCESS ||
        (s = topk_memcpy_to_host(ei, d_i, (size_t)rows * k * 8)) != TOPK_SUCCESS ||
        (s = topk_memcpy_to_host(iters, d_it, (size_t)rows * 4)) != TOPK_SUCCESS)
      return fail("copy back", s);
    /* the exact result against the CPU reference, on the first rows */
    topk_problem hp = p;
    hp.batch = rows < 4096 ? rows : 4096;
    if (check_topk(&hp, x, NULL, ev, ei) != 0) {
      fprintf(stderr, "rtopk_accuracy: the exact result differs from the CPU reference (k=%d)\n", k);
      return 1;
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int it = iters[r] < MAX_STEPS ? iters[r] : MAX_STEPS - 1;
      hist_exact[q][it]++;
      sum_exact[q] += iters[r];
      max_exact = iters[r] > max_exact ? iters[r] : max_exact;
      const int a1 = alg1_iterations(x + r * m, m, k);
      hist_alg1[q][a1]++;
      sum_alg1[q] += a1;
    }
    for (int md = 0; md < 3; ++md) {
      setenv("TOPK_RTOPK_SEARCH", modes[md], 1);
      s = rtopk_select_iters(&p, d_x, d_v, d_i, (int*)d_it, NULL);
      unsetenv("TOPK_RTOPK_SEARCH");
      if (s != TOPK_SUCCESS || (s = topk_memcpy_to_host(iters, d_it, (size_t)rows * 4)) != TOPK_SUCCESS)
        return fail("exact, by search mode", s);
      double sum = 0;
      int mx = 0;
      for (int64_t r = 0; r < rows; ++r) {
        sum += iters[r];
        mx = iters[r] > mx ? iters[r] : mx;
      }
      mode_avg[md][q] = sum / (double)rows;
      mode_max[md][q] = mx;
    }
    /* early stopping, max_iter 2..8, both readings of line 11 */
    for (int lit = 0; lit < 2; ++lit)
    for (int mi = 2; mi <= 8; ++mi) {
      p.max_iter = mi;
      setenv("TOPK_RTOPK_PAPER_BREAK", lit ? "1" : "0", 1);
      s = topk_select(&p, d_x, d_v, d_i, NULL, 0, NULL);
      unsetenv("TOPK_RTOPK_PAPER_BREAK");
      if (s != TOPK_SUCCESS) return fail("early stopping", s);
      if ((s = topk_memcpy_to_host(av, d_v, (size_t)rows * k * 4)) != TOPK_SUCCESS ||
          (s = topk_memcpy_to_host(ai, d_i, (size_t)rows * k * 8)) != TOPK_SUCCESS)
        return fail("copy back", s);
      double h = 0, s1 = 0, s2 = 0;
      for (int64_t r = 0; r < rows; ++r) {
        float emax = -INFINITY, emin = INFINITY, amax = -INFINITY, amin = INFINITY;
        for (int j = 0; j < k; ++j) {
          const float e = ev[r * k + j], v = av[r * k + j];
          emax = e > emax ? e : emax;
          emin = e < emin ? e : emin;
          amax = v > amax ? v : amax;
          amin = v < amin ? v : amin;
          mark[ei[r * k + j]] = 1;
        }
        int common = 0;
        for (int j = 0; j < k; ++j) common += mark[ai[r * k + j]];
        for (int j = 0; j < k; ++j) mark[ei[r * k + j]] = 0;
        h += (double)common / k;
        s1 += fabs((double)amax - emax) / fabs((double)emax);
        s2 += fabs((double)amin - emin) / fabs((double)emin);
      }
      hit[lit][mi - 2][q] = 100 * h / (double)rows;
      e1[lit][mi - 2][q] = 100 * s1 / (double)rows;
      e2[lit][mi - 2][q] = 100 * s2 / (double)rows;
    }
  }

  printf("## RTop-K Table 1: iterations to exit (M = %d, N(0,1)%+g, %lld rows)\n\n", m, shift, (long long)rows);
  printf("Cumulative %% of rows whose search ended within i steps. paper: 10^5 rows, Algorithm 1 with "
         "epsilon = 1e-4 * max.\n\n");
  for (int part = 0; part < 3; ++part) {
    const char* name = part == 0 ? "paper (Algorithm 1, epsilon)" : part == 1 ? "ours: Algorithm 1 with epsilon, on the CPU" : "ours: exact mode on the GPU (rank keys, exact finish)";
    printf("### %s\n\n| i | k=16 | k=32 | k=64 | k=96 | k=128 |\n|---|---|---|---|---|---|\n", name);
    if (part == 0) {
      for (int i = 0; i < 14; ++i) {
        printf("| %d |", i + 3);
        for (int q = 0; q < NK; ++q) printf(" %.2f |", paper_t1_[i][q]);
        printf("\n");
      }
      printf("| avg |");
      for (int q = 0; q < NK; ++q) printf(" %.2f |", paper_t1_avg_[q]);
    } else {
      const int hi_it = part == 1 ? 16 : (max_exact < MAX_STEPS ? max_exact : MAX_STEPS - 1);
      print_cumulative(name, part == 1 ? hist_alg1 : hist_exact, rows, 3, hi_it < 3 ? 3 : hi_it);
      printf("| avg |");
      for (int q = 0; q < NK; ++q) printf(" %.2f |", (part == 1 ? sum_alg1[q] : sum_exact[q]) / (double)rows);
    }
    printf("\n\n");
  }

  printf("### ours: exact mode's steps by threshold choice (TOPK_RTOPK_SEARCH): mean / largest\n\n");
  printf("| search | k=16 | k=32 | k=64 | k=96 | k=128 |\n|---|---|---|---|---|---|\n");
  for (int md = 0; md < 3; ++md) {
    printf("| %s |", modes[md]);
    for (int q = 0; q < NK; ++q) printf(" %.2f / %d |", mode_avg[md][q], mode_max[md][q]);
    printf("\n");
  }
  printf("\n");

  for (int lit = 0; lit < 2; ++lit) {
    printf("## RTop-K Table 2: early stopping (Algorithm 2), M = %d, ours vs paper%s\n\n", m,
           lit ? ", line 11 literally (a hit keeps min)" : " (a hit moves min to mid: the library's behaviour)");
    printf("E1, E2: mean relative error of the max / min of the selection vs the exact top k; Hit: mean overlap "
           "with the exact top k; all %%. Each cell: ours (paper).\n\n");
    printf("| max_iter |");
    for (int q = 0; q < NK; ++q) printf(" k=%d E1 | E2 | Hit |", ks_[q]);
    printf("\n|---|");
    for (int q = 0; q < NK; ++q) printf("---|---|---|");
    printf("\n");
    for (int mi = 2; mi <= 8; ++mi) {
      printf("| %d |", mi);
      for (int q = 0; q < NK; ++q)
        printf(" %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) |", e1[lit][mi - 2][q], paper_t2_[mi - 2][q][0],
               e2[lit][mi - 2][q], paper_t2_[mi - 2][q][1], hit[lit][mi - 2][q], paper_t2_[mi - 2][q][2]);
      printf("\n");
    }
    printf("\n");
  }
  topk_device_free(d_x);
  topk_device_free(d_v);
  topk_device_free(d_i);
  topk_device_free(d_it);
  free(x);
  free(ev);
  free(av);
  free(ei);
  free(ai);
  free(iters);
  free(mark);
  return 0;
}
