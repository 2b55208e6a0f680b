/*
 * test_npy.c: the .npy reader and writer of tools/common/npy.c.
 *
 * Round trips for every dtype, 1-D and 2-D, format versions 1.0, 2.0 and 3.0;
 * headers as NumPy writes them and as people write them by hand; and each
 * malformed file (empty, bad magic, truncated, bad dict, Fortran order,
 * unsupported dtype, bad shape, data shorter or longer than the shape) giving
 * its own status and message, never a crash. Every prefix of a valid file and
 * random corruptions of its header are read too, for the no-crash guarantee.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npy.h"
#include "topk.h"

#define TMP "test_npy.tmp.npy"

static int write_bytes(const char* path, const void* buf, size_t len) {
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(buf, 1, len, f);
  return (fclose(f) == 0 && w == len) ? 0 : -1;
}

static unsigned char* read_bytes(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* b = (unsigned char*)malloc((size_t)n + 1);
  *len = fread(b, 1, (size_t)n, f);
  fclose(f);
  return b;
}

/* A .npy file with the given version and dict text (padded to 64 bytes), then data_len bytes of 0x5A. */
static size_t make_npy(unsigned char* out, int major, const char* dict, size_t data_len) {
  size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
  size_t total = (pre + dl + 1 + 63) / 64 * 64, hlen = total - pre;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  for (size_t i = 0; i < pre - 8; ++i) out[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(out + pre, dict, dl);
  memset(out + pre + dl, ' ', total - pre - dl - 1);
  out[total - 1] = '\n';
  memset(out + total, 0x5A, data_len);
  return total + data_len;
}

/* Writes a hand-made file and reads it back; returns the status (message in err). */
static npy_status try_file(int major, const char* dict, size_t data_len, int u2_as_bf16, npy_array* a, char* err,
                           size_t err_len) {
  static unsigned char buf[4096];
  size_t len = make_npy(buf, major, dict, data_len);
  if (write_bytes(TMP, buf, len) != 0) return NPY_ERR_WRITE;
  npy_status s = npy_read(TMP, u2_as_bf16, a, err, err_len);
  /* The buffer reader must agree with the file reader. */
  npy_array b;
  char err2[512];
  npy_status s2 = npy_read_buffer(buf, len, TMP, u2_as_bf16, &b, err2, sizeof err2);
  npy_free(&b);
  remove(TMP);
  if (s2 != s) {
    fprintf(stderr, "file reader: %s, buffer reader: %s\n", npy_status_name(s), npy_status_name(s2));
    return NPY_ERR_ARGUMENT;
  }
  return s;
}

static void fill_pattern(unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xFF);
}

TEST(round_trip_every_dtype_shape_version) {
  for (int dt = 0; dt < TOPK_DTYPE_COUNT; ++dt)
    for (int ndim = 1; ndim <= 2; ++ndim)
      for (int version = 0; version <= 3; ++version) {
        int64_t rows = ndim == 2 ? 3 : 1, n = 7;
        size_t bytes = (size_t)(rows * n) * topk_dtype_size((topk_dtype)dt);
        unsigned char data[512];
        fill_pattern(data, bytes, (unsigned)(dt * 10 + ndim));
        npy_array a = {(topk_dtype)dt, ndim, rows, n, data};
        char err[512] = "";
        ASSERT_EQ_I64(npy_write(TMP, &a, version, err, sizeof err), NPY_OK);

        size_t len = 0;
        unsigned char* file = read_bytes(TMP, &len);
        ASSERT_TRUE(file != NULL);
        npy_header h;
        ASSERT_EQ_I64(npy_parse_header(file, len, 0, &h, TMP, err, sizeof err), NPY_OK);
        ASSERT_EQ_I64(h.major, version == 0 ? 1 : version);
        ASSERT_EQ_I64(h.data_offset % 64, 0); /* aligned as NumPy aligns */
        ASSERT_EQ_I64((int64_t)len, h.data_offset + (int64_t)bytes);
        ASSERT_TRUE(file[h.data_offset - 1] == '\n');
        free(file);

        npy_array b;
        ASSERT_EQ_I64(npy_read(TMP, 0, &b, err, sizeof err), NPY_OK);
        ASSERT_EQ_I64(b.dtype, dt);
        ASSERT_EQ_I64(b.ndim, ndim);
        ASSERT_EQ_I64(b.rows, rows);
        ASSERT_EQ_I64(b.n, n);
        ASSERT_TRUE(memcmp(b.data, data, bytes) == 0);
        npy_free(&b);
        ASSERT_TRUE(b.data == NULL);
      }
  remove(TMP);
  return TEST_OK;
}

