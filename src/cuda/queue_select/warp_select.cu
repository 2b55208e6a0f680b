/*
 * warp_select.cu: WarpSelect (paper 004 sec. 4; Faiss WarpSelect), the ops entry.
 * One warp per row keeps the row's best CAP (k rounded up to a bucket of queue_select.h,
 * 32..2048) in a register warp queue fed by per-lane thread queues; kernels in
 * queue_select_kernels.cuh, queues and merge networks in topk_device/merge.cuh.
 * Best for many short or medium rows; no workspace, one launch.
 */
#include "queue_select.h"

static int warp_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)dev;
  return qs_supports_common("warp_select", p, QS_MAX_CAP, why, why_len);
}

static topk_status warp_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  (void)p;
  (void)dev;
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  *bytes = 0;
  return TOPK_SUCCESS;
}

static topk_status warp_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  (void)workspace;
  (void)workspace_bytes;
  static const qs_launch_fn table[QS_NUM_CAPS][3] = QS_TABLE(qs_launch_warp);
  const int b = qs_bucket(a->p.k);
  TOPK_RETURN_IF(b < 0, TOPK_ERR_UNSUPPORTED, "warp_select: k=%lld exceeds %d", (long long)a->p.k, QS_MAX_CAP);
  const qs_params P = qs_fill_params(a);
  return table[b][qs_width_col(a->p.dtype)](P, (cudaStream_t)stream);
}

extern "C" const topk_algo_ops topk_algo_warp_select = {"warp_select", TOPK_ALGO_WARP_SELECT, TOPK_BACKEND_CUDA,
                                                        warp_supports, warp_workspace_size, warp_run};
