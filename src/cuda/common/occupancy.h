/*
 * occupancy.h: a kernel's resident blocks per SM, asked of the runtime once per kernel and
 * device and then cached, since the query is host time on a latency path (AIR's RESIDENT
 * launch, RTop-K's thread path, both sized to one wave of resident blocks).
 *
 * The caller owns one cache per kernel: int cache[TOPK_OCC_DEVICES], zero-initialised (a
 * static array), indexed by device ordinal, holding blocks + 1 (0: not asked yet). Relaxed
 * atomics, since plans may run from several host threads; two threads asking at once store
 * the same value. An ordinal outside the cache asks every time.
 *
 * Plain C as well as CUDA C++: it only needs cuda_runtime_api.h.
 */
#ifndef TOPK_CUDA_COMMON_OCCUPANCY_H
#define TOPK_CUDA_COMMON_OCCUPANCY_H

#include <stddef.h>

#include <cuda_runtime_api.h>

enum { TOPK_OCC_DEVICES = 64 };

/* *blocks = resident blocks per SM of `kernel` launched with `threads` threads and `smem`
 * bytes of dynamic shared memory, on device `ordinal`. */
static inline cudaError_t topk_occupancy_cached(int* cache, int ordinal, const void* kernel, int threads, size_t smem,
                                                int* blocks) {
  const int known = ordinal >= 0 && ordinal < TOPK_OCC_DEVICES;
  const int v = known ? __atomic_load_n(&cache[ordinal], __ATOMIC_RELAXED) : 0;
  if (v > 0) {
    *blocks = v - 1;
    return cudaSuccess;
  }
  const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem);
  if (e == cudaSuccess && known) __atomic_store_n(&cache[ordinal], *blocks + 1, __ATOMIC_RELAXED);
  return e;
}

#endif /* TOPK_CUDA_COMMON_OCCUPANCY_H */
