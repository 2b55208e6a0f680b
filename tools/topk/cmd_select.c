/*
 * cmd_select.c: `topk select [FILE]`, the k largest (or smallest) values of
 * each row of a .npy, raw binary or text file, with their indices.
 *
 * With no FILE it selects from a generated vector (10^7 uniform f32 values by
 * default) and prints the result and the time taken, so that a new user sees
 * the library work with one command. Data moves to the GPU through the blocking
 * helpers of topk.h section 6, because the tool includes no CUDA header.
 */
#define _POSIX_C_SOURCE 200809L /* stat() */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "gen.h"
#include "npy.h"
#include "options.h"
#include "textio.h"
#include "timer.h"
#include "topk.h"

static const opt_def select_opts_[] = {
    {"algo", 'a', OPT_STRING, "NAME", "algorithm (default auto: the library chooses); names below"},
    {"device", 'd', OPT_STRING, "D", "cpu, cuda or auto (default auto: cuda if a device is usable)"},
    {"dist", 0, OPT_STRING, "D", "generated input (no FILE): distribution (default uniform)"},
    {"dtype", 't', OPT_STRING, "T", "element type: f32 f16 bf16 f64 i32 u32 i64 u64"},
    {"index", 0, OPT_STRING, "T", "index type: i64 (default) or i32"},
    {"k", 'k', OPT_INT, "K", "results per row (default 10)"},
    {"max-iter", 0, OPT_INT, "N", "rtopk early stopping after N search steps (APPROXIMATE; default 0: exact)"},
    {"n", 'n', OPT_INT, "N", "generated input (no FILE): row length (default 10^7)"},
    {"output", 'o', OPT_STRING, "NAME", "write NAME.values.npy and NAME.indices.npy, not text"},
    {"raw", 0, OPT_FLAG, NULL, "FILE is raw little-endian binary (--dtype, --rows)"},
    {"rows", 'r', OPT_INT, "R", "split the input into R equal rows (default: .npy shape, else 1)"},
    {"seed", 0, OPT_INT, "S", "generated input (no FILE): seed (default 1)"},
    {"smallest", 's', OPT_FLAG, NULL, "the k smallest instead of the k largest"},
    {"sorted", 0, OPT_FLAG, NULL, "results best first, ties by index (default: any order)"},
    {"time", 0, OPT_FLAG, NULL, "print the time taken to standard error"},
    {NULL, 0, OPT_FLAG, NULL, NULL}};

static const opt_command select_cmd_ = {
    "select", "[options] [FILE]",
    "Selects the k largest (or smallest) values of each row of FILE, with their indices.\n"
    "Without FILE: selects from a generated vector and prints the time taken.",
    select_opts_,
    "Input (FILE; '-' is standard input):\n"
    "  .npy       recognised by its magic bytes (or a .npy name): shape (n,) or (rows, n);\n"
    "             dtypes <f4 <f2 <f8 <i4 <u4 <i8 <u8, bfloat16 as '<V2' (ml_dtypes' np.save);\n"
    "             '<u2' holding bfloat16 bits with --dtype bf16\n"
    "  --raw      little-endian binary of --dtype (default f32), split into --rows rows\n"
    "  text       anything else: numbers separated by whitespace or commas, '#' comments;\n"
    "             read as f64 unless --dtype says otherwise; --rows splits them into rows\n"
    "  no FILE    generated: --n (default 10^7) --dist --seed --dtype (default f32), --rows;\n"
    "             the results are printed sorted, followed by the time taken\n"
    "\n"
    "Output:\n"
    "  text       one line per result: ROW SLOT INDEX VALUE, all counted from 0; SLOT is\n"
    "             the position in the output (best first with --sorted), INDEX the\n"
    "             position in the row; VALUE is exact: the shortest decimal that reads\n"
    "             back to the same value, nan, inf, -inf\n"
    "  -o NAME    NAME.values.npy (k,) or (rows, k) and NAME.indices.npy (<i8 or <i4);\n"
    "             a trailing .npy on NAME is dropped\n"
    "\n"
    "Examples:\n"
    "  topk select                                   the demo\n"
    "  topk select -k 5 --sorted scores.npy          top 5 of each row, best first\n"
    "  printf '3 1 4 1 5 9 2 6' | topk select -k 3 --smallest -\n"
    "  topk select --raw --dtype bf16 --rows 64 -k 50 logits.bin -o top\n"};

