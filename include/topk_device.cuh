/*
 * topk_device.cuh: top-k selection inside your own CUDA kernel (WarpSelect and
 * BlockSelect of paper 004 sec. 4), for values that live in registers: e.g. k-NN
 * that computes distances and selects the k nearest in the same kernel, never
 * writing the distances to memory. The library's own WarpSelect, BlockSelect and
 * GridSelect run on the same code (topk_device/merge.cuh).
 *
 * Self-contained: needs only the CUDA toolkit (nvcc, C++11), no libtopk and no
 * other topk header; compile for sm_70 or newer (__shfl_sync, __any_sync).
 *
 * ---- Contract ----
 * Elements are (rank key, index) pairs. The rank key is an unsigned integer of
 * KB = 16, 32 or 64 bits where LARGER IS BETTER; the topk_device_key_* helpers
 * below turn values into rank keys with the library's order (floats: -inf < ... <
 * -0 < +0 < ... < +inf < NaN, every NaN the largest; `smallest` complements the
 * key, so the k smallest become the k best). Pass raw rank keys directly if you
 * have your own order. Indices are uint32 in [0, 2^32 - 2] (0xFFFFFFFF marks an
 * empty slot), chosen by you (e.g. the element's position) and distinct: among
 * equal keys the smaller index wins, so results are deterministic and sorted
 * (best first, equal keys by index).
 *
 * Warp level: topk_warp_select<KB, CAP, T> is per-thread state (registers), used
 * by one whole warp: CAP is the queue capacity (a multiple of 32 in 32..2048, >= k;
 * powers of two merge with the fewest shuffles, other multiples use 004's odd-size
 * networks), T the per-lane thread-queue length (1..8; larger pays off for larger
 * CAP: the library's WarpSelect uses 2 for CAP 32, 3 for 64 and 96, 4 up to
 * 256, 8 above, measured on an H100). Registers per thread: about
 * (CAP / 32 + T) x 2 (KB <= 32) or x 3 (KB = 64); beyond ~CAP 1024 with 64-bit
 * keys expect spills.
 *   topk_warp_select_init(s, k)          every lane, same k (1 <= k <= CAP)
 *   topk_warp_select_add(s, key, idx, v) all 32 lanes together (converged, full
 *                                        mask), each passing one element per call;
 *                                        v = false: this lane has none this round
 *   topk_warp_select_finish(s)           all 32 lanes; afterwards the warp holds
 *                                        its best k
 *   topk_warp_select_store(s, keys, idx) all 32 lanes; writes the k results, best
 *                                        first, to keys[0..k) / idx[0..k) (either
 *                                        may be NULL); slots the warp did not fill
 *                                        (fewer than k elements seen) get key 0 and
 *                                        index -1
 * Loops must give every lane of the warp the same number of add calls (iterate
 * over rounds, pass v = false past the end), as in the example below.
 *
 * Block level: every warp of the block runs its own warp select (same KB, CAP, T,
 * k) over its share of the elements and calls finish; then
 *   topk_block_select_merge(s, smem, nwarps)   every thread of the block; contains
 *       __syncthreads(). nwarps = blockDim / 32, a power of two (1..32); smem:
 *       topk_block_select_smem_bytes<KB, CAP>(nwarps) bytes of shared memory,
 *       16-byte aligned, free for the call's duration (reusable afterwards).
 *   Afterwards warp 0 (threads 0..31 in linear order) holds the block's best k:
 *   call topk_warp_select_store from warp 0 only.
 *
 * Example (k nearest of n points to one query, one block per query):
 *   topk_warp_select<32, 128, 4> s;
 *   topk_warp_select_init(s, k);
 *   for (int base = 0; base < n; base += blockDim.x) {      // same trip count for all
 *     const int i = base + threadIdx.x;
 *     const float d = i < n ? distance(query, i) : 0.f;
 *     topk_warp_select_add(s, topk_device_key_f32(d, true), (unsigned)i, i < n);
 *   }
 *   topk_warp_select_finish(s);
 *   topk_block_select_merge(s, smem, blockDim.x / 32);
 *   if (threadIdx.x < 32) topk_warp_select_store(s, (uint32_t*)0, out_idx + blockIdx.x * k);
 * tests/test_device_header.cu is this example, run and checked.
 */
#ifndef TOPK_DEVICE_CUH
#define TOPK_DEVICE_CUH

#include <stdint.h>

#include "topk_device/merge.cuh"

/* ------------------------------------------------------------------ rank keys */

/* Bits of a value as its rank key; the helpers differ only in the dtype's parameters. */
__host__ __device__ __forceinline__ topk_dq_key_params topk_device_key_params_(unsigned long long ones,
                                                                               unsigned long long float_mask,
                                                                               unsigned long long sign_xor,
                                                                               unsigned long long nan_above,
                                                                               bool smallest) {
  topk_dq_key_params kp;
  kp.float_mask = float_mask;
  kp.sign_xor = sign_xor;
  kp.nan_above = nan_above;
  kp.flip = smallest ? ones : 0ull;
  return kp;
}

