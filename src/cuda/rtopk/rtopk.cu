/*
 * rtopk.cu: RTop-K (paper 001), the host side: bucket choice and launch. The
 * kernel, the exact search, early stopping and the invariants are described in
 * rtopk_kernels.cuh.
 *
 * Buckets: the row capacity R is the smallest of 128, 256, 512, 768, 1024, 2048, 4096
 * that holds the longest row (n for uniform rows; with row_offsets the whole
 * buffer n, since the longest row is not known on the host without a copy: rows
 * given by offsets are supported when n <= 4096). R <= 1024 keeps the row in
 * registers (R / 32 keys per lane; blocks of 8 warps), longer rows live in shared
 * memory (RTOPK_SMEM_ROW_BUDGET bytes of rows per block). Instantiations: 4 (key
 * width, value-space kind) pairs x 7 buckets = 28: 16-bit keys with fp32 reals (F16
 * and BF16, told apart by a uniform flag), 32-bit keys with fp32 reals (F32), 32-bit
 * keys with double reals (I32, U32) and 64-bit keys with double reals (F64, I64,
 * U64); the direction and, within a kind, the dtype are runtime parameters of the
 * key transform (rtopk_xf). Plus two rows a warp (row_lanes) for the three pairs of
 * <= 32-bit keys in the 128, 256 and 512 buckets: 9.
 *
 * Register rows (R <= 1024) stage each row's min(k, R) results in shared memory (key and
 * position, rtopk_entry) and write them from there (TOPK_SORTED: ranked first); shared-memory
 * rows stage them only for TOPK_SORTED. Blocks shrink to keep that under 48 KB where they can,
 * and opt in to more shared memory otherwise.
 *
 * Knob: TOPK_RTOPK_SEARCH=interp (default) | value | key picks the exact mode's
 * thresholds (interpolation, the paper's value midpoints, key midpoints), so that
 * the three can be timed against each other; all three are exact.
 * TOPK_RTOPK_PAPER_BREAK=1: early stopping ends a search that hit count == k
 * without moving min, as the paper's Algorithm 2 line 11 reads (approximate even on
 * a hit); for bench/rtopk_accuracy only.
 *
 * Short rows with small k (rows of <= 512 with k <= 32, and 16-bit rows of <= 1024 at k = 17..32;
 * enough rows for the SMs; exact mode, 16- and 32-bit keys) go to a few lanes per row instead
 * (rtopk_thread_rows.cuh, thread_group).
 *
 * No workspace. run() never allocates, synchronises or copies to the host.
 * Longer rows (n > 4096): supports() refuses; they are another algorithm's job.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algo.h"
#include "../common/cuda_check.h"
#include "../common/occupancy.h"
#include "rtopk.h"
#include "rtopk_kernels.cuh"
#include "rtopk_thread_argmax.cuh"
#include "rtopk_thread_rows.cuh"

static const size_t RTOPK_SMEM_DEFAULT = 48 * 1024; /* per block without the opt-in */

/* Knob for measurement (environment, read at every call): TOPK_RTOPK_SEARCH=interp|value|key,
 * the exact mode's choice of thresholds (rtopk_kernels.cuh); default interp. */
static int env_search(void) {
  const char* s = topk_env("TOPK_RTOPK_SEARCH");
  if (s && strcmp(s, "value") == 0) return RTOPK_SEARCH_VALUE;
  if (s && strcmp(s, "key") == 0) return RTOPK_SEARCH_KEY;
  return RTOPK_SEARCH_INTERP;
}

typedef struct rtopk_plan {
  int      es;         /* element (= key) bytes */
  int      cap;        /* R: row capacity of the bucket */
  int      lanes;      /* lanes per row: 32, or 16 (two rows a warp; row_lanes) */
  int      warps;      /* warps per block */
  int      rows_per_warp; /* 32 / lanes */
  unsigned row_smem;   /* per row slot */
  unsigned warp_smem;  /* per row slot, row + sort slices */
  int      sort_cap;
  int      wide_cap;   /* rtopk_params::wide_cap (without the iteration record) */
  int      ordinal;    /* the device (rtopk_launch sets it): the launch's per-device caches */
  size_t   block_smem;
} rtopk_plan;

static size_t align16(size_t x) { return (x + 15) & ~(size_t)15; }

/* Two rows a warp, 16 lanes each (rtopk_kernel's L = 16), for register rows of <= RTOPK_HALF_MAX
 * with keys of <= 32 bits (TOPK_SORTED only for k <= RTOPK_SORT_RANK_MAX, which a half ranks):
 * what a row costs whatever its length (the threshold guesses of every step, the reductions
 * and scans, the finish's network, the output loop) is then paid once for two rows (ncu on
 * 2^18 x 256, k = 16: bench/results/md/h100_ncu_rtopk_s15.md; 16 lanes: 669 warp instructions
 * a row against 767). Only with enough rows to fill the SMs several times: a half holds twice
 * the keys a lane, so a row takes longer from load to store, which too few rows do not hide.
 * Fitted on the H100 (f32, normal, k = 16 and 64, both forced; bench/results/
 * h100_rtopk_lanes_rows_*_s15.csv and h100_rtopk_lanes_ab_*_s15.csv): the 128 bucket gains from
 * 4096 rows (1.05x; 2048: 0.91x), the 256 bucket from 16384 (1.01x; 8192: 0.96x; 32768: 1.05x;
 * 65536: 1.07x), and 2^18 x 512 loses at every k (0.95-0.99x), so 512 keeps 32 lanes.
 * TOPK_RTOPK_LANES=16|32 forces either where both can run (for measurement). */
