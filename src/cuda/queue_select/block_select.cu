/*
 * block_select.cu: BlockSelect (paper 004 sec. 4; Faiss BlockSelect), the ops
 * entry. One block per row: each warp keeps its own register queue (thread queues
 * + warp queue of CAP = k rounded up to a bucket, 32..2048) over a strided
 * part of the row, read in 16-byte vectors; the warps' queues are merged in shared
 * memory. Kernels in queue_select_kernels.cuh. k = 2049..8192: one queue per block in
 * shared memory instead (CAP 4096 or 8192; smem_queue_kernels.cuh). Best when there
 * are enough rows to fill the GPU with one block each; no workspace, one launch.
 */
#include "queue_select.h"

static int block_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)dev;
  return qs_supports_common("block_select", p, QS_SMEM_MAX_CAP, why, why_len);
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
  static const qs_launch_fn smem_table[QS_SMEM_NUM_CAPS][3] = {QS_TABLE_ROW_(qs_launch_block_smem, 4096),
                                                               QS_TABLE_ROW_(qs_launch_block_smem, 8192)};
  TOPK_RETURN_IF(a->p.k > QS_SMEM_MAX_CAP, TOPK_ERR_UNSUPPORTED, "block_select: k=%lld exceeds %d",
                 (long long)a->p.k, QS_SMEM_MAX_CAP);
  const qs_params P = qs_fill_params(a);
  const int col = qs_width_col(a->p.dtype);
  static const int smem_caps[QS_SMEM_NUM_CAPS] = QS_SMEM_CAPS;
  if (a->p.k > QS_MAX_CAP) return smem_table[a->p.k > smem_caps[0] ? 1 : 0][col](P, (cudaStream_t)stream);
  return table[qs_bucket(a->p.k)][col](P, (cudaStream_t)stream);
}

extern "C" const topk_algo_ops topk_algo_block_select = {"block_select", TOPK_ALGO_BLOCK_SELECT, TOPK_BACKEND_CUDA,
                                                         block_supports, block_workspace_size, block_run};
