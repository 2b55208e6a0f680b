/*
 * npy.c: NumPy .npy and raw binary files (see npy.h).
 *
 * The header is a Python dict literal. We parse the small subset NumPy writes
 * (and hand-written variants: either quote style, any key order, extra spaces,
 * Python 2 'L' suffixes) with a bounds-checked scanner, never reading past the
 * header length the preamble announces. Anything else is a distinct error.
 */
#define _POSIX_C_SOURCE 200809L /* fseeko/ftello: 64-bit offsets under -std=c11 */
#define _FILE_OFFSET_BITS 64
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#  define npy_fseek _fseeki64
#  define npy_ftell _ftelli64
typedef __int64 npy_off;
#else
#  define npy_fseek fseeko
#  define npy_ftell ftello
typedef off_t npy_off;
#endif

static const unsigned char magic_[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
enum { MAX_HEADER = 1 << 20 };  /* NumPy itself refuses more than 10000 bytes by default */
enum { IO_CHUNK = 1 << 26 };     /* bounded reads and writes: some libcs mishandle > 2 GiB at once */

static const char* const status_names_[] = {
    "NPY_OK",          "NPY_ERR_OPEN",     "NPY_ERR_READ",          "NPY_ERR_WRITE",
    "NPY_ERR_BAD_MAGIC", "NPY_ERR_VERSION", "NPY_ERR_TRUNCATED_HEADER", "NPY_ERR_BAD_HEADER",
    "NPY_ERR_FORTRAN_ORDER", "NPY_ERR_DTYPE", "NPY_ERR_SHAPE",     "NPY_ERR_SIZE_MISMATCH",
    "NPY_ERR_NO_MEMORY", "NPY_ERR_ARGUMENT"};

const char* npy_status_name(npy_status s) {
  return (unsigned)s < sizeof status_names_ / sizeof status_names_[0] ? status_names_[s] : "NPY_ERR_UNKNOWN";
}

static npy_status fail(npy_status s, char* err, size_t err_len, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static npy_status fail(npy_status s, char* err, size_t err_len, const char* fmt, ...) {
  if (err && err_len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
  }
  return s;
}

int npy_has_magic(const void* buf, size_t len) {
  return buf && len >= sizeof magic_ && memcmp(buf, magic_, sizeof magic_) == 0;
}

/* ------------------------------------------------------------------ dtypes */

/* The descr we write for each dtype, indexed by topk_dtype. */
static const char* const descr_of_[TOPK_DTYPE_COUNT] = {"<f4", "<f2", "<V2", "<f8", "<i4", "<u4", "<i8", "<u8"};
/* Sizes and names kept here, not taken from libtopk, so this module links on its own. */
static const int size_of_[TOPK_DTYPE_COUNT] = {4, 2, 2, 8, 4, 4, 8, 8};
static const char* const name_of_[TOPK_DTYPE_COUNT] = {"f32", "f16", "bf16", "f64", "i32", "u32", "i64", "u64"};
static int64_t dtype_size(topk_dtype dt) { return (unsigned)dt < TOPK_DTYPE_COUNT ? size_of_[dt] : 0; }

/* Maps a descr string to a dtype. @return 0, or -1 if topk has no such type. */
static int dtype_of_descr(const char* d, int u2_as_bf16, topk_dtype* dt) {
  for (int i = 0; i < TOPK_DTYPE_COUNT; ++i)
    if (strcmp(d, descr_of_[i]) == 0) { *dt = (topk_dtype)i; return 0; }
  if (strcmp(d, "bfloat16") == 0 || strcmp(d, "<bf16") == 0 || (u2_as_bf16 && strcmp(d, "<u2") == 0)) {
    *dt = TOPK_BF16;
    return 0;
  }
  return -1;
}

/* ------------------------------------------------------------------ header scanner */

typedef struct scan {
  const char* p;
  const char* end;
} scan;

static void skip_ws(scan* s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) ++s->p;
}

static int accept(scan* s, char c) {
  skip_ws(s);
  if (s->p < s->end && *s->p == c) { ++s->p; return 1; }
  return 0;
}

/* A quoted Python string without escapes, copied into out. @return 0 or -1. */
static int scan_string(scan* s, char* out, size_t out_len) {
  skip_ws(s);
  if (s->p >= s->end || (*s->p != '\'' && *s->p != '"')) return -1;
  char q = *s->p++;
  size_t len = 0;
  while (s->p < s->end && *s->p != q) {
    if (*s->p == '\\' || len + 1 >= out_len) return -1;
    out[len++] = *s->p++;
  }
  if (s->p >= s->end) return -1;
  ++s->p;
  out[len] = '\0';
  return 0;
}

/* A word such as True or False. */
static int scan_word(scan* s, const char* w) {
  skip_ws(s);
  size_t n = strlen(w);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0) return 0;
  s->p += n;
  return 1;
}

