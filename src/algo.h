/*
 * algo.h: the interface every algorithm family implements, and the internal
 * helpers the backends share. api.c validates a call, choose.c picks an entry of
 * the ops table (algos.c), and the plan calls it.
 */
#ifndef TOPK_ALGO_H
#define TOPK_ALGO_H

#include <stddef.h>
#include "topk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an algorithm may want to know about the device; read once per device and cached. */
typedef struct topk_device_info {
  int     ordinal;
  int     cc_major, cc_minor;
  int     sm_count;
  int     max_threads_per_sm;
  int64_t l2_bytes;
  int64_t smem_per_block_optin;
} topk_device_info;

/* Internal problem flag (never set through the public API, which rejects flags outside
 * TOPK_FLAGS_ALL): rows given by offsets are expected far shorter than the buffer, so an
 * algorithm may size its work by the row lengths it finds on the device rather than by n.
 * Dr. Top-k sets it on its second step (AIR's ADAPTIVE path, air_radix.cu). */
#define TOPK_INTERNAL_SHORT_ROWS (1u << 16)

/* A validated call: p has ld resolved (== n when the caller passed 0, 0 with offsets). */
typedef struct topk_args {
  topk_problem            p;        /* p.row_offsets is this run's offsets (or NULL) */
  const void*             in;
  void*                   values;   /* batch x k of p.dtype */
  void*                   indices;  /* batch x k of p.index_type; NULL for TOPK_INDEX_NONE */
  const topk_device_info* dev;      /* NULL for the CPU backend */
} topk_args;

typedef struct topk_algo_ops {
  const char*  name;     /* as topk_algo_name(algo) */
  topk_algo    algo;
  topk_backend backend;  /* TOPK_BACKEND_CPU or TOPK_BACKEND_CUDA */
  /* 1 if the algorithm handles p on dev; else 0 with a reason in why. */
  int (*supports)(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len);
  /* Workspace bytes for p (device memory for CUDA; CPU algorithms report 0). */
  topk_status (*workspace_size)(const topk_problem* p, const topk_device_info* dev, size_t* bytes);
  /* Runs a validated, non-empty problem (batch > 0, k > 0). Must not synchronise the host (CUDA). */
  topk_status (*run)(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream);
} topk_algo_ops;

/* The ops entry for (backend, algo), or NULL if that family is not built for that backend. */
const topk_algo_ops* topk_algo_find(topk_backend backend, topk_algo algo);
/* Every built entry, for tests, the CLI and the benchmark. */
const topk_algo_ops* const* topk_algo_all(int* count);

/* choose.c: the algorithm for AUTO on a backend. Never returns NULL for a valid problem. */
/* AUTO's algorithm for p on backend (src/choose.c); why (may be NULL) gets the reason. */
const topk_algo_ops* topk_choose(const topk_problem* p, topk_backend backend, const topk_device_info* dev, char* why,
                                 size_t why_len);

/* Records why the current call fails (thread-local, printf-style). @return status. */
topk_status topk_fail(topk_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define TOPK_RETURN_IF(cond, status, ...) \
  do { if (cond) return topk_fail((status), __VA_ARGS__); } while (0)
#define TOPK_FORWARD_IF_ERROR(expr) \
  do { topk_status s_ = (expr); if (s_ != TOPK_SUCCESS) return s_; } while (0)

/* Length of row r of a validated problem whose offsets are host-readable (CPU backend). */
static inline int64_t topk_row_length(const topk_problem* p, int64_t r) {
  if (!p->row_offsets) return p->n;
  int64_t len = p->row_offsets[r + 1] - p->row_offsets[r];
  return len < 0 ? 0 : len;
}
/* Offset of row r's first element, in elements. */
static inline int64_t topk_row_start(const topk_problem* p, int64_t r) {
  return p->row_offsets ? p->row_offsets[r] : r * p->ld;
}

/*
 * Every element is a result, in any order: k >= n, unsorted, uniform rows. AIR Top-K's COPY
 * path serves it in one launch (air_radix.cu), and AUTO takes AIR there (choose.c).
 */
static inline int topk_rows_are_the_result(const topk_problem* p) {
  return !p->row_offsets && p->k >= p->n && !(p->flags & TOPK_SORTED);
}

/* ---- CUDA runtime helpers (src/cuda/runtime.cu; stubs in src/cuda_stub.c) ---- */
int         topk_cuda_built(void);
int         topk_cuda_device_count_(void);
/* Cached per device; the first call per device reads its properties. */
topk_status topk_cuda_device_info(int ordinal, topk_device_info* info);
topk_status topk_cuda_get_device(int* ordinal);
/* Makes ordinal current; *previous gets the caller's device. */
topk_status topk_cuda_set_device(int ordinal, int* previous);
/* 0: host memory (registered or not); 1: device memory; 2: managed memory; negative: error. */
int         topk_cuda_is_device_pointer(const void* ptr);
topk_status topk_cuda_alloc_async(void** ptr, size_t bytes, topk_stream stream);
topk_status topk_cuda_free_async(void* ptr, topk_stream stream);
topk_status topk_cuda_props(int ordinal, topk_device_props* props);
topk_status topk_cuda_read_bandwidth(double* bytes_per_second);
const char* topk_cuda_build_info(void);

/* ---- knobs (src/env.c) ---- */
/* Every public entry first scans the environment once for TOPK_* variables. */
void        topk_env_scan(void);
/* getenv(name) for a TOPK_* knob: NULL at once where the last scan of this thread found none. */
const char* topk_env(const char* name);
/* The host-side caches of runtime answers (the device pointers a thread has seen, kernels'
 * shared-memory limits): on, but off where TOPK_HOST_CACHE=0 (for measurement). */
int         topk_host_cache_on(void);

/* ---- the built algorithms ---- */
extern const topk_algo_ops topk_algo_cpu_reference; /* src/cpu/reference.c (TOPK_ALGO_SORT on CPU) */
extern const topk_algo_ops topk_algo_cpu_select;    /* src/cpu/select.c */
extern const topk_algo_ops topk_algo_cuda_sort;     /* src/cuda/sort_baseline/sort.cu */
extern const topk_algo_ops topk_algo_air_radix;     /* src/cuda/air_radix/air_radix.cu */
extern const topk_algo_ops topk_algo_warp_select, topk_algo_block_select, topk_algo_grid_select; /* src/cuda/queue_select/ */
extern const topk_algo_ops topk_algo_rtopk;         /* src/cuda/rtopk/rtopk.cu */
extern const topk_algo_ops topk_algo_bitonic, topk_algo_bucket; /* src/cuda/bitonic/, src/cuda/bucket/ */
extern const topk_algo_ops topk_algo_drtopk_radix, topk_algo_drtopk_bucket, topk_algo_drtopk_bitonic; /* src/cuda/drtopk/ */

#ifdef __cplusplus
}
#endif
#endif /* TOPK_ALGO_H */
