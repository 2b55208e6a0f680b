/*
 * select_basic.c: the README's example, built and run by ctest.
 * The 3 largest of 8 floats, with their indices, on the CPU; and, when a CUDA
 * device is present, the same on the GPU with a caller-owned workspace.
 */
#include <math.h>
#include <stdio.h>

#include "topk.h"

int main(void) {
  /* example-begin select-basic */
  const float x[8] = {0.5f, -1.0f, NAN, 3.0f, 3.0f, -0.0f, 0.0f, 2.5f};
  float values[3];
  int64_t indices[3];
  topk_problem p = {.batch = 1, .n = 8, .k = 3, .flags = TOPK_SORTED}; /* largest, int64 indices */
  topk_status s = topk_select(&p, x, values, indices, NULL, 0, NULL);  /* host pointers: CPU backend */
  if (s != TOPK_SUCCESS) {
    fprintf(stderr, "topk_select: %s: %s\n", topk_status_name(s), topk_error_detail());
    return 1;
  }
  for (int i = 0; i < 3; ++i) printf("%g at %lld\n", values[i], (long long)indices[i]);
  /* prints: nan at 2, 3 at 3, 3 at 4  (NaN is the largest; ties in index order) */
  /* example-end select-basic */
  if (!(isnan(values[0]) && indices[0] == 2 && values[1] == 3.0f && indices[1] == 3 && indices[2] == 4)) {
    fprintf(stderr, "unexpected result\n");
    return 1;
  }

  if (!topk_cuda_available()) {
    printf("no CUDA device: GPU part skipped\n");
    return 0;
  }
  /* example-begin select-cuda */
  void *d_x, *d_values, *d_indices, *d_workspace;
  size_t workspace_bytes = 0;
  p.backend = TOPK_BACKEND_CUDA;
  if (topk_workspace_size(&p, &workspace_bytes) != TOPK_SUCCESS ||
      topk_device_malloc(&d_x, sizeof x) != TOPK_SUCCESS ||
      topk_device_malloc(&d_values, sizeof values) != TOPK_SUCCESS ||
      topk_device_malloc(&d_indices, sizeof indices) != TOPK_SUCCESS ||
      topk_device_malloc(&d_workspace, workspace_bytes) != TOPK_SUCCESS ||
      topk_memcpy_to_device(d_x, x, sizeof x) != TOPK_SUCCESS) {
    fprintf(stderr, "setup: %s\n", topk_error_detail());
    return 1;
  }
  s = topk_select(&p, d_x, d_values, d_indices, d_workspace, workspace_bytes, NULL); /* asynchronous */
  if (s == TOPK_SUCCESS) s = topk_memcpy_to_host(values, d_values, sizeof values);     /* waits */
  if (s == TOPK_SUCCESS) s = topk_memcpy_to_host(indices, d_indices, sizeof indices);
  /* example-end select-cuda */
  topk_device_free(d_x);
  topk_device_free(d_values);
  topk_device_free(d_indices);
  topk_device_free(d_workspace);
  if (s != TOPK_SUCCESS) {
    fprintf(stderr, "GPU: %s: %s\n", topk_status_name(s), topk_error_detail());
    return 1;
  }
  for (int i = 0; i < 3; ++i) printf("gpu: %g at %lld\n", values[i], (long long)indices[i]);
  return (isnan(values[0]) && indices[0] == 2 && indices[1] == 3 && indices[2] == 4) ? 0 : 1;
}
