/*
 * api.c: the public entry points. Validates every argument (a distinct status
 * each, nothing written on error), resolves the backend and algorithm, and runs
 * the chosen entry of the ops table. No host synchronisation happens here.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "topk.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* ---------------------------------------------------------------- version */

unsigned topk_version_number(void) { return TOPK_VERSION_NUMBER; }
const char* topk_version_string(void) {
  return STRINGIFY(TOPK_VERSION_MAJOR) "." STRINGIFY(TOPK_VERSION_MINOR) "." STRINGIFY(TOPK_VERSION_PATCH);
}

/* ---------------------------------------------------------------- status */

static _Thread_local char detail_[512];

const char* topk_status_name(topk_status s) {
  switch (s) {
#define TOPK_STATUS_NAME_(name, value, text) case TOPK_##name: return "TOPK_" #name;
    TOPK_STATUS_LIST(TOPK_STATUS_NAME_)
#undef TOPK_STATUS_NAME_
  }
  return "TOPK_UNKNOWN_STATUS";
}

const char* topk_status_message(topk_status s) {
  switch (s) {
#define TOPK_STATUS_TEXT_(name, value, text) case TOPK_##name: return text;
    TOPK_STATUS_LIST(TOPK_STATUS_TEXT_)
#undef TOPK_STATUS_TEXT_
  }
  return "unknown status";
}

const char* topk_error_detail(void) { return detail_; }

topk_status topk_fail(topk_status status, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail_, sizeof detail_, fmt, ap);
  va_end(ap);
  return status;
}

/* First thing in every public entry that may plan or run: no detail left from the last call, and the
 * knobs scanned (src/env.c). */
static void begin_call(void) {
  detail_[0] = '\0';
  topk_env_scan();
}

/* ---------------------------------------------------------------- names */

static const char* const dtype_names_[TOPK_DTYPE_COUNT] = {"f32", "f16", "bf16", "f64",
                                                           "i32", "u32", "i64",  "u64"};
static const size_t dtype_sizes_[TOPK_DTYPE_COUNT] = {4, 2, 2, 8, 4, 4, 8, 8};

size_t topk_dtype_size(topk_dtype dt) {
  return ((unsigned)dt < TOPK_DTYPE_COUNT) ? dtype_sizes_[dt] : 0;
}
const char* topk_dtype_name(topk_dtype dt) {
  return ((unsigned)dt < TOPK_DTYPE_COUNT) ? dtype_names_[dt] : NULL;
}
int topk_dtype_parse(const char* name, topk_dtype* dt) {
  if (!name || !dt) return -1;
  for (int i = 0; i < TOPK_DTYPE_COUNT; ++i)
    if (strcmp(name, dtype_names_[i]) == 0) { *dt = (topk_dtype)i; return 0; }
  return -1;
}

static const char* const algo_names_[TOPK_ALGO_COUNT] = {
    "auto",    "sort",   "cpu_select",   "air_radix",      "warp_select",     "block_select", "grid_select",
    "bitonic", "bucket", "drtopk_radix", "drtopk_bucket", "drtopk_bitonic", "rtopk"};

const char* topk_algo_name(topk_algo a) {
  return ((unsigned)a < TOPK_ALGO_COUNT) ? algo_names_[a] : NULL;
}
int topk_algo_parse(const char* name, topk_algo* a) {
  if (!name || !a) return -1;
  for (int i = 0; i < TOPK_ALGO_COUNT; ++i)
    if (strcmp(name, algo_names_[i]) == 0) { *a = (topk_algo)i; return 0; }
  return -1;
}

/* ---------------------------------------------------------------- devices */

int topk_cuda_available(void) { return topk_cuda_built() && topk_cuda_device_count_() > 0; }
int topk_device_count(void) { return topk_cuda_built() ? topk_cuda_device_count_() : 0; }

topk_status topk_device_get_props(int ordinal, topk_device_props* props) {
  begin_call();
  TOPK_RETURN_IF(!props, TOPK_ERR_NULL_POINTER, "props is NULL");
  TOPK_RETURN_IF(ordinal < 0 || ordinal >= topk_device_count(), TOPK_ERR_NO_DEVICE,
                 "no CUDA device %d (%d present)", ordinal, topk_device_count());
  return topk_cuda_props(ordinal, props);
}

