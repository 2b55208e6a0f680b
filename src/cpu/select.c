/*
 * select.c: the fast CPU path (TOPK_ALGO_CPU_SELECT): threaded radix selection.
 *
 * Every element is mapped to its rank key (common/keys.h: larger is better), and a
 * row is reduced to a threshold: the k-th best key T, the number of keys better
 * than T, and how many of the elements equal to T to take (the lowest-indexed,
 * which is the deterministic tie rule). One last pass then writes the winners.
 *
 * Per row:
 *   1. Sampling filter (long rows, k <= len/64): the j-th best of ~4096 sampled
 *      keys, j chosen a few standard deviations past where the k-th should fall,
 *      is a threshold t that at least k keys reach with overwhelming probability.
 *      One pass collects the keys >= t (and indices). If there are >= k of them, the
 *      k best are among them and the rest of the row is never read again. Too few
 *      or too many (heavy ties at t) and we fall back to step 2 on the whole row.
 *   2. MSD radix selection over the candidates (the whole row, or step 1's list):
 *      each pass histograms the next digit (11 bits; 8 for short rows) of the keys
 *      that share the prefix found so far, and picks the digit holding the k-th.
 *      Each pass also records the candidates' min and max key: equal means every
 *      candidate ties (all-equal data ends after one pass), and a long common
 *      prefix is skipped at once (radix-adversarial data does not cost a pass per
 *      shared digit). Once few candidates remain, a pass also copies them (and
 *      the winners found so far) into a list of indices and keys, so later
 *      passes stop rereading the row (AIR Top-K's candidate buffer).
 *   3. Final pass over the candidates: keys above the threshold, then the first
 *      `need` keys equal to it, stopping as soon as both are written.
 *
 * Threads: rows are split across threads when the batch is large; a long row
 * that is a large share of the work is split into one contiguous chunk per
 * thread instead. Each thread keeps its own histogram and counts, and prefix
 * sums over the chunks (which are in index order) give every thread its output
 * slots, so the result is the same whatever the thread count and timing.
 * TOPK_SORTED sorts only the k results (stable LSD radix sort by key).
 * TOPK_NONDETERMINISTIC is accepted and ignored: deterministic is always allowed.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo.h"
#include "common/keys.h"

enum {
  SEL_MAX_THREADS     = 256,       /* TOPK_CPU_THREADS is capped here */
  SEL_DEFAULT_THREADS = 64,        /* online CPUs are capped here */
  SEL_PAR_MIN         = 1 << 16,   /* less work than this (elements) runs on the calling thread */
  SEL_LONG_ROW        = 1 << 17,   /* a row at least this long may be split across threads */
  SEL_MIN_CHUNK       = 1 << 15,   /* ... into chunks no shorter than this */
  SEL_DIGIT_LONG      = 11,        /* radix digit for long rows: 2048 counters fit in L1 */
  SEL_DIGIT_MAX       = 12,        /* ... stretched to 12 when that finishes the key (f32 with 20 equal bits) */
  SEL_DIGIT_SHORT     = 8,         /* short rows: clearing 2048 counters per pass would dominate */
  SEL_BIG_ROW         = 1 << 16,   /* rows at least this long use the long digit */
  SEL_SAMPLE_MIN_ROW  = 1 << 16,   /* the sampling filter pays off from here */
  SEL_SAMPLE_MAX      = 4096,
  SEL_ABORT_BLOCK     = 1 << 14,   /* the sampling filter checks for another thread's abort this often */
  SEL_FILTER_BLOCK    = 64,        /* ... and tests this many keys at once before looking closer */
  SEL_KEY_BLOCK       = 512,       /* keys made at once by a histogram pass (stays in L1) */
  SEL_SMALL_SORT      = 48         /* insertion sort below this many results */
};

typedef struct sel_pair {
  uint64_t key;
  int64_t  idx;
} sel_pair;

/* One thread's state for the row it works on; a worker owns one chunk of that row. */
typedef struct sel_worker {
  int64_t        lo, hi;       /* this worker's chunk of the row: [lo, hi) */
  const int64_t* src;          /* candidate list (ascending row indices within the chunk), or NULL: all of [lo, hi) */
  const void*    src_keys;     /* their rank keys (dtype width), so later passes never gather from the row */
  int64_t        src_len;      /* entries in src */
  int            src_buf;      /* which of bufs src points into; -1 when src is NULL */
  int64_t*       bufs[2];      /* owned index lists, grown on demand; passes ping-pong between them */
  void*          kbufs[2];     /* the keys of bufs' entries */
  int64_t        caps[2];      /* capacity of bufs and kbufs, in entries */
  int64_t        new_len;      /* entries the last filter or copying pass wrote */
  int            overflow;     /* the sampling filter found more keys >= t than it had room for */
  int64_t        cand;         /* elements of src whose key has the current prefix */
  int64_t        gt;           /* elements of src known to beat every candidate */
  uint64_t       kmin, kmax;   /* smallest and largest candidate key seen by the last pass */
  int64_t        gt_pos;       /* final pass: first output slot for this worker's winners */
  int64_t        tie_pos;      /* final pass: first output slot for its ties */
  int64_t        tie_quota;    /* final pass: how many of its ties (lowest indices first) to take */
  sel_pair*      pairs;        /* TOPK_SORTED: the row's k results before sorting, and sort scratch */
  sel_pair*      pairs_tmp;
  uint64_t       hist[1 << SEL_DIGIT_MAX]; /* this worker's digit histogram of the last pass */
  uint32_t       sub[4][1 << SEL_DIGIT_MAX];   /* the pass's interleaved partial histograms */
  uint64_t       sample[SEL_SAMPLE_MAX];   /* sampled keys (the worker that runs a row's first step) */
} sel_worker;

