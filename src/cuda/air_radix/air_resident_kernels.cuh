/*
 * air_resident_kernels.cuh: AIR Top-K's RESIDENT path, a whole selection of a few
 * rows in one cooperative launch with every element read once into registers
 * (issue: LLM-sampling latency, 1..16 rows of 32000..262144 and more).
 *
 * Why another one-launch path: the FUSED kernel re-reads its tiles every pass and
 * merges a 2048-bin histogram per pass through global memory (a chain of round trips
 * per pass, docs/perf-notes.md v0.2/v0.7); the CLUSTER kernel reads a row with at most
 * 8 SMs and pays ~2.5 us of block barriers per pass. Here a row gets as many blocks as
 * make its slices small (up to the GPU's resident blocks), keeps its slice in
 * registers, and runs only as many cross-block passes as it takes to leave at most
 * AIR_RES_CAP candidates (usually one: paper 003 sec. 2.3's first 11-bit digit);
 * those go to one buffer, and the last block of the row to finish resolves them in
 * shared memory (the remaining key bits, then index bits for ties).
 *
 * Grid: x = G blocks of a row, y = rows; all blocks resident (cooperative launch).
 *   0. Every block loads its slice (16-byte vectors; the row's unaligned head goes to
 *      block 0, its tail to block G-1), and the grid zeroes the rows' histograms and
 *      counters; one grid-wide sync (the only one: the workspace holds anything).
 *   D. The delegate start (D.del_q > 0: k <= 1024, the host's res_delegates), in the
 *      spirit of Dr. Top-k's delegates (paper 004 sec. 3) but exact: each thread's largest
 *      key is a delegate; each block publishes a bound that q of its delegates reach
 *      (air_res_block_bound) before the grid-wide sync, which is its row barrier too
 *      (1.03-1.11x on one row of 2^20, docs/perf-notes.md v0.29); every block takes the threshold thr, a
 *      lower bound on the j-th largest bound (air_res_jth_largest), so that the row holds
 *      >= q x j >= k keys >= thr. Every key >= thr goes to the candidate buffer (~1.1-2.5k
 *      on normal and uniform rows: a digit pass of the radix would leave n/8 on uniform
 *      f32, and nothing useful on radix-adversarial rows); after a second row barrier the
 *      blocks rank them (air_res_rank_finish), or the last block finishes them by radix
 *      (air_res_finish). Over AIR_RES_CAP candidates (heavy ties, few distinct values):
 *      with fewer than k keys > thr, thr is the k-th key, the keys > thr are results and
 *      the lowest-indexed rest of the keys == thr follow (air_res_take_ties, with the
 *      blocks' counts of keys == thr published at the second barrier); with k..CAP keys >
 *      thr, those are the candidates (one more row barrier). Else the passes below run as
 *      if the start had not been made.
 *   1. Pass q (digits of 11 bits from the top; 32-bit keys 11+11+10, 16-bit 11+5):
 *      shared histogram of the digit of every element still matching the prefix,
 *      merged into the row's histogram q with atomics; a per-row barrier; every block
 *      reads the row histogram and makes the same choice (air_choose). Elements whose
 *      digit beats the chosen one are results, written at once (warp-aggregated slots).
 *   2. Then, by the chosen bin's count c and the results still needed r:
 *      c == r   every element of the bin is a result (early stop, sec. 3.3): written;
 *      c <= CAP the bin's elements go to the row's candidate buffer. Few for the row's
 *               blocks (air_res_rank_fits): after a row barrier every block ranks its
 *               share of them against all (air_res_rank_finish). Else the last block
 *               of the row (arrival counter) takes them into shared memory and ends
 *               the selection there by radix passes (air_res_finish);
 *      else     the next pass, or, once every key bit is known (c elements share the
 *               k-th key), the lowest-indexed r of them by one per-row barrier and a
 *               prefix of the blocks' counts (blocks hold ascending index ranges).
 *
 * Ties are broken by index (the deterministic contract): the finish runs its last
 * digits over ~index; the tie path takes the lowest indices in index order.
 * Unsorted output slots come from atomics, so the order varies from run to run (the
 * set does not). Sorted output: results are sort keys (air_emit), sorted afterwards.
 */
#ifndef TOPK_CUDA_AIR_RESIDENT_KERNELS_CUH
#define TOPK_CUDA_AIR_RESIDENT_KERNELS_CUH

#include "air_radix_kernels.cuh"

enum {
  AIR_RES_THREADS = AIR_THREADS, /* air_choose and air_block_excl_scan are written for this count */
  AIR_RES_VECS = 8,              /* 16-byte vectors a thread holds: 32 f32 or 64 16-bit elements */
  AIR_RES_CAP = 4096,            /* candidates the finish takes into shared memory */
  AIR_RES_DIGIT = 11,
  AIR_RES_BINS = 1 << AIR_RES_DIGIT,
  AIR_RES_MAX_PASSES = 3,        /* key passes of a 32-bit key */
  AIR_RES_MAX_BLOCKS = 1024,     /* blocks per row at most (the per-block count slots) */
  AIR_RES_RANK_ITERS = 384,      /* rank finish: compares a thread at most (8 in flight: ~1.5 us) */
  AIR_RES_DEL_MAX_BLOCKS = 512,  /* the delegate start's blocks per row at most (16 bounds a lane in
                                  * air_res_jth_largest; 32 cost the kernel registers) */
  AIR_RES_DEL_WARP_Q = 16        /* a block's bound from its warps' top thread maxima for q up to this */
};

/* Per-row counters, zeroed by the kernel before its grid-wide sync. */
struct air_res_row {
  unsigned arrive;          /* blocks arrived at the row's barriers, over all of them */
  unsigned done;            /* blocks finished with the gather; the last one runs the finish */
  unsigned long long slots; /* next free output slot (low word: results written during the passes,
                             * < k so it never carries) and candidate-buffer slot (high word):
                             * one atomic claims both */
  unsigned long long dslots; /* the delegate start's candidates: keys >= its threshold (low word), keys
                             * above it (high word) */
  unsigned long long gslots; /* the delegate start's second candidates, keys above its threshold */
};

/* The workspace parts and the grid of a RESIDENT launch. */
struct air_res_desc {
  unsigned* hist;        /* [rows][AIR_RES_MAX_PASSES][AIR_RES_BINS] */
  air_res_row* ctrl;     /* [rows] */
  void* cand_raw;        /* [rows][AIR_RES_CAP] raw elements */
  unsigned* cand_idx;    /* [rows][AIR_RES_CAP] */
  unsigned* blk_cnt;     /* [rows][AIR_RES_MAX_BLOCKS]: per-block words. The delegate start: bounds in
                          * [0, G), counts of keys == thr from AIR_RES_DEL_MAX_BLOCKS on; the
                          * tie path after the passes: counts in [0, G) */
  int stamps;            /* TOPK_AIR_RES_STAMPS=1: the finishing block printf's its phase times (measurement;
                          * builds configured with -DTOPK_AIR_STAMPS=ON only) */
  int rank;              /* the rank finish where it fits (TOPK_AIR_RES_RANK=0: never; measurement, tests) */
  unsigned del_q, del_j; /* the delegate start (0: off): each block vouches for del_q keys >= its
                          * bound, the threshold is a lower bound on the del_j-th largest bound
                          * (del_q x del_j >= k) */
};

