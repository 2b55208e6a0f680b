/*
 * test_device_header.cu: include/topk_device.cuh used as a user would.
 *
 *   knn_block   fused k-NN: one block (4 warps) per query computes squared L2
 *               distances to all points in registers and feeds them to per-warp
 *               selects (32-bit keys, CAP 128), merged with topk_block_select_merge;
 *               k = 100 smallest, checked against a CPU sort by (distance, index).
 *               Integer coordinates make every distance exact (no FMA rounding
 *               differences with the CPU) and produce many ties, which must go to
 *               the lower index.
 *   knn_warp    the same with one warp per query, 64-bit keys (double distances),
 *               CAP 1024 / k = 1000, and a point count below k (padding: index -1).
 *               knn_block runs twice: CAP 128 / T 4 / 4 warps, and CAP 160 / T 3 /
 *               2 warps (an odd-size queue, 004 Alg. 1-2).
 *   networks    the merge networks alone, for power-of-two and odd register counts:
 *               topk_dq_sort of 32 R1 and 32 R2 pairs, then topk_dq_merge of the
 *               two, against a CPU sort by (key desc, index asc); keys of 16, 32 and
 *               64 bits, from a small range (ties) and from the full width; and
 *               topk_dq_sort_blocked (the blocked layout) for E = 1..16.
 *   key_helpers topk_device_key_* on the device and the library's parameterised
 *               transform (queue_select.h) on the host against src/common/keys.h,
 *               for specials (+-0, +-inf, NaNs, extremes) and random bits
 *               (the host half alone, without a device: test_queue_keys.cu).
 *
 * Exits 77 (skipped) when no CUDA device is usable.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topk_device.cuh"

#include "common/keys.h"
#include "cuda/queue_select/queue_select.h"
#include "harness.h"

enum { DIM = 8 };

static int have_device(void) {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

/* One block of NWARPS warps per query; the block's result in out_idx / out_key [query][k]. */
template <int NWARPS, int CAP, int T>
__global__ void knn_block_kernel(const float* points, int n, const float* queries, int k, int32_t* out_idx,
                                 uint32_t* out_key) {
  __shared__ __align__(16) unsigned char smem[topk_block_select_smem_bytes<32, CAP>(NWARPS)];
  const float* q = queries + (size_t)blockIdx.x * DIM;
  topk_warp_select<32, CAP, T> s;
  topk_warp_select_init(s, k);
  for (int base = 0; base < n; base += blockDim.x) { /* the same number of rounds for every thread */
    const int i = base + (int)threadIdx.x;
    float d = 0.f;
    if (i < n) {
      for (int c = 0; c < DIM; ++c) {
        const float t = points[(size_t)i * DIM + c] - q[c];
        d += t * t;
      }
    }
    topk_warp_select_add(s, topk_device_key_f32(d, true), (uint32_t)i, i < n);
  }
  topk_warp_select_finish(s);
  topk_block_select_merge(s, smem, NWARPS);
  if (threadIdx.x < 32)
    topk_warp_select_store(s, out_key + (size_t)blockIdx.x * k, out_idx + (size_t)blockIdx.x * k);
}

/* One warp per query, 64-bit keys. */
__global__ void knn_warp_kernel(const float* points, int n, const float* queries, int k, int64_t* out_idx) {
  const float* q = queries + (size_t)blockIdx.x * DIM;
  topk_warp_select<64, 1024, 8> s;
  topk_warp_select_init(s, k);
  for (int base = 0; base < n; base += 32) {
    const int i = base + (int)threadIdx.x;
    double d = 0.0;
    if (i < n) {
      for (int c = 0; c < DIM; ++c) {
        const double t = (double)points[(size_t)i * DIM + c] - (double)q[c];
        d += t * t;
      }
    }
    topk_warp_select_add(s, topk_device_key_f64(d, true), (uint32_t)i, i < n);
  }
  topk_warp_select_finish(s);
  topk_warp_select_store(s, (uint64_t*)0, out_idx + (size_t)blockIdx.x * k);
}

/* One warp: sorts w (32 R1 pairs) and x (32 R2), stores both, merges x into w, stores w.
 * out: sorted w, then sorted x, then the merged w (32 (2 R1 + R2) pairs). */