/* What every worker of one row reads during a pass. */
typedef struct sel_row {
  const topk_args* a;
  const void*      row;      /* the row's first element */
  int64_t          len;      /* row length */
  int64_t          out_base; /* the row's first output slot: r * k */
  uint64_t         flip;     /* TOPK_SMALLEST: the key mask, so that ~key is the rank key; else 0 */
  uint64_t         pmask;    /* candidates: (key & pmask) == pref; winners: (key & pmask) > pref */
  uint64_t         pref;
  int              shift;    /* histogram digit: (key >> shift) & dmask */
  uint64_t         dmask;
  int              copy;     /* this histogram pass also copies winners and candidates to bufs[dst] */
  int              every;    /* every element of every source is a candidate (and no copy) */
  int              lopsided; /* candidates are under 1/8 or over 7/8 of the sources: branch, don't mask */
  int              dst;
  uint64_t         thr;      /* sampling filter: keep keys >= thr ... */
  int64_t          cap;      /* ... at most this many per worker ... */
  atomic_int*      abort;    /* ... and stop early once any worker ran out of room */
  sel_pair*        pairs;    /* final pass: non-NULL (TOPK_SORTED) writes pairs instead of the outputs */
} sel_row;

typedef void (*sel_pass_fn)(const sel_row* rc, sel_worker* w);

/* ------------------------------------------------------------------ threads */

/* Online CPUs, capped; TOPK_CPU_THREADS (a positive integer) overrides. Read per call, so tests can vary it. */
static int sel_threads(void) {
  const char* env = topk_env("TOPK_CPU_THREADS");
  if (env && *env) {
    char* end = NULL;
    long v = strtol(env, &end, 10);
    if (end && *end == '\0' && v >= 1) return v > SEL_MAX_THREADS ? SEL_MAX_THREADS : (int)v;
  }
  /* sysconf reads /sys on Linux (microseconds): once per process is enough. Racing first calls agree. */
  static atomic_int online;
  int n = atomic_load_explicit(&online, memory_order_relaxed);
  if (n == 0) {
    long v = sysconf(_SC_NPROCESSORS_ONLN);
    n = v < 1 ? 1 : v > SEL_DEFAULT_THREADS ? SEL_DEFAULT_THREADS : (int)v;
    atomic_store_explicit(&online, n, memory_order_relaxed);
  }
  return n;
}

typedef struct sel_job {
  void (*fn)(void* ctx, int tid);
  void* ctx;
  int   tid;
} sel_job;

static void* sel_job_main(void* arg) {
  sel_job* j = (sel_job*)arg;
  j->fn(j->ctx, j->tid);
  return NULL;
}

/* Runs fn(ctx, tid) for tid in [0, nt): tid 0 on the calling thread. The work of a thread that
 * cannot be started runs on the calling thread afterwards: slower, never wrong. */
static void sel_parallel(int nt, void (*fn)(void* ctx, int tid), void* ctx) {
  if (nt <= 1) { fn(ctx, 0); return; }
  pthread_t th[SEL_MAX_THREADS];
  sel_job   jobs[SEL_MAX_THREADS];
  int       started[SEL_MAX_THREADS];
  for (int t = 1; t < nt; ++t) {
    jobs[t].fn = fn;
    jobs[t].ctx = ctx;
    jobs[t].tid = t;
    started[t] = pthread_create(&th[t], NULL, sel_job_main, &jobs[t]) == 0;
  }
  fn(ctx, 0);
  for (int t = 1; t < nt; ++t) {
    if (started[t]) pthread_join(th[t], NULL);
    else fn(ctx, t);
  }
}

typedef struct sel_phase {
  const sel_row* rc;
  sel_worker*    ws;
  sel_pass_fn    fn;
} sel_phase;

static void sel_phase_main(void* ctx, int tid) {
  sel_phase* ph = (sel_phase*)ctx;
  ph->fn(ph->rc, &ph->ws[tid]);
}

/* One pass of every worker of a row. */
static void sel_run_pass(const sel_row* rc, sel_worker* ws, int nt, sel_pass_fn fn) {
  sel_phase ph = {rc, ws, fn};
  sel_parallel(nt, sel_phase_main, &ph);
}

/* ------------------------------------------------------------------ output */

static void sel_store_index(const topk_args* a, int64_t slot, int64_t idx) {
  if (a->p.index_type == TOPK_INDEX_I64) ((int64_t*)a->indices)[slot] = idx;
  else if (a->p.index_type == TOPK_INDEX_I32) ((int32_t*)a->indices)[slot] = (int32_t)idx;
}