topk_status topk_measure_read_bandwidth(double* bytes_per_second) {
  begin_call();
  TOPK_RETURN_IF(!bytes_per_second, TOPK_ERR_NULL_POINTER, "bytes_per_second is NULL");
  TOPK_RETURN_IF(!topk_cuda_available(), TOPK_ERR_NO_DEVICE, "no CUDA device");
  return topk_cuda_read_bandwidth(bytes_per_second);
}

const char* topk_build_info(void) { return topk_cuda_build_info(); }

/* ---------------------------------------------------------------- validation */

static int mul_overflows(int64_t a, int64_t b) { return a != 0 && b > INT64_MAX / a; }

/* Checks everything that does not need the data pointers; resolves ld. */
static topk_status validate_problem(const topk_problem* in, topk_problem* p) {
  TOPK_RETURN_IF(!in, TOPK_ERR_NULL_POINTER, "problem is NULL");
  *p = *in;
  TOPK_RETURN_IF((unsigned)p->dtype >= TOPK_DTYPE_COUNT, TOPK_ERR_DTYPE, "unknown dtype %d", (int)p->dtype);
  TOPK_RETURN_IF((unsigned)p->index_type > TOPK_INDEX_NONE, TOPK_ERR_INDEX_TYPE, "unknown index type %d",
                 (int)p->index_type);
  TOPK_RETURN_IF(p->flags & ~(unsigned)TOPK_FLAGS_ALL, TOPK_ERR_INVALID_ARGUMENT, "unknown flags 0x%x",
                 p->flags & ~(unsigned)TOPK_FLAGS_ALL);
  TOPK_RETURN_IF((unsigned)p->algo >= TOPK_ALGO_COUNT, TOPK_ERR_INVALID_ARGUMENT, "unknown algorithm %d",
                 (int)p->algo);
  TOPK_RETURN_IF((unsigned)p->backend > TOPK_BACKEND_CUDA, TOPK_ERR_INVALID_ARGUMENT, "unknown backend %d",
                 (int)p->backend);
  TOPK_RETURN_IF(p->batch < 0, TOPK_ERR_INVALID_ARGUMENT, "batch=%lld is negative", (long long)p->batch);
  TOPK_RETURN_IF(p->n < 0, TOPK_ERR_INVALID_ARGUMENT, "n=%lld is negative", (long long)p->n);
  TOPK_RETURN_IF(p->k < 0, TOPK_ERR_INVALID_ARGUMENT, "k=%lld is negative", (long long)p->k);
  TOPK_RETURN_IF(p->ld < 0, TOPK_ERR_STRIDE, "ld=%lld is negative", (long long)p->ld);
  TOPK_RETURN_IF(p->max_iter < 0, TOPK_ERR_INVALID_ARGUMENT, "max_iter=%d is negative (0 = exact)",
                 (int)p->max_iter);
  TOPK_RETURN_IF(p->max_iter > 0 && p->algo != TOPK_ALGO_AUTO && p->algo != TOPK_ALGO_RTOPK, TOPK_ERR_UNSUPPORTED,
                 "max_iter=%d (early stopping) is honoured only by algorithm 'rtopk', not '%s'", (int)p->max_iter,
                 topk_algo_name(p->algo));
  if (p->row_offsets) {
    TOPK_RETURN_IF(p->ld != 0, TOPK_ERR_STRIDE, "ld=%lld given with row_offsets (must be 0)", (long long)p->ld);
  } else {
    if (p->ld == 0) p->ld = p->n;
    TOPK_RETURN_IF(p->ld < p->n, TOPK_ERR_STRIDE, "ld=%lld is smaller than n=%lld", (long long)p->ld,
                   (long long)p->n);
    TOPK_RETURN_IF(p->k > p->n, TOPK_ERR_K_RANGE, "k=%lld exceeds n=%lld", (long long)p->k, (long long)p->n);
  }
  TOPK_RETURN_IF(p->index_type == TOPK_INDEX_I32 && p->n > INT32_MAX, TOPK_ERR_INDEX_TYPE,
                 "int32 indices cannot address rows of n=%lld elements", (long long)p->n);
  size_t es = topk_dtype_size(p->dtype);
  int64_t span = p->row_offsets ? p->n : (p->batch > 0 ? (p->batch - 1) : 0);
  TOPK_RETURN_IF(!p->row_offsets && mul_overflows(span, p->ld), TOPK_ERR_INVALID_ARGUMENT,
                 "batch x ld overflows 64 bits");
  if (!p->row_offsets) span = span * p->ld + p->n;
  TOPK_RETURN_IF(mul_overflows(span, (int64_t)es) || mul_overflows(p->batch, p->k) ||
                     mul_overflows(p->batch * p->k, 8),
                 TOPK_ERR_INVALID_ARGUMENT, "problem size overflows 64 bits");
  return TOPK_SUCCESS;
}

