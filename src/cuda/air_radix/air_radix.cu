/*
 * air_radix.cu: AIR Top-K (paper 003 sec. 3), the host side: path choice,
 * workspace layout and the launch sequence. The kernels and their invariants are
 * in air_radix_kernels.cuh.
 *
 * Eight paths, chosen from the problem's shape alone (identically in workspace_size
 * and run):
 *   COPY       k >= n, unsorted, uniform rows, no path forced: every element is a result;
 *              air_copy_kernel writes the rows and their indices in one launch, no
 *              workspace (AUTO sends these problems here: src/choose.c).
 *   ONE-BLOCK  rows of average length <= AIR_STAGE_BYTES / element size (8192 f32,
 *              16384 f16/bf16, 4096 f64), except uniform rows of >= 16 KB of 2- or 4-byte
 *              keys in batches that leave SMs idle (cluster_over_one: unsorted f32 <= 128
 *              rows, 16-bit <= 256 rows or from 24 KB any batch, sorted 16-bit rows of 32 KB
 *              <= 512 rows), which CLUSTER serves faster on Hopper: one thread block per row, the row staged
 *              in shared memory (n elements for uniform rows), all passes in one
 *              kernel with 8-bit digits (AIR_ONE_DIGIT_BITS; 256-bin histograms: short
 *              rows pay per bin).
 *              One launch in all; TOPK_SORTED adds nothing when k fits the in-kernel
 *              sort (AIR_OUT_BLOCK, below), else the CUB sort and decode launches.
 *   RESIDENT   (after ONE-BLOCK) uniform rows of 2- or 4-byte keys, k < n < 2^31, whose
 *              blocks of 256 threads x 8 vectors fit the GPU at one block per SM; taken
 *              by default only where measured faster on normal and uniform rows
 *              (res_by_default: 1-2 long rows, 1-4 for 16-bit keys and k <= 64, 1-2 rows
 *              where the delegate start serves; not where CLUSTER fits with k <= 64,
 *              nor where CLUSTER fits and the delegate start
 *              would not run: cluster_over_resident), forced with TOPK_AIR_PATH=resident: one
 *              cooperative launch, each row spread over many blocks that hold it in
 *              registers (air_resident_kernels.cuh). For k <= 1024 a delegate start
 *              first: a threshold from the blocks' thread maxima, every key >= it a
 *              candidate, ranked by every block (res_delegates). Else, or where its
 *              candidates overflow, cross-block passes until the chosen bin holds <=
 *              AIR_RES_CAP candidates, then every block ranks its share of them (few for
 *              the row's blocks) or the last block of the row finishes them in shared
 *              memory.
 *   FUSED      (when CLUSTER does not apply) batch <= SM count and batch x row
 *              length <= AIR_FUSED_MAX_ELEMS: every
 *              pass of MULTI in one cooperative launch (air_fused_kernel), passes
 *              separated by a per-row barrier instead of a kernel boundary; the
 *              kernel zeroes its own histograms. One launch instead of 4 to 8.
 *   ROWS       uniform rows longer than ONE-BLOCK stages, at least one row per SM, or half
 *              a row per SM for rows of >= 2^16 read once (16-bit keys: rows CLUSTER cannot
 *              hold, or of >= 2^17 read once): one block per row streams it from global
 *              memory, histogram and candidate buffer in shared memory
 *              (air_rows_kernels.cuh); rows of at least twice the buffer are read once
 *              (the one-read start: a running threshold fills the buffer); one launch,
 *              no workspace but the sorted part.
 *   CLUSTER    on Hopper, uniform rows (or one row given by offsets) above the ONE-BLOCK size and at
 *              most 8 x AIR_CLUSTER_MAX_SLICE_BYTES:
 *              a thread-block cluster of 1, 2, 4 or 8 blocks (1024 threads each) per
 *              row, the row staged across their shared memory (air_cluster_kernel; one
 *              launch, the row read from DRAM once, no workspace but the sorted part);
 *              few rows get larger clusters than their length needs, up to 16 blocks
 *              where the delegate start runs (launch_cluster).
 *   ADAPTIVE   on Hopper, rows given by offsets that the caller expects far shorter than
 *              the buffer (internal flag TOPK_INTERNAL_SHORT_ROWS, algo.h: Dr. Top-k's
 *              concatenation, whose capacity B is an upper bound the count rarely
 *              nears), batch <= SM count, where FUSED or MULTI would run on the
 *              buffer's size: the row length is known on the device only, so the
 *              ONE-BLOCK kernel runs first (a block per row, staged up to
 *              AIR_STAGE_BYTES) and marks each row longer than its stage in a flag
 *              per row (and leaves it); the FUSED kernel then runs, returning at
 *              once unless a row is marked, and takes the marked rows only. A
 *              short row costs a one-block launch and an empty cooperative launch
 *              instead of FUSED's chain of grid-wide passes (docs/perf-notes.md v0.5:
 *              the largest cluster in the first launch was slower than FUSED).
 *   MULTI      otherwise: rows in chunks of at most AIR_CHUNK_ROWS; per chunk a
 *              memset of the rows' state and histograms, one launch per pass
 *              (key passes, then, deterministic only, index passes) and one final
 *              filter launch; grid = blocks per row x rows, blocks per row chosen
 *              so that the chunk fills the GPU (AIR_BLOCKS_PER_SM blocks per SM)
 *              but each block gets at least AIR_MIN_TILES tiles.
 *              The sampled start (uniform rows of >= AIR_START_MIN_N, where start_rank
 *              finds a sample rank the buffer takes): a gather of 1/1024 of each row
 *              (air_sample_kernel), its start_rank-th key by the key passes over the
 *              sample (L2-resident, never buffered), then air_start_kernel reads the row
 *              once, writing every element >= that key to the candidate buffer, and the
 *              other passes read only the buffer. Where fewer than k elements or more
 *              than the buffer holds are >= the key, pass 0 runs again (the retry
 *              launch; it returns at once for the other rows). Plain MULTI reads a row
 *              two or three times (uniform floats: the first digit leaves n/8).
 *
 * Passes (MULTI, FUSED): key bits split into digits of AIR_DIGIT_BITS (11), the
 *   last one taking the rest: 16-bit keys 11+5 (2 passes), 32-bit 11+11+10 (3),
 *   64-bit 11+11+11+11+11+9 (6); deterministic ties add ceil(ib / 11) index passes
 *   over ~index (ib = bits of the largest index: 1 pass for rows <= 2^11, 2 for
 *   <= 2^22, 3 for <= 2^33), which return at once when the key passes left no tie
 *   to break (FUSED: are not run).
 *
 * Workspace (each part rounded up to 256 bytes, plus 255 bytes so that any caller
 * pointer can be aligned), with R = min(batch, AIR_CHUNK_ROWS), I = 4 bytes (8 when
 * n >= 2^31), E = element size, alpha = AIR_ALPHA:
 *   MULTI:   histograms  R x 2^d x I (d = the widest digit, 11)
 *            row states  R x sizeof(air_row_state)  (64 or 96 bytes)
 *            sampled start: the same again for the sample, and R x m x E sample
 *            bytes (m = max(n / 1024, min(16384, n / 64)) elements a row)
 *   FUSED:   as MULTI with R = batch, one histogram per pass (R x passes x 2^d x I)
 *            and an air_fused_row per row instead of the row state
 *            2 candidate buffers of floor(T / alpha) x (E + I) bytes each, where
 *            T = R x n (uniform rows; reused by every chunk) or n (variable rows:
 *            row r's share starts at offsets[r] / alpha)
 *   ADAPTIVE: as FUSED, plus batch x 4 bytes of row flags (the one-block kernel sets them)
 *   RESIDENT: batch x (3 x 2048 x 4 histogram bytes + 16 counter bytes + AIR_RES_CAP x (E + 4)
 *            candidate bytes + AIR_RES_MAX_BLOCKS x 4 count bytes): ~61 KB a 4-byte row
 *   sorted:  2 x batch x k x 8 bytes of sort keys (+ the same again for indices when
 *            the key is 64-bit or n >= 2^31), batch + 1 segment offsets (8 bytes,
 *            batch > 1) and CUB's temporary storage.
 *   ONE-BLOCK: only the sorted part, and none when the kernel sorts (AIR_OUT_BLOCK).
 *   ROWS, CLUSTER: only the sorted part.
 *
 * Sorted output (TOPK_SORTED): the selection writes sort keys instead of results.
 * Composite keys (below) with k <= AIR_SEGSORT_MAX: one block per row sorts them in
 * shared memory and writes the outputs (air_segsort_kernel; workspace: batch x k x 8
 * bytes). Otherwise CUB radix-sorts each row's k of them (DeviceRadixSort for batch 1, with 64-bit
 * counts; DeviceSegmentedRadixSort otherwise); a decode kernel writes the indices
 * and reads the values back from the input (exact bits: NaN payloads survive).
 *   key <= 32 bits and n < 2^31: one u64 per result, (~rankkey << (ib+1)) | index,
 *     sorted over KB + ib + 1 bits: best first, equal keys by index; padding is
 *     all ones (sorts last; the extra bit keeps it above every real index).
 *   otherwise: (~rankkey, index) pairs, sorted by index and then stably by key.
 * ONE-BLOCK with m = next power of two >= k <= AIR_BLOCK_SORT_MAX and the staged row
 * plus m x (8 + index bytes) within AIR_ONE_SMEM_BUDGET (a function of the shape and
 * TOPK_AIR_PATH only, so workspace_size and run agree): the kernel writes (~rankkey,
 * index) to shared memory, bitonic-sorts them (same order: best first, equal keys by
 * index) and writes the outputs itself (AIR_OUT_BLOCK): no workspace, one launch.
 *
 * Knobs for measurement (environment, read at every call): TOPK_AIR_ALPHA (the
 * adaptive-buffer alpha, default 128: on the H100 16..512 measure the same, see
 * docs/perf-notes.md), TOPK_AIR_DIGIT_BITS (8..12, default 11: 11 and 12 measure
 * the same, 8 and 10 slower), TOPK_AIR_COMMON_PREFIX=0 (the one-block and cluster
 * passes start at the top bit instead of below the bits every key of the row shares),
 * TOPK_AIR_CLUSTER_CS=1|2|4|8|16 (the CLUSTER path's blocks per row, where at least the
 * plan's), TOPK_AIR_CLUSTER_GROW=8|16 (the largest cluster few rows grow to where the delegate
 * start runs, default 16), TOPK_AIR_CLUSTER_DELEGATES=0|K (CLUSTER's delegate start off, or for k <= K
 * whatever the key width: by default for 16-bit keys only where the wide start cannot run),
 * TOPK_AIR_CLUSTER_WIDE=0|K (CLUSTER's wide start off, or for k <= K where the delegate start does not run),
 * TOPK_AIR_CLUSTER_STAMPS=1 (CLUSTER's delegate or wide start printf's its phase times; like
 * TOPK_AIR_RES_STAMPS, only in builds configured with -DTOPK_AIR_STAMPS=ON),
 * TOPK_AIR_MIN_TILES (MULTI / FUSED tiles per block at least, default 4 / 1)
 * TOPK_AIR_RES_VECS (RESIDENT 16-byte vectors a thread aims for, 1..8, default 2),
 * TOPK_AIR_RES_STAMPS=1 (RESIDENT: the finishing block printf's its phase times),
 * TOPK_AIR_RES_RANK=0 (RESIDENT: always the last block's radix finish, never the rank finish),
 * TOPK_AIR_RES_DELEGATES=0|K (RESIDENT's delegate start off, or for k <= K at every key width;
 * where it is off and CLUSTER fits, AUTO's path choice takes CLUSTER: cluster_over_resident),
 * TOPK_AIR_ROWS_CAP (ROWS candidate buffer entries, 1..16384; default 4096, 2048 for
 * 64-bit keys, or what the one-read start needs), TOPK_AIR_ROWS_FIRST_BITS (ROWS first
 * digit, 8..13, default 11), TOPK_AIR_ROWS_STREAM=0 (ROWS without its one-read start; the
 * path choice is unchanged), TOPK_AIR_ROWS_STREAM=1 (the one-read start without its
 * speculative threshold), TOPK_AIR_ROWS_SAMPLE=0 (the speculative one without its sampled start),
 * TOPK_AIR_ROWS_SAMPLE_KEEP=N (the sample's keep forced: tests make its threshold too high),
 * TOPK_AIR_ROWS_BPS=2|3 (ROWS' blocks per SM)
 * TOPK_AIR_START=0|N (MULTI's sampled start off, or from rows of N elements; default 2^22),
 * TOPK_AIR_START_RANK=R (the start's sample rank forced, no limit: tests make it fail both ways)
 * and TOPK_AIR_PATH=one|multi|fused|cluster|adaptive|rows|resident (force a path; tests use it).
 *
 * run() never allocates, synchronises or copies to the host; every launch is
 * checked with cudaGetLastError (TOPK_CUDA_TRY_LAUNCH).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "../../algo.h"
#include "../common/cuda_check.h"
#include "../common/occupancy.h"
#include "../common/workspace.h"
#include "../common/keys.cuh"
#include "air_radix_kernels.cuh"
#include "air_rows_kernels.cuh"
#include "air_resident_kernels.cuh"

/* ------------------------------------------------------------------ tuning */