/* Result number s of the row: element i with key `key` and raw bits `bits`. */
static void sel_emit(const sel_row* rc, int64_t s, int64_t i, uint64_t key, uint64_t bits) {
  if (rc->pairs) {
    rc->pairs[s].key = key;
    rc->pairs[s].idx = i;
    return;
  }
  topk_store_bits(rc->a->values, rc->out_base + s, rc->a->p.dtype, bits);
  sel_store_index(rc->a, rc->out_base + s, i);
}

/* ------------------------------------------------------------------ passes, one set per dtype */

/*
 * ET: the raw bits type (also the key type); KEYF: bits -> order-preserving key (keys.h).
 * Every pass runs over a worker's source: its whole chunk, or its ascending index list
 * with the keys stored next to it.
 */
#define SEL_DEFINE_PASSES(SUF, ET, KEYF)                                                             \
  /* Sampling filter: indices of the chunk's keys >= thr, or overflow. Few keys pass, so a           \
   * branch-free (vectorisable) test of a block comes first and only a hit rescans the block. */     \
  static void sel_filter_##SUF(const sel_row* rc, sel_worker* w) {                                   \
    const ET* x = (const ET*)rc->row;                                                                \
    const ET flip = (ET)rc->flip, thr = (ET)rc->thr;                                                 \
    const int64_t cap = rc->cap < w->hi - w->lo ? rc->cap : w->hi - w->lo;                           \
    int64_t* out = w->bufs[0];                                                                       \
    ET* kout = (ET*)w->kbufs[0];                                                                     \
    int64_t m = 0;                                                                                   \
    w->overflow = 0;                                                                                 \
    for (int64_t b = w->lo; b < w->hi; b += SEL_ABORT_BLOCK) {                                       \
      if (atomic_load_explicit(rc->abort, memory_order_relaxed)) { w->overflow = 1; return; }        \
      const int64_t e = w->hi - b > SEL_ABORT_BLOCK ? b + SEL_ABORT_BLOCK : w->hi;                   \
      for (int64_t v = b; v < e; v += SEL_FILTER_BLOCK) {                                            \
        const int64_t ve = e - v > SEL_FILTER_BLOCK ? v + SEL_FILTER_BLOCK : e;                      \
        unsigned hit = 0;                                                                            \
        for (int64_t i = v; i < ve; ++i) hit |= (ET)(KEYF(x[i]) ^ flip) >= thr;                      \
        if (!hit) continue;                                                                          \
        for (int64_t i = v; i < ve; ++i) { /* branch-free append: the buffer has a block of slack */ \
          const ET key = (ET)(KEYF(x[i]) ^ flip);                                                    \
          out[m] = i;                                                                                \
          kout[m] = key;                                                                             \
          m += key >= thr;                                                                           \
        }                                                                                            \
        if (m > cap) {                                                                               \
          w->overflow = 1;                                                                           \
          atomic_store_explicit(rc->abort, 1, memory_order_relaxed);                                 \
          return;                                                                                    \
        }                                                                                            \
      }                                                                                              \
    }                                                                                                \
    w->new_len = m;                                                                                  \
  }                                                                                                  \
  /* Histogram of the candidates' next digit, their min and max, and optionally a copy. Keys are  \
   * made a block at a time (vectorisable), and four interleaved sub-histograms keep runs of equal   \
   * keys from serialising on one counter. */                                                        \
  static void sel_hist_##SUF(const sel_row* rc, sel_worker* w) {                                     \
    const ET* x = (const ET*)rc->row;                                                                \
    const ET flip = (ET)rc->flip, pmask = (ET)rc->pmask, pref = (ET)rc->pref, dmask = (ET)rc->dmask; \
    const int shift = rc->shift;                                                                     \
    const size_t bins = (size_t)rc->dmask + 1;                                                       \
    uint32_t(*sub)[1 << SEL_DIGIT_MAX] = w->sub;                                                     \
    memset(w->hist, 0, bins * sizeof w->hist[0]);                                                    \
    for (int q = 0; q < 4; ++q) memset(sub[q], 0, bins * sizeof sub[q][0]);                          \
    ET kmin = (ET)~(ET)0, kmax = 0;                                                                  \
    int64_t m = 0, since_flush = 0;                                                                  \
    int64_t* out = rc->copy ? w->bufs[rc->dst] : NULL;                                               \
    ET* kout = rc->copy ? (ET*)w->kbufs[rc->dst] : NULL;                                             \
    const int every = rc->every; /* every key is a candidate: the tight loop */                     \
    const int64_t count = w->src ? w->src_len : w->hi - w->lo;                                       \
    ET kb[SEL_KEY_BLOCK];                                                                            \
    for (int64_t b = 0; b < count; b += SEL_KEY_BLOCK) {                                             \
      const int nb = count - b > SEL_KEY_BLOCK ? SEL_KEY_BLOCK : (int)(count - b);                   \
      const int64_t* idx = w->src ? w->src + b : NULL;                                               \
      const ET* xb = x + w->lo + b;                                                                  \
      if (idx) memcpy(kb, (const ET*)w->src_keys + b, (size_t)nb * sizeof(ET));                     \
      else for (int j = 0; j < nb; ++j) kb[j] = (ET)(KEYF(xb[j]) ^ flip);                           \
      if (every) {                                                                                   \
        for (int j = 0; j < nb; ++j) {                                                               \
          kmin = kb[j] < kmin ? kb[j] : kmin;                                                        \
          kmax = kb[j] > kmax ? kb[j] : kmax;                                                        \
        }                                                                                            \
        int j = 0;                                                                                   \
        for (; j + 4 <= nb; j += 4) {                                                                \
          ++sub[0][(kb[j] >> shift) & dmask];                                                        \
          ++sub[1][(kb[j + 1] >> shift) & dmask];                                                    \
          ++sub[2][(kb[j + 2] >> shift) & dmask];                                                    \
          ++sub[3][(kb[j + 3] >> shift) & dmask];                                                    \
        }                                                                                            \
        for (; j < nb; ++j) ++sub[0][(kb[j] >> shift) & dmask];                                      \
      } else if (rc->lopsided) { /* nearly all or nearly none are candidates: branches predict */    \
        for (int j = 0; j < nb; ++j) {                                                               \
          const ET key = kb[j], hi = (ET)(key & pmask);                                              \
          if (hi == pref) {                                                                          \
            ++sub[j & 3][(key >> shift) & dmask];                                                    \
            kmin = key < kmin ? key : kmin;                                                          \
            kmax = key > kmax ? key : kmax;                                                          \
          }                                                                                          \
          if (out && hi >= pref) {                                                                   \
            out[m] = idx ? idx[j] : w->lo + b + j;                                                   \
            kout[m++] = key;                                                                         \
          }                                                                                          \
        }                                                                                            \
      } else { /* a coin flip per key: masks instead of branches */                                  \
        for (int j = 0; j < nb; ++j) {                                                               \
          const ET key = kb[j];                                                                      \
          const ET cm = (ET)((ET)0 - (ET)((ET)(key & pmask) == pref));                               \
          sub[j & 3][(key >> shift) & dmask] += cm & 1u;                                             \
          const ET lo = (ET)(key | (ET)~cm), up = (ET)(key & cm);                                    \
          kmin = lo < kmin ? lo : kmin;                                                              \
          kmax = up > kmax ? up : kmax;                                                              \
        }                                                                                            \
        if (out) {                                                                                   \
          for (int j = 0; j < nb; ++j) {                                                             \
            out[m] = idx ? idx[j] : w->lo + b + j;                                                   \
            kout[m] = kb[j];                                                                         \
            m += (ET)(kb[j] & pmask) >= pref;                                                        \
          }                                                                                          \
        }                                                                                            \
      }                                                                                              \
      since_flush += nb;                                                                             \
      if (since_flush > (int64_t)1 << 30 || b + nb == count) { /* before a 32-bit counter can wrap */ \
        for (size_t d = 0; d < bins; ++d) {                                                          \
          w->hist[d] += (uint64_t)sub[0][d] + sub[1][d] + sub[2][d] + sub[3][d];                     \
          sub[0][d] = sub[1][d] = sub[2][d] = sub[3][d] = 0;                                         \
        }                                                                                            \
        since_flush = 0;                                                                             \
      }                                                                                              \
    }                                                                                                \
    int64_t cand = 0;                                                                                \
    for (size_t d = 0; d < bins; ++d) cand += (int64_t)w->hist[d];                                   \
    w->cand = cand;                                                                                  \
    w->kmin = kmin;                                                                                  \
    w->kmax = kmax;                                                                                  \
    w->new_len = m;                                                                                  \
  }                                                                                                  \
  /* Writes this worker's winners and its quota of ties, in index order; stops when done. */         \
  static void sel_final_##SUF(const sel_row* rc, sel_worker* w) {                                    \
    const ET* x = (const ET*)rc->row;                                                                \
    const ET flip = (ET)rc->flip, pmask = (ET)rc->pmask, pref = (ET)rc->pref;                        \
    int64_t g = w->gt_pos, t = w->tie_pos;                                                           \
    const int64_t g_end = g + w->gt, t_end = t + w->tie_quota;                                       \
    if (g == g_end && t == t_end) return;                                                            \
    const int64_t count = w->src ? w->src_len : w->hi - w->lo;                                       \
    const ET* keys = (const ET*)w->src_keys;                                                         \
    for (int64_t j = 0; j < count; ++j) {                                                            \
      const int64_t i = w->src ? w->src[j] : w->lo + j;                                              \
      const ET key = w->src ? keys[j] : (ET)(KEYF(x[i]) ^ flip);                                     \
      const ET hi = (ET)(key & pmask);                                                               \
      if (hi > pref) sel_emit(rc, g++, i, key, x[i]);                                                \
      else if (hi == pref && t < t_end) sel_emit(rc, t++, i, key, x[i]);                             \
      else continue;                                                                                 \
      if (g == g_end && t == t_end) return;                                                          \
    }                                                                                                \
  }