enum {
  RTOPK_HALF_MAX = 256,            /* the largest bucket that takes two rows a warp */
  RTOPK_HALF_BUILT = 512,          /* the largest bucket instantiated with L = 16 (for TOPK_RTOPK_LANES) */
  RTOPK_HALF_ROWS_PER_SM_128 = 32, /* fewer rows per SM than this: a warp a row (128 bucket) */
  RTOPK_HALF_ROWS_PER_SM = 128     /* the same, 256 bucket */
};
static int row_lanes(const topk_problem* p, int es, int cap, int sm_count) {
  if (es > 4 || cap > RTOPK_HALF_BUILT || ((p->flags & TOPK_SORTED) && p->k > RTOPK_SORT_RANK_MAX)) return 32;
  const char* e = topk_env("TOPK_RTOPK_LANES");
  if (e && strcmp(e, "32") == 0) return 32;
  if (e && strcmp(e, "16") == 0) return 16;
  const int64_t sms = sm_count > 0 ? sm_count : 132;
  const int64_t rows_per_sm = cap <= 128 ? RTOPK_HALF_ROWS_PER_SM_128 : RTOPK_HALF_ROWS_PER_SM;
  return cap <= RTOPK_HALF_MAX && p->batch >= rows_per_sm * sms ? 16 : 32;
}

/* Sorted register rows with 64 < k <= 256 (the register network's sizes, keys of <= 32 bits, a
 * warp a row, exact mode): the search may stop at any lo with count(key >= lo) <= the network's
 * capacity, 128 or 256 (rtopk_kernels.cuh, "sorted output from a wider threshold"). 0: off, also
 * where that capacity would not exceed k or the row. TOPK_RTOPK_WIDE=0 turns it off (for
 * measurement). */
static int wide_cap(const topk_problem* p, int es, int cap, int lanes) {
  if (!(p->flags & TOPK_SORTED) || p->max_iter != 0 || es > 4 || cap > RTOPK_REG_MAX || lanes != 32 ||
      p->k <= RTOPK_SORT_RANK_MAX || p->k > RTOPK_SORT_REG_MAX)
    return 0;
  const char* e = topk_env("TOPK_RTOPK_WIDE");
  if (e && strcmp(e, "0") == 0) return 0;
  int w = p->k <= RTOPK_SORT_REG_HALF ? RTOPK_SORT_REG_HALF : RTOPK_SORT_REG_MAX; /* rtopk_warp_sort's two sizes */
  if (w > cap) w = cap;
  return w > p->k ? w : 0;
}

/* Shape only, so supports() and run() agree. @return 0 if no bucket holds the rows. */
static int make_plan(const topk_problem* p, int sm_count, rtopk_plan* L) {
  memset(L, 0, sizeof *L);
  L->es = (int)topk_dtype_size(p->dtype);
  if (L->es != 2 && L->es != 4 && L->es != 8) return 0;
  if (p->n > RTOPK_MAX_N) return 0;
  /* 768 between 512 and 1024: rows of 513..768 (a common hidden size) would count a
   * quarter of padding in every search step of the 1024 bucket */
  static const int caps[] = {128, 256, 512, 768, 1024, 2048, 4096};
  int ci = 0;
  while (caps[ci] < p->n) ++ci;
  L->cap = caps[ci];
  const int smem_row = L->cap > RTOPK_REG_MAX;
  L->row_smem = smem_row ? (unsigned)(L->cap * L->es) : 0u;
  L->lanes = row_lanes(p, L->es, L->cap, sm_count);
  L->rows_per_warp = 32 / L->lanes;
  L->warps = RTOPK_REG_WARPS;
  if (smem_row) {
    L->warps = RTOPK_SMEM_ROW_BUDGET / (L->cap * L->es);
    if (L->warps < 1) L->warps = 1;
    if (L->warps > RTOPK_REG_WARPS) L->warps = RTOPK_REG_WARPS;
  }
  /* register rows always stage their results (the kernel writes them from there); shared-
   * memory rows only for the sort */
  if (!smem_row || (p->flags & TOPK_SORTED)) {
    L->sort_cap = (int)(p->k < L->cap ? p->k : L->cap);
    L->wide_cap = wide_cap(p, L->es, L->cap, L->lanes);
    /* rtopk_entry: a (key, position) composite, 4, 8 or 16 bytes */
    const size_t entry = L->es == 2 ? 4 : L->es == 4 ? 8 : 16;
    /* register rows: at least RTOPK_FINISH entries, the exact search's finish stages its
     * candidates there */
    size_t entries = !smem_row && L->sort_cap < RTOPK_FINISH ? RTOPK_FINISH : (size_t)L->sort_cap;
    if ((size_t)L->wide_cap > entries) entries = (size_t)L->wide_cap;
    const size_t sort_bytes = align16(entries * entry);
    L->warp_smem = (unsigned)(L->row_smem + sort_bytes);
    /* fewer rows per block rather than the opt-in, while a block still has one row */
    while (L->warps > 1 && (size_t)L->warps * L->rows_per_warp * L->warp_smem > RTOPK_SMEM_DEFAULT) --L->warps;
  } else {
    L->warp_smem = L->row_smem;
  }
  L->block_smem = (size_t)L->warps * L->rows_per_warp * L->warp_smem;
  return 1;
}