static_assert(2 * AIR_RES_DEL_MAX_BLOCKS <= AIR_RES_MAX_BLOCKS, "the start's two per-block arrays fit blk_cnt");

#define AIR_RES_STAMP(i) \
  if (TOPK_AIR_STAMPS && D.stamps && threadIdx.x == 0) ts[i] = air_now()
/* printf of the phase times of one block (measurement only) */
__device__ __noinline__ void air_res_print(const unsigned long long* ts, int last, int64_t n, int64_t k, unsigned g,
                                           unsigned rows) {
  printf("RESSTAMP n=%lld k=%lld rows=%u G=%u", (long long)n, (long long)k, rows, g);
  for (int i = 1; i <= last; ++i) printf(" %d:%llu", i, ts[i] > ts[0] ? ts[i] - ts[0] : 0ull);
  printf("\n");
}

/* Element e of a 16-byte vector of RawT (e is a constant after unrolling). */
template <typename RawT>
__device__ __forceinline__ RawT air_res_lane(const uint4& w, int e) {
  if constexpr (sizeof(RawT) == 4) {
    return (RawT)(e == 0 ? w.x : e == 1 ? w.y : e == 2 ? w.z : w.w);
  } else {
    const unsigned word = (e >> 1) == 0 ? w.x : (e >> 1) == 1 ? w.y : (e >> 1) == 2 ? w.z : w.w;
    return (RawT)((e & 1) ? word >> 16 : word & 0xffffu);
  }
}

/* Whether the kernel holds its slice as rank keys: 32-bit elements are converted once after the
 * load (five instructions an f32 element that every later pass would repeat: 1.01-1.04x on one
 * f32 row of 2^20); 16-bit ones stay raw (as keys, 0.97-0.99x: more spills at 128 registers),
 * docs/perf-notes.md v0.28. Results get their raw bits back from the key (topk_raw_of_key). */
template <topk_dtype DT> __device__ __forceinline__ constexpr bool air_res_holds_keys() {
  return sizeof(typename topk_dtype_traits<DT>::raw_t) == 4;
}

/* The rank keys of a 16-byte vector of 32-bit elements, in the same lanes. */
template <topk_dtype DT>
__device__ __forceinline__ uint4 air_res_keys_of(const uint4& q, bool sm) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  static_assert(sizeof(RawT) == 4, "32-bit elements");
  return make_uint4((unsigned)topk_to_rank_key<DT>((RawT)q.x, sm), (unsigned)topk_to_rank_key<DT>((RawT)q.y, sm),
                    (unsigned)topk_to_rank_key<DT>((RawT)q.z, sm), (unsigned)topk_to_rank_key<DT>((RawT)q.w, sm));
}

/*
 * The rank key of held element e of vector j; where j and e are not constants, selects, not an
 * indexed array (which would put the slice in local memory). w holds rank keys for 32-bit
 * elements, raw bits for 16-bit ones (air_res_holds_keys).
 */
template <topk_dtype DT>
__device__ __forceinline__ unsigned air_res_held_key(const uint4 (&w)[AIR_RES_VECS], int j, int e, bool sm) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  uint4 v = w[0];
#pragma unroll
  for (int u = 1; u < AIR_RES_VECS; ++u)
    if (j == u) v = w[u];
  if constexpr (air_res_holds_keys<DT>())
    return (unsigned)air_res_lane<typename topk_dtype_traits<DT>::key_t>(v, e);
  else
    return (unsigned)topk_to_rank_key<DT>(air_res_lane<RawT>(v, e), sm);
}

/*
 * Adds 1 to a row counter with release and acquire semantics at GPU scope, returning the
 * old value. Called by thread 0 after a block barrier: the release (cumulative through the
 * barrier) publishes the whole block's earlier global writes, the acquire makes the writes
 * of the blocks that arrived before visible to what the block reads next. One atomic
 * instead of a fence and an atomic.
 */
__device__ __forceinline__ unsigned air_res_arrive(unsigned* counter) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
  return old;
}

/*
 * Waits until `target` blocks have arrived at the row's barrier, counting this one.
 * The blocks of a row are resident (cooperative launch), so spinning is safe. The
 * arrival releases the block's earlier global writes (histogram atomics, results,
 * counts); the acquire load orders what the block reads next after the other
 * blocks' arrivals.
 */
__device__ __forceinline__ void air_res_row_barrier(unsigned* arrive, unsigned target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    air_res_arrive(arrive);
    unsigned v;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(arrive) : "memory");
    } while (v < target);
  }
  __syncthreads();
}

/*
 * As air_warp_claim, but one atomic for the whole block (hundreds of blocks' warps on one
 * counter queue at its L2 slice): the warps' totals meet in s_w (AIR_WARPS + 1 words), thread 0
 * claims the block's run. Every thread of the block must call it; *block_total gets the block's
 * sum in every thread.
 */
__device__ __forceinline__ unsigned long long air_res_block_slots(unsigned long long cnt, unsigned long long* counter,
                                                                  unsigned long long* s_w,
                                                                  unsigned long long* block_total) {
  const unsigned warp = threadIdx.x >> 5;
  const unsigned long long incl = air_warp_incl_sum(cnt);
  if ((threadIdx.x & 31) == 31) s_w[warp] = incl;
  __syncthreads();
  unsigned long long before = 0, total = 0;
#pragma unroll
  for (unsigned u = 0; u < AIR_WARPS; ++u) {
    const unsigned long long x = s_w[u];
    before += u < warp ? x : 0ull;
    total += x;
  }
  if (threadIdx.x == 0) s_w[AIR_WARPS] = total ? atomicAdd(counter, total) : 0ull;
  __syncthreads();
  *block_total = total;
  return s_w[AIR_WARPS] + before + incl - cnt;
}

/* The digit of `width` bits below `level` known bits of a KB-bit field. */
template <int KB>
__device__ __forceinline__ unsigned air_res_digit(unsigned field, int level, int width) {
  return (field >> (KB - level - width)) & ((1u << width) - 1u);
}

/*
 * The row's c <= AIR_RES_CAP buffered candidates into registers, PER = AIR_RES_CAP / threads
 * a thread (candidate threadIdx.x + q x threads in slot q): every load issued before any is
 * used (a strided loop of loads and shared stores waits one L2 round trip per round). Slots
 * past c are skipped by a block-uniform branch, not predicated: this code runs once, cold in
 * the instruction cache of every SM at once, so what a small c executes is kept short (the
 * users' store loops do the same).
 */
