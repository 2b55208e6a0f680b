/*
 * launch_floor.cu: the fixed cost of a launch on this GPU, and of the smallest kernels that
 * read an LLM-sampling row: the floor under which no top-k call of that shape can go.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o launch_floor bench/launch_floor.cu && ./launch_floor
 *
 * Per kernel shape, microseconds per call: `events`, 200 launches back to back between two
 * CUDA events (/ 200; bounded below by the host's launch rate), and `graph`, one launch
 * captured into a CUDA graph and replayed 200 times (/ 200; the GPU's cost alone). Shapes:
 * an empty kernel; an empty cluster kernel (1024 threads, 120 KB of shared memory, 1..16
 * blocks); a cluster that stages a row's slice into shared memory, reduces it to its maximum
 * and meets at one cluster barrier (the least a one-launch cluster select does); and a plain
 * launch of bpr blocks per row reducing their chunks, with and without a cooperative
 * grid.sync. Inputs are zeros of batch x n f32 (their values do not matter here). Standalone
 * (no libtopk); used for docs/BENCHMARKS.md, session 12.
 */
#include <cstdio>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define CK(x) do{cudaError_t e=(x); if(e!=cudaSuccess){printf("%s: %s\n",#x,cudaGetErrorString(e)); return 1;}}while(0)

__global__ void empty_k() {}
__global__ void empty_cluster_k() { cg::this_cluster().sync(); }
// stage a slice into smem, block max, cluster.sync, rank 0 reads maxima via DSMEM
__global__ void stage_cluster_k(const float* in, int n, float* out) {
  extern __shared__ float4 sm[];
  __shared__ float bmax[32];
  __shared__ float res;
  cg::cluster_group cl = cg::this_cluster();
  int cs = cl.num_blocks(), r = cl.block_rank();
  int slice = n / cs;
  const float4* src = (const float4*)(in + (size_t)blockIdx.y * n + (size_t)r * slice);
  int nv = slice / 4;
  float m = -1e30f;
  for (int v0 = 0; v0 < nv; v0 += 1024 * 8) {
    float4 w[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) { int v = v0 + j * 1024 + threadIdx.x; if (v < nv) w[j] = src[v]; }
#pragma unroll
    for (int j = 0; j < 8; ++j) { int v = v0 + j * 1024 + threadIdx.x; if (v < nv) { sm[v] = w[j]; m = fmaxf(m, fmaxf(fmaxf(w[j].x, w[j].y), fmaxf(w[j].z, w[j].w))); } }
  }
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(~0u, m, o));
  if ((threadIdx.x & 31) == 0) bmax[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x < 32) { m = bmax[threadIdx.x]; for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(~0u, m, o)); if (threadIdx.x == 0) res = m; }
  cl.sync();
  if (r == 0 && threadIdx.x < 32) {
    float v = threadIdx.x < cs ? *cl.map_shared_rank(&res, threadIdx.x) : -1e30f;
    for (int o = 16; o; o >>= 1) v = fmaxf(v, __shfl_xor_sync(~0u, v, o));
    if (threadIdx.x == 0) out[blockIdx.y] = v;
  }
  cl.sync();
}
// the warp's maximum of block blockIdx.x's chunk (bpr chunks per row)
__device__ float chunk_warp_max(const float* in, int n, int bpr) {
  int row = blockIdx.x / bpr, b = blockIdx.x % bpr;
  int chunk = n / bpr;
  const float4* src = (const float4*)(in + (size_t)row * n + (size_t)b * chunk);
  float m = -1e30f;
  for (int v = threadIdx.x; v < chunk / 4; v += blockDim.x) { float4 w = src[v]; m = fmaxf(m, fmaxf(fmaxf(w.x, w.y), fmaxf(w.z, w.w))); }
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(~0u, m, o));
  return m;
}
// plain multi-block: each block reduces its chunk, writes partial
__global__ void chunks_k(const float* in, int n, int bpr, float* part) {
  float m = chunk_warp_max(in, n, bpr);
  __shared__ float bm[32];
  if ((threadIdx.x & 31) == 0) bm[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x == 0) { for (int i = 1; i < blockDim.x / 32; ++i) m = fmaxf(m, bm[i]); part[blockIdx.x] = m; }
}
__global__ void coop_k(const float* in, int n, int bpr, float* part) {
  int row = blockIdx.x / bpr, b = blockIdx.x % bpr;
  float m = chunk_warp_max(in, n, bpr);
  if (threadIdx.x == 0) part[blockIdx.x] = m;
  cg::this_grid().sync();
  if (b == 0 && threadIdx.x == 0) { float v = part[blockIdx.x]; part[gridDim.x + row] = v; }
}

