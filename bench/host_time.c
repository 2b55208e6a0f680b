/*
 * host_time.c: host time of one top-k call, the enqueue alone (CUDA builds only).
 *
 *   host_time
 *
 * For a few problems (MoE routing, LLM sampling, a long row, k = n), f32, int64 indices, on
 * the current device: 200 calls back to back on a non-blocking stream with a caller-given
 * workspace, timed with CLOCK_MONOTONIC around the loop (the GPU is not waited for inside
 * it), best of 5 loops, in microseconds per call, for
 *   select    topk_select (validation, the plan, AUTO's choice, the pointer checks, launches)
 *   plan_run  topk_plan_run on a plan made once (no validation of the problem, no choice)
 * and the plan's explanation. It says where a call's fixed cost goes when the GPU work is a
 * few microseconds (docs/BENCHMARKS.md, session 11). The inputs are zeros: the time is the
 * host's. Exit status: 0; 77 without a CUDA device; 1 if a call fails.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "topk.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int time_problem(const char* label, const topk_problem* p) {
  size_t ws = 0;
  topk_plan* plan = NULL;
  if (topk_workspace_size(p, &ws) != TOPK_SUCCESS || topk_plan_create(&plan, p) != TOPK_SUCCESS) {
    fprintf(stderr, "host_time: %s: %s\n", label, topk_error_detail());
    return 1;
  }
  void *in = NULL, *values = NULL, *indices = NULL, *work = NULL;
  cudaStream_t s = NULL;
  int bad = cudaMalloc(&in, (size_t)(p->batch * p->ld) * 4) != cudaSuccess ||
            cudaMalloc(&values, (size_t)(p->batch * p->k) * 4) != cudaSuccess ||
            cudaMalloc(&indices, (size_t)(p->batch * p->k) * 8) != cudaSuccess ||
            cudaMalloc(&work, ws + 1) != cudaSuccess || cudaMemset(in, 0, (size_t)(p->batch * p->ld) * 4) != cudaSuccess ||
            cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess;
  for (int mode = 0; mode < 2 && !bad; ++mode) {
    double best = 1e30;
    for (int loop = 0; loop < 5 && !bad; ++loop) {
      cudaStreamSynchronize(s);
      const double t0 = now_us();
      for (int i = 0; i < 200 && !bad; ++i) {
        const topk_status st = mode == 0 ? topk_select(p, in, values, indices, work, ws, s)
                                         : topk_plan_run(plan, in, NULL, values, indices, work, ws, s);
        if (st != TOPK_SUCCESS) {
          fprintf(stderr, "host_time: %s: %s\n", label, topk_error_detail());
          bad = 1;
        }
      }
      const double t = (now_us() - t0) / 200;
      cudaStreamSynchronize(s);
      if (t < best) best = t;
    }
    if (!bad) printf("%-34s %-9s %6.2f us/call  %s\n", label, mode ? "plan_run" : "select", best, topk_plan_explain(plan));
  }
  topk_plan_destroy(plan);
  cudaFree(in);
  cudaFree(values);
  cudaFree(indices);
  cudaFree(work);
  if (s) cudaStreamDestroy(s);
  return bad;
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    fprintf(stderr, "host_time: no CUDA device\n");
    return 77;
  }
  static const struct {
    const char* label;
    int64_t batch, n, k;
    unsigned flags;
    topk_algo algo;
  } cases[] = {
      {"moe 4096 x 8, k 1, sorted", 4096, 8, 1, TOPK_SORTED, TOPK_ALGO_AUTO},
      {"moe 4096 x 8, k 1, sorted, rtopk", 4096, 8, 1, TOPK_SORTED, TOPK_ALGO_RTOPK},
      {"moe 65536 x 64, k 8", 65536, 64, 8, 0, TOPK_ALGO_AUTO},
      {"llm 1 x 32000, k 50", 1, 32000, 50, 0, TOPK_ALGO_AUTO},
      {"llm 1 x 32000, k 50, air_radix", 1, 32000, 50, 0, TOPK_ALGO_AIR_RADIX},
      {"llm 8 x 262144, k 1024", 8, 262144, 1024, 0, TOPK_ALGO_AUTO},
      {"single 1 x 2^20, k 1024", 1, 1 << 20, 1024, 0, TOPK_ALGO_AUTO},
      {"single 1 x 8192, k 8192", 1, 8192, 8192, 0, TOPK_ALGO_AUTO},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    topk_problem p;
    memset(&p, 0, sizeof p);
    p.dtype = TOPK_F32;
    p.batch = cases[i].batch;
    p.n = cases[i].n;
    p.ld = cases[i].n;
    p.k = cases[i].k;
    p.flags = cases[i].flags;
    p.algo = cases[i].algo;
    p.index_type = TOPK_INDEX_I64;
    p.backend = TOPK_BACKEND_CUDA;
    bad |= time_problem(cases[i].label, &p);
  }
  return bad;
}
