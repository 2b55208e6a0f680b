/*
 * smem_queue_kernels.cuh: BlockSelect past the register queues (issue 5 item 4):
 * k = 2049..8192 with the queue in shared memory. Included only by the generated
 * instantiation files (queue_select.cmake: block_smem_k<CAP>.cu).
 *
 * One block of QS_SQ_THREADS threads per row. Shared memory holds the queue Q
 * (CAP pairs, sorted best first; its k-th is the threshold) and a candidate
 * buffer B of CAP / 2 pairs. A round reads one 16-byte vector per thread (the
 * next round's vector is already in flight) and runs in two steps:
 *   1. count: each thread counts its elements that beat the threshold; the
 *      block's total goes to s_need. If B cannot take them all, the block
 *      flushes B into Q first (which raises the threshold).
 *   2. append: the elements that still beat the threshold are appended to B,
 *      one shared atomic per warp.
 * A round adds at most 256 x 8 = 2048 <= CAP / 2 elements, so after a flush it
 * always fits. The row's head and tail (outside whole vectors) are one more round.
 * Flush: B is padded with sentinels and sorted (bitonic: runs of 256 sorted in
 * registers by a warp each with topk_dq_sort, the merge steps at distances >= 256
 * in shared memory, the shorter ones again in registers); then Q[CAP-1-i] vs B[i]
 * keeps the better (004 Alg. 1's reversed step: Q falls then rises) and Q is
 * sorted by the half-cleaners, again shared memory down to 256 and registers below.
 * Pairs and ties as in topk_device/merge.cuh: deterministic, sorted output.
 */
#ifndef TOPK_SMEM_QUEUE_KERNELS_CUH
#define TOPK_SMEM_QUEUE_KERNELS_CUH

#include "queue_select_kernels.cuh"

enum { QS_SQ_THREADS = 256, QS_SQ_WARPS = QS_SQ_THREADS / 32, QS_SQ_RUN = 256, QS_SQ_RUN_R = QS_SQ_RUN / 32 };

/* Dynamic shared memory of a CAP: Q (CAP pairs) and B (CAP / 2). */
template <int KB, int CAP> __host__ __device__ constexpr size_t qs_sq_smem() {
  return (size_t)(CAP + CAP / 2) * sizeof(topk_dq_pair<KB>);
}

/* Blocks per SM that shared memory allows (of ~227 KB): the register budget follows. */
template <int KB, int CAP> __host__ __device__ constexpr int qs_sq_blocks_per_sm() {
  return qs_sq_smem<KB, CAP>() <= 48 * 1024 ? 4 : (qs_sq_smem<KB, CAP>() <= 100 * 1024 ? 2 : 1);
}

/* A warp sorts (SORT) or half-cleans (a bitonic run) the QS_SQ_RUN pairs at a, best first,
 * and stores them reversed (worst first) if `reverse`. */
template <int KB, bool SORT>
__device__ __forceinline__ void qs_sq_run(topk_dq_pair<KB>* a, bool reverse, int lane) {
  topk_dq_pair<KB> w[QS_SQ_RUN_R];
#pragma unroll
  for (int r = 0; r < QS_SQ_RUN_R; ++r) w[r] = a[r * 32 + lane];
  if (SORT) topk_dq_sort<KB, QS_SQ_RUN_R>(w, lane);
  else topk_dq_merge_bitonic<KB, QS_SQ_RUN_R>(w, lane);
  __syncwarp();
#pragma unroll
  for (int r = 0; r < QS_SQ_RUN_R; ++r) a[reverse ? QS_SQ_RUN - 1 - (r * 32 + lane) : r * 32 + lane] = w[r];
}

/* One shared-memory step of a bitonic network over a[0..count): pairs at `stride`; blocks
 * of `size` whose first element has bit `size` clear sort best first. Ends with a barrier. */
template <int KB>
__device__ __forceinline__ void qs_sq_step(topk_dq_pair<KB>* a, int count, int size, int stride) {
  typedef topk_dq_ops<KB> O;
  for (int i = (int)threadIdx.x; i < count / 2; i += QS_SQ_THREADS) {
    const int lo = ((i & ~(stride - 1)) << 1) | (i & (stride - 1)), hi = lo + stride;
    const bool desc = (lo & size) == 0;
    const topk_dq_pair<KB> x = a[lo], y = a[hi];
    if (desc ? O::better(y, x) : O::better(x, y)) {
      a[lo] = y;
      a[hi] = x;
    }
  }
  __syncthreads();
}

