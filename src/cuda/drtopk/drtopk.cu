/*
 * drtopk.cu: the Dr. Top-k delegate layer (paper 000 sec. 4-5) over three bases,
 * the host side: plan, workspace layout, launch sequence, the three ops entries
 * (drtopk_radix, drtopk_bucket, drtopk_bitonic) and the workload statistics.
 * The kernels, the composite-key scheme and the capacity bound are explained in
 * drtopk_kernels.cuh.
 *
 * Bases. Both top-k steps call the base through its ops entry on 64-bit composite
 * keys (dtype U64, largest, no indices, device row offsets: each row's region):
 *   radix   AIR Top-K (topk_algo_air_radix). The paper's flag-based in-place radix
 *           (sec. 5.1) is an 8-bit-digit, re-read-everything radix; AIR fuses the
 *           filter into the next histogram, uses 11-bit digits and buffers the
 *           candidates once they are few, so it reads less on the same data: AIR is
 *           the radix base.
 *   bucket  bucket select (src/cuda/bucket/bucket.cu)
 *   bitonic bitonic top-k (src/cuda/bitonic/bitonic.cu)
 * Composites are distinct, so the base runs TOPK_NONDETERMINISTIC (no tie passes)
 * and still gives the deterministic answer; TOPK_SORTED is passed to the second
 * step (composite order = value order, then index).
 *
 * The plain base runs on the whole problem instead (decided from the shape alone,
 * identically in workspace_size and run) when composites do not fit (64-bit keys,
 * or rows of 2^(64 - KB) elements or more) or when the capacity bound B is not
 * below the row length (the layer cannot save anything).
 *
 * Subrange size: Rule 4 (sec. 5.2), src/drtopk_rule4.c, with its constants fitted
 * on the H100 from bench/drtopk_workload's alpha sweep. Beta (Rule 3) defaults to DT_BETA.
 * Knobs (environment, read at every call): TOPK_DRTOPK_ALPHA (force alpha),
 * TOPK_DRTOPK_BETA (1..4), TOPK_DRTOPK_RULE4_C, TOPK_DRTOPK_BUILD=warp|smem (force
 * a delegate kernel; smem needs alpha <= 10).
 *
 * Workspace (each part rounded to 256 bytes, plus 255 for alignment):
 *   tc, cnt, nfull: batch u64 each; off1, off2: batch + 1 int64 each
 *   full subrange lists: batch x (floor(k / beta) + 1) int64
 *   delegates batch x ceil(n / S) x beta u64 (uniform rows: the first top-k's rows),
 *             (floor(N / S) + batch) x beta with offsets, N = all elements
 *   concatenated min(N, batch * B) u64
 *   s1, s2: batch x k u64 (the two base results)
 *   the base's workspace: the larger of its two steps' (they run one after the other)
 * run() never allocates, synchronises or copies to the host.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algo.h"
#include "../../drtopk_rule4.h"
#include "../common/cuda_check.h"
#include "../common/workspace.h"
#include "../common/keys.cuh"
#include "drtopk.h"
#include "drtopk_kernels.cuh"

/* ------------------------------------------------------------------ tuning */

static const int DT_BETA = 2;      /* Rule 3: the paper found beta = 2 best */

typedef struct dt_plan {
  const topk_algo_ops* base;
  int delegate;           /* 0: the plain base on the whole problem */
  int alpha, beta, ib, kb, smem_build;
  int64_t S, bound, N, d_total, c_total;
  topk_problem p1, p2;    /* the base's two problems (row_offsets filled at run) */
  size_t base_ws;
  int64_t fcap;           /* full subranges per row: floor(k / beta) + 1 */
  size_t tc, cnt, nfull, full, off1, off2, dele, conc, s1, s2, bws;
  size_t total;
} dt_plan;

