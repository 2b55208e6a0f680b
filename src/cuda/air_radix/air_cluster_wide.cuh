/*
 * air_cluster_wide.cuh: CLUSTER's wide start, for k up to 1024 and keys of up to 32 bits, in one
 * exchange between the blocks (included by air_radix_kernels.cuh, before the cluster kernel).
 *
 * Why: at k = 1024 the LLM-sampling shapes ran the radix passes (13-22 us a call on the H100,
 * docs/perf-notes.md v0.39), each pass a round of cluster messages, and the delegate start
 * (air_cluster_delegates) ranks its delegates and candidates by quadratic counts, which bounds
 * it to k <= 128. This start sends every candidate once and ranks them by a radix select in one
 * block, so its time grows with the candidates (~1.5k at k = 1024), not with their square.
 *
 *  (1) Each block's bound thr_b: the median over its 32 warps of each warp's r-th largest thread
 *      maximum (each thread's largest staged key, taken while staging), r = ceil(q / 32), so
 *      about 32 r >= q keys of the block are >= thr_b. q = ceil(k / cs) plus a margin (the
 *      host's wide_q): see (3). Any bound is safe (rank 0's check); this one is an estimate of
 *      the block's q-th largest thread maximum in one barrier, where a radix select of it took
 *      two to four.
 *  (2) Each block writes its keys >= thr_b, as (key << 32 | ~index), at their place in its
 *      segment of rank 0's buffer (AIR_WIDE_CAND / cs entries) in its own shared memory, and
 *      sends the segment to rank 0 in one bulk copy, then its count and thr_b (st.async). One
 *      exchange, pushes only (cluster_async.cuh).
 *  (3) Rank 0 holds U, every block's keys >= its own bound. With M the largest bound: every key
 *      of the row >= M is in U (it is >= its block's bound). So if U holds >= k keys >= M, the
 *      row's k best (by key, then lower index) are U's k best. That is the check; the margin
 *      on q makes it hold in rows of random order (a numpy simulation of normal and uniform
 *      rows, cs 4..16, k 50 and 1024, margin 4 sqrt(q): held in every trial, ~1.3-1.6k
 *      candidates at k = 1024). Where it fails, or a segment overflowed (sorted rows, heavy
 *      ties), rank 0 tells every block and the cluster runs the radix passes: same results.
 *  (4) Rank 0: the k-th largest composite of U's keys >= M, relative to M ((key - M) << 32 |
 *      ~index), by radix digits of key - M over its span (the first by binades where the span is
 *      wide: air_wide_log_bin), then (ties at the k-th key) the index bits below those every index
 *      of the row leaves 0 (composites are distinct, so exactly k are >= it; the select stops
 *      where its bin holds exactly what is left), and
 *      the k composites >= it written out, in no order (sorted output is sorted after the
 *      kernel, as for the passes).
 * Rank 0 sends the verdict of (3) to every other block, which waits for it (it must run the
 * passes if the check failed); the waits are off rank 0's path.
 */
#ifndef TOPK_CUDA_AIR_RADIX_AIR_CLUSTER_WIDE_CUH
#define TOPK_CUDA_AIR_RADIX_AIR_CLUSTER_WIDE_CUH

enum {
  AIR_WIDE_CAND = 4096,                                   /* rank 0's candidate entries (8 bytes each) */
  AIR_WIDE_SCRATCH = AIR_WIDE_CAND * 8,                   /* bytes: the histograms' space and what follows */
  AIR_WIDE_EXTRA = AIR_WIDE_SCRATCH - AIR_CLUSTER_SCRATCH /* dynamic shared memory the start adds */
};
static_assert(AIR_WIDE_EXTRA >= 0, "the wide start's buffer covers the histograms' space");

/* The most collecting threads air_cluster_wide lists (in the select's second histogram, 16 bits each) */
enum { AIR_WIDE_LISTED = 512 };

/* The most values the exact select ranks (air_wide_exact): two a warp. 64, not 32, so bf16's ~42-48
 * ties at the k-th key of rows of 128256..262144 (k = 1024) end there, without a digit of the index
 * bits. */
enum { AIR_WIDE_EXACT = 64 };

/* The wide start's shared state (beside the delegate start's, in a union). */
struct air_wide_sync {
  unsigned long long bar[3];                   /* rank 0: headers, candidates; others: the verdict */
  unsigned long long hdr[AIR_CLUSTER_MAX_BLOCKS]; /* rank 0's: block b's count << 32 | thr_b */
  unsigned hmax[AIR_CLUSTER_MAX_BLOCKS];       /* rank 0's: block b's largest key */
  unsigned verdict;                            /* others': 1 the start is done, 0 run the passes */
  unsigned bound;                              /* this block's thr_b */
  unsigned mine;                               /* this block's candidates */
  unsigned out;                                /* rank 0: the next output slot */
  unsigned ncol;                               /* the collecting threads (air_cluster_wide (2a)) */
  __align__(16) unsigned hist[2][256];         /* the radix selects' digits, double-buffered */
  unsigned wred[2][AIR_CLUSTER_THREADS / 32];  /* each warp's r-th largest thread maximum, and its largest */
  unsigned sel[3];                             /* the select's chosen bin: keys above it left, its count; members gathered */
  unsigned long long small[AIR_WIDE_EXACT];    /* the exact select's last bin, gathered */
  unsigned long long exact;                    /* ... and its answer */
};
enum { AIR_WIDE_BAR_HDR = 0, AIR_WIDE_BAR_CAND = 1, AIR_WIDE_BAR_VERDICT = 2 };