/* A non-negative decimal integer that fits int64 (an 'L' suffix is allowed). */
static int scan_dim(scan* s, int64_t* v) {
  skip_ws(s);
  if (s->p >= s->end || *s->p < '0' || *s->p > '9') return -1;
  int64_t x = 0;
  while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
    int d = *s->p++ - '0';
    if (x > (INT64_MAX - d) / 10) return -2;
    x = x * 10 + d;
  }
  if (s->p < s->end && (*s->p == 'L' || *s->p == 'l')) ++s->p;
  *v = x;
  return 0;
}

/* Copies at most 40 printable characters of text for a message. */
static void excerpt(const char* p, const char* end, char* out, size_t out_len) {
  size_t i = 0;
  while (p < end && i + 1 < out_len && i < 40) {
    unsigned char c = (unsigned char)*p++;
    out[i++] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  out[i] = '\0';
}

static uint64_t le16(const unsigned char* b) { return (uint64_t)b[0] | (uint64_t)b[1] << 8; }
static uint64_t le32(const unsigned char* b) { return le16(b) | le16(b + 2) << 16; }

npy_status npy_parse_header(const void* buf, size_t len, int u2_as_bf16, npy_header* h, const char* name,
                            char* err, size_t err_len) {
  if (!buf || !h) return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_parse_header: NULL argument");
  if (!name) name = "input";
  const unsigned char* b = (const unsigned char*)buf;
  memset(h, 0, sizeof *h);

  size_t have = len < sizeof magic_ ? len : sizeof magic_;
  if (len == 0) return fail(NPY_ERR_BAD_MAGIC, err, err_len, "'%s' is empty, not a .npy file", name);
  if (memcmp(b, magic_, have) != 0)
    return fail(NPY_ERR_BAD_MAGIC, err, err_len, "'%s' is not a .npy file (it does not start with \\x93NUMPY)",
                name);
  if (len < 8)
    return fail(NPY_ERR_TRUNCATED_HEADER, err, err_len, "'%s': truncated .npy file (%zu bytes, ends in the preamble)",
                name, len);
  int major = b[6], minor = b[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    return fail(NPY_ERR_VERSION, err, err_len, "'%s': .npy format version %d.%d is not supported (1.0, 2.0, 3.0 are)",
                name, major, minor);
  size_t pre = major == 1 ? 10 : 12;
  if (len < pre)
    return fail(NPY_ERR_TRUNCATED_HEADER, err, err_len, "'%s': truncated .npy file (%zu bytes, ends in the preamble)",
                name, len);
  uint64_t hlen = major == 1 ? le16(b + 8) : le32(b + 8);
  if (hlen > MAX_HEADER)
    return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': .npy header of %llu bytes is larger than %d", name,
                (unsigned long long)hlen, MAX_HEADER);
  if (hlen > (uint64_t)(len - pre))
    return fail(NPY_ERR_TRUNCATED_HEADER, err, err_len,
                "'%s': truncated .npy header (it announces %llu bytes, the file has %llu after the preamble)", name,
                (unsigned long long)hlen, (unsigned long long)(len - pre));

  scan s = {(const char*)b + pre, (const char*)b + pre + hlen};
  char snippet[48];
  char key[32], descr[32] = "";
  int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0, ndim = 0;
  int64_t dims[3] = {0, 0, 0};

  if (!accept(&s, '{')) {
    excerpt(s.p, s.end, snippet, sizeof snippet);
    return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': .npy header is not a dict: \"%s\"", name, snippet);
  }
  for (;;) {
    if (accept(&s, '}')) break;
    const char* at = s.p;
    if (scan_string(&s, key, sizeof key) != 0 || !accept(&s, ':')) {
      excerpt(at, s.end, snippet, sizeof snippet);
      return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header dict near \"%s\"", name, snippet);
    }
    if (strcmp(key, "descr") == 0 && !have_descr) {
      skip_ws(&s);
      if (s.p < s.end && *s.p == '[')
        return fail(NPY_ERR_DTYPE, err, err_len, "'%s': structured dtypes are not supported", name);
      if (scan_string(&s, descr, sizeof descr) != 0)
        return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header: 'descr' is not a string", name);
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0 && !have_fortran) {
      if (scan_word(&s, "True")) fortran = 1;
      else if (scan_word(&s, "False")) fortran = 0;
      else
        return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header: 'fortran_order' is not True or False",
                    name);
      have_fortran = 1;
    } else if (strcmp(key, "shape") == 0 && !have_shape) {
      if (!accept(&s, '('))
        return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header: 'shape' is not a tuple", name);
      while (!accept(&s, ')')) {
        int64_t d = 0;
        int r = scan_dim(&s, &d);
        if (r == -2) return fail(NPY_ERR_SHAPE, err, err_len, "'%s': a dimension of the shape overflows 64 bits", name);
        if (r != 0)
          return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header: 'shape' is not a tuple of integers",
                      name);
        if (ndim < 3) dims[ndim] = d;
        ++ndim;
        if (!accept(&s, ',')) {
          if (!accept(&s, ')'))
            return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header: 'shape' tuple is not closed", name);
          break;
        }
      }
      have_shape = 1;
    } else {
      return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header: %s key '%s'", name,
                  (strcmp(key, "descr") == 0 || strcmp(key, "fortran_order") == 0 || strcmp(key, "shape") == 0)
                      ? "repeated"
                      : "unexpected",
                  key);
    }
    if (accept(&s, ',')) continue;
    if (accept(&s, '}')) break;
    excerpt(s.p, s.end, snippet, sizeof snippet);
    return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header dict near \"%s\"", name, snippet);
  }
  skip_ws(&s);
  while (s.p < s.end && *s.p == '\0') ++s.p; /* some writers pad with NULs */
  if (s.p != s.end) {
    excerpt(s.p, s.end, snippet, sizeof snippet);
    return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header: text after the dict: \"%s\"", name, snippet);
  }
  if (!have_descr || !have_fortran || !have_shape)
    return fail(NPY_ERR_BAD_HEADER, err, err_len, "'%s': bad .npy header: missing key '%s'", name,
                !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");

  if (fortran)
    return fail(NPY_ERR_FORTRAN_ORDER, err, err_len,
                "'%s': fortran_order is True; only C order is supported (save np.ascontiguousarray(a))", name);
  topk_dtype dt;
  if (dtype_of_descr(descr, u2_as_bf16, &dt) != 0) {
    if (descr[0] == '>')
      return fail(NPY_ERR_DTYPE, err, err_len, "'%s': big-endian dtype '%s' is not supported (save a.astype('<%s'))",
                  name, descr, descr + 1);
    if (strcmp(descr, "<u2") == 0)
      return fail(NPY_ERR_DTYPE, err, err_len,
                  "'%s': dtype '<u2' is not supported (pass --dtype bf16 if it holds bfloat16 bits)", name);
    return fail(NPY_ERR_DTYPE, err, err_len,
                "'%s': dtype '%s' is not supported (f4 f2 f8 i4 u4 i8 u8 and bfloat16 '<V2' are)", name, descr);
  }
  if (ndim == 0 || ndim > 2)
    return fail(NPY_ERR_SHAPE, err, err_len, "'%s': the array has %d dimensions; only 1-D and 2-D are supported",
                name, ndim);
  int64_t rows = ndim == 2 ? dims[0] : 1, n = ndim == 2 ? dims[1] : dims[0];
  int64_t es = dtype_size(dt);
  if ((rows > 0 && n > INT64_MAX / rows) || (rows * n > INT64_MAX / es))
    return fail(NPY_ERR_SHAPE, err, err_len, "'%s': shape overflows 64 bits", name);
  h->major = major;
  h->minor = minor;
  h->dtype = dt;
  h->ndim = ndim;
  h->rows = rows;
  h->n = n;
  h->data_offset = (int64_t)(pre + hlen);
  return NPY_OK;
}