template <typename RawT>
__device__ __forceinline__ void air_res_fetch_cands(const air_res_desc& D, int64_t row, unsigned c,
                                                    RawT (&rv)[AIR_RES_CAP / AIR_RES_THREADS],
                                                    unsigned (&iv)[AIR_RES_CAP / AIR_RES_THREADS]) {
  const RawT* craw = (const RawT*)D.cand_raw + row * AIR_RES_CAP;
  const unsigned* cidx = D.cand_idx + row * AIR_RES_CAP;
#pragma unroll
  for (int q = 0; q < AIR_RES_CAP / AIR_RES_THREADS; ++q) {
    if ((unsigned)q * AIR_RES_THREADS >= c) break;
    const unsigned i = threadIdx.x + q * AIR_RES_THREADS;
    if (i < c) {
      rv[q] = __ldcg(craw + i);
      iv[q] = __ldcg(cidx + i);
    }
  }
}

/*
 * The finish, in the last block of a row: c <= AIR_RES_CAP candidates (every element
 * whose key matches the `level` known leading bits) in the row's buffer, r of them
 * needed. Radix passes in shared memory over the rest of the key, then over ~index
 * (ib bits) while ties remain; results go to slots k - r .. k - 1.
 */
template <topk_dtype DT>
__device__ void air_res_finish(const air_params& P, const air_res_desc& D, int64_t row, unsigned c, unsigned r,
                               int level, unsigned long long* s_fin, unsigned* s_hist, unsigned* s_warp,
                               air_choice<unsigned>* s_choice) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  constexpr int PER = AIR_RES_CAP / AIR_RES_THREADS;
  RawT* s_raw = (RawT*)s_fin;                               /* [AIR_RES_CAP] */
  unsigned* s_idx = (unsigned*)s_fin + AIR_RES_CAP;         /* [AIR_RES_CAP] */
  __shared__ unsigned s_out;
  {
    RawT rv[PER];
    unsigned iv[PER];
    air_res_fetch_cands<RawT>(D, row, c, rv, iv);
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      if ((unsigned)q * AIR_RES_THREADS >= c) break;
      const unsigned i = threadIdx.x + q * AIR_RES_THREADS;
      if (i < c) {
        s_raw[i] = rv[q];
        s_idx[i] = iv[q];
      }
    }
  }
  if (threadIdx.x == 0) s_out = 0;
  unsigned alive = 0; /* bit q: candidate threadIdx.x + q * threads is still a candidate */
#pragma unroll
  for (int q = 0; q < PER; ++q)
    if (threadIdx.x + q * AIR_RES_THREADS < c) alive |= 1u << q;
  const unsigned slot0 = (unsigned)P.k - r;
  const unsigned imask = P.ib >= 32 ? 0xffffffffu : (1u << P.ib) - 1u;
  int li = 0; /* known bits of ~index */
  __syncthreads();
  for (;;) {
    const bool on_key = level < KB;
    const int width = on_key ? (KB - level < AIR_RES_DIGIT ? KB - level : AIR_RES_DIGIT)
                             : (P.ib - li < AIR_RES_DIGIT ? P.ib - li : AIR_RES_DIGIT);
    const int nbins = 1 << width;
    for (int b = threadIdx.x; b < nbins; b += AIR_RES_THREADS) s_hist[b] = 0;
    __syncthreads();
    unsigned dig[PER];
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      dig[q] = 0;
      if (alive >> q & 1u) {
        const int i = threadIdx.x + q * AIR_RES_THREADS;
        dig[q] = on_key ? air_res_digit<KB>((unsigned)topk_to_rank_key<DT>(s_raw[i], P.smallest != 0), level, width)
                        : ((~s_idx[i] & imask) >> (P.ib - li - width)) & ((1u << width) - 1u);
        atomicAdd(&s_hist[dig[q]], 1u);
      }
    }
    __syncthreads();
    air_choose<unsigned>(s_hist, nbins, r, s_warp, s_choice);
    const unsigned d = (unsigned)s_choice->digit;
    const unsigned cnt = s_choice->count;
    r -= s_choice->greater;
    const bool all = cnt == r; /* the same in every thread */
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      if (!(alive >> q & 1u)) continue;
      if (dig[q] > d || (all && dig[q] == d)) {
        const int i = threadIdx.x + q * AIR_RES_THREADS;
        const unsigned s = slot0 + atomicAdd(&s_out, 1u);
        if (s < (unsigned)P.k)
          air_emit(P, row, s, s_raw[i], topk_to_rank_key<DT>(s_raw[i], P.smallest != 0), s_idx[i]);
      }
      if (dig[q] != d || all) alive &= ~(1u << q);
    }
    if (all) return;
    if (on_key) level += width; else li += width;
    __syncthreads(); /* s_hist and s_choice are reused */
  }
}

/*
 * The finish when the candidates are few for the row's blocks (air_res_rank_fits):
 * every block of the row, after a row barrier, ranks its share of the c candidates
 * (positions b, b + G, ...: mb of them) against all of them by composite and writes
 * those ranked below r to slot k - r + rank. One compare loop instead of the last
 * block's radix passes (two or more block-level choices, ~2 us each, docs/perf-notes.md
 * v0.16); composites are distinct, so exactly r are written, ties to the lowest indices.
 *
 * Each own candidate gets L threads (the largest power of two with mb x L <= the block),
 * thread t ranks candidate t / L over positions t % L, t % L + L, ...; the L counts meet
 * by shuffles (L <= 32) or shuffles and a shared sum.
 */
__host__ __device__ __forceinline__ unsigned air_res_rank_lanes(unsigned mb) {
  unsigned L = AIR_RES_THREADS;
  while (L > 1 && mb * L > AIR_RES_THREADS) L >>= 1;
  return L;
}
__host__ __device__ __forceinline__ bool air_res_rank_fits(unsigned c, unsigned G) {
  const unsigned mb = (c + G - 1) / G, L = air_res_rank_lanes(mb);
  return mb <= AIR_RES_THREADS && (c + L - 1) / L <= AIR_RES_RANK_ITERS;
}