/* ------------------------------------------------------------------ messages */

static int lib_error(topk_status s) {
  const char* detail = topk_error_detail();
  fprintf(stderr, "topk select: %s (%s)\n", detail && *detail ? detail : topk_status_message(s),
          topk_status_name(s));
  return (int)s;
}

static int io_error(const char* msg) {
  fprintf(stderr, "topk select: %s\n", msg);
  return EXIT_IO;
}

static void print_algorithms(FILE* out) {
  fprintf(out, "\nAlgorithms (--algo; which are built: topk info):\n ");
  for (int a = 0; a < TOPK_ALGO_COUNT; ++a) fprintf(out, " %s", topk_algo_name((topk_algo)a));
  fprintf(out, "\n");
}

static int has_suffix(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ------------------------------------------------------------------ input */

typedef struct select_args {
  topk_dtype   dtype;      /* from --dtype when given */
  int          dtype_given;
  int64_t      rows;       /* from --rows when given */
  int          rows_given;
  const char*  file;       /* NULL: generated input */
} select_args;

static int out_of_memory(const char* msg) {
  fprintf(stderr, "topk select: %s (%s)\n", msg, topk_status_name(TOPK_ERR_OUT_OF_MEMORY));
  return (int)TOPK_ERR_OUT_OF_MEMORY;
}

static int npy_error(npy_status s, const char* err) {
  return s == NPY_ERR_NO_MEMORY ? out_of_memory(err) : io_error(err);
}

/* 1 if the file at path starts with the .npy magic; -1 if it cannot be opened (err set). */
static int file_has_magic(const char* path, char* err, size_t err_len) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    snprintf(err, err_len, "cannot open '%s': %s", path, strerror(errno));
    return -1;
  }
  unsigned char head[8];
  size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  return npy_has_magic(head, got);
}

/* Reads FILE (.npy, raw or text) into *a. @return 0 or an exit code (message printed). */
static int load_file(const opt_values* v, const select_args* sa, npy_array* a) {
  char err[512];
  const char* path = sa->file;
  int raw = opt_given(v, "raw");
  int bf16_hint = sa->dtype_given && sa->dtype == TOPK_BF16;
  topk_dtype raw_dtype = sa->dtype_given ? sa->dtype : TOPK_F32;
  npy_status s;
  struct stat st;
  if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
    /* Regular files are read by path: no copy through a buffer, 64-bit sizes for
     * huge files. Pipes (and "-") are read once, whole, below: they cannot be peeked. */
    int magic = raw ? 0 : file_has_magic(path, err, sizeof err);
    if (magic < 0) return io_error(err);
    if (raw || magic || has_suffix(path, ".npy")) {
      s = raw ? npy_read_raw(path, raw_dtype, 1, a, err, sizeof err) : npy_read(path, bf16_hint, a, err, sizeof err);
      return s == NPY_OK ? 0 : npy_error(s, err);
    }
  }
  char* buf = NULL;
  size_t len = 0;
  int rc = text_read_file(path, &buf, &len, err, sizeof err);
  if (rc != 0) return rc == -2 ? out_of_memory(err) : io_error(err);
  const char* name = strcmp(path, "-") == 0 ? "standard input" : path;
  if (raw || npy_has_magic(buf, len)) {
    s = raw ? npy_read_raw_buffer(buf, len, name, raw_dtype, 1, a, err, sizeof err)
            : npy_read_buffer(buf, len, name, bf16_hint, a, err, sizeof err);
    free(buf);
    return s == NPY_OK ? 0 : npy_error(s, err);
  }
  memset(a, 0, sizeof *a);
  a->dtype = sa->dtype_given ? sa->dtype : TOPK_F64;
  a->ndim = 1;
  a->rows = 1;
  rc = text_parse_values(buf, len, name, a->dtype, &a->data, &a->n, err, sizeof err);
  free(buf);
  if (rc != 0) return rc == -2 ? out_of_memory(err) : io_error(err);
  return 0;
}