/* At the kernel's start, before staging: what each barrier expects is known now (rank 0's
 * candidate bytes only once the headers are in). Then every thread arrives on the cluster
 * barrier that air_cluster_wide waits on before its first push. */
__device__ __forceinline__ void air_cluster_wide_init(air_wide_sync* S, unsigned rank, unsigned cs) {
  if (threadIdx.x == 0) {
    for (int b = 0; b < 3; ++b) mbar_init(&S->bar[b]);
    S->mine = 0;
    S->out = 0;
    S->ncol = 0;
    if (rank == 0) mbar_expect_tx(&S->bar[AIR_WIDE_BAR_HDR], cs * 12u); /* hdr and hmax */
    else mbar_expect_tx(&S->bar[AIR_WIDE_BAR_VERDICT], 4u);
    cluster_mbar_init_fence();
  }
  for (int i = threadIdx.x; i < 256; i += AIR_CLUSTER_THREADS) S->hist[0][i] = 0;
  cluster_arrive_relaxed();
}

/*
 * Warp 0's choice in a 256-bin histogram h: the bin holding the q-th largest value. Lane l reads
 * bins 8l .. 8l + 7 (two 16-byte loads), the lanes' sums are suffix-summed by shuffles, and the lane
 * whose bins hold the q-th picks its bin in registers (unrolled, no early exit; the strided loads and
 * the loop with a break it replaces took ~870 cycles of a digit, this ~445: docs/perf-notes.md v0.41).
 * Writes sel[0] = digit | (q - values in higher bins) << 8
 * and sel[1] = the bin's count, or sel[0] = ~0 where h holds fewer than q values; sel[2] = 0.
 */
__device__ __forceinline__ void air_wide_pick_bin(const unsigned* h, unsigned q, unsigned* sel) {
  const unsigned lane = threadIdx.x & 31;
  const uint4 a = ((const uint4*)h)[2 * lane], b = ((const uint4*)h)[2 * lane + 1];
  const unsigned c[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  unsigned s = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += c[j];
  unsigned incl = s; /* values in bins >= 8 lane */
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned y = __shfl_down_sync(0xffffffffu, incl, o);
    if (lane + o < 32) incl += y;
  }
  const unsigned ex = incl - s; /* values in bins >= 8 lane + 8 */
  if (ex < q && q <= incl) {
    unsigned above = ex, d = 0, left = 0, cnt = 0;
    bool found = false;
#pragma unroll
    for (int j = 7; j >= 0; --j) {
      const bool here = !found && above + c[j] >= q;
      if (here) {
        d = 8 * lane + (unsigned)j;
        left = q - above;
        cnt = c[j];
      }
      found |= here;
      above += c[j];
    }
    sel[0] = d | left << 8;
    sel[1] = cnt;
  } else if (lane == 0 && incl < q) {
    sel[0] = 0xFFFFFFFFu;
  }
  if (lane == 0) sel[2] = 0;
}

/*
 * Each thread's values v[j] that pass `take`, written to out[] at slots from one counter: one
 * atomic a thread for all of them (an atomic a value is a dependent chain of NV warp-aggregated
 * atomics, docs/perf-notes.md v0.43).
 */
template <typename T, int NV, typename F>
__device__ __forceinline__ void air_wide_gather(const T (&v)[NV], F&& take, unsigned* counter,
                                                unsigned long long* out) {
  unsigned m = 0;
#pragma unroll
  for (int j = 0; j < NV; ++j) m += take(j) ? 1u : 0u;
  if (m) {
    unsigned slot = atomicAdd(counter, m);
#pragma unroll
    for (int j = 0; j < NV; ++j)
      if (take(j)) out[slot++] = (unsigned long long)v[j];
  }
}

/*
 * The q-th largest of the cnt <= AIR_WIDE_EXACT values v (live[j]) whose bits under mask equal pre
 * (distinct values): gathered into S->small (S->sel[2] is 0: the picks zero it); then warp w ranks
 * gathered values w and w + 32 against all of them by ballots, and the warp whose value has q - 1
 * above it writes it. (Warp 0 alone, each lane counting the values above its own by 32 loads and
 * compares, took ~1400 cycles of rank 0's select: its SASS was one dependent chain;
 * docs/perf-notes.md v0.43.) Two barriers; every thread calls it and gets the value.
 */