static const int64_t AIR_ALPHA = 128;          /* paper sec. 3.2; re-measure on the H100 */
/* FUSED only up to this many elements in all: beyond, the multi-launch path's higher
 * occupancy wins and launch overhead no longer matters (measured: docs/perf-notes.md). */
static const int64_t AIR_FUSED_MAX_ELEMS = (int64_t)1 << 23;
static const int AIR_DIGIT_BITS = 11;          /* multi-block digits at most this wide (8..AIR_MAX_DIGIT_BITS) */
static const int64_t AIR_CHUNK_ROWS = 1024;    /* rows per MULTI launch (histograms: 8 KB each) */
static const int AIR_BLOCKS_PER_SM = 4;        /* MULTI grid target */
static const int64_t AIR_MIN_TILES = 4;        /* MULTI: tiles (4096 / 2048 elements) per block at least */
/* FUSED: a tile per block where the GPU holds that many blocks. Each pass of a block is a
 * chain of DRAM round trips, one per tile, so fewer tiles per block shorten every pass:
 * 1 x 2^20 f32, normal, k = 50: 40.5 us at 4 tiles, 30.0 at 2, 26.9 at 1 (perf-notes v0.7). */
static const int64_t AIR_FUSED_MIN_TILES = 1;
static const int64_t AIR_STAGE_BYTES = 32768;  /* ONE-BLOCK: row staged in shared memory up to this */
/* CLUSTER: bytes staged per block (two blocks per SM), or up to the larger size with 8 blocks */
static const int64_t AIR_CLUSTER_SLICE_BYTES = 96 * 1024;
static const int64_t AIR_CLUSTER_MAX_SLICE_BYTES = 192 * 1024;
/* CLUSTER, few rows: clusters grow while every row still has its cluster
 * resident at once and slices are larger than this: staging is one DRAM round trip per
 * 128 KB in flight per block, so small slices cut the first step, which led the timeline
 * (docs/perf-notes.md v0.7). */
static const int64_t AIR_CLUSTER_FAST_SLICE_BYTES = 32 * 1024;
/* ... and up to 8 blocks where the radix passes run: 16-block clusters measured slower at every
 * LLM shape (1 x 32000 f32: 19.4 us against 15.5; 1 x 262144: 22.7 against 20.9; session 38 on an
 * H200, k = 1024 in 1-4 rows: 1.00-1.19x the time at 8 blocks). With the delegate start (k <= 128),
 * up to 16 blocks: its exchanges do not grow with the cluster, while staging the slice is the
 * kernel's longest step (H100 stamps, f32 1 x 262144, k = 50: staged at 4.4 us of 10.5 with 8
 * blocks, at 3.1 of 9.0 with 16). Measured against 8 (H100, same runs, docs/perf-notes.md v0.38):
 * LLM graph replay 0.895-0.982x where it applies; `topk bench` 1-8 rows of 128256..524288, k 8 /
 * 50 / 128: 0.79-0.97x on 57 of 192 cases, 0.97-1.02x on the others (RESIDENT's among them).
 * TOPK_AIR_CLUSTER_GROW=8 keeps the start at 8 (measurement). */
static const int AIR_CLUSTER_GROW_MAX = 8;
static const int AIR_CLUSTER_GROW_DEL_MAX = 16;
/* ... and where the wide start runs (k up to 1024), on while slices hold more than this many keys,
 * whatever their bytes: its bound and collection take a look at every key of the block, so 8 blocks
 * of 4000 keys beat 4 of 8000 (H100 graph replay, k = 1024, 1-8 rows of 32000: f32 9.7-10.0 us a
 * call against 10.5-10.8, bf16 10.1-10.2 against 10.2-10.4; docs/perf-notes.md v0.42). */
static const int64_t AIR_WIDE_GROW_KEYS = 4096;
/* ONE-BLOCK sorted: the k results are sorted in the kernel (no CUB sort, no workspace) when
 * the next power of two m >= k is at most AIR_BLOCK_SORT_MAX and the dynamic shared memory
 * (staged row rounded to 16 bytes + m x (8 + index bytes)) is at most AIR_ONE_SMEM_BUDGET:
 * with the kernel's static shared memory (< 2.2 KB) it stays under the 48 KB that needs no
 * opt-in. f32 rows of 8192 (32 KB staged): k <= 1024 (k <= 512 when n >= 2^31). */
static const int64_t AIR_BLOCK_SORT_MAX = 2048;
/* ROWS: candidate buffer entries per block (rank key + 32-bit index each): 40 KB of shared
 * memory with the 8 KB histogram for keys up to 32 bits, so that 5 blocks fit an SM */
static const int64_t AIR_ROWS_CAP = 4096;
static const int64_t AIR_ROWS_CAP_64 = 2048;
static const int AIR_ROWS_FIRST_BITS = 11;
/* ROWS' one-read start: its buffer and histogram within this much shared memory (2 blocks per SM) */
static const int64_t AIR_ROWS_STREAM_SMEM = 112 * 1024;
/* ROWS by default from this many rows per SM (every SM has whole rows to stream), and for
 * 16-bit keys only where CLUSTER does not fit. Measured (docs/perf-notes.md v0.9, same
 * runs): f32, ROWS against CLUSTER, 256 x 151936, k = 1024, sorted: 0.26 against 0.36 ms;
 * 4096 x 131072, k = 2048: 2.19 against 5.12 ms; bf16 4096 x 32768, k = 2048: 0.96 against
 * 0.60 ms, 4096 x 131072: 2.48 against 2.44 ms (the streamed passes cost per element, and a
 * bf16 row has twice the elements per byte). */
static const int64_t AIR_ROWS_MIN_ROWS_PER_SM = 1;
/* ROWS also from half a row per SM for rows this long when the one-read start applies: one
 * block per row streams each row once, where MULTI or CLUSTER read it twice or more. Measured
 * (docs/perf-notes.md v0.13, same run, f32 uniform / normal / radix-adversarial, k 32 and
 * 256): 64 and 100 rows of 2^20 and 2^22: 0.26-0.91x MULTI's time; 32 rows: 0.80-1.95x. */
static const int64_t AIR_ROWS_HALF_MIN_N = (int64_t)1 << 16;
/* 16-bit keys take ROWS over CLUSTER from this row length when read once. Measured (docs/perf-
 * notes.md v0.13, bf16 normal, ROWS with the one-read start against CLUSTER): 4096 x 131072,
 * k = 2048: 1.97 against 2.52 ms; 256 x 151936, k = 50 / 1024: 0.147 / 0.192 against 0.163 /
 * 0.199 ms; but 4096 x 32768, k = 2048: 0.80 against 0.62 ms, 256 x 32000: 0.053 against 0.045. */
static const int64_t AIR_ROWS_16_MIN_N = (int64_t)1 << 17;
static const int64_t AIR_ONE_SMEM_BUDGET = 45056;
/* RESIDENT by default (where it fits) where it measured faster than the path the rule chose
 * before, on normal and uniform rows (docs/perf-notes.md v0.17; f32 and bf16; ratios are times
 * against CLUSTER's, from topk bench and graph replay): rows of >= 100000, k <= 1024 (the
 * largest k measured), and
 *  - 4-byte keys: one row, or two of >= 2^18. f32 1 x 262144, k = 50: 13.2 against 18.3 us
 *    (normal, graph replay), 22.5 against 25.1 (uniform, topk bench). 1 x 128256..151936:
 *    0.75-0.87x (normal, k <= 512; 1.01x at k = 1024), 0.96-1.01x (uniform). 1 x 2^20, too
 *    long for CLUSTER: 20.1-21.3 against FUSED's 27.6-29.0 us. Not 4 rows (uniform 1.01-1.17x)
 *    nor rows of < 100000 (uniform 1.09-1.44x at 32000 and 65536).
 *  - 16-bit keys: k <= AIR_RES_SMALL_K in 1-4 rows of <= 2^18 (bf16 k = 16..64: 0.77-0.97x
 *    normal, 0.82-1.02x uniform), or one row of >= 2^18 (1 x 262144, k = 512: 0.85x normal,
 *    0.80x uniform; k = 1024: 0.83x / 1.06x; 1 x 2^20: 20.8-23.4 against 25.5-38.3 us). Not
 *    larger k in shorter rows or more rows (uniform 1.09-1.33x).
 * Where CLUSTER fits and k <= 64, CLUSTER's delegate start (tie-aware since v0.21) beats all of
 * this (cluster_over_resident).
 * With RESIDENT's delegate start (session 27, docs/perf-notes.md v0.27; 1-2 rows of 131072 and
 * 262144, f32 and bf16, normal and uniform, k 50..1024, against CLUSTER in the same run) also:
 *  - 4-byte keys: two rows of < 2^18 with k <= AIR_RES_DEL_K_2ROWS (2 x 131072, k = 256: 0.66-
 *    0.89x; k = 512: 0.77-1.04x, so not there);
 *  - 16-bit keys: 1-2 rows with k <= AIR_RES_DEL_K_16 (k = 256 / 512: 0.73-0.95x; k = 1024:
 *    1.24-1.54x, so not there). */
static const int64_t AIR_RES_DEL_K_2ROWS = 256;
static const int64_t AIR_RES_DEL_K_16 = 512;
/* CLUSTER instead of ONE-BLOCK for rows of 16..32 KB in batches that leave SMs idle: a one-block
 * row has 8 warps to hide its passes' latency, a cluster block 32. Measured (forced paths,
 * uniform / normal rows, two runs each):
 *  - session 25 (1, 4, 16 rows, k 8..512; h100_air_one_vs_cluster_s25.csv): rows of >= 16 KB
 *    1.12-2.44x; rows of 8 KB (f32 2048) 0.60-0.92x at k >= 128, so not there;
 *  - session 31 (bf16, 1024 and 4096 rows; perf-notes v0.31): rows of 16384 1.26-1.44x, 12288
 *    1.04-1.16x, 10240 (20 KB) 0.85-1.01x;
 *  - session 32 (perf-notes v0.32; 1..512 rows, k 64..4096, h100_air_{few,mid}*_s32.csv):
 *    16-bit rows of 8192..16384 at <= 256 rows 1.04-3.38x, at 512 rows 1.16-2.16x from 24 KB but
 *    0.91-0.95x at 16 KB (k >= 256); f32 rows of 4096..8192 at <= 128 rows 0.995-2.36x, at 256 and
 *    512 rows 0.55-1.10x at k >= 256; sorted bf16 rows of 16384 at 1..512 rows 1.24-1.92x.
 * 64-bit keys, sorted 4-byte rows, sorted 16-bit rows under 32 KB or over 512 rows were not
 * measured and keep ONE-BLOCK. */
