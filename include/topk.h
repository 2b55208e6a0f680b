/*
 * topk.h: top-k selection (the k largest or smallest elements of each row, with
 * their indices) on NVIDIA GPUs and on the CPU.
 *
 * The one public header of libtopk. Plain C11, usable from C and C++; it needs no
 * CUDA header. Sections go from simple to advanced:
 *   1. version, status codes, enums
 *   2. the problem description (every field: zero means default)
 *   3. one-shot selection with the two-phase workspace query
 *   4. reusable plans (choose once, run many times)
 *   5. device information
 *
 * Semantics, honoured by every algorithm and backend:
 *   - Order is IEEE totalOrder-like: -inf < ... < -0.0 < +0.0 < ... < +inf < NaN.
 *     Every NaN (any sign, any payload) counts as the largest value: selected
 *     first with "largest", last with TOPK_SMALLEST.
 *   - Deterministic by default: among elements tied with the k-th value the ones
 *     with the lowest indices are returned, so the result set is the same on every
 *     run and every GPU. With TOPK_SORTED, equal values are ordered by index.
 *     TOPK_NONDETERMINISTIC lets an algorithm return any of the tied elements.
 *   - k == 0 or batch == 0: success, nothing is written. k > n: TOPK_ERR_K_RANGE
 *     (variable-length rows shorter than k are padded instead: see topk_problem).
 *   - Any rejected call writes nothing to the outputs.
 *   - CUDA backend: stream-ordered and asynchronous; no host synchronisation and
 *     no device-to-host copy inside a call.
 */
#ifndef TOPK_H
#define TOPK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(TOPK_SHARED_BUILD)
#  define TOPK_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#  define TOPK_API __attribute__((visibility("default")))
#else
#  define TOPK_API
#endif

/* ------------------------------------------------------------------------ */
/* 1. Version, status codes, enums                                          */
/* ------------------------------------------------------------------------ */

#define TOPK_VERSION_MAJOR 0
#define TOPK_VERSION_MINOR 1
#define TOPK_VERSION_PATCH 0
#define TOPK_VERSION_NUMBER \
  (TOPK_VERSION_MAJOR * 10000 + TOPK_VERSION_MINOR * 100 + TOPK_VERSION_PATCH)

/** @return TOPK_VERSION_NUMBER of the library actually linked. Never blocks. */
TOPK_API unsigned topk_version_number(void);
/** @return the version as "MAJOR.MINOR.PATCH". Never blocks. */
TOPK_API const char* topk_version_string(void);

/*
 * Every status, in one list: X(name, value, message). Values never change; new
 * statuses are appended. The `topk` CLI exits with these values.
 */
#define TOPK_STATUS_LIST(X)                                                            \
  X(SUCCESS,              0, "success")                                                \
  X(ERR_NULL_POINTER,     1, "a required pointer is NULL")                             \
  X(ERR_INVALID_ARGUMENT, 2, "an argument is out of its range (negative size, unknown flag or enum)") \
  X(ERR_K_RANGE,          3, "k is larger than the row length")                        \
  X(ERR_DTYPE,            4, "unknown or unsupported element type")                    \
  X(ERR_INDEX_TYPE,       5, "unknown index type")                                     \
  X(ERR_STRIDE,           6, "row stride is smaller than the row length")              \
  X(ERR_OVERLAP,          7, "an output overlaps the input, the other output or the workspace") \
  X(ERR_WORKSPACE,        8, "workspace is smaller than topk_workspace_size() asked for") \
  X(ERR_UNSUPPORTED,      9, "the algorithm is not built or does not support this problem") \
  X(ERR_NO_DEVICE,       10, "no usable CUDA device (or the library was built without CUDA)") \
  X(ERR_CUDA,            11, "a CUDA call failed; see topk_error_detail()")            \
  X(ERR_OUT_OF_MEMORY,   12, "memory allocation failed")                               \
  X(ERR_BACKEND,         13, "pointers do not match the backend (host vs device memory)") \
  X(ERR_INTERNAL,        14, "internal error; please report it with topk_error_detail()")