template <topk_dtype DT>
__device__ void air_res_rank_finish(const air_params& P, const air_res_desc& D, int64_t row, unsigned c, unsigned r,
                                    unsigned b, unsigned G, unsigned long long* s_comp, unsigned* s_cnt,
                                    unsigned long long* ts) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  const unsigned mb = b < c ? (c - b + G - 1) / G : 0;
  const unsigned L = air_res_rank_lanes(mb);
  const unsigned m = threadIdx.x / L, sub = threadIdx.x % L;
  const bool act = m < mb;
  const unsigned i = b + G * m; /* the candidate this thread ranks (act) */
  RawT raw = 0;
  /* the raw bits for the write (topk_from_rank_key cannot give back a NaN's payload) */
  if (act && sub == 0) raw = __ldcg((const RawT*)D.cand_raw + row * AIR_RES_CAP + i);
  {
    constexpr int PER = AIR_RES_CAP / AIR_RES_THREADS;
    RawT rv[PER];
    unsigned iv[PER];
    air_res_fetch_cands<RawT>(D, row, c, rv, iv);
#pragma unroll
    for (int q = 0; q < PER; ++q) { /* composites: larger is better, all distinct */
      if ((unsigned)q * AIR_RES_THREADS >= c) break;
      const unsigned j = threadIdx.x + q * AIR_RES_THREADS;
      if (j < c) s_comp[j] = (unsigned long long)(unsigned)topk_to_rank_key<DT>(rv[q], P.smallest != 0) << 32 | ~iv[q];
    }
  }
  if (threadIdx.x < mb) s_cnt[threadIdx.x] = 0;
  __syncthreads();
  if (TOPK_AIR_STAMPS && D.stamps && threadIdx.x == 0) ts[9] = air_now(); /* candidates fetched (measurement) */
  const unsigned long long mine = act ? s_comp[i] : ~0ull;
  /* 8 loads in flight a thread: 8 warps a block do not hide a shared load's latency (with
   * one load an iteration the finish took 1.3-2.8 us longer at k = 1024, perf-notes v0.17) */
  unsigned cnt = 0;
  const unsigned iters = act && sub < c ? (c - sub + L - 1) / L : 0;
  unsigned q = 0;
  for (; q + 8 <= iters; q += 8) {
    unsigned long long x[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) x[u] = s_comp[sub + (q + u) * L];
#pragma unroll
    for (int u = 0; u < 8; ++u) cnt += x[u] > mine;
  }
  for (; q < iters; ++q) cnt += s_comp[sub + q * L] > mine;
  if (TOPK_AIR_STAMPS && D.stamps && threadIdx.x == 0) ts[10] = air_now(); /* thread 0's compares done (measurement) */
  for (unsigned o = (L < 32 ? L : 32) / 2; o >= 1; o >>= 1) cnt += __shfl_xor_sync(0xffffffffu, cnt, o);
  if (L > 32) {
    if (act && (threadIdx.x & 31) == 0) atomicAdd(&s_cnt[m], cnt);
    __syncthreads();
    if (act && sub == 0) cnt = s_cnt[m];
  }
  if (act && sub == 0 && cnt < r)
    air_emit(P, row, (int64_t)P.k - r + cnt, raw, (KeyT)(mine >> 32), ~(unsigned)mine);
}

/*
 * The tie path's take: of the elements whose key is key_full, the row's r lowest-indexed go to
 * slots slot0 + (their rank in index order). `before_cnt` holds the tie counts of the row's
 * blocks, of which those of blocks 0 .. b-1 (which hold the lower indices) are summed here.
 * With emit_gt, keys > key_full are written too, from slot gt_slot on (the delegate start's
 * tie path, whose keys above its threshold are results). One pass over the held elements and
 * one block barrier: a thread's ties are counted per index-order round (the head scalar, the
 * AIR_RES_VECS vector rounds, the tail scalar) in 16-bit fields, two rounds a word, which one
 * warp scan and the warps' totals turn into ranks (was: a block scan a round and a pass a
 * round, docs/perf-notes.md v0.28). s_tmp needs AIR_WARPS x 6 words.
 */
template <topk_dtype DT>
__device__ void air_res_take_ties(const air_params& P, int64_t row, const typename topk_dtype_traits<DT>::raw_t* in_row,
                                  const uint4 (&w)[AIR_RES_VECS], int nvt, unsigned skey, bool has_s, bool s_first,
                                  int64_t v0idx, int64_t sidx, unsigned key_full, unsigned r, unsigned slot0,
                                  const unsigned* before_cnt, unsigned b, bool emit_gt, unsigned gt_slot,
                                  unsigned* s_tmp) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int V = 16 / (int)sizeof(RawT);
  constexpr int NR = AIR_RES_VECS + 2; /* rounds in index order: head scalar, vectors, tail scalar */
  constexpr int NW = NR / 2;           /* words of two 16-bit counts (<= 8 x 32 a warp, 2048 a block) */
  static_assert(V * AIR_RES_VECS <= 64 && NR % 2 == 0, "a thread's tie flags fit one 64-bit word");
  const bool sm = P.smallest != 0;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  /* ties of the rounds before this block's */
  unsigned before = 0;
  for (unsigned i = threadIdx.x; i < b; i += AIR_RES_THREADS) before += __ldcg(before_cnt + i);
  before = __reduce_add_sync(0xffffffffu, before);
  /* flags: bit j x V + e for element e of vector round j; sf for the scalar */
  unsigned long long fl = 0;
  bool sf = false;
#pragma unroll
  for (int j = 0; j < AIR_RES_VECS; ++j) {
    if (j < nvt) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const unsigned key = air_res_held_key<DT>(w, j, e, sm);
        if (key == key_full) {
          fl |= 1ull << (j * V + e);
        } else if (emit_gt && key > key_full) {
          const unsigned idx = (unsigned)(v0idx + (int64_t)j * AIR_RES_THREADS * V + e);
          air_emit(P, row, gt_slot++, topk_raw_of_key<DT>((KeyT)key, sm, in_row, idx), (KeyT)key, idx);
        }
      }
    }
  }
  if (has_s) {
    sf = skey == key_full;
    if (emit_gt && skey > key_full)
      air_emit(P, row, gt_slot, topk_raw_of_key<DT>((KeyT)skey, sm, in_row, sidx), (KeyT)skey, (unsigned)sidx);
  }
  /* per-round counts, packed; round 0 is the head scalar, NR - 1 the tail scalar */
  unsigned excl[NW]; /* the lanes before this one in the warp, per round */
#pragma unroll
  for (int i = 0; i < NW; ++i) {
    unsigned c2[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int rd = 2 * i + h;
      c2[h] = rd == 0 ? (unsigned)(sf && s_first)
              : rd == NR - 1 ? (unsigned)(sf && !s_first)
                             : (unsigned)__popcll((fl >> ((rd - 1) * V)) & ((1ull << V) - 1ull));
    }
    const unsigned cw = c2[0] | c2[1] << 16;
    const unsigned incl = air_warp_incl_sum(cw);
    excl[i] = incl - cw;
    if (lane == 31) s_tmp[warp * NW + i] = incl;
  }
  if (lane == 0) s_tmp[AIR_WARPS * NW + warp] = before;
  __syncthreads();
  before = 0;
#pragma unroll
  for (int u = 0; u < AIR_WARPS; ++u) before += s_tmp[AIR_WARPS * NW + u];
  if (before >= r) return; /* the same in every thread */
  /* Round by round in index order: the rank of the thread's first tie in a round is the ties of
   * the earlier rounds of the row, then those of earlier warps and earlier lanes in this round. */
  unsigned run = before;
#pragma unroll
  for (int i = 0; i < NW; ++i) {
    unsigned wb = 0, tot = 0;
#pragma unroll
    for (int u = 0; u < AIR_WARPS; ++u) {
      const unsigned x = s_tmp[u * NW + i];
      wb += (unsigned)u < warp ? x : 0u;
      tot += x;
    }
    const unsigned mine = wb + excl[i];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int rd = 2 * i + h;
      unsigned rk = run + (h ? mine >> 16 : mine & 0xffffu);
      run += h ? tot >> 16 : tot & 0xffffu;
      if (rd == 0 || rd == NR - 1) {
        if (sf && s_first == (rd == 0) && rk < r)
          air_emit(P, row, slot0 + rk, topk_raw_of_key<DT>((KeyT)skey, sm, in_row, sidx), (KeyT)skey, (unsigned)sidx);
        continue;
      }
      const int j = rd - 1;
      unsigned m = (unsigned)((fl >> (j * V)) & ((1ull << V) - 1ull));
      while (m && rk < r) {
        const int e = __ffs(m) - 1;
        m &= m - 1;
        const KeyT key = (KeyT)air_res_held_key<DT>(w, j, e, sm); /* e is not a constant here */
        const unsigned idx = (unsigned)(v0idx + (int64_t)j * AIR_RES_THREADS * V + e);
        air_emit(P, row, slot0 + rk, topk_raw_of_key<DT>(key, sm, in_row, idx), key, idx);
        ++rk;
      }
    }
  }
}

