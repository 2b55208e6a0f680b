/*
 * choose.c: the algorithm TOPK_ALGO_AUTO runs.
 *
 * Today each backend has one general algorithm that handles every problem: the
 * threaded radix selection on the CPU and sort-and-choose on CUDA. The measured
 * table that maps (key width, batch, n, k) to the fastest family replaces this
 * once more than one GPU family is built (issue: TOPK_ALGO_AUTO).
 */
#include "algo.h"

const topk_algo_ops* topk_choose(const topk_problem* p, topk_backend backend, const topk_device_info* dev) {
  (void)p;
  (void)dev;
  return backend == TOPK_BACKEND_CPU ? &topk_algo_cpu_select : topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_SORT);
}