SEL_DEFINE_PASSES(f32, uint32_t, topk_key_f32)
SEL_DEFINE_PASSES(f16, uint16_t, topk_key_f16)
SEL_DEFINE_PASSES(bf16, uint16_t, topk_key_bf16)
SEL_DEFINE_PASSES(f64, uint64_t, topk_key_f64)
SEL_DEFINE_PASSES(i32, uint32_t, topk_key_i32)
SEL_DEFINE_PASSES(u32, uint32_t, topk_key_u32)
SEL_DEFINE_PASSES(i64, uint64_t, topk_key_i64)
SEL_DEFINE_PASSES(u64, uint64_t, topk_key_u64)

typedef struct sel_passes {
  sel_pass_fn filter, hist, final;
} sel_passes;

static const sel_passes sel_passes_of[TOPK_DTYPE_COUNT] = {
    [TOPK_F32] = {sel_filter_f32, sel_hist_f32, sel_final_f32},
    [TOPK_F16] = {sel_filter_f16, sel_hist_f16, sel_final_f16},
    [TOPK_BF16] = {sel_filter_bf16, sel_hist_bf16, sel_final_bf16},
    [TOPK_F64] = {sel_filter_f64, sel_hist_f64, sel_final_f64},
    [TOPK_I32] = {sel_filter_i32, sel_hist_i32, sel_final_i32},
    [TOPK_U32] = {sel_filter_u32, sel_hist_u32, sel_final_u32},
    [TOPK_I64] = {sel_filter_i64, sel_hist_i64, sel_final_i64},
    [TOPK_U64] = {sel_filter_u64, sel_hist_u64, sel_final_u64},
};

