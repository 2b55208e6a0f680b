/*
 * reference.c: the exact CPU oracle (TOPK_ALGO_SORT on the CPU backend).
 *
 * Deliberately the obvious method, so that it can be trusted by inspection: for
 * each row, build (rank key, index) pairs, qsort them by key descending and index
 * ascending, and keep the first k. The output is always sorted (allowed for
 * unsorted requests too). Every other algorithm is tested against this one.
 */
#include <stdint.h>
#include <stdlib.h>

#include "algo.h"
#include "common/keys.h"

typedef struct ref_pair {
  uint64_t key; /* topk_rank_key: larger is better */
  int64_t  idx; /* position within the row */
} ref_pair;

/* Best first: key descending, then index ascending (the deterministic tie rule). */
static int ref_pair_cmp(const void* a, const void* b) {
  const ref_pair* x = (const ref_pair*)a;
  const ref_pair* y = (const ref_pair*)b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static int ref_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)p; (void)dev; (void)why; (void)why_len;
  return 1;
}

static topk_status ref_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  (void)p; (void)dev;
  *bytes = 0;
  return TOPK_SUCCESS;
}

static void ref_store_index(const topk_args* a, int64_t slot, int64_t idx) {
  if (a->p.index_type == TOPK_INDEX_I64) ((int64_t*)a->indices)[slot] = idx;
  else if (a->p.index_type == TOPK_INDEX_I32) ((int32_t*)a->indices)[slot] = (int32_t)idx;
}

static topk_status ref_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  (void)workspace; (void)workspace_bytes; (void)stream;
  const topk_problem* p = &a->p;

  int64_t longest = 0;
  for (int64_t r = 0; r < p->batch; ++r) {
    int64_t len = topk_row_length(p, r);
    if (len > longest) longest = len;
  }
  TOPK_RETURN_IF((uint64_t)longest > SIZE_MAX / sizeof(ref_pair), TOPK_ERR_OUT_OF_MEMORY,
                 "a row of %lld elements is too long to sort in memory", (long long)longest);
  ref_pair* pairs = (ref_pair*)malloc((size_t)(longest > 0 ? longest : 1) * sizeof(ref_pair));
  TOPK_RETURN_IF(!pairs, TOPK_ERR_OUT_OF_MEMORY, "cannot allocate %lld sort pairs", (long long)longest);

  const topk_dtype dt = p->dtype;
  const int smallest = (p->flags & TOPK_SMALLEST) != 0;
  const uint64_t worst = topk_worst_value_bits(dt, smallest);
  for (int64_t r = 0; r < p->batch; ++r) {
    const int64_t start = topk_row_start(p, r), len = topk_row_length(p, r);
    for (int64_t i = 0; i < len; ++i) {
      pairs[i].key = topk_rank_key(topk_load_bits(a->in, start + i, dt), dt, smallest);
      pairs[i].idx = i;
    }
    qsort(pairs, (size_t)len, sizeof(ref_pair), ref_pair_cmp);
    for (int64_t s = 0; s < p->k; ++s) {
      const int64_t slot = r * p->k + s;
      if (s < len) {
        topk_store_bits(a->values, slot, dt, topk_load_bits(a->in, start + pairs[s].idx, dt));
        ref_store_index(a, slot, pairs[s].idx);
      } else { /* a row shorter than k: pad, as topk.h documents */
        topk_store_bits(a->values, slot, dt, worst);
        ref_store_index(a, slot, -1);
      }
    }
  }
  free(pairs);
  return TOPK_SUCCESS;
}

const topk_algo_ops topk_algo_cpu_reference = {
    "sort", TOPK_ALGO_SORT, TOPK_BACKEND_CPU, ref_supports, ref_workspace_size, ref_run,
};
