/*
 * cuda_check.h: CUDA errors -> topk_status, in one place.
 *
 *   TOPK_CUDA_TRY(cudaMemsetAsync(...));     returns from the enclosing function on error
 *   kernel<<<grid, block, 0, stream>>>(...);
 *   TOPK_CUDA_TRY_LAUNCH("kernel name");     a launch reports its errors only here
 *   topk_status s = TOPK_CUDA_STATUS(expr);  the status, without returning
 *
 * Never aborts (unlike ggml's CUDA_CHECK): a library must hand the error back.
 * cudaErrorMemoryAllocation becomes TOPK_ERR_OUT_OF_MEMORY, every other error
 * TOPK_ERR_CUDA, and topk_error_detail() gets "what: cudaErrorX (text) at file:line".
 *
 * A failing runtime call also records its (non-sticky) error as the thread's "last
 * error"; the helper clears it with cudaGetLastError(), so that the next launch
 * check of this or any later call does not report a stale failure as its own.
 * Sticky errors (a kernel fault) cannot be cleared and keep failing, as they must.
 *
 * Plain C as well as CUDA C++: it only needs cuda_runtime_api.h.
 */
#ifndef TOPK_CUDA_COMMON_CUDA_CHECK_H
#define TOPK_CUDA_COMMON_CUDA_CHECK_H

#include <string.h>

#include <cuda_runtime_api.h>

#include "../../algo.h"

/* The last path component of __FILE__, so details stay short and free of build paths. */
static inline const char* topk_cuda_file_name_(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Records err (with what failed and where) as the call's failure. @return its topk_status. */
static inline topk_status topk_cuda_status_(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return TOPK_SUCCESS;
  (void)cudaGetLastError(); /* clear the non-sticky copy of err; see the file comment */
  return topk_fail(err == cudaErrorMemoryAllocation ? TOPK_ERR_OUT_OF_MEMORY : TOPK_ERR_CUDA,
                   "%s: %s (%s) at %s:%d", what, cudaGetErrorName(err), cudaGetErrorString(err),
                   topk_cuda_file_name_(file), line);
}

/* The topk_status of a cudaError_t expression (TOPK_SUCCESS for cudaSuccess). Variadic,
 * so that template arguments in the expression need no extra parentheses. */
#define TOPK_CUDA_STATUS(...) topk_cuda_status_((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)

/* Evaluates a cudaError_t expression; on error records it and returns its status. */
#define TOPK_CUDA_TRY(...)                                                           \
  do {                                                                               \
    cudaError_t topk_err_ = (__VA_ARGS__);                                           \
    if (topk_err_ != cudaSuccess) return topk_cuda_status_(topk_err_, #__VA_ARGS__, __FILE__, __LINE__); \
  } while (0)

/* After a <<<...>>> launch: a bad configuration or a missing kernel image shows here. */
#define TOPK_CUDA_TRY_LAUNCH(kernel_name)                                            \
  do {                                                                               \
    cudaError_t topk_err_ = cudaGetLastError();                                      \
    if (topk_err_ != cudaSuccess)                                                    \
      return topk_cuda_status_(topk_err_, "launch of " kernel_name, __FILE__, __LINE__); \
  } while (0)

/*
 * Whether a launch with `bytes` of dynamic shared memory must first raise the kernel's
 * cudaFuncAttributeMaxDynamicSharedMemorySize. Without it a kernel may take 48 KB minus its
 * static shared memory, not 48 KB: a launch of exactly 48 KB dynamic by a kernel with 192 bytes
 * of static shared memory fails (seen in session 18 with ROWS' buffer). Every kernel that
 * asks here has under 1 KB of static shared memory, hence 47 KB.
 */
static inline int topk_smem_needs_optin(size_t bytes) { return bytes > 47u * 1024u; }

#endif /* TOPK_CUDA_COMMON_CUDA_CHECK_H */
