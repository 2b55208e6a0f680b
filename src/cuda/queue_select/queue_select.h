/*
 * queue_select.h: what WarpSelect, BlockSelect and GridSelect (warp_select.cu,
 * block_select.cu, grid_select.cu) share on the host side: the kernel parameters,
 * the k buckets and their queue shapes, the key parameters of a dtype, the common
 * supports() checks, and the declarations of the per-(bucket, key width) launchers
 * that CMake instantiates in generated files (queue_select.cmake).
 *
 * Buckets: the warp queue holds CAP = k rounded up to the next of QS_CAPS: every
 * multiple of 32 up to 128, then steps of 1.5x and 4/3x (a queue at most 1.5x k
 * past 128; odd register counts use 004's odd-size networks, topk_device/merge.cuh).
 * Thread-queue length T per bucket (004 sec. 4.3 gives 2, 3, 4, 8 for k <= 32, 128,
 * 256, 1024), re-measured on the H100 (session 32, docs/perf-notes.md):
 *   CAP                      32  64  96  128  192  256  384 .. 2048
 *   T, WarpSelect             2   3   3    4    4    4    8 ..    8
 *   T, BlockSelect, GridSelect's merge
 *                             2   4   4    4    4    4    8 ..    8
 * (T = 3 against 4: WarpSelect 1.02-1.10x faster at CAP 64, even at 96, 0.95-0.98x at
 * 128; BlockSelect 0.85-0.99x. A measurement build sets one T for CAP 64..128 in every
 * kernel: cmake -DTOPK_QS_TQ_MID=T, i.e. QS_TQ_MID.)
 * Warps per block (BlockSelect, GridSelect): 8 up to CAP 256, 4 above (registers:
 * the warp queue is CAP / 32 pairs per lane, 64 at CAP 2048; shared memory for the
 * block merge is warps / 2 queues).
 *
 * Rows: indices are 32-bit and row-relative inside the queues, and 0xFFFFFFFF marks
 * an empty slot, so rows (and, with offsets, the whole buffer) must be shorter than
 * 2^32 - 1 elements: supports() refuses longer ones.
 */
#ifndef TOPK_QUEUE_SELECT_H
#define TOPK_QUEUE_SELECT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "../../algo.h"
#include "../../common/keys.h"
#include "topk_device/merge.cuh"

#define QS_MIN_CAP 32
#define QS_MAX_CAP 2048
#define QS_NUM_CAPS 12 /* QS_CAPS below; queue_select.cmake instantiates the same list */
#define QS_CAPS {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048}
/* BlockSelect past the register queues: a queue in shared memory (smem_queue_kernels.cuh). */
#define QS_SMEM_CAPS {4096, 8192}
#define QS_SMEM_NUM_CAPS 2
#define QS_SMEM_MAX_CAP 8192

#define QS_MAX_ROW 0xFFFFFFFEll /* longest row (and offsets buffer): indices < 0xFFFFFFFF */

/* Everything a queue-select kernel needs; filled once per call by qs_fill_params. */
typedef struct qs_params {
  const void*        in;
  const int64_t*     offsets;     /* device; NULL: uniform rows */
  int64_t            n, ld;       /* ld = 0 with offsets */
  int64_t            batch;
  int64_t            row0;        /* first row of this launch */
  int                k;
  int                index_type;  /* topk_index */
  topk_dq_key_params kp;
  unsigned long long worst_bits;  /* padding value */
  void*              values;
  void*              indices;     /* NULL for TOPK_INDEX_NONE */
  /* GridSelect only */
  void*              cand;        /* batch x bpr x k pairs; NULL: one block per row writes the outputs */
  int64_t            bpr;         /* blocks per row */
} qs_params;

/* Thread-queue length and warps per block of a bucket (the table above). */
__host__ __device__ constexpr int qs_thread_q(int cap, bool warp_per_row) {
#ifdef QS_TQ_MID
  return cap <= 32 ? 2 : (cap <= 128 ? QS_TQ_MID : (cap <= 256 ? 4 : 8));
#else
  return cap <= 32 ? 2 : (warp_per_row && cap <= 96 ? 3 : (cap <= 256 ? 4 : 8));
#endif
}
__host__ __device__ constexpr int qs_block_warps(int cap) { return cap <= 256 ? 8 : 4; }
enum { QS_WARP_ROWS_PER_BLOCK = 4 }; /* WarpSelect: one warp per row, 4 rows per block */

/* Bucket index (0 for CAP 32) of k, or -1 if k > QS_MAX_CAP. TOPK_QS_POW2_CAPS=1 (a
 * measurement knob) skips the caps that are not powers of two, as before the odd-size
 * networks. */
static inline int qs_bucket(int64_t k) {
  static const int caps[QS_NUM_CAPS] = QS_CAPS;
  const char* env = topk_env("TOPK_QS_POW2_CAPS");
  const int pow2_only = env && env[0] == '1';
  for (int b = 0; b < QS_NUM_CAPS; ++b)
    if (k <= caps[b] && (!pow2_only || (caps[b] & (caps[b] - 1)) == 0)) return b;
  return -1;
}

