/*
 * sort_kernels.cuh: the small kernels around CUB's radix sort in sort-and-choose.
 *
 *   sort_init_kernel      element -> (sort key, index) pairs: the key is the
 *                         complemented rank key (keys.cuh), so an ascending sort puts
 *                         the best first; the index is the element's position in its
 *                         row (or, for variable rows, in the whole buffer)
 *   sort_segments_kernel  begin/end of each segment: i*n for uniform rows; the
 *                         caller's device offsets clamped into [0, n] for variable
 *                         rows, so that offsets that break their contract can give a
 *                         wrong answer but never an access outside the buffers
 *   sort_row_id_kernel    (global mode) the row of each sorted position, by binary
 *                         search over the segment begins
 *   sort_gather_kernel    the first k sorted indices of each row -> out_values (bits
 *                         read back from the input, so they are exact) and
 *                         out_indices; slots past a short row's end get index -1 and
 *                         the worst value
 *
 * Every index is 64-bit: rows and buffers may hold 2^31 elements or more. Rows go
 * over grid y (strided, so any batch fits in 65535), elements over grid x with a
 * grid-stride loop. All kernels are templated on bit width only (never on the
 * direction), except the init kernel, whose key transform needs the dtype.
 */
#ifndef TOPK_CUDA_SORT_KERNELS_CUH
#define TOPK_CUDA_SORT_KERNELS_CUH

#include <stdint.h>

#include "../common/keys.cuh"
#include "../common/rows.cuh"

/* Writes keys[row * n + i] = sort key of in[row * ld + i] and vals[row * n + i] = i,
 * for rows [0, rows) of n elements: the group's rows packed without their stride. */
template <topk_dtype DT, typename ValT>
static __global__ void sort_init_kernel(const typename topk_dtype_traits<DT>::raw_t* __restrict__ in, int64_t ld,
                                        int64_t n, int64_t rows,
                                        typename topk_dtype_traits<DT>::key_t* __restrict__ keys,
                                        ValT* __restrict__ vals, int smallest) {
  typedef typename topk_dtype_traits<DT>::raw_t raw_t;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const raw_t* src = in + row * ld;
    const int64_t dst = row * n;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
      keys[dst + i] = topk_to_sort_key<DT>(src[i], smallest != 0);
      vals[dst + i] = (ValT)i;
    }
  }
}

/* begin/end of rows segments. offsets == NULL: uniform rows of n, packed (row * n).
 * Otherwise variable rows: [offsets[r], offsets[r + 1]) clamped into [0, n], end >= begin. */
static __global__ void sort_segments_kernel(const int64_t* __restrict__ offsets, int64_t n, int64_t rows,
                                            int64_t* __restrict__ begin, int64_t* __restrict__ end) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
    const topk_row_span s = topk_row(offsets, n, n, r); /* common/rows.cuh; uniform rows are packed here */
    begin[r] = s.start;
    end[r] = s.start + s.len;
  }
}

/* row_id[j] = the row holding buffer position pos[j]; rows (one past the last row)
 * for a position in no row, so that such elements sort after every row. */
static __global__ void sort_row_id_kernel(const uint64_t* __restrict__ pos, int64_t count,
                                          const int64_t* __restrict__ begin, const int64_t* __restrict__ end,
                                          int64_t rows, uint32_t* __restrict__ row_id) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < count; j += stride) {
    const int64_t p = (int64_t)pos[j];
    /* The last row starting at or before p: empty rows sharing that start come
     * before the row that holds p, so the last one is the right one. */
    int64_t lo = 0, hi = rows; /* answer in [lo - 1, hi - 1] */
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (begin[mid] <= p) lo = mid + 1;
      else hi = mid;
    }
    const int64_t r = lo - 1;
    row_id[j] = (uint32_t)((r >= 0 && p < end[r]) ? r : rows);
  }
}

/* What the gather needs; plain data passed by value. */
typedef struct sort_gather_params {
  const void*    in;           /* the caller's input */
  int64_t        ld;           /* uniform rows: row stride of in */
  int64_t        n;            /* uniform rows: row length; variable rows: buffer length */
  const void*    sorted;       /* the sorted indices (ValT) */
  int64_t        sorted_count; /* length of the sorted buffer */
  const int64_t* seg_begin;    /* variable rows: clamped begins (indexed by local row); NULL: uniform rows */
  const int64_t* seg_end;
  int            from_first;   /* global mode: a row's run starts at seg_begin[r] - seg_begin[0] */
  int64_t        rows;         /* rows in this launch */
  int64_t        row0;         /* output row of local row 0 (and input row, for uniform rows) */
  int64_t        k;
  void*          values;       /* batch x k of the dtype's raw bits */
  void*          indices;      /* batch x k of index_type; NULL for TOPK_INDEX_NONE */
  int            index_type;
  uint64_t       worst_bits;   /* value of a padded slot */
} sort_gather_params;

/*
 * Uniform rows: local row rl's run is sorted[rl * n ..], holding positions within
 * the row. Variable rows: the run of row r is sorted[seg_begin[r] ..] (segmented
 * mode, sorted in place) or sorted[seg_begin[r] - seg_begin[0] ..] (global mode,
 * rows packed in order), holding positions within the whole buffer.
 */
template <typename RawT, typename ValT>
static __global__ void sort_gather_kernel(sort_gather_params a) {
  const RawT* __restrict__ in = (const RawT*)a.in;
  const ValT* __restrict__ sorted = (const ValT*)a.sorted;
  RawT* __restrict__ values = (RawT*)a.values;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t rl = blockIdx.y; rl < a.rows; rl += gridDim.y) {
    const int64_t row = a.row0 + rl;
    int64_t len, run, bias, src;
    if (a.seg_begin) {
      const int64_t b = a.seg_begin[rl];
      len = a.seg_end[rl] - b;
      run = a.from_first ? b - a.seg_begin[0] : b;
      bias = b;  /* buffer position -> position within the row */
      src = 0;   /* sorted values are buffer positions */
    } else {
      len = a.n;
      run = rl * a.n;
      bias = 0;
      src = row * a.ld;
    }
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < a.k; j += stride) {
      RawT v = (RawT)a.worst_bits;
      int64_t idx = -1;
      /* The bounds checks only matter for offsets that break their contract. */
      if (j < len && run + j >= 0 && run + j < a.sorted_count) {
        const uint64_t at = (uint64_t)sorted[run + j];
        if (at < (uint64_t)a.n) {
          v = in[src + (int64_t)at];
          idx = (int64_t)at - bias;
        }
      }
      const int64_t o = row * a.k + j;
      values[o] = v;
      if (a.index_type == TOPK_INDEX_I64) ((int64_t*)a.indices)[o] = idx;
      else if (a.index_type == TOPK_INDEX_I32) ((int32_t*)a.indices)[o] = (int32_t)idx;
    }
  }
}

#endif /* TOPK_CUDA_SORT_KERNELS_CUH */