/* Parts are never empty here: a zero count still takes one aligned slot. */
static int add_part(size_t* total, size_t* offset, uint64_t count, size_t size) {
  return topk_ws_add_part(total, offset, count > 0 ? count : 1, size);
}

static int bits_for(uint64_t v) {
  int bits = 0;
  while (bits < 64 && (v >> bits) != 0) ++bits;
  return bits;
}

static int env_int(const char* name, int fallback) {
  const char* s = topk_env(name);
  if (!s || !*s) return fallback;
  char* end = NULL;
  long v = strtol(s, &end, 10);
  return (end && *end == 0) ? (int)v : fallback;
}

/* The base problem of one step: composites as U64 rows, either uniform rows of n
 * (offsets = 0) or rows given by device offsets in an n-element buffer (offsets = 1). */
static topk_problem base_problem(const topk_problem* p, int64_t n, int offsets, unsigned flags) {
  topk_problem q;
  memset(&q, 0, sizeof q);
  q.dtype = TOPK_U64;
  q.batch = p->batch;
  q.n = n;
  q.k = p->k;
  q.ld = offsets ? 0 : n;
  /* placeholder for "has offsets": run passes the real ones */
  q.row_offsets = offsets ? (const int64_t*)(uintptr_t)TOPK_WS_ALIGN : NULL;
  q.index_type = TOPK_INDEX_NONE;
  q.flags = flags;
  q.algo = p->algo;
  q.backend = TOPK_BACKEND_CUDA;
  return q;
}

