/*
 * select_step.cu: what one block-wide step of CLUSTER's wide start costs on its own (one block of
 * 1024 threads, clock64, each step repeated 64 times in one launch, so the figures are warm-code
 * costs). The wide start's stamps (TOPK_AIR_CLUSTER_STAMPS=1) time the same steps inside the
 * kernel, where they take longer: docs/perf-notes.md v0.41 compares the two.
 *
 * Build and run (sm_90; nvcc from the repository root):
 *   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Iinclude -Isrc \
 *        -o build/select_step bench/select_step.cu && build/select_step
 * Prints cycles a step: block barriers, __syncthreads_count, 1024 shared atomics in four address
 * patterns (then two barriers), air_wide_pick_bin (warp 0's choice in a 256-bin histogram), one
 * 8-bit digit of air_wide_select, the min / max reduce of the maxima, and a shared store with
 * fence.proxy.async (the bulk copy's fence) by 32 / 128 / 1024 threads.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "cuda/common/cuda_check.h"
#include "cuda/common/keys.cuh"
#include "cuda/air_radix/air_radix_kernels.cuh"

enum { ITERS = 64 };

template <int MODE>
__global__ void __launch_bounds__(1024, 1) step_kernel(const unsigned* in, long long* out, int arg) {
  __shared__ air_wide_sync S;
  __shared__ unsigned long long buf[4096];
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const unsigned mx = in[t];
  if (t < 256) S.hist[0][t] = S.hist[1][t] = 0;
  __syncthreads();
  unsigned par = 0, acc = 0;
  const long long c0 = clock64();
  for (int it = 0; it < ITERS; ++it) {
    if (MODE == 0) { /* a block barrier */
      __syncthreads();
    } else if (MODE == 1) { /* a barrier that counts */
      acc += (unsigned)__syncthreads_count(mx + it > 0xC0400000u);
    } else if (MODE == 2) { /* 1024 shared atomics (arg: 0 lane-distinct, 1 one address a warp, 2 random, 3 two in all) */
      unsigned b;
      if (arg == 0) b = (t * 37u) & 255u;
      else if (arg == 1) b = warp;
      else if (arg == 2) { unsigned x = (t + it) * 2654435761u; x ^= x >> 15; b = x & 255u; }
      else b = t >> 9;
      atomicAdd(&S.hist[par][b], 1u);
      __syncthreads();
      if (t < 32) acc += S.hist[par][t];
      __syncthreads();
    } else if (MODE == 3) { /* atomics, barrier, warp 0's pick, barrier: a digit's skeleton */
      unsigned* h = S.hist[par];
      atomicAdd(&h[(mx + it) >> 16 & 255u], 1u);
      if (t < 256) S.hist[par ^ 1u][t] = 0;
      __syncthreads();
      if (warp == 0) air_wide_pick_bin(h, 97u, S.sel);
      __syncthreads();
      acc += S.sel[0];
      par ^= 1u;
    } else if (MODE == 4) { /* one 8-bit digit of the select (the bound's, one value a thread) */
      const unsigned v[1] = {mx + it};
      const bool live[1] = {true};
      unsigned mask = 0xFF000000u, pre = 0xC0000000u, q = 97u;
      air_wide_select<unsigned, 1>(v, live, 24, 16, mask, pre, q, par, &S);
      acc += pre;
    } else if (MODE == 5) { /* the maxima's min / max over the block (two barriers) */
      unsigned a = __reduce_min_sync(0xffffffffu, mx + it), o = __reduce_max_sync(0xffffffffu, mx + it);
      if (lane == 0) {
        S.wred[0][warp] = a;
        S.wred[1][warp] = o;
      }
      __syncthreads();
      a = __reduce_min_sync(0xffffffffu, S.wred[0][lane]);
      o = __reduce_max_sync(0xffffffffu, S.wred[1][lane]);
      acc += a ^ o;
      __syncthreads();
    } else if (MODE == 6) { /* arg threads store to shared memory and fence for the async proxy */
      if ((int)t < arg) {
        buf[(t * 4 + it) & 4095] = t + it;
        bulk_fence();
      }
      __syncthreads();
    } else { /* the same without the fence */
      if ((int)t < arg) buf[(t * 4 + it) & 4095] = t + it;
      __syncthreads();
    }
  }
  const long long c1 = clock64();
  if (t == 0) {
    out[0] = (c1 - c0) / ITERS;
    out[1] = acc + (long long)buf[5];
  }
}

template <int MODE>
static long long run(const unsigned* d_in, long long* d_out, int arg) {
  step_kernel<MODE><<<1, 1024>>>(d_in, d_out, arg);
  long long r[2] = {0, 0};
  const cudaError_t e = cudaMemcpy(r, d_out, sizeof r, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    fprintf(stderr, "select_step: %s\n", cudaGetErrorString(e));
    exit(1);
  }
  return r[0];
}

int main(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    fprintf(stderr, "select_step: no CUDA device\n");
    return 77;
  }
  unsigned h[1024], x = 12345u;
  for (int i = 0; i < 1024; ++i) { /* keys of floats in [2, 4) */
    x = x * 1103515245u + 12345u;
    h[i] = 0xC0000000u + ((x >> 8) & 0x7FFFFFu);
  }
  unsigned* d_in;
  long long* d_out;
  if (cudaMalloc(&d_in, sizeof h) != cudaSuccess || cudaMalloc(&d_out, 16) != cudaSuccess) return 1;
  cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  printf("%s, 1 block of 1024 threads, cycles a step (mean of %d in one launch)\n", p.name, ITERS);
  printf("%-52s %6lld\n", "__syncthreads", run<0>(d_in, d_out, 0));
  printf("%-52s %6lld\n", "__syncthreads_count", run<1>(d_in, d_out, 0));
  const char* pat[] = {"lane-distinct", "one address a warp", "random", "two addresses in all"};
  for (int a = 0; a < 4; ++a) {
    char name[96];
    snprintf(name, sizeof name, "1024 atomics (%s) + 2 barriers", pat[a]);
    printf("%-52s %6lld\n", name, run<2>(d_in, d_out, a));
  }
  printf("%-52s %6lld\n", "digit skeleton: atomics, barrier, pick, barrier", run<3>(d_in, d_out, 0));
  printf("%-52s %6lld\n", "air_wide_select, one 8-bit digit", run<4>(d_in, d_out, 0));
  printf("%-52s %6lld\n", "min / max of the maxima over the block", run<5>(d_in, d_out, 0));
  for (int w : {32, 128, 1024}) {
    char name[96];
    snprintf(name, sizeof name, "%d threads: shared store + barrier", w);
    printf("%-52s %6lld\n", name, run<7>(d_in, d_out, w));
    snprintf(name, sizeof name, "%d threads: shared store + proxy fence + barrier", w);
    printf("%-52s %6lld\n", name, run<6>(d_in, d_out, w));
  }
  return 0;
}