static const int64_t AIR_ONE_CLUSTER_MIN_BYTES = 16384;
static const int64_t AIR_ONE_CLUSTER_MAX_ROWS = 128;    /* 4-byte keys */
static const int64_t AIR_ONE_CLUSTER_16_MAX_ROWS = 256; /* 16-bit keys, rows of 16..24 KB */
static const int64_t AIR_ONE_CLUSTER_16_ANY_BYTES = 24576; /* 16-bit keys, unsorted: any batch from here */
static const int64_t AIR_ONE_CLUSTER_SORTED_MIN_BYTES = 32768;
static const int64_t AIR_ONE_CLUSTER_SORTED_MAX_ROWS = 512;
/* Uniform rows that ONE-BLOCK could stage but CLUSTER serves faster (where CLUSTER fits). */
static int cluster_over_one(const topk_problem* p, int es) {
  if (p->row_offsets || p->n > AIR_STAGE_BYTES / es || es > 4) return 0;
  const int64_t bytes = p->n * es;
  if (bytes < AIR_ONE_CLUSTER_MIN_BYTES) return 0;
  if (p->flags & TOPK_SORTED)
    return es == 2 && bytes >= AIR_ONE_CLUSTER_SORTED_MIN_BYTES && p->batch <= AIR_ONE_CLUSTER_SORTED_MAX_ROWS;
  if (es == 2) return p->batch <= AIR_ONE_CLUSTER_16_MAX_ROWS || bytes >= AIR_ONE_CLUSTER_16_ANY_BYTES;
  return p->batch <= AIR_ONE_CLUSTER_MAX_ROWS;
}
static const int64_t AIR_RES_SMALL_K = 64;
static const int64_t AIR_RES_MAX_K = 1024;
static const int64_t AIR_RES_MIN_N = 100000;
static const int64_t AIR_RES_LONG_N = (int64_t)1 << 18;
static const int AIR_RES_TARGET_VECS = 2;
/* RESIDENT's delegate start: for k up to this; a block vouches for at most 256 keys (8 warps x
 * 32). Measured (session 27, TOPK_AIR_PATH=resident, the start on and off, same run;
 * docs/perf-notes.md v0.27): f32 1 x 2^20,
 * k = 32..1024: uniform 0.49-0.56x, normal 0.70-0.84x, radix-adversarial 0.40-0.51x; bf16 normal
 * and uniform k <= 256 0.56-0.61x; 1-2 rows of 131072 / 262144, k <= 512: 0.52-0.96x. k = 1024
 * lost where the candidates were too many for the rank finish (res_delegates now asks
 * air_res_rank_fits). Where the start's candidates overflow on ties (16-bit keys: bf16 uniform
 * and radix-adversarial rows) it takes the tie path or the keys above its threshold instead of
 * the radix passes, which cost 1.20-1.31x. */
static const int64_t AIR_RES_DEL_MAX_K = 1024;
static const int64_t AIR_RES_DEL_MAX_Q = 256;
enum { MAX_PASSES = AIR_MAX_PASSES };

/* ------------------------------------------------------------------ the plan */

typedef struct air_layout {
  int copy;             /* COPY: k >= n, unsorted, uniform rows: air_copy_kernel, no workspace */
  int one_block;
  int cluster;          /* CLUSTER path: cluster_cs blocks per row, cluster_slice elements staged in each */
  int cluster_cs;
  int64_t cluster_slice;
  size_t cluster_smem;
  int fused;            /* MULTI passes in one cooperative launch (air_fused_kernel) */
  int adaptive;         /* ADAPTIVE: the one-block kernel (stage_cap), then FUSED on the rows it left */
  int resident;         /* RESIDENT: air_resident_kernel, the rows in registers of co-resident blocks */
  int rows;             /* ROWS: air_rows_kernel, a block per row streaming it (rows_first_bits, rows_cap) */
  int rows_first_bits;
  int64_t rows_cap;
  int rows_stream;      /* ROWS: AIR_ROWS_STREAM_OFF, _EXACT or _SPEC and its flags (air_rows_stream); rows_cap is then >= its need */
  size_t rows_smem;
  int key_bits;         /* 16, 32, 64 */
  int es;               /* element bytes */
  int idx64;            /* IdxT is unsigned long long */
  int ib;               /* index bits */
  int deterministic;
  int out_mode;         /* AIR_OUT_* */
  int cshift;
  int64_t alpha;
  int n_passes;
  air_pass_desc passes[MAX_PASSES];
  int hist_bits;        /* MULTI/FUSED: the widest digit; row histograms have 2^hist_bits bins */
  int64_t chunk_rows;   /* MULTI */
  int64_t bpr;          /* MULTI: most blocks per row (by work); launch_multi caps it by occupancy */
  int64_t buf_elems;    /* MULTI: elements per candidate buffer */
  int start;            /* MULTI's sampled start (air_start_bound): start_m sample elements a row */
  int64_t start_m, start_rank, start_limit;
  int start_group;      /* sample elements per group (32 bytes) */
  int64_t stage_cap;    /* ONE-BLOCK: staged row length */
  int bsort_m;          /* ONE-BLOCK sorted in the kernel (AIR_OUT_BLOCK): sort slots per row; else 0 */
  int segsort_m;        /* sorted by air_segsort_kernel (composite keys, k <= AIR_SEGSORT_MAX): its m; else 0 */
  size_t one_smem;      /* ONE-BLOCK: dynamic shared memory per block */
  int sort_pairs_first_bits, sort_pairs_second_bits, sort_keys_bits;
  size_t cub_bytes;
  /* offsets from the aligned base */
  size_t hist, state, buf_raw[2], buf_idx[2], sk[2], si[2], seg, cub, ovf;
  size_t res_hist, res_ctrl, res_cand_raw, res_cand_idx, res_blk; /* RESIDENT */
  size_t start_hist, start_state, start_raw; /* MULTI's sampled start */
  size_t zero_bytes;    /* MULTI: histograms + states, zeroed per chunk */
  size_t total;
} air_layout;

/* Bits needed for the values 0..v (0 for v == 0). */
static int bits_for(uint64_t v) {
  int bits = 0;
  while (bits < 64 && (v >> bits) != 0) ++bits;
  return bits;
}

static int env_digit_bits(void) {
  const char* s = topk_env("TOPK_AIR_DIGIT_BITS");
  const int b = s && *s ? atoi(s) : 0;
  return b >= 8 && b <= AIR_MAX_DIGIT_BITS ? b : AIR_DIGIT_BITS;
}

/* TOPK_AIR_COMMON_PREFIX=0 turns the common-prefix start of the one-block and cluster passes off (measurement) */
static int env_common_prefix(void) {
  const char* s = topk_env("TOPK_AIR_COMMON_PREFIX");
  return !(s && strcmp(s, "0") == 0);
}

/* TOPK_AIR_CLUSTER_CS=1|2|4|8|16 forces the CLUSTER path's blocks per row where the row fits them (measurement) */
static int env_cluster_cs(void) {
  const char* s = topk_env("TOPK_AIR_CLUSTER_CS");
  const int c = s && *s ? atoi(s) : 0;
  return c >= 1 && c <= AIR_CLUSTER_MAX_BLOCKS && (c & (c - 1)) == 0 ? c : 0;
}

/* TOPK_AIR_CLUSTER_GROW=8|16: the largest cluster an unforced CLUSTER launch grows to where the
 * delegate start runs (measurement; default AIR_CLUSTER_GROW_DEL_MAX) */
static int env_cluster_grow_del(void) {
  const char* s = topk_env("TOPK_AIR_CLUSTER_GROW");
  const int c = s && *s ? atoi(s) : 0;
  return c == 8 || c == 16 ? c : AIR_CLUSTER_GROW_DEL_MAX;
}

/* A start's k limit from the environment (0: off), or dflt where unset or not a count */
static int64_t env_kmax(const char* name, int64_t dflt) {
  const char* s = topk_env(name);
  if (!s || !*s) return dflt;
  char* end = NULL;
  const long long v = strtoll(s, &end, 10);
  return end && *end == '\0' && v >= 0 ? (int64_t)v : dflt;
}
/*
 * CLUSTER's wide start (air_cluster_wide.cuh) for k <= AIR_CLUSTER_WIDE_K_MAX where the delegate
 * start does not run, keys of up to 32 bits: one exchange and a radix select in rank 0, instead of
 * the radix passes' rounds. TOPK_AIR_CLUSTER_WIDE=0 turns it off, =K takes it for k <= K
 * (measurement, tests).
 */
static const int64_t AIR_CLUSTER_WIDE_K_MAX = 1024;
static int64_t env_cluster_wide_kmax(void) { return env_kmax("TOPK_AIR_CLUSTER_WIDE", AIR_CLUSTER_WIDE_K_MAX); }
/*
 * CLUSTER's delegate start (air_cluster_delegates) for k <= AIR_CLUSTER_DEL_K_MAX, but for 16-bit
 * keys only where the wide start cannot take k (over its limit).
 * TOPK_AIR_CLUSTER_DELEGATES=0 turns it off, =K (K >= 1) takes it for k <= K at every key width
 * (measurement, tests); TOPK_AIR_CLUSTER_STAMPS=1 makes rank 0 printf its phase times (measurement;
 * builds configured with -DTOPK_AIR_STAMPS=ON only).
 */
/* k <= 128: 0.70-1.03x the radix passes' time (f32, bf16 normal); k = 256: 1.17-1.69x (perf-notes v0.20).
 * The wide start instead, at k = 50 (H100 graph replay, AUTO, the 32 LLM shapes, same call, three
 * runs each, docs/perf-notes.md v0.44): bf16 0.86-1.01x the delegate start's time (geomean 0.93-0.94
 * in two calls); f32 0.94-0.97x at 32000, 0.99-1.00x at 151936 and 2-8 x 262144, but 1.025-1.03x at
 * 2-4 x 128256 and 1.06x at 1 x 262144 (RESIDENT runs there without the delegate start): so 16-bit
 * keys only. */
static const int64_t AIR_CLUSTER_DEL_K_MAX = 128;
static int cluster_del_k(int64_t k, int es) {
  const int64_t forced = env_kmax("TOPK_AIR_CLUSTER_DELEGATES", -1);
  if (forced >= 0) return k <= forced;
  return k <= AIR_CLUSTER_DEL_K_MAX && (es != 2 || k > env_cluster_wide_kmax());
}
static int env_cluster_stamps(void) {
  const char* s = topk_env("TOPK_AIR_CLUSTER_STAMPS");
  return s && strcmp(s, "1") == 0;
}

/*
 * The delegate start's shape for clusters of cs blocks: *ndel = D delegates, the smallest
 * power of two >= 2k (rank 0 then ranks ~1.39k candidates in rows of random order), >= 16
 * (whole 16-byte groups when they are ranked) and >= cs; published by groups of the
 * returned number of threads: a warp, or fewer where D needs more than a warp's worth.
 * 0: no delegate start (k beyond the limit, or D over AIR_CLUSTER_DEL_MAX, half that for
 * 64-bit keys: the scratch holds 4 KB of them).
 */
static int cluster_dgroup(int cs, int64_t k, int es, int* ndel) {
  *ndel = 0;
  if (!cluster_del_k(k, es)) return 0;
  const int64_t dmax = es == 8 ? AIR_CLUSTER_DEL_MAX / 2 : AIR_CLUSTER_DEL_MAX;
  int64_t d = 16;
  while (d < 2 * k || d < cs) d *= 2;
  if (d > dmax || d > (int64_t)cs * AIR_CLUSTER_DEL_BLOCK_MAX) return 0;
  const int64_t warps = (int64_t)cs * (AIR_CLUSTER_THREADS / 32);
  *ndel = (int)d;
  return d <= warps ? 32 : (int)((int64_t)AIR_CLUSTER_THREADS * cs / d);
}

/* Where the wide start may run at some cluster size (it grows the cluster to 16 as the delegate start does) */
static int cluster_wide_k(int64_t k, int es) {
  int nd;
  return es <= 4 && k <= env_cluster_wide_kmax() && !cluster_dgroup(AIR_CLUSTER_MAX_BLOCKS, k, es, &nd);
}
/*
 * The wide start's q for clusters of cs blocks with slices of `slice` elements: each block's
 * bound is its q-th largest thread maximum, q = ceil(k / cs) + 4 sqrt(ceil(k / cs)) + 1, the margin
 * that makes rank 0's check hold in rows of random order (air_cluster_wide.cuh (3)). 0 (no wide
 * start) where q > 512 (the bounds would pass most keys: 1 or 2 blocks at k = 1024), where the
 * delegate start runs, or where its buffer does not fit beside the slice (8 KB left for the
 * kernel's static shared memory).
 */
static int cluster_wide_q(int cs, int64_t k, int es, int64_t slice, const topk_device_info* dev) {
  int nd;
  if (es > 4 || k > env_cluster_wide_kmax() || cluster_dgroup(cs, k, es, &nd) || !dev) return 0;
  const int64_t q = (k + cs - 1) / cs, qb = q + (int64_t)ceil(4.0 * sqrt((double)q)) + 1;
  if (qb > 512) return 0;
  if (air_cluster_smem_bytes(slice, es) + AIR_WIDE_EXTRA > dev->smem_per_block_optin - 8192) return 0;
  return (int)qb;
}

/* TOPK_AIR_MIN_TILES=T: MULTI and FUSED blocks get at least T tiles each (measurement; else dflt) */
static int64_t env_min_tiles(int64_t dflt) {
  const char* s = topk_env("TOPK_AIR_MIN_TILES");
  const long long t = s && *s ? atoll(s) : 0;
  return t >= 1 && t <= 1024 ? (int64_t)t : dflt;
}