template <typename KeyT, int R, int KIND>
static topk_status launch_bucket(const rtopk_plan* L, const rtopk_params& P, cudaStream_t stream) {
  /* one storage kind per bucket, so each (width, R, kind) instantiates one kernel, one more with
   * two rows a warp where row_lanes can ask for it, and one for the wider threshold of sorted
   * register rows (wide_cap) */
  void (*kernel)(rtopk_params) = rtopk_kernel<KeyT, R, (R > RTOPK_REG_MAX), KIND, 32>;
  int variant = 0; /* which of the bucket's kernels: its shared-memory limit is set once (below) */
  if constexpr (R <= RTOPK_HALF_BUILT && sizeof(KeyT) <= 4) {
    if (L->lanes == 16) kernel = rtopk_kernel<KeyT, R, false, KIND, 16>, variant = 1;
  }
  if constexpr (R <= RTOPK_REG_MAX && R >= 128 && sizeof(KeyT) <= 4) {
    if (P.wide_cap > 0) kernel = rtopk_kernel<KeyT, R, false, KIND, 32, true>, variant = 2; /* wide_cap: lanes == 32 */
  }
  if (L->block_smem > RTOPK_SMEM_DEFAULT) {
    static int once[3][TOPK_OCC_DEVICES]; /* common/occupancy.h */
    TOPK_CUDA_TRY(topk_smem_limit_once(once[variant], L->ordinal, (const void*)kernel));
  }
  const int64_t rows_per_block = (int64_t)L->warps * L->rows_per_warp;
  int64_t blocks = (P.batch + rows_per_block - 1) / rows_per_block;
  if (blocks > INT_MAX) blocks = INT_MAX; /* the kernel strides over the rest */
  kernel<<<(unsigned)blocks, (unsigned)(32 * L->warps), L->block_smem, stream>>>(P);
  TOPK_CUDA_TRY_LAUNCH("rtopk_kernel");
  return TOPK_SUCCESS;
}

template <typename KeyT, int KIND>
static topk_status launch_width(const rtopk_plan* L, const rtopk_params& P, cudaStream_t stream) {
  switch (L->cap) {
    case 128: return launch_bucket<KeyT, 128, KIND>(L, P, stream);
    case 256: return launch_bucket<KeyT, 256, KIND>(L, P, stream);
    case 512: return launch_bucket<KeyT, 512, KIND>(L, P, stream);
    case 768: return launch_bucket<KeyT, 768, KIND>(L, P, stream);
    case 1024: return launch_bucket<KeyT, 1024, KIND>(L, P, stream);
    case 2048: return launch_bucket<KeyT, 2048, KIND>(L, P, stream);
    case 4096: return launch_bucket<KeyT, 4096, KIND>(L, P, stream);
    default: return topk_fail(TOPK_ERR_INTERNAL, "rtopk: no bucket of %d", L->cap);
  }
}

/* k = 1 (k = 2 for 16-bit keys) on the thread path: rtopk_argmax_kernel (rtopk_thread_argmax.cuh),
 * one group of G lanes a row, a block for every RTOPK_ARGMAX_BLOCK / G rows. TOPK_RTOPK_ARGMAX=0 (or
 * a queue forced by TOPK_RTOPK_QUEUE) takes the queue kernel instead (for measurement).
 * k = 2 with 16-bit keys: graph replay, 65536 rows, normal, same call (session 37, call 3):
 * bf16 x 64 / 128 / 256 5.83 / 9.40 / 17.26 us against the queue kernel's 6.60 / 10.12 / 18.67
 * (x 128 / 256 then at G = 2; with the G rule below 8.71 / 15.08 in call 6).
 * 32-bit keys keep the queue kernel at k = 2 (f32 x 64 at 64 % of the roofline already; a pair
 * of (key, index) slots costs more compares than a second composite word).
 * The argmax path keeps 4 lanes where the queue kernels' rule halves 16-bit rows of 65..256 to 2,
 * and takes 8 over rows of >= RTOPK_ARGMAX_G8_N at k = 2 as at k = 1: every G forced, blocks of
 * 128, two runs (session 37, call 4, h100_latency_moe_g*_r*_s37c4.csv): bf16 65536 x 128, k = 1
 * / 2, G = 4 8.08 / 8.68 us against G = 2's 8.71 / 9.42; x 256, k = 2, G = 8 15.1 against G = 2's
 * 18.0 (G = 4 15.4); the rule's G was the best or within 1 % elsewhere at k <= 2.
 * Lanes (thread_group): its G for the queue kernel, but 8 over rows of >= RTOPK_ARGMAX_G8_N (where
 * TOPK_RTOPK_GROUP does not force one). Every G forced, one run each (16384 / 65536 / 262144 rows
 * x 32..512, k = 1, normal, session 35, h100_rtopk_argmax_g{1,2,4,8}_s35.csv): G = 8 took
 * 0.87-0.95x G = 4's time on f32 rows of 256 and 512 and 0.89-0.94x on bf16 rows of 512; bf16 rows
 * of 256 0.98-1.02x G = 4 and 0.87-0.91x G = 2, which the rule gives them from 65536 rows. Shorter
 * rows keep thread_group's G: from 65536 rows it was the sweep's best or within 5 % of it but for
 * bf16 262144 x 32 / x 128 (G = 1 / 4 0.64 / 0.92x its time, single runs); at 16384 rows (5-10 us
 * a call) one run differed from another by up to 45 %, too much to fit. (bf16 65536 x 64 read
 * 8.2-9.5 us at every G there: `topk bench` was bound by the host's enqueue, session 36; under
 * graph replay G = 4, the rule's, is the best, bench/results/h100_latency_moe_g*_s36.csv.) */
