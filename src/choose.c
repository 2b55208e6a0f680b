/*
 * choose.c: the algorithm TOPK_ALGO_AUTO runs.
 *
 * CPU: the threaded radix selection (cpu_select), which handles every problem.
 * CUDA: AIR Top-K wherever it supports the problem, else sort-and-choose. The rule
 * rests on bench/results/h100_quick.csv (`topk bench --suite quick`, H100): AIR Top-K
 * was faster than the sort baseline in all 17 cases of the quick suite, from 1.06x
 * (batch 1, n = 2^20, radix-adversarial) to 25x (2^16 rows of 512). The measured
 * table that maps (key width, batch, n, k) to the fastest family replaces this rule
 * once more GPU families are built (issue: TOPK_ALGO_AUTO).
 */
#include "algo.h"

const topk_algo_ops* topk_choose(const topk_problem* p, topk_backend backend, const topk_device_info* dev) {
  if (backend == TOPK_BACKEND_CPU) return &topk_algo_cpu_select;
  const topk_algo_ops* air = topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_AIR_RADIX);
  char why[8];
  if (air && air->supports(p, dev, why, sizeof why)) return air;
  return topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_SORT);
}
