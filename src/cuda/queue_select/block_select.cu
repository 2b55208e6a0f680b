/*
 * block_select.cu: BlockSelect (paper 004 sec. 4; Faiss BlockSelect), the ops
 * entry. One block per row: each warp keeps its own register queue (thread queues
 * + warp queue of CAP = k rounded up to a power of two, 32..2048) over a strided
 * part of the row, read in 16-byte vectors; the warps' queues are merged in shared
 * memory. Kernels in queue_select_kernels.cuh. Best when there are enough rows to
 * fill the GPU with one block each; no workspace, one launch.
 */
#include "queue_select.h"

static int block_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)dev;
  return qs_supports_common("block_select", p, why, why_len);
}

static topk_status block_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  (void)p;
  (void)dev;
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  *bytes = 0;
  return TOPK_SUCCESS;
}

static topk_status block_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  (void)workspace;
  (void)workspace_bytes;
  static const qs_launch_fn table[QS_NUM_CAPS][3] = QS_TABLE(qs_launch_block);
  const int b = qs_bucket(a->p.k);
  TOPK_RETURN_IF(b < 0, TOPK_ERR_UNSUPPORTED, "block_select: k=%lld exceeds %d", (long long)a->p.k, QS_MAX_CAP);
  const qs_params P = qs_fill_params(a);
  return table[b][qs_width_col(a->p.dtype)](P, (cudaStream_t)stream);
}

extern "C" const topk_algo_ops topk_algo_block_select = {"block_select", TOPK_ALGO_BLOCK_SELECT, TOPK_BACKEND_CUDA,
                                                         block_supports, block_workspace_size, block_run};
