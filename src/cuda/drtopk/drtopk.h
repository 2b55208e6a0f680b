/*
 * drtopk.h: internal (not public API) access to the Dr. Top-k delegate layer's
 * workload, for bench/drtopk_workload.c (paper 000 Fig. 20/21, the alpha sweep and
 * the delegate-construction bandwidth).
 */
#ifndef TOPK_CUDA_DRTOPK_H
#define TOPK_CUDA_DRTOPK_H

#include <stdint.h>

#include "topk.h"
#include "../../drtopk_rule4.h" /* topk_drtopk_rule4_alpha */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topk_drtopk_stats {
  int     delegate_path;  /* 0: the plain base ran on the whole input (64-bit keys, or no gain) */
  int     alpha, beta;    /* subrange size 2^alpha, delegates per subrange */
  int     build_smem;     /* 1: the shared-memory delegate kernel; 0: warp-centric */
  int64_t n_total;        /* elements of all rows */
  int64_t delegate_size;  /* delegates of all rows (subranges x beta) */
  int64_t concat_size;    /* concatenated elements of all rows (read back from the device) */
  int64_t full_subranges_bound; /* capacity per row B = (k / beta + 1) * 2^alpha + k */
  /* milliseconds per step (CUDA events; the device is synchronised at the end) */
  float   ms_delegates, ms_first, ms_threshold, ms_concat, ms_second, ms_emit, ms_total;
  /* the delegate kernel alone: 10 launches back to back before the run, ms per launch
   * (ms_delegates also holds the prep kernel and the gaps before the first launches) */
  float   ms_delegate_kernel;
} topk_drtopk_stats;

/*
 * Runs one problem on the device (p->algo: TOPK_ALGO_DRTOPK_RADIX, _BUCKET or
 * _BITONIC; uniform rows; in, out_values, out_indices in device memory) step by step
 * with CUDA events, allocating its own workspace, and fills st. Blocks.
 * Honours TOPK_DRTOPK_ALPHA / _BETA / _RULE4_C / _BUILD like topk_select.
 */
topk_status topk_drtopk_workload(const topk_problem* p, const void* in, void* out_values, void* out_indices,
                                 topk_drtopk_stats* st);


#ifdef __cplusplus
}
#endif
#endif /* TOPK_CUDA_DRTOPK_H */
