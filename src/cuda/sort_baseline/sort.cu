/*
 * sort.cu: sort-and-choose, the CUDA baseline (TOPK_ALGO_SORT). It sorts every row
 * completely with CUB's radix sort and keeps the first k. It is the reference
 * point that the selection algorithms are measured against, and the general
 * algorithm that handles every problem while they are being built.
 *
 * How it honours the semantics of topk.h:
 *   - Order: each element becomes its rank key (keys.cuh over src/common/keys.h),
 *     complemented so that an ASCENDING sort puts the best first. NaN, -0.0 and
 *     the integer types come out right without any special case.
 *   - Ties: CUB's radix sort is stable, and the (key, index) pairs enter it in
 *     index order, so equal values leave it ordered by index. The first k are
 *     therefore the deterministic set (lowest indices among ties) and they are
 *     sorted, for every flag combination (TOPK_SORTED is free here).
 *   - Values: the gather reads them back from the input at the sorted index, so
 *     the output holds the input's exact bits (NaN payloads included).
 *   - Variable rows: their offsets are in device memory and never read by the host
 *     (no copy, no sync); CUB's segmented sort takes the segments from the device.
 *     A row shorter than k is padded with index -1 and topk_worst_value_bits().
 *
 * Three modes (chosen on the host from the problem's shape alone, identically in
 * workspace_size and run, so the workspace layout matches):
 *   PER_ROW    cub::DeviceRadixSort on one row at a time (a host loop of
 *              launches): batch 1, rows of 2^31 elements or more, and rows long
 *              enough to fill the GPU on their own when there are too few of them
 *              to fill it with one thread block each.
 *   SEGMENTED  cub::DeviceSegmentedRadixSort (one thread block per row) on groups
 *              of rows; for uniform rows a group holds at most GROUP_ITEMS elements
 *              (num_items is an int, and the bound keeps the workspace in
 *              proportion); variable rows with n <= INT_MAX are one group.
 *   GLOBAL     variable rows whose buffer exceeds INT_MAX: the host cannot know
 *              which rows to group, so the whole buffer is sorted twice with
 *              cub::DeviceRadixSort (64-bit counts): by key, then (stably) by row
 *              id, which leaves each row's elements contiguous, best first.
 *
 * Counting is 32-bit where it fits: indices are sorted as uint32 unless a row (or,
 * in GLOBAL mode, the buffer) can hold 2^31 elements. Keys are 16, 32 or 64 bits
 * and the sort covers exactly those bits, so no pass is wasted. CUB is instantiated
 * for 3 key widths x {uint32 + 32-bit counts, uint64 + 64-bit counts} for
 * DeviceRadixSort and 3 key widths x uint32 for the segmented sort.
 *
 * Workspace (each part rounded up to 256 bytes, plus 255 bytes so that any caller
 * pointer can be aligned, as CUB does): two key buffers and two index buffers of
 * the sort's length (CUB's DoubleBuffer interface, so CUB adds no copy of its own),
 * the segment begin/end arrays (8 bytes each) and CUB's temporary storage.
 * run() never allocates, synchronises or copies to the host.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "../../algo.h"
#include "../common/cuda_check.h"
#include "../common/workspace.h"
#include "../common/keys.cuh"
#include "sort_kernels.cuh"

/* ------------------------------------------------------------------ the plan */

typedef enum sort_mode { SORT_PER_ROW, SORT_SEGMENTED, SORT_GLOBAL } sort_mode;

/* Uniform rows per segmented call hold at most this many elements: one block per row
 * needs enough rows in flight, and the workspace grows with the group. */
static const int64_t GROUP_ITEMS = (int64_t)1 << 28;
/* Rows at least this long are sorted one by one (full GPU each) unless there are
 * enough of them in a group to give every SM two rows. */
static const int64_t LONG_ROW = (int64_t)1 << 17;
enum { THREADS = 256 };

/* Every decision and every workspace offset, from the problem alone. */
typedef struct sort_layout {
  sort_mode mode;
  int       key_bytes;     /* 2, 4 or 8 */
  int       wide;          /* sorted indices are uint64 (else uint32) */
  int64_t   items;         /* length of each sort (of the largest group) */
  int64_t   group_rows;    /* SEGMENTED uniform: rows per call */
  int64_t   segments;      /* entries of seg_begin/seg_end */
  int       row_id_bits;   /* GLOBAL: bits of the row-id sort (row ids 0..batch) */
  size_t    cub_bytes;     /* CUB temporary storage (the larger of GLOBAL's two sorts) */
  size_t    keys[2], vals[2], seg_begin, seg_end, cub; /* offsets from the aligned base */
  size_t    total;         /* workspace bytes, alignment slack included */
} sort_layout;