static topk_status plan_layout(const topk_problem* p, const topk_device_info* dev, const topk_algo_ops* base,
                               dt_plan* L) {
  memset(L, 0, sizeof *L);
  L->base = base;
  const int es = (int)topk_dtype_size(p->dtype);
  TOPK_RETURN_IF(es == 0, TOPK_ERR_DTYPE, "drtopk: unknown dtype %d", (int)p->dtype);
  L->kb = es * 8;
  L->N = p->row_offsets ? p->n : p->batch * p->n;
  const int64_t navg = p->row_offsets ? (p->batch > 0 ? p->n / p->batch : p->n) : p->n;
  L->ib = bits_for((uint64_t)(p->n > 0 ? p->n : 1)); /* 2^ib > every row length, so imask - idx >= 1 */
  const int forced_alpha = env_int("TOPK_DRTOPK_ALPHA", 0);
  L->alpha = forced_alpha >= TOPK_DRTOPK_ALPHA_MIN && forced_alpha <= 30 ? forced_alpha : topk_drtopk_rule4_alpha(navg, p->k);
  L->beta = env_int("TOPK_DRTOPK_BETA", DT_BETA);
  if (L->beta < 1 || L->beta > 4) L->beta = DT_BETA;
  L->S = (int64_t)1 << L->alpha;
  const char* build = topk_env("TOPK_DRTOPK_BUILD");
  L->smem_build = L->alpha <= DT_SMEM_AUTO_ALPHA;
  if (build && strcmp(build, "warp") == 0) L->smem_build = 0;
  if (build && strcmp(build, "smem") == 0 && L->alpha <= DT_SMEM_MAX_ALPHA) L->smem_build = 1;

  /* B = (k / beta + 1) * S + k, if it fits comfortably. */
  const int64_t kb_ = p->k / L->beta + 1;
  int fits = L->kb <= 32 && L->kb + L->ib <= 64 && kb_ <= (INT64_MAX / 4) / L->S;
  if (fits) {
    L->bound = kb_ * L->S + p->k;
    fits = L->bound < navg;
  }
  L->delegate = fits;

  size_t total = 0;
  int ok = 1;
  if (!L->delegate) {
    TOPK_FORWARD_IF_ERROR(base->workspace_size(p, dev, &L->base_ws));
    L->total = L->base_ws;
    return TOPK_SUCCESS;
  }
  L->c_total = p->batch > L->N / L->bound ? L->N : p->batch * L->bound;
  const unsigned nondet = TOPK_NONDETERMINISTIC;
  if (p->row_offsets) {
    L->d_total = (L->N / L->S + p->batch) * L->beta;
    L->p1 = base_problem(p, L->d_total, 1, nondet);
  } else { /* uniform rows of ceil(n / S) x beta delegates: the base may take its one-block or cluster path */
    const int64_t per_row = (p->n + L->S - 1) / L->S * L->beta;
    L->d_total = p->batch * per_row;
    L->p1 = base_problem(p, per_row, 0, nondet);
  }
  /* the capacity bound B is rarely neared: AIR sizes its second step by the count it finds */
  L->p2 = base_problem(p, L->c_total, 1, nondet | (p->flags & TOPK_SORTED) | TOPK_INTERNAL_SHORT_ROWS);
  size_t w1 = 0, w2 = 0;
  char why[256];
  TOPK_RETURN_IF(!base->supports(&L->p1, dev, why, sizeof why), TOPK_ERR_UNSUPPORTED, "drtopk: base %s: %s",
                 base->name, why);
  TOPK_RETURN_IF(!base->supports(&L->p2, dev, why, sizeof why), TOPK_ERR_UNSUPPORTED, "drtopk: base %s: %s",
                 base->name, why);
  TOPK_FORWARD_IF_ERROR(base->workspace_size(&L->p1, dev, &w1));
  TOPK_FORWARD_IF_ERROR(base->workspace_size(&L->p2, dev, &w2));
  L->base_ws = w1 > w2 ? w1 : w2;
  const uint64_t bk = (uint64_t)p->batch * (uint64_t)p->k;
  L->fcap = kb_;
  ok = ok && add_part(&total, &L->tc, (uint64_t)p->batch, 8) && add_part(&total, &L->cnt, (uint64_t)p->batch, 8);
  ok = ok && add_part(&total, &L->nfull, (uint64_t)p->batch, 8) &&
       (uint64_t)L->fcap <= UINT64_MAX / (uint64_t)p->batch &&
       add_part(&total, &L->full, (uint64_t)p->batch * (uint64_t)L->fcap, 8);
  ok = ok && add_part(&total, &L->off1, (uint64_t)p->batch + 1, 8) && add_part(&total, &L->off2, (uint64_t)p->batch + 1, 8);
  ok = ok && add_part(&total, &L->dele, (uint64_t)L->d_total, 8) && add_part(&total, &L->conc, (uint64_t)L->c_total, 8);
  ok = ok && add_part(&total, &L->s1, bk, 8) && add_part(&total, &L->s2, bk, 8);
  ok = ok && add_part(&total, &L->bws, (uint64_t)(L->base_ws > 0 ? L->base_ws : 1), 1);
  TOPK_RETURN_IF(!ok, TOPK_ERR_OUT_OF_MEMORY, "drtopk: the workspace exceeds the address space");
  L->total = total + (TOPK_WS_ALIGN - 1);
  return TOPK_SUCCESS;
}

/* ------------------------------------------------------------------ launches */

typedef struct dt_events {
  cudaEvent_t ev[9]; /* start, after delegates, first, threshold, concat, second, emit; [7, 8]: build_reps
                        launches of the delegate kernel alone, before the run */
  int build_reps;
} dt_events;

static int grid_cap(const topk_device_info* dev, int64_t blocks, int per_sm) {
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
  const int64_t cap = (int64_t)sms * per_sm;
  if (blocks > cap) blocks = cap;
  return blocks < 1 ? 1 : (int)blocks;
}

/* Grid of the per-row kernels: rows over y (up to 65535, the kernels stride), blocks_per_row
 * over x, capped so that the whole grid stays within per_sm blocks per SM. */
