/*
 * rows_floor.cu: the least that a select over many short rows costs on this GPU, to put
 * RTop-K's thread path (src/cuda/rtopk/rtopk_thread_rows.cuh) on the moe shapes in context.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o rows_floor bench/rows_floor.cu && ./rows_floor
 *
 * Kernels, on batch x n f32 rows (and 16-bit rows as raw halves):
 * - `read`: every thread sums 16-byte vectors of the buffer at a grid stride; one store a
 *   thread. The whole input read once, nothing else: the bandwidth floor at this size.
 * - `argmax G`: G lanes a row, each loads its n / G elements with 16-byte loads issued together,
 *   keeps its largest (lowest index among equals), the group reduces by shuffles and one lane
 *   writes value and index. One group a row, no grid stride: the least a top-1 does.
 * Per kernel and shape, microseconds per call: 200 launches back to back between two CUDA
 * events, / 200, over 8 input buffers in turn (8 x 16 MB > the 50 MB L2), as `topk bench` times.
 * Standalone (no libtopk); used for docs/BENCHMARKS.md, session 26.
 */
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e!=cudaSuccess){printf("%s: %s\n",#x,cudaGetErrorString(e)); return 1;}}while(0)

__global__ void read_k(const uint4* in, size_t nv, unsigned* out) {
  unsigned s = 0;
  for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < nv; v += (size_t)gridDim.x * blockDim.x) {
    const uint4 t = in[v];
    s += t.x ^ t.y ^ t.z ^ t.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

/* VPL 16-byte vectors a lane (n * es / 16 / G); f32 compares as floats, 16-bit rows as raw halves */
template <int G, int VPL, bool F32>
__global__ void argmax_k(const uint4* in, int64_t batch, float* vals, int64_t* idx) {
  const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const int64_t r = t / G;
  const int g = (int)(t % G);
  if (r >= batch) return;
  const uint4* row = in + r * (VPL * G);
  uint4 w[VPL];
#pragma unroll
  for (int v = 0; v < VPL; ++v) w[v] = row[v * G + g];
  float best = -INFINITY;
  int bi = 0;
  constexpr int EPV = F32 ? 4 : 8;
#pragma unroll
  for (int v = 0; v < VPL; ++v) {
    const unsigned u[4] = {w[v].x, w[v].y, w[v].z, w[v].w};
#pragma unroll
    for (int e = 0; e < EPV; ++e) {
      const float f = F32 ? __uint_as_float(u[e]) : __uint_as_float((u[e / 2] >> (16 * (e & 1))) << 16);
      const int i = (v * G + g) * EPV + e;
      if (f > best) { best = f; bi = i; }
    }
  }
#pragma unroll
  for (int m = 1; m < G; m <<= 1) {
    const float ob = __shfl_xor_sync(0xffffffffu, best, m);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, m);
    if (ob > best || (ob == best && oi < bi)) { best = ob; bi = oi; }
  }
  if (g == 0) { vals[r] = best; idx[r] = bi; }
}

template <typename F>
static float time_us(F launch, int reps) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 20; ++i) launch(i);
  cudaEventRecord(a);
  for (int i = 0; i < reps; ++i) launch(i);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a); cudaEventDestroy(b);
  return ms * 1000.f / reps;
}

int main() {
  const int NB = 8, REPS = 200;
  const int64_t batch = 65536;
  const size_t max_bytes = (size_t)batch * 256 * 4;
  uint4* buf[NB];
  for (int i = 0; i < NB; ++i) { CK(cudaMalloc(&buf[i], max_bytes)); CK(cudaMemset(buf[i], 0x3c, max_bytes)); }
  float* vals; int64_t* idx; unsigned* sink;
  CK(cudaMalloc(&vals, batch * sizeof(float))); CK(cudaMalloc(&idx, batch * sizeof(int64_t)));
  CK(cudaMalloc(&sink, 1 << 24));
  int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  printf("rows x n, dtype | MB | read us (TB/s) | argmax G=4 us | argmax G=2 us | argmax G=8 us\n");
  const struct { int n, es; } shapes[] = {{64, 4}, {128, 4}, {256, 4}, {64, 2}, {128, 2}, {256, 2}};
  for (const auto& s : shapes) {
    const size_t bytes = (size_t)batch * s.n * s.es;
    const size_t nv = bytes / 16;
    const float tr = time_us([&](int i) { read_k<<<sms * 8, 256>>>(buf[i % NB], nv, sink); }, REPS);
    float ta[3] = {0, 0, 0};
    const int Gs[3] = {4, 2, 8};
    for (int gi = 0; gi < 3; ++gi) {
      const int G = Gs[gi];
      const int vpl = (int)(s.n * s.es / 16 / G);
      const int64_t threads = batch * G;
      const unsigned blocks = (unsigned)((threads + 255) / 256);
      auto go = [&](int i) {
        const uint4* in = buf[i % NB];
#define ARG(GG, V) if (G == GG && vpl == V) { s.es == 4 ? argmax_k<GG, V, true><<<blocks, 256>>>(in, batch, vals, idx) : argmax_k<GG, V, false><<<blocks, 256>>>(in, batch, vals, idx); }
        ARG(4, 4) ARG(4, 8) ARG(4, 16) ARG(4, 2)
        ARG(2, 8) ARG(2, 16) ARG(2, 32) ARG(2, 4)
        ARG(8, 2) ARG(8, 4) ARG(8, 8) ARG(8, 1)
#undef ARG
      };
      ta[gi] = time_us(go, REPS);
    }
    CK(cudaGetLastError());
    printf("%lld x %d %s | %.1f | %.2f (%.2f) | %.2f | %.2f | %.2f\n", (long long)batch, s.n, s.es == 4 ? "f32" : "bf16",
           bytes / 1e6, tr, bytes / tr / 1e6, ta[0], ta[1], ta[2]);
  }
  return 0;
}