static_assert(AIR_CLUSTER_THREADS == 1024 && AIR_WIDE_EXACT == 64,
              "32 warps: two of the exact select's values each; a lane for each warp's value in the bound's median");
template <typename T, int NV>
__device__ T air_wide_exact(const T (&v)[NV], const bool (&live)[NV], T mask, T pre, unsigned q, unsigned cnt,
                            air_wide_sync* S) {
  const unsigned t = threadIdx.x, lane = t & 31, w = t >> 5;
  air_wide_gather<T, NV>(v, [&](int j) { return live[j] && (v[j] & mask) == pre; }, &S->sel[2], S->small);
  __syncthreads();
  /* slots >= cnt hold stale values: masked out of the ballots (the second half read only where used:
   * reading it always cost f32's selects ~0.15 us, docs/perf-notes.md v0.43) */
  const unsigned in0 = cnt >= 32 ? 0xFFFFFFFFu : (1u << cnt) - 1u,
                 in1 = cnt >= 64 ? 0xFFFFFFFFu : cnt > 32 ? (1u << (cnt - 32)) - 1u : 0u;
  const unsigned long long y0 = S->small[lane], y1 = cnt > 32 ? S->small[lane + 32] : 0ull;
#pragma unroll 1
  for (unsigned i = w; i < cnt; i += 32) { /* warp-uniform */
    const unsigned long long x = S->small[i];
    unsigned above = __popc(__ballot_sync(0xffffffffu, y0 > x) & in0);
    if (cnt > 32) above += __popc(__ballot_sync(0xffffffffu, y1 > x) & in1);
    if (lane == 0 && above == q - 1) S->exact = x;
  }
  __syncthreads();
  return (T)S->exact;
}

/*
 * Rank 0's first digit where the kept keys span >= AIR_WIDE_LOG_MIN bits: the bin of r = key - M
 * (bits 32.. of a relative composite) by its leading bit e in [s - 15, s) and the 4 bits below it
 * (16 bins a binade, 1 + 15 * 16 = 241 bins), with every r < 2^(s - 15) in bin 0. The k-th largest
 * kept key lies a few hundred keys above M (rank 0 keeps ~k + a margin), where these bins are
 * narrowest: a bin holds ~1/16 of the keys below its upper edge, so the k-th's bin holds ~7-25 (a
 * numpy model of normal rows at the LLM shapes), within the exact finish's 64, where one 8-bit
 * digit of the span left ~50 and a second digit ran (f32 N(0, 1), 1 x 262144). Each bin is an
 * aligned range of r: air_wide_log_range. docs/perf-notes.md v0.42.
 */
enum {
  AIR_WIDE_LOG_MIN = 20,     /* the least span (bits) the binade digit runs on */
  AIR_WIDE_LOG_BINADES = 15, /* binades with bins of their own, below the span's top */
  AIR_WIDE_LOG_SUB = 4       /* bits below the leading one: 16 bins a binade */
};
static_assert(1 + AIR_WIDE_LOG_BINADES * (1 << AIR_WIDE_LOG_SUB) <= 256, "the binade digit fits a 256-bin histogram");
static_assert(AIR_WIDE_LOG_MIN - AIR_WIDE_LOG_BINADES >= AIR_WIDE_LOG_SUB, "every binade has its sub-bits");
__device__ __forceinline__ unsigned air_wide_log_bin(unsigned r, int s) {
  const int lo = s - AIR_WIDE_LOG_BINADES;
  if (r < (1u << lo)) return 0u;
  const int e = 31 - __clz((int)r); /* lo <= e < s */
  return 1u + ((unsigned)(e - lo) << AIR_WIDE_LOG_SUB) + ((r >> (e - AIR_WIDE_LOG_SUB)) & ((1u << AIR_WIDE_LOG_SUB) - 1u));
}
/* bin d's range of r: [pre, pre + 2^w) */
__device__ __forceinline__ void air_wide_log_range(unsigned d, int s, unsigned& pre, int& w) {
  const int lo = s - AIR_WIDE_LOG_BINADES;
  if (d == 0) {
    pre = 0;
    w = lo;
    return;
  }
  const int e = lo + (int)((d - 1) >> AIR_WIDE_LOG_SUB);
  w = e - AIR_WIDE_LOG_SUB;
  pre = 1u << e | ((d - 1) & ((1u << AIR_WIDE_LOG_SUB) - 1u)) << w;
}

/* A digit's choice once its counts are in S->hist[p & 1]: the other histogram zeroed for the next
 * digit (its last reader was before this digit's start, so no barrier is spent on zeroing), a
 * barrier, warp 0's pick, a barrier. Returns sel[0] (air_wide_pick_bin) and the bin's count in cnt;
 * p names the zeroed histogram after. */