typedef enum topk_status {
#define TOPK_STATUS_ENUM_(name, value, text) TOPK_##name = value,
  TOPK_STATUS_LIST(TOPK_STATUS_ENUM_)
#undef TOPK_STATUS_ENUM_
} topk_status;

/** @return "TOPK_ERR_K_RANGE" etc.; "TOPK_UNKNOWN_STATUS" for other values. Never blocks. */
TOPK_API const char* topk_status_name(topk_status s);
/** @return a one-line description of the status. Never blocks. */
TOPK_API const char* topk_status_message(topk_status s);
/**
 * @return why the last failing call on this thread failed (names the argument and
 * its value), or "" if the last call succeeded. Thread-local; valid until this
 * thread's next call into the library. Never blocks.
 */
TOPK_API const char* topk_error_detail(void);

/** Element types. Zero (TOPK_F32) is the default. Values never change. */
typedef enum topk_dtype {
  TOPK_F32  = 0,
  TOPK_F16  = 1,  /* IEEE binary16 */
  TOPK_BF16 = 2,  /* bfloat16 */
  TOPK_F64  = 3,
  TOPK_I32  = 4,
  TOPK_U32  = 5,
  TOPK_I64  = 6,
  TOPK_U64  = 7
} topk_dtype;
#define TOPK_DTYPE_COUNT 8

/** @return element size in bytes, or 0 for an unknown dtype. Never blocks. */
TOPK_API size_t topk_dtype_size(topk_dtype dtype);
/** @return "f32", "f16", "bf16", "f64", "i32", "u32", "i64", "u64"; NULL if unknown. */
TOPK_API const char* topk_dtype_name(topk_dtype dtype);
/** Parses a dtype name as printed by topk_dtype_name(). @return 0 on success, -1 if unknown. */
TOPK_API int topk_dtype_parse(const char* name, topk_dtype* dtype);

/** Type of the output indices. Zero (int64, as torch.topk) is the default. */
typedef enum topk_index {
  TOPK_INDEX_I64  = 0,
  TOPK_INDEX_I32  = 1,  /* TOPK_ERR_INDEX_TYPE if a row can be 2^31 elements or longer */
  TOPK_INDEX_NONE = 2   /* write values only; out_indices is ignored and may be NULL */
} topk_index;

/** Flags; zero means largest, unsorted, deterministic ties. */
enum {
  TOPK_SMALLEST        = 1u << 0, /* the k smallest instead of the k largest */
  TOPK_SORTED          = 1u << 1, /* output best first; ties by index */
  TOPK_NONDETERMINISTIC = 1u << 2 /* any of the elements tied at the k-th value may be returned */
};
#define TOPK_FLAGS_ALL (TOPK_SMALLEST | TOPK_SORTED | TOPK_NONDETERMINISTIC)

/**
 * Algorithms. TOPK_ALGO_AUTO (zero) chooses. A family that is not built in this
 * library returns TOPK_ERR_UNSUPPORTED. Values never change.
 */
typedef enum topk_algo {
  TOPK_ALGO_AUTO            = 0,
  TOPK_ALGO_SORT            = 1,  /* sort and choose: CUB segmented radix sort (CUDA); the exact reference (CPU) */
  TOPK_ALGO_CPU_SELECT      = 2,  /* CPU fast path: threaded radix selection */
  TOPK_ALGO_AIR_RADIX       = 3,  /* AIR Top-K, iteration-fused radix (paper 003 sec. 3) */
  TOPK_ALGO_WARP_SELECT     = 4,  /* Faiss WarpSelect (paper 004 sec. 4) */
  TOPK_ALGO_BLOCK_SELECT    = 5,  /* Faiss BlockSelect */
  TOPK_ALGO_GRID_SELECT     = 6,  /* GridSelect (paper 003 sec. 4) */
  TOPK_ALGO_BITONIC         = 7,  /* bitonic top-k (paper 000 sec. 2) */
  TOPK_ALGO_BUCKET          = 8,  /* bucket select (paper 000 sec. 2) */
  TOPK_ALGO_DRTOPK_RADIX    = 9,  /* Dr. Top-k delegate layer over radix (paper 000 sec. 4-5) */
  TOPK_ALGO_DRTOPK_BUCKET   = 10, /* Dr. Top-k delegate layer over bucket select */
  TOPK_ALGO_DRTOPK_BITONIC  = 11, /* Dr. Top-k delegate layer over bitonic top-k */
  TOPK_ALGO_RTOPK           = 12  /* RTop-K row-wise binary search (paper 001) */
} topk_algo;
#define TOPK_ALGO_COUNT 13