/*
 * A lower bound x on the j-th largest of m values (1 <= j <= m <= AIR_RES_THREADS x PER, m <
 * 1024) with at most j + j / 4 values >= x (or the exact j-th), in every thread of the block;
 * thread t holds v[i] = value t + AIR_RES_THREADS x i (beyond m: ignored). x is built from the
 * top below the bits every value shares, AIR_RES_JTH_BITS bits a round: every thread counts its
 * values >= x | (p << lo) for the 2^bits - 1 nonzero patterns p at once (10-bit fields, three a
 * word: three REDUX sums a warp), the warps' sums meet in shared memory, and every thread takes
 * the largest p that leaves >= j values; it stops once <= j + j / 4 values are >= x (any x with
 * >= j values above it serves the delegate start). The one-warp bisection it replaces took
 * ~0.15 us a bit (stamps: 25 bits took 4.2 us; a fixed 8 bits left bounds far too low where one
 * outlier, a negative thread maximum of normal data, sets the top differing bit).
 * s_w needs AIR_RES_JTH_WORDS words; every thread must call it.
 */
enum {
  AIR_RES_JTH_BITS = 3,                    /* 7 patterns a round, in three words of 10-bit counts */
  AIR_RES_JTH_WORDS = 2 * AIR_WARPS + 2 * 3 * AIR_WARPS
};
static_assert(AIR_RES_DEL_MAX_BLOCKS < 1024 && AIR_RES_THREADS < 1024, "counts fit 10-bit fields");
template <int PER>
__device__ __forceinline__ unsigned air_res_block_jth(const unsigned (&v)[PER], unsigned m, unsigned j,
                                                      unsigned* s_w) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned a = 0xffffffffu, o = 0;
#pragma unroll
  for (int i = 0; i < PER; ++i)
    if (threadIdx.x + AIR_RES_THREADS * (unsigned)i < m) {
      a &= v[i];
      o |= v[i];
    }
  a = __reduce_and_sync(0xffffffffu, a);
  o = __reduce_or_sync(0xffffffffu, o);
  if (lane == 0) {
    s_w[warp] = a;
    s_w[AIR_WARPS + warp] = o;
  }
  __syncthreads();
#pragma unroll
  for (int u = 0; u < AIR_WARPS; ++u) {
    a &= s_w[u];
    o |= s_w[AIR_WARPS + u];
  }
  const unsigned diff = a ^ o;
  if (diff == 0) return a; /* all equal (the same in every thread) */
  const int top = 31 - __clz(diff);
  unsigned x = a & ~((2u << top) - 1u); /* the shared bits above the highest differing one */
  const unsigned enough = j + j / 4;
  unsigned above = m; /* values >= x */
  for (int bit = top, round = 0; bit >= 0 && above > enough; bit -= AIR_RES_JTH_BITS, ++round) {
    const int nb = bit + 1 < AIR_RES_JTH_BITS ? bit + 1 : AIR_RES_JTH_BITS;
    const int lo = bit + 1 - nb;
    unsigned c[3] = {0, 0, 0}; /* pattern p in word (p - 1) / 3, field (p - 1) % 3 */
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      if (threadIdx.x + AIR_RES_THREADS * (unsigned)i < m) {
#pragma unroll
        for (int p = 1; p < (1 << AIR_RES_JTH_BITS); ++p)
          c[(p - 1) / 3] += (unsigned)(p < (1 << nb) && v[i] >= (x | (unsigned)p << lo)) << (10 * ((p - 1) % 3));
      }
    }
    unsigned* cw = s_w + 2 * AIR_WARPS + (round & 1) * 3 * AIR_WARPS; /* two sets: one barrier a round */
#pragma unroll
    for (int q = 0; q < 3; ++q) {
      const unsigned t = __reduce_add_sync(0xffffffffu, c[q]);
      if (lane == 0) cw[q * AIR_WARPS + warp] = t;
    }
    __syncthreads();
    unsigned tot[3] = {0, 0, 0};
#pragma unroll
    for (int q = 0; q < 3; ++q)
#pragma unroll
      for (int u = 0; u < AIR_WARPS; ++u) tot[q] += cw[q * AIR_WARPS + u];
    /* counts fall as p grows: the largest p with >= j values */
    unsigned best = 0, best_c = above;
#pragma unroll
    for (int p = (1 << AIR_RES_JTH_BITS) - 1; p >= 1; --p) {
      const unsigned cp = (tot[(p - 1) / 3] >> (10 * ((p - 1) % 3))) & 1023u;
      if (p < (1 << nb) && best == 0 && cp >= j) {
        best = (unsigned)p;
        best_c = cp;
      }
    }
    x |= best << lo;
    above = best_c;
  }
  return x;
}

/*
 * The delegate start's bound for one block: thr_b such that at least q (<= AIR_RES_THREADS)
 * of the block's elements, maxima of distinct threads, are >= thr_b. q = 1: the block's
 * largest key (warp maxima by REDUX). q <= AIR_RES_DEL_WARP_Q: the q-th largest of the warps'
 * largest thread maxima (each warp's top t = 1, 2 or 4 for q <= 4, 8 or 16: close to the q-th
 * largest of all 256 where few warps hold more of those than they give), ranked by warp 0 in one
 * step (a bisection over all 256 took ~2 us at q = 8, docs/perf-notes.md v0.28). Else a bound on
 * the q-th largest of all 256 thread maxima (air_res_block_jth). A thread
 * without elements holds 0, the least rank key: where fewer than q threads hold elements the
 * bound can be 0, which takes every element. One thread writes it to *out; s_tmp needs
 * AIR_RES_JTH_WORDS words. Every thread must call it.
 */
__device__ __forceinline__ void air_res_block_bound(unsigned dmax, unsigned q, unsigned* s_tmp, unsigned* out) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (q <= AIR_RES_DEL_WARP_Q) {
    const unsigned t = q <= AIR_RES_DEL_WARP_Q / 4 ? 1u : q <= AIR_RES_DEL_WARP_Q / 2 ? 2u : 4u;
    unsigned cur = dmax;
#pragma unroll
    for (unsigned i = 0; i < 4; ++i) {
      if (i < t) { /* the warp's i-th largest thread maximum, each from another thread */
        const unsigned m = __reduce_max_sync(0xffffffffu, cur);
        const int first = __ffs(__ballot_sync(0xffffffffu, cur == m)) - 1;
        if ((int)lane == first) cur = 0u;
        if (lane == 0) s_tmp[i * AIR_WARPS + warp] = m;
      }
    }
    __syncthreads();
    if (warp == 0) {
      const unsigned nv = t * AIR_WARPS; /* values from distinct threads, <= 32 */
      const unsigned v = lane < nv ? s_tmp[lane] : 0u;
      unsigned above = 0; /* values ranked before this lane's: larger, or equal and lower */
      for (unsigned u = 0; u < nv; ++u) {
        const unsigned x = s_tmp[u];
        above += x > v || (x == v && u < lane);
      }
      /* ranks are distinct, so exactly one lane holds the q-th largest (q <= nv) */
      if (lane < nv && above == q - 1) *out = v;
    }
    return;
  }
  const unsigned v[1] = {dmax};
  const unsigned x = air_res_block_jth<1>(v, AIR_RES_THREADS, q, s_tmp);
  if (threadIdx.x == 0) *out = x;
}