static int is_empty(const topk_problem* p) { return p->batch == 0 || p->k == 0; }

/* ---------------------------------------------------------------- plans */

struct topk_plan_s {
  topk_problem            p;          /* validated; row_offsets replaced by has_offsets */
  int                     has_offsets;
  const topk_algo_ops*    cpu;        /* NULL if the CPU backend is excluded */
  const topk_algo_ops*    cuda;       /* NULL if the CUDA backend is excluded or absent */
  topk_device_info        dev;        /* valid when cuda != NULL */
  size_t                  cuda_workspace;
  char                    why[256];   /* how the algorithm was chosen (topk_plan_explain) */
};

static topk_status pick_ops(const topk_problem* p, topk_backend backend, const topk_device_info* dev,
                            const topk_algo_ops** out, char* reason, size_t reason_len) {
  const topk_algo_ops* ops = p->algo == TOPK_ALGO_AUTO ? topk_choose(p, backend, dev, reason, reason_len)
                                                       : topk_algo_find(backend, p->algo);
  if (p->algo != TOPK_ALGO_AUTO && ops && reason && reason_len) snprintf(reason, reason_len, "%s: requested", ops->name);
  TOPK_RETURN_IF(!ops, TOPK_ERR_UNSUPPORTED, "algorithm '%s' is not built for the %s backend",
                 topk_algo_name(p->algo), backend == TOPK_BACKEND_CPU ? "CPU" : "CUDA");
  char why[256];
  why[0] = '\0';
  TOPK_RETURN_IF(!ops->supports(p, dev, why, sizeof why), TOPK_ERR_UNSUPPORTED, "algorithm '%s': %s",
                 ops->name, why);
  *out = ops;
  return TOPK_SUCCESS;
}

/*
 * Fills a plan for a validated problem. explain: write why the algorithm was chosen into
 * plan->why (topk_plan_explain); topk_select's one-call plan skips it, since formatting the
 * reason (AUTO's interpolated costs) is host time on every call that nobody reads.
 */
static topk_status plan_init(struct topk_plan_s* plan, const topk_problem* p, int explain) {
  memset(plan, 0, sizeof *plan);
  plan->p = *p;
  plan->has_offsets = p->row_offsets != NULL;
  int want_cpu = p->backend != TOPK_BACKEND_CUDA;
  int want_cuda = p->backend != TOPK_BACKEND_CPU;
  if (want_cuda && !topk_cuda_available()) {
    TOPK_RETURN_IF(p->backend == TOPK_BACKEND_CUDA, TOPK_ERR_NO_DEVICE,
                   topk_cuda_built() ? "no CUDA device is available" : "libtopk was built without CUDA");
    want_cuda = 0;
  }
  topk_status s = TOPK_SUCCESS;
  if (want_cuda) {
    int ordinal = 0;
    TOPK_FORWARD_IF_ERROR(topk_cuda_get_device(&ordinal));
    TOPK_FORWARD_IF_ERROR(topk_cuda_device_info(ordinal, &plan->dev));
    s = pick_ops(p, TOPK_BACKEND_CUDA, &plan->dev, &plan->cuda, explain ? plan->why : NULL,
                 explain ? sizeof plan->why : 0);
    if (s == TOPK_SUCCESS) s = plan->cuda->workspace_size(p, &plan->dev, &plan->cuda_workspace);
    if (s != TOPK_SUCCESS && p->backend == TOPK_BACKEND_CUDA) return s;
    if (s != TOPK_SUCCESS) plan->cuda = NULL; /* AUTO: the CPU may still serve host pointers */
  }
  if (want_cpu) {
    char cpu_why[sizeof plan->why];
    cpu_why[0] = '\0';
    topk_status c = pick_ops(p, TOPK_BACKEND_CPU, NULL, &plan->cpu, explain ? cpu_why : NULL,
                             explain ? sizeof cpu_why : 0);
    if (c == TOPK_SUCCESS && !plan->cuda) memcpy(plan->why, cpu_why, sizeof cpu_why);
    if (c != TOPK_SUCCESS && !plan->cuda) return c;
    if (c != TOPK_SUCCESS) plan->cpu = NULL;
  }
  if (!plan->cpu && !plan->cuda) return s != TOPK_SUCCESS ? s : topk_fail(TOPK_ERR_INTERNAL, "no backend");
  return TOPK_SUCCESS;
}

