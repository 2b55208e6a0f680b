/* PLACEHOLDER: being written. */
#include "algo.h"
static int supports(const topk_problem* p, const topk_device_info* d, char* why, size_t n) { (void)p; (void)d; (void)why; (void)n; return 0; }
static topk_status ws(const topk_problem* p, const topk_device_info* d, size_t* b) { (void)p; (void)d; *b = 0; return TOPK_SUCCESS; }
static topk_status run(const topk_args* a, void* w, size_t wb, topk_stream s) { (void)a; (void)w; (void)wb; (void)s; return TOPK_ERR_INTERNAL; }
const topk_algo_ops topk_algo_cpu_select = {"x", TOPK_ALGO_CPU_SELECT, TOPK_BACKEND_CPU, supports, ws, run};
