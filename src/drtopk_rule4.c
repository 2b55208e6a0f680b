/*
 * drtopk_rule4.c: Rule 4 of Dr. Top-k (paper 000 sec. 5.2), the subrange size.
 *
 * The paper's cost model balances the delegate work (n / S) against the
 * concatenation (k * S): alpha = round((log2 n - log2 k) / 2) + C. Three clamps: at
 * least 2^MIN_SUB_LOG subranges per row (one warp per subrange: too few warps leave
 * SMs idle in the last wave); S <= n / (k x 2^FULL_GAP), because the concatenation
 * scans up to k / beta full subranges whole, (k / beta) x S elements, and that term
 * (the cost model's k x S) grows fastest where k is large; alpha in [5, 20].
 *
 * The constants are fitted on the H100 from the alpha sweep in
 * bench/results/h100_drtopk_alpha_sweep.csv (n = 2^24..2^30, k = 1..2^16, uniform
 * f32, drtopk_radix, median ms per alpha 5..20). Regenerate:
 *   build/drtopk_workload 30 sweepcsv > bench/results/h100_drtopk_alpha_sweep.csv   (GPU)
 *   python3 bench/fit_rule4.py bench/results/h100_drtopk_alpha_sweep.csv
 * and copy the (C, MIN_SUB_LOG, FULL_GAP) it prints here; tests/test_drtopk_rule4.c
 * checks the rule against the same data.
 *
 * Fit on the H100 (63 points, session 5's kernels: AIR's second step sized by the
 * count it finds, passes below the bits all keys share): worst time(rule) / time(best
 * alpha) 1.058, median 1.009, every point within 10 %. Without the FULL_GAP clamp the
 * best (C, MIN_SUB_LOG) had worst 1.133 (n = 2^25, k = 2^16: alpha 9 against 7).
 * Earlier fits: session 4 C = 3, MIN_SUB_LOG = 11, worst 1.142; session 3 C = 4,
 * MIN_SUB_LOG = 12, worst 1.257.
 */
#include "drtopk_rule4.h"

#include <math.h>
#include <stdlib.h>

#include "algo.h" /* topk_env */

static const int RULE4_C = 4;            /* fitted (bench/fit_rule4.py); the paper had 3 */
static const int RULE4_MIN_SUB_LOG = 12; /* fitted (bench/fit_rule4.py) */
static const int RULE4_FULL_GAP = 2;     /* fitted (bench/fit_rule4.py) */

static int bits_for(uint64_t v) {
  int bits = 0;
  while (bits < 64 && (v >> bits) != 0) ++bits;
  return bits;
}

int topk_drtopk_rule4_alpha_with(int64_t n, int64_t k, int c, int min_sub_log, int full_gap) {
  if (n < 1) n = 1;
  if (k < 1) k = 1;
  int a = (int)floor((log2((double)n) - log2((double)k)) / 2.0 + 0.5) + c;
  const int cap = bits_for((uint64_t)n) - 1 - min_sub_log; /* S <= n / 2^min_sub_log */
  if (a > cap) a = cap;
  const int full = bits_for((uint64_t)n) - bits_for((uint64_t)k) - full_gap; /* S <= n / (k 2^full_gap) */
  if (a > full) a = full;
  if (a > TOPK_DRTOPK_ALPHA_MAX) a = TOPK_DRTOPK_ALPHA_MAX;
  if (a < TOPK_DRTOPK_ALPHA_MIN) a = TOPK_DRTOPK_ALPHA_MIN;
  return a;
}

int topk_drtopk_rule4_alpha(int64_t n, int64_t k) {
  int c = RULE4_C;
  const char* s = topk_env("TOPK_DRTOPK_RULE4_C");
  if (s && *s) {
    char* end = NULL;
    const long v = strtol(s, &end, 10);
    if (end && *end == 0 && v > -32 && v < 32) c = (int)v;
  }
  return topk_drtopk_rule4_alpha_with(n, k, c, RULE4_MIN_SUB_LOG, RULE4_FULL_GAP);
}