static dim3 row_grid(const topk_device_info* dev, int64_t batch, int64_t blocks_per_row, int per_sm) {
  const unsigned gy = (unsigned)(batch < 65535 ? batch : 65535);
  int cap = grid_cap(dev, (int64_t)1 << 40, per_sm) / (int)gy;
  if (cap < 1) cap = 1;
  const int64_t gx = blocks_per_row < 1 ? 1 : (blocks_per_row < cap ? blocks_per_row : cap);
  return dim3((unsigned)gx, gy);
}

template <topk_dtype DT, int BETA>
static topk_status launch_build(const dt_plan* L, const dt_params& P, const topk_device_info* dev, cudaStream_t s) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  const int64_t slots_row = P.n / L->S + 2; /* the longest row's slots (n: whole buffer with offsets) */
  /* Both kernels stride over their work with more blocks than fit (32 per SM): blocks that
   * finish early are replaced, which balances the few subranges per warp of large alphas (a
   * grid of exactly the resident blocks measured 1-3 % slower for the shared-memory kernel,
   * 2-15 % for the warp-centric one). */
  if (L->smem_build) {
    /* 4 warps x 32 subranges per block; alpha 5..DT_SMEM_MAX_ALPHA */
    const size_t smem = (size_t)dt_smem_build_bytes(L->alpha, (int)sizeof(RawT));
    const dim3 grid = row_grid(dev, P.batch, (slots_row + 127) / 128, 32);
    switch (L->alpha) {
      case 5: dt_delegate_smem_kernel<DT, BETA, 5><<<grid, DT_SMEM_THREADS, smem, s>>>(P); break;
      case 6: dt_delegate_smem_kernel<DT, BETA, 6><<<grid, DT_SMEM_THREADS, smem, s>>>(P); break;
      case 7: dt_delegate_smem_kernel<DT, BETA, 7><<<grid, DT_SMEM_THREADS, smem, s>>>(P); break;
      case 8: dt_delegate_smem_kernel<DT, BETA, 8><<<grid, DT_SMEM_THREADS, smem, s>>>(P); break;
      case 9: dt_delegate_smem_kernel<DT, BETA, 9><<<grid, DT_SMEM_THREADS, smem, s>>>(P); break;
      case 10: dt_delegate_smem_kernel<DT, BETA, 10><<<grid, DT_SMEM_THREADS, smem, s>>>(P); break;
      default: return topk_fail(TOPK_ERR_INTERNAL, "drtopk: shared-memory delegates for alpha %d", L->alpha);
    }
    TOPK_CUDA_TRY_LAUNCH("dt_delegate_smem_kernel");
  } else {
    dt_delegate_warp_kernel<DT, BETA><<<row_grid(dev, P.batch, (slots_row + 7) / 8, 32), DT_THREADS, 0, s>>>(P);
    TOPK_CUDA_TRY_LAUNCH("dt_delegate_warp_kernel");
  }
  return TOPK_SUCCESS;
}

template <topk_dtype DT, int BETA>
static topk_status launch_concat(const dt_plan* L, const dt_params& P, const topk_device_info* dev, cudaStream_t s) {
  const int64_t groups = (P.n / L->S + 2 + 31) / 32;
  dt_concat_kernel<DT, BETA><<<row_grid(dev, P.batch, (groups + 7) / 8, 32), DT_THREADS, 0, s>>>(P);
  TOPK_CUDA_TRY_LAUNCH("dt_concat_kernel");
  return TOPK_SUCCESS;
}

/* The full subranges' scan: (subrange, chunk) items, 8 warps per block. */
template <topk_dtype DT>
static topk_status launch_full(const dt_plan* L, const dt_params& P, const topk_device_info* dev, cudaStream_t s) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  const int64_t ch = 32 * (16 / (int64_t)sizeof(RawT)) * DT_UNROLL;
  const int64_t items = L->fcap * ((L->S + ch - 1) / ch);
  dt_full_kernel<DT><<<row_grid(dev, P.batch, (items + 7) / 8, 16), DT_THREADS, 0, s>>>(P);
  TOPK_CUDA_TRY_LAUNCH("dt_full_kernel");
  return TOPK_SUCCESS;
}