typedef void (*launch_fn)(cudaStream_t);
static float* g_in; static float* g_out; static int g_n, g_batch, g_cs, g_bpr; static size_t g_smem;
static void L_empty1(cudaStream_t s) { empty_k<<<1, 32, 0, s>>>(); }
static void L_empty8(cudaStream_t s) { empty_k<<<8, 1024, 0, s>>>(); }
static void L_emptycl(cudaStream_t s) {
  cudaLaunchConfig_t c = {}; cudaLaunchAttribute a; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = g_cs; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
  c.gridDim = dim3(g_cs, g_batch); c.blockDim = dim3(1024); c.dynamicSmemBytes = g_smem; c.stream = s; c.attrs = &a; c.numAttrs = 1;
  cudaLaunchKernelEx(&c, empty_cluster_k);
}
static void L_stage(cudaStream_t s) {
  cudaLaunchConfig_t c = {}; cudaLaunchAttribute a; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = g_cs; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
  c.gridDim = dim3(g_cs, g_batch); c.blockDim = dim3(1024); c.dynamicSmemBytes = g_smem; c.stream = s; c.attrs = &a; c.numAttrs = 1;
  cudaLaunchKernelEx(&c, stage_cluster_k, (const float*)g_in, g_n, g_out);
}
static void L_chunks(cudaStream_t s) { chunks_k<<<g_batch * g_bpr, 256, 0, s>>>(g_in, g_n, g_bpr, g_out); }
static void L_coop(cudaStream_t s) {
  void* args[] = {&g_in, &g_n, &g_bpr, &g_out};
  cudaLaunchCooperativeKernel((void*)coop_k, dim3(g_batch * g_bpr), dim3(256), args, 0, s);
}

static int measure(const char* name, launch_fn f) {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  for (int i = 0; i < 20; ++i) f(s);
  CK(cudaStreamSynchronize(s)); CK(cudaGetLastError());
  CK(cudaEventRecord(e0, s)); for (int i = 0; i < 200; ++i) f(s); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
  float ev; CK(cudaEventElapsedTime(&ev, e0, e1));
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)); f(s); CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < 20; ++i) CK(cudaGraphLaunch(ge, s));
  CK(cudaEventRecord(e0, s)); for (int i = 0; i < 200; ++i) CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
  float gr; CK(cudaEventElapsedTime(&gr, e0, e1));
  printf("| %-40s | batch %d n %7d cs %2d bpr %3d | events %6.2f us | graph %6.2f us |\n", name, g_batch, g_n, g_cs, g_bpr, ev * 5, gr * 5);
  cudaGraphExecDestroy(ge); cudaGraphDestroy(g); cudaStreamDestroy(s);
  return 0;
}

int main() {
  CK(cudaMalloc(&g_in, 8 * 262144 * 4)); CK(cudaMemset(g_in, 0, 8 * 262144 * 4)); CK(cudaMalloc(&g_out, 1 << 20));
  CK(cudaFuncSetAttribute(empty_cluster_k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CK(cudaFuncSetAttribute(stage_cluster_k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CK(cudaFuncSetAttribute(empty_cluster_k, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaFuncSetAttribute(stage_cluster_k, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  g_batch = 1; g_n = 0; g_cs = 1; g_bpr = 1;
  measure("empty <<<1,32>>>", L_empty1);
  measure("empty <<<8,1024>>>", L_empty8);
  int css[] = {1, 4, 8, 16};
  for (int b : {1, 8}) for (int cs : css) { g_batch = b; g_cs = cs; g_smem = 120 * 1024; measure("empty cluster 1024 thr, 120KB smem", L_emptycl); }
  for (int b : {1, 8}) for (int n : {32000, 262144}) for (int cs : css) {
    g_batch = b; g_n = n; g_cs = cs; g_smem = (size_t)n / cs * 4 + 16;
    if (g_smem > 200 * 1024) continue;
    measure("stage slice + block max + cluster.sync", L_stage);
  }
  for (int b : {1, 8}) for (int n : {32000, 262144}) for (int bpr : {4, 16, 64}) {
    if (b * bpr > 132) continue;
    g_batch = b; g_n = n; g_bpr = bpr; g_cs = 0;
    measure("chunks: plain launch, 256 thr", L_chunks);
    measure("chunks + grid.sync: cooperative", L_coop);
  }
  return 0;
}
