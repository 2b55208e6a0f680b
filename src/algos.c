/*
 * algos.c: the table of every built algorithm. The CLI's --algo list, the
 * benchmark and the differential tests all iterate over this one table.
 */
#include "algo.h"

static const topk_algo_ops* const all_[] = {
    &topk_algo_cpu_reference,
    &topk_algo_cpu_select,
#ifdef TOPK_WITH_CUDA
    &topk_algo_cuda_sort,
    &topk_algo_air_radix,
    &topk_algo_bitonic, &topk_algo_bucket, &topk_algo_drtopk_radix, &topk_algo_drtopk_bucket, &topk_algo_drtopk_bitonic,
    &topk_algo_warp_select, &topk_algo_block_select, &topk_algo_grid_select,
    &topk_algo_rtopk,
#endif
};

const topk_algo_ops* const* topk_algo_all(int* count) {
  *count = (int)(sizeof all_ / sizeof all_[0]);
  return all_;
}

const topk_algo_ops* topk_algo_find(topk_backend backend, topk_algo algo) {
  for (unsigned i = 0; i < sizeof all_ / sizeof all_[0]; ++i)
    if (all_[i]->backend == backend && all_[i]->algo == algo) return all_[i];
  return 0;
}