static topk_status record(const dt_events* E, int i, cudaStream_t s) {
  if (E) TOPK_CUDA_TRY(cudaEventRecord(E->ev[i], s));
  return TOPK_SUCCESS;
}

template <topk_dtype DT, int BETA>
static topk_status run_steps(const topk_args* a, const dt_plan* L, char* base, cudaStream_t s, const dt_events* E) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  const topk_device_info* dev = a->dev;
  dt_params P;
  memset(&P, 0, sizeof P);
  P.in = a->in;
  P.offsets = a->p.row_offsets;
  P.n = a->p.n;
  P.ld = a->p.row_offsets ? 0 : a->p.ld;
  P.batch = a->p.batch;
  P.k = a->p.k;
  P.smallest = (a->p.flags & TOPK_SMALLEST) != 0;
  P.alpha = L->alpha;
  P.beta = L->beta;
  P.ib = L->ib;
  P.imask = (1ull << L->ib) - 1ull;
  P.bound = L->bound;
  P.dele = (dt_u64*)(base + L->dele);
  P.conc = (dt_u64*)(base + L->conc);
  P.tc = (dt_u64*)(base + L->tc);
  P.cnt = (dt_u64*)(base + L->cnt);
  P.nfull = (dt_u64*)(base + L->nfull);
  P.full = (int64_t*)(base + L->full);
  P.fcap = L->fcap;
  P.off1 = (int64_t*)(base + L->off1);
  P.off2 = (int64_t*)(base + L->off2);
  P.s1 = (const dt_u64*)(base + L->s1);
  P.s2 = (const dt_u64*)(base + L->s2);
  P.values = a->values;
  P.indices = a->p.index_type == TOPK_INDEX_NONE ? NULL : a->indices;
  P.index_type = (int)a->p.index_type;
  P.worst_bits = topk_worst_value_bits(a->p.dtype, P.smallest);
  void* bws = base + L->bws;

  if (E && E->build_reps > 0) { /* the delegate kernel in isolation: back to back, no gaps or prep kernel inside */
    dt_prep_kernel<<<grid_cap(dev, (P.batch + DT_THREADS - 1) / DT_THREADS, 4), DT_THREADS, 0, s>>>(P);
    TOPK_CUDA_TRY_LAUNCH("dt_prep_kernel");
    TOPK_FORWARD_IF_ERROR((launch_build<DT, BETA>(L, P, dev, s))); /* untimed: warms the launch */
    TOPK_FORWARD_IF_ERROR(record(E, 7, s));
    for (int i = 0; i < E->build_reps; ++i) TOPK_FORWARD_IF_ERROR((launch_build<DT, BETA>(L, P, dev, s)));
    TOPK_FORWARD_IF_ERROR(record(E, 8, s));
  }
  TOPK_FORWARD_IF_ERROR(record(E, 0, s));
  dt_prep_kernel<<<grid_cap(dev, (P.batch + DT_THREADS - 1) / DT_THREADS, 4), DT_THREADS, 0, s>>>(P);
  TOPK_CUDA_TRY_LAUNCH("dt_prep_kernel");
  TOPK_FORWARD_IF_ERROR((launch_build<DT, BETA>(L, P, dev, s)));
  TOPK_FORWARD_IF_ERROR(record(E, 1, s));

  topk_args a1;
  memset(&a1, 0, sizeof a1);
  a1.p = L->p1;
  if (L->p1.row_offsets) a1.p.row_offsets = P.off1;
  a1.in = P.dele;
  a1.values = (void*)P.s1;
  a1.indices = NULL;
  a1.dev = dev;
  TOPK_FORWARD_IF_ERROR(L->base->run(&a1, bws, L->base_ws, (topk_stream)s));
  TOPK_FORWARD_IF_ERROR(record(E, 2, s));

  dt_threshold_kernel<<<grid_cap(dev, P.batch, 8), DT_THREADS, 0, s>>>(P);
  TOPK_CUDA_TRY_LAUNCH("dt_threshold_kernel");
  TOPK_FORWARD_IF_ERROR(record(E, 3, s));

  TOPK_FORWARD_IF_ERROR((launch_concat<DT, BETA>(L, P, dev, s)));
  TOPK_FORWARD_IF_ERROR((launch_full<DT>(L, P, dev, s)));
  {
    const int64_t per_row = P.batch > 1 ? (L->bound + DT_THREADS - 1) / DT_THREADS : 1;
    dt_finish_concat_kernel<<<row_grid(dev, P.batch, per_row, 16), DT_THREADS, 0, s>>>(P);
    TOPK_CUDA_TRY_LAUNCH("dt_finish_concat_kernel");
  }
  TOPK_FORWARD_IF_ERROR(record(E, 4, s));

  topk_args a2;
  memset(&a2, 0, sizeof a2);
  a2.p = L->p2;
  a2.p.row_offsets = P.off2;
  a2.in = P.conc;
  a2.values = (void*)P.s2;
  a2.indices = NULL;
  a2.dev = dev;
  TOPK_FORWARD_IF_ERROR(L->base->run(&a2, bws, L->base_ws, (topk_stream)s));
  TOPK_FORWARD_IF_ERROR(record(E, 5, s));

  dt_emit_kernel<RawT><<<grid_cap(dev, (P.batch * P.k + DT_THREADS - 1) / DT_THREADS, 16), DT_THREADS, 0, s>>>(P);
  TOPK_CUDA_TRY_LAUNCH("dt_emit_kernel");
  TOPK_FORWARD_IF_ERROR(record(E, 6, s));
  return TOPK_SUCCESS;
}