/* ------------------------------------------------------------------ reading */

static void shape_text(const npy_header* h, char* out, size_t len) {
  if (h->ndim == 1) snprintf(out, len, "(%lld,)", (long long)h->n);
  else snprintf(out, len, "(%lld, %lld)", (long long)h->rows, (long long)h->n);
}

/* Checks that `have` data bytes match the header's shape. */
static npy_status check_data_size(const npy_header* h, int64_t have, const char* name, char* err, size_t err_len) {
  int64_t need = h->rows * h->n * dtype_size(h->dtype);
  if (have == need) return NPY_OK;
  char shape[64];
  shape_text(h, shape, sizeof shape);
  if (have < need)
    return fail(NPY_ERR_SIZE_MISMATCH, err, err_len,
                "'%s': data is shorter than the shape: shape %s of %s needs %lld bytes, the file has %lld", name,
                shape, name_of_[h->dtype], (long long)need, (long long)have);
  return fail(NPY_ERR_SIZE_MISMATCH, err, err_len,
              "'%s': data is longer than the shape: shape %s of %s needs %lld bytes, the file has %lld", name, shape,
              name_of_[h->dtype], (long long)need, (long long)have);
}

/* Allocates bytes (1 for 0, so that NULL means failure). */
static npy_status alloc(void** p, int64_t bytes, const char* name, char* err, size_t err_len) {
  *p = NULL;
  if (bytes == 0) return NPY_OK;
  if ((uint64_t)bytes > (uint64_t)SIZE_MAX || !(*p = malloc((size_t)bytes)))
    return fail(NPY_ERR_NO_MEMORY, err, err_len, "'%s': cannot allocate %lld bytes for the data", name,
                (long long)bytes);
  return NPY_OK;
}

