/*
 * drtopk_rule4.h: the Dr. Top-k subrange size (paper 000 sec. 5.2, Rule 4), host
 * code shared by the delegate layer (src/cuda/drtopk/drtopk.cu), its benchmark
 * (bench/drtopk_workload.c) and the test that checks the rule against the measured
 * alpha sweep (tests/test_drtopk_rule4.c), so CPU-only builds have it too.
 */
#ifndef TOPK_DRTOPK_RULE4_H
#define TOPK_DRTOPK_RULE4_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TOPK_DRTOPK_ALPHA_MIN = 5,  /* a subrange fills at least one warp load */
  TOPK_DRTOPK_ALPHA_MAX = 20
};

/*
 * Rule 4 with explicit constants: alpha = round((log2 n - log2 k) / 2) + c, clamped to
 * at least 2^min_sub_log subranges per row, to alpha <= floor(log2 n) - floor(log2 k) -
 * full_gap (the full subranges' scan, (k / beta) x 2^alpha elements, stays a small part
 * of the row), then to [ALPHA_MIN, ALPHA_MAX].
 */
int topk_drtopk_rule4_alpha_with(int64_t n, int64_t k, int c, int min_sub_log, int full_gap);

/* Rule 4 with the constants fitted on the H100 (TOPK_DRTOPK_RULE4_C overrides c). */
int topk_drtopk_rule4_alpha(int64_t n, int64_t k);

#ifdef __cplusplus
}
#endif
#endif /* TOPK_DRTOPK_RULE4_H */
