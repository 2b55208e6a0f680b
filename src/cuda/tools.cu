/*
 * tools.cu: the memory, event and stream helpers of topk.h section 6, for callers
 * that include no CUDA header (the CLI, ctypes bindings, the benchmark).
 */
#include <cuda_runtime.h>

#include "algo.h"
#include "topk.h"

static topk_status check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return TOPK_SUCCESS;
  cudaGetLastError(); /* clear a non-sticky error so the next call starts clean */
  return topk_fail(e == cudaErrorMemoryAllocation ? TOPK_ERR_OUT_OF_MEMORY : TOPK_ERR_CUDA, "%s: %s", what,
                   cudaGetErrorString(e));
}

extern "C" {

TOPK_API topk_status topk_device_malloc(void** ptr, size_t bytes) {
  if (!ptr) return topk_fail(TOPK_ERR_NULL_POINTER, "ptr is NULL");
  *ptr = NULL;
  return check(cudaMalloc(ptr, bytes), "cudaMalloc");
}
TOPK_API topk_status topk_device_free(void* ptr) { return ptr ? check(cudaFree(ptr), "cudaFree") : TOPK_SUCCESS; }
TOPK_API topk_status topk_memcpy_to_device(void* dst, const void* src, size_t bytes) {
  if (bytes && (!dst || !src)) return topk_fail(TOPK_ERR_NULL_POINTER, "copy pointer is NULL");
  return check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}
TOPK_API topk_status topk_memcpy_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes && (!dst || !src)) return topk_fail(TOPK_ERR_NULL_POINTER, "copy pointer is NULL");
  return check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}
TOPK_API topk_status topk_memset_device(void* dst, int byte, size_t bytes, topk_stream stream) {
  if (bytes && !dst) return topk_fail(TOPK_ERR_NULL_POINTER, "dst is NULL");
  return check(cudaMemsetAsync(dst, byte, bytes, (cudaStream_t)stream), "cudaMemsetAsync");
}
TOPK_API topk_status topk_device_synchronize(void) { return check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

TOPK_API topk_status topk_event_create(topk_event** event) {
  if (!event) return topk_fail(TOPK_ERR_NULL_POINTER, "event is NULL");
  cudaEvent_t e = NULL;
  topk_status s = check(cudaEventCreate(&e), "cudaEventCreate");
  *event = (topk_event*)e;
  return s;
}
TOPK_API topk_status topk_event_record(topk_event* event, topk_stream stream) {
  if (!event) return topk_fail(TOPK_ERR_NULL_POINTER, "event is NULL");
  return check(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), "cudaEventRecord");
}
TOPK_API topk_status topk_event_elapsed_ms(topk_event* start, topk_event* end, float* ms) {
  if (!start || !end || !ms) return topk_fail(TOPK_ERR_NULL_POINTER, "event or ms is NULL");
  topk_status s = check(cudaEventSynchronize((cudaEvent_t)end), "cudaEventSynchronize");
  if (s != TOPK_SUCCESS) return s;
  return check(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end), "cudaEventElapsedTime");
}
TOPK_API void topk_event_destroy(topk_event* event) {
  if (event) cudaEventDestroy((cudaEvent_t)event);
}
TOPK_API topk_status topk_stream_create(topk_stream* stream) {
  if (!stream) return topk_fail(TOPK_ERR_NULL_POINTER, "stream is NULL");
  cudaStream_t s = NULL;
  topk_status st = check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  *stream = (topk_stream)s;
  return st;
}
TOPK_API void topk_stream_destroy(topk_stream stream) {
  if (stream) cudaStreamDestroy((cudaStream_t)stream);
}
TOPK_API topk_status topk_stream_synchronize(topk_stream stream) {
  return check(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
}

} /* extern "C" */
