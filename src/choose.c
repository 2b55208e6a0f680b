/*
 * choose.c: the algorithm TOPK_ALGO_AUTO runs.
 *
 * CPU: the threaded radix selection (cpu_select), which handles every problem.
 * CUDA: rules, each backed by a measurement on the H100 (`topk bench`, bench/results/) and
 * applied only inside the range that was measured; elsewhere AIR Top-K, which supports
 * every problem. A generated table over every family replaces these rules in the AUTO
 * issue. In order:
 *   1. max_iter > 0 (RTop-K early stopping requested): rtopk where it supports the shape,
 *      else the exact result, which the approximate contract allows.
 *   2. one row, keys of at most 32 bits, drtopk_radix for n >= 2^24 and k <= 2^12,
 *      n >= 2^26 and k <= 2^18, n >= 2^29 and k <= 2^20. h100_drtopk_cut.csv (n 2^24, 2^27,
 *      2^30, k 4^0..4^10, UD/ND/CD): it beats AIR in every such case (2^30: 1.45-2.99 ms
 *      against 4.4-7.2 ms; 2^27, k = 2^18: 0.55 ms against 0.68-0.98); AIR wins at 2^27,
 *      k = 2^20 and at 2^24 from k = 2^14 (normal, CD). h100_targets_single_drtopk_s3.csv:
 *      radix-adversarial at 2^30, 1.48-1.59 ms.
 *   3. 2^16..2^20 rows of 64..1024 elements, k <= 128: rtopk. h100_targets_rowwise.csv,
 *      h100_targets_moe.csv: 1.4-3.5x faster than AIR in all 15 cases.
 *   4. 10^4 rows or more of 1000..128000 elements, k <= 1000: warp_select.
 *      h100_targets_faiss.csv: 1.3-4.9x faster than AIR in all 4 cases (k = 2048, the dsa
 *      shape, stays with AIR: h100_targets_dsa.csv, 6.3 ms against 23.5 ms).
 *   5. LLM greedy sampling: f32, k = 1, batch <= 8, rows of 151937..262144 (uniform
 *      rows): grid_select. h100_latency_llm_{air_radix,auto}_s7.csv (bench/latency, one
 *      device call, AIR's cluster kernel after its session-7 rework): at 262144
 *      grid_select takes 19.2-19.6 us against AIR's 21.1-21.3 us (batch 1-8); at 151936
 *      the two are within 2 %; at 128256 AIR is now 5-7 % faster (18.1-18.2 against
 *      19.1-19.5 us), so the rule no longer starts there (session 6 measured grid_select
 *      9-22 % faster over 128256..262144, before the rework). At 32000 AIR is faster from
 *      batch 4, and for bf16 the two are within 2.6 % (session 6).
 *   6. otherwise AIR Top-K, else sort. (A rule sending one 16-bit row of at most 2^18 to
 *      sort, from session 1's h100_llm.csv, was dropped: AIR's cluster path now takes
 *      16.7-18.3 us on bf16 rows of 32000..262144 (batch 2..8) where sort took 35-44 us
 *      for one row, h100_latency_llm.csv.)
 */
#include "algo.h"
#include "common/keys.h"

/* The entry for algo on CUDA if it is built and supports p, else NULL. */
static const topk_algo_ops* if_supported(topk_algo algo, const topk_problem* p, const topk_device_info* dev) {
  const topk_algo_ops* ops = topk_algo_find(TOPK_BACKEND_CUDA, algo);
  char why[8];
  return ops && ops->supports(p, dev, why, sizeof why) ? ops : 0;
}

const topk_algo_ops* topk_choose(const topk_problem* p, topk_backend backend, const topk_device_info* dev) {
  if (backend == TOPK_BACKEND_CPU) return &topk_algo_cpu_select;
  const topk_algo_ops* ops = 0;
  const int key_bits = topk_key_bits(p->dtype);
  const int uniform_rows = p->row_offsets == 0;
  if (p->max_iter > 0 && (ops = if_supported(TOPK_ALGO_RTOPK, p, dev))) return ops;
  const int64_t dr_kmax = p->n >= ((int64_t)1 << 29)   ? ((int64_t)1 << 20)
                         : p->n >= ((int64_t)1 << 26) ? ((int64_t)1 << 18)
                                                      : ((int64_t)1 << 12);
  if (p->batch == 1 && uniform_rows && key_bits <= 32 && p->n >= ((int64_t)1 << 24) && p->k <= dr_kmax &&
      (ops = if_supported(TOPK_ALGO_DRTOPK_RADIX, p, dev)))
    return ops;
  if (uniform_rows && p->batch >= ((int64_t)1 << 16) && p->batch <= ((int64_t)1 << 20) && p->n >= 64 && p->n <= 1024 && p->k <= 128 &&
      (ops = if_supported(TOPK_ALGO_RTOPK, p, dev)))
    return ops;
  if (uniform_rows && p->batch >= 10000 && p->n >= 1000 && p->n <= 128000 && p->k <= 1000 &&
      (ops = if_supported(TOPK_ALGO_WARP_SELECT, p, dev)))
    return ops;
  if (uniform_rows && p->dtype == TOPK_F32 && p->k == 1 && p->batch <= 8 && p->n > 151936 && p->n <= 262144 &&
      (ops = if_supported(TOPK_ALGO_GRID_SELECT, p, dev)))
    return ops;
  const topk_algo_ops* sort = topk_algo_find(TOPK_BACKEND_CUDA, TOPK_ALGO_SORT);
  if ((ops = if_supported(TOPK_ALGO_AIR_RADIX, p, dev))) return ops;
  return sort;
}