enum { RTOPK_ARGMAX_G8_N = 256 };
static bool argmax_path(int64_t k, int es) {
  if (!(k == 1 || (k == 2 && es == 2)) || topk_env("TOPK_RTOPK_QUEUE")) return false;
  const char* e = topk_env("TOPK_RTOPK_ARGMAX");
  return !(e && strcmp(e, "0") == 0);
}

/* The thread-group path (rtopk_thread_rows.cuh): exact mode, 16- and 32-bit keys, rows of
 * <= RTOPK_THREAD_MAX_N with k <= 32. Returns the lanes per row (1, 2 or 4), or 0 for the warp
 * search. G fitted on the H100 over 4096..262144 rows x 16..256 x k 1..16, f32, every G forced
 * (bench/results/h100_rtopk_groups_s11.csv, docs/BENCHMARKS.md session 11; simulated on that
 * grid, the rule is within 1.13x of the best choice, median 1.00):
 * - G = 4 (more lanes shorten each lane's chain of compare-exchanges and read fewer rows per
 *   warp load; 8 lanes were never the fastest: each merge round costs K shuffles and a
 *   bitonic step), but 2 where the rows alone fill RTOPK_THREAD_FILL lanes per SM and a lane
 *   keeps at most 64 elements, and fewer for rows under 8 x G;
 * - the warp search below 16 lanes per SM (a lone lane's chain is slower: the choose sweep,
 *   1-16 rows of 16, +3 us), and for rows longer than 128 below 32 rows per SM (4096 x 256:
 *   9.8 against 14.4 us);
 * - rows of 257..512 with fewer than RTOPK_THREAD_ROWS_PER_SM_512 rows per SM: the warp search
 *   (f32, both forced, k 4..16, session 23: at 16384 rows, 124 per SM, the thread path took
 *   0.67-0.89x the search's time at 384 and 512);
 * - rows longer than RTOPK_THREAD_AUTO_N: the warp search. On normal rows the thread path won
 *   there too (0.83-0.93x at 768 and 1024 from 65536 rows), but on uniform rows it lost (2^18
 *   x 768 / 1024, k = 16: 0.511 / 0.675 ms against 0.462 / 0.575): ties of prefixes at the
 *   k-th slot grow with the row (2.4-3.0 % of uniform rows at 768..1024, 0.5 % of normal ones,
 *   simulated), and a group that needs the second pass holds its warp's other 7 groups;
 * - 16-bit keys take at most 2 lanes a row over rows of 65..256 from
 *   RTOPK_THREAD_HALF_G_ROWS_PER_SM rows per SM (bf16 65536 x 64 / 128 / 256, k = 8, every G
 *   forced, session 23: G = 2 12.3 / 17.3 / 28.4 us, G = 4 13.0 / 19.2 / 31.5; f32 keeps G =
 *   4: 15.8 / 22.7 / 39.4 against 17.8 / 28.0 / 54.4). Rows of 64 went back to G = 4 in
 *   session 24, when a 16-bit step got cheaper (bf16 65536 x 64 / 128, k = 8: G = 4 12.1 /
 *   17.5 us, G = 2 12.5 / 16.3).
 * - session 26 (h100_rtopk_groups_s26_*.csv: G = 2, 4 and 8 forced, each over a one-wave grid
 *   and over every block, 16384..262144 rows x 32..256, k 1..8, f32 and bf16, sorted, twice;
 *   the rule below is within 1.135x of the best there, median 1.000, and 1.005x faster than
 *   session 25's rule, median, up to 1.48x):
 *   - 32-bit keys take G = 4 for rows of >= 32 however many rows there are: the halving to G = 2
 *     where rows fill the SMs (fitted in session 11, on 64-bit composites) lost 1.11-1.48x at
 *     262144 x 64 and x 128 (f32 x 128, k = 8: 101.0 against 68.0 us);
 *   - k <= 2 (queues of 1 and 2, whose merge rounds cost one shuffle a word) take G = 8:
 *     32-bit keys over rows of 65..128 (1.04-1.34x against G = 4) and of 33..64 where the rows
 *     give G = 4 fewer than RTOPK_THREAD_G8_LANES lanes per SM (16384 x 64: 1.10-1.13x; 65536 x
 *     64 lost 0.94x); 16-bit keys over rows of 33..256 below the same (16384 x 64..256:
 *     1.05-1.17x; at 65536 rows G = 2 is faster).
 * - k == n (rows of <= RTOPK_THREAD_MAX_K): the thread path too. Until session 25 such rows took
 *   the warp search, which copies them without a search but spends a warp on each. Same binary,
 *   both paths (n = k = 4, 8, 16, f32 and bf16, sorted or not, normal; h100_rtopk_keqn_ab_s25.csv):
 *   65536 rows 1.39-4.42x faster (f32 x 8 sorted 34.2 -> 12.4 us), 16384 rows 1.18-2.32x, 4096
 *   rows (5-10 us, bimodal from run to run) 0.69-1.50x.
 * Until session 23, 32-bit keys with k > 8 over rows longer than 128 took the warp search too
 * (64-bit composites then; 65536 x 256, k = 16: thread 82 against search 76 us); with 32-bit
 * prefix words the thread path is 1.24-1.41x faster there (16384..262144 rows x 256, k = 16,
 * f32; docs/BENCHMARKS.md session 23).
 * - queues of 32 (k = 17..32; session 34, thread against search forced, 65536..2^20 rows, both
 *   runs alike): the rules above, and 16-bit keys on rows of <= 1024 too, past
 *   RTOPK_THREAD_AUTO_N (bf16 uniform 0.41-0.74x the search's time at 128..1024, whose 16-bit
 *   search ran at 22-25 % of roofline; bench/results/h100_rtopk_k32bf_*_s34.csv). 32-bit keys
 *   with chunks of 16 (rtopk_thread_chunk): f32 uniform 262144 and 2^20 rows x 128 / 256 / 512,
 *   k = 24 and 32: 0.70-0.73x / 0.75-0.79x / 0.83-0.86x, 65536 x 256, k = 32 0.86x
 *   (h100_rtopk_c32_*_s34_call6.csv). Chunks of 32 had lost at 512 (1.09-1.19x) and tied at 256:
 *   128 registers with 104-694 bytes of spills. Rows of 768 and 1024 (lost 1.45-1.61x with chunks
 *   of 32) were not measured with chunks of 16 and keep the search (RTOPK_THREAD_AUTO_N).
 * TOPK_RTOPK_PATH=search or thread forces either where the thread path can run (rows of <=
 * RTOPK_THREAD_MAX_N), and TOPK_RTOPK_GROUP=1|2|4|8 the lanes per row (8: queues of <= 2 only;
 * for measurement). */
