/*
 * runtime.cu: the CUDA runtime helpers of src/algo.h (the CPU-only build has
 * src/cuda_stub.c instead, with the same list).
 *
 * What the rest of the library needs from the CUDA runtime goes through here, so
 * that api.c stays plain C without CUDA headers:
 *   - device count: 0, silently, when there is no driver or no device (CI has no
 *     GPU and must see "no device", not an error); read once per process, since
 *     the set of visible devices is fixed when the runtime initialises;
 *   - topk_device_info: read once per device with cudaDeviceGetAttribute (cheap,
 *     unlike cudaGetDeviceProperties) and cached under a mutex, because plans are
 *     created from any thread;
 *   - pointer classification, stream-ordered allocation, current device;
 *   - the read-bandwidth probe that every benchmark figure is a fraction of;
 *   - the build description printed by `topk info`.
 * No function here synchronises the host except topk_cuda_read_bandwidth, which is
 * documented to block.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cuda/version> /* CCCL_MAJOR_VERSION etc. */

#include "../algo.h"
#include "common/cuda_check.h"

/* ------------------------------------------------------------------ devices */

extern "C" int topk_cuda_built(void) { return 1; }

static int device_count_ = 0;
static pthread_once_t device_count_once_ = PTHREAD_ONCE_INIT;

static void read_device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    /* No driver, a driver too old, or no device: all mean "no CUDA here". */
    (void)cudaGetLastError();
    count = 0;
  }
  device_count_ = count;
}

extern "C" int topk_cuda_device_count_(void) {
  pthread_once(&device_count_once_, read_device_count);
  return device_count_;
}

static topk_status check_ordinal(int ordinal) {
  int count = topk_cuda_device_count_();
  TOPK_RETURN_IF(ordinal < 0 || ordinal >= count, TOPK_ERR_NO_DEVICE, "no CUDA device %d (%d present)", ordinal,
                 count);
  return TOPK_SUCCESS;
}

/* Devices beyond this many are served uncached (correct, just slower). */
#define INFO_CACHE_SIZE 64

static pthread_mutex_t info_mutex_ = PTHREAD_MUTEX_INITIALIZER;
static topk_device_info info_cache_[INFO_CACHE_SIZE];
static int info_valid_[INFO_CACHE_SIZE];

static topk_status read_device_info(int ordinal, topk_device_info* info) {
  int v[6] = {0, 0, 0, 0, 0, 0};
  static const cudaDeviceAttr attrs[6] = {
      cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,         cudaDevAttrMultiProcessorCount,
      cudaDevAttrMaxThreadsPerMultiProcessor, cudaDevAttrL2CacheSize, cudaDevAttrMaxSharedMemoryPerBlockOptin};
  for (int i = 0; i < 6; ++i) TOPK_CUDA_TRY(cudaDeviceGetAttribute(&v[i], attrs[i], ordinal));
  memset(info, 0, sizeof *info);
  info->ordinal = ordinal;
  info->cc_major = v[0];
  info->cc_minor = v[1];
  info->sm_count = v[2];
  info->max_threads_per_sm = v[3];
  info->l2_bytes = v[4];
  info->smem_per_block_optin = v[5];
  return TOPK_SUCCESS;
}

extern "C" topk_status topk_cuda_device_info(int ordinal, topk_device_info* info) {
  TOPK_RETURN_IF(!info, TOPK_ERR_NULL_POINTER, "device info is NULL");
  TOPK_FORWARD_IF_ERROR(check_ordinal(ordinal));
  if (ordinal >= INFO_CACHE_SIZE) return read_device_info(ordinal, info);
  /* Held while reading, so that racing first calls read the attributes once. */
  pthread_mutex_lock(&info_mutex_);
  topk_status s = TOPK_SUCCESS;
  if (!info_valid_[ordinal]) {
    s = read_device_info(ordinal, &info_cache_[ordinal]);
    info_valid_[ordinal] = s == TOPK_SUCCESS;
  }
  if (s == TOPK_SUCCESS) *info = info_cache_[ordinal];
  pthread_mutex_unlock(&info_mutex_);
  return s;
}

