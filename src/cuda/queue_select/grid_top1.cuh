/*
 * grid_top1.cuh: GridSelect at k = 1 in one launch (grid_select.cu includes it; the
 * queue kernels' row, vector and output helpers are queue_select_kernels.cuh's).
 */
#ifndef TOPK_QUEUE_SELECT_GRID_TOP1_CUH
#define TOPK_QUEUE_SELECT_GRID_TOP1_CUH

#include <string.h>

#include <cooperative_groups.h>

#include "queue_select_kernels.cuh"

/*
 * GridSelect at k = 1 when a row is split (bpr > 1) and not long: one launch, no
 * workspace. A row is a thread-block cluster of `parts` blocks (at most
 * QS_TOP1_MAX_CLUSTER, a portable size); each block reduces its part of the row to its
 * best pair (thread, warp shuffles, block), stores it into rank 0's shared memory
 * through DSMEM (after a split barrier that only proves every block started: arrived
 * at entry, waited on before the store), and after one cluster barrier rank 0's first
 * warp reduces the parts' pairs and writes the output. The two launches and the workspace round trip of the
 * bpr > 1 path were the fixed cost of greedy decoding's shapes (batch 1..8 x
 * vocabulary 32000..262144): 15-19 us per call, now 4.7-9.3 us (docs/BENCHMARKS.md).
 * Ties: the pair order (larger key, then smaller index) makes the lowest index win.
 */
enum { QS_TOP1_THREADS = 1024, QS_TOP1_MAX_CLUSTER = 8, QS_TOP1_UNROLL = 8 };

template <int KB>
__device__ __forceinline__ topk_dq_pair<KB> qs_warp_best(topk_dq_pair<KB> b) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) {
    const topk_dq_pair<KB> o = topk_dq_ops<KB>::shfl_xor(b, m);
    if (topk_dq_ops<KB>::better(o, b)) b = o;
  }
  return b;
}

/*
 * The kernel reads its part in rounds of QS_TOP1_UNROLL 16-byte vectors per thread, all
 * loads of a round in flight before any compare (128 KB per block): the loop is bound by
 * DRAM / L2 round trips, one per round, so a part of up to 128 KB is one round trip.
 * Head and tail elements (before the first / after the last whole vector) go to part 0.
 */
template <int KB>
__global__ void __launch_bounds__(QS_TOP1_THREADS) qs_grid_top1_kernel(const qs_params P) {
  typedef topk_dq_ops<KB> O;
  typedef typename topk_key_of_width<KB>::type U;
  enum { NW = QS_TOP1_THREADS / 32, ES = KB / 8, VE = 16 / ES, UN = QS_TOP1_UNROLL };
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const unsigned part = cluster.block_rank(), parts = cluster.num_blocks();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row = P.row0 + (int64_t)blockIdx.y;
  __shared__ topk_dq_pair<KB> s_warp[NW];
  __shared__ topk_dq_pair<KB> s_part[QS_TOP1_MAX_CLUSTER]; /* rank 0's: each block's best */
  /* DSMEM may be written only once every block of the cluster runs: arrive now, wait before
   * the store into rank 0 (by then every block has long started, so the wait costs nothing). */
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  int64_t start;
  uint32_t len;
  qs_row(P, row, start, len);
  const char* rp = (const char*)P.in + start * ES;
  const qs_row_split rs = qs_split_row<KB>(rp, len, part, parts);
  const uint32_t head = rs.head, nvec = rs.nvec, tail = rs.tail, vb = rs.vb, ve = rs.ve;
  const uint4* vp = (const uint4*)(rp + (size_t)head * ES);
  topk_dq_pair<KB> b = O::worst();
  for (uint32_t v0 = vb; v0 < ve; v0 += QS_TOP1_THREADS * UN) {
    uint4 x[UN];
#pragma unroll
    for (int u = 0; u < UN; ++u) {
      const uint32_t v = v0 + (uint32_t)(u * QS_TOP1_THREADS) + threadIdx.x;
      x[u] = v < ve ? __ldg(vp + v) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < UN; ++u) {
      const uint32_t v = v0 + (uint32_t)(u * QS_TOP1_THREADS) + threadIdx.x;
      if (v < ve) {
#pragma unroll
        for (int j = 0; j < VE; ++j) {
          const topk_dq_pair<KB> e = O::make(topk_dq_rank_key<U>(qs_vec_elem<KB>(x[u], j), P.kp), head + v * VE + j);
          if (O::better(e, b)) b = e;
        }
      }
    }
  }
  if (part == 0 && threadIdx.x < head + tail) {
    const uint32_t i = threadIdx.x < head ? threadIdx.x : head + nvec * VE + (threadIdx.x - head);
    const topk_dq_pair<KB> e = O::make(topk_dq_rank_key<U>(((const U*)rp)[i], P.kp), i);
    if (O::better(e, b)) b = e;
  }
  b = qs_warp_best<KB>(b);
  if (lane == 0) s_warp[warp] = b;
  __syncthreads();
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); /* every block of the cluster has started */
  if (warp == 0) {
    b = qs_warp_best<KB>(s_warp[lane]); /* NW == 32 */
    if (lane == 0) *cluster.map_shared_rank(&s_part[part], 0u) = b;
  }
  cluster.sync(); /* every part's pair is in rank 0's s_part; no block reads another after this */
  if (part != 0 || warp != 0) return;
  topk_dq_pair<KB> w[1] = {qs_warp_best<KB>((unsigned)lane < parts ? s_part[lane] : O::worst())};
  qs_write_out<KB, 1>(P, row, start, w, lane); /* lane 0: the row's one slot (k = 1) */
}

/* GridSelect at k = 1 with bpr > 1: clusters of cs blocks, one per row (see the kernel). */
template <int KB> topk_status qs_launch_grid_top1(const qs_params& P0, int cs, cudaStream_t stream) {
  qs_params P = P0;
  const int64_t chunk = 65535; /* gridDim.y */
  for (int64_t row0 = 0; row0 < P.batch; row0 += chunk) {
    const int64_t rows = P.batch - row0 < chunk ? P.batch - row0 : chunk;
    P.row0 = row0;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = (unsigned)cs;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)cs, (unsigned)rows, 1);
    cfg.blockDim = dim3(QS_TOP1_THREADS, 1, 1);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    TOPK_CUDA_TRY(cudaLaunchKernelEx(&cfg, qs_grid_top1_kernel<KB>, P));
  }
  return TOPK_SUCCESS;
}

#endif /* TOPK_QUEUE_SELECT_GRID_TOP1_CUH */