enum {
  RTOPK_THREAD_FILL = 2048,
  RTOPK_THREAD_AUTO_N = 512,
  RTOPK_THREAD_ROWS_PER_SM_512 = 124,
  RTOPK_THREAD_HALF_G_ROWS_PER_SM = 496,
  RTOPK_THREAD_G8_LANES = 1024
};
static int thread_group(const topk_problem* p, int es, const int* iters, int sm_count) {
  if (iters || p->max_iter != 0 || (es != 2 && es != 4) || p->n > RTOPK_THREAD_MAX_N || p->k > RTOPK_THREAD_MAX_K)
    return 0;
  const int64_t sms = sm_count > 0 ? sm_count : 132;
  int g = 1;
  if (es == 4 && p->n >= 32) g = 4;
  while (g < 4 && p->n >= 8 * g && (p->n / g > 64 || p->batch * g < RTOPK_THREAD_FILL * sms)) g *= 2;
  if (es == 2 && g > 2 && p->n > 64 && p->n <= 256 && p->batch >= RTOPK_THREAD_HALF_G_ROWS_PER_SM * sms &&
      !argmax_path(p->k, es))
    g = 2;
  const int g_fill = g; /* the lanes that decide thread path against search below */
  if (p->k <= 2 && p->n > 32) {
    const bool few = p->batch * 4 < RTOPK_THREAD_G8_LANES * sms;
    if (es == 4 ? (p->n > 64 && p->n <= 128) || (p->n <= 64 && few) : (p->n <= 256 && few)) g = 8;
  }
  if (argmax_path(p->k, es) && p->n >= RTOPK_ARGMAX_G8_N) g = 8;
  const char* eg = topk_env("TOPK_RTOPK_GROUP");
  if (eg && (!strcmp(eg, "1") || !strcmp(eg, "2") || !strcmp(eg, "4") || !strcmp(eg, "8"))) g = atoi(eg);
  const char* e = topk_env("TOPK_RTOPK_PATH");
  if (e && strcmp(e, "search") == 0) return 0;
  if (e && strcmp(e, "thread") == 0) return g;
  if (p->batch * g_fill < 16 * sms) return 0;
  if (p->batch < 32 * sms && p->n > 128) return 0;
  if (p->n > RTOPK_THREAD_AUTO_N && !(p->k > 16 && es == 2)) return 0; /* 16-bit queues of 32: rows of <= 1024 */
  if (p->batch < RTOPK_THREAD_ROWS_PER_SM_512 * sms && p->n > 256) return 0;
  return g;
}

template <typename KeyT, int K, int KIND, bool FULL>
static void (*thread_kernel_of(int g))(rtopk_params) {
  if constexpr (K <= 2)
    if (g == 8) return rtopk_thread_kernel<KeyT, K, 8, KIND, FULL>;
  return g == 1 ? rtopk_thread_kernel<KeyT, K, 1, KIND, FULL>
         : g == 2 ? rtopk_thread_kernel<KeyT, K, 2, KIND, FULL>
                  : rtopk_thread_kernel<KeyT, K, 4, KIND, FULL>;
}
template <typename KeyT, int K, int KIND>
static void (*thread_kernel(int g, bool full))(rtopk_params) {
  if constexpr (!rtopk_thread_full_built((int)sizeof(KeyT), K)) return thread_kernel_of<KeyT, K, KIND, false>(g);
  else return full ? thread_kernel_of<KeyT, K, KIND, true>(g) : thread_kernel_of<KeyT, K, KIND, false>(g);
}

/* Whether every lane of the thread path takes the same number of whole, aligned chunks (the
 * kernel's FULL, which drops the per-step tests for the row's end and alignment): rows of one
 * length P.n, a multiple of CW x G, starting 16-byte aligned; 32-bit keys, and 16-bit keys with
 * queues of <= 4. Same runs, TOPK_RTOPK_FULL=0 against on (h100_rtopk_full_*_s26.csv):
 * targets_moe_all median 1.04x (f32 x 64, k = 1: 12.4 -> 11.9 us; bf16 x 64, k = 4: 1.16x);
 * 16384 / 262144 rows x 32..512, k 1 / 8 / 16: f32 1.00-1.11x; 16-bit keys 1.0-1.14x at k = 1
 * but 0.94-0.98x with queues of 8 and 16, and 0.95x at 262144 x 256, k = 1 (G = 2), left so.
 * TOPK_RTOPK_FULL=0 turns it off (for measurement). */