/* ------------------------------------------------------------------ helpers */

/* The top `bits` bits of a `width`-bit key. */
static uint64_t sel_prefix_mask(int bits, int width) {
  if (bits <= 0) return 0;
  uint64_t all = width == 64 ? ~0ull : ((1ull << width) - 1ull);
  return (all >> (width - bits)) << (width - bits);
}

/* How many leading bits (of `width`) a and b share. */
static int sel_common_prefix(uint64_t a, uint64_t b, int width) {
  int n = 0;
  for (int bit = width - 1; bit >= 0 && !(((a ^ b) >> bit) & 1u); --bit) ++n;
  return n;
}

/* Makes worker buffer b hold `need` entries (keys of key_bytes each); the contents are not kept.
 * @return 0 if memory ran out: the caller then goes on without the list. */
static int sel_reserve(sel_worker* w, int b, int64_t need, size_t key_bytes) {
  if (w->caps[b] >= need) return 1;
  int64_t cap = w->caps[b] + w->caps[b] / 2;
  if (cap < need) cap = need;
  free(w->bufs[b]);
  free(w->kbufs[b]);
  w->caps[b] = 0;
  w->bufs[b] = NULL;
  w->kbufs[b] = NULL;
  if ((uint64_t)cap > SIZE_MAX / sizeof(int64_t)) return 0;
  w->bufs[b] = (int64_t*)malloc((size_t)cap * sizeof(int64_t));
  w->kbufs[b] = malloc((size_t)cap * key_bytes);
  if (!w->bufs[b] || !w->kbufs[b]) return 0;
  w->caps[b] = cap;
  return 1;
}

static uint64_t sel_splitmix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void sel_swap_u64(uint64_t* a, uint64_t* b) {
  uint64_t t = *a;
  *a = *b;
  *b = t;
}

static int sel_cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

/* The nth smallest of a[0..n): quickselect with a three-way partition (ties are common), and
 * qsort as the way out if pivots keep being poor. Reorders a. */
static uint64_t sel_nth_smallest(uint64_t* a, int64_t n, int64_t nth) {
  int64_t lo = 0, hi = n - 1;
  for (int rounds = 0; lo < hi; ++rounds) {
    if (rounds > 48) {
      qsort(a + lo, (size_t)(hi - lo + 1), sizeof *a, sel_cmp_u64);
      return a[nth];
    }
    const int64_t mid = lo + (hi - lo) / 2;
    uint64_t x = a[lo], y = a[mid], z = a[hi];
    const uint64_t pv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    int64_t lt = lo, gt = hi, i = lo;
    while (i <= gt) {
      if (a[i] < pv) sel_swap_u64(&a[lt++], &a[i++]);
      else if (a[i] > pv) sel_swap_u64(&a[i], &a[gt--]);
      else ++i;
    }
    if (nth < lt) hi = lt - 1;
    else if (nth > gt) lo = gt + 1;
    else return pv;
  }
  return a[nth];
}

/* Best first: key descending, index ascending. */
static int sel_pair_before(const sel_pair* x, const sel_pair* y) {
  return x->key != y->key ? x->key > y->key : x->idx < y->idx;
}

/*
 * Sorts the results best first. Stable LSD radix sort (8-bit digits, highest bucket first,
 * digits that every key shares skipped): the input lists equal keys in index order, so
 * stability is what orders ties by index.
 */
static void sel_sort_pairs(sel_pair* a, sel_pair* tmp, int64_t m, int width) {
  if (m < SEL_SMALL_SORT) {
    for (int64_t i = 1; i < m; ++i) {
      sel_pair v = a[i];
      int64_t j = i;
      for (; j > 0 && sel_pair_before(&v, &a[j - 1]); --j) a[j] = a[j - 1];
      a[j] = v;
    }
    return;
  }
  const int digits = width / 8;
  int64_t count[8][256];
  memset(count, 0, sizeof count);
  for (int64_t i = 0; i < m; ++i)
    for (int d = 0; d < digits; ++d) ++count[d][(a[i].key >> (8 * d)) & 0xFFu];
  sel_pair *from = a, *to = tmp;
  for (int d = 0; d < digits; ++d) {
    if (count[d][(from[0].key >> (8 * d)) & 0xFFu] == m) continue;
    int64_t pos[256], at = 0;
    for (int b = 255; b >= 0; --b) { pos[b] = at; at += count[d][b]; }
    for (int64_t i = 0; i < m; ++i) to[pos[(from[i].key >> (8 * d)) & 0xFFu]++] = from[i];
    sel_pair* t = from;
    from = to;
    to = t;
  }
  if (from != a) memcpy(a, from, (size_t)m * sizeof *a);
}