/* Applies --dtype and --rows to a loaded array. @return 0 or EXIT_USAGE (printed). */
static int shape_input(const opt_values* v, const select_args* sa, npy_array* a) {
  const char* name = strcmp(sa->file, "-") == 0 ? "standard input" : sa->file;
  if (sa->dtype_given && a->dtype != sa->dtype)
    return opt_usage_error(v, "'%s' holds %s values, not the --dtype %s given", name, topk_dtype_name(a->dtype),
                           topk_dtype_name(sa->dtype));
  if (!sa->rows_given || sa->rows == a->rows) return 0;
  if (a->ndim == 2)
    return opt_usage_error(v, "--rows %lld does not match the shape (%lld, %lld) of '%s'", (long long)sa->rows,
                           (long long)a->rows, (long long)a->n, name);
  if (a->n % sa->rows != 0)
    return opt_usage_error(v, "%lld values do not split into --rows %lld equal rows", (long long)a->n,
                           (long long)sa->rows);
  a->n /= sa->rows;
  a->rows = sa->rows;
  a->ndim = 2;
  return 0;
}

/* Fills *a with the generated demo input. @return 0 or an exit code (message printed). */
static int generate_input(const opt_values* v, const select_args* sa, gen_opts* g, npy_array* a) {
  memset(a, 0, sizeof *a);
  memset(g, 0, sizeof *g);
  a->dtype = sa->dtype_given ? sa->dtype : TOPK_F32;
  a->rows = sa->rows_given ? sa->rows : 1;
  a->ndim = sa->rows_given ? 2 : 1;
  a->n = opt_i64(v, "n", 10000000);
  if (a->n < 0) return opt_usage_error(v, "--n %lld is negative", (long long)a->n);
  const char* dist = opt_str(v, "dist", "uniform");
  if (gen_dist_parse(dist, &g->dist) != 0)
    return opt_usage_error(v, "unknown distribution '%s' (uniform normal radix cd equal asc desc zipf)", dist);
  g->seed = (uint64_t)opt_i64(v, "seed", 1);
  g->row_length = a->n;
  size_t es = topk_dtype_size(a->dtype);
  if (a->n > 0 && a->rows > INT64_MAX / a->n / (int64_t)es)
    return opt_usage_error(v, "--rows %lld x --n %lld is too large", (long long)a->rows, (long long)a->n);
  int64_t count = a->rows * a->n;
  if (count > 0 && !(a->data = malloc((size_t)count * es))) return out_of_memory("cannot allocate the input");
  if (count > 0) gen_fill(a->data, a->dtype, count, g);
  return 0;
}

/* ------------------------------------------------------------------ running */

typedef struct timings {
  double select_ms;  /* the selection alone */
  double total_ms;   /* CUDA: copies to the device, selection, copies back; CPU: = select_ms */
} timings;

static topk_status run_cpu(const topk_plan* plan, const npy_array* in, void* values, void* indices, int timed,
                           timings* t) {
  if (timed) {
    /* One untimed run first, so the time shown is not that of first-touch page faults. */
    topk_status s = topk_plan_run(plan, in->data, NULL, values, indices, NULL, 0, NULL);
    if (s != TOPK_SUCCESS) return s;
  }
  double t0 = timer_now_seconds();
  topk_status s = topk_plan_run(plan, in->data, NULL, values, indices, NULL, 0, NULL);
  t->select_ms = t->total_ms = (timer_now_seconds() - t0) * 1e3;
  return s;
}

/* Blocking copies that skip empty transfers (an empty input may have no host buffer). */
static topk_status to_device(void* dst, const void* src, size_t bytes) {
  return bytes ? topk_memcpy_to_device(dst, src, bytes) : TOPK_SUCCESS;
}
static topk_status to_host(void* dst, const void* src, size_t bytes) {
  return bytes ? topk_memcpy_to_host(dst, src, bytes) : TOPK_SUCCESS;
}

