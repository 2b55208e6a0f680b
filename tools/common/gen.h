/*
 * gen.h: the input distributions of DESIGN.md, generated reproducibly.
 *
 * Counter-based: element i is a function of (seed, i) alone, so any chunk of a
 * stream can be generated independently and a failing test can be replayed from
 * its seed. Used by `topk gen`, `topk bench` and the tests.
 */
#ifndef TOPK_TOOL_GEN_H
#define TOPK_TOOL_GEN_H

#include <stdint.h>
#include "topk.h"

typedef enum gen_dist {
  GEN_UNIFORM = 0,        /* floats U[0,1); integers: uniform random bits of the type */
  GEN_NORMAL,             /* floats N(0,1); integers: round(N(0,1) * 2^(bits/4)) */
  GEN_RADIX_ADVERSARIAL,  /* the leading `equal_bits` key bits equal in every element (AIR Top-K paper) */
  GEN_CD,                 /* Dr. Top-k's customized distribution: most elements in one narrow bucket */
  GEN_ALL_EQUAL,          /* every element 1 (1.0 for floats) */
  GEN_SORTED_ASC,         /* ascending within each row */
  GEN_SORTED_DESC,        /* descending within each row */
  GEN_ZIPF,               /* heavy-tailed integers-as-values, many duplicates */
  GEN_DIST_COUNT
} gen_dist;

typedef struct gen_opts {
  gen_dist dist;
  uint64_t seed;
  int      equal_bits;    /* radix-adversarial: shared leading key bits; 0 = 20 (clamped to width - 4) */
  double   nan_fraction;  /* floats: fraction of NaNs (random sign and payload) */
  double   inf_fraction;  /* floats: fraction of +-inf */
  double   zero_fraction; /* floats: fraction of +-0 (the zeros' signs order their keys, not their values) */
  int64_t  row_length;    /* sorted distributions restart every row_length elements; 0 = never */
  int64_t  step_length;   /* uniform and normal floats: + 16 for each whole step_length elements before
                             this one in its row (rising plateaus, each in random order); 0 = none */
} gen_opts;

const char* gen_dist_name(gen_dist d);           /* "uniform", "normal", "radix", "cd", "equal", "asc", "desc", "zipf" */
int         gen_dist_parse(const char* s, gen_dist* d); /* 0 on success, -1 if unknown */

/* Writes count elements of dtype dt to out. @return 0, or -1 for an unknown dtype/dist. */
int gen_fill(void* out, topk_dtype dt, int64_t count, const gen_opts* o);

/* Conversions used by the generator and the tests (round to nearest even). */
uint16_t gen_f32_to_f16(float f);
uint16_t gen_f32_to_bf16(float f);
float    gen_f16_to_f32(uint16_t h);
float    gen_bf16_to_f32(uint16_t h);
/* Any element as a double, for printing (NaN and inf kept). */
double   gen_to_double(const void* base, int64_t i, topk_dtype dt);

#endif