/* ------------------------------------------------------------------ one row */

/* Splits [0, len) into nt contiguous chunks and makes each worker's source its whole chunk. */
static void sel_chunk(sel_worker* ws, int nt, int64_t len) {
  const int64_t base = len / nt, extra = len % nt;
  for (int t = 0; t < nt; ++t) {
    ws[t].lo = base * t + (t < extra ? t : extra);
    ws[t].hi = ws[t].lo + base + (t < extra ? 1 : 0);
    ws[t].src = NULL;
    ws[t].src_keys = NULL;
    ws[t].src_len = 0;
    ws[t].src_buf = -1;
    ws[t].cand = ws[t].hi - ws[t].lo;
    ws[t].gt = 0;
  }
}

/* Step 1 (see the top): on success every worker's source is its list of keys >= t. */
static void sel_sample_filter(sel_row* rc, sel_worker* ws, int nt, int64_t k) {
  const int64_t len = rc->len;
  const topk_dtype dt = rc->a->p.dtype;
  if (len < SEL_SAMPLE_MIN_ROW || k > len / 64) return;
  const int64_t s = len / 16 < SEL_SAMPLE_MAX ? len / 16 : SEL_SAMPLE_MAX;
  uint64_t* keys = ws[0].sample;
  const double step = (double)len / (double)s;
  for (int64_t i = 0; i < s; ++i) { /* one jittered sample per stretch: periodic data cannot fool it */
    const double u = (double)(sel_splitmix((uint64_t)i) >> 11) * (1.0 / 9007199254740992.0);
    int64_t pos = (int64_t)(((double)i + u) * step);
    if (pos >= len) pos = len - 1;
    keys[i] = topk_key_of_bits(topk_load_bits(rc->row, pos, dt), dt) ^ rc->flip;
  }
  /* The k-th best falls near sample rank r; going 4 sigma + 4 past it makes "fewer than k keys
   * reach t" (the fallback case) vanishingly rare, at the price of a few times k candidates. */
  const double r = (double)k * (double)s / (double)len;
  const int64_t j = (int64_t)ceil(r + 4.0 * sqrt(r) + 4.0);
  if (j >= s / 8) return;
  const uint64_t thr = sel_nth_smallest(keys, s, s - 1 - j);
  const int64_t expected = (j + 1) * (len / s);
  const int64_t cap = 2 * expected + 1024;
  for (int t = 0; t < nt; ++t) {
    const int64_t c = cap < ws[t].hi - ws[t].lo ? cap : ws[t].hi - ws[t].lo;
    if (!sel_reserve(&ws[t], 0, c + SEL_FILTER_BLOCK, topk_dtype_size(dt))) return;
  }
  atomic_int abort;
  atomic_init(&abort, 0);
  rc->thr = thr;
  rc->cap = cap;
  rc->abort = &abort;
  sel_run_pass(rc, ws, nt, sel_passes_of[dt].filter);
  rc->abort = NULL;
  int64_t m = 0;
  for (int t = 0; t < nt; ++t) {
    if (ws[t].overflow) return; /* heavy ties at t: the radix passes handle them */
    m += ws[t].new_len;
  }
  if (m < k) return;
  for (int t = 0; t < nt; ++t) {
    ws[t].src = ws[t].bufs[0];
    ws[t].src_keys = ws[t].kbufs[0];
    ws[t].src_len = ws[t].new_len;
    ws[t].src_buf = 0;
    ws[t].cand = ws[t].new_len;
    ws[t].gt = 0;
  }
}

/*
 * Step 2: narrows the candidates until the result is known, then sets rc->pmask/pref
 * to the final threshold and every worker's output slots and tie quota.
 */
