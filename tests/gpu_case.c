/* gpu_case.c: see gpu_case.h. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include "gpu_case.h"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

void gpu_case_describe(const gpu_case* c) {
  fprintf(stderr,
          "  case: algo=%s %s batch=%lld n=%lld k=%lld ld=%lld flags=0x%x index=%d dist=%s equal_bits=%d "
          "nan=%.2f inf=%.2f zero=%.2f offsets=%s lib_workspace=%d out_shift=%d",
          topk_algo_name(c->algo), topk_dtype_name(c->dtype), (long long)c->batch, (long long)c->n,
          (long long)c->k, (long long)c->ld, c->flags, (int)c->index_type, gen_dist_name(c->gen.dist),
          c->gen.equal_bits, c->gen.nan_fraction, c->gen.inf_fraction, c->gen.zero_fraction, c->offsets ? "yes" : "no",
          c->lib_workspace, c->out_shift);
  for (int i = 0; i < GPU_CASE_MAX_ENV && c->env[i][0]; ++i)
    fprintf(stderr, " %s=%s", c->env[i][0], c->env[i][1] ? c->env[i][1] : "(unset)");
  fprintf(stderr, "\n");
}

static void set_env(const gpu_case* c, int on) {
  for (int i = 0; i < GPU_CASE_MAX_ENV && c->env[i][0]; ++i) {
    if (on && c->env[i][1]) setenv(c->env[i][0], c->env[i][1], 1);
    else unsetenv(c->env[i][0]);
  }
}

const gen_opts gpu_case_dists[] = {
    {.dist = GEN_UNIFORM},
    {.dist = GEN_NORMAL},
    {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 8},
    {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 16},
    {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 20},
    {.dist = GEN_RADIX_ADVERSARIAL, .equal_bits = 24},
    {.dist = GEN_CD},
    {.dist = GEN_ALL_EQUAL},
    {.dist = GEN_ZIPF},
    {.dist = GEN_SORTED_ASC},
    {.dist = GEN_SORTED_DESC},
    {.dist = GEN_UNIFORM, .nan_fraction = 0.05, .inf_fraction = 0.05},
    {.dist = GEN_NORMAL, .nan_fraction = 0.3, .inf_fraction = 0.3},
    {.dist = GEN_UNIFORM, .nan_fraction = 1.0},
};
const int gpu_case_dist_count = (int)(sizeof gpu_case_dists / sizeof gpu_case_dists[0]);

int gpu_case_run(const gpu_case* c, uint64_t seed) {
  const size_t es = topk_dtype_size(c->dtype);
  const size_t is = c->index_type == TOPK_INDEX_I32 ? 4 : 8;
  const int want_idx = c->index_type != TOPK_INDEX_NONE;
  const int64_t ld = c->offsets ? 0 : (c->ld ? c->ld : c->n);
  const int64_t count = c->offsets ? c->n : (c->batch - 1) * ld + c->n;
  const size_t in_bytes = (size_t)(count > 0 ? count : 1) * es;
  const size_t val_bytes = (size_t)(c->batch * c->k) * es;
  const size_t idx_bytes = (size_t)(c->batch * c->k) * is;
  const size_t vsh = (size_t)c->out_shift * es, ish = (size_t)c->out_shift * is; /* bytes before the outputs */
  const size_t off_bytes = c->offsets ? (size_t)(c->batch + 1) * sizeof(int64_t) : 0;
  int rc = -1;
  void *in = malloc(in_bytes), *vals = malloc(val_bytes), *idxs = want_idx ? malloc(idx_bytes) : NULL;
  void *d_in = NULL, *d_vals = NULL, *d_idxs = NULL, *d_off = NULL, *d_ws = NULL;
  if (!in || !vals || (want_idx && !idxs)) {
    fprintf(stderr, "gpu_case_run: out of host memory\n");
    goto done;
  }

  gen_opts o = c->gen;
  if (o.seed == 0) o.seed = seed;
  if ((o.dist == GEN_SORTED_ASC || o.dist == GEN_SORTED_DESC) && !c->offsets) o.row_length = ld;
  if (count > 0 && gen_fill(in, c->dtype, count, &o) != 0) {
    fprintf(stderr, "gpu_case_run: gen_fill failed\n");
    goto done;
  }

  if (c->out_shift < 0 || c->out_shift > 8) {
    fprintf(stderr, "gpu_case_run: out_shift %d is outside 0..8\n", c->out_shift);
    goto done;
  }
  GPU_TRY(topk_device_malloc(&d_in, in_bytes), "device_malloc(in)");
  GPU_TRY(topk_device_malloc(&d_vals, vsh + val_bytes), "device_malloc(values)");
  if (want_idx) GPU_TRY(topk_device_malloc(&d_idxs, ish + idx_bytes), "device_malloc(indices)");
  if (c->offsets) GPU_TRY(topk_device_malloc(&d_off, off_bytes), "device_malloc(offsets)");
  GPU_TRY(topk_memcpy_to_device(d_in, in, in_bytes), "memcpy(in)");
  if (c->offsets) GPU_TRY(topk_memcpy_to_device(d_off, c->offsets, off_bytes), "memcpy(offsets)");
  /* poison: an unwritten slot fails the check */
  GPU_TRY(topk_memset_device(d_vals, 0xA5, vsh + val_bytes, NULL), "memset(values)");
  if (want_idx) GPU_TRY(topk_memset_device(d_idxs, 0xA5, ish + idx_bytes, NULL), "memset(indices)");

  set_env(c, 1);
  topk_problem p = {.dtype = c->dtype,
                    .batch = c->batch,
                    .n = c->n,
                    .k = c->k,
                    .ld = c->offsets ? 0 : c->ld,
                    .row_offsets = (const int64_t*)d_off,
                    .index_type = c->index_type,
                    .flags = c->flags,
                    .algo = c->algo,
                    .backend = TOPK_BACKEND_CUDA};
  size_t ws = 0;
  GPU_TRY(topk_workspace_size(&p, &ws), "topk_workspace_size");
  if (!c->lib_workspace && ws > 0) GPU_TRY(topk_device_malloc(&d_ws, ws), "device_malloc(workspace)");
  GPU_TRY(topk_select(&p, d_in, (char*)d_vals + vsh, want_idx ? (char*)d_idxs + ish : NULL, d_ws,
                      c->lib_workspace ? 0 : ws, NULL),
          "topk_select");
  GPU_TRY(topk_device_synchronize(), "synchronize after topk_select");
  GPU_TRY(topk_memcpy_to_host(vals, (char*)d_vals + vsh, val_bytes), "memcpy(values)");
  if (want_idx) GPU_TRY(topk_memcpy_to_host(idxs, (char*)d_idxs + ish, idx_bytes), "memcpy(indices)");
  if (c->out_shift > 0) { /* the bytes before the outputs: still the poison */
    unsigned char head[64]; /* 8 elements of at most 8 bytes */
    int bad = 0;
    GPU_TRY(topk_memcpy_to_host(head, d_vals, vsh), "memcpy(values' head)");
    for (size_t i = 0; i < vsh; ++i) bad |= head[i] != 0xA5;
    if (want_idx) GPU_TRY(topk_memcpy_to_host(head, d_idxs, ish), "memcpy(indices' head)");
    for (size_t i = 0; want_idx && i < ish; ++i) bad |= head[i] != 0xA5;
    if (bad) {
      fprintf(stderr, "gpu_case_run: a write before the outputs (out_shift %d)\n", c->out_shift);
      goto done;
    }
  }

  topk_problem hp = p;
  hp.row_offsets = NULL;
  rc = check_topk(&hp, in, c->offsets, vals, want_idx ? idxs : NULL);

done:
  set_env(c, 0);
  if (rc != 0) gpu_case_describe(c);
  topk_device_free(d_in);
  topk_device_free(d_vals);
  topk_device_free(d_idxs);
  topk_device_free(d_off);
  topk_device_free(d_ws);
  free(in);
  free(vals);
  free(idxs);
  return rc;
}