/* Every run of a[0..count) half-cleaned in registers; run j's direction from bit `size`. */
template <int KB>
__device__ __forceinline__ void qs_sq_clean_runs(topk_dq_pair<KB>* a, int count, int size, int warp, int lane) {
  for (int run = warp; run < count / QS_SQ_RUN; run += QS_SQ_WARPS)
    qs_sq_run<KB, false>(a + run * QS_SQ_RUN, ((run * QS_SQ_RUN) & size) != 0, lane);
  __syncthreads();
}

/* Moves B's nb pairs into Q (see the file comment); block-collective, between barriers. */
template <int KB, int CAP>
__device__ __forceinline__ void qs_sq_flush(topk_dq_pair<KB>* q, topk_dq_pair<KB>* b, int nb, int warp, int lane) {
  typedef topk_dq_ops<KB> O;
  enum { BUF = CAP / 2 };
  for (int i = nb + (int)threadIdx.x; i < BUF; i += QS_SQ_THREADS) b[i] = O::worst();
  __syncthreads();
  for (int run = warp; run < BUF / QS_SQ_RUN; run += QS_SQ_WARPS)
    qs_sq_run<KB, true>(b + run * QS_SQ_RUN, (run & 1) != 0, lane);
  __syncthreads();
  for (int size = 2 * QS_SQ_RUN; size <= BUF; size <<= 1) {
    for (int stride = size / 2; stride >= QS_SQ_RUN; stride >>= 1) qs_sq_step<KB>(b, BUF, size, stride);
    qs_sq_clean_runs<KB>(b, BUF, size, warp, lane);
  }
  for (int i = (int)threadIdx.x; i < BUF; i += QS_SQ_THREADS)
    if (O::better(b[i], q[CAP - 1 - i])) q[CAP - 1 - i] = b[i];
  __syncthreads();
  for (int stride = CAP / 2; stride >= QS_SQ_RUN; stride >>= 1) qs_sq_step<KB>(q, CAP, 2 * CAP, stride);
  qs_sq_clean_runs<KB>(q, CAP, 2 * CAP, warp, lane);
}