template <int KB, int R1, int R2>
__global__ void net_kernel(const uint64_t* keys, uint64_t* out_key, uint32_t* out_idx) {
  typedef topk_dq_ops<KB> O;
  const int lane = (int)threadIdx.x;
  topk_dq_pair<KB> w[R1], x[R2];
  for (int r = 0; r < R1; ++r) w[r] = O::make(keys[r * 32 + lane], (uint32_t)(r * 32 + lane));
  for (int r = 0; r < R2; ++r) x[r] = O::make(keys[(R1 + r) * 32 + lane], (uint32_t)((R1 + r) * 32 + lane));
  topk_dq_sort<KB, R1>(w, lane);
  topk_dq_sort<KB, R2>(x, lane);
  for (int r = 0; r < R1; ++r) {
    out_key[r * 32 + lane] = O::key(w[r]);
    out_idx[r * 32 + lane] = O::index(w[r]);
  }
  for (int r = 0; r < R2; ++r) {
    out_key[(R1 + r) * 32 + lane] = O::key(x[r]);
    out_idx[(R1 + r) * 32 + lane] = O::index(x[r]);
  }
  topk_dq_merge<KB, R1, R2>(w, x, lane);
  for (int r = 0; r < R1; ++r) {
    out_key[(R1 + R2 + r) * 32 + lane] = O::key(w[r]);
    out_idx[(R1 + R2 + r) * 32 + lane] = O::index(w[r]);
  }
}

/* One warp: sorts 32 E pairs in the blocked layout (topk_dq_sort_blocked: element p =
 * lane * E + e) and stores them in position order. */
template <int KB, int E>
__global__ void blocked_kernel(const uint64_t* keys, uint64_t* out_key, uint32_t* out_idx) {
  typedef topk_dq_ops<KB> O;
  const int lane = (int)threadIdx.x;
  topk_dq_pair<KB> a[E];
  for (int e = 0; e < E; ++e) a[e] = O::make(keys[lane * E + e], (uint32_t)(lane * E + e));
  topk_dq_sort_blocked<O, E>(a, lane);
  for (int e = 0; e < E; ++e) {
    out_key[lane * E + e] = O::key(a[e]);
    out_idx[lane * E + e] = O::index(a[e]);
  }
}

/* keys[t][i]: the rank key of bits[i] under helper t (see key_helpers). */
__global__ void key_kernel(const uint64_t* bits, int count, uint64_t* keys) {
  for (int i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < count; i += (int)(gridDim.x * blockDim.x)) {
    const uint64_t b = bits[i];
    for (int s = 0; s < 2; ++s) {
      uint64_t* o = keys + (size_t)s * 8 * count;
      float f;
      uint32_t b32 = (uint32_t)b;
      memcpy(&f, &b32, 4);
      double g;
      memcpy(&g, &b, 8);
      o[0 * count + i] = topk_device_key_f32(f, s != 0);
      o[1 * count + i] = topk_device_key_f16_bits((uint16_t)b, s != 0);
      o[2 * count + i] = topk_device_key_bf16_bits((uint16_t)b, s != 0);
      o[3 * count + i] = topk_device_key_f64(g, s != 0);
      o[4 * count + i] = topk_device_key_i32((int32_t)b32, s != 0);
      o[5 * count + i] = topk_device_key_u32(b32, s != 0);
      o[6 * count + i] = topk_device_key_i64((int64_t)b, s != 0);
      o[7 * count + i] = topk_device_key_u64(b, s != 0);
    }
  }
}
/* The dtype of each helper row of key_kernel. */
static const topk_dtype helper_dtypes[8] = {TOPK_F32, TOPK_F16, TOPK_BF16, TOPK_F64,
                                            TOPK_I32, TOPK_U32, TOPK_I64,  TOPK_U64};

static uint64_t rng_state;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Integer coordinates in [-20, 20]: exact squared distances, many ties. */
static void fill_coords(float* x, size_t count) {
  for (size_t i = 0; i < count; ++i) x[i] = (float)((int)(rng() % 41) - 20);
}