static npy_status read_exact(FILE* f, void* dst, int64_t bytes, const char* name, char* err, size_t err_len) {
  unsigned char* d = (unsigned char*)dst;
  while (bytes > 0) {
    size_t want = bytes > IO_CHUNK ? (size_t)IO_CHUNK : (size_t)bytes;
    size_t got = fread(d, 1, want, f);
    if (got != want) {
      if (ferror(f)) return fail(NPY_ERR_READ, err, err_len, "cannot read '%s': %s", name, strerror(errno));
      return fail(NPY_ERR_SIZE_MISMATCH, err, err_len, "'%s': the file ended while reading the data", name);
    }
    d += got;
    bytes -= (int64_t)got;
  }
  return NPY_OK;
}

static npy_status open_sized(const char* path, FILE** f, int64_t* size, char* err, size_t err_len) {
  *f = fopen(path, "rb");
  if (!*f) return fail(NPY_ERR_OPEN, err, err_len, "cannot open '%s': %s", path, strerror(errno));
#if !defined(_WIN32)
  /* The size comes from seeking, which means nothing for directories and pipes. */
  struct stat st;
  if (fstat(fileno(*f), &st) == 0 && !S_ISREG(st.st_mode)) {
    fclose(*f);
    *f = NULL;
    if (S_ISDIR(st.st_mode)) return fail(NPY_ERR_READ, err, err_len, "cannot read '%s': %s", path, strerror(EISDIR));
    return fail(NPY_ERR_READ, err, err_len, "cannot read '%s': not a regular file", path);
  }
#endif
  if (npy_fseek(*f, 0, SEEK_END) != 0 || (*size = (int64_t)npy_ftell(*f)) < 0 || npy_fseek(*f, 0, SEEK_SET) != 0) {
    npy_status s = fail(NPY_ERR_READ, err, err_len, "cannot read '%s': %s (not a regular file?)", path,
                        strerror(errno));
    fclose(*f);
    *f = NULL;
    return s;
  }
  return NPY_OK;
}