extern "C" topk_status topk_cuda_get_device(int* ordinal) {
  TOPK_RETURN_IF(!ordinal, TOPK_ERR_NULL_POINTER, "ordinal is NULL");
  TOPK_RETURN_IF(topk_cuda_device_count_() == 0, TOPK_ERR_NO_DEVICE, "no CUDA device is available");
  TOPK_CUDA_TRY(cudaGetDevice(ordinal));
  return TOPK_SUCCESS;
}

extern "C" topk_status topk_cuda_set_device(int ordinal, int* previous) {
  TOPK_FORWARD_IF_ERROR(check_ordinal(ordinal));
  int current = 0;
  TOPK_CUDA_TRY(cudaGetDevice(&current));
  if (previous) *previous = current;
  /* cudaSetDevice is not free (it may initialise a context): skip it when nothing changes. */
  if (current != ordinal) TOPK_CUDA_TRY(cudaSetDevice(ordinal));
  return TOPK_SUCCESS;
}

/*
 * The last pointers this thread found to be device or managed memory, with their answer: a
 * caller passes the same buffers call after call, a select asks about 3-4 pointers, and
 * cudaPointerGetAttributes costs 0.17-0.28 us on the H100 host (session 36). Host pointers
 * are never remembered, so they are refused at every call. A remembered address stays what it
 * was while its allocation lives; passing it after freeing it is the caller's use-after-free,
 * which this check then no longer reports (a fresh query may call it unregistered memory).
 * TOPK_HOST_CACHE=0 asks the runtime every time (for measurement).
 */
enum { PTR_CACHE = 32 };
static thread_local const void* ptr_known_[PTR_CACHE];
static thread_local signed char ptr_kind_[PTR_CACHE];
static thread_local unsigned ptr_next_;

extern "C" int topk_cuda_is_device_pointer(const void* ptr) {
  if (!ptr || topk_cuda_device_count_() == 0) return 0;
  const int cache = topk_host_cache_on();
  if (cache)
    for (int i = 0; i < PTR_CACHE; ++i)
      if (ptr_known_[i] == ptr) return ptr_kind_[i];
  cudaPointerAttributes attr;
  memset(&attr, 0, sizeof attr);
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    (void)cudaGetLastError(); /* leave no stale error for the next launch check */
    return -1;
  }
  const int kind = attr.type == cudaMemoryTypeDevice    ? 1
                   : attr.type == cudaMemoryTypeManaged ? 2
                                                        : 0; /* unregistered or registered (pinned) host memory */
  if (kind > 0 && cache) {
    const unsigned slot = ptr_next_++ % PTR_CACHE;
    ptr_known_[slot] = ptr;
    ptr_kind_[slot] = (signed char)kind;
  }
  return kind;
}

extern "C" topk_status topk_cuda_alloc_async(void** ptr, size_t bytes, topk_stream stream) {
  TOPK_RETURN_IF(!ptr, TOPK_ERR_NULL_POINTER, "allocation result pointer is NULL");
  *ptr = NULL;
  if (bytes == 0) return TOPK_SUCCESS;
  TOPK_CUDA_TRY(cudaMallocAsync(ptr, bytes, (cudaStream_t)stream));
  return TOPK_SUCCESS;
}

extern "C" topk_status topk_cuda_free_async(void* ptr, topk_stream stream) {
  if (!ptr) return TOPK_SUCCESS;
  TOPK_CUDA_TRY(cudaFreeAsync(ptr, (cudaStream_t)stream));
  return TOPK_SUCCESS;
}

extern "C" topk_status topk_cuda_props(int ordinal, topk_device_props* props) {
  TOPK_RETURN_IF(!props, TOPK_ERR_NULL_POINTER, "props is NULL");
  TOPK_FORWARD_IF_ERROR(check_ordinal(ordinal));
  cudaDeviceProp prop;
  TOPK_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
  memset(props, 0, sizeof *props);
  props->ordinal = ordinal;
  snprintf(props->name, sizeof props->name, "%s", prop.name);
  props->cc_major = prop.major;
  props->cc_minor = prop.minor;
  props->sm_count = prop.multiProcessorCount;
  props->global_mem_bytes = (int64_t)prop.totalGlobalMem;
  props->l2_bytes = prop.l2CacheSize;
  props->smem_per_block_optin = (int64_t)prop.sharedMemPerBlockOptin;
  return TOPK_SUCCESS;
}

