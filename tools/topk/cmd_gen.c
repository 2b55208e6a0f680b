/*
 * cmd_gen.c: `topk gen`, test data from the distributions of gen.h, written as
 * .npy or as text (one value per line, the format `topk select` reads back).
 * The same seed gives the same data on every machine (gen.h is counter-based).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gen.h"
#include "npy.h"
#include "options.h"
#include "textio.h"
#include "topk.h"

static const opt_def gen_opts_[] = {
    {"dist", 0, OPT_STRING, "D", "distribution (default uniform); names below"},
    {"dtype", 't', OPT_STRING, "T", "element type: f32 (default) f16 bf16 f64 i32 u32 i64 u64"},
    {"equal-bits", 0, OPT_INT, "B", "radix: leading key bits shared by every element (default 20)"},
    {"inf", 0, OPT_NUM, "F", "floats: fraction of +-inf (default 0)"},
    {"n", 'n', OPT_INT, "N", "elements per row (required; 1e6 and 2^20 are accepted)"},
    {"nan", 0, OPT_NUM, "F", "floats: fraction of NaN (default 0)"},
    {"output", 'o', OPT_STRING, "FILE", "write FILE (.npy); default: text on standard output"},
    {"rows", 'r', OPT_INT, "R", "rows: shape (R, N) instead of (N,)"},
    {"seed", 0, OPT_INT, "S", "seed (default 1)"},
    {NULL, 0, OPT_FLAG, NULL, NULL}};

static const opt_command gen_cmd_ = {
    "gen", "--n N [options] [-o FILE.npy]",
    "Generates test data: N values (R rows of N with --rows) of a distribution.",
    gen_opts_,
    "Distributions:\n"
    "  uniform    floats U[0,1); integers: uniform random bits\n"
    "  normal     floats N(0,1); integers: round(N(0,1) * 2^(bits/4))\n"
    "  radix      radix-adversarial: the leading --equal-bits key bits equal everywhere\n"
    "  cd         Dr. Top-k's customized distribution: most values in one narrow bucket\n"
    "  equal      every value 1\n"
    "  asc, desc  sorted within each row\n"
    "  zipf       heavy-tailed, many duplicates\n"
    "\n"
    "Output: a .npy file with -o (bf16 as '<V2', see topk select --help), else text,\n"
    "one value per line, exact (the shortest decimal that reads back to the value).\n"
    "\n"
    "Examples:\n"
    "  topk gen --n 2^20 --dist radix -o radix.npy\n"
    "  topk gen --dtype bf16 --rows 8 --n 32000 --nan 0.01 -o logits.npy\n"
    "  topk gen --n 10 | topk select -k 3 -\n"};

int cmd_gen(int argc, char** argv) {
  opt_values v;
  int rc = opt_parse(&gen_cmd_, argc, argv, &v);
  if (rc != 0) return rc;
  if (v.help) return opt_help(&gen_cmd_, stdout);
  if (v.npos > 0) return opt_usage_error(&v, "unexpected argument '%s' (the output file goes after -o)", v.pos[0]);

  gen_opts g;
  memset(&g, 0, sizeof g);
  const char* s = opt_str(&v, "dist", "uniform");
  if (gen_dist_parse(s, &g.dist) != 0)
    return opt_usage_error(&v, "unknown distribution '%s' (uniform normal radix cd equal asc desc zipf)", s);
  topk_dtype dt = TOPK_F32;
  s = opt_str(&v, "dtype", "f32");
  if (topk_dtype_parse(s, &dt) != 0)
    return opt_usage_error(&v, "unknown dtype '%s' (f32 f16 bf16 f64 i32 u32 i64 u64)", s);
  if (!opt_given(&v, "n")) return opt_usage_error(&v, "--n is required");
  int64_t n = opt_i64(&v, "n", 0), rows = opt_i64(&v, "rows", 1);
  if (n < 0) return opt_usage_error(&v, "--n %lld is negative", (long long)n);
  if (rows < 1) return opt_usage_error(&v, "--rows %lld must be at least 1", (long long)rows);
  g.seed = (uint64_t)opt_i64(&v, "seed", 1);
  int64_t equal_bits = opt_i64(&v, "equal-bits", 0);
  if (equal_bits < 0 || equal_bits > 64)
    return opt_usage_error(&v, "--equal-bits %lld is outside 0..64", (long long)equal_bits);
  g.equal_bits = (int)equal_bits;
  g.nan_fraction = opt_num(&v, "nan", 0);
  g.inf_fraction = opt_num(&v, "inf", 0);
  if (g.nan_fraction < 0 || g.nan_fraction > 1 || g.inf_fraction < 0 || g.inf_fraction > 1 ||
      g.nan_fraction + g.inf_fraction > 1)
    return opt_usage_error(&v, "--nan and --inf are fractions in [0, 1] with a sum of at most 1");
  int is_float = dt == TOPK_F32 || dt == TOPK_F64 || dt == TOPK_F16 || dt == TOPK_BF16;
  if (!is_float && (g.nan_fraction > 0 || g.inf_fraction > 0))
    return opt_usage_error(&v, "--nan and --inf need a floating-point --dtype, not %s", topk_dtype_name(dt));
  g.row_length = n; /* sorted distributions restart every row */

  size_t es = topk_dtype_size(dt);
  if (n > 0 && rows > INT64_MAX / n / (int64_t)es)
    return opt_usage_error(&v, "--rows %lld x --n %lld is too large", (long long)rows, (long long)n);
  int64_t count = rows * n;
  npy_array a = {dt, opt_given(&v, "rows") ? 2 : 1, rows, n, NULL};
  if (count > 0 && (uint64_t)count * es > (uint64_t)SIZE_MAX) a.data = NULL;
  else if (count > 0) a.data = malloc((size_t)count * es);
  if (count > 0 && !a.data) {
    fprintf(stderr, "topk gen: cannot allocate %lld bytes (%s)\n", (long long)(count * (int64_t)es),
            topk_status_name(TOPK_ERR_OUT_OF_MEMORY));
    return (int)TOPK_ERR_OUT_OF_MEMORY;
  }
  if (count > 0 && gen_fill(a.data, dt, count, &g) != 0) {
    npy_free(&a);
    fprintf(stderr, "topk gen: the generator rejected %s %s\n", gen_dist_name(g.dist), topk_dtype_name(dt));
    return (int)TOPK_ERR_INTERNAL;
  }

  rc = 0;
  const char* out = opt_str(&v, "output", NULL);
  if (out) {
    char err[512];
    if (npy_write(out, &a, 0, err, sizeof err) != NPY_OK) {
      fprintf(stderr, "topk gen: %s\n", err);
      rc = EXIT_IO;
    }
  } else {
    char buf[TEXT_VALUE_MAX];
    for (int64_t i = 0; i < count; ++i) {
      text_format_value(buf, sizeof buf, a.data, i, dt);
      fputs(buf, stdout);
      fputc('\n', stdout);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "topk gen: cannot write to standard output\n");
      rc = EXIT_IO;
    }
  }
  npy_free(&a);
  return rc;
}
