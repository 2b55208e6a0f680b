/*
 * bitonic.cu: bitonic top-k (paper 000 sec. 2, III; Shanbhag et al.'s "bitonic
 * top-k"), a base of the Dr. Top-k delegate layer and an algorithm of its own.
 *
 * Every element becomes a (rank key, ~index) pair (bitonic_sort.cuh), so ties are
 * resolved by index inside the network itself: the result is the deterministic
 * answer and comes out sorted, best first (TOPK_SORTED costs nothing).
 *
 * With M = the next power of two >= k and tiles of BT_TILE = 2048 pairs (32 KB of
 * shared memory), one round (bt_round_kernel, grid = tiles x rows) takes each tile:
 *   local sort   runs of M sorted, alternately best first and worst first
 *   merge        run 2p and run 2p+1 -> their elementwise better one: a bitonic
 *                sequence holding the top M of both runs (Batcher's half-cleaner)
 *   rebuild      a bitonic merge of each new run (again alternating directions)
 *   ...          halving until one run of M is left, which goes to the next
 *                round's buffer.
 * Each round divides a row by BT_TILE / M (>= 2); rounds repeat until every row
 * holds at most M pairs, then bt_finish_kernel sorts each row's M and writes k.
 * The number of rounds comes from the longest possible row (the shape alone), so
 * nothing is read back to the host; short rows simply carry their M through.
 *
 * Limits: k <= BT_MAX_K = 1024 (M <= BT_TILE / 2). Larger k: supports() refuses.
 * Workspace: two pair buffers (16 bytes a pair) of the sizes the rounds need
 * (bt_region_of in bitonic_sort.cuh); none when every row fits one sort (n <= M).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../algo.h"
#include "../common/cuda_check.h"
#include "../common/workspace.h"
#include "../common/keys.cuh"
#include "bitonic_sort.cuh"

enum { BT_TILE = 2048, BT_MAX_ROUNDS = 64 };
static const int64_t BT_MAX_K = BT_TILE / 2;

struct bt_round_params {
  const void* in;
  const int64_t* offsets;
  int64_t n, ld, batch;
  int smallest;
  int round;          /* input regions are those after `round` rounds */
  int m;              /* survivors per tile (M) */
  const bt_pair* src; /* NULL: round 0 reads the input */
  bt_pair* dst;
};

template <topk_dtype DT>
__global__ void __launch_bounds__(BT_THREADS) bt_round_kernel(const bt_round_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  constexpr int PER = BT_TILE / 2 / BT_THREADS; /* halving items per thread */
  __shared__ bt_pair s[BT_TILE];
  const int M = P.m;
  const bool smallest = P.smallest != 0;
  for (int64_t r = blockIdx.y; r < P.batch; r += gridDim.y) {
    int64_t start, len, vo;
    bt_input_row(P.in, P.offsets, P.n, P.ld, r, &start, &len, &vo);
    const RawT* row = (const RawT*)P.in + start;
    const bt_region gi = bt_region_of(vo, len, r, P.round, BT_TILE, M);
    const bt_region go = bt_region_of(vo, len, r, P.round + 1, BT_TILE, M);
    const int64_t tiles = (gi.len + BT_TILE - 1) / BT_TILE;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      for (int i = threadIdx.x; i < BT_TILE; i += BT_THREADS) {
        const int64_t pos = t * BT_TILE + i;
        bt_pair v = bt_empty();
        if (pos < gi.len) v = P.src ? P.src[gi.start + pos] : bt_make((unsigned long long)topk_to_rank_key<DT>(row[pos], smallest), pos);
        s[i] = v;
      }
      __syncthreads();
      bt_network(s, BT_TILE, 2, M); /* local sort: run q best first iff q is even */
      for (int cur = BT_TILE; cur > M; cur >>= 1) {
        const int half = cur >> 1;
        bt_pair keep[PER];
#pragma unroll
        for (int q = 0; q < PER; ++q) {
          const int i = threadIdx.x + q * BT_THREADS;
          if (i < half) {
            const int p = i / M, o = i % M;
            const bt_pair a = s[2 * p * M + o], b = s[(2 * p + 1) * M + o];
            keep[q] = bt_better(a, b) ? a : b;
          }
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < PER; ++q) {
          const int i = threadIdx.x + q * BT_THREADS;
          if (i < half) s[i] = keep[q];
        }
        __syncthreads();
        bt_network(s, half, M, M); /* rebuild: bitonic runs of M sorted, alternating */
      }
      for (int i = threadIdx.x; i < M; i += BT_THREADS) P.dst[go.start + t * M + i] = s[i];
      __syncthreads(); /* s is reloaded by the next tile */
    }
  }
}

/* ------------------------------------------------------------------ plan */

typedef struct bt_plan {
  int m;           /* M */
  int rounds;
  int64_t maxlen[BT_MAX_ROUNDS + 1]; /* longest possible row before each round */
  int64_t buf_elems[2];
  size_t buf[2];
  size_t total;
} bt_plan;

static int bt_plan_make(const topk_problem* p, bt_plan* L) {
  memset(L, 0, sizeof *L);
  if (p->k < 1 || p->k > BT_MAX_K) return 0;
  int m = 1;
  while (m < p->k) m <<= 1;
  L->m = m;
  int64_t V = p->row_offsets ? p->n : p->batch * p->n; /* total virtual extent */
  int64_t maxlen = p->n;
  L->maxlen[0] = maxlen;
  while (maxlen > m) {
    if (L->rounds >= BT_MAX_ROUNDS) return 0;
    V = (V / BT_TILE + p->batch) * m;
    if (V > L->buf_elems[L->rounds & 1]) L->buf_elems[L->rounds & 1] = V;
    maxlen = (maxlen + BT_TILE - 1) / BT_TILE * m;
    L->maxlen[++L->rounds] = maxlen;
  }
  size_t total = 0;
  for (int b = 0; b < 2; ++b) {
    if (L->buf_elems[b] == 0) continue;
    L->buf[b] = total;
    total += topk_ws_align_up((size_t)L->buf_elems[b] * sizeof(bt_pair));
  }
  L->total = total > 0 ? total + (TOPK_WS_ALIGN - 1) : 0;
  return 1;
}