static void sel_radix(sel_row* rc, sel_worker* ws, int nt, int64_t k) {
  const topk_dtype dt = rc->a->p.dtype;
  const int width = topk_key_bits(dt);
  const int digit = rc->len >= SEL_BIG_ROW ? SEL_DIGIT_LONG : SEL_DIGIT_SHORT;
  int64_t need = k, total_cand = 0, total_gt = 0;
  for (int t = 0; t < nt; ++t) total_cand += ws[t].cand;
  int pb = 0;           /* key bits known: the candidates' common prefix */
  uint64_t pref = 0;
  for (;;) {
    rc->pmask = sel_prefix_mask(pb, width);
    rc->pref = pref;
    if (need == total_cand) break; /* every candidate is in the result */
    int d = digit < width - pb ? digit : width - pb;
    if (digit == SEL_DIGIT_LONG && width - pb <= SEL_DIGIT_MAX) d = width - pb; /* one wider digit finishes */
    rc->shift = width - pb - d;
    rc->dmask = (1ull << d) - 1ull;
    /* Copy once the survivors are few: from the row at 1/4 of it, from a list at half of it. */
    int64_t src_size = 0;
    for (int t = 0; t < nt; ++t) src_size += ws[t].src ? ws[t].src_len : ws[t].hi - ws[t].lo;
    const int64_t keep = total_cand + total_gt;
    rc->copy = ws[0].src ? keep <= src_size / 2 : keep <= rc->len / 4;
    rc->dst = ws[0].src_buf == 0 ? 1 : 0;
    for (int t = 0; t < nt && rc->copy; ++t)
      if (!sel_reserve(&ws[t], rc->dst, ws[t].cand + ws[t].gt + 1, topk_dtype_size(dt)))
        rc->copy = 0; /* keep rereading the row instead */
    rc->every = !rc->copy && total_cand == src_size;
    rc->lopsided = total_cand <= src_size / 8 || total_cand >= src_size - src_size / 8;
    sel_run_pass(rc, ws, nt, sel_passes_of[dt].hist);
    if (rc->copy) {
      for (int t = 0; t < nt; ++t) {
        ws[t].src = ws[t].bufs[rc->dst];
        ws[t].src_keys = ws[t].kbufs[rc->dst];
        ws[t].src_len = ws[t].new_len;
        ws[t].src_buf = rc->dst;
      }
    }
    uint64_t kmin = UINT64_MAX, kmax = 0;
    for (int t = 0; t < nt; ++t) {
      if (ws[t].cand == 0) continue;
      if (ws[t].kmin < kmin) kmin = ws[t].kmin;
      if (ws[t].kmax > kmax) kmax = ws[t].kmax;
    }
    if (kmin == kmax) { /* every candidate ties: the threshold is their key */
      rc->pmask = sel_prefix_mask(width, width);
      rc->pref = kmin;
      break;
    }
    const int common = sel_common_prefix(kmin, kmax, width);
    if (common >= pb + d) { /* one bucket held them all: skip every shared bit at once */
      pb = common;
      pref = kmin & sel_prefix_mask(pb, width);
      continue;
    }
    /* The digit b holding the need-th best: fewer than need above it, at least need from it up. */
    uint64_t above = 0;
    int64_t b = (int64_t)rc->dmask;
    for (; b > 0; --b) {
      uint64_t hb = 0;
      for (int t = 0; t < nt; ++t) hb += ws[t].hist[b];
      if (above + hb >= (uint64_t)need) break;
      above += hb;
    }
    total_cand = 0;
    for (int t = 0; t < nt; ++t) {
      for (int64_t e = b + 1; e <= (int64_t)rc->dmask; ++e) ws[t].gt += (int64_t)ws[t].hist[e];
      ws[t].cand = (int64_t)ws[t].hist[b];
      total_cand += ws[t].cand;
    }
    need -= (int64_t)above;
    total_gt += (int64_t)above;
    pref |= (uint64_t)b << rc->shift;
    pb += d;
    if (pb == width) { /* the whole key is known */
      rc->pmask = sel_prefix_mask(width, width);
      rc->pref = pref;
      break;
    }
  }
  /* Output slots: winners in chunk order, then the lowest-indexed `need` ties. */
  int64_t g = 0, tpos = k - need, left = need;
  for (int t = 0; t < nt; ++t) {
    ws[t].gt_pos = g;
    g += ws[t].gt;
    ws[t].tie_quota = ws[t].cand < left ? ws[t].cand : left;
    ws[t].tie_pos = tpos;
    tpos += ws[t].tie_quota;
    left -= ws[t].tie_quota;
  }
}

/* Selects row r with workers ws[0..nt): they may run on nt threads (a long row) or be one. */
static void sel_row_run(const topk_args* a, sel_worker* ws, int nt, int64_t r) {
  const topk_problem* p = &a->p;
  const topk_dtype dt = p->dtype;
  const int smallest = (p->flags & TOPK_SMALLEST) != 0;
  const int64_t len = topk_row_length(p, r);
  const int64_t k = p->k < len ? p->k : len; /* a shorter row: all of it, then padding */
  sel_row rc;
  memset(&rc, 0, sizeof rc);
  rc.a = a;
  rc.row = (const char*)a->in + topk_row_start(p, r) * (int64_t)topk_dtype_size(dt);
  rc.len = len;
  rc.out_base = r * p->k;
  rc.flip = smallest ? topk_key_mask(dt) : 0;
  if (k > 0) {
    if (nt > len / SEL_MIN_CHUNK) nt = len / SEL_MIN_CHUNK > 1 ? (int)(len / SEL_MIN_CHUNK) : 1;
    sel_chunk(ws, nt, len);
    sel_sample_filter(&rc, ws, nt, k);
    sel_radix(&rc, ws, nt, k);
    rc.pairs = (p->flags & TOPK_SORTED) ? ws[0].pairs : NULL;
    sel_run_pass(&rc, ws, nt, sel_passes_of[dt].final);
    if (rc.pairs) {
      sel_sort_pairs(ws[0].pairs, ws[0].pairs_tmp, k, topk_key_bits(dt));
      rc.pairs = NULL;
      for (int64_t s = 0; s < k; ++s)
        sel_emit(&rc, s, ws[0].pairs[s].idx, ws[0].pairs[s].key, topk_load_bits(rc.row, ws[0].pairs[s].idx, dt));
    }
  }
  const uint64_t worst = topk_worst_value_bits(dt, smallest);
  for (int64_t s = k; s < p->k; ++s) {
    topk_store_bits(a->values, rc.out_base + s, dt, worst);
    sel_store_index(a, rc.out_base + s, -1);
  }
}

