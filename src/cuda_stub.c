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

/* topk.h section 6 without CUDA: every helper reports no device; destroy/free of NULL succeed. */
topk_status topk_device_malloc(void** ptr, size_t bytes) { (void)bytes; if (ptr) *ptr = NULL; return no_cuda(); }
topk_status topk_device_free(void* ptr) { return ptr ? no_cuda() : TOPK_SUCCESS; }
topk_status topk_memcpy_to_device(void* d, const void* s, size_t b) { (void)d; (void)s; (void)b; return no_cuda(); }
topk_status topk_memcpy_to_host(void* d, const void* s, size_t b) { (void)d; (void)s; (void)b; return no_cuda(); }
topk_status topk_memset_device(void* d, int v, size_t b, topk_stream s) { (void)d; (void)v; (void)b; (void)s; return no_cuda(); }
topk_status topk_device_synchronize(void) { return no_cuda(); }
topk_status topk_event_create(topk_event** e) { if (e) *e = NULL; return no_cuda(); }
topk_status topk_event_record(topk_event* e, topk_stream s) { (void)e; (void)s; return no_cuda(); }
topk_status topk_event_elapsed_ms(topk_event* a, topk_event* b, float* ms) { (void)a; (void)b; (void)ms; return no_cuda(); }
void topk_event_destroy(topk_event* e) { (void)e; }
topk_status topk_stream_create(topk_stream* s) { if (s) *s = NULL; return no_cuda(); }
void topk_stream_destroy(topk_stream s) { (void)s; }
topk_status topk_stream_synchronize(topk_stream s) { (void)s; return no_cuda(); }