template <topk_dtype DT>
static topk_status run_beta(const topk_args* a, const dt_plan* L, char* base, cudaStream_t s, const dt_events* E) {
  switch (L->beta) {
    case 1: return run_steps<DT, 1>(a, L, base, s, E);
    case 2: return run_steps<DT, 2>(a, L, base, s, E);
    case 3: return run_steps<DT, 3>(a, L, base, s, E);
    default: return run_steps<DT, 4>(a, L, base, s, E);
  }
}

/* The whole layer (or the plain base) for a planned problem. */
static topk_status run_planned(const topk_args* a, const dt_plan* L, void* workspace, size_t workspace_bytes,
                               topk_stream stream, const dt_events* E) {
  if (!L->delegate) return L->base->run(a, workspace, workspace_bytes, stream);
  TOPK_RETURN_IF(!workspace || workspace_bytes < L->total, TOPK_ERR_WORKSPACE,
                 "drtopk: workspace of %zu bytes given, %zu needed", workspace ? workspace_bytes : (size_t)0,
                 L->total);
  char* base = topk_ws_base(workspace);
  cudaStream_t s = (cudaStream_t)stream;
  switch (a->p.dtype) { /* 16- and 32-bit keys only: the plan takes the plain base for 64-bit keys */
    case TOPK_F32: return run_beta<TOPK_F32>(a, L, base, s, E);
    case TOPK_F16: return run_beta<TOPK_F16>(a, L, base, s, E);
    case TOPK_BF16: return run_beta<TOPK_BF16>(a, L, base, s, E);
    case TOPK_I32: return run_beta<TOPK_I32>(a, L, base, s, E);
    case TOPK_U32: return run_beta<TOPK_U32>(a, L, base, s, E);
    default: break;
  }
  return topk_fail(TOPK_ERR_INTERNAL, "drtopk: delegate path planned for dtype %d", (int)a->p.dtype);
}

/* ------------------------------------------------------------------ ops */