/* ---- CUB calls: one definition, used for the size query (temp == NULL) and the run */

/* Ascending stable sort of (key, value) pairs over bits [0, end_bit); the count type
 * follows ValT (uint32 or uint64), so each ValT instantiates one CUB offset type.
 * *second: the result is in the second buffers. */
template <typename KeyT, typename ValT>
static cudaError_t radix_sort(void* temp, size_t* temp_bytes, void* k0, void* k1, ValT* v0, ValT* v1, int64_t items,
                              int end_bit, cudaStream_t stream, int* second) {
  cub::DoubleBuffer<KeyT> keys((KeyT*)k0, (KeyT*)k1);
  cub::DoubleBuffer<ValT> vals(v0, v1);
  cudaError_t e = cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, keys, vals, (ValT)items, 0, end_bit, stream);
  if (second) *second = keys.selector;
  return e;
}

template <typename ValT>
static cudaError_t radix_sort_width(int key_bytes, void* temp, size_t* temp_bytes, void* k0, void* k1, ValT* v0,
                                    ValT* v1, int64_t items, int end_bit, cudaStream_t stream, int* second) {
  switch (key_bytes) {
    case 2: return radix_sort<uint16_t, ValT>(temp, temp_bytes, k0, k1, v0, v1, items, end_bit, stream, second);
    case 4: return radix_sort<uint32_t, ValT>(temp, temp_bytes, k0, k1, v0, v1, items, end_bit, stream, second);
    default: return radix_sort<uint64_t, ValT>(temp, temp_bytes, k0, k1, v0, v1, items, end_bit, stream, second);
  }
}

/* Segmented version: segments [begin[s], end[s]) of buffers of items (<= INT_MAX) elements. */
template <typename KeyT>
static cudaError_t segmented_sort(void* temp, size_t* temp_bytes, void* k0, void* k1, uint32_t* v0, uint32_t* v1,
                                  int items, int segments, const int64_t* begin, const int64_t* end,
                                  cudaStream_t stream, int* second) {
  cub::DoubleBuffer<KeyT> keys((KeyT*)k0, (KeyT*)k1);
  cub::DoubleBuffer<uint32_t> vals(v0, v1);
  cudaError_t e = cub::DeviceSegmentedRadixSort::SortPairs(temp, *temp_bytes, keys, vals, items, segments, begin, end,
                                                           0, (int)(sizeof(KeyT) * 8), stream);
  if (second) *second = keys.selector;
  return e;
}

static cudaError_t segmented_sort_width(int key_bytes, void* temp, size_t* temp_bytes, void* k0, void* k1,
                                        uint32_t* v0, uint32_t* v1, int items, int segments, const int64_t* begin,
                                        const int64_t* end, cudaStream_t stream, int* second) {
#define TOPK_SEGMENTED_SORT_(KeyT) \
  segmented_sort<KeyT>(temp, temp_bytes, k0, k1, v0, v1, items, segments, begin, end, stream, second)
  switch (key_bytes) {
    case 2: return TOPK_SEGMENTED_SORT_(uint16_t);
    case 4: return TOPK_SEGMENTED_SORT_(uint32_t);
    default: return TOPK_SEGMENTED_SORT_(uint64_t);
  }
#undef TOPK_SEGMENTED_SORT_
}

/* Bits needed for the values 0..v. */
static int bits_for(uint64_t v) {
  int bits = 1;
  while (bits < 64 && (v >> bits) != 0) ++bits;
  return bits;
}

