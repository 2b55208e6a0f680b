/*
 * occupancy.h: a kernel's resident blocks per SM, asked of the runtime once per kernel and
 * device and then cached, since the query is host time on a latency path (AIR's RESIDENT
 * launch, RTop-K's thread path, both sized to one wave of resident blocks); and a kernel's
 * dynamic shared-memory limit, set once per kernel and device (topk_smem_limit_once).
 *
 * The caller owns one cache per kernel: int cache[TOPK_OCC_DEVICES], zero-initialised (a
 * static array), indexed by device ordinal, holding blocks + 1 (0: not asked yet). Relaxed
 * atomics, since plans may run from several host threads; two threads asking at once store
 * the same value. An ordinal outside the cache asks every time.
 *
 * Plain C as well as CUDA C++: it needs cuda_runtime_api.h and algo.h.
 */
#ifndef TOPK_CUDA_COMMON_OCCUPANCY_H
#define TOPK_CUDA_COMMON_OCCUPANCY_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "../../algo.h" /* topk_host_cache_on */

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

/*
 * Lets `kernel` launch with as much dynamic shared memory as the device allows it (the opt-in
 * per block less the kernel's static shared memory), set once per kernel and device: the
 * caller's cache (as above, 1 once set) spares the later calls cudaFuncSetAttribute, 0.45 us of
 * host time a call on the H100 host (session 36). Every caller of a kernel must set its limit
 * only through here, so the limit never goes down (a smaller value set by another path would
 * make a cached kernel's larger launches fail). Setting the limit reserves nothing: each launch
 * still asks for its own bytes. TOPK_HOST_CACHE=0 sets it at every call (for measurement).
 */
static inline cudaError_t topk_smem_limit_once(int* cache, int ordinal, const void* kernel) {
  const int known = ordinal >= 0 && ordinal < TOPK_OCC_DEVICES;
  if (known && __atomic_load_n(&cache[ordinal], __ATOMIC_RELAXED) && topk_host_cache_on()) return cudaSuccess;
  struct cudaFuncAttributes fa;
  cudaError_t e = cudaFuncGetAttributes(&fa, kernel);
  int optin = 0;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - (int)fa.sharedSizeBytes);
  if (e == cudaSuccess && known) __atomic_store_n(&cache[ordinal], 1, __ATOMIC_RELAXED);
  return e;
}

#endif /* TOPK_CUDA_COMMON_OCCUPANCY_H */
