/*
 * handoff_floor.cu: the floor of a one-launch select's hand-off, by two designs, at the LLM
 * sampling shapes (issue 8 item 4), with no selecting: what a design costs before its work.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o handoff_floor bench/handoff_floor.cu && ./handoff_floor [gpc]
 *
 *  gpc:     the cluster design alone at every cluster size from 8 to 16, after how many clusters of
 *           each size fit at once (a cluster sits in one GPC; docs/perf-notes.md v0.44).
 *
 *  cluster: AIR CLUSTER's shape. A cluster of cs blocks of 1024 threads a row stages its slices
 *           into shared memory (8 x 16-byte loads a thread in flight; each block asks for at least
 *           116 KB, so one block an SM, as AIR's kernel does: since session 44), reduces each to its
 *           maximum, pushes `cand` 8-byte values a block into rank 0's shared memory (DSMEM
 *           stores), meets at a cluster barrier; rank 0 reduces what it got and writes one value.
 *  last:    G plain blocks of T threads a row, spread over every GPC. Each loads its chunk into
 *           registers, reduces it, writes `cand` 8-byte values to global memory, fences and
 *           counts itself in on the row's counter; the block that counts last reads every
 *           block's values (L2) and writes one value, and zeroes the counter for the next call.
 *
 * Per shape, microseconds a call: one launch captured into a CUDA graph, replayed 200 times
 * (/ 200), inputs in L2 (2-8 MB, as logits just written are). Inputs are zeros (values do not
 * matter here). Standalone (no libtopk); docs/perf-notes.md v0.43.
 */
#include <cooperative_groups.h>
#include <string.h>
#include "bench_check.h"
namespace cg = cooperative_groups;

__device__ __forceinline__ float max4(float4 w) { return fmaxf(fmaxf(w.x, w.y), fmaxf(w.z, w.w)); }

__device__ float block_max(float m, float* red) {
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(~0u, m, o));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m;
  __syncthreads();
  m = (threadIdx.x & 31) < blockDim.x / 32 ? red[threadIdx.x & 31] : -1e30f;
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(~0u, m, o));
  return m;
}

__global__ void __launch_bounds__(1024, 1) cluster_k(const float* in, int n, int cand, float* out) {
  extern __shared__ float4 sm[];
  __shared__ float red[32];
  __shared__ unsigned long long inbox[4096];
  cg::cluster_group cl = cg::this_cluster();
  const int cs = cl.num_blocks(), r = cl.block_rank();
  const int slice = ((n + cs - 1) / cs + 3) & ~3, lo = r * slice, len = max(0, min(slice, n - lo));
  const float4* src = (const float4*)(in + (size_t)blockIdx.y * n + lo);
  const int nv = len / 4;
  float m = -1e30f;
  for (int v0 = 0; v0 < nv; v0 += 1024 * 8) {
    float4 w[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int v = v0 + j * 1024 + threadIdx.x;
      if (v < nv) w[j] = src[v];
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int v = v0 + j * 1024 + threadIdx.x;
      if (v < nv) {
        sm[v] = w[j];
        m = fmaxf(m, max4(w[j]));
      }
    }
  }
  m = block_max(m, red);
  unsigned long long* box = cl.map_shared_rank(inbox, 0);
  if ((int)threadIdx.x < cand) box[r * cand + threadIdx.x] = (unsigned long long)__float_as_uint(m) << 32 | threadIdx.x;
  cl.sync();
  if (r == 0) {
    float v = -1e30f;
    for (int i = threadIdx.x; i < cs * cand; i += 1024) v = fmaxf(v, __uint_as_float((unsigned)(inbox[i] >> 32)));
    v = block_max(v, red);
    if (threadIdx.x == 0) out[blockIdx.y] = v;
  }
}

template <int T>
__global__ void __launch_bounds__(T) last_k(const float* in, int n, int G, int cand, unsigned long long* box,
                                            unsigned* counter, float* out) {
  __shared__ float red[32];
  __shared__ bool last;
  const int row = blockIdx.y, b = blockIdx.x;
  const int chunk = ((n + G - 1) / G + 3) & ~3, lo = b * chunk, len = max(0, min(chunk, n - lo));
  const float4* src = (const float4*)(in + (size_t)row * n + lo);
  const int nv = len / 4;
  float m = -1e30f;
  for (int v0 = 0; v0 < nv; v0 += T * 4) {
    float4 w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int v = v0 + j * T + threadIdx.x;
      if (v < nv) w[j] = src[v];
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (v0 + j * T + (int)threadIdx.x < nv) m = fmaxf(m, max4(w[j]));
  }
  m = block_max(m, red);
  unsigned long long* mine = box + ((size_t)row * G + b) * cand;
  if ((int)threadIdx.x < cand) {
    mine[threadIdx.x] = (unsigned long long)__float_as_uint(m) << 32 | threadIdx.x;
    __threadfence();
  }
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&counter[row], 1u) == (unsigned)G - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  float v = -1e30f;
  const unsigned long long* all = box + (size_t)row * G * cand;
  for (int i = threadIdx.x; i < G * cand; i += T) v = fmaxf(v, __uint_as_float((unsigned)(__ldcg(all + i) >> 32)));
  v = block_max(v, red);
  if (threadIdx.x == 0) {
    out[row] = v;
    counter[row] = 0;
  }
}

