/*
 * bucket.cu: bucket select (paper 000 sec. 2, I; Alabi et al.'s bucketSelect), a
 * base of the Dr. Top-k delegate layer and an algorithm of its own.
 *
 * Per row, on rank keys (larger is better, keys.cuh):
 *   min/max     one pass: the row's key range [lo, hi] (bk_minmax_kernel)
 *   buckets     BK_BINS buckets of equal width w = (hi - lo) / BK_BINS + 1 over the
 *               range, a histogram, and the bucket holding the k_rem-th best key
 *               becomes the new range (bk_hist_kernel; the last block of a row
 *               chooses, as AIR does). Because keys are integers, the width shrinks
 *               to 1 after at most ceil(KB / 11) rounds: the range is then one key,
 *               the k-th key, exactly (no float splitting, no all-equal special case
 *               beyond the first range having lo == hi).
 *   ties        if more elements equal the k-th key than are still needed, the same
 *               bucket rounds run over the index key ik = len - 1 - index of those
 *               elements (at most ceil(ib / 11) rounds), which picks the lowest
 *               indices: the deterministic answer (also given for
 *               TOPK_NONDETERMINISTIC).
 *   early stop  when the chosen bucket holds exactly the results still needed.
 *   output      elements with key > thr_key, or key == thr_key and ik >= thr_ik,
 *               to slots taken with warp-aggregated atomics (bk_final_kernel).
 * Rows of at most k elements are copied and padded. The number of launches comes
 * from the shape alone; rows that finish early return at once from later launches.
 *
 * TOPK_SORTED: the final pass writes (key, ~index) pairs; bt_finish_kernel
 * (src/cuda/bitonic/bitonic_sort.cuh) sorts each row's k best first and writes
 * the outputs. That sort holds next_pow2(k) pairs in shared memory: sorted output
 * for k <= BK_SORT_MAX_K = 2048 (supports() refuses beyond).
 *
 * Workspace: per chunk of BK_CHUNK rows, row states and histograms (BK_BINS u64
 * per row), zeroed per chunk; sorted: batch x k pairs (16 bytes).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../algo.h"
#include "../bitonic/bitonic_sort.cuh"
#include "../common/cuda_check.h"
#include "../common/workspace.h"
#include "../common/keys.cuh"

enum {
  BK_THREADS = 256,
  BK_WARPS = BK_THREADS / 32,
  BK_BITS = 11,
  BK_BINS = 1 << BK_BITS,
  BK_CHUNK = 1024,
  BK_BLOCKS_PER_SM = 4
};
static const int64_t BK_SORT_MAX_K = 2048;
static const int64_t BK_MIN_ELEMS_PER_BLOCK = 16 * BK_THREADS;

enum { BK_MINMAX = 0, BK_KEYS = 1, BK_INDEX = 2, BK_FINAL = 3, BK_COPY = 4 };

typedef unsigned long long u64;

struct bk_state {
  u64 lo, hi;          /* the range being split (keys, or index keys in BK_INDEX) */
  u64 kth;             /* BK_INDEX: the k-th key */
  u64 k_rem;           /* results still needed inside the range */
  u64 nmin, maxv;      /* min/max pass: max of ~key and of key (zeroed = identity) */
  u64 thr_key, thr_ik; /* BK_FINAL: key > thr_key || (key == thr_key && ik >= thr_ik) */
  u64 out_cnt;
  unsigned int finished;
  int phase;
};

struct bk_params {
  const void* in;
  const int64_t* offsets;
  int64_t n, ld, k;
  int64_t row0;      /* first row of this chunk */
  int smallest;
  bk_state* state;   /* chunk rows */
  u64* hist;         /* chunk rows x BK_BINS, zero */
  bt_pair* pairs;    /* sorted: batch x k; NULL otherwise */
  void* values;
  void* indices;
  int index_type;
  u64 worst_bits;
};

__device__ __forceinline__ void bk_row(const bk_params& P, int64_t r, int64_t* start, int64_t* len) {
  int64_t vo;
  bt_input_row(P.in, P.offsets, P.n, P.ld, r, start, len, &vo);
}