__device__ __forceinline__ unsigned air_wide_choose(unsigned& p, unsigned q, air_wide_sync* S, unsigned& cnt) {
  const unsigned t = threadIdx.x;
  const unsigned* h = S->hist[p & 1];
  if (t < 256) S->hist[(p + 1) & 1][t] = 0;
  ++p;
  __syncthreads();
  if ((t >> 5) == 0) air_wide_pick_bin(h, q, S->sel);
  __syncthreads();
  cnt = S->sel[1];
  return S->sel[0];
}

/*
 * The block's radix select over the values v[0..NV) of each thread (live[j]) whose bits under
 * `mask` equal `pre`: the digits of bits [lo, hi) of the q-th largest of them, 8 bits at a time
 * from the top, added to pre and mask; q becomes what is left to take from the chosen prefix.
 * cnt: how many live values (pre, mask) holds where a caller's digit chose it (air_wide_log_digit),
 * checked before the first digit; ~0 if not known.
 * Returns true where it stopped early: the last chosen digit's bin holds exactly the q values
 * still wanted, so exactly the wanted count is >= pre (the rest 0); a bin of <= AIR_WIDE_EXACT
 * values was ranked (air_wide_exact: pre is the q-th value); or fewer than q values were live
 * (pre = 0: all pass). Else pre is the lower edge of the q-th's bin at bit lo.
 * S->hist[par] must be zero on entry; on return par names a zero one again. Block-uniform
 * arguments; every thread calls it; two barriers a digit (~0.6 us, docs/perf-notes.md v0.41).
 */
template <typename T, int NV>
__device__ bool air_wide_select(const T (&v)[NV], const bool (&live)[NV], int hi, int lo, T& mask, T& pre, unsigned& q,
                                unsigned& par, air_wide_sync* S, unsigned cnt = 0xFFFFFFFFu) {
  bool done = false;
  unsigned p = par;
  for (int top = hi;; top -= 8) {
    if (cnt == q) { /* the whole bin is taken: exactly the wanted count is >= its lower edge */
      done = true;
      break;
    }
    if (cnt <= AIR_WIDE_EXACT) { /* a few values left: ranked by ballots */
      pre = air_wide_exact<T, NV>(v, live, mask, pre, q, cnt, S);
      mask = ~(T)0;
      done = true;
      break;
    }
    if (top <= lo) break;
    const int shift = top - 8 > lo ? top - 8 : lo, width = top - shift;
    const T dmask = (T)(((T)1 << width) - 1) << shift;
    unsigned* h = S->hist[p & 1];
    /* Plain atomics: the compiler makes a warp's same-address increments one ATOMS.POPC.INC.
     * (Warp aggregation by __match_any_sync, or by peeling the warp's first two digits with
     * ballots, measured slower: thr_b 2.1 / 2.0 us against 1.4, docs/perf-notes.md v0.40.) */
#pragma unroll
    for (int j = 0; j < NV; ++j)
      if (live[j] && (v[j] & mask) == pre) atomicAdd(&h[(unsigned)((v[j] & dmask) >> shift)], 1u);
    const unsigned s0 = air_wide_choose(p, q, S, cnt);
    if (s0 == 0xFFFFFFFFu) {
      pre = 0;
      done = true;
      break;
    }
    pre |= (T)(s0 & 255u) << shift;
    mask |= dmask;
    q = s0 >> 8;
  }
  par = p & 1;
  return done;
}

/*
 * Rank 0's first digit over relative composites v ((key - M) << 32 | ~index, all live ones) whose
 * keys span s >= AIR_WIDE_LOG_MIN bits: bins by air_wide_log_bin. Sets pre and mask to the chosen
 * bin's range, q to what is left to take from it, top to the bit below that range and cnt to the
 * bin's count (air_wide_select goes on from there); or pre = 0, cnt = q where fewer than q are live.
 */
template <int NV>
__device__ void air_wide_log_digit(const unsigned long long (&v)[NV], const bool (&live)[NV], int s,
                                   unsigned long long& mask, unsigned long long& pre, unsigned& q, unsigned& par,
                                   air_wide_sync* S, int& top, unsigned& cnt) {
  unsigned* h = S->hist[par & 1];
#pragma unroll
  for (int j = 0; j < NV; ++j)
    if (live[j]) atomicAdd(&h[air_wide_log_bin((unsigned)(v[j] >> 32), s)], 1u);
  const unsigned s0 = air_wide_choose(par, q, S, cnt);
  par &= 1;
  if (s0 == 0xFFFFFFFFu) { /* all pass */
    pre = 0;
    cnt = q;
    return;
  }
  unsigned rp;
  int w;
  air_wide_log_range(s0 & 255u, s, rp, w);
  top = 32 + w;
  pre = (unsigned long long)rp << 32;
  mask = ~((1ull << top) - 1ull);
  q = s0 >> 8;
}

