/*
 * rows.cuh: where row r of a problem lies in the input, written once for every kernel.
 *
 * Uniform rows start at r x ld and hold n elements. Variable rows are
 * [offsets[r], offsets[r + 1]) clamped into [0, n] (n: the whole buffer), so bad
 * device offsets can never send a read outside the input; for valid offsets the
 * clamp changes nothing.
 */
#ifndef TOPK_CUDA_COMMON_ROWS_CUH
#define TOPK_CUDA_COMMON_ROWS_CUH

#include <stdint.h>

struct topk_row_span {
  int64_t start; /* first element, in elements from the input */
  int64_t len;
};

__device__ __forceinline__ topk_row_span topk_row(const int64_t* offsets, int64_t n, int64_t ld, int64_t r) {
  topk_row_span s;
  if (offsets) {
    int64_t b = offsets[r], e = offsets[r + 1];
    b = b < 0 ? 0 : (b > n ? n : b);
    e = e < b ? b : (e > n ? n : e);
    s.start = b;
    s.len = e - b;
  } else {
    s.start = r * ld;
    s.len = n;
  }
  return s;
}

#endif /* TOPK_CUDA_COMMON_ROWS_CUH */