static bool thread_full(const rtopk_params& P, int g, int K, int es) {
  const int cw = rtopk_thread_chunk(K, es);
  if (!rtopk_thread_full_built(es, K)) return false;
  if (P.offsets || P.n < (int64_t)cw * g || P.n % ((int64_t)cw * g) != 0 || P.n > RTOPK_THREAD_MAX_N) return false;
  if ((uintptr_t)P.in % 16 != 0 || (P.ld * es) % 16 != 0) return false;
  const char* e = topk_env("TOPK_RTOPK_FULL");
  return !(e && strcmp(e, "0") == 0);
}

/* The argmax kernel's U (16-byte vectors a lane loads at once: its part of a row rounded up to
 * 1, 2 or 4; fewer registers for short parts) and FULL (uniform rows of whole rounds of G x U
 * aligned vectors: no test of the row's end). Rows by offsets take U = 4 and the tests. */
static int argmax_vecs(const rtopk_params& P, int g, int es) {
  if (P.offsets) return RTOPK_ARGMAX_VECS;
  const int64_t per_lane = ((P.n * es + 15) / 16 + g - 1) / g;
  return per_lane <= 1 ? 1 : per_lane <= 2 ? 2 : RTOPK_ARGMAX_VECS;
}
static bool argmax_full(const rtopk_params& P, int g, int u, int es) {
  const int64_t round = (int64_t)g * u * (16 / es);
  if (P.offsets || P.n < round || P.n % round != 0 || P.n > RTOPK_THREAD_MAX_N) return false;
  if ((uintptr_t)P.in % 16 != 0 || (P.ld * es) % 16 != 0) return false;
  const char* e = topk_env("TOPK_RTOPK_FULL");
  return !(e && strcmp(e, "0") == 0);
}
template <typename KeyT, int K, int G, int KIND, int U>
static void (*argmax_kernel_full(bool full))(rtopk_params) {
  return full ? rtopk_argmax_kernel<KeyT, K, G, KIND, U, true> : rtopk_argmax_kernel<KeyT, K, G, KIND, U, false>;
}
template <typename KeyT, int K, int G, int KIND>
static void (*argmax_kernel_u(int u, bool full))(rtopk_params) {
  return u == 1   ? argmax_kernel_full<KeyT, K, G, KIND, 1>(full)
         : u == 2 ? argmax_kernel_full<KeyT, K, G, KIND, 2>(full)
                  : argmax_kernel_full<KeyT, K, G, KIND, RTOPK_ARGMAX_VECS>(full);
}
template <typename KeyT, int G, int KIND>
static void (*argmax_kernel_of(int64_t k, int u, bool full))(rtopk_params) {
  if constexpr (sizeof(KeyT) == 2)
    if (k == 2) return argmax_kernel_u<KeyT, 2, G, KIND>(u, full);
  return argmax_kernel_u<KeyT, 1, G, KIND>(u, full);
}

/* Blocks of RTOPK_ARGMAX_BLOCK threads (TOPK_RTOPK_ARGMAX_BLOCK=32..1024, a multiple of 32, for
 * measurement), a block for every blockDim / G rows. 128 against 512, graph replay, moe shapes at
 * k = 1 and 2 (session 37, call 3, alternated twice): 128 faster by 1-4 % on 7 of the 12 argmax
 * cases (bf16 x 64, k = 1 5.21 against 5.33 us; f32 x 64, k = 1 7.98 against 8.30), 512 by 4 % on
 * bf16 x 256, k = 2 (17.3 against 18.0, then at G = 2; the G rule above now gives it 8), the rest
 * within 1 %. 1024 and 256 were slower than 128 in a single run (call 2). */
template <typename KeyT, int KIND>
static topk_status launch_argmax(const rtopk_params& P, int g, cudaStream_t stream) {
  const int es = (int)sizeof(KeyT), u = argmax_vecs(P, g, es);
  const bool full = argmax_full(P, g, u, es);
  void (*kernel)(rtopk_params) = g == 1   ? argmax_kernel_of<KeyT, 1, KIND>(P.k, u, full)
                                 : g == 2 ? argmax_kernel_of<KeyT, 2, KIND>(P.k, u, full)
                                 : g == 4 ? argmax_kernel_of<KeyT, 4, KIND>(P.k, u, full)
                                          : argmax_kernel_of<KeyT, 8, KIND>(P.k, u, full);
  int threads = RTOPK_ARGMAX_BLOCK;
  const char* e = topk_env("TOPK_RTOPK_ARGMAX_BLOCK");
  if (e) {
    const int t = atoi(e);
    if (t >= 32 && t <= RTOPK_ARGMAX_MAX_BLOCK && t % 32 == 0) threads = t;
  }
  const int64_t rows_per_block = threads / g;
  int64_t blocks = (P.batch + rows_per_block - 1) / rows_per_block;
  if (blocks > INT_MAX) blocks = INT_MAX; /* the grid strides over the rest */
  kernel<<<(unsigned)blocks, (unsigned)threads, 0, stream>>>(P);
  TOPK_CUDA_TRY_LAUNCH("rtopk_argmax_kernel");
  return TOPK_SUCCESS;
}

/* The thread path's grid: one wave of resident blocks, which stride over the rows, so that a
 * lane's loads for its next row overlap its last chunk's compare-exchanges (rtopk_lane_pass), or,
 * for queues of >= 8, a block for every few rows (below). Blocks per SM from the occupancy
 * calculator, once per kernel and device (common/occupancy.h). */