typedef struct ref_item {
  double  d;
  int64_t i;
} ref_item;
static int ref_cmp(const void* a, const void* b) {
  const ref_item* x = (const ref_item*)a;
  const ref_item* y = (const ref_item*)b;
  if (x->d != y->d) return x->d < y->d ? -1 : 1;
  return x->i < y->i ? -1 : (x->i > y->i);
}

/* The k nearest points of query q by (distance, index); distances exact in float and double. */
static void reference(const float* pts, int n, const float* q, ref_item* items) {
  for (int i = 0; i < n; ++i) {
    double d = 0.0;
    for (int c = 0; c < DIM; ++c) {
      const double t = (double)pts[(size_t)i * DIM + c] - (double)q[c];
      d += t * t;
    }
    items[i].d = d;
    items[i].i = i;
  }
  qsort(items, (size_t)n, sizeof *items, ref_cmp);
}

static int sync_ok(void) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess;
}

/* 0 when every query's k nearest match the reference. */
template <int NWARPS, int CAP, int T>
static int knn_block_case(int k) {
  const int n = 20000, nq = 37;
  float* pts = (float*)malloc(sizeof(float) * n * DIM);
  float* qs = (float*)malloc(sizeof(float) * nq * DIM);
  int32_t* idx = (int32_t*)malloc(sizeof(int32_t) * nq * k);
  uint32_t* key = (uint32_t*)malloc(sizeof(uint32_t) * nq * k);
  ref_item* items = (ref_item*)malloc(sizeof(ref_item) * n);
  fill_coords(pts, (size_t)n * DIM);
  fill_coords(qs, (size_t)nq * DIM);
  float *d_pts, *d_qs;
  int32_t* d_idx;
  uint32_t* d_key;
  cudaMalloc(&d_pts, sizeof(float) * n * DIM);
  cudaMalloc(&d_qs, sizeof(float) * nq * DIM);
  cudaMalloc(&d_idx, sizeof(int32_t) * nq * k);
  cudaMalloc(&d_key, sizeof(uint32_t) * nq * k);
  cudaMemcpy(d_pts, pts, sizeof(float) * n * DIM, cudaMemcpyHostToDevice);
  cudaMemcpy(d_qs, qs, sizeof(float) * nq * DIM, cudaMemcpyHostToDevice);
  cudaMemset(d_idx, 0xA5, sizeof(int32_t) * nq * k);
  knn_block_kernel<NWARPS, CAP, T><<<nq, NWARPS * 32>>>(d_pts, n, d_qs, k, d_idx, d_key);
  int bad = !sync_ok();
  cudaMemcpy(idx, d_idx, sizeof(int32_t) * nq * k, cudaMemcpyDeviceToHost);
  cudaMemcpy(key, d_key, sizeof(uint32_t) * nq * k, cudaMemcpyDeviceToHost);
  for (int q = 0; q < nq && !bad; ++q) {
    reference(pts, n, qs + (size_t)q * DIM, items);
    for (int j = 0; j < k; ++j) {
      const float df = (float)items[j].d;
      uint32_t fb;
      memcpy(&fb, &df, 4);
      const uint32_t want_key = (uint32_t)topk_rank_key(fb, TOPK_F32, 1);
      if (idx[q * k + j] != items[j].i || key[q * k + j] != want_key) {
        fprintf(stderr, "knn_block CAP %d T %d: query %d slot %d: index %d key 0x%08x, want %lld key 0x%08x\n", CAP, T, q, j,
                idx[q * k + j], key[q * k + j], (long long)items[j].i, want_key);
        bad = 1;
        break;
      }
    }
  }
  cudaFree(d_pts);
  cudaFree(d_qs);
  cudaFree(d_idx);
  cudaFree(d_key);
  free(pts);
  free(qs);
  free(idx);
  free(key);
  free(items);
  return bad;
}

TEST(knn_block) {
  if (!have_device()) return TEST_SKIP;
  rng_state = test_seed() | 1;
  ASSERT_EQ_I64((knn_block_case<4, 128, 4>(100)), 0);
  ASSERT_EQ_I64((knn_block_case<2, 160, 3>(150)), 0);
  return TEST_OK;
}

