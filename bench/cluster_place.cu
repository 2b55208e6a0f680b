/*
 * cluster_place.cu: where the hardware puts AIR CLUSTER's clusters, and what sharing a GPC costs
 * their staging (issue 8 item 4: the LLM shapes' staging ran at about half the rate of the same
 * bytes read by unclustered blocks, docs/perf-notes.md v0.45).
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o cluster_place bench/cluster_place.cu && ./cluster_place
 *
 * A cluster sits in one GPC, and the GPU has no register naming the GPC, so the GPCs are found
 * first: clusters of 16, 12, 10, 9 and 8 blocks (one an SM) are launched many times, each block
 * records its SM (%smid), and SMs that ever shared a cluster are joined (union-find); each
 * component is one GPC (or the part of it clusters reached).
 *
 * Then AIR CLUSTER's LLM geometries (rows x cs blocks of 1024 threads, one block an SM, each
 * staging its slice of an f32 row of 262144 keys from L2 with 8 x 16-byte loads a thread in
 * flight, as the kernel does) under each cluster scheduling policy: per launch, how many clusters
 * share a GPC, and each block's staging time (%globaltimer from its start to its slice staged).
 * Printed: launches with a shared GPC, and the staging medians of blocks alone in their GPC and
 * of blocks whose GPC holds another cluster. Then (3) the wide start's init, in parts, before or
 * after the first round's loads; (4) zeros against N(0,1)-like values, and 130..225 KB of shared
 * memory a block (the L1 left beside it); (5) whether a kernel's code is cold at each launch.
 * Standalone (no libtopk). H100 results: bench/results/h100_cluster_place_s45c*.txt.
 */
#include <cooperative_groups.h>
#include <stdio.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "bench_check.h"

enum { NT = 1024, MAXB = 256, NSM = 256 };

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %smid;" : "=r"(s));
  return s;
}

/* AIR CLUSTER's wide-start init (air_cluster_wide_init), in parts (INIT bits): the mbarriers and
 * the header's expected bytes (thread 0), their cluster fence (thread 0), a 256-bin histogram zeroed,
 * the relaxed cluster arrive (every thread); INIT_AFTER_LOADS: after the first round's loads are
 * issued instead of before them. */
enum { INIT_MBAR = 1, INIT_FENCE = 2, INIT_HIST = 4, INIT_ARRIVE = 8, INIT_AFTER_LOADS = 16 };
enum { INIT_ALL = INIT_MBAR | INIT_FENCE | INIT_HIST | INIT_ARRIVE };
template <int INIT>
__device__ __forceinline__ void wide_init(unsigned long long* bar, unsigned* hist) {
  if (threadIdx.x == 0) {
    if (INIT & INIT_MBAR) {
      for (int b = 0; b < 3; ++b)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(&bar[b]))
                     : "memory");
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                       (unsigned)__cvta_generic_to_shared(bar)),
                   "r"(192u)
                   : "memory");
    }
    if (INIT & INIT_FENCE) asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (INIT & INIT_HIST)
    for (int i = threadIdx.x; i < 256; i += NT) hist[i] = 0;
  if (INIT & INIT_ARRIVE) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

/* one block an SM (the launch asks for more than half the SM's shared memory); slice: floats a
 * block. INIT: which parts of the kernel's init run, and where. */
