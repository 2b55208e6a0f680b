/* PLACEHOLDER: being written. */
#include "algo.h"
static int supports(const topk_problem* p, const topk_device_info* d, char* why, size_t n) { return 0; }
static topk_status ws(const topk_problem* p, const topk_device_info* d, size_t* b) { *b = 0; return TOPK_SUCCESS; }
static topk_status run(const topk_args* a, void* w, size_t wb, topk_stream s) { return TOPK_ERR_INTERNAL; }
extern "C" const topk_algo_ops topk_algo_cuda_sort = {"sort", TOPK_ALGO_SORT, TOPK_BACKEND_CUDA, supports, ws, run};