/* ------------------------------------------------------------------ bandwidth probe */

/*
 * Reads count 16-byte words, grid-stride, four independent loads in flight per
 * thread (enough bytes in flight to saturate HBM). The XOR of everything read goes
 * to *sink, so the compiler cannot drop a load; one atomic per warp keeps that
 * write negligible.
 */
static __global__ void bandwidth_probe_kernel(const uint4* __restrict__ data, int64_t count, unsigned* sink) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < count; i += 4 * stride) {
    uint4 a = data[i], b = data[i + stride], c = data[i + 2 * stride], d = data[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < count; i += stride) {
    uint4 a = data[i];
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  for (int offset = 16; offset > 0; offset /= 2) acc ^= __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  if ((threadIdx.x & 31) == 0) atomicXor(sink, acc);
}

enum { PROBE_WARMUP = 2, PROBE_RUNS = 10 };
static const size_t PROBE_MAX_BYTES = (size_t)1 << 30;

/* The median of n floats (sorts them in place; n is small). */
static float median(float* v, int n) {
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && v[j - 1] > v[j]; --j) {
      float t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* Times the probe on an allocated buffer; *seconds gets the median run time. */
static topk_status time_probe(const uint4* data, int64_t count, unsigned* sink, int blocks, float* seconds) {
  cudaEvent_t start[PROBE_RUNS], stop[PROBE_RUNS];
  int made = 0;
  topk_status s = TOPK_SUCCESS;
  for (; made < PROBE_RUNS && s == TOPK_SUCCESS; ++made) {
    s = TOPK_CUDA_STATUS(cudaEventCreate(&start[made]));
    if (s != TOPK_SUCCESS) break;
    s = TOPK_CUDA_STATUS(cudaEventCreate(&stop[made]));
    if (s != TOPK_SUCCESS) {
      cudaEventDestroy(start[made]);
      break;
    }
  }
  for (int run = 0; run < PROBE_WARMUP + PROBE_RUNS && s == TOPK_SUCCESS; ++run) {
    int timed = run - PROBE_WARMUP;
    if (timed >= 0) s = TOPK_CUDA_STATUS(cudaEventRecord(start[timed], 0));
    if (s != TOPK_SUCCESS) break;
    bandwidth_probe_kernel<<<blocks, 256>>>(data, count, sink);
    s = TOPK_CUDA_STATUS(cudaGetLastError());
    if (s == TOPK_SUCCESS && timed >= 0) s = TOPK_CUDA_STATUS(cudaEventRecord(stop[timed], 0));
  }
  if (s == TOPK_SUCCESS) s = TOPK_CUDA_STATUS(cudaDeviceSynchronize());
  float ms[PROBE_RUNS];
  for (int r = 0; r < PROBE_RUNS && s == TOPK_SUCCESS; ++r)
    s = TOPK_CUDA_STATUS(cudaEventElapsedTime(&ms[r], start[r], stop[r]));
  if (s == TOPK_SUCCESS) *seconds = median(ms, PROBE_RUNS) * 1e-3f;
  for (int r = 0; r < made; ++r) {
    cudaEventDestroy(start[r]);
    cudaEventDestroy(stop[r]);
  }
  return s;
}

extern "C" topk_status topk_cuda_read_bandwidth(double* bytes_per_second) {
  TOPK_RETURN_IF(!bytes_per_second, TOPK_ERR_NULL_POINTER, "bytes_per_second is NULL");
  int ordinal = 0;
  TOPK_FORWARD_IF_ERROR(topk_cuda_get_device(&ordinal));
  topk_device_info info;
  TOPK_FORWARD_IF_ERROR(topk_cuda_device_info(ordinal, &info));

  /* 1 GiB is 20x the H100's L2, so the probe measures DRAM; less if memory is short. */
  size_t free_bytes = 0, total_bytes = 0;
  TOPK_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  size_t bytes = free_bytes / 4 < PROBE_MAX_BYTES ? free_bytes / 4 : PROBE_MAX_BYTES;
  bytes -= bytes % 4096;
  TOPK_RETURN_IF(bytes == 0, TOPK_ERR_OUT_OF_MEMORY, "no free device memory for the bandwidth probe");

  void* data = NULL;
  unsigned* sink = NULL;
  topk_status s = TOPK_CUDA_STATUS(cudaMalloc(&data, bytes));
  if (s == TOPK_SUCCESS) s = TOPK_CUDA_STATUS(cudaMalloc((void**)&sink, sizeof *sink));
  /* Defined contents (a non-zero pattern) keep initcheck quiet and rule out any zero shortcut. */
  if (s == TOPK_SUCCESS) s = TOPK_CUDA_STATUS(cudaMemset(data, 0x5A, bytes));
  if (s == TOPK_SUCCESS) s = TOPK_CUDA_STATUS(cudaMemset(sink, 0, sizeof *sink));
  float seconds = 0.0f;
  if (s == TOPK_SUCCESS) {
    /* Every SM full: as many 256-thread blocks as fit by thread count. */
    int per_sm = info.max_threads_per_sm / 256 > 0 ? info.max_threads_per_sm / 256 : 1;
    int blocks = info.sm_count * per_sm > 0 ? info.sm_count * per_sm : 1;
    s = time_probe((const uint4*)data, (int64_t)(bytes / sizeof(uint4)), sink, blocks, &seconds);
  }
  if (data) cudaFree(data);
  if (sink) cudaFree(sink);
  if (s != TOPK_SUCCESS) return s;
  TOPK_RETURN_IF(!(seconds > 0.0f), TOPK_ERR_INTERNAL, "bandwidth probe measured no time");
  *bytes_per_second = (double)bytes / (double)seconds;
  return TOPK_SUCCESS;
}

/* ------------------------------------------------------------------ build info */

#define TOPK_STRINGIFY_(...) #__VA_ARGS__
#define TOPK_STRINGIFY(...) TOPK_STRINGIFY_(__VA_ARGS__)

/* nvcc defines __CUDA_ARCH_LIST__ (e.g. 800,900) from the -gencode options of this file. */
#if defined(__CUDA_ARCH_LIST__)
static const char arch_list_[] = TOPK_STRINGIFY(__CUDA_ARCH_LIST__);
#else
static const char arch_list_[] = "";
#endif

static char build_info_[256];
static pthread_once_t build_info_once_ = PTHREAD_ONCE_INIT;

static void format_build_info(void) {
  /* "800,900" -> "80,90", the spelling of CMAKE_CUDA_ARCHITECTURES and of sm_XX. */
  char archs[128] = "";
  size_t used = 0;
  for (const char* c = arch_list_;;) {
    while (*c && (*c < '0' || *c > '9')) ++c; /* separators */
    if (!*c) break;
    unsigned long arch = 0;
    while (*c >= '0' && *c <= '9') arch = arch * 10 + (unsigned long)(*c++ - '0');
    int w = snprintf(archs + used, sizeof archs - used, "%s%lu", used ? "," : "", arch / 10);
    if (w < 0 || (size_t)w >= sizeof archs - used) break;
    used += (size_t)w;
  }
  snprintf(build_info_, sizeof build_info_, "cuda=%d.%d archs=%s cccl=%d.%d.%d", CUDART_VERSION / 1000,
           (CUDART_VERSION % 1000) / 10, used ? archs : "unknown", (int)CCCL_MAJOR_VERSION, (int)CCCL_MINOR_VERSION,
           (int)CCCL_PATCH_VERSION);
}

extern "C" const char* topk_cuda_build_info(void) {
  pthread_once(&build_info_once_, format_build_info);
  return build_info_;
}