static int bt_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)dev;
  if (topk_dtype_size(p->dtype) == 0) {
    if (why && why_len) snprintf(why, why_len, "unknown dtype %d", (int)p->dtype);
    return 0;
  }
  if (p->k > BT_MAX_K) {
    if (why && why_len)
      snprintf(why, why_len, "bitonic top-k keeps 2k pairs per tile in shared memory: k <= %lld (k = %lld)",
               (long long)BT_MAX_K, (long long)p->k);
    return 0;
  }
  bt_plan L;
  if (!bt_plan_make(p, &L)) {
    if (why && why_len) snprintf(why, why_len, "problem too large for the round buffers");
    return 0;
  }
  return 1;
}

static topk_status bt_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  (void)dev;
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  bt_plan L;
  TOPK_RETURN_IF(!bt_plan_make(p, &L), TOPK_ERR_UNSUPPORTED, "bitonic: k = %lld (at most %lld)", (long long)p->k,
                 (long long)BT_MAX_K);
  *bytes = L.total;
  return TOPK_SUCCESS;
}

template <topk_dtype DT>
static topk_status bt_launch(const topk_args* a, const bt_plan* L, char* base, cudaStream_t s) {
  const int sms = a->dev && a->dev->sm_count > 0 ? a->dev->sm_count : 132;
  const int64_t batch = a->p.batch;
  const unsigned gy = (unsigned)(batch < 65535 ? batch : 65535);
  bt_pair* bufs[2] = {(bt_pair*)(base + L->buf[0]), (bt_pair*)(base + L->buf[1])};
  for (int i = 0; i < L->rounds; ++i) {
    bt_round_params R;
    memset(&R, 0, sizeof R);
    R.in = a->in;
    R.offsets = a->p.row_offsets;
    R.n = a->p.n;
    R.ld = a->p.row_offsets ? 0 : a->p.ld;
    R.batch = batch;
    R.smallest = (a->p.flags & TOPK_SMALLEST) != 0;
    R.round = i;
    R.m = L->m;
    R.src = i == 0 ? NULL : bufs[(i - 1) & 1];
    R.dst = bufs[i & 1];
    int64_t gx = (L->maxlen[i] + BT_TILE - 1) / BT_TILE;
    int64_t cap = (int64_t)sms * 16 / (int64_t)gy;
    if (cap < 1) cap = 1;
    if (gx > cap) gx = cap;
    if (gx < 1) gx = 1;
    bt_round_kernel<DT><<<dim3((unsigned)gx, gy), BT_THREADS, 0, s>>>(R);
    TOPK_CUDA_TRY_LAUNCH("bt_round_kernel");
  }
  bt_finish_params F;
  memset(&F, 0, sizeof F);
  F.in = a->in;
  F.offsets = a->p.row_offsets;
  F.n = a->p.n;
  F.ld = a->p.row_offsets ? 0 : a->p.ld;
  F.batch = batch;
  F.k = a->p.k;
  F.pairs = L->rounds > 0 ? bufs[(L->rounds - 1) & 1] : NULL;
  F.rounds = L->rounds;
  F.tile = BT_TILE;
  F.m_out = L->m;
  F.fixed_stride = 0;
  F.m = L->m;
  F.smallest = (a->p.flags & TOPK_SMALLEST) != 0;
  F.index_type = (int)a->p.index_type;
  F.values = a->values;
  F.indices = a->p.index_type == TOPK_INDEX_NONE ? NULL : a->indices;
  F.worst_bits = topk_worst_value_bits(a->p.dtype, F.smallest);
  const int64_t fb = batch < (int64_t)sms * 8 ? batch : (int64_t)sms * 8;
  bt_finish_kernel<DT><<<(unsigned)fb, BT_THREADS, (size_t)L->m * sizeof(bt_pair), s>>>(F);
  TOPK_CUDA_TRY_LAUNCH("bt_finish_kernel");
  return TOPK_SUCCESS;
}

static topk_status bt_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  bt_plan L;
  TOPK_RETURN_IF(!bt_plan_make(&a->p, &L), TOPK_ERR_UNSUPPORTED, "bitonic: k = %lld (at most %lld)",
                 (long long)a->p.k, (long long)BT_MAX_K);
  TOPK_RETURN_IF(L.total > 0 && (!workspace || workspace_bytes < L.total), TOPK_ERR_WORKSPACE,
                 "bitonic: workspace of %zu bytes given, %zu needed", workspace ? workspace_bytes : (size_t)0, L.total);
  char* base = topk_ws_base(workspace);
  cudaStream_t s = (cudaStream_t)stream;
  topk_status st = TOPK_SUCCESS;
  TOPK_DISPATCH_DTYPE(a->p.dtype, DT, return topk_fail(TOPK_ERR_INTERNAL, "bitonic: unknown dtype %d", (int)a->p.dtype),
                      st = bt_launch<DT>(a, &L, base, s));
  return st;
}

extern "C" const topk_algo_ops topk_algo_bitonic = {"bitonic",    TOPK_ALGO_BITONIC, TOPK_BACKEND_CUDA,
                                                    bt_supports,  bt_workspace_size, bt_run};