static float* g_in;
static float* g_out;
static unsigned long long* g_box;
static unsigned* g_counter;
static int g_n, g_batch, g_cs, g_G, g_T, g_cand;

/* cluster_k's launch: clusters of cs blocks of 1024 threads, one a row, each block asking for more
 * than half an SM's shared memory (one block an SM), as AIR's kernel does where every row's cluster
 * is resident */
static void cluster_config(cudaLaunchConfig_t* c, cudaLaunchAttribute* a, int cs, int rows, size_t slice_bytes,
                           cudaStream_t s) {
  *c = cudaLaunchConfig_t{};
  a->id = cudaLaunchAttributeClusterDimension;
  a->val.clusterDim.x = cs;
  a->val.clusterDim.y = 1;
  a->val.clusterDim.z = 1;
  c->gridDim = dim3(cs, rows);
  c->blockDim = dim3(1024);
  c->dynamicSmemBytes = slice_bytes > 116 * 1024 ? slice_bytes : 116 * 1024;
  c->stream = s;
  c->attrs = a;
  c->numAttrs = 1;
}
static void L_cluster(cudaStream_t s) {
  cudaLaunchConfig_t c;
  cudaLaunchAttribute a;
  cluster_config(&c, &a, g_cs, g_batch, ((size_t)(g_n + g_cs - 1) / g_cs + 4) * 4, s);
  cudaLaunchKernelEx(&c, cluster_k, (const float*)g_in, g_n, g_cand, g_out);
}
static void L_last(cudaStream_t s) {
  const dim3 grid(g_G, g_batch);
  if (g_T == 1024) last_k<1024><<<grid, 1024, 0, s>>>(g_in, g_n, g_G, g_cand, g_box, g_counter, g_out);
  else if (g_T == 512) last_k<512><<<grid, 512, 0, s>>>(g_in, g_n, g_G, g_cand, g_box, g_counter, g_out);
  else last_k<256><<<grid, 256, 0, s>>>(g_in, g_n, g_G, g_cand, g_box, g_counter, g_out);
}

static int measure(const char* name, void (*f)(cudaStream_t)) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 20; ++i) f(s);
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  f(s);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < 20; ++i) CK(cudaGraphLaunch(ge, s));
  float best = 1e30f;
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaEventRecord(e0, s));
    for (int i = 0; i < 200; ++i) CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float gr;
    CK(cudaEventElapsedTime(&gr, e0, e1));
    best = gr < best ? gr : best;
  }
  CK(cudaGetLastError());
  printf("| %-8s | batch %d | n %6d | cs %2d | G %3d | T %4d | cand %3d | graph %6.2f us |\n", name, g_batch, g_n, g_cs,
         g_G, g_T, g_cand, best * 5);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  return 0;
}

/* how many clusters of cs blocks (one an SM) can be resident at once */
static int max_clusters(int cs) {
  cudaLaunchConfig_t c;
  cudaLaunchAttribute a;
  cluster_config(&c, &a, cs, 1, 0, 0);
  int n = 0;
  CK(cudaOccupancyMaxActiveClusters(&n, cluster_k, &c));
  return n;
}

int main(int argc, char** argv) {
  /* `handoff_floor gpc`: the cluster design only, at every cluster size 8..16 (a cluster sits in one
   * GPC; how many fit at once, and what sizes that are not powers of two cost) */
  const bool gpc = argc > 1 && strcmp(argv[1], "gpc") == 0;
  CK(cudaMalloc(&g_in, 8 * 262144 * 4));
  CK(cudaMemset(g_in, 0, 8 * 262144 * 4));
  CK(cudaMalloc(&g_out, 1 << 20));
  CK(cudaMalloc(&g_box, 8u << 20));
  CK(cudaMalloc(&g_counter, 4096));
  CK(cudaMemset(g_counter, 0, 4096));
  CK(cudaFuncSetAttribute(cluster_k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CK(cudaFuncSetAttribute(cluster_k, cudaFuncAttributeMaxDynamicSharedMemorySize, 180 * 1024));
  if (gpc) {
    for (int cs = 8; cs <= 16; ++cs) printf("clusters of %2d: %d resident at once\n", cs, max_clusters(cs));
    g_cand = 128;
    g_G = 0;
    g_T = 1024;
    for (int b : {1, 4, 8})
      for (int n : {128256, 151936, 262144})
        for (int cs = 8; cs <= 16; ++cs) {
          if (b * cs > 132 || max_clusters(cs) < b) continue;
          g_batch = b;
          g_n = n;
          g_cs = cs;
          measure("cluster", L_cluster);
        }
    return 0;
  }
  for (int b : {1, 8})
    for (int n : {32000, 128256, 262144})
      for (int cand : {0, 128}) {
        g_batch = b;
        g_n = n;
        g_cand = cand;
        g_G = 0;
        g_T = 1024;
        for (int cs : {8, 16}) {
          g_cs = cs;
          if ((size_t)n / cs * 4 > 180 * 1024) continue;
          measure("cluster", L_cluster);
        }
        g_cs = 0;
        for (int T : {1024, 512, 256})
          for (int G : {8, 16, 32, 64}) {
            if (b * G * T > 132 * 2048 || (size_t)G * cand > 8192) continue;
            g_T = T;
            g_G = G;
            measure("last", L_last);
          }
      }
  return 0;
}