__device__ __forceinline__ uint32_t topk_device_key_f32(float v, bool smallest) {
  return topk_dq_rank_key<uint32_t>(
      __float_as_uint(v), topk_device_key_params_(0xFFFFFFFFull, 0xFFFFFFFFull, 0x80000000ull, 0x7F800000ull, smallest));
}
__device__ __forceinline__ uint64_t topk_device_key_f64(double v, bool smallest) {
  return topk_dq_rank_key<uint64_t>((uint64_t)__double_as_longlong(v),
                                    topk_device_key_params_(~0ull, ~0ull, 0x8000000000000000ull,
                                                            0x7FF0000000000000ull, smallest));
}
/* IEEE half and bfloat16, given as their 16 bits (e.g. __half_as_ushort). */
__device__ __forceinline__ uint16_t topk_device_key_f16_bits(uint16_t bits, bool smallest) {
  return topk_dq_rank_key<uint16_t>(bits, topk_device_key_params_(0xFFFFull, 0xFFFFull, 0x8000ull, 0x7C00ull, smallest));
}
__device__ __forceinline__ uint16_t topk_device_key_bf16_bits(uint16_t bits, bool smallest) {
  return topk_dq_rank_key<uint16_t>(bits, topk_device_key_params_(0xFFFFull, 0xFFFFull, 0x8000ull, 0x7F80ull, smallest));
}
__device__ __forceinline__ uint32_t topk_device_key_i32(int32_t v, bool smallest) {
  return topk_dq_rank_key<uint32_t>((uint32_t)v,
                                    topk_device_key_params_(0xFFFFFFFFull, 0ull, 0x80000000ull, ~0ull, smallest));
}
__device__ __forceinline__ uint32_t topk_device_key_u32(uint32_t v, bool smallest) {
  return smallest ? ~v : v;
}
__device__ __forceinline__ uint64_t topk_device_key_i64(int64_t v, bool smallest) {
  return topk_dq_rank_key<uint64_t>((uint64_t)v,
                                    topk_device_key_params_(~0ull, 0ull, 0x8000000000000000ull, ~0ull, smallest));
}
__device__ __forceinline__ uint64_t topk_device_key_u64(uint64_t v, bool smallest) {
  return smallest ? ~v : v;
}

/* ------------------------------------------------------------------ warp level */

template <int KB, int CAP, int T> struct topk_warp_select_of_ {
  static_assert(CAP % 32 == 0 && CAP >= 32 && CAP <= 2048, "CAP: a multiple of 32 in 32..2048");
  typedef topk_dq_warp<KB, CAP / 32, T> type;
};
template <int KB, int CAP, int T>
using topk_warp_select = typename topk_warp_select_of_<KB, CAP, T>::type;

__device__ __forceinline__ int topk_device_lane_() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return (int)lane;
}

template <int KB, int R, int T>
__device__ __forceinline__ void topk_warp_select_init(topk_dq_warp<KB, R, T>& s, int k) {
  static_assert(KB == 16 || KB == 32 || KB == 64, "key width: 16, 32 or 64 bits");
  static_assert(R >= 1 && R <= 64, "CAP: a multiple of 32 in 32..2048");
  static_assert(T >= 1 && T <= 8, "T: 1..8");
  topk_dq_warp_init<KB, R, T>(s, k);
}

template <int KB, int R, int T>
__device__ __forceinline__ void topk_warp_select_add(topk_dq_warp<KB, R, T>& s, unsigned long long key,
                                                     uint32_t index, bool valid) {
  topk_dq_warp_add<KB, R, T>(s, topk_dq_ops<KB>::make(key, index), valid, topk_device_lane_());
}

template <int KB, int R, int T>
__device__ __forceinline__ void topk_warp_select_finish(topk_dq_warp<KB, R, T>& s) {
  topk_dq_warp_flush<KB, R, T>(s, topk_device_lane_());
}

/* KeyT: an unsigned integer type of at least KB bits; IdxT: int32_t or int64_t. */
template <int KB, int R, int T, typename KeyT, typename IdxT>
__device__ __forceinline__ void topk_warp_select_store(const topk_dq_warp<KB, R, T>& s, KeyT* keys, IdxT* indices) {
  const int lane = topk_device_lane_();
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int e = r * 32 + lane;
    if (e < s.k) {
      const bool empty = topk_dq_is_sentinel<KB>(s.w[r]);
      if (keys) keys[e] = empty ? (KeyT)0 : (KeyT)topk_dq_ops<KB>::key(s.w[r]);
      if (indices) indices[e] = empty ? (IdxT)-1 : (IdxT)topk_dq_ops<KB>::index(s.w[r]);
    }
  }
}

/* ------------------------------------------------------------------ block level */

template <int KB, int CAP>
__host__ __device__ constexpr size_t topk_block_select_smem_bytes(int nwarps) {
  return topk_dq_block_merge_bytes<KB, CAP / 32>(nwarps);
}

template <int KB, int R, int T>
__device__ __forceinline__ void topk_block_select_merge(topk_dq_warp<KB, R, T>& s, void* smem, int nwarps) {
  const int tid = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
  topk_dq_block_merge<KB, R>(s.w, (topk_dq_pair<KB>*)smem, tid >> 5, nwarps, tid & 31);
}

#endif /* TOPK_DEVICE_CUH */