/* Block-wide max of v (every thread must call; result valid in all threads). */
__device__ __forceinline__ u64 bk_block_max(u64 v, u64* s_warp) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const u64 y = __shfl_xor_sync(0xffffffffu, v, o);
    v = y > v ? y : v;
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = v;
  __syncthreads();
  u64 m = 0;
#pragma unroll
  for (int w = 0; w < BK_WARPS; ++w) m = s_warp[w] > m ? s_warp[w] : m;
  return m;
}

/* True in the one block of the launch that finished last for this row (after a fence). */
__device__ __forceinline__ bool bk_last_block(bk_state* st, unsigned* s_flag) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) *s_flag = atomicAdd(&st->finished, 1u) == gridDim.x - 1;
  __syncthreads();
  const bool last = *s_flag != 0;
  if (last) __threadfence();
  return last;
}

template <topk_dtype DT>
__global__ void __launch_bounds__(BK_THREADS) bk_minmax_kernel(const bk_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  __shared__ u64 s_warp[BK_WARPS];
  __shared__ unsigned s_flag;
  const int64_t r = P.row0 + blockIdx.y;
  bk_state* st = P.state + blockIdx.y;
  int64_t start, len;
  bk_row(P, r, &start, &len);
  if (len <= P.k) { /* block-uniform */
    if (blockIdx.x == 0 && threadIdx.x == 0) st->phase = BK_COPY;
    return;
  }
  const RawT* row = (const RawT*)P.in + start;
  const bool smallest = P.smallest != 0;
  u64 nmn = 0, mx = 0;
  for (int64_t i = (int64_t)blockIdx.x * BK_THREADS + threadIdx.x; i < len; i += (int64_t)gridDim.x * BK_THREADS) {
    const u64 key = (u64)topk_to_rank_key<DT>(row[i], smallest);
    nmn = ~key > nmn ? ~key : nmn;
    mx = key > mx ? key : mx;
  }
  nmn = bk_block_max(nmn, s_warp);
  mx = bk_block_max(mx, s_warp);
  if (threadIdx.x == 0) {
    atomicMax(&st->nmin, nmn);
    atomicMax(&st->maxv, mx);
  }
  if (!bk_last_block(st, &s_flag)) return;
  if (threadIdx.x == 0) {
    const u64 lo = ~__ldcg(&st->nmin), hi = __ldcg(&st->maxv);
    st->k_rem = (u64)P.k;
    if (lo == hi) { /* every key equal: only the index rounds are left */
      st->kth = lo;
      st->lo = 0;
      st->hi = (u64)(len - 1);
      st->phase = BK_INDEX;
    } else {
      st->lo = lo;
      st->hi = hi;
      st->phase = BK_KEYS;
    }
    st->finished = 0;
  }
}

/* One bucket round for every row still splitting. */
template <topk_dtype DT>
__global__ void __launch_bounds__(BK_THREADS) bk_hist_kernel(const bk_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  __shared__ u64 s_hist[BK_BINS];
  __shared__ unsigned s_flag;
  __shared__ u64 s_warp[BK_WARPS];
  __shared__ int s_bin;
  __shared__ u64 s_greater, s_count;
  const int64_t r = P.row0 + blockIdx.y;
  bk_state* st = P.state + blockIdx.y;
  const int phase = st->phase;
  if (phase != BK_KEYS && phase != BK_INDEX) return; /* block-uniform */
  int64_t start, len;
  bk_row(P, r, &start, &len);
  const RawT* row = (const RawT*)P.in + start;
  const bool smallest = P.smallest != 0;
  const u64 lo = st->lo, hi = st->hi, kth = st->kth;
  const u64 w = (hi - lo) / BK_BINS + 1;
  for (int b = threadIdx.x; b < BK_BINS; b += BK_THREADS) s_hist[b] = 0;
  __syncthreads();
  for (int64_t i = (int64_t)blockIdx.x * BK_THREADS + threadIdx.x; i < len; i += (int64_t)gridDim.x * BK_THREADS) {
    const u64 key = (u64)topk_to_rank_key<DT>(row[i], smallest);
    u64 v;
    bool in;
    if (phase == BK_KEYS) {
      v = key;
      in = key >= lo && key <= hi;
    } else {
      v = (u64)(len - 1 - i);
      in = key == kth && v >= lo && v <= hi;
    }
    if (in) atomicAdd(&s_hist[(v - lo) / w], 1ull);
  }
  __syncthreads();
  u64* g_hist = P.hist + (int64_t)blockIdx.y * BK_BINS;
  for (int b = threadIdx.x; b < BK_BINS; b += BK_THREADS)
    if (s_hist[b]) atomicAdd(&g_hist[b], s_hist[b]);
  if (!bk_last_block(st, &s_flag)) return;

  /* The last block: choose the bucket of the k_rem-th best (suffix sums from the top bin). */
  for (int b = threadIdx.x; b < BK_BINS; b += BK_THREADS) {
    s_hist[b] = __ldcg(&g_hist[b]);
    g_hist[b] = 0; /* zero for the next round */
  }
  if (threadIdx.x == 0) {
    s_bin = 0;
    s_greater = 0;
    s_count = 0;
  }
  __syncthreads();
  const u64 k_rem = st->k_rem;
  /* thread t owns bins [t * PER, (t + 1) * PER) counted from the top */
  constexpr int PER = BK_BINS / BK_THREADS;
  u64 sum = 0;
#pragma unroll
  for (int q = 0; q < PER; ++q) sum += s_hist[BK_BINS - 1 - (threadIdx.x * PER + q)];
  /* exclusive scan of sum over the block */
  u64 x = sum;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const u64 y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) s_warp[warp] = x;
  __syncthreads();
  u64 before = 0;
  for (int q = 0; q < warp; ++q) before += s_warp[q];
  u64 greater = before + x - sum;