TEST(empty_arrays) {
  npy_array a = {TOPK_F32, 1, 1, 0, NULL}, b;
  char err[512];
  ASSERT_EQ_I64(npy_write(TMP, &a, 0, err, sizeof err), NPY_OK);
  ASSERT_EQ_I64(npy_read(TMP, 0, &b, err, sizeof err), NPY_OK);
  ASSERT_EQ_I64(b.n, 0);
  ASSERT_TRUE(b.data == NULL);
  npy_array c = {TOPK_I64, 2, 0, 5, NULL};
  ASSERT_EQ_I64(npy_write(TMP, &c, 0, err, sizeof err), NPY_OK);
  ASSERT_EQ_I64(npy_read(TMP, 0, &b, err, sizeof err), NPY_OK);
  ASSERT_EQ_I64(b.rows, 0);
  ASSERT_EQ_I64(b.n, 5);
  remove(TMP);
  return TEST_OK;
}

TEST(header_written_by_numpy) {
  /* np.save of np.arange(4, dtype=ml_dtypes.bfloat16), byte for byte. */
  static const char numpy_bf16[] =
      "\x93NUMPY\x01\x00v\x00{'descr': '<V2', 'fortran_order': False, 'shape': (4,), }"
      "                                                            \n";
  ASSERT_EQ_I64(sizeof numpy_bf16 - 1, 128);
  npy_header h;
  char err[512];
  ASSERT_EQ_I64(npy_parse_header(numpy_bf16, sizeof numpy_bf16 - 1, 0, &h, "x", err, sizeof err), NPY_OK);
  ASSERT_EQ_I64(h.dtype, TOPK_BF16);
  ASSERT_EQ_I64(h.n, 4);
  ASSERT_EQ_I64(h.data_offset, 128);
  return TEST_OK;
}

TEST(hand_written_headers) {
  npy_array a;
  char err[512];
  /* double quotes, another key order, no trailing comma, Python 2 longs, spaces */
  ASSERT_EQ_I64(try_file(1, "{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<i4\"}", 24, 0, &a, err,
                         sizeof err),
                NPY_OK);
  ASSERT_EQ_I64(a.rows, 2);
  ASSERT_EQ_I64(a.n, 3);
  ASSERT_EQ_I64(a.dtype, TOPK_I32);
  npy_free(&a);
  ASSERT_EQ_I64(try_file(2, "{ 'descr' : '<f8' , 'fortran_order' : False , 'shape' : ( 5 , ) , }", 40, 0, &a, err,
                         sizeof err),
                NPY_OK);
  ASSERT_EQ_I64(a.n, 5);
  npy_free(&a);
  ASSERT_EQ_I64(try_file(3, "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (3,)}", 6, 0, &a, err, sizeof err),
                NPY_OK);
  ASSERT_EQ_I64(a.dtype, TOPK_BF16);
  npy_free(&a);
  /* '<u2' is bf16 only when the caller says so */
  ASSERT_EQ_I64(try_file(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }", 6, 1, &a, err, sizeof err),
                NPY_OK);
  ASSERT_EQ_I64(a.dtype, TOPK_BF16);
  npy_free(&a);
  return TEST_OK;
}

/* One malformed case: the status it must give and a word its message must contain. */
typedef struct bad_case {
  const char* what;
  int         major;
  const char* dict;
  size_t      data_len;
  npy_status  want;
  const char* word;
} bad_case;