/* ------------------------------------------------------------------ the call */

typedef struct sel_call {
  const topk_args* a;
  sel_worker*      ws;
  int              nt;         /* threads available */
  int64_t          total;      /* elements in all rows */
  atomic_llong     next_row;   /* rows are handed out one at a time to balance uneven rows */
} sel_call;

/* A row that is a large share of the work is split across threads; others go one per thread. */
static int sel_row_is_split(const sel_call* c, int64_t len) {
  return c->nt > 1 && len >= SEL_LONG_ROW && len >= c->total / (4 * (int64_t)c->nt);
}

static void sel_rows_main(void* ctx, int tid) {
  sel_call* c = (sel_call*)ctx;
  const topk_problem* p = &c->a->p;
  for (;;) {
    const int64_t r = (int64_t)atomic_fetch_add(&c->next_row, 1);
    if (r >= p->batch) return;
    if (!sel_row_is_split(c, topk_row_length(p, r))) sel_row_run(c->a, &c->ws[tid], 1, r);
  }
}

static void sel_free_workers(sel_worker* ws, int nw) {
  for (int t = 0; t < nw; ++t) {
    free(ws[t].bufs[0]);
    free(ws[t].bufs[1]);
    free(ws[t].kbufs[0]);
    free(ws[t].kbufs[1]);
    free(ws[t].pairs);
    free(ws[t].pairs_tmp);
  }
  free(ws);
}

static topk_status sel_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  (void)workspace; (void)workspace_bytes; (void)stream;
  const topk_problem* p = &a->p;

  sel_call c;
  c.a = a;
  c.nt = sel_threads();
  c.total = 0;
  atomic_init(&c.next_row, 0);
  int64_t longest = 0;
  for (int64_t r = 0; r < p->batch; ++r) {
    const int64_t len = topk_row_length(p, r);
    c.total += len; /* cannot overflow: validation bounded batch * ld (uniform) or n (offsets) */
    if (len > longest) longest = len;
  }
  if (c.total < SEL_PAR_MIN) c.nt = 1;
  int64_t whole_rows = 0, whole_total = 0;
  for (int64_t r = 0; r < p->batch; ++r) {
    const int64_t len = topk_row_length(p, r);
    if (!sel_row_is_split(&c, len)) { ++whole_rows; whole_total += len; }
  }
  int row_threads = c.nt < whole_rows ? c.nt : (int)whole_rows;
  if (whole_total < SEL_PAR_MIN || row_threads < 1) row_threads = 1;

  /* Everything that must exist is allocated before the first write, so running out of memory writes nothing. */
  /* Not calloc: the histograms are cleared per pass, and zeroing them up front would cost small calls dearly. */
  sel_worker* ws = (sel_worker*)malloc((size_t)c.nt * sizeof *ws);
  TOPK_RETURN_IF(!ws, TOPK_ERR_OUT_OF_MEMORY, "cannot allocate %d CPU workers", c.nt);
  for (int t = 0; t < c.nt; ++t) {
    ws[t].bufs[0] = ws[t].bufs[1] = NULL;
    ws[t].kbufs[0] = ws[t].kbufs[1] = NULL;
    ws[t].caps[0] = ws[t].caps[1] = 0;
    ws[t].pairs = ws[t].pairs_tmp = NULL;
  }
  if (p->flags & TOPK_SORTED) {
    const int64_t kmax = p->k < longest ? p->k : longest;
    const int owners = whole_rows > 0 ? row_threads : 1;
    for (int t = 0; t < owners; ++t) {
      if ((uint64_t)kmax < SIZE_MAX / sizeof(sel_pair)) {
        ws[t].pairs = (sel_pair*)malloc((size_t)(kmax > 0 ? kmax : 1) * sizeof(sel_pair));
        ws[t].pairs_tmp = (sel_pair*)malloc((size_t)(kmax > 0 ? kmax : 1) * sizeof(sel_pair));
      }
      if (!ws[t].pairs || !ws[t].pairs_tmp) {
        sel_free_workers(ws, c.nt);
        return topk_fail(TOPK_ERR_OUT_OF_MEMORY, "cannot allocate %lld sort pairs", (long long)kmax);
      }
    }
  }
  c.ws = ws;
  for (int64_t r = 0; r < p->batch; ++r)
    if (sel_row_is_split(&c, topk_row_length(p, r))) sel_row_run(a, ws, c.nt, r);
  if (whole_rows > 0) sel_parallel(row_threads, sel_rows_main, &c);
  sel_free_workers(ws, c.nt);
  return TOPK_SUCCESS;
}

static int sel_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)p; (void)dev; (void)why; (void)why_len;
  return 1;
}

static topk_status sel_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  (void)p; (void)dev;
  *bytes = 0;
  return TOPK_SUCCESS;
}

const topk_algo_ops topk_algo_cpu_select = {
    "cpu_select", TOPK_ALGO_CPU_SELECT, TOPK_BACKEND_CPU, sel_supports, sel_workspace_size, sel_run,
};