#pragma unroll
  for (int q = 0; q < PER; ++q) {
    const int b = BK_BINS - 1 - (threadIdx.x * PER + q);
    const u64 c = s_hist[b];
    if (greater < k_rem && greater + c >= k_rem) {
      s_bin = b;
      s_greater = greater;
      s_count = c;
    }
    greater += c;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const u64 b = (u64)s_bin;
    const u64 nlo = lo + b * w;
    const u64 nhi = (hi - nlo < w - 1) ? hi : nlo + (w - 1);
    const u64 nk = k_rem - s_greater;
    const u64 c = s_count;
    if (c == nk) { /* every element of the bucket is a result */
      st->thr_key = phase == BK_KEYS ? nlo : kth;
      st->thr_ik = phase == BK_KEYS ? 0 : nlo;
      st->phase = BK_FINAL;
    } else if (nlo == nhi) { /* BK_KEYS only (indices are distinct): the k-th key, ties left */
      st->kth = nlo;
      st->lo = 0;
      st->hi = (u64)(len - 1);
      st->k_rem = nk;
      st->phase = BK_INDEX;
    } else {
      st->lo = nlo;
      st->hi = nhi;
      st->k_rem = nk;
    }
    st->finished = 0;
  }
}

/* Writes the results (or copies a short row), to the outputs or to the sort pairs. */
template <topk_dtype DT>
__global__ void __launch_bounds__(BK_THREADS) bk_final_kernel(const bk_params P) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  const int64_t r = P.row0 + blockIdx.y;
  bk_state* st = P.state + blockIdx.y;
  const int phase = st->phase;
  int64_t start, len;
  bk_row(P, r, &start, &len);
  const RawT* row = (const RawT*)P.in + start;
  const bool smallest = P.smallest != 0;
  if (phase == BK_COPY) {
    for (int64_t s = (int64_t)blockIdx.x * BK_THREADS + threadIdx.x; s < P.k; s += (int64_t)gridDim.x * BK_THREADS) {
      const int64_t o = r * P.k + s;
      if (P.pairs) {
        P.pairs[o] = s < len ? bt_make((u64)topk_to_rank_key<DT>(row[s], smallest), s) : bt_empty();
        continue;
      }
      ((RawT*)P.values)[o] = s < len ? row[s] : (RawT)P.worst_bits;
      const int64_t ix = s < len ? s : -1;
      if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = ix;
      else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = (int32_t)ix;
    }
    return;
  }
  if (phase != BK_FINAL) return; /* cannot happen: the launch count covers every round */
  const u64 tk = st->thr_key, ti = st->thr_ik;
  const int64_t stride = (int64_t)gridDim.x * BK_THREADS;
  /* whole warps iterate together (warp-aggregated slots) */
  const int64_t first = (int64_t)blockIdx.x * BK_THREADS + (threadIdx.x & ~31);
  for (int64_t i0 = first; i0 < len; i0 += stride) {
    const int64_t i = i0 + (threadIdx.x & 31);
    bool take = false;
    RawT raw = 0;
    u64 key = 0;
    if (i < len) {
      raw = row[i];
      key = (u64)topk_to_rank_key<DT>(raw, smallest);
      const u64 ik = (u64)(len - 1 - i);
      take = key > tk || (key == tk && ik >= ti);
    }
    const unsigned mask = __ballot_sync(0xffffffffu, take);
    if (!mask) continue;
    const int lane = threadIdx.x & 31;
    u64 base = 0;
    if (lane == 0) base = atomicAdd(&st->out_cnt, (u64)__popc(mask));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (take) {
      const int64_t slot = (int64_t)(base + (u64)__popc(mask & ((1u << lane) - 1u)));
      if (slot < P.k) {
        const int64_t o = r * P.k + slot;
        if (P.pairs) {
          P.pairs[o] = bt_make(key, i);
        } else {
          ((RawT*)P.values)[o] = raw;
          if (P.index_type == TOPK_INDEX_I64) ((int64_t*)P.indices)[o] = i;
          else if (P.index_type == TOPK_INDEX_I32) ((int32_t*)P.indices)[o] = (int32_t)i;
        }
      }
    }
  }
}

