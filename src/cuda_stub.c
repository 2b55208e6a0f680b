/*
 * cuda_stub.c: the CUDA runtime helpers of a CPU-only build. Every one reports
 * that no device exists, so the API answers TOPK_ERR_NO_DEVICE for CUDA requests.
 */
#include "algo.h"

int topk_cuda_built(void) { return 0; }
int topk_cuda_device_count_(void) { return 0; }
static topk_status no_cuda(void) { return topk_fail(TOPK_ERR_NO_DEVICE, "libtopk was built without CUDA"); }
topk_status topk_cuda_device_info(int ordinal, topk_device_info* info) { (void)ordinal; (void)info; return no_cuda(); }
topk_status topk_cuda_get_device(int* ordinal) { (void)ordinal; return no_cuda(); }
topk_status topk_cuda_set_device(int ordinal, int* previous) { (void)ordinal; (void)previous; return no_cuda(); }
int topk_cuda_is_device_pointer(const void* ptr) { (void)ptr; return 0; }
topk_status topk_cuda_alloc_async(void** ptr, size_t bytes, topk_stream s) { (void)ptr; (void)bytes; (void)s; return no_cuda(); }
topk_status topk_cuda_free_async(void* ptr, topk_stream s) { (void)ptr; (void)s; return no_cuda(); }
topk_status topk_cuda_props(int ordinal, topk_device_props* props) { (void)ordinal; (void)props; return no_cuda(); }
topk_status topk_cuda_read_bandwidth(double* bps) { (void)bps; return no_cuda(); }
const char* topk_cuda_build_info(void) { return "cuda=off"; }