template <int INIT>
__global__ void __launch_bounds__(NT, 1) place_k(const float* in, int n, int slice, unsigned* sm_out,
                                                 unsigned long long* t_out, float* sink) {
  extern __shared__ float4 s_key[];
  __shared__ unsigned long long bar[3];
  __shared__ unsigned hist[256];
  const unsigned long long t0 = now_ns();
  const int rank = (int)cooperative_groups::this_cluster().block_rank();
  const int lo = rank * slice, len = max(0, min(slice, n - lo));
  const float4* src = (const float4*)(in + (size_t)blockIdx.y * n + lo);
  const int nv = len / 4;
  float m = -1e30f;
  if (!(INIT & INIT_AFTER_LOADS)) wide_init<INIT>(bar, hist);
  for (int v0 = 0; v0 < nv; v0 += NT * 8) {
    float4 w[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int v = v0 + j * NT + (int)threadIdx.x;
      if (v < nv) w[j] = src[v];
    }
    if ((INIT & INIT_AFTER_LOADS) && v0 == 0) wide_init<INIT>(bar, hist);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int v = v0 + j * NT + (int)threadIdx.x;
      if (v < nv) {
        s_key[v] = w[j];
        m = fmaxf(m, fmaxf(fmaxf(w[j].x, w[j].y), fmaxf(w[j].z, w[j].w)));
      }
    }
  }
  if ((INIT & INIT_AFTER_LOADS) && nv == 0) wide_init<INIT>(bar, hist);
  __syncthreads();
  const unsigned long long t1 = now_ns();
  if (INIT & INIT_ARRIVE) /* the arrive's wait, as the kernel's first push does (no block may exit before) */
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
  const int b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    sm_out[b] = smid();
    t_out[b] = t1 - t0;
  }
  if (m == 12345.f) sink[0] = m; /* keeps the loads */
}

/* 5: ICODE distinct instructions (16 bytes each in SASS: x = x * x + c, eight independent chains,
 * which ptxas cannot fold) run twice in one launch by a loop the compiler keeps (its body one copy
 * of the code): the first run fetches the code, the second finds it cached. Per block: both runs'
 * times. */
enum { ICODE = 2048, ICHAINS = 8 };
__global__ void __launch_bounds__(32, 1) icache_k(unsigned long long* t_out, float* sink) {
  unsigned x[ICHAINS];
#pragma unroll
  for (int j = 0; j < ICHAINS; ++j) x[j] = threadIdx.x + j;
  unsigned long long t[2];
#pragma unroll 1
  for (int rep = 0; rep < 2; ++rep) {
    const unsigned long long t0 = now_ns();
#pragma unroll
    for (int i = 0; i < ICODE / ICHAINS; ++i)
#pragma unroll
      for (int j = 0; j < ICHAINS; ++j) x[j] = x[j] * x[j] + 0x9E3779B1u * (unsigned)(ICHAINS * i + j + 1);
    unsigned acc = 0;
#pragma unroll
    for (int j = 0; j < ICHAINS; ++j) acc ^= x[j];
    asm volatile("" ::"r"(acc));
    t[rep] = now_ns() - t0;
  }
  if (threadIdx.x == 0) {
    t_out[2 * blockIdx.x] = t[0];
    t_out[2 * blockIdx.x + 1] = t[1];
  }
  unsigned acc = 0;
#pragma unroll
  for (int j = 0; j < ICHAINS; ++j) acc ^= x[j];
  if (acc == 12345u) sink[0] = 1.f;
}

static size_t g_smem = 130 * 1024; /* dynamic shared memory a block asks for, at least */

/* N(0,1)-like floats (a sum of uniforms from a hash): the values AIR's LLM rows hold */
__global__ void fill_k(float* x, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u + 12345u, acc = 0;
    for (int r = 0; r < 4; ++r) {
      h ^= h >> 15;
      h *= 0x2c1b3c6dU;
      h ^= h >> 12;
      acc += h >> 20;
    }
    x[i] = (acc / 4096.0f - 2.0f) * 1.7f;
  }
}

static const float* g_in;
static unsigned* g_sm;
static unsigned long long* g_t;
static float* g_sink;

/* place_k's launch: clusters of cs blocks, `rows` of them, smem bytes of dynamic shared memory a
 * block; the scheduling policy where `policy` >= 0 (a second attribute), else the cluster size only */