template <typename KeyT, int KIND>
static topk_status launch_thread(const rtopk_params& P, int g, int sm_count, int ordinal, cudaStream_t stream) {
  if (argmax_path(P.k, (int)sizeof(KeyT))) return launch_argmax<KeyT, KIND>(P, g, stream);
  static int occ_cache[6][4][2][TOPK_OCC_DEVICES]; /* [log2 K][log2 G][FULL] */
  /* Queues of 8 for k <= 4 over rows longer than 128: a lane then sorts half as many chunks,
   * which was faster (f32 65536 x 256: k = 4 with K = 4 44.5 us, k = 8 with K = 8 38.2 us;
   * 65536 x 1024: 181.7 against 134.1 us; 65536 x 128: 21.8 and 22.1 us).
   * Queues of k for k <= 2 (chunks of 4 all the same) over rows of <= 128, and of any length for
   * 16-bit keys. Same runs, queue of 4 (the rule before) / queue of k, 65536 rows, normal: f32
   * x 64 k = 1 14.0 / 12.5 us, x 128 1.01-1.06x; bf16 x 64 1.12-1.16x, x 128 1.06-1.08x. Against
   * the queue of 8 over rows of 256 and 512 (65536 and 262144 rows, normal and uniform): bf16
   * 1.06-1.15x faster, f32 0.70-0.90x (h100_rtopk_queue12_*_s26.csv). */
  const bool short_queue = P.k <= 2 && (P.n <= 128 || sizeof(KeyT) == 2);
  int kb = short_queue ? (int)P.k - 1 : P.k <= 4 && P.n <= 128 ? 2 : P.k <= 8 ? 3 : P.k <= 16 ? 4 : 5; /* log2 K */
  /* TOPK_RTOPK_QUEUE=1|2|4|8|16|32 (for measurement): another queue, never one shorter than k.
   * Swept in session 24 (65536 x 64 / 128 / 256, k 1..8, f32 and bf16, sorted or not): the
   * rule was within 1.00-1.04x of the best; queues of 16 were 1.09-1.30x slower everywhere
   * (bench/results/h100_rtopk_queue_sweep_s24.csv). */
  const char* eq = topk_env("TOPK_RTOPK_QUEUE");
  if (eq) {
    static const char* const names[6] = {"1", "2", "4", "8", "16", "32"};
    int want = -1;
    for (int b = 0; b < 6; ++b)
      if (!strcmp(eq, names[b])) want = b;
    if (want >= 0 && (1 << want) >= P.k) kb = want;
  }
  if (g == 8 && kb > 1) g = 4; /* 8 lanes a row (TOPK_RTOPK_GROUP=8) are built for queues of <= 2 only */
  const int64_t rows_per_block = RTOPK_THREAD_BLOCK / g;
  int64_t blocks = (P.batch + rows_per_block - 1) / rows_per_block;
  const bool full = thread_full(P, g, 1 << kb, (int)sizeof(KeyT));
  void (*kernel)(rtopk_params) = kb == 0   ? thread_kernel<KeyT, 1, KIND>(g, full)
                                 : kb == 1 ? thread_kernel<KeyT, 2, KIND>(g, full)
                                 : kb == 2 ? thread_kernel<KeyT, 4, KIND>(g, full)
                                 : kb == 3 ? thread_kernel<KeyT, 8, KIND>(g, full)
                                 : kb == 4 ? thread_kernel<KeyT, 16, KIND>(g, full)
                                           : thread_kernel<KeyT, 32, KIND>(g, full);
  int occ = 0;
  TOPK_CUDA_TRY(topk_occupancy_cached(occ_cache[kb][g == 1 ? 0 : g == 2 ? 1 : g == 4 ? 2 : 3][full], ordinal,
                                      (const void*)kernel, RTOPK_THREAD_BLOCK, 0, &occ));
  const int64_t wave = (int64_t)(sm_count > 0 ? sm_count : 132) * (occ > 0 ? occ : 1);
  /* Queues of >= 8 take a block for every RTOPK_THREAD_BLOCK / G rows, over as many waves as that
   * takes, instead of one wave striding: 1.02-1.11x faster at 65536 and 262144 rows (f32 262144 x
   * 256, k = 8: 133.2 against 119.9 us), even at 16384; shorter queues lost up to 0.92x at 262144
   * x 32 and x 64 (session 26, the sweep in thread_group's comment). TOPK_RTOPK_GRID=all|wave
   * forces either (for measurement). */
  bool all = kb >= 3;
  const char* egr = topk_env("TOPK_RTOPK_GRID");
  if (egr && strcmp(egr, "all") == 0) all = true;
  if (egr && strcmp(egr, "wave") == 0) all = false;
  if (blocks > wave && !all) blocks = wave;
  if (blocks > INT_MAX) blocks = INT_MAX; /* the grid strides over the rest */
  kernel<<<(unsigned)blocks, RTOPK_THREAD_BLOCK, 0, stream>>>(P);
  TOPK_CUDA_TRY_LAUNCH("rtopk_thread_kernel");
  return TOPK_SUCCESS;
}