TEST(knn_warp) {
  if (!have_device()) return TEST_SKIP;
  static const int ns[] = {5000, 999, 40}; /* 40 < k: padding */
  const int nq = 9, k = 1000;
  int bad = 0;
  rng_state = test_seed() * 3 + 1;
  for (int t = 0; t < 3 && !bad; ++t) {
    const int n = ns[t];
    float* pts = (float*)malloc(sizeof(float) * n * DIM);
    float* qs = (float*)malloc(sizeof(float) * nq * DIM);
    int64_t* idx = (int64_t*)malloc(sizeof(int64_t) * nq * k);
    ref_item* items = (ref_item*)malloc(sizeof(ref_item) * n);
    fill_coords(pts, (size_t)n * DIM);
    fill_coords(qs, (size_t)nq * DIM);
    float *d_pts, *d_qs;
    int64_t* d_idx;
    cudaMalloc(&d_pts, sizeof(float) * n * DIM);
    cudaMalloc(&d_qs, sizeof(float) * nq * DIM);
    cudaMalloc(&d_idx, sizeof(int64_t) * nq * k);
    cudaMemcpy(d_pts, pts, sizeof(float) * n * DIM, cudaMemcpyHostToDevice);
    cudaMemcpy(d_qs, qs, sizeof(float) * nq * DIM, cudaMemcpyHostToDevice);
    cudaMemset(d_idx, 0xA5, sizeof(int64_t) * nq * k);
    knn_warp_kernel<<<nq, 32>>>(d_pts, n, d_qs, k, d_idx);
    if (!sync_ok()) bad = 1;
    cudaMemcpy(idx, d_idx, sizeof(int64_t) * nq * k, cudaMemcpyDeviceToHost);
    for (int q = 0; q < nq && !bad; ++q) {
      reference(pts, n, qs + (size_t)q * DIM, items);
      for (int j = 0; j < k; ++j) {
        const int64_t want = j < n ? items[j].i : -1;
        if (idx[(size_t)q * k + j] != want) {
          fprintf(stderr, "knn_warp: n %d query %d slot %d: index %lld, want %lld\n", n, q, j,
                  (long long)idx[(size_t)q * k + j], (long long)want);
          bad = 1;
          break;
        }
      }
    }
    cudaFree(d_pts);
    cudaFree(d_qs);
    cudaFree(d_idx);
    free(pts);
    free(qs);
    free(idx);
    free(items);
  }
  ASSERT_EQ_I64(bad, 0);
  return TEST_OK;
}