/* MULTI / FUSED blocks per row by work: min_tiles tiles (4096 / 2048 elements) each, of the average row */
static int64_t blocks_by_work(int es, int64_t n, int64_t batch, int by_offsets, int64_t min_tiles) {
  const int64_t tile = (int64_t)AIR_THREADS * (es == 8 ? 8 : 16);
  const int64_t avg = by_offsets ? (n / batch > 0 ? n / batch : 1) : (n > 0 ? n : 1);
  const int64_t b = ((avg + tile - 1) / tile + min_tiles - 1) / min_tiles;
  return b < 1 ? 1 : b;
}

/*
 * MULTI's sampled start (air_start_bound) for uniform rows of at least this many elements:
 * the sample is 1/AIR_START_SAMPLE_DIV of the row (at least AIR_START_MIN_SAMPLE elements).
 * TOPK_AIR_START=0 turns it off, =N takes it from rows of N elements (measurement, tests).
 */
static const int64_t AIR_START_MIN_N = (int64_t)1 << 22;
static const int64_t AIR_START_SAMPLE_DIV = 1024;
static const int64_t AIR_START_MIN_SAMPLE = 16384; /* or 1/64 of the row, if less */
static int64_t env_start_min_n(void) { return env_kmax("TOPK_AIR_START", AIR_START_MIN_N); }
/* TOPK_AIR_START_RANK=R (tests): the sample rank R, with no limit on the sample elements >= its
 * key, so that the start can be made to fail both ways (too few candidates, overflow) */
static int64_t env_start_rank(void) { return env_kmax("TOPK_AIR_START_RANK", 0); }

/*
 * The start's sample rank for a row of n with k results and a buffer of cap elements, from
 * m sample elements: the rank whose key has k elements above it in the row, plus six
 * standard deviations (binomial) and 8, so that fewer than k elements >= the bound is a
 * ~1e-9 event; and the most sample elements >= the bound whose row count still fits the
 * buffer, six deviations inside it. 0 where the two cross (k too close to the buffer).
 */
static int64_t start_rank(int64_t n, int64_t k, int64_t cap, int64_t m, int64_t* limit) {
  const double lo = (double)k * (double)m / (double)n, hi = (double)cap * (double)m / (double)n;
  const double r = ceil(lo + 6.0 * sqrt(lo) + 8.0), lim = floor(hi - 6.0 * sqrt(hi));
  *limit = (int64_t)lim;
  return r <= lim && r < (double)m ? (int64_t)r : 0;
}

static int64_t env_alpha(void) {
  const char* s = topk_env("TOPK_AIR_ALPHA");
  if (!s || !*s) return AIR_ALPHA;
  long long a = atoll(s);
  return a >= 2 ? (int64_t)a : AIR_ALPHA;
}

/* TOPK_AIR_ROWS_CAP / TOPK_AIR_ROWS_FIRST_BITS: the ROWS path's candidate buffer and first digit (measurement, tests) */
static int64_t env_rows_cap(void) { /* 0: not forced */
  const char* s = topk_env("TOPK_AIR_ROWS_CAP");
  const long long c = s && *s ? atoll(s) : 0;
  return c >= 1 && c <= 16384 ? (int64_t)c : 0;
}
/* TOPK_AIR_ROWS_STREAM=0: ROWS without the one-read start; =1: without its speculative
 * threshold; TOPK_AIR_ROWS_SAMPLE=0: the speculative one without its sampled start;
 * TOPK_AIR_ROWS_SAMPLE_KEEP=N (1..1024): the sample's keep forced (measurement, tests).
 * Returns the kernel's stream argument: an AIR_ROWS_STREAM_OFF/EXACT/SPEC and its flags. */
static int env_rows_stream(void) {
  const char* s = topk_env("TOPK_AIR_ROWS_STREAM");
  if (s && strcmp(s, "0") == 0) return AIR_ROWS_STREAM_OFF;
  if (s && strcmp(s, "1") == 0) return AIR_ROWS_STREAM_EXACT;
  const char* ns = topk_env("TOPK_AIR_ROWS_SAMPLE");
  if (ns && strcmp(ns, "0") == 0) return AIR_ROWS_STREAM_SPEC | AIR_ROWS_STREAM_NO_SAMPLE;
  const char* ks = topk_env("TOPK_AIR_ROWS_SAMPLE_KEEP");
  const long keep = ks && *ks ? atol(ks) : 0;
  return AIR_ROWS_STREAM_SPEC | (keep >= 1 && keep <= 1024 ? (int)keep << AIR_ROWS_STREAM_KEEP_SHIFT : 0);
}

static int env_rows_first_bits(void) {
  const char* s = topk_env("TOPK_AIR_ROWS_FIRST_BITS");
  const int b = s && *s ? atoi(s) : 0;
  return b >= AIR_ROWS_MIN_FIRST_BITS && b <= AIR_ROWS_MAX_FIRST_BITS ? b : AIR_ROWS_FIRST_BITS;
}

enum { PATH_CHOOSE = -1, PATH_MULTI = 0, PATH_ONE = 1, PATH_FUSED = 2, PATH_CLUSTER = 3, PATH_ADAPTIVE = 4,
       PATH_ROWS = 5, PATH_COPY = 6, PATH_RESIDENT = 7 };
static int env_path(void) {
  const char* s = topk_env("TOPK_AIR_PATH");
  if (!s) return PATH_CHOOSE;
  if (strcmp(s, "one") == 0) return PATH_ONE;
  if (strcmp(s, "multi") == 0) return PATH_MULTI;
  if (strcmp(s, "fused") == 0) return PATH_FUSED;
  if (strcmp(s, "cluster") == 0) return PATH_CLUSTER;
  if (strcmp(s, "adaptive") == 0) return PATH_ADAPTIVE;
  if (strcmp(s, "rows") == 0) return PATH_ROWS;
  if (strcmp(s, "resident") == 0) return PATH_RESIDENT;
  return PATH_CHOOSE;
}

/* TOPK_AIR_RES_VECS=1..8: the 16-byte vectors per thread RESIDENT aims for (measurement) */
static int env_res_vecs(void) {
  const char* s = topk_env("TOPK_AIR_RES_VECS");
  const int v = s && *s ? atoi(s) : 0;
  return v >= 1 && v <= AIR_RES_VECS ? v : AIR_RES_TARGET_VECS;
}

/* RESIDENT: the fewest blocks a row of n elements of es bytes needs (each holds AIR_RES_VECS
 * 16-byte vectors a thread, the unaligned head and tail aside) */
static int64_t res_min_blocks(int64_t n, int es) {
  const int64_t per_block = (int64_t)AIR_RES_VECS * AIR_RES_THREADS * (16 / es);
  const int64_t g = (n + per_block - 1) / per_block;
  return g < 1 ? 1 : g;
}

/* RESIDENT's blocks per SM: the occupancy of the dtype's kernel (cached per device; 1 where
 * the query fails), the same figure for the plan and the launch. */
static int res_occupancy(topk_dtype dt, const topk_device_info* dev) {
  static int cache[5][TOPK_OCC_DEVICES]; /* common/occupancy.h */
  const void* kernel;
  int slot;
  switch (dt) {
    case TOPK_F32: kernel = (const void*)air_resident_kernel<TOPK_F32>; slot = 0; break;
    case TOPK_F16: kernel = (const void*)air_resident_kernel<TOPK_F16>; slot = 1; break;
    case TOPK_BF16: kernel = (const void*)air_resident_kernel<TOPK_BF16>; slot = 2; break;
    case TOPK_I32: kernel = (const void*)air_resident_kernel<TOPK_I32>; slot = 3; break;
    case TOPK_U32: kernel = (const void*)air_resident_kernel<TOPK_U32>; slot = 4; break;
    default: return 0;
  }
  int occ = 0;
  if (topk_occupancy_cached(cache[slot], dev ? dev->ordinal : -1, kernel, AIR_RES_THREADS, 0, &occ) != cudaSuccess)
    return 1;
  return occ < 1 ? 1 : occ;
}

/* RESIDENT fits: uniform rows of 2- or 4-byte keys with 32-bit indices, every row's fewest
 * blocks resident at once at the kernel's occupancy (1 x 2^21 f32 takes 256 blocks: two an SM
 * on the H100), and k < n (k >= n is the copy). */
static int res_fits(const topk_problem* p, const topk_device_info* dev, int es) {
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 0;
  if (!(sms > 0 && !p->row_offsets && es <= 4 && p->n <= INT32_MAX && p->k < p->n && p->batch <= 65535 &&
        res_min_blocks(p->n, es) <= AIR_RES_MAX_BLOCKS))
    return 0;
  return p->batch * res_min_blocks(p->n, es) <= (int64_t)sms * res_occupancy(p->dtype, dev);
}

/*
 * RESIDENT's delegate start for k results over g blocks a row: each block vouches for q keys
 * >= its bound, and the threshold is (a lower bound on) the j-th largest bound, q x j >= k.
 * q = ceil(2k / g) puts j near g / 2, away from the lowest bounds (a numpy simulation of 2^20
 * normal and uniform f32 over 264 blocks: ~1.1k candidates for k <= 64, ~2.5k at k = 1024; with
 * the least bound, j = g, 1.5k and 2-4.3k). Off (q = j = 0) above the k limit, where no q <= 256
 * fits, or where ~2.5k candidates would not fit the rank finish over g blocks (f32 1 x 131072,
 * k = 1024, 64 blocks: the last block's radix finish ran, 1.04-1.12x the radix start's time).
 */
static void res_delegates(int64_t k, int64_t g, unsigned* q, unsigned* j) {
  *q = *j = 0;
  /* TOPK_AIR_RES_DELEGATES=0|K: off, or for k <= K at every key width (measurement, tests) */
  const int64_t kmax = env_kmax("TOPK_AIR_RES_DELEGATES", AIR_RES_DEL_MAX_K);
  if (k > kmax || g > AIR_RES_DEL_MAX_BLOCKS) return;
  int64_t qq = (2 * k + g - 1) / g;
  if (qq > AIR_RES_DEL_MAX_Q) qq = AIR_RES_DEL_MAX_Q;
  int64_t jj = (k + qq - 1) / qq;
  if (jj > g) {
    qq = (k + g - 1) / g;
    jj = (k + qq - 1) / qq;
  }
  if (qq > AIR_RES_DEL_MAX_Q || jj > g || !air_res_rank_fits((unsigned)(5 * k / 2 + 64), (unsigned)g)) return;
  *q = (unsigned)qq;
  *j = (unsigned)jj;
}

/* RESIDENT's blocks per row: as many as give each thread about TOPK_AIR_RES_VECS vectors, at most
 * the resident blocks shared by the rows, at least what holds the row (res_fits checked that
 * those fit). The same figure for the path choice and the launch. */
static int64_t res_grid(topk_dtype dt, int64_t n, int64_t batch, int es, const topk_device_info* dev) {
  const int occ = res_occupancy(dt, dev);
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 1;
  const int64_t nv = n / (16 / es);
  const int64_t per = (int64_t)env_res_vecs() * AIR_RES_THREADS;
  int64_t g = (nv + per - 1) / per;
  if (g > (int64_t)sms * occ / batch) g = (int64_t)sms * occ / batch;
  if (g > AIR_RES_MAX_BLOCKS) g = AIR_RES_MAX_BLOCKS;
  const int64_t gmin = res_min_blocks(n, es);
  return g < gmin ? gmin : g;
}

/* CLUSTER with its delegate start instead of RESIDENT, where both fit: k <= 64 (and the start
 * on: not for 16-bit keys by default since session 44, which take the wide start and its rule,
 * AIR_CLUSTER_WIDE_RES_1ROW_K). Measured (topk bench, both forced, same run, docs/perf-notes.md v0.21; 1-4 rows of
 * 128256..262144, f32 and bf16, normal and uniform): k = 8 and 50 at 0.51-0.97x RESIDENT's time;
 * k = 128 0.64-1.12x (f32 normal 1 x 262144: 1.12x; bf16 uniform 262144: 1.07-1.09x), so not there.
 * Since RESIDENT's delegate start (session 27, docs/perf-notes.md v0.27; topk bench and LLM graph
 * replay, both forced, same run): CLUSTER wherever RESIDENT would run without the start (f32 1 x
 * 128256 / 151936, k = 1024, graph replay: 18.5 / 16.2 against 24.1 / 22.7 us; 1 x 131072 topk
 * bench 0.79x; bf16 1 x 262144, k = 1024: 0.71-0.89x), and RESIDENT for one f32 row of >= 2^18
 * with k <= 64 (1 x 262144, k = 50: 11.2 against 12.4 us graph replay, 0.90-0.92x topk bench).
 * Since session 29's RESIDENT (docs/perf-notes.md v0.30; topk bench, both forced, two runs, normal
 * and uniform, k = 8 and 50): RESIDENT also for one f32 row of 128256..151936 (CLUSTER's time over
 * RESIDENT's 0.986-1.104x) and two f32 rows of >= 2^18 (1.013-1.126x); not two shorter rows
 * (k = 8: 0.954-0.992x), four rows (0.885-0.984x at 128256..151936) nor 16-bit keys (bf16 normal
 * 0.83-1.04x). Since session 39's CLUSTER (docs/perf-notes.md v0.39; both forced, same run, normal
 * and uniform): CLUSTER for one f32 row of 128256..151936 (topk bench k = 8 / 50 / 64 0.87-0.95x;
 * graph replay k = 50 8.48 / 8.68 against 9.45 / 9.11 us) and two f32 rows of >= 2^18 (0.84-0.93x;
 * 9.67 against 10.39 us); after its staging lost the AND / OR, one f32 row of 262144..393216 too
 * (k = 8..64 0.82-0.98x; graph replay 1 x 262144, k = 50 8.86-8.94 against 9.31-9.45 us). */