static const bad_case bad_cases[] = {
    {"not a dict", 1, "['descr', '<f4']", 0, NPY_ERR_BAD_HEADER, "not a dict"},
    {"missing shape", 1, "{'descr': '<f4', 'fortran_order': False}", 0, NPY_ERR_BAD_HEADER, "missing key 'shape'"},
    {"missing descr", 1, "{'fortran_order': False, 'shape': (1,)}", 4, NPY_ERR_BAD_HEADER, "missing key 'descr'"},
    {"unexpected key", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4, NPY_ERR_BAD_HEADER,
     "unexpected key 'x'"},
    {"repeated key", 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4,
     NPY_ERR_BAD_HEADER, "repeated key"},
    {"descr not a string", 1, "{'descr': 4, 'fortran_order': False, 'shape': (1,)}", 4, NPY_ERR_BAD_HEADER,
     "'descr' is not a string"},
    {"fortran_order not bool", 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4, NPY_ERR_BAD_HEADER,
     "not True or False"},
    {"shape not a tuple", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", 4, NPY_ERR_BAD_HEADER,
     "not a tuple"},
    {"negative dimension", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4, NPY_ERR_BAD_HEADER,
     "tuple of integers"},
    {"unclosed tuple", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", 4, NPY_ERR_BAD_HEADER,
     "not closed"},
    {"unclosed dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4, NPY_ERR_BAD_HEADER,
     "bad .npy header dict"},
    {"unterminated string", 1, "{'descr: '<f4'}", 0, NPY_ERR_BAD_HEADER, "bad .npy header dict"},
    {"text after the dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", 4, NPY_ERR_BAD_HEADER,
     "text after the dict"},
    {"fortran order", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, NPY_ERR_FORTRAN_ORDER,
     "fortran_order is True"},
    {"int16", 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", 4, NPY_ERR_DTYPE, "'<i2'"},
    {"big-endian", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, NPY_ERR_DTYPE, "big-endian"},
    {"bool", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2, NPY_ERR_DTYPE, "'|b1'"},
    {"uint16 without the bf16 hint", 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", 4, NPY_ERR_DTYPE,
     "--dtype bf16"},
    {"structured", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, NPY_ERR_DTYPE,
     "structured"},
    {"scalar", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, NPY_ERR_SHAPE, "0 dimensions"},
    {"3-D", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }", 32, NPY_ERR_SHAPE, "3 dimensions"},
    {"dimension overflow", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0,
     NPY_ERR_SHAPE, "overflows"},
    {"size overflow", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0,
     NPY_ERR_SHAPE, "overflows"},
    {"data shorter", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", 39, NPY_ERR_SIZE_MISMATCH,
     "shorter"},
    {"data longer", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 5), }", 41, NPY_ERR_SIZE_MISMATCH,
     "longer"},
};

TEST(malformed_headers_each_their_error) {
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; ++i) {
    const bad_case* c = &bad_cases[i];
    npy_array a = {TOPK_F32, 0, 0, 0, NULL};
    char err[512] = "";
    npy_status s = try_file(c->major, c->dict, c->data_len, 0, &a, err, sizeof err);
    if (s != c->want)
      TEST_FAILED_("%s: got %s, want %s (%s)\n", c->what, npy_status_name(s), npy_status_name(c->want), err);
    if (!strstr(err, c->word)) TEST_FAILED_("%s: message \"%s\" lacks \"%s\"\n", c->what, err, c->word);
    if (!strstr(err, TMP)) TEST_FAILED_("%s: message \"%s\" does not name the file\n", c->what, err);
    ASSERT_TRUE(a.data == NULL);
  }
  return TEST_OK;
}