/* Decides the mode and lays out the workspace. Asks CUB for sizes only: no allocation, no sync. */
static topk_status plan_layout(const topk_problem* p, const topk_device_info* dev, sort_layout* L) {
  memset(L, 0, sizeof *L);
  L->key_bytes = (int)topk_dtype_size(p->dtype);
  TOPK_RETURN_IF(L->key_bytes != 2 && L->key_bytes != 4 && L->key_bytes != 8, TOPK_ERR_DTYPE,
                 "sort: unknown dtype %d", (int)p->dtype);
  const int64_t fill = 2 * (int64_t)(dev && dev->sm_count > 0 ? dev->sm_count : 132);

  if (p->row_offsets) {
    L->items = p->n;
    L->segments = p->batch;
    if (p->n <= INT_MAX) {
      L->mode = SORT_SEGMENTED;
    } else {
      L->mode = SORT_GLOBAL;
      L->wide = 1;
      TOPK_RETURN_IF((uint64_t)p->batch >= UINT32_MAX, TOPK_ERR_UNSUPPORTED,
                     "sort: %lld variable-length rows in a buffer of 2^31 or more elements (at most 2^32 - 2 rows)",
                     (long long)p->batch);
      L->row_id_bits = bits_for((uint64_t)p->batch);
    }
  } else {
    /* Rows per segmented call: as many as fit in GROUP_ITEMS elements (0 if not one does). */
    const int64_t fit = p->n > 0 ? GROUP_ITEMS / p->n : GROUP_ITEMS;
    const int64_t per_group = p->batch < fit ? p->batch : fit;
    const int per_row = p->batch == 1 || p->n > INT_MAX || per_group == 0 ||
                        (p->n >= LONG_ROW && per_group < fill);
    if (per_row) {
      L->mode = SORT_PER_ROW;
      L->items = p->n;
      L->wide = p->n > INT_MAX;
    } else {
      L->mode = SORT_SEGMENTED;
      L->group_rows = per_group;
      L->items = per_group * p->n;
      L->segments = per_group;
    }
  }

  /* CUB's temporary storage, asked with NULL buffers (CUB only counts). */
  size_t bytes = 0;
  if (L->items > 0) {
    switch (L->mode) {
      case SORT_PER_ROW:
        TOPK_CUDA_TRY(L->wide ? radix_sort_width<uint64_t>(L->key_bytes, NULL, &bytes, NULL, NULL, NULL, NULL,
                                                           L->items, L->key_bytes * 8, 0, NULL)
                              : radix_sort_width<uint32_t>(L->key_bytes, NULL, &bytes, NULL, NULL, NULL, NULL,
                                                           L->items, L->key_bytes * 8, 0, NULL));
        break;
      case SORT_SEGMENTED: {
        const int segments = L->segments < INT_MAX ? (int)L->segments : INT_MAX;
        TOPK_CUDA_TRY(segmented_sort_width(L->key_bytes, NULL, &bytes, NULL, NULL, NULL, NULL, (int)L->items,
                                           segments, NULL, NULL, 0, NULL));
        break;
      }
      case SORT_GLOBAL: {
        size_t by_row = 0;
        TOPK_CUDA_TRY(radix_sort_width<uint64_t>(L->key_bytes, NULL, &bytes, NULL, NULL, NULL, NULL, L->items,
                                                 L->key_bytes * 8, 0, NULL));
        TOPK_CUDA_TRY(radix_sort<uint32_t, uint64_t>(NULL, &by_row, NULL, NULL, NULL, NULL, L->items, L->row_id_bits,
                                                     0, NULL));
        if (by_row > bytes) bytes = by_row;
        break;
      }
    }
  }
  L->cub_bytes = bytes;

  /* GLOBAL reuses the key buffers for the 32-bit row ids of its second sort. */
  const size_t key_slot = L->mode == SORT_GLOBAL && L->key_bytes < 4 ? 4 : (size_t)L->key_bytes;
  const size_t val_slot = L->wide ? 8 : 4;
  const uint64_t items = (uint64_t)L->items, segments = (uint64_t)L->segments;
  size_t total = 0;
  const int ok = topk_ws_add_part(&total, &L->keys[0], items, key_slot) && topk_ws_add_part(&total, &L->keys[1], items, key_slot) &&
                 topk_ws_add_part(&total, &L->vals[0], items, val_slot) && topk_ws_add_part(&total, &L->vals[1], items, val_slot) &&
                 topk_ws_add_part(&total, &L->seg_begin, segments, 8) && topk_ws_add_part(&total, &L->seg_end, segments, 8) &&
                 topk_ws_add_part(&total, &L->cub, L->cub_bytes, 1);
  TOPK_RETURN_IF(!ok, TOPK_ERR_OUT_OF_MEMORY, "sort: the workspace for n=%lld x batch=%lld exceeds the address space",
                 (long long)p->n, (long long)p->batch);
  L->total = total + (TOPK_WS_ALIGN - 1);
  return TOPK_SUCCESS;
}

/* ------------------------------------------------------------------ launches */

/* Grid for rows x per_row elements: rows over y (at most 65535, kernels stride),
 * per-row work over x, about 32 blocks per SM in all (kernels grid-stride). */