static const int64_t AIR_CLUSTER_OVER_RES_K = 64;
/* Where CLUSTER's wide start runs (session 40, docs/perf-notes.md v0.40; topk bench, both forced,
 * same run, normal and uniform, 1-2 rows of 128256..262144, k = 256 / 512 / 1024): CLUSTER, at
 * 0.43-0.99x RESIDENT's time (k = 1024 0.43-0.93x), but for one f32 row of >= 2^18 with k <= 512
 * (1 x 262144: 1.01-1.10x). */
static const int64_t AIR_CLUSTER_WIDE_RES_1ROW_K = 512;
static int cluster_over_resident(const topk_problem* p, const topk_device_info* dev, int es) {
  unsigned q, j;
  res_delegates(p->k, res_grid(p->dtype, p->n, p->batch, es, dev), &q, &j);
  if (q == 0) return 1;
  if (cluster_wide_k(p->k, es) &&
      !(es == 4 && p->batch == 1 && p->n >= AIR_RES_LONG_N && p->k <= AIR_CLUSTER_WIDE_RES_1ROW_K))
    return 1;
  return p->k <= AIR_CLUSTER_OVER_RES_K && cluster_del_k(p->k, es);
}

/* Where RESIDENT is the default (it must fit too): the measured rule in the comment on AIR_RES_SMALL_K. */
static int res_by_default(const topk_problem* p, int es) {
  if (p->n < AIR_RES_MIN_N || p->k > AIR_RES_MAX_K) return 0;
  if (es == 4) return p->batch == 1 || (p->batch == 2 && (p->n >= AIR_RES_LONG_N || p->k <= AIR_RES_DEL_K_2ROWS));
  return (p->k <= AIR_RES_SMALL_K && p->batch <= 4 && p->n <= AIR_RES_LONG_N) ||
         (p->batch == 1 && p->n >= AIR_RES_LONG_N) || (p->batch <= 2 && p->k <= AIR_RES_DEL_K_16);
}

/* ---- CUB calls: one definition for the size query (temp == NULL) and the run */

typedef unsigned long long u64;

static cudaError_t sort_keys(void* temp, size_t* bytes, cub::DoubleBuffer<u64>& keys, int64_t items, int64_t rows,
                             const int64_t* seg, int end_bit, cudaStream_t stream) {
  if (rows == 1) return cub::DeviceRadixSort::SortKeys(temp, *bytes, keys, items, 0, end_bit, stream);
  return cub::DeviceSegmentedRadixSort::SortKeys(temp, *bytes, keys, (int)items, (int)rows, seg, seg + 1, 0, end_bit,
                                                 stream);
}

static cudaError_t sort_pairs(void* temp, size_t* bytes, cub::DoubleBuffer<u64>& keys, cub::DoubleBuffer<u64>& vals,
                              int64_t items, int64_t rows, const int64_t* seg, int end_bit, cudaStream_t stream) {
  if (rows == 1) return cub::DeviceRadixSort::SortPairs(temp, *bytes, keys, vals, items, 0, end_bit, stream);
  return cub::DeviceSegmentedRadixSort::SortPairs(temp, *bytes, keys, vals, (int)items, (int)rows, seg, seg + 1, 0,
                                                  end_bit, stream);
}

/*
 * CLUSTER: the cluster size (1, 2, 4, 8) and the slice each block stages for rows of
 * len elements: the smallest cluster whose slices fit AIR_CLUSTER_SLICE_BYTES, else 8
 * blocks of up to AIR_CLUSTER_MAX_SLICE_BYTES. Slices are whole 16-byte groups so
 * that every block's slice starts aligned when the row does. 0 if the row is too long.
 */
static int cluster_shape(int64_t len, int es, int* cs, int64_t* slice) {
  const int64_t v = 16 / es;
  for (int c = 1; c <= 8; c *= 2) {
    int64_t sl = (len + c - 1) / c;
    sl = (sl + v - 1) / v * v;
    if (sl * es <= AIR_CLUSTER_SLICE_BYTES || (c == 8 && sl * es <= AIR_CLUSTER_MAX_SLICE_BYTES)) {
      *cs = c;
      *slice = sl;
      return 1;
    }
  }
  return 0;
}

/* ROWS' one-read start applies: rows of at least twice its buffer (k + 1.5 rounds of loads),
 * the buffer within AIR_ROWS_STREAM_SMEM. Measured (docs/perf-notes.md v0.13, same runs, f32
 * 4096 rows, k 64..2048): 0.43-1.01x the time of the two-read start at 65536 and 131072,
 * 0.90-1.22x at 16384 (the second read of such rows comes from L2). */
static int rows_stream_fits(const topk_problem* p, int es, int first_bits) {
  const int64_t scap = air_rows_stream_cap(p->k, es);
  return p->n >= 2 * scap && air_rows_smem_bytes(first_bits, scap, es) <= AIR_ROWS_STREAM_SMEM;
}

/*
 * ONE-BLOCK for short rows (but CLUSTER for many unsorted 16-bit rows in the stage's last
 * quarter, AIR_MANY_CLUSTER_*); else ROWS for uniform rows, AIR_ROWS_MIN_ROWS_PER_SM or
 * more per SM (or half a row per SM for rows of >= AIR_ROWS_HALF_MIN_N that the one-read
 * start serves), 16-bit keys only beyond CLUSTER or from AIR_ROWS_16_MIN_N read once
 * (forced ROWS with offsets works too); else CLUSTER (Hopper) for rows that fit the shared
 * memory of a cluster (uniform rows, or one row given by offsets: it lies within the
 * n-element buffer; with more rows by offsets the longest row is unknown);
 * else FUSED when every row can have a resident block (batch <= SM count: at least
 * one resident block per SM is certain) and the input is small enough that launch
 * overhead matters; else MULTI. (Measured since: FUSED beats CLUSTER on 6 of the 8
 * shapes both serve; the reorder waits for a GPU run, docs/perf-notes.md.)
 * A forced FUSED that does not fit falls back to MULTI. ADAPTIVE (rows by offsets on Hopper,
 * batch <= SM count) replaces FUSED and MULTI when the caller flags the rows short, or when
 * forced (TOPK_AIR_PATH=adaptive, for the tests); where it does not fit, the choice is as
 * without it.
 */
static int choose_path(const topk_problem* p, const topk_device_info* dev, int es) {
  const int forced = env_path();
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 1;
  const int fits_fused = p->batch <= sms;
  int cs = 0;
  int64_t slice = 0;
  /* with offsets only for one row: it lies within the n-element buffer, so n bounds it */
  const int fits_cluster = dev && dev->cc_major >= 9 && (!p->row_offsets || p->batch == 1) &&
                           cluster_shape(p->n, es, &cs, &slice);
  const int fits_adaptive = dev && dev->cc_major >= 9 && p->row_offsets && fits_fused;
  const int fits_rows = p->n <= (int64_t)UINT32_MAX; /* 32-bit counts and indices in the kernel */
  const int fits_resident = res_fits(p, dev, es);
  /* k >= n, unsorted, uniform rows: every element is a result, in any order (one copy launch;
   * a forced path still runs, so that the tests reach every path's own k >= n handling) */
  if (forced == PATH_CHOOSE && topk_rows_are_the_result(p)) return PATH_COPY;
  if (forced == PATH_ONE || forced == PATH_MULTI) return forced;
  if (forced == PATH_ROWS) return fits_rows ? PATH_ROWS : PATH_MULTI;
  if (forced == PATH_FUSED) return fits_fused ? PATH_FUSED : PATH_MULTI;
  if (forced == PATH_CLUSTER && fits_cluster) return PATH_CLUSTER;
  if (forced == PATH_ADAPTIVE && fits_adaptive) return PATH_ADAPTIVE;
  if (forced == PATH_RESIDENT && fits_resident) return PATH_RESIDENT;
  const int64_t avg = p->row_offsets ? (p->batch > 0 ? p->n / p->batch : p->n) : p->n;
  if (fits_cluster && cluster_over_one(p, es)) return PATH_CLUSTER;
  if (avg <= AIR_STAGE_BYTES / es) return PATH_ONE;
  if (fits_resident && res_by_default(p, es) && !(fits_cluster && cluster_over_resident(p, dev, es))) return PATH_RESIDENT;
  /* 16-bit keys: ROWS only beyond CLUSTER, or read once from AIR_ROWS_16_MIN_N */
  const int streams = rows_stream_fits(p, es, env_rows_first_bits());
  const int rows_ok =
      fits_rows && !p->row_offsets && (es != 2 || !fits_cluster || (streams && p->n >= AIR_ROWS_16_MIN_N));
  if (rows_ok && p->batch >= AIR_ROWS_MIN_ROWS_PER_SM * sms) return PATH_ROWS;
  if (rows_ok && 2 * p->batch >= sms && p->n >= AIR_ROWS_HALF_MIN_N && streams) return PATH_ROWS;
  if (fits_cluster) return PATH_CLUSTER;
  if (fits_adaptive && (p->flags & TOPK_INTERNAL_SHORT_ROWS)) return PATH_ADAPTIVE;
  return fits_fused && p->batch * avg <= AIR_FUSED_MAX_ELEMS ? PATH_FUSED : PATH_MULTI;
}

