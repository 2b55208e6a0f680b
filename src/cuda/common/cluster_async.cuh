/*
 * cluster_async.cuh: pushing small data between the blocks of a thread-block cluster
 * (Hopper) without a cluster barrier's memory fence.
 *
 * Why: `barrier.cluster.arrive` with its default release semantics (what cluster.sync()
 * does) compiles to MEMBAR.ALL.GPU + ERRBAR before the arrive, and ncu's stall sampling on
 * AIR's cluster kernel put ~0.4 us a barrier there (docs/perf-notes.md v0.21). An
 * `st.async` store to another block's shared memory signals that block's mbarrier with
 * the bytes it delivered (complete_tx) and needs no fence: the receiver waits on its own
 * mbarrier until every byte it expects has arrived, then reads them locally.
 *
 * Contract, as the PTX ISA states it:
 * - a block may touch another block's shared memory only once that block runs: every
 *   block initialises its mbarriers, fences the init (cluster_mbar_init_fence), arrives on
 *   the cluster barrier relaxed at its start (cluster_arrive_relaxed), and waits on it
 *   (cluster_wait) before its first remote store;
 * - a block may exit only once nothing will be written into its shared memory any more:
 *   here every block waits for all the bytes it expects before it goes on;
 * - the expected byte count is best set (mbar_expect_tx) right after the init, before any
 *   byte can arrive; where it is known only later, bytes may arrive first: the tx-count
 *   then goes below 0 (its range is +-(2^20 - 1)) and the phase cannot complete before
 *   its one arrival, the expect_tx itself.
 * Addresses are 32-bit shared-window addresses (smem_addr), remote ones from cluster_map.
 */
#ifndef TOPK_CUDA_COMMON_CLUSTER_ASYNC_CUH
#define TOPK_CUDA_COMMON_CLUSTER_ASYNC_CUH

#include <stdint.h>

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

/* This block's shared address a, as block `rank` of the cluster sees the same variable. */
__device__ __forceinline__ unsigned cluster_map(unsigned a, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}

/* One arrival per phase; call from one thread, then cluster_mbar_init_fence. */
__device__ __forceinline__ void mbar_init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void cluster_mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* The phase's one arrival, expecting `bytes` more (from one thread). */
__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

/* Wait until phase `parity` of the local mbarrier completes (acquire at cluster scope:
 * the remote st.async data is visible after it). */
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  const unsigned a = smem_addr(bar);
  unsigned done = 0;
  do {
    asm volatile(
        "{ .reg .pred p;\n"
        "  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "  selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
  } while (!done);
}

/* Store v (4 or 8 bytes) at remote address dst and count its bytes on the remote mbarrier rbar. */
template <typename T>
__device__ __forceinline__ void st_async(unsigned dst, T v, unsigned rbar) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "st.async of 4 or 8 bytes");
  if constexpr (sizeof(T) == 4)
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(dst),
                 "r"((unsigned)v), "r"(rbar)
                 : "memory");
  else
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(dst),
                 "l"((unsigned long long)v), "r"(rbar)
                 : "memory");
}

__device__ __forceinline__ void mbar_complete_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

/* Store v into variable p of block `rank` (p: this block's copy) and count its bytes on that
 * block's mbarrier bar. Across blocks an st.async; in a cluster of one block, where
 * compute-sanitizer rejects DSMEM stores, a shared store, a block fence and a local complete_tx. */
template <typename T>
__device__ __forceinline__ void cluster_send(T* p, unsigned rank, T v, unsigned long long* bar, bool solo) {
  if (solo) {
    *(volatile T*)p = v;
    __threadfence_block();
    mbar_complete_tx(bar, (unsigned)sizeof(T));
  } else {
    st_async<T>(cluster_map(smem_addr(p), rank), v, cluster_map(smem_addr(bar), rank));
  }
}

/*
 * Bulk pushes (the async proxy's copy engine): `bytes` (a multiple of 16, both addresses 16-byte
 * aligned) from this block's shared memory at src to the same offset as dst in block `rank`,
 * counted on that block's mbarrier bar: one mbarrier update for the whole run, where st.async
 * makes one an element (~1.5k st.async into one block took ~3 us, docs/perf-notes.md v0.40).
 * The writers of src call bulk_fence() before the block barrier after which one thread sends;
 * the sender calls bulk_wait_read() before src is rewritten or the block exits.
 */
__device__ __forceinline__ void bulk_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void cluster_bulk_send(const void* dst, unsigned rank, const void* src, unsigned bytes,
                                                  unsigned long long* bar) {
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   cluster_map(smem_addr(dst), rank)),
               "r"(smem_addr(src)), "r"(bytes), "r"(cluster_map(smem_addr(bar), rank))
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }

/* The cluster barrier without a fence (every thread of the block, warp-aligned). */
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }

#endif /* TOPK_CUDA_COMMON_CLUSTER_ASYNC_CUH */