/** @return "auto", "sort", "cpu_select", "air_radix", ...; NULL if unknown. Never blocks. */
TOPK_API const char* topk_algo_name(topk_algo algo);
/** Parses a name as printed by topk_algo_name(). @return 0 on success, -1 if unknown. */
TOPK_API int topk_algo_parse(const char* name, topk_algo* algo);

/** Where the data lives and the work runs. Zero (AUTO) asks the input pointer. */
typedef enum topk_backend {
  TOPK_BACKEND_AUTO = 0, /* device or managed memory: CUDA on the current device; host memory: CPU */
  TOPK_BACKEND_CPU  = 1, /* host memory, computed on the host's cores */
  TOPK_BACKEND_CUDA = 2  /* device memory, computed on the current CUDA device */
} topk_backend;

/** @return 1 if the library was built with CUDA and a device is usable, else 0. May initialise CUDA. */
TOPK_API int topk_cuda_available(void);

/* ------------------------------------------------------------------------ */
/* 2. The problem                                                           */
/* ------------------------------------------------------------------------ */

/*
 * A top-k problem. Every field treats zero as the default, so callers write
 *   topk_problem p = {.batch = 1, .n = n, .k = k};
 * and fields added later leave existing callers unchanged.
 *
 * Uniform rows: row r is in[r * ld .. r * ld + n).
 * Variable-length rows (row_offsets != NULL): row r is in[row_offsets[r] ..
 *   row_offsets[r + 1]); `n` is then the length of the whole input buffer (as CUB's
 *   num_items) and `ld` must be 0. Offsets live where the data lives (device memory
 *   for the CUDA backend) and are read by the device, so they cannot be checked
 *   before the call returns: they must be non-decreasing and within [0, n]. A row
 *   shorter than k returns its whole row, then pads its slots with index -1 and
 *   the worst value of the direction (largest: -inf, INT_MIN, 0; smallest: NaN,
 *   INT_MAX, UINT_MAX). The CPU backend checks host offsets first (a decreasing
 *   offset, or one outside [0, n]: TOPK_ERR_INVALID_ARGUMENT); CUDA algorithms clamp
 *   them on the device, so bad offsets give wrong rows but no out-of-bounds access.
 */
typedef struct topk_problem {
  topk_dtype     dtype;       /* 0 = TOPK_F32 */
  int64_t        batch;       /* rows; 0 = nothing to do */
  int64_t        n;           /* elements per row (or whole buffer with row_offsets) */
  int64_t        k;           /* results per row; 0 = nothing to do */
  int64_t        ld;          /* row stride in elements, >= n; 0 = n */
  const int64_t* row_offsets; /* optional: batch + 1 offsets for variable-length rows */
  topk_index     index_type;  /* 0 = TOPK_INDEX_I64 */
  unsigned       flags;       /* TOPK_SMALLEST | TOPK_SORTED | TOPK_NONDETERMINISTIC */
  topk_algo      algo;        /* 0 = TOPK_ALGO_AUTO */
  topk_backend   backend;     /* 0 = TOPK_BACKEND_AUTO */
  /*
   * 0 (default): exact. > 0: RTop-K's early stopping (paper 001, Algorithm 2): the
   * per-row binary search for the threshold stops after at most max_iter iterations
   * on value midpoints. APPROXIMATE: each row still gets k distinct elements of the
   * row (values bit-exact, valid indices), but not always the k best. Only
   * TOPK_ALGO_RTOPK honours it (AUTO picks it); another explicit algorithm returns
   * TOPK_ERR_UNSUPPORTED, a negative value TOPK_ERR_INVALID_ARGUMENT.
   */
  int32_t        max_iter;
} topk_problem;

