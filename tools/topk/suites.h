/*
 * suites.h: the benchmark suites of bench/suites.txt, parsed and expanded into
 * cases. bench/peers.py parses the same file with the same rules; the grammar is
 * described at the top of bench/suites.txt.
 */
#ifndef TOPK_TOOL_SUITES_H
#define TOPK_TOOL_SUITES_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"
#include "topk.h"

#define SUITE_NAME_MAX 32

/* One benchmark case: a problem shape and its input distribution. */
typedef struct bench_case {
  char       suite[SUITE_NAME_MAX];
  char       family[SUITE_NAME_MAX];
  topk_dtype dtype;
  gen_dist   dist;
  int64_t    batch, n, k;
  int        smallest; /* 0: the k largest */
  int        sorted;   /* 1: TOPK_SORTED */
} bench_case;

typedef struct case_list {
  bench_case* v;
  int64_t     count, cap;
} case_list;

/* A grid line as written: its columns unparsed, so expansion can report the line. */
typedef struct suite_grid {
  int  line;
  char suite[SUITE_NAME_MAX], family[SUITE_NAME_MAX];
  char dtypes[128], dists[128], batches[128], ns[128], ks[128], orders[64], sorteds[16];
} suite_grid;

typedef struct suite_about {
  char name[SUITE_NAME_MAX];
  char text[200];
} suite_about;

typedef struct suites_file {
  char         path[1024];
  int64_t      max_input_bytes; /* from the file; 0 = no cap */
  suite_grid*  grids;
  int          grid_count;
  suite_about* abouts;
  int          about_count;
} suites_file;

/* Reads and checks a suites file (every grid line is expanded once, so errors show at load).
 * @return 0, or -1 with a message "path:line: why" in err. */
int suites_load(const char* path, suites_file* sf, char* err, size_t err_len);
void suites_free(suites_file* sf);

/* Appends the cases of one suite (all grid lines named suite, in file order). family, if not
 * NULL, keeps only that family. max_input_bytes <= 0 uses the file's cap.
 * @return 0, or -1 with err set (unknown suite, out of memory). */
int suites_expand(const suites_file* sf, const char* suite, const char* family, int64_t max_input_bytes,
                  case_list* out, char* err, size_t err_len);

/* Expands one grid given as column texts (also used by `topk bench --n ... --k ...`).
 * @return 0, or -1 with err set. */
int suites_expand_grid(const suite_grid* g, int64_t max_input_bytes, case_list* out, char* err, size_t err_len);

/* Parses a list of integers in the suites grammar ("2^11..2^30", "1,100", "1000..128000:*2").
 * *values is malloc'ed. @return 0, or -1 with err set. */
int suites_parse_list(const char* text, int64_t** values, int* count, char* err, size_t err_len);

void case_list_free(case_list* l);

/* "2^20" for exact powers of two from 2^10 up, else the decimal value: how cases are printed. */
void suites_format_size(int64_t v, char* buf, size_t len);

#endif