/* [a, a + an) and [b, b + bn) overlap? */
static int overlaps(const void* a, size_t an, const void* b, size_t bn) {
  if (!a || !b || an == 0 || bn == 0) return 0;
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x < y + bn && y < x + an;
}

/*
 * The CPU backend reads offsets on the host, so it can check them before anything is read;
 * a bad one must not send an algorithm out of bounds. (The CUDA backend cannot read them
 * without a device-to-host copy; its algorithms clamp them on the device instead.)
 */
static topk_status check_host_offsets(const topk_problem* p, const int64_t* offsets) {
  if (!offsets) return TOPK_SUCCESS;
  for (int64_t r = 0; r <= p->batch; ++r) {
    int64_t o = offsets[r];
    TOPK_RETURN_IF(o < 0 || o > p->n, TOPK_ERR_INVALID_ARGUMENT, "row_offsets[%lld]=%lld is outside [0, n=%lld]",
                   (long long)r, (long long)o, (long long)p->n);
    TOPK_RETURN_IF(r > 0 && o < offsets[r - 1], TOPK_ERR_INVALID_ARGUMENT,
                   "row_offsets[%lld]=%lld is smaller than row_offsets[%lld]=%lld", (long long)r, (long long)o,
                   (long long)(r - 1), (long long)offsets[r - 1]);
  }
  return TOPK_SUCCESS;
}

