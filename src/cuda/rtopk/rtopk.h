/*
 * rtopk.h: an internal (non-public) entry point of RTop-K for measurement
 * (bench/rtopk_accuracy.c: the paper's Table 1, iterations to exit).
 */
#ifndef TOPK_CUDA_RTOPK_H
#define TOPK_CUDA_RTOPK_H

#include "topk.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Runs RTop-K on a problem whose fields are already valid (as topk_select would
 * accept; algo and backend are ignored; device pointers; uniform rows or device
 * row_offsets) and also writes each row's number of binary-search steps to
 * iters[0 .. batch) (device memory, int32). Exact mode when p->max_iter == 0, else
 * early stopping. Asynchronous on the stream. @return as topk_select.
 */
topk_status rtopk_select_iters(const topk_problem* p, const void* in, void* values, void* indices, int* iters,
                               topk_stream stream);

#ifdef __cplusplus
}
#endif
#endif /* TOPK_CUDA_RTOPK_H */