static dim3 grid_for(int64_t per_row, int64_t rows, const topk_device_info* dev) {
  const int64_t y = rows < 65535 ? (rows > 0 ? rows : 1) : 65535;
  const int64_t budget = 32 * (int64_t)(dev && dev->sm_count > 0 ? dev->sm_count : 132);
  int64_t x = (per_row + THREADS - 1) / THREADS;
  const int64_t x_cap = budget / y > 0 ? budget / y : 1;
  if (x > x_cap) x = x_cap;
  if (x < 1) x = 1;
  return dim3((unsigned)x, (unsigned)y, 1);
}

template <typename ValT>
static topk_status launch_init(const topk_args* a, const void* in, int64_t ld, int64_t n, int64_t rows, void* keys,
                               ValT* vals, cudaStream_t stream) {
  const int smallest = (a->p.flags & TOPK_SMALLEST) != 0;
  const dim3 grid = grid_for(n, rows, a->dev);
  TOPK_DISPATCH_DTYPE(
      a->p.dtype, DT, return topk_fail(TOPK_ERR_INTERNAL, "sort: unknown dtype %d", (int)a->p.dtype),
      sort_init_kernel<DT, ValT><<<grid, THREADS, 0, stream>>>(
          (const typename topk_dtype_traits<DT>::raw_t*)in, ld, n, rows,
          (typename topk_dtype_traits<DT>::key_t*)keys, vals, smallest));
  TOPK_CUDA_TRY_LAUNCH("sort_init_kernel");
  return TOPK_SUCCESS;
}

static topk_status launch_segments(const int64_t* offsets, int64_t n, int64_t rows, int64_t* begin, int64_t* end,
                                   const topk_device_info* dev, cudaStream_t stream) {
  const dim3 grid = grid_for(rows, 1, dev);
  sort_segments_kernel<<<grid, THREADS, 0, stream>>>(offsets, n, rows, begin, end);
  TOPK_CUDA_TRY_LAUNCH("sort_segments_kernel");
  return TOPK_SUCCESS;
}

template <typename ValT>
static topk_status launch_gather(const topk_args* a, sort_gather_params g, cudaStream_t stream) {
  const dim3 grid = grid_for(g.k, g.rows, a->dev);
  switch (topk_dtype_size(a->p.dtype)) {
    case 2: sort_gather_kernel<uint16_t, ValT><<<grid, THREADS, 0, stream>>>(g); break;
    case 4: sort_gather_kernel<uint32_t, ValT><<<grid, THREADS, 0, stream>>>(g); break;
    default: sort_gather_kernel<uint64_t, ValT><<<grid, THREADS, 0, stream>>>(g); break;
  }
  TOPK_CUDA_TRY_LAUNCH("sort_gather_kernel");
  return TOPK_SUCCESS;
}

/* The gather's fields common to every mode. */
static sort_gather_params gather_params(const topk_args* a) {
  sort_gather_params g;
  memset(&g, 0, sizeof g);
  g.in = a->in;
  g.ld = a->p.ld;
  g.n = a->p.n;
  g.k = a->p.k;
  g.values = a->values;
  g.indices = a->p.index_type == TOPK_INDEX_NONE ? NULL : a->indices;
  g.index_type = (int)a->p.index_type;
  g.worst_bits = topk_worst_value_bits(a->p.dtype, (a->p.flags & TOPK_SMALLEST) != 0);
  return g;
}

/* ------------------------------------------------------------------ modes */

/* Workspace pointers of a layout. */
typedef struct sort_buffers {
  void*    keys[2];
  void*    vals[2];
  int64_t* seg_begin;
  int64_t* seg_end;
  void*    cub;
} sort_buffers;

/* One row at a time: init, DeviceRadixSort, gather. */
template <typename ValT>
static topk_status run_per_row(const topk_args* a, const sort_layout* L, const sort_buffers* B, cudaStream_t stream) {
  const size_t es = topk_dtype_size(a->p.dtype);
  ValT* v0 = (ValT*)B->vals[0];
  ValT* v1 = (ValT*)B->vals[1];
  for (int64_t row = 0; row < a->p.batch; ++row) {
    const char* in = (const char*)a->in + (size_t)(row * a->p.ld) * es;
    TOPK_FORWARD_IF_ERROR(launch_init<ValT>(a, in, a->p.ld, a->p.n, 1, B->keys[0], v0, stream));
    size_t bytes = L->cub_bytes;
    int second = 0;
    TOPK_CUDA_TRY(radix_sort_width<ValT>(L->key_bytes, B->cub, &bytes, B->keys[0], B->keys[1], v0, v1, L->items,
                                         L->key_bytes * 8, stream, &second));
    sort_gather_params g = gather_params(a);
    g.sorted = second ? v1 : v0;
    g.sorted_count = L->items;
    g.rows = 1;
    g.row0 = row;
    TOPK_FORWARD_IF_ERROR(launch_gather<ValT>(a, g, stream));
  }
  return TOPK_SUCCESS;
}

