/*
 * choose.c: the algorithm TOPK_ALGO_AUTO runs.
 *
 * CPU: the threaded radix selection (cpu_select), which handles every problem.
 * CUDA: AIR Top-K wherever it supports the problem, except one measured corner, else
 * sort-and-choose. The measurements (H100, `topk bench`, bench/results/):
 *   - h100_quick.csv: AIR faster than sort in all 17 cases (1.05x to 28x);
 *   - h100_figk.csv, h100_fign.csv (batch 1, f32, n 2^12..2^28, k 8..2^19): AIR faster or
 *     equal in all 45 cases (1.00x to 4.9x);
 *   - h100_llm.csv (96 cases): AIR faster in 79; sort faster in all 12 cases of bf16 at
 *     batch 1 (n 32000..262144: sort 0.041-0.047 ms, AIR 0.070-0.083 ms: AIR's fixed cost
 *     of several launches dominates such small inputs), and by 1-14 % in 5 more (f32 batch 1
 *     k = 1024; bf16 16 and 64 rows of 32000, k = 1024), left to AIR.
 * So 16-bit keys in one row of at most 2^18 elements go to sort: the measured range, no
 * further. The measured table over every family replaces these rules once more GPU
 * families are built (issue: TOPK_ALGO_AUTO).
 */
#include "algo.h"
#include "common/keys.h"

const topk_algo_ops* topk_choose(const topk_problem* p, topk_backend backend, const topk_device_info* dev) {
  if (backend == TOPK_BACKEND_CPU) return &topk_algo_cpu_select;
  char why[8];
  /* max_iter > 0 asks for RTop-K's early stopping: its algorithm where it supports the shape;
   * elsewhere the exact result (which the approximate contract allows). */
  const topk_algo_ops* rtopk = topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_RTOPK);
  if (p->max_iter > 0 && rtopk && rtopk->supports(p, dev, why, sizeof why)) return rtopk;
  const topk_algo_ops* sort = topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_SORT);
  if (topk_key_bits(p->dtype) == 16 && p->batch == 1 && !p->row_offsets && p->n <= (1 << 18)) return sort;
  const topk_algo_ops* air = topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_AIR_RADIX);
  if (air && air->supports(p, dev, why, sizeof why)) return air;
  return sort;
}