/* The launch shared by the ops entry and the iteration-count entry (rtopk.h). */
static topk_status rtopk_launch(const topk_problem* p, const void* in, void* values, void* indices, int* iters,
                                int sm_count, int ordinal, cudaStream_t stream) {
  rtopk_plan L;
  TOPK_RETURN_IF(!make_plan(p, sm_count, &L), TOPK_ERR_UNSUPPORTED, "rtopk: n=%lld exceeds %d or unknown dtype %d",
                 (long long)p->n, (int)RTOPK_MAX_N, (int)p->dtype);
  if (p->batch == 0 || p->k == 0) return TOPK_SUCCESS;
  L.ordinal = ordinal;
  rtopk_params P;
  memset(&P, 0, sizeof P);
  P.in = in;
  P.offsets = p->row_offsets;
  P.n = p->n;
  P.ld = p->row_offsets ? 0 : (p->ld ? p->ld : p->n);
  P.k = p->k;
  P.batch = p->batch;
  P.values = values;
  P.indices = p->index_type == TOPK_INDEX_NONE ? NULL : indices;
  P.index_type = (int)p->index_type;
  P.smallest = (p->flags & TOPK_SMALLEST) != 0;
  P.sorted = (p->flags & TOPK_SORTED) != 0;
  P.max_iter = p->max_iter;
  P.dtype = (int)p->dtype;
  P.search = env_search();
  const char* pb = topk_env("TOPK_RTOPK_PAPER_BREAK");
  P.paper_break = pb && strcmp(pb, "1") == 0;
  P.sort_cap = L.sort_cap;
  P.wide_cap = iters ? 0 : L.wide_cap; /* the recorded steps are the search's own (Table 1) */
  P.warp_smem = L.warp_smem;
  P.row_smem = L.row_smem;
  P.worst_bits = topk_worst_value_bits(p->dtype, P.smallest);
  P.iters = iters;
  if (const int g = thread_group(p, L.es, iters, sm_count)) {
    if (L.es == 2) return launch_thread<uint16_t, RTOPK_KIND_F16X>(P, g, sm_count, ordinal, stream);
    return p->dtype == TOPK_F32 ? launch_thread<uint32_t, RTOPK_KIND_F32>(P, g, sm_count, ordinal, stream)
                                : launch_thread<uint32_t, RTOPK_KIND_GENERIC>(P, g, sm_count, ordinal, stream);
  }
  /* value-space kinds (rtopk_kernels.cuh): fp32 reals for the 16- and 32-bit floats,
   * doubles and a runtime dtype switch for the rest */
  switch (L.es) {
    case 2: return launch_width<uint16_t, RTOPK_KIND_F16X>(&L, P, stream); /* F16, BF16 */
    case 4:
      return p->dtype == TOPK_F32 ? launch_width<uint32_t, RTOPK_KIND_F32>(&L, P, stream)
                                  : launch_width<uint32_t, RTOPK_KIND_GENERIC>(&L, P, stream); /* I32, U32 */
    default: return launch_width<uint64_t, RTOPK_KIND_GENERIC>(&L, P, stream); /* F64, I64, U64 */
  }
}

/* ------------------------------------------------------------------ ops */

static int rtopk_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  rtopk_plan L;
  if (topk_dtype_size(p->dtype) == 0) {
    if (why && why_len) snprintf(why, why_len, "unknown dtype %d", (int)p->dtype);
    return 0;
  }
  if (!make_plan(p, dev ? dev->sm_count : 0, &L)) {
    if (why && why_len)
      snprintf(why, why_len,
               p->row_offsets ? "rows given by row_offsets need the whole buffer n=%lld <= %d (the longest row is "
                                "unknown on the host); use air_radix"
                              : "rows of n=%lld exceed %d elements (a warp per row); use air_radix",
               (long long)p->n, (int)RTOPK_MAX_N);
    return 0;
  }
  if (dev && dev->smem_per_block_optin > 0 && (int64_t)L.block_smem > dev->smem_per_block_optin) {
    if (why && why_len)
      snprintf(why, why_len, "sorted output of k=%lld needs %zu bytes of shared memory per block (device: %lld)",
               (long long)p->k, L.block_smem, (long long)dev->smem_per_block_optin);
    return 0;
  }
  return 1;
}

static topk_status rtopk_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  (void)p;
  (void)dev;
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  *bytes = 0;
  return TOPK_SUCCESS;
}

static topk_status rtopk_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  (void)workspace;
  (void)workspace_bytes;
  return rtopk_launch(&a->p, a->in, a->values, a->indices, NULL, a->dev ? a->dev->sm_count : 0,
                      a->dev ? a->dev->ordinal : -1, (cudaStream_t)stream);
}

extern "C" topk_status rtopk_select_iters(const topk_problem* p, const void* in, void* values, void* indices,
                                          int* iters, topk_stream stream) {
  topk_env_scan(); /* an entry like the public ones (src/env.c) */
  TOPK_RETURN_IF(!p || !in || !values || !iters, TOPK_ERR_NULL_POINTER, "rtopk_select_iters: NULL argument");
  TOPK_RETURN_IF(p->index_type != TOPK_INDEX_NONE && !indices, TOPK_ERR_NULL_POINTER,
                 "rtopk_select_iters: indices is NULL");
  TOPK_RETURN_IF(p->max_iter < 0 || p->k < 0 || p->batch < 0 || p->n < 0 || (!p->row_offsets && p->k > p->n) ||
                     (p->ld != 0 && p->ld < p->n),
                 TOPK_ERR_INVALID_ARGUMENT, "rtopk_select_iters: invalid problem");
  return rtopk_launch(p, in, values, indices, iters, 0, -1, (cudaStream_t)stream);
}

extern "C" const topk_algo_ops topk_algo_rtopk = {"rtopk",        TOPK_ALGO_RTOPK,       TOPK_BACKEND_CUDA,
                                                  rtopk_supports, rtopk_workspace_size, rtopk_run};
