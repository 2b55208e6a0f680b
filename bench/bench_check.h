/*
 * bench_check.h: CK(call) for the standalone CUDA benchmarks of this folder (cluster_stage.cu,
 * handoff_floor.cu, moe_graph_floor.cu): a CUDA runtime call whose error ends the program with the call, the file
 * and line, and exit status 1. A benchmark has nothing to clean up or report on a failed call.
 */
#ifndef TOPK_BENCH_CHECK_H
#define TOPK_BENCH_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

#endif /* TOPK_BENCH_CHECK_H */