npy_status npy_read(const char* path, int u2_as_bf16, npy_array* a, char* err, size_t err_len) {
  if (!path || !a) return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_read: NULL argument");
  memset(a, 0, sizeof *a);
  FILE* f;
  int64_t size;
  npy_status s = open_sized(path, &f, &size, err, err_len);
  if (s != NPY_OK) return s;

  /* The preamble first, then exactly the header it announces (at most MAX_HEADER
   * bytes, never more than the file holds): a corrupt length cannot make us
   * allocate or read much. */
  unsigned char pre[12];
  size_t got = fread(pre, 1, sizeof pre, f);
  unsigned char* head = NULL;
  npy_header h;
  s = npy_parse_header(pre, got, u2_as_bf16, &h, path, err, err_len);
  if (s == NPY_ERR_TRUNCATED_HEADER && got == sizeof pre) {
    /* Magic, version and header size were valid: read the whole header and parse again. */
    int64_t want = (pre[6] == 1 ? 10 : 12) + (int64_t)(pre[6] == 1 ? le16(pre + 8) : le32(pre + 8));
    if (want > size) want = size;
    if (!(head = (unsigned char*)malloc((size_t)want))) {
      s = fail(NPY_ERR_NO_MEMORY, err, err_len, "'%s': cannot allocate the header", path);
    } else {
      memcpy(head, pre, sizeof pre);
      size_t rest = (size_t)want - sizeof pre;
      if (fread(head + sizeof pre, 1, rest, f) != rest)
        s = fail(NPY_ERR_READ, err, err_len, "cannot read '%s': %s", path, strerror(errno));
      else
        s = npy_parse_header(head, (size_t)want, u2_as_bf16, &h, path, err, err_len);
    }
  }
  free(head);
  if (s == NPY_OK) s = check_data_size(&h, size - h.data_offset, path, err, err_len);
  void* data = NULL;
  int64_t bytes = h.rows * h.n * dtype_size(h.dtype);
  if (s == NPY_OK) s = alloc(&data, bytes, path, err, err_len);
  if (s == NPY_OK && npy_fseek(f, (npy_off)h.data_offset, SEEK_SET) != 0)
    s = fail(NPY_ERR_READ, err, err_len, "cannot read '%s': %s", path, strerror(errno));
  if (s == NPY_OK) s = read_exact(f, data, bytes, path, err, err_len);
  fclose(f);
  if (s != NPY_OK) { free(data); return s; }
  a->dtype = h.dtype;
  a->ndim = h.ndim;
  a->rows = h.rows;
  a->n = h.n;
  a->data = data;
  return NPY_OK;
}

npy_status npy_read_buffer(const void* buf, size_t len, const char* name, int u2_as_bf16, npy_array* a,
                           char* err, size_t err_len) {
  if (!a || (!buf && len)) return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_read_buffer: NULL argument");
  memset(a, 0, sizeof *a);
  if (!name) name = "input";
  npy_header h;
  npy_status s = npy_parse_header(buf ? buf : "", len, u2_as_bf16, &h, name, err, err_len);
  if (s == NPY_OK) s = check_data_size(&h, (int64_t)len - h.data_offset, name, err, err_len);
  int64_t bytes = h.rows * h.n * dtype_size(h.dtype);
  void* data = NULL;
  if (s == NPY_OK) s = alloc(&data, bytes, name, err, err_len);
  if (s != NPY_OK) return s;
  if (bytes) memcpy(data, (const unsigned char*)buf + h.data_offset, (size_t)bytes);
  a->dtype = h.dtype;
  a->ndim = h.ndim;
  a->rows = h.rows;
  a->n = h.n;
  a->data = data;
  return NPY_OK;
}

/* Shape of raw data of `bytes` bytes split into `rows` rows. */
static npy_status raw_shape(int64_t bytes, topk_dtype dtype, int64_t rows, const char* name, npy_array* a,
                            char* err, size_t err_len) {
  int64_t es = dtype_size(dtype);
  if (es == 0) return fail(NPY_ERR_ARGUMENT, err, err_len, "unknown dtype %d", (int)dtype);
  if (rows <= 0) return fail(NPY_ERR_ARGUMENT, err, err_len, "rows=%lld must be positive", (long long)rows);
  if (bytes % es != 0)
    return fail(NPY_ERR_SIZE_MISMATCH, err, err_len, "'%s': %lld bytes is not a whole number of %s elements", name,
                (long long)bytes, name_of_[dtype]);
  int64_t count = bytes / es;
  if (count % rows != 0)
    return fail(NPY_ERR_SIZE_MISMATCH, err, err_len, "'%s': %lld elements do not split into %lld equal rows", name,
                (long long)count, (long long)rows);
  a->dtype = dtype;
  a->ndim = rows > 1 ? 2 : 1;
  a->rows = rows;
  a->n = count / rows;
  return NPY_OK;
}

npy_status npy_read_raw(const char* path, topk_dtype dtype, int64_t rows, npy_array* a, char* err,
                        size_t err_len) {
  if (!path || !a) return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_read_raw: NULL argument");
  memset(a, 0, sizeof *a);
  FILE* f;
  int64_t size;
  npy_status s = open_sized(path, &f, &size, err, err_len);
  if (s != NPY_OK) return s;
  npy_array shape;
  void* data = NULL;
  s = raw_shape(size, dtype, rows, path, &shape, err, err_len);
  if (s == NPY_OK) s = alloc(&data, size, path, err, err_len);
  if (s == NPY_OK) s = read_exact(f, data, size, path, err, err_len);
  fclose(f);
  if (s != NPY_OK) { free(data); return s; }
  *a = shape;
  a->data = data;
  return NPY_OK;
}