/* So that topk_stream is cudaStream_t without including CUDA headers. NULL: the default stream. */
struct CUstream_st;
typedef struct CUstream_st* topk_stream;

/* ------------------------------------------------------------------------ */
/* 3. One-shot selection                                                    */
/* ------------------------------------------------------------------------ */

/**
 * Workspace the call needs, in bytes (CUB's two-phase convention). For the CPU
 * backend this is 0: it allocates host memory itself. With TOPK_BACKEND_AUTO the
 * size is the CUDA backend's when CUDA is available.
 * @return TOPK_SUCCESS, or the validation status topk_select() would return.
 * Never blocks (it may initialise CUDA and read device properties once).
 */
TOPK_API topk_status topk_workspace_size(const topk_problem* p, size_t* workspace_bytes);

/**
 * Selects the top k of each row.
 *   in          batch rows as described by p (device memory for CUDA, host for CPU)
 *   out_values  batch x k values of p->dtype, row-major
 *   out_indices batch x k indices of p->index_type (ignored for TOPK_INDEX_NONE)
 *   workspace   at least topk_workspace_size() bytes of device memory; NULL: the
 *               library allocates it stream-ordered (cudaMallocAsync) and frees it
 *               stream-ordered after use
 *   stream      CUDA stream; NULL is the legacy default stream. Ignored by the CPU backend.
 * Outputs must not overlap the input, each other or the workspace.
 * @return TOPK_SUCCESS or an error status; on error nothing was written and
 * topk_error_detail() says why. An error from a kernel that fails after the call
 * returned shows as a CUDA error on the stream, as with any CUDA library.
 * CUDA backend: asynchronous; never synchronises the host and copies nothing to it.
 * CPU backend: blocks until the result is written.
 */
TOPK_API topk_status topk_select(const topk_problem* p, const void* in, void* out_values,
                                 void* out_indices, void* workspace, size_t workspace_bytes,
                                 topk_stream stream);

/* ------------------------------------------------------------------------ */
/* 4. Plans                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct topk_plan_s topk_plan;

/**
 * Validates p, chooses the algorithm and reads the device's properties once, so
 * that topk_plan_run() does no choosing. A CUDA plan belongs to the device current
 * at creation; running it makes that device current for the call and restores the
 * caller's. row_offsets in p is not kept: pass it to topk_plan_run().
 * @return TOPK_SUCCESS and *plan, or a validation status with *plan = NULL.
 * Never blocks.
 */
TOPK_API topk_status topk_plan_create(topk_plan** plan, const topk_problem* p);
/** Workspace bytes the plan needs per run. @return TOPK_SUCCESS or TOPK_ERR_NULL_POINTER. */
TOPK_API topk_status topk_plan_workspace_size(const topk_plan* plan, size_t* workspace_bytes);
/** The algorithm the plan chose (for the backend it will run on). */
TOPK_API topk_algo topk_plan_algo(const topk_plan* plan);
/**
 * Why the plan runs topk_plan_algo(): for TOPK_ALGO_AUTO, the rule or the measured table
 * cell that chose it (with the interpolated cost against the fastest measured algorithm
 * and the runner-up); otherwise "requested". Valid while the plan lives; "" for NULL.
 */
TOPK_API const char* topk_plan_explain(const topk_plan* plan);
/**
 * Runs the plan; arguments as topk_select(). row_offsets: the plan's problem had
 * offsets? then the offsets for this run (non-NULL), else NULL.
 * @return as topk_select(). Same blocking behaviour as topk_select().
 */
TOPK_API topk_status topk_plan_run(const topk_plan* plan, const void* in, const int64_t* row_offsets,
                                   void* out_values, void* out_indices, void* workspace,
                                   size_t workspace_bytes, topk_stream stream);