/*
 * A lower bound on the j-th largest of the m <= AIR_RES_DEL_MAX_BLOCKS bounds at g (written by
 * the row's blocks before a row barrier), in every thread (air_res_block_jth). s_tmp needs
 * AIR_RES_JTH_WORDS words. Every thread must call it.
 */
__device__ __forceinline__ unsigned air_res_jth_largest(const unsigned* g, unsigned m, unsigned j, unsigned* s_tmp) {
  constexpr int PER = AIR_RES_DEL_MAX_BLOCKS / AIR_RES_THREADS;
  unsigned v[PER];
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const unsigned at = threadIdx.x + AIR_RES_THREADS * (unsigned)i;
    v[i] = at < m ? __ldcg(g + at) : 0u;
  }
  return air_res_block_jth<PER>(v, m, j, s_tmp);
}

/*
 * Runs the statements for every element this thread holds (its vectors, then its scalar),
 * with KEY its rank key (unsigned) and IDX its index in the row. Inside air_resident_kernel
 * only (it names the kernel's w, nvt, v0idx, has_s, skey and sidx).
 */
#define AIR_RES_FOR_HELD(KEY, IDX, ...)                                                   \
  _Pragma("unroll") for (int j_ = 0; j_ < AIR_RES_VECS; ++j_) {                          \
    if (j_ < nvt) {                                                                       \
      _Pragma("unroll") for (int e_ = 0; e_ < V; ++e_) {                                  \
        const unsigned KEY = air_res_held_key<DT>(w, j_, e_, sm);                         \
        const unsigned IDX = (unsigned)(v0idx + (int64_t)j_ * AIR_RES_THREADS * V + e_);  \
        (void)IDX;                                                                        \
        __VA_ARGS__                                                                       \
      }                                                                                   \
    }                                                                                     \
  }                                                                                       \
  if (has_s) {                                                                            \
    const unsigned KEY = skey;                                                            \
    const unsigned IDX = (unsigned)sidx;                                                  \
    (void)IDX;                                                                            \
    __VA_ARGS__                                                                           \
  }

template <topk_dtype DT>
__global__ void __launch_bounds__(AIR_RES_THREADS) air_resident_kernel(const air_params P, const air_res_desc D) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  constexpr int V = 16 / (int)sizeof(RawT);
  unsigned long long ts[11]; /* written and read only with D.stamps */
  if (TOPK_AIR_STAMPS && D.stamps) {
#pragma unroll
    for (int i = 0; i < 11; ++i) ts[i] = 0; /* phases a path skips print as 0 */
  }
  AIR_RES_STAMP(0);
  constexpr int NPASS = (KB + AIR_RES_DIGIT - 1) / AIR_RES_DIGIT;
  __shared__ unsigned s_hist[AIR_RES_BINS];
  __shared__ unsigned s_warp[AIR_WARPS];
  __shared__ air_choice<unsigned> s_choice;
  __shared__ unsigned s_flag;
  __shared__ unsigned long long s_fin[AIR_RES_CAP]; /* the finish's candidates */

  const int64_t n = P.n, k = P.k; /* 1 <= k < n < 2^31 (the host's res_fits) */
  const int64_t row = blockIdx.y;
  const unsigned G = gridDim.x, b = blockIdx.x;

  /* 0. Load the slice: vectors [v0, v1) of the row's aligned part, thread t owns v0 + j*T + t. */
  const RawT* in_row = (const RawT*)P.in + row * P.ld;
  int64_t head = (int64_t)(((16u - ((uintptr_t)in_row & 15u)) & 15u) / sizeof(RawT));
  if (head > n) head = n;
  const int64_t nv = (n - head) / V, tail = n - head - nv * V;
  const int64_t vpb = (nv + G - 1) / G;
  const int64_t v0 = (int64_t)b * vpb, v1 = v0 + vpb < nv ? v0 + vpb : nv;
  const int64_t mine = v1 - v0 - (int64_t)threadIdx.x;
  const int nvt = mine <= 0 ? 0 : (int)((mine + AIR_RES_THREADS - 1) / AIR_RES_THREADS); /* <= VECS (host) */
  const uint4* src = (const uint4*)(in_row + head) + v0 + threadIdx.x;
  uint4 w[AIR_RES_VECS];
#pragma unroll
  for (int j = 0; j < AIR_RES_VECS; ++j)
    if (j < nvt) w[j] = __ldg(src + (int64_t)j * AIR_RES_THREADS);
  /* One scalar a thread at most: the head's elements (< V) in block 0's first threads, the
   * tail's (< V) in block G-1's (after the head's threads when G == 1). */
  bool has_s = false;
  int64_t sidx = 0;
  if (b == 0 && threadIdx.x < head) {
    has_s = true;
    sidx = threadIdx.x;
  } else if (b == G - 1) {
    const int64_t t = (int64_t)threadIdx.x - (G == 1 ? head : 0);
    if (t >= 0 && t < tail) {
      has_s = true;
      sidx = head + nv * V + t;
    }
  }
  const bool s_first = sidx < head; /* the scalar comes before the vectors in index order */
  const RawT sraw = has_s ? in_row[sidx] : (RawT)0; /* its key after the grid-wide sync */
  const int64_t v0idx = head + (v0 + threadIdx.x) * V; /* index of element 0 of vector round 0 */

  /* Zero every row's histograms and counters, then the one grid-wide sync. */
  {
    const int64_t rows = gridDim.y;
    const int64_t words = rows * AIR_RES_MAX_PASSES * AIR_RES_BINS;
    const int64_t nthr = (int64_t)G * rows * AIR_RES_THREADS;
    const int64_t tid = ((int64_t)blockIdx.y * G + b) * AIR_RES_THREADS + threadIdx.x;
    for (int64_t i = tid; i < words; i += nthr) D.hist[i] = 0;
    for (int64_t i = tid; i < rows; i += nthr) {
      D.ctrl[i].arrive = 0;
      D.ctrl[i].done = 0;
      D.ctrl[i].slots = 0;
      D.ctrl[i].dslots = 0;
      D.ctrl[i].gslots = 0;
    }
  }
  AIR_RES_STAMP(1);

  air_res_row* ctrl = D.ctrl + row;
  const bool sm = P.smallest != 0;
  unsigned prefix = 0, r = (unsigned)k, barriers = 0;
  int level = 0;
  /* 32-bit slices become rank keys, once (air_res_holds_keys) */
  if constexpr (air_res_holds_keys<DT>()) {
#pragma unroll
    for (int j = 0; j < AIR_RES_VECS; ++j)
      if (j < nvt) w[j] = air_res_keys_of<DT>(w[j], sm);
  }
  const unsigned skey = has_s ? (unsigned)topk_to_rank_key<DT>(sraw, sm) : 0u;
  AIR_RES_STAMP(2);
  /* A result's raw bits (only NaNs are read from the row) */