TEST(malformed_preambles) {
  char err[512];
  npy_array a;
  npy_header h;
  ASSERT_EQ_I64(npy_parse_header("", 0, 0, &h, "e", err, sizeof err), NPY_ERR_BAD_MAGIC);
  ASSERT_TRUE(strstr(err, "empty") != NULL);
  ASSERT_EQ_I64(npy_parse_header("\x93NUMPZ\x01\x00", 8, 0, &h, "m", err, sizeof err), NPY_ERR_BAD_MAGIC);
  ASSERT_TRUE(strstr(err, "not a .npy file") != NULL);
  ASSERT_EQ_I64(npy_parse_header("3 1 4 1 5", 9, 0, &h, "t", err, sizeof err), NPY_ERR_BAD_MAGIC);
  ASSERT_EQ_I64(npy_parse_header("\x93NUM", 4, 0, &h, "p", err, sizeof err), NPY_ERR_TRUNCATED_HEADER);
  ASSERT_EQ_I64(npy_parse_header("\x93NUMPY\x01", 7, 0, &h, "p", err, sizeof err), NPY_ERR_TRUNCATED_HEADER);
  ASSERT_TRUE(strstr(err, "preamble") != NULL);
  ASSERT_EQ_I64(npy_parse_header("\x93NUMPY\x04\x00\x10\x00", 10, 0, &h, "v", err, sizeof err), NPY_ERR_VERSION);
  ASSERT_TRUE(strstr(err, "4.0") != NULL);
  ASSERT_EQ_I64(npy_parse_header("\x93NUMPY\x01\x01\x10\x00", 10, 0, &h, "v", err, sizeof err), NPY_ERR_VERSION);
  /* v2 preamble cut inside its 4-byte length */
  ASSERT_EQ_I64(npy_parse_header("\x93NUMPY\x02\x00\x10\x00", 10, 0, &h, "p", err, sizeof err),
                NPY_ERR_TRUNCATED_HEADER);
  /* header length beyond the end of the file */
  static const char cut[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', ";
  ASSERT_TRUE(write_bytes(TMP, cut, sizeof cut - 1) == 0);
  ASSERT_EQ_I64(npy_read(TMP, 0, &a, err, sizeof err), NPY_ERR_TRUNCATED_HEADER);
  if (!strstr(err, "announces 118 bytes, the file has 17")) TEST_FAILED_("message: %s\n", err);
  /* an absurd header length */
  static const char huge[] = "\x93NUMPY\x02\x00\xff\xff\xff\x7f{}";
  ASSERT_TRUE(write_bytes(TMP, huge, sizeof huge - 1) == 0);
  ASSERT_EQ_I64(npy_read(TMP, 0, &a, err, sizeof err), NPY_ERR_BAD_HEADER);
  ASSERT_TRUE(strstr(err, "larger than") != NULL);
  ASSERT_TRUE(write_bytes(TMP, "", 0) == 0);
  ASSERT_EQ_I64(npy_read(TMP, 0, &a, err, sizeof err), NPY_ERR_BAD_MAGIC);
  remove(TMP);
  ASSERT_EQ_I64(npy_read("no/such/file.npy", 0, &a, err, sizeof err), NPY_ERR_OPEN);
  ASSERT_TRUE(strstr(err, "cannot open 'no/such/file.npy'") != NULL);
  return TEST_OK;
}

TEST(every_prefix_and_corruption_is_rejected_safely) {
  unsigned char file[1024];
  size_t len = make_npy(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
  char err[512];
  npy_array a;
  npy_header h;
  ASSERT_EQ_I64(npy_parse_header(file, len, 0, &h, "x", err, sizeof err), NPY_OK);
  for (size_t cut = 0; cut < len; ++cut) {
    npy_status s = npy_read_buffer(file, cut, "x", 0, &a, err, sizeof err);
    ASSERT_TRUE(s != NPY_OK);
    ASSERT_TRUE(err[0] != '\0');
    ASSERT_TRUE(a.data == NULL);
    ASSERT_EQ_I64(s, (int64_t)cut >= h.data_offset ? NPY_ERR_SIZE_MISMATCH
                     : cut == 0 ? NPY_ERR_BAD_MAGIC : NPY_ERR_TRUNCATED_HEADER);
  }
  ASSERT_EQ_I64(npy_read_buffer(file, len, "x", 0, &a, err, sizeof err), NPY_OK);
  npy_free(&a);
  /* Random bytes written over the header: any status, no crash, no leak of a half-built array. */
  uint64_t x = test_seed() | 1;
  for (int trial = 0; trial < 20000; ++trial) {
    unsigned char copy[1024];
    memcpy(copy, file, len);
    int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      copy[(x >> 8) % 64] = (unsigned char)(x >> 32);
    }
    npy_status s = npy_read_buffer(copy, len, "x", 0, &a, err, sizeof err);
    if (s == NPY_OK) npy_free(&a);
    else ASSERT_TRUE(a.data == NULL);
  }
  return TEST_OK;
}

TEST(raw_files) {
  int32_t v[12];
  for (int i = 0; i < 12; ++i) v[i] = i * 3 - 7;
  ASSERT_TRUE(write_bytes(TMP, v, sizeof v) == 0);
  npy_array a;
  char err[512];
  ASSERT_EQ_I64(npy_read_raw(TMP, TOPK_I32, 3, &a, err, sizeof err), NPY_OK);
  ASSERT_EQ_I64(a.rows, 3);
  ASSERT_EQ_I64(a.n, 4);
  ASSERT_EQ_I64(a.ndim, 2);
  ASSERT_TRUE(memcmp(a.data, v, sizeof v) == 0);
  npy_free(&a);
  ASSERT_EQ_I64(npy_read_raw(TMP, TOPK_I32, 5, &a, err, sizeof err), NPY_ERR_SIZE_MISMATCH);
  ASSERT_TRUE(strstr(err, "do not split into 5") != NULL);
  ASSERT_EQ_I64(npy_read_raw(TMP, TOPK_F64, 1, &a, err, sizeof err), NPY_OK); /* 48 bytes = 6 f64 */
  ASSERT_EQ_I64(a.n, 6);
  npy_free(&a);
  ASSERT_TRUE(write_bytes(TMP, v, 10) == 0);
  ASSERT_EQ_I64(npy_read_raw(TMP, TOPK_I32, 1, &a, err, sizeof err), NPY_ERR_SIZE_MISMATCH);
  ASSERT_TRUE(strstr(err, "not a whole number") != NULL);
  ASSERT_EQ_I64(npy_read_raw(TMP, TOPK_I32, 0, &a, err, sizeof err), NPY_ERR_ARGUMENT);
  ASSERT_EQ_I64(npy_read_raw_buffer(v, 16, "b", TOPK_U32, 2, &a, err, sizeof err), NPY_OK);
  ASSERT_EQ_I64(a.n, 2);
  npy_free(&a);
  remove(TMP);
  ASSERT_EQ_I64(npy_read_raw("no/such/raw.bin", TOPK_I32, 1, &a, err, sizeof err), NPY_ERR_OPEN);
  return TEST_OK;
}

/* A sparse file whose data would be 24 GB: sizes are 64-bit all the way (no allocation happens). */
TEST(sizes_beyond_2gib) {
  unsigned char head[256];
  size_t hl = make_npy(head, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3000000000,), }", 0);
  FILE* f = fopen(TMP, "wb");
  ASSERT_TRUE(f != NULL);
  ASSERT_TRUE(fwrite(head, 1, hl, f) == hl);
  /* 8 bytes short of the 24e9 the shape needs */
  int sparse = fseeko(f, (off_t)(hl + 24000000000ll - 9), SEEK_SET) == 0 && fputc(0, f) != EOF;
  ASSERT_TRUE(fclose(f) == 0);
  if (!sparse) { remove(TMP); return TEST_SKIP; }
  npy_array a;
  char err[512];
  ASSERT_EQ_I64(npy_read(TMP, 0, &a, err, sizeof err), NPY_ERR_SIZE_MISMATCH);
  ASSERT_TRUE(strstr(err, "needs 24000000000 bytes, the file has 23999999992") != NULL);
  remove(TMP);
  return TEST_OK;
}