/** Frees the plan. Accepts NULL. Never blocks. */
TOPK_API void topk_plan_destroy(topk_plan* plan);

/* ------------------------------------------------------------------------ */
/* 5. Device information                                                    */
/* ------------------------------------------------------------------------ */

typedef struct topk_device_props {
  int     ordinal;
  char    name[256];
  int     cc_major, cc_minor;
  int     sm_count;
  int64_t global_mem_bytes;
  int64_t l2_bytes;
  int64_t smem_per_block_optin;
} topk_device_props;

/** @return the number of CUDA devices (0 without CUDA or a driver). May initialise CUDA. */
TOPK_API int topk_device_count(void);
/** Fills props for a device. @return TOPK_SUCCESS, TOPK_ERR_NO_DEVICE or TOPK_ERR_NULL_POINTER. */
TOPK_API topk_status topk_device_get_props(int ordinal, topk_device_props* props);
/**
 * Measures the current device's read bandwidth (bytes/s) with a probe kernel
 * that reads a large buffer several times. Blocks (synchronises the device).
 * @return TOPK_SUCCESS, TOPK_ERR_NO_DEVICE, TOPK_ERR_CUDA or TOPK_ERR_OUT_OF_MEMORY.
 */
TOPK_API topk_status topk_measure_read_bandwidth(double* bytes_per_second);

/** @return a space-separated list of build options ("cuda=13.0 archs=90 ..."). Never blocks. */
TOPK_API const char* topk_build_info(void);

/* ------------------------------------------------------------------------ */
/* 6. Helpers for tools and language bindings                               */
/* ------------------------------------------------------------------------ */
/*
 * Thin wrappers over the CUDA runtime for callers that include no CUDA header
 * (the `topk` CLI, ctypes bindings). Each acts on the current device and returns
 * TOPK_ERR_NO_DEVICE when CUDA is absent, TOPK_ERR_CUDA (detail set) on failure.
 */

/** cudaMalloc. Blocks as cudaMalloc does. */
TOPK_API topk_status topk_device_malloc(void** ptr, size_t bytes);
/** cudaFree; accepts NULL. Blocks as cudaFree does. */
TOPK_API topk_status topk_device_free(void* ptr);
/** Copies host to device. Blocks until done. */
TOPK_API topk_status topk_memcpy_to_device(void* dst, const void* src, size_t bytes);
/** Copies device to host. Blocks until done. */
TOPK_API topk_status topk_memcpy_to_host(void* dst, const void* src, size_t bytes);
/** Fills device memory with a byte, stream-ordered on the stream. Does not block. */
TOPK_API topk_status topk_memset_device(void* dst, int byte, size_t bytes, topk_stream stream);
/** Waits for all work on the current device. Blocks. */
TOPK_API topk_status topk_device_synchronize(void);

/** CUDA events for timing stream work (cudaEvent_t underneath). */
typedef struct topk_event_s topk_event;
/** Creates an event with timing enabled. Never blocks. */
TOPK_API topk_status topk_event_create(topk_event** event);
/** Records the event on the stream. Never blocks. */
TOPK_API topk_status topk_event_record(topk_event* event, topk_stream stream);
/** Milliseconds between two recorded events; blocks until `end` has completed. */
TOPK_API topk_status topk_event_elapsed_ms(topk_event* start, topk_event* end, float* ms);
/** Destroys the event; accepts NULL. */
TOPK_API void topk_event_destroy(topk_event* event);
/** Creates a non-blocking stream (cudaStreamNonBlocking). */
TOPK_API topk_status topk_stream_create(topk_stream* stream);
/** Destroys a stream; accepts NULL. */
TOPK_API void topk_stream_destroy(topk_stream stream);
/** Waits for the stream's work. Blocks. */
TOPK_API topk_status topk_stream_synchronize(topk_stream stream);

#ifdef __cplusplus
}
#endif
#endif /* TOPK_H */