static int dt_supports(const topk_algo_ops* base, const topk_problem* p, const topk_device_info* dev, char* why,
                       size_t why_len) {
  if (topk_dtype_size(p->dtype) == 0) {
    if (why && why_len) snprintf(why, why_len, "unknown dtype %d", (int)p->dtype);
    return 0;
  }
  dt_plan L;
  if (plan_layout(p, dev, base, &L) != TOPK_SUCCESS) {
    if (why && why_len) snprintf(why, why_len, "%s", topk_error_detail());
    return 0;
  }
  if (!L.delegate) return base->supports(p, dev, why, why_len);
  return 1;
}

static topk_status dt_workspace_size(const topk_algo_ops* base, const topk_problem* p, const topk_device_info* dev,
                                     size_t* bytes) {
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  dt_plan L;
  TOPK_FORWARD_IF_ERROR(plan_layout(p, dev, base, &L));
  *bytes = L.total;
  return TOPK_SUCCESS;
}

static topk_status dt_run(const topk_algo_ops* base, const topk_args* a, void* workspace, size_t workspace_bytes,
                          topk_stream stream) {
  dt_plan L;
  TOPK_FORWARD_IF_ERROR(plan_layout(&a->p, a->dev, base, &L));
  return run_planned(a, &L, workspace, workspace_bytes, stream, NULL);
}

#define DT_OPS(NAME, ALGO, BASE)                                                                              \
  static int NAME##_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) { \
    return dt_supports(&BASE, p, dev, why, why_len);                                                         \
  }                                                                                                          \
  static topk_status NAME##_workspace(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {   \
    return dt_workspace_size(&BASE, p, dev, bytes);                                                          \
  }                                                                                                          \
  static topk_status NAME##_run(const topk_args* a, void* ws, size_t wsb, topk_stream stream) {              \
    return dt_run(&BASE, a, ws, wsb, stream);                                                                \
  }                                                                                                          \
  extern "C" const topk_algo_ops topk_algo_##NAME = {#NAME, ALGO, TOPK_BACKEND_CUDA, NAME##_supports,        \
                                                     NAME##_workspace, NAME##_run};

DT_OPS(drtopk_radix, TOPK_ALGO_DRTOPK_RADIX, topk_algo_air_radix)
DT_OPS(drtopk_bucket, TOPK_ALGO_DRTOPK_BUCKET, topk_algo_bucket)
DT_OPS(drtopk_bitonic, TOPK_ALGO_DRTOPK_BITONIC, topk_algo_bitonic)

/* ------------------------------------------------------------------ workload statistics */