TEST(write_errors) {
  npy_array a = {TOPK_F32, 1, 1, 4, NULL};
  char err[512];
  ASSERT_EQ_I64(npy_write(TMP, &a, 0, err, sizeof err), NPY_ERR_ARGUMENT); /* data NULL */
  float v[4] = {1, 2, 3, 4};
  a.data = v;
  ASSERT_EQ_I64(npy_write("no/such/dir/x.npy", &a, 0, err, sizeof err), NPY_ERR_OPEN);
  ASSERT_TRUE(strstr(err, "cannot create 'no/such/dir/x.npy'") != NULL);
  a.dtype = (topk_dtype)99;
  ASSERT_EQ_I64(npy_write(TMP, &a, 0, err, sizeof err), NPY_ERR_ARGUMENT);
  a.dtype = TOPK_F32;
  a.ndim = 3;
  ASSERT_EQ_I64(npy_write(TMP, &a, 0, err, sizeof err), NPY_ERR_ARGUMENT);
  a.ndim = 1;
  ASSERT_EQ_I64(npy_write(TMP, &a, 4, err, sizeof err), NPY_ERR_ARGUMENT);
  ASSERT_STR_EQ(npy_status_name(NPY_ERR_FORTRAN_ORDER), "NPY_ERR_FORTRAN_ORDER");
  ASSERT_STR_EQ(npy_status_name(NPY_ERR_ARGUMENT), "NPY_ERR_ARGUMENT");
  return TEST_OK;
}

#define LIST(X)                                        \
  X(round_trip_every_dtype_shape_version)              \
  X(empty_arrays)                                      \
  X(header_written_by_numpy)                           \
  X(hand_written_headers)                              \
  X(malformed_headers_each_their_error)                \
  X(malformed_preambles)                               \
  X(every_prefix_and_corruption_is_rejected_safely)    \
  X(raw_files)                                         \
  X(sizes_beyond_2gib)                                 \
  X(write_errors)
TEST_MAIN(LIST)