static topk_status plan_run(const struct topk_plan_s* plan, const void* in, const int64_t* row_offsets,
                            void* out_values, void* out_indices, void* workspace, size_t workspace_bytes,
                            topk_stream stream) {
  const topk_problem* p = &plan->p;
  if (is_empty(p)) return TOPK_SUCCESS;
  int want_idx = p->index_type != TOPK_INDEX_NONE;
  TOPK_RETURN_IF(!in, TOPK_ERR_NULL_POINTER, "input pointer is NULL");
  TOPK_RETURN_IF(!out_values, TOPK_ERR_NULL_POINTER, "out_values is NULL");
  TOPK_RETURN_IF(want_idx && !out_indices, TOPK_ERR_NULL_POINTER, "out_indices is NULL (index type is not NONE)");
  TOPK_RETURN_IF(plan->has_offsets && !row_offsets, TOPK_ERR_NULL_POINTER,
                 "row_offsets is NULL but the plan was made for variable-length rows");
  TOPK_RETURN_IF(!plan->has_offsets && row_offsets, TOPK_ERR_INVALID_ARGUMENT,
                 "row_offsets given but the plan was made for uniform rows");
  if (!want_idx) out_indices = NULL;

  size_t es = topk_dtype_size(p->dtype);
  size_t is = p->index_type == TOPK_INDEX_I32 ? 4 : 8;
  size_t in_bytes = (size_t)(plan->has_offsets ? p->n : (p->batch - 1) * p->ld + p->n) * es;
  size_t val_bytes = (size_t)(p->batch * p->k) * es;
  size_t idx_bytes = (size_t)(p->batch * p->k) * is;
  size_t off_bytes = plan->has_offsets ? (size_t)(p->batch + 1) * sizeof(int64_t) : 0;
  TOPK_RETURN_IF(overlaps(out_values, val_bytes, in, in_bytes), TOPK_ERR_OVERLAP, "out_values overlaps the input");
  TOPK_RETURN_IF(overlaps(out_indices, idx_bytes, in, in_bytes), TOPK_ERR_OVERLAP, "out_indices overlaps the input");
  TOPK_RETURN_IF(overlaps(out_values, val_bytes, out_indices, idx_bytes), TOPK_ERR_OVERLAP,
                 "out_values overlaps out_indices");
  TOPK_RETURN_IF(overlaps(out_values, val_bytes, row_offsets, off_bytes) ||
                     overlaps(out_indices, idx_bytes, row_offsets, off_bytes),
                 TOPK_ERR_OVERLAP, "an output overlaps row_offsets");

  /* Backend: the plan's, or the input pointer's location for AUTO. */
  const topk_algo_ops* ops = NULL;
  if (plan->cuda && plan->cpu) {
    int where = topk_cuda_is_device_pointer(in);
    TOPK_RETURN_IF(where < 0, TOPK_ERR_CUDA, "cannot tell where the input pointer lives");
    ops = where > 0 ? plan->cuda : plan->cpu;
  } else {
    ops = plan->cuda ? plan->cuda : plan->cpu;
  }
  if (ops->backend == TOPK_BACKEND_CUDA) {
    /* Host pointers given to the CUDA backend would fault on the device: refuse them. */
    TOPK_RETURN_IF(topk_cuda_is_device_pointer(in) < 1, TOPK_ERR_BACKEND, "input is not device memory");
    TOPK_RETURN_IF(topk_cuda_is_device_pointer(out_values) < 1, TOPK_ERR_BACKEND,
                   "out_values is not device memory");
    TOPK_RETURN_IF(out_indices && topk_cuda_is_device_pointer(out_indices) < 1, TOPK_ERR_BACKEND,
                   "out_indices is not device memory");
    TOPK_RETURN_IF(row_offsets && topk_cuda_is_device_pointer(row_offsets) < 1, TOPK_ERR_BACKEND,
                   "row_offsets is not device memory");
    size_t need = plan->cuda_workspace;
    TOPK_RETURN_IF(workspace && workspace_bytes < need, TOPK_ERR_WORKSPACE,
                   "workspace of %zu bytes given, %zu needed", workspace_bytes, need);
    TOPK_RETURN_IF(workspace && (overlaps(workspace, need, in, in_bytes) ||
                                 overlaps(workspace, need, out_values, val_bytes) ||
                                 overlaps(workspace, need, out_indices, idx_bytes)),
                   TOPK_ERR_OVERLAP, "workspace overlaps the input or an output");
  } else if (topk_cuda_available()) {
    /* Device memory given to the CPU backend would crash the host: refuse it (managed memory is fine). */
    TOPK_RETURN_IF(topk_cuda_is_device_pointer(in) == 1, TOPK_ERR_BACKEND, "input is device memory");
    TOPK_RETURN_IF(topk_cuda_is_device_pointer(out_values) == 1, TOPK_ERR_BACKEND, "out_values is device memory");
    TOPK_RETURN_IF(out_indices && topk_cuda_is_device_pointer(out_indices) == 1, TOPK_ERR_BACKEND,
                   "out_indices is device memory");
    TOPK_RETURN_IF(row_offsets && topk_cuda_is_device_pointer(row_offsets) == 1, TOPK_ERR_BACKEND,
                   "row_offsets is device memory");
  }

  topk_args a;
  a.p = *p;
  a.p.row_offsets = row_offsets;
  a.in = in;
  a.values = out_values;
  a.indices = out_indices;
  a.dev = ops->backend == TOPK_BACKEND_CUDA ? &plan->dev : NULL;

  if (ops->backend == TOPK_BACKEND_CPU) {
    TOPK_FORWARD_IF_ERROR(check_host_offsets(p, row_offsets));
    return ops->run(&a, NULL, 0, stream);
  }

  int previous = 0;
  TOPK_FORWARD_IF_ERROR(topk_cuda_set_device(plan->dev.ordinal, &previous));
  topk_status s = TOPK_SUCCESS;
  void* ws = workspace;
  size_t ws_bytes = workspace ? workspace_bytes : plan->cuda_workspace;
  if (!workspace && plan->cuda_workspace > 0) s = topk_cuda_alloc_async(&ws, plan->cuda_workspace, stream);
  if (s == TOPK_SUCCESS) {
    s = ops->run(&a, ws, ws_bytes, stream);
    if (!workspace && ws) {
      topk_status f = topk_cuda_free_async(ws, stream);
      if (s == TOPK_SUCCESS) s = f;
    }
  }
  int ignored = 0;
  if (previous != plan->dev.ordinal) topk_cuda_set_device(previous, &ignored);
  return s;
}