/* A candidate (key, and nidx = ~index) as the composite key << 32 | nidx at out[slot]; a slot >= cap
 * is dropped (the counter that gave it still grows, so rank 0 sees the overflow). */
__device__ __forceinline__ void air_wide_put(unsigned long long* out, unsigned slot, unsigned cap, unsigned key,
                                             unsigned nidx) {
  if (slot < cap) out[slot] = (unsigned long long)key << 32 | nidx;
}

/*
 * Thread t's staged keys >= thr (> 0), as (key << 32 | ~index) composites at slots of out[] from
 * *counter (slots >= cap dropped; the count still grows, so rank 0 sees the overflow). Two looks:
 * t's vectors (v = t, t + NT, ...: the ones it staged), four loads in flight, only tested
 * (any key >= thr: a bit of `hits`), with no branch; then each hit vector (~1.4 a thread) read again,
 * its keys >= thr counted, one atomic for their slots, and written by predicated stores. The caller
 * runs it in the first warps of a list of the collecting threads t (air_cluster_wide (2a)): run by
 * each collecting thread itself, every warp held a few and the region was issue-bound: the count inside
 * the first look, under a branch a vector, with one atomic a thread, took ~264 warp instructions a
 * warp and 1.22 us (f32 8 x 262144, ncu and stamps; docs/perf-notes.md v0.46). (A slot a key from
 * the counter, in a loop of one vector at a time, grew ~0.15 us a vector a thread, v0.43; the hits
 * shared over a warp's lanes, 1.58 us, v0.46.)
 */
template <topk_dtype DT>
__device__ __forceinline__ void air_wide_collect(const typename topk_dtype_traits<DT>::key_t* s_key, int my_len,
                                                 int nvec, typename topk_dtype_traits<DT>::key_t thr, int64_t lo,
                                                 unsigned* counter, unsigned long long* out, unsigned cap,
                                                 int t) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  typedef unsigned CT;
  constexpr int NT = AIR_CLUSTER_THREADS, V = 16 / (int)sizeof(RawT), NW = 4, U = 4;
  static_assert(228 * 1024 / 16 <= 32 * NT, "a slice in shared memory (<= 228 KB) is <= 32 vectors a thread: one mask");
  const CT lim1 = KB == 16 ? (CT)(thr - 1) * 0x10001u : (CT)(thr - 1);
  unsigned hits = 0;
  for (int u0 = 0; t + u0 * NT < nvec; u0 += U) {
    uint4 q[U];
#pragma unroll
    for (int u = 0; u < U; ++u) q[u] = t + (u0 + u) * NT < nvec ? ((const uint4*)s_key)[t + (u0 + u) * NT] : uint4{};
#pragma unroll
    for (int u = 0; u < U; ++u) hits |= (air_any_gt(q[u], lim1, KB) ? 1u : 0u) << (u0 + u);
  }
#pragma unroll 1
  for (; hits; hits &= hits - 1u) {
    const int v = t + (__ffs((int)hits) - 1) * NT;
    CT w[NW];
    air_words(((const uint4*)s_key)[v], w);
    unsigned c = 0;
#pragma unroll
    for (int e = 0; e < V; ++e) c += air_key_at<KB>(w, e) >= (CT)thr ? 1u : 0u;
    unsigned slot = atomicAdd(counter, c);
    const unsigned base = ~(unsigned)(lo + v * V); /* ~(index of key e) = base - e */
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const CT x = air_key_at<KB>(w, e);
      const bool take = x >= (CT)thr;
      if (take) air_wide_put(out, slot, cap, (unsigned)x, base - (unsigned)e);
      slot += take ? 1u : 0u;
    }
  }
  air_cluster_each_tail_key<DT>(s_key, my_len, nvec, thr, t, [&](int i, KeyT key) { /* a slot a key */
    air_wide_put(out, atomicAdd(counter, 1u), cap, (unsigned)key, ~(unsigned)(lo + i));
  });
}