static topk_status run_cuda(const topk_plan* plan, const npy_array* in, size_t in_bytes, void* values,
                            size_t val_bytes, void* indices, size_t idx_bytes, int timed, timings* t) {
  void *d_in = NULL, *d_val = NULL, *d_idx = NULL;
  topk_event *start = NULL, *stop = NULL;
  /* At least one byte each, so that an empty problem still gets valid pointers. */
  topk_status s = topk_device_malloc(&d_in, in_bytes ? in_bytes : 1);
  if (s == TOPK_SUCCESS) s = topk_device_malloc(&d_val, val_bytes ? val_bytes : 1);
  if (s == TOPK_SUCCESS) s = topk_device_malloc(&d_idx, idx_bytes ? idx_bytes : 1);
  if (s == TOPK_SUCCESS && timed) {
    /* Warm-up: the first call pays for CUDA's lazy module loading and the memory pool. */
    s = to_device(d_in, in->data, in_bytes);
    if (s == TOPK_SUCCESS) s = topk_plan_run(plan, d_in, NULL, d_val, d_idx, NULL, 0, NULL);
    if (s == TOPK_SUCCESS) s = topk_device_synchronize();
  }
  int events = s == TOPK_SUCCESS && topk_event_create(&start) == TOPK_SUCCESS &&
               topk_event_create(&stop) == TOPK_SUCCESS;
  double t0 = timer_now_seconds(), t1 = t0, t2 = t0;
  if (s == TOPK_SUCCESS) s = to_device(d_in, in->data, in_bytes);
  if (s == TOPK_SUCCESS) {
    t1 = timer_now_seconds();
    if (events) topk_event_record(start, NULL);
    s = topk_plan_run(plan, d_in, NULL, d_val, d_idx, NULL, 0, NULL);
    if (events && s == TOPK_SUCCESS) topk_event_record(stop, NULL);
  }
  if (s == TOPK_SUCCESS) s = topk_device_synchronize();
  t2 = timer_now_seconds();
  if (s == TOPK_SUCCESS) s = to_host(values, d_val, val_bytes);
  if (s == TOPK_SUCCESS) s = to_host(indices, d_idx, idx_bytes);
  t->total_ms = (timer_now_seconds() - t0) * 1e3;
  float ms = 0;
  t->select_ms = (t2 - t1) * 1e3; /* wall clock (with a synchronisation) where events are missing */
  if (s == TOPK_SUCCESS && events && topk_event_elapsed_ms(start, stop, &ms) == TOPK_SUCCESS) t->select_ms = ms;
  topk_event_destroy(start);
  topk_event_destroy(stop);
  /* Free even after a failure; report the first error. */
  topk_status f1 = topk_device_free(d_in), f2 = topk_device_free(d_val), f3 = topk_device_free(d_idx);
  if (s == TOPK_SUCCESS) s = f1 != TOPK_SUCCESS ? f1 : f2 != TOPK_SUCCESS ? f2 : f3;
  return s;
}

/* ------------------------------------------------------------------ output */

static int print_text(FILE* out, const npy_array* in, int64_t k, const void* values, const void* indices,
                      topk_index it) {
  char buf[TEXT_VALUE_MAX];
  for (int64_t r = 0; r < in->rows; ++r)
    for (int64_t j = 0; j < k; ++j) {
      int64_t at = r * k + j;
      int64_t idx = it == TOPK_INDEX_I32 ? ((const int32_t*)indices)[at] : ((const int64_t*)indices)[at];
      text_format_value(buf, sizeof buf, values, at, in->dtype);
      fprintf(out, "%lld %lld %lld %s\n", (long long)r, (long long)j, (long long)idx, buf);
    }
  if (fflush(out) != 0 || ferror(out)) return io_error("cannot write the results to standard output");
  return 0;
}