npy_status npy_read_raw_buffer(const void* buf, size_t len, const char* name, topk_dtype dtype, int64_t rows,
                               npy_array* a, char* err, size_t err_len) {
  if (!a || (!buf && len)) return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_read_raw_buffer: NULL argument");
  memset(a, 0, sizeof *a);
  if (!name) name = "input";
  npy_array shape;
  void* data = NULL;
  npy_status s = raw_shape((int64_t)len, dtype, rows, name, &shape, err, err_len);
  if (s == NPY_OK) s = alloc(&data, (int64_t)len, name, err, err_len);
  if (s != NPY_OK) return s;
  if (len) memcpy(data, buf, len);
  *a = shape;
  a->data = data;
  return NPY_OK;
}

/* ------------------------------------------------------------------ writing */

npy_status npy_write(const char* path, const npy_array* a, int version, char* err, size_t err_len) {
  if (!path || !a) return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_write: NULL argument");
  if ((unsigned)a->dtype >= TOPK_DTYPE_COUNT)
    return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_write: unknown dtype %d", (int)a->dtype);
  if ((a->ndim != 1 && a->ndim != 2) || a->rows < 0 || a->n < 0 || (a->ndim == 1 && a->rows != 1))
    return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_write: bad shape (ndim %d, rows %lld, n %lld)", a->ndim,
                (long long)a->rows, (long long)a->n);
  if (version < 0 || version > 3) return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_write: bad version %d", version);
  int64_t es = dtype_size(a->dtype);
  if ((a->rows > 0 && a->n > INT64_MAX / a->rows) || a->rows * a->n > INT64_MAX / es)
    return fail(NPY_ERR_SHAPE, err, err_len, "npy_write: shape overflows 64 bits");
  int64_t bytes = a->rows * a->n * es;
  if (bytes > 0 && !a->data) return fail(NPY_ERR_ARGUMENT, err, err_len, "npy_write: data is NULL");

  char dict[160];
  int dl;
  if (a->ndim == 1)
    dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld,), }",
                  descr_of_[a->dtype], (long long)a->n);
  else
    dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }",
                  descr_of_[a->dtype], (long long)a->rows, (long long)a->n);
  if (version == 0) version = 1; /* the dict above always fits 1.0's 65535 bytes */
  size_t pre = version == 1 ? 10 : 12;
  size_t total = pre + (size_t)dl + 1; /* + '\n' */
  total = (total + 63) / 64 * 64;       /* data aligned to 64 bytes, as NumPy writes */
  size_t hlen = total - pre;
  unsigned char head[256];
  memcpy(head, magic_, sizeof magic_);
  head[6] = (unsigned char)version;
  head[7] = 0;
  if (version == 1) {
    head[8] = (unsigned char)(hlen & 0xFF);
    head[9] = (unsigned char)(hlen >> 8);
  } else {
    for (int i = 0; i < 4; ++i) head[8 + i] = (unsigned char)(hlen >> (8 * i));
  }
  memcpy(head + pre, dict, (size_t)dl);
  memset(head + pre + dl, ' ', total - pre - (size_t)dl - 1);
  head[total - 1] = '\n';

  FILE* f = fopen(path, "wb");
  if (!f) return fail(NPY_ERR_OPEN, err, err_len, "cannot create '%s': %s", path, strerror(errno));
  int ok = fwrite(head, 1, total, f) == total;
  const unsigned char* d = (const unsigned char*)a->data;
  for (int64_t left = bytes; ok && left > 0;) {
    size_t want = left > IO_CHUNK ? (size_t)IO_CHUNK : (size_t)left;
    ok = fwrite(d, 1, want, f) == want;
    d += want;
    left -= (int64_t)want;
  }
  int saved = errno;
  if (fclose(f) != 0 && ok) { ok = 0; saved = errno; }
  if (!ok) {
    remove(path); /* never leave a file whose header promises data it lacks */
    return fail(NPY_ERR_WRITE, err, err_len, "cannot write '%s': %s", path, strerror(saved));
  }
  return NPY_OK;
}

void npy_free(npy_array* a) {
  if (!a) return;
  free(a->data);
  memset(a, 0, sizeof *a);
}