/* ------------------------------------------------------------------ plan */

typedef struct bk_plan {
  int64_t chunk;
  int rounds;
  int sorted;
  int sort_m;
  size_t state, hist, zero_bytes, pairs, total;
} bk_plan;

static int bits_for(uint64_t v) {
  int bits = 0;
  while (bits < 64 && (v >> bits) != 0) ++bits;
  return bits;
}

static void bk_plan_make(const topk_problem* p, bk_plan* L) {
  memset(L, 0, sizeof *L);
  const int kb = (int)topk_dtype_size(p->dtype) * 8;
  const int ib = bits_for((uint64_t)(p->n > 0 ? p->n : 1));
  L->rounds = (kb + BK_BITS - 1) / BK_BITS + (ib + BK_BITS - 1) / BK_BITS;
  L->chunk = p->batch < (int64_t)BK_CHUNK ? p->batch : (int64_t)BK_CHUNK;
  L->sorted = (p->flags & TOPK_SORTED) != 0;
  size_t total = 0;
  L->state = 0;
  total += topk_ws_align_up((size_t)L->chunk * sizeof(bk_state));
  L->hist = total;
  total += (size_t)L->chunk * BK_BINS * sizeof(u64);
  L->zero_bytes = total;
  if (L->sorted) {
    int m = 1;
    while (m < p->k) m <<= 1;
    L->sort_m = m;
    L->pairs = total;
    total += topk_ws_align_up((size_t)p->batch * (size_t)p->k * sizeof(bt_pair));
  }
  L->total = total + (TOPK_WS_ALIGN - 1);
}

static int bk_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)dev;
  if (topk_dtype_size(p->dtype) == 0) {
    if (why && why_len) snprintf(why, why_len, "unknown dtype %d", (int)p->dtype);
    return 0;
  }
  if ((p->flags & TOPK_SORTED) && p->k > BK_SORT_MAX_K) {
    if (why && why_len)
      snprintf(why, why_len, "bucket select sorts its output in shared memory: sorted output for k <= %lld (k = %lld)",
               (long long)BK_SORT_MAX_K, (long long)p->k);
    return 0;
  }
  if ((p->flags & TOPK_SORTED) && (uint64_t)p->batch > (uint64_t)(SIZE_MAX / 32) / (uint64_t)p->k) {
    if (why && why_len) snprintf(why, why_len, "sorted output of batch x k exceeds the address space");
    return 0;
  }
  return 1;
}

static topk_status bk_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  (void)dev;
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  bk_plan L;
  bk_plan_make(p, &L);
  *bytes = L.total;
  return TOPK_SUCCESS;
}

