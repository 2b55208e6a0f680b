/*
 * check.c: verifies a top-k result against the CPU reference (see check.h).
 *
 * The reference is computed through the public API (TOPK_BACKEND_CPU,
 * TOPK_ALGO_SORT, sorted, int64 indices) on the same host data, so the checker
 * exercises exactly what a user would call. Values are compared through their
 * rank keys (common/keys.h), which makes every NaN one key and keeps -0.0 below
 * +0.0, as the semantics require.
 */
#include "check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/common/keys.h"
#include "gen.h"

typedef struct check_item {
  uint64_t key;  /* rank key: larger is better */
  int64_t  idx;  /* row index (-1 when the result has no indices) */
  int64_t  slot; /* output slot within the row */
} check_item;

static int is_nan_bits(uint64_t b, topk_dtype dt) {
  switch (dt) {
    case TOPK_F16: return (b & 0x7FFFu) > 0x7C00u;
    case TOPK_BF16: return (b & 0x7FFFu) > 0x7F80u;
    case TOPK_F32: return (b & 0x7FFFFFFFu) > 0x7F800000u;
    case TOPK_F64: return (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    default: return 0;
  }
}

/* Best first: key descending, then index ascending. */
static int item_cmp_best(const void* a, const void* b) {
  const check_item* x = (const check_item*)a;
  const check_item* y = (const check_item*)b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static int i64_cmp(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

static int64_t load_index(const void* indices, topk_index it, int64_t slot) {
  return it == TOPK_INDEX_I32 ? (int64_t)((const int32_t*)indices)[slot] : ((const int64_t*)indices)[slot];
}

/* "f32 0.5 (0x3f000000)" for element i of an array. */
static void describe(char* out, size_t len, const void* base, int64_t i, topk_dtype dt) {
  snprintf(out, len, "%.17g (0x%" PRIx64 ")", gen_to_double(base, i, dt), topk_load_bits(base, i, dt));
}

static void report(const topk_problem* p, int64_t row, int64_t slot, const char* what, const void* got_base,
                   int64_t got_i, const void* want_base, int64_t want_i) {
  char got[96] = "-", want[96] = "-";
  if (got_base) describe(got, sizeof got, got_base, got_i, p->dtype);
  if (want_base) describe(want, sizeof want, want_base, want_i, p->dtype);
  fprintf(stderr,
          "check_topk: row %lld slot %lld: %s: got %s, want %s  [%s batch=%lld n=%lld k=%lld ld=%lld flags=0x%x "
          "index=%d]\n",
          (long long)row, (long long)slot, what, got, want, topk_dtype_name(p->dtype), (long long)p->batch,
          (long long)p->n, (long long)p->k, (long long)p->ld, p->flags, (int)p->index_type);
}

int check_topk(const topk_problem* p, const void* in, const int64_t* offsets, const void* values,
               const void* indices) {
  if (!p || p->batch <= 0 || p->k <= 0) return 0;
  const topk_dtype dt = p->dtype;
  const size_t es = topk_dtype_size(dt);
  if (es == 0) {
    fprintf(stderr, "check_topk: unknown dtype %d\n", (int)dt);
    return -1;
  }
  const int smallest = (p->flags & TOPK_SMALLEST) != 0;
  const int sorted = (p->flags & TOPK_SORTED) != 0;
  const int deterministic = (p->flags & TOPK_NONDETERMINISTIC) == 0;
  const int has_idx = indices != NULL && p->index_type != TOPK_INDEX_NONE;
  const int64_t k = p->k, ld = offsets ? 0 : (p->ld ? p->ld : p->n);

  topk_problem rp = *p;
  rp.row_offsets = offsets;
  rp.ld = ld;
  rp.flags = (p->flags & TOPK_SMALLEST) | TOPK_SORTED;
  rp.index_type = TOPK_INDEX_I64;
  rp.algo = TOPK_ALGO_SORT;
  rp.backend = TOPK_BACKEND_CPU;
  void* ref_v = malloc((size_t)(p->batch * k) * es);
  int64_t* ref_i = (int64_t*)malloc((size_t)(p->batch * k) * sizeof(int64_t));
  check_item* got = (check_item*)malloc((size_t)k * sizeof(check_item));
  int64_t* got_idx = (int64_t*)malloc((size_t)k * sizeof(int64_t));
  int64_t* want_idx = (int64_t*)malloc((size_t)k * sizeof(int64_t));
  int rc = -1;
  if (!ref_v || !ref_i || !got || !got_idx || !want_idx) {
    fprintf(stderr, "check_topk: out of memory for batch=%lld k=%lld\n", (long long)p->batch, (long long)k);
    goto done;
  }
  topk_status s = topk_select(&rp, in, ref_v, ref_i, NULL, 0, NULL);
  if (s != TOPK_SUCCESS) {
    fprintf(stderr, "check_topk: the reference failed: %s (%s)\n", topk_status_name(s), topk_error_detail());
    goto done;
  }

  const uint64_t worst_key = topk_rank_key(topk_worst_value_bits(dt, smallest), dt, smallest);
  for (int64_t r = 0; r < p->batch; ++r) {
    const int64_t start = offsets ? offsets[r] : r * ld;
    const int64_t len = offsets ? offsets[r + 1] - offsets[r] : p->n;
    const int64_t m = k < len ? k : len; /* real results; the rest is padding */
    const int64_t base = r * k;

    for (int64_t sl = 0; sl < k; ++sl) {
      const uint64_t bits = topk_load_bits(values, base + sl, dt);
      const uint64_t key = topk_rank_key(bits, dt, smallest);
      const int64_t idx = has_idx ? load_index(indices, p->index_type, base + sl) : -1;
      if (sl >= m) {
        if (has_idx && idx != -1) {
          fprintf(stderr, "check_topk: row %lld slot %lld: padded slot has index %lld, want -1\n", (long long)r,
                  (long long)sl, (long long)idx);
          goto done;
        }
        if (key != worst_key) {
          uint64_t w = topk_worst_value_bits(dt, smallest);
          report(p, r, sl, "padded slot does not hold the worst value", values, base + sl, &w, 0);
          goto done;
        }
        continue;
      }
      if (has_idx) {
        if (idx < 0 || idx >= len) {
          fprintf(stderr, "check_topk: row %lld slot %lld: index %lld is outside [0, %lld)\n", (long long)r,
                  (long long)sl, (long long)idx, (long long)len);
          goto done;
        }
        const uint64_t at = topk_load_bits(in, start + idx, dt);
        if (at != bits && !(is_nan_bits(at, dt) && is_nan_bits(bits, dt))) {
          report(p, r, sl, "value differs from in[row][index]", values, base + sl, in, start + idx);
          goto done;
        }
        got_idx[sl] = idx;
      }
      got[sl].key = key;
      got[sl].idx = idx;
      got[sl].slot = sl;
    }

    if (has_idx) { /* distinct indices */
      qsort(got_idx, (size_t)m, sizeof *got_idx, i64_cmp);
      for (int64_t j = 1; j < m; ++j)
        if (got_idx[j] == got_idx[j - 1]) {
          fprintf(stderr, "check_topk: row %lld: index %lld returned twice\n", (long long)r, (long long)got_idx[j]);
          goto done;
        }
    }

    if (sorted) { /* best first; equal keys by index when deterministic */
      for (int64_t j = 1; j < m; ++j) {
        const check_item *a = &got[j - 1], *b = &got[j];
        if (a->key < b->key) {
          report(p, r, j, "not sorted: better than the slot before it", values, base + j, values, base + j - 1);
          goto done;
        }
        if (deterministic && has_idx && a->key == b->key && a->idx > b->idx) {
          fprintf(stderr, "check_topk: row %lld slot %lld: equal values not in index order (%lld after %lld)\n",
                  (long long)r, (long long)j, (long long)b->idx, (long long)a->idx);
          goto done;
        }
      }
    }

    /* The multiset of keys: the reference row is sorted best first, so sort ours the same way. */
    qsort(got, (size_t)m, sizeof *got, item_cmp_best);
    for (int64_t j = 0; j < m; ++j) {
      const uint64_t want_key = topk_rank_key(topk_load_bits(ref_v, base + j, dt), dt, smallest);
      if (got[j].key != want_key) {
        report(p, r, got[j].slot, "values differ from the reference (k-th best first shown)", values,
               base + got[j].slot, ref_v, base + j);
        goto done;
      }
    }

    if (has_idx && deterministic) { /* the lowest indices among ties: the very same index set */
      for (int64_t j = 0; j < m; ++j) want_idx[j] = ref_i[base + j];
      qsort(want_idx, (size_t)m, sizeof *want_idx, i64_cmp);
      for (int64_t j = 0; j < m; ++j)
        if (got_idx[j] != want_idx[j]) {
          fprintf(stderr,
                  "check_topk: row %lld: index sets differ (deterministic ties): %lld-th smallest index is %lld, "
                  "want %lld\n",
                  (long long)r, (long long)j, (long long)got_idx[j], (long long)want_idx[j]);
          goto done;
        }
    }
  }
  rc = 0;
done:
  free(ref_v);
  free(ref_i);
  free(got);
  free(got_idx);
  free(want_idx);
  return rc;
}

void check_poison(void* host_buffer, size_t bytes) {
  if (host_buffer) memset(host_buffer, 0xA5, bytes);
}

int check_is_poisoned(const void* host_buffer, size_t bytes) {
  const unsigned char* b = (const unsigned char*)host_buffer;
  for (size_t i = 0; i < bytes; ++i)
    if (b[i] != 0xA5) return 0;
  return 1;
}