#define AIR_RES_RAW(key, idx) topk_raw_of_key<DT>((KeyT)(key), sm, in_row, (idx))

  /* The delegate start's block bound is published before the grid-wide sync, which then
   * serves as its row barrier too (blk_cnt needs no zeroing: each block writes its word). */
  unsigned* thr_b = D.blk_cnt + row * AIR_RES_MAX_BLOCKS;
  if (D.del_q) {
    unsigned dmax = 0; /* rank key 0 is the least: a thread without elements counts as 0 */
    AIR_RES_FOR_HELD(key, idx, { dmax = key > dmax ? key : dmax; })
    air_res_block_bound(dmax, D.del_q, s_hist, thr_b + b);
  }
  AIR_RES_STAMP(3);
  cooperative_groups::this_grid().sync();
  AIR_RES_STAMP(4);

  if (D.del_q) {
    /* The delegate start: a threshold from thread maxima (air_res_block_bound, above;
     * air_res_jth_largest), every key >= it a candidate, and the rank finish; no radix pass
     * unless the candidates overflow. */
    const unsigned thr = air_res_jth_largest(thr_b, G, D.del_j, s_hist);
    AIR_RES_STAMP(5);
    /* keys >= thr (low word: the candidates' slots) and keys > thr (high word), one atomic a block */
    unsigned long long ge = 0; /* bit j x V + e: held element e of vector j is >= thr */
    unsigned n_gt = 0;
#pragma unroll
    for (int j = 0; j < AIR_RES_VECS; ++j) {
      if (j < nvt) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const unsigned key = air_res_held_key<DT>(w, j, e, sm);
          ge |= (unsigned long long)(key >= thr) << (j * V + e);
          n_gt += key > thr;
        }
      }
    }
    const bool s_ge = has_s && skey >= thr;
    n_gt += has_s && skey > thr;
    const unsigned n_ge = (unsigned)__popcll(ge) + (unsigned)s_ge;
    unsigned long long blk;
    unsigned cs = (unsigned)air_res_block_slots((unsigned long long)n_gt << 32 | n_ge, &ctrl->dslots, s_fin, &blk);
    AIR_RES_STAMP(6);
    {
      /* A loop over the few set bits, not a test per held element: this code runs once, cold
       * in the instruction cache of every SM at once (docs/perf-notes.md v0.29). */
      RawT* craw = (RawT*)D.cand_raw + row * AIR_RES_CAP;
      unsigned* cidx = D.cand_idx + row * AIR_RES_CAP;
      while (ge) {
        const int p = __ffsll((long long)ge) - 1;
        ge &= ge - 1;
        const int j = p / V, e = p % V;
        const unsigned key = air_res_held_key<DT>(w, j, e, sm);
        const unsigned idx = (unsigned)(v0idx + (int64_t)j * AIR_RES_THREADS * V + e);
        if (cs < AIR_RES_CAP) { craw[cs] = AIR_RES_RAW(key, idx); cidx[cs] = idx; }
        ++cs;
      }
      if (s_ge) {
        if (cs < AIR_RES_CAP) { craw[cs] = AIR_RES_RAW(skey, sidx); cidx[cs] = (unsigned)sidx; }
        ++cs;
      }
    }
    unsigned* eq_cnt = D.blk_cnt + row * AIR_RES_MAX_BLOCKS + AIR_RES_DEL_MAX_BLOCKS;
    /* the block's keys == thr, published with the barrier below: the tie path needs no more */
    if (threadIdx.x == 0) eq_cnt[b] = (unsigned)blk - (unsigned)(blk >> 32);
    air_res_row_barrier(&ctrl->arrive, G * ++barriers);
    AIR_RES_STAMP(7);
    /* every block arrived after its slot atomics: the same count in all of them */
    const unsigned long long cd = __ldcg(&ctrl->dslots);
    const unsigned c_ge = (unsigned)cd, c_gt = (unsigned)(cd >> 32);
    unsigned c = c_ge;
    if (c_ge > AIR_RES_CAP && c_gt >= (unsigned)k && c_gt <= AIR_RES_CAP) {
      /* thr below the k-th key and shared by many, but the keys above it fit: they are the
       * candidates (bf16 uniform rows, k = 1024: ~2k keys equal the top value). The buffer
       * is written again; every block read what it needed before the barrier above. */
      RawT* craw = (RawT*)D.cand_raw + row * AIR_RES_CAP;
      unsigned* cidx = D.cand_idx + row * AIR_RES_CAP;
      unsigned gs = (unsigned)air_warp_claim<unsigned long long>((unsigned long long)n_gt, &ctrl->gslots);
      AIR_RES_FOR_HELD(key, idx, {
        if (key > thr) {
          if (gs < AIR_RES_CAP) { craw[gs] = AIR_RES_RAW(key, idx); cidx[gs] = idx; }
          ++gs;
        }
      })
      air_res_row_barrier(&ctrl->arrive, G * ++barriers);
      c = c_gt;
    }
    if (c <= AIR_RES_CAP) {
      if (D.rank && air_res_rank_fits(c, G)) {
        air_res_rank_finish<DT>(P, D, row, c, r, b, G, s_fin, s_hist, ts);
      } else {
        if (threadIdx.x == 0) s_flag = air_res_arrive(&ctrl->done) == G - 1;
        __syncthreads();
        if (s_flag) air_res_finish<DT>(P, D, row, c, r, 0, s_fin, s_hist, s_warp, &s_choice);
      }
      if (TOPK_AIR_STAMPS && D.stamps) {
        __syncthreads();
        AIR_RES_STAMP(8);
        if (threadIdx.x == 0 && b == 0) air_res_print(ts, 10, n, k, G, gridDim.y);
      }
      return;
    }
    if (c_gt < (unsigned)k) {
      /* Too many keys >= thr, but fewer than k above it: thr is the k-th key, shared by many
       * (few distinct values: bf16 uniform rows, radix-adversarial 16-bit rows, all equal).
       * Every key > thr is a result, and so are the lowest-indexed k - c_gt keys == thr: the
       * blocks' counts of those came with the barrier above, so no other barrier is needed. */
      const unsigned os = (unsigned)air_warp_claim<unsigned long long>((unsigned long long)n_gt, &ctrl->slots);
      air_res_take_ties<DT>(P, row, in_row, w, nvt, skey, has_s, s_first, v0idx, sidx, thr, (unsigned)k - c_gt, c_gt,
                            eq_cnt, b, true, os, s_hist);
      if (TOPK_AIR_STAMPS && D.stamps) {
        __syncthreads();
        AIR_RES_STAMP(8);
        if (threadIdx.x == 0 && b == 0) air_res_print(ts, 8, n, k, G, gridDim.y);
      }
      return;
    }
    /* else thr is far too low (few blocks could vouch for their share): the radix passes */
  }
  for (int q = 0; q < NPASS; ++q) {
    const int width = KB - level < AIR_RES_DIGIT ? KB - level : AIR_RES_DIGIT;
    const int nbins = 1 << width;
    for (int i = threadIdx.x; i < nbins; i += AIR_RES_THREADS) s_hist[i] = 0;
    __syncthreads();
    /* 1. histogram of the digit below the prefix, of the elements matching it */
#define AIR_RES_MATCH(key) (level == 0 || ((unsigned)(key) >> (KB - level)) == prefix)
    AIR_RES_FOR_HELD(key, idx, {
      if (AIR_RES_MATCH(key)) atomicAdd(&s_hist[air_res_digit<KB>(key, level, width)], 1u);
    })
    __syncthreads();
    AIR_RES_STAMP(3);
    unsigned* g_hist = D.hist + (row * AIR_RES_MAX_PASSES + q) * AIR_RES_BINS;
    for (int i = threadIdx.x; i < nbins; i += AIR_RES_THREADS) {
      const unsigned v = s_hist[i];
      if (v) atomicAdd(&g_hist[i], v);
    }
    air_res_row_barrier(&ctrl->arrive, G * ++barriers);
    AIR_RES_STAMP(4);
    {
      unsigned hv[AIR_RES_BINS / AIR_RES_THREADS]; /* every load issued before any store */
#pragma unroll
      for (int q = 0; q < AIR_RES_BINS / AIR_RES_THREADS; ++q) {
        const int i = threadIdx.x + q * AIR_RES_THREADS;
        if (i < nbins) hv[q] = __ldcg(g_hist + i);
      }
#pragma unroll
      for (int q = 0; q < AIR_RES_BINS / AIR_RES_THREADS; ++q) {
        const int i = threadIdx.x + q * AIR_RES_THREADS;
        if (i < nbins) s_hist[i] = hv[q];
      }
    }
    __syncthreads();
    air_choose<unsigned>(s_hist, nbins, r, s_warp, &s_choice);
    const unsigned d = (unsigned)s_choice.digit, c = s_choice.count;
    r -= s_choice.greater;
    AIR_RES_STAMP(5);
    /* what happens to the chosen bin (the same decision in every block of the row) */
    const bool all = c == r;
    const bool gather = !all && c <= AIR_RES_CAP;
    /* 2. results (digit beats d; with `all`, d too) and candidates (gather: digit d) */
    unsigned n_res = 0, n_cand = 0;
#define AIR_RES_CLASSIFY(key)                                                        \
  const bool in_ = AIR_RES_MATCH(key);                                               \
  const unsigned dg_ = air_res_digit<KB>((key), level, width);                       \
  const bool res_ = in_ && (dg_ > d || (all && dg_ == d));                           \
  const bool cand_ = in_ && gather && dg_ == d;
    AIR_RES_FOR_HELD(key, idx, {
      AIR_RES_CLASSIFY(key)
      n_res += res_;
      n_cand += cand_;
    })
    const unsigned long long first =
        air_warp_claim<unsigned long long>((unsigned long long)n_cand << 32 | n_res, &ctrl->slots);
    unsigned os = (unsigned)first, cs = (unsigned)(first >> 32);
    AIR_RES_STAMP(6);
    RawT* craw = (RawT*)D.cand_raw + row * AIR_RES_CAP;
    unsigned* cidx = D.cand_idx + row * AIR_RES_CAP;
    AIR_RES_FOR_HELD(key, idx, {
      AIR_RES_CLASSIFY(key)
      if (res_ && os < (unsigned)k) air_emit(P, row, os, AIR_RES_RAW(key, idx), (KeyT)key, idx);
      os += res_;
      if (cand_ && cs < AIR_RES_CAP) { craw[cs] = AIR_RES_RAW(key, idx); cidx[cs] = idx; }
      cs += cand_;
    })
#undef AIR_RES_CLASSIFY
    if (all) {
      AIR_RES_STAMP(7);
      if (TOPK_AIR_STAMPS && D.stamps && threadIdx.x == 0 && b == 0) air_res_print(ts, 7, n, k, G, gridDim.y);
      return;
    }
    prefix = (prefix << width) | d;
    level += width;
    if (gather && D.rank && air_res_rank_fits(c, G)) {
      /* 3. few candidates for the row's blocks: every block ranks its share of them */
      air_res_row_barrier(&ctrl->arrive, G * ++barriers);
      AIR_RES_STAMP(7);
      air_res_rank_finish<DT>(P, D, row, c, r, b, G, s_fin, s_hist, ts);
      if (TOPK_AIR_STAMPS && D.stamps) {
        __syncthreads();
        AIR_RES_STAMP(8);
        if (threadIdx.x == 0 && b == 0) air_res_print(ts, 10, n, k, G, gridDim.y);
      }
      return;
    }
    if (gather) {
      /* 3. else the last block of the row to get here takes the candidates */
      __syncthreads();
      if (threadIdx.x == 0) s_flag = air_res_arrive(&ctrl->done) == G - 1;
      __syncthreads();
      AIR_RES_STAMP(7);
      if (s_flag) {
        air_res_finish<DT>(P, D, row, c, r, level, s_fin, s_hist, s_warp, &s_choice);
        __syncthreads();
        AIR_RES_STAMP(8);
        if (TOPK_AIR_STAMPS && D.stamps && threadIdx.x == 0) air_res_print(ts, 8, n, k, G, gridDim.y);
      }
      return;
    }
    __syncthreads(); /* s_choice and s_hist are reused by the next pass */
  }