static int write_npy_pair(const char* name, const npy_array* in, int64_t k, void* values, void* indices,
                          topk_index it) {
  size_t len = strlen(name);
  if (has_suffix(name, ".npy")) len -= 4;
  char* path = (char*)malloc(len + 16);
  if (!path) return io_error("out of memory");
  char err[512];
  npy_array a = {in->dtype, in->ndim, in->rows, k, values};
  snprintf(path, len + 16, "%.*s.values.npy", (int)len, name);
  npy_status s = npy_write(path, &a, 0, err, sizeof err);
  if (s == NPY_OK) {
    a.dtype = it == TOPK_INDEX_I32 ? TOPK_I32 : TOPK_I64;
    a.data = indices;
    snprintf(path, len + 16, "%.*s.indices.npy", (int)len, name);
    s = npy_write(path, &a, 0, err, sizeof err);
  }
  free(path);
  return s == NPY_OK ? 0 : io_error(err);
}

/* ------------------------------------------------------------------ the command */

/* Parses the options that do not depend on the input. @return 0 or EXIT_USAGE (printed). */
static int parse_common(const opt_values* v, select_args* sa, topk_problem* p, topk_backend* backend) {
  const char* s;
  memset(sa, 0, sizeof *sa);
  if (v->npos > 1) return opt_usage_error(v, "one FILE at most, got '%s' and '%s'", v->pos[0], v->pos[1]);
  sa->file = v->npos ? v->pos[0] : NULL;
  if ((s = opt_str(v, "dtype", NULL))) {
    if (topk_dtype_parse(s, &sa->dtype) != 0)
      return opt_usage_error(v, "unknown dtype '%s' (f32 f16 bf16 f64 i32 u32 i64 u64)", s);
    sa->dtype_given = 1;
  }
  if (opt_given(v, "rows")) {
    sa->rows = opt_i64(v, "rows", 1);
    sa->rows_given = 1;
    if (sa->rows < 1) return opt_usage_error(v, "--rows %lld must be at least 1", (long long)sa->rows);
  }
  p->k = opt_i64(v, "k", 10);
  if (p->k < 0) return opt_usage_error(v, "-k %lld is negative", (long long)p->k);
  s = opt_str(v, "algo", "auto");
  if (topk_algo_parse(s, &p->algo) != 0) {
    opt_usage_error(v, "unknown algorithm '%s'", s);
    print_algorithms(stderr);
    return EXIT_USAGE;
  }
  s = opt_str(v, "index", "i64");
  if (strcmp(s, "i64") == 0) p->index_type = TOPK_INDEX_I64;
  else if (strcmp(s, "i32") == 0) p->index_type = TOPK_INDEX_I32;
  else return opt_usage_error(v, "unknown index type '%s' (i64 or i32)", s);
  s = opt_str(v, "device", "auto");
  if (strcmp(s, "cpu") == 0) *backend = TOPK_BACKEND_CPU;
  else if (strcmp(s, "cuda") == 0 || strcmp(s, "gpu") == 0) *backend = TOPK_BACKEND_CUDA;
  else if (strcmp(s, "auto") == 0) *backend = topk_cuda_available() ? TOPK_BACKEND_CUDA : TOPK_BACKEND_CPU;
  else return opt_usage_error(v, "unknown device '%s' (cpu, cuda or auto)", s);
  if (opt_given(v, "smallest")) p->flags |= TOPK_SMALLEST;
  if (opt_given(v, "sorted")) p->flags |= TOPK_SORTED;
  const int64_t max_iter = opt_i64(v, "max-iter", 0);
  if (max_iter < 0 || max_iter > INT32_MAX) return opt_usage_error(v, "--max-iter %lld must be >= 0", (long long)max_iter);
  p->max_iter = (int32_t)max_iter;
  if (sa->file) {
    static const char* const gen_only[] = {"n", "dist", "seed"};
    for (int i = 0; i < 3; ++i)
      if (opt_given(v, gen_only[i]))
        return opt_usage_error(v, "--%s applies to the generated input only (no FILE)", gen_only[i]);
  } else if (opt_given(v, "raw")) {
    return opt_usage_error(v, "--raw needs a FILE");
  }
  return 0;
}