template <topk_dtype DT>
static topk_status bk_launch(const topk_args* a, const bk_plan* L, char* base, cudaStream_t s) {
  const int sms = a->dev && a->dev->sm_count > 0 ? a->dev->sm_count : 132;
  bk_params P;
  memset(&P, 0, sizeof P);
  P.in = a->in;
  P.offsets = a->p.row_offsets;
  P.n = a->p.n;
  P.ld = a->p.row_offsets ? 0 : a->p.ld;
  P.k = a->p.k;
  P.smallest = (a->p.flags & TOPK_SMALLEST) != 0;
  P.state = (bk_state*)(base + L->state);
  P.hist = (u64*)(base + L->hist);
  P.pairs = L->sorted ? (bt_pair*)(base + L->pairs) : NULL;
  P.values = a->values;
  P.indices = a->p.index_type == TOPK_INDEX_NONE ? NULL : a->indices;
  P.index_type = (int)a->p.index_type;
  P.worst_bits = topk_worst_value_bits(a->p.dtype, P.smallest);
  const int64_t batch = a->p.batch;
  const int64_t avg = a->p.row_offsets ? (a->p.n / batch > 0 ? a->p.n / batch : 1) : (a->p.n > 0 ? a->p.n : 1);
  for (int64_t row0 = 0; row0 < batch; row0 += L->chunk) {
    const int64_t rows = batch - row0 < L->chunk ? batch - row0 : L->chunk;
    P.row0 = row0;
    TOPK_CUDA_TRY(cudaMemsetAsync(base, 0, L->zero_bytes, s));
    int64_t bpr = (int64_t)sms * BK_BLOCKS_PER_SM / rows;
    const int64_t by_work = (avg + BK_MIN_ELEMS_PER_BLOCK - 1) / BK_MIN_ELEMS_PER_BLOCK;
    if (bpr > by_work) bpr = by_work;
    if (bpr < 1) bpr = 1;
    const dim3 grid((unsigned)bpr, (unsigned)rows);
    bk_minmax_kernel<DT><<<grid, BK_THREADS, 0, s>>>(P);
    TOPK_CUDA_TRY_LAUNCH("bk_minmax_kernel");
    for (int q = 0; q < L->rounds; ++q) {
      bk_hist_kernel<DT><<<grid, BK_THREADS, 0, s>>>(P);
      TOPK_CUDA_TRY_LAUNCH("bk_hist_kernel");
    }
    bk_final_kernel<DT><<<grid, BK_THREADS, 0, s>>>(P);
    TOPK_CUDA_TRY_LAUNCH("bk_final_kernel");
  }
  if (L->sorted) {
    bt_finish_params F;
    memset(&F, 0, sizeof F);
    F.in = a->in;
    F.offsets = a->p.row_offsets;
    F.n = a->p.n;
    F.ld = P.ld;
    F.batch = batch;
    F.k = a->p.k;
    F.pairs = P.pairs;
    F.fixed_stride = a->p.k;
    F.m = L->sort_m;
    F.smallest = P.smallest;
    F.index_type = P.index_type;
    F.values = a->values;
    F.indices = P.indices;
    F.worst_bits = P.worst_bits;
    const int64_t fb = batch < (int64_t)sms * 8 ? batch : (int64_t)sms * 8;
    bt_finish_kernel<DT><<<(unsigned)fb, BT_THREADS, (size_t)L->sort_m * sizeof(bt_pair), s>>>(F);
    TOPK_CUDA_TRY_LAUNCH("bt_finish_kernel");
  }
  return TOPK_SUCCESS;
}

static topk_status bk_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  bk_plan L;
  bk_plan_make(&a->p, &L);
  TOPK_RETURN_IF(!workspace || workspace_bytes < L.total, TOPK_ERR_WORKSPACE,
                 "bucket: workspace of %zu bytes given, %zu needed", workspace ? workspace_bytes : (size_t)0, L.total);
  char* base = topk_ws_base(workspace);
  topk_status st = TOPK_SUCCESS;
  TOPK_DISPATCH_DTYPE(a->p.dtype, DT, return topk_fail(TOPK_ERR_INTERNAL, "bucket: unknown dtype %d", (int)a->p.dtype),
                      st = bk_launch<DT>(a, &L, base, (cudaStream_t)stream));
  return st;
}

extern "C" const topk_algo_ops topk_algo_bucket = {"bucket",     TOPK_ALGO_BUCKET,  TOPK_BACKEND_CUDA,
                                                   bk_supports,  bk_workspace_size, bk_run};