template <int KB, int CAP>
__global__ void __launch_bounds__(QS_SQ_THREADS, qs_sq_blocks_per_sm<KB, CAP>()) qs_sq_kernel(const qs_params P) {
  typedef topk_dq_ops<KB> O;
  typedef typename topk_key_of_width<KB>::type U;
  enum { BUF = CAP / 2, ES = KB / 8, VE = 16 / ES };
  static_assert(QS_SQ_THREADS * VE <= BUF, "a round must fit an empty buffer");
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, tid = threadIdx.x;
  topk_dq_pair<KB>* q = (topk_dq_pair<KB>*)qs_smem;
  topk_dq_pair<KB>* b = q + CAP;
  __shared__ int s_nb, s_need[3]; /* round rd counts into slot rd % 3 */
  __shared__ topk_dq_pair<KB> s_kth;
  const int64_t row = P.row0 + (int64_t)blockIdx.x;
  int64_t start;
  uint32_t len;
  qs_row(P, row, start, len);
  const char* rowp = (const char*)P.in + start * ES;
  const qs_row_split rs = qs_split_row<KB>(rowp, len, 0u, 1u);
  const uint4* vp = (const uint4*)(rowp + (size_t)rs.head * ES);
  for (int i = tid; i < CAP; i += QS_SQ_THREADS) q[i] = O::worst();
  if (tid == 0) {
    s_nb = 0;
    s_need[0] = s_need[1] = s_need[2] = 0;
    s_kth = O::worst();
  }
  __syncthreads();

  /* Rounds 0..vrounds-1: one vector each; round vrounds: the head and tail elements. */
  const uint32_t vrounds = (rs.nvec + QS_SQ_THREADS - 1) / QS_SQ_THREADS;
  const uint32_t rounds = vrounds + (rs.head + rs.tail > 0 ? 1u : 0u);
  uint4 next = make_uint4(0u, 0u, 0u, 0u);
  if ((uint32_t)tid < rs.nvec) next = __ldg(vp + tid);
  for (uint32_t rd = 0; rd < rounds; ++rd) {
    U raw[VE];
    uint32_t idx0 = 0, nvalid = 0;
    if (rd < vrounds) {
      const uint32_t v = rd * QS_SQ_THREADS + (uint32_t)tid;
      const uint4 x = next;
      const uint32_t vn = v + QS_SQ_THREADS;
      if (vn < rs.nvec) next = __ldg(vp + vn);
#pragma unroll
      for (int j = 0; j < VE; ++j) raw[j] = qs_vec_elem<KB>(x, j);
      nvalid = v < rs.nvec ? (uint32_t)VE : 0u;
      idx0 = rs.head + v * VE;
    } else {
      const uint32_t g = (uint32_t)tid;
      nvalid = g < rs.head + rs.tail ? 1u : 0u;
      idx0 = g < rs.head ? g : rs.head + rs.nvec * VE + (g - rs.head);
      raw[0] = nvalid ? ((const U*)rowp)[idx0] : (U)0;
#pragma unroll
      for (int j = 1; j < VE; ++j) raw[j] = 0;
    }
    topk_dq_pair<KB> e[VE];
#pragma unroll
    for (int j = 0; j < VE; ++j) e[j] = O::make(topk_dq_rank_key<U>(raw[j], P.kp), idx0 + (uint32_t)j);
    /* 1. count. The threshold and B's fill are read before the barrier: they last changed
     * before the previous barrier, and change next after this round's (appends, flush). */
    topk_dq_pair<KB> kth = s_kth;
    const int nb0 = s_nb;
    int c = 0;
#pragma unroll
    for (int j = 0; j < VE; ++j) c += ((uint32_t)j < nvalid && O::better(e[j], kth)) ? 1 : 0;
    const int wc = __reduce_add_sync(TOPK_DQ_FULL, (unsigned)c);
    if (lane == 0 && wc > 0) atomicAdd(&s_need[rd % 3], wc);
    /* Slot (rd + 1) % 3 was last read in round rd - 2: a barrier ago even when round rd - 1
     * skipped its second one; round rd + 1 counts into it after this round's barrier. */
    if (tid == 0) s_need[(rd + 1) % 3] = 0;
    __syncthreads();
    const int need = s_need[rd % 3];
    if (need == 0) continue; /* uniform (read after the barrier); nothing else changed this round */
    if (nb0 + need > BUF) {
      qs_sq_flush<KB, CAP>(q, b, nb0, warp, lane);
      if (tid == 0) {
        s_kth = q[P.k - 1];
        s_nb = 0;
      }
      __syncthreads();
      kth = s_kth;
    }
    /* 2. append: a warp's passing elements, lane by lane in order, after one atomic */
    int mine = 0;
#pragma unroll
    for (int j = 0; j < VE; ++j) mine += ((uint32_t)j < nvalid && O::better(e[j], kth)) ? 1 : 0;
    int incl = mine;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const int t = __shfl_up_sync(TOPK_DQ_FULL, incl, d);
      if (lane >= d) incl += t;
    }
    int base = 0;
    if (lane == 31 && incl > 0) base = atomicAdd(&s_nb, incl);
    base = __shfl_sync(TOPK_DQ_FULL, base, 31) + incl - mine;
#pragma unroll
    for (int j = 0; j < VE; ++j)
      if ((uint32_t)j < nvalid && O::better(e[j], kth)) b[base++] = e[j];
    __syncthreads();
  }
  if (s_nb > 0) { /* uniform: after the last round's barrier */
    qs_sq_flush<KB, CAP>(q, b, s_nb, warp, lane);
  }
  /* outputs: Q's first k, values read back from the row (bit-exact) */
  for (int e = tid; e < P.k; e += QS_SQ_THREADS) qs_write_slot<KB>(P, row, start, e, q[e]);
}

template <int KB, int CAP> topk_status qs_launch_block_smem(const qs_params& P0, cudaStream_t stream) {
  qs_params P = P0;
  const size_t smem = qs_sq_smem<KB, CAP>();
  TOPK_CUDA_TRY(qs_allow_smem(qs_sq_kernel<KB, CAP>, smem));
  for (int64_t row0 = 0; row0 < P.batch; row0 += INT_MAX) {
    const int64_t rows = P.batch - row0 < INT_MAX ? P.batch - row0 : INT_MAX;
    P.row0 = row0;
    qs_sq_kernel<KB, CAP><<<(unsigned)rows, QS_SQ_THREADS, smem, stream>>>(P);
    TOPK_CUDA_TRY_LAUNCH("qs_sq_kernel");
  }
  return TOPK_SUCCESS;
}

#endif /* TOPK_SMEM_QUEUE_KERNELS_CUH */