typedef struct net_item {
  uint64_t key;
  uint32_t idx;
} net_item;
static int net_cmp(const void* a, const void* b) { /* best first: larger key, then smaller index */
  const net_item* x = (const net_item*)a;
  const net_item* y = (const net_item*)b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* 0 when net_kernel<KB, R1, R2>'s three outputs match a CPU sort, for keys below `range`. */
template <int KB, int R1, int R2>
static int net_case(uint64_t range) {
  enum { N1 = 32 * R1, N2 = 32 * R2, OUT = 32 * (2 * R1 + R2) };
  uint64_t keys[N1 + N2], out_key[OUT];
  uint32_t out_idx[OUT];
  net_item want[N1 + N2], all[N1 + N2];
  const uint64_t mask = KB == 64 ? ~0ull : ((1ull << KB) - 1);
  for (int i = 0; i < N1 + N2; ++i) {
    keys[i] = (range ? rng() % range : rng()) & mask;
    all[i].key = keys[i];
    all[i].idx = (uint32_t)i;
  }
  uint64_t *d_keys, *d_out_key;
  uint32_t* d_out_idx;
  cudaMalloc(&d_keys, sizeof keys);
  cudaMalloc(&d_out_key, sizeof out_key);
  cudaMalloc(&d_out_idx, sizeof out_idx);
  cudaMemcpy(d_keys, keys, sizeof keys, cudaMemcpyHostToDevice);
  net_kernel<KB, R1, R2><<<1, 32>>>(d_keys, d_out_key, d_out_idx);
  int bad = !sync_ok();
  cudaMemcpy(out_key, d_out_key, sizeof out_key, cudaMemcpyDeviceToHost);
  cudaMemcpy(out_idx, d_out_idx, sizeof out_idx, cudaMemcpyDeviceToHost);
  cudaFree(d_keys);
  cudaFree(d_out_key);
  cudaFree(d_out_idx);
  /* expected: sorted w, sorted x, best N1 of both */
  memcpy(want, all, sizeof(net_item) * N1);
  qsort(want, N1, sizeof(net_item), net_cmp);
  memcpy(want + N1, all + N1, sizeof(net_item) * N2);
  qsort(want + N1, N2, sizeof(net_item), net_cmp);
  qsort(all, N1 + N2, sizeof(net_item), net_cmp);
  for (int i = 0; i < OUT && !bad; ++i) {
    const net_item e = i < N1 + N2 ? want[i] : all[i - N1 - N2];
    if (out_key[i] != e.key || out_idx[i] != e.idx) {
      fprintf(stderr, "networks KB %d R1 %d R2 %d range %llu: %s slot %d: (0x%llx, %u), want (0x%llx, %u)\n", KB,
              R1, R2, (unsigned long long)range, i < N1 ? "sort w" : (i < N1 + N2 ? "sort x" : "merge"),
              i < N1 ? i : (i < N1 + N2 ? i - N1 : i - N1 - N2), (unsigned long long)out_key[i], out_idx[i],
              (unsigned long long)e.key, e.idx);
      bad = 1;
    }
  }
  return bad;
}

/* 0 when blocked_kernel<KB, E>'s output matches a CPU sort, for keys below `range`. */
template <int KB, int E>
static int blocked_case(uint64_t range) {
  enum { N = 32 * E };
  uint64_t keys[N], out_key[N];
  uint32_t out_idx[N];
  net_item want[N];
  const uint64_t mask = KB == 64 ? ~0ull : ((1ull << KB) - 1);
  for (int i = 0; i < N; ++i) {
    keys[i] = (range ? rng() % range : rng()) & mask;
    want[i].key = keys[i];
    want[i].idx = (uint32_t)i;
  }
  uint64_t *d_keys, *d_out_key;
  uint32_t* d_out_idx;
  cudaMalloc(&d_keys, sizeof keys);
  cudaMalloc(&d_out_key, sizeof out_key);
  cudaMalloc(&d_out_idx, sizeof out_idx);
  cudaMemcpy(d_keys, keys, sizeof keys, cudaMemcpyHostToDevice);
  blocked_kernel<KB, E><<<1, 32>>>(d_keys, d_out_key, d_out_idx);
  int bad = !sync_ok();
  cudaMemcpy(out_key, d_out_key, sizeof out_key, cudaMemcpyDeviceToHost);
  cudaMemcpy(out_idx, d_out_idx, sizeof out_idx, cudaMemcpyDeviceToHost);
  cudaFree(d_keys);
  cudaFree(d_out_key);
  cudaFree(d_out_idx);
  qsort(want, N, sizeof(net_item), net_cmp);
  for (int i = 0; i < N && !bad; ++i)
    if (out_key[i] != want[i].key || out_idx[i] != want[i].idx) {
      fprintf(stderr, "networks blocked KB %d E %d range %llu: slot %d: (0x%llx, %u), want (0x%llx, %u)\n", KB, E,
              (unsigned long long)range, i, (unsigned long long)out_key[i], out_idx[i],
              (unsigned long long)want[i].key, want[i].idx);
      bad = 1;
    }
  return bad;
}

/* Both key ranges; 0 when both pass. */
template <int KB, int R1, int R2>
static int net_cases(void) {
  return net_case<KB, R1, R2>(50) | net_case<KB, R1, R2>(0);
}

TEST(networks) {
  if (!have_device()) return TEST_SKIP;
  rng_state = test_seed() * 11 + 3;
  int bad = 0;
  bad |= net_cases<32, 1, 1>();
  bad |= net_cases<32, 2, 3>();
  bad |= net_cases<32, 3, 1>();
  bad |= net_cases<32, 3, 3>();
  bad |= net_cases<32, 4, 8>();
  bad |= net_cases<32, 5, 3>();
  bad |= net_cases<32, 6, 7>();
  bad |= net_cases<32, 7, 4>();
  bad |= net_cases<32, 12, 3>();
  bad |= net_cases<32, 1, 5>();
  bad |= net_cases<16, 3, 5>();
  bad |= net_cases<16, 6, 2>();
  bad |= net_cases<64, 3, 2>();
  bad |= net_cases<64, 5, 1>();
  for (int range = 0; range < 2; ++range) { /* the blocked layout: keys from the full width, then 50 values */
    const uint64_t rg = range ? 50 : 0;
    bad |= blocked_case<32, 1>(rg) | blocked_case<32, 2>(rg) | blocked_case<32, 4>(rg) | blocked_case<32, 8>(rg);
    bad |= blocked_case<32, 16>(rg) | blocked_case<16, 4>(rg) | blocked_case<64, 8>(rg);
  }
  ASSERT_EQ_I64(bad, 0);
  return TEST_OK;
}

TEST(key_helpers) {
  static const uint64_t specials[] = {
      0x0ull,          0x8000ull,         0x7C00ull,        0xFC00ull,         0x7E00ull,          0xFE01ull,
      0x7F80ull,       0xFF80ull,         0x7FC0ull,        0xFFC1ull,         0x3C00ull,          0xBC00ull,
      0x80000000ull,   0x7F800000ull,     0xFF800000ull,    0x7FC00000ull,     0xFFC00001ull,      0x3F800000ull,
      0xBF800000ull,   0x7FFFFFFFull,     0xFFFFFFFFull,    0x00000001ull,     0x80000001ull,      0x8000000000000000ull,
      0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x7FF8000000000000ull, 0xFFF8000000000001ull,
      0x3FF0000000000000ull, 0xBFF0000000000000ull, 0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0x1ull};
  enum { RANDOM = 4096 };
  const int count = (int)(sizeof specials / sizeof specials[0]) + RANDOM;
  if (!have_device()) return TEST_SKIP;
  rng_state = test_seed() * 7 + 5;
  uint64_t* bits = (uint64_t*)malloc(sizeof(uint64_t) * count);
  uint64_t* keys = (uint64_t*)malloc(sizeof(uint64_t) * 16 * count);
  for (int i = 0; i < count; ++i) bits[i] = i < (int)(sizeof specials / sizeof specials[0]) ? specials[i] : rng();
  uint64_t *d_bits, *d_keys;
  cudaMalloc(&d_bits, sizeof(uint64_t) * count);
  cudaMalloc(&d_keys, sizeof(uint64_t) * 16 * count);
  cudaMemcpy(d_bits, bits, sizeof(uint64_t) * count, cudaMemcpyHostToDevice);
  key_kernel<<<8, 256>>>(d_bits, count, d_keys);
  const int ok = sync_ok();
  cudaMemcpy(keys, d_keys, sizeof(uint64_t) * 16 * count, cudaMemcpyDeviceToHost);
  int bad = !ok;
  for (int s = 0; s < 2 && !bad; ++s)
    for (int t = 0; t < 8 && !bad; ++t)
      for (int i = 0; i < count; ++i) {
        const topk_dtype dt = helper_dtypes[t];
        const uint64_t b = bits[i] & topk_key_mask(dt);
        const uint64_t want = topk_rank_key(b, dt, s);
        /* the library's parameterised transform, on the host */
        const topk_dq_key_params kp = qs_key_params(dt, s);
        uint64_t lib;
        switch (topk_key_bits(dt)) {
          case 16: lib = topk_dq_rank_key<uint16_t>((uint16_t)b, kp); break;
          case 32: lib = topk_dq_rank_key<uint32_t>((uint32_t)b, kp); break;
          default: lib = topk_dq_rank_key<uint64_t>(b, kp); break;
        }
        const uint64_t dev = keys[((size_t)s * 8 + t) * count + i];
        if (dev != want || lib != want) {
          fprintf(stderr, "key_helpers: %s smallest=%d bits 0x%llx: device 0x%llx, library 0x%llx, want 0x%llx\n",
                  topk_dtype_name(dt), s, (unsigned long long)b, (unsigned long long)dev, (unsigned long long)lib,
                  (unsigned long long)want);
          bad = 1;
          break;
        }
      }
  cudaFree(d_bits);
  cudaFree(d_keys);
  free(bits);
  free(keys);
  ASSERT_EQ_I64(bad, 0);
  return TEST_OK;
}

#define TEST_LIST(X) \
  X(key_helpers)     \
  X(knn_block)       \
  X(knn_warp)        \
  X(networks)
TEST_MAIN(TEST_LIST)