static void print_demo_header(const npy_array* in, const topk_problem* p, const gen_opts* g, topk_backend backend,
                              topk_algo algo) {
  char where[300] = "the CPU";
  topk_device_props props;
  if (backend == TOPK_BACKEND_CUDA && topk_device_get_props(0, &props) == TOPK_SUCCESS)
    snprintf(where, sizeof where, "%s", props.name);
  printf("topk select: the %lld %s of ", (long long)p->k, p->flags & TOPK_SMALLEST ? "smallest" : "largest");
  if (in->ndim == 2) printf("each of %lld rows of ", (long long)in->rows);
  printf("%lld %s %s values (seed %llu), on %s with %s\n", (long long)in->n, gen_dist_name(g->dist),
         topk_dtype_name(in->dtype), (unsigned long long)g->seed, where, topk_algo_name(algo));
  printf("row slot index value\n");
}

static void print_times(FILE* out, const timings* t, topk_backend backend) {
  if (backend == TOPK_BACKEND_CUDA)
    fprintf(out, "time: %.3f ms to select on the GPU; %.3f ms with the copies to and from the device\n",
            t->select_ms, t->total_ms);
  else
    fprintf(out, "time: %.3f ms to select on the CPU\n", t->select_ms);
}

int cmd_select(int argc, char** argv) {
  opt_values v;
  int rc = opt_parse(&select_cmd_, argc, argv, &v);
  if (rc != 0) return rc;
  if (v.help) {
    opt_help(&select_cmd_, stdout);
    print_algorithms(stdout);
    return 0;
  }
  select_args sa;
  topk_problem p = {.batch = 0};
  topk_backend backend = TOPK_BACKEND_CPU;
  if ((rc = parse_common(&v, &sa, &p, &backend)) != 0) return rc;

  npy_array in;
  gen_opts g;
  int demo = sa.file == NULL;
  if (demo) {
    rc = generate_input(&v, &sa, &g, &in);
  } else {
    rc = load_file(&v, &sa, &in);
    if (rc == 0 && (rc = shape_input(&v, &sa, &in)) != 0) npy_free(&in);
  }
  if (rc != 0) return rc;
  if (demo) p.flags |= TOPK_SORTED; /* the demo is read by a person: best first */

  p.dtype = in.dtype;
  p.batch = in.rows;
  p.n = in.n;
  p.backend = backend;
  topk_plan* plan = NULL;
  topk_status s = topk_plan_create(&plan, &p);
  if (s != TOPK_SUCCESS) {
    npy_free(&in);
    return lib_error(s);
  }

  /* plan_create checked k <= n, so the outputs are no larger than the input. */
  size_t es = topk_dtype_size(p.dtype), is = p.index_type == TOPK_INDEX_I32 ? 4 : 8;
  size_t count = (size_t)(p.batch * p.k);
  void* values = malloc(count ? count * es : 1);
  void* indices = malloc(count ? count * is : 1);
  if (!values || !indices) {
    rc = out_of_memory("cannot allocate the results");
  } else {
    timings t = {0, 0};
    int timed = demo || opt_given(&v, "time");
    if (backend == TOPK_BACKEND_CUDA)
      s = run_cuda(plan, &in, (size_t)(in.rows * in.n) * es, values, count * es, indices, count * is, timed, &t);
    else
      s = run_cpu(plan, &in, values, indices, timed, &t);
    if (s != TOPK_SUCCESS) {
      rc = lib_error(s);
    } else if (opt_given(&v, "output")) {
      rc = write_npy_pair(opt_str(&v, "output", ""), &in, p.k, values, indices, p.index_type);
    } else {
      if (demo) print_demo_header(&in, &p, &g, backend, topk_plan_algo(plan));
      rc = print_text(stdout, &in, p.k, values, indices, p.index_type);
    }
    if (rc == 0 && demo) print_times(stdout, &t, backend);
    else if (rc == 0 && timed) print_times(stderr, &t, backend);
  }
  free(values);
  free(indices);
  topk_plan_destroy(plan);
  npy_free(&in);
  return rc != 0 ? rc : (int)s;
}
