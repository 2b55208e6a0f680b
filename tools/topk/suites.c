/*
 * suites.c: parses bench/suites.txt and expands its grids into benchmark cases.
 *
 * The grammar is documented at the top of bench/suites.txt; bench/peers.py
 * implements the same rules, and `topk bench --list` / `peers.py --dry-run`
 * print the same cases, which is how the two are kept in step.
 */
#include "suites.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST_VALUES 100000  /* a typo like 1..10^9 must not eat the memory */
#define MAX_GRID_CASES 1000000  /* nor a grid of two long lists */
#define MAX_LINE 4096

static int fail(char* err, size_t err_len, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(char* err, size_t err_len, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_len, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---------------------------------------------------------------- expressions */

/* A parsed expression: exact while it stays integral, a double otherwise (1.28e5). */
typedef struct num {
  int     is_int;
  int64_t i;
  double  d;
  int     is_power;       /* the expression was exactly BASE^EXP with integers */
  int64_t base;
} num;

static double num_value(const num* x) { return x->is_int ? (double)x->i : x->d; }

static int parse_number(const char** s, num* out) {
  const char* p = *s;
  if (!isdigit((unsigned char)*p)) return -1;
  const char* q = p;
  while (isdigit((unsigned char)*q)) ++q;
  /* "100..200" is an integer followed by a range, not the double "100." */
  int integral = (*q != '.' || q[1] == '.') && *q != 'e' && *q != 'E';
  memset(out, 0, sizeof *out);
  if (integral) {
    errno = 0;
    long long v = strtoll(p, NULL, 10);
    if (errno) return -1;
    out->is_int = 1;
    out->i = v;
    *s = q;
    return 0;
  }
  char* end = NULL;
  out->d = strtod(p, &end);
  if (end == p) return -1;
  *s = end;
  return 0;
}

/* factor := number ['^' number] */
static int parse_factor(const char** s, num* out) {
  if (parse_number(s, out)) return -1;
  if (**s != '^') return 0;
  ++*s;
  num e;
  if (parse_number(s, &e)) return -1;
  if (out->is_int && e.is_int && e.i >= 0) {
    int64_t base = out->i, v = 1;
    for (int64_t j = 0; j < e.i; ++j) {
      if (base != 0 && v > INT64_MAX / (base > 0 ? base : 1)) return -1;
      v *= base;
    }
    out->i = v;
    out->is_power = 1;
    out->base = base;
    return 0;
  }
  out->d = pow(num_value(out), num_value(&e));
  out->is_int = 0;
  return 0;
}

/* expr := factor ('*' factor)* */
static int parse_expr(const char** s, num* out) {
  if (parse_factor(s, out)) return -1;
  while (**s == '*' && isdigit((unsigned char)(*s)[1])) {
    ++*s;
    num f;
    if (parse_factor(s, &f)) return -1;
    if (out->is_int && f.is_int) {
      if (f.i != 0 && out->i > INT64_MAX / f.i) return -1;
      out->i *= f.i;
    } else {
      out->d = num_value(out) * num_value(&f);
      out->is_int = 0;
    }
    out->is_power = 0;
  }
  return 0;
}

/* The expression as an int64, if it is one (1.28e5 is; 2.5 is not). */
static int num_to_int(const num* x, int64_t* v) {
  if (x->is_int) { *v = x->i; return 0; }
  double r = nearbyint(x->d);
  if (!(fabs(x->d - r) <= 1e-9 * fmax(1.0, fabs(x->d))) || r > 9.2e18 || r < -9.2e18) return -1;
  *v = (int64_t)r;
  return 0;
}

/* ---------------------------------------------------------------- lists */

/* One item of a list after expansion: a value, or k = n / value. */
typedef struct item {
  int     n_div;
  int64_t v;
} item;

typedef struct item_list {
  item* v;
  int   count, cap;
} item_list;

static int items_push(item_list* l, int n_div, int64_t v, char* err, size_t err_len) {
  for (int i = 0; i < l->count; ++i)
    if (l->v[i].n_div == n_div && l->v[i].v == v) return 0; /* duplicates are dropped */
  if (l->count >= MAX_LIST_VALUES) return fail(err, err_len, "list has more than %d values", MAX_LIST_VALUES);
  if (l->count == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    item* grown = (item*)realloc(l->v, (size_t)cap * sizeof *grown);
    if (!grown) return fail(err, err_len, "out of memory");
    l->v = grown;
    l->cap = cap;
  }
  l->v[l->count].n_div = n_div;
  l->v[l->count].v = v;
  ++l->count;
  return 0;
}

/* Parses one comma-free item starting at *s into l. */
static int parse_item(const char** s, int allow_n_div, item_list* l, char* err, size_t err_len) {
  const char* start = *s;
  int n_div = 0;
  if (**s == 'n' && (*s)[1] == '/') {
    if (!allow_n_div) return fail(err, err_len, "'n/' is allowed only in the k column");
    n_div = 1;
    *s += 2;
  }
  num a;
  int64_t av;
  if (parse_expr(s, &a) || num_to_int(&a, &av))
    return fail(err, err_len, "bad number at '%s'", start);
  if (strncmp(*s, "..", 2) != 0) {
    if (av < 1) return fail(err, err_len, "'%.*s' must be at least 1", (int)(*s - start), start);
    return items_push(l, n_div, av, err, err_len);
  }
  if (n_div) return fail(err, err_len, "'n/' cannot start a range");
  *s += 2;
  num b;
  int64_t bv;
  if (parse_expr(s, &b) || num_to_int(&b, &bv)) return fail(err, err_len, "bad range end at '%s'", start);
  int geometric = 0;
  int64_t step = 1;
  if (a.is_power && b.is_power && a.base == b.base && a.base >= 2) {
    geometric = 1; /* B^a..B^c: every power of B */
    step = a.base;
  }
  if (**s == ':') {
    char kind = (*s)[1];
    if (kind != '*' && kind != '+') return fail(err, err_len, "range step must be ':*F' or ':+S' in '%s'", start);
    *s += 2;
    num st;
    if (parse_expr(s, &st) || num_to_int(&st, &step)) return fail(err, err_len, "bad range step in '%s'", start);
    geometric = kind == '*';
    if (step < (geometric ? 2 : 1)) return fail(err, err_len, "range step too small in '%s'", start);
  }
  if (av < 1 || bv < av) return fail(err, err_len, "range '%.*s' is empty or starts below 1", (int)(*s - start), start);
  for (int64_t v = av; v <= bv;) {
    if (items_push(l, 0, v, err, err_len)) return -1;
    if (geometric ? v > INT64_MAX / step : v > INT64_MAX - step) break;
    v = geometric ? v * step : v + step;
  }
  return 0;
}

static int parse_items(const char* text, int allow_n_div, item_list* l, char* err, size_t err_len) {
  memset(l, 0, sizeof *l);
  const char* s = text;
  for (;;) {
    if (parse_item(&s, allow_n_div, l, err, err_len)) {
      free(l->v);
      l->v = NULL;
      return -1;
    }
    if (*s == '\0') return 0;
    if (*s != ',') {
      free(l->v);
      l->v = NULL;
      return fail(err, err_len, "unexpected '%s' in list '%s'", s, text);
    }
    ++s;
  }
}

int suites_parse_list(const char* text, int64_t** values, int* count, char* err, size_t err_len) {
  item_list l;
  if (parse_items(text, 0, &l, err, err_len)) return -1;
  *values = (int64_t*)malloc((size_t)(l.count > 0 ? l.count : 1) * sizeof(int64_t));
  if (!*values) {
    free(l.v);
    return fail(err, err_len, "out of memory");
  }
  for (int i = 0; i < l.count; ++i) (*values)[i] = l.v[i].v;
  *count = l.count;
  free(l.v);
  return 0;
}

/* Splits a comma list of words in buf (modified in place); empty words are skipped.
 * @return the word count, or -1 if there are more than max. */
static int split_words(char* buf, char** words, int max) {
  int c = 0;
  for (char* p = buf; *p;) {
    char* end = strchr(p, ',');
    if (end) *end = '\0';
    if (*p) {
      if (c == max) return -1;
      words[c++] = p;
    }
    if (!end) break;
    p = end + 1;
  }
  return c;
}

/* ---------------------------------------------------------------- cases */

static int push_case(case_list* out, const bench_case* c) {
  if (out->count == out->cap) {
    int64_t cap = out->cap ? 2 * out->cap : 64;
    bench_case* grown = (bench_case*)realloc(out->v, (size_t)cap * sizeof *grown);
    if (!grown) return -1;
    out->v = grown;
    out->cap = cap;
  }
  out->v[out->count++] = *c;
  return 0;
}

void case_list_free(case_list* l) {
  free(l->v);
  memset(l, 0, sizeof *l);
}

int suites_expand_grid(const suite_grid* g, int64_t max_input_bytes, case_list* out, char* err, size_t err_len) {
  char buf[128];
  char* words[32];
  topk_dtype dtypes[32];
  gen_dist dists[32];
  int smallest[2], sorted[2];

  snprintf(buf, sizeof buf, "%s", g->dtypes);
  int ndt = split_words(buf, words, 32);
  if (ndt < 0) return fail(err, err_len, "too many dtypes");
  for (int i = 0; i < ndt; ++i)
    if (topk_dtype_parse(words[i], &dtypes[i])) return fail(err, err_len, "unknown dtype '%s'", words[i]);
  snprintf(buf, sizeof buf, "%s", g->dists);
  int nds = split_words(buf, words, 32);
  if (nds < 0) return fail(err, err_len, "too many distributions");
  for (int i = 0; i < nds; ++i)
    if (gen_dist_parse(words[i], &dists[i])) return fail(err, err_len, "unknown distribution '%s'", words[i]);
  snprintf(buf, sizeof buf, "%s", g->orders[0] ? g->orders : "largest");
  int nor = split_words(buf, words, 2);
  if (nor < 0) return fail(err, err_len, "order takes at most two values");
  for (int i = 0; i < nor; ++i) {
    if (strcmp(words[i], "largest") && strcmp(words[i], "smallest"))
      return fail(err, err_len, "order must be largest or smallest, not '%s'", words[i]);
    smallest[i] = strcmp(words[i], "smallest") == 0;
  }
  snprintf(buf, sizeof buf, "%s", g->sorteds[0] ? g->sorteds : "0");
  int nso = split_words(buf, words, 2);
  if (nso < 0) return fail(err, err_len, "sorted takes at most two values");
  for (int i = 0; i < nso; ++i) {
    if (strcmp(words[i], "0") && strcmp(words[i], "1")) return fail(err, err_len, "sorted must be 0 or 1, not '%s'", words[i]);
    sorted[i] = words[i][0] == '1';
  }
  if (!ndt || !nds || !nor || !nso) return fail(err, err_len, "empty list");

  item_list batches, ns, ks;
  if (parse_items(g->batches, 0, &batches, err, err_len)) return -1;
  if (parse_items(g->ns, 0, &ns, err, err_len)) {
    free(batches.v);
    return -1;
  }
  if (parse_items(g->ks, 1, &ks, err, err_len)) {
    free(batches.v);
    free(ns.v);
    return -1;
  }
  int64_t* seen = (int64_t*)malloc((size_t)ks.count * sizeof(int64_t));
  int rc = seen ? 0 : fail(err, err_len, "out of memory");
  int64_t first = out->count;

  bench_case c;
  memset(&c, 0, sizeof c);
  snprintf(c.suite, sizeof c.suite, "%s", g->suite);
  snprintf(c.family, sizeof c.family, "%s", g->family);
  for (int a = 0; a < ndt && !rc; ++a)
    for (int b = 0; b < nds && !rc; ++b)
      for (int r = 0; r < batches.count && !rc; ++r)
        for (int ni = 0; ni < ns.count && !rc; ++ni) {
          c.dtype = dtypes[a];
          c.dist = dists[b];
          c.batch = batches.v[r].v;
          c.n = ns.v[ni].v;
          double in_bytes = (double)c.batch * (double)c.n * (double)topk_dtype_size(c.dtype);
          if (max_input_bytes > 0 && in_bytes > (double)max_input_bytes) continue;
          int nseen = 0;
          for (int ki = 0; ki < ks.count && !rc; ++ki) {
            c.k = ks.v[ki].n_div ? c.n / ks.v[ki].v : ks.v[ki].v;
            if (c.k < 1 || c.k > c.n) continue;
            int dup = 0;
            for (int j = 0; j < nseen; ++j) dup |= seen[j] == c.k; /* n/1000 may equal a listed k */
            if (dup) continue;
            seen[nseen++] = c.k;
            for (int o = 0; o < nor && !rc; ++o)
              for (int so = 0; so < nso && !rc; ++so) {
                c.smallest = smallest[o];
                c.sorted = sorted[so];
                if (out->count - first >= MAX_GRID_CASES)
                  rc = fail(err, err_len, "the grid has more than %d cases", MAX_GRID_CASES);
                else if (push_case(out, &c))
                  rc = fail(err, err_len, "out of memory");
              }
          }
        }
  free(seen);
  free(batches.v);
  free(ns.v);
  free(ks.v);
  return rc;
}

/* ---------------------------------------------------------------- the file */

static int copy_field(char* dst, size_t cap, const char* src, const char* what, char* err, size_t err_len) {
  if (strlen(src) >= cap) return fail(err, err_len, "%s '%s' is too long (at most %zu characters)", what, src, cap - 1);
  memcpy(dst, src, strlen(src) + 1);
  return 0;
}

/* Parses one grid line's tokens into g. */
static int parse_grid(char** tok, int ntok, suite_grid* g, char* err, size_t err_len) {
  if (ntok < 7)
    return fail(err, err_len, "expected SUITE FAMILY DTYPES DISTS BATCHES NS KS [order=..] [sorted=..], got %d columns",
                ntok);
  memset(g, 0, sizeof *g);
  if (copy_field(g->suite, sizeof g->suite, tok[0], "suite name", err, err_len) ||
      copy_field(g->family, sizeof g->family, tok[1], "family", err, err_len) ||
      copy_field(g->dtypes, sizeof g->dtypes, tok[2], "dtype list", err, err_len) ||
      copy_field(g->dists, sizeof g->dists, tok[3], "distribution list", err, err_len) ||
      copy_field(g->batches, sizeof g->batches, tok[4], "batch list", err, err_len) ||
      copy_field(g->ns, sizeof g->ns, tok[5], "n list", err, err_len) ||
      copy_field(g->ks, sizeof g->ks, tok[6], "k list", err, err_len))
    return -1;
  for (int i = 7; i < ntok; ++i) {
    if (strncmp(tok[i], "order=", 6) == 0) {
      if (copy_field(g->orders, sizeof g->orders, tok[i] + 6, "order list", err, err_len)) return -1;
    } else if (strncmp(tok[i], "sorted=", 7) == 0) {
      if (copy_field(g->sorteds, sizeof g->sorteds, tok[i] + 7, "sorted list", err, err_len)) return -1;
    } else {
      return fail(err, err_len, "unknown option '%s' (order=... or sorted=...)", tok[i]);
    }
  }
  return 0;
}

void suites_free(suites_file* sf) {
  free(sf->grids);
  free(sf->abouts);
  memset(sf, 0, sizeof *sf);
}

int suites_load(const char* path, suites_file* sf, char* err, size_t err_len) {
  memset(sf, 0, sizeof *sf);
  snprintf(sf->path, sizeof sf->path, "%s", path);
  FILE* f = fopen(path, "r");
  if (!f) return fail(err, err_len, "%s: cannot open: %s", path, strerror(errno));
  char line[MAX_LINE], why[256];
  int lineno = 0, rc = 0, grid_cap = 0, about_cap = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    ++lineno;
    if (!strchr(line, '\n') && !feof(f)) {
      rc = fail(err, err_len, "%s:%d: line longer than %d characters", path, lineno, MAX_LINE - 2);
      break;
    }
    char* hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char* tok[64];
    int ntok = 0;
    for (char* t = strtok(line, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) {
      if (ntok == 64) {
        rc = fail(err, err_len, "%s:%d: more than 64 columns", path, lineno);
        break;
      }
      tok[ntok++] = t;
    }
    if (rc) break;
    if (ntok == 0) continue;
    if (strcmp(tok[0], "about") == 0) {
      if (ntok < 3) {
        rc = fail(err, err_len, "%s:%d: expected 'about SUITE TEXT'", path, lineno);
        break;
      }
      if (sf->about_count == about_cap) {
        about_cap = about_cap ? 2 * about_cap : 16;
        suite_about* grown = (suite_about*)realloc(sf->abouts, (size_t)about_cap * sizeof *grown);
        if (!grown) { rc = fail(err, err_len, "out of memory"); break; }
        sf->abouts = grown;
      }
      suite_about* a = &sf->abouts[sf->about_count++];
      snprintf(a->name, sizeof a->name, "%s", tok[1]);
      a->text[0] = '\0';
      for (int i = 2; i < ntok; ++i) {
        size_t used = strlen(a->text);
        snprintf(a->text + used, sizeof a->text - used, "%s%s", i > 2 ? " " : "", tok[i]);
      }
    } else if (strcmp(tok[0], "max_input_bytes") == 0) {
      item_list l;
      if (ntok != 2 || parse_items(tok[1], 0, &l, why, sizeof why) || l.count != 1) {
        rc = fail(err, err_len, "%s:%d: expected 'max_input_bytes VALUE'", path, lineno);
        break;
      }
      sf->max_input_bytes = l.v[0].v;
      free(l.v);
    } else {
      suite_grid g;
      if (parse_grid(tok, ntok, &g, why, sizeof why)) {
        rc = fail(err, err_len, "%s:%d: %s", path, lineno, why);
        break;
      }
      g.line = lineno;
      case_list probe = {0};
      if (suites_expand_grid(&g, 0, &probe, why, sizeof why)) {
        rc = fail(err, err_len, "%s:%d: %s", path, lineno, why);
        break;
      }
      case_list_free(&probe);
      if (sf->grid_count == grid_cap) {
        grid_cap = grid_cap ? 2 * grid_cap : 32;
        suite_grid* grown = (suite_grid*)realloc(sf->grids, (size_t)grid_cap * sizeof *grown);
        if (!grown) { rc = fail(err, err_len, "out of memory"); break; }
        sf->grids = grown;
      }
      sf->grids[sf->grid_count++] = g;
    }
  }
  fclose(f);
  if (rc) suites_free(sf);
  return rc;
}

int suites_expand(const suites_file* sf, const char* suite, const char* family, int64_t max_input_bytes,
                  case_list* out, char* err, size_t err_len) {
  if (max_input_bytes <= 0) max_input_bytes = sf->max_input_bytes;
  int found = 0;
  char why[256];
  for (int i = 0; i < sf->grid_count; ++i) {
    const suite_grid* g = &sf->grids[i];
    if (strcmp(g->suite, suite) != 0) continue;
    found = 1;
    if (family && strcmp(g->family, family) != 0) continue;
    if (suites_expand_grid(g, max_input_bytes, out, why, sizeof why))
      return fail(err, err_len, "%s:%d: %s", sf->path, g->line, why);
  }
  if (!found) {
    char names[512] = "";
    for (int i = 0; i < sf->grid_count; ++i) {
      const char* name = sf->grids[i].suite;
      int dup = 0;
      for (int j = 0; j < i; ++j) dup |= strcmp(sf->grids[j].suite, name) == 0;
      size_t used = strlen(names);
      if (!dup) snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", name);
    }
    return fail(err, err_len, "no suite '%s' in %s (there are: %s)", suite, sf->path, names);
  }
  return 0;
}

void suites_format_size(int64_t v, char* buf, size_t len) {
  if (v >= 1024 && (v & (v - 1)) == 0) {
    int e = 0;
    while ((INT64_C(1) << e) < v) ++e;
    snprintf(buf, len, "2^%d", e);
  } else {
    snprintf(buf, len, "%lld", (long long)v);
  }
}