static void place_config(cudaLaunchConfig_t* c, cudaLaunchAttribute (&a)[2], int cs, int rows, size_t smem, int policy,
                         cudaStream_t s) {
  *c = cudaLaunchConfig_t{};
  a[0].id = cudaLaunchAttributeClusterDimension;
  a[0].val.clusterDim.x = cs;
  a[0].val.clusterDim.y = 1;
  a[0].val.clusterDim.z = 1;
  a[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
  a[1].val.clusterSchedulingPolicyPreference = (cudaClusterSchedulingPolicy)(policy >= 0 ? policy : 0);
  c->gridDim = dim3(cs, rows);
  c->blockDim = dim3(NT);
  c->dynamicSmemBytes = smem;
  c->stream = s;
  c->attrs = a;
  c->numAttrs = policy >= 0 ? 2 : 1;
}

static void launch(int cs, int rows, int n, int slice, int policy, int init, cudaStream_t s) {
  cudaLaunchConfig_t c;
  cudaLaunchAttribute a[2];
  place_config(&c, a, cs, rows, std::max((size_t)slice * 4, g_smem), policy, s);
  switch (init) {
#define PLACE_CASE(I) \
  case I: CK(cudaLaunchKernelEx(&c, place_k<I>, g_in, n, slice, g_sm, g_t, g_sink)); break;
    PLACE_CASE(0)
    PLACE_CASE(INIT_MBAR)
    PLACE_CASE(INIT_MBAR | INIT_FENCE)
    PLACE_CASE(INIT_MBAR | INIT_FENCE | INIT_HIST)
    PLACE_CASE(INIT_ARRIVE)
    PLACE_CASE(INIT_HIST | INIT_ARRIVE)
    PLACE_CASE(INIT_ALL)
    PLACE_CASE(INIT_ALL | INIT_AFTER_LOADS)
#undef PLACE_CASE
    default: fprintf(stderr, "no such init %d\n", init); exit(1);
  }
}

static int parent[NSM];
static int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }

/* Staging times of `rows` x `cs` blocks (slices of `slice` floats of rows of n) under `init`, 60
 * launches after 5 warm-ups: the median over every block, and the median over launches of the
 * slowest block, in us. */