/* Key parameters of a dtype and direction (same order as src/common/keys.h). */
static inline topk_dq_key_params qs_key_params(topk_dtype dt, int smallest) {
  topk_dq_key_params kp;
  const int bits = topk_key_bits(dt);
  const unsigned long long ones = bits == 64 ? ~0ull : ((1ull << bits) - 1ull);
  const unsigned long long sign = 1ull << (bits - 1);
  const int is_float = dt == TOPK_F16 || dt == TOPK_BF16 || dt == TOPK_F32 || dt == TOPK_F64;
  const int is_signed = is_float || dt == TOPK_I32 || dt == TOPK_I64;
  kp.float_mask = is_float ? ones : 0ull;
  kp.sign_xor = is_signed ? sign : 0ull;
  /* +inf bits; integers: all ones, which nothing exceeds */
  kp.nan_above = dt == TOPK_F16 ? 0x7C00ull
               : dt == TOPK_BF16 ? 0x7F80ull
               : dt == TOPK_F32 ? 0x7F800000ull
               : dt == TOPK_F64 ? 0x7FF0000000000000ull
                                : ones;
  kp.flip = smallest ? ones : 0ull;
  return kp;
}

/* The checks all three share; max_k: QS_MAX_CAP, or QS_SMEM_MAX_CAP for BlockSelect.
 * @return 1 if supported, else 0 with why. */
static inline int qs_supports_common(const char* name, const topk_problem* p, int64_t max_k, char* why,
                                     size_t why_len) {
  if (topk_key_bits(p->dtype) == 0) {
    if (why && why_len) snprintf(why, why_len, "%s: unknown dtype %d", name, (int)p->dtype);
    return 0;
  }
  if (p->k > max_k) {
    if (why && why_len)
      snprintf(why, why_len, "%s: k=%lld exceeds %lld, the largest %s queue built (use air_radix)", name,
               (long long)p->k, (long long)max_k, max_k > QS_MAX_CAP ? "shared-memory" : "register");
    return 0;
  }
  if (p->n > QS_MAX_ROW) {
    if (why && why_len)
      snprintf(why, why_len, "%s: %s of %lld elements (queues index rows with 32 bits: at most 2^32 - 2)", name,
               p->row_offsets ? "an offsets buffer" : "rows", (long long)p->n);
    return 0;
  }
  return 1;
}

/* Fills the parameters of a validated call (GridSelect sets cand and bpr itself). */
static inline qs_params qs_fill_params(const topk_args* a) {
  qs_params P;
  P.in = a->in;
  P.offsets = a->p.row_offsets;
  P.n = a->p.n;
  P.ld = a->p.row_offsets ? 0 : a->p.ld;
  P.batch = a->p.batch;
  P.row0 = 0;
  P.k = (int)a->p.k;
  P.index_type = (int)a->p.index_type;
  const int smallest = (a->p.flags & TOPK_SMALLEST) != 0;
  P.kp = qs_key_params(a->p.dtype, smallest);
  P.worst_bits = topk_worst_value_bits(a->p.dtype, smallest);
  P.values = a->values;
  P.indices = a->p.index_type == TOPK_INDEX_NONE ? NULL : a->indices;
  P.cand = NULL;
  P.bpr = 1;
  return P;
}

/* ---- launchers, instantiated per (bucket, key width) in generated files ---- */

typedef topk_status (*qs_launch_fn)(const qs_params& P, cudaStream_t stream);

template <int KB, int CAP> topk_status qs_launch_warp(const qs_params& P, cudaStream_t stream);
template <int KB, int CAP> topk_status qs_launch_block(const qs_params& P, cudaStream_t stream);
template <int KB, int CAP> topk_status qs_launch_grid(const qs_params& P, cudaStream_t stream);
template <int KB, int CAP> topk_status qs_launch_block_smem(const qs_params& P, cudaStream_t stream);

/* Table row of one bucket: the launchers for key widths 16, 32, 64. */
#define QS_TABLE_ROW_(FN, CAP) {FN<16, CAP>, FN<32, CAP>, FN<64, CAP>}
#define QS_TABLE(FN)                                                                       \
  {QS_TABLE_ROW_(FN, 32),   QS_TABLE_ROW_(FN, 64),   QS_TABLE_ROW_(FN, 96),   QS_TABLE_ROW_(FN, 128),  \
   QS_TABLE_ROW_(FN, 192),  QS_TABLE_ROW_(FN, 256),  QS_TABLE_ROW_(FN, 384),  QS_TABLE_ROW_(FN, 512),  \
   QS_TABLE_ROW_(FN, 768),  QS_TABLE_ROW_(FN, 1024), QS_TABLE_ROW_(FN, 1536), QS_TABLE_ROW_(FN, 2048)}

/* Column of a key width in the table: 0, 1, 2 for 16, 32, 64 bits. */
static inline int qs_width_col(topk_dtype dt) {
  const int bits = topk_key_bits(dt);
  return bits == 16 ? 0 : (bits == 32 ? 1 : 2);
}

#endif /* TOPK_QUEUE_SELECT_H */