#undef AIR_RES_MATCH

  /* 4. Every key bit known and more than CAP elements share the k-th key: the lowest-indexed
   * r of them. Blocks hold ascending index ranges, so a block takes what the blocks before it
   * leave: each publishes its count, and after a row barrier takes its share. */
  AIR_RES_STAMP(8);
  unsigned m = 0;
  AIR_RES_FOR_HELD(key, idx, { m += key == prefix; })
  unsigned total;
  (void)air_block_excl_scan<unsigned>(m, s_warp, &total);
  unsigned* cnts = D.blk_cnt + row * AIR_RES_MAX_BLOCKS;
  if (threadIdx.x == 0) cnts[b] = total;
  air_res_row_barrier(&ctrl->arrive, G * ++barriers);
  AIR_RES_STAMP(9);
  air_res_take_ties<DT>(P, row, in_row, w, nvt, skey, has_s, s_first, v0idx, sidx, prefix, r, (unsigned)k - r, cnts,
                        b, false, 0u, s_hist);
  if (TOPK_AIR_STAMPS && D.stamps) {
    __syncthreads();
    AIR_RES_STAMP(10);
    if (threadIdx.x == 0 && b == 0) air_res_print(ts, 10, n, k, G, gridDim.y);
  }
}
#undef AIR_RES_FOR_HELD
#undef AIR_RES_RAW

#endif /* TOPK_CUDA_AIR_RESIDENT_KERNELS_CUH */