/* Segmented sort of [0, items) with segments [begin[s], end[s]) for s < count, in calls of at most INT_MAX segments. */
static topk_status segmented_sort_chunks(const sort_layout* L, const sort_buffers* B, int64_t items, int64_t count,
                                         cudaStream_t stream, int* second) {
  uint32_t* v0 = (uint32_t*)B->vals[0];
  uint32_t* v1 = (uint32_t*)B->vals[1];
  *second = 0;
  for (int64_t s0 = 0; s0 < count; s0 += INT_MAX) {
    const int segments = (int)(count - s0 < INT_MAX ? count - s0 : INT_MAX);
    size_t bytes = L->cub_bytes;
    /* Every call runs the same passes from the first buffers, so all end on the same side. */
    TOPK_CUDA_TRY(segmented_sort_width(L->key_bytes, B->cub, &bytes, B->keys[0], B->keys[1], v0, v1, (int)items,
                                       segments, B->seg_begin + s0, B->seg_end + s0, stream, second));
  }
  return TOPK_SUCCESS;
}

/* Uniform rows in groups of group_rows: init (packed), segmented sort, gather. */
static topk_status run_segmented_uniform(const topk_args* a, const sort_layout* L, const sort_buffers* B,
                                         cudaStream_t stream) {
  const size_t es = topk_dtype_size(a->p.dtype);
  const int64_t n = a->p.n;
  /* Packed rows: the same segments serve every group. */
  TOPK_FORWARD_IF_ERROR(launch_segments(NULL, n, L->group_rows, B->seg_begin, B->seg_end, a->dev, stream));
  for (int64_t row0 = 0; row0 < a->p.batch; row0 += L->group_rows) {
    const int64_t rows = a->p.batch - row0 < L->group_rows ? a->p.batch - row0 : L->group_rows;
    const char* in = (const char*)a->in + (size_t)(row0 * a->p.ld) * es;
    TOPK_FORWARD_IF_ERROR(launch_init<uint32_t>(a, in, a->p.ld, n, rows, B->keys[0], (uint32_t*)B->vals[0], stream));
    int second = 0;
    TOPK_FORWARD_IF_ERROR(segmented_sort_chunks(L, B, rows * n, rows, stream, &second));
    sort_gather_params g = gather_params(a);
    g.sorted = B->vals[second];
    g.sorted_count = rows * n;
    g.rows = rows;
    g.row0 = row0;
    TOPK_FORWARD_IF_ERROR(launch_gather<uint32_t>(a, g, stream));
  }
  return TOPK_SUCCESS;
}

/* Variable rows, buffer <= INT_MAX: keys of the whole buffer in place, segments from the offsets. */
static topk_status run_segmented_variable(const topk_args* a, const sort_layout* L, const sort_buffers* B,
                                          cudaStream_t stream) {
  const int64_t n = a->p.n;
  TOPK_FORWARD_IF_ERROR(
      launch_segments(a->p.row_offsets, n, a->p.batch, B->seg_begin, B->seg_end, a->dev, stream));
  int second = 0;
  if (n > 0) {
    /* Positions in no row get keys too: simpler than skipping them, and never sorted. */
    TOPK_FORWARD_IF_ERROR(launch_init<uint32_t>(a, a->in, n, n, 1, B->keys[0], (uint32_t*)B->vals[0], stream));
    TOPK_FORWARD_IF_ERROR(segmented_sort_chunks(L, B, n, a->p.batch, stream, &second));
  }
  sort_gather_params g = gather_params(a);
  g.sorted = B->vals[second];
  g.sorted_count = n;
  g.seg_begin = B->seg_begin;
  g.seg_end = B->seg_end;
  g.rows = a->p.batch;
  TOPK_FORWARD_IF_ERROR(launch_gather<uint32_t>(a, g, stream));
  return TOPK_SUCCESS;
}