/* Decides everything and lays out the workspace. Asks CUB for sizes only: no allocation, no sync. */
static topk_status plan_layout(const topk_problem* p, const topk_device_info* dev, air_layout* L) {
  memset(L, 0, sizeof *L);
  L->es = (int)topk_dtype_size(p->dtype);
  L->key_bits = L->es * 8;
  TOPK_RETURN_IF(L->es != 2 && L->es != 4 && L->es != 8, TOPK_ERR_DTYPE, "air_radix: unknown dtype %d",
                 (int)p->dtype);
  const int64_t maxlen = p->n; /* uniform: n; variable rows: the whole buffer */
  L->idx64 = maxlen > INT32_MAX;
  L->ib = maxlen > 1 ? bits_for((uint64_t)(maxlen - 1)) : 0;
  L->deterministic = (p->flags & TOPK_NONDETERMINISTIC) == 0;
  L->alpha = env_alpha();
  const int path = choose_path(p, dev, L->es);
  L->copy = path == PATH_COPY;
  if (L->copy) { /* no workspace, no passes */
    L->out_mode = AIR_OUT_DIRECT;
    return TOPK_SUCCESS;
  }
  L->one_block = path == PATH_ONE;
  L->cluster = path == PATH_CLUSTER;
  if (L->cluster) {
    cluster_shape(p->n, L->es, &L->cluster_cs, &L->cluster_slice);
    L->cluster_smem = (size_t)air_cluster_smem_bytes(L->cluster_slice, L->es);
  }
  L->adaptive = path == PATH_ADAPTIVE;
  if (L->adaptive) { /* the one-block stage, unsorted in the kernel (the FUSED rows sort through CUB) */
    L->stage_cap = AIR_STAGE_BYTES / L->es;
    L->one_smem = (size_t)air_one_smem_bytes(L->stage_cap, L->es, 0, 0);
  }
  L->fused = path == PATH_FUSED || L->adaptive;
  L->rows = path == PATH_ROWS;
  L->resident = path == PATH_RESIDENT;
  if (L->rows) {
    L->rows_first_bits = env_rows_first_bits();
    const int64_t dflt = L->es == 8 ? AIR_ROWS_CAP_64 : AIR_ROWS_CAP, forced_cap = env_rows_cap();
    /* the one-read start where it fits, unless a smaller buffer is forced */
    const int64_t scap = air_rows_stream_cap(p->k, L->es);
    L->rows_stream = rows_stream_fits(p, L->es, L->rows_first_bits) && (forced_cap == 0 || forced_cap >= scap)
                         ? env_rows_stream()
                         : AIR_ROWS_STREAM_OFF;
    L->rows_cap = forced_cap ? forced_cap : L->rows_stream && scap > dflt ? scap : dflt;
    L->rows_smem = (size_t)air_rows_smem_bytes(L->rows_first_bits, L->rows_cap, L->es);
  }
  const int sorted = (p->flags & TOPK_SORTED) != 0;
  if (!sorted) {
    L->out_mode = AIR_OUT_DIRECT;
  } else if (!L->idx64 && L->key_bits + L->ib + 1 <= 64) {
    L->out_mode = AIR_OUT_COMPOSITE;
    L->cshift = L->ib + 1;
  } else {
    L->out_mode = AIR_OUT_PAIRS;
  }
  const size_t isz = L->idx64 ? 8 : 4;
  size_t total = 0;
  int ok = 1;

  if (L->resident) {
    /* histograms and counters (zeroed by the kernel), candidates, per-block tie counts */
    const uint64_t rows = (uint64_t)p->batch;
    ok = ok && topk_ws_add_part(&total, &L->res_hist, rows * AIR_RES_MAX_PASSES * AIR_RES_BINS, 4);
    ok = ok && topk_ws_add_part(&total, &L->res_ctrl, rows, sizeof(air_res_row));
    ok = ok && topk_ws_add_part(&total, &L->res_cand_raw, rows * AIR_RES_CAP, (size_t)L->es);
    ok = ok && topk_ws_add_part(&total, &L->res_cand_idx, rows * AIR_RES_CAP, 4);
    ok = ok && topk_ws_add_part(&total, &L->res_blk, rows * AIR_RES_MAX_BLOCKS, 4);
  } else if (L->cluster || L->rows) {
    /* nothing: the row lives in the cluster's shared memory, or ROWS keeps its state in the
     * block's (sorted output: the sort part below) */
  } else if (!L->one_block) {
    /* Pass table: key passes, then index passes (deterministic). */
    const int db = env_digit_bits();
    const int kp = air_num_passes(L->key_bits, db);
    const int ip = L->deterministic ? air_num_passes(L->ib, db) : 0;
    TOPK_RETURN_IF(kp + ip > MAX_PASSES, TOPK_ERR_INTERNAL, "air_radix: %d passes", kp + ip);
    int lk = 0, li = 0;
    for (int q = 0; q < kp + ip; ++q) {
      air_pass_desc* d = &L->passes[q];
      d->pass = q;
      d->is_idx = q >= kp;
      d->width = d->is_idx ? air_pass_width(L->ib, db, q - kp) : air_pass_width(L->key_bits, db, q);
      if (d->width > L->hist_bits) L->hist_bits = d->width;
      d->level_key = lk;
      d->level_idx = li;
      d->last = q == kp + ip - 1;
      d->retry = 0;
      if (d->is_idx) li += d->width; else lk += d->width;
    }
    L->n_passes = kp + ip;

    L->chunk_rows = L->fused || p->batch < AIR_CHUNK_ROWS ? p->batch : AIR_CHUNK_ROWS;
    /* Blocks per row: at most enough for AIR_MIN_TILES tiles each (of the average row);
     * launch_multi caps it further by the GPU's resident blocks. */
    L->bpr = blocks_by_work(L->es, p->n, p->batch, p->row_offsets != NULL, env_min_tiles(AIR_MIN_TILES));

    const int64_t span = p->row_offsets ? p->n : L->chunk_rows * p->n;
    L->buf_elems = span / L->alpha;
    size_t state_size = L->idx64 ? sizeof(air_row_state<unsigned long long>) : sizeof(air_row_state<unsigned>);
    uint64_t hists = (uint64_t)L->chunk_rows;
    if (L->fused) { /* a histogram per pass, and the fused control block */
      state_size = L->idx64 ? sizeof(air_fused_row<unsigned long long>) : sizeof(air_fused_row<unsigned>);
      hists *= (uint64_t)L->n_passes;
    }
    ok = ok && topk_ws_add_part(&total, &L->hist, hists << L->hist_bits, isz);
    ok = ok && topk_ws_add_part(&total, &L->state, (uint64_t)L->chunk_rows, state_size);
    /* The sampled start: uniform rows long enough, where the sample rank fits the buffer */
    const int64_t start_min = env_start_min_n();
    if (!L->fused && !p->row_offsets && start_min > 0 && p->n >= start_min && p->k < p->n) {
      L->start_group = 32 / L->es;
      int64_t m = p->n / AIR_START_SAMPLE_DIV;
      if (m < AIR_START_MIN_SAMPLE) m = p->n / 64 < AIR_START_MIN_SAMPLE ? p->n / 64 : AIR_START_MIN_SAMPLE;
      m -= m % L->start_group;
      if (m >= L->start_group) {
        L->start_m = m;
        L->start_rank = start_rank(p->n, p->k, p->n / L->alpha, m, &L->start_limit);
        const int64_t forced = env_start_rank();
        if (forced > 0 && forced < m) {
          L->start_rank = forced;
          L->start_limit = m;
        }
        L->start = L->start_rank > 0;
      }
    }
    if (L->start) { /* the sample's histograms and row states, zeroed with the row's */
      ok = ok && topk_ws_add_part(&total, &L->start_hist, (uint64_t)L->chunk_rows << L->hist_bits, isz);
      ok = ok && topk_ws_add_part(&total, &L->start_state, (uint64_t)L->chunk_rows, state_size);
    }
    L->zero_bytes = total; /* histograms and states are the first parts */
    for (int b = 0; b < 2; ++b) {
      ok = ok && topk_ws_add_part(&total, &L->buf_raw[b], (uint64_t)(L->buf_elems > 0 ? L->buf_elems : 1), (size_t)L->es);
      ok = ok && topk_ws_add_part(&total, &L->buf_idx[b], (uint64_t)(L->buf_elems > 0 ? L->buf_elems : 1), isz);
    }
    if (L->start)
      ok = ok && topk_ws_add_part(&total, &L->start_raw, (uint64_t)L->chunk_rows * (uint64_t)L->start_m, (size_t)L->es);
    if (L->adaptive) ok = ok && topk_ws_add_part(&total, &L->ovf, (uint64_t)p->batch, sizeof(unsigned));
  } else {
    /* Staged rows: up to the shared-memory budget; uniform rows need only n (more blocks per SM). */
    L->stage_cap = AIR_STAGE_BYTES / L->es;
    if (!p->row_offsets && p->n < L->stage_cap) L->stage_cap = p->n;
    /* Sorted: in the kernel when the k slots fit next to the staged row (shape only). */
    if (sorted && p->k >= 1 && p->k <= AIR_BLOCK_SORT_MAX) {
      int64_t m = 1;
      while (m < p->k) m <<= 1;
      if (air_one_smem_bytes(L->stage_cap, L->es, m, (int64_t)isz) <= AIR_ONE_SMEM_BUDGET) {
        L->bsort_m = (int)m;
        L->out_mode = AIR_OUT_BLOCK;
        L->cshift = 0;
      }
    }
    L->one_smem = (size_t)air_one_smem_bytes(L->stage_cap, L->es, L->bsort_m, (int64_t)isz);
  }

  if (sorted && L->bsort_m == 0 && L->out_mode == AIR_OUT_COMPOSITE && p->k <= AIR_SEGSORT_MAX) {
    /* a block per row sorts its k composite keys and writes the outputs (air_segsort_kernel) */
    int m = 1;
    while (m < p->k) m <<= 1;
    L->segsort_m = m;
    ok = ok && topk_ws_add_part(&total, &L->sk[0], (uint64_t)(p->batch * p->k), 8);
  } else if (sorted && L->bsort_m == 0) {
    const int64_t items = p->batch * p->k;
    TOPK_RETURN_IF(p->batch > 1 && items > INT_MAX, TOPK_ERR_UNSUPPORTED,
                   "air_radix: sorted output of %lld x %lld results (at most 2^31 - 1 in all over several rows)",
                   (long long)p->batch, (long long)p->k);
    size_t bytes = 0, b2 = 0;
    cub::DoubleBuffer<u64> keys(NULL, NULL), vals(NULL, NULL);
    if (L->out_mode == AIR_OUT_COMPOSITE) {
      L->sort_keys_bits = L->key_bits + L->cshift;
      TOPK_CUDA_TRY(sort_keys(NULL, &bytes, keys, items, p->batch, NULL, L->sort_keys_bits, 0));
    } else {
      L->sort_pairs_first_bits = L->ib + 1 < 64 ? L->ib + 1 : 64;
      L->sort_pairs_second_bits = L->key_bits;
      TOPK_CUDA_TRY(sort_pairs(NULL, &bytes, keys, vals, items, p->batch, NULL, L->sort_pairs_first_bits, 0));
      TOPK_CUDA_TRY(sort_pairs(NULL, &b2, keys, vals, items, p->batch, NULL, L->sort_pairs_second_bits, 0));
      if (b2 > bytes) bytes = b2;
    }
    L->cub_bytes = bytes;
    ok = ok && topk_ws_add_part(&total, &L->sk[0], (uint64_t)items, 8) && topk_ws_add_part(&total, &L->sk[1], (uint64_t)items, 8);
    if (L->out_mode == AIR_OUT_PAIRS)
      ok = ok && topk_ws_add_part(&total, &L->si[0], (uint64_t)items, 8) && topk_ws_add_part(&total, &L->si[1], (uint64_t)items, 8);
    if (p->batch > 1) ok = ok && topk_ws_add_part(&total, &L->seg, (uint64_t)(p->batch + 1), 8);
    ok = ok && topk_ws_add_part(&total, &L->cub, (uint64_t)(bytes > 0 ? bytes : 1), 1);
  }
  TOPK_RETURN_IF(!ok, TOPK_ERR_OUT_OF_MEMORY,
                 "air_radix: the workspace for n=%lld x batch=%lld exceeds the address space", (long long)p->n,
                 (long long)p->batch);
  L->total = total > 0 ? total + (TOPK_WS_ALIGN - 1) : 0; /* ONE-BLOCK unsorted needs none */
  return TOPK_SUCCESS;
}

/* ------------------------------------------------------------------ launches */

/* MULTI: per chunk of rows, zero the states and histograms, run the passes and the final filter. */
template <topk_dtype DT, typename IdxT>
static topk_status launch_multi(const air_layout* L, air_params P, int64_t batch, char* base,
                                const topk_device_info* dev, cudaStream_t stream) {
  /* The grid fills the GPU once: resident blocks (occupancy, at most AIR_BLOCKS_PER_SM per SM)
   * shared by the chunk's rows. A host-side query, cached: no synchronisation. */
  static int occ_cache[TOPK_OCC_DEVICES]; /* common/occupancy.h */
  int occ = 0;
  TOPK_CUDA_TRY(topk_occupancy_cached(occ_cache, dev ? dev->ordinal : -1, (const void*)air_pass_kernel<DT, IdxT>, AIR_THREADS, 0, &occ));
  if (occ < 1) occ = 1;
  if (occ > AIR_BLOCKS_PER_SM) occ = AIR_BLOCKS_PER_SM;
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
  const int64_t resident = (int64_t)sms * occ;
  for (int64_t row0 = 0; row0 < batch; row0 += L->chunk_rows) {
    const int64_t rows = batch - row0 < L->chunk_rows ? batch - row0 : L->chunk_rows;
    P.row0 = row0;
    TOPK_CUDA_TRY(cudaMemsetAsync(base + L->hist, 0, L->zero_bytes, stream));
    int64_t bpr = resident / rows;
    if (bpr > L->bpr) bpr = L->bpr;
    if (bpr < 1) bpr = 1;
    const dim3 grid((unsigned)bpr, (unsigned)rows, 1);
    if (L->start) {
      /* the sample, and its start_rank-th key over the key passes (air_start_bound) */
      typedef typename topk_dtype_traits<DT>::raw_t RawT;
      RawT* sample = (RawT*)(base + L->start_raw);
      int64_t sblocks = (rows * L->start_m + AIR_THREADS - 1) / AIR_THREADS;
      if (sblocks > resident * 4) sblocks = resident * 4;
      air_sample_kernel<RawT><<<(unsigned)sblocks, AIR_THREADS, 0, stream>>>((const RawT*)P.in, row0, rows, P.n, P.ld,
                                                                             L->start_m, L->start_group, sample);
      TOPK_CUDA_TRY_LAUNCH("air_sample_kernel");
      air_params S = P;
      S.in = sample;
      S.n = S.ld = L->start_m;
      S.k = L->start_rank;
      S.row0 = 0;
      S.alpha = L->start_m + 1; /* never buffers: the sample stays in L2 */
      S.ib = bits_for((uint64_t)(L->start_m - 1));
      S.state = base + L->start_state;
      S.hist = base + L->start_hist;
      S.start_state = NULL;
      int64_t sbpr = blocks_by_work(L->es, L->start_m, 1, 0, 2);
      if (sbpr > resident / rows) sbpr = resident / rows;
      if (sbpr < 1) sbpr = 1;
      for (int q = 0; q < L->n_passes && !L->passes[q].is_idx; ++q) {
        air_pass_desc d = L->passes[q];
        d.last = q + 1 == L->n_passes || L->passes[q + 1].is_idx;
        air_pass_kernel<DT, IdxT><<<dim3((unsigned)sbpr, (unsigned)rows, 1), AIR_THREADS, 0, stream>>>(S, d);
        TOPK_CUDA_TRY_LAUNCH("air_pass_kernel (sample)");
      }
      P.start_state = S.state;
      P.start_rank = L->start_rank;
      P.start_limit = L->start_limit;
    }
    for (int q = 0; q < L->n_passes; ++q) {
      air_pass_desc d = L->passes[q];
      if (q == 0 && L->start) { /* the start, then pass 0 where it failed (AIR_RESTART) */
        air_start_kernel<DT, IdxT><<<grid, AIR_THREADS, AIR_START_SMEM_BYTES, stream>>>(P, d);
        TOPK_CUDA_TRY_LAUNCH("air_start_kernel");
        d.retry = 1;
      }
      air_pass_kernel<DT, IdxT><<<grid, AIR_THREADS, 0, stream>>>(P, d);
      TOPK_CUDA_TRY_LAUNCH("air_pass_kernel");
    }
    air_final_kernel<DT, IdxT><<<grid, AIR_THREADS, 0, stream>>>(P);
    TOPK_CUDA_TRY_LAUNCH("air_final_kernel");
  }
  return TOPK_SUCCESS;
}

