/*
 * grid_select.cu: GridSelect (paper 003 sec. 4), the ops entry: blocks per row,
 * workspace and launch. Each warp buffers candidates in a shared queue of 32 (two-
 * step insertion by ballot, 003 Fig. 5) in front of its register warp queue; the
 * block's warps merge in shared memory. When the rows are too few to fill the GPU,
 * each row is split over bpr blocks that write their best k (pairs) to the
 * workspace, and a merge kernel (a block select over the bpr x k candidates)
 * writes the outputs, so one long row uses the whole GPU.
 *
 * Blocks per row (a function of the shape and the device only, so workspace_size
 * and run agree):
 *   bpr = 1 when batch >= GRID_TARGET_PER_SM x SMs; otherwise
 *   bpr = min(GRID_TARGET_PER_SM x SMs / batch,            fill the GPU once
 *             ceil(row length / max(GRID_MIN_ELEMS, 16 k)), enough work per block
 *             max(1, GRID_MAX_CAND / k))                   bounded candidates per row
 * Workspace (bpr > 1 only): batch x bpr x k pairs of 8 bytes (16-bit and 32-bit
 * keys) or 16 bytes (64-bit keys), plus 255 bytes for alignment. Since bpr > 1 only
 * when batch x bpr <= GRID_TARGET_PER_SM x SMs, it is at most 4 x 132 x 2048 x 16
 * bytes (~17 MB) on an H100.
 *
 * k = 1 with bpr > 1 and rows of at most GRID_TOP1_MAX_ELEMS (greedy decoding's
 * argmax over a few vocabulary-sized rows) is one launch with no workspace instead: a
 * cluster of cs blocks per row whose best pairs meet in rank 0's shared memory
 * (qs_grid_top1_kernel), cs = min(QS_TOP1_MAX_CLUSTER, SMs / batch, ceil(row length /
 * GRID_TOP1_ELEMS)), at least 1. Longer rows keep the bpr blocks and the merge, which
 * read with the whole GPU. TOPK_GRID_TOP1_MAX=N (environment, read at every call; for
 * measurement) moves that bound; 0 turns the cluster path off.
 */
#include "../common/workspace.h"
#include "queue_select.h"
#include "grid_top1.cuh"

#include <stdlib.h>
#include <string.h>

static const int64_t GRID_TARGET_PER_SM = 4;   /* blocks per SM the split aims at */
static const int64_t GRID_MIN_ELEMS = 16384;   /* elements per block at least */
static const int64_t GRID_MAX_CAND = 1 << 18;  /* candidates per row at most (the merge is one block) */
static const int64_t GRID_TOP1_ELEMS = 4096;   /* k = 1 clusters: elements per block at least */
static const int64_t GRID_TOP1_MAX_ELEMS = 1 << 20; /* k = 1 clusters: rows of at most this */

static int64_t grid_top1_max(void) {
  const char* s = topk_env("TOPK_GRID_TOP1_MAX");
  const long long v = s && *s ? atoll(s) : -1;
  return v >= 0 ? (int64_t)v : GRID_TOP1_MAX_ELEMS;
}

static int64_t grid_bpr(const topk_problem* p, const topk_device_info* dev) {
  const int64_t sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
  const int64_t target = GRID_TARGET_PER_SM * sms;
  if (p->batch <= 0 || p->batch >= target || p->k <= 0) return 1;
  const int64_t len = p->row_offsets ? p->n / p->batch : p->n;
  const int64_t per = GRID_MIN_ELEMS > 16 * p->k ? GRID_MIN_ELEMS : 16 * p->k;
  int64_t bpr = target / p->batch;
  const int64_t by_work = (len + per - 1) / per;
  const int64_t by_cand = GRID_MAX_CAND / p->k > 1 ? GRID_MAX_CAND / p->k : 1;
  if (bpr > by_work) bpr = by_work;
  if (bpr > by_cand) bpr = by_cand;
  return bpr < 1 ? 1 : bpr;
}

/*
 * Blocks per cluster of the k = 1 path; 0 where it does not apply: k > 1, bpr = 1, rows
 * longer than the bound, or a device without thread-block clusters (before Hopper).
 */
static int grid_top1_cs(const topk_problem* p, const topk_device_info* dev, int64_t bpr) {
  if (p->k != 1 || bpr <= 1 || (dev && dev->cc_major < 9)) return 0;
  const int64_t sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
  const int64_t len = p->row_offsets ? p->n / p->batch : p->n;
  if (len > grid_top1_max()) return 0;
  int64_t cs = (len + GRID_TOP1_ELEMS - 1) / GRID_TOP1_ELEMS;
  if (cs > sms / p->batch) cs = sms / p->batch;
  if (cs > QS_TOP1_MAX_CLUSTER) cs = QS_TOP1_MAX_CLUSTER;
  return cs < 1 ? 1 : (int)cs;
}

static size_t grid_bytes(const topk_problem* p, const topk_device_info* dev) {
  const int64_t bpr = grid_bpr(p, dev);
  if (bpr <= 1 || grid_top1_cs(p, dev, bpr) > 0) return 0;
  const size_t pair = topk_key_bits(p->dtype) == 64 ? 16 : 8;
  return (size_t)p->batch * (size_t)bpr * (size_t)p->k * pair + (TOPK_WS_ALIGN - 1);
}

static int grid_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)dev;
  return qs_supports_common("grid_select", p, QS_MAX_CAP, why, why_len);
}

static topk_status grid_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  *bytes = grid_bytes(p, dev);
  return TOPK_SUCCESS;
}

static topk_status grid_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  static const qs_launch_fn table[QS_NUM_CAPS][3] = QS_TABLE(qs_launch_grid);
  const int b = qs_bucket(a->p.k);
  TOPK_RETURN_IF(b < 0, TOPK_ERR_UNSUPPORTED, "grid_select: k=%lld exceeds %d", (long long)a->p.k, QS_MAX_CAP);
  const size_t need = grid_bytes(&a->p, a->dev);
  TOPK_RETURN_IF(need > 0 && (!workspace || workspace_bytes < need), TOPK_ERR_WORKSPACE,
                 "grid_select: workspace of %zu bytes given, %zu needed", workspace ? workspace_bytes : (size_t)0,
                 need);
  qs_params P = qs_fill_params(a);
  P.bpr = grid_bpr(&a->p, a->dev);
  const int cs = grid_top1_cs(&a->p, a->dev, P.bpr);
  if (cs > 0) {
    switch (qs_width_col(a->p.dtype)) {
      case 0: return qs_launch_grid_top1<16>(P, cs, (cudaStream_t)stream);
      case 1: return qs_launch_grid_top1<32>(P, cs, (cudaStream_t)stream);
      default: return qs_launch_grid_top1<64>(P, cs, (cudaStream_t)stream);
    }
  }
  P.cand = need > 0 ? (void*)topk_ws_base(workspace) : NULL;
  return table[b][qs_width_col(a->p.dtype)](P, (cudaStream_t)stream);
}

extern "C" const topk_algo_ops topk_algo_grid_select = {"grid_select", TOPK_ALGO_GRID_SELECT, TOPK_BACKEND_CUDA,
                                                        grid_supports, grid_workspace_size, grid_run};