/* Variable rows, buffer > INT_MAX: sort all by key, then stably by row id. */
static topk_status run_global(const topk_args* a, const sort_layout* L, const sort_buffers* B, cudaStream_t stream) {
  const int64_t n = a->p.n;
  uint64_t* v[2] = {(uint64_t*)B->vals[0], (uint64_t*)B->vals[1]};
  TOPK_FORWARD_IF_ERROR(
      launch_segments(a->p.row_offsets, n, a->p.batch, B->seg_begin, B->seg_end, a->dev, stream));
  TOPK_FORWARD_IF_ERROR(launch_init<uint64_t>(a, a->in, n, n, 1, B->keys[0], v[0], stream));
  size_t bytes = L->cub_bytes;
  int by_key = 0;
  TOPK_CUDA_TRY(radix_sort_width<uint64_t>(L->key_bytes, B->cub, &bytes, B->keys[0], B->keys[1], v[0], v[1], n,
                                           L->key_bytes * 8, stream, &by_key));

  /* The keys are spent: their buffers (>= 4 bytes per element) take the row ids. */
  uint32_t* row_id = (uint32_t*)B->keys[0];
  const dim3 grid = grid_for(n, 1, a->dev);
  sort_row_id_kernel<<<grid, THREADS, 0, stream>>>(v[by_key], n, B->seg_begin, B->seg_end, a->p.batch, row_id);
  TOPK_CUDA_TRY_LAUNCH("sort_row_id_kernel");
  bytes = L->cub_bytes;
  int by_row = 0;
  TOPK_CUDA_TRY(radix_sort<uint32_t, uint64_t>(B->cub, &bytes, B->keys[0], B->keys[1], v[by_key], v[by_key ^ 1], n,
                                               L->row_id_bits, stream, &by_row));

  sort_gather_params g = gather_params(a);
  g.sorted = v[by_key ^ by_row];
  g.sorted_count = n;
  g.seg_begin = B->seg_begin;
  g.seg_end = B->seg_end;
  g.from_first = 1;
  g.rows = a->p.batch;
  TOPK_FORWARD_IF_ERROR(launch_gather<uint64_t>(a, g, stream));
  return TOPK_SUCCESS;
}

/* ------------------------------------------------------------------ ops */

static int sort_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)dev;
  if (p->row_offsets && p->n > INT_MAX && (uint64_t)p->batch >= UINT32_MAX) {
    if (why && why_len) snprintf(why, why_len, "at most 2^32 - 2 variable-length rows when n >= 2^31");
    return 0;
  }
  return 1;
}

static topk_status sort_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  sort_layout L;
  TOPK_FORWARD_IF_ERROR(plan_layout(p, dev, &L));
  *bytes = L.total;
  return TOPK_SUCCESS;
}

static topk_status sort_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  sort_layout L;
  TOPK_FORWARD_IF_ERROR(plan_layout(&a->p, a->dev, &L));
  TOPK_RETURN_IF(!workspace || workspace_bytes < L.total, TOPK_ERR_WORKSPACE,
                 "sort: workspace of %zu bytes given, %zu needed", workspace ? workspace_bytes : (size_t)0, L.total);
  char* base = topk_ws_base(workspace);
  sort_buffers B;
  B.keys[0] = base + L.keys[0];
  B.keys[1] = base + L.keys[1];
  B.vals[0] = base + L.vals[0];
  B.vals[1] = base + L.vals[1];
  B.seg_begin = (int64_t*)(base + L.seg_begin);
  B.seg_end = (int64_t*)(base + L.seg_end);
  B.cub = base + L.cub;
  cudaStream_t s = (cudaStream_t)stream;
  switch (L.mode) {
    case SORT_PER_ROW:
      return L.wide ? run_per_row<uint64_t>(a, &L, &B, s) : run_per_row<uint32_t>(a, &L, &B, s);
    case SORT_SEGMENTED:
      return a->p.row_offsets ? run_segmented_variable(a, &L, &B, s) : run_segmented_uniform(a, &L, &B, s);
    case SORT_GLOBAL:
      return run_global(a, &L, &B, s);
  }
  return topk_fail(TOPK_ERR_INTERNAL, "sort: unknown mode %d", (int)L.mode);
}

extern "C" const topk_algo_ops topk_algo_cuda_sort = {"sort", TOPK_ALGO_SORT, TOPK_BACKEND_CUDA, sort_supports,
                                                      sort_workspace_size, sort_run};