/* FUSED: one cooperative launch for every row (batch <= SM count); the kernel zeroes its state. */
template <topk_dtype DT, typename IdxT>
static topk_status launch_fused(const air_layout* L, air_params P, int64_t batch, const topk_device_info* dev,
                                cudaStream_t stream) {
  static int occ_cache[TOPK_OCC_DEVICES]; /* common/occupancy.h */
  int occ = 0;
  TOPK_CUDA_TRY(topk_occupancy_cached(occ_cache, dev ? dev->ordinal : -1, (const void*)air_fused_kernel<DT, IdxT>, AIR_THREADS, 0, &occ));
  if (occ < 1) occ = 1;
  if (occ > AIR_BLOCKS_PER_SM) occ = AIR_BLOCKS_PER_SM;
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 1;
  int64_t bpr = (int64_t)sms * occ / batch; /* every block resident: the barriers spin */
  const int64_t by_work = blocks_by_work(L->es, P.n, batch, P.offsets != NULL, env_min_tiles(AIR_FUSED_MIN_TILES));
  if (bpr > by_work) bpr = by_work;
  if (bpr < 1) bpr = 1;
  air_fused_desc F;
  memset(&F, 0, sizeof F);
  F.n_passes = L->n_passes;
  for (int q = 0; q < L->n_passes; ++q) F.passes[q] = L->passes[q];
  P.row0 = 0;
  void* args[] = {(void*)&P, (void*)&F};
  TOPK_CUDA_TRY(cudaLaunchCooperativeKernel((const void*)air_fused_kernel<DT, IdxT>, dim3((unsigned)bpr, (unsigned)batch, 1),
                                            dim3(AIR_THREADS, 1, 1), args, 0, stream));
  return TOPK_SUCCESS;
}

static void cluster_config(cudaLaunchConfig_t* cfg, cudaLaunchAttribute* attr, int cs, int64_t rows, size_t smem,
                           cudaStream_t stream) {
  memset(cfg, 0, sizeof *cfg);
  cfg->gridDim = dim3((unsigned)cs, (unsigned)rows, 1);
  cfg->blockDim = dim3(AIR_CLUSTER_THREADS, 1, 1);
  cfg->dynamicSmemBytes = smem;
  cfg->stream = stream;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = (unsigned)cs;
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  cfg->attrs = attr;
  cfg->numAttrs = 1;
}

/* air_cluster_kernel<DT>'s shared-memory limit, set once per device (common/occupancy.h) */
template <topk_dtype DT>
static cudaError_t cluster_smem_limit(int ordinal) {
  static int once[TOPK_OCC_DEVICES];
  return topk_smem_limit_once(once, ordinal, (const void*)air_cluster_kernel<DT>);
}

/*
 * How many clusters of AIR_CLUSTER_MAX_BLOCKS blocks, smem bytes each, can be resident
 * at once: 0 where that size cannot launch. Asked once per device (the answer and the
 * non-portable-size attribute outlive the call).
 */