extern "C" topk_status topk_drtopk_workload(const topk_problem* p, const void* in, void* out_values,
                                            void* out_indices, topk_drtopk_stats* st) {
  TOPK_RETURN_IF(!p || !in || !out_values || !st, TOPK_ERR_NULL_POINTER, "drtopk_workload: NULL argument");
  TOPK_RETURN_IF(p->row_offsets, TOPK_ERR_UNSUPPORTED, "drtopk_workload: uniform rows only");
  const topk_algo_ops* ops = topk_algo_find(TOPK_BACKEND_CUDA, p->algo);
  TOPK_RETURN_IF(!ops || (p->algo != TOPK_ALGO_DRTOPK_RADIX && p->algo != TOPK_ALGO_DRTOPK_BUCKET &&
                          p->algo != TOPK_ALGO_DRTOPK_BITONIC),
                 TOPK_ERR_UNSUPPORTED, "drtopk_workload: algo %d is not a drtopk algorithm", (int)p->algo);
  const topk_algo_ops* base = p->algo == TOPK_ALGO_DRTOPK_RADIX    ? &topk_algo_air_radix
                              : p->algo == TOPK_ALGO_DRTOPK_BUCKET ? &topk_algo_bucket
                                                                   : &topk_algo_bitonic;
  int ordinal = 0;
  topk_device_info dev;
  TOPK_FORWARD_IF_ERROR(topk_cuda_get_device(&ordinal));
  TOPK_FORWARD_IF_ERROR(topk_cuda_device_info(ordinal, &dev));
  topk_args a;
  memset(&a, 0, sizeof a);
  a.p = *p;
  if (a.p.ld == 0) a.p.ld = a.p.n;
  a.in = in;
  a.values = out_values;
  a.indices = out_indices;
  a.dev = &dev;
  dt_plan L;
  TOPK_FORWARD_IF_ERROR(plan_layout(&a.p, &dev, base, &L));
  memset(st, 0, sizeof *st);
  st->delegate_path = L.delegate;
  st->alpha = L.alpha;
  st->beta = L.beta;
  st->build_smem = L.smem_build;
  st->n_total = p->batch * p->n;
  st->full_subranges_bound = L.bound;

  void* ws = NULL;
  if (L.total > 0) TOPK_CUDA_TRY(cudaMalloc(&ws, L.total));
  dt_events E;
  memset(&E, 0, sizeof E);
  topk_status s = TOPK_SUCCESS;
  E.build_reps = 10;
  for (int i = 0; i < 9 && s == TOPK_SUCCESS; ++i) s = TOPK_CUDA_STATUS(cudaEventCreate(&E.ev[i]));
  if (s == TOPK_SUCCESS) {
    if (L.delegate) {
      s = run_planned(&a, &L, ws, L.total, NULL, &E);
    } else {
      s = TOPK_CUDA_STATUS(cudaEventRecord(E.ev[0], 0));
      if (s == TOPK_SUCCESS) s = run_planned(&a, &L, ws, L.total, NULL, NULL);
      for (int i = 1; i < 7 && s == TOPK_SUCCESS; ++i) s = TOPK_CUDA_STATUS(cudaEventRecord(E.ev[i], 0));
    }
  }
  if (s == TOPK_SUCCESS) s = TOPK_CUDA_STATUS(cudaDeviceSynchronize());
  if (s == TOPK_SUCCESS) {
    float t[6];
    for (int i = 0; i < 6 && s == TOPK_SUCCESS; ++i) s = TOPK_CUDA_STATUS(cudaEventElapsedTime(&t[i], E.ev[i], E.ev[i + 1]));
    if (s == TOPK_SUCCESS) {
      st->ms_delegates = t[0];
      st->ms_first = t[1];
      st->ms_threshold = t[2];
      st->ms_concat = t[3];
      st->ms_second = t[4];
      st->ms_emit = t[5];
      s = TOPK_CUDA_STATUS(cudaEventElapsedTime(&st->ms_total, E.ev[0], E.ev[6]));
    }
    if (s == TOPK_SUCCESS && L.delegate) {
      float t78 = 0;
      s = TOPK_CUDA_STATUS(cudaEventElapsedTime(&t78, E.ev[7], E.ev[8]));
      st->ms_delegate_kernel = t78 / (float)E.build_reps;
    }
  }
  if (s == TOPK_SUCCESS && L.delegate) {
    const int64_t per_row = (p->n + L.S - 1) / L.S;
    st->delegate_size = p->batch * per_row * L.beta;
    dt_u64* cnt = (dt_u64*)malloc((size_t)p->batch * sizeof(dt_u64));
    if (!cnt) s = topk_fail(TOPK_ERR_OUT_OF_MEMORY, "drtopk_workload: host buffer");
    char* b = topk_ws_base(ws);
    if (s == TOPK_SUCCESS)
      s = TOPK_CUDA_STATUS(cudaMemcpy(cnt, b + L.cnt, (size_t)p->batch * sizeof(dt_u64), cudaMemcpyDeviceToHost));
    for (int64_t r = 0; s == TOPK_SUCCESS && r < p->batch; ++r) st->concat_size += (int64_t)cnt[r];
    free(cnt);
  }
  for (int i = 0; i < 9; ++i)
    if (E.ev[i]) cudaEventDestroy(E.ev[i]);
  if (ws) cudaFree(ws);
  return s;
}