/* ---------------------------------------------------------------- public */

topk_status topk_workspace_size(const topk_problem* p_in, size_t* workspace_bytes) {
  begin_call();
  TOPK_RETURN_IF(!workspace_bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  topk_problem p;
  TOPK_FORWARD_IF_ERROR(validate_problem(p_in, &p));
  *workspace_bytes = 0;
  if (is_empty(&p)) return TOPK_SUCCESS;
  struct topk_plan_s plan;
  TOPK_FORWARD_IF_ERROR(plan_init(&plan, &p, 0));
  *workspace_bytes = plan.cuda ? plan.cuda_workspace : 0;
  return TOPK_SUCCESS;
}

topk_status topk_select(const topk_problem* p_in, const void* in, void* out_values, void* out_indices,
                        void* workspace, size_t workspace_bytes, topk_stream stream) {
  begin_call();
  topk_problem p;
  TOPK_FORWARD_IF_ERROR(validate_problem(p_in, &p));
  if (is_empty(&p)) return TOPK_SUCCESS;
  struct topk_plan_s plan;
  TOPK_FORWARD_IF_ERROR(plan_init(&plan, &p, 0));
  return plan_run(&plan, in, p.row_offsets, out_values, out_indices, workspace, workspace_bytes, stream);
}

topk_status topk_plan_create(topk_plan** plan, const topk_problem* p_in) {
  begin_call();
  TOPK_RETURN_IF(!plan, TOPK_ERR_NULL_POINTER, "plan is NULL");
  *plan = NULL;
  topk_problem p;
  TOPK_FORWARD_IF_ERROR(validate_problem(p_in, &p));
  struct topk_plan_s* made = (struct topk_plan_s*)malloc(sizeof *made);
  TOPK_RETURN_IF(!made, TOPK_ERR_OUT_OF_MEMORY, "cannot allocate a plan");
  topk_status s = TOPK_SUCCESS;
  if (is_empty(&p)) {
    memset(made, 0, sizeof *made);
    made->p = p;
    made->has_offsets = p.row_offsets != NULL;
  } else {
    s = plan_init(made, &p, 1);
  }
  if (s != TOPK_SUCCESS) { free(made); return s; }
  made->p.row_offsets = NULL;
  *plan = made;
  return TOPK_SUCCESS;
}

topk_status topk_plan_workspace_size(const topk_plan* plan, size_t* workspace_bytes) {
  begin_call();
  TOPK_RETURN_IF(!plan || !workspace_bytes, TOPK_ERR_NULL_POINTER, "plan or workspace_bytes is NULL");
  *workspace_bytes = plan->cuda ? plan->cuda_workspace : 0;
  return TOPK_SUCCESS;
}

const char* topk_plan_explain(const topk_plan* plan) { return plan ? plan->why : ""; }

topk_algo topk_plan_algo(const topk_plan* plan) {
  if (!plan) return TOPK_ALGO_AUTO;
  if (plan->cuda) return plan->cuda->algo;
  if (plan->cpu) return plan->cpu->algo;
  return plan->p.algo;
}

topk_status topk_plan_run(const topk_plan* plan, const void* in, const int64_t* row_offsets, void* out_values,
                          void* out_indices, void* workspace, size_t workspace_bytes, topk_stream stream) {
  begin_call();
  TOPK_RETURN_IF(!plan, TOPK_ERR_NULL_POINTER, "plan is NULL");
  return plan_run(plan, in, row_offsets, out_values, out_indices, workspace, workspace_bytes, stream);
}

void topk_plan_destroy(topk_plan* plan) { free(plan); }