template <topk_dtype DT>
static int max_clusters_of_16(int ordinal, size_t smem, cudaStream_t stream) {
  static int known[64]; /* 0: not asked; else the answer + 1 (same value from any thread) */
  if (ordinal >= 0 && ordinal < 64 && known[ordinal]) return known[ordinal] - 1;
  int n = 0;
  if (cudaFuncSetAttribute(air_cluster_kernel<DT>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess) {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    cluster_config(&cfg, &attr, AIR_CLUSTER_MAX_BLOCKS, AIR_CLUSTER_MAX_BLOCKS, smem, stream);
    if (cluster_smem_limit<DT>(ordinal) != cudaSuccess ||
        cudaOccupancyMaxActiveClusters(&n, air_cluster_kernel<DT>, &cfg) != cudaSuccess)
      n = 0;
  }
  (void)cudaGetLastError(); /* a refused size is an answer, not an error of this call */
  if (ordinal >= 0 && ordinal < 64) known[ordinal] = n + 1;
  return n;
}

/*
 * CLUSTER: clusters of cs blocks, one per row, in launches of at most 65535 rows. cs
 * is the plan's (slices of at most AIR_CLUSTER_SLICE_BYTES), doubled up to
 * AIR_CLUSTER_GROW_MAX (AIR_CLUSTER_GROW_DEL_MAX where the delegate start runs at that size)
 * while every row's cluster stays resident at once (batch x cs <= SMs, and batch clusters of 16
 * where cs would be 16) and slices exceed AIR_CLUSTER_FAST_SLICE_BYTES; or TOPK_AIR_CLUSTER_CS
 * (up to 16, where clusters of 16 fit). The shape needs no workspace, so it may change at launch.
 * When every row's cluster is resident at once, each block asks for more than half
 * of an SM's shared memory, so no two blocks share an SM.
 */
template <topk_dtype DT>
static topk_status launch_cluster(const air_layout* L, air_params P, int64_t batch, const topk_device_info* dev,
                                  cudaStream_t stream) {
  const int64_t len = P.n, v = 16 / L->es;
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 1;
  const int forced = env_cluster_cs();
  /* one block per SM: more than half the opt-in shared memory (rounded to 1 KB) */
  const size_t spread = dev && dev->smem_per_block_optin > 0 ? (size_t)(dev->smem_per_block_optin / 2 + 1024) & ~(size_t)1023
                                                             : (size_t)0;
  int cs = L->cluster_cs;
  int64_t slice = L->cluster_slice;
  int nd16;
  const int grow = forced ? AIR_CLUSTER_MAX_BLOCKS
                   : cluster_dgroup(AIR_CLUSTER_MAX_BLOCKS, P.k, L->es, &nd16) || cluster_wide_k(P.k, L->es)
                       ? env_cluster_grow_del()
                       : AIR_CLUSTER_GROW_MAX;
  for (;;) {
    const int c2 = cs * 2;
    if (c2 > grow) break;
    /* small slices grow on where the wide start runs only at a larger size (k = 1024: from 4 blocks),
     * or runs on slices of more than AIR_WIDE_GROW_KEYS */
    const int wide_wants = !forced && cluster_wide_k(P.k, L->es) &&
                           (!cluster_wide_q(cs, P.k, L->es, slice, dev) || slice > AIR_WIDE_GROW_KEYS);
    if (forced ? c2 > forced
               : ((slice * L->es <= AIR_CLUSTER_FAST_SLICE_BYTES && !wide_wants) || batch * c2 > sms))
      break;
    if (c2 == AIR_CLUSTER_MAX_BLOCKS &&
        max_clusters_of_16<DT>(dev ? dev->ordinal : -1, spread, stream) < (forced ? 1 : batch))
      break;
    cs = c2;
    slice = ((len + cs - 1) / cs + v - 1) / v * v;
  }
  int ndel;
  const int dgrp = cluster_dgroup(cs, P.k, L->es, &ndel), stamps = env_cluster_stamps();
  const int wide_q = cluster_wide_q(cs, P.k, L->es, slice, dev);
  size_t smem = (size_t)air_cluster_smem_bytes(slice, L->es) + (wide_q ? (size_t)AIR_WIDE_EXTRA : 0);
  if (batch * cs <= sms && smem < spread) smem = spread;
  TOPK_CUDA_TRY(cluster_smem_limit<DT>(dev ? dev->ordinal : 0));
  for (int64_t row0 = 0; row0 < batch; row0 += 65535) {
    const int64_t rows = batch - row0 < 65535 ? batch - row0 : 65535;
    P.row0 = row0;
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    cluster_config(&cfg, &attr, cs, rows, smem, stream);
    TOPK_CUDA_TRY(cudaLaunchKernelEx(&cfg, air_cluster_kernel<DT>, P, slice, dgrp, ndel, wide_q, stamps));
  }
  return TOPK_SUCCESS;
}

/* ONE-BLOCK: one block per row, in launches of at most INT_MAX rows. */
template <topk_dtype DT, typename IdxT>
static topk_status launch_one_block(const air_layout* L, air_params P, int64_t batch, cudaStream_t stream) {
  const size_t smem = L->one_smem;
  for (int64_t row0 = 0; row0 < batch; row0 += INT_MAX) {
    const int64_t rows = batch - row0 < INT_MAX ? batch - row0 : INT_MAX;
    P.row0 = row0;
    air_one_block_kernel<DT, IdxT><<<(unsigned)rows, AIR_THREADS, smem, stream>>>(P, L->stage_cap);
    TOPK_CUDA_TRY_LAUNCH("air_one_block_kernel");
  }
  return TOPK_SUCCESS;
}

/* TOPK_AIR_ROWS_BPS=2|3: ROWS' blocks per SM forced (measurement); 0: by rows_blocks_per_sm */
static int env_rows_bps(void) {
  const char* s = topk_env("TOPK_AIR_ROWS_BPS");
  const int b = s && *s ? atoi(s) : 0;
  return b == 2 || b == 3 ? b : 0;
}

/*
 * ROWS' blocks per SM: three (what the kernel's registers allow for keys of up to 4 bytes)
 * stream faster than two (docs/perf-notes.md v0.18), but rows of one length finish together,
 * so a last wave of few blocks per SM runs at the rate of a lone block. Two per SM where the
 * last of at most four waves of three would be under half full and two fill theirs better
 * (512 rows of 2^20 on 132 SMs: 396 + 116 blocks against 264 + 248).
 */
static int rows_blocks_per_sm(int64_t batch, int sms) {
  const int forced = env_rows_bps();
  if (forced) return forced;
  const int64_t w3 = 3 * (int64_t)sms, w2 = 2 * (int64_t)sms;
  if (batch <= w3 || (batch + w3 - 1) / w3 > 4) return 3;
  const double fill3 = batch % w3 ? (double)(batch % w3) / (double)w3 : 1.0;
  const double fill2 = batch % w2 ? (double)(batch % w2) / (double)w2 : 1.0;
  return fill3 < 0.5 && fill2 > fill3 ? 2 : 3;
}

/* ROWS: one block per row, in launches of at most INT_MAX rows. */
template <topk_dtype DT>
static topk_status launch_rows(const air_layout* L, air_params P, int64_t batch, const topk_device_info* dev,
                               cudaStream_t stream) {
  size_t smem = L->rows_smem;
  if (dev && dev->sm_count > 0 && dev->smem_per_block_optin > 0 &&
      rows_blocks_per_sm(batch, dev->sm_count) == 2) {
    /* more than a third of the SM's shared memory (the opt-in maximum + the 1 KB reserved
     * per block): two blocks fit, three do not */
    const size_t third = (size_t)(dev->smem_per_block_optin + 1024) / 3 + 1024;
    if (smem < third) smem = third;
  }
  if (topk_smem_needs_optin(smem)) { /* the limit set once per device (common/occupancy.h) */
    static int once[TOPK_OCC_DEVICES];
    TOPK_CUDA_TRY(topk_smem_limit_once(once, dev ? dev->ordinal : 0, (const void*)air_rows_kernel<DT>));
  }
  for (int64_t row0 = 0; row0 < batch; row0 += INT_MAX) {
    const int64_t rows = batch - row0 < INT_MAX ? batch - row0 : INT_MAX;
    P.row0 = row0;
    air_rows_kernel<DT><<<(unsigned)rows, AIR_THREADS, smem, stream>>>(P, L->rows_first_bits, (unsigned)L->rows_cap,
                                                                       L->rows_stream);
    TOPK_CUDA_TRY_LAUNCH("air_rows_kernel");
  }
  return TOPK_SUCCESS;
}

/*
 * RESIDENT: one cooperative launch, res_grid's G blocks per row.
 */
template <topk_dtype DT>
static topk_status launch_resident(const air_layout* L, air_params P, int64_t batch, char* base,
                                   const topk_device_info* dev, cudaStream_t stream) {
  const int64_t g = res_grid(DT, P.n, batch, L->es, dev);
  air_res_desc D;
  D.hist = (unsigned*)(base + L->res_hist);
  D.ctrl = (air_res_row*)(base + L->res_ctrl);
  D.cand_raw = base + L->res_cand_raw;
  D.cand_idx = (unsigned*)(base + L->res_cand_idx);
  D.blk_cnt = (unsigned*)(base + L->res_blk);
  {
    const char* st = topk_env("TOPK_AIR_RES_STAMPS");
    D.stamps = st && strcmp(st, "1") == 0;
    const char* rk = topk_env("TOPK_AIR_RES_RANK");
    D.rank = !(rk && strcmp(rk, "0") == 0);
  }
  res_delegates(P.k, g, &D.del_q, &D.del_j);
  P.row0 = 0;
  void* args[] = {(void*)&P, (void*)&D};
  TOPK_CUDA_TRY(cudaLaunchCooperativeKernel((const void*)air_resident_kernel<DT>, dim3((unsigned)g, (unsigned)batch, 1),
                                            dim3(AIR_RES_THREADS, 1, 1), args, 0, stream));
  return TOPK_SUCCESS;
}

template <topk_dtype DT, typename IdxT>
static topk_status launch_select(const air_layout* L, const air_params& P, int64_t batch, char* base,
                                 const topk_device_info* dev, cudaStream_t stream) {
  if (L->copy) {
    const int64_t slots = batch * P.k;
    const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
    int64_t blocks = (slots + AIR_THREADS - 1) / AIR_THREADS;
    if (blocks > (int64_t)sms * 16) blocks = (int64_t)sms * 16; /* the kernel strides over the rest */
    if (blocks < 1) blocks = 1;
    air_copy_kernel<DT, IdxT><<<(unsigned)blocks, AIR_THREADS, 0, stream>>>(P, batch);
    TOPK_CUDA_TRY_LAUNCH("air_copy_kernel");
    return TOPK_SUCCESS;
  }
  if (L->cluster) return launch_cluster<DT>(L, P, batch, dev, stream);
  if constexpr (sizeof(typename topk_dtype_traits<DT>::raw_t) <= 4) {
    if (L->resident) return launch_resident<DT>(L, P, batch, base, dev, stream);
  }
  if (L->rows) return launch_rows<DT>(L, P, batch, dev, stream);
  if (L->adaptive) {
    TOPK_FORWARD_IF_ERROR((launch_one_block<DT, IdxT>(L, P, batch, stream)));
    return launch_fused<DT, IdxT>(L, P, batch, dev, stream);
  }
  if (L->one_block) return launch_one_block<DT, IdxT>(L, P, batch, stream);
  if (L->fused) return launch_fused<DT, IdxT>(L, P, batch, dev, stream);
  return launch_multi<DT, IdxT>(L, P, batch, base, dev, stream);
}

/* TOPK_SORTED: sort each row's k sort keys, then decode them into the outputs. */
static topk_status launch_sort(const topk_args* a, const air_layout* L, air_params P, char* base,
                               const topk_device_info* dev, cudaStream_t stream) {
  const int64_t batch = a->p.batch, items = batch * a->p.k;
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
  if (L->segsort_m > 0) {
    const size_t smem = (size_t)L->segsort_m * 8;
    for (int64_t row0 = 0; row0 < batch; row0 += INT_MAX) {
      const int64_t rows = batch - row0 < INT_MAX ? batch - row0 : INT_MAX;
      P.row0 = row0;
      switch (L->es) {
        case 2: air_segsort_kernel<uint16_t><<<(unsigned)rows, AIR_SEGSORT_THREADS, smem, stream>>>(P, L->segsort_m); break;
        case 4: air_segsort_kernel<uint32_t><<<(unsigned)rows, AIR_SEGSORT_THREADS, smem, stream>>>(P, L->segsort_m); break;
        default: air_segsort_kernel<uint64_t><<<(unsigned)rows, AIR_SEGSORT_THREADS, smem, stream>>>(P, L->segsort_m); break;
      }
      TOPK_CUDA_TRY_LAUNCH("air_segsort_kernel");
    }
    return TOPK_SUCCESS;
  }
  const int64_t* seg = NULL;
  if (batch > 1) {
    int64_t* s = (int64_t*)(base + L->seg);
    int64_t blocks = (batch + 1 + AIR_THREADS - 1) / AIR_THREADS;
    if (blocks > 8 * (int64_t)sms) blocks = 8 * (int64_t)sms;
    air_segments_kernel<<<(unsigned)blocks, AIR_THREADS, 0, stream>>>(s, batch, a->p.k);
    TOPK_CUDA_TRY_LAUNCH("air_segments_kernel");
    seg = s;
  }
  u64* sk0 = (u64*)(base + L->sk[0]);
  u64* sk1 = (u64*)(base + L->sk[1]);
  void* temp = base + L->cub;
  const u64* keys_out = NULL;
  const u64* idx_out = NULL;
  if (L->out_mode == AIR_OUT_COMPOSITE) {
    cub::DoubleBuffer<u64> keys(sk0, sk1);
    size_t bytes = L->cub_bytes;
    TOPK_CUDA_TRY(sort_keys(temp, &bytes, keys, items, batch, seg, L->sort_keys_bits, stream));
    keys_out = keys.Current();
  } else {
    /* By index first, then stably by key: equal keys stay in index order. */
    u64* si0 = (u64*)(base + L->si[0]);
    u64* si1 = (u64*)(base + L->si[1]);
    cub::DoubleBuffer<u64> by_idx(si0, si1), carried(sk0, sk1);
    size_t bytes = L->cub_bytes;
    TOPK_CUDA_TRY(sort_pairs(temp, &bytes, by_idx, carried, items, batch, seg, L->sort_pairs_first_bits, stream));
    cub::DoubleBuffer<u64> by_key(carried.Current(), carried.Alternate());
    cub::DoubleBuffer<u64> idx(by_idx.Current(), by_idx.Alternate());
    bytes = L->cub_bytes;
    TOPK_CUDA_TRY(sort_pairs(temp, &bytes, by_key, idx, items, batch, seg, L->sort_pairs_second_bits, stream));
    keys_out = by_key.Current();
    idx_out = idx.Current();
  }
  int64_t blocks = (items + AIR_THREADS - 1) / AIR_THREADS;
  if (blocks > 16 * (int64_t)sms) blocks = 16 * (int64_t)sms;
  if (blocks < 1) blocks = 1;
  P.row0 = 0;
  switch (L->es) {
    case 2: air_decode_kernel<uint16_t><<<(unsigned)blocks, AIR_THREADS, 0, stream>>>(P, batch, keys_out, idx_out); break;
    case 4: air_decode_kernel<uint32_t><<<(unsigned)blocks, AIR_THREADS, 0, stream>>>(P, batch, keys_out, idx_out); break;
    default: air_decode_kernel<uint64_t><<<(unsigned)blocks, AIR_THREADS, 0, stream>>>(P, batch, keys_out, idx_out); break;
  }
  TOPK_CUDA_TRY_LAUNCH("air_decode_kernel");
  return TOPK_SUCCESS;
}

/* ------------------------------------------------------------------ ops */

static int air_supports(const topk_problem* p, const topk_device_info* dev, char* why, size_t why_len) {
  (void)dev;
  if (topk_dtype_size(p->dtype) == 0) {
    if (why && why_len) snprintf(why, why_len, "unknown dtype %d", (int)p->dtype);
    return 0;
  }
  if ((p->flags & TOPK_SORTED) && p->batch > 1 && p->k > INT_MAX / p->batch) {
    if (why && why_len)
      snprintf(why, why_len, "sorted output of batch x k = %lld x %lld exceeds 2^31 - 1 results (CUB segmented sort)",
               (long long)p->batch, (long long)p->k);
    return 0;
  }
  return 1;
}

static topk_status air_workspace_size(const topk_problem* p, const topk_device_info* dev, size_t* bytes) {
  TOPK_RETURN_IF(!bytes, TOPK_ERR_NULL_POINTER, "workspace_bytes is NULL");
  air_layout L;
  TOPK_FORWARD_IF_ERROR(plan_layout(p, dev, &L));
  *bytes = L.total;
  return TOPK_SUCCESS;
}

static topk_status air_run(const topk_args* a, void* workspace, size_t workspace_bytes, topk_stream stream) {
  air_layout L;
  TOPK_FORWARD_IF_ERROR(plan_layout(&a->p, a->dev, &L));
  TOPK_RETURN_IF(L.total > 0 && (!workspace || workspace_bytes < L.total), TOPK_ERR_WORKSPACE,
                 "air_radix: workspace of %zu bytes given, %zu needed", workspace ? workspace_bytes : (size_t)0,
                 L.total);
  char* base = topk_ws_base(workspace);
  cudaStream_t s = (cudaStream_t)stream;
  const int sorted = L.out_mode == AIR_OUT_COMPOSITE || L.out_mode == AIR_OUT_PAIRS; /* sorted by CUB */

  air_params P;
  memset(&P, 0, sizeof P);
  P.in = a->in;
  P.offsets = a->p.row_offsets;
  P.n = a->p.n;
  P.ld = a->p.row_offsets ? 0 : a->p.ld;
  P.k = a->p.k;
  P.alpha = L.alpha;
  P.smallest = (a->p.flags & TOPK_SMALLEST) != 0;
  P.index_type = (int)a->p.index_type;
  P.out_mode = L.out_mode;
  P.ib = L.ib;
  P.cshift = L.cshift;
  P.bsort_m = L.bsort_m;
  P.values = a->values;
  P.indices = a->p.index_type == TOPK_INDEX_NONE ? NULL : a->indices;
  P.sort_key = sorted ? (u64*)(base + L.sk[0]) : NULL;
  P.sort_idx = L.out_mode == AIR_OUT_PAIRS ? (u64*)(base + L.si[0]) : NULL;
  if (!L.copy && !L.one_block && !L.cluster && !L.rows && !L.resident) {
    P.state = base + L.state;
    P.hist = base + L.hist;
    P.hist_bins = 1 << L.hist_bits;
    for (int b = 0; b < 2; ++b) {
      P.buf_raw[b] = base + L.buf_raw[b];
      P.buf_idx[b] = base + L.buf_idx[b];
    }
    if (L.adaptive) P.ovf = (unsigned*)(base + L.ovf);
  }
  P.worst_bits = topk_worst_value_bits(a->p.dtype, P.smallest);
  P.common_prefix = env_common_prefix();

  topk_status st = TOPK_SUCCESS;
  TOPK_DISPATCH_DTYPE(a->p.dtype, DT, return topk_fail(TOPK_ERR_INTERNAL, "air_radix: unknown dtype %d",
                                                       (int)a->p.dtype),
                      if (L.idx64) st = launch_select<DT, unsigned long long>(&L, P, a->p.batch, base, a->dev, s);
                      else st = launch_select<DT, unsigned int>(&L, P, a->p.batch, base, a->dev, s));
  TOPK_FORWARD_IF_ERROR(st);
  if (sorted) TOPK_FORWARD_IF_ERROR(launch_sort(a, &L, P, base, a->dev, s));
  return TOPK_SUCCESS;
}

extern "C" const topk_algo_ops topk_algo_air_radix = {"air_radix",        TOPK_ALGO_AIR_RADIX, TOPK_BACKEND_CUDA,
                                                      air_supports,       air_workspace_size,  air_run};