/* Returns true when the row is done (the block returns), false when the radix passes must run. */
template <topk_dtype DT>
__device__ bool air_cluster_wide(const air_params& P, unsigned rank, unsigned cs, int64_t row,
                                 const air_row_extent& R, int64_t lo, const typename topk_dtype_traits<DT>::key_t* s_key,
                                 int my_len, int nvec, typename topk_dtype_traits<DT>::key_t mine_max, unsigned qb,
                                 unsigned long long* s_cand, air_wide_sync* S, unsigned long long t0, bool stamps) {
  typedef typename topk_dtype_traits<DT>::raw_t RawT;
  typedef typename topk_dtype_traits<DT>::key_t KeyT;
  constexpr int KB = topk_dtype_traits<DT>::bits;
  static_assert(KB <= 32, "the wide start packs a key and an index in 64 bits");
  typedef unsigned CT;
  constexpr int NT = AIR_CLUSTER_THREADS;
  constexpr int NV = AIR_WIDE_CAND / NT; /* rank 0's candidates a thread */
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const bool solo = cs == 1;
  const int lg_seg = (__ffs(AIR_WIDE_CAND) - 1) - (__ffs((int)cs) - 1);
  const unsigned seg = 1u << lg_seg;
  /* stamps only: %globaltimer at the steps, in their order (every block prints them, labelled 0-7, w, L) */
  enum {
    TS_STAGED, TS_BOUND, TS_WAITED, TS_COLLECTED, TS_HEADERS, TS_CANDIDATES, TS_BINADE, TS_SELECTED, TS_GATHERED,
    TS_WRITTEN, TS_STEPS
  };
  unsigned long long ts[TS_STEPS] = {};
#define AIR_WIDE_STAMP(i) \
  if (stamps && t == 0) ts[i] = air_now();
  AIR_WIDE_STAMP(TS_STAGED);

  /* (1) thr_b: each warp's r-th largest thread maximum (r rounds of a warp max, each taking out the
   * lanes that hold it), then their median over the block's 32 warps, found by the warp whose value
   * has < 16 others above it and >= 16 at or above (the first such warp writes it). A numpy model
   * (bench/wide_bound_model.py) of normal, uniform, Gumbel and t(3) rows at the LLM shapes (25-60
   * trials each): no segment overflowed, every check held, ~1.6-2.0k candidates at k = 1024 against
   * the exact q-th's ~1.5-1.6k. The exact q-th, by 8-bit digits of (maximum - the smallest maximum),
   * took 1.0-1.5 us and two to four barriers; this, 0.5-0.7 (docs/perf-notes.md v0.43). The mean of
   * the warps' values in place of their median overflowed where one warp's maxima were negative. */
  const CT mx = (CT)mine_max;
  unsigned par = 0; /* S->hist[par] is zero (air_cluster_wide_init) */
  CT thr_b, bmax; /* bmax: the block's largest key, for rank 0's span (sent with the header) */
  {
    const unsigned r = (qb + 31u) / 32u; /* <= 16: the host's qb <= 512 */
    CT cur = mx, wr = 0;
    const CT wmax = __reduce_max_sync(0xffffffffu, cur);
    for (unsigned seen = 0;;) { /* warp-uniform; each round takes out >= 1 lane, so <= 32 rounds */
      const CT m = seen ? __reduce_max_sync(0xffffffffu, cur) : wmax;
      seen += __popc(__ballot_sync(0xffffffffu, cur == m));
      if (seen >= r) {
        wr = m;
        break;
      }
      if (cur == m) cur = 0;
    }
    if (lane == 0) {
      S->wred[0][warp] = wr;
      S->wred[1][warp] = wmax;
    }
    __syncthreads(); /* also: the slice is staged, the init's hist zeroing seen */
    bmax = __reduce_max_sync(0xffffffffu, S->wred[1][lane]);
    const CT x = S->wred[0][warp], y = S->wred[0][lane];
    const unsigned above = __popc(__ballot_sync(0xffffffffu, y > x)), eq = __ballot_sync(0xffffffffu, y == x);
    if (lane == 0 && above < 16u && above + __popc(eq) >= 16u && (eq & ((1u << warp) - 1u)) == 0u) S->bound = x;
    __syncthreads();
    thr_b = S->bound;
  }
  AIR_WIDE_STAMP(TS_BOUND);
  /* (2a) the collecting threads (maximum >= thr_b: ~qb of the block's) listed, so that (2) runs in
   * the list's first warps (~qb / 32 of them) where it ran in every warp, a few collecting lanes
   * each: the collection is issue-bound, ~230 instructions a warp (docs/perf-notes.md v0.49, v0.50).
   * The list lives in the select's second histogram, free until its first digit zeroes it: up to
   * AIR_WIDE_LISTED threads; more (heavy ties at thr_b) and each collects its own vectors. */
  const KeyT thr = (KeyT)thr_b;
  static_assert(AIR_WIDE_LISTED * sizeof(unsigned short) <= sizeof(S->hist[1]), "the list fits a histogram");
  unsigned short* col = (unsigned short*)S->hist[1];
  const bool collects = mine_max >= thr;         /* this thread staged a key >= thr_b */
  const bool counted = thr > 0 && nvec > 2 * NT; /* air_wide_collect's counted look (2); block-uniform */
  if (counted) {
    const unsigned bal = __ballot_sync(0xffffffffu, collects);
    unsigned at = 0;
    if (lane == 0 && bal) at = atomicAdd(&S->ncol, (unsigned)__popc(bal));
    at = __shfl_sync(0xffffffffu, at, 0) + (unsigned)__popc(bal & ((1u << lane) - 1u));
    if (collects && at < AIR_WIDE_LISTED) col[at] = (unsigned short)t;
  }
  cluster_wait(); /* the kernel start's arrival: every block runs and has its mbarriers */
  AIR_WIDE_STAMP(TS_WAITED);

  /* (2) this block's keys >= thr_b: written locally at their place in rank 0's buffer (the vectors of
   * the threads whose maximum reaches thr_b, ~10 %), then sent in one bulk copy, and the count and
   * thr_b after it. Where a thread staged more than 2 vectors, air_wide_collect's counted look (by the
   * list's first warps, (2a)); else one look, a slot a key from the counter (the counted look
   * measured slower there: 0.97 against 0.72 us at 1 vector a thread, 1.33 against 1.75 at 8,
   * docs/perf-notes.md v0.43). (A count, a warp scan and a second look of every vector took 1.31 us;
   * a warp taking its such threads one by one, a lane a key, with ballots for the slots, 0.8-5.2 us:
   * docs/perf-notes.md v0.41.) */
  unsigned long long* my_seg = s_cand + (rank << lg_seg);
  if (counted) {
    __syncthreads(); /* the list is complete */
    const unsigned ncol = S->ncol;
    const int owner = ncol <= AIR_WIDE_LISTED ? (t < ncol ? (int)col[t] : -1) : (collects ? (int)t : -1);
    if (owner >= 0) {
      air_wide_collect<DT>(s_key, my_len, nvec, thr, lo, &S->mine, my_seg, seg, owner);
      bulk_fence(); /* the writes, before the async proxy reads them */
    }
  } else if (collects) { /* <= 2 vectors a thread (or thr_b = 0): one look, a slot a key */
    air_cluster_each_key<DT>(s_key, my_len, nvec, thr, [&](int i, KeyT key) {
      air_wide_put(my_seg, atomicAdd(&S->mine, 1u), seg, (unsigned)key, ~(unsigned)(lo + i));
    });
    bulk_fence();
  }
  __syncthreads(); /* S->mine is final, the segment written */
  AIR_WIDE_STAMP(TS_COLLECTED);
  if (t == 0) {
    const unsigned n = S->mine < seg ? S->mine : seg, bytes = (n * 8u + 15u) & ~15u;
    if (rank != 0 && bytes) cluster_bulk_send(my_seg, 0u, my_seg, bytes, &S->bar[AIR_WIDE_BAR_CAND]);
    cluster_send<unsigned long long>(&S->hdr[rank], 0u, (unsigned long long)S->mine << 32 | thr_b,
                                     &S->bar[AIR_WIDE_BAR_HDR], solo);
    cluster_send<unsigned>(&S->hmax[rank], 0u, bmax, &S->bar[AIR_WIDE_BAR_HDR], solo);
    if (rank != 0 && bytes) bulk_wait_read(); /* before the block rewrites or leaves its segment */
  }
  auto print_stamps = [&](unsigned c_all, CT m) {
    if (stamps && t == 0)
      printf("WIDESTAMP rank=%u n=%lld k=%lld cs=%u q=%u mine=%u c=%u M=%u 0:%llu 1:%llu 2:%llu 3:%llu 4:%llu 5:%llu "
             "6:%llu 7:%llu w:%llu L:%llu t0:%llu\n",
             rank, (long long)R.len, (long long)P.k, cs, qb, S->mine, c_all, m, ts[TS_STAGED] - t0,
             ts[TS_BOUND] - t0, ts[TS_COLLECTED] - t0, ts[TS_HEADERS] - t0, ts[TS_CANDIDATES] - t0,
             ts[TS_SELECTED] - t0, ts[TS_GATHERED] - t0, ts[TS_WRITTEN] - t0, ts[TS_WAITED] - t0, ts[TS_BINADE] - t0,
             t0);
  };
  if (rank != 0) {
    mbar_wait(&S->bar[AIR_WIDE_BAR_VERDICT], 0);
    AIR_WIDE_STAMP(TS_HEADERS); /* here: the verdict's arrival */
    ts[TS_CANDIDATES] = ts[TS_BINADE] = ts[TS_SELECTED] = ts[TS_GATHERED] = ts[TS_WRITTEN] = ts[TS_HEADERS];
    print_stamps(0u, 0u);
    return S->verdict != 0;
  }
  if (solo) __syncthreads();

  /* (3) rank 0: the headers, then the candidates they announce; the keys >= M are kept (the others
   * cannot be among the k: U holds >= k keys >= M where the check passes). The check's count is
   * the select's: fewer than k kept leaves fewer than k composites >= its answer (S->out, below),
   * so no barrier of its own; the span's top is the row's largest key (every block's largest is
   * >= its bound, so the row's is kept). */
  mbar_wait(&S->bar[AIR_WIDE_BAR_HDR], 0);
  AIR_WIDE_STAMP(TS_HEADERS);
  const unsigned long long h = lane < cs ? S->hdr[lane] : 0ull;
  const unsigned hc = (unsigned)(h >> 32), hn = hc < seg ? hc : seg;
  const unsigned total = __reduce_add_sync(0xffffffffu, hn);
  const unsigned bulk = __reduce_add_sync(0xffffffffu, lane > 0 && lane < cs ? (hn * 8u + 15u) & ~15u : 0u);
  const bool over = __any_sync(0xffffffffu, hc > seg);
  const CT M = __reduce_max_sync(0xffffffffu, (CT)h);
  const CT km = __reduce_max_sync(0xffffffffu, lane < cs ? S->hmax[lane] : 0u); /* the span's top */
  if (t == 0) mbar_expect_tx(&S->bar[AIR_WIDE_BAR_CAND], bulk);
  mbar_wait(&S->bar[AIR_WIDE_BAR_CAND], 0);
  AIR_WIDE_STAMP(TS_CANDIDATES);
  /* the verdict to ranks 1 .. cs - 1, from the last warp's lanes */
  auto send_verdict = [&](bool ok) {
    if (t > NT - cs)
      cluster_send<unsigned>(&S->verdict, t - (NT - cs), ok ? 1u : 0u, &S->bar[AIR_WIDE_BAR_VERDICT], solo);
  };
  if (over) { /* a segment lost keys: the passes */
    send_verdict(false);
    __syncthreads(); /* the passes rewrite this scratch */
    return false;
  }
  unsigned long long cv[NV];
  bool cl[NV];
#pragma unroll
  for (int j = 0; j < NV; ++j) {
    const unsigned p = t + (unsigned)j * NT, b = p >> lg_seg;
    const unsigned hb = (unsigned)(S->hdr[b] >> 32);
    cv[j] = (p & (seg - 1)) < hb ? s_cand[p] : 0ull;
    cl[j] = (p & (seg - 1)) < hb && (CT)(cv[j] >> 32) >= M;
    if (cl[j]) cv[j] -= (unsigned long long)M << 32; /* relative: (key - M) << 32 | ~index */
  }

  /* (4) the k-th largest relative composite, and the k composites >= it: the bits of key - M
   * (its span's s bits; the first digit by binades where s is wide), then, where ties at the k-th
   * key remain, the index bits below those every index < len leaves 0 (their complements 1) */
  const int sb = 32 - __clz((int)(km - M)), hi = 32 + sb;
  unsigned long long mask = hi >= 64 ? 0ull : ~((1ull << hi) - 1ull), B = 0ull;
  unsigned q = (unsigned)P.k, cnt = 0xFFFFFFFFu;
  int top = hi;
  if (sb >= AIR_WIDE_LOG_MIN) air_wide_log_digit<NV>(cv, cl, sb, mask, B, q, par, S, top, cnt);
  AIR_WIDE_STAMP(TS_BINADE);
  if (!air_wide_select<unsigned long long, NV>(cv, cl, top, 32, mask, B, q, par, S, cnt)) {
    const int ib = R.len > 1 ? 64 - __clzll((long long)(R.len - 1)) : 0; /* index bits (<= 32) */
    const unsigned long long ones = ib >= 32 ? 0ull : (0xFFFFFFFFull << ib) & 0xFFFFFFFFull;
    mask |= ones;
    B |= ones;
    air_wide_select<unsigned long long, NV>(cv, cl, ib, 0, mask, B, q, par, S);
  }
  AIR_WIDE_STAMP(TS_SELECTED);
  /* the k composites >= B into the candidate buffer (read into cv before the select's first barrier:
   * every select runs a digit), at slots from one counter (air_wide_gather), then written out a
   * slot a thread: one copy of the emit's code, and a warp's stores to consecutive slots (the slots
   * by a warp scan, and each thread's 0-4 emits unrolled, took ~1.1 us: docs/perf-notes.md v0.42).
   * Where fewer than k were kept, the select let every one pass (B = 0): S->out < k is the check's
   * failure. */
  air_wide_gather<unsigned long long, NV>(cv, [&](int j) { return cl[j] && cv[j] >= B; }, &S->out, s_cand);
  __syncthreads();
  AIR_WIDE_STAMP(TS_GATHERED);
  const bool ok = S->out == (unsigned)P.k;
  send_verdict(ok);
  if (!ok) return false; /* every thread has read S->out; the passes may rewrite the scratch */
  const RawT* in_row = (const RawT*)P.in + R.start;
#pragma unroll 1
  for (int i = (int)t; i < (int)P.k; i += NT) {
    const unsigned long long c = s_cand[i];
    const KeyT key = (KeyT)((CT)(c >> 32) + M);
    const unsigned idx = ~(unsigned)c;
    air_emit(P, row, (int64_t)i, topk_raw_of_key<DT>(key, P.smallest != 0, in_row, idx), key, idx);
  }
  AIR_WIDE_STAMP(TS_WRITTEN);
  print_stamps(total, M);
#undef AIR_WIDE_STAMP
  return true;
}

#endif /* TOPK_CUDA_AIR_RADIX_AIR_CLUSTER_WIDE_CUH */