static void staging_times(int cs, int rows, int n, int slice, int init, cudaStream_t s, double* median,
                          double* slowest_median) {
  const int nb = rows * cs;
  unsigned long long ht[MAXB];
  std::vector<double> all, slowest;
  for (int it = 0; it < 65; ++it) {
    launch(cs, rows, n, slice, 0, init, s);
    CK(cudaMemcpyAsync(ht, g_t, nb * 8, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (it < 5) continue;
    double slow = 0;
    for (int b = 0; b < nb; ++b) {
      all.push_back(ht[b] / 1000.0);
      slow = std::max(slow, ht[b] / 1000.0);
    }
    slowest.push_back(slow);
  }
  std::sort(all.begin(), all.end());
  std::sort(slowest.begin(), slowest.end());
  *median = all[all.size() / 2];
  *slowest_median = slowest[slowest.size() / 2];
}

int main() {
#define PLACE_ATTR(I)                                                                      \
  CK(cudaFuncSetAttribute(place_k<I>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1)); \
  CK(cudaFuncSetAttribute(place_k<I>, cudaFuncAttributeMaxDynamicSharedMemorySize, 225 * 1024));
  PLACE_ATTR(0)
  PLACE_ATTR(INIT_MBAR)
  PLACE_ATTR(INIT_MBAR | INIT_FENCE)
  PLACE_ATTR(INIT_MBAR | INIT_FENCE | INIT_HIST)
  PLACE_ATTR(INIT_ARRIVE)
  PLACE_ATTR(INIT_HIST | INIT_ARRIVE)
  PLACE_ATTR(INIT_ALL)
  PLACE_ATTR(INIT_ALL | INIT_AFTER_LOADS)
#undef PLACE_ATTR
  float* in;
  CK(cudaMalloc(&in, 8 * 262144 * 4));
  CK(cudaMemset(in, 0, 8 * 262144 * 4)); /* zeros first; N(0,1)-like values for section 5 */
  g_in = in;
  CK(cudaMalloc(&g_sm, MAXB * 4));
  CK(cudaMalloc(&g_t, MAXB * 8));
  CK(cudaMalloc(&g_sink, 64));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

  /* 1. the GPCs: SMs that shared a cluster, joined */
  for (int i = 0; i < NSM; ++i) parent[i] = i;
  std::vector<int> seen(NSM, 0);
  unsigned hs[MAXB];
  const int map_cs[] = {16, 12, 10, 9, 8};
  for (int cs : map_cs) {
    cudaLaunchConfig_t c;
    cudaLaunchAttribute a[2];
    place_config(&c, a, cs, 1, 130 * 1024, -1, 0);
    int fit = 0;
    CK(cudaOccupancyMaxActiveClusters(&fit, place_k<0>, &c));
    for (int it = 0; it < 40; ++it) {
      launch(cs, fit, 0, 0, 0, 0, s); /* no loads: placement only */
      CK(cudaMemcpyAsync(hs, g_sm, fit * cs * 4, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
      for (int r = 0; r < fit; ++r)
        for (int b = 0; b < cs; ++b) {
          seen[hs[r * cs + b]] = 1;
          parent[find(hs[r * cs + b])] = find(hs[r * cs]);
        }
    }
    printf("clusters of %d: %d fit at once\n", cs, fit);
  }
  std::vector<int> gpc_of(NSM, -1);
  int ngpc = 0;
  for (int i = 0; i < NSM; ++i)
    if (seen[i] && find(i) == i) gpc_of[i] = ngpc++;
  printf("GPCs (SMs joined by shared clusters): %d\n", ngpc);
  for (int i = 0; i < NSM; ++i)
    if (seen[i] && find(i) == i) {
      int cnt = 0;
      printf("  GPC %d:", gpc_of[i]);
      for (int j = 0; j < NSM; ++j)
        if (seen[j] && find(j) == i) {
          printf(" %d", j);
          ++cnt;
        }
      printf("  (%d SMs)\n", cnt);
    }
  for (int i = 0; i < NSM; ++i)
    if (seen[i]) gpc_of[i] = gpc_of[find(i)];

  /* 2. AIR CLUSTER's geometries under each policy */
  printf("\n| rows x cs | policy | launches with a shared GPC | GPCs used (median) | staging alone: median us | "
         "staging shared: median us | staging, slowest block a launch: median us |\n| --- | --- | --- | --- | --- | --- "
         "| --- |\n");
  const int geo[][2] = {{1, 16}, {2, 16}, {4, 16}, {2, 8}, {4, 8}, {8, 8}};
  const char* pname[] = {"default", "spread", "load-balancing"};
  unsigned long long ht[MAXB];
  for (const auto& g : geo) {
    const int rows = g[0], cs = g[1], nb = rows * cs;
    for (int policy = 0; policy < 3; ++policy) {
      std::vector<double> alone, shared, slowest, used;
      int nshared = 0;
      const int iters = 60;
      for (int it = 0; it < iters + 5; ++it) {
        launch(cs, rows, 262144, 262144 / cs, policy, 0, s);
        CK(cudaMemcpyAsync(hs, g_sm, nb * 4, cudaMemcpyDeviceToHost, s));
        CK(cudaMemcpyAsync(ht, g_t, nb * 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        if (it < 5) continue;
        std::vector<int> per(NSM, 0);
        for (int r = 0; r < rows; ++r) {
          const int gp = gpc_of[hs[r * cs]];
          if (gp >= 0) ++per[gp];
        }
        int u = 0, mx = 0;
        for (int v : per) {
          u += v > 0;
          mx = std::max(mx, v);
        }
        used.push_back(u);
        nshared += mx > 1;
        double slow = 0;
        for (int b = 0; b < nb; ++b) {
          const int gp = gpc_of[hs[b]];
          const double us = ht[b] / 1000.0;
          (gp >= 0 && per[gp] > 1 ? shared : alone).push_back(us);
          slow = std::max(slow, us);
        }
        slowest.push_back(slow);
      }
      auto med = [](std::vector<double>& v) {
        if (v.empty()) return -1.0;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      printf("| %d x %d | %s | %d / %d | %.0f | %.2f | %.2f | %.2f |\n", rows, cs, pname[policy], nshared, iters,
             med(used), med(alone), med(shared), med(slowest));
    }
  }

  /* 3. the wide start's init (mbarriers, their fence, the relaxed cluster arrive) and the staging */
  printf("\n| rows x n / cs | init | staging: median block us | slowest block a launch: median us |\n| --- | --- | "
         "--- | --- |\n");
  const int shp[][3] = {{1, 32000, 8}, {1, 262144, 16}, {8, 128256, 8}, {8, 262144, 8}};
  const int inits[] = {0,          INIT_MBAR,  INIT_MBAR | INIT_FENCE, INIT_MBAR | INIT_FENCE | INIT_HIST,
                       INIT_ARRIVE, INIT_HIST | INIT_ARRIVE, INIT_ALL, INIT_ALL | INIT_AFTER_LOADS};
  const char* iname[] = {"none",    "mbarriers", "mbarriers, fence", "mbarriers, fence, histogram",
                         "arrive", "histogram, arrive", "all (as the kernel)", "all, after the first loads"};
  for (const auto& g : shp) {
    const int rows = g[0], n = g[1], cs = g[2], slice = ((n + cs - 1) / cs + 3) & ~3;
    for (int ii = 0; ii < 8; ++ii) {
      double med, slow;
      staging_times(cs, rows, n, slice, inits[ii], s, &med, &slow);
      printf("| %d x %d / %d | %s | %.2f | %.2f |\n", rows, n, cs, iname[ii], med, slow);
    }
  }

  /* 4. the data's values and the shared memory a block asks for (the L1 left beside it) */
  printf("\n| rows x n / cs | data | shared memory asked (KB) | init | staging: median block us | slowest block a launch: "
         "median us |\n| --- | --- | --- | --- | --- | --- |\n");
  for (int data = 0; data < 2; ++data) {
    if (data == 1) {
      fill_k<<<264, 256, 0, s>>>(in, (size_t)8 * 262144);
      CK(cudaStreamSynchronize(s));
    }
    const int shp5[][3] = {{1, 262144, 16}, {8, 262144, 8}};
    for (const auto& g : shp5) {
      const int rows = g[0], n = g[1], cs = g[2], slice = ((n + cs - 1) / cs + 3) & ~3;
      const int smems[] = {130, 165, 200, 225};
      for (int sk : smems) {
        if (data == 0 && sk != 130) continue;
        g_smem = (size_t)sk * 1024;
        for (int init : {0, (int)INIT_ALL}) {
          double med, slow;
          staging_times(cs, rows, n, slice, init, s, &med, &slow);
          printf("| %d x %d / %d | %s | %d | %s | %.2f | %.2f |\n", rows, n, cs, data ? "N(0,1)-like" : "zeros",
                 (int)(std::max((size_t)slice * 4, g_smem) / 1024), init ? "all (as the kernel)" : "none", med, slow);
        }
      }
    }
  }
  g_smem = 130 * 1024;

  /* 5. is a kernel's code cold at every launch? The same unrolled code run twice in one launch */
  std::vector<double> first, second;
  unsigned long long* d_ic;
  CK(cudaMalloc(&d_ic, 2 * 132 * 8 * 2));
  CK(cudaFuncSetAttribute(icache_k, cudaFuncAttributeMaxDynamicSharedMemorySize, 130 * 1024));
  for (int it = 0; it < 25; ++it) {
    icache_k<<<132, 32, 130 * 1024, s>>>(d_ic, g_sink);
    unsigned long long h[2 * 132];
    CK(cudaMemcpyAsync(h, d_ic, sizeof h, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (it < 5) continue;
    for (int b = 0; b < 132; ++b) {
      first.push_back(h[2 * b] / 1000.0);
      second.push_back(h[2 * b + 1] / 1000.0);
    }
  }
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  printf("\n%d SASS-sized steps of straight code (one warp a block, 132 blocks, 20 launches): first run in a launch "
         "median %.2f us (p90 %.2f), second run %.2f us (p90 %.2f)\n",
         ICODE, first[first.size() / 2], first[first.size() * 9 / 10], second[second.size() / 2],
         second[second.size() * 9 / 10]);
  return 0;
}
